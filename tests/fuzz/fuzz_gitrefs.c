/* fuzz_gitrefs.c - libFuzzer target for the review's reading of the ref
 * files the agent writes in a `.git` (workspace/gitrefs.c,
 * ws_git_ref_reason): loose refs, HEAD and its symrefs, packed-refs (with
 * peeled lines), FETCH_HEAD and reflogs, against the host's HEAD,
 * packed-refs, a loose branch and FETCH_HEAD.
 *
 * The input: a byte choosing the agent's file (and whether a loose branch
 * was deleted instead), then up to six texts ended by a NUL byte: that
 * file, the agent's packed-refs, the host's HEAD, packed-refs,
 * refs/heads/main and FETCH_HEAD (an empty text: no such file).  The files
 * are written into a directory of our own in /dev/shm, made once and
 * removed at exit; the repository holds no objects (fuzz_gitobjects reads
 * those).
 *
 * Invariants: no crash and no leak; a reason is a non-empty line without
 * C0 control characters or DEL (it goes to the operator's terminal); a
 * second review, through the same cache, gives the same reason.
 */
#include <errno.h>
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

static char base[] = "/dev/shm/agentrt-fuzz-gitrefs.XXXXXX";
static int hostfd = -1, upperfd = -1;
static char *const patterns[] = {".envrc", ".vscode/", NULL};

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

static bool no_gitdir(void *ctx, const char *path, size_t len)
{
  (void)ctx;
  (void)path;
  (void)len;
  return false;
}

static void mkdirs(int fd, const char *const *dirs)
{
  for (; *dirs; dirs++)
    if (mkdirat(fd, *dirs, 0700) < 0)
      abort();
}

static void setup(void)
{
  static const char *const dirs[] = {
      ".git",      ".git/refs",      ".git/refs/heads",      ".git/refs/tags", ".git/refs/notes",
      ".git/logs", ".git/logs/refs", ".git/logs/refs/heads", ".git/objects",   NULL};
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
  if (hostfd < 0 || upperfd < 0)
    abort();
  mkdirs(hostfd, dirs);
  mkdirs(upperfd, dirs);
}

/* rel below dirfd holds text (n bytes), or is not there (n 0, unless
 * empty: then an empty file). */
static void put(int dirfd, const char *rel, const char *text, size_t n, bool empty)
{
  int fd;

  if (n == 0 && !empty) {
    if (unlinkat(dirfd, rel, 0) < 0 && errno != ENOENT)
      abort();
    return;
  }
  fd = openat(dirfd, rel, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0 || (n && write(fd, text, n) != (ssize_t)n))
    abort();
  close(fd);
}

static void check_reason(const char *why)
{
  if (why == NULL)
    return;
  if (*why == '\0')
    fuzz_fail("gitrefs", "an empty reason");
  for (const unsigned char *s = (const unsigned char *)why; *s; s++)
    if (*s < 0x20 || *s == 0x7f)
      fuzz_fail("gitrefs", "a reason with a control character");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static const char *const rels[] = {
      "HEAD",         "ORIG_HEAD",          "FETCH_HEAD", "packed-refs", "refs/heads/main",
      "refs/tags/v1", "refs/notes/commits", "refs/stash", "logs/HEAD",   "logs/refs/heads/main",
  };
  static const char *const host_files[] = {"HEAD", "packed-refs", "refs/heads/main", "FETCH_HEAD"};
  const char *s, *end = (const char *)data + size, *texts[6];
  size_t lens[6];
  struct ws_layers l = {0};
  struct ws_gitrefs *cache = NULL;
  struct ws_gitdir_probe probe = {no_gitdir, NULL};
  struct ws_change ch = {0};
  cleanup_free char *path = NULL, *why = NULL, *why2 = NULL;
  const char *rel;
  bool deleted;

  if (size < 1)
    return 0;
  if (hostfd < 0)
    setup();
  rel = rels[data[0] % ARRAY_SIZE(rels)];
  deleted = (data[0] / ARRAY_SIZE(rels)) % 4 == 3 && strncmp(rel, "refs/", 5) == 0;
  s = (const char *)data + 1;
  for (int i = 0; i < 6; i++) {
    const char *z = memchr(s, '\0', (size_t)(end - s));
    lens[i] = z ? (size_t)(z - s) : (size_t)(end - s);
    texts[i] = s;
    s += z ? lens[i] + 1 : lens[i];
  }
  /* the agent's packed-refs first: the file chosen may be packed-refs */
  put(upperfd, ".git/packed-refs", texts[1], lens[1], false);
  {
    cleanup_free char *p = xfmt(".git/%s", rel);
    put(upperfd, p, texts[0], deleted ? 0 : lens[0], !deleted);
  }
  for (int i = 0; i < 4; i++) {
    cleanup_free char *p = xfmt(".git/%s", host_files[i]);
    put(hostfd, p, texts[2 + i], lens[2 + i], false);
  }
  path = xfmt(".git/%s", rel);
  ch.kind = deleted ? WS_DELETED : WS_MODIFIED;
  ch.type = WS_T_FILE;
  ch.old_type = WS_T_FILE;
  ch.path = path;
  ch.layer = deleted ? -1 : 0;
  l.fds = &upperfd;
  l.n = 1;
  l.hostfd = hostfd;
  why = ws_git_ref_reason(&cache, &ch, &l, patterns, &probe);
  check_reason(why);
  why2 = ws_git_ref_reason(&cache, &ch, &l, patterns, &probe);
  if ((why == NULL) != (why2 == NULL) || (why && strcmp(why, why2) != 0))
    fuzz_fail("gitrefs", "a second review gives another reason");
  ws_gitrefs_free(cache);
  /* the next input's files start from none */
  {
    cleanup_free char *p = xfmt(".git/%s", rel);
    put(upperfd, p, NULL, 0, false);
  }
  return 0;
}
