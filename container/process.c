/* process.c - from the container's init (or an exec'd process) to the
 * configured program: executable lookup, rlimits, user, capabilities,
 * no_new_privs, seccomp, fds, cwd, and the exec through the sealed
 * trampoline.  See process.h for the order and the CVEs it answers.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/keyctl.h>
#include <limits.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/log.h"
#include "common/util.h"
#include "container/lsm.h"
#include "container/process.h"
#include "container/seccomp_filter.h"
#include "container/seccomp_notify.h"
#include "os/fsutil.h"
#include "os/passwd.h"
#include "os/procfs.h"
#include "os/safepath.h"
#include "os/trampoline.h"

#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#define DEFAULT_UMASK 0022
#define NOTIFY_ACK_TIMEOUT_MS 5000 /* the monitor polls under load too */

/* Go's (and so runc's) error texts are lower-case; engines match them. */
static const char *lc_strerror(int e, char *buf, size_t n)
{
  snprintf(buf, n, "%s", strerror(e));
  if (buf[0] >= 'A' && buf[0] <= 'Z' && !(buf[1] >= 'A' && buf[1] <= 'Z'))
    buf[0] = (char)(buf[0] - 'A' + 'a');
  return buf;
}

static const char *env_get(char *const *env, const char *key)
{
  size_t kl = strlen(key);
  const char *v = NULL;

  for (size_t i = 0; env != NULL && env[i] != NULL; i++) /* the last one wins */
    if (strncmp(env[i], key, kl) == 0 && env[i][kl] == '=')
      v = env[i] + kl + 1;
  return v;
}

/* A relative name is relative to process.cwd, where the process will run. */
static char *join_cwd(const char *cwd, const char *path)
{
  while (path[0] == '.' && path[1] == '/')
    path += 2;
  if (path[0] == '/')
    return xstrdup(path);
  if (cwd == NULL || *cwd == '\0' || streq(cwd, "/"))
    return xfmt("/%s", path);
  return xfmt("%s/%s", cwd, path);
}

static bool is_executable_file(const struct stat *st)
{
  return !S_ISDIR(st->st_mode) && (st->st_mode & 0111) != 0;
}

/* args[0] with a slash: stat it, like exec.LookPath. */
static int check_path(const char *name, const char *cwd, char **ret_path, struct error *err)
{
  cleanup_free char *full = join_cwd(cwd, name);
  struct stat st;
  char e[128];

  if (stat(full, &st) < 0) {
    error_set(err, 0, "exec: \"%s\": stat %s: %s", name, name, lc_strerror(errno, e, sizeof e));
    err->code = errno;
    return -1;
  }
  if (!is_executable_file(&st)) {
    error_set(err, 0, "exec: \"%s\": permission denied", name);
    err->code = EACCES;
    return -1;
  }
  *ret_path = take_ptr(full);
  return 0;
}

static int search_path(const char *name, const char *path, const char *cwd, char **ret_path,
                       struct error *err)
{
  const char *p = path;

  for (;;) {
    const char *end = strchrnul(p, ':');
    cleanup_free char *dir = end == p ? xstrdup(".") : xstrndup(p, (size_t)(end - p));
    cleanup_free char *rel = xfmt("%s/%s", dir, name);
    cleanup_free char *full = join_cwd(cwd, rel);
    struct stat st;

    if (stat(full, &st) == 0 && is_executable_file(&st)) {
      *ret_path = take_ptr(full);
      return 0;
    }
    if (*end == '\0')
      break;
    p = end + 1;
  }
  error_set(err, 0, "exec: \"%s\": executable file not found in $PATH", name);
  err->code = ENOENT;
  return -1;
}

int process_resolve_executable(const struct oci_process *p, char **ret_path, struct error *err)
{
  const char *name = p->args != NULL ? p->args[0] : NULL;
  const char *path;
  int r;

  if (name == NULL || *name == '\0')
    return error_set(err, 0, "process.args must not be empty");
  if (strchr(name, '/') != NULL) {
    r = check_path(name, p->cwd, ret_path, err);
  } else {
    path = env_get(p->env, "PATH");
    if (path == NULL)
      path = DEFAULT_PATH;
    r = search_path(name, path, p->cwd, ret_path, err);
  }
  if (r < 0)
    return r;
  /* The mode bits say nothing of a noexec mount (a volume mounted noexec): the
   * kernel would refuse the execve after start, so refuse it now, as runc and
   * crun do (and engines map "permission denied" to exit status 126). */
  if (faccessat(AT_FDCWD, *ret_path, X_OK, AT_EACCESS) < 0 && errno == EACCES) {
    free(*ret_path);
    *ret_path = NULL;
    error_set(err, 0, "exec: \"%s\": permission denied", name);
    err->code = EACCES;
    return -1;
  }
  return 0;
}

static int apply_rlimit(const struct oci_rlimit *r, struct error *err)
{
  struct rlimit want = {.rlim_cur = r->soft, .rlim_max = r->hard}, cur = {0, 0};
  const char *name = r->type ? r->type : "rlimit";
  int e;

  if (setrlimit(r->resource, &want) == 0)
    return 0;
  e = errno;
  getrlimit(r->resource, &cur);
  if (e == EPERM && want.rlim_max > cur.rlim_max)
    return error_set(err, 0,
                     "setrlimit %s: Operation not permitted (raising the hard limit from %llu "
                     "to %llu needs CAP_SYS_RESOURCE)",
                     name, (unsigned long long)cur.rlim_max, (unsigned long long)want.rlim_max);
  if (e == EINVAL && want.rlim_cur > want.rlim_max)
    return error_set(err, 0, "setrlimit %s: soft limit %llu is above the hard limit %llu", name,
                     (unsigned long long)want.rlim_cur, (unsigned long long)want.rlim_max);
  return error_set(err, e, "setrlimit %s", name);
}

int process_set_personality(const struct oci_linux *l, struct error *err)
{
  const char *d;

  if (l == NULL || !l->has_personality)
    return 0;
  d = l->personality_domain;
  if (d && strcmp(d, "LINUX32") == 0) {
    if (personality(PER_LINUX32) < 0)
      return error_errno(err, "personality LINUX32");
  } else if (personality(PER_LINUX) < 0) {
    return error_errno(err, "personality LINUX");
  }
  return 0;
}

/* execCPUAffinity's `what` list, or with none every CPU (the kernel keeps
 * what the cpuset allows): a runtime started under taskset must not pass its
 * own affinity on, as runc resets it too.  The reset is best effort. */
static int cpu_affinity(const char *list, const char *what, struct error *err)
{
  cpu_set_t set;

  if (list == NULL)
    memset(&set, 0xff, sizeof set);
  else {
    CPU_ZERO(&set);
    if (oci_cpu_list_parse(list, set.__bits, CPU_SETSIZE) < 0)
      return error_set(err, EINVAL, "process.execCPUAffinity.%s `%s`: not a CPU list", what, list);
  }
  if (sched_setaffinity(0, sizeof set, &set) == 0 || list == NULL)
    return 0;
  return error_errno(err, "process.execCPUAffinity.%s `%s`", what, list);
}

int process_apply_cpu_initial(const struct oci_process *p, struct error *err)
{
  if (p->exec_cpu_initial == NULL)
    return 0;
  return cpu_affinity(p->exec_cpu_initial, "initial", err);
}

/* sched_setattr(2)'s argument (linux/sched/types.h clashes with sched.h) */
struct sched_attr_v1 {
  uint32_t size;
  uint32_t sched_policy;
  uint64_t sched_flags;
  int32_t sched_nice;
  uint32_t sched_priority;
  uint64_t sched_runtime, sched_deadline, sched_period;
};

static int apply_scheduler(const struct oci_scheduler *s, struct error *err)
{
  struct sched_attr_v1 attr = {
      .size = sizeof attr,
      .sched_policy = (uint32_t)s->policy,
      .sched_flags = s->flags,
      .sched_nice = s->nice,
      .sched_priority = (uint32_t)s->priority,
      .sched_runtime = s->runtime,
      .sched_deadline = s->deadline,
      .sched_period = s->period,
  };
  const char *name = oci_sched_policy_name(s->policy);

  if (syscall(SYS_sched_setattr, 0, &attr, 0) == 0)
    return 0;
  if (errno == EPERM && s->policy == SCHED_DEADLINE)
    return error_set(err, 0,
                     "process.scheduler: %s: Operation not permitted (it needs a CPU affinity of "
                     "every CPU: not with linux.resources.cpu.cpus or execCPUAffinity)",
                     name);
  if (errno == EPERM && (s->policy == SCHED_FIFO || s->policy == SCHED_RR))
    return error_set(err, 0,
                     "process.scheduler: %s (priority %d): Operation not permitted (on cgroup v1 "
                     "the container's cgroup needs a real-time budget: "
                     "linux.resources.cpu.realtimeRuntime)",
                     name, s->priority);
  return error_errno(err, "process.scheduler: %s (nice %d, priority %d)", name, s->nice,
                     s->priority);
}

int process_apply_limits(const struct oci_process *p, struct error *err)
{
  char buf[32];

  for (size_t i = 0; i < p->n_rlimits; i++)
    if (apply_rlimit(&p->rlimits[i], err) < 0)
      return -1;
  if (cpu_affinity(p->exec_cpu_final, "final", err) < 0)
    return -1;
  if (p->has_scheduler && apply_scheduler(&p->scheduler, err) < 0)
    return -1;
  /* ioprio_set(IOPRIO_WHO_PROCESS, self, class << IOPRIO_CLASS_SHIFT | level) */
  if (p->has_io_priority &&
      syscall(SYS_ioprio_set, 1, 0, (p->io_priority_class << 13) | p->io_priority) < 0)
    return error_errno(err, "process.ioPriority: class %d, priority %d", p->io_priority_class,
                       p->io_priority);
  if (!p->has_oom_score_adj)
    return 0;
  snprintf(buf, sizeof buf, "%d", p->oom_score_adj);
  if (procfs_write("self/oom_score_adj", buf, err) < 0)
    return error_prefix(err, "set oom_score_adj to %d", p->oom_score_adj);
  return 0;
}

/* CVE-2024-21626: nothing but 0-2 and the preserved fds may reach the
 * container.  Mark the rest close-on-exec (keep_fd stays usable until the
 * exec, then goes too).  A preserved fd is one the caller passed: it had no
 * FD_CLOEXEC, or it would not have survived the exec into the runtime.  One
 * of the runtime's own fds (all opened close-on-exec) in a number of that
 * range the caller left closed keeps its flag.  The flag was cleared on the
 * whole range, so the state directory or an O_PATH of / reached the
 * container's process, a way out to the host (escapes.bats
 * preserve-fds-hole). */
static int prepare_fds(const struct process_opts *o, struct error *err)
{
  int first = 3 + (o->preserve_fds > 0 ? o->preserve_fds : 0);

  if (syscall(SYS_close_range, (unsigned)first, ~0U, CLOSE_RANGE_CLOEXEC) < 0) {
    struct rlimit rl = {0, 0};

    if (errno != ENOSYS && errno != EINVAL)
      return error_errno(err, "mark fds >= %d close-on-exec", first);
    getrlimit(RLIMIT_NOFILE, &rl);
    for (rlim_t fd = (rlim_t)first; fd < rl.rlim_cur && fd < (1U << 20); fd++)
      fcntl((int)fd, F_SETFD, FD_CLOEXEC);
  }
  /* the preserved range is left as it is; keep_fd is ours, close-on-exec
   * like the rest */
  if (o->keep_fd >= 3 && o->keep_fd < first && fcntl(o->keep_fd, F_SETFD, FD_CLOEXEC) < 0)
    return error_errno(err, "fd %d close-on-exec", o->keep_fd);
  return 0;
}

/* A session keyring of the process's own, not the caller's (keyring-leak):
 * anonymous, so no other container can make one of the same name first and
 * be joined to it.  No keyrings in the kernel (ENOSYS), or keyctl refused by
 * a filter the runtime itself runs under (EPERM: the container inherits that
 * filter and cannot reach any keyring either): nothing to leave, as runc. */
static int join_new_keyring(struct error *err)
{
  if (syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL) >= 0 || errno == ENOSYS ||
      errno == EPERM)
    return 0;
  return error_errno(err, "join a new session keyring");
}

static int gid_cmp(const void *a, const void *b)
{
  gid_t x = *(const gid_t *)a, y = *(const gid_t *)b;
  return x < y ? -1 : x > y;
}

static int switch_user(const struct oci_user *u, bool in_userns, struct error *err)
{
  cleanup_free gid_t *gids = xmalloc((u->n_additional_gids + 1) * sizeof *gids);
  size_t n = 0;

  /* each gid once, as runc (the kernel keeps a duplicate: `id` would show it
   * twice); sorted, as the kernel keeps them anyway */
  for (size_t i = 0; i < u->n_additional_gids; i++)
    gids[i] = u->additional_gids[i];
  if (u->n_additional_gids > 0)
    qsort(gids, u->n_additional_gids, sizeof *gids, gid_cmp);
  for (size_t i = 0; i < u->n_additional_gids; i++)
    if (n == 0 || gids[n - 1] != gids[i])
      gids[n++] = gids[i];
  if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
    return error_errno(err, "prctl(PR_SET_KEEPCAPS)");
  if (setgroups(n, gids) < 0) {
    /* a user namespace with /proc/self/setgroups "deny" */
    if (!(errno == EPERM && in_userns && n == 0))
      return error_errno(err, "setgroups (%zu additional gids)", n);
    log_debug("setgroups denied in the user namespace, no additional gids: ignoring");
  }
  if (setresgid(u->gid, u->gid, u->gid) < 0)
    return error_errno(err, "setresgid to %u", u->gid);
  if (setresuid(u->uid, u->uid, u->uid) < 0)
    return error_errno(err, "setresuid to %u", u->uid);
  return 0;
}

#define DEVPTS_MAGIC 0x1cd1

/* runc's "tty owner": the process's stdio that is the container's pty, a
 * pipe or a socket is handed to the process's uid (the group stays: devpts
 * gives its tty group), so that a non-root process can reopen
 * /proc/self/fd/0-2 (e.g. `tty`, writing to /dev/stdout).  Unlike runc, files
 * and other devices are left alone: they may be host files. */
static void give_stdio(uid_t uid)
{
  for (int fd = 0; fd <= 2; fd++) {
    struct stat st;
    struct statfs sf;
    bool mine;

    if (fstat(fd, &st) < 0 || st.st_uid == uid)
      continue;
    mine = S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) ||
           (S_ISCHR(st.st_mode) && fstatfs(fd, &sf) == 0 && sf.f_type == DEVPTS_MAGIC);
    if (mine && fchown(fd, uid, (gid_t)-1) < 0)
      log_debug("chown stdio fd %d to uid %u: %s, ignoring", fd, uid, strerror(errno));
  }
}

/* The home directory of uid in the container's /etc/passwd (we are inside
 * its root already); "/" when there is none, as runc and crun do. */
static char *container_home(uid_t uid)
{
  struct error e = {0};
  cleanup_close int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  cleanup_close int fd = -1;
  cleanup_free char *data = NULL;
  size_t len = 0;
  struct stat st;
  char *home;

  if (root < 0 ||
      (fd = safe_openat(root, "/etc/passwd", O_RDONLY | O_NONBLOCK | O_NOCTTY, 0, &e)) < 0)
    return xstrdup("/");
  /* a FIFO or a device planted there must not block or feed us forever */
  if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || read_fd_all(fd, 4 << 20, &data, &len, &e) < 0)
    return xstrdup("/");
  home = passwd_home(data, len, NULL, uid);
  return home ? home : xstrdup("/");
}

/* env plus HOME from /etc/passwd when env has none (runc and crun add it);
 * NULL when env is fine as it is. */
static char **env_with_home(char *const *env, uid_t uid)
{
  size_t n = strv_len(env);
  char **out;
  cleanup_free char *home = NULL;

  if (env_get(env, "HOME") != NULL)
    return NULL;
  home = container_home(uid);
  out = xmalloc((n + 2) * sizeof *out);
  for (size_t i = 0; i < n; i++)
    out[i] = env[i];
  out[n] = xfmt("HOME=%s", home);
  out[n + 1] = NULL;
  return out;
}

static int cwd_error(const char *cwd, int e, struct error *err)
{
  char buf[128];

  error_set(err, 0, "chdir to cwd `%s` set in config.json failed: %s", cwd,
            lc_strerror(e, buf, sizeof buf));
  err->code = e;
  return -1;
}

/* CVE-2024-21626: the cwd must be a path inside our root.  The kernel
 * prefixes "(unreachable)" when it is not; glibc hides that, so ask the
 * kernel directly. */
static int verify_cwd(const char *cwd, struct error *err)
{
  char buf[PATH_MAX + 1];

  if (syscall(SYS_getcwd, buf, sizeof buf) < 0)
    return error_errno(err, "getcwd after chdir to `%s`", cwd);
  if (buf[0] != '/')
    return error_set(err, 0,
                     "chdir to cwd `%s`: current working directory `%.256s` is outside the "
                     "container root: possible container breakout detected",
                     cwd, buf);
  return 0;
}

static bool has_seccomp(const struct process_opts *o)
{
  return o->seccomp_bpf != NULL || o->seccomp != NULL || o->extra_bpf != NULL;
}

static void send_listener(int sock, int fd, const char *msg)
{
  char cbuf[CMSG_SPACE(sizeof(int))] = {0};
  struct iovec iov = {.iov_base = (void *)msg, .iov_len = strlen(msg)};
  struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};

  if (fd >= 0) {
    struct cmsghdr *c;
    mh.msg_control = cbuf;
    mh.msg_controllen = sizeof cbuf;
    c = CMSG_FIRSTHDR(&mh);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &fd, sizeof fd);
  }
  if (sendmsg(sock, &mh, MSG_NOSIGNAL) < 0) {
    /* the monitor is gone: the denied calls fail (ENOSYS) without it */
  }
}

/* exec: the monitor answers "OK" once it polls the listener (a denied call
 * before would wait for it), "NO why" when it cannot. */
static int wait_ack(int sock, struct error *err)
{
  struct pollfd p = {.fd = sock, .events = POLLIN};
  char buf[128];
  ssize_t n = -1;
  int r;

  while ((r = poll(&p, 1, NOTIFY_ACK_TIMEOUT_MS)) < 0 && errno == EINTR)
    ;
  if (r > 0)
    while ((n = recv(sock, buf, sizeof buf - 1, MSG_DONTWAIT)) < 0 && errno == EINTR)
      ;
  if (n == 2 && memcmp(buf, "OK", 2) == 0)
    return 0;
  if (n > 3 && memcmp(buf, "NO ", 3) == 0) {
    buf[n] = '\0';
    return error_set(err, 0, "audit monitor: refused-syscall records: %s", buf + 3);
  }
  return error_set(err, 0, "audit monitor: refused-syscall records: %s",
                   r == 0 ? "no answer for the seccomp listener" : "gone");
}

/* The profile's filter with a listener for the monitor (refused-syscall
 * records).  The listener never stays here: sent, then closed, before the
 * program runs (the container answering its own notifications would let
 * the denied calls through). */
static int load_notify(const struct process_opts *o, struct error *err)
{
  const struct sock_fprog *n = o->notify_bpf, *extra = o->extra_bpf;
  int fd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, n);
  int e = errno;

  if (fd >= 0) {
    send_listener(o->notify_fd, fd, "L");
    close(fd);
    if (o->notify_ack && wait_ack(o->notify_fd, err) < 0) {
      close(o->notify_fd);
      return -1;
    }
    close(o->notify_fd);
    return 0;
  }
  /* one listener per filter chain: the engine's own (listenerPath) wins */
  send_listener(o->notify_fd, -1,
                e == EBUSY ? "OFF the process's seccomp filters have a listener already"
                           : "OFF the kernel refused a seccomp listener");
  close(o->notify_fd);
  if (extra != NULL &&
      seccomp_load_bpf(extra->filter, extra->len * sizeof(struct sock_filter), 0, err) < 0)
    return error_prefix(err, "profile seccomp filter");
  return 0;
}

static int load_seccomp(const struct process_opts *o, struct error *err)
{
  const struct sock_fprog *prog = o->seccomp_bpf;
  const struct sock_fprog *extra = o->extra_bpf;
  unsigned flags = 0;

  if (prog == NULL && o->seccomp != NULL && o->has_listener) {
    int nfd = -1, r;
    /* the message was built before: nothing but the send runs under a
     * filter whose agent does not have its fd yet */
    if (seccomp_apply_listener(o->seccomp, &nfd, err) < 0)
      return -1;
    r = seccomp_listener_send(o->listener_fd, o->listener_msg, nfd, err);
    close(nfd);
    close(o->listener_fd);
    if (r < 0)
      return -1;
  } else if (prog == NULL && o->seccomp != NULL) {
    if (seccomp_apply(o->seccomp, err) < 0)
      return -1;
  } else if (prog != NULL) {
    if (o->seccomp != NULL && seccomp_kernel_flags(o->seccomp, &flags, err) < 0)
      return -1;
    if (seccomp_load_bpf(prog->filter, prog->len * sizeof(struct sock_filter), flags, err) < 0)
      return -1;
  }
  if (o->notify_bpf != NULL && o->notify_fd >= 0)
    return load_notify(o, err);
  if (extra != NULL &&
      seccomp_load_bpf(extra->filter, extra->len * sizeof(struct sock_filter), 0, err) < 0)
    return error_prefix(err, "profile seccomp filter");
  return 0;
}

/* Capabilities, no_new_privs and seccomp (after switch_user()), in the
 * order that works both with and without no_new_privs. */
static int restrict_process(const struct oci_process *p, const struct process_opts *o,
                            struct error *err)
{
  if (has_seccomp(o) && !p->no_new_privileges) {
    /* Without no_new_privs, loading a filter needs CAP_SYS_ADMIN, which
     * setresuid() just cleared from the effective set: take it back from
     * the permitted set and load before the final capabilities. */
    if (caps_raise_effective(err) < 0 || load_seccomp(o, err) < 0)
      return -1;
  }
  if (caps_apply(&p->caps, p->has_caps, err) < 0)
    return -1;
  /* after the last change of credentials, which clears it; an execve keeps
   * it (sandbox-orphan-rootfs: the program is pid 1 and its parent the
   * agentrt sandbox that waits for it) */
  if (o->pdeathsig && prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
    return error_errno(err, "prctl(PR_SET_PDEATHSIG)");
  if (p->no_new_privileges && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    return error_errno(err, "prctl(PR_SET_NO_NEW_PRIVS)");
  /* With no_new_privs: as late as possible, so that besides the program's
   * own syscalls the filter only needs to allow execveat (and execve). */
  if (has_seccomp(o) && p->no_new_privileges && load_seccomp(o, err) < 0)
    return -1;
  return 0;
}

/* Does a line "inside outside count" of /proc/self/{uid,gid}_map cover id? */
static bool id_mapped(const char *map, uint32_t id)
{
  for (const char *p = map; p != NULL && *p != '\0';) {
    unsigned long long in, out, count;
    const char *nl = strchr(p, '\n');

    if (sscanf(p, "%llu %llu %llu", &in, &out, &count) == 3 && id >= in && id - in < count)
      return true;
    p = nl ? nl + 1 : NULL;
  }
  return false;
}

int user_check_mapped(const struct oci_user *u, struct error *err)
{
  cleanup_free char *uids = NULL, *gids = NULL;

  /* unreadable maps (no procfs to open): setresuid() will say it later */
  if (procfs_read_all("self/uid_map", &uids, err) < 0 ||
      procfs_read_all("self/gid_map", &gids, err) < 0) {
    error_clear(err);
    return 0;
  }
  if (!id_mapped(uids, u->uid))
    return error_set(err, 0, "process.user.uid: %u is not mapped in the container's user namespace",
                     u->uid);
  if (!id_mapped(gids, u->gid))
    return error_set(err, 0, "process.user.gid: %u is not mapped in the container's user namespace",
                     u->gid);
  for (size_t i = 0; i < u->n_additional_gids; i++)
    if (!id_mapped(gids, u->additional_gids[i]))
      return error_set(err, 0,
                       "process.user.additionalGids: %u is not mapped in the container's user "
                       "namespace",
                       u->additional_gids[i]);
  return 0;
}

/* [path, args...] for the trampoline (allocated before seccomp). */
static char **stub_argv(const char *path, char *const *args)
{
  size_t n = strv_len(args);
  char **av = xmalloc((n + 2) * sizeof *av);

  av[0] = (char *)path;
  for (size_t i = 0; i < n; i++)
    av[i + 1] = args[i];
  av[n + 1] = NULL;
  return av;
}

int process_exec(const struct oci_process *p, const char *resolved_path,
                 const struct process_opts *opts, struct error *err)
{
  static const struct process_opts no_opts = {.keep_fd = -1};
  const struct process_opts *o = opts ? opts : &no_opts;
  const char *cwd = p->cwd && *p->cwd ? p->cwd : "/";
  cleanup_free char *path = resolved_path ? xstrdup(resolved_path) : NULL;
  cleanup_free char **argv = NULL;
  cleanup_close int stub = -1;
  struct lsm_exec lsm = LSM_EXEC_INIT;
  char **env = NULL;
  bool chdir_later = false;

  if (path == NULL && process_resolve_executable(p, &path, err) < 0)
    return -1;
  argv = stub_argv(path, p->args);
  env = env_with_home(p->env, p->user.uid);
  umask(p->user.has_umask ? (mode_t)p->user.umask : DEFAULT_UMASK);
  /* Before seccomp, so the profile need not allow memfd_create. */
  stub = trampoline_prepare(err);
  if (stub < 0 || prepare_fds(o, err) < 0)
    return -1;
  /* As root and before seccomp; written at the very end. */
  if (lsm_exec_open(p, &lsm, err) < 0)
    goto fail;
  /* As root first (the user may lack search permission on a path the
   * runtime can use); on EACCES again as the user, like runc. */
  if (chdir(cwd) < 0) {
    if (errno != EACCES && errno != EPERM) {
      cwd_error(cwd, errno, err);
      goto fail;
    }
    chdir_later = true;
  }
  give_stdio(p->user.uid);
  if (!o->keep_keyring && join_new_keyring(err) < 0)
    goto fail;
  if (switch_user(&p->user, o->in_userns, err) < 0)
    goto fail;
  if (chdir_later && chdir(cwd) < 0) {
    cwd_error(cwd, errno, err);
    goto fail;
  }
  if (verify_cwd(cwd, err) < 0 || restrict_process(p, o, err) < 0)
    goto fail;
  /* The last step that can fail before the exec: the AppArmor profile or
   * SELinux label applies from the trampoline's execveat on. */
  if (lsm_exec_apply(&lsm, err) < 0)
    goto fail;
  /* startContainer-home: what before_exec runs (startContainer hooks without
   * env) sees the program's environment, HOME included, as runc's */
  if (o->before_exec != NULL) {
    static char *none[] = {NULL};
    environ = env ? env : p->env ? p->env : none;
    if (o->before_exec(o->before_exec_ud, err) < 0)
      goto fail;
  }
  trampoline_exec(stub, argv, env ? env : p->env, err);
fail:
  lsm_exec_close(&lsm);
  return -1;
}

/* create-cancelled: an engine's SIGTERM (^C's SIGINT, a SIGHUP) during create
 * is caught, without SA_RESTART, so the long waits (hooks, the init's set-up)
 * see it and the failure path removes what was made (process.h). */
static volatile sig_atomic_t cancel_signal;
static const int cancel_sigs[] = {SIGHUP, SIGINT, SIGTERM};
static struct sigaction cancel_old[ARRAY_SIZE(cancel_sigs)];
static bool cancel_armed[ARRAY_SIZE(cancel_sigs)];
static sigset_t cancel_mask; /* the caller's (run in the foreground blocks them itself) */
static bool cancel_open;     /* run-cancelled: opened in the waits even when blocked */

static void on_cancel(int sig)
{
  cancel_signal = sig;
}

void process_cancel_arm(bool open_blocked)
{
  struct sigaction sa = {.sa_handler = on_cancel}; /* no SA_RESTART: waits see EINTR */

  sigemptyset(&sa.sa_mask);
  cancel_signal = 0;
  cancel_open = open_blocked;
  sigprocmask(SIG_BLOCK, NULL, &cancel_mask);
  for (size_t i = 0; i < ARRAY_SIZE(cancel_sigs); i++)
    cancel_armed[i] = sigaction(cancel_sigs[i], NULL, &cancel_old[i]) == 0 &&
                      cancel_old[i].sa_handler == SIG_DFL &&
                      sigaction(cancel_sigs[i], &sa, NULL) == 0;
}

int process_cancelled(void)
{
  return cancel_signal;
}

int process_cancel_error(struct error *err)
{
  int sig = cancel_signal;

  return error_set(err, 0, "cancelled by %s",
                   sig == SIGHUP   ? "SIGHUP"
                   : sig == SIGINT ? "SIGINT"
                                   : "SIGTERM");
}

int process_cancel_poll(struct pollfd *p, unsigned long n, int ms)
{
  sigset_t set, old;
  struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000};
  bool any = false;
  int r;

  sigemptyset(&set);
  for (size_t i = 0; i < ARRAY_SIZE(cancel_sigs); i++)
    if (cancel_armed[i]) {
      sigaddset(&set, cancel_sigs[i]);
      any = true;
    }
  if (!any)
    return poll(p, n, ms);
  sigprocmask(SIG_BLOCK, &set, &old);
  if (cancel_signal != 0) {
    r = -1;
    errno = EINTR;
  } else {
    /* the signals open only inside the wait: none is missed before it */
    sigset_t during = old;
    for (size_t i = 0; cancel_open && i < ARRAY_SIZE(cancel_sigs); i++)
      if (cancel_armed[i])
        sigdelset(&during, cancel_sigs[i]);
    r = ppoll(p, n, ms < 0 ? NULL : &ts, &during);
  }
  {
    int e = errno;
    sigprocmask(SIG_SETMASK, &old, NULL);
    errno = e;
  }
  return r;
}

void process_cancel_hold(void)
{
  sigset_t set;

  sigemptyset(&set);
  for (size_t i = 0; i < ARRAY_SIZE(cancel_sigs); i++)
    if (cancel_armed[i])
      sigaddset(&set, cancel_sigs[i]);
  sigprocmask(SIG_BLOCK, &set, NULL);
}

int process_cancel_commit(void)
{
  process_cancel_hold();
  if (cancel_signal != 0)
    return -1;
  for (size_t i = 0; i < ARRAY_SIZE(cancel_sigs); i++)
    if (cancel_armed[i])
      sigaction(cancel_sigs[i], &cancel_old[i], NULL);
  sigprocmask(SIG_SETMASK, &cancel_mask, NULL);
  for (size_t i = 0; i < ARRAY_SIZE(cancel_sigs); i++)
    cancel_armed[i] = false;
  return 0;
}

/* As runc and crun: an engine's ignored signals (conmon ignores SIGPIPE) would
 * otherwise reach the program through execve, and a shell cannot trap a signal
 * that was ignored when it started. Handlers need nothing: execve resets them. */
void process_reset_signals(void)
{
  /* the kernel's struct sigaction all zero: SIG_DFL, no flags, no mask (larger
   * than it on every architecture). Not glibc's sigaction(), which refuses its
   * own two real-time signals (32, 33) while a caller may have ignored them. */
  static const unsigned long dfl[8];
  sigset_t none;

  cancel_signal = 0; /* a child of create's: its cancel is not ours */

  for (int sig = 1; sig <= 64; sig++)
    if (sig != SIGKILL && sig != SIGSTOP)
      (void)syscall(SYS_rt_sigaction, sig, dfl, NULL, 8);
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
}
