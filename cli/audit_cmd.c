/* audit_cmd.c - `agentrt audit`: read, follow, summarise, verify and purge a
 * container's audit trail (audit/).
 *
 *   agentrt audit [--follow] [--since T] [--kind K[,K...]] [--format json|text]
 *                 [--summary] [--purge] [--dir DIR] ID
 *   agentrt audit verify [--dir DIR] ID
 *
 * The trail is found through <state dir>/audit while the container exists
 * under --root (or the default root), else in the data directory by id or
 * unique prefix, whichever engine root ran it (data_cmd.h), or at DIR/ID
 * with --dir, for a profile that names its own audit directory.  It
 * outlives the container until --purge or host-wide retention. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <sys/stat.h>
#include <time.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "audit/audit.h"
#include "audit/jbuf.h"
#include "cli/cli.h"
#include "common/util.h"
#include "cli/data_cmd.h"
#include "container/audit_cli.h"
#include "container/container.h"
#include "monitor/monitor.h"
#include "os/fsutil.h"

#define FOLLOW_POLL_MS 200

enum { A_FOLLOW = 1, A_SINCE, A_KIND, A_FORMAT, A_SUMMARY, A_PURGE, A_DIR, A_TREE, A_HELP };

static const struct opt_spec audit_specs[] = {
    {"follow", 'f', false, A_FOLLOW}, {"since", 0, true, A_SINCE},
    {"kind", 'k', true, A_KIND},      {"format", 0, true, A_FORMAT},
    {"summary", 0, false, A_SUMMARY}, {"purge", 0, false, A_PURGE},
    {"dir", 0, true, A_DIR},          {"tree", 0, false, A_TREE},
    {"help", 'h', false, A_HELP},     {NULL, 0, false, 0},
};

struct audit_args {
  bool follow, summary, purge, text, verify, tree;
  const char *dir, *id;
  struct audit_filter filter;
};

static void usage(void)
{
  printf("Usage: agentrt audit [--follow] [--since TIME|DURATION] [--kind K[,K...]]\n"
         "                     [--format json|text] [--summary] [--purge] [--dir DIR] [--tree] ID\n"
         "       agentrt audit verify [--dir DIR] ID\n"
         "       agentrt audit list [--format json|text]\n"
         "ID: a container id or a unique prefix of it, found in the data directory\n"
         "whichever engine root ran it (only --root's when given).\n"
         "Kinds: create start exec pause resume kill exit delete oom pids_limit process file\n"
         "       syscall dns denied flow cut monitor audit_error retention subagent_start\n"
         "       subagent_end subagent_commit subagent_discard subagent_kill\n"
         "--tree: the trail as text, each sub-agent's trail indented below it.\n"
         "verify says `ok` for a complete trail, `intact but incomplete` (exit 0) with how many\n"
         "records retention dropped, how many events were coalesced into counted records and\n"
         "where events were lost or a source was in error (an audit_error record);\n"
         "a removed or altered record fails (exit 1).\n");
}

static int parse_args(int argc, char **argv, struct audit_args *a, struct error *err)
{
  struct opt_iter it = {argc, argv, 1};
  const char *val;
  int id, n;

  if (argc > 1 && strcmp(argv[1], "verify") == 0) {
    a->verify = true;
    it.i = 2;
  }
again:
  while ((n = opt_next(&it, audit_specs, &id, &val, "audit", err)) == 1) {
    switch (id) {
    case A_FOLLOW:
      a->follow = true;
      break;
    case A_SINCE:
      if (audit_parse_time(val, &a->filter.since_ns) < 0)
        return error_set(err, 0,
                         "audit: --since: expected RFC 3339 time or duration (15m), got `%s`", val);
      break;
    case A_KIND: {
      cleanup_free char *s = xstrdup(val);
      char *save = NULL;
      for (char *tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
        strv_push(&a->filter.kinds, tok);
      break;
    }
    case A_FORMAT:
      if (strcmp(val, "text") != 0 && strcmp(val, "json") != 0)
        return error_set(err, 0, "audit: --format: expected `json` or `text`, got `%s`", val);
      a->text = strcmp(val, "text") == 0;
      break;
    case A_SUMMARY:
      a->summary = true;
      break;
    case A_PURGE:
      a->purge = true;
      break;
    case A_DIR:
      a->dir = val;
      break;
    case A_TREE:
      a->tree = true;
      break;
    case A_HELP:
      usage();
      return 1;
    }
  }
  if (n < 0)
    return -1;
  if (it.i < argc && a->id == NULL && strcmp(argv[it.i], "--") != 0) {
    a->id = argv[it.i++]; /* options may follow the id too */
    goto again;
  }
  if (a->id == NULL || it.i != argc)
    return error_set(err, 0, "audit: expected exactly one container id");
  return validate_container_id(a->id, err) < 0 ? -1 : 0;
}

/* The trail and the root of its container (*ret_root: g->root or hit's). */
static int find_trail(const struct global_opts *g, struct audit_args *a, char **ret_trail,
                      const char **ret_root, struct datadir_hit *hit, struct error *err)
{
  cleanup_free char *marker = xfmt("%s/%s/audit", g->root, a->id);
  struct global_opts gs;
  struct error e = {0};
  size_t len;

  *ret_root = g->root;
  if (a->dir != NULL) {
    *ret_trail = audit_trail_dir(g->store, a->dir, a->id);
    return 0;
  }
  if (read_file_at(AT_FDCWD, marker, 4096, ret_trail, &len, &e) == 0)
    return 0;
  if (data_find(g, DATA_AUDIT, a->id, &gs, hit, err) < 0)
    return -1;
  a->id = hit->id;
  *ret_root = hit->root;
  *ret_trail = audit_trail_dir(hit->store, NULL, hit->id);
  return 0;
}

static int open_trail(const char *trail, const char *id, struct error *err)
{
  int fd = open(trail, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

  if (fd < 0 && errno == ENOENT)
    return error_set(err, ENOENT, "audit `%s`: no audit trail (at `%s`)", id, trail);
  if (fd < 0)
    return error_errno(err, "audit `%s`: open `%s`", id, trail);
  return fd;
}

struct printer {
  const struct audit_args *a;
  struct audit_summary *sum;
  bool saw_delete;
};

static int print_line(void *ctx, const char *line, size_t len)
{
  struct printer *p = ctx;

  if (len > 16 && memmem(line, len, "\"kind\":\"delete\"", 15) != NULL)
    p->saw_delete = true;
  if (!audit_record_match(line, len, &p->a->filter))
    return 0;
  if (p->sum) {
    audit_summary_add(p->sum, line, len);
  } else if (p->a->text) {
    cleanup_free char *t = audit_record_text(line, len);
    printf("%s\n", t);
  } else {
    fwrite(line, 1, len, stdout);
    fputc('\n', stdout);
  }
  return 0;
}

/* The container still exists (its state directory under root) and the
 * monitor its create started is not running: killed while it ran. */
static bool monitor_dead(const char *root, const char *id)
{
  cleanup_free char *dir = root ? xfmt("%s/%s", root, id) : NULL;
  cleanup_close int dfd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;

  return dfd >= 0 && monitor_gone_at(dfd);
}

static int show(int fd, const struct audit_args *a, bool dead, struct error *err)
{
  struct printer p = {.a = a};
  struct audit_pos pos = {0};
  struct pollfd none = {.fd = -1};

  if (a->summary) {
    p.sum = audit_summary_new();
    if (dead)
      audit_summary_set_monitor_dead(p.sum);
  }
  if (audit_scan(fd, &pos, print_line, &p, err) < 0)
    goto fail;
  /* --follow: until the trail records the container's deletion */
  while (a->follow && !p.saw_delete && !a->summary) {
    fflush(stdout);
    poll(&none, 1, FOLLOW_POLL_MS);
    if (audit_scan(fd, &pos, print_line, &p, err) < 0)
      goto fail;
  }
  if (p.sum) {
    cleanup_free char *text = audit_summary_render(p.sum);
    fputs(text, stdout);
    audit_summary_free(p.sum);
  }
  return 0;
fail:
  audit_summary_free(p.sum);
  return -1;
}

/* --tree: the trail as text, then each sub-agent's (the ids of its
 * "subagent_start" records, monitor/subagents.h), indented below it. */
struct tree_printer {
  const struct audit_args *a;
  int depth;
  char **children;
};

static int tree_line(void *ctx, const char *line, size_t len)
{
  struct tree_printer *p = ctx;
  cleanup_free char *t = NULL;
  static const char start[] = "\"kind\":\"subagent_start\"", child[] = "\"child\":\"";

  if (memmem(line, len, start, sizeof start - 1) != NULL) {
    const size_t n = sizeof child - 1;
    const char *k = memmem(line, len, child, n);
    const char *e = k ? memchr(k + n, '"', len - (size_t)(k + n - line)) : NULL;
    if (e != NULL) {
      cleanup_free char *id = xstrndup(k + n, (size_t)(e - k - n));
      if (!strv_contains(p->children, id))
        strv_push(&p->children, id);
    }
  }
  if (!audit_record_match(line, len, &p->a->filter))
    return 0;
  t = audit_record_text(line, len);
  printf("%*s%s\n", 2 * p->depth, "", t);
  return 0;
}

static int show_tree(const struct global_opts *g, const struct audit_args *a0, int fd, int depth,
                     struct error *err)
{
  struct tree_printer p = {.a = a0, .depth = depth};
  struct audit_pos pos = {0};
  int r;

  printf("%*s== %s\n", 2 * depth, "", a0->id);
  r = audit_scan(fd, &pos, tree_line, &p, err);
  for (size_t i = 0; r == 0 && depth < 16 && p.children && p.children[i]; i++) {
    struct audit_args a = *a0;
    struct datadir_hit hit = {0};
    cleanup_free char *trail = NULL;
    cleanup_close int cfd = -1;
    const char *root;
    struct error e = {0};
    a.id = p.children[i];
    a.dir = NULL;
    if (find_trail(g, &a, &trail, &root, &hit, &e) < 0 || (cfd = open_trail(trail, a.id, &e)) < 0)
      printf("%*s== %s: %s\n", 2 * (depth + 1), "", p.children[i], e.msg);
    else
      r = show_tree(g, &a, cfd, depth + 1, err);
    datadir_hit_free(&hit);
  }
  strv_free(p.children);
  return r;
}

static int verify(int fd, const char *id, bool dead, struct error *err)
{
  struct audit_verify_result r;

  if (audit_verify(fd, &r, err) < 0)
    return error_prefix(err, "audit verify `%s`", id);
  if (dead && r.monitor_open)
    r.monitor_gone = true;
  if (!r.ok)
    return error_set(err, 0, "audit verify `%s`: first bad record: seq %" PRIu64 ": %s", id,
                     r.bad_seq, r.detail);
  if (r.dropped == 0 && r.coalesced_events == 0 && r.loss_records == 0 && r.error_records == 0 &&
      !r.monitor_gone) {
    printf("audit `%s`: ok: %" PRIu64 " records, seq %" PRIu64 "..%" PRIu64 " in %zu file%s\n", id,
           r.records, r.first_seq, r.last_seq, r.files, r.files == 1 ? "" : "s");
    return 0;
  }
  /* intact, but not everything is there one by one: never a plain "ok" */
  printf("audit `%s`: intact but incomplete: %" PRIu64 " records, seq %" PRIu64 "..%" PRIu64
         " in %zu file%s",
         id, r.records, r.first_seq, r.last_seq, r.files, r.files == 1 ? "" : "s");
  if (r.dropped > 0)
    printf("; %" PRIu64 " records dropped by retention%s", r.dropped,
           r.gaps > 0 ? " (the first records are kept)" : "");
  if (r.coalesced_events > 0)
    printf("; %" PRIu64 " events coalesced into %" PRIu64 " counted records", r.coalesced_events,
           r.coalesced_records);
  if (r.loss_records > 0) {
    printf("; events lost (%s): %" PRIu64 " audit_error record%s",
           r.lost_sources[0] ? r.lost_sources : "?", r.loss_records,
           r.loss_records == 1 ? "" : "s");
    if (r.lost_events > 0)
      printf(", %" PRIu64 " lost events counted", r.lost_events);
  }
  if (r.error_records > 0)
    printf("; not recorded, a source in error (%s): %" PRIu64 " audit_error record%s",
           r.error_sources[0] ? r.error_sources : "?", r.error_records,
           r.error_records == 1 ? "" : "s");
  if (r.monitor_gone)
    printf("; the monitor ended before the container (no exit record): what followed its last "
           "record is not recorded");
  printf("\n");
  return 0;
}

static int purge(const char *root, const char *trail, const char *id, struct error *err)
{
  cleanup_free char *state = xfmt("%s/%s", root, id);
  cleanup_free char *parent = xstrdup(trail);
  char *slash = strrchr(parent, '/');
  cleanup_close int pfd = -1;

  if (access(state, F_OK) == 0)
    return error_set(err, EBUSY, "audit `%s`: the container still exists: delete it first", id);
  *slash = '\0';
  pfd = open(*parent ? parent : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (pfd < 0 || rm_rf_at(pfd, slash + 1) < 0)
    return error_errno(err, "audit `%s`: remove `%s`", id, trail);
  return 0;
}

/* `audit list`: every trail of the data directory (only --root's when
 * given), with the engine root it belongs to. */
static int list_trails(const struct global_opts *g, int argc, char **argv, struct error *err)
{
  struct datadir_hit *v = NULL;
  size_t n = 0;
  bool json = false;

  if (argc == 3 && str_has_prefix(argv[2], "--format="))
    json = streq(argv[2] + 9, "json");
  else if (argc == 4 && streq(argv[2], "--format"))
    json = streq(argv[3], "json");
  else if (argc != 2)
    return error_set(err, 0, "audit list: expected `audit list [--format json|text]`");
  if (data_list(g, DATA_AUDIT, &v, &n, err) < 0)
    return -1;
  if (!json)
    printf("%-20s %-9s %-12s %-20s %s\n", "ID", "CONTAINER", "BYTES", "LAST WRITTEN",
           "ENGINE ROOT");
  else
    printf("[");
  for (size_t i = 0; i < n; i++) {
    cleanup_free char *dir = audit_trail_dir(v[i].store, NULL, v[i].id);
    cleanup_free char *head = xfmt("%s/head", dir);
    cleanup_free char *state = xfmt("%s/%s/state.json", v[i].root, v[i].id);
    const char *cs = access(state, F_OK) == 0 ? "exists" : "deleted";
    struct stat st = {0};
    char when[32] = "-";
    uint64_t bytes = 0;
    cleanup_close int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    uint64_t *files = NULL;
    size_t nf = 0;
    if (stat(head, &st) == 0)
      strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime(&st.st_mtim.tv_sec));
    if (dfd >= 0 && audit_list_files(dfd, &files, &nf, &(struct error){0}) == 0) {
      for (size_t j = 0; j < nf; j++) {
        struct stat fs;
        char name[32];
        snprintf(name, sizeof name, "%020" PRIu64 ".jsonl", files[j]);
        if (fstatat(dfd, name, &fs, AT_SYMLINK_NOFOLLOW) == 0)
          bytes += (uint64_t)fs.st_size;
      }
    }
    free(files);
    if (json) {
      struct jbuf b = {0};
      jb_key_str(&b, "id", v[i].id);
      jb_key_str(&b, "container", cs);
      jb_key_u64(&b, "bytes", bytes);
      jb_key_str(&b, "last_written", when);
      jb_key_str(&b, "root", v[i].root);
      jb_key_bool(&b, "legacy", v[i].legacy);
      printf("%s{%s}", i ? "," : "", jb_str(&b));
      jb_free(&b);
    } else
      printf("%-20s %-9s %-12" PRIu64 " %-20s %s%s\n", v[i].id, cs, bytes, when, v[i].root,
             v[i].legacy ? " (under the root itself)" : "");
    datadir_hit_free(&v[i]);
  }
  if (json)
    printf("]\n");
  free(v);
  return 0;
}

int cmd_audit(const struct global_opts *g, int argc, char **argv, struct error *err)
{
  if (argc >= 2 && streq(argv[1], "list"))
    return list_trails(g, argc, argv, err);
  struct audit_args a = {0};
  struct datadir_hit hit = {0};
  cleanup_free char *trail = NULL;
  cleanup_close int fd = -1;
  const char *root = g->root;
  int r = parse_args(argc, argv, &a, err);

  if (r != 0)
    goto out;
  if ((r = find_trail(g, &a, &trail, &root, &hit, err)) < 0)
    goto out;
  if ((fd = open_trail(trail, a.id, err)) < 0) {
    r = -1;
    goto out;
  }
  if (a.verify)
    r = verify(fd, a.id, monitor_dead(root, a.id), err);
  else if (a.purge)
    r = purge(root, trail, a.id, err);
  else if (a.tree)
    r = show_tree(g, &a, fd, 0, err);
  else
    r = show(fd, &a, a.summary && monitor_dead(root, a.id), err);
out:
  strv_free(a.filter.kinds);
  datadir_hit_free(&hit);
  return r < 0 ? -1 : 0;
}
