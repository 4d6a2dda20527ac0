/* pid.c - process liveness by pid and start time (see pid.h). */
#include "os/pid.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/util.h"
#include "os/procfs.h"

/* Field 22 (the start time) and field 3 (the state) of a stat line; comm
 * may contain spaces and parentheses: fields restart after the last ')'. */
static int parse_stat(char *buf, uint64_t *ret, char *ret_state)
{
  char *p = strrchr(buf, ')');
  int field;

  if (p == NULL || p[1] == '\0')
    return -1;
  p += 2;
  if (ret_state)
    *ret_state = *p;
  for (field = 3; field < 22 && p; field++) {
    p = strchr(p, ' ');
    if (p)
      p++;
  }
  if (p == NULL)
    return -1;
  *ret = strtoull(p, NULL, 10);
  return 0;
}

int proc_start_time(pid_t pid, uint64_t *ret, char *ret_state)
{
  char path[64], buf[1024];
  struct error err = {0};

  snprintf(path, sizeof path, "%d/stat", pid);
  if (procfs_read(path, buf, sizeof buf, &err) <= 0)
    return -1;
  return parse_stat(buf, ret, ret_state);
}

int proc_open_identified(pid_t pid, uint64_t start_time, struct error *err)
{
  char name[24], buf[1024];
  cleanup_close int dfd = -1, sfd = -1;
  uint64_t st = 0;
  char state = 0;
  ssize_t n;

  if (pid <= 0 || start_time == 0)
    return error_set(err, ESRCH, "process %d: no start time to check it by", (int)pid);
  snprintf(name, sizeof name, "%d", (int)pid);
  dfd = procfs_open(name, O_PATH | O_DIRECTORY, err);
  if (dfd < 0)
    return error_set(err, ESRCH, "process %d is gone", (int)pid);
  /* through dfd: if pid ended and was taken since, this fails */
  sfd = openat(dfd, "stat", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  n = sfd < 0 ? -1 : read(sfd, buf, sizeof buf - 1);
  if (n <= 0)
    return error_set(err, ESRCH, "process %d is gone", (int)pid);
  buf[n] = '\0';
  if (parse_stat(buf, &st, &state) < 0 || st != start_time || state == 'Z' || state == 'X')
    return error_set(err, ESRCH,
                     "process %d is gone (the pid now names another process, or a zombie)",
                     (int)pid);
  n = dfd;
  dfd = -1;
  return (int)n;
}

int proc_open_ns_identified(pid_t pid, uint64_t start_time, const char *name, struct error *err)
{
  cleanup_close int pfd = proc_open_identified(pid, start_time, err);
  cleanup_close int nsdir = -1;
  char who[24];

  if (pfd < 0)
    return -1;
  /* through pfd: once the process is gone (and its pid taken), this fails */
  nsdir = openat(pfd, "ns", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (nsdir < 0)
    return error_set(err, ESRCH, "process %d is gone", (int)pid);
  snprintf(who, sizeof who, "%d", (int)pid);
  return procfs_open_ns_at(nsdir, who, name, err);
}

int proc_open_ns_path_identified(const char *path, uint64_t start_time, struct error *err)
{
  char name[16];
  int pid, end = 0;

  if (sscanf(path, "/proc/%d/ns/%15[a-z_]%n", &pid, name, &end) != 2 || path[end] != '\0' ||
      pid <= 0)
    return -2;
  return proc_open_ns_identified(pid, start_time, name, err);
}

pid_t proc_flock_holder(int fd)
{
  struct stat st;
  char line[256];
  pid_t found = 0;
  FILE *f;

  if (fstat(fd, &st) < 0 || (f = fopen("/proc/locks", "re")) == NULL)
    return 0;
  /* "1: FLOCK  ADVISORY  WRITE 21812 fe:00:1147061 0 EOF"; a waiter's line has "->" */
  while (found == 0 && fgets(line, sizeof line, f) != NULL) {
    unsigned int maj, min;
    unsigned long long ino;
    int pid;
    if (sscanf(line, "%*d: FLOCK %*s %*s %d %x:%x:%llu", &pid, &maj, &min, &ino) == 4 &&
        maj == major(st.st_dev) && min == minor(st.st_dev) && ino == (unsigned long long)st.st_ino)
      found = pid;
  }
  fclose(f);
  return found;
}

bool proc_alive(pid_t pid, uint64_t start_time)
{
  uint64_t st;
  char state = 0;

  if (pid <= 0)
    return false;
  if (proc_start_time(pid, &st, &state) < 0)
    return false;
  if (state == 'Z' || state == 'X')
    return false;
  return start_time == 0 || st == start_time;
}

int proc_kill_wait(pid_t pid, uint64_t start_time, int sig, int timeout_ms)
{
  int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
  struct pollfd pfd;
  int r;

  if (pidfd < 0)
    return errno == ESRCH ? 0 : -1;
  if (!proc_alive(pid, start_time)) {
    close(pidfd);
    return 0;
  }
  if (syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0) < 0 && errno != ESRCH) {
    close(pidfd);
    return -1;
  }
  pfd.fd = pidfd;
  pfd.events = POLLIN;
  r = poll(&pfd, 1, timeout_ms);
  close(pidfd);
  return r > 0 ? 0 : -1;
}

void proc_kill_reap(pid_t pid)
{
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
}

/* The teardown child shares our descriptor table and memory (CLONE_FILES,
 * CLONE_VM): the clone copies neither (a fork copied the page tables, ~90 us
 * of the monitor's last steps here), our exit drops only a reference to
 * each, and the child's exit, once we are gone, closes the descriptors and
 * unmaps the memory.  It runs on a stack of its own and makes raw system
 * calls only: it shares our thread's libc state. */
static char teardown_stack[16384] __attribute__((aligned(64)));
static struct pollfd teardown_pfd;
/* proc_teardown_close_first: closed by the child in this order, at once */
static int teardown_first[32];
static int teardown_n_first;

#define TEARDOWN_FIRST_MAX (int)(sizeof teardown_first / sizeof teardown_first[0])
/* proc_teardown_trim_first: committed and trimmed before those closes */
static int teardown_trim = -1;
static struct fstrim_range teardown_range;

int proc_teardown_room(void)
{
  return TEARDOWN_FIRST_MAX - teardown_n_first;
}

void proc_teardown_close_first(int fd)
{
  if (fd < 0)
    return;
  if (teardown_n_first < TEARDOWN_FIRST_MAX)
    teardown_first[teardown_n_first++] = fd;
  else
    close(fd); /* not to be left to the exit's order: now */
}

int proc_teardown_trim_first(int fd)
{
  if (teardown_trim >= 0)
    return -1;
  teardown_trim = fd;
  teardown_range = (struct fstrim_range){.start = 0, .len = UINT64_MAX, .minlen = 0};
  return 0;
}

__attribute__((no_sanitize("address", "undefined"))) static int teardown_wait(void *arg)
{
  /* blocks freed in the running transaction are not free to FITRIM before
   * it commits; an error of either leaves those blocks in the file system */
  if (teardown_trim >= 0) {
    syscall(SYS_syncfs, teardown_trim);
    syscall(SYS_ioctl, teardown_trim, FITRIM, &teardown_range);
  }
  /* one by one: a close returns once what it released is gone (a mount's
   * last reference unmounts it on the way back), so a lock closed last is
   * let go after those; the exit closes in an order of its own */
  for (int i = 0; i < teardown_n_first; i++)
    syscall(SYS_close, teardown_first[i]);
  syscall(SYS_poll, arg, 1, 10000);
  syscall(SYS_exit, 0);
  return 0;
}

static void close_first_here(void)
{
  if (teardown_trim >= 0) {
    if (syncfs(teardown_trim) < 0) {
      /* the unmount commits it; those blocks stay */
    }
    if (ioctl(teardown_trim, FITRIM, &teardown_range) < 0) {
      /* not ours to have: those blocks stay */
    }
    teardown_trim = -1;
  }
  for (int i = 0; i < teardown_n_first; i++)
    close(teardown_first[i]);
  teardown_n_first = 0;
}

void proc_leave_fd_teardown_to_child(void)
{
  int self = (int)syscall(SYS_pidfd_open, getpid(), 0);

  if (self < 0) {
    close_first_here();
    return;
  }
  teardown_pfd = (struct pollfd){.fd = self, .events = POLLIN};
  /* the pidfd, opened before the clone, names us; it is the child's to
   * close (the table is shared: closing it here would close it there) */
  if (clone(teardown_wait, teardown_stack + sizeof teardown_stack, CLONE_VM | CLONE_FILES | SIGCHLD,
            &teardown_pfd) < 0) {
    close(self);
    close_first_here();
  }
}

/* Linux 6.15's uapi (linux/pidfd.h), not in the headers we build with: the
 * first version of the structure (64 bytes); the kernel reads the size from
 * the command and fills what both know. */
struct pidfd_info_v0 {
  uint64_t mask;
  uint64_t cgroupid;
  uint32_t pid, tgid, ppid, ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid;
  int32_t exit_code;
};
#define PIDFD_INFO_EXIT_ (1ULL << 3)
#define PIDFD_GET_INFO_ _IOWR(0xFF, 11, struct pidfd_info_v0)

int pidfd_exit_status(int pidfd, int timeout_ms, int *ret_status)
{
  for (int waited = 0;; waited += 5) {
    struct pidfd_info_v0 info = {.mask = PIDFD_INFO_EXIT_};
    int r = ioctl(pidfd, PIDFD_GET_INFO_, &info);
    if (r == 0 && (info.mask & PIDFD_INFO_EXIT_)) {
      *ret_status = info.exit_code;
      return 0;
    }
    /* alive (r == 0), or gone but not reaped yet (ESRCH): wait; else the
     * kernel has no such call */
    if ((r < 0 && errno != ESRCH) || waited >= timeout_ms)
      return -1;
    usleep(5000);
  }
}
