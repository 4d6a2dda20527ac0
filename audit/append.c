/* append.c - appending to an audit trail (see audit.h for the format).
 *
 * Writers: the container's monitor (long-lived handle) and CLI verbs (one
 * record each).  Every append takes an exclusive flock on `head`, reads the
 * last seq and hash from it, writes the new line with one write(2) on an
 * O_APPEND fd, then rewrites `head` in place (fixed size, one pwrite).  So
 * two processes never interleave lines or fork the chain, and a reader that
 * takes the lock shared sees a consistent end.
 *
 * A full file system does not lose records silently.  Every trail file keeps
 * AUDIT_LOSS_ROOM bytes allocated past its end (fallocate, KEEP_SIZE) that
 * only a loss record may use: a record that cannot get its blocks is not
 * written, and the first one refused writes there an "audit_error" ("source":
 * "trail", "lost": true) saying that records from there on are missing.  The
 * handle counts what it refuses after that and, once the file system has room
 * again, records the count before its next record.  Where the file system has
 * no fallocate, records are written as before and a short write is the error.
 */
#include "audit/audit.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "audit/internal.h"
#include "audit/jbuf.h"
#include "common/sha256.h"
#include "common/util.h"

struct audit_log {
  int dirfd, headfd, curfd;
  uint64_t cur; /* first seq of the file curfd is open on, 0 = none */
  char *id;
  bool full;          /* a record was refused for room: the rest are counted */
  uint64_t unwritten; /* records refused since (the first one included) */
};

/* Allocated past a file's end for one loss record; records leave it free. */
#define AUDIT_LOSS_ROOM 4096
/* Allocated at a time past what a record needs (at most to the file's cap). */
#define AUDIT_PREALLOC_STEP (32 * 1024)

void audit_timestamp(char *buf, size_t size)
{
  char t[RFC3339_NANO_SIZE];
  size_t n;

  rfc3339_now(t, NULL);
  n = strnlen(t, size - 1);
  memcpy(buf, t, n);
  buf[n] = '\0';
}

char *audit_trail_dir(const char *root, const char *dir_override, const char *id)
{
  if (dir_override != NULL && *dir_override != '\0')
    return xfmt("%s/%s", dir_override, id);
  return xfmt("%s/%s/%s", root, AUDIT_SUBDIR, id);
}

void audit_file_name(uint64_t first_seq, char buf[AUDIT_FILE_NAME_MAX])
{
  snprintf(buf, AUDIT_FILE_NAME_MAX, "%020" PRIu64 ".jsonl", first_seq);
}

/* ---- head */

int audit_head_read(int fd, struct audit_head *h, struct error *err)
{
  char buf[AUDIT_HEAD_LEN + 1];
  ssize_t n = pread(fd, buf, AUDIT_HEAD_LEN, 0);
  char hash[SHA256_HEX_LEN + 1];

  if (n < 0)
    return error_errno(err, "read audit head");
  if (n == 0) {
    memset(h, 0, sizeof *h);
    memset(h->hash, '0', SHA256_HEX_LEN);
    return 0;
  }
  buf[n] = '\0';
  if (n != AUDIT_HEAD_LEN ||
      sscanf(buf, "%20" SCNu64 " %64[0-9a-f] %20" SCNu64 " %20" SCNu64 " %20" SCNu64, &h->seq, hash,
             &h->cur, &h->lim.max_size, &h->lim.max_age) != 5 ||
      strlen(hash) != SHA256_HEX_LEN)
    return error_set(err, EBADMSG, "read audit head: corrupt");
  memcpy(h->hash, hash, sizeof hash);
  return 0;
}

static int head_write(int fd, const struct audit_head *h, struct error *err)
{
  char buf[AUDIT_HEAD_LEN + 1];
  int n =
      snprintf(buf, sizeof buf, "%020" PRIu64 " %s %020" PRIu64 " %020" PRIu64 " %020" PRIu64 "\n",
               h->seq, h->hash, h->cur, h->lim.max_size, h->lim.max_age);

  if (n != AUDIT_HEAD_LEN)
    return error_set(err, EINVAL, "write audit head: bad length %d", n);
  if (pwrite(fd, buf, (size_t)n, 0) != n)
    return error_errno(err, "write audit head");
  return 0;
}

/* ---- open */

static int mkdir_p(const char *path, struct error *err)
{
  cleanup_free char *p = NULL;

  /* the trail's parents are there but for a data directory's first trail:
   * one call, not one per component */
  if (mkdir(path, 0700) == 0 || errno == EEXIST)
    return 0;
  if (errno != ENOENT)
    return error_errno(err, "create audit directory `%s`", path);
  p = xstrdup(path);
  for (char *s = p + 1; *s; s++) {
    if (*s != '/')
      continue;
    *s = '\0';
    if (mkdir(p, 0700) < 0 && errno != EEXIST)
      return error_errno(err, "create audit directory `%s`", p);
    *s = '/';
  }
  if (mkdir(p, 0700) < 0 && errno != EEXIST)
    return error_errno(err, "create audit directory `%s`", p);
  return 0;
}

int audit_log_open(const char *trail_dir, const char *id, const struct audit_limits *lim,
                   bool create, struct audit_log **ret, struct error *err)
{
  struct audit_log *l;
  struct audit_head h;
  int r = 0;

  if (create && mkdir_p(trail_dir, err) < 0)
    return -1;
  l = xmalloc0(sizeof *l);
  l->headfd = l->curfd = -1;
  l->id = xstrdup(id);
  l->dirfd = open(trail_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (l->dirfd >= 0)
    l->headfd =
        openat(l->dirfd, "head", O_RDWR | O_NOFOLLOW | O_CLOEXEC | (create ? O_CREAT : 0), 0600);
  if (l->dirfd < 0 || l->headfd < 0) {
    int e = errno;
    audit_log_close(l);
    return error_set(err, e, "open audit trail `%s`", trail_dir);
  }
  if (lim != NULL) {
    if (flock(l->headfd, LOCK_EX) < 0) {
      audit_log_close(l);
      return error_errno(err, "lock audit trail `%s`", trail_dir);
    }
    r = audit_head_read(l->headfd, &h, err);
    if (r == 0) {
      h.lim = *lim;
      r = head_write(l->headfd, &h, err);
    }
    flock(l->headfd, LOCK_UN);
    if (r < 0) {
      audit_log_close(l);
      return error_prefix(err, "audit trail `%s`", trail_dir);
    }
  }
  *ret = l;
  return 0;
}

void audit_log_close(struct audit_log *l)
{
  if (l == NULL)
    return;
  if (l->curfd >= 0)
    close(l->curfd);
  if (l->headfd >= 0)
    close(l->headfd);
  if (l->dirfd >= 0)
    close(l->dirfd);
  free(l->id);
  free(l);
}

/* ---- append */

uint64_t audit_file_max(const struct audit_limits *lim)
{
  uint64_t m = lim->max_size / 4;

  if (lim->max_size == 0)
    return 64u << 20;
  if (m < 1024)
    m = 1024;
  return m > (64u << 20) ? 64u << 20 : m;
}

/* The record text: body (for the hash) then ,"hash":"..."}\n */
static char *format_record(const struct audit_log *l, uint64_t seq, const char *prev,
                           const char *kind, const char *fields, char ret_hash[SHA256_HEX_LEN + 1],
                           size_t *ret_len)
{
  struct jbuf b = {0};
  char ts[40];

  audit_timestamp(ts, sizeof ts);
  jb_printf(&b, "{\"seq\":%" PRIu64 ",\"time\":\"%s\"", seq, ts);
  jb_key_str(&b, "id", l->id);
  jb_key_str(&b, "kind", kind);
  if (fields != NULL && *fields != '\0') {
    jb_raw(&b, ",", 1);
    jb_puts(&b, fields);
  }
  jb_printf(&b, ",\"prev\":\"%s\"}", prev);
  sha256_hex(b.p, b.len, ret_hash);
  b.len--; /* drop the "}" that closed the hashed text */
  jb_printf(&b, ",\"hash\":\"%s\"}\n", ret_hash);
  *ret_len = b.len;
  return jb_take(&b);
}

/* The trail's first file (seq 1) holds its evidence: "create" with the
 * profile's changes, "monitor", the first programs and changes.  Retention
 * never removes it; it is closed at this size so that it stays small. */
uint64_t audit_pin_max(const struct audit_limits *lim)
{
  uint64_t m = lim->max_size / 8, floor = lim->max_size / 4;

  if (lim->max_size == 0)
    return 8u << 20;
  if (floor > (64u << 10))
    floor = 64u << 10;
  if (m < floor)
    m = floor;
  return m > (8u << 20) ? 8u << 20 : m;
}

/* Make curfd the file to append len bytes to (a new one named seq when the
 * current one is full or missing, unless stay: a loss record goes into the
 * current file's reserved room).  *created tells the caller to prune. */
static int pick_file(struct audit_log *l, struct audit_head *h, uint64_t seq, size_t len, bool stay,
                     bool *created, struct error *err)
{
  char name[AUDIT_FILE_NAME_MAX];
  struct stat st;
  uint64_t max = h->cur == 1 ? audit_pin_max(&h->lim) : audit_file_max(&h->lim);

  *created = false;
  if (h->cur != 0 && l->cur != h->cur) {
    if (l->curfd >= 0)
      close(l->curfd);
    audit_file_name(h->cur, name);
    l->curfd = openat(l->dirfd, name, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
    l->cur = l->curfd >= 0 ? h->cur : 0;
  }
  if (l->curfd >= 0 && l->cur == h->cur && fstat(l->curfd, &st) == 0 &&
      (stay || st.st_size == 0 || (uint64_t)st.st_size + len <= max))
    return 0;
  if (l->curfd >= 0)
    close(l->curfd);
  audit_file_name(seq, name);
  /* a file of that name can only be a leftover of an append that never
   * reached head: its record is not part of the chain */
  l->curfd = openat(l->dirfd, name,
                    O_WRONLY | O_APPEND | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (l->curfd < 0) {
    l->cur = 0;
    return error_errno(err, "create audit file `%s`", name);
  }
  l->cur = h->cur = seq;
  *created = true;
  return 0;
}

/* Make the next need bytes of fd's file need no new blocks (cap: the
 * file's size limit, for how much more to take at once).  0: they are
 * allocated; -1: the file system is full (errno ENOSPC or EDQUOT); 1: it
 * cannot allocate ahead (no fallocate): write and see. */
static int reserve(int fd, const struct stat *st, uint64_t need, uint64_t cap)
{
  uint64_t size = (uint64_t)st->st_size, alloc = (uint64_t)st->st_blocks * 512;
  uint64_t more = cap > size + need ? cap - size - need : 0;

  if (alloc >= size + need)
    return 0;
  if (more > AUDIT_PREALLOC_STEP)
    more = AUDIT_PREALLOC_STEP;
  if (more > 0 && fallocate(fd, FALLOC_FL_KEEP_SIZE, st->st_size, (off_t)(need + more)) == 0)
    return 0;
  if (fallocate(fd, FALLOC_FL_KEEP_SIZE, st->st_size, (off_t)need) == 0)
    return 0;
  return errno == ENOSPC || errno == EDQUOT ? -1 : 1;
}

/* Write one record after h (read under the lock) and advance h.  A loss
 * record (loss) may use the room the others leave; *no_room: the record was
 * not written because the file system is full (nothing changed). */
static int write_record(struct audit_log *l, struct audit_head *h, const char *kind,
                        const char *fields, bool loss, bool *created, bool *no_room,
                        struct error *err)
{
  cleanup_free char *line = NULL;
  char hash[SHA256_HEX_LEN + 1], name[AUDIT_FILE_NAME_MAX];
  size_t len;
  struct stat st;
  ssize_t n;
  uint64_t prev = h->cur;
  int r;

  *no_room = false;
  line = format_record(l, h->seq + 1, h->hash, kind, fields, hash, &len);
  if (len > AUDIT_MAX_RECORD)
    return error_set(err, E2BIG, "audit record `%s` too large (%zu bytes)", kind, len);
  if (pick_file(l, h, h->seq + 1, len, loss, created, err) < 0)
    return -1;
  if (fstat(l->curfd, &st) < 0)
    return error_errno(err, "audit file");
  r = reserve(l->curfd, &st, len + (loss ? 0 : AUDIT_LOSS_ROOM),
              h->cur == 1 ? audit_pin_max(&h->lim) : audit_file_max(&h->lim));
  if (r < 0) {
    int e = errno;
    if (*created) {
      /* the new file holds nothing: back to the one whose room is kept */
      audit_file_name(h->cur, name);
      unlinkat(l->dirfd, name, 0);
      close(l->curfd);
      l->curfd = -1;
      l->cur = 0;
      h->cur = prev;
      *created = false;
    }
    *no_room = true;
    return error_set(err, e, "write audit record: the file system holding the trail is full");
  }
  n = write(l->curfd, line, len);
  if (n != (ssize_t)len) {
    int e = n < 0 ? errno : ENOSPC;
    if (ftruncate(l->curfd, st.st_size) < 0) {
      /* the partial line fails verification, which is what it should do */
    }
    return error_set(err, e, "write audit record");
  }
  h->seq++;
  memcpy(h->hash, hash, sizeof hash);
  return head_write(l->headfd, h, err);
}

/* The trail's record of its own losses while its file system was full. */
static int write_loss(struct audit_log *l, struct audit_head *h, uint64_t count, bool *created,
                      bool *no_room, struct error *err)
{
  struct jbuf b = {0};
  cleanup_free char *what = NULL;
  int r;

  jb_key_str(&b, "source", "trail");
  jb_key_bool(&b, "lost", true);
  if (count > 0) {
    jb_key_u64(&b, "lost_events", count);
    what = xfmt("%" PRIu64 " record%s not written: the file system holding the trail was full",
                count, count == 1 ? " was" : "s were");
  } else {
    what = xstrdup("the file system holding the trail is full: the records from here on are not "
                   "written until it has room");
  }
  jb_key_str(&b, "error", what);
  r = write_record(l, h, "audit_error", jb_str(&b), count == 0, created, no_room, err);
  jb_free(&b);
  return r;
}

static int append_locked(struct audit_log *l, const char *kind, const char *fields,
                         struct error *err)
{
  struct audit_head h;
  struct audit_dropped d = {0};
  struct error e2 = {0};
  bool created = false, again, no_room;

  if (audit_head_read(l->headfd, &h, err) < 0)
    return -1;
  if (l->full) {
    /* room again?  The count first, then the record */
    if (write_loss(l, &h, l->unwritten, &again, &no_room, err) < 0) {
      if (no_room)
        l->unwritten++;
      return -1;
    }
    created = again;
    l->full = false;
    l->unwritten = 0;
  }
  if (write_record(l, &h, kind, fields, false, &again, &no_room, err) < 0) {
    if (no_room) {
      /* counted from here on, whether or not the room kept for the loss
       * record is still there (another writer may have used it) */
      l->full = true;
      l->unwritten = 1;
      write_loss(l, &h, 0, &again, &no_room, &e2);
    }
    return -1;
  }
  created = created || again;
  if (!created || !audit_prune(l->dirfd, &h.lim, h.cur, &d))
    return 0;
  /* what retention removed is itself a record: `audit verify` accepts a
   * gap in the chain only where one of these declares it */
  {
    char f[160];
    snprintf(f, sizeof f,
             "\"dropped_from\":%" PRIu64 ",\"dropped_to\":%" PRIu64 ",\"records\":%" PRIu64
             ",\"bytes\":%" PRIu64 ",\"files\":%zu",
             d.from, d.to, d.to - d.from + 1, d.bytes, d.files); /* records: all so far */
    return write_record(l, &h, "retention", f, false, &again, &no_room, err);
  }
}

int audit_log_append(struct audit_log *l, const char *kind, const char *fields, struct error *err)
{
  int r;

  if (flock(l->headfd, LOCK_EX) < 0)
    return error_errno(err, "lock audit trail");
  r = append_locked(l, kind, fields, err);
  flock(l->headfd, LOCK_UN);
  return r;
}

int audit_append_event(const char *trail_dir, const char *id, const char *kind, const char *fields,
                       struct error *err)
{
  struct audit_log *l = NULL;
  int r;

  if (audit_log_open(trail_dir, id, NULL, false, &l, err) < 0)
    return -1;
  r = audit_log_append(l, kind, fields, err);
  audit_log_close(l);
  return r;
}

/* ---- retention */

/* The seq of the last record of file `name` (0 when unreadable). */
static uint64_t last_seq_of(int dirfd, const char *name)
{
  cleanup_close int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  cleanup_free char *buf = xmalloc(AUDIT_MAX_RECORD + 2);
  struct stat st;
  off_t at;
  ssize_t n;
  char *end, *start;

  if (fd < 0 || fstat(fd, &st) < 0 || st.st_size < 2)
    return 0;
  at = st.st_size > AUDIT_MAX_RECORD + 1 ? st.st_size - AUDIT_MAX_RECORD - 1 : 0;
  n = pread(fd, buf, (size_t)(st.st_size - at), at);
  if (n < 2 || buf[n - 1] != '\n')
    return 0;
  buf[n - 1] = '\0';
  end = buf + n - 1;
  start = memrchr(buf, '\n', (size_t)(end - buf));
  start = start ? start + 1 : buf;
  return audit_line_seq(start, (size_t)(end - start));
}

/* Remove rotated files beyond the limits, oldest first, never the first
 * file of the trail (seq 1) nor the current one.  true: *ret says what:
 * from is the first seq retention ever removed (the one after the first
 * file), so each "retention" record declares the whole gap on its own and
 * a later prune that removes an earlier declaration loses nothing. */
bool audit_prune(int dirfd, const struct audit_limits *lim, uint64_t current,
                 struct audit_dropped *ret)
{
  cleanup_free uint64_t *files = NULL;
  cleanup_free off_t *sizes = NULL;
  struct error ignore = {0};
  uint64_t total = 0, fmax = audit_file_max(lim);
  /* the current file may still grow by fmax: keep room for it */
  uint64_t budget = lim->max_size > fmax ? lim->max_size - fmax : 0;
  size_t n = 0, keep_from = 0, first;
  time_t now = time(NULL);
  char name[AUDIT_FILE_NAME_MAX];
  struct stat st;

  memset(ret, 0, sizeof *ret);
  if (audit_list_files(dirfd, &files, &n, &ignore) < 0 || n < 2)
    return false;
  first = files[0] == 1 ? 1 : 0; /* the pinned evidence */
  sizes = xmalloc0(n * sizeof *sizes);
  for (size_t i = 0; i < n; i++) {
    audit_file_name(files[i], name);
    if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
      continue;
    sizes[i] = st.st_size;
    total += (uint64_t)st.st_size;
    /* too old: it and everything before it goes */
    if (lim->max_age > 0 && i >= first && files[i] != current &&
        now - st.st_mtime > (time_t)lim->max_age)
      keep_from = i + 1;
  }
  for (size_t i = first; i + 1 < n && files[i] != current; i++) {
    bool over = (lim->max_size > 0 && total > budget) || n - i > AUDIT_MAX_FILES;
    if (i >= keep_from && !over)
      break;
    audit_file_name(files[i], name);
    if (unlinkat(dirfd, name, 0) < 0)
      break;
    total -= (uint64_t)sizes[i];
    if (ret->files++ == 0)
      ret->from = files[i];
    ret->to = files[i + 1] - 1;
    ret->bytes += (uint64_t)sizes[i];
  }
  if (ret->files > 0 && first == 1) {
    uint64_t g = last_seq_of(dirfd, "00000000000000000001.jsonl");
    if (g > 0 && g < ret->from)
      ret->from = g + 1;
  }
  return ret->files > 0;
}
