/* nft.c - build the egress ruleset as one nftables netlink batch (pure).
 *
 * The bytes depend only on the policy and the options (sequence numbers
 * start at seq_base, port ids are 0), so tests compare them with golden
 * files.  The layout of the ruleset is documented in egress.h.
 */
#include "netfilter/nft_internal.h"

#include <arpa/inet.h>
#include <libnftnl/chain.h>
#include <libnftnl/common.h>
#include <libnftnl/expr.h>
#include <libnftnl/table.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <linux/netfilter/nf_conntrack_tuple_common.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/socket.h>

#include "common/util.h"

#define MSG_HEADROOM 32768

void nftb_init(struct nft_batch_buf *b, uint32_t seq_base)
{
  memset(b, 0, sizeof *b);
  b->seq_next = seq_base;
}

void nft_batch_buf_free(struct nft_batch_buf *b)
{
  free(b->data);
  free(b->msgs);
  memset(b, 0, sizeof *b);
}

static char *reserve(struct nft_batch_buf *b)
{
  if (b->cap - b->len < MSG_HEADROOM) {
    b->cap = b->cap * 2 + MSG_HEADROOM;
    b->data = xrealloc(b->data, b->cap);
  }
  memset(b->data + b->len, 0, MSG_HEADROOM);
  return (char *)b->data + b->len;
}

static struct nlmsghdr *vmsg(struct nft_batch_buf *b, uint16_t family, uint16_t type,
                             uint16_t flags, const char *what_fmt, va_list ap)
{
  struct nft_batch_msg *m;

  if (b->n_msgs == b->cap_msgs) {
    b->cap_msgs = b->cap_msgs * 2 + 16;
    b->msgs = xrealloc(b->msgs, b->cap_msgs * sizeof *b->msgs);
  }
  m = &b->msgs[b->n_msgs++];
  m->seq = b->seq_next;
  vsnprintf(m->what, sizeof m->what, what_fmt, ap);
  return nftnl_nlmsg_build_hdr(reserve(b), type, family, flags | NLM_F_ACK, b->seq_next++);
}

struct nlmsghdr *nftb_msg(struct nft_batch_buf *b, uint16_t type, uint16_t flags,
                          const char *what_fmt, ...)
{
  struct nlmsghdr *nlh;
  va_list ap;

  va_start(ap, what_fmt);
  nlh = vmsg(b, NFPROTO_INET, type, flags, what_fmt, ap);
  va_end(ap);
  return nlh;
}

struct nlmsghdr *nftb_msg_family(struct nft_batch_buf *b, uint16_t family, uint16_t type,
                                 uint16_t flags, const char *what_fmt, ...)
{
  struct nlmsghdr *nlh;
  va_list ap;

  va_start(ap, what_fmt);
  nlh = vmsg(b, family, type, flags, what_fmt, ap);
  va_end(ap);
  return nlh;
}

void nftb_done(struct nft_batch_buf *b, struct nlmsghdr *nlh)
{
  if (nlh->nlmsg_len > MSG_HEADROOM)
    abort(); /* a single message can never be that large: bug */
  b->len += NLMSG_ALIGN(nlh->nlmsg_len);
}

void nftb_begin(struct nft_batch_buf *b)
{
  nftb_done(b, nftnl_batch_begin(reserve(b), b->seq_next++));
}

void nftb_end(struct nft_batch_buf *b)
{
  nftb_done(b, nftnl_batch_end(reserve(b), b->seq_next++));
}

/* ------------------------------------------------------------ expressions */

static struct nftnl_expr *expr(struct nftnl_rule *r, const char *name)
{
  struct nftnl_expr *e = nftnl_expr_alloc(name);

  if (e == NULL)
    abort();
  nftnl_rule_add_expr(r, e);
  return e;
}

static void meta(struct nftnl_rule *r, uint32_t key, uint32_t dreg)
{
  struct nftnl_expr *e = expr(r, "meta");
  nftnl_expr_set_u32(e, NFTNL_EXPR_META_KEY, key);
  nftnl_expr_set_u32(e, NFTNL_EXPR_META_DREG, dreg);
}

static void cmp(struct nftnl_rule *r, uint32_t op, const void *data, uint32_t len)
{
  struct nftnl_expr *e = expr(r, "cmp");
  nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_SREG, NFT_REG_1);
  nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_OP, op);
  nftnl_expr_set(e, NFTNL_EXPR_CMP_DATA, data, len);
}

static void cmp_u8(struct nftnl_rule *r, uint8_t v)
{
  cmp(r, NFT_CMP_EQ, &v, 1);
}

static void payload(struct nftnl_rule *r, uint32_t base, uint32_t off, uint32_t len, uint32_t dreg)
{
  struct nftnl_expr *e = expr(r, "payload");
  nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_DREG, dreg);
  nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_BASE, base);
  nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_OFFSET, off);
  nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_LEN, len);
}

static void bitwise(struct nftnl_rule *r, const void *mask, uint32_t len)
{
  static const uint8_t zero[16];
  struct nftnl_expr *e = expr(r, "bitwise");
  nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_SREG, NFT_REG_1);
  nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_DREG, NFT_REG_1);
  nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_LEN, len);
  nftnl_expr_set(e, NFTNL_EXPR_BITWISE_MASK, mask, len);
  nftnl_expr_set(e, NFTNL_EXPR_BITWISE_XOR, zero, len);
}

static void range16(struct nftnl_rule *r, uint16_t from, uint16_t to)
{
  struct nftnl_expr *e = expr(r, "range");
  uint16_t f = htons(from), t = htons(to);
  nftnl_expr_set_u32(e, NFTNL_EXPR_RANGE_SREG, NFT_REG_1);
  nftnl_expr_set_u32(e, NFTNL_EXPR_RANGE_OP, NFT_RANGE_EQ);
  nftnl_expr_set(e, NFTNL_EXPR_RANGE_FROM_DATA, &f, sizeof f);
  nftnl_expr_set(e, NFTNL_EXPR_RANGE_TO_DATA, &t, sizeof t);
}

static void lookup(struct nftnl_rule *r, uint32_t sreg, const char *set, uint32_t set_id)
{
  struct nftnl_expr *e = expr(r, "lookup");
  nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_SREG, sreg);
  nftnl_expr_set_str(e, NFTNL_EXPR_LOOKUP_SET, set);
  nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_SET_ID, set_id);
}

static void verdict(struct nftnl_rule *r, int v, const char *chain)
{
  struct nftnl_expr *e = expr(r, "immediate");
  nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_VERDICT);
  nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_VERDICT, (uint32_t)v);
  if (chain != NULL)
    nftnl_expr_set_str(e, NFTNL_EXPR_IMM_CHAIN, chain);
}

static void reject(struct nftnl_rule *r, uint32_t type, uint8_t code)
{
  struct nftnl_expr *e = expr(r, "reject");
  nftnl_expr_set_u32(e, NFTNL_EXPR_REJECT_TYPE, type);
  nftnl_expr_set_u8(e, NFTNL_EXPR_REJECT_CODE, code);
}

/* --------------------------------------------------------------- matches */

static void match_nfproto(struct nftnl_rule *r, uint8_t nfproto)
{
  meta(r, NFT_META_NFPROTO, NFT_REG_1);
  cmp_u8(r, nfproto);
}

static void match_daddr(struct nftnl_rule *r, bool v6, const uint8_t *addr, unsigned prefix)
{
  uint32_t len = v6 ? 16 : 4;
  uint8_t mask[16] = {0};

  match_nfproto(r, v6 ? NFPROTO_IPV6 : NFPROTO_IPV4);
  if (prefix == 0)
    return;
  payload(r, NFT_PAYLOAD_NETWORK_HEADER, v6 ? 24 : 16, len, NFT_REG_1);
  if (prefix < len * 8) {
    for (unsigned i = 0; i < prefix; i++)
      mask[i / 8] |= (uint8_t)(0x80 >> (i % 8));
    bitwise(r, mask, len);
  }
  cmp(r, NFT_CMP_EQ, addr, len);
}

static void match_l4(struct nftnl_rule *r, uint8_t proto, uint16_t pmin, uint16_t pmax)
{
  meta(r, NFT_META_L4PROTO, NFT_REG_1);
  cmp_u8(r, proto);
  if (pmin == 0)
    return;
  payload(r, NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2, NFT_REG_1);
  if (pmin == pmax) {
    uint16_t p = htons(pmin);
    cmp(r, NFT_CMP_EQ, &p, 2);
  } else {
    range16(r, pmin, pmax);
  }
}

/* redirect to a local port (nat): the port in a register, then redir */
static void redirect_to(struct nftnl_rule *r, uint16_t port)
{
  uint16_t p = htons(port);
  struct nftnl_expr *e = expr(r, "immediate");

  nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_1);
  nftnl_expr_set(e, NFTNL_EXPR_IMM_DATA, &p, sizeof p);
  e = expr(r, "redir");
  nftnl_expr_set_u32(e, NFTNL_EXPR_REDIR_REG_PROTO_MIN, NFT_REG_1);
}

/* ----------------------------------------------------------------- rules */

static struct nftnl_rule *rule_new(const char *chain)
{
  struct nftnl_rule *r = nftnl_rule_alloc();

  if (r == NULL)
    abort();
  nftnl_rule_set_u32(r, NFTNL_RULE_FAMILY, NFPROTO_INET);
  nftnl_rule_set_str(r, NFTNL_RULE_TABLE, NFT_TABLE_NAME);
  nftnl_rule_set_str(r, NFTNL_RULE_CHAIN, chain);
  return r;
}

static void rule_emit(struct nft_batch_buf *b, struct nftnl_rule *r, const char *what)
{
  const char *chain = nftnl_rule_get_str(r, NFTNL_RULE_CHAIN);
  struct nlmsghdr *nlh = nftb_msg(b, NFT_MSG_NEWRULE, NLM_F_CREATE | NLM_F_APPEND,
                                  "add rule `%s` in chain `%s`", what, chain);
  nftnl_rule_nlmsg_build_payload(nlh, r);
  nftb_done(b, nlh);
  nftnl_rule_free(r);
}

/* One allow rule per (entry, protocol): in allow_ll or allow_ports. */
static void rule_entry(struct nft_batch_buf *b, const char *chain, const struct egress_entry *e)
{
  static const uint8_t both[] = {IPPROTO_TCP, IPPROTO_UDP};
  bool ports = e->proto != 0 || e->port_min != 0;
  size_t n = ports && e->proto == 0 ? 2 : 1;
  char what[EGRESS_ENTRY_STR_MAX];

  egress_entry_format(e, what);
  for (size_t i = 0; i < n; i++) {
    struct nftnl_rule *r = rule_new(chain);
    match_daddr(r, e->kind == EGRESS_CIDR6, e->addr, e->prefix);
    if (ports)
      match_l4(r, e->proto != 0 ? e->proto : both[i], e->port_min, e->port_max);
    verdict(r, NFT_GOTO, "allowed");
    rule_emit(b, r, what);
  }
}

static void rules_static(struct nft_batch_buf *b, const struct egress_policy *p)
{
  for (size_t i = 0; i < p->n_entries; i++) {
    const struct egress_entry *e = &p->entries[i];
    if (e->kind == EGRESS_DOMAIN)
      continue;
    if (egress_entry_is_link_local(e))
      rule_entry(b, "allow_ll", e);
    else if (e->proto != 0 || e->port_min != 0)
      rule_entry(b, "allow_ports", e);
  }
}

static void rule_lookup(struct nft_batch_buf *b, bool v6, const char *set, uint32_t id)
{
  struct nftnl_rule *r = rule_new("output");

  match_nfproto(r, v6 ? NFPROTO_IPV6 : NFPROTO_IPV4);
  payload(r, NFT_PAYLOAD_NETWORK_HEADER, v6 ? 24 : 16, v6 ? 16 : 4, NFT_REG_1);
  lookup(r, NFT_REG_1, set, id);
  verdict(r, NFT_GOTO, "allowed");
  rule_emit(b, r, set);
}

/* ip daddr . meta l4proto . th dport @dnsNp: 32-bit registers, one field each. */
static void rule_lookup_port(struct nft_batch_buf *b, bool v6, const char *set, uint32_t id)
{
  struct nftnl_rule *r = rule_new("output");
  uint32_t areg = NFT_REG32_00, preg = v6 ? NFT_REG32_04 : NFT_REG32_01;

  match_nfproto(r, v6 ? NFPROTO_IPV6 : NFPROTO_IPV4);
  payload(r, NFT_PAYLOAD_NETWORK_HEADER, v6 ? 24 : 16, v6 ? 16 : 4, areg);
  meta(r, NFT_META_L4PROTO, preg);
  payload(r, NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2, preg + 1);
  lookup(r, areg, set, id);
  verdict(r, NFT_GOTO, "allowed");
  rule_emit(b, r, set);
}

static void rule_simple(struct nft_batch_buf *b, const char *chain, int v, const char *target,
                        const char *what)
{
  struct nftnl_rule *r = rule_new(chain);
  verdict(r, v, target);
  rule_emit(b, r, what);
}

static void ct_get(struct nftnl_rule *r, uint32_t key)
{
  struct nftnl_expr *e = expr(r, "ct");
  nftnl_expr_set_u32(e, NFTNL_EXPR_CT_KEY, key);
  nftnl_expr_set_u32(e, NFTNL_EXPR_CT_DREG, NFT_REG_1);
}

/* fib saddr type != local: the packet's source is none of the netns's
 * own addresses.  IP_FREEBIND (no capability) lets an IPv6 socket send
 * from any address: a packet "from" a refused host to the container's own
 * address goes through lo and leaves a conntrack entry whose reply
 * direction is the refused host, which "ct direction reply" would then let
 * out; a reject of a spoofed packet is an ICMPv6 error carrying its payload
 * to the spoofed source.  Such packets are dropped (never rejected) and
 * logged.  Only packets that start something (ct state new, invalid or
 * untracked) are judged: the TCP reset chain deny sends to a local socket
 * comes from the refused peer's address, but as related to the flow; a
 * spoofed packet never gets a confirmed flow of its own.  The unspecified
 * source (DAD, MLD before an address) is left to the rules below. */
static void rule_spoofed(struct nft_batch_buf *b, bool v6)
{
  static const uint8_t any[16];
  uint32_t local = RTN_LOCAL, zero = 0,
           state = NF_CT_STATE_BIT(IP_CT_NEW) | NF_CT_STATE_INVALID_BIT | NF_CT_STATE_UNTRACKED_BIT;
  struct nftnl_rule *r = rule_new("output");
  struct nftnl_expr *e;

  match_nfproto(r, v6 ? NFPROTO_IPV6 : NFPROTO_IPV4);
  ct_get(r, NFT_CT_STATE);
  bitwise(r, &state, 4);
  cmp(r, NFT_CMP_NEQ, &zero, 4);
  payload(r, NFT_PAYLOAD_NETWORK_HEADER, v6 ? 8 : 12, v6 ? 16 : 4, NFT_REG_1);
  cmp(r, NFT_CMP_NEQ, any, v6 ? 16 : 4);
  e = expr(r, "fib");
  nftnl_expr_set_u32(e, NFTNL_EXPR_FIB_FLAGS, NFTA_FIB_F_SADDR);
  nftnl_expr_set_u32(e, NFTNL_EXPR_FIB_RESULT, NFT_FIB_RESULT_ADDRTYPE);
  nftnl_expr_set_u32(e, NFTNL_EXPR_FIB_DREG, NFT_REG_1);
  cmp(r, NFT_CMP_NEQ, &local, 4);
  verdict(r, NFT_GOTO, "spoofed");
  rule_emit(b, r,
            v6 ? "ct state new,invalid,untracked ip6 saddr != :: fib saddr type != local"
               : "ct state new,invalid,untracked ip saddr != 0.0.0.0 fib saddr type != local");
}

/* exthdr rt exists goto deny: a routing header (type 4, SRv6, can be set
 * with IPV6_RTHDR without a capability) makes the address judged here only
 * the first hop; the destination the socket named rides in the header, and
 * a node of an allowed address that processes segment routing forwards the
 * packet there. */
static void rule_rthdr(struct nft_batch_buf *b)
{
  struct nftnl_rule *r = rule_new("output");
  struct nftnl_expr *e;

  match_nfproto(r, NFPROTO_IPV6);
  e = expr(r, "exthdr");
  nftnl_expr_set_u32(e, NFTNL_EXPR_EXTHDR_DREG, NFT_REG_1);
  nftnl_expr_set_u8(e, NFTNL_EXPR_EXTHDR_TYPE, IPPROTO_ROUTING);
  nftnl_expr_set_u32(e, NFTNL_EXPR_EXTHDR_OFFSET, 0);
  nftnl_expr_set_u32(e, NFTNL_EXPR_EXTHDR_LEN, 1);
  nftnl_expr_set_u32(e, NFTNL_EXPR_EXTHDR_FLAGS, NFT_EXTHDR_F_PRESENT);
  nftnl_expr_set_u32(e, NFTNL_EXPR_EXTHDR_OP, NFT_EXTHDR_OP_IPV6);
  cmp_u8(r, 1);
  verdict(r, NFT_GOTO, "deny");
  rule_emit(b, r, "exthdr rt exists");
}

/* ip hdrlength != 5 goto deny: IPv4 with options.  A loose or strict source
 * route (LSRR, SSRR; IP_OPTIONS, or an IP_RETOPTS message) makes the address
 * judged here only the first hop, as a routing header does for IPv6: the
 * socket's destination rides in the option, and an allowed host that
 * accepts source routes forwards the packet there (lsrr-first-hop).  No
 * option is needed by the container's own traffic (the kernel's IGMP, with
 * Router Alert, goes to multicast, which is denied anyway), so all are
 * denied rather than the option list walked. */
static void rule_ipopts(struct nft_batch_buf *b)
{
  static const uint8_t ihl_mask = 0x0f, ihl_plain = 5;
  struct nftnl_rule *r = rule_new("output");

  match_nfproto(r, NFPROTO_IPV4);
  payload(r, NFT_PAYLOAD_NETWORK_HEADER, 0, 1, NFT_REG_1);
  bitwise(r, &ihl_mask, 1);
  cmp(r, NFT_CMP_NEQ, &ihl_plain, 1);
  verdict(r, NFT_GOTO, "deny");
  rule_emit(b, r, "ip hdrlength != 5");
}

static void rules_output_head(struct nft_batch_buf *b)
{
  static const uint8_t ll4[4] = {169, 254}, ll6[16] = {0xfe, 0x80};
  static const uint8_t lo4[4] = {127}, lo6[16] = {[15] = 1};
  static const uint8_t ec2[16] = {0xfd, 0x00, 0x0e, 0xc2, [14] = 0x02, [15] = 0x54};
  uint32_t lo = 1, ctmask = NF_CT_STATE_BIT(IP_CT_RELATED), zero = 0;
  struct nftnl_rule *r;

  rule_spoofed(b, false);
  rule_spoofed(b, true);
  rule_rthdr(b);
  rule_ipopts(b);
  r = rule_new("output");
  meta(r, NFT_META_OIF, NFT_REG_1); /* lo is ifindex 1 in every netns */
  cmp(r, NFT_CMP_EQ, &lo, 4);
  verdict(r, NF_ACCEPT, NULL);
  rule_emit(b, r, "oif lo");

  /* DNS redirected by nat_out to 127.0.0.1/::1 still shows the original
   * oif here (the hook state is not updated by the reroute): accept
   * loopback destinations explicitly; chain post drops one that would leave
   * by another device (a socket bound to it). */
  r = rule_new("output");
  match_daddr(r, false, lo4, 8);
  verdict(r, NF_ACCEPT, NULL);
  rule_emit(b, r, "ip daddr 127.0.0.0/8");
  r = rule_new("output");
  match_daddr(r, true, lo6, 128);
  verdict(r, NF_ACCEPT, NULL);
  rule_emit(b, r, "ip6 daddr ::1");

  /* Known without the rules below: ICMP errors of known flows, and the
   * container's side of the inbound flows chain input let in (reply
   * direction).  Every packet of a flow the container started is judged by
   * the allow rules, not only its first: a live deny or the expiry of a
   * pinned address ends the connection at its next packet (a reset to the
   * local socket), instead of leaving it open under "established". */
  r = rule_new("output");
  ct_get(r, NFT_CT_STATE);
  bitwise(r, &ctmask, 4);
  cmp(r, NFT_CMP_NEQ, &zero, 4);
  verdict(r, NF_ACCEPT, NULL);
  rule_emit(b, r, "ct state related");
  r = rule_new("output");
  ct_get(r, NFT_CT_DIRECTION);
  cmp_u8(r, IP_CT_DIR_REPLY);
  verdict(r, NF_ACCEPT, NULL);
  rule_emit(b, r, "ct direction reply");

  /* IPv6 neighbour discovery the container's own link needs: router
   * solicitation (133), neighbour solicitation and advertisement (135, 136),
   * all with hop limit 255 as RFC 4861 requires (a packet that was not
   * made for the link is not ND).  Nothing else of ICMPv6 is accepted here:
   * MLD reports (v1 131, v2 143, done 132, queries 130) carry the groups a
   * socket joins, 16 bytes of its choice each (ff0e:0:<12 bytes>), and go
   * to chain deny (counted, logged) like every other unlisted packet.
   * Replies and errors of allowed flows are accepted above as established
   * or related; echo requests to allowed addresses take the allow rules. */
  for (uint8_t t = 133; t <= 136; t++) {
    uint8_t hl = 255;
    if (t == 134)
      continue; /* router advertisements are not the container's to send */
    r = rule_new("output");
    match_nfproto(r, NFPROTO_IPV6);
    meta(r, NFT_META_L4PROTO, NFT_REG_1);
    cmp_u8(r, IPPROTO_ICMPV6);
    payload(r, NFT_PAYLOAD_NETWORK_HEADER, 7, 1, NFT_REG_1);
    cmp(r, NFT_CMP_EQ, &hl, 1);
    payload(r, NFT_PAYLOAD_TRANSPORT_HEADER, 0, 1, NFT_REG_1);
    cmp_u8(r, t);
    verdict(r, NF_ACCEPT, NULL);
    rule_emit(b, r,
              t == 133   ? "icmpv6 nd-router-solicit"
              : t == 135 ? "icmpv6 nd-neighbor-solicit"
                         : "icmpv6 nd-neighbor-advert");
  }

  rule_simple(b, "output", NFT_JUMP, "allow_ll", "jump allow_ll");
  /* Cloud metadata and link-local: denied unless listed (chain allow_ll). */
  r = rule_new("output");
  match_daddr(r, false, ll4, 16);
  verdict(r, NFT_GOTO, "deny");
  rule_emit(b, r, "ip daddr 169.254.0.0/16");
  r = rule_new("output");
  match_daddr(r, true, ll6, 10);
  verdict(r, NFT_GOTO, "deny");
  rule_emit(b, r, "ip6 daddr fe80::/10");
  r = rule_new("output");
  match_daddr(r, true, ec2, 128);
  verdict(r, NFT_GOTO, "deny");
  rule_emit(b, r, "ip6 daddr fd00:ec2::254");
}

static void rules_output(struct nft_batch_buf *b, const struct egress_policy *p, bool proxy)
{
  rules_output_head(b);
  if (proxy) {
    /* HTTP/3 (QUIC, UDP 443) would reach a secret's or a ruled host past the
     * proxy (its HTTP rules and its server name check): refused, so that
     * clients fall back to TCP, which the proxy sees */
    struct nftnl_rule *r = rule_new("output");
    match_l4(r, IPPROTO_UDP, 443, 443);
    verdict(r, NFT_GOTO, "deny");
    rule_emit(b, r, "udp dport 443 (QUIC past the proxy)");
  }
  if (p->default_allow) {
    /* what the policy would accept anyway, through the flow log */
    rule_simple(b, "output", NFT_GOTO, "allowed", "goto allowed");
    return;
  }
  /* every packet of an outbound flow comes here: the set lookups (one
   * hash or tree lookup each) before the linear chain of port rules */
  rule_lookup(b, false, "allow4", SET_ID_ALLOW4);
  rule_lookup(b, true, "allow6", SET_ID_ALLOW6);
  rule_lookup(b, false, "dns4", SET_ID_DNS4);
  rule_lookup(b, true, "dns6", SET_ID_DNS6);
  rule_lookup_port(b, false, "dns4p", SET_ID_DNS4P);
  rule_lookup_port(b, true, "dns6p", SET_ID_DNS6P);
  rule_simple(b, "output", NFT_JUMP, "allow_ports", "jump allow_ports");
  rule_simple(b, "output", NFT_GOTO, "deny", "goto deny");
}

/* The first rule of a chain that ends a packet: counted, and logged to the
 * monitor's group (when there is one) with prefix. */
static void rule_count_log(struct nft_batch_buf *b, const char *chain, int log_group,
                           const char *prefix)
{
  struct nftnl_rule *r = rule_new(chain);

  expr(r, "counter");
  if (log_group >= 0) {
    struct nftnl_expr *e = expr(r, "log");
    nftnl_expr_set_u16(e, NFTNL_EXPR_LOG_GROUP, (uint16_t)log_group);
    nftnl_expr_set_str(e, NFTNL_EXPR_LOG_PREFIX, prefix);
  }
  rule_emit(b, r, "counter log");
}

static void rules_deny(struct nft_batch_buf *b, int log_group)
{
  struct nftnl_rule *r;

  rule_count_log(b, "deny", log_group, EGRESS_LOG_DENY_PREFIX);
  r = rule_new("deny");
  meta(r, NFT_META_L4PROTO, NFT_REG_1);
  cmp_u8(r, IPPROTO_TCP);
  reject(r, NFT_REJECT_TCP_RST, 0);
  rule_emit(b, r, "reject with tcp reset");
  r = rule_new("deny");
  reject(r, NFT_REJECT_ICMPX_UNREACH, NFT_REJECT_ICMPX_ADMIN_PROHIBITED);
  rule_emit(b, r, "reject with icmpx admin-prohibited");
}

/* The loopback destinations chain output accepts (the resolver and the
 * proxy after nat_out's redirect, which the output hook still sees with the
 * route's first device) must leave through lo.  A socket bound to another
 * device (SO_BINDTODEVICE needs no capability) sends 127.0.0.0/8 or ::1 out
 * of it, to whatever listens on the next hop: here, where the device is the
 * one the packet really leaves by, such a packet is counted, logged as a
 * refusal and dropped (reject is not allowed at this hook). */
static void rules_post(struct nft_batch_buf *b, int log_group)
{
  static const uint8_t lo4[4] = {127}, lo6[16] = {[15] = 1};
  uint32_t lo = 1;

  rule_count_log(b, "post_deny", log_group, EGRESS_LOG_DENY_PREFIX);
  rule_simple(b, "post_deny", NF_DROP, NULL, "drop");
  for (int v6 = 0; v6 < 2; v6++) {
    struct nftnl_rule *r = rule_new("post");
    meta(r, NFT_META_OIF, NFT_REG_1);
    cmp(r, NFT_CMP_NEQ, &lo, 4);
    match_daddr(r, v6, v6 ? lo6 : lo4, v6 ? 128 : 8);
    verdict(r, NFT_GOTO, "post_deny");
    rule_emit(b, r, v6 ? "oif != lo ip6 daddr ::1" : "oif != lo ip daddr 127.0.0.0/8");
  }
}

/* A packet from an address that is not the container's: counted, logged
 * (its own prefix: the record names the source), dropped without an error
 * (an ICMP error would go to the spoofed source). */
static void rules_spoofed(struct nft_batch_buf *b, int log_group)
{
  rule_count_log(b, "spoofed", log_group, EGRESS_LOG_SPOOF_PREFIX);
  rule_simple(b, "spoofed", NF_DROP, NULL, "drop");
}

/* Nothing is routed through the container's namespace: a new namespace
 * copies the host's IPv4 forwarding switch (on, on a Docker or Kubernetes
 * host), so a neighbour on the container's link could send its packets
 * through the container to where the container's routes lead, past the
 * policy and the trail (forward-through-container).  Counted and dropped,
 * not logged: the sender is not the container. */
static void rules_forward(struct nft_batch_buf *b)
{
  struct nftnl_rule *r = rule_new("forward");

  expr(r, "counter");
  rule_emit(b, r, "counter");
}

/* Every accepted packet that is not part of a known connection ends here.
 * The first packet of a flow (ct state new, its conntrack entry not yet
 * confirmed: the entry is confirmed once that packet leaves, so a UDP
 * flow's later packets before any reply, or a SYN's retransmissions, are
 * not logged again) goes to the NFLOG group with the flow prefix: the audit
 * trail counts connections per destination, at no cost per packet after the
 * first.  DNS to the resolver never gets here (loopback, accepted earlier). */
/* In CHAIN: log the first packet of a flow (ct state new, not yet confirmed)
 * to the NFLOG group with PREFIX, then accept. */
static void rules_flow_accept(struct nft_batch_buf *b, const char *chain, int log_group,
                              const char *prefix)
{
  uint32_t new = NF_CT_STATE_BIT(IP_CT_NEW), confirmed = IPS_CONFIRMED, zero = 0;

  if (log_group >= 0) {
    struct nftnl_rule *r = rule_new(chain);
    struct nftnl_expr *e;
    ct_get(r, NFT_CT_STATE);
    bitwise(r, &new, 4);
    cmp(r, NFT_CMP_NEQ, &zero, 4);
    ct_get(r, NFT_CT_STATUS);
    bitwise(r, &confirmed, 4);
    cmp(r, NFT_CMP_EQ, &zero, 4);
    e = expr(r, "log");
    nftnl_expr_set_u16(e, NFTNL_EXPR_LOG_GROUP, (uint16_t)log_group);
    nftnl_expr_set_str(e, NFTNL_EXPR_LOG_PREFIX, prefix);
    rule_emit(b, r, "ct state new log");
  }
  rule_simple(b, chain, NF_ACCEPT, NULL, "accept");
}

static void rules_allowed(struct nft_batch_buf *b, int log_group)
{
  rules_flow_accept(b, "allowed", log_group, EGRESS_LOG_FLOW_PREFIX);
}

/* ------------------------------------------------------------- ingress */

static void rule_ct_state(struct nft_batch_buf *b, const char *chain)
{
  uint32_t ctmask = NF_CT_STATE_BIT(IP_CT_ESTABLISHED) | NF_CT_STATE_BIT(IP_CT_RELATED), zero = 0;
  struct nftnl_rule *r = rule_new(chain);

  ct_get(r, NFT_CT_STATE);
  bitwise(r, &ctmask, 4);
  cmp(r, NFT_CMP_NEQ, &zero, 4);
  verdict(r, NF_ACCEPT, NULL);
  rule_emit(b, r, "ct state established,related");
}

/* nfproto, l4proto and ICMP type: to in_deny (counted, recorded, dropped) */
static void rule_icmp_in_deny(struct nft_batch_buf *b, uint8_t nfproto, uint8_t l4proto,
                              uint8_t type, const char *what)
{
  struct nftnl_rule *r = rule_new("input");

  match_nfproto(r, nfproto);
  meta(r, NFT_META_L4PROTO, NFT_REG_1);
  cmp_u8(r, l4proto);
  payload(r, NFT_PAYLOAD_TRANSPORT_HEADER, 0, 1, NFT_REG_1);
  cmp_u8(r, type);
  verdict(r, NFT_GOTO, "in_deny");
  rule_emit(b, r, what);
}

/* New inbound connections (the flows the container did not start) reach
 * only the listed ports: without it a listener in the container answers
 * anyone who can reach it, and its replies leave through the output
 * chain's "established" rule, unpoliced.  Replies to the container's own
 * flows are established or related; neighbour solicitations and
 * advertisements that answer a solicitation arrive as the link needs them
 * (hop limit 255).  Router advertisements, unsolicited neighbour
 * advertisements and redirects (ICMP and ICMPv6) do not: any neighbour on
 * the link (another container on the bridge) could send one and become the
 * container's default router, hand it a prefix and an address of its
 * choosing, take the gateway's address, or move an allowed destination to
 * another next hop.  The engine sets the container's routes; these go to
 * in_deny (recorded). */
static void rules_input(struct nft_batch_buf *b, const struct egress_policy *p)
{
  static const uint8_t both[] = {IPPROTO_TCP, IPPROTO_UDP};
  uint32_t lo = 1;
  struct nftnl_rule *r = rule_new("input");

  meta(r, NFT_META_IIF, NFT_REG_1);
  cmp(r, NFT_CMP_EQ, &lo, 4);
  verdict(r, NF_ACCEPT, NULL);
  rule_emit(b, r, "iif lo");
  /* an ICMP redirect quoting one of the container's flows is "related" to
   * it: refused before the rule that accepts those */
  rule_icmp_in_deny(b, NFPROTO_IPV4, IPPROTO_ICMP, 5, "icmp type redirect");
  rule_ct_state(b, "input");
  for (uint8_t t = 135; t <= 136; t++) {
    uint8_t hl = 255;
    r = rule_new("input");
    match_nfproto(r, NFPROTO_IPV6);
    meta(r, NFT_META_L4PROTO, NFT_REG_1);
    cmp_u8(r, IPPROTO_ICMPV6);
    payload(r, NFT_PAYLOAD_NETWORK_HEADER, 7, 1, NFT_REG_1);
    cmp(r, NFT_CMP_EQ, &hl, 1);
    payload(r, NFT_PAYLOAD_TRANSPORT_HEADER, 0, 1, NFT_REG_1);
    cmp_u8(r, t);
    if (t == 136) {
      /* an answer to the container's own solicitation only */
      uint8_t solicited = 0x40, none = 0;
      payload(r, NFT_PAYLOAD_TRANSPORT_HEADER, 4, 1, NFT_REG_1);
      bitwise(r, &solicited, 1);
      cmp(r, NFT_CMP_NEQ, &none, 1);
    }
    verdict(r, NF_ACCEPT, NULL);
    rule_emit(b, r,
              t == 135 ? "icmpv6 nd-neighbor-solicit" : "icmpv6 nd-neighbor-advert solicited");
  }
  /* refused under ingress.default allow too: not a way in, a change of
   * route (an unsolicited advertisement with the override flag replaces the
   * link address of an entry, the gateway's) */
  rule_icmp_in_deny(b, NFPROTO_IPV6, IPPROTO_ICMPV6, 134, "icmpv6 type nd-router-advert");
  rule_icmp_in_deny(b, NFPROTO_IPV6, IPPROTO_ICMPV6, 136, "icmpv6 type nd-neighbor-advert");
  rule_icmp_in_deny(b, NFPROTO_IPV6, IPPROTO_ICMPV6, 137, "icmpv6 type nd-redirect");
  if (p->ingress_default_allow) {
    rule_simple(b, "input", NFT_GOTO, "in_allowed", "goto in_allowed");
    return;
  }
  for (size_t i = 0; i < p->n_ingress; i++) {
    const struct egress_port *e = &p->ingress[i];
    char what[32];
    egress_port_format(e, what);
    for (size_t k = 0; k < (e->proto == 0 ? 2u : 1u); k++) {
      r = rule_new("input");
      match_l4(r, e->proto != 0 ? e->proto : both[k], e->port_min, e->port_max);
      verdict(r, NFT_GOTO, "in_allowed");
      rule_emit(b, r, what);
    }
  }
  rule_simple(b, "input", NFT_GOTO, "in_deny", "goto in_deny");
}

/* The first packet of each accepted inbound flow is logged (flow prefix);
 * a refused one is counted and logged, TCP gets a reset, the rest is
 * dropped (no ICMP error that a scan could read). */
static void rules_in_chains(struct nft_batch_buf *b, int log_group)
{
  struct nftnl_rule *r;

  rules_flow_accept(b, "in_allowed", log_group, EGRESS_LOG_IN_FLOW_PREFIX);
  r = rule_new("in_deny");
  expr(r, "counter");
  if (log_group >= 0) {
    struct nftnl_expr *e = expr(r, "log");
    nftnl_expr_set_u16(e, NFTNL_EXPR_LOG_GROUP, (uint16_t)log_group);
    nftnl_expr_set_str(e, NFTNL_EXPR_LOG_PREFIX, EGRESS_LOG_IN_DENY_PREFIX);
  }
  rule_emit(b, r, "counter log");
  r = rule_new("in_deny");
  meta(r, NFT_META_L4PROTO, NFT_REG_1);
  cmp_u8(r, IPPROTO_TCP);
  reject(r, NFT_REJECT_TCP_RST, 0);
  rule_emit(b, r, "reject with tcp reset");
  rule_simple(b, "in_deny", NF_DROP, NULL, "drop");
}

/* udp/tcp dport 53 redirect to :port (to 127.0.0.1 / ::1 for local output) */
static void rules_nat(struct nft_batch_buf *b, uint16_t port)
{
  for (int i = 0; i < 2; i++) {
    struct nftnl_rule *r = rule_new("nat_out");

    match_l4(r, i == 0 ? IPPROTO_UDP : IPPROTO_TCP, 53, 53);
    redirect_to(r, port);
    rule_emit(b, r, i == 0 ? "udp dport 53 redirect" : "tcp dport 53 redirect");
  }
}

/* the TLS proxy: after the DNS rules (port 53 keeps its own redirect) */
static void rules_nat_proxy(struct nft_batch_buf *b, uint16_t port, uint32_t mark,
                            uint16_t child_port, uint32_t child_gid)
{
  static const uint8_t lo4[4] = {127}, lo6[16] = {[15] = 1};
  struct nftnl_rule *r = rule_new("nat_out");

  meta(r, NFT_META_MARK, NFT_REG_1);
  cmp(r, NFT_CMP_EQ, &mark, 4);
  verdict(r, NF_ACCEPT, NULL);
  rule_emit(b, r, "meta mark proxy accept");
  r = rule_new("nat_out");
  match_daddr(r, false, lo4, 8);
  verdict(r, NF_ACCEPT, NULL);
  rule_emit(b, r, "ip daddr 127.0.0.0/8 accept");
  r = rule_new("nat_out");
  match_daddr(r, true, lo6, 128);
  verdict(r, NF_ACCEPT, NULL);
  rule_emit(b, r, "ip6 daddr ::1 accept");
  /* a sub-agent's traffic (its slirp4netns, of group child_gid) to the
   * proxy's other port: the container's secrets are not the child's */
  for (int i = 0; i < 2 && child_port != 0; i++) {
    r = rule_new("nat_out");
    meta(r, NFT_META_SKGID, NFT_REG_1);
    cmp(r, NFT_CMP_EQ, &child_gid, 4);
    match_l4(r, IPPROTO_TCP, i == 0 ? 443 : 80, i == 0 ? 443 : 80);
    redirect_to(r, child_port);
    rule_emit(b, r,
              i == 0 ? "meta skgid child tcp dport 443 redirect to proxy's child port"
                     : "meta skgid child tcp dport 80 redirect to proxy's child port");
  }
  for (int i = 0; i < 2; i++) {
    r = rule_new("nat_out");
    match_l4(r, IPPROTO_TCP, i == 0 ? 443 : 80, i == 0 ? 443 : 80);
    redirect_to(r, port);
    rule_emit(b, r, i == 0 ? "tcp dport 443 redirect to proxy" : "tcp dport 80 redirect to proxy");
  }
}

/* ------------------------------------------------------- tables and chains */

static void table_msg(struct nft_batch_buf *b, uint16_t type, uint16_t flags)
{
  struct nftnl_table *t = nftnl_table_alloc();
  struct nlmsghdr *nlh;

  if (t == NULL)
    abort();
  nftnl_table_set_u32(t, NFTNL_TABLE_FAMILY, NFPROTO_INET);
  nftnl_table_set_str(t, NFTNL_TABLE_NAME, NFT_TABLE_NAME);
  nlh = nftb_msg(b, type, flags, "%s table `inet %s`", type == NFT_MSG_NEWTABLE ? "add" : "delete",
                 NFT_TABLE_NAME);
  nftnl_table_nlmsg_build_payload(nlh, t);
  nftb_done(b, nlh);
  nftnl_table_free(t);
}

/* type NULL = regular chain; else a base chain on hook output, or input
 * for the `input` chain, postrouting for `post`, forward for `forward` */
static void chain_msg(struct nft_batch_buf *b, const char *name, const char *type, int prio,
                      uint32_t policy)
{
  struct nftnl_chain *c = nftnl_chain_alloc();
  struct nlmsghdr *nlh;

  if (c == NULL)
    abort();
  nftnl_chain_set_u32(c, NFTNL_CHAIN_FAMILY, NFPROTO_INET);
  nftnl_chain_set_str(c, NFTNL_CHAIN_TABLE, NFT_TABLE_NAME);
  nftnl_chain_set_str(c, NFTNL_CHAIN_NAME, name);
  if (type != NULL) {
    nftnl_chain_set_str(c, NFTNL_CHAIN_TYPE, type);
    nftnl_chain_set_u32(c, NFTNL_CHAIN_HOOKNUM,
                        strcmp(name, "input") == 0     ? NF_INET_LOCAL_IN
                        : strcmp(name, "post") == 0    ? NF_INET_POST_ROUTING
                        : strcmp(name, "forward") == 0 ? NF_INET_FORWARD
                                                       : NF_INET_LOCAL_OUT);
    nftnl_chain_set_s32(c, NFTNL_CHAIN_PRIO, prio);
    nftnl_chain_set_u32(c, NFTNL_CHAIN_POLICY, policy);
  }
  nlh = nftb_msg(b, NFT_MSG_NEWCHAIN, NLM_F_CREATE, "add chain `%s`", name);
  nftnl_chain_nlmsg_build_payload(nlh, c);
  nftb_done(b, nlh);
  nftnl_chain_free(c);
}

static void flush_chain(struct nft_batch_buf *b, const char *chain)
{
  struct nftnl_rule *r = rule_new(chain);
  struct nlmsghdr *nlh = nftb_msg(b, NFT_MSG_DELRULE, 0, "flush chain `%s`", chain);

  nftnl_rule_nlmsg_build_payload(nlh, r);
  nftb_done(b, nlh);
  nftnl_rule_free(r);
}

static int build_update(const struct egress_policy *p, struct nft_batch_buf *b, struct error *err)
{
  nftb_flush_set(b, "allow4", SET_ID_ALLOW4);
  nftb_flush_set(b, "allow6", SET_ID_ALLOW6);
  if (nftb_allow_elems(b, p, EGRESS_CIDR4, err) < 0 ||
      nftb_allow_elems(b, p, EGRESS_CIDR6, err) < 0)
    return -1;
  /* a table made before chain `allowed` existed gets it here */
  chain_msg(b, "allowed", NULL, 0, 0);
  flush_chain(b, "allowed");
  rules_allowed(b, p->log_group);
  flush_chain(b, "allow_ll");
  flush_chain(b, "allow_ports");
  rules_static(b, p);
  /* the inbound ports (a pod's container adds its own): the in chains again
   * (made here for a table from before they existed) */
  chain_msg(b, "in_deny", NULL, 0, 0);
  chain_msg(b, "in_allowed", NULL, 0, 0);
  chain_msg(b, "input", "filter", 0, p->ingress_default_allow ? NF_ACCEPT : NF_DROP);
  flush_chain(b, "in_deny");
  flush_chain(b, "in_allowed");
  flush_chain(b, "input");
  rules_in_chains(b, p->log_group);
  rules_input(b, p);
  /* (made here for a table from before they existed) */
  chain_msg(b, "post_deny", NULL, 0, 0);
  chain_msg(b, "post", "filter", 0, NF_ACCEPT);
  flush_chain(b, "post_deny");
  flush_chain(b, "post");
  rules_post(b, p->log_group);
  chain_msg(b, "forward", "filter", 0, NF_DROP);
  flush_chain(b, "forward");
  rules_forward(b);
  return 0;
}

static int build_full(const struct egress_policy *p, const struct nft_build_opts *o,
                      struct nft_batch_buf *b, struct error *err)
{
  /* add + delete + add: replaces whatever table of ours was there, atomically */
  table_msg(b, NFT_MSG_NEWTABLE, NLM_F_CREATE);
  table_msg(b, NFT_MSG_DELTABLE, 0);
  table_msg(b, NFT_MSG_NEWTABLE, NLM_F_CREATE);
  nftb_add_sets(b);
  if (nftb_allow_elems(b, p, EGRESS_CIDR4, err) < 0 ||
      nftb_allow_elems(b, p, EGRESS_CIDR6, err) < 0)
    return -1;
  chain_msg(b, "deny", NULL, 0, 0);
  chain_msg(b, "spoofed", NULL, 0, 0);
  chain_msg(b, "allowed", NULL, 0, 0);
  chain_msg(b, "allow_ll", NULL, 0, 0);
  chain_msg(b, "allow_ports", NULL, 0, 0);
  chain_msg(b, "output", "filter", 0, p->default_allow ? NF_ACCEPT : NF_DROP);
  chain_msg(b, "in_deny", NULL, 0, 0);
  chain_msg(b, "in_allowed", NULL, 0, 0);
  chain_msg(b, "input", "filter", 0, p->ingress_default_allow ? NF_ACCEPT : NF_DROP);
  chain_msg(b, "post_deny", NULL, 0, 0);
  chain_msg(b, "post", "filter", 0, NF_ACCEPT);
  chain_msg(b, "forward", "filter", 0, NF_DROP);
  rules_deny(b, p->log_group);
  rules_post(b, p->log_group);
  rules_spoofed(b, p->log_group);
  rules_forward(b);
  rules_in_chains(b, p->log_group);
  rules_input(b, p);
  rules_allowed(b, p->log_group);
  rules_static(b, p);
  rules_output(b, p, o->dns_port != 0 && o->proxy_port != 0);
  if (o->dns_port != 0) {
    chain_msg(b, "nat_out", "nat", -100, NF_ACCEPT);
    rules_nat(b, o->dns_port);
    if (o->proxy_port != 0)
      rules_nat_proxy(b, o->proxy_port, o->proxy_mark, o->proxy_child_port, o->proxy_child_gid);
  }
  nftb_arp_table(b, o, p->log_group);
  return 0;
}

int nft_build_batch(const struct egress_policy *p, const struct nft_build_opts *o,
                    struct nft_batch_buf *ret, struct error *err)
{
  struct nft_batch_buf b;
  int r;

  nftb_init(&b, o->seq_base);
  nftb_begin(&b);
  if (o->arp_only) {
    nftb_arp_table(&b, o, p->log_group);
    r = 0;
  } else
    r = o->update ? build_update(p, &b, err) : build_full(p, o, &b, err);
  if (r < 0) {
    nft_batch_buf_free(&b);
    return error_prefix(err, "build nftables batch");
  }
  nftb_end(&b);
  *ret = b;
  return 0;
}

int nft_build_table_delete(uint32_t seq_base, struct nft_batch_buf *ret, struct error *err)
{
  struct nft_batch_buf b;

  nftb_init(&b, seq_base);
  nftb_begin(&b);
  table_msg(&b, NFT_MSG_NEWTABLE, NLM_F_CREATE);
  table_msg(&b, NFT_MSG_DELTABLE, 0);
  nftb_arp_table_delete(&b);
  nftb_end(&b);
  *ret = b;
  return 0;
}
