/* egress.h - the egress allowlist: policy, nftables rules, DNS pinning.
 *
 * Three layers, each usable alone:
 *   1. policy (policy.c): the allow entries (parsed by the one grammar,
 *      common/egress_grammar.h) as a policy, and matching.  Pure, fuzzed.
 *   2. nftables (nft.c, nft_apply.c): build ONE netlink batch for table
 *      `inet agentrt` (pure, deterministic bytes, golden-tested) and send it
 *      into a container's network namespace, checking every ack.  Nothing
 *      here ever touches the caller's own netns: sockets are opened inside
 *      the target netns by a short-lived child (netns.c) and handed back.
 *   3. resolver (resolver.c): the per-container DNS proxy.  It answers only
 *      allowlisted names, forwards them upstream from the host netns and
 *      adds the answers' addresses to the `dns4`/`dns6` sets (element timeout
 *      = clamped TTL) before replying, so the connection that follows is
 *      allowed and nothing else is.
 *
 * Ruleset (family inet, table `agentrt`):
 *   chain output  { type filter hook output priority 0; policy drop (accept
 *                   for default allow);
 *     ct state new,invalid,untracked ip saddr != 0.0.0.0
 *       fib saddr type != local goto spoofed;   (ip6 saddr != :: likewise)
 *                                         # IPV6_FREEBIND sends from any address
 *     exthdr rt exists goto deny;         # a routing header hides the destination
 *     ip hdrlength != 5 goto deny;        # so do IPv4 options (LSRR, SSRR)
 *     oif lo accept; ip daddr 127.0.0.0/8 accept; ip6 daddr ::1 accept;
 *     ct state related accept; ct direction reply accept;
 *                                         # every packet of the container's own
 *                                         # flows goes through the rules below
 *     icmpv6 type {nd-router-solicit, nd-neighbor-solicit, nd-neighbor-advert}
 *       ip6 hoplimit 255 accept;         # no MLD: reports go to deny
 *     jump allow_ll;                      # explicit link-local entries
 *     ip daddr 169.254.0.0/16 goto deny; ip6 daddr {fe80::/10, fd00:ec2::254} goto deny;
 *     ip daddr @allow4 goto allowed; ip6 daddr @allow6 goto allowed;
 *     ip daddr @dns4 goto allowed; ip6 daddr @dns6 goto allowed;
 *     ip daddr . meta l4proto . th dport @dns4p goto allowed; (ip6 / dns6p too)
 *     jump allow_ports;
 *     goto deny }                         # "goto allowed" for default allow
 *   chain input   { type filter hook input priority 0; policy drop (accept
 *                   for ingress default allow);
 *     iif lo accept; icmp type redirect goto in_deny;
 *     ct state established,related accept;
 *     icmpv6 type nd-neighbor-solicit ip6 hoplimit 255 accept;
 *     icmpv6 type nd-neighbor-advert ip6 hoplimit 255 (solicited flag) accept;
 *     icmpv6 type {nd-router-advert, nd-neighbor-advert, nd-redirect} goto in_deny;
 *     <l4proto> dport <listed port> goto in_allowed; ...   # ingress.allow
 *     goto in_deny }
 *   chain in_allowed { ct state new ct status ! confirmed
 *                        log prefix "agentrt-in-flow: " group N; accept }
 *   chain in_deny { counter log prefix "agentrt-in-deny: " group N;
 *                   meta l4proto tcp reject with tcp reset; drop }
 *   chain allowed { ct state new ct status ! confirmed
 *                     log prefix "agentrt-flow: " group N;  # first packet of a flow
 *                   accept }
 *   chain allow_ll, allow_ports { <entry match> goto allowed; ... }
 *   chain deny    { counter log prefix "agentrt-deny: " group N;
 *                   meta l4proto tcp reject with tcp reset;
 *                   reject with icmpx admin-prohibited }
 *   chain spoofed { counter log prefix "agentrt-spoof: " group N; drop }
 *                                         # no ICMP error to the forged source
 *   chain nat_out { type nat hook output priority -100;
 *                   udp/tcp dport 53 redirect to :dns_port }   # when dns_port != 0
 * And tables `arp agentrt` and `ip6 agentrt` (nft_arp.c): each gateway
 * pinned to one link address, ARP or a solicited neighbour advertisement for
 * its address with another dropped, counted and logged (prefixes agentrt-arp-pin:
 * and agentrt-na-pin:; past the gateways the tables hold, agentrt-arp-over: and
 * agentrt-na-over:).
 * Redirected DNS leaves through `lo`, so only agentrt's resolver (listening
 * on 127.0.0.1 and ::1 at dns_port inside the netns) is ever reachable; it
 * is accepted before chain allowed, so DNS is not logged as a flow (the
 * resolver reports its decisions itself).  Without a log group (-1) chain
 * allowed only accepts.
 */
#ifndef AGENTRT_NETFILTER_EGRESS_H
#define AGENTRT_NETFILTER_EGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/egress_grammar.h"
#include "common/error.h"

/* ---------------------------------------------------------------- policy */

struct egress_policy {
  bool default_allow;         /* "default": "allow"|"deny" (deny when absent) */
  bool allow_private_answers; /* DNS answers may point at private/loopback/link-local */
  struct egress_entry *entries;
  size_t n_entries;
  struct egress_upstream upstream[EGRESS_MAX_UPSTREAM]; /* none = caller fills */
  size_t n_upstream;
  uint32_t ttl_min, ttl_max;  /* seconds, element timeouts are clamped to it */
  int log_group;              /* NFLOG group for denied packets and new allowed
                                 flows, -1 = no log */
  bool ingress_default_allow; /* new inbound connections: refused unless listed */
  struct egress_port *ingress;
  size_t n_ingress;
};

/* NFLOG prefixes of the kinds of logged packets (same group): outbound
 * denied packets and new flows, inbound refused packets and new flows. */
#define EGRESS_LOG_DENY_PREFIX "agentrt-deny: "
#define EGRESS_LOG_FLOW_PREFIX "agentrt-flow: "
#define EGRESS_LOG_IN_DENY_PREFIX "agentrt-in-deny: "
#define EGRESS_LOG_IN_FLOW_PREFIX "agentrt-in-flow: "
/* outbound packets whose source address is not the container's (dropped) */
#define EGRESS_LOG_SPOOF_PREFIX "agentrt-spoof: "
/* inbound ARP (table arp agentrt) and solicited neighbour advertisements
 * (table ip6 agentrt) naming a gateway's address with another link address
 * than its pinned one (dropped) */
#define EGRESS_LOG_ARP_PIN_PREFIX "agentrt-arp-pin: "
#define EGRESS_LOG_NA_PIN_PREFIX "agentrt-na-pin: "
/* the same past NFT_MAX_GW4 gateways of a version (over4, over6): any other
 * address's ARP, any other target's solicited advertisement (dropped) */
#define EGRESS_LOG_ARP_OVER_PREFIX "agentrt-arp-over: "
#define EGRESS_LOG_NA_OVER_PREFIX "agentrt-na-over: "
/* a gateway's first answer, pinned (accepted; the monitor keeps its link
 * address, recorded only if a second one follows), and the answers refused
 * because two link addresses answered for it within NFT_GW_WINDOW_MS of the
 * first (first-answer-race): every answer for that gateway after is refused
 * too, with the same prefix (dropped) */
#define EGRESS_LOG_ARP_FIRST_PREFIX "agentrt-arp-first: "
#define EGRESS_LOG_NA_FIRST_PREFIX "agentrt-na-first: "
#define EGRESS_LOG_ARP_TWICE_PREFIX "agentrt-arp-twice: "
#define EGRESS_LOG_NA_TWICE_PREFIX "agentrt-na-twice: "

/* True for entries inside 169.254.0.0/16, fe80::/10 or fd00:ec2::254: those
 * live in chain allow_ll, before the metadata block. */
bool egress_entry_is_link_local(const struct egress_entry *e);

/* Add an ingress entry (ignored when already present). */
int egress_policy_add_port(struct egress_policy *p, const struct egress_port *e, struct error *err);

/* Defaults: deny, no entries, ttl 5..3600 s, log group 0, no upstream. */
void egress_policy_init(struct egress_policy *p);
void egress_policy_free(struct egress_policy *p);
/* Add (ignored when already present) or remove (-1 when absent) an entry. */
int egress_policy_add(struct egress_policy *p, const struct egress_entry *e, struct error *err);
int egress_policy_remove(struct egress_policy *p, const struct egress_entry *e, struct error *err);
/* Fill p->upstream from `nameserver` lines of a resolv.conf (the host's). */
int egress_upstream_from_resolv_conf(const char *path, struct egress_policy *p, struct error *err);

/* Domain matching, for the resolver.  `name` is a DNS name, any case, with
 * or without the final dot.  Returns the number of matching domain entries
 * and stores up to max of them in ret. */
size_t egress_policy_match_name(const struct egress_policy *p, const char *name,
                                const struct egress_entry **ret, size_t max);
/* Is a v4 (len 4) / v6 (len 16) address private, loopback, link-local,
 * multicast or otherwise not a public unicast destination? */
bool egress_addr_is_private(const uint8_t *addr, size_t len);
/* The IPv4 addresses an IPv6 address carries (mapped, compatible, NAT64
 * 64:ff9b::/96, 6to4, Teredo's server and client), which the kernel, a
 * NAT64 gateway or a relay reaches: up to max of them into ret. */
size_t egress_addr_embedded_v4(const uint8_t *addr, uint8_t ret[][4], size_t max);
/* Is the address covered by one of the policy's CIDR entries? */
bool egress_policy_allows_addr(const struct egress_policy *p, const uint8_t *addr, size_t len);

/* ------------------------------------------------------------- nftables */

#define NFT_TABLE_NAME "agentrt"

/* the gateways of each IP version pinned over a container's life; past
 * them the table refuses every answer it has no pin for (over4, over6) */
#define NFT_MAX_GW4 16
/* after a gateway's first answer (one not in the neighbour table at
 * install), another link address answering for it within this window
 * makes the tables refuse that gateway for the container's life (kept by
 * the kernel: an element with this timeout, first-answer-race) */
#define NFT_GW_WINDOW_MS 2000

struct nft_build_opts {
  uint32_t seq_base; /* first sequence number (tests: 1) */
  uint16_t dns_port; /* resolver port inside the netns; 0 = no redirect */
  /* the TLS proxy's port inside the netns (monitor/tls_proxy.h), 0 = none:
   * new TCP connections to ports 443 and 80 but loopback's and those of
   * sockets marked proxy_mark (the proxy's own) are redirected there */
  uint16_t proxy_port;
  uint32_t proxy_mark;
  /* with proxy_port: connections to 443 and 80 of sockets whose group is
   * proxy_child_gid (a sub-agent's slirp4netns) go to proxy_child_port
   * instead, where no secret of the container's is put in; 0 = none */
  uint16_t proxy_child_port;
  uint32_t proxy_child_gid;
  bool update; /* refill allow4/allow6/allow_ll/allow_ports of an
                  existing table, keep dns* sets (live allow/deny) */
  /* full builds: the namespace's IPv4 gateways (egress_gw_nl_parse), each
   * pinned to its first link address by table `arp agentrt` (nft_arp.c);
   * none = no such table */
  size_t n_gw4;
  size_t n_gw6; /* the IPv6 gateways (egress_gw_nl_parse): table ip6 agentrt */
  uint8_t gw6[NFT_MAX_GW4][16];
  uint8_t gw6_mac[NFT_MAX_GW4][6]; /* valid in the neighbour table already */
  bool gw6_mac_known[NFT_MAX_GW4];
  int gw6_ifindex[NFT_MAX_GW4]; /* the device of its route, 0 = none said */
  /* more gateways of that version than NFT_MAX_GW4: the table refuses (and
   * logs) every ARP packet, or solicited advertisement, it has no pin for,
   * so that one past them is refused, never open to a forged answer */
  bool over4, over6;
  bool arp_only; /* only tables arp and ip6 agentrt (gateways routed later) */
  /* with arp_only: table arp (keep4) or ip6 agentrt (keep6) exists and is
   * kept, with its pins; o's gateways of that version are added to it */
  bool keep4, keep6;
  struct nft_gw4 {
    uint8_t ip[4];
    uint8_t mac[6];
    bool mac_known; /* complete in the neighbour table already: pinned now */
    int ifindex;    /* the device of its route, 0 = none said */
  } gw4[NFT_MAX_GW4];
};

/* What each message of a batch is, for error reports. */
struct nft_batch_msg {
  uint32_t seq;
  char what[72]; /* "add set `allow4`" */
};

struct nft_batch_buf {
  uint8_t *data;
  size_t len, cap;
  uint32_t seq_next;
  struct nft_batch_msg *msgs; /* acked messages (not begin/end) */
  size_t n_msgs, cap_msgs;
};

void nft_batch_buf_free(struct nft_batch_buf *b);
/* Build the whole ruleset (or its update) as one batch.  Pure. */
int nft_build_batch(const struct egress_policy *p, const struct nft_build_opts *o,
                    struct nft_batch_buf *ret, struct error *err);
/* The gateways of a namespace from the rtnetlink messages of its dumps
 * (buf, len: what one recv gave), into o->gw4 and o->gw6 (duplicates once,
 * past NFT_MAX_GW4 o->over4/over6 set): the next hops of RTM_NEWROUTE
 * (RTA_GATEWAY, RTA_VIA, each of RTA_MULTIPATH's), the gateway of every
 * nexthop object (RTM_NEWNEXTHOP: a route's RTA_NH_ID, a group's members,
 * all are objects of the dump), and from RTM_NEWNEIGH the link address a
 * gateway already has (valid).  Messages of another sequence number than
 * seq are skipped.  1 at the dump's end (NLMSG_DONE), 0 for more, -errno
 * for its NLMSG_ERROR.  Pure. */
int egress_gw_nl_parse(const void *buf, size_t len, uint32_t seq, struct nft_build_opts *o);
/* Batch deleting tables inet, arp and ip6 agentrt.  Pure. */
int nft_build_table_delete(uint32_t seq_base, struct nft_batch_buf *ret, struct error *err);

/* An address learned from DNS, for the dns* sets. */
struct nft_learned {
  int family; /* AF_INET / AF_INET6 */
  uint8_t addr[16];
  uint8_t proto; /* 0 = every port (set dns4/dns6), else with port: dns4p/dns6p */
  uint16_t port;
  uint32_t timeout_ms;
};
/* Batch adding elements to the dns sets.  Pure. */
int nft_build_learn(const struct nft_learned *l, size_t n, uint32_t seq_base,
                    struct nft_batch_buf *ret, struct error *err);
/* Batch deleting one element of the dns sets (a pin of a name denied live).  Pure. */
int nft_build_unlearn(const struct nft_learned *l, uint32_t seq_base, struct nft_batch_buf *ret,
                      struct error *err);
/* Batch flushing dns4/dns6/dns4p/dns6p (after a domain is denied live). */
int nft_build_dns_flush(uint32_t seq_base, struct nft_batch_buf *ret, struct error *err);

/* A NETLINK_NETFILTER socket living in the netns of netns_fd (opened by a
 * forked child after setns; the caller's netns is never changed).  Returns
 * the fd (O_CLOEXEC) or -1. */
int nft_socket_open(int netns_fd, struct error *err);
/* Set up a NETLINK_NETFILTER socket made elsewhere (CAP_ACK, bind). */
int nft_socket_setup(int fd, struct error *err);
/* Send one batch on a netfilter socket, drain one ack per message; the first
 * failure is reported as "<what> (seq N): <strerror>". */
int nft_batch_send(int nl_fd, const struct nft_batch_buf *b, struct error *err);
/* nft_socket_open + nft_batch_send + close.  Note: the last close of a
 * netfilter socket right after a commit waits for the kernel's deferred
 * transaction cleanup (an RCU grace period, 10-20 ms on a small VM); on a
 * hot path send on a socket that stays open (the resolver's nl_fd). */
int nft_apply(int netns_fd, const struct nft_batch_buf *b, struct error *err);
/* Delete our table (ENOENT is success). */
int nft_table_delete(int netns_fd, struct error *err);
/* Convenience for the resolver: one learned address, one batch. */
int nft_set_add_elem(int nl_fd, const struct nft_learned *l, struct error *err);
/* Dump the elements of one of our sets (text, one per line, into *ret). */
int nft_set_list(int nl_fd, const char *set, char **ret, struct error *err);

/* -------------------------------------------------------------- netns */

/* Create n sockets inside the netns of netns_fd: socket(domain[i], type[i],
 * proto[i]) in a forked child that did setns(CLONE_NEWNET), passed back over
 * SCM_RIGHTS.  Sockets keep their netns for life. */
/* Bring `lo` up in the network namespace the socket sock lives in (the
 * ioctl acts on the socket's namespace, never the caller's); nothing when
 * it is up.  0, or -1 with errno (no allocation: callable from a thread
 * beside a fork). */
int netns_lo_up(int sock);
/* The gateways of a namespace and the link addresses its neighbour table
 * has for them (egress_gw_nl_parse) into o: dumps of its IPv4 and IPv6
 * routes, its nexthop objects (none where the kernel has none) and its
 * neighbours through fd, a NETLINK_ROUTE socket made in it (netns_sockets).
 * 0, or -1 with errno (o then holds what was read before). */
int netns_gateways_read(int fd, struct nft_build_opts *o);
/* Make the namespace of fd (a NETLINK_ROUTE socket made there) ask for
 * addr's link address on device ifindex now (RTM_NEWNEIGH with NTF_USE, as
 * `ip neigh replace ADDR dev IF use`): an ARP request or neighbour
 * solicitation, whose answer the tables pin.  0, or -1 with errno. */
int netns_neigh_solicit(int fd, int family, const uint8_t *addr, int ifindex);
/* Delete addr's entry on device ifindex from the neighbour table of fd's
 * namespace (RTM_DELNEIGH; none is not an error): a gateway the tables
 * refused is then asked for again, and its answers refused.  0, or -1 with
 * errno. */
int netns_neigh_forget(int fd, int family, const uint8_t *addr, int ifindex);
int netns_sockets(int netns_fd, size_t n, const int *domain, const int *type, const int *proto,
                  int *ret_fds, struct error *err);

/* ----------------------------------------------------------- sockets */

/* A socket's peer: family AF_INET/AF_INET6 (IPv4-mapped given as AF_INET),
 * address, IPPROTO_TCP/UDP, port (host order). */
struct egress_sock {
  int family;
  uint8_t addr[16];
  uint8_t proto;
  uint16_t port;
};
/* Is a flow to this peer allowed by the policy's own entries (default,
 * CIDR entries with their ports)?  Pinned addresses are the kernel's sets. */
bool egress_policy_allows_flow(const struct egress_policy *p, const struct egress_sock *s);
/* Destroy (SOCK_DESTROY) every TCP and connected UDP socket of the netns of
 * diag_fd (a NETLINK_SOCK_DIAG socket made there) whose peer keep() refuses;
 * loopback and unconnected sockets are left.  *ret_cut: how many. */
int egress_sockets_cut(int diag_fd, bool (*keep)(void *ud, const struct egress_sock *s), void *ud,
                       size_t *ret_cut, struct error *err);

/* ----------------------------------------------------------- resolver */

enum egress_dns_verdict {
  EGRESS_DNS_ALLOWED, /* forwarded, addresses pinned */
  EGRESS_DNS_REFUSED, /* name not on the allowlist: NXDOMAIN */
  EGRESS_DNS_REBIND,  /* answer pointed at a private address: dropped */
  EGRESS_DNS_FAILED,  /* upstream timeout / error / set update failed: SERVFAIL */
  EGRESS_DNS_NODATA,  /* allowed name, type other than A/AAAA/CNAME */
};

struct egress_dns_event {
  enum egress_dns_verdict verdict;
  const char *name;
  uint16_t qtype;
  size_t n_addrs;
  const struct nft_learned *addrs; /* the pinned addresses */
  const char *detail;              /* error text for FAILED, else NULL */
};

struct egress_resolver_opts {
  struct egress_policy *policy; /* may be changed by on_ctl between events */
  int nl_fd;                    /* NETLINK_NETFILTER socket in the container netns */
  int udp4_fd, udp6_fd;         /* bound UDP sockets in the container netns, -1 = none */
  int tcp4_fd, tcp6_fd;         /* listening TCP sockets in the container netns, -1 = none */
  int stop_fd;                  /* readable = return 0 (eventfd, pipe, signalfd); -1 = none */
  int ctl_fd;                   /* readable = call on_ctl; -1 = none */
  int (*on_ctl)(void *ud, struct egress_policy *p);              /* <0 ends the loop */
  void (*on_event)(void *ud, const struct egress_dns_event *ev); /* audit trail */
  /* lookups the kernel dropped before the resolver read them (its budget
   * spent, or the loop held up): a count, once a second at most; NULL = none */
  void (*on_lost)(void *ud, uint64_t lookups);
  /* another event source sharing the loop (the audit monitor's epoll fd):
   * readable = call on_aux(aux_ud); > 0 ends the loop like stop_fd; used
   * only when on_aux is set */
  int aux_fd;
  int (*on_aux)(void *aux_ud);
  void *aux_ud;
  void (*on_tick)(void *ud); /* after every loop turn (at least once a second); NULL = none */
  /* readable = call on_route(ud) (an rtnetlink socket subscribed to route
   * changes); used only when on_route is set */
  int route_fd;
  void (*on_route)(void *ud);
  void *ud;
  unsigned upstream_timeout_ms; /* default 2000 */
  /* has_upstream_netns: upstream sockets are made in that netns, not in the
   * caller's (the host's) */
  bool has_upstream_netns;
  int upstream_netns_fd;
};

/* Open the resolver's sockets inside the container netns: netlink, UDP and
 * TCP on 127.0.0.1:port and [::1]:port (v6 ones are -1 when the netns has
 * no IPv6).  Fills the *_fd and nl_fd fields of o. */
int egress_resolver_open(int netns_fd, uint16_t port, struct egress_resolver_opts *o,
                         struct error *err);
void egress_resolver_close(struct egress_resolver_opts *o);
/* Single-threaded poll loop; upstream sockets are made in the caller's (host)
 * netns.  Returns 0 when stop_fd fires, <0 on a fatal error. */
int egress_resolver_run(const struct egress_resolver_opts *o, struct error *err);

#endif
