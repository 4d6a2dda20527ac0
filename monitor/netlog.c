/* netlog.c - NFLOG packets to "denied" and "flow" records (see netlog.h). */
#include "monitor/netlog.h"

#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "audit/audit.h"
#include "audit/jbuf.h"
#include "netfilter/egress.h"

/* NFT_GW_WINDOW_MS in seconds, for the record's reason */
#define WINDOW_S "2"
_Static_assert(NFT_GW_WINDOW_MS == 2000, "WINDOW_S says NFT_GW_WINDOW_MS");

static const char *proto_name(int p)
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
  case IPPROTO_IGMP:
    return "igmp";
  case IPPROTO_SCTP:
    return "sctp";
  case IPPROTO_UDPLITE:
    return "udplite";
  case IPPROTO_DCCP:
    return "dccp";
  default:
    return "other";
  }
}

static void mac_str(const uint8_t *m, char out[18])
{
  snprintf(out, 18, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
}

/* Ethernet ARP (table arp agentrt logs from its header): the sender's
 * address and link address, the target's address */
static bool parse_arp(const uint8_t *p, size_t len, struct netlog_event *ret)
{
  if (len < 28 || p[0] != 0 || p[1] != 1 || p[2] != 0x08 || p[3] != 0 || p[4] != 6 || p[5] != 4)
    return false;
  ret->kind = NETLOG_DENIED;
  ret->inbound = ret->neigh = true;
  ret->proto = "arp";
  ret->port = ret->icmp_type = -1;
  mac_str(p + 8, ret->lladdr);
  inet_ntop(AF_INET, p + 14, ret->src, sizeof ret->src);
  inet_ntop(AF_INET, p + 24, ret->dst, sizeof ret->dst);
  snprintf(ret->addr, sizeof ret->addr, "%s", ret->src);
  return true;
}

/* A neighbour advertisement at l4: its target, and the link address of
 * its first target link-address option; a solicitation: its source, and
 * its first source link-address option's */
static void parse_na(const uint8_t *p, size_t len, size_t l4, struct netlog_event *ret)
{
  size_t o = l4 + 24;
  uint8_t opt;

  if (len < o || (p[l4] != 136 && p[l4] != 135))
    return;
  opt = p[l4] == 136 ? 2 : 1;
  ret->neigh = true;
  inet_ntop(AF_INET6, opt == 2 ? p + l4 + 8 : p + 8, ret->addr, sizeof ret->addr);
  for (int i = 0; i < 8 && len >= o + 8 && p[o + 1] != 0; i++, o += (size_t)p[o + 1] * 8)
    if (p[o] == opt && p[o + 1] == 1) {
      mac_str(p + o + 2, ret->lladdr);
      return;
    }
}

enum neigh_kind { NEIGH_NONE, NEIGH_PIN, NEIGH_OVER, NEIGH_FIRST, NEIGH_TWICE };

/* the prefixes of tables arp and ip6 agentrt: which kind, and whether ARP */
static enum neigh_kind neigh_prefix(const char *prefix, bool *ret_arp)
{
  static const struct {
    const char *prefix;
    bool arp;
    enum neigh_kind kind;
  } k[] = {
      {EGRESS_LOG_ARP_PIN_PREFIX, true, NEIGH_PIN},
      {EGRESS_LOG_NA_PIN_PREFIX, false, NEIGH_PIN},
      {EGRESS_LOG_ARP_OVER_PREFIX, true, NEIGH_OVER},
      {EGRESS_LOG_NA_OVER_PREFIX, false, NEIGH_OVER},
      {EGRESS_LOG_ARP_FIRST_PREFIX, true, NEIGH_FIRST},
      {EGRESS_LOG_NA_FIRST_PREFIX, false, NEIGH_FIRST},
      {EGRESS_LOG_ARP_TWICE_PREFIX, true, NEIGH_TWICE},
      {EGRESS_LOG_NA_TWICE_PREFIX, false, NEIGH_TWICE},
  };

  *ret_arp = false;
  for (size_t i = 0; prefix != NULL && i < sizeof k / sizeof k[0]; i++)
    if (strcmp(prefix, k[i].prefix) == 0) {
      *ret_arp = k[i].arp;
      return k[i].kind;
    }
  return NEIGH_NONE;
}

bool netlog_parse(const uint8_t *p, size_t len, const char *prefix, struct netlog_event *ret)
{
  size_t l4;
  int proto;
  bool arp;
  enum neigh_kind nk = neigh_prefix(prefix, &arp);
  bool na_pin = nk != NEIGH_NONE;

  memset(ret, 0, sizeof *ret);
  if (arp) {
    if (!parse_arp(p, len, ret))
      return false;
    ret->over = nk == NEIGH_OVER;
    ret->first = nk == NEIGH_FIRST;
    ret->twice = nk == NEIGH_TWICE;
    return true;
  }
  ret->inbound = na_pin || (prefix != NULL && (strcmp(prefix, EGRESS_LOG_IN_FLOW_PREFIX) == 0 ||
                                               strcmp(prefix, EGRESS_LOG_IN_DENY_PREFIX) == 0));
  ret->spoofed = prefix != NULL && strcmp(prefix, EGRESS_LOG_SPOOF_PREFIX) == 0;
  if (len >= 20 && (p[0] >> 4) == 4) {
    l4 = (size_t)(p[0] & 0x0f) * 4;
    proto = p[9];
    ret->ip_options = l4 > 20;
    inet_ntop(AF_INET, p + 16, ret->dst, sizeof ret->dst);
    if (ret->inbound || ret->spoofed)
      inet_ntop(AF_INET, p + 12, ret->src, sizeof ret->src);
  } else if (len >= 40 && (p[0] >> 4) == 6) {
    l4 = 40;
    proto = p[6];
    /* MLD and other packets with options: walk the extension headers
     * (hop-by-hop, routing, destination options; a few at most) */
    for (int i = 0; i < 4 && (proto == 0 || proto == 43 || proto == 60) && len >= l4 + 8; i++) {
      ret->routed |= proto == 43;
      proto = p[l4];
      l4 += (size_t)(p[l4 + 1] + 1) * 8;
    }
    inet_ntop(AF_INET6, p + 24, ret->dst, sizeof ret->dst);
    if (ret->inbound || ret->spoofed)
      inet_ntop(AF_INET6, p + 8, ret->src, sizeof ret->src);
  } else {
    return false;
  }
  ret->kind = prefix != NULL && (strcmp(prefix, EGRESS_LOG_FLOW_PREFIX) == 0 ||
                                 strcmp(prefix, EGRESS_LOG_IN_FLOW_PREFIX) == 0)
                  ? NETLOG_FLOW
                  : NETLOG_DENIED;
  ret->proto = proto_name(proto);
  ret->ipproto = proto;
  ret->port = ret->icmp_type = -1;
  if ((proto == IPPROTO_TCP || proto == IPPROTO_UDP || proto == IPPROTO_SCTP ||
       proto == IPPROTO_UDPLITE || proto == IPPROTO_DCCP) &&
      len >= l4 + 4)
    ret->port = p[l4 + 2] << 8 | p[l4 + 3];
  else if ((proto == IPPROTO_ICMP || proto == IPPROTO_ICMPV6) && len > l4 &&
           ret->kind == NETLOG_DENIED)
    ret->icmp_type = p[l4];
  if (na_pin && proto == IPPROTO_ICMPV6)
    parse_na(p, len, l4, ret);
  ret->over = nk == NEIGH_OVER && ret->neigh;
  ret->first = nk == NEIGH_FIRST && ret->neigh;
  ret->twice = nk == NEIGH_TWICE && ret->neigh;
  return true;
}

void netlog_init(struct netlog *t, int64_t window_ms, netlog_emit_fn emit, void *ud)
{
  t->n = 0;
  t->window_ms = window_ms;
  t->emit = emit;
  t->admit = NULL;
  t->ud = ud;
}

static void emit(struct netlog *t, struct netlog_entry *e)
{
  struct jbuf b = {0};

  if (e->count == 0)
    return;
  if (t->admit != NULL &&
      !t->admit(t->ud, e->ev.kind == NETLOG_FLOW ? "flow" : "denied", &e->ev, e->count)) {
    e->count = 0;
    return;
  }
  jb_key_str(&b, "direction", e->ev.inbound ? "in" : "out");
  if (e->ev.inbound || e->ev.spoofed)
    jb_key_str(&b, "src", e->ev.src);
  jb_key_str(&b, "dst", e->ev.dst);
  jb_key_str(&b, "proto", e->ev.proto);
  if (strcmp(e->ev.proto, "other") == 0)
    jb_key_i64(&b, "ipproto", e->ev.ipproto);
  if (e->ev.port >= 0)
    jb_key_i64(&b, "port", e->ev.port);
  if (e->ev.icmp_type >= 0)
    jb_key_i64(&b, "icmp_type", e->ev.icmp_type);
  if (e->ev.neigh) {
    jb_key_str(&b, "addr", e->ev.addr);
    if (e->ev.lladdr[0] != '\0')
      jb_key_str(&b, "lladdr", e->ev.lladdr);
  }
  jb_key_u64(&b, "count", e->count);
  jb_key_str(&b, "at", e->at);
  if (e->ev.neigh && e->ev.twice)
    jb_key_str(&b, "reason",
               "two link addresses answered for a gateway within " WINDOW_S
               " s of its first answer: the gateway is refused until the container is "
               "recreated");
  else if (e->ev.neigh && e->ev.over)
    jb_key_str(&b, "reason",
               "an address past the gateways the tables pin (more than 16 of its version): no "
               "answer without a pin is taken");
  else if (e->ev.neigh)
    jb_key_str(&b, "reason", "a gateway's address with another link address than its pinned one");
  else if (e->ev.spoofed)
    jb_key_str(&b, "reason", "source address not the container's");
  else if (e->ev.routed)
    jb_key_str(&b, "reason", "IPv6 routing header (dst is its first hop)");
  else if (e->ev.ip_options)
    jb_key_str(&b, "reason", "IPv4 options (a source route makes dst only its first hop)");
  t->emit(t->ud, e->ev.kind == NETLOG_FLOW ? "flow" : "denied", jb_str(&b));
  jb_free(&b);
  e->count = 0;
}

static bool same(const struct netlog_event *a, const struct netlog_event *b)
{
  return a->kind == b->kind && a->inbound == b->inbound && a->spoofed == b->spoofed &&
         a->routed == b->routed && a->ip_options == b->ip_options && a->proto == b->proto &&
         a->ipproto == b->ipproto && a->port == b->port && a->icmp_type == b->icmp_type &&
         strcmp(a->dst, b->dst) == 0 && strcmp(a->src, b->src) == 0 && a->neigh == b->neigh &&
         a->over == b->over && a->first == b->first && a->twice == b->twice &&
         strcmp(a->addr, b->addr) == 0 && strcmp(a->lladdr, b->lladdr) == 0;
}

void netlog_note(struct netlog *t, const struct netlog_event *ev, int64_t now_ms)
{
  struct netlog_entry *e;

  for (size_t i = 0; i < t->n; i++) {
    if (same(&t->pend[i].ev, ev)) {
      if (t->pend[i].count++ == 0)
        audit_timestamp(t->pend[i].at, sizeof t->pend[i].at);
      return;
    }
  }
  if (t->n == NETLOG_MAX_PENDING) {
    emit(t, &t->pend[0]);
    memmove(t->pend, t->pend + 1, --t->n * sizeof *t->pend);
  }
  e = &t->pend[t->n++];
  *e = (struct netlog_entry){.ev = *ev, .count = 1, .first_ms = now_ms};
  audit_timestamp(e->at, sizeof e->at);
  emit(t, e); /* the first one at once; the window collects the rest */
}

bool netlog_flush(struct netlog *t, int64_t now_ms, bool final)
{
  size_t kept = 0;

  for (size_t i = 0; i < t->n; i++) {
    if (final || now_ms - t->pend[i].first_ms >= t->window_ms)
      emit(t, &t->pend[i]);
    else
      t->pend[kept++] = t->pend[i];
  }
  t->n = kept;
  return t->n > 0;
}
