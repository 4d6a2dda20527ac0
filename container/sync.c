/* sync.c - see sync.h */
#include "container/sync.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "container/process.h"

int sync_send(int sock, int type, int fd, struct error *err)
{
  struct sync_msg m = {.type = type};
  struct iovec iov = {.iov_base = &m, .iov_len = offsetof(struct sync_msg, msg) + 1};
  union {
    char buf[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } u;
  struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};

  if (fd >= 0) {
    struct cmsghdr *cm;
    memset(&u, 0, sizeof u);
    mh.msg_control = u.buf;
    mh.msg_controllen = sizeof u.buf;
    cm = CMSG_FIRSTHDR(&mh);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cm), &fd, sizeof(int));
  }
  while (sendmsg(sock, &mh, MSG_NOSIGNAL) < 0) {
    if (errno != EINTR)
      return error_errno(err, "sync: send");
  }
  return 0;
}

int sync_send_code(int sock, int type, int code, struct error *err)
{
  struct sync_msg m = {.type = type, .code = code};

  while (send(sock, &m, offsetof(struct sync_msg, msg) + 1, MSG_NOSIGNAL) < 0) {
    if (errno != EINTR)
      return error_errno(err, "sync: send");
  }
  return 0;
}

int sync_send_error(int sock, const struct error *e)
{
  struct sync_msg m = {.type = SYNC_ERROR, .code = e->code};
  size_t n = strnlen(e->msg, sizeof m.msg - 1);
  memcpy(m.msg, e->msg, n);
  m.msg[n] = '\0';
  return send(sock, &m, offsetof(struct sync_msg, msg) + n + 1, MSG_NOSIGNAL) < 0 ? -1 : 0;
}

int sync_recv(int sock, struct sync_msg *m, int *ret_fd, struct error *err)
{
  struct iovec iov = {.iov_base = m, .iov_len = sizeof *m};
  union {
    char buf[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } u;
  struct msghdr mh = {
      .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf};
  ssize_t n;
  int resets = 0;

  if (ret_fd)
    *ret_fd = -1;
  memset(m, 0, sizeof *m);
  /* A peer that closed with a message of ours unread (an init that failed
   * with START already queued) makes the kernel report ECONNRESET once,
   * ahead of what the peer sent before it closed: read on. */
  /* create-cancelled: the init's setup is not waited for past a cancel */
  for (;;) {
    struct pollfd p = {.fd = sock, .events = POLLIN};
    if (process_cancel_poll(&p, 1, -1) < 0 && errno == EINTR && process_cancelled())
      return process_cancel_error(err);
    n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
    if (n >= 0 || !(errno == EINTR || (errno == ECONNRESET && resets++ == 0)))
      break;
  }
  if (n < 0)
    return error_errno(err, "sync: receive");
  if (n == 0)
    return 0;
  m->msg[sizeof m->msg - 1] = '\0';
  for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
    if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
      int fd;
      memcpy(&fd, CMSG_DATA(cm), sizeof fd);
      if (ret_fd && *ret_fd < 0)
        *ret_fd = fd;
      else
        close(fd);
    }
  }
  return 1;
}

static int sync_expect_full(int sock, int type, int *ret_fd, int *ret_code, struct error *err);

int sync_expect(int sock, int type, int *ret_fd, struct error *err)
{
  int code;
  (void)code;
  return sync_expect_full(sock, type, ret_fd, &code, err);
}

int sync_expect_code(int sock, int type, int *ret_code, struct error *err)
{
  return sync_expect_full(sock, type, NULL, ret_code, err);
}

static int sync_expect_full(int sock, int type, int *ret_fd, int *ret_code, struct error *err)
{
  struct sync_msg m;
  int r = sync_recv(sock, &m, ret_fd, err);

  if (r < 0)
    return -1;
  if (r == 0)
    return error_set(err, 0, "sync: peer exited");
  if (m.type == SYNC_ERROR) {
    error_set(err, 0, "%s", m.msg);
    err->code = m.code;
    return -1;
  }
  if (m.type != type)
    return error_set(err, 0, "sync: unexpected message %d (wanted %d)", m.type, type);
  *ret_code = m.code;
  return 0;
}
