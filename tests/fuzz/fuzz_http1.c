/* fuzz_http1.c - libFuzzer target for the TLS proxy's HTTP/1.1 framing
 * (monitor/http1.c): request and response heads, then the rest as a
 * chunked body fed in pieces of every size the input picks; the same bytes as
 * a TLS ClientHello (its server name).
 *
 * Invariants: a parsed head's length is within the input and ends in
 * CRLFCRLF; every field points inside the head; a failure has a reason; the
 * chunked decoder never claims more bytes than it was given.  A request's
 * Host splits (http_host_split, as the proxy reads it) into a name inside
 * it, without brackets, and 1 to 5 digits after it up to its end; the name
 * (lower case, no final dot) on that port is the Host (http_host_is), unless
 * the port has a leading zero; on another port it is not. */
#include <stdint.h>
#include <string.h>

#include "monitor/http1.h"
#include "tests/fuzz/fuzz_common.h"

static void check_msg(const char *buf, long n, const struct http_msg *m)
{
  if (n < 4 || memcmp(buf + n - 4, "\r\n\r\n", 4) != 0)
    fuzz_fail("http1", "a head that does not end in CRLFCRLF");
  for (size_t i = 0; i < m->n; i++) {
    const struct http_field *f = &m->f[i];
    if (f->name < buf || f->name + f->name_len > buf + n || f->value < buf ||
        f->value + f->value_len > buf + n)
      fuzz_fail("http1", "a field outside the head");
  }
  if (m->host && (m->host < buf || m->host + m->host_len > buf + n))
    fuzz_fail("http1", "Host outside the head");
}

static void check_host(const struct http_msg *m)
{
  const char *name, *digits, *end = m->host + m->host_len;
  size_t n = http_host_split(m->host, m->host_len, &name, &digits);
  char sni[256];
  unsigned long port = 443;

  if (name < m->host || name + n > end || memchr(name, '[', n) || memchr(name, ']', n))
    fuzz_fail("http1", "a Host's name outside it or with brackets");
  if (digits) {
    if (digits <= name + n || digits > end || end - digits < 1 || end - digits > 5)
      fuzz_fail("http1", "a Host's port outside it");
    port = 0;
    for (const char *d = digits; d < end; d++) {
      if (*d < '0' || *d > '9')
        fuzz_fail("http1", "a Host's port that is not digits");
      port = port * 10 + (unsigned long)(*d - '0');
    }
  }
  if (n == 0 || n > 253 || port > 65535)
    return;
  for (size_t i = 0; i < n; i++)
    sni[i] = (char)(name[i] >= 'A' && name[i] <= 'Z' ? name[i] | 0x20 : name[i]);
  sni[n] = '\0';
  if (sni[n - 1] == '.')
    sni[n - 1] = '\0';
  if (sni[0] == '\0')
    return;
  /* a port written with a leading zero is not the port (compared as written, as a
   * server routing by Host text may) */
  if (http_host_is(m, sni, (uint16_t)port) != !(digits && digits[0] == '0' && end - digits > 1))
    fuzz_fail("http1", "a Host that is not its own name, or a port with a leading zero taken");
  if (digits && http_host_is(m, sni, (uint16_t)(port + 1)))
    fuzz_fail("http1", "a Host on another port");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  const char *buf = (const char *)data, *why = NULL;
  struct http_msg m;
  struct http_chunked ch = {0};
  long n;
  size_t off, step;
  bool done = false;

  if (size == 0)
    return 0;
  step = (size_t)(data[0] % 17) + 1;
  n = http_request_parse(buf, size, &m, &why);
  if (n > 0) {
    check_msg(buf, n, &m);
    if (m.host)
      check_host(&m);
  } else if (n < 0 && why == NULL) {
    fuzz_fail("http1", "request refused without a reason");
  }
  why = NULL;
  n = http_response_parse(buf, size, data[0] & 1, &m, &why);
  if (n > 0) {
    check_msg(buf, n, &m);
    if (m.status < 100 || m.status > 599)
      fuzz_fail("http1", "a status out of range");
  } else if (n < 0 && why == NULL) {
    fuzz_fail("http1", "response refused without a reason");
  }
  {
    char name[256];
    bool ech;
    int r = tls_client_hello_sni(data, size, name, &ech);
    if (r == 1 && (name[0] == '\0' || strlen(name) > 253))
      fuzz_fail("http1", "a server name empty or too long");
    if (r == 2 && name[0] != '\0')
      fuzz_fail("http1", "a hello without a server name gave one");
  }
  for (off = n > 0 ? (size_t)n : 0; off < size && !done;) {
    size_t len = size - off < step ? size - off : step;
    long used;
    why = NULL;
    used = http_chunked_feed(&ch, buf + off, len, &done, &why);
    if (used < 0) {
      if (why == NULL)
        fuzz_fail("http1", "chunked refused without a reason");
      break;
    }
    if ((size_t)used > len || (!done && (size_t)used != len))
      fuzz_fail("http1", "chunked consumed a wrong count");
    off += (size_t)used;
  }
  return 0;
}
