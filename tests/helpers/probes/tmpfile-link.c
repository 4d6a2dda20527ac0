/* tmpfile-link - write a file with no name, then give it one.
 *
 * Usage: tmpfile-link DIR NAME TEXT
 * Opens an O_TMPFILE in DIR, writes TEXT to it, then links it as DIR/NAME
 * (linkat through /proc/self/fd) and closes it; NAME `-`: never linked (the
 * file goes with its last descriptor).  The writes happen while the file has
 * no name: fanotify reports them under the kernel's name for it
 * (`#<inode>`); used by the audit suite. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
  char proc[64];
  int dfd, fd;

  if (argc != 4) {
    fprintf(stderr, "usage: tmpfile-link DIR NAME TEXT\n");
    return 2;
  }
  dfd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  fd = dfd < 0 ? -1 : openat(dfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
  if (fd < 0) {
    perror("tmpfile-link: O_TMPFILE");
    return 1;
  }
  if (write(fd, argv[3], strlen(argv[3])) != (ssize_t)strlen(argv[3])) {
    perror("tmpfile-link: write");
    return 1;
  }
  snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
  if (strcmp(argv[2], "-") != 0 && linkat(AT_FDCWD, proc, dfd, argv[2], AT_SYMLINK_FOLLOW) < 0) {
    perror("tmpfile-link: linkat");
    return 1;
  }
  close(fd);
  close(dfd);
  return 0;
}
