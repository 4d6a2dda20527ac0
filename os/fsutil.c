/* fsutil.c - see fsutil.h */
#include "os/fsutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"

#define READ_FIFO_IDLE_MS 10000

/* buf full at *cap bytes: double it, up to max; past max, free it and fail */
static int grow_buf(char **buf, size_t *cap, size_t max, struct error *err)
{
  if (*cap >= max) {
    free(*buf);
    return error_set(err, EFBIG, "input larger than %zu bytes", max);
  }
  *cap = *cap * 2 > max ? max : *cap * 2;
  *buf = xrealloc(*buf, *cap + 1);
  return 0;
}

int read_fd_all(int fd, size_t max, char **ret, size_t *ret_len, struct error *err)
{
  size_t cap = 4096, len = 0;
  char *buf = xmalloc(cap + 1);

  for (;;) {
    ssize_t n;
    if (len == cap && grow_buf(&buf, &cap, max, err) < 0)
      return -1;
    n = read(fd, buf + len, cap - len);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      free(buf);
      return error_errno(err, "read");
    }
    if (n == 0)
      break;
    len += (size_t)n;
  }
  buf[len] = '\0';
  *ret = buf;
  *ret_len = len;
  return 0;
}

static long long mono_ms(void)
{
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* fifo-no-writer: a FIFO opened without blocking, read to its writer's
 * close; before its first writer a read returns 0 too, so the end is a
 * read of 0 after data or after poll said the writer hung up.  No data (or
 * no writer) for READ_FIFO_IDLE_MS fails. */
static int read_fifo(int fd, size_t max, char **ret, size_t *ret_len, struct error *err)
{
  size_t cap = 4096, len = 0;
  char *buf = xmalloc(cap + 1);
  long long deadline = mono_ms() + READ_FIFO_IDLE_MS;
  bool hup = false;

  for (;;) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    long long left;
    ssize_t n;

    if (len == cap && grow_buf(&buf, &cap, max, err) < 0)
      return -1;
    n = read(fd, buf + len, cap - len);
    if (n > 0) {
      len += (size_t)n;
      deadline = mono_ms() + READ_FIFO_IDLE_MS;
      continue;
    }
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && errno != EAGAIN) {
      free(buf);
      return error_errno(err, "read");
    }
    if (n == 0 && (len > 0 || hup))
      break;
    left = deadline - mono_ms();
    if (left <= 0 || poll(&p, 1, (int)left) == 0) {
      free(buf);
      return error_set(err, 0, "a FIFO with nothing written in %d s", READ_FIFO_IDLE_MS / 1000);
    }
    hup = (p.revents & (POLLHUP | POLLIN)) == POLLHUP;
  }
  buf[len] = '\0';
  *ret = buf;
  *ret_len = len;
  return 0;
}

int read_file_at(int dirfd, const char *path, size_t max, char **ret, size_t *ret_len,
                 struct error *err)
{
  /* not blocking in open: a FIFO nobody writes (fifo-no-writer) */
  int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  struct stat st;
  int r;

  if (fd < 0)
    return error_errno(err, "open `%s`", path);
  if (fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode)) {
    r = read_fifo(fd, max, ret, ret_len, err);
  } else {
    if (!S_ISREG(st.st_mode)) /* a device: as it was opened before */
      fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    r = read_fd_all(fd, max, ret, ret_len, err);
  }
  close(fd);
  if (r < 0)
    return error_prefix(err, "read `%s`", path);
  return 0;
}

int read_own_file_at(int dirfd, const char *name, size_t max, char **ret, size_t *ret_len,
                     struct error *err)
{
  /* O_NONBLOCK: a FIFO planted there is not waited for in the open */
  cleanup_close int fd =
      openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK);
  struct stat st;

  if (fd < 0 && errno == ELOOP)
    return error_set(err, ELOOP, "read `%s`: a symbolic link, not the runtime's file", name);
  if (fd < 0)
    return error_errno(err, "open `%s`", name);
  if (fstat(fd, &st) < 0)
    return error_errno(err, "read `%s`", name);
  if (!S_ISREG(st.st_mode))
    return error_set(err, EINVAL, "read `%s`: not a regular file", name);
  if ((uint64_t)st.st_size > max)
    return error_set(err, EFBIG, "read `%s`: larger than %zu bytes", name, max);
  if (read_fd_all(fd, max, ret, ret_len, err) < 0)
    return error_prefix(err, "read `%s`", name);
  return 0;
}

static int write_atomic(int dirfd, const char *name, const char *data, size_t len, mode_t mode,
                        struct error *err)
{
  char tmp[PATH_MAX];
  int fd;
  size_t off = 0;

  snprintf(tmp, sizeof tmp, ".%s.tmp", name);
  fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
  if (fd < 0)
    return error_errno(err, "write `%s`", name);
  while (off < len) {
    ssize_t n = write(fd, data + off, len - off);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      error_errno(err, "write `%s`", name);
      close(fd);
      unlinkat(dirfd, tmp, 0);
      return -1;
    }
    off += (size_t)n;
  }
  close(fd);
  if (renameat(dirfd, tmp, dirfd, name) < 0) {
    error_errno(err, "rename `%s`", name);
    unlinkat(dirfd, tmp, 0);
    return -1;
  }
  return 0;
}

int write_file_atomic_at(int dirfd, const char *name, const char *data, size_t len,
                         struct error *err)
{
  return write_atomic(dirfd, name, data, len, 0600, err);
}

int write_file_path(const char *path, const char *data, size_t len, struct error *err)
{
  cleanup_free char *dir = xstrdup(path);
  char *slash = strrchr(dir, '/');
  const char *base = path;
  int dfd, r;

  if (slash != NULL) {
    base = path + (slash - dir) + 1;
    if (slash == dir)
      slash[1] = '\0';
    else
      *slash = '\0';
    dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  } else {
    dfd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  }
  if (dfd < 0)
    return error_errno(err, "open directory of `%s`", path);
  /* 0666 less the umask (0644 as a rule), as runc writes its pid files:
   * a monitor that is not root may read them */
  r = write_atomic(dfd, base, data, len, 0666, err);
  close(dfd);
  if (r < 0)
    return error_prefix(err, "`%s`", path);
  return 0;
}

char *path_absolute(const char *path)
{
  char cwd[PATH_MAX];

  if (path[0] == '/')
    return xstrdup(path);
  if (getcwd(cwd, sizeof cwd) == NULL)
    return xstrdup(path);
  if (strcmp(path, ".") == 0)
    return xstrdup(cwd);
  return xfmt("%s/%s", strcmp(cwd, "/") == 0 ? "" : cwd, path);
}

static int cmp_int(const void *x, const void *y)
{
  return *(const int *)x - *(const int *)y;
}

void close_fds_except(int from, int *keep, size_t n)
{
  qsort(keep, n, sizeof keep[0], cmp_int);
  for (size_t i = 0; i < n; i++) {
    if (keep[i] < from)
      continue;
    if (keep[i] > from)
      syscall(SYS_close_range, (unsigned)from, (unsigned)keep[i] - 1, 0);
    from = keep[i] + 1;
  }
  syscall(SYS_close_range, (unsigned)from, ~0U, 0);
}

bool fs_dir_has_entries(int dirfd)
{
  int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *d = fd < 0 ? NULL : fdopendir(fd);
  struct dirent *de;
  bool any = false;

  if (d == NULL) {
    if (fd >= 0)
      close(fd);
    return true;
  }
  while (!any && (de = readdir(d)) != NULL)
    any = strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
  closedir(d);
  return any;
}
