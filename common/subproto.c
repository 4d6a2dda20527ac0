/* subproto.c - the pure parts of the sub-agent API (subproto.h): a request's
 * words, and whether a child's egress entry is covered by its parent's. */
#include "common/subproto.h"

#include <string.h>

#include "common/egress_grammar.h"
#include "common/util.h"

int subproto_parse_signal(const char *s, size_t n)
{
  int sig = 0;

  if (n == 0 || n > 2 || s[0] == '0')
    return -1;
  for (size_t i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9')
      return -1;
    sig = sig * 10 + (s[i] - '0');
  }
  return sig <= 64 ? sig : -1;
}

int subproto_split_words(const char *body, size_t n, char ***ret)
{
  char **w = NULL;
  size_t got = 0;

  *ret = NULL;
  if (n == 0 || body[n - 1] != '\0')
    return -1; /* empty, or the last word is not ended */
  for (size_t i = 0; i < n; i += strlen(body + i) + 1) {
    if (++got > SUBPROTO_MAX_WORDS) {
      strv_free(w);
      return -1;
    }
    strv_push(&w, body + i);
  }
  *ret = w;
  return 0;
}

static bool cidr_covers(const struct egress_entry *p, const struct egress_entry *c)
{
  unsigned bits = p->prefix;

  if (p->kind != c->kind || c->prefix < p->prefix)
    return false;
  for (unsigned i = 0; i < 16 && bits > 0; i++) {
    unsigned take = bits >= 8 ? 8 : bits;
    uint8_t mask = (uint8_t)(0xff << (8 - take));
    if ((c->addr[i] & mask) != (p->addr[i] & mask))
      return false;
    bits -= take;
  }
  return true;
}

static bool domain_covers(const struct egress_entry *p, const struct egress_entry *c)
{
  size_t pl = strlen(p->domain), cl = strlen(c->domain);

  if (!p->wildcard)
    return !c->wildcard && streq(p->domain, c->domain);
  /* "*.x" covers "a.x", "*.a.x" and "*.x", never "x" */
  if (c->wildcard && streq(p->domain, c->domain))
    return true;
  return cl > pl + 1 && c->domain[cl - pl - 1] == '.' && streq(c->domain + cl - pl, p->domain);
}

static bool entry_covers(const struct egress_entry *p, const struct egress_entry *c)
{
  bool ok = c->kind == EGRESS_DOMAIN ? p->kind == EGRESS_DOMAIN && domain_covers(p, c)
                                     : p->kind == c->kind && cidr_covers(p, c);

  if (!ok)
    return false;
  if (p->proto != 0 && p->proto != c->proto)
    return false;
  if (p->port_min == 0 && p->port_max == 0)
    return true;
  if (c->port_min == 0 && c->port_max == 0)
    return false;
  return c->port_min >= p->port_min && c->port_max <= p->port_max;
}

bool subproto_allow_covered(const char *entry, char *const *parent)
{
  struct egress_entry c, p;
  struct error e = {0};

  if (egress_entry_parse(entry, &c, &e) < 0)
    return false;
  for (size_t i = 0; parent && parent[i]; i++)
    if (egress_entry_parse(parent[i], &p, &e) == 0 && entry_covers(&p, &c))
      return true;
  return false;
}
