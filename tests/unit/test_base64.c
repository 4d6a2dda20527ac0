/* test_base64.c - base64 (common/base64.h) and the TLS proxy's substitution of a
 * secret inside HTTP Basic credentials (monitor/secret_store.h). */
#include <stdlib.h>
#include <string.h>

#include "common/base64.h"
#include "monitor/secret_store.h"
#include "tests/unit/tap.h"

/* RFC 4648, section 10 */
static const char *const vectors[][2] = {
    {"", ""},
    {"f", "Zg=="},
    {"fo", "Zm8="},
    {"foo", "Zm9v"},
    {"foob", "Zm9vYg=="},
    {"fooba", "Zm9vYmE="},
    {"foobar", "Zm9vYmFy"},
};

static void test_vectors(void)
{
  for (size_t i = 0; i < sizeof vectors / sizeof vectors[0]; i++) {
    char enc[32];
    unsigned char dec[32];
    size_t n = base64_encode(vectors[i][0], strlen(vectors[i][0]), enc);
    ssize_t d = base64_decode(vectors[i][1], strlen(vectors[i][1]), dec);

    tap_ok(n == strlen(vectors[i][1]) && strcmp(enc, vectors[i][1]) == 0, "encode \"%s\": %s",
           vectors[i][0], enc);
    tap_ok(d == (ssize_t)strlen(vectors[i][0]) && memcmp(dec, vectors[i][0], (size_t)d) == 0,
           "decode %s", vectors[i][1]);
  }
}

static void test_every_byte(void)
{
  unsigned char all[256], back[256];
  char enc[BASE64_ENCODED_SIZE(256)];
  bool ok = true;

  for (int i = 0; i < 256; i++)
    all[i] = (unsigned char)i;
  for (size_t len = 0; len <= 256; len++) {
    size_t n = base64_encode(all, len, enc);
    ok = ok && n + 1 <= BASE64_ENCODED_SIZE(len) && base64_decode(enc, n, back) == (ssize_t)len &&
         memcmp(all, back, len) == 0;
  }
  tap_ok(ok, "every length 0..256 of every byte value comes back, within BASE64_ENCODED_SIZE");
}

static void test_refused(void)
{
  static const char *const bad[] = {"Zg",       "Zg=",  "Z===", "Zh==", "Zm9=", "Zm=v",
                                    "Zg==Zg==", "Zm9 ", "Zm9-", "Zm9_", "====", "Zm\n9v"};
  unsigned char out[16];

  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    tap_ok(base64_decode(bad[i], strlen(bad[i]), out) < 0, "refused: \"%s\"", bad[i]);
}

static void test_basic(void)
{
  struct profile_secret def = {.name = "GH", .placeholder = "agentrt-secret-0123"};
  struct secret s = {.def = &def, .value = "ghp_REAL", .len = 8};
  char enc[128], *out;
  unsigned char dec[128];
  ssize_t n;

  /* "x-access-token:agentrt-secret-0123" */
  strcpy(enc, "Basic ");
  base64_encode("x-access-token:agentrt-secret-0123", 34, enc + 6);
  tap_ok(secret_basic_holds(enc, def.placeholder), "Basic credentials holding the placeholder");
  out = secret_basic_substitute(&s, enc);
  n = out ? base64_decode(out + 6, strlen(out + 6), dec) : -1;
  tap_ok(out != NULL && strncmp(out, "Basic ", 6) == 0 && n == 23 &&
             memcmp(dec, "x-access-token:ghp_REAL", 23) == 0,
         "the password replaced, encoded again: %s", out ? out : "(null)");
  free(out);

  /* the placeholder as the user and as the password, any scheme case, spaces */
  strcpy(enc, "bAsIc   ");
  base64_encode("agentrt-secret-0123:agentrt-secret-0123", 39, enc + 8);
  strcat(enc, " ");
  out = secret_basic_substitute(&s, enc);
  n = out ? base64_decode(out + 6, strlen(out + 6), dec) : -1;
  tap_ok(out != NULL && n == 17 && memcmp(dec, "ghp_REAL:ghp_REAL", 17) == 0,
         "both placeholders replaced");
  free(out);

  tap_ok(!secret_basic_holds("Basic dXNlcjpwYXNz", def.placeholder) &&
             secret_basic_substitute(&s, "Basic dXNlcjpwYXNz") == NULL,
         "credentials without the placeholder: left as they are");
  strcpy(enc, "Bearer ");
  base64_encode("agentrt-secret-0123", 19, enc + 7);
  tap_ok(!secret_basic_holds(enc, def.placeholder), "another scheme: not Basic credentials");
  strcpy(enc, "Basicx");
  base64_encode("agentrt-secret-0123", 19, enc + 6);
  tap_ok(!secret_basic_holds(enc, def.placeholder), "no space after the scheme: not Basic");
  tap_ok(!secret_basic_holds("Basic !!!!", def.placeholder) &&
             !secret_basic_holds("Basic ", def.placeholder) &&
             !secret_basic_holds("Basic", def.placeholder),
         "not base64, or nothing: not credentials");
}

int main(void)
{
  test_vectors();
  test_every_byte();
  test_refused();
  test_basic();
  return tap_done();
}
