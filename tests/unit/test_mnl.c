/* test_mnl.c - the libmnl functions agentrt carries (netfilter/mnl.c):
 * building, walking and validating netlink messages and attributes, the
 * callback runner's error paths, batches, the _check variants, a real
 * NETLINK_ROUTE dump, and random bytes walked under ASan. */
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/rtnetlink.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit/tap.h"

static union {
  char buf[8192];
  struct nlmsghdr align;
} u;

static void test_build(void)
{
  struct nlmsghdr *nlh;
  struct nlattr *nest;
  char *extra;
  const struct nlattr *a;

  memset(u.buf, 0xaa, sizeof u.buf);
  nlh = mnl_nlmsg_put_header(u.buf);
  tap_ok(nlh->nlmsg_len == 16 && nlh->nlmsg_type == 0 && nlh->nlmsg_seq == 0,
         "put_header: 16 bytes, zeroed");
  extra = mnl_nlmsg_put_extra_header(nlh, 3);
  tap_ok(nlh->nlmsg_len == 20 && extra == u.buf + 16 && extra[0] == 0 && extra[3] == 0,
         "put_extra_header: 3 bytes take 4, zeroed");
  mnl_attr_put_u32(nlh, 7, 0x01020304);
  tap_ok(nlh->nlmsg_len == 28, "put_u32: 8 bytes");
  mnl_attr_put_strz(nlh, 8, "ab");
  tap_ok(nlh->nlmsg_len == 36, "put_strz \"ab\": header + 3 bytes, padded to 8");
  a = (const struct nlattr *)(u.buf + 28);
  tap_ok(a->nla_len == 7 && a->nla_type == 8 && ((const char *)a)[7] == 0,
         "put_strz: nla_len 7, the padding byte zeroed");
  mnl_attr_put_str(nlh, 9, "abcde");
  tap_ok(nlh->nlmsg_len == 48 && ((const char *)u.buf)[36 + 9] == 0 &&
             ((const char *)u.buf)[36 + 11] == 0,
         "put_str \"abcde\": 9 bytes, 3 of padding zeroed");
  nest = mnl_attr_nest_start(nlh, 10);
  mnl_attr_put_u8(nlh, 1, 5);
  mnl_attr_put_u64(nlh, 2, 0x1122334455667788ULL);
  mnl_attr_nest_end(nlh, nest);
  tap_ok(nest->nla_len == 4 + 8 + 12 && (nest->nla_type & NLA_F_NESTED) &&
             mnl_attr_get_type(nest) == 10,
         "nest: length covers its two attributes, NLA_F_NESTED set, type read without it");
  tap_ok(nlh->nlmsg_len == 48 + 24, "nest: message grew by the nest");
  nest = mnl_attr_nest_start(nlh, 11);
  mnl_attr_put_u16(nlh, 1, 9);
  mnl_attr_nest_cancel(nlh, nest);
  tap_ok(nlh->nlmsg_len == 72, "nest_cancel: the message is back to its length before the nest");
  tap_ok(mnl_nlmsg_get_payload_len(nlh) == 56 && mnl_nlmsg_size(4) == 20,
         "payload_len and nlmsg_size");
}

struct seen {
  int n;
  uint16_t types[16];
  int stop_at;
};

static int collect(const struct nlattr *a, void *data)
{
  struct seen *s = data;

  if (s->n < 16)
    s->types[s->n] = mnl_attr_get_type(a);
  s->n++;
  if (s->stop_at && s->n == s->stop_at)
    return MNL_CB_STOP;
  return MNL_CB_OK;
}

static int fail_cb(const struct nlattr *a, void *data)
{
  (void)a;
  (void)data;
  return MNL_CB_ERROR;
}

static void test_parse(void)
{
  struct nlmsghdr *nlh;
  struct seen s = {0};
  struct nlattr *nest, *last;

  memset(u.buf, 0, sizeof u.buf);
  nlh = mnl_nlmsg_put_header(u.buf);
  mnl_nlmsg_put_extra_header(nlh, 4);
  mnl_attr_put_u32(nlh, 1, 1);
  mnl_attr_put_u32(nlh, 2, 2);
  nest = mnl_attr_nest_start(nlh, 3);
  mnl_attr_put_u8(nlh, 4, 4);
  mnl_attr_put_u8(nlh, 5, 5);
  mnl_attr_nest_end(nlh, nest);
  tap_ok(mnl_attr_parse(nlh, 4, collect, &s) == MNL_CB_OK && s.n == 3 && s.types[0] == 1 &&
             s.types[2] == 3,
         "parse: three top-level attributes after the extra header");
  s = (struct seen){0};
  tap_ok(mnl_attr_parse_nested(nest, collect, &s) == MNL_CB_OK && s.n == 2 && s.types[1] == 5,
         "parse_nested: the two inside");
  s = (struct seen){.stop_at = 2};
  tap_ok(mnl_attr_parse(nlh, 4, collect, &s) == MNL_CB_STOP && s.n == 2,
         "parse: a callback's STOP ends the walk");
  tap_ok(mnl_attr_parse(nlh, 4, fail_cb, NULL) == MNL_CB_ERROR, "parse: ERROR is returned");

  /* the last attribute claims more than the message holds */
  last = mnl_nlmsg_get_payload_tail(nlh);
  mnl_attr_put_u32(nlh, 6, 6);
  last->nla_len = 200;
  s = (struct seen){0};
  mnl_attr_parse(nlh, 4, collect, &s);
  tap_ok(s.n == 3, "parse: an attribute longer than the rest of the message is not delivered");
  last->nla_len = 3;
  s = (struct seen){0};
  mnl_attr_parse(nlh, 4, collect, &s);
  tap_ok(s.n == 3, "parse: an attribute shorter than its own header ends the walk");
  last->nla_len = 0;
  s = (struct seen){0};
  mnl_attr_parse(nlh, 4, collect, &s);
  tap_ok(s.n == 3, "parse: a zero-length attribute ends the walk (no endless loop)");

  s = (struct seen){0};
  tap_ok(mnl_attr_parse(nlh, 4096, collect, &s) == MNL_CB_OK && s.n == 0,
         "parse: an offset past the end of the message walks nothing");
  nest->nla_len = 2;
  s = (struct seen){0};
  tap_ok(mnl_attr_parse_nested(nest, collect, &s) == MNL_CB_OK && s.n == 0,
         "parse_nested: a nest shorter than its header walks nothing");
}

static struct nlattr *attr_of(uint16_t type, const void *data, uint16_t len)
{
  static union {
    char b[64];
    struct nlattr a;
  } x;

  memset(&x, 0, sizeof x);
  x.a.nla_type = type;
  x.a.nla_len = (uint16_t)(MNL_ATTR_HDRLEN + len);
  memcpy(x.b + MNL_ATTR_HDRLEN, data, len);
  return &x.a;
}

static bool refused(int r, int e)
{
  return r == -1 && errno == e;
}

static void test_validate(void)
{
  uint32_t v = 7;

  tap_ok(mnl_attr_validate(attr_of(1, &v, 4), MNL_TYPE_U32) == 0, "validate: u32 of 4 bytes");
  tap_ok(refused(mnl_attr_validate(attr_of(1, &v, 3), MNL_TYPE_U32), ERANGE),
         "validate: u32 of 3 bytes is ERANGE");
  tap_ok(refused(mnl_attr_validate(attr_of(1, "12345", 5), MNL_TYPE_U32), ERANGE),
         "validate: u32 of 5 bytes is ERANGE");
  tap_ok(refused(mnl_attr_validate(attr_of(1, "abc", 3), MNL_TYPE_NUL_STRING), EINVAL),
         "validate: a NUL_STRING without its NUL is EINVAL");
  tap_ok(mnl_attr_validate(attr_of(1, "abc", 4), MNL_TYPE_NUL_STRING) == 0,
         "validate: a NUL_STRING with it");
  tap_ok(refused(mnl_attr_validate(attr_of(1, "", 0), MNL_TYPE_NUL_STRING), ERANGE),
         "validate: an empty NUL_STRING is ERANGE");
  tap_ok(refused(mnl_attr_validate(attr_of(1, "", 0), MNL_TYPE_STRING), ERANGE),
         "validate: an empty STRING is ERANGE");
  tap_ok(refused(mnl_attr_validate(attr_of(1, "x", 1), MNL_TYPE_FLAG), ERANGE),
         "validate: a FLAG with a payload is ERANGE");
  tap_ok(mnl_attr_validate(attr_of(1, "", 0), MNL_TYPE_FLAG) == 0, "validate: an empty FLAG");
  tap_ok(refused(mnl_attr_validate(attr_of(1, "xy", 2), MNL_TYPE_NESTED), ERANGE),
         "validate: a NESTED of 2 bytes is ERANGE");
  tap_ok(refused(mnl_attr_validate(attr_of(1, "", 0), MNL_TYPE_MAX), EINVAL),
         "validate: an unknown type is EINVAL");
  tap_ok(refused(mnl_attr_validate((struct nlattr *)&(struct nlattr){.nla_len = 2, .nla_type = 1},
                                   MNL_TYPE_BINARY),
                 ERANGE),
         "validate: an attribute shorter than its header is ERANGE, not a huge payload");
  tap_ok(refused(mnl_attr_validate2(attr_of(1, "abcdef", 6), MNL_TYPE_BINARY, 4), ERANGE) &&
             mnl_attr_validate2(attr_of(1, "abcd", 4), MNL_TYPE_BINARY, 4) == 0,
         "validate2: the given length");
  tap_ok(mnl_attr_type_valid(attr_of(5, "", 0), 5) == 1 &&
             refused(mnl_attr_type_valid(attr_of(6, "", 0), 5), EOPNOTSUPP),
         "type_valid: above max is EOPNOTSUPP");
  tap_ok(mnl_attr_get_u32(attr_of(1, &v, 4)) == 7, "get_u32");
}

static int data_cb(const struct nlmsghdr *nlh, void *data)
{
  (*(int *)data)++;
  return nlh->nlmsg_type == 0x99 ? MNL_CB_STOP : MNL_CB_OK;
}

/* Put a message of TYPE at P (payload of LEN zeroed bytes); returns the next slot. */
static char *msg_at(char *p, uint16_t type, uint32_t seq, uint32_t pid, size_t len)
{
  struct nlmsghdr *nlh = mnl_nlmsg_put_header(p);

  nlh->nlmsg_type = type;
  nlh->nlmsg_seq = seq;
  nlh->nlmsg_pid = pid;
  memset(p + nlh->nlmsg_len, 0, len);
  nlh->nlmsg_len += (uint32_t)len;
  return p + MNL_ALIGN(nlh->nlmsg_len);
}

static char *err_at(char *p, int error, uint32_t seq)
{
  struct nlmsghdr *nlh = mnl_nlmsg_put_header(p);
  struct nlmsgerr *e = mnl_nlmsg_put_extra_header(nlh, sizeof *e);

  nlh->nlmsg_type = NLMSG_ERROR;
  nlh->nlmsg_seq = seq;
  e->error = error;
  return p + nlh->nlmsg_len;
}

static void test_cb_run(void)
{
  char *p, *end;
  int n = 0;

  memset(u.buf, 0, sizeof u.buf);
  p = msg_at(u.buf, 0x20, 5, 0, 4);
  p = msg_at(p, 0x21, 5, 0, 0);
  end = msg_at(p, NLMSG_DONE, 5, 0, 4);
  tap_ok(mnl_cb_run(u.buf, (size_t)(end - u.buf), 5, 0, data_cb, &n) == MNL_CB_STOP && n == 2,
         "cb_run: two data messages, then DONE stops");
  n = 0;
  tap_ok(refused(mnl_cb_run(u.buf, (size_t)(end - u.buf), 6, 0, data_cb, &n), EPROTO) && n == 0,
         "cb_run: another sequence number is EPROTO");
  ((struct nlmsghdr *)u.buf)->nlmsg_pid = 77;
  tap_ok(refused(mnl_cb_run(u.buf, (size_t)(end - u.buf), 5, 78, data_cb, &n), ESRCH),
         "cb_run: another port id is ESRCH");
  ((struct nlmsghdr *)u.buf)->nlmsg_pid = 0;
  ((struct nlmsghdr *)u.buf)->nlmsg_flags = NLM_F_DUMP_INTR;
  tap_ok(refused(mnl_cb_run(u.buf, (size_t)(end - u.buf), 5, 0, data_cb, &n), EINTR),
         "cb_run: an interrupted dump is EINTR");

  end = err_at(u.buf, 0, 9);
  tap_ok(mnl_cb_run(u.buf, (size_t)(end - u.buf), 9, 0, NULL, NULL) == MNL_CB_STOP,
         "cb_run: an ack (error 0) stops without error");
  end = err_at(u.buf, -EPERM, 9);
  tap_ok(refused(mnl_cb_run(u.buf, (size_t)(end - u.buf), 9, 0, NULL, NULL), EPERM),
         "cb_run: error -EPERM is -1 with errno EPERM");
  end = err_at(u.buf, EEXIST, 9);
  tap_ok(refused(mnl_cb_run(u.buf, (size_t)(end - u.buf), 9, 0, NULL, NULL), EEXIST),
         "cb_run: a positive error is taken as the errno too");
  end = msg_at(u.buf, NLMSG_ERROR, 9, 0, 4);
  tap_ok(refused(mnl_cb_run(u.buf, (size_t)(end - u.buf), 9, 0, NULL, NULL), EBADMSG),
         "cb_run: an error message too short for struct nlmsgerr is EBADMSG");

  n = 0;
  end = msg_at(u.buf, 0x20, 0, 0, 0);
  ((struct nlmsghdr *)u.buf)->nlmsg_len = 0x80000010u;
  tap_ok(mnl_cb_run(u.buf, (size_t)(end - u.buf), 0, 0, data_cb, &n) == MNL_CB_OK && n == 0,
         "cb_run: a length of 2^31 and more is not a negative length (nothing delivered)");
  ((struct nlmsghdr *)u.buf)->nlmsg_len = 8;
  tap_ok(mnl_cb_run(u.buf, (size_t)(end - u.buf), 0, 0, data_cb, &n) == MNL_CB_OK && n == 0,
         "cb_run: a length under the header's ends the walk");
  ((struct nlmsghdr *)u.buf)->nlmsg_len = 16;
  tap_ok(mnl_cb_run(u.buf, 10, 0, 0, data_cb, &n) == MNL_CB_OK && n == 0,
         "cb_run: fewer bytes than a header walk nothing");
  p = msg_at(u.buf, NLMSG_NOOP, 0, 0, 0);
  p = msg_at(p, NLMSG_OVERRUN, 0, 0, 0);
  p = msg_at(p, 7, 0, 0, 0); /* reserved control type */
  end = msg_at(p, 0x99, 0, 0, 0);
  n = 0;
  tap_ok(mnl_cb_run(u.buf, (size_t)(end - u.buf), 0, 0, data_cb, &n) == MNL_CB_STOP && n == 1,
         "cb_run: NOOP, OVERRUN and reserved types are skipped, the data callback's STOP returned");
}

static void test_batch(void)
{
  struct mnl_nlmsg_batch *b = mnl_nlmsg_batch_start(u.buf, 64);
  int i;

  memset(u.buf, 0, sizeof u.buf);
  tap_ok(b != NULL && mnl_nlmsg_batch_is_empty(b) && mnl_nlmsg_batch_head(b) == u.buf,
         "batch: starts empty at the buffer");
  for (i = 0; i < 3; i++) {
    msg_at(mnl_nlmsg_batch_current(b), (uint16_t)(0x20 + i), 0, 0, 8);
    if (!mnl_nlmsg_batch_next(b))
      break;
  }
  tap_ok(i == 2 && mnl_nlmsg_batch_size(b) == 48,
         "batch: the third 24-byte message would pass 64 bytes and is refused");
  mnl_nlmsg_batch_reset(b);
  tap_ok(mnl_nlmsg_batch_size(b) == 24 && ((struct nlmsghdr *)u.buf)->nlmsg_type == 0x22,
         "batch: reset after an overflow starts the next batch with the refused message");
  mnl_nlmsg_batch_reset(b);
  tap_ok(mnl_nlmsg_batch_is_empty(b) && mnl_nlmsg_batch_current(b) == u.buf,
         "batch: reset without an overflow empties it");
  mnl_nlmsg_batch_stop(b);
}

static void test_check(void)
{
  struct nlmsghdr *nlh = mnl_nlmsg_put_header(u.buf);

  tap_ok(mnl_attr_put_u32_check(nlh, 24, 1, 5) && nlh->nlmsg_len == 24,
         "put_u32_check: fits exactly");
  tap_ok(!mnl_attr_put_u8_check(nlh, 24, 2, 5) && nlh->nlmsg_len == 24,
         "put_u8_check: refused when full, the message unchanged");
  tap_ok(!mnl_attr_put_strz_check(nlh, 30, 3, "abc") && nlh->nlmsg_len == 24,
         "put_strz_check: 8 bytes do not fit in 6");
  tap_ok(!mnl_attr_put_check(nlh, 1 << 20, 3, 70000, u.buf) && nlh->nlmsg_len == 24,
         "put_check: a payload over 16 bits of length is refused");
  tap_ok(mnl_attr_nest_start_check(nlh, 26, 4) == NULL &&
             mnl_attr_nest_start_check(nlh, 28, 4) != NULL && nlh->nlmsg_len == 28,
         "nest_start_check");
}

static int link_cb(const struct nlmsghdr *nlh, void *data)
{
  if (nlh->nlmsg_type == RTM_NEWLINK)
    (*(int *)data)++;
  return MNL_CB_OK;
}

/* A real dump: RTM_GETLINK over NETLINK_ROUTE (the loopback at least). */
static void test_socket(void)
{
  struct mnl_socket *nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC), *nl2;
  struct nlmsghdr *nlh;
  struct rtgenmsg *g;
  unsigned seq = 4242;
  int links = 0, r = MNL_CB_OK, rounds = 0;
  ssize_t n;
  char small[16];

  if (!tap_ok(nl != NULL && mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) == 0,
              "socket: open and bind NETLINK_ROUTE"))
    return;
  tap_ok(mnl_socket_get_portid(nl) != 0, "socket: the kernel gave a port id");
  nlh = mnl_nlmsg_put_header(u.buf);
  nlh->nlmsg_type = RTM_GETLINK;
  nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  nlh->nlmsg_seq = seq;
  g = mnl_nlmsg_put_extra_header(nlh, sizeof *g);
  g->rtgen_family = AF_UNSPEC;
  tap_ok(mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) == (ssize_t)nlh->nlmsg_len, "socket: sendto");
  while (r > MNL_CB_STOP && rounds++ < 100) {
    n = mnl_socket_recvfrom(nl, u.buf, sizeof u.buf);
    if (n <= 0)
      break;
    r = mnl_cb_run(u.buf, (size_t)n, seq, mnl_socket_get_portid(nl), link_cb, &links);
  }
  tap_ok(r == MNL_CB_STOP && links >= 1, "socket: the dump ends with DONE, %d link(s)", links);

  /* a reply larger than the buffer is ENOSPC, not a silently cut message */
  nlh = mnl_nlmsg_put_header(u.buf);
  nlh->nlmsg_type = RTM_GETLINK;
  nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  nlh->nlmsg_seq = ++seq;
  g = mnl_nlmsg_put_extra_header(nlh, sizeof *g);
  mnl_socket_sendto(nl, nlh, nlh->nlmsg_len);
  tap_ok(refused((int)mnl_socket_recvfrom(nl, small, sizeof small), ENOSPC),
         "socket: a truncated receive is ENOSPC");

  nl2 = mnl_socket_fdopen(dup(mnl_socket_get_fd(nl)));
  tap_ok(nl2 != NULL && mnl_socket_get_portid(nl2) == mnl_socket_get_portid(nl),
         "socket: fdopen reads the bound address back");
  if (nl2 != NULL)
    tap_ok(mnl_socket_close(nl2) == 0, "socket: close the fdopen'd one");
  tap_ok(mnl_socket_close(nl) == 0, "socket: close");
  tap_ok(mnl_socket_fdopen(-1) == NULL, "socket: fdopen of a bad fd fails");
}

static int any_attr(const struct nlattr *a, void *data)
{
  /* read what a caller would: the type and the whole payload */
  const unsigned char *p = mnl_attr_get_payload(a);
  unsigned sum = mnl_attr_get_type(a);

  for (uint16_t i = 0; i < mnl_attr_get_payload_len(a); i++)
    sum += p[i];
  if (mnl_attr_get_type(a) & 1)
    mnl_attr_parse_nested(a, any_attr, data);
  *(unsigned *)data += sum;
  return MNL_CB_OK;
}

static int any_msg(const struct nlmsghdr *nlh, void *data)
{
  mnl_attr_parse(nlh, (unsigned)(nlh->nlmsg_type & 31), any_attr, data);
  return MNL_CB_OK;
}

/* Random bytes, with lengths biased to the edges, walked in a buffer sized
 * exactly: an out-of-bounds read shows under ASan (CI's sanitizer pass). */
static void test_random(void)
{
  unsigned seed = 12345, sum = 0;
  int i;

  for (i = 0; i < 20000; i++) {
    size_t len = (size_t)(rand_r(&seed) % 96);
    unsigned char *b = malloc(len ? len : 1);

    for (size_t j = 0; j < len; j++)
      b[j] = (unsigned char)rand_r(&seed);
    for (size_t j = 0; j + 4 <= len; j += 4) /* small lengths, so that walks go deep */
      if (rand_r(&seed) % 2) {
        uint16_t l = (uint16_t)(rand_r(&seed) % 24);
        memcpy(b + j, &l, 2);
      }
    if (len >= 16 && rand_r(&seed) % 2) {
      uint32_t l = (uint32_t)(16 + rand_r(&seed) % (len - 15));
      uint16_t t = (uint16_t)(NLMSG_MIN_TYPE + rand_r(&seed) % 8);
      memcpy(b, &l, 4);
      memcpy(b + 4, &t, 2);
      memset(b + 8, 0, 8);
    }
    mnl_cb_run(b, len, 0, 0, any_msg, &sum);
    free(b);
  }
  tap_ok(i == 20000, "random: 20000 buffers of up to 95 bytes walked (checksum %u)", sum);
}

int main(void)
{
  test_build();
  test_parse();
  test_validate();
  test_cb_run();
  test_batch();
  test_check();
  test_socket();
  test_random();
  return tap_done();
}
