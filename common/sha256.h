/* sha256.h - SHA-256 (FIPS 180-4), small and dependency-free: the audit
 * trail's hash chain, the workspace's file hashes, the seccomp filter cache's
 * keys.  Not constant-time: it hashes records and files, no secrets. */
#ifndef AGENTRT_COMMON_SHA256_H
#define AGENTRT_COMMON_SHA256_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SHA256_LEN 32
#define SHA256_HEX_LEN 64

struct sha256 {
  uint32_t h[8];
  uint64_t total; /* bytes hashed so far */
  uint8_t buf[64];
  size_t n; /* bytes waiting in buf */
};

void sha256_init(struct sha256 *s);
void sha256_update(struct sha256 *s, const void *data, size_t len);
void sha256_final(struct sha256 *s, uint8_t out[SHA256_LEN]);
/* Whether the CPU's SHA extensions do the work (x86: CPUID's SHA bit). */
bool sha256_accelerated(void);
/* Tests: use them (when the CPU has them) or the portable code; returns
 * what is used from now on. */
bool sha256_set_accelerated(bool on);
/* One-shot digest as 64 lower-case hex digits and a NUL. */
void sha256_hex(const void *data, size_t len, char out[SHA256_HEX_LEN + 1]);

#endif
