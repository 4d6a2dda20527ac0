/* units.c - sizes, CPU counts, durations, modes and lexical paths (pure). */
#include "profile/internal.h"

#include <ctype.h>
#include <errno.h>

#include "common/util.h"

static int mul_check(uint64_t v, uint64_t m, uint64_t *ret)
{
  if (m != 0 && v > UINT64_MAX / m) {
    errno = ERANGE;
    return -1;
  }
  *ret = v * m;
  return 0;
}

/* Split "123abc" into the number and the suffix. */
static int leading_u64(const char *s, uint64_t *ret, const char **ret_suffix)
{
  char digits[32];
  size_t n = 0;

  while (isdigit((unsigned char)s[n]) && n < sizeof digits - 1)
    n++;
  if (n == 0 || isdigit((unsigned char)s[n])) {
    errno = n == 0 ? EINVAL : ERANGE;
    return -1;
  }
  memcpy(digits, s, n);
  digits[n] = '\0';
  if (parse_u64(digits, ret) < 0)
    return -1;
  *ret_suffix = s + n;
  return 0;
}

int profile_parse_size(const char *s, uint64_t *ret)
{
  static const char units[] = "kmgt";
  const char *suffix = NULL;
  const char *u;
  uint64_t v, m = 1;

  if (s == NULL || leading_u64(s, &v, &suffix) < 0)
    return -1;
  if (*suffix != '\0') {
    u = strchr(units, tolower((unsigned char)*suffix));
    if (u == NULL) {
      errno = EINVAL;
      return -1;
    }
    for (const char *k = units; k <= u; k++)
      m *= 1024;
    suffix++;
    if (*suffix == 'i' || *suffix == 'I')
      suffix++;
    if (*suffix == 'b' || *suffix == 'B')
      suffix++;
  }
  if (*suffix != '\0') {
    errno = EINVAL;
    return -1;
  }
  return mul_check(v, m, ret);
}

int profile_parse_cpus(const char *s, uint64_t *ret)
{
  const char *frac = NULL;
  uint64_t whole, milli = 0, scale = 100;

  if (s == NULL || leading_u64(s, &whole, &frac) < 0)
    return -1;
  if (*frac == '.') {
    frac++;
    if (*frac == '\0')
      goto bad;
    for (; *frac != '\0'; frac++) {
      if (!isdigit((unsigned char)*frac) || scale == 0)
        goto bad;
      milli += (uint64_t)(*frac - '0') * scale;
      scale /= 10;
    }
  }
  if (*frac != '\0' || mul_check(whole, 1000, ret) < 0 || *ret > UINT64_MAX - milli)
    goto bad;
  *ret += milli;
  if (*ret == 0)
    goto bad;
  return 0;
bad:
  errno = EINVAL;
  return -1;
}

int profile_parse_duration(const char *s, uint64_t *ret)
{
  const char *suffix = NULL;
  uint64_t v, m;

  if (s == NULL || leading_u64(s, &v, &suffix) < 0)
    return -1;
  switch (*suffix) {
  case '\0':
  case 's':
    m = 1;
    break;
  case 'm':
    m = 60;
    break;
  case 'h':
    m = 3600;
    break;
  case 'd':
    m = 86400;
    break;
  case 'w':
    m = 7 * 86400;
    break;
  default:
    errno = EINVAL;
    return -1;
  }
  if (*suffix != '\0' && suffix[1] != '\0') {
    errno = EINVAL;
    return -1;
  }
  return mul_check(v, m, ret);
}

static const char *const ws_mode_names[] = {
    [PROFILE_WS_NONE] = "none",       [PROFILE_WS_AUTO] = "auto", [PROFILE_WS_TMPFS] = "tmpfs",
    [PROFILE_WS_OVERLAY] = "overlay", [PROFILE_WS_BIND] = "bind",
};

const char *profile_ws_mode_name(enum profile_ws_mode m)
{
  return (size_t)m < ARRAY_SIZE(ws_mode_names) ? ws_mode_names[m] : "?";
}

int profile_ws_mode_from_name(const char *s)
{
  for (size_t i = 0; i < ARRAY_SIZE(ws_mode_names); i++)
    if (streq(s, ws_mode_names[i]))
      return (int)i;
  return -1;
}

bool profile_path_is_under(const char *path, const char *dir)
{
  return path_is_below(path, dir);
}

bool profile_path_is_normal_abs(const char *path)
{
  char *n;
  bool ok;

  if (path == NULL || path[0] != '/')
    return false;
  n = path_normalize(path);
  ok = streq(n, path);
  free(n);
  return ok;
}

char *profile_fmt_size(uint64_t v)
{
  static const char units[] = "kmgt";
  int u = -1;

  while (u < 3 && v != 0 && v % 1024 == 0) {
    v /= 1024;
    u++;
  }
  return u < 0 ? xfmt("%" PRIu64, v) : xfmt("%" PRIu64 "%c", v, units[u]);
}

char *profile_fmt_cpus(uint64_t milli)
{
  if (milli % 1000 == 0)
    return xfmt("%" PRIu64, milli / 1000);
  return xfmt("%" PRIu64 ".%03" PRIu64, milli / 1000, milli % 1000);
}
