/* gitindex.c - the paths a git index written by the agent names.
 *
 * `.git/index` is committed as git's data, but git does not check the paths
 * of an index it reads: one that names `.git/hooks/post-checkout` makes the
 * host's `git checkout -- .` or `git restore .` write the agent's hook there
 * (the blob is in the agent's objects), and the next checkout runs it.  So an
 * index is read here (versions 2 to 4, SHA-1 or SHA-256 entries) and every
 * entry's path is checked the way git checks a path it writes: no empty, `.`
 * or `..` component, no `.git` (by its key: the aliases of a case-folding or
 * normalising host too).
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "workspace/internal.h"

#define MAX_INDEX_SIZE ((uint64_t)512 << 20)
#define STAT_BYTES 40 /* ctime, mtime (seconds, nanoseconds), dev, ino, mode, uid, gid, size */

static uint32_t be32(const unsigned char *p)
{
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* May git write a file at path (n bytes)? */
static bool entry_path_ok(const char *path, size_t n)
{
  for (size_t i = 0; i <= n;) {
    const char *e = memchr(path + i, '/', n - i);
    size_t len = e ? (size_t)(e - (path + i)) : n - i;
    if (len == 0 || (len == 1 && path[i] == '.') ||
        (len == 2 && path[i] == '.' && path[i + 1] == '.') || ws_is_git_name(path + i, len))
      return false;
    i += len + 1;
  }
  return true;
}

/* git's offset varint (index v4 prefix lengths). */
static bool varint(const unsigned char *p, size_t n, size_t *pos, size_t *ret)
{
  size_t val;
  unsigned char c;

  if (*pos >= n)
    return false;
  c = p[(*pos)++];
  val = c & 127;
  while (c & 128) {
    if (*pos >= n || val > (SIZE_MAX >> 8))
      return false;
    c = p[(*pos)++];
    val = ((val + 1) << 7) | (c & 127);
  }
  *ret = val;
  return true;
}

/* Walk the index p (n bytes) with hash size hlen: does it parse to its
 * trailing checksum?  *bad: the first path git would not write, or NULL. */
static bool walk(const unsigned char *p, size_t n, size_t hlen, char **bad)
{
  uint32_t version = be32(p + 4), count = be32(p + 8);
  size_t pos = 12, prev_len = 0, name_len;
  cleanup_free char *prev = NULL;
  cleanup_free char *name = NULL;

  for (uint32_t i = 0; i < count; i++) {
    size_t start = pos, fixed = STAT_BYTES + hlen + 2;
    unsigned flags;
    if (n - pos < fixed)
      return false;
    flags = (unsigned)p[pos + fixed - 2] << 8 | p[pos + fixed - 1];
    if ((flags & 0x4000) && version >= 3)
      fixed += 2;
    pos += fixed;
    if (pos > n)
      return false;
    if (version == 4) {
      size_t strip;
      const unsigned char *nul;
      if (!varint(p, n, &pos, &strip) || strip > prev_len ||
          (nul = memchr(p + pos, '\0', n - pos)) == NULL)
        return false;
      name_len = prev_len - strip + (size_t)(nul - (p + pos));
      free(name);
      name = xmalloc(name_len + 1);
      memcpy(name, prev ? prev : "", prev_len - strip);
      memcpy(name + prev_len - strip, p + pos, (size_t)(nul - (p + pos)));
      pos = (size_t)(nul - p) + 1;
    } else {
      const unsigned char *nul = memchr(p + pos, '\0', n - pos);
      if (nul == NULL)
        return false;
      name_len = (size_t)(nul - (p + pos));
      free(name);
      name = xstrndup((const char *)p + pos, name_len);
      pos = start + ((fixed + name_len + 8) & ~(size_t)7);
      if (pos > n)
        return false;
    }
    name[name_len] = '\0';
    /* a sparse index's directory entries end in '/' */
    if (*bad == NULL &&
        !entry_path_ok(name, name_len - (name_len > 0 && name[name_len - 1] == '/')))
      *bad = xstrdup(name);
    free(prev);
    prev = name;
    prev_len = name_len;
    name = NULL;
  }
  while (n - pos > hlen) { /* extensions: signature, size, data */
    uint32_t size;
    if (n - pos - hlen < 8)
      return false;
    size = be32(p + pos + 4);
    if (size > n - pos - hlen - 8)
      return false;
    pos += 8 + size;
  }
  return n - pos == hlen;
}

const char *ws_git_index_reason(int fd, char **ret_path)
{
  cleanup_free unsigned char *p = NULL;
  struct stat st;
  size_t got = 0;
  uint32_t version;
  bool ok;

  *ret_path = NULL;
  if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > MAX_INDEX_SIZE)
    return "a git index agentrt cannot read (git checks none of its paths)";
  p = xmalloc((size_t)st.st_size + 1);
  while (got < (size_t)st.st_size) {
    ssize_t k = pread(fd, p + got, (size_t)st.st_size - got, (off_t)got);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      break;
    got += (size_t)k;
  }
  if (got < 12 || memcmp(p, "DIRC", 4) != 0 || (version = be32(p + 4)) < 2 || version > 4)
    return "a git index agentrt cannot read (git checks none of its paths)";
  ok = walk(p, got, 20, ret_path);
  if (!ok) {
    free(*ret_path);
    *ret_path = NULL;
    ok = walk(p, got, 32, ret_path);
  }
  if (!ok) {
    free(*ret_path);
    *ret_path = NULL;
    return "a git index agentrt cannot read (git checks none of its paths)";
  }
  if (*ret_path)
    return "a git index naming a path inside `.git` or out of the work tree (`git checkout -- .` "
           "writes it there)";
  return NULL;
}
