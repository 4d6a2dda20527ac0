/* seccomp_notify.c - see seccomp_notify.h. */
#include "container/seccomp_notify.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/util.h"
#include "oci/json.h"

int seccomp_listener_connect(const struct oci_seccomp *s, struct error *err)
{
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  int fd;

  if (!oci_seccomp_uses_notify(s))
    return -2;
  if (s->listener_path == NULL || strlen(s->listener_path) >= sizeof sa.sun_path)
    return error_set(err, 0, "seccomp: listenerPath `%s`: missing or too long",
                     s->listener_path ? s->listener_path : "");
  memcpy(sa.sun_path, s->listener_path, strlen(s->listener_path) + 1);
  fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return error_errno(err, "seccomp: listenerPath: socket");
  if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
    error_errno(err, "seccomp: failed to connect with seccomp agent at listenerPath `%s`",
                s->listener_path);
    close(fd);
    return -1;
  }
  return fd;
}

char *seccomp_listener_msg(const struct oci_seccomp *s, const char *id, const char *status,
                           pid_t pid, const char *bundle, const struct oci_kv *annotations,
                           size_t n_annotations)
{
  struct jgen j;
  struct error e = {0};
  char *out = NULL;
  size_t len = 0;

  jgen_init(&j, false);
  jg_open(&j);
  jg_kstr(&j, "ociVersion", "1.2.0");
  jg_key(&j, "fds");
  jg_aopen(&j);
  jg_str(&j, "seccompFd");
  jg_aclose(&j);
  jg_ki64(&j, "pid", pid);
  jg_kstr(&j, "metadata", s->listener_metadata ? s->listener_metadata : "");
  jg_key(&j, "state");
  jg_open(&j);
  jg_kstr(&j, "ociVersion", "1.2.0");
  jg_kstr(&j, "id", id);
  jg_kstr(&j, "status", status);
  jg_ki64(&j, "pid", pid);
  jg_kstr(&j, "bundle", bundle);
  if (n_annotations > 0)
    jg_kkv(&j, "annotations", annotations, n_annotations);
  jg_close(&j);
  jg_close(&j);
  if (jgen_finish(&j, "seccomp listener state", &out, &len, &e) < 0)
    return NULL;
  return out;
}

int seccomp_listener_send(int sock, const char *msg, int notify_fd, struct error *err)
{
  char cbuf[CMSG_SPACE(sizeof(int))] = {0};
  struct iovec iov = {.iov_base = (void *)msg, .iov_len = strlen(msg)};
  struct msghdr mh = {
      .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
  struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
  ssize_t n;

  cm->cmsg_level = SOL_SOCKET;
  cm->cmsg_type = SCM_RIGHTS;
  cm->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(cm), &notify_fd, sizeof(int));
  do
    n = sendmsg(sock, &mh, MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return error_errno(err, "seccomp: send the listener fd to listenerPath");
  if ((size_t)n != iov.iov_len)
    return error_set(err, 0, "seccomp: listenerPath: short write (%zd of %zu bytes)", n,
                     iov.iov_len);
  return 0;
}
