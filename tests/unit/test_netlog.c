/* test_netlog.c - NFLOG packets to "denied" and "flow" records (monitor/netlog.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_tree.h>

#include "monitor/netlog.h"
#include "netfilter/egress.h"
#include "tests/unit/tap.h"

static const uint8_t tcp4[] = {0x45, 0,   0, 40,  0,  0,    0x40, 0, 64, 6, 0, 0, 192, 0, 2,
                               2,    203, 0, 113, 10, 0xc0, 0x01, 0, 80, 0, 0, 0, 0,   0, 0};
static const uint8_t icmp4[] = {0x45, 0, 0, 28, 0,   0,  0,   0, 64, 1, 0, 0,
                                192,  0, 2, 2,  198, 51, 100, 7, 8,  0, 0, 0};

static void test_parse(void)
{
  struct netlog_event ev = {0};
  uint8_t udp6[48] = {0x60, [6] = 17, [24] = 0x20, 0x01,       0x0d,
                      0xb8, [39] = 1, [42] = 0x01, [43] = 0xbb};

  tap_ok(netlog_parse(tcp4, sizeof tcp4, EGRESS_LOG_FLOW_PREFIX, &ev) && ev.kind == NETLOG_FLOW &&
             strcmp(ev.dst, "203.0.113.10") == 0 && strcmp(ev.proto, "tcp") == 0 && ev.port == 80 &&
             ev.icmp_type == -1,
         "tcp v4 with the flow prefix is a flow to 203.0.113.10:80");
  tap_ok(netlog_parse(tcp4, sizeof tcp4, EGRESS_LOG_DENY_PREFIX, &ev) && ev.kind == NETLOG_DENIED,
         "the deny prefix is a denied packet");
  tap_ok(netlog_parse(tcp4, sizeof tcp4, NULL, &ev) && ev.kind == NETLOG_DENIED,
         "no prefix is a denied packet");
  tap_ok(netlog_parse(udp6, sizeof udp6, EGRESS_LOG_FLOW_PREFIX, &ev) &&
             strcmp(ev.dst, "2001:db8::1") == 0 && strcmp(ev.proto, "udp") == 0 && ev.port == 443,
         "udp v6 flow to [2001:db8::1]:443");
  tap_ok(netlog_parse(icmp4, sizeof icmp4, EGRESS_LOG_DENY_PREFIX, &ev) && ev.icmp_type == 8 &&
             ev.port == -1,
         "denied icmp keeps its type");
  tap_ok(netlog_parse(icmp4, sizeof icmp4, EGRESS_LOG_FLOW_PREFIX, &ev) && ev.icmp_type == -1,
         "an icmp flow is counted per destination, not per type");
  tap_ok(!netlog_parse(tcp4, 19, NULL, &ev) && !netlog_parse(udp6, 39, NULL, &ev),
         "truncated headers refused");
  tap_ok(netlog_parse(tcp4, 22, NULL, &ev) && ev.port == -1, "no transport header: no port");
  {
    /* an MLDv2 report: hop-by-hop options (router alert) before ICMPv6 */
    uint8_t mld[64] = {
        0x60, [6] = 0, [24] = 0xff, 0x02, [39] = 0x16, [40] = 58, 0, 5, 2, [48] = 143};
    tap_ok(netlog_parse(mld, sizeof mld, EGRESS_LOG_DENY_PREFIX, &ev) &&
               strcmp(ev.proto, "icmpv6") == 0 && ev.icmp_type == 143 &&
               strcmp(ev.dst, "ff02::16") == 0,
           "an MLD report behind its hop-by-hop header is icmpv6 type 143");
  }
  tap_ok(netlog_parse(tcp4, sizeof tcp4, EGRESS_LOG_FLOW_PREFIX, &ev) && !ev.inbound &&
             ev.src[0] == '\0',
         "an outbound flow is not inbound and names no peer");
  tap_ok(netlog_parse(tcp4, sizeof tcp4, EGRESS_LOG_IN_FLOW_PREFIX, &ev) && ev.inbound &&
             ev.kind == NETLOG_FLOW && strcmp(ev.src, "192.0.2.2") == 0 && ev.port == 80,
         "the in-flow prefix is an inbound flow from its source to the local port");
  tap_ok(netlog_parse(udp6, sizeof udp6, EGRESS_LOG_IN_DENY_PREFIX, &ev) && ev.inbound &&
             ev.kind == NETLOG_DENIED && strcmp(ev.src, "::") == 0 && ev.port == 443,
         "the in-deny prefix is a refused inbound packet (v6)");
  tap_ok(netlog_parse(tcp4, sizeof tcp4, EGRESS_LOG_SPOOF_PREFIX, &ev) && !ev.inbound &&
             ev.spoofed && ev.kind == NETLOG_DENIED && strcmp(ev.src, "192.0.2.2") == 0 &&
             strcmp(ev.dst, "203.0.113.10") == 0,
         "the spoof prefix is a denied outbound packet naming its forged source");
  {
    /* IPv6, routing header (43, type 4, 2 segments) then UDP to port 5555 */
    uint8_t rh[40 + 40 + 8] = {
        0x60, [6] = 43, [24] = 0x20,     0x01,           0x0d, 0xb8, [39] = 0x10, [40] = 17, 4, 4,
        1,    1,        [80 + 2] = 0x15, [80 + 3] = 0xb3};
    tap_ok(netlog_parse(rh, sizeof rh, EGRESS_LOG_DENY_PREFIX, &ev) && ev.routed &&
               strcmp(ev.proto, "udp") == 0 && ev.port == 5555,
           "a routing header is walked and said");
  }
  {
    /* IPv4 with an 8-byte LSRR option (ihl 7) then UDP to port 5555 */
    uint8_t lsrr[28 + 8] = {
        0x47, [9] = 17, [16] = 203, 0,   113, 10, [20] = 0x83,     7,
        4,    198,      51,         100, 20,  0,  [28 + 2] = 0x15, [28 + 3] = 0xb3};
    tap_ok(netlog_parse(lsrr, sizeof lsrr, EGRESS_LOG_DENY_PREFIX, &ev) && ev.ip_options &&
               strcmp(ev.dst, "203.0.113.10") == 0 && ev.port == 5555,
           "IPv4 options are skipped to the port and said");
    tap_ok(netlog_parse(tcp4, sizeof tcp4, EGRESS_LOG_DENY_PREFIX, &ev) && !ev.ip_options,
           "a plain IPv4 header has no options");
  }
  {
    uint8_t lite[28] = {0x45, [9] = 136, [16] = 203, 0, 113, 10, [22] = 0x15, [23] = 0xb3};
    uint8_t gre[24] = {0x45, [9] = 47, [16] = 203, 0, 113, 10};
    tap_ok(netlog_parse(lite, sizeof lite, EGRESS_LOG_FLOW_PREFIX, &ev) &&
               strcmp(ev.proto, "udplite") == 0 && ev.port == 5555,
           "UDP-Lite is named, with its port");
    tap_ok(netlog_parse(gre, sizeof gre, EGRESS_LOG_FLOW_PREFIX, &ev) &&
               strcmp(ev.proto, "other") == 0 && ev.ipproto == 47 && ev.port == -1,
           "another protocol keeps its number");
  }
}

/* Inbound and outbound of the same addresses are different records, each
 * with its direction. */
static char dir_rec[4][512];
static size_t dir_n;

static void on_emit_dir(void *ud, const char *kind, const char *fields)
{
  if (dir_n < 4)
    snprintf(dir_rec[dir_n++], sizeof dir_rec[0], "%s %s", kind, fields);
}

static void test_direction(void)
{
  struct netlog t;
  struct netlog_event in, out;

  netlog_init(&t, 1000, on_emit_dir, NULL);
  netlog_parse(tcp4, sizeof tcp4, EGRESS_LOG_IN_FLOW_PREFIX, &in);
  netlog_parse(tcp4, sizeof tcp4, EGRESS_LOG_FLOW_PREFIX, &out);
  netlog_note(&t, &in, 0);
  netlog_note(&t, &out, 0);
  netlog_flush(&t, 0, true);
  tap_ok(dir_n == 2 && strstr(dir_rec[0], "\"direction\":\"in\"") &&
             strstr(dir_rec[0], "\"src\":\"192.0.2.2\"") &&
             strstr(dir_rec[1], "\"direction\":\"out\"") && !strstr(dir_rec[1], "\"src\""),
         "records say their direction: %s / %s", dir_rec[0], dir_rec[1]);
}

/* A neighbour's ARP reply and solicited advertisement refused by a
 * gateway's pin (tables arp and ip6 agentrt): records naming the address
 * claimed and the link address given. */
static void test_neigh(void)
{
  static const uint8_t arp[28] = {0,    1,    8,    0,    6,   4, 0, 2, 2,    0,
                                  0x5e, 0,    0x53, 0x99, 192, 0, 2, 1, 0xff, 0xff,
                                  0xff, 0xff, 0xff, 0xff, 192, 0, 2, 2};
  /* IPv6 fe80::1 -> 2001:db8:2::2, NA (solicited, override) for 2001:db8:2::1, a nonce
   * option (14) then the target link-address option */
  uint8_t na[40 + 24 + 8 + 8] = {
      0x60,        [6] = 58,    [7] = 255,   [8] = 0xfe,  [9] = 0x80,  [23] = 1,
      [24] = 0x20, [25] = 0x01, [26] = 0x0d, [27] = 0xb8, [28] = 0,    [29] = 2,
      [39] = 2,    [40] = 136,  [44] = 0x60, [48] = 0x20, [49] = 0x01, [50] = 0x0d,
      [51] = 0xb8, [53] = 2,    [63] = 1,    [64] = 14,   [65] = 1,    [72] = 2,
      [73] = 1,    [74] = 2,    [76] = 0x5e, [78] = 0x53, [79] = 0x99};
  struct netlog_event ev;
  struct netlog t;

  tap_ok(netlog_parse(arp, sizeof arp, EGRESS_LOG_ARP_PIN_PREFIX, &ev) && ev.neigh && ev.inbound &&
             ev.kind == NETLOG_DENIED && strcmp(ev.proto, "arp") == 0 &&
             strcmp(ev.addr, "192.0.2.1") == 0 && strcmp(ev.src, "192.0.2.1") == 0 &&
             strcmp(ev.dst, "192.0.2.2") == 0 && strcmp(ev.lladdr, "02:00:5e:00:53:99") == 0 &&
             ev.port == -1,
         "a refused ARP reply names the address claimed and its link address");
  tap_ok(!netlog_parse(arp, 27, EGRESS_LOG_ARP_PIN_PREFIX, &ev), "a truncated ARP is refused");
  tap_ok(!netlog_parse(arp, sizeof arp, EGRESS_LOG_DENY_PREFIX, &ev),
         "ARP under another prefix is no IP packet");
  tap_ok(netlog_parse(na, sizeof na, EGRESS_LOG_NA_PIN_PREFIX, &ev) && ev.neigh && ev.inbound &&
             ev.icmp_type == 136 && strcmp(ev.addr, "2001:db8:2::1") == 0 &&
             strcmp(ev.src, "fe80::1") == 0 && strcmp(ev.lladdr, "02:00:5e:00:53:99") == 0,
         "a refused advertisement names its target and the link address of its option");
  na[73] = 0; /* an option of length 0: the walk stops */
  tap_ok(netlog_parse(na, sizeof na, EGRESS_LOG_NA_PIN_PREFIX, &ev) && ev.neigh &&
             ev.lladdr[0] == '\0',
         "an advertisement without a readable link-address option has none");
  dir_n = 0;
  netlog_init(&t, 1000, on_emit_dir, NULL);
  netlog_parse(arp, sizeof arp, EGRESS_LOG_ARP_PIN_PREFIX, &ev);
  netlog_note(&t, &ev, 0);
  netlog_flush(&t, 0, true);
  tap_ok(dir_n == 1 && strstr(dir_rec[0], "denied ") == dir_rec[0] &&
             strstr(dir_rec[0], "\"direction\":\"in\"") &&
             strstr(dir_rec[0], "\"proto\":\"arp\"") &&
             strstr(dir_rec[0], "\"addr\":\"192.0.2.1\"") &&
             strstr(dir_rec[0], "\"lladdr\":\"02:00:5e:00:53:99\"") &&
             strstr(dir_rec[0], "\"reason\":\"a gateway's address with another"),
         "its record: %s", dir_n ? dir_rec[0] : "");
  /* past the gateways the tables pin (over4, over6): a refusal of its own */
  tap_ok(netlog_parse(arp, sizeof arp, EGRESS_LOG_ARP_OVER_PREFIX, &ev) && ev.neigh && ev.over &&
             strcmp(ev.addr, "192.0.2.1") == 0,
         "an ARP refused past the bound is marked so");
  tap_ok(netlog_parse(na, sizeof na, EGRESS_LOG_NA_OVER_PREFIX, &ev) && ev.neigh && ev.over &&
             strcmp(ev.addr, "2001:db8:2::1") == 0,
         "an advertisement refused past the bound is marked so");
  netlog_note(&t, &ev, 0);
  netlog_flush(&t, 0, true);
  tap_ok(dir_n == 2 && strstr(dir_rec[1], "\"addr\":\"2001:db8:2::1\"") &&
             strstr(dir_rec[1], "\"reason\":\"an address past the gateways the tables pin"),
         "its record has its own reason: %s", dir_n > 1 ? dir_rec[1] : "");
  /* first-answer-race: a gateway's first answer (kept by the caller), and
   * one refused as a second link address within the window */
  tap_ok(netlog_parse(arp, sizeof arp, EGRESS_LOG_ARP_FIRST_PREFIX, &ev) && ev.neigh && ev.first &&
             !ev.twice && strcmp(ev.lladdr, "02:00:5e:00:53:99") == 0,
         "a gateway's first ARP answer is marked so");
  na[73] = 1;
  tap_ok(netlog_parse(na, sizeof na, EGRESS_LOG_NA_TWICE_PREFIX, &ev) && ev.neigh && ev.twice &&
             !ev.first && strcmp(ev.addr, "2001:db8:2::1") == 0 &&
             strcmp(ev.lladdr, "02:00:5e:00:53:99") == 0,
         "an advertisement refused as a second link address is marked so");
  netlog_note(&t, &ev, 0);
  netlog_flush(&t, 0, true);
  tap_ok(dir_n == 3 && strstr(dir_rec[2], "\"reason\":\"two link addresses answered for a gateway"),
         "its record has its own reason: %s", dir_n > 2 ? dir_rec[2] : "");
  /* a solicitation (escape: ns-sllao): its source, its source link-layer option */
  na[40] = 135;
  na[72] = 1;
  tap_ok(netlog_parse(na, sizeof na, EGRESS_LOG_NA_PIN_PREFIX, &ev) && ev.neigh &&
             ev.icmp_type == 135 && strcmp(ev.addr, "fe80::1") == 0 &&
             strcmp(ev.lladdr, "02:00:5e:00:53:99") == 0,
         "a refused solicitation names its source and the link address of its option");
}

/* ---- aggregation: collect the records */

struct rec {
  char kind[8];
  char dst[48];
  long long port, count;
};

struct sink {
  struct rec r[1024];
  size_t n;
};

static void on_emit(void *ud, const char *kind, const char *fields)
{
  struct sink *s = ud;
  char *doc = NULL;
  yajl_val v;
  const char *pdst[] = {"dst", NULL}, *pport[] = {"port", NULL}, *pcount[] = {"count", NULL};

  if (s->n == sizeof s->r / sizeof s->r[0] || asprintf(&doc, "{%s}", fields) < 0)
    abort();
  v = yajl_tree_parse(doc, NULL, 0);
  if (v == NULL)
    abort();
  snprintf(s->r[s->n].kind, sizeof s->r[0].kind, "%s", kind);
  snprintf(s->r[s->n].dst, sizeof s->r[0].dst, "%s",
           YAJL_GET_STRING(yajl_tree_get(v, pdst, yajl_t_string)));
  s->r[s->n].port = yajl_tree_get(v, pport, yajl_t_number)
                        ? YAJL_GET_INTEGER(yajl_tree_get(v, pport, yajl_t_number))
                        : -1;
  s->r[s->n].count = YAJL_GET_INTEGER(yajl_tree_get(v, pcount, yajl_t_number));
  s->n++;
  yajl_tree_free(v);
  free(doc);
}

static long long total(const struct sink *s, const char *kind, const char *dst)
{
  long long t = 0;

  for (size_t i = 0; i < s->n; i++)
    if (strcmp(s->r[i].kind, kind) == 0 && (dst == NULL || strcmp(s->r[i].dst, dst) == 0))
      t += s->r[i].count;
  return t;
}

static void test_coalesce(void)
{
  static struct sink s;
  static struct netlog t;
  struct netlog_event flow, denied;

  netlog_init(&t, 1000, on_emit, &s);
  netlog_parse(tcp4, sizeof tcp4, EGRESS_LOG_FLOW_PREFIX, &flow);
  netlog_parse(tcp4, sizeof tcp4, EGRESS_LOG_DENY_PREFIX, &denied);
  netlog_note(&t, &flow, 0);
  tap_ok(s.n == 1 && strcmp(s.r[0].kind, "flow") == 0 && s.r[0].count == 1 && s.r[0].port == 80,
         "the first flow is recorded at once with count 1");
  netlog_note(&t, &flow, 10);
  netlog_note(&t, &flow, 20);
  netlog_note(&t, &denied, 30);
  tap_ok(s.n == 2 && strcmp(s.r[1].kind, "denied") == 0,
         "a denied packet to the same place is its own record");
  tap_ok(netlog_flush(&t, 500, false) && s.n == 2, "nothing more within the window");
  netlog_flush(&t, 1000, false);
  tap_ok(s.n == 3 && s.r[2].count == 2 && strcmp(s.r[2].kind, "flow") == 0,
         "the window's end records the other two (count %lld)", s.n == 3 ? s.r[2].count : -1);
  tap_ok(!netlog_flush(&t, 1100, false), "nothing left pending after both windows");
  tap_ok(total(&s, "flow", "203.0.113.10") == 3 && total(&s, "denied", NULL) == 1,
         "flow counts add up to 3, denied to 1");
  /* a key seen once: one record only, nothing at the final flush */
  s.n = 0;
  netlog_note(&t, &flow, 2000);
  netlog_flush(&t, 2000, true);
  tap_ok(s.n == 1, "a single flow makes a single record");
  /* final flush records pending counts */
  s.n = 0;
  netlog_note(&t, &flow, 3000);
  netlog_note(&t, &flow, 3001);
  tap_ok(!netlog_flush(&t, 3002, true) && s.n == 2 && s.r[1].count == 1,
         "the final flush records the rest");
}

static void test_bounded(void)
{
  static struct sink s;
  static struct netlog t;
  struct netlog_event ev;
  size_t n = NETLOG_MAX_PENDING + 50;

  netlog_init(&t, 1000, on_emit, &s);
  netlog_parse(tcp4, sizeof tcp4, EGRESS_LOG_FLOW_PREFIX, &ev);
  for (size_t i = 0; i < n; i++) {
    ev.port = (int)i + 1;
    netlog_note(&t, &ev, 0);
    netlog_note(&t, &ev, 1);
  }
  tap_ok(t.n == NETLOG_MAX_PENDING, "the table stays bounded (%zu)", t.n);
  netlog_flush(&t, 5, true);
  tap_ok(total(&s, "flow", NULL) == (long long)(2 * n), "no count is lost when full (%lld)",
         total(&s, "flow", NULL));
}

int main(void)
{
  test_parse();
  test_direction();
  test_neigh();
  test_coalesce();
  test_bounded();
  return tap_done();
}
