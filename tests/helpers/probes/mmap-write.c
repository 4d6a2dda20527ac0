/* mmap-write - change a file through a shared mapping only.
 *
 * Usage: mmap-write FILE TEXT [SECONDS]
 *        mmap-write FILE --fill
 * Opens FILE read-write (no write(2), no truncate), maps its first page
 * shared, copies TEXT over its first bytes (at most the file's size), syncs,
 * unmaps and closes.  With SECONDS, the descriptor is closed first and TEXT
 * copied that long after (a mapping written after its file's close).
 * fanotify sees no modify for such a change; used by the audit suite.
 * --fill writes a byte into every page of the whole file (a sparse one gets
 * its blocks by page faults only): on a full file system the kernel sends
 * SIGBUS, which ends the probe (subagents.bats, subagent-size-bypass). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv)
{
  struct stat st;
  size_t n;
  char *p;
  int fd;

  if (argc != 3 && argc != 4) {
    fprintf(stderr, "usage: mmap-write FILE TEXT [SECONDS]\n");
    return 2;
  }
  fd = open(argv[1], O_RDWR | O_CLOEXEC);
  if (fd < 0 || fstat(fd, &st) < 0 || st.st_size == 0) {
    perror("mmap-write: open");
    return 1;
  }
  if (argc == 3 && strcmp(argv[2], "--fill") == 0) {
    long pg = sysconf(_SC_PAGESIZE);
    p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
      perror("mmap-write: mmap");
      return 1;
    }
    for (off_t o = 0; o < st.st_size; o += pg)
      p[o] = 'x';
    if (msync(p, (size_t)st.st_size, MS_SYNC) < 0) {
      perror("mmap-write: msync");
      return 1;
    }
    return 0;
  }
  n = strlen(argv[2]) < (size_t)st.st_size ? strlen(argv[2]) : (size_t)st.st_size;
  p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    perror("mmap-write: mmap");
    return 1;
  }
  if (argc == 4) {
    if (close(fd) < 0) {
      perror("mmap-write: close");
      return 1;
    }
    fd = -1;
    sleep((unsigned)atoi(argv[3]));
  }
  memcpy(p, argv[2], n);
  if (msync(p, (size_t)st.st_size, MS_SYNC) < 0 || munmap(p, (size_t)st.st_size) < 0 ||
      (fd >= 0 && close(fd) < 0)) {
    perror("mmap-write");
    return 1;
  }
  return 0;
}
