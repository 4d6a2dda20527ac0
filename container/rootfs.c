/* rootfs.c - the root of the container: propagation, the rootfs bind,
 * pivot_root, masked and read-only paths, the read-only root.
 *
 * rootfs_setup() runs in the init's new mount namespace, still seeing the
 * host's tree; rootfs_pivot() switches root; rootfs_finalize() then works
 * only inside the new root, through fds resolved in it (safepath.h).
 */
#include "container/setup.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "common/util.h"
#include "container/mounts.h"
#include "container/sync.h"
#include "os/procfs.h"
#include "os/safepath.h"

static int root_propagation(const struct setup_ctx *ctx, unsigned long *ret, struct error *err)
{
  const char *p = ctx->config->linux != NULL ? ctx->config->linux->rootfs_propagation : NULL;

  *ret = 0;
  if (p == NULL || *p == '\0')
    return 0;
  if (mount_propagation_parse(p, ret, err) < 0)
    return error_prefix(err, "config.json: linux.rootfsPropagation");
  return 0;
}

/* Undo mountinfo's octal escapes ("\040" = space) in place. */
static void unescape(char *s)
{
  char *w = s;

  for (char *r = s; *r != '\0'; r++, w++) {
    if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' && r[3] >= '0' &&
        r[3] <= '7') {
      *w = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
      r += 3;
    } else {
      *w = *r;
    }
  }
  *w = '\0';
}

/* The mount point (5th field of mountinfo) that contains `path`. */
static char *containing_mount(char *mountinfo, const char *path)
{
  char *best = NULL, *save = NULL;
  size_t best_len = 0;

  for (char *l = strtok_r(mountinfo, "\n", &save); l != NULL; l = strtok_r(NULL, "\n", &save)) {
    char *f = l, *mp;
    size_t n;

    for (int i = 0; i < 4 && f != NULL; i++)
      f = strchr(f, ' ') != NULL ? strchr(f, ' ') + 1 : NULL;
    if (f == NULL)
      continue;
    mp = f;
    *strchrnul(mp, ' ') = '\0';
    unescape(mp);
    n = strlen(mp);
    if (n >= best_len && str_has_prefix(path, mp) &&
        (path[n] == '/' || path[n] == '\0' || strcmp(mp, "/") == 0)) {
      best = mp;
      best_len = n;
    }
  }
  return best != NULL ? xstrdup(best) : NULL;
}

static int mount_holding_private(const char *path, struct error *err)
{
  cleanup_free char *info = NULL;
  cleanup_free char *mp = NULL;

  if (procfs_read_all("self/mountinfo", &info, err) < 0)
    return -1;
  mp = containing_mount(info, path);
  if (mp == NULL)
    return error_set(err, ENOENT, "no mount contains `%s`", path);
  if (mount(NULL, mp, NULL, MS_PRIVATE, NULL) < 0)
    return error_errno(err, "make `%s` private", mp);
  return 0;
}

/* pivot_root(2) refuses a new root that is shared or whose parent mount is,
 * and an unbindable mount cannot be bound at all: unless the propagation
 * given to "/" reached every mount (root_prop_is_tree), make the mount
 * holding the rootfs private first, and the mount *at* the rootfs when it is
 * a mount point (an engine's overlay: our bind of it would join its peer
 * group), as runc does; the asked propagation is applied to the new "/"
 * after the pivot. */
/* Did the propagation set on "/" at the start (none given: rslave) reach
 * every mount of the new namespace, so that nothing the init mounts can
 * propagate out?  Not for a shared or unbindable one, nor for a private or
 * slave one that is not recursive: it leaves a rootfs below another mount in
 * the caller's peer group (its /proc, /dev... appeared in the caller's
 * namespace and pivot_root failed: rootfs-propagation-leak). */
static bool root_prop_is_tree(unsigned long prop)
{
  return prop == 0 || ((prop & MS_REC) && (prop & (MS_SLAVE | MS_PRIVATE)));
}

static int parent_mount_private(const char *rootfs, struct error *err)
{
  cleanup_free char *parent = xstrdup(rootfs);
  char *slash = strrchr(parent, '/');

  if (slash != NULL && slash != parent)
    *slash = '\0';
  if (mount_holding_private(parent, err) < 0)
    return -1;
  return mount_holding_private(rootfs, err);
}

/* The mount id of the mount an fd is on (statx STATX_MNT_ID), or -1. */
static int mount_id_of(int fd)
{
  struct statx stx;

  if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &stx) < 0 ||
      !(stx.stx_mask & STATX_MNT_ID))
    return -1;
  return (int)stx.stx_mnt_id;
}

struct mount_pair {
  int id, parent;
};

static int by_id(const void *a, const void *b)
{
  int x = ((const struct mount_pair *)a)->id, y = ((const struct mount_pair *)b)->id;

  return (x > y) - (x < y);
}

static int int_cmp(const void *a, const void *b)
{
  int x = *(const int *)a, y = *(const int *)b;

  return (x > y) - (x < y);
}

/* The mounts of the tree bound at the root (the host's "/": its recursive
 * bind brought every mount below it, a separate /boot, /srv or /var, each
 * with its own flags): their ids, from our mountinfo, found by their parent
 * chain up to the tree's top, in ascending order.  root.readonly made only
 * that top read-only, and the sandbox's agent wrote into the host's other
 * file systems (escape: a host mount below / writable in the sandbox).  A
 * busy host has thousands of mounts (an engine's layers): sorted, each pass
 * is n log n, and there are as many passes as the tree is deep. */
static int record_host_submounts(struct setup_ctx *ctx, struct error *err)
{
  cleanup_free char *info = NULL;
  int top = mount_id_of(ctx->rootfd);
  size_t n = 0, cap = 0;
  struct mount_pair *m = NULL;
  bool *in = NULL;
  char *save = NULL;

  if (top < 0)
    return error_errno(err, "read-only root: the mount id of `/`");
  if (procfs_read_all("self/mountinfo", &info, err) < 0)
    return error_prefix(err, "read-only root");
  for (char *l = strtok_r(info, "\n", &save); l != NULL; l = strtok_r(NULL, "\n", &save)) {
    struct mount_pair p;
    if (sscanf(l, "%d %d", &p.id, &p.parent) != 2)
      continue;
    if (n == cap) {
      cap = cap ? cap * 2 : 64;
      m = xrealloc(m, cap * sizeof *m);
    }
    m[n++] = p;
  }
  if (n > 0)
    qsort(m, n, sizeof *m, by_id);
  in = xmalloc0((n ? n : 1) * sizeof *in);
  for (bool more = true; more;) {
    more = false;
    for (size_t i = 0; i < n; i++) {
      struct mount_pair key = {.id = m[i].parent};
      const struct mount_pair *up;
      if (in[i] || m[i].id == top)
        continue;
      up = m[i].parent == top ? NULL : bsearch(&key, m, n, sizeof *m, by_id);
      if (m[i].parent == top || (up != NULL && in[up - m])) {
        in[i] = true;
        more = true;
      }
    }
  }
  ctx->host_submounts = xmalloc0((n ? n : 1) * sizeof *ctx->host_submounts);
  ctx->n_host_submounts = 0;
  for (size_t i = 0; i < n; i++)
    if (in[i])
      ctx->host_submounts[ctx->n_host_submounts++] = m[i].id;
  free(m);
  free(in);
  return 0;
}

/* Each recorded host mount that is still what its mount point shows (not
 * covered by one of the container's: /proc, /dev, /tmp, the hidden
 * directories, the workspace) and is not read-only: made read-only, that
 * mount only (the container's own mounts on top keep theirs). */
static int host_submounts_readonly(struct setup_ctx *ctx, int root, struct error *err)
{
  cleanup_free char *info = NULL;
  char *save = NULL;

  if (ctx->host_submounts == NULL)
    return 0;
  if (procfs_read_all("self/mountinfo", &info, err) < 0)
    return error_prefix(err, "read-only host mounts");
  for (char *l = strtok_r(info, "\n", &save); l != NULL; l = strtok_r(NULL, "\n", &save)) {
    char point[PATH_MAX], opts[1024];
    int id, parent;
    bool mine = false, ro = false;
    cleanup_close int fd = -1;
    if (sscanf(l, "%d %d %*s %*s %4095s %1023s", &id, &parent, point, opts) != 4)
      continue;
    mine = bsearch(&id, ctx->host_submounts, ctx->n_host_submounts, sizeof id, int_cmp) != NULL;
    for (char *o = opts, *s2 = NULL; mine && (o = strtok_r(o, ",", &s2)) != NULL; o = NULL)
      ro = ro || streq(o, "ro");
    if (!mine || ro)
      continue;
    unescape(point);
    fd = safe_openat(root, point, O_PATH | O_NOFOLLOW, 0, err);
    if (fd < 0) {
      error_clear(err); /* below one of ours (/run, /home): not reachable */
      continue;
    }
    if (mount_id_of(fd) != id)
      continue; /* covered by one of ours */
    if (mnt_setattr(fd, false, MOUNT_ATTR_RDONLY, 0, 0, point, err) < 0)
      return error_prefix(err, "read-only host mount `%s`", point);
  }
  return 0;
}

/* Bind the rootfs onto itself (recursively) so that it is a mount point
 * pivot_root can use; the attached mount's fd becomes ctx->rootfd. */
static int bind_rootfs(struct setup_ctx *ctx, const char *real, struct error *err)
{
  cleanup_close int target = open(real, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  cleanup_close int tree = -1;

  if (target < 0)
    return error_errno(err, "open rootfs `%s`", real);
  tree = mnt_clone(AT_FDCWD, real, true, real, err);
  if (tree < 0)
    return -1;
  if (mnt_attach(tree, target, real, real, err) < 0)
    return -1;
  ctx->rootfd = take_fd(&tree);
  return 0;
}

/* A missing process.cwd is created (0755, owned by root), as runc and crun
 * do: after the mounts, so that it lands in the mount that covers it, and
 * resolved inside the root like every other path. */
static int make_cwd(struct setup_ctx *ctx, struct error *err)
{
  const struct oci_process *p = ctx->config->process;
  int fd;

  if (p == NULL || p->cwd == NULL || p->cwd[0] == '\0' || strcmp(p->cwd, "/") == 0)
    return 0;
  fd = safe_mkdir_all(ctx->rootfd, p->cwd, 0755, err);
  if (fd < 0)
    return error_prefix(err, "process.cwd `%s`", p->cwd);
  close(fd);
  return 0;
}

/* The workspace image's detached mount (spawn.h), on its host path in our
 * mount namespace (rslave by now: nothing reaches the host): the overlay's
 * upperdir names it.  The pivot takes it out of the container's tree.  A
 * late one is taken from the parent here first (WS_FS). */
int rootfs_attach_ws_fs(struct setup_ctx *ctx, struct error *err)
{
  int target;

  if (ctx->ws_fs_path == NULL)
    return 0;
  if (ctx->ws_fs_late) {
    if (sync_expect(ctx->sync_sock, SYNC_WS_FS, &ctx->ws_fs_fd, err) < 0)
      return error_prefix(err, "workspace image");
    ctx->ws_fs_late = false;
    if (ctx->ws_fs_fd < 0)
      return error_set(err, EBADF, "workspace image: no mount from the runtime");
  }
  target = open(ctx->ws_fs_path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (target < 0)
    return error_errno(err, "workspace image: open `%s`", ctx->ws_fs_path);
  if (mnt_attach(ctx->ws_fs_fd, target, "the workspace image", ctx->ws_fs_path, err) < 0) {
    close(target);
    return -1;
  }
  close(target);
  close(ctx->ws_fs_fd);
  ctx->ws_fs_path = NULL;
  return 0;
}

int rootfs_setup(struct setup_ctx *ctx, struct error *err)
{
  cleanup_free char *real = NULL;
  unsigned long prop;

  if (root_propagation(ctx, &prop, err) < 0)
    return -1;
  /* nothing we mount may propagate back to the host (default rslave) */
  if (mount(NULL, "/", NULL, prop != 0 ? prop : MS_SLAVE | MS_REC, NULL) < 0)
    return error_errno(err, "set propagation of `/`");
  real = realpath(ctx->rootfs, NULL);
  if (real == NULL)
    return error_errno(err, "rootfs `%s`", ctx->rootfs);
  if (!root_prop_is_tree(prop) && parent_mount_private(real, err) < 0)
    return error_prefix(err, "rootfs `%s`", real);
  /* a late image is attached where the mounts reach it (mounts_setup) */
  if (bind_rootfs(ctx, real, err) < 0 ||
      (ctx->config->root_readonly && streq(real, "/") && record_host_submounts(ctx, err) < 0) ||
      (!ctx->ws_fs_late && rootfs_attach_ws_fs(ctx, err) < 0))
    return -1;
  if (mounts_setup(ctx, err) < 0 || rootfs_attach_ws_fs(ctx, err) < 0 ||
      devices_setup(ctx, err) < 0)
    return -1;
  if (ctx->config->process != NULL && ctx->config->process->terminal && console_setup(ctx, err) < 0)
    return -1;
  return make_cwd(ctx, err);
}

/* pivot_root(".", "."): the old root ends up stacked on the new one.  We
 * step onto the old root through an fd taken before the pivot (what "."
 * means right after pivot_root is not something the kernel promises), make
 * it rslave so that detaching it cannot propagate to the host, and detach. */
static int pivot(int rootfd, struct error *err)
{
  cleanup_close int oldroot = open("/", O_DIRECTORY | O_RDONLY | O_CLOEXEC);

  if (oldroot < 0)
    return error_errno(err, "open old root");
  if (fchdir(rootfd) < 0)
    return error_errno(err, "chdir to rootfs");
  if (syscall(SYS_pivot_root, ".", ".") < 0)
    return error_errno(err, "pivot_root");
  if (fchdir(oldroot) < 0)
    return error_errno(err, "chdir to old root");
  if (mount(NULL, ".", NULL, MS_SLAVE | MS_REC, NULL) < 0)
    return error_errno(err, "make old root slave");
  if (umount2(".", MNT_DETACH) < 0)
    return error_errno(err, "detach old root");
  return 0;
}

/* --no-pivot leaves the caller's tree below the chroot, and the kernel lets
 * a nested user namespace mount a fresh procfs (or sysfs) wherever a fully
 * visible one is in the mount namespace: every procfs and sysfs mount
 * outside the rootfs is detached first (covered by an empty tmpfs where that
 * is refused), as runc does.  Only in our mount namespace (rslave first). */
static int hide_outer_procfs(const char *rootfs, struct error *err)
{
  cleanup_free char *info = NULL;
  cleanup_free char *real = realpath(rootfs, NULL);
  char *save = NULL;

  if (real == NULL)
    return error_errno(err, "rootfs `%s`", rootfs);
  if (procfs_read_all("self/mountinfo", &info, err) < 0)
    return -1;
  for (char *l = strtok_r(info, "\n", &save); l != NULL; l = strtok_r(NULL, "\n", &save)) {
    char *f[5], *sep = strstr(l, " - "), *type, *p = l;
    int i;

    if (sep == NULL)
      continue;
    *sep = '\0';
    type = sep + 3;
    *strchrnul(type, ' ') = '\0';
    /* id parent major:minor root mount-point ... */
    for (i = 0; i < 5 && p != NULL; i++) {
      f[i] = p;
      p = strchr(p, ' ');
      if (p != NULL)
        *p++ = '\0';
    }
    if (i < 5)
      continue;
    if ((strcmp(type, "proc") != 0 && strcmp(type, "sysfs") != 0) || strcmp(f[3], "/") != 0)
      continue;
    unescape(f[4]);
    if (path_is_below(f[4], real))
      continue;
    if (mount(NULL, f[4], NULL, MS_SLAVE | MS_REC, NULL) < 0)
      continue; /* gone with a mount above it */
    if (umount2(f[4], MNT_DETACH) == 0)
      continue;
    if ((errno != EINVAL && errno != EPERM) ||
        mount("tmpfs", f[4], "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=0,mode=0555") < 0)
      return error_errno(err, "--no-pivot: hide `%s` (%s)", f[4], type);
  }
  return 0;
}

/* --no-pivot: move the rootfs mount onto "/" and chroot into it. */
static int move_root(int rootfd, struct error *err)
{
  if (fchdir(rootfd) < 0)
    return error_errno(err, "chdir to rootfs");
  if (mount(".", "/", NULL, MS_MOVE, NULL) < 0)
    return error_errno(err, "move rootfs onto `/`");
  if (chroot(".") < 0)
    return error_errno(err, "chroot to rootfs");
  return 0;
}

int rootfs_pivot(struct setup_ctx *ctx, struct error *err)
{
  unsigned long prop;

  if (root_propagation(ctx, &prop, err) < 0)
    return -1;
  if (ctx->no_pivot && hide_outer_procfs(ctx->rootfs, err) < 0)
    return -1;
  if ((ctx->no_pivot ? move_root(ctx->rootfd, err) : pivot(ctx->rootfd, err)) < 0)
    return -1;
  if (chdir("/") < 0)
    return error_errno(err, "chdir to `/`");
  /* a recursive slave or private one reached every mount before the config
   * mounts were made (rootfs_setup): given again here it took from each its
   * own propagation (mount-propagation-kept) */
  if (root_prop_is_tree(prop))
    return 0;
  if (mount(NULL, "/", NULL, prop, NULL) < 0)
    return error_errno(err, "set propagation of `/` to `%s`",
                       ctx->config->linux->rootfs_propagation);
  if ((prop & MS_REC) && mounts_propagation_again(ctx, err) < 0)
    return error_prefix(err, "rootfsPropagation `%s`", ctx->config->linux->rootfs_propagation);
  return 0;
}

/* readonlyPaths: a recursive bind of the path onto itself, read-only; other
 * flags (nosuid, nodev, noexec, locked ones) are left as they are. */
static int readonly_path(int root, const char *path, struct error *err)
{
  cleanup_close int fd = safe_openat(root, path, O_PATH, 0, err);
  cleanup_close int tree = -1;

  if (fd < 0 && err->code == ENOENT) {
    error_clear(err);
    return 0;
  }
  if (fd < 0)
    return error_prefix(err, "readonly path");
  tree = mnt_clone(fd, "", true, path, err);
  if (tree < 0 || mnt_setattr(tree, true, MOUNT_ATTR_RDONLY, 0, 0, path, err) < 0)
    return error_prefix(err, "readonly path");
  return mnt_attach(tree, fd, path, path, err);
}

/* CVE-2025-31133: the container's /dev/null may have been replaced by a
 * symlink to a procfs file (or deleted); masking with it would then expose
 * that file writable (or mask nothing).  Open it without following links
 * and insist on the real character device 1:3; fail hard otherwise. */
static int open_dev_null(int root, struct error *err)
{
  int fd = safe_openat(root, "/dev/null", O_PATH | O_NOFOLLOW, 0, err);
  struct stat st;

  if (fd < 0)
    return error_prefix(err, "masked paths: need /dev/null");
  if (fstat(fd, &st) < 0 || !S_ISCHR(st.st_mode) || st.st_rdev != makedev(1, 3)) {
    close(fd);
    return error_set(err, 0,
                     "masked paths: `/dev/null` is not the null device (possible attack, "
                     "CVE-2025-31133)");
  }
  return fd;
}

static int mask_dir(int fd, const char *path, struct error *err)
{
  const uint64_t attr =
      MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;
  cleanup_close int mfd = mnt_new_fs("tmpfs", "tmpfs", "size=0,mode=0555", NULL, 0, attr, err);

  if (mfd < 0)
    return error_prefix(err, "mask `%s`", path);
  return mnt_attach(mfd, fd, "tmpfs", path, err);
}

/* maskedPaths: directories get an empty read-only tmpfs, anything else the
 * verified /dev/null; missing paths are skipped. */
static int mask_path(int root, const char *path, int *nullfd, struct error *err)
{
  cleanup_close int fd = safe_openat(root, path, O_PATH, 0, err);
  cleanup_close int check = -1;
  struct stat st;

  if (fd < 0 && err->code == ENOENT) {
    error_clear(err);
    return 0;
  }
  if (fd < 0 || fstat(fd, &st) < 0)
    return fd < 0 ? error_prefix(err, "masked path") : error_errno(err, "stat `%s`", path);
  if (S_ISDIR(st.st_mode))
    return mask_dir(fd, path, err);
  if (*nullfd < 0 && (*nullfd = open_dev_null(root, err)) < 0)
    return -1;
  if (mnt_bind_fd(*nullfd, fd, false, "/dev/null", path, err) < 0)
    return -1;
  /* check what is now visible at the path, as bubblewrap does */
  check = safe_openat(root, path, O_PATH, 0, err);
  if (check < 0 || fstat(check, &st) < 0 || !S_ISCHR(st.st_mode) || st.st_rdev != makedev(1, 3))
    return error_set(err, 0, "mask `%s`: not masked after mounting /dev/null", path);
  return 0;
}

int rootfs_finalize(struct setup_ctx *ctx, struct error *err)
{
  const struct oci_linux *l = ctx->config->linux;
  cleanup_close int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  cleanup_close int nullfd = -1;

  if (root < 0)
    return error_errno(err, "open `/`");
  for (size_t i = 0; l != NULL && l->readonly_paths != NULL && l->readonly_paths[i]; i++)
    if (readonly_path(root, l->readonly_paths[i], err) < 0)
      return -1;
  for (size_t i = 0; l != NULL && l->masked_paths != NULL && l->masked_paths[i]; i++)
    if (mask_path(root, l->masked_paths[i], &nullfd, err) < 0)
      return -1;
  /* root.readonly: only the top mount, like MS_REMOUNT|MS_BIND|MS_RDONLY;
   * mount_setattr keeps the locked nosuid/nodev/noexec as they are */
  if (ctx->config->root_readonly && mnt_setattr(root, false, MOUNT_ATTR_RDONLY, 0, 0, "/", err) < 0)
    return error_prefix(err, "read-only root");
  /* and, for the host's own "/", the host's mounts below it */
  {
    int r = host_submounts_readonly(ctx, root, err);
    free(ctx->host_submounts);
    ctx->host_submounts = NULL;
    if (r < 0)
      return -1;
  }
  if (ctx->dev_readonly) {
    /* only /dev itself: /dev/pts, /dev/shm and /dev/mqueue keep their own */
    cleanup_close int dev = safe_openat(root, "/dev", O_PATH | O_DIRECTORY | O_NOFOLLOW, 0, err);
    if (dev < 0 || mnt_setattr(dev, false, MOUNT_ATTR_RDONLY, 0, 0, "/dev", err) < 0)
      return error_prefix(err, "read-only /dev");
  }
  return 0;
}
