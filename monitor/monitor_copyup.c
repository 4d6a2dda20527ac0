/* monitor_copyup.c - is a file in an overlay's upper layer the copy-up of
 * the lower file of its name, or another file put there?
 *
 * Both reach upper the same way (a rename from the overlay's work dir), and
 * the agent can give another file the lower one's type, mode, size and
 * mtime (`printf evil >t; touch -r h t; rm h; ln t h`): fixed escape,
 * relinked-host-file, where such a file was taken for a copy-up and left no
 * record while commit wrote its bytes over the host's.  What tells them
 * apart:
 *   - the overlay writes the lower inode's file handle into a copy-up's
 *     `trusted.overlay.origin` (`user.overlay.origin` with userxattr), which
 *     the agent cannot set through the overlay: a handle that is not the
 *     lower file's, or no origin where the overlay writes one (a lower file
 *     of one link on a file system that gives handles, once this
 *     workspace's copy-ups have shown origins), is another file;
 *   - the bytes otherwise (an origin left empty, as a user's sandbox's
 *     overlay does; a lower file of several links, whose copy-up has none; a
 *     file system without handles), and also when the origin is the lower
 *     file's: that copy-up may have been moved away, written (recorded
 *     under its other name) and linked back (`mv h k; printf evil >k; touch
 *     -r ref k; ln k h`).  A symlink's target; a regular file's content up
 *     to COPYUP_CMP_MAX, read within a budget of the monitor's (COPYUP_BURST,
 *     then COPYUP_RATE a second, in 64 KiB tokens: a loop of `rm h; ln t h`
 *     makes it read two files each time).  A larger file, or one past the
 *     budget, is COPYUP_UNVERIFIED: not compared, neither the same nor
 *     changed (before, one larger with the lower file's origin was taken for
 *     the copy-up it may not be: relinked-large-copyup; one past the budget
 *     for changed, a "modify" of every honest copy-up of a busy workspace:
 *     copyup-budget-false-modify).
 * Only asked when the metadata matched. */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "common/token_bucket.h"
#include "common/util.h"
#include "monitor/monitor_internal.h"

#define COPYUP_CMP_MAX (64LL << 20) /* bytes compared of a file */
#define COPYUP_TOKEN 65536          /* bytes a token of the budget reads */
#define COPYUP_BURST 4096           /* tokens: 256 MiB at once */
#define COPYUP_RATE 512             /* then 32 MiB a second */
#define OVL_FB_HEAD 21              /* struct ovl_fb: version, magic, len, flags, type, uuid */
#define OVL_FB_MAGIC 0xfb

static int open_entry(int dir, const char *rel, int flags)
{
  struct open_how how = {.flags = (uint64_t)flags | O_NOFOLLOW | O_CLOEXEC,
                         .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
                                    RESOLVE_NO_XDEV};

  return (int)syscall(SYS_openat2, dir, rel, &how, sizeof how);
}

/* fd's inode is st's, and a regular file or symlink as st says */
static bool same_inode(int fd, const struct stat *st)
{
  struct stat now;

  return fstat(fd, &now) == 0 && now.st_dev == st->st_dev && now.st_ino == st->st_ino &&
         (now.st_mode & S_IFMT) == (st->st_mode & S_IFMT);
}

/* The origin the overlay wrote on the upper file: 1 the lower file's, 0
 * another's, -1 none (or unreadable), 2 one that names no file (a mount
 * without uuid, a user's sandbox's: the overlay leaves it empty). */
static int origin_matches(int upfd, int lofd)
{
  static const char *const names[] = {"trusted.overlay.origin", "user.overlay.origin"};
  uint8_t fb[OVL_FB_HEAD + MAX_HANDLE_SZ];
  struct {
    struct file_handle h;
    uint8_t bytes[MAX_HANDLE_SZ];
  } fh;
  ssize_t n = -1;
  int mnt;

  for (size_t i = 0; i < 2 && n < 0; i++)
    n = fgetxattr(upfd, names[i], fb, sizeof fb);
  if (n <= 0)
    return n == 0 ? 2 : -1;
  if (n < OVL_FB_HEAD || fb[1] != OVL_FB_MAGIC || fb[2] != n)
    return 0; /* not the overlay's */
  fh.h.handle_bytes = MAX_HANDLE_SZ;
  if (name_to_handle_at(lofd, "", &fh.h, &mnt, AT_EMPTY_PATH) < 0)
    return 2;
  return fh.h.handle_type == fb[4] && fh.h.handle_bytes == (size_t)(n - OVL_FB_HEAD) &&
         memcmp(fh.bytes, fb + OVL_FB_HEAD, fh.h.handle_bytes) == 0;
}

/* Would the overlay have written an origin on the copy-up of lofd? */
static bool origin_expected(int lofd, const struct stat *lo)
{
  struct {
    struct file_handle h;
    uint8_t bytes[MAX_HANDLE_SZ];
  } fh;
  int mnt;

  fh.h.handle_bytes = MAX_HANDLE_SZ;
  return lo->st_nlink == 1 && name_to_handle_at(lofd, "", &fh.h, &mnt, AT_EMPTY_PATH) == 0;
}

/* May the monitor read size bytes of each of two files now? */
static bool budget_take(off_t size)
{
  static struct token_bucket budget;
  static bool ready;
  int64_t now = monitor_now_ms(), n = size / COPYUP_TOKEN + 1;

  if (!ready) {
    token_bucket_init(&budget, COPYUP_BURST, COPYUP_RATE, now);
    ready = true;
  }
  if (token_bucket_wait_ms(&budget, n, now) > 0)
    return false;
  while (n-- > 0)
    token_bucket_take(&budget, now);
  return true;
}

static enum copyup_verdict same_bytes(int a, int b, off_t size)
{
  cleanup_free char *x = NULL, *y = NULL;
  size_t chunk = 65536;
  off_t off = 0;

  if (size > COPYUP_CMP_MAX || !budget_take(size))
    return COPYUP_UNVERIFIED;
  x = xmalloc(chunk);
  y = xmalloc(chunk);
  while (off < size) {
    size_t want = size - off < (off_t)chunk ? (size_t)(size - off) : chunk;
    ssize_t n = pread(a, x, want, off), m = pread(b, y, want, off);
    if (n <= 0 || m != n || memcmp(x, y, (size_t)n) != 0)
      return COPYUP_CHANGED;
    off += n;
  }
  return COPYUP_SAME;
}

static bool same_target(int upfd, int lofd)
{
  char a[4096], b[4096];
  ssize_t n = readlinkat(upfd, "", a, sizeof a), m = readlinkat(lofd, "", b, sizeof b);

  return n >= 0 && n == m && memcmp(a, b, (size_t)n) == 0;
}

/* A file opened to read its bytes: not blocking (a FIFO put there since),
 * its atime left alone where we may. */
static int open_bytes(int dir, const char *rel)
{
  int fd = open_entry(dir, rel, O_RDONLY | O_NONBLOCK | O_NOATIME);

  if (fd < 0 && errno == EPERM)
    fd = open_entry(dir, rel, O_RDONLY | O_NONBLOCK);
  return fd;
}

enum copyup_verdict monitor_copyup_check(int updir, const char *urel, const struct stat *up,
                                         int lodir, const char *lrel, const struct stat *lo,
                                         bool *origins)
{
  cleanup_close int upfd = -1, lofd = -1;
  int r;

  if (!S_ISREG(up->st_mode) && !S_ISLNK(up->st_mode))
    return COPYUP_SAME;
  if (S_ISLNK(up->st_mode)) { /* (its xattrs are not read through an O_PATH fd) */
    upfd = open_entry(updir, urel, O_PATH);
    lofd = open_entry(lodir, lrel, O_PATH);
    if (upfd < 0 || !same_inode(upfd, up))
      return COPYUP_SAME; /* gone or replaced since: its own events say what came */
    return lofd >= 0 && same_inode(lofd, lo) && same_target(upfd, lofd) ? COPYUP_SAME
                                                                        : COPYUP_CHANGED;
  }
  upfd = open_bytes(updir, urel);
  lofd = open_bytes(lodir, lrel);
  if (upfd < 0 || !same_inode(upfd, up))
    return COPYUP_SAME;
  if (lofd < 0 || !same_inode(lofd, lo))
    return COPYUP_CHANGED;
  r = origin_matches(upfd, lofd);
  if (r >= 0)
    *origins = true;
  if (r == 0 || (r < 0 && *origins && origin_expected(lofd, lo)))
    return COPYUP_CHANGED;
  return same_bytes(upfd, lofd, up->st_size);
}
