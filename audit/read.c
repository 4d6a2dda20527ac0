/* read.c - reading an audit trail: files in order, complete lines only
 * (a writer may be mid-line), filters and the text rendering. */
#include "audit/audit.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#include "audit/internal.h"
#include "audit/jbuf.h"
#include "common/util.h"

static int u64_cmp(const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* "<20 digits>.jsonl" -> first seq */
static bool parse_file_name(const char *name, uint64_t *ret)
{
  uint64_t v = 0;

  if (strlen(name) != 26 || strcmp(name + 20, ".jsonl") != 0)
    return false;
  for (int i = 0; i < 20; i++) {
    if (!isdigit((unsigned char)name[i]))
      return false;
    v = v * 10 + (uint64_t)(name[i] - '0');
  }
  *ret = v;
  return v > 0;
}

int audit_list_files(int trail_fd, uint64_t **ret, size_t *ret_n, struct error *err)
{
  int fd = openat(trail_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  uint64_t *v = NULL, seq;
  size_t n = 0, cap = 0;
  struct dirent *e;
  DIR *d;

  if (fd < 0 || (d = fdopendir(fd)) == NULL) {
    if (fd >= 0)
      close(fd);
    return error_errno(err, "list audit trail");
  }
  while ((e = readdir(d)) != NULL && n < 100000) {
    if (!parse_file_name(e->d_name, &seq))
      continue;
    if (n == cap)
      v = xrealloc(v, (cap = cap ? cap * 2 : 16) * sizeof *v);
    v[n++] = seq;
  }
  closedir(d);
  if (n > 0)
    qsort(v, n, sizeof *v, u64_cmp);
  *ret = v;
  *ret_n = n;
  return 0;
}

/* seq of a record line ({"seq":N,...), 0 when malformed */
uint64_t audit_line_seq(const char *line, size_t len)
{
  static const char pre[] = "{\"seq\":";
  uint64_t v = 0;
  size_t i = sizeof pre - 1;

  if (len < i || memcmp(line, pre, i) != 0)
    return 0;
  for (; i < len && isdigit((unsigned char)line[i]) && v < UINT64_MAX / 10; i++)
    v = v * 10 + (uint64_t)(line[i] - '0');
  return i < len && line[i] == ',' ? v : 0;
}

/* Deliver the complete lines of one file from *off; *off moves past them. */
static int scan_file(int fd, off_t *off, struct audit_pos *pos, audit_line_fn fn, void *ctx,
                     struct error *err)
{
  size_t cap = 65536, len = 0;
  cleanup_free char *buf = xmalloc(cap);
  ssize_t n;

  if (lseek(fd, *off, SEEK_SET) < 0)
    return error_errno(err, "seek audit file");
  for (;;) {
    char *start = buf, *nl;
    if (len == cap)
      buf = xrealloc(buf, cap *= 2); /* a line longer than the buffer */
    n = read(fd, buf + len, cap - len);
    if (n < 0)
      return error_errno(err, "read audit file");
    if (n == 0)
      return 0;
    len += (size_t)n;
    while ((nl = memchr(start, '\n', len - (size_t)(start - buf))) != NULL) {
      size_t l = (size_t)(nl - start);
      uint64_t seq = audit_line_seq(start, l);
      *off += (off_t)l + 1;
      if (seq == 0 || seq > pos->last_seq) {
        if (seq != 0)
          pos->last_seq = seq;
        if (fn(ctx, start, l) < 0)
          return 1;
      }
      start = nl + 1;
    }
    len -= (size_t)(start - buf);
    memmove(buf, start, len);
  }
}

int audit_scan(int trail_fd, struct audit_pos *pos, audit_line_fn fn, void *ctx, struct error *err)
{
  cleanup_free uint64_t *files = NULL;
  size_t n = 0;
  char name[AUDIT_FILE_NAME_MAX];

  if (audit_list_files(trail_fd, &files, &n, err) < 0)
    return -1;
  for (size_t i = 0; i < n; i++) {
    off_t off;
    int fd, r;
    if (files[i] < pos->file)
      continue;
    off = files[i] == pos->file ? pos->off : 0;
    audit_file_name(files[i], name);
    fd = openat(trail_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
      continue; /* pruned meanwhile */
    r = scan_file(fd, &off, pos, fn, ctx, err);
    close(fd);
    pos->file = files[i];
    pos->off = off;
    if (r != 0)
      return r < 0 ? -1 : 0;
  }
  return 0;
}

/* ---- time */

static int parse_duration(const char *s, int64_t *ret_ns)
{
  static const struct {
    char unit;
    int64_t ns;
  } units[] = {
      {'s', 1000000000LL}, {'m', 60000000000LL}, {'h', 3600000000000LL}, {'d', 86400000000000LL}};
  size_t len = strlen(s);
  cleanup_free char *num = NULL;
  uint64_t v;
  struct timespec now;

  if (len < 2)
    return -1;
  num = xstrndup(s, len - 1);
  if (parse_u64(num, &v) < 0 || v > 100000000)
    return -1;
  clock_gettime(CLOCK_REALTIME, &now);
  for (size_t i = 0; i < ARRAY_SIZE(units); i++) {
    int64_t ago;
    if (s[len - 1] != units[i].unit)
      continue;
    /* 100000000d is before any time a record can have: out of range */
    if (__builtin_mul_overflow((int64_t)v, units[i].ns, &ago) ||
        __builtin_sub_overflow((int64_t)now.tv_sec * 1000000000LL + now.tv_nsec, ago, ret_ns))
      return -1;
    return 0;
  }
  return -1;
}

int audit_parse_time(const char *s, int64_t *ret_ns)
{
  struct tm tm = {0};
  const char *p;
  int64_t frac = 0, scale = 100000000, off = 0;
  time_t t;

  if (parse_duration(s, ret_ns) == 0)
    return 0;
  p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
  if (p == NULL)
    return -1;
  if (*p == '.') {
    for (p++; isdigit((unsigned char)*p); p++) {
      frac += (*p - '0') * scale;
      scale /= 10;
    }
  }
  if (*p == '+' || *p == '-') {
    int hh, mm;
    if (sscanf(p + 1, "%2d:%2d", &hh, &mm) != 2 || strlen(p) != 6)
      return -1;
    off = (int64_t)(hh * 3600 + mm * 60) * (*p == '+' ? 1 : -1);
  } else if (strcmp(p, "Z") != 0) {
    return -1;
  }
  t = timegm(&tm);
  /* nanoseconds since the epoch hold the years 1678 to 2261 */
  if (__builtin_mul_overflow((int64_t)t - off, 1000000000LL, ret_ns) ||
      __builtin_add_overflow(*ret_ns, frac, ret_ns))
    return -1;
  return 0;
}

/* ---- filters and text */

static const char *rec_str(yajl_val v, const char *key)
{
  const char *path[] = {key, NULL};
  yajl_val s = yajl_tree_get(v, path, yajl_t_string);
  return s ? YAJL_GET_STRING(s) : NULL;
}

void audit_tree_bytes(yajl_val v)
{
  if (v == NULL)
    return;
  if (YAJL_IS_STRING(v)) {
    jb_bytes_unescape(v->u.string);
  } else if (YAJL_IS_ARRAY(v)) {
    for (size_t i = 0; i < v->u.array.len; i++)
      audit_tree_bytes(v->u.array.values[i]);
  } else if (YAJL_IS_OBJECT(v)) {
    for (size_t i = 0; i < v->u.object.len; i++) {
      jb_bytes_unescape((char *)v->u.object.keys[i]);
      audit_tree_bytes(v->u.object.values[i]);
    }
  }
}

static yajl_val parse_line(const char *line, size_t len)
{
  cleanup_free char *copy = xstrndup(line, len);
  yajl_val v = yajl_tree_parse(copy, NULL, 0);
  audit_tree_bytes(v);
  return v;
}

bool audit_record_match(const char *line, size_t len, const struct audit_filter *f)
{
  yajl_val v;
  const char *kind, *time;
  int64_t t;
  bool ok = true;

  if (f->since_ns == 0 && f->kinds == NULL)
    return true;
  v = parse_line(line, len);
  if (v == NULL)
    return false;
  kind = rec_str(v, "kind");
  time = rec_str(v, "time");
  if (f->kinds != NULL && !strv_contains(f->kinds, kind ? kind : ""))
    ok = false;
  if (ok && f->since_ns != 0 && (time == NULL || audit_parse_time(time, &t) < 0 || t < f->since_ns))
    ok = false;
  yajl_tree_free(v);
  return ok;
}

static void text_value(struct jbuf *b, yajl_val v)
{
  if (YAJL_IS_STRING(v)) {
    const char *s = YAJL_GET_STRING(v);
    if (*s == '\0' || strpbrk(s, " \t\n\"=") != NULL || jb_has_control(s, strlen(s)))
      jb_quote(b, s, strlen(s));
    else
      jb_puts(b, s);
  } else if (YAJL_IS_ARRAY(v)) {
    jb_puts(b, "[");
    for (size_t i = 0; i < v->u.array.len; i++) {
      if (i > 0)
        jb_puts(b, " ");
      text_value(b, v->u.array.values[i]);
    }
    jb_puts(b, "]");
  } else if (YAJL_IS_OBJECT(v)) {
    jb_puts(b, "{");
    for (size_t i = 0; i < v->u.object.len; i++) {
      jb_puts(b, i > 0 ? " " : "");
      jb_text(b, v->u.object.keys[i], strlen(v->u.object.keys[i]));
      jb_puts(b, "=");
      text_value(b, v->u.object.values[i]);
    }
    jb_puts(b, "}");
  } else if (YAJL_IS_NUMBER(v)) {
    jb_puts(b, YAJL_GET_NUMBER(v));
  } else {
    jb_puts(b, YAJL_IS_TRUE(v) ? "true" : YAJL_IS_FALSE(v) ? "false" : "null");
  }
}

char *audit_record_text(const char *line, size_t len)
{
  static const char *const skip[] = {"seq", "time", "id", "kind", "prev", "hash"};
  yajl_val v = parse_line(line, len);
  struct jbuf b = {0};

  if (v == NULL || !YAJL_IS_OBJECT(v)) {
    if (v)
      yajl_tree_free(v);
    jb_puts(&b, "(unparsable record) ");
    jb_text(&b, line, len);
    return jb_take(&b);
  }
  jb_printf(&b, "%s #%" PRIu64 " %-8s", rec_str(v, "time") ? rec_str(v, "time") : "?",
            audit_line_seq(line, len), rec_str(v, "kind") ? rec_str(v, "kind") : "?");
  for (size_t i = 0; i < v->u.object.len; i++) {
    bool skipped = false;
    for (size_t k = 0; k < ARRAY_SIZE(skip); k++)
      skipped |= strcmp(v->u.object.keys[i], skip[k]) == 0;
    if (skipped)
      continue;
    jb_puts(&b, " ");
    jb_text(&b, v->u.object.keys[i], strlen(v->u.object.keys[i]));
    jb_puts(&b, "=");
    text_value(&b, v->u.object.values[i]);
  }
  yajl_tree_free(v);
  return jb_take(&b);
}
