/* base64.c - base64 (base64.h). */
#include "common/base64.h"

#include <stdbool.h>
#include <stdint.h>

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t base64_encode(const void *src, size_t len, char *out)
{
  const unsigned char *s = src;
  size_t o = 0, i = 0;

  for (; i + 3 <= len; i += 3) {
    uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8 | s[i + 2];
    out[o++] = alphabet[v >> 18 & 63];
    out[o++] = alphabet[v >> 12 & 63];
    out[o++] = alphabet[v >> 6 & 63];
    out[o++] = alphabet[v & 63];
  }
  if (i < len) {
    uint32_t v = (uint32_t)s[i] << 16 | (i + 1 < len ? (uint32_t)s[i + 1] << 8 : 0);
    out[o++] = alphabet[v >> 18 & 63];
    out[o++] = alphabet[v >> 12 & 63];
    out[o++] = i + 1 < len ? alphabet[v >> 6 & 63] : '=';
    out[o++] = '=';
  }
  out[o] = '\0';
  return o;
}

static int sextet(char c)
{
  if (c >= 'A' && c <= 'Z')
    return c - 'A';
  if (c >= 'a' && c <= 'z')
    return c - 'a' + 26;
  if (c >= '0' && c <= '9')
    return c - '0' + 52;
  if (c == '+')
    return 62;
  if (c == '/')
    return 63;
  return -1;
}

ssize_t base64_decode(const char *src, size_t n, unsigned char *out)
{
  size_t o = 0;

  if (n % 4 != 0)
    return -1;
  for (size_t i = 0; i < n; i += 4) {
    bool last = i + 4 == n;
    int pad = last ? (src[i + 3] == '=') + (src[i + 2] == '=' && src[i + 3] == '=') : 0;
    int a = sextet(src[i]), b = sextet(src[i + 1]);
    int c = pad >= 2 ? 0 : sextet(src[i + 2]), d = pad >= 1 ? 0 : sextet(src[i + 3]);
    uint32_t v;

    if (a < 0 || b < 0 || c < 0 || d < 0)
      return -1;
    v = (uint32_t)a << 18 | (uint32_t)b << 12 | (uint32_t)c << 6 | (uint32_t)d;
    if ((pad == 2 && (v & 0xffff) != 0) || (pad == 1 && (v & 0xff) != 0))
      return -1; /* bits the padding says are unused */
    out[o++] = (unsigned char)(v >> 16);
    if (pad < 2)
      out[o++] = (unsigned char)(v >> 8);
    if (pad < 1)
      out[o++] = (unsigned char)v;
  }
  return (ssize_t)o;
}
