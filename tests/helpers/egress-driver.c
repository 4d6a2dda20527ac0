/* egress-driver.c - drive netfilter/ from tests (tests/net/egress-selftest.sh).
 *
 *   egress-driver apply NETNS [-p DNSPORT] [-a] [-u] ENTRY...   apply a policy
 *                                          (-a default allow, -u live update)
 *   egress-driver delete NETNS                                    delete our table
 *   egress-driver list NETNS SET                                  set elements
 *   egress-driver resolve NETNS -p PORT -U UPSTREAM [-r READYFILE] ENTRY...
 *        apply the policy, then run the resolver until SIGTERM; one line per
 *        DNS decision on stdout ("dns allowed NAME ADDR...").
 *   egress-driver bench NETNS N      build+apply a 20-entry policy N times
 *   egress-driver connect HOST PORT   TCP connect (2 s timeout) and print how
 *        long it took to succeed or fail; exit 0 only when connected
 *   egress-driver query SERVER NAME [A|AAAA] [tcp]   a DNS client: prints
 *        "rcode=N ADDR..." (run it inside the netns with ip netns exec)
 * NETNS is a netns file (/run/netns/NAME).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>

#include "common/util.h"
#include "netfilter/dns.h"
#include "netfilter/egress.h"

static int fail(const struct error *err)
{
  fprintf(stderr, "egress-driver: %s\n", err->msg);
  return 1;
}

static int open_netns(const char *path)
{
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    fprintf(stderr, "egress-driver: open %s: %s\n", path, strerror(errno));
  return fd;
}

static long long now_us(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

struct args {
  uint16_t dns_port;
  bool allow, update;
  const char *upstream, *ready;
};

static int parse_args(int argc, char **argv, struct args *a, struct egress_policy *p,
                      struct error *err)
{
  int c;
  uint32_t v;

  while ((c = getopt(argc, argv, "p:auU:r:")) != -1) {
    switch (c) {
    case 'p':
      if (parse_u32(optarg, &v) < 0 || v > 65535)
        return error_set(err, 0, "bad port `%s`", optarg);
      a->dns_port = (uint16_t)v;
      break;
    case 'a':
      a->allow = true;
      break;
    case 'u':
      a->update = true;
      break;
    case 'U':
      a->upstream = optarg;
      break;
    case 'r':
      a->ready = optarg;
      break;
    default:
      return error_set(err, 0, "bad option");
    }
  }
  p->default_allow = a->allow;
  for (int i = optind; i < argc; i++) {
    struct egress_entry e;
    if (egress_entry_parse(argv[i], &e, err) < 0 || egress_policy_add(p, &e, err) < 0)
      return -1;
  }
  if (a->upstream != NULL) {
    if (egress_upstream_parse(a->upstream, &p->upstream[0], err) < 0)
      return -1;
    p->n_upstream = 1;
  }
  return 0;
}

static int apply(int nsfd, const struct egress_policy *p, const struct args *a, struct error *err)
{
  struct nft_build_opts o = {.seq_base = 1, .dns_port = a->dns_port, .update = a->update};
  struct nft_batch_buf b;
  int r;

  if (nft_build_batch(p, &o, &b, err) < 0)
    return -1;
  r = nft_apply(nsfd, &b, err);
  nft_batch_buf_free(&b);
  return r;
}

static const char *verdict_name(enum egress_dns_verdict v)
{
  static const char *n[] = {"allowed", "refused", "rebind", "failed", "nodata"};
  return (size_t)v < ARRAY_SIZE(n) ? n[v] : "?";
}

static void on_event(void *ud, const struct egress_dns_event *ev)
{
  printf("dns %s %s type=%u", verdict_name(ev->verdict), ev->name, ev->qtype);
  for (size_t i = 0; i < ev->n_addrs; i++) {
    char a[INET6_ADDRSTRLEN];
    inet_ntop(ev->addrs[i].family, ev->addrs[i].addr, a, sizeof a);
    printf(" %s", a);
    if (ev->addrs[i].port)
      printf(":%u/%s", ev->addrs[i].port, ev->addrs[i].proto == 6 ? "tcp" : "udp");
    printf("(%ums)", ev->addrs[i].timeout_ms);
  }
  if (ev->detail)
    printf(" (%s)", ev->detail);
  printf("\n");
  fflush(stdout);
}

static int resolve(int nsfd, struct egress_policy *p, const struct args *a, struct error *err)
{
  struct egress_resolver_opts o = {.policy = p, .ctl_fd = -1, .on_event = on_event};
  sigset_t mask;
  int r;

  if (apply(nsfd, p, a, err) < 0 || egress_resolver_open(nsfd, a->dns_port, &o, err) < 0)
    return -1;
  sigemptyset(&mask);
  sigaddset(&mask, SIGTERM);
  sigaddset(&mask, SIGINT);
  sigprocmask(SIG_BLOCK, &mask, NULL);
  o.stop_fd = signalfd(-1, &mask, SFD_CLOEXEC);
  if (a->ready != NULL) {
    FILE *f = fopen(a->ready, "we");
    if (f != NULL)
      fclose(f);
  }
  r = egress_resolver_run(&o, err);
  egress_resolver_close(&o);
  close(o.stop_fd);
  return r;
}

/* A 20-entry policy: 10 CIDRs, 5 port-qualified, 5 domains. */
static int bench_policy(struct egress_policy *p, struct error *err)
{
  egress_policy_init(p);
  for (int i = 0; i < 20; i++) {
    char s[64];
    struct egress_entry e;
    if (i < 10)
      snprintf(s, sizeof s, "198.51.100.%d", i * 8);
    else if (i < 15)
      snprintf(s, sizeof s, "203.0.113.%d:%d/tcp", i, 8000 + i);
    else
      snprintf(s, sizeof s, "host%d.example.test:443", i);
    if (egress_entry_parse(s, &e, err) < 0 || egress_policy_add(p, &e, err) < 0)
      return -1;
  }
  return 0;
}

/* What `create` does: open the resolver's sockets (one fork), build the
 * batch, send it on the kept netlink socket.  The close of that socket is
 * timed apart: it waits for the kernel's RCU cleanup of the transaction. */
static int bench(int nsfd, int n, struct error *err)
{
  struct egress_policy p;
  long long t_open = 0, t_build = 0, t_send = 0, t_close = 0, best = -1;
  size_t bytes = 0, msgs = 0;

  if (bench_policy(&p, err) < 0)
    return -1;
  for (int i = 0; i < n; i++) {
    struct egress_resolver_opts o = {0};
    struct nft_build_opts bo = {.seq_base = 1, .dns_port = 53};
    struct nft_batch_buf b;
    long long t0 = now_us(), t1, t2, t3;
    if (egress_resolver_open(nsfd, 53, &o, err) < 0)
      return -1;
    t1 = now_us();
    if (nft_build_batch(&p, &bo, &b, err) < 0)
      return -1;
    t2 = now_us();
    if (nft_batch_send(o.nl_fd, &b, err) < 0)
      return -1;
    t3 = now_us();
    egress_resolver_close(&o);
    t_close += now_us() - t3;
    bytes = b.len, msgs = b.n_msgs;
    nft_batch_buf_free(&b);
    t_open += t1 - t0, t_build += t2 - t1, t_send += t3 - t2;
    if (best < 0 || t3 - t0 < best)
      best = t3 - t0;
  }
  printf("bench: 20-entry policy (%zu bytes, %zu messages), %d runs, mean us: open sockets "
         "(fork+setns) %lld, build %lld, send+acks %lld; open+build+send min %lld; "
         "close %lld\n",
         bytes, msgs, n, t_open / n, t_build / n, t_send / n, best, t_close / n);
  egress_policy_free(&p);
  return 0;
}

static int list(int nsfd, const char *set, struct error *err)
{
  cleanup_close int fd = nft_socket_open(nsfd, err);
  cleanup_free char *out = NULL;

  if (fd < 0 || nft_set_list(fd, set, &out, err) < 0)
    return -1;
  fputs(out, stdout);
  return 0;
}

static int query_send(int fd, bool tcp, const uint8_t *q, int qlen, uint8_t *buf, size_t cap)
{
  uint8_t hdr[2] = {(uint8_t)(qlen >> 8), (uint8_t)qlen};
  ssize_t n;

  if (tcp && write(fd, hdr, 2) != 2)
    return -1;
  if (write(fd, q, (size_t)qlen) != qlen)
    return -1;
  if (!tcp)
    return (int)read(fd, buf, cap);
  n = 0;
  while (n < 2 || n < 2 + (buf[0] << 8 | buf[1])) {
    ssize_t r = read(fd, buf + n, cap - (size_t)n);
    if (r <= 0)
      return -1;
    n += r;
  }
  memmove(buf, buf + 2, (size_t)n - 2);
  return (int)n - 2;
}

/* connect HOST PORT: time to connect or to be refused */
static int tcp_connect(char **argv, struct error *err)
{
  struct sockaddr_in sa = {.sin_family = AF_INET};
  struct timeval tv = {2, 0};
  cleanup_close int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  uint32_t port;
  long long t0;
  int r;

  if (inet_pton(AF_INET, argv[2], &sa.sin_addr) != 1 || parse_u32(argv[3], &port) < 0 ||
      port > 65535)
    return error_set(err, 0, "bad address");
  sa.sin_port = htons((uint16_t)port);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  t0 = now_us();
  r = connect(fd, (struct sockaddr *)&sa, sizeof sa);
  printf("connect %s:%u: %s in %lld us\n", argv[2], port, r == 0 ? "connected" : strerror(errno),
         now_us() - t0);
  return r == 0 ? 0 : error_set(err, errno, "connect");
}

/* query SERVER NAME [A|AAAA] [tcp] */
static int query(int argc, char **argv, struct error *err)
{
  bool tcp = argc > 5 && streq(argv[5], "tcp");
  uint16_t type = argc > 4 && streq(argv[4], "AAAA") ? DNS_TYPE_AAAA : DNS_TYPE_A;
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(53)};
  struct timeval tv = {2, 0};
  uint8_t q[512], buf[4096];
  static struct dns_msg m;
  cleanup_close int fd = socket(AF_INET, (tcp ? SOCK_STREAM : SOCK_DGRAM) | SOCK_CLOEXEC, 0);
  int qlen, n;

  if (inet_pton(AF_INET, argv[2], &sa.sin_addr) != 1)
    return error_set(err, 0, "bad server `%s`", argv[2]);
  qlen = dns_build_query(q, sizeof q, 0x4242, argv[3], type, err);
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  if (qlen < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0)
    return qlen < 0 ? -1 : error_errno(err, "connect %s", argv[2]);
  n = query_send(fd, tcp, q, qlen, buf, sizeof buf);
  if (n <= 0)
    return error_errno(err, "no answer from %s", argv[2]);
  if (dns_parse(buf, (size_t)n, &m, err) < 0)
    return -1;
  printf("rcode=%d", DNS_RCODE(m.flags));
  for (size_t i = 0; i < m.n_answers; i++) {
    char a[INET6_ADDRSTRLEN];
    if (m.answers[i].type == DNS_TYPE_CNAME)
      continue;
    inet_ntop(m.answers[i].type == DNS_TYPE_A ? AF_INET : AF_INET6, m.answers[i].data.addr, a,
              sizeof a);
    printf(" %s", a);
  }
  printf("\n");
  return 0;
}

int main(int argc, char **argv)
{
  struct egress_policy p;
  struct args a = {0};
  struct error err = {0};
  cleanup_close int nsfd = -1;
  const char *cmd;
  int r = -1, n = 0;

  if (argc < 3) {
    fprintf(stderr, "usage: egress-driver apply|delete|list|resolve|bench NETNS ...\n");
    return 2;
  }
  cmd = argv[1];
  if (streq(cmd, "query"))
    return argc >= 4 && query(argc, argv, &err) == 0 ? 0 : fail(&err);
  if (streq(cmd, "connect") && argc == 4)
    return tcp_connect(argv, &err) == 0 ? 0 : 1;
  nsfd = open_netns(argv[2]);
  if (nsfd < 0)
    return 1;
  egress_policy_init(&p);
  if (streq(cmd, "delete"))
    r = nft_table_delete(nsfd, &err);
  else if (streq(cmd, "list") && argc == 4)
    r = list(nsfd, argv[3], &err);
  else if (streq(cmd, "bench") && argc == 4 && parse_int(argv[3], &n) == 0 && n > 0)
    r = bench(nsfd, n, &err);
  else if (streq(cmd, "apply") && parse_args(argc - 2, argv + 2, &a, &p, &err) == 0)
    r = apply(nsfd, &p, &a, &err);
  else if (streq(cmd, "resolve") && parse_args(argc - 2, argv + 2, &a, &p, &err) == 0)
    r = resolve(nsfd, &p, &a, &err);
  else if (!error_is_set(&err))
    error_set(&err, 0, "bad command line");
  egress_policy_free(&p);
  return r < 0 ? fail(&err) : 0;
}
