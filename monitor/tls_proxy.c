/* tls_proxy.c - see tls_proxy.h */
#include "monitor/tls_proxy.h"

#include "monitor/tls_ca.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/netfilter_ipv4.h>
#include <linux/netfilter_ipv6/ip6_tables.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "audit/audit.h"
#include "audit/jbuf.h"
#include "common/egress_grammar.h"
#include "common/token_bucket.h"
#include "common/util.h"
#include "monitor/http1.h"
#include "monitor/http_rule.h"
#include "netfilter/dns.h"
#include "os/fsutil.h"
#include "os/procfs.h"

/* The fork the proxy and its connections use: agentrt's, set by the loader
 * (tls_plugin.h).  In a static agentrt the plugin's libc.so cannot fork: its
 * fork reaches for the dynamic loader's thread lists, which only the
 * static binary's own libc keeps. */
pid_t (*tls_proxy_fork)(void) = fork;

#define IO_BUF 65536
#define HELLO_MAX 16389 /* one TLS record */
#define HELLO_TIMEOUT_MS 10000
/* A read from the container's side of a connection waits at most this long:
 * a kept-alive connection idle between requests, a request or handshake
 * stalled half way, is closed and its process ends (keepalive-idle: an
 * agent held its 128 connection processes, outside its cgroup, for ever).
 * Tunnels (a passthrough TLS flow, a WebSocket) read only what poll says is
 * there and are not cut; the upstream's answer is waited for as long as it
 * takes (long polls). */
#define CLIENT_IDLE_S 30
/* A request head, once its first byte is in, and a terminated TLS handshake,
 * once its ClientHello is, must be whole within this long (slowloris: a
 * head fed one byte every 29 s passed each read's CLIENT_IDLE_S and held its
 * process for ever).  Timed by the process's alarm: no call is added while
 * a head comes whole in one read. */
#define HEAD_TIMEOUT_S 10
/* A request body must keep coming at BODY_MIN_RATE bytes a second: the time
 * spent waiting for the client draws on a credit of CLIENT_IDLE_S seconds,
 * which each byte read refills by 1/BODY_MIN_RATE s, up to CLIENT_IDLE_S
 * again; when it is spent the request is cut with a 408 (body-trickle: a
 * body fed one byte every 29 s passed each read's CLIENT_IDLE_S and held its
 * process for ever).  Time spent writing to a slow upstream is not the
 * client's and is not counted: an upload is as slow as its upstream lets it
 * be.  A read that finds the credit full (an upload well above the rate)
 * adds no system call, only two clock readings. */
#define BODY_MIN_RATE 1024

/* Set in a connection's process when the proxy ends under it (its parent's
 * death signal: the container's monitor, then the proxy, are gone).  Blocked
 * reads and writes return EINTR, so the exchange under way is recorded as
 * cut (before, a request that had gone upstream was never recorded), and the
 * process ends within STOP_GRACE_S whatever it was doing. */
static volatile sig_atomic_t stopping;
#define STOP_GRACE_S 2

/* Set by SIGALRM while a head or handshake is awaited (HEAD_TIMEOUT_S):
 * the read under way returns EINTR and the connection is closed. */
static volatile sig_atomic_t late;

static void on_alarm(int sig)
{
  if (stopping) { /* STOP_GRACE_S is over: the end, as SIGALRM's default */
    signal(sig, SIG_DFL);
    raise(sig);
  }
  late = 1;
}

static void on_stop(int sig)
{
  (void)sig;
  stopping = 1;
  alarm(STOP_GRACE_S); /* on_alarm: the end */
}

struct proxy {
  const struct tls_proxy_opts *o;
  SSL_CTX *server_ctx, *client_ctx;
  EVP_PKEY *leaf_key;
  struct audit_log *log; /* opened per connection (its own lock file description) */
  /* this connection came in at TLS_PROXY_CHILD_PORT: a sub-agent's, through
   * its slirp4netns; none of this container's secrets is put in */
  bool from_child;
};

/* ------------------------------------------------------------ records */

static void record(struct proxy *px, const char *kind, struct jbuf *b)
{
  struct error err = {0};

  if (px->o->trail == NULL)
    return;
  if (px->log == NULL && audit_log_open(px->o->trail, px->o->id, NULL, false, &px->log, &err) < 0)
    return;
  audit_log_append(px->log, kind, jb_str(b), &err);
}

/* ------------------------------------------------------------ floods
 *
 * As the monitor's records (monitor_flood.c), the proxy's are coalesced
 * under a flood: per kind, verdict (refused or not) and the secret put in
 * (not per name, which the agent could vary at will) FLOOD_BURST records in
 * full, then FLOOD_RATE a second; the rest are counted and written as one
 * {"coalesced":N, "verdict", "secret", "since", "until"} record a second (by
 * the proxy's main process) or when a key makes room.  Before, every
 * request was a record of its own, from its connection's process: a flood of
 * requests on one keep-alive connection rotated the trail's earlier
 * evidence out.  The table is shared by the connections' processes
 * (MAP_SHARED), under a spin lock that a process dying in it cannot hold for
 * ever (taken over after a bounded wait). */

#define FLOOD_KEYS 32
#define FLOOD_BURST 200
#define FLOOD_RATE 20
#define FLOOD_COALESCE_MS 1000

struct flood_key {
  bool used, refused;
  char kind[24];
  char secret[64]; /* the secret's name, "" none */
  int64_t tokens_mil, refill_ms, used_ms, since_ms;
  uint64_t held;
  char since[40];
};

struct flood {
  char lock;
  struct flood_key k[FLOOD_KEYS];
};

static struct flood *flood; /* NULL: no table, every record in full */

static int64_t mono_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void flood_lock(void)
{
  for (unsigned i = 0; __atomic_test_and_set(&flood->lock, __ATOMIC_ACQUIRE); i++)
    if (i > 200000)
      break; /* its holder died in it */
    else if (i > 100)
      sched_yield();
}

static void flood_unlock(void)
{
  __atomic_clear(&flood->lock, __ATOMIC_RELEASE);
}

/* The counted record of a key copied out of the table (written after the
 * lock is let go: an audit write is no spin lock's business). */
static void flood_write(struct proxy *px, const struct flood_key *k)
{
  struct jbuf b = {0};
  char until[40];

  if (k->held == 0)
    return;
  audit_timestamp(until, sizeof until);
  jb_printf(&b, "\"coalesced\":%llu", (unsigned long long)k->held);
  jb_key_str(&b, "verdict", k->refused ? "refused" : "allowed");
  if (k->secret[0] != '\0')
    jb_key_str(&b, "secret", k->secret);
  jb_key_str(&b, "since", k->since);
  jb_key_str(&b, "until", until);
  record(px, k->kind, &b);
  jb_free(&b);
}

/* May this record be written in full?  false: counted. */
static bool flood_admit(struct proxy *px, const char *kind, bool refused, const struct secret *used)
{
  int64_t now = mono_ms();
  struct flood_key *k = NULL, *lru = NULL, evicted = {0};
  const char *sname = used != NULL ? used->def->name : "";
  bool ok;

  if (flood == NULL || stopping)
    return true; /* ending: nobody would write the count */
  flood_lock();
  for (size_t i = 0; i < FLOOD_KEYS && k == NULL; i++) {
    struct flood_key *x = &flood->k[i];
    if (x->used && x->refused == refused && streq(x->kind, kind) &&
        strncmp(x->secret, sname, sizeof x->secret - 1) == 0)
      k = x;
    else if (lru == NULL || !x->used || (lru->used && x->used_ms < lru->used_ms))
      lru = x;
  }
  if (k == NULL) {
    k = lru;
    evicted = *k; /* its count, written below */
    *k = (struct flood_key){
        .used = true, .refused = refused, .tokens_mil = FLOOD_BURST * 1000, .refill_ms = now};
    snprintf(k->kind, sizeof k->kind, "%s", kind);
    snprintf(k->secret, sizeof k->secret, "%s", sname);
  }
  k->used_ms = now;
  k->tokens_mil += (now - k->refill_ms) * FLOOD_RATE;
  if (k->tokens_mil > FLOOD_BURST * 1000)
    k->tokens_mil = FLOOD_BURST * 1000;
  k->refill_ms = now;
  ok = k->tokens_mil >= 1000;
  if (ok) {
    k->tokens_mil -= 1000;
  } else {
    if (k->held++ == 0) {
      k->since_ms = now;
      audit_timestamp(k->since, sizeof k->since);
    }
  }
  flood_unlock();
  flood_write(px, &evicted);
  return ok;
}

/* The counts a second old (all of them when final); the main process's. */
static void flood_flush(struct proxy *px, bool final)
{
  int64_t now = mono_ms();
  struct flood_key due[FLOOD_KEYS];
  size_t n = 0;

  if (flood == NULL)
    return;
  flood_lock();
  for (size_t i = 0; i < FLOOD_KEYS; i++)
    if (flood->k[i].held > 0 && (final || now - flood->k[i].since_ms >= FLOOD_COALESCE_MS)) {
      due[n++] = flood->k[i];
      flood->k[i].held = 0;
    }
  flood_unlock();
  for (size_t i = 0; i < n; i++)
    flood_write(px, &due[i]);
  if (px->log != NULL) { /* not inherited by the next connection's process */
    audit_log_close(px->log);
    px->log = NULL;
  }
}

static void addr_text(const struct sockaddr_storage *ss, char *buf, size_t len, uint16_t *port)
{
  if (ss->ss_family == AF_INET6) {
    const struct sockaddr_in6 *s6 = (const void *)ss;
    inet_ntop(AF_INET6, &s6->sin6_addr, buf, (socklen_t)len);
    *port = ntohs(s6->sin6_port);
  } else {
    const struct sockaddr_in *s4 = (const void *)ss;
    inet_ntop(AF_INET, &s4->sin_addr, buf, (socklen_t)len);
    *port = ntohs(s4->sin_port);
  }
}

static void flow_record(struct proxy *px, const char *name, const struct sockaddr_storage *dst,
                        bool allowed, const char *why)
{
  struct jbuf b = {0};
  char a[INET6_ADDRSTRLEN] = "";
  uint16_t port = 0;

  addr_text(dst, a, sizeof a, &port);
  jb_key_str(&b, "name", name);
  jb_key_str(&b, "addr", a);
  jb_key_u64(&b, "port", port);
  jb_key_str(&b, "verdict", allowed ? "allowed" : "refused");
  if (why != NULL)
    jb_key_str(&b, "reason", why);
  if (flood_admit(px, "tls_flow", !allowed, NULL))
    record(px, "tls_flow", &b);
  jb_free(&b);
}

/* ------------------------------------------------------------ name check */

/* Does `name` resolve, through the container's resolver (the redirect of
 * port 53 in this namespace), to dst's address?  The resolver answers only
 * allowed names (NXDOMAIN otherwise) and pins what it answers. */
static bool name_resolves_to(const char *name, const struct sockaddr_storage *dst)
{
  bool v6 = dst->ss_family == AF_INET6;
  const void *want = v6 ? (const void *)&((const struct sockaddr_in6 *)dst)->sin6_addr
                        : (const void *)&((const struct sockaddr_in *)dst)->sin_addr;
  struct sockaddr_in ns = {.sin_family = AF_INET, .sin_port = htons(53)};
  uint8_t q[512], a[4096];
  struct dns_msg m;
  struct error err = {0};
  struct timeval tv = {.tv_sec = 3};
  uint16_t id;
  int fd, qn;
  ssize_t n;
  bool ok = false;

  ns.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (getrandom(&id, sizeof id, 0) != sizeof id)
    id = (uint16_t)getpid();
  qn = dns_build_query(q, sizeof q, id, name, v6 ? DNS_TYPE_AAAA : DNS_TYPE_A, &err);
  if (qn < 0)
    return false;
  fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return false;
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  if (connect(fd, (struct sockaddr *)&ns, sizeof ns) == 0 && send(fd, q, (size_t)qn, 0) == qn) {
    for (int tries = 0; tries < 4 && !ok; tries++) {
      n = recv(fd, a, sizeof a, 0);
      if (n <= 0)
        break;
      if (dns_parse(a, (size_t)n, &m, &err) < 0 || m.id != id)
        continue;
      for (size_t i = 0; i < m.n_answers; i++)
        if (m.answers[i].type == (v6 ? DNS_TYPE_AAAA : DNS_TYPE_A) &&
            memcmp(m.answers[i].data.addr, want, v6 ? 16 : 4) == 0)
          ok = true;
      break;
    }
  }
  close(fd);
  return ok;
}

/* ------------------------------------------------------------ sockets */

static int upstream_connect(const struct sockaddr_storage *dst)
{
  uint32_t mark = TLS_PROXY_MARK;
  int one = 1;
  int fd = socket(dst->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);

  if (fd < 0)
    return -1;
  /* not redirected to us again; judged by the allowlist as usual */
  if (setsockopt(fd, SOL_SOCKET, SO_MARK, &mark, sizeof mark) < 0 ||
      connect(fd, (const struct sockaddr *)dst,
              dst->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6)
                                         : sizeof(struct sockaddr_in)) < 0) {
    close(fd);
    return -1;
  }
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

/* Copy both ways until either side closes (its other direction is shut
 * down, so that a half-close passes through). */
static void splice_plain(int a, int b)
{
  struct pollfd p[2] = {{.fd = a, .events = POLLIN}, {.fd = b, .events = POLLIN}};
  char buf[IO_BUF];
  bool open[2] = {true, true};

  while (open[0] || open[1]) {
    if (poll(p, 2, -1) < 0) {
      if (errno == EINTR)
        continue;
      return;
    }
    for (int i = 0; i < 2; i++) {
      ssize_t n;
      if (!open[i] || !(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
        continue;
      n = read(p[i].fd, buf, sizeof buf);
      if (n <= 0) {
        if (n < 0 && errno != EINTR && errno != EAGAIN)
          return; /* reset or cut: the other side goes with it */
        if (n == 0) {
          open[i] = false;
          p[i].fd = -1;
          shutdown(i == 0 ? b : a, SHUT_WR);
        }
        continue;
      }
      if (write_all(i == 0 ? b : a, buf, (size_t)n) < 0)
        return;
    }
  }
}

/* One whole TLS record from fd into buf (at most cap bytes, the header
 * included), within HELLO_TIMEOUT_MS; its length, or -1. */
static ssize_t read_record(int fd, unsigned char *buf, size_t cap)
{
  size_t have = 0, want = 5;

  while (have < want) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    ssize_t n;
    if (poll(&p, 1, HELLO_TIMEOUT_MS) <= 0)
      return -1;
    n = read(fd, buf + have, want - have);
    if (n < 0 && errno == EINTR && !late)
      continue;
    if (n <= 0)
      return -1;
    have += (size_t)n;
    if (have == 5 && want == 5) {
      want = 5 + ((size_t)buf[3] << 8 | buf[4]);
      if (want > cap)
        return -1;
    }
  }
  return (ssize_t)have;
}

/* A passthrough TLS flow's handshake up to where the server has answered:
 * the first ClientHello (checked already), the server's first record; after
 * a HelloRetryRequest the client's second ClientHello must name the same
 * server (a server could pick its certificate, and route, by the second).
 * false: refused (recorded) or cut. */
static bool passthrough_hello(struct proxy *px, int cfd, int ufd,
                              const struct sockaddr_storage *dst, const char *sni)
{
  static const unsigned char hrr[32] = {0xcf, 0x21, 0xad, 0x74, 0xe5, 0x9a, 0x61, 0x11,
                                        0xbe, 0x1d, 0x8c, 0x02, 0x1e, 0x65, 0xb8, 0x91,
                                        0xc2, 0xa2, 0x11, 0x16, 0x7a, 0xbb, 0x8c, 0x5e,
                                        0x07, 0x9e, 0x09, 0xe2, 0xc8, 0xa8, 0x33, 0x9c};
  unsigned char *buf = xmalloc0(HELLO_MAX + 2048);
  char name[256];
  bool ech = false, ok = false;
  ssize_t n;

  n = read_record(cfd, buf, HELLO_MAX);
  if (n < 0 || write_all(ufd, buf, (size_t)n) < 0)
    goto out;
  n = read_record(ufd, buf, HELLO_MAX + 2048);
  if (n < 0 || write_all(cfd, buf, (size_t)n) < 0)
    goto out;
  /* a ServerHello (handshake record, type 2) with the HelloRetryRequest random */
  if (!(n >= 5 + 4 + 2 + 32 && buf[0] == 0x16 && buf[5] == 2 && memcmp(buf + 11, hrr, 32) == 0)) {
    ok = true;
    goto out;
  }
  /* the second ClientHello, whole within HEAD_TIMEOUT_S (slowloris) */
  late = 0;
  alarm(HEAD_TIMEOUT_S);
  do { /* a change_cipher_spec (middlebox compatibility) or early data may come first */
    n = read_record(cfd, buf, HELLO_MAX + 2048);
  } while (n > 0 && (buf[0] == 0x14 || buf[0] == 0x17) && write_all(ufd, buf, (size_t)n) == 0);
  alarm(0);
  if (n < 0)
    goto out;
  if (tls_client_hello_sni(buf, (size_t)n, name, &ech) != (sni[0] ? 1 : 2) || ech ||
      !streq(name, sni)) {
    flow_record(px, sni, dst, false,
                "the ClientHello after a HelloRetryRequest names another server");
    goto out;
  }
  ok = write_all(ufd, buf, (size_t)n) == 0;
out:
  free(buf);
  return ok;
}

/* ------------------------------------------------------------ TLS streams */

struct stream {
  SSL *ssl;
  int fd;
  char buf[IO_BUF];
  size_t len; /* bytes read, not yet consumed */
  bool eof;
};

static ssize_t s_read(struct stream *s)
{
  int n;

  if (s->len == sizeof s->buf)
    return -1;
  if (s->ssl == NULL) { /* plain HTTP */
    ssize_t r;
    while ((r = read(s->fd, s->buf + s->len, sizeof s->buf - s->len)) < 0 && errno == EINTR &&
           !stopping && !late)
      ;
    if (r == 0)
      s->eof = true;
    if (r > 0)
      s->len += (size_t)r;
    return r < 0 ? -1 : r;
  }
  n = SSL_read(s->ssl, s->buf + s->len, (int)(sizeof s->buf - s->len));
  if (n <= 0) {
    int e = SSL_get_error(s->ssl, n);
    if (e == SSL_ERROR_ZERO_RETURN || (e == SSL_ERROR_SYSCALL && ERR_peek_error() == 0)) {
      s->eof = true;
      ERR_clear_error();
      return 0;
    }
    ERR_clear_error();
    return -1;
  }
  s->len += (size_t)n;
  return n;
}

static bool s_write(struct stream *s, const void *buf, size_t len)
{
  while (s->ssl == NULL && len > 0 && !stopping) {
    ssize_t w = write(s->fd, buf, len);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return false;
    buf = (const char *)buf + w;
    len -= (size_t)w;
  }
  while (len > 0 && !stopping) {
    int n = SSL_write(s->ssl, buf, (int)(len > INT32_MAX ? INT32_MAX : len));
    if (n <= 0) {
      ERR_clear_error();
      return false;
    }
    buf = (const char *)buf + n;
    len -= (size_t)n;
  }
  return len == 0;
}

static void s_consume(struct stream *s, size_t n)
{
  memmove(s->buf, s->buf + n, s->len - n);
  s->len -= n;
}

/* Read from the client's side of a request body, paced (BODY_MIN_RATE):
 * *credit_ms is what is left of its credit.  As s_read; -2 when the credit
 * is spent before (or while) the bytes came. */
static ssize_t s_read_paced(struct stream *s, int64_t *credit_ms)
{
  int64_t t0 = mono_ms(), t1;
  ssize_t n;

  if (*credit_ms < (int64_t)CLIENT_IDLE_S * 1000 && (s->ssl == NULL || !SSL_has_pending(s->ssl))) {
    /* the credit runs out before the read's own limit: wait no longer */
    struct pollfd p = {.fd = s->fd, .events = POLLIN};
    int r;
    while ((r = poll(&p, 1, (int)(*credit_ms > 0 ? *credit_ms : 0))) < 0 && errno == EINTR &&
           !stopping) {
      t1 = mono_ms();
      *credit_ms -= t1 - t0;
      t0 = t1;
    }
    if (r == 0)
      return -2;
    if (r < 0)
      return -1;
  }
  n = s_read(s);
  t1 = mono_ms();
  *credit_ms -= t1 - t0;
  if (n > 0)
    *credit_ms += (int64_t)n * 1000 / BODY_MIN_RATE;
  if (*credit_ms > (int64_t)CLIENT_IDLE_S * 1000)
    *credit_ms = (int64_t)CLIENT_IDLE_S * 1000;
  if (n > 0 && *credit_ms <= 0)
    return -2;
  return n;
}

/* Forward a body of the given framing from `from` to `to`; the bytes
 * counted in *bytes.  paced: `from` is the client (a request body), read
 * at BODY_MIN_RATE or *slow is set.  false on an error or an early end. */
static bool forward_body(struct stream *from, struct stream *to, const struct http_msg *m,
                         uint64_t *bytes, bool paced, bool *slow)
{
  struct http_chunked ch = {0};
  uint64_t left = m->length;
  bool done = m->body == HTTP_BODY_NONE || (m->body == HTTP_BODY_LENGTH && left == 0);
  int64_t credit_ms = (int64_t)CLIENT_IDLE_S * 1000;

  *slow = false;
  while (!done) {
    size_t take;
    if (from->len == 0) {
      ssize_t n = paced ? s_read_paced(from, &credit_ms) : s_read(from);
      if (n == -2)
        *slow = true;
      if (n < 0)
        return false;
      if (n == 0)
        return m->body == HTTP_BODY_CLOSE;
    }
    if (m->body == HTTP_BODY_LENGTH) {
      take = from->len < left ? from->len : (size_t)left;
      left -= take;
      done = left == 0;
    } else if (m->body == HTTP_BODY_CHUNKED) {
      const char *why = NULL;
      long used = http_chunked_feed(&ch, from->buf, from->len, &done, &why);
      if (used < 0)
        return false;
      take = (size_t)used;
    } else {
      take = from->len;
    }
    if (!s_write(to, from->buf, take))
      return false;
    *bytes += take;
    s_consume(from, take);
  }
  return true;
}

/* Copy both streams as they are (after a 101) until either ends. */
static void splice_tls(struct stream *a, struct stream *b)
{
  struct stream *s[2] = {a, b};

  for (int i = 0; i < 2; i++)
    if (s[i]->len > 0 && s_write(s[1 - i], s[i]->buf, s[i]->len))
      s[i]->len = 0;
  for (;;) {
    struct pollfd p[2] = {{.fd = a->fd, .events = POLLIN}, {.fd = b->fd, .events = POLLIN}};
    bool any = false;
    for (int i = 0; i < 2; i++)
      if (s[i]->ssl != NULL && SSL_pending(s[i]->ssl) > 0)
        any = true;
    if (!any && poll(p, 2, -1) < 0 && errno != EINTR)
      return;
    for (int i = 0; i < 2; i++) {
      if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR)) &&
          (s[i]->ssl == NULL || SSL_pending(s[i]->ssl) == 0))
        continue;
      if (s_read(s[i]) <= 0)
        return;
      if (!s_write(s[1 - i], s[i]->buf, s[i]->len))
        return;
      s[i]->len = 0;
    }
  }
}

/* ------------------------------------------------------------ substitution */

static void placeholder_record(struct proxy *px, const struct secret *s, const char *sni,
                               const struct http_field *f, const char *action)
{
  struct jbuf b = {0};

  jb_key_str(&b, "secret", s->def->name);
  jb_key_str(&b, "host", sni);
  if (f != NULL)
    jb_key_strn(&b, "header", f->name, f->name_len);
  jb_key_str(&b, "action", action);
  if (flood_admit(px, "secret_placeholder", false, s))
    record(px, "secret_placeholder", &b);
  jb_free(&b);
}

/* The head to send upstream: the request line as it came, each field as
 * "name: value", the secret's value in place of its placeholder where it
 * may go.  *used names the secret put in (NULL = none); a placeholder left
 * as it is is recorded. */
static char *rewrite_head(struct proxy *px, const char *head, const struct http_msg *m,
                          const char *sni, bool plain, const struct secret **used)
{
  const struct secret_store *st = px->o->secrets;
  const char *eol = strstr(head, "\r\n");
  struct jbuf out = {0};
  /* TRACE (and IIS's TRACK) answers with the request as received: a client
   * must not put secrets in it (RFC 9110 9.3.8); any case, as servers read it */
  bool echoes = m->method_len == 5 && (strncasecmp(m->method, "TRACE", 5) == 0 ||
                                       strncasecmp(m->method, "TRACK", 5) == 0);

  *used = NULL;
  for (size_t k = 0; k < st->n; k++) /* the target, its query: never substituted */
    if (memmem(head, (size_t)(eol - head), st->v[k].def->placeholder,
               strlen(st->v[k].def->placeholder)) != NULL)
      placeholder_record(px, &st->v[k], sni, NULL, "sent unchanged (in the request target)");
  jb_raw(&out, head, (size_t)(eol - head) + 2);
  for (size_t i = 0; i < m->n; i++) {
    const struct http_field *f = &m->f[i];
    cleanup_free char *value = xstrndup(f->value, f->value_len);

    if (http_field_is(f, "expect"))
      continue; /* answered by us (100 Continue) */
    if (!m->upgrade && (http_field_is(f, "upgrade") || http_field_is(f, "http2-settings")))
      continue; /* an upgrade to other than WebSocket (h2c): HTTP/1.1 it stays */
    for (size_t k = 0; k < st->n; k++) {
      const struct secret *s = &st->v[k];
      const char *ph = s->def->placeholder, *at = strstr(value, ph);
      /* or inside Basic credentials (a token in a URL's user or password) */
      bool basic = at == NULL && secret_basic_holds(value, ph);
      bool here = (at != NULL || basic) && !plain && !echoes && !px->from_child &&
                  http_field_is(f, s->def->header) && profile_secret_host_match(s->def, sni);

      if (at == NULL && !basic)
        continue;
      if (here) {
        cleanup_free char *real = NULL;
        char *prev = value;
        if (basic) /* the value itself in the credentials, not the format */
          real = secret_basic_substitute(s, value);
        else if (streq(value, ph)) /* the whole value: the profile's format */
          real = secret_header_value(s);
        else
          real = xfmt("%.*s%s%s", (int)(at - value), value, s->value, at + strlen(ph));
        value = take_ptr(real);
        explicit_bzero(prev, strlen(prev)); /* another secret's value, perhaps */
        free(prev);
        *used = s;
      } else {
        placeholder_record(px, s, sni, f,
                           plain    ? "sent unchanged (plain HTTP)"
                           : echoes ? "sent unchanged (TRACE echoes the request)"
                           : px->from_child
                               ? "sent unchanged (a sub-agent's request: the secret is not its)"
                               : "sent unchanged (not the secret's header or host)");
      }
    }
    jb_raw(&out, f->name, f->name_len);
    jb_puts(&out, ": ");
    jb_puts(&out, value);
    explicit_bzero(value, strlen(value));
    jb_puts(&out, "\r\n");
  }
  jb_puts(&out, "\r\n");
  return jb_take(&out);
}

static void reply_error(struct stream *c, int status, const char *reason, const char *text)
{
  cleanup_free char *r = xfmt("HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nContent-Length: "
                              "%zu\r\nConnection: close\r\n\r\n%s",
                              status, reason, strlen(text), text);
  s_write(c, r, strlen(r));
}

static void http_record(struct proxy *px, const struct http_msg *m, const char *sni, int status,
                        uint64_t up, uint64_t down, const struct secret *used, const char *why)
{
  struct jbuf b = {0};
  const char *q = memchr(m->target, '?', m->target_len);

  jb_key_strn(&b, "method", m->method, m->method_len);
  jb_key_str(&b, "host", sni);
  jb_key_strn(&b, "path", m->target, q ? (size_t)(q - m->target) : m->target_len);
  jb_key_u64(&b, "status", (uint64_t)status);
  jb_key_u64(&b, "bytes_out", up);
  jb_key_u64(&b, "bytes_in", down);
  if (used != NULL)
    jb_key_str(&b, "secret", used->def->name);
  if (why != NULL && stopping)
    why = "the proxy stopped (its container ended) before the exchange did";
  if (why != NULL)
    jb_key_str(&b, "refused", why);
  if (flood_admit(px, "http", why != NULL, used))
    record(px, "http", &b);
  jb_free(&b);
}

/* egress.http: the method and path must be listed for the host.  The path
 * is compared as sent; one a server could read as another is refused
 * outright (http_rule_path_normal), and so are headers that name another method or
 * path for servers that obey them. */
static bool rule_allows(struct proxy *px, const struct http_msg *m, const char *sni,
                        const char **why)
{
  const struct profile_http_rule *r =
      px->o->egress ? profile_http_rule_find(px->o->egress, sni) : NULL;

  return r == NULL || http_rule_check(r, m, why);
}

/* Nothing has come from the upstream since its last response ended.  Bytes
 * that no request asked for are a server that read a request body as
 * requests of its own (a final answer before the body, as to an Expect:
 * 100-continue, with the body left unread): its answers to them would be
 * taken as the answers to the client's next requests (expect-early: a
 * request for another name on the address, hidden in a body, was answered
 * to the next request).  Such a connection is not used again, nor one the
 * upstream has closed (its end of file is readable too): the client finds
 * its connection closed before any answer, as after a server's idle close,
 * and sends the request again on a new one. */
static bool upstream_quiet(struct stream *u)
{
  struct pollfd p = {.fd = u->fd, .events = POLLIN};

  if (u->len > 0 || (u->ssl != NULL && SSL_has_pending(u->ssl)))
    return false;
  return poll(&p, 1, 0) == 0;
}

/* Request by request until either side closes.  plain: port 80, not
 * terminated: the same Host on every request (another name sharing the
 * address would be reached behind the first), never a secret. */
static void serve_http(struct proxy *px, struct stream *c, struct stream *u, const char *sni,
                       uint16_t port, bool plain)
{
  bool first = true;

  for (;;) {
    struct http_msg req, resp;
    const char *why = NULL;
    const struct secret *used = NULL;
    cleanup_free char *head = NULL, *out = NULL;
    uint64_t up = 0, down = 0;
    bool head_req, expect = false, slow = false;
    long n;

    bool timed = false;

    while ((n = http_request_parse(c->buf, c->len, &req, &why)) == 0) {
      ssize_t r;
      if (c->len > 0 && !timed) { /* a head has begun: whole within HEAD_TIMEOUT_S */
        late = 0;
        alarm(HEAD_TIMEOUT_S);
        timed = true;
      }
      r = s_read(c);
      if (late) {
        reply_error(c, 408, "Request Timeout",
                    "agentrt egress proxy: the request head did not come whole in time\n");
        return;
      }
      if (r <= 0)
        return; /* closed between requests, or reset */
    }
    if (timed)
      alarm(0);
    if (n < 0) {
      reply_error(c, 400, "Bad Request", "agentrt egress proxy: malformed request\n");
      return;
    }
    head = xstrndup(c->buf, (size_t)n);
    if (http_request_parse(head, (size_t)n, &req, &why) <= 0)
      return;
    s_consume(c, (size_t)n);
    if (!first && !upstream_quiet(u)) {
      http_record(px, &req, sni, 0, 0, 0, NULL,
                  "the upstream sent bytes no request asked for (or closed): the connection "
                  "is not used again");
      return;
    }
    first = false;
    if (!http_host_is(&req, sni, port)) {
      http_record(px, &req, sni, 421, 0, 0, NULL,
                  plain ? "Host is not the connection's first Host"
                        : "Host is not the TLS server name");
      reply_error(c, 421, "Misdirected Request",
                  plain
                      ? "agentrt egress proxy: the Host field is not the connection's first Host\n"
                      : "agentrt egress proxy: the Host field is not the TLS server name\n");
      return;
    }
    if (!rule_allows(px, &req, sni, &why)) {
      http_record(px, &req, sni, 403, 0, 0, NULL, why);
      reply_error(c, 403, "Forbidden",
                  "agentrt egress proxy: refused by the profile's HTTP rules\n");
      return;
    }
    for (size_t i = 0; i < req.n; i++)
      if (http_field_is(&req.f[i], "expect") && req.f[i].value_len == 12 &&
          strncasecmp(req.f[i].value, "100-continue", 12) == 0)
        expect = true;
    /* From here the head (with the secret) is upstream's: every way out is
     * recorded, a client that resets before the answer too. */
    out = rewrite_head(px, head, &req, sni, plain, &used);
    if (!s_write(u, out, strlen(out))) {
      explicit_bzero(out, strlen(out));
      http_record(px, &req, sni, 0, 0, 0, used, "upstream closed during the request");
      return;
    }
    explicit_bzero(out, strlen(out));
    if ((expect && req.body != HTTP_BODY_NONE &&
         !s_write(c, "HTTP/1.1 100 Continue\r\n\r\n", 25)) ||
        !forward_body(c, u, &req, &up, true, &slow)) {
      if (slow) {
        http_record(px, &req, sni, 408, up, 0, used,
                    "the request body came slower than 1 KiB a second");
        reply_error(c, 408, "Request Timeout",
                    "agentrt egress proxy: the request body came too slowly\n");
        return;
      }
      http_record(px, &req, sni, 0, up, 0, used, "cut during the request");
      return;
    }
    head_req = req.method_len == 4 && memcmp(req.method, "HEAD", 4) == 0;
    for (;;) {
      while ((n = http_response_parse(u->buf, u->len, head_req, &resp, &why)) == 0) {
        if (s_read(u) <= 0) {
          http_record(px, &req, sni, stopping ? 0 : 502, up, 0, used,
                      "upstream closed before a response");
          reply_error(c, 502, "Bad Gateway", "agentrt egress proxy: no response upstream\n");
          return;
        }
      }
      if (n < 0) {
        http_record(px, &req, sni, 502, up, 0, used, why);
        reply_error(c, 502, "Bad Gateway", "agentrt egress proxy: malformed response\n");
        return;
      }
      if (!s_write(c, u->buf, (size_t)n)) {
        http_record(px, &req, sni, resp.status, up, 0, used, "the client left before the answer");
        return;
      }
      s_consume(u, (size_t)n);
      if (resp.status / 100 != 1 || resp.status == 101)
        break;
    }
    if (resp.status == 101 && req.upgrade) {
      http_record(px, &req, sni, 101, up, 0, used, NULL);
      splice_tls(c, u);
      return;
    }
    if (resp.status == 101) {
      /* the upstream speaks another protocol now: what follows is no request */
      http_record(px, &req, sni, 101, up, 0, used, "101 to a request that asked no upgrade");
      return;
    }
    if (!forward_body(u, c, &resp, &down, false, &slow)) {
      http_record(px, &req, sni, resp.status, up, down, used, "cut during the response");
      return;
    }
    http_record(px, &req, sni, resp.status, up, down, used, NULL);
    if (req.conn_close || resp.conn_close || resp.body == HTTP_BODY_CLOSE)
      return;
  }
}

/* ------------------------------------------------------------ one connection */

static const struct secret *secret_for(const struct proxy *px, const char *sni)
{
  for (size_t i = 0; i < px->o->secrets->n; i++)
    if (profile_secret_host_match(px->o->secrets->v[i].def, sni))
      return &px->o->secrets->v[i];
  return NULL;
}

static void tls_error_record(struct proxy *px, const char *sni, const char *where)
{
  struct jbuf b = {0};
  char buf[256] = "";
  unsigned long e = ERR_get_error();

  ERR_error_string_n(e, buf, sizeof buf);
  ERR_clear_error();
  jb_key_str(&b, "name", sni);
  jb_key_str(&b, "side", where);
  jb_key_str(&b, "error", e ? buf : "connection closed");
  if (flood_admit(px, "tls_error", true, NULL))
    record(px, "tls_error", &b);
  jb_free(&b);
}

static void terminate(struct proxy *px, int cfd, const struct sockaddr_storage *dst,
                      const char *sni)
{
  struct stream *c = xmalloc0(sizeof *c), *u = xmalloc0(sizeof *u);
  struct error err = {0};
  X509 *leaf = NULL;
  long vr;

  c->fd = cfd;
  u->fd = -1;
  if (tls_ca_leaf(px->o->ca, px->leaf_key, sni, &leaf, &err) < 0)
    goto out;
  c->ssl = SSL_new(px->server_ctx);
  if (c->ssl == NULL || SSL_use_certificate(c->ssl, leaf) != 1 ||
      SSL_use_PrivateKey(c->ssl, px->leaf_key) != 1 || SSL_set_fd(c->ssl, cfd) != 1)
    goto out;
  late = 0;
  alarm(HEAD_TIMEOUT_S); /* the ClientHello is in: the rest of the handshake comes soon */
  if (SSL_accept(c->ssl) != 1) {
    alarm(0);
    /* a client that pins its certificates ends here: recorded */
    tls_error_record(px, sni, "client (the container refused the proxy's certificate?)");
    goto out;
  }
  alarm(0);
  u->fd = upstream_connect(dst);
  if (u->fd < 0) {
    flow_record(px, sni, dst, false, "upstream connect failed (not allowed, or unreachable)");
    reply_error(c, 502, "Bad Gateway", "agentrt egress proxy: cannot connect upstream\n");
    goto out;
  }
  u->ssl = SSL_new(px->client_ctx);
  if (u->ssl == NULL || SSL_set_fd(u->ssl, u->fd) != 1 ||
      SSL_set_tlsext_host_name(u->ssl, sni) != 1 || SSL_set1_host(u->ssl, sni) != 1)
    goto out;
  if (SSL_connect(u->ssl) != 1) {
    vr = SSL_get_verify_result(u->ssl);
    tls_error_record(px, sni, vr != X509_V_OK ? X509_verify_cert_error_string(vr) : "upstream");
    reply_error(c, 502, "Bad Gateway",
                "agentrt egress proxy: the upstream's certificate did not verify\n");
    goto out;
  }
  flow_record(px, sni, dst, true, "terminated (a secret or an HTTP rule is bound to the name)");
  serve_http(px, c, u, sni, 443, false);
out:
  if (u->ssl != NULL) {
    SSL_shutdown(u->ssl);
    SSL_free(u->ssl);
  }
  if (c->ssl != NULL) {
    SSL_shutdown(c->ssl);
    SSL_free(c->ssl);
  }
  if (u->fd >= 0)
    close(u->fd);
  X509_free(leaf);
  explicit_bzero(c->buf, sizeof c->buf);
  explicit_bzero(u->buf, sizeof u->buf);
  free(c);
  free(u);
}

/* Peek at the first bytes without consuming them: the ClientHello, or a
 * plain HTTP request head.  While it is not whole, the socket's receive
 * low-water mark is one byte more than what is there, so that poll waits for
 * more instead of reporting the same bytes again: before, a connection that
 * sent one byte and stalled kept its process peeking every 2 ms for 10 s
 * (stall-cpu: 120 of them took 0.4 of a CPU while the client slept).  The
 * mark is put back to 1 for the reads that follow. */
static ssize_t peek_until(int fd, unsigned char *buf, size_t cap, int (*done)(const void *, size_t))
{
  struct timespec start;
  ssize_t n = 0, ret = -1;
  int lowat = 1;

  clock_gettime(CLOCK_MONOTONIC, &start);
  for (;;) {
    struct pollfd p = {.fd = fd, .events = POLLIN | POLLRDHUP};
    struct timespec now;
    long ms;
    int r;

    n = recv(fd, buf, cap, MSG_PEEK);
    if (n <= 0)
      break;
    r = done(buf, (size_t)n);
    if (r != 0 || (size_t)n == cap) {
      ret = r > 0 ? n : -1;
      break;
    }
    clock_gettime(CLOCK_MONOTONIC, &now);
    ms = (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
    if (ms > HELLO_TIMEOUT_MS || lowat > n) /* timed out, or the peer ended (see below) */
      break;
    /* more is coming: wake when it is there */
    lowat = (int)n + 1;
    if (setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &lowat, sizeof lowat) < 0)
      usleep(2000); /* no mark: poll reports what is there, do not spin on it */
    if (poll(&p, 1, (int)(HELLO_TIMEOUT_MS - ms)) <= 0)
      break;
    if (p.revents & (POLLRDHUP | POLLHUP | POLLERR))
      lowat = INT32_MAX; /* the peer ended: what is there now is all (one more look) */
  }
  if (lowat > 1) {
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &one, sizeof one);
  }
  return ret;
}

static char peek_name[256];
static bool peek_ech;
static long peek_port; /* Host's port, -1 none */

static int hello_done(const void *buf, size_t len)
{
  return tls_client_hello_sni(buf, len, peek_name, &peek_ech);
}

static int head_done(const void *buf, size_t len)
{
  return http_head_host(buf, len, peek_name, &peek_port);
}

/* A client that names no host, or names the address itself (an IP URL: a
 * ClientHello with no server name, a Host that is the address), to an
 * address an address entry of the allowlist lets out on this port (a CIDR,
 * or a profile that allows everything): passed as the allowlist would pass
 * it without a proxy.  Before, the name check refused it, and a mirror or
 * service the operator allows by address broke once the profile had a
 * secret (cidr-literal).  A name on that address is still checked.  Not
 * with an HTTP rule in the profile: inside TLS the flow could name the
 * ruled host (or be its server's default) and pass its rules unseen. */
static bool by_address(const struct proxy *px, const char *name, const struct sockaddr_storage *dst,
                       uint16_t port)
{
  const struct profile_egress *eg = px->o->egress;
  bool v6 = dst->ss_family == AF_INET6;
  const uint8_t *a = v6 ? ((const struct sockaddr_in6 *)dst)->sin6_addr.s6_addr
                        : (const uint8_t *)&((const struct sockaddr_in *)dst)->sin_addr;
  uint8_t lit[16];

  if (eg == NULL || eg->n_http > 0 ||
      (name[0] != '\0' &&
       !(inet_pton(v6 ? AF_INET6 : AF_INET, name, lit) == 1 && memcmp(lit, a, v6 ? 16 : 4) == 0)))
    return false;
  if (eg->def == PROFILE_EGRESS_ALLOW)
    return true;
  for (char **s = eg->allow; s != NULL && *s != NULL; s++) {
    struct egress_entry e;
    struct error ignore = {0};
    unsigned bits;
    bool match = true;

    if (egress_entry_parse(*s, &e, &ignore) < 0 || e.kind != (v6 ? EGRESS_CIDR6 : EGRESS_CIDR4) ||
        (e.proto != 0 && e.proto != IPPROTO_TCP) ||
        (!(e.port_min == 0 && e.port_max == 0) && (port < e.port_min || port > e.port_max)))
      continue;
    bits = e.prefix;
    for (unsigned i = 0; i < (v6 ? 16u : 4u) && bits > 0 && match; i++) {
      unsigned take = bits >= 8 ? 8 : bits;
      uint8_t mask = (uint8_t)(0xff << (8 - take));
      match = (a[i] & mask) == (e.addr[i] & mask);
      bits -= take;
    }
    if (match)
      return true;
  }
  return false;
}

static void connection(struct proxy *px, int cfd)
{
  struct sockaddr_storage dst = {0}, self = {0};
  socklen_t sl = sizeof dst, ml = sizeof self;
  unsigned char *buf = xmalloc0(HTTP_HEAD_MAX);
  uint16_t port = 0;
  char a[INET6_ADDRSTRLEN];
  int ufd;
  bool addr_only;

  /* heads and bodies are separate writes: no Nagle wait between them */
  setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &(int){1}, sizeof(int));
  setsockopt(cfd, SOL_SOCKET, SO_RCVTIMEO, &(struct timeval){.tv_sec = CLIENT_IDLE_S},
             sizeof(struct timeval));
  getsockname(cfd, (struct sockaddr *)&self, &ml);
  if (self.ss_family == AF_INET6 ? getsockopt(cfd, SOL_IPV6, IP6T_SO_ORIGINAL_DST, &dst, &sl)
                                 : getsockopt(cfd, SOL_IP, SO_ORIGINAL_DST, &dst, &sl)) {
    free(buf);
    return;
  }
  addr_text(&dst, a, sizeof a, &port);
  peek_name[0] = '\0';
  peek_ech = false;
  peek_port = -1;
  if (peek_until(cfd, buf, port == 443 ? HELLO_MAX : HTTP_HEAD_MAX,
                 port == 443 ? hello_done : head_done) < 0) {
    flow_record(px, peek_name[0] ? peek_name : NULL, &dst, false,
                port == 443 ? "no TLS server name (SNI) in the ClientHello"
                            : "no HTTP request with a Host field");
    free(buf);
    return;
  }
  free(buf);
  if (port != 443 && peek_port >= 0 && peek_port != port) {
    flow_record(px, peek_name, &dst, false, "the Host field names another port");
    return;
  }
  if (port == 443 && (secret_for(px, peek_name) != NULL ||
                      (px->o->egress && profile_http_rule_find(px->o->egress, peek_name)))) {
    if (!name_resolves_to(peek_name, &dst)) {
      flow_record(px, peek_name, &dst, false,
                  "the server name does not resolve to this address (or is not allowed)");
      return;
    }
    terminate(px, cfd, &dst, peek_name);
    return;
  }
  if (port == 443 && peek_ech) {
    flow_record(px, peek_name[0] ? peek_name : NULL, &dst, false,
                "an encrypted ClientHello (ECH): the server name that counts is hidden");
    return;
  }
  addr_only = by_address(px, peek_name, &dst, port);
  if (addr_only) {
    /* no name to check: the allowlist's address entry lets it out */
  } else if (peek_name[0] == '\0') {
    flow_record(px, NULL, &dst, false, "no TLS server name (SNI) in the ClientHello");
    return;
  } else if (!name_resolves_to(peek_name, &dst)) {
    flow_record(px, peek_name, &dst, false,
                port == 443 ? "the TLS server name does not resolve to this address (or is "
                              "not allowed)"
                            : "the Host field does not resolve to this address (or is not "
                              "allowed)");
    return;
  }
  ufd = upstream_connect(&dst);
  if (ufd < 0) {
    flow_record(px, peek_name[0] ? peek_name : NULL, &dst, false, "upstream connect failed");
    return;
  }
  flow_record(px, peek_name[0] ? peek_name : NULL, &dst, true,
              addr_only ? "an address the allowlist names: no server name to check" : NULL);
  if (port == 443) {
    if (passthrough_hello(px, cfd, ufd, &dst, peek_name))
      splice_plain(cfd, ufd);
  } else {
    struct stream *c = xmalloc0(sizeof *c), *u = xmalloc0(sizeof *u);
    c->fd = cfd;
    u->fd = ufd;
    serve_http(px, c, u, peek_name, port, true);
    explicit_bzero(c->buf, sizeof c->buf);
    explicit_bzero(u->buf, sizeof u->buf);
    free(c);
    free(u);
  }
  close(ufd);
}

/* ------------------------------------------------------------ the listener */

static int alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                       const unsigned char *in, unsigned inlen, void *arg)
{
  static const unsigned char h11[] = "\x08http/1.1";

  if (SSL_select_next_proto((unsigned char **)out, outlen, h11, sizeof h11 - 1, in, inlen) ==
      OPENSSL_NPN_NEGOTIATED)
    return SSL_TLSEXT_ERR_OK;
  return SSL_TLSEXT_ERR_NOACK; /* h2 only: no ALPN, HTTP/1.1 it is */
}

static int contexts(struct proxy *px, struct error *err)
{
  static const unsigned char h11[] = "\x08http/1.1";

  px->server_ctx = SSL_CTX_new(TLS_server_method());
  px->client_ctx = SSL_CTX_new(TLS_client_method());
  px->leaf_key = tls_key_new();
  if (px->server_ctx == NULL || px->client_ctx == NULL || px->leaf_key == NULL)
    return error_set(err, 0, "TLS proxy: OpenSSL contexts");
  SSL_CTX_set_min_proto_version(px->server_ctx, TLS1_2_VERSION);
  SSL_CTX_set_min_proto_version(px->client_ctx, TLS1_2_VERSION);
  SSL_CTX_set_alpn_select_cb(px->server_ctx, alpn_select, NULL);
  SSL_CTX_set_options(px->server_ctx, SSL_OP_NO_TICKET | SSL_OP_NO_RENEGOTIATION);
  SSL_CTX_set_verify(px->client_ctx, SSL_VERIFY_PEER, NULL);
  if (SSL_CTX_set_default_verify_paths(px->client_ctx) != 1)
    return error_set(err, 0, "TLS proxy: the host's trust store");
  if (px->o->upstream_ca != NULL &&
      SSL_CTX_load_verify_locations(px->client_ctx, px->o->upstream_ca, NULL) != 1) {
    ERR_clear_error();
    return error_set(err, 0, "egress.tls.upstreamCA `%s`: no PEM certificates", px->o->upstream_ca);
  }
  SSL_CTX_set_alpn_protos(px->client_ctx, h11, sizeof h11 - 1);
  return 0;
}

static int listen_on(int family, uint16_t port, struct error *err)
{
  int one = 1, fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in s4 = {.sin_family = AF_INET, .sin_port = htons(port)};
  struct sockaddr_in6 s6 = {.sin6_family = AF_INET6, .sin6_port = htons(port)};

  if (fd < 0)
    return error_errno(err, "TLS proxy: socket");
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  s4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  s6.sin6_addr = in6addr_loopback;
  if (family == AF_INET6)
    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
  if ((family == AF_INET ? bind(fd, (struct sockaddr *)&s4, sizeof s4)
                         : bind(fd, (struct sockaddr *)&s6, sizeof s6)) < 0 ||
      listen(fd, 128) < 0) {
    int e = errno;
    close(fd);
    /* no IPv6 in the namespace: IPv4 only */
    if (family == AF_INET6 && (e == EADDRNOTAVAIL || e == EAFNOSUPPORT))
      return -2;
    return error_set(err, e, "TLS proxy: listen on %s port %d",
                     family == AF_INET ? "127.0.0.1" : "::1", (int)port);
  }
  return fd;
}

/* lfd: IPv4 and IPv6 at TLS_PROXY_PORT, then at TLS_PROXY_CHILD_PORT (a
 * sub-agent's connections); -1 where there is none */
__attribute__((noreturn)) static void proxy_main(struct proxy *px, int lfd[4])
{
  /* connection processes and new connections: the container's, a
   * sub-agent's, apart (a child's flood does not hold up its parent's) */
  static const unsigned max_live[2] = {TLS_PROXY_MAX_CONNS, TLS_PROXY_MAX_CHILD_CONNS};
  static struct {
    pid_t pid;
    bool child;
  } conns[TLS_PROXY_MAX_CONNS + TLS_PROXY_MAX_CHILD_CONNS];
  unsigned live[2] = {0, 0};
  pid_t self = getpid();
  struct token_bucket budget[2];

  for (int k = 0; k < 2; k++)
    token_bucket_init(&budget[k], TLS_PROXY_CONN_BURST, TLS_PROXY_CONN_RATE, mono_ms());
  for (;;) {
    struct pollfd p[4];
    pid_t dead;
    int64_t now = mono_ms(), wait = 1000;

    /* a port whose budget is spent is not polled: its connections wait in
     * the accept queue until a token is back */
    for (int i = 0; i < 4; i++) {
      int64_t w = token_bucket_wait_ms(&budget[i >= 2], 1, now);
      p[i] = (struct pollfd){.fd = w == 0 ? lfd[i] : -1, .events = POLLIN};
      if (w > 0 && w < wait)
        wait = w;
    }

    while ((dead = waitpid(-1, NULL, WNOHANG)) > 0)
      for (size_t k = 0; k < sizeof conns / sizeof *conns; k++)
        if (conns[k].pid == dead) {
          live[conns[k].child]--;
          conns[k].pid = 0;
          break;
        }
    if (stopping) { /* the monitor is gone: the counts held, then the end */
      flood_flush(px, true);
      _exit(0);
    }
    flood_flush(px, false);
    if (poll(p, 4, (int)wait) <= 0)
      continue;
    for (int i = 0; i < 4; i++) {
      int cfd;
      pid_t pid;
      if (!(p[i].revents & POLLIN) || !token_bucket_take(&budget[i >= 2], mono_ms()))
        continue;
      cfd = accept4(lfd[i], NULL, NULL, SOCK_CLOEXEC);
      if (cfd < 0)
        continue;
      if (live[i >= 2] >= max_live[i >= 2]) {
        close(cfd); /* bounded: a flood costs connections, not the host */
        continue;
      }
      pid = tls_proxy_fork();
      if (pid == 0) {
        /* on_stop for SIGTERM (no SA_RESTART: blocked I/O returns EINTR),
         * unblocked, as in the proxy's main process */
        prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0);
        if (getppid() != self)
          _exit(0); /* the proxy ended before the death signal was set */
        for (int k = 0; k < 4; k++)
          if (lfd[k] >= 0)
            close(lfd[k]);
        px->from_child = i >= 2;
        connection(px, cfd);
        if (px->log != NULL)
          audit_log_close(px->log);
        _exit(0);
      }
      for (size_t k = 0; pid > 0 && k < sizeof conns / sizeof *conns; k++)
        if (conns[k].pid == 0) { /* a free one: at most the sum of both bounds live */
          conns[k].pid = pid;
          conns[k].child = i >= 2;
          live[i >= 2]++;
          break;
        }
      close(cfd);
    }
  }
}

int tls_proxy_start(const struct tls_proxy_opts *o, pid_t *ret_pid, struct error *err)
{
  int ready[2];
  pid_t pid;
  char msg[ERROR_MSG_MAX] = "";
  ssize_t n;

  if (pipe2(ready, O_CLOEXEC) < 0)
    return error_errno(err, "TLS proxy: pipe");
  pid = tls_proxy_fork();
  if (pid < 0) {
    close(ready[0]);
    close(ready[1]);
    return error_errno(err, "TLS proxy: fork");
  }
  if (pid == 0) {
    static struct proxy px;
    struct error e = {0};
    char who[24];
    int netns, lfd[4] = {-1, -1, -1, -1};

    close(ready[0]);
    /* Nothing of the monitor's: its state directory's descriptor holds
     * create's lock (a `delete -f` of a created container waited on it for
     * ever), and the trail, netlink, fanotify and listener descriptors are
     * the monitor's alone.  The proxy opens what it needs itself. */
    if (ready[1] != 3) {
      if (dup2(ready[1], 3) < 0)
        _exit(1);
      ready[1] = 3;
    }
    close_range(4, ~0U, 0);
    {
      /* the monitor's end: its death signal, unblocked (the monitor blocks
       * it for its signalfd), so that the counts held and the exchanges
       * under way are written; no SA_RESTART: blocked I/O returns EINTR */
      struct sigaction sa = {.sa_handler = on_stop}, al = {.sa_handler = on_alarm};
      sigset_t set;
      sigemptyset(&sa.sa_mask);
      sigemptyset(&al.sa_mask);
      sigaction(SIGTERM, &sa, NULL);
      sigaction(SIGALRM, &al, NULL);
      sigemptyset(&set);
      sigaddset(&set, SIGTERM);
      sigaddset(&set, SIGALRM);
      sigprocmask(SIG_UNBLOCK, &set, NULL);
    }
    prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0);
    prctl(PR_SET_NAME, "agentrt-proxy", 0, 0, 0);
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    signal(SIGCHLD, SIG_DFL);
    signal(SIGPIPE, SIG_IGN);
    px.o = o;
    flood = mmap(NULL, sizeof *flood, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (flood == MAP_FAILED)
      flood = NULL;
    snprintf(who, sizeof who, "%d", o->init_pid);
    netns = procfs_open_ns(who, "net", &e);
    if (netns < 0 || setns(netns, CLONE_NEWNET) < 0) {
      if (netns >= 0)
        error_errno(&e, "TLS proxy: setns");
      goto fail;
    }
    close(netns);
    if (contexts(&px, &e) < 0 || (lfd[0] = listen_on(AF_INET, TLS_PROXY_PORT, &e)) < 0 ||
        (lfd[2] = listen_on(AF_INET, TLS_PROXY_CHILD_PORT, &e)) < 0)
      goto fail;
    for (int k = 1; k < 4; k += 2) {
      lfd[k] = listen_on(AF_INET6, k == 1 ? TLS_PROXY_PORT : TLS_PROXY_CHILD_PORT, &e);
      if (lfd[k] == -1)
        goto fail;
      if (lfd[k] < 0)
        lfd[k] = -1;
    }
    if (write(ready[1], "", 1) != 1)
      _exit(1);
    close(ready[1]);
    proxy_main(&px, lfd);
  fail:
    if (write(ready[1], e.msg, strlen(e.msg) + 1) < 0)
      _exit(1);
    _exit(1);
  }
  close(ready[1]);
  while ((n = read(ready[0], msg, sizeof msg - 1)) < 0 && errno == EINTR)
    ;
  close(ready[0]);
  if (n == 1 && msg[0] == '\0') {
    *ret_pid = pid;
    return 0;
  }
  waitpid(pid, NULL, 0);
  msg[n > 0 ? n : 0] = '\0';
  return error_set(err, 0, "%s", n > 0 && msg[0] ? msg : "TLS proxy: exited during setup");
}
