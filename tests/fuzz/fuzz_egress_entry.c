/* fuzz_egress_entry.c - libFuzzer target for egress_entry_parse.
 *
 * Invariants: no crash on any input; an accepted entry formats to text that
 * parses back to the same entry; a domain entry matches its own name.
 */
#include <stdlib.h>
#include <string.h>

#include "netfilter/egress.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char in[512], text[EGRESS_ENTRY_STR_MAX];
  struct egress_entry e, back;
  struct egress_policy p = {0};
  const struct egress_entry *m;
  struct error err;

  if (size >= sizeof in)
    return 0;
  memcpy(in, data, size);
  in[size] = '\0';
  if (egress_entry_parse(in, &e, &err) < 0)
    return 0;
  egress_entry_format(&e, text);
  if (egress_entry_parse(text, &back, &err) < 0 || !egress_entry_equal(&e, &back))
    abort();
  if (e.kind == EGRESS_DOMAIN && !e.wildcard) {
    p.entries = &e;
    p.n_entries = 1;
    if (egress_policy_match_name(&p, e.domain, &m, 1) != 1)
      abort();
  }
  return 0;
}
