/* fuzz_config.c - libFuzzer target for oci_config_parse (+ round trip). */
#include <stdint.h>

#include "common/util.h"
#include "oci/config.h"
#include "tests/fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct error err = {0};
  struct oci_config *c = NULL, *c2 = NULL;
  char *in = fuzz_copy(data, size);
  char *j1 = NULL, *j2 = NULL, *pretty = NULL;
  size_t l1 = 0, l2 = 0;

  if (oci_config_parse(in, size, "config.json", &c, &err) < 0) {
    if (err.msg[0] == '\0' || c != NULL)
      fuzz_fail("config", "failure without a message or with a result");
    goto out;
  }
  if (oci_config_to_json(c, &j1, &l1, &err) < 0)
    fuzz_fail("config to_json", err.msg);
  if (oci_config_parse(j1, l1, "copy.json", &c2, &err) < 0)
    fuzz_fail("config reparse", err.msg);
  if (oci_config_to_json(c2, &j2, &l2, &err) < 0)
    fuzz_fail("config to_json 2", err.msg);
  fuzz_same(j1, l1, j2, l2);
  if (oci_config_to_json_pretty(c, &pretty, NULL, &err) < 0)
    fuzz_fail("config pretty", err.msg);
  /* exercise the lookups */
  for (int t = 0; t < OCI_NS_COUNT; t++)
    (void)oci_config_namespace(c, (enum oci_ns_type)t);
  if (c->n_annotations > 0 && oci_config_annotation(c, c->annotations[0].key) == NULL)
    fuzz_fail("annotation lookup", c->annotations[0].key);
out:
  oci_config_free(c);
  oci_config_free(c2);
  free(j1);
  free(j2);
  free(pretty);
  free(in);
  return 0;
}
