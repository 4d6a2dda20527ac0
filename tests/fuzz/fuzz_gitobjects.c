/* fuzz_gitobjects.c - libFuzzer target for the git object reader
 * (workspace/gitobjects.c): loose objects, pack indexes and packs (entry
 * headers, OFS_DELTA and REF_DELTA chains, deltas), and the commit, tag and
 * tree parsers behind the tree comparison.
 *
 * The first byte picks what the rest is:
 *   even: objects, as records (type byte, 2-byte little-endian length,
 *         content), written as loose SHA-256 objects of a git dir in a temp
 *         dir.  In record k the bytes 0xff j (k < j < count) stand for the id
 *         of record j (raw in a tree, hex elsewhere), so commits, tags and
 *         trees name each other and the comparison descends.  With bit 1 of
 *         the first byte set the last record's bytes are written as its
 *         object file as they are (not deflated): the loose parser reads
 *         them.  Record 0 is compared with nothing and with record 1.
 *   odd:  a pack: 2-byte little-endian length of the .idx, the .idx, the
 *         .pack; every id the index lists (up to 64) is read, SHA-1 when bit
 *         1 is clear, else SHA-256.
 *
 * Invariants: no crash and no read outside the buffers; a comparison that
 * finds nothing against no tree finds nothing against another (an old tree
 * only takes entries away); a reason's path is never empty; what is read
 * matches its id.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "common/sha256.h"
#include "workspace/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_RECORDS 16

static char *const patterns[] = {".envrc", "__pycache__/", "*.pyc", ".vscode/", NULL};
static char root[] = "/tmp/fuzz-gitobjects.XXXXXX";
static int rootfd = -1;

static void fail(const char *what)
{
  fprintf(stderr, "fuzz invariant violated: %s\n", what);
  abort();
}

/* The temp dir goes when the fuzzer exits (not when it aborts: the input is
 * kept then, and the files with it). */
static void remove_root(void)
{
  ws_rm_tree(rootfd, ".git");
  rmdir(root);
}

/* A fresh, empty git dir below root (the previous input's files gone). */
static void reset(void)
{
  if (rootfd < 0) {
    if (mkdtemp(root) == NULL)
      fail("mkdtemp");
    rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (rootfd < 0)
      fail("open root");
    atexit(remove_root);
  }
  if (ws_rm_tree(rootfd, ".git") < 0 || mkdirat(rootfd, ".git", 0755) < 0 ||
      mkdirat(rootfd, ".git/objects", 0755) < 0 || mkdirat(rootfd, ".git/objects/pack", 0755) < 0)
    fail("reset the git dir");
}

static void write_file(const char *rel, const void *p, size_t n)
{
  char path[512];
  int fd;

  snprintf(path, sizeof path, "%s/%s", root, rel);
  fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0 || (n && write(fd, p, n) != (ssize_t)n))
    fail("write");
  close(fd);
}

static const char *const type_names[] = {"commit", "tree", "blob", "tag"};

struct rec {
  int type; /* 1..4 */
  const unsigned char *p;
  size_t n;
  unsigned char id[32];
};

/* Record k's content with its 0xff j references replaced by ids. */
static unsigned char *expand(const struct rec *r, size_t k, size_t count, size_t *ret_n)
{
  unsigned char *out = malloc(r[k].n * 64 + 1);
  size_t o = 0;

  if (out == NULL)
    abort();
  for (size_t i = 0; i < r[k].n; i++) {
    size_t j = i + 1 < r[k].n ? r[k].p[i + 1] : 0;
    if (r[k].p[i] != 0xff || j <= k || j >= count) {
      out[o++] = r[k].p[i];
      continue;
    }
    if (r[k].type == 2) {
      memcpy(out + o, r[j].id, 32);
      o += 32;
    } else {
      for (size_t b = 0; b < 32; b++)
        o += (size_t)sprintf((char *)out + o, "%02x", r[j].id[b]);
    }
    i++;
  }
  *ret_n = o;
  return out;
}

static void write_loose(struct rec *r, const unsigned char *body, size_t n, bool raw)
{
  char hdr[32], hex[65], rel[128];
  int h = snprintf(hdr, sizeof hdr, "%s %zu", type_names[r->type - 1], n) + 1;
  unsigned char *full = malloc((size_t)h + n), *z;
  uLongf zn = compressBound((uLong)h + n);
  struct sha256 s;

  if (full == NULL || (z = malloc(zn)) == NULL)
    abort();
  memcpy(full, hdr, (size_t)h);
  memcpy(full + h, body, n);
  sha256_init(&s);
  sha256_update(&s, full, (size_t)h + n);
  sha256_final(&s, r->id);
  for (size_t b = 0; b < 32; b++)
    sprintf(hex + 2 * b, "%02x", r->id[b]);
  snprintf(rel, sizeof rel, ".git/objects/%.2s", hex);
  mkdirat(rootfd, rel, 0755);
  snprintf(rel, sizeof rel, ".git/objects/%.2s/%s", hex, hex + 2);
  if (raw)
    write_file(rel, body, n);
  else if (compress(z, &zn, full, (uLong)h + n) == Z_OK)
    write_file(rel, z, zn);
  free(full);
  free(z);
}

static void check_objects(const uint8_t *data, size_t size, bool raw)
{
  struct rec r[MAX_RECORDS];
  size_t count = 0, pos = 0;
  struct ws_gitodb *db;
  const char *why_none, *why_old;
  char *p_none = NULL, *p_old = NULL;

  while (count < MAX_RECORDS && size - pos >= 3) {
    size_t n = (size_t)data[pos + 1] | (size_t)data[pos + 2] << 8;
    if (n > size - pos - 3)
      n = size - pos - 3;
    r[count] = (struct rec){.type = data[pos] % 4 + 1, .p = data + pos + 3, .n = n};
    pos += 3 + n;
    count++;
  }
  if (count == 0)
    return;
  for (size_t k = count; k-- > 0;) {
    size_t n;
    unsigned char *body = expand(r, k, count, &n);
    write_loose(&r[k], body, n, raw && k == count - 1);
    free(body);
  }
  db = ws_gitodb_open(&rootfd, 1, ".git");
  why_none = ws_git_commit_reason(db, r[0].id, NULL, 32, patterns, &p_none);
  why_old = ws_git_commit_reason(db, r[0].id, count > 1 ? r[1].id : NULL, 32, patterns, &p_old);
  if (getenv("FUZZ_GITOBJECTS_SHOW")) /* what a seed does: `fuzz_gitobjects SEED` */
    fprintf(stderr, "objects: %zu; against none: %s %s; against record 1: %s %s\n", count,
            why_none ? why_none : "-", p_none ? p_none : "", why_old ? why_old : "-",
            p_old ? p_old : "");
  if (why_none == NULL && why_old != NULL)
    fail("an old tree added a reason");
  if ((p_none && *p_none == '\0') || (p_old && *p_old == '\0'))
    fail("an empty path");
  if ((p_none && why_none == NULL) || (p_old && why_old == NULL))
    fail("a path without a reason");
  /* a commit's parents and committer time (the review's walk below a tip) */
  {
    unsigned char parents[16][32];
    size_t np = 0;
    int64_t t = -1;
    if (ws_git_commit_info(db, r[0].id, 32, parents, 16, &np, &t) == 0 && (np > 16 || t < 0))
      fail("parents or time out of range");
  }
  free(p_none);
  free(p_old);
  ws_gitodb_free(db);
}

static void check_pack(const uint8_t *data, size_t size, size_t hlen)
{
  size_t ilen;
  struct ws_gitodb *db;

  if (size < 2)
    return;
  ilen = (size_t)data[0] | (size_t)data[1] << 8;
  if (ilen > size - 2)
    ilen = size - 2;
  write_file(".git/objects/pack/pack-f.idx", data + 2, ilen);
  write_file(".git/objects/pack/pack-f.pack", data + 2 + ilen, size - 2 - ilen);
  db = ws_gitodb_open(&rootfd, 1, ".git");
  for (size_t i = 0; i < 64 && 1032 + (i + 1) * hlen <= ilen; i++) {
    unsigned char *obj = NULL, oid[32];
    size_t n;
    int type;
    memcpy(oid, data + 2 + 1032 + i * hlen, hlen);
    int r = ws_gitodb_read(db, oid, hlen, &type, &obj, &n);
    if (r == 0 && (type < 1 || type > 4))
      fail("a type out of range");
    if (getenv("FUZZ_GITOBJECTS_SHOW"))
      fprintf(stderr, "pack object %zu: %s\n", i, r == 0 ? "read, id matches" : "refused");
    free(obj);
  }
  ws_gitodb_free(db);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  if (size < 1)
    return 0;
  reset();
  if (data[0] & 1)
    check_pack(data + 1, size - 1, data[0] & 2 ? 32 : 20);
  else
    check_objects(data + 1, size - 1, data[0] & 2);
  return 0;
}
