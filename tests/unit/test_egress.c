/* test_egress.c - egress entry, ingress port and upstream parsing, private addresses, and golden
 * nftables batches (the .bin files under tests/data/nft/; regenerate with UPDATE_GOLDEN=1). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/neighbour.h>
#include <linux/nexthop.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "common/util.h"
#include "netfilter/egress.h"
#include "tests/unit/tap.h"

/* rtnetlink messages as a dump gives them, for egress_gw_nl_parse */
struct nlbuf {
  uint8_t b[8192];
  size_t len;
};

static struct nlmsghdr *nl_msg(struct nlbuf *m, uint16_t type, uint32_t seq, const void *hdr,
                               size_t hlen)
{
  struct nlmsghdr *h = (struct nlmsghdr *)(m->b + m->len);

  memset(h, 0, NLMSG_LENGTH(hlen));
  h->nlmsg_len = (uint32_t)NLMSG_LENGTH(hlen);
  h->nlmsg_type = type;
  h->nlmsg_seq = seq;
  h->nlmsg_flags = NLM_F_MULTI;
  memcpy(NLMSG_DATA(h), hdr, hlen);
  return h;
}

static void nl_attr(struct nlmsghdr *h, uint16_t type, const void *d, size_t n)
{
  struct rtattr *a = (struct rtattr *)((char *)h + NLMSG_ALIGN(h->nlmsg_len));

  a->rta_type = type;
  a->rta_len = (unsigned short)RTA_LENGTH(n);
  memcpy(RTA_DATA(a), d, n);
  h->nlmsg_len = NLMSG_ALIGN(h->nlmsg_len) + RTA_ALIGN(a->rta_len);
}

static void nl_end(struct nlbuf *m, struct nlmsghdr *h)
{
  m->len += NLMSG_ALIGN(h->nlmsg_len);
}

static void nl_route(struct nlbuf *m, uint32_t seq, uint8_t fam, const void *gw, size_t n, int oif)
{
  struct rtmsg rt = {.rtm_family = fam, .rtm_table = RT_TABLE_MAIN, .rtm_type = RTN_UNICAST};
  struct nlmsghdr *h = nl_msg(m, RTM_NEWROUTE, seq, &rt, sizeof rt);

  nl_attr(h, RTA_OIF, &oif, 4);
  if (gw != NULL)
    nl_attr(h, RTA_GATEWAY, gw, n);
  nl_end(m, h);
}

/* an IPv4 route through two next hops (RTA_MULTIPATH), the second on oif2 */
static void nl_multipath(struct nlbuf *m, uint32_t seq, const uint8_t *a, const uint8_t *b,
                         int oif2)
{
  struct rtmsg rt = {.rtm_family = AF_INET, .rtm_table = RT_TABLE_MAIN, .rtm_type = RTN_UNICAST};
  struct nlmsghdr *h = nl_msg(m, RTM_NEWROUTE, seq, &rt, sizeof rt);
  uint8_t mp[2 * (sizeof(struct rtnexthop) + RTA_LENGTH(4))];
  const uint8_t *gw[2] = {a, b};

  memset(mp, 0, sizeof mp);
  for (int i = 0; i < 2; i++) {
    struct rtnexthop *nh = (struct rtnexthop *)(mp + i * (sizeof *nh + RTA_LENGTH(4)));
    struct rtattr *at = RTNH_DATA(nh);
    nh->rtnh_len = (unsigned short)(sizeof *nh + RTA_LENGTH(4));
    nh->rtnh_ifindex = i == 0 ? 2 : oif2;
    at->rta_type = RTA_GATEWAY;
    at->rta_len = RTA_LENGTH(4);
    memcpy(RTA_DATA(at), gw[i], 4);
  }
  nl_attr(h, RTA_MULTIPATH, mp, sizeof mp);
  nl_end(m, h);
}

/* an IPv4 route via an IPv6 next hop (RTA_VIA) */
static void nl_via6(struct nlbuf *m, uint32_t seq, const uint8_t *a6, int oif)
{
  struct rtmsg rt = {.rtm_family = AF_INET, .rtm_table = RT_TABLE_MAIN, .rtm_type = RTN_UNICAST};
  struct nlmsghdr *h = nl_msg(m, RTM_NEWROUTE, seq, &rt, sizeof rt);
  uint8_t via[18] = {AF_INET6, 0};

  memcpy(via + 2, a6, 16);
  nl_attr(h, RTA_OIF, &oif, 4);
  nl_attr(h, RTA_VIA, via, sizeof via);
  nl_end(m, h);
}

/* a nexthop object; gw NULL: a group (NHA_GROUP, no gateway of its own) */
static void nl_nexthop(struct nlbuf *m, uint32_t seq, const void *gw, size_t n, int oif)
{
  struct nhmsg nh = {.nh_family = n == 16 ? AF_INET6 : AF_INET};
  struct nlmsghdr *h = nl_msg(m, RTM_NEWNEXTHOP, seq, &nh, sizeof nh);
  uint32_t id = 99;

  nl_attr(h, NHA_ID, &id, 4);
  if (gw != NULL) {
    nl_attr(h, NHA_OIF, &oif, 4);
    nl_attr(h, NHA_GATEWAY, gw, n);
  } else {
    struct nexthop_grp g[2] = {{.id = 1}, {.id = 2}};
    nl_attr(h, NHA_GROUP, g, sizeof g);
  }
  nl_end(m, h);
}

static void nl_neigh(struct nlbuf *m, uint32_t seq, const void *dst, size_t n, const uint8_t *ll,
                     uint16_t state)
{
  struct ndmsg nd = {.ndm_family = n == 4 ? AF_INET : AF_INET6, .ndm_state = state};
  struct nlmsghdr *h = nl_msg(m, RTM_NEWNEIGH, seq, &nd, sizeof nd);

  nl_attr(h, NDA_DST, dst, n);
  nl_attr(h, NDA_LLADDR, ll, 6);
  nl_end(m, h);
}

static void nl_done(struct nlbuf *m, uint32_t seq)
{
  int zero = 0;
  struct nlmsghdr *h = nl_msg(m, NLMSG_DONE, seq, &zero, sizeof zero);

  nl_end(m, h);
}

struct entry_case {
  const char *in;
  const char *canon; /* NULL = must fail */
};

static const struct entry_case ENTRIES[] = {
    {"203.0.113.0/24", "203.0.113.0/24"},
    {"203.0.113.10", "203.0.113.10"},
    {"203.0.113.10/32", "203.0.113.10"},
    {"203.0.113.10:443", "203.0.113.10:443"},
    {"203.0.113.10:8000-8100/tcp", "203.0.113.10:8000-8100/tcp"},
    {"203.0.113.0/24:53/udp", "203.0.113.0/24:53/udp"},
    {"0.0.0.0/0", "0.0.0.0/0"},
    {"2001:db8::/32", "2001:db8::/32"},
    {"[2001:db8::1]:443/udp", "[2001:db8::1/128]:443/udp"},
    {"[2001:db8::/48]:80", "[2001:db8::/48]:80"},
    {"pypi.org", "pypi.org"},
    {"PyPI.org.", "pypi.org"},
    {"*.githubusercontent.com:443", "*.githubusercontent.com:443"},
    {"files.pythonhosted.org:443/tcp", "files.pythonhosted.org:443/tcp"},
    {"169.254.169.254:80", "169.254.169.254:80"},
    {"203.0.113.10/24", NULL}, /* host bits set */
    {"203.0.113.0/33", NULL},
    {"203.0.113.256", NULL},
    {"1.2.3", NULL},
    {"203.0.113.10:0", NULL},
    {"203.0.113.10:65536", NULL},
    {"203.0.113.10:90-80", NULL},
    {"203.0.113.10:+80", NULL},
    {"203.0.113.10:", NULL},
    {"2001:db8::1:443", "2001:db8::1:443/128"}, /* bare IPv6: no port */
    {"[2001:db8::1", NULL},
    {"[2001:db8::1]x", NULL},
    {"pypi.org:443-444", NULL}, /* domains: one port */
    {"pypi.org/tcp", NULL},     /* proto needs a port on a domain */
    {"-pypi.org", NULL},
    {"pypi-.org", NULL},
    {"py_pi.org", NULL},
    {"py pi.org", NULL},
    {"a..b", NULL},
    {"*.", NULL},
    {"*", NULL},
    {"**.x.org", NULL},
    {"x.*.org", NULL},
    {"", NULL},
    {"example.123", NULL},
};

static void test_entries(void)
{
  for (size_t i = 0; i < ARRAY_SIZE(ENTRIES); i++) {
    const struct entry_case *c = &ENTRIES[i];
    struct egress_entry e, back;
    struct error err = {0};
    char s[EGRESS_ENTRY_STR_MAX] = "";
    int r = egress_entry_parse(c->in, &e, &err);

    if (c->canon == NULL) {
      tap_ok(r < 0 && err.msg[0] != '\0', "entry `%s` is refused (%s)", c->in, err.msg);
      continue;
    }
    if (r == 0)
      egress_entry_format(&e, s);
    tap_ok(r == 0 && streq(s, c->canon), "entry `%s` -> `%s` (%s)", c->in, s, err.msg);
    tap_ok(r == 0 && egress_entry_parse(s, &back, &err) == 0 && egress_entry_equal(&e, &back),
           "entry `%s` round-trips", c->in);
  }
}

static void test_too_long(void)
{
  char buf[400];
  struct egress_entry e;
  struct error err = {0};

  memset(buf, 'a', sizeof buf - 1);
  buf[sizeof buf - 1] = '\0';
  tap_ok(egress_entry_parse(buf, &e, &err) < 0, "over-long entry refused");
}

static void test_match(void)
{
  struct egress_policy p;
  struct egress_entry e;
  struct error err = {0};
  const struct egress_entry *m[4];
  const char *in[] = {"pypi.org", "*.githubusercontent.com", "203.0.113.0/24"};

  egress_policy_init(&p);
  for (size_t i = 0; i < ARRAY_SIZE(in); i++)
    if (egress_entry_parse(in[i], &e, &err) == 0)
      egress_policy_add(&p, &e, &err);
  tap_ok(egress_policy_match_name(&p, "PYPI.org.", m, 4) == 1, "match pypi.org any case");
  tap_ok(egress_policy_match_name(&p, "evilpypi.org", m, 4) == 0, "no match evilpypi.org");
  tap_ok(egress_policy_match_name(&p, "pypi.org.evil", m, 4) == 0, "no match pypi.org.evil");
  tap_ok(egress_policy_match_name(&p, "raw.githubusercontent.com", m, 4) == 1, "wildcard sub");
  tap_ok(egress_policy_match_name(&p, "a.b.githubusercontent.com", m, 4) == 1, "wildcard deep");
  tap_ok(egress_policy_match_name(&p, "githubusercontent.com", m, 4) == 0, "wildcard not apex");
  tap_ok(egress_policy_match_name(&p, "xgithubusercontent.com", m, 4) == 0, "wildcard boundary");
  {
    uint8_t a[4] = {203, 0, 113, 7}, b[4] = {10, 1, 2, 3}, c[4] = {198, 51, 100, 20};
    uint8_t l6[16] = {[15] = 1}, m6[16] = {[10] = 0xff, [11] = 0xff, 127, 0, 0, 1};
    tap_ok(egress_policy_allows_addr(&p, a, 4), "203.0.113.7 allowed by cidr");
    tap_ok(egress_addr_is_private(b, 4) && !egress_addr_is_private(c, 4), "private v4");
    tap_ok(egress_addr_is_private(l6, 16) && egress_addr_is_private(m6, 16), "private v6, mapped");
  }
  {
    /* every IPv6 form that embeds an IPv4: private inside = private */
    static const struct {
      const char *a;
      bool priv;
    } v6[] = {
        {"::ffff:10.0.0.1", true},
        {"::ffff:203.0.113.10", false},
        {"::10.0.0.1", true},
        {"::203.0.113.10", false},
        {"64:ff9b::a00:1", true},
        {"64:ff9b::cb00:710a", false},
        {"64:ff9b::7f00:1", true},
        {"64:ff9b:1::cb00:710a", true},
        {"64:ff9b:1:ffff::1", true},
        {"2002:a00:1::1", true},
        {"2002:c0a8:101::1", true},
        {"2002:cb00:710a::1", false},
        {"2001:0:cb00:71ff:8000:63bf:f5ff:fffe", true},
        {"2001:0:cb00:71ff:8000:63bf:34ff:8ef5", false},
        {"2001:0:a00:1:8000:63bf:34ff:8ef5", true},
        {"fd00::1", true},
        {"fc12:3456::1", true},
        {"fec0::1", true},
        {"feff::1", true},
        {"ff0e::1", true},
        {"ff02::1", true},
        {"::", true},
        {"::1", true},
        {"fe80::1", true},
        {"2001:db8:203::10", false},
        {"2606:4700::1111", false},
    };
    for (size_t i = 0; i < ARRAY_SIZE(v6); i++) {
      uint8_t b6[16];
      tap_ok(inet_pton(AF_INET6, v6[i].a, b6) == 1 && egress_addr_is_private(b6, 16) == v6[i].priv,
             "%s is %s", v6[i].a, v6[i].priv ? "private" : "public");
    }
  }
  {
    /* the IPv4 inside (the resolver asks whether it is one of the host's) */
    static const struct {
      const char *a, *v4;
    } em[] = {
        {"64:ff9b::c000:206", "192.0.2.6"},
        {"2002:c000:206::1", "192.0.2.6"},
        {"::ffff:192.0.2.6", "192.0.2.6"},
        {"::192.0.2.6", "192.0.2.6"},
        {"2001:db8:203::10", NULL},
        {"64:ff9b:1::c000:206", NULL},
        {"2001:0:cb00:71ff:8000:63bf:3fff:fdf9", "192.0.2.6"},
    };
    for (size_t i = 0; i < ARRAY_SIZE(em); i++) {
      uint8_t b6[16], v4[8][4], want[4];
      size_t n = inet_pton(AF_INET6, em[i].a, b6) == 1 ? egress_addr_embedded_v4(b6, v4, 8) : 99;
      bool found = false;
      for (size_t k = 0; em[i].v4 && k < n && k < 8; k++)
        found |= inet_pton(AF_INET, em[i].v4, want) == 1 && memcmp(v4[k], want, 4) == 0;
      tap_ok(em[i].v4 ? found : n == 0, "%s carries %s (%zu)", em[i].a,
             em[i].v4 ? em[i].v4 : "none", n);
    }
  }
  tap_ok(egress_policy_remove(&p, &p.entries[0], &err) == 0 && p.n_entries == 2, "remove entry");
  tap_ok(egress_policy_remove(&p, &e, &err) == 0 && egress_policy_remove(&p, &e, &err) < 0,
         "remove absent entry fails: %s", err.msg);
  egress_policy_free(&p);
}

/* Upstream resolvers and ingress ports (the profile's entries go through
 * these; its JSON is parsed by profile/, tested in test_profile.c). */
static void test_upstream_and_ports(void)
{
  static const char *bad_up[] = {
      "999.1.1.1", "127.0.0.1:99999", "127.0.0.1:0",  "[2001:db8::1", "x",
      "",          "[::1]x",          "1.2.3.4:53:53"};
  static const char *bad_port[] = {"0",   "65536", "9-1", "http",    "80/icmp",     "/tcp",
                                   "80-", "-80",   "",    "80 /tcp", "8080/tcp/udp"};
  struct egress_upstream u;
  struct egress_port pt;
  struct error err = {0};
  char buf[32];

  tap_ok(egress_upstream_parse("192.0.2.53", &u, &err) == 0 && u.family == AF_INET && u.port == 53,
         "upstream v4, port 53");
  tap_ok(egress_upstream_parse("[2001:db8::53]:5353", &u, &err) == 0 && u.family == AF_INET6 &&
             u.port == 5353,
         "upstream [v6]:port");
  tap_ok(egress_upstream_parse("2001:db8::53", &u, &err) == 0 && u.port == 53, "upstream bare v6");
  for (size_t i = 0; i < ARRAY_SIZE(bad_up); i++) {
    error_clear(&err);
    tap_ok(egress_upstream_parse(bad_up[i], &u, &err) < 0 && strstr(err.msg, "upstream"),
           "bad upstream `%s`: %s", bad_up[i], err.msg);
  }
  tap_ok(egress_port_parse("8080/tcp", &pt, &err) == 0 && pt.proto == IPPROTO_TCP &&
             pt.port_min == 8080 && pt.port_max == 8080,
         "ingress 8080/tcp");
  tap_ok(egress_port_parse("8000-8100/udp", &pt, &err) == 0 && pt.proto == IPPROTO_UDP &&
             pt.port_min == 8000 && pt.port_max == 8100,
         "ingress range/udp");
  egress_port_format(&pt, buf);
  tap_ok(strcmp(buf, "8000-8100/udp") == 0, "ingress format %s", buf);
  tap_ok(egress_port_parse("9090", &pt, &err) == 0 && pt.proto == 0, "ingress without proto");
  for (size_t i = 0; i < ARRAY_SIZE(bad_port); i++) {
    error_clear(&err);
    tap_ok(egress_port_parse(bad_port[i], &pt, &err) < 0 &&
               str_has_prefix(err.msg, "ingress entry"),
           "bad ingress `%s`: %s", bad_port[i], err.msg);
  }
}

/* ------------------------------------------------------------- golden */

static char *data_path(const char *name)
{
  const char *src = __FILE__; /* tests/unit/test_egress.c, relative to the root */
  const char *slash = strrchr(src, '/');
  return xfmt("%.*s/../data/nft/%s", (int)(slash - src), src, name);
}

static void golden(const char *name, const struct nft_batch_buf *b)
{
  cleanup_free char *path = data_path(name);
  cleanup_free uint8_t *want = NULL;
  struct stat st;
  int fd;

  if (getenv("UPDATE_GOLDEN") != NULL) {
    FILE *f = fopen(path, "we");
    bool ok = f != NULL && fwrite(b->data, 1, b->len, f) == b->len;
    if (f != NULL)
      ok = fclose(f) == 0 && ok;
    tap_ok(ok, "golden %s written (%zu bytes)", name, b->len);
    return;
  }
  fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0 || fstat(fd, &st) < 0) {
    tap_ok(false, "golden %s: %s (UPDATE_GOLDEN=1 writes it)", path, strerror(errno));
    if (fd >= 0)
      close(fd);
    return;
  }
  want = xmalloc((size_t)st.st_size + 1);
  if (read(fd, want, (size_t)st.st_size) != st.st_size)
    st.st_size = -1;
  close(fd);
  if ((size_t)st.st_size != b->len || memcmp(want, b->data, b->len) != 0) {
    size_t i = 0;
    while (i < b->len && (off_t)i < st.st_size && want[i] == b->data[i])
      i++;
    tap_ok(false, "golden %s: %zu bytes vs %lld, first difference at %zu", name, b->len,
           (long long)st.st_size, i);
    return;
  }
  tap_ok(true, "golden %s matches (%zu bytes)", name, b->len);
}

static void test_ttl_bounds(void)
{
  uint64_t lo, hi;

  egress_ttl_bounds(false, 0, false, 0, &lo, &hi);
  tap_ok(lo == EGRESS_TTL_MIN_DEFAULT && hi == EGRESS_TTL_MAX_DEFAULT,
         "ttl: defaults keep a pin an hour at least");
  egress_ttl_bounds(false, 0, true, 2, &lo, &hi);
  tap_ok(lo == 2 && hi == 2, "ttl: a ttlMax below the default floor lowers the floor");
  egress_ttl_bounds(true, 5, false, 0, &lo, &hi);
  tap_ok(lo == 5 && hi == EGRESS_TTL_MAX_DEFAULT, "ttl: ttlMin alone");
  egress_ttl_bounds(true, 7 * 86400, false, 0, &lo, &hi);
  tap_ok(lo == 7 * 86400 && hi == 7 * 86400, "ttl: a ttlMin above the default ceiling raises it");
  egress_ttl_bounds(true, 100, true, 10, &lo, &hi);
  tap_ok(lo == 100 && hi == 10, "ttl: both given are kept as given (validation refuses them)");
}

static void test_golden(void)
{
  static const char *in[] = {"203.0.113.0/24",
                             "198.51.100.20:80/tcp",
                             "198.51.100.30:1000-2000",
                             "192.0.2.0/25",
                             "192.0.2.128/25",
                             "2001:db8::/32",
                             "[2001:db8:1::1]:443/udp",
                             "169.254.169.254:80",
                             "pypi.org",
                             "*.githubusercontent.com:443"};
  static const char *in_ports[] = {"8080/tcp", "8000-8100/udp", "9090"};
  struct egress_policy p;
  struct egress_entry e;
  struct error err = {0};
  struct nft_batch_buf b;
  struct nft_build_opts full = {.seq_base = 1, .dns_port = 53};
  struct nft_build_opts upd = {.seq_base = 1, .update = true};
  struct nft_learned l[3] = {
      {AF_INET, {203, 0, 113, 10}, 0, 0, 30000},
      {AF_INET6, {0x20, 0x01, 0x0d, 0xb8, [15] = 1}, 0, 0, 5000},
      {AF_INET, {198, 51, 100, 7}, IPPROTO_TCP, 443, 60000},
  };

  egress_policy_init(&p);
  for (size_t i = 0; i < ARRAY_SIZE(in); i++)
    if (egress_entry_parse(in[i], &e, &err) < 0 || egress_policy_add(&p, &e, &err) < 0)
      tap_ok(false, "golden policy entry %s: %s", in[i], err.msg);
  for (size_t i = 0; i < ARRAY_SIZE(in_ports); i++) {
    struct egress_port pt;
    if (egress_port_parse(in_ports[i], &pt, &err) < 0 || egress_policy_add_port(&p, &pt, &err) < 0)
      tap_ok(false, "golden ingress entry %s: %s", in_ports[i], err.msg);
  }
  if (tap_ok(nft_build_batch(&p, &full, &b, &err) == 0, "build full batch")) {
    tap_ok(b.n_msgs > 20 && b.msgs[0].seq == 2, "acked messages counted (%zu)", b.n_msgs);
    golden("full.bin", &b);
    nft_batch_buf_free(&b);
  }
  if (tap_ok(nft_build_batch(&p, &upd, &b, &err) == 0, "build update batch")) {
    golden("update.bin", &b);
    nft_batch_buf_free(&b);
  }
  p.default_allow = true;
  if (tap_ok(nft_build_batch(&p, &full, &b, &err) == 0, "build default-allow batch")) {
    golden("allow.bin", &b);
    nft_batch_buf_free(&b);
  }
  if (tap_ok(nft_build_learn(l, 3, 100, &b, &err) == 0, "build learn batch")) {
    golden("learn.bin", &b);
    nft_batch_buf_free(&b);
  }
  if (tap_ok(nft_build_table_delete(1, &b, &err) == 0, "build delete batch")) {
    golden("delete.bin", &b);
    nft_batch_buf_free(&b);
  }
  {
    /* the gateways of a route dump (one twice, a route without one, a
     * multipath route's second hop), the link address of a valid
     * neighbour entry only */
    struct nft_build_opts arpo = {.seq_base = 1, .dns_port = 53};
    static const uint8_t mac[6] = {0x82, 0xe0, 0xb6, 0x73, 0x82, 0xf9};
    static const uint8_t gw1[4] = {192, 0, 2, 1}, gw2[4] = {198, 168, 100, 1};
    static const uint8_t ll1[16] = {0xfe, 0x80, [15] = 1};
    struct nlbuf m = {0};

    nl_route(&m, 7, AF_INET, gw1, 4, 2);
    nl_route(&m, 7, AF_INET, NULL, 0, 2);
    nl_route(&m, 7, AF_INET, gw1, 4, 2);
    nl_multipath(&m, 7, gw1, gw2, 3);
    nl_neigh(&m, 7, gw1, 4, mac, NUD_REACHABLE);
    nl_neigh(&m, 7, gw2, 4, mac, NUD_FAILED);
    nl_done(&m, 7);
    tap_ok(egress_gw_nl_parse(m.b, m.len, 7, &arpo) == 1 && arpo.n_gw4 == 2 &&
               memcmp(arpo.gw4[0].ip, gw1, 4) == 0 && arpo.gw4[0].mac_known &&
               memcmp(arpo.gw4[0].mac, mac, 6) == 0 && memcmp(arpo.gw4[1].ip, gw2, 4) == 0 &&
               !arpo.gw4[1].mac_known && arpo.gw4[0].ifindex == 2 && arpo.gw4[1].ifindex == 3 &&
               !arpo.over4,
           "gateways, their devices and their valid link addresses from rtnetlink (a multipath "
           "route's second hop too)");
    m.len = 0;
    nl_route(&m, 8, AF_INET, gw2, 4, 2);
    nl_done(&m, 9);
    {
      struct nft_build_opts o2 = {0};
      tap_ok(egress_gw_nl_parse(m.b, m.len, 9, &o2) == 1 && o2.n_gw4 == 0,
             "messages of another dump's sequence are skipped");
    }
    m.len = 0;
    nl_route(&m, 7, AF_INET6, ll1, 16, 2);
    nl_route(&m, 7, AF_INET6, NULL, 0, 1);
    nl_done(&m, 7);
    tap_ok(egress_gw_nl_parse(m.b, m.len, 7, &arpo) == 1 && arpo.n_gw6 == 1 &&
               memcmp(arpo.gw6[0], ll1, 16) == 0 && arpo.gw6_ifindex[0] == 2,
           "IPv6 gateways from rtnetlink (a route's next hop; not on-link ones)");
    {
      /* nexthop objects: each one's gateway (a group's members are objects
       * of the dump), an IPv4 route via an IPv6 next hop; past
       * NFT_MAX_GW4 of a version, over4 */
      struct nft_build_opts o3 = {0};
      uint8_t a[4] = {198, 51, 100, 0}, a6[16] = {0x20, 0x01, 0x0d, 0xb8, [15] = 9};
      m.len = 0;
      nl_nexthop(&m, 5, a6, 16, 4);
      nl_via6(&m, 5, ll1, 2);
      for (int i = 0; i < NFT_MAX_GW4 + 2; i++) {
        a[3] = (uint8_t)(64 + i);
        nl_nexthop(&m, 5, a, 4, 3);
      }
      nl_nexthop(&m, 5, NULL, 0, 0);
      nl_done(&m, 5);
      tap_ok(egress_gw_nl_parse(m.b, m.len, 5, &o3) == 1 && o3.n_gw6 == 2 &&
                 memcmp(o3.gw6[0], a6, 16) == 0 && o3.gw6_ifindex[0] == 4 &&
                 memcmp(o3.gw6[1], ll1, 16) == 0 && o3.n_gw4 == NFT_MAX_GW4 && o3.over4 &&
                 !o3.over6 && o3.gw4[0].ip[3] == 64 && o3.gw4[0].ifindex == 3,
             "nexthop objects' gateways, RTA_VIA's, and over4 past %d", NFT_MAX_GW4);
      if (tap_ok(nft_build_batch(&p, &o3, &b, &err) == 0, "build a batch with over4")) {
        tap_ok(strstr(b.msgs[b.n_msgs - 1].what, "over:") == NULL &&
                   strstr(b.msgs[b.n_msgs - 1].what, "`ip6 i") != NULL,
               "over4 alone: table ip6 has no refuse-the-rest rule (%s)",
               b.msgs[b.n_msgs - 1].what);
        {
          bool arp_over = false;
          for (size_t i = 0; i < b.n_msgs; i++)
            arp_over |=
                strncmp(b.msgs[i].what, "add rule `over: counter log drop` in chain `arp", 47) == 0;
          tap_ok(arp_over, "over4: table arp refuses the rest");
        }
        nft_batch_buf_free(&b);
      }
      o3.over6 = true;
      o3.arp_only = o3.keep4 = o3.keep6 = true;
      o3.n_gw4 = o3.n_gw6 = 0;
      if (tap_ok(nft_build_batch(&p, &o3, &b, &err) == 0, "build a later over4/over6 batch")) {
        /* over6: a solicited advertisement, and a solicitation with options */
        tap_ok(b.n_msgs == 3 && strstr(b.msgs[0].what, "`over: counter log drop` in chain `arp") &&
                   strncmp(b.msgs[1].what, "add rule `over: nd-neighbor-advert", 34) == 0 &&
                   strncmp(b.msgs[2].what, "add rule `over: ns with options", 31) == 0,
               "later over4 and over6: the rules appended to each kept table (%zu messages)",
               b.n_msgs);
        nft_batch_buf_free(&b);
      }
    }
    m.len = 0;
    nl_route(&m, 7, AF_INET, gw1, 4, 2);
    nl_route(&m, 7, AF_INET, gw2, 4, 3);
    nl_neigh(&m, 7, gw1, 4, mac, NUD_STALE);
    nl_done(&m, 7);
    arpo.n_gw4 = 0;
    egress_gw_nl_parse(m.b, m.len, 7, &arpo);
    arpo.gw6_mac_known[0] = true;
    memcpy(arpo.gw6_mac[0], mac, 6);
    if (tap_ok(nft_build_batch(&p, &arpo, &b, &err) == 0, "build full batch with gateways")) {
      golden("arp.bin", &b);
      nft_batch_buf_free(&b);
    }
    /* gateways routed later: table arp agentrt kept (its pins too), the new
     * gateways only added to its sets; table ip6 agentrt, not there, made */
    arpo.arp_only = arpo.keep4 = true;
    if (tap_ok(nft_build_batch(&p, &arpo, &b, &err) == 0, "build a later gateways' batch")) {
      bool deletes = false, arp_new = false, ip6_new = false;
      size_t arp_elems = 0;
      for (size_t i = 0; i < b.n_msgs; i++) {
        deletes |= strncmp(b.msgs[i].what, "delete", 6) == 0;
        arp_new |= strstr(b.msgs[i].what, "table `arp") != NULL ||
                   strstr(b.msgs[i].what, "add set `arp") != NULL ||
                   strstr(b.msgs[i].what, "chain `arp") != NULL;
        ip6_new |= strcmp(b.msgs[i].what, "add table `ip6 agentrt`") == 0;
        arp_elems += strncmp(b.msgs[i].what, "add element to set `arp ", 24) == 0;
      }
      tap_ok(!deletes && !arp_new && ip6_new && arp_elems == 4,
             "later gateways: nothing deleted, table arp kept and given 4 elements (gw4 twice, "
             "seen and pin of the known one), table ip6 made (%zu messages, %zu elements)",
             b.n_msgs, arp_elems);
      nft_batch_buf_free(&b);
    }
  }
  /* a live deny deletes one pin: one message, to the set of its kind, the
   * key as learn wrote it */
  for (int i = 0; i < 3; i++) {
    static const char *const set[3] = {"dns4", "dns6", "dns4p"};
    if (tap_ok(nft_build_unlearn(&l[i], 1, &b, &err) == 0, "build unlearn batch %d", i)) {
      tap_ok(b.n_msgs == 1 && strstr(b.msgs[0].what, set[i]) != NULL &&
                 memmem(b.data, b.len, l[i].addr, l[i].family == AF_INET ? 4 : 16) != NULL,
             "unlearn %d: one message, set %s, the address (%zu: %s)", i, set[i], b.n_msgs,
             b.n_msgs ? b.msgs[0].what : "");
      nft_batch_buf_free(&b);
    }
  }
  l[0].timeout_ms = 0;
  tap_ok(nft_build_learn(l, 1, 1, &b, &err) < 0, "learn without timeout refused");
  l[2].port = 0;
  tap_ok(nft_build_unlearn(&l[2], 1, &b, &err) < 0, "unlearn of a protocol without a port refused");
  egress_policy_free(&p);
}

static bool batch_has(const struct nft_batch_buf *b, const char *s)
{
  return memmem(b->data, b->len, s, strlen(s)) != NULL;
}

/* Denied packets and the first packet of each allowed flow share the log
 * group, told apart by prefix; without a group neither is logged, and chain
 * `allowed` still accepts. */
static void test_flow_log(void)
{
  struct egress_policy p;
  struct egress_entry e;
  struct error err = {0};
  struct nft_batch_buf b;
  struct nft_build_opts full = {.seq_base = 1, .dns_port = 53};
  struct nft_build_opts upd = {.seq_base = 1, .update = true};

  egress_policy_init(&p);
  if (egress_entry_parse("198.51.100.20:80/tcp", &e, &err) < 0 ||
      egress_policy_add(&p, &e, &err) < 0)
    tap_ok(false, "flow policy: %s", err.msg);
  for (int allow = 0; allow < 2; allow++) {
    p.default_allow = allow;
    p.log_group = 7;
    if (nft_build_batch(&p, &full, &b, &err) == 0) {
      tap_ok(batch_has(&b, EGRESS_LOG_FLOW_PREFIX) && batch_has(&b, EGRESS_LOG_DENY_PREFIX) &&
                 batch_has(&b, "allowed"),
             "%s: flow and deny prefixes logged", allow ? "default allow" : "deny");
      nft_batch_buf_free(&b);
    }
    p.log_group = -1;
    if (nft_build_batch(&p, &full, &b, &err) == 0) {
      tap_ok(!batch_has(&b, EGRESS_LOG_FLOW_PREFIX) && !batch_has(&b, EGRESS_LOG_DENY_PREFIX) &&
                 batch_has(&b, "allowed"),
             "%s: no log group, no log, chain allowed kept", allow ? "default allow" : "deny");
      nft_batch_buf_free(&b);
    }
  }
  p.log_group = 0;
  if (tap_ok(nft_build_batch(&p, &upd, &b, &err) == 0, "update batch"))
    tap_ok(batch_has(&b, EGRESS_LOG_FLOW_PREFIX), "update refills chain allowed");
  nft_batch_buf_free(&b);
  egress_policy_free(&p);
}

static size_t batch_count_from(const struct nft_batch_buf *b, const char *at, const char *s)
{
  size_t n = 0;
  const char *end = (const char *)b->data + b->len;

  while ((at = memmem(at, (size_t)(end - at), s, strlen(s))) != NULL) {
    n++;
    at += strlen(s);
  }
  return n;
}

static size_t batch_count(const struct nft_batch_buf *b, const char *s)
{
  return batch_count_from(b, (const char *)b->data, s);
}

/* A sub-agent's slirp4netns (its group) goes to the proxy's other port,
 * where the container's secrets are not put in: two more redirects, before
 * the others, matching the socket's group; none without that port. */
static void test_proxy_child(void)
{
  struct egress_policy p;
  struct error err = {0};
  struct nft_batch_buf b;
  uint32_t gid = 0x61677273u;
  struct nft_build_opts o = {
      .seq_base = 1, .dns_port = 53, .proxy_port = 15001, .proxy_mark = 0x61677274u};
  size_t plain = 0;

  egress_policy_init(&p);
  if (tap_ok(nft_build_batch(&p, &o, &b, &err) == 0, "proxy batch")) {
    plain = batch_count(&b, "redir");
    /* the gid's four bytes, not a string (strlen ran past them: ASan) */
    tap_ok(plain > 0 && memmem(b.data, b.len, &gid, sizeof gid) == NULL,
           "proxy: redirected, no group matched");
    nft_batch_buf_free(&b);
  }
  o.proxy_child_port = 15002;
  o.proxy_child_gid = gid;
  if (tap_ok(nft_build_batch(&p, &o, &b, &err) == 0, "proxy batch with a child port")) {
    size_t n = batch_count(&b, "redir");
    const char *g = memmem(b.data, b.len, &gid, sizeof gid);
    const char *r = memmem(b.data, b.len, "redir", 5);
    tap_ok(n == plain + 2, "child port: two more redirects (%zu, %zu)", n, plain);
    /* the group's two, then the proxy's own two (443, 80): after the DNS ones */
    tap_ok(g != NULL && r != NULL && batch_count_from(&b, g, "redir") == 4,
           "child port: the group is matched before the proxy's own redirects");
    nft_batch_buf_free(&b);
  }
  egress_policy_free(&p);
}

int main(void)
{
  test_proxy_child();
  test_entries();
  test_too_long();
  test_match();
  test_upstream_and_ports();
  test_ttl_bounds();
  test_golden();
  test_flow_log();
  return tap_done();
}
