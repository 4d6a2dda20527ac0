/* test_http1.c - the TLS proxy's HTTP/1.1 framing and ClientHello parser
 * (monitor/http1.c): what it must refuse (request smuggling), what it must
 * accept, and the server name of a real ClientHello (tests/fuzz/corpus/http1). */
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "monitor/http1.h"
#include "tests/unit/tap.h"

static long req(const char *s, struct http_msg *m, const char **why)
{
  *why = NULL;
  return http_request_parse(s, strlen(s), m, why);
}

static void test_requests(void)
{
  static const char *const bad[] = {
      "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: "
      "chunked\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
      "GET / HTTP/1.1\r\n\r\n",
      "GET / HTTP/1.1\nHost: a\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: a\rX: y\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n",
      "GET http://b/ HTTP/1.1\r\nHost: a\r\n\r\n",
      "GET / HTTP/2.0\r\nHost: a\r\n\r\n",
      "GET /a b HTTP/1.1\r\nHost: a\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n",
      "GET / HTTP/1.1\r\nHo st: a\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: a\r\nX: a\x01b\r\n\r\n",
  };
  struct http_msg m;
  const char *why;
  long n;

  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    n = req(bad[i], &m, &why);
    tap_ok(n < 0 && why != NULL, "refused: case %zu (%s)", i, why ? why : "accepted");
  }
  n = req("POST /v1/x?y=1 HTTP/1.1\r\nHost: api.test:443\r\nTransfer-Encoding: Chunked\r\n"
          "Connection: keep-alive, Upgrade\r\nUpgrade: websocket\r\n\r\nBODY",
          &m, &why);
  tap_ok(n > 0 && m.body == HTTP_BODY_CHUNKED && m.upgrade && !m.conn_close && m.host_len == 12 &&
             strncmp(m.target, "/v1/x?y=1", m.target_len) == 0,
         "a chunked upgrade request parses (%s)", why ? why : "");
  n = req("GET / HTTP/1.1\r\nHost: a\r\n", &m, &why);
  tap_ok(n == 0, "an incomplete head asks for more");
  n = req("GET / HTTP/1.0\r\n\r\n", &m, &why);
  tap_ok(n > 0 && m.conn_close, "HTTP/1.0 without keep-alive closes, needs no Host");
}

static void test_responses_and_chunks(void)
{
  struct http_msg m;
  struct http_chunked c = {0};
  const char *why = NULL;
  const char *body = "5;ext=1\r\nhello\r\n0\r\nTrailer: x\r\n\r\nNEXT";
  bool done = false;
  long n, total = 0;

  n = http_response_parse("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", 38, true, &m, &why);
  tap_ok(n > 0 && m.body == HTTP_BODY_NONE, "a HEAD response has no body whatever it says");
  n = http_response_parse("HTTP/1.1 200 OK\r\n\r\n", 19, false, &m, &why);
  tap_ok(n > 0 && m.body == HTTP_BODY_CLOSE, "no length: until close");
  n = http_response_parse("HTTP/1.1 101 Switching\r\n\r\n", 26, false, &m, &why);
  tap_ok(n > 0 && m.status == 101 && m.body == HTTP_BODY_NONE, "101 parses");
  /* a byte at a time */
  for (size_t i = 0; i < strlen(body) && !done; i++) {
    n = http_chunked_feed(&c, body + i, 1, &done, &why);
    if (n < 0)
      break;
    total += n;
  }
  tap_ok(done && (size_t)total == strlen(body) - 4,
         "chunked body fed a byte at a time ends before "
         "the next message (%ld)",
         total);
  memset(&c, 0, sizeof c);
  n = http_chunked_feed(&c, "zz\r\n", 4, &done, &why);
  tap_ok(n < 0, "a chunk size that is not hex is refused");
  memset(&c, 0, sizeof c);
  n = http_chunked_feed(&c, "ffffffffffffffff\r\n", 18, &done, &why);
  tap_ok(n < 0, "a chunk size of 16 hex digits is refused");
}

static void test_client_hello(void)
{
  const char *dir = getenv("AGENTRT_SRCDIR");
  char *path = xfmt("%s/tests/fuzz/corpus/http1/clienthello", dir ? dir : ".");
  FILE *f = fopen(path, "rbe");
  unsigned char buf[4096];
  size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
  char name[256] = "";

  if (f)
    fclose(f);
  tap_ok(n > 0 && tls_client_hello_sni(buf, n, name) == 1 && streq(name, "api.example.test"),
         "the server name of Python's ClientHello (%s)", name);
  tap_ok(tls_client_hello_sni(buf, n / 2, name) == 0, "half of it: more needed");
  buf[5] = 2;
  tap_ok(tls_client_hello_sni(buf, n, name) == -1, "not a ClientHello: refused");
  tap_ok(tls_client_hello_sni((const unsigned char *)"GET / HTTP/1.1\r\n", 16, name) == -1,
         "plain HTTP on 443: refused");
  free(path);
}

int main(void)
{
  test_requests();
  test_responses_and_chunks();
  test_client_hello();
  return tap_done();
}
