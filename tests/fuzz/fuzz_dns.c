/* fuzz_dns.c - libFuzzer target for the DNS parser and builder.
 *
 * Invariants: the parser never reads out of bounds or loops; whatever it
 * accepts can be answered (the response builder accepts its names) and the
 * response parses back to the same question and answers.
 */
#include <stdlib.h>
#include <string.h>

#include "netfilter/dns.h"

static struct dns_msg m, back;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static uint8_t out[65536];
  struct error err;
  int len;

  if (dns_parse(data, size, &m, &err) < 0)
    return 0;
  len = dns_build_response(out, sizeof out, &m, DNS_RCODE_NOERROR, m.answers, m.n_answers, &err);
  if (len < 0)
    abort(); /* every parsed name must be writable */
  if (dns_parse(out, (size_t)len, &back, &err) < 0 || strcmp(back.qname, m.qname) != 0 ||
      back.n_answers != m.n_answers)
    abort();
  for (size_t i = 0; i < m.n_answers; i++)
    if (back.answers[i].type != m.answers[i].type ||
        strcasecmp(back.answers[i].name, m.answers[i].name) != 0)
      abort();
  if (m.qname[0] != '\0' && dns_build_query(out, sizeof out, 1, m.qname, m.qtype, &err) < 0)
    abort();
  return 0;
}
