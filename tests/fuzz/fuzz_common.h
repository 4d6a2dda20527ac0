/* fuzz_common.h - shared checks for the oci/ libFuzzer targets.
 *
 * Beyond "no crash, no leak", every target checks the round-trip invariant:
 * whatever the parser accepts, the writer must write, the parser must accept
 * again, and the second writing must be byte-identical.  A violation aborts
 * (libFuzzer then keeps the input as a crash artifact). */
#ifndef AGENTRT_FUZZ_COMMON_H
#define AGENTRT_FUZZ_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline void fuzz_fail(const char *what, const char *detail)
{
  fprintf(stderr, "fuzz invariant violated: %s: %s\n", what, detail);
  abort();
}

static inline void fuzz_same(const char *a, size_t la, const char *b, size_t lb)
{
  if (la != lb || memcmp(a, b, la) != 0)
    fuzz_fail("round trip", "second serialisation differs");
}

/* Exact-size heap copy so ASan catches reads past the end. */
static inline char *fuzz_copy(const unsigned char *data, size_t size)
{
  char *p = malloc(size ? size : 1);
  if (p == NULL)
    abort();
  memcpy(p, data, size);
  return p;
}

/* Exact-size NUL-terminated copy (size + 1 bytes) for parsers of C strings. */
static inline char *fuzz_cstr(const unsigned char *data, size_t size)
{
  char *p = malloc(size + 1);
  if (p == NULL)
    abort();
  memcpy(p, data, size);
  p[size] = '\0';
  return p;
}

#endif
