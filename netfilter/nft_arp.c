/* nft_arp.c - table `arp agentrt`: the IPv4 gateway's link address, pinned
 * (pure builders), and the gateways read from procfs' text (pure parser).
 *
 * The inet table never sees ARP: a neighbour on the container's link (another
 * container on the bridge) that sends a forged reply or a gratuitous ARP naming
 * the gateway's IPv4 address with its own link address moves every allowed
 * packet to itself.  For each IPv4 gateway of the namespace the first link
 * address learnt (already in the neighbour table when the table is made, or the
 * first ARP packet from that address after) is pinned; ARP from the gateway's
 * address with another link address is dropped and counted:
 *
 *   table arp agentrt {
 *     set gw4  { type ipv4_addr; elements = { <gateways> } }
 *     set seen { type ipv4_addr; flags dynamic; }          # gateways pinned
 *     set pin  { type ipv4_addr . ether_addr; flags dynamic; }
 *     chain input { type filter hook input priority 0; policy accept;
 *       arp saddr ip . arp saddr ether @pin accept
 *       arp saddr ip @seen counter drop
 *       arp saddr ip @gw4 add @seen { arp saddr ip }
 *         add @pin { arp saddr ip . arp saddr ether } accept } }
 *
 * Offsets are Ethernet ARP's (hardware length 6, protocol length 4), the only
 * kind the kernel takes on an Ethernet link.
 */
#include "netfilter/nft_internal.h"

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
#define TYPE_ETHER_ADDR 9
#define ARP_SHA_OFF 8
#define ARP_SPA_OFF 14
#define PIN_SIZE 16

static void arp_table_msg(struct nft_batch_buf *b, uint16_t type)
{
  struct nftnl_table *t = nftnl_table_alloc();
  struct nlmsghdr *nlh;

  if (t == NULL)
    abort();
  nftnl_table_set_u32(t, NFTNL_TABLE_FAMILY, NFPROTO_ARP);
  nftnl_table_set_str(t, NFTNL_TABLE_NAME, NFT_TABLE_NAME);
  nlh = nftb_msg_family(b, NFPROTO_ARP, type, type == NFT_MSG_NEWTABLE ? NLM_F_CREATE : 0,
                        "%s table `arp %s`", type == NFT_MSG_NEWTABLE ? "add" : "delete",
                        NFT_TABLE_NAME);
  nftnl_table_nlmsg_build_payload(nlh, t);
  nftb_done(b, nlh);
  nftnl_table_free(t);
}

void nftb_arp_table_delete(struct nft_batch_buf *b)
{
  /* add + delete: no error when there is none */
  arp_table_msg(b, NFT_MSG_NEWTABLE);
  arp_table_msg(b, NFT_MSG_DELTABLE);
}

static struct nftnl_set *arp_set_new(const char *name, uint32_t id)
{
  struct nftnl_set *s = nftnl_set_alloc();

  if (s == NULL)
    abort();
  nftnl_set_set_u32(s, NFTNL_SET_FAMILY, NFPROTO_ARP);
  nftnl_set_set_str(s, NFTNL_SET_TABLE, NFT_TABLE_NAME);
  nftnl_set_set_str(s, NFTNL_SET_NAME, name);
  nftnl_set_set_u32(s, NFTNL_SET_ID, id);
  return s;
}

static void arp_set(struct nft_batch_buf *b, const char *name, uint32_t id, bool dynamic, bool pair)
{
  static const uint8_t concat[] = {4, 6};
  struct nftnl_set *s = arp_set_new(name, id);
  struct nlmsghdr *nlh;

  nftnl_set_set_u32(s, NFTNL_SET_FLAGS, (dynamic ? NFT_SET_EVAL : 0) | (pair ? NFT_SET_CONCAT : 0));
  nftnl_set_set_u32(s, NFTNL_SET_KEY_TYPE,
                    pair ? (uint32_t)(TYPE_IPV4_ADDR << 6 | TYPE_ETHER_ADDR) : TYPE_IPV4_ADDR);
  nftnl_set_set_u32(s, NFTNL_SET_KEY_LEN, pair ? 12 : 4);
  if (pair)
    nftnl_set_set_data(s, NFTNL_SET_DESC_CONCAT, concat, sizeof concat);
  if (dynamic)
    nftnl_set_set_u32(s, NFTNL_SET_DESC_SIZE, PIN_SIZE);
  nlh = nftb_msg_family(b, NFPROTO_ARP, NFT_MSG_NEWSET, NLM_F_CREATE, "add set `arp %s`", name);
  nftnl_set_nlmsg_build_payload(nlh, s);
  nftb_done(b, nlh);
  nftnl_set_free(s);
}

/* One element: a gateway (4 bytes) or a gateway and its link address (4 + 6,
 * the second field padded to 8). */
static void arp_elem(struct nft_batch_buf *b, const char *name, uint32_t id, const uint8_t *ip,
                     const uint8_t *mac)
{
  struct nftnl_set *s = arp_set_new(name, id);
  struct nftnl_set_elem *e = nftnl_set_elem_alloc();
  uint8_t key[12] = {0};
  struct nlmsghdr *nlh;

  if (e == NULL)
    abort();
  memcpy(key, ip, 4);
  if (mac != NULL)
    memcpy(key + 4, mac, 6);
  nftnl_set_elem_set(e, NFTNL_SET_ELEM_KEY, key, mac != NULL ? 12 : 4);
  nftnl_set_elem_add(s, e);
  nlh = nftb_msg_family(b, NFPROTO_ARP, NFT_MSG_NEWSETELEM, NLM_F_CREATE,
                        "add element to set `arp %s`", name);
  nftnl_set_elems_nlmsg_build_payload(nlh, s);
  nftb_done(b, nlh);
  nftnl_set_free(s);
}

static struct nftnl_expr *arp_expr(struct nftnl_rule *r, const char *name)
{
  struct nftnl_expr *e = nftnl_expr_alloc(name);

  if (e == NULL)
    abort();
  nftnl_rule_add_expr(r, e);
  return e;
}

static void arp_load(struct nftnl_rule *r, bool with_mac)
{
  struct nftnl_expr *e = arp_expr(r, "payload");

  nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_DREG, NFT_REG32_00);
  nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_BASE, NFT_PAYLOAD_NETWORK_HEADER);
  nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_OFFSET, ARP_SPA_OFF);
  nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_LEN, 4);
  if (!with_mac)
    return;
  e = arp_expr(r, "payload");
  nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_DREG, NFT_REG32_01);
  nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_BASE, NFT_PAYLOAD_NETWORK_HEADER);
  nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_OFFSET, ARP_SHA_OFF);
  nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_LEN, 6);
}

static void arp_lookup(struct nftnl_rule *r, const char *set, uint32_t id)
{
  struct nftnl_expr *e = arp_expr(r, "lookup");

  nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_SREG, NFT_REG32_00);
  nftnl_expr_set_str(e, NFTNL_EXPR_LOOKUP_SET, set);
  nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_SET_ID, id);
}

static void arp_dynset_add(struct nftnl_rule *r, const char *set, uint32_t id)
{
  struct nftnl_expr *e = arp_expr(r, "dynset");

  nftnl_expr_set_u32(e, NFTNL_EXPR_DYNSET_SREG_KEY, NFT_REG32_00);
  nftnl_expr_set_u32(e, NFTNL_EXPR_DYNSET_OP, NFT_DYNSET_OP_ADD);
  nftnl_expr_set_str(e, NFTNL_EXPR_DYNSET_SET_NAME, set);
  nftnl_expr_set_u32(e, NFTNL_EXPR_DYNSET_SET_ID, id);
}

static void arp_verdict(struct nftnl_rule *r, int v)
{
  struct nftnl_expr *e = arp_expr(r, "immediate");

  nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_VERDICT);
  nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_VERDICT, (uint32_t)v);
}

static struct nftnl_rule *arp_rule(void)
{
  struct nftnl_rule *r = nftnl_rule_alloc();

  if (r == NULL)
    abort();
  nftnl_rule_set_u32(r, NFTNL_RULE_FAMILY, NFPROTO_ARP);
  nftnl_rule_set_str(r, NFTNL_RULE_TABLE, NFT_TABLE_NAME);
  nftnl_rule_set_str(r, NFTNL_RULE_CHAIN, "input");
  return r;
}

static void arp_rule_emit(struct nft_batch_buf *b, struct nftnl_rule *r, const char *what)
{
  struct nlmsghdr *nlh =
      nftb_msg_family(b, NFPROTO_ARP, NFT_MSG_NEWRULE, NLM_F_CREATE | NLM_F_APPEND,
                      "add rule `%s` in chain `arp input`", what);
  nftnl_rule_nlmsg_build_payload(nlh, r);
  nftb_done(b, nlh);
  nftnl_rule_free(r);
}

void nftb_arp_table(struct nft_batch_buf *b, const struct nft_build_opts *o)
{
  struct nftnl_chain *c;
  struct nftnl_rule *r;
  struct nlmsghdr *nlh;

  /* add + delete + add: replaces whatever table of ours was there */
  nftb_arp_table_delete(b);
  if (o->n_gw4 == 0)
    return;
  arp_table_msg(b, NFT_MSG_NEWTABLE);
  arp_set(b, "gw4", SET_ID_ARP_GW4, false, false);
  arp_set(b, "seen", SET_ID_ARP_SEEN, true, false);
  arp_set(b, "pin", SET_ID_ARP_PIN, true, true);
  for (size_t i = 0; i < o->n_gw4 && i < NFT_MAX_GW4; i++) {
    arp_elem(b, "gw4", SET_ID_ARP_GW4, o->gw4[i].ip, NULL);
    if (o->gw4[i].mac_known) {
      arp_elem(b, "seen", SET_ID_ARP_SEEN, o->gw4[i].ip, NULL);
      arp_elem(b, "pin", SET_ID_ARP_PIN, o->gw4[i].ip, o->gw4[i].mac);
    }
  }
  c = nftnl_chain_alloc();
  if (c == NULL)
    abort();
  nftnl_chain_set_u32(c, NFTNL_CHAIN_FAMILY, NFPROTO_ARP);
  nftnl_chain_set_str(c, NFTNL_CHAIN_TABLE, NFT_TABLE_NAME);
  nftnl_chain_set_str(c, NFTNL_CHAIN_NAME, "input");
  nftnl_chain_set_str(c, NFTNL_CHAIN_TYPE, "filter");
  nftnl_chain_set_u32(c, NFTNL_CHAIN_HOOKNUM, NF_ARP_IN);
  nftnl_chain_set_s32(c, NFTNL_CHAIN_PRIO, 0);
  nftnl_chain_set_u32(c, NFTNL_CHAIN_POLICY, NF_ACCEPT);
  nlh = nftb_msg_family(b, NFPROTO_ARP, NFT_MSG_NEWCHAIN, NLM_F_CREATE, "add chain `arp input`");
  nftnl_chain_nlmsg_build_payload(nlh, c);
  nftb_done(b, nlh);
  nftnl_chain_free(c);

  r = arp_rule();
  arp_load(r, true);
  arp_lookup(r, "pin", SET_ID_ARP_PIN);
  arp_verdict(r, NF_ACCEPT);
  arp_rule_emit(b, r, "arp saddr ip . arp saddr ether @pin accept");
  r = arp_rule();
  arp_load(r, false);
  arp_lookup(r, "seen", SET_ID_ARP_SEEN);
  arp_expr(r, "counter");
  arp_verdict(r, NF_DROP);
  arp_rule_emit(b, r, "arp saddr ip @seen counter drop");
  r = arp_rule();
  arp_load(r, false);
  arp_lookup(r, "gw4", SET_ID_ARP_GW4);
  arp_dynset_add(r, "seen", SET_ID_ARP_SEEN);
  arp_load(r, true);
  arp_dynset_add(r, "pin", SET_ID_ARP_PIN);
  arp_verdict(r, NF_ACCEPT);
  arp_rule_emit(b, r, "arp saddr ip @gw4 add @seen add @pin accept");
}

/* ------------------------------------------------------------- procfs text */

static int hexval(int ch)
{
  if (ch >= '0' && ch <= '9')
    return ch - '0';
  if (ch >= 'a' && ch <= 'f')
    return ch - 'a' + 10;
  if (ch >= 'A' && ch <= 'F')
    return ch - 'A' + 10;
  return -1;
}

/* "4e:32:16:0f:ff:87" */
static bool parse_mac(const char *s, uint8_t mac[6])
{
  for (int i = 0; i < 6; i++) {
    int h = hexval((unsigned char)s[3 * i]), l = hexval((unsigned char)s[3 * i + 1]);
    if (h < 0 || l < 0 || (i < 5 && s[3 * i + 2] != ':'))
      return false;
    mac[i] = (uint8_t)(h << 4 | l);
  }
  return true;
}

size_t egress_gw4_parse(const char *route, const char *arp, struct nft_build_opts *o)
{
  const char *line;

  o->n_gw4 = 0;
  /* /proc/net/route: "Iface Destination Gateway Flags ...", addresses as
   * the host's-order hex of the network-order bytes */
  for (line = route; line != NULL && *line != '\0';) {
    const char *nl = strchr(line, '\n');
    char iface[32];
    unsigned dst, gw, flags;

    if (sscanf(line, "%31s %x %x %x", iface, &dst, &gw, &flags) == 4 && (flags & 0x2) != 0 &&
        gw != 0 && o->n_gw4 < NFT_MAX_GW4) {
      uint8_t ip[4];
      bool dup = false;
      memcpy(ip, &gw, 4);
      for (size_t i = 0; i < o->n_gw4; i++)
        dup = dup || memcmp(o->gw4[i].ip, ip, 4) == 0;
      if (!dup) {
        memset(&o->gw4[o->n_gw4], 0, sizeof o->gw4[0]);
        memcpy(o->gw4[o->n_gw4++].ip, ip, 4);
      }
    }
    line = nl != NULL ? nl + 1 : NULL;
  }
  /* /proc/net/arp: "IP address HW type Flags HW address Mask Device"; a
   * complete entry (flags 0x2) of a gateway is its pin from the start */
  for (line = arp; line != NULL && *line != '\0';) {
    const char *nl = strchr(line, '\n');
    char ipstr[16], mac[18];
    unsigned a, b4, c, d, hwtype, flags;
    uint8_t m[6];

    if (sscanf(line, "%15s 0x%x 0x%x %17s", ipstr, &hwtype, &flags, mac) == 4 && hwtype == 1 &&
        (flags & 0x2) != 0 && sscanf(ipstr, "%u.%u.%u.%u", &a, &b4, &c, &d) == 4 && a < 256 &&
        b4 < 256 && c < 256 && d < 256 && parse_mac(mac, m))
      for (size_t i = 0; i < o->n_gw4; i++) {
        const uint8_t ip[4] = {(uint8_t)a, (uint8_t)b4, (uint8_t)c, (uint8_t)d};
        if (memcmp(o->gw4[i].ip, ip, 4) == 0 && !o->gw4[i].mac_known) {
          memcpy(o->gw4[i].mac, m, 6);
          o->gw4[i].mac_known = true;
        }
      }
    line = nl != NULL ? nl + 1 : NULL;
  }
  return o->n_gw4;
}
