/* monitor_flood.c - coalescing under a flood: records of one kind and one
 * program beyond a rate become one counted record a second.
 *
 * Each (kind, program) pair has a token bucket: FLOOD_BURST records in
 * full, then FLOOD_RATE a second.  What the bucket refuses is counted and,
 * after MONITOR_COALESCE_MS (or when the monitor exits), written as one
 * record of the same kind, {"coalesced":N,"program":..., first and last pid,
 * "since", "until"}.  So 40,000 execs of one program cost a few hundred full
 * records and a counted one a second instead of rotating the trail's
 * earlier evidence out; `audit verify` and `--summary` add the counts up.
 * Pairs live in a small table; when it is full the least recently used one
 * of a program (its count written first) makes room (find).
 *
 * The network's records have no program: "dns" per verdict, "denied" and
 * "flow" per direction, each standing for the events it counts (a netlog
 * record's packets), so a flood of lookups of random names or of packets to
 * random ports cannot rotate the trail's earlier evidence out either.
 * File changes ("file", no program: the kernel does not say which one made
 * them) are one bucket, and the changes the review would hold back another
 * ("review":"held back" in their counted record), which a flood of other
 * changes cannot empty (monitor_files.c).
 *
 * Records of a program (process, syscall) also take a token of their kind's
 * own bucket, all programs together (FLOOD_KIND_BURST, then FLOOD_KIND_RATE
 * a second), kept outside the table: a program of a new name is a new pair
 * with a full burst, and so is one the table evicted, so 12,000 hard links
 * of one binary run once each, or 129 programs run in turn, were every one
 * a full record and rotated every file of the trail but the first out
 * (audit-evidence.bats program-flood-rotation).  What that bucket refuses is
 * counted under the program "(various programs)" (refused calls: of the
 * syscall "(various)").
 */
#include <stdio.h>
#include <string.h>

#include "common/token_bucket.h"
#include "common/util.h"
#include "monitor/monitor_internal.h"

#define FLOOD_KEYS 128
#define FLOOD_BURST 200       /* full records of one kind and program before coalescing */
#define FLOOD_RATE 20         /* then this many a second */
#define FLOOD_KIND_BURST 1000 /* full records of one kind, every program together */
#define FLOOD_KIND_RATE 20
#define FLOOD_KINDS 4
#define KIND_PROGRAM "(various programs)" /* longer than a comm, and not a path */

struct flood_key {
  bool used;
  char kind[24];
  char program[256];
  char detail_key[16]; /* the member detail is written as ("syscall", "verdict", ...) */
  char detail[64];     /* "syscall": which one (refused-syscall records) */
  struct token_bucket bucket;
  int64_t used_ms;
  uint64_t held; /* events refused since the last counted record */
  pid_t first_pid, last_pid;
  int64_t since_ms;
  char since[40];
};

/* keys[0..n_keys) are taken, in the order they were first needed (never
 * given back, only reused): lookups and flushes read no further, so an idle
 * monitor's few keys keep the rest of the 59 KiB table untouched (a read
 * makes a page resident too) */
static struct flood_key keys[FLOOD_KEYS];
static size_t n_keys;
static struct flood_key kind_keys[FLOOD_KINDS]; /* never evicted */

static void write_counted(struct monitor *m, struct flood_key *k)
{
  struct jbuf b = {0};
  char until[40];

  if (k->held == 0)
    return;
  audit_timestamp(until, sizeof until);
  jb_printf(&b, "\"coalesced\":%llu", (unsigned long long)k->held);
  if (k->program[0] != '\0')
    jb_key_str(&b, "program", k->program);
  if (k->detail[0] != '\0')
    jb_key_str(&b, k->detail_key, k->detail);
  if (k->first_pid > 0) {
    jb_key_i64(&b, "first_pid", k->first_pid);
    jb_key_i64(&b, "last_pid", k->last_pid);
  }
  jb_key_str(&b, "since", k->since);
  jb_key_str(&b, "until", until);
  monitor_record(m, k->kind, jb_str(&b));
  jb_free(&b);
  k->held = 0;
}

/* The pair's bucket, made (with a full burst) when it has none.  Room is
 * made by evicting the least recently used pair of a program: those of no
 * program (file changes, lookups per verdict, packets per direction) are
 * few and the kind's only limit, so they stay (fixed escape,
 * flood-bucket-evicted: 140 programs of new names run between bursts of
 * file changes evicted the changes' bucket each time, and each burst had
 * 200 full records again, 1,100 in 8 s).  A pair of a program evicted has
 * its kind's bucket still (kind_find).  Only when no pair of a program is
 * left is one of the others evicted. */
static struct flood_key *find(struct monitor *m, const char *kind, const char *program,
                              const char *detail_key, const char *detail, int64_t now)
{
  struct flood_key *lru = NULL, *lru_any = &keys[0];

  for (size_t i = 0; i < n_keys; i++) {
    struct flood_key *k = &keys[i];
    if (strcmp(k->kind, kind) == 0 && strncmp(k->program, program, sizeof k->program - 1) == 0 &&
        strncmp(k->detail, detail, sizeof k->detail - 1) == 0)
      return k;
    if (k->program[0] != '\0' && (lru == NULL || k->used_ms < lru->used_ms))
      lru = k;
    if (k->used_ms < lru_any->used_ms)
      lru_any = k;
  }
  if (lru == NULL)
    lru = lru_any;
  if (n_keys < FLOOD_KEYS)
    lru = &keys[n_keys++];
  else
    write_counted(m, lru);
  *lru = (struct flood_key){.used = true};
  token_bucket_init(&lru->bucket, FLOOD_BURST, FLOOD_RATE, now);
  snprintf(lru->kind, sizeof lru->kind, "%s", kind);
  snprintf(lru->program, sizeof lru->program, "%s", program);
  snprintf(lru->detail_key, sizeof lru->detail_key, "%s", detail_key);
  snprintf(lru->detail, sizeof lru->detail, "%s", detail);
  return lru;
}

bool monitor_flood_admit(struct monitor *m, const char *kind, const char *program,
                         const char *detail, pid_t pid)
{
  return monitor_flood_admit_n(m, kind, program ? program : "?", "syscall", detail, pid, 1);
}

/* The bucket of every program of kind together, or NULL when all are taken. */
static struct flood_key *kind_find(const char *kind, const char *detail_key, int64_t now)
{
  for (size_t i = 0; i < FLOOD_KINDS; i++) {
    struct flood_key *k = &kind_keys[i];
    if (k->used && strcmp(k->kind, kind) == 0)
      return k;
    if (!k->used) {
      *k = (struct flood_key){.used = true};
      token_bucket_init(&k->bucket, FLOOD_KIND_BURST, FLOOD_KIND_RATE, now);
      snprintf(k->kind, sizeof k->kind, "%s", kind);
      snprintf(k->program, sizeof k->program, "%s", KIND_PROGRAM);
      snprintf(k->detail_key, sizeof k->detail_key, "%s", detail_key);
      if (strcmp(kind, "syscall") == 0) /* refused calls of every name too */
        snprintf(k->detail, sizeof k->detail, "(various)");
      return k;
    }
  }
  return NULL;
}

/* One token of k's bucket, or the event counted in k. */
static bool take(struct flood_key *k, pid_t pid, uint64_t n, int64_t now)
{
  k->used_ms = now;
  if (token_bucket_take(&k->bucket, now))
    return true;
  if (k->held == 0) {
    k->first_pid = pid;
    k->since_ms = now;
    audit_timestamp(k->since, sizeof k->since);
  }
  k->held += n;
  k->last_pid = pid;
  return false;
}

bool monitor_flood_admit_n(struct monitor *m, const char *kind, const char *program,
                           const char *detail_key, const char *detail, pid_t pid, uint64_t n)
{
  int64_t now = monitor_now_ms();
  struct flood_key *k = find(m, kind, program, detail_key, detail ? detail : "", now);

  if (!take(k, pid, n, now))
    return false;
  if (program[0] == '\0' || (k = kind_find(kind, detail_key, now)) == NULL)
    return true; /* no program: the pair is the kind's one bucket already */
  return take(k, pid, n, now);
}

bool monitor_flood_flush(struct monitor *m, bool final)
{
  int64_t now = monitor_now_ms();
  bool pending = false;

  for (size_t i = 0; i < n_keys + FLOOD_KINDS; i++) {
    struct flood_key *k = i < n_keys ? &keys[i] : &kind_keys[i - n_keys];
    if (k->held == 0)
      continue;
    if (final || now - k->since_ms >= MONITOR_COALESCE_MS)
      write_counted(m, k);
    else
      pending = true;
  }
  return pending;
}
