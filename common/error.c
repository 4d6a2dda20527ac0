/* error.c - building one-line error messages (see error.h). */
#include "common/error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static void vset(struct error *err, int errnum, const char *fmt, va_list ap)
{
  int n;

  err->code = errnum;
  n = vsnprintf(err->msg, sizeof err->msg, fmt, ap);
  if (n < 0)
    n = 0;
  if ((size_t)n >= sizeof err->msg)
    n = sizeof err->msg - 1;
  if (errnum != 0)
    snprintf(err->msg + n, sizeof err->msg - n, ": %s", strerror(errnum));
}

int error_set(struct error *err, int errnum, const char *fmt, ...)
{
  va_list ap;

  va_start(ap, fmt);
  vset(err, errnum, fmt, ap);
  va_end(ap);
  return -1;
}

int error_errno(struct error *err, const char *fmt, ...)
{
  int saved = errno;
  va_list ap;

  va_start(ap, fmt);
  vset(err, saved, fmt, ap);
  va_end(ap);
  errno = saved;
  return -1;
}

int error_prefix(struct error *err, const char *fmt, ...)
{
  char prefix[ERROR_MSG_MAX];
  char old[ERROR_MSG_MAX];
  va_list ap;

  va_start(ap, fmt);
  vsnprintf(prefix, sizeof prefix, fmt, ap);
  va_end(ap);
  memcpy(old, err->msg, sizeof old);
  /* the result is deliberately truncated to ERROR_MSG_MAX */
  if (snprintf(err->msg, sizeof err->msg, "%s: %s", prefix, old) < 0)
    err->msg[0] = '\0';
  return -1;
}

void error_clear(struct error *err)
{
  err->code = 0;
  err->msg[0] = '\0';
}
