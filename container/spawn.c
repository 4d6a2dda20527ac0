/* spawn.c - the parent's side of starting a container init (see spawn.h). */
#include "container/spawn.h"
#include "container/mounts.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/failpoint.h"
#include "common/log.h"
#include "common/util.h"
#include "container/init.h"
#include "container/namespaces.h"
#include "container/process.h"
#include "container/sync.h"
#include "os/procfs.h"

/* fork-like clone3 (no new stack): the child returns 0 like fork(). */
static pid_t clone_init(int flags, int cgroup_fd)
{
  struct clone_args a;
  pid_t pid;

  memset(&a, 0, sizeof a);
  a.flags = (uint64_t)flags;
  /* with CLONE_PARENT the child signals our parent as we do (clone3
   * takes no exit_signal then) */
  a.exit_signal = (flags & CLONE_PARENT) ? 0 : SIGCHLD;
  if (cgroup_fd >= 0) {
    a.flags |= CLONE_INTO_CGROUP;
    a.cgroup = (uint64_t)cgroup_fd;
  }
  pid = (pid_t)syscall(SYS_clone3, &a, sizeof a);
  if (pid < 0 && (errno == ENOSYS || errno == E2BIG || (errno == EINVAL && cgroup_fd >= 0))) {
    if (cgroup_fd >= 0)
      return -2; /* caller retries without CLONE_INTO_CGROUP */
    pid = (pid_t)syscall(SYS_clone, (unsigned long)flags | SIGCHLD, 0, 0, 0, 0);
  }
  return pid;
}

/* A new pid namespace inside a user namespace joined by path must belong to
 * that user namespace (its /proc is mounted from there), and a pid namespace
 * is owned by its creator's user namespace: a helper joins the user
 * namespace and clones the init as *our* child (CLONE_PARENT), hands us its
 * pid and exits.  Returns like fork(): 0 in the init, its pid here, -1 with
 * errno set. */
static pid_t clone_init_in_userns(int flags, int userns_fd, bool *ret_setns_failed)
{
  int p[2], status, e = 0;
  /* [0]: the init's pid, else -errno; [1]: 1 when the setns failed */
  pid_t r[2] = {-EIO, 0}, helper;
  ssize_t n;

  *ret_setns_failed = false;
  if (pipe2(p, O_CLOEXEC) < 0)
    return -1;
  helper = (pid_t)syscall(SYS_clone, (unsigned long)SIGCHLD, 0, 0, 0, 0);
  if (helper == 0) { /* only async-signal-safe calls from here */
    pid_t w[2] = {0, 0};
    close(p[0]);
    if (setns(userns_fd, CLONE_NEWUSER) < 0)
      w[1] = 1;
    else
      w[0] = clone_init(flags | CLONE_PARENT, -1);
    if (w[1] == 0 && w[0] == 0) {
      close(p[1]);
      return 0;
    }
    if (w[1] != 0 || w[0] < 0)
      w[0] = -errno;
    _exit(write(p[1], w, sizeof w) == (ssize_t)sizeof w ? 0 : 1);
  }
  if (helper < 0)
    e = errno;
  close(p[1]);
  if (helper > 0) {
    do
      n = read(p[0], r, sizeof r);
    while (n < 0 && errno == EINTR);
    if (n != (ssize_t)sizeof r)
      r[0] = -EIO;
    if (r[0] < 0)
      e = -r[0];
    *ret_setns_failed = r[1] != 0;
    while (waitpid(helper, &status, 0) < 0 && errno == EINTR)
      ;
  }
  close(p[0]);
  if (helper < 0 || r[0] < 0) {
    errno = e;
    return -1;
  }
  return r[0];
}

static int own_ns_fd(const char *name, struct error *err)
{
  return procfs_open_ns("self", name, err);
}

/* Enter a pid or time namespace for our *children* only, around clone. */
static int enter_for_children(struct ns_plan *plan, const struct oci_config *cfg, int *saved_pid,
                              int *saved_time, struct error *err)
{
  *saved_pid = *saved_time = -1;
  if (plan->join_fd[OCI_NS_PID] >= 0) {
    if ((*saved_pid = own_ns_fd("pid", err)) < 0)
      return -1;
    if (setns(plan->join_fd[OCI_NS_PID], CLONE_NEWPID) < 0)
      return error_errno(err, "join pid namespace");
  }
  if (plan->join_fd[OCI_NS_TIME] >= 0 || plan->new_ns[OCI_NS_TIME]) {
    if ((*saved_time = own_ns_fd("time_for_children", err)) < 0)
      return -1;
    if (plan->join_fd[OCI_NS_TIME] >= 0) {
      if (setns(plan->join_fd[OCI_NS_TIME], CLONE_NEWTIME) < 0)
        return error_errno(err, "join time namespace");
    } else {
      if (unshare(CLONE_NEWTIME) < 0)
        return error_errno(err, "create time namespace");
      if (ns_write_time_offsets(cfg, err) < 0)
        return error_prefix(err, "linux.timeOffsets");
    }
  }
  return 0;
}

static void leave_for_children(int saved_pid, int saved_time)
{
  if (saved_pid >= 0) {
    if (setns(saved_pid, CLONE_NEWPID) < 0)
      log_warning("restore pid namespace: %s", strerror(errno));
    close(saved_pid);
  }
  if (saved_time >= 0) {
    if (setns(saved_time, CLONE_NEWTIME) < 0)
      log_warning("restore time namespace: %s", strerror(errno));
    close(saved_time);
  }
}

/* The agent profile lets pods join namespaces by path, but never the host's
 * own (ours): compared by inode. */
static int refuse_host_ns(struct ns_plan *plan, struct error *err)
{
  static const char *const files[OCI_NS_COUNT] = {
      [OCI_NS_PID] = "pid",       [OCI_NS_NETWORK] = "net", [OCI_NS_MOUNT] = "mnt",
      [OCI_NS_IPC] = "ipc",       [OCI_NS_UTS] = "uts",     [OCI_NS_USER] = "user",
      [OCI_NS_CGROUP] = "cgroup", [OCI_NS_TIME] = "time"};

  for (int t = 0; t < OCI_NS_COUNT; t++) {
    struct stat a, b;
    int self;
    if (plan->join_fd[t] < 0)
      continue;
    self = procfs_open_ns("self", files[t], err);
    if (self < 0)
      return -1;
    if (fstat(self, &a) == 0 && fstat(plan->join_fd[t], &b) == 0 && a.st_ino == b.st_ino &&
        a.st_dev == b.st_dev) {
      close(self);
      return error_set(err, 0, "agent profile: joining the host's %s namespace is not allowed",
                       oci_ns_name(t));
    }
    close(self);
  }
  return 0;
}

static int run_parent_hooks(struct container *c, struct error *err)
{
  const struct oci_hooks *h = &c->config->hooks;
  cleanup_free char *sj = NULL;

  /* The environment exists by now: these hooks see "created", as the
   * createContainer hook does (and as crun and runtime-tools expect). */
  free(c->state->status);
  c->state->status = xstrdup("created");
  if (container_state_json(c, &sj, err) < 0)
    return -1;
  /* prestart (deprecated) then createRuntime, both in the runtime namespace */
  if (hooks_run(h->list[OCI_HOOK_PRESTART], h->n[OCI_HOOK_PRESTART], "prestart", c->state->bundle,
                sj, err) < 0)
    return -1;
  return hooks_run(h->list[OCI_HOOK_CREATE_RUNTIME], h->n[OCI_HOOK_CREATE_RUNTIME], "createRuntime",
                   c->state->bundle, sj, err);
}

/* Describe how the init died when it left without a message. */
static int init_died(pid_t pid, struct error *err)
{
  int status = 0;

  if (waitpid(pid, &status, 0) < 0)
    return error_errno(err, "container init exited during setup");
  if (WIFSIGNALED(status))
    return error_set(err, 0, "container init killed by signal %d during setup", WTERMSIG(status));
  return error_set(err, 0, "container init exited with status %d during setup",
                   WEXITSTATUS(status));
}

static int parent_protocol(const struct spawn_opts *o, struct spawn_result *r, int sock,
                           bool final_ns, struct error *err)
{
  struct container *c = o->c;
  struct sync_msg m;
  int fd;

  if (sync_send_code(sock, SYNC_GO, r->pid, err) < 0)
    return -1;
  /* while the init sets up its root */
  if (o->on_clone && final_ns && o->on_clone(o->ud, r->pid, r->start_time, err) < 0)
    return -1;
  if (o->ws_fs_late != NULL) {
    int wfd = o->ws_fs_late(o->ws_fs_ud, err);
    if (wfd < 0)
      return -1;
    /* an init that is gone already has its error (or its death) queued */
    if (sync_send(sock, SYNC_WS_FS, wfd, err) < 0 && errno != EPIPE && errno != ECONNRESET) {
      close(wfd);
      return -1;
    }
    error_clear(err);
    close(wfd);
  }
  if (o->start_early != NULL) {
    if (o->start_early(o->start_ud, r->pid, r->start_time, err) < 0)
      return -1;
    /* as above: a gone init's word is read below */
    if (sync_send(sock, SYNC_START, -1, err) < 0 && errno != EPIPE && errno != ECONNRESET)
      return -1;
    error_clear(err);
    r->started = true;
    /* build-fp: not reading while the init fails (init.c, init_fails_late) */
    if (FAILPOINT_FAILS("init-fails-late"))
      usleep(150000);
  }
  for (;;) {
    int n = sync_recv(sock, &m, &fd, err);
    if (n < 0)
      return -1;
    if (n == 0)
      return init_died(r->pid, err);
    switch (m.type) {
    case SYNC_HOOKS:
      if (run_parent_hooks(c, err) < 0)
        return -1;
      if (sync_send(sock, SYNC_HOOKS_DONE, -1, err) < 0)
        return -1;
      break;
    case SYNC_ROOTED:
      if (o->on_rooted != NULL)
        o->on_rooted(o->ud);
      break;
    case SYNC_PTY:
      if (r->pty_master >= 0)
        close(r->pty_master);
      r->pty_master = fd;
      break;
    case SYNC_READY:
      return 0;
    case SYNC_ERROR:
      if (fd >= 0)
        close(fd);
      error_set(err, 0, "%s", m.msg);
      err->code = m.code;
      return -1;
    default:
      if (fd >= 0)
        close(fd);
      return error_set(err, 0, "sync: unexpected message %d from init", m.type);
    }
  }
}

static void close_bind_fds(int **fds, size_t n)
{
  for (size_t i = 0; *fds != NULL && i < n; i++)
    if ((*fds)[i] >= 0)
      close((*fds)[i]);
  free(*fds);
  *fds = NULL;
}

int spawn_init(const struct spawn_opts *o, struct spawn_result *r, struct error *err)
{
  const struct oci_config *cfg = o->c->config;
  cleanup_ns_plan struct ns_plan plan;
  int sv[2] = {-1, -1};
  int saved_pid = -1, saved_time = -1;
  cleanup_close int fifo_fd = -1, cgfd = -1, ufd = -1;
  int joinfds[CGROUP_JOIN_MAX];
  size_t njoin = 0;
  bool self_join = false, unified_late = false, via_userns, userns_failed = false, rootless_maps;
  int *bind_fds = NULL;
  int flags, dumpable, own_net = -1, net_errno = 0;
  int back_net = -1, held_net = -1; /* a joined netns entered around the clone */
  pid_t pid;

  r->pid = -1;
  r->pty_master = -1;
  r->sync_fd = -1;
  r->started = false;
  if (ns_plan_build(cfg, &plan, err) < 0)
    return -1;
  if (o->c->profile && o->c->profile->check_joined_ns && refuse_host_ns(&plan, err) < 0)
    return -1;
  if (!plan.has_ns[OCI_NS_MOUNT])
    return error_set(err, 0,
                     "config.json: linux.namespaces: a mount namespace is required (agentrt never "
                     "mounts the root filesystem in the caller's mount namespace)");
  via_userns = plan.join_fd[OCI_NS_USER] >= 0 && plan.new_ns[OCI_NS_PID];
  if (o->use_fifo) {
    if (mkfifoat(o->c->dirfd, "exec.fifo", 0600) < 0)
      return error_errno(err, "create exec.fifo");
    /* The init holds the fifo open read-write and blocks reading it; `start`
     * opens it write-only (ENXIO when the init is gone) and writes a byte. */
    fifo_fd = openat(o->c->dirfd, "exec.fifo", O_RDWR | O_CLOEXEC);
    if (fifo_fd < 0)
      return error_errno(err, "open exec.fifo");
  }
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
    error_errno(err, "socketpair");
    goto fail;
  }
  if (o->c->cgroup && !via_userns)
    cgfd = cgroup_clone_fd(o->c->cgroup);
  /* hybrid: the clone puts the init in the cgroup2 hierarchy as well (no
   * write to its cgroup.procs, no wait for an RCU grace period) */
  if (o->c->cgroup && !via_userns && cgfd < 0 && (ufd = cgroup_unified_clone_fd(o->c->cgroup)) >= 0)
    cgroup_unified_at_clone(o->c->cgroup, true);
  /* v1: the init moves itself (cgroup_join_fds); not when a user namespace
   * is involved, where the parent's write keeps the host's credentials. */
  if (o->c->cgroup && cgfd < 0 && !plan.new_ns[OCI_NS_USER] && plan.join_fd[OCI_NS_USER] < 0 &&
      cgroup_join_fds(o->c->cgroup, joinfds, &njoin, err) < 0)
    goto fail;
  flags = plan.clone_flags;
  /* With a joined user namespace, new namespaces must belong to it: the init
   * unshares them after joining instead of getting them from clone. */
  if (plan.join_fd[OCI_NS_USER] >= 0) {
    plan.unshare_flags = flags & ~CLONE_NEWPID;
    flags &= CLONE_NEWPID;
  }
  /* A cgroup namespace must be rooted at the container's cgroup: created at
   * clone time only when the init is cloned straight into it. */
  if ((flags & CLONE_NEWCGROUP) && cgfd < 0) {
    flags &= ~CLONE_NEWCGROUP;
    plan.unshare_flags |= CLONE_NEWCGROUP;
  }
  /* a user namespace: the init would open the bind sources with the
   * mapped credentials; clone them here with ours.  An idmapped bind is
   * cloned and given its mapping here too (host root, a detached mount). */
  {
    bool userns = plan.new_ns[OCI_NS_USER] || plan.join_fd[OCI_NS_USER] >= 0;
    int nb = 0;

    if (userns || mounts_any_idmap(cfg))
      nb = mounts_open_bind_sources(cfg, o->bundle, o->rootfs, !userns, &bind_fds, err);
    if (nb < 0)
      goto fail;
    if (nb == 0) {
      free(bind_fds);
      bind_fds = NULL;
    }
    for (size_t i = 0; o->premounted && i < o->n_premounted && i < cfg->n_mounts; i++) {
      if (o->premounted[i] < 0)
        continue;
      if (bind_fds == NULL) {
        bind_fds = xmalloc(cfg->n_mounts * sizeof *bind_fds);
        for (size_t j = 0; j < cfg->n_mounts; j++)
          bind_fds[j] = -1;
      }
      bind_fds[i] = fcntl(o->premounted[i], F_DUPFD_CLOEXEC, 3);
      if (bind_fds[i] < 0) {
        error_errno(err, "mount on `%s`", cfg->mounts[i].destination);
        goto fail;
      }
    }
  }
  if (enter_for_children(&plan, cfg, &saved_pid, &saved_time, err) < 0) {
    leave_for_children(saved_pid, saved_time);
    goto fail;
  }
  /* the network namespace made beside create's work: the init is born in
   * it (we enter it around the clone); without it the clone makes one */
  if ((flags & CLONE_NEWNET) && o->netns_early != NULL && !plan.new_ns[OCI_NS_USER] &&
      plan.join_fd[OCI_NS_USER] < 0 && !(o->g != NULL && o->g->in_userns)) {
    int nfd = netns_early_take(o->netns_early);
    struct error e = {0};
    if (nfd >= 0 && (own_net = own_ns_fd("net", &e)) >= 0) {
      if (setns(nfd, CLONE_NEWNET) == 0) {
        flags &= ~CLONE_NEWNET;
      } else {
        close(own_net);
        own_net = -1;
      }
    }
  }
  /* A network namespace joined by path with a user namespace made by the
   * clone (Podman's --userns=auto or --uidmap with its netns path): the
   * init, root of the new user namespace only, may not setns into one the
   * host's user namespace owns ("join network namespace: Operation not
   * permitted": netns-path-new-userns).  Joined here around the clone, as
   * runc and crun join before they make the user namespace. */
  if (plan.new_ns[OCI_NS_USER] && plan.join_fd[OCI_NS_NETWORK] >= 0 && own_net < 0 &&
      !(o->g != NULL && o->g->in_userns)) {
    struct error e = {0};
    if ((back_net = own_ns_fd("net", &e)) >= 0) {
      if (setns(plan.join_fd[OCI_NS_NETWORK], CLONE_NEWNET) == 0) {
        held_net = plan.join_fd[OCI_NS_NETWORK];
        plan.join_fd[OCI_NS_NETWORK] = -1; /* the init is born in it */
      } else {
        close(back_net);
        back_net = -1;
      }
    }
  }
  /* CVE-2016-9962: the init is born non-dumpable (a container whose pid
   * namespace it joins must not trace it before its own prctl).  Not when a
   * caller that is not root makes a user namespace (rootless-run): its
   * /proc/PID/setgroups and uid_map would be root's, which that caller
   * cannot write; the init stays dumpable until GO, which comes after the
   * maps, and no process is in its new user namespace before that. */
  dumpable = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
  rootless_maps = plan.new_ns[OCI_NS_USER] && !via_userns && geteuid() != 0;
  if (!rootless_maps)
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  if (via_userns) {
    pid = clone_init_in_userns(flags, plan.join_fd[OCI_NS_USER], &userns_failed);
    if (pid == 0)
      plan.user_joined = true; /* by the helper */
  } else {
    pid = clone_init(flags, cgfd >= 0 ? cgfd : ufd);
  }
  if (pid == -2) {
    if (flags & CLONE_NEWCGROUP) {
      flags &= ~CLONE_NEWCGROUP;
      plan.unshare_flags |= CLONE_NEWCGROUP;
    }
    if (cgfd >= 0)
      close(cgfd);
    cgfd = -1;
    pid = clone_init(flags, -1);
    if (ufd >= 0) { /* joined below, from here */
      close(ufd);
      ufd = -1;
      cgroup_unified_at_clone(o->c->cgroup, false);
      unified_late = true;
    }
  }
  if (pid != 0 && dumpable > 0)
    prctl(PR_SET_DUMPABLE, dumpable, 0, 0, 0);
  /* back to our own network namespace; nothing of ours may run on in the
   * container's (only root of the initial user namespace gets here) */
  if (pid != 0 && own_net >= 0 && setns(own_net, CLONE_NEWNET) < 0)
    net_errno = errno;
  if (pid != 0 && back_net >= 0) {
    if (setns(back_net, CLONE_NEWNET) < 0)
      net_errno = errno;
    close(back_net);
    back_net = -1;
    plan.join_fd[OCI_NS_NETWORK] = held_net;
  }
  if (pid == 0) {
    struct init_args ia = {
        .config = cfg,
        .plan = &plan,
        .sock = sv[1],
        .fifo_fd = fifo_fd,
        .lock_fd = o->c->dirfd,
        .id = o->c->id,
        .bundle = o->bundle,
        .rootfs = o->rootfs,
        .no_pivot = o->no_pivot,
        .preserve_fds = o->preserve_fds,
        .new_userns = plan.new_ns[OCI_NS_USER],
        .dumpable_until_go = rootless_maps,
        .netns_early = own_net >= 0,
        /* as parent_protocol's on_clone: the netns is final at the clone */
        .tell_rooted = o->on_rooted != NULL && o->on_clone != NULL &&
                       ((flags & CLONE_NEWNET) != 0 || own_net >= 0),
        .config_bpf = o->config_bpf,
        .extra_bpf = o->extra_bpf,
        .notify_bpf = o->notify_bpf,
        .notify_fd = o->notify_bpf != NULL ? o->notify_fd : -1,
        .listener_fd = o->listener_fd,
        .bind_fds = bind_fds,
        .in_userns = o->g != NULL && o->g->in_userns,
        .keep_bind_flags = o->c->profile != NULL && o->c->profile->keep_bind_flags,
        .cgroup_join_fds = joinfds,
        .n_cgroup_join = njoin,
        .cgroup = o->c->cgroup,
        .ws_fs_path = o->ws_fs_path,
        .ws_fs_fd = o->ws_fs_path ? o->ws_fs_fd : -1,
        .ws_fs_late = o->ws_fs_path != NULL && o->ws_fs_late != NULL,
        .pdeathsig = o->pdeathsig,
        .no_new_keyring = o->no_new_keyring,
    };
    close(sv[0]);
    if (own_net >= 0)
      close(own_net);
    if (back_net >= 0)
      close(back_net);
    if (held_net >= 0)
      close(held_net);
    init_main(&ia); /* never returns */
  }
  leave_for_children(saved_pid, saved_time);
  if (own_net >= 0) {
    close(own_net);
    own_net = -1;
    flags |= CLONE_NEWNET; /* for the monitor below: the netns is final */
  }
  close_bind_fds(&bind_fds, cfg->n_mounts);
  self_join = njoin > 0; /* the init writes itself into the cgroup after GO */
  cgroup_join_fds_close(joinfds, njoin);
  njoin = 0;
  if (pid < 0) {
    error_errno(err, userns_failed ? "join user namespace" : "clone container init");
    goto fail;
  }
  r->pid = pid;
  if (net_errno != 0) {
    errno = net_errno;
    error_errno(err, "return to our network namespace after the clone");
    goto fail_child;
  }
  FAILPOINT("spawn-after-clone");
  close(sv[1]);
  sv[1] = -1;
  if (fifo_fd >= 0) {
    close(fifo_fd);
    fifo_fd = -1;
  }
  ns_plan_close(&plan);
  o->c->state->pid = pid;
  if (FAILPOINT_FAILS("spawn-init-reaped")) {
    error_set(err, 0, "failpoint spawn-init-reaped");
    goto fail_child;
  }
  if (plan.new_ns[OCI_NS_USER] && ns_write_id_maps(pid, cfg, err) < 0)
    goto fail_child;
  if (o->c->cgroup && cgfd < 0 && !self_join && cgroup_add_pid(o->c->cgroup, pid, err) < 0)
    goto fail_child;
  /* hybrid, the clone refused CLONE_INTO_CGROUP: the init's joins left the
   * unified hierarchy out (opened before the clone) */
  if (unified_late && self_join && cgroup_unified_add_pid(o->c->cgroup, pid, err) < 0)
    goto fail_child;
  if (proc_start_time(pid, &r->start_time, NULL) < 0) {
    error_set(err, 0, "container init %d vanished", pid);
    goto fail_child;
  }
  /* the monitor's early start needs the init's netns final: a new one from
   * the clone (one joined by path is joined by the init, later) */
  if (parent_protocol(o, r, sv[0], (flags & CLONE_NEWNET) != 0, err) < 0)
    goto fail_child;
  r->sync_fd = sv[0];
  return 0;

fail_child:
  proc_kill_reap(pid);
  FAILPOINT_PAUSE_NOTE("spawn-init-reaped", pid);
  /* pid-reuse-create-abort: reaped, the pid is free for any process: the container's unwind
   * must not kill it again by that number */
  o->c->state->pid = 0;
  o->c->state->pid_start_time = 0;
  r->pid = -1;
  if (r->pty_master >= 0)
    close(r->pty_master);
  r->pty_master = -1;
fail:
  close_bind_fds(&bind_fds, cfg->n_mounts);
  cgroup_join_fds_close(joinfds, njoin);
  if (sv[0] >= 0)
    close(sv[0]);
  if (sv[1] >= 0)
    close(sv[1]);
  return -1;
}

int spawn_start(struct spawn_result *r, struct error *err)
{
  struct sync_msg m;
  int ret = r->started ? 0 : sync_send(r->sync_fd, SYNC_START, -1, err);

  /* the socket is close-on-exec in the init: EOF = the program runs */
  if (ret == 0) {
    int n = sync_recv(r->sync_fd, &m, NULL, err);
    if (n < 0)
      ret = -1;
    else if (n > 0 && m.type == SYNC_ERROR) {
      error_set(err, 0, "%s", m.msg);
      ret = -1;
    }
  }
  close(r->sync_fd);
  r->sync_fd = -1;
  return ret;
}

/* Whether the init took START: POLLERR on our write end once it closed the
 * fifo (close-on-exec) or died. */
static bool fifo_taken(int fd, int ms)
{
  struct pollfd p = {.fd = fd, .events = 0};

  return poll(&p, 1, ms) > 0 && (p.revents & (POLLERR | POLLHUP));
}

/* START back out of the fifo of a frozen init (through a read end of our
 * own): true when it was still there, the init none the wiser. */
static bool fifo_take_back(int fd)
{
  struct error e = {0};
  int rd = procfs_reopen(fd, O_RDONLY | O_NONBLOCK | O_CLOEXEC, &e);
  char b;
  bool back;

  if (rd < 0)
    return false;
  back = read(rd, &b, 1) == 1;
  close(rd);
  return back;
}

int fifo_start(int dirfd, bool (*frozen)(void *), void *ud, struct error *err)
{
  int fd = openat(dirfd, "exec.fifo", O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  ssize_t n;

  if (fd < 0) {
    if (errno == ENXIO)
      return error_set(err, 0, "container not running");
    if (errno == ENOENT)
      return error_set(err, 0, "cannot start a container that has already started");
    return error_errno(err, "open exec.fifo");
  }
  n = write(fd, "0", 1);
  if (n != 1) {
    error_errno(err, "write exec.fifo");
    close(fd);
    return -1;
  }
  /* A cgroup frozen by another tool (not our `pause`, which start sees in
   * the status): its init never takes START; it was waited for 10 s and
   * start said it started (start-frozen-outside).  The freezer is read only
   * when the init is slow, not on every start. */
  if (frozen != NULL && !fifo_taken(fd, 100) && frozen(ud) && fifo_take_back(fd)) {
    close(fd);
    return error_set(err, 0, "cannot start a container in the paused state (its cgroup is frozen)");
  }
  if (unlinkat(dirfd, "exec.fifo", 0) < 0) {
    error_errno(err, "remove exec.fifo");
    close(fd);
    return -1;
  }
  /* The init holds the fifo close-on-exec: when our write end reports
   * POLLERR (no reader left) its program runs (or it died), so poststart
   * hooks run after the process started, as the spec orders. */
  for (int waited = 0; waited < 10000; waited += 100)
    if (fifo_taken(fd, 100))
      break;
  close(fd);
  return 0;
}
