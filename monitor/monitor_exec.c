/* monitor_exec.c - programs from their exec calls, where the kernel refuses
 * the monitor process events (its proc connector takes only privileged
 * subscribers: a user's sandbox or a rootless engine on such a kernel).
 *
 * create then adds execve and execveat to the notify variant of the
 * profile's filter (cli/create.c, only when the profile refuses neither);
 * every exec call of the container stops in the kernel until we answer
 * here.  We read the path and argv from the caller's memory, look the file
 * up in the caller's root, answer "continue" (the kernel then runs the call
 * as if there were no filter: nothing here decides whether it succeeds,
 * and nothing the container sends can make it continue any other call:
 * monitor_seccomp.c hands us only calls the kernel named exec calls) and
 * record
 *   {"pid":P,"cpid":C,"ppid":PP,"uid":U,"exe":"/usr/bin/git","argv":[...],
 *    "via":"exec call"}
 * with "found":false when the file was not there at our lookup: the misses
 * of a PATH search, and also what a second thread that makes the file
 * right after our lookup leaves (the call is in the trail either way;
 * `audit --summary` lists only the found ones).  What such a record cannot
 * say: the path and argv are read before the kernel reads them, so another
 * thread of the caller can change those bytes in between (THREAT-MODEL.md,
 * "Programs from exec calls").  The proc connector's records read what ran,
 * after the exec.  The caller's memory is read with process_vm_readv (a
 * caller that made itself not dumpable has a root-owned /proc/PID/mem, but
 * the monitor has CAP_SYS_PTRACE in a user's sandbox's user namespace); a
 * caller we still cannot read is recorded as "exe":"?" with
 * "unreadable":true and its comm, which `--summary` lists.  The runtime's
 * own exec of its sealed stub (the first exec call on each listener,
 * monitor_seccomp.c) is answered at once and not recorded (the next one is).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/util.h"
#include "monitor/monitor_internal.h"
#include "os/procfs.h"
#include "os/safepath.h"

#ifndef SECCOMP_USER_NOTIF_FLAG_CONTINUE
#define SECCOMP_USER_NOTIF_FLAG_CONTINUE (1UL << 0)
#endif
#ifndef AT_EMPTY_PATH
#define AT_EMPTY_PATH 0x1000
#endif

#define PAGE 4096u

/* len bytes at addr of the caller into buf: the count read, or -1. */
static ssize_t mem_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
  struct iovec local = {.iov_base = buf, .iov_len = len};
  struct iovec remote = {.iov_base = (void *)(uintptr_t)addr, .iov_len = len};

  return process_vm_readv(pid, &local, 1, &remote, 1, 0);
}

/* A NUL-terminated string at addr of the caller pid into buf (size > 1),
 * read a page at a time (a string may end just before an unmapped page).
 * Its length, or -1: unreadable, or longer than buf. */
static ssize_t mem_str(pid_t pid, uint64_t addr, char *buf, size_t size)
{
  size_t off = 0;

  if (addr == 0 || (int64_t)addr < 0)
    return -1;
  while (off < size - 1) {
    size_t want = PAGE - (size_t)((addr + off) % PAGE);
    ssize_t n;
    char *nul;

    if (want > size - 1 - off)
      want = size - 1 - off;
    n = mem_read(pid, addr + off, buf + off, want);
    if (n <= 0)
      return -1;
    nul = memchr(buf + off, '\0', (size_t)n);
    if (nul != NULL)
      return nul - buf;
    off += (size_t)n;
  }
  buf[size - 1] = '\0';
  return -1;
}

/* argv at addr (pointers of psz bytes) as NUL-separated strings into cmd;
 * its length.  *more: there were more arguments or bytes than kept. */
static ssize_t mem_argv(pid_t pid, uint64_t addr, size_t psz, char *cmd, size_t size, bool *more)
{
  size_t off = 0;

  *more = false;
  if (addr == 0)
    return 0;
  for (size_t i = 0;; i++) {
    uint64_t p = 0;
    ssize_t l;

    if (i == ARGV_MAX_ARGS || off >= size - 1) {
      *more = true;
      break;
    }
    if (mem_read(pid, addr + i * psz, &p, psz) != (ssize_t)psz || p == 0)
      break;
    l = mem_str(pid, p, cmd + off, size - off);
    if (l < 0) { /* unreadable, or cut at the end of cmd */
      *more = true;
      break;
    }
    off += (size_t)l + 1;
  }
  return (ssize_t)off;
}

/* The link at rel in the caller's /proc directory, into buf. */
static bool link_at(int dir, const char *rel, char *buf, size_t size)
{
  ssize_t n = readlinkat(dir, rel, buf, size - 1);

  if (n <= 0)
    return false;
  buf[n] = '\0';
  return true;
}

/* The file the call names, as an absolute path in the caller's root, into
 * full: relative to its cwd, or to execveat's dirfd. */
static bool absolute(int dir, const char *path, bool at, int dirfd, char *full, size_t size)
{
  char rel[32], base[PATH_MAX];

  if (path[0] == '/') {
    snprintf(full, size, "%s", path);
    return true;
  }
  if (at && dirfd != AT_FDCWD)
    snprintf(rel, sizeof rel, "fd/%d", dirfd);
  else
    snprintf(rel, sizeof rel, "cwd");
  if (!link_at(dir, rel, base, sizeof base) || base[0] != '/')
    return false;
  /* longer than PATH_MAX: the kernel refuses it too (ENAMETOOLONG) */
  return snprintf(full, size, "%s%s%s", base, streq(base, "/") ? "" : "/", path) < (int)size;
}

/* execveat(fd, "", AT_EMPTY_PATH) (fexecve): is the fd a regular file?
 * Its name into exe (a memfd's is "/memfd:NAME (deleted)"). */
static bool lookup_fd(int dir, int dirfd, char *exe, size_t size)
{
  char rel[32];
  cleanup_close int fd = -1;
  struct stat st;

  snprintf(rel, sizeof rel, "fd/%d", dirfd);
  fd = openat(dir, rel, O_PATH | O_CLOEXEC);
  if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || !link_at(dir, rel, exe, size)) {
    snprintf(exe, size, "?");
    return false;
  }
  return true;
}

/* Is full a regular file in the caller's root?  Its resolved name into exe. */
static bool lookup(int dir, const char *full, bool nofollow, char *exe, size_t size)
{
  struct error ignore = {0};
  cleanup_close int root = openat(dir, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
  cleanup_close int fd = -1;
  char self[64];
  struct stat st;
  ssize_t n;

  if (root < 0 || (fd = safe_walk(root, full, SAFE_OPEN, nofollow, &ignore)) < 0 ||
      fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
    return false;
  snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
  n = readlink(self, exe, size - 1);
  if (n <= 0)
    snprintf(exe, size, "%s", full);
  else
    exe[n] = '\0';
  return true;
}

static void answer(int fd, uint64_t id)
{
  struct seccomp_notif_resp resp = {.id = id, .flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE};

  if (ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0) {
    /* ENOENT: the caller is gone; else the kernel fails the call itself */
  }
}

void monitor_exec_call(struct monitor *m, int fd, const struct seccomp_notif *req, bool at,
                       bool stub)
{
  const struct seccomp_data *d = &req->data;
  /* execveat(dirfd, path, argv, envp, flags); execve(path, argv, envp) */
  size_t psz = d->arch == SCMP_ARCH_X86_64 && !((uint32_t)d->nr & 0x40000000) ? 8 : 4;
  int dirfd = at ? (int)d->args[0] : AT_FDCWD;
  uint64_t flags = at ? d->args[4] : 0;
  char rel[24], path[PATH_MAX], full[PATH_MAX], exe[PATH_MAX], cmd[ARGV_MAX_BYTES];
  struct error ignore = {0};
  cleanup_close int dir = -1;
  pid_t pid = (pid_t)req->pid;
  __u64 id = req->id;
  struct jbuf b = {0};
  bool more = false, found = false, unreadable;
  ssize_t clen = -1;

  if (stub) { /* the runtime's own: nothing to read */
    answer(fd, req->id);
    return;
  }
  if (d->arch == SCMP_ARCH_AARCH64)
    psz = 8;
  snprintf(rel, sizeof rel, "%u", req->pid);
  dir = procfs_open(rel, O_PATH | O_DIRECTORY, &ignore);
  unreadable = dir < 0 || mem_str(pid, at ? d->args[1] : d->args[0], path, sizeof path) < 0;
  if (unreadable)
    snprintf(path, sizeof path, "?");
  else
    clen = mem_argv(pid, at ? d->args[2] : d->args[1], psz, cmd, sizeof cmd, &more);
  /* the reads were of that caller's memory (its pid not reused) */
  if (ioctl(fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) < 0) {
    answer(fd, req->id);
    return;
  }
  if (dir >= 0 && at && (flags & AT_EMPTY_PATH) && path[0] == '\0') {
    found = lookup_fd(dir, dirfd, exe, sizeof exe);
    snprintf(full, sizeof full, "%s", exe);
  } else if (dir >= 0 && !streq(path, "?") && absolute(dir, path, at, dirfd, full, sizeof full))
    found = lookup(dir, full, at && (flags & AT_SYMLINK_NOFOLLOW), exe, sizeof exe);
  else
    snprintf(full, sizeof full, "%s", path);
  if (dir >= 0)
    pid = monitor_proc_caller_ids(&b, dir, pid);
  else
    jb_key_i64(&b, "pid", req->pid);
  /* the caller waits for this answer, not for the record */
  answer(fd, req->id);
  if (!monitor_flood_admit(m, "process", found ? exe : full, NULL, pid)) {
    jb_free(&b);
    return;
  }
  jb_key_str(&b, "exe", found ? exe : full);
  if (clen >= 0) {
    monitor_add_argv(&b, cmd, clen, more);
  } else {
    jb_key(&b, "argv");
    jb_puts(&b, "[]");
    jb_key_bool(&b, "argv_unavailable", true);
  }
  if (unreadable) {
    char comm[32];
    if (dir >= 0 && monitor_read_at(dir, "comm", comm, sizeof comm) > 0) {
      comm[strcspn(comm, "\n")] = '\0';
      jb_key_str(&b, "caller", comm);
    }
    jb_key_bool(&b, "unreadable", true);
  } else if (!found) {
    jb_key_bool(&b, "found", false);
  }
  jb_key_str(&b, "via", "exec call");
  monitor_record(m, "process", jb_str(&b));
  jb_free(&b);
}
