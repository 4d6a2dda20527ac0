/* devices.c - the container's /dev: default devices, linux.devices, the
 * /dev/ptmx, /dev/fd, /dev/std* and /dev/core links.
 *
 * As runc: nothing is created when the config bind-mounts /dev from the
 * host; otherwise (a tmpfs /dev, or the image's own /dev) the nodes are made
 * with mknod, or — in a new user namespace, or when mknod gets EPERM — as an
 * empty file with the host's node bind-mounted on it.
 *
 * CVE-2026-41579: the image's /dev must be a real directory, never a
 * symlink, and every node is created relative to that directory fd, so no
 * symlink in the image can make us create, chown or chmod a host file.
 */
#include "container/mounts.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "common/util.h"
#include "os/procfs.h"
#include "os/safepath.h"

struct dev_spec {
  const char *path; /* in the container (and on the host for bind mode) */
  char type;
  unsigned int major, minor;
  mode_t mode;
  uid_t uid;
  gid_t gid;
};

static const struct dev_spec default_devices[] = {
    {"/dev/null", 'c', 1, 3, 0666, 0, 0},    {"/dev/zero", 'c', 1, 5, 0666, 0, 0},
    {"/dev/full", 'c', 1, 7, 0666, 0, 0},    {"/dev/random", 'c', 1, 8, 0666, 0, 0},
    {"/dev/urandom", 'c', 1, 9, 0666, 0, 0}, {"/dev/tty", 'c', 5, 0, 0666, 0, 0},
};

static const struct {
  const char *target;
  const char *name;
} dev_links[] = {
    {"/proc/self/fd", "fd"},
    {"/proc/self/fd/0", "stdin"},
    {"/proc/self/fd/1", "stdout"},
    {"/proc/self/fd/2", "stderr"},
};

static mode_t type_bits(char t)
{
  switch (t) {
  case 'c':
  case 'u':
    return S_IFCHR;
  case 'b':
    return S_IFBLK;
  case 'p':
    return S_IFIFO;
  default:
    return 0;
  }
}

/* The directory that will hold `path`, resolved with /dev as its root when
 * the path is under /dev (so nothing can climb out of it), else the rootfs. */
static int parent_dir(struct setup_ctx *ctx, int devfd, const char *path, const char **ret_base,
                      struct error *err)
{
  cleanup_free char *dir = xstrdup(path);
  char *slash = strrchr(dir, '/');
  const char *base = strrchr(path, '/') + 1;

  if (*base == '\0' || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
    return error_set(err, EINVAL, "device `%s`: bad path", path);
  *slash = '\0';
  *ret_base = base;
  if (strcmp(dir, "/dev") == 0)
    return openat(devfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (str_has_prefix(dir, "/dev/"))
    return safe_mkdir_all(devfd, dir + strlen("/dev/"), 0755, err);
  return safe_mkdir_all(ctx->rootfd, dir, 0755, err);
}

/* What is at a device's name before its node is made. */
enum dev_name { DEV_NAME_FREE, DEV_NAME_SAME, DEV_NAME_MOUNTED };

/* Make room for a new node: keep nothing but a matching node, or what a
 * config mount put there (docker's -v /dev/urandom:/dev/random): that is the
 * engine's choice, left as it is, unchowned, as runc leaves it (mknod's
 * EEXIST); removing it failed create with EBUSY (dev-bind-over-device). */
static int clear_name(int parent, const char *base, const struct dev_spec *d, enum dev_name *ret,
                      struct error *err)
{
  struct statx stx;

  *ret = DEV_NAME_FREE;
  if (statx(parent, base, AT_SYMLINK_NOFOLLOW, STATX_TYPE, &stx) < 0)
    return errno == ENOENT ? 0 : error_errno(err, "stat device `%s`", d->path);
  if ((stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) &&
      (stx.stx_attributes & STATX_ATTR_MOUNT_ROOT)) {
    *ret = DEV_NAME_MOUNTED;
    return 0;
  }
  if ((stx.stx_mode & S_IFMT) == type_bits(d->type) &&
      makedev(stx.stx_rdev_major, stx.stx_rdev_minor) == makedev(d->major, d->minor)) {
    *ret = DEV_NAME_SAME;
    return 0;
  }
  if (S_ISDIR(stx.stx_mode))
    return error_set(err, EISDIR, "device `%s`: a directory is in the way", d->path);
  if (unlinkat(parent, base, 0) < 0)
    return error_errno(err, "remove `%s`", d->path);
  return 0;
}

static int mknod_device(int parent, const char *base, const struct dev_spec *d, struct error *err)
{
  cleanup_close int fd = -1;
  enum dev_name name;
  mode_t old;
  int r;

  if (clear_name(parent, base, d, &name, err) < 0)
    return -1;
  if (name == DEV_NAME_MOUNTED)
    return 0;
  if (name == DEV_NAME_FREE) {
    old = umask(0);
    r = mknodat(parent, base, type_bits(d->type) | (d->mode & 07777), makedev(d->major, d->minor));
    umask(old);
    if (r < 0)
      return error_errno(err, "mknod `%s`", d->path);
  }
  fd = openat(parent, base, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return error_errno(err, "open `%s`", d->path);
  if (fchownat(fd, "", d->uid, d->gid, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
    return error_errno(err, "chown `%s`", d->path);
  return 0;
}

/* The host's node bind-mounted onto an empty file (user namespaces),
 * nosuid and noexec. */
static int bind_device(int parent, const char *base, const struct dev_spec *d, struct error *err)
{
  cleanup_close int src = open(d->path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  cleanup_close int target = -1, tree = -1;
  struct stat st;
  int fd;

  if (src < 0)
    return error_errno(err, "open host device `%s`", d->path);
  if (fstat(src, &st) < 0 || (st.st_mode & S_IFMT) != type_bits(d->type) ||
      st.st_rdev != makedev(d->major, d->minor))
    return error_set(err, ENODEV, "host `%s` is not device %c %u:%u", d->path, d->type, d->major,
                     d->minor);
  if (fstatat(parent, base, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode) &&
      unlinkat(parent, base, 0) < 0)
    return error_errno(err, "remove `%s`", d->path);
  fd = openat(parent, base, O_CREAT | O_NOFOLLOW | O_WRONLY | O_NOCTTY | O_CLOEXEC, 0644);
  if (fd < 0 && errno != EEXIST && errno != ENXIO && errno != EPERM)
    return error_errno(err, "create `%s`", d->path);
  if (fd >= 0)
    close(fd);
  target = openat(parent, base, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (target < 0)
    return error_errno(err, "open `%s`", d->path);
  /* a device node is neither a program nor a set-id one (crun binds them
   * nosuid,noexec too; runc keeps the host mount's flags) */
  tree = mnt_clone(src, "", false, d->path, err);
  if (tree < 0 ||
      mnt_setattr(tree, false, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, 0, 0, d->path, err) < 0)
    return -1;
  return mnt_attach(tree, target, d->path, d->path, err);
}

static int make_device(struct setup_ctx *ctx, int devfd, const struct dev_spec *d,
                       struct error *err)
{
  cleanup_close int parent = -1;
  const char *base = NULL;

  if (type_bits(d->type) == 0)
    return error_set(err, EINVAL, "device `%s`: unknown type `%c`", d->path, d->type);
  if (d->path[0] != '/')
    return error_set(err, EINVAL, "device `%s`: path must be absolute", d->path);
  parent = parent_dir(ctx, devfd, d->path, &base, err);
  if (parent < 0)
    return -1;
  if (d->type == 'p' || !ctx->new_userns) {
    if (mknod_device(parent, base, d, err) == 0)
      return 0;
    if (err->code != EPERM || d->type == 'p')
      return -1;
    error_clear(err);
  }
  return bind_device(parent, base, d, err);
}

static void spec_from_config(const struct oci_device *od, char *path_buf, size_t n,
                             struct dev_spec *ret)
{
  char *clean = path_normalize(od->path);

  snprintf(path_buf, n, "%s", clean);
  free(clean);
  ret->path = path_buf;
  ret->type = od->type;
  ret->major = (unsigned int)od->major;
  ret->minor = (unsigned int)od->minor;
  ret->mode = od->has_file_mode ? (mode_t)od->file_mode : 0666;
  ret->uid = od->has_uid ? od->uid : 0;
  ret->gid = od->has_gid ? od->gid : 0;
}

static bool config_has_device(const struct oci_config *c, const char *path)
{
  for (size_t i = 0; c->linux != NULL && i < c->linux->n_devices; i++) {
    cleanup_free char *p = path_normalize(c->linux->devices[i].path);
    if (strcmp(p, path) == 0)
      return true;
  }
  return false;
}

static int make_links(int devfd, struct error *err)
{
  struct error ignored = {0};
  int kcore;

  if (unlinkat(devfd, "ptmx", 0) < 0 && errno != ENOENT)
    return error_errno(err, "remove `/dev/ptmx`");
  if (symlinkat("pts/ptmx", devfd, "ptmx") < 0)
    return error_errno(err, "symlink `/dev/ptmx`");
  for (size_t i = 0; i < ARRAY_SIZE(dev_links); i++)
    if (symlinkat(dev_links[i].target, devfd, dev_links[i].name) < 0 && errno != EEXIST)
      return error_errno(err, "symlink `/dev/%s`", dev_links[i].name);
  /* runc links /dev/core only when the kernel has /proc/kcore */
  kcore = procfs_open("kcore", O_PATH, &ignored);
  if (kcore >= 0) {
    close(kcore);
    if (symlinkat("/proc/kcore", devfd, "core") < 0 && errno != EEXIST)
      return error_errno(err, "symlink `/dev/core`");
  }
  return 0;
}

/* CVE-2026-41579: /dev of the rootfs must be a directory, not a symlink. */
static int open_dev(struct setup_ctx *ctx, struct error *err)
{
  int fd = safe_walk(ctx->rootfd, "/dev", SAFE_MKDIR, true, err);
  struct stat st;

  if (fd < 0)
    return -1;
  if (fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode)) {
    close(fd);
    return error_set(err, 0, "`/dev` in the rootfs is not a directory (a symlink?)");
  }
  return fd;
}

int devices_setup(struct setup_ctx *ctx, struct error *err)
{
  const struct oci_linux *l = ctx->config->linux;
  cleanup_close int devfd = -1;
  cleanup_strv char **made = NULL;
  size_t n_made = 0;
  bool dev_is_bind = false;

  if (mounts_has_dest(ctx->config, "/dev", &dev_is_bind) && dev_is_bind)
    return 0;
  devfd = open_dev(ctx, err);
  if (devfd < 0)
    return -1;
  /* the paths made, each normalized once (a privileged engine lists every
   * host device: hundreds) */
  made = xmalloc0(((l != NULL ? l->n_devices : 0) + 1) * sizeof *made);
  for (size_t i = 0; l != NULL && i < l->n_devices; i++) {
    char path[4096];
    struct dev_spec d;
    bool twice = false;

    spec_from_config(&l->devices[i], path, sizeof path, &d);
    /* a path given twice: the first entry's node, as runc (its second
     * mknod finds the name taken and leaves it) */
    for (size_t j = 0; j < n_made && !twice; j++)
      twice = strcmp(made[j], d.path) == 0;
    if (twice)
      continue;
    if (make_device(ctx, devfd, &d, err) < 0)
      return error_prefix(err, "linux.devices[%zu]", i);
    made[n_made++] = xstrdup(d.path);
  }
  for (size_t i = 0; i < ARRAY_SIZE(default_devices); i++)
    if (!config_has_device(ctx->config, default_devices[i].path) &&
        make_device(ctx, devfd, &default_devices[i], err) < 0)
      return -1;
  return make_links(devfd, err);
}
