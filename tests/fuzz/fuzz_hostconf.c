/* fuzz_hostconf.c - libFuzzer target for the host config parser
 * (/etc/agentrt/agentrt.conf, datadir/hostconf.c).
 *
 * Invariants: a refusal has a one-line message naming the line ("t:N: ");
 * an accepted data-dir is absolute and free of what overlayfs options cannot
 * carry; and parsing is a pure function of the text (twice, the same). */
#include <stdint.h>
#include <string.h>

#include "datadir/hostconf.h"
#include "tests/fuzz/fuzz_common.h"

static int parse(const char *in, size_t size, struct hostconf *c, struct error *err)
{
  hostconf_defaults(c);
  return hostconf_parse(in, size, "t", c, err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char *in = fuzz_copy(data, size);
  struct error e1 = {0}, e2 = {0};
  struct hostconf a, b;
  int r1 = parse(in, size, &a, &e1), r2 = parse(in, size, &b, &e2);

  if (r1 != r2 || strcmp(e1.msg, e2.msg) != 0)
    fuzz_fail("hostconf", "two parses of one text differ");
  if (r1 < 0) {
    if (e1.msg[0] == '\0' || strchr(e1.msg, '\n') != NULL || strncmp(e1.msg, "t", 1) != 0)
      fuzz_fail("hostconf", "a refusal without a one-line message naming the file");
  } else {
    if (a.data_dir != NULL && (a.data_dir[0] != '/' || strpbrk(a.data_dir, ",:\\\"\n") != NULL))
      fuzz_fail("hostconf", "accepted a data-dir overlayfs cannot carry");
    if (a.ws_max_total != b.ws_max_total || a.min_free != b.min_free ||
        a.audit_max_age != b.audit_max_age ||
        (a.data_dir && (b.data_dir == NULL || strcmp(a.data_dir, b.data_dir) != 0)))
      fuzz_fail("hostconf", "two parses give different values");
  }
  hostconf_free(&a);
  hostconf_free(&b);
  free(in);
  return 0;
}
