/* console.c - the container's pty and /dev/console.
 *
 * The pty comes from the container's own devpts instance ("/dev/pts/ptmx"
 * inside the rootfs, checked to be a devpts character device before it is
 * opened for real).  The peer end is obtained with ioctl(TIOCGPTPEER), never
 * by opening "/dev/pts/N" by name, and is bind-mounted onto /dev/console
 * through the fds: CVE-2025-52565 swapped /dev/pts/N (or /dev/console) for a
 * symlink to a procfs file so that the runtime mounted that file writable
 * in the container.  /dev/console is created with O_CREAT|O_NOFOLLOW and a
 * symlink there is an error.
 */
#include "container/console.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>

#include "common/util.h"
#include "container/mounts.h"
#include "os/procfs.h"
#include "os/safepath.h"

static bool fd_is_devpts_chr(int fd)
{
  struct statfs sfs;
  struct stat st;

  return fstatfs(fd, &sfs) == 0 && sfs.f_type == DEVPTS_SUPER_MAGIC && fstat(fd, &st) == 0 &&
         S_ISCHR(st.st_mode);
}

/* The master from the container's devpts; verified before the real open so
 * that a FIFO or a host file planted at the name is never opened. */
static int open_master(int rootfd, struct error *err)
{
  cleanup_close int path = safe_openat(rootfd, "/dev/pts/ptmx", O_PATH | O_NOFOLLOW, 0, err);
  int fd;

  if (path < 0)
    return error_prefix(err, "terminal (is devpts mounted on /dev/pts?)");
  if (!fd_is_devpts_chr(path))
    return error_set(err, 0, "terminal: `/dev/pts/ptmx` is not a devpts device");
  fd = procfs_reopen(path, O_RDWR | O_NOCTTY, err);
  if (fd < 0)
    return error_prefix(err, "terminal: open `/dev/pts/ptmx`");
  return fd;
}

static int open_peer(int master, struct error *err)
{
  int unlock = 0;
  int peer;

  if (ioctl(master, TIOCSPTLCK, &unlock) < 0)
    return error_errno(err, "terminal: unlockpt");
  peer = ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (peer < 0)
    return error_errno(err, "terminal: open pty peer (TIOCGPTPEER)");
  if (!fd_is_devpts_chr(peer)) {
    close(peer);
    return error_set(err, 0, "terminal: pty peer is not on devpts");
  }
  return peer;
}

/* An O_PATH fd of /dev/console, created as an empty file when missing. */
static int console_target(int rootfd, struct error *err)
{
  cleanup_close int dev = safe_walk(rootfd, "/dev", SAFE_OPEN, true, err);
  struct stat st;
  int fd;

  if (dev < 0)
    return -1;
  if (fstat(dev, &st) < 0 || !S_ISDIR(st.st_mode))
    return error_set(err, 0, "`/dev` in the rootfs is not a directory (a symlink?)");
  fd =
      openat(dev, "console", O_CREAT | O_EXCL | O_NOFOLLOW | O_WRONLY | O_NOCTTY | O_CLOEXEC, 0600);
  if (fd >= 0)
    close(fd);
  else if (errno != EEXIST)
    return error_errno(err, "create `/dev/console`");
  fd = openat(dev, "console", O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return error_errno(err, "open `/dev/console`");
  if (fstat(fd, &st) < 0 || !(S_ISREG(st.st_mode) || S_ISCHR(st.st_mode))) {
    close(fd);
    return error_set(err, 0,
                     "`/dev/console` in the rootfs is a symlink or not a file (CVE-2025-52565)");
  }
  return fd;
}

int console_setup(struct setup_ctx *ctx, struct error *err)
{
  const struct oci_process *p = ctx->config->process;
  cleanup_close int master = -1;
  cleanup_close int peer = -1;
  cleanup_close int target = -1;

  master = open_master(ctx->rootfd, err);
  if (master < 0)
    return -1;
  peer = open_peer(master, err);
  if (peer < 0)
    return -1;
  if (p->has_console_size && console_set_size(master, p->console_height, p->console_width) < 0)
    return error_errno(err, "terminal: set window size");
  target = console_target(ctx->rootfd, err);
  if (target < 0)
    return -1;
  if (mnt_bind_fd(peer, target, false, "pty", "/dev/console", err) < 0)
    return -1;
  ctx->pty_master_fd = take_fd(&master);
  ctx->pty_peer_fd = take_fd(&peer);
  return 0;
}

int console_make_stdio(int fd, struct error *err)
{
  if (setsid() < 0 && getsid(0) != getpid())
    return error_errno(err, "terminal: setsid");
  if (ioctl(fd, TIOCSCTTY, 0) < 0)
    return error_errno(err, "terminal: set controlling terminal");
  for (int i = 0; i <= 2; i++)
    if (fd != i && dup2(fd, i) < 0)
      return error_errno(err, "terminal: dup2 onto fd %d", i);
  if (fd > 2)
    close(fd);
  return 0;
}

int console_set_size(int fd, unsigned int height, unsigned int width)
{
  struct winsize ws = {.ws_row = (unsigned short)height, .ws_col = (unsigned short)width};

  return ioctl(fd, TIOCSWINSZ, &ws);
}

static void pty_name(int master, char *buf, size_t n)
{
  unsigned int num;

  if (ioctl(master, TIOCGPTN, &num) == 0)
    snprintf(buf, n, "/dev/pts/%u", num);
  else
    snprintf(buf, n, "agentrt-pty");
}

void console_clear_onlcr(int master_fd)
{
  struct termios tio;

  if (tcgetattr(master_fd, &tio) == 0 && (tio.c_oflag & ONLCR)) {
    tio.c_oflag &= ~(tcflag_t)ONLCR;
    tcsetattr(master_fd, TCSANOW, &tio);
  }
}

/* Connect and send; the connected socket is returned (to see the receiver's close). */
static int send_master(const char *socket_path, int master_fd, struct error *err)
{
  struct sockaddr_un addr = {.sun_family = AF_UNIX};
  union {
    struct cmsghdr hdr;
    char buf[CMSG_SPACE(sizeof(int))];
  } control;
  char name[64];
  struct iovec iov;
  struct msghdr msg = {0};
  struct cmsghdr *cmsg;
  cleanup_close int sock = -1;
  ssize_t n;

  if (strlen(socket_path) >= sizeof addr.sun_path)
    return error_set(err, ENAMETOOLONG, "console socket `%s`", socket_path);
  memcpy(addr.sun_path, socket_path, strlen(socket_path) + 1);
  sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (sock < 0)
    return error_errno(err, "console socket `%s`: socket", socket_path);
  if (connect(sock, (struct sockaddr *)&addr, sizeof addr) < 0)
    return error_errno(err, "connect to console socket `%s`", socket_path);
  pty_name(master_fd, name, sizeof name);
  iov.iov_base = name;
  iov.iov_len = strlen(name);
  memset(&control, 0, sizeof control);
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control.buf;
  msg.msg_controllen = sizeof control.buf;
  cmsg = CMSG_FIRSTHDR(&msg);
  cmsg->cmsg_level = SOL_SOCKET;
  cmsg->cmsg_type = SCM_RIGHTS;
  cmsg->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(cmsg), &master_fd, sizeof(int));
  do
    n = sendmsg(sock, &msg, MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return error_errno(err, "send pty to console socket `%s`", socket_path);
  if ((size_t)n != iov.iov_len)
    return error_set(err, EIO, "send pty to console socket `%s`: short write", socket_path);
  return take_fd(&sock);
}

int console_send_fd(const char *socket_path, int master_fd, struct error *err)
{
  int sock = send_master(socket_path, master_fd, err);

  if (sock < 0)
    return -1;
  close(sock);
  return 0;
}

/* console-receiver-drops-master: the receivers we know (containerd's shim, conmon, runc's
 * recvtty) take the master and close the connection at once; one that closes the master as
 * well hangs up the container's terminal and its init dies of SIGHUP.  We wait (bounded) for
 * the receiver to close the connection, drop our own copy of the master, and look at the
 * terminal through a peer fd of ours: hung up = no master is left anywhere.  A receiver that
 * keeps the connection past the wait is not judged (create succeeds, as before). */
#define HAND_OVER_WAIT_MS 200

int console_hand_over(const char *socket_path, int *master_fd, struct error *err)
{
  int peer = ioctl(*master_fd, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
  int sock = send_master(socket_path, *master_fd, err);
  struct pollfd p;
  bool closed;

  if (sock < 0) {
    if (peer >= 0)
      close(peer);
    return -1;
  }
  p = (struct pollfd){.fd = sock, .events = POLLIN | POLLRDHUP};
  closed = poll(&p, 1, HAND_OVER_WAIT_MS) > 0 && (p.revents & (POLLHUP | POLLRDHUP));
  close(sock);
  close(*master_fd);
  *master_fd = -1;
  if (peer < 0)
    return 0;
  p = (struct pollfd){.fd = peer, .events = POLLIN};
  if (closed && poll(&p, 1, 0) > 0 && (p.revents & POLLHUP)) {
    close(peer);
    return error_set(err, 0, "console socket `%s`: the receiver closed the pty master",
                     socket_path);
  }
  close(peer);
  return 0;
}
