/* execfail - exec opens that run nothing: one process execs COUNT files the kernel cannot run.
 *
 * Usage: execfail DIR COUNT
 * Makes DIR/x (executable, neither ELF nor a script), COUNT hard links DIR/0 .. DIR/COUNT-1 to
 * it, then execve()s each in turn from this one process (each fails: ENOEXEC), and prints
 * "failed N other M" (M: an exec that did anything else).  The kernel opens each file for
 * the exec before it finds no format for it: one FAN_OPEN_EXEC event each, of different names
 * (no merging), with no fork, exec or exit event on the proc connector.  So the exec-opens
 * queue of an audit monitor fills alone (audit-evidence.bats exec-opens-overflow). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv)
{
  char path[4096], target[4096];
  char *const args[] = {"x", NULL}, *const env[] = {NULL};
  long count, failed = 0, other = 0;
  int fd;

  if (argc != 3 || (count = strtol(argv[2], NULL, 10)) <= 0 || count > 100000) {
    fprintf(stderr, "usage: execfail DIR COUNT (<= 100000)\n");
    return 2;
  }
  if (mkdir(argv[1], 0755) < 0 && errno != EEXIST) {
    perror("mkdir");
    return 1;
  }
  snprintf(target, sizeof target, "%s/x", argv[1]);
  fd = open(target, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
  if (fd < 0 || write(fd, "\1\2\3\4 not a program\n", 20) != 20 || close(fd) < 0) {
    perror("write");
    return 1;
  }
  for (long i = 0; i < count; i++) {
    snprintf(path, sizeof path, "%s/%ld", argv[1], i);
    if (link(target, path) < 0 && errno != EEXIST) {
      perror("link");
      return 1;
    }
  }
  for (long i = 0; i < count; i++) {
    snprintf(path, sizeof path, "%s/%ld", argv[1], i);
    execve(path, args, env);
    if (errno == ENOEXEC)
      failed++;
    else
      other++;
  }
  printf("failed %ld other %ld\n", failed, other);
  return 0;
}
