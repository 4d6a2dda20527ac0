/* dns.c - strict DNS message parsing and building (see dns.h). */
#include "netfilter/dns.h"

#include <string.h>

#define MAX_POINTERS 32
#define WIRE_NAME_MAX 255

struct reader {
  const uint8_t *buf;
  size_t len, pos;
};

static int rd_u16(struct reader *r, uint16_t *v)
{
  if (r->len - r->pos < 2)
    return -1;
  *v = (uint16_t)(r->buf[r->pos] << 8 | r->buf[r->pos + 1]);
  r->pos += 2;
  return 0;
}

static int rd_u32(struct reader *r, uint32_t *v)
{
  uint16_t hi, lo;

  if (rd_u16(r, &hi) < 0 || rd_u16(r, &lo) < 0)
    return -1;
  *v = (uint32_t)hi << 16 | lo;
  return 0;
}

static bool label_byte_ok(uint8_t c)
{
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_';
}

/* Read a possibly compressed name at r->pos into out (text).  r->pos ends
 * after the name as it appears at that place (after the first pointer). */
static int rd_name(struct reader *r, char out[DNS_NAME_BUF])
{
  size_t pos = r->pos, o = 0, wire = 0, end = 0;
  size_t limit = r->pos; /* pointers must point before the current label */
  int jumps = 0;

  for (;;) {
    uint8_t l;
    if (pos >= r->len)
      return -1;
    l = r->buf[pos];
    if ((l & 0xc0) == 0xc0) {
      size_t target;
      if (pos + 1 >= r->len || ++jumps > MAX_POINTERS)
        return -1;
      target = (size_t)(l & 0x3f) << 8 | r->buf[pos + 1];
      if (target >= limit || target >= pos)
        return -1; /* forward or self pointer: could loop */
      if (end == 0)
        end = pos + 2;
      limit = target;
      pos = target;
      continue;
    }
    if (l & 0xc0)
      return -1; /* 0x40 / 0x80: reserved label types */
    wire += (size_t)l + 1;
    if (wire > WIRE_NAME_MAX || pos + 1 + l > r->len)
      return -1;
    if (l == 0)
      break;
    if (o != 0)
      out[o++] = '.';
    for (size_t i = 0; i < l; i++) {
      uint8_t c = r->buf[pos + 1 + i];
      if (!label_byte_ok(c))
        return -1;
      out[o++] = (char)c;
    }
    pos += (size_t)l + 1;
  }
  out[o] = '\0';
  r->pos = end != 0 ? end : pos + 1;
  return 0;
}

static int rd_answer(struct reader *r, struct dns_msg *m, struct error *err)
{
  struct dns_rr rr;
  uint16_t rdlen;
  size_t rdstart;

  memset(&rr, 0, sizeof rr);
  if (rd_name(r, rr.name) < 0 || rd_u16(r, &rr.type) < 0 || rd_u16(r, &rr.rclass) < 0 ||
      rd_u32(r, &rr.ttl) < 0 || rd_u16(r, &rdlen) < 0 || r->len - r->pos < rdlen)
    return error_set(err, 0, "dns: truncated answer record");
  if (rr.ttl & 0x80000000u)
    rr.ttl = 0;
  rdstart = r->pos;
  r->pos += rdlen;
  if (rr.rclass != DNS_CLASS_IN)
    return 0;
  if (rr.type == DNS_TYPE_A || rr.type == DNS_TYPE_AAAA) {
    size_t alen = rr.type == DNS_TYPE_A ? 4 : 16;
    if (rdlen != alen)
      return error_set(err, 0, "dns: bad address length %u", rdlen);
    memcpy(rr.data.addr, r->buf + rdstart, alen);
  } else if (rr.type == DNS_TYPE_CNAME) {
    struct reader sub = {r->buf, rdstart + rdlen, rdstart};
    if (rd_name(&sub, rr.data.target) < 0 || sub.pos != rdstart + rdlen)
      return error_set(err, 0, "dns: bad CNAME target");
  } else {
    return 0;
  }
  if (m->n_answers == DNS_MAX_ANSWERS) {
    m->more_answers = true;
    return 0;
  }
  m->answers[m->n_answers++] = rr;
  return 0;
}

int dns_peek_id(const uint8_t *buf, size_t len)
{
  if (len < DNS_HEADER_LEN)
    return -1;
  return buf[0] << 8 | buf[1];
}

int dns_parse(const uint8_t *buf, size_t len, struct dns_msg *ret, struct error *err)
{
  struct reader r = {buf, len, 0};
  struct dns_msg *m = ret;

  memset(m, 0, offsetof(struct dns_msg, answers));
  if (rd_u16(&r, &m->id) < 0 || rd_u16(&r, &m->flags) < 0 || rd_u16(&r, &m->qdcount) < 0 ||
      rd_u16(&r, &m->ancount) < 0 || rd_u16(&r, &m->nscount) < 0 || rd_u16(&r, &m->arcount) < 0)
    return error_set(err, 0, "dns: short header");
  if (m->qdcount != 1)
    return error_set(err, 0, "dns: %u questions", m->qdcount);
  if (rd_name(&r, m->qname) < 0 || rd_u16(&r, &m->qtype) < 0 || rd_u16(&r, &m->qclass) < 0)
    return error_set(err, 0, "dns: bad question");
  for (unsigned i = 0; i < m->ancount; i++)
    if (rd_answer(&r, m, err) < 0)
      return -1;
  return 0;
}

/* ---------------------------------------------------------------- builder */

struct writer {
  uint8_t *buf;
  size_t cap, pos;
  bool full;
  /* offsets of names written in full, for compression */
  const char *names[DNS_MAX_ANSWERS + 1];
  uint16_t offs[DNS_MAX_ANSWERS + 1];
  size_t n_names;
};

static void wr_bytes(struct writer *w, const void *p, size_t n)
{
  if (w->full || w->cap - w->pos < n) {
    w->full = true;
    return;
  }
  memcpy(w->buf + w->pos, p, n);
  w->pos += n;
}

static void wr_u16(struct writer *w, uint16_t v)
{
  uint8_t b[2] = {(uint8_t)(v >> 8), (uint8_t)v};
  wr_bytes(w, b, 2);
}

static void wr_u32(struct writer *w, uint32_t v)
{
  wr_u16(w, (uint16_t)(v >> 16));
  wr_u16(w, (uint16_t)v);
}

/* Text name to wire form; whole-name compression only. */
static int wr_name(struct writer *w, const char *name)
{
  size_t start = w->pos, len = strlen(name);

  for (size_t i = 0; i < w->n_names; i++)
    if (strcasecmp(w->names[i], name) == 0) {
      wr_u16(w, (uint16_t)(0xc000 | w->offs[i]));
      return 0;
    }
  if (len > 253)
    return -1;
  for (const char *p = name; *p;) {
    size_t l = strcspn(p, ".");
    uint8_t lb = (uint8_t)l;
    if (l == 0 || l > 63)
      return -1;
    wr_bytes(w, &lb, 1);
    wr_bytes(w, p, l);
    p += l;
    if (*p == '.')
      p++;
  }
  wr_bytes(w, "", 1);
  if (w->n_names < DNS_MAX_ANSWERS + 1 && start < 0x3fff) {
    w->names[w->n_names] = name;
    w->offs[w->n_names++] = (uint16_t)start;
  }
  return 0;
}

static void wr_header(struct writer *w, uint16_t id, uint16_t flags, uint16_t qd, uint16_t an,
                      uint16_t ar)
{
  wr_u16(w, id);
  wr_u16(w, flags);
  wr_u16(w, qd);
  wr_u16(w, an);
  wr_u16(w, 0);
  wr_u16(w, ar);
}

int dns_build_query(uint8_t *buf, size_t cap, uint16_t id, const char *name, uint16_t qtype,
                    struct error *err)
{
  struct writer w = {.buf = buf, .cap = cap};

  wr_header(&w, id, DNS_FLAG_RD, 1, 0, 1);
  if (wr_name(&w, name) < 0)
    return error_set(err, 0, "dns: invalid name `%.64s`", name);
  wr_u16(&w, qtype);
  wr_u16(&w, DNS_CLASS_IN);
  /* OPT: root name, type 41, class = UDP size, ttl 0, no options */
  wr_bytes(&w, "", 1);
  wr_u16(&w, DNS_TYPE_OPT);
  wr_u16(&w, DNS_UPSTREAM_EDNS_SIZE);
  wr_u32(&w, 0);
  wr_u16(&w, 0);
  if (w.full)
    return error_set(err, 0, "dns: query does not fit");
  return (int)w.pos;
}

static void wr_rr(struct writer *w, const struct dns_rr *rr)
{
  size_t rdlen_pos;

  wr_name(w, rr->name);
  wr_u16(w, rr->type);
  wr_u16(w, DNS_CLASS_IN);
  wr_u32(w, rr->ttl);
  rdlen_pos = w->pos;
  wr_u16(w, 0);
  if (rr->type == DNS_TYPE_CNAME)
    wr_name(w, rr->data.target);
  else
    wr_bytes(w, rr->data.addr, rr->type == DNS_TYPE_A ? 4 : 16);
  if (!w->full) {
    size_t rdlen = w->pos - rdlen_pos - 2;
    w->buf[rdlen_pos] = (uint8_t)(rdlen >> 8);
    w->buf[rdlen_pos + 1] = (uint8_t)rdlen;
  }
}

int dns_build_response(uint8_t *buf, size_t max_len, const struct dns_msg *q, int rcode,
                       const struct dns_rr *answers, size_t n, struct error *err)
{
  struct writer w = {.buf = buf, .cap = max_len};
  uint16_t flags = DNS_FLAG_QR | DNS_FLAG_RA | (q->flags & DNS_FLAG_RD) | (uint16_t)(rcode & 0xf);
  size_t fitted = 0;

  if (n > DNS_MAX_ANSWERS)
    n = DNS_MAX_ANSWERS;
  wr_header(&w, q->id, flags, 1, 0, 0);
  if (wr_name(&w, q->qname) < 0)
    return error_set(err, 0, "dns: invalid name `%.64s`", q->qname);
  wr_u16(&w, q->qtype);
  wr_u16(&w, q->qclass);
  if (w.full)
    return error_set(err, 0, "dns: response does not fit");
  for (; fitted < n; fitted++) {
    struct writer save = w;
    wr_rr(&w, &answers[fitted]);
    if (w.full) {
      w = save;
      buf[2] |= DNS_FLAG_TC >> 8;
      break;
    }
  }
  buf[6] = (uint8_t)(fitted >> 8);
  buf[7] = (uint8_t)fitted;
  return (int)w.pos;
}

int dns_build_error(uint8_t *buf, size_t cap, uint16_t id, int rcode)
{
  struct writer w = {.buf = buf, .cap = cap};

  wr_header(&w, id, (uint16_t)(DNS_FLAG_QR | DNS_FLAG_RA | (rcode & 0xf)), 0, 0, 0);
  return w.full ? -1 : (int)w.pos;
}
