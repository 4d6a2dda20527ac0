/* test_process.c - executable lookup, limits and process_exec() end to end.
 *
 * process_exec() runs in forked children (as root on the host, no pivot):
 * the exec'd shell prints /proc/self/status, its fds, cwd, umask and exe,
 * and the parent checks the effect from outside.  Also pins CVE-2024-21626
 * (fd leak + cwd outside the root, in a private mount namespace + chroot)
 * and CVE-2019-5736 (exec through the sealed trampoline), and measures the
 * trampoline's cost (AGENTRT_BENCH_N=1000 for a longer run).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"
#include "container/netns_early.h"
#include "container/process.h"
#include "os/procfs.h"
#include "os/trampoline.h"
#include "tests/unit/tap.h"

#ifdef AGENTRT_TEST_FAKE_PROCFS
/* Stand-in until os/procfs.c is merged (see mk/process.mk). */
int procfs_write(const char *relpath, const char *value, struct error *err)
{
  char path[256];
  int fd;

  snprintf(path, sizeof path, "/proc/%s", relpath);
  fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0 || write(fd, value, strlen(value)) < 0) {
    error_errno(err, "write `%s`", path);
    if (fd >= 0)
      close(fd);
    return -1;
  }
  close(fd);
  return 0;
}
#endif

static char tmpdir[] = "/tmp/agentrt-test-process-XXXXXX";

static void write_file(const char *path, const char *content, mode_t mode)
{
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0 || write(fd, content, strlen(content)) < 0)
    perror(path);
  if (fd >= 0)
    close(fd);
  chmod(path, mode);
}

/* ---- process_resolve_executable ---- */

static void expect_resolve(const char *arg0, char **env, const char *cwd, const char *want_path,
                           const char *want_err)
{
  char *args[] = {(char *)arg0, NULL};
  struct oci_process p = {.args = args, .env = env, .cwd = (char *)cwd};
  struct error err = {0};
  cleanup_free char *path = NULL;
  int r = process_resolve_executable(&p, &path, &err);

  if (want_err)
    tap_ok(r < 0 && streq(err.msg, want_err), "resolve `%s` fails: %s", arg0, err.msg);
  else
    tap_ok(r == 0 && streq(path, want_path), "resolve `%s` -> %s (%s)", arg0, path, err.msg);
}

static void test_resolve(void)
{
  cleanup_free char *bin1 = xfmt("%s/bin1", tmpdir), *bin2 = xfmt("%s/bin2", tmpdir);
  cleanup_free char *foo1 = xfmt("%s/foo", bin1), *foo2 = xfmt("%s/foo", bin2);
  cleanup_free char *pathvar = xfmt("PATH=/nonexistent:%s:%s", bin1, bin2);
  cleanup_free char *relfoo = xfmt("%s/bin2/foo", tmpdir);
  char *env[] = {"PATH=/wrong", pathvar, NULL};
  char *env_empty_path[] = {"PATH=", NULL};

  mkdir(bin1, 0755);
  mkdir(bin2, 0755);
  write_file(foo1, "#!/bin/sh\n", 0644); /* not executable: skipped */
  write_file(foo2, "#!/bin/sh\n", 0755);

  expect_resolve("sh", NULL, "/", "/usr/bin/sh", NULL);
  expect_resolve("foo", env, "/", foo2, NULL);
  expect_resolve("./bin2/foo", NULL, tmpdir, relfoo, NULL);
  expect_resolve("/bin/sh", NULL, "/", "/bin/sh", NULL);
  expect_resolve("nosuchcmd-agentrt", NULL, "/", NULL,
                 "exec: \"nosuchcmd-agentrt\": executable file not found in $PATH");
  expect_resolve("sh", env_empty_path, "/", NULL,
                 "exec: \"sh\": executable file not found in $PATH");
  expect_resolve("/x-agentrt-missing", NULL, "/", NULL,
                 "exec: \"/x-agentrt-missing\": stat /x-agentrt-missing: no such file or "
                 "directory");
  expect_resolve("/etc", NULL, "/", NULL, "exec: \"/etc\": permission denied");
  expect_resolve("/etc/passwd", NULL, "/", NULL, "exec: \"/etc/passwd\": permission denied");
  expect_resolve("/etc/passwd/x", NULL, "/", NULL,
                 "exec: \"/etc/passwd/x\": stat /etc/passwd/x: not a directory");
  expect_resolve("", NULL, "/", NULL, "process.args must not be empty");
}

/* ---- running things in a child ---- */

struct run {
  char out[16384];
  char err[ERROR_MSG_MAX];
  int status;
};

static void read_all(int fd, char *buf, size_t n)
{
  size_t off = 0;
  ssize_t r;

  while (off + 1 < n && (r = read(fd, buf + off, n - 1 - off)) != 0) {
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0)
      break;
    off += (size_t)r;
  }
  buf[off] = '\0';
}

/* Fork; in the child run pre() (if any) then fn(arg); stdout+stderr of the
 * child are captured, and fn's error message (when it returns) too. */
static void run_child(struct run *res, void (*pre)(void), int (*fn)(void *arg, struct error *err),
                      void *arg)
{
  int out[2], errp[2];
  pid_t pid;

  memset(res, 0, sizeof *res);
  if (pipe2(out, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0)
    return;
  pid = fork();
  if (pid == 0) {
    struct error err = {0};
    int efd = fcntl(errp[1], F_DUPFD_CLOEXEC, 100);

    dup2(out[1], 1);
    dup2(out[1], 2);
    close(out[0]);
    close(out[1]);
    close(errp[0]);
    close(errp[1]);
    if (pre)
      pre();
    if (fn(arg, &err) < 0 || err.msg[0]) {
      (void)!write(efd, err.msg, strlen(err.msg));
      _exit(99);
    }
    _exit(0);
  }
  close(out[1]);
  close(errp[1]);
  read_all(out[0], res->out, sizeof res->out);
  read_all(errp[0], res->err, sizeof res->err);
  close(out[0]);
  close(errp[0]);
  waitpid(pid, &res->status, 0);
}

struct exec_args {
  struct oci_process *p;
  struct process_opts *o;
  const char *path;
};

static int do_exec(void *arg, struct error *err)
{
  struct exec_args *a = arg;
  return process_exec(a->p, a->path, a->o, err);
}

/* For messages: newlines would break the one-line-per-test output. */
static const char *oneline(const char *s)
{
  static char buf[512];
  size_t i;

  for (i = 0; s[i] && i + 1 < sizeof buf; i++)
    buf[i] = s[i] == '\n' ? ' ' : s[i];
  buf[i] = '\0';
  return buf;
}

static bool has(const struct run *r, const char *needle)
{
  return strstr(r->out, needle) != NULL;
}

#define PROBE                                                                                      \
  "printf fds:; for f in 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do "                            \
  "[ -e /proc/$$/fd/$f ] && printf ' %s' $f; done; echo; "                                         \
  "grep -E '^(Uid|Gid|Groups|CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs|Seccomp):' "            \
  "/proc/self/status; echo cwd: $(pwd); echo umask: $(umask); "                                    \
  "echo exe: $(readlink /proc/$$/exe); echo A=$A; mkdir " MKDIR_TARGET " 2>/dev/null || echo "     \
  "mkdir-denied"
#define MKDIR_TARGET "/tmp/agentrt-test-process-mkdir-probe"

static char *mkdir_names[] = {"mkdir", "mkdirat", NULL};
static struct oci_seccomp_syscall deny_mkdir = {.names = mkdir_names, .action = "SCMP_ACT_ERRNO"};
static struct oci_seccomp deny_mkdir_profile = {
    .default_action = "SCMP_ACT_ALLOW", .syscalls = &deny_mkdir, .n_syscalls = 1};

static void open_extra_fds(void)
{
  int fd = open("/dev/null", O_RDONLY); /* no O_CLOEXEC on purpose: must not leak */

  dup2(fd, 3); /* preserved */
  dup2(fd, 7);
  dup2(fd, 8);
  dup2(fd, 9); /* keep_fd */
  if (fd > 9)
    close(fd);
}

static void test_exec_user(void)
{
  char *args[] = {"sh", "-c", PROBE, NULL};
  char *env[] = {"A=1", "PATH=/usr/bin:/bin", NULL};
  uint32_t gids[] = {5, 6};
  struct oci_process p = {
      .args = args,
      .env = env,
      .cwd = tmpdir,
      .user = {.uid = 1000,
               .gid = 1000,
               .has_umask = true,
               .umask = 027,
               .additional_gids = gids,
               .n_additional_gids = 2},
      .has_caps = true,
      .caps = {.has_bounding = true,
               .bounding = (1 << 0) | (1 << 13), /* CHOWN, NET_RAW */
               .has_effective = true,
               .effective = 1,
               .has_permitted = true,
               .permitted = 1,
               .has_inheritable = true,
               .inheritable = 1,
               .has_ambient = true,
               .ambient = 1},
      .no_new_privileges = true,
  };
  struct process_opts o = {.preserve_fds = 1, .keep_fd = 9, .seccomp = &deny_mkdir_profile};
  struct exec_args a = {.p = &p, .o = &o, .path = "/bin/sh"};
  cleanup_free char *cwdline = xfmt("cwd: %s\n", tmpdir);
  struct run r;

  rmdir(MKDIR_TARGET);
  run_child(&r, open_extra_fds, do_exec, &a);
  tap_ok(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0 && r.err[0] == '\0',
         "exec as 1000:1000 ran (status 0x%x, %s)", r.status, r.err);
  tap_ok(has(&r, "Uid:\t1000\t1000\t1000\t1000") && has(&r, "Gid:\t1000\t1000\t1000\t1000"),
         "uid/gid 1000");
  tap_ok(has(&r, "Groups:\t5 6"), "additionalGids 5 6");
  tap_ok(has(&r, "CapBnd:\t0000000000002001"), "bounding = CHOWN|NET_RAW");
  tap_ok(has(&r, "CapInh:\t0000000000000001") && has(&r, "CapAmb:\t0000000000000001") &&
             has(&r, "CapPrm:\t0000000000000001") && has(&r, "CapEff:\t0000000000000001"),
         "asked-for ambient CHOWN survives exec as non-root");
  tap_ok(has(&r, "NoNewPrivs:\t1") && has(&r, "Seccomp:\t2"), "no_new_privs + seccomp filter");
  tap_ok(has(&r, "mkdir-denied"), "seccomp rule enforced");
  tap_ok(has(&r, "fds: 0 1 2 3\n"), "only 0-2 and the preserved fd 3 reach the process "
                                    "(CVE-2024-21626)");
  tap_ok(has(&r, cwdline) && has(&r, "umask: 0027") && has(&r, "A=1\n"), "cwd, umask, env");
  tap_ok(has(&r, "exe: /usr/bin/dash"), "/proc/self/exe is the program, not agentrt");
  if (!has(&r, "exe: /usr/bin/dash") || !has(&r, "fds: 0 1 2 3\n"))
    fprintf(stderr, "%s\n", r.out);
}

static void test_exec_no_nnp(void)
{
  char *args[] = {"sh", "-c", PROBE, NULL};
  struct oci_process p = {
      .args = args,
      .cwd = "/",
      .has_caps = true,
      .caps = {.has_bounding = true,
               .bounding = (1 << 0) | (1 << 7), /* CHOWN, SETUID */
               .has_effective = true,
               .effective = (1 << 0) | (1 << 7),
               .has_permitted = true,
               .permitted = (1 << 0) | (1 << 7)},
  };
  struct process_opts o = {.keep_fd = -1, .seccomp = &deny_mkdir_profile};
  struct exec_args a = {.p = &p, .o = &o, .path = "/bin/sh"};
  struct run r;

  run_child(&r, NULL, do_exec, &a);
  tap_ok(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0 && has(&r, "Seccomp:\t2") &&
             has(&r, "NoNewPrivs:\t0") && has(&r, "mkdir-denied"),
         "root without no_new_privs: filter loaded before dropping CAP_SYS_ADMIN (%s)", r.err);
  tap_ok(has(&r, "CapEff:\t0000000000000081") && has(&r, "CapBnd:\t0000000000000081") &&
             has(&r, "CapInh:\t0000000000000000") && has(&r, "CapAmb:\t0000000000000000"),
         "root keeps only CHOWN|SETUID, no inheritable/ambient (CVE-2022-29162)");
  tap_ok(has(&r, "umask: 0022"), "default umask 0022");

  p.user.uid = 1000;
  p.user.gid = 1000;
  run_child(&r, NULL, do_exec, &a);
  tap_ok(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0 && has(&r, "Seccomp:\t2") &&
             has(&r, "NoNewPrivs:\t0") && has(&r, "Uid:\t1000") &&
             has(&r, "CapEff:\t0000000000000000"),
         "non-root without no_new_privs: filter loads after setresuid (%s)", r.err);

  p.user.uid = 0;
  p.user.gid = 0;
  p.has_caps = false; /* absent capabilities object: nothing at all */
  o.seccomp = NULL;
  run_child(&r, NULL, do_exec, &a);
  tap_ok(has(&r, "CapBnd:\t0000000000000000") && has(&r, "CapEff:\t0000000000000000") &&
             has(&r, "CapPrm:\t0000000000000000") && has(&r, "Seccomp:\t0"),
         "no capabilities object -> empty sets, even for root (%s)", r.err);
}

static void test_exec_errors(void)
{
  char *args[] = {"true", NULL};
  struct oci_process p = {.args = args, .cwd = "/nonexistent-agentrt"};
  struct exec_args a = {.p = &p, .path = NULL};
  struct run r;

  run_child(&r, NULL, do_exec, &a);
  tap_ok(streq(r.err, "chdir to cwd `/nonexistent-agentrt` set in config.json failed: no such "
                      "file or directory"),
         "missing cwd: %s", r.err);
  p.cwd = "/";
  args[0] = "nosuch-agentrt";
  run_child(&r, NULL, do_exec, &a);
  tap_ok(strstr(r.err, "executable file not found in $PATH") != NULL,
         "process_exec resolves when not given a path: %s", r.err);
}

/* CVE-2024-21626: a leaked fd to a host directory + cwd /proc/self/fd/N. */
static void chroot_with_leaked_fd(void)
{
  cleanup_free char *root = xfmt("%s/root", tmpdir);
  cleanup_free char *proc = xfmt("%s/root/proc", tmpdir);
  int fd;

  if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
    _exit(97);
  mkdir(root, 0755);
  mkdir(proc, 0755);
  if (mount("proc", proc, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
    _exit(96);
  fd = open("/", O_PATH | O_DIRECTORY); /* the leak */
  if (fd < 0 || dup2(fd, 7) < 0 || chroot(root) < 0 || chdir("/") < 0)
    _exit(95);
}

static void test_cwd_breakout(void)
{
  char *args[] = {"true", NULL};
  struct oci_process p = {.args = args, .cwd = "/proc/self/fd/7"};
  struct process_opts o = {.keep_fd = -1};
  struct exec_args a = {.p = &p, .o = &o, .path = "/bin/true"};
  struct run r;

  run_child(&r, chroot_with_leaked_fd, do_exec, &a);
  tap_ok(strstr(r.err, "is outside the container root: possible container breakout detected"),
         "cwd through a leaked fd is refused (CVE-2024-21626): %s (status 0x%x)", r.err, r.status);
}

/* CVE-2019-5736: a `#!/proc/self/exe` program cannot reach the runtime. */
static void test_proc_self_exe_script(void)
{
  cleanup_free char *script = xfmt("%s/evil", tmpdir);
  char *args[] = {"evil", NULL};
  struct oci_process p = {.args = args, .cwd = "/"};
  struct exec_args a = {.p = &p, .path = script};
  struct run r;

  write_file(script, "#!/proc/self/exe\n", 0755);
  run_child(&r, NULL, do_exec, &a);
  tap_ok(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 127 &&
             strstr(r.out, "agentrt-stub: refusing to run") != NULL,
         "#!/proc/self/exe script ends in the stub, exit 127 (status 0x%x, %s)", r.status,
         oneline(r.out));
}

/* A user namespace mapping only root, with setgroups denied (rootless-like). */
static void enter_userns(void)
{
  static const char *files[][2] = {{"/proc/self/setgroups", "deny"},
                                   {"/proc/self/uid_map", "0 0 1"},
                                   {"/proc/self/gid_map", "0 0 1"}};

  if (unshare(CLONE_NEWUSER) < 0)
    _exit(94);
  for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
    int fd = open(files[i][0], O_WRONLY | O_CLOEXEC);
    if (fd < 0 || write(fd, files[i][1], strlen(files[i][1])) < 0)
      _exit(93);
    close(fd);
  }
}

static void test_userns(void)
{
  char *args[] = {"sh", "-c", PROBE, NULL};
  uint32_t gids[] = {0};
  struct oci_process p = {
      .args = args,
      .cwd = "/",
      .has_caps = true,
      .caps = {.has_bounding = true,
               .bounding = 1,
               .has_effective = true,
               .effective = 1,
               .has_permitted = true,
               .permitted = 1},
  };
  struct process_opts o = {.keep_fd = -1, .in_userns = true, .seccomp = &deny_mkdir_profile};
  struct exec_args a = {.p = &p, .o = &o, .path = "/bin/sh"};
  struct run r;

  run_child(&r, enter_userns, do_exec, &a);
  tap_ok(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0 && has(&r, "Seccomp:\t2") &&
             has(&r, "NoNewPrivs:\t0") && has(&r, "CapBnd:\t0000000000000001"),
         "user namespace, setgroups denied, no additionalGids: setgroups skipped, seccomp "
         "loaded without no_new_privs (%s)",
         r.err);
  p.user.additional_gids = gids;
  p.user.n_additional_gids = 1;
  run_child(&r, enter_userns, do_exec, &a);
  tap_ok(strstr(r.err, "setgroups (1 additional gids): Operation not permitted") != NULL,
         "additionalGids where setgroups is denied is an error: %s", r.err);
}

static int do_caps(void *arg, struct error *err)
{
  return caps_apply(arg, true, err);
}

static void test_caps_errors(void)
{
  struct oci_caps c = {.has_effective = true,
                       .effective = 1 << 21,
                       .has_permitted = true,
                       .permitted = 1,
                       .has_bounding = true,
                       .bounding = ~0ULL};
  struct run r;

  run_child(&r, NULL, do_caps, &c);
  tap_ok(streq(r.err, "capabilities: CAP_SYS_ADMIN is in the effective but not in the "
                      "permitted set"),
         "effective outside permitted: %s", r.err);
}

/* ---- limits ---- */

static int do_limits(void *arg, struct error *err)
{
  struct oci_process *p = arg;
  struct rlimit rl;
  char buf[32] = {0};
  int fd;

  if (process_apply_limits(p, err) < 0)
    return -1;
  getrlimit(RLIMIT_NOFILE, &rl);
  fd = open("/proc/self/oom_score_adj", O_RDONLY | O_CLOEXEC);
  (void)!read(fd, buf, sizeof buf - 1);
  printf("nofile %llu %llu oom %s", (unsigned long long)rl.rlim_cur,
         (unsigned long long)rl.rlim_max, buf);
  fflush(stdout);
  return 0;
}

static void test_limits(void)
{
  struct oci_rlimit rl = {
      .type = "RLIMIT_NOFILE", .resource = RLIMIT_NOFILE, .soft = 100, .hard = 200};
  struct oci_process p = {
      .rlimits = &rl, .n_rlimits = 1, .has_oom_score_adj = true, .oom_score_adj = 500};
  struct rlimit cur;
  struct run r;

  run_child(&r, NULL, do_limits, &p);
  tap_ok(streq(r.out, "nofile 100 200 oom 500\n"), "rlimits + oom_score_adj: %s %s", oneline(r.out),
         r.err);
  getrlimit(RLIMIT_NOFILE, &cur);
  rl.soft = 10;
  rl.hard = cur.rlim_max + 1;
  p.has_oom_score_adj = false;
  run_child(&r, NULL, do_limits, &p);
  tap_ok(str_has_prefix(r.err, "setrlimit RLIMIT_NOFILE: Operation not permitted"),
         "raising the hard limit without CAP_SYS_RESOURCE: %s", r.err);
  rl.soft = 20;
  rl.hard = 10;
  run_child(&r, NULL, do_limits, &p);
  tap_ok(strstr(r.err, "soft limit 20 is above the hard limit 10") != NULL, "soft > hard: %s",
         r.err);
}

/* ---- cost of the trampoline ---- */

static double now_us(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static double bench(bool trampoline, int n)
{
  static char *argv_plain[] = {"true", NULL};
  static char *argv_stub[] = {"/bin/true", "true", NULL};
  static char *envp[] = {NULL};
  double t0 = now_us();

  for (int i = 0; i < n; i++) {
    pid_t pid = fork();
    int st;

    if (pid == 0) {
      struct error err = {0};
      if (trampoline) {
        int fd = trampoline_prepare(&err);
        if (fd >= 0)
          trampoline_exec(fd, argv_stub, envp, &err);
      } else {
        execve("/bin/true", argv_plain, envp);
      }
      _exit(99);
    }
    if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
      return -1;
  }
  return (now_us() - t0) / n;
}

static void test_bench(void)
{
  const char *env = getenv("AGENTRT_BENCH_N");
  int n = 200;
  double plain, stub;

  if (env && parse_int(env, &n) < 0)
    n = 200;
  if (n < 1 || n > 100000)
    n = 200;
  plain = bench(false, n);
  stub = bench(true, n);
  tap_ok(plain > 0 && stub > 0,
         "fork+exec /bin/true x%d: plain %.0f us, trampoline %.0f us "
         "(+%.0f us per exec)",
         n, plain, stub, stub - plain);
}

/* How many threads this process has (/proc/self/task). */
static int thread_count(void)
{
  char buf[4096];
  struct error err = {0};
  ssize_t n = procfs_read("self/status", buf, sizeof buf - 1, &err);
  char *t;
  int k = -1;

  if (n <= 0)
    return -1;
  buf[n] = '\0';
  t = strstr(buf, "\nThreads:");
  return t != NULL && sscanf(t + 9, "%d", &k) == 1 ? k : -1;
}

/* The early network namespace: a thread makes it beside create's work; in an
 * ASan build the thread is joined before start returns, so that no fork
 * (the monitor's) meets it starting or ending (netns_early.c). */
static void test_netns_early(void)
{
  struct netns_early n = NETNS_EARLY_INIT;
  struct stat a, b;
  int fd, threads;
  bool asan = false;

#if defined(__SANITIZE_ADDRESS__)
  asan = true;
#endif
  netns_early_start(&n);
  threads = thread_count();
  if (asan)
    tap_ok(!n.started && threads == 1,
           "netns-early: ASan build: the thread is joined when start returns (%d thread(s))",
           threads);
  fd = netns_early_take(&n);
  tap_ok(fd >= 0 && fstat(fd, &a) == 0 && stat("/proc/self/ns/net", &b) == 0 &&
             a.st_ino != b.st_ino && thread_count() == 1,
         "netns-early: a new network namespace, not ours, and no thread left");
  netns_early_close(&n);
  tap_ok(n.fd == -1 && !n.started, "netns-early: close is idempotent");
  netns_early_close(&n);
}

int main(void)
{
  alarm(120); /* no test may hang the suite */
  if (geteuid() != 0) {
    printf("ok - # SKIP test_process needs root\n");
    return 0;
  }
  if (mkdtemp(tmpdir) == NULL) {
    perror("mkdtemp");
    return 1;
  }
  test_resolve();
  test_limits();
  test_exec_user();
  test_exec_no_nnp();
  test_exec_errors();
  test_userns();
  test_caps_errors();
  test_cwd_breakout();
  test_proc_self_exe_script();
  test_netns_early();
  test_bench();
  {
    cleanup_free char *cmd = xfmt("rm -rf '%s'; rmdir " MKDIR_TARGET " 2>/dev/null", tmpdir);
    if (system(cmd) < 0)
      tap_ok(false, "cleanup");
  }
  return tap_done();
}
