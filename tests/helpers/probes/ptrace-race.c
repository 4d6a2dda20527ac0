/* ptrace-race.c - an attacker inside the container that tries to ptrace every
 * other process it can see, as fast as it can, for a bounded time.
 *
 * Usage: ptrace-race SECONDS [READY-FILE]
 * Every pid in /proc other than itself and its ancestors is PTRACE_SEIZEd on
 * sight (again and again while it lives).  For each attempt that succeeds it
 * reads the tracee's /proc/PID/exe and prints `attached PID EXE`, then
 * detaches; the first EPERM of each pid prints `denied PID EXE`; failures are
 * counted per errno.  At the end:
 *   `seen N attempts N ok N eperm N esrch N other N`
 * With READY-FILE, that file is created once the first scan finished, so a
 * test knows the racer runs before it starts what it races.
 *
 * What must never appear is `attached` to a process whose exe is agentrt's
 * own binary (the exec helper or an init before execve): those hold host fds
 * and are non-dumpable until they exec (CVE-2016-9962).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_SKIP 64

#define MAX_DENIED 1024

static pid_t skip[MAX_SKIP];
static int n_skip;
static pid_t denied[MAX_DENIED];
static int n_denied;

static void exe_of(pid_t pid, char *exe, size_t size)
{
  char path[64];
  ssize_t n;

  snprintf(path, sizeof path, "/proc/%d/exe", pid);
  n = readlink(path, exe, size - 1);
  if (n <= 0)
    snprintf(exe, size, "?");
  else
    exe[n] = '\0';
}

static void note_denied(pid_t pid)
{
  char exe[512];

  for (int i = 0; i < n_denied; i++)
    if (denied[i] == pid)
      return;
  if (n_denied < MAX_DENIED)
    denied[n_denied++] = pid;
  exe_of(pid, exe, sizeof exe);
  printf("denied %d %s\n", pid, exe);
  fflush(stdout);
}

static double now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static pid_t parent_of(pid_t pid)
{
  char path[64], buf[512], *p;
  int fd, n;
  pid_t pp = 0;

  snprintf(path, sizeof path, "/proc/%d/stat", pid);
  fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return 0;
  n = (int)read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0)
    return 0;
  buf[n] = '\0';
  p = strrchr(buf, ')');
  if (p == NULL || sscanf(p + 2, "%*c %d", &pp) != 1)
    return 0;
  return pp;
}

static int skipped(pid_t pid)
{
  for (int i = 0; i < n_skip; i++)
    if (skip[i] == pid)
      return 1;
  return 0;
}

int main(int argc, char **argv)
{
  long attempts = 0, ok = 0, eperm = 0, esrch = 0, other = 0, seen = 0;
  double end;
  int ready = 0;

  if (argc < 2) {
    fprintf(stderr, "usage: ptrace-race SECONDS [READY-FILE]\n");
    return 2;
  }
  end = now() + atof(argv[1]);
  /* Ourselves and our ancestors (the shell that started us) are not targets. */
  for (pid_t p = getpid(); p > 0 && n_skip < MAX_SKIP; p = parent_of(p))
    skip[n_skip++] = p;
  while (now() < end) {
    DIR *d = opendir("/proc");
    struct dirent *e;

    if (d == NULL)
      return 1;
    while ((e = readdir(d)) != NULL) {
      char *endp;
      long v = strtol(e->d_name, &endp, 10);
      pid_t pid = (pid_t)v;

      if (*endp != '\0' || v <= 0 || skipped(pid))
        continue;
      seen++;
      attempts++;
      if (ptrace(PTRACE_SEIZE, pid, 0, 0) == 0) {
        char exe[512];

        int st;

        ok++;
        exe_of(pid, exe, sizeof exe);
        printf("attached %d %s\n", pid, exe);
        fflush(stdout);
        /* DETACH needs a stopped tracee; an exit while traced is ours to reap
         * (the tracee's parent would wait for it otherwise). */
        ptrace(PTRACE_INTERRUPT, pid, 0, 0);
        if (waitpid(pid, &st, __WALL) == pid && !WIFEXITED(st) && !WIFSIGNALED(st))
          ptrace(PTRACE_DETACH, pid, 0, 0);
      } else if (errno == EPERM) {
        eperm++;
        note_denied(pid);
      } else if (errno == ESRCH) {
        esrch++;
      } else {
        other++;
      }
    }
    closedir(d);
    if (!ready && argc > 2) {
      int fd = open(argv[2], O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
      if (fd >= 0)
        close(fd);
      ready = 1;
    }
  }
  printf("seen %ld attempts %ld ok %ld eperm %ld esrch %ld other %ld\n", seen, attempts, ok, eperm,
         esrch, other);
  return 0;
}
