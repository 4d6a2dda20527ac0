/* agentrt-client.c - /run/agentrt/bin/agentrt inside a container whose
 * profile enables sub-agents: `agentrt sub VERB ...` sent to the monitor
 * over /run/agentrt/agent.sock (common/subproto.h, docs/subagents.md).
 *
 * Statically linked and without the runtime library, so that it runs on any
 * root filesystem.  It ships its words and its stdin/stdout/stderr to the
 * server, prints the 'O' and 'E' frames, forwards SIGINT, SIGTERM, SIGHUP
 * and SIGQUIT as 'S' frames and exits with the 'X' frame's status.  The
 * options are parsed by the server (one place, one set of error texts).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/subproto.h"

static volatile sig_atomic_t pending_sig;
static int sig_pipe[2] = {-1, -1};

static void on_signal(int sig)
{
  int e = errno;
  char c = (char)sig;

  pending_sig = sig;
  if (write(sig_pipe[1], &c, 1) < 0) {
  }
  errno = e;
}

static int write_all(int fd, const void *buf, size_t n)
{
  const char *p = buf;

  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

static int read_all(int fd, void *buf, size_t n)
{
  char *p = buf;

  while (n > 0) {
    ssize_t r = read(fd, p, n);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      return -1;
    p += r;
    n -= (size_t)r;
  }
  return 0;
}

static int usage(FILE *f)
{
  fputs("Usage: agentrt sub run [--name N] [--workspace PATH] [--allow ENTRY]... [--memory M]\n"
        "                       [--pids N] [--cpus C] [--secret NAME]... [--detach] -- CMD...\n"
        "       agentrt sub exec N -- CMD...\n"
        "       agentrt sub list | kill N | diff N | commit N [PATH...] | discard N | audit N\n"
        "The sub-agent API of the agentrt container this runs in (docs/subagents.md).\n",
        f);
  return f == stdout ? 0 : 2;
}

static int send_request(int s, int argc, char **argv)
{
  size_t len = 1;
  char *buf, *p;
  struct msghdr mh = {0};
  struct iovec iov;
  union {
    char b[CMSG_SPACE(3 * sizeof(int))];
    struct cmsghdr align;
  } u;
  struct cmsghdr *cm;
  int fds[3] = {0, 1, 2};

  for (int i = 2; i < argc; i++)
    len += strlen(argv[i]) + 1;
  if (len > SUBPROTO_MAX || (unsigned)argc > SUBPROTO_MAX_WORDS) {
    fputs("agentrt: sub: the command is too long\n", stderr);
    return -1;
  }
  buf = malloc(4 + len);
  if (buf == NULL)
    return -1;
  subproto_put_len((unsigned char *)buf, (uint32_t)len);
  buf[4] = SUBPROTO_REQUEST;
  p = buf + 5;
  for (int i = 2; i < argc; i++) {
    size_t n = strlen(argv[i]) + 1;
    memcpy(p, argv[i], n);
    p += n;
  }
  iov.iov_base = buf;
  iov.iov_len = 4 + len;
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  memset(&u, 0, sizeof u);
  mh.msg_control = u.b;
  mh.msg_controllen = sizeof u.b;
  cm = CMSG_FIRSTHDR(&mh);
  cm->cmsg_level = SOL_SOCKET;
  cm->cmsg_type = SCM_RIGHTS;
  cm->cmsg_len = CMSG_LEN(sizeof fds);
  memcpy(CMSG_DATA(cm), fds, sizeof fds);
  for (;;) {
    ssize_t w = sendmsg(s, &mh, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR)
      continue;
    if (w < 0) {
      free(buf);
      return -1;
    }
    if ((size_t)w < iov.iov_len && write_all(s, buf + w, iov.iov_len - (size_t)w) < 0) {
      free(buf);
      return -1;
    }
    break;
  }
  free(buf);
  return 0;
}

static void send_signal(int s, int sig)
{
  char msg[16];
  int n = snprintf(msg + 5, sizeof msg - 5, "%d", sig);

  subproto_put_len((unsigned char *)msg, (uint32_t)n + 1);
  msg[4] = SUBPROTO_SIGNAL;
  if (write_all(s, msg, 5 + (size_t)n) < 0) {
  }
}

int main(int argc, char **argv)
{
  const char *path = getenv("AGENTRT_AGENT_SOCKET");
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  static unsigned char frame[SUBPROTO_MAX + 1];
  int s;

  for (int i = 1; i < argc && i < 3; i++)
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
      return usage(stdout);
  if (argc < 3 || strcmp(argv[1], "sub") != 0)
    return usage(stderr);
  if (path == NULL || *path == '\0')
    path = SUBPROTO_SOCK;
  if (strlen(path) >= sizeof sa.sun_path) {
    fprintf(stderr, "agentrt: sub: socket path `%s` is too long\n", path);
    return 125;
  }
  strcpy(sa.sun_path, path);
  s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof sa) < 0) {
    fprintf(stderr,
            "agentrt: sub: connect %s: %s (this container's profile does not enable "
            "sub-agents, or its monitor is gone)\n",
            path, strerror(errno));
    return 125;
  }
  if (pipe(sig_pipe) < 0)
    return 125;
  {
    struct sigaction sa2 = {.sa_handler = on_signal};
    sigemptyset(&sa2.sa_mask);
    sigaction(SIGINT, &sa2, NULL);
    sigaction(SIGTERM, &sa2, NULL);
    sigaction(SIGHUP, &sa2, NULL);
    sigaction(SIGQUIT, &sa2, NULL);
    signal(SIGPIPE, SIG_IGN);
  }
  if (send_request(s, argc, argv) < 0) {
    fprintf(stderr, "agentrt: sub: send the request: %s\n", strerror(errno));
    return 125;
  }
  for (;;) {
    struct pollfd p[2] = {{.fd = s, .events = POLLIN}, {.fd = sig_pipe[0], .events = POLLIN}};
    unsigned char h[4];
    uint32_t n;

    if (poll(p, 2, -1) < 0) {
      if (errno == EINTR)
        continue;
      return 125;
    }
    if (p[1].revents & POLLIN) {
      char c;
      if (read(sig_pipe[0], &c, 1) == 1)
        send_signal(s, (unsigned char)c);
      continue;
    }
    if (read_all(s, h, 4) < 0) {
      fputs("agentrt: sub: the monitor closed the connection without an exit status\n", stderr);
      return 125;
    }
    n = subproto_get_len(h);
    if (n < 1 || n > SUBPROTO_MAX + 1 || read_all(s, frame, n) < 0) {
      fputs("agentrt: sub: a malformed reply from the monitor\n", stderr);
      return 125;
    }
    switch (frame[0]) {
    case SUBPROTO_STDOUT:
      fflush(stdout);
      if (write_all(1, frame + 1, n - 1) < 0) {
      }
      break;
    case SUBPROTO_STDERR:
      if (write_all(2, frame + 1, n - 1) < 0) {
      }
      break;
    case SUBPROTO_EXIT:
      frame[n] = '\0';
      return atoi((const char *)frame + 1) & 0xff;
    default:
      break;
    }
  }
}
