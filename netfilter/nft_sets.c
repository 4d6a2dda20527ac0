/* nft_sets.c - the allow and dns sets of table inet agentrt (pure builders).
 *
 * allow4/allow6 are interval sets (rbtree): CIDRs are merged into disjoint
 * ranges first, since the kernel refuses overlapping intervals; each range
 * [lo, hi] becomes a start element and an INTERVAL_END element at hi + 1.
 * dns4/dns6 (address) and dns4p/dns6p (address . l4proto . port) are hash
 * sets with per-element timeouts, filled by the resolver.
 */
#include "netfilter/nft_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <libnftnl/common.h>
#include <linux/netfilter.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "common/util.h"

#define ELEMS_PER_MSG 64
#define TYPE_IPV4_ADDR 7 /* nft's datatype numbers, for `nft list` */
#define TYPE_IPV6_ADDR 8
#define TYPE_INET_PROTO 12
#define TYPE_INET_SERVICE 13
#define CONCAT3(a, b, c) ((((a) << 6 | (b)) << 6) | (c))

typedef unsigned __int128 u128;

struct set_def {
  const char *name;
  uint32_t id, flags, key_type, key_len;
  uint8_t concat[4]; /* field lengths, 0-terminated */
};

static const struct set_def SETS[] = {
    {"allow4", SET_ID_ALLOW4, NFT_SET_INTERVAL, TYPE_IPV4_ADDR, 4, {0}},
    {"allow6", SET_ID_ALLOW6, NFT_SET_INTERVAL, TYPE_IPV6_ADDR, 16, {0}},
    {"dns4", SET_ID_DNS4, NFT_SET_TIMEOUT, TYPE_IPV4_ADDR, 4, {0}},
    {"dns6", SET_ID_DNS6, NFT_SET_TIMEOUT, TYPE_IPV6_ADDR, 16, {0}},
    {"dns4p",
     SET_ID_DNS4P,
     NFT_SET_TIMEOUT | NFT_SET_CONCAT,
     CONCAT3(TYPE_IPV4_ADDR, TYPE_INET_PROTO, TYPE_INET_SERVICE),
     12,
     {4, 1, 2, 0}},
    {"dns6p",
     SET_ID_DNS6P,
     NFT_SET_TIMEOUT | NFT_SET_CONCAT,
     CONCAT3(TYPE_IPV6_ADDR, TYPE_INET_PROTO, TYPE_INET_SERVICE),
     24,
     {16, 1, 2, 0}},
};

struct nftnl_set *nftb_set_new(uint16_t family, const char *name, uint32_t id)
{
  struct nftnl_set *s = nftnl_set_alloc();

  if (s == NULL)
    abort();
  nftnl_set_set_u32(s, NFTNL_SET_FAMILY, family);
  nftnl_set_set_str(s, NFTNL_SET_TABLE, NFT_TABLE_NAME);
  nftnl_set_set_str(s, NFTNL_SET_NAME, name);
  nftnl_set_set_u32(s, NFTNL_SET_ID, id);
  return s;
}

void nftb_add_sets(struct nft_batch_buf *b)
{
  for (size_t i = 0; i < ARRAY_SIZE(SETS); i++) {
    const struct set_def *d = &SETS[i];
    struct nftnl_set *s = nftb_set_new(NFPROTO_INET, d->name, d->id);
    struct nlmsghdr *nlh;

    nftnl_set_set_u32(s, NFTNL_SET_FLAGS, d->flags);
    nftnl_set_set_u32(s, NFTNL_SET_KEY_TYPE, d->key_type);
    nftnl_set_set_u32(s, NFTNL_SET_KEY_LEN, d->key_len);
    if (d->concat[0] != 0)
      nftnl_set_set_data(s, NFTNL_SET_DESC_CONCAT, d->concat, (uint32_t)strlen((char *)d->concat));
    nlh = nftb_msg(b, NFT_MSG_NEWSET, NLM_F_CREATE, "add set `%s`", d->name);
    nftnl_set_nlmsg_build_payload(nlh, s);
    nftb_done(b, nlh);
    nftnl_set_free(s);
  }
}

/* DELSETELEM without elements flushes the set. */
void nftb_flush_set(struct nft_batch_buf *b, const char *name, uint32_t id)
{
  struct nftnl_set *s = nftb_set_new(NFPROTO_INET, name, id);
  struct nlmsghdr *nlh = nftb_msg(b, NFT_MSG_DELSETELEM, 0, "flush set `%s`", name);

  nftnl_set_elems_nlmsg_build_payload(nlh, s);
  nftb_done(b, nlh);
  nftnl_set_free(s);
}

struct elem {
  uint8_t key[24];
  uint32_t len, flags;
  uint64_t timeout_ms;
};

/* Emit elements in messages of at most ELEMS_PER_MSG (libnftnl's own
 * iterator would fill one message up to 64 KiB). */
static void emit_elems(struct nft_batch_buf *b, const char *name, uint32_t id,
                       const struct elem *el, size_t n)
{
  for (size_t i = 0; i < n; i += ELEMS_PER_MSG) {
    struct nftnl_set *s = nftb_set_new(NFPROTO_INET, name, id);
    struct nlmsghdr *nlh;
    for (size_t j = i; j < n && j < i + ELEMS_PER_MSG; j++) {
      struct nftnl_set_elem *e = nftnl_set_elem_alloc();
      if (e == NULL)
        abort();
      nftnl_set_elem_set(e, NFTNL_SET_ELEM_KEY, el[j].key, el[j].len);
      if (el[j].flags != 0)
        nftnl_set_elem_set_u32(e, NFTNL_SET_ELEM_FLAGS, el[j].flags);
      if (el[j].timeout_ms != 0)
        nftnl_set_elem_set_u64(e, NFTNL_SET_ELEM_TIMEOUT, el[j].timeout_ms);
      nftnl_set_elem_add(s, e);
    }
    nlh = nftb_msg(b, NFT_MSG_NEWSETELEM, NLM_F_CREATE, "add elements to set `%s`", name);
    nftnl_set_elems_nlmsg_build_payload(nlh, s);
    nftb_done(b, nlh);
    nftnl_set_free(s);
  }
}

static u128 to_u128(const uint8_t *a, size_t len)
{
  u128 v = 0;
  for (size_t i = 0; i < len; i++)
    v = v << 8 | a[i];
  return v;
}

static void from_u128(u128 v, uint8_t *a, size_t len)
{
  for (size_t i = len; i-- > 0; v >>= 8)
    a[i] = (uint8_t)v;
}

struct range {
  u128 lo, hi;
};

static int range_cmp(const void *a, const void *b)
{
  const struct range *x = a, *y = b;
  return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Disjoint, non-adjacent, sorted ranges of the port-less CIDR entries. */
static size_t collect_ranges(const struct egress_policy *p, enum egress_kind kind, struct range *r,
                             u128 max)
{
  size_t n = 0, len = kind == EGRESS_CIDR4 ? 4 : 16, out = 0;

  for (size_t i = 0; i < p->n_entries; i++) {
    const struct egress_entry *e = &p->entries[i];
    u128 host;
    if (e->kind != kind || e->proto != 0 || e->port_min != 0 || egress_entry_is_link_local(e))
      continue;
    host = e->prefix == len * 8 ? 0 : max >> e->prefix;
    r[n].lo = to_u128(e->addr, len);
    r[n].hi = r[n].lo | host;
    n++;
  }
  qsort(r, n, sizeof *r, range_cmp);
  for (size_t i = 0; i < n; i++) {
    if (out > 0 && (r[out - 1].hi == max || r[i].lo <= r[out - 1].hi + 1)) {
      if (r[i].hi > r[out - 1].hi)
        r[out - 1].hi = r[i].hi;
      continue;
    }
    r[out++] = r[i];
  }
  return out;
}

int nftb_allow_elems(struct nft_batch_buf *b, const struct egress_policy *p, enum egress_kind kind,
                     struct error *err)
{
  bool v6 = kind == EGRESS_CIDR6;
  size_t len = v6 ? 16 : 4, n, ne = 0;
  u128 max = v6 ? ~(u128)0 : 0xffffffffu;
  cleanup_free struct range *r = xmalloc((p->n_entries + 1) * sizeof *r);
  cleanup_free struct elem *el = xmalloc0((2 * p->n_entries + 1) * sizeof *el);

  n = collect_ranges(p, kind, r, max);
  for (size_t i = 0; i < n; i++) {
    from_u128(r[i].lo, el[ne].key, len);
    el[ne++].len = (uint32_t)len;
    if (r[i].hi == max)
      continue;
    from_u128(r[i].hi + 1, el[ne].key, len);
    el[ne].len = (uint32_t)len;
    el[ne++].flags = NFT_SET_ELEM_INTERVAL_END;
  }
  emit_elems(b, v6 ? "allow6" : "allow4", v6 ? SET_ID_ALLOW6 : SET_ID_ALLOW4, el, ne);
  (void)err;
  return 0;
}

/* Key of a dns* set element: address, then (for the p sets) proto and port,
 * each field padded to 4 bytes as in the 32-bit registers. */
static uint32_t learned_key(const struct nft_learned *l, uint8_t key[24])
{
  uint32_t alen = l->family == AF_INET6 ? 16 : 4;
  uint16_t port = htons(l->port);

  memset(key, 0, 24);
  memcpy(key, l->addr, alen);
  if (l->proto == 0)
    return alen;
  key[alen] = l->proto;
  memcpy(key + alen + 4, &port, 2);
  return alen + 8;
}

int nft_build_learn(const struct nft_learned *l, size_t n, uint32_t seq_base,
                    struct nft_batch_buf *ret, struct error *err)
{
  static const char *names[4] = {"dns4", "dns6", "dns4p", "dns6p"};
  static const uint32_t ids[4] = {SET_ID_DNS4, SET_ID_DNS6, SET_ID_DNS4P, SET_ID_DNS6P};
  cleanup_free struct elem *el = NULL;
  struct nft_batch_buf b;

  for (size_t i = 0; i < n; i++)
    if ((l[i].family != AF_INET && l[i].family != AF_INET6) ||
        (l[i].proto != 0 && l[i].port == 0) || l[i].timeout_ms == 0)
      return error_set(err, EINVAL, "learned address %zu", i);
  el = xmalloc0((n + 1) * sizeof *el);
  nftb_init(&b, seq_base);
  nftb_begin(&b);
  for (int k = 0; k < 4; k++) {
    size_t ne = 0;
    for (size_t i = 0; i < n; i++) {
      if ((l[i].family == AF_INET6) + 2 * (l[i].proto != 0) != k)
        continue;
      el[ne].len = learned_key(&l[i], el[ne].key);
      el[ne++].timeout_ms = l[i].timeout_ms;
    }
    emit_elems(&b, names[k], ids[k], el, ne);
  }
  nftb_end(&b);
  *ret = b;
  return 0;
}

int nft_build_unlearn(const struct nft_learned *l, uint32_t seq_base, struct nft_batch_buf *ret,
                      struct error *err)
{
  static const char *names[4] = {"dns4", "dns6", "dns4p", "dns6p"};
  static const uint32_t ids[4] = {SET_ID_DNS4, SET_ID_DNS6, SET_ID_DNS4P, SET_ID_DNS6P};
  int k = (l->family == AF_INET6) + 2 * (l->proto != 0);
  struct nftnl_set *s;
  struct nftnl_set_elem *e;
  struct nlmsghdr *nlh;
  struct nft_batch_buf b;
  uint8_t key[24];

  if ((l->family != AF_INET && l->family != AF_INET6) || (l->proto != 0 && l->port == 0))
    return error_set(err, EINVAL, "learned address to delete");
  nftb_init(&b, seq_base);
  nftb_begin(&b);
  s = nftb_set_new(NFPROTO_INET, names[k], ids[k]);
  e = nftnl_set_elem_alloc();
  if (e == NULL)
    abort();
  nftnl_set_elem_set(e, NFTNL_SET_ELEM_KEY, key, learned_key(l, key));
  nftnl_set_elem_add(s, e);
  nlh = nftb_msg(&b, NFT_MSG_DELSETELEM, 0, "delete an element of set `%s`", names[k]);
  nftnl_set_elems_nlmsg_build_payload(nlh, s);
  nftb_done(&b, nlh);
  nftnl_set_free(s);
  nftb_end(&b);
  *ret = b;
  return 0;
}

int nft_build_dns_flush(uint32_t seq_base, struct nft_batch_buf *ret, struct error *err)
{
  struct nft_batch_buf b;

  nftb_init(&b, seq_base);
  nftb_begin(&b);
  nftb_flush_set(&b, "dns4", SET_ID_DNS4);
  nftb_flush_set(&b, "dns6", SET_ID_DNS6);
  nftb_flush_set(&b, "dns4p", SET_ID_DNS4P);
  nftb_flush_set(&b, "dns6p", SET_ID_DNS6P);
  nftb_end(&b);
  *ret = b;
  (void)err;
  return 0;
}
