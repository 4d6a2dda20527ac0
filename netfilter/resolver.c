/* resolver.c - the per-container DNS proxy that pins allowed names to IPs.
 *
 * Single-threaded poll loop.  Client sockets (UDP/TCP on 127.0.0.1 and ::1
 * inside the container netns; the ruleset redirects every port-53 packet to
 * them) were made by egress_resolver_open; upstream sockets are made here,
 * in the caller's netns (the host's), so the container never talks to the
 * upstream itself.  For an allowed name the query is rebuilt from the parsed
 * question only (no client EDNS options or extra records reach upstream: no
 * DNS exfiltration), the answer's CNAME chain is followed from the question,
 * private addresses are dropped (DNS rebinding), and the addresses left are
 * added to the dns sets with the clamped TTL as timeout BEFORE the client
 * gets the answer.
 */
#include "netfilter/dns.h"
#include "netfilter/egress.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>

#include "common/util.h"

#define MAX_PENDING 64
#define MAX_CONNS 16
#define TCP_IDLE_MS 5000
#define MAX_LEARN 256
#define MAX_MATCH 8
#define RX_BUF 65536

struct client {
  bool tcp;
  int fd; /* UDP socket or TCP connection */
  unsigned conn_serial;
  struct sockaddr_storage peer;
  socklen_t peer_len;
};

struct pending {
  bool used;
  uint16_t up_id;
  unsigned tries;
  long deadline;
  struct client c;
  struct dns_msg *q; /* header and question only */
};

struct conn {
  int fd;
  unsigned serial;
  long deadline;
  bool busy; /* query dispatched: wait for its reply */
  size_t len;
  uint8_t buf[2 + DNS_UDP_MAX];
};

struct rstate {
  const struct egress_resolver_opts *o;
  int up[2]; /* AF_INET, AF_INET6 upstream sockets */
  struct pending pend[MAX_PENDING];
  struct conn conns[MAX_CONNS];
  unsigned serial;
  struct dns_msg *scratch;
  uint8_t *rx, *tx;
};

static long now_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static uint16_t random_id(void)
{
  uint16_t v = 0;
  if (getrandom(&v, sizeof v, GRND_NONBLOCK) != sizeof v)
    v = (uint16_t)(now_ms() * 2654435761u >> 7);
  return v;
}

static void emit(struct rstate *s, enum egress_dns_verdict v, const struct dns_msg *q,
                 const struct nft_learned *l, size_t n, const char *detail)
{
  struct egress_dns_event ev = {v, q->qname, q->qtype, n, l, detail};
  if (s->o->on_event != NULL)
    s->o->on_event(s->o->ud, &ev);
}

/* ---------------------------------------------------------------- replies */

static void conn_close(struct conn *c)
{
  if (c->fd >= 0)
    close(c->fd);
  c->fd = -1;
  c->len = 0;
  c->busy = false;
}

static struct conn *conn_of(struct rstate *s, const struct client *c)
{
  for (size_t i = 0; i < MAX_CONNS; i++)
    if (s->conns[i].fd == c->fd && s->conns[i].serial == c->conn_serial)
      return &s->conns[i];
  return NULL; /* closed meanwhile */
}

static void send_reply(struct rstate *s, const struct client *c, const uint8_t *buf, int len)
{
  struct conn *conn;
  uint8_t hdr[2] = {(uint8_t)(len >> 8), (uint8_t)len};
  struct iovec iov[2] = {{hdr, 2}, {(void *)buf, (size_t)len}};
  struct msghdr msg = {.msg_iov = iov, .msg_iovlen = 2};

  if (len < 0)
    return;
  if (!c->tcp) {
    sendto(c->fd, buf, (size_t)len, MSG_DONTWAIT, (const struct sockaddr *)&c->peer, c->peer_len);
    return;
  }
  conn = conn_of(s, c);
  if (conn == NULL)
    return;
  sendmsg(conn->fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
  conn_close(conn); /* one query per connection */
}

static void reply_rcode(struct rstate *s, const struct client *c, const struct dns_msg *q, int rc)
{
  struct error err;
  size_t max = c->tcp ? 65535 : DNS_UDP_MAX;
  send_reply(s, c, s->tx, dns_build_response(s->tx, max, q, rc, NULL, 0, &err));
}

/* ---------------------------------------------------------------- queries */

static struct pending *pending_new(struct rstate *s)
{
  for (size_t i = 0; i < MAX_PENDING; i++)
    if (!s->pend[i].used)
      return &s->pend[i];
  return NULL;
}

static int upstream_send(struct rstate *s, struct pending *p)
{
  const struct egress_policy *pol = s->o->policy;
  const struct egress_upstream *u = &pol->upstream[p->tries % pol->n_upstream];
  struct sockaddr_storage ss = {0};
  socklen_t sl;
  struct error err;
  int len, fd = s->up[u->family == AF_INET6];

  if (u->family == AF_INET) {
    struct sockaddr_in *a = (struct sockaddr_in *)&ss;
    a->sin_family = AF_INET;
    a->sin_port = htons(u->port);
    memcpy(&a->sin_addr, u->addr, 4);
    sl = sizeof *a;
  } else {
    struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
    a->sin6_family = AF_INET6;
    a->sin6_port = htons(u->port);
    memcpy(&a->sin6_addr, u->addr, 16);
    sl = sizeof *a;
  }
  p->up_id = random_id();
  p->tries++;
  p->deadline = now_ms() + (s->o->upstream_timeout_ms ? s->o->upstream_timeout_ms : 2000);
  len = dns_build_query(s->tx, RX_BUF, p->up_id, p->q->qname, p->q->qtype, &err);
  if (fd < 0 || len < 0)
    return -1;
  return sendto(fd, s->tx, (size_t)len, MSG_DONTWAIT, (struct sockaddr *)&ss, sl) < 0 ? -1 : 0;
}

static void handle_query(struct rstate *s, const uint8_t *buf, size_t len, const struct client *c)
{
  struct dns_msg *q = s->scratch;
  const struct egress_entry *m[MAX_MATCH];
  struct pending *p;
  struct error err;

  if (dns_parse(buf, len, q, &err) < 0) {
    int id = dns_peek_id(buf, len);
    if (id >= 0)
      send_reply(s, c, s->tx, dns_build_error(s->tx, DNS_UDP_MAX, (uint16_t)id, DNS_RCODE_FORMERR));
    return;
  }
  if ((q->flags & DNS_FLAG_QR) || DNS_OPCODE(q->flags) != 0 || q->qclass != DNS_CLASS_IN) {
    reply_rcode(s, c, q, DNS_RCODE_NOTIMP);
    return;
  }
  if (egress_policy_match_name(s->o->policy, q->qname, m, MAX_MATCH) == 0) {
    emit(s, EGRESS_DNS_REFUSED, q, NULL, 0, NULL);
    reply_rcode(s, c, q, DNS_RCODE_NXDOMAIN);
    return;
  }
  if (q->qtype != DNS_TYPE_A && q->qtype != DNS_TYPE_AAAA && q->qtype != DNS_TYPE_CNAME) {
    emit(s, EGRESS_DNS_NODATA, q, NULL, 0, NULL);
    reply_rcode(s, c, q, DNS_RCODE_NOERROR);
    return;
  }
  p = pending_new(s);
  if (p == NULL || s->o->policy->n_upstream == 0) {
    emit(s, EGRESS_DNS_FAILED, q, NULL, 0, p ? "no upstream resolver" : "too many queries");
    reply_rcode(s, c, q, DNS_RCODE_SERVFAIL);
    return;
  }
  memset(p, 0, offsetof(struct pending, q));
  p->used = true;
  p->c = *c;
  memcpy(p->q, q, offsetof(struct dns_msg, answers));
  p->q->n_answers = 0;
  if (upstream_send(s, p) < 0) {
    p->used = false;
    emit(s, EGRESS_DNS_FAILED, q, NULL, 0, "cannot send to upstream");
    reply_rcode(s, c, q, DNS_RCODE_SERVFAIL);
  }
}

/* --------------------------------------------------------------- answers */

static bool in_chain(char chain[][DNS_NAME_BUF], size_t n, const char *name)
{
  for (size_t i = 0; i < n; i++)
    if (strcasecmp(chain[i], name) == 0)
      return true;
  return false;
}

/* Keep the CNAME chain from the question and the addresses of its names;
 * returns the count kept in out, sets *rebind when private ones were cut. */
static size_t filter_answers(struct rstate *s, const struct dns_msg *q, const struct dns_msg *a,
                             struct dns_rr *out, bool *rebind)
{
  static char chain[9][DNS_NAME_BUF];
  const struct egress_policy *pol = s->o->policy;
  size_t nc = 1, n = 0;

  snprintf(chain[0], DNS_NAME_BUF, "%s", q->qname);
  for (bool grew = true; grew && nc < 9;) {
    grew = false;
    for (size_t i = 0; i < a->n_answers && nc < 9; i++) {
      const struct dns_rr *rr = &a->answers[i];
      if (rr->type != DNS_TYPE_CNAME || !in_chain(chain, nc, rr->name) ||
          in_chain(chain, nc, rr->data.target))
        continue;
      snprintf(chain[nc++], DNS_NAME_BUF, "%s", rr->data.target);
      out[n++] = *rr;
      grew = true;
    }
  }
  for (size_t i = 0; i < a->n_answers; i++) {
    const struct dns_rr *rr = &a->answers[i];
    size_t alen = rr->type == DNS_TYPE_A ? 4 : 16;
    if (rr->type != q->qtype || rr->type == DNS_TYPE_CNAME || !in_chain(chain, nc, rr->name))
      continue;
    if (!pol->allow_private_answers && egress_addr_is_private(rr->data.addr, alen) &&
        !egress_policy_allows_addr(pol, rr->data.addr, alen)) {
      *rebind = true; /* DNS rebinding: an allowed name pointing inside */
      continue;
    }
    out[n++] = *rr;
  }
  return n;
}

static size_t learn_one(const struct dns_rr *rr, const struct egress_entry *e, uint32_t tmo,
                        struct nft_learned *l, size_t n)
{
  static const uint8_t both[2] = {IPPROTO_TCP, IPPROTO_UDP};
  size_t k = e->port_min == 0 ? 1 : e->proto != 0 ? 1 : 2;

  for (size_t j = 0; j < k && n < MAX_LEARN; j++) {
    struct nft_learned x = {0};
    x.family = rr->type == DNS_TYPE_A ? AF_INET : AF_INET6;
    memcpy(x.addr, rr->data.addr, x.family == AF_INET ? 4 : 16);
    if (e->port_min != 0) {
      x.proto = e->proto != 0 ? e->proto : both[j];
      x.port = e->port_min;
    }
    x.timeout_ms = tmo;
    l[n++] = x;
  }
  return n;
}

/* Clamp TTLs, build the set elements; returns how many. */
static size_t pin(struct rstate *s, const struct dns_msg *q, struct dns_rr *rr, size_t n,
                  struct nft_learned *l)
{
  const struct egress_policy *pol = s->o->policy;
  const struct egress_entry *m[MAX_MATCH];
  size_t nm = egress_policy_match_name(pol, q->qname, m, MAX_MATCH), nl = 0;

  if (nm > MAX_MATCH)
    nm = MAX_MATCH;
  for (size_t i = 0; i < n; i++) {
    uint32_t t = rr[i].ttl;
    t = t < pol->ttl_min ? pol->ttl_min : t > pol->ttl_max ? pol->ttl_max : t;
    if (rr[i].ttl > t)
      rr[i].ttl = t; /* the client may not cache longer than the pin lives */
    if (rr[i].type == DNS_TYPE_CNAME)
      continue;
    for (size_t j = 0; j < nm; j++)
      nl = learn_one(&rr[i], m[j], (t ? t : 1) * 1000u, l, nl);
  }
  return nl;
}

static void finish(struct rstate *s, struct pending *p, const struct dns_msg *a)
{
  static struct dns_rr kept[DNS_MAX_ANSWERS];
  static struct nft_learned l[MAX_LEARN];
  size_t max = p->c.tcp ? 65535 : DNS_UDP_MAX, n, nl;
  bool rebind = false;
  struct error err;
  int rc = DNS_RCODE(a->flags);

  p->used = false;
  if (rc != DNS_RCODE_NOERROR) {
    emit(s, rc == DNS_RCODE_NXDOMAIN ? EGRESS_DNS_ALLOWED : EGRESS_DNS_FAILED, p->q, NULL, 0,
         rc == DNS_RCODE_NXDOMAIN ? "upstream: no such name" : "upstream error");
    reply_rcode(s, &p->c, p->q, rc == DNS_RCODE_NXDOMAIN ? rc : DNS_RCODE_SERVFAIL);
    return;
  }
  n = filter_answers(s, p->q, a, kept, &rebind);
  nl = pin(s, p->q, kept, n, l);
  if (rebind && nl == 0) {
    emit(s, EGRESS_DNS_REBIND, p->q, NULL, 0, "answer points at a private address");
    reply_rcode(s, &p->c, p->q, DNS_RCODE_REFUSED);
    return;
  }
  if (nl > 0) {
    struct nft_batch_buf b;
    int r = nft_build_learn(l, nl, (uint32_t)random_id() << 8, &b, &err);
    if (r == 0)
      r = nft_batch_send(s->o->nl_fd, &b, &err);
    if (r == 0)
      nft_batch_buf_free(&b);
    if (r < 0) {
      emit(s, EGRESS_DNS_FAILED, p->q, l, nl, err.msg);
      reply_rcode(s, &p->c, p->q, DNS_RCODE_SERVFAIL);
      return;
    }
  }
  emit(s, EGRESS_DNS_ALLOWED, p->q, l, nl, rebind ? "private addresses dropped" : NULL);
  send_reply(s, &p->c, s->tx,
             dns_build_response(s->tx, max, p->q, DNS_RCODE_NOERROR, kept, n, &err));
}

static bool from_upstream(const struct egress_policy *pol, const struct sockaddr_storage *ss)
{
  for (size_t i = 0; i < pol->n_upstream; i++) {
    const struct egress_upstream *u = &pol->upstream[i];
    const struct sockaddr_in *a = (const void *)ss;
    const struct sockaddr_in6 *a6 = (const void *)ss;
    if (u->family == AF_INET && ss->ss_family == AF_INET && ntohs(a->sin_port) == u->port &&
        memcmp(&a->sin_addr, u->addr, 4) == 0)
      return true;
    if (u->family == AF_INET6 && ss->ss_family == AF_INET6 && ntohs(a6->sin6_port) == u->port &&
        memcmp(&a6->sin6_addr, u->addr, 16) == 0)
      return true;
  }
  return false;
}

static void handle_upstream(struct rstate *s, int fd)
{
  struct sockaddr_storage ss;
  socklen_t sl = sizeof ss;
  struct dns_msg *a = s->scratch;
  struct error err;
  ssize_t len = recvfrom(fd, s->rx, RX_BUF, MSG_DONTWAIT, (struct sockaddr *)&ss, &sl);

  if (len <= 0 || !from_upstream(s->o->policy, &ss) || dns_parse(s->rx, (size_t)len, a, &err) < 0)
    return; /* spoofed, stray or malformed: the timeout answers SERVFAIL */
  if (!(a->flags & DNS_FLAG_QR))
    return;
  for (size_t i = 0; i < MAX_PENDING; i++) {
    struct pending *p = &s->pend[i];
    if (p->used && p->up_id == a->id && p->q->qtype == a->qtype &&
        strcasecmp(p->q->qname, a->qname) == 0) {
      finish(s, p, a);
      return;
    }
  }
}

/* ----------------------------------------------------------------- loop */

static void handle_udp(struct rstate *s, int fd)
{
  struct client c = {.tcp = false, .fd = fd, .peer_len = sizeof c.peer};
  ssize_t len = recvfrom(fd, s->rx, RX_BUF, MSG_DONTWAIT, (struct sockaddr *)&c.peer, &c.peer_len);

  if (len > 0)
    handle_query(s, s->rx, (size_t)len, &c);
}

static void handle_accept(struct rstate *s, int lfd)
{
  int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

  if (fd < 0)
    return;
  for (size_t i = 0; i < MAX_CONNS; i++) {
    struct conn *c = &s->conns[i];
    if (c->fd >= 0)
      continue;
    c->fd = fd;
    c->serial = ++s->serial;
    c->len = 0;
    c->busy = false;
    c->deadline = now_ms() + TCP_IDLE_MS;
    return;
  }
  close(fd); /* too many connections */
}

static void handle_conn(struct rstate *s, struct conn *c)
{
  ssize_t n = read(c->fd, c->buf + c->len, sizeof c->buf - c->len);
  size_t need;

  if (n <= 0) {
    if (n == 0 || (errno != EAGAIN && errno != EINTR))
      conn_close(c);
    return;
  }
  c->len += (size_t)n;
  if (c->len < 2)
    return;
  need = (size_t)(c->buf[0] << 8 | c->buf[1]);
  if (need > DNS_UDP_MAX || need == 0) {
    conn_close(c);
    return;
  }
  if (c->len >= need + 2) {
    struct client cl = {.tcp = true, .fd = c->fd, .conn_serial = c->serial};
    c->busy = true;
    handle_query(s, c->buf + 2, need, &cl);
  }
}

static void expire(struct rstate *s, long now)
{
  for (size_t i = 0; i < MAX_PENDING; i++) {
    struct pending *p = &s->pend[i];
    if (!p->used || p->deadline > now)
      continue;
    if (p->tries < s->o->policy->n_upstream && upstream_send(s, p) == 0)
      continue; /* next upstream */
    p->used = false;
    emit(s, EGRESS_DNS_FAILED, p->q, NULL, 0, "upstream timeout");
    reply_rcode(s, &p->c, p->q, DNS_RCODE_SERVFAIL);
  }
  for (size_t i = 0; i < MAX_CONNS; i++)
    if (s->conns[i].fd >= 0 && s->conns[i].deadline <= now)
      conn_close(&s->conns[i]);
}

static int next_timeout(const struct rstate *s, long now)
{
  long t = now + 1000;
  for (size_t i = 0; i < MAX_PENDING; i++)
    if (s->pend[i].used && s->pend[i].deadline < t)
      t = s->pend[i].deadline;
  return t > now ? (int)(t - now) : 0;
}

enum { FD_STOP, FD_CTL, FD_AUX, FD_UDP4, FD_UDP6, FD_TCP4, FD_TCP6, FD_UP4, FD_UP6, FD_CONN0 };

static int loop_once(struct rstate *s, struct error *err)
{
  const struct egress_resolver_opts *o = s->o;
  struct pollfd pfd[FD_CONN0 + MAX_CONNS];
  int fds[FD_CONN0] = {o->stop_fd, o->ctl_fd,  o->on_aux ? o->aux_fd : -1,
                       o->udp4_fd, o->udp6_fd, o->tcp4_fd,
                       o->tcp6_fd, s->up[0],   s->up[1]};

  for (int i = 0; i < FD_CONN0; i++)
    pfd[i] = (struct pollfd){.fd = fds[i], .events = POLLIN};
  for (int i = 0; i < MAX_CONNS; i++)
    pfd[FD_CONN0 + i] =
        (struct pollfd){.fd = s->conns[i].fd, .events = s->conns[i].busy ? 0 : POLLIN};
  if (poll(pfd, FD_CONN0 + MAX_CONNS, next_timeout(s, now_ms())) < 0)
    return errno == EINTR ? 0 : error_errno(err, "resolver: poll");
  if (pfd[FD_STOP].revents)
    return 1;
  if (pfd[FD_CTL].revents && o->on_ctl != NULL && o->on_ctl(o->ud, o->policy) < 0)
    return error_set(err, 0, "resolver: control request failed");
  if (pfd[FD_AUX].revents && o->on_aux != NULL && o->on_aux(o->aux_ud) > 0)
    return 1;
  for (int i = FD_UP4; i <= FD_UP6; i++)
    if (pfd[i].revents & POLLIN)
      handle_upstream(s, pfd[i].fd);
  for (int i = FD_UDP4; i <= FD_UDP6; i++)
    if (pfd[i].revents & POLLIN)
      handle_udp(s, pfd[i].fd);
  for (int i = FD_TCP4; i <= FD_TCP6; i++)
    if (pfd[i].revents & POLLIN)
      handle_accept(s, pfd[i].fd);
  for (int i = 0; i < MAX_CONNS; i++)
    if (pfd[FD_CONN0 + i].revents && s->conns[i].fd >= 0)
      handle_conn(s, &s->conns[i]);
  expire(s, now_ms());
  return 0;
}

static void state_free(struct rstate *s)
{
  for (size_t i = 0; i < MAX_PENDING; i++)
    free(s->pend[i].q);
  for (size_t i = 0; i < MAX_CONNS; i++)
    conn_close(&s->conns[i]);
  for (int i = 0; i < 2; i++)
    if (s->up[i] >= 0)
      close(s->up[i]);
  free(s->scratch);
  free(s->rx);
  free(s->tx);
}

int egress_resolver_run(const struct egress_resolver_opts *o, struct error *err)
{
  struct rstate s;
  int r = 0;

  memset(&s, 0, sizeof s);
  s.o = o;
  s.up[0] = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  s.up[1] = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (s.up[0] < 0 && s.up[1] < 0)
    return error_errno(err, "resolver: upstream socket");
  for (size_t i = 0; i < MAX_PENDING; i++)
    s.pend[i].q = xmalloc(sizeof *s.pend[i].q);
  for (size_t i = 0; i < MAX_CONNS; i++)
    s.conns[i].fd = -1;
  s.scratch = xmalloc(sizeof *s.scratch);
  s.rx = xmalloc(RX_BUF);
  s.tx = xmalloc(RX_BUF);
  while ((r = loop_once(&s, err)) == 0)
    ;
  state_free(&s);
  return r < 0 ? -1 : 0;
}
