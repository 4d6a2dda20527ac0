/* snapshot.c - snapshots, rollback and the remount of a running container's
 * workspace.
 *
 * A snapshot is a full copy of upper (whiteouts and opaque markers included)
 * plus the layer stack it was taken on.  Rollback makes it (and that stack)
 * the lower layers under a fresh, empty upper.  For a running container the
 * new overlay is created by a forked child, in our mount namespace, as a
 * detached mount (fsopen/fsmount: the layer paths resolve on the host; an
 * image's upper layer is first mounted on <dir>/fs in a private mount
 * namespace of the child, image.c), then the child joins the container's
 * mount namespace and attaches it over the
 * workspace path (move_mount onto an O_PATH fd resolved inside the container
 * root with safepath).  The old mount stays underneath: processes holding
 * files open in it keep them, new lookups see the snapshot.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/util.h"
#include "os/fsutil.h"
#include "os/mount_ops.h"
#include "os/safepath.h"
#include "workspace/internal.h"

const struct ws_snapshot *workspace_find_snapshot(const struct workspace *w, const char *name)
{
  for (size_t i = 0; i < w->n_snaps; i++)
    if (streq(w->snaps[i].name, name))
      return &w->snaps[i];
  return NULL;
}

int workspace_snapshot(struct workspace *w, const char *name, struct error *err)
{
  cleanup_close int dfd = open(w->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  cleanup_close int sfd = -1, ufd = -1;
  cleanup_free char *tmp = xfmt(".tmp-%s", name);
  struct ws_snapshot *s;

  if (strlen(name) > WS_NAME_MAX)
    return error_set(err, ENAMETOOLONG,
                     "workspace `%s`: the snapshot name is too long (%zu bytes, at most %d)", w->id,
                     strlen(name), WS_NAME_MAX);
  if (!ws_valid_name(name))
    return error_set(err, EINVAL, "workspace `%s`: invalid snapshot name `%s`", w->id, name);
  if (workspace_find_snapshot(w, name))
    return error_set(err, EEXIST, "workspace `%s`: snapshot `%s` exists", w->id, name);
  if (w->n_snaps >= WS_MAX_LAYERS || strv_len(w->layers) + 1 > WS_MAX_LAYERS)
    return error_set(err, E2BIG, "workspace `%s`: at most %d snapshots", w->id, WS_MAX_LAYERS);
  if (dfd < 0 || (sfd = ws_open_dir(dfd, "snapshots")) < 0)
    return error_errno(err, "workspace `%s`: open snapshots", w->id);
  ws_rm_tree(sfd, tmp);
  if ((ufd = ws_upper_base(w, err)) < 0)
    return -1;
  if (ws_copy_tree(ufd, "upper", sfd, tmp, err) < 0) {
    ws_rm_tree(sfd, tmp);
    return error_prefix(err, "workspace `%s`: snapshot `%s`", w->id, name);
  }
  if (renameat(sfd, tmp, sfd, name) < 0) {
    ws_rm_tree(sfd, tmp);
    return error_errno(err, "workspace `%s`: snapshot `%s`", w->id, name);
  }
  w->snaps = xrealloc(w->snaps, (w->n_snaps + 1) * sizeof *w->snaps);
  s = &w->snaps[w->n_snaps++];
  s->name = xstrdup(name);
  s->created = ws_now(&s->created_s);
  s->base = strv_dup(w->layers);
  if (s->base == NULL)
    s->base = xmalloc0(sizeof *s->base);
  return workspace_save(w, err);
}

/* Move upper and work out of the way (running) or empty them. */
static int retire_upper(struct workspace *w, int dfd, bool running, struct error *err)
{
  cleanup_free char *seq = NULL;
  cleanup_close int rfd = -1;

  if (!running) {
    if (ws_rm_tree(dfd, "upper") < 0 || ws_rm_tree(dfd, "work") < 0)
      return error_errno(err, "workspace `%s`: remove upper", w->id);
    return 0;
  }
  if (workspace_has_image(w) ||
      w->upper_in != NULL) { /* workspace_gc looks into an image only then */
    cleanup_free char *mark = xfmt("%s/%s", w->dir, WS_RETIRED_MARK);
    int fd = open(mark, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
      return error_errno(err, "workspace `%s`: create `%s`", w->id, mark);
    close(fd);
  }
  if (mkdirat(dfd, "retired", 0700) < 0 && errno != EEXIST)
    return error_errno(err, "workspace `%s`: mkdir retired", w->id);
  rfd = ws_open_dir(dfd, "retired");
  seq = xfmt("%llu", (unsigned long long)++w->retired_seq);
  if (rfd < 0 || mkdirat(rfd, seq, 0700) < 0)
    return error_errno(err, "workspace `%s`: mkdir retired/%s", w->id, seq);
  {
    cleanup_close int qfd = ws_open_dir(rfd, seq);
    if (qfd < 0 || renameat(dfd, "upper", qfd, "upper") < 0 ||
        renameat(dfd, "work", qfd, "work") < 0)
      return error_errno(err, "workspace `%s`: retire upper", w->id);
  }
  return 0;
}

int workspace_rollback_layers(struct workspace *w, const char *name, bool running,
                              struct error *err)
{
  const struct ws_snapshot *s = workspace_find_snapshot(w, name);
  cleanup_close int dfd = -1;
  struct stat st;
  char **layers;

  if (s == NULL)
    return error_set(err, ENOENT, "workspace `%s`: no snapshot `%s`", w->id, name);
  {
    /* before the upper is retired: a view whose process is gone stops here */
    cleanup_close int hfd = workspace_open_host(w->lowerdir, w->view_start, O_PATH);
    if (hfd < 0 || fstat(hfd, &st) < 0)
      return ws_host_error(w, err);
  }
  if ((dfd = ws_upper_base(w, err)) < 0)
    return -1;
  if (retire_upper(w, dfd, running, err) < 0)
    return -1;
  if (mkdirat(dfd, "upper", 0700) < 0 || mkdirat(dfd, "work", 0700) < 0)
    return error_errno(err, "workspace `%s`: mkdir upper", w->id);
  {
    cleanup_close int ufd = ws_open_dir(dfd, "upper");
    if (ufd < 0 || fchown(ufd, st.st_uid, st.st_gid) < 0 || fchmod(ufd, st.st_mode & 07777) < 0)
      return error_errno(err, "workspace `%s`: set owner of upper", w->id);
  }
  layers = xmalloc0(sizeof *layers);
  strv_push(&layers, s->name);
  for (size_t i = 0; s->base && s->base[i]; i++)
    strv_push(&layers, s->base[i]);
  strv_free(w->layers);
  w->layers = layers;
  if (workspace_mount_options(w, err) < 0)
    return -1;
  return workspace_save(w, err);
}

/* The overlay of the current layers as a detached mount. */
static int overlay_fsmount(struct workspace *w, struct error *err)
{
  cleanup_close int fsfd = (int)syscall(SYS_fsopen, "overlay", FSOPEN_CLOEXEC);
  struct mnt_held held = {0};
  int mfd, r;

  if (fsfd < 0)
    return error_errno(err, "workspace `%s`: fsopen overlay", w->id);
  if (syscall(SYS_fsconfig, fsfd, FSCONFIG_SET_STRING, "source", "overlay", 0) < 0)
    return error_errno(err, "workspace `%s`: overlay source", w->id);
  for (size_t i = 0; i < 6 && w->mount_optv[i]; i++) {
    cleanup_free char *key = xstrdup(w->mount_optv[i]);
    cleanup_free char *val = NULL;
    cleanup_free int *fds = NULL;
    size_t n = 0;
    char *eq = strchr(key, '=');
    *eq = '\0';
    /* a sub-agent's layers, ROOT//REL: opened without a symlink (view.c) */
    if (streq(key, "lowerdir") && strv_contains(w->mount_optv, WORKSPACE_OPT_BENEATH) &&
        (val = workspace_lowerdir_beneath(eq + 1, &fds, &n, err)) == NULL) {
      mnt_held_close(&held);
      return error_prefix(err, "workspace `%s`", w->id);
    }
    /* a value over fsconfig()'s 255 bytes (several snapshots under a long
     * id) goes layer by layer (os/mount_ops.h) */
    r = mnt_fs_set(fsfd, "overlay", key, val ? val : eq + 1, &held, err);
    for (size_t k = 0; k < n; k++)
      close(fds[k]);
    if (r < 0) {
      mnt_held_close(&held);
      return error_prefix(err, "workspace `%s`", w->id);
    }
  }
  r = (int)syscall(SYS_fsconfig, fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0);
  mnt_held_close(&held);
  if (r < 0)
    return error_errno(err, "workspace `%s`: create overlay", w->id);
  mfd = (int)syscall(SYS_fsmount, fsfd, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
  if (mfd < 0)
    return error_errno(err, "workspace `%s`: fsmount overlay", w->id);
  return mfd;
}

/* The profile's protected list, as create recorded it in <dir>/protected
 * (relative to the workspace, one per line, directories end in '/'). */
char **workspace_protected(const struct workspace *w)
{
  cleanup_free char *path = xfmt("%s/protected", w->dir);
  cleanup_free char *data = NULL;
  struct error e = {0};
  char **ret = NULL;
  char *save = NULL;
  size_t len = 0;

  if (read_file_at(AT_FDCWD, path, 1 << 20, &data, &len, &e) < 0)
    return NULL;
  for (char *s = strtok_r(data, "\n", &save); s; s = strtok_r(NULL, "\n", &save))
    strv_push(&ret, s);
  return ret;
}

/* An image's upper layer is reached by path (upperdir=<dir>/fs/upper, a
 * sub-agent's <ancestor dir>/fs/sub/<id>/upper): img's image (w's own, or
 * the ancestor's), in a private mount namespace of the child, whose mounts
 * go with it. */
static int attach_image(const struct workspace *w, struct error *err)
{
  cleanup_free char *at = workspace_fs_path(w);
  cleanup_close int target = -1, clone = -1;

  if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
    return error_errno(err, "a private mount namespace");
  target = open(at, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (target < 0)
    return error_errno(err, "open `%s`", at);
  /* a clone: the caller's mount stays detached, usable after we are gone */
  clone = (int)syscall(SYS_open_tree, workspace_fs_fd(w), "",
                       OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
  if (clone < 0 || syscall(SYS_move_mount, clone, "", target, "",
                           MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
    return error_errno(err, "mount the image on `%s`", at);
  return 0;
}

/* In the child: build the overlay, join the namespace and attach; the
 * message goes to pipefd. */
static __attribute__((noreturn)) void attach_child(int nsfd, struct workspace *w,
                                                   const struct workspace *img, int pipefd)
{
  struct error e = {0};
  const char *dest = w->dest;
  int rootfd, target, mfd;

  if (img != NULL && attach_image(img, &e) < 0)
    goto fail;
  mfd = overlay_fsmount(w, &e);
  if (mfd < 0)
    goto fail;
  if (setns(nsfd, CLONE_NEWNS) < 0) {
    error_errno(&e, "setns into the container's mount namespace");
    goto fail;
  }
  rootfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0) {
    error_errno(&e, "open the container root");
    goto fail;
  }
  target = safe_walk(rootfd, dest, SAFE_OPEN, true, &e);
  if (target < 0)
    goto fail;
  if (syscall(SYS_move_mount, mfd, "", target, "",
              MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0) {
    error_errno(&e, "attach the overlay on `%s`", dest);
    goto fail;
  }
  _exit(0);
fail:
  if (write(pipefd, e.msg, strlen(e.msg)) < 0)
    _exit(2);
  _exit(1);
}

/* The workspace whose image holds w's upper (w, or a sub-agent's ancestor:
 * without it the overlay's upperdir was a path to nothing, sub-rollback),
 * mounted; *ret_own: one to free.  NULL: a plain upper. */
static int image_of(struct workspace *w, struct workspace **ret, struct workspace **ret_own,
                    struct error *err)
{
  *ret = *ret_own = NULL;
  if (workspace_has_image(w)) {
    if (ws_fs_mount(w, err) < 0)
      return -1;
    *ret = w;
  } else if (w->upper_in != NULL) {
    if (ws_family_load(w, ret_own, err) < 0)
      return -1;
    *ret = *ret_own;
  }
  return 0;
}

int workspace_remount_in_ns(struct workspace *w, int nsfd, struct error *err)
{
  struct workspace *img = NULL, *own = NULL;
  int p[2], status = 0;
  char msg[ERROR_MSG_MAX] = "";
  ssize_t n;
  pid_t pid;

  if (w->mount_optv == NULL && workspace_mount_options(w, err) < 0)
    return -1;
  if (image_of(w, &img, &own, err) < 0)
    return -1;
  if (pipe2(p, O_CLOEXEC) < 0) {
    workspace_free(own);
    return error_errno(err, "workspace `%s`: pipe", w->id);
  }
  pid = fork();
  if (pid < 0) {
    close(p[0]), close(p[1]);
    workspace_free(own);
    return error_errno(err, "workspace `%s`: fork", w->id);
  }
  if (pid == 0) {
    close(p[0]);
    attach_child(nsfd, w, img, p[1]);
  }
  workspace_free(own);
  close(p[1]);
  n = read(p[0], msg, sizeof msg - 1);
  close(p[0]);
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    msg[n > 0 ? n : 0] = '\0';
    return error_set(err, 0, "workspace `%s`: remount: %s", w->id,
                     msg[0] ? msg : "the helper process failed");
  }
  return 0;
}

static int open_layers(const struct workspace *w, int fs, bool record, struct ws_layers *ret,
                       struct error *err);

int workspace_open_layers(const struct workspace *w, struct ws_layers *ret, struct error *err)
{
  return open_layers(w, -1, true, ret, err);
}

int workspace_open_layers_at(const struct workspace *w, int fs, struct ws_layers *ret,
                             struct error *err)
{
  return open_layers(w, fs, false, ret, err);
}

static int open_layers(const struct workspace *w, int fs, bool record, struct ws_layers *ret,
                       struct error *err)
{
  cleanup_close int dfd = open(w->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  cleanup_close int sfd = -1, ufd = -1;
  size_t n = 1 + strv_len(w->layers);

  memset(ret, 0, sizeof *ret);
  ret->hostfd = -1;
  ret->xattr = w->ovl_xattr;
  ret->manifest = &w->manifest;
  if (dfd < 0 || (sfd = ws_open_dir(dfd, "snapshots")) < 0)
    return error_errno(err, "workspace `%s`: open `%s`", w->id, w->dir);
  if (fs >= 0 && workspace_has_image(w))
    ufd = openat(fs, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (ufd < 0 && (ufd = ws_upper_base(w, err)) < 0)
    return -1;
  ret->fds = xmalloc(n * sizeof *ret->fds);
  ret->fds[ret->n] = ws_open_dir(ufd, "upper");
  if (ret->fds[ret->n] < 0)
    goto fail;
  ret->n++;
  for (size_t i = 0; w->layers && w->layers[i]; i++) {
    ret->fds[ret->n] = ws_open_dir(sfd, w->layers[i]);
    if (ret->fds[ret->n] < 0)
      goto fail;
    ret->n++;
  }
  ret->hostfd = workspace_open_host(w->lowerdir, w->view_start, O_RDONLY);
  /* an orphan (its parent's init has ended) is read against its parent's
   * record (workspace_open_record_host), by the review commands only: the
   * overlay is made in a mount namespace of the caller's own */
  if (ret->hostfd < 0 && errno == ESRCH && record && workspace_is_view(w->lowerdir) &&
      w->view_start != 0) {
    ret->hostfd = workspace_open_record_host(w, false, err);
    if (ret->hostfd < 0) {
      ws_layers_close(ret);
      return -1;
    }
  }
  if (ret->hostfd < 0) {
    ws_host_error(w, err);
    ws_layers_close(ret);
    return -1;
  }
  return 0;
fail:
  error_errno(err, "workspace `%s`: open layers", w->id);
  ws_layers_close(ret);
  return -1;
}

void ws_layers_close(struct ws_layers *l)
{
  for (size_t i = 0; i < l->n; i++)
    close(l->fds[i]);
  if (l->hostfd >= 0)
    close(l->hostfd);
  free(l->fds);
  memset(l, 0, sizeof *l);
  l->hostfd = -1;
}

int workspace_rollback_undo(struct workspace *w, char **old_layers, struct error *err)
{
  struct error e = {0};
  cleanup_close int dfd = ws_upper_base(w, &e);
  cleanup_close int rfd = -1, qfd = -1;
  cleanup_free char *seq = xfmt("%llu", (unsigned long long)w->retired_seq);

  strv_free(w->layers);
  w->layers = old_layers;
  if (dfd < 0 || (rfd = ws_open_dir(dfd, "retired")) < 0 || (qfd = ws_open_dir(rfd, seq)) < 0 ||
      ws_rm_tree(dfd, "upper") < 0 || ws_rm_tree(dfd, "work") < 0 ||
      renameat(qfd, "upper", dfd, "upper") < 0 || renameat(qfd, "work", dfd, "work") < 0)
    return error_errno(err, "workspace `%s`: undo rollback", w->id);
  if (workspace_mount_options(w, err) < 0)
    return -1;
  return workspace_save(w, err);
}
