/* try-syscall - probe whether a privileged system call is allowed, without side effects.
 *
 * Usage: try-syscall NAME [ARG]
 * Prints one line: "ok" when the call succeeded, else the errno's symbolic name (EPERM, ...).
 * Always exits 0 (2 on a usage error).  Each probe is chosen so that it changes nothing even
 * when it is allowed: nonexistent paths, invalid magic numbers, fds closed at once, namespaces
 * that die with this process.  Tests read the errno: EPERM/EACCES (or the seccomp errno) means
 * "denied"; anything else means the kernel got as far as argument checking.
 * Built statically into the test rootfs (tests/rootfs/build.sh). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/io_uring.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#ifndef SYS_open_tree
#define SYS_open_tree 428
#endif
#ifndef SYS_move_mount
#define SYS_move_mount 429
#endif
#ifndef SYS_fsopen
#define SYS_fsopen 430
#endif
#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE 1
#endif
#ifndef OPEN_TREE_CLOEXEC
#define OPEN_TREE_CLOEXEC O_CLOEXEC
#endif
#ifndef FSOPEN_CLOEXEC
#define FSOPEN_CLOEXEC 1
#endif

static const char *arg; /* optional argument, NULL when absent */

/* A syscall result as 0 / -errno; closes a returned fd. */
static int fdres(long r)
{
  if (r < 0)
    return -errno;
  close((int)r);
  return 0;
}

static int res(long r)
{
  return r < 0 ? -errno : 0;
}

static int parse_num(const char *s, long min, long max, int *out)
{
  char *end = NULL;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || end == s || *end || v < min || v > max)
    return -1;
  *out = (int)v;
  return 0;
}

static int p_bpf(void)
{
  union bpf_attr a;
  memset(&a, 0, sizeof(a));
  a.map_type = BPF_MAP_TYPE_ARRAY;
  a.key_size = 4;
  a.value_size = 4;
  a.max_entries = 1;
  return fdres(syscall(SYS_bpf, BPF_MAP_CREATE, &a, sizeof(a)));
}

static int p_unshare(int flag)
{
  return res(unshare(flag)); /* the namespace dies with this process */
}

static int p_clone_newuser(void)
{
  long pid = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
  if (pid < 0)
    return -errno;
  if (pid == 0)
    _exit(0);
  waitpid((pid_t)pid, NULL, 0);
  return 0;
}

static int p_setns(void)
{
  int fd = open(arg ? arg : "/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  int r = res(setns(fd, 0));
  close(fd);
  return r;
}

/* mount(2) with a filesystem type that does not exist: ENODEV when allowed. */
static int p_mount(void)
{
  return res(mount("none", "/", "agentrt-no-such-fs", 0, NULL));
}

/* /proc/self/fd is never a mount point: EINVAL when allowed, EPERM when not. */
static int p_umount2(void)
{
  return res(umount2("/proc/self/fd", 0));
}

/* Nonexistent paths: ENOENT when allowed (the permission check comes first). */
static int p_pivot_root(void)
{
  return res(syscall(SYS_pivot_root, "/nonexistent-agentrt-a", "/nonexistent-agentrt-b"));
}

static int p_fsopen(void)
{
  return fdres(syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC));
}

/* A detached clone of one mount, freed when the fd is closed. */
static int p_open_tree(void)
{
  return fdres(syscall(SYS_open_tree, AT_FDCWD, "/", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC));
}

static int p_move_mount(void)
{
  return res(syscall(SYS_move_mount, AT_FDCWD, "/nonexistent-agentrt-a", AT_FDCWD,
                     "/nonexistent-agentrt-b", 0));
}

/* PTRACE_SEIZE does not stop the tracee; it is detached when we exit.  Without a pid, a
 * child of ours is traced (needs no capability, so only a filter can deny it). */
static int p_ptrace(void)
{
  pid_t pid;
  if (arg) {
    if (parse_num(arg, 1, 4194304, &pid) < 0)
      return -EINVAL;
    return res(ptrace(PTRACE_SEIZE, pid, 0, 0));
  }
  pid = fork();
  if (pid < 0)
    return -errno;
  if (pid == 0) {
    pause();
    _exit(0);
  }
  int r = res(ptrace(PTRACE_SEIZE, pid, 0, 0));
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  return r;
}

static int p_process_vm_readv(void)
{
  char src[8] = "agentrt", dst[8];
  pid_t pid = getpid();
  void *addr = src;
  if (arg) {
    if (parse_num(arg, 1, 4194304, &pid) < 0)
      return -EINVAL;
    addr = NULL; /* EFAULT when allowed */
  }
  struct iovec l = {dst, sizeof(dst)}, r = {addr, sizeof(src)};
  return res(process_vm_readv(pid, &l, 1, &r, 1, 0));
}

static int p_perf_event_open(void)
{
  struct perf_event_attr a;
  memset(&a, 0, sizeof(a));
  a.type = PERF_TYPE_SOFTWARE;
  a.size = sizeof(a);
  a.config = PERF_COUNT_SW_CPU_CLOCK;
  a.disabled = 1;
  return fdres(syscall(SYS_perf_event_open, &a, 0, -1, -1, 0));
}

/* KEYCTL_GET_KEYRING_ID (0) of the session keyring (-3) without creating it. */
static int p_keyctl(void)
{
  return res(syscall(SYS_keyctl, 0, -3, 0));
}

/* A user key in the process keyring (-2), which disappears with this process. */
static int p_add_key(void)
{
  return res(syscall(SYS_add_key, "user", "agentrt-probe", "x", 1, -2));
}

static int p_userfaultfd(void)
{
  return fdres(syscall(SYS_userfaultfd, O_CLOEXEC));
}

static int p_io_uring_setup(void)
{
  struct io_uring_params p;
  memset(&p, 0, sizeof(p));
  return fdres(syscall(SYS_io_uring_setup, 1, &p));
}

/* The "shocker" call: open "/" again through a file handle (read-only, closed at once). */
static int p_open_by_handle_at(void)
{
  struct file_handle *fh = calloc(1, sizeof(*fh) + MAX_HANDLE_SZ);
  int mnt = -1, r;
  if (!fh)
    return -ENOMEM;
  fh->handle_bytes = MAX_HANDLE_SZ;
  if (name_to_handle_at(AT_FDCWD, "/", fh, &mnt, 0) < 0) {
    r = -errno;
    free(fh);
    return r;
  }
  int mfd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (mfd < 0) {
    r = -errno;
    free(fh);
    return r;
  }
  r = fdres(open_by_handle_at(mfd, fh, O_RDONLY | O_CLOEXEC));
  close(mfd);
  free(fh);
  return r;
}

/* A buffer too short to be a module: ENOEXEC when allowed. */
static int p_init_module(void)
{
  static char buf[4];
  return res(syscall(SYS_init_module, buf, sizeof(buf), ""));
}

static int p_finit_module(void)
{
  return res(syscall(SYS_finit_module, -1, "", 0)); /* EBADF when allowed */
}

/* Too many segments: EINVAL after the permission check, nothing is loaded or unloaded. */
static int p_kexec_load(void)
{
  return res(syscall(SYS_kexec_load, 0UL, 1000UL, NULL, 0UL));
}

/* An invalid timespec: EINVAL when the call reaches the kernel, the clock is not touched. */
static int p_clock_settime(void)
{
  struct timespec ts = {.tv_sec = 0, .tv_nsec = 2000000000L};
  return res(syscall(SYS_clock_settime, CLOCK_REALTIME, &ts));
}

/* settimeofday(NULL, NULL) checks CAP_SYS_TIME and then has nothing to set. */
static int p_settimeofday(void)
{
  return res(syscall(SYS_settimeofday, NULL, NULL));
}

/* Wrong magic: EPERM without CAP_SYS_BOOT, EINVAL with it.  Never reboots. */
static int p_reboot(void)
{
  return res(syscall(SYS_reboot, 0x12345678, 0x12345678, 0x4321fedc, NULL));
}

static int p_swapon(void)
{
  return res(syscall(SYS_swapon, "/nonexistent-agentrt-swap", 0));
}

static int p_acct(void)
{
  return res(syscall(SYS_acct, "/nonexistent-agentrt-acct"));
}

/* SYSLOG_ACTION_SIZE_BUFFER: read-only. */
static int p_syslog(void)
{
  return res(syscall(SYS_syslog, 10, NULL, 0));
}

/* Push one space into the input queue of fd ARG (default 0). */
static int p_tiocsti(void)
{
  int fd = 0;
  if (arg && parse_num(arg, 0, 1 << 20, &fd) < 0)
    return -EINVAL;
  char c = ' ';
  return res(ioctl(fd, TIOCSTI, &c));
}

static int p_chroot(void)
{
  return res(chroot("/"));
}

/* A loop-device node in ARG (default /tmp), removed at once. */
static int p_mknod_block(void)
{
  char path[4096];
  snprintf(path, sizeof(path), "%s/.try-syscall-blk.%d", arg ? arg : "/tmp", (int)getpid());
  int r = res(mknod(path, S_IFBLK | 0600, makedev(7, 0)));
  if (r == 0)
    unlink(path);
  return r;
}

/* clone3 with a zero size: EINVAL from the kernel when the call is allowed. */
static int p_clone3(void)
{
  return res(syscall(435 /* SYS_clone3 */, NULL, 0));
}

/* openat2 with a NULL how: EFAULT/E2BIG/EINVAL when allowed; nothing is opened. */
static int p_openat2(void)
{
  return fdres(syscall(437 /* SYS_openat2 */, AT_FDCWD, "/nonexistent-try-syscall", NULL, 0));
}

static const struct probe {
  const char *name;
  int (*fn)(void);
} probes[] = {
    {"bpf", p_bpf},
    {"clone3", p_clone3},
    {"openat2", p_openat2},
    {"unshare-user", NULL},
    {"unshare-net", NULL},
    {"unshare-mnt", NULL},
    {"clone-newuser", p_clone_newuser},
    {"setns", p_setns},
    {"mount", p_mount},
    {"umount2", p_umount2},
    {"pivot_root", p_pivot_root},
    {"fsopen", p_fsopen},
    {"open_tree", p_open_tree},
    {"move_mount", p_move_mount},
    {"ptrace", p_ptrace},
    {"process_vm_readv", p_process_vm_readv},
    {"perf_event_open", p_perf_event_open},
    {"keyctl", p_keyctl},
    {"add_key", p_add_key},
    {"userfaultfd", p_userfaultfd},
    {"io_uring_setup", p_io_uring_setup},
    {"open_by_handle_at", p_open_by_handle_at},
    {"init_module", p_init_module},
    {"finit_module", p_finit_module},
    {"kexec_load", p_kexec_load},
    {"clock_settime", p_clock_settime},
    {"settimeofday", p_settimeofday},
    {"reboot", p_reboot},
    {"swapon", p_swapon},
    {"acct", p_acct},
    {"syslog", p_syslog},
    {"tiocsti", p_tiocsti},
    {"chroot", p_chroot},
    {"mknod-block", p_mknod_block},
};

static int run(const char *name)
{
  if (strcmp(name, "unshare-user") == 0)
    return p_unshare(CLONE_NEWUSER);
  if (strcmp(name, "unshare-net") == 0)
    return p_unshare(CLONE_NEWNET);
  if (strcmp(name, "unshare-mnt") == 0)
    return p_unshare(CLONE_NEWNS);
  for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++)
    if (probes[i].fn && strcmp(name, probes[i].name) == 0)
      return probes[i].fn();
  return 1;
}

int main(int argc, char **argv)
{
  if (argc < 2 || argc > 3 || strcmp(argv[1], "--help") == 0) {
    fprintf(stderr, "usage: try-syscall NAME [ARG]\nnames:");
    for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++)
      fprintf(stderr, " %s", probes[i].name);
    fputc('\n', stderr);
    return 2;
  }
  arg = argc == 3 ? argv[2] : NULL;
  int r = run(argv[1]);
  if (r == 1) {
    fprintf(stderr, "try-syscall: unknown probe `%s'\n", argv[1]);
    return 2;
  }
  if (r == 0) {
    puts("ok");
    return 0;
  }
  const char *n = strerrorname_np(-r);
  if (n)
    puts(n);
  else
    printf("E%d\n", -r);
  return 0;
}
