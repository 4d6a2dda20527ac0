/* renames.c - rename detection for the change set.
 *
 * With redirect_dir=off overlayfs records a rename as a whiteout at the old
 * path and a new file at the new one.  An added regular file whose SHA-256
 * equals that of a deleted host file (a deleted file, or a file below a
 * deleted directory) of the same size is reported as a rename instead.  Empty
 * files are never paired (any two are equal).  SHA-256 rather than a cheap
 * hash: an agent must not be able to make new content pass for a rename.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "workspace/internal.h"

#define MAX_CANDIDATES 100000
#define MAX_HASH_SIZE ((uint64_t)256 << 20)

struct cand {
  char *path;
  uint64_t size;
  uint32_t mode; /* the host file's permission bits */
  size_t change; /* index of its WS_DELETED entry, SIZE_MAX when below a deleted dir */
  int state;     /* 0 not hashed, 1 hashed, -1 cannot hash */
  bool used;
  unsigned char hash[32];
};

struct cands {
  struct cand *v;
  size_t n, cap;
};

static void add_cand(struct cands *c, const char *path, uint64_t size, uint32_t mode, size_t change)
{
  if (size == 0 || size > MAX_HASH_SIZE || c->n >= MAX_CANDIDATES)
    return;
  if (c->n == c->cap)
    c->v = xrealloc(c->v, (c->cap = c->cap ? c->cap * 2 : 16) * sizeof *c->v);
  c->v[c->n++] = (struct cand){xstrdup(path), size, mode, change, 0, false, {0}};
}

/* Regular files below the deleted host directory open at fd. */
static void add_tree(struct cands *c, int fd, const char *path, dev_t dev, int depth)
{
  cleanup_strv char **names = NULL;
  size_t n = 0;

  if (depth > WS_MAX_DEPTH || ws_list_dir(fd, &names, &n) < 0)
    return;
  for (size_t i = 0; i < n && c->n < MAX_CANDIDATES; i++) {
    cleanup_free char *child = xfmt("%s/%s", path, names[i]);
    struct stat st;
    if (fstatat(fd, names[i], &st, AT_SYMLINK_NOFOLLOW) < 0 || st.st_dev != dev)
      continue;
    if (S_ISREG(st.st_mode)) {
      add_cand(c, child, (uint64_t)st.st_size, st.st_mode & 07777, SIZE_MAX);
    } else if (S_ISDIR(st.st_mode)) {
      cleanup_close int sub = ws_open_dir(fd, names[i]);
      if (sub >= 0)
        add_tree(c, sub, child, dev, depth + 1);
    }
  }
}

static int hash_at(int rootfd, const char *path, unsigned char out[32])
{
  cleanup_close int fd = ws_open_beneath(rootfd, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK, 0);
  struct stat st;

  if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
    return -1;
  return ws_sha256_fd(fd, out);
}

static bool cand_hash(const struct ws_layers *l, struct cand *c)
{
  if (c->state == 0)
    c->state = hash_at(l->hostfd, c->path, c->hash) == 0 ? 1 : -1;
  return c->state == 1;
}

static void collect(const struct ws_layers *l, const struct ws_changes *ch, struct cands *c)
{
  for (size_t i = 0; i < ch->n; i++) {
    const struct ws_change *d = &ch->v[i];
    if (d->kind != WS_DELETED)
      continue;
    if (d->type == WS_T_FILE) {
      add_cand(c, d->path, d->old_size, d->old_mode, i);
    } else if (d->type == WS_T_DIR) {
      cleanup_close int fd = ws_open_beneath(l->hostfd, d->path, O_RDONLY | O_DIRECTORY, 0);
      struct stat st;
      if (fd >= 0 && fstat(fd, &st) == 0)
        add_tree(c, fd, d->path, st.st_dev, 0);
    }
  }
}

/* Find the deleted file this added file was renamed from. */
static struct cand *match(const struct ws_layers *l, struct cands *c, const struct ws_change *a)
{
  unsigned char h[32];
  bool hashed = false;

  for (size_t j = 0; j < c->n; j++) {
    struct cand *d = &c->v[j];
    if (d->used || d->size != a->size || !cand_hash(l, d))
      continue;
    if (!hashed) {
      if (a->layer < 0 || hash_at(l->fds[a->layer], a->path, h) < 0)
        return NULL;
      hashed = true;
    }
    if (memcmp(h, d->hash, sizeof h) == 0)
      return d;
  }
  return NULL;
}

int ws_detect_renames(const struct ws_layers *l, struct ws_changes *ch, struct error *err)
{
  struct cands c = {0};
  bool *drop;
  size_t u = 0;

  (void)err;
  collect(l, ch, &c);
  drop = xmalloc0((ch->n + 1) * sizeof *drop);
  for (size_t i = 0; i < ch->n && c.n > 0; i++) {
    struct ws_change *a = &ch->v[i];
    struct cand *d;
    if (a->kind != WS_ADDED || a->type != WS_T_FILE || a->size == 0)
      continue;
    d = match(l, &c, a);
    if (d == NULL)
      continue;
    d->used = true;
    a->kind = WS_RENAMED;
    a->old_path = xstrdup(d->path);
    a->old_type = WS_T_FILE;
    a->old_size = d->size;
    /* (also of a file below a deleted directory: diff shows a mode change) */
    a->old_mode = d->mode;
    if (d->change != SIZE_MAX)
      drop[d->change] = true;
  }
  for (size_t i = 0; i < ch->n; i++) {
    if (drop[i]) {
      free(ch->v[i].path);
      free(ch->v[i].old_path);
      free(ch->v[i].target);
      continue;
    }
    ch->v[u++] = ch->v[i];
  }
  ch->n = u;
  for (size_t j = 0; j < c.n; j++)
    free(c.v[j].path);
  free(c.v);
  free(drop);
  return 0;
}
