/* cgroup-driver.c - a small CLI over the cgroup module, for shell tests on
 * real hosts (tests/helpers/cgroups-selftest.sh) before the runtime's own CLI
 * exists.  Every command rebuilds the manager from --id/--path, so a test
 * script can create a cgroup, run children in it and look at its files.
 *
 *   cgroup-driver [--id ID] [--path P] [--systemd] [--version 1|2] CMD ...
 *     create [RES...]   create + apply, print the saved path
 *     update [RES...]   apply as an update
 *     exec -- CMD...    run CMD in the cgroup (v2: clone3 CLONE_INTO_CGROUP),
 *                       wait, print "exit N" or "signal N"
 *     spawn -- CMD...   same, without waiting: print the pid
 *     freeze | thaw | frozen | pids | stats | oom | destroy | path
 *     kill SIG
 *   RES: --memory N --memory-swap N --memory-reservation N --pids N
 *        --cpu-shares N --cpu-quota N --cpu-period N --cpus L --mems L
 *        --swappiness N --blkio-weight N --hugetlb SIZE:N --unified K=V
 *        --device allow|deny:TYPE[:MAJ:MIN[:ACCESS]]   (N takes K/M/G)
 *   Child helpers: alloc-mb N | forkloop N | open PATH
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "cgroups/cgroup.h"
#include "common/log.h"
#include "common/util.h"

#define MAX_RULES 32

static struct oci_resources res;
static struct oci_device_cgroup devs[MAX_RULES];
static struct oci_kv unified[MAX_RULES];
static struct oci_hugepage_limit huge[MAX_RULES];
static int saved_stdout = -1;

__attribute__((format(printf, 1, 2), noreturn)) static void die(const char *fmt, ...)
{
  va_list ap;

  fprintf(stderr, "cgroup-driver: ");
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\n");
  exit(1);
}

static int64_t num(const char *s)
{
  char *end = NULL;
  long long v;

  errno = 0;
  v = strtoll(s, &end, 10);
  if (errno != 0 || end == s)
    die("bad number `%s`", s);
  if (*end == 'K' || *end == 'k')
    v <<= 10, end++;
  else if (*end == 'M' || *end == 'm')
    v <<= 20, end++;
  else if (*end == 'G' || *end == 'g')
    v <<= 30, end++;
  if (*end != '\0')
    die("bad number `%s`", s);
  return v;
}

static void parse_device(const char *s)
{
  char *copy = xstrdup(s);
  char *f[5] = {0};
  char *save = NULL;
  struct oci_device_cgroup *d = &devs[res.n_devices];

  if (res.n_devices == MAX_RULES)
    die("too many rules");
  for (int i = 0; i < 5; i++)
    f[i] = strtok_r(i ? NULL : copy, ":", &save);
  if (f[0] == NULL || f[1] == NULL)
    die("bad --device `%s`", s);
  d->allow = streq(f[0], "allow");
  d->type = f[1][0];
  if (f[2] && !streq(f[2], "*"))
    d->has_major = true, d->major = num(f[2]);
  if (f[3] && !streq(f[3], "*"))
    d->has_minor = true, d->minor = num(f[3]);
  d->access = f[4] ? xstrdup(f[4]) : NULL;
  res.devices = devs;
  res.n_devices++;
  free(copy);
}

static void parse_kv(const char *opt, const char *v)
{
  const char *sep = strchr(v, streq(opt, "--unified") ? '=' : ':');

  if (sep == NULL)
    die("bad value `%s`", v);
  if (streq(opt, "--unified")) {
    unified[res.n_unified].key = xstrndup(v, (size_t)(sep - v));
    unified[res.n_unified].value = xstrdup(sep + 1);
    res.unified = unified;
    res.n_unified++;
  } else {
    huge[res.n_hugepage_limits].page_size = xstrndup(v, (size_t)(sep - v));
    huge[res.n_hugepage_limits].limit = (uint64_t)num(sep + 1);
    res.hugepage_limits = huge;
    res.n_hugepage_limits++;
  }
}

/* Returns the number of argv entries used (2), or 0 if opt is no resource. */
static int parse_res(const char *opt, const char *v)
{
  if (v == NULL)
    return 0;
  if (streq(opt, "--memory"))
    res.has_memory_limit = true, res.memory_limit = num(v);
  else if (streq(opt, "--memory-swap"))
    res.has_memory_swap = true, res.memory_swap = num(v);
  else if (streq(opt, "--memory-reservation"))
    res.has_memory_reservation = true, res.memory_reservation = num(v);
  else if (streq(opt, "--swappiness"))
    res.has_memory_swappiness = true, res.memory_swappiness = (uint64_t)num(v);
  else if (streq(opt, "--pids"))
    res.has_pids_limit = true, res.pids_limit = num(v);
  else if (streq(opt, "--cpu-shares"))
    res.has_cpu_shares = true, res.cpu_shares = (uint64_t)num(v);
  else if (streq(opt, "--cpu-quota"))
    res.has_cpu_quota = true, res.cpu_quota = num(v);
  else if (streq(opt, "--cpu-period"))
    res.has_cpu_period = true, res.cpu_period = (uint64_t)num(v);
  else if (streq(opt, "--cpus"))
    res.cpu_cpus = xstrdup(v);
  else if (streq(opt, "--mems"))
    res.cpu_mems = xstrdup(v);
  else if (streq(opt, "--blkio-weight"))
    res.has_blkio_weight = true, res.blkio_weight = (uint16_t)num(v);
  else if (streq(opt, "--device"))
    parse_device(v);
  else if (streq(opt, "--unified") || streq(opt, "--hugetlb"))
    parse_kv(opt, v);
  else
    return 0;
  return 2;
}

/* ---- child helpers ---- */

static int helper_alloc(const char *mb)
{
  int64_t n = num(mb);
  for (int64_t i = 0; i < n; i++) {
    char *p = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
      return 2;
    memset(p, 0x5a, 1 << 20);
  }
  printf("allocated %lld MiB\n", (long long)n);
  return 0;
}

static int helper_forkloop(const char *count)
{
  int64_t n = num(count), ok = 0;
  pid_t kids[4096];

  for (int64_t i = 0; i < n && i < 4096; i++) {
    pid_t p = fork();
    if (p == 0) {
      pause();
      _exit(0);
    }
    if (p < 0)
      break;
    kids[ok++] = p;
  }
  printf("forked %lld of %lld\n", (long long)ok, (long long)n);
  fflush(stdout);
  for (int64_t i = 0; i < ok; i++)
    kill(kids[i], SIGKILL);
  for (int64_t i = 0; i < ok; i++)
    waitpid(kids[i], NULL, 0);
  return 0;
}

static int helper_open(const char *path)
{
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    printf("open %s: %s\n", path, strerror(errno));
    return 1;
  }
  printf("open %s: ok\n", path);
  close(fd);
  return 0;
}

/* ---- running children in the cgroup ---- */

static pid_t spawn_clone3(int cgfd, char **argv, bool background)
{
  struct clone_args a;
  long pid;

  memset(&a, 0, sizeof a);
  a.flags = CLONE_INTO_CGROUP;
  a.exit_signal = SIGCHLD;
  a.cgroup = (uint64_t)cgfd;
  pid = syscall(SYS_clone3, &a, sizeof a);
  if (pid == 0) {
    if (background)
      setsid();
    execvp(argv[0], argv);
    _exit(127);
  }
  return (pid_t)pid;
}

/* fork; the child waits on a pipe until the parent has moved it. */
static pid_t spawn_fork(struct cgroup_manager *m, char **argv, bool background)
{
  int p[2];
  struct error e = {0};
  pid_t pid;
  char c;

  if (pipe2(p, O_CLOEXEC) < 0)
    die("pipe: %s", strerror(errno));
  pid = fork();
  if (pid == 0) {
    close(p[1]);
    if (background)
      setsid();
    if (read(p[0], &c, 1) != 1)
      _exit(126);
    execvp(argv[0], argv);
    _exit(127);
  }
  close(p[0]);
  if (pid > 0 && cgroup_add_pid(m, pid, &e) < 0) {
    kill(pid, SIGKILL);
    die("%s", e.msg);
  }
  if (write(p[1], "x", 1) != 1)
    die("pipe write");
  close(p[1]);
  return pid;
}

static pid_t spawn(struct cgroup_manager *m, char **argv, bool background)
{
  int cgfd = cgroup_clone_fd(m);
  pid_t pid = -1;

  /* a background child must not hold the caller's $(...) pipe open */
  if (background) {
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    fflush(stdout);
    saved_stdout = fcntl(1, F_DUPFD_CLOEXEC, 3);
    dup2(null, 0);
    dup2(null, 1);
    dup2(null, 2);
    close(null);
  }

  if (cgfd >= 0) {
    pid = spawn_clone3(cgfd, argv, background);
    close(cgfd);
    if (pid > 0)
      fprintf(stderr, "cgroup-driver: placed with clone3(CLONE_INTO_CGROUP)\n");
  }
  if (pid < 0)
    pid = spawn_fork(m, argv, background);
  if (background) {
    dup2(saved_stdout, 1);
    dup2(saved_stdout, 2);
    close(saved_stdout);
  }
  if (pid < 0)
    die("fork: %s", strerror(errno));
  return pid;
}

static int run(struct cgroup_manager *m, char **argv, bool wait)
{
  pid_t pid = spawn(m, argv, !wait);
  int st = 0;

  if (!wait) {
    printf("%d\n", (int)pid);
    fflush(stdout);
    return 0;
  }
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
    ;
  if (WIFSIGNALED(st)) {
    printf("signal %d\n", WTERMSIG(st));
    return 128 + WTERMSIG(st);
  }
  printf("exit %d\n", WEXITSTATUS(st));
  return WEXITSTATUS(st);
}

static int simple(struct cgroup_manager *m, const char *cmd, char **rest, struct error *e)
{
  if (streq(cmd, "freeze") || streq(cmd, "thaw"))
    return cgroup_freeze(m, streq(cmd, "freeze"), e);
  if (streq(cmd, "frozen")) {
    int r = cgroup_is_frozen(m, e);
    if (r >= 0)
      printf("%s\n", r ? "frozen" : "running");
    return r < 0 ? -1 : 0;
  }
  if (streq(cmd, "kill"))
    return cgroup_kill_all(m, rest[0] ? (int)num(rest[0]) : SIGKILL, e);
  if (streq(cmd, "destroy"))
    return cgroup_destroy(m, e);
  if (streq(cmd, "path")) {
    printf("%s\n", cgroup_manager_path(m));
    return 0;
  }
  if (streq(cmd, "pids")) {
    pid_t *p = NULL;
    size_t n = 0;
    if (cgroup_pids(m, &p, &n, e) < 0)
      return -1;
    for (size_t i = 0; i < n; i++)
      printf("%d\n", (int)p[i]);
    free(p);
    return 0;
  }
  if (streq(cmd, "stats")) {
    char *j = NULL;
    if (cgroup_stats_json(m, &j, e) < 0)
      return -1;
    printf("%s\n", j);
    free(j);
    return 0;
  }
  if (streq(cmd, "oom")) {
    uint64_t n = 0;
    if (cgroup_oom_count(m, &n, e) < 0)
      return -1;
    printf("%llu\n", (unsigned long long)n);
    return 0;
  }
  die("unknown command `%s`", cmd);
}

/* What agentrt prints for the library's warnings without --log. */
static void print_warnings(struct cgroup_manager *m)
{
  char **w = cgroup_take_warnings(m);

  for (char **p = w; p && *p; p++)
    fprintf(stderr, "agentrt: warning: %s\n", *p);
  strv_free(w);
}

static int command(struct cgroup_opts *o, const char *cmd, char **rest)
{
  struct cgroup_manager *m = NULL;
  struct error e = {0};
  int r;

  if (streq(cmd, "create") || streq(cmd, "update")) {
    for (size_t i = 0; rest[i]; i += 2)
      if (parse_res(rest[i], rest[i + 1]) == 0)
        die("bad resource option `%s`", rest[i]);
    o->resources = &res;
  }
  if (cgroup_manager_new(o, &m, &e) < 0)
    die("%s", e.msg);
  if (streq(cmd, "create")) {
    r = cgroup_create(m, &e);
    if (r > 0)
      r = -1; /* no cgroup for lack of permission: the driver fails, as before */
    if (r == 0 && (r = cgroup_apply(m, &res, false, &e)) < 0)
      cgroup_destroy(m, &(struct error){0});
    if (r == 0)
      printf("%s\n", cgroup_manager_path(m));
  } else if (streq(cmd, "update")) {
    r = cgroup_apply(m, &res, true, &e);
  } else if (streq(cmd, "exec") || streq(cmd, "spawn")) {
    if (rest[0] == NULL || !streq(rest[0], "--") || rest[1] == NULL)
      die("usage: %s -- CMD...", cmd);
    print_warnings(m);
    r = run(m, rest + 1, streq(cmd, "exec"));
    cgroup_manager_free(m);
    return r;
  } else {
    r = simple(m, cmd, rest, &e);
  }
  print_warnings(m);
  cgroup_manager_free(m);
  if (r < 0)
    die("%s", e.msg);
  return 0;
}

int main(int argc, char **argv)
{
  struct cgroup_opts o = {.id = "agentrt-driver"};
  int i = 1;

  if (argc >= 3 && streq(argv[1], "alloc-mb"))
    return helper_alloc(argv[2]);
  if (argc >= 3 && streq(argv[1], "forkloop"))
    return helper_forkloop(argv[2]);
  if (argc >= 3 && streq(argv[1], "open"))
    return helper_open(argv[2]);
  log_init(NULL, false, getenv("CGROUP_DRIVER_DEBUG") != NULL);
  for (; i + 1 < argc && str_has_prefix(argv[i], "--"); i += 2) {
    if (streq(argv[i], "--id"))
      o.id = argv[i + 1];
    else if (streq(argv[i], "--path"))
      o.cgroups_path = argv[i + 1];
    else if (streq(argv[i], "--version"))
      o.force_version = (int)num(argv[i + 1]);
    else if (streq(argv[i], "--systemd"))
      o.systemd = true, i--;
    else
      die("unknown option `%s`", argv[i]);
  }
  if (i >= argc)
    die("usage: cgroup-driver [--id ID] [--path P] CMD ...");
  return command(&o, argv[i], argv + i + 1);
}
