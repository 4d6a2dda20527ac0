/* test_gitconfig.c - the work-tree paths named by the host repository's
 * configuration (workspace/gitconfig.c) and their protection at review
 * (ws_mark_protected). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "tests/unit/tap.h"
#include "workspace/internal.h"
#include "workspace/workspace.h"

static bool has(const struct ws_gitcfg *g, const char *path, const char *key)
{
  for (size_t i = 0; i < g->n; i++)
    if (streq(g->paths[i], path) && (key == NULL || streq(g->keys[i], key)))
      return true;
  return false;
}

static void dump(const struct ws_gitcfg *g)
{
  for (size_t i = 0; i < g->n; i++)
    printf("# %s = %s\n", g->keys[i], g->paths[i]);
}

static void test_parse(void)
{
  static const char cfg[] = "[core]\n"
                            "\trepositoryformatversion = 0\n"
                            "\thooksPath = .githooks\n"
                            "\tfsmonitor = \"./tools/fsmon --fast\" # a comment\n"
                            "\tpager = less\n"
                            "[include]\n"
                            "\tpath = ../.gitconfig\n"
                            "[includeIf \"gitdir:~/work/\"]\n"
                            "\tpath = ../conf/extra.inc\n"
                            "[filter \"lfs\"]\n"
                            "\tclean = git-lfs clean -- %f\n"
                            "\tsmudge = sh scripts/smudge.sh %f\n"
                            "[diff \"img\"]\n"
                            "\ttextconv = /srv/proj/bin/exif\n"
                            "[alias]\n"
                            "\tst = !./bin/st.sh && echo done\n"
                            "\tco = checkout\n"
                            "[remote \"origin\"]\n"
                            "\turl = https://example.com/org/repo.git\n"
                            "\tfetch = +refs/heads/*:refs/remotes/origin/*\n"
                            "[branch \"main\"]\n"
                            "\tmerge = refs/heads/main\n"
                            "[hook \"lint\"]\n"
                            "\tcommand = ./lint/run \\\n"
                            "\t  --all\n"
                            "[core] editor = ../../outside/ed\n"
                            "[Core]\n"
                            "\tHOOKSPATH = Hooks2\n";
  struct ws_gitcfg g = {0};
  cleanup_strv char **inc = NULL;
  bool ok;

  ws_gitcfg_parse(cfg, sizeof cfg - 1, ".git", "/srv/proj", &g, &inc);
  ok = has(&g, ".githooks", "core.hooksPath") && has(&g, "tools/fsmon", "core.fsmonitor") &&
       has(&g, ".gitconfig", "include.path") &&
       has(&g, "conf/extra.inc", "includeIf.gitdir:~/work/.path") &&
       has(&g, "scripts/smudge.sh", "filter.lfs.smudge") &&
       has(&g, "bin/exif", "diff.img.textconv") && has(&g, "bin/st.sh", "alias.st") &&
       has(&g, "lint/run", "hook.lint.command") && has(&g, "Hooks2", NULL);
  if (!ok)
    dump(&g);
  tap_ok(ok, "gitconfig: hooksPath, includes, filter, diff, alias and hook commands name their "
             "work-tree files (quoted, commented, continued, absolute below the host dir)");
  ok = !has(&g, "less", NULL) && !has(&g, "checkout", NULL) && !has(&g, "refs/heads/main", NULL) &&
       !has(&g, "git-lfs", NULL) && g.n == 9;
  for (size_t i = 0; i < g.n; i++)
    ok = ok && strstr(g.paths[i], "..") == NULL && g.paths[i][0] != '/';
  if (!ok)
    dump(&g);
  tap_ok(ok, "gitconfig: programs on PATH, refs, URLs and paths out of the work tree are not "
             "named");
  ok = inc != NULL && strv_len(inc) == 2 && strv_contains(inc, ".gitconfig") &&
       strv_contains(inc, "conf/extra.inc");
  tap_ok(ok, "gitconfig: the work-tree files it includes are returned to be read in turn");
  ws_gitcfg_free(&g);
  {
    /* whatever bytes: no crash, nothing out of the work tree */
    static const char junk[] = "[\n]\n[\"\n=\n[a \"b\n x = \"\\\n[core]\thookspath=\\\n";
    ws_gitcfg_parse(junk, sizeof junk - 1, "", NULL, &g, NULL);
    ws_gitcfg_free(&g);
    ws_gitcfg_parse("", 0, "", NULL, &g, NULL);
    tap_ok(g.n == 0, "gitconfig: broken and empty text parse without a crash");
    ws_gitcfg_free(&g);
  }
}

static char dir[] = "/tmp/agentrt-test-gitcfg.XXXXXX";

static void put(const char *rel, const char *text)
{
  cleanup_free char *p = xfmt("%s/%s", dir, rel);
  char *slash = strrchr(p, '/');
  FILE *f;

  *slash = '\0';
  {
    cleanup_free char *cmd = xfmt("mkdir -p '%s'", p);
    if (system(cmd) != 0)
      abort();
  }
  *slash = '/';
  f = fopen(p, "w");
  if (f == NULL)
    abort();
  fputs(text, f);
  fclose(f);
}

/* The count of paths the host dir names after the shell command cmd (freed
 * here) ran. */
static size_t named_after(char *cmd)
{
  cleanup_close int fd = -1;
  struct ws_gitcfg g;
  size_t n;

  if (system(cmd) != 0)
    abort();
  free(cmd);
  fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ws_gitcfg_read(fd, &g);
  n = g.n;
  ws_gitcfg_free(&g);
  return n;
}

static void test_marked(void)
{
  struct ws_changes c = {0};
  struct ws_layers l = {0};
  static const char *const paths[] = {".githooks/pre-commit",   ".gitconfig", "tools/fsmon",
                                      "inc2/deeper.cfg",        "src/main.c", "tools/other",
                                      ".GITHOOKS/post-checkout"};
  static const bool want[] = {true, true, true, true, false, false, true};
  bool ok = true;

  put(".git/config", "[core]\n\thooksPath = .githooks\n[include]\n\tpath = ../.gitconfig\n");
  /* the included file, read on the host, names more */
  put(".gitconfig", "[core]\n\tfsmonitor = ./tools/fsmon\n[include]\n\tpath = inc2/deeper.cfg\n");
  put("inc2/deeper.cfg", "[alias]\n\tx = !true\n");
  l.hostfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  for (size_t i = 0; i < ARRAY_SIZE(paths); i++)
    ws_changes_push(&c, &(struct ws_change){.kind = WS_MODIFIED,
                                            .type = WS_T_FILE,
                                            .old_type = WS_T_FILE,
                                            .path = xstrdup(paths[i]),
                                            .layer = -1});
  /* a rename away from a named file is its deletion */
  ws_changes_push(&c, &(struct ws_change){.kind = WS_RENAMED,
                                          .type = WS_T_FILE,
                                          .path = xstrdup("elsewhere.sh"),
                                          .old_path = xstrdup(".githooks/pre-push"),
                                          .layer = -1});
  ws_mark_protected(&c, NULL, &l);
  for (size_t i = 0; i < ARRAY_SIZE(paths); i++)
    if ((c.v[i].protect != NULL) != want[i]) {
      printf("# %s: %s\n", paths[i], c.v[i].protect ? c.v[i].protect : "(not protected)");
      ok = false;
    }
  ok = ok && c.v[ARRAY_SIZE(paths)].protect != NULL &&
       strstr(c.v[0].protect, "core.hooksPath") != NULL &&
       strstr(c.v[2].protect, "core.fsmonitor") != NULL;
  tap_ok(ok, "gitconfig: a change to a file the host's .git/config (or a file it includes) names "
             "is protected, by key; other files are not");
  ws_changes_free(&c);
  close(l.hostfd);
  tap_ok(named_after(xfmt("rm -rf '%s/.git'", dir)) == 0,
         "gitconfig: a host dir without .git/config names nothing");
  /* .git/config a symlink on the host (a work tree's own link): not followed */
  tap_ok(named_after(
             xfmt("mkdir -p '%s/.git' && ln -s ../.gitconfig '%s/.git/config'", dir, dir)) == 0,
         "gitconfig: a symlinked .git/config is not read through the link");
}

/* The operator's own files: system, global (HOME, XDG), their includes
 * outside the work tree and back into it. */
static void test_operator(void)
{
  cleanup_free char *home = xfmt("%s/home", dir), *sys = xfmt("%s/home/sysconfig", dir);
  cleanup_free char *xdg = xfmt("%s/home/xdg", dir);
  cleanup_free char *host = xfmt("%s/host", dir);
  cleanup_free char *gitdir = xfmt("%s/host/.git", dir);
  cleanup_free char *real = NULL;
  cleanup_close int fd = -1;
  struct ws_gitcfg g;
  bool hooks = false, fsmon = false, inc = false, back = false, outside = false;
  FILE *f;

  if (mkdir(home, 0700) < 0 || mkdir(host, 0700) < 0 || mkdir(gitdir, 0700) < 0 ||
      mkdir(xdg, 0700) < 0) {
    tap_ok(false, "gitconfig: the operator's files: set up");
    return;
  }
  real = realpath(host, NULL);
  put("home/.gitconfig", "[core]\n\thooksPath = .hooks\n[include]\n\tpath = ~/more.inc\n");
  put("home/more.inc", "[alias]\n\tb = !./tools/build.sh\n[include]\n\tpath = sub/deeper.inc\n");
  put("home/sub/deeper.inc", "[core]\n\tpager = ./pager.sh\n");
  put("home/xdg/git/config", "[core]\n\texcludesFile = ~/.gitignore\n");
  f = fopen(sys, "w");
  if (f != NULL) {
    fprintf(f, "[core]\n\tfsmonitor = ./fsmon.sh\n[include]\n\tpath = %s/from-system.cfg\n", real);
    fclose(f);
  }
  put("host/from-system.cfg", "[core]\n\tattributesFile = attrs/x\n");
  setenv("HOME", home, 1);
  setenv("XDG_CONFIG_HOME", xdg, 1);
  setenv("GIT_CONFIG_SYSTEM", sys, 1);
  unsetenv("GIT_CONFIG_GLOBAL");
  unsetenv("SUDO_USER");
  fd = open(host, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ws_gitcfg_read(fd, &g);
  for (size_t i = 0; i < g.n; i++) {
    hooks |= strcmp(g.paths[i], ".hooks") == 0;
    inc |= strcmp(g.paths[i], "tools/build.sh") == 0;
    back |= strcmp(g.paths[i], "pager.sh") == 0;
    fsmon |= strcmp(g.paths[i], "fsmon.sh") == 0;
    outside |= strcmp(g.paths[i], "from-system.cfg") == 0 && strcmp(g.keys[i], "include.path") == 0;
    outside |= strcmp(g.paths[i], "attrs/x") == 0;
  }
  tap_ok(hooks, "gitconfig: ~/.gitconfig's relative core.hooksPath names the work tree's .hooks");
  tap_ok(inc && back,
         "gitconfig: a global file's includes outside the work tree (~/, relative) "
         "are followed (%d %d)",
         inc, back);
  tap_ok(fsmon, "gitconfig: the system file (GIT_CONFIG_SYSTEM) is read");
  tap_ok(outside, "gitconfig: a system include into the work tree is named and read on the host");
  ws_gitcfg_free(&g);
  setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
  setenv("HOME", "/nonexistent", 1);
  unsetenv("XDG_CONFIG_HOME");
  ws_gitcfg_read(fd, &g);
  tap_ok(g.n == 0, "gitconfig: none of them read when git would not (%zu named)", g.n);
  ws_gitcfg_free(&g); /* and left so for the tests after: only the host dir's own */
}

/* The hooks of the host dir's repository and of a nested one
 * (hook-runs-worktree-file): symlinks into the work tree, a hook's words. */
static void test_hooks(void)
{
  cleanup_free char *cmd = xfmt(
      "cd '%s' && rm -rf .git .gitconfig inc2 && mkdir -p .git/hooks scripts tools sub/.git "
      "sub/hooks && "
      "ln -s ../../scripts/pre-commit .git/hooks/pre-commit && "
      "ln -s /etc/passwd .git/hooks/post-merge && ln -s ../../loop .git/hooks/pre-push && "
      "ln -s loop loop && ln -s ../../tools/x .git/hooks/x.sample && "
      "printf '#!/bin/sh\\n# see docs/hooks.md\\nexec ./tools/check-msg.sh \"$1\" && "
      "$GIT_DIR/y\\ncd frontend/ && npm test\\n' >.git/hooks/commit-msg && mkdir -p frontend && "
      "ln -s ../hooks sub/.git/hooks && printf '#!/bin/sh\\nlib/run.sh\\n' >sub/hooks/pre-commit",
      dir);
  static const char *const paths[] = {"scripts/pre-commit",
                                      "tools/check-msg.sh",
                                      "sub/hooks/pre-commit",
                                      "sub/lib/run.sh",
                                      "tools/x",
                                      "docs/hooks.md",
                                      "lib/run.sh",
                                      "sub/other.txt"};
  static const bool want[] = {true, true, true, true, false, false, false, false};
  struct ws_changes c = {0};
  struct ws_layers l = {0};
  struct ws_gitcfg g;
  bool ok;

  if (system(cmd) != 0)
    abort();
  l.hostfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ws_gitcfg_read(l.hostfd, &g);
  ok = has(&g, "scripts/pre-commit", ".git/hooks/pre-commit") &&
       has(&g, "tools/check-msg.sh", ".git/hooks/commit-msg") && !has(&g, "etc/passwd", NULL) &&
       !has(&g, "loop", NULL) && !has(&g, "tools/x", NULL) && !has(&g, "docs/hooks.md", NULL) &&
       !has(&g, "frontend", NULL);
  if (!ok)
    dump(&g);
  tap_ok(ok, "gitconfig: a hook symlinked into the work tree and the words of a hook's text are "
             "named; a link outside, a loop, a .sample, a comment and a directory are not");
  ws_gitcfg_free(&g);
  for (size_t i = 0; i < ARRAY_SIZE(paths); i++)
    ws_changes_push(&c, &(struct ws_change){.kind = WS_MODIFIED,
                                            .type = WS_T_FILE,
                                            .old_type = WS_T_FILE,
                                            .path = xstrdup(paths[i]),
                                            .layer = -1});
  ws_mark_protected(&c, NULL, &l);
  ok = true;
  for (size_t i = 0; i < ARRAY_SIZE(paths); i++)
    if ((c.v[i].protect != NULL) != want[i]) {
      printf("# %s: %s\n", paths[i], c.v[i].protect ? c.v[i].protect : "(not protected)");
      ok = false;
    }
  ok = ok && strstr(c.v[2].protect, "`sub/.git/hooks`") != NULL &&
       strstr(c.v[3].protect, "`sub/.git/hooks/pre-commit`") != NULL;
  tap_ok(ok, "gitconfig: a nested repository's .git/hooks symlinked to a tracked directory "
             "protects it and what its hooks run, by the hook's path");
  ws_changes_free(&c);
  close(l.hostfd);
}

int main(void)
{
  test_parse();
  if (mkdtemp(dir) != NULL) {
    test_operator();
    test_marked();
    test_hooks();
    cleanup_free char *cmd = xfmt("rm -rf '%s'", dir);
    if (system(cmd) != 0)
      return 1;
  }
  return tap_done();
}
