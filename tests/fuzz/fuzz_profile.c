/* fuzz_profile.c - libFuzzer target for profile_parse (profile files).
 *
 * Whatever parses must render (profile_to_json), the rendering must parse
 * again and render byte-identically; a failure must carry a message. */
#include <stdint.h>

#include "common/util.h"
#include "profile/profile.h"
#include "tests/fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct error err = {0};
  struct agent_profile *p = NULL, *p2 = NULL;
  char *in = fuzz_copy(data, size);
  char *j1 = NULL, *j2 = NULL;
  size_t l1 = 0, l2 = 0;

  if (profile_parse(in, size, "profile.json", &p, &err) < 0) {
    if (err.msg[0] == '\0' || p != NULL)
      fuzz_fail("profile", "failure without a message or with a result");
    goto out;
  }
  if (profile_to_json(p, &j1, &l1, &err) < 0)
    fuzz_fail("profile to_json", err.msg);
  if (profile_parse(j1, l1, "shown.json", &p2, &err) < 0)
    fuzz_fail("profile reparse", err.msg);
  if (profile_to_json(p2, &j2, &l2, &err) < 0)
    fuzz_fail("profile to_json 2", err.msg);
  fuzz_same(j1, l1, j2, l2);
out:
  profile_free(p);
  profile_free(p2);
  free(j1);
  free(j2);
  free(in);
  return 0;
}
