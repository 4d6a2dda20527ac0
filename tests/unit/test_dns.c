/* test_dns.c - the strict DNS parser and builder (netfilter/dns.c). */
#include <stdio.h>
#include <string.h>

#include "common/util.h"
#include "netfilter/dns.h"
#include "tests/unit/tap.h"

static struct dns_msg m;

/* A response for www.example.test A: CNAME to cdn.example.test (compressed
 * against the question), then two A records for cdn. */
static const uint8_t RESPONSE[] = {
    0x12,
    0x34,
    0x81,
    0x80,
    0,
    1,
    0,
    3,
    0,
    0,
    0,
    0,
    /* 12: question www.example.test A IN */
    3,
    'w',
    'w',
    'w',
    7,
    'e',
    'x',
    'a',
    'm',
    'p',
    'l',
    'e',
    4,
    't',
    'e',
    's',
    't',
    0,
    0,
    1,
    0,
    1,
    /* 34: answer 1: owner ptr 12, CNAME, ttl 300, rdata "cdn" + ptr to 16 */
    0xc0,
    12,
    0,
    5,
    0,
    1,
    0,
    0,
    1,
    0x2c,
    0,
    6,
    3,
    'c',
    'd',
    'n',
    0xc0,
    16,
    /* 52: answer 2: owner ptr 46 (cdn.example.test), A 203.0.113.10, ttl top bit set */
    0xc0,
    46,
    0,
    1,
    0,
    1,
    0x80,
    0,
    0,
    0,
    0,
    4,
    203,
    0,
    113,
    10,
    /* answer 3: A 203.0.113.11, ttl 60 */
    0xc0,
    46,
    0,
    1,
    0,
    1,
    0,
    0,
    0,
    60,
    0,
    4,
    203,
    0,
    113,
    11,
};

static void test_response(void)
{
  struct error err = {0};
  int r = dns_parse(RESPONSE, sizeof RESPONSE, &m, &err);

  tap_ok(r == 0, "parse response (%s)", err.msg);
  if (r < 0)
    return;
  tap_ok(m.id == 0x1234 && (m.flags & DNS_FLAG_QR) && streq(m.qname, "www.example.test") &&
             m.qtype == DNS_TYPE_A,
         "header and question");
  tap_ok(m.n_answers == 3, "three answers");
  tap_ok(m.answers[0].type == DNS_TYPE_CNAME && streq(m.answers[0].name, "www.example.test") &&
             streq(m.answers[0].data.target, "cdn.example.test") && m.answers[0].ttl == 300,
         "cname through compression pointer: %s", m.answers[0].data.target);
  tap_ok(streq(m.answers[1].name, "cdn.example.test") && m.answers[1].data.addr[3] == 10,
         "A owner through a pointer into rdata");
  tap_ok(m.answers[1].ttl == 0 && m.answers[2].ttl == 60, "ttl with top bit reads 0");
}

static void expect_bad(const char *what, const uint8_t *buf, size_t len)
{
  struct error err = {0};
  tap_ok(dns_parse(buf, len, &m, &err) < 0, "%s refused (%s)", what, err.msg);
}

static void test_malformed(void)
{
  uint8_t b[sizeof RESPONSE];
  uint8_t big[1200];

  for (size_t n = 0; n < sizeof RESPONSE; n++) {
    struct error err = {0};
    if (dns_parse(RESPONSE, n, &m, &err) == 0) {
      tap_ok(false, "truncated at %zu parses", n);
      return;
    }
  }
  tap_ok(true, "every truncation refused");

  memcpy(b, RESPONSE, sizeof b);
  b[34] = 0xc0, b[35] = 34; /* owner points at itself */
  expect_bad("self pointer", b, sizeof b);
  memcpy(b, RESPONSE, sizeof b);
  b[34] = 0xc0, b[35] = 52; /* forward pointer */
  expect_bad("forward pointer", b, sizeof b);
  memcpy(b, RESPONSE, sizeof b);
  b[16] = '.'; /* "www.e.ample": a dot inside a label */
  expect_bad("dot inside label", b, sizeof b);
  memcpy(b, RESPONSE, sizeof b);
  b[13] = 0;
  expect_bad("nul inside label", b, sizeof b);
  memcpy(b, RESPONSE, sizeof b);
  b[12] = 0x40; /* extended label type */
  expect_bad("reserved label type", b, sizeof b);
  memcpy(b, RESPONSE, sizeof b);
  b[5] = 2;
  expect_bad("two questions", b, sizeof b);
  memcpy(b, RESPONSE, sizeof b);
  b[63] = 5; /* A rdlength 5 */
  expect_bad("bad A length", b, sizeof b);
  memcpy(b, RESPONSE, sizeof b);
  b[45] = 7; /* CNAME rdlength longer than its name */
  expect_bad("cname rdata length mismatch", b, sizeof b);

  /* a name of 5 x 63-byte labels (> 255 bytes) */
  memset(big, 0, sizeof big);
  big[5] = 1;
  for (int i = 0; i < 5; i++) {
    big[12 + i * 64] = 63;
    memset(big + 13 + i * 64, 'a', 63);
  }
  expect_bad("name longer than 255", big, 12 + 5 * 64 + 5);

  /* backwards-only pointer chains, hidden in the rdata of an unknown
   * record: 40 hops are refused, 20 are fine */
  for (int hops = 20; hops <= 40; hops += 20) {
    struct error err = {0};
    size_t o = 30;
    memset(big, 0, sizeof big);
    big[5] = 1, big[7] = 2;
    big[12] = 1, big[13] = 'a';                  /* question "a", type/class 0 */
    big[21] = 99, big[23] = 1, big[29] = 2 * 40; /* answer 1 at 19: root, type 99 */
    for (int i = 0; i < 40; i++) {
      int t = i == 0 ? 12 : (int)(30 + 2 * (i - 1));
      big[o++] = 0xc0, big[o++] = (uint8_t)t;
    }
    /* answer 2 at 110: owner -> hop `hops`, type A, rdlen 4 */
    big[110] = 0xc0, big[111] = (uint8_t)(30 + 2 * (hops - 1));
    big[113] = 1, big[115] = 1, big[121] = 4;
    tap_ok((dns_parse(big, 126, &m, &err) == 0) == (hops == 20), "pointer chain of %d hops %s",
           hops + 1, hops == 20 ? "accepted" : "refused");
  }
}

static void test_query_roundtrip(void)
{
  uint8_t buf[512];
  struct error err = {0};
  int len = dns_build_query(buf, sizeof buf, 0xbeef, "Pypi.Org", DNS_TYPE_AAAA, &err);

  tap_ok(len > 0, "build query (%s)", err.msg);
  tap_ok(len > 0 && dns_parse(buf, (size_t)len, &m, &err) == 0 && m.id == 0xbeef &&
             streq(m.qname, "Pypi.Org") && m.qtype == DNS_TYPE_AAAA && m.arcount == 1 &&
             (m.flags & DNS_FLAG_RD) && !(m.flags & DNS_FLAG_QR),
         "query parses back, one OPT record");
  tap_ok(dns_build_query(buf, sizeof buf, 1, "a..b", DNS_TYPE_A, &err) < 0, "bad name refused");
  tap_ok(dns_build_query(buf, 20, 1, "example.test", DNS_TYPE_A, &err) < 0, "small buffer");
  tap_ok(dns_peek_id(buf, 3) == -1, "peek id of short message");
}

static void test_response_build(void)
{
  struct dns_msg q;
  struct dns_rr rr[3];
  uint8_t buf[512];
  struct error err = {0};
  int len;

  tap_ok(dns_parse(RESPONSE, sizeof RESPONSE, &q, &err) == 0, "parse template");
  q.flags = DNS_FLAG_RD;
  memcpy(rr, q.answers, sizeof rr);
  len = dns_build_response(buf, sizeof buf, &q, DNS_RCODE_NOERROR, rr, 3, &err);
  tap_ok(len > 0 && dns_parse(buf, (size_t)len, &m, &err) == 0 && m.n_answers == 3 &&
             streq(m.answers[2].name, "cdn.example.test") &&
             streq(m.answers[0].data.target, "cdn.example.test") &&
             (m.flags & (DNS_FLAG_QR | DNS_FLAG_RA | DNS_FLAG_RD)) ==
                 (DNS_FLAG_QR | DNS_FLAG_RA | DNS_FLAG_RD),
         "response round-trips (%d bytes)", len);
  tap_ok(len == 96, "owner names are compressed (%d bytes)", len);
  len = dns_build_response(buf, 70, &q, DNS_RCODE_NOERROR, rr, 3, &err);
  tap_ok(len > 0 && dns_parse(buf, (size_t)len, &m, &err) == 0 && (m.flags & DNS_FLAG_TC) &&
             m.n_answers < 3,
         "too long for the buffer: TC set, %zu answers kept", m.n_answers);
  len = dns_build_response(buf, sizeof buf, &q, DNS_RCODE_NXDOMAIN, NULL, 0, &err);
  tap_ok(len > 0 && dns_parse(buf, (size_t)len, &m, &err) == 0 &&
             DNS_RCODE(m.flags) == DNS_RCODE_NXDOMAIN && m.n_answers == 0,
         "nxdomain");
  len = dns_build_error(buf, sizeof buf, 7, DNS_RCODE_FORMERR);
  tap_ok(len == DNS_HEADER_LEN && buf[1] == 7 && (buf[3] & 0xf) == DNS_RCODE_FORMERR, "formerr");
}

int main(void)
{
  test_response();
  test_malformed();
  test_query_roundtrip();
  test_response_build();
  return tap_done();
}
