/* base64.h - base64 (RFC 4648, section 4: the standard alphabet, padded), as
 * HTTP's Basic credentials carry a user and password (RFC 7617). */
#ifndef AGENTRT_COMMON_BASE64_H
#define AGENTRT_COMMON_BASE64_H

#include <stddef.h>
#include <sys/types.h>

/* Bytes base64_encode() writes for len bytes, its NUL included. */
#define BASE64_ENCODED_SIZE(len) ((((len) + 2) / 3) * 4 + 1)

/* src as base64 into out (BASE64_ENCODED_SIZE(len) bytes), NUL-terminated;
 * returns the length written (the NUL not counted). */
size_t base64_encode(const void *src, size_t len, char *out);
/* n characters of base64 into out (at least n / 4 * 3 bytes): the bytes'
 * count, or -1 when src is not canonical padded base64 (a length that is not
 * a multiple of 4, a character outside the alphabet, padding other than at
 * the end, unused bits not zero). */
ssize_t base64_decode(const char *src, size_t n, unsigned char *out);

#endif
