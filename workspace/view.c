/* view.c - a sub-agent's workspace: an overlay over its parent's current
 * view (monitor/subagents.h).  Its host dir is /proc/PID/root/DIR, the
 * parent's view through the parent init's root; its lower layers are the
 * layers of the parent's own overlay, each at the path of DIR below the
 * parent's workspace.
 *
 * Both are paths that the parent writes: every directory of DIR below the
 * parent's workspace is the parent's to rename or to replace with a symlink.
 * Followed from the host, an absolute symlink there leads to the host's file
 * system (the symlink resolves against the resolving process's root) and
 * so does a `..` past the layer or past /proc/PID/root.  So:
 *
 *   - the host dir is opened inside the parent's root, RESOLVE_IN_ROOT |
 *     RESOLVE_NO_SYMLINKS (workspace_open_host): commit and diff work on
 *     that fd;
 *   - the lower layers are not the parent's mountinfo strings with DIR
 *     appended but the parent's workspace record (its upper, its snapshots,
 *     its host dir, or, for a parent that is a sub-agent itself, the layers
 *     its own create chose, kept in <dir>/view), and each one's part of DIR
 *     is walked one directory at a time without following a symlink, with
 *     the overlay's rules (a whiteout or a non-directory hides what is
 *     below, an opaque directory hides the layers below, a layer without
 *     the path adds nothing).  A layer that does not hold the path is left
 *     out (a child may be given a directory the parent made);
 *   - the lowerdir option names each layer ROOT//REL, with the option word
 *     WORKSPACE_OPT_BENEATH: the init (container/mount_setup.c) opens ROOT
 *     and REL below it without a symlink (workspace_lowerdir_beneath) in
 *     the mount namespace that mounts, and mounts /proc/self/fd/N: the
 *     parent cannot swap a directory for a symlink between the check here
 *     and the mount.  (A descriptor opened here would not do: overlayfs
 *     takes no lower layer from another mount namespace.)
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <linux/mount.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "common/util.h"
#include "os/fsutil.h"
#include "os/mount_ops.h"
#include "os/pid.h"
#include "workspace/internal.h"

#define VIEW_FILE "view"

/* /proc/PID/root[/REST]: the pid and REST ("" for the root); false when
 * path is not of that form. */
static bool parse_proc_root(const char *path, unsigned *ret_pid, const char **ret_rest)
{
  const char *p;
  unsigned pid = 0;

  if (!str_has_prefix(path, "/proc/"))
    return false;
  p = path + strlen("/proc/");
  if (*p < '1' || *p > '9')
    return false;
  while (*p >= '0' && *p <= '9' && pid < 100000000)
    pid = pid * 10 + (unsigned)(*p++ - '0');
  if (!str_has_prefix(p, "/root") || (p[5] != '\0' && p[5] != '/'))
    return false;
  *ret_pid = pid;
  *ret_rest = p + 5;
  return true;
}

bool workspace_is_view(const char *lowerdir)
{
  unsigned pid;
  const char *rest;

  return lowerdir != NULL && parse_proc_root(lowerdir, &pid, &rest);
}

int workspace_view_start(const char *lowerdir, uint64_t *ret)
{
  unsigned pid;
  const char *rest;
  char state = 0;

  /* a zombie keeps its pid and start time but has ended: its view is gone
   * (zombie-parent-name) */
  if (!parse_proc_root(lowerdir, &pid, &rest) || proc_start_time((pid_t)pid, ret, &state) < 0 ||
      state == 'Z' || state == 'X') {
    errno = ESRCH;
    return -1;
  }
  return 0;
}

int workspace_open_host(const char *lowerdir, uint64_t view_start, int flags)
{
  unsigned pid;
  const char *rest;
  struct error e = {0};
  cleanup_close int pfd = -1, rfd = -1;
  struct open_how how = {
      .flags = (uint64_t)(flags | O_DIRECTORY | O_CLOEXEC),
      .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
  };
  long fd;

  if (!parse_proc_root(lowerdir, &pid, &rest))
    return open(lowerdir, flags | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  /* pid reuse: once the parent is gone its pid may name any process, and
   * /proc/PID/root that process's root (the host's own for a host process):
   * the root is taken only from the process recorded at create */
  pfd = proc_open_identified((pid_t)pid, view_start, &e);
  if (pfd < 0) {
    errno = ESRCH;
    return -1;
  }
  rfd = openat(pfd, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (rfd < 0) {
    errno = errno == ENOENT ? ESRCH : errno;
    return -1;
  }
  while (*rest == '/')
    rest++;
  for (int i = 0; i < 64; i++) {
    fd = syscall(SYS_openat2, rfd, *rest ? rest : ".", &how, sizeof how);
    if (fd >= 0 || errno != EAGAIN)
      return (int)fd;
  }
  return -1;
}

int ws_host_error(const struct workspace *w, struct error *err)
{
  if (errno == ESRCH && workspace_is_view(w->lowerdir) && w->view_start == 0)
    return error_set(err, ESRCH,
                     "workspace `%s`: host dir `%s`: no start time of its process recorded (made "
                     "by an older agentrt): nothing is read or written there",
                     w->id, w->lowerdir);
  if (errno == ESRCH && workspace_is_view(w->lowerdir))
    return error_set(err, ESRCH,
                     "workspace `%s`: host dir `%s`: the process whose view it is has ended (its "
                     "pid may be another process's now): nothing is read or written there",
                     w->id, w->lowerdir);
  return error_errno(err, "workspace `%s`: host dir `%s`", w->id, w->lowerdir);
}

/* ---- the lower layers */

/* One layer: the upper ('u'), a snapshot ('s', name) or the host dir ('h')
 * of workspace id, at rel below it. */
struct vlayer {
  char kind;
  char *id;
  char *name;
  char *rel;
};

struct vstack {
  struct vlayer *v;
  size_t n;
};

static void vstack_push(struct vstack *s, char kind, const char *id, const char *name,
                        const char *rel)
{
  s->v = xrealloc(s->v, (s->n + 1) * sizeof *s->v);
  s->v[s->n++] = (struct vlayer){kind, xstrdup(id), xstrdup(name ? name : ""), xstrdup(rel)};
}

static void vstack_free(struct vstack *s)
{
  for (size_t i = 0; i < s->n; i++) {
    free(s->v[i].id);
    free(s->v[i].name);
    free(s->v[i].rel);
  }
  free(s->v);
  memset(s, 0, sizeof *s);
}

/* <store>/.workspaces/<id> -> <store> */
static char *store_of(const struct workspace *w)
{
  char *s = xstrdup(w->dir);
  char *slash = strrchr(s, '/');

  if (slash)
    *slash = '\0';
  slash = strrchr(s, '/');
  if (slash)
    *slash = '\0';
  return s;
}

/* The layers recorded by a sub-agent's create: "K\tID\tNAME\tREL" lines
 * (NAME and REL percent-encoded). */
static int read_view(const struct workspace *w, struct vstack *s, struct error *err)
{
  cleanup_free char *path = xfmt("%s/%s", w->dir, VIEW_FILE);
  cleanup_free char *text = NULL;
  size_t len = 0;
  char *line, *save = NULL;

  if (read_file_at(AT_FDCWD, path, 1 << 20, &text, &len, err) < 0)
    return error_prefix(err, "workspace `%s`: its view of its parent", w->id);
  for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    char *f[4];
    char *p = line;
    for (int i = 0; i < 4; i++)
      f[i] = strsep(&p, "\t");
    if (f[3] == NULL || strlen(f[0]) != 1 || strchr("ush", f[0][0]) == NULL)
      return error_set(err, EINVAL, "workspace `%s`: %s: a bad line", w->id, VIEW_FILE);
    cleanup_free char *name = ws_path_decode(f[2]), *rel = ws_path_decode(f[3]);
    vstack_push(s, f[0][0], f[1], name, rel);
  }
  return 0;
}

static int write_view(const struct workspace *w, const struct vstack *s, struct error *err)
{
  cleanup_free char *buf = xstrdup("");
  cleanup_close int dfd = open(w->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

  for (size_t i = 0; i < s->n; i++) {
    cleanup_free char *name = ws_path_encode(s->v[i].name), *rel = ws_path_encode(s->v[i].rel);
    char *nb = xfmt("%s%c\t%s\t%s\t%s\n", buf, s->v[i].kind, s->v[i].id, name, rel);
    free(buf);
    buf = nb;
  }
  if (dfd < 0)
    return error_errno(err, "workspace `%s`: open `%s`", w->id, w->dir);
  return write_file_atomic_at(dfd, VIEW_FILE, buf, strlen(buf), err);
}

/* The parent's overlay, top first: its upper, its snapshots, then its host
 * dir or (a sub-agent itself) its own view. */
static int parent_stack(const struct workspace *pw, struct vstack *s, struct error *err)
{
  vstack_push(s, 'u', pw->id, NULL, "");
  for (size_t i = 0; pw->layers && pw->layers[i]; i++)
    vstack_push(s, 's', pw->id, pw->layers[i], "");
  if (workspace_is_view(pw->lowerdir))
    return read_view(pw, s, err);
  vstack_push(s, 'h', pw->id, NULL, "");
  return 0;
}

/* A layer's root: an fd to walk from and the path the mount names. */
static int layer_root(const char *store, const struct vlayer *l, char **ret_path, struct error *err)
{
  struct workspace *lw = NULL;
  int fd = -1;

  if (!ws_valid_name(l->id) || workspace_load(store, l->id, &lw, err) < 0)
    return error_prefix(err, "a layer of the parent's workspace");
  if (l->kind == 'u') {
    cleanup_close int base = ws_upper_base(lw, err);
    if (base >= 0)
      fd = openat(base, "upper", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    cleanup_free char *up = ws_upper_base_path(lw);
    *ret_path = xfmt("%s/upper", up);
  } else if (l->kind == 's') {
    cleanup_free char *p = xfmt("%s/snapshots", lw->dir);
    cleanup_close int sfd =
        ws_valid_name(l->name) ? open(p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
    if (sfd >= 0)
      fd = ws_open_dir(sfd, l->name);
    *ret_path = xfmt("%s/%s", p, l->name);
  } else if (!workspace_is_view(lw->lowerdir)) {
    fd = open(lw->lowerdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    *ret_path = xstrdup(lw->lowerdir);
  } else {
    *ret_path = xstrdup(lw->lowerdir);
    errno = EINVAL;
  }
  if (fd < 0 && err->msg[0] == '\0')
    error_errno(err, "a layer of the parent's workspace: `%s`", *ret_path);
  workspace_free(lw);
  return fd;
}

enum { WALK_DIR, WALK_MISSING, WALK_NONDIR };

/* Follow comps[0..n) from fd one directory at a time, never through a
 * symlink.  *ret_at: the index where it stopped (n when every one is a
 * directory); *ret_opaque: an opaque directory on the way (xattr: the parent's
 * mount's namespace, WS_XATTR_*). */
static int walk(int fd, char **comps, size_t n, unsigned xattr, size_t *ret_at, bool *ret_opaque)
{
  int cur = fcntl(fd, F_DUPFD_CLOEXEC, 3);
  size_t k = 0;
  int r = WALK_DIR;

  *ret_opaque = false;
  for (; cur >= 0 && k < n; k++) {
    int next = openat(cur, comps[k], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0) {
      r = errno == ENOENT ? WALK_MISSING : WALK_NONDIR;
      break;
    }
    if (ws_dir_opaque(next, xattr))
      *ret_opaque = true;
    close(cur);
    cur = next;
  }
  *ret_at = k;
  if (cur < 0)
    return WALK_NONDIR;
  close(cur);
  return r;
}

/* The layers of stack that show sub (relative, "" = the root), top first,
 * by the overlay's rules; each with sub appended to its rel. */
static int effective(const char *store, const struct vstack *stack, const char *sub, unsigned xattr,
                     struct vstack *out, char **ret_lowerdir, struct error *err)
{
  cleanup_strv char **subc = NULL;
  cleanup_free char *lower = xstrdup("");
  long deepest = -1; /* components that a higher layer holds as directories */

  {
    cleanup_free char *copy = xstrdup(sub);
    char *save = NULL;
    for (char *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
      if (streq(c, ".") || streq(c, ".."))
        return error_set(err, EINVAL, "`%s`: `.` or `..` in the path", sub);
      strv_push(&subc, c);
    }
  }
  for (size_t i = 0; i < stack->n; i++) {
    const struct vlayer *l = &stack->v[i];
    cleanup_free char *root = NULL, *joined = NULL;
    cleanup_strv char **comps = NULL;
    cleanup_close int fd = -1;
    size_t at = 0, n;
    bool opaque = false;
    int r;

    {
      cleanup_free char *copy = xstrdup(l->rel);
      char *save = NULL;
      for (char *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save))
        strv_push(&comps, c);
    }
    n = strv_len(comps);
    for (size_t k = 0; subc && subc[k]; k++)
      strv_push(&comps, subc[k]);
    fd = layer_root(store, l, &root, err);
    if (fd < 0)
      return -1;
    r = walk(fd, comps, strv_len(comps), xattr, &at, &opaque);
    /* depth in the child's path: a layer's own rel is the parent's business */
    long depth = (long)at - (long)n;
    if (r == WALK_NONDIR && depth > deepest)
      return error_set(err, ENOTDIR,
                       "`%s`: not a directory in the parent's view (a symlink, a file or deleted)",
                       sub);
    if (r == WALK_NONDIR)
      break; /* hidden below a higher layer's directory, and so is the rest */
    if (r == WALK_DIR) {
      joined = strv_len(subc) ? xfmt("%s%s%s", l->rel, *l->rel ? "/" : "", sub) : xstrdup(l->rel);
      vstack_push(out, l->kind, l->id, l->name, joined);
      {
        /* ROOT//REL: REL is opened below ROOT without a symlink at the mount */
        cleanup_free char *full = *joined ? xfmt("%s//%s", root, joined) : xstrdup(root);
        char *nl;
        if (strpbrk(full, ",:\\\"\n") != NULL || strstr(root, "//") != NULL)
          return error_set(err, EINVAL,
                           "`%s`: holds `//`, `,`, `:`, `\\` or `\"`, which the overlay's "
                           "options cannot carry",
                           full);
        nl = xfmt("%s%s%s", lower, *lower ? ":" : "", full);
        free(lower);
        lower = nl;
      }
    }
    if (depth - 1 > deepest)
      deepest = depth - 1;
    if (opaque)
      break; /* the layers below are hidden */
  }
  if (out->n == 0)
    return error_set(err, ENOENT, "`%s`: not in the parent's workspace", sub);
  *ret_lowerdir = lower;
  lower = NULL;
  return 0;
}

/* A view's parent's workspace (P of P.N) and the view's directory below
 * its workspace path (*ret_sub, in w->lowerdir; "" = its root). */
static int view_parent(const struct workspace *w, struct workspace **ret_pw, const char **ret_sub,
                       struct error *err)
{
  cleanup_free char *store = store_of(w), *parent = xstrdup(w->id);
  struct workspace *pw = NULL;
  const char *rest, *sub;
  unsigned pid;
  char *dot = strrchr(parent, '.');
  size_t dl;

  if (!parse_proc_root(w->lowerdir, &pid, &rest) || dot == NULL)
    return error_set(err, EINVAL, "`%s`: not a sub-agent's view of its parent", w->lowerdir);
  *dot = '\0';
  if (workspace_load(store, parent, &pw, err) < 0)
    return error_prefix(err, "the parent's workspace");
  dl = strlen(pw->dest);
  if (!streq(pw->dest, "/") &&
      !(str_has_prefix(rest, pw->dest) && (rest[dl] == '\0' || rest[dl] == '/'))) {
    error_set(err, EINVAL, "`%s`: not below the parent's workspace `%s`", rest, pw->dest);
    workspace_free(pw);
    return -1;
  }
  sub = streq(pw->dest, "/") ? rest : rest + dl;
  while (*sub == '/')
    sub++;
  *ret_pw = pw;
  *ret_sub = sub;
  return 0;
}

char *ws_view_layers(struct workspace *w, struct error *err)
{
  cleanup_free char *store = store_of(w), *lower = NULL;
  struct workspace *pw = NULL;
  struct vstack stack = {0}, out = {0};
  const char *sub = "";

  if (view_parent(w, &pw, &sub, err) < 0)
    return NULL;
  if (parent_stack(pw, &stack, err) < 0 ||
      effective(store, &stack, sub, pw->ovl_xattr, &out, &lower, err) < 0 ||
      write_view(w, &out, err) < 0) {
    vstack_free(&stack);
    vstack_free(&out);
    workspace_free(pw);
    return NULL;
  }
  vstack_free(&stack);
  vstack_free(&out);
  workspace_free(pw);
  return xstrdup(lower);
}

/* ---- an orphan's host dir: its parent's record, not its parent's mount */

static int open_beneath(int dirfd, const char *rel, int flags)
{
  struct open_how how = {
      .flags = (uint64_t)(flags | O_DIRECTORY | O_CLOEXEC),
      .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
  };
  long fd = -1;

  for (int i = 0; i < 64; i++) {
    fd = syscall(SYS_openat2, dirfd, *rel ? rel : ".", &how, sizeof how);
    if (fd >= 0 || errno != EAGAIN)
      break;
  }
  return (int)fd;
}

/* Overlayfs takes no layer from a mount of another mount namespace (a
 * detached one included): an upper layer in an image (w's own, or a
 * sub-agent's ancestor's) is reached through that image attached at its
 * <dir>/fs in a private mount namespace of this process (made at the first
 * such layer; the host's is never changed), as the parent's init does. */
static int attach_image_of(const struct workspace *lw, bool *unshared, struct error *err)
{
  struct workspace *own = NULL;
  const struct workspace *img = NULL;
  cleanup_free char *at = NULL;
  cleanup_close int target = -1, clone = -1;
  int r = -1;

  if (workspace_has_image(lw))
    img = lw;
  else if (lw->upper_in != NULL && ws_family_load(lw, &own, err) == 0)
    img = own;
  else if (lw->upper_in == NULL)
    return 0; /* a plain upper in the data directory */
  if (img == NULL || ws_fs_mount(img, err) < 0)
    goto out;
  if (!*unshared) {
    if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
      error_errno(err, "a private mount namespace");
      goto out;
    }
    *unshared = true;
  }
  at = workspace_fs_path(img);
  target = open(at, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  clone = (int)syscall(SYS_open_tree, workspace_fs_fd(img), "",
                       OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
  if (target < 0 || clone < 0 ||
      syscall(SYS_move_mount, clone, "", target, "",
              MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0) {
    error_errno(err, "attach the image of workspace `%s` on `%s`", img->id, at);
    goto out;
  }
  r = 0;
out:
  workspace_free(own);
  return r;
}

/* A layer of the parent's stack at its rel (O_PATH), no symlink on the way,
 * reached by its path (attach_image_of). */
static int layer_open(const char *store, const struct vlayer *l, struct error *err)
{
  cleanup_free char *root = NULL;
  cleanup_close int rfd = layer_root(store, l, &root, err);
  int fd;

  if (rfd < 0)
    return -1;
  close(rfd);
  rfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (rfd < 0)
    return error_errno(err, "a layer of the parent's workspace: `%s`", root);
  fd = open_beneath(rfd, l->rel, O_PATH);
  if (fd < 0)
    return error_errno(err, "a layer of the parent's workspace: `%s//%s`", root, l->rel);
  return fd;
}

static void fds_close(int *fds, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (fds[i] >= 0)
      close(fds[i]);
  free(fds);
}

/* The overlay of the parent's layers (stack, top first) as a detached mount:
 * read-only, every layer a lower one; rw, its upper and work directories
 * the parent's own (pw's), as the parent's container mounts them. */
static int record_fsmount(const char *store, struct workspace *pw, const struct vstack *stack,
                          bool rw, struct error *err)
{
  cleanup_close int fsfd = (int)syscall(SYS_fsopen, "overlay", FSOPEN_CLOEXEC);
  cleanup_close int base = -1, ufd = -1, wfd = -1;
  cleanup_free char *lower = xstrdup("");
  cleanup_strv char **attached = NULL;
  struct mnt_held held = {0};
  bool user = pw->ovl_xattr == WS_XATTR_USER, unshared = false;
  int *fds = xmalloc0((stack->n + 1) * sizeof *fds);
  size_t n = 0;
  int r = -1, mfd = -1;
  char path[64];

  if (fsfd < 0) {
    error_errno(err, "fsopen overlay");
    goto out;
  }
  for (size_t i = 0; i < stack->n; i++) {
    struct workspace *lw = NULL;
    int a = 0;
    if (stack->v[i].kind != 'u')
      continue;
    if (!ws_valid_name(stack->v[i].id) || workspace_load(store, stack->v[i].id, &lw, err) < 0)
      goto out;
    if (!strv_contains(attached, lw->upper_in ? lw->upper_in : lw->id)) {
      a = attach_image_of(lw, &unshared, err);
      strv_push(&attached, lw->upper_in ? lw->upper_in : lw->id);
    }
    workspace_free(lw);
    if (a < 0)
      goto out;
  }
  for (size_t i = rw ? 1 : 0; i < stack->n; i++) {
    char *nl;
    fds[n] = layer_open(store, &stack->v[i], err);
    if (fds[n] < 0)
      goto out;
    nl = xfmt("%s%s/proc/self/fd/%d", lower, *lower ? ":" : "", fds[n++]);
    free(lower);
    lower = nl;
  }
  if (rw) {
    cleanup_free char *up = ws_upper_base_path(pw);
    base = open(up, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (base < 0) {
      error_errno(err, "workspace `%s`: open `%s`", pw->id, up);
      goto out;
    }
    ufd = openat(base, "upper", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    wfd = openat(base, "work", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (ufd < 0 || wfd < 0) {
      error_errno(err, "workspace `%s`: its upper and work directories", pw->id);
      goto out;
    }
  }
  if (syscall(SYS_fsconfig, fsfd, FSCONFIG_SET_STRING, "source", "overlay", 0) < 0 ||
      mnt_fs_set(fsfd, "overlay", "lowerdir", lower, &held, err) < 0)
    goto fail;
  if (rw) {
    snprintf(path, sizeof path, "/proc/self/fd/%d", ufd);
    if (mnt_fs_set(fsfd, "overlay", "upperdir", path, &held, err) < 0)
      goto fail;
    snprintf(path, sizeof path, "/proc/self/fd/%d", wfd);
    if (mnt_fs_set(fsfd, "overlay", "workdir", path, &held, err) < 0)
      goto fail;
  }
  /* the parent's own mount's options (workspace_mount_options) */
  if (mnt_fs_set(fsfd, "overlay", "redirect_dir", user ? "nofollow" : "off", &held, err) < 0 ||
      mnt_fs_set(fsfd, "overlay", "index", "off", &held, err) < 0 ||
      mnt_fs_set(fsfd, "overlay", "metacopy", "off", &held, err) < 0 ||
      (user && syscall(SYS_fsconfig, fsfd, FSCONFIG_SET_FLAG, "userxattr", NULL, 0) < 0))
    goto fail;
  if (syscall(SYS_fsconfig, fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
    char buf[256];
    int saved = errno;
    ssize_t k = read(fsfd, buf, sizeof buf - 1); /* the kernel's reason, "e overlay: ..." */
    buf[k > 0 ? k : 0] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
    errno = saved;
    error_errno(err, "create the overlay of `%s`'s layers%s%s%s", pw->id, k > 2 ? " (" : "",
                k > 2 ? buf + 2 : "", k > 2 ? ")" : "");
    goto out;
  }
  mfd = (int)syscall(SYS_fsmount, fsfd, FSMOUNT_CLOEXEC,
                     MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (rw ? 0 : MOUNT_ATTR_RDONLY));
  if (mfd < 0)
    error_errno(err, "fsmount the overlay of `%s`'s layers", pw->id);
  r = mfd;
  goto out;
fail:
  if (err->msg[0] == '\0')
    error_errno(err, "the overlay of `%s`'s layers", pw->id);
out:
  mnt_held_close(&held);
  fds_close(fds, n);
  return r;
}

int workspace_open_record_host(const struct workspace *w, bool rw, struct error *err)
{
  cleanup_free char *store = store_of(w);
  cleanup_close int mfd = -1;
  struct workspace *pw = NULL;
  struct vstack stack = {0};
  const char *sub = "";
  int fd = -1;

  if (view_parent(w, &pw, &sub, err) < 0)
    return error_prefix(err, "workspace `%s`", w->id);
  if (parent_stack(pw, &stack, err) == 0 &&
      (mfd = record_fsmount(store, pw, &stack, rw, err)) >= 0) {
    fd = open_beneath(mfd, sub, O_RDONLY);
    if (fd < 0)
      error_errno(err, "`%s` in the workspace of `%s`%s", sub, pw->id,
                  errno == ELOOP || errno == EXDEV ? " (a symlink on the way)" : "");
  }
  if (fd < 0)
    error_prefix(err, "workspace `%s`", w->id);
  vstack_free(&stack);
  workspace_free(pw);
  return fd;
}

char *workspace_lowerdir_beneath(const char *lowerdir, int **ret_fds, size_t *ret_n,
                                 struct error *err)
{
  cleanup_free char *copy = xstrdup(lowerdir);
  char *out = xstrdup(""), *save = NULL;
  struct open_how how = {
      .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
      .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
  };

  *ret_fds = NULL;
  *ret_n = 0;
  for (char *e = strtok_r(copy, ":", &save); e; e = strtok_r(NULL, ":", &save)) {
    char *sep = strstr(e, "//"), *nl;
    if (sep == NULL) {
      nl = xfmt("%s%s%s", out, *out ? ":" : "", e);
    } else {
      cleanup_close int rfd = -1;
      long fd = -1;
      *sep = '\0';
      rfd = open(e, O_PATH | O_DIRECTORY | O_CLOEXEC);
      for (int i = 0; rfd >= 0 && i < 64; i++) {
        fd = syscall(SYS_openat2, rfd, sep + 2, &how, sizeof how);
        if (fd >= 0 || errno != EAGAIN)
          break;
      }
      if (fd < 0) {
        error_errno(err, "lower layer `%s//%s`%s", e, sep + 2,
                    errno == ELOOP || errno == EXDEV ? " (a symlink on the way)" : "");
        free(out);
        for (size_t i = 0; i < *ret_n; i++)
          close((*ret_fds)[i]);
        free(*ret_fds);
        *ret_fds = NULL;
        *ret_n = 0;
        return NULL;
      }
      *ret_fds = xrealloc(*ret_fds, (*ret_n + 1) * sizeof **ret_fds);
      (*ret_fds)[(*ret_n)++] = (int)fd;
      nl = xfmt("%s%s/proc/self/fd/%ld", out, *out ? ":" : "", fd);
    }
    free(out);
    out = nl;
  }
  return out;
}
