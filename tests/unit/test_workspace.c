/* test_workspace.c - the pure parts of workspace/: SHA-256, the line diff
 * (applied back by a tiny patcher), whiteout/opaque classification and the
 * layer scan on fake layers built in a temp dir (mknod 0/0 and trusted.*
 * xattrs need root: those checks are skipped otherwise), rename detection,
 * manifest conflicts, commit (including a symlink planted on the host path)
 * and pruning. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "common/util.h"
#include "tests/unit/tap.h"
#include "workspace/internal.h"
#include "workspace/workspace.h"

static char tmp[] = "/tmp/agentrt-test-ws.XXXXXX";

/* tmp/rel in one of a few rotating buffers (no allocation to free). */
static const char *P(const char *rel)
{
  static char bufs[8][512];
  static int i;
  char *b = bufs[i++ % 8];
  snprintf(b, sizeof bufs[0], "%s/%s", tmp, rel);
  return b;
}

static void put(const char *rel, const char *text)
{
  cleanup_free char *p = xfmt("%s/%s", tmp, rel);
  FILE *f = fopen(p, "we");
  if (f) {
    fputs(text, f);
    fclose(f);
  }
}

static void mk(const char *rel)
{
  cleanup_free char *p = xfmt("%s/%s", tmp, rel);
  mkdir(p, 0755);
}

static void whiteout(const char *rel)
{
  cleanup_free char *p = xfmt("%s/%s", tmp, rel);
  mknod(p, S_IFCHR | 0000, makedev(0, 0));
}

static void opaque(const char *rel)
{
  cleanup_free char *p = xfmt("%s/%s", tmp, rel);
  setxattr(p, "trusted.overlay.opaque", "y", 1, 0);
}

static int dirfd_of(const char *rel)
{
  cleanup_free char *p = xfmt("%s/%s", tmp, rel);
  return open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

static char *slurp(const char *rel)
{
  cleanup_free char *p = xfmt("%s/%s", tmp, rel);
  FILE *f = fopen(p, "re");
  char buf[4096];
  size_t n;

  if (f == NULL)
    return NULL;
  n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  return xstrdup(buf);
}

/* --- sha256 and the line diff --------------------------------------------- */

static void test_sha256(void)
{
  unsigned char h[32];
  char hex[65];

  ws_sha256("abc", 3, h);
  ws_hex(h, 32, hex);
  tap_ok(streq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
         "sha256(abc)");
  ws_sha256("", 0, h);
  ws_hex(h, 32, hex);
  tap_ok(streq(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
         "sha256(empty)");
  ws_sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56, h);
  ws_hex(h, 32, hex);
  tap_ok(streq(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
         "sha256(two blocks)");
}

/* Apply a unified diff to a (strict: context must match). */
static char *apply_patch(const char *a, const char *patch)
{
  const char *p = strstr(patch, "\n@@");
  size_t alen = strlen(a), apos = 0, cap = alen + strlen(patch) + 1, olen = 0;
  char *out = xmalloc(cap);
  long line = 1; /* next line of a */

  while (p && *p) {
    unsigned long s, cnt = 1;
    char *end;
    p = strstr(p, "@@ -");
    if (p == NULL)
      break;
    s = strtoul(p + 4, &end, 10);
    if (*end == ',')
      cnt = strtoul(end + 1, NULL, 10);
    if (cnt == 0)
      s++; /* "-5,0": insert after line 5 */
    p = strchr(p, '\n') + 1;
    for (; (long)s > line; line++) { /* copy lines up to the hunk */
      const char *nl = strchr(a + apos, '\n');
      size_t n = nl ? (size_t)(nl - (a + apos)) + 1 : alen - apos;
      memcpy(out + olen, a + apos, n), olen += n, apos += n;
    }
    while (*p == ' ' || *p == '-' || *p == '+' || *p == '\\') {
      const char *nl = strchr(p, '\n');
      size_t n = (size_t)(nl - p);
      bool noeol = nl[1] == '\\';
      if (*p == ' ' || *p == '-') {
        if (strncmp(a + apos, p + 1, n - 1) != 0) {
          free(out);
          return NULL;
        }
        apos += n - 1 + (noeol ? 0 : 1);
        line++;
      }
      if (*p == ' ' || *p == '+') {
        memcpy(out + olen, p + 1, n - 1), olen += n - 1;
        if (!noeol)
          out[olen++] = '\n';
      }
      p = nl + 1;
      if (noeol)
        p = strchr(p, '\n') + 1;
    }
  }
  memcpy(out + olen, a + apos, alen - apos), olen += alen - apos;
  out[olen] = '\0';
  return out;
}

static bool roundtrip(const char *a, const char *b)
{
  cleanup_free char *d = ws_unified_diff(a, strlen(a), b, strlen(b), "a/x", "b/x");
  cleanup_free char *r = d ? apply_patch(a, d) : NULL;
  return r && streq(r, b);
}

static void test_linediff(void)
{
  cleanup_free char *d = ws_unified_diff("a\nb\nc\n", 6, "a\nB\nc\n", 6, "a/f", "b/f");
  cleanup_free char *e = ws_unified_diff("x\n", 2, "x", 1, "a/f", "b/f");
  cleanup_free char *n = ws_unified_diff("", 0, "new\n", 4, "/dev/null", "b/f");
  char big_a[4000] = "", big_b[4000] = "";
  unsigned seed = 42;
  int ok = 0;

  tap_ok(d && streq(d, "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"), "diff: one line");
  tap_ok(e && strstr(e, "-x\n+x\n\\ No newline at end of file\n"), "diff: missing newline");
  tap_ok(n && streq(n, "--- /dev/null\n+++ b/f\n@@ -0,0 +1 @@\n+new\n"), "diff: new file");
  tap_ok(ws_unified_diff("a\0b", 3, "c", 1, "a", "b") == NULL, "diff: binary gives NULL");
  for (int i = 0; i < 200; i++) { /* random edits, far apart and close together */
    size_t la = 0, lb = 0;
    for (int k = 0; k < 60; k++) {
      int r = rand_r(&seed) % 10, v = rand_r(&seed) % 5;
      if (r < 7 || r == 8)
        la += (size_t)snprintf(big_a + la, sizeof big_a - la, "line %d %d\n", k, r < 7 ? 0 : v);
      if (r < 7 || r == 9)
        lb += (size_t)snprintf(big_b + lb, sizeof big_b - lb, "line %d %d\n", k, r < 7 ? 0 : v + 1);
    }
    if (i % 3 == 0 && lb > 0)
      big_b[lb - 1] = '\0'; /* no newline at the end */
    ok += roundtrip(big_a, big_b);
  }
  tap_ok(ok == 200, "diff: 200 random diffs apply back (%d)", ok);
  /* diff-long-label: the agent names the paths (up to 4 KiB); a header of
   * more than 511 bytes was cut, the `+++` line lost or naming a shorter
   * path, the first hunk's `@@` on its line (found by fuzz_linediff) */
  {
    char path[4000];
    cleanup_free char *la = NULL, *lb = NULL, *want = NULL, *p = NULL;
    memset(path, 'x', sizeof path - 1);
    path[sizeof path - 1] = '\0';
    la = xfmt("a/%s", path);
    lb = xfmt("b/%s", path);
    want = xfmt("--- %s\n+++ %s\n@@ -1 +1 @@\n-x\n+y\n", la, lb);
    p = ws_unified_diff("x\n", 2, "y\n", 2, la, lb);
    tap_ok(p && streq(p, want),
           "diff-long-label: a path of 4,001 bytes is whole in both header lines");
  }
}

/* --- layers ---------------------------------------------------------------- */

static const struct ws_change *find(const struct ws_changes *c, const char *path)
{
  for (size_t i = 0; i < c->n; i++)
    if (streq(c->v[i].path, path))
      return &c->v[i];
  return NULL;
}

static bool has(const struct ws_changes *c, const char *path, enum ws_kind k, enum ws_ftype t)
{
  const struct ws_change *ch = find(c, path);
  return ch && ch->kind == k && ch->type == t;
}

/* host/ and two change layers: snap/ (older) under up/ (upper). */
static void build_tree(void)
{
  mk("host"), mk("host/src"), mk("host/data"), mk("host/keep"), mk("host/docs");
  put("host/src/main.c", "int main(void)\n{\n  return 0;\n}\n");
  put("host/data/db.sqlite", "SQLite format 3\nrows\n");
  put("host/keep/same.txt", "same\n");
  put("host/docs/a.md", "a\n"), put("host/docs/b.md", "b\n");
  put("host/old.txt", "renamed content\n");
  put("host/gone.txt", "bye\n");
  put("host/empty", "");
  mk("snap"), mk("snap/src"), mk("snap/keep");
  put("snap/src/main.c", "int main(void)\n{\n  return 1;\n}\n"); /* modified in snapshot */
  put("snap/keep/same.txt", "same\n");                           /* copy-up, unchanged */
  put("snap/from-snap.txt", "s\n");
  mk("up"), mk("up/docs"), mk("up/newdir");
  whiteout("up/data");    /* rm -rf data */
  whiteout("up/old.txt"); /* mv old.txt new.txt */
  put("up/new.txt", "renamed content\n");
  whiteout("up/gone.txt");
  whiteout("up/empty");
  put("up/empty2", "");
  whiteout("up/from-snap.txt"); /* created in snapshot, deleted after: no change */
  opaque("up/docs");            /* rm -rf docs; mkdir docs; add c.md */
  put("up/docs/c.md", "c\n");
  put("up/newdir/x", "x\n");
  tap_ok(symlink("../etc/passwd", P("up/link")) == 0, "setup: symlink in upper");
}

static void test_classify(void)
{
  cleanup_close int up = dirfd_of("up");
  enum ws_ftype t;

  tap_ok(ws_classify(up, "data", 0, &t) == WS_E_WHITEOUT, "classify: char 0/0 is a whiteout");
  tap_ok(ws_classify(up, "docs", 0, &t) == WS_E_OPAQUE_DIR, "classify: opaque dir");
  tap_ok(ws_classify(up, "newdir", 0, &t) == WS_E_DIR && t == WS_T_DIR, "classify: plain dir");
  tap_ok(ws_classify(up, "new.txt", 0, &t) == WS_E_OTHER && t == WS_T_FILE, "classify: file");
  tap_ok(ws_classify(up, "link", 0, &t) == WS_E_OTHER && t == WS_T_SYMLINK, "classify: symlink");
  tap_ok(ws_classify(up, "nothing", 0, &t) == WS_E_NONE, "classify: absent");
  tap_ok(ws_classify(up, "docs", WS_XATTR_TRUSTED, &t) == WS_E_OPAQUE_DIR,
         "classify: trusted.overlay.opaque in a trusted-mode layer");
  tap_ok(ws_classify(up, "docs", WS_XATTR_USER, &t) == WS_E_DIR,
         "classify: trusted.overlay.opaque is not a userxattr mount's");
  {
    cleanup_free char *p = xfmt("%s/up/newdir", tmp);
    setxattr(p, "user.overlay.opaque", "y", 1, 0);
    tap_ok(ws_classify(up, "newdir", WS_XATTR_TRUSTED, &t) == WS_E_DIR,
           "classify: user.overlay.opaque is plain data in a trusted-mode layer (forged-opaque)");
    tap_ok(ws_classify(up, "newdir", WS_XATTR_USER, &t) == WS_E_OPAQUE_DIR,
           "classify: user.overlay.opaque in a userxattr layer");
    removexattr(p, "user.overlay.opaque");
  }
}

static void open_layers(struct ws_layers *l, int *fds)
{
  fds[0] = dirfd_of("up");
  fds[1] = dirfd_of("snap");
  *l = (struct ws_layers){fds, 2, dirfd_of("host"), 0, NULL};
}

static void test_scan(void)
{
  struct ws_changes c = {0};
  struct error err = {0};
  struct ws_layers l;
  int fds[2];
  const struct ws_change *r;

  open_layers(&l, fds);
  tap_ok(ws_scan(&l, &c, &err) == 0, "scan: ok %s", err.msg);
  tap_ok(has(&c, "data", WS_DELETED, WS_T_DIR) && find(&c, "data")->n_files == 1,
         "scan: rm -rf data is one deleted dir with 1 file");
  tap_ok(has(&c, "src/main.c", WS_MODIFIED, WS_T_FILE) && find(&c, "src/main.c")->layer == 1,
         "scan: a change in the snapshot layer is seen");
  tap_ok(find(&c, "keep/same.txt") == NULL && find(&c, "keep") == NULL,
         "scan: an unchanged copy-up is no change");
  tap_ok(find(&c, "from-snap.txt") == NULL, "scan: created then deleted is no change");
  tap_ok(has(&c, "docs/a.md", WS_DELETED, WS_T_FILE) &&
             has(&c, "docs/b.md", WS_DELETED, WS_T_FILE) &&
             has(&c, "docs/c.md", WS_ADDED, WS_T_FILE) && find(&c, "docs") == NULL,
         "scan: an opaque dir hides the host entries");
  tap_ok(has(&c, "newdir", WS_ADDED, WS_T_DIR) && has(&c, "newdir/x", WS_ADDED, WS_T_FILE),
         "scan: new dir and its file");
  tap_ok(has(&c, "link", WS_ADDED, WS_T_SYMLINK), "scan: symlink added");
  tap_ok(has(&c, "old.txt", WS_DELETED, WS_T_FILE) && has(&c, "new.txt", WS_ADDED, WS_T_FILE),
         "scan: rename is delete + add before detection");
  tap_ok(ws_detect_renames(&l, &c, &err) == 0, "renames: ok");
  r = find(&c, "new.txt");
  tap_ok(r && r->kind == WS_RENAMED && streq(r->old_path, "old.txt") && find(&c, "old.txt") == NULL,
         "renames: old.txt -> new.txt");
  tap_ok(has(&c, "empty", WS_DELETED, WS_T_FILE) && has(&c, "empty2", WS_ADDED, WS_T_FILE),
         "renames: empty files are not paired");
  tap_ok(has(&c, "gone.txt", WS_DELETED, WS_T_FILE), "renames: a plain deletion stays");
  ws_changes_free(&c);
  ws_layers_close(&(struct ws_layers){NULL, 0, l.hostfd, 0, NULL});
  close(fds[0]), close(fds[1]);
}

static void test_manifest(void)
{
  cleanup_close int host = dirfd_of("host");
  struct ws_manifest m = {0};
  struct error err = {0};
  struct ws_limits lim;
  struct timespec ts[2] = {{0, UTIME_OMIT}, {12345, 0}};
  const char *p = P("host/keep/same.txt");

  ws_limits_default(&lim);
  tap_ok(ws_manifest_record(host, &lim, &m, &err) == 0 && m.complete, "manifest: recorded");
  tap_ok(ws_manifest_find(&m, "data/db.sqlite") && ws_manifest_find(&m, "data/db.sqlite")->has_hash,
         "manifest: small file hashed");
  tap_ok(ws_manifest_conflict(&m, host, "src/main.c", 0) == WS_C_NONE, "manifest: unchanged");
  utimensat(AT_FDCWD, p, ts, 0);
  tap_ok(ws_manifest_conflict(&m, host, "keep/same.txt", 0) == WS_C_NONE,
         "manifest: touched but same content is no conflict");
  put("host/src/main.c", "changed on host\n");
  tap_ok(ws_manifest_conflict(&m, host, "src/main.c", 0) == WS_C_CHANGED, "manifest: changed");
  put("host/new-on-host", "x");
  tap_ok(ws_manifest_conflict(&m, host, "new-on-host", 0) == WS_C_CREATED, "manifest: created");
  unlink(P("host/gone.txt"));
  tap_ok(ws_manifest_conflict(&m, host, "gone.txt", 0) == WS_C_DELETED, "manifest: deleted");
  tap_ok(symlink("/etc", P("host/evil")) == 0, "setup: symlink on host");
  tap_ok(ws_manifest_conflict(&m, host, "evil/passwd", 0) == WS_C_UNSAFE,
         "manifest: a symlink on the path is unsafe");
  lim.max_files = 3;
  ws_manifest_free(&m);
  ws_manifest_record(host, &lim, &m, &err);
  tap_ok(m.n == 3 && !m.complete, "manifest: bounded by max_files");
  ws_manifest_free(&m);
  /* restore for the commit test */
  put("host/src/main.c", "int main(void)\n{\n  return 0;\n}\n");
  put("host/gone.txt", "bye\n");
  unlink(P("host/new-on-host"));
}

static void test_commit(void)
{
  struct workspace w = {.id = "t", .created_s = 0};
  struct ws_changes c = {0};
  struct error err = {0};
  cleanup_strv char **conf = NULL;
  char *only[] = {"new.txt", NULL};
  struct ws_layers l;
  int fds[2];
  size_t n = 0;
  cleanup_free char *s1 = NULL, *s2 = NULL, *s3 = NULL;
  struct stat st;

  open_layers(&l, fds);
  ws_manifest_record(l.hostfd, NULL, &w.manifest, &err);
  ws_scan(&l, &c, &err);
  ws_detect_renames(&l, &c, &err);
  tap_ok(ws_commit_apply(&w, &l, &c, only, NULL, &n, NULL, &err) == 0 && n == 1,
         "commit: one path %s", err.msg);
  s1 = slurp("host/new.txt");
  tap_ok(s1 && streq(s1, "renamed content\n") && access(P("host/old.txt"), F_OK) < 0 &&
             access(P("host/gone.txt"), F_OK) == 0,
         "commit: only the rename was applied");
  put("host/src/main.c", "operator edit\n");
  ws_commit_conflicts(&w, &l, &c, NULL, NULL, &conf, &err);
  tap_ok(strv_len(conf) == 1 && str_has_prefix(conf[0], "src/main.c: changed on host"),
         "commit: host edit is a conflict (%s)", conf[0] ? conf[0] : "none");
  /* a symlink planted where a directory was: nothing may be written through it */
  rename(P("host/newdir"), P("host/newdir.x"));
  tap_ok(symlink(P("snap"), P("host/newdir")) == 0, "setup: planted symlink");
  {
    char *sel[] = {"newdir", NULL};
    n = 0;
    tap_ok(ws_commit_apply(&w, &l, &c, sel, NULL, &n, NULL, &err) < 0 &&
               access(P("snap/x"), F_OK) < 0,
           "commit: refuses a symlink on the host path (%s)", err.msg);
    unlink(P("host/newdir"));
  }
  error_clear(&err);
  tap_ok(ws_commit_apply(&w, &l, &c, NULL, NULL, &n, NULL, &err) == 0, "commit: everything %s",
         err.msg);
  s2 = slurp("host/src/main.c"), s3 = slurp("host/docs/c.md");
  tap_ok(s2 && strstr(s2, "return 1") && s3 && streq(s3, "c\n") &&
             access(P("host/docs/a.md"), F_OK) < 0 && access(P("host/data"), F_OK) < 0,
         "commit: modified, opaque dir and deleted dir applied");
  tap_ok(lstat(P("host/link"), &st) == 0 && S_ISLNK(st.st_mode),
         "commit: symlink copied as a symlink");
  ws_changes_free(&c);
  /* everything committed: upper (the only layer now) prunes to nothing */
  l.n = 1;
  ws_prune_upper(&l, &err);
  ws_scan(&l, &c, &err);
  {
    cleanup_strv char **names = NULL;
    size_t k = 0;
    ws_list_dir(fds[0], &names, &k);
    tap_ok(c.n == 0, "prune: nothing to commit after a full commit (%zu)", c.n);
    tap_ok(k == 0, "prune: upper empty after a full commit (%zu left)", k);
  }
  ws_changes_free(&c);
  ws_manifest_free(&w.manifest);
  close(fds[0]), close(fds[1]), close(l.hostfd);
}

/* git's caches of its object store (stale-commit-graph): the agent's copy
 * is held back, the deletion of the host's is not; a rewrite of one becomes
 * the deletion of the host's.  Other files beside them stay protected. */
static void test_protect_caches(void)
{
  static const char *const caches[] = {
      ".git/objects/info/commit-graph",
      ".git/objects/info/commit-graphs/commit-graph-chain",
      ".git/objects/info/commit-graphs/graph-0123456789abcdef0123456789abcdef01234567.graph",
      ".git/objects/pack/multi-pack-index",
      ".git/objects/pack/pack-0123456789abcdef0123456789abcdef01234567.bitmap",
      ".git/objects/pack/pack-0123456789abcdef0123456789abcdef01234567.rev",
      ".git/objects/pack/multi-pack-index-0123456789abcdef0123456789abcdef01234567.bitmap",
      "sub/.git/objects/info/commit-graph",
      NULL};
  static const char *const others[] = {".git/objects/info/alternates",
                                       ".git/objects/info/packs",
                                       ".git/objects/info/commit-graph.lock",
                                       ".git/objects/Info/commit-graph",
                                       ".git/objects/info/commit-graphs/graph-x.graph",
                                       ".git/objects/pack/pack-0123.bitmap",
                                       ".git/config",
                                       ".git/hooks/pre-commit",
                                       NULL};
  struct ws_changes c = {0};
  const char *pat;
  int bad = 0;

  for (size_t i = 0; caches[i]; i++)
    if (ws_protect_reason(caches[i], WS_T_FILE, false, NULL, &pat) == NULL ||
        ws_protect_reason(caches[i], WS_T_FILE, true, NULL, &pat) != NULL ||
        ws_protect_reason(caches[i], WS_T_SYMLINK, true, NULL, &pat) == NULL) {
      printf("# cache: %s\n", caches[i]);
      bad++;
    }
  for (size_t i = 0; others[i]; i++)
    if (ws_protect_reason(others[i], WS_T_FILE, true, NULL, &pat) == NULL) {
      printf("# deletion not protected: %s\n", others[i]);
      bad++;
    }
  tap_ok(bad == 0, "protect: a cache of git's objects: added or a link held back, deleted not");
  tap_ok(strstr(ws_protect_reason(".git/objects/info/commit-graph", WS_T_FILE, false, NULL, &pat),
                "commit-graph") != NULL,
         "protect: the agent's commit-graph is held back as one");

  ws_changes_push(&c, &(struct ws_change){.kind = WS_MODIFIED,
                                          .type = WS_T_FILE,
                                          .old_type = WS_T_FILE,
                                          .layer = 0,
                                          .size = 9,
                                          .old_size = 7,
                                          .path = xstrdup(".git/objects/info/commit-graph")});
  ws_changes_push(&c, &(struct ws_change){.kind = WS_ADDED,
                                          .type = WS_T_FILE,
                                          .layer = 0,
                                          .path = xstrdup(".git/objects/pack/multi-pack-index")});
  ws_changes_push(&c, &(struct ws_change){.kind = WS_MODIFIED,
                                          .type = WS_T_FILE,
                                          .old_type = WS_T_FILE,
                                          .layer = 0,
                                          .path = xstrdup(".git/objects/info/packs")});
  ws_mark_protected(&c, NULL, NULL);
  tap_ok(c.v[0].kind == WS_DELETED && c.v[0].protect == NULL && c.v[0].layer == -1 &&
             c.v[0].old_size == 7 && c.v[1].kind == WS_ADDED && c.v[1].protect != NULL &&
             c.v[2].kind == WS_MODIFIED && c.v[2].protect != NULL,
         "protect: a rewritten commit-graph is the deletion of the host's; others stay held back");
  ws_changes_free(&c);
}

static void test_paths(void)
{
  cleanup_free char *e = ws_path_encode("a b/%x\n\xff");
  cleanup_free char *d = ws_path_decode(e);
  cleanup_free char *parent = NULL;
  const char *base;

  tap_ok(streq(e, "a%20b/%25x%0a%ff") && streq(d, "a b/%x\n\xff"), "paths: encode/decode");
  parent = ws_split_path("a/b/c", &base);
  tap_ok(streq(parent, "a/b") && streq(base, "c"), "paths: split");
}

/* The protection rule (protect.c): every redirection and configuration
 * file git reads at any depth is protected, git's data is not. */
static void test_protect(void)
{
  static const char *const prot[] = {
      ".git/config",
      ".git/hooks/pre-commit",
      ".git/hooks",
      ".git/commondir",
      ".git/info/attributes",
      ".git/info/exclude",
      ".git/objects/info/alternates",
      ".git/objects/info/http-alternates",
      ".git/modules/lib/config",
      ".git/modules/lib/hooks/post-checkout",
      ".git/worktrees/w/commondir",
      ".git/worktrees/w/HEAD",
      "sub/.git/config",
      "sub/.git/hooks/pre-commit",
      "a/b/c/.git/config",
      ".gitmodules",
      "lib/.gitmodules",
      ".GIT/config",
      ".Git/Hooks/x",
      "git~1/config",
      ".git./config",
      ".git /config",
      ".git/objects/ab/.git/config",
      ".git/refs/heads/.git/config",
      ".git/objects/pack/multi-pack-index",
      ".git/objects/pack/pack-0123456789abcdef0123456789abcdef01234567.bitmap",
      ".git/objects/pack/pack-0123456789abcdef0123456789abcdef01234567.rev",
      ".git/objects/pack/p.pack",
      ".git/objects/pack/sub/pack-0123456789abcdef0123456789abcdef01234567.pack",
      ".envrc",
      "x/y/.envrc",
      ".vscode/tasks.json",
      "pkg/.VSCode/settings.json",
      ".claude/settings.json",
      NULL};
  static const char *const data[] = {
      ".git/objects/ab/cdef",
      ".git/objects/pack/pack-0123456789abcdef0123456789abcdef01234567.pack",
      ".git/objects/pack/pack-0123456789abcdef0123456789abcdef01234567.idx",
      ".git/objects/pack/pack-0123456789abcdef0123456789abcdef01234567.keep",
      ".git/refs/heads/main",
      ".git/logs/HEAD",
      ".git/index",
      ".git/HEAD",
      ".git/packed-refs",
      ".git/ORIG_HEAD",
      "sub/.git/objects/00/11",
      "src/git/config",
      "a.git/config",
      ".gitignore",
      "docs/envrc",
      ".vscodeX/a",
      NULL};
  char *patterns[] = {".envrc", ".vscode/", ".claude/", NULL};
  const char *pat;
  int bad = 0;

  for (size_t i = 0; prot[i]; i++)
    if (ws_protect_reason(prot[i], WS_T_FILE, false, patterns, &pat) == NULL) {
      printf("# not protected: %s\n", prot[i]);
      bad++;
    }
  for (size_t i = 0; data[i]; i++)
    if (ws_protect_reason(data[i], WS_T_FILE, false, patterns, &pat) != NULL) {
      printf("# protected: %s\n", data[i]);
      bad++;
    }
  tap_ok(bad == 0, "protect: git config, hooks, redirections at any depth; not git's data");
  tap_ok(ws_protect_reason("sub/.git", WS_T_FILE, false, NULL, &pat) &&
             ws_protect_reason(".git", WS_T_SYMLINK, false, NULL, &pat) &&
             ws_protect_reason(".git/refs/heads/x", WS_T_SYMLINK, false, NULL, &pat) &&
             ws_protect_reason(".git", WS_T_DIR, true, NULL, &pat) &&
             ws_protect_reason("a/.git", WS_T_DIR, false, NULL, &pat) &&
             !ws_protect_reason(".git/objects", WS_T_DIR, false, NULL, &pat),
         "protect: gitdir files and links, a .git dir itself; not the objects dir");
  tap_ok(ws_protect_reason("x/.vscode", WS_T_DIR, false, patterns, &pat) && streq(pat, ".vscode/"),
         "protect: the profile's list matches at any depth and names the entry");
  {
    char *globs[] = {"site-packages/*.pth", ".env.*", NULL};
    tap_ok(ws_protect_reason(".venv/lib/python3.11/site-packages/zz.pth", WS_T_FILE, false, globs,
                             &pat) &&
               streq(pat, "site-packages/*.pth") &&
               ws_protect_reason("app/.env.local", WS_T_FILE, false, globs, &pat) &&
               !ws_protect_reason("site-packages/a/b.pth", WS_T_FILE, false, globs, &pat) &&
               !ws_protect_reason("site-packages/.pth", WS_T_FILE, false, globs, &pat) &&
               !ws_protect_reason("x.pth", WS_T_FILE, false, globs, &pat) &&
               !ws_protect_reason(".envx", WS_T_FILE, false, globs, &pat),
           "protect: a glob component matches one component, not a leading dot");
  }
  {
    /* names a case-folding host resolves to a protected one: HFS+ drops
     * ignorable code points (U+200C..U+200F, U+202A..U+202E, U+206A..U+206F,
     * U+FEFF), NTFS trailing dots and spaces and a `:stream` suffix, ext4's
     * casefold maps U+017F to s and U+212A to k */
    static const char *const alias[] = {".g\xe2\x80\x8cit/config",
                                        ".git\xe2\x80\x8d/hooks/pre-commit",
                                        "\xef\xbb\xbf.GIT/config",
                                        "a/.G\xe2\x81\xaait/hooks/x",
                                        ".git::$INDEX_ALLOCATION/config",
                                        ".git . :x/config",
                                        "GIT~1/hooks/x",
                                        ".gitmodules.",
                                        ".gitm\xe2\x80\x8eodules",
                                        "gitmod~1",
                                        ".env\xe2\x80\x8crc",
                                        ".ENVRC.",
                                        "p/.VSCODE /tasks.json",
                                        ".\xe2\x84\xaa"
                                        "x",
                                        ".git/objects/info./alternates",
                                        ".git/objects/in\xe2\x80\x8c"
                                        "fo/alternates",
                                        NULL};
    char *pat3[] = {".envrc", ".vscode/", ".kx", NULL};
    int missed = 0;
    for (size_t i = 0; alias[i]; i++)
      if (ws_protect_reason(alias[i], WS_T_FILE, false, pat3, &pat) == NULL) {
        printf("# alias not protected: %s\n", alias[i]);
        missed++;
      }
    tap_ok(missed == 0 && ws_protect_reason(".gi\xe2\x80\x8ct", WS_T_FILE, false, NULL, &pat) &&
               !ws_protect_reason("a.g\xe2\x80\x8cit/config", WS_T_FILE, false, NULL, &pat) &&
               !ws_protect_reason(".gitx/config", WS_T_FILE, false, NULL, &pat),
           "protect: Unicode-ignorable, NTFS and casefold aliases of .git, .gitmodules and listed "
           "names");
  }
  {
    /* symlinks: a target outside the workspace, into .git or a listed path */
    static const char *const bad_link[][2] = {{"x", "/etc/passwd"},
                                              {"a/b/x", "../../../up"},
                                              {"x", ".."},
                                              {"a/x", "d/../../../y"},
                                              {"a/x", "d/../y"},
                                              {"x", ".git/hooks"},
                                              {"a/x", "../.GIT/config"},
                                              {"x", "sub/.g\xe2\x80\x8cit"},
                                              {"x", ".gitmodules"},
                                              {"a/x", "../.envrc"},
                                              {"x", "./.vscode/tasks.json"},
                                              {NULL, NULL}};
    static const char *const good[][2] = {{"node_modules/.bin/tsc", "../typescript/bin/tsc"},
                                          {"a/b/x", "../../c"},
                                          {"x", "./y"},
                                          {"x", "gitx/config"},
                                          {NULL, NULL}};
    int wrong = 0;
    for (size_t i = 0; bad_link[i][0]; i++)
      if (ws_protect_link_reason(bad_link[i][0], bad_link[i][1], patterns, &pat) == NULL) {
        printf("# link not protected: %s -> %s\n", bad_link[i][0], bad_link[i][1]);
        wrong++;
      }
    for (size_t i = 0; good[i][0]; i++)
      if (ws_protect_link_reason(good[i][0], good[i][1], patterns, &pat) != NULL) {
        printf("# link protected: %s -> %s\n", good[i][0], good[i][1]);
        wrong++;
      }
    tap_ok(wrong == 0, "protect: symlinks out of the workspace, into .git or a listed path");
  }
  {
    /* a sub-agent's workspace directory, relative to its parent's: its own
     * changes are reviewed relative to it, where these are not seen */
    static const char *const in[] = {".git",        "p/.git/hooks", "p/.GIT/info",
                                     "x/git~1",     ".gitmodules",  "a/.vscode",
                                     ".vscode/x/y", "b/.envrc",     NULL};
    static const char *const out[] = {"", "p", "src/git", "a.git/hooks", "docs/envrc", NULL};
    char *pat2[] = {".envrc", ".vscode/", ".config/git", NULL};
    bool ok = true;
    for (size_t i = 0; in[i]; i++)
      ok = ok && ws_protect_subdir_reason(in[i], patterns, &pat) != NULL;
    for (size_t i = 0; out[i]; i++)
      ok = ok && ws_protect_subdir_reason(out[i], patterns, &pat) == NULL;
    /* a pattern that begins in the directory and goes on below it */
    ok = ok && ws_protect_subdir_reason("home/.config", pat2, &pat) != NULL &&
         streq(pat, ".config/git") &&
         ws_protect_subdir_reason("home/.config/gitx", pat2, &pat) == NULL;
    tap_ok(ok, "protect: a sub-agent's workspace in or at the start of a protected path");
  }
}

/* Mount points the runtime made: an added empty directory at one, or a
 * parent holding nothing else, goes; anything with a change below stays. */
static void test_drop_mountpoints(void)
{
  static const char *const paths[] = {"a", "a/b", "a/b/c", "d", "d/m", "d/x.txt", "e",
                                      "f", "f/y", "g",     "h", "i",   "j"};
  static const enum ws_kind kinds[] = {WS_ADDED, WS_ADDED, WS_ADDED,    WS_ADDED, WS_ADDED,
                                       WS_ADDED, WS_ADDED, WS_MODIFIED, WS_ADDED, WS_ADDED,
                                       WS_ADDED, WS_ADDED, WS_ADDED};
  static const enum ws_ftype types[] = {WS_T_DIR,  WS_T_DIR,  WS_T_DIR, WS_T_DIR,  WS_T_DIR,
                                        WS_T_FILE, WS_T_DIR,  WS_T_DIR, WS_T_FILE, WS_T_FILE,
                                        WS_T_FILE, WS_T_FILE, WS_T_FILE};
  static const uint64_t sizes[] = {0, 0, 0, 0, 0, 3, 0, 0, 1, 2, 0, 5, 0};
  char *mps[] = {"a/b/c", "d/m", "e", "f", "g", "h", "i", "j/k", NULL};
  struct ws_changes c = {0};
  cleanup_free char *left = xstrdup("");

  for (size_t i = 0; i < sizeof paths / sizeof *paths; i++) {
    if (c.n == c.cap)
      c.v = xrealloc(c.v, (c.cap = c.cap ? 2 * c.cap : 16) * sizeof *c.v);
    c.v[c.n++] = (struct ws_change){.kind = kinds[i],
                                    .type = types[i],
                                    .path = xstrdup(paths[i]),
                                    .size = sizes[i],
                                    .layer = 0};
  }
  ws_drop_mountpoints(&c, mps);
  for (size_t i = 0; i < c.n; i++) {
    char *l = xfmt("%s%s ", left, c.v[i].path);
    free(left);
    left = l;
  }
  tap_ok(streq(left, "d d/x.txt f f/y g i j "),
         "drop mount points: empty added directories at and above them and an empty file at one "
         "go; a parent with a file, a modified directory, a file with data and a file above one "
         "stay (%s)",
         left);
  ws_changes_free(&c);
}

static void test_quote(void)
{
  cleanup_free char *a = ws_quote_path("plain name.txt");
  cleanup_free char *b = ws_quote_path("x\nadded    y");
  cleanup_free char *c = ws_quote_path("\x1b[2Kq\"\\");
  cleanup_free char *d = ws_quote_path("caf\xc3\xa9\xff");

  tap_ok(streq(a, "plain name.txt") && streq(b, "\"x\\nadded    y\"") &&
             streq(c, "\"\\033[2Kq\\\"\\\\\"") && streq(d, "\"caf\\303\\251\\377\""),
         "quote: control bytes, quotes and bytes >= 0x80 as git quotes them (%s %s %s)", b, c, d);
  {
#define TC(s) ws_term_control((const unsigned char *)(s), sizeof(s) - 1)
    tap_ok(!TC("fix: caf\xc3\xa9\tdone\r\n\nbody\n") && !TC("\xc2\xa0nbsp") && TC("a\x1b[2K") &&
               TC("a\rb") && TC("a\x7f") &&
               TC("x\xc2\x9b"
                  "2J") &&
               TC("a\0b") && TC("bell\a"),
           "term control: tabs, newlines, CRLF and UTF-8 pass; ESC, a lone CR, DEL, C1, NUL, BEL "
           "do not");
    tap_ok(TC("fix \xe2\x80\xae"
              "txet") &&
               TC("a\xe2\x80\xaa") && TC("\xe2\x81\xa6x\xe2\x81\xa9") && TC("\xe2\x81\xa9") &&
               !TC("\xd7\xa9\xd7\x9c \xe2\x80\x8fok \xe2\x80\x8e\xd8\x9c") &&
               !TC("\xf0\x9f\x91\xa9\xe2\x80\x8d\xf0\x9f\x94\xac") && !TC("\xe2\x80\xa9") &&
               !TC("\xe2\x80\xa6 \xe2\x81\xaa") && !TC("\xe2\x80"),
           "term control: bidi embeddings, overrides and isolates do not pass; RTL text with "
           "its marks, a ZWJ emoji, an ellipsis pass");
#undef TC
  }
  {
    cleanup_free char *t = ws_quote_text("a\tb\r\n\x1b[2K\x7f \xc2\x9b"
                                         "2K \xe2\x80\xae \xe2\x81\xa6 caf\xc3\xa9\n");
    tap_ok(streq(t, "a\tb^M\n^[[2K^? <U+009B>2K <U+202E> <U+2066> caf\xc3\xa9\n"),
           "quote: patch text shows CR, ESC, DEL, C1 and bidi controls visibly (%s)", t);
  }
  {
    size_t n = 9000;
    cleanup_free char *big = xmalloc(n + 1);
    cleanup_free char *bin = NULL;
    memset(big, 'x', n);
    big[n - 2] = '\0';
    big[n - 1] = '\n';
    bin = ws_unified_diff("", 0, big, n, "a/f", "b/f");
    tap_ok(bin == NULL,
           "diff: a NUL after the first 8 KiB is binary (the patch would be cut there)");
  }
}

/* --- git index paths (gitindex.c) ------------------------------------------ */

/* An index of version v in a memfd: entries with hash size hlen, names in
 * v4 given as "strip:suffix", modes (NULL: all 0100644), object ids of hlen
 * bytes each the value oids[i] (NULL: all zeros); an extension of 4 bytes
 * when ext; a zero checksum. */
static int index_fd_of(unsigned v, size_t hlen, const char *const *names, size_t n, bool ext,
                       const uint32_t *modes, const unsigned char *oids)
{
  unsigned char buf[4096];
  size_t pos = 12, prev_len = 0;
  int fd = memfd_create("index", MFD_CLOEXEC);

  memset(buf, 0, sizeof buf);
  memcpy(buf, "DIRC", 4);
  buf[7] = (unsigned char)v;
  buf[11] = (unsigned char)n;
  for (size_t i = 0; i < n; i++) {
    size_t start = pos, len;
    const char *name = names[i];
    uint32_t mode = modes ? modes[i] : 0100644;
    buf[start + 24] = (unsigned char)(mode >> 24);
    buf[start + 25] = (unsigned char)(mode >> 16);
    buf[start + 26] = (unsigned char)(mode >> 8);
    buf[start + 27] = (unsigned char)mode;
    memset(buf + start + 40, oids ? oids[i] : 0, hlen);
    pos += 40 + hlen + 2;
    size_t full;
    if (v == 4) {
      size_t strip = (size_t)atoi(name);
      buf[pos++] = (unsigned char)strip;
      name = strchr(name, ':') + 1;
      full = prev_len - strip + strlen(name); /* git's flags hold the whole name's length */
    } else {
      full = strlen(name);
    }
    len = strlen(name);
    prev_len = full;
    buf[start + 40 + hlen + 1] = (unsigned char)full;
    memcpy(buf + pos, name, len);
    pos = v == 4 ? pos + len + 1 : start + ((40 + hlen + 2 + len + 8) & ~(size_t)7);
  }
  if (ext) {
    memcpy(buf + pos, "TREE", 4);
    buf[pos + 7] = 4;
    pos += 12;
  }
  pos += hlen;
  if (fd >= 0 && write(fd, buf, pos) != (ssize_t)pos) {
    close(fd);
    return -1;
  }
  return fd;
}

static int index_fd(unsigned v, size_t hlen, const char *const *names, size_t n, bool ext)
{
  return index_fd_of(v, hlen, names, n, ext, NULL, NULL);
}

/* Does the index fd (against the host's index host, -1 for none, and the
 * protected list patterns) name want_bad ("" = a reason without a path,
 * NULL = pass), with a reason that holds want_why (NULL: any)?  Closes both. */
static bool index_vs(int fd, int host, char *const *patterns, const char *want_bad,
                     const char *want_why)
{
  cleanup_close int f = fd, h = host;
  cleanup_free char *bad = NULL;
  const char *why = ws_git_index_reason(f, h, NULL, patterns, 0, &bad);

  if (want_bad == NULL)
    return why == NULL && bad == NULL;
  if (want_why && (why == NULL || strstr(why, want_why) == NULL))
    return false;
  if (*want_bad == '\0')
    return why != NULL && bad == NULL;
  return why != NULL && bad != NULL && streq(bad, want_bad);
}

/* fd against host read with hash size hlen: refused (want_bad "") or not (NULL). */
static bool index_vs_hlen(int fd, int host, size_t hlen, const char *want_bad)
{
  cleanup_close int f = fd, h = host;
  cleanup_free char *bad = NULL;
  const char *why = ws_git_index_reason(f, h, NULL, NULL, hlen, &bad);

  return want_bad == NULL ? why == NULL && bad == NULL : why != NULL && bad == NULL;
}

static bool index_says(int fd, const char *want_bad)
{
  return index_vs(fd, -1, NULL, want_bad, NULL);
}

/* One risky entry (after an ordinary one) in an index of its own, against
 * no host index: named, with a reason that holds why. */
static bool index_names_new(const char *path, uint32_t mode, char *const *patterns, const char *why)
{
  const char *names[] = {"Makefile", path};
  const uint32_t modes[] = {0100644, mode};

  return index_vs(index_fd_of(2, 20, names, 2, false, modes, NULL), -1, patterns, path, why);
}

/* Entries `git checkout -- .` writes that a change could not bring unmarked:
 * protected paths (the profile's list, .gitmodules), symlinks, gitlinks. */
static void test_git_index_entries(void)
{
  static char *const pats[] = {".envrc", ".vscode/", NULL};
  static const char *const names[] = {"Makefile",    ".envrc",    "sub/.vscode/tasks.json",
                                      ".gitmodules", "notes.txt", "lib"};
  static const uint32_t modes[] = {0100644, 0100644, 0100644, 0100644, 0120000, 0160000};
  static const unsigned char oids[] = {1, 2, 3, 4, 5, 6};
  /* the host's: the same entries in another order, with others between */
  static const char *const hnames[] = {
      "lib", "a.c", "notes.txt", "sub/.vscode/tasks.json", ".gitmodules", ".envrc", "z/link"};
  static const uint32_t hmodes[] = {0160000, 0100644, 0120000, 0100644, 0100644, 0100644, 0120000};
  static const unsigned char hoids[] = {6, 9, 5, 3, 4, 2, 7};
  static const char *const v4[] = {"0:src/a.c", "7:.envrc"}; /* src/a.c, then .envrc */
  static const char *const good[] = {"Makefile", "a/.gitignore", "src/envrc", "vscode/x", "d/"};
  static const unsigned char oid7[] = {1, 7, 3, 4, 5, 6}, oid8[] = {1, 2, 3, 4, 8, 6};
  static const uint32_t exe[] = {0100644, 0100755, 0100644, 0100644, 0120000, 0160000};
  static const uint32_t file[] = {0100644, 0100644, 0100644, 0100644, 0100644, 0160000};

  tap_ok(index_names_new(".envrc", 0100644, pats, "on the protected list") &&
             index_names_new("sub/.vscode/tasks.json", 0100644, pats, "on the protected list") &&
             index_names_new(".gitmodules", 0100644, pats, "protected entry") &&
             index_names_new(".gitmodules", 0100644, NULL, "protected entry") &&
             index_names_new("notes.txt", 0120000, pats, "symlink entry") &&
             index_names_new("lib", 0160000, pats, "gitlink") &&
             index_vs(index_fd_of(4, 32, v4, 2, true, NULL, NULL), -1, pats, ".envrc",
                      "on the protected list"),
         "git index: a new .envrc, .vscode/ file, .gitmodules, symlink or gitlink entry is named "
         "(v2, v4 with SHA-256 too)");
  tap_ok(index_vs(index_fd_of(2, 20, names, 6, true, modes, oids),
                  index_fd_of(2, 20, hnames, 7, false, hmodes, hoids), pats, NULL, NULL),
         "git index: the same entries (path, mode, object id) in the host's index pass");
  tap_ok(index_vs(index_fd_of(2, 20, names, 6, false, modes, oid7),
                  index_fd_of(2, 20, hnames, 7, false, hmodes, hoids), pats, ".envrc",
                  "on the protected list") &&
             index_vs(index_fd_of(2, 20, names, 6, false, modes, oid8),
                      index_fd_of(2, 20, hnames, 7, false, hmodes, hoids), pats, "notes.txt",
                      "symlink entry") &&
             index_vs(index_fd_of(2, 20, names, 6, false, exe, oids),
                      index_fd_of(2, 20, hnames, 7, false, hmodes, hoids), pats, ".envrc",
                      "on the protected list") &&
             index_vs(index_fd_of(2, 20, names, 6, false, modes, oids),
                      index_fd_of(2, 20, names, 6, false, file, oids), pats, "notes.txt",
                      "symlink entry"),
         "git index: an entry whose object id or mode changed is named again");
  tap_ok(index_vs(index_fd_of(2, 20, names, 6, false, modes, oids), memfd_create("e", MFD_CLOEXEC),
                  pats, ".envrc", "on the protected list"),
         "git index: an unreadable host index holds no entries");
  tap_ok(index_vs(index_fd_of(2, 20, good, 5, true, NULL, NULL), -1, pats, NULL, NULL),
         "git index: ordinary entries pass against no host index");
}

/* A split index: the index fd (its zero checksum replaced) with the
 * extension `link` naming the shared index whose checksum is bytes of 0xab,
 * an empty delete bitmap and a replace bitmap of one literal word rep (EWAH,
 * as git's ewah_io.c writes it).  The shared index: fd with that checksum. */
static int split_of(int fd, uint64_t rep, bool shared)
{
  unsigned char buf[4096], ext[8 + 20 + 12 + 28];
  ssize_t n = pread(fd, buf, sizeof buf - sizeof ext, 0);
  size_t pos;

  close(fd);
  if (n < 32)
    return -1;
  pos = (size_t)n - 20;
  if (!shared) {
    memset(ext, 0, sizeof ext);
    memcpy(ext, "link", 4);
    ext[7] = 20 + 12 + 28;
    memset(ext + 8, 0xab, 20);
    /* delete: no bits, no words; replace: 64 bits, a run-length word with
     * one literal word, then that word (big-endian) */
    ext[8 + 20 + 12 + 3] = 64;
    ext[8 + 20 + 12 + 7] = 2;
    ext[8 + 20 + 12 + 11] = 2; /* 1 << 33: one literal word */
    for (int i = 0; i < 8; i++)
      ext[8 + 20 + 12 + 16 + i] = (unsigned char)(rep >> (56 - 8 * i));
    memcpy(buf + pos, ext, sizeof ext);
    pos += sizeof ext;
  }
  memset(buf + pos, shared ? 0xab : 0, 20);
  fd = memfd_create("split", MFD_CLOEXEC);
  if (fd >= 0 && write(fd, buf, pos + 20) != (ssize_t)(pos + 20)) {
    close(fd);
    return -1;
  }
  return fd;
}

/* ws_git_shared's open for the tests: the shared index's fd in the
 * workspace and the host's file of that name (-1: none), found by name only. */
struct shared_fake {
  int fd, host_fd;
};

static int fake_open(void *vctx, const char *name, bool host)
{
  const struct shared_fake *f = vctx;

  if (!streq(name, "sharedindex.abababababababababababababababababababab"))
    return -1;
  return host ? (f->host_fd >= 0 ? dup(f->host_fd) : -1) : dup(f->fd);
}

/* The split index whose one nameless entry (object id 9) replaces the
 * shared entry at the set bit of rep, against the host's index (the shared
 * entries as they are; the host's shared index: another one when
 * host_rewritten): why, with which path. */
static bool split_says(uint64_t rep, bool with_shared, bool host_rewritten, const char *want_bad,
                       const char *want_why)
{
  static char *const pats[] = {".envrc", NULL};
  static const char *const names[] = {"a.c", ".envrc"}, *const none[] = {""};
  static const unsigned char oids[] = {1, 2}, nine[] = {9};
  static const unsigned char other[] = {1, 3};
  struct shared_fake f = {
      split_of(index_fd_of(2, 20, names, 2, false, NULL, oids), 0, true),
      host_rewritten ? split_of(index_fd_of(2, 20, names, 2, false, NULL, other), 0, true) : -1};
  struct ws_git_shared sh = {fake_open, &f};
  cleanup_close int fd = split_of(index_fd_of(2, 20, none, 1, false, NULL, nine), rep, false);
  cleanup_close int host = index_fd_of(2, 20, names, 2, false, NULL, oids);
  cleanup_free char *bad = NULL;
  const char *why = ws_git_index_reason(fd, host, with_shared ? &sh : NULL, pats, 0, &bad);
  bool ok;

  close(f.fd);
  if (f.host_fd >= 0)
    close(f.host_fd);
  if (want_why == NULL)
    ok = why == NULL && bad == NULL;
  else
    ok = why && strstr(why, want_why) && (want_bad ? bad && streq(bad, want_bad) : bad == NULL);
  if (!ok)
    printf("# split %llx: %s `%s`\n", (unsigned long long)rep, why ? why : "(none)",
           bad ? bad : "");
  return ok;
}

/* A split index (core.splitIndex): its nameless entries replace those of
 * the shared index by position, and are checked under the shared path. */
static void test_git_index_split(void)
{
  tap_ok(split_says(1, true, false, NULL, NULL), "git index: a split index replacing `a.c` passes");
  tap_ok(split_says(2, true, false, ".envrc", "on the protected list"),
         "git index: a split index replacing `.envrc` (a nameless entry) names `.envrc`");
  tap_ok(split_says(1, false, false, NULL, "cannot read") &&
             split_says(4, true, false, NULL, "cannot read") &&
             split_says(3, true, false, NULL, "cannot read") &&
             split_says(1, true, true, NULL, "cannot read"),
         "git index: a split index without its shared index, replacing past its entries or "
         "more entries than it holds, or whose shared index differs from the host's file of "
         "that name cannot be read");
}

/* The index fd (hash size hlen, with its extensions) with an end-of-entries
 * extension (EOIE) added saying the extensions start delta bytes after
 * where they do; a new memfd (fd closed). */
static int index_with_eoie(int fd, size_t hlen, long delta)
{
  cleanup_close int in = fd;
  unsigned char buf[4096];
  ssize_t n = pread(in, buf, sizeof buf - 64, 0);
  int out = memfd_create("eoie", MFD_CLOEXEC);
  unsigned char *tree;
  size_t at, end;

  if (n < (ssize_t)(12 + hlen) || out < 0 || (tree = memmem(buf, (size_t)n, "TREE", 4)) == NULL) {
    if (out >= 0)
      close(out);
    return -1;
  }
  at = (size_t)((long)(tree - buf) + delta);
  end = (size_t)n - hlen;
  memcpy(buf + end, "EOIE", 4);
  memset(buf + end + 4, 0, 8 + hlen + hlen);
  buf[end + 7] = (unsigned char)(4 + hlen);
  buf[end + 8] = (unsigned char)(at >> 24);
  buf[end + 9] = (unsigned char)(at >> 16);
  buf[end + 10] = (unsigned char)(at >> 8);
  buf[end + 11] = (unsigned char)at;
  end += 12 + hlen + hlen;
  if (write(out, buf, end) != (ssize_t)end) {
    close(out);
    return -1;
  }
  return out;
}

/* The index fd (hash size hlen) with an extension sig of data (len bytes)
 * added last; a new memfd (fd closed). */
static int index_with_ext(int fd, size_t hlen, const char *sig, const void *data, size_t len)
{
  cleanup_close int in = fd;
  unsigned char buf[4096];
  ssize_t n = pread(in, buf, sizeof buf - 512, 0);
  int out = memfd_create("ext", MFD_CLOEXEC);
  size_t end;

  if (n < (ssize_t)(12 + hlen) || out < 0 || len > 256) {
    if (out >= 0)
      close(out);
    return -1;
  }
  end = (size_t)n - hlen;
  memcpy(buf + end, sig, 4);
  buf[end + 4] = buf[end + 5] = buf[end + 6] = 0;
  buf[end + 7] = (unsigned char)len;
  memcpy(buf + end + 8, data, len);
  memset(buf + end + 8 + len, 0, hlen);
  end += 8 + len + hlen;
  if (write(out, buf, end) != (ssize_t)end) {
    close(out);
    return -1;
  }
  return out;
}

/* Resolve-undo records (REUC): each stage is an entry `git checkout -m`
 * puts back, checked as one. */
static void test_git_index_reuc(void)
{
  static const char *const good[] = {"Makefile", "notes.txt"};
  static char *const pats[] = {".envrc", NULL};
  /* name, modes "0", "100644", "100644", two ids of 20 bytes (0x11) */
  static const char plain[] = "notes.txt\0"
                              "0\0"
                              "100644\0"
                              "100644\0"
                              "\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11"
                              "\x11\x11\x11"
                              "\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11"
                              "\x11\x11\x11";
  static const char link[] = "notes.txt\0"
                             "0\0"
                             "120000\0"
                             "0\0"
                             "\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11"
                             "\x11\x11\x11";
  static const char envrc[] = ".envrc\0"
                              "0\0"
                              "0\0"
                              "100644\0"
                              "\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11"
                              "\x11\x11\x11";
  static const char hook[] = ".git/hooks/post-checkout\0"
                             "100755\0"
                             "0\0"
                             "0\0"
                             "\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11"
                             "\x11\x11\x11";
  static const char shortid[] = "notes.txt\0"
                                "0\0"
                                "100644\0"
                                "0\0"
                                "\x11\x11\x11";
  static const char badmode[] =
      "notes.txt\0"
      "0\0"
      "10x644\0"
      "0\0"
      "\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11"
      "\x11\x11\x11";

  tap_ok(
      index_vs(index_with_ext(index_fd(2, 20, good, 2, true), 20, "REUC", plain, sizeof plain - 1),
               -1, pats, NULL, NULL),
      "git index: resolve-undo stages of a plain file pass");
  tap_ok(index_vs(index_with_ext(index_fd(2, 20, good, 2, true), 20, "REUC", link, sizeof link - 1),
                  -1, pats, "notes.txt", "symlink") &&
             index_vs(index_with_ext(index_fd(2, 20, good, 2, true), 20, "REUC", envrc,
                                     sizeof envrc - 1),
                      -1, pats, ".envrc", "protected list") &&
             index_vs(
                 index_with_ext(index_fd(2, 20, good, 2, true), 20, "REUC", hook, sizeof hook - 1),
                 -1, pats, ".git/hooks/post-checkout", NULL),
         "git index: a resolve-undo stage that is a new symlink, a protected path or a path into "
         ".git is named (git checkout -m writes it)");
  tap_ok(index_vs(index_with_ext(index_fd(2, 20, good, 2, true), 20, "REUC", shortid,
                                 sizeof shortid - 1),
                  -1, pats, "", NULL) &&
             index_vs(index_with_ext(index_fd(2, 20, good, 2, true), 20, "REUC", badmode,
                                     sizeof badmode - 1),
                      -1, pats, "", NULL),
         "git index: a resolve-undo record that does not parse is refused");
}

/* File-system monitor data (FSMN): a token of the agent's that is not a
 * time past, with entries marked unchanged, is refused. */
static void test_git_index_fsmn(void)
{
  static const char *const good[] = {"Makefile", "notes.txt"};
  /* version 2, a token, an EWAH of no bits (size 12: 0 bits, 0 words, 0) */
  static const char tok[] = "\0\0\0\2tok\0\0\0\0\x0c\0\0\0\0\0\0\0\0\0\0\0\0";
  static const char future[] = "\0\0\0\2"
                               "99999999999999999999\0\0\0\0\x0c\0\0\0\0\0\0\0\0\0\0\0\0";
  static const char past[] = "\0\0\0\2"
                             "1000\0\0\0\0\x0c\0\0\0\0\0\0\0\0\0\0\0\0";
  /* both entries dirty: 2 bits, 1 word: a marker word with one literal, then 0b11 */
  static const char dirty[] = "\0\0\0\2tok\0\0\0\0\x1c\0\0\0\x02\0\0\0\x02"
                              "\0\0\0\x02\0\0\0\0"
                              "\0\0\0\0\0\0\0\x03\0\0\0\0";

  tap_ok(index_says(index_with_ext(index_fd(2, 20, good, 2, true), 20, "FSMN", tok, sizeof tok - 1),
                    "") &&
             index_says(index_with_ext(index_fd(2, 20, good, 2, true), 20, "FSMN", future,
                                       sizeof future - 1),
                        ""),
         "git index: FSMN marking entries unchanged under an agent's token or a time to come is "
         "refused");
  tap_ok(
      index_says(index_with_ext(index_fd(2, 20, good, 2, true), 20, "FSMN", past, sizeof past - 1),
                 NULL) &&
          index_says(
              index_with_ext(index_fd(2, 20, good, 2, true), 20, "FSMN", dirty, sizeof dirty - 1),
              NULL),
      "git index: FSMN with a past time, or with every entry dirty, passes");
}

/* The agent's index reads with the hash size of the host's: bytes that
 * read as SHA-256 only are refused beside a SHA-1 host index. */
static void test_git_index_hash_size(void)
{
  static const char *const good[] = {"Makefile", "a/b.c"};

  tap_ok(
      index_vs(index_fd(2, 32, good, 2, true), index_fd(2, 20, good, 2, true), NULL, "", NULL) &&
          index_vs(index_fd(2, 20, good, 2, true), index_fd(2, 32, good, 2, true), NULL, "", NULL),
      "git index: an index that reads only with another hash size than the host's is refused");
  tap_ok(
      index_vs(index_fd(2, 32, good, 2, true), index_fd(2, 32, good, 2, true), NULL, NULL, NULL) &&
          index_vs(index_fd(2, 20, good, 2, true), index_fd(2, 20, good, 2, true), NULL, NULL,
                   NULL) &&
          index_vs(index_fd(2, 32, good, 2, true), -1, NULL, NULL, NULL),
      "git index: the host's hash size, or either without a host index, passes");
}

static size_t cfg_hash(const char *text)
{
  int fd = memfd_create("config", MFD_CLOEXEC);
  size_t n;

  if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text) ||
      lseek(fd, 0, SEEK_SET) != 0) {
    if (fd >= 0)
      close(fd);
    return 99;
  }
  n = ws_gitcfg_hash_size(fd);
  close(fd);
  return n;
}

/* The repository's hash size, from its config as git reads it; the index
 * read with it alone, whatever the host index. */
static void test_git_config_hash_size(void)
{
  static const char *const good[] = {"Makefile", "a/b.c"};

  tap_ok(cfg_hash("[core]\n\trepositoryformatversion = 0\n") == 20 &&
             cfg_hash("[core]\n\trepositoryformatversion = 1\n[extensions]\n\tobjectformat = "
                      "sha256\n") == 32 &&
             cfg_hash("[Extensions] objectFormat = \"SHA256\" # x\n") == 32 &&
             cfg_hash("[extensions]\n\tobjectformat = sha1\n") == 20 &&
             cfg_hash("[extensions]\n\tobjectformat = md5\n") == 0 &&
             cfg_hash("[extensions \"x\"]\n\tobjectformat = sha256\n") == 20 && cfg_hash("") == 20,
         "git config: extensions.objectFormat gives the hash size (sha1 when unset, 0 unknown)");
  tap_ok(
      index_vs_hlen(index_fd(2, 32, good, 2, true), -1, 20, "") &&
          index_vs_hlen(index_fd(2, 20, good, 2, true), -1, 32, "") &&
          index_vs_hlen(index_fd(2, 32, good, 2, true), -1, 32, NULL) &&
          index_vs_hlen(index_fd(2, 20, good, 2, true), index_fd(2, 32, good, 2, true), 20, NULL),
      "git index: read with the repository's hash size alone, without or against a host index");
}

static void test_git_index(void)
{
  static const char *const good[] = {"Makefile", "a/.gitignore", "a/b.git/c", "d/"};
  static const char *const hook[] = {"a", ".git/hooks/post-checkout"};
  static const char *const up[] = {"a/../../x"};
  static const char *const alias[] = {".GIT./config", "x/.g\xe2\x80\x8cit/hooks/h"};
  static const char *const v4[] = {"0:.gitx/y", "3:/hooks"}; /* .gitx/y, then .git/hooks */
  static const char *const v4ok[] = {"0:src/a.c", "1:b.c"};

  tap_ok(index_says(index_fd(2, 20, good, 4, true), NULL) &&
             index_says(index_fd(3, 32, good, 4, false), NULL) &&
             index_says(index_fd(4, 20, v4ok, 2, true), NULL),
         "git index: ordinary paths (v2, v3 with SHA-256, v4) pass");
  tap_ok(index_says(index_fd(2, 20, hook, 2, true), ".git/hooks/post-checkout") &&
             index_says(index_fd(2, 32, up, 1, false), "a/../../x") &&
             index_says(index_fd(2, 20, alias, 2, false), ".GIT./config") &&
             index_says(index_fd(4, 20, v4, 2, false), ".git/hooks"),
         "git index: a path into .git (or an alias of it, or out by ..) is named, v4 prefixes too");
  {
    int fd = index_fd(2, 20, good, 4, false);
    tap_ok(fd >= 0 && ftruncate(fd, 70) == 0 && index_says(fd, "") &&
               index_says(memfd_create("empty", MFD_CLOEXEC), ""),
           "git index: a truncated or empty index is refused, no crash");
  }
  tap_ok(index_says(index_with_eoie(index_fd(2, 20, good, 4, true), 20, 0), NULL) &&
             index_says(index_with_eoie(index_fd(4, 32, v4ok, 2, true), 32, 0), NULL) &&
             index_says(index_with_eoie(index_fd(2, 20, good, 4, true), 20, -8), "") &&
             index_says(index_with_eoie(index_fd(2, 20, good, 4, true), 20, 8), ""),
         "git index: an end-of-entries extension (EOIE) passes only where it says the "
         "extensions start where they do (a threaded git reads them from there)");
  test_git_index_entries();
  test_git_index_split();
  test_git_index_reuc();
  test_git_index_fsmn();
  test_git_index_hash_size();
  test_git_config_hash_size();
}

/* A 1 TiB file with 3 bytes of data, as an agent would make it. */
static int make_sparse(const char *rel, off_t size, off_t at, const char *data)
{
  int fd = open(P(rel), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

  if (fd < 0 || ftruncate(fd, size) < 0 ||
      pwrite(fd, data, strlen(data), at) != (ssize_t)strlen(data)) {
    if (fd >= 0)
      close(fd);
    return -1;
  }
  close(fd);
  return 0;
}

static void test_sparse(void)
{
  const off_t tib = (off_t)1 << 40;
  cleanup_close int d = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  cleanup_close int in = -1, out = -1;
  struct stat st;

  if (make_sparse("sp-a", tib, tib / 2, "abc") < 0 ||
      make_sparse("sp-b", tib, tib / 2, "abc") < 0 ||
      make_sparse("sp-c", tib, tib / 2, "abd") < 0 || make_sparse("sp-d", tib, 4096, "abc") < 0 ||
      make_sparse("sp-e", tib - 1, tib / 2, "abc") < 0) {
    tap_ok(false, "sparse: make the files: %s", strerror(errno));
    return;
  }
  tap_ok(ws_same_content(d, "sp-a", d, "sp-b", (uint64_t)tib),
         "sparse: equal 1 TiB files compare equal");
  tap_ok(!ws_same_content(d, "sp-a", d, "sp-c", (uint64_t)tib),
         "sparse: a byte differs in the data");
  tap_ok(!ws_same_content(d, "sp-a", d, "sp-d", (uint64_t)tib),
         "sparse: data where the other has a hole differs");
  tap_ok(!ws_same_content(d, "sp-a", d, "sp-e", (uint64_t)tib), "sparse: a shorter file differs");
  in = openat(d, "sp-a", O_RDONLY | O_CLOEXEC);
  out = openat(d, "sp-copy", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  tap_ok(in >= 0 && out >= 0 && ws_copy_data(in, out) == 0 && fstat(out, &st) == 0 &&
             st.st_size == tib && st.st_blocks * 512 <= 1 << 20,
         "sparse: the copy keeps the size and the holes (%lld blocks)", (long long)st.st_blocks);
  tap_ok(ws_same_content(d, "sp-a", d, "sp-copy", (uint64_t)tib), "sparse: the copy is equal");
  for (const char *n = "abcde"; *n; n++) {
    cleanup_free char *name = xfmt("sp-%c", *n);
    unlinkat(d, name, 0);
  }
  unlinkat(d, "sp-copy", 0);
}

/* A sub-agent's lower layers ROOT//REL (workspace/view.c): REL opened below
 * ROOT, never through a symlink nor out of ROOT. */
static void test_beneath(void)
{
  int *fds = NULL;
  size_t n = 0;
  struct error e = {0};
  char link[64] = "";
  cleanup_free char *ok = NULL, *bad1 = NULL, *bad2 = NULL, *bad3 = NULL;
  cleanup_free char *in = xfmt("%s//bn/a/b:%s/bn", tmp, tmp);

  mk("bn");
  mk("bn/a");
  mk("bn/a/b");
  if (symlink("/etc", P("bn/l")) < 0 || symlink("a", P("bn/rel")) < 0)
    printf("# symlink: %s\n", strerror(errno));
  ok = workspace_lowerdir_beneath(in, &fds, &n, &e);
  if (ok != NULL && n == 1) {
    cleanup_free char *fdp = xfmt("/proc/self/fd/%d", fds[0]);
    ssize_t k = readlink(fdp, link, sizeof link - 1);
    link[k > 0 ? k : 0] = '\0';
  }
  tap_ok(ok != NULL && n == 1 && str_has_prefix(ok, "/proc/self/fd/") && strchr(ok, ':') &&
             streq(strchr(ok, ':') + 1, P("bn")) && streq(link, P("bn/a/b")),
         "beneath: ROOT//REL is the directory REL below ROOT, by descriptor; a plain path stays");
  for (size_t i = 0; i < n; i++)
    close(fds[i]);
  free(fds);
  {
    cleanup_free char *a = xfmt("%s//bn/l", tmp), *b = xfmt("%s//bn/rel/b", tmp),
                      *c = xfmt("%s/bn//../../etc", tmp);
    bad1 = workspace_lowerdir_beneath(a, &fds, &n, &e);
    bad2 = workspace_lowerdir_beneath(b, &fds, &n, &e);
    bad3 = workspace_lowerdir_beneath(c, &fds, &n, &e);
  }
  tap_ok(bad1 == NULL && bad2 == NULL && bad3 == NULL && n == 0,
         "beneath: an absolute or a relative symlink, or `..` out of ROOT, is refused");
}

/* A view's host dir (workspace/view.c) is opened only while its pid is the
 * process that started at the recorded time: a pid reused after the parent
 * died names another process's root. */
static void test_view_identity(void)
{
  cleanup_free char *view = xfmt("/proc/%d/root/tmp", (int)getpid());
  uint64_t start = 0;
  int good, other, none;
  int e_other, e_none;

  if (workspace_view_start(view, &start) < 0) {
    tap_ok(false, "view identity: the start time of our own pid");
    return;
  }
  good = workspace_open_host(view, start, O_PATH);
  other = workspace_open_host(view, start + 1, O_PATH);
  e_other = errno;
  none = workspace_open_host(view, 0, O_PATH);
  e_none = errno;
  tap_ok(good >= 0 && other < 0 && e_other == ESRCH && none < 0 && e_none == ESRCH,
         "view identity: /proc/PID/root is opened for the recorded start time only (another, or "
         "none: ESRCH)");
  if (good >= 0)
    close(good);
}

int main(void)
{
  test_sha256();
  test_linediff();
  test_paths();
  test_protect();
  test_protect_caches();
  test_quote();
  test_drop_mountpoints();
  test_git_index();
  test_view_identity();
  if (geteuid() != 0 || mkdtemp(tmp) == NULL) {
    printf("# skipping layer tests (need root)\n");
    return tap_done();
  }
  build_tree();
  test_classify();
  test_scan();
  test_manifest();
  test_commit();
  test_sparse();
  test_beneath();
  {
    cleanup_close int t = open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ws_rm_tree(t, tmp + strlen("/tmp/"));
  }
  return tap_done();
}
