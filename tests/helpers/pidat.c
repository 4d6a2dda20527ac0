/* pidat - a process with a chosen pid, for tests of pid reuse.
 *
 * Usage: pidat PID DIR
 * Forks a child whose pid is PID (clone3 set_tid, in our own pid
 * namespace; root only) which chroots to DIR and sleeps until killed, as
 * the unrelated process that took over a dead container's pid would.
 * Prints the child's pid once it is in DIR, then waits for it.  Exit status
 * 3 when PID is taken (EEXIST): the caller skips. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
  pid_t want, pid;
  int p[2];
  char c;

  if (argc != 3 || (want = (pid_t)atoi(argv[1])) <= 1) {
    fprintf(stderr, "usage: pidat PID DIR\n");
    return 2;
  }
  if (pipe(p) < 0)
    return 1;
  struct clone_args ca = {
      .exit_signal = SIGCHLD,
      .set_tid = (uint64_t)(uintptr_t)&want,
      .set_tid_size = 1,
  };
  pid = (pid_t)syscall(SYS_clone3, &ca, sizeof ca);
  if (pid < 0) {
    fprintf(stderr, "pidat: clone3 pid %d: %s\n", (int)want, strerror(errno));
    return errno == EEXIST ? 3 : 1;
  }
  if (pid == 0) {
    close(p[0]);
    if (chroot(argv[2]) < 0 || chdir("/") < 0)
      _exit(1);
    if (write(p[1], "x", 1) != 1)
      _exit(1);
    close(p[1]);
    for (;;)
      pause();
  }
  close(p[1]);
  if (read(p[0], &c, 1) != 1) {
    fprintf(stderr, "pidat: the child did not chroot to %s\n", argv[2]);
    waitpid(pid, NULL, 0);
    return 1;
  }
  printf("%d\n", (int)pid);
  fflush(stdout);
  waitpid(pid, NULL, 0);
  return 0;
}
