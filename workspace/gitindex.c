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
 *     read) or a gitlink (a submodule);
 *   - a stage of its resolve-undo records (REUC) is such a path or such a
 *     new or changed entry (`git checkout -m -- .` puts the stages back and
 *     writes their merge with stage 2's mode);
 *   - its file-system monitor data (FSMN) marks an entry unchanged under a
 *     token that is neither a time past nor the host's index's own (a host
 *     with core.fsmonitor lstats none of them);
 *   - its entry offset table (IEOT) does not split the entries as they lie
 *     (a threaded git reads each block from where the table says), or its
 *     end-of-entries extension (EOIE) says the extensions start elsewhere
 *     than they do (a threaded git reads them from there);
 *   - a node of its cached trees (TREE extension) that git takes as valid
 *     does not name the tree its entries make: the host's `git commit`
 *     records that id without reading the entries below it.
 * A split index (`git update-index --split-index`, core.splitIndex) holds
 * only the entries changed since its shared index `sharedindex.<id>` (its
 * `link` extension names it, with a delete and a replace bitmap); a replaced
 * entry has no name of its own.  Its entries are checked as git merges them
 * with the shared one; a shared index that cannot be read, or that the agent
 * rewrote under the host's name, makes it unreadable.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
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
/* Bits of an entry that keep git status from showing its file: assume
 * unchanged (`git update-index --assume-unchanged`) and skip-worktree
 * (sparse-checkout, `--skip-worktree`). */
#define HIDE_ASSUME_VALID 1u
#define HIDE_SKIP_WORKTREE 2u
#define HIDE_BITS (HIDE_ASSUME_VALID | HIDE_SKIP_WORKTREE)
/* Not hiding bits: what the cached trees (TREE extension) leave out or
 * never cover: an intent-to-add entry (`git add -N`), an unmerged stage. */
#define FLAG_ITA 4u
#define FLAG_STAGE 8u

struct entry {
  char *path;
  uint32_t mode;
  unsigned hide; /* HIDE_* */
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
    SCAN_ALL,     /* v: every entry, with its FLAG_* bits */
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
  if (a->hide != b->hide)
    return a->hide < b->hide ? -1 : 1;
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

/* One entry read into the scan vs: name (n bytes), mode, oid (hlen bytes),
 * its HIDE_* bits. */
static void visit(void *vs, const char *name, size_t n, uint32_t mode, const unsigned char *oid,
                  size_t hlen, unsigned hide)
{
  struct scan *s = vs;
  struct entry e = {.path = (char *)name, .mode = mode, .hide = hide & HIDE_BITS, .hlen = hlen};

  if (s->mode == SCAN_ALL) {
    e.hide = hide;
    memcpy(e.oid, oid, hlen);
    if (s->n == s->cap) {
      s->cap = s->cap ? 2 * s->cap : 64;
      s->v = xrealloc(s->v, s->cap * sizeof *s->v);
    }
    e.path = xstrndup(name, n);
    s->v[s->n++] = e;
    return;
  }

  /* a sparse index's directory entries end in '/' */
  if (s->bad == NULL && !ws_git_path_ok(name, n - (n > 0 && name[n - 1] == '/')))
    s->bad = xstrdup(name);
  if (s->mode == SCAN_CHECK && s->n > 0)
    return;
  if ((hide & HIDE_BITS) == 0 && !ws_git_entry_risky(name, mode, s->patterns))
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

/* An entry of an index being walked: name (n bytes), mode, oid (hlen bytes),
 * HIDE_* bits. */
typedef void (*entry_fn)(void *ctx, const char *name, size_t n, uint32_t mode,
                         const unsigned char *oid, size_t hlen, unsigned hide);

/* The index whose TREE extension walk notes (set by the caller), and it. */
static struct {
  const unsigned char *p;
  const unsigned char *tree, *fsmn; /* TREE, FSMN */
  size_t tree_n, fsmn_n;
} tree_of;

/* Does the IEOT extension (e, n bytes) split the count entries at starts
 * (stripped: a v4 name that takes its prefix from the entry before) into
 * blocks exactly as they lie? */
static bool ieot_ok(const unsigned char *e, size_t n, const size_t *starts,
                    const unsigned char *stripped, uint32_t count)
{
  uint64_t at = 0;

  if (n < 4 || be32(e) != 1 || (n - 4) % 8 != 0)
    return false;
  for (size_t k = 4; k < n; k += 8) {
    uint32_t off = be32(e + k), nr = be32(e + k + 4);
    if (at >= count || starts[at] != off || stripped[at] || nr > count - at)
      return false;
    at += nr;
  }
  return at == count;
}

/* The index whose resolve-undo records (REUC) walk feeds to the scan s as
 * entries (set by scan_pass): `git checkout -m` puts them back. */
static struct {
  const unsigned char *p;
  struct scan *s;
} reuc_of;

static void visit(void *vs, const char *name, size_t n, uint32_t mode, const unsigned char *oid,
                  size_t hlen, unsigned hide);

/* Read a REUC extension (e, n bytes) as git reads it: per path its name,
 * three octal modes and an id for each mode not 0; each stage to s. */
static bool reuc_read(const unsigned char *e, size_t n, size_t hlen, struct scan *s)
{
  size_t pos = 0;

  while (pos < n) {
    const unsigned char *nul = memchr(e + pos, '\0', n - pos);
    size_t name = pos, name_len;
    uint32_t mode[3];

    if (nul == NULL)
      return false;
    name_len = (size_t)(nul - (e + pos));
    pos += name_len + 1;
    if (pos >= n)
      return false;
    for (int i = 0; i < 3; i++) {
      const unsigned char *z = memchr(e + pos, '\0', n - pos);
      char *end;
      if (z == NULL)
        return false;
      mode[i] = (uint32_t)strtoul((const char *)e + pos, &end, 8);
      if (end == (const char *)e + pos || end != (const char *)z)
        return false;
      pos = (size_t)(z - e) + 1;
      if (pos >= n)
        return false;
    }
    for (int i = 0; i < 3; i++) {
      if (mode[i] == 0)
        continue;
      if (n - pos < hlen)
        return false;
      visit(s, (const char *)e + name, name_len, mode[i], e + pos, hlen, 0);
      pos += hlen;
    }
  }
  return true;
}

/* Set by walk when entries parsed but an extension git's threaded reader
 * reads elsewhere (EOIE, IEOT) did not agree: the index is refused, not
 * read again as of another hash size. */
static bool walk_refused;

/* Walk the index p (n bytes) with hash size hlen, each entry to fn: does it
 * parse to its trailing checksum?  *ret_link, *ret_link_n: the data of its
 * `link` extension (a split index), or NULL. */
static bool walk(const unsigned char *p, size_t n, size_t hlen, entry_fn fn, void *ctx,
                 const unsigned char **ret_link, size_t *ret_link_n)
{
  uint32_t version = be32(p + 4), count = be32(p + 8);
  size_t pos = 12, prev_len = 0, name_len;
  cleanup_free char *prev = NULL;
  cleanup_free char *name = NULL;

  cleanup_free size_t *starts = NULL; /* each entry's offset, and v4's prefix length */
  cleanup_free unsigned char *stripped = NULL;

  *ret_link = NULL;
  *ret_link_n = 0;
  if (count > n / (STAT_BYTES + hlen + 2))
    return false; /* more entries than the bytes can hold */
  starts = xmalloc(((size_t)count + 1) * sizeof *starts);
  stripped = xmalloc0((size_t)count + 1);
  for (uint32_t i = 0; i < count; i++) {
    size_t start = pos, fixed = STAT_BYTES + hlen + 2;
    starts[i] = pos;
    unsigned flags, hide = 0;
    if (n - pos < fixed)
      return false;
    flags = (unsigned)p[pos + fixed - 2] << 8 | p[pos + fixed - 1];
    if (flags & 0x8000)
      hide |= HIDE_ASSUME_VALID;
    if (flags & 0x3000)
      hide |= FLAG_STAGE;
    /* git reads extended flags wherever the bit is set (a version 2 index
     * too, which git never writes so): the name would start elsewhere */
    if ((flags & 0x4000) && version < 3)
      return false;
    if (flags & 0x4000) {
      if (n - pos < fixed + 2)
        return false;
      if (p[pos + fixed] & 0x40) /* the extended flags' skip-worktree, 0x4000 */
        hide |= HIDE_SKIP_WORKTREE;
      if (p[pos + fixed] & 0x20) /* intent-to-add, 0x2000 */
        hide |= FLAG_ITA;
      fixed += 2;
    }
    pos += fixed;
    if (pos > n)
      return false;
    if (version == 4) {
      size_t strip;
      const unsigned char *nul;
      if (!varint(p, n, &pos, &strip) || strip > prev_len ||
          (nul = memchr(p + pos, '\0', n - pos)) == NULL)
        return false;
      stripped[i] = strip > 0;
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
    /* git takes the name's length from the flags (and from it where the
     * next entry starts), its NUL only past 0xfff: they must agree */
    if ((flags & 0xfff) < 0xfff ? name_len != (flags & 0xfff) : name_len < 0xfff)
      return false;
    name[name_len] = '\0';
    fn(ctx, name, name_len, be32(p + start + MODE_OFFSET), p + start + STAT_BYTES, hlen, hide);
    free(prev);
    prev = name;
    prev_len = name_len;
    name = NULL;
  }
  /* git's threaded reader takes the extensions (and the IEOT among them)
   * from where an end-of-entries extension (EOIE) at the index's end says,
   * not from the end of the entries: it must say where they start here */
  if (n - pos >= 12 + 2 * hlen) {
    const unsigned char *e = p + n - hlen - (12 + hlen);
    if (memcmp(e, "EOIE", 4) == 0 && be32(e + 4) == 4 + hlen && be32(e + 8) != pos)
      return !(walk_refused = true);
  }
  while (n - pos > hlen) { /* extensions: signature, size, data */
    uint32_t size;
    if (n - pos - hlen < 8)
      return false;
    size = be32(p + pos + 4);
    if (size > n - pos - hlen - 8)
      return false;
    if (memcmp(p + pos, "link", 4) == 0) {
      *ret_link = p + pos + 8;
      *ret_link_n = size;
    }
    /* the entry offset table a threaded git reads blocks by: its blocks must
     * be the sequence read here, each starting an entry (of v4 with its whole
     * name, as git writes it), or git reads other entries than these */
    if (memcmp(p + pos, "IEOT", 4) == 0 && !ieot_ok(p + pos + 8, size, starts, stripped, count))
      return !(walk_refused = true);
    if (memcmp(p + pos, "REUC", 4) == 0 && p == reuc_of.p &&
        !reuc_read(p + pos + 8, size, hlen, reuc_of.s))
      return false;
    if (memcmp(p + pos, "TREE", 4) == 0 && p == tree_of.p) {
      tree_of.tree = p + pos + 8;
      tree_of.tree_n = size;
    }
    if (memcmp(p + pos, "FSMN", 4) == 0 && p == tree_of.p) {
      tree_of.fsmn = p + pos + 8;
      tree_of.fsmn_n = size;
    }
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

static void no_entry(void *ctx, const char *name, size_t n, uint32_t mode, const unsigned char *oid,
                     size_t hlen, unsigned hide)
{
  (void)ctx, (void)name, (void)n, (void)mode, (void)oid, (void)hlen, (void)hide;
}

/* An index to scan: its bytes and hash size; for a split index, its shared
 * index and one bit per shared entry for those it deletes and replaces. */
struct idx {
  const unsigned char *p;
  size_t n, hlen;
  unsigned char *base; /* the shared index's bytes, or NULL */
  size_t base_n;
  uint32_t count; /* the shared index's entries */
  unsigned char *del, *rep;
};

static void idx_free(struct idx *ix)
{
  free(ix->base);
  free(ix->del);
  free(ix->rep);
  *ix = (struct idx){0};
}

static uint64_t be64(const unsigned char *p)
{
  return (uint64_t)be32(p) << 32 | be32(p + 4);
}

static bool bit(const unsigned char *bits, uint64_t i)
{
  return bits[i / 8] & (1u << (i % 8));
}

/* Read one EWAH bitmap as git writes it (ewah_io.c: a bit count, a word
 * count, the 64-bit words, the last run-length word's position) from p (n
 * bytes) into bits, one per shared entry (count of them): its size, or 0
 * when it does not parse or sets a bit at or past count (git refuses that). */
static size_t ewah_read(const unsigned char *p, size_t n, unsigned char *bits, uint32_t count)
{
  size_t words, w = 0;
  uint64_t pos = 0;

  if (n < 12 || (words = be32(p + 4)) > (n - 12) / 8)
    return 0;
  while (w < words) {
    uint64_t rlw = be64(p + 8 + 8 * w++), run = ((rlw >> 1) & 0xffffffffu) * 64;
    if ((rlw & 1) && run > count - pos)
      return 0; /* a run of set bits past count */
    for (uint64_t k = 0; (rlw & 1) && k < run; k++, pos++)
      bits[pos / 8] |= (unsigned char)(1u << (pos % 8));
    if (!(rlw & 1))
      pos = run < count - pos ? pos + run : count; /* pos stays at most count */
    for (uint64_t k = 0; k < rlw >> 33; k++) {
      uint64_t lit;
      if (w == words)
        return 0; /* literal words past the end */
      lit = be64(p + 8 + 8 * w++);
      for (unsigned c = 0; c < 64; c++, pos++) {
        if (!(lit >> c & 1))
          continue;
        if (pos >= count)
          return 0;
        bits[pos / 8] |= (unsigned char)(1u << (pos % 8));
      }
      if (pos > count)
        pos = count; /* any bit from here on is past count too */
    }
  }
  return 12 + 8 * words;
}

/* Read the shared index named by the link extension (link, link_n bytes) of
 * ix into it, with the bitmaps, as git does (split-index.c): by sh, in the
 * agent's workspace unless host, and there the same bytes as the host's file
 * of that name when the host has one (git never rewrites a shared index: the
 * host's index may read it).  False when git could not merge it, or it
 * cannot be read. */
static bool shared_read(struct idx *ix, const unsigned char *link, size_t link_n,
                        const struct ws_git_shared *sh, bool host)
{
  char name[sizeof "sharedindex." + 2 * MAX_HASH];
  const unsigned char *blink;
  size_t blink_n, dn;
  cleanup_close int fd = -1, hfd = -1;

  memcpy(name, "sharedindex.", sizeof "sharedindex." - 1);
  ws_hex(link, ix->hlen, name + sizeof "sharedindex." - 1);
  if (sh == NULL || (fd = sh->open(sh->ctx, name, host)) < 0 ||
      !read_index(fd, &ix->base, &ix->base_n))
    return false;
  if (!host && (hfd = sh->open(sh->ctx, name, true)) >= 0) {
    cleanup_free unsigned char *hp = NULL;
    size_t hn;
    if (!read_index(hfd, &hp, &hn) || hn != ix->base_n || memcmp(hp, ix->base, hn) != 0)
      return false;
  }
  /* git takes it when its checksum is the link's id, and reads no link of its own */
  if (ix->base_n < 12 + ix->hlen || memcmp(ix->base, "DIRC", 4) != 0 || be32(ix->base + 4) < 2 ||
      be32(ix->base + 4) > 4 ||
      !walk(ix->base, ix->base_n, ix->hlen, no_entry, NULL, &blink, &blink_n) || blink != NULL ||
      memcmp(ix->base + ix->base_n - ix->hlen, link, ix->hlen) != 0)
    return false;
  ix->count = be32(ix->base + 8);
  ix->del = xmalloc0(ix->count / 8 + 1);
  ix->rep = xmalloc0(ix->count / 8 + 1);
  link += ix->hlen;
  link_n -= ix->hlen;
  if (link_n > 0) {
    if ((dn = ewah_read(link, link_n, ix->del, ix->count)) == 0 ||
        ewah_read(link + dn, link_n - dn, ix->rep, ix->count) != link_n - dn)
      return false;
  }
  for (uint32_t i = 0; i <= ix->count / 8; i++)
    if (ix->del[i] & ix->rep[i])
      return false; /* deleted and replaced: git refuses it */
  return true;
}

/* Prepare ix for the index p (n bytes): its hash size (SHA-1, else
 * SHA-256; only: that one alone, 0 for either) and, for a split index, its
 * shared index (shared_read).  False when it does not parse or merge. */
static bool idx_prepare(struct idx *ix, const unsigned char *p, size_t n,
                        const struct ws_git_shared *sh, bool host, size_t only)
{
  const unsigned char *link = NULL;
  size_t link_n = 0;
  uint32_t version;
  bool split = false;

  *ix = (struct idx){.p = p, .n = n};
  if (n < 12 || memcmp(p, "DIRC", 4) != 0 || (version = be32(p + 4)) < 2 || version > 4)
    return false;
  walk_refused = false;
  if (only != 32 && walk(p, n, 20, no_entry, NULL, &link, &link_n))
    ix->hlen = 20;
  else if (only != 20 && !walk_refused && walk(p, n, 32, no_entry, NULL, &link, &link_n))
    ix->hlen = 32;
  else
    return false;
  if (link == NULL)
    return true;
  if (link_n < ix->hlen)
    return false;
  for (size_t i = 0; i < ix->hlen; i++)
    split = split || link[i] != 0;
  /* an all-zero id: no shared index, and no entry without a name */
  return !split || shared_read(ix, link, link_n, sh, host);
}

/* The merge of a split index's entries with its shared index's. */
struct merge {
  struct scan *s;
  const struct idx *ix;
  struct repl {
    uint32_t mode;
    unsigned hide;
    unsigned char oid[MAX_HASH];
  } * r; /* the split index's entries without a name, in order */
  size_t nr, cap, pos, used;
};

/* An entry of the split index: one without a name replaces a shared entry. */
static void split_entry(void *vm, const char *name, size_t n, uint32_t mode,
                        const unsigned char *oid, size_t hlen, unsigned hide)
{
  struct merge *m = vm;

  if (n > 0) {
    visit(m->s, name, n, mode, oid, hlen, hide);
    return;
  }
  if (m->nr == m->cap) {
    m->cap = m->cap ? 2 * m->cap : 8;
    m->r = xrealloc(m->r, m->cap * sizeof *m->r);
  }
  m->r[m->nr].mode = mode;
  m->r[m->nr].hide = hide;
  memcpy(m->r[m->nr++].oid, oid, hlen);
}

/* An entry of the shared index: deleted, kept, or replaced by the next
 * nameless entry of the split index (its path, their mode and id). */
static void shared_entry(void *vm, const char *name, size_t n, uint32_t mode,
                         const unsigned char *oid, size_t hlen, unsigned hide)
{
  struct merge *m = vm;
  uint64_t i = m->pos++;

  if (bit(m->ix->del, i))
    return;
  if (!bit(m->ix->rep, i)) {
    visit(m->s, name, n, mode, oid, hlen, hide);
    return;
  }
  if (m->used < m->nr)
    visit(m->s, name, n, m->r[m->used].mode, m->r[m->used].oid, hlen, m->r[m->used].hide);
  m->used++;
}

/* One walk of the entries of ix into s, a split index's merged with its
 * shared index's as git merges them: false when git would refuse them. */
static bool scan_pass(struct scan *s, const struct idx *ix)
{
  struct merge m = {.s = s, .ix = ix};
  const unsigned char *link;
  size_t link_n;
  bool ok;

  if (s->mode != SCAN_ALL) { /* the resolve-undo stages are entries to check, not of the trees */
    reuc_of.p = ix->p;
    reuc_of.s = s;
  }
  if (ix->base == NULL)
    ok = walk(ix->p, ix->n, ix->hlen, visit, s, &link, &link_n);
  else
    ok = walk(ix->p, ix->n, ix->hlen, split_entry, &m, &link, &link_n) &&
         walk(ix->base, ix->base_n, ix->hlen, shared_entry, &m, &link, &link_n) && m.used == m.nr;
  reuc_of.p = NULL;
  free(m.r);
  return ok;
}

/* The risky entries of the host's index open at host_fd into s, sorted
 * (none when there is no index or it does not parse). */
static void host_entries(int host_fd, const struct ws_git_shared *sh, struct scan *s)
{
  cleanup_free unsigned char *p = NULL;
  struct idx ix = {0};
  size_t n;

  if (host_fd >= 0 && read_index(host_fd, &p, &n) && idx_prepare(&ix, p, n, sh, true, 0) &&
      !scan_pass(s, &ix))
    scan_reset(s);
  idx_free(&ix);
  if (s->n > 1)
    qsort(s->v, s->n, sizeof *s->v, entry_cmp);
}

static const char *risk_reason(const struct entry *e, char *const *patterns)
{
  const char *pat = NULL;

  if (e->hide)
    return "a git index that hides a file from the host's git status (skip-worktree or "
           "assume-unchanged, as `git sparse-checkout` sets: the host's git would neither show "
           "its file changed or gone nor restore it)";
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

static int entry_path_cmp(const void *va, const void *vb)
{
  return strcmp(((const struct entry *)va)->path, ((const struct entry *)vb)->path);
}

/* The id of the tree git writes for the entries v[lo, hi) (sorted, all
 * below the directory whose path with its '/' is plen bytes): false when
 * they cannot make one (an unmerged stage). */
static uint64_t tree_budget; /* entries tree_id may still visit in one check */

static bool tree_id(const struct entry *v, size_t lo, size_t hi, size_t plen, size_t hlen,
                    unsigned char *out)
{
  cleanup_free unsigned char *buf = NULL;
  size_t len = 0, cap = 0;
  bool ok = true;

  /* nested valid nodes build their subtrees again: git's own indexes cost
   * their depth times their entries, a forged nest of thousands of
   * directories would cost hours */
  if (hi - lo > tree_budget)
    return false;
  tree_budget -= hi - lo;

  for (size_t i = lo; ok && i < hi;) {
    const char *rest = v[i].path + plen, *slash = strchr(rest, '/');
    size_t nlen = slash ? (size_t)(slash - rest) : strlen(rest), j = i + 1;
    unsigned char id[MAX_HASH];
    char mode[16];
    uint32_t m = v[i].mode;
    if (v[i].hide & FLAG_STAGE)
      return false;
    if (slash && slash[1] != '\0') { /* a subtree: the run of entries below rest/ */
      while (j < hi && strncmp(v[j].path + plen, rest, nlen + 1) == 0)
        j++;
      ok = tree_id(v, i, j, plen + nlen + 1, hlen, id);
      m = GIT_S_IFDIR;
    } else if (v[i].hide & FLAG_ITA) {
      i = j;
      continue;
    } else {
      memcpy(id, v[i].oid, hlen);
      if ((m & GIT_S_IFMT) == GIT_S_IFDIR) /* a sparse directory entry, `dir/` */
        m = GIT_S_IFDIR;
    }
    if (ok) {
      int k = snprintf(mode, sizeof mode, "%o ", m);
      if (len + (size_t)k + nlen + 1 + hlen > cap) {
        cap = 2 * (len + (size_t)k + nlen + 1 + hlen) + 256;
        buf = xrealloc(buf, cap);
      }
      memcpy(buf + len, mode, (size_t)k);
      len += (size_t)k;
      memcpy(buf + len, rest, nlen);
      len += nlen;
      buf[len++] = '\0';
      memcpy(buf + len, id, hlen);
      len += hlen;
    }
    i = j;
  }
  if (ok)
    ws_git_object_id(hlen, "tree", buf ? buf : (const unsigned char *)"", len, out);
  return ok;
}

/* The entries of v (n, sorted) below the directory dir (dlen bytes, "" the
 * root): [*lo, *hi). */
static void dir_range(const struct entry *v, size_t n, const char *dir, size_t dlen, size_t *lo,
                      size_t *hi)
{
  size_t a = 0, b = n;

  if (dlen == 0) {
    *lo = 0;
    *hi = n;
    return;
  }
  while (a < b) { /* the first path >= "dir/" */
    size_t mid = a + (b - a) / 2;
    int c = strncmp(v[mid].path, dir, dlen);
    if (c < 0 || (c == 0 && (unsigned char)v[mid].path[dlen] < '/'))
      a = mid + 1;
    else
      b = mid;
  }
  *lo = a;
  while (a < n && strncmp(v[a].path, dir, dlen) == 0 && v[a].path[dlen] == '/')
    a++;
  *hi = a;
}

/* strtol as git's cache-tree reader calls it on the bytes at *pos of t (n
 * bytes; git's buffer runs on past them): leading white space and a sign
 * taken.  False when no digit follows, or the run goes past what is copied. */
static bool tree_long(const unsigned char *t, size_t n, size_t *pos, long *ret)
{
  char tmp[96];
  size_t k = n - *pos < sizeof tmp - 1 ? n - *pos : sizeof tmp - 1;
  char *end;

  memcpy(tmp, t + *pos, k);
  tmp[k] = '\0';
  errno = 0;
  *ret = strtol(tmp, &end, 10);
  if (end == tmp || (size_t)(end - tmp) == sizeof tmp - 1 || errno == ERANGE)
    return false;
  *pos += (size_t)(end - tmp);
  return true;
}

/* Read one node of a TREE extension (and its subtrees) at *pos of t (n
 * bytes) as git's cache-tree reader does, the directory dir (dlen bytes):
 * the reason when a node git takes as valid (a count of 0 or more) does not
 * name the tree its entries make, or does not count them; "" when git
 * would not read it (it then drops the whole cached tree). */
static const char *tree_node(const unsigned char *t, size_t n, size_t *pos, const char *dir,
                             size_t dlen, const struct entry *v, size_t nv, size_t hlen,
                             unsigned depth)
{
  const unsigned char *nul = memchr(t + *pos, '\0', n - *pos), *nl;
  size_t nlen, plen = dlen, cp;
  long count, subs;
  cleanup_free char *path = NULL;
  const char *why = NULL;

  if (nul == NULL || depth > 4096)
    return "";
  nlen = (size_t)(nul - (t + *pos));
  path = xmalloc(dlen + nlen + 2);
  memcpy(path, dir, dlen);
  if (nlen > 0) {
    if (dlen > 0)
      path[plen++] = '/';
    memcpy(path + plen, t + *pos, nlen);
    plen += nlen;
  }
  path[plen] = '\0';
  cp = *pos += nlen + 1;
  if (!tree_long(t, n, &cp, &count) || !tree_long(t, n, &cp, &subs))
    return "";
  nl = memchr(t + *pos, '\n', n - *pos); /* git skips to the newline from the count's start */
  if (nl == NULL)
    return "";
  *pos = (size_t)(nl - t) + 1;
  if (count >= 0) {
    unsigned char id[MAX_HASH];
    size_t lo, hi;
    bool ok;
    if (n - *pos < hlen)
      return "";
    dir_range(v, nv, path, plen, &lo, &hi);
    if (hi - lo == 1 && plen > 0 && strlen(v[lo].path) == plen + 1 &&
        (v[lo].mode & GIT_S_IFMT) == GIT_S_IFDIR) { /* a sparse directory entry, `dir/` */
      memcpy(id, v[lo].oid, hlen);
      ok = true;
    } else {
      ok = tree_id(v, lo, hi, plen ? plen + 1 : 0, hlen, id);
    }
    if ((uint64_t)count != hi - lo || !ok || memcmp(id, t + *pos, hlen) != 0)
      why = "a git index whose cached trees (TREE extension) are not the trees of its entries, "
            "or that agentrt cannot build (the host's `git commit` would record them: a tree of "
            "the agent's choosing in the host's history, written by the next `git reset --hard`)";
    *pos += hlen;
  }
  for (long i = 0; why == NULL && i < subs; i++)
    why = tree_node(t, n, pos, path, plen, v, nv, hlen, depth + 1);
  return why;
}

/* The cached trees of ix (its TREE extension) checked against its entries:
 * git's `commit` and `write-tree` take a valid node's id without reading
 * the entries below it. */
static const char *cache_tree_reason(const struct idx *ix)
{
  struct scan all = {.mode = SCAN_ALL};
  const unsigned char *tree;
  size_t tree_n, pos = 0;
  const char *why = NULL;

  tree_of.p = ix->p;
  tree_of.tree = NULL;
  tree_of.tree_n = 0;
  {
    const unsigned char *link;
    size_t link_n;
    walk(ix->p, ix->n, ix->hlen, no_entry, NULL, &link, &link_n);
  }
  tree = tree_of.tree;
  tree_n = tree_of.tree_n;
  tree_of.p = NULL;
  if (tree == NULL)
    return NULL;
  if (!scan_pass(&all, ix))
    return UNREADABLE;
  tree_budget = 64 * (uint64_t)all.n + 1000000;
  if (all.n > 1)
    qsort(all.v, all.n, sizeof *all.v, entry_path_cmp);
  /* git reads one tree, the root (an empty name), and drops it all when
   * any of it does not parse */
  if (tree_n > 0 && tree[0] == '\0')
    why = tree_node(tree, tree_n, &pos, "", 0, all.v, all.n, ix->hlen, 0);
  scan_reset(&all);
  return why && *why ? why : NULL;
}

/* The data of the FSMN extension of the index p (n bytes, hash size hlen),
 * or NULL; *ret_n: its size. */
static const unsigned char *fsmn_of(const unsigned char *p, size_t n, size_t hlen, size_t *ret_n)
{
  const unsigned char *link, *f;
  size_t link_n;

  tree_of.p = p;
  tree_of.fsmn = NULL;
  tree_of.fsmn_n = 0;
  if (!walk(p, n, hlen, no_entry, NULL, &link, &link_n))
    tree_of.fsmn = NULL;
  f = tree_of.fsmn;
  *ret_n = tree_of.fsmn_n;
  tree_of.p = NULL;
  return f;
}

/* The FSMN data f (n bytes): its token (a version 1 timestamp as decimal
 * text into buf, or a version 2 token), and in *ret_bits the position of its
 * EWAH bitmap (of the dirty entries); NULL when it does not parse. */
static const char *fsmn_token(const unsigned char *f, size_t n, char *buf, size_t bufn,
                              size_t *ret_bits)
{
  const unsigned char *nul;

  if (n >= 12 && be32(f) == 1) {
    snprintf(buf, bufn, "%llu", (unsigned long long)be64(f + 4));
    *ret_bits = 12;
    return buf;
  }
  if (n < 4 || be32(f) != 2 || (nul = memchr(f + 4, '\0', n - 4)) == NULL)
    return NULL;
  *ret_bits = (size_t)(nul - f) + 1;
  return (const char *)f + 4;
}

/* Does the EWAH bitmap at f + pos (of n bytes in all: its size, then it)
 * mark each of count entries? */
static bool fsmn_all_dirty(const unsigned char *f, size_t n, size_t pos, uint32_t count)
{
  cleanup_free unsigned char *bits = NULL;
  size_t size;

  if (n - pos < 4 || (size = be32(f + pos)) > n - pos - 4)
    return false;
  bits = xmalloc0((size_t)count / 8 + 1);
  if (ewah_read(f + pos + 4, size, bits, count) == 0)
    return false;
  for (uint32_t i = 0; i < count; i++)
    if (!(bits[i / 8] & (1u << (i % 8))))
      return false;
  return true;
}

/* git's file-system monitor data (FSMN): on a host with core.fsmonitor, git
 * takes every entry its bitmap does not mark dirty as unchanged unless the
 * monitor names it as changed since the token, and lstats none of them: a
 * token of the agent's choosing (a time to come, another monitor's clock)
 * hides the agent's changes.  It passes when its token is a time already
 * past (what git writes where no monitor answers: the commit's writes come
 * after it), the host's index's own token, or it marks every entry dirty. */
static const char *fsmn_reason(const struct idx *ix, int host_fd)
{
  cleanup_free unsigned char *hp = NULL;
  const unsigned char *f, *hf;
  const char *tok, *htok;
  char buf[32], hbuf[32];
  size_t fn, hn, hfn, bits, hbits;
  struct timespec now;

  if ((f = fsmn_of(ix->p, ix->n, ix->hlen, &fn)) == NULL)
    return NULL;
  if ((tok = fsmn_token(f, fn, buf, sizeof buf, &bits)) != NULL) {
    char *end;
    unsigned long long t;
    errno = 0;
    t = strtoull(tok, &end, 10);
    if (*tok >= '0' && *tok <= '9' && *end == '\0' && errno == 0 &&
        clock_gettime(CLOCK_REALTIME, &now) == 0 &&
        t <= (unsigned long long)now.tv_sec * 1000000000ull + (unsigned long long)now.tv_nsec)
      return NULL;
    if (host_fd >= 0 && read_index(host_fd, &hp, &hn) && hn >= 12 + ix->hlen &&
        (hf = fsmn_of(hp, hn, ix->hlen, &hfn)) != NULL &&
        (htok = fsmn_token(hf, hfn, hbuf, sizeof hbuf, &hbits)) != NULL && streq(htok, tok))
      return NULL;
    if (ix->base == NULL && fsmn_all_dirty(f, fn, bits, be32(ix->p + 8)))
      return NULL;
  }
  /* the host's index's own data, byte for byte (its token parsed or not) */
  free(hp);
  hp = NULL;
  if (host_fd >= 0 && read_index(host_fd, &hp, &hn) && hn >= 12 + ix->hlen &&
      (hf = fsmn_of(hp, hn, ix->hlen, &hfn)) != NULL && hfn == fn && memcmp(hf, f, fn) == 0)
    return NULL;
  return "a git index whose file-system monitor data (FSMN) marks files unchanged under a token "
         "that is neither a time past nor the host's (with core.fsmonitor the host's git status, "
         "diff and checkout would take the agent's changes to them as none)";
}

/* The hash size of the host's index: 20 or 32, the one it reads as (0 when
 * there is none or it does not parse).  git knows it from the repository;
 * the same bytes may read as either (an index refused as SHA-1 was read
 * again as SHA-256), so the agent's must read as the host's does. */
static size_t host_hlen(int host_fd)
{
  cleanup_free unsigned char *p = NULL;
  const unsigned char *link;
  size_t n, link_n;

  if (host_fd < 0 || !read_index(host_fd, &p, &n) || n < 12 || memcmp(p, "DIRC", 4) != 0)
    return 0;
  walk_refused = false;
  if (walk(p, n, 20, no_entry, NULL, &link, &link_n))
    return 20;
  return !walk_refused && walk(p, n, 32, no_entry, NULL, &link, &link_n) ? 32 : 0;
}

/* The agent's index is walked twice (paths, then its risky entries against
 * the host's), so that only the host's risky entries are kept in memory.
 * hlen: the repository's hash size (its config); 0: the host index's. */
const char *ws_git_index_reason(int fd, int host_fd, const struct ws_git_shared *sh,
                                char *const *patterns, size_t hlen, char **ret_path)
{
  cleanup_free unsigned char *p = NULL;
  struct scan s = {.patterns = patterns, .mode = SCAN_PATHS};
  struct scan host = {.patterns = patterns, .mode = SCAN_COLLECT};
  struct idx ix = {0};
  const char *why = NULL;
  size_t n;

  *ret_path = NULL;
  if (!read_index(fd, &p, &n) ||
      !idx_prepare(&ix, p, n, sh, false, hlen ? hlen : host_hlen(host_fd)) || !scan_pass(&s, &ix))
    why = UNREADABLE;
  else if (s.bad) {
    *ret_path = s.bad;
    s.bad = NULL;
    why = "a git index naming a path inside `.git` or out of the work tree (`git checkout -- .` "
          "writes it there)";
  } else if (s.risky > 0) {
    host_entries(host_fd, sh, &host);
    scan_reset(&s);
    s = (struct scan){.patterns = patterns, .mode = SCAN_CHECK, .known = host.v, .n_known = host.n};
    if (!scan_pass(&s, &ix)) /* it parsed before: not expected */
      why = UNREADABLE;
    else if (s.n > 0) {
      why = risk_reason(&s.v[0], patterns);
      *ret_path = xstrdup(s.v[0].path);
    }
  }
  if (why == NULL)
    why = cache_tree_reason(&ix);
  if (why == NULL)
    why = fsmn_reason(&ix, host_fd);
  scan_reset(&s);
  scan_reset(&host);
  idx_free(&ix);
  return why;
}
