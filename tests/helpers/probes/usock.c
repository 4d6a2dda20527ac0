/* usock - nc -U for the test rootfs (busybox's nc has no UNIX sockets).
 *
 * Usage: usock [-f N] PATH
 * Connects to the UNIX stream socket PATH, copies stdin to it and what it
 * sends to stdout, until it closes.  -f N (N <= 250) passes N descriptors
 * of /dev/null (SCM_RIGHTS) with the first bytes sent.  Used by the
 * sub-agent suite to speak raw frames to /run/agentrt/agent.sock from
 * inside a container: floods, requests trickled in, too many descriptors.
 * usock -d PATH [N] sends stdin (at most 4096 bytes) as one datagram (N
 * times, a flood) to the UNIX datagram socket PATH, as sd_notify does
 * (busybox has no systemd-notify). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define MAX_FDS 250

static int send_datagram(const char *path, long count)
{
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  char buf[4096];
  size_t len = 0;
  ssize_t n;
  int s;

  if (strlen(path) >= sizeof sa.sun_path)
    return 2;
  strcpy(sa.sun_path, path);
  while (len < sizeof buf && (n = read(0, buf + len, sizeof buf - len)) > 0)
    len += (size_t)n;
  s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  for (long i = 0; i < count; i++)
    if (s < 0 || sendto(s, buf, len, 0, (struct sockaddr *)&sa, sizeof sa) != (ssize_t)len) {
      fprintf(stderr, "usock: %s: %s\n", path, strerror(errno));
      return 1;
    }
  return 0;
}

int main(int argc, char **argv)
{
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  int nfds = 0, s, fds[MAX_FDS];
  bool in_open = true;
  char buf[4096];

  if ((argc == 3 || argc == 4) && strcmp(argv[1], "-d") == 0)
    return send_datagram(argv[2], argc == 4 ? strtol(argv[3], NULL, 10) : 1);
  if (argc == 4 && strcmp(argv[1], "-f") == 0) {
    char *end = NULL;
    long v = strtol(argv[2], &end, 10);
    nfds = end == argv[2] || *end != '\0' || v < 0 || v > MAX_FDS ? -1 : (int)v;
    argv += 2;
    argc -= 2;
  }
  if (argc != 2 || nfds < 0 || nfds > MAX_FDS || strlen(argv[1]) >= sizeof sa.sun_path) {
    fprintf(stderr, "usage: usock [-f N] PATH | -d PATH [N]\n");
    return 2;
  }
  strcpy(sa.sun_path, argv[1]);
  s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof sa) < 0) {
    fprintf(stderr, "usock: %s: %s\n", argv[1], strerror(errno));
    return 1;
  }
  for (int i = 0; i < nfds; i++)
    if ((fds[i] = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0) {
      fprintf(stderr, "usock: /dev/null: %s\n", strerror(errno));
      return 1;
    }
  for (;;) {
    struct pollfd pf[2] = {{.fd = s, .events = POLLIN}, {.fd = 0, .events = POLLIN}};
    if (poll(pf, in_open ? 2 : 1, -1) < 0) {
      if (errno == EINTR)
        continue;
      return 1;
    }
    if (pf[0].revents) {
      ssize_t n = read(s, buf, sizeof buf);
      if (n <= 0)
        return 0;
      if (write(1, buf, (size_t)n) != n)
        return 1;
    }
    if (in_open && pf[1].revents) {
      ssize_t n = read(0, buf, sizeof buf);
      if (n <= 0) {
        in_open = false;
        continue;
      }
      struct iovec iov = {.iov_base = buf, .iov_len = (size_t)n};
      struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
      union {
        char b[CMSG_SPACE(MAX_FDS * sizeof(int))];
        struct cmsghdr align;
      } u;
      if (nfds > 0) {
        mh.msg_control = u.b;
        mh.msg_controllen = CMSG_SPACE((size_t)nfds * sizeof(int));
        struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN((size_t)nfds * sizeof(int));
        memcpy(CMSG_DATA(cm), fds, (size_t)nfds * sizeof(int));
        nfds = 0;
      }
      if (sendmsg(s, &mh, MSG_NOSIGNAL) != n)
        return 1;
    }
  }
}
