/* test_copyup.c - is an upper file the copy-up of its lower one
 * (monitor/monitor_copyup.c)?  On plain directories: no overlay origin, so
 * by the bytes, within the monitor's read budget. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "monitor/monitor_internal.h"
#include "tests/unit/tap.h"

enum verdict { SAME, CHANGED, UNVERIFIED };

static enum verdict verdict(int up, const char *name, int lo, bool *origins)
{
  struct stat su, sl;

  if (fstatat(up, name, &su, AT_SYMLINK_NOFOLLOW) < 0 ||
      fstatat(lo, name, &sl, AT_SYMLINK_NOFOLLOW) < 0)
    return CHANGED;
  switch (monitor_copyup_check(up, name, &su, lo, name, &sl, origins)) {
  case COPYUP_SAME:
    return SAME;
  case COPYUP_UNVERIFIED:
    return UNVERIFIED;
  default:
    return CHANGED;
  }
}

static void put(int dir, const char *name, const char *bytes)
{
  int fd = openat(dir, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const struct timespec t[2] = {{1577836800, 0}, {1577836800, 0}};

  if (fd < 0 || write(fd, bytes, strlen(bytes)) != (ssize_t)strlen(bytes) || futimens(fd, t) < 0) {
    perror(name);
    exit(1);
  }
  close(fd);
}

/* copyup-budget-false-modify: past the read budget (4,096 files at once), a
 * copy-up that changed nothing was called changed, and the trail had a
 * "modify" for each of them; it is "unverified": not compared. */
static void test_budget_spent(int up, int lo)
{
  bool origins = false;
  int n[3] = {0, 0, 0}, first_not_same = -1;

  put(up, "same", "the host's bytes\n");
  put(lo, "same", "the host's bytes\n");
  put(up, "other", "the agent's bytes\n");
  put(lo, "other", "the host's  bytes\n");
  tap_ok(verdict(up, "other", lo, &origins) == CHANGED, "other bytes of that size: changed");
  for (int i = 0; i < 6000; i++) {
    enum verdict v = verdict(up, "same", lo, &origins);
    n[v]++;
    if (v != SAME && first_not_same < 0)
      first_not_same = i;
  }
  tap_ok(n[SAME] >= 4000, "the budget compares the first thousands (%d same)", n[SAME]);
  tap_ok(n[CHANGED] == 0, "an unchanged copy-up is never called changed (%d of 6000, from %d)",
         n[CHANGED], first_not_same);
  tap_ok(n[SAME] + n[UNVERIFIED] == 6000, "past the budget: unverified (%d)", n[UNVERIFIED]);
}

/* relinked-large-copyup: a file over 64 MiB is not compared: unverified,
 * not the same (nor changed). */
static void test_large(int up, int lo)
{
  bool origins = false;
  const struct timespec t[2] = {{1577836800, 0}, {1577836800, 0}};

  for (int i = 0; i < 2; i++) {
    int fd = openat(i ? lo : up, "large", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || ftruncate(fd, (65LL << 20) + 1) < 0 || futimens(fd, t) < 0) {
      perror("large");
      exit(1);
    }
    close(fd);
  }
  tap_ok(verdict(up, "large", lo, &origins) == UNVERIFIED, "65 MiB, not compared: unverified");
}

int main(void)
{
  char tmpl[] = "/tmp/test_copyup.XXXXXX";
  char *dir = mkdtemp(tmpl);
  int up, lo;

  if (dir == NULL) {
    perror("mkdtemp");
    return 1;
  }
  {
    char p[64];
    snprintf(p, sizeof p, "%s/up", dir);
    mkdir(p, 0700);
    up = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    snprintf(p, sizeof p, "%s/lo", dir);
    mkdir(p, 0700);
    lo = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  }
  if (up < 0 || lo < 0) {
    perror(dir);
    return 1;
  }
  test_large(up, lo);
  test_budget_spent(up, lo);
  {
    char cmd[96];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
      tap_ok(false, "remove %s", dir);
  }
  return tap_done();
}
