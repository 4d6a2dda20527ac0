/* verify.c - `agentrt audit verify ID`: walk the hash chain of a trail.
 *
 * Every record's hash is recomputed, seqs must follow each other (a deleted
 * or reordered line breaks that), each prev must be the previous record's
 * hash (a line rewritten with a fresh hash breaks the next link), each file
 * must start with the seq in its name, and the last record must be the one
 * `head` names (a deleted or added last line).  The trail is read under a
 * shared lock on head, so a concurrent writer is never seen mid-line.
 *
 * Retention (append.c) removes whole files but never the first one, and says
 * so in a "retention" record naming the seqs it dropped; a gap between two
 * files, or before the first kept file (a trail starting after seq 1), is
 * accepted only where such records cover it (a file removed by anything
 * else, the first one too, is reported as missing records), and a trail of
 * no records is no trail.
 * Counted records ("coalesced":N) are added up: verify says how much of
 * the trail is summarised, not only that it is intact.  So are the
 * monitor's records of events a kernel queue dropped (an "audit_error" with
 * "lost":true, or, from a monitor before that member, an error saying
 * "events lost"): a trail with such a record is never a plain ok, nor is one
 * with any other "audit_error" (a source, or the monitor, that could not be
 * set up: what it would have recorded is missing), nor a deleted
 * container's whose monitor left no record of its end (it was killed:
 * nothing after its last record was recorded).
 */
#include "audit/audit.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "audit/internal.h"
#include "common/util.h"

#define VERIFY_FILE_MAX ((size_t)256 << 20)

struct range {
  uint64_t from, to;
};

struct walk {
  struct audit_verify_result *r;
  bool monitor_started, monitor_ended, deleted;
  uint64_t last; /* 0 = no record yet */
  char last_hash[SHA256_HEX_LEN + 1];
  struct range *gaps, *declared;
  size_t n_gaps, n_declared;
};

static void push_range(struct range **v, size_t *n, uint64_t from, uint64_t to)
{
  if ((*n & (*n + 1)) == 0 || *n == 0)
    *v = xrealloc(*v, (*n + 1) * 2 * sizeof **v);
  (*v)[(*n)++] = (struct range){from, to};
}

/* The number after "key": in line (0 when absent). */
static uint64_t num_after(const char *line, size_t len, const char *key)
{
  size_t kl = strlen(key);

  for (const char *p = line; (p = memmem(p, len - (size_t)(p - line), key, kl)) != NULL; p += kl)
    return strtoull(p + kl, NULL, 10);
  return 0;
}

/* An audit_error's source into list (size AUDIT_SOURCES_LEN), once each.
 * Sources are the monitor's and create's own words, not the agent's. */
static void note_source(char *list, const char *rec, size_t len)
{
  const char *s = memmem(rec, len, "\"source\":\"", 10), *q;
  size_t used = strlen(list), n;

  if (s == NULL || (q = memchr(s + 10, '"', len - (size_t)(s + 10 - rec))) == NULL)
    return;
  n = (size_t)(q - (s + 10));
  for (const char *p = list; (p = memmem(p, strlen(p), s + 10, n)) != NULL; p += n)
    if ((p == list || p[-1] == ' ') && (p[n] == ',' || p[n] == '\0'))
      return;
  if (used + n + 3 > AUDIT_SOURCES_LEN)
    return;
  snprintf(list + used, AUDIT_SOURCES_LEN - used, "%s%.*s", used ? ", " : "", (int)n, s + 10);
}

/* What a record adds to the counts: "retention" declares a dropped range,
 * "coalesced" right after the kind counts summarised events, an
 * "audit_error" counts lost events or a source in error.  The id is a JSON string (no
 * bare quote), so the first ","kind":" is the member; an error message is
 * one too, so no name in it forges a "lost" member or a count (its quotes
 * are escaped): at most its words "events lost" add a loss, never hide one. */
static void note_record(struct walk *w, const char *line, size_t len)
{
  const char *k = memmem(line, len, "\",\"kind\":\"", 10), *end = line + len, *q;

  if (k == NULL || (q = memchr(k + 10, '"', (size_t)(end - (k + 10)))) == NULL)
    return;
  if ((size_t)(q - (k + 10)) == 9 && memcmp(k + 10, "retention", 9) == 0) {
    uint64_t from = num_after(q, (size_t)(end - q), "\"dropped_from\":");
    uint64_t to = num_after(q, (size_t)(end - q), "\"dropped_to\":");
    if (from > 0 && to >= from)
      push_range(&w->declared, &w->n_declared, from, to);
  } else if ((size_t)(q - (k + 10)) == 7 && memcmp(k + 10, "monitor", 7) == 0) {
    /* its first record names its sources, its last one (the container
     * still running) a state */
    if (memmem(q, (size_t)(end - q), "\"state\":", 8) != NULL)
      w->monitor_ended = true;
    else
      w->monitor_started = true;
  } else if ((size_t)(q - (k + 10)) == 4 && memcmp(k + 10, "exit", 4) == 0) {
    w->monitor_ended = true; /* the monitor's last record */
  } else if ((size_t)(q - (k + 10)) == 6 && memcmp(k + 10, "delete", 6) == 0) {
    w->deleted = true;
  } else if ((size_t)(q - (k + 10)) == 11 && memcmp(k + 10, "audit_error", 11) == 0) {
    if (memmem(q, (size_t)(end - q), "\"lost\":true", 11) != NULL ||
        memmem(q, (size_t)(end - q), "events lost", 11) != NULL) {
      w->r->loss_records++;
      w->r->lost_events += num_after(q, (size_t)(end - q), "\"lost_events\":");
      note_source(w->r->lost_sources, q, (size_t)(end - q));
    } else {
      /* a source (or the whole monitor) that could not be set up */
      w->r->error_records++;
      note_source(w->r->error_sources, q, (size_t)(end - q));
    }
  } else if (end - q > 14 && memcmp(q, "\",\"coalesced\":", 14) == 0) {
    w->r->coalesced_records++;
    w->r->coalesced_events += strtoull(q + 14, NULL, 10);
  }
}

/* Is [from, to] inside the union of the declared ranges? */
static bool declared(const struct walk *w, uint64_t from, uint64_t to)
{
  uint64_t cur = from;
  bool moved = true;

  while (cur <= to && moved) {
    moved = false;
    for (size_t i = 0; i < w->n_declared; i++) {
      if (w->declared[i].from <= cur && w->declared[i].to >= cur) {
        cur = w->declared[i].to + 1;
        moved = true;
      }
    }
  }
  return cur > to;
}

static int bad(struct walk *w, uint64_t seq, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int bad(struct walk *w, uint64_t seq, const char *fmt, ...)
{
  va_list ap;

  w->r->ok = false;
  w->r->bad_seq = seq;
  va_start(ap, fmt);
  vsnprintf(w->r->detail, sizeof w->r->detail, fmt, ap);
  va_end(ap);
  return -1;
}

static bool is_hex64(const char *s)
{
  for (int i = 0; i < SHA256_HEX_LEN; i++)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
      return false;
  return true;
}

static int check_line(struct walk *w, const char *line, size_t len, bool first_of_file,
                      uint64_t file_seq)
{
  uint64_t seq = audit_line_seq(line, len), want = w->last + 1;
  const char *hash, *prev;
  char calc[SHA256_HEX_LEN + 1];
  cleanup_free char *body = NULL;
  size_t blen;

  if (seq == 0)
    return bad(w, want, "malformed record after seq %" PRIu64, w->last);
  if (w->last != 0 && seq > want && first_of_file) {
    push_range(&w->gaps, &w->n_gaps, want, seq - 1); /* checked at the end */
    w->last = 0;                                     /* no link across it */
  } else if (w->last != 0 && seq != want)
    return bad(w, want,
               "seq %" PRIu64 " found where %" PRIu64 " was expected (record deleted, "
               "inserted or reordered)",
               seq, want);
  if (first_of_file && seq != file_seq)
    return bad(w, w->last ? want : seq, "file %020" PRIu64 ".jsonl starts with seq %" PRIu64,
               file_seq, seq);
  if (len < AUDIT_HASH_SUFFIX_LEN + AUDIT_PREV_LEN ||
      memcmp(line + len - AUDIT_HASH_SUFFIX_LEN, ",\"hash\":\"", 9) != 0 ||
      memcmp(line + len - 2, "\"}", 2) != 0 ||
      memcmp(line + len - AUDIT_HASH_SUFFIX_LEN - AUDIT_PREV_LEN, ",\"prev\":\"", 9) != 0)
    return bad(w, seq, "record %" PRIu64 " is malformed", seq);
  hash = line + len - AUDIT_HASH_SUFFIX_LEN + 9;
  prev = line + len - AUDIT_HASH_SUFFIX_LEN - AUDIT_PREV_LEN + 9;
  if (!is_hex64(hash) || !is_hex64(prev))
    return bad(w, seq, "record %" PRIu64 " is malformed", seq);
  blen = len - AUDIT_HASH_SUFFIX_LEN;
  body = xmalloc(blen + 1);
  memcpy(body, line, blen);
  body[blen] = '}';
  sha256_hex(body, blen + 1, calc);
  if (memcmp(calc, hash, SHA256_HEX_LEN) != 0)
    return bad(w, seq, "record %" PRIu64 " was modified (hash mismatch)", seq);
  if (w->last != 0 && memcmp(prev, w->last_hash, SHA256_HEX_LEN) != 0)
    return bad(w, seq, "record %" PRIu64 " does not link to record %" PRIu64, seq, w->last);
  if (w->last == 0 && seq == 1) {
    for (int i = 0; i < SHA256_HEX_LEN; i++)
      if (prev[i] != '0')
        return bad(w, 1, "record 1 does not start the chain");
  }
  if (w->r->first_seq == 0)
    w->r->first_seq = seq;
  note_record(w, line, len);
  w->last = seq;
  memcpy(w->last_hash, hash, SHA256_HEX_LEN);
  w->last_hash[SHA256_HEX_LEN] = '\0';
  w->r->records++;
  return 0;
}

static int read_whole(int fd, char **ret, size_t *ret_len, struct error *err)
{
  size_t cap = 65536, len = 0;
  char *buf = xmalloc(cap);
  ssize_t n;

  while ((n = read(fd, buf + len, cap - len)) > 0) {
    len += (size_t)n;
    if (len == cap) {
      if (cap >= VERIFY_FILE_MAX) {
        free(buf);
        return error_set(err, EFBIG, "audit file larger than %zu bytes", VERIFY_FILE_MAX);
      }
      buf = xrealloc(buf, cap *= 2);
    }
  }
  if (n < 0) {
    free(buf);
    return error_errno(err, "read audit file");
  }
  *ret = buf;
  *ret_len = len;
  return 0;
}

static int check_file(int trail_fd, uint64_t first, struct walk *w, struct error *err)
{
  char name[AUDIT_FILE_NAME_MAX];
  cleanup_free char *buf = NULL;
  cleanup_close int fd = -1;
  size_t len = 0, pos = 0;

  audit_file_name(first, name);
  fd = openat(trail_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return error_errno(err, "open audit file `%s`", name);
  if (read_whole(fd, &buf, &len, err) < 0)
    return error_prefix(err, "`%s`", name);
  /* bad() records the finding: the walk stops, verify still succeeds */
  if (len == 0) {
    bad(w, w->last + 1, "file %s is empty", name);
    return 1;
  }
  while (pos < len) {
    char *nl = memchr(buf + pos, '\n', len - pos);
    if (nl == NULL) {
      bad(w, w->last + 1, "file %s ends with a partial record", name);
      return 1;
    }
    if (check_line(w, buf + pos, (size_t)(nl - (buf + pos)), pos == 0, first) < 0)
      return 1;
    pos = (size_t)(nl - buf) + 1;
  }
  return 0;
}

int audit_verify(int trail_fd, struct audit_verify_result *r, struct error *err)
{
  cleanup_close int head = openat(trail_fd, "head", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  cleanup_free uint64_t *files = NULL;
  struct walk w = {.r = r};
  struct audit_head h;
  size_t n = 0;
  int ret = 0;

  memset(r, 0, sizeof *r);
  r->ok = true;
  if (head < 0)
    return error_errno(err, "open audit head");
  if (flock(head, LOCK_SH) < 0)
    return error_errno(err, "lock audit head");
  if (audit_head_read(head, &h, err) < 0 || audit_list_files(trail_fd, &files, &n, err) < 0) {
    ret = -1;
    goto out;
  }
  r->files = n;
  for (size_t i = 0; i < n && r->ok; i++) {
    if ((ret = check_file(trail_fd, files[i], &w, err)) < 0)
      goto out;
  }
  ret = 0;
  if (r->ok && w.last != h.seq)
    bad(&w, w.last < h.seq ? w.last + 1 : h.seq + 1,
        "the trail ends at seq %" PRIu64 " but its head records seq %" PRIu64
        " (records deleted or added at the end)",
        w.last, h.seq);
  else if (r->ok && h.seq != 0 && memcmp(w.last_hash, h.hash, SHA256_HEX_LEN) != 0)
    bad(&w, h.seq, "record %" PRIu64 " is not the one the head records (rewritten)", h.seq);
  for (size_t i = 0; r->ok && i < w.n_gaps; i++) {
    r->dropped += w.gaps[i].to - w.gaps[i].from + 1;
    if (!declared(&w, w.gaps[i].from, w.gaps[i].to))
      bad(&w, w.gaps[i].from,
          "records %" PRIu64 "..%" PRIu64 " are missing and no retention record drops them "
          "(audit file removed)",
          w.gaps[i].from, w.gaps[i].to);
  }
  /* retention never removes the first file: records before the first kept
   * one are missing unless a retention record says it dropped them (a trail
   * from before the first file was kept) */
  if (r->ok && r->first_seq > 1 && !declared(&w, 1, r->first_seq - 1))
    bad(&w, 1,
        "records 1..%" PRIu64 " are missing and no retention record drops them "
        "(the trail's first file removed)",
        r->first_seq - 1);
  /* create writes the first record before the container exists */
  if (r->ok && r->records == 0)
    bad(&w, 1, "the trail has no records (its files removed)");
  r->gaps = w.n_gaps;
  r->monitor_gone = w.monitor_started && w.deleted && !w.monitor_ended;
  r->monitor_open = w.monitor_started && !w.monitor_ended;
  if (r->first_seq > 1)
    r->dropped += r->first_seq - 1;
  r->last_seq = w.last;
out:
  free(w.gaps);
  free(w.declared);
  flock(head, LOCK_UN);
  return ret;
}
