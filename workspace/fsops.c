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
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "common/util.h"
#include "os/procfs.h"
#include "workspace/internal.h"

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif

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

/* Where fd's next data at or after pos begins (size: none); -1 when the
 * file system cannot say. */
static off_t next_data(int fd, off_t pos, off_t size)
{
  off_t d = lseek(fd, pos, SEEK_DATA);

  if (d < 0)
    return errno == ENXIO ? size : -1;
  return d < size ? d : size;
}

static bool same_range(int a, int b, off_t off, off_t end)
{
  static char ba[65536], bb[65536];

  while (off < end) {
    size_t want = (size_t)(end - off) < sizeof ba ? (size_t)(end - off) : sizeof ba;
    ssize_t na = pread(a, ba, want, off), nb;
    if (na <= 0)
      return false;
    nb = pread(b, bb, (size_t)na, off);
    if (nb != na || memcmp(ba, bb, (size_t)na) != 0)
      return false;
    off += na;
  }
  return true;
}

/* Compared where either file has data: what is a hole in both is zeros in
 * both, so a sparse file of huge apparent size costs its data, not its size
 * (an agent's 1 TiB file with one byte must not stall a review). */
bool ws_same_content(int adir, const char *aname, int bdir, const char *bname, uint64_t size)
{
  cleanup_close int a = openat(adir, aname, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  cleanup_close int b = openat(bdir, bname, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  off_t pos = 0, end = (off_t)size;
  struct stat sa, sb;
  char c;

  if (a < 0 || b < 0 || fstat(a, &sa) < 0 || fstat(b, &sb) < 0 || sa.st_size != end ||
      sb.st_size != end)
    return false;
  while (pos < end) {
    off_t da = next_data(a, pos, end), db = next_data(b, pos, end), d, e, ha, hb;
    if (da < 0 || db < 0) {
      if (!same_range(a, b, pos, end))
        return false;
      break;
    }
    d = da < db ? da : db;
    if (d >= end)
      break;
    ha = da == d ? lseek(a, d, SEEK_HOLE) : da;
    hb = db == d ? lseek(b, d, SEEK_HOLE) : db;
    if (ha < 0 || hb < 0)
      return false;
    e = ha < hb ? ha : hb;
    if (e > end || e <= d)
      e = end;
    if (!same_range(a, b, d, e))
      return false;
    pos = e;
  }
  return pread(a, &c, 1, end) == 0 && pread(b, &c, 1, end) == 0;
}

bool ws_same_link(int adir, const char *aname, int bdir, const char *bname)
{
  char ta[4097], tb[4097];
  ssize_t na = readlinkat(adir, aname, ta, sizeof ta), nb = readlinkat(bdir, bname, tb, sizeof tb);

  return na >= 0 && na == nb && memcmp(ta, tb, (size_t)na) == 0;
}

void ws_raise_nofile(void)
{
  static bool done;
  struct rlimit rl;
  char buf[32] = "";
  int fd;

  if (done || getrlimit(RLIMIT_NOFILE, &rl) < 0)
    return;
  done = true;
  fd = open("/proc/sys/fs/nr_open", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    buf[n > 0 ? n : 0] = '\0';
  }
  if (buf[0] >= '1' && buf[0] <= '9') {
    struct rlimit want = {strtoull(buf, NULL, 10), strtoull(buf, NULL, 10)};
    if (want.rlim_max > rl.rlim_max && setrlimit(RLIMIT_NOFILE, &want) == 0)
      return;
  }
  rl.rlim_cur = rl.rlim_max;
  setrlimit(RLIMIT_NOFILE, &rl);
}

struct wlevel {
  int fd;
  char **names;
  size_t n, next;
  size_t path_len;
  char *name; /* of this directory in its parent */
  struct stat st;
};

static void wlevel_free(struct wlevel *v)
{
  if (v->fd >= 0)
    close(v->fd);
  strv_free(v->names);
  free(v->name);
}

int ws_walk(int dirfd, const char *name, const struct ws_walker *w)
{
  struct wlevel *stack = NULL;
  size_t depth = 0, cap = 0, path_cap = 256;
  char *path = xmalloc0(path_cap);
  struct stat st;
  int ret = 0, fd;

  if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode) ||
      (fd = ws_open_dir(dirfd, name)) < 0) {
    free(path);
    return -1;
  }
  stack = xmalloc((cap = 32) * sizeof *stack);
  stack[depth++] = (struct wlevel){.fd = fd, .name = xstrdup(name), .st = st};
  if (ws_list_dir(fd, &stack[0].names, &stack[0].n) < 0)
    ret = -1;
  while (depth > 0 && ret == 0) {
    struct wlevel *p = &stack[depth - 1];
    const char *child;
    int r;
    if (p->next == p->n) {
      struct wlevel done = *p;
      depth--;
      path[done.path_len] = '\0';
      if (depth > 0) {
        struct wlevel *up = &stack[depth - 1];
        path[up->path_len ? up->path_len : 0] = '\0';
        if (w->leave)
          ret = w->leave(w->ctx, up->fd, done.name, done.fd, &done.st, done.path_len ? path : "",
                         depth);
        /* leave() sees path = the parent's; restore the directory's own below */
      } else if (w->leave) {
        ret = w->leave(w->ctx, dirfd, done.name, done.fd, &done.st, "", 0);
      }
      wlevel_free(&done);
      continue;
    }
    child = p->names[p->next++];
    if (w->want_path) {
      size_t need = p->path_len + strlen(child) + 2;
      if (need > path_cap)
        path = xrealloc(path, path_cap = need * 2);
      if (p->path_len)
        sprintf(path + p->path_len, "/%s", child);
      else
        strcpy(path, child);
    }
    if (fstatat(p->fd, child, &st, AT_SYMLINK_NOFOLLOW) < 0)
      continue; /* gone meanwhile */
    r = w->entry(w->ctx, p->fd, child, &st, path, depth);
    if (r < 0) {
      ret = -1;
      break;
    }
    if (r == 0 || !S_ISDIR(st.st_mode) || st.st_dev != stack[0].st.st_dev)
      continue;
    fd = ws_open_dir(p->fd, child);
    if (fd < 0) {
      ret = -1;
      break;
    }
    if (depth == cap)
      stack = xrealloc(stack, (cap *= 2) * sizeof *stack);
    p = NULL; /* stack may have moved */
    stack[depth] = (struct wlevel){
        .fd = fd, .name = xstrdup(child), .st = st, .path_len = w->want_path ? strlen(path) : 0};
    if (ws_list_dir(fd, &stack[depth].names, &stack[depth].n) < 0)
      ret = -1;
    depth++;
  }
  while (depth > 0)
    wlevel_free(&stack[--depth]);
  free(stack);
  free(path);
  return ret;
}

struct size_ctx {
  uint64_t files, bytes;
};

static int size_entry(void *vctx, int dirfd, const char *name, const struct stat *st,
                      const char *path, size_t depth)
{
  struct size_ctx *c = vctx;

  if (S_ISREG(st->st_mode)) {
    c->files++;
    c->bytes += (uint64_t)st->st_size;
  }
  return 1;
}

void ws_tree_size(int dirfd, const char *name, uint64_t *ret_files, uint64_t *ret_bytes)
{
  struct size_ctx c = {0, 0};
  struct ws_walker w = {.entry = size_entry, .ctx = &c};

  ws_walk(dirfd, name, &w);
  *ret_files = c.files;
  *ret_bytes = c.bytes;
}

struct rm_ctx {
  int first_errno;
  dev_t dev;
};

int ws_chmod_fd(int fd, mode_t mode)
{
  struct error e = {0};
  char rel[48];
  int proc;

  if (syscall(SYS_fchmodat2, fd, "", mode, AT_EMPTY_PATH) == 0)
    return 0;
  if (errno != ENOSYS && errno != EINVAL)
    return -1;
  /* kernels before 6.6: through the descriptor's procfs link */
  if ((proc = procfs_root(&e)) < 0)
    return -1;
  snprintf(rel, sizeof rel, "thread-self/fd/%d", fd);
  return fchmodat(proc, rel, mode, 0);
}

/* A directory of ours that its owner may not list or empty: overlayfs makes
 * its work/work mode 0 when a user mounts it, Go's module cache is 0555, an
 * agent can chmod 000 its own.  Without CAP_DAC_OVERRIDE nothing below it
 * could be removed, so it is made 0700 first: through a descriptor of that
 * directory (O_NOFOLLOW, checked to be the inode seen), never by a path a
 * rename could turn into a symlink meanwhile.  When that fails, the walk
 * reports the directory it cannot open. */
static void rm_unlock_dir(int dirfd, const char *name, const struct stat *st)
{
  cleanup_close int fd = -1;
  struct stat now;

  if ((st->st_mode & 0700) == 0700 || st->st_uid != geteuid() || geteuid() == 0)
    return;
  fd = openat(dirfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 || fstat(fd, &now) < 0 || now.st_ino != st->st_ino || now.st_dev != st->st_dev)
    return;
  (void)!ws_chmod_fd(fd, 0700);
}

static int rm_entry(void *vctx, int dirfd, const char *name, const struct stat *st,
                    const char *path, size_t depth)
{
  struct rm_ctx *c = vctx;

  if (S_ISDIR(st->st_mode) && st->st_dev != c->dev) {
    if (c->first_errno == 0)
      c->first_errno = EXDEV; /* another file system mounted here: never entered */
    return 0;
  }
  if (S_ISDIR(st->st_mode)) {
    rm_unlock_dir(dirfd, name, st);
    return 1;
  }
  if (unlinkat(dirfd, name, 0) < 0 && errno != ENOENT && c->first_errno == 0)
    c->first_errno = errno;
  return 0;
}

static int rm_leave(void *vctx, int dirfd, const char *name, int fd, const struct stat *st,
                    const char *path, size_t depth)
{
  struct rm_ctx *c = vctx;

  if (unlinkat(dirfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT && c->first_errno == 0)
    c->first_errno = errno;
  return 0;
}

int ws_rm_tree(int dirfd, const char *name)
{
  struct rm_ctx c = {0};
  struct ws_walker w = {.entry = rm_entry, .leave = rm_leave, .ctx = &c};
  struct stat st, dst;

  if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return errno == ENOENT ? 0 : -1;
  if (!S_ISDIR(st.st_mode))
    return unlinkat(dirfd, name, 0) < 0 && errno != ENOENT ? -1 : 0;
  if (fstat(dirfd, &dst) < 0)
    return -1;
  if (st.st_dev != dst.st_dev) {
    errno = EXDEV;
    return -1;
  }
  c.dev = st.st_dev;
  rm_unlock_dir(dirfd, name, &st);
  if (ws_walk(dirfd, name, &w) < 0 && c.first_errno == 0)
    c.first_errno = errno ? errno : EIO;
  if (c.first_errno) {
    errno = c.first_errno;
    return -1;
  }
  return 0;
}

/* --- layer copy ---------------------------------------------------------- */

/* Copy all of in to out: copy_file_range, or read/write where it cannot. */
/* Bytes [from, to) of in to the same offsets of out: copy_file_range, else
 * pread/pwrite.  A source that shrinks ends the copy early. */
static int copy_range(int in, int out, off_t from, off_t to, bool *cfr)
{
  char buf[65536];

  while (from < to) {
    ssize_t n, w = 0;
    if (*cfr) {
      loff_t i = from, o = from;
      n = copy_file_range(in, &i, out, &o, (size_t)(to - from), 0);
      if (n > 0) {
        from += n;
        continue;
      }
      if (n == 0)
        return 0;
      if (errno != EXDEV && errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP)
        return -1;
      *cfr = false;
    }
    n = pread(in, buf, (size_t)(to - from) < sizeof buf ? (size_t)(to - from) : sizeof buf, from);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return (int)n;
    while (w < n) {
      ssize_t k = pwrite(out, buf + w, (size_t)(n - w), from + w);
      if (k < 0)
        return -1;
      w += k;
    }
    from += n;
  }
  return 0;
}

/* Only the data: holes stay holes (SEEK_DATA / SEEK_HOLE), so a sparse file
 * of huge apparent size written by the agent costs the host its blocks, not
 * its size, when it is snapshotted, committed or moved. */
int ws_copy_data(int in, int out)
{
  struct stat st;
  off_t pos = 0, end;
  bool cfr = true;

  if (fstat(in, &st) < 0)
    return -1;
  end = st.st_size;
  while (pos < end) {
    off_t data = lseek(in, pos, SEEK_DATA), hole;
    if (data < 0 && errno == ENXIO)
      break; /* only a hole is left */
    if (data < 0)
      data = pos, hole = end; /* no SEEK_DATA here: copy it all */
    else if ((hole = lseek(in, data, SEEK_HOLE)) < 0 || hole > end)
      hole = end;
    if (copy_range(in, out, data, hole, &cfr) < 0)
      return -1;
    pos = hole;
  }
  return ftruncate(out, end);
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

/* The walk of a layer copy: dst[d] is the copy of the directory at depth d. */
struct copy_ctx {
  int *dst;
  size_t cap;
  struct error *err;
};

static int copy_other(int src, int dst, const char *name, const struct stat *st, struct error *err)
{
  struct timespec ts[2] = {st->st_atim, st->st_mtim};
  char target[4097];
  ssize_t n;

  if (S_ISLNK(st->st_mode)) {
    n = readlinkat(src, name, target, sizeof target - 1);
    if (n < 0)
      return error_errno(err, "readlink `%s`", name);
    target[n] = '\0';
    if (symlinkat(target, dst, name) < 0)
      return error_errno(err, "symlink `%s`", name);
  } else if ((S_ISCHR(st->st_mode) && st->st_rdev == makedev(0, 0)) || S_ISFIFO(st->st_mode)) {
    if (mknodat(dst, name, st->st_mode & (S_IFMT | 07777), st->st_rdev) < 0)
      return error_errno(err, "mknod `%s`", name);
  } else {
    return 0; /* devices and sockets are not part of a workspace */
  }
  if (fchownat(dst, name, st->st_uid, st->st_gid, AT_SYMLINK_NOFOLLOW) < 0)
    return error_errno(err, "set owner of `%s`", name);
  utimensat(dst, name, ts, AT_SYMLINK_NOFOLLOW);
  return 0;
}

static int copy_entry(void *vctx, int dirfd, const char *name, const struct stat *st,
                      const char *path, size_t depth)
{
  struct copy_ctx *c = vctx;
  int pdst = c->dst[depth - 1];

  if (S_ISREG(st->st_mode))
    return copy_file(dirfd, pdst, name, st, c->err);
  if (!S_ISDIR(st->st_mode))
    return copy_other(dirfd, pdst, name, st, c->err);
  if (mkdirat(pdst, name, 0700) < 0)
    return error_errno(c->err, "mkdir `%s`", name);
  if (depth >= c->cap)
    c->dst = xrealloc(c->dst, (c->cap = (depth + 1) * 2) * sizeof *c->dst);
  c->dst[depth] = ws_open_dir(pdst, name);
  if (c->dst[depth] < 0)
    return error_errno(c->err, "open `%s`", name);
  return 1;
}

static int copy_leave(void *vctx, int dirfd, const char *name, int fd, const struct stat *st,
                      const char *path, size_t depth)
{
  struct copy_ctx *c = vctx;
  struct timespec ts[2] = {st->st_atim, st->st_mtim};
  int dfd = c->dst[depth];
  int r = 0;

  copy_opaque(fd, dfd);
  if (fchown(dfd, st->st_uid, st->st_gid) < 0 || fchmod(dfd, st->st_mode & 07777) < 0)
    r = error_errno(c->err, "set owner of `%s`", name);
  futimens(dfd, ts);
  close(dfd);
  c->dst[depth] = -1;
  return r;
}

int ws_copy_tree(int src, const char *sname, int dst, const char *dname, struct error *err)
{
  struct copy_ctx c = {.cap = 64, .err = err};
  struct ws_walker w = {.entry = copy_entry, .leave = copy_leave, .ctx = &c};
  struct stat st;
  int r;

  if (fstatat(src, sname, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
    return error_errno(err, "copy `%s`: not a directory", sname);
  if (mkdirat(dst, dname, 0700) < 0)
    return error_errno(err, "mkdir `%s`", dname);
  c.dst = xmalloc(c.cap * sizeof *c.dst);
  for (size_t i = 0; i < c.cap; i++)
    c.dst[i] = -1;
  c.dst[0] = ws_open_dir(dst, dname);
  if (c.dst[0] < 0) {
    free(c.dst);
    return error_errno(err, "open `%s`", dname);
  }
  r = ws_walk(src, sname, &w);
  if (r < 0 && err->msg[0] == '\0')
    error_errno(err, "copy `%s`", sname);
  for (size_t i = 0; i < c.cap; i++)
    if (c.dst[i] >= 0)
      close(c.dst[i]);
  free(c.dst);
  return r < 0 ? -1 : 0;
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
