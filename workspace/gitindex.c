/* gitindex.c - the entries of a git index written by the agent.
 *
 * `.git/index` is committed as git's data, but git does not check the paths
 * of an index it reads, and the host's `git checkout -- .` or `git restore .`
 * writes every entry (the blob is in the agent's objects).  So an index is
 * read here (versions 2 to 4, SHA-1 or SHA-256 entries) and refused when:
 *   - an entry's path is one git would never write: an empty, `.` or `..`
 *     component, or `.git` (by its key: the aliases of a case-folding or
 *     normalising host too), e.g. `.git/hooks/post-checkout`, which the next
 *     checkout runs;
 *   - an entry is new or changed against the host's own index (same path,
 *     mode and object id: one committed before passes) and is a path that
 *     would be protected as a change (`.gitmodules`, the profile's protected
 *     list: a `.envrc` left out of the commit comes back through the index),
 *     a symlink (its target is a blob in the objects, which agentrt does not
 *     read) or a gitlink (a submodule).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "workspace/internal.h"

#define MAX_INDEX_SIZE ((uint64_t)512 << 20)
#define STAT_BYTES 40 /* ctime, mtime (seconds, nanoseconds), dev, ino, mode, uid, gid, size */
#define MODE_OFFSET 24
#define MAX_HASH 32
#define GIT_S_IFMT 0170000
#define GIT_S_IFDIR 0040000 /* a sparse index's directory entry */
#define GIT_S_IFLNK 0120000
#define GIT_S_IFGITLINK 0160000

#define UNREADABLE "a git index agentrt cannot read (git checks none of its paths)"

/* A risky entry (ws_git_entry_risky) of an index: what makes it the same as the host's. */
struct entry {
  char *path;
  uint32_t mode;
  size_t hlen;
  unsigned char oid[MAX_HASH];
};

/* A walk of one index: what it looks for and what it found. */
struct scan {
  char *const *patterns;
  enum {
    SCAN_PATHS,   /* bad and risky only */
    SCAN_COLLECT, /* v: every risky entry (the host's index) */
    SCAN_CHECK,   /* v: the first risky entry not in known */
  } mode;
  const struct entry *known; /* SCAN_CHECK: the host's risky entries, sorted */
  size_t n_known;
  char *bad;    /* the first path git would not write, or NULL */
  size_t risky; /* risky entries (ws_git_entry_risky) seen */
  struct entry *v;
  size_t n, cap;
};

static uint32_t be32(const unsigned char *p)
{
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void scan_reset(struct scan *s)
{
  for (size_t i = 0; i < s->n; i++)
    free(s->v[i].path);
  free(s->v);
  free(s->bad);
  *s = (struct scan){
      .patterns = s->patterns, .mode = s->mode, .known = s->known, .n_known = s->n_known};
}

static int entry_cmp(const void *va, const void *vb)
{
  const struct entry *a = va, *b = vb;
  int r = strcmp(a->path, b->path);

  if (r != 0)
    return r;
  if (a->mode != b->mode)
    return a->mode < b->mode ? -1 : 1;
  if (a->hlen != b->hlen)
    return a->hlen < b->hlen ? -1 : 1;
  return memcmp(a->oid, b->oid, a->hlen);
}

bool ws_git_path_ok(const char *path, size_t n)
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

/* Why ws_protect_reason_in would protect path as a change of this mode, or
 * NULL; *ret_pattern: the protected list's entry it matched. */
static const char *path_reason(const char *path, uint32_t mode, char *const *patterns,
                               const char **ret_pattern)
{
  enum ws_ftype type = WS_T_FILE;

  if ((mode & GIT_S_IFMT) == GIT_S_IFLNK)
    type = WS_T_SYMLINK;
  else if ((mode & GIT_S_IFMT) == GIT_S_IFDIR)
    type = WS_T_DIR;
  return ws_protect_reason_in(path, type, false, patterns, NULL, ret_pattern);
}

bool ws_git_entry_risky(const char *path, uint32_t mode, char *const *patterns)
{
  const char *pat;

  return (mode & GIT_S_IFMT) == GIT_S_IFLNK || (mode & GIT_S_IFMT) == GIT_S_IFGITLINK ||
         path_reason(path, mode, patterns, &pat) != NULL;
}

/* One entry read: name (n bytes), mode, oid (hlen bytes). */
static void visit(struct scan *s, const char *name, size_t n, uint32_t mode,
                  const unsigned char *oid, size_t hlen)
{
  struct entry e = {.path = (char *)name, .mode = mode, .hlen = hlen};

  /* a sparse index's directory entries end in '/' */
  if (s->bad == NULL && !ws_git_path_ok(name, n - (n > 0 && name[n - 1] == '/')))
    s->bad = xstrdup(name);
  if (s->mode == SCAN_CHECK && s->n > 0)
    return;
  if (!ws_git_entry_risky(name, mode, s->patterns))
    return;
  s->risky++;
  memcpy(e.oid, oid, hlen);
  if (s->mode == SCAN_PATHS ||
      (s->mode == SCAN_CHECK && s->n_known > 0 &&
       bsearch(&e, s->known, s->n_known, sizeof *s->known, entry_cmp) != NULL))
    return;
  if (s->n == s->cap) {
    s->cap = s->cap ? 2 * s->cap : 8;
    s->v = xrealloc(s->v, s->cap * sizeof *s->v);
  }
  e.path = xstrdup(name);
  s->v[s->n++] = e;
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

/* Walk the index p (n bytes) with hash size hlen into s: does it parse to
 * its trailing checksum? */
static bool walk(const unsigned char *p, size_t n, size_t hlen, struct scan *s)
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
    visit(s, name, name_len, be32(p + start + MODE_OFFSET), p + start + STAT_BYTES, hlen);
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

/* Read the index open at fd (bounded): false when it is not a file or too
 * large.  *ret_p: its bytes (freed by the caller), *ret_n: their count. */
static bool read_index(int fd, unsigned char **ret_p, size_t *ret_n)
{
  unsigned char *p;
  struct stat st;
  size_t got = 0;

  if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > MAX_INDEX_SIZE)
    return false;
  p = xmalloc((size_t)st.st_size + 1);
  while (got < (size_t)st.st_size) {
    ssize_t k = pread(fd, p + got, (size_t)st.st_size - got, (off_t)got);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      break;
    got += (size_t)k;
  }
  *ret_p = p;
  *ret_n = got;
  return true;
}

/* Walk the index p (n bytes) into s, with SHA-1 entries, else SHA-256:
 * its hash size, or 0 when it does not parse (s reset). */
static size_t walk_any(const unsigned char *p, size_t n, struct scan *s)
{
  uint32_t version;

  if (n < 12 || memcmp(p, "DIRC", 4) != 0 || (version = be32(p + 4)) < 2 || version > 4)
    return 0;
  if (walk(p, n, 20, s))
    return 20;
  scan_reset(s);
  if (walk(p, n, 32, s))
    return 32;
  scan_reset(s);
  return 0;
}

/* The risky entries of the host's index open at host_fd into s, sorted
 * (none when there is no index or it does not parse). */
static void host_entries(int host_fd, struct scan *s)
{
  cleanup_free unsigned char *p = NULL;
  size_t n;

  if (host_fd < 0 || !read_index(host_fd, &p, &n) || walk_any(p, n, s) == 0)
    return;
  if (s->n > 1)
    qsort(s->v, s->n, sizeof *s->v, entry_cmp);
}

static const char *risk_reason(const struct entry *e, char *const *patterns)
{
  const char *pat = NULL;

  if ((e->mode & GIT_S_IFMT) == GIT_S_IFLNK)
    return "a git index with a new or changed symlink entry (its target is in git's objects, "
           "not checked)";
  if ((e->mode & GIT_S_IFMT) == GIT_S_IFGITLINK)
    return "a git index with a new or changed submodule (gitlink) entry (`git submodule update` "
           "checks it out)";
  path_reason(e->path, e->mode, patterns, &pat);
  if (pat)
    return "a git index with a new or changed entry on the protected list (`git checkout -- .` "
           "writes it)";
  return "a git index with a new or changed protected entry such as `.gitmodules` (`git "
         "checkout -- .` writes it)";
}

/* The agent's index is walked twice (paths, then its risky entries against
 * the host's), so that only the host's risky entries are kept in memory. */
const char *ws_git_index_reason(int fd, int host_fd, char *const *patterns, char **ret_path)
{
  cleanup_free unsigned char *p = NULL;
  struct scan s = {.patterns = patterns, .mode = SCAN_PATHS};
  struct scan host = {.patterns = patterns, .mode = SCAN_COLLECT};
  const char *why = NULL;
  size_t n, hlen;

  *ret_path = NULL;
  if (!read_index(fd, &p, &n) || (hlen = walk_any(p, n, &s)) == 0)
    return UNREADABLE;
  if (s.bad) {
    *ret_path = s.bad;
    s.bad = NULL;
    scan_reset(&s);
    return "a git index naming a path inside `.git` or out of the work tree (`git checkout -- .` "
           "writes it there)";
  }
  if (s.risky == 0)
    return NULL;
  host_entries(host_fd, &host);
  s = (struct scan){.patterns = patterns, .mode = SCAN_CHECK, .known = host.v, .n_known = host.n};
  if (!walk(p, n, hlen, &s)) /* it parsed before: not expected */
    why = UNREADABLE;
  else if (s.n > 0) {
    why = risk_reason(&s.v[0], patterns);
    *ret_path = xstrdup(s.v[0].path);
  }
  scan_reset(&s);
  scan_reset(&host);
  return why;
}
