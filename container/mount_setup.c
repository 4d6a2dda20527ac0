/* mount_setup.c - the config's "mounts", in order (OCI runtime spec 1.2 "Mounts",
 * with runc's interpretation of types and options).
 *
 * Each destination is resolved inside the rootfs with safepath.h, created
 * there when missing (a directory, or an empty file when a bind source is not
 * a directory), and the mount is attached to that fd (mount_ops.c).  Bind
 * sources are host paths; relative ones are relative to the bundle; one
 * inside the rootfs is what the earlier mounts made there (the init clones
 * it in its own mount namespace, where the rootfs is bound at its path).  A
 * source /proc/self/fd/N names a file the runtime's caller opened and checked
 * (`agentrt sandbox` binds the home's files that way): the path that file has
 * is bound, and must still be that very file (device and inode), or the
 * mount fails; a path changed between the check and the bind changes nothing.
 */
#include "container/mounts.h"
#include "container/namespaces.h"
#include "profile/profile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <linux/magic.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "common/util.h"
#include "os/procfs.h"
#include "os/safepath.h"
#include "workspace/workspace.h"

#define MAX_SB_WORDS 8

/* Files below /proc that runc lets an engine cover (lxcfs and friends). */
static const char *const proc_overlay_ok[] = {
    "/proc/cpuinfo",
    "/proc/diskstats",
    "/proc/meminfo",
    "/proc/stat",
    "/proc/swaps",
    "/proc/uptime",
    "/proc/loadavg",
    "/proc/slabinfo",
    "/proc/net/dev",
    "/proc/sys/kernel/ns_last_pid",
    NULL,
};

static bool is_bind(const struct oci_mount *m, const struct mount_opts *o)
{
  return (o->flags & MS_BIND) || streq(m->type, "bind");
}

bool mounts_has_dest(const struct oci_config *c, const char *dest, bool *ret_bind)
{
  bool found = false;

  for (size_t i = 0; i < c->n_mounts; i++) {
    cleanup_free char *d = path_normalize(c->mounts[i].destination);
    struct mount_opts o;
    struct error err;

    if (strcmp(d, dest) != 0 || mount_options_parse(c->mounts[i].options, &o, &err) < 0)
      continue;
    found = true;
    if (ret_bind != NULL)
      *ret_bind = is_bind(&c->mounts[i], &o); /* the last one wins */
    mount_opts_free(&o);
  }
  return found;
}

static bool under_proc(const char *dest)
{
  return strcmp(dest, "/proc") == 0 || str_has_prefix(dest, "/proc/");
}

/* CVE-2019-16884, CVE-2025-52881: a mount that covers /proc or part of it
 * could hide what the runtime later writes (LSM labels, sysctls) behind a
 * file the container controls.  Only procfs itself, a bind whose source is
 * on procfs, or a short list of lxcfs-style files may go there. */
static int check_proc_dest(const struct oci_mount *m, const char *dest, int src_fd,
                           struct error *err)
{
  if (!under_proc(dest) || streq(m->type, "proc"))
    return 0;
  if (strv_contains((char *const *)proc_overlay_ok, dest))
    return 0;
  if (src_fd >= 0 && fd_is_procfs(src_fd))
    return 0;
  return error_set(err, 0, "mount on `%s`: only procfs may be mounted over /proc", dest);
}

/* /proc, /sys and /dev, and anything that gets proc or sysfs, must be an
 * ordinary directory inside the rootfs, not a symlink to one
 * (CVE-2019-19921, CVE-2023-27561, CVE-2023-28642; /dev: CVE-2026-41579). */
static bool needs_real_dir(const struct oci_mount *m, const char *dest)
{
  return streq(m->type, "proc") || streq(m->type, "sysfs") || strcmp(dest, "/proc") == 0 ||
         strcmp(dest, "/sys") == 0 || strcmp(dest, "/dev") == 0;
}

static int open_target(struct setup_ctx *ctx, const struct oci_mount *m, const char *dest,
                       bool is_dir, struct error *err)
{
  bool strict = needs_real_dir(m, dest);
  int fd = safe_walk(ctx->rootfd, dest, is_dir ? SAFE_MKDIR : SAFE_MKFILE, strict, err);
  struct stat st;

  if (fd < 0 || !strict)
    return fd;
  if (fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode)) {
    close(fd);
    return error_set(err, 0, "mount `%s` on `%s`: must be mounted on ordinary directory",
                     m->type != NULL ? m->type : "bind", dest);
  }
  return fd;
}

static char *bind_source(const char *bundle, const char *src)
{
  if (src[0] == '/')
    return xstrdup(src);
  return xfmt("%s/%s", bundle, src);
}

/* A descriptor named by a /proc/self/fd/N source, or -1. */
static int fd_source(const char *src)
{
  char *end;
  long fd;

  if (!str_has_prefix(src, "/proc/self/fd/"))
    return -1;
  errno = 0;
  fd = strtol(src + strlen("/proc/self/fd/"), &end, 10);
  if (errno != 0 || *end != '\0' || fd < 3 || fd > 1 << 20)
    return -1;
  return (int)fd;
}

/* The detached clone of a bind source.  For /proc/self/fd/N the magic link
 * leads to the mount of the namespace the file was opened in, which a clone
 * from another one refuses: the path the descriptor has is cloned here, and
 * checked to be the same file. */
static int clone_source(const char *src, bool recursive, struct error *err)
{
  int fd = fd_source(src), tree;
  char real[PATH_MAX];
  struct stat want, got;
  ssize_t n;

  if (fd < 0)
    return mnt_clone(AT_FDCWD, src, recursive, src, err);
  if (fstat(fd, &want) < 0)
    return error_errno(err, "bind `%s`", src);
  n = readlink(src, real, sizeof real - 1);
  if (n <= 0 || real[0] != '/')
    return error_set(err, ENOENT, "bind `%s`: the file it names has no path", src);
  real[n] = '\0';
  tree = mnt_clone(AT_FDCWD, real, recursive, real, err);
  if (tree < 0)
    return -1;
  if (fstat(tree, &got) < 0 || got.st_dev != want.st_dev || got.st_ino != want.st_ino) {
    close(tree);
    return error_set(err, EXDEV, "bind `%s` (%s): the path is another file than the one checked",
                     src, real);
  }
  return tree;
}

/* In the runtime, before the init goes into a new user namespace: the
 * source of each bind, cloned (open_tree) with the runtime's credentials,
 * so that a source below a directory only the host's root may search still
 * binds (as crun does); the init attaches the clone.  A source that fails
 * here is left to the init (-1), which then reports the error. */
static bool wants_idmap(const struct oci_mount *m, const struct mount_opts *o)
{
  return o->idmap || m->uid_mappings != NULL;
}

bool mounts_any_idmap(const struct oci_config *c)
{
  /* on every create: the words compared, not the options parsed */
  for (size_t i = 0; i < c->n_mounts; i++) {
    if (c->mounts[i].uid_mappings != NULL)
      return true;
    for (char **w = c->mounts[i].options; w != NULL && *w != NULL; w++)
      if (streq(*w, "idmap") || streq(*w, "ridmap"))
        return true;
  }
  return false;
}

/* The mount's own mappings, else (runc's "idmap" alone) the container's:
 * its mappings, or the user namespace it joins by path. */
static int idmap_source(const struct oci_config *c, const struct oci_mount *m,
                        const struct mount_opts *o, int tree, const char *dest, struct error *err)
{
  const struct oci_linux *l = c->linux;
  const struct oci_namespace *joined = oci_config_namespace(c, OCI_NS_USER);
  int ns;

  if (!is_bind(m, o))
    return error_set(err, EINVAL, "mount on `%s`: an idmapped mount must be a bind mount", dest);
  if (joined != NULL && (joined->path == NULL || *joined->path == '\0'))
    joined = NULL;
  if (m->uid_mappings != NULL)
    ns = ns_userns_fd(m->uid_mappings, m->n_uid_mappings, m->gid_mappings, m->n_gid_mappings, err);
  else if (l != NULL && l->n_uid_mappings > 0 && l->n_gid_mappings > 0)
    ns = ns_userns_fd(l->uid_mappings, l->n_uid_mappings, l->gid_mappings, l->n_gid_mappings, err);
  else if (joined != NULL) {
    ns = open(joined->path, O_RDONLY | O_CLOEXEC);
    if (ns < 0)
      error_errno(err, "idmap: user namespace `%s`", joined->path);
  } else
    return error_set(err, EINVAL,
                     "mount on `%s`: `idmap` without uidMappings and gidMappings needs the "
                     "container's (linux.uidMappings, linux.gidMappings, or a user namespace "
                     "joined by path)",
                     dest);
  if (ns < 0)
    return error_prefix(err, "mount on `%s`", dest);
  if (mnt_set_idmap(tree, ns, o->idmap_rec, dest, err) < 0) {
    close(ns);
    return -1;
  }
  close(ns);
  return 0;
}

int mounts_open_bind_sources(const struct oci_config *c, const char *bundle, const char *rootfs,
                             bool idmap_only, int **ret_fds, struct error *err)
{
  int *fds = xmalloc((c->n_mounts ? c->n_mounts : 1) * sizeof *fds);
  cleanup_free char *root = path_normalize(rootfs);
  int n = 0;

  for (size_t i = 0; i < c->n_mounts; i++)
    fds[i] = -1;
  for (size_t i = 0; i < c->n_mounts; i++) {
    const struct oci_mount *m = &c->mounts[i];
    struct mount_opts o;
    struct error e = {0};
    cleanup_free char *src = NULL;
    cleanup_free char *dest = path_normalize(m->destination ? m->destination : "");
    bool idmap;

    if (mount_options_parse(m->options, &o, &e) < 0)
      continue;
    idmap = wants_idmap(m, &o);
    if (idmap && (!is_bind(m, &o) || m->source == NULL || *m->source == '\0')) {
      error_set(err, EINVAL, "mount on `%s`: an idmapped mount must be a bind mount of a source",
                dest);
      mount_opts_free(&o);
      goto fail;
    }
    if ((idmap || !idmap_only) && m->source != NULL && *m->source != '\0' && is_bind(m, &o) &&
        !(o.flags & MS_REMOUNT)) {
      src = bind_source(bundle, m->source);
      /* inside the rootfs: the init's view; an idmapped one there is made
       * by the init only when it is not in a user namespace (idmap_only) */
      if (!idmap || idmap_only) {
        cleanup_free char *norm = path_normalize(src);
        /* (a rootfs of "/", the sandbox's, holds every source: not that) */
        if (strcmp(root, "/") != 0 && path_is_below(norm, root)) {
          mount_opts_free(&o);
          continue;
        }
      }
      fds[i] = clone_source(src, (o.flags & MS_REC) != 0, idmap ? err : &e);
      if (idmap && (fds[i] < 0 || idmap_source(c, m, &o, fds[i], dest, err) < 0)) {
        mount_opts_free(&o);
        goto fail;
      }
      n += fds[i] >= 0;
    }
    mount_opts_free(&o);
  }
  *ret_fds = fds;
  return n;
fail:
  for (size_t i = 0; i < c->n_mounts; i++)
    if (fds[i] >= 0)
      close(fds[i]);
  free(fds);
  *ret_fds = NULL;
  return -1;
}

#ifndef ST_NOSYMFOLLOW
#define ST_NOSYMFOLLOW 0x2000
#endif

/* A bind's per-mount flags, as runc 1.2 makes them.  With no flag in its
 * options it keeps the source's.  Otherwise, as its bind remount does, ro,
 * nosuid, nodev, noexec and nosymfollow are what the options name and the
 * rest cleared; the atime mode and nodiratime change only when an option
 * sets one (noatime > strictatime > relatime, the default).  In a user
 * namespace the kernel locks the source's ro, nosuid, nodev, noexec and
 * atime flags: unnamed ones are kept, and clearing one is refused, as the
 * kernel refuses it there (our clone, made outside, would allow it).  A
 * profile that hardens binds keeps every flag the options do not name. */
static int bind_attrs(const struct setup_ctx *ctx, const struct mount_opts *o, int tree,
                      const char *dest, uint64_t *ret_set, uint64_t *ret_clr, struct error *err)
{
  static const struct {
    unsigned long ms, st;
    uint64_t attr;
    bool lockable;
  } plain[] = {
      {MS_RDONLY, ST_RDONLY, MOUNT_ATTR_RDONLY, true},
      {MS_NOSUID, ST_NOSUID, MOUNT_ATTR_NOSUID, true},
      {MS_NODEV, ST_NODEV, MOUNT_ATTR_NODEV, true},
      {MS_NOEXEC, ST_NOEXEC, MOUNT_ATTR_NOEXEC, true},
      {MS_NOSYMFOLLOW, ST_NOSYMFOLLOW, MOUNT_ATTR_NOSYMFOLLOW, false},
  };
  const unsigned long atimes = MS_NOATIME | MS_RELATIME | MS_STRICTATIME | MS_NODIRATIME;
  bool userns = ctx->new_userns || ctx->in_userns;
  uint64_t set = 0, clr = 0;
  struct statfs sf;

  if (ctx->keep_bind_flags ||
      ((o->flags | o->cleared) &
       (atimes | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_NOSYMFOLLOW)) == 0) {
    mount_opts_attr(o, ret_set, ret_clr);
    return 0;
  }
  if (fstatfs(tree, &sf) < 0)
    return error_errno(err, "bind on `%s`: statfs", dest);
  for (size_t i = 0; i < ARRAY_SIZE(plain); i++) {
    bool src = (sf.f_flags & plain[i].st) != 0, want;

    if (o->flags & plain[i].ms)
      want = true;
    else
      want = userns && plain[i].lockable && src;
    if (userns && plain[i].lockable && src && (o->cleared & plain[i].ms))
      return error_set(err, 0,
                       "error mounting on `%s`: clearing a flag its source has, in a user "
                       "namespace: operation not permitted",
                       dest);
    if (want)
      set |= plain[i].attr;
    else
      clr |= plain[i].attr;
  }
  if (o->flags & atimes) {
    uint64_t mode = (o->flags & MS_NOATIME)       ? MOUNT_ATTR_NOATIME
                    : (o->flags & MS_STRICTATIME) ? MOUNT_ATTR_STRICTATIME
                                                  : MOUNT_ATTR_RELATIME;
    uint64_t src = (sf.f_flags & ST_NOATIME)    ? MOUNT_ATTR_NOATIME
                   : (sf.f_flags & ST_RELATIME) ? MOUNT_ATTR_RELATIME
                                                : MOUNT_ATTR_STRICTATIME;
    bool nodir = (o->flags & MS_NODIRATIME) != 0;

    if (userns && (mode != src || nodir != ((sf.f_flags & ST_NODIRATIME) != 0)))
      return error_set(err, 0,
                       "error mounting on `%s`: changing its source's atime flags, in a user "
                       "namespace: operation not permitted",
                       dest);
    clr |= MOUNT_ATTR__ATIME | MOUNT_ATTR_NODIRATIME;
    set |= mode | (nodir ? MOUNT_ATTR_NODIRATIME : 0);
  }
  /* (the atime mode is a field: MOUNT_ATTR__ATIME whole in clr, its value
   * in set) */
  *ret_set = set;
  *ret_clr = clr;
  return 0;
}

static int do_bind(struct setup_ctx *ctx, const struct oci_mount *m, const struct mount_opts *o,
                   const char *dest, int pre, struct error *err)
{
  cleanup_free char *src = NULL;
  cleanup_close int tree = -1;
  cleanup_close int target = -1;
  uint64_t set, clr;
  struct stat st;

  if (m->source == NULL || *m->source == '\0')
    return error_set(err, EINVAL, "bind mount on `%s`: no source", dest);
  src = bind_source(ctx->bundle, m->source);
  /* made by the runtime with its mapping; one inside the rootfs, by us
   * where we are host root (no user namespace), else refused */
  if (pre < 0 && wants_idmap(m, o) && (ctx->new_userns || ctx->in_userns))
    return error_set(err, EINVAL, "idmapped mount on `%s`: no source prepared", dest);
  tree = pre >= 0 ? pre : clone_source(src, (o->flags & MS_REC) != 0, err);
  if (tree < 0)
    return -1;
  if (pre < 0 && wants_idmap(m, o) && idmap_source(ctx->config, m, o, tree, dest, err) < 0)
    return -1;
  if (fstat(tree, &st) < 0)
    return error_errno(err, "bind `%s`: stat", src);
  if (check_proc_dest(m, dest, tree, err) < 0)
    return -1;
  target = open_target(ctx, m, dest, S_ISDIR(st.st_mode), err);
  if (target < 0)
    return -1;
  /* a ro bind is made ro on the detached clone, before anyone sees it rw */
  if (bind_attrs(ctx, o, tree, dest, &set, &clr, err) < 0)
    return -1;
  if (mnt_setattr(tree, false, set, clr, 0, dest, err) < 0 ||
      mnt_setattr(tree, true, o->rec_attr_set, o->rec_attr_clr, 0, dest, err) < 0)
    return -1;
  if (mnt_attach(tree, target, src, dest, err) < 0)
    return -1;
  return mnt_set_propagation(tree, o->propagation, dest, err);
}

/* "remount" without "bind": change the attributes of what is mounted there. */
static int do_remount(struct setup_ctx *ctx, const struct mount_opts *o, const char *dest,
                      struct error *err)
{
  cleanup_close int target = safe_openat(ctx->rootfd, dest, O_PATH, 0, err);
  uint64_t set, clr;

  if (target < 0)
    return -1;
  mount_opts_attr(o, &set, &clr);
  if (mnt_setattr(target, false, set, clr, 0, dest, err) < 0 ||
      mnt_setattr(target, true, o->rec_attr_set, o->rec_attr_clr, 0, dest, err) < 0)
    return -1;
  return mnt_set_propagation(target, o->propagation, dest, err);
}

static bool config_has_new_ns(const struct oci_config *c, enum oci_ns_type t)
{
  if (c->linux == NULL)
    return false;
  for (size_t i = 0; i < c->linux->n_namespaces; i++)
    if (c->linux->namespaces[i].type == t)
      return c->linux->namespaces[i].path == NULL || *c->linux->namespaces[i].path == '\0';
  return false;
}

/* A recursive bind of a host path instead of a new filesystem: sysfs in a
 * user namespace without its own network namespace, mqueue without the
 * right to mount it (what runc does). */
static int host_rbind(const char *host, uint64_t set, struct error *err)
{
  int tree = mnt_clone(AT_FDCWD, host, true, host, err);

  if (tree < 0)
    return -1;
  if (mnt_setattr(tree, true, set, 0, 0, host, err) < 0) {
    close(tree);
    return -1;
  }
  return tree;
}

/* linux.mountLabel as an SELinux context= option, on the filesystems runc
 * labels that way (not proc, sysfs, mqueue or cgroup; create refused the
 * label where SELinux is disabled).  NULL: the data as is. */
static char *labelled_data(const struct setup_ctx *ctx, const char *type, const char *data)
{
  const char *label = ctx->config->linux ? ctx->config->linux->mount_label : NULL;

  if (label == NULL || *label == '\0' || streq(type, "proc") || streq(type, "sysfs") ||
      streq(type, "mqueue"))
    return NULL;
  if (data == NULL || *data == '\0')
    return xfmt("context=\"%s\"", label);
  return xfmt("%s,context=\"%s\"", data, label);
}

/* data with its lowerdir= entries ROOT//REL opened below ROOT without a
 * symlink, here, in the mount namespace that mounts (a sub-agent's layers:
 * the parent could have swapped a directory for a symlink since its create
 * chose them); *ret_fds to close once mounted.  NULL and err on failure. */
static char *beneath_data(const char *data, int **ret_fds, size_t *ret_n, struct error *err)
{
  cleanup_free char *copy = xstrdup(data);
  char *out = NULL, *save = NULL;

  *ret_fds = NULL;
  *ret_n = 0;
  for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
    cleanup_free char *nw = NULL;
    char *next;
    if (str_has_prefix(w, "lowerdir=")) {
      cleanup_free char *v = NULL;
      if (*ret_fds != NULL) {
        free(out);
        error_set(err, EINVAL, "two lowerdir options");
        return NULL;
      }
      v = workspace_lowerdir_beneath(w + strlen("lowerdir="), ret_fds, ret_n, err);
      if (v == NULL) {
        free(out);
        return NULL;
      }
      nw = xfmt("lowerdir=%s", v);
    }
    next = xfmt("%s%s%s", out ? out : "", out ? "," : "", nw ? nw : w);
    free(out);
    out = next;
  }
  return out ? out : xstrdup("");
}

static int new_fs(struct setup_ctx *ctx, const struct oci_mount *m, const struct mount_opts *o,
                  uint64_t set, struct error *err)
{
  const char *sb[MAX_SB_WORDS];
  size_t n_sb = mount_opts_sb_words(o, sb, MAX_SB_WORDS);
  bool userns = ctx->new_userns || ctx->in_userns;
  cleanup_free char *beneath = NULL;
  cleanup_free int *fds = NULL;
  size_t n_fds = 0;
  const char *data = o->data;
  cleanup_free char *labelled = NULL;
  int fd;

  if (o->lower_beneath && streq(m->type, "overlay") && data != NULL) {
    beneath = beneath_data(data, &fds, &n_fds, err);
    if (beneath == NULL)
      return -1;
    data = beneath;
  }
  labelled = labelled_data(ctx, m->type, data);
  if (streq(m->type, "sysfs") && userns && !config_has_new_ns(ctx->config, OCI_NS_NETWORK))
    return host_rbind("/sys", set, err);
  fd = mnt_new_fs(m->type, m->source, labelled ? labelled : data, sb, n_sb, set, err);
  for (size_t i = 0; i < n_fds; i++)
    close(fds[i]);
  if (fd >= 0 || err->code != EPERM)
    return fd;
  if (streq(m->type, "sysfs") || (streq(m->type, "mqueue") && userns)) {
    error_clear(err);
    return host_rbind(streq(m->type, "sysfs") ? "/sys" : "/dev/mqueue", set, err);
  }
  return -1;
}

static bool data_has_word(const char *data, const char *prefix)
{
  size_t n = strlen(prefix);

  for (const char *w = data; w != NULL && *w != '\0';
       w = strchr(w, ',') ? strchr(w, ',') + 1 : NULL)
    if (strncmp(w, prefix, n) == 0)
      return true;
  return false;
}

/* A tmpfs without "mode=" over a directory the rootfs already has takes that
 * directory's mode (its sticky and set-id bits too), as runc and crun do: an
 * image's /tmp stays 1777, its private dirs stay private.  Over a directory
 * made here it gets the kernel's default (1777).  NULL: no change. */
static char *tmpfs_mode_data(struct setup_ctx *ctx, const struct oci_mount *m,
                             const struct mount_opts *o, const char *dest)
{
  struct error e = {0};
  struct stat st;
  int fd;

  if (!streq(m->type, "tmpfs") || data_has_word(o->data, "mode="))
    return NULL;
  fd = safe_walk(ctx->rootfd, dest, SAFE_OPEN, false, &e);
  if (fd < 0)
    return NULL;
  if (fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode)) {
    close(fd);
    return NULL;
  }
  close(fd);
  return xfmt("mode=%04o%s%s", (unsigned)(st.st_mode & 07777), o->data ? "," : "",
              o->data ? o->data : "");
}

/* pre: the file system made by the runtime (spawn_opts.premounted), or -1 */
static int do_fs(struct setup_ctx *ctx, const struct oci_mount *m, const struct mount_opts *o,
                 const char *dest, int pre, struct error *err)
{
  cleanup_close int target = -1;
  cleanup_close int mfd = pre;
  cleanup_free char *tmpfs_data = NULL;
  struct mount_opts with_mode;
  uint64_t set, clr;

  if (m->type == NULL || *m->type == '\0')
    return error_set(err, EINVAL, "mount on `%s`: no type", dest);
  if (check_proc_dest(m, dest, -1, err) < 0)
    return -1;
  tmpfs_data = tmpfs_mode_data(ctx, m, o, dest);
  if (tmpfs_data != NULL) {
    with_mode = *o;
    with_mode.data = tmpfs_data;
    o = &with_mode;
  }
  target = open_target(ctx, m, dest, true, err);
  if (target < 0)
    return -1;
  if (streq(m->type, "cgroup") || streq(m->type, "cgroup2"))
    return mounts_cgroup(ctx, m, o, target, dest, err);
  if (o->tmpcopyup && !streq(m->type, "tmpfs"))
    return error_set(err, EINVAL, "mount on `%s`: tmpcopyup needs type tmpfs, not `%s`", dest,
                     m->type);
  mount_opts_attr(o, &set, &clr);
  if (mfd < 0)
    mfd = new_fs(ctx, m, o, set, err);
  if (mfd < 0)
    return error_prefix(err, "mount on `%s`", dest);
  if (o->tmpcopyup && mnt_tmpcopyup(target, mfd, dest, err) < 0)
    return -1;
  if (mnt_attach(mfd, target, m->type, dest, err) < 0)
    return -1;
  return mnt_set_propagation(mfd, o->propagation, dest, err);
}

static int mount_one(struct setup_ctx *ctx, const struct oci_mount *m, int pre, struct error *err)
{
  cleanup_free char *dest = NULL;
  struct mount_opts o;
  int r;

  if (m->destination == NULL || *m->destination == '\0')
    return error_set(err, EINVAL, "mount: no destination");
  dest = path_normalize(m->destination);
  if (strcmp(dest, "/") == 0)
    return error_set(err, EINVAL, "mount on `/`: use root.path for the root filesystem");
  if (profile_mount_protect_kind(m) != 0)
    return mnt_protect(ctx->rootfd, dest, profile_mount_protect_kind(m) == 'd',
                       profile_mount_protect_existing(m), err);
  if (mount_options_parse(m->options, &o, err) < 0)
    return error_prefix(err, "mount on `%s`", dest);
  /* A read-only /dev still needs its devices, /dev/pts, /dev/shm... made
   * in it: mounted rw here, made read-only by rootfs_finalize (as runc). */
  if (strcmp(dest, "/dev") == 0 && (o.flags & MS_RDONLY) && !(o.flags & MS_REMOUNT)) {
    o.flags &= ~MS_RDONLY;
    ctx->dev_readonly = true;
  }
  if (is_bind(m, &o))
    r = do_bind(ctx, m, &o, dest, take_fd(&pre), err);
  else if (o.flags & MS_REMOUNT)
    r = do_remount(ctx, &o, dest, err);
  else
    r = do_fs(ctx, m, &o, dest, take_fd(&pre), err);
  mount_opts_free(&o);
  return r;
}

/* Does an overlay mount name the late workspace image's path (its
 * upperdir=<ws_fs_path>/upper)? */
static bool names_ws_fs(const struct oci_mount *m, const char *path)
{
  size_t n = strlen(path);

  if (m->type == NULL || !streq(m->type, "overlay"))
    return false;
  for (size_t i = 0; m->options && m->options[i]; i++) {
    const char *v = strchr(m->options[i], '=');
    for (const char *p = v ? strstr(v + 1, path) : NULL; p != NULL; p = strstr(p + 1, path))
      if (p[n] == '/' || p[n] == ':' || p[n] == '\0')
        return true;
  }
  return false;
}

int mounts_setup(struct setup_ctx *ctx, struct error *err)
{
  for (size_t i = 0; i < ctx->config->n_mounts; i++) {
    const struct oci_mount *m = &ctx->config->mounts[i];
    if (ctx->ws_fs_late && names_ws_fs(m, ctx->ws_fs_path) && rootfs_attach_ws_fs(ctx, err) < 0)
      return -1;
    if (mount_one(ctx, &ctx->config->mounts[i], ctx->bind_fds ? ctx->bind_fds[i] : -1, err) < 0)
      return -1;
  }
  return 0;
}

static bool is_mount_root(int fd)
{
  struct statx stx;

  return statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, 0, &stx) == 0 &&
         (stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) &&
         (stx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
}

int mounts_propagation_again(struct setup_ctx *ctx, struct error *err)
{
  for (size_t i = 0; i < ctx->config->n_mounts; i++) {
    const struct oci_mount *m = &ctx->config->mounts[i];
    cleanup_free char *dest = NULL;
    cleanup_close int fd = -1;
    struct mount_opts o;
    unsigned long prop;

    if (m->destination == NULL || profile_mount_protect_kind(m) != 0)
      continue;
    if (mount_options_parse(m->options, &o, err) < 0)
      return -1;
    prop = o.propagation;
    mount_opts_free(&o);
    if (prop == 0)
      continue;
    dest = path_normalize(m->destination);
    fd = safe_walk(ctx->rootfd, dest, SAFE_OPEN, false, err);
    if (fd < 0 && err->code == ENOENT) { /* a later mount covers it */
      error_clear(err);
      continue;
    }
    if (fd < 0)
      return error_prefix(err, "mount on `%s`", dest);
    /* what is there now may be a later mount's directory: not this one's */
    if (!is_mount_root(fd))
      continue;
    if (mnt_set_propagation(fd, prop, dest, err) < 0)
      return error_prefix(err, "mount on `%s`", dest);
  }
  return 0;
}
