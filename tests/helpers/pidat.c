/* pidat - a process with a chosen pid, for tests of pid reuse.
 *
 * Usage: pidat [-m] PID DIR
 * Forks a child whose pid is PID (clone3 set_tid, in our own pid
 * namespace; root only) which chroots to DIR and sleeps until killed, as
 * the unrelated process that took over a dead container's pid would.
 * -m: the child has a mount namespace of its own whose root is DIR
 * (pivot_root, as a container's), so that a test can see what a command
 * wrongly mounts into it (its mountinfo) without touching the host's.
 * Prints the child's pid once it is in DIR, then waits for it.  Exit status
 * 3 when PID is taken (EEXIST): the caller skips. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* In the child: a mount namespace of its own, rooted at dir. */
static int own_mount_ns(const char *dir)
{
  if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
      mount(dir, dir, NULL, MS_BIND | MS_REC, NULL) < 0 || chdir(dir) < 0 ||
      syscall(SYS_pivot_root, ".", ".") < 0 || umount2(".", MNT_DETACH) < 0)
    return -1;
  return 0;
}

int main(int argc, char **argv)
{
  pid_t want, pid;
  bool mntns = argc == 4 && strcmp(argv[1], "-m") == 0;
  int p[2];
  char c;

  if (mntns)
    argc--, argv++;
  if (argc != 3 || (want = (pid_t)atoi(argv[1])) <= 1) {
    fprintf(stderr, "usage: pidat [-m] PID DIR\n");
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
    if (mntns ? own_mount_ns(argv[2]) < 0 : chroot(argv[2]) < 0 || chdir("/") < 0)
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
