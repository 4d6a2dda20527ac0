/* tap.h - the tiny test helper of agentrt's unit tests.
 *
 * tap_ok(cond, fmt, ...) prints "ok - name" or "not ok - name" (the name is
 * the formatted text); tap_done() returns the exit status (1 if any failed).
 */
#ifndef AGENTRT_TAP_H
#define AGENTRT_TAP_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

static int tap_failed_count;
static int tap_count;

__attribute__((format(printf, 2, 3), unused)) static bool tap_ok(bool cond, const char *fmt,
                                                                 ...)
{
  va_list ap;

  tap_count++;
  printf("%s - ", cond ? "ok" : "not ok");
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  printf("\n");
  fflush(stdout);
  if (!cond)
    tap_failed_count++;
  return cond;
}

__attribute__((unused)) static int tap_done(void)
{
  printf("# %d tests, %d failed\n", tap_count, tap_failed_count);
  return tap_failed_count ? 1 : 0;
}

#endif
