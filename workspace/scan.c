/* scan.c - the change set of a workspace: the union of its change layers
 * (upper first, then the snapshot layers of the current stack) compared with
 * the host directory.
 *
 * For each directory the topmost layer holding a name decides what the
 * container sees: a whiteout (char device 0/0) hides the name, a directory
 * merges with the same directory in the layers below until one is opaque
 * (overlay.opaque = "y" in the namespace of the mount: ws_dir_opaque) or a lower layer holds a
 * whiteout or a non-directory there; everything else replaces what is below.  The host is the last
 * layer: it shows through a directory only when no layer above hid it.  Compared with the host each
 * visible name is added, modified (content, type or mode), deleted, or unchanged (a copy-up that
 * changed nothing).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "common/util.h"
#include "workspace/internal.h"

enum host_state {
  H_NONE,   /* the host has no directory here */
  H_MERGED, /* the host directory shows through */
  H_HIDDEN, /* the host has a directory here, hidden by an opaque layer */
};

/* One directory level of the walk: the fds of the layers that hold the
 * directory (topmost first), the host's, the merged names and the next one
 * to visit.  The walk keeps a stack of them on the heap (no recursion: an
 * agent can nest directories as deep as it likes). */
struct level {
  int *fds;
  int *idx; /* layer index of fds[i] */
  size_t n;
  int hostfd; /* -1: none */
  enum host_state hs;
  char **names;
  size_t n_names, next;
  size_t path_len; /* of this directory's path in scan.path */
};

struct scan {
  const struct ws_layers *l;
  struct ws_changes *out;
  struct error *err;
  struct level *stack;
  size_t depth, cap;
  char *path; /* the current path, grown as needed */
  size_t path_cap;
};

const char *ws_kind_name(enum ws_kind k)
{
  static const char *const names[] = {"added", "modified", "deleted", "renamed"};
  return names[k];
}

const char *ws_ftype_name(enum ws_ftype t)
{
  static const char *const names[] = {"none", "file", "dir", "symlink", "other"};
  return names[t];
}

bool ws_dir_opaque(int fd, unsigned xattr)
{
  static const struct {
    unsigned ns;
    const char *name;
  } keys[] = {{WS_XATTR_TRUSTED, "trusted.overlay.opaque"}, {WS_XATTR_USER, "user.overlay.opaque"}};
  char v[4];

  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
    if (xattr != 0 && !(xattr & keys[i].ns))
      continue;
    ssize_t n = fgetxattr(fd, keys[i].name, v, sizeof v);
    if (n == 1 && v[0] == 'y')
      return true;
  }
  return false;
}

static bool is_opaque(int dirfd, const char *name, unsigned xattr)
{
  cleanup_close int fd = ws_open_dir(dirfd, name);

  return fd >= 0 && ws_dir_opaque(fd, xattr);
}

enum ws_entry ws_classify(int dirfd, const char *name, unsigned xattr, enum ws_ftype *ret_type)
{
  struct stat st;

  *ret_type = WS_T_NONE;
  if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return WS_E_NONE;
  if (S_ISCHR(st.st_mode) && st.st_rdev == makedev(0, 0))
    return WS_E_WHITEOUT;
  *ret_type = ws_mode_type(st.st_mode);
  if (S_ISDIR(st.st_mode))
    return is_opaque(dirfd, name, xattr) ? WS_E_OPAQUE_DIR : WS_E_DIR;
  return WS_E_OTHER;
}

static int emit(struct scan *s, enum ws_kind kind, const char *path, enum ws_ftype type,
                enum ws_ftype old_type)
{
  struct ws_change c = {.kind = kind, .type = type, .old_type = old_type, .layer = -1};

  if (s->out->n >= WS_MAX_CHANGES)
    return error_set(s->err, E2BIG, "workspace scan: more than %d changes", WS_MAX_CHANGES);
  c.path = xstrdup(path);
  ws_changes_push(s->out, &c);
  return 0;
}

static struct ws_change *last(struct scan *s)
{
  return &s->out->v[s->out->n - 1];
}

/* A host entry that is no longer visible. */
static int emit_deleted(struct scan *s, int hostfd, const char *name, const char *path,
                        const struct stat *hst)
{
  if (emit(s, WS_DELETED, path, ws_mode_type(hst->st_mode), ws_mode_type(hst->st_mode)) < 0)
    return -1;
  last(s)->old_mode = hst->st_mode & 07777;
  last(s)->old_size = (uint64_t)hst->st_size;
  if (S_ISDIR(hst->st_mode))
    ws_tree_size(hostfd, name, &last(s)->n_files, &last(s)->old_size);
  return 0;
}

static int emit_new(struct scan *s, enum ws_kind kind, const char *path, int layer,
                    const struct stat *st, const struct stat *hst)
{
  if (emit(s, kind, path, ws_mode_type(st->st_mode), hst ? ws_mode_type(hst->st_mode) : WS_T_NONE) <
      0)
    return -1;
  last(s)->layer = layer;
  last(s)->mode = st->st_mode & 07777;
  last(s)->size = S_ISDIR(st->st_mode) ? 0 : (uint64_t)st->st_size;
  if (hst) {
    last(s)->old_mode = hst->st_mode & 07777;
    last(s)->old_size = S_ISDIR(hst->st_mode) ? 0 : (uint64_t)hst->st_size;
  }
  return 0;
}

/* emit_new for a non-directory lfd/name, with a symlink's target. */
static int emit_leaf(struct scan *s, enum ws_kind kind, const char *path, int layer,
                     const struct stat *st, const struct stat *hst, int lfd, const char *name)
{
  char t[4097];
  ssize_t n;

  if (emit_new(s, kind, path, layer, st, hst) < 0)
    return -1;
  if (!S_ISLNK(st->st_mode))
    return 0;
  n = readlinkat(lfd, name, t, sizeof t - 1);
  if (n < 0)
    return error_errno(s->err, "workspace scan: read the symlink `%s`", path);
  last(s)->target = xstrndup(t, (size_t)n);
  return 0;
}

/* A non-directory at the top: compare it with the host's entry. */
static int visit_leaf(struct scan *s, int lfd, int layer, const char *name, const char *path,
                      int hostfd, const struct stat *hst)
{
  struct stat st;
  bool same;

  if (fstatat(lfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return error_errno(s->err, "workspace scan: stat `%s`", path);
  if (hst == NULL)
    return emit_leaf(s, WS_ADDED, path, layer, &st, NULL, lfd, name);
  if (S_ISDIR(hst->st_mode)) {
    if (emit_deleted(s, hostfd, name, path, hst) < 0)
      return -1;
    return emit_leaf(s, WS_ADDED, path, layer, &st, NULL, lfd, name);
  }
  if ((st.st_mode & S_IFMT) != (hst->st_mode & S_IFMT))
    return emit_leaf(s, WS_MODIFIED, path, layer, &st, hst, lfd, name);
  if (S_ISREG(st.st_mode))
    same = st.st_size == hst->st_size &&
           ws_same_content(lfd, name, hostfd, name, (uint64_t)st.st_size);
  else if (S_ISLNK(st.st_mode))
    same = ws_same_link(lfd, name, hostfd, name);
  else
    same = st.st_rdev == hst->st_rdev;
  if (same && (S_ISLNK(st.st_mode) || (st.st_mode & 07777) == (hst->st_mode & 07777)))
    return 0;
  if (emit_leaf(s, WS_MODIFIED, path, layer, &st, hst, lfd, name) < 0)
    return -1;
  last(s)->content_same = same;
  return 0;
}

static void level_free(struct level *v)
{
  for (size_t i = 0; i < v->n; i++)
    close(v->fds[i]);
  if (v->hostfd >= 0 && v->path_len > 0) /* the root's host fd is the caller's */
    close(v->hostfd);
  free(v->fds);
  free(v->idx);
  strv_free(v->names);
  memset(v, 0, sizeof *v);
}

static int name_cmp(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Append the names of the directory at fd to *v (*n, *cap). */
static int add_names(int fd, char ***v, size_t *n, size_t *cap)
{
  cleanup_strv char **names = NULL;
  size_t k = 0;

  if (ws_list_dir(fd, &names, &k) < 0)
    return -1;
  if (*n + k + 1 > *cap)
    *v = xrealloc(*v, (*cap = (*n + k + 1) * 2) * sizeof **v);
  for (size_t j = 0; j < k; j++) {
    (*v)[(*n)++] = names[j];
    names[j] = NULL;
  }
  (*v)[*n] = NULL;
  return 0;
}

/* Out of descriptors (errno): a level is open per directory of the path */
static bool too_deep(struct scan *s, const char *path)
{
  if (errno != EMFILE && errno != ENFILE)
    return false;
  error_set(s->err, errno,
            "workspace scan: `%s`: nested deeper than the open-file limit allows (discard drops "
            "the changes)",
            path);
  return true;
}

/* The sorted, unique names of a level (every layer's, and the host's when
 * an opaque layer hides it: those are deletions). */
static int level_names(struct scan *s, struct level *v)
{
  size_t n = 0, cap = 0, u = 0;
  const char *path = v->path_len ? s->path : ".";

  for (size_t i = 0; i < v->n; i++)
    if (add_names(v->fds[i], &v->names, &n, &cap) < 0)
      return too_deep(s, path) ? -1 : error_errno(s->err, "workspace scan: read `%s`", path);
  if (v->hs == H_HIDDEN && add_names(v->hostfd, &v->names, &n, &cap) < 0)
    return too_deep(s, path) ? -1 : error_errno(s->err, "workspace scan: read host `%s`", path);
  if (n > 1)
    qsort(v->names, n, sizeof *v->names, name_cmp);
  for (size_t i = 0; i < n; i++) { /* unique */
    if (u > 0 && strcmp(v->names[u - 1], v->names[i]) == 0) {
      free(v->names[i]);
      continue;
    }
    v->names[u++] = v->names[i];
  }
  if (v->names)
    v->names[u] = NULL;
  v->n_names = u;
  return 0;
}

/* Push the level of a directory (its layer fds and host fd are taken). */
static int push(struct scan *s, struct level *v)
{
  if (s->depth == s->cap)
    s->stack = xrealloc(s->stack, (s->cap = s->cap ? s->cap * 2 : 32) * sizeof *s->stack);
  s->stack[s->depth++] = *v;
  if (level_names(s, &s->stack[s->depth - 1]) < 0)
    return -1;
  return 0;
}

/* A directory at layer `top` of level p: emit its own change and push the
 * level below it. */
static int visit_dir(struct scan *s, struct level *p, size_t top, const char *name,
                     const struct stat *hst)
{
  struct level sub = {.hostfd = -1, .hs = H_NONE, .path_len = strlen(s->path)};
  bool stopped = false, in_layer = true;
  struct stat st;

  if (fstatat(p->fds[top], name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return error_errno(s->err, "workspace scan: stat `%s`", s->path);
  sub.fds = xmalloc((p->n + 1) * sizeof *sub.fds);
  sub.idx = xmalloc((p->n + 1) * sizeof *sub.idx);
  for (size_t i = top; i < p->n && !stopped; i++) {
    enum ws_ftype t;
    enum ws_entry e = ws_classify(p->fds[i], name, s->l->xattr, &t);
    if (e == WS_E_NONE)
      continue;
    if (e != WS_E_DIR && e != WS_E_OPAQUE_DIR)
      break;
    sub.fds[sub.n] = ws_open_dir(p->fds[i], name);
    if (sub.fds[sub.n] < 0)
      goto fail_open;
    sub.idx[sub.n++] = p->idx[i];
    stopped = e == WS_E_OPAQUE_DIR;
  }
  if (hst && S_ISDIR(hst->st_mode)) {
    in_layer = false;
    sub.hostfd = ws_open_dir(p->hostfd, name);
    if (sub.hostfd < 0)
      goto fail_open;
    sub.hs = p->hs == H_MERGED && !stopped ? H_MERGED : H_HIDDEN;
    if ((st.st_mode & 07777) != (hst->st_mode & 07777)) {
      if (emit_new(s, WS_MODIFIED, s->path, p->idx[top], &st, hst) < 0)
        goto fail;
      last(s)->content_same = true;
    }
  } else {
    if (hst && emit_deleted(s, p->hostfd, name, s->path, hst) < 0)
      goto fail;
    if (emit_new(s, WS_ADDED, s->path, p->idx[top], &st, NULL) < 0)
      goto fail;
  }
  return push(s, &sub);
fail_open:
  if (too_deep(s, s->path))
    ;
  else if (errno == EACCES && in_layer && geteuid() != 0)
    error_set(s->err, EACCES,
              "workspace scan: `%s` cannot be listed (mode %04o, set inside the sandbox): a "
              "review needs to read it; discard drops the changes",
              s->path, (unsigned)(st.st_mode & 07777));
  else
    error_errno(s->err, "workspace scan: open `%s`", s->path);
fail:
  if (sub.path_len == 0)
    sub.path_len = 1; /* level_free closes the host fd of a non-root level */
  level_free(&sub);
  return -1;
}

static int visit_name(struct scan *s, struct level *p, const char *name)
{
  struct stat hbuf, *hst = NULL;
  enum ws_entry e = WS_E_NONE;
  enum ws_ftype t;
  size_t top;

  if (p->hs != H_NONE && fstatat(p->hostfd, name, &hbuf, AT_SYMLINK_NOFOLLOW) == 0)
    hst = &hbuf;
  for (top = 0; top < p->n; top++)
    if ((e = ws_classify(p->fds[top], name, s->l->xattr, &t)) != WS_E_NONE)
      break;
  if (top == p->n || e == WS_E_WHITEOUT) /* only on the host (hidden), or whited out */
    return hst ? emit_deleted(s, p->hostfd, name, s->path, hst) : 0;
  if (e == WS_E_DIR || e == WS_E_OPAQUE_DIR)
    return visit_dir(s, p, top, name, hst);
  return visit_leaf(s, p->fds[top], p->idx[top], name, s->path, p->hostfd, hst);
}

/* s->path = the path of level p + "/" + name. */
static void set_path(struct scan *s, const struct level *p, const char *name)
{
  size_t need = p->path_len + 1 + strlen(name) + 1;

  if (need > s->path_cap)
    s->path = xrealloc(s->path, s->path_cap = need * 2);
  if (p->path_len == 0)
    strcpy(s->path, name);
  else
    sprintf(s->path + p->path_len, "/%s", name);
}

static int walk(struct scan *s)
{
  while (s->depth > 0) {
    struct level *p = &s->stack[s->depth - 1];
    if (p->next == p->n_names) {
      level_free(p);
      s->depth--;
      continue;
    }
    set_path(s, p, p->names[p->next]);
    if (visit_name(s, p, p->names[p->next++]) < 0)
      return -1;
  }
  return 0;
}

int ws_scan(const struct ws_layers *l, struct ws_changes *ret, struct error *err)
{
  struct scan s = {.l = l, .out = ret, .err = err};
  struct level root = {.hostfd = l->hostfd, .hs = H_MERGED, .path_len = 0};
  int r = -1;

  if (l->n > WS_MAX_LAYERS + 1)
    return error_set(err, E2BIG, "workspace scan: too many layers (%zu)", l->n);
  memset(ret, 0, sizeof *ret);
  root.fds = xmalloc((l->n + 1) * sizeof *root.fds);
  root.idx = xmalloc((l->n + 1) * sizeof *root.idx);
  for (size_t i = 0; i < l->n; i++) {
    root.fds[root.n] = fcntl(l->fds[i], F_DUPFD_CLOEXEC, 3);
    if (root.fds[root.n] < 0) {
      error_errno(err, "workspace scan: dup");
      goto out;
    }
    root.idx[root.n++] = (int)i;
  }
  s.path = xmalloc0(s.path_cap = 256);
  if (push(&s, &root) == 0 && walk(&s) == 0)
    r = 0;
out:
  if (s.depth == 0 && s.stack == NULL)
    level_free(&root);
  while (s.depth > 0)
    level_free(&s.stack[--s.depth]);
  free(s.stack);
  free(s.path);
  if (r < 0)
    ws_changes_free(ret);
  return r;
}

void ws_changes_free(struct ws_changes *c)
{
  for (size_t i = 0; i < c->n; i++) {
    free(c->v[i].path);
    free(c->v[i].old_path);
    free(c->v[i].protect);
    free(c->v[i].target);
    free(c->v[i].ignored);
  }
  free(c->v);
  memset(c, 0, sizeof *c);
}

/* Is c an added directory that is a recorded mount point or a parent of
 * one, or an added empty file that is one (a file bind's mount point)? */
static bool mountpoint_dir(const struct ws_change *c, char *const *mps)
{
  size_t n = strlen(c->path);
  bool file = c->type == WS_T_FILE && c->size == 0;

  if (c->kind != WS_ADDED || (c->type != WS_T_DIR && !file))
    return false;
  for (size_t i = 0; mps[i]; i++)
    if (strncmp(mps[i], c->path, n) == 0 && (mps[i][n] == '\0' || (!file && mps[i][n] == '/')))
      return true;
  return false;
}

void ws_drop_mountpoints(struct ws_changes *c, char *const *mps)
{
  bool *drop;
  size_t k = 0;
  bool more = true;

  if (strv_len(mps) == 0 || c->n == 0)
    return;
  drop = xmalloc0(c->n * sizeof *drop);
  /* deepest first: a parent goes when all below it went */
  while (more) {
    more = false;
    for (size_t i = 0; i < c->n; i++) {
      size_t n = strlen(c->v[i].path);
      bool below = false;
      if (drop[i] || !mountpoint_dir(&c->v[i], mps))
        continue;
      for (size_t j = 0; j < c->n && !below; j++)
        below = j != i && !drop[j] && strncmp(c->v[j].path, c->v[i].path, n) == 0 &&
                c->v[j].path[n] == '/';
      if (!below)
        drop[i] = more = true;
    }
  }
  for (size_t i = 0; i < c->n; i++) {
    if (drop[i]) {
      free(c->v[i].path);
      free(c->v[i].old_path);
      free(c->v[i].protect);
      free(c->v[i].target);
      continue;
    }
    c->v[k++] = c->v[i];
  }
  c->n = k;
  free(drop);
}
