/* fuzz_ignore.c - libFuzzer target for the review's reading of the ignore
 * files the agent writes (workspace/ignore.c, ws_mark_ignored): the
 * `.gitignore` patterns and what they are matched against.
 *
 * The input: up to three texts ended by a NUL byte (the top `.gitignore`, in
 * the upper layer; `a/.gitignore`, in the host dir; the host's
 * `.git/info/exclude`), then the new files' paths, one a line (those a scan
 * could give: no empty, `.` or `..` component, at most MAX_PATHS of at most
 * 512 bytes).  The files are written into a directory of our own in
 * /dev/shm, made once and removed at exit.
 *
 * Invariants: no crash and no leak; the work spent is within
 * WS_IGNORE_MAX_WORK; a mark names one of the three files and a line that
 * file holds, or says it was not read whole; a path below `.git` is not
 * marked; a second review of the same changes gives the same marks.
 */
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "tests/fuzz/fuzz_common.h"
#include "workspace/internal.h"
#include "workspace/workspace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_PATHS 64

static char base[] = "/dev/shm/agentrt-fuzz-ignore.XXXXXX";
static int hostfd = -1, upperfd = -1;

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
  (void)st;
  (void)flag;
  (void)ftw;
  return remove(path);
}

static void cleanup(void)
{
  nftw(base, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void setup(void)
{
  cleanup_free char *host = NULL, *upper = NULL;

  if (mkdtemp(base) == NULL)
    abort();
  atexit(cleanup);
  host = xfmt("%s/host", base);
  upper = xfmt("%s/upper", base);
  if (mkdir(host, 0700) < 0 || mkdir(upper, 0700) < 0)
    abort();
  hostfd = open(host, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  upperfd = open(upper, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (hostfd < 0 || upperfd < 0 || mkdirat(hostfd, "a", 0700) < 0 ||
      mkdirat(hostfd, ".git", 0700) < 0 || mkdirat(hostfd, ".git/info", 0700) < 0)
    abort();
}

static void put(int dirfd, const char *rel, const char *text, size_t n)
{
  int fd = openat(dirfd, rel, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

  if (fd < 0 || (n && write(fd, text, n) != (ssize_t)n))
    abort();
  close(fd);
}

/* Could a scan give path (a relative path of non-empty components, none `.`
 * or `..`)? */
static bool path_ok(const char *p, size_t n)
{
  if (n == 0 || n > 512 || memchr(p, '\0', n))
    return false;
  for (size_t i = 0; i < n;) {
    size_t c = 0;
    while (i + c < n && p[i + c] != '/')
      c++;
    if (c == 0 || (c == 1 && p[i] == '.') || (c == 2 && p[i] == '.' && p[i + 1] == '.'))
      return false;
    i += c + 1;
    if (i == n)
      return false; /* a trailing `/` */
  }
  return true;
}

/* Is the mark's pattern (quoted as diff quotes a path) the beginning of a
 * line of text, as written (the trailing CR and spaces cut)? */
static bool line_begins(const char *text, const char *pat, size_t n)
{
  bool quoted = n >= 2 && pat[0] == '"' && pat[n - 1] == '"';

  for (const char *l = text; l != NULL; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
    cleanup_free char *one = xstrndup(l, strcspn(l, "\n"));
    cleanup_free char *q = ws_quote_path(one);
    if (quoted ? strncmp(q, pat, n - 1) == 0 : strncmp(one, pat, n) == 0)
      return true;
  }
  return false;
}

/* Does a mark name one of the files and one of its lines (as written)? */
static bool mark_ok(const char *why, const char *const names[3], char *const texts[3])
{
  if (strstr(why, "not read whole") != NULL)
    return true;
  for (int i = 0; i < 3; i++) {
    size_t nl = strlen(names[i]);
    const char *line;
    size_t ll;
    if (why[0] != '`' || strncmp(why + 1, names[i], nl) != 0 || strncmp(why + 1 + nl, "` `", 3))
      continue;
    line = why + nl + 4;
    ll = strlen(line);
    if (ll < 1 || line[ll - 1] != '`')
      return false;
    return line_begins(texts[i], line, ll - 1);
  }
  return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static const char *const names[3] = {".gitignore", "a/.gitignore", ".git/info/exclude"};
  const char *s = (const char *)data, *end = s + size;
  char *texts[3] = {NULL, NULL, NULL};
  struct ws_changes c = {0}, again = {0};
  struct ws_layers l = {0};
  size_t work;

  if (hostfd < 0)
    setup();
  for (int i = 0; i < 3; i++) {
    const char *z = memchr(s, '\0', (size_t)(end - s));
    size_t n = z ? (size_t)(z - s) : (size_t)(end - s);
    texts[i] = xstrndup(s, n);
    s += z ? n + 1 : n;
  }
  put(upperfd, names[0], texts[0], strlen(texts[0]));
  put(hostfd, names[1], texts[1], strlen(texts[1]));
  put(hostfd, names[2], texts[2], strlen(texts[2]));
  while (s < end && c.n < MAX_PATHS) {
    const char *nl = memchr(s, '\n', (size_t)(end - s));
    size_t n = nl ? (size_t)(nl - s) : (size_t)(end - s);
    if (path_ok(s, n))
      for (int k = 0; k < 2; k++)
        ws_changes_push(k ? &again : &c, &(struct ws_change){.kind = WS_ADDED,
                                                             .type = WS_T_FILE,
                                                             .path = xstrndup(s, n),
                                                             .layer = 0});
    s += n + 1;
  }
  l.fds = &upperfd;
  l.n = 1;
  l.hostfd = hostfd;
  work = ws_mark_ignored(&c, &l);
  if (work > WS_IGNORE_MAX_WORK)
    fuzz_fail("ignore", "more work than the budget");
  ws_mark_ignored(&again, &l);
  for (size_t i = 0; i < c.n; i++) {
    const char *why = c.v[i].ignored, *w2 = again.v[i].ignored;
    if ((why == NULL) != (w2 == NULL) || (why && strcmp(why, w2) != 0))
      fuzz_fail("ignore", "a second review marks otherwise");
    if (why == NULL)
      continue;
    if (!mark_ok(why, names, texts))
      fuzz_fail("ignore", why);
    if (strncmp(c.v[i].path, ".git/", 5) == 0 || strstr(c.v[i].path, "/.git/") != NULL)
      fuzz_fail("ignore", "a path below .git marked");
  }
  ws_changes_free(&c);
  ws_changes_free(&again);
  for (int i = 0; i < 3; i++)
    free(texts[i]);
  return 0;
}
