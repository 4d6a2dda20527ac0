/* safepath.c - resolve, open and create paths inside a container rootfs
 * without ever leaving it (see safepath.h).
 *
 * Plain opens use openat2(RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS).  Creating
 * missing components, and every open on kernels without openat2, goes
 * through safe_walk(): one component at a time with O_PATH|O_NOFOLLOW,
 * following symlinks by hand as if the rootfs were "/" (absolute targets
 * restart at the root fd, ".." never climbs above it because we pop fds we
 * hold, not names), creating directories with mkdirat() in a directory fd
 * that is already known to be inside the root.  A rename race can therefore
 * only move us to another place inside the rootfs, never onto the host
 * (CVE-2021-30465, CVE-2024-45310, CVE-2019-18837, CVE-2026-41579).
 */
#include "os/safepath.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/util.h"
#include "os/procfs.h"

#define MAX_SYMLINKS 40
#define MAX_DEPTH 255

struct walker {
  int rootfd;
  int fds[MAX_DEPTH + 1]; /* fds[0] is rootfd (not owned) */
  int depth;
};

static int cur(const struct walker *w)
{
  return w->fds[w->depth];
}

static void walker_pop(struct walker *w, bool to_root)
{
  do {
    if (w->depth == 0)
      return;
    close(w->fds[w->depth--]);
  } while (to_root);
}

/* Is the rest of the path only slashes and "."? */
static bool only_dots(const char *p)
{
  for (; *p != '\0'; p++)
    if (*p != '/' && !(*p == '.' && (p[1] == '/' || p[1] == '\0')))
      return false;
  return true;
}

/* The missing last (or intermediate) component `name` is created in cur(w). */
static int create_component(struct walker *w, const char *name, bool as_file, mode_t mode)
{
  int r;

  if (!as_file)
    return mkdirat(cur(w), name, mode) < 0 && errno != EEXIST ? -1 : 0;
  r = openat(cur(w), name, O_CREAT | O_EXCL | O_NOFOLLOW | O_WRONLY | O_CLOEXEC | O_NOCTTY, 0644);
  if (r < 0)
    return errno == EEXIST ? 0 : -1;
  close(r);
  return 0;
}

/* Replace `rest` by "<link target>/<rest>"; absolute targets restart at the root. */
static int follow_link(struct walker *w, int linkfd, char **rest)
{
  char target[4096];
  ssize_t n = readlinkat(linkfd, "", target, sizeof target - 1);
  char *next;

  if (n < 0)
    return -1;
  target[n] = '\0';
  if (target[0] == '/')
    walker_pop(w, true);
  next = xfmt("%s/%s", target, *rest);
  free(*rest);
  *rest = next;
  return 0;
}

/* One step: open `name` in cur(w); returns the O_PATH fd, or -1/errno. */
static int open_step(struct walker *w, const char *name, bool last, enum safe_create create,
                     mode_t mode)
{
  int fd = openat(cur(w), name, O_PATH | O_NOFOLLOW | O_CLOEXEC);

  if (fd >= 0 || errno != ENOENT || create == SAFE_OPEN)
    return fd;
  if (create_component(w, name, last && create == SAFE_MKFILE, mode) < 0)
    return -1;
  return openat(cur(w), name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
}

static int walk(struct walker *w, const char *path, enum safe_create create, bool nofollow_last,
                mode_t mode)
{
  cleanup_free char *rest = xstrdup(path);
  int links = 0;

  for (;;) {
    char *p = rest, *slash, *name;
    bool last;
    struct stat st;
    int fd;

    while (*p == '/')
      p++;
    if (*p == '\0')
      return openat(cur(w), ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
    slash = strchrnul(p, '/');
    name = xstrndup(p, (size_t)(slash - p));
    memmove(rest, slash, strlen(slash) + 1);
    last = only_dots(rest);
    if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
      if (name[1] == '.')
        walker_pop(w, false);
      free(name);
      if (last)
        return openat(cur(w), ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
      continue;
    }
    fd = open_step(w, name, last, create, mode);
    free(name);
    if (fd < 0 || fstat(fd, &st) < 0) {
      if (fd >= 0)
        close(fd);
      return -1;
    }
    if (S_ISLNK(st.st_mode) && !(last && nofollow_last)) {
      int r = ++links > MAX_SYMLINKS ? (errno = ELOOP, -1) : follow_link(w, fd, &rest);

      close(fd);
      if (r < 0)
        return -1;
      continue;
    }
    if (last)
      return fd;
    if (!S_ISDIR(st.st_mode) || w->depth >= MAX_DEPTH) {
      close(fd);
      errno = S_ISDIR(st.st_mode) ? ENAMETOOLONG : ENOTDIR;
      return -1;
    }
    w->fds[++w->depth] = fd;
  }
}

int safe_walk(int rootfd, const char *path, enum safe_create create, bool nofollow_last,
              struct error *err)
{
  struct walker w = {.rootfd = rootfd, .depth = 0};
  int fd, saved;

  w.fds[0] = rootfd;
  fd = walk(&w, path, create, nofollow_last, 0755);
  saved = errno;
  walker_pop(&w, true);
  if (fd < 0)
    return error_set(err, saved, "%s `%s` in rootfs", create == SAFE_OPEN ? "open" : "create",
                     path);
  return fd;
}

static int openat2_in_root(int rootfd, const char *path, int flags, mode_t mode)
{
  struct open_how how = {
      .flags = (uint64_t)(flags | O_CLOEXEC),
      .mode = (flags & O_CREAT) ? mode : 0,
      .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
  };

  return (int)syscall(SYS_openat2, rootfd, path, &how, sizeof how);
}

/* Open the parent inside the root, then create the last component there
 * without following a symlink planted at that name. */
static int open_create(int rootfd, const char *path, int flags, mode_t mode, struct error *err)
{
  cleanup_free char *copy = xstrdup(path);
  char *slash = strrchr(copy, '/');
  const char *base = slash != NULL ? slash + 1 : copy;
  cleanup_close int parent = -1;
  int fd;

  if (*base == '\0' || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
    return error_set(err, EINVAL, "create `%s` in rootfs", path);
  if (slash != NULL)
    *slash = '\0';
  parent = safe_walk(rootfd, slash != NULL && *copy != '\0' ? copy : "/", SAFE_OPEN, false, err);
  if (parent < 0)
    return -1;
  fd = openat(parent, base, flags | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0)
    return error_errno(err, "create `%s` in rootfs", path);
  return fd;
}

int safe_openat(int rootfd, const char *path, int flags, mode_t mode, struct error *err)
{
  cleanup_close int pathfd = -1;
  struct stat st;
  int fd;

  if (flags & O_CREAT)
    return open_create(rootfd, path, flags, mode, err);
  fd = openat2_in_root(rootfd, path, flags, mode);
  if (fd >= 0)
    return fd;
  if (errno != ENOSYS)
    return error_errno(err, "open `%s` in rootfs", path);
  /* no openat2: walk by hand, then turn the O_PATH fd into what was asked */
  pathfd = safe_walk(rootfd, path, SAFE_OPEN, (flags & O_NOFOLLOW) != 0, err);
  if (pathfd < 0)
    return -1;
  if (fstat(pathfd, &st) < 0)
    return error_errno(err, "stat `%s` in rootfs", path);
  if ((flags & O_DIRECTORY) && !S_ISDIR(st.st_mode))
    return error_set(err, ENOTDIR, "open `%s` in rootfs", path);
  if (flags & O_PATH)
    return take_fd(&pathfd);
  if (S_ISLNK(st.st_mode))
    return error_set(err, ELOOP, "open `%s` in rootfs", path);
  if (S_ISDIR(st.st_mode)) {
    fd = openat(pathfd, ".", (flags & ~O_NOFOLLOW) | O_CLOEXEC);
    return fd < 0 ? error_errno(err, "open `%s` in rootfs", path) : fd;
  }
  return procfs_reopen(pathfd, flags, err);
}

int safe_mkdir_all(int rootfd, const char *path, mode_t mode, struct error *err)
{
  struct walker w = {.rootfd = rootfd, .depth = 0};
  struct stat st;
  int fd, saved;

  w.fds[0] = rootfd;
  fd = walk(&w, path, SAFE_MKDIR, false, mode);
  saved = errno;
  walker_pop(&w, true);
  if (fd < 0)
    return error_set(err, saved, "mkdir `%s` in rootfs", path);
  if (fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode)) {
    close(fd);
    return error_set(err, ENOTDIR, "mkdir `%s` in rootfs", path);
  }
  return fd;
}

int safe_mount_target(int rootfd, const char *path, bool is_dir, struct error *err)
{
  return safe_walk(rootfd, path, is_dir ? SAFE_MKDIR : SAFE_MKFILE, false, err);
}
