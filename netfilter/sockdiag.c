/* sockdiag.c - end the sockets of a network namespace that the egress
 * policy no longer allows (live `deny`, expiry of a pinned address).
 *
 * The ruleset judges every packet of the container's own flows, so a flow
 * that lost its allow rule can send nothing more; this makes the end prompt
 * for the process too: its TCP and connected UDP sockets to such peers are
 * destroyed (SOCK_DESTROY: the process sees ECONNABORTED, a TCP peer gets a
 * reset) instead of hanging until a timeout.  The NETLINK_SOCK_DIAG socket
 * was made inside the container's netns (netns_sockets), so only that
 * namespace's sockets are ever seen.
 */
#include "netfilter/egress.h"

#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"

#define DIAG_MAX_SOCKS 4096
#define DIAG_BUF 32768
#define DIAG_TIMEOUT_MS 1000

struct found {
  struct inet_diag_msg m;
  uint8_t proto;
};

static const uint32_t TCP_STATES = (1u << TCP_ESTABLISHED) | (1u << TCP_SYN_SENT) |
                                   (1u << TCP_SYN_RECV) | (1u << TCP_FIN_WAIT1) |
                                   (1u << TCP_FIN_WAIT2) | (1u << TCP_CLOSE_WAIT);

static int diag_send(int fd, uint16_t type, uint16_t flags, uint32_t seq,
                     const struct inet_diag_req_v2 *req)
{
  struct {
    struct nlmsghdr h;
    struct inet_diag_req_v2 r;
  } msg = {
      .h = {.nlmsg_len = sizeof msg, .nlmsg_type = type, .nlmsg_flags = flags, .nlmsg_seq = seq},
      .r = *req};

  return send(fd, &msg, sizeof msg, 0) == (ssize_t)sizeof msg ? 0 : -1;
}

static long ms_now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Receive until NLMSG_DONE or the ack of seq; dump messages go to found. */
static int diag_recv(int fd, uint32_t seq, uint8_t proto, struct found *f, size_t *n,
                     struct error *err)
{
  cleanup_free uint8_t *buf = xmalloc(DIAG_BUF);
  long deadline = ms_now() + DIAG_TIMEOUT_MS;

  for (;;) {
    struct pollfd pfd = {.fd = fd, .events = POLLIN};
    long left = deadline - ms_now();
    ssize_t len;
    if (left <= 0 || poll(&pfd, 1, (int)left) <= 0)
      return error_set(err, ETIMEDOUT, "sock_diag: no answer");
    len = recv(fd, buf, DIAG_BUF, MSG_DONTWAIT);
    if (len < 0 && (errno == EAGAIN || errno == EINTR))
      continue;
    if (len <= 0)
      return error_errno(err, "sock_diag: recv");
    for (struct nlmsghdr *h = (void *)buf; NLMSG_OK(h, (size_t)len); h = NLMSG_NEXT(h, len)) {
      if (h->nlmsg_seq != seq)
        continue;
      if (h->nlmsg_type == NLMSG_DONE)
        return 0;
      if (h->nlmsg_type == NLMSG_ERROR) {
        const struct nlmsgerr *e = NLMSG_DATA(h);
        if (h->nlmsg_len < NLMSG_LENGTH(sizeof *e))
          return error_set(err, EPROTO, "sock_diag: short error");
        return e->error == 0 ? 0 : error_set(err, -e->error, "sock_diag");
      }
      if (f != NULL && *n < DIAG_MAX_SOCKS && h->nlmsg_len >= NLMSG_LENGTH(sizeof f->m)) {
        memcpy(&f[*n].m, NLMSG_DATA(h), sizeof f->m);
        f[(*n)++].proto = proto;
      }
    }
  }
}

/* The peer of a socket, IPv4-mapped IPv6 as IPv4; false when it has none
 * worth judging (unconnected, loopback). */
static bool peer_of(const struct found *f, struct egress_sock *ret)
{
  static const uint8_t mapped[12] = {[10] = 0xff, [11] = 0xff};
  const uint8_t *a = (const uint8_t *)f->m.id.idiag_dst;

  memset(ret, 0, sizeof *ret);
  ret->proto = f->proto;
  ret->port = ntohs(f->m.id.idiag_dport);
  if (f->m.idiag_family == AF_INET6 && memcmp(a, mapped, 12) == 0) {
    ret->family = AF_INET;
    memcpy(ret->addr, a + 12, 4);
  } else {
    ret->family = f->m.idiag_family;
    memcpy(ret->addr, a, f->m.idiag_family == AF_INET ? 4 : 16);
  }
  if (ret->port == 0)
    return false;
  if (ret->family == AF_INET)
    return ret->addr[0] != 127 && memcmp(ret->addr, "\0\0\0\0", 4) != 0;
  return !(memcmp(ret->addr, (const uint8_t[16]){[15] = 1}, 16) == 0 ||
           memcmp(ret->addr, (const uint8_t[16]){0}, 16) == 0);
}

int egress_sockets_cut(int diag_fd, bool (*keep)(void *ud, const struct egress_sock *s), void *ud,
                       size_t *ret_cut, struct error *err)
{
  static const int families[2] = {AF_INET, AF_INET6};
  static const uint8_t protos[2] = {IPPROTO_TCP, IPPROTO_UDP};
  cleanup_free struct found *f = xmalloc(DIAG_MAX_SOCKS * sizeof *f);
  static uint32_t seq;
  size_t n = 0, cut = 0;
  int r = 0;

  *ret_cut = 0;
  for (int i = 0; i < 2; i++) {
    for (int j = 0; j < 2; j++) {
      struct inet_diag_req_v2 req = {.sdiag_family = (uint8_t)families[i],
                                     .sdiag_protocol = protos[j],
                                     .idiag_states = j == 0 ? TCP_STATES : 1u << TCP_ESTABLISHED};
      if (diag_send(diag_fd, SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST | NLM_F_DUMP, ++seq, &req) < 0)
        return error_errno(err, "sock_diag: dump");
      if (diag_recv(diag_fd, seq, protos[j], f, &n, err) < 0)
        return -1;
    }
  }
  for (size_t i = 0; i < n; i++) {
    struct egress_sock s;
    struct inet_diag_req_v2 req = {.sdiag_family = f[i].m.idiag_family,
                                   .sdiag_protocol = f[i].proto,
                                   .idiag_states = ~0u,
                                   .id = f[i].m.id};
    struct error e = {0};
    if (!peer_of(&f[i], &s) || keep(ud, &s))
      continue;
    if (diag_send(diag_fd, SOCK_DESTROY, NLM_F_REQUEST | NLM_F_ACK, ++seq, &req) < 0 ||
        diag_recv(diag_fd, seq, 0, NULL, NULL, &e) < 0) {
      if (e.code != ENOENT && r == 0) /* gone meanwhile: fine */
        r = error_set(err, e.code ? e.code : errno, "sock_diag: destroy: %s", e.msg);
      continue;
    }
    cut++;
  }
  *ret_cut = cut;
  return r;
}
