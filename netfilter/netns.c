/* netns.c - sockets inside another network namespace, without moving there.
 *
 * A forked child does setns(CLONE_NEWNET), creates the sockets and passes
 * them back over SCM_RIGHTS; a socket keeps the netns it was created in for
 * its whole life.  The caller's own netns is never changed, so a failure
 * halfway can never leave the runtime (or the host) in the wrong namespace.
 */
#include "egress.h"

#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/util.h"

#define NETNS_MAX_SOCKETS 8

struct reply {
  int err[NETNS_MAX_SOCKETS]; /* errno per socket, 0 = passed */
  int setns_err;
};

static void child_send(int sock, const struct reply *r, const int *fds, size_t n)
{
  char cbuf[CMSG_SPACE(sizeof(int) * NETNS_MAX_SOCKETS)];
  struct iovec iov = {.iov_base = (void *)r, .iov_len = sizeof *r};
  struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
  struct cmsghdr *c;

  memset(cbuf, 0, sizeof cbuf);
  if (n > 0) {
    msg.msg_control = cbuf;
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * n);
    c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * n);
    memcpy(CMSG_DATA(c), fds, sizeof(int) * n);
  }
  if (sendmsg(sock, &msg, MSG_NOSIGNAL) < 0)
    _exit(1);
}

/* Runs in the child: only async-signal-safe calls. */
static void __attribute__((noreturn))
child_main(int sock, int netns_fd, size_t n, const int *domain, const int *type, const int *proto)
{
  struct reply r;
  int fds[NETNS_MAX_SOCKETS];
  size_t passed = 0;

  memset(&r, 0, sizeof r);
  if (setns(netns_fd, CLONE_NEWNET) < 0) {
    r.setns_err = errno;
    child_send(sock, &r, NULL, 0);
    _exit(0);
  }
  for (size_t i = 0; i < n; i++) {
    int fd = socket(domain[i], type[i] | SOCK_CLOEXEC, proto[i]);
    r.err[i] = fd < 0 ? errno : 0;
    if (fd >= 0)
      fds[passed++] = fd;
  }
  child_send(sock, &r, fds, passed);
  _exit(0);
}

static int receive(int sock, struct reply *r, int *fds, size_t n, size_t *ret_n)
{
  char cbuf[CMSG_SPACE(sizeof(int) * NETNS_MAX_SOCKETS)];
  struct iovec iov = {.iov_base = r, .iov_len = sizeof *r};
  struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
                       .msg_controllen = sizeof cbuf};
  struct cmsghdr *c;
  ssize_t len;

  *ret_n = 0;
  do
    len = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
  while (len < 0 && errno == EINTR);
  if (len != (ssize_t)sizeof *r)
    return -1;
  for (c = CMSG_FIRSTHDR(&msg); c != NULL; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
      continue;
    *ret_n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    if (*ret_n > n)
      *ret_n = n;
    memcpy(fds, CMSG_DATA(c), *ret_n * sizeof(int));
  }
  return 0;
}

static int same_netns_as_self(int netns_fd, bool *ret)
{
  struct stat a, b;

  if (fstat(netns_fd, &a) < 0 || stat("/proc/self/ns/net", &b) < 0)
    return -1;
  *ret = a.st_dev == b.st_dev && a.st_ino == b.st_ino;
  return 0;
}

static void reap(pid_t pid)
{
  while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
    ;
}

int netns_sockets(int netns_fd, size_t n, const int *domain, const int *type, const int *proto,
                  int *ret_fds, struct error *err)
{
  int sp[2], got[NETNS_MAX_SOCKETS];
  struct reply r;
  size_t n_got = 0, k = 0;
  bool same = false;
  pid_t pid;

  if (n == 0 || n > NETNS_MAX_SOCKETS)
    return error_set(err, EINVAL, "netns sockets");
  if (same_netns_as_self(netns_fd, &same) < 0)
    return error_errno(err, "stat network namespace");
  /* Never install rules in (or listen on) the caller's own namespace: for the
   * runtime that is the host's. */
  if (same)
    return error_set(err, 0, "network namespace is the caller's own (host network?): refusing");
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
    return error_errno(err, "socketpair");
  pid = fork();
  if (pid < 0) {
    close(sp[0]);
    close(sp[1]);
    return error_errno(err, "fork");
  }
  if (pid == 0) {
    close(sp[0]);
    child_main(sp[1], netns_fd, n, domain, type, proto);
  }
  close(sp[1]);
  memset(&r, 0, sizeof r);
  if (receive(sp[0], &r, got, n, &n_got) < 0) {
    close(sp[0]);
    reap(pid);
    return error_set(err, 0, "open sockets in network namespace: helper child failed");
  }
  close(sp[0]);
  reap(pid);
  if (r.setns_err != 0)
    return error_set(err, r.setns_err, "setns into network namespace");
  for (size_t i = 0; i < n; i++) {
    ret_fds[i] = -1;
    if (r.err[i] == 0 && k < n_got)
      ret_fds[i] = got[k++];
  }
  for (size_t i = 0; i < n; i++)
    if (r.err[i] != 0)
      errno = r.err[i]; /* caller sees the last failure when an fd is -1 */
  return 0;
}
