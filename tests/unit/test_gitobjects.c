/* test_gitobjects.c - the git object reader (workspace/gitobjects.c) and the
 * ref rule (workspace/gitrefs.c) on real repositories made by the host's
 * git in a temp dir: a host repository and an agent's copy of it, whose
 * changed ref files ws_mark_protected reads from the copy (the upper layer)
 * and the host.  Loose and packed objects (OFS_DELTA and REF_DELTA),
 * SHA-1 and SHA-256, the trees a comparison reads, and truncated or forged
 * objects.  Skipped without git. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "common/util.h"
#include "tests/unit/tap.h"
#include "workspace/internal.h"
#include "workspace/workspace.h"

static char dir[] = "/tmp/agentrt-test-gitobj.XXXXXX";
static void put_file(const char *rel, const char *text)
{
  cleanup_free char *p = xfmt("%s/%s", dir, rel);
  FILE *f = fopen(p, "we");
  if (f) {
    fputs(text, f);
    fclose(f);
  }
}

static char *const patterns[] = {".envrc", "__pycache__/", "*.pyc", ".vscode/", NULL};

/* Run a shell command (printf-style) in dir with a fixed git identity;
 * its exit status. */
static __attribute__((format(printf, 1, 2))) int sh(const char *fmt, ...)
{
  va_list ap;
  char *cmd, *full;
  int r;

  va_start(ap, fmt);
  if (vasprintf(&cmd, fmt, ap) < 0)
    abort();
  va_end(ap);
  full = xfmt("cd '%s' && export HOME='%s' GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=t "
              "GIT_AUTHOR_EMAIL=t@e GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@e "
              "GIT_AUTHOR_DATE=@1700000000 GIT_COMMITTER_DATE=@1700000000 && (%s) >/dev/null 2>&1",
              dir, dir, cmd);
  r = system(full);
  free(cmd);
  free(full);
  return r;
}

/* What a shell command run in dir prints. */
static char *out_of(const char *cmd)
{
  cleanup_free char *full = xfmt("cd '%s' && %s", dir, cmd);
  FILE *f = popen(full, "re");
  char *buf = NULL;
  size_t n = 0, cap = 0;

  if (f == NULL)
    return xstrdup("");
  for (;;) {
    buf = xrealloc(buf, cap += 65536);
    size_t k = fread(buf + n, 1, cap - n - 1, f);
    n += k;
    if (k == 0)
      break;
  }
  buf[n] = '\0';
  pclose(f);
  return buf;
}

/* A host repository `host` (fmt: "" or "--object-format=sha256") with
 * d0..d9/s0..s4/f.c, a.txt, and an agent's copy `agent`. */
static bool make_repos(const char *fmt)
{
  return sh("rm -rf host agent && git init -q %s host && cd host && "
            "for d in 0 1 2 3 4 5 6 7 8 9; do for s in 0 1 2 3 4; do mkdir -p d$d/s$s && "
            "echo $d$s >d$d/s$s/f.c; done; done && echo a >a.txt && git add -A && "
            "git commit -q -m base && cd .. && cp -a host agent",
            fmt) == 0;
}

/* The protection ws_mark_protected gives the agent's change of path (a file
 * of agent/), against host/, with a new file `extra` changed too (NULL:
 * none); NULL when none. */
static char *ref_protect(const char *path, enum ws_kind kind, const char *extra)
{
  struct ws_changes c = {0};
  struct ws_layers l = {0};
  cleanup_free char *a = xfmt("%s/agent", dir), *h = xfmt("%s/host", dir);
  int fd = open(a, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  char *res;

  l.fds = &fd;
  l.n = 1;
  l.hostfd = open(h, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (extra)
    ws_changes_push(&c,
                    &(struct ws_change){
                        .kind = WS_ADDED, .type = WS_T_FILE, .path = xstrdup(extra), .layer = 0});
  ws_changes_push(&c, &(struct ws_change){.kind = kind,
                                          .type = WS_T_FILE,
                                          .old_type = kind == WS_ADDED ? WS_T_NONE : WS_T_FILE,
                                          .path = xstrdup(path),
                                          .layer = 0});
  ws_mark_protected(&c, patterns, &l);
  res = c.v[c.n - 1].protect ? xstrdup(c.v[c.n - 1].protect) : NULL;
  ws_changes_free(&c);
  close(fd);
  close(l.hostfd);
  return res;
}

/* Is the agent's ref change protected with a reason that holds want (NULL:
 * not protected)? */
static bool ref_says(const char *path, enum ws_kind kind, const char *want)
{
  cleanup_free char *p = ref_protect(path, kind, NULL);

  if (want == NULL ? p == NULL : p != NULL && strstr(p, want) != NULL)
    return true;
  printf("# %s: %s\n", path, p ? p : "(not protected)");
  return false;
}

/* Read every object of agent/ (listed by git) through ws_gitodb_read: do
 * they all read (their ids checked against their content)? */
static bool read_all(size_t hlen)
{
  cleanup_free char *list = out_of("git -C agent cat-file --batch-all-objects "
                                   "--batch-check='%(objectname)'");
  cleanup_free char *a = xfmt("%s/agent", dir);
  int fd = open(a, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  struct ws_gitodb *db = ws_gitodb_open(&fd, 1, ".git");
  size_t n = 0;
  bool ok = true;

  for (char *line = strtok(list, "\n"); line && ok; line = strtok(NULL, "\n")) {
    unsigned char oid[32], *data = NULL;
    size_t size;
    int type;
    ok = ws_git_parse_hex(line, strlen(line), hlen, oid) &&
         ws_gitodb_read(db, oid, hlen, &type, &data, &size) == 0;
    if (!ok)
      printf("# %s: not read\n", line);
    free(data);
    n++;
  }
  ws_gitodb_free(db);
  close(fd);
  return ok && n > 50;
}

/* How many deltas of a type (6 OFS_DELTA, 7 REF_DELTA) the agent's packs
 * hold: the type bits of each delta entry verify-pack lists. */
static int deltas(int type)
{
  cleanup_free char *cmd = NULL, *out = NULL;

  put_file("deltas.py", "import sys\nn = 0\nfor l in sys.stdin:\n    p, o = l.split()\n"
                        "    f = open(p, 'rb')\n    f.seek(int(o))\n"
                        "    n += ((f.read(1)[0] >> 4) & 7) == int(sys.argv[1])\nprint(n)\n");
  cmd = xfmt("cd agent && for i in .git/objects/pack/*.idx; do git verify-pack -v $i | awk -v "
             "p=${i%%.idx}.pack 'NF == 7 { print p, $5 }'; done | python3 ../deltas.py %d",
             type);
  out = out_of(cmd);
  return atoi(out);
}

static void test_loose(const char *fmt, const char *label)
{
  const char *master = ".git/refs/heads/master";

  if (!make_repos(fmt)) {
    tap_ok(false, "%s: the fixture repositories", label);
    return;
  }
  tap_ok(sh("cd agent && echo x >>d3/s2/f.c && echo n >new.c && git add -A && git commit -q -m "
            "work") == 0 &&
             ref_says(master, WS_MODIFIED, NULL),
         "%s: loose objects: an ordinary commit passes", label);
  tap_ok(sh("cd agent && echo 'touch /tmp/x' >.envrc && git add .envrc && git commit -q -m e") ==
                 0 &&
             ref_says(master, WS_MODIFIED, "on the protected list") &&
             ref_says(master, WS_MODIFIED, "`.envrc` (ref `refs/heads/master`)"),
         "%s: loose objects: a committed .envrc protects the ref, named with its path", label);
  tap_ok(
      sh("cd agent && git reset -q --hard HEAD~1 && mkdir -p d1/__pycache__ && "
         "echo b >d1/__pycache__/m.cpython-311.pyc && git add -f d1 && git commit -q -m p") == 0 &&
          ref_says(master, WS_MODIFIED, "`d1/__pycache__`"),
      "%s: a __pycache__ directory deep in the tree is found (only its subtree descended)", label);
  tap_ok(sh("cd agent && git reset -q --hard HEAD~1 && ln -s /etc/shadow notes && git add notes "
            "&& git commit -q -m l") == 0 &&
             ref_says(master, WS_MODIFIED, "symlink") &&
             sh("cd agent && git checkout -q -b side && git checkout -q --detach") == 0 &&
             ref_says(".git/HEAD", WS_MODIFIED, "symlink") &&
             ref_says(".git/refs/heads/side", WS_ADDED, "symlink"),
         "%s: a symlink in a commit: the ref, a detached HEAD and a new branch are protected",
         label);
  tap_ok(sh("cd agent && git checkout -q master && git reset -q --hard HEAD~1 && git update-index "
            "--add --cacheinfo 160000,$(git rev-parse HEAD),lib && git commit -q -m g") == 0 &&
             ref_says(master, WS_MODIFIED, "submodule (gitlink"),
         "%s: a gitlink in a commit protects the ref", label);
}

static void test_packed(const char *fmt, const char *label, size_t hlen)
{
  bool ok;
  int k;

  make_repos(fmt);
  /* versions of a larger file make deltas; an .envrc the host had passes */
  sh("cd host && seq 1 3000 >big.txt && echo 'export A=1' >.envrc && ln -s a.txt link && "
     "git add -A && git commit -q -m big && cd .. && rm -rf agent && cp -a host agent && cd agent "
     "&& for i in 1 2 3 4 5 6; do echo $i >>big.txt && echo $i >>d$i/s1/f.c && git commit -q -am "
     "v$i; done");
  ok = sh("cd agent && git -c repack.useDeltaBaseOffset=false repack -q -a -d -f && git "
          "pack-refs --all") == 0;
  k = deltas(7);
  tap_ok(ok && k > 0 && read_all(hlen),
         "%s: packs: every object reads through REF_DELTA chains (%d deltas), ids checked", label,
         k);
  ok = sh("cd agent && git repack -q -a -d -f && git pack-refs --all && "
          "test ! -e .git/refs/heads/master") == 0;
  k = deltas(6);
  tap_ok(ok && k > 0 && read_all(hlen) && ref_says(".git/packed-refs", WS_ADDED, NULL),
         "%s: packs: OFS_DELTA chains read (%d deltas); an ordinary history in packed-refs "
         "passes, the host's own .envrc and symlink too",
         label, k);
  tap_ok(sh("cd agent && mkdir -p .vscode && echo '{}' >.vscode/tasks.json && git add -f .vscode "
            "&& git commit -q -m v && git gc -q && git pack-refs --all") == 0 &&
             ref_says(".git/packed-refs", WS_ADDED, "`.vscode` (ref `refs/heads/master`)"),
         "%s: after git gc a protected entry in a packed commit protects packed-refs", label);
  /* gc deleted the loose ref: in the upper layer a whiteout, over the host's loose ref */
  if (getuid() != 0) {
    tap_skip("a whiteout (mknod 0/0) needs root; the bats gc escape covers it");
    return;
  }
  {
    cleanup_free char *wh = xfmt("%s/agent/.git/refs/heads/master", dir);
    tap_ok(
        mknod(wh, S_IFCHR | 0000, makedev(0, 0)) == 0 &&
            ref_says(".git/refs/heads/master", WS_DELETED, "`.vscode` (ref `refs/heads/master`)"),
        "%s: a loose ref deleted by git gc is checked for its packed value (held back, the "
        "host keeps its own)",
        label);
  }
}

/* Trees read to compare a one-file change in a repository of 61 trees. */
static void test_trees_read(void)
{
  cleanup_free char *a = xfmt("%s/agent", dir);
  cleanup_free char *newid = NULL, *oldid = NULL;
  unsigned char n[20], o[20];
  char *path = NULL;
  int fd;
  struct ws_gitodb *db;
  const char *why;

  make_repos("");
  sh("cd agent && echo y >>d7/s3/f.c && git commit -q -am one");
  newid = out_of("git -C agent rev-parse HEAD");
  oldid = out_of("git -C agent rev-parse HEAD~1");
  fd = open(a, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  db = ws_gitodb_open(&fd, 1, ".git");
  why = ws_git_parse_hex(newid, strlen(newid), 20, n) && ws_git_parse_hex(oldid, 40, 20, o)
            ? ws_git_commit_reason(db, n, o, 20, patterns, &path)
            : "bad ids";
  tap_ok(why == NULL && ws_gitodb_trees_read(db) == 6,
         "trees: a one-file change 3 levels deep reads 6 trees (3 new, 3 old) of 61: %zu",
         ws_gitodb_trees_read(db));
  free(path);
  ws_gitodb_free(db);
  db = ws_gitodb_open(&fd, 1, ".git");
  why = ws_git_commit_reason(db, n, NULL, 20, patterns, &path);
  tap_ok(why == NULL && ws_gitodb_trees_read(db) == 61,
         "trees: against nothing, the whole tree is read: %zu", ws_gitodb_trees_read(db));
  free(path);
  ws_gitodb_free(db);
  close(fd);
}

/* A commit on master whose tree has one entry named name (forged: git
 * writes no such tree). */
static bool forged_entry(const char *name)
{
  put_file("mktree.py", "import sys\nsys.stdout.buffer.write(b'100644 ' + sys.argv[1].encode() "
                        "+ b'\\0' + bytes.fromhex(sys.argv[2]))\n");
  return sh("cd agent && b=$(echo x | git hash-object -w --stdin) && "
            "t=$(python3 ../mktree.py '%s' $b | git hash-object -w -t tree --literally --stdin) "
            "&& c=$(git commit-tree -m f $t) && git update-ref refs/heads/master $c",
            name) == 0;
}

static void test_refused(void)
{
  const char *master = ".git/refs/heads/master";

  make_repos("");
  tap_ok(forged_entry(".git") && ref_says(master, WS_MODIFIED, "inside `.git`") &&
             forged_entry(".GIT.") && ref_says(master, WS_MODIFIED, "inside `.git`") &&
             forged_entry("..") && ref_says(master, WS_MODIFIED, "out of the work tree"),
         "refused: a tree entry .git (or an alias), or .., git would never write");
  /* a loose tree of the agent's commit, truncated */
  sh("cd agent && git update-ref refs/heads/master $(cat ../host/.git/refs/heads/master) && "
     "git reset -q --hard && echo z >>d2/s2/f.c && git commit -q -am t && "
     "t=$(git rev-parse HEAD:d2/s2) && f=.git/objects/$(echo $t | cut -c1-2)/$(echo $t | cut "
     "-c3-) && chmod u+w $f && head -c 20 $f >$f.t && mv $f.t $f");
  tap_ok(ref_says(master, WS_MODIFIED,
                  "a commit agentrt cannot read (git checks none of its "
                  "paths) `d2/s2`"),
         "refused: a truncated tree object (named by its path)");
  /* the same object id holding other content (a valid zlib stream) */
  sh("cd agent && t=$(git rev-parse HEAD:d2/s2) && f=.git/objects/$(echo $t | cut -c1-2)/$(echo "
     "$t | cut -c3-) && python3 -c 'import zlib,sys; d=b\"100644 .envrc\\0\"+bytes(20); "
     "open(sys.argv[1],\"wb\").write(zlib.compress(b\"tree %%d\\0\" %% len(d) + d))' $f");
  tap_ok(ref_says(master, WS_MODIFIED, "cannot read"),
         "refused: an object whose content does not match its id");
  tap_ok(sh("cd agent && git rev-parse HEAD >.git/refs/heads/master.x && "
            "echo 0000000000000000000000000000000000000001 >.git/refs/heads/master") == 0 &&
             ref_says(master, WS_MODIFIED, "cannot read") &&
             sh("cd agent && echo garbage >.git/refs/heads/master") == 0 &&
             ref_says(master, WS_MODIFIED, "a ref agentrt cannot read"),
         "refused: a ref naming a missing object, or no id at all");
  /* a pack with one byte flipped in the middle: each object read is refused or correct */
  make_repos("");
  sh("cd agent && echo 'x' >.envrc && git add .envrc && git commit -q -m e && git gc -q && "
     "p=$(ls .git/objects/pack/*.pack) && chmod u+w $p && s=$(stat -c %%s $p) && "
     "printf '\\377' | dd of=$p bs=1 seek=$((s / 2)) conv=notrunc");
  tap_ok(ref_says(".git/packed-refs", WS_ADDED, "(ref `refs/heads/master`)"),
         "refused: a corrupt pack (a byte flipped) protects, no crash");
  sh("cd agent && i=$(ls .git/objects/pack/*.idx) && chmod u+w $i && head -c 600 $i >$i.t && mv "
     "$i.t $i");
  tap_ok(ref_says(".git/packed-refs", WS_ADDED, "cannot read"),
         "refused: a truncated pack index protects, no crash");
}

/* Is the agent's one replace ref protected as such? */
static bool ref_protect_replace(void)
{
  cleanup_free char *name = out_of("ls agent/.git/refs/replace | head -1");
  cleanup_free char *path = NULL;

  name[strcspn(name, "\n")] = '\0';
  path = xfmt(".git/refs/replace/%s", name);
  return *name && ref_says(path, WS_ADDED, "a replace ref");
}

static void test_head(void)
{
  make_repos("");
  tap_ok(sh("cd host && git branch other && cd ../agent && git branch other && "
            "git checkout -q other") == 0 &&
             ref_says(".git/HEAD", WS_MODIFIED, NULL),
         "HEAD: switching to a branch the host has (same commit) passes");
  tap_ok(sh("cd agent && git checkout -q -b evil && echo x >.envrc && git add .envrc && "
            "git commit -q -m e") == 0 &&
             ref_says(".git/HEAD", WS_MODIFIED, "`.envrc` (ref `HEAD`)") &&
             ref_says(".git/refs/heads/evil", WS_ADDED, "`.envrc` (ref `refs/heads/evil`)") &&
             sh("cd agent && git rev-parse master >.git/ORIG_HEAD") == 0 &&
             ref_says(".git/ORIG_HEAD", WS_ADDED, NULL),
         "HEAD: a new branch with a .envrc protects HEAD (resolved through the agent's refs) and "
         "the branch, compared with the host's HEAD");
  {
    cleanup_free char *p = NULL;
    sh("cd agent && echo 'ref: refs/heads/evil' >HEAD");
    p = ref_protect(".git/refs/heads/evil", WS_ADDED, "HEAD");
    tap_ok(ref_says(".git/logs/refs/heads/evil", WS_ADDED,
                    "`.envrc` (an entry of the reflog of `refs/heads/evil`)") &&
               ref_says(".git/logs/HEAD", WS_MODIFIED,
                        "`.envrc` (an entry of the reflog of `HEAD`)") &&
               p != NULL,
           "HEAD: a reflog (logs/ holds a HEAD) is no repository but .git's reflog of its ref; "
           "a HEAD the agent made at the top leaves .git's new ref protected");
  }
  tap_ok(sh("cd agent && git tag -a -m t v1 evil && git tag -a -m tt v2 v1") == 0 &&
             ref_says(".git/refs/tags/v2", WS_ADDED, "`.envrc` (ref `refs/tags/v2`)"),
         "tags: an annotated tag (of a tag) peels to its commit");
  tap_ok(sh("cd agent && git checkout -q master && echo w >>a.txt && git stash -q && git stash "
            "drop -q && echo w >>a.txt && echo 'touch /tmp/x' >.envrc && git stash -q -u") == 0 &&
             ref_says(".git/refs/stash", WS_ADDED, "`.envrc` (ref `refs/stash`)") &&
             sh("cd agent && git stash drop -q && echo w >>a.txt && git stash -q") == 0 &&
             ref_says(".git/refs/stash", WS_ADDED, NULL),
         "stash: an untracked .envrc stashed (the third parent's tree) protects refs/stash; a "
         "stash of ordinary changes passes");
  tap_ok(sh("cd agent && git replace $(git rev-parse master) $(git rev-parse evil)") == 0 &&
             ref_protect_replace(),
         "replace: a refs/replace/ ref (git substitutes the object everywhere) is protected");
  tap_ok(sh("cd agent && git rev-parse evil >.git/FETCH_HEAD") == 0 &&
             ref_says(".git/FETCH_HEAD", WS_ADDED, "(ref `FETCH_HEAD`)"),
         "FETCH_HEAD: a fetched commit is compared with the host's HEAD");
  /* packed-refs: a tag's "^" line, which git may take without reading the tag */
  make_repos("");
  tap_ok(sh("cd agent && git checkout -q -b tmp && echo x >.envrc && git add .envrc && git commit "
            "-q -m e && git rev-parse tmp >../evil-id && git checkout -q master && git tag -a -m "
            "t good master && git pack-refs --all") == 0 &&
             ref_says(".git/packed-refs", WS_ADDED, "(ref `refs/heads/tmp`)") &&
             sh("cd agent && git update-ref -d refs/heads/tmp && grep -q '^^' .git/packed-refs") ==
                 0 &&
             ref_says(".git/packed-refs", WS_ADDED, NULL) &&
             sh("cd agent && sed -i \"s/^^.*/^$(cat ../evil-id)/\" .git/packed-refs") == 0 &&
             ref_says(".git/packed-refs", WS_ADDED, "`.envrc` (ref `refs/tags/good`)"),
         "packed-refs: a tag's peeled line naming another commit than the tag is checked too");
  make_repos("");
  sh("cd agent && git checkout -q -b evil && echo x >.envrc && git add .envrc && git commit -q -m "
     "e");
  /* a bare repository below the work tree */
  tap_ok(
      sh("git clone -q --bare agent host/b.git && cp -a host/b.git agent/b.git && cd agent/b.git "
         "&& git update-ref refs/heads/master evil") == 0 &&
          ref_says("b.git/refs/heads/master", WS_MODIFIED, "`.envrc`"),
      "bare: a ref of a bare repository in the work tree is read the same way");
}

/* ws_git_reflog_new_ids on texts: which ids are new, and what is refused. */
static void test_reflog_lines(void)
{
  const char *a = "1111111111111111111111111111111111111111",
             *b = "2222222222222222222222222222222222222222",
             *c = "3333333333333333333333333333333333333333",
             *z = "0000000000000000000000000000000000000000";
  cleanup_free char *host = xfmt("%s %s t <t@e> 1700000000 +0000\tclone: from x\n"
                                 "%s %s t <t@e> 1700000001 +0000\tcommit: one\n",
                                 z, a, a, b);
  cleanup_free char *more = xfmt("%s%s %s t <t@e> 1700000002 -0130\tcommit: two\n", host, b, c);
  cleanup_free char *rewritten = xfmt("%s %s t <t@e> 1700000000 +0000\tclone: from x\n"
                                      "%s %s t <t@e> 1700000001 +0000\tcommit: one\n",
                                      z, a, a, c);
  cleanup_free char *branch = xfmt("%s %s t <t@e> 1 +0000\n", z, c);
  cleanup_free char *twice = xfmt("%s %s t <t@e> 1 +0000\n%s %s t <t@e> 2 +0000\n", c, a, a, c);
  cleanup_free char *many = xstrdup(host);
  struct ws_oid *ids = NULL;
  size_t n = 9;
  bool ok;

  ok = ws_git_reflog_new_ids(host, strlen(host), host, strlen(host), 10, &ids, &n) == 0 && n == 0;
  free(ids);
  tap_ok(ok, "reflog lines: the host's own text names nothing new");
  ok = ws_git_reflog_new_ids(more, strlen(more), host, strlen(host), 10, &ids, &n) == 0 && n == 1 &&
       ids[0].hlen == 20 && ids[0].b[0] == 0x33;
  free(ids);
  tap_ok(ok, "reflog lines: an appended entry names its new id (its old id is the host's)");
  ok = ws_git_reflog_new_ids(rewritten, strlen(rewritten), host, strlen(host), 10, &ids, &n) == 0 &&
       n == 1 && ids[0].b[0] == 0x33;
  free(ids);
  tap_ok(ok, "reflog lines: a host's line rewritten is the agent's");
  ok = ws_git_reflog_new_ids(branch, strlen(branch), NULL, 0, 10, &ids, &n) == 0 && n == 1 &&
       ids[0].b[0] == 0x33;
  free(ids);
  tap_ok(ok, "reflog lines: no host log, no message; the all-zero id is skipped");
  ok = ws_git_reflog_new_ids(twice, strlen(twice), NULL, 0, 10, &ids, &n) == 0 && n == 2 &&
       ids[0].b[0] == 0x11 && ids[1].b[0] == 0x33;
  free(ids);
  tap_ok(ok, "reflog lines: old and new ids, sorted, each once");
  {
    char *bad[] = {
        xstrdup("garbage\n"),
        xfmt("%s %s t <t@e> 1 +0000", a, c),                           /* no newline */
        xfmt("%s %s t <t@e> 1 +0000 \n", a, c),                        /* a trailing space */
        xfmt("%s %s t t@e 1 +0000\n", a, c),                           /* no email */
        xfmt("%s %s t <t@e> x +0000\n", a, c),                         /* no time */
        xfmt("%s %s t <t@e> 1 0000\n", a, c),                          /* no zone sign */
        xfmt("%s  %s t <t@e> 1 +0000\n", a, c),                        /* two spaces */
        xfmt("%s %s t <t@e> 1 +0000\n\n", a, c),                       /* an empty line */
        xfmt("%.39s %s t <t@e> 1 +0000\n", a, c),                      /* a short id */
        xfmt("%s %s000000000000000000000000 t <t@e> 1 +0000\n", a, c), /* 40 and 64 digits */
        xfmt("%s %s\n", a, c),                                         /* the ids alone */
    };
    ok = true;
    for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
      int k = ws_git_reflog_new_ids(bad[i], strlen(bad[i]), host, strlen(host), 10, &ids, &n);
      free(ids);
      if (k != -EBADMSG) {
        printf("# %s: %d\n", bad[i], k);
        ok = false;
      }
      free(bad[i]);
    }
    tap_ok(ok, "reflog lines: an added line of another form is refused (garbage, no newline, "
               "no email, time or zone, an id cut or of two lengths)");
  }
  for (int i = 0; i < 11; i++) {
    char *next = xfmt("%s%s %s t <t@e> %d +0000\n", many, a, b, 2000 + i);
    free(many);
    many = next;
  }
  tap_ok(ws_git_reflog_new_ids(many, strlen(many), host, strlen(host), 10, &ids, &n) == -E2BIG &&
             ids == NULL,
         "reflog lines: more added lines than the limit are refused");
}

/* The agent's reflogs, on repositories: the entries it added are checked
 * as values of their ref, against the host's commit for it. */
static void test_reflog(const char *fmt, const char *label)
{
  const char *logm = ".git/logs/refs/heads/master";

  make_repos(fmt);
  tap_ok(sh("cd agent && echo x >>a.txt && git commit -q -am one && git checkout -q -b topic && "
            "echo t >t.c && git add t.c && git commit -q -m t && git checkout -q master && "
            "git merge -q --no-edit topic && git checkout -q HEAD~1 && git checkout -q master && "
            "git reset -q --hard HEAD~1 && git commit -q --amend -m amended") == 0 &&
             ref_says(".git/logs/HEAD", WS_MODIFIED, NULL) && ref_says(logm, WS_MODIFIED, NULL) &&
             ref_says(".git/logs/refs/heads/topic", WS_ADDED, NULL),
         "%s: reflog: honest commits, a branch, checkouts, a reset and an amend pass", label);
  /* the clean chain above is walked too: a walk that stops at a commit found clean still
   * reaches the planted one below a later clean commit */
  tap_ok(sh("cd agent && git checkout -q -b side HEAD~1 && echo x >.envrc && git add .envrc && "
            "git commit -q -m e && git rm -q .envrc && git commit -q -m clean && git checkout -q "
            "master && git branch -q -D side && test ! -e .git/logs/refs/heads/side") == 0 &&
             ref_says(".git/logs/HEAD", WS_MODIFIED, "`.envrc` (an entry of the reflog of `HEAD`)"),
         "%s: reflog: a planted commit below a clean one, on a deleted branch off the clean "
         "chain, protects logs/HEAD",
         label);
  make_repos(fmt);
  tap_ok(
      sh("cd agent && echo 'touch /tmp/x' >.envrc && git add .envrc && git commit -q -m e && "
         "git reset -q --hard HEAD~1 && test ! -e .envrc") == 0 &&
          ref_says(".git/refs/heads/master", WS_MODIFIED, NULL) &&
          ref_says(logm, WS_MODIFIED, "`.envrc` (an entry of the reflog of `refs/heads/master`)") &&
          ref_says(".git/logs/HEAD", WS_MODIFIED, "`.envrc` (an entry of the reflog of `HEAD`)"),
      "%s: reflog: a commit named by the reflogs alone (git reset --hard HEAD~1) protects "
      "them, the clean branch passes",
      label);
  /* only the reset's entry left: the planted commit is its old id */
  tap_ok(sh("cd agent && grep -v 'commit: e$' .git/logs/HEAD >l && mv l .git/logs/HEAD && "
            "test $(wc -l <.git/logs/HEAD) = 2") == 0 &&
             ref_says(".git/logs/HEAD", WS_MODIFIED, "`.envrc` (an entry of the reflog of `HEAD`)"),
         "%s: reflog: an entry's old id is checked too", label);
  /* a host's line rewritten to name the planted commit */
  tap_ok(sh("cd agent && e=$(git rev-parse HEAD@{1}) && cp ../host/.git/logs/HEAD .git/logs/HEAD "
            "&& sed -i \"s/ $(git rev-parse HEAD) / $e /\" .git/logs/HEAD && "
            "grep -q \" $e \" .git/logs/HEAD") == 0 &&
             ref_says(".git/logs/HEAD", WS_MODIFIED, "`.envrc` (an entry of the reflog of `HEAD`)"),
         "%s: reflog: a host's entry rewritten to name another commit is checked", label);
}

/* Reflogs the agent wrote by hand, its stash's, a bare repository's. */
static void test_reflog_forged(void)
{
  const char *logh = ".git/logs/HEAD";

  make_repos("");
  tap_ok(sh("cd agent && echo garbage >>.git/logs/HEAD") == 0 &&
             ref_says(logh, WS_MODIFIED, "a reflog agentrt cannot read") &&
             sh("cd agent && cp ../host/.git/logs/HEAD .git/logs/HEAD && h=$(git rev-parse HEAD) "
                "&& printf \"$h $h t <t@e> 1 +0000\" >>.git/logs/HEAD") == 0 &&
             ref_says(logh, WS_MODIFIED, "a reflog agentrt cannot read"),
         "reflog: a garbage entry, or one without its newline, protects (fail closed)");
  tap_ok(sh("cd agent && cp ../host/.git/logs/HEAD .git/logs/HEAD && h=$(git rev-parse HEAD) && "
            "echo \"$h 0000000000000000000000000000000000000001 t <t@e> 1 +0000\" "
            ">>.git/logs/HEAD") == 0 &&
             ref_says(logh, WS_MODIFIED, "a commit agentrt cannot read"),
         "reflog: an entry naming a missing object protects");
  tap_ok(sh("cd agent && cp ../host/.git/logs/HEAD .git/logs/HEAD && h=$(git rev-parse HEAD) && "
            "for i in $(seq 1 4100); do echo \"$h $h t <t@e> $i +0000\"; done >>.git/logs/HEAD") ==
                 0 &&
             ref_says(logh, WS_MODIFIED, "more new reflog entries than agentrt reads"),
         "reflog: more than 4,096 new entries protect");
  /* git stash pop stash@{1}: the stash made with an untracked .envrc, then a clean one */
  make_repos("");
  tap_ok(sh("cd agent && echo 'touch /tmp/x' >.envrc && git stash -q -u && echo w >>a.txt && "
            "git stash -q && test ! -e .envrc") == 0 &&
             ref_says(".git/refs/stash", WS_ADDED, NULL) &&
             ref_says(".git/logs/refs/stash", WS_ADDED,
                      "`.envrc` (an entry of the reflog of `refs/stash`)"),
         "reflog: a stash below a clean one (stash@{1}) protects logs/refs/stash, not refs/stash");
  make_repos("");
  sh("cd agent && git checkout -q -b evil && echo x >.envrc && git add .envrc && git commit -q -m "
     "e && git checkout -q master");
  tap_ok(sh("git clone -q --bare agent host/b.git && cp -a host/b.git agent/b.git && git -C "
            "host/b.git update-ref -d refs/heads/evil && cd agent/b.git "
            "&& git -c core.logAllRefUpdates=always update-ref refs/heads/master evil && "
            "git -c core.logAllRefUpdates=always update-ref refs/heads/master evil~1") == 0 &&
             ref_says("b.git/refs/heads/master", WS_MODIFIED, NULL) &&
             ref_says("b.git/logs/refs/heads/master", WS_ADDED,
                      "`.envrc` (an entry of the reflog of `refs/heads/master`)"),
         "reflog: a bare repository's reflog in the work tree is read the same way");
  /* the host's own branch dev holds a .envrc; its reflogs are empty */
  make_repos("");
  tap_ok(
      sh("cd host && git checkout -q -b dev && echo x >.envrc && git add .envrc && git commit -q "
         "-m dev && git checkout -q master && git reflog expire --expire=now --all && cd .. && "
         "rm -rf agent && cp -a host agent && cd agent && git checkout -q dev && git checkout -q "
         "master && test -s .git/logs/HEAD") == 0 &&
          ref_says(".git/logs/HEAD", WS_MODIFIED, NULL) &&
          sh("git -C host branch -q -D dev") == 0 &&
          ref_says(".git/logs/HEAD", WS_MODIFIED, "`.envrc` (an entry of the reflog of `HEAD`)"),
      "reflog: a checkout of one of the host's branches passes (the host's git checks it out "
      "already); once the host has no such ref, the entry is compared");
}

int main(void)
{
  if (system("git --version >/dev/null 2>&1") != 0 ||
      system("python3 -c '' >/dev/null 2>&1") != 0) {
    tap_skip("needs git and python3 (the fixtures); the bats escape tests cover the rule too");
    return tap_done();
  }
  if (mkdtemp(dir) == NULL)
    return 1;
  test_loose("", "sha1");
  test_loose("--object-format=sha256", "sha256");
  test_packed("", "sha1", 20);
  test_packed("--object-format=sha256", "sha256", 32);
  test_trees_read();
  test_refused();
  test_head();
  test_reflog_lines();
  test_reflog("", "sha1");
  test_reflog("--object-format=sha256", "sha256");
  test_reflog_forged();
  {
    cleanup_free char *cmd = xfmt("rm -rf '%s'", dir);
    if (system(cmd) != 0)
      return 1;
  }
  return tap_done();
}
