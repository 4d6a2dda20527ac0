/* monitor_files.c - the monitor's file source: fanotify on the workspace.
 *
 * The workspace is a mount inside the container's mount namespace.  The
 * monitor reaches it through the init's /proc/<pid>/root (resolved with
 * RESOLVE_IN_ROOT, before the container's process runs).  Events carry the
 * directory's file handle and the entry's name (FAN_REPORT_DFID_NAME; a
 * rename one event with both names, FAN_RENAME); the directory is opened by
 * handle and its path read back, then cached (outside ones too, so unrelated
 * activity on a shared filesystem costs one lookup per directory).
 *
 * Which filesystem is marked (FAN_MARK_FILESYSTEM: a mount mark cannot
 * report directory entry events):
 *   tmpfs, bind  the workspace's own; for a bind, events are kept only when
 *                their directory lies under the workspace.
 *   overlay      overlayfs cannot be marked so (its file handles do not
 *                decode), so the one holding the upper layer
 *                (<root>/.workspaces/<id>/upper), and events are kept when
 *                their directory lies under upper.  Every write of the
 *                container through the overlay lands there, from its
 *                process and from `exec` alike, at any depth.  What the
 *                overlay does on its own is mapped back to what the agent
 *                did when the path's record is written (classify): an entry
 *                that appears in upper while the lower layers have it is a
 *                copy-up (no record unless it was then modified), one that
 *                appears from the overlay's work dir over a whiteout is a
 *                create, a whiteout left at a path is a delete.
 * With workspace.size the upper is an ext4 image of its own (workspace/
 * image.c): its filesystem is the workspace's alone.  A plain upper shares
 * the store's filesystem, and the mark sees the host's activity and other
 * containers'.  The first event from a directory outside the tree
 * adds an evictable ignore mark on it (ignore_dir), after which the kernel
 * drops that directory's events for this group: unrelated activity costs
 * one event per directory, not one per file.
 * Without privilege (a user's sandbox: no file system mark, no
 * open_by_handle_at, and the init's root cannot be opened) an overlay's upper
 * layer is watched directory by directory instead (per_dir): an inode mark on
 * each directory of upper, its handle and path kept in a table that events
 * are looked up in.  A directory that appears (made, or moved in from the
 * overlay's work dir by a copy-up) is marked and read at once, and what it
 * already holds is noted as created, so nothing written before its mark is
 * missed; a directory renamed inside moves its table entries.  The kernel
 * reports no pid to an unprivileged group.  A directory that cannot be
 * marked (the user's marks used up, or made unreadable before its mark) is an
 * "audit_error" naming it, and the file list is incomplete; so is one removed
 * before it was marked (gone_unwatched).
 * A source that cannot be set up is an "audit_error" and a warning at
 * create; the summary then calls the file list incomplete.
 *
 * Coalescing: changes to one path within MONITOR_COALESCE_MS become one
 * "file" record listing its operations in order of first occurrence (a
 * rename: moved_from with "to" on the old path, moved_to with "from" on the
 * new one), so a busy build does not flood the trail.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <linux/fs.h>
#include <sys/fanotify.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "common/failpoint.h"
#include "common/util.h"
#include "monitor/monitor_internal.h"
#include "os/pid.h"
#include "os/procfs.h"
#include "workspace/workspace.h"

#define FILES_MAX_PENDING 256
#define FILES_CACHE 1024          /* directories by handle (a power of two) */
#define FILES_READ_MAX 256        /* reads per wake-up */
#define FILES_IGNORE_MAX 8192     /* outside directories ignored in the kernel */
#define FILES_IGNORE_LIMITED 1024 /* ... when the marks count against root's */
#define FILES_IGNORE_AGAIN 64     /* events of an ignored directory: mark it again */
#define FILES_DIRS_MAX 65536      /* per_dir: directories marked at once */
#define FILES_UNWATCHED_MAX 8     /* per_dir: directories not marked, each a record */
#define FILES_PATH_MAX 8192       /* a directory's path below the tree, in a record */
#define FILES_WALK_MAX 64         /* ... names read from parents past PATH_MAX */
#define FILES_SCAN_MAX 65536      /* ... entries read from each parent */
#define FILES_EVICTED 65536       /* directories of the tree pushed out of the cache, kept */

#ifndef FAN_RENAME
#define FAN_RENAME 0x10000000
#endif
#ifndef FAN_EVENT_INFO_TYPE_OLD_DFID_NAME
#define FAN_EVENT_INFO_TYPE_OLD_DFID_NAME 10
#define FAN_EVENT_INFO_TYPE_NEW_DFID_NAME 12
#endif

/* attrib: mode, owner, times or xattrs of a file (chmod +x, setuid, a
 * security xattr): `workspace commit` applies those too.  Not kept for
 * directories: overlayfs sets its own xattrs on upper directories.
 * close_write: a file opened for writing was closed with no write or create
 * seen: it was changed through a shared mapping (fanotify sees no page
 * writes), or not at all; kept only then, a write says more.
 * unverified: a copy-up of the lower file's type, mode, size and mtime whose
 * bytes the monitor did not compare (over 64 MiB, or past its read budget:
 * monitor_copyup.c); kept only without a modify. */
#define FILES_UNVERIFIED (1ULL << 48) /* no fanotify event's bit */
enum {
  OP_CREATE,
  OP_MODIFY,
  OP_DELETE,
  OP_MOVED_FROM,
  OP_MOVED_TO,
  OP_ATTRIB,
  OP_CLOSE_WRITE,
  OP_UNVERIFIED,
  OP_N
};
static const char *const op_names[OP_N] = {"create",   "modify", "delete",      "moved_from",
                                           "moved_to", "attrib", "close_write", "unverified"};
static const uint64_t op_masks[OP_N] = {FAN_CREATE,      FAN_MODIFY,      FAN_DELETE,
                                        FAN_MOVED_FROM,  FAN_MOVED_TO,    FAN_ATTRIB,
                                        FAN_CLOSE_WRITE, FILES_UNVERIFIED};

#define FILES_ADOPTED 16
#define FILES_INODES 128 /* files remembered by inode */
#define FILES_LINKS 4    /* other names of a hard link in a record */

struct pending_file {
  char *path;
  char *from, *to; /* the other name of a rename (moved_to, moved_from) */
  uint8_t ops[OP_N];
  uint8_t n_ops;
  bool dir;
  bool came_in, went_out; /* moved in from / out to outside the watched tree */
  pid_t pid;
  int64_t first_ms;
  char at[40];
};

struct dir_entry {
  uint8_t key[MAX_HANDLE_SZ + 8];
  size_t klen;
  bool used;
  char *rel;     /* NULL: outside the watched tree, or too deep */
  bool too_long; /* too deep to record: its events are a loss */
  uint16_t hits; /* outside: events seen since its ignore mark (evicted?) */
};

/* per_dir: one marked directory of upper */
struct dir_mark {
  uint8_t key[MAX_HANDLE_SZ + 8];
  size_t klen;
  char *rel; /* "" for upper itself, "/a/b" below */
};

struct files {
  int fan, ws_fd, base_fd, fd_dir;
  int img_fd;           /* own_fs: the image's file, for its lock (monitor_files_release) */
  char *ws_path;        /* inside the container, e.g. /workspace */
  char **protected;     /* the review's list: never coalesced (emit) */
  char base_link[4096]; /* the watched tree as our /proc/self/fd shows it */
  size_t base_link_len;
  size_t keep_len;         /* never ignored: base_link[0, keep_len) and below,
                              its ancestors (overlay: the workspace's directory,
                              with the work dir) */
  unsigned n_ignores;      /* ignore marks added */
  unsigned max_ignores;    /* FILES_IGNORE_MAX, less without FAN_UNLIMITED_MARKS */
  uint64_t ignore_mask;    /* the events of mark()'s mask */
  bool overlay;            /* base_fd is the overlay's upper layer */
  struct ws_layers layers; /* overlay: upper first, then the lower ones */
  bool have_rename;        /* FAN_RENAME (else MOVED_FROM/TO, one name each) */
  bool changed;            /* an event (or a lost one) on the marked filesystem */
  bool per_dir;            /* inode marks on upper's directories (no privilege) */
  bool origins;            /* a copy-up in upper showed the overlay's origin xattr */
  struct dir_mark *dirs;   /* per_dir: the marked directories */
  size_t n_dirs, cap_dirs;
  uint64_t dir_mask;  /* per_dir: each directory's mark */
  uint32_t *buckets;  /* per_dir: index + 1 of a chain's first entry */
  uint32_t *next;     /* per_dir: index + 1 of the chain's next entry */
  uint32_t *pbuckets; /* per_dir: the same by path (live entries only) */
  uint32_t *pnext;
  size_t n_live;        /* per_dir: entries with a path (the others are gone) */
  unsigned n_unwatched; /* per_dir: directories that could not be marked */
  /* per_dir: directories removed before they were marked (gone_unwatched),
   * not yet in a record: how many, the first one's path */
  uint64_t n_gone;
  char *gone_first;
  int64_t last_gone_dir_ms;
  struct pending_file pend[FILES_MAX_PENDING];
  size_t n;
  struct dir_entry cache[FILES_CACHE];
  int64_t last_loss_ms;
  int64_t last_long_ms;
  bool too_long;     /* an event's directory was deeper than FILES_PATH_MAX */
  bool own_fs;       /* the marked file system is the workspace's alone (its image) */
  bool image_shared; /* a sub-agent's: its upper is in an ancestor's image (not own_fs) */
  bool may_share;    /* own_fs, and sub-agents may put their upper layers in it */
  bool shared_seen;  /* ... and one has (<image>/sub is there) */
  bool gone_dir;     /* an event's directory was gone, not named (own_fs: a loss) */
  bool have_targets; /* events give a directory's own handle (FAN_REPORT_TARGET_FID) */
  /* not own_fs: the handles (their fingerprints, key_print; a set, open
   * addressing, 0 empty) of directories of the tree whose cache slot another
   * took, and that were neither seen removed nor cached again since, up to
   * FILES_EVICTED at once.  A handle that no longer opens is of a directory
   * of the workspace when it is one of these (or may be, once more were
   * kept than that: evicted_over), not of the host's. */
  uint64_t *evicted;
  size_t n_evicted, cap_evicted;
  bool evicted_over;
  int64_t last_gone_ms;
  /* files made without a name and linked since (adopt_tmpfile): the kernel's
   * name `#<inode>` (as a record's path) -> the name they got, the latest
   * FILES_ADOPTED, for the events that still come under the old one (the
   * close of the descriptor that wrote it) */
  struct {
    char *tmp, *name;
  } adopted[FILES_ADOPTED];
  unsigned next_adopted;
  /* the latest files seen in upper by inode (records and copy-ups alike),
   * to name the other names of a hard link (hardlink-alias) */
  struct {
    dev_t dev;
    ino_t ino;
    char *path;
  } inodes[FILES_INODES];
  unsigned next_inode;
};

static void cache_clear(struct files *f)
{
  for (size_t i = 0; i < FILES_CACHE; i++) {
    free(f->cache[i].rel);
    f->cache[i] = (struct dir_entry){0};
  }
}

static bool fd_path(struct files *f, int fd, char *buf, size_t size, size_t *ret_len)
{
  char name[16];
  ssize_t n;

  snprintf(name, sizeof name, "%d", fd);
  n = readlinkat(f->fd_dir, name, buf, size - 1);
  if (n <= 0)
    return false;
  buf[n] = '\0';
  *ret_len = (size_t)n;
  return true;
}

static size_t key_slot(const uint8_t *key, size_t klen)
{
  uint32_t h = 2166136261u; /* FNV-1a */

  for (size_t i = 0; i < klen; i++)
    h = (h ^ key[i]) * 16777619u;
  return h & (FILES_CACHE - 1);
}

/* A handle's fingerprint (FNV-1a, 64 bits). */
static uint64_t key_print(const uint8_t *key, size_t klen)
{
  uint64_t h = 14695981039346656037ull;

  for (size_t i = 0; i < klen; i++)
    h = (h ^ key[i]) * 1099511628211ull;
  return h;
}

/* Is path (length len) prefix or below it (a path component boundary)? */
static bool under(const char *path, size_t len, const char *prefix, size_t plen)
{
  return len >= plen && memcmp(path, prefix, plen) == 0 &&
         (path[plen] == '/' || path[plen] == '\0' || plen == 0);
}

/* A directory moved from or to rel: the paths of rel and below it are no
 * longer known (the others are: a directory known by handle and removed
 * before its events are read is still named, cache_made) */
static void cache_forget_under(struct files *f, const char *rel)
{
  size_t len = strlen(rel);

  for (size_t i = 0; i < FILES_CACHE; i++) {
    struct dir_entry *e = &f->cache[i];
    if (e->used && e->rel != NULL && under(e->rel, strlen(e->rel), rel, len)) {
      free(e->rel);
      *e = (struct dir_entry){0};
    }
  }
}

/* A directory outside the tree: the kernel drops its events for this group
 * from now on (an ignore mark for its entries and its children's writes).
 * Evictable: it pins no inode; evicted, the directory's events come again
 * and it is marked again.  Never the tree's ancestors nor, for an overlay,
 * the workspace's own directory (the work dir's entries move into upper).
 * The directory is named through /proc/self/fd: the O_PATH fd itself is
 * refused by fanotify_mark. */
static void ignore_dir(struct files *f, int fd, const char *path, size_t len)
{
  char name[16];

  if (f->n_ignores >= f->max_ignores || under(path, len, f->base_link, f->keep_len) ||
      under(f->base_link, f->base_link_len, path, len))
    return;
  snprintf(name, sizeof name, "%d", fd);
  if (fanotify_mark(f->fan, FAN_MARK_ADD | FAN_MARK_IGNORE_SURV | FAN_MARK_EVICTABLE,
                    f->ignore_mask | FAN_ONDIR | FAN_EVENT_ON_CHILD, f->fd_dir, name) == 0)
    f->n_ignores++;
  else
    f->max_ignores = 0; /* a kernel before 6.0, or the user's marks are used up */
}

/* The name of the directory st in its parent dir (a readdir by inode), or NULL. */
static char *name_in(int dir, const struct stat *st, bool *ret_too_many)
{
  int fd = fcntl(dir, F_DUPFD_CLOEXEC, 3);
  char *name = NULL;
  struct dirent *e;
  size_t seen = 0;
  DIR *d;

  if (fd < 0 || (d = fdopendir(fd)) == NULL) {
    if (fd >= 0)
      close(fd);
    return NULL;
  }
  while (name == NULL && (e = readdir(d)) != NULL) {
    if (++seen > FILES_SCAN_MAX) { /* the agent's directory: the monitor's time is not */
      *ret_too_many = true;
      break;
    }
    if (e->d_ino == st->st_ino && strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
      name = xstrdup(e->d_name);
  }
  closedir(d);
  return name;
}

/* A directory deeper than the kernel names through /proc (its path over
 * PATH_MAX: ENAMETOOLONG): its names are read from each parent in turn up
 * to one the kernel names.  NULL when gone, or when longer than
 * FILES_PATH_MAX, FILES_WALK_MAX names past PATH_MAX or a parent of more than
 * FILES_SCAN_MAX entries (*ret_too_long: a
 * loss; the walk is bounded, the monitor's CPU is not the container's).  Fixed escape,
 * deep-path-unrecorded: a file written 6,000 bytes deep left no record and `verify` said `ok`. */
static char *long_dir_path(struct files *f, int fd, bool *ret_too_long)
{
  cleanup_close int cur = fcntl(fd, F_DUPFD_CLOEXEC, 3);
  cleanup_free char *suffix = xstrdup("");
  char path[4096];
  size_t len;

  for (int steps = 0; cur >= 0; steps++) {
    cleanup_close int parent = openat(cur, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    cleanup_free char *name = NULL;
    struct stat st, pst;
    char *s;

    if (parent < 0 || fstat(cur, &st) < 0 || fstat(parent, &pst) < 0 ||
        (pst.st_dev == st.st_dev && pst.st_ino == st.st_ino) ||
        (name = name_in(parent, &st, ret_too_long)) == NULL)
      return NULL; /* gone, the top of its file system, or a parent too large to read */
    s = xfmt("/%s%s", name, suffix);
    free(suffix);
    suffix = s;
    if (strlen(suffix) > FILES_PATH_MAX || steps >= FILES_WALK_MAX) {
      *ret_too_long = true;
      return NULL;
    }
    close(cur);
    cur = parent;
    parent = -1;
    if (fd_path(f, cur, path, sizeof path, &len) && len < sizeof path - 1)
      return xfmt("%s%s", strcmp(path, "/") == 0 ? "" : path, suffix);
  }
  return NULL;
}

/* Where the handle's directory lies under the watched tree: "" for its
 * top, "/a/b" below; NULL when outside (then ignored), gone, or too deep
 * to record (*ret_too_long). */
static const char *resolve_dir(struct files *f, int fd, bool *ret_too_long)
{
  char path[4096];
  cleanup_free char *deep = NULL;
  const char *p = path;
  size_t len = 0;
  bool named = fd_path(f, fd, path, sizeof path, &len);

  if (!named && errno != ENAMETOOLONG)
    return NULL;
  if (!named || len >= sizeof path - 1) {
    if ((deep = long_dir_path(f, fd, ret_too_long)) == NULL)
      return NULL;
    p = deep;
    len = strlen(deep);
  }
  if (!under(p, len, f->base_link, f->base_link_len)) {
    if (deep == NULL)
      ignore_dir(f, fd, path, len);
    return NULL;
  }
  if (len - f->base_link_len > FILES_PATH_MAX) {
    *ret_too_long = true;
    return NULL;
  }
  return xstrdup(strcmp(p + f->base_link_len, "/") == 0 ? "" : p + f->base_link_len);
}

/* A handle's key (its type and bytes), as the tables keep it. */
static size_t handle_key(const struct file_handle *h, uint8_t *key)
{
  memcpy(key, &h->handle_type, sizeof h->handle_type);
  memcpy(key + sizeof h->handle_type, h->f_handle, h->handle_bytes);
  return sizeof h->handle_type + h->handle_bytes;
}

/* ---- per_dir: the table of marked directories, by handle */

static size_t dirs_slot(const struct files *f, const uint8_t *key, size_t klen)
{
  uint32_t h = 2166136261u; /* FNV-1a */

  for (size_t i = 0; i < klen; i++)
    h = (h ^ key[i]) * 16777619u;
  return h & (f->cap_dirs - 1);
}

static struct dir_mark *dirs_find(const struct files *f, const uint8_t *key, size_t klen)
{
  if (f->cap_dirs == 0)
    return NULL;
  for (uint32_t i = f->buckets[dirs_slot(f, key, klen)]; i != 0; i = f->next[i - 1]) {
    struct dir_mark *d = &f->dirs[i - 1];
    if (d->klen == klen && memcmp(d->key, key, klen) == 0)
      return d;
  }
  return NULL;
}

/* The path index: a directory removed is known by its parent and name, not
 * by its handle, and looked up by path instead of by a scan of the table
 * (rm -rf of 30,000 directories was 30,000 scans of 30,000 entries). */
static size_t path_slot(const struct files *f, const char *rel)
{
  uint32_t h = 2166136261u; /* FNV-1a */

  for (const unsigned char *p = (const unsigned char *)rel; *p; p++)
    h = (h ^ *p) * 16777619u;
  return h & (f->cap_dirs - 1);
}

static void path_link(struct files *f, size_t i)
{
  size_t slot = path_slot(f, f->dirs[i].rel);

  f->pnext[i] = f->pbuckets[slot];
  f->pbuckets[slot] = (uint32_t)i + 1;
}

static void path_unlink(struct files *f, size_t i)
{
  uint32_t *pp = &f->pbuckets[path_slot(f, f->dirs[i].rel)];

  while (*pp != 0 && *pp != i + 1)
    pp = &f->pnext[*pp - 1];
  if (*pp != 0)
    *pp = f->pnext[i];
}

/* Give entry d the path rel, or none (NULL: the directory is gone). */
static void dirs_set_rel(struct files *f, struct dir_mark *d, const char *rel)
{
  size_t i = (size_t)(d - f->dirs);

  if (d->rel != NULL) {
    path_unlink(f, i);
    free(d->rel);
    f->n_live--;
  }
  d->rel = rel != NULL ? xstrdup(rel) : NULL;
  if (d->rel != NULL) {
    path_link(f, i);
    f->n_live++;
  }
}

static struct dir_mark *dirs_find_rel(const struct files *f, const char *rel)
{
  if (f->cap_dirs == 0)
    return NULL;
  for (uint32_t i = f->pbuckets[path_slot(f, rel)]; i != 0; i = f->pnext[i - 1]) {
    struct dir_mark *d = &f->dirs[i - 1];
    if (d->rel != NULL && strcmp(d->rel, rel) == 0)
      return d;
  }
  return NULL;
}

/* Rebuild the table with room for twice the live entries (at least 64),
 * dropping the entries of directories that are gone. */
static void dirs_rebuild(struct files *f)
{
  size_t cap = 64, kept = 0;

  while (cap < 2 * (f->n_live + 1))
    cap *= 2;
  for (size_t i = 0; i < f->n_dirs; i++) {
    if (f->dirs[i].rel == NULL)
      continue;
    f->dirs[kept++] = f->dirs[i];
  }
  f->n_dirs = kept;
  f->dirs = xrealloc(f->dirs, cap * sizeof *f->dirs);
  free(f->buckets);
  free(f->next);
  free(f->pbuckets);
  free(f->pnext);
  f->buckets = xmalloc0(cap * sizeof *f->buckets);
  f->next = xmalloc0(cap * sizeof *f->next);
  f->pbuckets = xmalloc0(cap * sizeof *f->pbuckets);
  f->pnext = xmalloc0(cap * sizeof *f->pnext);
  f->cap_dirs = cap;
  for (size_t i = 0; i < f->n_dirs; i++) {
    size_t slot = dirs_slot(f, f->dirs[i].key, f->dirs[i].klen);
    f->next[i] = f->buckets[slot];
    f->buckets[slot] = (uint32_t)i + 1;
    path_link(f, i);
  }
}

static void dirs_put(struct files *f, const uint8_t *key, size_t klen, const char *rel)
{
  struct dir_mark *d = dirs_find(f, key, klen);
  size_t slot;

  if (d != NULL) { /* marked before: moved, or back after it was forgotten */
    dirs_set_rel(f, d, rel);
    return;
  }
  if (f->n_dirs == f->cap_dirs)
    dirs_rebuild(f);
  d = &f->dirs[f->n_dirs];
  *d = (struct dir_mark){.klen = klen};
  memcpy(d->key, key, klen);
  slot = dirs_slot(f, key, klen);
  f->next[f->n_dirs] = f->buckets[slot];
  f->buckets[slot] = (uint32_t)++f->n_dirs;
  dirs_set_rel(f, d, rel);
}

/* A directory moved out of upper: it and what was below it. */
static void dirs_forget(struct files *f, const char *rel)
{
  size_t len = strlen(rel);

  for (size_t i = 0; i < f->n_dirs; i++) {
    struct dir_mark *d = &f->dirs[i];
    if (d->rel != NULL && under(d->rel, strlen(d->rel), rel, len))
      dirs_set_rel(f, d, NULL);
  }
}

/* A directory deleted: it was empty, so only its own entry. */
static void dirs_forget_one(struct files *f, const char *rel)
{
  struct dir_mark *d = dirs_find_rel(f, rel);

  if (d != NULL)
    dirs_set_rel(f, d, NULL);
}

static void dirs_free(struct files *f)
{
  for (size_t i = 0; i < f->n_dirs; i++)
    free(f->dirs[i].rel);
  free(f->dirs);
  free(f->buckets);
  free(f->next);
  free(f->pbuckets);
  free(f->pnext);
  f->dirs = NULL;
  f->buckets = f->next = f->pbuckets = f->pnext = NULL;
  f->n_dirs = f->cap_dirs = f->n_live = 0;
}

/* A handle's fingerprint in the evicted set (never 0: an empty slot). */
static uint64_t evicted_print(const uint8_t *key, size_t klen)
{
  uint64_t print = key_print(key, klen);

  return print != 0 ? print : 1;
}

/* The slot of print in the evicted set, or cap_evicted when not there. */
static size_t evicted_find(const struct files *f, uint64_t print)
{
  size_t mask = f->cap_evicted - 1;

  if (f->cap_evicted == 0)
    return 0;
  for (size_t i = print & mask;; i = (i + 1) & mask) {
    if (f->evicted[i] == print)
      return i;
    if (f->evicted[i] == 0)
      return f->cap_evicted;
  }
}

static void evicted_put(struct files *f, uint64_t print)
{
  size_t mask;

  if (f->evicted_over || (f->cap_evicted > 0 && evicted_find(f, print) < f->cap_evicted))
    return;
  if (2 * (f->n_evicted + 1) > f->cap_evicted) {
    uint64_t *old = f->evicted;
    size_t cap = f->cap_evicted;
    if (f->n_evicted >= FILES_EVICTED) { /* the agent's directories: any may be one now */
      f->evicted_over = true;
      free(f->evicted);
      f->evicted = NULL;
      f->n_evicted = f->cap_evicted = 0;
      return;
    }
    f->cap_evicted = cap ? cap * 2 : 1024;
    f->evicted = xmalloc0(f->cap_evicted * sizeof *f->evicted);
    f->n_evicted = 0;
    for (size_t i = 0; i < cap; i++)
      if (old[i] != 0)
        evicted_put(f, old[i]);
    free(old);
  }
  mask = f->cap_evicted - 1;
  for (size_t i = print & mask;; i = (i + 1) & mask)
    if (f->evicted[i] == 0) {
      f->evicted[i] = print;
      f->n_evicted++;
      return;
    }
}

/* key is cached again, or its directory was removed: no longer an evicted
 * one (a deletion that moves the entries after it back, linear probing) */
static void evicted_drop(struct files *f, const uint8_t *key, size_t klen)
{
  size_t i, mask = f->cap_evicted - 1;

  if (f->n_evicted == 0 || (i = evicted_find(f, evicted_print(key, klen))) >= f->cap_evicted)
    return;
  for (size_t j = (i + 1) & mask; f->evicted[j] != 0; j = (j + 1) & mask) {
    size_t home = f->evicted[j] & mask;
    /* may the entry at j move to the hole at i (its home not in (i, j])? */
    if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
      f->evicted[i] = f->evicted[j];
      i = j;
    }
  }
  f->evicted[i] = 0;
  f->n_evicted--;
}

/* Slot e is about to hold key: a directory of the tree it held is kept
 * among the evicted ones (not own_fs). */
static void evict(struct files *f, const struct dir_entry *e, const uint8_t *key, size_t klen)
{
  if ((f->own_fs && !f->may_share) || !e->used || e->rel == NULL ||
      (e->klen == klen && memcmp(e->key, key, klen) == 0))
    return;
  evicted_put(f, evicted_print(e->key, e->klen));
}

/* Is the marked file system the workspace's alone now?  Its image holds its
 * sub-agents' upper layers too once one has been made (<image>/sub beside
 * upper/, workspace/image.c): a directory of theirs gone before its events
 * were read is not this workspace's loss, and from then on a gone one is
 * judged as on a file system shared with the host (evict keeps the tree's
 * evicted directories for that while sub-agents may come). */
static bool own_fs_now(struct files *f)
{
  struct stat st;

  if (!f->own_fs || f->shared_seen)
    return false;
  if (f->may_share && fstatat(f->layers.fds[0], "../sub", &st, AT_SYMLINK_NOFOLLOW) == 0)
    f->shared_seen = true;
  return !f->shared_seen;
}

/* Was key a directory of the tree pushed out of the cache (or may it have
 * been: more were than are kept)? */
static bool was_evicted(const struct files *f, const uint8_t *key, size_t klen)
{
  return f->evicted_over || evicted_find(f, evicted_print(key, klen)) < f->cap_evicted;
}

/* A directory removed, its handle h given by the event: no event can name
 * it as theirs after its removal (it was empty), so it leaves the cache
 * (not an eviction) and the evicted ones.  Before, every directory of a
 * long build (a compiler's temporary ones) was kept as evicted when its
 * slot went to another, and past 4,096 of them any handle that no longer
 * opened, the host's too, was a loss: fixed, evicted-false-loss. */
static void cache_gone(struct files *f, const struct file_handle *h)
{
  uint8_t key[MAX_HANDLE_SZ + 8];
  size_t klen;
  struct dir_entry *e;

  if (h->handle_bytes > MAX_HANDLE_SZ)
    return;
  klen = handle_key(h, key);
  e = &f->cache[key_slot(key, klen)];
  if (e->used && e->klen == klen && memcmp(e->key, key, klen) == 0) {
    free(e->rel);
    *e = (struct dir_entry){0};
  }
  evicted_drop(f, key, klen);
}

/* The directory of an event, relative to the watched tree, or NULL. */
static const char *dir_rel(struct files *f, struct file_handle *h)
{
  uint8_t key[MAX_HANDLE_SZ + 8];
  size_t klen;
  struct dir_entry *e;
  bool too_long = false, known;
  int fd;

  if (h->handle_bytes > MAX_HANDLE_SZ)
    return NULL;
  klen = handle_key(h, key);
  if (f->per_dir) {
    struct dir_mark *d = dirs_find(f, key, klen);
    return d ? d->rel : NULL;
  }
  e = &f->cache[key_slot(key, klen)];
  known = e->used && e->klen == klen && memcmp(e->key, key, klen) == 0;
  if (known && (e->rel != NULL || ++e->hits < FILES_IGNORE_AGAIN)) {
    f->too_long |= e->too_long;
    return e->rel;
  }
  fd = (int)syscall(SYS_open_by_handle_at, f->base_fd, h, O_PATH | O_CLOEXEC);
  if (fd < 0) {
    /* gone: not cached, the handle is not reused.  On the workspace's own
     * file system one not known to be outside (the overlay's work dir, where
     * it empties a directory of whiteouts before removing it) was a
     * directory of the workspace, whose changes are a loss (those below a
     * directory the monitor saw made are named: cache_made); on a file
     * system shared with the host, one of the workspace's directories pushed
     * out of the cache (evict: gone-dir-changes-plain-upper) */
    f->gone_dir |= errno == ESTALE && !known && (own_fs_now(f) || was_evicted(f, key, klen));
    return NULL;
  }
  evict(f, e, key, klen);
  evicted_drop(f, key, klen);
  free(e->rel);
  e->rel = (char *)resolve_dir(f, fd, &too_long);
  close(fd);
  memcpy(e->key, key, klen);
  e->klen = klen;
  e->used = true;
  e->too_long = too_long;
  e->hits = 0;
  f->too_long |= too_long;
  return e->rel;
}

/* ---- overlay: what the agent did, from what the overlay did in upper */

enum layer_state { L_NONE, L_WHITEOUT, L_PRESENT };

static enum layer_state layer_state(int layer, const char *rel)
{
  struct open_how how = {.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
                         .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
                                    RESOLVE_NO_XDEV};
  cleanup_close int fd = -1;
  struct stat st;

  if (*rel == '\0')
    return L_PRESENT;
  fd = (int)syscall(SYS_openat2, layer, rel, &how, sizeof how);
  if (fd < 0 || fstat(fd, &st) < 0)
    return L_NONE;
  return S_ISCHR(st.st_mode) && st.st_rdev == makedev(0, 0) ? L_WHITEOUT : L_PRESENT;
}

/* Does a lower layer (the snapshots, then the host dir) show rel? */
static bool in_lower(const struct files *f, const char *rel)
{
  for (size_t i = 1; i <= f->layers.n; i++) {
    int fd = i < f->layers.n ? f->layers.fds[i] : f->layers.hostfd;
    enum layer_state s = fd >= 0 ? layer_state(fd, rel) : L_NONE;
    if (s != L_NONE)
      return s == L_PRESENT;
  }
  return false;
}

static bool has_op(const struct pending_file *p, int op)
{
  for (size_t i = 0; i < p->n_ops; i++)
    if (p->ops[i] == op)
      return true;
  return false;
}

static void add_op(struct pending_file *p, int op)
{
  if (!has_op(p, op))
    p->ops[p->n_ops++] = (uint8_t)op;
}

static void drop_op(struct pending_file *p, int op)
{
  size_t k = 0;

  for (size_t i = 0; i < p->n_ops; i++)
    if (p->ops[i] != op)
      p->ops[k++] = p->ops[i];
  p->n_ops = (uint8_t)k;
}

static uint64_t lower_ops(struct files *f, int updir, const char *urel, const struct stat *up,
                          const char *lrel);

/* Rewrite p's operations as the agent's; false: nothing the agent did (a
 * copy-up).  Entries appear in upper by create/link (create, copy-up), by
 * rename from the work dir (copy-up, create over a whiteout: an exchange,
 * so the path also "went out"), and leave it by unlink or by an exchange
 * with a whiteout (delete of a lower file). */
static bool classify(struct files *f, struct pending_file *p)
{
  size_t n = strlen(f->ws_path);
  const char *rel = p->path + (strcmp(f->ws_path, "/") == 0 ? 1 : n + (p->path[n] == '/'));
  /* upper by its path: a rollback puts a new one there (the old one moves) */
  cleanup_close int up = open(f->base_link, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  enum layer_state now = layer_state(up >= 0 ? up : f->layers.fds[0], rel);
  bool appeared = has_op(p, OP_CREATE) || (p->came_in && has_op(p, OP_MOVED_TO) && !p->from);

  if (p->came_in && !p->from)
    drop_op(p, OP_MOVED_TO);
  if (p->went_out && !p->to) {
    drop_op(p, OP_MOVED_FROM);
    if (now != L_PRESENT)
      add_op(p, OP_DELETE);
  }
  if (appeared && !has_op(p, OP_CREATE) && now == L_PRESENT)
    add_op(p, OP_CREATE);
  /* a copy-up, or a new entry moved in over a whiteout of that name (rm,
   * then a file or a symlink made under it: replaced-host-file), told apart
   * by what is there now; and a file of a lower layer closed after a write
   * open with no write seen (its copy-up in an earlier record, or in this
   * one), told from the lower file the same way: an honest program opens
   * for writing and writes nothing (sqlite's O_RDWR, `: >>f`), and a
   * close_write of a copy-up identical to the host's file was listed as a
   * change that workspace diff and commit do not have
   * (opened-unchanged-false-change).  Its close comes when the last
   * reference goes, a shared mapping's too, so what is compared is what any
   * mapping of that open wrote; a later change has events of its own. */
  bool copyup = appeared && !(p->came_in && p->went_out);
  bool closed = now == L_PRESENT && has_op(p, OP_CLOSE_WRITE) && !has_op(p, OP_MODIFY) &&
                !has_op(p, OP_CREATE) && !has_op(p, OP_DELETE);
  if ((copyup || closed) && in_lower(f, rel)) {
    struct stat st;
    uint64_t ops = 0;
    bool compared = false;
    drop_op(p, OP_CREATE);
    if (now == L_PRESENT &&
        fstatat(up >= 0 ? up : f->layers.fds[0], rel, &st, AT_SYMLINK_NOFOLLOW) == 0) {
      ops = lower_ops(f, up >= 0 ? up : f->layers.fds[0], rel, &st, rel);
      compared = S_ISREG(st.st_mode);
    }
    for (int op = 0; op < OP_N; op++)
      if (ops & op_masks[op])
        add_op(p, op);
    if (compared && !(ops & (FAN_CREATE | FAN_MODIFY | FILES_UNVERIFIED)))
      drop_op(p, OP_CLOSE_WRITE); /* the same bytes as the lower file's */
  }
  if (now == L_WHITEOUT) {
    drop_op(p, OP_CREATE);
    if (!p->to)
      add_op(p, OP_DELETE);
  }
  return p->n_ops > 0;
}

/* Would the review hold this change back (workspace/protect.c)? */
static bool is_protected(const struct files *f, const struct pending_file *p)
{
  size_t n = strcmp(f->ws_path, "/") == 0 ? 0 : strlen(f->ws_path);
  enum ws_ftype type = p->dir ? WS_T_DIR : WS_T_FILE;
  const char *const paths[3] = {p->path, p->from, p->to};
  const char *pat;

  for (int i = 0; i < 3; i++) {
    const char *rel = paths[i];
    if (rel == NULL || strncmp(rel, f->ws_path, n) != 0)
      continue;
    rel += n;
    while (*rel == '/')
      rel++;
    if (*rel != '\0' && ws_protect_reason(rel, type, i == 1 || (i == 0 && has_op(p, OP_DELETE)),
                                          f->protected, &pat) != NULL)
      return true;
  }
  return false;
}

/* Does the host directory have p's path (a change of a file that was
 * there: written, deleted, moved away)? */
static bool on_host(const struct files *f, const struct pending_file *p)
{
  size_t n = strlen(f->ws_path);
  const char *rel = p->path + (strcmp(f->ws_path, "/") == 0 ? 1 : n + (p->path[n] == '/'));

  return f->layers.hostfd >= 0 && *rel != '\0' && layer_state(f->layers.hostfd, rel) == L_PRESENT;
}

static bool tmpfile_name(const char *name, unsigned long long *ret_ino);

/* Does the container's path (a record's) name an entry of the watched tree now? */
static bool named_now(const struct files *f, const char *path)
{
  size_t n = strcmp(f->ws_path, "/") == 0 ? 0 : strlen(f->ws_path);
  struct stat st;

  if (strncmp(path, f->ws_path, n) != 0 || path[n] != '/')
    return true; /* not below it: nothing to say */
  return fstatat(f->base_fd, path[n + 1] ? path + n + 1 : ".", &st, AT_SYMLINK_NOFOLLOW) == 0;
}

/* The regular file a record's path names in upper, into st; false when none. */
static bool upper_stat(const struct files *f, const char *path, struct stat *st)
{
  size_t n = strcmp(f->ws_path, "/") == 0 ? 0 : strlen(f->ws_path);

  if (strncmp(path, f->ws_path, n) != 0 || path[n] != '/' || path[n + 1] == '\0')
    return false;
  return fstatat(f->base_fd, path + n + 1, st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st->st_mode);
}

/* The birth time (ns) of the file a record's path names in upper, when it
 * is still st's inode. */
static bool upper_born(const struct files *f, const char *path, const struct stat *st,
                       uint64_t *born)
{
  size_t n = strcmp(f->ws_path, "/") == 0 ? 0 : strlen(f->ws_path);
  struct statx sx;

  if (strncmp(path, f->ws_path, n) != 0 || path[n] != '/' || path[n + 1] == '\0' ||
      statx(f->base_fd, path + n + 1, AT_SYMLINK_NOFOLLOW, STATX_INO | STATX_BTIME, &sx) < 0 ||
      !(sx.stx_mask & STATX_BTIME) || sx.stx_ino != st->st_ino)
    return false;
  *born = (uint64_t)sx.stx_btime.tv_sec * 1000000000u + sx.stx_btime.tv_nsec;
  return *born != 0;
}

static void remember_inode(struct files *f, const struct stat *st, const char *path)
{
  unsigned k;

  for (k = 0; k < FILES_INODES; k++)
    if (f->inodes[k].path != NULL && f->inodes[k].ino == st->st_ino &&
        f->inodes[k].dev == st->st_dev && strcmp(f->inodes[k].path, path) == 0)
      return;
  k = f->next_inode++ % FILES_INODES;
  free(f->inodes[k].path);
  f->inodes[k].dev = st->st_dev;
  f->inodes[k].ino = st->st_ino;
  f->inodes[k].path = xstrdup(path);
}

/* A file of more than one name: how many, and the others the monitor saw
 * (a host file copied up and linked: a write through the link changes it). */
static void add_links(struct jbuf *b, const struct files *f, const struct stat *st,
                      const char *path)
{
  unsigned n = 0;
  uint64_t born;

  jb_key_u64(b, "nlink", (uint64_t)st->st_nlink);
  /* the inode: a later record of it names the others no longer remembered
   * (hardlink-alias-evicted; audit --summary joins them) */
  jb_key_u64(b, "ino", (uint64_t)st->st_ino);
  /* and its birth time: the number of an inode freed goes to another file
   * (inode-reused-links) */
  if (upper_born(f, path, st, &born))
    jb_key_u64(b, "born", born);
  for (unsigned k = 0; k < FILES_INODES && n < FILES_LINKS; k++) {
    const char *other = f->inodes[k].path;
    struct stat now;
    if (other == NULL || f->inodes[k].ino != st->st_ino || f->inodes[k].dev != st->st_dev ||
        strcmp(other, path) == 0 || !upper_stat(f, other, &now) || now.st_ino != st->st_ino)
      continue;
    if (n++ == 0) {
      jb_key(b, "links");
      jb_puts(b, "[");
    } else {
      jb_puts(b, ",");
    }
    jb_quote(b, other, strlen(other));
  }
  if (n > 0)
    jb_puts(b, "]");
}

static void emit(struct monitor *m, struct files *f, struct pending_file *p)
{
  struct jbuf b = {0};
  struct stat st;
  bool linked = false, prot, host;

  if (f->overlay && !p->dir && upper_stat(f, p->path, &st)) {
    remember_inode(f, &st, p->path);
    linked = st.st_nlink > 1;
  }
  if (f->overlay && !classify(f, p))
    goto out;
  /* Under a flood of changes (a loop making files with new names), records
   * beyond a rate are counted, not written one by one, so that they cannot
   * rotate the trail's earlier evidence out (monitor_flood.c).  A change the
   * review would hold back (git's configuration, hooks, the files host
   * tools load) has a bucket of its own, which a flood of other changes
   * cannot empty; before, it was written in full whatever the rate, and
   * 12,000 files made under .vscode/ rotated the trail's earlier evidence
   * out (protected-flood-rotation).  So have changes of the host's own
   * files: 300 files made, then a write to a host file, left it counted,
   * not named (files-flood-coalesces-host-change). */
  prot = is_protected(f, p);
  host = !prot && f->overlay && on_host(f, p);
  if (!monitor_flood_admit_n(m, "file", "",
                             prot   ? "review"
                             : host ? "host"
                                    : "",
                             prot   ? "held back"
                             : host ? "a host file"
                                    : NULL,
                             p->pid, 1))
    goto out;
  /* after classify: a copy-up's create is not the agent's */
  if (has_op(p, OP_CLOSE_WRITE) && (has_op(p, OP_MODIFY) || has_op(p, OP_CREATE)))
    drop_op(p, OP_CLOSE_WRITE);
  if (has_op(p, OP_MODIFY) || has_op(p, OP_CREATE))
    drop_op(p, OP_UNVERIFIED);
  jb_key_str(&b, "path", p->path);
  jb_key(&b, "ops");
  jb_puts(&b, "[");
  for (size_t i = 0; i < p->n_ops; i++) {
    if (i > 0)
      jb_puts(&b, ",");
    jb_quote(&b, op_names[p->ops[i]], strlen(op_names[p->ops[i]]));
  }
  jb_puts(&b, "]");
  if (p->from)
    jb_key_str(&b, "from", p->from);
  if (p->to)
    jb_key_str(&b, "to", p->to);
  if (p->dir)
    jb_key_bool(&b, "dir", true);
  if (linked)
    add_links(&b, f, &st, p->path);
  /* a path the review holds back: audit --summary lists it first */
  if (prot)
    jb_key_bool(&b, "protected", true);
  if (p->pid > 0)
    jb_key_i64(&b, "pid", p->pid);
  {
    /* the kernel's name of a file without one, not linked in the window
     * (or never): said so, so that it is not read as a file of that name */
    const char *base = strrchr(p->path, '/');
    unsigned long long ino;
    if (base && tmpfile_name(base + 1, &ino) && !named_now(f, p->path))
      jb_key_bool(&b, "unnamed", true);
  }
  jb_key_str(&b, "at", p->at);
  monitor_record(m, "file", jb_str(&b));
out:
  jb_free(&b);
  free(p->path);
  free(p->from);
  free(p->to);
}

/* per_dir: the directories removed before they were marked since the last
 * record of them, in one record: the first by its path, the others counted. */
static void gone_record(struct monitor *m, struct files *f)
{
  cleanup_free char *what = NULL, *more = NULL;

  if (f->n_gone == 0)
    return;
  more = f->n_gone > 1 ? xfmt(" and %llu more were", (unsigned long long)(f->n_gone - 1))
                       : xstrdup(" was");
  what = xfmt("file events lost: directory %s%s%s removed before %s could be watched "
              "(what was written in %s, if anything, is not recorded)",
              strcmp(f->ws_path, "/") == 0 ? "" : f->ws_path, f->gone_first, more,
              f->n_gone > 1 ? "they" : "it", f->n_gone > 1 ? "them" : "it");
  monitor_loss(m, "file", what, f->n_gone);
  f->n_gone = 0;
  free(f->gone_first);
  f->gone_first = NULL;
  f->last_gone_dir_ms = monitor_now_ms();
}

/* per_dir: a directory of upper removed (rel) that was never marked: made
 * and removed before the monitor read its create, so that nothing written
 * in it had an event.  Without a mark nothing tells an empty one from one
 * filled and emptied (`mkdir d; echo x >d/f; rm -r d`), so it is a loss
 * naming it, never silence (fixed, gone-dir-unwatched: such a tree left
 * only its create and delete, and no word of a loss).  One record a second
 * at most: the first directory by its path, the others counted. */
static void gone_unwatched(struct monitor *m, struct files *f, const char *rel)
{
  if (f->n_gone++ == 0)
    f->gone_first = xstrdup(rel);
  if (monitor_now_ms() - f->last_gone_dir_ms >= 1000)
    gone_record(m, f);
}

/* Record and drop pending entries older than the window (all when final). */
static bool files_flush(struct monitor *m, void *ctx, bool final)
{
  struct files *f = ctx;
  int64_t now = monitor_now_ms();
  size_t kept = 0;

  if (f->n_gone > 0 && (final || now - f->last_gone_dir_ms >= 1000))
    gone_record(m, f);

  for (size_t i = 0; i < f->n; i++) {
    if (final || now - f->pend[i].first_ms >= MONITOR_COALESCE_MS)
      emit(m, f, &f->pend[i]);
    else
      f->pend[kept++] = f->pend[i];
  }
  f->n = kept;
  return f->n > 0 || f->n_gone > 0;
}

static struct pending_file *note(struct monitor *m, struct files *f, const char *path,
                                 uint64_t mask, pid_t pid)
{
  struct pending_file *p = NULL;

  for (size_t i = 0; i < f->n && p == NULL; i++)
    if (strcmp(f->pend[i].path, path) == 0)
      p = &f->pend[i];
  if (p == NULL) {
    if (f->n == FILES_MAX_PENDING) {
      emit(m, f, &f->pend[0]);
      memmove(f->pend, f->pend + 1, --f->n * sizeof *f->pend);
    }
    p = &f->pend[f->n++];
    *p = (struct pending_file){.path = xstrdup(path), .pid = pid, .first_ms = monitor_now_ms()};
    audit_timestamp(p->at, sizeof p->at);
  }
  p->dir |= (mask & FAN_ONDIR) != 0;
  for (int op = 0; op < OP_N; op++)
    if (mask & op_masks[op])
      add_op(p, op);
  return p;
}

/* Is name the kernel's for a file without one (an O_TMPFILE): `#<inode>`? */
static bool tmpfile_name(const char *name, unsigned long long *ret_ino)
{
  char *end;

  if (name[0] != '#' || name[1] < '0' || name[1] > '9')
    return false;
  errno = 0;
  *ret_ino = strtoull(name + 1, &end, 10);
  return errno == 0 && *end == '\0';
}

static char *entry_path(const struct files *f, const char *rel, const char *name);

/* A file made without a name (O_TMPFILE) is written under the kernel's name
 * for it, `#<inode>`, then linked: its create is reported with its real name.
 * The pending record of `#<inode>` in the same directory (the writes) then
 * becomes the new name's, so the trail says that file was written, not a
 * name that never was one. */
static void adopt_tmpfile(struct monitor *m, struct files *f, const char *rel, const char *name,
                          const char *path, pid_t pid)
{
  cleanup_free char *r = xfmt("%s%s%s", *rel == '/' ? rel + 1 : rel, *rel ? "/" : "", name);
  cleanup_free char *tmpname = NULL, *tmppath = NULL;
  struct pending_file *q;
  struct stat st;

  if (fstatat(f->base_fd, r, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) ||
      st.st_nlink != 1)
    return;
  tmpname = xfmt("#%llu", (unsigned long long)st.st_ino);
  tmppath = entry_path(f, rel, tmpname);
  {
    unsigned k = f->next_adopted++ % FILES_ADOPTED;
    free(f->adopted[k].tmp);
    free(f->adopted[k].name);
    f->adopted[k].tmp = xstrdup(tmppath);
    f->adopted[k].name = xstrdup(path);
  }
  for (size_t i = 0; i < f->n; i++) {
    if (strcmp(f->pend[i].path, tmppath) != 0)
      continue;
    q = note(m, f, path, FAN_CREATE, pid);
    /* (note may have emitted the oldest record: find it again) */
    for (size_t j = 0; j < f->n; j++) {
      struct pending_file *t = &f->pend[j];
      if (strcmp(t->path, tmppath) != 0)
        continue;
      for (size_t k = 0; k < t->n_ops; k++)
        add_op(q, t->ops[k]);
      free(t->path);
      free(t->from);
      free(t->to);
      memmove(t, t + 1, (f->n - j - 1) * sizeof *t);
      f->n--;
      break;
    }
    return;
  }
}

/* The name a `#<inode>` path (a record's) was linked as, or NULL. */
static const char *adopted_name(const struct files *f, const char *path)
{
  for (unsigned k = 0; k < FILES_ADOPTED; k++)
    if (f->adopted[k].tmp != NULL && strcmp(f->adopted[k].tmp, path) == 0)
      return f->adopted[k].name;
  return NULL;
}

static void set_other(char **dst, const char *v)
{
  free(*dst);
  *dst = v ? xstrdup(v) : NULL;
}

/* The container's path of an entry (rel: its directory under the tree). */
static char *entry_path(const struct files *f, const char *rel, const char *name)
{
  if (strcmp(name, ".") == 0)
    return xfmt("%s%s", f->ws_path, rel);
  return xfmt("%s%s/%s", strcmp(f->ws_path, "/") == 0 ? "" : f->ws_path, rel, name);
}

/* ---- per_dir: marking upper's directories */

/* A directory that could not be marked: its changes are not recorded, and
 * the trail says so (the first few by name). */
static void unwatched(struct monitor *m, struct files *f, const char *rel, int errnum)
{
  struct error err = {0};

  if (f->n_unwatched++ >= FILES_UNWATCHED_MAX)
    return;
  error_set(&err, errnum, "changes below %s%s not recorded: its directory could not be watched%s",
            *rel ? "" : "the workspace", rel,
            f->n_unwatched == FILES_UNWATCHED_MAX ? " (further ones not reported)" : "");
  monitor_error(m, "file", &err);
}

/* Mark the directory fd (rel in upper).  1: it was not marked before (or
 * was forgotten), 2: it was, at another path (moved: updated), 0: it was,
 * at rel; -1: not marked. */
static int mark_dir(struct files *f, int fd, const char *rel)
{
  struct {
    struct file_handle h;
    uint8_t bytes[MAX_HANDLE_SZ];
  } fh;
  uint8_t key[MAX_HANDLE_SZ + 8];
  struct dir_mark *d;
  size_t klen;
  int mnt;

  fh.h.handle_bytes = MAX_HANDLE_SZ;
  if (name_to_handle_at(fd, "", &fh.h, &mnt, AT_EMPTY_PATH) < 0)
    return -1;
  klen = handle_key(&fh.h, key);
  d = dirs_find(f, key, klen);
  if (d != NULL && d->rel != NULL) {
    if (strcmp(d->rel, rel) == 0)
      return 0;
    dirs_set_rel(f, d, rel);
    return 2;
  }
  if (f->n_live >= FILES_DIRS_MAX) {
    errno = ENOSPC;
    return -1;
  }
  if (fanotify_mark(f->fan, FAN_MARK_ADD, f->dir_mask, fd, NULL) < 0)
    return -1;
  dirs_put(f, key, klen, rel);
  return 1;
}

/* How the entry up (urel below updir, in upper; lrel below each lower
 * layer) differs from the lower entry it would be the copy-up of:
 * FAN_CREATE where there is none (new, or over a whiteout), another type
 * FAN_CREATE | FAN_MODIFY, a mode that differs FAN_ATTRIB, a size or mtime
 * that differs FAN_MODIFY (a copy-up keeps the mtime), as does another file
 * given all of those (monitor_copyup.c: relinked-host-file), FILES_UNVERIFIED
 * for one whose bytes were not compared, and 0 for a copy-up that changed
 * nothing.  Of a directory only its type (a child's
 * change moves its mtime; its mode is not kept). */
static uint64_t lower_ops(struct files *f, int updir, const char *urel, const struct stat *up,
                          const char *lrel)
{
  struct open_how how = {.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
                         .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
                                    RESOLVE_NO_XDEV};
  struct stat lo;
  uint64_t ops = 0;

  for (size_t i = 1; i <= f->layers.n; i++) {
    int layer = i < f->layers.n ? f->layers.fds[i] : f->layers.hostfd;
    cleanup_close int fd = -1;
    if (layer < 0)
      continue;
    fd = (int)syscall(SYS_openat2, layer, lrel, &how, sizeof how);
    if (fd < 0)
      continue;
    if (fstat(fd, &lo) < 0 || (S_ISCHR(lo.st_mode) && lo.st_rdev == makedev(0, 0)))
      return FAN_CREATE;
    if ((up->st_mode & S_IFMT) != (lo.st_mode & S_IFMT))
      return FAN_CREATE | FAN_MODIFY;
    if (S_ISDIR(up->st_mode))
      return 0;
    if ((up->st_mode & 07777) != (lo.st_mode & 07777))
      ops |= FAN_ATTRIB;
    if (up->st_size != lo.st_size || up->st_mtim.tv_sec != lo.st_mtim.tv_sec ||
        up->st_mtim.tv_nsec != lo.st_mtim.tv_nsec)
      return ops | FAN_MODIFY;
    switch (monitor_copyup_check(updir, urel, up, layer, lrel, &lo, &f->origins)) {
    case COPYUP_SAME:
      return ops;
    case COPYUP_UNVERIFIED:
      return ops | FILES_UNVERIFIED;
    default:
      return ops | FAN_MODIFY;
    }
  }
  return FAN_CREATE;
}

/* A file found in a directory marked late: one made by a copy-up in the
 * same system call as the change (`echo x >>a/b/f` where a/b was only in
 * a lower layer), so that none of the change's events came.  Its change is
 * told from the lower file it was copied from (lower_ops): 0 for a copy-up
 * that changed nothing (opened for writing, nothing written). */
static uint64_t late_file_ops(struct files *f, int dfd, const char *rel, const char *name)
{
  cleanup_free char *lrel = *rel ? xfmt("%s/%s", rel + 1, name) : xstrdup(name);
  struct stat up;

  if (!f->overlay || fstatat(dfd, name, &up, AT_SYMLINK_NOFOLLOW) < 0 ||
      (S_ISCHR(up.st_mode) && up.st_rdev == makedev(0, 0)))
    return FAN_CREATE; /* a whiteout: classify() makes it a delete */
  return lower_ops(f, dfd, name, &up, lrel);
}

/* A directory that appeared in upper at rel (made, moved in from the
 * overlay's work dir, or moved inside upper), and every directory below it,
 * one at a time from a list (no recursion: the agent chooses the depth).
 * Each one not marked before is marked and what it holds is noted as
 * created: it may have been written before the mark (a directory moved
 * inside upper only changes its path, and its subdirectories').  What is
 * below a directory marked before at the same path was walked then. */
static void mark_tree(struct monitor *m, struct files *f, const char *top, bool note_content)
{
  struct open_how how = {.flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
                         .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
                                    RESOLVE_NO_XDEV};
  char **todo = xmalloc(sizeof *todo);
  size_t n = 1, cap = 1;

  todo[0] = xstrdup(top);
  for (size_t next = 0; next < n; next++) {
    const char *rel = todo[next];
    int fd = (int)syscall(SYS_openat2, f->base_fd, *rel ? rel + 1 : ".", &how, sizeof how);
    int r;
    DIR *d;
    struct dirent *e;

    if (fd < 0) {
      if (errno != ENOENT) /* gone again: its delete is an event of its parent */
        unwatched(m, f, rel, errno);
      continue;
    }
    r = mark_dir(f, fd, rel);
    if (r < 0) {
      unwatched(m, f, rel, errno);
      close(fd);
      continue;
    }
    if (r == 0 && next > 0) { /* a subdirectory marked at this path before */
      close(fd);
      continue;
    }
    if ((d = fdopendir(fd)) == NULL) {
      unwatched(m, f, rel, errno);
      close(fd);
      continue;
    }
    while ((e = readdir(d)) != NULL) {
      if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
        continue;
      if (e->d_type == DT_DIR) {
        if (n == cap)
          todo = xrealloc(todo, (cap *= 2) * sizeof *todo);
        todo[n++] = xfmt("%s/%s", rel, e->d_name);
      }
      if (note_content && r == 1) {
        cleanup_free char *path = entry_path(f, rel, e->d_name);
        uint64_t ops = e->d_type == DT_DIR ? FAN_CREATE | FAN_ONDIR
                                           : late_file_ops(f, dirfd(d), rel, e->d_name);
        if (ops != 0)
          note(m, f, path, ops, 0);
      }
    }
    closedir(d);
  }
  for (size_t i = 0; i < n; i++)
    free(todo[i]);
  free(todo);
}

/* A directory made or moved at rel below the tree (NULL: outside it, such as
 * the overlay's work dir), its own handle h given by the event
 * (FAN_REPORT_TARGET_FID): its path is kept by handle now, so that the
 * events of what is written in it are named even when it is removed before
 * they are read (fixed escape, gone-dir-changes: a tree made, filled and
 * removed while the monitor lagged left only its top's create and delete). */
static void cache_made(struct files *f, const struct file_handle *h, const char *rel)
{
  uint8_t key[MAX_HANDLE_SZ + 8];
  size_t klen;
  struct dir_entry *e;

  if (h->handle_bytes > MAX_HANDLE_SZ || (rel != NULL && strlen(rel) > FILES_PATH_MAX))
    return;
  klen = handle_key(h, key);
  e = &f->cache[key_slot(key, klen)];
  evict(f, e, key, klen);
  evicted_drop(f, key, klen);
  free(e->rel);
  *e = (struct dir_entry){.klen = klen, .used = true, .rel = rel ? xstrdup(rel) : NULL};
  memcpy(e->key, key, klen);
}

/* One FAN_RENAME event: old and new name, either may lie outside. */
static void on_rename(struct monitor *m, struct files *f, const struct fanotify_event_metadata *md,
                      const char *from, const char *to)
{
  uint64_t dir = md->mask & FAN_ONDIR;
  struct pending_file *p;

  if (from == NULL && to == NULL)
    return;
  if (dir && !f->have_targets)
    cache_clear(f); /* directory paths below it changed (else: on_event) */
  if (from != NULL) {
    p = note(m, f, from, FAN_MOVED_FROM | dir, md->pid);
    set_other(&p->to, to);
    p->went_out |= to == NULL;
  }
  if (to != NULL) {
    p = note(m, f, to, FAN_MOVED_TO | dir, md->pid);
    set_other(&p->from, from);
    p->came_in |= from == NULL;
  }
}

/* md: a copy of the event's metadata (aligned); ev: the event in the buffer */
static void on_event(struct monitor *m, struct files *f, const struct fanotify_event_metadata *md,
                     const uint8_t *ev)
{
  const uint8_t *p = ev + md->metadata_len, *end = ev + md->event_len;
  cleanup_free char *from = NULL, *to = NULL, *from_rel = NULL, *to_rel = NULL;
  cleanup_free char *made_rel = NULL; /* a directory made or moved in, its path */
  const struct file_handle *target = NULL, *dir = NULL;
  bool made_out = false; /* ... made or moved outside the tree */
  uint64_t mask;

  while (p + sizeof(struct fanotify_event_info_header) <= end) {
    const struct fanotify_event_info_fid *info = (const void *)p;
    struct file_handle *h = (struct file_handle *)info->handle;
    const char *name, *rel;
    char *path, *erel;

    if (info->hdr.len == 0 || p + info->hdr.len > end)
      return;
    p += info->hdr.len;
    if (info->hdr.info_type == FAN_EVENT_INFO_TYPE_FID &&
        info->hdr.len >= sizeof *info + sizeof *h + h->handle_bytes)
      target = h;
    if (info->hdr.info_type != FAN_EVENT_INFO_TYPE_DFID_NAME &&
        info->hdr.info_type != FAN_EVENT_INFO_TYPE_OLD_DFID_NAME &&
        info->hdr.info_type != FAN_EVENT_INFO_TYPE_NEW_DFID_NAME)
      continue;
    name = (const char *)h->f_handle + h->handle_bytes;
    if (info->hdr.info_type == FAN_EVENT_INFO_TYPE_DFID_NAME)
      dir = h;
    if ((rel = dir_rel(f, h)) == NULL) {
      made_out |= info->hdr.info_type == FAN_EVENT_INFO_TYPE_DFID_NAME && (md->mask & FAN_ONDIR) &&
                  (md->mask & FAN_CREATE);
      continue;
    }
    path = entry_path(f, rel, name);
    /* (per_dir: rel is the table's, which marking below may change) */
    erel = xfmt("%s/%s", rel, name);
    if (info->hdr.info_type == FAN_EVENT_INFO_TYPE_OLD_DFID_NAME) {
      free(from);
      free(from_rel);
      from = path;
      from_rel = erel;
      continue;
    }
    if (info->hdr.info_type == FAN_EVENT_INFO_TYPE_NEW_DFID_NAME) {
      free(to);
      free(to_rel);
      to = path;
      to_rel = erel;
      continue;
    }
    /* (a directory removed was empty: no other path changed) */
    if ((md->mask & FAN_ONDIR) && (md->mask & (FAN_MOVED_FROM | FAN_MOVED_TO)))
      cache_clear(f);
    if ((md->mask & FAN_ONDIR) && (md->mask & (FAN_CREATE | FAN_MOVED_TO)))
      set_other(&made_rel, erel);
    mask = md->mask & ~(uint64_t)FAN_RENAME;
    if (mask & FAN_ONDIR)
      mask &= ~(uint64_t)(FAN_ATTRIB | FAN_CLOSE_WRITE);
    if ((mask & FAN_CREATE) && !(mask & FAN_ONDIR))
      adopt_tmpfile(m, f, rel, name, path, md->pid);
    {
      unsigned long long ino;
      const char *named = tmpfile_name(name, &ino) ? adopted_name(f, path) : NULL;
      if (named != NULL) {
        free(path);
        path = xstrdup(named);
      }
    }
    if (mask & ~(uint64_t)FAN_ONDIR)
      note(m, f, path, mask, md->pid);
    if (f->per_dir && (md->mask & FAN_ONDIR)) {
      /* (the kernel merges a directory's create and delete read late into
       * one event: marked now, it is there again; not, it is gone) */
      bool made = (md->mask & (FAN_CREATE | FAN_MOVED_TO)) != 0;
      if (made)
        mark_tree(m, f, erel, true);
      if ((md->mask & FAN_DELETE) && dirs_find_rel(f, erel) == NULL)
        gone_unwatched(m, f, erel);
      else if ((md->mask & FAN_DELETE) && !made)
        dirs_forget_one(f, erel);
      else if ((md->mask & FAN_MOVED_FROM) && !made)
        dirs_forget(f, erel);
    }
    free(path);
    free(erel);
  }
  if ((md->mask & FAN_RENAME) && (md->mask & FAN_ONDIR) && f->have_targets) {
    if (from_rel != NULL)
      cache_forget_under(f, from_rel);
    if (to_rel != NULL)
      cache_forget_under(f, to_rel);
    set_other(&made_rel, to_rel);
    made_out = to_rel == NULL;
  }
  if (md->mask & FAN_RENAME) {
    on_rename(m, f, md, from, to);
    /* a directory moved inside keeps its marks (its path is updated);
     * one moved in is new; one moved out is forgotten */
    if (f->per_dir && (md->mask & FAN_ONDIR)) {
      if (to_rel != NULL)
        mark_tree(m, f, to_rel, true);
      else if (from_rel != NULL)
        dirs_forget(f, from_rel);
    }
  }
  if ((made_rel != NULL || made_out) && target != NULL && !f->per_dir)
    cache_made(f, target, made_rel);
  /* a directory's removal comes after every event of what it held; one
   * merged with its creation (read late) comes before them: kept */
  if ((md->mask & FAN_DELETE) && (md->mask & FAN_ONDIR) &&
      !(md->mask & (FAN_CREATE | FAN_MOVED_TO)) && target != NULL && !f->per_dir &&
      !(dir != NULL && dir->handle_type == target->handle_type &&
        dir->handle_bytes == target->handle_bytes &&
        memcmp(dir->f_handle, target->f_handle, dir->handle_bytes) == 0))
    cache_gone(f, target); /* (never the directory it was in) */
}

static void files_read(struct monitor *m, int fd, short revents, void *ctx)
{
  struct files *f = ctx;
  uint8_t buf[32768] __attribute__((aligned(8)));

  for (int i = 0; i < FILES_READ_MAX; i++) {
    ssize_t n = read(fd, buf, sizeof buf);

    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return;
    /* events are 4-byte aligned in the buffer (names make their lengths
     * odd), the metadata holds a u64: read each through an aligned copy */
    for (size_t off = 0; off + FAN_EVENT_METADATA_LEN <= (size_t)n;) {
      struct fanotify_event_metadata mdc, *md = &mdc;
      memcpy(md, buf + off, sizeof mdc);
      if (md->event_len < FAN_EVENT_METADATA_LEN || off + md->event_len > (size_t)n)
        break;
      off += md->event_len;
      if (md->vers != FANOTIFY_METADATA_VERSION)
        continue;
      f->changed = true;
      if (md->mask & FAN_Q_OVERFLOW) {
        if (monitor_now_ms() - f->last_loss_ms >= 1000) {
          f->last_loss_ms = monitor_now_ms();
          monitor_loss(m, "file", "file events lost (queue overflow): No buffer space available",
                       0);
        }
        /* a directory made among the lost events is not marked yet */
        if (f->per_dir)
          mark_tree(m, f, "", true);
        continue;
      }
      on_event(m, f, md, buf + off - md->event_len);
      if (f->too_long && monitor_now_ms() - f->last_long_ms >= 1000) {
        f->last_long_ms = monitor_now_ms();
        char what[128];
        snprintf(
            what, sizeof what,
            "file events lost: a directory's path is longer than %d bytes (File name too long)",
            FILES_PATH_MAX);
        monitor_loss(m, "file", what, 0);
      }
      f->too_long = false;
      if (f->gone_dir && monitor_now_ms() - f->last_gone_ms >= 1000) {
        f->last_gone_ms = monitor_now_ms();
        monitor_loss(m, "file",
                     "file events lost: their directory was removed before they were read "
                     "(Stale file handle)",
                     0);
      }
      f->gone_dir = false;
    }
  }
}

/* The workspace, opened inside the container's root (no symlink in it may
 * lead out: RESOLVE_IN_ROOT).  Not O_PATH: it is also open_by_handle_at's
 * mount fd. */
static int open_workspace(pid_t init, const char *path, struct error *err)
{
  char rel[24];
  struct open_how how = {.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
                         .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
  cleanup_close int piddir = -1, root = -1;
  int fd;

  snprintf(rel, sizeof rel, "%d", init);
  piddir = procfs_open(rel, O_PATH | O_DIRECTORY, err);
  if (piddir < 0)
    return -1;
  /* the one magic link followed: the init's root, before its process runs */
  root = openat(piddir, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root < 0)
    return error_errno(err, "open the container's root");
  fd = (int)syscall(SYS_openat2, root, path, &how, sizeof how);
  if (fd < 0)
    return error_errno(err, "open workspace `%s`", path);
  return fd;
}

/* An overlay workspace: watch its upper layer (agentrt's own directory,
 * never one the container names).  An image's is reached through create's
 * mount of it (fs, sent with ROOT) when there is one: mounting it again
 * here (its lock, its loop device, fsopen and fsmount) took ~15 of the
 * calls the init waits for. */
static int open_upper(struct files *f, const char *root, const char *id, int fs, struct error *err)
{
  struct workspace *w = NULL;
  int r;

  if (workspace_load(root, id, &w, err) < 0)
    return error_prefix(err, "overlay workspace");
  r = workspace_open_layers_at(w, fs, &f->layers, err);
  /* a sub-agent's upper is in its ancestor's image, beside the others' */
  f->image_shared = w->upper_in != NULL;
  if (r == 0 && workspace_has_image(w))
    f->img_fd = workspace_image_lock_fd(w);
  workspace_free(w);
  if (r < 0)
    return -1;
  f->base_fd = fcntl(f->layers.fds[0], F_DUPFD_CLOEXEC, 3);
  if (f->base_fd < 0)
    return error_errno(err, "overlay workspace: upper layer");
  f->overlay = true;
  return 0;
}

static bool on_image(int fd);

static int mark(struct files *f)
{
  uint64_t mask =
      FAN_CREATE | FAN_DELETE | FAN_MODIFY | FAN_ATTRIB | FAN_CLOSE_WRITE | FAN_RENAME | FAN_ONDIR;

  f->have_rename = true;
  f->ignore_mask = mask & ~(uint64_t)FAN_ONDIR;
  if (fanotify_mark(f->fan, FAN_MARK_ADD | FAN_MARK_FILESYSTEM, mask, f->base_fd, ".") == 0)
    return 0;
  if (errno != EINVAL)
    return -1;
  /* a kernel before FAN_RENAME (5.17): one name per event */
  f->have_rename = false;
  mask = (mask & ~(uint64_t)FAN_RENAME) | FAN_MOVED_FROM | FAN_MOVED_TO;
  f->ignore_mask = mask & ~(uint64_t)FAN_ONDIR;
  return fanotify_mark(f->fan, FAN_MARK_ADD | FAN_MARK_FILESYSTEM, mask, f->base_fd, ".");
}

static void files_free(struct files *f)
{
  if (f->fan >= 0)
    close(f->fan);
  if (f->ws_fd >= 0)
    close(f->ws_fd);
  if (f->base_fd >= 0)
    close(f->base_fd);
  if (f->fd_dir >= 0)
    close(f->fd_dir);
  if (f->img_fd >= 0)
    close(f->img_fd);
  ws_layers_close(&f->layers);
  dirs_free(f);
  for (unsigned k = 0; k < FILES_ADOPTED; k++) {
    free(f->adopted[k].tmp);
    free(f->adopted[k].name);
  }
  for (unsigned k = 0; k < FILES_INODES; k++)
    free(f->inodes[k].path);
  strv_free(f->protected);
  free(f->gone_first);
  free(f->evicted);
  free(f->ws_path);
  free(f);
}

/* The group: events name the directory and the entry, and (Linux 5.17)
 * the entry's own handle too, so that a directory made is known by handle
 * at once (cache_made). */
static int fan_init(struct files *f, unsigned flags)
{
  unsigned base = FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK | FAN_REPORT_DFID_NAME | flags;
  int fd = fanotify_init(base | FAN_REPORT_FID | FAN_REPORT_TARGET_FID,
                         O_RDONLY | O_CLOEXEC | O_LARGEFILE);

  f->have_targets = fd >= 0;
  if (fd < 0 && errno == EINVAL)
    fd = fanotify_init(base, O_RDONLY | O_CLOEXEC | O_LARGEFILE);
  return fd;
}

int monitor_files_open(struct monitor *m, const char *workspace, char *const *protected,
                       struct error *err)
{
  struct files *f = xmalloc0(sizeof *f);
  struct statfs sfs;

  f->fan = f->ws_fd = f->base_fd = f->fd_dir = f->img_fd = f->layers.hostfd = -1;
  f->ws_path = xstrdup(workspace);
  f->protected = strv_dup(protected);
  if (FAILPOINT_FAILS("monitor-files-open")) {
    error_set(err, EOPNOTSUPP, "fanotify_init: failpoint");
    goto fail;
  }
  /* the ignore marks of outside directories do not count against root's
   * marks (shared by every monitor) when we may say so */
  f->max_ignores = FILES_IGNORE_MAX;
  f->fan = fan_init(f, FAN_UNLIMITED_MARKS);
  if (f->fan < 0 && errno == EPERM) {
    f->max_ignores = FILES_IGNORE_LIMITED;
    f->fan = fan_init(f, 0);
  }
  if (f->fan < 0) {
    error_errno(err, "fanotify_init");
    goto fail;
  }
  if ((f->fd_dir = procfs_open("self/fd", O_PATH | O_DIRECTORY, err)) < 0)
    goto fail;
  if ((f->ws_fd = open_workspace(m->init_pid, workspace, err)) < 0) {
    struct error e2 = {0};
    /* a user's sandbox: the init's root is not the monitor's to open, an
     * overlay's upper layer in the user's data directory is */
    if ((err->code != EACCES && err->code != EPERM) ||
        open_upper(f, m->root, m->id, m->upper_fs, &e2) < 0)
      goto fail;
    f->per_dir = true;
  } else if (fstatfs(f->ws_fd, &sfs) == 0 && sfs.f_type == OVERLAYFS_SUPER_MAGIC) {
    if (open_upper(f, m->root, m->id, m->upper_fs, err) < 0)
      goto fail;
  } else if ((f->base_fd = fcntl(f->ws_fd, F_DUPFD_CLOEXEC, 3)) < 0) {
    error_errno(err, "workspace `%s`", workspace);
    goto fail;
  }
  if (!fd_path(f, f->base_fd, f->base_link, sizeof f->base_link, &f->base_link_len)) {
    error_errno(err, "workspace `%s`: read its path", workspace);
    goto fail;
  }
  if (strcmp(f->base_link, "/") == 0)
    f->base_link_len = 0; /* every path starts with it: compare against "" */
  f->own_fs = f->overlay && on_image(f->layers.fds[0]) && !f->image_shared;
  f->may_share = f->own_fs && m->serves_children;
  f->keep_len = f->base_link_len;
  if (f->overlay) /* <store>/.workspaces/<id>: upper's parent, with work */
    while (f->keep_len > 0 && f->base_link[--f->keep_len] != '/')
      ;
  /* no file system mark without privilege: an overlay's upper layer is
   * marked directory by directory */
  if (!f->per_dir && mark(f) < 0) {
    if (errno != EPERM || !f->overlay) {
      error_errno(err, "fanotify_mark the filesystem of workspace `%s`%s", workspace,
                  f->overlay ? " (its upper layer)" : "");
      goto fail;
    }
    f->per_dir = true;
  }
  if (monitor_add_fd(m, f->fan, POLLIN, files_read, f) < 0) {
    error_set(err, 0, "too many monitor sources");
    goto fail;
  }
  if (f->per_dir) {
    f->dir_mask = FAN_CREATE | FAN_DELETE | FAN_MODIFY | FAN_ATTRIB | FAN_CLOSE_WRITE | FAN_ONDIR |
                  FAN_EVENT_ON_CHILD | FAN_MOVED_FROM | FAN_MOVED_TO;
    f->have_rename = false;
    if (mark_dir(f, f->base_fd, "") < 0) {
      error_errno(err, "fanotify_mark the upper layer of workspace `%s`", workspace);
      goto fail;
    }
    if (fanotify_mark(f->fan, FAN_MARK_ADD, f->dir_mask | FAN_RENAME, f->base_fd, NULL) == 0)
      f->dir_mask |= FAN_RENAME, f->have_rename = true;
    mark_tree(m, f, "", false);
  }
  monitor_set_flush(m, f->fan, files_flush);
  return 0;
fail:
  files_free(f);
  return -1;
}

/* The upper layer's image (ext4 on a loop device, workspace.size)?  Only
 * such a file system is trimmed: nothing else. */
static bool on_image(int fd)
{
  struct statfs sf;
  struct stat st;

  return fd >= 0 && fstat(fd, &st) == 0 && major(st.st_dev) == 7 && fstatfs(fd, &sf) == 0 &&
         sf.f_type == EXT4_SUPER_MAGIC;
}

/* At the end, the trail complete: the descriptors that name the workspace's
 * mounts go.  The last of them unmounts the overlay, whose unmount syncs its
 * upper file system, then the image's ext4 (a journal commit, the loop
 * device's flush and release: 1-3 ms, the most of what `run` waited for
 * after its program's exit).  With an image of its own they go in the
 * teardown child, after our exit (os/pid.h), overlay first, under a shared
 * lock of the image let go only after them: `run` returns on our exit, and
 * whatever mounts or copies the image next (create of the same id, a review,
 * data migrate, delete) takes that lock first and finds it unmounted and
 * clean (workspace_image_settle, ws_fs_mount; workspace-size.bats,
 * image-unmount-after-run).  Without the lock (none of our own, or held by
 * a review at that moment) they go here, before our exit, as they did.
 * The fanotify group, whose close waits for the kernel, is left to the exit.
 * The image's free blocks are discarded once more before it goes, so the
 * host's file gets them back.  Mounted with `discard`, ext4 still left the
 * blocks of files deleted just before the end in the image (25-27 MiB of 90
 * written and deleted, in 2 runs of 3 here).  Only when its file system saw
 * a change (any event, or lost ones): blocks are freed by a delete, a
 * truncate, a punched hole or a rename over a file, each an event; a file
 * system nothing touched has nothing to give back (FITRIM: 0.1-0.7 ms).
 * Not an event of the mark: an extended attribute's own block freed by its
 * removal (FAN_ATTRIB); alone in a run, its blocks wait for the next trim,
 * and the image never holds more than workspace.size either way.
 * A commit first: what the last transaction freed is not free before it.
 * Handed over with the descriptors, the commit and the trim are the teardown
 * child's too, before its closes and under the same lock: a run that wrote
 * does not wait for the journal's commit either, and whoever takes the lock
 * next finds the image trimmed (image-trim-after-run). */
static bool wants_trim(struct files *f)
{
  return f->layers.n > 0 && f->changed && on_image(f->layers.fds[0]);
}

static void trim_image(struct files *f)
{
  struct fstrim_range r = {.start = 0, .len = UINT64_MAX, .minlen = 0};
  int fd = f->layers.fds[0];

  /* blocks freed in the running transaction are not free to FITRIM until
   * it commits (a truncate at the very end kept 25-33 MiB of 40 without) */
  if (syncfs(fd) < 0) {
    /* the unmount commits it; those blocks stay in the image */
  }
  if (ioctl(fd, FITRIM, &r) < 0) {
    /* not ours to have (a user's namespace): the image keeps those blocks */
  }
}

/* monitor_files_release's hand-over: every descriptor below the workspace's
 * mounts to the teardown child, the overlay's first, the lock last; none
 * when they do not all fit in its list (the lock must not go first). */
static bool leave_to_teardown(struct files *f, bool trim)
{
  if (proc_teardown_room() < 5 + (int)f->layers.n)
    return false;
  if (trim && proc_teardown_trim_first(f->layers.fds[0]) < 0)
    trim_image(f); /* another workspace's is there */
  proc_teardown_close_first(f->ws_fd);
  if (f->base_fd != f->ws_fd)
    proc_teardown_close_first(f->base_fd);
  for (size_t i = 0; i < f->layers.n; i++)
    proc_teardown_close_first(f->layers.fds[i]);
  proc_teardown_close_first(f->layers.hostfd);
  proc_teardown_close_first(f->fd_dir);
  proc_teardown_close_first(f->img_fd);
  f->layers.n = 0;
  f->layers.hostfd = f->ws_fd = f->base_fd = f->fd_dir = f->img_fd = -1;
  return true;
}

void monitor_files_release(struct monitor *m)
{
  for (size_t i = 0; i < m->n_src; i++) {
    struct files *f;

    if (m->src[i].fn != files_read || (f = m->src[i].ctx) == NULL)
      continue;
    /* what the kernel queued since the last read counts too */
    if (!f->changed && f->fan >= 0 &&
        poll(&(struct pollfd){.fd = f->fan, .events = POLLIN}, 1, 0) > 0)
      f->changed = true;
    bool trim = wants_trim(f);
    if (f->img_fd >= 0 && flock(f->img_fd, LOCK_SH | LOCK_NB) == 0 && leave_to_teardown(f, trim))
      trim = false;
    if (trim)
      trim_image(f);
    if (f->ws_fd >= 0)
      close(f->ws_fd);
    if (f->base_fd >= 0 && f->base_fd != f->ws_fd)
      close(f->base_fd);
    if (f->fd_dir >= 0)
      close(f->fd_dir);
    if (f->img_fd >= 0)
      close(f->img_fd);
    f->ws_fd = f->base_fd = f->fd_dir = f->img_fd = -1;
    ws_layers_close(&f->layers);
  }
}
