/* nft_arp.c - tables `arp agentrt` and `ip6 agentrt`: the gateways' link
 * addresses, pinned (pure builders), and the gateways read from procfs' text
 * (pure parsers).  The IPv6 table is described at nd_table below.
 *
 * The inet table never sees ARP: a neighbour on the container's link (another
 * container on the bridge) that sends a forged reply or a gratuitous ARP naming
 * the gateway's IPv4 address with its own link address moves every allowed
 * packet to itself.  For each IPv4 gateway of the namespace the first link
 * address learnt (already in the neighbour table when the table is made, or the
 * first ARP packet from that address after) is pinned; ARP from the gateway's
 * address with another link address is dropped, counted and logged to the
 * monitor's group (an "in" `denied` record of proto arp, monitor/netlog.c).
 * A gateway pinned at its first answer is refused for good when another
 * link address answers for it within NFT_GW_WINDOW_MS of that answer
 * (first-answer-race: a neighbour that answered the namespace's question
 * first, or the gateway first and a neighbour after, cannot be told apart;
 * the monitor records both link addresses and forgets the entry learnt):
 *
 *   table arp agentrt {
 *     set gw4  { type ipv4_addr; elements = { <gateways> } }
 *     set seen { type ipv4_addr; flags dynamic; }          # gateways pinned
 *     set pin  { type ipv4_addr . ether_addr; flags dynamic; }
 *     set win  { type ipv4_addr; flags dynamic, timeout; timeout 2s; }
 *     set bad  { type ipv4_addr; flags dynamic; }          # refused for good
 *     chain input { type filter hook input priority 0; policy accept;
 *       arp saddr ip @bad counter log prefix "agentrt-arp-twice: " group N drop
 *       arp saddr ip . arp saddr ether @pin accept
 *       arp saddr ip @win add @bad { arp saddr ip }
 *         counter log prefix "agentrt-arp-twice: " group N drop
 *       arp saddr ip @seen counter log prefix "agentrt-arp-pin: " group N drop
 *       arp saddr ip @gw4 add @seen { arp saddr ip }
 *         add @pin { arp saddr ip . arp saddr ether } add @win { arp saddr ip }
 *         counter log prefix "agentrt-arp-first: " group N accept
 *       counter log prefix "agentrt-arp-over: " group N drop } }  # over4 only
 *
 * Offsets are Ethernet ARP's (hardware length 6, protocol length 4), the only
 * kind the kernel takes on an Ethernet link.
 */
#include "netfilter/nft_internal.h"

#include <arpa/inet.h>
#include <libnftnl/chain.h>
#include <libnftnl/expr.h>
#include <libnftnl/table.h>
#include <linux/netfilter.h>
#include <linux/netfilter_arp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

#define TYPE_IPV4_ADDR 7 /* nft's datatype numbers, for `nft list` */
#define TYPE_IPV6_ADDR 8
#define TYPE_ETHER_ADDR 9
#define ARP_SHA_OFF 8
#define ARP_SPA_OFF 14
#define NA_TARGET_OFF 8 /* in the ICMPv6 header */
#define NA_OPT_OFF 24   /* the first option: the target link address, 8 bytes */
#define IP6_SADDR_OFF 8 /* in the IPv6 header */
#define ND_NS 135       /* ICMPv6 types: neighbour solicitation, advertisement */
#define ND_NA 136
#define ND_OPT_SLLA 1 /* option types: source, target link-layer address */
#define ND_OPT_TLLA 2
#define PIN_SIZE NFT_MAX_GW4 /* a pin per gateway, no more */

/* the family's name for messages */
static const char *fam_name(uint16_t fam)
{
  return fam == NFPROTO_ARP ? "arp" : "ip6";
}

static void table_msg_fam(struct nft_batch_buf *b, uint16_t fam, uint16_t type)
{
  struct nftnl_table *t = nftnl_table_alloc();
  struct nlmsghdr *nlh;

  if (t == NULL)
    abort();
  nftnl_table_set_u32(t, NFTNL_TABLE_FAMILY, fam);
  nftnl_table_set_str(t, NFTNL_TABLE_NAME, NFT_TABLE_NAME);
  nlh =
      nftb_msg_family(b, fam, type, type == NFT_MSG_NEWTABLE ? NLM_F_CREATE : 0, "%s table `%s %s`",
                      type == NFT_MSG_NEWTABLE ? "add" : "delete", fam_name(fam), NFT_TABLE_NAME);
  nftnl_table_nlmsg_build_payload(nlh, t);
  nftb_done(b, nlh);
  nftnl_table_free(t);
}

void nftb_arp_table_delete(struct nft_batch_buf *b)
{
  /* add + delete: no error when there is none */
  table_msg_fam(b, NFPROTO_ARP, NFT_MSG_NEWTABLE);
  table_msg_fam(b, NFPROTO_ARP, NFT_MSG_DELTABLE);
  table_msg_fam(b, NFPROTO_IPV6, NFT_MSG_NEWTABLE);
  table_msg_fam(b, NFPROTO_IPV6, NFT_MSG_DELTABLE);
}

/* alen: the address's length (4, 16); pair: the address . a link address;
 * timeout_ms: its elements' (0 = none) */
static void set_fam(struct nft_batch_buf *b, uint16_t fam, const char *name, uint32_t id,
                    bool dynamic, uint8_t alen, bool pair, uint64_t timeout_ms)
{
  const uint8_t concat[] = {alen, 6};
  struct nftnl_set *s = nftb_set_new(fam, name, id);
  uint32_t type = alen == 4 ? TYPE_IPV4_ADDR : TYPE_IPV6_ADDR;
  struct nlmsghdr *nlh;

  nftnl_set_set_u32(s, NFTNL_SET_FLAGS,
                    (dynamic ? NFT_SET_EVAL : 0) | (pair ? NFT_SET_CONCAT : 0) |
                        (timeout_ms > 0 ? NFT_SET_TIMEOUT : 0));
  if (timeout_ms > 0)
    nftnl_set_set_u64(s, NFTNL_SET_TIMEOUT, timeout_ms);
  nftnl_set_set_u32(s, NFTNL_SET_KEY_TYPE, pair ? (type << 6 | TYPE_ETHER_ADDR) : type);
  nftnl_set_set_u32(s, NFTNL_SET_KEY_LEN, pair ? alen + 8u : alen);
  if (pair)
    nftnl_set_set_data(s, NFTNL_SET_DESC_CONCAT, concat, sizeof concat);
  if (dynamic)
    nftnl_set_set_u32(s, NFTNL_SET_DESC_SIZE, PIN_SIZE);
  nlh =
      nftb_msg_family(b, fam, NFT_MSG_NEWSET, NLM_F_CREATE, "add set `%s %s`", fam_name(fam), name);
  nftnl_set_nlmsg_build_payload(nlh, s);
  nftb_done(b, nlh);
  nftnl_set_free(s);
}

/* One element: an address, or an address and its link address (the second
 * field padded to 8). */
static void elem_fam(struct nft_batch_buf *b, uint16_t fam, const char *name, uint32_t id,
                     const uint8_t *ip, uint8_t alen, const uint8_t *mac)
{
  struct nftnl_set *s = nftb_set_new(fam, name, id);
  struct nftnl_set_elem *e = nftnl_set_elem_alloc();
  uint8_t key[24] = {0};
  struct nlmsghdr *nlh;

  if (e == NULL)
    abort();
  memcpy(key, ip, alen);
  if (mac != NULL)
    memcpy(key + alen, mac, 6);
  nftnl_set_elem_set(e, NFTNL_SET_ELEM_KEY, key, mac != NULL ? alen + 8u : alen);
  nftnl_set_elem_add(s, e);
  nlh = nftb_msg_family(b, fam, NFT_MSG_NEWSETELEM, NLM_F_CREATE, "add element to set `%s %s`",
                        fam_name(fam), name);
  nftnl_set_elems_nlmsg_build_payload(nlh, s);
  nftb_done(b, nlh);
  nftnl_set_free(s);
}

static struct nftnl_expr *xexpr(struct nftnl_rule *r, const char *name)
{
  struct nftnl_expr *e = nftnl_expr_alloc(name);

  if (e == NULL)
    abort();
  nftnl_rule_add_expr(r, e);
  return e;
}

static void load(struct nftnl_rule *r, uint32_t base, uint32_t off, uint32_t len, uint32_t dreg)
{
  struct nftnl_expr *e = xexpr(r, "payload");

  nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_DREG, dreg);
  nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_BASE, base);
  nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_OFFSET, off);
  nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_LEN, len);
}

static void eq(struct nftnl_rule *r, const void *data, uint32_t len)
{
  struct nftnl_expr *e = xexpr(r, "cmp");

  nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_SREG, NFT_REG32_00);
  nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_OP, NFT_CMP_EQ);
  nftnl_expr_set(e, NFTNL_EXPR_CMP_DATA, data, len);
}

static void xlookup(struct nftnl_rule *r, const char *set, uint32_t id)
{
  struct nftnl_expr *e = xexpr(r, "lookup");

  nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_SREG, NFT_REG32_00);
  nftnl_expr_set_str(e, NFTNL_EXPR_LOOKUP_SET, set);
  nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_SET_ID, id);
}

static void dynset_add(struct nftnl_rule *r, const char *set, uint32_t id)
{
  struct nftnl_expr *e = xexpr(r, "dynset");

  nftnl_expr_set_u32(e, NFTNL_EXPR_DYNSET_SREG_KEY, NFT_REG32_00);
  nftnl_expr_set_u32(e, NFTNL_EXPR_DYNSET_OP, NFT_DYNSET_OP_ADD);
  nftnl_expr_set_str(e, NFTNL_EXPR_DYNSET_SET_NAME, set);
  nftnl_expr_set_u32(e, NFTNL_EXPR_DYNSET_SET_ID, id);
}

/* counter, then log to the monitor's group (when there is one, log_group >= 0) */
static void count_log(struct nftnl_rule *r, int log_group, const char *prefix)
{
  xexpr(r, "counter");
  if (log_group >= 0) {
    struct nftnl_expr *e = xexpr(r, "log");
    nftnl_expr_set_u16(e, NFTNL_EXPR_LOG_GROUP, (uint16_t)log_group);
    nftnl_expr_set_str(e, NFTNL_EXPR_LOG_PREFIX, prefix);
  }
}

static void xverdict(struct nftnl_rule *r, int v)
{
  struct nftnl_expr *e = xexpr(r, "immediate");

  nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_VERDICT);
  nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_VERDICT, (uint32_t)v);
}

static struct nftnl_rule *rule_fam(uint16_t fam)
{
  struct nftnl_rule *r = nftnl_rule_alloc();

  if (r == NULL)
    abort();
  nftnl_rule_set_u32(r, NFTNL_RULE_FAMILY, fam);
  nftnl_rule_set_str(r, NFTNL_RULE_TABLE, NFT_TABLE_NAME);
  nftnl_rule_set_str(r, NFTNL_RULE_CHAIN, "input");
  return r;
}

static void emit_fam(struct nft_batch_buf *b, uint16_t fam, struct nftnl_rule *r, const char *what)
{
  struct nlmsghdr *nlh = nftb_msg_family(b, fam, NFT_MSG_NEWRULE, NLM_F_CREATE | NLM_F_APPEND,
                                         "add rule `%s` in chain `%s input`", what, fam_name(fam));
  nftnl_rule_nlmsg_build_payload(nlh, r);
  nftb_done(b, nlh);
  nftnl_rule_free(r);
}

/* prio: before table inet agentrt's input chain (0), which accepts a
 * solicited advertisement */
static void input_chain(struct nft_batch_buf *b, uint16_t fam, int prio)
{
  struct nftnl_chain *c = nftnl_chain_alloc();
  struct nlmsghdr *nlh;

  if (c == NULL)
    abort();
  nftnl_chain_set_u32(c, NFTNL_CHAIN_FAMILY, fam);
  nftnl_chain_set_str(c, NFTNL_CHAIN_TABLE, NFT_TABLE_NAME);
  nftnl_chain_set_str(c, NFTNL_CHAIN_NAME, "input");
  nftnl_chain_set_str(c, NFTNL_CHAIN_TYPE, "filter");
  nftnl_chain_set_u32(c, NFTNL_CHAIN_HOOKNUM, fam == NFPROTO_ARP ? NF_ARP_IN : NF_INET_LOCAL_IN);
  nftnl_chain_set_s32(c, NFTNL_CHAIN_PRIO, prio);
  nftnl_chain_set_u32(c, NFTNL_CHAIN_POLICY, NF_ACCEPT);
  nlh = nftb_msg_family(b, fam, NFT_MSG_NEWCHAIN, NLM_F_CREATE, "add chain `%s input`",
                        fam_name(fam));
  nftnl_chain_nlmsg_build_payload(nlh, c);
  nftb_done(b, nlh);
  nftnl_chain_free(c);
}

/* o's IPv4 gateways into sets gw4 (and seen, pin: those whose link address
 * is known), of a table made in this batch or already there (by name) */
static void arp_elems(struct nft_batch_buf *b, const struct nft_build_opts *o)
{
  const uint16_t F = NFPROTO_ARP;

  for (size_t i = 0; i < o->n_gw4 && i < NFT_MAX_GW4; i++) {
    elem_fam(b, F, "gw4", SET_ID_ARP_GW4, o->gw4[i].ip, 4, NULL);
    if (o->gw4[i].mac_known) {
      elem_fam(b, F, "seen", SET_ID_ARP_SEEN, o->gw4[i].ip, 4, NULL);
      elem_fam(b, F, "pin", SET_ID_ARP_PIN, o->gw4[i].ip, 4, o->gw4[i].mac);
    }
  }
}

static void nd_elems(struct nft_batch_buf *b, const struct nft_build_opts *o)
{
  const uint16_t F = NFPROTO_IPV6;

  for (size_t i = 0; i < o->n_gw6 && i < NFT_MAX_GW4; i++) {
    elem_fam(b, F, "gw6", SET_ID_ND_GW6, o->gw6[i], 16, NULL);
    if (o->gw6_mac_known[i]) {
      elem_fam(b, F, "seen6", SET_ID_ND_SEEN6, o->gw6[i], 16, NULL);
      elem_fam(b, F, "pin6", SET_ID_ND_PIN6, o->gw6[i], 16, o->gw6_mac[i]);
    }
  }
}

/* More gateways than NFT_MAX_GW4 (o->over4): ARP that no rule before took
 * (a pinned gateway's, a new gateway's first) is refused and logged, so a
 * gateway past them is never open to a forged answer (escape:
 * sixth-gateway): the kernel never learns its link address, and no packet
 * goes through it.  On-link neighbours that are not gateways go the same
 * way; so many gateways are not a container's. */
static void arp_over(struct nft_batch_buf *b, int log_group)
{
  struct nftnl_rule *r = rule_fam(NFPROTO_ARP);

  count_log(r, log_group, EGRESS_LOG_ARP_OVER_PREFIX);
  xverdict(r, NF_DROP);
  emit_fam(b, NFPROTO_ARP, r, "over: counter log drop");
}

static void arp_table(struct nft_batch_buf *b, const struct nft_build_opts *o, int log_group)
{
  const uint16_t F = NFPROTO_ARP;
  const uint32_t NH = NFT_PAYLOAD_NETWORK_HEADER;
  struct nftnl_rule *r;

  table_msg_fam(b, F, NFT_MSG_NEWTABLE);
  set_fam(b, F, "gw4", SET_ID_ARP_GW4, false, 4, false, 0);
  set_fam(b, F, "seen", SET_ID_ARP_SEEN, true, 4, false, 0);
  set_fam(b, F, "pin", SET_ID_ARP_PIN, true, 4, true, 0);
  set_fam(b, F, "win", SET_ID_ARP_WIN, true, 4, false, NFT_GW_WINDOW_MS);
  set_fam(b, F, "bad", SET_ID_ARP_BAD, true, 4, false, 0);
  arp_elems(b, o);
  input_chain(b, F, 0);
  r = rule_fam(F);
  load(r, NH, ARP_SPA_OFF, 4, NFT_REG32_00);
  xlookup(r, "bad", SET_ID_ARP_BAD);
  count_log(r, log_group, EGRESS_LOG_ARP_TWICE_PREFIX);
  xverdict(r, NF_DROP);
  emit_fam(b, F, r, "arp saddr ip @bad counter log drop");
  r = rule_fam(F);
  load(r, NH, ARP_SPA_OFF, 4, NFT_REG32_00);
  load(r, NH, ARP_SHA_OFF, 6, NFT_REG32_01);
  xlookup(r, "pin", SET_ID_ARP_PIN);
  xverdict(r, NF_ACCEPT);
  emit_fam(b, F, r, "arp saddr ip . arp saddr ether @pin accept");
  r = rule_fam(F);
  load(r, NH, ARP_SPA_OFF, 4, NFT_REG32_00);
  xlookup(r, "win", SET_ID_ARP_WIN);
  dynset_add(r, "bad", SET_ID_ARP_BAD);
  count_log(r, log_group, EGRESS_LOG_ARP_TWICE_PREFIX);
  xverdict(r, NF_DROP);
  emit_fam(b, F, r, "arp saddr ip @win add @bad counter log drop");
  r = rule_fam(F);
  load(r, NH, ARP_SPA_OFF, 4, NFT_REG32_00);
  xlookup(r, "seen", SET_ID_ARP_SEEN);
  count_log(r, log_group, EGRESS_LOG_ARP_PIN_PREFIX);
  xverdict(r, NF_DROP);
  emit_fam(b, F, r, "arp saddr ip @seen counter log drop");
  r = rule_fam(F);
  load(r, NH, ARP_SPA_OFF, 4, NFT_REG32_00);
  xlookup(r, "gw4", SET_ID_ARP_GW4);
  dynset_add(r, "seen", SET_ID_ARP_SEEN);
  load(r, NH, ARP_SPA_OFF, 4, NFT_REG32_00);
  load(r, NH, ARP_SHA_OFF, 6, NFT_REG32_01);
  dynset_add(r, "pin", SET_ID_ARP_PIN);
  dynset_add(r, "win", SET_ID_ARP_WIN);
  count_log(r, log_group, EGRESS_LOG_ARP_FIRST_PREFIX);
  xverdict(r, NF_ACCEPT);
  emit_fam(b, F, r, "arp saddr ip @gw4 add @seen add @pin add @win log accept");
  if (o->over4)
    arp_over(b, log_group);
}

/* A rule of table ip6 agentrt matching ICMPv6 of that type */
static struct nftnl_rule *icmp6_rule(uint8_t type)
{
  static const uint8_t icmpv6 = IPPROTO_ICMPV6;
  struct nftnl_rule *r = rule_fam(NFPROTO_IPV6);
  struct nftnl_expr *e = xexpr(r, "meta");

  nftnl_expr_set_u32(e, NFTNL_EXPR_META_KEY, NFT_META_L4PROTO);
  nftnl_expr_set_u32(e, NFTNL_EXPR_META_DREG, NFT_REG32_00);
  eq(r, &icmpv6, 1);
  load(r, NFT_PAYLOAD_TRANSPORT_HEADER, 0, 1, NFT_REG32_00);
  eq(r, &type, 1);
  return r;
}

/* A rule of table ip6 agentrt matching a neighbour advertisement (ICMPv6 136) */
static struct nftnl_rule *na_rule(void)
{
  return icmp6_rule(ND_NA);
}

/* A neighbour advertisement for a gateway's address, the start of each rule
 * of table ip6 agentrt */
static struct nftnl_rule *na_for_gw6(void)
{
  struct nftnl_rule *r = na_rule();

  load(r, NFT_PAYLOAD_TRANSPORT_HEADER, NA_TARGET_OFF, 16, NFT_REG32_00);
  xlookup(r, "gw6", SET_ID_ND_GW6);
  return r;
}

/* the solicited flag (unsolicited ones go on to table inet agentrt's
 * in_deny, counted and recorded; none of them is learnt here) */
static void solicited(struct nftnl_rule *r)
{
  static const uint8_t mask = 0x40, zero = 0;
  struct nftnl_expr *e;

  load(r, NFT_PAYLOAD_TRANSPORT_HEADER, 4, 1, NFT_REG32_00);
  e = xexpr(r, "bitwise");
  nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_SREG, NFT_REG32_00);
  nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_DREG, NFT_REG32_00);
  nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_LEN, 1);
  nftnl_expr_set(e, NFTNL_EXPR_BITWISE_MASK, &mask, 1);
  nftnl_expr_set(e, NFTNL_EXPR_BITWISE_XOR, &zero, 1);
  eq(r, &mask, 1);
  /* the target again, for what follows */
  load(r, NFT_PAYLOAD_TRANSPORT_HEADER, NA_TARGET_OFF, 16, NFT_REG32_00);
}

/* its IPv6 payload length: 24 (no option) or 32 (one, 8 bytes long) */
static void payload_len(struct nftnl_rule *r, uint16_t len)
{
  uint16_t be = htons(len);

  load(r, NFT_PAYLOAD_NETWORK_HEADER, 4, 2, NFT_REG32_00);
  eq(r, &be, 2);
}

/* its only option: a link-layer address option of that type (8 bytes) */
static void one_lla(struct nftnl_rule *r, uint8_t type)
{
  const uint8_t opt[2] = {type, 1};

  payload_len(r, 32);
  load(r, NFT_PAYLOAD_TRANSPORT_HEADER, NA_OPT_OFF, 2, NFT_REG32_00);
  eq(r, opt, 2);
}

static void one_tlla(struct nftnl_rule *r)
{
  one_lla(r, ND_OPT_TLLA);
}

static void target_and_tlla(struct nftnl_rule *r)
{
  load(r, NFT_PAYLOAD_TRANSPORT_HEADER, NA_TARGET_OFF, 16, NFT_REG32_00);
  load(r, NFT_PAYLOAD_TRANSPORT_HEADER, NA_OPT_OFF + 2, 6, NFT_REG32_04);
}

/* o->over6, as arp_over: a solicited advertisement for any other target
 * than a gateway pinned or new (those rules come before) is refused */
static void nd_over(struct nft_batch_buf *b, int log_group)
{
  static const uint8_t no_option[2] = {0, 24}; /* payload length, big-endian */
  struct nftnl_rule *r = na_rule();
  struct nftnl_expr *e;

  solicited(r);
  count_log(r, log_group, EGRESS_LOG_NA_OVER_PREFIX);
  xverdict(r, NF_DROP);
  emit_fam(b, NFPROTO_IPV6, r, "over: nd-neighbor-advert counter log drop");
  /* and a solicitation with options (a source link-layer address) */
  r = icmp6_rule(ND_NS);
  load(r, NFT_PAYLOAD_NETWORK_HEADER, 4, 2, NFT_REG32_00);
  e = xexpr(r, "cmp");
  nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_SREG, NFT_REG32_00);
  nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_OP, NFT_CMP_NEQ);
  nftnl_expr_set(e, NFTNL_EXPR_CMP_DATA, no_option, 2);
  count_log(r, log_group, EGRESS_LOG_NA_OVER_PREFIX);
  xverdict(r, NF_DROP);
  emit_fam(b, NFPROTO_IPV6, r, "over: ns with options log drop");
}

/* A neighbour solicitation from a gateway's address (its source in @gw6,
 * left in register 0) */
static struct nftnl_rule *ns_from_gw6(void)
{
  struct nftnl_rule *r = icmp6_rule(ND_NS);

  load(r, NFT_PAYLOAD_NETWORK_HEADER, IP6_SADDR_OFF, 16, NFT_REG32_00);
  xlookup(r, "gw6", SET_ID_ND_GW6);
  return r;
}

static void saddr_and_slla(struct nftnl_rule *r)
{
  load(r, NFT_PAYLOAD_NETWORK_HEADER, IP6_SADDR_OFF, 16, NFT_REG32_00);
  load(r, NFT_PAYLOAD_TRANSPORT_HEADER, NA_OPT_OFF + 2, 6, NFT_REG32_04);
}

/* A solicitation's source link-layer address is learnt as the sender's
 * (a stale entry, used at once): one from a gateway's address is an
 * answer as an advertisement for it is, pinned and refused alike (escape:
 * ns-sllao); one without the option (a unicast probe) changes nothing */
static void ns_rules(struct nft_batch_buf *b, int log_group)
{
  const uint16_t F = NFPROTO_IPV6;
  struct nftnl_rule *r = ns_from_gw6();

  xlookup(r, "bad6", SET_ID_ND_BAD6);
  count_log(r, log_group, EGRESS_LOG_NA_TWICE_PREFIX);
  xverdict(r, NF_DROP);
  emit_fam(b, F, r, "ns saddr @bad6 counter log drop");
  r = ns_from_gw6();
  payload_len(r, 24);
  xverdict(r, NF_ACCEPT);
  emit_fam(b, F, r, "ns from @gw6 without options accept");
  r = ns_from_gw6();
  one_lla(r, ND_OPT_SLLA);
  saddr_and_slla(r);
  xlookup(r, "pin6", SET_ID_ND_PIN6);
  xverdict(r, NF_ACCEPT);
  emit_fam(b, F, r, "ns saddr . slla @pin6 accept");
  r = ns_from_gw6();
  xlookup(r, "win6", SET_ID_ND_WIN6);
  dynset_add(r, "bad6", SET_ID_ND_BAD6);
  count_log(r, log_group, EGRESS_LOG_NA_TWICE_PREFIX);
  xverdict(r, NF_DROP);
  emit_fam(b, F, r, "ns saddr @win6 add @bad6 log drop");
  r = ns_from_gw6();
  xlookup(r, "seen6", SET_ID_ND_SEEN6);
  count_log(r, log_group, EGRESS_LOG_NA_PIN_PREFIX);
  xverdict(r, NF_DROP);
  emit_fam(b, F, r, "ns saddr @seen6 counter log drop");
  r = ns_from_gw6();
  one_lla(r, ND_OPT_SLLA);
  saddr_and_slla(r);
  dynset_add(r, "seen6", SET_ID_ND_SEEN6);
  dynset_add(r, "pin6", SET_ID_ND_PIN6);
  dynset_add(r, "win6", SET_ID_ND_WIN6);
  count_log(r, log_group, EGRESS_LOG_NA_FIRST_PREFIX);
  xverdict(r, NF_ACCEPT);
  emit_fam(b, F, r, "ns from @gw6 add @pin6 log accept");
  r = ns_from_gw6();
  count_log(r, log_group, EGRESS_LOG_NA_PIN_PREFIX);
  xverdict(r, NF_DROP);
  emit_fam(b, F, r, "ns from @gw6 counter log drop");
}

/* The IPv6 gateways' link addresses, pinned at the first advertisement
 * (solicited or not, the kernel keeps no list of what it asked):
 *   table ip6 agentrt {
 *     set gw6, seen6, pin6 (address . ether_addr), win6, bad6 as above
 *     chain input { type filter hook input priority -1; policy accept;
 *       <NA for @gw6> target @bad6 counter log drop  # "agentrt-na-twice: "
 *       <NA for @gw6> payload length 24 accept      # no link address: no change
 *       <NA for @gw6> <one TLLA> target . tlla @pin6 accept
 *       <NA for @gw6> solicited target @win6 add @bad6 counter log drop  # twice
 *       <NA for @gw6> solicited target @seen6 counter log drop
 *       <NA for @gw6> solicited <one TLLA> add @seen6 add @pin6 add @win6
 *         counter log accept                          # "agentrt-na-first: "
 *       <NA for @gw6> solicited counter log drop     # a link address elsewhere
 *       <NS from @gw6> the same, its source for the target, its source
 *         link-layer address option for the TLLA, solicited or not (ns_rules)
 *       <NA> solicited counter log drop } }           # over6 only
 * (log: prefix "agentrt-na-pin: " unless said, the monitor's group)
 * (an unsolicited one goes on to table inet agentrt's in_deny) and the
 * link address a gateway has in the neighbour table at install is pinned.
 * What is accepted here is judged again by table inet agentrt. */
static void nd_table(struct nft_batch_buf *b, const struct nft_build_opts *o, int log_group)
{
  const uint16_t F = NFPROTO_IPV6;
  struct nftnl_rule *r;

  table_msg_fam(b, F, NFT_MSG_NEWTABLE);
  set_fam(b, F, "gw6", SET_ID_ND_GW6, false, 16, false, 0);
  set_fam(b, F, "seen6", SET_ID_ND_SEEN6, true, 16, false, 0);
  set_fam(b, F, "pin6", SET_ID_ND_PIN6, true, 16, true, 0);
  set_fam(b, F, "win6", SET_ID_ND_WIN6, true, 16, false, NFT_GW_WINDOW_MS);
  set_fam(b, F, "bad6", SET_ID_ND_BAD6, true, 16, false, 0);
  nd_elems(b, o);
  input_chain(b, F, -1);
  r = na_for_gw6();
  load(r, NFT_PAYLOAD_TRANSPORT_HEADER, NA_TARGET_OFF, 16, NFT_REG32_00);
  xlookup(r, "bad6", SET_ID_ND_BAD6);
  count_log(r, log_group, EGRESS_LOG_NA_TWICE_PREFIX);
  xverdict(r, NF_DROP);
  emit_fam(b, F, r, "nd-neighbor-advert target @bad6 counter log drop");
  r = na_for_gw6();
  payload_len(r, 24);
  xverdict(r, NF_ACCEPT);
  emit_fam(b, F, r, "nd-neighbor-advert for @gw6 without options accept");
  r = na_for_gw6();
  one_tlla(r);
  target_and_tlla(r);
  xlookup(r, "pin6", SET_ID_ND_PIN6);
  xverdict(r, NF_ACCEPT);
  emit_fam(b, F, r, "nd-neighbor-advert target . tlla @pin6 accept");
  r = na_for_gw6();
  solicited(r);
  xlookup(r, "win6", SET_ID_ND_WIN6);
  dynset_add(r, "bad6", SET_ID_ND_BAD6);
  count_log(r, log_group, EGRESS_LOG_NA_TWICE_PREFIX);
  xverdict(r, NF_DROP);
  emit_fam(b, F, r, "nd-neighbor-advert target @win6 add @bad6 counter log drop");
  r = na_for_gw6();
  solicited(r);
  xlookup(r, "seen6", SET_ID_ND_SEEN6);
  count_log(r, log_group, EGRESS_LOG_NA_PIN_PREFIX);
  xverdict(r, NF_DROP);
  emit_fam(b, F, r, "nd-neighbor-advert target @seen6 counter log drop");
  r = na_for_gw6();
  solicited(r);
  one_tlla(r);
  load(r, NFT_PAYLOAD_TRANSPORT_HEADER, NA_TARGET_OFF, 16, NFT_REG32_00);
  dynset_add(r, "seen6", SET_ID_ND_SEEN6);
  target_and_tlla(r);
  dynset_add(r, "pin6", SET_ID_ND_PIN6);
  load(r, NFT_PAYLOAD_TRANSPORT_HEADER, NA_TARGET_OFF, 16, NFT_REG32_00);
  dynset_add(r, "win6", SET_ID_ND_WIN6);
  count_log(r, log_group, EGRESS_LOG_NA_FIRST_PREFIX);
  xverdict(r, NF_ACCEPT);
  emit_fam(b, F, r, "nd-neighbor-advert for @gw6 add @seen6 add @pin6 add @win6 log accept");
  r = na_for_gw6();
  solicited(r);
  count_log(r, log_group, EGRESS_LOG_NA_PIN_PREFIX);
  xverdict(r, NF_DROP);
  emit_fam(b, F, r, "nd-neighbor-advert for @gw6 counter log drop");
  ns_rules(b, log_group);
  if (o->over6)
    nd_over(b, log_group);
}

void nftb_arp_table(struct nft_batch_buf *b, const struct nft_build_opts *o, int log_group)
{
  if (o->arp_only && (o->keep4 || o->keep6)) {
    /* gateways routed later: a table kept keeps its pins and learns the
     * new gateways; one not made yet is made */
    if (o->n_gw4 > 0 || o->over4) {
      if (!o->keep4) {
        arp_table(b, o, log_group);
      } else {
        arp_elems(b, o);
        if (o->over4) /* appended: after the rules that accept */
          arp_over(b, log_group);
      }
    }
    if (o->n_gw6 > 0 || o->over6) {
      if (!o->keep6) {
        nd_table(b, o, log_group);
      } else {
        nd_elems(b, o);
        if (o->over6)
          nd_over(b, log_group);
      }
    }
    return;
  }
  /* add + delete + add: replaces whatever table of ours was there */
  nftb_arp_table_delete(b);
  if (o->n_gw4 > 0 || o->over4)
    arp_table(b, o, log_group);
  if (o->n_gw6 > 0 || o->over6)
    nd_table(b, o, log_group);
}
