/* fuzz_gitindex.c - libFuzzer target for the git index reader
 * (workspace/gitindex.c), which reads an index the agent wrote and compares
 * it with the host's.
 *
 * Invariants: no crash and no read past the index on any input; a reason
 * comes with the offending path only when the index parsed, and that path is
 * one the reader refuses again, for the same reason, inside a minimal index
 * of its own (with one of the entry types); an empty host index is no host
 * index; an index checked against itself as the host's has no new or
 * changed entry.  A split index (a `link` extension naming
 * sharedindex.abab...) is read with a fixed shared index of that name.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "workspace/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A part of the agent profile's protected list: names, a directory, a glob. */
static char *const patterns[] = {".envrc", ".env.*", ".vscode/", ".yarn/releases/", NULL};

static int memfd_of(const void *data, size_t size)
{
  int fd = memfd_create("index", MFD_CLOEXEC);
  if (fd < 0)
    abort();
  if (size && write(fd, data, size) != (ssize_t)size)
    abort();
  return fd;
}

/* The reason for data (size bytes) against the host's index hdata (hsize
 * bytes; NULL: none). */
static const char *reason(const void *data, size_t size, const void *hdata, size_t hsize,
                          char **ret_bad)
{
  int fd = memfd_of(data, size), host = hdata ? memfd_of(hdata, hsize) : -1;
  const char *why = ws_git_index_reason(fd, host, NULL, patterns, 0, ret_bad);

  close(fd);
  if (host >= 0)
    close(host);
  return why;
}

/* The reason for a version 2 index of one entry named path with this mode
 * (assume-unchanged when hidden), against no host index, with a SHA-1
 * checksum of zeros (the reader does not check the checksum, only the
 * layout). */
static const char *one_entry(const char *path, uint32_t mode, bool hidden)
{
  size_t n = strlen(path), ent = (62 + n + 8) & ~(size_t)7, size = 12 + ent + 20;
  unsigned char *p = calloc(1, size);
  const char *why;
  char *bad = NULL;

  if (p == NULL)
    abort();
  memcpy(p, "DIRC\0\0\0\2\0\0\0\1", 12);
  p[12 + 24] = (unsigned char)(mode >> 24);
  p[12 + 25] = (unsigned char)(mode >> 16);
  p[12 + 26] = (unsigned char)(mode >> 8);
  p[12 + 27] = (unsigned char)mode;
  p[12 + 60] = (unsigned char)((n > 0xfff ? 0x0f : n >> 8) | (hidden ? 0x80 : 0));
  p[12 + 61] = (unsigned char)(n > 0xfff ? 0xff : n & 0xff);
  memcpy(p + 12 + 62, path, n);
  why = reason(p, size, NULL, 0, &bad);
  free(p);
  free(bad);
  return why;
}

/* Is path refused for why in an index of its own, as some type of entry? */
static bool refused_alone(const char *path, const char *why)
{
  static const uint32_t modes[] = {0100644, 0040000, 0120000, 0160000};

  for (size_t i = 0; i < sizeof modes / sizeof *modes; i++)
    if (one_entry(path, modes[i], false) == why || one_entry(path, modes[i], true) == why)
      return true;
  return false;
}

static bool same_path(const char *a, const char *b)
{
  return (a == NULL && b == NULL) || (a && b && strcmp(a, b) == 0);
}

/* The shared index every split input names: version 2, entries `a.c` and
 * `.envrc` (object ids 1 and 2, mode 0100644), checksum bytes of 0xab. */
static int shared_open(void *ctx, const char *name, bool host)
{
  static const char *const names[] = {"a.c", ".envrc"};
  unsigned char p[12 + 2 * 72 + 20] = "DIRC\0\0\0\2\0\0\0\2";
  size_t pos = 12;

  (void)ctx;
  if (host || strcmp(name, "sharedindex.abababababababababababababababababababab") != 0)
    return -1;
  for (size_t i = 0; i < 2; i++) {
    size_t n = strlen(names[i]);
    p[pos + 26] = 0x81, p[pos + 27] = 0xa4; /* 0100644 */
    p[pos + 40] = (unsigned char)(i + 1);
    p[pos + 61] = (unsigned char)n;
    memcpy(p + pos + 62, names[i], n);
    pos += (62 + n + 8) & ~(size_t)7;
  }
  memset(p + pos, 0xab, 20);
  return memfd_of(p, pos + 20);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char *bad = NULL, *bad_empty = NULL, *bad_self = NULL;
  const char *why = reason(data, size, NULL, 0, &bad);
  const char *why_empty = reason(data, size, "", 0, &bad_empty);
  const char *why_self = reason(data, size, data, size, &bad_self);

  if (bad != NULL && why == NULL)
    abort();
  if (bad != NULL && strlen(bad) < 4096 && !refused_alone(bad, why))
    abort(); /* the path it named is refused again on its own */
  if (why_empty != why || !same_path(bad_empty, bad))
    abort(); /* an empty host index holds no entries */
  if (why_self != NULL &&
      (why_self != why || !same_path(bad_self, bad) || strstr(why, "new or changed") != NULL))
    abort(); /* every entry of an index is in itself */
  free(bad);
  free(bad_empty);
  free(bad_self);
  {
    struct ws_git_shared sh = {shared_open, NULL};
    int fd = memfd_of(data, size);
    const char *why_split = ws_git_index_reason(fd, -1, &sh, patterns, 0, &bad);
    close(fd);
    if (bad != NULL && why_split == NULL)
      abort();
    free(bad);
  }
  return 0;
}
