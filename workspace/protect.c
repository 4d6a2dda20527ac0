/* protect.c - which changes of an overlay workspace can make a host tool run
 * something or read from elsewhere once committed (THREAT-MODEL.md,
 * "Workspace protection rule").
 *
 * In overlay mode nothing the agent writes reaches the host before `commit`,
 * so protection is decided here, at review time, not with mounts: `diff`
 * marks such a change and `commit` leaves it out unless the operator names it
 * (`--include-protected PATH`).  A change is protected when its path (or the
 * path it was renamed from):
 *   - has a `.git` component (any depth) that is not a directory: a
 *     `gitdir:` file or a symlink redirects git to a directory of the agent's;
 *   - lies below a `.git` directory (any depth, nested repositories too) and
 *     is not git's object, ref, log or index data: objects/ (but not
 *     objects/info/, whose alternates make git read objects from elsewhere),
 *     refs/, logs/, index, HEAD, ORIG_HEAD, FETCH_HEAD, packed-refs, a new
 *     sharedindex.<id> (read only through a split index, which is checked
 *     with it; one deleted or rewritten is protected: the host's index may
 *     read it), each a regular file or directory.  Everything else there
 *     (config, hooks/, info/, commondir, modules/, worktrees/, ...) is
 *     configuration or a redirection: `git status` runs core.fsmonitor,
 *     `git commit` runs hooks;
 *   - lies below a directory that git would take for a repository of its
 *     own (a bare repository: it holds a file or symlink named HEAD, in the
 *     change set or on the host) and is not git's data, as above: `cd dir && git
 *     status` runs that directory's core.fsmonitor;
 *   - is a `.git` directory itself (deleted, or new: it is made on the host
 *     only to hold the git data committed into it), or has a `.gitmodules`
 *     component;
 *   - contains the components of an entry of the profile's protected list
 *     (".envrc", ".vscode/", ...) as a run at any depth;
 *   - is git's data that makes the host's git write what the rules above
 *     hold back: an index staging it (gitindex.c), a ref naming a commit
 *     that brings it, or a reflog (logs/) whose entries the agent added name
 *     one: `git reset --hard HEAD@{1}` (gitrefs.c, gitobjects.c);
 *   - is an object file of the agent's (a loose object, a pack or its index)
 *     with an object that is not the one its name or index gives: git reads
 *     objects unchecked, so a forged copy of the host's own tree brings the
 *     agent's files with no ref changed (gitobjects.c).
 * Names are compared by their key (name_key): what a case-folding host file
 * system could resolve them to, so a case-insensitive host is covered too.
 * `.git` and `.gitmodules` also match their 8.3 names `git~1`, `gitmod~1`.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "workspace/internal.h"

#define MAX_COMPONENTS 4096

struct comp {
  const char *s;
  size_t n;
  const char *k; /* its key (name_key) */
  bool glob;     /* the key holds `*`, `?` or `[` (a pattern's component) */
};

/* Bytes of a code point at s (n left) that HFS+ ignores in names (U+200C to
 * U+200F, U+202A to U+202E, U+206A to U+206F, U+FEFF), or 0. */
static size_t ignorable_len(const unsigned char *s, size_t n)
{
  if (n >= 3 && s[0] == 0xe2 && s[1] == 0x80 &&
      ((s[2] >= 0x8c && s[2] <= 0x8f) || (s[2] >= 0xaa && s[2] <= 0xae)))
    return 3;
  if (n >= 3 && s[0] == 0xe2 && s[1] == 0x81 && s[2] >= 0xaa && s[2] <= 0xaf)
    return 3;
  if (n >= 3 && s[0] == 0xef && s[1] == 0xbb && s[2] == 0xbf)
    return 3;
  return 0;
}

/* The key of a name: what case-folding and Unicode-normalising host file
 * systems could resolve it to.  HFS+ ignorable code points dropped, ASCII
 * lower-cased (and U+017F, U+212A folded to s and k, as ext4's casefold
 * does), cut at a `:` (an NTFS stream of the name), trailing dots and spaces
 * dropped (NTFS).  A name that would become empty ("..") is kept as it is.
 * buf has room for n + 1 bytes; returns the key's length. */
static size_t name_key(const char *name, size_t n, char *buf)
{
  const unsigned char *s = (const unsigned char *)name;
  size_t k = 0, skip;

  for (size_t i = 0; i < n; i++) {
    if ((skip = ignorable_len(s + i, n - i)) > 0) {
      i += skip - 1;
      continue;
    }
    if (s[i] == ':')
      break;
    if (i + 1 < n && s[i] == 0xc5 && s[i + 1] == 0xbf) { /* U+017F long s */
      buf[k++] = 's';
      i++;
    } else if (i + 2 < n && s[i] == 0xe2 && s[i + 1] == 0x84 && s[i + 2] == 0xaa) { /* Kelvin */
      buf[k++] = 'k';
      i += 2;
    } else {
      buf[k++] = (char)(s[i] >= 'A' && s[i] <= 'Z' ? s[i] - 'A' + 'a' : s[i]);
    }
  }
  while (k > 0 && (buf[k - 1] == '.' || buf[k - 1] == ' '))
    k--;
  if (k == 0) {
    memcpy(buf, name, n);
    k = n;
  }
  buf[k] = '\0';
  return k;
}

/* Does c's key equal lit (lower case) or, when given, its 8.3 name short? */
static bool comp_is(struct comp c, const char *lit, const char *short_name)
{
  return strcmp(c.k, lit) == 0 || (short_name && strcmp(c.k, short_name) == 0);
}

static bool comp_ieq(struct comp c, const char *lit)
{
  return comp_is(c, lit, NULL);
}

/* Does c match the pattern component p (a name, or a glob), by their keys? */
static bool comp_match(struct comp c, struct comp p)
{
  return p.glob ? fnmatch(p.k, c.k, FNM_PERIOD) == 0 : strcmp(p.k, c.k) == 0;
}

static bool comp_eq(struct comp c, const char *lit)
{
  return c.n == strlen(lit) && strncmp(c.s, lit, c.n) == 0;
}

/* Is the name s (n bytes) lit or short_name (may be NULL) by its key? */
static bool name_is(const char *s, size_t n, const char *lit, const char *short_name)
{
  char small[256];
  char *buf = n < sizeof small ? small : xmalloc(n + 1);
  bool res;

  name_key(s, n, buf);
  res = comp_is((struct comp){s, n, buf, false}, lit, short_name);
  if (buf != small)
    free(buf);
  return res;
}

bool ws_is_git_name(const char *s, size_t n)
{
  return name_is(s, n, ".git", "git~1");
}

static bool is_git(struct comp c)
{
  return comp_is(c, ".git", "git~1");
}

static bool is_gitmodules(struct comp c)
{
  return comp_is(c, ".gitmodules", "gitmod~1");
}

/* Split path on '/' into v (at most max), with each component's key in
 * arena (room for 2 * strlen(path) + 2 bytes); returns the count. */
static size_t split(const char *path, struct comp *v, size_t max, char *arena)
{
  size_t n = 0;

  for (const char *p = path; *p && n < max;) {
    const char *e = strchr(p, '/');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (len > 0) {
      size_t kn = name_key(p, len, arena);
      v[n++] = (struct comp){p, len, arena, strpbrk(arena, "*?[") != NULL};
      arena += kn + 1;
    }
    p += len;
    while (*p == '/')
      p++;
  }
  return n;
}

static char *arena_for(const char *path)
{
  return xmalloc(2 * strlen(path) + 2);
}

/* Is s (n bytes) the name of a split index's shared index, `sharedindex.`
 * and a SHA-1 or SHA-256 id in lower-case hex (as git writes it)? */
static bool shared_index_name(const char *s, size_t n)
{
  static const char prefix[] = "sharedindex.";
  size_t k = sizeof prefix - 1;

  if ((n != k + 40 && n != k + 64) || memcmp(s, prefix, k) != 0)
    return false;
  for (; k < n; k++)
    if (!((s[k] >= '0' && s[k] <= '9') || (s[k] >= 'a' && s[k] <= 'f')))
      return false;
  return true;
}

/* Is s (n bytes) prefix, a SHA-1 or SHA-256 id in lower-case hex and one of
 * the n_ext extensions ext? */
static bool hex_file_name(const char *s, size_t n, const char *prefix, const char *const *ext,
                          size_t n_ext)
{
  size_t k = strlen(prefix), h;

  if (n <= k || memcmp(s, prefix, k) != 0)
    return false;
  for (h = k; h < n && ((s[h] >= '0' && s[h] <= '9') || (s[h] >= 'a' && s[h] <= 'f')); h++)
    ;
  if (h - k != 40 && h - k != 64)
    return false;
  for (size_t i = 0; i < n_ext; i++)
    if (n - h == strlen(ext[i]) && memcmp(s + h, ext[i], n - h) == 0)
      return true;
  return false;
}

/* A pack and its index (`pack-<id>.pack`, `.idx`) or its `.keep`: what the
 * object reader checks (gitobjects.c), or nothing git reads objects by.
 * The other files of objects/pack are indexes git trusts without checking
 * them against the packs: a multi-pack-index that names another object for
 * a commit's id (the host's git log showed the other commit, and its HEAD
 * could no longer be parsed), a reachability bitmap or a reverse index that
 * `git gc` would repack by.  Left out, they cost the host's git speed only;
 * the host's own copies go when the agent deletes or rewrites them
 * (git_cache). */
static bool pack_file_name(const char *s, size_t n)
{
  static const char *const ext[] = {".pack", ".idx", ".keep"};

  return hex_file_name(s, n, "pack-", ext, ARRAY_SIZE(ext));
}

/* Is each of v (n) its own key: a name no case-folding or normalising host
 * resolves to another (git writes its object files so: lower-case hex,
 * `pack`, `pack-<id>.idx`)?  `objects/Pack/` or `objects/2E/<id>.` would be
 * git's own there, unchecked. */
static bool canonical_below(const struct comp *v, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (strlen(v[i].k) != v[i].n || memcmp(v[i].k, v[i].s, v[i].n) != 0)
      return false;
  return true;
}

/* Is rest (the components after a .git directory) one of git's caches of
 * its object store: the commit-graph (one file or a chain of them), a
 * multi-pack-index, a pack's or a multi-pack-index's bitmap or reverse
 * index?  git trusts them without checking, so the agent's are held back;
 * but they describe the objects, and once the agent's `git gc --prune`
 * deleted some, the host's copies named objects the committed repository no
 * longer had (`git fsck` failed: stale-commit-graph).  Deleting one makes
 * git run or read nothing: it rebuilds it at its next gc. */
static bool git_cache(const struct comp *rest, size_t n)
{
  static const char *const ext[] = {".bitmap", ".rev"};
  static const char *const graph[] = {".graph"};

  if (n < 3 || !comp_eq(rest[0], "objects") || !canonical_below(rest + 1, n - 1))
    return false;
  if (comp_eq(rest[1], "info"))
    return (n == 3 && comp_eq(rest[2], "commit-graph")) ||
           (n == 4 && comp_eq(rest[2], "commit-graphs") &&
            (comp_eq(rest[3], "commit-graph-chain") ||
             hex_file_name(rest[3].s, rest[3].n, "graph-", graph, ARRAY_SIZE(graph))));
  if (n != 3 || !comp_eq(rest[1], "pack"))
    return false;
  return comp_eq(rest[2], "multi-pack-index") ||
         hex_file_name(rest[2].s, rest[2].n, "pack-", ext, ARRAY_SIZE(ext)) ||
         hex_file_name(rest[2].s, rest[2].n, "multi-pack-index-", ext, ARRAY_SIZE(ext));
}

/* rest (the components after a .git directory) is git's data, not config. */
static bool git_data(const struct comp *rest, size_t n, enum ws_ftype type)
{
  static const char *const files[] = {"index", "HEAD", "ORIG_HEAD", "FETCH_HEAD", "packed-refs"};

  if (type != WS_T_FILE && type != WS_T_DIR)
    return false; /* a symlink or a special file anywhere in .git */
  if (n == 1 && type == WS_T_FILE && shared_index_name(rest[0].s, rest[0].n))
    return true; /* read only through an index, which is checked with it (gitindex.c) */
  if (comp_eq(rest[0], "objects")) {
    if (!canonical_below(rest + 1, n - 1))
      return false;
    if (n >= 2 && comp_ieq(rest[1], "info"))
      return false;
    if (n >= 2 && comp_eq(rest[1], "pack") && (n > 3 || (n == 3 && type != WS_T_DIR)))
      return n == 3 && pack_file_name(rest[2].s, rest[2].n);
    return true;
  }
  if (comp_eq(rest[0], "refs") || comp_eq(rest[0], "logs"))
    return true;
  for (size_t i = 0; n == 1 && i < ARRAY_SIZE(files); i++)
    if (comp_eq(rest[0], files[i]))
      return type == WS_T_FILE;
  return false;
}

/* A change of rest (below a git dir) that commit applies: git's data, or
 * the deletion of one of its caches (git rebuilds it). */
static bool git_committed(const struct comp *rest, size_t n, enum ws_ftype type, bool deleted)
{
  return git_data(rest, n, type) || (deleted && type == WS_T_FILE && git_cache(rest, n));
}

static const char *git_reason(const struct comp *v, size_t n, enum ws_ftype type, bool deleted)
{
  for (size_t i = 0; i < n; i++) {
    if (is_gitmodules(v[i]))
      return "`.gitmodules` (submodule URLs and paths)";
    if (!is_git(v[i]))
      continue;
    if (i == n - 1 && type != WS_T_DIR)
      return "a `.git` that is not a directory (a gitdir: file or link points git elsewhere)";
    if (i == n - 1 && deleted)
      return "deletes a `.git` directory";
    if (i == n - 1) /* made on the host only to hold git data committed into it */
      return "a new `.git` directory (an empty one makes tools take the directory for a "
             "broken repository)";
    if (!git_committed(v + i + 1, n - i - 1, type, deleted)) {
      if (n - i - 1 >= 2 && comp_eq(v[i + 1], "objects") && !canonical_below(v + i + 2, n - i - 2))
        return "a name below `objects/` that a case-folding or normalising host takes for another "
               "(git's own object file or pack there, unchecked)";
      if (n - i - 1 >= 3 && comp_eq(v[i + 1], "objects") && comp_eq(v[i + 2], "pack"))
        return "an index of packs git trusts without checking (multi-pack-index, bitmap, "
               "reverse index): left out, it costs the host's git speed only";
      if (git_cache(v + i + 1, n - i - 1))
        return "a commit-graph, which git trusts without checking: left out, it costs the "
               "host's git speed only";
      return "git configuration, hooks or a redirection below `.git` (only objects, refs, "
             "logs and the index are committed by default)";
    }
  }
  return NULL;
}

/* The protected list split into keyed components, kept between calls while
 * the list (compared by content) stays the same: a scan checks every change
 * against every entry. */
static struct {
  char **src; /* a copy of the list */
  size_t n;
  struct comp *c; /* the components of entry i: c[start[i]], count[i] of them */
  size_t *start, *count;
  char *arena;
  char *const *trusted; /* ws_mark_protected's list, checked once for all its changes */
} pk;

static void keyed(char *const *patterns)
{
  size_t n = 0, total = 0, m = 0;
  bool same;
  char *a;

  while (patterns[n])
    total += 2 * strlen(patterns[n++]) + 2;
  same = pk.src != NULL && pk.n == n;
  for (size_t i = 0; same && i < n; i++)
    same = strcmp(pk.src[i], patterns[i]) == 0;
  if (same)
    return;
  strv_free(pk.src);
  free(pk.c);
  free(pk.start);
  free(pk.count);
  free(pk.arena);
  pk.src = strv_dup((char **)patterns);
  pk.n = n;
  pk.c = xmalloc((total + 1) * sizeof *pk.c);
  pk.start = xmalloc((n + 1) * sizeof *pk.start);
  pk.count = xmalloc((n + 1) * sizeof *pk.count);
  pk.arena = a = xmalloc(total + 1);
  for (size_t i = 0; i < n; i++) {
    pk.start[i] = m;
    pk.count[i] = split(pk.src[i], pk.c + m, 64, a);
    m += pk.count[i];
    a += 2 * strlen(pk.src[i]) + 2;
  }
}

/* Does the run of components p (k of them) occur in v? */
static bool run_match(const struct comp *v, size_t n, const struct comp *p, size_t k)
{
  if (k == 0 || k > n)
    return false;
  for (size_t i = 0; i + k <= n; i++) {
    size_t j = 0;
    while (j < k && comp_match(v[i + j], p[j]))
      j++;
    if (j == k)
      return true;
  }
  return false;
}

/* The entry of patterns whose run of components occurs in v, or NULL. */
static const char *listed(const struct comp *v, size_t n, char *const *patterns)
{
  if (patterns == NULL)
    return NULL;
  if (patterns != pk.trusted)
    keyed(patterns);
  for (size_t i = 0; i < pk.n; i++)
    if (run_match(v, n, pk.c + pk.start[i], pk.count[i]))
      return patterns[i];
  return NULL;
}

/* Is a directory above path (components v[0..n-2]) a bare repository? */
static bool below_bare_repo(const struct comp *v, size_t n, const char *path, enum ws_ftype type,
                            bool deleted, const struct ws_gitdir_probe *probe)
{
  for (size_t i = 0; probe && i < n; i++) {
    size_t len = i == 0 ? 0 : (size_t)(v[i - 1].s + v[i - 1].n - path);
    if (probe->is_gitdir(probe->ctx, path, len) && !git_committed(v + i, n - i, type, deleted))
      return true;
  }
  return false;
}

const char *ws_protect_reason_in(const char *path, enum ws_ftype type, bool deleted,
                                 char *const *patterns, const struct ws_gitdir_probe *probe,
                                 const char **ret_pattern)
{
  static struct comp v[MAX_COMPONENTS];
  cleanup_free char *arena = NULL;
  size_t n;
  const char *why;

  *ret_pattern = NULL;
  if (path == NULL)
    return NULL;
  arena = arena_for(path);
  n = split(path, v, MAX_COMPONENTS, arena);
  if (n == 0)
    return NULL;
  if (n == MAX_COMPONENTS)
    return "a path too deep to check";
  /* the host's HEAD of its deepest directory could not be looked for (nor
   * could a host tool open it by its name) */
  if (probe && strlen(path) + sizeof "/HEAD" > PATH_MAX)
    return "a path too long to check (longer than PATH_MAX)";
  why = git_reason(v, n, type, deleted);
  if (why)
    return why;
  if (below_bare_repo(v, n, path, type, deleted, probe))
    return "configuration or hooks of a directory git takes for a bare repository (it holds "
           "HEAD)";
  if ((*ret_pattern = listed(v, n, patterns)) != NULL)
    return "the profile's protected list";
  return NULL;
}

/* Why a symlink at path with this target could lead a host tool out of the
 * workspace or into a protected path, or NULL.  The target is resolved by
 * name against the link's directory (whose components are real directories:
 * no change lies below a symlink); a `..` that steps back out of a component
 * the target itself named is refused, since that component may be a symlink
 * (the host's or another change) and `..` then leaves from where it leads. */
const char *ws_protect_link_reason(const char *path, const char *target, char *const *patterns,
                                   const char **ret_pattern)
{
  static struct comp v[MAX_COMPONENTS];
  const char *slash = strrchr(path, '/');
  cleanup_free char *dir = xstrndup(path, slash ? (size_t)(slash - path) : 0);
  cleanup_free char *arena = arena_for(dir), *tarena = arena_for(target);
  size_t n = split(dir, v, MAX_COMPONENTS, arena), base = n, t;
  static struct comp tv[MAX_COMPONENTS];

  *ret_pattern = NULL;
  if (target[0] == '/')
    return "a symlink to an absolute path (host tools that follow it leave the workspace)";
  t = split(target, tv, MAX_COMPONENTS, tarena);
  if (n == MAX_COMPONENTS || t == MAX_COMPONENTS)
    return "a path too deep to check";
  for (size_t i = 0; i < t; i++) {
    if (comp_eq(tv[i], "."))
      continue;
    if (!comp_eq(tv[i], "..")) {
      if (n == MAX_COMPONENTS)
        return "a path too deep to check";
      v[n++] = tv[i];
      continue;
    }
    if (n == 0)
      return "a symlink whose target climbs out of the workspace (`..`)";
    if (n > base)
      return "a symlink whose target steps back out of a directory it names (`dir/..`)";
    n--;
    base--;
  }
  for (size_t i = 0; i < n; i++)
    if (is_git(v[i]) || is_gitmodules(v[i]))
      return "a symlink into `.git` or to `.gitmodules`";
  if ((*ret_pattern = listed(v, n, patterns)) != NULL)
    return "a symlink into a path of the profile's protected list";
  return NULL;
}

const char *ws_protect_reason(const char *path, enum ws_ftype type, bool deleted,
                              char *const *patterns, const char **ret_pattern)
{
  return ws_protect_reason_in(path, type, deleted, patterns, NULL, ret_pattern);
}

/* The bare-repository probe of ws_mark_protected: dir (len bytes of path)
 * holds a regular file HEAD in the change set or on the host.  The answers
 * for the directories of the path probed last are kept (the scan's order
 * keeps a tree's paths together, and each path's directories are probed
 * from the top down): a chain of 2,000 new directories was 2 million looks
 * on the host, one per directory of each path, and is 2,000.  The paths
 * probed are the changes' own, alive through the pass, so a path is told
 * from the last by its address; it is compared with the last once. */
struct probe_dir {
  size_t len;
  bool res;
};

struct probe_ctx {
  const struct ws_changes *c;
  int hostfd;
  char **heads; /* sorted dirs holding an added or modified HEAD */
  size_t n_heads;
  const char *cur;        /* the path probed last */
  struct probe_dir *dirs; /* its directories' answers, by len */
  size_t n_dirs, cap_dirs;
};

static int str_cmp(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

enum host_head { HEAD_NONE, HEAD_THERE, HEAD_UNKNOWN };

/* Does the host dir hold a regular file or symlink HEAD in dir (len bytes
 * of path, "" = the root)?  Only a HEAD that is not there (or a directory
 * on the way that is not one, or is a symlink, which git would not take
 * for it) is HEAD_NONE; any other failure to look (a mount point on the
 * way, EACCES, ENAMETOOLONG) is HEAD_UNKNOWN, which each caller takes the
 * way that protects. */
static enum host_head host_head(int hostfd, const char *path, size_t len)
{
  cleanup_free char *head = len ? xfmt("%.*s/HEAD", (int)len, path) : xstrdup("HEAD");
  struct stat st;
  enum host_head res;
  int fd;

  if (hostfd < 0)
    return HEAD_NONE;
  fd = ws_open_beneath(hostfd, head, O_PATH | O_NOFOLLOW, 0);
  if (fd < 0)
    return errno == ENOENT || errno == ENOTDIR || errno == ELOOP ? HEAD_NONE : HEAD_UNKNOWN;
  if (fstat(fd, &st) < 0)
    res = HEAD_UNKNOWN;
  else
    res = S_ISREG(st.st_mode) || S_ISLNK(st.st_mode) ? HEAD_THERE : HEAD_NONE;
  close(fd);
  return res;
}

/* A new path: keep the answers of the directories it shares with the last */
static void probe_switch(struct probe_ctx *p, const char *path)
{
  size_t common = 0, keep = 0;

  if (p->cur != NULL)
    while (path[common] != '\0' && path[common] == p->cur[common])
      common++;
  /* a directory of both: its len bytes alike, ended by '/' (or the end) in both */
  while (keep < p->n_dirs &&
         (p->dirs[keep].len == 0 ||
          (p->dirs[keep].len <= common &&
           (path[p->dirs[keep].len] == '/' || path[p->dirs[keep].len] == '\0') &&
           (p->cur[p->dirs[keep].len] == '/' || p->cur[p->dirs[keep].len] == '\0'))))
    keep++;
  p->n_dirs = keep;
  p->cur = path;
}

static bool probe_gitdir(void *vctx, const char *path, size_t len)
{
  struct probe_ctx *p = vctx;
  cleanup_free char *dir = NULL;
  size_t lo = 0, hi;
  bool res;

  if (path != p->cur)
    probe_switch(p, path);
  for (hi = p->n_dirs; lo < hi;) { /* sorted by len */
    size_t mid = (lo + hi) / 2;
    if (p->dirs[mid].len == len)
      return p->dirs[mid].res;
    if (p->dirs[mid].len < len)
      lo = mid + 1;
    else
      hi = mid;
  }
  dir = xstrndup(path, len);
  res = p->n_heads > 0 && bsearch(&dir, p->heads, p->n_heads, sizeof *p->heads, str_cmp) != NULL;
  if (!res) /* a bare repository there, unless surely not */
    res = host_head(p->hostfd, path, len) != HEAD_NONE;
  if (p->n_dirs == p->cap_dirs)
    p->dirs =
        xrealloc(p->dirs, (p->cap_dirs = p->cap_dirs ? 2 * p->cap_dirs : 64) * sizeof *p->dirs);
  memmove(p->dirs + lo + 1, p->dirs + lo, (p->n_dirs - lo) * sizeof *p->dirs);
  p->dirs[lo] = (struct probe_dir){len, res};
  p->n_dirs++;
  return res;
}

/* A HEAD that ch brings to a directory which had none on the host makes it a
 * repository git finds (a bare one, unless it is a `.git`): whatever the
 * directory already holds on the host, committed before as ordinary files
 * (`config` with core.fsmonitor, `hooks/`), becomes git's configuration.  Not
 * for a `.git` directory's own HEAD (its configuration is protected anyway),
 * nor for the HEADs of its refs/ and logs/ (refs/remotes/origin/HEAD). */
static const char *new_head_reason(const struct ws_change *ch, int hostfd)
{
  static struct comp v[MAX_COMPONENTS];
  cleanup_free char *arena = NULL;
  size_t n;

  if (ch->kind == WS_DELETED || (ch->type != WS_T_FILE && ch->type != WS_T_SYMLINK) ||
      (ch->kind == WS_MODIFIED && (ch->old_type == WS_T_FILE || ch->old_type == WS_T_SYMLINK)))
    return NULL;
  arena = arena_for(ch->path);
  n = split(ch->path, v, MAX_COMPONENTS, arena);
  if (n == 0 || !comp_ieq(v[n - 1], "head"))
    return NULL;
  if (n >= 2 && is_git(v[n - 2]))
    return NULL;
  for (size_t i = 0; i + 2 < n; i++)
    if (is_git(v[i]) && (comp_eq(v[i + 1], "refs") || comp_eq(v[i + 1], "logs")))
      return NULL;
  /* the host's own HEAD, unless surely so */
  if (host_head(hostfd, ch->path, n == 1 ? 0 : (size_t)(v[n - 2].s + v[n - 2].n - ch->path)) ==
      HEAD_THERE)
    return NULL;
  return "a new HEAD: git takes its directory for a bare repository and reads the `config` "
         "and `hooks/` already there";
}

/* Is path in a git dir (a `.git`, or a bare repository the probe finds),
 * with base its last component? */
static bool in_gitdir(const char *path, const char *base, const struct ws_gitdir_probe *probe)
{
  size_t dlen = base > path ? (size_t)(base - 1 - path) : 0;
  const char *dname = dlen ? memrchr(path, '/', dlen) : NULL;

  dname = dname ? dname + 1 : path;
  return (dlen > 0 && ws_is_git_name(dname, dlen - (size_t)(dname - path))) ||
         probe->is_gitdir(probe->ctx, path, dlen);
}

/* A shared index (`sharedindex.<id>` of a split index) that the change
 * deletes or rewrites: the host's own index may read it (git never rewrites
 * one, and deletes only those it no longer uses), and committed without the
 * agent's index, which may be left out, it breaks or changes the host's. */
static const char *shared_index_reason(const char *path, enum ws_kind kind,
                                       const struct ws_gitdir_probe *probe)
{
  const char *base = path ? strrchr(path, '/') : NULL;

  if (path == NULL || kind == WS_ADDED)
    return NULL;
  base = base ? base + 1 : path;
  if (!shared_index_name(base, strlen(base)) || !in_gitdir(path, base, probe))
    return NULL;
  return "deletes or rewrites a shared index (`sharedindex.*`), which the host's split index may "
         "read";
}

/* The directory of an index being read, for its shared index (ws_git_shared). */
struct shared_ctx {
  const struct ws_layers *l;
  const char *dir;
  size_t dlen;
};

/* ws_git_shared's open: name in the index's directory, in the first layer
 * that holds a regular file of that name, else (or when host) the host dir. */
static int open_shared(void *vctx, const char *name, bool host)
{
  const struct shared_ctx *c = vctx;
  cleanup_free char *path = c->dlen ? xfmt("%.*s/%s", (int)c->dlen, c->dir, name) : xstrdup(name);
  struct stat st;

  for (size_t i = 0; !host && i < c->l->n; i++) {
    int fd = ws_open_beneath(c->l->fds[i], path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK, 0);
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
      return fd;
    if (fd >= 0)
      close(fd);
  }
  if (c->l->hostfd < 0)
    return -1;
  return ws_open_beneath(c->l->hostfd, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK, 0);
}

/* The hash size the host's git reads the index beside sc's directory with:
 * its repository's, from the host's `config` there (the agent's is never
 * committed by default); 20 where the host has none and no `commondir`
 * (git's default: a repository the agent made reaches the host without its
 * config); 0 (the host index's) when it cannot tell, a worktree's index. */
static size_t index_hash_size(struct shared_ctx *sc)
{
  cleanup_close int cfg = -1, common = -1;

  if (sc->l->hostfd < 0)
    return 20;
  cfg = open_shared(sc, "config", true);
  if (cfg >= 0)
    return ws_gitcfg_hash_size(cfg);
  if (errno != ENOENT)
    return 0;
  common = open_shared(sc, "commondir", true);
  return common < 0 && errno == ENOENT ? 20 : 0;
}

/* A git index (`index` in a `.git` or a bare repository) that names a path
 * git would never write, or a protected path, symlink or gitlink the host's
 * index at the same path does not hold: `git checkout -- .` on the host
 * writes it (gitindex.c).  *ret_detail: the path, quoted. */
static const char *index_reason(const struct ws_change *ch, const struct ws_layers *l,
                                char *const *patterns, const struct ws_gitdir_probe *probe,
                                char **ret_detail)
{
  const char *base = strrchr(ch->path, '/'), *why;
  struct shared_ctx sc = {l, ch->path, base ? (size_t)(base - ch->path) : 0};
  struct ws_git_shared sh = {open_shared, &sc};
  cleanup_close int fd = -1, host = -1;
  cleanup_free char *bad = NULL;

  if (l == NULL || ch->kind == WS_DELETED || ch->type != WS_T_FILE)
    return NULL;
  base = base ? base + 1 : ch->path;
  if (!name_is(base, strlen(base), "index", NULL) || !in_gitdir(ch->path, base, probe))
    return NULL;
  fd = ws_open_beneath(l->fds[ch->layer], ch->path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK, 0);
  if (fd < 0)
    return "a git index agentrt cannot read (git checks none of its paths)";
  if (l->hostfd >= 0) /* missing or unreadable: no entries were there before */
    host = ws_open_beneath(l->hostfd, ch->path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK, 0);
  why = ws_git_index_reason(fd, host, &sh, patterns, index_hash_size(&sc), &bad);
  if (why && bad)
    *ret_detail = ws_quote_path(bad);
  return why;
}

/* The paths the host repository's configuration names (gitconfig.c), split
 * into keyed components once for all changes. */
struct host_named {
  struct ws_gitcfg g;
  struct comp **c; /* c[i]: the components of g.paths[i] */
  size_t *n;
  char **arena;
};

/* Byte order with `/` before every other byte: a sorted list of directories
 * is then in the order of a walk of the tree, each subtree in one run. */
static int dir_cmp(const void *a, const void *b)
{
  const unsigned char *x = *(const unsigned char *const *)a, *y = *(const unsigned char *const *)b;

  for (;; x++, y++) {
    unsigned cx = *x == '/' ? 1 : *x, cy = *y == '/' ? 1 : *y;
    if (cx != cy)
      return (int)cx - (int)cy;
    if (cx == 0)
      return 0;
  }
}

/* Is a (n bytes) the directory d or one above it? */
static bool dir_above(const char *a, size_t n, const char *d)
{
  return strncmp(a, d, n) == 0 && (d[n] == '\0' || d[n] == '/');
}

/* The hooks of the host's repositories nested in the host dir that hold a
 * change: every directory above a change (its path or the renamed-from path)
 * with a `.git` on the host (a directory, or the gitdir file of a submodule
 * or a linked worktree), each looked at once. */
static void nested_hooks(struct ws_gitcfg *g, const struct ws_changes *c, int hostfd)
{
  char **dirs = xmalloc((2 * c->n + 1) * sizeof *dirs);
  const char *prev = NULL;
  size_t n = 0;

  for (size_t i = 0; i < c->n; i++) {
    const char *paths[2] = {c->v[i].path, c->v[i].old_path};
    for (size_t k = 0; k < 2; k++) {
      const char *slash = paths[k] ? strrchr(paths[k], '/') : NULL;
      if (slash)
        dirs[n++] = xstrndup(paths[k], (size_t)(slash - paths[k]));
    }
  }
  qsort(dirs, n, sizeof *dirs, dir_cmp);
  for (size_t i = 0; i < n; i++) {
    const char *d = dirs[i];
    size_t len = strlen(d);
    /* each directory above d (and d): the ones above prev were looked at */
    for (size_t q = 1; q <= len; q++) {
      cleanup_free char *a = NULL, *git = NULL;
      cleanup_close int fd = -1;
      if (d[q] != '/' && d[q] != '\0')
        continue;
      if (prev && dir_above(d, q, prev))
        continue;
      a = xstrndup(d, q);
      git = xfmt("%s/.git", a);
      fd = ws_open_beneath(hostfd, git, O_PATH, 0); /* a directory, or a gitdir file */
      if (fd >= 0)
        ws_gitcfg_read_hooks(hostfd, a, g);
    }
    prev = d;
  }
  for (size_t i = 0; i < n; i++)
    free(dirs[i]);
  free(dirs);
}

/* Each path of h->g split into keyed components. */
static void host_named_split(struct host_named *h)
{
  if (h->g.n == 0)
    return;
  h->c = xmalloc(h->g.n * sizeof *h->c);
  h->n = xmalloc(h->g.n * sizeof *h->n);
  h->arena = xmalloc(h->g.n * sizeof *h->arena);
  for (size_t i = 0; i < h->g.n; i++) {
    h->c[i] = xmalloc(64 * sizeof **h->c);
    h->arena[i] = arena_for(h->g.paths[i]);
    h->n[i] = split(h->g.paths[i], h->c[i], 64, h->arena[i]);
  }
}

static void host_named_read(struct host_named *h, int hostfd, const struct ws_changes *c)
{
  memset(h, 0, sizeof *h);
  ws_gitcfg_read(hostfd, &h->g);
  if (hostfd >= 0)
    nested_hooks(&h->g, c, hostfd);
  host_named_split(h);
}

/* Where the host's own symlinks of protected names (the profile's list, from
 * the manifest of the host dir at start) lead in the work tree: `.pdbrc ->
 * tools/pdbrc`, `.vscode -> editor`, each named by the symlink's path. */
static void host_links_read(struct host_named *h, const struct ws_layers *l, char *const *patterns)
{
  static struct comp v[MAX_COMPONENTS];
  cleanup_free char *host = NULL;
  char link[64];

  memset(h, 0, sizeof *h);
  if (l == NULL || l->hostfd < 0 || l->manifest == NULL || patterns == NULL)
    return;
  snprintf(link, sizeof link, "/proc/self/fd/%d", l->hostfd);
  host = realpath(link, NULL);
  for (size_t i = 0; i < l->manifest->n && h->g.n < 1024; i++) {
    const struct ws_mentry *e = &l->manifest->v[i];
    cleanup_free char *arena = NULL, *end = NULL;
    size_t n;
    if (e->type != WS_T_SYMLINK)
      continue;
    arena = arena_for(e->path);
    n = split(e->path, v, MAX_COMPONENTS, arena);
    if (listed(v, n, patterns) == NULL ||
        (end = ws_host_link_end(l->hostfd, e->path, host)) == NULL || strcmp(end, e->path) == 0)
      continue;
    h->g.paths = xrealloc(h->g.paths, (h->g.n + 1) * sizeof *h->g.paths);
    h->g.keys = xrealloc(h->g.keys, (h->g.n + 1) * sizeof *h->g.keys);
    h->g.paths[h->g.n] = take_ptr(end);
    h->g.keys[h->g.n] = ws_quote_path(e->path);
    h->g.n++;
  }
  host_named_split(h);
}

static void host_named_free(struct host_named *h)
{
  for (size_t i = 0; i < h->g.n; i++) {
    free(h->c[i]);
    free(h->arena[i]);
  }
  free(h->c);
  free(h->n);
  free(h->arena);
  ws_gitcfg_free(&h->g);
}

/* The key of the host's configuration that names path, a directory above it,
 * or a path below it (by keys, as the host file system may fold names), or
 * NULL.  Below: path is a directory above a named file, and replaced by a
 * symlink (or deleted and remade) it gives the named file another content
 * (named-parent-replaced). */
static const char *host_named_key(const struct host_named *h, const char *path)
{
  static struct comp v[MAX_COMPONENTS];
  cleanup_free char *arena = NULL;
  size_t n;

  if (h->g.n == 0 || path == NULL)
    return NULL;
  arena = arena_for(path);
  n = split(path, v, MAX_COMPONENTS, arena);
  for (size_t i = 0; i < h->g.n; i++) {
    size_t k = h->n[i], m = k < n ? k : n, j = 0;
    if (k == 0 || n == 0)
      continue;
    while (j < m && strcmp(v[j].k, h->c[i][j].k) == 0)
      j++;
    if (j == m)
      return h->g.keys[i];
  }
  return NULL;
}

/* The length of the git dir (a `.git`, or a bare repository the probe
 * finds) whose objects/ path lies below, and what follows `objects/`
 * (*ret_rel); false when path is none. */
static bool object_path(const char *path, const struct ws_gitdir_probe *probe, size_t *ret_len,
                        const char **ret_rel)
{
  const char *prev = NULL;
  size_t plen = 0;

  if (strncmp(path, "objects/", 8) != 0 && strstr(path, "/objects/") == NULL)
    return false;
  for (const char *c = path;;) {
    size_t dlen = c == path ? 0 : (size_t)(c - path) - 1, clen = strcspn(c, "/");
    if (strncmp(c, "objects/", 8) == 0 &&
        ((prev && ws_is_git_name(prev, plen)) || probe->is_gitdir(probe->ctx, path, dlen))) {
      *ret_len = dlen;
      *ret_rel = c + 8;
      return true;
    }
    if (c[clen] == '\0')
      return false;
    prev = c;
    plen = clen;
    c += clen + 1;
  }
}

/* A loose object or a pack the agent wrote whose content is not the
 * object its name (or index) gives (gitobjects.c); the cache keeps a
 * pack's result for its other half (.idx and .pack: one check). */
struct objfile_cache {
  int *fds; /* the layers, then the host dir */
  char *key;
  const char *why;
};

static const char *objfile_reason(struct objfile_cache *oc, const struct ws_change *ch,
                                  const struct ws_layers *l, const struct ws_gitdir_probe *probe)
{
  cleanup_free char *gitdir = NULL, *key = NULL;
  const char *rel, *dot;
  size_t dlen;

  if (l == NULL || ch->kind == WS_DELETED || ch->type != WS_T_FILE || ch->layer < 0 ||
      (size_t)ch->layer >= l->n || !object_path(ch->path, probe, &dlen, &rel))
    return NULL;
  if (oc->fds == NULL) {
    oc->fds = xmalloc((l->n + 1) * sizeof *oc->fds);
    memcpy(oc->fds, l->fds, l->n * sizeof *oc->fds);
    oc->fds[l->n] = l->hostfd;
  }
  gitdir = xstrndup(ch->path, dlen);
  dot = strrchr(ch->path, '.');
  if (strncmp(rel, "pack/", 5) == 0 && dot && dot > rel &&
      (strcmp(dot, ".pack") == 0 || strcmp(dot, ".idx") == 0)) {
    key = xfmt("%d:%.*s", ch->layer, (int)(dot - ch->path), ch->path);
    if (oc->key && strcmp(oc->key, key) == 0)
      return oc->why;
    free(oc->key);
    oc->key = xstrdup(key);
    oc->why = ws_git_objfile_reason(oc->fds, l->n + 1, ch->layer, gitdir, rel);
    return oc->why;
  }
  return ws_git_objfile_reason(oc->fds, l->n + 1, ch->layer, gitdir, rel);
}

/* Is rel (below objects/) git's object data: a loose object (`ab/<rest>`)
 * or a pack or its index (`pack/pack-<id>.pack`, `.idx`)?  Not objects/info/
 * or the indexes git trusts unchecked (multi-pack-index, .bitmap, .rev),
 * which are held back on their own and hold no object. */
static bool object_data(const char *rel)
{
  const char *dot = strrchr(rel, '.');

  if (isxdigit((unsigned char)rel[0]) && isxdigit((unsigned char)rel[1]) && rel[2] == '/')
    return true;
  return strncmp(rel, "pack/pack-", 10) == 0 && strchr(rel + 5, '/') == NULL && dot &&
         (strcmp(dot, ".pack") == 0 || strcmp(dot, ".idx") == 0);
}

/* A repository whose new object files are held back keeps every other change
 * of its git dir back too: `git gc` writes one new pack and deletes the old
 * packs and loose objects, and its refs, index and logs name objects of that
 * pack.  Committing them without it took the host's objects away and left
 * its refs naming objects it did not have (gc-held-back). */
static void hold_repo_with_objects(struct ws_changes *c, const struct ws_gitdir_probe *probe)
{
  cleanup_strv char **held = NULL;
  size_t n_held = 0;

  for (size_t i = 0; i < c->n; i++) {
    const char *rel;
    size_t dlen;
    if (c->v[i].protect == NULL || c->v[i].kind == WS_DELETED ||
        !object_path(c->v[i].path, probe, &dlen, &rel) || !object_data(rel))
      continue;
    bool known = false;
    for (size_t k = 0; k < n_held && !known; k++)
      known = strlen(held[k]) == dlen && strncmp(held[k], c->v[i].path, dlen) == 0;
    if (!known) {
      held = xrealloc(held, (n_held + 2) * sizeof *held);
      held[n_held++] = xstrndup(c->v[i].path, dlen);
      held[n_held] = NULL;
    }
  }
  for (size_t i = 0; i < n_held; i++) {
    size_t len = strlen(held[i]);
    /* the agent's directory name, quoted (terminal-inject-review-marks) */
    cleanup_free char *q = ws_quote_path(len ? held[i] : ".");
    for (size_t j = 0; j < c->n; j++) {
      struct ws_change *ch = &c->v[j];
      const char *path = ch->path;
      if (ch->protect != NULL ||
          (len > 0 && (strncmp(path, held[i], len) != 0 || path[len] != '/')))
        continue;
      ch->protect = xfmt("in the repository `%s`, whose new objects are held back (its refs, "
                         "index and object deletions wait with them: without them the host's "
                         "repository would lose objects)",
                         q);
    }
  }
}

/* `git pack-refs` and `git gc` move the loose refs into packed-refs and
 * delete their files: a packed-refs held back keeps back the loose refs
 * deleted below its git dir too, or the host's branches were left named
 * nowhere (packed-refs-held-back). */
static void hold_loose_refs_with_packed(struct ws_changes *c)
{
  for (size_t i = 0; i < c->n; i++) {
    const struct ws_change *pk_ch = &c->v[i];
    const char *base = strrchr(pk_ch->path, '/');
    size_t len = base ? (size_t)(base - pk_ch->path) + 1 : 0;
    if (pk_ch->protect == NULL || pk_ch->kind == WS_DELETED ||
        strcmp(pk_ch->path + len, "packed-refs") != 0)
      continue;
    for (size_t j = 0; j < c->n; j++) {
      struct ws_change *ch = &c->v[j];
      if (ch->protect != NULL || ch->kind != WS_DELETED || ch->type != WS_T_FILE ||
          strncmp(ch->path, pk_ch->path, len) != 0 || strncmp(ch->path + len, "refs/", 5) != 0)
        continue;
      cleanup_free char *q = ws_quote_path(pk_ch->path);
      ch->protect = xfmt("a loose ref deleted beside a packed-refs held back (`%s`: without it "
                         "the host's ref would be named nowhere)",
                         q);
    }
  }
}

/* Is path one of git's caches (git_cache) below a .git directory? */
static bool in_git_cache(const char *path)
{
  static struct comp v[MAX_COMPONENTS];
  cleanup_free char *arena = arena_for(path);
  size_t n = split(path, v, MAX_COMPONENTS, arena);

  for (size_t i = 0; i < n; i++)
    if (is_gitmodules(v[i]) || is_git(v[i]))
      return is_git(v[i]) && git_cache(v + i + 1, n - i - 1);
  return false;
}

/* A change that rewrites one of git's caches in a .git directory becomes
 * the deletion of the host's copy: the agent's cannot be committed (git
 * trusts it unchecked) and the host's describes the objects as they were
 * before the agent's gc (stale-commit-graph).  diff shows, and commit
 * makes, that deletion. */
static void caches_to_deletions(struct ws_changes *c)
{
  for (size_t i = 0; i < c->n; i++) {
    struct ws_change *ch = &c->v[i];
    if (ch->kind != WS_MODIFIED || ch->type != WS_T_FILE || ch->old_type != WS_T_FILE ||
        !in_git_cache(ch->path))
      continue;
    ch->kind = WS_DELETED;
    ch->layer = -1;
    ch->size = 0;
    ch->mode = 0;
    ch->content_same = false;
  }
}

void ws_mark_protected(struct ws_changes *c, char *const *patterns, const struct ws_layers *l)
{
  struct objfile_cache oc = {0};
  int hostfd = l ? l->hostfd : -1;
  struct probe_ctx p = {.c = c, .hostfd = hostfd};
  struct ws_gitdir_probe probe = {probe_gitdir, &p};
  struct host_named named, links;
  struct ws_gitrefs *refs = NULL;

  caches_to_deletions(c);
  host_named_read(&named, hostfd, c);

  for (size_t i = 0; i < c->n; i++) {
    const char *base = strrchr(c->v[i].path, '/');
    const char *name = base ? base + 1 : c->v[i].path;
    /* git takes a symlinked HEAD too (refs/heads/x, the old symbolic-ref form),
     * and `head` where the host folds case */
    if (c->v[i].kind == WS_DELETED || (c->v[i].type != WS_T_FILE && c->v[i].type != WS_T_SYMLINK) ||
        !name_is(name, strlen(name), "head", NULL))
      continue;
    p.heads = xrealloc(p.heads, (p.n_heads + 1) * sizeof *p.heads);
    p.heads[p.n_heads++] = xstrndup(c->v[i].path, base ? (size_t)(base - c->v[i].path) : 0);
  }
  if (p.n_heads > 1)
    qsort(p.heads, p.n_heads, sizeof *p.heads, str_cmp);
  if (patterns) {
    keyed(patterns);
    pk.trusted = patterns;
  }
  host_links_read(&links, l, patterns);
  for (size_t i = 0; i < c->n; i++) {
    struct ws_change *ch = &c->v[i];
    const char *pat = NULL, *why;
    cleanup_free char *detail = NULL;
    free(ch->protect);
    ch->protect = NULL;
    why = ws_protect_reason_in(ch->path, ch->type, ch->kind == WS_DELETED, patterns, &probe, &pat);
    if (why == NULL && ch->old_path) /* the rename's source: deleted as a file */
      why = ws_protect_reason_in(ch->old_path, ch->old_type ? ch->old_type : ch->type, true,
                                 patterns, &probe, &pat);
    if (why == NULL && ch->target && ch->kind != WS_DELETED)
      why = ws_protect_link_reason(ch->path, ch->target, patterns, &pat);
    if (why == NULL)
      why = new_head_reason(ch, hostfd);
    if (why == NULL && (why = shared_index_reason(ch->path, ch->kind, &probe)) == NULL)
      why = shared_index_reason(ch->old_path, WS_DELETED, &probe);
    if (why == NULL && (why = index_reason(ch, l, patterns, &probe, &detail)) != NULL && detail)
      pat = detail;
    if (why == NULL && ((pat = host_named_key(&named, ch->path)) != NULL ||
                        (pat = host_named_key(&named, ch->old_path)) != NULL))
      why = "a path the host repository's configuration names (git runs or reads it)";
    if (why == NULL && ((pat = host_named_key(&links, ch->path)) != NULL ||
                        (pat = host_named_key(&links, ch->old_path)) != NULL))
      why = "where a protected name of the host's leads (a symlink)";
    if (why == NULL)
      why = objfile_reason(&oc, ch, l, &probe);
    if (why)
      ch->protect = pat ? xfmt("%s `%s`", why, pat) : xstrdup(why);
    else
      ch->protect = ws_git_ref_reason(&refs, ch, l, patterns, &probe);
  }
  hold_loose_refs_with_packed(c);
  hold_repo_with_objects(c, &probe);
  ws_gitrefs_free(refs);
  free(oc.fds);
  free(oc.key);
  pk.trusted = NULL;
  host_named_free(&named);
  host_named_free(&links);
  for (size_t i = 0; i < p.n_heads; i++)
    free(p.heads[i]);
  free(p.heads);
  free(p.dirs);
}

const char *ws_protect_subdir_reason(const char *rel, char *const *patterns,
                                     const char **ret_pattern)
{
  static struct comp v[MAX_COMPONENTS];
  cleanup_free char *arena = arena_for(rel);
  size_t n = split(rel, v, MAX_COMPONENTS, arena);

  *ret_pattern = NULL;
  if (n == MAX_COMPONENTS)
    return "a path too deep to check";
  for (size_t i = 0; i < n; i++) {
    if (is_git(v[i]))
      return "inside a `.git` directory (git's configuration and hooks)";
    if (is_gitmodules(v[i]))
      return "inside `.gitmodules`";
  }
  /* a pattern that starts at one of rel's components and lies inside rel or
   * goes on below it: the child's changes would be below a protected path */
  for (size_t k = 0; patterns && patterns[k]; k++) {
    struct comp p[64];
    cleanup_free char *parena = arena_for(patterns[k]);
    size_t pn = split(patterns[k], p, ARRAY_SIZE(p), parena);
    for (size_t i = 0; pn > 0 && i < n; i++) {
      size_t j = 0;
      while (j < pn && i + j < n && comp_match(v[i + j], p[j]))
        j++;
      if (j == pn || i + j == n) {
        *ret_pattern = patterns[k];
        return "inside a path of the profile's protected list";
      }
    }
  }
  return NULL;
}
