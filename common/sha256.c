/* sha256.c - SHA-256 as specified in FIPS 180-4 section 6.2 (see sha256.h).
 *
 * Two compression functions: the portable one below, and on x86 CPUs with
 * the SHA extensions (Intel since Goldmont and Ice Lake, AMD since Zen) one
 * that runs each pair of rounds as one SHA256RNDS2 and the message schedule
 * as SHA256MSG1/MSG2.  Which one runs is decided once, from CPUID. */
#include "common/sha256.h"

#include <stdbool.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define SHA256_X86 1
#include <cpuid.h>
#include <immintrin.h>
#if __has_include(<sys/platform/x86.h>)
/* glibc's own reading of the CPU at start: no cpuid of ours (each one a
 * trap to the hypervisor in a VM, ~7 us on the machines measured) */
#include <sys/platform/x86.h>
#define SHA256_GLIBC_FEATURES 1
#endif
#endif

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static inline uint32_t rotr(uint32_t x, unsigned n)
{
  return (x >> n) | (x << (32 - n));
}

static void block_generic(uint32_t h[8], const uint8_t *p)
{
  uint32_t w[64], a, b, c, d, e, f, g, hh;

  for (int i = 0; i < 16; i++)
    w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 |
           p[4 * i + 3];
  for (int i = 16; i < 64; i++) {
    uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
    uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
  for (int i = 0; i < 64; i++) {
    uint32_t t1 =
        hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
    uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    hh = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
  }
  h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += hh;
}

#ifdef SHA256_X86
/* n blocks with the SHA extensions.  The rounds instruction keeps the
 * working variables as two vectors, ABEF and CDGH (A in the highest lane);
 * the chaining value h[] is A..H in order, so it is rearranged on the way in
 * and back on the way out. */
__attribute__((target("sha,sse4.1,ssse3"))) static void blocks_x86(uint32_t h[8], const uint8_t *p,
                                                                   size_t n)
{
  /* the bytes of each 32-bit word reversed: the message is big-endian */
  const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
  __m128i abcd = _mm_loadu_si128((const __m128i *)&h[0]);
  __m128i efgh = _mm_loadu_si128((const __m128i *)&h[4]);
  __m128i badc = _mm_shuffle_epi32(abcd, 0xB1);     /* lanes B A D C */
  __m128i hgfe = _mm_shuffle_epi32(efgh, 0x1B);     /* lanes H G F E */
  __m128i abef = _mm_alignr_epi8(badc, hgfe, 8);    /* lanes F E B A */
  __m128i cdgh = _mm_blend_epi16(hgfe, badc, 0xF0); /* lanes H G D C */

  for (; n > 0; n--, p += 64) {
    __m128i w[4], t, save_abef = abef, save_cdgh = cdgh;

    for (int i = 0; i < 4; i++)
      w[i] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16 * i)), bswap);
    /* sixteen groups of four rounds; w[] holds the last sixteen words */
    for (int g = 0; g < 16; g++) {
      __m128i *cur = &w[g & 3];
      if (g >= 4) {
        /* W[t] = s1(W[t-2]) + W[t-7] + s0(W[t-15]) + W[t-16], four at a time */
        t = _mm_sha256msg1_epu32(*cur, w[(g + 1) & 3]);
        t = _mm_add_epi32(t, _mm_alignr_epi8(w[(g + 3) & 3], w[(g + 2) & 3], 4));
        *cur = _mm_sha256msg2_epu32(t, w[(g + 3) & 3]);
      }
      t = _mm_add_epi32(*cur, _mm_loadu_si128((const __m128i *)&K[4 * g]));
      cdgh = _mm_sha256rnds2_epu32(cdgh, abef, t);
      t = _mm_shuffle_epi32(t, 0x0E);
      abef = _mm_sha256rnds2_epu32(abef, cdgh, t);
    }
    abef = _mm_add_epi32(abef, save_abef);
    cdgh = _mm_add_epi32(cdgh, save_cdgh);
  }
  {
    __m128i feba = _mm_shuffle_epi32(abef, 0x1B); /* lanes A B E F */
    __m128i ghcd = _mm_shuffle_epi32(cdgh, 0xB1); /* lanes G H C D */
    _mm_storeu_si128((__m128i *)&h[0], _mm_blend_epi16(feba, ghcd, 0xF0));
    _mm_storeu_si128((__m128i *)&h[4], _mm_alignr_epi8(ghcd, feba, 8));
  }
}

static bool cpu_has_sha(void)
{
#ifdef SHA256_GLIBC_FEATURES
  return CPU_FEATURE_ACTIVE(SSSE3) && CPU_FEATURE_ACTIVE(SSE4_1) && CPU_FEATURE_ACTIVE(SHA);
#else
  unsigned a, b, c, d;

  if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_SSSE3) || !(c & bit_SSE4_1))
    return false;
  if (__get_cpuid_max(0, NULL) < 7)
    return false;
  __cpuid_count(7, 0, a, b, c, d);
  return (b & bit_SHA) != 0;
#endif
}
#endif

/* -1: not decided yet; else whether blocks() uses the SHA extensions */
static int accel = -1;

bool sha256_accelerated(void)
{
  if (accel < 0) {
#ifdef SHA256_X86
    accel = cpu_has_sha();
#else
    accel = 0;
#endif
  }
  return accel > 0;
}

bool sha256_set_accelerated(bool on)
{
  accel = 0;
#ifdef SHA256_X86
  if (on)
    accel = cpu_has_sha();
#endif
  return accel > 0;
}

static void blocks(uint32_t h[8], const uint8_t *p, size_t n)
{
#ifdef SHA256_X86
  if (sha256_accelerated()) {
    blocks_x86(h, p, n);
    return;
  }
#endif
  for (; n > 0; n--, p += 64)
    block_generic(h, p);
}

void sha256_init(struct sha256 *s)
{
  static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

  memcpy(s->h, iv, sizeof iv);
  s->total = 0;
  s->n = 0;
}

void sha256_update(struct sha256 *s, const void *data, size_t len)
{
  const uint8_t *p = data;

  s->total += len;
  if (s->n > 0) {
    size_t take = 64 - s->n < len ? 64 - s->n : len;
    memcpy(s->buf + s->n, p, take);
    s->n += take, p += take, len -= take;
    if (s->n < 64)
      return;
    blocks(s->h, s->buf, 1);
    s->n = 0;
  }
  if (len >= 64) {
    blocks(s->h, p, len / 64);
    p += len & ~(size_t)63;
    len &= 63;
  }
  memcpy(s->buf, p, len);
  s->n = len;
}

void sha256_final(struct sha256 *s, uint8_t out[SHA256_LEN])
{
  uint64_t bits = s->total * 8;

  s->buf[s->n++] = 0x80;
  if (s->n > 56) {
    memset(s->buf + s->n, 0, 64 - s->n);
    blocks(s->h, s->buf, 1);
    s->n = 0;
  }
  memset(s->buf + s->n, 0, 56 - s->n);
  for (int i = 0; i < 8; i++)
    s->buf[56 + i] = (uint8_t)(bits >> (56 - 8 * i));
  blocks(s->h, s->buf, 1);
  for (int i = 0; i < 8; i++) {
    out[4 * i] = (uint8_t)(s->h[i] >> 24);
    out[4 * i + 1] = (uint8_t)(s->h[i] >> 16);
    out[4 * i + 2] = (uint8_t)(s->h[i] >> 8);
    out[4 * i + 3] = (uint8_t)s->h[i];
  }
}

void sha256_hex(const void *data, size_t len, char out[SHA256_HEX_LEN + 1])
{
  static const char digits[] = "0123456789abcdef";
  struct sha256 s;
  uint8_t d[SHA256_LEN];

  sha256_init(&s);
  sha256_update(&s, data, len);
  sha256_final(&s, d);
  for (int i = 0; i < SHA256_LEN; i++) {
    out[2 * i] = digits[d[i] >> 4];
    out[2 * i + 1] = digits[d[i] & 15];
  }
  out[SHA256_HEX_LEN] = '\0';
}
