/* mount_ops.c - fd-based mount primitives on the new mount API (see mounts.h).
 *
 * A mount is built detached (open_tree(OPEN_TREE_CLONE) or fsopen/fsmount),
 * given its attributes while nobody can see it, then attached with
 * move_mount() onto an O_PATH fd of the target.  Because the target is an fd
 * resolved inside the rootfs, the mount cannot be redirected by a symlink
 * planted or exchanged after the check (CVE-2021-30465, CVE-2025-52565).
 * mount_setattr() changes only the attributes we name, so flags the kernel
 * locked on a mount that came from a more privileged namespace (nosuid,
 * nodev, noexec, ro) are kept as they are — what a MS_REMOUNT|MS_BIND with
 * the statvfs() flags ORed in achieves with the old API.
 */
#include "os/mount_ops.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/failpoint.h"
#include "common/util.h"
#include "os/safepath.h"

int mnt_clone(int dirfd, const char *path, bool recursive, const char *what, struct error *err)
{
  unsigned int flags = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC;
  int fd;

  if (*path == '\0')
    flags |= AT_EMPTY_PATH;
  if (recursive)
    flags |= AT_RECURSIVE;
  fd = open_tree(dirfd, path, flags);
  if (fd < 0)
    return error_errno(err, "bind `%s`: open_tree", what);
  return fd;
}

/* The kernel keeps a log of why an fs_context refused a parameter; use its
 * last line as the error text when there is one ("e tmpfs: Bad value..."). */
static int fs_error(int fsfd, const char *type, const char *what, struct error *err)
{
  int saved = errno;
  char buf[512], last[512] = "";
  ssize_t n;

  for (int i = 0; i < 16 && (n = read(fsfd, buf, sizeof buf - 1)) > 0; i++) {
    buf[n] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
    snprintf(last, sizeof last, "%s", buf + (n > 2 && buf[1] == ' ' ? 2 : 0));
  }
  if (last[0] != '\0')
    return error_set(err, saved, "mount `%s`: %s (%s)", type, what, last);
  return error_set(err, saved, "mount `%s`: %s", type, what);
}

/* A quoted value ("context=\"a:b:c:s0:c1,c2\"") keeps its commas; fsconfig()
 * takes the value bare (mount(2) strips such quotes itself). */
static const char *unquote(char *v)
{
  size_t n = strlen(v);

  if (n >= 2 && v[0] == '"' && v[n - 1] == '"') {
    v[n - 1] = '\0';
    return v + 1;
  }
  return v;
}

/* fsconfig() copies a string value of at most this many bytes (and its NUL);
 * mount(2) took a page of options.  An overlay's lowerdir of a few deep
 * layers is longer: a sub-agent's grandchild names its parent's and its
 * grandparent's upper layers in the data directory, ~140 bytes each under
 * an engine's 64-character ids. */
#define FS_VALUE_MAX 255
#define MAX_LAYERS 500 /* overlayfs takes at most 500 lower layers */

void mnt_held_close(struct mnt_held *h)
{
  for (size_t i = 0; i < h->n; i++)
    close(h->fds[i]);
  free(h->fds);
  *h = (struct mnt_held){0};
}

/* PATH (unescaped) in a value: itself when it fits and !by_fd, else
 * /proc/self/fd/N of it opened here as the kernel would resolve it (relative
 * to our working directory, following symlinks).  NULL: it cannot be opened. */
static char *layer_name(const char *path, bool by_fd, struct mnt_held *h)
{
  int fd;

  if (!by_fd && strlen(path) <= FS_VALUE_MAX)
    return xstrdup(path);
  fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return NULL;
  h->fds = xrealloc(h->fds, (h->n + 1) * sizeof *h->fds);
  h->fds[h->n++] = fd;
  return xfmt("/proc/self/fd/%d", fd);
}

/* An overlay option's path as the kernel reads it: a backslash keeps the
 * next byte whatever it is.  With layers, also split at each other ':',
 * those after an empty layer ("a::b") data-only; returns the count. */
struct layer {
  char *path;
  bool data;
};

static size_t split_layers(const char *v, bool layers, struct layer *out, size_t max)
{
  size_t n = 0;
  bool data = false;
  char *cur = xmalloc(strlen(v) + 1), *w = cur;

  for (const char *p = v;; p++) {
    if (*p == '\\' && p[1] != '\0') {
      *w++ = *++p;
      continue;
    }
    if (*p != '\0' && (*p != ':' || !layers)) {
      *w++ = *p;
      continue;
    }
    *w = '\0';
    if (w == cur && *p == ':' && n > 0)
      data = true;
    else if (w != cur && n < max)
      out[n++] = (struct layer){.path = xstrdup(cur), .data = data};
    w = cur;
    if (*p == '\0')
      break;
  }
  free(cur);
  return n;
}

/* Does this kernel's overlayfs take a lower layer per `lowerdir+` (Linux
 * 6.8)?  Asked of a context of its own: before Linux 6.5 overlayfs parsed a
 * mount(2) string made of whatever fsconfig() was given (an unknown key fails
 * only at create), so an unknown key is tried first. */
static bool overlay_has_lowerdir_add(void)
{
  cleanup_close int fd = -1;

  /* build-fp: a kernel before Linux 6.8 (faults.bats "overlay-long-options") */
  if (FAILPOINT_FAILS("overlay-no-lowerdir-add"))
    return false;
  fd = fsopen("overlay", FSOPEN_CLOEXEC);
  if (fd < 0 || fsconfig(fd, FSCONFIG_SET_FLAG, "agentrt-probe", NULL, 0) == 0)
    return false;
  return fsconfig(fd, FSCONFIG_SET_STRING, "lowerdir+", "/", 0) == 0;
}

/* An overlay's lowerdir longer than fsconfig() takes: each layer by a key of
 * its own, `lowerdir+` (`datadir+` for a data-only one), or where the kernel
 * has no such key, one lowerdir of /proc/self/fd names (resolved at create
 * before Linux 6.5: held open until then). */
static int overlay_lowerdir(int fsfd, const char *value, struct mnt_held *h, struct error *err)
{
  struct layer *v = xmalloc(MAX_LAYERS * sizeof *v);
  size_t n = split_layers(value, true, v, MAX_LAYERS);
  bool add = n > 0 && overlay_has_lowerdir_add();
  char *joined = xstrdup("");
  int r = n > 0 ? 0 : error_set(err, EINVAL, "mount `overlay`: option `lowerdir`: no layer");

  for (size_t i = 0; r == 0 && i < n; i++) {
    cleanup_free char *name = layer_name(v[i].path, !add, h);
    char *next;

    if (name == NULL) {
      r = error_errno(err, "mount `overlay`: lower layer `%s`", v[i].path);
    } else if (add) {
      if (fsconfig(fsfd, FSCONFIG_SET_STRING, v[i].data ? "datadir+" : "lowerdir+", name, 0) < 0) {
        size_t len = strlen(v[i].path);
        /* a long path's end: where the layers of one overlay differ */
        cleanup_free char *what =
            xfmt("%s layer `%s%s`", v[i].data ? "data" : "lower", len > 200 ? "..." : "",
                 v[i].path + (len > 200 ? len - 200 : 0));
        r = fs_error(fsfd, "overlay", what, err);
      }
    } else {
      next = xfmt("%s%s%s", joined, i == 0 ? "" : v[i].data && !v[i - 1].data ? "::" : ":", name);
      free(joined);
      joined = next;
    }
  }
  if (r == 0 && !add) {
    if (strlen(joined) > FS_VALUE_MAX)
      r = error_set(err, E2BIG,
                    "mount `overlay`: %zu lower layers: more than one option holds on this "
                    "kernel (Linux 6.8 takes each by itself)",
                    n);
    else if (fsconfig(fsfd, FSCONFIG_SET_STRING, "lowerdir", joined, 0) < 0)
      r = fs_error(fsfd, "overlay", "option `lowerdir`", err);
  }
  for (size_t i = 0; i < n; i++)
    free(v[i].path);
  free(v);
  free(joined);
  return r;
}

/* An overlay option whose value fsconfig() would refuse for its length (see
 * FS_VALUE_MAX): 1 done, 0 not such an option, -1 failed. */
static int overlay_long(int fsfd, const char *type, const char *key, const char *value,
                        struct mnt_held *h, struct error *err)
{
  struct layer one;
  cleanup_free char *name = NULL;

  if (strlen(value) <= FS_VALUE_MAX || !streq(type, "overlay"))
    return 0;
  if (streq(key, "lowerdir"))
    return overlay_lowerdir(fsfd, value, h, err) < 0 ? -1 : 1;
  if (!streq(key, "upperdir") && !streq(key, "workdir"))
    return 0;
  if (split_layers(value, false, &one, 1) != 1)
    return 0;
  name = layer_name(one.path, true, h);
  if (name == NULL)
    error_errno(err, "mount `overlay`: %s `%s`", key, one.path);
  free(one.path);
  if (name == NULL)
    return -1;
  if (fsconfig(fsfd, FSCONFIG_SET_STRING, key, name, 0) < 0) {
    char what[64];

    snprintf(what, sizeof what, "option `%s`", key);
    return fs_error(fsfd, type, what, err);
  }
  return 1;
}

int mnt_fs_set(int fsfd, const char *type, const char *key, const char *value, struct mnt_held *h,
               struct error *err)
{
  int r = overlay_long(fsfd, type, key, value, h, err);

  if (r != 0)
    return r < 0 ? -1 : 0;
  if (fsconfig(fsfd, FSCONFIG_SET_STRING, key, value, 0) < 0) {
    char what[256];

    snprintf(what, sizeof what, "option `%s=%.*s`%s", key, 160, value,
             strlen(value) > FS_VALUE_MAX ? " (longer than the kernel takes)" : "");
    return fs_error(fsfd, type, what, err);
  }
  return 0;
}

/* mount(2)'s superblock flag words that fsconfig() has no generic key for.
 * A file system that takes one as its own option (ext4's acl) gets it; one
 * that refuses it decides the flag itself (tmpfs), as mount(2), which runc
 * uses, passes them as MS_* flags such a file system ignores: skipped then,
 * with the kernel's message read (mount-sb-flag-words). */
static bool sb_flag_word_skipped(int fsfd, const char *w)
{
  static const char *const words[] = {"acl", "noacl", "iversion", "noiversion", "silent", "loud"};
  char buf[512];

  if (errno != EINVAL)
    return false;
  for (size_t i = 0; i < ARRAY_SIZE(words); i++) {
    if (strcmp(w, words[i]) == 0) {
      for (int n = 0; n < 16 && read(fsfd, buf, sizeof buf) > 0; n++)
        ;
      return true;
    }
  }
  return false;
}

/* Split "a=1,b,c=\"x,y\"" into fsconfig() calls. */
static int fs_set_data(int fsfd, const char *type, const char *data, struct mnt_held *h,
                       struct error *err)
{
  cleanup_free char *copy = xstrdup(data);
  char *p = copy;

  while (*p != '\0') {
    char *start = p, *eq;
    bool quoted = false;
    int r;

    for (; *p != '\0' && (quoted || *p != ','); p++)
      if (*p == '"')
        quoted = !quoted;
    if (*p == ',')
      *p++ = '\0';
    if (*start == '\0')
      continue;
    eq = strchr(start, '=');
    if (eq != NULL) {
      *eq = '\0';
      r = mnt_fs_set(fsfd, type, start, unquote(eq + 1), h, err);
      *eq = '=';
      if (r < 0)
        return -1;
    } else if (fsconfig(fsfd, FSCONFIG_SET_FLAG, start, NULL, 0) < 0 &&
               !sb_flag_word_skipped(fsfd, start)) {
      char what[256];

      snprintf(what, sizeof what, "option `%.*s`", 200, start);
      return fs_error(fsfd, type, what, err);
    }
  }
  return 0;
}

int mnt_new_fs(const char *type, const char *source, const char *data, const char *const *sb_words,
               size_t n_sb, uint64_t attr, struct error *err)
{
  cleanup_close int fsfd = fsopen(type, FSOPEN_CLOEXEC);
  struct mnt_held h = {0};
  int mfd, r;

  if (fsfd < 0)
    return error_errno(err, "mount `%s`: fsopen", type);
  if (source != NULL && *source != '\0' &&
      fsconfig(fsfd, FSCONFIG_SET_STRING, "source", source, 0) < 0)
    return fs_error(fsfd, type, "source", err);
  r = data != NULL ? fs_set_data(fsfd, type, data, &h, err) : 0;
  for (size_t i = 0; r == 0 && i < n_sb; i++)
    if (fsconfig(fsfd, FSCONFIG_SET_FLAG, sb_words[i], NULL, 0) < 0 &&
        !sb_flag_word_skipped(fsfd, sb_words[i]))
      r = fs_error(fsfd, type, sb_words[i], err);
  if (r == 0 && fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    r = fs_error(fsfd, type, "create", err);
  mnt_held_close(&h); /* the file system holds its layers now */
  if (r < 0)
    return -1;
  mfd = fsmount(fsfd, FSMOUNT_CLOEXEC, (unsigned int)attr);
  if (mfd < 0)
    return error_errno(err, "mount `%s`: fsmount", type);
  return mfd;
}

int mnt_setattr(int mntfd, bool recursive, uint64_t set, uint64_t clr, uint64_t propagation,
                const char *dest, struct error *err)
{
  struct mount_attr a = {.attr_set = set, .attr_clr = clr, .propagation = propagation};
  unsigned int flags = AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0);

  if (set == 0 && clr == 0 && propagation == 0)
    return 0;
  if (mount_setattr(mntfd, "", flags, &a, sizeof a) < 0)
    return error_errno(err, "set mount attributes of `%s`", dest);
  return 0;
}

int mnt_set_idmap(int mntfd, int usernsfd, bool recursive, const char *dest, struct error *err)
{
  struct mount_attr a = {.attr_set = MOUNT_ATTR_IDMAP, .userns_fd = (uint64_t)usernsfd};
  unsigned int flags = AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0);

  if (mount_setattr(mntfd, "", flags, &a, sizeof a) < 0)
    return error_errno(err, "idmapped mount on `%s`%s", dest,
                       errno == EINVAL ? " (the source's file system cannot be idmapped here)"
                                       : "");
  return 0;
}

int mnt_set_propagation(int mntfd, unsigned long propagation, const char *dest, struct error *err)
{
  unsigned long type = propagation & (MS_SHARED | MS_SLAVE | MS_PRIVATE | MS_UNBINDABLE);

  if (type == 0)
    return 0;
  if (mnt_setattr(mntfd, (propagation & MS_REC) != 0, 0, 0, type, dest, err) < 0)
    return error_prefix(err, "set propagation");
  return 0;
}

int mnt_attach(int mntfd, int targetfd, const char *what, const char *dest, struct error *err)
{
  if (move_mount(mntfd, "", targetfd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
    return error_errno(err, "mount `%s` on `%s`", what, dest);
  return 0;
}

int mnt_bind_fd(int srcfd, int targetfd, bool ro, const char *what, const char *dest,
                struct error *err)
{
  cleanup_close int tree = mnt_clone(srcfd, "", false, what, err);

  if (tree < 0)
    return -1;
  if (ro && mnt_setattr(tree, false, MOUNT_ATTR_RDONLY, 0, 0, dest, err) < 0)
    return -1;
  return mnt_attach(tree, targetfd, what, dest, err);
}

/* The agent profile's protected paths of a bind workspace (profile.h): bound
 * onto themselves read-only, so an agent cannot rewrite e.g. a git hook that
 * would run later on the host.  only_existing: a missing path is skipped
 * (nothing is created in the host directory); else it is created first.  An
 * existing path of the other kind (a file where a dir was listed) is
 * protected as what it is. */
/* Is the directory target the one dest is in, or one above it (a name such
 * as `.envrc -> .`)?  Bound read-only it would cover the workspace itself. */
static bool holds_parent(int rootfd, const char *dest, int target)
{
  cleanup_free char *dir = xstrdup(dest);
  char *slash = strrchr(dir, '/');
  struct error e = {0};
  struct stat t, r, p;
  int fd;

  if (fstat(target, &t) < 0 || !S_ISDIR(t.st_mode) || fstat(rootfd, &r) < 0 || slash == NULL)
    return false;
  *slash = '\0';
  fd = safe_walk(rootfd, *dir ? dir : "/", SAFE_OPEN, false, &e);
  for (int i = 0; fd >= 0 && i < 256; i++) {
    int up;
    if (fstat(fd, &p) < 0)
      break;
    if (p.st_dev == t.st_dev && p.st_ino == t.st_ino) {
      close(fd);
      return true;
    }
    if (p.st_dev == r.st_dev && p.st_ino == r.st_ino)
      break;
    up = openat(fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
    close(fd);
    fd = up;
  }
  if (fd >= 0)
    close(fd);
  return false;
}

/* target (an O_PATH fd) bound read-only onto itself. */
static int bind_ro(int target, const char *dest, struct error *err)
{
  cleanup_close int tree = mnt_clone(target, "", false, dest, err);

  if (tree < 0)
    return -1;
  if (mnt_setattr(tree, false,
                  MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, 0,
                  0, dest, err) < 0)
    return -1;
  return mnt_attach(tree, target, dest, dest, err);
}

int mnt_protect(int rootfd, const char *dest, bool is_dir, bool only_existing, struct error *err)
{
  enum safe_create how = only_existing ? SAFE_OPEN : is_dir ? SAFE_MKDIR : SAFE_MKFILE;
  cleanup_close int target = -1, named = -1;
  struct error e = {0};
  struct stat st;

  /* bind mode lists ~70 names of which a workspace has a few: one lookup
   * in the root (openat2, where safe_walk takes a call per component) tells
   * an absent one; whatever it finds is walked and bound as before */
  if (only_existing) {
    int fd = safe_openat(rootfd, dest, O_PATH | O_NOFOLLOW, 0, &e);
    if (fd < 0 && (e.code == ENOENT || e.code == ENOTDIR))
      return 0;
    if (fd >= 0)
      close(fd);
    error_clear(&e);
  }
  target = safe_walk(rootfd, dest, how, true, &e);
  if (target < 0 && only_existing && (e.code == ENOENT || e.code == ENOTDIR))
    return 0;
  if (target < 0) {
    *err = e;
    return error_prefix(err, "protect `%s`", dest);
  }
  /* an existing name that is a symlink: what it names (in the root) is
   * bound read-only too, so that a write through either name fails, unless
   * it holds the name's own directory (`.envrc -> .`); a link that leads
   * nowhere (dangling, a loop) keeps only the bind of the link, which stops
   * its replacement */
  if (only_existing && fstat(target, &st) == 0 && S_ISLNK(st.st_mode)) {
    struct error e2 = {0};
    named = safe_walk(rootfd, dest, SAFE_OPEN, false, &e2);
    if (named >= 0 && !holds_parent(rootfd, dest, named) && bind_ro(named, dest, err) < 0)
      return -1;
  }
  return bind_ro(target, dest, err);
}
