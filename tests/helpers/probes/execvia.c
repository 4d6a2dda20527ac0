/* execvia - run a program the ways an agent would to keep it out of the audit trail.
 *
 * Usage: execvia MODE PROG [ARG...]
 *   memfd    copy PROG into a memfd named "innocent" and run it by the fd
 *            (execveat(fd, "", AT_EMPTY_PATH)); the file has no path at all
 *   thread   exec PROG from a second thread: the kernel gives the exec'd program
 *            the thread group leader's pid (the thread's own pid is gone)
 *   vfork    vfork a child that execs PROG; the parent waits and exits 0
 *   comm     set its own comm (PR_SET_NAME) to "git", then exec PROG
 * argv[0] of PROG is ARG... when given, else PROG.  Exits with 127 when the
 * exec fails; used by the audit suite. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;
static char **run_argv;
static const char *run_prog;

static void *thread_exec(void *arg)
{
  (void)arg;
  execve(run_prog, run_argv, environ);
  perror("execvia: execve from thread");
  _exit(127);
}

int main(int argc, char **argv)
{
  const char *mode;

  if (argc < 3) {
    fprintf(stderr, "usage: execvia memfd|thread|vfork|comm PROG [ARG...]\n");
    return 2;
  }
  mode = argv[1];
  run_prog = argv[2];
  run_argv = argc > 3 ? &argv[3] : &argv[2];
  if (strcmp(mode, "memfd") == 0) {
    char buf[65536];
    ssize_t n;
    int in = open(run_prog, O_RDONLY | O_CLOEXEC);
    int fd = (int)syscall(SYS_memfd_create, "innocent", 0);

    if (in < 0 || fd < 0) {
      perror("execvia: open/memfd_create");
      return 1;
    }
    while ((n = read(in, buf, sizeof buf)) > 0)
      if (write(fd, buf, (size_t)n) != n) {
        perror("execvia: write");
        return 1;
      }
    close(in);
    syscall(SYS_execveat, fd, "", run_argv, environ, AT_EMPTY_PATH);
    perror("execvia: execveat");
    return 127;
  }
  if (strcmp(mode, "thread") == 0) {
    pthread_t t;

    if (pthread_create(&t, NULL, thread_exec, NULL) != 0) {
      fprintf(stderr, "execvia: pthread_create failed\n");
      return 1;
    }
    pthread_join(t, NULL);
    return 127;
  }
  if (strcmp(mode, "vfork") == 0) {
    int st;
    pid_t pid = vfork();

    if (pid == 0) {
      execve(run_prog, run_argv, environ);
      _exit(127);
    }
    if (pid < 0 || waitpid(pid, &st, 0) < 0)
      return 1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
  }
  if (strcmp(mode, "comm") == 0) {
    prctl(PR_SET_NAME, "git", 0, 0, 0);
    execve(run_prog, run_argv, environ);
    perror("execvia: execve");
    return 127;
  }
  fprintf(stderr, "execvia: unknown mode %s\n", mode);
  return 2;
}
