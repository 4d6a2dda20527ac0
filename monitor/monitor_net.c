/* monitor_net.c - the monitor's network source: packets logged to NFLOG.
 *
 * The egress ruleset sends every denied packet, and the first packet of
 * every allowed flow, to one NFLOG group in the container's network
 * namespace ("log group N" in its chains `deny` and `allowed`, told apart by
 * their prefixes).  The monitor binds that group from a NETLINK_NETFILTER
 * socket created inside that namespace (setns there and back: the monitor
 * is single-threaded, and the socket keeps its netns for life), before the
 * container's process runs, so the process cannot take the group first.  It
 * never binds a group in the host's namespace.  Packets become "denied" and
 * "flow" records with counts, coalesced per destination (netlog.c).
 *
 * Losses: when the monitor falls behind (a flood, or the monitor stopped) the
 * kernel drops what does not fit in the socket's queue and says so with one
 * ENOBUFS.  The group numbers its packets (NFULNL_CFG_F_SEQ), so the gap
 * before the next one read is how many were dropped: both become one
 * "lost" audit_error a tick, with that count.
 *
 * Budget: the monitor runs outside the container's cgroup, and every logged
 * packet costs it a read and a parse.  A container held to a quarter of a
 * CPU that sent refused datagrams in a loop (420,000 in 4 s) made it spend a
 * quarter of a CPU more, uncharged (egress.bats "refused-packet-flood-cpu").
 * So the group is read within a token bucket (NET_BURST packets at once,
 * then NET_RATE a second): when it is empty the socket is not read until
 * NET_RESUME tokens are back (looked at every flush, MONITOR_TICK_MS at
 * most), and the kernel drops what does not fit in the socket's queue,
 * counted by the numbers' gap as above.  A flood past the limit is then
 * "lost" events with a count, where it would have been counted records
 * without their destinations anyway (the flood limit, monitor_flood.c).
 *
 * A gateway refused because two link addresses answered for it within the
 * window after its first answer (first-answer-race, netfilter/nft_arp.c):
 * the first answer's link address, logged when the table pinned it, is kept
 * here (not recorded), and recorded as refused beside the second when that
 * comes; the entry the kernel learnt from the first answer (the neighbour's,
 * when it answered first) is deleted from the namespace's neighbour table at
 * once, through a NETLINK_ROUTE socket made there with the group's, so no
 * packet goes on to that link address; the tables refuse every answer for
 * the gateway after, so none is learnt again.
 *
 * DNS decisions of the egress resolver are recorded by the resolver's
 * on_event callback (kind "dns").
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

#include "common/failpoint.h"
#include "common/log.h"
#include "common/token_bucket.h"
#include "common/util.h"
#include "monitor/monitor_internal.h"
#include "monitor/netlog.h"
#include "netfilter/egress.h"
#include "os/memory.h"
#include "os/procfs.h"

#define NET_COPY_RANGE 96 /* bytes of each packet: IP + transport headers */
#define NET_BURST 10000   /* logged packets read at once */
#define NET_RATE 10000    /* then this many a second (~2.5 us each: ~2.5% of a CPU) */
#define NET_RESUME 1000   /* tokens an empty budget waits for */

#define NET_FIRSTS (2 * NFT_MAX_GW4) /* gateways' first answers kept */

/* a gateway's first answer (its link address), and when its neighbour
 * entry was last deleted (0 = never) */
struct gw_first {
  char addr[INET6_ADDRSTRLEN];
  char lladdr[18];
  bool recorded; /* refused with the second */
  int64_t forgot_ms;
};

struct net {
  struct mnl_socket *nl;
  struct netlog log;
  uint32_t next_seq; /* NFULA_SEQ of the packet expected next */
  bool have_seq;     /* one was read */
  bool overflowed;   /* ENOBUFS since the last loss record */
  uint64_t lost;     /* packets dropped (seq gaps) since then */
  int64_t last_loss_ms;
  int fd;
  struct token_bucket budget; /* packets read */
  bool paused;                /* the budget is spent: the socket is not read */
  int route_fd;               /* NETLINK_ROUTE in the container's netns, -1 = none */
  struct gw_first firsts[NET_FIRSTS];
  size_t n_firsts;
};

static void net_emit(void *ud, const char *kind, const char *fields)
{
  monitor_record(ud, kind, fields);
}

/* per kind and direction, as many events as the record counts */
static bool net_admit(void *ud, const char *kind, const struct netlog_event *ev, unsigned count)
{
  return monitor_flood_admit_n(ud, kind, "", "direction", ev->inbound ? "in" : "out", 0, count);
}

static bool net_flush(struct monitor *m, void *ctx, bool final)
{
  struct net *n = ctx;
  int64_t now = monitor_now_ms();
  bool held = n->overflowed || n->lost > 0;

  if (n->paused && token_bucket_wait_ms(&n->budget, NET_RESUME, now) == 0 &&
      monitor_rearm_fd(m, n->fd, POLLIN) == 0)
    n->paused = false;

  /* one record a second at most, however long the flood */
  if (held && (final || now - n->last_loss_ms >= 1000)) {
    monitor_loss(m, "net", "network events lost (NFLOG queue overflow)", n->lost);
    n->overflowed = false;
    n->lost = 0;
    n->last_loss_ms = now;
    held = false;
  }
  return netlog_flush(&n->log, now, final) || held || n->paused;
}

static int attr_cb(const struct nlattr *a, void *data)
{
  const struct nlattr **tb = data;
  int type = mnl_attr_get_type(a);

  if (mnl_attr_type_valid(a, NFULA_MAX) > 0)
    tb[type] = a;
  return MNL_CB_OK;
}

static struct gw_first *first_of(struct net *n, const char *addr)
{
  for (size_t i = 0; i < n->n_firsts; i++)
    if (strcmp(n->firsts[i].addr, addr) == 0)
      return &n->firsts[i];
  return NULL;
}

/* A gateway's first answer, pinned: its link address kept (the oldest
 * dropped past NET_FIRSTS; the tables pin as many) */
static void note_first(struct net *n, const struct netlog_event *ev)
{
  struct gw_first *f = first_of(n, ev->addr);

  if (f == NULL) {
    if (n->n_firsts == NET_FIRSTS)
      memmove(n->firsts, n->firsts + 1, --n->n_firsts * sizeof *n->firsts);
    f = &n->firsts[n->n_firsts++];
  }
  *f = (struct gw_first){0};
  snprintf(f->addr, sizeof f->addr, "%s", ev->addr);
  snprintf(f->lladdr, sizeof f->lladdr, "%s", ev->lladdr);
}

/* An answer refused because two link addresses answered for the gateway
 * (first-answer-race): recorded, with the first answer's link address
 * beside it (once), and the entry learnt from the first forgotten (once a
 * second at most: the tables refuse every answer after, so the kernel
 * learns none again) */
static void note_twice(struct net *n, const struct netlog_event *ev, int ifindex, int64_t now)
{
  struct gw_first *f = first_of(n, ev->addr);
  struct netlog_event first = *ev;
  uint8_t a[16];
  int family = strcmp(ev->proto, "arp") == 0 ? AF_INET : AF_INET6;

  netlog_note(&n->log, ev, now);
  if (f == NULL) {
    note_first(n, ev); /* the first's log was lost: this one stands for it */
    f = first_of(n, ev->addr);
    f->recorded = true;
  }
  if (!f->recorded && strcmp(f->lladdr, ev->lladdr) != 0) {
    snprintf(first.lladdr, sizeof first.lladdr, "%s", f->lladdr);
    netlog_note(&n->log, &first, now);
    f->recorded = true;
  }
  if (n->route_fd < 0 || (f->forgot_ms != 0 && now - f->forgot_ms < 1000) ||
      inet_pton(family, ev->addr, a) != 1)
    return;
  f->forgot_ms = now;
  if (netns_neigh_forget(n->route_fd, family, a, ifindex) < 0)
    log_warning("egress: forget gateway %s's link address: %s", ev->addr, strerror(errno));
}

static int packet_cb(const struct nlmsghdr *nlh, void *data)
{
  struct net *n = data;
  const struct nlattr *tb[NFULA_MAX + 1] = {0};
  const char *prefix = NULL;
  struct netlog_event ev;

  if ((nlh->nlmsg_type & 0xff) != NFULNL_MSG_PACKET ||
      mnl_attr_parse(nlh, sizeof(struct nfgenmsg), attr_cb, tb) < 0)
    return MNL_CB_OK;
  if (tb[NFULA_SEQ] != NULL && mnl_attr_validate(tb[NFULA_SEQ], MNL_TYPE_U32) == 0) {
    uint32_t seq = ntohl(mnl_attr_get_u32(tb[NFULA_SEQ]));
    /* in order on one socket; a packet dropped still took its number */
    if (n->have_seq && seq - n->next_seq < UINT32_C(1) << 31)
      n->lost += seq - n->next_seq;
    n->next_seq = seq + 1;
    n->have_seq = true;
  }
  if (tb[NFULA_PAYLOAD] == NULL)
    return MNL_CB_OK;
  if (tb[NFULA_PREFIX] != NULL && mnl_attr_validate(tb[NFULA_PREFIX], MNL_TYPE_NUL_STRING) == 0)
    prefix = mnl_attr_get_str(tb[NFULA_PREFIX]);
  if (!netlog_parse(mnl_attr_get_payload(tb[NFULA_PAYLOAD]),
                    mnl_attr_get_payload_len(tb[NFULA_PAYLOAD]), prefix, &ev))
    return MNL_CB_OK;
  if (ev.first) {
    note_first(n, &ev);
  } else if (ev.twice) {
    int ifindex = 0;
    if (tb[NFULA_IFINDEX_INDEV] != NULL &&
        mnl_attr_validate(tb[NFULA_IFINDEX_INDEV], MNL_TYPE_U32) == 0)
      ifindex = (int)ntohl(mnl_attr_get_u32(tb[NFULA_IFINDEX_INDEV]));
    note_twice(n, &ev, ifindex, monitor_now_ms());
  } else {
    netlog_note(&n->log, &ev, monitor_now_ms());
  }
  return MNL_CB_OK;
}

static void net_read(struct monitor *m, int fd, short revents, void *ctx)
{
  struct net *n = ctx;
  uint8_t buf[MNL_SOCKET_BUFFER_SIZE];
  struct sockaddr_nl from;
  socklen_t flen;

  /* At the end, what the socket holds is read whole, the budget spent or
   * not (a few hundred packets at most: it holds no more): a spent one left
   * the packets queued as the container ended unread, a refusal among them
   * neither recorded nor counted as lost (nflog-at-exit). */
  for (int i = 0; i < (m->ending ? 65536 : 256); i++) {
    ssize_t len;
    if (!m->ending && (FAILPOINT_FAILS("monitor-net-budget-spent") ||
                       !token_bucket_take(&n->budget, monitor_now_ms()))) {
      int e = 0;
      socklen_t el = sizeof e;
      /* an error is reported with no events asked for: take it (ENOBUFS
       * comes once per overrun), or epoll would report it at once again */
      if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) == 0 && e == ENOBUFS)
        n->overflowed = true;
      /* resumed by net_flush; a monitor that cannot stop polling reads on */
      if (monitor_rearm_fd(m, fd, 0) == 0)
        n->paused = true;
      return;
    }
    flen = sizeof from;
    len = recvfrom(fd, buf, sizeof buf, 0, (struct sockaddr *)&from, &flen);
    if (len < 0 && errno == ENOBUFS) {
      n->overflowed = true; /* recorded at the next flush, with the seq gap */
      continue;
    }
    if (len <= 0)
      return;
    /* only the kernel's (port 0): a process of the namespace with
     * CAP_NET_ADMIN could unicast forged packets to this port (nflog-forged) */
    if (flen != sizeof from || from.nl_family != AF_NETLINK || from.nl_pid != 0)
      continue;
    mnl_cb_run(buf, (size_t)len, 0, 0, packet_cb, n);
  }
}

/* The group's whole configuration in one NFULNL_MSG_CONFIG message,
 * checked by its one ack: the kernel applies the bind (NFULA_CFG_CMD)
 * first, then the mode, the queue threshold and the flags of the same
 * message.  One message each took three acked round trips before the
 * monitor's OK.  Numbered packets (NFULNL_CFG_F_SEQ, in the message that
 * was sent anyway): a gap counts a loss. */
static int bind_group(struct mnl_socket *nl, uint16_t group, struct error *err)
{
  struct nfulnl_msg_config_cmd cmd = {.command = NFULNL_CFG_CMD_BIND};
  struct nfulnl_msg_config_mode mode = {.copy_range = htonl(NET_COPY_RANGE),
                                        .copy_mode = NFULNL_COPY_PACKET};
  uint32_t qthresh = htonl(1); /* deliver each packet at once */
  uint8_t buf[MNL_SOCKET_BUFFER_SIZE];
  struct nlmsghdr *nlh;
  struct nfgenmsg *g;
  const uint32_t seq = 1;
  ssize_t n;

  if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0)
    return error_errno(err, "bind netfilter socket");
  nlh = mnl_nlmsg_put_header(buf);
  nlh->nlmsg_type = (NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_CONFIG;
  nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
  nlh->nlmsg_seq = seq;
  g = mnl_nlmsg_put_extra_header(nlh, sizeof *g);
  g->nfgen_family = AF_UNSPEC;
  g->version = NFNETLINK_V0;
  g->res_id = htons(group);
  mnl_attr_put(nlh, NFULA_CFG_CMD, sizeof cmd, &cmd);
  mnl_attr_put(nlh, NFULA_CFG_MODE, sizeof mode, &mode);
  mnl_attr_put(nlh, NFULA_CFG_QTHRESH, sizeof qthresh, &qthresh);
  mnl_attr_put_u16(nlh, NFULA_CFG_FLAGS, htons(NFULNL_CFG_F_SEQ));
  if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
    return error_errno(err, "nflog config");
  n = mnl_socket_recvfrom(nl, buf, sizeof buf);
  if (n < 0 || mnl_cb_run(buf, (size_t)n, seq, mnl_socket_get_portid(nl), NULL, NULL) < 0)
    return error_errno(err, "nflog group %u", group);
  return 0;
}

/* A NETLINK_NETFILTER socket inside the init's network namespace, and a
 * NETLINK_ROUTE one there in *ret_route (-1 = none); NULL and *ret_same
 * when that namespace is ours (the host's). */
static struct mnl_socket *socket_in_netns(pid_t init, bool in_userns, bool *ret_same,
                                          int *ret_route, struct error *err)
{
  char who[24];
  cleanup_close int own = procfs_open_ns("self", "net", err);
  cleanup_close int theirs = -1;
  struct mnl_socket *nl;
  struct stat a, b;
  int e;

  *ret_same = false;
  *ret_route = -1;
  snprintf(who, sizeof who, "%d", init);
  if (own < 0 || (theirs = procfs_open_ns(who, "net", err)) < 0)
    return NULL;
  if (fstat(own, &a) == 0 && fstat(theirs, &b) == 0 && a.st_ino == b.st_ino &&
      a.st_dev == b.st_dev) {
    *ret_same = true;
    return NULL;
  }
  /* Real root in the initial user namespace can step in and back (single
   * thread; the socket keeps its netns).  Under a user namespace (a rootless
   * engine) the way back is refused (EPERM), so a forked child makes it. */
  if (in_userns) {
    int domain[2] = {AF_NETLINK, AF_NETLINK},
        type[2] = {SOCK_RAW | SOCK_CLOEXEC, SOCK_RAW | SOCK_CLOEXEC},
        proto[2] = {NETLINK_NETFILTER, NETLINK_ROUTE}, fd[2] = {-1, -1};
    if (netns_sockets(theirs, 2, domain, type, proto, fd, err) < 0)
      return NULL;
    if ((nl = mnl_socket_fdopen(fd[0])) == NULL) {
      error_errno(err, "netfilter socket in the container's network namespace");
      close(fd[0]);
      close(fd[1]);
      return NULL;
    }
    *ret_route = fd[1];
    return nl;
  }
  if (setns(theirs, CLONE_NEWNET) < 0) {
    error_errno(err, "enter the container's network namespace");
    return NULL;
  }
  nl = mnl_socket_open2(NETLINK_NETFILTER, SOCK_CLOEXEC);
  e = errno;
  *ret_route = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (setns(own, CLONE_NEWNET) < 0)
    abort(); /* never run on in the container's netns */
  if (nl == NULL) {
    error_set(err, e, "netfilter socket in the container's network namespace");
    if (*ret_route >= 0)
      close(*ret_route);
    *ret_route = -1;
  }
  return nl;
}

int monitor_net_open(struct monitor *m, int group, struct error *err)
{
  struct net *n;
  struct mnl_socket *nl;
  bool same;
  int fd, route_fd;

  if (group < 0 || group > 65535)
    return error_set(err, EINVAL, "nflog group %d", group);
  nl = socket_in_netns(m->init_pid, m->in_userns, &same, &route_fd, err);
  if (nl == NULL)
    return same ? 0 : -1;
  if (bind_group(nl, (uint16_t)group, err) < 0) {
    mnl_socket_close(nl);
    if (route_fd >= 0)
      close(route_fd);
    return -1;
  }
  fd = mnl_socket_get_fd(nl);
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  n = mem_pages_alloc(sizeof *n); /* ~45 KiB of flow table, untouched while idle */
  n->nl = nl;
  n->fd = fd;
  n->route_fd = route_fd;
  token_bucket_init(&n->budget, NET_BURST, NET_RATE, monitor_now_ms());
  netlog_init(&n->log, MONITOR_COALESCE_MS, net_emit, m);
  n->log.admit = net_admit;
  if (monitor_add_fd(m, fd, POLLIN, net_read, n) < 0) {
    mnl_socket_close(nl);
    if (route_fd >= 0)
      close(route_fd);
    mem_pages_free(n, sizeof *n);
    return error_set(err, 0, "too many monitor sources");
  }
  monitor_set_flush(m, fd, net_flush);
  return 1;
}
