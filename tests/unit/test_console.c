/* test_console.c - container/console.c without a container: the
 * --console-socket message (as go-runc's recvFd wants: one sendmsg, non-empty name,
 * exactly one SCM_RIGHTS fd), window size, and stdio on a pty. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "common/util.h"
#include "container/console.h"
#include "tests/unit/tap.h"

static int listen_at(const char *path)
{
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

  if (strlen(path) >= sizeof a.sun_path)
    return -1;
  memcpy(a.sun_path, path, strlen(path) + 1);
  if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a) < 0 || listen(s, 1) < 0)
    return -1;
  return s;
}

/* Receive what a go-runc / conmon peer would: returns the fd count seen. */
static int receive(int conn, char *name, size_t n, int *ret_fd)
{
  union {
    struct cmsghdr h;
    char buf[CMSG_SPACE(sizeof(int) * 4)];
  } c;
  struct iovec iov = {.iov_base = name, .iov_len = n - 1};
  struct msghdr msg = {
      .msg_iov = &iov, .msg_iovlen = 1, .msg_control = c.buf, .msg_controllen = sizeof c.buf};
  ssize_t got = recvmsg(conn, &msg, MSG_CMSG_CLOEXEC);
  int fds = 0;

  if (got <= 0)
    return -1;
  name[got] = '\0';
  for (struct cmsghdr *h = CMSG_FIRSTHDR(&msg); h != NULL; h = CMSG_NXTHDR(&msg, h)) {
    if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS)
      continue;
    fds += (int)((h->cmsg_len - CMSG_LEN(0)) / sizeof(int));
    memcpy(ret_fd, CMSG_DATA(h), sizeof(int));
  }
  return fds;
}

static void test_send_fd(int master)
{
  char dir[] = "/tmp/agentrt-console-test.XXXXXX";
  char path[128], name[4096];
  struct error err = {0};
  struct stat a, b;
  int srv, conn, fd = -1, fds;

  if (mkdtemp(dir) == NULL)
    return (void)tap_ok(false, "send_fd: mkdtemp");
  snprintf(path, sizeof path, "%s/sock", dir);
  srv = listen_at(path);
  tap_ok(srv >= 0, "send_fd: listening socket");
  /* like containerd: accept only after the sender is done (listen backlog) */
  tap_ok(console_send_fd(path, master, &err) == 0, "send_fd: sent (%s)", err.msg);
  conn = accept4(srv, NULL, NULL, SOCK_CLOEXEC);
  fds = receive(conn, name, sizeof name, &fd);
  tap_ok(fds == 1, "send_fd: exactly one SCM_RIGHTS fd (%d)", fds);
  tap_ok(strncmp(name, "/dev/pts/", 9) == 0, "send_fd: payload is the pty name (%s)", name);
  tap_ok(fd >= 0 && fstat(fd, &a) == 0 && fstat(master, &b) == 0 && a.st_rdev == b.st_rdev,
         "send_fd: the fd received is the master");
  tap_ok(console_send_fd("/tmp/agentrt-console-test-no-such/sock", master, &err) < 0 &&
             strstr(err.msg, "agentrt-console-test-no-such") != NULL,
         "send_fd: a missing socket is an error naming it (%s)", err.msg);
  close(fd);
  close(conn);
  close(srv);
  unlink(path);
  rmdir(dir);
}

static void test_size(int master)
{
  struct winsize ws = {0};
  bool set = console_set_size(master, 40, 132) == 0 && ioctl(master, TIOCGWINSZ, &ws) == 0;

  tap_ok(set && ws.ws_row == 40 && ws.ws_col == 132, "set_size: 40x132 (%ux%u)", ws.ws_row,
         ws.ws_col);
}

/* In a child: the pty becomes the controlling terminal and fds 0-2. */
static void test_make_stdio(int master)
{
  int peer = ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
  pid_t pid;
  int st = -1;

  if (!tap_ok(peer >= 0, "make_stdio: TIOCGPTPEER"))
    return;
  pid = fork();
  if (pid == 0) {
    struct error err = {0};
    int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);

    dup2(devnull, 1); /* keep the test output clean */
    if (console_make_stdio(peer, &err) < 0)
      _exit(2);
    _exit(isatty(0) && isatty(1) && isatty(2) && tcgetsid(0) == getpid() ? 0 : 3);
  }
  waitpid(pid, &st, 0);
  tap_ok(WIFEXITED(st) && WEXITSTATUS(st) == 0,
         "make_stdio: new session, controlling tty, fds 0-2 (status %d)", st);
  close(peer);
}

int main(void)
{
  int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);

  if (!tap_ok(master >= 0 && unlockpt(master) == 0, "posix_openpt"))
    return tap_done();
  test_send_fd(master);
  test_size(master);
  test_make_stdio(master);
  close(master);
  return tap_done();
}
