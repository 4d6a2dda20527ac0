/* mounts_cgroup.c - a config mount of type "cgroup" or "cgroup2".
 *
 * On a cgroup v2 host (or for type "cgroup2") this is a cgroup2 mount; in a
 * private cgroup namespace it shows the container's own cgroup as its root.
 * Without the right to mount cgroup2 we bind the container's own directory.
 *
 * On a v1 or hybrid host we do what runc does: a tmpfs at the destination
 * and, for every hierarchy listed in the init's /proc/self/cgroup, the
 * container's own cgroup directory of that hierarchy bound under it ("cpu",
 * "memory", "systemd", "unified", ...), with symlinks for co-mounted
 * controllers ("cpu" -> "cpu,cpuacct").  The directory is the one the
 * runtime's cgroup manager made when it vouches for it (own_dir_tree), else
 * comes from a fresh v1 mount of that hierarchy when we may mount one (it
 * honours a cgroup namespace), else from the host's
 * /sys/fs/cgroup/<hierarchy>.  The tmpfs
 * is made read-only last when the mount asks for "ro".
 */
#include "container/mounts.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "cgroups/cgroup.h"
#include "common/util.h"
#include "os/procfs.h"

#define HOST_CGROUP "/sys/fs/cgroup"
#define MAX_CGROUP_LINES 64

static bool path_is_fs(const char *path, long magic)
{
  struct statfs sfs;

  return statfs(path, &sfs) == 0 && sfs.f_type == magic;
}

/* The path of our cgroup in the hierarchy whose controller field is `ctrls`
 * ("" = the v2 hierarchy), from /proc/self/cgroup; NULL if not listed. */
static char *own_cgroup(const char *table, const char *ctrls)
{
  const char *line = table;

  while (line != NULL && *line != '\0') {
    const char *c1 = strchr(line, ':');
    const char *c2 = c1 != NULL ? strchr(c1 + 1, ':') : NULL;
    const char *end = strchrnul(line, '\n');

    if (c2 != NULL && c2 < end && (size_t)(c2 - c1 - 1) == strlen(ctrls) &&
        strncmp(c1 + 1, ctrls, strlen(ctrls)) == 0)
      return xstrndup(c2 + 1, (size_t)(end - c2 - 1));
    line = *end != '\0' ? end + 1 : NULL;
  }
  return NULL;
}

static int cgroup2(struct setup_ctx *ctx, const struct mount_opts *o, uint64_t set, int target,
                   const char *dest, struct error *err)
{
  cleanup_close int mfd = mnt_new_fs("cgroup2", "cgroup2", o->data, NULL, 0, set, err);
  cleanup_free char *table = NULL;
  cleanup_free char *own = NULL;
  cleanup_free char *host = NULL;

  if (mfd < 0 && err->code == EPERM) {
    /* not allowed to mount cgroup2 here: bind our own cgroup directory */
    error_clear(err);
    if (procfs_read_all("self/cgroup", &table, err) < 0)
      return -1;
    own = own_cgroup(table, "");
    if (own == NULL)
      return error_set(err, ENOENT, "mount `cgroup2` on `%s`: no v2 cgroup in /proc/self/cgroup",
                       dest);
    host = xfmt("%s%s",
                path_is_fs(HOST_CGROUP, CGROUP2_SUPER_MAGIC) ? HOST_CGROUP : HOST_CGROUP "/unified",
                own);
    mfd = mnt_clone(AT_FDCWD, host, true, host, err);
    if (mfd >= 0 && mnt_setattr(mfd, true, set, 0, 0, dest, err) < 0)
      return -1;
  }
  if (mfd < 0)
    return error_prefix(err, "mount on `%s`", dest);
  if (mnt_attach(mfd, target, "cgroup2", dest, err) < 0)
    return -1;
  return mnt_set_propagation(mfd, o->propagation, dest, err);
}

/* A detached tree of our cgroup `own` in hierarchy `ctrls`. */
static int hierarchy_tree(const char *ctrls, const char *dir, const char *own, bool may_mount,
                          struct error *err)
{
  cleanup_free char *data = NULL;
  cleanup_free char *host = NULL;
  cleanup_close int hier = -1;
  int tree;

  if (may_mount) {
    if (*ctrls != '\0')
      data = str_has_prefix(ctrls, "name=") ? xfmt("none,%s", ctrls) : xstrdup(ctrls);
    hier = mnt_new_fs(*ctrls != '\0' ? "cgroup" : "cgroup2", "cgroup", data, NULL, 0, 0, err);
    if (hier >= 0 && strcmp(own, "/") == 0)
      return take_fd(&hier);
    if (hier >= 0) {
      tree = open_tree(hier, own + 1, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
      if (tree >= 0)
        return tree;
    }
    error_clear(err); /* fall back to the host's mount of the hierarchy */
  }
  host = xfmt("%s/%s%s", HOST_CGROUP, dir, own);
  return mnt_clone(AT_FDCWD, host, true, host, err);
}

/* The container's cgroup directory of that hierarchy as the runtime made it
 * (it is already in it): a bind of it is the subtree a fresh mount of the
 * hierarchy would give, without mounting the whole hierarchy and dropping it
 * again (an RCU grace period per hierarchy).  In a private cgroup namespace,
 * unshared once the init was in its cgroups, that directory is the
 * namespace's root, which is what a fresh mount there shows; its real path
 * is the one /proc/self/cgroup gave before the unshare.  Not in a user
 * namespace; -1 when the runtime's manager cannot vouch for the directory,
 * and hierarchy_tree() then does it the long way. */
static int own_dir_tree(struct setup_ctx *ctx, const char *ctrls, const char *own)
{
  cleanup_free char *real = NULL;
  const char *dir;
  struct statfs sfs;
  int tree;

  if (ctx->cgroup == NULL || ctx->new_userns || ctx->in_userns)
    return -1;
  if (ctx->new_cgroupns) {
    if (ctx->cgroup_table == NULL || strcmp(own, "/") != 0 ||
        (real = own_cgroup(ctx->cgroup_table, ctrls)) == NULL)
      return -1;
    own = real;
  }
  dir = cgroup_v1_own_dir(ctx->cgroup, ctrls, own);
  if (dir == NULL)
    return -1;
  tree = open_tree(AT_FDCWD, dir, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
  if (tree < 0)
    return -1;
  if (fstatfs(tree, &sfs) < 0 ||
      sfs.f_type != (*ctrls == '\0' ? CGROUP2_SUPER_MAGIC : CGROUP_SUPER_MAGIC)) {
    close(tree);
    return -1;
  }
  return tree;
}

/* Link each co-mounted controller to the directory: "cpu" -> "cpu,cpuacct". */
static int comount_links(int tmpfd, const char *dir, const char *dest, struct error *err)
{
  cleanup_free char *copy = xstrdup(dir);
  char *save = NULL;

  if (strchr(dir, ',') == NULL)
    return 0;
  for (char *c = strtok_r(copy, ",", &save); c != NULL; c = strtok_r(NULL, ",", &save))
    if (symlinkat(dir, tmpfd, c) < 0 && errno != EEXIST)
      return error_errno(err, "symlink `%s/%s`", dest, c);
  return 0;
}

static int bind_hierarchy(struct setup_ctx *ctx, int tmpfd, const char *ctrls, const char *own,
                          uint64_t set, const char *dest, struct error *err)
{
  bool userns = ctx->new_userns || ctx->in_userns;
  const char *dir = *ctrls == '\0' ? "unified" : ctrls;
  uint64_t clr = 0;
  cleanup_close int tree = -1;
  cleanup_close int dirfd = -1;

  if (str_has_prefix(dir, "name="))
    dir += strlen("name=");
  if (*ctrls == '\0' && !path_is_fs(HOST_CGROUP "/unified", CGROUP2_SUPER_MAGIC))
    return 0;
  if (strchr(dir, '/') != NULL || strcmp(dir, "..") == 0 || strcmp(dir, ".") == 0)
    return error_set(err, EINVAL, "cgroup hierarchy `%s`: bad name", dir);
  tree = own_dir_tree(ctx, ctrls, own);
  /* a bind keeps the host mount's flags: clear a read-only one the config
   * did not ask for, as a fresh mount would not have it */
  if (tree >= 0) {
    clr = (set & MOUNT_ATTR_RDONLY) ? 0 : MOUNT_ATTR_RDONLY;
  } else {
    /* a fresh mount in a joined namespace shows the other's root, not ours */
    tree = hierarchy_tree(ctrls, dir, own, !userns && !ctx->joined_cgroupns, err);
    if (tree < 0)
      return error_prefix(err, "mount cgroup `%s` on `%s`", dir, dest);
  }
  if (mnt_setattr(tree, true, set, clr, 0, dest, err) < 0)
    return -1;
  if (mkdirat(tmpfd, dir, 0755) < 0 && errno != EEXIST)
    return error_errno(err, "mkdir `%s/%s`", dest, dir);
  dirfd = openat(tmpfd, dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dirfd < 0)
    return error_errno(err, "open `%s/%s`", dest, dir);
  if (mnt_attach(tree, dirfd, dir, dest, err) < 0)
    return -1;
  return comount_links(tmpfd, dir, dest, err);
}

/* Every hierarchy of /proc/self/cgroup under the tmpfs tmpfd. */
static int bind_hierarchies(struct setup_ctx *ctx, int tmpfd, uint64_t set, const char *dest,
                            struct error *err)
{
  cleanup_free char *table = NULL;
  char *save = NULL;
  int n = 0;
  bool userns = ctx->new_userns || ctx->in_userns;

  /* In a user namespace the host's hierarchies are bound: that needs our
   * real cgroup paths, read by the init before it unshared its cgroup ns.
   * In a joined cgroup namespace /proc/self/cgroup names ours from the other
   * container's root ("/../c2"): the paths read before the join are bound. */
  if (((userns && ctx->new_cgroupns) || ctx->joined_cgroupns) && ctx->cgroup_table != NULL)
    table = xstrdup(ctx->cgroup_table);
  else if (procfs_read_all("self/cgroup", &table, err) < 0)
    return -1;
  for (char *l = strtok_r(table, "\n", &save); l != NULL; l = strtok_r(NULL, "\n", &save)) {
    char *c1 = strchr(l, ':');
    char *c2 = c1 != NULL ? strchr(c1 + 1, ':') : NULL;

    if (c2 == NULL || c2[1] != '/')
      return error_set(err, EINVAL, "/proc/self/cgroup: bad line `%s`", l);
    if (++n > MAX_CGROUP_LINES)
      return error_set(err, E2BIG, "/proc/self/cgroup: too many hierarchies");
    *c2 = '\0';
    if (bind_hierarchy(ctx, tmpfd, c1 + 1, c2 + 1, set, dest, err) < 0)
      return -1;
  }
  return 0;
}

static int cgroup1(struct setup_ctx *ctx, const struct mount_opts *o, uint64_t set, int target,
                   const char *dest, struct error *err)
{
  const uint64_t base = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;
  cleanup_close int tmp = -1;

  if ((ctx->new_userns || ctx->in_userns) && ctx->new_cgroupns && ctx->cgroup_table == NULL)
    return error_set(err, ENOTSUP,
                     "mount `cgroup` on `%s`: cgroup v1 in a user namespace with "
                     "a private cgroup namespace is not supported",
                     dest);
  tmp = mnt_new_fs("tmpfs", "cgroup", "mode=755", NULL, 0, (set & ~MOUNT_ATTR_RDONLY) | base, err);
  if (tmp < 0)
    return error_prefix(err, "mount on `%s`", dest);
  if (mnt_attach(tmp, target, "tmpfs", dest, err) < 0)
    return -1;
  if (bind_hierarchies(ctx, tmp, set, dest, err) < 0)
    return -1;
  if ((set & MOUNT_ATTR_RDONLY) && mnt_setattr(tmp, false, MOUNT_ATTR_RDONLY, 0, 0, dest, err) < 0)
    return -1;
  return mnt_set_propagation(tmp, o->propagation, dest, err);
}

int mounts_cgroup(struct setup_ctx *ctx, const struct oci_mount *m, const struct mount_opts *o,
                  int targetfd, const char *dest, struct error *err)
{
  uint64_t set, clr;

  mount_opts_attr(o, &set, &clr);
  if (streq(m->type, "cgroup2") || path_is_fs(HOST_CGROUP, CGROUP2_SUPER_MAGIC))
    return cgroup2(ctx, o, set, targetfd, dest, err);
  return cgroup1(ctx, o, set, targetfd, dest, err);
}
