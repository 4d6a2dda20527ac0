/* retention.c - host-wide retention of workspaces and audit trails
 * (datadir.h): ages and total sizes from the host config, applied at create
 * and by `agentrt purge`.  Only what no container uses is removed (its state
 * dir under its engine root is gone), oldest first; every removal is
 * recorded in <data-dir>/retention, a hash-chained trail of its own. */
#include "datadir/datadir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "audit/audit.h"
#include "audit/jbuf.h"
#include "common/util.h"
#include "workspace/workspace.h"

#define DU_MAX_DEPTH 256
#define DU_MAX_ENTRIES 1000000
#define SWEEP_STAMP ".last-sweep"

enum kind { WS, TRAIL };

struct item {
  struct datadir_hit h;
  enum kind kind;
  uint64_t bytes;
  int64_t mtime;
  bool in_use, removed;
  bool deferred; /* a parent's workspace held by a child's kept changes: tried again last */
};

/* Bytes of regular files below dirfd/name on the disk (same device, bounded). */
static void du_at(int at, const char *name, dev_t dev, int depth, uint64_t *bytes,
                  uint64_t *entries)
{
  struct stat st;
  DIR *d;
  struct dirent *e;
  int fd;

  if (depth > DU_MAX_DEPTH || *entries >= DU_MAX_ENTRIES ||
      fstatat(at, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || st.st_dev != dev)
    return;
  (*entries)++;
  /* what the disk holds: a sparse file (an overlay workspace's upper.img,
   * workspace/image.c) counts by its blocks, not its size */
  if (S_ISREG(st.st_mode))
    *bytes += (uint64_t)st.st_size < (uint64_t)st.st_blocks * 512 ? (uint64_t)st.st_size
                                                                  : (uint64_t)st.st_blocks * 512;
  if (!S_ISDIR(st.st_mode))
    return;
  fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 || (d = fdopendir(fd)) == NULL) {
    if (fd >= 0)
      close(fd);
    return;
  }
  while ((e = readdir(d)) != NULL)
    if (!streq(e->d_name, ".") && !streq(e->d_name, ".."))
      du_at(dirfd(d), e->d_name, dev, depth + 1, bytes, entries);
  closedir(d);
}

static uint64_t du(const char *path)
{
  struct stat st;
  uint64_t bytes = 0, entries = 0;

  if (lstat(path, &st) == 0)
    du_at(AT_FDCWD, path, st.st_dev, 0, &bytes, &entries);
  return bytes;
}

static int64_t mtime_of(const char *path)
{
  struct stat st;
  return lstat(path, &st) == 0 ? (int64_t)st.st_mtim.tv_sec : 0;
}

static void collect(const struct datadir_sweep *s, enum kind k, struct item **v, size_t *n)
{
  struct datadir_query q = {
      .data_dir = s->data_dir,
      .sub = k == WS ? DATADIR_WORKSPACES : DATADIR_AUDIT,
      .need = k == WS ? "meta.json" : "head",
  };
  struct datadir_hit *hits = NULL;
  size_t nh = 0;

  datadir_list(&q, &hits, &nh, &(struct error){0});
  for (size_t i = 0; i < nh; i++) {
    cleanup_free char *dir = xfmt("%s/%s/%s", hits[i].store, q.sub, hits[i].id);
    cleanup_free char *file = xfmt("%s/%s", dir, q.need);
    cleanup_free char *state = xfmt("%s/%s/state.json", hits[i].root, hits[i].id);
    *v = xrealloc(*v, (*n + 1) * sizeof **v);
    (*v)[(*n)++] = (struct item){
        .h = hits[i],
        .kind = k,
        .bytes = du(dir),
        .mtime = mtime_of(file),
        .in_use = access(state, F_OK) == 0 ||
                  (streq(hits[i].id, s->skip_id) && streq(hits[i].root, s->skip_root)),
    };
  }
  free(hits);
}

/* A trail is a flat directory of files. */
static int remove_trail(const char *dir)
{
  DIR *d = opendir(dir);
  struct dirent *e;
  int r = 0;

  if (d == NULL)
    return errno == ENOENT ? 0 : -1;
  while ((e = readdir(d)) != NULL)
    if (!streq(e->d_name, ".") && !streq(e->d_name, "..") && unlinkat(dirfd(d), e->d_name, 0) < 0)
      r = -1;
  closedir(d);
  return r < 0 ? -1 : rmdir(dir);
}

static void record(const struct datadir_sweep *s, const struct item *it, const char *why,
                   char ***ret_json, char ***ret_text)
{
  const char *what = it->kind == WS ? "workspace" : "audit";
  cleanup_free char *trail = xfmt("%s/%s", s->data_dir, DATADIR_RETENTION_TRAIL);
  struct audit_log *l = NULL;
  struct error e = {0};
  struct jbuf b = {0};

  jb_key_str(&b, "removed", what);
  jb_key_str(&b, "container", it->h.id);
  jb_key_str(&b, "root", it->h.root);
  jb_key_u64(&b, "bytes", it->bytes);
  jb_key_str(&b, "reason", why);
  if (!s->dry_run) {
    if (audit_log_open(trail, DATADIR_RETENTION_TRAIL, NULL, true, &l, &e) == 0) {
      audit_log_append(l, "retention", jb_str(&b), &e);
      audit_log_close(l);
    }
  }
  if (ret_json)
    strv_push(ret_json, jb_str(&b));
  if (ret_text) {
    cleanup_free char *t =
        xfmt("%s %s %s (engine root %s, %" PRIu64 " bytes): %s",
             s->dry_run ? "would remove" : "removed", what, it->h.id, it->h.root, it->bytes, why);
    strv_push(ret_text, t);
  }
  jb_free(&b);
}

/* The workspaces of store that this sweep removed (or, dry, would). */
static char **gone_in(const struct item *v, size_t n, const char *store)
{
  char **gone = NULL;

  for (size_t i = 0; i < n; i++)
    if (v[i].kind == WS && v[i].removed && streq(v[i].h.store, store))
      strv_push(&gone, v[i].h.id);
  return gone;
}

/* Remove v[i]; with defer, a parent's workspace held by a child's kept
 * changes is only marked (it->deferred), said nothing of, so that it is
 * tried again once the sweep has seen its children (retention-kept-parent). */
static bool remove_item(const struct datadir_sweep *s, struct item *v, size_t n, size_t i,
                        bool defer, const char *why, char ***ret_json, char ***ret_text)
{
  struct item *it = &v[i];
  struct error e = {0};
  bool ok = true;

  if (it->kind == WS) {
    cleanup_strv char **gone = gone_in(v, n, it->h.store);
    ok = workspace_purge_check_except(it->h.store, it->h.id, gone, &e) == 0;
  }
  if (!ok && defer && e.code == EBUSY) {
    it->deferred = true;
    return false;
  }
  if (ok && !s->dry_run) {
    if (it->kind == WS) {
      ok = workspace_purge(it->h.store, it->h.id, &e) == 0;
    } else {
      cleanup_free char *dir = xfmt("%s/%s/%s", it->h.store, DATADIR_AUDIT, it->h.id);
      ok = remove_trail(dir) == 0;
    }
  }
  if (!ok) {
    /* a parent's workspace whose image holds a sub-agent's kept changes
     * stays (parent-purge-kept-children): say so, not a silent skip */
    if (e.code == EBUSY && ret_text) {
      cleanup_free char *t =
          xfmt("%s (engine root %s): %s", s->dry_run ? "would keep" : "kept", it->h.root, e.msg);
      strv_push(ret_text, t);
    }
    return false;
  }
  it->removed = true;
  record(s, it, why, ret_json, ret_text);
  return true;
}

static int by_age(const void *a, const void *b)
{
  const struct item *x = a, *y = b;
  return x->mtime < y->mtime ? -1 : x->mtime > y->mtime;
}

static int sweep_kind(const struct datadir_sweep *s, enum kind k, char ***ret_json,
                      char ***ret_text)
{
  uint64_t age =
      s->older_than ? s->older_than : (k == WS ? s->conf->ws_max_age : s->conf->audit_max_age);
  uint64_t cap = k == WS ? s->conf->ws_max_total : s->conf->audit_max_total, total = 0;
  int64_t now = (int64_t)time(NULL);
  struct item *v = NULL;
  size_t n = 0;
  int removed = 0;
  char why[128];

  collect(s, k, &v, &n);
  if (n > 1)
    qsort(v, n, sizeof *v, by_age);
  snprintf(why, sizeof why, "unused for more than %" PRIu64 "s", age);
  for (int pass = 0; pass < 2; pass++) {
    for (size_t i = 0; i < n; i++) {
      if (!v[i].in_use && !v[i].removed && (pass == 0 || v[i].deferred) && age > 0 &&
          now - v[i].mtime > (int64_t)age)
        removed += remove_item(s, v, n, i, pass == 0, why, ret_json, ret_text);
    }
  }
  for (size_t i = 0; i < n; i++) {
    v[i].deferred = false;
    if (!v[i].removed)
      total += v[i].bytes;
  }
  for (int pass = 0; pass < 2; pass++) {
    for (size_t i = 0; cap > 0 && total > cap && i < n; i++) {
      if (v[i].in_use || v[i].removed || (pass == 1 && !v[i].deferred))
        continue;
      snprintf(why, sizeof why, "oldest; all %ss took %" PRIu64 " bytes, the cap is %" PRIu64,
               k == WS ? "workspace" : "audit trail", total, cap);
      if (remove_item(s, v, n, i, pass == 0, why, ret_json, ret_text)) {
        removed++;
        total -= v[i].bytes;
      }
    }
  }
  for (size_t i = 0; i < n; i++)
    datadir_hit_free(&v[i].h);
  free(v);
  return removed;
}

int datadir_retention(const struct datadir_sweep *s, char ***ret_json, char ***ret_text,
                      struct error *err)
{
  return sweep_kind(s, WS, ret_json, ret_text) + sweep_kind(s, TRAIL, ret_json, ret_text);
}

static uint64_t free_bytes(const char *dir)
{
  struct statvfs v;
  return statvfs(dir, &v) == 0 ? (uint64_t)v.f_bavail * v.f_frsize : UINT64_MAX;
}

/* Due when the stamp is older than the interval (and touch it). */
static bool sweep_due(const struct datadir_sweep *s)
{
  cleanup_free char *stamp = xfmt("%s/%s", s->data_dir, SWEEP_STAMP);
  int64_t now = (int64_t)time(NULL), m = mtime_of(stamp);
  int fd;

  if (m != 0 && m <= now && now - m < (int64_t)s->conf->sweep_interval)
    return false;
  fd = open(stamp, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
  if (fd >= 0) {
    futimens(fd, NULL);
    close(fd);
  }
  return true;
}

int datadir_create_check(const struct datadir_sweep *s, char ***ret_json, struct error *err)
{
  uint64_t need = s->conf->min_free, have = free_bytes(s->data_dir);

  if (have < need || sweep_due(s)) {
    datadir_retention(s, ret_json, NULL, err);
    have = free_bytes(s->data_dir);
  }
  if (have < need)
    return error_set(err, 0,
                     "data directory `%s` is full: %" PRIu64 " MiB free, min-free is %" PRIu64
                     " MiB; remove old work (`agentrt purge --older-than 7d`, `agentrt "
                     "workspace ID purge`) or change the limits in " HOSTCONF_PATH,
                     s->data_dir, have >> 20, need >> 20);
  return 0;
}
