/* egress_grammar.h - the one grammar of the egress policy's entries.
 *
 * Shared by profile/ (`profile check` and every profile load refuse a bad
 * entry, naming it), netfilter/ (the rules are built from the parsed
 * entries), the annotations and `agentrt egress allow`: one parser per
 * input, so what is checked and what is enforced cannot drift apart.
 */
#ifndef AGENTRT_COMMON_EGRESS_GRAMMAR_H
#define AGENTRT_COMMON_EGRESS_GRAMMAR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

#define EGRESS_DOMAIN_MAX 253
#define EGRESS_MAX_ENTRIES 4096
#define EGRESS_MAX_UPSTREAM 4
#define EGRESS_ENTRY_STR_MAX 300

/* How long a resolved address stays pinned (dns.ttlMin..ttlMax), seconds.  A
 * connection to a name lives only as long as a pin of its address, so the
 * floor is long: an honest download of a big package or model on one
 * connection must not be cut because the name's record had a 30 s TTL (as
 * Cilium's DNS policies do, an hour); rebinding answers are refused when they
 * arrive, whatever the TTL. */
#define EGRESS_TTL_MIN_DEFAULT 3600
#define EGRESS_TTL_MAX_DEFAULT 86400
/* The bounds in force for a profile's optional ttlMin/ttlMax: a ttlMax below
 * the default floor lowers the floor to it, a ttlMin above the default
 * ceiling raises the ceiling to it. */
void egress_ttl_bounds(bool has_min, uint64_t min, bool has_max, uint64_t max, uint64_t *ret_lo,
                       uint64_t *ret_hi);

enum egress_kind { EGRESS_CIDR4 = 1, EGRESS_CIDR6, EGRESS_DOMAIN };

/* One allow entry.  Grammar (see egress_entry_parse):
 *   203.0.113.0/24   203.0.113.10:443   203.0.113.10:8000-8100/tcp
 *   2001:db8::/32    [2001:db8::1]:443/udp
 *   pypi.org         *.githubusercontent.com:443
 * A port without /tcp or /udp means both.  "*.x" matches subdomains of x,
 * not x itself.  Domains take a single port, not a range, and /tcp or
 * /udp only with a port. */
struct egress_entry {
  enum egress_kind kind;
  uint8_t addr[16];                   /* CIDR: network address (host bits cleared), network order */
  uint8_t prefix;                     /* CIDR: 0..32 or 0..128 */
  bool wildcard;                      /* domain: "*." form */
  char domain[EGRESS_DOMAIN_MAX + 1]; /* lower case, no "*." and no final dot */
  uint8_t proto;                      /* 0 = any, IPPROTO_TCP or IPPROTO_UDP */
  uint16_t port_min;                  /* 0/0 = every port */
  uint16_t port_max;
};

/* One ingress entry: a local port (range) new inbound connections may
 * reach.  Grammar (see egress_port_parse): "8080/tcp", "8000-8100/udp",
 * "9090" (tcp and udp). */
struct egress_port {
  uint8_t proto; /* 0 = tcp and udp, IPPROTO_TCP or IPPROTO_UDP */
  uint16_t port_min, port_max;
};

struct egress_upstream {
  int family; /* AF_INET or AF_INET6 */
  uint8_t addr[16];
  uint16_t port; /* host order, default 53 */
};

/* Parse one allow entry.  Pure; never allocates. */
int egress_entry_parse(const char *s, struct egress_entry *ret, struct error *err);
/* Canonical text of an entry (parses back to the same entry). */
void egress_entry_format(const struct egress_entry *e, char buf[EGRESS_ENTRY_STR_MAX]);
bool egress_entry_equal(const struct egress_entry *a, const struct egress_entry *b);
/* Parse one ingress entry. */
int egress_port_parse(const char *s, struct egress_port *ret, struct error *err);
void egress_port_format(const struct egress_port *e, char buf[32]);
/* An upstream resolver, "192.0.2.53", "192.0.2.53:5353" or
 * "[2001:db8::53]:5353" (port 53 when absent). */
int egress_upstream_parse(const char *s, struct egress_upstream *ret, struct error *err);

#endif
