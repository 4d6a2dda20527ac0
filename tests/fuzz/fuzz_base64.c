/* fuzz_base64.c - libFuzzer target for base64_decode (common/base64.h) and
 * the proxy's Basic credentials substitution (monitor/secret_store.h).
 *
 * What decodes re-encodes to the same text (only canonical base64 is taken);
 * a header value given to secret_basic_substitute either comes back NULL or
 * as "Basic " + base64 whose decoding holds the value, never the placeholder. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/base64.h"
#include "monitor/secret_store.h"
#include "tests/fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char *in = fuzz_cstr(data, size);
  size_t n = strlen(in);
  unsigned char *dec = malloc(n / 4 * 3 + 1);
  ssize_t d = base64_decode(in, n, dec);
  struct profile_secret def = {.name = "S", .placeholder = "agentrt-secret-ph"};
  struct secret s = {.def = &def, .value = "VALUE", .len = 5};
  char *out;

  if (dec == NULL)
    abort();
  if (d >= 0) {
    char *enc = malloc(BASE64_ENCODED_SIZE((size_t)d));
    if (enc == NULL)
      abort();
    if (base64_encode(dec, (size_t)d, enc) != n || memcmp(enc, in, n) != 0)
      fuzz_fail("base64", "a decoded text does not encode back to itself");
    free(enc);
  }
  out = secret_basic_substitute(&s, in);
  if (out != NULL) {
    size_t on = strlen(out);
    unsigned char *back = malloc(on / 4 * 3 + 1);
    ssize_t bn;
    if (back == NULL)
      abort();
    if (on < 6 || memcmp(out, "Basic ", 6) != 0)
      fuzz_fail("basic", "substituted credentials without the scheme");
    bn = base64_decode(out + 6, on - 6, back);
    if (bn < 0 || memmem(back, (size_t)bn, "VALUE", 5) == NULL ||
        memmem(back, (size_t)bn, def.placeholder, strlen(def.placeholder)) != NULL)
      fuzz_fail("basic", "the value is not in, or the placeholder still in, the credentials");
    if (!secret_basic_holds(in, def.placeholder))
      fuzz_fail("basic", "substituted credentials that do not hold the placeholder");
    free(back);
    free(out);
  }
  free(dec);
  free(in);
  return 0;
}
