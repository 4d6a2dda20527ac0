/* fileops - change a file by a call other than write(2) on a descriptor of
 * its own name.
 *
 * Usage: fileops OP FILE [SRC]
 *   copy FILE SRC      copy_file_range SRC over FILE's first bytes
 *   splice FILE SRC    SRC through a pipe, spliced over FILE's first bytes
 *   sendfile FILE SRC  sendfile SRC over FILE's first bytes
 *   punch FILE         fallocate PUNCH_HOLE over the first 4 KiB
 *   zero FILE          fallocate ZERO_RANGE over the first 4 KiB
 *   collapse FILE      fallocate COLLAPSE_RANGE of the first 4 KiB
 *                      (falls back to PUNCH_HOLE where the fs has none)
 *   passfd FILE        a child opens FILE, passes the descriptor over a unix
 *                      socket and exits; the parent then ftruncates it to 2
 *                      bytes and writes "X" at offset 0
 *   utime FILE         overwrite the first byte with one that differs, then
 *                      put back the file's atime and mtime (utimensat)
 *   setxattr FILE NAME VALUE   set an extended attribute (VALUE "cap" is a
 *                      version 2 security.capability of cap_net_raw, effective)
 *   acl FILE UID [default]   a POSIX ACL (its access one, or a directory's
 *                      default one) that gives the user UID read and write
 *   tmpdirs PREFIX N   N times, one after the other: make the directory
 *                      PREFIX<i>, write PREFIX<i>/f, remove both (a compiler's
 *                      temporary directories), 1 ms apart
 * No open with O_TRUNC, no write(2) except where named.  Used by the audit
 * suite. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

static int die(const char *what)
{
  fprintf(stderr, "fileops: %s: %s\n", what, strerror(errno));
  return 1;
}

static int recv_fd(int sock)
{
  char c, cbuf[CMSG_SPACE(sizeof(int))];
  struct iovec iov = {&c, 1};
  struct msghdr m = {
      .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
  struct cmsghdr *cm;
  int fd;

  if (recvmsg(sock, &m, 0) != 1 || (cm = CMSG_FIRSTHDR(&m)) == NULL || cm->cmsg_type != SCM_RIGHTS)
    return -1;
  memcpy(&fd, CMSG_DATA(cm), sizeof fd);
  return fd;
}

static int passfd(const char *file)
{
  int sv[2], fd, st;
  pid_t pid;

  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
    return die("socketpair");
  pid = fork();
  if (pid < 0)
    return die("fork");
  if (pid == 0) {
    char c = 'f', cbuf[CMSG_SPACE(sizeof(int))];
    struct iovec iov = {&c, 1};
    struct msghdr m = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
    struct cmsghdr *cm = CMSG_FIRSTHDR(&m);

    fd = open(file, O_RDWR | O_CLOEXEC);
    if (fd < 0)
      _exit(1);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof fd);
    memcpy(CMSG_DATA(cm), &fd, sizeof fd);
    _exit(sendmsg(sv[1], &m, 0) == 1 ? 0 : 1);
  }
  close(sv[1]);
  fd = recv_fd(sv[0]);
  if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0 || fd < 0)
    return die("passfd: child");
  /* the opener is gone: only this process holds the descriptor */
  if (ftruncate(fd, 2) < 0 || pwrite(fd, "X", 1, 0) != 1 || close(fd) < 0)
    return die("passfd");
  return 0;
}

static int fd_write(const char *path)
{
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);

  if (fd < 0)
    return -1;
  if (write(fd, "x\n", 2) != 2) {
    close(fd);
    return -1;
  }
  return close(fd);
}

/* system.posix_acl_access (or _default) of path: the owner rwx, user uid rw,
 * the group r, a mask of rw, others r (the kernel's xattr format, version 2:
 * a header, then tag, perm, id per entry, little-endian) */
static int set_acl(const char *path, const char *uid, bool dflt)
{
  struct {
    unsigned short tag, perm;
    unsigned int id;
  } __attribute__((packed)) acl[5] = {{0x01, 7, 0xffffffffu},
                                      {0x02, 6, (unsigned int)atoi(uid)},
                                      {0x04, 4, 0xffffffffu},
                                      {0x10, 6, 0xffffffffu},
                                      {0x20, 4, 0xffffffffu}};
  unsigned char buf[4 + sizeof acl];
  unsigned int version = 2;

  memcpy(buf, &version, 4);
  memcpy(buf + 4, acl, sizeof acl);
  if (setxattr(path, dflt ? "system.posix_acl_default" : "system.posix_acl_access", buf, sizeof buf,
               0) < 0)
    return die("acl");
  return 0;
}

static int tmpdirs(const char *prefix, int n)
{
  char dir[4096], file[4200];

  for (int i = 0; i < n; i++) {
    snprintf(dir, sizeof dir, "%s%d", prefix, i);
    snprintf(file, sizeof file, "%s/f", dir);
    if (mkdir(dir, 0755) < 0 || (fd_write(file) < 0) || unlink(file) < 0 || rmdir(dir) < 0)
      return die("tmpdirs");
    usleep(1000);
  }
  return 0;
}

int main(int argc, char **argv)
{
  const char *op = argc > 1 ? argv[1] : "";
  int fd, src = -1, p[2];
  struct stat st;

  if (argc < 3) {
    fprintf(stderr, "usage: fileops OP FILE [SRC]\n");
    return 2;
  }
  if (strcmp(op, "passfd") == 0)
    return passfd(argv[2]);
  if (strcmp(op, "tmpdirs") == 0 && argc == 4)
    return tmpdirs(argv[2], atoi(argv[3]));
  if (strcmp(op, "acl") == 0 && argc >= 4)
    return set_acl(argv[2], argv[3], argc == 5 && strcmp(argv[4], "default") == 0);
  if (strcmp(op, "setxattr") == 0 && argc == 5) {
    /* struct vfs_cap_data, revision 2: magic_etc, then permitted/inheritable
     * per 32-bit word; CAP_NET_RAW is 13 */
    unsigned int cap[5] = {0x02000001, 1u << 13, 0, 0, 0};
    int r = strcmp(argv[4], "cap") == 0 ? setxattr(argv[2], argv[3], cap, sizeof cap, 0)
                                        : setxattr(argv[2], argv[3], argv[4], strlen(argv[4]), 0);
    return r < 0 ? die("setxattr") : 0;
  }
  fd = open(argv[2], O_RDWR | O_CLOEXEC);
  if (fd < 0 || fstat(fd, &st) < 0)
    return die("open");
  if (argc > 3 && (src = open(argv[3], O_RDONLY | O_CLOEXEC)) < 0)
    return die("open source");
  if (strcmp(op, "copy") == 0 && src >= 0) {
    loff_t in = 0, out = 0;
    if (copy_file_range(src, &in, fd, &out, 4, 0) != 4)
      return die("copy_file_range");
  } else if (strcmp(op, "splice") == 0 && src >= 0) {
    loff_t out = 0;
    if (pipe(p) < 0 || splice(src, NULL, p[1], NULL, 4, 0) != 4 ||
        splice(p[0], NULL, fd, &out, 4, 0) != 4)
      return die("splice");
  } else if (strcmp(op, "sendfile") == 0 && src >= 0) {
    if (sendfile(fd, src, NULL, 4) != 4)
      return die("sendfile");
  } else if (strcmp(op, "punch") == 0) {
    if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 4096) < 0)
      return die("fallocate punch");
  } else if (strcmp(op, "zero") == 0) {
    if (fallocate(fd, FALLOC_FL_ZERO_RANGE, 0, 4096) < 0 &&
        fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 4096) < 0)
      return die("fallocate zero");
  } else if (strcmp(op, "collapse") == 0) {
    if (fallocate(fd, FALLOC_FL_COLLAPSE_RANGE, 0, 4096) < 0 &&
        fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 4096) < 0)
      return die("fallocate collapse");
  } else if (strcmp(op, "utime") == 0) {
    struct timespec ts[2] = {st.st_atim, st.st_mtim};
    char c;
    if (pread(fd, &c, 1, 0) != 1)
      return die("read");
    c = c == 'Z' ? 'Y' : 'Z';
    if (pwrite(fd, &c, 1, 0) != 1 || futimens(fd, ts) < 0)
      return die("utime");
  } else {
    fprintf(stderr, "fileops: unknown op `%s`\n", op);
    return 2;
  }
  return close(fd) < 0 ? die("close") : 0;
}
