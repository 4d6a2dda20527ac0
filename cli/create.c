/* create.c - `agentrt create` and the part of `run` it shares.
 *
 * Order: read and validate config.json, (apply the profile), create the
 * state dir (locked), the cgroup with its limits, spawn the init (which sets
 * up its namespaces and root and stops before exec), then record the state,
 * write the pid file (no newline: go-runc parses it with Atoi) and hand the
 * pty master to the console socket.  Any failure undoes all of it.
 */
#include "cli/create.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "audit/jbuf.h"
#include "cli/profile_policy.h"
#include "cli/secrets_tls.h"
#include "common/failpoint.h"
#include "common/log.h"
#include "common/util.h"
#include "cli/data_cmd.h"
#include "container/audit_cli.h"
#include "container/console.h"
#include "container/egress_pod.h"
#include "container/lsm.h"
#include "container/notify_socket.h"
#include "container/process.h"
#include "container/seccomp_cache.h"
#include "container/seccomp_filter.h"
#include "container/seccomp_notify.h"
#include "monitor/monitor.h"
#include "monitor/subagents.h"
#include "common/subproto.h"
#include "os/fsutil.h"
#include "os/mount_ops.h"
#include "os/procfs.h"
#include "datadir/datadir.h"
#include "workspace/workspace.h"

/* The bundle's config.json, or --config FILE (crun's option; a relative
 * FILE is taken in the bundle, as crun does). */
static int load_bundle_config(const char *bundle, const char *file, struct oci_config **ret,
                              struct error *err)
{
  const char *name = file ? file : "config.json";
  cleanup_free char *path = name[0] == '/' ? xstrdup(name) : xfmt("%s/%s", bundle, name);
  cleanup_free char *json = NULL;
  size_t len = 0;

  if (read_file_at(AT_FDCWD, path, 64 << 20, &json, &len, err) < 0)
    return file ? error_prefix(err, "--config `%s`", file) : -1;
  return oci_config_parse(json, len, file ? file : "config.json", ret, err);
}

static char *rootfs_path(const char *bundle, const struct oci_config *cfg)
{
  if (cfg->root_path[0] == '/')
    return xstrdup(cfg->root_path);
  return xfmt("%s/%s", bundle, cfg->root_path);
}

/* root.path may not be a symlink nor pass through one (runc refuses it the
 * same way: "not an absolute path, or a symlink"): the mount would follow
 * the link to wherever it points when create resolves it, and a link
 * swapped after this check would move the container's root.  A relative
 * root.path is taken in the bundle's resolved directory: a bundle reached
 * through a link is still fine, as with runc. */
static int check_rootfs_nolink(const char *bundle, const struct oci_config *cfg, const char *rootfs,
                               struct error *err)
{
  cleanup_free char *real = realpath(rootfs, NULL);
  cleanup_free char *rb = NULL, *joined = NULL, *want = NULL;

  if (real == NULL)
    return error_errno(err, "rootfs `%s`", rootfs);
  if (cfg->root_path[0] != '/') {
    rb = realpath(bundle, NULL);
    if (rb == NULL)
      return error_errno(err, "bundle `%s`", bundle);
    joined = xfmt("%s/%s", rb, cfg->root_path);
  }
  want = path_normalize(joined != NULL ? joined : cfg->root_path);
  if (!streq(real, want))
    return error_set(err, 0,
                     "rootfs `%s`: a symlink or a path through one (to `%s`): give root.path "
                     "the resolved path",
                     rootfs, real);
  return 0;
}

/* A mount destination that spells out the rootfs's host path names the
 * path below it (runc reads it so; its tests write such configs): made
 * relative to the container's / before the profile or anything else looks
 * at it. */
static void mounts_dest_from_rootfs(struct oci_config *cfg, const char *rootfs)
{
  cleanup_free char *root = path_normalize(rootfs);
  size_t n = strlen(root);

  if (n <= 1)
    return;
  for (size_t i = 0; i < cfg->n_mounts; i++) {
    char *d = cfg->mounts[i].destination;
    cleanup_free char *norm = d != NULL ? path_normalize(d) : NULL;

    if (norm == NULL || !path_is_below(norm, root) || norm[n] != '/')
      continue;
    cfg->mounts[i].destination = xstrdup(norm + n);
    free(d);
  }
}

/* engine_asked: the engine's config (not only the profile's defaults)
 * asked for limits; a rootless engine without a delegated cgroup then gets
 * a clear error, while the profile's defaults alone are skipped with a
 * warning (they cannot be enforced there). */
static int setup_cgroup(const struct global_opts *g, struct container *c, bool engine_asked,
                        struct error *err)
{
  const struct oci_linux *l = c->config->linux;
  const struct oci_resources *res = l ? l->resources : NULL;
  struct cgroup_opts o = {
      .id = c->id,
      .cgroups_path = l ? l->cgroups_path : NULL,
      .systemd = g->systemd_cgroup,
      .rootless = geteuid() != 0 || g->in_userns,
      .resources = engine_asked ? res : NULL,
      .devices = l ? l->devices : NULL,
      .n_devices = l ? l->n_devices : 0,
  };
  int r;

  if (cgroup_manager_new(&o, &c->cgroup, err) < 0)
    return -1;
  r = cgroup_create(c->cgroup, err);
  container_log_cgroup_warnings(c->cgroup);
  if (r > 0) {
    /* Not delegated to us (rootless) and no limit asked for.  Without a log
     * file the warning would go to stderr, which conmon reads with a single
     * read() as the error text of a failing create: keep it a debug note. */
    if (log_fd() >= 0)
      log_warning("create `%s`: no usable cgroup (%s), continuing without one%s", c->id, err->msg,
                  res ? "; the profile's default limits are not enforced" : "");
    else
      log_debug("create `%s`: no usable cgroup (%s), continuing without one%s", c->id, err->msg,
                res ? "; the profile's default limits are not enforced" : "");
    error_clear(err);
    cgroup_manager_free(c->cgroup);
    c->cgroup = NULL;
    return 0;
  }
  if (r < 0) {
    if (o.rootless && engine_asked && cgroup_resources_requested(res))
      error_prefix(err, "resource limits were requested but the cgroup is not delegated");
    return -1;
  }
  c->state->cgroup_path = xstrdup(cgroup_manager_path(c->cgroup));
  c->state->systemd_cgroup = g->systemd_cgroup;
  r = res != NULL ? cgroup_apply(c->cgroup, res, false, err) : 0;
  container_log_cgroup_warnings(c->cgroup);
  return r;
}

static void fill_state(struct container *c, const char *bundle, const char *rootfs)
{
  struct oci_state *s = c->state;
  const struct oci_config *cfg = c->config;

  s->oci_version = xstrdup(OCI_STATE_VERSION);
  s->id = xstrdup(c->id);
  s->status = xstrdup("creating");
  s->bundle = xstrdup(bundle);
  s->rootfs = xstrdup(rootfs);
  s->created = timestamp_rfc3339();
  s->owner = xstrdup("");
  if (cfg->n_annotations > 0) {
    s->annotations = xmalloc0(cfg->n_annotations * sizeof *s->annotations);
    for (size_t i = 0; i < cfg->n_annotations; i++) {
      s->annotations[i].key = xstrdup(cfg->annotations[i].key);
      s->annotations[i].value = xstrdup(cfg->annotations[i].value);
    }
    s->n_annotations = cfg->n_annotations;
  }
  s->has_pidns = oci_config_namespace(cfg, OCI_NS_PID) != NULL &&
                 oci_config_namespace(cfg, OCI_NS_PID)->path == NULL; /* a new one */
}

int write_pid_file(const char *path, pid_t pid, struct error *err)
{
  char buf[32];
  int n;

  if (path == NULL)
    return 0;
  n = snprintf(buf, sizeof buf, "%d", pid); /* no newline: go-runc's Atoi fails on one */
  return write_file_path(path, buf, (size_t)n, err);
}

/* The profile's protected list, for `workspace diff/commit` (the protection
 * rule is applied at review time: workspace/protect.c). */
static int record_protected(struct container *c, const struct workspace *w, struct error *err)
{
  cleanup_free char *buf = xstrdup("");
  char **list = c->profile ? c->profile->workspace.review_protected : NULL;
  int dfd, r;

  for (size_t i = 0; list && list[i]; i++) {
    char *nb;
    if (strchr(list[i], '\n'))
      continue;
    nb = xfmt("%s%s\n", buf, list[i]);
    free(buf);
    buf = nb;
  }
  dfd = open(w->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0)
    return error_errno(err, "workspace `%s`", w->dir);
  r = write_file_atomic_at(dfd, "protected", buf, strlen(buf), err);
  close(dfd);
  return r;
}

/* overlayfs takes "volatile" since Linux 5.10 */
static bool overlay_has_volatile(void)
{
  struct utsname u;
  unsigned maj = 0, min = 0;

  if (uname(&u) < 0 || sscanf(u.release, "%u.%u", &maj, &min) != 2)
    return false;
  return maj > 5 || (maj == 5 && min >= 10);
}

/* The agent profile's overlay workspace (profile.h): the engine's bind of a
 * host directory becomes an overlay whose upper layer agentrt keeps under
 * <data-dir>/roots/<key>/.workspaces/<id>, so the host directory only changes when the
 * operator commits (`agentrt workspace ID commit`). */
static int attach_parent_fs(const struct global_opts *g, const struct container *c, int *ret_fsfd,
                            char **ret_fspath, struct error *err)
{
  const char *p0 = oci_config_annotation(c->config, "io.agentrt.parent");
  cleanup_free char *parent = p0 ? xstrdup(p0) : NULL;
  struct workspace *pw = NULL;

  /* the nearest ancestor with an image: children have none ("P.a.b" ->
   * "P.a" -> "P"), so one attached image serves the whole stack */
  for (int depth = 0; parent != NULL && depth < 16; depth++) {
    char *dot;
    if (workspace_load(g->store, parent, &pw, err) < 0) {
      if (depth == 0)
        return -1;
      error_clear(err); /* "a.b" was a container's own id: no ancestor */
      return 0;
    }
    if (workspace_has_image(pw))
      break;
    workspace_free(pw);
    pw = NULL;
    dot = strrchr(parent, '.');
    if (dot == NULL)
      return 0;
    *dot = '\0';
  }
  if (pw == NULL)
    return 0;
  if (workspace_fs_open(pw, err) < 0) {
    workspace_free(pw);
    return -1;
  }
  if (workspace_fs_fd(pw) >= 0) {
    *ret_fsfd = fcntl(workspace_fs_fd(pw), F_DUPFD_CLOEXEC, 3);
    if (*ret_fsfd < 0) {
      workspace_free(pw);
      return error_errno(err, "the parent's workspace image");
    }
    *ret_fspath = workspace_fs_path(pw);
  }
  workspace_free(pw);
  return 0;
}

/* A sub-agent's workspace is a view of its parent's, /proc/PID/root/DIR:
 * the parent's monitor names the start time of that PID (its init), which
 * the workspace record keeps against pid reuse (workspace_open_host). */
static uint64_t view_start(const struct oci_config *cfg)
{
  const char *s = oci_config_annotation(cfg, "io.agentrt.parent-start");
  uint64_t v = 0;

  if (s == NULL || parse_u64(s, &v) < 0)
    return 0;
  return v;
}

/* The same for a user namespace joined as /proc/PID/ns/user (a sub-agent in
 * its parent's, monitor/subagents.c): its uid 0 by /proc/PID/uid_map.  Any
 * other path: as before (the init opens the layers). */
static bool joined_root_other(const char *path, char *ret_root, size_t n)
{
  cleanup_free char *map = NULL;
  struct error e = {0};
  char rel[40];
  int pid, end = 0;

  if (sscanf(path, "/proc/%d/ns/user%n", &pid, &end) != 1 || path[end] != '\0' || pid <= 0)
    return false;
  snprintf(rel, sizeof rel, "%d/uid_map", pid);
  if (procfs_read_all(rel, &map, &e) < 0)
    return false;
  for (const char *l = map; l != NULL && *l != '\0';) {
    unsigned long in, out, count;
    if (sscanf(l, "%lu %lu %lu", &in, &out, &count) == 3 && in == 0 && count > 0) {
      if (out == (unsigned long)geteuid())
        return false;
      snprintf(ret_root, n, "host uid %lu", out);
      return true;
    }
    l = strchr(l, '\n');
    if (l != NULL)
      l++;
  }
  return true;
}

/* The init mounts an overlay workspace by path, from layers in the data
 * directory (0700 directories, the runtime's): the root of a user namespace
 * of the container's own that is another uid cannot reach them (it failed
 * after the init started: `workspace image: open <data dir>/...: Permission
 * denied`).  Docker's userns-remap, Podman's --uidmap or --userns=auto.
 * Then this makes the overlay itself (premount_workspace).  *ret_root: who
 * that root is, for messages. */
static bool userns_root_other(const struct oci_config *cfg, char *ret_root, size_t n)
{
  const struct oci_namespace *ns = oci_config_namespace(cfg, OCI_NS_USER);
  const struct oci_linux *l = cfg->linux;

  snprintf(ret_root, n, "unmapped");
  if (ns != NULL && ns->path != NULL && *ns->path != '\0')
    return joined_root_other(ns->path, ret_root, n);
  if (ns == NULL || l == NULL)
    return false;
  for (size_t i = 0; i < l->n_uid_mappings; i++) {
    const struct oci_idmap *m = &l->uid_mappings[i];
    if (m->container_id == 0 && m->size > 0) {
      if (m->host_id == (uint32_t)geteuid())
        return false;
      snprintf(ret_root, n, "host uid %u", (unsigned)m->host_id);
    }
  }
  return true;
}

/* File systems create makes for the init (spawn_opts.premounted). */
struct premounted {
  int *fds;
  size_t n;
};

static void premounted_close(struct premounted *p)
{
  for (size_t i = 0; p->fds && i < p->n; i++)
    if (p->fds[i] >= 0)
      close(p->fds[i]);
  free(p->fds);
  p->fds = NULL;
}

/* The overlay of workspace w (config mount i), made here with the runtime's
 * credentials: its layers are reached by us, the upper of an image through
 * the image's detached mount (/proc/self/fd/N), and it is trusted.* as any
 * overlay of ours.  The init attaches it; a kernel that cannot make an overlay
 * on a detached upper (before 6.15) fails here, naming the cause. */
static int premount_workspace(const struct oci_config *cfg, struct workspace *w, size_t i,
                              const char *root, int parent_fd, const char *parent_path,
                              struct premounted *pre, struct error *err)
{
  cleanup_free char *data = xstrdup(w->mount_data);
  const struct oci_mount *m = &cfg->mounts[i];
  bool vol = strv_contains(m->options, "volatile");
  int fd;

  if (workspace_fs_fd(w) >= 0) {
    cleanup_free char *fs = workspace_fs_path(w);
    cleanup_free char *at = xfmt("/proc/self/fd/%d", workspace_fs_fd(w));
    cleanup_free char *up = xfmt("upperdir=%s/", fs), *wk = xfmt("workdir=%s/", fs);
    char *u = strstr(data, up), *k = strstr(data, wk);
    if (u == NULL || k == NULL)
      return error_set(err, EINVAL, "workspace `%s`: the upper layer is not in `%s`", w->dest, fs);
    /* "upperdir=<fs>/upper,workdir=<fs>/work" with <fs> replaced */
    *u = '\0';
    char *rest = xfmt("%supperdir=%s/%s", data, at, u + strlen(up));
    free(data);
    data = rest;
    k = strstr(data, wk);
    *k = '\0';
    rest = xfmt("%sworkdir=%s/%s", data, at, k + strlen(wk));
    free(data);
    data = rest;
  }
  if (parent_fd >= 0 && parent_path != NULL) {
    /* every "<parent's fs>/" in the layers, by its fd */
    cleanup_free char *pfs = xfmt("%s/", parent_path);
    cleanup_free char *at = xfmt("/proc/self/fd/%d/", parent_fd);
    char *q;
    while ((q = strstr(data, pfs)) != NULL) {
      char *rest;
      *q = '\0';
      rest = xfmt("%s%s%s", data, at, q + strlen(pfs));
      free(data);
      data = rest;
    }
  }
  if (vol) {
    char *more = xfmt("%s,volatile", data);
    free(data);
    data = more;
  }
  fd = mnt_new_fs("overlay", "overlay", data, NULL, 0, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, err);
  if (fd < 0)
    return error_prefix(err,
                        "workspace `%s`: in a user namespace of the container's own whose root "
                        "is %s (that root cannot reach its layers): made by the runtime",
                        w->dest, root);
  if (pre->fds == NULL) {
    pre->n = cfg->n_mounts;
    pre->fds = xmalloc(pre->n * sizeof *pre->fds);
    for (size_t j = 0; j < pre->n; j++)
      pre->fds[j] = -1;
  }
  pre->fds[i] = fd;
  return 0;
}

/* The config's mount destinations below w's: their mount points are the
 * runtime's, not the agent's changes. */
static int note_mountpoints(const struct oci_config *cfg, struct workspace *w, struct error *err)
{
  cleanup_strv char **dests = NULL;

  for (size_t i = 0; i < cfg->n_mounts; i++)
    if (cfg->mounts[i].destination != NULL) {
      cleanup_free char *d = path_normalize(cfg->mounts[i].destination);
      strv_push(&dests, d);
    }
  return dests == NULL ? 0 : workspace_note_mountpoints(w, dests, err);
}

static int prepare_workspaces(const struct global_opts *g, struct container *c, int *ret_fsfd,
                              char **ret_fspath, bool *ret_own, struct workspace **ret_later,
                              struct premounted *pre, struct error *err)
{
  struct oci_config *cfg = c->config;
  char root[32];
  bool premount = userns_root_other(cfg, root, sizeof root);
  cleanup_close int parent_fd = -1;
  cleanup_free char *parent_path = NULL;
  int r;

  for (size_t i = 0; i < cfg->n_mounts; i++) {
    struct oci_mount *m = &cfg->mounts[i];
    struct workspace *w = NULL;
    struct ws_limits lim;

    if (!profile_mount_is_workspace(m))
      continue;
    ws_limits_default(&lim);
    if (c->profile) {
      lim.max_size = c->profile->workspace.retention.max_size;
      lim.max_age = c->profile->workspace.retention.max_age;
      lim.size = c->profile->workspace.size;
      lim.size_required = c->profile->workspace.size_explicit;
    }
    /* a new image's copy (its fsync on a disk) goes with its mount, by the
     * thread container_create starts (workspace_mount_start) */
    lim.copy_later = !premount; /* premounted: the image must be there */
    if (workspace_prepare(g->store, c->id, m->source, view_start(cfg), m->destination, &lim, &w,
                          err) < 0)
      return error_prefix(err, "workspace `%s`", m->destination);
    c->has_workspace = true;
    if (note_mountpoints(cfg, w, err) < 0) {
      workspace_free(w);
      return error_prefix(err, "workspace `%s`", m->destination);
    }
    /* (a new image is mounted now, not by create's thread: the overlay made
     * here needs it) */
    if (premount && workspace_finish_upper(w, err) < 0) {
      workspace_free(w);
      return error_prefix(err, "workspace `%s`", m->destination);
    }
    if (w->warning != NULL)
      log_warning("create `%s`: workspace `%s`: %s", c->id, m->destination, w->warning);
    /* a sub-agent without an image of its own: its parent's, whose upper is
     * its overlay's top lower layer, attached at the same path (the parent's
     * init attached it in the parent's namespace only) */
    if (!w->upper_later && workspace_fs_fd(w) < 0 && *ret_fspath == NULL &&
        str_has_prefix(m->source, "/proc/") &&
        attach_parent_fs(g, c, premount ? &parent_fd : ret_fsfd,
                         premount ? &parent_path : ret_fspath, err) < 0) {
      workspace_free(w);
      return error_prefix(err, "workspace `%s`", m->destination);
    }
    if (w->upper_later && *ret_fspath == NULL) {
      /* mounted while the init sets up (late_upper): the init waits for it
       * where its mounts reach the workspace's */
      *ret_fspath = workspace_fs_path(w);
    } else if (w->upper_later) {
      workspace_free(w);
      return error_set(err, EINVAL, "workspace `%s`: one workspace with a size limit per container",
                       m->destination);
    }
    if (workspace_fs_fd(w) >= 0 && *ret_fspath == NULL && !premount) { /* one per profile */
      *ret_fsfd = fcntl(workspace_fs_fd(w), F_DUPFD_CLOEXEC, 3);
      if (*ret_fsfd < 0) {
        workspace_free(w);
        return error_errno(err, "workspace `%s`: the image's mount", m->destination);
      }
      *ret_fspath = workspace_fs_path(w);
      *ret_own = true; /* our image, not a parent's (attach_parent_fs) */
    }
    if (record_protected(c, w, err) < 0) {
      workspace_free(w);
      return -1;
    }
    free(m->type);
    free(m->source);
    strv_free(m->options);
    m->type = xstrdup("overlay");
    m->source = xstrdup("overlay");
    m->options = strv_dup(w->mount_optv);
    if (c->profile && c->profile->workspace.volatile_upper && overlay_has_volatile())
      strv_push(&m->options, "volatile");
    if (premount) {
      /* a sub-agent in its parent's user namespace: the parent's image (its
       * upper, our top lower layer) through its mount's fd, as our own
       * upper is (sub-userns-write) */
      r = premount_workspace(cfg, w, i, root, parent_fd, parent_path, pre, err);
      if (parent_fd >= 0)
        close(parent_fd);
      parent_fd = -1;
      free(parent_path);
      parent_path = NULL;
      if (r < 0) {
        workspace_free(w);
        return -1;
      }
    }
    if (w->upper_later)
      *ret_later = w;
    else
      workspace_free(w);
  }
  return 0;
}

/* spawn_opts.ws_fs_late: the new image's mount and its upper/ and work/,
 * made while the init is in its namespaces (workspace_finish_upper). */
struct late_upper {
  struct workspace *w;
  struct monitor_handle *mh; /* gets its own reference, for ROOT */
};

static int late_upper(void *ud, struct error *err)
{
  struct late_upper *l = ud;
  struct workspace *w = l->w;
  int fd;

  if (FAILPOINT_FAILS("create-late-upper"))
    return error_set(err, EIO, "workspace `%s`: mount the image: failpoint", w->dest);
  if (workspace_finish_upper(w, err) < 0)
    return error_prefix(err, "workspace `%s`", w->dest);
  fd = fcntl(workspace_fs_fd(w), F_DUPFD_CLOEXEC, 3);
  if (fd < 0)
    return error_errno(err, "workspace `%s`: the image's mount", w->dest);
  if (l->mh->pid > 0 && l->mh->upper_fs < 0)
    l->mh->upper_fs = fcntl(fd, F_DUPFD_CLOEXEC, 3); /* else the monitor mounts it */
  /* ours goes: the init's copy (and later the monitor's) hold the mount */
  workspace_unmount(w);
  return fd;
}

/* Does the container keep anything in the data directory (a workspace, a
 * trail in the default place)? */
static bool uses_data_dir(const struct container *c)
{
  const struct oci_config *cfg = c->config;

  if (c->profile && c->profile->audit.enabled && c->profile->audit.dir == NULL)
    return true;
  for (size_t i = 0; i < cfg->n_mounts; i++)
    if (profile_mount_is_workspace(&cfg->mounts[i]))
      return true;
  return false;
}

/* The data directory before anything is written to it: this root's store,
 * host-wide retention when due, and a clear refusal when the disk is too
 * full to keep the container's work and trail (never a silently lost
 * trail).  What retention removed goes to the container's trail too, once
 * it exists (*ret_removed: JSON fields). */
static int prepare_data(const struct global_opts *g, struct container *c, char ***ret_removed,
                        struct error *err)
{
  struct datadir_sweep s = {
      .data_dir = g->data_dir,
      .conf = g->conf,
      .skip_root = g->root,
      .skip_id = c->id,
  };

  if (!uses_data_dir(c))
    return 0;
  if (datadir_store_prepare(g->data_dir, g->root, err) < 0 ||
      data_adopt_legacy(g, c->id, err) < 0 || datadir_create_check(&s, ret_removed, err) < 0)
    return -1;
  return 0;
}

void container_abort(struct container *c, const struct global_opts *g)
{
  struct error e = {0};
  int pfd;
  cleanup_free char *parent = NULL;
  char *slash;

  /* by its start time too: a pid recorded without one is no process of ours (proc_alive would
   * take any process at that pid for it) */
  if (c->state->pid > 0 && c->state->pid_start_time != 0)
    proc_kill_wait(c->state->pid, c->state->pid_start_time, SIGKILL, 2000);
  egress_teardown(c, g);
  if (c->cgroup && cgroup_destroy(c->cgroup, &e) < 0)
    log_warning("create `%s`: remove cgroup: %s", c->id, e.msg);
  if (c->has_workspace)
    workspace_abandon(g->store, c->id);
  parent = xstrdup(c->dir);
  slash = strrchr(parent, '/');
  *slash = '\0';
  pfd = open(*parent ? parent : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (pfd >= 0) {
    rm_rf_at(pfd, slash + 1);
    close(pfd);
  }
}

static void add_mount(struct oci_config *cfg, const char *dest, const char *type, const char *src,
                      const char *const *opts)
{
  struct oci_mount *m;

  cfg->mounts = xrealloc(cfg->mounts, (cfg->n_mounts + 1) * sizeof *cfg->mounts);
  m = &cfg->mounts[cfg->n_mounts++];
  memset(m, 0, sizeof *m);
  m->destination = xstrdup(dest);
  m->type = xstrdup(type);
  m->source = xstrdup(src);
  m->options = NULL;
  for (size_t i = 0; opts[i]; i++)
    strv_push(&m->options, opts[i]);
}

/* The bind the container's /run is (the last mount at /run or /var/run),
 * when it has no agentrt/ directory to mount the sub-agent API on: under
 * the agent profile that bind is read-only, and made writable it would take
 * the mountpoint from the host's directory.  NULL otherwise (an image's
 * /run, a tmpfs, a bind holding agentrt/). */
static const char *run_bind_without_place(const struct oci_config *cfg)
{
  const struct oci_mount *last = NULL;

  for (size_t i = 0; i < cfg->n_mounts; i++) {
    const char *d = cfg->mounts[i].destination;
    size_t n = d != NULL ? strlen(d) : 0;
    while (n > 1 && d[n - 1] == '/')
      n--;
    if (d != NULL &&
        ((n == 4 && strncmp(d, "/run", 4) == 0) || (n == 8 && strncmp(d, "/var/run", 8) == 0)))
      last = &cfg->mounts[i];
  }
  if (last == NULL || last->source == NULL ||
      !(strv_contains(last->options, "bind") || strv_contains(last->options, "rbind") ||
        (last->type != NULL && streq(last->type, "bind"))))
    return NULL;
  {
    cleanup_free char *p = xfmt("%s/agentrt", last->source);
    struct stat st;
    if (stat(p, &st) == 0 && S_ISDIR(st.st_mode))
      return NULL;
  }
  return last->source;
}

/* Sub-agents (monitor/subagents.h): the socket the monitor will serve, the
 * static client, both under a tmpfs at /run/agentrt; the parent's effective
 * profile for its children to narrow.  Returns the listening fd, -1 = off. */
static int prepare_subagents(const struct global_opts *g, struct container *c, struct error *err)
{
  cleanup_free char *client = NULL, *sock = NULL, *json = NULL;
  struct agent_profile *p = NULL;
  const char *const run_opts[] = {"nosuid", "nodev", "noexec", "mode=755", "size=1m", NULL};
  const char *const bin_opts[] = {"bind", "ro", "nosuid", "nodev", NULL};
  const char *const sock_opts[] = {"bind", "nosuid", "nodev", "noexec", NULL};
  size_t len = 0;
  int fd, r;

  if (c->profile == NULL || !c->profile->subagents.enabled)
    return -1;
  {
    const char *src = run_bind_without_place(c->config);
    if (src != NULL) {
      /* docker -v DIR:/run: the container runs, without the API
       * (run-bind-over-run: create failed, no place for /run/agentrt) */
      log_warning("create `%s`: sub-agents are off: /run is the bind of `%s`, which has no "
                  "agentrt/ directory for /run/agentrt (make one there to have them)",
                  c->id, src);
      return -1;
    }
  }
  json = c->profile->subagent_json; /* rendered by policy_apply, else NULL */
  len = c->profile->subagent_len;
  c->profile->subagent_json = NULL; /* ours now: not the monitor's to keep */
  if (json == NULL) {
    if (profile_load(policy_profile_name(g), &p, err) < 0)
      return -2;
    r = profile_to_json(p, &json, &len, err);
    profile_free(p);
    if (r < 0)
      return -2;
  }
  if (write_file_atomic_at(c->dirfd, "subagent-profile.json", json, len, err) < 0)
    return -2;
  if (subagent_client_path(g->data_dir, &client, err) < 0)
    return -2;
  fd = subagent_listen(c->dirfd, err);
  if (fd < 0)
    return -2;
  sock = xfmt("%s/%s", c->dir, SUBAGENT_SOCK);
  add_mount(c->config, "/run/agentrt", "tmpfs", "tmpfs", run_opts);
  add_mount(c->config, SUBPROTO_CLIENT, "bind", client, bin_opts);
  add_mount(c->config, SUBPROTO_SOCK, "bind", sock, sock_opts);
  return fd;
}

/* NOTIFY_SOCKET (container/notify_socket.h): the state directory's notify/
 * bound read-only at /run/notify, where start binds the socket. */
static int prepare_notify(struct container *c, struct error *err)
{
  const char *const opts[] = {"bind", "nosuid", "noexec", "nodev", "ro", NULL};
  cleanup_free char *dir = xfmt("%s/" NOTIFY_STATE_DIR, c->dir);

  if (mkdirat(c->dirfd, NOTIFY_STATE_DIR, 0755) < 0 ||
      fchmodat(c->dirfd, NOTIFY_STATE_DIR, 0755, 0) < 0) /* the umask's */
    return error_errno(err, "notify socket: directory `%s`", dir);
  add_mount(c->config, NOTIFY_CONTAINER_DIR, "bind", dir, opts);
  return 0;
}

/* The process's NOTIFY_SOCKET, in place of any the config gave. */
static void notify_env(struct oci_process *p)
{
  size_t j = 0;

  for (size_t i = 0; p->env && p->env[i]; i++) {
    if (strncmp(p->env[i], "NOTIFY_SOCKET=", 14) == 0)
      free(p->env[i]);
    else
      p->env[j++] = p->env[i];
  }
  if (p->env)
    p->env[j] = NULL;
  strv_push(&p->env, "NOTIFY_SOCKET=" NOTIFY_CONTAINER_SOCKET);
}

/* The monitor: the audit trail and the egress policy's resolver (none when
 * the profile has neither).  Denied packets are listened for in any
 * network namespace but the host's where an egress policy logs them (none
 * without one: a user's sandbox without a network has loopback only, and
 * its monitor may not enter that namespace). */
static void monitor_options(const struct global_opts *g, struct container *c, const char *bundle,
                            struct monitor_opts *mo)
{
  *mo = (struct monitor_opts){
      .root = g->root,
      .store = g->store,
      .id = c->id,
      .state_dirfd = c->dirfd,
      .bundle = bundle,
      .cgroup_path = c->state->cgroup_path,
      .systemd_cgroup = g->systemd_cgroup,
      .in_userns = g->in_userns,
      .profile = c->profile,
      .nflog_group = oci_config_namespace(c->config, OCI_NS_NETWORK) && c->profile != NULL &&
                             c->profile->egress.def != PROFILE_EGRESS_OFF
                         ? MONITOR_NFLOG_GROUP_DEFAULT
                         : -1,
  };
}

/* A rootless engine: the kernel sources (proc connector, fanotify) need
 * host privileges.  Without an egress policy to enforce, the trail keeps the
 * lifecycle events and says why the rest is missing; with real root (or a
 * policy) a failing monitor fails create. */
static bool monitor_optional(const struct global_opts *g, const struct container *c,
                             const struct monitor_opts *mo)
{
  return (geteuid() != 0 || g->in_userns) &&
         (c->profile == NULL || c->profile->egress.def == PROFILE_EGRESS_OFF ||
          mo->egress_sandbox != NULL);
}

/* Does the filter name sc? */
static bool seccomp_names(const struct oci_seccomp *f, const char *sc)
{
  for (size_t i = 0; f != NULL && i < f->n_syscalls; i++)
    for (char **n = f->syscalls[i].names; n != NULL && *n != NULL; n++)
      if (streq(*n, sc))
        return true;
  return false;
}

/* Programs from their exec calls (monitor/monitor_exec.c): where the kernel
 * refuses process events to an unprivileged runtime (a user's sandbox, a
 * rootless engine), when the trail has a refused-call listener and the
 * profile refuses no exec call itself (the monitor lets exec calls go on). */
static bool want_exec_records(const struct global_opts *g, const struct oci_config *cfg,
                              const struct profile_result *pres)
{
  const struct oci_seccomp *own = cfg->linux ? cfg->linux->seccomp : NULL;

  if (pres == NULL || !pres->audit.enabled || pres->extra_seccomp == NULL ||
      (geteuid() == 0 && !g->in_userns) || monitor_proc_adopted() >= 0)
    return false;
  if (own != NULL && own->listener_path != NULL && oci_seccomp_uses_notify(own))
    return false;
  if (seccomp_names(pres->extra_seccomp, "execve") ||
      seccomp_names(pres->extra_seccomp, "execveat"))
    return false;
  return monitor_proc_refused();
}

/* The rule that stops exec calls for the monitor (want_exec_records). */
static void add_exec_rule(struct oci_seccomp *n)
{
  struct oci_seccomp_syscall *sc;

  n->syscalls = xrealloc(n->syscalls, (n->n_syscalls + 1) * sizeof *n->syscalls);
  sc = &n->syscalls[n->n_syscalls++];
  *sc = (struct oci_seccomp_syscall){.action = xstrdup(SECCOMP_ACT_NOTIFY_INTERNAL)};
  sc->names = xmalloc(3 * sizeof *sc->names);
  sc->names[0] = xstrdup("execve");
  sc->names[1] = xstrdup("execveat");
  sc->names[2] = NULL;
}

/* Does the config's own seccomp name a listener?  (one per filter chain) */
static bool own_listener(const struct oci_config *cfg)
{
  const struct oci_seccomp *own = cfg->linux ? cfg->linux->seccomp : NULL;

  return own != NULL && own->listener_path != NULL && oci_seccomp_uses_notify(own);
}

/* Refused-syscall records (monitor/monitor_seccomp.c): the profile's filter
 * with its denied calls as SCMP_ACT_NOTIFY, for the init to load with a
 * listener for the monitor.  Only where monitor_launch makes a listener
 * channel, and not when the config's own seccomp names a listener.  Made
 * before the monitor's fork (notify_hand_over decides after it): then every
 * page it writes is still only ours, not a copy-on-write fault. */
static int notify_variant(const struct global_opts *g, const struct oci_config *cfg,
                          const struct profile_result *pres, bool exec_records,
                          struct sock_fprog **ret, struct error *err)
{
  struct oci_seccomp *n;
  int r;

  *ret = NULL;
  if (!monitor_wants_listener(pres) || own_listener(cfg))
    return 0;
  n = oci_seccomp_dup(pres->extra_seccomp);
  for (size_t i = 0; i < n->n_syscalls; i++) {
    struct oci_seccomp_syscall *sc = &n->syscalls[i];
    /* clone3 stays ENOSYS: libc probes it before every clone; an ERRNO(0)
     * rule (seccomp.denyRecvErr) makes the call a no-op that succeeds, no
     * refusal to record */
    if (!streq(sc->action, "SCMP_ACT_ERRNO") || (sc->names && streq(sc->names[0], "clone3")) ||
        (sc->has_errno_ret && sc->errno_ret == 0))
      continue;
    free(sc->action);
    sc->action = xstrdup(SECCOMP_ACT_NOTIFY_INTERNAL);
  }
  if (exec_records)
    add_exec_rule(n);
  r = seccomp_cache_get(g->data_dir, n, ret, err);
  oci_seccomp_free(n);
  return r;
}

/* After the monitor's launch: a config with its own listener has the
 * monitor told why there are no records; without a listener channel (no
 * monitor after all) the notify variant goes. */
static void notify_hand_over(const struct oci_config *cfg, struct monitor_handle *mh,
                             struct sock_fprog **notify)
{
  if (mh->notify_fd >= 0 && own_listener(cfg)) {
    static const char off[] = "OFF the config's seccomp has its own listener (listenerPath)";
    if (send(mh->notify_fd, off, sizeof off - 1, MSG_NOSIGNAL) < 0) {
      /* the monitor is gone: create fails at its ready check */
    }
    close(mh->notify_fd);
    mh->notify_fd = -1;
  }
  if (mh->notify_fd < 0) {
    free(*notify);
    *notify = NULL;
  }
}

/* A monitor that failed: fatal (-1, err kept) unless monitor_optional();
 * then the trail says why the rest is missing and create goes on. */
static int monitor_failed(const struct global_opts *g, struct container *c,
                          const struct monitor_opts *mo, struct monitor_handle *mh,
                          struct error *err)
{
  struct jbuf why = {0};

  if (!monitor_optional(g, c, mo))
    return -1;
  jb_key_str(&why, "source", "monitor");
  jb_key_str(&why, "error", err->msg);
  audit_cli_event(g->root, c->id, "audit_error", jb_str(&why));
  jb_free(&why);
  log_debug("create `%s`: audit monitor unavailable without host privileges: %s", c->id, err->msg);
  error_clear(err);
  monitor_abandon(mh);
  unlinkat(c->dirfd, "monitor.pid", 0);
  return 0;
}

static int check_terminal(const struct create_opts *o, const struct oci_config *cfg,
                          struct error *err)
{
  bool terminal = cfg->process && cfg->process->terminal;

  if (terminal && o->console_socket == NULL && !o->foreground)
    return error_set(err, 0,
                     "process.terminal is true but --console-socket was not given: a "
                     "detached container needs somewhere to send its terminal");
  if (!terminal && o->console_socket != NULL)
    return error_set(err, 0, "--console-socket given but process.terminal is false");
  /* as runc: the socket is for a detached container's terminal; in the
   * foreground run relays the terminal itself */
  if (o->console_socket != NULL && o->foreground)
    return error_set(err, 0, "--console-socket given but run is not detached (-d)");
  return 0;
}

/* --no-pivot in a user namespace of the container's own, with no /proc in the
 * config: chroot leaves the caller's /proc mounted below the new root, where
 * it cannot be detached (a locked mount) and where the kernel counts it as a
 * fully visible procfs, so `mount -t proc` from inside would be allowed
 * (pivot_root drops it, and runc's container cannot mount one).  Refused. */
static int check_no_pivot(const struct create_opts *o, const struct oci_config *cfg,
                          struct error *err)
{
  bool new_userns = false, has_proc = false;
  const char *prop;

  if (!o->no_pivot || cfg->linux == NULL)
    return 0;
  /* the caller's mounts stay below the chroot; private, the container's
   * namespace keeps each one the caller unmounts (a disk stays busy): runc
   * refuses it in these words (no-pivot-private) */
  prop = cfg->linux->rootfs_propagation;
  if (prop != NULL && (streq(prop, "private") || streq(prop, "rprivate")))
    return error_set(err, 0, "rootfsPropagation of [r]private is not safe without pivot_root");
  for (size_t i = 0; i < cfg->linux->n_namespaces; i++)
    if (cfg->linux->namespaces[i].type == OCI_NS_USER && cfg->linux->namespaces[i].path == NULL)
      new_userns = true;
  for (size_t i = 0; i < cfg->n_mounts; i++)
    if (cfg->mounts[i].destination && streq(cfg->mounts[i].destination, "/proc") &&
        cfg->mounts[i].type && streq(cfg->mounts[i].type, "proc"))
      has_proc = true;
  if (!new_userns || has_proc)
    return 0;
  return error_set(err, 0,
                   "--no-pivot with a new user namespace and no /proc mount: the caller's /proc "
                   "would stay below the root, and a procfs mount from inside would be allowed; "
                   "add a /proc mount or drop --no-pivot");
}

struct early_start {
  struct container *c;
  const struct create_opts *o;
};

/* state.json (and the pid file) for the init, cloned and known by pid */
static int record_init(void *ud, pid_t pid, uint64_t start_time, struct error *err)
{
  struct early_start *e = ud;
  struct container *c = e->c;

  c->state->pid = pid;
  c->state->pid_start_time = start_time;
  free(c->state->status);
  /* run has no exec.fifo: its container reads as running from here on, so
   * record that now and run need not rewrite state.json after START. */
  c->state->status = xstrdup(e->o->run_mode ? "running" : "created");
  c->state->started = e->o->run_mode;
  c->status = STATUS_CREATED;
  if (container_save_state(c, err) < 0 || write_pid_file(e->o->pid_file, pid, err) < 0)
    return -1;
  return 0;
}

/* run's init may go on from READY to its exec without waiting for us when
 * nothing of ours comes between: no monitor (whose sources must be open
 * before the first exec), no console socket or terminal to hand over, no
 * prestart or createRuntime hooks (they run between the init's own steps) */
/* systemd socket activation: LISTEN_FDS sockets at fds 3.. when LISTEN_PID
 * names us.  They go to the container first (then --preserve-fds's), and its
 * process gets LISTEN_FDS=N and LISTEN_PID=1, as runc and crun pass them
 * (Podman's socket-activated containers); 0 when not activated. */
static int listen_fds(void)
{
  const char *fds = getenv("LISTEN_FDS"), *pid = getenv("LISTEN_PID");
  int n, p;

  if (fds == NULL || pid == NULL || parse_int(pid, &p) < 0 || p != getpid() ||
      parse_int(fds, &n) < 0 || n <= 0 || n > 4096)
    return 0;
  return n;
}

static bool can_start_early(const struct create_opts *o, const struct oci_config *cfg,
                            const struct monitor_handle *mh)
{
  /* (NOTIFY_SOCKET: run binds the socket before the program runs) */
  return o->run_mode && mh->pid <= 0 && o->console_socket == NULL && notify_socket_host() == NULL &&
         !(cfg->process != NULL && cfg->process->terminal) &&
         cfg->hooks.n[OCI_HOOK_PRESTART] == 0 && cfg->hooks.n[OCI_HOOK_CREATE_RUNTIME] == 0;
}

/* Lock a state directory without waiting for a live create.  create-killed: the lock of a
 * create killed by SIGKILL outlives it for some milliseconds, held by the children it forked
 * (its init until the init closes the descriptor, its monitor) until they see it gone and
 * exit: /proc/locks names the create, which is dead.  Such a lock is waited for (2 s at most). */
static bool lock_of_killed_create(int dirfd)
{
  pid_t holder;

  for (int i = 0; i < 200; i++) {
    if (flock(dirfd, LOCK_EX | LOCK_NB) == 0)
      return true;
    if (errno != EWOULDBLOCK)
      return false;
    holder = proc_flock_holder(dirfd);
    if (holder > 0 && proc_alive(holder, 0))
      return false; /* a live create's */
    /* (none named: let go between the two looks, or /proc/locks unread: try again) */
    (void)poll(NULL, 0, 10);
  }
  return false;
}

/* create-killed: a create killed by SIGKILL cleaned nothing: its state directory has no
 * state.json and no one's lock, and its cgroup and monitor may be there.  A create of that id
 * removes it as `delete` does, then takes the id: 1 = removed, 0 = not such a leftover (a
 * live create's, a container's, an empty directory: one a create has not locked yet where
 * container_new makes it in place, or a create killed before it wrote anything). */
static int reclaim_killed_create(const struct global_opts *g, const char *id, struct error *err)
{
  struct container *c = NULL;
  struct error e2 = {0};
  int r;

  if (container_load(g, id, 0, &c, &e2) < 0)
    return 0;
  if (c->status != STATUS_CREATING || !lock_of_killed_create(c->dirfd) ||
      faccessat(c->dirfd, "state.json", F_OK, AT_SYMLINK_NOFOLLOW) == 0 ||
      !fs_dir_has_entries(c->dirfd)) {
    container_free(c);
    return 0;
  }
  c->lock = LOCK_EX; /* (lock_of_killed_create's) */
  log_warning("create `%s`: removing what a killed create of it left", id);
  subagent_reap_children("/proc/self/exe", g->root, g->data_dir, id);
  r = container_destroy(c, g, err);
  container_free(c);
  return r < 0 ? -1 : 1;
}

/* bundle-path-resolved: the bundle as runc records it (it chdirs there and
 * asks getcwd): absolute, clean, links resolved; as given when it cannot be
 * resolved (its config.json then names what is missing). */
static char *bundle_path(const char *given)
{
  char *real = realpath(given, NULL);

  return real != NULL ? real : path_absolute(given);
}

int container_create(const struct global_opts *g, const struct create_opts *o,
                     struct container **ret_c, struct spawn_result *ret_r, struct error *err)
{
  cleanup_free char *bundle = bundle_path(o->bundle ? o->bundle : ".");
  cleanup_free char *rootfs = NULL;
  cleanup_free char *cfg_json = NULL;
  struct oci_config *cfg = NULL;
  struct profile_result *pres = NULL;
  bool engine_asked;
  struct container *c = NULL;
  struct spawn_opts so = {0};
  struct monitor_opts mo = {0};
  struct monitor_handle mh = {.fd = -1, .notify_fd = -1, .upper_fs = -1};
  struct tls_ca *tls_ca = NULL;
  cleanup_close int agent_fd = -1;
  cleanup_free char *pod_sandbox = NULL;
  cleanup_close int netns_lock = -1; /* egress_netns_lock: until create ends */
  cleanup_free struct sock_fprog *extra = NULL, *notify = NULL, *own_bpf = NULL;
  struct stat st;
  size_t cfg_len = 0;
  cleanup_strv char **removed = NULL;
  cleanup_free char *ws_fs_path = NULL;
  cleanup_close int ws_fs_fd = -1;
  bool ws_fs_own = false;
  struct late_upper late;
  __attribute__((cleanup(premounted_close))) struct premounted premounted = {0};
  struct workspace *ws_later = NULL;
  __attribute__((cleanup(netns_early_close))) struct netns_early netns = NETNS_EARLY_INIT;
  struct early_start early;
  int r, nlisten;

  if (validate_container_id(o->id, err) < 0)
    return -1;
  if (o->config_json != NULL
          ? oci_config_parse(o->config_json, o->config_len, "config.json", &cfg, err) < 0
          : load_bundle_config(bundle, o->config, &cfg, err) < 0)
    return error_prefix(err, "create `%s`: bundle `%s`", o->id, bundle);
  if (cfg->process != NULL && cfg->process->caps.n_unknown > 0)
    log_warning("create `%s`: process.capabilities: %u unknown (%s), ignoring", o->id,
                cfg->process->caps.n_unknown, cfg->process->caps.unknown);
  engine_asked = cfg->linux && cgroup_resources_requested(cfg->linux->resources);
  rootfs = rootfs_path(bundle, cfg);
  mounts_dest_from_rootfs(cfg, rootfs);
  if (policy_apply(g, o->profile, o->id, bundle, rootfs, &cfg, &pres, err) < 0) {
    oci_config_free(cfg);
    return error_prefix(err, "create `%s`", o->id);
  }
  /* the kernel makes the network namespace while we do the rest; only
   * where the rest (the monitor, its trail and policy, the workspace) is
   * longer than the thread's own start and end (netns_early.h) */
  if (pres != NULL && (pres->audit.enabled || pres->egress.def != PROFILE_EGRESS_OFF) &&
      netns_early_wanted(cfg, g->in_userns))
    netns_early_start(&netns);
  /* (errno is stale when stat succeeds: a file there said "No such file") */
  if (stat(rootfs, &st) < 0 || (errno = ENOTDIR, !S_ISDIR(st.st_mode))) {
    error_set(err, errno, "create `%s`: rootfs `%s`", o->id, rootfs);
    goto fail_early;
  }
  if (check_rootfs_nolink(bundle, cfg, rootfs, err) < 0) {
    error_prefix(err, "create `%s`", o->id);
    goto fail_early;
  }
  if (check_terminal(o, cfg, err) < 0 || check_no_pivot(o, cfg, err) < 0 ||
      lsm_check_process(cfg->process, cfg->linux ? cfg->linux->mount_label : NULL, err) < 0) {
    error_prefix(err, "create `%s`", o->id);
    goto fail_early;
  }
  /* create-cancelled: from here a SIGTERM (SIGINT, SIGHUP) cleans up and fails (run-cancelled:
   * a foreground run's too, though it blocked them for forwarding) */
  process_cancel_arm(o->foreground);
  r = container_new(g, o->id, &c, err);
  if (r < 0 && err->code == EEXIST) {
    struct error e2 = {0};
    r = reclaim_killed_create(g, o->id, &e2);
    if (r < 0)
      *err = e2;
    else if (r > 0) {
      error_clear(err);
      r = container_new(g, o->id, &c, err);
    } else
      r = -1;
  }
  if (r < 0) {
    error_prefix(err, "create `%s`", o->id);
    goto fail_early;
  }
  c->config = cfg;
  c->profile = pres;
  fill_state(c, bundle, rootfs);
  c->state->no_new_keyring = o->no_new_keyring; /* exec keeps the caller's keyring too */
  c->state->profile = xstrdup(policy_profile_name(g));
  FAILPOINT("create-after-statedir");
  if (prepare_data(g, c, &removed, err) < 0 ||
      prepare_workspaces(g, c, &ws_fs_fd, &ws_fs_path, &ws_fs_own, &ws_later, &premounted, err) < 0)
    goto fail;
  /* a new image's copy, device and mount, by a thread while create does the
   * rest (late_upper takes them).  Started here, not in workspace_prepare before
   * the host dir's manifest: beside the early network namespace's thread it
   * made the agent run slower (paired 1.06, bench/README.md). */
  if (ws_later != NULL)
    workspace_mount_start(ws_later);
  if (secrets_tls_prepare(c, cfg, rootfs, pres, &tls_ca, err) < 0)
    goto fail;
  agent_fd = prepare_subagents(g, c, err);
  if (agent_fd == -2)
    goto fail;
  if (cfg->process != NULL && notify_socket_host() != NULL && prepare_notify(c, err) < 0)
    goto fail;
  if (oci_config_to_json(cfg, &cfg_json, &cfg_len, err) < 0 ||
      container_save_config(c, cfg_json, cfg_len, err) < 0 ||
      policy_record(c->dirfd, c->id, pres, err) < 0 || setup_cgroup(g, c, engine_asked, err) < 0)
    goto fail;
  FAILPOINT("create-after-cgroup");
  FAILPOINT_PAUSE("create-hold-locked");
  if (pres && egress_check(c, &pres->egress, err) < 0)
    goto fail;
  monitor_options(g, c, bundle, &mo);
  mo.tls_ca = tls_ca;
  mo.agent_fd = agent_fd;
  mo.data_dir = g->data_dir;
  mo.rootfs = rootfs;
  mo.profile_name = c->state->profile;
  mo.config = c->config;
  mo.exec_records = want_exec_records(g, cfg, pres);
  /* a pod's container: the sandbox's policy, with our entries added */
  if (pres && pres->egress.def != PROFILE_EGRESS_OFF) {
    netns_lock = egress_netns_lock(g, c);
    if (egress_pod_sandbox(g, c, &pod_sandbox, err) < 0 ||
        (pod_sandbox && egress_pod_join(g, pod_sandbox, &pres->egress, err) < 0))
      goto fail;
    if (pod_sandbox &&
        write_file_atomic_at(c->dirfd, EGRESS_POD_MARK, pod_sandbox, strlen(pod_sandbox), err) < 0)
      goto fail;
    if (pod_sandbox) {
      mo.egress_sandbox = pod_sandbox;
      mo.nflog_group = -1; /* the sandbox's monitor has the group */
    }
  }
  /* the filters before the monitor's fork (notify_variant) */
  if (pres && pres->extra_seccomp) {
    if (seccomp_cache_get(g->data_dir, pres->extra_seccomp, &extra, err) < 0)
      goto fail;
    /* exec loads the same filter from here */
    if (write_file_atomic_at(c->dirfd, "seccomp-extra.bpf", (const char *)extra->filter,
                             extra->len * sizeof(struct sock_filter), err) < 0)
      goto fail;
    if (notify_variant(g, cfg, pres, mo.exec_records, &notify, err) < 0)
      goto fail;
  }
  if (monitor_launch(&mo, &mh, err) < 0 && monitor_failed(g, c, &mo, &mh, err) < 0)
    goto fail;
  /* the monitor has its copy of the CA's key; ours goes */
  tls_plugin_ca_free(tls_ca);
  tls_ca = NULL;
  for (size_t i = 0; removed && removed[i]; i++)
    audit_cli_event(g->root, c->id, "retention", removed[i]);
  /* after the config was saved: exec's processes are not activated */
  nlisten = listen_fds();
  if (nlisten > 0 && cfg->process != NULL) {
    cleanup_free char *kv = xfmt("LISTEN_FDS=%d", nlisten);
    strv_push(&cfg->process->env, kv);
    strv_push(&cfg->process->env, "LISTEN_PID=1");
  }
  if (cfg->process != NULL && notify_socket_host() != NULL) /* exec's processes: none */
    notify_env(cfg->process);
  so.c = c;
  so.bundle = bundle;
  so.rootfs = rootfs;
  so.no_pivot = o->no_pivot;
  so.pdeathsig = o->pdeathsig;
  so.no_new_keyring = o->no_new_keyring;
  so.use_fifo = !o->run_mode;
  so.preserve_fds = o->preserve_fds + nlisten;
  so.g = g;
  so.on_clone = monitor_go;
  if (mh.pid > 0) /* else the init need not say ROOTED */
    so.on_rooted = monitor_root;
  so.netns_early = &netns;
  early = (struct early_start){.c = c, .o = o};
  if (can_start_early(o, cfg, &mh)) {
    so.start_early = record_init;
    so.start_ud = &early;
  }
  so.ws_fs_path = ws_fs_path;
  so.ws_fs_fd = ws_fs_fd;
  so.premounted = premounted.fds;
  so.n_premounted = premounted.n;
  if (ws_later != NULL) {
    late = (struct late_upper){.w = ws_later, .mh = &mh};
    so.ws_fs_late = late_upper;
    so.ws_fs_ud = &late;
  }
  /* the monitor reaches the upper layer through our mount (monitor_root) */
  if (mh.pid > 0 && ws_fs_own && ws_fs_fd >= 0) /* -1: it mounts the image itself */
    mh.upper_fs = fcntl(ws_fs_fd, F_DUPFD_CLOEXEC, 3);
  so.ud = &mh;
  if (pres && pres->extra_seccomp) {
    so.extra_bpf = extra;
    notify_hand_over(cfg, &mh, &notify);
    so.notify_bpf = notify;
    so.notify_fd = mh.notify_fd;
    /* and its notify variant, with a listener for the monitor of its own */
    if (notify != NULL &&
        write_file_atomic_at(c->dirfd, "seccomp-notify.bpf", (const char *)notify->filter,
                             notify->len * sizeof(struct sock_filter), err) < 0)
      goto fail;
  }
  /* SCMP_ACT_NOTIFY: connected now, used by the init when it loads its
   * filter (it cannot reach the host's socket from inside) */
  so.listener_fd =
      seccomp_listener_connect(c->config->linux ? c->config->linux->seccomp : NULL, err);
  if (so.listener_fd == -1)
    goto fail;
  /* The config's own filter through the same cache, compiled here rather
   * than by the init after START: an engine's default profile (Docker's,
   * containerd's RuntimeDefault: ~350 names) is one filter for all its
   * containers, and its compile was most of `start` (bench/README.md).
   * Not a listener's (the init loads that one with a new listener); a
   * filter that does not compile is left to the init, which names it. */
  if (c->config->linux && c->config->linux->seccomp &&
      !oci_seccomp_uses_notify(c->config->linux->seccomp)) {
    struct error ignore = {0};
    if (seccomp_cache_get(g->data_dir, c->config->linux->seccomp, &own_bpf, &ignore) < 0)
      error_clear(&ignore);
    so.config_bpf = own_bpf;
  }
  /* a new image's thread (workspace_mount_start) ends before the init's
   * clone: that clone is no fork of glibc's (os/early_thread.h) */
  workspace_mount_join(ws_later);
  r = spawn_init(&so, ret_r, err);
  workspace_free(ws_later);
  ws_later = NULL;
  if (so.listener_fd >= 0)
    close(so.listener_fd);
  if (r < 0)
    goto fail;
  if (mh.notify_fd >= 0) { /* the init has its copy */
    close(mh.notify_fd);
    mh.notify_fd = -1;
  }
  FAILPOINT("create-after-spawn");
  c->state->pid = ret_r->pid;
  c->state->pid_start_time = ret_r->start_time;
  /* the monitor opens its sources and installs the egress rules while we
   * record the state; the init runs nothing before it is ready */
  if (monitor_attach(&mh, ret_r->pid, ret_r->start_time, err) < 0 &&
      monitor_failed(g, c, &mo, &mh, err) < 0)
    goto fail;
  if (!ret_r->started && record_init(&early, ret_r->pid, ret_r->start_time, err) < 0)
    goto fail;
  if (monitor_wait_ready(&mh, err) < 0 && monitor_failed(g, c, &mo, &mh, err) < 0)
    goto fail;
  if (mh.warning != NULL)
    log_warning("create `%s`: %s", c->id, mh.warning);
  monitor_handle_close(&mh);
  if (agent_fd >= 0) { /* the monitor serves it */
    close(agent_fd);
    agent_fd = -1;
  }
  if (o->console_socket && ret_r->pty_master >= 0) {
    if (console_hand_over(o->console_socket, &ret_r->pty_master, err) < 0)
      goto fail;
  } else if (ret_r->pty_master >= 0) {
    console_clear_onlcr(ret_r->pty_master); /* before START: no output yet */
  }
  FAILPOINT("create-after-state");
  if (process_cancel_commit() < 0) { /* one came after the last wait */
    process_cancel_error(err);
    goto fail;
  }
  egress_netns_unlock(g, &netns_lock);
  log_debug("create `%s`: init %d ready", c->id, ret_r->pid);
  *ret_c = c;
  return 0;

fail_early:
  process_cancel_hold();
  oci_config_free(cfg);
  profile_result_free(pres);
  return -1;
fail:
  process_cancel_hold(); /* what was made goes, uninterrupted */
  workspace_free(ws_later);
  tls_plugin_ca_free(tls_ca);
  error_prefix(err, "create `%s`", o->id);
  if (ret_r->pty_master >= 0)
    close(ret_r->pty_master);
  if (ret_r->sync_fd >= 0)
    close(ret_r->sync_fd);
  ret_r->pty_master = ret_r->sync_fd = -1;
  /* the monitor leaves at EOF on its channel, or when its init is dead */
  if (c->state->pid > 0 && c->state->pid_start_time != 0)
    proc_kill_wait(c->state->pid, c->state->pid_start_time, SIGKILL, 2000);
  monitor_abandon(&mh);
  container_abort(c, g);
  egress_netns_unlock(g, &netns_lock);
  container_run_poststop(c, "create");
  container_free(c);
  return -1;
}

int run_poststart_hooks(struct container *c, struct error *err)
{
  const struct oci_hooks *h = &c->config->hooks;
  cleanup_free char *sj = NULL;

  if (h->n[OCI_HOOK_POSTSTART] == 0)
    return 0;
  free(c->state->status);
  c->state->status = xstrdup("running");
  if (container_state_json(c, &sj, err) < 0 ||
      hooks_run(h->list[OCI_HOOK_POSTSTART], h->n[OCI_HOOK_POSTSTART], "poststart",
                c->state->bundle, sj, err) < 0) {
    proc_kill_wait(c->state->pid, c->state->pid_start_time, SIGKILL, 2000);
    return -1;
  }
  return 0;
}

enum {
  O_BUNDLE = 1,
  O_PIDFILE,
  O_CONSOLE,
  O_NOPIVOT,
  O_NOKEYRING,
  O_PRESERVE,
  O_DETACH,
  O_CONFIG,
  O_HELP,
};

static const struct opt_spec create_specs[] = {
    {"bundle", 'b', true, O_BUNDLE},
    {"pid-file", 0, true, O_PIDFILE},
    {"console-socket", 0, true, O_CONSOLE},
    {"no-pivot", 0, false, O_NOPIVOT},
    {"no-new-keyring", 0, false, O_NOKEYRING},
    {"preserve-fds", 0, true, O_PRESERVE},
    {"detach", 'd', false, O_DETACH},
    {"config", 'f', true, O_CONFIG},
    {"help", 'h', false, O_HELP},
    {NULL, 0, false, 0},
};

int cmd_create(const struct global_opts *g, int argc, char **argv, struct error *err)
{
  struct opt_iter it = {argc, argv, 1};
  struct create_opts o = {0};
  struct container *c = NULL;
  struct spawn_result r;
  const char *val;
  int id, n;

  opt_permute(&it, create_specs);
  while ((n = opt_next(&it, create_specs, &id, &val, "create", err)) == 1) {
    switch (id) {
    case O_BUNDLE:
      o.bundle = val;
      break;
    case O_PIDFILE:
      o.pid_file = val;
      break;
    case O_CONSOLE:
      o.console_socket = val;
      break;
    case O_NOPIVOT:
      o.no_pivot = true;
      break;
    case O_NOKEYRING:
      o.no_new_keyring = true;
      break;
    case O_PRESERVE:
      if (parse_int(val, &o.preserve_fds) < 0 || o.preserve_fds < 0 || o.preserve_fds > 4096)
        return error_set(err, 0, "create: --preserve-fds: invalid number `%s`", val);
      break;
    case O_DETACH:
      break; /* create always detaches */
    case O_CONFIG:
      o.config = val;
      break;
    case O_HELP:
      printf("Usage: agentrt create [--bundle DIR] [--config FILE] [--pid-file FILE]\n"
             "                      [--console-socket SOCK] [--no-pivot] [--no-new-keyring]\n"
             "                      [--preserve-fds N] ID\n");
      return 0;
    }
  }
  if (n < 0)
    return -1;
  if (argc - it.i != 1)
    return error_set(err, 0, "create: expected exactly one container id");
  o.id = argv[it.i];
  if (container_create(g, &o, &c, &r, err) < 0)
    return -1;
  if (r.sync_fd >= 0)
    close(r.sync_fd);
  container_free(c);
  return 0;
}
