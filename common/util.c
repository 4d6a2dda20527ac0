/* util.c - see util.h */
#include "common/util.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void die_oom(void)
{
  static const char m[] = "agentrt: out of memory\n";
  ssize_t r = write(2, m, sizeof m - 1);
  (void)r;
  abort();
}

void *xmalloc(size_t n)
{
  void *p = malloc(n ? n : 1);
  if (p == NULL)
    die_oom();
  return p;
}

void *xmalloc0(size_t n)
{
  void *p = calloc(1, n ? n : 1);
  if (p == NULL)
    die_oom();
  return p;
}

void *xrealloc(void *p, size_t n)
{
  p = realloc(p, n ? n : 1);
  if (p == NULL)
    die_oom();
  return p;
}

char *xstrdup(const char *s)
{
  char *r;
  if (s == NULL)
    return NULL;
  r = strdup(s);
  if (r == NULL)
    die_oom();
  return r;
}

char *xstrndup(const char *s, size_t n)
{
  char *r = strndup(s, n);
  if (r == NULL)
    die_oom();
  return r;
}

int xasprintf(char **ret, const char *fmt, ...)
{
  va_list ap;
  int n;

  va_start(ap, fmt);
  n = vasprintf(ret, fmt, ap);
  va_end(ap);
  if (n < 0)
    die_oom();
  return n;
}

char *xfmt(const char *fmt, ...)
{
  va_list ap;
  char *r;

  va_start(ap, fmt);
  if (vasprintf(&r, fmt, ap) < 0)
    die_oom();
  va_end(ap);
  return r;
}

size_t strv_len(char *const *v)
{
  size_t n = 0;
  if (v == NULL)
    return 0;
  while (v[n] != NULL)
    n++;
  return n;
}

void strv_free(char **v)
{
  if (v == NULL)
    return;
  for (char **p = v; *p; p++)
    free(*p);
  free(v);
}

char **strv_dup(char *const *v)
{
  size_t n = strv_len(v);
  char **r = xmalloc0((n + 1) * sizeof(char *));
  for (size_t i = 0; i < n; i++)
    r[i] = xstrdup(v[i]);
  return r;
}

void strv_push(char ***v, const char *s)
{
  size_t n = strv_len(*v);
  *v = xrealloc(*v, (n + 2) * sizeof(char *));
  (*v)[n] = xstrdup(s);
  (*v)[n + 1] = NULL;
}

bool strv_contains(char *const *v, const char *s)
{
  if (v == NULL)
    return false;
  for (; *v; v++)
    if (strcmp(*v, s) == 0)
      return true;
  return false;
}

/* See util.h. */
char *path_normalize(const char *path)
{
  size_t len = strlen(path);
  char *out = xmalloc(len + 2);
  size_t o = 0;
  const char *p = path;

  while (*p != '\0') {
    const char *e;
    size_t n;

    while (*p == '/')
      p++;
    e = strchrnul(p, '/');
    n = (size_t)(e - p);
    if (n == 0 || (n == 1 && p[0] == '.')) {
      /* skip */
    } else if (n == 2 && p[0] == '.' && p[1] == '.') {
      while (o > 0 && out[o - 1] != '/')
        o--;
      if (o > 0)
        o--;
    } else {
      out[o++] = '/';
      memcpy(out + o, p, n);
      o += n;
    }
    p = e;
  }
  if (o == 0)
    out[o++] = '/';
  out[o] = '\0';
  return out;
}

int parse_u64(const char *s, uint64_t *ret)
{
  char *end = NULL;
  unsigned long long v;

  if (s == NULL || *s < '0' || *s > '9') {
    errno = EINVAL;
    return -1;
  }
  errno = 0;
  v = strtoull(s, &end, 10);
  if (errno != 0)
    return -1;
  if (end == s || *end != '\0') {
    errno = EINVAL;
    return -1;
  }
  *ret = v;
  return 0;
}

int parse_i64(const char *s, int64_t *ret)
{
  char *end = NULL;
  long long v;

  if (s == NULL || *s == '\0' || *s == ' ' || *s == '+' || *s == '\t') {
    errno = EINVAL;
    return -1;
  }
  errno = 0;
  v = strtoll(s, &end, 10);
  if (errno != 0)
    return -1;
  if (end == s || *end != '\0') {
    errno = EINVAL;
    return -1;
  }
  *ret = v;
  return 0;
}

int parse_u32(const char *s, uint32_t *ret)
{
  uint64_t v;
  if (parse_u64(s, &v) < 0)
    return -1;
  if (v > UINT32_MAX) {
    errno = ERANGE;
    return -1;
  }
  *ret = (uint32_t)v;
  return 0;
}

int parse_int(const char *s, int *ret)
{
  int64_t v;
  if (parse_i64(s, &v) < 0)
    return -1;
  if (v < INT_MIN || v > INT_MAX) {
    errno = ERANGE;
    return -1;
  }
  *ret = (int)v;
  return 0;
}

/* Days since 1970-01-01 to a proleptic Gregorian date, by 400-year eras of
 * 146097 days counted from 0000-03-01 (so the leap day ends a year). */
static void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
  int64_t era;
  unsigned doe, yoe, doy, mp;

  z += 719468; /* 0000-03-01 -> 1970-01-01 */
  era = (z >= 0 ? z : z - 146096) / 146097;
  doe = (unsigned)(z - era * 146097);
  yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = (int64_t)yoe + era * 400 + (*m <= 2);
}

void rfc3339_at(const struct timespec *ts, char buf[RFC3339_NANO_SIZE])
{
  int64_t days, secs, y;
  unsigned m, d;

  days = (int64_t)ts->tv_sec / 86400;
  secs = (int64_t)ts->tv_sec % 86400;
  if (secs < 0) {
    secs += 86400;
    days--;
  }
  civil_from_days(days, &y, &m, &d);
  snprintf(buf, RFC3339_NANO_SIZE, "%04d-%02u-%02uT%02d:%02d:%02d.%09dZ", (int)y, m % 13, d % 32,
           (int)(secs / 3600), (int)(secs / 60 % 60), (int)(secs % 60), (int)ts->tv_nsec);
}

void rfc3339_now(char buf[RFC3339_NANO_SIZE], int64_t *ret_s)
{
  struct timespec ts;

  clock_gettime(CLOCK_REALTIME, &ts);
  rfc3339_at(&ts, buf);
  if (ret_s)
    *ret_s = (int64_t)ts.tv_sec;
}

int write_all(int fd, const void *buf, size_t n)
{
  const char *s = buf;

  while (n > 0) {
    ssize_t w = write(fd, s, n);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0) {
      if (w == 0)
        errno = EIO;
      return -1;
    }
    s += w;
    n -= (size_t)w;
  }
  return 0;
}
