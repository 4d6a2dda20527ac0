/* test_ignore.c - the new files the review marks as ignored by the host's git
 * (workspace/ignore.c): patterns read as git reads them.  The expected
 * values are what `git check-ignore --no-index` answers for the same tree. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
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

/* The review of c in a child (120 s; with limit_data 1 GiB of data, not
 * under ASan, whose shadow would count): got[0] the files marked, got[1]
 * those marked as not read, got[2] the matching work.  Returns the child's
 * wait status. */
static int review_in_child(struct ws_changes *c, const struct ws_layers *l, bool limit_data,
                           size_t got[3])
{
  int p[2], status = 0;
  pid_t pid;

  got[0] = got[1] = got[2] = 0;
  if (pipe(p) < 0 || (pid = fork()) < 0)
    abort();
  if (pid == 0) {
#if !defined(__SANITIZE_ADDRESS__)
    if (limit_data) {
      struct rlimit rl = {1UL << 30, 1UL << 30};
      setrlimit(RLIMIT_DATA, &rl);
    }
#endif
    alarm(120);
    close(p[0]);
    got[2] = ws_mark_ignored(c, l);
    for (size_t i = 0; i < c->n; i++)
      if (c->v[i].ignored) {
        got[0]++;
        got[1] += strstr(c->v[i].ignored, "not read") != NULL;
      }
    if (write(p[1], got, 3 * sizeof *got) != (ssize_t)(3 * sizeof *got))
      _exit(1);
    _exit(0);
  }
  close(p[1]);
  if (read(p[0], got, 3 * sizeof *got) != (ssize_t)(3 * sizeof *got))
    got[0] = got[1] = got[2] = 0;
  close(p[0]);
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status))
    printf("# the review was killed by signal %d\n", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  return status;
}

/* ignore-dos: an agent's .gitignore of 1 MiB of one-character lines,
 * hardlinked into DOS_DIRS directories (one file on the disk), each holding
 * DOS_FILES new files.  Read without limits, that is DOS_DIRS + 1 copies of
 * half a million patterns (gigabytes) and every new file tested against two
 * of them (billions of fnmatch calls).  Run in a child with 1 GiB of data
 * (not under ASan, whose shadow would count) and 120 s, much more than the
 * review needs: what the child writes back is how many new files were
 * marked and how many of those marks say the ignore files were not read. */
#define DOS_DIRS 64
#define DOS_FILES 100

static void dos(int upper, const struct ws_layers *l)
{
  struct ws_changes c = {0};
  cleanup_free char *big = xmalloc((1 << 20) + 1);
  int status;
  size_t got[3] = {0, 0, 0};

  for (size_t i = 0; i < 1 << 20; i += 2) {
    big[i] = (char)('b' + (i / 2) % 20);
    big[i + 1] = '\n';
  }
  big[1 << 20] = '\0';
  if (mkdirat(upper, "dos", 0755) < 0)
    abort();
  put("upper", "dos/.gitignore", big);
  for (int d = 0; d < DOS_DIRS; d++) {
    cleanup_free char *dir = xfmt("dos/d%d", d), *link = xfmt("%s/.gitignore", dir);
    if (mkdirat(upper, dir, 0755) < 0 || linkat(upper, "dos/.gitignore", upper, link, 0) < 0)
      abort();
    for (int f = 0; f < DOS_FILES; f++)
      ws_changes_push(&c, &(struct ws_change){.kind = WS_ADDED,
                                              .type = WS_T_FILE,
                                              .path = xfmt("%s/a%d.txt", dir, f),
                                              .layer = 0});
  }
  status = review_in_child(&c, l, true, got);
  tap_ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
         "ignore-dos: the review of %d hardlinked 1 MiB .gitignore files and %d new files ends "
         "within 1 GiB and 120 s",
         DOS_DIRS, DOS_DIRS * DOS_FILES);
  printf("# %zu marked, %zu as not read\n", got[0], got[1]);
  tap_ok(got[0] == c.n && got[1] > 0,
         "ignore-dos: past the review's limits the new files are marked (not left unmarked)");
  ws_changes_free(&c);
}

/* ignore-work: one .gitignore of 90,000 lines (within the limits on
 * reading) above 6,400 new files: 576 million pattern tests unbounded.  The
 * review stops at WS_IGNORE_MAX_WORK and marks the files it did not decide;
 * the child reports the work spent and the marks (as in dos). */
static void work(int upper, const struct ws_layers *l)
{
  struct ws_changes c = {0};
  FILE *gi;
  int status;
  size_t got[3] = {0, 0, 0};

  if (mkdirat(upper, "work", 0755) < 0)
    abort();
  {
    cleanup_free char *path = xfmt("%s/upper/work/.gitignore", base);
    if ((gi = fopen(path, "w")) == NULL)
      abort();
    for (int i = 0; i < 90000; i++)
      fprintf(gi, "b%d\n", i);
    fclose(gi);
  }
  for (int d = 0; d < DOS_DIRS; d++)
    for (int f = 0; f < DOS_FILES; f++)
      ws_changes_push(&c, &(struct ws_change){.kind = WS_ADDED,
                                              .type = WS_T_FILE,
                                              .path = xfmt("work/d%d/a%d.txt", d, f),
                                              .layer = 0});
  status = review_in_child(&c, l, false, got);
  printf("# work %zu, %zu marked, %zu as not read\n", got[2], got[0], got[1]);
  tap_ok(WIFEXITED(status) && WEXITSTATUS(status) == 0 && got[2] == WS_IGNORE_MAX_WORK,
         "ignore-work: 6,400 new files below a 90,000-line .gitignore: the matching stops at "
         "its budget (%zu pattern tests)",
         WS_IGNORE_MAX_WORK);
  tap_ok(got[0] > 0 && got[0] == got[1] && got[0] < c.n,
         "ignore-work: the files decided before the budget ran out are not marked, those after "
         "are, as not read");
  ws_changes_free(&c);
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

  dos(upper, &l);
  work(upper, &l);

  close(upper);
  close(l.hostfd);
  {
    cleanup_free char *cmd = xfmt("rm -rf '%s'", base);
    if (system(cmd) != 0)
      return 1;
  }
  return tap_done();
}
