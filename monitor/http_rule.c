/* http_rule.c - see http_rule.h */
#include "monitor/http_rule.h"

#include <stdlib.h>
#include <string.h>

#include "common/util.h"

static int hexval(char c)
{
  if (c >= '0' && c <= '9')
    return c - '0';
  c = (char)(c | 0x20);
  return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* The byte of the %XX at p (left bytes there), -1 when it is not one. */
static int escape_at(const char *p, size_t left)
{
  int hi, lo;

  if (left < 3 || p[0] != '%' || (hi = hexval(p[1])) < 0 || (lo = hexval(p[2])) < 0)
    return -1;
  return hi * 16 + lo;
}

/* A percent-encoding at p that a server could read as other than one
 * plain character of a segment: not %XX at all (IIS's %u, a lone or
 * doubled '%': lenient decoders read "%%32%65" as "%2e"); a dot, a
 * separator ('/', '\', ';') or a NUL (a C server's end of the path); '%'
 * itself (double-encoding: "%25%32%65" decodes to "%2e", then to '.'); the
 * first byte of an overlong UTF-8 form of an ASCII byte (IIS reads
 * "%c0%ae", "%e0%80%ae", "%e0%81%9c", "%f0%80%80%ae" as '.' or '\'), or a
 * byte no UTF-8 holds. */
static bool odd_escape(const char *p, size_t left)
{
  int b = escape_at(p, left), next = b < 0 ? -1 : escape_at(p + 3, left - 3);

  if (b < 0 || b == 0 || b == '.' || b == '/' || b == '\\' || b == ';' || b == '%')
    return true;
  if (b == 0xc0 || b == 0xc1 || b >= 0xf5)
    return true;
  if (b == 0xe0) /* three bytes: the second from 0xa0 */
    return next < 0xa0 || next > 0xbf;
  if (b == 0xf0) /* four bytes: the second from 0x90 */
    return next < 0x90 || next > 0xbf;
  return false;
}

/* The path as a server reads it is the path as sent: only the bytes a
 * request target may hold (a rewrite header's are not checked by the
 * parser: rewrite-raw-overlong, "\xc0\xae" sent raw), no dot segments
 * (also Tomcat's "..;" and ".;"), no fragment (nginx cuts the path at a
 * '#': fragment-dots, "/v1/..#" was "/"), and no percent-encoding that
 * decodes to a separator or a dot, once or after more decodings
 * (odd_escape: double-encoding, overlong-dots). */
bool http_rule_path_normal(const char *path, size_t plen)
{
  static const char *const odd[] = {"/./", "/../", "/.;", "/..;", "\\", "//", "#"};

  if ((plen >= 2 && streq(path + plen - 2, "/.")) || (plen >= 3 && streq(path + plen - 3, "/..")))
    return false;
  for (size_t i = 0; i < plen; i++) {
    unsigned char c = (unsigned char)path[i];
    if (c <= 0x20 || c >= 0x7f || (c == '%' && odd_escape(path + i, plen - i)))
      return false;
  }
  for (size_t i = 0; i < sizeof odd / sizeof *odd; i++)
    if (strstr(path, odd[i]) != NULL)
      return false;
  return true;
}

/* A method override header (X-HTTP-Method-Override and its kin), which
 * many servers obey on a POST: its value, in upper case, must be allowed as
 * the method is. */
static bool override_allowed(const struct profile_http_rule *r, const struct http_msg *m,
                             const char *path, size_t plen)
{
  for (size_t i = 0; i < m->n; i++) {
    const struct http_field *f = &m->f[i];
    char up[32];

    if (!http_field_is(f, "x-http-method-override") && !http_field_is(f, "x-http-method") &&
        !http_field_is(f, "x-method-override"))
      continue;
    if (f->value_len == 0 || f->value_len >= sizeof up)
      return false;
    for (size_t k = 0; k < f->value_len; k++)
      up[k] = (char)(f->value[k] >= 'a' && f->value[k] <= 'z' ? f->value[k] - 32 : f->value[k]);
    if (!profile_http_rule_allows(r, up, f->value_len, path, plen))
      return false;
  }
  return true;
}

/* X-Original-URL and X-Rewrite-URL, which IIS's URL rewriting and some
 * frameworks serve instead of the request's own path: each must be a path
 * the rule allows, as the target must. */
static bool rewrite_allowed(const struct profile_http_rule *r, const struct http_msg *m)
{
  for (size_t i = 0; i < m->n; i++) {
    const struct http_field *f = &m->f[i];
    const char *q;
    cleanup_free char *path = NULL;

    if (!http_field_is(f, "x-original-url") && !http_field_is(f, "x-rewrite-url"))
      continue;
    q = memchr(f->value, '?', f->value_len);
    path = xstrndup(f->value, q ? (size_t)(q - f->value) : f->value_len);
    if (path[0] != '/' || !http_rule_path_normal(path, strlen(path)) ||
        !profile_http_rule_allows(r, m->method, m->method_len, path, strlen(path)))
      return false;
  }
  return true;
}

bool http_rule_check(const struct profile_http_rule *r, const struct http_msg *m, const char **why)
{
  const char *q = memchr(m->target, '?', m->target_len);
  size_t plen = q ? (size_t)(q - m->target) : m->target_len;
  cleanup_free char *path = xstrndup(m->target, plen);

  if (!http_rule_path_normal(path, plen)) {
    *why = "the path is not in normal form (dot segments or encoded separators)";
    return false;
  }
  if (!profile_http_rule_allows(r, m->method, m->method_len, path, plen)) {
    *why = "method or path not in the profile's egress.http rule for the host";
    return false;
  }
  if (!override_allowed(r, m, path, plen)) {
    *why = "a method override header naming a method not in the egress.http rule";
    return false;
  }
  if (!rewrite_allowed(r, m)) {
    *why = "an X-Original-URL or X-Rewrite-URL naming a path not in the egress.http rule";
    return false;
  }
  return true;
}

int http_head_host(const char *buf, size_t len, char name[256], long *ret_port)
{
  struct http_msg m;
  const char *why = NULL;
  long n = http_request_parse(buf, len, &m, &why);
  const char *h, *digits;
  size_t hl;

  name[0] = '\0';
  *ret_port = -1;
  if (n <= 0)
    return n < 0 ? -1 : 0;
  if (m.host == NULL)
    return -1;
  hl = http_host_split(m.host, m.host_len, &h, &digits);
  /* digits up to the CR: the parser's check */
  *ret_port = digits ? strtol(digits, NULL, 10) : -1;
  if (hl == 0 || hl > 253)
    return -1;
  for (size_t i = 0; i < hl; i++)
    name[i] = (char)(h[i] >= 'A' && h[i] <= 'Z' ? h[i] | 0x20 : h[i]);
  name[hl] = '\0';
  if (name[hl - 1] == '.') /* "front.test." is front.test, as for the SNI */
    name[hl - 1] = '\0';
  return name[0] ? 1 : -1;
}
