/* audit.h - the audit trail: what a container did, recorded outside its reach.
 *
 * A trail is a directory (default <store>/.audit/<id>/, in the data
 * directory: datadir/datadir.h; mode 0700, outside the container's state dir
 * so it survives `delete` and a reboot) holding:
 *
 *   <first seq, 20 digits>.jsonl   the records, one JSON object per line,
 *                                  files in seq order (rotation)
 *   head                           fixed-size line: last seq, last hash,
 *                                  current file, size and age limits; its
 *                                  flock serialises every writer (the
 *                                  monitor and CLI verbs)
 *
 * Record: {"seq":N,"time":"<RFC 3339 UTC, ns>","id":"<container>","kind":"K",
 *          <fields of the kind>,"prev":"<hash of record N-1>","hash":"<H>"}
 * H = hex SHA-256 of the line without its hash member, i.e. of the text up to
 * and including the prev member followed by "}".  prev of seq 1 is 64 zeros.
 * `audit verify` recomputes every hash, checks seq continuity, prev links and
 * that the last record is the one `head` names: a modified, deleted,
 * inserted or reordered line is reported with the first bad seq.  Rotation
 * keeps the chain (the first record of a file links to the last of the
 * previous one).  Retention keeps the first file (seq 1: create, the
 * profile's changes, the first programs; closed at a small size) and removes
 * the oldest of the others, recording each removal in a "retention" record
 * (dropped_from, dropped_to, records, bytes, files); verify accepts a gap
 * only where those records declare it and reports what is missing.
 *
 * Kinds: create start exec pause resume kill delete exit oom (lifecycle),
 * process (a program started inside), file (workspace changes, coalesced),
 * dns, denied, flow (network: DNS decisions, denied packets, new allowed
 * connections with counts), monitor, audit_error, retention.  Under a flood
 * the monitor writes "counted" records of a kind: {"coalesced":N,
 * "program":..., "first_pid", "last_pid", "since", "until"} right after the
 * kind, for N events of that program not written one by one.
 */
#ifndef AGENTRT_AUDIT_H
#define AGENTRT_AUDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/error.h"

#define AUDIT_SUBDIR ".audit"
#define AUDIT_MAX_RECORD (64 * 1024) /* bytes per line, fields included */
#define AUDIT_MAX_FILES 64

struct audit_limits {
  uint64_t max_size; /* bytes for the whole trail, 0 = unbounded */
  uint64_t max_age;  /* seconds a rotated file is kept, 0 = forever */
};

struct audit_log;

/* dir_override/<id> when the profile names a directory, else
 * <store>/.audit/<id> (root: the store of the container's engine root). */
char *audit_trail_dir(const char *root, const char *dir_override, const char *id);

/* Open (create: mkdir -p, mode 0700) a trail.  lim (may be NULL) replaces
 * the limits stored in head; NULL keeps them.  Without create a missing trail
 * is err->code ENOENT. */
int audit_log_open(const char *trail_dir, const char *id, const struct audit_limits *lim,
                   bool create, struct audit_log **ret, struct error *err);
void audit_log_close(struct audit_log *l);
/* Append one record.  fields: JSON members without braces
 * ("\"pid\":12,\"argv\":[\"ls\"]") or NULL.  Takes the head lock. */
int audit_log_append(struct audit_log *l, const char *kind, const char *fields, struct error *err);
/* audit_log_open (no create) + append + close: for a CLI process. */
int audit_append_event(const char *trail_dir, const char *id, const char *kind, const char *fields,
                       struct error *err);

/* ---- reading (read.c) */

/* Where a reader is: file (first seq of it, 0 = start at the oldest), byte
 * offset, and the last seq delivered (records <= it are skipped). */
struct audit_pos {
  uint64_t file;
  off_t off;
  uint64_t last_seq;
};
/* Called for each complete line; a return < 0 stops the scan. */
typedef int (*audit_line_fn)(void *ctx, const char *line, size_t len);
/* Deliver every complete record after pos, updating pos. */
int audit_scan(int trail_fd, struct audit_pos *pos, audit_line_fn fn, void *ctx, struct error *err);
/* The log files of a trail, oldest first (first seqs). */
int audit_list_files(int trail_fd, uint64_t **ret, size_t *ret_n, struct error *err);
/* "2024-05-01T10:00:00Z", "...00.5Z", "+02:00" offsets -> ns since epoch;
 * also a duration before now: "90s", "15m", "2h", "3d". */
int audit_parse_time(const char *s, int64_t *ret_ns);

struct audit_filter {
  int64_t since_ns; /* 0 = all */
  char **kinds;     /* NULL = all */
};
/* Does a record pass the filter?  (parses "time" and "kind") */
bool audit_record_match(const char *line, size_t len, const struct audit_filter *f);
/* One line of text for a record: "TIME KIND key=value ...". */
char *audit_record_text(const char *line, size_t len);

/* The one-screen summary (summary.c): feed every record, then render. */
struct audit_summary;
struct audit_summary *audit_summary_new(void);
void audit_summary_add(struct audit_summary *s, const char *line, size_t len);
/* The container exists but its monitor is not running (monitor_gone_at):
 * without an end record, what followed its last record is missing. */
void audit_summary_set_monitor_dead(struct audit_summary *s);
char *audit_summary_render(const struct audit_summary *s);
void audit_summary_free(struct audit_summary *s);

/* ---- verifying (verify.c) */

#define AUDIT_SOURCES_LEN 64
struct audit_verify_result {
  bool ok;
  uint64_t records, first_seq, last_seq;
  size_t files;
  uint64_t bad_seq; /* first bad seq (0 when ok) */
  char detail[256];
  /* complete only when these are 0: */
  uint64_t dropped;           /* records removed by retention */
  size_t gaps;                /* holes in the chain, each declared by a "retention" record */
  uint64_t coalesced_events;  /* events summarised in counted records ... */
  uint64_t coalesced_records; /* ... that many */
  uint64_t loss_records;      /* "audit_error" records of events lost ("lost": true), */
  uint64_t lost_events;       /* with the events they count (where that is known), */
  char lost_sources[AUDIT_SOURCES_LEN]; /* and their sources: "process, net" */
  uint64_t error_records;               /* other "audit_error"s: a source not set up */
  char error_sources[AUDIT_SOURCES_LEN];
  /* the monitor started, the container was deleted, and no record of the
   * monitor's end ("exit", or "monitor" with a state) is there: it died */
  bool monitor_gone;
  /* the monitor started and no record of its end is there (it runs, or it
   * died while the container lives: the caller tells which) */
  bool monitor_open;
};
int audit_verify(int trail_fd, struct audit_verify_result *ret, struct error *err);

/* ---- helpers */

/* RFC 3339 UTC with nanoseconds, into buf (>= 32 bytes). */
void audit_timestamp(char *buf, size_t size);

#endif
