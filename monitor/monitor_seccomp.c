/* monitor_seccomp.c - refused system calls, from a seccomp listener.
 *
 * The profile's deny-list filter (profile/seccomp.c) is loaded by the
 * container's init with its denied calls as SCMP_ACT_NOTIFY and a new
 * listener (container/process.c), which the init sends here over a
 * socketpair made by monitor_launch and closes before the program runs.
 * Allowed calls never reach us: the filter's default is ALLOW.  Each
 * notification is answered at once with the profile's errno (never
 * "continue": nothing the container sends can make a denied call succeed),
 * then recorded as {"syscall":"unshare","nr":272,"verdict":"refused",
 * "errno":1,"pid":P,"program":"/usr/bin/x","count":1}, coalesced per
 * program and call under a flood (monitor_flood.c).  If the monitor dies,
 * the kernel fails every denied call with ENOSYS: still refused.
 *
 * Off, with an "audit_error" (source "syscall") saying why, when the init
 * could not get a listener (a filter chain has one listener at most: a
 * config whose SCMP_ACT_NOTIFY goes to its own linux.seccomp.listenerPath
 * keeps it) or create did not ask for one.  `exec` processes load the
 * plain errno filter: their refused calls fail the same way but are not
 * recorded.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/util.h"
#include "monitor/monitor_internal.h"
#include "os/procfs.h"

#define SECCOMP_READ_MAX 256 /* notifications per wake-up */

struct listener {
  int chan, fd;
  int eno;
};

static void record(struct monitor *m, const struct listener *l, const struct seccomp_notif *req)
{
  char *name = seccomp_syscall_resolve_num_arch(req->data.arch, req->data.nr);
  char rel[24], exe[4096] = "?";
  struct error ignore = {0};
  cleanup_close int dir = -1;
  ssize_t n;
  struct jbuf b = {0};

  snprintf(rel, sizeof rel, "%u", req->pid);
  dir = procfs_open(rel, O_PATH | O_DIRECTORY, &ignore);
  if (dir >= 0 && (n = readlinkat(dir, "exe", exe, sizeof exe - 1)) > 0)
    exe[n] = '\0';
  if (monitor_flood_admit(m, "syscall", exe, name ? name : "?", (pid_t)req->pid)) {
    jb_key_str(&b, "syscall", name ? name : "?");
    jb_key_i64(&b, "nr", req->data.nr);
    jb_key_str(&b, "verdict", "refused");
    jb_key_i64(&b, "errno", l->eno);
    jb_key_i64(&b, "pid", req->pid);
    jb_key_str(&b, "program", exe);
    jb_key_i64(&b, "count", 1);
    monitor_record(m, "syscall", jb_str(&b));
    jb_free(&b);
  }
  free(name);
}

static void on_notify(struct monitor *m, int fd, short revents, void *ctx)
{
  struct listener *l = ctx;

  for (int i = 0; i < SECCOMP_READ_MAX; i++) {
    struct seccomp_notif req;
    struct seccomp_notif_resp resp;
    struct pollfd p = {.fd = fd, .events = POLLIN};

    if (poll(&p, 1, 0) <= 0)
      return;
    if (!(p.revents & POLLIN)) {
      /* POLLHUP: no process uses the filter any more (for ever) */
      if (p.revents & (POLLHUP | POLLERR)) {
        monitor_drop_fd(m, fd);
        l->fd = -1;
      }
      return; /* RECV blocks: only when one is pending */
    }
    memset(&req, 0, sizeof req);
    if (ioctl(fd, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0) {
      if (errno == EINTR || errno == ENOENT)
        continue; /* the caller died meanwhile */
      return;
    }
    /* answer first: the caller waits; flags 0 = fail it with -eno */
    resp = (struct seccomp_notif_resp){.id = req.id, .error = -l->eno};
    if (ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0 && errno != ENOENT) {
      /* the kernel fails the call itself when we cannot answer */
    }
    record(m, l, &req);
  }
}

static void on_chan(struct monitor *m, int fd, short revents, void *ctx)
{
  struct listener *l = ctx;
  char buf[256], cbuf[CMSG_SPACE(sizeof(int))];
  struct iovec iov = {.iov_base = buf, .iov_len = sizeof buf - 1};
  struct msghdr mh = {
      .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
  struct error err = {0};
  ssize_t n = recvmsg(fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
  struct cmsghdr *c;

  if (n < 0 && (errno == EAGAIN || errno == EINTR))
    return;
  if (n <= 0) { /* EOF: the init is past its exec (or create asked for nothing) */
    monitor_drop_fd(m, fd);
    l->chan = -1;
    return;
  }
  buf[n] = '\0';
  c = CMSG_FIRSTHDR(&mh);
  if (c != NULL && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && l->fd < 0) {
    memcpy(&l->fd, CMSG_DATA(c), sizeof l->fd);
    if (monitor_add_fd(m, l->fd, POLLIN, on_notify, l) < 0) {
      error_set(&err, 0, "refused-syscall records are off: too many monitor sources");
      monitor_error(m, "syscall", &err);
    }
    return;
  }
  if (strncmp(buf, "OFF ", 4) == 0) {
    error_set(&err, 0, "refused-syscall records are off: %s", buf + 4);
    monitor_error(m, "syscall", &err);
  }
}

int monitor_seccomp_open(struct monitor *m, int chan, int eno, struct error *err)
{
  struct listener *l = xmalloc0(sizeof *l);

  l->chan = chan;
  l->fd = -1;
  l->eno = eno > 0 ? eno : EPERM;
  if (monitor_add_fd(m, chan, POLLIN, on_chan, l) < 0) {
    free(l);
    return error_set(err, 0, "too many monitor sources");
  }
  return 0;
}
