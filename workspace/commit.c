/* commit.c - applying reviewed changes to the host directory.
 *
 * The host directory is shared with the operator and the change set is
 * written by the agent, so every host path is opened with openat2(
 * RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV) relative to a fd
 * of the host dir: a symlink or a mount point anywhere on the path is refused
 * instead of being followed out of the directory (the symlink-swap escapes of
 * CVE-2021-30465 class).  Files are written to a temporary name in their
 * final directory and renamed over the target (atomic per file); symlinks
 * are recreated as symlinks; setuid/setgid bits are never carried over; the
 * only files whose owner or mode we set are the ones we just created.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "common/util.h"
#include "workspace/internal.h"

#define MAX_TREE_CHECKS 100000

bool ws_change_selected(const struct ws_change *c, char *const *paths)
{
  if (paths == NULL)
    return true;
  for (size_t i = 0; paths[i]; i++) {
    size_t n = strlen(paths[i]);
    if (n == 0)
      return true;
    if ((strncmp(c->path, paths[i], n) == 0 && (c->path[n] == '\0' || c->path[n] == '/')) ||
        (c->old_path && strncmp(c->old_path, paths[i], n) == 0 &&
         (c->old_path[n] == '\0' || c->old_path[n] == '/')))
      return true;
  }
  return false;
}

bool ws_commit_selected(const struct ws_change *c, char *const *paths, char *const *incl)
{
  if (c->protect)
    return incl != NULL && ws_change_selected(c, incl);
  return ws_change_selected(c, paths);
}

struct checker {
  const struct workspace *w;
  int hostfd;
  char ***out;
  size_t checks;
};

static void check(struct checker *k, const char *path, bool gone_ok)
{
  enum ws_conflict c = ws_manifest_conflict(&k->w->manifest, k->hostfd, path, k->w->created_s);
  cleanup_free char *line = NULL, *q = NULL;

  k->checks++;
  if (c == WS_C_NONE || (gone_ok && c == WS_C_DELETED))
    return;
  q = ws_quote_path(path);
  line = xfmt("%s: %s", q, ws_conflict_name(c));
  if (strv_contains(*k->out, line))
    return;
  strv_push(k->out, line);
}

/* A directory to delete: anything below it changed or created on the host? */
static void check_tree(struct checker *k, const char *path, int depth)
{
  cleanup_close int fd = ws_open_beneath(k->hostfd, path, O_RDONLY | O_DIRECTORY, 0);
  cleanup_strv char **names = NULL;
  size_t n = 0;

  if (fd < 0 || depth > WS_MAX_DEPTH || ws_list_dir(fd, &names, &n) < 0)
    return;
  for (size_t i = 0; i < n && k->checks < MAX_TREE_CHECKS; i++) {
    cleanup_free char *child = xfmt("%s/%s", path, names[i]);
    struct stat st;
    check(k, child, true);
    if (fstatat(fd, names[i], &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode))
      check_tree(k, child, depth + 1);
  }
}

/* Does the i-th change make a directory where the host has a file or a
 * symlink (the scan gives that as the deletion of the host's object and the
 * addition of the directory, both selected)? */
static bool becomes_dir(const struct ws_changes *c, size_t i, char *const *paths, char *const *incl)
{
  const struct ws_change *ch = &c->v[i];

  if (ch->kind != WS_ADDED || ch->type != WS_T_DIR || !ws_commit_selected(ch, paths, incl))
    return false;
  for (size_t j = 0; j < c->n; j++)
    if (c->v[j].kind == WS_DELETED && c->v[j].type != WS_T_DIR && streq(c->v[j].path, ch->path))
      return ws_commit_selected(&c->v[j], paths, incl);
  return false;
}

int ws_commit_conflicts(const struct workspace *w, const struct ws_layers *l,
                        const struct ws_changes *c, char *const *paths, char *const *incl,
                        char ***ret, struct error *err)
{
  char **out = xmalloc0(sizeof *out);
  struct checker k = {w, l->hostfd, &out, 0};
  cleanup_strv char **replaced = NULL; /* selected files and symlinks made directories */
  bool below;

  for (size_t i = 0; i < c->n; i++)
    if (becomes_dir(c, i, paths, incl))
      strv_push(&replaced, c->v[i].path);
  for (size_t i = 0; i < c->n; i++) {
    const struct ws_change *ch = &c->v[i];
    if (!ws_commit_selected(ch, paths, incl))
      continue;
    /* below such a directory the host has no path of its own: the check of
     * the directory itself covers the host's file or symlink */
    below = false;
    for (char **r = replaced; r && *r && !below; r++)
      below = strncmp(ch->path, *r, strlen(*r)) == 0 && ch->path[strlen(*r)] == '/';
    if (below)
      continue;
    check(&k, ch->path, ch->kind == WS_DELETED);
    if (ch->kind == WS_DELETED && ch->type == WS_T_DIR)
      check_tree(&k, ch->path, 0);
    if (ch->kind == WS_RENAMED)
      check(&k, ch->old_path, true);
  }
  *ret = out;
  return 0;
}

/* --- applying ------------------------------------------------------------- */

/* Commit is all or nothing as far as the file system lets it be: the first
 * pass checks every selected change and stages it (missing parent
 * directories made, new files and symlinks written to temporary names in
 * their final directories, new directories made); if anything fails there,
 * everything staged is removed again and the host is as it was.  The second
 * pass only renames, removes and sets directory modes.  Special files
 * (fifos, sockets, devices) are never committed: they are listed and
 * skipped with a warning.  Setuid and setgid bits are never carried over. */

struct staged {
  const struct ws_change *c;
  int pfd;       /* O_PATH fd of the host parent (shared: see parent_fd) */
  char *tmp;     /* temporary name in pfd, NULL for directories and deletions */
  bool dir_done; /* a directory in place: its mode is set at the end */
};

struct applier {
  struct workspace *w;
  const struct ws_layers *l;
  unsigned seq;
  struct error *err;
  struct staged *v;
  size_t n, cap;
  char **made; /* directories created on the host, in creation order */
  int *fds;    /* every parent fd opened (closed at the end) */
  size_t n_fds;
  char *last_parent;
  int last_pfd;
  /* a file or symlink of the host that becomes a directory: the directory is
   * staged at a temporary name beside it (repl_to[i], for repl_from[i]), and
   * what goes below it is staged there */
  char **repl_from, **repl_to;
  char **replace_ok; /* the paths where the selected changes do that (becomes_dir) */
  bool group_ok;     /* the host dir is writable by its group (no sticky bit) */
};

/* parent with a replaced prefix swapped for its staging name (a new
 * string), and *ret_orig_len: the bytes of parent that the swap replaced
 * (0 when none). */
static char *staged_path(const struct applier *a, const char *parent, size_t *ret_orig_len)
{
  *ret_orig_len = 0;
  for (size_t i = strv_len(a->repl_from); i > 0; i--) {
    const char *f = a->repl_from[i - 1];
    size_t n = strlen(f);
    if (strncmp(parent, f, n) == 0 && (parent[n] == '\0' || parent[n] == '/')) {
      *ret_orig_len = n;
      return xfmt("%s%s", a->repl_to[i - 1], parent + n);
    }
  }
  return xstrdup(parent);
}

static void keep_fd(struct applier *a, int fd)
{
  a->fds = xrealloc(a->fds, (a->n_fds + 1) * sizeof *a->fds);
  a->fds[a->n_fds++] = fd;
}

/* The parent directory of path on the host, created (with the mode of the
 * same directory in layer, setuid/setgid cleared) where missing; every
 * directory made is recorded for the undo.  Returns an O_PATH fd. */
static int host_parent(struct applier *a, int layer, const char *parent)
{
  size_t orig_len;
  cleanup_free char *host_path = staged_path(a, parent, &orig_len);
  cleanup_free char *copy = xstrdup(host_path);
  size_t to_len = orig_len ? strlen(host_path) - (strlen(parent) - orig_len) : 0;
  int fd = ws_open_beneath(a->l->hostfd, "", O_PATH | O_DIRECTORY, 0);
  char *save = NULL;

  for (char *comp = strtok_r(copy, "/", &save); comp && fd >= 0;
       comp = strtok_r(NULL, "/", &save)) {
    int next = ws_open_beneath(fd, comp, O_PATH | O_DIRECTORY, 0);
    if (next < 0 && errno == ENOENT) {
      struct stat ls = {.st_mode = 0755}, ps;
      cleanup_free char *sofar = xstrndup(host_path, (size_t)(comp - copy) + strlen(comp));
      /* the same directory in the layer: by its own name, not the staging one */
      cleanup_free char *in_layer = orig_len && strlen(sofar) >= to_len
                                        ? xfmt("%.*s%s", (int)orig_len, parent, sofar + to_len)
                                        : xstrdup(sofar);
      if (layer >= 0)
        fstatat(a->l->fds[layer], in_layer, &ls, AT_SYMLINK_NOFOLLOW);
      if (mkdirat(fd, comp,
                  ((ls.st_mode & 01777) | 0700) &
                      ~(mode_t)(S_IWOTH | (a->group_ok ? 0 : S_IWGRP))) == 0) {
        strv_push(&a->made, sofar);
        if (fstat(fd, &ps) < 0 ||
            fchownat(fd, comp, ps.st_uid, ps.st_gid, AT_SYMLINK_NOFOLLOW) < 0) {
          close(fd);
          return -1;
        }
      }
      next = ws_open_beneath(fd, comp, O_PATH | O_DIRECTORY, 0);
    }
    close(fd);
    fd = next;
  }
  return fd;
}

/* A shared parent fd for consecutive changes in one directory. */
static int parent_fd(struct applier *a, int layer, const char *parent)
{
  int fd;

  if (a->last_parent && streq(a->last_parent, parent))
    return a->last_pfd;
  fd = host_parent(a, layer, parent);
  if (fd < 0)
    return -1;
  keep_fd(a, fd);
  free(a->last_parent);
  a->last_parent = xstrdup(parent);
  a->last_pfd = fd;
  return fd;
}

/* The mode committed for c's new object: write permission for others only
 * where the host's object already had it (a world-writable script or
 * directory would let any user of the host change, after the review, what
 * the operator runs); for the group the same, or where the host dir itself
 * is open to its group (group_ok: a umask of 002, a shared project). */
static mode_t commit_mode(const struct ws_change *c, mode_t mode, bool group_ok)
{
  bool had = c->kind == WS_MODIFIED || c->kind == WS_RENAMED;

  if (!had || !(c->old_mode & S_IWOTH))
    mode &= ~(mode_t)S_IWOTH;
  if (!group_ok && (!had || !(c->old_mode & S_IWGRP)))
    mode &= ~(mode_t)S_IWGRP;
  return mode;
}

/* Owner for a new object base in pfd: the replaced object's, else pfd's. */
static void owner_for(int pfd, const char *base, uid_t *uid, gid_t *gid)
{
  struct stat st;

  if (fstatat(pfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0 && fstat(pfd, &st) < 0)
    st.st_uid = 0, st.st_gid = 0;
  *uid = st.st_uid;
  *gid = st.st_gid;
}

static char *tmp_name(struct applier *a)
{
  return xfmt(".agentrt-ws.%d.%u", (int)getpid(), a->seq++);
}

/* The host file's own user.* xattrs onto its replacement (best effort: a
 * name that does not fit is left out).  Only the host's: the agent's
 * xattrs are not carried (README), and no security.* one, a file
 * capability above all, survives new content (as a write clears it). */
static void keep_host_xattrs(int pfd, const char *base, int out)
{
  cleanup_close int h = openat(pfd, base, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  char names[4096], val[4096];
  struct stat st;
  ssize_t n, v;

  if (h < 0 || fstat(h, &st) < 0 || !S_ISREG(st.st_mode) ||
      (n = flistxattr(h, names, sizeof names)) <= 0)
    return;
  for (char *p = names; p < names + n; p += strlen(p) + 1) {
    if (strncmp(p, "user.", 5) != 0 || (v = fgetxattr(h, p, val, sizeof val)) < 0)
      continue;
    fsetxattr(out, p, val, (size_t)v, 0);
  }
}

static int stage_file(struct applier *a, const struct ws_change *c, int pfd, const char *base,
                      char **ret_tmp)
{
  cleanup_close int in =
      ws_open_beneath(a->l->fds[c->layer], c->path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK, 0);
  char *tmp = tmp_name(a);
  cleanup_close int out = -1;
  struct stat st;
  uid_t uid;
  gid_t gid;

  if (in < 0 || fstat(in, &st) < 0 || !S_ISREG(st.st_mode)) {
    free(tmp);
    return error_errno(a->err, "commit `%s`: open the new file", c->path);
  }
  owner_for(pfd, base, &uid, &gid);
  out = openat(pfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (out < 0) {
    free(tmp);
    return error_errno(a->err, "commit `%s`: create a temporary file", c->path);
  }
  *ret_tmp = tmp; /* from here on the undo removes it */
  if (ws_copy_data(in, out) < 0 || fchown(out, uid, gid) < 0 ||
      fchmod(out, commit_mode(c, st.st_mode & 0777, a->group_ok)) < 0)
    return error_errno(a->err, "commit `%s`", c->path);
  keep_host_xattrs(pfd, base, out);
  return 0;
}

static int stage_symlink(struct applier *a, const struct ws_change *c, int pfd, const char *base,
                         char **ret_tmp)
{
  cleanup_free char *lparent = NULL;
  cleanup_close int lfd = -1;
  const char *lbase;
  char target[4097];
  ssize_t n;
  uid_t uid;
  gid_t gid;
  char *tmp;

  lparent = ws_split_path(c->path, &lbase);
  lfd = ws_open_beneath(a->l->fds[c->layer], lparent, O_PATH | O_DIRECTORY, 0);
  if (lfd < 0 || (n = readlinkat(lfd, lbase, target, sizeof target - 1)) < 0)
    return error_errno(a->err, "commit `%s`: read the new symlink", c->path);
  target[n] = '\0';
  owner_for(pfd, base, &uid, &gid);
  tmp = tmp_name(a);
  if (symlinkat(target, pfd, tmp) < 0) {
    free(tmp);
    return error_errno(a->err, "commit `%s`: symlink", c->path);
  }
  *ret_tmp = tmp;
  if (fchownat(pfd, tmp, uid, gid, AT_SYMLINK_NOFOLLOW) < 0)
    return error_errno(a->err, "commit `%s`: set owner", c->path);
  return 0;
}

/* A new directory is made at once (recorded for the undo); its mode is set
 * in the second pass. */
static int stage_dir(struct applier *a, const struct ws_change *c, int pfd, const char *parent,
                     const char *base, char **ret_tmp)
{
  struct stat st;
  uid_t uid;
  gid_t gid;
  size_t orig_len;
  cleanup_free char *sp = staged_path(a, parent, &orig_len); /* parent, as staged */
  bool exists = fstatat(pfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0;

  if (!exists && errno != ENOENT)
    return error_errno(a->err, "commit `%s`", c->path);
  if (exists && (S_ISDIR(st.st_mode) || !strv_contains(a->replace_ok, c->path)))
    return 0; /* its mode is set later; or an object that was not reviewed (failed below) */
  if (exists) {
    /* a file or symlink of the host's that becomes a directory: made at a
     * temporary name, swapped in at the second pass; what goes below it is
     * staged in it (staged_path), never through the host's symlink */
    *ret_tmp = tmp_name(a);
    owner_for(pfd, base, &uid, &gid);
    if (mkdirat(pfd, *ret_tmp, 0700) < 0)
      return error_errno(a->err, "commit `%s`: mkdir", c->path);
    strv_push(&a->repl_from, c->path);
    {
      cleanup_free char *to = *sp ? xfmt("%s/%s", sp, *ret_tmp) : xstrdup(*ret_tmp);
      strv_push(&a->repl_to, to);
      strv_push(&a->made, to);
    }
    if (fchownat(pfd, *ret_tmp, uid, gid, AT_SYMLINK_NOFOLLOW) < 0)
      return error_errno(a->err, "commit `%s`: set owner", c->path);
    return 0;
  }
  owner_for(pfd, "", &uid, &gid);
  if (mkdirat(pfd, base, 0700) < 0)
    return error_errno(a->err, "commit `%s`: mkdir", c->path);
  {
    cleanup_free char *made = *sp ? xfmt("%s/%s", sp, base) : xstrdup(base);
    strv_push(&a->made, made);
  }
  if (fchownat(pfd, base, uid, gid, AT_SYMLINK_NOFOLLOW) < 0)
    return error_errno(a->err, "commit `%s`: set owner", c->path);
  return 0;
}

static int stage_one(struct applier *a, const struct ws_change *c)
{
  struct staged *s;
  cleanup_free char *parent = NULL;
  const char *base;
  int pfd;

  if (a->n == a->cap)
    a->v = xrealloc(a->v, (a->cap = a->cap ? a->cap * 2 : 64) * sizeof *a->v);
  s = &a->v[a->n++];
  *s = (struct staged){.c = c, .pfd = -1};
  if (c->kind == WS_DELETED)
    return 0;
  parent = ws_split_path(c->path, &base);
  pfd = parent_fd(a, c->layer, parent);
  if (pfd < 0)
    return error_errno(a->err, "commit `%s`: open the host directory `%s`", c->path, parent);
  s->pfd = pfd;
  switch (c->type) {
  case WS_T_FILE:
    return stage_file(a, c, pfd, base, &s->tmp);
  case WS_T_SYMLINK:
    return stage_symlink(a, c, pfd, base, &s->tmp);
  case WS_T_DIR:
    return stage_dir(a, c, pfd, parent, base, &s->tmp);
  default:
    return error_set(a->err, ENOTSUP, "commit `%s`: a special file", c->path);
  }
}

/* Undo the first pass: temporary files, then the directories made. */
static void unstage(struct applier *a)
{
  for (size_t i = 0; i < a->n; i++)
    if (a->v[i].tmp)
      unlinkat(a->v[i].pfd, a->v[i].tmp, 0);
  for (size_t i = strv_len(a->made); i > 0; i--) {
    cleanup_free char *parent = NULL;
    const char *base;
    cleanup_close int pfd = -1;
    parent = ws_split_path(a->made[i - 1], &base);
    pfd = ws_open_beneath(a->l->hostfd, parent, O_PATH | O_DIRECTORY, 0);
    if (pfd >= 0)
      unlinkat(pfd, base, AT_REMOVEDIR);
  }
}

static int remove_host(struct applier *a, const char *path)
{
  cleanup_free char *parent = NULL;
  cleanup_close int pfd = -1;
  const char *base;

  parent = ws_split_path(path, &base);
  pfd = ws_open_beneath(a->l->hostfd, parent, O_PATH | O_DIRECTORY, 0);
  if (pfd < 0)
    return errno == ENOENT ? 0 : error_errno(a->err, "commit: delete `%s`", path);
  if (ws_rm_tree(pfd, base) < 0)
    return error_errno(a->err, "commit: delete `%s`", path);
  return 0;
}

/* The second pass for one staged change. */
static int finish_one(struct applier *a, struct staged *s)
{
  const struct ws_change *c = s->c;
  cleanup_free char *parent = NULL;
  const char *base;
  struct stat st;
  int r = 0;

  if (c->kind == WS_DELETED)
    return remove_host(a, c->path);
  parent = ws_split_path(c->path, &base);
  if (c->type == WS_T_DIR) {
    if (s->tmp != NULL) {
      /* the staged directory for the host's file or symlink, in one step */
      if (renameat2(s->pfd, s->tmp, s->pfd, base, RENAME_EXCHANGE) == 0) {
        if (unlinkat(s->pfd, s->tmp, 0) < 0)
          return error_errno(a->err, "commit `%s`: remove the replaced file", c->path);
      } else if (errno != ENOENT || /* the deletion before it removed the host's */
                 renameat2(s->pfd, s->tmp, s->pfd, base, RENAME_NOREPLACE) < 0) {
        return error_errno(a->err, "commit `%s`: replace the file by a directory", c->path);
      }
      free(s->tmp);
      s->tmp = NULL;
    } else if (fstatat(s->pfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(st.st_mode) &&
               (unlinkat(s->pfd, base, 0) < 0 || mkdirat(s->pfd, base, 0700) < 0)) {
      return error_errno(a->err, "commit `%s`: replace the file by a directory", c->path);
    }
    /* its mode once everything below it is in place (set_dir_modes): a
     * user cannot write into a directory of mode 0555 (Go's module cache) */
    s->dir_done = true;
    return 0;
  }
  if (fstatat(s->pfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) &&
      ws_rm_tree(s->pfd, base) < 0) /* a directory replaced by a file */
    return error_errno(a->err, "commit `%s`: remove the directory", c->path);
  if (renameat(s->pfd, s->tmp, s->pfd, base) < 0)
    return error_errno(a->err, "commit `%s`", c->path);
  free(s->tmp);
  s->tmp = NULL;
  if (c->kind == WS_RENAMED)
    r = remove_host(a, c->old_path);
  return r;
}

/* The modes of the directories committed, the deepest first, after their
 * contents: through an O_PATH descriptor, so a mode without r or x for the
 * owner (0311, 0000) is set as well without privilege. */
static int set_dir_modes(struct applier *a)
{
  for (size_t i = a->n; i > 0; i--) {
    struct staged *s = &a->v[i - 1];
    cleanup_free char *parent = NULL;
    cleanup_close int dfd = -1;
    const char *base;

    if (!s->dir_done)
      continue;
    parent = ws_split_path(s->c->path, &base);
    dfd = ws_open_beneath(s->pfd, base, O_PATH | O_DIRECTORY, 0);
    if (dfd < 0 || ws_chmod_fd(dfd, commit_mode(s->c, s->c->mode & 01777, a->group_ok)) < 0)
      return error_errno(a->err, "commit `%s`: set mode", s->c->path);
  }
  return 0;
}

int ws_commit_apply(struct workspace *w, const struct ws_layers *l, const struct ws_changes *c,
                    char *const *paths, char *const *incl, size_t *ret_n, char ***ret_skipped,
                    struct error *err)
{
  struct applier a = {.w = w, .l = l, .err = err, .last_pfd = -1};
  struct stat hst;
  int ret = 0;

  *ret_n = 0;
  a.group_ok = fstat(l->hostfd, &hst) == 0 && (hst.st_mode & S_IWGRP) && !(hst.st_mode & S_ISVTX);
  for (size_t i = 0; i < c->n; i++)
    if (becomes_dir(c, i, paths, incl))
      strv_push(&a.replace_ok, c->v[i].path);
  for (size_t i = 0; i < c->n && ret == 0; i++) {
    const struct ws_change *ch = &c->v[i];
    if (!ws_commit_selected(ch, paths, incl))
      continue;
    if (ch->kind != WS_DELETED && ch->type == WS_T_OTHER) {
      if (ret_skipped)
        strv_push(ret_skipped, ch->path);
      continue;
    }
    ret = stage_one(&a, ch);
  }
  /* one syncfs for all the staged data (instead of an fsync per file), so
   * that no rename below can expose a file whose data is not on disk */
  if (ret == 0 && a.n > 0 && syncfs(l->hostfd) < 0)
    ret = error_errno(err, "commit: sync the host file system");
  if (ret < 0) {
    unstage(&a);
    error_prefix(err, "nothing was applied");
  }
  for (size_t i = 0; i < a.n && ret == 0; i++) {
    ret = finish_one(&a, &a.v[i]);
    ws_manifest_update(&w->manifest, l->hostfd, a.v[i].c->path);
    if (a.v[i].c->old_path)
      ws_manifest_update(&w->manifest, l->hostfd, a.v[i].c->old_path);
    if (ret == 0)
      (*ret_n)++;
  }
  if (ret == 0)
    ret = set_dir_modes(&a);
  for (size_t i = 0; i < a.n; i++) {
    if (a.v[i].tmp) /* after a failure in the second pass */
      unlinkat(a.v[i].pfd, a.v[i].tmp, a.v[i].c->type == WS_T_DIR ? AT_REMOVEDIR : 0);
    free(a.v[i].tmp);
  }
  strv_free(a.repl_from);
  strv_free(a.repl_to);
  strv_free(a.replace_ok);
  for (size_t i = 0; i < a.n_fds; i++)
    close(a.fds[i]);
  free(a.fds);
  free(a.v);
  free(a.last_parent);
  strv_free(a.made);
  return ret;
}

/* --- pruning upper ---------------------------------------------------------- */

static bool covers_host(int ufd, int hfd)
{
  cleanup_strv char **names = NULL;
  size_t n = 0;

  if (ws_list_dir(hfd, &names, &n) < 0)
    return false;
  for (size_t i = 0; i < n; i++)
    if (faccessat(ufd, names[i], F_OK, AT_SYMLINK_NOFOLLOW) < 0)
      return false;
  return true;
}

static void prune(int ufd, int hfd, unsigned xattr, int depth);

static void prune_name(int ufd, int hfd, const char *name, unsigned xattr, int depth)
{
  struct stat us, hs;
  bool host = fstatat(hfd, name, &hs, AT_SYMLINK_NOFOLLOW) == 0;
  enum ws_ftype t;
  enum ws_entry e = ws_classify(ufd, name, xattr, &t);

  if (e == WS_E_WHITEOUT) {
    if (!host)
      unlinkat(ufd, name, 0);
    return;
  }
  if (!host || fstatat(ufd, name, &us, AT_SYMLINK_NOFOLLOW) < 0 ||
      (us.st_mode & S_IFMT) != (hs.st_mode & S_IFMT))
    return;
  if (e == WS_E_OPAQUE_DIR || e == WS_E_DIR) {
    cleanup_close int usub = ws_open_dir(ufd, name), hsub = ws_open_dir(hfd, name);
    if (usub < 0 || hsub < 0)
      return;
    if (e == WS_E_OPAQUE_DIR) {
      if (!covers_host(usub, hsub))
        return; /* still hides host entries: keep it, and everything in it */
      if (xattr == 0 || (xattr & WS_XATTR_TRUSTED))
        fremovexattr(usub, "trusted.overlay.opaque");
      if (xattr == 0 || (xattr & WS_XATTR_USER))
        fremovexattr(usub, "user.overlay.opaque");
    }
    prune(usub, hsub, xattr, depth + 1);
    if ((us.st_mode & 07777) == (hs.st_mode & 07777))
      unlinkat(ufd, name, AT_REMOVEDIR); /* fails (kept) when not empty */
    return;
  }
  if ((S_ISREG(us.st_mode) && us.st_size == hs.st_size &&
       (us.st_mode & 07777) == (hs.st_mode & 07777) &&
       ws_same_content(ufd, name, hfd, name, (uint64_t)us.st_size)) ||
      (S_ISLNK(us.st_mode) && ws_same_link(ufd, name, hfd, name)))
    unlinkat(ufd, name, 0);
}

static void prune(int ufd, int hfd, unsigned xattr, int depth)
{
  cleanup_strv char **names = NULL;
  size_t n = 0;

  if (depth > WS_MAX_DEPTH || ws_list_dir(ufd, &names, &n) < 0)
    return;
  for (size_t i = 0; i < n; i++)
    prune_name(ufd, hfd, names[i], xattr, depth);
}

int ws_prune_upper(const struct ws_layers *l, struct error *err)
{
  if (l->n != 1)
    return 0; /* snapshot layers below: the upper entries may mask them */
  prune(l->fds[0], l->hostfd, l->xattr, 0);
  return 0;
}
