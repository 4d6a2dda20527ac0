/* procfs.c - the one verified procfs handle (see procfs.h).
 *
 * CVE-2019-16884, CVE-2025-52881: the runtime never opens a "/proc/..."
 * string.  It opens one procfs root (a private fsopen("proc") instance when
 * allowed, else the /proc it sees, checked to be the root of a procfs), and
 * every later open is relative to it with openat2(RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV): no symlink, no magic link and no
 * bind mount laid over a procfs file can redirect it.  "self" and
 * "thread-self" are resolved by hand (they are symlinks), and every file
 * opened is checked to still be on procfs.
 */
#include "os/procfs.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/util.h"

#define PROC_ROOT_INO 1

static int procfs_fd = -1;

bool fd_is_procfs(int fd)
{
  struct statfs sfs;

  return fstatfs(fd, &sfs) == 0 && sfs.f_type == PROC_SUPER_MAGIC;
}

static bool fd_is_procfs_root(int fd)
{
  struct stat st;

  return fd_is_procfs(fd) && fstat(fd, &st) == 0 && S_ISDIR(st.st_mode) &&
         st.st_ino == PROC_ROOT_INO;
}

/* A procfs instance nobody else can mount over (needs CAP_SYS_ADMIN in the
 * user namespace owning our pid namespace). */
static int open_private_procfs(void)
{
  cleanup_close int fs = fsopen("proc", FSOPEN_CLOEXEC);

  if (fs < 0)
    return -1;
  if (fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    return -1;
  return fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
}

int procfs_root(struct error *err)
{
  int fd;

  if (procfs_fd >= 0)
    return procfs_fd;
  fd = open_private_procfs();
  if (fd < 0)
    fd = open("/proc", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return error_errno(err, "open procfs `/proc`");
  if (!fd_is_procfs_root(fd)) {
    close(fd);
    return error_set(err, 0, "open procfs `/proc`: not the root of a procfs (possible attack)");
  }
  procfs_fd = fd;
  return fd;
}

void procfs_reset(void)
{
  if (procfs_fd >= 0)
    close(procfs_fd);
  procfs_fd = -1;
}

/* "self/x" -> "<pid>/x", "thread-self/x" -> "<pid>/task/<tid>/x", reading
 * the links of the verified instance (they depend on its pid namespace). */
static int resolve_self(int root, const char *rel, char **ret, struct error *err)
{
  static const char *const links[] = {"thread-self", "self"};
  char target[128];

  for (size_t i = 0; i < ARRAY_SIZE(links); i++) {
    size_t n = strlen(links[i]);
    ssize_t len;

    if (strncmp(rel, links[i], n) != 0 || (rel[n] != '/' && rel[n] != '\0'))
      continue;
    len = readlinkat(root, links[i], target, sizeof target - 1);
    if (len < 0)
      return error_errno(err, "read procfs link `%s`", links[i]);
    target[len] = '\0';
    if (strchr(target, '.') != NULL || target[0] == '/')
      return error_set(err, 0, "procfs link `%s` points to `%s`", links[i], target);
    *ret = xfmt("%s%s", target, rel + n);
    return 0;
  }
  *ret = xstrdup(rel);
  return 0;
}

static int open_beneath(int root, const char *rel, int flags)
{
  struct open_how how = {
      .flags = (uint64_t)(flags | O_CLOEXEC | O_NOFOLLOW),
      .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
  };
  int fd = (int)syscall(SYS_openat2, root, rel, &how, sizeof how);

  if (fd < 0 && errno == ENOSYS) {
    /* pre-5.6 kernel: the last component at least is not followed, and the
     * procfs check below still rejects a foreign filesystem */
    if (strstr(rel, "..") != NULL) {
      errno = EINVAL;
      return -1;
    }
    fd = openat(root, rel, flags | O_CLOEXEC | O_NOFOLLOW);
  }
  return fd;
}

int procfs_open(const char *relpath, int flags, struct error *err)
{
  cleanup_free char *rel = NULL;
  int root = procfs_root(err);
  int fd;

  if (root < 0)
    return -1;
  if (resolve_self(root, relpath, &rel, err) < 0)
    return -1;
  fd = open_beneath(root, rel, flags);
  if (fd < 0)
    return error_errno(err, "open `/proc/%s`", relpath);
  if (!fd_is_procfs(fd)) {
    close(fd);
    return error_set(err, 0, "open `/proc/%s`: not on procfs (possible attack)", relpath);
  }
  return fd;
}

int procfs_reopen(int fd, int flags, struct error *err)
{
  cleanup_close int dir = procfs_open("thread-self/fd", O_PATH | O_DIRECTORY, err);
  char name[32];
  int r;

  if (dir < 0)
    return -1;
  snprintf(name, sizeof name, "%d", fd);
  /* the last component is the magic link we want to follow */
  r = openat(dir, name, (flags & ~O_NOFOLLOW) | O_CLOEXEC);
  if (r < 0)
    return error_errno(err, "reopen fd %d", fd);
  return r;
}

int procfs_write(const char *relpath, const char *value, struct error *err)
{
  cleanup_close int fd = procfs_open(relpath, O_WRONLY | O_NOCTTY, err);
  size_t len = strlen(value);
  ssize_t n;

  if (fd < 0)
    return -1;
  n = write(fd, value, len);
  if (n < 0)
    return error_errno(err, "write `/proc/%s`", relpath);
  if ((size_t)n != len)
    return error_set(err, EIO, "write `/proc/%s`: short write", relpath);
  return 0;
}

ssize_t procfs_read(const char *relpath, char *buf, size_t size, struct error *err)
{
  cleanup_close int fd = procfs_open(relpath, O_RDONLY | O_NOCTTY, err);
  size_t off = 0;

  if (fd < 0)
    return -1;
  if (size == 0)
    return error_set(err, EINVAL, "read `/proc/%s`: empty buffer", relpath);
  while (off < size - 1) {
    ssize_t n = read(fd, buf + off, size - 1 - off);

    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return error_errno(err, "read `/proc/%s`", relpath);
    if (n == 0)
      break;
    off += (size_t)n;
  }
  buf[off] = '\0';
  return (ssize_t)off;
}

int procfs_read_all(const char *relpath, char **ret, struct error *err)
{
  cleanup_close int fd = procfs_open(relpath, O_RDONLY | O_NOCTTY, err);
  cleanup_free char *buf = NULL;
  size_t cap = 8192, off = 0;

  if (fd < 0)
    return -1;
  buf = xmalloc(cap);
  for (;;) {
    ssize_t n;

    if (cap - off < 4096) {
      if (cap >= (16u << 20))
        return error_set(err, EFBIG, "read `/proc/%s`: too large", relpath);
      cap *= 2;
      buf = xrealloc(buf, cap);
    }
    n = read(fd, buf + off, cap - off - 1);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return error_errno(err, "read `/proc/%s`", relpath);
    if (n == 0)
      break;
    off += (size_t)n;
  }
  buf[off] = '\0';
  *ret = take_ptr(buf);
  return 0;
}

#ifndef NSFS_MAGIC
#define NSFS_MAGIC 0x6e736673
#endif

int procfs_open_ns_dir(const char *who, struct error *err)
{
  char rel[64];

  snprintf(rel, sizeof rel, "%s/ns", who);
  return procfs_open(rel, O_PATH | O_DIRECTORY, err);
}

int procfs_open_ns_at(int nsdir, const char *who, const char *name, struct error *err)
{
  struct statfs sfs;
  int fd;

  /* ns entries are magic links: follow exactly this last one, from a
   * verified procfs directory, and check we got a namespace file */
  fd = openat(nsdir, name, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return error_errno(err, "open `/proc/%s/ns/%s`", who, name);
  if (fstatfs(fd, &sfs) < 0 || sfs.f_type != NSFS_MAGIC) {
    close(fd);
    return error_set(err, 0, "open `/proc/%s/ns/%s`: not a namespace file (possible attack)", who,
                     name);
  }
  return fd;
}

int procfs_open_ns(const char *who, const char *name, struct error *err)
{
  cleanup_close int dir = procfs_open_ns_dir(who, err);

  if (dir < 0)
    return -1;
  return procfs_open_ns_at(dir, who, name, err);
}

/* ---- /proc/<pid>/status */

/* The value of a "Key:\tvalue" line, or NULL. */
static const char *status_value(const char *text, const char *key)
{
  size_t klen = strlen(key);

  for (const char *p = text; p != NULL && *p != '\0';) {
    if (strncmp(p, key, klen) == 0 && p[klen] == ':')
      return p + klen + 1 + (p[klen + 1] == '\t');
    p = strchr(p, '\n');
    if (p != NULL)
      p++;
  }
  return NULL;
}

/* The first (or, last: the last) number of a value, -1 when there is none. */
static long long status_num(const char *s, bool last)
{
  long long v = -1;

  while (s != NULL && *s != '\0' && *s != '\n') {
    char *end;
    long long x;

    if (*s < '0' || *s > '9') {
      s++;
      continue;
    }
    errno = 0;
    x = strtoll(s, &end, 10);
    if (errno != 0)
      return -1;
    v = x;
    if (!last)
      break;
    s = end;
  }
  return v;
}

void procfs_parse_status(const char *text, struct procfs_status *st)
{
  const char *name = status_value(text, "Name"), *state = status_value(text, "State");
  size_t n = 0;

  st->comm[0] = '\0';
  st->state = 0;
  if (name != NULL) {
    for (const char *p = name; *p != '\0' && *p != '\n' && n < sizeof st->comm - 1; p++) {
      char c = *p;
      if (c == '\\' && p[1] == 'n')
        c = '\n', p++;
      else if (c == '\\' && p[1] == '\\')
        p++;
      st->comm[n++] = c;
    }
    st->comm[n] = '\0';
  }
  while (state != NULL && (*state == ' ' || *state == '\t'))
    state++;
  if (state != NULL && *state >= 'A' && *state <= 'Z')
    st->state = *state;
  st->cpid = status_num(status_value(text, "NSpid"), true);
  st->tgid = status_num(status_value(text, "Tgid"), false);
  st->ctgid = status_num(status_value(text, "NStgid"), true);
  st->ppid = status_num(status_value(text, "PPid"), false);
  st->uid = status_num(status_value(text, "Uid"), false);
}
