/* refusals.h - what a container's profile refused its programs, read from
 * its trail for the one line `sandbox` and a foreground `run` print at the
 * end: names its resolver answered NXDOMAIN, outbound TCP and UDP packets
 * denied, system calls its seccomp filter refused (with the program).  Only
 * the records after the trail's last `create` count: a container run again
 * under its name goes on in the same trail.  Every entry is terminal-safe
 * text: a name's control characters, bidi controls and bytes that are not
 * UTF-8 are escaped as `audit --summary` escapes them. */
#ifndef AGENTRT_CLI_REFUSALS_H
#define AGENTRT_CLI_REFUSALS_H

#include <stddef.h>

#define REFUSED_SHOWN 6
struct refused {
  char *v[REFUSED_SHOWN];
  size_t n, more;
};

struct refusals {
  struct refused net;   /* names and addresses the egress allowlist refused */
  struct refused calls; /* "call (program)" */
};

/* Reads the trail in directory trail (absolute); 0, or -1 (no trail, or
 * unreadable: r holds what was read). */
int refusals_read(const char *trail, struct refusals *r);
/* "a, b, c" and " and more" when more were refused than kept, in list. */
void refused_list(const struct refused *r, char *list, size_t size);
void refusals_free(struct refusals *r);

#endif
