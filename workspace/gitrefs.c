/* gitrefs.c - the refs of a git dir that the agent changed, and the commits
 * they name (THREAT-MODEL.md, "Workspace protection rule").
 *
 * A ref file (below a git dir's `refs/`, `packed-refs`, `HEAD`,
 * `ORIG_HEAD`, `FETCH_HEAD`; the git dir a `.git` or a bare repository) is
 * git's data and committed by default; the operator's `git checkout -- .`,
 * `git restore .` or `git reset --hard` then writes the tree of the commit
 * it names.  So each commit a changed ref file names that differs from the
 * host's value of that ref is compared (gitobjects.c) with the commit the
 * host's same ref named (for a new ref, the host's HEAD; else nothing), and
 * the ref file is protected when the commit brings a risky entry, or when
 * one of the commits below it that the host's does not reach does
 * (ancestors_reason: `git reset --hard HEAD~2` checks one out).  A loose ref deleted beside a new
 * packed-refs (`git gc`) is checked for its packed value: held back, the host keeps its own.
 * A reflog (`logs/HEAD`, `logs/refs/...`) is read too: `git reset --hard HEAD@{1}` or `git
 * stash pop stash@{1}` checks out what an entry names, so both ids of each entry the agent
 * added (a line the host's reflog does not hold) are checked as values of its ref; an entry
 * of another form, or more than MAX_LOG_ADDED of them, protects the file.
 * Nothing is read for a review in which no ref file or reflog changed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "os/fsutil.h"
#include "workspace/internal.h"

#define MAX_REF_FILE ((uint64_t)64 << 20) /* packed-refs, FETCH_HEAD */
#define MAX_SYMREF_DEPTH 5
#define MAX_PARENTS 16 /* of a merge, read per commit */
#define MAX_WALK 20000 /* commits read to find the agent's below one tip */
#define MAX_WALK_S "20,000"
#define UNREADABLE "a ref agentrt cannot read (git checks out what it names)"
#define MAX_LOG_ADDED 4096 /* a reflog's new entries read (two commits each) */
#define MAX_LOG_ADDED_S "4,096"
#define MAX_HOST_REFS 100000 /* entries of the host's refs/ read (values allowed in reflogs) */

struct packed_ref {
  char *name;
  struct ws_oid id;
  struct ws_oid peeled; /* the "^<id>" line after a tag's, hlen 0 when none */
};

/* One parsed packed-refs file, sorted by name. */
struct packed {
  bool read;
  bool bad;
  struct packed_ref *v;
  size_t n;
};

/* A set of object ids (open addressing; hlen 0: an empty slot). */
struct oidset {
  struct ws_oid *v;
  size_t cap, n;
};

/* The git dir whose refs are being checked: kept while the changes (sorted
 * by path) stay in it. */
struct ws_gitrefs {
  char *gitdir;
  const struct ws_layers *l;
  int *fds; /* the layers and the host dir, for the objects */
  struct ws_gitodb *db;
  struct packed ws, host;
  /* commits found clean against clean_base (hlen 0: none), with every
   * commit below them that it does not reach: a walk stops at one, so that
   * the entries of a reflog (a chain of the agent's commits) are not each
   * walked down to the host's commit again */
  struct oidset clean;
  struct ws_oid clean_base;
  /* the values of the host's refs (loose and packed): a reflog entry
   * naming one brings nothing the host's git could not check out already */
  struct oidset host_vals;
  bool host_vals_read;
};

void ws_gitrefs_free(struct ws_gitrefs *r)
{
  if (r == NULL)
    return;
  for (size_t i = 0; i < r->ws.n; i++)
    free(r->ws.v[i].name);
  for (size_t i = 0; i < r->host.n; i++)
    free(r->host.v[i].name);
  free(r->ws.v);
  free(r->host.v);
  free(r->clean.v);
  free(r->host_vals.v);
  ws_gitodb_free(r->db);
  free(r->fds);
  free(r->gitdir);
  free(r);
}

/* Is there anything at path below rootfd (a whiteout too)? */
static bool exists_at(int rootfd, const char *path)
{
  cleanup_close int fd = ws_open_beneath(rootfd, path, O_PATH | O_NOFOLLOW, 0);
  return fd >= 0 || errno != ENOENT;
}

/* Read the regular file at path below rootfd: 1 with its bytes (NUL
 * terminated), 0 when it is not there or is not a regular file (a whiteout
 * or a directory hides what lies below), -1 when it cannot be read. */
static int read_file(int rootfd, const char *path, char **ret, size_t *ret_n)
{
  cleanup_close int fd = ws_open_beneath(rootfd, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK, 0);
  cleanup_close int pfd = -1;
  struct error ignore = {0};
  struct stat st;

  if (fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR)
      return 0;
    pfd = ws_open_beneath(rootfd, path, O_PATH | O_NOFOLLOW, 0);
    if (pfd >= 0 && fstat(pfd, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
      return 0; /* a whiteout: the file is deleted in this layer */
    return -1;
  }
  if (fstat(fd, &st) < 0)
    return -1;
  if (!S_ISREG(st.st_mode))
    return 0;
  return read_fd_all(fd, MAX_REF_FILE, ret, ret_n, &ignore) < 0 ? -1 : 1;
}

/* The file gitdir/rel in the workspace (the first layer that holds it, down
 * to the host dir) or, when host, on the host. */
static int ref_file_read(const struct ws_gitrefs *r, bool host, const char *rel, char **ret,
                         size_t *ret_n)
{
  cleanup_free char *path = *r->gitdir ? xfmt("%s/%s", r->gitdir, rel) : xstrdup(rel);

  for (size_t i = 0; !host && i < r->l->n; i++) {
    int k = read_file(r->l->fds[i], path, ret, ret_n);
    if (k != 0)
      return k;
    if (exists_at(r->l->fds[i], path))
      return 0; /* hidden here (a whiteout) */
  }
  return r->l->hostfd >= 0 ? read_file(r->l->hostfd, path, ret, ret_n) : 0;
}

/* An object id at s (40 or 64 hex digits followed by the end, a newline,
 * a space or a tab). */
static bool parse_id(const char *s, size_t n, struct ws_oid *ret)
{
  size_t k = 0;

  while (k < n && k <= 64 && ((s[k] >= '0' && s[k] <= '9') || (s[k] >= 'a' && s[k] <= 'f')))
    k++;
  if ((k != 40 && k != 64) || (k < n && s[k] != '\n' && s[k] != ' ' && s[k] != '\t'))
    return false;
  ret->hlen = k / 2;
  /* the bytes past a SHA-1 id are zero: two ids of one value are one value
   * bytewise (fuzz_gitreflog compares the reader's answers with memcmp) */
  memset(ret->b + ret->hlen, 0, sizeof ret->b - ret->hlen);
  return ws_git_parse_hex(s, k, ret->hlen, ret->b);
}

static int packed_cmp(const void *va, const void *vb)
{
  return strcmp(((const struct packed_ref *)va)->name, ((const struct packed_ref *)vb)->name);
}

/* Parse a packed-refs text ("# pack-refs with:" header, "<id> <name>"
 * lines, "^<id>" lines peeling the tag above) into p, unsorted; false on a
 * line of another form. */
static bool packed_parse(const char *s, size_t n, struct packed *p)
{
  for (size_t pos = 0; pos < n;) {
    const char *nl = memchr(s + pos, '\n', n - pos), *line = s + pos, *sp;
    size_t len = nl ? (size_t)(nl - line) : n - pos;
    struct ws_oid id;
    pos += len + 1;
    if (len == 0 || line[0] == '#')
      continue;
    if (line[0] == '^') { /* what git may take for the tag's target without reading it */
      if (p->n == 0 || !parse_id(line + 1, len - 1, &p->v[p->n - 1].peeled))
        return false;
      continue;
    }
    if (!parse_id(line, len, &id) || (sp = memchr(line, ' ', len)) == NULL || sp + 1 == line + len)
      return false;
    p->v = xrealloc(p->v, (p->n + 1) * sizeof *p->v);
    p->v[p->n++] =
        (struct packed_ref){xstrndup(sp + 1, (size_t)(line + len - sp - 1)), id, {{0}, 0}};
  }
  return true;
}

static struct packed *packed_of(struct ws_gitrefs *r, bool host)
{
  struct packed *p = host ? &r->host : &r->ws;
  cleanup_free char *text = NULL;
  size_t n;
  int k;

  if (p->read)
    return p;
  p->read = true;
  k = ref_file_read(r, host, "packed-refs", &text, &n);
  if (k < 0 || (k > 0 && !packed_parse(text, n, p)))
    p->bad = true;
  if (p->n > 1)
    qsort(p->v, p->n, sizeof *p->v, packed_cmp);
  return p;
}

static const struct packed_ref *packed_entry(struct packed *p, const char *name)
{
  struct packed_ref key = {.name = (char *)name};

  return p->n ? bsearch(&key, p->v, p->n, sizeof *p->v, packed_cmp) : NULL;
}

static const struct ws_oid *packed_find(struct packed *p, const char *name)
{
  const struct packed_ref *e = packed_entry(p, name);

  return e ? &e->id : NULL;
}

/* The id a ref's text names: an id, or "ref: <name>" resolved (depth). */
static int ref_value(struct ws_gitrefs *r, bool host, const char *name, struct ws_oid *ret,
                     int depth);

static int text_value(struct ws_gitrefs *r, bool host, const char *text, size_t n,
                      struct ws_oid *ret, int depth)
{
  cleanup_free char *target = NULL;
  size_t len;

  if (parse_id(text, n, ret))
    return 1;
  if (n < 6 || strncmp(text, "ref: ", 5) != 0 || depth >= MAX_SYMREF_DEPTH)
    return -1;
  len = strcspn(text + 5, "\n");
  target = xstrndup(text + 5, len);
  if (strncmp(target, "refs/", 5) != 0 || !ws_git_path_ok(target, len))
    return -1;
  return ref_value(r, host, target, ret, depth + 1);
}

/* The value of ref name in the workspace (or on the host): 1 with *ret, 0
 * when there is none, -1 when it cannot be read. */
static int ref_value(struct ws_gitrefs *r, bool host, const char *name, struct ws_oid *ret,
                     int depth)
{
  cleanup_free char *text = NULL;
  size_t n;
  int k = ref_file_read(r, host, name, &text, &n);
  const struct ws_oid *id;
  struct packed *p;

  if (k != 0)
    return k < 0 ? -1 : text_value(r, host, text, n, ret, depth);
  p = packed_of(r, host);
  if ((id = packed_find(p, name)) != NULL) {
    *ret = *id;
    return 1;
  }
  return p->bad ? -1 : 0;
}

static bool same_id(const struct ws_oid *a, const struct ws_oid *b)
{
  return a->hlen == b->hlen && memcmp(a->b, b->b, a->hlen) == 0;
}

/* The agent's commits below a tip: those it reaches that the host's base
 * (the host's value of the ref, else its HEAD) does not, compared with base
 * as the tip is: `git reset --hard HEAD~1`, `git checkout <id>` or `git
 * cherry-pick` of one writes its tree.  Which commits those are is painted
 * down from both ends at once, newest committer time first, as git finds a
 * merge base: a commit reached from the tip only (NEW) is checked, one the
 * base reaches too (OLD) is the host's history and ends that line.  The walk
 * stops when no NEW-only commit is left to read.  The objects' place does not
 * tell (the first `workspace commit` brings the agent's objects to the host
 * while it holds the ref back).  A commit time the agent set wrongly can make
 * a commit of the host's be checked too (never one of the agent's skipped).
 * A commit an earlier walk against the same base found clean ends a line as
 * the host's does (it was checked, and so was every commit below it that
 * the base does not reach): a reflog names a chain of the agent's commits.
 * The first reason, or NULL. */
enum { W_NEW = 1, W_OLD = 2 };

struct wnode {
  struct ws_oid id;
  int64_t time;
  unsigned flags;
  bool done; /* popped */
};

struct walk {
  struct ws_gitrefs *r;
  struct wnode *v;
  size_t n;
  size_t *tab; /* open addressing: index + 1, 0 empty */
  size_t tcap;
  size_t *heap; /* indices into v, newest time first */
  size_t nh;
  size_t new_only; /* queued nodes whose flags are W_NEW alone */
  bool unreadable; /* a NEW commit could not be read */
};

static size_t oid_hash(const struct ws_oid *id)
{
  uint64_t h;
  memcpy(&h, id->b, sizeof h);
  return (size_t)h;
}

static bool oidset_has(const struct oidset *set, const struct ws_oid *id)
{
  for (size_t k = set->cap ? oid_hash(id) & (set->cap - 1) : 0; set->cap && set->v[k].hlen;
       k = (k + 1) & (set->cap - 1))
    if (same_id(&set->v[k], id))
      return true;
  return false;
}

static void oidset_add(struct oidset *set, const struct ws_oid *id)
{
  size_t k;

  if (oidset_has(set, id))
    return;
  if (2 * (set->n + 1) > set->cap) {
    struct oidset grown = {xmalloc0((set->cap ? 2 * set->cap : 64) * sizeof *set->v),
                           set->cap ? 2 * set->cap : 64, 0};
    for (size_t i = 0; i < set->cap; i++)
      if (set->v[i].hlen)
        oidset_add(&grown, &set->v[i]);
    free(set->v);
    *set = grown;
  }
  for (k = oid_hash(id) & (set->cap - 1); set->v[k].hlen; k = (k + 1) & (set->cap - 1))
    ;
  set->v[k] = *id;
  set->n++;
}

/* Newest first; at one time the host's side first, so that it catches up
 * with a commit before the commit is taken for the agent's (scripted
 * histories share a second).  A node's flags may grow while it waits: that
 * only reorders equal times. */
static bool heap_before(const struct walk *w, size_t a, size_t b)
{
  const struct wnode *x = &w->v[a], *y = &w->v[b];

  if (x->time != y->time)
    return x->time > y->time;
  return (x->flags & W_OLD) && !(y->flags & W_OLD);
}

static void heap_push(struct walk *w, size_t i)
{
  size_t k = w->nh++;
  w->heap[k] = i;
  while (k > 0 && heap_before(w, w->heap[k], w->heap[(k - 1) / 2])) {
    size_t t = w->heap[k];
    w->heap[k] = w->heap[(k - 1) / 2];
    w->heap[(k - 1) / 2] = t;
    k = (k - 1) / 2;
  }
}

static size_t heap_pop(struct walk *w)
{
  size_t top = w->heap[0], k = 0;

  w->heap[0] = w->heap[--w->nh];
  for (;;) {
    size_t l = 2 * k + 1, m = k;
    if (l < w->nh && heap_before(w, w->heap[l], w->heap[m]))
      m = l;
    if (l + 1 < w->nh && heap_before(w, w->heap[l + 1], w->heap[m]))
      m = l + 1;
    if (m == k)
      break;
    size_t t = w->heap[k];
    w->heap[k] = w->heap[m];
    w->heap[m] = t;
    k = m;
  }
  return top;
}

/* The node of id with flags added: when new, read and queued (or, !queue,
 * only marked as seen).  false: the walk's limit is reached. */
static bool walk_add(struct walk *w, const struct ws_oid *id, unsigned flags, bool queue)
{
  size_t k = oid_hash(id) & (w->tcap - 1), i;
  unsigned char parents[1][32];
  size_t np;

  for (; w->tab[k] != 0; k = (k + 1) & (w->tcap - 1)) {
    struct wnode *n = &w->v[w->tab[k] - 1];
    if (!same_id(&n->id, id))
      continue;
    if (!n->done && n->flags == W_NEW && (flags & W_OLD))
      w->new_only--;
    n->flags |= flags;
    return true;
  }
  if (w->n == MAX_WALK)
    return false;
  i = w->n++;
  w->tab[k] = i + 1;
  if (oidset_has(&w->r->clean, id))
    flags |= W_OLD; /* it and what lies below it were checked already */
  w->v[i] = (struct wnode){.id = *id, .flags = flags, .done = !queue};
  if (!queue)
    return true;
  if (ws_git_commit_info(w->r->db, id->b, id->hlen, parents, 0, &np, &w->v[i].time) < 0) {
    /* the host's history may be shallow; the agent's must be readable */
    w->v[i].done = true;
    if (flags == W_NEW)
      w->unreadable = true;
    return true;
  }
  if (flags == W_NEW)
    w->new_only++;
  heap_push(w, i);
  return true;
}

static const char *ancestors_reason(struct ws_gitrefs *r, const struct ws_oid *tip,
                                    const struct ws_oid *base, char *const *patterns,
                                    char **ret_path)
{
  struct walk w = {.r = r, .tcap = 1};
  const char *why = NULL;
  unsigned char parents[MAX_PARENTS][32];
  struct ws_oid p = {.hlen = tip->hlen};
  bool has_base = base != NULL && base->hlen == tip->hlen;
  size_t np;

  if ((has_base && same_id(base, tip)) ||
      ws_git_commit_info(r->db, tip->b, tip->hlen, parents, MAX_PARENTS, &np, NULL) < 0)
    return NULL; /* nothing new, or what the tip's own comparison said */
  if (!same_id(has_base ? base : &(struct ws_oid){.hlen = 0}, &r->clean_base)) {
    free(r->clean.v);
    r->clean = (struct oidset){0};
    r->clean_base = has_base ? *base : (struct ws_oid){.hlen = 0};
  }
  if (oidset_has(&r->clean, tip))
    return NULL;
  while (w.tcap < 2 * MAX_WALK)
    w.tcap *= 2;
  w.v = xmalloc(MAX_WALK * sizeof *w.v);
  w.heap = xmalloc(MAX_WALK * sizeof *w.heap);
  w.tab = xmalloc0(w.tcap * sizeof *w.tab);
  if (has_base)
    walk_add(&w, base, W_OLD, true);
  /* the tip, compared already, is expanded first whatever its time: a commit
   * on top of the host's reaches it at once, and nothing more is read */
  walk_add(&w, tip, W_NEW, false);
  for (size_t k = 0; k < np; k++) {
    memcpy(p.b, parents[k], tip->hlen);
    walk_add(&w, &p, W_NEW, true);
  }
  while (why == NULL && w.new_only > 0 && !w.unreadable) {
    size_t i = heap_pop(&w);
    struct wnode *n = &w.v[i];

    n->done = true;
    if (n->flags == W_NEW) {
      w.new_only--;
      why = ws_git_commit_reason(r->db, n->id.b, has_base ? base->b : NULL, tip->hlen, patterns,
                                 ret_path);
    }
    if (why != NULL ||
        ws_git_commit_info(r->db, n->id.b, n->id.hlen, parents, MAX_PARENTS, &np, NULL) < 0)
      continue;
    for (size_t k = 0; k < np && why == NULL; k++) {
      memcpy(p.b, parents[k], tip->hlen);
      if (!walk_add(&w, &p, w.v[i].flags, true))
        why = "more history than agentrt reads (" MAX_WALK_S " commits: review the agent's with "
              "`git log -p`)";
    }
  }
  if (why == NULL && w.unreadable)
    why = "a commit agentrt cannot read (git checks none of its paths)";
  for (size_t i = 0; why == NULL && i < w.n; i++)
    if (w.v[i].flags == W_NEW)
      oidset_add(&r->clean, &w.v[i].id);
  free(w.v);
  free(w.heap);
  free(w.tab);
  return why;
}

/* How a reason names the ref: its value, or an entry of its reflog. */
static const char *ref_label(bool log)
{
  return log ? "an entry of the reflog of" : "ref";
}

/* The reason for the value id of ref name (log: named by an entry of its
 * reflog): none when it is one of the host's values allowed (n of them),
 * else the comparison of its commit with the host's base (NULL: nothing).
 * A full reason, or NULL. */
static char *check_id(struct ws_gitrefs *r, const char *name, const struct ws_oid *id,
                      const struct ws_oid *allowed, size_t n_allowed, const struct ws_oid *base,
                      char *const *patterns, bool log)
{
  cleanup_free char *path = NULL, *qname = NULL, *qpath = NULL;
  unsigned char parents[3][32];
  size_t np = 0;
  const char *why;

  for (size_t i = 0; i < n_allowed; i++)
    if (same_id(id, &allowed[i]))
      return NULL;
  qname = ws_quote_path(name);
  /* git puts the object a replace ref names in place of the one its name
   * names, everywhere (a checkout of the host's own commit, a blob of the
   * host's .envrc): no comparison of trees can tell what that brings */
  if (strncmp(name, "refs/replace/", 13) == 0)
    return xfmt("a replace ref (git substitutes the object it names for another, in every "
                "checkout) (%s `%s`)",
                ref_label(log), qname);
  if (r->db == NULL)
    r->db = ws_gitodb_open(r->fds, r->l->n + 1, r->gitdir);
  why = ws_git_commit_reason(r->db, id->b, base && base->hlen == id->hlen ? base->b : NULL,
                             id->hlen, patterns, &path);
  /* a stash's index and untracked files are its second and third parents'
   * trees: `git stash pop` writes them */
  if (why == NULL && strcmp(name, "refs/stash") == 0 &&
      ws_git_commit_parents(r->db, id->b, id->hlen, parents, 3, &np) < 0)
    why = "a commit agentrt cannot read (git checks none of its paths)";
  for (size_t i = 1; why == NULL && i < np; i++)
    why = ws_git_commit_reason(r->db, parents[i], base && base->hlen == id->hlen ? base->b : NULL,
                               id->hlen, patterns, &path);
  if (why == NULL)
    why = ancestors_reason(r, id, base, patterns, &path);
  /* `git log` shows the notes of refs/notes/commits (and of notes.displayRef's) */
  if (why == NULL && strncmp(name, "refs/notes/", 11) == 0)
    why = ws_git_notes_reason(
        r->db, id->b, n_allowed && allowed[0].hlen == id->hlen ? allowed[0].b : NULL, id->hlen);
  if (why == NULL)
    return NULL;
  if (path == NULL)
    return xfmt("%s (%s `%s`)", why, ref_label(log), qname);
  qpath = ws_quote_path(path);
  return xfmt("%s `%s` (%s `%s`)", why, qpath, ref_label(log), qname);
}

/* rel: a ref file, or a reflog (logs/<ref>). */
static char *unreadable(const char *rel)
{
  cleanup_free char *q = NULL;

  if (strncmp(rel, "logs/", 5) == 0) {
    q = ws_quote_path(rel + 5);
    return xfmt("a reflog agentrt cannot read (git checks out what its entries name) (reflog of "
                "`%s`)",
                q);
  }
  q = ws_quote_path(rel);
  return xfmt("%s (ref `%s`)", UNREADABLE, q);
}

/* The host's value of name into allowed (appended) and *ret_base: that
 * value, else the host's HEAD, else nothing (base->hlen 0). */
static void host_base(struct ws_gitrefs *r, const char *name, struct ws_oid *allowed,
                      size_t *n_allowed, struct ws_oid *ret_base)
{
  ret_base->hlen = 0;
  if (ref_value(r, true, name, ret_base, 0) == 1) {
    allowed[(*n_allowed)++] = *ret_base;
    return;
  }
  if (ref_value(r, true, "HEAD", ret_base, 0) != 1)
    ret_base->hlen = 0;
}

/* A changed packed-refs: every line whose id is not the host's value for
 * that ref (loose or packed). */
static char *packed_reason(struct ws_gitrefs *r, const char *text, size_t n, char *const *patterns)
{
  struct packed mine = {0};
  char *why = NULL;

  if (!packed_parse(text, n, &mine))
    why = unreadable("packed-refs");
  for (size_t i = 0; why == NULL && i < mine.n; i++) {
    struct ws_oid allowed[3], base;
    size_t na = 0;
    const struct packed_ref *hp = packed_entry(packed_of(r, true), mine.v[i].name);
    if (!ws_git_path_ok(mine.v[i].name, strlen(mine.v[i].name)) ||
        strncmp(mine.v[i].name, "refs/", 5) != 0)
      continue; /* git takes no such ref */
    host_base(r, mine.v[i].name, allowed, &na, &base);
    if (hp)
      allowed[na++] = hp->id;
    if (hp && hp->peeled.hlen)
      allowed[na++] = hp->peeled;
    why = check_id(r, mine.v[i].name, &mine.v[i].id, allowed, na, base.hlen ? &base : NULL,
                   patterns, false);
    if (why == NULL && mine.v[i].peeled.hlen)
      why = check_id(r, mine.v[i].name, &mine.v[i].peeled, allowed, na, base.hlen ? &base : NULL,
                     patterns, false);
  }
  for (size_t i = 0; i < mine.n; i++)
    free(mine.v[i].name);
  free(mine.v);
  return why;
}

/* FETCH_HEAD: "<id>\t[not-for-merge]\t<description>" lines; an id the
 * host's FETCH_HEAD did not hold is compared with the host's HEAD. */
static char *fetch_head_reason(struct ws_gitrefs *r, const char *text, size_t n,
                               char *const *patterns)
{
  cleanup_free char *htext = NULL;
  cleanup_free struct ws_oid *allowed = NULL;
  size_t hn = 0, na = 0;
  struct ws_oid base = {0};
  char *why = NULL;

  if (ref_file_read(r, true, "FETCH_HEAD", &htext, &hn) > 0)
    for (size_t pos = 0; pos < hn;) {
      const char *nl = memchr(htext + pos, '\n', hn - pos);
      size_t len = nl ? (size_t)(nl - htext - pos) : hn - pos;
      allowed = xrealloc(allowed, (na + 1) * sizeof *allowed);
      if (parse_id(htext + pos, len, &allowed[na]))
        na++;
      pos += len + 1;
    }
  if (ref_value(r, true, "HEAD", &base, 0) != 1)
    base.hlen = 0;
  for (size_t pos = 0; why == NULL && pos < n;) {
    const char *nl = memchr(text + pos, '\n', n - pos);
    size_t len = nl ? (size_t)(nl - text - pos) : n - pos;
    struct ws_oid id;
    if (len > 0 && !parse_id(text + pos, len, &id))
      return unreadable("FETCH_HEAD");
    if (len > 0)
      why = check_id(r, "FETCH_HEAD", &id, allowed, na, base.hlen ? &base : NULL, patterns, false);
    pos += len + 1;
  }
  return why;
}

/* HEAD, ORIG_HEAD or a file below refs/ (rel), with its text (NULL: the
 * file was deleted, and the ref's value is what the workspace's
 * packed-refs says). */
static char *ref_text_reason(struct ws_gitrefs *r, const char *rel, const char *text, size_t n,
                             char *const *patterns)
{
  struct ws_oid id, allowed[3], base;
  size_t na = 0;
  int k = text ? text_value(r, false, text, n, &id, 0) : ref_value(r, false, rel, &id, 0);

  if (k < 0)
    return unreadable(rel);
  if (k == 0)
    return NULL; /* a branch not born yet: nothing to check out */
  if (strcmp(rel, "HEAD") == 0) {
    struct ws_oid target;
    /* the host's HEAD, or the host's value of the branch HEAD now names */
    if (ref_value(r, true, "HEAD", &base, 0) == 1)
      allowed[na++] = base;
    else
      base.hlen = 0;
    if (text && strncmp(text, "ref: ", 5) == 0 && text_value(r, true, text, n, &target, 0) == 1)
      allowed[na++] = target;
  } else {
    host_base(r, rel, allowed, &na, &base);
  }
  return check_id(r, rel, &id, allowed, na, base.hlen ? &base : NULL, patterns, false);
}

/* A line of a reflog text: its bytes with the newline, if it has one. */
struct line {
  const char *s;
  size_t n;
};

static int line_cmp(const void *va, const void *vb)
{
  const struct line *a = va, *b = vb;
  int c = memcmp(a->s, b->s, a->n < b->n ? a->n : b->n);

  return c ? c : (a->n > b->n) - (a->n < b->n);
}

static int oid_cmp(const void *va, const void *vb)
{
  const struct ws_oid *a = va, *b = vb;

  if (a->hlen != b->hlen)
    return a->hlen < b->hlen ? -1 : 1;
  return memcmp(a->b, b->b, a->hlen);
}

/* The lines of text (n bytes), in order. */
static struct line *split_lines(const char *text, size_t n, size_t *ret_n)
{
  struct line *v = NULL;
  size_t k = 0;

  for (size_t pos = 0; pos < n; k++) {
    const char *nl = memchr(text + pos, '\n', n - pos);
    size_t len = nl ? (size_t)(nl - text - pos) + 1 : n - pos;
    if ((k & (k - 1)) == 0)
      v = xrealloc(v, (k ? 2 * k : 1) * sizeof *v);
    v[k] = (struct line){text + pos, len};
    pos += len;
  }
  *ret_n = k;
  return v;
}

/* Digits at s[*pos], before end: any? */
static bool skip_digits(const char *s, size_t end, size_t *pos)
{
  size_t start = *pos;

  while (*pos < end && s[*pos] >= '0' && s[*pos] <= '9')
    (*pos)++;
  return *pos > start;
}

/* The two ids of a reflog entry (len bytes, without its newline):
 * "<old> <new> <name> <<email>> <time> <tz>[\t<msg>]", both ids of one
 * length, as git writes it; false for any other form. */
static bool reflog_entry(const char *s, size_t len, struct ws_oid *ret_old, struct ws_oid *ret_new)
{
  const char *tab = memchr(s, '\t', len), *gt;
  size_t head = tab ? (size_t)(tab - s) : len, k;

  if (!parse_id(s, head, ret_old) || (k = 2 * ret_old->hlen) >= head || s[k] != ' ' ||
      !parse_id(s + k + 1, head - k - 1, ret_new) || ret_new->hlen != ret_old->hlen)
    return false;
  k += 1 + 2 * ret_new->hlen;
  if (k >= head || s[k] != ' ' || (gt = memrchr(s + k, '>', head - k)) == NULL)
    return false;
  k = (size_t)(gt - s) + 1;
  if (k >= head || s[k++] != ' ' || !skip_digits(s, head, &k) || k >= head || s[k++] != ' ' ||
      k >= head || (s[k] != '+' && s[k] != '-'))
    return false;
  k++;
  return skip_digits(s, head, &k) && k == head;
}

static bool is_zero(const struct ws_oid *id)
{
  for (size_t i = 0; i < id->hlen; i++)
    if (id->b[i])
      return false;
  return true;
}

/* The ids of host's lines (ones of another form skipped: they are the
 * host's own), sorted. */
static struct ws_oid *host_log_ids(const struct line *v, size_t n, size_t *ret_n)
{
  struct ws_oid *ids = xmalloc((2 * n + 1) * sizeof *ids);
  size_t k = 0;

  for (size_t i = 0; i < n; i++)
    if (v[i].n > 0 && v[i].s[v[i].n - 1] == '\n' &&
        reflog_entry(v[i].s, v[i].n - 1, &ids[k], &ids[k + 1]))
      k += 2;
  if (k > 1)
    qsort(ids, k, sizeof *ids, oid_cmp);
  *ret_n = k;
  return ids;
}

int ws_git_reflog_new_ids(const char *text, size_t n, const char *host, size_t hn, size_t max,
                          struct ws_oid **ret, size_t *ret_n)
{
  size_t nl = 0, nh = 0, nhid = 0, k = 0, added = 0;
  cleanup_free struct line *lines = split_lines(text, n, &nl);
  cleanup_free struct line *hlines = host ? split_lines(host, hn, &nh) : NULL;
  cleanup_free struct ws_oid *hids = host_log_ids(hlines, nh, &nhid);
  struct ws_oid *ids = NULL;

  *ret = NULL;
  *ret_n = 0;
  if (nh > 1)
    qsort(hlines, nh, sizeof *hlines, line_cmp);
  for (size_t i = 0; i < nl; i++) {
    struct ws_oid two[2];
    if (nh && bsearch(&lines[i], hlines, nh, sizeof *hlines, line_cmp))
      continue; /* the host's own entry */
    if (++added > max) {
      free(ids);
      return -E2BIG;
    }
    if (lines[i].s[lines[i].n - 1] != '\n' ||
        !reflog_entry(lines[i].s, lines[i].n - 1, &two[0], &two[1])) {
      free(ids);
      return -EBADMSG;
    }
    for (size_t j = 0; j < 2; j++) {
      if (is_zero(&two[j]) || (nhid && bsearch(&two[j], hids, nhid, sizeof *hids, oid_cmp) != NULL))
        continue;
      if ((k & (k - 1)) == 0)
        ids = xrealloc(ids, (k ? 2 * k : 1) * sizeof *ids);
      ids[k++] = two[j];
    }
  }
  if (k > 1)
    qsort(ids, k, sizeof *ids, oid_cmp);
  for (size_t i = 0; i < k; i++) /* each once */
    if (*ret_n == 0 || oid_cmp(&ids[*ret_n - 1], &ids[i]) != 0)
      ids[(*ret_n)++] = ids[i];
  *ret = ids;
  return 0;
}

/* An entry of the walk of the host's refs/: a loose ref's id into the set
 * (a symbolic ref is skipped: the ref it names is a file of its own). */
struct host_walk {
  struct oidset *set;
  size_t entries;
};

static int host_ref_entry(void *ctx, int dirfd, const char *name, const struct stat *st,
                          const char *path, size_t depth)
{
  struct host_walk *hw = ctx;
  cleanup_close int fd = -1;
  char buf[128];
  struct ws_oid id;
  ssize_t n;

  (void)path;
  (void)depth;
  if (++hw->entries > MAX_HOST_REFS)
    return -1; /* fewer values allowed: more entries checked */
  if (S_ISDIR(st->st_mode))
    return 1;
  if (!S_ISREG(st->st_mode) ||
      (fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)) < 0 ||
      (n = read(fd, buf, sizeof buf)) <= 0)
    return 0;
  if (parse_id(buf, (size_t)n, &id))
    oidset_add(hw->set, &id);
  return 0;
}

/* The values of the host's refs: its loose refs below refs/, its
 * packed-refs (tags peeled too) and its HEAD. */
static const struct oidset *host_values(struct ws_gitrefs *r)
{
  struct packed *p;
  struct host_walk hw = {&r->host_vals, 0};
  struct ws_walker w = {.entry = host_ref_entry, .ctx = &hw};
  cleanup_free char *refs = *r->gitdir ? xfmt("%s/refs", r->gitdir) : xstrdup("refs");
  cleanup_close int fd = -1;
  struct ws_oid id;

  if (r->host_vals_read)
    return &r->host_vals;
  r->host_vals_read = true;
  if (r->l->hostfd < 0)
    return &r->host_vals;
  if (ref_value(r, true, "HEAD", &id, 0) == 1)
    oidset_add(&r->host_vals, &id);
  p = packed_of(r, true);
  for (size_t i = 0; i < p->n; i++) {
    oidset_add(&r->host_vals, &p->v[i].id);
    if (p->v[i].peeled.hlen)
      oidset_add(&r->host_vals, &p->v[i].peeled);
  }
  fd = ws_open_beneath(r->l->hostfd, refs, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
  if (fd >= 0)
    ws_walk(fd, ".", &w);
  return &r->host_vals;
}

/* A reflog (rel: logs/<name>) the agent changed, with its text: each id an
 * entry it added names (old and new: `git reset --hard HEAD@{1}` undoes
 * either way), unless one of the host's refs names it (a checkout of one of
 * the host's branches), is checked as a value of the ref name would be,
 * against the host's commit for that ref.  `git reset --hard master@{1}`, `git checkout
 * HEAD@{2} -- .` or `git stash pop stash@{1}` writes its tree; a commit
 * left behind by `git reset --hard HEAD~1` is named by the reflogs alone. */
static char *reflog_reason(struct ws_gitrefs *r, const char *rel, const char *text, size_t n,
                           char *const *patterns)
{
  const char *name = rel + 5;
  cleanup_free char *htext = NULL, *q = NULL;
  cleanup_free struct ws_oid *ids = NULL;
  struct ws_oid allowed[1], base;
  size_t hn = 0, nids = 0, na = 0;
  char *why = NULL;
  int k;

  /* the host's log unreadable: every entry is taken for the agent's */
  if (ref_file_read(r, true, rel, &htext, &hn) <= 0) {
    free(htext);
    htext = NULL;
    hn = 0;
  }
  k = ws_git_reflog_new_ids(text, n, htext, hn, MAX_LOG_ADDED, &ids, &nids);
  if (k == -E2BIG) {
    q = ws_quote_path(name);
    return xfmt("more new reflog entries than agentrt reads (" MAX_LOG_ADDED_S
                ": review them with `git reflog`) (reflog of `%s`)",
                q);
  }
  if (k < 0)
    return unreadable(rel);
  /* `git reflog` prints an entry's message as it is */
  for (size_t at = 0; at < n;) {
    const char *eol = memchr(text + at, '\n', n - at);
    size_t len = eol ? (size_t)(eol - (text + at)) + 1 : n - at;
    if (ws_term_control((const unsigned char *)text + at, len - (eol != NULL)) &&
        (htext == NULL || memmem(htext, hn, text + at, len) == NULL)) {
      q = ws_quote_path(name);
      return xfmt("a reflog entry whose message holds terminal control characters (`git "
                  "reflog` prints it as it is) (reflog of `%s`)",
                  q);
    }
    at += len;
  }
  host_base(r, name, allowed, &na, &base);
  for (size_t i = 0; why == NULL && i < nids; i++)
    if (!oidset_has(host_values(r), &ids[i]))
      why = check_id(r, name, &ids[i], allowed, na, base.hlen ? &base : NULL, patterns, true);
  return why;
}

/* Is rel (what lies below a git dir) a ref file? */
static bool is_ref_rel(const char *rel)
{
  static const char *const files[] = {"packed-refs", "HEAD", "ORIG_HEAD", "FETCH_HEAD"};

  if (strncmp(rel, "refs/", 5) == 0 || strncmp(rel, "logs/", 5) == 0)
    return rel[5] != '\0';
  for (size_t i = 0; i < ARRAY_SIZE(files); i++)
    if (strcmp(rel, files[i]) == 0)
      return true;
  return false;
}

/* The length of the git dir that path's ref file lies in, and what it is
 * below it (*ret_rel), or false when path is no ref file.  A git dir is a
 * `.git` or a bare repository (probe), the first whose rest is a ref file;
 * none is looked for inside another's refs/, logs/ or objects/ (a
 * `logs/` holding a HEAD is no repository), and a HEAD the agent made
 * above a `.git` does not hide that `.git`'s refs. */
static bool ref_path(const char *path, const struct ws_gitdir_probe *probe, size_t *ret_len,
                     const char **ret_rel)
{
  const char *prev = NULL;
  size_t plen = 0;
  bool in_data = false;

  for (const char *c = path;;) {
    size_t dlen = c == path ? 0 : (size_t)(c - path) - 1, clen = strcspn(c, "/");
    if ((prev && ws_is_git_name(prev, plen)) ||
        (!in_data && probe->is_gitdir(probe->ctx, path, dlen))) {
      if (is_ref_rel(c)) {
        *ret_len = dlen;
        *ret_rel = c;
        return true;
      }
      in_data = in_data || strncmp(c, "refs/", 5) == 0 || strncmp(c, "logs/", 5) == 0 ||
                strncmp(c, "objects/", 8) == 0;
    }
    if (c[clen] == '\0')
      return false;
    prev = c;
    plen = clen;
    c += clen + 1;
  }
}

/* Could path be a ref file or a reflog at all (a `refs` or `logs`
 * component, or one of the names)?  Spares the probe for every other
 * change. */
static bool maybe_ref(const char *path)
{
  const char *base = strrchr(path, '/');

  base = base ? base + 1 : path;
  return strncmp(path, "refs/", 5) == 0 || strstr(path, "/refs/") != NULL ||
         strncmp(path, "logs/", 5) == 0 || strstr(path, "/logs/") != NULL ||
         strcmp(base, "packed-refs") == 0 || strcmp(base, "HEAD") == 0 ||
         strcmp(base, "ORIG_HEAD") == 0 || strcmp(base, "FETCH_HEAD") == 0;
}

char *ws_git_ref_reason(struct ws_gitrefs **cache, const struct ws_change *ch,
                        const struct ws_layers *l, char *const *patterns,
                        const struct ws_gitdir_probe *probe)
{
  struct ws_gitrefs *r = *cache;
  cleanup_free char *text = NULL;
  const char *rel;
  size_t dlen, n;
  int k;

  if (l == NULL || ch->type != WS_T_FILE || !maybe_ref(ch->path) ||
      (ch->kind != WS_DELETED && (ch->layer < 0 || (size_t)ch->layer >= l->n)) ||
      !ref_path(ch->path, probe, &dlen, &rel))
    return NULL;
  if (r == NULL || r->l != l || strlen(r->gitdir) != dlen ||
      strncmp(r->gitdir, ch->path, dlen) != 0) {
    ws_gitrefs_free(r);
    r = *cache = xmalloc0(sizeof *r);
    r->gitdir = xstrndup(ch->path, dlen);
    r->l = l;
    r->fds = xmalloc((l->n + 1) * sizeof *r->fds);
    memcpy(r->fds, l->fds, l->n * sizeof *r->fds);
    r->fds[l->n] = l->hostfd;
  }
  /* a loose ref deleted (`git gc`, `git pack-refs`): held back, the host
   * keeps its value; committed, the ref takes the agent's packed one */
  if (ch->kind == WS_DELETED)
    return strncmp(rel, "refs/", 5) == 0 ? ref_text_reason(r, rel, NULL, 0, patterns) : NULL;
  /* git branch, git tag and git log --decorate print a ref's name as it is
   * (git refuses C0 and DEL in one, not C1 in UTF-8) */
  if (ws_term_control((const unsigned char *)rel, strlen(rel))) {
    cleanup_free char *q = ws_quote_path(rel);
    return xfmt("a ref whose name holds terminal control characters (`git branch` prints it as "
                "it is) (`%s`)",
                q);
  }
  k = read_file(l->fds[ch->layer], ch->path, &text, &n);
  if (k <= 0)
    return unreadable(rel);
  if (strcmp(rel, "packed-refs") == 0 && ws_term_control((const unsigned char *)text, n))
    return xstrdup("a packed-refs naming a ref whose name holds terminal control characters "
                   "(`git branch` prints it as it is)");
  if (strcmp(rel, "packed-refs") == 0)
    return packed_reason(r, text, n, patterns);
  if (strcmp(rel, "FETCH_HEAD") == 0)
    return fetch_head_reason(r, text, n, patterns);
  if (strncmp(rel, "logs/", 5) == 0)
    return reflog_reason(r, rel, text, n, patterns);
  return ref_text_reason(r, rel, text, n, patterns);
}
