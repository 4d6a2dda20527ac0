/* load.c - find and read a profile: the only file of profile/ that does I/O.
 *
 *   "agent", "agent-strict", "oci"   built-in
 *   NAME (no '/')             /etc/agentrt/profiles/NAME.json, else ./NAME
 *   anything with a '/'       that file
 *
 * Profile files are small: anything above 1 MiB is refused.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "profile/internal.h"

#include "common/util.h"

#define PROFILE_MAX_SIZE (1024 * 1024)

static int read_file(const char *path, char **ret, size_t *ret_len, struct error *err)
{
  cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  cleanup_free char *buf = NULL;
  size_t len = 0;
  struct stat st;

  if (fd < 0)
    return error_errno(err, "open profile `%s`", path);
  if (fstat(fd, &st) < 0)
    return error_errno(err, "stat profile `%s`", path);
  if (!S_ISREG(st.st_mode))
    return error_set(err, 0, "profile `%s`: not a regular file", path);
  if (st.st_size > PROFILE_MAX_SIZE)
    return error_set(err, 0, "profile `%s`: larger than 1 MiB", path);
  buf = xmalloc((size_t)st.st_size + 1);
  while (len < (size_t)st.st_size) {
    ssize_t n = read(fd, buf + len, (size_t)st.st_size - len);

    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return error_errno(err, "read profile `%s`", path);
    if (n == 0)
      break;
    len += (size_t)n;
  }
  buf[len] = '\0';
  *ret = take_ptr(buf);
  *ret_len = len;
  return 0;
}

int profile_load(const char *name_or_path, struct agent_profile **ret, struct error *err)
{
  cleanup_free char *path = NULL;
  cleanup_free char *json = NULL;
  size_t len = 0;

  if (name_or_path == NULL || name_or_path[0] == '\0')
    name_or_path = PROFILE_DEFAULT;
  if (profile_builtin_json(name_or_path) != NULL)
    return profile_builtin(name_or_path, ret, err);
  if (strchr(name_or_path, '/') == NULL) {
    if (streq(name_or_path, ".") || streq(name_or_path, ".."))
      return error_set(err, EINVAL, "profile `%s`", name_or_path);
    path = xfmt("%s/%s.json", PROFILE_DIR, name_or_path);
    if (read_file(path, &json, &len, err) < 0 && err->code != ENOENT)
      return -1;
    if (json == NULL) {
      error_clear(err);
      free(path);
      path = xstrdup(name_or_path);
    }
  } else {
    path = xstrdup(name_or_path);
  }
  if (json == NULL && read_file(path, &json, &len, err) < 0) {
    if (err->code == ENOENT && strchr(name_or_path, '/') == NULL)
      return error_set(err, 0, "unknown profile `%s` (not built-in, no %s/%s.json)", name_or_path,
                       PROFILE_DIR, name_or_path);
    return -1;
  }
  return profile_parse(json, len, path, ret, err);
}
