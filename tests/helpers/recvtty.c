/* recvtty - receive a container's pty master over a unix socket (--console-socket).
 *
 * Usage: recvtty [--info FILE] [--out FILE] [--input TEXT] [--timeout SEC] [--close] SOCKET
 * Listens on SOCKET (created atomically: bound under a temporary name, then renamed, so a
 * client that sees the path can connect), accepts one connection and receives one fd with
 * SCM_RIGHTS.  It writes "pty /dev/pts/N" (or "notpty ERR") to the info file (default
 * stdout), writes TEXT to the master if given, then copies everything the master produces to
 * the out file (default stdout) until the slave side is closed (EIO) or the timeout (default
 * 60 s) passes.  Exit 0 when a pty master was received.
 * --close: a receiver that drops what it got: the master, then the connection, are closed
 * after the info line; nothing is relayed. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static int listen_on(const char *path)
{
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  char tmp[sizeof(sa.sun_path)];
  if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp)) {
    fprintf(stderr, "recvtty: socket path `%s' too long\n", path);
    return -1;
  }
  memcpy(sa.sun_path, tmp, strlen(tmp) + 1);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return -1;
  unlink(tmp);
  if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 1) < 0 ||
      rename(tmp, path) < 0) {
    fprintf(stderr, "recvtty: listen on `%s': %s\n", path, strerror(errno));
    close(fd);
    return -1;
  }
  return fd;
}

static int recv_fd(int conn)
{
  char data[256];
  union {
    struct cmsghdr h;
    char buf[CMSG_SPACE(sizeof(int))];
  } u;
  struct iovec iov = {data, sizeof(data)};
  struct msghdr msg = {
      .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf)};
  if (recvmsg(conn, &msg, MSG_CMSG_CLOEXEC) < 0)
    return -1;
  struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
  if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) {
    errno = EBADMSG;
    return -1;
  }
  int fd;
  memcpy(&fd, CMSG_DATA(c), sizeof(fd));
  return fd;
}

static FILE *open_or(const char *path, FILE *dflt)
{
  if (!path)
    return dflt;
  FILE *f = fopen(path, "we");
  if (!f) {
    fprintf(stderr, "recvtty: open `%s': %s\n", path, strerror(errno));
    exit(1);
  }
  return f;
}

static void relay(int master, FILE *out, long timeout)
{
  time_t end = time(NULL) + timeout;
  char buf[4096];
  while (time(NULL) < end) {
    struct pollfd p = {.fd = master, .events = POLLIN};
    int r = poll(&p, 1, 200);
    if (r < 0 && errno != EINTR)
      return;
    if (r <= 0)
      continue;
    ssize_t n = read(master, buf, sizeof(buf));
    if (n <= 0)
      return; /* EIO: every slave fd is closed */
    fwrite(buf, 1, (size_t)n, out);
    fflush(out);
  }
}

int main(int argc, char **argv)
{
  const char *info_path = NULL, *out_path = NULL, *input = NULL, *sock = NULL;
  long timeout = 60;
  int drop = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--info") == 0 && i + 1 < argc)
      info_path = argv[++i];
    else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
      out_path = argv[++i];
    else if (strcmp(argv[i], "--close") == 0)
      drop = 1;
    else if (strcmp(argv[i], "--input") == 0 && i + 1 < argc)
      input = argv[++i];
    else if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc) {
      char *end = NULL;
      timeout = strtol(argv[++i], &end, 10);
      if (*end || timeout <= 0 || timeout > 3600) {
        fprintf(stderr, "recvtty: bad timeout `%s'\n", argv[i]);
        return 2;
      }
    } else if (!sock && argv[i][0] != '-')
      sock = argv[i];
    else {
      fprintf(stderr,
              "usage: recvtty [--info F] [--out F] [--input T] [--timeout S] [--close] SOCKET\n");
      return 2;
    }
  }
  if (!sock) {
    fprintf(stderr,
            "usage: recvtty [--info F] [--out F] [--input T] [--timeout S] [--close] SOCKET\n");
    return 2;
  }
  int lfd = listen_on(sock);
  if (lfd < 0)
    return 1;
  struct pollfd p = {.fd = lfd, .events = POLLIN};
  if (poll(&p, 1, (int)timeout * 1000) <= 0) {
    fprintf(stderr, "recvtty: no connection on `%s' within %ld s\n", sock, timeout);
    unlink(sock);
    return 1;
  }
  int conn = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
  close(lfd);
  unlink(sock);
  int master = conn < 0 ? -1 : recv_fd(conn);
  if (master < 0) {
    fprintf(stderr, "recvtty: receive fd: %s\n", strerror(errno));
    return 1;
  }
  if (!drop)
    close(conn);
  FILE *info = open_or(info_path, stdout);
  FILE *out = open_or(out_path, stdout);
  unsigned int ptn = 0;
  int is_pty = ioctl(master, TIOCGPTN, &ptn) == 0;
  if (is_pty)
    fprintf(info, "pty /dev/pts/%u\n", ptn);
  else
    fprintf(info, "notpty %s\n", strerror(errno));
  fflush(info);
  if (drop) { /* the master, then the connection */
    close(master);
    close(conn);
    return is_pty ? 0 : 1;
  }
  if (input && write(master, input, strlen(input)) < 0)
    fprintf(stderr, "recvtty: write to master: %s\n", strerror(errno));
  relay(master, out, timeout);
  close(master);
  return is_pty ? 0 : 1;
}
