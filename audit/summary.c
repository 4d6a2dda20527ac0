/* summary.c - `agentrt audit ID --summary`: one screen of what happened
 * (programs run, files changed, hosts reached, hosts refused, how it ended).
 *
 * Hosts reached: names the resolver allowed ("(dns)") and destinations
 * actually connected to ("flow" records: address:port/proto with the number
 * of connections), the latter labelled with the name the resolver last
 * returned that address for, when the trail has that "dns" record. */
#include "audit/audit.h"

#include <stdio.h>
#include <string.h>
#include <yajl/yajl_tree.h>

#include "audit/internal.h"
#include "audit/jbuf.h"
#include "common/util.h"

#define SUMMARY_MAX_ITEMS 1000 /* distinct entries kept per list */
#define SUMMARY_SHOW 20        /* shown per list */
#define SUMMARY_SHOW_FIRST 200 /* files of rank < R_NEW shown, whatever else */

/* What a file entry is to the reviewer, most telling first: a path the
 * review holds back, a file that was there before (changed, deleted,
 * renamed, written through a link), a file the agent made.  The list keeps
 * and shows them in this order: 1,000 files made first put a host file's
 * change below "... and N more" (files-flood-hides-host-change), and past
 * the 1,000 kept, out of the list. */
enum rank { R_PROTECTED, R_EXISTING, R_NEW };

struct counted {
  char *key;
  char *extra; /* file ops, "dns" / "packet" */
  unsigned n;
  enum rank rank;
};

struct list {
  struct counted *v;
  size_t n, cap, dropped;
};

/* address -> the name an allowed "dns" record returned it for */
struct name_of {
  char *addr, *name;
};

struct ino_name {
  uint64_t ino, born; /* born: the inode's birth time (ns), 0 unknown */
  char *path;
};

#define SUMMARY_MAX_INOS 4096 /* names of files of several links kept (a scan each record) */
#define SUMMARY_INO_NAMES 16  /* ... of one inode */

struct audit_summary {
  struct list programs, files, reached, refused, syscalls;
  struct name_of *names;
  size_t n_names;
  char *id, *created, *ended, *exit_how;
  char *ws_path; /* the create record's workspace: programs run from it come first */
  bool monitor_started, monitor_ended, deleted; /* as verify.c tells a monitor that died */
  bool monitor_dead;                            /* the caller saw it gone, the container there */
  char *files_gap;              /* why the file list is incomplete (a "file" audit_error) */
  char *programs_gap;           /* process or exec-open events lost */
  char *net_gap;                /* network events or lookups lost: both host lists are incomplete */
  uint64_t losses, lost_events; /* audit_errors of lost events, the events they count */
  uint64_t errors;              /* other audit_errors: a source not set up ... */
  char *error_sources;          /* ... which ones: "file, syscall" */
  uint64_t records, oom;
  uint64_t last_seq, missing;            /* seqs absent from what was read */
  uint64_t coalesced, coalesced_records; /* events in counted records */
  struct ino_name *inos;                 /* names of files of several links, by inode */
  size_t n_inos, cap_inos;
};

/* The rank of an entry of rank was seen again as now: a file the agent made
 * stays its own when written again, unless the review holds it back. */
static enum rank rank_join(enum rank was, enum rank now)
{
  if (was == R_NEW && now != R_PROTECTED)
    return R_NEW;
  return now < was ? now : was;
}

/* Make room in a full list for an entry of rank: the latest entry of the
 * last rank after it goes (counted as dropped); false when there is none. */
static bool list_evict(struct list *l, enum rank rank)
{
  for (int r = R_NEW; r > (int)rank; r--) {
    for (size_t i = l->n; i-- > 0;) {
      if (l->v[i].rank != (enum rank)r)
        continue;
      free(l->v[i].key);
      free(l->v[i].extra);
      memmove(&l->v[i], &l->v[i + 1], (l->n - i - 1) * sizeof *l->v);
      l->n--;
      l->dropped++;
      return true;
    }
  }
  return false;
}

static void list_add_ranked(struct list *l, const char *key, const char *extra, unsigned count,
                            enum rank rank)
{
  for (size_t i = 0; i < l->n; i++) {
    if (strcmp(l->v[i].key, key) != 0)
      continue;
    l->v[i].n += count;
    l->v[i].rank = rank_join(l->v[i].rank, rank);
    if (extra && (l->v[i].extra == NULL || strstr(l->v[i].extra, extra) == NULL)) {
      char *x = l->v[i].extra ? xfmt("%s,%s", l->v[i].extra, extra) : xstrdup(extra);
      free(l->v[i].extra);
      l->v[i].extra = x;
    }
    return;
  }
  if (l->n >= SUMMARY_MAX_ITEMS && !list_evict(l, rank)) {
    l->dropped++;
    return;
  }
  if (l->n == l->cap)
    l->v = xrealloc(l->v, (l->cap = l->cap ? l->cap * 2 : 16) * sizeof *l->v);
  l->v[l->n++] = (struct counted){xstrdup(key), extra ? xstrdup(extra) : NULL, count, rank};
}

/* programs, hosts, syscalls: in order of first record */
static void list_add(struct list *l, const char *key, const char *extra, unsigned count)
{
  list_add_ranked(l, key, extra, count, R_PROTECTED);
}

static void list_free(struct list *l)
{
  for (size_t i = 0; i < l->n; i++) {
    free(l->v[i].key);
    free(l->v[i].extra);
  }
  free(l->v);
}

struct audit_summary *audit_summary_new(void)
{
  return xmalloc0(sizeof(struct audit_summary));
}

void audit_summary_free(struct audit_summary *s)
{
  if (s == NULL)
    return;
  list_free(&s->programs);
  list_free(&s->files);
  list_free(&s->reached);
  list_free(&s->refused);
  list_free(&s->syscalls);
  for (size_t i = 0; i < s->n_names; i++) {
    free(s->names[i].addr);
    free(s->names[i].name);
  }
  free(s->names);
  free(s->id);
  free(s->created);
  free(s->ended);
  free(s->exit_how);
  free(s->ws_path);
  free(s->files_gap);
  free(s->programs_gap);
  free(s->net_gap);
  free(s->error_sources);
  for (size_t i = 0; i < s->n_inos; i++)
    free(s->inos[i].path);
  free(s->inos);
  free(s);
}

static yajl_val get(yajl_val v, const char *key, yajl_type t)
{
  const char *path[] = {key, NULL};
  return yajl_tree_get(v, path, t);
}

static const char *get_str(yajl_val v, const char *key)
{
  yajl_val s = get(v, key, yajl_t_string);
  return s ? YAJL_GET_STRING(s) : NULL;
}

static long long get_int(yajl_val v, const char *key, long long def)
{
  yajl_val n = get(v, key, yajl_t_number);
  return n && YAJL_IS_INTEGER(n) ? YAJL_GET_INTEGER(n) : def;
}

static void set(char **dst, const char *v)
{
  free(*dst);
  *dst = v ? xstrdup(v) : NULL;
}

/* Is n the file of inode ino born then?  An inode number freed is given to
 * another file, of another birth time (inode-reused-links); records without
 * one (an older monitor's) are joined by the number alone. */
static bool ino_is(const struct ino_name *n, uint64_t ino, uint64_t born)
{
  return n->ino == ino && (n->born == 0 || born == 0 || n->born == born);
}

/* Note path as a name of inode ino (once; a bounded number of each and of
 * all: the agent makes the links, the scans are the reader's time). */
static void ino_note(struct audit_summary *s, uint64_t ino, uint64_t born, const char *path)
{
  unsigned named = 0;

  for (size_t i = 0; i < s->n_inos; i++)
    if (ino_is(&s->inos[i], ino, born) &&
        (++named >= SUMMARY_INO_NAMES || streq(s->inos[i].path, path)))
      return;
  if (s->n_inos >= SUMMARY_MAX_INOS)
    return;
  if (s->n_inos == s->cap_inos)
    s->inos =
        xrealloc(s->inos, (s->cap_inos = s->cap_inos ? s->cap_inos * 2 : 16) * sizeof *s->inos);
  s->inos[s->n_inos++] = (struct ino_name){ino, born, xstrdup(path)};
}

/* Each change of ops (modify, attrib, close_write, unverified) through path is a change
 * of other too. */
static void add_via(struct audit_summary *s, const char *other, const char *path, yajl_val ops)
{
  for (size_t j = 0; ops && j < ops->u.array.len; j++) {
    const char *op =
        YAJL_IS_STRING(ops->u.array.values[j]) ? YAJL_GET_STRING(ops->u.array.values[j]) : "";
    if (!streq(op, "modify") && !streq(op, "attrib") && !streq(op, "close_write") &&
        !streq(op, "unverified"))
      continue;
    cleanup_free char *how = xfmt("%s via %s", op, path);
    list_add_ranked(&s->files, other, how, 1, R_EXISTING);
  }
}

/* A change through one name of a file of several ("links": the others the
 * monitor saw) is a change of the others too: a host file linked and
 * written through the link (hardlink-alias).  The monitor remembers a
 * bounded number of names; the records' "ino" joins a later change to the
 * names an earlier record of that inode gave (hardlink-alias-evicted: 200
 * files made between `ln h1 k1` and a write through k1 left that write
 * without h1). */
static void add_links(struct audit_summary *s, yajl_val v, const char *path, yajl_val ops)
{
  yajl_val links = get(v, "links", yajl_t_array);
  long long ino = get_int(v, "ino", -1), born = get_int(v, "born", 0);

  for (size_t i = 0; links && i < links->u.array.len; i++) {
    if (!YAJL_IS_STRING(links->u.array.values[i]))
      continue;
    add_via(s, YAJL_GET_STRING(links->u.array.values[i]), path, ops);
    if (ino >= 0)
      ino_note(s, (uint64_t)ino, (uint64_t)born, YAJL_GET_STRING(links->u.array.values[i]));
  }
  if (ino < 0)
    return;
  ino_note(s, (uint64_t)ino, (uint64_t)born, path);
  for (size_t i = 0; i < s->n_inos; i++)
    if (ino_is(&s->inos[i], (uint64_t)ino, (uint64_t)born) && !streq(s->inos[i].path, path))
      add_via(s, s->inos[i].path, path, ops);
}

static void add_file(struct audit_summary *s, yajl_val v)
{
  const char *path = get_str(v, "path");
  yajl_val ops = get(v, "ops", yajl_t_array);
  long long n = get_int(v, "coalesced", 0);
  enum rank rank;

  if (n > 0) { /* a counted record: n changes under a flood, their paths not kept */
    s->files.dropped += (size_t)n;
    return;
  }
  if (path == NULL)
    return;
  /* a copy-up's create is not in the record: no create, a file that was there */
  rank = R_EXISTING;
  for (size_t i = 0; ops && i < ops->u.array.len; i++)
    if (YAJL_IS_STRING(ops->u.array.values[i]) &&
        streq(YAJL_GET_STRING(ops->u.array.values[i]), "create"))
      rank = R_NEW;
  if (get(v, "protected", yajl_t_true) != NULL)
    rank = R_PROTECTED;
  list_add_ranked(&s->files, path, NULL, 1, rank);
  for (size_t i = 0; ops && i < ops->u.array.len; i++)
    if (YAJL_IS_STRING(ops->u.array.values[i]))
      list_add_ranked(&s->files, path, YAJL_GET_STRING(ops->u.array.values[i]), 0, rank);
  add_links(s, v, path, ops);
}

static const char *base_name(const char *path)
{
  const char *slash = strrchr(path, '/');

  return slash ? slash + 1 : path;
}

/* Is argv0 exe itself, or its bare name with exe in a system bin
 * directory (that directory itself: anywhere below /usr was trusted, and a
 * workspace at /usr/src/app let the agent's own `git` be listed as git)? */
static bool plain_name_of(const char *argv0, const char *exe)
{
  static const char *const sys[] = {"/usr/bin/",       "/usr/sbin/",       "/bin/",        "/sbin/",
                                    "/usr/local/bin/", "/usr/local/sbin/", "/usr/libexec/"};
  size_t dir = (size_t)(base_name(exe) - exe);

  if (streq(argv0, exe))
    return true;
  if (strchr(argv0, '/') != NULL || !streq(argv0, base_name(exe)))
    return false;
  for (size_t i = 0; i < ARRAY_SIZE(sys); i++)
    if (dir == strlen(sys[i]) && strncmp(exe, sys[i], dir) == 0)
      return true;
  return false;
}

/* Is exe the dynamic loader (ld-linux-x86-64.so.2, ld-musl-x86_64.so.1,
 * ld.so)?  Run by itself, it maps and runs the program its arguments name,
 * and the kernel's exe is the loader's: `ld.so /tmp/tool` was listed as
 * the loader alone (loader-spoof). */
static bool is_loader(const char *exe)
{
  const char *b = base_name(exe);

  return streq(b, "ld.so") || (strncmp(b, "ld-", 3) == 0 && strstr(b, ".so") != NULL);
}

/* The program a loader's argv runs: the first word after its options (glibc's
 * and musl's; an option it does not know counts as one without a value). */
static const char *loaded_program(yajl_val argv)
{
  static const char *const with_value[] = {
      "--library-path",         "--inhibit-rpath",    "--audit", "--preload", "--argv0",
      "--glibc-hwcaps-prepend", "--glibc-hwcaps-mask"};

  for (size_t i = 1; argv != NULL && i < argv->u.array.len; i++) {
    const char *w =
        YAJL_IS_STRING(argv->u.array.values[i]) ? YAJL_GET_STRING(argv->u.array.values[i]) : NULL;
    bool takes = false;
    if (w == NULL)
      return NULL;
    if (streq(w, "--"))
      continue;
    if (strncmp(w, "--", 2) != 0)
      return w;
    for (size_t j = 0; j < ARRAY_SIZE(with_value); j++)
      takes = takes || streq(w, with_value[j]);
    i += takes;
  }
  return NULL;
}

/* A program's rank: one the agent may have made or fetched (a file outside
 * the image's system directories, or in the workspace) comes before the
 * system's own (R_NEW: the rest), so that running 20 system tools first
 * does not push /tmp/exfil below "... and N more"
 * (programs-flood-hides-agent-binary). */
static enum rank program_rank(const struct audit_summary *s, const char *path)
{
  static const char *const sys[] = {"/usr/", "/bin/", "/sbin/", "/lib/", "/lib64/", "/opt/"};
  size_t n = s->ws_path ? strlen(s->ws_path) : 0;

  if (path == NULL || path[0] != '/')
    return R_EXISTING;
  if (n > 0 && strncmp(path, s->ws_path, n) == 0 && (path[n] == '/' || s->ws_path[n - 1] == '/'))
    return R_EXISTING;
  for (size_t i = 0; i < ARRAY_SIZE(sys); i++)
    if (strncmp(path, sys[i], strlen(sys[i])) == 0)
      return R_NEW;
  return R_EXISTING;
}

/* The files a program's pid opened by exec before the exec that ran
 * ("exec_before": ones that could not run, or a program that ran and
 * then exec'd one that could not): each listed, for one of them may have
 * run (exec-opens-decoy). */
static void add_exec_before(struct audit_summary *s, yajl_val v)
{
  yajl_val before = get(v, "exec_before", yajl_t_array);

  for (size_t i = 0; before && i < before->u.array.len; i++) {
    if (!YAJL_IS_STRING(before->u.array.values[i]))
      continue;
    cleanup_free char *key = xfmt("%s (opened by exec before it, may have run)",
                                  YAJL_GET_STRING(before->u.array.values[i]));
    list_add_ranked(&s->programs, key, NULL, 1,
                    program_rank(s, YAJL_GET_STRING(before->u.array.values[i])));
  }
}

static void add_program(struct audit_summary *s, yajl_val v)
{
  yajl_val argv = get(v, "argv", yajl_t_array);
  const char *exe = get_str(v, "exe"), *name = exe;
  long long n = get_int(v, "coalesced", 0);

  /* an exec call whose file was not there (monitor_exec.c): a PATH
   * search's miss, not a program that ran; the JSON trail keeps it */
  if (yajl_tree_get(v, (const char *[]){"found", NULL}, yajl_t_false) != NULL)
    return;
  add_exec_before(s, v);
  if (n > 0) { /* a counted record: n starts of one program */
    list_add_ranked(&s->programs, get_str(v, "program") ? get_str(v, "program") : "?", "counted",
                    (unsigned)n, program_rank(s, get_str(v, "program")));
    return;
  }
  if (argv && argv->u.array.len > 0 && YAJL_IS_STRING(argv->u.array.values[0]))
    name = YAJL_GET_STRING(argv->u.array.values[0]);
  else if (get_str(v, "comm"))
    name = get_str(v, "comm");
  /* a script exec'd by its own file: /proc's exe and argv[0] name its
   * interpreter (script-hidden: /tmp/x.sh was listed as "/bin/sh") */
  if (get_str(v, "script") != NULL) {
    cleanup_free char *key =
        xfmt("%s (script, run by %s)", get_str(v, "script"), exe != NULL ? exe : "?");
    list_add_ranked(&s->programs, key, NULL, 1, program_rank(s, get_str(v, "script")));
    return;
  }
  if (exe != NULL && is_loader(exe) && loaded_program(argv) != NULL) {
    cleanup_free char *key = xfmt("%s (run by the loader %s)", loaded_program(argv), exe);
    list_add_ranked(&s->programs, key, NULL, 1, R_EXISTING);
    return;
  }
  /* argv[0] is the program's own choice (exec -a git /tmp/exfil listed
   * "git"): the file that ran is named too, unless argv[0] is its path or
   * the bare name of a file in a system directory (argv0-spoof) */
  if (name != NULL && exe != NULL && name != exe && !plain_name_of(name, exe)) {
    cleanup_free char *key = xfmt("%s (exe %s)", name, exe);
    list_add_ranked(&s->programs, key, NULL, 1, program_rank(s, exe));
    return;
  }
  list_add_ranked(&s->programs, name ? name : "?", NULL, 1, program_rank(s, exe ? exe : name));
}

static void add_exit(struct audit_summary *s, yajl_val v)
{
  long long code = get_int(v, "code", -1), sig = get_int(v, "signal", -1);

  set(&s->ended, get_str(v, "time"));
  free(s->exit_how);
  if (sig > 0)
    s->exit_how = xfmt("killed by signal %lld", sig);
  else if (code >= 0)
    s->exit_how = xfmt("exit code %lld", code);
  else
    s->exit_how = xstrdup("exited");
}

static void remember_name(struct audit_summary *s, const char *addr, const char *name)
{
  for (size_t i = 0; i < s->n_names; i++) {
    if (strcmp(s->names[i].addr, addr) == 0) {
      set(&s->names[i].name, name); /* the latest answer wins */
      return;
    }
  }
  if (s->n_names >= SUMMARY_MAX_ITEMS)
    return;
  if ((s->n_names & (s->n_names - 1)) == 0) /* 0, 1, 2, 4, ...: grow */
    s->names = xrealloc(s->names, (s->n_names ? s->n_names * 2 : 1) * sizeof *s->names);
  s->names[s->n_names++] = (struct name_of){xstrdup(addr), xstrdup(name)};
}

static const char *name_for(const struct audit_summary *s, const char *addr)
{
  for (size_t i = 0; i < s->n_names; i++)
    if (strcmp(s->names[i].addr, addr) == 0)
      return s->names[i].name;
  return NULL;
}

static void add_dns(struct audit_summary *s, yajl_val v, const char *name)
{
  yajl_val addrs = get(v, "addrs", yajl_t_array);

  if (!streq(get_str(v, "verdict"), "allowed")) {
    list_add(&s->refused, name, get_str(v, "verdict"), 1);
    return;
  }
  list_add(&s->reached, name, "dns", 1);
  for (size_t i = 0; addrs && i < addrs->u.array.len; i++)
    if (YAJL_IS_STRING(addrs->u.array.values[i]))
      remember_name(s, YAJL_GET_STRING(addrs->u.array.values[i]), name);
}

/* An "audit_error": a file source that failed, or events a kernel queue
 * dropped ("lost": true; "events lost" in the error of an older monitor),
 * which make the lists of their source incomplete. */
static void add_error(struct audit_summary *s, yajl_val v)
{
  const char *source = get_str(v, "source"), *error = get_str(v, "error");
  bool lost = get(v, "lost", yajl_t_true) != NULL || (error && strstr(error, "events lost"));

  if (error == NULL)
    error = "?";
  if (streq(source, "file") && !s->files_gap)
    set(&s->files_gap, error);
  if (!lost) {
    s->errors++;
    if (source == NULL)
      source = "?";
    if (s->error_sources == NULL)
      s->error_sources = xstrdup(source);
    else if (strstr(s->error_sources, source) == NULL && strlen(s->error_sources) < 200) {
      char *x = xfmt("%s, %s", s->error_sources, source);
      free(s->error_sources);
      s->error_sources = x;
    }
    return;
  }
  s->losses++;
  if (get_int(v, "lost_events", 0) > 0)
    s->lost_events += (uint64_t)get_int(v, "lost_events", 0);
  if ((streq(source, "process") || streq(source, "exec_opens")) && !s->programs_gap)
    set(&s->programs_gap, error);
  else if ((streq(source, "net") || streq(source, "dns")) && !s->net_gap)
    set(&s->net_gap, error);
}

/* "198.51.100.7:80/tcp", "[2001:db8::1]:443/udp", "192.0.2.1/icmp" */
static char *destination(yajl_val v, const char *dst)
{
  const char *proto = get_str(v, "proto") ? get_str(v, "proto") : "?";
  long long port = get_int(v, "port", -1);
  bool v6 = strchr(dst, ':') != NULL;

  if (port < 0)
    return xfmt("%s/%s", dst, proto);
  return xfmt("%s%s%s:%lld/%s", v6 ? "[" : "", dst, v6 ? "]" : "", port, proto);
}

void audit_summary_add(struct audit_summary *s, const char *line, size_t len)
{
  cleanup_free char *copy = xstrndup(line, len);
  yajl_val v = yajl_tree_parse(copy, NULL, 0);
  const char *kind, *name;

  if (v == NULL)
    return;
  audit_tree_bytes(v);
  s->records++;
  {
    long long seq = get_int(v, "seq", 0), n = get_int(v, "coalesced", 0);
    if (seq > 0 && (uint64_t)seq > s->last_seq + 1)
      s->missing += (uint64_t)seq - s->last_seq - 1;
    if (seq > 0)
      s->last_seq = (uint64_t)seq;
    if (n > 0) {
      s->coalesced += (uint64_t)n;
      s->coalesced_records++;
    }
  }
  kind = get_str(v, "kind");
  if (s->id == NULL)
    set(&s->id, get_str(v, "id"));
  if (streq(kind, "create")) {
    const char *ws[] = {"workspace", "path", NULL};
    yajl_val w = yajl_tree_get(v, ws, yajl_t_string);
    set(&s->created, get_str(v, "time"));
    if (w != NULL)
      set(&s->ws_path, YAJL_GET_STRING(w));
  } else if (streq(kind, "process"))
    add_program(s, v);
  else if (streq(kind, "file"))
    add_file(s, v);
  else if (streq(kind, "exit")) {
    add_exit(s, v);
    s->monitor_ended = true;
  } else if (streq(kind, "monitor")) {
    if (get(v, "state", yajl_t_string) != NULL)
      s->monitor_ended = true;
    else
      s->monitor_started = true;
  } else if (streq(kind, "delete"))
    s->deleted = true;
  else if (streq(kind, "oom"))
    s->oom++;
  else if (streq(kind, "syscall") && (name = get_str(v, "syscall")) != NULL) {
    long long n = get_int(v, "coalesced", 0);
    cleanup_free char *key =
        xfmt("%s by %s", name, get_str(v, "program") ? get_str(v, "program") : "?");
    list_add(&s->syscalls, key, NULL, (unsigned)(n > 0 ? n : get_int(v, "count", 1)));
  } else if (streq(kind, "audit_error"))
    add_error(s, v);
  else if (streq(kind, "dns") && (name = get_str(v, "name")) != NULL)
    add_dns(s, v, name);
  else if (streq(kind, "flow") && (name = get_str(v, "dst")) != NULL) {
    cleanup_free char *key = destination(v, name);
    list_add(&s->reached, key, name_for(s, name), (unsigned)get_int(v, "count", 1));
  } else if (streq(kind, "denied") && (name = get_str(v, "dst")) != NULL) {
    cleanup_free char *key = destination(v, name);
    list_add(&s->refused, key, "packet", (unsigned)get_int(v, "count", 1));
  }
  yajl_tree_free(v);
}

/* How a ranked list names its first ranks and its last (NULL: not ranked,
 * in order of first record). */
struct ranking {
  const char *first, *rest, *protected_label;
};

static const struct ranking file_ranks = {"protected paths or files that were there before",
                                          "files it made", " [protected path]"};
static const struct ranking program_ranks = {"programs from outside the system directories",
                                             "programs of the system directories", NULL};
/* hosts and refused calls: each as telling as the next, all shown up to
 * SUMMARY_SHOW_FIRST (20 lookups of decoys pushed the host that mattered
 * below "... and N more": hosts-flood-hides-host) */
static const struct ranking all_first = {NULL, NULL, NULL};

static void render_entry(struct jbuf *b, const struct counted *c, const struct ranking *ranked)
{
  /* what the agent named (programs, paths, hosts): escaped for the terminal */
  jb_puts(b, "  ");
  jb_text(b, c->key, strlen(c->key));
  if (c->extra) {
    jb_puts(b, " (");
    jb_text(b, c->extra, strlen(c->extra));
    jb_puts(b, ")");
  }
  if (c->n > 1)
    jb_printf(b, " x%u", c->n);
  if (ranked && ranked->protected_label && c->rank == R_PROTECTED)
    jb_puts(b, ranked->protected_label);
  jb_puts(b, "\n");
}

/* gap: why the list is known to be incomplete, or NULL.  Entries go by
 * rank (files: held back, then files that were there, then new ones), each
 * rank in order of first record; those before R_NEW are all shown (up to
 * SUMMARY_SHOW_FIRST), and the line of the rest says how many of them
 * are of those ranks. */
static void render_list(struct jbuf *b, const char *title, const struct list *l, const char *gap,
                        const struct ranking *ranked)
{
  size_t shown = 0, hidden_first = 0;

  if (gap != NULL)
    jb_printf(b, "%s (incomplete: %zu%s recorded; %s):", title, l->n, l->dropped ? "+" : "", gap);
  else
    jb_printf(b, "%s (%zu%s):", title, l->n, l->dropped ? "+" : "");
  if (l->n == 0)
    jb_puts(b, " none");
  jb_puts(b, "\n");
  for (int r = R_PROTECTED; r <= R_NEW; r++) {
    for (size_t i = 0; i < l->n; i++) {
      bool first = ranked && r < R_NEW;
      if (l->v[i].rank != (enum rank)r)
        continue;
      if (shown >= (first ? SUMMARY_SHOW_FIRST : SUMMARY_SHOW)) {
        hidden_first += first;
        continue;
      }
      render_entry(b, &l->v[i], ranked);
      shown++;
    }
  }
  if (l->n > shown && hidden_first > 0 && ranked->first)
    jb_printf(b, "  ... and %zu more (%zu of them %s)\n", l->n - shown, hidden_first,
              ranked->first);
  else if (l->n > shown && ranked && ranked->rest)
    jb_printf(b, "  ... and %zu more (%s)\n", l->n - shown, ranked->rest);
  else if (l->n > shown)
    jb_printf(b, "  ... and %zu more\n", l->n - shown);
}

void audit_summary_set_monitor_dead(struct audit_summary *s)
{
  s->monitor_dead = true;
}

char *audit_summary_render(const struct audit_summary *s)
{
  struct jbuf b = {0};
  bool monitor_gone = s->monitor_started && (s->deleted || s->monitor_dead) && !s->monitor_ended;

  jb_printf(&b, "container %s: %llu records\n", s->id ? s->id : "?",
            (unsigned long long)s->records);
  jb_printf(&b, "created: %s\n", s->created ? s->created : "-");
  jb_printf(&b, "ended:   %s%s%s%s\n",
            s->ended                     ? s->ended
            : monitor_gone && s->deleted ? "unknown (deleted after its monitor ended)"
            : monitor_gone               ? "unknown (its monitor is not running)"
                                         : "still running",
            s->exit_how ? " (" : "", s->exit_how ? s->exit_how : "", s->exit_how ? ")" : "");
  if (s->missing || s->coalesced || s->losses || s->errors || monitor_gone) {
    const char *sep = "";
    jb_puts(&b, "incomplete:");
    if (s->missing) {
      jb_printf(&b, " %llu records dropped by retention (the first records are kept)",
                (unsigned long long)s->missing);
      sep = ";";
    }
    if (s->coalesced) {
      jb_printf(&b, "%s %llu events coalesced into %llu counted records", sep,
                (unsigned long long)s->coalesced, (unsigned long long)s->coalesced_records);
      sep = ";";
    }
    if (s->losses) {
      jb_printf(&b, "%s events lost (%llu audit_error records", sep, (unsigned long long)s->losses);
      if (s->lost_events)
        jb_printf(&b, ", %llu lost events counted", (unsigned long long)s->lost_events);
      jb_puts(&b, ")");
      sep = ";";
    }
    if (s->errors) {
      jb_printf(&b, "%s a source in error (", sep);
      jb_text(&b, s->error_sources, strlen(s->error_sources));
      jb_printf(&b, "): %llu audit_error record%s, its events not recorded",
                (unsigned long long)s->errors, s->errors == 1 ? "" : "s");
      sep = ";";
    }
    if (monitor_gone)
      jb_printf(&b,
                "%s the monitor ended before the container (no exit record): what followed "
                "its last record is not recorded",
                sep);
    jb_puts(&b, "\n");
  }
  if (s->oom)
    jb_printf(&b, "out of memory: %llu OOM kill event(s)\n", (unsigned long long)s->oom);
  render_list(&b, "programs run", &s->programs, s->programs_gap, &program_ranks);
  render_list(&b, "files changed", &s->files, s->files_gap, &file_ranks);
  render_list(&b, "hosts reached", &s->reached, s->net_gap, &all_first);
  render_list(&b, "hosts refused", &s->refused, s->net_gap, &all_first);
  render_list(&b, "syscalls refused", &s->syscalls, NULL, &all_first);
  return jb_take(&b);
}
