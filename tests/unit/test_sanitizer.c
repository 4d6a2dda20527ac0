/* test_sanitizer.c - the sanitizer build's leak check (common/sanitizer.h): it
 * scans every module's globals but libasan's own as root regions, so a block
 * whose last pointer is lost is still a leak, and one held by a global of
 * ours or of libc (setenv's environ) is not.  Only in the ASan build. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/unit/tap.h"

#ifdef __SANITIZE_ADDRESS__
/* (volatile: a static only written would be optimised away, and its block with it) */
static char *volatile held_static;
char *held_global;

/* the exit status of a process whose leak check found a leak (ASan's exitcode) */
#define LSAN_LEAK_STATUS 1

__attribute__((noinline)) static void lose_block(void)
{
  char *volatile p = malloc(77);

  p[0] = 1;
  p = NULL;
}

static void hold_blocks(void)
{
  held_static = strdup("kept by a static");
  held_global = malloc(4096);
  memset(held_global, 'x', 4096);
  setenv("AGENTRT_TEST_SANITIZER", "kept by libc's environ", 1);
}

/* The exit status of this program run again as `test_sanitizer MODE` (a
 * fresh process: a forked child's stack still holds the parent's frames),
 * its reports on /dev/null. */
static int run_mode(const char *mode)
{
  pid_t pid = fork();
  int st;

  if (pid < 0)
    return -1;
  if (pid == 0) {
    int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);

    if (fd >= 0 && getenv("SHOW") == NULL)
      dup2(fd, 2);
    execl("/proc/self/exe", "test_sanitizer", mode, (char *)NULL);
    _exit(127);
  }
  if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
    return -1;
  return WEXITSTATUS(st);
}

int main(int argc, char **argv)
{
  int st;

  if (argc > 1) {
    hold_blocks();
    if (strcmp(argv[1], "lose") == 0)
      lose_block();
    return 0;
  }
  st = run_mode("hold");
  tap_ok(st == 0, "blocks held by a static, a global and libc's environ are not leaks (exit %d)",
         st);
  st = run_mode("lose");
  tap_ok(st == LSAN_LEAK_STATUS, "a block whose last pointer is lost is a leak (exit %d, want %d)",
         st, LSAN_LEAK_STATUS);
  return tap_done();
}
#else
int main(void)
{
  tap_skip("the sanitizer build's leak check: make check-unit SANITIZE=address,undefined");
  return tap_done();
}
#endif
