/* egress_helper.c - see egress_helper.h */
#include "monitor/egress_helper.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>

#include "audit/audit.h"
#include "audit/jbuf.h"
#include "common/log.h"
#include "common/util.h"
#include "netfilter/egress.h"
#include "os/fsutil.h"
#include "os/pid.h"
#include "os/procfs.h"

#define CTL_SOCK EGRESS_CTL_SOCK
#define CTL_MAX EGRESS_CTL_MAX

static int policy_from_profile(const struct profile_egress *pe, struct egress_policy *p,
                               struct error *err)
{
  egress_policy_init(p);
  p->default_allow = pe->def == PROFILE_EGRESS_ALLOW;
  p->allow_private_answers = pe->allow_private_answers;
  for (char **a = pe->allow; a && *a; a++) {
    struct egress_entry e;
    if (egress_entry_parse(*a, &e, err) < 0 || egress_policy_add(p, &e, err) < 0)
      return error_prefix(err, "egress.allow `%s`", *a);
  }
  p->ingress_default_allow = pe->ingress_default_allow;
  {
    uint64_t lo, hi; /* at most 7 days: profile/validate.c */
    egress_ttl_bounds(pe->has_ttl_min, pe->ttl_min, pe->has_ttl_max, pe->ttl_max, &lo, &hi);
    p->ttl_min = (uint32_t)lo;
    p->ttl_max = (uint32_t)hi;
  }
  for (char **a = pe->ingress_allow; a && *a; a++) {
    struct egress_port e;
    if (egress_port_parse(*a, &e, err) < 0 || egress_policy_add_port(p, &e, err) < 0)
      return error_prefix(err, "ingress.allow");
  }
  for (char **u = pe->dns_upstream; u && *u && p->n_upstream < EGRESS_MAX_UPSTREAM; u++)
    if (egress_upstream_parse(*u, &p->upstream[p->n_upstream++], err) < 0)
      return error_prefix(err, "egress.dns.upstream `%s`", *u);
  if (p->n_upstream == 0) {
    struct error ignore = {0};
    /* the host's resolvers; none is not fatal: allowed names then fail */
    if (egress_upstream_from_resolv_conf("/etc/resolv.conf", p, &ignore) < 0)
      log_debug("egress: no upstream resolver: %s", ignore.msg);
  }
  return 0;
}

static uint16_t proxy_port, proxy_child_port;
static uint32_t proxy_mark, proxy_child_gid;

void egress_helper_set_proxy(struct egress_helper *h, uint16_t port, uint32_t mark,
                             uint16_t child_port, uint32_t child_gid)
{
  proxy_port = port;
  proxy_mark = mark;
  proxy_child_port = child_port;
  proxy_child_gid = child_gid;
}

/* The IPv4 and IPv6 gateways of the container's namespace (every route's
 * next hops, every nexthop object's gateway) and the link addresses its
 * neighbour table already has for them, through fd (a NETLINK_ROUTE socket
 * made there; -1 = none): tables arp and ip6 agentrt pin them.  None when
 * unreadable or not routed yet. */
static void read_gw(int fd, struct nft_build_opts *bo)
{
  if (fd < 0)
    return;
  if (netns_gateways_read(fd, bo) < 0)
    log_warning("egress: the gateways of the container's netns: %s", strerror(errno));
}

/* gw: the gateways (read_gw) for a full build, NULL for an update */
static int send_batch(int nl_fd, const struct egress_policy *p, bool update,
                      const struct nft_build_opts *gw, struct error *err)
{
  struct nft_build_opts bo = {.seq_base = 1,
                              .dns_port = 53,
                              .update = update,
                              .proxy_port = proxy_port,
                              .proxy_mark = proxy_mark,
                              .proxy_child_port = proxy_child_port,
                              .proxy_child_gid = proxy_child_gid};
  struct nft_batch_buf b;
  int r;

  memset(&b, 0, sizeof b);
  if (gw != NULL) {
    bo.n_gw4 = gw->n_gw4;
    memcpy(bo.gw4, gw->gw4, sizeof bo.gw4);
    bo.n_gw6 = gw->n_gw6;
    memcpy(bo.gw6, gw->gw6, sizeof bo.gw6);
    memcpy(bo.gw6_mac, gw->gw6_mac, sizeof bo.gw6_mac);
    memcpy(bo.gw6_mac_known, gw->gw6_mac_known, sizeof bo.gw6_mac_known);
    bo.over4 = gw->over4;
    bo.over6 = gw->over6;
  }
  if (nft_build_batch(p, &bo, &b, err) < 0)
    return -1;
  r = nft_batch_send(nl_fd, &b, err);
  nft_batch_buf_free(&b);
  return r;
}

/* The resolver listens on 127.0.0.1 and a TCP reset for a denied connection
 * is delivered through `lo`: with `lo` down, DNS fails and refused
 * connections hang until their timeout.  Our own new namespaces have it up
 * (init.c); one joined by path is brought up here, through a socket that
 * lives in it (the ioctl acts on the socket's netns, never ours). */
static int loopback_up_in(int fd_in_netns, struct error *err)
{
  if (netns_lo_up(fd_in_netns) < 0)
    return error_errno(err, "egress: bring up `lo`");
  return 0;
}

/* ------------------------------------------------------------ the helper */

#define MAX_EXPIRIES 512
#define MAX_PIN_RECS 1024

struct pin_rec {
  struct nft_learned l; /* its timeout_ms unused */
  long until;           /* monotonic ms */
  char name[256];       /* the name asked, lower case */
};

struct egress_helper {
  struct egress_resolver_opts o;
  struct egress_policy *policy;
  int listen_fd;           /* <state dir>/egress.sock */
  struct audit_log *audit; /* the container's trail, NULL = none */
  bool (*admit)(void *ud, const char *kind, const char *detail); /* NULL = always */
  void *admit_ud;
  int diag_fd; /* NETLINK_SOCK_DIAG in the container's netns, -1 = none */
  /* when pins made by the resolver run out (monotonic ms): then the
   * sockets to addresses no longer allowed are cut */
  long expiries[MAX_EXPIRIES];
  size_t n_expiries;
  /* which name pinned what (the sets do not say), for a live deny of a
   * name: made at the first pin, MAX_PIN_RECS at most; past that a deny
   * flushes every pin as it did before */
  struct pin_rec *recs;
  size_t n_recs, cap_recs;
  /* the gateways pinned so far (tables arp and ip6 agentrt); route_fd is
   * an rtnetlink socket in the init's namespace subscribed to IPv4 and IPv6
   * route changes (its routes are read again when they change), neigh_fd one
   * for dumps of its IPv6 neighbour table (-1 = none) */
  int route_fd, neigh_fd;
  uint8_t gw4[NFT_MAX_GW4][4], gw6[NFT_MAX_GW4][16];
  size_t gw_n4, gw_n6;
  bool over4, over6; /* more gateways than NFT_MAX_GW4: the tables refuse the rest */
  bool recs_lost;
};

static long mono_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ------------------------------------------------ cutting what is no longer allowed */

struct pin {
  int family;
  uint8_t addr[16];
  uint8_t proto; /* 0 = every port */
  uint16_t port;
};

struct cut_ctx {
  const struct egress_policy *policy;
  struct pin *pins;
  size_t n_pins;
};

/* The kernel's dns sets, as `nft_set_list` prints them ("ADDR [tcp|udp PORT] expires ..."). */
static size_t read_pins(int nl_fd, struct pin **ret)
{
  static const char *const sets[] = {"dns4", "dns6", "dns4p", "dns6p"};
  struct pin *p = NULL;
  size_t n = 0, cap = 0;

  for (size_t i = 0; i < ARRAY_SIZE(sets); i++) {
    cleanup_free char *text = NULL;
    struct error e = {0};
    char *save = NULL;
    if (nft_set_list(nl_fd, sets[i], &text, &e) < 0 || text == NULL)
      continue;
    for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
      char a[INET6_ADDRSTRLEN + 1], proto[4] = "";
      unsigned port = 0;
      struct pin x = {0};
      if (sscanf(l, "%46s %3s %u", a, proto, &port) < 1)
        continue;
      x.family = strchr(a, ':') ? AF_INET6 : AF_INET;
      if (inet_pton(x.family, a, x.addr) != 1)
        continue;
      if (i >= 2 && port > 0 && port < 65536) {
        x.proto = strcmp(proto, "tcp") == 0 ? IPPROTO_TCP : IPPROTO_UDP;
        x.port = (uint16_t)port;
      }
      if (n == cap)
        p = xrealloc(p, (cap = cap * 2 + 16) * sizeof *p);
      p[n++] = x;
    }
  }
  *ret = p;
  return n;
}

static bool still_allowed(void *ud, const struct egress_sock *s)
{
  const struct cut_ctx *x = ud;

  if (egress_policy_allows_flow(x->policy, s))
    return true;
  for (size_t i = 0; i < x->n_pins; i++) {
    const struct pin *p = &x->pins[i];
    if (p->family == s->family && memcmp(p->addr, s->addr, s->family == AF_INET ? 4 : 16) == 0 &&
        (p->proto == 0 || (p->proto == s->proto && p->port == s->port)))
      return true;
  }
  return false;
}

/* After a deny or the expiry of pins: end the container's sockets whose peer
 * the rules no longer allow (the rules already stop their packets). */
static void cut_disallowed(struct egress_helper *h, const char *why)
{
  struct cut_ctx x = {.policy = h->o.policy};
  struct error err = {0};
  size_t cut = 0;

  if (h->o.policy->default_allow)
    return;
  if (h->diag_fd < 0) {
    error_set(&err, 0, "no sock_diag socket in the container's network namespace");
    goto out;
  }
  x.n_pins = read_pins(h->o.nl_fd, &x.pins);
  if (egress_sockets_cut(h->diag_fd, still_allowed, &x, &cut, &err) < 0)
    log_debug("egress: cut connections after %s: %s", why, err.msg);
out:
  if ((cut > 0 || err.msg[0]) && h->audit != NULL) {
    struct jbuf b = {0};
    struct error e = {0};
    jb_key_str(&b, "reason", why);
    jb_key_u64(&b, "connections", cut);
    if (err.msg[0])
      jb_key_str(&b, "error", err.msg);
    audit_log_append(h->audit, "cut", jb_str(&b), &e);
    jb_free(&b);
  }
  free(x.pins);
}

static void note_expiry(struct egress_helper *h, long at)
{
  size_t far = 0;

  if (h->n_expiries < MAX_EXPIRIES) {
    h->expiries[h->n_expiries++] = at;
    return;
  }
  for (size_t i = 1; i < MAX_EXPIRIES; i++) /* full: keep the earliest ones */
    if (h->expiries[i] > h->expiries[far])
      far = i;
  if (at < h->expiries[far])
    h->expiries[far] = at;
}

static bool same_pin(const struct nft_learned *a, const struct nft_learned *b)
{
  return a->family == b->family && a->proto == b->proto && a->port == b->port &&
         memcmp(a->addr, b->addr, a->family == AF_INET ? 4 : 16) == 0;
}

/* An allowed answer's pins, by name: kept until they run out. */
static void note_pins(struct egress_helper *h, const char *name, const struct nft_learned *l,
                      size_t n)
{
  long now = mono_ms();

  for (size_t i = 0; i < n; i++) {
    struct pin_rec *r = NULL;
    size_t k;
    for (k = 0; k < h->n_recs && r == NULL; k++)
      if (same_pin(&h->recs[k].l, &l[i]) && strcasecmp(h->recs[k].name, name) == 0)
        r = &h->recs[k];
    if (r == NULL && h->n_recs == h->cap_recs) {
      size_t kept = 0; /* make room: those run out first */
      for (k = 0; k < h->n_recs; k++)
        if (h->recs[k].until > now)
          h->recs[kept++] = h->recs[k];
      h->n_recs = kept;
    }
    if (r == NULL && h->n_recs == h->cap_recs) {
      if (h->cap_recs == MAX_PIN_RECS) {
        h->recs_lost = true;
        continue;
      }
      h->cap_recs = h->cap_recs ? h->cap_recs * 2 : 16;
      h->recs = xrealloc(h->recs, h->cap_recs * sizeof *h->recs);
    }
    if (r == NULL) {
      r = &h->recs[h->n_recs++];
      memset(r, 0, sizeof *r);
      r->l = l[i];
      for (k = 0; name[k] != '\0' && k < sizeof r->name - 1; k++)
        r->name[k] = (char)tolower((unsigned char)name[k]);
    }
    if (now + (long)l[i].timeout_ms > r->until)
      r->until = now + (long)l[i].timeout_ms;
  }
}

/* Gateways with no link address in the neighbour table when their table
 * was made: the namespace asks for them now (the tables are in place, so
 * the answer is pinned), not at the container's first packet, which left
 * a neighbour the time until then to have its own ARP or advertisement
 * pinned first (escape: first-answer-preemptive). */
static void gw_solicit(struct egress_helper *h, const struct nft_build_opts *gw)
{
  if (h->neigh_fd < 0)
    return;
  for (size_t i = 0; i < gw->n_gw4 && i < NFT_MAX_GW4; i++)
    if (!gw->gw4[i].mac_known &&
        netns_neigh_solicit(h->neigh_fd, AF_INET, gw->gw4[i].ip, gw->gw4[i].ifindex) < 0)
      log_debug("egress: ask for a gateway on device %d: %s", gw->gw4[i].ifindex, strerror(errno));
  for (size_t i = 0; i < gw->n_gw6 && i < NFT_MAX_GW4; i++)
    if (!gw->gw6_mac_known[i] &&
        netns_neigh_solicit(h->neigh_fd, AF_INET6, gw->gw6[i], gw->gw6_ifindex[i]) < 0)
      log_debug("egress: ask for a gateway on device %d: %s", gw->gw6_ifindex[i], strerror(errno));
}

/* The gateways of the namespace, read again (routes or nexthops changed):
 * those not pinned yet are added to tables arp and ip6 agentrt (made when
 * they were not), the tables there kept with their pins.  At most
 * NFT_MAX_GW4 of each version over the container's life; past them the
 * table of that version refuses every answer it has no pin for (once). */
static void gw_rescan(struct egress_helper *h)
{
  struct nft_build_opts now = {0};
  struct nft_build_opts bo = {
      .seq_base = 1, .arp_only = true, .keep4 = h->gw_n4 > 0, .keep6 = h->gw_n6 > 0};
  struct nft_batch_buf b;
  struct error e = {0};
  bool over4 = false, over6 = false;

  read_gw(h->neigh_fd, &now);
  for (size_t i = 0; i < now.n_gw4; i++) {
    bool known = false;
    for (size_t k = 0; k < h->gw_n4 && !known; k++)
      known = memcmp(h->gw4[k], now.gw4[i].ip, 4) == 0;
    if (!known && h->gw_n4 + bo.n_gw4 < NFT_MAX_GW4)
      bo.gw4[bo.n_gw4++] = now.gw4[i];
    else if (!known)
      over4 = true;
  }
  for (size_t i = 0; i < now.n_gw6; i++) {
    bool known = false;
    for (size_t k = 0; k < h->gw_n6 && !known; k++)
      known = memcmp(h->gw6[k], now.gw6[i], 16) == 0;
    if (!known && h->gw_n6 + bo.n_gw6 < NFT_MAX_GW4) {
      bo.gw6_ifindex[bo.n_gw6] = now.gw6_ifindex[i];
      bo.gw6_mac_known[bo.n_gw6] = now.gw6_mac_known[i];
      memcpy(bo.gw6_mac[bo.n_gw6], now.gw6_mac[i], 6);
      memcpy(bo.gw6[bo.n_gw6++], now.gw6[i], 16);
    } else if (!known) {
      over6 = true;
    }
  }
  bo.over4 = (over4 || now.over4) && !h->over4;
  bo.over6 = (over6 || now.over6) && !h->over6;
  if (bo.n_gw4 == 0 && bo.n_gw6 == 0 && !bo.over4 && !bo.over6)
    return;
  memset(&b, 0, sizeof b);
  if (nft_build_batch(h->policy, &bo, &b, &e) < 0 || nft_batch_send(h->o.nl_fd, &b, &e) < 0) {
    log_warning("egress: a gateway's link address is not pinned: %s", e.msg);
    nft_batch_buf_free(&b);
    return;
  }
  nft_batch_buf_free(&b);
  if (bo.over4 || bo.over6)
    log_warning("egress: more than %d gateways of one IP version: answers for the others "
                "are refused",
                NFT_MAX_GW4);
  h->over4 |= bo.over4;
  h->over6 |= bo.over6;
  for (size_t i = 0; i < bo.n_gw4; i++)
    memcpy(h->gw4[h->gw_n4++], bo.gw4[i].ip, 4);
  for (size_t i = 0; i < bo.n_gw6; i++)
    memcpy(h->gw6[h->gw_n6++], bo.gw6[i], 16);
  gw_solicit(h, &bo);
}

/* Route changes in the container's namespace (an engine's hook routes a new
 * namespace after the table is made, an operator adds a gateway): the
 * messages are read out, the gateways read again whole. */
static void on_route(void *ud)
{
  struct egress_helper *h = ud;
  char buf[8192];

  for (int i = 0; i < 256; i++) {
    ssize_t n = recv(h->route_fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n <= 0 && !(n < 0 && errno == ENOBUFS)) /* ENOBUFS: some lost, read again all the same */
      break;
  }
  gw_rescan(h);
}

/* Once a second at least: pins that ran out (the kernel stopped matching
 * them) end their connections. */
static void on_tick(void *ud)
{
  struct egress_helper *h = ud;
  long now = mono_ms();
  size_t kept = 0;
  bool due = false;

  for (size_t i = 0; i < h->n_expiries; i++) {
    if (h->expiries[i] <= now)
      due = true;
    else
      h->expiries[kept++] = h->expiries[i];
  }
  h->n_expiries = kept;
  if (due)
    cut_disallowed(h, "pin expired");
}

void egress_helper_set_admit(struct egress_helper *h,
                             bool (*admit)(void *ud, const char *kind, const char *detail),
                             void *ud)
{
  h->admit = admit;
  h->admit_ud = ud;
}

/* Every DNS decision of the resolver is a "dns" record in the audit trail. */
static void on_dns_event(void *ud, const struct egress_dns_event *ev)
{
  static const char *const verdicts[] = {"allowed", "refused", "rebind", "failed", "nodata"};
  struct egress_helper *h = ud;
  struct jbuf b = {0};
  struct error err = {0};
  char addr[INET6_ADDRSTRLEN];

  if (ev->verdict == EGRESS_DNS_ALLOWED) {
    uint32_t longest = 0;
    for (size_t i = 0; i < ev->n_addrs; i++)
      if (ev->addrs[i].timeout_ms > longest)
        longest = ev->addrs[i].timeout_ms;
    if (longest > 0)
      note_expiry(h, mono_ms() + longest + 20); /* + the kernel's own timer slack */
    note_pins(h, ev->name, ev->addrs, ev->n_addrs);
  }
  if (h->audit == NULL)
    return;
  if (h->admit != NULL &&
      !h->admit(h->admit_ud, "dns",
                (size_t)ev->verdict < ARRAY_SIZE(verdicts) ? verdicts[ev->verdict] : "?"))
    return;
  jb_key_str(&b, "name", ev->name);
  jb_key_i64(&b, "qtype", ev->qtype);
  jb_key_str(&b, "verdict",
             (size_t)ev->verdict < ARRAY_SIZE(verdicts) ? verdicts[ev->verdict] : "?");
  jb_key(&b, "addrs");
  jb_puts(&b, "[");
  for (size_t i = 0; i < ev->n_addrs; i++) {
    inet_ntop(ev->addrs[i].family, ev->addrs[i].addr, addr, sizeof addr);
    jb_puts(&b, i > 0 ? "," : "");
    jb_quote(&b, addr, strlen(addr));
  }
  jb_puts(&b, "]");
  if (ev->detail)
    jb_key_str(&b, "detail", ev->detail);
  audit_log_append(h->audit, "dns", jb_str(&b), &err);
  jb_free(&b);
}

/* Lookups the resolver never read (its budget spent, or held up): a loss
 * the trail says it has, with the count, like the other sources' losses. */
static void on_dns_lost(void *ud, uint64_t lookups)
{
  struct egress_helper *h = ud;
  struct jbuf b = {0};
  struct error err = {0};

  if (h->audit == NULL)
    return;
  jb_key_str(&b, "source", "dns");
  jb_key_bool(&b, "lost", true);
  jb_key_u64(&b, "lost_events", lookups);
  jb_key_str(&b, "error", "DNS lookups lost (the resolver's queue overflowed)");
  audit_log_append(h->audit, "audit_error", jb_str(&b), &err);
  jb_free(&b);
}

static void reply(int fd, const char *s)
{
  ssize_t r = send(fd, s, strlen(s), MSG_NOSIGNAL);
  (void)r;
}

static void ctl_list(struct egress_helper *h, int fd)
{
  const struct egress_policy *p = h->o.policy;
  char buf[EGRESS_ENTRY_STR_MAX];

  reply(fd, p->default_allow ? "default allow\n" : "default deny\n");
  for (size_t i = 0; i < p->n_entries; i++) {
    egress_entry_format(&p->entries[i], buf);
    reply(fd, "allow ");
    reply(fd, buf);
    reply(fd, "\n");
  }
  reply(fd, p->ingress_default_allow ? "ingress default allow\n" : "ingress default deny\n");
  for (size_t i = 0; i < p->n_ingress; i++) {
    char port[32];
    egress_port_format(&p->ingress[i], port);
    reply(fd, "ingress ");
    reply(fd, port);
    reply(fd, "\n");
  }
  /* dns4p/dns6p: addresses of names allowed with a port ("x.org:443") */
  static const char *const sets[] = {"dns4", "dns6", "dns4p", "dns6p"};

  for (size_t s = 0; s < ARRAY_SIZE(sets); s++) {
    cleanup_free char *elems = NULL;
    struct error e = {0};
    if (nft_set_list(h->o.nl_fd, sets[s], &elems, &e) == 0 && elems) {
      for (char *l = strtok(elems, "\n"); l; l = strtok(NULL, "\n")) {
        reply(fd, "pinned ");
        reply(fd, l);
        reply(fd, "\n");
      }
    }
  }
}

/* Every pin goes (a deny past the records of which name pinned what). */
static int flush_pins(int nl_fd, struct error *err)
{
  struct nft_batch_buf b;
  int r;

  memset(&b, 0, sizeof b);
  if (nft_build_dns_flush(1, &b, err) < 0)
    return -1;
  r = nft_batch_send(nl_fd, &b, err);
  nft_batch_buf_free(&b);
  return r;
}

/* Would the policy pin this for the record's name now (resolver.c's
 * learn_one: a port-less entry pins the address, one with a port the
 * address with its protocol and first port)? */
static bool pin_allowed(const struct egress_policy *p, const struct pin_rec *r)
{
  const struct egress_entry *m[8];
  size_t n = egress_policy_match_name(p, r->name, m, ARRAY_SIZE(m));

  for (size_t i = 0; i < n && i < ARRAY_SIZE(m); i++) {
    if (m[i]->port_min == 0 ? r->l.proto == 0
                            : r->l.proto != 0 && r->l.port == m[i]->port_min &&
                                  (m[i]->proto == 0 || m[i]->proto == r->l.proto))
      return true;
  }
  return false;
}

/* A domain denied live: the pins of names the policy no longer allows go,
 * but those another allowed name holds too (a shared address); the pins of
 * names still allowed stay, and so do their connections.  Without the
 * records (more than MAX_PIN_RECS pins) every pin goes. */
static int unpin_denied(struct egress_helper *h, struct error *err)
{
  long now = mono_ms();
  size_t kept = 0;
  int r = 0;

  if (h->recs_lost) {
    h->n_recs = 0;
    h->recs_lost = false;
    return flush_pins(h->o.nl_fd, err);
  }
  for (size_t i = 0; i < h->n_recs; i++) {
    struct pin_rec *x = &h->recs[i];
    bool held = false;
    if (pin_allowed(h->o.policy, x)) {
      if (x->until > now)
        h->recs[kept++] = *x;
      continue;
    }
    for (size_t k = 0; k < h->n_recs && !held; k++)
      held = k != i && h->recs[k].until > now && same_pin(&h->recs[k].l, &x->l) &&
             pin_allowed(h->o.policy, &h->recs[k]);
    if (!held) {
      struct nft_batch_buf b;
      struct error e = {0};
      memset(&b, 0, sizeof b);
      if (nft_build_unlearn(&x->l, 1, &b, &e) == 0 && nft_batch_send(h->o.nl_fd, &b, &e) < 0 &&
          e.code != ENOENT && r == 0) /* ENOENT: it ran out meanwhile */
        r = error_set(err, e.code, "%s", e.msg);
      nft_batch_buf_free(&b);
    }
  }
  h->n_recs = kept;
  return r;
}

/* One control request: "list", "allow ENTRY" or "deny ENTRY". */
static int on_ctl(void *ud, struct egress_policy *p)
{
  struct egress_helper *h = ud;
  char req[CTL_MAX + 1];
  struct error err = {0};
  ssize_t n;
  struct timeval tv = {.tv_sec = 1};
  int fd = accept4(h->listen_fd, NULL, NULL, SOCK_CLOEXEC);

  if (fd < 0)
    return 0;
  /* the resolver waits while we talk: a client that stalls must not stop DNS */
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  n = recv(fd, req, CTL_MAX, 0);
  if (n <= 0) {
    close(fd);
    return 0;
  }
  req[n] = '\0';
  req[strcspn(req, "\n")] = '\0';
  if (strcmp(req, "list") == 0) {
    ctl_list(h, fd);
  } else if (strncmp(req, "allow ", 6) == 0 || strncmp(req, "deny ", 5) == 0) {
    /* "allow E1 E2 ...": all parsed first, then applied, then one batch */
    struct egress_entry ents[64];
    bool allow = req[0] == 'a', domain = false;
    char *save = NULL;
    size_t n_ents = 0;
    int r = 0;
    for (char *arg = strtok_r(req + (allow ? 6 : 5), " ", &save); arg && r == 0;
         arg = strtok_r(NULL, " ", &save)) {
      if (n_ents == ARRAY_SIZE(ents))
        r = error_set(&err, 0, "more than %zu entries in one request", ARRAY_SIZE(ents));
      else if (egress_entry_parse(arg, &ents[n_ents], &err) < 0)
        r = error_prefix(&err, "`%s`", arg);
      else
        n_ents++;
    }
    if (r == 0 && n_ents == 0)
      r = error_set(&err, 0, "no entry");
    for (size_t i = 0; r == 0 && i < n_ents; i++) {
      r = allow ? egress_policy_add(p, &ents[i], &err) : egress_policy_remove(p, &ents[i], &err);
      domain |= ents[i].kind == EGRESS_DOMAIN;
    }
    if (r == 0)
      r = send_batch(h->o.nl_fd, p, true, NULL, &err);
    if (r == 0 && !allow && domain)
      r = unpin_denied(h, &err);
    if (r == 0 && !allow)
      cut_disallowed(h, "deny");
    reply(fd, r == 0 ? "ok\n" : "error ");
    if (r < 0) {
      reply(fd, err.msg);
      reply(fd, "\n");
    }
  } else if (strncmp(req, "ingress ", 8) == 0) {
    /* "ingress P1 P2 ...": a pod container's inbound ports, added to the pod's */
    char *save = NULL;
    int r = 0;
    for (char *arg = strtok_r(req + 8, " ", &save); arg && r == 0;
         arg = strtok_r(NULL, " ", &save)) {
      struct egress_port pt;
      r = egress_port_parse(arg, &pt, &err) < 0 ? -1 : egress_policy_add_port(p, &pt, &err);
    }
    if (r == 0)
      r = send_batch(h->o.nl_fd, p, true, NULL, &err);
    reply(fd, r == 0 ? "ok\n" : "error ");
    if (r < 0) {
      reply(fd, err.msg);
      reply(fd, "\n");
    }
  } else {
    reply(fd, "error unknown request\n");
  }
  close(fd);
  return 0;
}

static int ctl_listen(int dirfd, struct error *err)
{
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  char path[64];
  int fd;

  /* bind through /proc/self/fd so long state paths do not hit sun_path's limit */
  snprintf(path, sizeof path, "/proc/self/fd/%d/" CTL_SOCK, dirfd);
  snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
  fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0)
    return error_errno(err, "egress: control socket");
  unlinkat(dirfd, CTL_SOCK, 0);
  if (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(fd, 8) < 0) {
    error_errno(err, "egress: bind control socket");
    close(fd);
    return -1;
  }
  return fd;
}

int egress_helper_new(const struct profile_egress *pe, uint64_t upstream_start,
                      struct egress_helper **ret, struct error *err)
{
  struct egress_helper *h;

  *ret = NULL;
  if (pe == NULL || pe->def == PROFILE_EGRESS_OFF)
    return 0;
  h = xmalloc0(sizeof *h);
  h->listen_fd = -1;
  h->diag_fd = -1;
  h->route_fd = h->neigh_fd = -1;
  h->o.nl_fd = h->o.udp4_fd = h->o.udp6_fd = h->o.tcp4_fd = h->o.tcp6_fd = -1;
  h->o.stop_fd = h->o.ctl_fd = h->o.aux_fd = -1;
  h->policy = xmalloc0(sizeof *h->policy);
  h->o.policy = h->policy;
  if (pe->dns_upstream_netns != NULL) {
    /* pid-reuse-subagent-dns: /proc/PID/ns/net of a parent's init that may have died, its
     * pid taken by a host process: opened only while PID is that init (its start time) */
    h->o.upstream_netns_fd =
        upstream_start != 0
            ? proc_open_ns_path_identified(pe->dns_upstream_netns, upstream_start, err)
            : -2;
    if (h->o.upstream_netns_fd == -1) {
      error_prefix(err, "egress: dns.upstreamNetns `%s`", pe->dns_upstream_netns);
      egress_helper_free(h);
      return -1;
    }
    if (h->o.upstream_netns_fd == -2)
      h->o.upstream_netns_fd = open(pe->dns_upstream_netns, O_RDONLY | O_CLOEXEC);
    if (h->o.upstream_netns_fd < 0) {
      error_errno(err, "egress: dns.upstreamNetns `%s`", pe->dns_upstream_netns);
      egress_helper_free(h);
      return -1;
    }
    h->o.has_upstream_netns = true;
  }
  if (policy_from_profile(pe, h->policy, err) < 0) {
    egress_helper_free(h);
    return -1;
  }
  *ret = h;
  return 0;
}

int egress_helper_attach(struct egress_helper *h, pid_t init_pid, int state_dirfd,
                         struct audit_log *audit, struct error *err)
{
  cleanup_close int netns = -1;
  struct nft_build_opts gw = {0};
  char who[32];

  snprintf(who, sizeof who, "%d", init_pid);
  netns = procfs_open_ns(who, "net", err);
  if (netns < 0)
    return -1;
  /* refuses the runtime's own netns: never rules in the host's namespace */
  if (egress_resolver_open(netns, 53, &h->o, err) < 0) {
    if (err->code == EADDRINUSE)
      return error_set(err, EADDRINUSE,
                       "egress: the network namespace already has an agentrt egress policy "
                       "(another container's); one policy per network namespace: a pod's "
                       "containers share their sandbox's (annotation "
                       "io.kubernetes.cri.sandbox-id or io.kubernetes.cri-o.SandboxID), a "
                       "container joining another's namespace shares its policy when both "
                       "run under the same agentrt root");
    return -1;
  }
  {
    /* made by one child in the namespace: sock_diag, to cut connections a
     * deny or an expired pin no longer allows (without it the rules still
     * stop their packets), and two rtnetlink ones, for the IPv6 gateways'
     * link addresses (pinned by table ip6 agentrt) and for route changes
     * (gateways routed later, by an engine's hook or an operator) */
    int domain[3] = {AF_NETLINK, AF_NETLINK, AF_NETLINK},
        type[3] = {SOCK_RAW | SOCK_CLOEXEC, SOCK_RAW | SOCK_CLOEXEC,
                   SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK},
        proto[3] = {NETLINK_SOCK_DIAG, NETLINK_ROUTE, NETLINK_ROUTE}, fds[3] = {-1, -1, -1};
    struct sockaddr_nl sub = {.nl_family = AF_NETLINK,
                              .nl_groups = RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_ROUTE};
    int nexthops = RTNLGRP_NEXTHOP;
    struct error e = {0};
    if (netns_sockets(netns, 3, domain, type, proto, fds, &e) < 0)
      log_debug("egress: sock_diag and rtnetlink in the container's netns: %s", e.msg);
    h->diag_fd = fds[0];
    h->neigh_fd = fds[1];
    /* subscribed before the routes are read: no change between is missed */
    if (fds[2] >= 0 && bind(fds[2], (struct sockaddr *)&sub, sizeof sub) < 0) {
      log_warning("egress: route changes in the container's netns: %s", strerror(errno));
      close(fds[2]);
      fds[2] = -1;
    }
    /* a nexthop object replaced (`ip nexthop replace`) moves its routes'
     * gateway with no route message (escape: nexthop-gateway); a kernel
     * without them refuses the group, and has none to replace */
    if (fds[2] >= 0 &&
        setsockopt(fds[2], SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &nexthops, sizeof nexthops) < 0)
      log_debug("egress: nexthop changes in the container's netns: %s", strerror(errno));
    h->route_fd = fds[2];
    read_gw(h->neigh_fd, &gw);
  }
  if (loopback_up_in(h->o.udp4_fd, err) < 0 ||
      send_batch(h->o.nl_fd, h->policy, false, &gw, err) < 0)
    return -1;
  for (size_t i = 0; i < gw.n_gw4 && i < NFT_MAX_GW4; i++)
    memcpy(h->gw4[h->gw_n4++], gw.gw4[i].ip, 4);
  for (size_t i = 0; i < gw.n_gw6 && i < NFT_MAX_GW4; i++)
    memcpy(h->gw6[h->gw_n6++], gw.gw6[i], 16);
  h->over4 = gw.over4;
  h->over6 = gw.over6;
  gw_solicit(h, &gw);
  if ((h->listen_fd = ctl_listen(state_dirfd, err)) < 0)
    return -1;
  h->audit = audit;
  return 0;
}

int egress_helper_run(struct egress_helper *h, int stop_fd, int aux_fd, int (*on_aux)(void *ud),
                      void *aux_ud, struct error *err)
{
  h->o.stop_fd = stop_fd;
  h->o.ctl_fd = h->listen_fd;
  h->o.on_ctl = on_ctl;
  h->o.on_event = on_dns_event;
  h->o.on_lost = on_dns_lost;
  h->o.on_tick = on_tick;
  h->o.route_fd = h->route_fd;
  h->o.on_route = h->route_fd >= 0 ? on_route : NULL;
  h->o.ud = h;
  h->o.aux_fd = aux_fd;
  h->o.on_aux = on_aux;
  h->o.aux_ud = aux_ud;
  return egress_resolver_run(&h->o, err);
}

void egress_helper_release_ports(struct egress_helper *h)
{
  int *fds[] = {&h->o.udp4_fd, &h->o.udp6_fd, &h->o.tcp4_fd, &h->o.tcp6_fd, &h->listen_fd};

  for (size_t i = 0; i < ARRAY_SIZE(fds); i++) {
    if (*fds[i] >= 0)
      close(*fds[i]);
    *fds[i] = -1;
  }
}

void egress_helper_free(struct egress_helper *h)
{
  if (h == NULL)
    return;
  if (h->listen_fd >= 0)
    close(h->listen_fd);
  if (h->diag_fd >= 0)
    close(h->diag_fd);
  if (h->route_fd >= 0)
    close(h->route_fd);
  if (h->neigh_fd >= 0)
    close(h->neigh_fd);
  egress_resolver_close(&h->o);
  if (h->o.has_upstream_netns)
    close(h->o.upstream_netns_fd);
  egress_policy_free(h->policy);
  free(h->policy);
  free(h->recs);
  free(h);
}

/* --------------------------------------------------------- control client */

int egress_ctl(int dirfd, const char *id, const char *req, FILE *out, struct error *err)
{
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  cleanup_close int fd = -1;
  char buf[4096];
  ssize_t n;

  snprintf(sa.sun_path, sizeof sa.sun_path, "/proc/self/fd/%d/" CTL_SOCK, dirfd);
  fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0)
    return error_errno(err, "egress `%s`: no egress policy helper (is the profile's egress off?)",
                       id);
  if (send(fd, req, strlen(req), MSG_NOSIGNAL) < 0)
    return error_errno(err, "egress `%s`: send", id);
  shutdown(fd, SHUT_WR);
  while ((n = recv(fd, buf, sizeof buf - 1, 0)) > 0) {
    buf[n] = '\0';
    if (strncmp(buf, "error ", 6) == 0) {
      buf[strcspn(buf, "\n")] = '\0';
      return error_set(err, 0, "egress `%s`: %s", id, buf + 6);
    }
    if (out != NULL && strcmp(buf, "ok\n") != 0)
      fputs(buf, out);
  }
  return 0;
}
