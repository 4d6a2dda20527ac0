/* probe_arg.h - a probe's numeric argument: a positive count up to max, or
 * exit 2 naming the probe and the argument (the probes are static programs
 * of one file each; this is what two of them share). */
#ifndef AGENTRT_PROBE_ARG_H
#define AGENTRT_PROBE_ARG_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

static long probe_arg(const char *probe, const char *s, long max)
{
  char *end = NULL;
  long v;

  errno = 0;
  v = strtol(s, &end, 10);
  if (errno || end == s || *end || v <= 0 || v > max) {
    fprintf(stderr, "%s: bad number `%s'\n", probe, s);
    exit(2);
  }
  return v;
}

#endif
