/* tap.h - the smallest test helper: one "ok - ..." / "not ok - ..." line per
 * check, and a non-zero exit status when any check failed. */
#ifndef AGENTRT_TAP_H
#define AGENTRT_TAP_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include "common/sanitizer.h"

static int tap_failed_;
static int tap_count_;
static int tap_skipped_;

static inline __attribute__((format(printf, 2, 3), unused)) bool tap_ok(bool cond, const char *fmt,
                                                                        ...)
{
  va_list ap;

  tap_count_++;
  if (!cond)
    tap_failed_++;
  fputs(cond ? "ok - " : "not ok - ", stdout);
  va_start(ap, fmt);
  vfprintf(stdout, fmt, ap);
  va_end(ap);
  fputc('\n', stdout);
  fflush(stdout);
  return cond;
}

/* A check this machine cannot make: "ok - # SKIP why" (tests/run-unit.sh counts it as
 * skipped, not passed).  The reason names what is missing and where the check runs instead. */
static inline __attribute__((format(printf, 1, 2), unused)) void tap_skip(const char *fmt, ...)
{
  va_list ap;

  tap_skipped_++;
  fputs("ok - # SKIP ", stdout);
  va_start(ap, fmt);
  vfprintf(stdout, fmt, ap);
  va_end(ap);
  fputc('\n', stdout);
  fflush(stdout);
}

/* Returns the exit status for main(). */
static inline __attribute__((unused)) int tap_done(void)
{
  printf("# %d tests, %d failed, %d skipped\n", tap_count_, tap_failed_, tap_skipped_);
  return tap_failed_ ? 1 : 0;
}

#endif
