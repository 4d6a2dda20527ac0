/* gitobjects.c - the trees of the commits a git ref of the agent's names.
 *
 * A ref (`refs/...`, `packed-refs`, `HEAD`, ...) is committed as git's data,
 * and the operator's `git checkout -- .`, `git restore .` or `git reset
 * --hard` then writes every entry of the commit it names: a `.envrc`, a
 * cached Python bytecode (`*.pyc`) or a symlink to /etc/shadow that the review held back
 * as a file comes back through the agent's history.  So the tree of such a
 * commit is read here and compared with the tree of the commit the host's
 * ref named, descending only into subtrees whose object ids differ (the
 * cost follows the change, not the repository), and an entry is risky as in
 * a git index (gitindex.c): a path git would never write, or a new or
 * changed protected path, symlink or gitlink.
 *
 * Objects are read from the layers of the review, upper first, then the
 * host dir: loose objects (zlib) and packs (`.idx` version 2, with
 * OFS_DELTA and REF_DELTA chains applied iteratively), SHA-1 or SHA-256 (the
 * width of the ids).  Every copy of an object that the layers hold is read
 * and its id checked against its content: git reads a pack's copy before a
 * loose one and checks neither, so a forged copy anywhere would be the one
 * checked out.  What cannot be read, checked or is over a limit is refused.
 *
 * The object files the agent wrote are checked too, whatever ref changed
 * (ws_git_objfile_reason): every object of a loose file or a pack must be
 * the one its name or index entry gives, or the host's unchanged HEAD
 * could name the agent's forged copy of its tree.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "common/sha256.h"
#include "common/util.h"
#include "workspace/internal.h"

#define MAX_OBJECT ((size_t)64 << 20)      /* bytes of one object (or delta) */
#define MAX_CHAIN_WORK ((uint64_t)1 << 30) /* bytes a delta chain may inflate and produce */
#define MAX_DELTA_DEPTH 4096               /* git's own limit for `repack --depth` */
#define MAX_TAG_DEPTH 16
#define MAX_TREE_DEPTH 4096
#define MAX_TREE_ENTRIES 10000000           /* entries visited by one comparison */
#define MAX_TREE_HELD ((uint64_t)256 << 20) /* bytes of trees open along one path */
#define MAX_PATH_LEN 65536
#define MAX_PACKS 4096
#define MAX_COPIES 64 /* copies of one object in the layers */

enum {
  OBJ_COMMIT = 1,
  OBJ_TREE = 2,
  OBJ_BLOB = 3,
  OBJ_TAG = 4,
  OBJ_OFS_DELTA = 6,
  OBJ_REF_DELTA = 7
};

static const char *const type_names[] = {NULL, "commit", "tree", "blob", "tag"};

/* --- SHA-1 (FIPS 180-4), for ids of SHA-1 repositories ------------------- */

struct sha1 {
  uint32_t h[5];
  uint64_t total;
  unsigned char buf[64];
  size_t n;
};

static uint32_t rol(uint32_t x, unsigned k)
{
  return x << k | x >> (32 - k);
}

static void sha1_block(struct sha1 *s, const unsigned char *p)
{
  uint32_t w[80], a = s->h[0], b = s->h[1], c = s->h[2], d = s->h[3], e = s->h[4];

  for (int i = 0; i < 16; i++)
    w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 |
           p[4 * i + 3];
  for (int i = 16; i < 80; i++)
    w[i] = rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
  for (int i = 0; i < 80; i++) {
    uint32_t f, k, t;
    if (i < 20) {
      f = (b & c) | (~b & d);
      k = 0x5a827999;
    } else if (i < 40) {
      f = b ^ c ^ d;
      k = 0x6ed9eba1;
    } else if (i < 60) {
      f = (b & c) | (b & d) | (c & d);
      k = 0x8f1bbcdc;
    } else {
      f = b ^ c ^ d;
      k = 0xca62c1d6;
    }
    t = rol(a, 5) + f + e + k + w[i];
    e = d;
    d = c;
    c = rol(b, 30);
    b = a;
    a = t;
  }
  s->h[0] += a;
  s->h[1] += b;
  s->h[2] += c;
  s->h[3] += d;
  s->h[4] += e;
}

static void sha1_init(struct sha1 *s)
{
  *s = (struct sha1){.h = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0}};
}

static void sha1_update(struct sha1 *s, const void *data, size_t len)
{
  const unsigned char *p = data;

  s->total += len;
  while (len > 0) {
    size_t k = 64 - s->n < len ? 64 - s->n : len;
    memcpy(s->buf + s->n, p, k);
    s->n += k;
    p += k;
    len -= k;
    if (s->n == 64) {
      sha1_block(s, s->buf);
      s->n = 0;
    }
  }
}

static void sha1_final(struct sha1 *s, unsigned char out[20])
{
  uint64_t bits = s->total * 8;
  unsigned char pad[72] = {0x80};
  size_t padlen = (s->n < 56 ? 56 : 120) - s->n;

  for (int i = 0; i < 8; i++)
    pad[padlen + i] = (unsigned char)(bits >> (56 - 8 * i));
  sha1_update(s, pad, padlen + 8);
  for (int i = 0; i < 5; i++) {
    out[4 * i] = (unsigned char)(s->h[i] >> 24);
    out[4 * i + 1] = (unsigned char)(s->h[i] >> 16);
    out[4 * i + 2] = (unsigned char)(s->h[i] >> 8);
    out[4 * i + 3] = (unsigned char)s->h[i];
  }
}

void ws_git_object_id(size_t hlen, const char *type, const unsigned char *data, size_t size,
                      unsigned char *out)
{
  char hdr[32];
  int k = snprintf(hdr, sizeof hdr, "%s %zu", type, size);

  if (hlen == 20) {
    struct sha1 s;
    sha1_init(&s);
    sha1_update(&s, hdr, (size_t)k + 1);
    sha1_update(&s, data, size);
    sha1_final(&s, out);
  } else {
    struct sha256 s;
    sha256_init(&s);
    sha256_update(&s, hdr, (size_t)k + 1);
    sha256_update(&s, data, size);
    sha256_final(&s, out);
  }
}

/* Is oid (hlen bytes) the id of an object of this type and content? */
static bool id_matches(const unsigned char *oid, size_t hlen, int type, const unsigned char *data,
                       size_t size)
{
  unsigned char out[32];

  ws_git_object_id(hlen, type_names[type], data, size, out);
  return memcmp(out, oid, hlen) == 0;
}

/* --- zlib streams read from a file with pread ---------------------------- */

struct zin {
  z_stream z;
  int fd;
  uint64_t pos, end; /* the next byte to read, the first not to */
  bool ended;
  unsigned char buf[16384];
};

static bool zin_init(struct zin *s, int fd, uint64_t pos, uint64_t end)
{
  memset(&s->z, 0, sizeof s->z);
  s->fd = fd;
  s->pos = pos;
  s->end = end;
  s->ended = false;
  return inflateInit(&s->z) == Z_OK;
}

/* More input when the stream has none left: false at the end of the file. */
static bool zin_fill(struct zin *s)
{
  size_t want = s->end - s->pos < sizeof s->buf ? (size_t)(s->end - s->pos) : sizeof s->buf;
  ssize_t k;

  if (s->z.avail_in > 0)
    return true;
  if (want == 0 || (k = pread(s->fd, s->buf, want, (off_t)s->pos)) <= 0)
    return false;
  s->pos += (uint64_t)k;
  s->z.next_in = s->buf;
  s->z.avail_in = (uInt)k;
  return true;
}

/* Inflate up to n bytes into out (exactly n unless the stream ends first):
 * the count, or -1 on an error. */
static ssize_t zin_inflate(struct zin *s, unsigned char *out, size_t n)
{
  s->z.next_out = out;
  s->z.avail_out = (uInt)n;
  while (s->z.avail_out > 0 && !s->ended) {
    int r;
    if (!zin_fill(s))
      return -1;
    r = inflate(&s->z, Z_NO_FLUSH);
    if (r == Z_STREAM_END)
      s->ended = true;
    else if (r != Z_OK)
      return -1;
  }
  return (ssize_t)(n - s->z.avail_out);
}

/* Inflate exactly n bytes into out. */
static bool zin_read(struct zin *s, unsigned char *out, size_t n)
{
  return zin_inflate(s, out, n) == (ssize_t)n;
}

/* Does the stream end here, with no byte more? */
static bool zin_at_end(struct zin *s)
{
  unsigned char c;

  return zin_inflate(s, &c, 1) == 0 && s->ended;
}

/* n bytes inflated from fd at pos (end: the file's size), which must be the
 * whole stream; NULL when not. */
static unsigned char *inflate_at(int fd, uint64_t pos, uint64_t end, size_t n)
{
  struct zin *s = xmalloc(sizeof *s);
  unsigned char *out = xmalloc(n ? n : 1);
  bool ok = zin_init(s, fd, pos, end);

  ok = ok && zin_read(s, out, n) && zin_at_end(s);
  inflateEnd(&s->z);
  free(s);
  if (!ok) {
    free(out);
    return NULL;
  }
  return out;
}

/* --- the object store ---------------------------------------------------- */

struct pack {
  int idx, pack; /* fds, or -1 before first use */
  int layer;
  char *name; /* "pack-<hex>" */
  bool opened, broken;
  uint32_t fanout[256];
  uint64_t idx_size, pack_size;
};

struct ws_gitodb {
  const int *fds; /* the layers, upper first, the host dir last */
  size_t n;
  char *objdir; /* "<gitdir>/objects" */
  struct pack *packs;
  size_t n_packs;
  bool unlisted; /* a pack directory could not be read */
  size_t trees_read;
  struct base_cache *bc; /* objects resolved last, for every read */
  uint64_t reads;        /* objects asked for: the budget of bc's steps */
};

static bool has_suffix(const char *s, const char *suf)
{
  size_t n = strlen(s), k = strlen(suf);
  return n >= k && strcmp(s + n - k, suf) == 0;
}

static bool regular_at(int dirfd, const char *name)
{
  struct stat st;
  return fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
}

/* The packs of one layer: every pack-*.idx beside its pack-*.pack. */
static void list_packs(struct ws_gitodb *db, int layer)
{
  cleanup_free char *path = xfmt("%s/pack", db->objdir);
  int fd = ws_open_beneath(db->fds[layer], path, O_RDONLY | O_DIRECTORY, 0);
  DIR *d;
  struct dirent *e;

  if (fd < 0) {
    if (errno != ENOENT && errno != ENOTDIR)
      db->unlisted = true;
    return;
  }
  d = fdopendir(fd);
  if (d == NULL) {
    close(fd);
    db->unlisted = true;
    return;
  }
  while ((e = readdir(d)) != NULL) {
    cleanup_free char *pname = NULL;
    size_t len = strlen(e->d_name);
    if (strncmp(e->d_name, "pack-", 5) != 0 || !has_suffix(e->d_name, ".idx") ||
        !regular_at(dirfd(d), e->d_name))
      continue;
    pname = xfmt("%.*s.pack", (int)(len - 4), e->d_name);
    if (!regular_at(dirfd(d), pname))
      continue; /* git uses no index without its pack */
    if (db->n_packs == MAX_PACKS) {
      db->unlisted = true;
      break;
    }
    db->packs = xrealloc(db->packs, (db->n_packs + 1) * sizeof *db->packs);
    db->packs[db->n_packs++] =
        (struct pack){.idx = -1, .pack = -1, .layer = layer, .name = xstrndup(e->d_name, len - 4)};
  }
  closedir(d);
}

struct base_cache;
static struct base_cache *base_cache_new(void);
static void base_cache_free(struct base_cache *bc);

struct ws_gitodb *ws_gitodb_open(const int *fds, size_t n, const char *gitdir)
{
  struct ws_gitodb *db = xmalloc0(sizeof *db);

  db->fds = fds;
  db->n = n;
  db->objdir = *gitdir ? xfmt("%s/objects", gitdir) : xstrdup("objects");
  db->bc = base_cache_new();
  for (size_t i = 0; i < n; i++)
    if (fds[i] >= 0)
      list_packs(db, (int)i);
  return db;
}

void ws_gitodb_free(struct ws_gitodb *db)
{
  if (db == NULL)
    return;
  for (size_t i = 0; i < db->n_packs; i++) {
    if (db->packs[i].idx >= 0)
      close(db->packs[i].idx);
    if (db->packs[i].pack >= 0)
      close(db->packs[i].pack);
    free(db->packs[i].name);
  }
  free(db->packs);
  free(db->objdir);
  base_cache_free(db->bc);
  free(db);
}

size_t ws_gitodb_trees_read(const struct ws_gitodb *db)
{
  return db->trees_read;
}

static uint32_t be32(const unsigned char *p)
{
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static bool pread_all(int fd, void *buf, size_t n, uint64_t off)
{
  size_t got = 0;

  while (got < n) {
    ssize_t k = pread(fd, (char *)buf + got, n - got, (off_t)(off + got));
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      return false;
    got += (size_t)k;
  }
  return true;
}

static int open_file(int rootfd, const char *path, uint64_t *ret_size)
{
  int fd = ws_open_beneath(rootfd, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK, 0);
  struct stat st;

  if (fd < 0)
    return -1;
  if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    errno = EINVAL;
    return -1;
  }
  *ret_size = (uint64_t)st.st_size;
  return fd;
}

/* Open p's index and pack and check their headers (version 2 index with a
 * monotonic fan-out; version 2 or 3 pack); p->broken when they are not. */
static bool pack_open(struct ws_gitodb *db, struct pack *p, size_t hlen)
{
  cleanup_free char *ipath = xfmt("%s/pack/%s.idx", db->objdir, p->name);
  cleanup_free char *ppath = xfmt("%s/pack/%s.pack", db->objdir, p->name);
  unsigned char hdr[8 + 1024], phdr[12];

  if (p->opened)
    return !p->broken;
  p->opened = true;
  p->broken = true;
  p->idx = open_file(db->fds[p->layer], ipath, &p->idx_size);
  p->pack = open_file(db->fds[p->layer], ppath, &p->pack_size);
  if (p->idx < 0 || p->pack < 0 || !pread_all(p->idx, hdr, sizeof hdr, 0) ||
      memcmp(hdr, "\377tOc\0\0\0\2", 8) != 0 || !pread_all(p->pack, phdr, sizeof phdr, 0) ||
      memcmp(phdr, "PACK", 4) != 0 || (be32(phdr + 4) != 2 && be32(phdr + 4) != 3))
    return false;
  for (int i = 0; i < 256; i++) {
    p->fanout[i] = be32(hdr + 8 + 4 * i);
    if (i > 0 && p->fanout[i] < p->fanout[i - 1])
      return false;
  }
  /* names, CRCs, offsets, the two checksums: the large offsets come after */
  if ((uint64_t)p->fanout[255] * (hlen + 8) + 1032 + 2 * hlen > p->idx_size ||
      p->pack_size < 12 + hlen)
    return false;
  p->broken = false;
  return true;
}

/* The offset in the pack of p's index entry i; -1 on a broken index. */
static int64_t pack_entry_off(struct pack *p, uint64_t i, size_t hlen)
{
  uint64_t n = p->fanout[255], offsets = 1032 + n * (hlen + 4), off;
  unsigned char ob[8];

  if (!pread_all(p->idx, ob, 4, offsets + i * 4))
    return -1;
  off = be32(ob);
  if (off & 0x80000000u) {
    uint64_t at = offsets + n * 4 + (off & 0x7fffffffu) * 8;
    if (at + 8 + 2 * hlen > p->idx_size || !pread_all(p->idx, ob, 8, at))
      return -1;
    off = (uint64_t)be32(ob) << 32 | be32(ob + 4);
  }
  if (off < 12 || off >= p->pack_size - hlen)
    return -1;
  return (int64_t)off;
}

/* The offset of oid in p, 0 when it is not there; -1 on a broken index. */
static int64_t pack_find(struct pack *p, const unsigned char *oid, size_t hlen)
{
  uint64_t lo = oid[0] ? p->fanout[oid[0] - 1] : 0, hi = p->fanout[oid[0]];
  uint64_t names = 1032;
  unsigned char name[32];

  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    int c;
    if (!pread_all(p->idx, name, hlen, names + mid * hlen))
      return -1;
    c = memcmp(name, oid, hlen);
    if (c < 0) {
      lo = mid + 1;
    } else if (c > 0) {
      hi = mid;
    } else {
      return pack_entry_off(p, mid, hlen);
    }
  }
  return 0;
}

/* One entry's header in a pack: type, size, and for a delta its base. */
struct entry_hdr {
  int type;
  size_t size;
  uint64_t data;          /* where its zlib stream starts */
  uint64_t base_off;      /* OFS_DELTA */
  unsigned char base[32]; /* REF_DELTA */
};

static bool entry_header_max(const struct pack *p, uint64_t off, size_t hlen, struct entry_hdr *h,
                             uint64_t max);

static bool entry_header(const struct pack *p, uint64_t off, size_t hlen, struct entry_hdr *h)
{
  return entry_header_max(p, off, hlen, h, MAX_OBJECT);
}

/* The same, with max the largest size taken (a pack entry's size may
 * exceed what memory holds: such an object is only streamed). */
static bool entry_header_max(const struct pack *p, uint64_t off, size_t hlen, struct entry_hdr *h,
                             uint64_t max)
{
  unsigned char b[64];
  size_t avail =
      p->pack_size - hlen - off < sizeof b ? (size_t)(p->pack_size - hlen - off) : sizeof b;
  size_t i = 0;
  uint64_t size;
  unsigned shift = 4;

  if (avail == 0 || !pread_all(p->pack, b, avail, off))
    return false;
  h->type = (b[0] >> 4) & 7;
  size = b[0] & 15;
  while (b[i++] & 0x80) {
    if (i >= avail || shift > 56)
      return false;
    size |= (uint64_t)(b[i] & 0x7f) << shift;
    shift += 7;
  }
  if (size > max || size > SIZE_MAX)
    return false;
  h->size = (size_t)size;
  if (h->type == OBJ_OFS_DELTA) {
    uint64_t rel;
    if (i >= avail)
      return false;
    rel = b[i] & 0x7f;
    while (b[i++] & 0x80) {
      if (i >= avail || rel > (UINT64_MAX >> 8))
        return false;
      rel = ((rel + 1) << 7) | (b[i] & 0x7f);
    }
    if (rel == 0 || rel > off - 12)
      return false;
    h->base_off = off - rel;
  } else if (h->type == OBJ_REF_DELTA) {
    if (avail - i < hlen)
      return false;
    memcpy(h->base, b + i, hlen);
    i += hlen;
  } else if (h->type < OBJ_COMMIT || h->type > OBJ_TAG) {
    return false;
  }
  h->data = off + i;
  return true;
}

/* A delta (n bytes) applied to base (bn bytes): the result, or NULL. */
static unsigned char *delta_apply(const unsigned char *base, size_t bn, const unsigned char *d,
                                  size_t n, size_t *ret_size)
{
  size_t pos = 0, sizes[2], out = 0;
  unsigned char *r;

  for (int k = 0; k < 2; k++) {
    uint64_t v = 0;
    unsigned shift = 0;
    unsigned char c;
    do {
      if (pos >= n || shift > 56)
        return NULL;
      c = d[pos++];
      v |= (uint64_t)(c & 0x7f) << shift;
      shift += 7;
    } while (c & 0x80);
    if (v > MAX_OBJECT)
      return NULL;
    sizes[k] = (size_t)v;
  }
  if (sizes[0] != bn)
    return NULL;
  r = xmalloc(sizes[1] ? sizes[1] : 1);
  while (pos < n) {
    unsigned char c = d[pos++];
    if (c & 0x80) { /* copy from the base: offset and size bytes as the bits say */
      size_t off = 0, len = 0;
      for (int b = 0; b < 4; b++)
        if (c & (1u << b)) {
          if (pos >= n)
            goto bad;
          off |= (size_t)d[pos++] << (8 * b);
        }
      for (int b = 0; b < 3; b++)
        if (c & (1u << (4 + b))) {
          if (pos >= n)
            goto bad;
          len |= (size_t)d[pos++] << (8 * b);
        }
      if (len == 0)
        len = 0x10000;
      if (off > bn || len > bn - off || len > sizes[1] - out)
        goto bad;
      memcpy(r + out, base + off, len);
      out += len;
    } else if (c != 0) { /* insert c literal bytes */
      if (c > n - pos || c > sizes[1] - out)
        goto bad;
      memcpy(r + out, d + pos, c);
      out += c;
      pos += c;
    } else {
      goto bad;
    }
  }
  if (out != sizes[1])
    goto bad;
  *ret_size = out;
  return r;
bad:
  free(r);
  return NULL;
}

static bool find_packed(struct ws_gitodb *db, const unsigned char *oid, size_t hlen,
                        struct pack **ret_p, uint64_t *ret_off);
static bool read_loose(struct ws_gitodb *db, int layer, const unsigned char *oid, size_t hlen,
                       int *ret_type, unsigned char **ret_data, size_t *ret_size);

/* The object at off in p: deltas are followed to their base (in this pack,
 * another, or a loose object for a REF_DELTA), then applied from the base
 * up.  Bounded by depth and by the bytes the chain produces. */
struct base_cache;
static bool read_packed_cached(struct ws_gitodb *db, struct pack *p, uint64_t off, size_t hlen,
                               struct base_cache *bc, int *ret_type, unsigned char **ret_data,
                               size_t *ret_size);

static bool read_packed(struct ws_gitodb *db, struct pack *p, uint64_t off, size_t hlen,
                        int *ret_type, unsigned char **ret_data, size_t *ret_size)
{
  return read_packed_cached(db, p, off, hlen, db->bc, ret_type, ret_data, ret_size);
}

/* Objects resolved last, by pack and offset (direct-mapped), each link of a
 * delta chain too: a pack checked in offset order finds each delta's base
 * here (git writes a base before its deltas), and a review that reads the
 * trees of a chain one by one walks it once, not once a tree. */
#define BASE_SLOTS 1024
#define BASE_BYTES ((size_t)128 << 20)
struct base_cache {
  struct {
    const struct pack *p;
    uint64_t off; /* 0: empty */
    int type;
    unsigned char *data;
    size_t size;
  } slot[BASE_SLOTS];
  size_t bytes;
  uint64_t steps; /* entries inflated: a budget against chains that defeat the cache */
};

static bool cache_get(struct base_cache *bc, const struct pack *p, uint64_t off, int *ret_type,
                      unsigned char **ret_data, size_t *ret_size)
{
  size_t i = (size_t)((off ^ (uintptr_t)p >> 4) % BASE_SLOTS);

  if (bc == NULL || bc->slot[i].p != p || bc->slot[i].off != off)
    return false;
  *ret_type = bc->slot[i].type;
  *ret_size = bc->slot[i].size;
  *ret_data = xmalloc(bc->slot[i].size ? bc->slot[i].size : 1);
  memcpy(*ret_data, bc->slot[i].data, bc->slot[i].size);
  return true;
}

static void cache_put(struct base_cache *bc, const struct pack *p, uint64_t off, int type,
                      const unsigned char *data, size_t size)
{
  size_t i = (size_t)((off ^ (uintptr_t)p >> 4) % BASE_SLOTS);

  if (bc == NULL || size > BASE_BYTES / 8)
    return;
  if (bc->slot[i].off) {
    bc->bytes -= bc->slot[i].size;
    free(bc->slot[i].data);
    bc->slot[i].off = 0;
  }
  if (bc->bytes + size > BASE_BYTES)
    return;
  bc->slot[i].p = p;
  bc->slot[i].off = off;
  bc->slot[i].type = type;
  bc->slot[i].size = size;
  bc->slot[i].data = xmalloc(size ? size : 1);
  memcpy(bc->slot[i].data, data, size);
  bc->bytes += size;
}

static void cache_clear(struct base_cache *bc)
{
  for (size_t i = 0; i < BASE_SLOTS; i++)
    if (bc->slot[i].off)
      free(bc->slot[i].data);
  memset(bc, 0, sizeof *bc);
}

static struct base_cache *base_cache_new(void)
{
  return xmalloc0(sizeof(struct base_cache));
}

static void base_cache_free(struct base_cache *bc)
{
  if (bc == NULL)
    return;
  cache_clear(bc);
  free(bc);
}

static bool read_packed_cached(struct ws_gitodb *db, struct pack *p, uint64_t off, size_t hlen,
                               struct base_cache *bc, int *ret_type, unsigned char **ret_data,
                               size_t *ret_size)
{
  struct link {
    struct pack *p;
    uint64_t off;
    struct entry_hdr h;
  };
  cleanup_free struct link *chain = NULL;
  size_t depth = 0, size = 0;
  unsigned char *data = NULL;
  uint64_t work = 0;
  int type = 0;

  for (;;) {
    struct entry_hdr h;
    if (depth > 0 && cache_get(bc, p, off, &type, &data, &size))
      break;
    if (bc)
      bc->steps++;
    if (!pack_open(db, p, hlen) || !entry_header(p, off, hlen, &h))
      return false;
    if (h.type != OBJ_OFS_DELTA && h.type != OBJ_REF_DELTA) {
      data = inflate_at(p->pack, h.data, p->pack_size - hlen, h.size);
      if (data == NULL)
        return false;
      type = h.type;
      size = h.size;
      cache_put(bc, p, off, type, data, size);
      break;
    }
    if (depth == MAX_DELTA_DEPTH)
      return false;
    chain = xrealloc(chain, (depth + 1) * sizeof *chain);
    chain[depth++] = (struct link){p, off, h};
    if (h.type == OBJ_OFS_DELTA) {
      off = h.base_off;
      continue;
    }
    if (!find_packed(db, h.base, hlen, &p, &off)) {
      bool found = false;
      for (size_t i = 0; i < db->n && !found; i++)
        found = db->fds[i] >= 0 && read_loose(db, (int)i, h.base, hlen, &type, &data, &size);
      if (!found)
        return false;
      break;
    }
  }
  while (depth > 0) {
    struct link *k = &chain[--depth];
    unsigned char *d = inflate_at(k->p->pack, k->h.data, k->p->pack_size - hlen, k->h.size);
    unsigned char *r = d ? delta_apply(data, size, d, k->h.size, &size) : NULL;
    free(d);
    free(data);
    data = r;
    if (data == NULL || (work += size + k->h.size) > MAX_CHAIN_WORK) {
      free(data);
      return false;
    }
    cache_put(bc, k->p, k->off, type, data, size);
  }
  *ret_type = type;
  *ret_data = data;
  *ret_size = size;
  return true;
}

/* The first pack (in layer order) holding oid. */
static bool find_packed(struct ws_gitodb *db, const unsigned char *oid, size_t hlen,
                        struct pack **ret_p, uint64_t *ret_off)
{
  for (size_t i = 0; i < db->n_packs; i++) {
    int64_t off;
    if (!pack_open(db, &db->packs[i], hlen))
      continue;
    off = pack_find(&db->packs[i], oid, hlen);
    if (off > 0) {
      *ret_p = &db->packs[i];
      *ret_off = (uint64_t)off;
      return true;
    }
  }
  return false;
}

static void hex_of(const unsigned char *oid, size_t hlen, char *out)
{
  static const char digits[] = "0123456789abcdef";

  for (size_t i = 0; i < hlen; i++) {
    out[2 * i] = digits[oid[i] >> 4];
    out[2 * i + 1] = digits[oid[i] & 15];
  }
  out[2 * hlen] = '\0';
}

/* The loose object oid in one layer ("type size\0" and the content, zlib),
 * false when it is not there or does not parse. */
static bool read_loose_at(int rootfd, const char *path, int *ret_type, unsigned char **ret_data,
                          size_t *ret_size);

static bool read_loose(struct ws_gitodb *db, int layer, const unsigned char *oid, size_t hlen,
                       int *ret_type, unsigned char **ret_data, size_t *ret_size)
{
  char hex[65];
  cleanup_free char *path = NULL;

  hex_of(oid, hlen, hex);
  path = xfmt("%s/%.2s/%s", db->objdir, hex, hex + 2);
  return read_loose_at(db->fds[layer], path, ret_type, ret_data, ret_size);
}

/* The loose object file at path below rootfd. */
/* The header of a loose object ("type size\0"), read from s: size at most
 * max. */
static bool loose_header(struct zin *s, uint64_t max, int *ret_type, uint64_t *ret_size)
{
  char hdr[32];
  uint64_t size = 0;
  size_t i = 0;
  int type = 0;
  bool ok;

  do {
    ok = i < sizeof hdr && zin_read(s, (unsigned char *)hdr + i, 1);
  } while (ok && hdr[i++] != '\0');
  for (int t = OBJ_COMMIT; ok && t <= OBJ_TAG; t++) {
    size_t k = strlen(type_names[t]);
    if (strncmp(hdr, type_names[t], k) == 0 && hdr[k] == ' ')
      type = t;
  }
  ok = ok && type != 0;
  for (const char *c = ok ? hdr + strlen(type_names[type]) + 1 : ""; ok && *c; c++) {
    ok = *c >= '0' && *c <= '9' && size <= max;
    size = size * 10 + (uint64_t)(*c - '0');
  }
  ok = ok && hdr[strlen(type_names[type]) + 1] != '\0' && size <= max;
  *ret_type = type;
  *ret_size = size;
  return ok;
}

static bool read_loose_at(int rootfd, const char *path, int *ret_type, unsigned char **ret_data,
                          size_t *ret_size)
{
  cleanup_close int fd = -1;
  cleanup_free struct zin *s = NULL;
  unsigned char *data = NULL;
  uint64_t fsize, size = 0;
  int type = 0;
  bool ok;

  if ((fd = open_file(rootfd, path, &fsize)) < 0)
    return false;
  s = xmalloc(sizeof *s);
  if (!zin_init(s, fd, 0, fsize))
    return false;
  ok = loose_header(s, MAX_OBJECT, &type, &size);
  if (ok) {
    data = xmalloc(size ? (size_t)size : 1);
    ok = zin_read(s, data, (size_t)size) && zin_at_end(s);
  }
  inflateEnd(&s->z);
  if (!ok) {
    free(data);
    return false;
  }
  *ret_type = type;
  *ret_data = data;
  *ret_size = (size_t)size;
  return true;
}

/* Does a layer hold the loose object's file (readable or not)? */
static bool loose_exists(struct ws_gitodb *db, int layer, const unsigned char *oid, size_t hlen)
{
  char hex[65];
  cleanup_free char *path = NULL;
  cleanup_close int fd = -1;

  hex_of(oid, hlen, hex);
  path = xfmt("%s/%.2s/%s", db->objdir, hex, hex + 2);
  fd = ws_open_beneath(db->fds[layer], path, O_PATH | O_NOFOLLOW, 0);
  return fd >= 0;
}

/* Keep the first copy read in *ret_*, free the others; false when a copy
 * does not match the id. */
static bool keep_copy(const unsigned char *oid, size_t hlen, int type, unsigned char *data,
                      size_t size, int *ret_type, unsigned char **ret_data, size_t *ret_size)
{
  bool ok = id_matches(oid, hlen, type, data, size);

  if (ok && *ret_data == NULL) {
    *ret_type = type;
    *ret_data = data;
    *ret_size = size;
    return true;
  }
  free(data);
  return ok;
}

int ws_gitodb_read(struct ws_gitodb *db, const unsigned char *oid, size_t hlen, int *ret_type,
                   unsigned char **ret_data, size_t *ret_size)
{
  size_t copies = 0;
  /* git's packs cost a read a few inflations with the cache; a pack built
   * to walk long chains again and again is refused past 64 a read */
  bool ok = !db->unlisted && (hlen == 20 || hlen == 32) &&
            db->bc->steps <= 64 * ++db->reads + ((uint64_t)1 << 20);

  *ret_data = NULL;
  for (size_t i = 0; ok && i < db->n_packs; i++) {
    struct pack *p = &db->packs[i];
    int64_t off;
    int type;
    unsigned char *data;
    size_t size;
    if (!pack_open(db, p, hlen)) {
      ok = false; /* git may read the object from it */
      break;
    }
    if ((off = pack_find(p, oid, hlen)) == 0)
      continue;
    ok = off > 0 && ++copies <= MAX_COPIES &&
         read_packed(db, p, (uint64_t)off, hlen, &type, &data, &size) &&
         keep_copy(oid, hlen, type, data, size, ret_type, ret_data, ret_size);
  }
  for (size_t i = 0; ok && i < db->n; i++) {
    int type;
    unsigned char *data;
    size_t size;
    if (db->fds[i] < 0 || !loose_exists(db, (int)i, oid, hlen))
      continue;
    ok = ++copies <= MAX_COPIES && read_loose(db, (int)i, oid, hlen, &type, &data, &size) &&
         keep_copy(oid, hlen, type, data, size, ret_type, ret_data, ret_size);
  }
  if (!ok || copies == 0) {
    free(*ret_data);
    *ret_data = NULL;
    return -1;
  }
  if (*ret_type == OBJ_TREE)
    db->trees_read++;
  return 0;
}

/* --- the agent's object files ------------------------------------------- */

/* hex (2 * hlen digits, either case) into oid. */
static bool parse_hex_any(const char *hex, size_t hlen, unsigned char *oid)
{
  char low[64];

  for (size_t i = 0; i < 2 * hlen; i++)
    low[i] = hex[i] >= 'A' && hex[i] <= 'F' ? (char)(hex[i] - 'A' + 'a') : hex[i];
  return ws_git_parse_hex(low, 2 * hlen, hlen, oid);
}

/* The id of an object of type and size whose content s yields, hashed as
 * it is inflated (an object larger than what is read whole); true when it
 * is oid and the stream ends there. */
static bool stream_matches(struct zin *s, int type, uint64_t size, const unsigned char *oid,
                           size_t hlen)
{
  char hdr[48];
  int k = snprintf(hdr, sizeof hdr, "%s %" PRIu64, type_names[type], size);
  cleanup_free unsigned char *buf = xmalloc(65536);
  unsigned char out[32];
  struct sha1 s1;
  struct sha256 s2;

  sha1_init(&s1);
  sha256_init(&s2);
  if (hlen == 20)
    sha1_update(&s1, hdr, (size_t)k + 1);
  else
    sha256_update(&s2, hdr, (size_t)k + 1);
  while (size > 0) {
    size_t n = size < 65536 ? (size_t)size : 65536;
    if (!zin_read(s, buf, n))
      return false;
    if (hlen == 20)
      sha1_update(&s1, buf, n);
    else
      sha256_update(&s2, buf, n);
    size -= n;
  }
  if (!zin_at_end(s))
    return false;
  if (hlen == 20)
    sha1_final(&s1, out);
  else
    sha256_final(&s2, out);
  return memcmp(out, oid, hlen) == 0;
}

#define MAX_STREAMED ((uint64_t)1 << 40) /* an object's size, hashed as it streams */

/* Is the loose object file at path below rootfd the object oid? */
static bool loose_matches(int rootfd, const char *path, const unsigned char *oid, size_t hlen)
{
  uint64_t fsize, size;
  cleanup_close int fd = open_file(rootfd, path, &fsize);
  struct zin *s;
  int type;
  bool ok;

  if (fd < 0)
    return false;
  s = xmalloc(sizeof *s);
  ok = zin_init(s, fd, 0, fsize);
  ok =
      ok && loose_header(s, MAX_STREAMED, &type, &size) && stream_matches(s, type, size, oid, hlen);
  inflateEnd(&s->z);
  free(s);
  return ok;
}

struct ent {
  uint64_t off;
  unsigned char oid[32];
};

static int ent_off_cmp(const void *va, const void *vb)
{
  const struct ent *a = va, *b = vb;
  return a->off < b->off ? -1 : a->off > b->off;
}

/* Does every entry of pack p match the id its index gives it? */
static bool pack_all_match(struct ws_gitodb *db, struct pack *p, size_t hlen)
{
  cleanup_free struct ent *v = NULL;
  struct base_cache *bc;
  uint64_t n;
  bool ok = true;

  if (!pack_open(db, p, hlen))
    return false;
  n = p->fanout[255];
  v = xmalloc((n ? n : 1) * sizeof *v);
  for (uint64_t i = 0; i < n; i++) {
    int64_t off = pack_entry_off(p, i, hlen);
    if (off <= 0 || !pread_all(p->idx, v[i].oid, hlen, 1032 + i * hlen))
      return false;
    v[i].off = (uint64_t)off;
  }
  /* in the pack's order (the index is in the ids'): a delta's base is
   * then read before it */
  qsort(v, n, sizeof *v, ent_off_cmp);
  bc = xmalloc0(sizeof *bc);
  for (uint64_t i = 0; ok && i < n; i++) {
    int type;
    unsigned char *data = NULL;
    size_t size;
    struct entry_hdr h;
    if (!entry_header_max(p, v[i].off, hlen, &h, MAX_STREAMED)) {
      ok = false;
    } else if (h.size > MAX_OBJECT && h.type != OBJ_OFS_DELTA && h.type != OBJ_REF_DELTA) {
      struct zin *s = xmalloc(sizeof *s); /* too large to hold: hashed as it streams */
      ok = zin_init(s, p->pack, h.data, p->pack_size - hlen) &&
           stream_matches(s, h.type, h.size, v[i].oid, hlen);
      inflateEnd(&s->z);
      free(s);
    } else {
      ok = read_packed_cached(db, p, v[i].off, hlen, bc, &type, &data, &size) &&
           id_matches(v[i].oid, hlen, type, data, size);
    }
    /* git's own packs (delta chains of 50, bases before their deltas) take
     * about one inflation an entry: a pack built to make every entry walk
     * its chain again is refused instead of read for hours */
    ok = ok && bc->steps <= 64 * n + 65536;
    free(data);
  }
  cache_clear(bc);
  free(bc);
  return ok;
}

const char *ws_git_objfile_reason(const int *fds, size_t n, int layer, const char *gitdir,
                                  const char *rel)
{
  size_t len = strlen(rel), hlen;
  unsigned char oid[32];
  const char *why = NULL;

  if (len == 2 + 1 + 38 || len == 2 + 1 + 62) { /* xx/<rest of the id> */
    char hex[64];
    cleanup_free char *path = NULL;
    hlen = (len - 1) / 2;
    if (rel[2] != '/')
      return NULL;
    memcpy(hex, rel, 2);
    memcpy(hex + 2, rel + 3, len - 3);
    if (!parse_hex_any(hex, hlen, oid))
      return NULL; /* no object's name: git reads none there */
    path = *gitdir ? xfmt("%s/objects/%s", gitdir, rel) : xfmt("objects/%s", rel);
    if (!loose_matches(fds[layer], path, oid, hlen))
      why = "a loose git object whose content is not the object its name gives, or that agentrt "
            "cannot read (git reads it in place of that object, unchecked: a forged tree or "
            "blob of the host's history)";
    return why;
  }
  if (strncmp(rel, "pack/pack-", 10) == 0 &&
      (has_suffix(rel, ".pack") || has_suffix(rel, ".idx"))) {
    const char *name = rel + 5, *dot = strrchr(name, '.');
    struct ws_gitodb *db;
    struct pack *p = NULL;
    hlen = (size_t)(dot - name - 5) / 2;
    if ((hlen != 20 && hlen != 32) || (size_t)(dot - name - 5) != 2 * hlen ||
        !parse_hex_any(name + 5, hlen, oid))
      return NULL; /* not a name git reads a pack by */
    db = ws_gitodb_open(fds, n, gitdir);
    for (size_t i = 0; i < db->n_packs && p == NULL; i++)
      if (db->packs[i].layer == layer && strlen(db->packs[i].name) == (size_t)(dot - name) &&
          strncmp(db->packs[i].name, name, (size_t)(dot - name)) == 0)
        p = &db->packs[i];
    if (p == NULL) {
      /* its other half is not beside it: git reads the pair from the merged
       * view, which agentrt does not check piecewise */
      cleanup_free char *other = xfmt("%s/pack/%.*s%s", db->objdir, (int)(dot - name), name,
                                      strcmp(dot, ".idx") == 0 ? ".pack" : ".idx");
      for (size_t i = 0; i < n && why == NULL; i++)
        if (fds[i] >= 0 && regular_at(fds[i], other))
          why = "a git pack or index whose other half is in another layer (agentrt cannot "
                "check the pair git would read)";
    } else if (!pack_all_match(db, p, hlen)) {
      why = "a git pack holding an object that is not the one its index names, or that "
            "agentrt cannot read or check (git reads it in place of that object, unchecked: a "
            "forged tree or blob of the host's history)";
    }
    ws_gitodb_free(db);
    return why;
  }
  return NULL;
}

/* --- commits, tags and trees --------------------------------------------- */

static int hexval(char c)
{
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  return -1;
}

bool ws_git_parse_hex(const char *s, size_t n, size_t hlen, unsigned char *ret_oid)
{
  if (n < 2 * hlen)
    return false;
  for (size_t i = 0; i < hlen; i++) {
    int hi = hexval(s[2 * i]), lo = hexval(s[2 * i + 1]);
    if (hi < 0 || lo < 0)
      return false;
    ret_oid[i] = (unsigned char)(hi << 4 | lo);
  }
  return true;
}

/* The id after "key " on the first line of data (a commit's tree, a tag's
 * object). */
static bool header_id(const unsigned char *data, size_t size, const char *key, size_t hlen,
                      unsigned char *ret_oid)
{
  size_t k = strlen(key);

  return size >= k + 1 + 2 * hlen + 1 && memcmp(data, key, k) == 0 && data[k] == ' ' &&
         ws_git_parse_hex((const char *)data + k + 1, 2 * hlen, hlen, ret_oid) &&
         data[k + 1 + 2 * hlen] == '\n';
}

static bool names_control(const unsigned char *p, size_t n, size_t hlen);

/* The encodings other than UTF-8 a commit's or tag's header may name whose
 * text the review decodes: single-byte, ASCII below 0x80.  In ISO-8859-1
 * and -15 the bytes 0x80 to 0x9f are the C1 controls; in Windows-1252 they
 * are printable but for five that it leaves undefined (what git prints for
 * those depends on the host's iconv: taken as controls). */
enum { ENC_ISO8859, ENC_CP1252 };
static const struct {
  const char *name;
  int kind;
} decoded_encodings[] = {
    {"iso-8859-1", ENC_ISO8859}, {"iso8859-1", ENC_ISO8859},   {"iso_8859-1", ENC_ISO8859},
    {"latin1", ENC_ISO8859},     {"l1", ENC_ISO8859},          {"iso-8859-15", ENC_ISO8859},
    {"iso8859-15", ENC_ISO8859}, {"iso_8859-15", ENC_ISO8859}, {"latin9", ENC_ISO8859},
    {"latin-9", ENC_ISO8859},    {"cp1252", ENC_CP1252},       {"windows-1252", ENC_CP1252},
};

/* Would a byte of this encoding be a terminal control once `git log` has
 * re-encoded it into UTF-8?  (Below 0x80 ws_term_control has read it.) */
static bool decoded_control(int kind, unsigned char c)
{
  if (c < 0x80 || c > 0x9f)
    return false;
  if (kind == ENC_ISO8859)
    return true;
  return c == 0x81 || c == 0x8d || c == 0x8f || c == 0x90 || c == 0x9d;
}

/* The encodings a commit's or tag's header (data, size bytes) names, read
 * as `git log` and `git show` read them: they re-encode its whole text into
 * UTF-8, so a byte 0x9b of an ISO-8859-1 message, which is no control as it
 * is stored, is printed as the C1 control CSI.  0: none, or UTF-8; -5: a
 * byte of the object is a control in an encoding named; -6: an encoding
 * agentrt does not decode. */
static int encoding_check(const unsigned char *data, size_t size)
{
  const unsigned char *end = memmem(data, size, "\n\n", 2), *p;
  size_t hn = end ? (size_t)(end - data) + 1 : size;

  for (size_t at = 0; at < hn;) {
    const unsigned char *eol = memchr(data + at, '\n', hn - at);
    size_t len = eol ? (size_t)(eol - (data + at)) : hn - at, k, vn;
    const char *v;
    p = data + at;
    at += len + 1;
    if (len < 9 || memcmp(p, "encoding ", 9) != 0)
      continue;
    v = (const char *)p + 9;
    vn = len - 9;
    if ((vn == 5 && strncasecmp(v, "utf-8", 5) == 0) || (vn == 4 && strncasecmp(v, "utf8", 4) == 0))
      continue;
    for (k = 0; k < sizeof decoded_encodings / sizeof decoded_encodings[0]; k++)
      if (strlen(decoded_encodings[k].name) == vn &&
          strncasecmp(v, decoded_encodings[k].name, vn) == 0)
        break;
    if (k == sizeof decoded_encodings / sizeof decoded_encodings[0])
      return -6;
    for (size_t i = 0; i < size; i++)
      if (decoded_control(decoded_encodings[k].kind, data[i]))
        return -5;
  }
  return 0;
}

/* The tree that oid (a commit, a tag of one, or a tree) checks out:
 * 1 with *ret_tree, 0 for a blob (nothing to check out), -1 unreadable;
 * with text, -2 for a commit or tag on the way whose text (message, names)
 * holds a terminal control (git log and git tag -n print it as it is), -3
 * for a blob that does (`git show` of the ref prints it as it is), -4 for
 * a tree named by the ref or a tag whose entries' names do (so does
 * `git show` with them), -5 for a commit or tag whose text re-encoded
 * from the encoding it names holds one, -6 for one in an encoding agentrt
 * does not decode (encoding_check). */
static int tree_of(struct ws_gitodb *db, const unsigned char *oid, size_t hlen, bool text,
                   unsigned char *ret_tree)
{
  unsigned char cur[32];

  memcpy(cur, oid, hlen);
  for (int i = 0; i <= MAX_TAG_DEPTH; i++) {
    int type, r;
    cleanup_free unsigned char *data = NULL;
    size_t size;
    if (ws_gitodb_read(db, cur, hlen, &type, &data, &size) < 0)
      return -1;
    if (type == OBJ_TREE) {
      db->trees_read--; /* read again by the comparison */
      memcpy(ret_tree, cur, hlen);
      /* a tree named by the ref or a tag, not a commit's: `git show` of it
       * prints its entries' names as they are */
      if (text && names_control(data, size, hlen))
        return -4;
      return 1;
    }
    if (type == OBJ_BLOB)
      return text && ws_term_control(data, size) ? -3 : 0;
    if (text && ws_term_control(data, size))
      return -2;
    if (text && (r = encoding_check(data, size)) < 0)
      return r;
    if (type == OBJ_COMMIT)
      return header_id(data, size, "tree", hlen, ret_tree) ? 1 : -1;
    if (!header_id(data, size, "object", hlen, cur))
      return -1;
  }
  return -1;
}

struct tentry {
  const char *name;
  size_t len;
  uint32_t mode;
  const unsigned char *oid;
};

/* The entries of a tree ("mode name\0oid" each), in v (freed by the
 * caller); false when it does not parse. */
static bool tree_entries(const unsigned char *p, size_t n, size_t hlen, struct tentry **ret_v,
                         size_t *ret_n)
{
  struct tentry *v = NULL;
  size_t count = 0, cap = 0, pos = 0;

  while (pos < n) {
    struct tentry e = {0};
    const unsigned char *nul;
    size_t digits = 0;
    while (pos < n && p[pos] >= '0' && p[pos] <= '7' && digits < 7) {
      e.mode = e.mode << 3 | (uint32_t)(p[pos++] - '0');
      digits++;
    }
    if (digits == 0 || pos >= n || p[pos++] != ' ' ||
        (nul = memchr(p + pos, '\0', n - pos)) == NULL || (size_t)(p + n - nul) < 1 + hlen)
      goto bad;
    e.name = (const char *)p + pos;
    e.len = (size_t)(nul - (p + pos));
    e.oid = nul + 1;
    pos = (size_t)(nul - p) + 1 + hlen;
    if (count == cap) {
      cap = cap ? 2 * cap : 16;
      v = xrealloc(v, cap * sizeof *v);
    }
    v[count++] = e;
  }
  *ret_v = v;
  *ret_n = count;
  return true;
bad:
  free(v);
  return false;
}

/* Does a name of the tree p (n bytes) hold a terminal control?  One that
 * does not parse says yes (nothing of it is shown as checked). */
static bool names_control(const unsigned char *p, size_t n, size_t hlen)
{
  cleanup_free struct tentry *v = NULL;
  size_t k = 0;

  if (!tree_entries(p, n, hlen, &v, &k))
    return true;
  for (size_t i = 0; i < k; i++)
    if (ws_term_control((const unsigned char *)v[i].name, v[i].len))
      return true;
  return false;
}

static int tentry_cmp(const void *va, const void *vb)
{
  const struct tentry *a = va, *b = vb;
  int r = memcmp(a->name, b->name, a->len < b->len ? a->len : b->len);

  return r ? r : (a->len > b->len) - (a->len < b->len);
}

#define GIT_S_IFMT 0170000
#define GIT_S_IFDIR 0040000
#define GIT_S_IFREG 0100000
#define GIT_S_IFLNK 0120000
#define GIT_S_IFGITLINK 0160000

/* The mode git checks out for a tree entry's mode: an unknown type is a
 * gitlink to git. */
static uint32_t canon_mode(uint32_t mode)
{
  uint32_t t = mode & GIT_S_IFMT;

  if (t == GIT_S_IFREG || t == GIT_S_IFDIR || t == GIT_S_IFLNK)
    return mode;
  return GIT_S_IFGITLINK;
}

/* One comparison: what it looks for, what it holds and what it found. */
struct cmp {
  struct ws_gitodb *db;
  size_t hlen;
  char *const *patterns;
  size_t entries;  /* tree entries visited */
  uint64_t held;   /* bytes of the trees open along the current path */
  char *path;      /* the current directory's path ("" at the top) */
  size_t len, cap; /* its length, its buffer's size */
  const char *why;
  char *found; /* the entry's path, for why */
};

#define UNREADABLE "a commit agentrt cannot read (git checks none of its paths)"
#define MAX_NOTES_DEPTH 64 /* a notes tree's fan-out levels (git makes a few) */
/* Notes and their subtrees read for one notes ref: each is an object read
 * (30,000 cost ~0.9 s of a review), for the ref and again for its reflog. */
#define MAX_NOTES_READ 10000
#define NOTES_TOO_MANY                                                                             \
  "more new notes than agentrt reads (10,000: review them with `git notes list`)"
#define NOTES_CONTROL                                                                              \
  "a note or notes commit holding terminal control characters (the host's `git log` prints notes " \
  "as they are: an escape sequence can rewrite what the reviewer's terminal shows)"

static bool same_entry(const struct tentry *a, const struct tentry *b, size_t hlen)
{
  return a->mode == b->mode && memcmp(a->oid, b->oid, hlen) == 0;
}

static const char *entry_why(const char *path, uint32_t mode, char *const *patterns)
{
  const char *pat = NULL;

  if ((mode & GIT_S_IFMT) == GIT_S_IFLNK)
    return "a commit with a new or changed symlink (its target is in git's objects, not "
           "checked; `git checkout -- .` writes it)";
  if ((mode & GIT_S_IFMT) == GIT_S_IFGITLINK)
    return "a commit with a new or changed submodule (gitlink; `git submodule update` checks it "
           "out)";
  if (!ws_git_entry_risky(path, mode, patterns))
    return NULL;
  ws_protect_reason(path, (mode & GIT_S_IFMT) == GIT_S_IFDIR ? WS_T_DIR : WS_T_FILE, false,
                    patterns, &pat);
  if (pat)
    return "a commit with a new or changed entry on the protected list (`git checkout -- .` or "
           "`git reset --hard` writes it)";
  return "a commit with a new or changed protected entry such as `.gitmodules` (`git checkout "
         "-- .` or `git reset --hard` writes it)";
}

/* Append "/name" (or name at the top) to c->path: false when too long. */
static bool path_push(struct cmp *c, const char *name, size_t n)
{
  size_t need = c->len + (c->len > 0) + n + 1;

  if (need > MAX_PATH_LEN)
    return false;
  if (need > c->cap) {
    c->cap = need * 2;
    c->path = xrealloc(c->path, c->cap);
  }
  if (c->len > 0)
    c->path[c->len++] = '/';
  memcpy(c->path + c->len, name, n);
  c->len += n;
  c->path[c->len] = '\0';
  return true;
}

static bool found(struct cmp *c, const char *why)
{
  c->why = why;
  c->found = c->len > 0 ? xstrdup(c->path) : NULL;
  return false;
}

/* Compare the tree new_oid at c->path with old_oid (NULL: none): the first
 * risky entry in c->why, c->found.  Only subtrees whose ids differ are read;
 * one path buffer for the whole walk, and the trees open along the path are
 * bounded in bytes (a deep chain of large trees, each compressed to little). */
static bool tree_diff(struct cmp *c, const unsigned char *new_oid, const unsigned char *old_oid,
                      size_t depth)
{
  cleanup_free unsigned char *nd = NULL, *od = NULL;
  cleanup_free struct tentry *nv = NULL, *ov = NULL;
  size_t nn = 0, on = 0, ns = 0, os = 0, base = c->len;
  uint64_t held = c->held;
  bool ok = true;
  int type;

  if (depth > MAX_TREE_DEPTH || ws_gitodb_read(c->db, new_oid, c->hlen, &type, &nd, &ns) < 0 ||
      type != OBJ_TREE || !tree_entries(nd, ns, c->hlen, &nv, &nn) ||
      (c->entries += nn) > MAX_TREE_ENTRIES || (c->held += ns) > MAX_TREE_HELD)
    return found(c, UNREADABLE);
  /* an old tree that is not there (the host's own objects) compares as none */
  if (old_oid && ws_gitodb_read(c->db, old_oid, c->hlen, &type, &od, &os) == 0 &&
      type == OBJ_TREE && tree_entries(od, os, c->hlen, &ov, &on) && on > 1)
    qsort(ov, on, sizeof *ov, tentry_cmp);
  if ((c->held += os) > MAX_TREE_HELD)
    return found(c, UNREADABLE);
  for (size_t i = 0; ok && i < nn; i++) {
    const struct tentry *e = &nv[i], *o = on ? bsearch(e, ov, on, sizeof *ov, tentry_cmp) : NULL;
    uint32_t mode = canon_mode(e->mode);
    const char *why;
    bool name_ok =
        e->len > 0 && memchr(e->name, '/', e->len) == NULL && ws_git_path_ok(e->name, e->len);
    if (name_ok && o && same_entry(e, o, c->hlen))
      continue;
    if (!path_push(c, e->name, e->len))
      return found(c, UNREADABLE);
    if (!name_ok)
      return found(c, "a commit with a path inside `.git` or out of the work tree (`git "
                      "checkout -- .` writes it there)");
    if ((why = entry_why(c->path, mode, c->patterns)) != NULL)
      return found(c, why);
    if ((mode & GIT_S_IFMT) == GIT_S_IFDIR)
      ok = tree_diff(c, e->oid,
                     o && (canon_mode(o->mode) & GIT_S_IFMT) == GIT_S_IFDIR ? o->oid : NULL,
                     depth + 1);
    c->len = base;
    if (c->path)
      c->path[base] = '\0';
  }
  c->held = held;
  return ok;
}

/* A notes tree (a blob for each annotated object, named by its id, in
 * subtrees of two hex digits when there are many) against old (NULL: none):
 * false when a blob it brings (not old's at the same name) holds a terminal
 * control, or when it cannot be read or is over the budget (*budget: blobs
 * and subtrees left to read); *ret_why says which. */
static bool notes_tree_ok(struct ws_gitodb *db, const unsigned char *new_oid,
                          const unsigned char *old_oid, size_t hlen, size_t depth, size_t *budget,
                          const char **ret_why)
{
  cleanup_free unsigned char *nd = NULL, *od = NULL;
  cleanup_free struct tentry *nv = NULL, *ov = NULL;
  size_t nn = 0, on = 0, ns = 0, os = 0;
  int type;

  if (depth > MAX_NOTES_DEPTH || *budget == 0 ||
      ws_gitodb_read(db, new_oid, hlen, &type, &nd, &ns) < 0 || type != OBJ_TREE ||
      !tree_entries(nd, ns, hlen, &nv, &nn)) {
    *ret_why = *budget == 0 ? NOTES_TOO_MANY : UNREADABLE;
    return false;
  }
  (*budget)--;
  if (old_oid && ws_gitodb_read(db, old_oid, hlen, &type, &od, &os) == 0 && type == OBJ_TREE &&
      tree_entries(od, os, hlen, &ov, &on) && on > 1)
    qsort(ov, on, sizeof *ov, tentry_cmp);
  for (size_t i = 0; i < nn; i++) {
    const struct tentry *e = &nv[i], *o = on ? bsearch(e, ov, on, sizeof *ov, tentry_cmp) : NULL;
    uint32_t t = canon_mode(e->mode) & GIT_S_IFMT;
    cleanup_free unsigned char *data = NULL;
    size_t size;
    if (o && same_entry(e, o, hlen))
      continue;
    if (t == GIT_S_IFDIR) {
      if (!notes_tree_ok(db, e->oid,
                         o && (canon_mode(o->mode) & GIT_S_IFMT) == GIT_S_IFDIR ? o->oid : NULL,
                         hlen, depth + 1, budget, ret_why))
        return false;
      continue;
    }
    if (t == GIT_S_IFGITLINK)
      continue;
    if (*budget == 0) {
      *ret_why = NOTES_TOO_MANY;
      return false;
    }
    (*budget)--;
    if (ws_gitodb_read(db, e->oid, hlen, &type, &data, &size) < 0) {
      *ret_why = UNREADABLE;
      return false;
    }
    /* git log prints a note blob's text as it is, under the commit it annotates */
    if (type == OBJ_BLOB && ws_term_control(data, size)) {
      *ret_why = NOTES_CONTROL;
      return false;
    }
  }
  return true;
}

const char *ws_git_notes_reason(struct ws_gitodb *db, const unsigned char *new_id,
                                const unsigned char *old_id, size_t hlen)
{
  unsigned char nt[32], ot[32];
  size_t budget = MAX_NOTES_READ;
  const char *why = NULL;
  int r;

  if (old_id && memcmp(new_id, old_id, hlen) == 0)
    return NULL;
  if ((r = tree_of(db, new_id, hlen, true, nt)) <= 0)
    return r == 0 ? NULL : r <= -2 ? NOTES_CONTROL : UNREADABLE;
  if (old_id && tree_of(db, old_id, hlen, false, ot) <= 0)
    old_id = NULL;
  return notes_tree_ok(db, nt, old_id ? ot : NULL, hlen, 0, &budget, &why) ? NULL : why;
}

/* The committer's time of a commit's header (0 when there is none). */
static int64_t committer_time(const unsigned char *data, size_t size)
{
  const unsigned char *end = memmem(data, size, "\n\n", 2), *p, *eol, *sp;
  int64_t t = 0;

  if (end == NULL)
    end = data + size;
  p = memmem(data, (size_t)(end - data), "\ncommitter ", 11);
  if (p == NULL)
    return 0;
  eol = memchr(p + 1, '\n', (size_t)(end - p - 1));
  if (eol == NULL)
    eol = end;
  /* "... <email> <seconds> <zone>": the second to last field */
  for (sp = eol; sp > p && sp[-1] != ' '; sp--)
    ;
  if (sp <= p + 1)
    return 0;
  for (sp--; sp > p && sp[-1] != ' '; sp--)
    ;
  for (; sp < eol && *sp >= '0' && *sp <= '9' && t < INT64_MAX / 10; sp++)
    t = t * 10 + (*sp - '0');
  return t;
}

int ws_git_commit_info(struct ws_gitodb *db, const unsigned char *id, size_t hlen,
                       unsigned char (*ret)[32], size_t max, size_t *ret_n, int64_t *ret_time)
{
  cleanup_free unsigned char *data = NULL;
  unsigned char cur[32];
  size_t size = 0, pos = 0;
  int type = 0;

  *ret_n = 0;
  memcpy(cur, id, hlen);
  /* a tag's are those of the commit it names */
  for (int i = 0; i <= MAX_TAG_DEPTH; i++) {
    free(data);
    data = NULL;
    if (ws_gitodb_read(db, cur, hlen, &type, &data, &size) < 0)
      return -1;
    if (type != OBJ_TAG || !header_id(data, size, "object", hlen, cur))
      break;
  }
  if (type != OBJ_COMMIT)
    return -1;
  /* "tree <id>\n", then one "parent <id>\n" line for each parent */
  pos = 5 + 2 * hlen + 1;
  while (*ret_n < max && pos < size &&
         header_id(data + pos, size - pos, "parent", hlen, ret[*ret_n])) {
    (*ret_n)++;
    pos += 7 + 2 * hlen + 1;
  }
  if (ret_time != NULL)
    *ret_time = committer_time(data, size);
  return 0;
}

int ws_git_commit_parents(struct ws_gitodb *db, const unsigned char *id, size_t hlen,
                          unsigned char (*ret)[32], size_t max, size_t *ret_n)
{
  return ws_git_commit_info(db, id, hlen, ret, max, ret_n, NULL);
}

const char *ws_git_commit_reason(struct ws_gitodb *db, const unsigned char *new_id,
                                 const unsigned char *old_id, size_t hlen, char *const *patterns,
                                 char **ret_path)
{
  unsigned char nt[32], ot[32];
  struct cmp c = {.db = db, .hlen = hlen, .patterns = patterns};
  int r;

  *ret_path = NULL;
  if (old_id && memcmp(new_id, old_id, hlen) == 0)
    return NULL;
  if ((r = tree_of(db, new_id, hlen, true, nt)) <= 0)
    return r == 0    ? NULL
           : r == -2 ? "a commit or tag whose message or names hold terminal control characters "
                       "(the host's `git log` prints them as they are: an escape sequence can "
                       "rewrite what the reviewer's terminal shows)"
           : r == -3 ? "a blob holding terminal control characters (the host's `git show` of "
                       "the ref prints it as it is: an escape sequence can rewrite what the "
                       "reviewer's terminal shows)"
           : r == -4 ? "a tree whose names hold terminal control characters (the host's `git "
                       "show` of the ref prints them as they are: an escape sequence can "
                       "rewrite what the reviewer's terminal shows)"
           : r == -5 ? "a commit or tag whose text holds terminal control characters once the "
                       "host's `git log` re-encodes it from the encoding it names into UTF-8 (a "
                       "byte no control as stored prints as one)"
           : r == -6 ? "a commit or tag in an encoding other than UTF-8 that agentrt does not "
                       "decode (the host's `git log` re-encodes its message: a byte no control "
                       "as stored can print as one)"
                     : UNREADABLE;
  if (old_id && tree_of(db, old_id, hlen, false, ot) <= 0)
    old_id = NULL;
  if (tree_diff(&c, nt, old_id ? ot : NULL, 0)) {
    free(c.path);
    return NULL;
  }
  free(c.path);
  *ret_path = c.found;
  return c.why;
}
