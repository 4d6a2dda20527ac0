/* dns.h - a strict DNS message parser and builder (RFC 1035), for the
 * egress resolver.  Pure code, fuzzed (tests/fuzz/fuzz_dns.c).
 *
 * Only what the resolver needs: one question; A, AAAA and CNAME answers of
 * class IN (other answer types are skipped by length); the authority and
 * additional sections are not read.  Names are bounds-checked, compression
 * pointers must point strictly backwards (so they cannot loop) and labels
 * may hold only [A-Za-z0-9_-]: a label containing '.' or a NUL could make a
 * name compare equal to an allowlisted one as text.
 */
#ifndef AGENTRT_NETFILTER_DNS_H
#define AGENTRT_NETFILTER_DNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

#define DNS_NAME_BUF 256 /* text form, with the NUL: at most 253 characters */
#define DNS_MAX_ANSWERS 32
#define DNS_HEADER_LEN 12
#define DNS_UDP_MAX 512
#define DNS_UPSTREAM_EDNS_SIZE 1232

enum {
  DNS_TYPE_A = 1,
  DNS_TYPE_CNAME = 5,
  DNS_TYPE_AAAA = 28,
  DNS_TYPE_OPT = 41,
  DNS_CLASS_IN = 1,
};

enum {
  DNS_RCODE_NOERROR = 0,
  DNS_RCODE_FORMERR = 1,
  DNS_RCODE_SERVFAIL = 2,
  DNS_RCODE_NXDOMAIN = 3,
  DNS_RCODE_NOTIMP = 4,
  DNS_RCODE_REFUSED = 5,
};

#define DNS_FLAG_QR 0x8000
#define DNS_FLAG_AA 0x0400
#define DNS_FLAG_TC 0x0200
#define DNS_FLAG_RD 0x0100
#define DNS_FLAG_RA 0x0080
#define DNS_OPCODE(flags) (((flags) >> 11) & 0xf)
#define DNS_RCODE(flags) ((flags)&0xf)

struct dns_rr {
  char name[DNS_NAME_BUF]; /* owner, text, no final dot, case kept */
  uint16_t type, rclass;
  uint32_t ttl; /* values with the top bit set read as 0 (RFC 2181) */
  union {
    uint8_t addr[16];          /* A: 4 bytes, AAAA: 16 */
    char target[DNS_NAME_BUF]; /* CNAME */
  } data;
};

struct dns_msg {
  uint16_t id, flags, qdcount, ancount, nscount, arcount;
  char qname[DNS_NAME_BUF];
  uint16_t qtype, qclass;
  size_t n_answers;  /* A, AAAA, CNAME of class IN */
  bool more_answers; /* more than DNS_MAX_ANSWERS: the rest ignored */
  struct dns_rr answers[DNS_MAX_ANSWERS];
};

/* Parse a query or a response with exactly one question. */
int dns_parse(const uint8_t *buf, size_t len, struct dns_msg *ret, struct error *err);
/* The header's id, for replying FORMERR to something that did not parse;
 * -1 when shorter than a header. */
int dns_peek_id(const uint8_t *buf, size_t len);

/* A recursive query for name/qtype, with an EDNS OPT record (no options)
 * announcing DNS_UPSTREAM_EDNS_SIZE.  Returns the length or -1. */
int dns_build_query(uint8_t *buf, size_t cap, uint16_t id, const char *name, uint16_t qtype,
                    struct error *err);
/* A response to q: its id, RD copied, RA set, rcode, question repeated,
 * the answers (names compressed).  When they do not fit in max_len the
 * answers that fit are kept and TC is set.  Returns the length or -1. */
int dns_build_response(uint8_t *buf, size_t max_len, const struct dns_msg *q, int rcode,
                       const struct dns_rr *answers, size_t n, struct error *err);
/* A bare error response (FORMERR...) for an id, no question.  Length. */
int dns_build_error(uint8_t *buf, size_t cap, uint16_t id, int rcode);

#endif
