/* ignore.c - new files that the host's git will not show (THREAT-MODEL.md,
 * "Workspace protection rule", hidden-by-gitignore).
 *
 * After commit the operator reviews with `git status` and `git diff`; a new
 * file that the resulting `.gitignore` files (the agent edits them, and they
 * are committed like any file) or the host's `.git/info/exclude` match is in
 * neither.  `diff` marks each such addition with the ignore file and the
 * pattern that hides it.  Patterns are read as git reads them: blank lines
 * and `#` comments skipped, trailing spaces dropped unless escaped, `!`
 * re-includes, a trailing `/` matches directories only, a pattern with a `/`
 * is matched against the path from its file's directory and one without
 * against the last component; the last matching line wins, a deeper file's
 * lines over a shallower's and `.gitignore` over `info/exclude`, and a file
 * below an ignored directory is ignored whatever re-includes it.  A `**` is
 * matched as a `*` that may also take `/` (erring towards marking).  Not
 * read: the operator's own ignore file (`core.excludesFile`,
 * `~/.config/git/ignore`, which the agent cannot write), the index (a file
 * staged with `git add -f` is shown by git though marked), a `.gitignore`
 * that is a symlink (git does not follow it).
 * The agent writes these files, so their reading is bounded (ignore-dos): at
 * most MAX_IGNORE_FILE bytes of one file, MAX_IGNORE_TOTAL bytes and
 * MAX_IGNORE_PATTERNS lines of all of them, MAX_IGNORE_DIRS directories,
 * and WS_IGNORE_MAX_WORK units of matching (a pattern tested against a path:
 * one unit and one per 64 bytes of the pattern).  A new file whose answer
 * needs a file not read whole, or comes after the matching budget is spent,
 * is marked as ignored with the reason (erring towards marking: left
 * unmarked, it would be the way to hide a file from the review).
 * Only the review reads this: nothing on create, start, run or exec. */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "common/util.h"
#include "workspace/internal.h"

#define MAX_IGNORE_FILE (1 << 20)  /* bytes of one ignore file read */
#define MAX_IGNORE_TOTAL (4 << 20) /* bytes of all of them */
#define MAX_IGNORE_PATTERNS 100000 /* lines of all of them */
#define MAX_IGNORE_DIRS 65536      /* directories whose .gitignore is read */
#define LIMITS_WHY "not read whole: past the review's limits on ignore files"
#define BUCKETS 4096

struct pattern {
  char *pat;     /* as matched: no `!`, no trailing `/`, no leading `/` */
  char *line;    /* as written, for the mark */
  bool negate;   /* `!pattern` */
  bool dir_only; /* `pattern/` */
  bool has_slash;
};

struct ignfile {
  char *dir;    /* "" at the top */
  char *source; /* the file's path, for the mark */
  struct pattern *v;
  size_t n, cap;
  bool partial;         /* not read whole (the limits): its answers are not known */
  int state;            /* the directory itself: -1 not known yet, 0 shown, 1 ignored */
  char *why;            /* when ignored: the file and line (its own or a parent's) */
  struct ignfile *next; /* hash chain */
};

struct ignctx {
  const struct ws_layers *l;
  struct ignfile *buckets[BUCKETS];
  struct ignfile exclude; /* the host's .git/info/exclude */
  size_t dirs;
  size_t bytes;    /* of the ignore files read */
  size_t patterns; /* their lines */
  size_t work;     /* matching spent (WS_IGNORE_MAX_WORK) */
};

static unsigned hash_str(const char *s)
{
  unsigned h = 2166136261u;
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 16777619u;
  return h % BUCKETS;
}

static bool dir_opaque_at(int fd, const char *dir, unsigned xattr)
{
  cleanup_close int d = ws_open_beneath(fd, dir, O_RDONLY | O_DIRECTORY, 0);

  return d >= 0 && ws_dir_opaque(d, xattr);
}

/* The bytes of a regular file at fd, at most max and one more (*ret_n
 * above max: a longer file). */
static char *read_fd(int fd, size_t max, size_t *ret_n)
{
  char *buf = xmalloc(max + 2);
  size_t n = 0;

  while (n <= max) {
    ssize_t r = read(fd, buf + n, max + 1 - n);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      break;
    n += (size_t)r;
  }
  buf[n] = '\0';
  *ret_n = n;
  return buf;
}

/* The file at rel as the merged view has it: the first layer (upper first,
 * then the host dir) that holds it; a whiteout, a symlink or anything but a
 * regular file, or an opaque parent in a layer, ends the search with none. */
static char *read_merged(const struct ws_layers *l, const char *rel, size_t max, size_t *ret_n)
{
  cleanup_free char *parent = NULL;
  const char *base;

  parent = ws_split_path(rel, &base);
  for (size_t i = 0; i <= l->n; i++) {
    int root = i < l->n ? l->fds[i] : l->hostfd;
    cleanup_close int fd = -1;
    struct stat st;
    if (root < 0)
      continue;
    fd = ws_open_beneath(root, rel, O_RDONLY | O_NOFOLLOW | O_NONBLOCK, 0);
    if (fd < 0) {
      if (errno != ENOENT)
        return NULL; /* a symlink on the way, a file where a directory was */
      if (i < l->n && dir_opaque_at(root, parent, l->xattr))
        return NULL;
      continue;
    }
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
      return NULL;
    return read_fd(fd, max, ret_n);
  }
  return NULL;
}

/* The largest ignore file x may still read. */
static size_t read_max(const struct ignctx *x)
{
  size_t left = MAX_IGNORE_TOTAL - x->bytes;
  return left < MAX_IGNORE_FILE ? left : MAX_IGNORE_FILE;
}

/* The lines of text (n bytes read, at most read_max + 1) into f. */
static void parse(struct ignctx *x, struct ignfile *f, char *text, size_t n)
{
  if (n > read_max(x)) {
    f->partial = true;
    return;
  }
  x->bytes += n;
  for (char *save = NULL, *line = strtok_r(text, "\n", &save); line;
       line = strtok_r(NULL, "\n", &save)) {
    size_t len = strlen(line);
    struct pattern p = {0};
    char *s;
    if (len > 0 && line[len - 1] == '\r')
      line[--len] = '\0';
    /* trailing spaces, unless escaped */
    while (len > 0 && line[len - 1] == ' ' && !(len > 1 && line[len - 2] == '\\'))
      line[--len] = '\0';
    if (len == 0 || line[0] == '#')
      continue;
    s = line;
    if (*s == '!') {
      p.negate = true;
      s++;
    } else if (*s == '\\' && (s[1] == '!' || s[1] == '#')) {
      s++;
    }
    len = strlen(s);
    if (len > 0 && s[len - 1] == '/') {
      p.dir_only = true;
      s[--len] = '\0';
    }
    if (len == 0)
      continue;
    if (x->patterns >= MAX_IGNORE_PATTERNS) {
      f->partial = true;
      break;
    }
    x->patterns++;
    p.has_slash = strchr(s, '/') != NULL;
    if (*s == '/')
      s++;
    p.pat = xstrdup(s);
    p.line = xstrdup(line);
    if (f->n == f->cap) { /* doubling: one more each time was quadratic in copies */
      f->cap = f->cap ? 2 * f->cap : 16;
      f->v = xrealloc(f->v, f->cap * sizeof *f->v);
    }
    f->v[f->n++] = p;
  }
}

static struct ignfile *ignfile_of(struct ignctx *x, const char *dir)
{
  unsigned h = hash_str(dir);
  struct ignfile *f;
  cleanup_free char *text = NULL;
  size_t n;

  for (f = x->buckets[h]; f; f = f->next)
    if (strcmp(f->dir, dir) == 0)
      return f;
  if (x->dirs >= MAX_IGNORE_DIRS)
    return NULL;
  x->dirs++;
  f = xmalloc(sizeof *f);
  memset(f, 0, sizeof *f);
  f->dir = xstrdup(dir);
  f->state = -1;
  f->source = *dir ? xfmt("%s/.gitignore", dir) : xstrdup(".gitignore");
  if ((text = read_merged(x->l, f->source, read_max(x), &n)) != NULL)
    parse(x, f, text, n);
  f->next = x->buckets[h];
  x->buckets[h] = f;
  return f;
}

static bool pat_match(const struct pattern *p, const char *rel, bool is_dir)
{
  const char *name;

  if (p->dir_only && !is_dir)
    return false;
  if (!p->has_slash) {
    name = strrchr(rel, '/');
    return fnmatch(p->pat, name ? name + 1 : rel, 0) == 0;
  }
  if (strstr(p->pat, "**") == NULL)
    return fnmatch(p->pat, rel, FNM_PATHNAME) == 0;
  if (fnmatch(p->pat, rel, 0) == 0)
    return true;
  /* a `**` and its `/` may match nothing: `**` `/a` matches `a` at the top */
  {
    cleanup_free char *q = xstrdup(p->pat);
    char *at;
    while ((at = strstr(q, "**/")) != NULL)
      memmove(at, at + 3, strlen(at + 3) + 1);
    return fnmatch(q, rel, 0) == 0;
  }
}

/* The last line of f matching path (relative to the top) in *ret_p (NULL:
 * none); false when the answer is not known: f not read whole, or x's
 * matching budget spent. */
static bool last_match(struct ignctx *x, const struct ignfile *f, const char *path, bool is_dir,
                       const struct pattern **ret_p)
{
  size_t dl = strlen(f->dir);
  const char *rel = path;

  *ret_p = NULL;
  if (dl > 0) {
    if (strncmp(path, f->dir, dl) != 0 || path[dl] != '/')
      return true;
    rel = path + dl + 1;
  }
  if (f->partial)
    return false;
  for (size_t i = f->n; i-- > 0;) {
    size_t cost = 1 + strlen(f->v[i].pat) / 64;
    if (cost > WS_IGNORE_MAX_WORK - x->work) {
      x->work = WS_IGNORE_MAX_WORK;
      return false;
    }
    x->work += cost;
    if (pat_match(&f->v[i], rel, is_dir)) {
      *ret_p = &f->v[i];
      return true;
    }
  }
  return true;
}

/* Is path (a directory when is_dir) ignored on its own (its parents not
 * looked at)?  *ret_f, *ret_p: the file and line that decide; *ret_p NULL
 * when the answer is not known (the limits): ignored, *ret_f the file not
 * read whole (NULL: the directories or the matching budget). */
static bool ignored_self(struct ignctx *x, const char *path, bool is_dir,
                         const struct ignfile **ret_f, const struct pattern **ret_p)
{
  cleanup_free char *dir = xstrdup(path);
  char *slash;

  /* deepest .gitignore first: the first that has a match decides */
  for (;;) {
    const struct ignfile *f;
    const struct pattern *p;
    slash = strrchr(dir, '/');
    if (slash)
      *slash = '\0';
    else
      dir[0] = '\0';
    f = ignfile_of(x, dir);
    if (f == NULL || !last_match(x, f, path, is_dir, &p)) {
      *ret_f = f && f->partial ? f : NULL;
      *ret_p = NULL;
      return true;
    }
    if (p) {
      *ret_f = f;
      *ret_p = p;
      return !p->negate;
    }
    if (dir[0] == '\0')
      break;
  }
  {
    const struct pattern *p;
    if (!last_match(x, &x->exclude, path, is_dir, &p)) {
      *ret_f = x->exclude.partial ? &x->exclude : NULL;
      *ret_p = NULL;
      return true;
    }
    if (p) {
      *ret_f = &x->exclude;
      *ret_p = p;
      return !p->negate;
    }
  }
  return false;
}

/* The mark of a path ignored_self found ignored.  The file's path and the
 * pattern are the agent's: quoted as diff quotes a path, or an escape
 * sequence in them repainted the review (terminal-inject-review-marks). */
static char *why_of(const struct ignfile *f, const struct pattern *p)
{
  cleanup_free char *src = f ? ws_quote_path(f->source) : NULL;
  cleanup_free char *line = p ? ws_quote_path(p->line) : NULL;

  if (p)
    return xfmt("`%s` `%s`", src, line);
  if (f)
    return xfmt("`%s` " LIMITS_WHY, src);
  return xstrdup("the ignore files " LIMITS_WHY);
}

/* Is the directory dir ignored, by its own lines or a parent's?  Kept in
 * its entry, so that each directory is decided once. */
static const char *dir_ignored(struct ignctx *x, const char *dir)
{
  struct ignfile *f = ignfile_of(x, dir);
  const struct ignfile *src = NULL;
  const struct pattern *p = NULL;
  const char *up;

  if (f == NULL)
    return "the ignore files " LIMITS_WHY;
  if (f->state >= 0 || dir[0] == '\0')
    return f->state == 1 ? f->why : NULL;
  {
    cleanup_free char *parent = xstrdup(dir);
    char *slash = strrchr(parent, '/');
    if (slash)
      *slash = '\0';
    else
      parent[0] = '\0';
    up = dir_ignored(x, parent);
  }
  /* a directory below an ignored one is ignored whatever re-includes it */
  if (up)
    f->why = xstrdup(up);
  else if (ignored_self(x, dir, true, &src, &p))
    f->why = why_of(src, p);
  f->state = f->why != NULL;
  return f->why;
}

static char *ignored_why(struct ignctx *x, const char *path)
{
  cleanup_free char *parent = xstrdup(path);
  char *slash = strrchr(parent, '/');
  const struct ignfile *f = NULL;
  const struct pattern *p = NULL;
  const char *up;

  if (slash)
    *slash = '\0';
  else
    parent[0] = '\0';
  if ((up = dir_ignored(x, parent)) != NULL)
    return xstrdup(up);
  if (ignored_self(x, path, false, &f, &p))
    return why_of(f, p);
  return NULL;
}

static bool below_git(const char *path)
{
  for (const char *s = path; s; s = strchr(s, '/')) {
    const char *c = *s == '/' ? s + 1 : s;
    size_t n = strcspn(c, "/");
    if (ws_is_git_name(c, n))
      return true;
    s = c + n;
    if (*s == '\0')
      break;
  }
  return false;
}

size_t ws_mark_ignored(struct ws_changes *c, const struct ws_layers *l)
{
  struct ignctx x = {.l = l};
  bool any = false;

  for (size_t i = 0; i < c->n && !any; i++)
    any = (c->v[i].kind == WS_ADDED || c->v[i].kind == WS_RENAMED) && c->v[i].type != WS_T_DIR;
  if (!any)
    return 0;
  x.exclude.dir = xstrdup("");
  x.exclude.source = xstrdup(".git/info/exclude");
  if (l->hostfd >= 0) {
    cleanup_close int fd =
        ws_open_beneath(l->hostfd, ".git/info/exclude", O_RDONLY | O_NOFOLLOW | O_NONBLOCK, 0);
    struct stat st;
    size_t n;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
      cleanup_free char *text = read_fd(fd, read_max(&x), &n);
      parse(&x, &x.exclude, text, n);
    }
  }
  for (size_t i = 0; i < c->n; i++) {
    struct ws_change *ch = &c->v[i];
    if ((ch->kind != WS_ADDED && ch->kind != WS_RENAMED) || ch->type == WS_T_DIR || ch->protect ||
        below_git(ch->path))
      continue;
    free(ch->ignored);
    ch->ignored = ignored_why(&x, ch->path);
  }
  for (size_t b = 0; b < BUCKETS; b++) {
    for (struct ignfile *f = x.buckets[b], *next; f; f = next) {
      next = f->next;
      for (size_t k = 0; k < f->n; k++) {
        free(f->v[k].pat);
        free(f->v[k].line);
      }
      free(f->v);
      free(f->why);
      free(f->dir);
      free(f->source);
      free(f);
    }
  }
  for (size_t k = 0; k < x.exclude.n; k++) {
    free(x.exclude.v[k].pat);
    free(x.exclude.v[k].line);
  }
  free(x.exclude.v);
  free(x.exclude.dir);
  free(x.exclude.source);
  return x.work;
}
