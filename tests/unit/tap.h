/* tap.h - the smallest test helper: one line per check, exit status at the end.
 *
 *   tap_ok(cond, "name: detail %d", x);   prints "ok - ..." or "not ok - ..."
 *   return tap_done();                    0 when every check passed
 */
#ifndef AGENTRT_TAP_H
#define AGENTRT_TAP_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

static int tap_failed_count;

__attribute__((format(printf, 2, 3))) static inline bool tap_ok(bool cond, const char *fmt, ...)
{
  va_list ap;

  fputs(cond ? "ok - " : "not ok - ", stdout);
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  fputc('\n', stdout);
  if (!cond)
    tap_failed_count++;
  return cond;
}

static inline int tap_done(void)
{
  fflush(stdout);
  return tap_failed_count == 0 ? 0 : 1;
}

#endif
