/* error.c - building one-line error messages (see error.h). */
#include "common/error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Messages up to this long are formatted on the stack before they are
 * fitted into ERROR_MSG_MAX; a longer one is allocated (or, without memory,
 * loses what lies beyond this, but never the errno's reason). */
#define FULL_MAX (4 * ERROR_MSG_MAX)

static bool utf8_cont(char c)
{
  return ((unsigned char)c & 0xC0) == 0x80;
}

/* Copy s (n bytes) into msg; when it does not fit, keep its start (what was
 * being done, to which object) and its end (why it failed), and put " ... "
 * for the middle, where a long path is.  No UTF-8 character is cut. */
static void fit(char msg[ERROR_MSG_MAX], const char *s, size_t n)
{
  static const char mark[] = " ... ";
  size_t head, tail;

  if (n < ERROR_MSG_MAX) {
    memcpy(msg, s, n);
    msg[n] = '\0';
    return;
  }
  head = (ERROR_MSG_MAX - sizeof mark) / 2;
  tail = ERROR_MSG_MAX - sizeof mark - head;
  while (head > 0 && utf8_cont(s[head]))
    head--;
  while (tail > 0 && utf8_cont(s[n - tail]))
    tail--;
  memcpy(msg, s, head);
  memcpy(msg + head, mark, sizeof mark - 1);
  memcpy(msg + head + sizeof mark - 1, s + n - tail, tail);
  msg[head + sizeof mark - 1 + tail] = '\0';
}

/* Append src (up to its NUL) to full (n bytes used); a full buffer keeps
 * src whole and loses the end of what was there. */
static size_t append(char full[FULL_MAX], size_t n, const char *src)
{
  size_t k = strnlen(src, FULL_MAX / 2);

  if (n + k >= FULL_MAX) {
    n = FULL_MAX - 1 - k;
    while (n > 0 && utf8_cont(full[n]))
      n--;
  }
  memcpy(full + n, src, k);
  full[n + k] = '\0';
  return n + k;
}

static void vset(struct error *err, int errnum, const char *fmt, va_list ap)
{
  char full[FULL_MAX], reason[256];
  char *big = NULL;
  va_list aq;
  int n;

  err->code = errnum;
  reason[0] = '\0';
  if (errnum != 0)
    snprintf(reason, sizeof reason, ": %s", strerror(errnum));
  va_copy(aq, ap);
  n = vsnprintf(full, sizeof full, fmt, ap);
  if (n < 0) {
    n = 0;
    full[0] = '\0';
  }
  /* longer (a path of thousands of levels): formatted whole, for its end */
  if ((size_t)n >= sizeof full && (big = malloc((size_t)n + strlen(reason) + 1)) != NULL &&
      vsnprintf(big, (size_t)n + 1, fmt, aq) == n) {
    strcpy(big + n, reason);
    fit(err->msg, big, (size_t)n + strlen(reason));
  } else {
    if ((size_t)n >= sizeof full)
      n = sizeof full - 1;
    fit(err->msg, full, append(full, (size_t)n, reason));
  }
  va_end(aq);
  free(big);
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
  char full[FULL_MAX];
  char old[ERROR_MSG_MAX];
  va_list ap;
  int n;

  va_start(ap, fmt);
  n = vsnprintf(full, ERROR_MSG_MAX, fmt, ap);
  va_end(ap);
  if (n < 0) {
    n = 0;
    full[0] = '\0';
  }
  if (n >= ERROR_MSG_MAX)
    n = ERROR_MSG_MAX - 1;
  memcpy(old, err->msg, sizeof old);
  old[sizeof old - 1] = '\0';
  n = (int)append(full, (size_t)n, ": ");
  n = (int)append(full, (size_t)n, old);
  fit(err->msg, full, (size_t)n);
  return -1;
}

void error_clear(struct error *err)
{
  err->code = 0;
  err->msg[0] = '\0';
}
