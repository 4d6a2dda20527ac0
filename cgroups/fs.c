/* fs.c - reading and writing cgroupfs files, making and removing cgroup dirs.
 *
 * Real cgroupfs files always exist, so writes never create anything there
 * (a missing file means an unsupported knob and is reported as such).  In a
 * fake test tree (m->fake) a write creates the file and appends one line, so
 * a unit test can read back what was written, in order.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>

#include "cgroups/internal.h"
#include "common/util.h"

#define CG_READ_MAX (4u << 20)

int cg_missing(struct error *err, const char *c)
{
  error_set(err, 0, "cgroup: %s controller not available", c);
  err->code = ENOTSUP;
  return -1;
}

void cg_sleep_ms(unsigned ms)
{
  struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
    ;
}

int cg_write(const struct cgroup_manager *m, const char *dir, const char *file, const char *val,
             struct error *err)
{
  cleanup_free char *path = xfmt("%s/%s", dir, file);
  int flags = O_WRONLY | O_CLOEXEC | O_NOFOLLOW;
  cleanup_close int fd = -1;

  if (m->fake)
    flags |= O_CREAT | O_APPEND;
  fd = open(path, flags, 0644);
  if (fd < 0 && errno == ENOENT && !m->fake)
    return error_set(err, ENOENT, "cgroup: `%s` is not supported by the host (no `%s`)", file,
                     path);
  if (fd < 0)
    return error_errno(err, "cgroup: open `%s`", path);
  if (write_all(fd, val, strlen(val)) < 0 || (m->fake && write_all(fd, "\n", 1) < 0))
    return error_errno(err, "cgroup: write `%s` to `%s`", val, path);
  return 0;
}

int cg_writef(const struct cgroup_manager *m, const char *dir, const char *file, struct error *err,
              const char *fmt, ...)
{
  cleanup_free char *val = NULL;
  va_list ap;

  va_start(ap, fmt);
  if (vasprintf(&val, fmt, ap) < 0)
    abort();
  va_end(ap);
  return cg_write(m, dir, file, val, err);
}

int cg_read(const char *dir, const char *file, char **ret, struct error *err)
{
  cleanup_free char *path = xfmt("%s/%s", dir, file);
  cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  cleanup_free char *buf = NULL;
  size_t len = 0, cap = 0;

  if (fd < 0)
    return error_errno(err, "cgroup: open `%s`", path);
  for (;;) {
    ssize_t n;
    if (cap - len < 4096) {
      cap = cap ? cap * 2 : 8192;
      buf = xrealloc(buf, cap + 1);
    }
    n = read(fd, buf + len, cap - len);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return error_errno(err, "cgroup: read `%s`", path);
    if (n == 0)
      break;
    len += (size_t)n;
    if (len > CG_READ_MAX)
      return error_set(err, EFBIG, "cgroup: read `%s`", path);
  }
  if (buf == NULL)
    buf = xmalloc(1);
  buf[len] = '\0';
  *ret = take_ptr(buf);
  return 0;
}

static void trim(char *s)
{
  size_t n = strlen(s);
  while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == ' '))
    s[--n] = '\0';
}

int cg_read_u64(const char *dir, const char *file, uint64_t *ret, struct error *err)
{
  cleanup_free char *s = NULL;

  if (cg_read(dir, file, &s, err) < 0)
    return -1;
  trim(s);
  if (streq(s, "max")) {
    *ret = UINT64_MAX;
    return 0;
  }
  if (parse_u64(s, ret) < 0)
    return error_set(err, EINVAL, "cgroup: `%s/%s`: not a number: `%.32s`", dir, file, s);
  return 0;
}

int cg_keyed_u64(const char *text, const char *key, uint64_t *ret)
{
  size_t kl = strlen(key);
  const char *p = text;

  while (p != NULL && *p != '\0') {
    if (strncmp(p, key, kl) == 0 && p[kl] == ' ') {
      char num[32];
      size_t i = 0;
      const char *v = p + kl + 1;
      while (i < sizeof num - 1 && v[i] >= '0' && v[i] <= '9') {
        num[i] = v[i];
        i++;
      }
      num[i] = '\0';
      if (streq(num, "") && strncmp(v, "max", 3) == 0) {
        *ret = UINT64_MAX;
        return 0;
      }
      return parse_u64(num, ret);
    }
    p = strchr(p, '\n');
    if (p != NULL)
      p++;
  }
  return -1;
}

bool cg_exists(const char *dir, const char *file)
{
  cleanup_free char *path = xfmt("%s/%s", dir, file);
  return access(path, F_OK) == 0;
}

int cg_mkdir_p(const char *base, const char *rel, struct error *err)
{
  cleanup_free char *path = xfmt("%s/%s", base, rel);
  size_t blen = strlen(base);

  /* Walk the components after base; base itself must exist. */
  for (char *p = path + blen + 1; p != NULL && *p != '\0';) {
    char *slash = strchr(p, '/');
    if (slash != NULL)
      *slash = '\0';
    if (*p != '\0' && mkdir(path, 0755) < 0 && errno != EEXIST)
      return error_errno(err, "cgroup: mkdir `%s`", path);
    if (slash == NULL)
      break;
    *slash = '/';
    p = slash + 1;
  }
  return 0;
}

/* rmdir with a short bounded retry: a cgroup whose last task just exited may
 * report EBUSY for a moment. */
static int rmdir_retry(const char *dir)
{
  for (int i = 0; i < 50; i++) {
    if (rmdir(dir) == 0 || errno == ENOENT)
      return 0;
    if (errno != EBUSY)
      return -1;
    cg_sleep_ms(i < 10 ? 2 : 20);
  }
  return -1;
}

static int rmdir_tree_depth(const struct cgroup_manager *m, const char *dir, int depth,
                            struct error *err)
{
  DIR *d;
  struct dirent *e;

  if (depth > 64)
    return error_set(err, ELOOP, "cgroup: remove `%s`: too deep", dir);
  d = opendir(dir);
  if (d == NULL)
    return errno == ENOENT ? 0 : error_errno(err, "cgroup: open `%s`", dir);
  while ((e = readdir(d)) != NULL) {
    cleanup_free char *sub = NULL;
    if (streq(e->d_name, ".") || streq(e->d_name, ".."))
      continue;
    sub = xfmt("%s/%s", dir, e->d_name);
    if (e->d_type == DT_DIR) {
      if (rmdir_tree_depth(m, sub, depth + 1, err) < 0) {
        closedir(d);
        return -1;
      }
    } else if (m->fake) {
      unlink(sub);
    }
  }
  closedir(d);
  if (rmdir_retry(dir) < 0)
    return error_errno(err, "cgroup: remove `%s`", dir);
  return 0;
}

int cg_rmdir_tree(const struct cgroup_manager *m, const char *dir, struct error *err)
{
  return rmdir_tree_depth(m, dir, 0, err);
}

int cg_read_pids(const char *dir, pid_t **ret, size_t *ret_n, struct error *err)
{
  cleanup_free char *text = NULL;
  cleanup_free pid_t *pids = NULL;
  size_t n = 0, cap = 0;
  char *save = NULL;

  if (cg_read(dir, "cgroup.procs", &text, err) < 0)
    return -1;
  for (char *tok = strtok_r(text, "\n", &save); tok; tok = strtok_r(NULL, "\n", &save)) {
    int v;
    if (parse_int(tok, &v) < 0 || v <= 0)
      return error_set(err, EINVAL, "cgroup: `%s/cgroup.procs`: bad pid `%.16s`", dir, tok);
    if (n == cap) {
      cap = cap ? cap * 2 : 16;
      pids = xrealloc(pids, cap * sizeof *pids);
    }
    pids[n++] = v;
  }
  *ret = take_ptr(pids);
  *ret_n = n;
  return 0;
}

/* cg_read_pids over dir and every cgroup below it (bounded depth): on v2 a
 * container with sub-agents keeps its own processes in a leaf beside its
 * children's cgroups (cgroup_make_nestable), so its processes are the
 * subtree's. */
static int read_pids_tree(const char *dir, int depth, pid_t **pids, size_t *n, struct error *err)
{
  cleanup_free pid_t *mine = NULL;
  size_t k = 0;
  DIR *d;
  struct dirent *de;

  if (cg_read_pids(dir, &mine, &k, err) < 0)
    return -1;
  if (k > 0) {
    *pids = xrealloc(*pids, (*n + k) * sizeof **pids);
    memcpy(*pids + *n, mine, k * sizeof *mine);
    *n += k;
  }
  if (depth >= 16 || (d = opendir(dir)) == NULL)
    return 0;
  while ((de = readdir(d)) != NULL) {
    if (de->d_type != DT_DIR || de->d_name[0] == '.')
      continue;
    cleanup_free char *sub = xfmt("%s/%s", dir, de->d_name);
    struct error e = {0};
    /* a cgroup removed meanwhile is not an error */
    if (read_pids_tree(sub, depth + 1, pids, n, &e) < 0 && e.code != ENOENT) {
      *err = e;
      closedir(d);
      return -1;
    }
  }
  closedir(d);
  return 0;
}

int cg_read_pids_tree(const char *dir, pid_t **ret, size_t *ret_n, struct error *err)
{
  pid_t *pids = NULL;
  size_t n = 0;

  if (read_pids_tree(dir, 0, &pids, &n, err) < 0) {
    free(pids);
    return -1;
  }
  *ret = pids;
  *ret_n = n;
  return 0;
}
