/* hashes.c - content hashes for the workspace manifest and rename detection
 * (common/sha256.c): collision-resistant, so that an agent cannot make a new
 * file pass for a renamed or unchanged host file. */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "common/sha256.h"
#include "workspace/workspace.h"

void ws_sha256(const void *data, size_t len, unsigned char out[32])
{
  struct sha256 s;

  sha256_init(&s);
  sha256_update(&s, data, len);
  sha256_final(&s, out);
}

int ws_sha256_fd(int fd, unsigned char out[32])
{
  struct sha256 s;
  unsigned char buf[65536];
  off_t off = 0;

  sha256_init(&s);
  for (;;) {
    ssize_t n = pread(fd, buf, sizeof buf, off);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return -1;
    if (n == 0)
      break;
    sha256_update(&s, buf, (size_t)n);
    off += n;
  }
  sha256_final(&s, out);
  return 0;
}

void ws_hex(const unsigned char *h, size_t n, char *out)
{
  static const char digits[] = "0123456789abcdef";

  for (size_t i = 0; i < n; i++) {
    out[2 * i] = digits[h[i] >> 4];
    out[2 * i + 1] = digits[h[i] & 15];
  }
  out[2 * n] = '\0';
}
