/* sprobe - extra probes of the hardening suites (tests/security), copied into each bundle.
 *
 * Usage: sprobe COMMAND [ARGS]
 *   ids                      print "RUID EUID SUID" (a setuid copy shows whether exec raised them)
 *   open PATH r|w            open PATH read-only / write-only (no O_CREAT, no O_TRUNC), print ok
 *                            or the errno name; nothing is read or written
 *   clone3-newuser           clone3(CLONE_NEWUSER): ok / errno name (ENOSYS when clone3 is
 * filtered) exe-scan ROUNDS          CVE-2019-5736 attacker: for every other pid, open
 * /proc/PID/exe with O_PATH, then try to re-open it for writing (O_WRONLY|O_APPEND) and append one
 * byte; prints "wrote PID TARGET" when that worked and "opened PID TARGET ERRNO" when only the open
 * did (a sealed memfd). DESTRUCTIVE for the target: only ever run against a copy of the runtime.
 *   connect-unix PATH        connect to a unix stream socket: ok / errno name
 *   connect-tcp IPV4 PORT    TCP connect with a 2 s timeout: ok / errno name (ETIMEDOUT)
 *   abstract-listen NAME SEC host side: listen on the abstract unix socket @NAME for SEC seconds
 * Statically linked; always exits 0 except on usage errors (2). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <arpa/inet.h>
#include <poll.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static int usage(void)
{
  fputs("usage: sprobe ids | open PATH r|w | clone3-newuser | exe-scan ROUNDS | "
        "connect-unix PATH | connect-tcp IPV4 PORT | abstract-listen NAME SECONDS\n",
        stderr);
  return 2;
}

static void result(int r)
{
  if (r == 0)
    puts("ok");
  else
    puts(strerrorname_np(r) ? strerrorname_np(r) : "error");
}

static long num(const char *s, long max)
{
  char *end = NULL;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || end == s || *end || v < 0 || v > max)
    return -1;
  return v;
}

static int p_open(const char *path, const char *mode)
{
  int fl = strcmp(mode, "w") == 0 ? O_WRONLY : O_RDONLY;
  int fd = open(path, fl | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0)
    return errno;
  close(fd);
  return 0;
}

static int p_clone3(void)
{
  struct clone_args a;
  memset(&a, 0, sizeof a);
  a.flags = CLONE_NEWUSER;
  a.exit_signal = SIGCHLD;
  long pid = syscall(SYS_clone3, &a, sizeof a);
  if (pid < 0)
    return errno;
  if (pid == 0)
    _exit(0);
  waitpid((pid_t)pid, NULL, 0);
  return 0;
}

static void exe_scan(long rounds)
{
  char path[64], self[64];
  pid_t me = getpid();
  for (long r = 0; r < rounds; r++) {
    DIR *d = opendir("/proc");
    struct dirent *e;
    if (!d)
      return;
    while ((e = readdir(d)) != NULL) {
      long pid = num(e->d_name, 1 << 22);
      if (pid <= 0 || pid == me)
        continue;
      snprintf(path, sizeof path, "/proc/%ld/exe", pid);
      int pfd = open(path, O_PATH | O_CLOEXEC);
      if (pfd < 0)
        continue;
      snprintf(self, sizeof self, "/proc/self/fd/%d", pfd);
      int w = open(self, O_WRONLY | O_APPEND | O_CLOEXEC);
      if (w >= 0) {
        char t[256];
        ssize_t tn = readlink(path, t, sizeof t - 1);
        t[tn > 0 ? tn : 0] = '\0';
        if (write(w, "#", 1) == 1)
          printf("wrote %ld %s\n", pid, t);
        else
          printf("opened %ld %s %s\n", pid, t, strerrorname_np(errno));
        fflush(stdout);
        close(w);
      }
      close(pfd);
    }
    closedir(d);
  }
}

static int connect_unix(const char *path)
{
  struct sockaddr_un a;
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), r = 0;
  if (fd < 0)
    return errno;
  memset(&a, 0, sizeof a);
  a.sun_family = AF_UNIX;
  snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
  if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0)
    r = errno;
  close(fd);
  return r;
}

static int connect_tcp(const char *ip, long port)
{
  struct sockaddr_in a;
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), r = 0;
  if (fd < 0)
    return errno;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_port = htons((unsigned short)port);
  if (inet_pton(AF_INET, ip, &a.sin_addr) != 1) {
    close(fd);
    return EINVAL;
  }
  if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
    r = errno;
    if (r == EINPROGRESS) {
      struct pollfd p = {.fd = fd, .events = POLLOUT};
      socklen_t l = sizeof r;
      if (poll(&p, 1, 2000) <= 0)
        r = ETIMEDOUT;
      else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &r, &l) < 0)
        r = errno;
    }
  }
  close(fd);
  return r;
}

static int abstract_listen(const char *name, long secs)
{
  struct sockaddr_un a;
  size_t n = strlen(name);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || n + 1 > sizeof a.sun_path)
    return 1;
  memset(&a, 0, sizeof a);
  a.sun_family = AF_UNIX;
  memcpy(a.sun_path + 1, name, n);
  if (bind(fd, (struct sockaddr *)&a, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n)) <
          0 ||
      listen(fd, 1) < 0) {
    perror("sprobe: abstract-listen");
    return 1;
  }
  puts("listening");
  fflush(stdout);
  sleep((unsigned)secs);
  return 0;
}

int main(int argc, char **argv)
{
  if (argc < 2)
    return usage();
  const char *c = argv[1];
  if (strcmp(c, "ids") == 0 && argc == 2) {
    uid_t r, e, s;
    getresuid(&r, &e, &s);
    printf("%u %u %u\n", r, e, s);
    return 0;
  }
  if (strcmp(c, "open") == 0 && argc == 4) {
    result(p_open(argv[2], argv[3]));
    return 0;
  }
  if (strcmp(c, "clone3-newuser") == 0 && argc == 2) {
    result(p_clone3());
    return 0;
  }
  if (strcmp(c, "exe-scan") == 0 && argc == 3) {
    long n = num(argv[2], 1000000);
    if (n < 0)
      return usage();
    exe_scan(n);
    return 0;
  }
  if (strcmp(c, "connect-unix") == 0 && argc == 3) {
    result(connect_unix(argv[2]));
    return 0;
  }
  if (strcmp(c, "connect-tcp") == 0 && argc == 4) {
    long port = num(argv[3], 65535);
    if (port < 0)
      return usage();
    result(connect_tcp(argv[2], port));
    return 0;
  }
  if (strcmp(c, "abstract-listen") == 0 && argc == 4) {
    long n = num(argv[3], 3600);
    if (n < 0)
      return usage();
    return abstract_listen(argv[2], n);
  }
  return usage();
}
