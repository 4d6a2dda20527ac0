/* callflood - a flood of refused system calls from several threads.
 *
 * Usage: callflood SECONDS THREADS [unshare|mount]
 * THREADS threads (<= 64) each call unshare(CLONE_NEWNS) (or mount of a filesystem type that
 * does not exist) in a loop for SECONDS (<= 60), then it prints one line:
 *   calls=N eperm=E other=O cpu_ms=C
 * N the calls made, E those that failed with EPERM, O those that did anything else (succeeded
 * or another errno), C the process's own user + system CPU time (getrusage).  Under a profile
 * that denies the call every one is a notification to the audit monitor, which answers EPERM:
 * the flood a container makes to spend its monitor's CPU (audit-evidence.bats
 * refused-call-flood-cpu).  Neither call changes anything when allowed: the mount namespace dies
 * with this process, the filesystem type is refused first. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <time.h>

#define MAX_THREADS 64

struct counts {
  long calls, eperm, other;
};

static double deadline;
static int use_mount;
static struct counts counts[MAX_THREADS];

static double now(void)
{
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *flood(void *arg)
{
  struct counts *c = arg;

  while (now() < deadline) {
    int r = use_mount ? mount("none", "/", "agentrt-no-such-fs", 0, NULL) : unshare(CLONE_NEWNS);

    c->calls++;
    if (r < 0 && errno == EPERM)
      c->eperm++;
    else
      c->other++;
  }
  return NULL;
}

static long arg(const char *s, long max)
{
  char *end = NULL;
  long v;

  errno = 0;
  v = strtol(s, &end, 10);
  if (errno || end == s || *end || v <= 0 || v > max) {
    fprintf(stderr, "callflood: bad number `%s'\n", s);
    exit(2);
  }
  return v;
}

int main(int argc, char **argv)
{
  pthread_t t[MAX_THREADS];
  struct counts sum = {0};
  struct rusage ru;
  long n;

  if (argc < 3 || argc > 4 ||
      (argc == 4 && strcmp(argv[3], "unshare") != 0 && strcmp(argv[3], "mount") != 0)) {
    fprintf(stderr, "usage: callflood SECONDS THREADS [unshare|mount]\n");
    return 2;
  }
  deadline = now() + (double)arg(argv[1], 60);
  n = arg(argv[2], MAX_THREADS);
  use_mount = argc == 4 && strcmp(argv[3], "mount") == 0;
  for (long i = 1; i < n; i++)
    if (pthread_create(&t[i], NULL, flood, &counts[i]) != 0) {
      fprintf(stderr, "callflood: pthread_create failed\n");
      return 1;
    }
  flood(&counts[0]);
  for (long i = 1; i < n; i++)
    pthread_join(t[i], NULL);
  for (long i = 0; i < n; i++) {
    sum.calls += counts[i].calls;
    sum.eperm += counts[i].eperm;
    sum.other += counts[i].other;
  }
  getrusage(RUSAGE_SELF, &ru);
  printf("calls=%ld eperm=%ld other=%ld cpu_ms=%ld\n", sum.calls, sum.eperm, sum.other,
         (long)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000 +
             (long)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000);
  return 0;
}
