/* egress_grammar.c - the one grammar of egress policy entries (see
 * egress_grammar.h): allow entries, ingress ports and upstream resolvers.
 *
 * Pure code (no syscalls), fuzzed by tests/fuzz/fuzz_egress_entry.c.
 * Parsing is strict (host bits of a CIDR must be zero, ports 1..65535,
 * domain labels 1..63 of [a-z0-9-]) so that what the user wrote and what
 * the kernel enforces cannot differ silently.
 */
#include "common/egress_grammar.h"

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

int egress_port_parse(const char *s, struct egress_port *ret, struct error *err)
{
  char buf[32];
  struct egress_entry e;
  size_t len = strnlen(s, sizeof buf);

  memset(&e, 0, sizeof e);
  if (len == 0 || len >= sizeof buf)
    return error_set(err, 0, "ingress entry `%.*s`: expected PORT[-PORT][/tcp|/udp]", 40, s);
  memcpy(buf, s, len + 1);
  if (parse_port_range(strip_proto(buf, &e), &e, err) < 0)
    return error_prefix(err, "ingress entry `%s`", s);
  *ret = (struct egress_port){.proto = e.proto, .port_min = e.port_min, .port_max = e.port_max};
  return 0;
}

void egress_port_format(const struct egress_port *e, char buf[32])
{
  const char *proto = e->proto == IPPROTO_TCP ? "/tcp" : e->proto == IPPROTO_UDP ? "/udp" : "";

  if (e->port_min == e->port_max)
    snprintf(buf, 32, "%u%s", e->port_min, proto);
  else
    snprintf(buf, 32, "%u-%u%s", e->port_min, e->port_max, proto);
}

int egress_upstream_parse(const char *s, struct egress_upstream *ret, struct error *err)
{
  char buf[INET6_ADDRSTRLEN + 16];
  struct egress_upstream u = {.port = 53};
  char *host = buf, *port = NULL;
  size_t len = strnlen(s, sizeof buf);

  if (len == 0 || len >= sizeof buf)
    return error_set(err, 0, "invalid upstream resolver `%.*s`", 64, s);
  memcpy(buf, s, len + 1);
  if (buf[0] == '[') {
    char *close = strchr(buf, ']');
    if (close == NULL || (close[1] != '\0' && close[1] != ':'))
      return error_set(err, 0, "invalid upstream resolver `%s`", s);
    *close = '\0';
    host = buf + 1;
    port = close[1] == ':' ? close + 2 : NULL;
  } else if (strchr(buf, ':') != NULL && strchr(buf, ':') == strrchr(buf, ':')) {
    port = strchr(buf, ':');
    *port++ = '\0';
  }
  if (port != NULL) {
    uint32_t v;
    if (parse_u32(port, &v) < 0 || v == 0 || v > 65535)
      return error_set(err, 0, "invalid port in upstream resolver `%s`", s);
    u.port = (uint16_t)v;
  }
  if (inet_pton(AF_INET, host, u.addr) == 1)
    u.family = AF_INET;
  else if (inet_pton(AF_INET6, host, u.addr) == 1)
    u.family = AF_INET6;
  else
    return error_set(err, 0, "invalid upstream resolver address `%s`", s);
  *ret = u;
  return 0;
}

void egress_ttl_bounds(bool has_min, uint64_t min, bool has_max, uint64_t max, uint64_t *ret_lo,
                       uint64_t *ret_hi)
{
  uint64_t lo = has_min ? min : EGRESS_TTL_MIN_DEFAULT;
  uint64_t hi = has_max ? max : EGRESS_TTL_MAX_DEFAULT;

  if (!has_min && lo > hi)
    lo = hi;
  if (!has_max && hi < lo)
    hi = lo;
  *ret_lo = lo;
  *ret_hi = hi;
}
