/* test_ignore.c - the new files the review marks as ignored by the host's git
 * (workspace/ignore.c): patterns read as git reads them.  The expected
 * values are what `git check-ignore --no-index` answers for the same tree. */
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

static char base[] = "/tmp/agentrt-test-ignore.XXXXXX";

static void put(const char *root, const char *rel, const char *text)
{
  cleanup_free char *path = xfmt("%s/%s/%s", base, root, rel);
  cleanup_free char *cmd = xfmt("mkdir -p \"$(dirname '%s')\"", path);
  FILE *f;

  if (system(cmd) != 0 || (f = fopen(path, "w")) == NULL)
    abort();
  fputs(text, f);
  fclose(f);
}

static const struct {
  const char *path;
  bool ignored;
} cases[] = {
    {"top.txt", true},
    {"a/top.txt", false},
    {"build/x.c", true},
    {"a/build/y.c", true},
    {"x.log", true},
    {"keep.log", false},
    {"a/keep.log", false},
    {"docs/gen.md", true},
    {"docs/a/b/gen.md", true},
    {"cache/z", true},
    {"a/cache/z", true},
    {"trail.txt", true},
    {"sub/a.o", true},
    {"a/sub/a.o", true},
    {"a/q.o", true},
    {"a/x.o", false},
    {"#hash", true},
    {"hash", false},
    {"ignored-dir/y.txt", true},
    {"other.txt", false},
    {".gitignore", false},
    {"excl.tmp", true},
};

static void run(const struct ws_layers *l, struct ws_changes *c)
{
  memset(c, 0, sizeof *c);
  for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
    ws_changes_push(
        c, &(struct ws_change){
               .kind = WS_ADDED, .type = WS_T_FILE, .path = xstrdup(cases[i].path), .layer = 0});
  ws_mark_ignored(c, l);
}

int main(void)
{
  struct ws_layers l = {0};
  struct ws_changes c;
  int upper;
  bool ok = true;

  if (mkdtemp(base) == NULL)
    return 1;
  put("host", ".gitignore",
      "# comment\n\\#hash\n/top.txt\nbuild/\n*.log\n!keep.log\ndocs/**/gen.md\n**/cache\n"
      "trail.txt   \nsub/*.o\n!vendor/\nignored-dir/\n");
  put("host", "ignored-dir/.gitignore", "!y.txt\n");
  put("host", ".git/info/exclude", "*.tmp\n");
  put("upper", "a/.gitignore", "*.o\n!x.o\n");
  {
    cleanup_free char *h = xfmt("%s/host", base), *u = xfmt("%s/upper", base);
    l.hostfd = open(h, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    upper = open(u, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  }
  l.fds = &upper;
  l.n = 1;

  run(&l, &c);
  for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
    if ((c.v[i].ignored != NULL) != cases[i].ignored) {
      printf("# %s: %s\n", cases[i].path, c.v[i].ignored ? c.v[i].ignored : "(not ignored)");
      ok = false;
    }
  tap_ok(ok, "ignore: anchored, directory, negated, `**`, escaped and trailing-space patterns, "
             "nested files and info/exclude, as git check-ignore answers");
  tap_ok(c.v[0].ignored && streq(c.v[0].ignored, "`.gitignore` `/top.txt`") && c.v[14].ignored &&
             streq(c.v[14].ignored, "`a/.gitignore` `*.o`") && c.v[21].ignored &&
             streq(c.v[21].ignored, "`.git/info/exclude` `*.tmp`"),
         "ignore: the mark names the ignore file and its line");
  ws_changes_free(&c);

  /* the upper layer's a/.gitignore is the one git will read: x.o no longer re-included */
  put("upper", "a/.gitignore", "*.o\n");
  run(&l, &c);
  tap_ok(c.v[15].ignored != NULL, "ignore: the upper layer's .gitignore is read over the host's");
  ws_changes_free(&c);

  /* a .gitignore that is a symlink is not followed (git does not) */
  {
    cleanup_free char *cmd =
        xfmt("rm -f '%s/upper/a/.gitignore' && ln -s ../../host/.gitignore '%s/upper/a/.gitignore'",
             base, base);
    if (system(cmd) != 0)
      return 1;
  }
  run(&l, &c);
  tap_ok(c.v[14].ignored == NULL && c.v[15].ignored == NULL,
         "ignore: a symlinked .gitignore is not read through the link");
  ws_changes_free(&c);

  /* no added file: nothing read */
  memset(&c, 0, sizeof c);
  ws_changes_push(&c, &(struct ws_change){.kind = WS_MODIFIED,
                                          .type = WS_T_FILE,
                                          .old_type = WS_T_FILE,
                                          .path = xstrdup("x.log"),
                                          .layer = 0});
  ws_mark_ignored(&c, &l);
  tap_ok(c.v[0].ignored == NULL, "ignore: a modified file is not marked (git shows it)");
  ws_changes_free(&c);

  close(upper);
  close(l.hostfd);
  {
    cleanup_free char *cmd = xfmt("rm -rf '%s'", base);
    if (system(cmd) != 0)
      return 1;
  }
  return tap_done();
}
