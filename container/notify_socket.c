/* notify_socket.c - sd_notify passed through (see notify_socket.h).
 *
 * The engine sets NOTIFY_SOCKET in the runtime's environment.  create binds
 * the state directory's notify/ read-only at /run/notify in the container and
 * gives its process NOTIFY_SOCKET=/run/notify/notify.sock; start (run, in
 * one go) binds that socket before the program runs and waits, as runc
 * does, until the program says READY= or is gone, then tells the engine
 * READY=1 and MAINPID and waits for its BARRIER=1 to be answered (at most
 * 30 s), as runc does.  Only that line goes through: the socket is the
 * container's, its other datagrams (and any descriptors: recv without a
 * control buffer drops them) stay here. */
#include "container/notify_socket.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"
#include "os/pid.h"

#define NOTIFY_TICK_MS 100
#define NOTIFY_PER_TICK 16
#define NOTIFY_BARRIER_MS 30000

const char *notify_socket_host(void)
{
  const char *s = getenv("NOTIFY_SOCKET");

  return s != NULL && *s != '\0' ? s : NULL;
}

int notify_socket_bind(int dirfd, struct error *err)
{
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  cleanup_close int fd = -1;
  mode_t old;
  int r;

  /* through /proc/self/fd: a long --root does not reach sun_path's limit */
  snprintf(sa.sun_path, sizeof sa.sun_path, "/proc/self/fd/%d/" NOTIFY_STATE_DIR "/notify.sock",
           dirfd);
  fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return error_errno(err, "notify socket: socket");
  if (unlinkat(dirfd, NOTIFY_STATE_DIR "/notify.sock", 0) < 0 && errno != ENOENT)
    return error_errno(err, "notify socket: remove the old one");
  /* 0777 from its birth for the container's users, whoever they are: a
   * chmod by name afterwards would follow what the container put there */
  old = umask(0);
  r = bind(fd, (struct sockaddr *)&sa, sizeof sa);
  umask(old);
  if (r < 0)
    return error_errno(err, "notify socket: bind");
  return take_fd(&fd);
}

/* Has the datagram a line READY=1 (any of its lines, as sd_notify sends them)? */
static bool says_ready(char *buf)
{
  for (char *line = buf, *nl; line != NULL && *line != '\0'; line = nl) {
    nl = strchr(line, '\n');
    if (nl != NULL)
      *nl++ = '\0';
    if (strcmp(line, "READY=1") == 0)
      return true;
  }
  return false;
}

/* A datagram socket connected to the engine's (path, or @abstract as
 * sd_notify reads it). */
static int connect_host(const char *host, struct error *err)
{
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  size_t n = strlen(host);
  cleanup_close int fd = -1;

  if (n >= sizeof sa.sun_path)
    return error_set(err, ENAMETOOLONG, "NOTIFY_SOCKET `%s`", host);
  memcpy(sa.sun_path, host, n);
  if (host[0] == '@')
    sa.sun_path[0] = '\0';
  fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || connect(fd, (struct sockaddr *)&sa,
                        (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n)) < 0)
    return error_errno(err, "NOTIFY_SOCKET `%s`", host);
  return take_fd(&fd);
}

static int send_host(int fd, const char *host, const char *msg, struct error *err)
{
  if (send(fd, msg, strlen(msg), MSG_NOSIGNAL) < 0)
    return error_errno(err, "NOTIFY_SOCKET `%s`: send", host);
  return 0;
}

static long long now_ms(void)
{
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* notify-barrier: sd_notify_barrier(3), as runc: BARRIER=1 with the write
 * end of a pipe, which the engine (systemd) closes once it has handled what
 * came before.  Without it, we could exit before systemd read MAINPID, and
 * it drops a message whose sender is gone.  At most NOTIFY_BARRIER_MS; a
 * receiver that reads without taking descriptors closes it at once. */
static int notify_barrier(int hfd, const char *host, struct error *err)
{
  static const char msg[] = "BARRIER=1";
  union {
    struct cmsghdr h;
    char buf[CMSG_SPACE(sizeof(int))];
  } ctl = {0};
  struct iovec iov = {.iov_base = (void *)msg, .iov_len = sizeof msg - 1};
  struct msghdr mh = {
      .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof ctl.buf};
  struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
  cleanup_close int rfd = -1;
  int p[2], r;
  ssize_t sent;

  if (pipe2(p, O_CLOEXEC) < 0)
    return error_errno(err, "NOTIFY_SOCKET `%s`: barrier: pipe", host);
  rfd = p[0];
  cm->cmsg_level = SOL_SOCKET;
  cm->cmsg_type = SCM_RIGHTS;
  cm->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(cm), &p[1], sizeof(int));
  sent = sendmsg(hfd, &mh, MSG_NOSIGNAL);
  close(p[1]);
  if (sent < 0)
    return error_errno(err, "NOTIFY_SOCKET `%s`: send BARRIER=1", host);
  do {
    struct pollfd pf = {.fd = rfd, .events = POLLIN};
    r = poll(&pf, 1, NOTIFY_BARRIER_MS);
  } while (r < 0 && errno == EINTR);
  if (r == 0)
    return error_set(err, 0, "NOTIFY_SOCKET `%s`: BARRIER=1 not answered in %d s", host,
                     NOTIFY_BARRIER_MS / 1000);
  return 0;
}

int notify_socket_relay(int fd, const char *host, pid_t pid, uint64_t start_time, pid_t mainpid,
                        struct error *err)
{
  char buf[4097], pidmsg[32];
  cleanup_close int hfd = connect_host(host, err); /* first, as runc: none, no wait */
  long long tick_end = now_ms() + NOTIFY_TICK_MS;
  int in_tick = 0;
  bool ready = false;

  if (hfd < 0)
    return -1;
  while (!ready) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    long long now = now_ms();
    ssize_t n;
    int r;

    /* notify-flood: the container's datagrams are read a bounded number a
     * tick (the sender waits on the full socket), and the init is looked
     * at every tick, a flood or not (another process may send) */
    if (now >= tick_end || in_tick >= NOTIFY_PER_TICK) {
      if (now < tick_end)
        poll(NULL, 0, (int)(tick_end - now));
      if (!proc_alive(pid, start_time))
        return 0;
      tick_end = now_ms() + NOTIFY_TICK_MS;
      in_tick = 0;
    }
    r = poll(&p, 1, (int)(tick_end > now ? tick_end - now : 0));
    if (r < 0 && errno != EINTR)
      return error_errno(err, "notify socket: poll");
    if (r <= 0)
      continue;
    n = recv(fd, buf, sizeof buf - 1, MSG_DONTWAIT);
    in_tick++;
    if (n < 0)
      continue;
    buf[n] = '\0';
    ready = says_ready(buf);
  }
  /* two datagrams, as runc sends them, then its barrier */
  snprintf(pidmsg, sizeof pidmsg, "MAINPID=%d\n", (int)mainpid);
  if (send_host(hfd, host, "READY=1\n", err) < 0 || send_host(hfd, host, pidmsg, err) < 0)
    return -1;
  return notify_barrier(hfd, host, err);
}
