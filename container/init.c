/* init.c - what the container's init does between clone and execve.
 *
 * Runs single-threaded in a fork-like child of the runtime.  Every step
 * hard-fails: the error goes back to the parent over the sync socket (before
 * READY) or to the container's stderr (after it), and the init exits.
 */
#include "container/init.h"
#include "container/seccomp_notify.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "cgroups/cgroup.h"
#include "common/failpoint.h"
#include "common/util.h"
#include "container/console.h"
#include "container/process.h"
#include "container/setup.h"
#include "container/sync.h"
#include "netfilter/egress.h"
#include "oci/json.h"
#include "os/fsutil.h"
#include "os/procfs.h"

static char *arg_area_start, *arg_area_end, *env_area_start, *env_area_end;

/* The end of the strings of v[0..n) if they lie one after the other (the
 * kernel's layout), else the end of the first run of them. */
static char *strings_end(char **v, size_t n)
{
  char *end = v[0];

  for (size_t i = 0; i < n && v[i] == end; i++)
    end = v[i] + strlen(v[i]) + 1;
  return end;
}

void init_note_process_area(int argc, char **argv, char **envp)
{
  if (argc > 0 && argv[0] != NULL) {
    arg_area_start = argv[0];
    arg_area_end = strings_end(argv, (size_t)argc);
  }
  if (envp != NULL && envp[0] != NULL) {
    env_area_start = envp[0];
    env_area_end = strings_end(envp, strv_len(envp));
  }
}

/* Our environment moves to the heap (the heap is not /proc/PID/environ). */
static void environ_to_heap(void)
{
  size_t n = strv_len(environ);
  char **copy = xmalloc((n + 1) * sizeof *copy);

  for (size_t i = 0; i < n; i++)
    copy[i] = xstrdup(environ[i]);
  copy[n] = NULL;
  environ = copy;
}

/* The kernel's copies: the environment zeroed, the arguments "agentrt init". */
static void process_area_rewrite(void)
{
  static const char name[] = "agentrt\0init";

  if (env_area_start != NULL)
    memset(env_area_start, 0, (size_t)(env_area_end - env_area_start));
  if (arg_area_start != NULL) {
    size_t len = (size_t)(arg_area_end - arg_area_start);
    memset(arg_area_start, 0, len);
    if (len >= sizeof name)
      memcpy(arg_area_start, name, sizeof name);
  }
}

/* createContainer hooks without env still inherit the environment, as
 * runc's and crun's do: from the heap; the arguments (the id and the bundle
 * among them) are copied first. */
static void wipe_process_area(struct init_args *a)
{
  environ_to_heap();
  a->id = a->id ? xstrdup(a->id) : NULL;
  a->bundle = a->bundle ? xstrdup(a->bundle) : NULL;
  a->rootfs = a->rootfs ? xstrdup(a->rootfs) : NULL;
  a->ws_fs_path = a->ws_fs_path ? xstrdup(a->ws_fs_path) : NULL;
  process_area_rewrite();
}

static size_t area_len(const char *start, const char *end)
{
  return start != NULL ? (size_t)(end - start) : 0;
}

void process_area_hide(struct process_area_copy *ret_saved)
{
  size_t alen = area_len(arg_area_start, arg_area_end);
  size_t elen = area_len(env_area_start, env_area_end);

  environ_to_heap();
  ret_saved->args = alen ? xmalloc(alen) : NULL;
  ret_saved->env = elen ? xmalloc(elen) : NULL;
  if (alen)
    memcpy(ret_saved->args, arg_area_start, alen);
  if (elen)
    memcpy(ret_saved->env, env_area_start, elen);
  process_area_rewrite();
}

void process_area_restore(struct process_area_copy *saved)
{
  if (saved->args != NULL)
    memcpy(arg_area_start, saved->args, area_len(arg_area_start, arg_area_end));
  if (saved->env != NULL)
    memcpy(env_area_start, saved->env, area_len(env_area_start, env_area_end));
  free(saved->args);
  free(saved->env);
  saved->args = saved->env = NULL;
}

/* Close every fd the init does not need before it waits for `start`: the
 * caller's fds that are not close-on-exec (an engine's pipes), our own
 * signalfd, log and cgroup fds.  Kept: stdio, the --preserve-fds range and
 * the fds of the protocol.  (runc gets this from re-executing itself.) */
static void close_inherited(struct init_args *a)
{
  size_t cap = OCI_NS_COUNT + 6 + CGROUP_JOIN_MAX + 2 * a->config->n_mounts;
  cleanup_free int *keep = xmalloc(cap * sizeof *keep);
  size_t n = 0;
  int from = 3 + a->preserve_fds;

  for (size_t i = 0; a->bind_fds && i < a->config->n_mounts; i++)
    if (a->bind_fds[i] >= 0)
      keep[n++] = a->bind_fds[i];
  /* A bind source /proc/self/fd/N names a descriptor the runtime holds
   * (`agentrt sandbox` binds the home's files that way, so that what it
   * checked is what is bound): kept for the mount, closed at the exec. */
  for (size_t i = 0; i < a->config->n_mounts; i++) {
    const char *src = a->config->mounts[i].source;
    char *end;
    long fd;
    if ((a->bind_fds && a->bind_fds[i] >= 0) || src == NULL ||
        !str_has_prefix(src, "/proc/self/fd/"))
      continue;
    errno = 0;
    fd = strtol(src + strlen("/proc/self/fd/"), &end, 10);
    if (errno == 0 && *end == '\0' && fd >= 3 && fd < INT_MAX)
      keep[n++] = (int)fd;
  }

  keep[n++] = a->sock;
  if (a->ws_fs_path != NULL && a->ws_fs_fd >= 0)
    keep[n++] = a->ws_fs_fd;
  if (a->listener_fd >= 0)
    keep[n++] = a->listener_fd;
  for (size_t i = 0; i < a->n_cgroup_join && i < CGROUP_JOIN_MAX; i++)
    keep[n++] = a->cgroup_join_fds[i];
  if (a->fifo_fd >= 0)
    keep[n++] = a->fifo_fd;
  if (a->notify_fd >= 0)
    keep[n++] = a->notify_fd;
  for (int t = 0; t < OCI_NS_COUNT; t++)
    if (a->plan->join_fd[t] >= 0)
      keep[n++] = a->plan->join_fd[t];
  close_fds_except(from, keep, n);
  procfs_reset(); /* its fd may have been among them */
}

static int set_names(const struct oci_config *c, const struct ns_plan *p, struct error *err)
{
  if (c->hostname && *c->hostname) {
    if (!p->has_ns[OCI_NS_UTS])
      return error_set(err, 0, "config.json: hostname: needs a private UTS namespace");
    if (sethostname(c->hostname, strlen(c->hostname)) < 0)
      return error_errno(err, "set hostname `%s`", c->hostname);
  }
  if (c->domainname && *c->domainname) {
    if (!p->has_ns[OCI_NS_UTS])
      return error_set(err, 0, "config.json: domainname: needs a private UTS namespace");
    if (setdomainname(c->domainname, strlen(c->domainname)) < 0)
      return error_errno(err, "set domainname `%s`", c->domainname);
  }
  return 0;
}

/* A new network namespace starts with `lo` down; runc and crun bring it up. */
static int loopback_up(struct error *err)
{
  cleanup_close int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

  if (fd < 0 || netns_lo_up(fd) < 0)
    return error_errno(err, "bring up lo");
  return 0;
}

static int run_own_hooks(const struct init_args *a, enum oci_hook_kind k, const char *phase,
                         const char *status, struct error *err);

static int start_hooks(const void *ud, struct error *err)
{
  /* init-environ: these run in the container as its program does, which
   * could read their environ: one without env gets the program's (process.env
   * and HOME, as runc's; process_exec set environ), never the caller's */
  return run_own_hooks(ud, OCI_HOOK_START_CONTAINER, "startContainer", "running", err);
}

static bool has_hooks(const struct oci_config *c, enum oci_hook_kind k)
{
  return c->hooks.n[k] > 0;
}

static int run_own_hooks(const struct init_args *a, enum oci_hook_kind k, const char *phase,
                         const char *status, struct error *err)
{
  cleanup_free char *sj = NULL;
  const struct oci_config *cf = a->config;
  struct jgen j;

  /* The state the spec gives a hook: the parent holds the full one; these
   * run inside the container.  Generated, not formatted: the bundle path may
   * hold any character.  The annotations as the parent's hooks get them (and
   * as runc's createContainer and startContainer hooks do). */
  jgen_init(&j, false);
  jg_open(&j);
  jg_kstr(&j, "ociVersion", "1.2.0");
  jg_kstr(&j, "id", a->id);
  jg_kstr(&j, "status", status);
  jg_ki64(&j, "pid", a->host_pid);
  jg_kstr(&j, "bundle", a->bundle);
  if (cf->n_annotations > 0)
    jg_kkv(&j, "annotations", cf->annotations, cf->n_annotations);
  jg_close(&j);
  if (jgen_finish(&j, "hook state", &sj, NULL, err) < 0)
    return -1;
  /* createContainer runs before the pivot, where the bundle is still in
   * reach; startContainer runs in the container's root */
  return hooks_run(a->config->hooks.list[k], a->config->hooks.n[k], phase,
                   k == OCI_HOOK_CREATE_CONTAINER ? a->bundle : NULL, sj, err);
}

/* Our parent's pid in the runtime's pid namespace (field 4 of our stat in the host's procfs,
 * which is ours until the pivot), or 0. */
static pid_t runtime_pid(void)
{
  char buf[1024], *p;
  int ppid;

  if (procfs_read("self/stat", buf, sizeof buf - 1, &(struct error){0}) < 0 ||
      (p = strrchr(buf, ')')) == NULL || sscanf(p + 1, " %*c %d", &ppid) != 1)
    return 0;
  return ppid;
}

/* create-killed-createContainer: the createContainer hooks run while the runtime waits for us;
 * a runtime killed by SIGKILL meanwhile must not leave us running them (nor what they start):
 * we die with it (the first process of a pid namespace of its own takes the hooks with it). */
static void die_with_runtime(const struct init_args *a)
{
  prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  if (a->runtime_pid > 0 && runtime_pid() != a->runtime_pid)
    _exit(1); /* gone before the prctl: nobody to report to */
}

/* Before READY: everything that can fail is reported to `create`. */
static int init_setup(struct init_args *a, struct setup_ctx *ctx, char **ret_path,
                      struct error *err)
{
  const struct oci_config *c = a->config;

  if (sync_expect_code(a->sock, SYNC_GO, &a->host_pid, err) < 0)
    return -1;
  if (a->dumpable_until_go)
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  if (a->n_cgroup_join > 0 && cgroup_join_self(a->cgroup_join_fds, a->n_cgroup_join, err) < 0)
    return -1;
  if (a->new_userns) {
    /* become root of the new user namespace when 0 is mapped */
    if (setresgid(0, 0, 0) < 0 && errno != EINVAL)
      return error_errno(err, "setresgid in user namespace");
    if (setresuid(0, 0, 0) < 0 && errno != EINVAL)
      return error_errno(err, "setresuid in user namespace");
  }
  /* our real cgroup paths, before a joined cgroup namespace makes them
   * relative to another container's (mounts_cgroup.c binds ours) */
  if (a->plan->join_fd[OCI_NS_CGROUP] >= 0 &&
      procfs_read_all("self/cgroup", &ctx->cgroup_table, err) < 0)
    return -1;
  if (ns_join_paths(a->plan, true, err) < 0)
    return -1;
  if (a->plan->join_fd[OCI_NS_USER] >= 0) {
    /* root of the joined user namespace, as of a new one (runc too): our
     * host ids are not mapped there, so nothing could be made in the
     * filesystems mounted below (EOVERFLOW) */
    if (setresgid(0, 0, 0) < 0 && errno != EINVAL)
      return error_errno(err, "setresgid in the joined user namespace");
    if (setresuid(0, 0, 0) < 0 && errno != EINVAL)
      return error_errno(err, "setresuid in the joined user namespace");
  }
  if ((a->plan->unshare_flags & CLONE_NEWCGROUP) &&
      procfs_read_all("self/cgroup", &ctx->cgroup_table, err) < 0)
    return -1;
  if (a->plan->unshare_flags && unshare(a->plan->unshare_flags) < 0)
    return error_errno(err, "unshare namespaces");
  procfs_reset();
  if (a->plan->new_ns[OCI_NS_NETWORK] && !a->netns_early && loopback_up(err) < 0)
    return -1;
  if (set_names(c, a->plan, err) < 0 || process_set_personality(c->linux, err) < 0)
    return -1;
  if (sysctl_apply(c, err) < 0)
    return -1;
  if (rootfs_setup(ctx, err) < 0)
    return -1;
  if (has_hooks(c, OCI_HOOK_PRESTART) || has_hooks(c, OCI_HOOK_CREATE_RUNTIME)) {
    if (sync_send(a->sock, SYNC_HOOKS, -1, err) < 0 ||
        sync_expect(a->sock, SYNC_HOOKS_DONE, NULL, err) < 0)
      return -1;
  }
  if (has_hooks(c, OCI_HOOK_CREATE_CONTAINER)) {
    int r;
    die_with_runtime(a);
    r = run_own_hooks(a, OCI_HOOK_CREATE_CONTAINER, "createContainer", "created", err);
    prctl(PR_SET_PDEATHSIG, 0, 0, 0, 0);
    if (r < 0)
      return -1;
  }
  /* the monitor may open the workspace through our root from here on,
   * while we finish (masks, read-only paths) */
  if (rootfs_pivot(ctx, err) < 0 ||
      (a->tell_rooted && sync_send(a->sock, SYNC_ROOTED, -1, err) < 0) ||
      rootfs_finalize(ctx, err) < 0)
    return -1;
  procfs_reset();
  if (ctx->pty_master_fd >= 0) {
    if (sync_send(a->sock, SYNC_PTY, ctx->pty_master_fd, err) < 0)
      return -1;
    close(ctx->pty_master_fd);
    ctx->pty_master_fd = -1;
  }
  /* process is OPTIONAL at create and REQUIRED at start: `start` refuses,
   * and an init released anyway leaves without running anything */
  if (c->process == NULL)
    return 0;
  /* what would be refused after start is create's error (as runc's) */
  if (process_apply_limits(c->process, err) < 0 ||
      (ctx->in_userns && user_check_mapped(&c->process->user, err) < 0) ||
      caps_check(&c->process->caps, c->process->has_caps, err) < 0)
    return -1;
  return process_resolve_executable(c->process, ret_path, err);
}

static void die_of(int sig)
{
  _exit(128 + sig);
}

/* A created container's init waits for start as its namespace's pid 1, and
 * the kernel drops a signal that such a process has no handler for, even
 * from outside: `kill ID TERM` did nothing, and an engine stopping a
 * container that never started (Podman: TERM, then KILL after its timeout)
 * waited the whole timeout.  runc's init (a Go program) dies of HUP, INT and
 * TERM; so does ours from here to its exec, which resets the handlers (a
 * signal ignored by whoever started us stays ignored, as before). */
static void die_of_stop_signals(void)
{
  static const int sigs[] = {SIGHUP, SIGINT, SIGTERM};
  struct sigaction sa = {.sa_handler = die_of}, old;

  for (size_t i = 0; i < ARRAY_SIZE(sigs); i++)
    if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL)
      sigaction(sigs[i], &sa, NULL);
}

static int wait_for_start(struct init_args *a, struct error *err)
{
  die_of_stop_signals();
  if (a->fifo_fd >= 0) {
    char b;
    ssize_t n;
    do
      n = read(a->fifo_fd, &b, 1);
    while (n < 0 && errno == EINTR);
    if (n != 1)
      return error_errno(err, "wait for start");
    return 0;
  }
  return sync_expect(a->sock, SYNC_START, NULL, err);
}

/* build-fp's init-fails-late: a set-up error that comes after run's START
 * was queued (spawn_opts.start_early), while run does not read (it sleeps
 * longer, spawn.c): we close with START unread */
static bool init_fails_late(struct error *err)
{
  if (!FAILPOINT_FAILS("init-fails-late"))
    return false;
  usleep(50000);
  error_set(err, 0, "failpoint init-fails-late");
  return true;
}

void init_main(struct init_args *a)
{
  struct error err = {0};
  struct setup_ctx ctx = {
      .config = a->config,
      .id = a->id,
      .bundle = a->bundle,
      .rootfs = a->rootfs,
      .no_pivot = a->no_pivot,
      .new_userns = a->new_userns,
      .in_userns = a->new_userns || a->plan->join_fd[OCI_NS_USER] >= 0 || a->in_userns,
      .new_cgroupns = a->plan->new_ns[OCI_NS_CGROUP],
      .joined_cgroupns = a->plan->join_fd[OCI_NS_CGROUP] >= 0,
      .cgroup = a->cgroup,
      .pty_master_fd = -1,
      .pty_peer_fd = -1,
      .rootfd = -1,
      .bind_fds = a->bind_fds,
      .keep_bind_flags = a->keep_bind_flags,
      .ws_fs_path = a->ws_fs_path,
      .ws_fs_fd = a->ws_fs_fd,
      .ws_fs_late = a->ws_fs_late,
      .sync_sock = a->sock,
  };
  struct process_opts po = {0};
  char *path = NULL;

  /* CVE-2016-9962: nothing in the container may ptrace us while we still
   * hold host fds; execve resets this for the container's program.  A
   * rootless caller's init waits for GO (init_setup): see spawn.c. */
  if (!a->dumpable_until_go)
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  /* init-environ, init-cmdline: our /proc/PID/environ is the caller's
   * environment (the engine's NOTIFY_SOCKET, its tokens) and our cmdline
   * its command line until the execve at `start`; a process exec'd into
   * the created container could read them. */
  wipe_process_area(a);
  ctx.id = a->id;
  ctx.bundle = a->bundle;
  ctx.rootfs = a->rootfs;
  ctx.ws_fs_path = a->ws_fs_path;
  /* The parent's flock on the state dir is shared with our inherited copy
   * of the fd: keep it and `start` would wait for us forever. */
  if (a->lock_fd >= 0)
    close(a->lock_fd);
  close_inherited(a);
  a->runtime_pid = runtime_pid(); /* alive: GO is still to come from it */
  /* before GO: the parent is usually still at its part */
  process_reset_signals();
  if (init_setup(a, &ctx, &path, &err) < 0 || init_fails_late(&err)) {
    sync_send_error(a->sock, &err);
    _exit(1);
  }
  /* With a terminal, let go of the runtime's stdout/stderr now: the
   * containerd shim waits for EOF on them before it reads the pid file, so
   * holding them until `start` deadlocks `create`. */
  if (ctx.pty_peer_fd >= 0) {
    if (console_make_stdio(ctx.pty_peer_fd, &err) < 0) {
      sync_send_error(a->sock, &err);
      _exit(1);
    }
    ctx.pty_peer_fd = -1;
  } else if (setsid() < 0) {
    /* a session of its own, as runc's init: the program cannot signal the
     * caller's process group (kill(0)) nor use its terminal as a
     * controlling one */
    error_errno(&err, "setsid");
    sync_send_error(a->sock, &err);
    _exit(1);
  }
  if (sync_send(a->sock, SYNC_READY, -1, &err) < 0)
    _exit(1);
  if (wait_for_start(a, &err) < 0)
    goto fail;
  if (a->config->process == NULL) {
    error_set(&err, 0, "config.json: process: required to start a container");
    goto fail;
  }
  /* startContainer hooks run in the container as its program would: with
   * its user, capabilities, seccomp filter and LSM label (runc's order) */
  if (has_hooks(a->config, OCI_HOOK_START_CONTAINER)) {
    po.before_exec = start_hooks;
    po.before_exec_ud = a;
  }
  po.preserve_fds = a->preserve_fds;
  /* close-on-exec: `run` sees EOF once the program runs, or our ERROR */
  po.keep_fd = a->sock;
  po.in_userns = ctx.in_userns;
  po.seccomp = a->config->linux ? a->config->linux->seccomp : NULL;
  po.seccomp_bpf = a->config_bpf;
  po.extra_bpf = a->extra_bpf;
  po.notify_bpf = a->notify_bpf;
  po.notify_fd = a->notify_fd;
  po.pdeathsig = a->pdeathsig;
  po.keep_keyring = a->no_new_keyring;
  if (a->listener_fd >= 0) {
    const struct oci_config *cf = a->config;
    po.has_listener = true;
    po.listener_fd = a->listener_fd;
    po.listener_msg = seccomp_listener_msg(po.seccomp, a->id, "running", a->host_pid, a->bundle,
                                           cf->annotations, cf->n_annotations);
    if (po.listener_msg == NULL) {
      error_set(&err, 0, "seccomp: cannot build the listener's state document");
      goto fail;
    }
  }
  /* the fifo stays open (close-on-exec) until the exec: `start` waits for
   * it to lose its last reader before running poststart hooks */
  process_exec(a->config->process, path, &po, &err);
fail:
  if (a->fifo_fd < 0 && a->sock >= 0)
    sync_send_error(a->sock, &err); /* run: the parent reports it */
  else
    dprintf(2, "agentrt: %s\n", err.msg);
  _exit(127);
}
