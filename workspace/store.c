/* store.c - the workspace directory: prepare (at create), load, overlay
 * options, discard, purge, retention.  Layout and rules: workspace.h. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"
#include "os/fsutil.h"
#include "workspace/internal.h"

static char *now_rfc3339(int64_t *ret_s)
{
  char buf[RFC3339_NANO_SIZE];

  rfc3339_now(buf, ret_s);
  return xstrdup(buf);
}

char *ws_now(int64_t *ret_s)
{
  return now_rfc3339(ret_s);
}

bool ws_valid_name(const char *s)
{
  size_t n = strlen(s);

  if (n == 0 || n > WS_NAME_MAX ||
      !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') ||
        (s[0] >= '0' && s[0] <= '9')))
    return false;
  return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.+-") == n;
}

/* Overlay options are split on ',' and lowerdir on ':' (and '\' escapes). */
static bool option_safe(const char *p)
{
  return strpbrk(p, ",:\\\"\n") == NULL;
}

static char *ws_dir(const char *root, const char *id)
{
  return xfmt("%s/%s/%s", root, WS_DIR, id);
}

void workspace_free(struct workspace *w)
{
  if (w == NULL)
    return;
  free(w->id);
  free(w->dir);
  free(w->lowerdir);
  free(w->dest);
  free(w->created);
  strv_free(w->layers);
  strv_free(w->mountpoints);
  for (size_t i = 0; i < w->n_snaps; i++) {
    free(w->snaps[i].name);
    free(w->snaps[i].created);
    strv_free(w->snaps[i].base);
  }
  free(w->snaps);
  ws_manifest_free(&w->manifest);
  free(w->mount_data);
  strv_free(w->mount_optv);
  ws_fs_free(w->fs);
  free(w->upper_in);
  free(w->warning);
  free(w);
}

int workspace_load(const char *root, const char *id, struct workspace **ret, struct error *err)
{
  struct workspace *w;

  if (!ws_valid_name(id))
    return error_set(err, EINVAL, "workspace `%s`: invalid id", id);
  w = xmalloc0(sizeof *w);
  w->id = xstrdup(id);
  w->dir = ws_dir(root, id);
  w->fs = ws_fs_new();
  if (access(w->dir, F_OK) < 0) {
    error_set(err, ENOENT, "workspace `%s` does not exist", id);
    workspace_free(w);
    return -1;
  }
  if (ws_meta_read(w, err) < 0 || ws_family_read(w, err) < 0) {
    error_prefix(err, "workspace `%s`", id);
    workspace_free(w);
    return -1;
  }
  *ret = w;
  return 0;
}

int workspace_ids(const char *root, char ***ret, struct error *err)
{
  cleanup_free char *base = xfmt("%s/%s", root, WS_DIR);
  cleanup_close int fd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  char **v = xmalloc0(sizeof *v), **names = NULL;
  size_t n = 0;

  if (fd < 0 && errno != ENOENT) {
    free(v);
    return error_errno(err, "open `%s`", base);
  }
  if (fd >= 0 && ws_list_dir(fd, &names, &n) == 0) {
    for (size_t i = 0; i < n; i++) {
      cleanup_free char *meta = xfmt("%s/meta.json", names[i]);
      if (ws_valid_name(names[i]) && faccessat(fd, meta, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
        strv_push(&v, names[i]);
    }
    strv_free(names);
  }
  *ret = v;
  return 0;
}

/* In a user namespace of its own (a rootless engine, `agentrt sandbox` as a
 * user) overlayfs keeps its metadata in user.overlay.* (userxattr): the
 * trusted.* namespace needs privilege on the host. */
static bool in_child_userns(void)
{
  char buf[128] = "";
  unsigned long a = 0, b = 0, n = 0;
  FILE *f = fopen("/proc/self/uid_map", "re");

  if (f == NULL)
    return false;
  if (fgets(buf, sizeof buf, f) == NULL || sscanf(buf, "%lu %lu %lu", &a, &b, &n) != 3)
    n = 0;
  fclose(f);
  return !(a == 0 && b == 0 && n == 4294967295UL);
}

int workspace_mount_options(struct workspace *w, struct error *err)
{
  bool userxattr = in_child_userns();
  /* with an image the init mounts it on <dir>/fs first (image.c), a
   * sub-agent's ancestor's on that one's */
  cleanup_free char *up = ws_upper_base_path(w);
  cleanup_free char *lower = xstrdup("");

  for (size_t i = 0; w->layers && w->layers[i]; i++) {
    char *l = xfmt("%s%s/snapshots/%s:", lower, w->dir, w->layers[i]);
    free(lower);
    lower = l;
  }
  if (!option_safe(w->dir) || !option_safe(w->lowerdir) || !option_safe(up))
    return error_set(err, EINVAL,
                     "workspace `%s`: `%s` or `%s` holds `,`, `:`, `\\` or `\"`, which overlayfs "
                     "options cannot carry",
                     w->id, up, w->lowerdir);
  cleanup_free char *view = NULL;
  if (workspace_is_view(w->lowerdir)) {
    view = ws_view_layers(w, err);
    if (view == NULL)
      return error_prefix(err, "workspace `%s`", w->id);
  }
  strv_free(w->mount_optv);
  w->mount_optv = NULL;
  w->mount_optv = xmalloc0(4 * sizeof *w->mount_optv);
  w->mount_optv[0] = xfmt("lowerdir=%s%s", lower, view ? view : w->lowerdir);
  w->mount_optv[1] = xfmt("upperdir=%s/upper", up);
  w->mount_optv[2] = xfmt("workdir=%s/work", up);
  /* No redirects created ("off" is refused in a user namespace, where "nofollow"
   * also refuses to follow one).  "off" follows a trusted.overlay.redirect found in a
   * lower layer above another when the module's redirect_always_follow is set, but
   * none of the layers holds one: no mount of ours creates it and trusted.* cannot be
   * set from inside (workspace.bats forged-redirect). */
  strv_push(&w->mount_optv, userxattr ? "redirect_dir=nofollow" : "redirect_dir=off");
  w->ovl_xattr = userxattr ? WS_XATTR_USER : WS_XATTR_TRUSTED;
  strv_push(&w->mount_optv, "index=off");
  strv_push(&w->mount_optv, "metacopy=off");
  if (userxattr)
    strv_push(&w->mount_optv, "userxattr");
  free(w->mount_data);
  w->mount_data =
      xfmt("%s,%s,%s,redirect_dir=%s,index=off,metacopy=off%s", w->mount_optv[0], w->mount_optv[1],
           w->mount_optv[2], userxattr ? "nofollow" : "off", userxattr ? ",userxattr" : "");
  strv_push(&w->mount_optv, "nosuid");
  strv_push(&w->mount_optv, "nodev");
  if (view != NULL)
    strv_push(&w->mount_optv, WORKSPACE_OPT_BENEATH);
  return 0;
}

bool workspace_marked_mounted(const struct workspace *w)
{
  cleanup_free char *p = xfmt("%s/mounted", w->dir);
  return access(p, F_OK) == 0;
}

void workspace_set_mounted(struct workspace *w, bool on)
{
  cleanup_free char *p = xfmt("%s/mounted", w->dir);

  if (on) {
    int fd = open(p, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0)
      close(fd);
  } else {
    unlink(p);
  }
}

/* "upper": bytes of the files in the upper layer (in the image, if any);
 * "." or a snapshot: bytes on the host disk, where the sparse image counts
 * by its blocks, not its size. */
uint64_t workspace_du(const struct workspace *w, const char *sub)
{
  struct error e = {0};
  cleanup_close int fd =
      streq(sub, "upper") ? ws_upper_base(w, &e) : open(w->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  uint64_t files = 0, bytes = 0, apparent = 0, disk;

  if (fd >= 0)
    ws_tree_size(fd, sub, &files, &bytes);
  if (streq(sub, ".")) {
    disk = ws_image_disk_bytes(w, &apparent);
    bytes = bytes >= apparent ? bytes - apparent + disk : disk;
  }
  return bytes;
}

/* A fresh upper/ (owner and mode of the host dir: the workspace root the
 * container sees takes them from upper) and work/. */
static int make_upper(struct workspace *w, int dfd, struct error *err)
{
  struct stat st;
  cleanup_close int ufd = -1;
  cleanup_close int hfd = workspace_open_host(w->lowerdir, w->view_start, O_PATH);

  if (hfd < 0 || fstat(hfd, &st) < 0 || !S_ISDIR(st.st_mode))
    return ws_host_error(w, err);
  if ((mkdirat(dfd, "upper", 0700) < 0 && errno != EEXIST) ||
      (mkdirat(dfd, "work", 0700) < 0 && errno != EEXIST))
    return error_errno(err, "workspace `%s`: mkdir upper/work", w->id);
  ufd = ws_open_dir(dfd, "upper");
  if (ufd < 0 || fchown(ufd, st.st_uid, st.st_gid) < 0 || fchmod(ufd, st.st_mode & 07777) < 0)
    return error_errno(err, "workspace `%s`: set owner of upper", w->id);
  return 0;
}

/* The upper layer's base (the image mounted, if any) with upper/ and work/. */
/* The volatile overlay's mark in the upper base dfd (work/work/incompat),
 * left by a run since this boot: the overlay was unmounted without a host
 * crash, so its writes are in the upper file system's page cache, and the
 * mark goes.  An image's base is inside the image, which clear_volatile_mark
 * at release does not mount: the container run again under its name failed
 * with EINVAL (sandbox-rerun).  A mark older than the boot stays (overlayfs
 * refuses those layers: workspace discard or purge). */
static void clear_volatile_mark_since_boot(int dfd)
{
  cleanup_close int wfd = ws_open_dir(dfd, "work");
  cleanup_close int kfd = wfd < 0 ? -1 : ws_open_dir(wfd, "work");
  struct timespec real, boot;
  struct stat st;

  if (kfd < 0 || fstatat(kfd, "incompat/volatile", &st, AT_SYMLINK_NOFOLLOW) < 0)
    return;
  if (clock_gettime(CLOCK_REALTIME, &real) < 0 || clock_gettime(CLOCK_BOOTTIME, &boot) < 0)
    return;
  if (st.st_mtim.tv_sec > real.tv_sec - boot.tv_sec + 1)
    ws_rm_tree(kfd, "incompat");
}

static int mount_upper(struct workspace *w, struct error *err)
{
  cleanup_close int ufd = ws_upper_base_make(w, err);

  if (ufd >= 0)
    clear_volatile_mark_since_boot(ufd);
  return ufd < 0 ? -1 : make_upper(w, ufd, err);
}

static bool dir_empty(int dfd, const char *name)
{
  cleanup_close int fd = ws_open_dir(dfd, name);
  cleanup_strv char **names = NULL;
  size_t n = 0;

  return fd < 0 || (ws_list_dir(fd, &names, &n) == 0 && n == 0);
}

bool workspace_pending(const struct workspace *w)
{
  cleanup_close int dfd = open(w->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

  struct error e = {0};
  cleanup_close int ufd = dfd < 0 ? -1 : ws_upper_base(w, &e);

  return dfd < 0 || ufd < 0 || w->n_snaps > 0 || !dir_empty(ufd, "upper");
}

bool workspace_kept(const struct workspace *w)
{
  struct error e = {0};
  cleanup_close int ufd = ws_upper_base(w, &e);

  if (ufd < 0)
    return e.code != ENOENT; /* a sub-agent's whose ancestor's image is gone: nothing */
  return w->n_snaps > 0 || !dir_empty(ufd, "upper");
}

static int record_manifest(struct workspace *w, const struct ws_limits *lim, struct error *err)
{
  cleanup_close int hfd = workspace_open_host(w->lowerdir, w->view_start, O_RDONLY);

  if (hfd < 0)
    return ws_host_error(w, err);
  ws_manifest_free(&w->manifest);
  free(w->created);
  w->created = now_rfc3339(&w->created_s);
  return ws_manifest_record(hfd, lim, &w->manifest, err);
}

/* Load the existing workspace of id (same host dir and destination) or
 * start a new one. */
static int open_or_new(const char *root, const char *id, const char *lower, uint64_t view_start,
                       const char *dest, struct workspace **ret, struct error *err)
{
  struct workspace *w = NULL;
  struct error e2 = {0};

  if (workspace_load(root, id, &w, &e2) == 0) {
    /* a view of another process than the one with that pid before is
     * another host dir */
    if (!streq(w->lowerdir, lower) || !streq(w->dest, dest) || w->view_start != view_start) {
      error_set(err, EEXIST,
                "workspace `%s` holds changes to `%s` mounted at `%s`: commit, discard or purge "
                "it first (`agentrt workspace %s discard`)",
                id, w->lowerdir, w->dest, id);
      workspace_free(w);
      return -1;
    }
    *ret = w;
    return 0;
  }
  if (e2.code != ENOENT) {
    *err = e2;
    return -1;
  }
  w = xmalloc0(sizeof *w);
  w->id = xstrdup(id);
  w->dir = ws_dir(root, id);
  w->lowerdir = xstrdup(lower);
  w->view_start = view_start;
  w->dest = xstrdup(dest);
  w->layers = xmalloc0(sizeof *w->layers);
  w->fs = ws_fs_new();
  *ret = w;
  return 0;
}

/* The retention sweep loads every workspace of the store and sums its size:
 * run on every create it made each create O(store) (100 retained workspaces:
 * 8 -> 20 ms of CPU and 1,100 -> 9,300 syscalls per `run`).  At create it
 * runs at most once per WS_SWEEP_INTERVAL, tracked by the mtime of a stamp
 * file that is not a valid workspace id. */
#define WS_SWEEP_INTERVAL 60
#define WS_SWEEP_STAMP ".last-sweep"

static bool sweep_due(int basefd)
{
  struct timespec now;
  struct stat st;
  int fd;

  clock_gettime(CLOCK_REALTIME, &now);
  if (fstatat(basefd, WS_SWEEP_STAMP, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
      st.st_mtim.tv_sec <= now.tv_sec && now.tv_sec - st.st_mtim.tv_sec < WS_SWEEP_INTERVAL)
    return false;
  fd = openat(basefd, WS_SWEEP_STAMP, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
              0600);
  if (fd >= 0) {
    futimens(fd, NULL);
    close(fd);
  }
  return true;
}

/* A sub-agent's (id P.a.b): the nearest ancestor whose workspace has an
 * image (P.a, then P; the one its create attaches), or NULL. */
static char *family_owner(const char *root, const char *id)
{
  cleanup_free char *cur = xstrdup(id);

  for (int depth = 0; depth < 16; depth++) {
    char *dot = strrchr(cur, '.');
    struct workspace *aw = NULL;
    struct error e = {0};
    bool img;
    if (dot == NULL)
      return NULL;
    *dot = '\0';
    if (workspace_load(root, cur, &aw, &e) < 0)
      return NULL; /* "a.b" was a container's own id: no ancestor */
    img = workspace_has_image(aw);
    workspace_free(aw);
    if (img)
      return xstrdup(cur);
  }
  return NULL;
}

/* The upper layer of a workspace with a size limit lives in an image
 * (image.c).  A workspace that already has one keeps it (and its size); an
 * older one whose plain upper holds changes keeps that until commit or
 * discard; without loop devices or mkfs the limit is not enforced: a
 * warning (w->warning), or a refusal when lim->size_required.  A
 * sub-agent's lives in its nearest ancestor's image, when it has one,
 * whatever its own limit: that image's size bounds the family. */
static int choose_storage(const char *root, struct workspace *w, int dfd,
                          const struct ws_limits *lim, struct error *err)
{
  const char *why = NULL;

  if (workspace_is_view(w->lowerdir) && w->upper_in == NULL && !workspace_has_image(w) &&
      dir_empty(dfd, "upper")) {
    cleanup_free char *owner = family_owner(root, w->id);
    if (owner != NULL) {
      if (ws_rm_tree(dfd, "upper") < 0 || ws_rm_tree(dfd, "work") < 0)
        return error_errno(err, "workspace `%s`: remove the empty upper", w->id);
      return ws_family_record(w, owner, err);
    }
  }
  if (w->upper_in != NULL)
    return 0;
  if (lim == NULL || lim->size == 0 || workspace_has_image(w))
    return 0;
  if (!dir_empty(dfd, "upper")) {
    w->warning = xfmt("workspace.size is not enforced: the workspace holds changes made before "
                      "its size limit (commit or discard them)");
    return 0;
  }
  if (!ws_image_supported(&why)) {
    if (lim->size_required)
      return error_set(err, 0,
                       "workspace.size %" PRIu64 " cannot be enforced on this host (%s): the "
                       "overlay's upper layer needs a loop device",
                       lim->size, why);
    w->warning = xfmt("workspace.size is not enforced (%s): the overlay's upper layer grows in "
                      "the data directory without a limit",
                      why);
    return 0;
  }
  if (ws_rm_tree(dfd, "upper") < 0 || ws_rm_tree(dfd, "work") < 0)
    return error_errno(err, "workspace `%s`: remove the empty upper", w->id);
  return lim->copy_later ? ws_image_plan(w, lim->size, err) : ws_image_create(w, lim->size, err);
}

int workspace_prepare(const char *root, const char *id, const char *lowerdir, uint64_t view_start,
                      const char *dest, const struct ws_limits *lim, struct workspace **ret,
                      struct error *err)
{
  cleanup_free char *base = xfmt("%s/%s", root, WS_DIR), *lower = NULL;
  cleanup_close int dfd = -1;
  struct workspace *w = NULL;
  bool fresh = false;

  if (strlen(id) > WS_NAME_MAX)
    return error_set(err, ENAMETOOLONG,
                     "workspace: the container id is too long for a workspace (%zu bytes, at "
                     "most %d)",
                     strlen(id), WS_NAME_MAX);
  if (!ws_valid_name(id) || dest[0] != '/')
    return error_set(err, EINVAL, "workspace `%s`: invalid id or destination `%s`", id, dest);
  /* a sub-agent's lower is its parent's view, /proc/PID/root/DIR: a magic
   * link that realpath would collapse to the host's DIR */
  if (workspace_is_view(lowerdir)) {
    struct stat st;
    cleanup_close int hfd = -1;
    if (view_start == 0 && workspace_view_start(lowerdir, &view_start) < 0)
      return error_set(err, ESRCH, "workspace `%s`: host dir `%s`: its process is gone", id,
                       lowerdir);
    hfd = workspace_open_host(lowerdir, view_start, O_PATH);
    if (hfd < 0 || fstat(hfd, &st) < 0 || !S_ISDIR(st.st_mode))
      return error_errno(err, "workspace `%s`: host dir `%s`%s", id, lowerdir,
                         errno == ESRCH ? " (its process is gone, or the pid is another's now)"
                                        : "");
    lower = xstrdup(lowerdir);
  } else {
    view_start = 0;
    lower = realpath(lowerdir, NULL);
  }
  if (lower == NULL)
    return error_errno(err, "workspace `%s`: host dir `%s`", id, lowerdir);
  if ((mkdir(root, 0700) < 0 && errno != EEXIST) || (mkdir(base, 0700) < 0 && errno != EEXIST))
    return error_errno(err, "workspace `%s`: mkdir `%s`", id, base);
  if (open_or_new(root, id, lower, view_start, dest, &w, err) < 0)
    return -1;
  fresh = access(w->dir, F_OK) < 0;
  if (mkdir(w->dir, 0700) < 0 && errno != EEXIST) {
    error_errno(err, "workspace `%s`: mkdir `%s`", id, w->dir);
    goto fail;
  }
  dfd = open(w->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dfd < 0 || (mkdirat(dfd, "snapshots", 0700) < 0 && errno != EEXIST)) {
    error_errno(err, "workspace `%s`: open `%s`", id, w->dir);
    goto fail;
  }
  if (choose_storage(root, w, dfd, lim, err) < 0)
    goto fail;
  /* a new image holds nothing yet: mounted later (workspace_finish_upper) */
  w->upper_later = fresh && workspace_has_image(w);
  if (!w->upper_later && mount_upper(w, err) < 0)
    goto fail;
  workspace_gc(w);
  if (lim != NULL && (lim->max_age > 0 || lim->max_size > 0)) {
    cleanup_close int basefd = open(base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (basefd >= 0 && sweep_due(basefd))
      workspace_retention_sweep(root, lim, id, NULL);
  }
  if ((w->upper_later || !workspace_pending(w)) && record_manifest(w, lim, err) < 0)
    goto fail;
  if (workspace_mount_options(w, err) < 0 || workspace_save(w, err) < 0)
    goto fail;
  workspace_set_mounted(w, true);
  *ret = w;
  return 0;
fail:
  if (fresh) { /* nothing half-made is left */
    cleanup_close int basefd = open(base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct error e = {0};
    workspace_unmount(w);
    ws_family_remove(w, &e);
    if (basefd >= 0)
      ws_rm_tree(basefd, id);
  }
  workspace_free(w);
  return -1;
}

int workspace_finish_upper(struct workspace *w, struct error *err)
{
  if (!w->upper_later)
    return 0;
  if (mount_upper(w, err) < 0)
    return -1;
  w->upper_later = false;
  return 0;
}

void workspace_abandon(const char *root, const char *id)
{
  struct workspace *w = NULL;
  struct error e = {0};

  if (workspace_load(root, id, &w, &e) < 0)
    return;
  workspace_set_mounted(w, false);
  if (!workspace_pending(w))
    workspace_purge(root, id, &e);
  workspace_free(w);
}

/* A "volatile" overlay leaves work/work/incompat/volatile behind, and
 * overlayfs refuses to mount the layers again while it is there.  Once the
 * init is gone the overlay was unmounted cleanly and its writes are in the
 * page cache of the upper file system, so the mark goes (after a host crash
 * it stays, and the next mount fails: workspace discard or purge). */
static void clear_volatile_mark(const struct workspace *w)
{
  cleanup_free char *p = xfmt("%s/work/work", w->dir);
  cleanup_close int fd = open(p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

  if (fd >= 0)
    ws_rm_tree(fd, "incompat");
}

void workspace_release(const char *root, const char *id)
{
  struct workspace *w = NULL;
  struct error e = {0};

  if (workspace_load(root, id, &w, &e) < 0)
    return;
  workspace_set_mounted(w, false);
  workspace_gc(w);
  clear_volatile_mark(w);
  workspace_free(w);
}

/* In an image, retired uppers are looked for only when the `retired`
 * marker says a rollback left some (gc runs at every delete: mounting the
 * image there would cost every container a loop device). */
void workspace_gc(struct workspace *w)
{
  cleanup_close int dfd = open(w->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  cleanup_close int ufd = -1;
  struct error e = {0};

  if (dfd < 0)
    return;
  if (!workspace_has_image(w) && w->upper_in == NULL) {
    ws_rm_tree(dfd, "retired");
    return;
  }
  if (faccessat(dfd, WS_RETIRED_MARK, F_OK, AT_SYMLINK_NOFOLLOW) < 0 ||
      (ufd = ws_upper_base(w, &e)) < 0)
    return;
  if (ws_rm_tree(ufd, "retired") == 0)
    unlinkat(dfd, WS_RETIRED_MARK, 0);
}

/* Does w's image hold a sub-agent's kept changes?  Its upper layer is
 * there (<image>/sub/<id>, image.c), and is its only copy: a purge or a
 * new image dropped it silently (parent-purge-kept-children).  With why,
 * a refusal naming them is set there.  An image that cannot be mounted
 * holds nothing anyone can read: false. */
static bool family_kept(struct workspace *w, char *const *gone, struct error *why)
{
  cleanup_strv char **all = NULL, **ids = NULL;
  struct error e = {0};
  size_t n;

  if (ws_family_kept(w, &all, &e) < 0 || all == NULL)
    return false;
  for (size_t i = 0; all[i]; i++)
    if (!strv_contains(gone, all[i]))
      strv_push(&ids, all[i]);
  if (ids == NULL)
    return false;
  if (why != NULL) {
    cleanup_free char *list = xfmt("`%s`", ids[0]);
    n = strv_len(ids);
    for (size_t i = 1; i < n && i < 8; i++) {
      char *l = xfmt("%s, `%s`", list, ids[i]);
      free(list);
      list = l;
    }
    if (n > 8) {
      char *l = xfmt("%s, ... (%zu in all)", list, n);
      free(list);
      list = l;
    }
    error_set(why, EBUSY,
              "workspace `%s`: purge: its image holds the kept changes of its sub-agents' "
              "workspace%s %s: purge those first (agentrt workspace ID purge)",
              w->id, n > 1 ? "s" : "", list);
  }
  return true;
}

/* Remove w's own upper, work and retired layers where its upper lives (its image, or its
 * ancestor's for a sub-agent), leaving whatever else that image holds. */
static int discard_own_layers(const struct workspace *w, struct error *err)
{
  cleanup_close int bfd = ws_upper_base(w, err);

  if (bfd < 0)
    return error_prefix(err, "discard");
  if (ws_rm_tree(bfd, "upper") < 0 || ws_rm_tree(bfd, "work") < 0 || ws_rm_tree(bfd, "retired") < 0)
    return error_errno(err, "workspace `%s`: discard", w->id);
  return 0;
}

int workspace_discard(struct workspace *w, struct error *err)
{
  cleanup_close int dfd = open(w->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

  cleanup_close int ufd = -1;
  uint64_t size = workspace_image_size(w);

  if (dfd < 0)
    return error_errno(err, "workspace `%s`: open", w->id);
  /* an image is replaced by a fresh copy of the template: its blocks go back
   * to the host at once (once the unmount after `run` is done); unless it holds a
   * sub-agent's kept changes too (parent-purge-kept-children): then only w's own layers go */
  if (size > 0 && workspace_image_settle(w->dir, 60000) < 0)
    return error_errno(err, "workspace `%s`: discard: wait for its image", w->id);
  if (size > 0 && !family_kept(w, NULL, NULL)) {
    if (ws_image_remove(w, err) < 0 || ws_image_create(w, size, err) < 0)
      return error_prefix(err, "discard");
  } else if (size > 0 && discard_own_layers(w, err) < 0) {
    return -1;
  }
  if (w->upper_in != NULL && discard_own_layers(w, err) < 0) /* in its ancestor's image */
    return -1;
  unlinkat(dfd, WS_RETIRED_MARK, 0);
  if (ws_rm_tree(dfd, "upper") < 0 || ws_rm_tree(dfd, "work") < 0 ||
      ws_rm_tree(dfd, "snapshots") < 0 || ws_rm_tree(dfd, "retired") < 0)
    return error_errno(err, "workspace `%s`: discard", w->id);
  if (mkdirat(dfd, "snapshots", 0700) < 0 || (ufd = ws_upper_base(w, err)) < 0 ||
      make_upper(w, ufd, err) < 0)
    return error_prefix(err, "workspace `%s`: discard: recreate upper", w->id);
  strv_free(w->layers);
  w->layers = xmalloc0(sizeof *w->layers);
  for (size_t i = 0; i < w->n_snaps; i++) {
    free(w->snaps[i].name);
    free(w->snaps[i].created);
    strv_free(w->snaps[i].base);
  }
  w->n_snaps = 0;
  return workspace_save(w, err);
}

int workspace_purge_check_except(const char *root, const char *id, char *const *gone,
                                 struct error *err)
{
  struct workspace *w = NULL;
  struct error e = {0};
  int r = 0;

  if (ws_valid_name(id) && workspace_load(root, id, &w, &e) == 0 && family_kept(w, gone, err))
    r = -1;
  workspace_free(w);
  return r;
}

int workspace_purge_check(const char *root, const char *id, struct error *err)
{
  return workspace_purge_check_except(root, id, NULL, err);
}

int workspace_purge(const char *root, const char *id, struct error *err)
{
  cleanup_free char *base = xfmt("%s/%s", root, WS_DIR);
  cleanup_close int fd = open(base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  cleanup_close int idfd = -1;
  char **names = NULL;
  size_t n = 0;

  if (!ws_valid_name(id))
    return error_set(err, EINVAL, "workspace `%s`: invalid id", id);
  if (fd < 0)
    return error_errno(err, "workspace `%s`: purge", id);
  {
    /* the image's blocks go back to the host once its unmount after `run`
     * (workspace_image_settle) is done, not some time after purge */
    cleanup_free char *dir = xfmt("%s/%s", base, id);
    if (workspace_image_settle(dir, 60000) < 0)
      return error_errno(err, "workspace `%s`: purge: wait for its image", id);
  }
  /* a sub-agent's upper in its ancestor's image first: its room goes back
   * to the family (it stays found by its id until then) */
  {
    struct workspace *w = NULL;
    struct error e = {0};
    int r = 0;
    if (workspace_purge_check(root, id, err) < 0)
      return -1;
    if (workspace_load(root, id, &w, &e) == 0)
      r = ws_family_remove(w, err);
    workspace_free(w);
    if (r < 0)
      return error_prefix(err, "purge");
  }
  /* meta.json last: a purge that fails half way leaves a workspace that is
   * still found by its id, and purged by the next try */
  idfd = openat(fd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (idfd >= 0 && ws_list_dir(idfd, &names, &n) == 0) {
    for (size_t i = 0; i < n; i++) {
      if (strcmp(names[i], "meta.json") != 0 && ws_rm_tree(idfd, names[i]) < 0) {
        int saved = errno;
        error_set(err, saved, "workspace `%s`: purge `%s`: %s", id, names[i], strerror(saved));
        strv_free(names);
        return -1;
      }
    }
    strv_free(names);
  }
  if (ws_rm_tree(fd, id) < 0)
    return error_errno(err, "workspace `%s`: purge", id);
  return 0;
}

bool workspace_over_retention(const struct workspace *w, const struct ws_limits *lim, char *why,
                              size_t why_len)
{
  int64_t now = (int64_t)time(NULL);
  uint64_t du;

  if (lim == NULL)
    return false;
  if (lim->max_age > 0 && now - w->created_s > (int64_t)lim->max_age) {
    snprintf(why, why_len, "older than %llus", (unsigned long long)lim->max_age);
    return true;
  }
  if (lim->max_size > 0 && (du = workspace_du(w, ".")) > lim->max_size) {
    snprintf(why, why_len, "%llu bytes, more than %llu", (unsigned long long)du,
             (unsigned long long)lim->max_size);
    return true;
  }
  return false;
}

int workspace_retention_sweep(const char *root, const struct ws_limits *lim, const char *skip_id,
                              char ***ret_purged)
{
  cleanup_strv char **ids = NULL;
  struct error e = {0};
  int n = 0;

  if (lim == NULL || (lim->max_age == 0 && lim->max_size == 0) || workspace_ids(root, &ids, &e) < 0)
    return 0;
  /* last first: a sub-agent's id (P.N) sorts after its parent's, so a child
   * whose kept changes held its parent's image goes before the parent is
   * tried, in the same sweep (retention-kept-parent) */
  for (size_t i = strv_len(ids); i-- > 0;) {
    struct workspace *w = NULL;
    char why[128];
    if (streq(ids[i], skip_id) || workspace_load(root, ids[i], &w, &e) < 0)
      continue;
    if (!workspace_marked_mounted(w) && workspace_over_retention(w, lim, why, sizeof why) &&
        workspace_purge(root, ids[i], &e) == 0) {
      n++;
      if (ret_purged) {
        cleanup_free char *line = xfmt("%s (%s)", ids[i], why);
        strv_push(ret_purged, line);
      }
    }
    workspace_free(w);
  }
  return n;
}

int workspace_note_mountpoints(struct workspace *w, char *const *dests, struct error *err)
{
  size_t n = strlen(w->dest), before = strv_len(w->mountpoints);

  while (n > 1 && w->dest[n - 1] == '/')
    n--;
  for (size_t i = 0; dests && dests[i]; i++) {
    const char *d = dests[i];
    if (n == 1 ? d[0] != '/' || d[1] == '\0'
               : strncmp(d, w->dest, n) != 0 || d[n] != '/' || d[n + 1] == '\0')
      continue;
    d += n == 1 ? 1 : n + 1;
    if (!strv_contains(w->mountpoints, d))
      strv_push(&w->mountpoints, d);
  }
  return strv_len(w->mountpoints) == before ? 0 : workspace_save(w, err);
}
