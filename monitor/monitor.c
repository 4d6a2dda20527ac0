/* monitor.c - starting, running and stopping the per-container monitor
 * (see monitor.h for the contract, monitor_internal.h for the loop). */
#include "monitor/monitor.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/failpoint.h"
#include "common/log.h"
#include "common/subproto.h"
#include "common/util.h"
#include "monitor/egress_helper.h"
#include "monitor/tls_proxy.h"
#include "monitor/monitor_internal.h"
#include "monitor/subagents.h"
#include "os/fsutil.h"
#include "os/memory.h"
#include "os/pid.h"
#include "os/procfs.h"

#define MONITOR_READY_TIMEOUT_MS 10000

/* ---- registry and helpers used by the sources */

int64_t monitor_now_ms(void)
{
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int monitor_add_fd(struct monitor *m, int fd, short events, monitor_fd_fn fn, void *ctx)
{
  struct epoll_event ev = {.events = (uint32_t)events, .data.u32 = (uint32_t)m->n_src};

  if (m->n_src == MONITOR_MAX_SOURCES)
    return -1;
  if (fd >= 0 && epoll_ctl(m->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
    return -1;
  m->src[m->n_src++] = (struct monitor_source){fd, events, fn, NULL, ctx};
  return 0;
}

void monitor_drop_fd(struct monitor *m, int fd)
{
  for (size_t i = 0; i < m->n_src; i++) {
    if (m->src[i].fd != fd)
      continue;
    epoll_ctl(m->epfd, EPOLL_CTL_DEL, fd, NULL);
    close(fd);
    m->src[i].fd = -1;
    m->src[i].fn = NULL;
  }
}

int monitor_rearm_fd(struct monitor *m, int fd, uint32_t events)
{
  for (size_t i = 0; i < m->n_src; i++) {
    struct epoll_event ev = {.events = events, .data.u32 = (uint32_t)i};
    if (m->src[i].fd == fd)
      return epoll_ctl(m->epfd, EPOLL_CTL_MOD, fd, &ev);
  }
  return -1;
}

void monitor_set_flush(struct monitor *m, int fd, monitor_flush_fn flush)
{
  for (size_t i = 0; i < m->n_src; i++)
    if (m->src[i].fd == fd)
      m->src[i].flush = flush;
}

void monitor_record(struct monitor *m, const char *kind, const char *fields)
{
  struct error err = {0}, err2 = {0};
  struct jbuf b = {0};
  cleanup_free char *what = NULL;

  if (m->log == NULL)
    return; /* egress only: no trail */
  if (audit_log_append(m->log, kind, fields, &err) == 0)
    return;
  m->write_errors++;
  if (err.code == ENOSPC || err.code == EDQUOT)
    return; /* the trail has recorded that it is full, and counts */
  /* a record that could not be written (one too large: names the agent
   * chose, escaped) is a loss the trail says it has, when it still can */
  what = xfmt("a `%s` record was not written: %s", kind, err.msg);
  jb_key_str(&b, "source", "trail");
  jb_key_bool(&b, "lost", true);
  jb_key_u64(&b, "lost_events", 1);
  jb_key_str(&b, "error", what);
  audit_log_append(m->log, "audit_error", jb_str(&b), &err2);
  jb_free(&b);
}

void monitor_error(struct monitor *m, const char *source, const struct error *err)
{
  struct jbuf b = {0};

  jb_key_str(&b, "source", source);
  jb_key_str(&b, "error", err->msg);
  monitor_record(m, "audit_error", jb_str(&b));
  jb_free(&b);
}

void monitor_loss(struct monitor *m, const char *source, const char *what, uint64_t events)
{
  struct jbuf b = {0};

  jb_key_str(&b, "source", source);
  jb_key_bool(&b, "lost", true);
  if (events > 0)
    jb_key_u64(&b, "lost_events", events);
  jb_key_str(&b, "error", what);
  monitor_record(m, "audit_error", jb_str(&b));
  jb_free(&b);
}

/* A sub-agent's parent's init's start time (io.agentrt.parent-start, monitor/subagents.c), 0
 * when the config has none. */
static uint64_t parent_start(const struct oci_config *cfg)
{
  const char *s = cfg ? oci_config_annotation(cfg, "io.agentrt.parent-start") : NULL;
  uint64_t v = 0;

  if (s == NULL || parse_u64(s, &v) < 0)
    return 0;
  return v;
}

static uint64_t ns_inode(const char *who, const char *name)
{
  struct error err = {0};
  cleanup_close int fd = procfs_open_ns(who, name, &err);
  struct stat st;

  return fd >= 0 && fstat(fd, &st) == 0 ? (uint64_t)st.st_ino : 0;
}

static bool cgroup_file_has(const char *text, const char *path)
{
  size_t len = strlen(path);

  for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
    const char *c = strchr(p, ':') ? strchr(strchr(p, ':') + 1, ':') : NULL;
    if (c && strncmp(c + 1, path, len) == 0 && (c[1 + len] == '\n' || c[1 + len] == '/'))
      return true;
  }
  return false;
}

bool monitor_owns_procdir(struct monitor *m, int dir)
{
  char text[4096];
  struct stat st;
  ssize_t n;
  int fd;

  /* the ns link, stat'ed through the verified procfs dir of the process */
  if (m->pidns_ino != 0)
    return fstatat(dir, "ns/pid", &st, 0) == 0 && (uint64_t)st.st_ino == m->pidns_ino;
  if (m->cgroup_path == NULL || (fd = openat(dir, "cgroup", O_RDONLY | O_CLOEXEC)) < 0)
    return false;
  n = read(fd, text, sizeof text - 1);
  close(fd);
  if (n <= 0)
    return false;
  text[n] = '\0';
  return cgroup_file_has(text, m->cgroup_path[0] == '/' ? m->cgroup_path : "/");
}

void monitor_check_oom(struct monitor *m)
{
  struct error err = {0};
  uint64_t n = 0;
  struct jbuf b = {0};

  if (m->cg == NULL || cgroup_oom_count(m->cg, &n, &err) < 0 || n <= m->oom_count)
    return;
  jb_key_u64(&b, "kills", n - m->oom_count);
  jb_key_u64(&b, "total", n);
  monitor_record(m, "oom", jb_str(&b));
  jb_free(&b);
  m->oom_count = n;
}

/* ---- the loop */

static bool flush_all(struct monitor *m, bool final)
{
  bool pending = false;

  for (size_t i = 0; i < m->n_src; i++)
    if (m->src[i].flush && m->src[i].flush(m, m->src[i].ctx, final))
      pending = true;
  if (monitor_flood_flush(m, final))
    pending = true;
  /* the last exits of a burst still get their look (monitor_check_pids_soon) */
  if (m->pids_pending && !final && monitor_now_ms() - m->pids_looked_ms >= MONITOR_TICK_MS)
    monitor_check_pids(m);
  if (m->pids_pending)
    pending = true;
  return pending;
}

static void on_signal(struct monitor *m, int fd, short revents, void *ctx)
{
  struct signalfd_siginfo si;

  while (read(fd, &si, sizeof si) == (ssize_t)sizeof si)
    m->stop = true;
}

static void on_tick(struct monitor *m, int fd, short revents, void *ctx)
{
  uint64_t n;

  if (read(fd, &n, sizeof n) < 0) {
    /* EAGAIN: nothing expired */
  }
  m->tick_armed = false;
}

static void arm_tick(struct monitor *m, bool pending)
{
  struct itimerspec its = {.it_value = {.tv_nsec = MONITOR_TICK_MS * 1000000L}};

  if (!pending || m->tick_armed || m->tick_fd < 0)
    return;
  if (timerfd_settime(m->tick_fd, 0, &its, NULL) == 0)
    m->tick_armed = true;
}

/* The resolver's records under a flood of lookups (per verdict): those
 * counted are written by the next flush, which the tick makes sure of. */
static bool dns_admit(void *ud, const char *kind, const char *detail)
{
  struct monitor *m = ud;

  if (monitor_flood_admit_n(m, kind, "", "verdict", detail, 0, 1))
    return true;
  arm_tick(m, true);
  return false;
}

/* A second after ready: what the set-up and the CLI we were forked from left
 * on the stack and in the heap goes back (os/memory.c).  Not at once: then
 * the container's first programs start, whose argv must be read before they
 * exec again. */
static void on_settled(struct monitor *m, int fd, short revents, void *ctx)
{
  monitor_drop_fd(m, fd);
  mem_release_unused();
}

static void arm_settled(struct monitor *m)
{
  struct itimerspec its = {.it_value = {.tv_sec = 1}};
  int fd;

  if (m->epfd < 0 || (fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK)) < 0)
    return;
  if (timerfd_settime(fd, 0, &its, NULL) < 0 || monitor_add_fd(m, fd, POLLIN, on_settled, NULL) < 0)
    close(fd);
}

/* Everything ready in the epoll set, then the flushes.  > 0: stop. */
static int dispatch(void *ud)
{
  struct monitor *m = ud;
  struct epoll_event ev[MONITOR_MAX_SOURCES];
  int n = epoll_wait(m->epfd, ev, MONITOR_MAX_SOURCES, 0);

  for (int i = 0; i < n; i++) {
    struct monitor_source *s = &m->src[ev[i].data.u32];
    if (s->fn != NULL)
      s->fn(m, s->fd, (short)ev[i].events, s->ctx);
  }
  arm_tick(m, flush_all(m, false));
  return m->stop ? 1 : 0;
}

/* Without an egress policy: the epoll set and the init's pidfd. */
static void run_loop(struct monitor *m)
{
  struct pollfd pfd[2] = {{.fd = m->init_pidfd, .events = POLLIN},
                          {.fd = m->epfd, .events = POLLIN}};

  while (!m->stop) {
    int n = poll(pfd, 2, -1);
    if (n < 0 && errno != EINTR)
      break;
    if (n > 0 && pfd[1].revents && dispatch(m) > 0)
      break;
    if (n > 0 && pfd[0].revents)
      break; /* the init is gone */
  }
}

static bool wait_pidfd(int pidfd, int ms)
{
  struct pollfd p = {.fd = pidfd, .events = POLLIN};
  return poll(&p, 1, ms) > 0;
}

/* An init that joined a pid namespace (a pod's, `--pid container:X`) is
 * not that namespace's pid 1: its end kills no other process of the
 * container, which went on (in a stopped container, until the engine's
 * delete) after the trail's exit record, unrecorded (fixed escape,
 * joined-pidns-outlives-init, audit-evidence.bats: a program run and a
 * workspace file written 2 s after the init's exit were in no record and
 * verify said "ok").  They are killed here, as the kernel kills the rest
 * of a namespace whose init ends and as engines kill the rest of such a
 * container, before the last records are read: what they did before is
 * in the trail.  Returns how many; -1 (a loss recorded) when they could
 * not be. */
static long kill_outliving(struct monitor *m)
{
  cleanup_free pid_t *pids = NULL;
  size_t n = 0;
  struct error err = {0};

  if (!m->init_not_ns_init || m->cg == NULL || cgroup_pids(m->cg, &pids, &n, &err) < 0 || n == 0)
    return 0;
  if (cgroup_kill_all(m->cg, SIGKILL, &err) < 0) {
    monitor_loss(m, "process",
                 "processes of the container outlive its init and are not recorded (they could "
                 "not be killed)",
                 0);
    return -1;
  }
  for (int i = 0; i < 100; i++) { /* ~1 s: their exits, so their last events are queued */
    cleanup_free pid_t *left = NULL;
    size_t k = 0;
    struct error e = {0};
    if (cgroup_pids(m->cg, &left, &k, &e) < 0 || k == 0)
      break;
    usleep(10000);
  }
  return (long)n;
}

static void finish(struct monitor *m)
{
  struct jbuf b = {0};
  bool init_gone = wait_pidfd(m->init_pidfd, 0);
  long killed = init_gone ? kill_outliving(m) : 0;

  /* drain what the kernel queued before the init's death */
  m->ending = true;
  for (size_t i = 0; i < m->n_src; i++)
    if (m->src[i].fd >= 0 && m->src[i].fn != on_signal && m->src[i].fn != on_tick)
      m->src[i].fn(m, m->src[i].fd, POLLIN, m->src[i].ctx);
  if (init_gone)
    monitor_proc_await_exit(m, 200);
  /* no exit event (a user's sandbox on a kernel that refuses it process
   * events): the status from the init's pidfd, once its parent reaped it */
  if (init_gone && !m->have_exit && pidfd_exit_status(m->init_pidfd, 200, &m->exit_status) == 0)
    m->have_exit = true;
  monitor_proc_drain_end(m, 2000);
  monitor_execfan_drain_end(m);
  flush_all(m, true);
  monitor_check_oom(m);
  monitor_check_pids(m);
  jb_key_i64(&b, "pid", m->init_pid);
  if (!init_gone) {
    jb_key_str(&b, "state", "stopped while the container runs");
    monitor_record(m, "monitor", jb_str(&b));
  } else {
    if (m->have_exit && WIFSIGNALED(m->exit_status))
      jb_key_i64(&b, "signal", WTERMSIG(m->exit_status));
    else if (m->have_exit)
      jb_key_i64(&b, "code", WEXITSTATUS(m->exit_status));
    if (killed > 0)
      jb_key_i64(&b, "killed_after_init", killed);
    monitor_record(m, "exit", jb_str(&b));
  }
  jb_free(&b);
  monitor_proc_close(m);
  monitor_files_release(m);
}

/* ---- sub-agents (subagents.h) */

static void on_agent_conn(struct monitor *m, int fd, short revents, void *ctx)
{
  for (int i = 0; i < 16; i++) {
    int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
    if (c < 0)
      return; /* EAGAIN */
    if (subagent_serve(&m->sub, c) < 0) {
      struct error e = {0};
      error_errno(&e, "fork a handler");
      monitor_error(m, "subagents", &e);
    }
    close(c);
  }
}

static void on_handler_end(struct monitor *m, int fd, short revents, void *ctx)
{
  subagent_reap_handlers();
}

/* This program's path for the sub-agents' handlers (malloc'd, NULL when it
 * is gone).  The kernel's link is already resolved (no symbolic link, no
 * `..` in it), so realpath's walk of it, a readlink per component before
 * the monitor's OK, is not needed: one stat says it is still there. */
static char *own_exe(void)
{
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf);
  struct stat st;

  if (n <= 0 || n >= (ssize_t)sizeof buf || buf[0] != '/')
    return NULL;
  buf[n] = '\0';
  if (stat(buf, &st) < 0 || !S_ISREG(st.st_mode))
    return NULL; /* "PATH (deleted)": replaced or removed since */
  return xstrdup(buf);
}

static void open_subagents(struct monitor *m, const struct monitor_opts *o, const char *trail)
{
  int reaper;

  m->sub = (struct subagent_parent){
      .exe = own_exe(),
      .root = o->root,
      .data_dir = o->data_dir,
      .store = o->store,
      .id = o->id,
      .rootfs = o->rootfs,
      .profile_name = o->profile_name,
      .trail = trail,
      .cgroup_path = o->cgroup_path,
      .config = o->config,
      .profile = o->profile,
      .init_pid = m->init_pid,
      .init_start = m->init_start,
  };
  if (m->sub.exe == NULL || monitor_add_fd(m, o->agent_fd, POLLIN, on_agent_conn, NULL) < 0) {
    struct error e = {0};
    error_set(&e, 0, "cannot serve %s", SUBAGENT_SOCK);
    monitor_error(m, "subagents", &e);
    return;
  }
  reaper = subagent_reaper_fd();
  if (reaper < 0 || monitor_add_fd(m, reaper, POLLIN, on_handler_end, NULL) < 0) {
    struct error e = {0};
    error_set(&e, 0, "no reaper for the handlers: each is reaped at the next connection");
    monitor_error(m, "subagents", &e);
  }
}

/* ---- the monitor process */

static void reset_process(int chan, int dirfd, int notify_chan, int agent_fd)
{
  sigset_t all;
  int null = open("/dev/null", O_RDWR | O_CLOEXEC);

  sigfillset(&all);
  sigprocmask(SIG_UNBLOCK, &all, NULL);
  for (int s = 1; s < NSIG; s++)
    signal(s, SIG_DFL);
  signal(SIGPIPE, SIG_IGN);
  signal(SIGHUP, SIG_IGN);
  procfs_reset();
  /* a new session: a terminal's ^C for `agentrt run` is not for us */
  setsid();
  /* never keep the runtime's stdio: containerd's shim waits for its EOF */
  for (int fd = 0; fd < 3; fd++)
    if (null >= 0 && null != fd)
      dup2(null, fd);
  {
    int keep[5] = {chan, dirfd}, n = 2;
    if (notify_chan >= 0)
      keep[n++] = notify_chan;
    if (agent_fd >= 0)
      keep[n++] = agent_fd;
    if (monitor_proc_adopted() >= 0) /* monitor_proc_open takes it */
      keep[n++] = monitor_proc_adopted();
    close_fds_except(3, keep, (size_t)n);
  }
  /* the log's fd number must not be reused by one of our files */
  if (log_fd() >= 0 && log_fd() != chan && log_fd() != dirfd && log_fd() != notify_chan &&
      log_fd() != agent_fd && log_fd() != monitor_proc_adopted())
    dup2(0, log_fd());
  if (chdir("/") < 0) {
    /* nothing depends on the cwd */
  }
  umask(077);
  prctl(PR_SET_NAME, "agentrt-monitor", 0, 0, 0);
}

static int open_init(struct monitor *m, uint64_t start_time, struct error *err)
{
  char who[24];
  uint64_t own = ns_inode("self", "pid"), theirs;

  m->init_pidfd = (int)syscall(SYS_pidfd_open, m->init_pid, 0);
  if (m->init_pidfd < 0)
    return error_errno(err, "pidfd of init %d", m->init_pid);
  /* the pidfd pins the pid; the start time proves it is still our init */
  if (!proc_alive(m->init_pid, start_time))
    return error_set(err, ESRCH, "init %d is gone", m->init_pid);
  snprintf(who, sizeof who, "%d", m->init_pid);
  theirs = ns_inode(who, "pid");
  m->pidns_ino = theirs != 0 && theirs != own ? theirs : 0;
  {
    char rel[40], text[4096];
    struct procfs_status st;
    struct error e = {0};
    snprintf(rel, sizeof rel, "%d/status", m->init_pid);
    if (procfs_read(rel, text, sizeof text, &e) > 0) {
      procfs_parse_status(text, &st);
      m->init_not_ns_init = m->pidns_ino != 0 && st.cpid > 1;
    }
  }
  return 0;
}

/* "max N" of pids.events: how often a fork failed at the pids limit. */
static bool read_pids_max(struct monitor *m, uint64_t *ret)
{
  char buf[256];
  ssize_t n;
  char *p;

  if (m->pids_events_fd < 0)
    return false;
  n = pread(m->pids_events_fd, buf, sizeof buf - 1, 0);
  if (n <= 0)
    return false;
  buf[n] = '\0';
  p = strstr(buf, "max ");
  if (p == NULL)
    return false;
  *ret = strtoull(p + 4, NULL, 10);
  return true;
}

void monitor_check_pids(struct monitor *m)
{
  struct jbuf b = {0};
  uint64_t n = 0;

  m->pids_looked_ms = monitor_now_ms();
  m->pids_pending = false;
  if (!read_pids_max(m, &n) || n <= m->pids_max_count)
    return;
  jb_key_u64(&b, "hits", n - m->pids_max_count);
  jb_key_u64(&b, "total", n);
  monitor_record(m, "pids_limit", jb_str(&b));
  jb_free(&b);
  m->pids_max_count = n;
}

void monitor_check_pids_soon(struct monitor *m, bool ours)
{
  if (m->pids_events_fd < 0)
    return;
  if (monitor_now_ms() - m->pids_looked_ms >= MONITOR_TICK_MS)
    monitor_check_pids(m);
  else if (ours)
    m->pids_pending = true;
}

static void on_pids_event(struct monitor *m, int fd, short revents, void *ctx)
{
  char buf[4096];

  while (read(fd, buf, sizeof buf) > 0)
    ;
  monitor_check_pids(m);
}

/* The pids controller notifies pids.events (inotify IN_MODIFY) when a fork
 * hits the limit: a kernel event, not polling. */
static void watch_pids(struct monitor *m)
{
  const char *dir = cgroup_controller_dir(m->cg, "pids");
  cleanup_free char *path = NULL;
  int in;

  m->pids_events_fd = -1;
  if (dir == NULL)
    return;
  path = xfmt("%s/pids.events", dir);
  m->pids_events_fd = open(path, O_RDONLY | O_CLOEXEC);
  if (m->pids_events_fd < 0)
    return;
  read_pids_max(m, &m->pids_max_count);
  in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (in < 0 || inotify_add_watch(in, path, IN_MODIFY) < 0) {
    if (in >= 0)
      close(in);
    return;
  }
  monitor_add_fd(m, in, POLLIN, on_pids_event, NULL);
}

static void open_cgroup(struct monitor *m, const struct monitor_opts *o)
{
  struct cgroup_opts co = {.id = o->id, .systemd = o->systemd_cgroup};
  struct error err = {0};

  if (o->cgroup_path == NULL || *o->cgroup_path == '\0')
    return;
  m->cgroup_path = xstrdup(o->cgroup_path);
  if (cgroup_manager_load(o->cgroup_path, &co, &m->cg, &err) < 0) {
    monitor_error(m, "cgroup", &err);
    return;
  }
  if (cgroup_oom_count(m->cg, &m->oom_count, &err) < 0)
    m->oom_count = 0;
  watch_pids(m);
}

/* A warning for the runtime to print (several are joined). */
static void add_warning(struct monitor *m, char *w)
{
  if (m->warning != NULL) {
    char *both = xfmt("%s; %s", m->warning, w);
    free(m->warning);
    free(w);
    w = both;
  }
  m->warning = w;
}

/* Before the init exists: the sources that do not need it. */
static void open_early(struct monitor *m, const struct monitor_opts *o)
{
  sigset_t set;
  int sfd, r;

  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigprocmask(SIG_BLOCK, &set, NULL);
  sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sfd >= 0)
    monitor_add_fd(m, sfd, POLLIN, on_signal, NULL);
  m->tick_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
  if (m->tick_fd >= 0)
    monitor_add_fd(m, m->tick_fd, POLLIN, on_tick, NULL);
  if (m->log == NULL)
    return;
  /* recorded after "create", the trail's first record */
  /* a failure is an audit_error in the trail (recorded after "create");
   * a subscription the kernel ignored is said at create too */
  r = monitor_proc_open(m, &m->early_err);
  if (r >= 0)
    m->have_proc = true;
  if (r < 0 && monitor_proc_refused()) {
    char why[sizeof m->early_err.msg];

    snprintf(why, sizeof why, "%s", m->early_err.msg);
    error_set(&m->early_err, 0, "%s; %s", why,
              o->exec_records ? "programs recorded from their exec calls (the path and argv "
                                "asked for), the exit status from the init's pidfd"
                              : "no program records, the exit status from the init's pidfd");
  }
  if (r > 0)
    add_warning(m, xfmt("audit: incomplete process records: %s", m->early_err.msg));
  open_cgroup(m, o);
}

static void add_name(struct jbuf *names, const char *name)
{
  if (names->len > 0 && names->p[names->len - 1] != '[')
    jb_puts(names, ",");
  jb_quote(names, name, strlen(name));
}

/* The init exists in its namespaces: the sources that follow it there. */
static void open_ns_sources(struct monitor *m, const struct monitor_opts *o)
{
  struct error err = {0};

  if (m->have_proc)
    monitor_proc_attach(m);
  if (o->nflog_group >= 0) {
    int r = monitor_net_open(m, o->nflog_group, &err);
    if (r < 0)
      monitor_error(m, "net", &err);
    else if (r > 0)
      m->have_net = true;
  }
}

/* Its root is in place (stopped before exec): the workspace's files. */
static void open_root_sources(struct monitor *m, const struct monitor_opts *o, struct jbuf *names)
{
  const struct profile_result *p = o->profile;
  struct error err = {0};

  if (m->have_proc)
    add_name(names, "process");
  /* the files exec opens, named for the programs gone before /proc is read
   * (a user's sandbox cannot mark mounts: it records exec calls) */
  if (m->have_proc && !m->in_userns) {
    if (monitor_execfan_open(m, &err) == 0)
      add_name(names, "exec_opens");
    else
      error_clear(&err);
  }
  if (p->workspace.mode != PROFILE_WS_NONE && p->workspace.path != NULL) {
    m->serves_children = o->agent_fd >= 0;
    if (monitor_files_open(m, p->workspace.path, p->workspace.review_protected, &err) < 0) {
      monitor_error(m, "file", &err);
      add_warning(
          m, xfmt("audit: no file records for workspace `%s`: %s", p->workspace.path, err.msg));
    } else
      add_name(names, "file");
  }
  if (m->have_net)
    add_name(names, "net");
}

static void tell(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tell(int fd, const char *fmt, ...)
{
  char buf[ERROR_MSG_MAX + 32];
  va_list ap;
  int n;

  va_start(ap, fmt);
  n = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n > 0 && write(fd, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1) < 0) {
    /* the parent gave up waiting */
  }
}

/* One message from create (the channel is SOCK_SEQPACKET); false at EOF:
 * create failed, leave quietly. */
static bool recv_msg(int chan, char *buf, size_t size)
{
  ssize_t n;

  while ((n = recv(chan, buf, size - 1, 0)) < 0 && errno == EINTR)
    ;
  if (n <= 0)
    return false;
  buf[n] = '\0';
  return true;
}

/* "GO <pid> <start time>": the init exists in its namespaces. */
static bool recv_go(int chan, pid_t *pid, uint64_t *start)
{
  char buf[64];
  int p = 0;

  if (!recv_msg(chan, buf, sizeof buf) || sscanf(buf, "GO %d %" SCNu64, &p, start) != 2 || p <= 0)
    return false;
  *pid = p;
  return true;
}

/* "ROOT": its root and mounts are in place (it waits for start); with
 * the workspace image's mount when create has one (*ret_fs, else -1). */
static bool recv_root(int chan, int *ret_fs)
{
  char buf[16];
  union {
    char buf[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } u;
  struct iovec iov = {.iov_base = buf, .iov_len = sizeof buf - 1};
  struct msghdr msg = {
      .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf};
  ssize_t n;

  *ret_fs = -1;
  while ((n = recvmsg(chan, &msg, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
    ;
  if (n <= 0)
    return false;
  buf[n] = '\0';
  for (struct cmsghdr *cm = CMSG_FIRSTHDR(&msg); cm != NULL; cm = CMSG_NXTHDR(&msg, cm))
    if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
        cm->cmsg_len == CMSG_LEN(sizeof(int)))
      memcpy(ret_fs, CMSG_DATA(cm), sizeof(int));
  return strcmp(buf, "ROOT") == 0 && (msg.msg_flags & MSG_CTRUNC) == 0;
}

__attribute__((noreturn)) static void fail_main(int chan, const struct error *err)
{
  tell(chan, "ERR %s", err->msg);
  _exit(1);
}

/* The trail's "create" record: the profile's changes, as `explain` lists them. */
static char *create_fields(const struct monitor_opts *o, pid_t init_pid)
{
  const struct profile_result *p = o->profile;
  struct jbuf b = {0};

  jb_key_str(&b, "profile", p->profile);
  jb_key_str(&b, "bundle", o->bundle);
  jb_key_i64(&b, "pid", init_pid);
  jb_key(&b, "workspace");
  jb_puts(&b, "{");
  jb_key_str(&b, "mode", profile_ws_mode_name(p->workspace.mode));
  jb_key_str(&b, "path", p->workspace.path);
  jb_puts(&b, "}");
  jb_key(&b, "changes");
  jb_puts(&b, "[");
  for (size_t i = 0; i < p->n_changes; i++) {
    const struct profile_change *c = &p->changes[i];
    jb_puts(&b, i > 0 ? ",{" : "{");
    jb_key_str(&b, "kind", c->kind == PROFILE_CHANGE_CONFIG ? "config" : "runtime");
    jb_key_str(&b, "field", c->field);
    jb_key_str(&b, "old", c->old_value);
    jb_key_str(&b, "new", c->new_value);
    jb_key_str(&b, "reason", c->reason);
    jb_puts(&b, "}");
  }
  jb_puts(&b, "]");
  return jb_take(&b);
}

/* Wake up at once to read a new process's argv before it is gone: lowest
 * round-robin real-time priority (the kernel's RT throttling still leaves
 * the CPU to others), else a higher nice value.  Needs CAP_SYS_NICE (and RT
 * runtime in our cgroup); best effort.  Only once ready (the init waits
 * for start): during create it would preempt the init setting up its root
 * (measured: +0.6 ms a `run`). */
static void prioritise(void)
{
  if (sched_setscheduler(0, SCHED_RR | SCHED_RESET_ON_FORK,
                         &(struct sched_param){.sched_priority = 1}) < 0)
    setpriority(PRIO_PROCESS, 0, -5);
}

/* The errno of the profile filter's denied calls (all of its ERRNO rules
 * but clone3's and socket(AF_VSOCK)'s share it: profile/seccomp.c; the
 * latter's is found by its arguments, monitor_seccomp.c). */
static int profile_errno(const struct oci_seccomp *s)
{
  for (size_t i = 0; s != NULL && i < s->n_syscalls; i++)
    if (streq(s->syscalls[i].action, "SCMP_ACT_ERRNO") && s->syscalls[i].has_errno_ret &&
        !(s->syscalls[i].names && streq(s->syscalls[i].names[0], "clone3")))
      return (int)s->syscalls[i].errno_ret;
  return EPERM;
}

__attribute__((noreturn)) static void monitor_main(const struct monitor_opts *o, const char *trail,
                                                   int chan, int notify_chan)
{
  struct monitor m = {.init_pidfd = -1,
                      .upper_fs = -1,
                      .pids_events_fd = -1,
                      .tick_fd = -1,
                      .in_userns = o->in_userns};
  struct egress_helper *eg = NULL;
  struct error err = {0};
  struct jbuf f = {0};
  uint64_t start = 0;

  struct rlimit rl;

  reset_process(chan, o->state_dirfd, notify_chan, o->agent_fd);
  /* the caller's soft limit of open files is not the audit's: its file
   * records (fanotify, /proc, the workspace) and the seccomp listener take
   * what the hard limit allows, before the first of them is opened */
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
  m.id = xstrdup(o->id);
  m.root = o->store; /* the workspaces live in the store */
  m.epfd = epoll_create1(EPOLL_CLOEXEC);
  if (m.epfd < 0) {
    error_errno(&err, "epoll");
    fail_main(chan, &err);
  }
  if (trail != NULL && audit_log_open(trail, o->id, NULL, false, &m.log, &err) < 0)
    fail_main(chan, &err);
  /* while create spawns the init: parse the policy, subscribe, open */
  if (o->egress_sandbox == NULL &&
      egress_helper_new(&o->profile->egress, parent_start(o->config), &eg, &err) < 0)
    fail_main(chan, &err);
  /* the secrets' values: read here, on the host, kept in this process only
   * (not dumpable: no core file, no ptrace by a same-uid process) */
  if (o->profile->n_secrets > 0) {
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    if (o->egress_sandbox != NULL) {
      error_set(&err, 0,
                "secrets: a pod's container is policed by its sandbox `%s`, whose monitor "
                "holds no secrets of this container",
                o->egress_sandbox);
      fail_main(chan, &err);
    }
    if (secret_store_load(o->profile, &m.secrets, &err) < 0)
      fail_main(chan, &err);
  }
  open_early(&m, o);
  if (notify_chan >= 0 && m.log != NULL &&
      monitor_seccomp_open(&m, notify_chan, o->profile->extra_seccomp,
                           profile_errno(o->profile->extra_seccomp), o->exec_records, &err) < 0)
    monitor_error(&m, "syscall", &err);
  if (!recv_go(chan, &m.init_pid, &start))
    _exit(0);
  m.init_start = start;
  /* the trail's first record: what the profile changed */
  if (m.log != NULL) {
    cleanup_free char *fields = create_fields(o, m.init_pid);
    monitor_record(&m, "create", fields);
    if (m.early_err.msg[0] != '\0')
      monitor_error(&m, "process", &m.early_err);
  }
  if (open_init(&m, start, &err) < 0) {
    monitor_error(&m, "init", &err);
    fail_main(chan, &err);
  }
  /* while the init sets up its root: the netns and the pid are final */
  if (eg != NULL && (m.secrets.n > 0 || o->profile->egress.n_http > 0))
    egress_helper_set_proxy(eg, TLS_PROXY_PORT, TLS_PROXY_MARK, TLS_PROXY_CHILD_PORT,
                            SUBPROTO_NET_GID);
  if (eg != NULL && egress_helper_attach(eg, m.init_pid, o->state_dirfd, m.log, &err) < 0)
    fail_main(chan, &err);
  if (eg != NULL)
    egress_helper_set_admit(eg, dns_admit, &m);
  /* the secrets' proxy, listening in the netns before the init runs */
  if (eg != NULL && (m.secrets.n > 0 || o->profile->egress.n_http > 0)) {
    struct tls_proxy_opts po = {.id = o->id,
                                .egress = &o->profile->egress,
                                .init_pid = m.init_pid,
                                .secrets = &m.secrets,
                                .ca = o->tls_ca,
                                .upstream_ca = o->profile->egress.tls_upstream_ca,
                                .trail = trail};
    pid_t ppid;
    if (o->tls_ca == NULL) {
      error_set(&err, 0, "secrets: no CA for the TLS proxy");
      fail_main(chan, &err);
    }
    if (tls_plugin_proxy_start(&po, &ppid, &err) < 0)
      fail_main(chan, &err);
  }
  if (m.log != NULL)
    open_ns_sources(&m, o);
  if (!recv_root(chan, &m.upper_fs))
    _exit(0);
  if (m.log != NULL) {
    jb_key_i64(&f, "pid", getpid());
    jb_key(&f, "sources");
    jb_puts(&f, "[");
    open_root_sources(&m, o, &f);
    if (eg != NULL)
      add_name(&f, "dns");
    jb_puts(&f, "]");
    if (o->egress_sandbox != NULL)
      jb_key_str(&f, "egress_by_sandbox", o->egress_sandbox);
    monitor_record(&m, "monitor", jb_str(&f));
    jb_free(&f);
  }
  if (m.upper_fs >= 0) /* the file source holds what it opened in it */
    close(m.upper_fs);
  m.upper_fs = -1;
  /* before "OK": an `exec` right after create finds the socket */
  if (m.seccomp != NULL && monitor_seccomp_listen(&m, o->state_dirfd, &err) < 0) {
    monitor_error(&m, "syscall", &err);
    error_clear(&err);
  }
  /* before "OK": the container's program may start the moment create has
   * it, and a monitor still waiting for a CPU behind a busy machine's other
   * tasks (until here it is an ordinary one) read its first programs only
   * after they were gone (audit.bats "two containers at once" under load:
   * 6 of 25 without this, 4 of 30 without proc_read's batch order, 0 of 50
   * with both).  The init is past its setup: it waits for start. */
  prioritise();
  if (o->agent_fd >= 0)
    open_subagents(&m, o, trail);
  /* build-fp: a monitor that never answers (faults.bats "monitor-stall") */
  while (FAILPOINT_FAILS("monitor-stall"))
    pause();
  if (m.warning != NULL)
    tell(chan, "OK %s", m.warning);
  else
    tell(chan, "OK");
  close(chan);
  close(o->state_dirfd);
  arm_settled(&m);
  if (eg != NULL) {
    if (egress_helper_run(eg, m.init_pidfd, m.epfd, dispatch, &m, &err) < 0)
      monitor_error(&m, "dns", &err);
  } else {
    run_loop(&m);
  }
  if (m.log != NULL)
    finish(&m);
  /* a child cannot outlive its parent */
  if (o->agent_fd >= 0)
    subagent_reap_children(m.sub.exe, o->root, o->data_dir, o->id);
  /* the trail is complete; closing the fanotify group waits for an SRCU
   * grace period (5-18 ms here), the netfilter socket for the kernel's RCU
   * clean-up of the transaction (~13 ms), and `delete` waits for our exit;
   * the resolver's port 53 is closed here, not by that child */
  if (eg != NULL)
    egress_helper_release_ports(eg);
  proc_leave_fd_teardown_to_child();
  _exit(0);
}

/* ---- the parent side */

static bool wants_monitor(const struct monitor_opts *o)
{
  const struct profile_result *p = o->profile;

  return p != NULL && (p->audit.enabled || o->agent_fd >= 0 ||
                       (p->egress.def != PROFILE_EGRESS_OFF && o->egress_sandbox == NULL));
}

bool monitor_wants_listener(const struct profile_result *p)
{
  return p != NULL && p->audit.enabled && p->extra_seccomp != NULL;
}

int monitor_launch(const struct monitor_opts *o, struct monitor_handle *h, struct error *err)
{
  const struct profile_result *p = o->profile;
  struct audit_limits lim;
  struct audit_log *log = NULL;
  uint64_t start = 0;
  char buf[64];
  int sv[2], nv[2] = {-1, -1};
  pid_t pid;

  *h = (struct monitor_handle){.fd = -1, .notify_fd = -1, .upper_fs = -1};
  if (!wants_monitor(o))
    return 0;
  if (p->audit.enabled) {
    h->trail = audit_trail_dir(o->store, p->audit.dir, o->id);
    lim = (struct audit_limits){.max_size = p->audit.max_size, .max_age = p->audit.max_age};
    /* creates the trail (or opens a kept one: its chain goes on) */
    if (audit_log_open(h->trail, o->id, &lim, true, &log, err) < 0)
      return error_prefix(err, "audit");
    audit_log_close(log);
    /* CLI verbs find the trail through this file while the container exists */
    if (write_file_atomic_at(o->state_dirfd, "audit", h->trail, strlen(h->trail), err) < 0)
      return -1;
  }
  /* the init's seccomp listener comes on its own channel (monitor_seccomp.c) */
  if (monitor_wants_listener(p) && socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, nv) < 0)
    return error_errno(err, "monitor: socketpair");
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
    if (nv[0] >= 0) {
      close(nv[0]);
      close(nv[1]);
    }
    return error_errno(err, "monitor: socketpair");
  }
  /* one fork: until create exits the monitor is our child (run reaps it
   * with the init); then the engine's subreaper or init inherits it */
  pid = fork();
  if (pid < 0) {
    close(sv[0]);
    close(sv[1]);
    if (nv[0] >= 0) {
      close(nv[0]);
      close(nv[1]);
    }
    return error_errno(err, "monitor: fork");
  }
  if (pid == 0) {
    /* it writes most of the heap and data it shares with us, a fault a
     * page otherwise (~20 us each on a paravirtualised guest) */
    mem_take_shared_pages();
    close(sv[0]);
    if (nv[1] >= 0)
      close(nv[1]);
    monitor_main(o, h->trail, sv[1], nv[0]);
  }
  close(sv[1]);
  if (nv[0] >= 0)
    close(nv[0]);
  h->notify_fd = nv[1];
  h->fd = sv[0];
  h->pid = pid;
  /* delete (and a failed create) find it from here on */
  proc_start_time(pid, &start, NULL);
  snprintf(buf, sizeof buf, "%d %" PRIu64, pid, start);
  return write_file_atomic_at(o->state_dirfd, "monitor.pid", buf, strlen(buf), err);
}

static int send_msg(struct monitor_handle *h, const char *msg, struct error *err)
{
  size_t n = strlen(msg);

  if (send(h->fd, msg, n, MSG_NOSIGNAL) == (ssize_t)n)
    return 0;
  /* it gave up before: its reason is on the channel */
  if (monitor_wait_ready(h, err) < 0)
    return -1;
  return error_set(err, EPIPE, "monitor %d: gone before the init", h->pid);
}

int monitor_go(void *ud, pid_t init_pid, uint64_t init_start_time, struct error *err)
{
  struct monitor_handle *h = ud;
  char buf[64];

  if (h->pid <= 0 || h->go_sent)
    return 0;
  snprintf(buf, sizeof buf, "GO %d %" PRIu64, init_pid, init_start_time);
  h->go_sent = true;
  return send_msg(h, buf, err);
}

/* "ROOT", with the image's mount when create has one */
static bool send_root(struct monitor_handle *h, int flags)
{
  union {
    char buf[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } u;
  struct iovec iov = {.iov_base = "ROOT", .iov_len = 4};
  struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};

  if (h->upper_fs >= 0) {
    memset(&u, 0, sizeof u);
    msg.msg_control = u.buf;
    msg.msg_controllen = sizeof u.buf;
    struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cm), &h->upper_fs, sizeof(int));
  }
  if (sendmsg(h->fd, &msg, MSG_NOSIGNAL | flags) != 4)
    return false;
  if (h->upper_fs >= 0)
    close(h->upper_fs);
  h->upper_fs = -1;
  return true;
}

void monitor_root(void *ud)
{
  struct monitor_handle *h = ud;

  if (h->pid > 0 && h->go_sent && !h->root_sent && send_root(h, MSG_DONTWAIT))
    h->root_sent = true;
}

int monitor_attach(struct monitor_handle *h, pid_t init_pid, uint64_t init_start_time,
                   struct error *err)
{
  if (h->pid <= 0)
    return 0;
  if (monitor_go(h, init_pid, init_start_time, err) < 0)
    return -1;
  if (h->root_sent)
    return 0;
  h->root_sent = true;
  if (send_root(h, 0))
    return 0;
  /* it gave up before: its reason is on the channel */
  if (monitor_wait_ready(h, err) < 0)
    return -1;
  return error_set(err, EPIPE, "monitor %d: gone before the init", h->pid);
}

/* The monitor left without a word: say how (it is still our child; the
 * status is peeked at, not reaped, so the caller's cleanup finds it). */
static int monitor_died(struct monitor_handle *h, struct error *err)
{
  siginfo_t si;

  for (int i = 0; i < 100; i++) {
    memset(&si, 0, sizeof si);
    if (waitid(P_PID, (id_t)h->pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0)
      break;
    if (si.si_pid == h->pid) {
      if (si.si_code == CLD_EXITED)
        return error_set(err, 0, "monitor: exited during setup (status %d)", si.si_status);
      return error_set(err, 0, "monitor: killed during setup by signal %d (%s)", si.si_status,
                       strsignal(si.si_status));
    }
    usleep(10000);
  }
  return error_set(err, 0, "monitor: exited during setup");
}

/* Where a monitor that does not answer is: its state, the kernel function it
 * sleeps in and the top of its kernel stack (root only), for the error. */
static void monitor_where(pid_t pid, char *buf, size_t size)
{
  char path[64], stat[512], wchan[64] = "", raw[512], stack[256] = "", *p, *line, *save = NULL;
  size_t len = 0;
  struct error e = {0};
  ssize_t n;
  char state = '?';

  snprintf(path, sizeof path, "%d/stat", (int)pid);
  n = procfs_read(path, stat, sizeof stat - 1, &e);
  if (n > 0) {
    stat[n] = '\0';
    p = strrchr(stat, ')');
    if (p != NULL && p[1] == ' ' && p[2] != '\0')
      state = p[2];
  }
  snprintf(path, sizeof path, "%d/wchan", (int)pid);
  n = procfs_read(path, wchan, sizeof wchan - 1, &e);
  wchan[n > 0 ? n : 0] = '\0';
  snprintf(path, sizeof path, "%d/stack", (int)pid);
  n = procfs_read(path, raw, sizeof raw - 1, &e);
  raw[n > 0 ? n : 0] = '\0';
  /* "[<0>] func+0x../0x..\n" lines: "func+0x../0x.. < caller..." */
  for (line = strtok_r(raw, "\n", &save); line != NULL && len < sizeof stack - 1;
       line = strtok_r(NULL, "\n", &save)) {
    if (strncmp(line, "[<", 2) == 0 && (p = strstr(line, "] ")) != NULL)
      line = p + 2;
    n = snprintf(stack + len, sizeof stack - len, "%s%s", len ? " < " : "", line);
    len += n > 0 ? (size_t)n : 0;
  }
  if (snprintf(buf, size, "pid %d, state %c%s%s%s%s", (int)pid, state, wchan[0] ? ", in " : "",
               wchan, stack[0] ? ", kernel stack: " : "", stack) >= (int)size)
    buf[size - 1] = '\0'; /* cut (as snprintf did): a deep kernel stack */
}

int monitor_wait_ready(struct monitor_handle *h, struct error *err)
{
  char buf[ERROR_MSG_MAX + 32];
  struct pollfd p = {.fd = h->fd, .events = POLLIN};
  ssize_t n;

  if (h->pid <= 0)
    return 0;
  if (poll(&p, 1, MONITOR_READY_TIMEOUT_MS) == 0) {
    monitor_where(h->pid, buf, 200);
    return error_set(err, ETIMEDOUT, "monitor: not ready after %d s (%s)",
                     MONITOR_READY_TIMEOUT_MS / 1000, buf);
  }
  /* a monitor that fails leaves "ROOT" unread: its close then reports
   * ECONNRESET once, ahead of its "ERR" message, which the next recv reads */
  for (int reset = 0;;) {
    n = recv(h->fd, buf, sizeof buf - 1, 0);
    if (n >= 0 || !(errno == EINTR || (errno == ECONNRESET && reset++ == 0)))
      break;
  }
  buf[n > 0 ? n : 0] = '\0';
  if (strcmp(buf, "OK") == 0)
    return 0;
  if (strncmp(buf, "OK ", 3) == 0) {
    free(h->warning);
    h->warning = xstrdup(buf + 3);
    return 0;
  }
  if (strncmp(buf, "ERR ", 4) == 0)
    return error_set(err, 0, "%s", buf + 4);
  return monitor_died(h, err);
}

void monitor_handle_close(struct monitor_handle *h)
{
  if (h->fd >= 0)
    close(h->fd);
  h->fd = -1;
  free(h->trail);
  h->trail = NULL;
  free(h->warning);
  h->warning = NULL;
  if (h->notify_fd >= 0)
    close(h->notify_fd);
  h->notify_fd = -1;
  if (h->upper_fs >= 0)
    close(h->upper_fs);
  h->upper_fs = -1;
}

void monitor_abandon(struct monitor_handle *h)
{
  cleanup_close int pidfd = -1;

  if (h->pid <= 0) {
    monitor_handle_close(h);
    return;
  }
  pidfd = (int)syscall(SYS_pidfd_open, h->pid, 0);
  /* EOF on its channel before GO, or its init's death after: it leaves */
  monitor_handle_close(h);
  if (pidfd >= 0 && !wait_pidfd(pidfd, 3000))
    syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
  while (waitpid(h->pid, NULL, 0) < 0 && errno == EINTR)
    ;
  h->pid = 0;
}

/* <state dir>/monitor.pid ("PID START"): 1 read, 0 no such file, -1 err set
 * (unreadable or malformed). */
static int read_monitor_pid(int state_dirfd, int *pid, uint64_t *start, struct error *err)
{
  cleanup_free char *text = NULL;
  size_t len = 0;

  if (read_own_file_at(state_dirfd, "monitor.pid", 128, &text, &len, err) < 0) {
    if (err->code != ENOENT)
      return -1;
    error_clear(err);
    return 0;
  }
  if (sscanf(text, "%d %" SCNu64, pid, start) != 2 || *pid <= 0)
    return error_set(err, 0, "monitor.pid: malformed");
  return 1;
}

bool monitor_gone_at(int state_dirfd)
{
  struct error err = {0};
  int pid = 0;
  uint64_t start = 0;

  return read_monitor_pid(state_dirfd, &pid, &start, &err) > 0 && !proc_alive(pid, start);
}

int monitor_stop(int state_dirfd, int timeout_ms, struct error *err)
{
  cleanup_close int pidfd = -1;
  int pid = 0, r;
  uint64_t start = 0;

  if ((r = read_monitor_pid(state_dirfd, &pid, &start, err)) <= 0)
    return r;
  pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
  if (pidfd < 0 || !proc_alive(pid, start))
    return 0; /* gone already (or the pid is someone else's now) */
  if (wait_pidfd(pidfd, timeout_ms)) {
    /* `run` forked it: then it is ours to reap (anyone else's: ECHILD) */
    waitpid(pid, NULL, WNOHANG);
    return 0;
  }
  syscall(SYS_pidfd_send_signal, pidfd, SIGTERM, NULL, 0);
  if (wait_pidfd(pidfd, 1000))
    return 0;
  syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
  if (wait_pidfd(pidfd, 1000))
    return 0;
  return error_set(err, ETIMEDOUT, "audit monitor %d did not exit", pid);
}
