/* fuzz_mountopts.c - libFuzzer target for mount_options_parse (config mount options).
 *
 * The input is split at commas and NUL bytes into an options vector (as a
 * config's "options" array would hold).  Whatever parses must also go
 * through mount_opts_attr / mount_opts_sb_words without trouble; a failure
 * must carry a message. */
#include <stdint.h>

#include "common/util.h"
#include "container/mounts.h"
#include "tests/fuzz/fuzz_common.h"

#define MAX_WORDS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct error err = {0};
  struct mount_opts o;
  char *in = fuzz_cstr(data, size);
  char *words[MAX_WORDS + 1];
  size_t n = 0, start = 0;
  const char *sb[32];
  uint64_t set = 0, clr = 0;

  for (size_t i = 0; i <= size && n < MAX_WORDS; i++) {
    if (i == size || in[i] == ',' || in[i] == '\0') {
      in[i] = '\0';
      words[n++] = in + start;
      start = i + 1;
    }
  }
  words[n] = NULL;
  memset(&o, 0, sizeof o);
  if (mount_options_parse(size ? words : NULL, &o, &err) < 0) {
    if (err.msg[0] == '\0')
      fuzz_fail("mount options", "failure without a message");
  } else {
    mount_opts_attr(&o, &set, &clr);
    /* The atime mode is cleared as a whole (MOUNT_ATTR__ATIME) and set anew:
     * that is how mount_setattr() changes it.  Any other overlap is a bug. */
    if (set & clr & ~(uint64_t)MOUNT_ATTR__ATIME)
      fuzz_fail("mount options", "an attribute is both set and cleared");
    if (mount_opts_sb_words(&o, sb, 32) > 32)
      fuzz_fail("mount options", "more superblock words than room");
  }
  mount_opts_free(&o);
  free(in);
  return 0;
}
