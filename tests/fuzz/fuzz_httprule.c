/* fuzz_httprule.c - libFuzzer target for the TLS proxy's decisions on what a
 * client sends (monitor/http_rule.c): the egress.http rule's verdict on a
 * request (its path, a method override, X-Original-URL and X-Rewrite-URL),
 * and the name and port of a plain HTTP connection's first head, peeked at
 * while it comes in pieces.
 *
 * The input is the bytes a client sends: one or more request heads, what
 * follows them too (a body, pipelined requests: each head is checked, as
 * the proxy reads them one after the other).  The rule allows GET and
 * POST under "/v1/" (the first byte may drop the methods).
 *
 * Invariants, beyond no crash and no leak:
 *   - a path the rule lets through (the target's, a rewrite header's) is read
 *     by a server as it is sent: however many times it is percent-decoded
 *     (%XX, IIS's %uXXXX, overlong UTF-8 of an ASCII byte), a backslash read
 *     as '/', a ";param" cut off a segment (Tomcat), a '#' or a NUL taken as
 *     the end,
 *     it has no "." or ".." segment and no empty one, and it is still under
 *     the rule's prefix; it holds only the bytes a target may (0x21-0x7e);
 *   - http_head_host: a head cut at any point gives "more needed" or the
 *     answer the whole input gives (the same name and port); a name found is
 *     not empty, at most 253 bytes, lower case, and is
 *     the head's Host as the proxy checks it later (http_host_is).
 */
#include <stdint.h>
#include <string.h>

#include "monitor/http1.h"
#include "monitor/http_rule.h"
#include "tests/fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define VIEW_MAX 4096
#define DECODE_ROUNDS 4

static int hexval(unsigned char c)
{
  if (c >= '0' && c <= '9')
    return c - '0';
  c |= 0x20;
  return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* One round of a lenient server's decoding of s[0..n) into out; returns
 * the new length. */
static size_t decode(const unsigned char *s, size_t n, unsigned char *out)
{
  size_t o = 0;

  for (size_t i = 0; i < n;) {
    if (s[i] == '%' && i + 2 < n + 0 && hexval(s[i + 1]) >= 0 && hexval(s[i + 2]) >= 0) {
      out[o++] = (unsigned char)(hexval(s[i + 1]) * 16 + hexval(s[i + 2]));
      i += 3;
    } else if (s[i] == '%' && i + 5 < n + 0 && (s[i + 1] | 0x20) == 'u' && hexval(s[i + 2]) >= 0 &&
               hexval(s[i + 3]) >= 0 && hexval(s[i + 4]) >= 0 && hexval(s[i + 5]) >= 0) {
      unsigned v = (unsigned)(hexval(s[i + 2]) << 12 | hexval(s[i + 3]) << 8 |
                              hexval(s[i + 4]) << 4 | hexval(s[i + 5]));
      out[o++] = v < 0x80 ? (unsigned char)v : '?';
      i += 6;
    } else {
      out[o++] = s[i++];
    }
  }
  /* overlong UTF-8 forms of an ASCII byte, read as that byte */
  n = o;
  o = 0;
  for (size_t i = 0; i < n;) {
    if ((s = out, (out[i] == 0xc0 || out[i] == 0xc1)) && i + 1 < n && (out[i + 1] & 0xc0) == 0x80) {
      out[o++] = (unsigned char)(((out[i] & 1) << 6) | (out[i + 1] & 0x3f));
      i += 2;
    } else if (out[i] == 0xe0 && i + 2 < n && (out[i + 1] == 0x80 || out[i + 1] == 0x81) &&
               (out[i + 2] & 0xc0) == 0x80) {
      out[o++] = (unsigned char)(((out[i + 1] & 1) << 6) | (out[i + 2] & 0x3f));
      i += 3;
    } else if (out[i] == 0xf0 && i + 3 < n && out[i + 1] == 0x80 &&
               (out[i + 2] == 0x80 || out[i + 2] == 0x81) && (out[i + 3] & 0xc0) == 0x80) {
      out[o++] = (unsigned char)(((out[i + 2] & 1) << 6) | (out[i + 3] & 0x3f));
      i += 4;
    } else {
      out[o++] = out[i++];
    }
  }
  return o;
}

/* The view s[0..n) has a dot, dot-dot or empty segment (after the leading
 * '/'), a '\' or '/' read alike, ";..." cut off each segment, '#' the end. */
static bool odd_segments(const unsigned char *s, size_t n)
{
  size_t i = 1;

  for (size_t k = 0; k < n; k++)
    if (s[k] == '#' || s[k] == '\0')
      n = k;
  while (i <= n) {
    size_t e = i, cut;
    while (e < n && s[e] != '/' && s[e] != '\\')
      e++;
    cut = i;
    while (cut < e && s[cut] != ';')
      cut++;
    if ((cut - i == 1 && s[i] == '.') || (cut - i == 2 && s[i] == '.' && s[i + 1] == '.'))
      return true;
    if (e == i && e < n) /* an empty segment in the middle: "//" */
      return true;
    i = e + 1;
  }
  return false;
}

static void check_path(const struct profile_http_rule *r, const struct http_msg *m,
                       const char *path, size_t plen)
{
  static unsigned char a[VIEW_MAX], b[VIEW_MAX];
  size_t n = plen;

  if (plen >= VIEW_MAX)
    return;
  for (size_t i = 0; i < plen; i++)
    if ((unsigned char)path[i] <= 0x20 || (unsigned char)path[i] >= 0x7f)
      fuzz_fail("httprule", "a path let through with a byte a target may not hold");
  memcpy(a, path, plen);
  for (int round = 0; round <= DECODE_ROUNDS; round++) {
    if (n == 0 || a[0] != '/')
      fuzz_fail("httprule", "a path let through that a server reads without its leading /");
    if (odd_segments(a, n))
      fuzz_fail("httprule", "a path let through with a dot or empty segment once decoded");
    if (!profile_http_rule_allows(r, m->method, m->method_len, (const char *)a, n))
      fuzz_fail("httprule", "a path let through that is not under the rule once decoded");
    n = decode(a, n, b);
    memcpy(a, b, n);
  }
}

static void check_rule(const struct profile_http_rule *r, const struct http_msg *m)
{
  const char *why = NULL, *q;
  bool ok = http_rule_check(r, m, &why);

  if (!ok) {
    if (why == NULL)
      fuzz_fail("httprule", "refused without a reason");
    return;
  }
  q = memchr(m->target, '?', m->target_len);
  check_path(r, m, m->target, q ? (size_t)(q - m->target) : m->target_len);
  for (size_t i = 0; i < m->n; i++) {
    const struct http_field *f = &m->f[i];
    if (!http_field_is(f, "x-original-url") && !http_field_is(f, "x-rewrite-url"))
      continue;
    q = memchr(f->value, '?', f->value_len);
    check_path(r, m, f->value, q ? (size_t)(q - f->value) : f->value_len);
  }
}

static void check_host(const char *buf, size_t size)
{
  char name[256], part[256];
  long port = -2, pport;
  int r = http_head_host(buf, size, name, &port);
  struct http_msg m;
  const char *why = NULL;
  size_t cuts[16], nc = 0;

  if (r == 1) {
    size_t l = strlen(name);
    if (l == 0 || l > 253)
      fuzz_fail("httprule", "a head's Host name empty or too long");
    for (size_t i = 0; i < l; i++)
      if (name[i] >= 'A' && name[i] <= 'Z')
        fuzz_fail("httprule", "a head's Host name not in lower case");
    if (port < -1 || port > 99999)
      fuzz_fail("httprule", "a head's Host port out of range");
    if (http_request_parse(buf, size, &m, &why) <= 0)
      fuzz_fail("httprule", "a head's Host from a head the parser refuses");
    if (port <= 65535 && !http_host_is(&m, name, port < 0 ? 80 : (uint16_t)port)) {
      const char *hn, *digits;
      http_host_split(m.host, m.host_len, &hn, &digits);
      if (!(digits && digits[0] == '0'))
        fuzz_fail("httprule", "a head's Host that the proxy's later check refuses");
    }
  } else if (r != 0 && r != -1) {
    fuzz_fail("httprule", "http_head_host's answer out of range");
  }
  /* cut at every point of a short input, at 16 of a long one */
  for (size_t k = 0; k < 16 && k < size; k++)
    cuts[nc++] = size <= 16 ? k : (size / 16) * k + (size_t)buf[k] % (size / 16 ? size / 16 : 1);
  for (size_t i = 0; i < nc; i++) {
    char *p = fuzz_copy((const unsigned char *)buf, cuts[i]);
    int pr = http_head_host(p, cuts[i], part, &pport);
    free(p);
    if (pr != 0 && (pr != r || (pr == 1 && (strcmp(part, name) != 0 || pport != port))))
      fuzz_fail("httprule", "a head cut short decided otherwise than the whole");
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static char *methods[] = {"GET", "POST", NULL}, *paths[] = {"/v1/", NULL};
  struct profile_http_rule rule = {"api.example.test", methods, paths};
  char *buf;
  struct http_msg m;
  const char *why = NULL;
  long n;

  if (size == 0)
    return 0;
  if (data[0] & 1)
    rule.methods = NULL;
  buf = fuzz_copy(data + 1, size - 1);
  /* pipelined: head after head, a Content-Length body skipped, as
   * serve_http reads them */
  for (size_t off = 0, k = 0; off < size - 1 && k < 8; k++) {
    n = http_request_parse(buf + off, size - 1 - off, &m, &why);
    if (n > (long)(size - 1 - off))
      fuzz_fail("httprule", "a head longer than the input");
    if (n <= 0)
      break;
    check_rule(&rule, &m);
    off += (size_t)n;
    if (m.body == HTTP_BODY_CHUNKED || (m.body == HTTP_BODY_LENGTH && m.length > size - 1 - off))
      break;
    if (m.body == HTTP_BODY_LENGTH)
      off += (size_t)m.length;
  }
  check_host(buf, size - 1);
  free(buf);
  return 0;
}
