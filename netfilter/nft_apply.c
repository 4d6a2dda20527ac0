/* nft_apply.c - send a batch into a container's netns and check every ack.
 *
 * Each object message carries NLM_F_ACK, so the kernel answers every one of
 * them (0 or an errno) after the batch is committed or aborted; we wait for
 * all of them (bounded by a timeout) so that the socket is clean for the
 * next batch, and report the first failure with its object and sequence.
 */
#include "netfilter/nft_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <libnftnl/common.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "common/util.h"

#define ACK_TIMEOUT_MS 3000
#define RECV_BUF 65536

int nft_socket_setup(int fd, struct error *err)
{
  struct sockaddr_nl sa = {.nl_family = AF_NETLINK};
  int one = 1;

  /* acks carry only the header of the failed message, not all of it */
  setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof one);
  if (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0)
    return error_errno(err, "bind netfilter netlink socket");
  return 0;
}

int nft_socket_open(int netns_fd, struct error *err)
{
  int domain = AF_NETLINK, type = SOCK_RAW, proto = NETLINK_NETFILTER, fd = -1;

  if (netns_sockets(netns_fd, 1, &domain, &type, &proto, &fd, err) < 0)
    return -1;
  if (fd < 0)
    return error_errno(err, "netfilter netlink socket");
  if (nft_socket_setup(fd, err) < 0) {
    close(fd);
    return -1;
  }
  return fd;
}

static long now_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const struct nft_batch_msg *find_msg(const struct nft_batch_buf *b, uint32_t seq)
{
  if (b->n_msgs == 0 || seq < b->msgs[0].seq || seq - b->msgs[0].seq >= b->n_msgs)
    return NULL;
  return &b->msgs[seq - b->msgs[0].seq]; /* object messages have consecutive seqs */
}

struct ack_state {
  size_t acked;
  bool failed;
};

static void handle_ack(const struct nft_batch_buf *b, const struct nlmsghdr *nlh,
                       struct ack_state *st, struct error *err)
{
  const struct nlmsgerr *e = NLMSG_DATA(nlh);
  const struct nft_batch_msg *m = find_msg(b, nlh->nlmsg_seq);

  if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof *e))
    return;
  if (m == NULL && e->error == 0)
    return; /* stale ack of an earlier batch */
  st->acked += m != NULL;
  if (e->error == 0 || st->failed)
    return;
  st->failed = true;
  if (m != NULL)
    error_set(err, -e->error, "nftables: %s (seq %u)", m->what, m->seq);
  else
    error_set(err, -e->error, "nftables: batch (seq %u)", nlh->nlmsg_seq);
  if (m == NULL)
    st->acked = b->n_msgs; /* the batch itself was refused: nothing else comes */
}

/* Each ack is a datagram of its own: up to ACK_BATCH of them per call
 * (a batch of the egress policy is ~60 objects: 60 recv calls before). */
#define ACK_BATCH 32
#define ACK_SLOT (RECV_BUF / ACK_BATCH)

static int drain_acks(int fd, const struct nft_batch_buf *b, struct error *err)
{
  cleanup_free char *buf = xmalloc(RECV_BUF);
  struct mmsghdr mm[ACK_BATCH];
  struct iovec iov[ACK_BATCH];
  struct ack_state st = {0};
  long deadline = now_ms() + ACK_TIMEOUT_MS;

  while (st.acked < b->n_msgs) {
    struct pollfd pfd = {.fd = fd, .events = POLLIN};
    long left = deadline - now_ms();
    int n;
    memset(mm, 0, sizeof mm);
    for (int i = 0; i < ACK_BATCH; i++) {
      iov[i] = (struct iovec){.iov_base = buf + (size_t)i * ACK_SLOT, .iov_len = ACK_SLOT};
      mm[i].msg_hdr.msg_iov = &iov[i];
      mm[i].msg_hdr.msg_iovlen = 1;
    }
    /* acks are usually queued already */
    n = recvmmsg(fd, mm, ACK_BATCH, MSG_DONTWAIT, NULL);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) {
      if (left <= 0 || poll(&pfd, 1, (int)left) == 0)
        return error_set(err, ETIMEDOUT, "nftables: %zu of %zu acks", st.acked, b->n_msgs);
      continue;
    }
    if (n < 0)
      return error_errno(err, "nftables: receive acks");
    for (int i = 0; i < n; i++) {
      ssize_t len = (ssize_t)mm[i].msg_len;
      /* a datagram larger than its slot (not an ack of ours) is cut: only
       * whole messages in it are read */
      for (struct nlmsghdr *nlh = iov[i].iov_base; NLMSG_OK(nlh, (size_t)len);
           nlh = NLMSG_NEXT(nlh, len))
        if (nlh->nlmsg_type == NLMSG_ERROR)
          handle_ack(b, nlh, &st, err);
    }
  }
  return st.failed ? -1 : 0;
}

int nft_batch_send(int nl_fd, const struct nft_batch_buf *b, struct error *err)
{
  struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
  ssize_t n;

  if (b->len > 200000) {
    int size = (int)b->len * 2;
    setsockopt(nl_fd, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof size);
  }
  do
    n = sendto(nl_fd, b->data, b->len, 0, (struct sockaddr *)&kernel, sizeof kernel);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return error_errno(err, "nftables: send batch of %zu bytes", b->len);
  return drain_acks(nl_fd, b, err);
}

int nft_apply(int netns_fd, const struct nft_batch_buf *b, struct error *err)
{
  cleanup_close int fd = nft_socket_open(netns_fd, err);

  if (fd < 0)
    return -1;
  return nft_batch_send(fd, b, err);
}

int nft_table_delete(int netns_fd, struct error *err)
{
  struct nft_batch_buf b;
  int r;

  if (nft_build_table_delete(1, &b, err) < 0)
    return -1;
  r = nft_apply(netns_fd, &b, err);
  nft_batch_buf_free(&b);
  return r;
}

/* Sequence numbers of batches sent on long-lived sockets (resolver). */
static uint32_t next_seq(uint32_t n)
{
  static uint32_t seq;
  uint32_t r;

  if (seq == 0)
    seq = (uint32_t)time(NULL);
  r = seq;
  seq += n + 2;
  return r;
}

int nft_set_add_elem(int nl_fd, const struct nft_learned *l, struct error *err)
{
  struct nft_batch_buf b;
  int r;

  if (nft_build_learn(l, 1, next_seq(4), &b, err) < 0)
    return -1;
  r = nft_batch_send(nl_fd, &b, err);
  nft_batch_buf_free(&b);
  return r;
}

/* ------------------------------------------------------------- listing */

struct list_ctx {
  char *out;
  size_t len;
};

static void list_append(struct list_ctx *c, const char *s)
{
  size_t n = strlen(s);
  c->out = xrealloc(c->out, c->len + n + 2);
  memcpy(c->out + c->len, s, n);
  c->len += n;
  c->out[c->len++] = '\n';
  c->out[c->len] = '\0';
}

static int list_elem(struct nftnl_set_elem *e, void *data)
{
  uint32_t klen = 0, flags = 0;
  const uint8_t *k = nftnl_set_elem_get(e, NFTNL_SET_ELEM_KEY, &klen);
  char a[INET6_ADDRSTRLEN] = "?", line[160];
  size_t alen = klen == 4 || klen == 12 ? 4 : 16;
  int n;

  if (k == NULL)
    return 0;
  if (nftnl_set_elem_is_set(e, NFTNL_SET_ELEM_FLAGS))
    flags = nftnl_set_elem_get_u32(e, NFTNL_SET_ELEM_FLAGS);
  inet_ntop(alen == 4 ? AF_INET : AF_INET6, k, a, sizeof a);
  n = snprintf(line, sizeof line, "%s%s", a, flags & NFT_SET_ELEM_INTERVAL_END ? " end" : "");
  if (klen == alen + 8)
    n += snprintf(line + n, sizeof line - (size_t)n, " %s %u",
                  k[alen] == IPPROTO_TCP ? "tcp" : "udp", ntohs(*(const uint16_t *)(k + alen + 4)));
  if (nftnl_set_elem_is_set(e, NFTNL_SET_ELEM_EXPIRATION))
    snprintf(line + n, sizeof line - (size_t)n, " expires %llums",
             (unsigned long long)nftnl_set_elem_get_u64(e, NFTNL_SET_ELEM_EXPIRATION));
  list_append(data, line);
  return 0;
}

static int list_parse(const char *buf, ssize_t len, struct list_ctx *ctx, bool *done,
                      struct error *err)
{
  for (const struct nlmsghdr *nlh = (const void *)buf; NLMSG_OK(nlh, (size_t)len);
       nlh = NLMSG_NEXT(nlh, len)) {
    struct nftnl_set *s;
    if (nlh->nlmsg_type == NLMSG_DONE) {
      *done = true;
      return 0;
    }
    if (nlh->nlmsg_type == NLMSG_ERROR) {
      const struct nlmsgerr *e = NLMSG_DATA(nlh);
      return error_set(err, -e->error, "nftables: list set");
    }
    s = nftnl_set_alloc();
    if (s == NULL)
      abort();
    if (nftnl_set_elems_nlmsg_parse(nlh, s) == 0)
      nftnl_set_elem_foreach(s, list_elem, ctx);
    nftnl_set_free(s);
  }
  return 0;
}

int nft_set_list(int nl_fd, const char *set, char **ret, struct error *err)
{
  char req[512];
  cleanup_free char *buf = xmalloc(RECV_BUF);
  struct nftnl_set *s = nftnl_set_alloc();
  struct list_ctx ctx = {NULL, 0};
  struct nlmsghdr *nlh;
  bool done = false;
  long deadline = now_ms() + ACK_TIMEOUT_MS;

  if (s == NULL)
    abort();
  nftnl_set_set_str(s, NFTNL_SET_TABLE, NFT_TABLE_NAME);
  nftnl_set_set_str(s, NFTNL_SET_NAME, set);
  nlh = nftnl_nlmsg_build_hdr(req, NFT_MSG_GETSETELEM, NFPROTO_INET, NLM_F_DUMP | NLM_F_ACK,
                              next_seq(1));
  nftnl_set_elems_nlmsg_build_payload(nlh, s);
  nftnl_set_free(s);
  if (send(nl_fd, req, nlh->nlmsg_len, 0) < 0)
    return error_errno(err, "nftables: list set `%s`", set);
  while (!done) {
    struct pollfd pfd = {.fd = nl_fd, .events = POLLIN};
    long left = deadline - now_ms();
    ssize_t len;
    if (left <= 0 || poll(&pfd, 1, (int)left) == 0) {
      free(ctx.out);
      return error_set(err, ETIMEDOUT, "nftables: list set `%s`", set);
    }
    len = recv(nl_fd, buf, RECV_BUF, MSG_DONTWAIT);
    if ((len < 0 && errno != EINTR && errno != EAGAIN) ||
        (len > 0 && list_parse(buf, len, &ctx, &done, err) < 0)) {
      free(ctx.out);
      return len < 0 ? error_errno(err, "nftables: list set `%s`", set)
                     : error_prefix(err, "`%s`", set);
    }
  }
  *ret = ctx.out != NULL ? ctx.out : xstrdup("");
  return 0;
}
