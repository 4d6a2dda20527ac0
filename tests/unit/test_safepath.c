/* test_safepath.c - in-root resolution (os/safepath.c) on a tree of
 * hostile symlinks in a temp dir; needs no privileges.  Every case is run
 * twice: with openat2, and in a child where a seccomp filter makes openat2
 * fail with ENOSYS so that the userspace walker is used. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/util.h"
#include "os/safepath.h"
#include "tests/unit/tap.h"

static char base[256];         /* temp dir */
static char root[PATH_MAX];    /* base/root: the "rootfs" */
static char outside[PATH_MAX]; /* base/outside: must never be touched */
static const char *mode_name = "openat2";

static void mk(const char *rel)
{
  char p[PATH_MAX * 2];
  snprintf(p, sizeof p, "%s/%s", root, rel);
  mkdir(p, 0755);
}

static void ln(const char *target, const char *rel)
{
  char p[PATH_MAX * 2];
  snprintf(p, sizeof p, "%s/%s", root, rel);
  if (symlink(target, p) < 0)
    perror(p);
}

static void setup_tree(void)
{
  char p[PATH_MAX * 2];
  int fd;

  snprintf(base, sizeof base, "/tmp/agentrt-safepath-test.XXXXXX");
  if (mkdtemp(base) == NULL)
    exit(1);
  snprintf(root, sizeof root, "%s/root", base);
  snprintf(outside, sizeof outside, "%s/outside", base);
  mkdir(root, 0755);
  mkdir(outside, 0755);
  mk("etc");
  mk("real");
  snprintf(p, sizeof p, "%s/etc/passwd", root);
  fd = open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
  if (fd >= 0)
    close(fd);
  snprintf(p, sizeof p, "%s/etc/passwd", outside);
  fd = open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
  if (fd >= 0)
    close(fd);
  ln(outside, "abs");            /* absolute: means root/<outside path> */
  ln("../../../../../..", "up"); /* climbs: must stop at the root */
  ln("/real", "rel");
  ln("loop2", "loop1");
  ln("loop1", "loop2");
  ln("../outside-new/x", "dangling");
  ln("/etc", "etclink");
}

/* Is fd the file at root/<rel> (same inode)? */
static bool same(int fd, const char *rel)
{
  char p[PATH_MAX * 2];
  struct stat a, b;

  snprintf(p, sizeof p, "%s/%s", root, rel);
  return fd >= 0 && fstat(fd, &a) == 0 && lstat(p, &b) == 0 && a.st_ino == b.st_ino &&
         a.st_dev == b.st_dev;
}

static bool exists_outside(const char *rel)
{
  char p[PATH_MAX * 2];
  snprintf(p, sizeof p, "%s/%s", base, rel);
  return access(p, F_OK) == 0;
}

static void run_cases(void)
{
  struct error err = {0};
  cleanup_close int rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
  int fd;

  fd = safe_openat(rootfd, "/etc/passwd", O_RDONLY, 0, &err);
  tap_ok(same(fd, "etc/passwd"), "%s: plain path", mode_name);
  close(fd);
  fd = safe_openat(rootfd, "/up/etc/passwd", O_RDONLY, 0, &err);
  tap_ok(same(fd, "etc/passwd"), "%s: ../ symlink stops at the root (%s)", mode_name, err.msg);
  close(fd);
  fd = safe_openat(rootfd, "/../../etc/passwd", O_PATH, 0, &err);
  tap_ok(same(fd, "etc/passwd"), "%s: leading .. stays at the root", mode_name);
  close(fd);
  fd = safe_openat(rootfd, "/abs/etc/passwd", O_RDONLY, 0, &err);
  tap_ok(fd < 0 && err.code == ENOENT, "%s: absolute symlink resolved inside the root (%s)",
         mode_name, err.msg);
  if (fd >= 0)
    close(fd);
  fd = safe_openat(rootfd, "/etclink", O_PATH | O_NOFOLLOW, 0, &err);
  tap_ok(same(fd, "etclink"), "%s: O_NOFOLLOW gives the link itself", mode_name);
  close(fd);
  fd = safe_openat(rootfd, "/loop1/x", O_PATH, 0, &err);
  tap_ok(fd < 0 && err.code == ELOOP, "%s: symlink loop is ELOOP (%s)", mode_name, err.msg);
  fd = safe_openat(rootfd, "/rel", O_RDONLY | O_DIRECTORY, 0, &err);
  tap_ok(same(fd, "real"), "%s: directory through a symlink, opened for real", mode_name);
  close(fd);
  fd = safe_openat(rootfd, "/etclink/new", O_CREAT | O_WRONLY, 0600, &err);
  tap_ok(same(fd, "etc/new"), "%s: O_CREAT in a symlinked parent stays inside", mode_name);
  close(fd);
  fd = safe_openat(rootfd, "/etclink", O_CREAT | O_WRONLY, 0600, &err);
  tap_ok(fd < 0, "%s: O_CREAT on a symlink refused", mode_name);
}

static void walk_cases(void)
{
  struct error err = {0};
  cleanup_close int rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
  char rel[PATH_MAX * 2];
  struct stat st;
  int fd;

  fd = safe_mkdir_all(rootfd, "/dangling/y/z", 0755, &err);
  snprintf(rel, sizeof rel, "outside-new/x/y/z");
  tap_ok(same(fd, rel) && !exists_outside("outside-new"),
         "mkdir_all: dangling ../ symlink creates inside the root (%s)", err.msg);
  close(fd);
  snprintf(rel, sizeof rel, "%s/a/b", outside);
  fd = safe_mkdir_all(rootfd, "/abs/a/b", 0755, &err);
  snprintf(rel, sizeof rel, "%s/a/b", outside + 1);
  tap_ok(same(fd, rel) && !exists_outside("outside/a"),
         "mkdir_all: absolute symlink to a host path creates inside the root");
  close(fd);
  fd = safe_mount_target(rootfd, "/up/file-target", false, &err);
  tap_ok(same(fd, "file-target") && fstat(fd, &st) == 0 && S_ISREG(st.st_mode),
         "mount_target: empty file created for a file bind");
  close(fd);
  fd = safe_walk(rootfd, "/etclink", SAFE_MKDIR, true, &err);
  tap_ok(same(fd, "etclink") && fstat(fd, &st) == 0 && S_ISLNK(st.st_mode),
         "walk: nofollow_last returns the symlink so callers can refuse it");
  close(fd);
  fd = safe_mkdir_all(rootfd, "/etc/passwd/x", 0755, &err);
  tap_ok(fd < 0 && err.code == ENOTDIR, "mkdir_all: through a file is ENOTDIR");
}

/* Make openat2 fail with ENOSYS in this process (like an old kernel or a
 * container runtime's seccomp profile). */
static bool block_openat2(void)
{
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  bool ok = ctx != NULL &&
            seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(openat2), 0) == 0 &&
            seccomp_load(ctx) == 0;

  seccomp_release(ctx);
  return ok;
}

static void cleanup_tree(void)
{
  char cmd[PATH_MAX + 32];
  int r;

  snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
  r = system(cmd);
  (void)r;
}

int main(void)
{
  pid_t pid;
  int st = 1;

  setup_tree();
  run_cases();
  walk_cases();
  fflush(stdout);
  pid = fork();
  if (pid == 0) {
    mode_name = "walker";
    if (!tap_ok(block_openat2(), "walker: seccomp filter for openat2 loaded"))
      _exit(1);
    run_cases();
    _exit(tap_done());
  }
  if (pid > 0)
    waitpid(pid, &st, 0);
  tap_ok(pid > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "walker run passed");
  cleanup_tree();
  return tap_done();
}
