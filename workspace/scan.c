/* scan.c - the change set of a workspace: the union of its change layers
 * (upper first, then the snapshot layers of the current stack) compared with
 * the host directory.
 *
 * For each directory the topmost layer holding a name decides what the
 * container sees: a whiteout (char device 0/0) hides the name, a directory
 * merges with the same directory in the layers below until one is opaque
 * (trusted.overlay.opaque = "y") or a lower layer holds a whiteout or a
 * non-directory there; everything else replaces what is below.  The host is
 * the last layer: it shows through a directory only when no layer above hid
 * it.  Compared with the host each visible name is added, modified (content,
 * type or mode), deleted, or unchanged (a copy-up that changed nothing).
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

struct frame {
  int fds[WS_MAX_LAYERS + 1];
  int idx[WS_MAX_LAYERS + 1]; /* layer index of fds[i] */
  size_t n;
};

struct scan {
  const struct ws_layers *l;
  struct ws_changes *out;
  struct error *err;
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

static bool is_opaque(int dirfd, const char *name)
{
  cleanup_close int fd = ws_open_dir(dirfd, name);
  char v[4];

  if (fd < 0)
    return false;
  for (int i = 0; i < 2; i++) {
    ssize_t n = fgetxattr(fd, i ? "user.overlay.opaque" : "trusted.overlay.opaque", v, sizeof v);
    if (n == 1 && v[0] == 'y')
      return true;
  }
  return false;
}

enum ws_entry ws_classify(int dirfd, const char *name, enum ws_ftype *ret_type)
{
  struct stat st;

  *ret_type = WS_T_NONE;
  if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return WS_E_NONE;
  if (S_ISCHR(st.st_mode) && st.st_rdev == makedev(0, 0))
    return WS_E_WHITEOUT;
  *ret_type = ws_mode_type(st.st_mode);
  if (S_ISDIR(st.st_mode))
    return is_opaque(dirfd, name) ? WS_E_OPAQUE_DIR : WS_E_DIR;
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

static int visit(struct scan *s, const struct frame *f, enum host_state hs, int hostfd,
                 const char *path, int depth);

/* A non-directory at the top: compare it with the host's entry. */
static int visit_leaf(struct scan *s, int lfd, int layer, const char *name, const char *path,
                      int hostfd, const struct stat *hst)
{
  struct stat st;
  bool same;

  if (fstatat(lfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return error_errno(s->err, "workspace scan: stat `%s`", path);
  if (hst == NULL)
    return emit_new(s, WS_ADDED, path, layer, &st, NULL);
  if (S_ISDIR(hst->st_mode)) {
    if (emit_deleted(s, hostfd, name, path, hst) < 0)
      return -1;
    return emit_new(s, WS_ADDED, path, layer, &st, NULL);
  }
  if ((st.st_mode & S_IFMT) != (hst->st_mode & S_IFMT))
    return emit_new(s, WS_MODIFIED, path, layer, &st, hst);
  if (S_ISREG(st.st_mode))
    same = st.st_size == hst->st_size &&
           ws_same_content(lfd, name, hostfd, name, (uint64_t)st.st_size);
  else if (S_ISLNK(st.st_mode))
    same = ws_same_link(lfd, name, hostfd, name);
  else
    same = st.st_rdev == hst->st_rdev;
  if (same && (S_ISLNK(st.st_mode) || (st.st_mode & 07777) == (hst->st_mode & 07777)))
    return 0;
  if (emit_new(s, WS_MODIFIED, path, layer, &st, hst) < 0)
    return -1;
  last(s)->content_same = same;
  return 0;
}

/* A directory at layer f->idx[top]: build the frame below it and recurse. */
static int visit_dir(struct scan *s, const struct frame *f, size_t top, const char *name,
                     const char *path, enum host_state hs, int hostfd, const struct stat *hst,
                     int depth)
{
  struct frame sub = {.n = 0};
  cleanup_close int subhost = -1;
  bool stopped = false;
  enum host_state shs = H_NONE;
  struct stat st;
  int ret = -1;

  if (fstatat(f->fds[top], name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return error_errno(s->err, "workspace scan: stat `%s`", path);
  for (size_t i = top; i < f->n && !stopped; i++) {
    enum ws_ftype t;
    enum ws_entry e = ws_classify(f->fds[i], name, &t);
    if (e == WS_E_NONE)
      continue;
    if (e != WS_E_DIR && e != WS_E_OPAQUE_DIR) {
      stopped = true;
      break;
    }
    sub.fds[sub.n] = ws_open_dir(f->fds[i], name);
    if (sub.fds[sub.n] < 0) {
      error_errno(s->err, "workspace scan: open `%s`", path);
      goto out;
    }
    sub.idx[sub.n++] = f->idx[i];
    stopped = e == WS_E_OPAQUE_DIR;
  }
  if (hst && S_ISDIR(hst->st_mode)) {
    subhost = ws_open_dir(hostfd, name);
    if (subhost < 0) {
      error_errno(s->err, "workspace scan: open host `%s`", path);
      goto out;
    }
    shs = hs == H_MERGED && !stopped ? H_MERGED : H_HIDDEN;
    if ((st.st_mode & 07777) != (hst->st_mode & 07777)) {
      if (emit_new(s, WS_MODIFIED, path, f->idx[top], &st, hst) < 0)
        goto out;
      last(s)->content_same = true;
    }
  } else {
    if (hst && emit_deleted(s, hostfd, name, path, hst) < 0)
      goto out;
    if (emit_new(s, WS_ADDED, path, f->idx[top], &st, NULL) < 0)
      goto out;
  }
  ret = visit(s, &sub, shs, subhost, path, depth + 1);
out:
  for (size_t i = 0; i < sub.n; i++)
    close(sub.fds[i]);
  return ret;
}

static int visit_name(struct scan *s, const struct frame *f, enum host_state hs, int hostfd,
                      const char *name, const char *path, int depth)
{
  struct stat hbuf, *hst = NULL;
  enum ws_entry e = WS_E_NONE;
  enum ws_ftype t;
  size_t top;

  if (hs != H_NONE && fstatat(hostfd, name, &hbuf, AT_SYMLINK_NOFOLLOW) == 0)
    hst = &hbuf;
  for (top = 0; top < f->n; top++)
    if ((e = ws_classify(f->fds[top], name, &t)) != WS_E_NONE)
      break;
  if (top == f->n || e == WS_E_WHITEOUT) /* only on the host (hidden), or whited out */
    return hst ? emit_deleted(s, hostfd, name, path, hst) : 0;
  if (e == WS_E_DIR || e == WS_E_OPAQUE_DIR)
    return visit_dir(s, f, top, name, path, hs, hostfd, hst, depth);
  return visit_leaf(s, f->fds[top], f->idx[top], name, path, hostfd, hst);
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

static int visit(struct scan *s, const struct frame *f, enum host_state hs, int hostfd,
                 const char *path, int depth)
{
  cleanup_strv char **names = NULL;
  size_t n = 0, cap = 0, u = 0;

  if (depth > WS_MAX_DEPTH)
    return error_set(s->err, ELOOP, "workspace scan: `%s`: nested too deep", path);
  for (size_t i = 0; i < f->n; i++)
    if (add_names(f->fds[i], &names, &n, &cap) < 0)
      return error_errno(s->err, "workspace scan: read `%s`", *path ? path : ".");
  /* under an opaque layer, host names no layer mentions are deleted */
  if (hs == H_HIDDEN && add_names(hostfd, &names, &n, &cap) < 0)
    return error_errno(s->err, "workspace scan: read host `%s`", path);
  if (n > 1)
    qsort(names, n, sizeof *names, name_cmp);
  for (size_t i = 0; i < n; i++) { /* unique */
    if (u > 0 && strcmp(names[u - 1], names[i]) == 0) {
      free(names[i]);
      continue;
    }
    names[u++] = names[i];
  }
  if (names)
    names[u] = NULL;
  for (size_t i = 0; i < u; i++) {
    cleanup_free char *child = *path ? xfmt("%s/%s", path, names[i]) : xstrdup(names[i]);
    if (visit_name(s, f, hs, hostfd, names[i], child, depth) < 0)
      return -1;
  }
  return 0;
}

int ws_scan(const struct ws_layers *l, struct ws_changes *ret, struct error *err)
{
  struct scan s = {l, ret, err};
  struct frame f = {.n = 0};

  if (l->n > WS_MAX_LAYERS + 1)
    return error_set(err, E2BIG, "workspace scan: too many layers (%zu)", l->n);
  for (size_t i = 0; i < l->n; i++) {
    f.fds[f.n] = l->fds[i];
    f.idx[f.n++] = (int)i;
  }
  memset(ret, 0, sizeof *ret);
  if (visit(&s, &f, H_MERGED, l->hostfd, "", 0) < 0) {
    ws_changes_free(ret);
    return -1;
  }
  return 0;
}

void ws_changes_free(struct ws_changes *c)
{
  for (size_t i = 0; i < c->n; i++) {
    free(c->v[i].path);
    free(c->v[i].old_path);
    free(c->v[i].protect);
  }
  free(c->v);
  memset(c, 0, sizeof *c);
}
