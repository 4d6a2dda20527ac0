/* gitconfig.c - the workspace paths that the host repository's own
 * configuration makes git run or read.
 *
 * `.git/config` is never committed from the agent (protect.c), but the
 * host's may name files of the work tree: `core.hooksPath = .githooks`
 * (tracked hooks, a common setup), `include.path = ../.gitconfig`, a filter
 * or diff driver whose command is `./scripts/clean.sh`.  The agent may change
 * those files as ordinary ones, and the host's next `git commit` or `git
 * status` runs them.  So the host's `.git/config` (and the files it includes
 * from the work tree, followed on the host) is read here, and each work-tree
 * path it names is protected like a path of the profile's list.  So are the
 * operator's own files, which git reads first (`core.hooksPath = .hooks` in
 * ~/.gitconfig runs the work tree's `.hooks/` in every repository), with
 * what they include (read_operator).
 *
 * The syntax read is git's: `[section]` or `[section "sub"]` headers (also
 * `[section.sub]`), `key = value` lines, `#` and `;` comments, values in
 * double quotes with `\` escapes and line continuations.  A path-valued key
 * (core.hooksPath, core.attributesFile, include.path, includeIf.*.path, ...)
 * gives its whole value; a key whose value git runs as a command gives the
 * words of the command that name a file of the work tree: relative ones with
 * a `/` (`./x`, `scripts/x`), or absolute ones below the host directory.
 *
 * A repository's hooks are read too (ws_gitcfg_read_hooks: the host dir's,
 * and a nested repository's above a change): a hook that is a symlink to a
 * tracked script (`ln -s ../../scripts/pre-commit`, hooks shared the way they
 * were before core.hooksPath), `.git/hooks` itself a symlink to a tracked
 * directory, and the words of a hook's text read as a command's above (`exec
 * ./tools/check.sh`): the agent's edit of that script ran at the operator's
 * next `git commit`.  A submodule's or a linked worktree's `.git` file leads
 * to its hooks (hooks_dir), and a core.hooksPath outside the host dir
 * (`~/ophooks`) has its hooks read the same way (read_hooks_path).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "os/fsutil.h"
#include "os/passwd.h"
#include "workspace/internal.h"

#define MAX_CONFIG_SIZE ((size_t)1 << 20)
#define MAX_INCLUDE_DEPTH 8
#define MAX_PATHS 1024
#define MAX_LINK_HOPS 8
#define MAX_HOOKS 256

/* Keys whose value is a path (section.key, lower case; `*` = any subsection). */
static const char *const path_keys[] = {
    "core.hookspath",  "core.attributesfile", "core.excludesfile",
    "core.worktree",   "include.path",        "includeif.*.path",
    "commit.template", "mailmap.file",        "blame.ignorerevsfile",
};

/* Keys whose value git (or a tool it starts) runs as a command. */
static const char *const cmd_keys[] = {
    "core.fsmonitor",
    "core.pager",
    "core.editor",
    "core.sshcommand",
    "core.askpass",
    "core.gitproxy",
    "diff.external",
    "diff.*.command",
    "diff.*.textconv",
    "merge.*.driver",
    "filter.*.clean",
    "filter.*.smudge",
    "filter.*.process",
    "credential.helper",
    "credential.*.helper",
    "gpg.program",
    "gpg.*.program",
    "sequence.editor",
    "alias.*",
    "pager.*",
    "uploadpack.packobjectshook",
    "interactive.difffilter",
    "mergetool.*.cmd",
    "mergetool.*.path",
    "difftool.*.cmd",
    "difftool.*.path",
    "hook.*.command",
    "web.browser",
    "browser.*.cmd",
    "browser.*.path",
    "sendemail.*",
};

static bool key_in(const char *const *list, size_t n, const char *section, const char *sub,
                   const char *key)
{
  for (size_t i = 0; i < n; i++) {
    const char *l = list[i], *dot = strchr(l, '.'), *last = strrchr(l, '.');
    size_t slen = (size_t)(dot - l);
    if (strlen(section) != slen || strncasecmp(section, l, slen) != 0)
      continue;
    if (dot != last) { /* section.*.key: any subsection, sub required */
      if (sub == NULL)
        continue;
    } else if (sub != NULL && strcmp(last + 1, "*") != 0) {
      /* section.key: a key of [section "sub"] is another key (diff.sub.x) */
      continue;
    }
    if (strcmp(last + 1, "*") == 0 || strcasecmp(last + 1, key) == 0)
      return true;
  }
  return false;
}

/* Lexically normalised work-tree path of rel (relative to base, "" = the
 * top), or NULL when it leaves the work tree or names nothing. */
static char *normalise(const char *base, const char *rel)
{
  cleanup_free char *joined = *base ? xfmt("%s/%s", base, rel) : xstrdup(rel);
  char **parts = NULL;
  char *res, *save = NULL;
  size_t n = 0, len = 0;

  for (char *t = strtok_r(joined, "/", &save); t; t = strtok_r(NULL, "/", &save)) {
    if (strcmp(t, ".") == 0)
      continue;
    if (strcmp(t, "..") == 0) {
      if (n == 0) {
        free(parts);
        return NULL;
      }
      n--;
      continue;
    }
    parts = xrealloc(parts, (n + 1) * sizeof *parts);
    parts[n++] = t;
  }
  if (n == 0) {
    free(parts);
    return NULL;
  }
  for (size_t i = 0; i < n; i++)
    len += strlen(parts[i]) + 1;
  res = xmalloc(len);
  res[0] = '\0';
  for (size_t i = 0; i < n; i++) {
    if (i)
      strcat(res, "/");
    strcat(res, parts[i]);
  }
  free(parts);
  return res;
}

/* path (taken) named by what (a key, or a hook's path; taken). */
static void add_named(struct ws_gitcfg *g, char *path, char *what)
{
  if (path == NULL || g->n >= MAX_PATHS) {
    free(path);
    free(what);
    return;
  }
  g->paths = xrealloc(g->paths, (g->n + 1) * sizeof *g->paths);
  g->keys = xrealloc(g->keys, (g->n + 1) * sizeof *g->keys);
  g->paths[g->n] = path;
  g->keys[g->n] = what;
  g->n++;
}

static void add_path(struct ws_gitcfg *g, char *path, const char *section, const char *sub,
                     const char *key)
{
  if (path == NULL || g->n >= MAX_PATHS) {
    free(path);
    return;
  }
  add_named(g, path, sub ? xfmt("%s.%s.%s", section, sub, key) : xfmt("%s.%s", section, key));
}

/* A path word of the value: relative to base, or absolute below host. */
static char *word_path(const char *w, const char *base, const char *host)
{
  size_t hl = host ? strlen(host) : 0;

  if (*w == '\0' || *w == '~' || *w == '-')
    return NULL;
  if (*w == '/') {
    if (hl == 0 || strncmp(w, host, hl) != 0 || w[hl] != '/')
      return NULL;
    return normalise("", w + hl + 1);
  }
  return normalise(base, w);
}

/* The words of a command value that name work-tree files (see the top). */
static void cmd_paths(struct ws_gitcfg *g, const char *val, const char *top, const char *host,
                      const char *section, const char *sub, const char *key)
{
  cleanup_free char *copy = xstrdup(val);
  char *save = NULL;

  for (char *w = strtok_r(copy, " \t\n;&|()<>'\"`=!$", &save); w;
       w = strtok_r(NULL, " \t\n;&|()<>'\"`=!$", &save))
    if (strchr(w, '/') != NULL)
      add_path(g, word_path(w, top, host), section, sub, key);
}

/* Unquote a value (git's rules, one line: continuations are joined by the
 * caller), cutting an unquoted comment.  Returns a new string. */
static char *value_of(const char *v)
{
  char *out = xmalloc(strlen(v) + 1);
  size_t k = 0, last_nonspace = 0;
  bool q = false;

  while (*v == ' ' || *v == '\t')
    v++;
  for (; *v; v++) {
    if (*v == '"') {
      q = !q;
      continue;
    }
    if (!q && (*v == '#' || *v == ';'))
      break;
    if (*v == '\\' && v[1]) {
      v++;
      out[k++] = *v == 'n' ? '\n' : *v == 't' ? '\t' : *v;
      last_nonspace = k;
      continue;
    }
    out[k++] = *v;
    if (q || (*v != ' ' && *v != '\t'))
      last_nonspace = k;
  }
  out[last_nonspace] = '\0';
  return out;
}

void ws_gitcfg_parse(const char *text, size_t len, const char *cfgdir, const char *host,
                     struct ws_gitcfg *g, char ***ret_includes)
{
  cleanup_free char *buf = xstrndup(text, len);
  cleanup_free char *section = xstrdup(""), *sub = NULL;
  const char *top = g->top ? g->top : "";
  char *line = buf, *next;

  for (; line != NULL; line = next) {
    char *p, *eq, *key, *val;
    next = strchr(line, '\n');
    if (next)
      *next++ = '\0';
    /* a value continued on the next line (`\` at the end) */
    while (next != NULL && *line && line[strlen(line) - 1] == '\\') {
      char *n2 = strchr(next, '\n');
      line[strlen(line) - 1] = '\0';
      if (n2)
        *n2++ = '\0';
      memmove(line + strlen(line), next, strlen(next) + 1);
      next = n2;
    }
    p = line;
    while (*p == ' ' || *p == '\t' || *p == '\r')
      p++;
    if (*p == '\0' || *p == '#' || *p == ';')
      continue;
    if (*p == '[') {
      char *end = strchr(p, ']'), *quote;
      if (end == NULL)
        continue;
      *end = '\0';
      p++;
      free(sub);
      sub = NULL;
      if ((quote = strchr(p, '"')) != NULL) {
        char *q2 = strrchr(quote + 1, '"');
        if (q2)
          *q2 = '\0';
        sub = xstrdup(quote + 1);
        *quote = '\0';
      } else if ((quote = strchr(p, '.')) != NULL) {
        sub = xstrdup(quote + 1);
        *quote = '\0';
      }
      free(section);
      section = xstrdup(p);
      {
        size_t sl = strlen(section);
        while (sl > 0 && (section[sl - 1] == ' ' || section[sl - 1] == '\t'))
          section[--sl] = '\0';
      }
      /* `[section] key = value` on the header's line */
      p = end + 1;
      while (*p == ' ' || *p == '\t')
        p++;
      if (*p == '\0' || *p == '#' || *p == ';')
        continue;
    }
    key = p;
    eq = strchr(p, '=');
    if (eq == NULL)
      continue; /* a bare boolean key */
    *eq = '\0';
    {
      size_t kl = strlen(key);
      while (kl > 0 && (key[kl - 1] == ' ' || key[kl - 1] == '\t'))
        key[--kl] = '\0';
    }
    val = value_of(eq + 1);
    if (strcasecmp(section, "extensions") == 0 && sub == NULL &&
        strcasecmp(key, "objectformat") == 0)
      g->hash_size = strcasecmp(val, "sha256") == 0 ? 32
                     : strcasecmp(val, "sha1") == 0 ? 20
                                                    : SIZE_MAX;
    if (strcasecmp(section, "core") == 0 && sub == NULL && strcasecmp(key, "hookspath") == 0) {
      free(g->hooks_path);
      g->hooks_path = xstrdup(val);
    }
    if (key_in(path_keys, ARRAY_SIZE(path_keys), section, sub, key)) {
      bool incl = strcasecmp(key, "path") == 0 &&
                  (strcasecmp(section, "include") == 0 || strcasecmp(section, "includeif") == 0);
      /* an include is relative to the including file (outside the work
       * tree, cfgdir NULL: only an absolute one names a file of it); other
       * paths to the top */
      char *path = incl && cfgdir == NULL && *val != '/'
                       ? NULL
                       : word_path(val, incl && cfgdir ? cfgdir : top, host);
      if (incl && ret_includes != NULL && (cfgdir == NULL || path != NULL))
        strv_push(ret_includes, cfgdir == NULL ? val : path);
      add_path(g, path ? xstrdup(path) : NULL, section, sub, key);
      free(path);
    } else if (key_in(cmd_keys, ARRAY_SIZE(cmd_keys), section, sub, key)) {
      cmd_paths(g, val, top, host, section, sub, key);
    }
    free(val);
  }
}

/* An include of a file outside the work tree: the absolute path it names
 * (`~/` is home's, a relative one is the including file's neighbour), or
 * NULL. */
static char *outside_path(const char *val, const char *from, const char *home)
{
  const char *slash = strrchr(from, '/');

  if (*val == '\0')
    return NULL;
  if (*val == '/')
    return xstrdup(val);
  if (val[0] == '~' && val[1] == '/')
    return home ? xfmt("%s/%s", home, val + 2) : NULL;
  if (*val == '~')
    return NULL; /* ~user/: not followed */
  return slash ? xfmt("%.*s/%s", (int)(slash - from), from, val) : NULL;
}

/* A configuration file outside the work tree (the operator's global or
 * system one, or one it includes): what it names in the work tree, and the
 * work-tree files it includes, to be read on the host (*host_todo). */
static void read_outside(const char *path, const char *home, const char *host, struct ws_gitcfg *g,
                         char ***host_todo, char ***seen, unsigned depth)
{
  cleanup_close int fd = -1;
  cleanup_free char *text = NULL;
  cleanup_strv char **incl = NULL;
  struct error err = {0};
  struct stat st;
  size_t len = 0, hl = host ? strlen(host) : 0;
  char *hooks;

  if (depth >= MAX_INCLUDE_DEPTH || (*seen && strv_contains(*seen, path)))
    return;
  strv_push(seen, path);
  /* not a FIFO or a device: nothing may block the review */
  fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
      read_fd_all(fd, MAX_CONFIG_SIZE, &text, &len, &err) < 0)
    return;
  hooks = take_ptr(g->hooks_path);
  ws_gitcfg_parse(text, len, NULL, host, g, &incl);
  if (g->hooks_path == NULL) {
    g->hooks_path = hooks; /* this file sets none */
  } else {
    free(hooks); /* `~/` is this file's home's */
    if (g->hooks_path[0] == '~' && g->hooks_path[1] == '/') {
      char *full = home ? xfmt("%s/%s", home, g->hooks_path + 2) : NULL;
      free(g->hooks_path);
      g->hooks_path = full;
    }
  }
  for (char **i = incl; i && *i; i++) {
    cleanup_free char *next = NULL;
    if (hl > 0 && strncmp(*i, host, hl) == 0 && (*i)[hl] == '/') {
      char *rel = word_path(*i, "", host);
      if (rel != NULL) {
        strv_push(host_todo, rel);
        free(rel);
      }
      continue;
    }
    if ((next = outside_path(*i, path, home)) != NULL)
      read_outside(next, home, host, g, host_todo, seen, depth + 1);
  }
}

/* The operator's own configuration, which git reads before the
 * repository's: the system file and the global ones of each home that may
 * run git in the host dir (ours, the one of the user sudo ran us for, the
 * host dir owner's); GIT_CONFIG_SYSTEM and GIT_CONFIG_GLOBAL as git takes
 * them. */
static void read_operator(int hostfd, const char *host, struct ws_gitcfg *g, char ***host_todo)
{
  const char *sys = getenv("GIT_CONFIG_SYSTEM"), *glob = getenv("GIT_CONFIG_GLOBAL");
  const char *xdg = getenv("XDG_CONFIG_HOME"), *sudo = getenv("SUDO_USER");
  cleanup_strv char **homes = NULL, **seen = NULL;
  struct stat st;

  if (getenv("GIT_CONFIG_NOSYSTEM") == NULL)
    read_outside(sys && *sys ? sys : "/etc/gitconfig", NULL, host, g, host_todo, &seen, 0);
  if (getenv("HOME") != NULL && getenv("HOME")[0] == '/')
    strv_push(&homes, getenv("HOME"));
  if (sudo != NULL && *sudo != '\0') {
    cleanup_free char *h = passwd_home_file("/etc/passwd", sudo, 0);
    if (h != NULL && !(homes && strv_contains(homes, h)))
      strv_push(&homes, h);
  }
  if (fstat(hostfd, &st) == 0) {
    cleanup_free char *h = passwd_home_file("/etc/passwd", NULL, st.st_uid);
    if (h != NULL && !(homes && strv_contains(homes, h)))
      strv_push(&homes, h);
  }
  if (glob != NULL && *glob != '\0')
    read_outside(glob, homes ? homes[0] : NULL, host, g, host_todo, &seen, 0);
  for (char **h = homes; h && *h; h++) {
    cleanup_free char *dot = xfmt("%s/.gitconfig", *h);
    cleanup_free char *x = h == homes && xdg && *xdg == '/' ? xfmt("%s/git/config", xdg)
                                                            : xfmt("%s/.config/git/config", *h);
    read_outside(x, *h, host, g, host_todo, &seen, 0);
    read_outside(dot, *h, host, g, host_todo, &seen, 0);
  }
}

char *ws_host_link_end(int hostfd, const char *path, const char *host)
{
  char *cur = xstrdup(path);

  for (int hop = 0; hop <= MAX_LINK_HOPS; hop++) {
    const char *slash = strrchr(cur, '/');
    cleanup_free char *dir = xstrndup(cur, slash ? (size_t)(slash - cur) : 0);
    cleanup_close int pfd = ws_open_beneath(hostfd, dir, O_PATH | O_DIRECTORY, 0);
    char target[PATH_MAX];
    struct stat st;
    ssize_t n;
    char *next;

    if (pfd < 0 || fstatat(pfd, slash ? slash + 1 : cur, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
        !S_ISLNK(st.st_mode))
      return cur;
    if (hop == MAX_LINK_HOPS ||
        (n = readlinkat(pfd, slash ? slash + 1 : cur, target, sizeof target - 1)) <= 0)
      break;
    target[n] = '\0';
    next = word_path(target, dir, host);
    if (next == NULL)
      break;
    free(cur);
    cur = next;
  }
  free(cur);
  return NULL;
}

/* The work-tree files a hook's text names: words with a `/`, relative to the
 * top of its work tree (where git runs hooks, repo) or absolute below the
 * host dir; not in a comment (from a `#` that starts a word, the #! line's
 * too, to the end of its line), and not a directory of the host's (`cd
 * frontend/ && npm test` names no file to run, and would hold back all of
 * frontend/). */
static void hook_words(struct ws_gitcfg *g, int hostfd, char *text, const char *repo,
                       const char *host, const char *hook)
{
  static const char sep[] = " \t\r;&|()<>'\"`=!$";
  char *line = text, *next;

  for (; line != NULL; line = next) {
    char *save = NULL;
    if ((next = strchr(line, '\n')) != NULL)
      *next++ = '\0';
    for (char *c = line; *c; c++)
      if (*c == '#' && (c == line || c[-1] == ' ' || c[-1] == '\t')) {
        *c = '\0';
        break;
      }
    for (char *w = strtok_r(line, sep, &save); w; w = strtok_r(NULL, sep, &save)) {
      char *path = strchr(w, '/') != NULL ? word_path(w, repo, host) : NULL;
      cleanup_close int dfd = path ? ws_open_beneath(hostfd, path, O_PATH | O_DIRECTORY, 0) : -1;
      if (dfd >= 0)
        free(path);
      else
        add_named(g, path, xstrdup(hook));
    }
  }
}

/* The first line of the host's file path (below the host dir, no symlink),
 * without its line end, or NULL. */
static char *first_line(int hostfd, const char *path)
{
  cleanup_close int fd = ws_open_beneath(hostfd, path, O_RDONLY | O_NONBLOCK | O_CLOEXEC, 0);
  struct error err = {0};
  struct stat st;
  char *text = NULL;
  size_t len = 0;

  if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
      read_fd_all(fd, 4096, &text, &len, &err) < 0)
    return NULL;
  text[strcspn(text, "\r\n")] = '\0';
  return text;
}

/* The git directory and the common directory (below the host dir) of the
 * repository whose work tree has its top at repo: `.git` for a directory;
 * for a `.git` file (`gitdir: X`: a submodule's, X = the superproject's
 * `.git/modules/NAME`, or a linked worktree's, X = `.git/worktrees/NAME`) X,
 * and the directory X's `commondir` file names (a worktree's hooks and
 * config are the main repository's, run at the worktree's top).  False when
 * X or the common dir is outside the host dir. */
static bool git_dirs(int hostfd, const char *repo, const char *host, char **ret_gitdir,
                     char **ret_common)
{
  cleanup_free char *git = *repo ? xfmt("%s/.git", repo) : xstrdup(".git");
  cleanup_free char *line = NULL, *gitdir = NULL, *cpath = NULL, *cline = NULL;
  cleanup_close int fd = ws_open_beneath(hostfd, git, O_PATH | O_CLOEXEC, 0);
  struct stat st;

  if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
    *ret_gitdir = xstrdup(git);
    *ret_common = take_ptr(git);
    return true;
  }
  line = first_line(hostfd, git);
  if (line == NULL || strncmp(line, "gitdir:", 7) != 0)
    return false;
  gitdir = word_path(line + 7 + strspn(line + 7, " \t"), repo, host);
  if (gitdir == NULL)
    return false;
  cpath = xfmt("%s/commondir", gitdir);
  if ((cline = first_line(hostfd, cpath)) == NULL) {
    *ret_common = xstrdup(gitdir);
  } else if ((*ret_common = word_path(cline, gitdir, host)) == NULL) {
    return false;
  }
  *ret_gitdir = take_ptr(gitdir);
  return true;
}

/* A nested repository's (a submodule's, a linked worktree's) own
 * configuration: its common dir's `config`, its gitdir's `config` and
 * `config.worktree`, read on the host; what they name is relative to repo
 * (includes are named, not followed). */
static void repo_config(struct ws_gitcfg *g, int hostfd, const char *gitdir, const char *common,
                        const char *repo, const char *host)
{
  const char *const files[3][2] = {
      {common, "config"}, {gitdir, "config"}, {gitdir, "config.worktree"}};
  struct ws_gitcfg r = {0};

  r.top = repo;
  for (size_t k = 0; k < 3; k++) {
    cleanup_free char *path = xfmt("%s/%s", files[k][0], files[k][1]), *text = NULL;
    cleanup_close int fd = -1;
    struct error err = {0};
    struct stat st;
    size_t len = 0;
    if (k == 1 && strcmp(gitdir, common) == 0)
      continue;
    fd = ws_open_beneath(hostfd, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0);
    if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
        read_fd_all(fd, MAX_CONFIG_SIZE, &text, &len, &err) < 0)
      continue;
    ws_gitcfg_parse(text, len, files[k][0], host, &r, NULL);
  }
  for (size_t i = 0; i < r.n; i++) {
    add_named(g, r.paths[i], r.keys[i]);
    r.paths[i] = r.keys[i] = NULL;
  }
  ws_gitcfg_free(&r);
}

/* Where a hook that is a symlink in outside (an absolute directory outside
 * the host dir) leads in the host dir: its target's path when that is below
 * the host dir (then through the host's own symlinks), and the hook's real
 * path; each named by hook. */
static void outside_link(struct ws_gitcfg *g, int hostfd, const char *outside, const char *name,
                         const char *host, const char *hook)
{
  cleanup_free char *path = xfmt("%s/%s", outside, name), *real = realpath(path, NULL);
  cleanup_free char *abs = NULL, *rel = NULL;
  char target[PATH_MAX];
  ssize_t n = readlink(path, target, sizeof target - 1);

  if (n > 0) {
    target[n] = '\0';
    abs = target[0] == '/' ? xstrdup(target) : xfmt("%s/%s", outside, target);
    if ((rel = word_path(abs, "", host)) != NULL) {
      char *end = ws_host_link_end(hostfd, rel, host);
      if (end != NULL && strcmp(end, rel) != 0)
        add_named(g, end, xstrdup(hook));
      else
        free(end);
      add_named(g, take_ptr(rel), xstrdup(hook));
    }
  }
  if (real != NULL)
    add_named(g, word_path(real, "", host), xstrdup(hook));
}

/* The hooks in the directory fd: dir below the host dir, or outside (an
 * absolute directory outside it, dir NULL); run at repo, named as
 * hooks/NAME. */
static void hooks_in(struct ws_gitcfg *g, int hostfd, int fd, const char *dir, const char *outside,
                     const char *repo, const char *host, const char *hooks)
{
  cleanup_strv char **names = NULL;
  size_t n = 0;

  if (ws_list_dir(fd, &names, &n) < 0)
    return;
  for (size_t i = 0; i < n && i < MAX_HOOKS; i++) {
    cleanup_free char *path = dir ? xfmt("%s/%s", dir, names[i]) : NULL, *end = NULL;
    cleanup_free char *text = NULL, *hook = xfmt("%s/%s", hooks, names[i]);
    cleanup_close int hfd = -1;
    struct error err = {0};
    size_t len = 0, nl = strlen(names[i]);
    struct stat st;

    if ((nl > 7 && strcmp(names[i] + nl - 7, ".sample") == 0) ||
        fstatat(fd, names[i], &st, AT_SYMLINK_NOFOLLOW) < 0)
      continue; /* git runs no .sample */
    if (S_ISLNK(st.st_mode) && outside != NULL) {
      outside_link(g, hostfd, outside, names[i], host, hook);
    } else if (S_ISLNK(st.st_mode)) {
      end = ws_host_link_end(hostfd, path, host);
      if (end != NULL && strcmp(end, path) != 0)
        add_named(g, take_ptr(end), xstrdup(hook));
    } else if (S_ISREG(st.st_mode) &&
               (hfd = openat(fd, names[i], O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)) >= 0 &&
               read_fd_all(hfd, MAX_CONFIG_SIZE, &text, &len, &err) == 0) {
      hook_words(g, hostfd, text, repo, host, hook);
    }
  }
}

void ws_gitcfg_read_hooks(int hostfd, const char *repo, struct ws_gitcfg *g)
{
  cleanup_free char *host = NULL, *hooks = NULL, *dir = NULL, *gitdir = NULL, *common = NULL;
  cleanup_close int fd = -1;
  char link[64];

  if (hostfd < 0)
    return;
  snprintf(link, sizeof link, "/proc/self/fd/%d", hostfd);
  host = realpath(link, NULL);
  if (!git_dirs(hostfd, repo, host, &gitdir, &common))
    return; /* a gitdir outside the host dir: not read */
  if (*repo)
    repo_config(g, hostfd, gitdir, common, repo, host);
  hooks = xfmt("%s/hooks", common);
  dir = ws_host_link_end(hostfd, hooks, host);
  if (dir == NULL)
    return; /* outside the host dir: nothing of the agent's */
  if (strcmp(dir, hooks) != 0)
    add_named(g, xstrdup(dir), xstrdup(hooks)); /* .git/hooks a symlink into the work tree */
  fd = ws_open_beneath(hostfd, dir, O_RDONLY | O_DIRECTORY, 0);
  if (fd >= 0)
    hooks_in(g, hostfd, fd, dir, NULL, repo, host, hooks);
}

/* The hooks of a core.hooksPath outside the host dir (`~/ophooks`, an
 * absolute directory of the operator's): git runs them at the top of the work
 * tree, and they may lead to or run tracked files as .git/hooks' do.  One
 * that leads into the host dir is named as a path (and its hooks read). */
static void read_hooks_path(struct ws_gitcfg *g, int hostfd, const char *host)
{
  const char *v = g->hooks_path, *home = getenv("HOME");
  cleanup_free char *abs = NULL, *real = NULL, *rel = NULL;
  cleanup_close int fd = -1;

  if (v == NULL || host == NULL)
    return;
  if (v[0] == '~' && v[1] == '/' && home != NULL && home[0] == '/')
    abs = xfmt("%s/%s", home, v + 2);
  else if (v[0] == '/')
    abs = xstrdup(v);
  if (abs == NULL || (real = realpath(abs, NULL)) == NULL)
    return; /* relative: a path of the work tree, named above */
  if ((rel = word_path(real, "", host)) != NULL) {
    fd = ws_open_beneath(hostfd, rel, O_RDONLY | O_DIRECTORY, 0);
    if (fd >= 0)
      hooks_in(g, hostfd, fd, rel, NULL, "", host, "core.hooksPath");
    add_named(g, take_ptr(rel), xstrdup("core.hooksPath"));
    return;
  }
  fd = open(real, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC);
  if (fd >= 0)
    hooks_in(g, hostfd, fd, NULL, real, "", host, real);
}

void ws_gitcfg_read(int hostfd, struct ws_gitcfg *g)
{
  cleanup_free char *host = NULL;
  cleanup_strv char **todo = NULL;
  cleanup_strv char **seen = NULL;
  char link[64];

  memset(g, 0, sizeof *g);
  if (hostfd < 0)
    return;
  snprintf(link, sizeof link, "/proc/self/fd/%d", hostfd);
  host = realpath(link, NULL);
  read_operator(hostfd, host, g, &todo);
  strv_push(&todo, ".git/config");
  for (size_t depth = 0; todo != NULL && *todo != NULL && depth < MAX_INCLUDE_DEPTH; depth++) {
    cleanup_strv char **next = NULL;
    for (char **t = todo; *t; t++) {
      cleanup_free char *text = NULL, *dir = NULL;
      cleanup_close int fd = -1;
      struct error err = {0};
      size_t len = 0;
      const char *slash = strrchr(*t, '/');
      if (seen && strv_contains(seen, *t))
        continue;
      strv_push(&seen, *t);
      /* the host's file, never through a symlink of the work tree */
      fd = ws_open_beneath(hostfd, *t, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0);
      if (fd < 0 || read_fd_all(fd, MAX_CONFIG_SIZE, &text, &len, &err) < 0)
        continue;
      dir = xstrndup(*t, slash ? (size_t)(slash - *t) : 0);
      ws_gitcfg_parse(text, len, dir, host, g, &next);
    }
    strv_free(todo);
    todo = take_ptr(next);
  }
  /* a named path that is a symlink of the host's into the work tree
   * (core.hooksPath = .githooks, .githooks -> tools/hooks): where it leads too */
  for (size_t i = 0, n = g->n; i < n; i++) {
    char *end = ws_host_link_end(hostfd, g->paths[i], host);
    if (end != NULL && strcmp(end, g->paths[i]) != 0)
      add_named(g, end, xstrdup(g->keys[i]));
    else
      free(end);
  }
  ws_gitcfg_read_hooks(hostfd, "", g);
  read_hooks_path(g, hostfd, host);
}

size_t ws_gitcfg_hash_size(int fd)
{
  cleanup_free char *text = NULL;
  struct ws_gitcfg g = {0};
  struct error err = {0};
  size_t len = 0, n;

  if (fd < 0 || read_fd_all(fd, MAX_CONFIG_SIZE, &text, &len, &err) < 0)
    return 0;
  ws_gitcfg_parse(text, len, NULL, NULL, &g, NULL);
  n = g.hash_size == 0 ? 20 : g.hash_size == SIZE_MAX ? 0 : g.hash_size;
  ws_gitcfg_free(&g);
  return n;
}

void ws_gitcfg_free(struct ws_gitcfg *g)
{
  for (size_t i = 0; i < g->n; i++) {
    free(g->paths[i]);
    free(g->keys[i]);
  }
  free(g->paths);
  free(g->keys);
  free(g->hooks_path);
  memset(g, 0, sizeof *g);
}
