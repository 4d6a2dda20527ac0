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
 * A split index (`git update-index --split-index`, core.splitIndex) holds
 * only the entries changed since its shared index `sharedindex.<id>` (its
 * `link` extension names it, with a delete and a replace bitmap); a replaced
 * entry has no name of its own.  Its entries are checked as git merges them
 * with the shared one; a shared index that cannot be read, or that the agent
 * rewrote under the host's name, makes it unreadable.
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
/* Bits of an entry that keep git status from showing its file: assume
 * unchanged (`git update-index --assume-unchanged`) and skip-worktree
 * (sparse-checkout, `--skip-worktree`). */
#define HIDE_ASSUME_VALID 1u
#define HIDE_SKIP_WORKTREE 2u

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
  struct entry e = {.path = (char *)name, .mode = mode, .hide = hide, .hlen = hlen};

  /* a sparse index's directory entries end in '/' */
  if (s->bad == NULL && !ws_git_path_ok(name, n - (n > 0 && name[n - 1] == '/')))
    s->bad = xstrdup(name);
  if (s->mode == SCAN_CHECK && s->n > 0)
    return;
  if (hide == 0 && !ws_git_entry_risky(name, mode, s->patterns))
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

  *ret_link = NULL;
  *ret_link_n = 0;
  for (uint32_t i = 0; i < count; i++) {
    size_t start = pos, fixed = STAT_BYTES + hlen + 2;
    unsigned flags, hide = 0;
    if (n - pos < fixed)
      return false;
    flags = (unsigned)p[pos + fixed - 2] << 8 | p[pos + fixed - 1];
    if (flags & 0x8000)
      hide |= HIDE_ASSUME_VALID;
    if ((flags & 0x4000) && version >= 3) {
      if (n - pos < fixed + 2)
        return false;
      if (p[pos + fixed] & 0x40) /* the extended flags' skip-worktree, 0x4000 */
        hide |= HIDE_SKIP_WORKTREE;
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
    fn(ctx, name, name_len, be32(p + start + MODE_OFFSET), p + start + STAT_BYTES, hlen, hide);
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
    if (memcmp(p + pos, "link", 4) == 0) {
      *ret_link = p + pos + 8;
      *ret_link_n = size;
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
 * SHA-256) and, for a split index, its shared index (shared_read).  False
 * when it does not parse or merge. */
static bool idx_prepare(struct idx *ix, const unsigned char *p, size_t n,
                        const struct ws_git_shared *sh, bool host)
{
  const unsigned char *link = NULL;
  size_t link_n = 0;
  uint32_t version;
  bool split = false;

  *ix = (struct idx){.p = p, .n = n};
  if (n < 12 || memcmp(p, "DIRC", 4) != 0 || (version = be32(p + 4)) < 2 || version > 4)
    return false;
  if (walk(p, n, 20, no_entry, NULL, &link, &link_n))
    ix->hlen = 20;
  else if (walk(p, n, 32, no_entry, NULL, &link, &link_n))
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

  if (ix->base == NULL)
    return walk(ix->p, ix->n, ix->hlen, visit, s, &link, &link_n);
  ok = walk(ix->p, ix->n, ix->hlen, split_entry, &m, &link, &link_n) &&
       walk(ix->base, ix->base_n, ix->hlen, shared_entry, &m, &link, &link_n) && m.used == m.nr;
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

  if (host_fd >= 0 && read_index(host_fd, &p, &n) && idx_prepare(&ix, p, n, sh, true) &&
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

/* The agent's index is walked twice (paths, then its risky entries against
 * the host's), so that only the host's risky entries are kept in memory. */
const char *ws_git_index_reason(int fd, int host_fd, const struct ws_git_shared *sh,
                                char *const *patterns, char **ret_path)
{
  cleanup_free unsigned char *p = NULL;
  struct scan s = {.patterns = patterns, .mode = SCAN_PATHS};
  struct scan host = {.patterns = patterns, .mode = SCAN_COLLECT};
  struct idx ix = {0};
  const char *why = NULL;
  size_t n;

  *ret_path = NULL;
  if (!read_index(fd, &p, &n) || !idx_prepare(&ix, p, n, sh, false) || !scan_pass(&s, &ix))
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
  scan_reset(&s);
  scan_reset(&host);
  idx_free(&ix);
  return why;
}
