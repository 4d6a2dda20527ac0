/* forkstorm - a host process that forks children which exit at once.
 *
 * Usage: forkstorm SECONDS RATE
 * Forks (vfork) children that _exit(0) at once, each reaped before the next, at most RATE a
 * second (<= 1000000) for SECONDS (<= 600), then prints how many it forked.  Each is a fork and
 * an exit event on the proc connector that every audit monitor on the host reads: the storm an
 * agent's neighbour (a build, a fork-heavy test) makes. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* one child, gone at once (vfork in a function of its own: nothing of the caller's is live
 * across it) */
static __attribute__((noinline)) pid_t fork_one(void)
{
  pid_t p = vfork();

  if (p == 0)
    _exit(0);
  return p;
}

static long arg(const char *s, long max)
{
  char *end = NULL;
  long v;

  errno = 0;
  v = strtol(s, &end, 10);
  if (errno || end == s || *end || v <= 0 || v > max) {
    fprintf(stderr, "forkstorm: bad number `%s'\n", s);
    exit(2);
  }
  return v;
}

int main(int argc, char **argv)
{
  long seconds, rate, n = 0;
  double start, end;

  if (argc != 3) {
    fprintf(stderr, "usage: forkstorm SECONDS RATE\n");
    return 2;
  }
  seconds = arg(argv[1], 600);
  rate = arg(argv[2], 1000000);
  start = now();
  end = start + (double)seconds;
  for (double t = start; t < end; t = now()) {
    /* ahead of the rate: wait for it */
    double due = start + (double)n / (double)rate;
    if (due > t) {
      struct timespec ts = {0, (long)((due - t) * 1e9)};
      nanosleep(&ts, NULL);
    }
    for (int i = 0; i < 50; i++, n++) {
      pid_t p = fork_one();
      if (p < 0) {
        perror("forkstorm: vfork");
        return 1;
      }
      if (waitpid(p, NULL, 0) < 0) {
        perror("forkstorm: waitpid");
        return 1;
      }
    }
  }
  printf("%ld\n", n);
  return 0;
}
