/* netlog.h - the network part of the audit trail, without the sockets:
 * parse a packet the egress ruleset logged to NFLOG, and coalesce such
 * packets into "denied" and "flow" records (pure; unit tested).
 *
 * A denied packet counts per (destination, protocol, port or ICMP type); the
 * first packet of an allowed flow (chain `allowed`, netfilter/egress.h) per
 * (destination, protocol, port).  Inbound ones (chains `in_deny` and
 * `in_allowed`) count per (peer, local address, protocol, local port); every
 * record says its "direction", "in" or "out".  A neighbour's ARP or
 * advertisement refused by a gateway's pin (the pin prefixes) counts per
 * (claimed address, link address, sender, target): "in", with "addr" and
 * "lladdr".  The first event of a key is recorded at
 * once with count 1; further events within MONITOR_COALESCE_MS of it are
 * summed and recorded when that window ends (or at the final flush), so the
 * counts of a key's records add up to the number of events.  The table is
 * bounded: when full, its oldest entry is recorded early.
 */
#ifndef AGENTRT_RUNTIME_NETLOG_H
#define AGENTRT_RUNTIME_NETLOG_H

#include <arpa/inet.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NETLOG_MAX_PENDING 256

enum netlog_kind { NETLOG_DENIED, NETLOG_FLOW };

struct netlog_event {
  enum netlog_kind kind;
  bool inbound;               /* a flow the container did not start (chains in_*) */
  bool routed;                /* IPv6 with a routing header: dst is only its first hop */
  bool ip_options;            /* IPv4 with options (a source route: dst is its first hop) */
  bool spoofed;               /* outbound from an address not the container's (chain spoofed) */
  char src[INET6_ADDRSTRLEN]; /* inbound: the peer; spoofed: the forged source */
  char dst[INET6_ADDRSTRLEN];
  const char *proto; /* "tcp", "udp", "icmp", "icmpv6", "sctp", "udplite", "dccp", "igmp",
                        "other" */
  int ipproto;       /* its number (recorded for "other") */
  int port;          /* -1 = none */
  int icmp_type;     /* -1 = none (always for flows) */
  /* a neighbour's ARP (proto "arp") or solicited advertisement naming a
   * pinned gateway's address with another link address (tables arp and ip6
   * agentrt): the address it claims and the link address it gives ("" =
   * none in the packet) */
  bool neigh;
  bool over; /* that neighbour refused past the gateways the tables pin (over4, over6) */
  /* a gateway's first answer (accepted: kept by the caller, not recorded),
   * and an answer refused because two link addresses answered for the
   * gateway within NFT_GW_WINDOW_MS of its first (first-answer-race) */
  bool first, twice;
  char addr[INET6_ADDRSTRLEN];
  char lladdr[18];
};

/* A logged packet: the IP header onwards, and the log prefix (NULL = none;
 * anything but a flow prefix is a denied packet, the in- prefixes are
 * inbound). */
bool netlog_parse(const uint8_t *pkt, size_t len, const char *prefix, struct netlog_event *ret);

struct netlog_entry {
  struct netlog_event ev;
  unsigned count;   /* events not yet recorded */
  int64_t first_ms; /* the window's start */
  char at[40];      /* wall-clock time of the first event in count */
};

/* Called for each record: kind "denied" or "flow" and its JSON members. */
typedef void (*netlog_emit_fn)(void *ud, const char *kind, const char *fields);
/* Asked before each record (NULL: always written): false = the caller
 * counted its `count` events elsewhere (a flood), the record is not written. */
typedef bool (*netlog_admit_fn)(void *ud, const char *kind, const struct netlog_event *ev,
                                unsigned count);

struct netlog {
  struct netlog_entry pend[NETLOG_MAX_PENDING];
  size_t n;
  int64_t window_ms;
  netlog_emit_fn emit;
  netlog_admit_fn admit;
  void *ud;
};

void netlog_init(struct netlog *t, int64_t window_ms, netlog_emit_fn emit, void *ud);
/* One event at now_ms (monotonic). */
void netlog_note(struct netlog *t, const struct netlog_event *ev, int64_t now_ms);
/* Record windows that ended (all when final); true while entries remain. */
bool netlog_flush(struct netlog *t, int64_t now_ms, bool final);

#endif
