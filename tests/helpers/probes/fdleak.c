/* fdleak - list this process's open file descriptors and its cwd and root.
 *
 * Usage: fdleak
 * Output, one per line:  "fd N TARGET" for each open fd (readlink of /proc/self/fd/N; the
 * directory fd used for the listing is left out), then "cwd TARGET" and "root TARGET".
 * Used by the CVE-2024-21626 tests: a runtime must not leak host fds or a host cwd. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void show(const char *label, const char *path)
{
  char buf[PATH_MAX];
  ssize_t n = readlink(path, buf, sizeof(buf) - 1);
  if (n < 0) {
    printf("%s ?%s\n", label, strerrorname_np(errno) ? strerrorname_np(errno) : "error");
    return;
  }
  buf[n] = '\0';
  printf("%s %s\n", label, buf);
}

int main(void)
{
  DIR *d = opendir("/proc/self/fd");
  if (!d) {
    perror("fdleak: /proc/self/fd");
    return 1;
  }
  int self = dirfd(d);
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    char *end = NULL;
    long fd = strtol(e->d_name, &end, 10);
    if (e->d_name[0] == '.' || *end || fd == self)
      continue;
    char path[64], label[32];
    snprintf(path, sizeof(path), "/proc/self/fd/%ld", fd);
    snprintf(label, sizeof(label), "fd %ld", fd);
    show(label, path);
  }
  closedir(d);
  show("cwd", "/proc/self/cwd");
  show("root", "/proc/self/root");
  char cwd[PATH_MAX];
  if (getcwd(cwd, sizeof(cwd)))
    printf("getcwd %s\n", cwd);
  else
    printf("getcwd ?%s\n", strerrorname_np(errno) ? strerrorname_np(errno) : "error");
  return 0;
}
