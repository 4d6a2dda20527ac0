/* copyup.c - the "tmpcopyup" mount option (runc/crun extension, used by
 * `podman run --read-only` for /tmp, /var/tmp and /run): a new tmpfs starts
 * with a copy of what the directory it covers held.
 *
 * Everything is fd-relative with O_NOFOLLOW: the source is the container's
 * own (untrusted) rootfs, the destination the detached tmpfs from fsmount(),
 * so a symlink planted in the image is copied as a symlink and never
 * followed.  Directories, regular files and symlinks are copied with their
 * mode and owner; other file types are left out.  Depth is bounded; the
 * tmpfs size bounds the volume (ENOSPC is an error naming the file).
 */
#include "container/mounts.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "common/util.h"

#define COPYUP_MAX_DEPTH 64

static int copy_tree(int src, int dst, const char *dest, int depth, struct error *err);

static void copy_owner_mode(int fd, const struct stat *st)
{
  /* a uid without a mapping in a user namespace is EINVAL: keep ours */
  if (fchown(fd, st->st_uid, st->st_gid) < 0)
    log_debug("tmpcopyup: chown: %s", strerror(errno));
  if (fchmod(fd, st->st_mode & 07777) < 0)
    log_debug("tmpcopyup: chmod: %s", strerror(errno));
}

static int copy_data(int in, int out, const char *dest, const char *name, struct error *err)
{
  char buf[65536];

  for (;;) {
    ssize_t n = read(in, buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return error_errno(err, "tmpcopyup on `%s`: read `%s`", dest, name);
    if (n == 0)
      return 0;
    for (ssize_t off = 0; off < n;) {
      ssize_t w = write(out, buf + off, (size_t)(n - off));
      if (w < 0 && errno == EINTR)
        continue;
      if (w < 0)
        return error_errno(err, "tmpcopyup on `%s`: write `%s`", dest, name);
      off += w;
    }
  }
}

static int copy_file(int src, int dst, const char *name, const struct stat *st, const char *dest,
                     struct error *err)
{
  cleanup_close int in = openat(src, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  cleanup_close int out = -1;
  struct stat ist;

  if (in < 0)
    return error_errno(err, "tmpcopyup on `%s`: open `%s`", dest, name);
  if (fstat(in, &ist) < 0 || !S_ISREG(ist.st_mode))
    return 0; /* swapped for something else meanwhile: leave it out */
  out = openat(dst, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (out < 0)
    return error_errno(err, "tmpcopyup on `%s`: create `%s`", dest, name);
  if (copy_data(in, out, dest, name, err) < 0)
    return -1;
  copy_owner_mode(out, st);
  return 0;
}

static int copy_symlink(int src, int dst, const char *name, const char *dest, struct error *err)
{
  char target[PATH_MAX];
  ssize_t n = readlinkat(src, name, target, sizeof target - 1);

  if (n < 0)
    return error_errno(err, "tmpcopyup on `%s`: readlink `%s`", dest, name);
  target[n] = '\0';
  if (symlinkat(target, dst, name) < 0)
    return error_errno(err, "tmpcopyup on `%s`: symlink `%s`", dest, name);
  return 0;
}

static int copy_dir(int src, int dst, const char *name, const struct stat *st, const char *dest,
                    int depth, struct error *err)
{
  cleanup_close int s = -1;
  cleanup_close int d = -1;

  if (depth >= COPYUP_MAX_DEPTH)
    return error_set(err, ELOOP, "tmpcopyup on `%s`: directories nested deeper than %d", dest,
                     COPYUP_MAX_DEPTH);
  s = openat(src, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (s < 0)
    return error_errno(err, "tmpcopyup on `%s`: open `%s`", dest, name);
  if (mkdirat(dst, name, 0700) < 0)
    return error_errno(err, "tmpcopyup on `%s`: mkdir `%s`", dest, name);
  d = openat(dst, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (d < 0)
    return error_errno(err, "tmpcopyup on `%s`: open new `%s`", dest, name);
  if (copy_tree(s, d, dest, depth + 1, err) < 0)
    return -1;
  copy_owner_mode(d, st);
  return 0;
}

static int copy_entry(int src, int dst, const char *name, const char *dest, int depth,
                      struct error *err)
{
  struct stat st;

  if (fstatat(src, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return error_errno(err, "tmpcopyup on `%s`: stat `%s`", dest, name);
  if (S_ISDIR(st.st_mode))
    return copy_dir(src, dst, name, &st, dest, depth, err);
  if (S_ISREG(st.st_mode))
    return copy_file(src, dst, name, &st, dest, err);
  if (S_ISLNK(st.st_mode))
    return copy_symlink(src, dst, name, dest, err);
  log_debug("tmpcopyup on `%s`: `%s` is not a file, directory or symlink: skipped", dest, name);
  return 0;
}

/* Copies the entries of directory src into directory dst; consumes nothing. */
static int copy_tree(int src, int dst, const char *dest, int depth, struct error *err)
{
  int dupfd = fcntl(src, F_DUPFD_CLOEXEC, 3);
  DIR *dir;
  struct dirent *e;
  int r = 0;

  if (dupfd < 0)
    return error_errno(err, "tmpcopyup on `%s`: dup", dest);
  dir = fdopendir(dupfd);
  if (dir == NULL) {
    close(dupfd);
    return error_errno(err, "tmpcopyup on `%s`: opendir", dest);
  }
  while (r == 0 && (errno = 0, e = readdir(dir)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
      continue;
    r = copy_entry(src, dst, e->d_name, dest, depth, err);
  }
  if (r == 0 && errno != 0)
    r = error_errno(err, "tmpcopyup on `%s`: readdir", dest);
  closedir(dir);
  return r;
}

int mnt_tmpcopyup(int target, int mntfd, const char *dest, struct error *err)
{
  cleanup_close int src = openat(target, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  cleanup_close int dst = openat(mntfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  struct stat st;

  if (src < 0)
    return error_errno(err, "tmpcopyup on `%s`: open", dest);
  if (dst < 0)
    return error_errno(err, "tmpcopyup on `%s`: open the new tmpfs", dest);
  if (copy_tree(src, dst, dest, 0, err) < 0)
    return -1;
  if (fstat(src, &st) == 0)
    copy_owner_mode(dst, &st);
  return 0;
}
