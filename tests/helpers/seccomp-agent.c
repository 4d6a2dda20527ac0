/* seccomp-agent - a minimal seccomp agent for linux.seccomp.listenerPath tests.
 *
 * Usage: seccomp-agent [--state FILE] [--log FILE] [--errno N] [--timeout SEC] [--conns N] SOCKET
 * Listens on SOCKET (bound under a temporary name, then renamed), accepts up to N connections
 * (default 1), each carrying one container process state document with exactly one fd
 * (SCM_RIGHTS), as the runtime spec says.  The document is appended to the state file (one
 * line per connection, "fds=N" after it); then it answers every notification on the received
 * listener fds with -N (default EXDEV) and logs "nr=<syscall number> pid=<pid>" per
 * notification.  With --errno 0 the call is let through (SECCOMP_USER_NOTIF_FLAG_CONTINUE).
 * Exits after the timeout (default 60 s); closing the fds then makes the kernel fail further
 * notified calls with ENOSYS. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONNS 8

static int listen_on(const char *path)
{
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  char tmp[sizeof(sa.sun_path)];
  int fd;

  if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp)
    return -1;
  memcpy(sa.sun_path, tmp, strlen(tmp) + 1);
  fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return -1;
  unlink(tmp);
  if (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(fd, MAX_CONNS) < 0 ||
      rename(tmp, path) < 0) {
    close(fd);
    return -1;
  }
  return fd;
}

/* One document and its fds; returns the first fd or -1. */
static int receive(int conn, FILE *state)
{
  static char buf[1 << 16];
  char cbuf[CMSG_SPACE(4 * sizeof(int))];
  struct iovec iov = {.iov_base = buf, .iov_len = sizeof buf - 1};
  struct msghdr mh = {
      .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
  ssize_t n = recvmsg(conn, &mh, MSG_CMSG_CLOEXEC);
  int nfds = 0, fd = -1;

  if (n < 0)
    return -1;
  buf[n] = '\0';
  for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
      nfds = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
      memcpy(&fd, CMSG_DATA(c), sizeof fd);
    }
  /* the runtime must close the connection after one document */
  fprintf(state, "%s\nfds=%d eof=%s\n", buf, nfds, read(conn, buf, 1) == 0 ? "yes" : "no");
  fflush(state);
  return fd;
}

static void answer(int fd, int err_no, FILE *log)
{
  struct seccomp_notif req;
  struct seccomp_notif_resp resp;

  memset(&req, 0, sizeof req);
  if (ioctl(fd, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
    return;
  memset(&resp, 0, sizeof resp);
  resp.id = req.id;
  if (err_no == 0)
    resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
  else
    resp.error = -err_no;
  fprintf(log, "nr=%d pid=%u\n", req.data.nr, req.pid);
  fflush(log);
  ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, &resp);
}

int main(int argc, char **argv)
{
  const char *state_path = NULL, *log_path = NULL, *sock = NULL;
  int err_no = EXDEV, timeout = 60, conns = 1, lfd, nfds = 0;
  struct pollfd p[MAX_CONNS + 1];
  FILE *state, *log;
  time_t end;

  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--state") == 0 && i + 1 < argc)
      state_path = argv[++i];
    else if (strcmp(argv[i], "--log") == 0 && i + 1 < argc)
      log_path = argv[++i];
    else if (strcmp(argv[i], "--errno") == 0 && i + 1 < argc)
      err_no = atoi(argv[++i]);
    else if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc)
      timeout = atoi(argv[++i]);
    else if (strcmp(argv[i], "--conns") == 0 && i + 1 < argc)
      conns = atoi(argv[++i]);
    else if (sock == NULL)
      sock = argv[i];
    else
      return 2;
  }
  if (sock == NULL || conns < 1 || conns > MAX_CONNS)
    return 2;
  state = state_path ? fopen(state_path, "a") : stdout;
  log = log_path ? fopen(log_path, "a") : stderr;
  if (state == NULL || log == NULL || (lfd = listen_on(sock)) < 0)
    return 1;
  end = time(NULL) + timeout;
  p[0] = (struct pollfd){.fd = lfd, .events = POLLIN};
  while (time(NULL) < end) {
    if (poll(p, (nfds_t)(1 + nfds), 200) <= 0)
      continue;
    if ((p[0].revents & POLLIN) && conns > 0) {
      int conn = accept4(lfd, NULL, NULL, SOCK_CLOEXEC), fd;
      if (conn >= 0) {
        fd = receive(conn, state);
        close(conn);
        if (fd >= 0 && nfds < MAX_CONNS)
          p[1 + nfds++] = (struct pollfd){.fd = fd, .events = POLLIN};
        if (--conns == 0)
          p[0].fd = -1;
      }
    }
    for (int i = 1; i <= nfds; i++) {
      if (p[i].revents & POLLIN)
        answer(p[i].fd, err_no, log);
      else if (p[i].revents & (POLLHUP | POLLERR))
        p[i].fd = -1; /* its filter's tasks are gone */
    }
  }
  unlink(sock);
  return 0;
}
