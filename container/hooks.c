/* hooks.c - running OCI hooks (prestart, createRuntime, ..., poststop).
 *
 * Each hook is fork+exec'd with argv = hook.args verbatim ([path] when
 * absent), in the bundle directory, with env = hook.env when the hook has
 * one and the runtime's own environment (the engine's: PATH for `nft`,
 * `nsenter`) when it has none, as runc and crun do.  Nothing of the image's
 * environment (process.env) ever reaches a hook that runs with host
 * privileges; a startContainer hook runs in the container as its program
 * and, without env, gets the program's environment (process.env and HOME), as
 * runc's (init.c: init-environ; process.c: startContainer-home).  The state JSON goes to
 * stdin through a pipe (a hook that does not read it is fine: EPIPE is ignored), stdout and stderr
 * are the runtime's stderr.  No threads: the wait is a poll() on a pidfd and on the pipe with the
 * hook's deadline; a hook past its timeout is SIGKILLed with every process it started that is still
 * below it or that we adopted from it as its subreaper (hook_kill_tree).
 * hook-dies-with-runtime: a hook of the runtime's own (prestart, createRuntime, poststart,
 * poststop) is the child of a keeper we fork, the subreaper of what the hook starts; a runtime
 * killed by SIGKILL while it waits (an engine's last word) closes the keeper's pipe, and the
 * keeper kills the hook with all it started, as a timeout does (runc 1.1.5 leaves them running).
 * The keeper hands the hook's wait status back on a pipe and exits.
 * hook-child-outlives-container: a hook the init runs (createContainer, startContainer) in a
 * container without a pid namespace of its own (the init is not its pid 1) runs under a keeper
 * too, which kills what the hook left once it ends: nothing else would (there is no pid 1 whose
 * exit takes them), and they ran on in the container's cgroup after it stopped.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"
#include "container/process.h"
#include "os/procfs.h"

#define FALLBACK_POLL_MS 10
#define HOOK_TREE_MAX 4096

struct hook_run {
  const struct oci_hook *hook;
  const char *phase; /* "prestart hook #0": the phase and the hook's index, as runc names it */
  const char *dir;   /* the hook's cwd (the bundle), NULL = ours */
  pid_t pid;
  int pidfd;        /* -1 without pidfd_open(): then poll in slices */
  int wfd;          /* write end of the hook's stdin, -1 once done */
  int alivefd;      /* the keeper's runtime-is-alive pipe (we hold the write end) */
  int statfd;       /* the hook's wait status, from the keeper */
  bool keeper;      /* run under a keeper (the runtime's own hooks; not the init's) */
  bool reap;        /* the keeper kills what the hook left once it ends */
  const char *data; /* state JSON */
  size_t len, off;
  long long deadline; /* ms on CLOCK_MONOTONIC, -1 = none */
};

static long long now_ms(void)
{
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* In the child: default signal state, stdin from the pipe, stdout to our
 * stderr, no other fd; reports an exec failure's errno on errfd. */
static __attribute__((noreturn)) void hook_child(const struct oci_hook *h, const char *dir, int rfd,
                                                 int errfd)
{
  char *const fallback[] = {h->path, NULL};
  int e;

  process_reset_signals();
  if (dup2(rfd, 0) < 0 || dup2(2, 1) < 0)
    _exit(127);
  syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC);
  /* the bundle may be gone by poststop: then the hook runs where we are */
  if (dir != NULL && chdir(dir) < 0)
    (void)!chdir("/");
  execve(h->path, h->args ? h->args : fallback, h->env ? h->env : environ);
  e = errno;
  (void)!write(errfd, &e, sizeof e);
  _exit(127);
}

/* Append the children of every thread of the process whose /proc directory
 * is `who` ("self" or a pid) (/proc/WHO/task/TID/children) not yet in pids. */
static void add_children_of(const char *who, pid_t *pids, size_t *n)
{
  cleanup_free char *rel = xfmt("%s/task", who);
  int fd = procfs_open(rel, O_RDONLY | O_DIRECTORY, &(struct error){0});
  DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
  struct dirent *e;

  if (d == NULL) {
    if (fd >= 0)
      close(fd);
    return;
  }
  while ((e = readdir(d)) != NULL && *n < HOOK_TREE_MAX) {
    cleanup_free char *path = xfmt("%s/task/%s/children", who, e->d_name);
    char buf[4096], *p = buf, *end;

    if (e->d_name[0] == '.' || procfs_read(path, buf, sizeof buf, &(struct error){0}) < 0)
      continue;
    for (long v; *n < HOOK_TREE_MAX && (v = strtol(p, &end, 10), end != p); p = end) {
      bool seen = false;
      for (size_t i = 0; i < *n && !seen; i++)
        seen = pids[i] == (pid_t)v;
      if (!seen && v > 0)
        pids[(*n)++] = (pid_t)v;
    }
  }
  closedir(d);
}

static void add_children(pid_t pid, pid_t *pids, size_t *n)
{
  char who[16];

  snprintf(who, sizeof who, "%d", (int)pid);
  add_children_of(who, pids, n);
}

/* hook-timeout-children: the hook past its deadline and what it started (a
 * stuck curl under a script) would hold the runtime's stderr, which engines
 * read to its end.  Each process is stopped before its children are read (a
 * process with SIGSTOP pending completes no fork), then all are killed.
 * hook-timeout-daemon: what left the hook's tree (setsid and a double fork)
 * was adopted by us, its subreaper: our children that were not ours before
 * the hook (`before`, n_before) go too (their zombies go with us). */
static void hook_kill_tree(pid_t root, const pid_t *before, size_t n_before)
{
  pid_t *pids = xmalloc(HOOK_TREE_MAX * sizeof *pids);
  size_t n = 1;

  pids[0] = root;
  for (size_t walked = 0;;) {
    size_t from;
    for (; walked < n; walked++) {
      kill(pids[walked], SIGSTOP);
      add_children(pids[walked], pids, &n);
    }
    /* all of the tree seen so far is stopped: what left it is ours now
     * (without a timeout we are no subreaper: nothing was adopted) */
    if (before == NULL)
      break;
    from = n;
    add_children_of("self", pids, &n);
    for (size_t j = from; j < n;) {
      bool old = false;
      for (size_t k = 0; k < n_before && !old; k++)
        old = pids[j] == before[k];
      if (old)
        pids[j] = pids[--n];
      else
        j++;
    }
    if (n == from)
      break;
  }
  for (size_t i = 0; i < n; i++)
    kill(pids[i], SIGKILL);
  free(pids);
}

/* What the hook left below the keeper (its subreaper): every process, killed, then reaped (a
 * process killed makes its children ours before it can be reaped: none is missed).  Bounded
 * (~2 s): one we may not signal (a set-uid program's) does not hold the init forever. */
static void keeper_kill_leftovers(void)
{
  static const pid_t none[1];
  pid_t *kids = xmalloc(HOOK_TREE_MAX * sizeof *kids);
  struct timespec tick = {0, 10 * 1000 * 1000};
  size_t n = 0;

  add_children_of("self", kids, &n);
  if (n > 0)
    hook_kill_tree(kids[0], none, 0); /* with every other child of ours (none is old) */
  free(kids);
  for (int idle = 0; idle < 200;) {
    pid_t w = waitpid(-1, NULL, __WALL | WNOHANG);
    if (w < 0 && errno != EINTR)
      break; /* ECHILD: all reaped */
    if (w <= 0 && (idle++, nanosleep(&tick, NULL)) < 0)
      continue;
  }
}

/* hook-dies-with-runtime: the keeper, a child of ours and the subreaper of what the hook starts.
 * It forks the hook and waits for it; the hook's wait status goes to statfd, then it exits (what
 * the hook left runs on, as before, unless reap: then it is killed first).  When the runtime dies
 * first (alivefd, the read end of a pipe only the runtime holds open, hangs up), the hook and every
 * process below the keeper are killed (hook_kill_tree).  Killed itself (a timeout, a cancel), the
 * keeper is in the tree the runtime kills. */
static __attribute__((noreturn)) void hook_keeper(const struct oci_hook *h, const char *dir,
                                                  bool reap, int rfd, int errfd, int alivefd,
                                                  int statfd)
{
  static const pid_t none[1];
  pid_t pid;
  int status = 0, pidfd;

  prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  signal(SIGCHLD, SIG_DFL); /* the hook is waited for here, whatever our caller does */
  pid = fork();
  if (pid < 0)
    _exit(127);
  if (pid == 0)
    hook_child(h, dir, rfd, errfd);
  close(rfd);
  close(errfd);
  pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
  for (;;) {
    struct pollfd p[2] = {{.fd = alivefd, .events = POLLIN}, {.fd = pidfd, .events = POLLIN}};
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) {
      if (reap)
        keeper_kill_leftovers();
      (void)!write(statfd, &status, sizeof status);
      _exit(0);
    }
    if (w < 0 && errno != EINTR)
      _exit(127);
    if (poll(p, 2, pidfd < 0 ? FALLBACK_POLL_MS : -1) > 0 &&
        (p[0].revents & (POLLHUP | POLLERR | POLLIN))) {
      hook_kill_tree(pid, none, 0); /* the runtime is gone */
      _exit(127);
    }
  }
}

/* Start the hook (under its keeper); on success hr->pid (the keeper's), hr->wfd, hr->statfd and
 * hr->alivefd are set. */
static int hook_spawn(struct hook_run *hr, struct error *err)
{
  cleanup_close int rfd = -1, wfd = -1, erd = -1, ewr = -1, ard = -1, awr = -1, srd = -1, swr = -1;
  int fds[2], e = 0;
  ssize_t n;

  if (pipe2(fds, O_CLOEXEC) < 0)
    return error_errno(err, "%s: `%s`: pipe", hr->phase, hr->hook->path);
  rfd = fds[0];
  wfd = fds[1];
  if (pipe2(fds, O_CLOEXEC) < 0)
    return error_errno(err, "%s: `%s`: pipe", hr->phase, hr->hook->path);
  erd = fds[0];
  ewr = fds[1];
  if (pipe2(fds, O_CLOEXEC) < 0)
    return error_errno(err, "%s: `%s`: pipe", hr->phase, hr->hook->path);
  ard = fds[0];
  awr = fds[1];
  if (pipe2(fds, O_CLOEXEC) < 0)
    return error_errno(err, "%s: `%s`: pipe", hr->phase, hr->hook->path);
  srd = fds[0];
  swr = fds[1];
  hr->pid = fork();
  if (hr->pid < 0)
    return error_errno(err, "%s: `%s`: fork", hr->phase, hr->hook->path);
  if (hr->pid == 0 && !hr->keeper)
    hook_child(hr->hook, hr->dir, rfd, ewr);
  if (hr->pid == 0) {
    close(wfd);
    close(erd);
    close(awr);
    close(srd);
    hook_keeper(hr->hook, hr->dir, hr->reap, rfd, ewr, ard, swr);
  }
  close(take_fd(&ewr));
  close(take_fd(&ard));
  close(take_fd(&swr));
  hr->alivefd = take_fd(&awr);
  hr->statfd = take_fd(&srd);
  do
    n = read(erd, &e, sizeof e);
  while (n < 0 && errno == EINTR);
  if (n == (ssize_t)sizeof e) {
    waitpid(hr->pid, NULL, 0);
    close(hr->alivefd);
    close(hr->statfd);
    hr->alivefd = hr->statfd = -1;
    return error_set(err, e, "error running %s: `%s`: exec", hr->phase, hr->hook->path);
  }
  fcntl(wfd, F_SETFL, O_NONBLOCK);
  hr->wfd = take_fd(&wfd);
  return 0;
}

/* Write what the pipe takes; done (or the hook closed stdin) -> close. */
static void feed_stdin(struct hook_run *hr)
{
  while (hr->off < hr->len) {
    ssize_t w = write(hr->wfd, hr->data + hr->off, hr->len - hr->off);
    if (w < 0 && errno == EINTR)
      continue;
    if (w < 0 && errno == EAGAIN)
      return;
    if (w <= 0)
      break; /* EPIPE: the hook does not want its stdin */
    hr->off += (size_t)w;
  }
  close(hr->wfd);
  hr->wfd = -1;
}

/* The keeper exited (its status in *status): the hook's status is what it sent (1), or the
 * keeper's own when it sent none. */
static int keeper_status(const struct hook_run *hr, int *status)
{
  int st;
  ssize_t n;

  do
    n = read(hr->statfd, &st, sizeof st);
  while (n < 0 && errno == EINTR);
  if (n == (ssize_t)sizeof st)
    *status = st;
  return 1;
}

/* Wait for exit, feeding stdin meanwhile; 1 = exited (status set),
 * 0 = deadline passed, -1 = waitpid failed (errno; e.g. SIGCHLD ignored). */
static int hook_wait(struct hook_run *hr, int *status)
{
  for (;;) {
    struct pollfd p[2] = {{.fd = hr->pidfd, .events = POLLIN}, {.fd = hr->wfd, .events = POLLOUT}};
    long long left = hr->deadline < 0 ? -1 : hr->deadline - now_ms();
    int ms = left < 0 ? -1 : left > 60000 ? 60000 : (int)left;
    pid_t w = waitpid(hr->pid, status, WNOHANG);

    if (w == hr->pid)
      return keeper_status(hr, status);
    if (w < 0 && errno != EINTR)
      return -1;
    if ((hr->deadline >= 0 && left <= 0) || process_cancelled())
      return 0;
    if (hr->pidfd < 0 && (ms < 0 || ms > FALLBACK_POLL_MS))
      ms = FALLBACK_POLL_MS;
    if (process_cancel_poll(p, 2, ms) < 0)
      continue; /* EINTR (or a cancel); anything else shows up in waitpid() */
    if (hr->wfd >= 0 && (p[1].revents & (POLLOUT | POLLERR | POLLHUP)))
      feed_stdin(hr);
  }
}

static int hook_result(const struct hook_run *hr, int status, struct error *err)
{
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
    return 0;
  if (WIFEXITED(status))
    return error_set(err, 0, "error running %s: `%s`: exit status %d", hr->phase, hr->hook->path,
                     WEXITSTATUS(status));
  {
    /* lower case, as Go's runtimes print it ("bad system call") */
    char what[64];
    snprintf(what, sizeof what, "%s", strsignal(WTERMSIG(status)));
    what[0] = (char)tolower((unsigned char)what[0]);
    return error_set(err, 0, "error running %s: `%s`: killed by signal %d (%s)", hr->phase,
                     hr->hook->path, WTERMSIG(status), what);
  }
}

static int run_one(const struct oci_hook *h, const char *phase, bool keeper, bool reap,
                   const char *dir, const char *state, struct error *err)
{
  struct hook_run hr = {.hook = h,
                        .keeper = keeper,
                        .reap = reap,
                        .phase = phase,
                        .dir = dir,
                        .pidfd = -1,
                        .wfd = -1,
                        .alivefd = -1,
                        .statfd = -1,
                        .data = state,
                        .len = state ? strlen(state) : 0};
  pid_t *before = NULL;
  size_t n_before = 0;
  int status = 0, was_reaper = 0, ret = -1, r;

  if (h->path == NULL || h->path[0] != '/')
    return error_set(err, 0, "%s: `%s`: path must be absolute", phase, h->path ? h->path : "");
  hr.deadline = h->has_timeout && h->timeout > 0 ? now_ms() + (long long)h->timeout * 1000 : -1;
  /* hook-timeout-daemon: with a timeout, what the hook sets loose (setsid,
   * a double fork) is adopted by us, not by the host's init, until it ends */
  if (hr.deadline >= 0) {
    before = xmalloc(HOOK_TREE_MAX * sizeof *before);
    add_children_of("self", before, &n_before);
    if (prctl(PR_GET_CHILD_SUBREAPER, &was_reaper, 0, 0, 0) == 0 && !was_reaper)
      prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  }
  if (hook_spawn(&hr, err) < 0)
    goto out;
  hr.pidfd = (int)syscall(SYS_pidfd_open, hr.pid, 0);
  r = hook_wait(&hr, &status);
  if (r < 0)
    error_errno(err, "%s: `%s`: wait", phase, h->path);
  if (hr.wfd >= 0)
    close(hr.wfd);
  if (r == 0) {
    hook_kill_tree(hr.pid, before, n_before);
    waitpid(hr.pid, NULL, 0);
  }
  if (hr.pidfd >= 0)
    close(hr.pidfd);
  if (hr.alivefd >= 0)
    close(hr.alivefd);
  if (hr.statfd >= 0)
    close(hr.statfd);
  if (r == 0 && process_cancelled()) {
    process_cancel_error(err);
    error_prefix(err, "%s: `%s`", phase, h->path);
  } else if (r == 0)
    error_set(err, 0, "error running %s: `%s`: timed out after %d s", phase, h->path, h->timeout);
  else if (r > 0)
    ret = hook_result(&hr, status, err);
out:
  if (before != NULL && !was_reaper)
    prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
  free(before);
  return ret;
}

int hooks_run(const struct oci_hook *hooks, size_t n, const char *phase, const char *dir,
              const char *state_json, struct error *err)
{
  struct sigaction ign = {.sa_handler = SIG_IGN}, old;
  int r = 0;

  if (n == 0)
    return 0;
  /* a hook closing its stdin early must not kill the runtime */
  sigemptyset(&ign.sa_mask);
  sigaction(SIGPIPE, &ign, &old);
  /* hook-dies-with-runtime: the init's hooks (createContainer, startContainer) run in the
   * container's namespaces, under its limits and seccomp filter: no keeper there, unless the
   * container has no pid namespace of its own (hook-child-outlives-container) */
  bool in_init = strcmp(phase, "createContainer") == 0 || strcmp(phase, "startContainer") == 0;
  bool reap = in_init && getpid() != 1;
  for (size_t i = 0; i < n && r == 0; i++) {
    cleanup_free char *label = xfmt("%s hook #%zu", phase, i);
    r = run_one(&hooks[i], label, !in_init || reap, reap, dir, state_json, err);
  }
  sigaction(SIGPIPE, &old, NULL);
  return r;
}
