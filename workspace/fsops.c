/* fsops.c - file-system helpers of the workspace module: directory listing,
 * content comparison, bounded tree walks, the layer copy used by snapshots,
 * and the openat2() resolver commit uses on the host directory.
 *
 * Everything here works below directory fds and never follows a symlink: the
 * trees walked are written by the agent (upper, snapshots) or shared with the
 * operator (the host dir). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "common/util.h"
#include "workspace/internal.h"

enum ws_ftype ws_mode_type(mode_t m)
{
  if (S_ISREG(m))
    return WS_T_FILE;
  if (S_ISDIR(m))
    return WS_T_DIR;
  if (S_ISLNK(m))
    return WS_T_SYMLINK;
  return WS_T_OTHER;
}

static int name_cmp(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

int ws_list_dir(int fd, char ***ret, size_t *ret_n)
{
  int dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  char **v = NULL;
  size_t n = 0, cap = 0;
  struct dirent *e;
  DIR *d;

  if (dfd < 0)
    return -1;
  d = fdopendir(dfd);
  if (d == NULL) {
    close(dfd);
    return -1;
  }
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
      continue;
    if (n + 1 >= cap)
      v = xrealloc(v, (cap = cap ? cap * 2 : 16) * sizeof *v);
    v[n++] = xstrdup(e->d_name);
    v[n] = NULL;
    if (n >= WS_MAX_DIR_ENTRIES)
      break;
  }
  closedir(d);
  if (n > 1)
    qsort(v, n, sizeof *v, name_cmp);
  if (v == NULL)
    v = xmalloc0(sizeof *v);
  *ret = v;
  *ret_n = n;
  return 0;
}

int ws_open_dir(int dirfd, const char *name)
{
  return openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

bool ws_same_content(int adir, const char *aname, int bdir, const char *bname, uint64_t size)
{
  cleanup_close int a = openat(adir, aname, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  cleanup_close int b = openat(bdir, bname, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  static char ba[65536], bb[65536];
  uint64_t off = 0;

  if (a < 0 || b < 0)
    return false;
  while (off < size) {
    ssize_t na = pread(a, ba, sizeof ba, (off_t)off), nb;
    if (na <= 0)
      return false;
    nb = pread(b, bb, (size_t)na, (off_t)off);
    if (nb != na || memcmp(ba, bb, (size_t)na) != 0)
      return false;
    off += (uint64_t)na;
  }
  return pread(a, ba, 1, (off_t)off) == 0 && pread(b, bb, 1, (off_t)off) == 0;
}

bool ws_same_link(int adir, const char *aname, int bdir, const char *bname)
{
  char ta[4097], tb[4097];
  ssize_t na = readlinkat(adir, aname, ta, sizeof ta), nb = readlinkat(bdir, bname, tb, sizeof tb);

  return na >= 0 && na == nb && memcmp(ta, tb, (size_t)na) == 0;
}

static void tree_size(int fd, dev_t dev, int depth, uint64_t *files, uint64_t *bytes)
{
  cleanup_strv char **names = NULL;
  size_t n = 0;

  if (depth > WS_MAX_DEPTH || ws_list_dir(fd, &names, &n) < 0)
    return;
  for (size_t i = 0; i < n; i++) {
    struct stat st;
    if (fstatat(fd, names[i], &st, AT_SYMLINK_NOFOLLOW) < 0 || st.st_dev != dev)
      continue;
    if (S_ISREG(st.st_mode)) {
      (*files)++;
      *bytes += (uint64_t)st.st_size;
    } else if (S_ISDIR(st.st_mode)) {
      cleanup_close int sub = ws_open_dir(fd, names[i]);
      if (sub >= 0)
        tree_size(sub, dev, depth + 1, files, bytes);
    }
  }
}

void ws_tree_size(int dirfd, const char *name, uint64_t *ret_files, uint64_t *ret_bytes)
{
  cleanup_close int fd = ws_open_dir(dirfd, name);
  struct stat st;

  *ret_files = 0;
  *ret_bytes = 0;
  if (fd >= 0 && fstat(fd, &st) == 0)
    tree_size(fd, st.st_dev, 0, ret_files, ret_bytes);
}

static int rm_tree(int dirfd, const char *name, dev_t dev, int depth)
{
  cleanup_strv char **names = NULL;
  cleanup_close int fd = -1;
  struct stat st;
  size_t n = 0;

  if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return errno == ENOENT ? 0 : -1;
  if (!S_ISDIR(st.st_mode))
    return unlinkat(dirfd, name, 0) < 0 && errno != ENOENT ? -1 : 0;
  if (st.st_dev != dev || depth > WS_MAX_DEPTH) {
    errno = st.st_dev != dev ? EXDEV : ELOOP;
    return -1;
  }
  fd = ws_open_dir(dirfd, name);
  if (fd < 0 || ws_list_dir(fd, &names, &n) < 0)
    return -1;
  for (size_t i = 0; i < n; i++)
    if (rm_tree(fd, names[i], dev, depth + 1) < 0)
      return -1;
  return unlinkat(dirfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT ? -1 : 0;
}

int ws_rm_tree(int dirfd, const char *name)
{
  struct stat st;

  if (fstat(dirfd, &st) < 0)
    return -1;
  return rm_tree(dirfd, name, st.st_dev, 0);
}

/* --- layer copy ---------------------------------------------------------- */

/* Copy all of in to out: copy_file_range, or read/write where it cannot. */
int ws_copy_data(int in, int out)
{
  char buf[65536];

  for (int i = 0; i < (1 << 24); i++) {
    ssize_t n = copy_file_range(in, NULL, out, NULL, (size_t)1 << 30, 0);
    if (n == 0)
      return 0;
    if (n > 0)
      continue;
    if (errno != EXDEV && errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP)
      return -1;
    break;
  }
  for (;;) { /* plain copy fallback */
    ssize_t n = read(in, buf, sizeof buf), w = 0;
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return (int)n;
    while (w < n) {
      ssize_t k = write(out, buf + w, (size_t)(n - w));
      if (k < 0)
        return -1;
      w += k;
    }
  }
}

/* The overlay markers a layer needs; other xattrs (origin, impure) refer to
 * the live mount and are not copied. */
static void copy_opaque(int sfd, int dfd)
{
  static const char *const names[] = {"trusted.overlay.opaque", "user.overlay.opaque"};
  char v[8];

  for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
    ssize_t n = fgetxattr(sfd, names[i], v, sizeof v);
    if (n > 0)
      fsetxattr(dfd, names[i], v, (size_t)n, 0);
  }
}

static int copy_entry(int src, int dst, const char *name, int depth, struct error *err);

static int copy_dir(int src, int dst, const char *sname, const char *dname, const struct stat *st,
                    int depth, struct error *err)
{
  cleanup_close int sfd = -1, dfd = -1;
  cleanup_strv char **names = NULL;
  struct timespec ts[2] = {st->st_atim, st->st_mtim};
  size_t n = 0;

  if (depth > WS_MAX_DEPTH)
    return error_set(err, ELOOP, "copy `%s`", sname);
  if (mkdirat(dst, dname, 0700) < 0)
    return error_errno(err, "mkdir `%s`", dname);
  sfd = ws_open_dir(src, sname);
  dfd = ws_open_dir(dst, dname);
  if (sfd < 0 || dfd < 0 || ws_list_dir(sfd, &names, &n) < 0)
    return error_errno(err, "open `%s`", sname);
  for (size_t i = 0; i < n; i++)
    if (copy_entry(sfd, dfd, names[i], depth + 1, err) < 0)
      return -1;
  copy_opaque(sfd, dfd);
  if (fchown(dfd, st->st_uid, st->st_gid) < 0 || fchmod(dfd, st->st_mode & 07777) < 0)
    return error_errno(err, "set owner of `%s`", dname);
  futimens(dfd, ts);
  return 0;
}

static int copy_file(int src, int dst, const char *name, const struct stat *st, struct error *err)
{
  cleanup_close int in = openat(src, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  cleanup_close int out = -1;
  struct timespec ts[2] = {st->st_atim, st->st_mtim};

  if (in < 0)
    return error_errno(err, "open `%s`", name);
  out = openat(dst, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (out < 0 || ws_copy_data(in, out) < 0)
    return error_errno(err, "copy `%s`", name);
  if (fchown(out, st->st_uid, st->st_gid) < 0 || fchmod(out, st->st_mode & 07777) < 0)
    return error_errno(err, "set owner of `%s`", name);
  futimens(out, ts);
  return 0;
}

static int copy_entry(int src, int dst, const char *name, int depth, struct error *err)
{
  struct timespec ts[2];
  struct stat st;
  char target[4097];
  ssize_t n;

  if (fstatat(src, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return error_errno(err, "stat `%s`", name);
  ts[0] = st.st_atim, ts[1] = st.st_mtim;
  if (S_ISDIR(st.st_mode))
    return copy_dir(src, dst, name, name, &st, depth, err);
  if (S_ISREG(st.st_mode))
    return copy_file(src, dst, name, &st, err);
  if (S_ISLNK(st.st_mode)) {
    n = readlinkat(src, name, target, sizeof target - 1);
    if (n < 0)
      return error_errno(err, "readlink `%s`", name);
    target[n] = '\0';
    if (symlinkat(target, dst, name) < 0)
      return error_errno(err, "symlink `%s`", name);
  } else if ((S_ISCHR(st.st_mode) && st.st_rdev == makedev(0, 0)) || S_ISFIFO(st.st_mode)) {
    if (mknodat(dst, name, st.st_mode & (S_IFMT | 07777), st.st_rdev) < 0)
      return error_errno(err, "mknod `%s`", name);
  } else {
    return 0; /* devices and sockets are not part of a workspace */
  }
  if (fchownat(dst, name, st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW) < 0)
    return error_errno(err, "set owner of `%s`", name);
  utimensat(dst, name, ts, AT_SYMLINK_NOFOLLOW);
  return 0;
}

int ws_copy_tree(int src, const char *sname, int dst, const char *dname, struct error *err)
{
  struct stat st;

  if (fstatat(src, sname, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
    return error_errno(err, "copy `%s`: not a directory", sname);
  return copy_dir(src, dst, sname, dname, &st, 0, err);
}

/* --- paths ---------------------------------------------------------------- */

int ws_open_beneath(int rootfd, const char *path, int flags, mode_t mode)
{
  struct open_how how = {
      .flags = (uint64_t)(flags | O_CLOEXEC),
      .mode = (flags & O_CREAT) ? mode : 0,
      .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
  };

  if (*path == '\0')
    path = ".";
  for (int i = 0; i < 64; i++) {
    long fd = syscall(SYS_openat2, rootfd, path, &how, sizeof how);
    if (fd >= 0 || errno != EAGAIN)
      return (int)fd;
  }
  return -1;
}

char *ws_split_path(const char *path, const char **ret_base)
{
  const char *slash = strrchr(path, '/');

  if (slash == NULL) {
    *ret_base = path;
    return xstrdup("");
  }
  *ret_base = slash + 1;
  return xstrndup(path, (size_t)(slash - path));
}

char *ws_path_encode(const char *s)
{
  char *out = xmalloc(strlen(s) * 3 + 1), *p = out;

  for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
    if (*c < 0x21 || *c > 0x7e || *c == '%' || *c == '"' || *c == '\\')
      p += sprintf(p, "%%%02x", *c);
    else
      *p++ = (char)*c;
  }
  *p = '\0';
  return out;
}

static int hexval(char c)
{
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

char *ws_path_decode(const char *s)
{
  char *out = xmalloc(strlen(s) + 1), *p = out;

  for (; *s; s++) {
    int h, l;
    if (*s == '%' && (h = hexval(s[1])) >= 0 && (l = hexval(s[2])) >= 0 && (h || l)) {
      *p++ = (char)(h * 16 + l);
      s += 2;
    } else {
      *p++ = *s;
    }
  }
  *p = '\0';
  return out;
}

void ws_changes_push(struct ws_changes *c, const struct ws_change *ch)
{
  if (c->n == c->cap)
    c->v = xrealloc(c->v, (c->cap = c->cap ? c->cap * 2 : 32) * sizeof *c->v);
  c->v[c->n++] = *ch;
}
