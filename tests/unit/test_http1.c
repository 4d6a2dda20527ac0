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
      /* smuggling and Host tricks the proxy refuses outright */
      "POST / HTTP/1.0\r\nHost: a\r\nConnection: keep-alive\r\nTransfer-Encoding: "
      "chunked\r\n\r\n",
      "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: xchunked\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, identity\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding : chunked\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding\t: chunked\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding:\r\n chunked\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: a:@evil.test\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: a:443@evil.test\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: a@evil.test\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: a:443, evil.test\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: a:x\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: a:123456\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: a/b\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: \r\n\r\n",
      "GET //evil.test/x HTTP/1.1\r\nHost: a\r\n\r\n",
      "CONNECT /x HTTP/1.1\r\nHost: a\r\n\r\n",
      "CONNECT evil.test:443 HTTP/1.1\r\nHost: a\r\n\r\n",
      "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
      "PRI * HTTP/1.1\r\nHost: a\r\n\r\n",
      "POST / HTTP/1.1\r\nHost: a\r\nContent_Length: 5\r\n\r\n",
      "POST / HTTP/1.1\r\nHost: a\r\nTransfer_Encoding: chunked\r\n\r\n",
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
  n = req("GET / HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n", &m, &why);
  tap_ok(n > 0 && !m.upgrade, "an h2c upgrade is no upgrade for the proxy");
  n = req("GET / HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nUpgrade: websocket, h2c\r\n\r\n", &m,
          &why);
  tap_ok(n > 0 && !m.upgrade, "websocket in a list with h2c is no upgrade either");
  n = req("GET / HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
          "Upgrade: h2c\r\n\r\n",
          &m, &why);
  tap_ok(n > 0 && !m.upgrade, "nor two Upgrade fields");
  n = req("GET / HTTP/1.1\r\nHost: API.Example.test.:443\r\n\r\n", &m, &why);
  tap_ok(n > 0, "Host in upper case with a final dot and a port parses (%s)", why ? why : "");
  n = req("GET / HTTP/1.1\r\nHost: a\r\nX_Api_Key: k\r\n\r\n", &m, &why);
  tap_ok(n > 0, "another name with '_' parses (%s)", why ? why : "");
  n = req("GET / HTTP/1.1\r\nHost: [2001:db8::1]:8080\r\n\r\n", &m, &why);
  tap_ok(n > 0, "Host as an IPv6 address with a port parses (%s)", why ? why : "");
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
  {
    static const char *const bad_chunks[] = {
        "5 6\r\nhello\r\n0\r\n\r\n",           /* a second number after the size */
        "5 x\r\nhello\r\n0\r\n\r\n",           /* junk after blanks */
        "5;a\x01\r\nhello\r\n0\r\n\r\n",       /* a control byte in an extension */
        "5;a\nhello\r\n0\r\n\r\n",             /* a bare LF ends an extension */
        "5\nhello\r\n0\r\n\r\n",               /* a bare LF ends the size */
        "5;a\rb\r\nhello\r\n0\r\n\r\n",        /* a bare CR in an extension */
        "5\r\nhello\n0\r\n\r\n",               /* data ended by a bare LF */
        "0\r\nno colon\r\n\r\n",               /* a trailer that is no field */
        "0\r\n folded: x\r\n\r\n",             /* obs-fold in the trailers */
        "0\r\n: x\r\n\r\n",                    /* a trailer without a name */
        "0\r\nX: a\x01\r\n\r\n",               /* a control byte in a trailer */
        "0\r\nX: a\nGET / HTTP/1.1\r\n\r\n",   /* a bare LF in a trailer */
        "00000000000000001\r\nx\r\n0\r\n\r\n", /* 17 digits, leading zeros */
        "0x5\r\nhello\r\n0\r\n\r\n",           /* a 0x prefix */
        "-5\r\nhello\r\n0\r\n\r\n",
    };
    static const char *const good_chunks[] = {
        "5 ;a=\"b c\"\r\nhello\r\n0\r\nX-T: v\r\n\r\n",
        "5\t\r\nhello\r\n0\r\n\r\n",
    };
    for (size_t i = 0; i < sizeof bad_chunks / sizeof *bad_chunks; i++) {
      long r = 0;
      memset(&c, 0, sizeof c);
      done = false;
      why = NULL;
      for (size_t k = 0; k < strlen(bad_chunks[i]) && !done && r >= 0; k++)
        r = http_chunked_feed(&c, bad_chunks[i] + k, 1, &done, &why);
      tap_ok(r < 0 && why != NULL, "chunked refused: case %zu (%s)", i, why ? why : "accepted");
    }
    for (size_t i = 0; i < sizeof good_chunks / sizeof *good_chunks; i++) {
      memset(&c, 0, sizeof c);
      why = NULL;
      n = http_chunked_feed(&c, good_chunks[i], strlen(good_chunks[i]), &done, &why);
      tap_ok(n == (long)strlen(good_chunks[i]) && done, "chunked accepted: case %zu (%s)", i,
             why ? why : "");
    }
  }
}

/* A ClientHello record whose extensions are ext[0..elen). */
static size_t hello(unsigned char *out, const unsigned char *ext, size_t elen)
{
  size_t body = 2 + 32 + 1 + 4 + 2 + 2 + elen, i = 0;

  out[i++] = 0x16, out[i++] = 3, out[i++] = 1;
  out[i++] = (unsigned char)((body + 4) >> 8), out[i++] = (unsigned char)(body + 4);
  out[i++] = 1, out[i++] = 0, out[i++] = (unsigned char)(body >> 8), out[i++] = (unsigned char)body;
  out[i++] = 3, out[i++] = 3;
  memset(out + i, 0x11, 32);
  i += 32;
  out[i++] = 0;                                              /* session id */
  out[i++] = 0, out[i++] = 2, out[i++] = 0x13, out[i++] = 1; /* one suite */
  out[i++] = 1, out[i++] = 0;                                /* null compression */
  out[i++] = (unsigned char)(elen >> 8), out[i++] = (unsigned char)elen;
  if (elen > 0)
    memcpy(out + i, ext, elen);
  return i + elen;
}

static void test_hello_tricks(void)
{
  /* server_name: list of 2 bytes' length, then type 0, length, name */
  static const unsigned char one[] = {0, 0, 0, 8, 0, 6, 0, 0, 3, 'a', '.', 't'};
  static const unsigned char two_in_list[] = {0,   0,   0,   14, 0, 12, 0,   0,   3,
                                              'a', '.', 't', 0,  0, 3,  'e', '.', 't'};
  static const unsigned char twice[] = {0, 0, 0, 8, 0, 6, 0, 0, 3, 'a', '.', 't',
                                        0, 0, 0, 8, 0, 6, 0, 0, 3, 'e', '.', 't'};
  static const unsigned char with_ech[] = {0,   0,   0,   8,    0,    6, 0, 0, 3,
                                           'a', '.', 't', 0xfe, 0x0d, 0, 2, 0, 0};
  unsigned char buf[512];
  char name[256];
  bool ech = true;
  size_t n;

  n = hello(buf, one, sizeof one);
  tap_ok(tls_client_hello_sni(buf, n, name, &ech) == 1 && streq(name, "a.t") && !ech,
         "a hello with one name: that name, no ECH");
  n = hello(buf, two_in_list, sizeof two_in_list);
  tap_ok(tls_client_hello_sni(buf, n, name, &ech) == -1,
         "two names in the server_name list: refused");
  n = hello(buf, twice, sizeof twice);
  tap_ok(tls_client_hello_sni(buf, n, name, &ech) == -1, "two server_name extensions: refused");
  n = hello(buf, NULL, 0);
  tap_ok(tls_client_hello_sni(buf, n, name, &ech) == 2 && name[0] == '\0',
         "a whole hello with no server_name (an IP URL's): 2, no name");
  tap_ok(tls_client_hello_sni(buf, n - 1, name, &ech) == 0, "... not whole: more needed");
  n = hello(buf, with_ech, sizeof with_ech);
  tap_ok(tls_client_hello_sni(buf, n, name, &ech) == 1 && streq(name, "a.t") && ech,
         "an encrypted_client_hello extension is reported");
}

static void test_client_hello(void)
{
  const char *dir = getenv("AGENTRT_SRCDIR");
  char *path = xfmt("%s/tests/fuzz/corpus/http1/clienthello", dir ? dir : ".");
  FILE *f = fopen(path, "rbe");
  unsigned char buf[4096];
  size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
  char name[256] = "";
  bool ech;

  if (f)
    fclose(f);
  tap_ok(n > 0 && tls_client_hello_sni(buf, n, name, &ech) == 1 && streq(name, "api.example.test"),
         "the server name of Python's ClientHello (%s)", name);
  tap_ok(tls_client_hello_sni(buf, n / 2, name, &ech) == 0, "half of it: more needed");
  buf[5] = 2;
  tap_ok(tls_client_hello_sni(buf, n, name, &ech) == -1, "not a ClientHello: refused");
  tap_ok(tls_client_hello_sni((const unsigned char *)"GET / HTTP/1.1\r\n", 16, name, &ech) == -1,
         "plain HTTP on 443: refused");
  free(path);
}

int main(void)
{
  test_requests();
  test_responses_and_chunks();
  test_client_hello();
  test_hello_tricks();
  return tap_done();
}
