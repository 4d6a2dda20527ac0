/* test_seccomp.c - seccomp_build/export/load from hand-built structs.
 *
 * Each filter is installed in a forked child (with no_new_privs) which then
 * makes the syscall under test and exits with the errno it saw (0 = success);
 * the parent checks the exit status or the killing signal.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/util.h"
#include "container/process.h"
#include "container/seccomp_cache.h"
#include "container/seccomp_filter.h"
#include "tests/unit/tap.h"

static char tmpdir[] = "/tmp/agentrt-test-seccomp-XXXXXX";

/* errno of a raw syscall, 0 on success */
static int sys_errno(long r)
{
  return r < 0 ? errno : 0;
}

static int try_mkdirat(void)
{
  char path[128];
  snprintf(path, sizeof path, "%s/d%d", tmpdir, (int)getpid());
  return sys_errno(syscall(SYS_mkdirat, AT_FDCWD, path, 0700));
}

static int try_getppid_then_getpid(void)
{
  /* default ERRNO(38): getppid denied; getpid allowed */
  long r = syscall(SYS_getppid);
  if (r >= 0)
    return 100;
  if (errno != ENOSYS)
    return 101;
  return syscall(SYS_getpid) > 0 ? 0 : 102;
}

enum load_mode { LOAD_APPLY, LOAD_BPF };

/* Fork, install s (or the exported BPF) with no_new_privs, run fn; returns the
 * wait status, or -1 when the filter could not be built/exported. */
static int run_filtered(const struct oci_seccomp *s, enum load_mode mode, int (*fn)(void),
                        char *errbuf, size_t errlen)
{
  struct error err = {0};
  cleanup_free void *bpf = NULL;
  size_t len = 0;
  unsigned flags = 0;
  int status = -1;
  pid_t pid;

  if (mode == LOAD_BPF &&
      (seccomp_export(s, &bpf, &len, &err) < 0 || seccomp_kernel_flags(s, &flags, &err) < 0)) {
    snprintf(errbuf, errlen, "%s", err.msg);
    return -1;
  }
  pid = fork();
  if (pid == 0) {
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
      _exit(200);
    if (mode == LOAD_APPLY ? seccomp_apply(s, &err) < 0
                           : seccomp_load_bpf(bpf, len, flags, &err) < 0) {
      (void)!write(2, err.msg, strlen(err.msg));
      (void)!write(2, "\n", 1);
      _exit(201);
    }
    _exit(fn());
  }
  waitpid(pid, &status, 0);
  snprintf(errbuf, errlen, "status 0x%x", status);
  return status;
}

static bool exited_with(int status, int code)
{
  return status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == code;
}

static bool killed_by(int status, int sig)
{
  return status >= 0 && WIFSIGNALED(status) && WTERMSIG(status) == sig;
}

static char *mkdir_names[] = {"mkdir", "mkdirat", NULL};

static void test_basic_errno(void)
{
  char msg[ERROR_MSG_MAX];
  struct oci_seccomp_syscall sc = {.names = mkdir_names, .action = "SCMP_ACT_ERRNO"};
  struct oci_seccomp s = {.default_action = "SCMP_ACT_ALLOW", .syscalls = &sc, .n_syscalls = 1};
  int st;

  st = run_filtered(&s, LOAD_APPLY, try_mkdirat, msg, sizeof msg);
  tap_ok(exited_with(st, EPERM), "allow + mkdir ERRNO -> mkdir fails EPERM (%s)", msg);

  sc.has_errno_ret = true;
  sc.errno_ret = 38;
  st = run_filtered(&s, LOAD_APPLY, try_mkdirat, msg, sizeof msg);
  tap_ok(exited_with(st, 38), "errnoRet 38 -> ENOSYS (%s)", msg);

  st = run_filtered(&s, LOAD_BPF, try_mkdirat, msg, sizeof msg);
  tap_ok(exited_with(st, 38), "exported BPF loaded with seccomp_load_bpf (%s)", msg);

  sc.action = "SCMP_ACT_KILL_PROCESS";
  st = run_filtered(&s, LOAD_APPLY, try_mkdirat, msg, sizeof msg);
  tap_ok(killed_by(st, SIGSYS), "KILL_PROCESS -> SIGSYS (%s)", msg);

  sc.action = "SCMP_ACT_TRAP";
  st = run_filtered(&s, LOAD_APPLY, try_mkdirat, msg, sizeof msg);
  tap_ok(killed_by(st, SIGSYS), "TRAP -> SIGSYS (%s)", msg);

  sc.action = "SCMP_ACT_LOG";
  st = run_filtered(&s, LOAD_APPLY, try_mkdirat, msg, sizeof msg);
  tap_ok(exited_with(st, 0), "LOG -> allowed (%s)", msg);

  sc.action = "SCMP_ACT_ALLOW"; /* same as default: dropped, not an error */
  st = run_filtered(&s, LOAD_APPLY, try_mkdirat, msg, sizeof msg);
  tap_ok(exited_with(st, 0), "rule equal to defaultAction is skipped (%s)", msg);
}

static void test_default_errno(void)
{
  char msg[ERROR_MSG_MAX];
  /* the memory/signal calls are for sanitizer runtimes (make SANITIZE=...) */
  char *allow[] = {"getpid", "exit",           "exit_group",   "write",
                   "mmap",   "munmap",         "mprotect",     "madvise",
                   "brk",    "rt_sigprocmask", "rt_sigaction", "sigaltstack",
                   "futex",  "prlimit64",      "getrlimit",    NULL};
  struct oci_seccomp_syscall sc = {.names = allow, .action = "SCMP_ACT_ALLOW"};
  struct oci_seccomp s = {.default_action = "SCMP_ACT_ERRNO",
                          .has_default_errno_ret = true,
                          .default_errno_ret = ENOSYS,
                          .syscalls = &sc,
                          .n_syscalls = 1};
  int st = run_filtered(&s, LOAD_APPLY, try_getppid_then_getpid, msg, sizeof msg);

  tap_ok(exited_with(st, 0), "defaultAction ERRNO + defaultErrnoRet 38, allowlist (%s)", msg);
  st = run_filtered(&s, LOAD_BPF, try_getppid_then_getpid, msg, sizeof msg);
  tap_ok(exited_with(st, 0), "same through exported BPF (%s)", msg);
}

static void test_unknown_names(void)
{
  char msg[ERROR_MSG_MAX];
  char *names[] = {"no_such_syscall_agentrt", "mkdirat", "mkdir", "also_not_a_syscall", NULL};
  struct oci_seccomp_syscall sc = {.names = names, .action = "SCMP_ACT_ERRNO"};
  struct oci_seccomp s = {.default_action = "SCMP_ACT_ALLOW", .syscalls = &sc, .n_syscalls = 1};
  int st = run_filtered(&s, LOAD_APPLY, try_mkdirat, msg, sizeof msg);

  tap_ok(exited_with(st, EPERM), "unknown syscall names are skipped (%s)", msg);
}

/* dup() probes for the argument tests: fds 7 and 9 exist in the child. */
static int dup_errno(int fd)
{
  long r = syscall(SYS_dup, fd);
  if (r >= 0)
    close((int)r);
  return r < 0 ? errno : 0;
}

static int expect_mask; /* bit n set: dup(n) must fail EPERM, for n in {0,1,2,7,9} */
static int check_dups(void)
{
  static const int fds[] = {0, 1, 2, 7, 9};
  for (size_t i = 0; i < ARRAY_SIZE(fds); i++) {
    int e = dup_errno(fds[i]);
    bool want = expect_mask & (1 << fds[i]);
    if (want ? e != EPERM : e != 0)
      return 10 + fds[i];
  }
  return 0;
}

static void test_args(void)
{
  char msg[ERROR_MSG_MAX];
  char *dup_names[] = {"dup", NULL};
  struct oci_seccomp_arg args[2];
  struct oci_seccomp_syscall sc = {
      .names = dup_names, .action = "SCMP_ACT_ERRNO", .args = args, .n_args = 1};
  struct oci_seccomp s = {.default_action = "SCMP_ACT_ALLOW", .syscalls = &sc, .n_syscalls = 1};
  static const struct {
    const char *op;
    uint64_t v, v2;
    int mask;
  } ops[] = {
      {"SCMP_CMP_EQ", 7, 0, 1 << 7},
      {"SCMP_CMP_NE", 7, 0, (1 << 0) | (1 << 1) | (1 << 2) | (1 << 9)},
      {"SCMP_CMP_LT", 2, 0, (1 << 0) | (1 << 1)},
      {"SCMP_CMP_LE", 2, 0, (1 << 0) | (1 << 1) | (1 << 2)},
      {"SCMP_CMP_GT", 7, 0, 1 << 9},
      {"SCMP_CMP_GE", 7, 0, (1 << 7) | (1 << 9)},
      {"SCMP_CMP_MASKED_EQ", 0x3, 0x1, (1 << 1) | (1 << 9)}, /* fd & 3 == 1 */
  };

  dup2(1, 7);
  dup2(1, 9);
  for (size_t i = 0; i < ARRAY_SIZE(ops); i++) {
    args[0] = (struct oci_seccomp_arg){
        .index = 0, .value = ops[i].v, .value_two = ops[i].v2, .op = (char *)ops[i].op};
    expect_mask = ops[i].mask;
    tap_ok(exited_with(run_filtered(&s, LOAD_APPLY, check_dups, msg, sizeof msg), 0),
           "arg filter %s (%s)", ops[i].op, msg);
  }
  /* two conditions on the same index: OR (separate rules), like runc */
  args[0] = (struct oci_seccomp_arg){.index = 0, .value = 0, .op = "SCMP_CMP_EQ"};
  args[1] = (struct oci_seccomp_arg){.index = 0, .value = 9, .op = "SCMP_CMP_EQ"};
  sc.n_args = 2;
  expect_mask = (1 << 0) | (1 << 9);
  tap_ok(exited_with(run_filtered(&s, LOAD_APPLY, check_dups, msg, sizeof msg), 0),
         "repeated argument index -> OR (%s)", msg);
  close(7);
  close(9);
}

static int try_dup3s(void)
{
  long a = syscall(SYS_dup3, 1, 9, 0), b = syscall(SYS_dup3, 1, 8, 0),
       c = syscall(SYS_dup3, 2, 9, 0);
  if (!(a < 0 && errno == EPERM))
    return 1;
  return b >= 0 && c >= 0 ? 0 : 2;
}

static void test_args_and(void)
{
  char msg[ERROR_MSG_MAX];
  char *names[] = {"dup3", NULL};
  struct oci_seccomp_arg args[2] = {{.index = 0, .value = 1, .op = "SCMP_CMP_EQ"},
                                    {.index = 1, .value = 9, .op = "SCMP_CMP_EQ"}};
  struct oci_seccomp_syscall sc = {
      .names = names, .action = "SCMP_ACT_ERRNO", .args = args, .n_args = 2};
  struct oci_seccomp s = {.default_action = "SCMP_ACT_ALLOW", .syscalls = &sc, .n_syscalls = 1};

  tap_ok(exited_with(run_filtered(&s, LOAD_APPLY, try_dup3s, msg, sizeof msg), 0),
         "conditions on distinct indexes -> AND (%s)", msg);
}

static void test_arch_flags(void)
{
  char msg[ERROR_MSG_MAX];
  char *archs[] = {"SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32", "SCMP_ARCH_AARCH64", NULL};
  char *flags[] = {"SECCOMP_FILTER_FLAG_TSYNC", "SECCOMP_FILTER_FLAG_LOG",
                   "SECCOMP_FILTER_FLAG_SPEC_ALLOW", NULL};
  struct oci_seccomp_syscall sc = {.names = mkdir_names, .action = "SCMP_ACT_ERRNO"};
  struct oci_seccomp s = {.default_action = "SCMP_ACT_ALLOW",
                          .architectures = archs,
                          .flags = flags,
                          .syscalls = &sc,
                          .n_syscalls = 1};
  unsigned kf = 0;
  struct error err = {0};

  tap_ok(exited_with(run_filtered(&s, LOAD_APPLY, try_mkdirat, msg, sizeof msg), EPERM),
         "architectures + flags TSYNC/LOG/SPEC_ALLOW (%s)", msg);
  tap_ok(exited_with(run_filtered(&s, LOAD_BPF, try_mkdirat, msg, sizeof msg), EPERM),
         "multi-arch BPF export + load with kernel flags (%s)", msg);
  int r = seccomp_kernel_flags(&s, &kf, &err);

  tap_ok(r == 0 && kf == 7, "kernel flags = 0x%x", kf);
}

/* Builds that must fail, and the text the error must contain. */
static void expect_build_error(struct oci_seccomp *s, const char *needle, const char *what)
{
  struct error err = {0};
  scmp_filter_ctx ctx = NULL;
  int r = seccomp_build(s, &ctx, &err);

  if (ctx != NULL)
    seccomp_release(ctx);
  tap_ok(r < 0 && strstr(err.msg, needle) != NULL, "%s: %s", what, err.msg);
}

static void test_errors(void)
{
  char *bad_arch[] = {"SCMP_ARCH_PDP11", NULL};
  char *bad_flag[] = {"SECCOMP_FILTER_FLAG_BOGUS", NULL};
  struct oci_seccomp_arg arg = {.index = 0, .op = "SCMP_CMP_SOMETIMES"};
  struct oci_seccomp_syscall sc = {.names = mkdir_names, .action = "SCMP_ACT_BOGUS"};
  struct oci_seccomp s = {.default_action = "SCMP_ACT_ALLOW", .syscalls = &sc, .n_syscalls = 1};

  expect_build_error(&s, "unknown action `SCMP_ACT_BOGUS`", "bad rule action");
  sc.action = "SCMP_ACT_NOTIFY";
  {
    struct error e = {0};
    scmp_filter_ctx ctx = NULL;
    tap_ok(seccomp_build(&s, &ctx, &e) == 0, "a SCMP_ACT_NOTIFY rule builds: %s", e.msg);
    if (ctx != NULL)
      seccomp_release(ctx);
  }
  sc.action = "SCMP_ACT_ERRNO";
  sc.args = &arg;
  sc.n_args = 1;
  expect_build_error(&s, "unknown operator `SCMP_CMP_SOMETIMES`", "bad operator");
  arg.op = "SCMP_CMP_EQ";
  arg.index = 6;
  expect_build_error(&s, "argument index 6 out of range", "bad argument index");
  sc.n_args = 0;
  sc.has_errno_ret = true;
  sc.errno_ret = 70000;
  expect_build_error(&s, "errnoRet 70000 out of range", "errnoRet too large");
  sc.has_errno_ret = false;

  s.default_action = "SCMP_ACT_NOPE";
  expect_build_error(&s, "defaultAction: unknown action `SCMP_ACT_NOPE`", "bad defaultAction");
  s.default_action = NULL;
  expect_build_error(&s, "missing action", "missing defaultAction");
  s.default_action = "SCMP_ACT_ALLOW";
  s.architectures = bad_arch;
  expect_build_error(&s, "unknown architecture `SCMP_ARCH_PDP11`", "bad architecture");
  s.architectures = NULL;
  s.flags = bad_flag;
  expect_build_error(&s, "unknown flag `SECCOMP_FILTER_FLAG_BOGUS`", "bad flag");
}

static void test_load_bpf_errors(void)
{
  struct error err = {0};
  char junk[12] = {0};

  tap_ok(seccomp_load_bpf(junk, sizeof junk, 0, &err) < 0 && strstr(err.msg, "invalid BPF"),
         "seccomp_load_bpf rejects a truncated program: %s", err.msg);
}

/* The profile filter's notify variant (refused-syscall records): the
 * internal action compiles to SECCOMP_RET_USER_NOTIF. */
static void test_internal_notify(void)
{
  struct oci_seccomp_syscall sc = {.names = mkdir_names, .action = SECCOMP_ACT_NOTIFY_INTERNAL};
  struct oci_seccomp s = {.default_action = "SCMP_ACT_ALLOW", .syscalls = &sc, .n_syscalls = 1};
  struct error err = {0};
  void *bpf = NULL;
  size_t len = 0;
  bool notify = false, errno_ret = false;

  tap_ok(seccomp_export(&s, &bpf, &len, &err) == 0, "the notify variant compiles: %s", err.msg);
  for (size_t i = 0; bpf != NULL && i < len / sizeof(struct sock_filter); i++) {
    const struct sock_filter *f = (const struct sock_filter *)bpf + i;
    if (BPF_CLASS(f->code) == BPF_RET && (f->k & 0xffff0000u) == 0x7fc00000u)
      notify = true;
    if (BPF_CLASS(f->code) == BPF_RET && (f->k & 0xffff0000u) == 0x00050000u)
      errno_ret = true;
  }
  tap_ok(notify && !errno_ret, "its denied call returns SECCOMP_RET_USER_NOTIF, not an errno");
  free(bpf);
}

/* the profile names getpid, write, the memory calls and exit_group (231,
 * the newest); openat2 (437) and faccessat2 (439) are newer */
static int try_openat2_then_getppid(void)
{
  long r = syscall(437, AT_FDCWD, "/nonexistent", NULL, 0);
  if (r >= 0 || errno != ENOSYS)
    return 100;
  r = syscall(439, AT_FDCWD, "/nonexistent", 0, 0); /* faccessat2: newer too */
  if (r >= 0 || errno != ENOSYS)
    return 101;
  r = syscall(SYS_getppid); /* 110 < 231, not listed: the default errno */
  if (r >= 0 || errno != EACCES)
    return 102;
  return syscall(SYS_getpid) > 0 ? 0 : 103;
}

static void test_enosys_newer(void)
{
  /* the memory calls and exit_group keep a sanitizer's runtime alive in the child */
  char *allow[] = {"getpid",       "exit",        "exit_group", "write",   "mmap",
                   "munmap",       "mprotect",    "brk",        "madvise", "rt_sigprocmask",
                   "rt_sigaction", "sigaltstack", "futex",      NULL};
  char *clone_names[] = {"clone", NULL};
  struct oci_seccomp_syscall sc[] = {{.names = allow, .action = "SCMP_ACT_ALLOW"}};
  struct oci_seccomp s = {.default_action = "SCMP_ACT_ERRNO",
                          .has_default_errno_ret = true,
                          .default_errno_ret = EACCES,
                          .syscalls = sc,
                          .n_syscalls = 1};
  struct oci_seccomp_syscall sc2[] = {{.names = clone_names, .action = "SCMP_ACT_ERRNO"}};
  struct oci_seccomp allow_default = {
      .default_action = "SCMP_ACT_ALLOW", .syscalls = sc2, .n_syscalls = 1};
  struct error err = {0};
  cleanup_free void *bpf = NULL;
  size_t len = 0;
  char msg[128];
  int st;

  st = run_filtered(&s, LOAD_APPLY, try_openat2_then_getppid, msg, sizeof msg);
  tap_ok(exited_with(st, 0), "deny-by-default: syscalls past the newest named get ENOSYS (%s)",
         msg);
  st = run_filtered(&s, LOAD_BPF, try_openat2_then_getppid, msg, sizeof msg);
  tap_ok(exited_with(st, 0), "... also through the exported BPF (%s)", msg);
  tap_ok(seccomp_export(&allow_default, &bpf, &len, &err) == 0 && len >= sizeof(struct sock_filter),
         "allow-by-default exports: %s", err.msg);
  {
    const struct sock_filter *f = bpf;
    bool enosys = false;
    for (size_t i = 0; f && i < len / sizeof *f; i++)
      enosys |= f[i].code == (BPF_RET | BPF_K) && f[i].k == (SECCOMP_RET_ERRNO | ENOSYS);
    tap_ok(!enosys, "allow-by-default: no ENOSYS stub");
  }
}

/* open_tree_attr (467, Linux 6.15) is newer than libseccomp 2.5: the filter's
 * own prefix refuses it (on an older kernel the filter answers first too) */
static int try_open_tree_attr(void)
{
  long r = syscall(467, AT_FDCWD, "/", 0, NULL, 0);
  if (r >= 0 || errno != EACCES)
    return 100;
  return syscall(SYS_getpid) > 0 ? 0 : 101;
}

static void test_late_names(void)
{
  char *names[] = {"open_tree", "open_tree_attr", NULL};
  struct oci_seccomp_syscall sc[] = {
      {.names = names, .action = "SCMP_ACT_ERRNO", .has_errno_ret = true, .errno_ret = EACCES}};
  struct oci_seccomp s = {.default_action = "SCMP_ACT_ALLOW", .syscalls = sc, .n_syscalls = 1};
  char msg[128];
  int st;

  st = run_filtered(&s, LOAD_APPLY, try_open_tree_attr, msg, sizeof msg);
  tap_ok(exited_with(st, 0), "open-tree-attr-bypass: a call newer than libseccomp is denied (%s)",
         msg);
  st = run_filtered(&s, LOAD_BPF, try_open_tree_attr, msg, sizeof msg);
  tap_ok(exited_with(st, 0), "... also through the exported BPF (%s)", msg);
#if defined(__x86_64__)
  {
    /* the x32 number only in a filter that has x32 */
    char *x86_64[] = {"SCMP_ARCH_X86_64", NULL}, *with_x32[] = {"SCMP_ARCH_X32", NULL};
    for (int k = 0; k < 2; k++) {
      struct error err = {0};
      cleanup_free void *bpf = NULL;
      size_t len = 0;
      bool x32 = false;
      s.architectures = k == 0 ? x86_64 : with_x32;
      if (seccomp_export(&s, &bpf, &len, &err) < 0) {
        tap_ok(false, "export: %s", err.msg);
        continue;
      }
      for (size_t i = 0; i < len / sizeof(struct sock_filter); i++)
        x32 |= ((const struct sock_filter *)bpf)[i].k == (467u | 0x40000000u);
      tap_ok(x32 == (k == 1), "open_tree_attr's x32 number compared %s",
             k == 1 ? "with x32 in the filter" : "not without it");
    }
  }
#endif
}

/* The filter cache (<root>/.cache/seccomp-<hash>.bpf) is keyed by content: a new rule, or a
 * rule made direct_only, is a new file, not the old filter read back. */
static void test_cache_key(void)
{
  char *names[] = {"socket", NULL}, *ioctl_names[] = {"ioctl", NULL};
  struct oci_seccomp_arg arg = {
      .index = 0, .value = 0xffffffffu, .value_two = AF_VSOCK, .op = "SCMP_CMP_MASKED_EQ"};
  struct oci_seccomp_syscall sc[2] = {
      {.names = ioctl_names, .action = "SCMP_ACT_ERRNO"},
      {.names = names, .action = "SCMP_ACT_ERRNO", .args = &arg, .n_args = 1},
  };
  struct oci_seccomp s = {.default_action = "SCMP_ACT_ALLOW", .syscalls = sc, .n_syscalls = 1};
  cleanup_free char *root = xfmt("%s/cache", tmpdir);
  cleanup_free char *cmd = xfmt("ls '%s/.cache' | grep -c '^seccomp-.*\\.bpf$'", root);
  char line[32] = "";
  FILE *ls;

  mkdir(root, 0700);
  for (int k = 0; k < 4; k++) {
    struct error err = {0};
    struct sock_fprog *prog = NULL;
    s.n_syscalls = k == 0 ? 1 : 2; /* then the socket rule: new; direct_only: new; again: read */
    sc[1].direct_only = k >= 2;
    if (seccomp_cache_get(root, &s, &prog, &err) < 0)
      tap_ok(false, "cache: %s", err.msg);
    free(prog);
  }
  ls = popen(cmd, "r");
  if (ls != NULL) {
    if (fgets(line, sizeof line, ls) == NULL)
      line[0] = '\0';
    pclose(ls);
  }
  tap_ok(atoi(line) == 3, "cache: one file per filter content (a rule, direct_only): %s", line);
}

#if defined(__x86_64__)
/* A call through the i386 ABI (int 0x80); pointer arguments must be below 4 GiB
 * (only NULLs and small numbers here). */
static long sys_i386(long nr, long a0, long a1)
{
  long r;
  register long r8 __asm__("r8") = 0;
  register long r9 __asm__("r9") = 0;
  register long r10 __asm__("r10") = 0;
  register long r11 __asm__("r11") = 0;

  __asm__ volatile("int $0x80"
                   : "=a"(r), "+r"(r8), "+r"(r9), "+r"(r10), "+r"(r11)
                   : "a"(nr), "b"(a0), "c"(a1)
                   : "memory", "cc");
  return r;
}

/* x32 settimeofday (164|0x40000000) is denied through its own number (ENOSYS on a kernel
 * without x32 when the filter lets it through). */
static int try_x32(void)
{
  return syscall(0x40000000L | 164, NULL, NULL) == -1 && errno == EXDEV ? 0 : 21;
}

/* i386 umount(NULL) 22, stime(NULL) 25, clock_settime64(0, NULL) 404 and
 * clock_adjtime64(0, NULL) 405 answer EFAULT when they reach the kernel; then x32. */
static int try_other_abis(void)
{
  static const long i386_nr[] = {22, 25, 404, 405};

  for (size_t i = 0; i < ARRAY_SIZE(i386_nr); i++)
    if (sys_i386(i386_nr[i], 0, 0) != -EXDEV)
      return 10 + (int)i;
  if (sys_i386(20 /* getpid */, 0, 0) != getpid())
    return 20;
  return try_x32() == 0 ? 0 : 21;
}

/* Can this kernel be entered through int 0x80 at all?  Some do not let user space use the
 * gate (a hypervisor's guest kernel: int 0x80 is a general protection fault, SIGSEGV, and a
 * 64-bit process has no 32-bit code segment either), and then the i386 ABI is no way in; the
 * i386 checks run in the VM lane (tests/vm/abi-i386.bats).  NULL when it can, else why not. */
static const char *i386_unusable(void)
{
  int status = 0;
  pid_t pid = fork();

  if (pid == 0) {
    /* the default action, past a sanitizer's handler (which would report and exit 1) */
    struct {
      void *handler;
      unsigned long flags;
      void *restorer;
      unsigned long mask;
    } dfl = {SIG_DFL, 0, NULL, 0};
    syscall(SYS_rt_sigaction, SIGSEGV, &dfl, NULL, sizeof dfl.mask);
    _exit(sys_i386(20 /* getpid */, 0, 0) == getpid() ? 0 : 1);
  }
  if (pid < 0 || waitpid(pid, &status, 0) < 0)
    return "fork failed";
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV)
    return "int 0x80 faults on this kernel (no i386 entry from user space)";
  return exited_with(status, 0) ? NULL : "int 0x80 getpid gave another pid";
}

static void test_other_abis(void)
{
  char msg[ERROR_MSG_MAX];
  const char *no_i386 = i386_unusable();
  char *names[] = {"umount2",         "umount",        "settimeofday",    "stime", "clock_settime",
                   "clock_settime64", "clock_adjtime", "clock_adjtime64", NULL};
  char *arches[] = {"SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32", NULL};
  struct oci_seccomp_syscall sc = {
      .names = names, .action = "SCMP_ACT_ERRNO", .has_errno_ret = true, .errno_ret = EXDEV};
  struct oci_seccomp s = {.default_action = "SCMP_ACT_ALLOW",
                          .architectures = arches,
                          .syscalls = &sc,
                          .n_syscalls = 1};
  int st;

  if (no_i386 != NULL) {
    tap_skip("names of one ABI only (i386 umount, stime, clock_*64): %s", no_i386);
    st = run_filtered(&s, LOAD_BPF, try_x32, msg, sizeof msg);
    tap_ok(exited_with(st, 0), "x32 through its own number (%s)", msg);
    return;
  }
  st = run_filtered(&s, LOAD_BPF, try_other_abis, msg, sizeof msg);
  tap_ok(exited_with(st, 0),
         "names of one ABI only (i386 umount, stime, clock_*64) are denied there, x32 through "
         "its own number (%s)",
         msg);
}

static bool i386_usable;

/* i386 socketcall(SYS_SOCKET, {AF_UNIX, SOCK_STREAM, 0}): 0, or the errno.  Its arguments are
 * in memory below 4 GiB (MAP_32BIT), where the i386 ABI can point. */
static int try_socketcall_unix(void)
{
  unsigned *args =
      mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
  long r;

  if (args == MAP_FAILED)
    return 99;
  args[0] = AF_UNIX;
  args[1] = SOCK_STREAM;
  args[2] = 0;
  r = sys_i386(102 /* socketcall */, 1 /* SYS_SOCKET */, (long)(uintptr_t)args);
  if (r < 0)
    return (int)-r;
  close((int)r);
  return 0;
}

/* socket(AF_VSOCK) refused with EAFNOSUPPORT (with or without vsock in this kernel), AF_UNIX
 * not, and i386's socketcall left alone: 0, else which failed. */
static int try_vsock_rule(void)
{
  int fd;

  if (syscall(SYS_socket, AF_VSOCK, SOCK_STREAM, 0) != -1 || errno != EAFNOSUPPORT)
    return 30;
  fd = (int)syscall(SYS_socket, AF_UNIX, SOCK_STREAM, 0);
  if (fd < 0)
    return 31;
  close(fd);
  /* the family in the upper 32 bits is not the kernel's: the rule compares the low ones */
  if (syscall(SYS_socket, (1L << 32) | AF_VSOCK, SOCK_STREAM, 0) != -1 || errno != EAFNOSUPPORT)
    return 32;
  return i386_usable && try_socketcall_unix() != 0 ? 33 : 0;
}

/* A direct_only rule (the profile's socket(AF_VSOCK)) is left out on i386, where libseccomp
 * would turn it into a refusal of every socketcall(SYS_SOCKET), whatever the family. */
static void test_direct_only(void)
{
  char msg[ERROR_MSG_MAX];
  const char *no_i386 = i386_unusable();
  char *names[] = {"socket", NULL};
  char *arches[] = {"SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32", NULL};
  struct oci_seccomp_arg arg = {
      .index = 0, .value = 0xffffffffu, .value_two = AF_VSOCK, .op = "SCMP_CMP_MASKED_EQ"};
  struct oci_seccomp_syscall sc = {.names = names,
                                   .action = "SCMP_ACT_ERRNO",
                                   .has_errno_ret = true,
                                   .errno_ret = EAFNOSUPPORT,
                                   .args = &arg,
                                   .n_args = 1,
                                   .direct_only = true};
  struct oci_seccomp s = {.default_action = "SCMP_ACT_ALLOW",
                          .architectures = arches,
                          .syscalls = &sc,
                          .n_syscalls = 1};
  int st;

  i386_usable = no_i386 == NULL;
  st = run_filtered(&s, LOAD_BPF, try_vsock_rule, msg, sizeof msg);
  tap_ok(exited_with(st, 0),
         "direct_only socket(AF_VSOCK): EAFNOSUPPORT, AF_UNIX created, i386 socketcall %s (%s)",
         no_i386 ? "not tried" : "left alone", msg);
  if (no_i386 != NULL) {
    tap_skip("i386 socketcall without direct_only: %s", no_i386);
    return;
  }
  sc.direct_only = false;
  st = run_filtered(&s, LOAD_BPF, try_socketcall_unix, msg, sizeof msg);
  tap_ok(exited_with(st, EAFNOSUPPORT),
         "without direct_only libseccomp refuses every i386 socketcall(SYS_SOCKET) (%s)", msg);
}
#endif

int main(void)
{
  if (mkdtemp(tmpdir) == NULL) {
    perror("mkdtemp");
    return 1;
  }
  test_basic_errno();
  test_default_errno();
  test_unknown_names();
  test_args();
  test_args_and();
  test_arch_flags();
  test_errors();
  test_internal_notify();
  test_load_bpf_errors();
  test_enosys_newer();
  test_late_names();
  test_cache_key();
#if defined(__x86_64__)
  test_other_abis();
  test_direct_only();
#endif
  {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
      tap_ok(false, "cleanup %s", tmpdir);
  }
  return tap_done();
}
