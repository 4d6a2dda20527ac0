/* exec.c - `agentrt exec`: run another process in a running container.
 *
 * The runtime joins the init's pid (and time) namespace for its children,
 * forks, and the child joins the rest (user first), is placed in the
 * container's cgroup by the parent, becomes the configured process and
 * execs through the sealed trampoline.  The sync socket is close-on-exec:
 * EOF means the exec happened, an ERROR message means it did not.
 *
 * CVE-2016-9962: the child is non-dumpable from birth until execve (the
 * parent drops its own dumpable flag around the fork, so there is no window
 * before the child's prctl), and a process in the container cannot ptrace it
 * while it still holds host fds, even under a profile that allows ptrace.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/create.h"
#include "cli/exec_opts.h"
#include "cli/tty.h"
#include "common/failpoint.h"
#include "common/log.h"
#include "common/util.h"
#include "container/audit_cli.h"
#include "container/console.h"
#include "container/seccomp_notify.h"
#include "monitor/monitor.h"
#include "container/container.h"
#include "container/init.h"
#include "container/lsm.h"
#include "container/process.h"
#include "container/seccomp_cache.h"
#include "container/sync.h"
#include "os/fsutil.h"
#include "os/passwd.h"
#include "os/procfs.h"
#include "os/safepath.h"
#include "profile/profile.h"

static const char *const ns_files[OCI_NS_COUNT] = {
    [OCI_NS_PID] = "pid",       [OCI_NS_NETWORK] = "net", [OCI_NS_MOUNT] = "mnt",
    [OCI_NS_IPC] = "ipc",       [OCI_NS_UTS] = "uts",     [OCI_NS_USER] = "user",
    [OCI_NS_CGROUP] = "cgroup", [OCI_NS_TIME] = "time",
};

static void close_ns(int fds[OCI_NS_COUNT])
{
  for (int t = 0; t < OCI_NS_COUNT; t++)
    if (fds[t] >= 0)
      close(fds[t]);
}

/* Open the init's namespaces that differ from ours: each ns directory is
 * opened (and checked to be procfs) once, ours only stat'ed for its inode. */
static int open_init_ns(pid_t pid, uint64_t start_time, int fds[OCI_NS_COUNT], struct error *err)
{
  char who[32];
  cleanup_close int dir = -1, self = -1;

  for (int t = 0; t < OCI_NS_COUNT; t++)
    fds[t] = -1;
  snprintf(who, sizeof who, "%d", pid);
  if ((dir = procfs_open_ns_dir(who, err)) < 0 || (self = procfs_open_ns_dir("self", err)) < 0)
    return -1;
  for (int t = 0; t < OCI_NS_COUNT; t++) {
    struct stat a, b;
    int fd = procfs_open_ns_at(dir, who, ns_files[t], err);
    if (fd < 0) {
      if (err->code == ENOENT) {
        error_clear(err);
        continue;
      }
      close_ns(fds);
      return -1;
    }
    if (fstat(fd, &a) == 0 && fstatat(self, ns_files[t], &b, 0) == 0 && a.st_ino == b.st_ino &&
        a.st_dev == b.st_dev)
      close(fd);
    else
      fds[t] = fd;
  }
  /* pid-reuse-exec: the init may have died since its status was read, and its pid gone to
   * another process (whose namespaces, the host's, were then opened and joined).  Alive now
   * with its start time, it was alive while we opened them: a pid is not reused meanwhile. */
  if (!proc_alive(pid, start_time)) {
    close_ns(fds);
    return error_set(err, 0, "cannot exec in a stopped container: container not running");
  }
  return 0;
}

static int open_pty(int *ret_master, int *ret_peer, struct error *err)
{
  int unlock = 0;
  int m = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);

  if (m < 0)
    return error_errno(err, "open /dev/ptmx in the container");
  if (ioctl(m, TIOCSPTLCK, &unlock) < 0) {
    close(m);
    return error_errno(err, "unlock pty");
  }
  *ret_peer = ioctl(m, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (*ret_peer < 0) {
    close(m);
    return error_errno(err, "open pty peer");
  }
  *ret_master = m;
  return 0;
}

struct exec_child {
  const void *config_bpf; /* linux.seccomp compiled (create's cache), or NULL: compiled here */
  const void *extra_bpf;
  int sock;
  int ns[OCI_NS_COUNT];
  const struct oci_process *proc;
  const struct oci_seccomp *seccomp;
  int preserve_fds;
  int cgroup_fds[CGROUP_JOIN_MAX]; /* v1: joined with cgroup_join_self after GO */
  size_t n_cgroup_fds;
  int listener_fd;                   /* connected to linux.seccomp.listenerPath, or < 0 */
  const void *notify_bpf;            /* seccomp-notify.bpf, its listener for the monitor */
  int notify_fd;                     /* connected to the monitor, or < 0 */
  const struct oci_state *state;     /* for the listener's state document */
  bool relayed;                      /* we relay its pty (no console socket): no CR added */
  const struct oci_linux *linux_cfg; /* the container's: its personality */
  const char *make_home; /* made (0700) as the process's user before the exec, or NULL */
};

/* The home exec_other_uid_home chose, made as the process's user (after its
 * uid, capabilities and seccomp filter are in place), in the container's
 * /tmp: missing, it is made; present, it must be a directory of that uid's
 * that no one else may enter, else the exec fails (another uid of the
 * container made that name first). */
static int make_home(const void *ud, struct error *err)
{
  const char *home = ud;
  struct stat st;

  if (mkdir(home, 0700) == 0 || errno == EEXIST) {
    if (lstat(home, &st) < 0)
      return error_errno(err, "home `%s`", home);
    if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077) != 0)
      return error_set(err, 0,
                       "home `%s` is not uid %u's own directory (another user made it): "
                       "pass HOME",
                       home, (unsigned)geteuid());
    return 0;
  }
  return error_errno(err, "home `%s`", home);
}

__attribute__((noreturn)) static void exec_child_main(struct exec_child *x)
{
  static const enum oci_ns_type order[] = {OCI_NS_USER, OCI_NS_MOUNT, OCI_NS_NETWORK,
                                           OCI_NS_IPC,  OCI_NS_UTS,   OCI_NS_CGROUP};
  struct error err = {0};
  struct process_opts po = {0};
  cleanup_free char *path = NULL;
  int master = -1, peer = -1, host_pid = 0;

  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  process_reset_signals();
  /* GO carries our pid in the runtime's pid namespace */
  if (sync_expect_code(x->sock, SYNC_GO, &host_pid, &err) < 0)
    _exit(1);
  if (process_apply_cpu_initial(x->proc, &err) < 0 ||
      cgroup_join_self(x->cgroup_fds, x->n_cgroup_fds, &err) < 0)
    goto fail;
  for (size_t i = 0; i < ARRAY_SIZE(order); i++) {
    enum oci_ns_type t = order[i];
    if (x->ns[t] >= 0 && setns(x->ns[t], oci_ns_clone_flag(t)) < 0) {
      error_errno(&err, "join %s namespace", oci_ns_name(t));
      goto fail;
    }
  }
  procfs_reset();
  if (x->proc->terminal) {
    if (open_pty(&master, &peer, &err) < 0)
      goto fail;
    if (x->proc->has_console_size &&
        console_set_size(master, x->proc->console_height, x->proc->console_width) < 0) {
      error_errno(&err, "terminal: set window size (process.consoleSize)");
      goto fail;
    }
    if (x->relayed)
      console_clear_onlcr(master); /* before any output: we have not exec'd yet */
    if (sync_send(x->sock, SYNC_PTY, master, &err) < 0)
      goto fail;
    close(master);
  }
  if (process_apply_limits(x->proc, &err) < 0 || process_set_personality(x->linux_cfg, &err) < 0 ||
      process_resolve_executable(x->proc, &path, &err) < 0)
    goto fail;
  if (peer >= 0 && console_make_stdio(peer, &err) < 0)
    goto fail;
  /* without a terminal too, a session of its own (runc's): kill(0) inside
   * must not reach the caller's process group */
  if (peer < 0 && setsid() < 0 && getsid(0) != getpid()) {
    error_errno(&err, "setsid");
    goto fail;
  }
  po.preserve_fds = x->preserve_fds;
  po.keep_fd = x->sock;
  po.in_userns = x->ns[OCI_NS_USER] >= 0;
  po.seccomp = x->seccomp;
  po.seccomp_bpf = x->config_bpf;
  po.extra_bpf = x->extra_bpf;
  po.notify_bpf = x->notify_bpf;
  po.notify_fd = x->notify_fd;
  po.notify_ack = true;
  po.keep_keyring = x->state->no_new_keyring;
  if (x->make_home != NULL) {
    po.before_exec = make_home;
    po.before_exec_ud = x->make_home;
  }
  if (x->listener_fd >= 0) {
    po.has_listener = true;
    po.listener_fd = x->listener_fd;
    po.listener_msg =
        seccomp_listener_msg(x->seccomp, x->state->id, "running", host_pid, x->state->bundle,
                             x->state->annotations, x->state->n_annotations);
    if (po.listener_msg == NULL) {
      error_set(&err, 0, "seccomp: cannot build the listener's state document");
      goto fail;
    }
  }
  process_exec(x->proc, path, &po, &err);
fail:
  sync_send_error(x->sock, &err);
  _exit(127);
}

static bool forked_into; /* fork_into's last fork used CLONE_INTO_CGROUP */

static pid_t fork_into(int cgfd)
{
  struct clone_args a;
  pid_t pid;

  forked_into = false;
  memset(&a, 0, sizeof a);
  a.exit_signal = SIGCHLD;
  if (cgfd >= 0) {
    a.flags = CLONE_INTO_CGROUP;
    a.cgroup = (uint64_t)cgfd;
    pid = (pid_t)syscall(SYS_clone3, &a, sizeof a);
    forked_into = pid >= 0;
    if (pid >= 0 || (errno != ENOSYS && errno != EINVAL && errno != E2BIG))
      return pid;
  }
  return fork();
}

/* fork_into() with the child non-dumpable from its first instruction: the
 * flag is copied at fork, so the parent drops its own around the call. */
static pid_t fork_nondumpable(pid_t (*forker)(int), int cgfd)
{
  int dumpable = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
  pid_t pid;

  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  pid = forker(cgfd);
  if (pid != 0 && dumpable > 0)
    prctl(PR_SET_DUMPABLE, dumpable, 0, 0, 0);
  return pid;
}

/* Parent side: returns the child's pid once it exec'd. */
static pid_t exec_spawn(struct container *c, struct exec_child *x, const char *console_socket,
                        int *ret_master, struct error *err)
{
  int sv[2], saved_pid = -1, saved_time = -1, fd;
  cleanup_close int cgfd = -1, ufd = -1;
  struct process_area_copy area;
  bool unified_late = false;
  struct sync_msg m;
  pid_t pid;
  int n;

  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    return error_errno(err, "socketpair");
  if (c->cgroup)
    cgfd = cgroup_clone_fd(c->cgroup);
  /* hybrid: into the cgroup2 hierarchy at the fork (cgroup_unified_clone_fd) */
  if (c->cgroup && cgfd < 0 && (ufd = cgroup_unified_clone_fd(c->cgroup)) >= 0)
    cgroup_unified_at_clone(c->cgroup, true);
  x->n_cgroup_fds = 0;
  if (c->cgroup && cgfd < 0 &&
      cgroup_join_fds(c->cgroup, x->cgroup_fds, &x->n_cgroup_fds, err) < 0) {
    close(sv[0]);
    close(sv[1]);
    return -1;
  }
  if (x->ns[OCI_NS_PID] >= 0) {
    saved_pid = procfs_open_ns("self", "pid", err);
    if (saved_pid < 0 || setns(x->ns[OCI_NS_PID], CLONE_NEWPID) < 0)
      goto fail_ns;
  }
  if (x->ns[OCI_NS_TIME] >= 0) {
    saved_time = procfs_open_ns("self", "time_for_children", err);
    if (saved_time < 0 || setns(x->ns[OCI_NS_TIME], CLONE_NEWTIME) < 0)
      goto fail_ns;
  }
  /* exec-environ: the child is born without our environment and command
   * line in its /proc (it may wait frozen in the container's cgroup) */
  process_area_hide(&area);
  pid = fork_nondumpable(fork_into, cgfd >= 0 ? cgfd : ufd);
  if (pid != 0)
    process_area_restore(&area);
  if (pid > 0 && ufd >= 0 && !forked_into) { /* refused: joined below, from here */
    cgroup_unified_at_clone(c->cgroup, false);
    unified_late = true;
  }
  if (pid == 0) {
    close(sv[0]);
    x->sock = sv[1];
    exec_child_main(x);
  }
  /* In a user namespace that does not own our original pid namespace
   * (rootless engines) going back is EPERM; nothing forks after this. */
  if (saved_pid >= 0 && setns(saved_pid, CLONE_NEWPID) < 0)
    log_debug("restore pid namespace: %s", strerror(errno));
  if (saved_time >= 0 && setns(saved_time, CLONE_NEWTIME) < 0)
    log_warning("restore time namespace: %s", strerror(errno));
  if (saved_pid >= 0)
    close(saved_pid);
  if (saved_time >= 0)
    close(saved_time);
  close(sv[1]);
  cgroup_join_fds_close(x->cgroup_fds, x->n_cgroup_fds);
  /* the listener connection is the child's now: the agent sees EOF once it sent */
  if (x->listener_fd >= 0) {
    close(x->listener_fd);
    x->listener_fd = -1;
  }
  if (x->notify_fd >= 0) {
    close(x->notify_fd);
    x->notify_fd = -1;
  }
  if (pid < 0) {
    close(sv[0]);
    return error_errno(err, "fork");
  }
  /* v2 with CLONE_INTO_CGROUP refused (fork_into fell back to fork): the
   * process is still in ours, move it as on v1 */
  if (c->cgroup && (cgfd < 0 || !forked_into) && x->n_cgroup_fds == 0 &&
      cgroup_add_pid(c->cgroup, pid, err) < 0)
    goto fail_child;
  if (unified_late && x->n_cgroup_fds > 0 && cgroup_unified_add_pid(c->cgroup, pid, err) < 0)
    goto fail_child;
  FAILPOINT("exec-after-fork");
  if (sync_send_code(sv[0], SYNC_GO, pid, err) < 0)
    goto fail_child;
  for (;;) {
    n = sync_recv(sv[0], &m, &fd, err);
    if (n < 0)
      goto fail_child;
    if (n == 0)
      break; /* the socket closed on exec: the process runs */
    if (m.type == SYNC_PTY) {
      *ret_master = fd;
      continue;
    }
    if (fd >= 0)
      close(fd);
    if (m.type == SYNC_ERROR) {
      error_set(err, 0, "%s", m.msg);
      err->code = m.code;
    } else {
      error_set(err, 0, "sync: unexpected message %d", m.type);
    }
    goto fail_child;
  }
  close(sv[0]);
  if (console_socket && *ret_master >= 0) {
    /* console-receiver-drops-master: its process would die of SIGHUP */
    if (console_hand_over(console_socket, ret_master, err) < 0) {
      kill(pid, SIGKILL);
      return -1;
    }
  }
  return pid;

fail_ns:
  error_errno(err, "join the container's pid/time namespace");
  cgroup_join_fds_close(x->cgroup_fds, x->n_cgroup_fds);
  if (saved_pid >= 0)
    close(saved_pid);
  if (saved_time >= 0)
    close(saved_time);
  close(sv[0]);
  close(sv[1]);
  return -1;
fail_child:
  proc_kill_reap(pid);
  close(sv[0]);
  if (*ret_master >= 0)
    close(*ret_master);
  *ret_master = -1;
  return -1;
}

/* NAME=VALUE of the created process's env into proc's (replacing its own):
 * the secrets' placeholders and the proxy's CA bundle variables, so that a
 * process an engine passes with --process (its own env) gets them too. */
static void exec_inherit_env(const struct container *c, struct oci_process *proc, const char *name)
{
  const struct oci_process *init = c->config ? c->config->process : NULL;
  size_t n = strlen(name);
  const char *kv = NULL;

  for (size_t i = 0; init != NULL && init->env != NULL && init->env[i] != NULL; i++)
    if (strncmp(init->env[i], name, n) == 0 && init->env[i][n] == '=')
      kv = init->env[i];
  if (kv == NULL)
    return;
  for (size_t i = 0; proc->env != NULL && proc->env[i] != NULL; i++)
    if (strncmp(proc->env[i], name, n) == 0 && proc->env[i][n] == '=') {
      free(proc->env[i]);
      proc->env[i] = xstrdup(kv);
      return;
    }
  strv_push(&proc->env, kv);
}

/* An exec as the init's uid (not 0) without HOME or with HOME=/, where the profile gave the
 * init a home of its own because its uid has no passwd entry
 * (agent-home-uid-without-passwd): the same home, not the init's fallback "/"
 * on the read-only root.  No I/O: the init's final env is in the state. */
static const char *exec_home(char *const *env)
{
  for (size_t i = 0; env != NULL && env[i] != NULL; i++)
    if (str_has_prefix(env[i], "HOME="))
      return env[i] + 5;
  return NULL;
}

static void exec_set_home(struct oci_process *proc, const char *home)
{
  cleanup_free char *kv = NULL;

  for (size_t i = 0; proc->env != NULL && proc->env[i] != NULL; i++)
    if (str_has_prefix(proc->env[i], "HOME=")) {
      free(proc->env[i]);
      proc->env[i] = xfmt("HOME=%s", home);
      return;
    }
  kv = xfmt("HOME=%s", home);
  strv_push(&proc->env, kv);
}

/* The home of uid in the container's /etc/passwd, read through the init's
 * root (resolved inside it), or NULL.  pid-reuse-exec-home: the root is
 * reached through a /proc/PID handle checked against the init's start time:
 * an init that died since exec's status check, its pid taken by another
 * process, is not replaced by that process's root (its /etc/passwd). */
static char *exec_passwd_home(const struct container *c, uid_t uid)
{
  struct error e = {0};
  cleanup_close int proc = proc_open_identified(c->state->pid, c->state->pid_start_time, &e);
  cleanup_close int root = proc < 0 ? -1 : openat(proc, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
  cleanup_close int fd = -1;
  cleanup_free char *data = NULL;
  size_t len = 0;
  struct stat st;
  char *home = NULL;

  if (root >= 0)
    fd = safe_openat(root, "/etc/passwd", O_RDONLY | O_NONBLOCK | O_NOCTTY, 0, &e);
  /* a FIFO or a device planted there must not block or feed us forever */
  if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
      read_fd_all(fd, 4 << 20, &data, &len, &e) == 0)
    home = passwd_home(data, len, NULL, uid);
  error_clear(&e);
  return home;
}

/* s with "$HOME" (at most one, as the profile's entries have) replaced by home. */
static char *exec_expand_home(const char *s, const char *home)
{
  const char *t = strstr(s, PROFILE_HOME_TOKEN);

  if (t == NULL)
    return NULL;
  return xfmt("%.*s%s%s", (int)(t - s), s, home, t + strlen(PROFILE_HOME_TOKEN));
}

/* The exec inherited the init's env, where the profile's defaults were
 * expanded with the init's home (GOCACHE=/root/.cache/go-build, PATH's
 * /root/.local/bin): drop those that still have that value, so that the
 * profile sets them again for the new home.  An engine's own values differ
 * and stay. */
static void exec_drop_home_defaults(const struct agent_profile *p, struct oci_process *proc,
                                    const char *old)
{
  for (char **d = p->env.defaults; d != NULL && *d != NULL; d++) {
    cleanup_free char *kv = exec_expand_home(*d, old);
    size_t k = 0;

    for (size_t i = 0; kv != NULL && proc->env != NULL && proc->env[i] != NULL; i++) {
      if (streq(proc->env[i], kv))
        free(proc->env[i]);
      else
        proc->env[k++] = proc->env[i];
    }
    if (kv != NULL && proc->env != NULL)
      proc->env[k] = NULL;
  }
  for (size_t i = 0; proc->env != NULL && proc->env[i] != NULL; i++) {
    char *out, *w, *save = NULL;
    cleanup_free char *copy = NULL;

    if (!str_has_prefix(proc->env[i], "PATH="))
      continue;
    copy = xstrdup(proc->env[i] + 5);
    out = xstrdup("PATH=");
    for (char *dir = strtok_r(copy, ":", &save); dir != NULL; dir = strtok_r(NULL, ":", &save)) {
      bool drop = false;
      for (char **a = p->env.path_append; !drop && a != NULL && *a != NULL; a++) {
        cleanup_free char *x = exec_expand_home(*a, old);
        drop = x != NULL && streq(x, dir);
      }
      if (drop)
        continue;
      w = xfmt("%s%s%s", out, out[5] != '\0' ? ":" : "", dir);
      free(out);
      out = w;
    }
    free(proc->env[i]);
    proc->env[i] = out;
  }
}

/* An exec as a uid other than 0 and the init's (`docker exec -u 1000` into a
 * container whose init is root) whose HOME is "/", none, or the init's own
 * (inherited with the init's env), and the container's /etc/passwd gives it
 * none but "/": on the profile's read-only root that home is unusable, and the
 * scratch home made at create is the init's (root's, 0700).  It gets agentrt-home-UID in the
 * profile's first world-writable scratch tmpfs (/tmp), made as that uid when missing (make_home)
 * and kept from one exec to the next (agent-home-exec-other-uid).  One read of
 * /etc/passwd, only for such an exec; the path made, or NULL. */
static char *exec_other_uid_home(const struct container *c, const struct agent_profile *p,
                                 struct oci_process *proc)
{
  const struct oci_process *init = c->config ? c->config->process : NULL;
  const char *own = exec_home(proc->env);
  const char *ihome = init ? exec_home(init->env) : NULL;
  const char *dir = NULL;
  bool scratch_home = false, inherited;
  char *home;

  if (init == NULL || proc->user.uid == 0 || proc->user.uid == init->user.uid ||
      !p->rootfs_readonly)
    return NULL;
  /* `exec` without --process takes the init's env, and with it the init's
   * home (root's scratch tmpfs, 0700): not this uid's */
  inherited = own != NULL && ihome != NULL && !streq(ihome, "/") && streq(own, ihome);
  if (own != NULL && !streq(own, "/") && !inherited)
    return NULL;
  if (own == NULL || inherited) {
    cleanup_free char *listed = exec_passwd_home(c, proc->user.uid);
    if (listed != NULL && !streq(listed, "/")) {
      /* the process finds its own home there, as runc's does */
      if (inherited) {
        exec_drop_home_defaults(p, proc, ihome);
        exec_set_home(proc, listed);
      }
      return NULL;
    }
  }
  for (size_t i = 0; i < p->n_scratch; i++) {
    scratch_home |= streq(p->scratch[i].path, PROFILE_HOME_TOKEN);
    if (dir == NULL && p->scratch[i].path[0] == '/' && (p->scratch[i].mode & 01777) == 01777 &&
        !p->scratch[i].noexec)
      dir = p->scratch[i].path;
  }
  if (!scratch_home || dir == NULL)
    return NULL;
  home = xfmt("%s/agentrt-home-%u", streq(dir, "/") ? "" : dir, proc->user.uid);
  if (ihome != NULL && !streq(ihome, "/"))
    exec_drop_home_defaults(p, proc, ihome);
  exec_set_home(proc, home);
  return home;
}

static void exec_inherit_home(const struct container *c, struct oci_process *proc)
{
  const struct oci_process *init = c->config ? c->config->process : NULL;
  const char *home = init ? exec_home(init->env) : NULL;
  const char *own = exec_home(proc->env);
  cleanup_free char *want = NULL;

  /* none (Docker) or "/" (Podman passes the passwd entry's) */
  if (home == NULL || proc->user.uid == 0 || proc->user.uid != init->user.uid ||
      (own != NULL && !streq(own, "/")))
    return;
  want = xfmt("/home/agentrt-%u", proc->user.uid);
  if (streq(home, want))
    exec_inherit_env(c, proc, "HOME");
}

/* The container's profile also bounds what an exec may ask for (--cap,
 * --process with capabilities, no_new_privileges). */
static int exec_apply_profile(struct container *c, struct oci_process *proc, char **ret_home,
                              struct error *err)
{
  struct agent_profile *p = NULL;
  const char *name = c->state->profile;
  int r;

  if (name == NULL || *name == '\0')
    return 0;
  if (profile_load(name, &p, err) < 0)
    return error_prefix(err, "exec `%s`: profile `%s`", c->id, name);
  exec_inherit_home(c, proc);
  *ret_home = exec_other_uid_home(c, p, proc);
  r = profile_apply_process(proc, p, err);
  if (r == 0 && (p->n_secrets > 0 || p->egress.n_http > 0)) {
    static const char *const vars[] = {"SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS",
                                       "CURL_CA_BUNDLE", "GIT_SSL_CAINFO"};
    for (size_t i = 0; i < p->n_secrets; i++)
      exec_inherit_env(c, proc, p->secrets[i].name);
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
      exec_inherit_env(c, proc, vars[i]);
  }
  profile_free(p);
  if (r < 0)
    return error_prefix(err, "exec `%s`", c->id);
  return 0;
}

/* The profile's seccomp filter recorded at create (absent: none):
 * seccomp-extra.bpf, or its notify variant seccomp-notify.bpf. */
static int load_bpf(struct container *c, const char *name, struct sock_fprog **ret,
                    struct error *err)
{
  cleanup_free char *data = NULL;
  size_t len = 0;
  struct sock_fprog *p;

  *ret = NULL;
  if (read_own_file_at(c->dirfd, name, 1 << 20, &data, &len, err) < 0) {
    if (err->code == ENOENT) {
      error_clear(err);
      return 0;
    }
    return -1;
  }
  if (len == 0 || len % sizeof(struct sock_filter) != 0)
    return error_set(err, 0, "container `%s`: %s is corrupt", c->id, name);
  p = xmalloc(sizeof *p + len);
  memcpy(p + 1, data, len);
  p->filter = (struct sock_filter *)(p + 1);
  p->len = (unsigned short)(len / sizeof(struct sock_filter));
  *ret = p;
  return 0;
}

/* Refused-syscall records (monitor/monitor_seccomp.c): when create left
 * the notify variant, the process loads it with a listener of its own
 * (its filter chain is not the init's) and sends that to the monitor on a
 * connection opened here, on the host.  No monitor to take it (it died):
 * the plain filter, the same refusals, unrecorded. */
static int load_notify(struct container *c, struct exec_child *x, struct sock_fprog **ret,
                       struct error *err)
{
  struct error why = {0};

  if (load_bpf(c, "seccomp-notify.bpf", ret, err) < 0)
    return -1;
  if (*ret == NULL)
    return 0; /* the trail is off, or the config's filter has the listener */
  x->notify_fd = monitor_seccomp_connect(c->dirfd, &why);
  if (x->notify_fd < 0) {
    log_debug("exec `%s`: refused calls not recorded: %s", c->id, why.msg);
    free(*ret);
    *ret = NULL;
  }
  return 0;
}

int cmd_exec(const struct global_opts *g, int argc, char **argv, struct error *err)
{
  struct exec_opts eo;
  struct container *c = NULL;
  struct oci_process *proc = NULL;
  struct exec_child x = {.listener_fd = -1, .notify_fd = -1};
  cleanup_free struct sock_fprog *extra = NULL, *notify = NULL, *own_bpf = NULL;
  cleanup_free char *home = NULL;
  int master = -1, sigfd = -1, ret = -1;
  pid_t pid;

  if (exec_opts_parse(argc, argv, &eo, err) < 0)
    return -1;
  if (eo.help)
    return 0;
  if (eo.process_file && exec_read_process(&eo, err) < 0)
    goto out;
  /* A `pause` between the status check below and the new process joining
   * the cgroup would leave that process, and this command, blocked in a
   * frozen cgroup (found by tests/security/load.bats).  pause takes the
   * container's lock exclusively: hold it shared until the process is in. */
  if (container_load(g, eo.id, LOCK_SH, &c, err) < 0)
    goto out;
  if (c->status == STATUS_STOPPED || c->status == STATUS_CREATING) {
    error_set(err, 0, "exec `%s`: cannot exec in a stopped container: container not running",
              c->id);
    goto out;
  }
  if (c->status == STATUS_PAUSED && !eo.ignore_paused) {
    error_set(err, 0, "exec `%s`: cannot exec in a paused container (use --ignore-paused)", c->id);
    goto out;
  }
  /* --ignore-paused: the process starts frozen and runs at `resume`, which
   * takes the lock exclusively; no pause can slip in (the container is
   * paused already), so do not hold the lock while the process is frozen. */
  if (c->status == STATUS_PAUSED)
    flock(c->dirfd, LOCK_UN);
  if (container_load_config(c, err) < 0 || container_cgroup(c, g, err) < 0)
    goto out;
  for (char **cg = eo.cgroups; cg && *cg; cg++) {
    if (c->cgroup == NULL) {
      error_set(err, 0, "exec `%s`: --cgroup: the container has no cgroup", c->id);
      goto out;
    }
    if (cgroup_use_sub(c->cgroup, *cg, err) < 0) {
      error_prefix(err, "exec `%s`", c->id);
      goto out;
    }
  }
  if (exec_build_process(&eo, c->config, &proc, err) < 0) {
    error_prefix(err, "exec `%s`", c->id);
    goto out;
  }
  if (proc->caps.n_unknown > 0)
    log_warning("exec `%s`: process.capabilities: %u unknown (%s), ignoring", c->id,
                proc->caps.n_unknown, proc->caps.unknown);
  FAILPOINT_PAUSE("exec-before-profile");
  if (exec_apply_profile(c, proc, &home, err) < 0)
    goto out;
  if (lsm_check_process(proc, NULL, err) < 0) {
    error_prefix(err, "exec `%s`", c->id);
    goto out;
  }
  if (proc->terminal && eo.detach && eo.console_socket == NULL) {
    error_set(err, 0, "exec `%s`: process.terminal is true but --console-socket was not given",
              c->id);
    goto out;
  }
  /* as runc: a console socket only with a terminal and -d (it was ignored) */
  if (eo.console_socket != NULL && (!proc->terminal || !eo.detach)) {
    error_set(err, 0, "exec `%s`: --console-socket given but %s", c->id,
              !proc->terminal ? "process.terminal is false (no -t)" : "exec is not detached (-d)");
    goto out;
  }
  FAILPOINT_PAUSE("exec-before-join");
  if (open_init_ns(c->state->pid, c->state->pid_start_time, x.ns, err) < 0) {
    error_prefix(err, "exec `%s`", c->id);
    goto out;
  }
  x.proc = proc;
  x.make_home = home;
  x.relayed = !eo.detach;
  x.linux_cfg = c->config->linux;
  x.seccomp = c->config->linux ? c->config->linux->seccomp : NULL;
  x.state = c->state;
  /* SCMP_ACT_NOTIFY: connected here, on the host; the process sends */
  x.listener_fd = seccomp_listener_connect(x.seccomp, err);
  if (x.listener_fd == -1) {
    error_prefix(err, "exec `%s`", c->id);
    goto out_ns;
  }
  x.preserve_fds = eo.preserve_fds;
  /* the config's own filter from create's cache (cli/create.c) */
  if (x.seccomp != NULL && !oci_seccomp_uses_notify(x.seccomp)) {
    struct error ignore = {0};
    if (seccomp_cache_get(g->data_dir, x.seccomp, &own_bpf, &ignore) < 0)
      error_clear(&ignore);
    x.config_bpf = own_bpf;
  }
  if (load_bpf(c, "seccomp-extra.bpf", &extra, err) < 0 ||
      (extra != NULL && load_notify(c, &x, &notify, err) < 0))
    goto out_ns;
  x.extra_bpf = extra;
  x.notify_bpf = notify;
  if (!eo.detach && (sigfd = fwd_signals_block(err)) < 0)
    goto out_ns;
  /* recorded before the process runs, so it precedes the process's records */
  audit_cli_exec(g->root, c->id, proc->args, 0, proc->terminal, eo.detach);
  pid = exec_spawn(c, &x, eo.detach ? eo.console_socket : NULL, &master, err);
  if (pid < 0) {
    error_prefix(err, "exec `%s`", c->id);
    goto out_ns;
  }
  FAILPOINT("exec-after-spawn");
  flock(c->dirfd, LOCK_UN);
  if (write_pid_file(eo.pid_file, pid, err) < 0)
    goto out_ns;
  if (eo.detach) {
    ret = 0;
    goto out_ns;
  }
  ret = fwd_wait(pid, sigfd, &master, err);
out_ns:
  if (x.listener_fd >= 0)
    close(x.listener_fd);
  if (x.notify_fd >= 0)
    close(x.notify_fd);
  close_ns(x.ns);
out:
  if (sigfd >= 0)
    close(sigfd);
  if (master >= 0)
    close(master);
  if (proc)
    oci_process_free(proc);
  exec_opts_free(&eo);
  container_free(c);
  /* as runc: exec's own failures exit 255, so that no status the program
   * could return (0-254) is taken for one of ours; a bad command line is 1 */
  if (ret < 0) {
    log_fatal_error(err->msg[0] ? err->msg : "unknown error");
    return 255;
  }
  return ret;
}
