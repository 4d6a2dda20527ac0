/* monitor_seccomp.c - refused system calls, from seccomp listeners.
 *
 * The profile's deny-list filter (profile/seccomp.c) is loaded with its
 * denied calls as SCMP_ACT_NOTIFY and a new listener (container/process.c)
 * by the container's init and by every `exec`'d process, each in its own
 * filter chain (an exec'd process is not the init's child: it does not
 * inherit the init's filters, so its listener is a new one and the kernel's
 * one-listener-per-chain rule holds).  The listener comes here with
 * SCM_RIGHTS and is closed in the process before its program runs:
 *   init  over a socketpair made by monitor_launch;
 *   exec  over a connection to <state dir>/monitor.sock (SOCK_SEQPACKET,
 *         mode 0600 under the 0700 state directory, the peer's uid checked),
 *         which `exec` opens on the host before it forks; the process waits
 *         for our "OK" before it goes on, so it never runs with a listener
 *         nobody polls, and an exec whose listener we cannot take fails.
 * Each connection carries one message ("L" with the fd, or "OFF why") and is
 * closed after it.  Allowed calls never reach us: the filter's default is
 * ALLOW.  Each notification is answered at once with the profile's errno, or
 * the errno of the argument rule it matches (socket(AF_VSOCK): EAFNOSUPPORT)
 * (never "continue": nothing the container sends can make a denied call
 * succeed), then recorded as {"syscall":"unshare","nr":272,"arch":"x86_64",
 * "verdict":"refused","errno":1,"pid":P,"program":"/usr/bin/x","count":1}
 * (name and number as on the caller's ABI: i386's unshare is 310), coalesced
 * per program and call under a flood (monitor_flood.c).  A listener is
 * closed when the kernel hangs it up (no process uses its filter any more),
 * so a finished exec leaves no fd here.  If the monitor dies, the kernel
 * fails every denied call with ENOSYS: still refused.
 *
 * The listeners, channels and the listening socket sit in an epoll set of
 * their own, one source of the monitor's loop: as many execs as fds.
 *
 * The monitor runs outside the container's cgroup, and each refused call
 * costs it a wake-up, a notification read, answered and recorded: a
 * container held to a quarter of a CPU that looped on a refused call in four
 * threads made it spend ~0.8 of a CPU (bench/README.md, "Refused calls under a flood").
 * So refused calls are answered within a budget, a token bucket of all the
 * listeners together (SECCOMP_BURST at once, then SECCOMP_RATE a second):
 * when it is empty the listeners are not read (EPOLL_CTL_MOD to no events;
 * a hang-up is still reported) until SECCOMP_RESUME tokens are back (a
 * timerfd), and the callers wait in the kernel for their answer, so a flood
 * goes no faster than the budget and the monitor's CPU with it.  The wait
 * is the kernel's for any notification: a signal ends it (SIGKILL at once;
 * one with a handler restarts the call, or fails it with EINTR).  Exec
 * calls (exec_records) ride the same listeners and take no token: under a
 * flood they wait for the next read too, and are then answered as ever.
 *
 * Off, with an "audit_error" (source "syscall") saying why, when a process
 * could not get a listener (a config whose SCMP_ACT_NOTIFY goes to its own
 * linux.seccomp.listenerPath keeps it) or create did not ask for one.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/token_bucket.h"
#include "common/util.h"
#include "monitor/monitor_internal.h"
#include "os/procfs.h"
#include "os/syscall_late.h"

#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

#define SECCOMP_READ_MAX 256 /* notifications per wake-up and listener */
#define SECCOMP_EVENTS 64    /* epoll events per wake-up */
/* The budget of refused calls, measured (bench/README.md, "Refused calls under a flood"):
 * paced, each refused call is a wake-up of its own and costs the monitor
 * ~10 us, so 1,000 a second keep it near 1% of a CPU (49-52 ms in a 4 s
 * flood), a twentieth of a container held to a quarter of one; a program's
 * few refused calls (a sweep of the whole deny list is ~40) are never held
 * back, nor is a run of 1,000 (a call 8-9 us, as without the budget). */
#define SECCOMP_BURST 1000 /* refused calls answered at once */
#define SECCOMP_RATE 1000  /* then this many a second */
#define SECCOMP_RESUME 10  /* tokens an empty budget waits for (10 ms at the rate) */

#define CALLER_DIRS 8 /* /proc directories of a listener's callers kept (caller_dir) */

enum item_kind { ITEM_CHAN, ITEM_ACCEPT, ITEM_NOTIFY, ITEM_RESUME };

struct item {
  enum item_kind kind;
  int fd;
  pid_t dir_pid[CALLER_DIRS];  /* a listener: its last callers (0: none), */
  int dir_fd[CALLER_DIRS];     /* their /proc directories */
  pid_t dir_tgid[CALLER_DIRS]; /* and their processes' pids (a thread's is its group's) */
  unsigned dir_next;           /* the one to replace next */
  bool ack;                    /* a channel from exec: answer "OK" or "NO why" */
  bool stub_seen;              /* a listener: the runtime's exec of its stub came (exec_records) */
  struct item *prev, *next;    /* a listener: the others (seccomp_src.listeners) */
};

struct seccomp_src {
  int ep;
  int eno;
  const struct oci_seccomp *filter; /* the profile's, with ERRNO rules (notify_variant's source) */
  bool exec_records;          /* exec calls come too: let go on and recorded (monitor_exec.c) */
  size_t n_items;             /* live ones (tests read the monitor's fds) */
  struct item *listeners;     /* the ITEM_NOTIFY items */
  struct token_bucket budget; /* refused calls, every listener together */
  struct item *resume;        /* ITEM_RESUME: a timerfd, armed while paused (NULL: none) */
  bool paused;                /* the budget is spent: listeners not read */
};

/* The /proc directory of pid, a caller on listener it.  The listener keeps
 * those of its last CALLER_DIRS callers open: a thread that loops on a
 * refused call comes back, and the open (beneath the checked procfs, then
 * its fstatfs and close) was half of what reading its program cost (6.4 us
 * a call, 4.5 without the read at all; bench/README.md, "Refused calls under
 * a flood").  A new one takes the place of the oldest.  An fd of /proc/PID
 * stays that process's: when it ends and another gets its pid, reads through
 * the fd fail (caller_program then opens the new one's).  They are closed
 * with the listener.  The caller's process (its thread group: pid is a
 * thread's id) is read with the directory, into *tgid (pid when unknown):
 * a thread keeps its group. */
static int caller_dir(struct item *it, pid_t pid, pid_t *tgid)
{
  char rel[24], status[2048];
  struct error ignore = {0};
  struct procfs_status st;
  unsigned i;
  int dir;

  for (i = 0; i < CALLER_DIRS; i++)
    if (it->dir_pid[i] == pid) {
      *tgid = it->dir_tgid[i];
      return it->dir_fd[i];
    }
  *tgid = pid;
  snprintf(rel, sizeof rel, "%d", (int)pid);
  dir = procfs_open(rel, O_PATH | O_DIRECTORY, &ignore);
  if (dir < 0)
    return -1;
  if (monitor_read_at(dir, "status", status, sizeof status) <= 0)
    status[0] = '\0';
  procfs_parse_status(status, &st);
  if (st.tgid > 0 && st.tgid <= INT_MAX)
    *tgid = (pid_t)st.tgid;
  i = it->dir_next++ % CALLER_DIRS;
  if (it->dir_pid[i] != 0)
    close(it->dir_fd[i]);
  it->dir_pid[i] = pid;
  it->dir_fd[i] = dir;
  it->dir_tgid[i] = *tgid;
  return dir;
}

/* Forget pid's directory (it is of a process that ended), or all (pid 0). */
static void caller_dir_drop(struct item *it, pid_t pid)
{
  for (unsigned i = 0; i < CALLER_DIRS; i++)
    if (it->dir_pid[i] != 0 && (pid == 0 || it->dir_pid[i] == pid)) {
      close(it->dir_fd[i]);
      it->dir_pid[i] = 0;
    }
}

/* The program of the caller of REQ on listener IT, into EXE (size N), and
 * its process's pid into *tgid (refused-call-thread-pid), read
 * while the caller still waits for our answer: once answered it may exit at
 * once (try-syscall does) and its /proc entry is gone.  Read for every call
 * (an exec changes it), through the caller's directory (caller_dir).  The
 * notification's id, checked after the read, says the pid was still that
 * caller's (not reused). */
static void caller_program(struct item *it, const struct seccomp_notif *req, char *exe, size_t n,
                           pid_t *tgid)
{
  pid_t pid = (pid_t)req->pid;
  __u64 id = req->id;
  int dir;
  ssize_t len;

  *tgid = pid;
  dir = pid > 0 ? caller_dir(it, pid, tgid) : -1;
  len = dir >= 0 ? readlinkat(dir, "exe", exe, n - 1) : -1;
  if (len <= 0 && dir >= 0) { /* a directory of an earlier process of that pid? */
    caller_dir_drop(it, pid);
    dir = caller_dir(it, pid, tgid);
    len = dir >= 0 ? readlinkat(dir, "exe", exe, n - 1) : -1;
  }
  if (len <= 0) {
    snprintf(exe, n, "?");
    return;
  }
  exe[len] = '\0';
  if (ioctl(it->fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) < 0)
    snprintf(exe, n, "?");
}

#define X32_SYSCALL_BIT 0x40000000

/* The ABI of a call, as linux.seccomp names architectures (SCMP_ARCH_X86 ->
 * "x86"), and the libseccomp token to resolve its number with: x32 calls come
 * with x86_64's audit arch and 0x40000000 in the number. */
static const char *call_abi(const struct seccomp_data *d, uint32_t *token)
{
  *token = d->arch;
  switch (d->arch) {
  case SCMP_ARCH_X86_64:
    if ((uint32_t)d->nr & X32_SYSCALL_BIT) {
      *token = SCMP_ARCH_X32;
      return "x32";
    }
    return "x86_64";
  case SCMP_ARCH_X86:
    return "x86";
  case SCMP_ARCH_AARCH64:
    return "aarch64";
  case SCMP_ARCH_ARM:
    return "arm";
  default:
    return "?";
  }
}

/* Is the call execve (*at false) or execveat (*at true)?  The kernel says
 * which call it is, not the container. */
static bool exec_call(const struct seccomp_data *d, bool *at)
{
  uint32_t token;
  char *name;
  bool r;

  call_abi(d, &token);
  name = seccomp_syscall_resolve_num_arch(token, d->nr);
  r = name != NULL && (streq(name, "execve") || streq(name, "execveat"));
  *at = r && streq(name, "execveat");
  free(name);
  return r;
}

/* The name of D's call on its caller's ABI (NULL: unknown); freed by the caller. */
static char *call_name(const struct seccomp_data *d)
{
  uint32_t token;
  char *name;
  const char *late = syscall_late_name((long)((uint32_t)d->nr & ~X32_SYSCALL_BIT));

  call_abi(d, &token);
  name = seccomp_syscall_resolve_num_arch(token, d->nr);
  if (name == NULL && late != NULL) /* newer than libseccomp: os/syscall_late.h */
    name = xstrdup(late);
  return name;
}

/* The errno to answer D (call NAME) with: that of the profile's rule with
 * argument conditions it matches (the filter made only MASKED_EQ ones), else
 * the profile's. */
static int call_errno(const struct seccomp_src *s, const char *name, const struct seccomp_data *d)
{
  for (size_t i = 0; name != NULL && s->filter != NULL && i < s->filter->n_syscalls; i++) {
    const struct oci_seccomp_syscall *sc = &s->filter->syscalls[i];
    bool match = sc->n_args > 0 && sc->has_errno_ret && strv_contains(sc->names, name);

    for (size_t j = 0; match && j < sc->n_args; j++) {
      const struct oci_seccomp_arg *a = &sc->args[j];
      match = a->index < 6 && streq(a->op, "SCMP_CMP_MASKED_EQ") &&
              (d->args[a->index] & a->value) == a->value_two;
    }
    if (match)
      return (int)sc->errno_ret;
  }
  return s->eno;
}

static void record(struct monitor *m, int eno, const char *name, const struct seccomp_notif *req,
                   const char *exe, pid_t tgid)
{
  uint32_t token;
  const char *abi = call_abi(&req->data, &token);
  struct jbuf b = {0};

  if (monitor_flood_admit(m, "syscall", exe, name ? name : "?", tgid)) {
    jb_key_str(&b, "syscall", name ? name : "?");
    jb_key_i64(&b, "nr", req->data.nr);
    jb_key_str(&b, "arch", abi);
    jb_key_str(&b, "verdict", "refused");
    jb_key_i64(&b, "errno", eno);
    jb_key_i64(&b, "pid", tgid);
    if (tgid != (pid_t)req->pid)
      jb_key_i64(&b, "tid", req->pid);
    jb_key_str(&b, "program", exe);
    jb_key_i64(&b, "count", 1);
    monitor_record(m, "syscall", jb_str(&b));
    jb_free(&b);
  }
}

static void item_close(struct seccomp_src *s, struct item *it)
{
  if (it->kind == ITEM_NOTIFY) {
    if (it->prev != NULL)
      it->prev->next = it->next;
    else
      s->listeners = it->next;
    if (it->next != NULL)
      it->next->prev = it->prev;
    caller_dir_drop(it, 0);
  }
  epoll_ctl(s->ep, EPOLL_CTL_DEL, it->fd, NULL);
  close(it->fd);
  free(it);
  s->n_items--;
}

static struct item *item_add(struct seccomp_src *s, enum item_kind kind, int fd, bool ack)
{
  struct item *it = xmalloc0(sizeof *it);
  /* a listener added while the budget is spent waits for it as the others do */
  uint32_t events = kind == ITEM_NOTIFY && s->paused ? 0 : EPOLLIN;
  struct epoll_event ev = {.events = events, .data.ptr = it};

  *it = (struct item){.kind = kind, .fd = fd, .ack = ack};
  if (epoll_ctl(s->ep, EPOLL_CTL_ADD, fd, &ev) < 0) {
    free(it);
    return NULL;
  }
  if (kind == ITEM_NOTIFY) {
    it->next = s->listeners;
    if (s->listeners != NULL)
      s->listeners->prev = it;
    s->listeners = it;
  }
  s->n_items++;
  return it;
}

/* Every listener read (EPOLLIN) or not (0: only a hang-up is reported). */
static void listeners_poll(struct seccomp_src *s, uint32_t events)
{
  for (struct item *it = s->listeners; it != NULL; it = it->next) {
    struct epoll_event ev = {.events = events, .data.ptr = it};
    epoll_ctl(s->ep, EPOLL_CTL_MOD, it->fd, &ev);
  }
}

/* The budget is spent: stop reading the listeners until SECCOMP_RESUME
 * tokens are back (true).  false: there is no timer to wake us (none could
 * be made), so they are read on without a budget, as before, rather than
 * callers left waiting. */
static bool pause_listeners(struct seccomp_src *s)
{
  int64_t ms = token_bucket_wait_ms(&s->budget, SECCOMP_RESUME, monitor_now_ms());
  struct itimerspec its = {.it_value = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L}};

  if (ms <= 0)
    its.it_value.tv_nsec = 1000000L;
  if (s->resume == NULL || timerfd_settime(s->resume->fd, 0, &its, NULL) < 0)
    return false;
  s->paused = true;
  listeners_poll(s, 0);
  return true;
}

/* The timer: the budget has tokens again. */
static void on_resume(struct seccomp_src *s, struct item *it)
{
  uint64_t n;

  if (read(it->fd, &n, sizeof n) < 0) {
    /* EAGAIN: nothing expired */
  }
  if (!s->paused)
    return;
  s->paused = false;
  listeners_poll(s, EPOLLIN);
}

/* The first exec call on a listener is the runtime's own: the process that
 * loaded the filter (the init, or an exec'd process) runs its sealed stub
 * with execveat(fd, "", AT_EMPTY_PATH) before anything of the container can
 * run under that filter.  Its memory is not ours to read (the runtime is
 * not dumpable then), so the kernel's arguments are what we check. */
static bool stub_call(struct item *it, const struct seccomp_data *d, bool at)
{
  if (it->stub_seen)
    return false;
  it->stub_seen = true;
  return at && (d->args[4] & AT_EMPTY_PATH);
}

/* true: the listener is done (hung up) */
static bool on_notify(struct monitor *m, struct seccomp_src *s, struct item *it)
{
  char exe[4096];
  int fd = it->fd;
  pid_t tgid;

  for (int i = 0; i < SECCOMP_READ_MAX; i++) {
    struct seccomp_notif req;
    struct seccomp_notif_resp resp;
    struct pollfd p = {.fd = fd, .events = POLLIN};
    char *name;
    bool at;
    int eno;

    if (!token_bucket_ready(&s->budget, monitor_now_ms()) && pause_listeners(s))
      return false;
    if (poll(&p, 1, 0) <= 0)
      return false;
    if (!(p.revents & POLLIN))
      /* POLLHUP: no process uses the filter any more (for ever) */
      return (p.revents & (POLLHUP | POLLERR)) != 0;
    memset(&req, 0, sizeof req);
    if (ioctl(fd, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0) {
      if (errno == EINTR || errno == ENOENT)
        continue; /* the caller died meanwhile */
      return false;
    }
    if (s->exec_records && exec_call(&req.data, &at)) {
      monitor_exec_call(m, fd, &req, at, stub_call(it, &req.data, at));
      continue;
    }
    token_bucket_take(&s->budget, monitor_now_ms()); /* the one seen above (or none: no timer) */
    caller_program(it, &req, exe, sizeof exe, &tgid);
    name = call_name(&req.data);
    eno = call_errno(s, name, &req.data);
    /* then answer (the caller waits); flags 0 = fail it with -eno */
    resp = (struct seccomp_notif_resp){.id = req.id, .error = -eno};
    if (ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0 && errno != ENOENT) {
      /* the kernel fails the call itself when we cannot answer */
    }
    record(m, eno, name, &req, exe, tgid);
    free(name);
  }
  return false;
}

/* A seccomp listener, not some other fd a peer passed us. */
static bool is_listener(int fd)
{
  char name[32], link[64];
  ssize_t n;

  snprintf(name, sizeof name, "/proc/self/fd/%d", fd);
  n = readlink(name, link, sizeof link - 1);
  if (n <= 0)
    return false;
  link[n] = '\0';
  return strcmp(link, "anon_inode:seccomp notify") == 0;
}

static void answer(int fd, const char *msg)
{
  if (send(fd, msg, strlen(msg), MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
    /* the process is gone: its listener hangs up */
  }
}

/* One message, then the channel is done (true). */
static bool on_chan(struct monitor *m, struct seccomp_src *s, struct item *it)
{
  char buf[256], cbuf[CMSG_SPACE(sizeof(int))];
  struct iovec iov = {.iov_base = buf, .iov_len = sizeof buf - 1};
  struct msghdr mh = {
      .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
  struct error err = {0};
  ssize_t n = recvmsg(it->fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
  struct cmsghdr *c;
  int lfd = -1;

  if (n < 0 && (errno == EAGAIN || errno == EINTR))
    return false;
  if (n <= 0) /* EOF: the process is past its exec (or create asked for nothing) */
    return true;
  buf[n] = '\0';
  c = CMSG_FIRSTHDR(&mh);
  if (c != NULL && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
      c->cmsg_len == CMSG_LEN(sizeof(int)))
    memcpy(&lfd, CMSG_DATA(c), sizeof lfd);
  if (lfd >= 0) {
    if (!is_listener(lfd)) {
      close(lfd);
      if (it->ack)
        answer(it->fd, "NO not a seccomp listener");
      return true;
    }
    /* The caller blocks until we answer: have the kernel switch to us on
     * its CPU and back (Linux 6.6) instead of waking us on another one.
     * Measured (bench/README.md): a refused call's round trip 83-153 us ->
     * 13-18 us on the 2-CPU VM; older kernels refuse the flag, harmlessly. */
    (void)ioctl(lfd, SECCOMP_IOCTL_NOTIF_SET_FLAGS, (__u64)SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP);
    if (item_add(s, ITEM_NOTIFY, lfd, false) == NULL) {
      error_errno(&err, "refused-syscall records: a listener cannot be polled");
      monitor_error(m, "syscall", &err);
      close(lfd);
      if (it->ack)
        answer(it->fd, "NO the audit monitor cannot poll another listener");
      return true;
    }
    if (it->ack)
      answer(it->fd, "OK");
    return true;
  }
  if (strncmp(buf, "OFF ", 4) == 0) {
    error_set(&err, 0, "refused-syscall records are off: %s", buf + 4);
    monitor_error(m, "syscall", &err);
  }
  return true;
}

static void on_accept(struct seccomp_src *s, int lsock)
{
  for (int i = 0; i < SECCOMP_EVENTS; i++) {
    struct ucred cr;
    socklen_t len = sizeof cr;
    int fd = accept4(lsock, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

    if (fd < 0)
      return; /* EAGAIN; EMFILE: the exec times out waiting for "OK" and fails */
    /* the state directory is ours alone already; the uid is a second lock */
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0 || cr.uid != geteuid() ||
        item_add(s, ITEM_CHAN, fd, true) == NULL)
      close(fd);
  }
}

static void on_events(struct monitor *m, int fd, short revents, void *ctx)
{
  struct seccomp_src *s = ctx;
  struct epoll_event ev[SECCOMP_EVENTS];
  int n = epoll_wait(s->ep, ev, SECCOMP_EVENTS, 0);

  for (int i = 0; i < n; i++) {
    struct item *it = ev[i].data.ptr;
    bool done = false;

    switch (it->kind) {
    case ITEM_NOTIFY:
      /* paused: a hang-up (reported whatever the events) is all it can be */
      if (s->paused)
        done = (ev[i].events & (EPOLLHUP | EPOLLERR)) != 0;
      else
        done = on_notify(m, s, it);
      break;
    case ITEM_RESUME:
      on_resume(s, it);
      break;
    case ITEM_CHAN:
      done = on_chan(m, s, it);
      break;
    case ITEM_ACCEPT:
      on_accept(s, it->fd);
      break;
    }
    if (done)
      item_close(s, it);
  }
}

int monitor_seccomp_open(struct monitor *m, int chan, const struct oci_seccomp *filter, int eno,
                         bool exec_records, struct error *err)
{
  struct seccomp_src *s = xmalloc0(sizeof *s);
  int tfd;

  s->eno = eno > 0 ? eno : EPERM;
  s->filter = filter;
  s->exec_records = exec_records;
  token_bucket_init(&s->budget, SECCOMP_BURST, SECCOMP_RATE, monitor_now_ms());
  s->ep = epoll_create1(EPOLL_CLOEXEC);
  if (s->ep < 0 || item_add(s, ITEM_CHAN, chan, false) == NULL ||
      monitor_add_fd(m, s->ep, POLLIN, on_events, s) < 0) {
    if (s->ep >= 0)
      close(s->ep);
    free(s);
    close(chan);
    return error_set(err, 0, "refused-syscall records are off: too many monitor sources");
  }
  tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
  if (tfd >= 0 && (s->resume = item_add(s, ITEM_RESUME, tfd, false)) == NULL)
    close(tfd);
  m->seccomp = s;
  return 0;
}

int monitor_seccomp_listen(struct monitor *m, int state_dirfd, struct error *err)
{
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  struct rlimit rl;
  int fd;

  if (m->seccomp == NULL)
    return 0;
  /* one fd per live exec'd process tree: take what the hard limit allows */
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
  snprintf(sa.sun_path, sizeof sa.sun_path, "/proc/self/fd/%d/" MONITOR_SECCOMP_SOCKET,
           state_dirfd);
  unlinkat(state_dirfd, MONITOR_SECCOMP_SOCKET, 0); /* a kept state dir's old one */
  fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return error_errno(err, "refused-syscall records of exec: socket");
  /* umask 077 (reset_process): srwx------ */
  if (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(fd, 64) < 0) {
    error_errno(err, "refused-syscall records of exec: listen on " MONITOR_SECCOMP_SOCKET);
    close(fd);
    return -1;
  }
  if (item_add(m->seccomp, ITEM_ACCEPT, fd, false) == NULL) {
    close(fd);
    return error_errno(err, "refused-syscall records of exec: epoll");
  }
  return 0;
}

int monitor_seccomp_connect(int state_dirfd, struct error *err)
{
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  int fd;

  snprintf(sa.sun_path, sizeof sa.sun_path, "/proc/self/fd/%d/" MONITOR_SECCOMP_SOCKET,
           state_dirfd);
  fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return error_errno(err, "socket");
  if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
    error_errno(err, "connect to the audit monitor's " MONITOR_SECCOMP_SOCKET);
    close(fd);
    return -1;
  }
  return fd;
}
