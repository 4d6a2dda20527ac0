/* image.c - the size-limited upper layer of an overlay workspace.
 *
 * With a size limit (workspace.size) the upper and work dirs live in an
 * ext4 file system in a sparse image, <dir>/upper.img, of exactly that size.
 * The agent's writes fill that file system and fail with ENOSPC (inodes
 * too) when it is full; the host disk holding the data directory gains at
 * most the image's size, whatever the agent writes.  The image is a regular
 * file of the data directory, so the work survives a reboot.
 *
 * Nothing is ever mounted in the host's mount namespace.  A process that
 * needs the layer (create, the monitor, `agentrt workspace ...`) binds the
 * image to a loop device (autoclear) and mounts it as a *detached* mount
 * (fsopen/fsmount): no mount namespace holds it, it goes with the last fd.
 * The container's init attaches that mount at <dir>/fs inside its own mount
 * namespace before the overlay is mounted (upperdir=<dir>/fs/upper); the
 * pivot then drops it from the container's tree while the overlay keeps it.
 *
 * One image, one loop device: two devices on one image would be two ext4
 * instances writing the same blocks.  The device bound last is recorded in
 * <dir>/loop and reused when it is still bound to the same inode; finding
 * or binding it happens under an flock of the image, so two commands at
 * once share one device (and one superblock).
 *
 * A new image is a sparse copy of a template, <store>/.workspaces/
 * .upper2-<bytes>.img, made once per size with mkfs.ext4 (lazy inode tables
 * and journal, no reserved blocks, no resize inode): the copy costs well
 * under a millisecond, mkfs about 25 ms (bench/workspace.sh).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/failpoint.h"
#include "common/util.h"
#include "os/early_thread.h"
#include "os/fsutil.h"
#include "os/loopdev.h"
#include "workspace/internal.h"

extern char **environ;

struct ws_fs {
  int mfd; /* the detached ext4 mount, or -1 */
  /* workspace_mount_start: a new image's device and mount, made by a thread
   * while create does the rest; ws_fs_mount takes them (early_take) */
  struct {
    pthread_t thread;
    bool started; /* the thread runs or has not been joined */
    bool armed;   /* started once: its results wait for early_take */
    int dfd;      /* the workspace's dir, ours */
    int lockfd;   /* the image's lock, held until the device is recorded */
    int lfd, nr;  /* the bound loop device */
    int mfd;
    int stage, errnum; /* where it failed, for early_error */
    /* ws_image_plan: the image is still to be copied from the template
     * (tmplfd, tmpl, size) first, by the thread or ws_fs_mount */
    bool make;
    int tmplfd;
    char *tmpl;
    uint64_t size;
  } early;
};

#define IMAGE_NAME "upper.img"
#define LOOP_NAME "loop"
#define FS_DIR "fs"

struct ws_fs *ws_fs_new(void)
{
  struct ws_fs *fs = xmalloc0(sizeof *fs);

  fs->mfd = -1;
  fs->early.tmplfd = -1;
  return fs;
}

static void early_drop(struct ws_fs *fs);

void ws_fs_free(struct ws_fs *fs)
{
  if (fs == NULL)
    return;
  early_drop(fs);
  if (fs->early.tmplfd >= 0)
    close(fs->early.tmplfd);
  free(fs->early.tmpl);
  if (fs->mfd >= 0)
    close(fs->mfd);
  free(fs);
}

void workspace_unmount(struct workspace *w)
{
  if (w->fs != NULL)
    early_drop(w->fs);
  if (w->fs != NULL && w->fs->mfd >= 0) {
    close(w->fs->mfd);
    w->fs->mfd = -1;
  }
}

int workspace_image_lock_fd(const struct workspace *w)
{
  cleanup_free char *p = NULL;

  if (w->upper_in != NULL)
    return -1;
  p = xfmt("%s/%s", w->dir, IMAGE_NAME);
  return open(p, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
}

int workspace_image_settle(const char *dir, int timeout_ms)
{
  cleanup_free char *p = xfmt("%s/%s", dir, IMAGE_NAME);
  cleanup_close int fd = open(p, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

  if (fd < 0)
    return 0;
  /* an unmount takes a few milliseconds; polled, not blocked on: a lock
   * held for good (an unmount stuck in the kernel) must not hang delete */
  for (int waited = 0; flock(fd, LOCK_EX | LOCK_NB) < 0; waited++) {
    if (errno != EWOULDBLOCK && errno != EINTR)
      return 0;
    if (waited >= timeout_ms) {
      errno = ETIMEDOUT;
      return -1;
    }
    nanosleep(&(struct timespec){.tv_nsec = 1000 * 1000}, NULL);
  }
  return 0; /* the lock goes with fd */
}

bool workspace_has_image(const struct workspace *w)
{
  cleanup_free char *p = NULL;
  struct stat st;

  if (w->fs != NULL && w->fs->early.make) /* ws_image_plan: on its way */
    return true;
  p = xfmt("%s/%s", w->dir, IMAGE_NAME);
  return lstat(p, &st) == 0 && S_ISREG(st.st_mode);
}

uint64_t workspace_image_size(const struct workspace *w)
{
  cleanup_free char *p = xfmt("%s/%s", w->dir, IMAGE_NAME);
  struct stat st;

  return lstat(p, &st) == 0 && S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0;
}

uint64_t ws_image_disk_bytes(const struct workspace *w, uint64_t *ret_apparent)
{
  cleanup_free char *p = xfmt("%s/%s", w->dir, IMAGE_NAME);
  struct stat st;

  *ret_apparent = 0;
  if (lstat(p, &st) < 0 || !S_ISREG(st.st_mode))
    return 0;
  *ret_apparent = (uint64_t)st.st_size;
  return (uint64_t)st.st_blocks * 512;
}

char *workspace_fs_path(const struct workspace *w)
{
  return xfmt("%s/%s", w->dir, FS_DIR);
}

static int read_loop_nr(int dfd)
{
  char *data = NULL;
  size_t len = 0;
  int nr = -1;
  struct error e = {0};

  if (read_file_at(dfd, LOOP_NAME, 64, &data, &len, &e) == 0) {
    if (len > 0 && data[len - 1] == '\n')
      data[len - 1] = '\0';
    if (parse_int(data, &nr) < 0 || nr < 0)
      nr = -1;
  }
  free(data);
  return nr;
}

/* fsopen/fsmount of the ext4 on src in system calls only (early_mount's
 * thread runs it): the mount, or -1 with errno and *stage (EXT4_*). */
enum { EXT4_OPEN, EXT4_CONFIGURE, EXT4_CREATE, EXT4_MOUNT };

/* early_mount's stages: its image, its lock, then LOOPDEV_STAGE_* and EXT4_* */
enum {
  EARLY_COPY = 1,
  EARLY_IMAGE,
  EARLY_NOT_REG,
  EARLY_LOCK,
  EARLY_LOOP = 10,
  EARLY_EXT4 = 20,
  EARLY_DONE = 30
};

static int ext4_fsmount(const char *src, int *stage)
{
  int fsfd = (int)syscall(SYS_fsopen, "ext4", FSOPEN_CLOEXEC), mfd = -1, e;

  *stage = EXT4_OPEN;
  if (fsfd < 0)
    return -1;
  *stage = EXT4_CONFIGURE;
  if (syscall(SYS_fsconfig, fsfd, FSCONFIG_SET_STRING, "source", src, 0) < 0 ||
      syscall(SYS_fsconfig, fsfd, FSCONFIG_SET_FLAG, "discard", NULL, 0) < 0 ||
      syscall(SYS_fsconfig, fsfd, FSCONFIG_SET_FLAG, "noinit_itable", NULL, 0) < 0 ||
      syscall(SYS_fsconfig, fsfd, FSCONFIG_SET_STRING, "errors", "remount-ro", 0) < 0)
    goto out;
  *stage = EXT4_CREATE;
  if (syscall(SYS_fsconfig, fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    goto out;
  *stage = EXT4_MOUNT;
  mfd = (int)syscall(SYS_fsmount, fsfd, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
out:
  e = errno;
  close(fsfd);
  errno = e;
  return mfd;
}

static int ext4_error(const struct workspace *w, const char *src, int stage, int errnum,
                      struct error *err)
{
  errno = errnum;
  switch (stage) {
  case EXT4_OPEN:
    return error_errno(err, "workspace `%s`: fsopen ext4", w->id);
  case EXT4_CONFIGURE:
    return error_errno(err, "workspace `%s`: configure the ext4 of `%s`", w->id, src);
  case EXT4_CREATE:
    return error_errno(err, "workspace `%s`: mount the image `%s/%s` (on `%s`)", w->id, w->dir,
                       IMAGE_NAME, src);
  default:
    return error_errno(err, "workspace `%s`: fsmount the image", w->id);
  }
}

/* The ext4 on /dev/loop<nr>: the superblock already there when another
 * process has it mounted, a new one otherwise. */
static int mount_ext4(const struct workspace *w, int nr, struct error *err)
{
  char src[LOOPDEV_PATH_MAX];
  int stage, mfd = ext4_fsmount(loopdev_path(src, nr), &stage);

  return mfd >= 0 ? mfd : ext4_error(w, src, stage, errno, err);
}

/* --- a new image's mount, beside create's other work ----------------------
 *
 * A new workspace's image is needed when the init's mounts reach it
 * (late_upper in create): its copy from the template (whose fsync is ~1 ms
 * on a disk), its loop device and its ext4 superblock (~1-2 ms of the
 * kernel's, a journal thread started) would be waited for there.
 * workspace_mount_start has a thread make them while create does the rest
 * (its cgroup, the monitor's fork).  The thread only makes system calls
 * (os/early_thread.h).  Its descriptors are close-on-exec, and the monitor
 * (glibc's fork) closes what it inherits before anything else (the lock's
 * copy with it).  It is joined (workspace_mount_join) before the init's
 * clone, which is no fork of glibc's: a thread the init's glibc still
 * counted made its setgroups wait forever (workspace-size.bats,
 * workspace-mount-thread-at-clone). */

static int copy_sparse(int in, int out, uint64_t size);

#define IMAGE_TMP ".upper.img.tmp"

/* The image of dfd's workspace, a copy of the template tmplfd of size bytes,
 * in system calls only: a temporary name, synced before its rename (a crash
 * never leaves a half-copied image under its name).  -1 with errno. */
static int make_image(int dfd, int tmplfd, uint64_t size)
{
  int out = openat(dfd, IMAGE_TMP, O_RDWR | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600), e;

  if (out < 0)
    return -1;
  if (copy_sparse(tmplfd, out, size) < 0 || fsync(out) < 0 ||
      renameat(dfd, IMAGE_TMP, dfd, IMAGE_NAME) < 0) {
    e = errno;
    close(out);
    unlinkat(dfd, IMAGE_TMP, 0);
    errno = e;
    return -1;
  }
  close(out);
  return 0;
}

static void *early_mount(void *arg)
{
  struct ws_fs *fs = arg;
  struct stat st;
  char src[LOOPDEV_PATH_MAX];
  int imgfd, stage;

  /* build-fp: a thread still at work when create reaches the init's
   * clone, one whose copy and one whose mount fails (faults.bats) */
  if (FAILPOINT_FAILS("workspace-mount-early-slow"))
    nanosleep(&(struct timespec){.tv_nsec = 400 * 1000 * 1000}, NULL);
  fs->early.stage = EARLY_COPY;
  imgfd = -1;
  if (fs->early.make && FAILPOINT_FAILS("workspace-copy-fails")) {
    errno = ENOSPC;
    goto fail;
  }
  if (fs->early.make && make_image(fs->early.dfd, fs->early.tmplfd, fs->early.size) < 0)
    goto fail;
  fs->early.stage = EARLY_IMAGE;
  imgfd = openat(fs->early.dfd, IMAGE_NAME, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
  if (imgfd < 0 || fstat(imgfd, &st) < 0)
    goto fail;
  if (!S_ISREG(st.st_mode)) {
    fs->early.stage = EARLY_NOT_REG;
    errno = EINVAL;
    goto fail;
  }
  /* the lock on an open of its own, as ws_fs_mount's */
  fs->early.stage = EARLY_LOCK;
  fs->early.lockfd = openat(fs->early.dfd, IMAGE_NAME, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fs->early.lockfd < 0 || flock(fs->early.lockfd, LOCK_EX) < 0)
    goto fail;
  if (loopdev_attach_raw(imgfd, &fs->early.nr, &fs->early.lfd, &stage) < 0) {
    fs->early.stage = EARLY_LOOP + stage;
    goto fail;
  }
  fs->early.mfd = ext4_fsmount(loopdev_path(src, fs->early.nr), &stage);
  if (fs->early.mfd >= 0 && FAILPOINT_FAILS("workspace-mount-early-fails")) {
    close(fs->early.mfd);
    fs->early.mfd = -1;
    stage = EXT4_CREATE;
    errno = EIO;
  }
  if (fs->early.mfd < 0) {
    fs->early.stage = EARLY_EXT4 + stage;
    goto fail;
  }
  fs->early.stage = EARLY_DONE;
  close(imgfd);
  return NULL;
fail:
  fs->early.errnum = errno;
  if (imgfd >= 0)
    close(imgfd);
  return NULL;
}

static void early_join(struct ws_fs *fs)
{
  if (fs->early.started) {
    pthread_join(fs->early.thread, NULL);
    fs->early.started = false;
  }
}

void workspace_mount_join(struct workspace *w)
{
  if (w != NULL && w->fs != NULL)
    early_join(w->fs);
}

void workspace_mount_start(struct workspace *w)
{
  struct ws_fs *fs = w->fs;
  int r;

  if (fs == NULL || fs->mfd >= 0 || fs->early.armed || FAILPOINT_FAILS("workspace-mount-early"))
    return;
  fs->early.armed = true;
  fs->early.lockfd = fs->early.lfd = fs->early.mfd = fs->early.nr = -1;
  fs->early.dfd = open(w->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fs->early.dfd < 0 || (r = early_thread_start(&fs->early.thread, early_mount, fs)) < 0) {
    early_drop(fs); /* ws_fs_mount does it all */
    return;
  }
  fs->early.started = r == 1; /* 0: an ASan build's, done (os/early_thread.h) */
}

/* What the thread made, unused: gone (the device detaches with its last
 * descriptor, nothing being mounted from it). */
static void early_drop(struct ws_fs *fs)
{
  early_join(fs);
  if (!fs->early.armed)
    return;
  if (fs->early.mfd >= 0)
    close(fs->early.mfd);
  if (fs->early.lfd >= 0)
    close(fs->early.lfd);
  if (fs->early.lockfd >= 0)
    close(fs->early.lockfd);
  if (fs->early.dfd >= 0)
    close(fs->early.dfd);
  fs->early.mfd = fs->early.lfd = fs->early.lockfd = fs->early.dfd = -1;
  fs->early.armed = false;
}

/* ws_fs_mount with a thread started: its mount, and the device recorded in
 * <dir>/loop under the lock it still holds; or its failure as the same
 * one-line error ws_fs_mount would have given. */
/* The one-line error of a failed step of making the image's mount (early_mount's
 * stages, errno errnum), whichever process or thread made it. */
static int image_error(const struct workspace *w, int stage, int errnum, int nr, struct error *err)
{
  char src[LOOPDEV_PATH_MAX];
  const char *why = NULL;

  errno = errnum;
  if (stage == EARLY_COPY)
    return error_errno(err, "workspace `%s`: copy the image `%s`", w->id, w->fs->early.tmpl);
  if (stage == EARLY_IMAGE)
    return error_errno(err, "workspace `%s`: open the image `%s/%s`", w->id, w->dir, IMAGE_NAME);
  if (stage == EARLY_NOT_REG)
    return error_set(err, EINVAL, "workspace `%s`: `%s/%s` is not a regular file", w->id, w->dir,
                     IMAGE_NAME);
  if (stage == EARLY_LOCK)
    return error_errno(err, "workspace `%s`: lock the image", w->id);
  if (stage >= EARLY_EXT4)
    return ext4_error(w, loopdev_path(src, nr), stage - EARLY_EXT4, errnum, err);
  if (!loopdev_available(&why))
    return error_set(err, ENODEV,
                     "workspace `%s`: its upper layer is in the image `%s/%s` and this host has "
                     "no loop devices (%s)",
                     w->id, w->dir, IMAGE_NAME, why);
  loopdev_attach_error(stage - EARLY_LOOP, nr, errnum, err);
  return error_prefix(err, "workspace `%s`", w->id);
}

/* The device bound last, for the next process that needs the image (read_loop_nr).
 * Written under the image's lock, so no reader sees it half-written: on a
 * full data directory, where the new file of an atomic replace finds no
 * room, the record there is rewritten in place (its block is allocated:
 * a few bytes need no more), or `diff` and `commit` of work kept there
 * failed on the record alone (datadir-full-review). */
static int record_loop(const struct workspace *w, int dfd, int nr, struct error *err)
{
  cleanup_free char *line = xfmt("%d\n", nr);
  cleanup_close int fd = -1;
  struct error e = {0};
  struct stat st;
  size_t len = strlen(line);

  if (write_file_atomic_at(dfd, LOOP_NAME, line, len, &e) == 0)
    return 0;
  if ((e.code == ENOSPC || e.code == EDQUOT) &&
      (fd = openat(dfd, LOOP_NAME, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)) >= 0 &&
      fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
      pwrite(fd, line, len, 0) == (ssize_t)len && ftruncate(fd, (off_t)len) == 0)
    return 0;
  *err = e;
  return error_prefix(err, "workspace `%s`", w->id);
}

/* ws_fs_mount with a thread started: its mount, and the device recorded in
 * <dir>/loop under the lock it still holds; or its failure as the same
 * one-line error ws_fs_mount would have given. */
static int early_take(const struct workspace *w, struct error *err)
{
  struct ws_fs *fs = w->fs;
  int r = -1;

  early_join(fs);
  if (fs->early.stage > EARLY_COPY)
    fs->early.make = false; /* the image is there */
  if (fs->early.stage != EARLY_DONE) {
    image_error(w, fs->early.stage, fs->early.errnum, fs->early.nr, err);
  } else if (record_loop(w, fs->early.dfd, fs->early.nr, err) == 0) {
    fs->mfd = fs->early.mfd;
    fs->early.mfd = -1;
    r = 0;
  }
  early_drop(fs);
  return r;
}

int ws_fs_mount(const struct workspace *w, struct error *err)
{
  cleanup_close int dfd = -1, imgfd = -1, lfd = -1, lockfd = -1;
  struct stat st;
  int nr, stage;

  if (w->fs->mfd >= 0)
    return 0;
  if (w->fs->early.armed)
    return early_take(w, err);
  dfd = open(w->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dfd < 0)
    return error_errno(err, "workspace `%s`: open `%s`", w->id, w->dir);
  if (w->fs->early.make) { /* ws_image_plan without a thread */
    if (make_image(dfd, w->fs->early.tmplfd, w->fs->early.size) < 0)
      return image_error(w, EARLY_COPY, errno, -1, err);
    w->fs->early.make = false;
  }
  imgfd = openat(dfd, IMAGE_NAME, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
  if (imgfd < 0 || fstat(imgfd, &st) < 0)
    return image_error(w, EARLY_IMAGE, errno, -1, err);
  if (!S_ISREG(st.st_mode))
    return image_error(w, EARLY_NOT_REG, EINVAL, -1, err);
  /* the lock on an open of its own: the loop device keeps the file it was
   * given open for as long as it is bound (and a lock on it with it) */
  lockfd = openat(dfd, IMAGE_NAME, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (lockfd < 0 || flock(lockfd, LOCK_EX) < 0)
    return image_error(w, EARLY_LOCK, errno, -1, err);
  nr = read_loop_nr(dfd);
  lfd = loopdev_open_bound(nr, &st);
  if (lfd < 0) {
    if (loopdev_attach_raw(imgfd, &nr, &lfd, &stage) < 0)
      return image_error(w, EARLY_LOOP + stage, errno, nr, err);
    if (record_loop(w, dfd, nr, err) < 0)
      return -1;
  }
  w->fs->mfd = mount_ext4(w, nr, err);
  return w->fs->mfd < 0 ? -1 : 0;
}

int workspace_fs_open(struct workspace *w, struct error *err)
{
  return workspace_has_image(w) ? ws_fs_mount(w, err) : 0;
}

int workspace_fs_fd(const struct workspace *w)
{
  return w->fs != NULL ? w->fs->mfd : -1;
}

/* --- a sub-agent's upper in its ancestor's image --------------------------
 *
 * A sub-agent's workspace gets no image of its own: its create attaches the
 * nearest ancestor's (one per container), whose upper is the top of its
 * lower stack.  Its own upper and work dirs are made in that image's file
 * system too, <image>/sub/<child id>/, so the ancestor's workspace.size
 * bounds what the whole family writes (a plain upper in the data directory
 * let an agent write past its limit by starting a child: subagents.bats,
 * subagent-size-bypass).  Overlayfs wants upper and work on one file system
 * and no layer inside another: the ancestor's upper/ and sub/<id>/ are
 * siblings.  Nothing in a container sees the image's root: each init
 * attaches it below the data directory, which its pivot drops. */

#define FAMILY_FILE "upper-in"
#define FAMILY_DIR "sub"

int ws_family_read(struct workspace *w, struct error *err)
{
  cleanup_free char *path = xfmt("%s/%s", w->dir, FAMILY_FILE);
  char *data = NULL;
  size_t len = 0;
  struct error e = {0};

  if (read_file_at(AT_FDCWD, path, 256, &data, &len, &e) < 0)
    return e.code == ENOENT ? 0 : (*err = e, error_prefix(err, "workspace `%s`", w->id));
  if (len > 0 && data[len - 1] == '\n')
    data[len - 1] = '\0';
  if (!ws_valid_name(data)) {
    free(data);
    return error_set(err, EINVAL, "workspace `%s`: `%s`: not a workspace id", w->id, path);
  }
  free(w->upper_in);
  w->upper_in = data;
  return 0;
}

int ws_family_record(struct workspace *w, const char *owner, struct error *err)
{
  cleanup_close int dfd = open(w->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  cleanup_free char *line = xfmt("%s\n", owner);

  if (dfd < 0 || write_file_atomic_at(dfd, FAMILY_FILE, line, strlen(line), err) < 0)
    return dfd < 0 ? error_errno(err, "workspace `%s`: open `%s`", w->id, w->dir)
                   : error_prefix(err, "workspace `%s`", w->id);
  free(w->upper_in);
  w->upper_in = xstrdup(owner);
  return 0;
}

/* <store>/.workspaces of w */
static char *ws_base_of(const struct workspace *w)
{
  return xstrndup(w->dir, (size_t)(strrchr(w->dir, '/') - w->dir));
}

int ws_family_load(const struct workspace *w, struct workspace **ret, struct error *err)
{
  cleanup_free char *base = ws_base_of(w);
  cleanup_free char *store = xstrndup(base, (size_t)(strrchr(base, '/') - base));
  struct workspace *aw = NULL;
  struct error e = {0};

  *ret = NULL;
  if (workspace_load(store, w->upper_in, &aw, &e) < 0 || !workspace_has_image(aw)) {
    workspace_free(aw);
    return error_set(err, ENOENT,
                     "workspace `%s`: its upper layer was in the image of workspace `%s`, which "
                     "is gone",
                     w->id, w->upper_in);
  }
  if (ws_fs_mount(aw, err) < 0) {
    workspace_free(aw);
    return error_prefix(err, "workspace `%s`", w->id);
  }
  *ret = aw;
  return 0;
}

/* The image's root of w->upper_in's workspace (mounted here), or -1 with
 * err; ENOENT: that workspace or its image is gone (purged, discarded). */
static int family_image_root(const struct workspace *w, struct error *err)
{
  struct workspace *aw = NULL;
  int fd;

  if (ws_family_load(w, &aw, err) < 0)
    return -1;
  /* a descriptor inside the detached mount keeps it when aw's goes */
  fd = openat(aw->fs->mfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    error_errno(err, "workspace `%s`: open the image of workspace `%s`", w->id, w->upper_in);
  workspace_free(aw);
  return fd;
}

/* <image>/sub/<id>: made when make, else opened. */
static int family_base(const struct workspace *w, bool make, struct error *err)
{
  cleanup_close int rfd = family_image_root(w, err), sfd = -1;
  int fd;

  if (rfd < 0)
    return -1;
  if (make && mkdirat(rfd, FAMILY_DIR, 0700) < 0 && errno != EEXIST)
    return error_errno(err, "workspace `%s`: mkdir `%s` in the image of workspace `%s`", w->id,
                       FAMILY_DIR, w->upper_in);
  sfd = ws_open_dir(rfd, FAMILY_DIR);
  if (sfd >= 0 && make && mkdirat(sfd, w->id, 0700) < 0 && errno != EEXIST)
    return error_errno(err, "workspace `%s`: mkdir its upper layer in the image of workspace `%s`",
                       w->id, w->upper_in);
  fd = sfd < 0 ? -1 : ws_open_dir(sfd, w->id);
  if (fd < 0)
    return error_errno(err, "workspace `%s`: its upper layer in the image of workspace `%s`", w->id,
                       w->upper_in);
  return fd;
}

int ws_upper_base_make(const struct workspace *w, struct error *err)
{
  return w->upper_in != NULL ? family_base(w, true, err) : ws_upper_base(w, err);
}

int ws_family_remove(const struct workspace *w, struct error *err)
{
  struct error e = {0};
  cleanup_close int rfd = -1, sfd = -1;

  if (w->upper_in == NULL)
    return 0;
  rfd = family_image_root(w, &e);
  if (rfd < 0 && e.code == ENOENT)
    return 0; /* it went with the image */
  if (rfd < 0) {
    *err = e;
    return -1;
  }
  sfd = ws_open_dir(rfd, FAMILY_DIR);
  if (sfd < 0)
    return errno == ENOENT ? 0 : error_errno(err, "workspace `%s`: open `%s`", w->id, FAMILY_DIR);
  if (ws_rm_tree(sfd, w->id) < 0)
    return error_errno(err,
                       "workspace `%s`: remove its upper layer from the image of workspace `%s`",
                       w->id, w->upper_in);
  return 0;
}

/* Does <image>/sub/<id>/upper hold the changes of a workspace of id that
 * names w's image (upper-in)?  A directory left of a purged record is no
 * one's. */
static bool family_member_kept(const struct workspace *w, int sfd, const char *id)
{
  cleanup_free char *base = ws_base_of(w);
  cleanup_free char *store = xstrndup(base, (size_t)(strrchr(base, '/') - base));
  cleanup_close int cfd = -1, ufd = -1;
  struct workspace *cw = NULL;
  struct error e = {0};
  bool ours;

  if (!ws_valid_name(id) || workspace_load(store, id, &cw, &e) < 0)
    return false;
  ours = cw->upper_in != NULL && streq(cw->upper_in, w->id);
  workspace_free(cw);
  if (!ours || (cfd = ws_open_dir(sfd, id)) < 0 || (ufd = ws_open_dir(cfd, "upper")) < 0)
    return false;
  return fs_dir_has_entries(ufd);
}

int ws_family_kept(struct workspace *w, char ***ret, struct error *err)
{
  cleanup_close int sfd = -1;
  cleanup_strv char **names = NULL;
  size_t n = 0;

  *ret = NULL;
  if (!workspace_has_image(w))
    return 0;
  if (ws_fs_mount(w, err) < 0)
    return -1;
  sfd = ws_open_dir(w->fs->mfd, FAMILY_DIR);
  if (sfd < 0)
    return errno == ENOENT ? 0 : error_errno(err, "workspace `%s`: open `%s`", w->id, FAMILY_DIR);
  if (ws_list_dir(sfd, &names, &n) < 0)
    return error_errno(err, "workspace `%s`: read `%s`", w->id, FAMILY_DIR);
  for (size_t i = 0; i < n; i++)
    if (family_member_kept(w, sfd, names[i]))
      strv_push(ret, names[i]);
  return 0;
}

char *ws_upper_base_path(const struct workspace *w)
{
  if (w->upper_in != NULL) {
    cleanup_free char *base = ws_base_of(w);
    return xfmt("%s/%s/%s/%s/%s", base, w->upper_in, FS_DIR, FAMILY_DIR, w->id);
  }
  return workspace_has_image(w) ? xfmt("%s/%s", w->dir, FS_DIR) : xstrdup(w->dir);
}

int ws_upper_base(const struct workspace *w, struct error *err)
{
  int fd;

  if (w->upper_in != NULL)
    return family_base(w, false, err);
  if (!workspace_has_image(w)) {
    fd = open(w->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
      return error_errno(err, "workspace `%s`: open `%s`", w->id, w->dir);
    return fd;
  }
  if (ws_fs_mount(w, err) < 0)
    return -1;
  fd = openat(w->fs->mfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return error_errno(err, "workspace `%s`: open the image's root", w->id);
  return fd;
}

/* --- new images ----------------------------------------------------------- */

static const char *find_mkfs(void)
{
  static const char *const cand[] = {"/usr/sbin/mkfs.ext4", "/sbin/mkfs.ext4", "/usr/sbin/mke2fs",
                                     "/sbin/mke2fs"};

  for (size_t i = 0; i < ARRAY_SIZE(cand); i++)
    if (access(cand[i], X_OK) == 0)
      return cand[i];
  return NULL;
}

bool ws_image_supported(const char **why)
{
  if (!loopdev_available(why))
    return false;
  if (find_mkfs() == NULL) {
    *why = "no mkfs.ext4 (e2fsprogs)";
    return false;
  }
  return true;
}

bool workspace_size_limit_supported(const char **why)
{
  return ws_image_supported(why);
}

static int run_mkfs(const char *mkfs, const char *path, struct error *err)
{
  /* lazy inode tables and journal: a sparse template of ~150 KiB whatever
   * the size; no blocks reserved for root; an inode per 8 KiB (trees of
   * small files run out of space, not inodes, first); no blocks reserved
   * for growing it online (resize_inode: 512 KiB of the 1g template's 664,
   * copied into every new workspace, and nothing here resizes an image) */
  char *argv[] = {(char *)mkfs,
                  "-q",
                  "-F",
                  "-t",
                  "ext4",
                  "-O",
                  "^resize_inode",
                  "-m",
                  "0",
                  "-i",
                  "8192",
                  "-E",
                  "lazy_itable_init=1,lazy_journal_init=1,nodiscard",
                  (char *)path,
                  NULL};
  posix_spawn_file_actions_t fa;
  pid_t pid;
  int status = 0, r;

  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  r = posix_spawn(&pid, mkfs, &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (r != 0)
    return error_set(err, r, "run `%s`", mkfs);
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return error_set(err, 0, "`%s` on `%s` failed (status %d)", mkfs, path,
                     WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
  return 0;
}

/* Every new workspace starts as a copy of the template and the kernel mounts
 * it: one this user does not own, or others may write, or that is no regular
 * file, is not used (workspace-size.bats, workspace-template-poisoned). */
static bool template_ours(const struct stat *st)
{
  return S_ISREG(st->st_mode) && st->st_uid == geteuid() &&
         (st->st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

/* 1: path is a template to use; 0: there is none (a bad one is removed). */
static int template_usable(const char *path)
{
  struct stat st;

  if (lstat(path, &st) < 0)
    return 0;
  if (template_ours(&st))
    return 1;
  unlink(path);
  return 0;
}

/* <base>/.upper2-<size>.img, made once (under <base>/.upper.lock); the
 * previous layout's .upper-<size>.img (with resize_inode) goes then. */
static char *ensure_template(const char *base, uint64_t size, struct error *err)
{
  char *tmpl = xfmt("%s/.upper2-%" PRIu64 ".img", base, size);
  cleanup_free char *old = xfmt("%s/.upper-%" PRIu64 ".img", base, size);
  cleanup_free char *lock = xfmt("%s/.upper.lock", base);
  cleanup_free char *tmp = NULL;
  cleanup_close int lfd = -1, fd = -1;
  const char *mkfs = find_mkfs();

  struct stat st;

  if (lstat(tmpl, &st) == 0 && template_ours(&st))
    return tmpl;
  if (mkfs == NULL) {
    error_set(err, ENOENT, "no mkfs.ext4 (e2fsprogs) to make the workspace image");
    goto fail;
  }
  lfd = open(lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (lfd < 0 || flock(lfd, LOCK_EX) < 0) {
    error_errno(err, "lock `%s`", lock);
    goto fail;
  }
  if (template_usable(tmpl))
    return tmpl;
  tmp = xfmt("%s.%d", tmpl, (int)getpid());
  fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0 || ftruncate(fd, (off_t)size) < 0) {
    error_errno(err, "create `%s`", tmp);
    goto fail_tmp;
  }
  if (run_mkfs(mkfs, tmp, err) < 0)
    goto fail_tmp;
  if (fsync(fd) < 0 || rename(tmp, tmpl) < 0) {
    error_errno(err, "create `%s`", tmpl);
    goto fail_tmp;
  }
  unlink(old);
  return tmpl;
fail_tmp:
  unlink(tmp);
fail:
  free(tmpl);
  return NULL;
}

/* Copy only the data of in (FICLONE when the file system shares blocks). */
static int copy_sparse(int in, int out, uint64_t size)
{
  off_t pos = 0;

  if (ioctl(out, FICLONE, in) == 0)
    return 0;
  if (ftruncate(out, (off_t)size) < 0)
    return -1;
  for (;;) {
    off_t data = lseek(in, pos, SEEK_DATA), hole;
    if (data < 0)
      return errno == ENXIO ? 0 : -1;
    hole = lseek(in, data, SEEK_HOLE);
    if (hole < 0)
      return -1;
    while (data < hole) {
      off_t o_in = data, o_out = data;
      ssize_t n = copy_file_range(in, &o_in, out, &o_out, (size_t)(hole - data), 0);
      if (n <= 0)
        return n == 0 ? (errno = EIO, -1) : -1;
      data += n;
    }
    pos = hole;
  }
}

/* mkdir dir/name (0700), there already being fine */
static int mkdir_in(const char *dir, const char *name)
{
  cleanup_close int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

  if (dfd < 0)
    return -1;
  return mkdirat(dfd, name, 0700) < 0 && errno != EEXIST ? -1 : 0;
}

/* The template for size and the workspace's fs/ mount point; the template
 * open in *ret_fd, its path in *ret_tmpl. */
static int image_prepare(const struct workspace *w, uint64_t size, int *ret_fd, char **ret_tmpl,
                         struct error *err)
{
  /* w->dir is <store>/.workspaces/<id>: the templates are its siblings */
  cleanup_free char *base = xstrndup(w->dir, (size_t)(strrchr(w->dir, '/') - w->dir));
  char *tmpl = ensure_template(base, size, err);
  struct stat st;
  int in;

  if (tmpl == NULL)
    return error_prefix(err, "workspace `%s`", w->id);
  in = open(tmpl, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (in < 0 || fstat(in, &st) < 0 || !template_ours(&st)) {
    if (in >= 0) { /* replaced since ensure_template looked */
      close(in);
      errno = EPERM;
    }
    error_errno(err, "workspace `%s`: open `%s`", w->id, tmpl);
    free(tmpl);
    return -1;
  }
  if (mkdir_in(w->dir, FS_DIR) < 0) {
    error_errno(err, "workspace `%s`: mkdir `%s/%s`", w->id, w->dir, FS_DIR);
    close(in);
    free(tmpl);
    return -1;
  }
  *ret_fd = in;
  *ret_tmpl = tmpl;
  return 0;
}

int ws_image_create(const struct workspace *w, uint64_t size, struct error *err)
{
  cleanup_free char *tmpl = NULL;
  cleanup_close int in = -1, dfd = -1;

  if (image_prepare(w, size, &in, &tmpl, err) < 0)
    return -1;
  dfd = open(w->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dfd < 0 || make_image(dfd, in, size) < 0)
    return error_errno(err, "workspace `%s`: copy the image `%s`", w->id, tmpl);
  return 0;
}

int ws_image_plan(struct workspace *w, uint64_t size, struct error *err)
{
  struct ws_fs *fs = w->fs;

  if (image_prepare(w, size, &fs->early.tmplfd, &fs->early.tmpl, err) < 0)
    return -1;
  fs->early.size = size;
  fs->early.make = true;
  return 0;
}

int ws_image_remove(struct workspace *w, struct error *err)
{
  cleanup_free char *p = xfmt("%s/%s", w->dir, IMAGE_NAME);

  workspace_unmount(w);
  if (unlink(p) < 0 && errno != ENOENT)
    return error_errno(err, "workspace `%s`: remove the image", w->id);
  return 0;
}
