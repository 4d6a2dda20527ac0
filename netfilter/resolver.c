/* resolver.c - the per-container DNS proxy that pins allowed names to IPs.
 *
 * Single-threaded poll loop.  Client sockets (UDP/TCP on 127.0.0.1 and ::1
 * inside the container netns; the ruleset redirects every port-53 packet to
 * them) were made by egress_resolver_open; upstream sockets are made here,
 * in the caller's netns (the host's), so the container never talks to the
 * upstream itself.  For an allowed name the query is rebuilt from the parsed
 * question only, its name in lower case (no client EDNS options, extra
 * records or 0x20 case bits reach upstream: no DNS exfiltration beyond the
 * choice of name and type), the answer's CNAME chain is followed from the question,
 * private addresses and the host's own are dropped (DNS rebinding), and the addresses left are
 * added to the dns sets with the clamped TTL as timeout BEFORE the client
 * gets the answer.
 *
 * Against cache poisoning each upstream query has its own socket, connected
 * to the upstream (the kernel drops datagrams from any other address or
 * port) and bound to a random ephemeral port, and a random id; the answer
 * must carry that id and echo the question.  A truncated answer (TC) is
 * asked again over TCP, on a non-blocking connection in the same loop.
 *
 * Budget: the resolver runs in the monitor, outside the container's cgroup,
 * and every lookup costs it a read, a parse and an answer.  A container held
 * to a quarter of a CPU that sent lookups in a loop made it spend more than
 * that, uncharged (egress.bats "dns-flood-cpu").  So the clients' sockets are
 * read within a token bucket (DNS_BURST lookups or connections at once, then
 * DNS_RATE a second): when it is empty they are not polled until DNS_RESUME
 * tokens are back, and the kernel drops what does not fit in their queues.
 * What a UDP socket dropped (SO_MEMINFO, looked at once a second while
 * lookups come, and at the end) is told to on_lost with a count.
 */
#include "netfilter/dns.h"
#include "netfilter/egress.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <fcntl.h>
#include <linux/sock_diag.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>

#include "common/token_bucket.h"
#include "common/util.h"
#include "os/memory.h"

#define MAX_PENDING 64
#define CHILD_PENDING 16    /* a sub-agent's queries in flight */
#define CHILDREN_PENDING 32 /* all sub-agents' together */
#define MAX_CONNS 16
#define TCP_IDLE_MS 5000
#define MAX_LEARN 256
#define MAX_MATCH 8
#define RX_BUF 65536
#define DNS_BURST 5000 /* lookups (UDP datagrams, TCP connections) read at once */
#define DNS_RATE 2000  /* then this many a second (~5 us each: ~1% of a CPU) */
#define DNS_RESUME 200 /* tokens an empty budget waits for */
#define UDP_BATCH 32   /* datagrams read from a socket a turn */

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
  int fd;        /* this query's upstream socket: UDP, or TCP after a truncated answer */
  bool tcp;      /* fd is the TCP retry */
  bool tcp_sent; /* the TCP query is written: wait for the answer */
  size_t tcp_len;
  struct sockaddr_storage up; /* the upstream asked */
  socklen_t up_len;
  struct client c;
  /* kept across uses (not cleared with the fields above) */
  struct dns_msg *q; /* header and question only; made at the first use */
  uint8_t *tcp_buf;  /* 2 + 65535, made at the first TCP retry */
};

struct conn {
  int fd;
  unsigned serial;
  struct sockaddr_storage peer;
  socklen_t peer_len;
  long deadline;
  bool busy;   /* query dispatched: wait for its reply */
  size_t qlen; /* bytes of buf the dispatched query takes */
  size_t len;
  uint8_t buf[2 + DNS_UDP_MAX];
};

/* pend[0..n_pend) and conns[0..n_conns) have been used: the loop looks no
 * further, so an idle resolver's state (~32 KiB, in pages of its own)
 * stays mostly untouched, not resident */
struct rstate {
  const struct egress_resolver_opts *o;
  struct pending pend[MAX_PENDING];
  struct conn conns[MAX_CONNS];
  size_t n_pend, n_conns;
  unsigned serial;
  struct dns_msg *scratch;
  uint8_t *rx, *tx;
  struct token_bucket budget; /* lookups read */
  bool paused;                /* the budget is spent: the clients are not polled */
  bool busy;                  /* a lookup was read since the drops were looked at */
  long drops_at;              /* when they were */
  uint32_t drops[2];          /* the UDP sockets' drops counted so far */
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
  c->len = c->qlen = 0;
  c->busy = false;
}

/* The dispatched query is answered: the next one the client wrote on the
 * connection (glibc writes its A and AAAA queries together and reads two
 * answers, RFC 7766's pipelining) is dispatched by the loop. */
static void conn_next(struct conn *c)
{
  memmove(c->buf, c->buf + c->qlen, c->len - c->qlen);
  c->len -= c->qlen;
  c->qlen = 0;
  c->busy = false;
  c->deadline = now_ms() + TCP_IDLE_MS;
}

static struct conn *conn_of(struct rstate *s, const struct client *c)
{
  for (size_t i = 0; i < s->n_conns; i++)
    if (s->conns[i].fd == c->fd && s->conns[i].serial == c->conn_serial)
      return &s->conns[i];
  return NULL; /* closed meanwhile */
}

/* A UDP answer leaves from the loopback address the (redirected) query came to,
 * named per packet: a socket bound to 127.0.0.1 with IP_FREEBIND before the
 * container's `lo` was up has no source address of its own, and the kernel
 * would pick the outgoing interface's, which conntrack cannot map back to the
 * resolver the program asked, so glibc's stub resolver (which checks where
 * the answer comes from) would never see it. */
static void send_udp_reply(const struct client *c, const uint8_t *buf, int len)
{
  union {
    char b[CMSG_SPACE(sizeof(struct in6_pktinfo))];
    struct cmsghdr align;
  } ctl;
  struct iovec iov = {(void *)buf, (size_t)len};
  struct msghdr msg = {.msg_name = (void *)&c->peer,
                       .msg_namelen = c->peer_len,
                       .msg_iov = &iov,
                       .msg_iovlen = 1,
                       .msg_control = ctl.b};
  struct cmsghdr *cm;

  memset(&ctl, 0, sizeof ctl);
  if (c->peer.ss_family == AF_INET6) {
    struct in6_pktinfo pi = {.ipi6_addr = IN6ADDR_LOOPBACK_INIT};
    msg.msg_controllen = CMSG_SPACE(sizeof pi);
    cm = CMSG_FIRSTHDR(&msg);
    cm->cmsg_level = IPPROTO_IPV6;
    cm->cmsg_type = IPV6_PKTINFO;
    cm->cmsg_len = CMSG_LEN(sizeof pi);
    memcpy(CMSG_DATA(cm), &pi, sizeof pi);
  } else {
    struct in_pktinfo pi = {.ipi_spec_dst.s_addr = htonl(INADDR_LOOPBACK)};
    msg.msg_controllen = CMSG_SPACE(sizeof pi);
    cm = CMSG_FIRSTHDR(&msg);
    cm->cmsg_level = IPPROTO_IP;
    cm->cmsg_type = IP_PKTINFO;
    cm->cmsg_len = CMSG_LEN(sizeof pi);
    memcpy(CMSG_DATA(cm), &pi, sizeof pi);
  }
  if (sendmsg(c->fd, &msg, MSG_DONTWAIT) < 0 && (errno == EINVAL || errno == EADDRNOTAVAIL))
    sendto(c->fd, buf, (size_t)len, MSG_DONTWAIT, (const struct sockaddr *)&c->peer, c->peer_len);
}

static void send_reply(struct rstate *s, const struct client *c, const uint8_t *buf, int len)
{
  struct conn *conn;
  uint8_t hdr[2] = {(uint8_t)(len >> 8), (uint8_t)len};
  struct iovec iov[2] = {{hdr, 2}, {(void *)buf, (size_t)len}};
  struct msghdr msg = {.msg_iov = iov, .msg_iovlen = 2};

  if (!c->tcp) {
    if (len >= 0)
      send_udp_reply(c, buf, len);
    return;
  }
  conn = conn_of(s, c);
  if (conn == NULL)
    return;
  /* an answer cut short (the client does not read) spoils the stream */
  if (len < 0 || sendmsg(conn->fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL) != len + 2)
    conn_close(conn);
  else
    conn_next(conn);
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
  for (size_t i = 0; i < s->n_pend; i++)
    if (!s->pend[i].used)
      return &s->pend[i];
  if (s->n_pend == MAX_PENDING)
    return NULL;
  s->pend[s->n_pend].fd = -1;
  return &s->pend[s->n_pend++];
}

static void pending_close_fd(struct pending *p)
{
  if (p->fd >= 0)
    close(p->fd);
  p->fd = -1;
  p->tcp = p->tcp_sent = false;
  p->tcp_len = 0;
}

static void pending_done(struct pending *p)
{
  pending_close_fd(p);
  p->used = false;
}

/* A sub-agent's resolver asks its parent's on loopback from an address of its
 * own, 127.N.x.y from its pid (N >= 1: never 127.0.0.1, which the parent's
 * programs use): the parent's resolver tells each child's queries apart by
 * it and holds each child to a share (sub-dns-share). */
static int bind_child_source(int fd, const struct sockaddr_storage *up)
{
  const struct sockaddr_in *u = (const void *)up;
  struct sockaddr_in a = {.sin_family = AF_INET};
  uint32_t pid = (uint32_t)getpid();

  if (up == NULL || up->ss_family != AF_INET || (ntohl(u->sin_addr.s_addr) >> 24) != 127)
    return 0; /* the parent has no resolver: its own nameservers */
  a.sin_addr.s_addr = htonl(127u << 24 | (1 + (pid >> 16 & 0x7f)) << 16 | (pid & 0xffff));
  return bind(fd, (struct sockaddr *)&a, sizeof a);
}

/* A sub-agent's query: from 127.0.0.0/8 but 127.0.0.1 (bind_child_source). */
static bool from_child(const struct sockaddr_storage *peer)
{
  const struct sockaddr_in *a = (const void *)peer;
  uint32_t v = ntohl(a->sin_addr.s_addr);

  return peer->ss_family == AF_INET && v >> 24 == 127 && v != INADDR_LOOPBACK;
}

/* socket(2) in the upstream netns when there is one (a sub-agent's resolver
 * asks its parent's in the parent's namespace, from bind_child_source's
 * address; up NULL: none), else in ours. */
static int upstream_socket(const struct rstate *s, int family, int type,
                           const struct sockaddr_storage *up)
{
  int fd, e, own;

  if (!s->o->has_upstream_netns)
    return socket(family, type, 0);
  own = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  if (own < 0)
    return -1;
  if (setns(s->o->upstream_netns_fd, CLONE_NEWNET) < 0) {
    close(own);
    return -1;
  }
  fd = socket(family, type, 0);
  if (fd >= 0 && bind_child_source(fd, up) < 0) {
    close(fd);
    fd = -1;
  }
  e = errno;
  if (setns(own, CLONE_NEWNET) < 0) {
    /* cannot come back: the resolver must not go on in the wrong netns */
    abort();
  }
  close(own);
  errno = e;
  return fd;
}

/* The upstream query's name: the question's in lower case.  The case of
 * its letters is the client's to choose (0x20), and the upstream and every
 * server after it would read it: a bit per letter of an allowed name, a
 * channel out with no wildcard needed.  The client's answer keeps its
 * question as it was asked. */
static int build_upstream_query(uint8_t *buf, size_t cap, const struct pending *p,
                                struct error *err)
{
  char name[DNS_NAME_BUF];
  size_t i;

  for (i = 0; p->q->qname[i] != '\0' && i < sizeof name - 1; i++)
    name[i] = (char)tolower((unsigned char)p->q->qname[i]);
  name[i] = '\0';
  return dns_build_query(buf, cap, p->up_id, name, p->q->qtype, err);
}

static long upstream_deadline(const struct rstate *s)
{
  return now_ms() + (s->o->upstream_timeout_ms ? s->o->upstream_timeout_ms : 2000);
}

/* A fresh socket of its own per query, connected to the next upstream:
 * random source port (the kernel's ephemeral choice), random id. */
static int upstream_send(struct rstate *s, struct pending *p)
{
  const struct egress_policy *pol = s->o->policy;
  const struct egress_upstream *u = &pol->upstream[p->tries % pol->n_upstream];
  struct error err;
  int len;

  pending_close_fd(p);
  memset(&p->up, 0, sizeof p->up);
  if (u->family == AF_INET) {
    struct sockaddr_in *a = (struct sockaddr_in *)&p->up;
    a->sin_family = AF_INET;
    a->sin_port = htons(u->port);
    memcpy(&a->sin_addr, u->addr, 4);
    p->up_len = sizeof *a;
  } else {
    struct sockaddr_in6 *a = (struct sockaddr_in6 *)&p->up;
    a->sin6_family = AF_INET6;
    a->sin6_port = htons(u->port);
    memcpy(&a->sin6_addr, u->addr, 16);
    p->up_len = sizeof *a;
  }
  p->up_id = random_id();
  p->tries++;
  p->deadline = upstream_deadline(s);
  len = build_upstream_query(s->tx, RX_BUF, p, &err);
  if (len < 0)
    return -1;
  p->fd = upstream_socket(s, u->family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, &p->up);
  if (p->fd < 0 || connect(p->fd, (struct sockaddr *)&p->up, p->up_len) < 0)
    return -1;
  return send(p->fd, s->tx, (size_t)len, MSG_DONTWAIT) < 0 ? -1 : 0;
}

/* The UDP answer was truncated: ask the same upstream over TCP. */
static int upstream_tcp(struct rstate *s, struct pending *p)
{
  pending_close_fd(p);
  if (p->tcp_buf == NULL)
    p->tcp_buf = xmalloc(2 + 65535);
  p->deadline = upstream_deadline(s);
  p->fd = upstream_socket(s, p->up.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, &p->up);
  if (p->fd < 0)
    return -1;
  p->tcp = true;
  if (connect(p->fd, (struct sockaddr *)&p->up, p->up_len) < 0 && errno != EINPROGRESS)
    return -1;
  return 0;
}

/* Is there a slot for one more query of this sub-agent's?  Each child may
 * have CHILD_PENDING upstream queries in flight, all of them together
 * CHILDREN_PENDING: the rest of MAX_PENDING is the container's own, so a
 * child whose names never get an answer cannot leave its parent (or a
 * sibling) without lookups (sub-dns-share). */
static bool child_share_left(const struct rstate *s, const struct sockaddr_storage *peer)
{
  const struct sockaddr_in *me = (const void *)peer;
  size_t mine = 0, all = 0;

  for (size_t i = 0; i < s->n_pend; i++) {
    const struct pending *p = &s->pend[i];
    if (!p->used || !from_child(&p->c.peer))
      continue;
    all++;
    if (((const struct sockaddr_in *)&p->c.peer)->sin_addr.s_addr == me->sin_addr.s_addr)
      mine++;
  }
  return mine < CHILD_PENDING && all < CHILDREN_PENDING;
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
  if (from_child(&c->peer) && !child_share_left(s, &c->peer)) {
    emit(s, EGRESS_DNS_FAILED, q, NULL, 0, "a sub-agent's share of queries in flight is used");
    reply_rcode(s, c, q, DNS_RCODE_SERVFAIL);
    return;
  }
  p = pending_new(s);
  if (p == NULL || s->o->policy->n_upstream == 0) {
    emit(s, EGRESS_DNS_FAILED, q, NULL, 0, p ? "no upstream resolver" : "too many queries");
    reply_rcode(s, c, q, DNS_RCODE_SERVFAIL);
    return;
  }
  memset(p, 0, offsetof(struct pending, q));
  p->fd = -1;
  p->used = true;
  p->c = *c;
  /* made at a slot's first use: 64 of them (16 KiB each, answers included)
   * made up front touched a page each in every idle monitor */
  if (p->q == NULL)
    p->q = xmalloc(sizeof *p->q);
  memcpy(p->q, q, offsetof(struct dns_msg, answers));
  p->q->n_answers = 0;
  if (upstream_send(s, p) < 0) {
    pending_done(p);
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

/* Is addr one of the host's own addresses (of the namespace the upstream
 * sockets are made in: the runtime's, or a sub-agent's parent's)?  A UDP
 * socket connected to an address of the host itself gets that address as its
 * source (IPv4: a local route's source is its destination; IPv6: "prefer the
 * same address").  An allowed name answered with the host's public address
 * (a name whose DNS someone else controls, or a wildcard's) would otherwise
 * be pinned like any public one, and the container reached every service the
 * host listens on there (SSH, an engine's API, a kubelet) through its own
 * link: DNS rebinding without a private address.  Fails closed: no socket
 * (but for a family the host does not have), no answer. */
static bool host_local(const struct rstate *s, const uint8_t *addr, size_t alen)
{
  struct sockaddr_storage to = {0}, me = {0};
  socklen_t tl, ml = sizeof me;
  bool local = false;
  int fd;

  if (alen == 4) {
    struct sockaddr_in *a = (struct sockaddr_in *)&to;
    a->sin_family = AF_INET;
    a->sin_port = htons(9);
    memcpy(&a->sin_addr, addr, 4);
    tl = sizeof *a;
  } else {
    struct sockaddr_in6 *a = (struct sockaddr_in6 *)&to;
    a->sin6_family = AF_INET6;
    a->sin6_port = htons(9);
    memcpy(&a->sin6_addr, addr, 16);
    tl = sizeof *a;
  }
  fd = upstream_socket(s, to.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, NULL);
  if (fd < 0)
    return errno != EAFNOSUPPORT; /* a host without IPv6 holds no IPv6 address */
  /* no route from the host: not one of its addresses */
  if (connect(fd, (struct sockaddr *)&to, tl) == 0 &&
      getsockname(fd, (struct sockaddr *)&me, &ml) == 0 && me.ss_family == to.ss_family)
    local = alen == 4 ? memcmp(&((struct sockaddr_in *)&me)->sin_addr, addr, 4) == 0
                      : memcmp(&((struct sockaddr_in6 *)&me)->sin6_addr, addr, 16) == 0;
  close(fd);
  return local;
}

/* An IPv6 answer that carries one of the host's IPv4 addresses (NAT64: with
 * DNS64 every IPv4-only name gets one, and the gateway takes the container
 * to that address; 6to4, mapped, ...): the host's own, as host_local. */
static bool embeds_host_local(const struct rstate *s, const uint8_t *addr)
{
  uint8_t v4[8][4];
  size_t n = egress_addr_embedded_v4(addr, v4, 8);

  for (size_t i = 0; i < n; i++)
    if (host_local(s, v4[i], 4))
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
    if (!pol->allow_private_answers &&
        (egress_addr_is_private(rr->data.addr, alen) || host_local(s, rr->data.addr, alen) ||
         (alen == 16 && embeds_host_local(s, rr->data.addr))) &&
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

  pending_done(p);
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

static bool same_addr(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
  const struct sockaddr_in *a4 = (const void *)a, *b4 = (const void *)b;
  const struct sockaddr_in6 *a6 = (const void *)a, *b6 = (const void *)b;

  if (a->ss_family != b->ss_family)
    return false;
  if (a->ss_family == AF_INET)
    return a4->sin_port == b4->sin_port && a4->sin_addr.s_addr == b4->sin_addr.s_addr;
  return a6->sin6_port == b6->sin6_port && memcmp(&a6->sin6_addr, &b6->sin6_addr, 16) == 0;
}

/* An answer for p: its id, from the upstream asked (the connected socket
 * already filters; checked again), echoing the question.  Anything else is
 * ignored: the real answer or the timeout follows. */
static void handle_answer(struct rstate *s, struct pending *p, const uint8_t *buf, size_t len)
{
  struct dns_msg *a = s->scratch;
  struct error err;
  uint16_t flags;

  if (len < 12 || dns_peek_id(buf, len) != p->up_id)
    return; /* spoofed or stray */
  flags = (uint16_t)(buf[2] << 8 | buf[3]);
  if (!(flags & DNS_FLAG_QR))
    return;
  if ((flags & DNS_FLAG_TC) && !p->tcp) {
    if (upstream_tcp(s, p) < 0)
      p->deadline = 0; /* next upstream, or SERVFAIL */
    return;
  }
  if (dns_parse(buf, len, a, &err) < 0 || a->qtype != p->q->qtype ||
      strcasecmp(a->qname, p->q->qname) != 0)
    return;
  finish(s, p, a);
}

static void handle_upstream_udp(struct rstate *s, struct pending *p)
{
  struct sockaddr_storage ss;
  socklen_t sl = sizeof ss;

  for (int i = 0; i < 8 && p->used && !p->tcp; i++) {
    ssize_t len = recvfrom(p->fd, s->rx, RX_BUF, MSG_DONTWAIT, (struct sockaddr *)&ss, &sl);
    if (len < 0)
      return;
    if (same_addr(&ss, &p->up))
      handle_answer(s, p, s->rx, (size_t)len);
  }
}

/* TCP retry: write the query once connected, then read the 2-byte length
 * and the answer.  A failure moves on like a timeout. */
static void handle_upstream_tcp(struct rstate *s, struct pending *p, short revents)
{
  struct error err;
  ssize_t n;

  if (!p->tcp_sent) {
    int e = 0, len;
    socklen_t el = sizeof e;
    if (getsockopt(p->fd, SOL_SOCKET, SO_ERROR, &e, &el) < 0 || e != 0)
      goto fail;
    p->up_id = random_id();
    len = build_upstream_query(s->tx + 2, RX_BUF - 2, p, &err);
    if (len < 0)
      goto fail;
    s->tx[0] = (uint8_t)(len >> 8);
    s->tx[1] = (uint8_t)len;
    if (send(p->fd, s->tx, (size_t)len + 2, MSG_DONTWAIT | MSG_NOSIGNAL) != len + 2)
      goto fail;
    p->tcp_sent = true;
    return;
  }
  n = read(p->fd, p->tcp_buf + p->tcp_len, 2 + 65535 - p->tcp_len);
  if (n < 0 && (errno == EAGAIN || errno == EINTR))
    return;
  if (n <= 0)
    goto fail;
  p->tcp_len += (size_t)n;
  if (p->tcp_len >= 2) {
    size_t need = (size_t)(p->tcp_buf[0] << 8 | p->tcp_buf[1]);
    if (p->tcp_len >= need + 2) {
      handle_answer(s, p, p->tcp_buf + 2, need);
      if (p->used)
        goto fail; /* a complete answer that is not the one: give up on it */
    }
  }
  (void)revents;
  return;
fail:
  pending_close_fd(p);
  p->deadline = 0;
}

/* ----------------------------------------------------------------- loop */

/* A token of the budget for one lookup read; none: the clients wait. */
static bool budget_take(struct rstate *s)
{
  if (token_bucket_take(&s->budget, now_ms()))
    return true;
  s->paused = true;
  return false;
}

/* Is there a token?  (taken only for what was read: a read that finds
 * nothing, at the end of every batch, costs none) */
static bool budget_ready(struct rstate *s)
{
  if (token_bucket_ready(&s->budget, now_ms()))
    return true;
  s->paused = true;
  return false;
}

static void handle_udp(struct rstate *s, int fd)
{
  for (int i = 0; i < UDP_BATCH && budget_ready(s); i++) {
    struct client c = {.tcp = false, .fd = fd, .peer_len = sizeof c.peer};
    ssize_t len =
        recvfrom(fd, s->rx, RX_BUF, MSG_DONTWAIT, (struct sockaddr *)&c.peer, &c.peer_len);
    if (len < 0)
      return;
    budget_take(s);
    s->busy = true;
    if (len > 0)
      handle_query(s, s->rx, (size_t)len, &c);
  }
}

/* Datagrams the kernel dropped at the UDP sockets since last time (their
 * queues were full: the budget spent, or the monitor held up), told to
 * on_lost: looked at once a second while lookups come, and at the end. */
static void count_drops(struct rstate *s, bool final)
{
  const int fds[2] = {s->o->udp4_fd, s->o->udp6_fd};
  uint64_t lost = 0;
  long now = now_ms();

  if (!final && (!s->busy || now - s->drops_at < 1000))
    return;
  s->busy = false;
  s->drops_at = now;
  for (int i = 0; i < 2; i++) {
    uint32_t mi[SK_MEMINFO_VARS] = {0};
    socklen_t l = sizeof mi;
    if (fds[i] < 0 || getsockopt(fds[i], SOL_SOCKET, SO_MEMINFO, mi, &l) < 0 ||
        l <= SK_MEMINFO_DROPS * sizeof mi[0])
      continue;
    lost += (uint32_t)(mi[SK_MEMINFO_DROPS] - s->drops[i]);
    s->drops[i] = mi[SK_MEMINFO_DROPS];
  }
  if (lost > 0 && s->o->on_lost != NULL)
    s->o->on_lost(s->o->ud, lost);
}

static void handle_accept(struct rstate *s, int lfd)
{
  struct sockaddr_storage peer = {0};
  socklen_t peer_len = sizeof peer;
  int fd;

  if (!budget_ready(s))
    return;
  fd = accept4(lfd, (struct sockaddr *)&peer, &peer_len, SOCK_CLOEXEC | SOCK_NONBLOCK);
  if (fd < 0)
    return;
  budget_take(s);
  s->busy = true;
  for (size_t i = 0; i <= s->n_conns && i < MAX_CONNS; i++) {
    struct conn *c = &s->conns[i];
    if (i == s->n_conns)
      s->n_conns++;
    else if (c->fd >= 0)
      continue;
    c->fd = fd;
    c->serial = ++s->serial;
    c->peer = peer;
    c->peer_len = peer_len;
    c->len = 0;
    c->busy = false;
    c->deadline = now_ms() + TCP_IDLE_MS;
    return;
  }
  close(fd); /* too many connections */
}

/* The queries the client wrote, one at a time: the next once the one before
 * is answered (each a token of the budget). */
static void conn_dispatch(struct rstate *s, struct conn *c)
{
  while (c->fd >= 0 && !c->busy && c->len >= 2) {
    size_t need = (size_t)(c->buf[0] << 8 | c->buf[1]);
    struct client cl = {.tcp = true,
                        .fd = c->fd,
                        .conn_serial = c->serial,
                        .peer = c->peer,
                        .peer_len = c->peer_len};
    if (need > DNS_UDP_MAX || need == 0) {
      conn_close(c);
      return;
    }
    if (c->len < need + 2 || !budget_take(s))
      return;
    c->busy = true;
    c->qlen = need + 2;
    handle_query(s, c->buf + 2, need, &cl);
  }
}

static void handle_conn(struct rstate *s, struct conn *c)
{
  ssize_t n;

  if (c->len == sizeof c->buf)
    return; /* a whole query is in: it waits for the one before */
  n = read(c->fd, c->buf + c->len, sizeof c->buf - c->len);
  if (n <= 0) {
    if (n == 0 || (errno != EAGAIN && errno != EINTR))
      conn_close(c);
    return;
  }
  c->len += (size_t)n;
  conn_dispatch(s, c);
}

static void expire(struct rstate *s, long now)
{
  for (size_t i = 0; i < s->n_pend; i++) {
    struct pending *p = &s->pend[i];
    if (!p->used || p->deadline > now)
      continue;
    if (p->tries < s->o->policy->n_upstream && upstream_send(s, p) == 0)
      continue; /* next upstream */
    pending_done(p);
    emit(s, EGRESS_DNS_FAILED, p->q, NULL, 0, "upstream timeout");
    reply_rcode(s, &p->c, p->q, DNS_RCODE_SERVFAIL);
  }
  for (size_t i = 0; i < s->n_conns; i++)
    if (s->conns[i].fd >= 0 && s->conns[i].deadline <= now)
      conn_close(&s->conns[i]);
}

static int next_timeout(struct rstate *s, long now)
{
  long t = now + 1000;
  for (size_t i = 0; i < s->n_pend; i++)
    if (s->pend[i].used && s->pend[i].deadline < t)
      t = s->pend[i].deadline;
  if (s->paused && now + token_bucket_wait_ms(&s->budget, DNS_RESUME, now) < t)
    t = now + token_bucket_wait_ms(&s->budget, DNS_RESUME, now);
  return t > now ? (int)(t - now) : 0;
}

enum { FD_STOP, FD_CTL, FD_AUX, FD_ROUTE, FD_UDP4, FD_UDP6, FD_TCP4, FD_TCP6, FD_CONN0 };
#define FD_PEND0 (FD_CONN0 + MAX_CONNS)
#define N_FDS (FD_PEND0 + MAX_PENDING)

static int loop_once(struct rstate *s, struct error *err)
{
  const struct egress_resolver_opts *o = s->o;
  struct pollfd pfd[N_FDS];
  long now = now_ms();
  bool held = s->paused && token_bucket_wait_ms(&s->budget, DNS_RESUME, now) > 0;
  int fds[FD_CONN0] = {o->stop_fd,
                       o->ctl_fd,
                       o->on_aux ? o->aux_fd : -1,
                       o->on_route ? o->route_fd : -1,
                       held ? -1 : o->udp4_fd,
                       held ? -1 : o->udp6_fd,
                       held ? -1 : o->tcp4_fd,
                       held ? -1 : o->tcp6_fd};

  s->paused = held;
  for (int i = 0; i < FD_CONN0; i++)
    pfd[i] = (struct pollfd){.fd = fds[i], .events = POLLIN};
  for (size_t i = 0; i < MAX_CONNS; i++)
    pfd[FD_CONN0 + i] =
        i < s->n_conns
            ? (struct pollfd){.fd = s->conns[i].fd, .events = s->conns[i].busy || held ? 0 : POLLIN}
            : (struct pollfd){.fd = -1};
  for (size_t i = 0; i < MAX_PENDING; i++) {
    const struct pending *p = &s->pend[i];
    short ev = i < s->n_pend && p->tcp && !p->tcp_sent ? POLLOUT : POLLIN;
    pfd[FD_PEND0 + i] = (struct pollfd){.fd = i < s->n_pend && p->used ? p->fd : -1, .events = ev};
  }
  if (poll(pfd, N_FDS, next_timeout(s, now)) < 0)
    return errno == EINTR ? 0 : error_errno(err, "resolver: poll");
  if (pfd[FD_STOP].revents)
    return 1;
  if (pfd[FD_CTL].revents && o->on_ctl != NULL && o->on_ctl(o->ud, o->policy) < 0)
    return error_set(err, 0, "resolver: control request failed");
  if (pfd[FD_AUX].revents && o->on_aux != NULL && o->on_aux(o->aux_ud) > 0)
    return 1;
  if (pfd[FD_ROUTE].revents && o->on_route != NULL)
    o->on_route(o->ud);
  for (size_t i = 0; i < s->n_pend; i++) {
    struct pending *p = &s->pend[i];
    short rev = pfd[FD_PEND0 + i].revents;
    if (rev == 0 || !p->used || p->fd != pfd[FD_PEND0 + i].fd)
      continue;
    if (p->tcp)
      handle_upstream_tcp(s, p, rev);
    else if (rev & POLLIN)
      handle_upstream_udp(s, p);
    else
      p->deadline = 0; /* an error on the socket: next upstream */
  }
  for (int i = FD_UDP4; i <= FD_UDP6; i++)
    if (pfd[i].revents & POLLIN)
      handle_udp(s, pfd[i].fd);
  for (int i = FD_TCP4; i <= FD_TCP6; i++)
    if (pfd[i].revents & POLLIN)
      handle_accept(s, pfd[i].fd);
  for (size_t i = 0; i < s->n_conns; i++)
    if (pfd[FD_CONN0 + i].revents && s->conns[i].fd >= 0)
      handle_conn(s, &s->conns[i]);
  /* a query written behind one answered since (pipelined) */
  for (size_t i = 0; i < s->n_conns; i++)
    conn_dispatch(s, &s->conns[i]);
  expire(s, now_ms());
  count_drops(s, false);
  if (o->on_tick != NULL)
    o->on_tick(o->ud);
  return 0;
}

static void state_free(struct rstate *s)
{
  for (size_t i = 0; i < s->n_pend; i++) {
    pending_close_fd(&s->pend[i]);
    free(s->pend[i].q);
    free(s->pend[i].tcp_buf);
  }
  for (size_t i = 0; i < s->n_conns; i++)
    conn_close(&s->conns[i]);
  mem_pages_free(s->scratch, sizeof *s->scratch);
  mem_pages_free(s->rx, RX_BUF);
  mem_pages_free(s->tx, RX_BUF);
}

int egress_resolver_run(const struct egress_resolver_opts *o, struct error *err)
{
  /* zeroed pages of its own, written only where used (on the stack its
   * 32 KiB were all resident: the memset, and the probes of a large frame) */
  struct rstate *s = mem_pages_alloc(sizeof *s);
  int r = 0;

  s->o = o;
  /* written only where a message lands: an idle resolver keeps ~0 of them */
  s->scratch = mem_pages_alloc(sizeof *s->scratch);
  s->rx = mem_pages_alloc(RX_BUF);
  s->tx = mem_pages_alloc(RX_BUF);
  token_bucket_init(&s->budget, DNS_BURST, DNS_RATE, now_ms());
  while ((r = loop_once(s, err)) == 0)
    ;
  /* queries sent upstream and not answered yet: their names left the host,
   * so each is a decision too (before, they ended with no record) */
  for (size_t i = 0; i < s->n_pend; i++)
    if (s->pend[i].used && s->pend[i].q != NULL)
      emit(s, EGRESS_DNS_FAILED, s->pend[i].q, NULL, 0, "no answer before the resolver stopped");
  count_drops(s, true);
  state_free(s);
  mem_pages_free(s, sizeof *s);
  return r < 0 ? -1 : 0;
}
