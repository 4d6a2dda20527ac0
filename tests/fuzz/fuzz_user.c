/* fuzz_user.c - libFuzzer target for parse_user_spec (`exec --user`, CVE-2026-30892).
 *
 * Accepted specs must be exactly "UID" or "UID:GID" in canonical decimal
 * (leading zeros allowed) with ids below 2^32-1: the parsed ids, printed
 * back, must equal the digits of the input. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>

#include "common/util.h"
#include "container/process.h"
#include "tests/fuzz/fuzz_common.h"

/* The digits of s without leading zeros ("0" stays "0"). */
static void strip_zeros(const char *s, size_t n, char *out, size_t max)
{
  size_t i = 0, o = 0;
  while (i + 1 < n && s[i] == '0')
    i++;
  for (; i < n && o + 1 < max; i++)
    out[o++] = s[i];
  out[o] = '\0';
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct error err = {0};
  char *in = fuzz_cstr(data, size);
  uint32_t uid = 7, gid = 7;
  bool has_gid = false;
  char a[64], b[64];

  if (strlen(in) != size) /* argv strings have no NUL inside */
    goto out;
  if (parse_user_spec(in, &uid, &gid, &has_gid, &err) < 0) {
    if (err.msg[0] == '\0')
      fuzz_fail("user", "failure without a message");
    goto out;
  }
  const char *colon = strchr(in, ':');
  if ((colon != NULL) != has_gid)
    fuzz_fail("user", "has_gid does not match the input");
  if (uid == UINT32_MAX || (has_gid && gid == UINT32_MAX))
    fuzz_fail("user", "accepted the invalid id 4294967295");
  strip_zeros(in, colon ? (size_t)(colon - in) : size, a, sizeof a);
  snprintf(b, sizeof b, "%" PRIu32, uid);
  if (strcmp(a, b) != 0)
    fuzz_fail("user", "uid differs from the input's digits");
  if (has_gid) {
    strip_zeros(colon + 1, strlen(colon + 1), a, sizeof a);
    snprintf(b, sizeof b, "%" PRIu32, gid);
    if (strcmp(a, b) != 0)
      fuzz_fail("user", "gid differs from the input's digits");
  } else if (gid != 0) {
    fuzz_fail("user", "gid without a gid part is not 0");
  }
out:
  free(in);
  return 0;
}
