/* policy.c - egress allow entries: parsing, formatting, matching.
 *
 * Pure code (no syscalls): fuzzed by tests/fuzz/fuzz_egress_entry.c.  The
 * grammar is in egress.h; parsing is strict (host bits of a CIDR must be
 * zero, ports 1..65535, domain labels 1..63 of [a-z0-9-]) so that what the
 * user wrote and what the kernel enforces cannot differ silently.
 */
#include "netfilter/egress.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "common/util.h"

static int parse_port(const char *s, uint16_t *ret, struct error *err)
{
  uint32_t v;

  if (parse_u32(s, &v) < 0 || v == 0 || v > 65535)
    return error_set(err, 0, "invalid port `%s`", s);
  *ret = (uint16_t)v;
  return 0;
}

/* "N" or "N-M" */
static int parse_port_range(char *s, struct egress_entry *e, struct error *err)
{
  char *dash = strchr(s, '-');

  if (dash != NULL)
    *dash = '\0';
  if (parse_port(s, &e->port_min, err) < 0)
    return -1;
  e->port_max = e->port_min;
  if (dash != NULL && parse_port(dash + 1, &e->port_max, err) < 0)
    return -1;
  if (e->port_max < e->port_min)
    return error_set(err, 0, "invalid port range `%s-%s`", s, dash + 1);
  return 0;
}

static bool host_bits_clear(const uint8_t *a, size_t len, unsigned prefix)
{
  for (size_t i = 0; i < len; i++) {
    unsigned bits = prefix >= 8 * (i + 1) ? 8 : prefix > 8 * i ? prefix - 8 * i : 0;
    uint8_t mask = bits == 0 ? 0 : (uint8_t)(0xff << (8 - bits));
    if (a[i] & ~mask)
      return false;
  }
  return true;
}

/* "addr" or "addr/prefix"; family AF_INET or AF_INET6. */
static int parse_cidr(char *s, int family, struct egress_entry *e, struct error *err)
{
  unsigned max = family == AF_INET ? 32 : 128;
  char *slash = strchr(s, '/');
  uint32_t prefix = max;

  if (slash != NULL) {
    *slash = '\0';
    if (parse_u32(slash + 1, &prefix) < 0 || prefix > max)
      return error_set(err, 0, "invalid prefix length `%s`", slash + 1);
  }
  memset(e->addr, 0, sizeof e->addr);
  if (inet_pton(family, s, e->addr) != 1)
    return error_set(err, 0, "invalid %s address `%s`", family == AF_INET ? "ipv4" : "ipv6", s);
  if (!host_bits_clear(e->addr, max / 8, prefix))
    return error_set(err, 0, "`%s/%u` has host bits set", s, (unsigned)prefix);
  e->kind = family == AF_INET ? EGRESS_CIDR4 : EGRESS_CIDR6;
  e->prefix = (uint8_t)prefix;
  return 0;
}

static bool label_char(char c)
{
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
}

/* Lower-cases in place; strips one final dot. */
static int parse_domain(char *s, struct egress_entry *e, struct error *err)
{
  size_t len, label = 0;
  bool all_digits = true;

  if (s[0] == '*' && s[1] == '.') {
    e->wildcard = true;
    s += 2;
  }
  len = strlen(s);
  if (len > 0 && s[len - 1] == '.')
    s[--len] = '\0';
  if (len == 0 || len > EGRESS_DOMAIN_MAX)
    return error_set(err, 0, "invalid domain name length");
  for (size_t i = 0; i <= len; i++) {
    char c = s[i];
    if (c == '.' || c == '\0') {
      if (label == 0 || label > 63 || s[i - 1] == '-' || s[i - label] == '-')
        return error_set(err, 0, "invalid label in domain name `%s`", s);
      if (c == '.')
        all_digits = true;
      label = 0;
      continue;
    }
    if (c >= 'A' && c <= 'Z')
      s[i] = c = (char)(c - 'A' + 'a');
    if (!label_char(c))
      return error_set(err, 0, "invalid character in domain name `%s`", s);
    if (c < '0' || c > '9')
      all_digits = false;
    label++;
  }
  if (all_digits)
    return error_set(err, 0, "invalid address or domain name `%s`", s);
  memcpy(e->domain, s, len + 1);
  e->kind = EGRESS_DOMAIN;
  return 0;
}

static char *strip_proto(char *s, struct egress_entry *e)
{
  size_t len = strlen(s);

  if (len > 4 && (strcmp(s + len - 4, "/tcp") == 0 || strcmp(s + len - 4, "/udp") == 0)) {
    e->proto = s[len - 3] == 't' ? IPPROTO_TCP : IPPROTO_UDP;
    s[len - 4] = '\0';
  }
  return s;
}

static int parse_bracketed(char *s, struct egress_entry *e, struct error *err)
{
  char *close = strchr(s, ']');

  if (close == NULL)
    return error_set(err, 0, "missing `]`");
  *close = '\0';
  if (parse_cidr(s + 1, AF_INET6, e, err) < 0)
    return -1;
  if (close[1] == '\0')
    return 0;
  if (close[1] != ':')
    return error_set(err, 0, "expected `:port` after `]`");
  return parse_port_range(close + 2, e, err);
}

static int parse_host_port(char *s, struct egress_entry *e, struct error *err)
{
  char *colon = strchr(s, ':');
  bool ipv4 = true;

  if (colon != NULL && strchr(colon + 1, ':') != NULL)
    return parse_cidr(s, AF_INET6, e, err); /* bare IPv6, no port */
  if (colon != NULL) {
    *colon = '\0';
    if (parse_port_range(colon + 1, e, err) < 0)
      return -1;
  }
  for (const char *p = s; *p; p++)
    if ((*p < '0' || *p > '9') && *p != '.' && *p != '/')
      ipv4 = false;
  if (ipv4 || strchr(s, '/') != NULL)
    return parse_cidr(s, AF_INET, e, err);
  return parse_domain(s, e, err);
}

int egress_entry_parse(const char *s, struct egress_entry *ret, struct error *err)
{
  char buf[EGRESS_ENTRY_STR_MAX];
  struct egress_entry e;
  size_t len = strnlen(s, sizeof buf);
  char *p;

  memset(&e, 0, sizeof e);
  if (len == 0 || len >= sizeof buf)
    return error_set(err, 0, "egress entry: invalid length");
  memcpy(buf, s, len + 1);
  p = strip_proto(buf, &e);
  if ((p[0] == '[' ? parse_bracketed(p, &e, err) : parse_host_port(p, &e, err)) < 0)
    return error_prefix(err, "egress entry `%.*s`", 80, s);
  if (e.kind == EGRESS_DOMAIN && e.port_min != e.port_max)
    return error_set(err, 0, "egress entry `%.*s`: a domain takes one port, not a range", 80, s);
  if (e.kind == EGRESS_DOMAIN && e.proto != 0 && e.port_min == 0)
    return error_set(err, 0, "egress entry `%.*s`: /tcp or /udp on a domain needs a port", 80, s);
  *ret = e;
  return 0;
}

void egress_entry_format(const struct egress_entry *e, char buf[EGRESS_ENTRY_STR_MAX])
{
  char host[EGRESS_DOMAIN_MAX + 8], port[16] = "";
  const char *proto = e->proto == IPPROTO_TCP ? "/tcp" : e->proto == IPPROTO_UDP ? "/udp" : "";
  char a[INET6_ADDRSTRLEN];
  bool has_port = e->port_min != 0;

  if (has_port && e->port_min == e->port_max)
    snprintf(port, sizeof port, ":%u", e->port_min);
  else if (has_port)
    snprintf(port, sizeof port, ":%u-%u", e->port_min, e->port_max);
  if (e->kind == EGRESS_DOMAIN) {
    snprintf(host, sizeof host, "%s%s", e->wildcard ? "*." : "", e->domain);
  } else if (e->kind == EGRESS_CIDR4) {
    inet_ntop(AF_INET, e->addr, a, sizeof a);
    snprintf(host, sizeof host, e->prefix == 32 ? "%s" : "%s/%u", a, e->prefix);
  } else {
    inet_ntop(AF_INET6, e->addr, a, sizeof a);
    snprintf(host, sizeof host, has_port ? "[%s/%u]" : "%s/%u", a, e->prefix);
  }
  snprintf(buf, EGRESS_ENTRY_STR_MAX, "%s%s%s", host, port, proto);
}

bool egress_entry_equal(const struct egress_entry *a, const struct egress_entry *b)
{
  if (a->kind != b->kind || a->proto != b->proto || a->port_min != b->port_min ||
      a->port_max != b->port_max)
    return false;
  if (a->kind == EGRESS_DOMAIN)
    return a->wildcard == b->wildcard && strcmp(a->domain, b->domain) == 0;
  return a->prefix == b->prefix && memcmp(a->addr, b->addr, 16) == 0;
}

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

void egress_policy_init(struct egress_policy *p)
{
  memset(p, 0, sizeof *p);
  p->ttl_min = 5;
  p->ttl_max = 3600;
  p->log_group = 0;
}

void egress_policy_free(struct egress_policy *p)
{
  free(p->entries);
  p->entries = NULL;
  p->n_entries = 0;
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
static const struct net_range PRIVATE6[] = {
    {{0}, 127} /* :: and ::1 */,
    {{0xfc}, 7},
    {{0xfe, 0x80}, 10},
    {{0xff}, 8},
};

bool egress_addr_is_private(const uint8_t *addr, size_t len)
{
  static const uint8_t mapped[12] = {[10] = 0xff, [11] = 0xff};

  if (len == 4) {
    for (size_t i = 0; i < ARRAY_SIZE(PRIVATE4); i++)
      if (cidr_inside(addr, 32, PRIVATE4[i].net, PRIVATE4[i].prefix))
        return true;
    return false;
  }
  if (len != 16)
    return true;
  if (memcmp(addr, mapped, 12) == 0)
    return egress_addr_is_private(addr + 12, 4);
  for (size_t i = 0; i < ARRAY_SIZE(PRIVATE6); i++)
    if (cidr_inside(addr, 128, PRIVATE6[i].net, PRIVATE6[i].prefix))
      return true;
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
