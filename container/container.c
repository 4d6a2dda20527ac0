/* container.c - state directory, locking and status (see container.h). */
#include "container/container.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/failpoint.h"
#include "common/log.h"
#include "common/util.h"
#include "container/audit_cli.h"
#include "container/egress_pod.h"
#include "container/process.h"
#include "monitor/monitor.h"
#include "os/fsutil.h"
#include "os/procfs.h"
#include "workspace/workspace.h"

const char *container_status_name(enum container_status s)
{
  switch (s) {
  case STATUS_CREATING:
    return "creating";
  case STATUS_CREATED:
    return "created";
  case STATUS_RUNNING:
    return "running";
  case STATUS_PAUSED:
    return "paused";
  default:
    return "stopped";
  }
}

int state_root_prepare(const char *root, struct error *err)
{
  char *p;
  int ret = 0;

  /* an existing root (or one whose parent is there): one call */
  if (mkdir(root, 0700) == 0 || errno == EEXIST)
    return 0;
  if (errno != ENOENT)
    return error_errno(err, "create state root `%s`", root);
  p = xstrdup(root);
  for (char *s = p + 1; *s; s++) {
    if (*s != '/')
      continue;
    *s = '\0';
    if (mkdir(p, 0711) < 0 && errno != EEXIST)
      ret = error_errno(err, "create state root `%s`", p);
    *s = '/';
    if (ret < 0)
      break;
  }
  if (ret == 0 && mkdir(p, 0700) < 0 && errno != EEXIST)
    ret = error_errno(err, "create state root `%s`", p);
  free(p);
  return ret;
}

static struct container *container_alloc(const struct global_opts *g, const char *id)
{
  struct container *c = xmalloc0(sizeof *c);
  c->id = xstrdup(id);
  c->dir = xfmt("%s/%s", g->root, id);
  c->dirfd = -1;
  c->status = STATUS_STOPPED;
  return c;
}

/* A killed create's temporary state directory (.creating.<id>, see statedir_make_locked) in
 * rootfd, removed when it is provably dead: the caller holds rootfd's LOCK_EX (so no create is
 * between making one and locking it), no one holds its lock, and it is empty (rmdir).  Its lock
 * is held while it is removed.  1 = removed, 0 = left (live, or not such a directory). */
static int statedir_tmp_remove_dead(int rootfd, const char *name)
{
  int fd = openat(rootfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  int r = 0;

  if (fd < 0)
    return 0;
  if (flock(fd, LOCK_EX | LOCK_NB) == 0 && unlinkat(rootfd, name, AT_REMOVEDIR) == 0)
    r = 1;
  close(fd);
  return r;
}

int container_remove_dead_tmp(const char *root, char **names)
{
  int rootfd, n = 0;

  if (names == NULL || names[0] == NULL)
    return 0;
  rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  /* a create holds LOCK_SH from making its directory until it locks it: skip while one does */
  if (rootfd >= 0 && flock(rootfd, LOCK_EX | LOCK_NB) == 0)
    for (size_t i = 0; names[i] != NULL; i++)
      n += statedir_tmp_remove_dead(rootfd, names[i]);
  if (rootfd >= 0)
    close(rootfd);
  return n;
}

/* How long a create waits for the state root's lock (create-wait-stopped): the lock is held
 * for microseconds by a live create, for ever by one stopped (SIGSTOP, a debugger) there. */
#define ROOT_LOCK_WAIT_MS 5000

/* flock(fd, op), waiting at most ROOT_LOCK_WAIT_MS; EWOULDBLOCK when not in time. */
static int flock_bounded(int fd, int op)
{
  struct timespec ts = {0, 10 * 1000 * 1000};

  for (int waited = 0;; waited += 10) {
    if (flock(fd, op | LOCK_NB) == 0)
      return 0;
    if (errno != EWOULDBLOCK && errno != EINTR)
      return -1;
    if (waited >= ROOT_LOCK_WAIT_MS) {
      errno = EWOULDBLOCK;
      return -1;
    }
    nanosleep(&ts, NULL);
  }
}

static int root_lock_failed(struct error *err, int e, const struct global_opts *g,
                            const struct container *c)
{
  if (e == EWOULDBLOCK)
    return error_set(err, e,
                     "state root `%s` still locked after %d s: another create (of `%s`?) is "
                     "stopped between making and locking its state directory",
                     g->root, ROOT_LOCK_WAIT_MS / 1000, c->id);
  return error_set(err, e, "lock state root `%s`", g->root);
}

/* The state directory of a new container, locked before any other process can see it
 * (create-delete-race): made under a temporary name, locked, then renamed to <root>/<id>.
 * Made as <id> and locked after, a `delete` (or a create taking over a killed create's id)
 * could lock it first, judge the empty directory a killed create's leftover and remove it
 * while this create went on to clone its init: an init no command could find.  Where the
 * file system has no RENAME_NOREPLACE, the directory is made in place and, once locked,
 * checked to be still there (whoever removes one holds its lock while it does).
 * The temporary name is .creating.<id>, and the create holds the root's LOCK_SH from before it
 * makes it until it holds its lock: a create killed in between leaves it empty and unlocked,
 * and a later create of that id (here) or `list` (container_remove_dead_tmp), holding the
 * root's LOCK_EX, removes it (create-tmp-leftover) - never a live create's. */
static int statedir_make_locked(const struct global_opts *g, struct container *c, struct error *err)
{
  cleanup_free char *name = xfmt(".creating.%s", c->id);
  cleanup_free char *tmp = xfmt("%s/%s", g->root, name);
  struct stat st;
  int e, rootfd;

  rootfd = open(g->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0 || flock_bounded(rootfd, LOCK_SH) < 0) {
    e = errno;
    if (rootfd >= 0)
      close(rootfd);
    return root_lock_failed(err, e, g, c);
  }
  for (int tries = 0; mkdir(tmp, 0700) < 0; tries++) {
    int r;
    e = errno;
    if (e != EEXIST || tries == 3) {
      close(rootfd);
      goto fail;
    }
    /* another create of this id at work, or a killed one's: judged with the root's LOCK_EX
     * (waited for: those between making and locking theirs are microseconds from done) */
    flock(rootfd, LOCK_UN);
    if (flock_bounded(rootfd, LOCK_EX) < 0) {
      e = errno;
      close(rootfd);
      return root_lock_failed(err, e, g, c);
    }
    r = statedir_tmp_remove_dead(rootfd, name);
    if (r == 0 && faccessat(rootfd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0) {
      close(rootfd); /* a live create of this id holds it */
      goto fail;
    }
    if (flock_bounded(rootfd, LOCK_SH) < 0) { /* (a conversion: again) */
      e = errno;
      close(rootfd);
      return root_lock_failed(err, e, g, c);
    }
  }
  FAILPOINT_PAUSE("create-hold-unlocked");
  c->dirfd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  if (c->dirfd < 0 || flock(c->dirfd, LOCK_EX) < 0) {
    error_errno(err, "open state directory `%s`", tmp);
    rmdir(tmp);
    close(rootfd);
    return -1;
  }
  close(rootfd);
  if (FAILPOINT_FAILS("create-in-place-hold-unlocked")) /* as without RENAME_NOREPLACE */
    errno = EINVAL;
  else if (renameat2(AT_FDCWD, tmp, AT_FDCWD, c->dir, RENAME_NOREPLACE) == 0)
    return 0;
  e = errno;
  rmdir(tmp);
  close(c->dirfd);
  c->dirfd = -1;
  if (e != EINVAL)
    goto fail;
  /* no RENAME_NOREPLACE here */
  if (mkdir(c->dir, 0700) < 0) {
    e = errno;
    goto fail;
  }
  c->dirfd = open(c->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  if (c->dirfd < 0) /* (what has that name now may be another create's) */
    return error_errno(err, "open state directory `%s`", c->dir);
  FAILPOINT_PAUSE("create-in-place-hold-unlocked");
  if (flock(c->dirfd, LOCK_EX) < 0 || fstat(c->dirfd, &st) < 0) {
    error_errno(err, "lock state directory `%s`", c->dir);
    rmdir(c->dir);
    return -1;
  }
  if (st.st_nlink == 0) /* removed before we locked it: a delete of the id came first */
    return error_set(err, 0, "state directory `%s` removed while it was made", c->dir);
  return 0;

fail:
  if (e == EEXIST || e == ENOTEMPTY) {
    error_set(err, 0, "container with given ID already exists");
    err->code = EEXIST;
    return -1;
  }
  return error_set(err, e, "create state directory for `%s`", c->id);
}

int container_new(const struct global_opts *g, const char *id, struct container **ret,
                  struct error *err)
{
  struct container *c;

  if (validate_container_id(id, err) < 0)
    return -1;
  if (state_root_prepare(g->root, err) < 0)
    return -1;
  c = container_alloc(g, id);
  if (statedir_make_locked(g, c, err) < 0) {
    container_free(c);
    return -1;
  }
  c->lock = LOCK_EX;
  c->state = xmalloc0(sizeof *c->state);
  c->status = STATUS_CREATING;
  *ret = c;
  return 0;
}

int container_load(const struct global_opts *g, const char *id, int lock, struct container **ret,
                   struct error *err)
{
  struct container *c;
  cleanup_free char *json = NULL;
  size_t len = 0;

  if (validate_container_id(id, err) < 0)
    return -1;
  c = container_alloc(g, id);
  c->dirfd = open(c->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  if (c->dirfd < 0) {
    int e = errno;
    container_free(c);
    if (e == ENOENT || e == ENOTDIR) {
      error_set(err, 0, "container `%s` does not exist", id);
      err->code = ENOENT;
      return -1;
    }
    return error_set(err, e, "open state directory of `%s`", id);
  }
  if (lock != 0 && flock(c->dirfd, lock) < 0) {
    error_errno(err, "lock container `%s`", id);
    container_free(c);
    return -1;
  }
  c->lock = lock;
  if (read_own_file_at(c->dirfd, "state.json", 1 << 20, &json, &len, err) < 0) {
    struct stat st;
    /* removed while we waited for its lock (a delete): gone, not creating */
    if (err->code == ENOENT && fstat(c->dirfd, &st) == 0 && st.st_nlink == 0) {
      container_free(c);
      error_set(err, 0, "container `%s` does not exist", id);
      err->code = ENOENT;
      return -1;
    }
    if (err->code == ENOENT) {
      /* a create in progress (or one that died before writing its state) */
      c->state = xmalloc0(sizeof *c->state);
      c->state->id = xstrdup(id);
      c->status = STATUS_CREATING;
      error_clear(err);
      *ret = c;
      return 0;
    }
    container_free(c);
    error_prefix(err, "container `%s`", id);
    err->code = EBADMSG; /* damaged (hostile-state-file): delete --force still cleans it up */
    return -1;
  }
  if (oci_state_parse(json, len, "state.json", &c->state, err) < 0) {
    container_free(c);
    error_prefix(err, "container `%s`", id);
    err->code = EBADMSG; /* delete --force still cleans it up */
    return -1;
  }
  container_refresh_status(c);
  *ret = c;
  return 0;
}

int container_load_damaged(const struct global_opts *g, const char *id, struct container **ret,
                           struct error *err)
{
  struct container *c;

  if (validate_container_id(id, err) < 0)
    return -1;
  c = container_alloc(g, id);
  c->dirfd = open(c->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  if (c->dirfd < 0 || flock(c->dirfd, LOCK_EX) < 0) {
    error_errno(err, "open state directory of `%s`", id);
    container_free(c);
    return -1;
  }
  c->lock = LOCK_EX;
  c->state = xmalloc0(sizeof *c->state);
  c->state->id = xstrdup(id);
  c->status = STATUS_STOPPED;
  *ret = c;
  return 0;
}

void container_free(struct container *c)
{
  if (c == NULL)
    return;
  if (c->dirfd >= 0)
    close(c->dirfd);
  if (c->state)
    oci_state_free(c->state);
  if (c->config)
    oci_config_free(c->config);
  if (c->cgroup)
    cgroup_manager_free(c->cgroup);
  if (c->profile)
    profile_result_free(c->profile);
  free(c->id);
  free(c->dir);
  free(c);
}

bool container_frozen(struct container *c)
{
  struct error err = {0};

  if (c->state->cgroup_path && c->cgroup == NULL)
    container_cgroup(c, NULL, &err);
  return c->cgroup && cgroup_is_frozen(c->cgroup, &err) == 1;
}

enum container_status container_refresh_status(struct container *c)
{
  struct oci_state *s = c->state;
  struct stat st;

  if (c->status == STATUS_CREATING && s->pid == 0 && c->lock != 0) {
    /* we hold its lock (delete): no create is at work on it.  Not tested and let go as
     * below: a lock let go while its holder removes the directory let a create take the id
     * over meanwhile and lose its new directory to us (create-reclaim-race) */
    if (faccessat(c->dirfd, "state.json", F_OK, AT_SYMLINK_NOFOLLOW) != 0)
      c->status = STATUS_STOPPED;
  } else if (c->status == STATUS_CREATING && s->pid == 0) {
    /* keep "creating" only while a create holds the lock (list-killed-create: a killed create's
     * lock is held on by the children it forked, for a while; /proc/locks names it, dead) */
    pid_t holder = 0;
    for (int i = 0; i < 3 && c->status == STATUS_CREATING; i++) {
      if (flock(c->dirfd, LOCK_EX | LOCK_NB) == 0) {
        flock(c->dirfd, LOCK_UN);
        /* (a create that ended since we looked has saved its state: not a dead one) */
        if (faccessat(c->dirfd, "state.json", F_OK, AT_SYMLINK_NOFOLLOW) != 0)
          c->status = STATUS_STOPPED;
        break;
      } else if (errno != EWOULDBLOCK || (holder = proc_flock_holder(c->dirfd)) > 0) {
        if (holder > 0 && !proc_alive(holder, 0))
          c->status = STATUS_STOPPED;
        break;
      } /* else let go between the two looks: once more */
    }
  } else if (!proc_alive(s->pid, s->pid_start_time)) {
    c->status = STATUS_STOPPED;
  } else if (fstatat(c->dirfd, "exec.fifo", &st, AT_SYMLINK_NOFOLLOW) == 0) {
    /* a created container can be paused too (runc and crun allow it):
     * frozen before its start, it is "paused" until resumed, then
     * "created" again.  Its freezer is read only when `pause` left its
     * mark: start, on every container's path, does not pay for it. */
    c->status = STATUS_CREATED;
    if (fstatat(c->dirfd, CONTAINER_PAUSED_MARK, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        container_frozen(c))
      c->status = STATUS_PAUSED;
  } else {
    c->status = container_frozen(c) ? STATUS_PAUSED : STATUS_RUNNING;
  }
  free(s->status);
  s->status = xstrdup(container_status_name(c->status));
  return c->status;
}

int container_save_state(struct container *c, struct error *err)
{
  cleanup_free char *json = NULL;
  size_t len = 0;

  if (oci_state_to_json(c->state, true, &json, &len, err) < 0)
    return -1;
  return write_file_atomic_at(c->dirfd, "state.json", json, len, err);
}

int container_save_config(struct container *c, const char *json, size_t len, struct error *err)
{
  return write_file_atomic_at(c->dirfd, "config.json", json, len, err);
}

int container_load_config(struct container *c, struct error *err)
{
  cleanup_free char *json = NULL;
  size_t len = 0;

  if (c->config)
    return 0;
  if (read_own_file_at(c->dirfd, "config.json", 64 << 20, &json, &len, err) < 0)
    return error_prefix(err, "container `%s`", c->id);
  return oci_config_parse(json, len, "config.json", &c->config, err);
}

int container_cgroup(struct container *c, const struct global_opts *g, struct error *err)
{
  struct cgroup_opts o = {0};

  if (c->cgroup)
    return 0;
  if (c->state->cgroup_path == NULL || c->state->cgroup_path[0] == '\0')
    return 0;
  o.id = c->id;
  o.systemd = c->state->systemd_cgroup;
  o.rootless = geteuid() != 0 || (g != NULL && g->in_userns);
  return cgroup_manager_load(c->state->cgroup_path, &o, &c->cgroup, err);
}

int container_state_json(struct container *c, char **ret, struct error *err)
{
  size_t len;
  return oci_state_to_json(c->state, false, ret, &len, err);
}

char *timestamp_rfc3339(void)
{
  char buf[RFC3339_NANO_SIZE];

  rfc3339_now(buf, NULL); /* no time zone database (gmtime_r would read it) */
  return xstrdup(buf);
}

int rm_rf_at(int dfd, const char *name)
{
  int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  DIR *d;
  struct dirent *e;

  if (fd < 0) {
    if (errno == ENOTDIR || errno == ELOOP)
      return unlinkat(dfd, name, 0);
    return errno == ENOENT ? 0 : -1;
  }
  d = fdopendir(fd);
  if (d == NULL) {
    close(fd);
    return -1;
  }
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
      continue;
    if (e->d_type == DT_DIR)
      rm_rf_at(dirfd(d), e->d_name);
    else
      unlinkat(dirfd(d), e->d_name, 0);
  }
  closedir(d);
  return unlinkat(dfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT ? -1 : 0;
}

/* A create that died before it recorded its state (killed, or a damaged
 * state.json): the cgroup it may have made is found again from the saved
 * config.json, so that destroying it also kills an init left inside. */
static void cgroup_from_config(struct container *c, const struct global_opts *g)
{
  struct cgroup_opts o = {0};
  struct error e = {0};

  if (container_load_config(c, &e) < 0)
    return;
  o.id = c->id;
  o.cgroups_path = c->config->linux ? c->config->linux->cgroups_path : NULL;
  o.systemd = g != NULL && g->systemd_cgroup;
  o.rootless = geteuid() != 0 || (g != NULL && g->in_userns);
  if (cgroup_manager_new(&o, &c->cgroup, &e) < 0)
    c->cgroup = NULL;
  container_log_cgroup_warnings(c->cgroup);
}

void container_log_cgroup_warnings(struct cgroup_manager *m)
{
  cleanup_strv char **w = cgroup_take_warnings(m);

  for (char **p = w; p && *p; p++)
    log_warning("%s", *p);
}

void container_run_poststop(struct container *c, const char *verb)
{
  cleanup_free char *sj = NULL;
  struct error e = {0};

  if (c->config == NULL || c->config->hooks.n[OCI_HOOK_POSTSTOP] == 0)
    return;
  free(c->state->status);
  c->state->status = xstrdup("stopped");
  /* the init is gone: no pid a hook could signal once it is reused (runc
   * leaves it out here; `state` of a stopped container says 0 too) */
  c->state->pid = 0;
  if (container_state_json(c, &sj, &e) < 0 ||
      hooks_run(c->config->hooks.list[OCI_HOOK_POSTSTOP], c->config->hooks.n[OCI_HOOK_POSTSTOP],
                "poststop", c->state->bundle, sj, &e) < 0)
    log_warning("%s `%s`: %s", verb, c->id, e.msg);
}

int container_destroy(struct container *c, const struct global_opts *g, struct error *err)
{
  struct oci_state *s = c->state;
  struct error e2 = {0};
  int ret = 0;

  if (container_cgroup(c, g, &e2) < 0) {
    log_warning("delete `%s`: %s", c->id, e2.msg);
    error_clear(&e2);
  }
  if (c->cgroup == NULL && s->cgroup_path == NULL)
    cgroup_from_config(c, g);
  if (c->cgroup && cgroup_is_frozen(c->cgroup, &e2) == 1)
    cgroup_freeze(c->cgroup, false, &e2);
  if (s->pid > 0 && proc_alive(s->pid, s->pid_start_time)) {
    if (proc_kill_wait(s->pid, s->pid_start_time, SIGKILL, 5000) < 0)
      log_warning("delete `%s`: init %d did not die", c->id, s->pid);
  }
  FAILPOINT("delete-after-kill");
  /* the monitor records the exit, then leaves */
  if (monitor_stop(c->dirfd, 3000, &e2) < 0) {
    log_warning("delete `%s`: %s", c->id, e2.msg);
    error_clear(&e2);
  }
  egress_teardown(c, g);
  /* the init is dead: the workspace is no longer in use (its upper layer and
   * snapshots stay until commit/discard/purge) */
  workspace_release(g->store, c->id);
  if (c->cgroup) {
    error_clear(&e2);
    if (cgroup_destroy(c->cgroup, &e2) < 0) {
      *err = e2;
      error_prefix(err, "delete `%s`", c->id);
      ret = -1;
    }
  }
  FAILPOINT("delete-after-cgroup");
  if (container_load_config(c, &e2) == 0)
    container_run_poststop(c, "delete");
  if (ret == 0 && g != NULL)
    audit_cli_event(g->root, c->id, "delete", NULL);
  FAILPOINT_PAUSE("delete-hold-before-remove");
  if (ret == 0) {
    cleanup_free char *parent = xstrdup(c->dir);
    char *slash = strrchr(parent, '/');
    int pfd;
    *slash = '\0';
    pfd = open(*parent ? parent : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (pfd < 0 || rm_rf_at(pfd, slash + 1) < 0)
      ret = error_errno(err, "delete `%s`: remove state directory", c->id);
    if (pfd >= 0)
      close(pfd);
  }
  return ret;
}
