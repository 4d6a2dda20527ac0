/* fuzz_subproto.c - libFuzzer target for the sub-agent API's pure parsers
 * (common/subproto.c): a request's words and the narrowing rule for egress
 * entries, what the monitor applies to every request from inside.
 *
 * Invariants: no crash on any input; a signal number accepted is its decimal text; accepted words
 * joined with NULs are the input again; an entry covers itself; the rule gives the same answer on
 * the canonical text of both entries.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/egress_grammar.h"
#include "common/subproto.h"
#include "common/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void words(const uint8_t *data, size_t size)
{
  char **w = NULL;
  size_t off = 0;

  if (subproto_split_words((const char *)data, size, &w) < 0)
    return;
  for (size_t i = 0; w[i]; i++) {
    size_t n = strlen(w[i]) + 1;
    if (off + n > size || memcmp(data + off, w[i], n) != 0)
      abort();
    off += n;
  }
  if (off != size)
    abort();
  strv_free(w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char in[600], ct[EGRESS_ENTRY_STR_MAX], pt[EGRESS_ENTRY_STR_MAX];
  char *nl, *parent[2] = {NULL, NULL};
  struct egress_entry c, p;
  struct error err;
  bool cov;

  words(data, size);
  {
    /* a signal accepted is exactly its number written in decimal */
    int sig = subproto_parse_signal((const char *)data, size);
    char num[8];
    if (sig != -1 && (sig < 1 || sig > 64 || (size_t)snprintf(num, sizeof num, "%d", sig) != size ||
                      memcmp(num, data, size) != 0))
      abort();
  }
  if (size >= sizeof in)
    return 0;
  memcpy(in, data, size);
  in[size] = '\0';
  nl = strchr(in, '\n');
  if (nl == NULL)
    return 0;
  *nl = '\0';
  parent[0] = nl + 1;
  cov = subproto_allow_covered(in, parent);
  if (egress_entry_parse(in, &c, &err) < 0) {
    if (cov)
      abort(); /* what does not parse is never covered */
    return 0;
  }
  parent[0] = in;
  if (!subproto_allow_covered(in, parent))
    abort();
  if (egress_entry_parse(nl + 1, &p, &err) < 0)
    return 0;
  egress_entry_format(&c, ct);
  egress_entry_format(&p, pt);
  parent[0] = pt;
  if (subproto_allow_covered(ct, parent) != cov)
    abort();
  return 0;
}
