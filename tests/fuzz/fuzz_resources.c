/* fuzz_resources.c - libFuzzer target for oci_resources_parse (+ round trip). */
#include <stdint.h>

#include "common/util.h"
#include "oci/config.h"
#include "tests/fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct error err = {0};
  struct oci_resources *r = NULL, *r2 = NULL;
  char *in = fuzz_copy(data, size);
  char *j1 = NULL, *j2 = NULL;
  size_t l1 = 0, l2 = 0;

  if (oci_resources_parse(in, size, "resources.json", &r, &err) < 0) {
    if (err.msg[0] == '\0' || r != NULL)
      fuzz_fail("resources", "failure without a message or with a result");
    goto out;
  }
  if (oci_resources_to_json(r, &j1, &l1, &err) < 0)
    fuzz_fail("resources to_json", err.msg);
  if (oci_resources_parse(j1, l1, "copy.json", &r2, &err) < 0)
    fuzz_fail("resources reparse", err.msg);
  if (oci_resources_to_json(r2, &j2, &l2, &err) < 0)
    fuzz_fail("resources to_json 2", err.msg);
  fuzz_same(j1, l1, j2, l2);
out:
  oci_resources_free(r);
  oci_resources_free(r2);
  free(j1);
  free(j2);
  free(in);
  return 0;
}
