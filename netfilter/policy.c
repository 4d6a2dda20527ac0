/* policy.c - the egress policy: entries (parsed by common/egress_grammar.c),
 * name and address matching, private addresses.
 *
 * Pure code (no syscalls): fuzzed by tests/fuzz/fuzz_egress_entry.c.
 */
#include "netfilter/egress.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "common/util.h"

/* Is net/prefix (len bytes) inside base/base_prefix? */
static bool cidr_inside(const uint8_t *net, unsigned prefix, const uint8_t *base,
                        unsigned base_prefix)
{
  if (prefix < base_prefix)
    return false;
  for (unsigned i = 0; i < base_prefix; i++) {
    uint8_t m = (uint8_t)(0x80 >> (i % 8));
    if ((net[i / 8] & m) != (base[i / 8] & m))
      return false;
  }
  return true;
}

static const uint8_t LL4[4] = {169, 254, 0, 0};
static const uint8_t LL6[16] = {0xfe, 0x80};
static const uint8_t EC2_6[16] = {0xfd, 0x00, 0x0e, 0xc2, [15] = 0x54, [14] = 0x02};

bool egress_entry_is_link_local(const struct egress_entry *e)
{
  if (e->kind == EGRESS_CIDR4)
    return cidr_inside(e->addr, e->prefix, LL4, 16);
  if (e->kind == EGRESS_CIDR6)
    return cidr_inside(e->addr, e->prefix, LL6, 10) || cidr_inside(e->addr, e->prefix, EC2_6, 128);
  return false;
}

int egress_policy_add_port(struct egress_policy *p, const struct egress_port *e, struct error *err)
{
  for (size_t i = 0; i < p->n_ingress; i++)
    if (p->ingress[i].proto == e->proto && p->ingress[i].port_min == e->port_min &&
        p->ingress[i].port_max == e->port_max)
      return 0;
  if (p->n_ingress >= EGRESS_MAX_ENTRIES)
    return error_set(err, 0, "ingress policy: more than %d entries", EGRESS_MAX_ENTRIES);
  p->ingress = xrealloc(p->ingress, (p->n_ingress + 1) * sizeof *p->ingress);
  p->ingress[p->n_ingress++] = *e;
  return 0;
}

void egress_policy_init(struct egress_policy *p)
{
  memset(p, 0, sizeof *p);
  p->ttl_min = EGRESS_TTL_MIN_DEFAULT;
  p->ttl_max = EGRESS_TTL_MAX_DEFAULT;
  p->log_group = 0;
}

void egress_policy_free(struct egress_policy *p)
{
  free(p->entries);
  p->entries = NULL;
  p->n_entries = 0;
  free(p->ingress);
  p->ingress = NULL;
  p->n_ingress = 0;
}

int egress_policy_add(struct egress_policy *p, const struct egress_entry *e, struct error *err)
{
  for (size_t i = 0; i < p->n_entries; i++)
    if (egress_entry_equal(&p->entries[i], e))
      return 0;
  if (p->n_entries >= EGRESS_MAX_ENTRIES)
    return error_set(err, 0, "egress policy: more than %d entries", EGRESS_MAX_ENTRIES);
  p->entries = xrealloc(p->entries, (p->n_entries + 1) * sizeof *p->entries);
  p->entries[p->n_entries++] = *e;
  return 0;
}

int egress_policy_remove(struct egress_policy *p, const struct egress_entry *e, struct error *err)
{
  char s[EGRESS_ENTRY_STR_MAX];

  for (size_t i = 0; i < p->n_entries; i++) {
    if (!egress_entry_equal(&p->entries[i], e))
      continue;
    memmove(&p->entries[i], &p->entries[i + 1], (p->n_entries - i - 1) * sizeof *e);
    p->n_entries--;
    return 0;
  }
  egress_entry_format(e, s);
  return error_set(err, 0, "egress entry `%s` is not in the policy", s);
}

/* name may end with '.', any case; compares label-wise. */
static bool domain_matches(const struct egress_entry *e, const char *name, size_t len)
{
  size_t dl = strlen(e->domain);

  if (e->wildcard) {
    if (len <= dl + 1 || name[len - dl - 1] != '.')
      return false;
    return strncasecmp(name + len - dl, e->domain, dl) == 0;
  }
  return len == dl && strncasecmp(name, e->domain, dl) == 0;
}

size_t egress_policy_match_name(const struct egress_policy *p, const char *name,
                                const struct egress_entry **ret, size_t max)
{
  size_t len = strlen(name), n = 0;

  if (len > 0 && name[len - 1] == '.')
    len--;
  if (len == 0)
    return 0;
  for (size_t i = 0; i < p->n_entries; i++) {
    const struct egress_entry *e = &p->entries[i];
    if (e->kind != EGRESS_DOMAIN || !domain_matches(e, name, len))
      continue;
    if (n < max)
      ret[n] = e;
    n++;
  }
  return n;
}

struct net_range {
  uint8_t net[16];
  uint8_t prefix;
};

static const struct net_range PRIVATE4[] = {
    {{0}, 8},         {{10}, 8},       {{100, 64}, 10},   {{127}, 8},
    {{169, 254}, 16}, {{172, 16}, 12}, {{192, 0, 0}, 24}, {{192, 168}, 16},
    {{198, 18}, 15},  {{224}, 4},      {{240}, 4},
};
/* Not public unicast: ::/127 (unspecified, loopback), ULA fc00::/7,
 * link-local fe80::/10, site-local fec0::/10 (deprecated, still routed
 * inside some sites), multicast ff00::/8, and the NAT64 local-use prefix
 * 64:ff9b:1::/48 (RFC 8215: it maps a network's own IPv4 space, so any
 * address in it may reach inside). */
static const struct net_range PRIVATE6[] = {
    {{0}, 127},         {{0xfc}, 7}, {{0xfe, 0x80}, 10},
    {{0xfe, 0xc0}, 10}, {{0xff}, 8}, {{0x00, 0x64, 0xff, 0x9b, 0x00, 0x01}, 48},
};

/* IPv6 forms that embed an IPv4 address, which reaches that address (the
 * kernel, a NAT64 gateway or a 6to4/Teredo relay unwraps it): an allowed
 * name answered with ::ffff:10.0.0.1 or 64:ff9b::a00:1 would otherwise pin
 * a private IPv4 destination that the plain A answer could not.  Each form
 * gives the offset of the IPv4 address and whether its bits are inverted
 * (Teredo's client). */
struct embed4 {
  uint8_t net[16];
  uint8_t prefix;
  uint8_t off;
  bool inverted;
};

static const struct embed4 EMBED4[] = {
    {{[10] = 0xff, [11] = 0xff}, 96, 12, false}, /* IPv4-mapped ::ffff:0:0/96 */
    {{0}, 96, 12, false},                        /* IPv4-compatible ::/96 */
    {{0x00, 0x64, 0xff, 0x9b}, 96, 12, false},   /* NAT64 64:ff9b::/96 */
    {{0x20, 0x02}, 16, 2, false},                /* 6to4 2002::/16 */
    {{0x20, 0x01, 0x00, 0x00}, 32, 12, true},    /* Teredo client */
    {{0x20, 0x01, 0x00, 0x00}, 32, 4, false},    /* Teredo server */
};

size_t egress_addr_embedded_v4(const uint8_t *addr, uint8_t ret[][4], size_t max)
{
  size_t n = 0;

  for (size_t i = 0; i < ARRAY_SIZE(EMBED4) && n < max; i++) {
    const struct embed4 *f = &EMBED4[i];
    if (!cidr_inside(addr, 128, f->net, f->prefix))
      continue;
    for (int k = 0; k < 4; k++)
      ret[n][k] = f->inverted ? (uint8_t)~addr[f->off + k] : addr[f->off + k];
    n++;
  }
  return n;
}

bool egress_addr_is_private(const uint8_t *addr, size_t len)
{
  if (len == 4) {
    for (size_t i = 0; i < ARRAY_SIZE(PRIVATE4); i++)
      if (cidr_inside(addr, 32, PRIVATE4[i].net, PRIVATE4[i].prefix))
        return true;
    return false;
  }
  if (len != 16)
    return true;
  for (size_t i = 0; i < ARRAY_SIZE(PRIVATE6); i++)
    if (cidr_inside(addr, 128, PRIVATE6[i].net, PRIVATE6[i].prefix))
      return true;
  {
    uint8_t v4[ARRAY_SIZE(EMBED4)][4];
    size_t n = egress_addr_embedded_v4(addr, v4, ARRAY_SIZE(v4));
    for (size_t i = 0; i < n; i++)
      if (egress_addr_is_private(v4[i], 4))
        return true;
  }
  return false;
}

bool egress_policy_allows_addr(const struct egress_policy *p, const uint8_t *addr, size_t len)
{
  enum egress_kind kind = len == 4 ? EGRESS_CIDR4 : EGRESS_CIDR6;

  for (size_t i = 0; i < p->n_entries; i++) {
    const struct egress_entry *e = &p->entries[i];
    if (e->kind == kind && cidr_inside(addr, (unsigned)len * 8, e->addr, e->prefix))
      return true;
  }
  return false;
}

bool egress_policy_allows_flow(const struct egress_policy *p, const struct egress_sock *s)
{
  enum egress_kind kind = s->family == AF_INET ? EGRESS_CIDR4 : EGRESS_CIDR6;
  unsigned bits = s->family == AF_INET ? 32 : 128;

  if (p->default_allow)
    return true;
  for (size_t i = 0; i < p->n_entries; i++) {
    const struct egress_entry *e = &p->entries[i];
    if (e->kind != kind || !cidr_inside(s->addr, bits, e->addr, e->prefix))
      continue;
    if (e->proto != 0 && e->proto != s->proto)
      continue;
    if (e->port_min == 0 || (s->port >= e->port_min && s->port <= e->port_max))
      return true;
  }
  return false;
}
