/* fuzz_gitindex.c - libFuzzer target for the git index reader
 * (workspace/gitindex.c), which reads an index the agent wrote.
 *
 * Invariants: no crash and no read past the index on any input; a reason
 * comes with the offending path only when the index parsed, and that path
 * is one the reader would refuse again inside a minimal index of its own.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "workspace/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int memfd_of(const void *data, size_t size)
{
  int fd = memfd_create("index", MFD_CLOEXEC);
  if (fd < 0)
    abort();
  if (size && write(fd, data, size) != (ssize_t)size)
    abort();
  return fd;
}

/* A version 2 index of one entry named path, with a SHA-1 checksum of zeros
 * (the reader does not check the checksum, only the layout). */
static const char *one_entry(const char *path)
{
  size_t n = strlen(path), ent = (62 + n + 8) & ~(size_t)7, size = 12 + ent + 20;
  unsigned char *p = calloc(1, size);
  const char *why;
  char *bad = NULL;
  int fd;

  if (p == NULL)
    abort();
  memcpy(p, "DIRC\0\0\0\2\0\0\0\1", 12);
  p[12 + 60] = (unsigned char)(n > 0xfff ? 0x0f : n >> 8);
  p[12 + 61] = (unsigned char)(n > 0xfff ? 0xff : n & 0xff);
  memcpy(p + 12 + 62, path, n);
  fd = memfd_of(p, size);
  why = ws_git_index_reason(fd, &bad);
  close(fd);
  free(p);
  free(bad);
  return why;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char *bad = NULL;
  const char *why;
  int fd = memfd_of(data, size);

  why = ws_git_index_reason(fd, &bad);
  close(fd);
  if (bad != NULL && why == NULL)
    abort();
  if (bad != NULL && strlen(bad) < 4096 && one_entry(bad) == NULL)
    abort(); /* the path it named is refused again on its own */
  free(bad);
  return 0;
}
