/* policy_json.c - the profile's "egress" object and upstream resolvers.
 *
 * Strict: unknown keys and wrong types are errors naming the JSON path, so a
 * typo in a security policy never silently widens it.
 */
#include "netfilter/egress.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <yajl/yajl_tree.h>

#include "common/util.h"

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

int egress_upstream_from_resolv_conf(const char *path, struct egress_policy *p, struct error *err)
{
  char line[512];
  FILE *f;
  int fd = open(path, O_RDONLY | O_CLOEXEC);

  if (fd < 0)
    return error_errno(err, "open `%s`", path);
  f = fdopen(fd, "r");
  if (f == NULL) {
    close(fd);
    return error_errno(err, "fdopen `%s`", path);
  }
  for (int n = 0; n < 1000 && p->n_upstream < EGRESS_MAX_UPSTREAM && fgets(line, sizeof line, f);
       n++) {
    char addr[128];
    struct error ignored;
    if (sscanf(line, " nameserver %127s", addr) != 1)
      continue;
    /* a zone index (fe80::1%eth0) cannot be used from another netns: skip */
    if (egress_upstream_parse(addr, &p->upstream[p->n_upstream], &ignored) == 0)
      p->n_upstream++;
  }
  fclose(f);
  if (p->n_upstream == 0)
    return error_set(err, 0, "`%s`: no usable nameserver", path);
  return 0;
}

static int expect_u32(yajl_val v, const char *where, const char *key, uint32_t max, uint32_t *ret,
                      struct error *err)
{
  if (!YAJL_IS_INTEGER(v) || v->u.number.i < 0 || v->u.number.i > (long long)max)
    return error_set(err, 0, "%s.%s: expected integer 0..%u", where, key, max);
  *ret = (uint32_t)v->u.number.i;
  return 0;
}

static int expect_bool(yajl_val v, const char *where, const char *key, bool *ret, struct error *err)
{
  if (!YAJL_IS_TRUE(v) && !YAJL_IS_FALSE(v))
    return error_set(err, 0, "%s.%s: expected boolean", where, key);
  *ret = YAJL_IS_TRUE(v);
  return 0;
}

static int parse_allow(yajl_val v, const char *where, struct egress_policy *p, struct error *err)
{
  if (!YAJL_IS_ARRAY(v))
    return error_set(err, 0, "%s.allow: expected array of strings", where);
  for (size_t i = 0; i < v->u.array.len; i++) {
    yajl_val s = v->u.array.values[i];
    struct egress_entry e;
    if (!YAJL_IS_STRING(s))
      return error_set(err, 0, "%s.allow[%zu]: expected string", where, i);
    if (egress_entry_parse(s->u.string, &e, err) < 0 || egress_policy_add(p, &e, err) < 0)
      return error_prefix(err, "%s.allow[%zu]", where, i);
  }
  return 0;
}

static int parse_upstreams(yajl_val v, const char *where, struct egress_policy *p,
                           struct error *err)
{
  if (!YAJL_IS_ARRAY(v) || v->u.array.len > EGRESS_MAX_UPSTREAM)
    return error_set(err, 0, "%s.dns.upstream: expected array of at most %d strings", where,
                     EGRESS_MAX_UPSTREAM);
  for (size_t i = 0; i < v->u.array.len; i++) {
    yajl_val s = v->u.array.values[i];
    if (!YAJL_IS_STRING(s))
      return error_set(err, 0, "%s.dns.upstream[%zu]: expected string", where, i);
    if (egress_upstream_parse(s->u.string, &p->upstream[i], err) < 0)
      return error_prefix(err, "%s.dns.upstream[%zu]", where, i);
  }
  p->n_upstream = v->u.array.len;
  return 0;
}

static int parse_dns(yajl_val v, const char *where, struct egress_policy *p, struct error *err)
{
  char sub[256];

  if (!YAJL_IS_OBJECT(v))
    return error_set(err, 0, "%s.dns: expected object", where);
  snprintf(sub, sizeof sub, "%s.dns", where);
  for (size_t i = 0; i < v->u.object.len; i++) {
    const char *k = v->u.object.keys[i];
    yajl_val val = v->u.object.values[i];
    int r;
    if (streq(k, "upstream"))
      r = parse_upstreams(val, where, p, err);
    else if (streq(k, "ttlMin"))
      r = expect_u32(val, sub, k, 86400 * 7, &p->ttl_min, err);
    else if (streq(k, "ttlMax"))
      r = expect_u32(val, sub, k, 86400 * 7, &p->ttl_max, err);
    else
      r = error_set(err, 0, "%s: unknown key `%s`", sub, k);
    if (r < 0)
      return r;
  }
  if (p->ttl_min > p->ttl_max)
    return error_set(err, 0, "%s: ttlMin is greater than ttlMax", sub);
  return 0;
}

static int parse_default(yajl_val v, const char *where, struct egress_policy *p, struct error *err)
{
  const char *s = YAJL_IS_STRING(v) ? v->u.string : NULL;

  if (!streq(s, "allow") && !streq(s, "deny"))
    return error_set(err, 0, "%s.default: expected \"allow\" or \"deny\"", where);
  p->default_allow = streq(s, "allow");
  return 0;
}

static int parse_key(const char *k, yajl_val v, const char *where, struct egress_policy *p,
                     struct error *err)
{
  uint32_t group = 0;

  if (streq(k, "default"))
    return parse_default(v, where, p, err);
  if (streq(k, "allow"))
    return parse_allow(v, where, p, err);
  if (streq(k, "allowPrivateAnswers"))
    return expect_bool(v, where, k, &p->allow_private_answers, err);
  if (streq(k, "dns"))
    return parse_dns(v, where, p, err);
  if (streq(k, "logGroup")) {
    if (YAJL_IS_NULL(v)) {
      p->log_group = -1;
      return 0;
    }
    if (expect_u32(v, where, k, 65535, &group, err) < 0)
      return -1;
    p->log_group = (int)group;
    return 0;
  }
  return error_set(err, 0, "%s: unknown key `%s`", where, k);
}

int egress_policy_from_yajl(const struct yajl_val_s *node, const char *where,
                            struct egress_policy *ret, struct error *err)
{
  yajl_val v = (yajl_val)node;
  struct egress_policy p;

  egress_policy_init(&p);
  if (!YAJL_IS_OBJECT(v))
    return error_set(err, 0, "%s: expected object", where);
  for (size_t i = 0; i < v->u.object.len; i++) {
    if (parse_key(v->u.object.keys[i], v->u.object.values[i], where, &p, err) < 0) {
      egress_policy_free(&p);
      return -1;
    }
  }
  *ret = p;
  return 0;
}

int egress_policy_parse_json(const char *json, size_t len, const char *where,
                             struct egress_policy *ret, struct error *err)
{
  char msg[256] = "";
  cleanup_free char *copy = xstrndup(json, len);
  yajl_val v;
  int r;

  if (strlen(copy) != len)
    return error_set(err, 0, "%s: NUL byte in JSON", where);
  v = yajl_tree_parse(copy, msg, sizeof msg);
  if (v == NULL) {
    msg[strcspn(msg, "\n")] = '\0';
    return error_set(err, 0, "%s: invalid JSON: %s", where, msg);
  }
  r = egress_policy_from_yajl(v, where, ret, err);
  yajl_tree_free(v);
  return r;
}
