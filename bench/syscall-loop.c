/* syscall-loop - the per-call cost of a system call inside a container, for
 * bench/audit.sh's "refused syscalls" row.
 *
 * Usage: syscall-loop allowed|denied N
 * Makes N calls and prints the mean in ns: `allowed` is getppid (the
 * profile's filter lets it through, listener or not), `denied` is
 * unshare(CLONE_NEWUSER), which the agent profile refuses (with the trail on
 * through the monitor's seccomp listener, with it off by the errno filter).
 * Exit status 1 when a denied call succeeded. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
  struct timespec a, b;
  long n, bad = 0;
  int denied;

  if (argc != 3 || (n = strtol(argv[2], NULL, 10)) <= 0 || n > 10000000) {
    fprintf(stderr, "usage: syscall-loop allowed|denied N\n");
    return 2;
  }
  denied = strcmp(argv[1], "denied") == 0;
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (long i = 0; i < n; i++) {
    if (denied)
      bad += syscall(SYS_unshare, CLONE_NEWUSER) == 0;
    else
      syscall(SYS_getppid);
  }
  clock_gettime(CLOCK_MONOTONIC, &b);
  printf("%.0f\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / (double)n);
  return bad ? 1 : 0;
}
