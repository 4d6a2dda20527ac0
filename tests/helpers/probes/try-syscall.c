/* try-syscall - probe whether a privileged system call is allowed, without side effects.
 *
 * Usage: try-syscall NAME [ARG]
 *        try-syscall i386:CALL [ARG] | x32:CALL [ARG]   CALL through another ABI of x86-64
 *        try-syscall --each NAME...                     each NAME (no ARG) in a child of its
 *                                                       own, in turn: "NAME=RESULT" lines
 *        try-syscall --abi-list                         those CALLs and their numbers
 *        try-syscall --abi-usable i386                  "yes", or "no: why" (exit 0 either way)
 *        try-syscall --session-key DESC DATA CMD...     (on the host) a new session keyring of
 *                                                       its own holding a "user" key DESC=DATA,
 *                                                       then exec CMD, which inherits it
 *        try-syscall --find-session-key DESC            DATA of the "user" key DESC reachable
 *                                                       from the session keyring, or the errno
 *                                                       (ENOKEY: none; EPERM: keyctl refused)
 * Prints one line: "ok" when the call succeeded, else the errno's symbolic name (EPERM, ...).
 * Always exits 0 (2 on a usage error or a CALL the ABI lacks).  Each probe is chosen so that
 * it changes nothing even when it is allowed: nonexistent paths, invalid magic numbers, fds
 * closed at once (socket-vsock, socket-inet, socket-unix: a stream socket of that family,
 * neither bound nor connected), namespaces that die with this process.  Tests read the errno:
 * EPERM/EACCES (or the seccomp errno) means "denied"; anything else means the kernel got as far
 * as argument checking.  Built statically into the test rootfs (tests/rootfs/build.sh).
 *
 * i386:CALL enters the kernel with `int 0x80` and CALL's i386 number (umount, stime,
 * clock_settime64... exist only there); x32:CALL with the x86-64 number (or x32's own,
 * 512..547) ORed with 0x40000000.  A kernel without x32 answers ENOSYS to every x32 call that
 * a seccomp filter lets through.  Some kernels (a hypervisor's guest kernel) make `int 0x80`
 * from user space a general protection fault: no i386 call reaches them, and i386:CALL dies of
 * SIGSEGV there; --abi-usable says so beforehand (in a child).
 *
 * --each is a sweep's probes from one exec: under emulation (the VM lanes) an exec and the
 * shell's fork around it cost far more than the call.  Each NAME still runs in a fresh child,
 * so one that was wrongly allowed (personality, a namespace) cannot change what the next one
 * meets; a child killed by a signal prints NAME=SIGNAME. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/io_uring.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
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

/* open_tree under its Linux 6.15 name (467 on every ABI), without a clone: an
 * O_PATH fd of / when allowed, ENOSYS on older kernels. */
static int p_open_tree_attr(void)
{
  return fdres(syscall(467, AT_FDCWD, "/", OPEN_TREE_CLOEXEC, NULL, 0));
}

static int p_move_mount(void)
{
  return res(syscall(SYS_move_mount, AT_FDCWD, "/nonexistent-agentrt-a", AT_FDCWD,
                     "/nonexistent-agentrt-b", 0));
}

/* A child that waits in pause() until killed, to point a call at; -errno when
 * fork fails. */
static pid_t paused_child(void)
{
  pid_t pid = fork();

  if (pid < 0)
    return -errno;
  if (pid == 0) {
    pause();
    _exit(0);
  }
  return pid;
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
  pid = paused_child();
  if (pid < 0)
    return pid;
  int r = res(ptrace(PTRACE_SEIZE, pid, 0, 0));
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  return r;
}

/* Another process's fd 0 (a child's, or ARG's): what ptrace would give, by
 * pidfd_getfd (438), which takes the same access check (PTRACE_MODE_ATTACH). */
static int p_pidfd_getfd(void)
{
  pid_t pid;
  int r;
  if (arg) {
    if (parse_num(arg, 1, 4194304, &pid) < 0)
      return -EINVAL;
  } else if ((pid = paused_child()) < 0) {
    return pid;
  }
  long pidfd = syscall(434 /* pidfd_open */, pid, 0);
  r = pidfd < 0 ? -errno : fdres(syscall(438, (int)pidfd, 0, 0));
  if (pidfd >= 0)
    close((int)pidfd);
  if (!arg) {
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
  }
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

/* socket(FAMILY, SOCK_STREAM, 0), closed at once: nothing bound or connected. */
static int p_socket(int family)
{
  return fdres(socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0));
}

static int p_socket_vsock(void)
{
  return p_socket(AF_VSOCK);
}

static int p_socket_inet(void)
{
  return p_socket(AF_INET);
}

static int p_socket_unix(void)
{
  return p_socket(AF_UNIX);
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

/* ---- the i386 and x32 ABIs of an x86-64 kernel
 *
 * Every pointer passed through `int 0x80` is truncated to 32 bits, so the arguments live in
 * static storage (this program is linked statically without PIE: below 4 GiB; checked). */
#if defined(__x86_64__)
#define X32_BIT 0x40000000L
#define CLOCK_RT 0
#define AT_CWD (-100L)

static char s_none[] = "none", s_root[] = "/", s_fs[] = "agentrt-no-such-fs",
            s_fd[] = "/proc/self/fd", s_a[] = "/nonexistent-agentrt-a",
            s_b[] = "/nonexistent-agentrt-b", s_tmpfs[] = "tmpfs", s_user[] = "user",
            s_desc[] = "agentrt-probe", s_nokey[] = "agentrt-no-such-key", s_x[] = "x",
            s_empty[] = "", s_mod[] = "agentrt_no_such_module";
static char buf4[4], tio_c = ' ';
static union bpf_attr bpf_a;
static struct perf_event_attr perf_a;
static struct io_uring_params uring_p;
static int ts32[2] = {0, 2000000000};         /* i386's old timespec, invalid nsec */
static long long ts64[2] = {0, 2000000000LL}; /* __kernel_timespec, invalid nsec */
static long long timex_buf[64];               /* modes 0: a read, nothing is set */

static long sys_i386(long nr, const long a[6])
{
  long r;
  register long r8 __asm__("r8") = 0; /* older kernels cleared r8-r11 in int 0x80 */
  register long r9 __asm__("r9") = 0;
  register long r10 __asm__("r10") = 0;
  register long r11 __asm__("r11") = 0;
  register long r12 __asm__("r12") = a[5]; /* the 6th argument goes in ebp */

  __asm__ volatile("mov %%rbp, %%r13\n\tmov %%r12, %%rbp\n\tint $0x80\n\tmov %%r13, %%rbp"
                   : "=a"(r), "+r"(r8), "+r"(r9), "+r"(r10), "+r"(r11)
                   : "a"(nr), "b"(a[0]), "c"(a[1]), "d"(a[2]), "S"(a[3]), "D"(a[4]), "r"(r12)
                   : "r13", "memory", "cc");
  if (r < 0 && r > -4096) {
    errno = (int)-r;
    return -1;
  }
  return r;
}

static long sys_x32(long nr, const long a[6])
{
  return syscall(nr | X32_BIT, a[0], a[1], a[2], a[3], a[4], a[5]);
}

#define P(x) ((long)(uintptr_t)(x))
#define NONE (-1)

/* A call with harmless arguments: what it returns when allowed is in the comment. */
static const struct abi_call {
  const char *name;
  int i386, x32; /* numbers; x32 without its 0x40000000 bit; NONE: no such call there */
  int kind;      /* 0 status, 1 an fd to close, 2 a child to reap, 3 run in a new session */
  long a[6];
} abi_calls[] = {
    {"unshare", 310, 272, 0, {CLONE_NEWUSER}}, /* the namespace dies with us */
    {"clone-newuser", 120, 56, 2, {CLONE_NEWUSER | SIGCHLD}},
    {"setns", 346, 308, 0, {-1, 0}},                                  /* EBADF */
    {"mount", 21, 165, 0, {P(s_none), P(s_root), P(s_fs), 0, 0}},     /* ENODEV */
    {"umount", 22, NONE, 0, {P(s_fd)}},                               /* EINVAL */
    {"umount2", 52, 166, 0, {P(s_fd), 0}},                            /* EINVAL */
    {"fsopen", 430, 430, 1, {P(s_tmpfs), 1}},                         /* an fd */
    {"fsconfig", 431, 431, 0, {-1, 0, 0, 0, 0}},                      /* EBADF */
    {"fsmount", 432, 432, 0, {-1, 0, 0}},                             /* EBADF */
    {"fspick", 433, 433, 0, {AT_CWD, P(s_a), 0}},                     /* ENOENT */
    {"move_mount", 429, 429, 0, {AT_CWD, P(s_a), AT_CWD, P(s_b), 0}}, /* ENOENT */
    {"open_tree", 428, 428, 1, {AT_CWD, P(s_a), 0}},                  /* ENOENT */
    {"open_tree_attr", 467, 467, 1, {AT_CWD, P(s_a), 0, 0, 0}},       /* ENOENT */
    {"pivot_root", 217, 155, 0, {P(s_a), P(s_b)}},                    /* ENOENT */
    {"mount_setattr", 442, 442, 0, {-1, P(s_a), 0, 0, 0}},            /* EINVAL */
    {"bpf", 357, 321, 1, {BPF_MAP_CREATE, P(&bpf_a), sizeof bpf_a}},  /* an fd */
    {"perf_event_open", 336, 298, 1, {P(&perf_a), 0, -1, -1, 0}},     /* an fd */
    {"keyctl", 288, 250, 0, {0 /* GET_KEYRING_ID */, -3 /* session */, 0}},
    {"add_key", 286, 248, 0, {P(s_user), P(s_desc), P(s_x), 1, -2 /* process keyring */}},
    {"request_key", 287, 249, 0, {P(s_user), P(s_nokey), 0, 0}}, /* ENOKEY */
    {"ptrace", 26, 521, 0, {0x4206 /* PTRACE_SEIZE */, 0 /* our child */}},
    {"process_vm_readv", 347, 539, 0, {0 /* us */, 0, 0, 0, 0, 0}},   /* 0 bytes */
    {"process_vm_writev", 348, 540, 0, {0, 0, 0, 0, 0, 0}},           /* 0 bytes */
    {"pidfd_getfd", 438, 438, 0, {-1, 0, 0}},                         /* EBADF */
    {"process_madvise", 440, 440, 0, {-1, 0, 0, 0, 0}},               /* EBADF */
    {"userfaultfd", 374, 323, 1, {O_CLOEXEC}},                        /* an fd */
    {"io_uring_setup", 425, 425, 1, {1, P(&uring_p)}},                /* an fd */
    {"io_uring_enter", 426, 426, 0, {-1, 0, 0, 0, 0, 0}},             /* EBADF */
    {"io_uring_register", 427, 427, 0, {-1, 0, 0, 0}},                /* EBADF */
    {"init_module", 128, 175, 0, {P(buf4), sizeof buf4, P(s_empty)}}, /* ENOEXEC */
    {"finit_module", 350, 313, 0, {-1, P(s_empty), 0}},               /* EBADF */
    {"delete_module", 129, 176, 0, {P(s_mod), O_NONBLOCK}},           /* ENOENT */
    {"kexec_load", 283, 528, 0, {0, 1000, 0, 0}},                     /* EINVAL */
    {"kexec_file_load", NONE, 320, 0, {-1, -1, 0, 0, 0x80000000L}},   /* EINVAL */
    {"open_by_handle_at", 342, 304, 0, {-1, 0, 0}},                   /* EBADF */
    {"name_to_handle_at", 341, 303, 0, {AT_CWD, P(s_a), 0, 0, 0}},    /* ENOENT */
    {"clock_settime", 264, 227, 0, {CLOCK_RT, 0 /* ts */}},           /* EINVAL */
    {"clock_settime64", 404, NONE, 0, {CLOCK_RT, P(ts64)}},           /* EINVAL */
    {"clock_adjtime", 343, 305, 0, {CLOCK_RT, P(timex_buf)}},         /* a read */
    {"clock_adjtime64", 405, NONE, 0, {CLOCK_RT, P(timex_buf)}},      /* a read */
    {"settimeofday", 79, 164, 0, {0, 0}},                             /* nothing to set */
    {"stime", 25, NONE, 0, {0}},                                      /* EFAULT */
    {"adjtimex", 124, 159, 0, {P(timex_buf)}},                        /* a read */
    {"reboot", 88, 169, 0, {0x12345678, 0x12345678, 0x4321fedc, 0}},  /* EINVAL */
    {"swapon", 87, 167, 0, {P(s_a), 0}},                              /* ENOENT */
    {"swapoff", 115, 168, 0, {P(s_a)}},                               /* ENOENT */
    {"acct", 51, 163, 0, {P(s_a)}},                                   /* ENOENT */
    {"syslog", 103, 103, 0, {10 /* SIZE_BUFFER */, 0, 0}},            /* a read */
    {"kcmp", 349, 312, 0, {0 /* us */, 0, 0 /* KCMP_FILE */, 0, 0}},  /* a compare */
    {"personality", 136, 135, 0, {0xffffffffL}},                      /* a query */
    {"quotactl", 131, 179, 0, {0, 0, 0, 0}},                          /* EINVAL */
    {"quotactl_fd", 443, 443, 0, {-1, 0, 0, 0}},                      /* EBADF */
    {"lookup_dcookie", 253, 212, 0, {0, 0, 0}},                       /* EINVAL/ENOSYS */
    {"vhangup", 111, 153, 3, {0}}, /* no controlling terminal: nothing to hang up */
    {"tiocsti", 54, 514, 0, {0 /* ARG or stdin */, TIOCSTI, P(&tio_c)}},
    /* i386's direct socket (Linux 4.3), not socketcall: an fd */
    {"socket-vsock", 359, 41, 1, {AF_VSOCK, SOCK_STREAM, 0}},
    {"getpid", 20, 39, 0, {0}}, /* allowed everywhere: the control */
};

static const struct abi_call *abi_find(const char *name)
{
  for (size_t i = 0; i < sizeof(abi_calls) / sizeof(abi_calls[0]); i++)
    if (strcmp(abi_calls[i].name, name) == 0)
      return &abi_calls[i];
  return NULL;
}

/* 0 / -errno; 1: no such probe; 2: no such call on that ABI, or it cannot run here */
static int run_abi(bool i386, const char *name)
{
  const struct abi_call *c = abi_find(name);
  long a[6], r;
  pid_t child = -1;
  int nr;

  if (c == NULL)
    return 1;
  if ((nr = i386 ? c->i386 : c->x32) == NONE) {
    fprintf(stderr, "try-syscall: no %s on the %s ABI\n", name, i386 ? "i386" : "x32");
    return 2;
  }
  if ((uintptr_t)&timex_buf > 0xffffffffu) {
    fprintf(stderr, "try-syscall: static data above 4 GiB: build without PIE\n");
    return 2;
  }
  memcpy(a, c->a, sizeof a);
  ts32[1] = 2000000000;
  if (strcmp(name, "clock_settime") == 0)
    a[1] = i386 ? P(ts32) : P(ts64);
  bpf_a.map_type = BPF_MAP_TYPE_ARRAY;
  bpf_a.key_size = bpf_a.value_size = bpf_a.max_entries = 4;
  perf_a.type = PERF_TYPE_SOFTWARE;
  perf_a.size = sizeof perf_a;
  perf_a.config = PERF_COUNT_SW_CPU_CLOCK;
  perf_a.disabled = 1;
  if (strcmp(name, "process_vm_readv") == 0 || strcmp(name, "process_vm_writev") == 0 ||
      strcmp(name, "kcmp") == 0)
    a[0] = getpid(), a[1] = strcmp(name, "kcmp") == 0 ? getpid() : 0;
  if (strcmp(name, "tiocsti") == 0 && arg) {
    int fd;
    if (parse_num(arg, 0, 1 << 20, &fd) < 0)
      return -EINVAL;
    a[0] = fd;
  }
  if (strcmp(name, "ptrace") == 0) {
    child = paused_child();
    if (child < 0)
      return child;
    a[1] = child;
  }
  if (c->kind == 3) {
    int st;
    child = fork();
    if (child < 0)
      return -errno;
    if (child == 0) {
      if (setsid() < 0)
        _exit(255);
      r = i386 ? sys_i386(nr, a) : sys_x32(nr, a);
      _exit(r < 0 ? (errno & 0xff) : 0);
    }
    if (waitpid(child, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) == 255)
      return -ECHILD;
    return -WEXITSTATUS(st);
  }
  r = i386 ? sys_i386(nr, a) : sys_x32(nr, a);
  if (r < 0)
    r = -errno;
  if (child > 0) {
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
  }
  if (r >= 0 && c->kind == 1)
    close((int)r);
  if (r == 0 && c->kind == 2)
    syscall(SYS_exit, 0); /* the child of clone: nothing of ours may run in it */
  if (r > 0 && c->kind == 2)
    waitpid((pid_t)r, NULL, 0);
  return r < 0 ? (int)r : 0;
}
/* Does `int 0x80` reach the kernel here?  NULL when it does, else why not. */
static const char *i386_unusable(void)
{
  static const long none[6];
  int status = 0;
  pid_t pid = fork();

  if (pid == 0) {
    signal(SIGSEGV, SIG_DFL);
    _exit(sys_i386(20 /* getpid */, none) == getpid() ? 0 : 1);
  }
  if (pid < 0 || waitpid(pid, &status, 0) < 0)
    return "fork failed";
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV)
    return "int 0x80 faults on this kernel (no i386 entry from user space)";
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? NULL : "int 0x80 getpid gave another pid";
}
#else
static const char *i386_unusable(void)
{
  return "not x86-64";
}

static int run_abi(bool i386, const char *name)
{
  (void)i386;
  (void)name;
  fprintf(stderr, "try-syscall: the i386 and x32 probes are for x86-64\n");
  return 2;
}
#endif

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
    {"open_tree_attr", p_open_tree_attr},
    {"move_mount", p_move_mount},
    {"ptrace", p_ptrace},
    {"process_vm_readv", p_process_vm_readv},
    {"pidfd_getfd", p_pidfd_getfd},
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
    {"socket-vsock", p_socket_vsock},
    {"socket-inet", p_socket_inet},
    {"socket-unix", p_socket_unix},
    {"chroot", p_chroot},
    {"mknod-block", p_mknod_block},
};

static int run(const char *name)
{
  if (strncmp(name, "i386:", 5) == 0)
    return run_abi(true, name + 5);
  if (strncmp(name, "x32:", 4) == 0)
    return run_abi(false, name + 4);
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

/* report NAME: run probe NAME and print its result ("ok", the errno's name), prefixed by
 * "NAME=" when each is set.  0, or 2 for a usage error. */
static int report(const char *name, bool each)
{
  int r = run(name);

  if (r == 2)
    return 2;
  if (r == 1) {
    fprintf(stderr, "try-syscall: unknown probe `%s'\n", name);
    return 2;
  }
  if (each)
    printf("%s=", name);
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

static int run_each(int n, char **names)
{
  int rc = 0;

  for (int i = 0; i < n; i++) {
    int st;
    pid_t pid;

    fflush(stdout);
    pid = fork();
    if (pid < 0) {
      perror("try-syscall: fork");
      return 2;
    }
    if (pid == 0) {
      int r = report(names[i], true);
      fflush(stdout);
      _exit(r);
    }
    if (waitpid(pid, &st, 0) < 0) {
      perror("try-syscall: waitpid");
      return 2;
    }
    if (WIFSIGNALED(st)) {
      const char *sig = sigabbrev_np(WTERMSIG(st));
      printf("%s=SIG%s\n", names[i], sig ? sig : "?");
    } else if (WEXITSTATUS(st) != 0) {
      rc = 2;
    }
  }
  return rc;
}

/* --session-key DESC DATA CMD...: the caller of a runtime whose session keyring holds a secret
 * (a login's, a Kerberos ticket's).  A fresh anonymous one, so the test's own is untouched. */
static int session_key_exec(char **argv)
{
  long kr = syscall(SYS_keyctl, 1 /* JOIN_SESSION_KEYRING */, NULL);
  if (kr < 0 || syscall(SYS_add_key, "user", argv[0], argv[1], strlen(argv[1]), -3L) < 0) {
    perror("try-syscall: --session-key");
    return 2;
  }
  execvp(argv[2], argv + 2);
  perror("try-syscall: --session-key: exec");
  return 2;
}

/* --find-session-key DESC: what a process finds by searching its session keyring. */
static int find_session_key(const char *desc)
{
  char buf[256];
  long k = syscall(SYS_keyctl, 10 /* SEARCH */, -3L /* session */, "user", desc, 0L);
  long n = k < 0 ? k : syscall(SYS_keyctl, 11 /* READ */, k, buf, sizeof(buf) - 1);

  if (n < 0) {
    const char *name = strerrorname_np(errno);
    puts(name ? name : "E?");
    return 0;
  }
  buf[n < (long)sizeof(buf) ? n : (long)sizeof(buf) - 1] = '\0';
  puts(buf);
  return 0;
}

int main(int argc, char **argv)
{
  if (argc >= 5 && strcmp(argv[1], "--session-key") == 0)
    return session_key_exec(argv + 2);
  if (argc == 3 && strcmp(argv[1], "--find-session-key") == 0)
    return find_session_key(argv[2]);
  if (argc >= 2 && strcmp(argv[1], "--each") == 0)
    return run_each(argc - 2, argv + 2);
  if (argc < 2 || argc > 3 || strcmp(argv[1], "--help") == 0) {
    fprintf(stderr, "usage: try-syscall NAME [ARG] | --each NAME...\nnames:");
    for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++)
      fprintf(stderr, " %s", probes[i].name);
    fputc('\n', stderr);
    return 2;
  }
  if (strcmp(argv[1], "--abi-list") == 0) {
#if defined(__x86_64__)
    for (size_t i = 0; i < sizeof(abi_calls) / sizeof(abi_calls[0]); i++)
      printf("%s i386=%d x32=%d\n", abi_calls[i].name, abi_calls[i].i386, abi_calls[i].x32);
#endif
    return 0;
  }
  if (strcmp(argv[1], "--abi-usable") == 0 && argc == 3 && strcmp(argv[2], "i386") == 0) {
    const char *why = i386_unusable();
    if (why == NULL)
      puts("yes");
    else
      printf("no: %s\n", why);
    return 0;
  }
  arg = argc == 3 ? argv[2] : NULL;
  return report(argv[1], false);
}
