/* fuzz_process.c - libFuzzer target for oci_process_parse (+ round trip). */
#include <stdint.h>

#include "common/util.h"
#include "oci/config.h"
#include "tests/fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct error err = {0};
  struct oci_process *p = NULL, *p2 = NULL;
  char *in = fuzz_copy(data, size);
  char *j1 = NULL, *j2 = NULL;
  size_t l1 = 0, l2 = 0;

  if (oci_process_parse(in, size, "process.json", &p, &err) < 0) {
    if (err.msg[0] == '\0' || p != NULL)
      fuzz_fail("process", "failure without a message or with a result");
    goto out;
  }
  if (oci_process_to_json(p, &j1, &l1, &err) < 0)
    fuzz_fail("process to_json", err.msg);
  if (oci_process_parse(j1, l1, "copy.json", &p2, &err) < 0)
    fuzz_fail("process reparse", err.msg);
  if (oci_process_to_json(p2, &j2, &l2, &err) < 0)
    fuzz_fail("process to_json 2", err.msg);
  fuzz_same(j1, l1, j2, l2);
out:
  oci_process_free(p);
  oci_process_free(p2);
  free(j1);
  free(j2);
  free(in);
  return 0;
}
