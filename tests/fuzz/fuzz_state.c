/* fuzz_state.c - libFuzzer target for oci_state_parse (+ round trip of the
 * private form, and the public form must parse too). */
#include <stdint.h>

#include "common/util.h"
#include "oci/state.h"
#include "tests/fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct error err = {0};
  struct oci_state *s = NULL, *s2 = NULL, *s3 = NULL;
  char *in = fuzz_copy(data, size);
  char *j1 = NULL, *j2 = NULL, *pub = NULL;
  size_t l1 = 0, l2 = 0, lp = 0;

  if (oci_state_parse(in, size, "state.json", &s, &err) < 0) {
    if (err.msg[0] == '\0' || s != NULL)
      fuzz_fail("state", "failure without a message or with a result");
    goto out;
  }
  if (oci_state_to_json(s, true, &j1, &l1, &err) < 0)
    fuzz_fail("state to_json", err.msg);
  if (oci_state_parse(j1, l1, "copy.json", &s2, &err) < 0)
    fuzz_fail("state reparse", err.msg);
  if (oci_state_to_json(s2, true, &j2, &l2, &err) < 0)
    fuzz_fail("state to_json 2", err.msg);
  fuzz_same(j1, l1, j2, l2);
  if (oci_state_to_json(s, false, &pub, &lp, &err) < 0 ||
      oci_state_parse(pub, lp, "public.json", &s3, &err) < 0)
    fuzz_fail("state public form", err.msg);
out:
  oci_state_free(s);
  oci_state_free(s2);
  oci_state_free(s3);
  free(j1);
  free(j2);
  free(pub);
  free(in);
  return 0;
}
