/* test_error.c - common/error.c: one line that names the object and says why,
 * whatever the length of what it names. */
#include <errno.h>
#include <string.h>

#include "common/error.h"
#include "tests/unit/tap.h"

static bool valid_utf8(const char *s)
{
  for (const unsigned char *p = (const unsigned char *)s; *p;) {
    int n = *p < 0x80             ? 1
            : (*p & 0xE0) == 0xC0 ? 2
            : (*p & 0xF0) == 0xE0 ? 3
            : (*p & 0xF8) == 0xF0 ? 4
                                  : 0;
    if (n == 0)
      return false;
    for (int i = 1; i < n; i++)
      if ((p[i] & 0xC0) != 0x80)
        return false;
    p += n;
  }
  return true;
}

static bool ends_with(const char *s, const char *suffix)
{
  size_t a = strlen(s), b = strlen(suffix);
  return a >= b && strcmp(s + a - b, suffix) == 0;
}

int main(void)
{
  static char path[40000];
  struct error err = {0};
  size_t n;

  error_set(&err, ENOENT, "open `%s`", "a/b");
  tap_ok(strcmp(err.msg, "open `a/b`: No such file or directory") == 0 && err.code == ENOENT,
         "a short message as it is: %s", err.msg);
  error_prefix(&err, "create `%s`", "c1");
  tap_ok(strcmp(err.msg, "create `c1`: open `a/b`: No such file or directory") == 0,
         "a prefix as it is: %s", err.msg);

  /* a path deeper than the message: 20,000 levels of x/ (an agent's tree) */
  for (n = 0; n + 2 < sizeof path && n < 39998; n += 2)
    memcpy(path + n, "x/", 2);
  memcpy(path + n, "f", 2);
  error_set(&err, EMFILE, "workspace scan: read `%s`", path);
  tap_ok(strlen(err.msg) < ERROR_MSG_MAX, "a message over the limit fits (%zu bytes)",
         strlen(err.msg));
  tap_ok(strncmp(err.msg, "workspace scan: read `x/x/", 26) == 0,
         "its start names what was done: %.40s", err.msg);
  tap_ok(ends_with(err.msg, "x/f`: Too many open files"), "its end says why: ...%s",
         err.msg + strlen(err.msg) - 30);
  tap_ok(strstr(err.msg, " ... ") != NULL, "the middle is marked as left out");
  errno = ENAMETOOLONG;
  error_errno(&err, "open `%s`", path);
  tap_ok(ends_with(err.msg, ": File name too long") && err.code == ENAMETOOLONG &&
             errno == ENAMETOOLONG,
         "error_errno: the reason survives too, errno kept");
  error_prefix(&err, "workspace `%s`", "w");
  tap_ok(strncmp(err.msg, "workspace `w`: open `x/x/", 25) == 0 &&
             ends_with(err.msg, ": File name too long") && strlen(err.msg) < ERROR_MSG_MAX,
         "a prefix over a full message: its start and the reason stay");
  error_set(&err, 0, "stat `%s`: not a directory", path);
  tap_ok(ends_with(err.msg, "`: not a directory"), "without an errno the format's end stays");

  /* a path of 3-byte characters: no character is cut at either end */
  for (n = 0; n + 4 < sizeof path && n < 6000; n += 3)
    memcpy(path + n, "\xe2\x82\xac", 3);
  path[n] = '\0';
  for (int shift = 0; shift < 3; shift++) {
    error_set(&err, EIO, "%.*sread `%s`", shift, "ab", path);
    tap_ok(valid_utf8(err.msg) && ends_with(err.msg, ": Input/output error"),
           "UTF-8 kept whole at the cuts (shift %d)", shift);
  }
  return tap_done();
}
