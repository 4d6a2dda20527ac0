/* monitor_files.c - the monitor's file source: fanotify on the workspace.
 *
 * The workspace is a mount inside the container's mount namespace.  The
 * monitor reaches it through the init's /proc/<pid>/root (resolved with
 * RESOLVE_IN_ROOT, before the container's process runs) and marks its whole
 * filesystem (FAN_MARK_FILESYSTEM: FAN_MARK_MOUNT cannot report directory
 * entry events).  For a tmpfs workspace that filesystem is exactly the
 * workspace; for a bind or overlay one, events are kept only when the
 * directory they happened in lies under the workspace.  Events carry the
 * directory's file handle and the entry's name (FAN_REPORT_DFID_NAME); the
 * directory is opened by handle and its path read back, then cached.  Where a
 * filesystem mark is refused, the workspace directory itself is marked (its
 * direct entries only) and the gap is recorded.
 *
 * Coalescing: changes to one path within MONITOR_COALESCE_MS become one
 * "file" record listing its operations in order of first occurrence, so a
 * busy build does not flood the trail.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/util.h"
#include "monitor/monitor_internal.h"
#include "os/procfs.h"

#define FILES_MAX_PENDING 256
#define FILES_CACHE 64
#define FILES_READ_MAX 256 /* reads per wake-up */

enum { OP_CREATE, OP_MODIFY, OP_DELETE, OP_MOVED_FROM, OP_MOVED_TO, OP_N };
static const char *const op_names[OP_N] = {"create", "modify", "delete", "moved_from", "moved_to"};
static const uint64_t op_masks[OP_N] = {FAN_CREATE, FAN_MODIFY, FAN_DELETE, FAN_MOVED_FROM,
                                        FAN_MOVED_TO};

struct pending_file {
  char *path;
  uint8_t ops[OP_N];
  uint8_t n_ops;
  bool dir;
  pid_t pid;
  int64_t first_ms;
  char at[40];
};

struct dir_entry {
  uint8_t key[MAX_HANDLE_SZ + 8];
  size_t klen;
  char *rel;
};

struct files {
  int fan, ws_fd, fd_dir;
  char *ws_path;      /* inside the container, e.g. /workspace */
  char ws_link[4096]; /* the workspace as our /proc/self/fd shows it */
  size_t ws_link_len;
  bool whole_fs;
  struct pending_file pend[FILES_MAX_PENDING];
  size_t n;
  struct dir_entry cache[FILES_CACHE];
  size_t cache_next;
  int64_t last_loss_ms;
};

static void cache_clear(struct files *f)
{
  for (size_t i = 0; i < FILES_CACHE; i++) {
    free(f->cache[i].rel);
    f->cache[i].rel = NULL;
    f->cache[i].klen = 0;
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

/* The directory of an event, relative to the workspace ("" = its root), or
 * NULL when it is outside the workspace or gone. */
static const char *dir_rel(struct files *f, struct file_handle *h)
{
  uint8_t key[MAX_HANDLE_SZ + 8];
  size_t klen = sizeof h->handle_type + h->handle_bytes, len;
  char path[4096];
  struct dir_entry *e;
  int fd;

  if (h->handle_bytes > MAX_HANDLE_SZ)
    return NULL;
  memcpy(key, &h->handle_type, sizeof h->handle_type);
  memcpy(key + sizeof h->handle_type, h->f_handle, h->handle_bytes);
  for (size_t i = 0; i < FILES_CACHE; i++)
    if (f->cache[i].rel && f->cache[i].klen == klen && memcmp(f->cache[i].key, key, klen) == 0)
      return f->cache[i].rel;
  fd = (int)syscall(SYS_open_by_handle_at, f->ws_fd, h, O_PATH | O_CLOEXEC);
  if (fd < 0)
    return NULL;
  if (!fd_path(f, fd, path, sizeof path, &len)) {
    close(fd);
    return NULL;
  }
  close(fd);
  if (len < f->ws_link_len || memcmp(path, f->ws_link, f->ws_link_len) != 0 ||
      (path[f->ws_link_len] != '/' && path[f->ws_link_len] != '\0'))
    return NULL;
  e = &f->cache[f->cache_next++ % FILES_CACHE];
  free(e->rel);
  memcpy(e->key, key, klen);
  e->klen = klen;
  e->rel = xstrdup(strcmp(path + f->ws_link_len, "/") == 0 ? "" : path + f->ws_link_len);
  return e->rel;
}

static void emit(struct monitor *m, struct pending_file *p)
{
  struct jbuf b = {0};

  jb_key_str(&b, "path", p->path);
  jb_key(&b, "ops");
  jb_puts(&b, "[");
  for (size_t i = 0; i < p->n_ops; i++) {
    if (i > 0)
      jb_puts(&b, ",");
    jb_quote(&b, op_names[p->ops[i]], strlen(op_names[p->ops[i]]));
  }
  jb_puts(&b, "]");
  if (p->dir)
    jb_key_bool(&b, "dir", true);
  if (p->pid > 0)
    jb_key_i64(&b, "pid", p->pid);
  jb_key_str(&b, "at", p->at);
  monitor_record(m, "file", jb_str(&b));
  jb_free(&b);
  free(p->path);
}

/* Record and drop pending entries older than the window (all when final). */
static bool files_flush(struct monitor *m, void *ctx, bool final)
{
  struct files *f = ctx;
  int64_t now = monitor_now_ms();
  size_t kept = 0;

  for (size_t i = 0; i < f->n; i++) {
    if (final || now - f->pend[i].first_ms >= MONITOR_COALESCE_MS)
      emit(m, &f->pend[i]);
    else
      f->pend[kept++] = f->pend[i];
  }
  f->n = kept;
  return f->n > 0;
}

static void add_op(struct pending_file *p, int op)
{
  for (size_t i = 0; i < p->n_ops; i++)
    if (p->ops[i] == op)
      return;
  p->ops[p->n_ops++] = (uint8_t)op;
}

static void note(struct monitor *m, struct files *f, const char *path, uint64_t mask, pid_t pid)
{
  struct pending_file *p = NULL;

  for (size_t i = 0; i < f->n && p == NULL; i++)
    if (strcmp(f->pend[i].path, path) == 0)
      p = &f->pend[i];
  if (p == NULL) {
    if (f->n == FILES_MAX_PENDING) {
      emit(m, &f->pend[0]);
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
}

static void on_event(struct monitor *m, struct files *f, const struct fanotify_event_metadata *md)
{
  const uint8_t *p = (const uint8_t *)md + md->metadata_len,
                *end = (const uint8_t *)md + md->event_len;

  while (p + sizeof(struct fanotify_event_info_header) <= end) {
    const struct fanotify_event_info_fid *info = (const void *)p;
    struct file_handle *h = (struct file_handle *)info->handle;
    const char *name, *rel;
    cleanup_free char *path = NULL;

    if (info->hdr.len == 0 || p + info->hdr.len > end)
      return;
    p += info->hdr.len;
    if (info->hdr.info_type != FAN_EVENT_INFO_TYPE_DFID_NAME)
      continue;
    name = (const char *)h->f_handle + h->handle_bytes;
    if ((rel = dir_rel(f, h)) == NULL)
      continue;
    if (strcmp(name, ".") == 0)
      path = xfmt("%s%s", f->ws_path, rel);
    else
      path = xfmt("%s%s/%s", strcmp(f->ws_path, "/") == 0 ? "" : f->ws_path, rel, name);
    if ((md->mask & FAN_ONDIR) && (md->mask & (FAN_DELETE | FAN_MOVED_FROM | FAN_MOVED_TO)))
      cache_clear(f); /* directory paths below it changed */
    note(m, f, path, md->mask, md->pid);
  }
}

static void files_read(struct monitor *m, int fd, short revents, void *ctx)
{
  struct files *f = ctx;
  uint8_t buf[32768] __attribute__((aligned(8)));

  for (int i = 0; i < FILES_READ_MAX; i++) {
    ssize_t n = read(fd, buf, sizeof buf);
    const struct fanotify_event_metadata *md = (const void *)buf;

    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return;
    for (; FAN_EVENT_OK(md, n); md = FAN_EVENT_NEXT(md, n)) {
      if (md->vers != FANOTIFY_METADATA_VERSION)
        continue;
      if (md->mask & FAN_Q_OVERFLOW) {
        struct error err = {0};
        if (monitor_now_ms() - f->last_loss_ms >= 1000) {
          f->last_loss_ms = monitor_now_ms();
          error_set(&err, ENOBUFS, "file events lost (queue overflow)");
          monitor_error(m, "file", &err);
        }
        continue;
      }
      on_event(m, f, md);
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

static int mark(struct files *f, struct monitor *m)
{
  uint64_t mask = FAN_CREATE | FAN_DELETE | FAN_MODIFY | FAN_MOVED_FROM | FAN_MOVED_TO | FAN_ONDIR;
  struct error err = {0};

  if (fanotify_mark(f->fan, FAN_MARK_ADD | FAN_MARK_FILESYSTEM, mask, f->ws_fd, ".") == 0) {
    f->whole_fs = true;
    return 0;
  }
  error_set(&err, errno, "filesystem mark refused, only the workspace's top directory is watched");
  if (fanotify_mark(f->fan, FAN_MARK_ADD, mask | FAN_EVENT_ON_CHILD, f->ws_fd, ".") < 0)
    return -1;
  monitor_error(m, "file", &err);
  return 0;
}

int monitor_files_open(struct monitor *m, const char *workspace, struct error *err)
{
  struct files *f = xmalloc0(sizeof *f);

  f->ws_fd = f->fd_dir = -1;
  f->ws_path = xstrdup(workspace);
  f->fan = fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK | FAN_REPORT_DFID_NAME,
                         O_RDONLY | O_CLOEXEC | O_LARGEFILE);
  if (f->fan < 0) {
    error_errno(err, "fanotify_init");
    goto fail;
  }
  if ((f->ws_fd = open_workspace(m->init_pid, workspace, err)) < 0 ||
      (f->fd_dir = procfs_open("self/fd", O_PATH | O_DIRECTORY, err)) < 0)
    goto fail;
  if (!fd_path(f, f->ws_fd, f->ws_link, sizeof f->ws_link, &f->ws_link_len)) {
    error_errno(err, "workspace `%s`: read its path", workspace);
    goto fail;
  }
  if (strcmp(f->ws_link, "/") == 0)
    f->ws_link_len = 0; /* every path starts with it: compare against "" */
  if (mark(f, m) < 0) {
    error_errno(err, "fanotify_mark workspace `%s`", workspace);
    goto fail;
  }
  if (monitor_add_fd(m, f->fan, POLLIN, files_read, f) < 0) {
    error_set(err, 0, "too many monitor sources");
    goto fail;
  }
  monitor_set_flush(m, f->fan, files_flush);
  return 0;
fail:
  if (f->fan >= 0)
    close(f->fan);
  if (f->ws_fd >= 0)
    close(f->ws_fd);
  if (f->fd_dir >= 0)
    close(f->fd_dir);
  free(f->ws_path);
  free(f);
  return -1;
}
