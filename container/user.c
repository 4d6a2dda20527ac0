/* user.c - strict parsing of `exec --user uid[:gid]`.
 *
 * CVE-2026-30892 (crun exec -u): a lax parser ran the process as the wrong
 * user.  Only plain decimal ids are accepted; every part must be present,
 * fit in 32 bits and not be (uid_t)-1, which the kernel reads as "unchanged".
 * Names are refused: no user name is looked up in the container's /etc/passwd
 * (process.c reads it only for HOME, from a regular file, inside the root).
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "common/util.h"
#include "container/process.h"

#define ID_INVALID UINT32_MAX

static bool all_digits(const char *s, size_t n)
{
  if (n == 0)
    return false;
  for (size_t i = 0; i < n; i++)
    if (s[i] < '0' || s[i] > '9')
      return false;
  return true;
}

/* One id of a user spec, `what` is "uid" or "gid" for the message. */
static int parse_id(const char *spec, const char *s, size_t n, const char *what, uint32_t *ret,
                    struct error *err)
{
  char buf[32];
  uint32_t v;

  if (n == 0)
    return error_set(err, 0, "invalid user `%s`: empty %s", spec, what);
  if (!all_digits(s, n)) {
    if (isalpha((unsigned char)s[0]) || s[0] == '_')
      return error_set(
          err, 0, "invalid user `%s`: names are not supported, give a numeric uid[:gid]", spec);
    return error_set(err, 0, "invalid user `%s`: %s is not a decimal number", spec, what);
  }
  if (n >= sizeof buf || (memcpy(buf, s, n), buf[n] = '\0', parse_u32(buf, &v) < 0))
    return error_set(err, 0, "invalid user `%s`: %s out of range", spec, what);
  if (v == ID_INVALID)
    return error_set(err, 0, "invalid user `%s`: %s 4294967295 is the invalid id", spec, what);
  *ret = v;
  return 0;
}

int parse_user_spec(const char *s, uint32_t *ret_uid, uint32_t *ret_gid, bool *ret_has_gid,
                    struct error *err)
{
  const char *colon;
  uint32_t uid = 0, gid = 0;

  if (s == NULL || *s == '\0')
    return error_set(err, 0, "invalid user ``: empty");
  colon = strchr(s, ':');
  if (colon != NULL && strchr(colon + 1, ':') != NULL)
    return error_set(err, 0, "invalid user `%s`: expected uid[:gid]", s);
  if (parse_id(s, s, colon ? (size_t)(colon - s) : strlen(s), "uid", &uid, err) < 0)
    return -1;
  if (colon != NULL && parse_id(s, colon + 1, strlen(colon + 1), "gid", &gid, err) < 0)
    return -1;
  *ret_uid = uid;
  *ret_gid = gid;
  *ret_has_gid = colon != NULL;
  return 0;
}
