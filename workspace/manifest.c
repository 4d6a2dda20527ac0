/* manifest.c - what the host directory held when the workspace started, so
 * that commit can tell a host file the operator changed meanwhile (a
 * conflict) from one only the agent changed.
 *
 * Bounded: at most max_files entries (past that the manifest is marked
 * incomplete and unlisted paths are judged by ctime against the creation
 * time), and at most max_hash_bytes of content hashed (larger or later files
 * are compared by size + mtime only).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "workspace/internal.h"

struct rec {
  const struct ws_limits *lim;
  struct ws_manifest *m;
  size_t cap;
  uint64_t hashed;
  dev_t dev;
};

void ws_limits_default(struct ws_limits *l)
{
  *l = (struct ws_limits){.max_files = WS_DEFAULT_MAX_FILES,
                          .max_hash_bytes = WS_DEFAULT_MAX_HASH_BYTES,
                          .max_file_hash = WS_DEFAULT_MAX_FILE_HASH};
}

static void fill_entry(struct ws_mentry *e, int fd, const struct stat *st, bool hash)
{
  e->type = ws_mode_type(st->st_mode);
  e->size = (uint64_t)st->st_size;
  e->mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
  e->mode = st->st_mode & 07777;
  e->has_hash = hash && fd >= 0 && ws_sha256_fd(fd, e->hash) == 0;
}

static bool rec_add(struct rec *r, int dirfd, const char *name, const char *path,
                    const struct stat *st)
{
  struct ws_mentry *e;
  bool hash = false;
  cleanup_close int fd = -1;

  if (r->m->n >= r->lim->max_files) {
    r->m->complete = false;
    return false;
  }
  if (r->m->n == r->cap)
    r->m->v = xrealloc(r->m->v, (r->cap = r->cap ? r->cap * 2 : 64) * sizeof *r->m->v);
  if (S_ISREG(st->st_mode) && (uint64_t)st->st_size <= r->lim->max_file_hash &&
      r->hashed + (uint64_t)st->st_size <= r->lim->max_hash_bytes) {
    fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    hash = fd >= 0;
    if (hash)
      r->hashed += (uint64_t)st->st_size;
  }
  e = &r->m->v[r->m->n++];
  memset(e, 0, sizeof *e);
  e->path = xstrdup(path);
  fill_entry(e, fd, st, hash);
  return true;
}

static void rec_walk(struct rec *r, int fd, const char *path, int depth)
{
  cleanup_strv char **names = NULL;
  size_t n = 0;

  if (depth > WS_MAX_DEPTH || ws_list_dir(fd, &names, &n) < 0) {
    r->m->complete = false;
    return;
  }
  for (size_t i = 0; i < n; i++) {
    cleanup_free char *child = *path ? xfmt("%s/%s", path, names[i]) : xstrdup(names[i]);
    struct stat st;
    if (fstatat(fd, names[i], &st, AT_SYMLINK_NOFOLLOW) < 0)
      continue;
    if (!rec_add(r, fd, names[i], child, &st))
      return;
    if (S_ISDIR(st.st_mode) && st.st_dev == r->dev) {
      cleanup_close int sub = ws_open_dir(fd, names[i]);
      if (sub >= 0)
        rec_walk(r, sub, child, depth + 1);
    }
  }
}

static int entry_cmp(const void *a, const void *b)
{
  return strcmp(((const struct ws_mentry *)a)->path, ((const struct ws_mentry *)b)->path);
}

int ws_manifest_record(int hostfd, const struct ws_limits *lim, struct ws_manifest *ret,
                       struct error *err)
{
  struct ws_limits def;
  struct rec r = {lim, ret, 0, 0, 0};
  struct stat st;

  if (lim == NULL) {
    ws_limits_default(&def);
    r.lim = &def;
  }
  memset(ret, 0, sizeof *ret);
  ret->complete = true;
  if (fstat(hostfd, &st) < 0)
    return error_errno(err, "workspace manifest: stat host dir");
  r.dev = st.st_dev;
  rec_walk(&r, hostfd, "", 0);
  if (ret->n > 1)
    qsort(ret->v, ret->n, sizeof *ret->v, entry_cmp);
  return 0;
}

void ws_manifest_free(struct ws_manifest *m)
{
  for (size_t i = 0; i < m->n; i++)
    free(m->v[i].path);
  free(m->v);
  memset(m, 0, sizeof *m);
}

/* Index of path, or of where it would be inserted (*found tells). */
static size_t lookup(const struct ws_manifest *m, const char *path, bool *found)
{
  size_t lo = 0, hi = m->n;

  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int c = strcmp(m->v[mid].path, path);
    if (c == 0) {
      *found = true;
      return mid;
    }
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  *found = false;
  return lo;
}

const struct ws_mentry *ws_manifest_find(const struct ws_manifest *m, const char *path)
{
  bool found;
  size_t i = lookup(m, path, &found);

  return found ? &m->v[i] : NULL;
}

const char *ws_conflict_name(enum ws_conflict c)
{
  static const char *const names[] = {
      "none",
      "deleted on host",
      "changed on host",
      "created on host",
      "type changed on host",
      "a symlink or mount point on the host path",
  };
  return names[c];
}

static bool same_as_entry(const struct ws_mentry *e, int fd, const struct stat *st)
{
  int64_t mt = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
  unsigned char h[32];

  if (e->type == WS_T_DIR)
    return true;
  if ((uint64_t)st->st_size != e->size)
    return false;
  if (mt == e->mtime_ns)
    return true;
  /* touched, maybe not changed: the hash decides when there is one */
  return e->type == WS_T_FILE && e->has_hash && ws_sha256_fd(fd, h) == 0 &&
         memcmp(h, e->hash, sizeof h) == 0;
}

enum ws_conflict ws_manifest_conflict(const struct ws_manifest *m, int hostfd, const char *path,
                                      int64_t created_s)
{
  cleanup_close int fd = ws_open_beneath(hostfd, path, O_PATH | O_NOFOLLOW, 0);
  const struct ws_mentry *e = ws_manifest_find(m, path);
  cleanup_close int rfd = -1;
  struct stat st;

  if (fd < 0 && errno != ENOENT)
    return WS_C_UNSAFE;
  if (fd < 0 || fstat(fd, &st) < 0)
    return e ? WS_C_DELETED : WS_C_NONE;
  if (e == NULL) {
    if (S_ISDIR(st.st_mode))
      return WS_C_NONE;
    if (m->complete || st.st_ctim.tv_sec >= created_s)
      return WS_C_CREATED;
    return WS_C_NONE;
  }
  if (ws_mode_type(st.st_mode) != e->type)
    return WS_C_TYPE;
  if (S_ISREG(st.st_mode))
    rfd = ws_open_beneath(hostfd, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK, 0);
  return same_as_entry(e, rfd, &st) ? WS_C_NONE : WS_C_CHANGED;
}

/* Drop the entries below the directory path (it is gone from the host). */
static void remove_below(struct ws_manifest *m, const char *path)
{
  cleanup_free char *prefix = xfmt("%s/", path);
  size_t len = strlen(prefix), k;
  bool found;
  size_t i = lookup(m, prefix, &found);

  for (k = i; k < m->n && strncmp(m->v[k].path, prefix, len) == 0; k++)
    free(m->v[k].path);
  memmove(&m->v[i], &m->v[k], (m->n - k) * sizeof *m->v);
  m->n -= k - i;
}

void ws_manifest_update(struct ws_manifest *m, int hostfd, const char *path)
{
  cleanup_close int fd = ws_open_beneath(hostfd, path, O_PATH | O_NOFOLLOW, 0);
  cleanup_close int rfd = -1;
  bool found;
  size_t i = lookup(m, path, &found);
  struct stat st;

  if (fd < 0 || fstat(fd, &st) < 0) {
    if (found) {
      free(m->v[i].path);
      memmove(&m->v[i], &m->v[i + 1], (m->n - i - 1) * sizeof *m->v);
      m->n--;
    }
    remove_below(m, path);
    return;
  }
  if (!found) {
    m->v = xrealloc(m->v, (m->n + 1) * sizeof *m->v);
    memmove(&m->v[i + 1], &m->v[i], (m->n - i) * sizeof *m->v);
    m->n++;
    memset(&m->v[i], 0, sizeof m->v[i]);
    m->v[i].path = xstrdup(path);
  }
  if (S_ISREG(st.st_mode) && (uint64_t)st.st_size <= WS_DEFAULT_MAX_FILE_HASH)
    rfd = ws_open_beneath(hostfd, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK, 0);
  fill_entry(&m->v[i], rfd, &st, rfd >= 0);
}
