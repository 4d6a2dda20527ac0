/* monitor_net.c - the monitor's network source: denied packets from NFLOG.
 *
 * The egress ruleset sends every denied packet to an NFLOG group in the
 * container's network namespace ("log group N" in its deny chain).  The
 * monitor binds that group from a NETLINK_NETFILTER socket created inside
 * that namespace (setns there and back: the monitor is single-threaded, and
 * the socket keeps its netns for life), before the container's process runs,
 * so the process cannot take the group first.  It never binds a group in the
 * host's namespace.  Each packet's destination, protocol and port are
 * counted and recorded as "denied" records, coalesced per destination.
 *
 * DNS decisions of the egress resolver are recorded by the resolver's
 * on_event callback (kind "dns"); see monitor_dns.c once netfilter/ lands.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_log.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "runtime/monitor_internal.h"
#include "runtime/procfs.h"

#define NET_MAX_PENDING 128
#define NET_COPY_RANGE 96 /* bytes of each packet: IP + transport headers */

struct denied {
  char dst[INET6_ADDRSTRLEN];
  const char *proto;
  int port; /* -1 = none (ICMP type in icmp_type) */
  int icmp_type;
  unsigned count;
  int64_t first_ms;
  char at[40];
};

struct net {
  struct mnl_socket *nl;
  struct denied pend[NET_MAX_PENDING];
  size_t n;
};

static const char *
proto_name(int p)
{
  switch (p) {
  case IPPROTO_TCP:
    return "tcp";
  case IPPROTO_UDP:
    return "udp";
  case IPPROTO_ICMP:
    return "icmp";
  case IPPROTO_ICMPV6:
    return "icmpv6";
  case IPPROTO_SCTP:
    return "sctp";
  default:
    return "other";
  }
}

/* Destination, protocol and port of an IPv4/IPv6 packet. */
static bool
parse_packet(const uint8_t *p, size_t len, struct denied *d)
{
  size_t l4;
  int proto;

  if (len >= 20 && (p[0] >> 4) == 4) {
    l4 = (size_t)(p[0] & 0x0f) * 4;
    proto = p[9];
    inet_ntop(AF_INET, p + 16, d->dst, sizeof d->dst);
  } else if (len >= 40 && (p[0] >> 4) == 6) {
    l4 = 40;
    proto = p[6];
    inet_ntop(AF_INET6, p + 24, d->dst, sizeof d->dst);
  } else {
    return false;
  }
  d->proto = proto_name(proto);
  d->port = d->icmp_type = -1;
  if ((proto == IPPROTO_TCP || proto == IPPROTO_UDP || proto == IPPROTO_SCTP) && len >= l4 + 4)
    d->port = p[l4 + 2] << 8 | p[l4 + 3];
  else if ((proto == IPPROTO_ICMP || proto == IPPROTO_ICMPV6) && len > l4)
    d->icmp_type = p[l4];
  return true;
}

static void
emit(struct monitor *m, const struct denied *d)
{
  struct jbuf b = {0};

  jb_key_str(&b, "dst", d->dst);
  jb_key_str(&b, "proto", d->proto);
  if (d->port >= 0)
    jb_key_i64(&b, "port", d->port);
  if (d->icmp_type >= 0)
    jb_key_i64(&b, "icmp_type", d->icmp_type);
  jb_key_u64(&b, "count", d->count);
  jb_key_str(&b, "at", d->at);
  monitor_record(m, "denied", jb_str(&b));
  jb_free(&b);
}

static bool
net_flush(struct monitor *m, void *ctx, bool final)
{
  struct net *n = ctx;
  int64_t now = monitor_now_ms();
  size_t kept = 0;

  for (size_t i = 0; i < n->n; i++) {
    if (final || now - n->pend[i].first_ms >= MONITOR_COALESCE_MS)
      emit(m, &n->pend[i]);
    else
      n->pend[kept++] = n->pend[i];
  }
  n->n = kept;
  return n->n > 0;
}

static void
note(struct monitor *m, struct net *n, const struct denied *d)
{
  for (size_t i = 0; i < n->n; i++) {
    struct denied *p = &n->pend[i];
    if (strcmp(p->dst, d->dst) == 0 && p->proto == d->proto && p->port == d->port &&
        p->icmp_type == d->icmp_type) {
      p->count++;
      return;
    }
  }
  if (n->n == NET_MAX_PENDING) {
    emit(m, &n->pend[0]);
    memmove(n->pend, n->pend + 1, --n->n * sizeof *n->pend);
  }
  n->pend[n->n] = *d;
  n->pend[n->n].count = 1;
  n->pend[n->n].first_ms = monitor_now_ms();
  audit_timestamp(n->pend[n->n].at, sizeof n->pend[n->n].at);
  n->n++;
}

static int
attr_cb(const struct nlattr *a, void *data)
{
  const struct nlattr **tb = data;
  int type = mnl_attr_get_type(a);

  if (mnl_attr_type_valid(a, NFULA_MAX) > 0)
    tb[type] = a;
  return MNL_CB_OK;
}

struct packet_ctx {
  struct monitor *m;
  struct net *n;
};

static int
packet_cb(const struct nlmsghdr *nlh, void *data)
{
  struct packet_ctx *c = data;
  const struct nlattr *tb[NFULA_MAX + 1] = {0};
  struct denied d = {0};

  if ((nlh->nlmsg_type & 0xff) != NFULNL_MSG_PACKET ||
      mnl_attr_parse(nlh, sizeof(struct nfgenmsg), attr_cb, tb) < 0 || tb[NFULA_PAYLOAD] == NULL)
    return MNL_CB_OK;
  if (parse_packet(mnl_attr_get_payload(tb[NFULA_PAYLOAD]),
                   mnl_attr_get_payload_len(tb[NFULA_PAYLOAD]), &d))
    note(c->m, c->n, &d);
  return MNL_CB_OK;
}

static void
net_read(struct monitor *m, int fd, short revents, void *ctx)
{
  struct net *n = ctx;
  struct packet_ctx c = {m, n};
  uint8_t buf[MNL_SOCKET_BUFFER_SIZE];

  for (int i = 0; i < 256; i++) {
    ssize_t len = mnl_socket_recvfrom(n->nl, buf, sizeof buf);
    if (len < 0 && errno == ENOBUFS) {
      struct error err = {0};
      error_set(&err, ENOBUFS, "denied-packet events lost");
      monitor_error(m, "net", &err);
      continue;
    }
    if (len <= 0)
      return;
    mnl_cb_run(buf, (size_t)len, 0, 0, packet_cb, &c);
  }
}

/* One NFULNL_MSG_CONFIG message with one attribute, checked by its ack. */
static int
config(struct mnl_socket *nl, uint16_t group, uint16_t type, const void *data, size_t len,
       struct error *err)
{
  uint8_t buf[MNL_SOCKET_BUFFER_SIZE];
  struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
  struct nfgenmsg *g;
  static uint32_t seq = 1;
  ssize_t n;

  nlh->nlmsg_type = (NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_CONFIG;
  nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
  nlh->nlmsg_seq = ++seq;
  g = mnl_nlmsg_put_extra_header(nlh, sizeof *g);
  g->nfgen_family = AF_UNSPEC;
  g->version = NFNETLINK_V0;
  g->res_id = htons(group);
  mnl_attr_put(nlh, type, len, data);
  if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
    return error_errno(err, "nflog config");
  n = mnl_socket_recvfrom(nl, buf, sizeof buf);
  if (n < 0 || mnl_cb_run(buf, (size_t)n, seq, mnl_socket_get_portid(nl), NULL, NULL) < 0)
    return error_errno(err, "nflog group %u", group);
  return 0;
}

static int
bind_group(struct mnl_socket *nl, uint16_t group, struct error *err)
{
  struct nfulnl_msg_config_cmd cmd = {.command = NFULNL_CFG_CMD_BIND};
  struct nfulnl_msg_config_mode mode = {.copy_range = htonl(NET_COPY_RANGE),
                                        .copy_mode = NFULNL_COPY_PACKET};
  uint32_t qthresh = htonl(1); /* deliver each packet at once */

  if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0)
    return error_errno(err, "bind netfilter socket");
  if (config(nl, group, NFULA_CFG_CMD, &cmd, sizeof cmd, err) < 0 ||
      config(nl, group, NFULA_CFG_MODE, &mode, sizeof mode, err) < 0 ||
      config(nl, group, NFULA_CFG_QTHRESH, &qthresh, sizeof qthresh, err) < 0)
    return -1;
  return 0;
}

/* A NETLINK_NETFILTER socket inside the init's network namespace; NULL and
 * *ret_same when that namespace is ours (the host's). */
static struct mnl_socket *
socket_in_netns(pid_t init, bool *ret_same, struct error *err)
{
  char who[24];
  cleanup_close int own = procfs_open_ns("self", "net", err);
  cleanup_close int theirs = -1;
  struct mnl_socket *nl;
  struct stat a, b;
  int e;

  *ret_same = false;
  snprintf(who, sizeof who, "%d", init);
  if (own < 0 || (theirs = procfs_open_ns(who, "net", err)) < 0)
    return NULL;
  if (fstat(own, &a) == 0 && fstat(theirs, &b) == 0 && a.st_ino == b.st_ino &&
      a.st_dev == b.st_dev) {
    *ret_same = true;
    return NULL;
  }
  if (setns(theirs, CLONE_NEWNET) < 0) {
    error_errno(err, "enter the container's network namespace");
    return NULL;
  }
  nl = mnl_socket_open2(NETLINK_NETFILTER, SOCK_CLOEXEC);
  e = errno;
  if (setns(own, CLONE_NEWNET) < 0)
    abort(); /* never run on in the container's netns */
  if (nl == NULL)
    error_set(err, e, "netfilter socket in the container's network namespace");
  return nl;
}

int
monitor_net_open(struct monitor *m, int group, struct error *err)
{
  struct net *n;
  struct mnl_socket *nl;
  bool same;
  int fd;

  if (group < 0 || group > 65535)
    return error_set(err, EINVAL, "nflog group %d", group);
  nl = socket_in_netns(m->init_pid, &same, err);
  if (nl == NULL)
    return same ? 0 : -1;
  if (bind_group(nl, (uint16_t)group, err) < 0) {
    mnl_socket_close(nl);
    return -1;
  }
  fd = mnl_socket_get_fd(nl);
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  n = xmalloc0(sizeof *n);
  n->nl = nl;
  if (monitor_add_fd(m, fd, POLLIN, net_read, n) < 0) {
    mnl_socket_close(nl);
    free(n);
    return error_set(err, 0, "too many monitor sources");
  }
  monitor_set_flush(m, fd, net_flush);
  return 1;
}
