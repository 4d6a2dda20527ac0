/* gateways.c - the gateways of a network namespace from its rtnetlink dumps
 * (a pure parser, fuzzed: tests/fuzz/fuzz_gateways.c): every route's next
 * hops and every nexthop object's gateway, and the link addresses the
 * neighbour table has for them, which tables `arp agentrt` and `ip6
 * agentrt` pin (nft_arp.c).  /proc/net/route and ipv6_route show only the
 * first next hop of a nexthop group and of an IPv4 multipath route (escape:
 * nexthop-gateway, sixth-gateway); the dumps show them all.
 */
#include "netfilter/egress.h"

#include <errno.h>
#include <linux/neighbour.h>
#include <linux/nexthop.h>
#include <linux/rtnetlink.h>
#include <string.h>

/* A gateway of an IP version (alen 4 or 16) on device ifindex into o, once;
 * one that does not fit sets over4 or over6 */
static void gw_add(struct nft_build_opts *o, const uint8_t *a, size_t alen, int ifindex)
{
  static const uint8_t zero[16];

  if (memcmp(a, zero, alen) == 0)
    return;
  if (alen == 4) {
    for (size_t i = 0; i < o->n_gw4; i++)
      if (memcmp(o->gw4[i].ip, a, 4) == 0)
        return;
    if (o->n_gw4 == NFT_MAX_GW4) {
      o->over4 = true;
      return;
    }
    memset(&o->gw4[o->n_gw4], 0, sizeof o->gw4[0]);
    memcpy(o->gw4[o->n_gw4].ip, a, 4);
    o->gw4[o->n_gw4++].ifindex = ifindex;
    return;
  }
  for (size_t i = 0; i < o->n_gw6; i++)
    if (memcmp(o->gw6[i], a, 16) == 0)
      return;
  if (o->n_gw6 == NFT_MAX_GW4) {
    o->over6 = true;
    return;
  }
  memcpy(o->gw6[o->n_gw6], a, 16);
  o->gw6_mac_known[o->n_gw6] = false;
  o->gw6_ifindex[o->n_gw6++] = ifindex;
}

/* RTA_GATEWAY (the route's family's length) or RTA_VIA (an IPv4 route's
 * IPv6 next hop: struct rtvia) */
static void gw_attr(struct nft_build_opts *o, const struct rtattr *a, int ifindex)
{
  size_t n = RTA_PAYLOAD(a);
  const uint8_t *d = RTA_DATA(a);

  if (a->rta_type == RTA_GATEWAY && (n == 4 || n == 16))
    gw_add(o, d, n, ifindex);
  else if (a->rta_type == RTA_VIA && n >= 2 && (n - 2 == 4 || n - 2 == 16))
    gw_add(o, d + 2, n - 2, ifindex);
}

/* the next hops of a route: its own, and each of RTA_MULTIPATH's (struct
 * rtnexthop, then its attributes) */
static void route_msg(const struct nlmsghdr *h, struct nft_build_opts *o)
{
  const struct rtmsg *rt = NLMSG_DATA(h);
  const struct rtattr *a, *mp = NULL;
  int len = (int)h->nlmsg_len - (int)NLMSG_LENGTH(sizeof *rt), oif = 0;

  if (h->nlmsg_len < NLMSG_LENGTH(sizeof *rt))
    return;
  for (a = RTM_RTA(rt); RTA_OK(a, len); a = RTA_NEXT(a, len))
    if (a->rta_type == RTA_OIF && RTA_PAYLOAD(a) == 4)
      memcpy(&oif, RTA_DATA(a), 4);
    else if (a->rta_type == RTA_MULTIPATH)
      mp = a;
  len = (int)h->nlmsg_len - (int)NLMSG_LENGTH(sizeof *rt);
  for (a = RTM_RTA(rt); RTA_OK(a, len); a = RTA_NEXT(a, len))
    gw_attr(o, a, oif);
  if (mp != NULL) {
    int left = (int)RTA_PAYLOAD(mp);
    /* RTNH_OK reads rtnh_len before it checks the length left */
    for (const struct rtnexthop *nh = RTA_DATA(mp); left >= (int)sizeof *nh && RTNH_OK(nh, left);
         left -= (int)RTNH_ALIGN(nh->rtnh_len), nh = RTNH_NEXT(nh)) {
      int alen = (int)nh->rtnh_len - (int)sizeof *nh;
      for (a = RTNH_DATA(nh); RTA_OK(a, alen); a = RTA_NEXT(a, alen))
        gw_attr(o, a, nh->rtnh_ifindex);
    }
  }
}

/* a nexthop object's gateway (NHA_GATEWAY, its device NHA_OIF); a group
 * (NHA_GROUP) has none of its own, its members are objects too */
static void nexthop_msg(const struct nlmsghdr *h, struct nft_build_opts *o)
{
  const struct nhmsg *nh = NLMSG_DATA(h);
  const struct rtattr *a, *gw = NULL;
  int len = (int)h->nlmsg_len - (int)NLMSG_LENGTH(sizeof *nh), oif = 0;

  if (h->nlmsg_len < NLMSG_LENGTH(sizeof *nh))
    return;
  for (a = (const struct rtattr *)((const char *)nh + NLMSG_ALIGN(sizeof *nh)); RTA_OK(a, len);
       a = RTA_NEXT(a, len))
    if (a->rta_type == NHA_OIF && RTA_PAYLOAD(a) == 4)
      memcpy(&oif, RTA_DATA(a), 4);
    else if (a->rta_type == NHA_GATEWAY && (RTA_PAYLOAD(a) == 4 || RTA_PAYLOAD(a) == 16))
      gw = a;
  if (gw != NULL)
    gw_add(o, RTA_DATA(gw), RTA_PAYLOAD(gw), oif);
}

/* a neighbour entry: a gateway's valid link address, its pin from the start */
static void neigh_msg(const struct nlmsghdr *h, struct nft_build_opts *o)
{
  const struct ndmsg *nd = NLMSG_DATA(h);
  const uint8_t *dst = NULL, *ll = NULL;
  const struct rtattr *a;
  size_t dlen = 0;
  int len = (int)h->nlmsg_len - (int)NLMSG_LENGTH(sizeof *nd);

  if (h->nlmsg_len < NLMSG_LENGTH(sizeof *nd) ||
      (nd->ndm_state &
       (NUD_PERMANENT | NUD_NOARP | NUD_REACHABLE | NUD_PROBE | NUD_STALE | NUD_DELAY)) == 0)
    return;
  for (a = (const struct rtattr *)((const char *)nd + NLMSG_ALIGN(sizeof *nd)); RTA_OK(a, len);
       a = RTA_NEXT(a, len))
    if (a->rta_type == NDA_DST && (RTA_PAYLOAD(a) == 4 || RTA_PAYLOAD(a) == 16)) {
      dst = RTA_DATA(a);
      dlen = RTA_PAYLOAD(a);
    } else if (a->rta_type == NDA_LLADDR && RTA_PAYLOAD(a) == 6) {
      ll = RTA_DATA(a);
    }
  if (dst == NULL || ll == NULL)
    return;
  for (size_t i = 0; dlen == 4 && i < o->n_gw4; i++)
    if (memcmp(o->gw4[i].ip, dst, 4) == 0 && !o->gw4[i].mac_known) {
      memcpy(o->gw4[i].mac, ll, 6);
      o->gw4[i].mac_known = true;
    }
  for (size_t i = 0; dlen == 16 && i < o->n_gw6; i++)
    if (memcmp(o->gw6[i], dst, 16) == 0 && !o->gw6_mac_known[i]) {
      memcpy(o->gw6_mac[i], ll, 6);
      o->gw6_mac_known[i] = true;
    }
}

/* one message of the dump: 1 at its end, -errno for its error, else 0 */
static int one_msg(const struct nlmsghdr *h, struct nft_build_opts *o)
{
  if (h->nlmsg_type == NLMSG_DONE)
    return 1;
  if (h->nlmsg_type == NLMSG_ERROR) {
    const struct nlmsgerr *e = NLMSG_DATA(h);
    if (h->nlmsg_len < NLMSG_LENGTH(sizeof *e))
      return -EPROTO;
    return e->error < 0 ? e->error : 1;
  }
  if (h->nlmsg_type == RTM_NEWROUTE)
    route_msg(h, o);
  else if (h->nlmsg_type == RTM_NEWNEXTHOP)
    nexthop_msg(h, o);
  else if (h->nlmsg_type == RTM_NEWNEIGH)
    neigh_msg(h, o);
  return 0;
}

int egress_gw_nl_parse(const void *buf, size_t len, uint32_t seq, struct nft_build_opts *o)
{
  const char *p = buf;
  size_t left = len;

  /* NLMSG_NEXT on a size_t would wrap past a last message whose aligned
   * length is more than what is left (fuzz_gateways) */
  while (left >= sizeof(struct nlmsghdr)) {
    const struct nlmsghdr *h = (const struct nlmsghdr *)p;
    size_t step = NLMSG_ALIGN(h->nlmsg_len);
    int r;

    if (h->nlmsg_len < sizeof *h || h->nlmsg_len > left)
      break;
    if (h->nlmsg_seq == seq && (r = one_msg(h, o)) != 0)
      return r;
    if (step >= left)
      break;
    p += step;
    left -= step;
  }
  return 0;
}
