/* review.c - commit applies only what the operator saw (THREAT-MODEL.md,
 * "Workspace protection rule").
 *
 * A container that still runs may change the workspace between `diff` and
 * `commit`.  `diff` therefore records the fingerprint of every change it
 * showed in <dir>/reviewed, and `commit` (with the container frozen) applies
 * a change only when its fingerprint is among them (`diff` freezes it too, so
 * what it records is what it shows).  A fingerprint is the
 * SHA-256 of what the change applies: its kind, types, paths, mode, size,
 * symlink target and, for a regular file, its content (the data extents and
 * their offsets, so a sparse file is not read as its holes).  The container
 * cannot write <dir> (the data directory is not in its mount namespace).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/sha256.h"
#include "common/util.h"
#include "os/fsutil.h"
#include "workspace/internal.h"

#define REVIEW_FILE "reviewed"
#define FP_HEX (SHA256_LEN * 2)

static void put_str(struct sha256 *s, const char *v)
{
  v = v ? v : "";
  sha256_update(s, v, strlen(v) + 1);
}

static void put_u64(struct sha256 *s, uint64_t v)
{
  sha256_update(s, &v, sizeof v);
}

/* The data extents of the regular file at fd, each with its offset. */
static int put_content(struct sha256 *s, int fd, off_t size)
{
  static char buf[1 << 16];
  off_t pos = 0;

  if (size <= (off_t)sizeof buf) { /* small: one read, no extent walk */
    ssize_t n = size > 0 ? pread(fd, buf, (size_t)size, 0) : 0;
    if (n != size)
      return -1;
    put_u64(s, 0);
    put_u64(s, (uint64_t)size);
    sha256_update(s, buf, (size_t)n);
    return 0;
  }
  while (pos < size) {
    off_t data = lseek(fd, pos, SEEK_DATA), hole;
    if (data < 0 && errno == ENXIO)
      break;
    if (data < 0) /* no SEEK_DATA here: all of it is data */
      data = pos;
    hole = lseek(fd, data, SEEK_HOLE);
    if (hole < 0 || hole > size)
      hole = size;
    put_u64(s, (uint64_t)data);
    put_u64(s, (uint64_t)(hole - data));
    for (off_t off = data; off < hole;) {
      size_t want = (size_t)(hole - off) < sizeof buf ? (size_t)(hole - off) : sizeof buf;
      ssize_t n = pread(fd, buf, want, off);
      if (n <= 0)
        return -1;
      sha256_update(s, buf, (size_t)n);
      off += n;
    }
    pos = hole;
  }
  return 0;
}

/* The fingerprint of one effect of c: a rename has two, the addition of
 * its path (part 0) and the deletion of its old path (part 1), so that its
 * pairing (which depends on the host) does not change what was seen. */
static int fingerprint(const struct ws_layers *l, const struct ws_change *c, int part,
                       char out[FP_HEX + 1])
{
  bool renamed = c->kind == WS_RENAMED;
  enum ws_kind kind = renamed ? (part ? WS_DELETED : WS_ADDED) : c->kind;
  enum ws_ftype type = renamed && part ? c->old_type : c->type;
  enum ws_ftype old_type = renamed && !part ? WS_T_NONE : c->old_type;
  struct sha256 s;
  uint8_t h[SHA256_LEN];

  sha256_init(&s);
  put_u64(&s, ((uint64_t)kind << 16) | ((uint64_t)type << 8) | (uint64_t)old_type);
  put_str(&s, renamed && part ? c->old_path : c->path);
  if (kind != WS_DELETED) {
    put_u64(&s, c->mode);
    put_u64(&s, c->size);
    put_str(&s, c->target);
  }
  if (kind != WS_DELETED && type == WS_T_FILE && c->layer >= 0 && (size_t)c->layer < l->n) {
    cleanup_close int fd =
        ws_open_beneath(l->fds[c->layer], c->path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK, 0);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || put_content(&s, fd, st.st_size) < 0)
      return -1;
    put_u64(&s, (uint64_t)st.st_size);
  }
  sha256_final(&s, h);
  ws_hex(h, SHA256_LEN, out);
  return 0;
}

static int parts(const struct ws_change *c)
{
  return c->kind == WS_RENAMED ? 2 : 1;
}

static int fp_cmp(const void *a, const void *b)
{
  return memcmp(a, b, FP_HEX);
}

int workspace_review_record(const struct workspace *w, const struct ws_layers *l,
                            const struct ws_changes *c, struct error *err)
{
  cleanup_close int dfd = open(w->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  cleanup_free char *buf = xmalloc(c->n * 2 * (FP_HEX + 1) + 1);
  size_t n = 0;

  if (dfd < 0)
    return error_errno(err, "workspace `%s`: open `%s`", w->id, w->dir);
  for (size_t i = 0; i < c->n; i++)
    for (int part = 0; part < parts(&c->v[i]); part++) {
      char fp[FP_HEX + 1];
      if (fingerprint(l, &c->v[i], part, fp) < 0)
        continue; /* unreadable now: commit will not match it either */
      memcpy(buf + n * (FP_HEX + 1), fp, FP_HEX);
      buf[n * (FP_HEX + 1) + FP_HEX] = '\n';
      n++;
    }
  qsort(buf, n, FP_HEX + 1, fp_cmp);
  if (write_file_atomic_at(dfd, REVIEW_FILE, buf, n * (FP_HEX + 1), err) < 0)
    return error_prefix(err, "workspace `%s`: record what diff showed", w->id);
  return 0;
}

int workspace_review_unseen(const struct workspace *w, const struct ws_layers *l,
                            const struct ws_changes *c, char *const *paths, char *const *incl,
                            bool *ret_recorded, char ***ret_unseen, struct error *err)
{
  cleanup_free char *path = xfmt("%s/%s", w->dir, REVIEW_FILE);
  cleanup_free char *data = NULL;
  struct error e = {0};
  size_t len = 0, n;

  *ret_recorded = false;
  *ret_unseen = NULL;
  if (read_file_at(AT_FDCWD, path, (size_t)WS_MAX_CHANGES * (FP_HEX + 1), &data, &len, &e) < 0) {
    if (e.code == ENOENT)
      return 0;
    *err = e;
    return error_prefix(err, "workspace `%s`: what diff showed", w->id);
  }
  if (len % (FP_HEX + 1) != 0)
    return error_set(err, EINVAL, "workspace `%s`: `%s`: a bad record", w->id, path);
  *ret_recorded = true;
  n = len / (FP_HEX + 1);
  for (size_t i = 0; i < c->n; i++) {
    if (!ws_commit_selected(&c->v[i], paths, incl))
      continue;
    for (int part = 0; part < parts(&c->v[i]); part++) {
      char fp[FP_HEX + 1];
      if (fingerprint(l, &c->v[i], part, fp) < 0 ||
          bsearch(fp, data, n, FP_HEX + 1, fp_cmp) == NULL) {
        strv_push(ret_unseen, c->v[i].path);
        break;
      }
    }
  }
  return 0;
}
