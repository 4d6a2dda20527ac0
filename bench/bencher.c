/* bencher.c - times OCI runtimes side by side and reports the comparison.
 *
 *   bencher measure --work DIR --out RAW.tsv [--rounds N] [--containers N]
 *                   [--concurrency N] [--strace-runs N] [--cgroup-parent P] RT...
 *   bencher report RAW.tsv --md OUT.md [--svg OUT.svg]
 *
 * `measure` expects bench/run.sh to have prepared DIR/RT/ for each runtime:
 * files `bin` and `root` (one path each), `flags` (extra global flags, one per
 * line), config templates `true.json` and `sleep.json` (and optionally
 * `agent.json` with `agent-flags`, and `docker-runtime` plus DIR/docker-image),
 * `rootfs/`.  Templates hold the string @CGROUP@ where each container gets
 * its own cgroupsPath.  Runtimes alternate metric by metric inside each round,
 * in an order that turns every round (B C A, C A B, ...), so drift on the
 * machine, and what one runtime's teardown leaves the kernel to do during the
 * next one's run, hit all of them alike.  Every
 * sample is appended to RAW.tsv at once: `sample METRIC RUNTIME ROUND VALUE`.
 *
 * The process forks first: the parent becomes a child subreaper that only
 * reaps (as a container shim does), the child measures.  Container processes
 * orphaned by `create` are thus reaped at once and the measuring side waits
 * for them through pidfds.
 *
 * `report` turns RAW.tsv into a markdown table (medians, min-max, paired
 * ratios: the ratio per round, then its median) and an SVG bar chart of the
 * medians normalised to the first runtime.  No timing is judged here except
 * the issue's targets, which the report lists as met or not.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

#define MAX_RT 8
#define MAX_ARGS 64
#define MAX_SAMPLES 20000
#define CMD_TIMEOUT_MS 60000
#define EXIT_TIMEOUT_MS 10000

extern char **environ;

struct metric {
  const char *key;
  const char *title;
  const char *unit;
  bool higher_better;
};

static const struct metric metrics[] = {
    {"run", "`run` of /bin/true (wall)", "ms", false},
    {"create", "`create`", "ms", false},
    {"start", "`start`", "ms", false},
    {"exec", "`exec` of /bin/true", "ms", false},
    {"kill", "`kill` of a running `sleep`", "ms", false},
    {"delete", "`delete` (stopped)", "ms", false},
    {"delete_force", "`delete --force` (running)", "ms", false},
    {"throughput", "throughput: create/start/wait/delete", "containers/s", true},
    {"rss", "peak RSS of the runtime during `run`", "KiB", false},
    {"cpu", "CPU time (user+sys) per `run`", "ms", false},
    {"agent_run", "`run`, agentrt `--profile agent` vs plain config", "ms", false},
    {"egress_create", "`create`, agentrt with a 20-entry egress policy vs plain config", "ms",
     false},
    {"docker_run", "`docker run --rm --network none` end to end", "ms", false},
    {"syscalls", "syscalls per `run` (strace -f -c)", "calls", false},
    {"procs", "processes spawned per `run` (fork/clone w/o CLONE_THREAD)", "count", false},
    {"execs", "execve/execveat per `run`", "count", false},
    {"threads", "threads created per `run` (clone CLONE_THREAD)", "count", false},
    {"bin_size", "binary size", "KiB", false},
    {"libs", "shared libraries (ldd)", "count", false},
};
#define N_METRICS (sizeof(metrics) / sizeof(metrics[0]))

struct runtime {
  char name[32];
  char dir[512];
  char bin[512];
  char root[512];
  char *flags[16];
  char *agent_flags[16];
  char *egress_flags[16];
  bool has_egress;
  char *tpl_true;
  char *tpl_sleep;
  char *tpl_agent;
  char docker[64];
};

struct bench {
  const char *work;
  const char *cgparent;
  int rounds;
  int containers;
  int conc;
  int strace_runs;
  FILE *out;
  int logfd;
  struct runtime rt[MAX_RT];
  int nrt;
  char docker_image[256];
  unsigned failures;
};

struct outcome {
  double ms;
  struct rusage ru;
  int status;
};

/* ---- small helpers ------------------------------------------------------ */

static void die(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  fputs("bencher: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(1);
}

static void warnx(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  fputs("bencher: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

static double now_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int parse_pos_int(const char *s, int *ret)
{
  char *end = NULL;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || v <= 0 || v > 1000000)
    return -1;
  *ret = (int)v;
  return 0;
}

/* Reads a whole (small) file; NULL if it does not exist. */
static char *read_file(const char *path)
{
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return NULL;
  size_t cap = 4096, len = 0;
  char *buf = malloc(cap);
  for (;;) {
    if (buf == NULL)
      abort();
    if (len + 1 >= cap)
      buf = realloc(buf, cap *= 2);
    if (buf == NULL)
      abort();
    ssize_t n = read(fd, buf + len, cap - len - 1);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    len += (size_t)n;
  }
  close(fd);
  buf[len] = '\0';
  return buf;
}

static int write_file(const char *path, const char *data, size_t len)
{
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return -1;
  ssize_t n = write(fd, data, len);
  close(fd);
  return n == (ssize_t)len ? 0 : -1;
}

/* First line of DIR/NAME into buf; -1 if missing or empty. */
static int read_line_file(const char *dir, const char *name, char *buf, size_t size)
{
  char path[1024];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  char *s = read_file(path);
  if (s == NULL)
    return -1;
  s[strcspn(s, "\n")] = '\0';
  snprintf(buf, size, "%s", s);
  free(s);
  return buf[0] ? 0 : -1;
}

/* Lines of DIR/NAME into a NULL-terminated vector of at most max-1 entries. */
static void read_lines_file(const char *dir, const char *name, char **v, size_t max)
{
  char path[1024];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  char *s = read_file(path);
  size_t n = 0;
  for (char *save = NULL, *l = s ? strtok_r(s, "\n", &save) : NULL; l && n + 1 < max;
       l = strtok_r(NULL, "\n", &save))
    v[n++] = strdup(l);
  v[n] = NULL;
  free(s);
}

/* ---- spawning ----------------------------------------------------------- */

static int pidfd_open(pid_t pid)
{
  return (int)syscall(SYS_pidfd_open, pid, 0);
}

/* Waits until pid has exited (it need not be our child); false on timeout. */
static bool wait_gone(pid_t pid, int timeout_ms)
{
  int fd = pidfd_open(pid);
  if (fd < 0)
    return errno == ESRCH;
  struct pollfd p = {.fd = fd, .events = POLLIN};
  int r;
  do
    r = poll(&p, 1, timeout_ms);
  while (r < 0 && errno == EINTR);
  close(fd);
  return r > 0;
}

static void log_argv(int fd, char *const argv[])
{
  dprintf(fd, "==");
  for (size_t i = 0; argv[i]; i++)
    dprintf(fd, " %s", argv[i]);
  dprintf(fd, "\n");
}

/* Runs argv with stdout+stderr to out_fd; fills o.  0 when it exited 0. */
static int spawn_timed(char *const argv[], int out_fd, int log_fd, struct outcome *o)
{
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
  posix_spawn_file_actions_adddup2(&fa, out_fd == log_fd ? out_fd : log_fd, 2);
  log_argv(log_fd, argv);

  memset(o, 0, sizeof(*o));
  double t0 = now_ms();
  pid_t pid;
  int r = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (r != 0) {
    dprintf(log_fd, "spawn `%s`: %s\n", argv[0], strerror(r));
    return -1;
  }
  if (!wait_gone(pid, CMD_TIMEOUT_MS)) {
    dprintf(log_fd, "timeout after %d ms, killing pid %d\n", CMD_TIMEOUT_MS, (int)pid);
    kill(pid, SIGKILL);
  }
  while (wait4(pid, &o->status, 0, &o->ru) < 0 && errno == EINTR)
    ;
  o->ms = now_ms() - t0;
  if (WIFEXITED(o->status) && WEXITSTATUS(o->status) == 0)
    return 0;
  dprintf(log_fd, "-> failed: status 0x%x\n", o->status);
  return -1;
}

struct cmd {
  char *v[MAX_ARGS];
  int n;
};

static void cmd_push(struct cmd *c, const char *s)
{
  if (c->n + 2 >= MAX_ARGS)
    die("command line too long");
  c->v[c->n++] = (char *)s;
  c->v[c->n] = NULL;
}

/* bin --root ROOT FLAGS... ARGS... */
static void cmd_rt(struct cmd *c, struct runtime *rt, char **flags, char *const args[])
{
  c->n = 0;
  cmd_push(c, rt->bin);
  cmd_push(c, "--root");
  cmd_push(c, rt->root);
  for (size_t i = 0; flags[i]; i++)
    cmd_push(c, flags[i]);
  for (size_t i = 0; args[i]; i++)
    cmd_push(c, args[i]);
}

static void sample(struct bench *b, const char *metric, struct runtime *rt, int round, double v)
{
  fprintf(b->out, "sample\t%s\t%s\t%d\t%.4f\n", metric, rt->name, round, v);
  fflush(b->out);
}

/* Runs one runtime command; records its wall time as METRIC when given. */
static int step(struct bench *b, struct runtime *rt, char **flags, const char *metric, int round,
                char *const args[], struct outcome *ret_o)
{
  struct cmd c;
  struct outcome o;
  cmd_rt(&c, rt, flags, args);
  if (spawn_timed(c.v, b->logfd, b->logfd, &o) < 0) {
    if (metric != NULL) {
      b->failures++;
      warnx("%s %s failed in round %d (status 0x%x), see the log", rt->name, args[0], round,
            o.status);
    }
    return -1;
  }
  if (metric != NULL)
    sample(b, metric, rt, round, o.ms);
  if (ret_o != NULL)
    *ret_o = o;
  return 0;
}

/* ---- bundles ------------------------------------------------------------ */

static void bundle_path(struct runtime *rt, const char *id, char *buf, size_t size)
{
  snprintf(buf, size, "%s/b/%s", rt->dir, id);
}

/* Writes DIR/b/ID/config.json from a template with @CGROUP@ replaced. */
static int bundle_write(struct bench *b, struct runtime *rt, const char *tpl, const char *id)
{
  char dir[1024], path[1100], cg[512];
  bundle_path(rt, id, dir, sizeof(dir));
  snprintf(cg, sizeof(cg), "%s/%s", b->cgparent, id);
  const char *at = strstr(tpl, "@CGROUP@");
  if (at == NULL)
    die("%s: template has no @CGROUP@", rt->name);
  size_t pre = (size_t)(at - tpl), len = strlen(tpl) - 8 + strlen(cg);
  char *txt = malloc(len + 1);
  if (txt == NULL)
    abort();
  snprintf(txt, len + 1, "%.*s%s%s", (int)pre, tpl, cg, at + 8);
  snprintf(path, sizeof(path), "%s/config.json", dir);
  int r = mkdir(dir, 0755) < 0 && errno != EEXIST ? -1 : write_file(path, txt, len);
  free(txt);
  if (r < 0)
    warnx("write bundle `%s`: %s", dir, strerror(errno));
  return r;
}

static void bundle_remove(struct runtime *rt, const char *id)
{
  char dir[1024], path[1100];
  bundle_path(rt, id, dir, sizeof(dir));
  snprintf(path, sizeof(path), "%s/config.json", dir);
  unlink(path);
  rmdir(dir);
}

static pid_t read_pid(const char *path)
{
  char *s = read_file(path);
  int pid = 0;
  if (s != NULL) {
    s[strcspn(s, "\n")] = '\0';
    if (parse_pos_int(s, &pid) < 0)
      pid = 0;
  }
  free(s);
  unlink(path);
  return pid;
}

/* Waits (bounded, untimed) until pid runs `sleep`, so that exec, kill and
 * delete --force meet a settled container, not one still in its execve. */
static bool wait_sleeping(pid_t pid)
{
  char path[64];
  snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
  for (int i = 0; i < 2000; i++) {
    char *comm = read_file(path);
    bool ok = comm != NULL && !strcmp(comm, "sleep\n");
    free(comm);
    if (ok)
      return true;
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
  return false;
}

/* Untimed teardown after a failure or at the end of a sequence. */
static void container_gone(struct bench *b, struct runtime *rt, const char *id, pid_t pid)
{
  char *force[] = {"delete", "--force", (char *)id, NULL};
  step(b, rt, rt->flags, NULL, 0, force, NULL);
  if (pid > 0 && !wait_gone(pid, EXIT_TIMEOUT_MS))
    warnx("%s: container `%s` pid %d did not exit", rt->name, id, (int)pid);
  bundle_remove(rt, id);
}

/* create --pid-file (with the runtime's flags, or `flags`); returns the container pid or 0. */
static pid_t create_with(struct bench *b, struct runtime *rt, char **flags, const char *tpl,
                         const char *id, const char *metric, int round)
{
  char dir[1024], pidf[1100];
  if (bundle_write(b, rt, tpl, id) < 0)
    return 0;
  bundle_path(rt, id, dir, sizeof(dir));
  snprintf(pidf, sizeof(pidf), "%s/pid", dir);
  char *args[] = {"create", "--bundle", dir, "--pid-file", pidf, (char *)id, NULL};
  if (step(b, rt, flags, metric, round, args, NULL) < 0) {
    if (metric == NULL)
      warnx("%s create `%s` failed, see the log", rt->name, id);
    container_gone(b, rt, id, 0);
    return 0;
  }
  pid_t pid = read_pid(pidf);
  if (pid <= 0) {
    warnx("%s: no pid file for `%s`", rt->name, id);
    container_gone(b, rt, id, 0);
  }
  return pid;
}

static pid_t create(struct bench *b, struct runtime *rt, const char *tpl, const char *id,
                    const char *metric, int round)
{
  return create_with(b, rt, rt->flags, tpl, id, metric, round);
}

/* ---- metrics ------------------------------------------------------------ */

/* `run` of the template's process; with usage, also peak RSS and CPU time
 * of the runtime's process tree (rusage of the waited-for tree). */
static void m_run(struct bench *b, struct runtime *rt, int round, const char *tpl, char **flags,
                  const char *metric, bool usage)
{
  char id[96], dir[1024];
  struct outcome o;
  snprintf(id, sizeof(id), "%s-r%d-%s", rt->name, round, metric ? metric : "warm");
  if (bundle_write(b, rt, tpl, id) < 0)
    return;
  bundle_path(rt, id, dir, sizeof(dir));
  char *args[] = {"run", "--bundle", dir, id, NULL};
  if (step(b, rt, flags, metric, round, args, &o) < 0) {
    container_gone(b, rt, id, 0);
    return;
  }
  if (usage) {
    double cpu = o.ru.ru_utime.tv_sec * 1e3 + o.ru.ru_utime.tv_usec / 1e3 +
                 o.ru.ru_stime.tv_sec * 1e3 + o.ru.ru_stime.tv_usec / 1e3;
    sample(b, "rss", rt, round, (double)o.ru.ru_maxrss);
    sample(b, "cpu", rt, round, cpu);
  }
  bundle_remove(rt, id);
}

/* create, start, exec, kill (of a running sleep), delete (stopped). */
static void m_lifecycle(struct bench *b, struct runtime *rt, int round)
{
  char id[96];
  snprintf(id, sizeof(id), "%s-r%d-life", rt->name, round);
  pid_t pid = create(b, rt, rt->tpl_sleep, id, "create", round);
  if (pid <= 0)
    return;
  char *start[] = {"start", id, NULL};
  char *exec[] = {"exec", id, "/bin/true", NULL};
  char *killc[] = {"kill", id, "KILL", NULL};
  char *del[] = {"delete", id, NULL};
  if (step(b, rt, rt->flags, "start", round, start, NULL) < 0 || !wait_sleeping(pid) ||
      step(b, rt, rt->flags, "exec", round, exec, NULL) < 0 ||
      step(b, rt, rt->flags, "kill", round, killc, NULL) < 0)
    goto fail;
  if (!wait_gone(pid, EXIT_TIMEOUT_MS)) {
    warnx("%s: `%s` still running after kill", rt->name, id);
    goto fail;
  }
  if (step(b, rt, rt->flags, "delete", round, del, NULL) < 0)
    goto fail;
  bundle_remove(rt, id);
  return;
fail:
  container_gone(b, rt, id, pid);
}

/* `create` with egress-flags (agentrt: a profile extending `oci` with only a
 * 20-entry egress policy, so the row minus `create` is the policy's cost:
 * nftables table, resolver sockets, helper), then an untimed delete --force. */
static void m_egress(struct bench *b, struct runtime *rt, int round)
{
  char id[96];
  snprintf(id, sizeof(id), "%s-r%d-egress", rt->name, round);
  pid_t pid = create_with(b, rt, rt->egress_flags, rt->tpl_sleep, id, "egress_create", round);
  if (pid > 0)
    container_gone(b, rt, id, pid);
}

/* delete --force of a running container. */
static void m_force(struct bench *b, struct runtime *rt, int round)
{
  char id[96];
  snprintf(id, sizeof(id), "%s-r%d-force", rt->name, round);
  pid_t pid = create(b, rt, rt->tpl_sleep, id, NULL, round);
  if (pid <= 0)
    return;
  char *start[] = {"start", id, NULL};
  char *del[] = {"delete", "--force", id, NULL};
  if (step(b, rt, rt->flags, NULL, round, start, NULL) < 0 || !wait_sleeping(pid) ||
      step(b, rt, rt->flags, "delete_force", round, del, NULL) < 0) {
    warnx("%s: start/delete --force of `%s` failed", rt->name, id);
    b->failures++;
    container_gone(b, rt, id, pid);
    return;
  }
  if (!wait_gone(pid, EXIT_TIMEOUT_MS))
    warnx("%s: `%s` pid %d survived delete --force", rt->name, id, (int)pid);
  bundle_remove(rt, id);
}

/* One throughput worker: containers w, w+conc, ... through their whole life.
 * Returns the number of containers that failed. */
static int tp_worker(struct bench *b, struct runtime *rt, int round, int w)
{
  int failed = 0;
  for (int k = w; k < b->containers; k += b->conc) {
    char id[96];
    snprintf(id, sizeof(id), "%s-r%d-t%d", rt->name, round, k);
    pid_t pid = create(b, rt, rt->tpl_true, id, NULL, round);
    if (pid <= 0) {
      failed++;
      continue;
    }
    char *start[] = {"start", id, NULL};
    char *del[] = {"delete", id, NULL};
    if (step(b, rt, rt->flags, NULL, round, start, NULL) < 0 || !wait_gone(pid, EXIT_TIMEOUT_MS) ||
        step(b, rt, rt->flags, NULL, round, del, NULL) < 0) {
      failed++;
      container_gone(b, rt, id, pid);
      continue;
    }
    bundle_remove(rt, id);
  }
  return failed;
}

static void m_throughput(struct bench *b, struct runtime *rt, int round)
{
  pid_t w[64];
  int n = b->conc < 64 ? b->conc : 64, failed = 0;
  double t0 = now_ms();
  for (int i = 0; i < n; i++) {
    w[i] = fork();
    if (w[i] < 0)
      die("fork: %s", strerror(errno));
    if (w[i] == 0) {
      prctl(PR_SET_PDEATHSIG, SIGTERM);
      _exit(tp_worker(b, rt, round, i) > 0 ? 1 : 0);
    }
  }
  for (int i = 0; i < n; i++) {
    int st = 0;
    while (waitpid(w[i], &st, 0) < 0 && errno == EINTR)
      ;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
      failed++;
  }
  double s = (now_ms() - t0) / 1e3;
  if (failed) {
    warnx("%s: throughput round %d had failures, not recorded", rt->name, round);
    b->failures++;
    return;
  }
  sample(b, "throughput", rt, round, b->containers / s);
}

static void m_docker(struct bench *b, struct runtime *rt, int round)
{
  struct cmd c = {.n = 0};
  struct outcome o;
  const char *args[] = {"docker",    "run",      "--rm",          "--network", "none",
                        "--runtime", rt->docker, b->docker_image, "/bin/true", NULL};
  for (size_t i = 0; args[i]; i++)
    cmd_push(&c, args[i]);
  if (spawn_timed(c.v, b->logfd, b->logfd, &o) < 0) {
    warnx("docker run with runtime %s failed in round %d", rt->docker, round);
    b->failures++;
    return;
  }
  sample(b, "docker_run", rt, round, o.ms);
}

/* ---- strace and binary facts (outside the timed rounds) ----------------- */

/* The `calls` column of strace -c's `total` line. */
static long strace_total(const char *path)
{
  char *s = read_file(path);
  long total = -1;
  for (char *save = NULL, *l = s ? strtok_r(s, "\n", &save) : NULL; l;
       l = strtok_r(NULL, "\n", &save)) {
    size_t len = strlen(l);
    if (len < 6 || strcmp(l + len - 5, "total") != 0)
      continue;
    double pct, secs, usecs;
    if (sscanf(l, "%lf %lf %lf %ld", &pct, &secs, &usecs, &total) != 4)
      total = -1;
  }
  free(s);
  return total;
}

struct proc_counts {
  long procs, threads, execs;
};

/* Syscall name of one strace -f line ("PID name(" or "PID <... name resumed>"). */
static void strace_name(const char *l, char *name, size_t size, bool *resumed)
{
  l += strspn(l, "0123456789 ");
  *resumed = strncmp(l, "<... ", 5) == 0;
  if (*resumed)
    l += 5;
  size_t n = strspn(l, "abcdefghijklmnopqrstuvwxyz0123456789_");
  if (n >= size)
    n = size - 1;
  memcpy(name, l, n);
  name[n] = '\0';
}

static void strace_count(const char *path, struct proc_counts *pc)
{
  char *s = read_file(path);
  memset(pc, 0, sizeof(*pc));
  for (char *save = NULL, *l = s ? strtok_r(s, "\n", &save) : NULL; l;
       l = strtok_r(NULL, "\n", &save)) {
    char name[32];
    bool resumed, unfinished = strstr(l, "<unfinished ...>") != NULL;
    strace_name(l, name, sizeof(name), &resumed);
    bool is_clone = !strcmp(name, "clone") || !strcmp(name, "clone3") || !strcmp(name, "fork") ||
                    !strcmp(name, "vfork");
    bool is_exec = !strcmp(name, "execve") || !strcmp(name, "execveat");
    if (is_clone && !resumed)
      (*(strstr(l, "CLONE_THREAD") ? &pc->threads : &pc->procs))++;
    else if (is_exec && !unfinished && !strstr(l, "= -1 "))
      pc->execs++;
  }
  free(s);
}

static void strace_one(struct bench *b, struct runtime *rt, int i)
{
  char id[96], dir[1024], file[1100], trace[64];
  snprintf(id, sizeof(id), "%s-s%d", rt->name, i);
  for (int pass = 0; pass < 2; pass++) {
    struct cmd c = {.n = 0}, r;
    struct outcome o;
    if (bundle_write(b, rt, rt->tpl_true, id) < 0)
      return;
    bundle_path(rt, id, dir, sizeof(dir));
    snprintf(file, sizeof(file), "%s/%s.strace%d", rt->dir, id, pass);
    snprintf(trace, sizeof(trace), "%s", pass == 0 ? "-c" : "-etrace=process");
    const char *pre[] = {"strace", "-f", trace, "-o", file, NULL};
    char *args[] = {"run", "--bundle", dir, id, NULL};
    cmd_rt(&r, rt, rt->flags, args);
    for (size_t k = 0; pre[k]; k++)
      cmd_push(&c, pre[k]);
    for (int k = 0; k < r.n; k++)
      cmd_push(&c, r.v[k]);
    if (spawn_timed(c.v, b->logfd, b->logfd, &o) < 0) {
      warnx("%s: strace run failed", rt->name);
      container_gone(b, rt, id, 0);
      return;
    }
    bundle_remove(rt, id);
    if (pass == 0) {
      long total = strace_total(file);
      if (total > 0)
        sample(b, "syscalls", rt, i, (double)total);
    } else {
      struct proc_counts pc;
      strace_count(file, &pc);
      sample(b, "procs", rt, i, (double)pc.procs);
      sample(b, "threads", rt, i, (double)pc.threads);
      sample(b, "execs", rt, i, (double)pc.execs);
    }
  }
}

/* Runs argv, stdout into a work file; returns its text (caller frees). */
static char *capture(struct bench *b, char *const argv[])
{
  char path[1024];
  struct outcome o;
  snprintf(path, sizeof(path), "%s/capture.out", b->work);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return NULL;
  int r = spawn_timed(argv, fd, b->logfd, &o);
  close(fd);
  char *s = r == 0 ? read_file(path) : NULL;
  unlink(path);
  return s;
}

static void bin_facts(struct bench *b, struct runtime *rt)
{
  struct stat st;
  if (stat(rt->bin, &st) == 0)
    sample(b, "bin_size", rt, 1, st.st_size / 1024.0);
  char *ver_argv[] = {rt->bin, "--version", NULL};
  char *ver = capture(b, ver_argv);
  if (ver != NULL) {
    ver[strcspn(ver, "\n")] = '\0';
    fprintf(b->out, "meta\tversion-%s\t%s\n", rt->name, ver);
  }
  free(ver);
  char *ldd_argv[] = {"ldd", rt->bin, NULL};
  char *ldd = capture(b, ldd_argv);
  int n = 0;
  fprintf(b->out, "meta\tlibs-%s\t", rt->name);
  for (char *save = NULL, *l = ldd ? strtok_r(ldd, "\n", &save) : NULL; l;
       l = strtok_r(NULL, "\n", &save)) {
    l += strspn(l, " \t");
    if (strstr(l, ".so") == NULL || strstr(l, "linux-vdso") != NULL)
      continue;
    fprintf(b->out, "%s%.*s", n++ ? " " : "", (int)strcspn(l, " \t"), l);
  }
  fprintf(b->out, "%s\n", n ? "" : "(static)");
  free(ldd);
  sample(b, "libs", rt, 1, n);
}

/* ---- measure ------------------------------------------------------------ */

static char *must_read(const char *dir, const char *name)
{
  char path[1024];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  char *s = read_file(path);
  if (s == NULL)
    die("read `%s`: %s", path, strerror(errno));
  return s;
}

static void load_runtime(struct bench *b, struct runtime *rt, const char *name)
{
  char path[1024];
  snprintf(rt->name, sizeof(rt->name), "%s", name);
  snprintf(rt->dir, sizeof(rt->dir), "%s/%s", b->work, name);
  if (read_line_file(rt->dir, "bin", rt->bin, sizeof(rt->bin)) < 0 ||
      read_line_file(rt->dir, "root", rt->root, sizeof(rt->root)) < 0)
    die("%s: missing `bin` or `root` in %s", name, rt->dir);
  read_lines_file(rt->dir, "flags", rt->flags, 16);
  rt->tpl_true = must_read(rt->dir, "true.json");
  rt->tpl_sleep = must_read(rt->dir, "sleep.json");
  snprintf(path, sizeof(path), "%s/agent.json", rt->dir);
  rt->tpl_agent = read_file(path);
  read_lines_file(rt->dir, rt->tpl_agent ? "agent-flags" : "no-such-file", rt->agent_flags, 16);
  snprintf(path, sizeof(path), "%s/egress-flags", rt->dir);
  rt->has_egress = access(path, R_OK) == 0;
  read_lines_file(rt->dir, rt->has_egress ? "egress-flags" : "no-such-file", rt->egress_flags, 16);
  if (read_line_file(rt->dir, "docker-runtime", rt->docker, sizeof(rt->docker)) < 0)
    rt->docker[0] = '\0';
  snprintf(path, sizeof(path), "%s/b", rt->dir);
  if (mkdir(path, 0755) < 0 && errno != EEXIST)
    die("mkdir `%s`: %s", path, strerror(errno));
}

static void write_meta(struct bench *b)
{
  struct utsname u;
  char date[64], cpu[256] = "unknown";
  time_t t = time(NULL);
  strftime(date, sizeof(date), "%Y-%m-%d %H:%M %Z", localtime(&t));
  uname(&u);
  char *ci = read_file("/proc/cpuinfo");
  char *m = ci ? strstr(ci, "model name") : NULL;
  if (m && (m = strchr(m, ':')) != NULL)
    snprintf(cpu, sizeof(cpu), "%.*s", (int)strcspn(m + 2, "\n"), m + 2);
  free(ci);
  fprintf(b->out,
          "meta\tdate\t%s\nmeta\thost\t%s\nmeta\tkernel\t%s %s\nmeta\tcpu\t%s (%ld online)\n", date,
          u.nodename, u.sysname, u.release, cpu, sysconf(_SC_NPROCESSORS_ONLN));
  fprintf(b->out, "meta\trounds\t%d\nmeta\tcontainers\t%d\nmeta\tconcurrency\t%d\n", b->rounds,
          b->containers, b->conc);
  fprintf(b->out, "meta\truntimes\t");
  for (int i = 0; i < b->nrt; i++)
    fprintf(b->out, "%s%s", i ? " " : "", b->rt[i].name);
  fprintf(b->out, "\n");
  char *notes = NULL;
  char path[1024];
  snprintf(path, sizeof(path), "%s/notes", b->work);
  notes = read_file(path);
  for (char *save = NULL, *l = notes ? strtok_r(notes, "\n", &save) : NULL; l;
       l = strtok_r(NULL, "\n", &save))
    fprintf(b->out, "note\t%s\n", l);
  free(notes);
  fflush(b->out);
}

/* The runtime at place j of round r: the order turns every round, since a
 * runtime's run pays for the teardown the one before it left to the kernel
 * (bench/README.md, ninth round). */
static struct runtime *nth(struct bench *b, int r, int j)
{
  return &b->rt[(j + r) % b->nrt];
}

static int measure(struct bench *b)
{
  write_meta(b);
  for (int i = 0; i < b->nrt; i++)
    m_run(b, &b->rt[i], 0, b->rt[i].tpl_true, b->rt[i].flags, NULL, false);
  for (int r = 1; r <= b->rounds; r++) {
    for (int j = 0; j < b->nrt; j++) {
      struct runtime *rt = nth(b, r, j);
      m_run(b, rt, r, rt->tpl_true, rt->flags, "run", true);
    }
    for (int j = 0; j < b->nrt; j++)
      m_lifecycle(b, nth(b, r, j), r);
    for (int j = 0; j < b->nrt; j++)
      m_force(b, nth(b, r, j), r);
    for (int j = 0; j < b->nrt; j++)
      if (nth(b, r, j)->has_egress)
        m_egress(b, nth(b, r, j), r);
    for (int j = 0; j < b->nrt; j++)
      m_throughput(b, nth(b, r, j), r);
    for (int j = 0; j < b->nrt; j++) {
      struct runtime *rt = nth(b, r, j);
      if (rt->tpl_agent)
        m_run(b, rt, r, rt->tpl_agent, rt->agent_flags, "agent_run", false);
    }
    for (int j = 0; j < b->nrt; j++)
      if (nth(b, r, j)->docker[0] && b->docker_image[0])
        m_docker(b, nth(b, r, j), r);
    fprintf(stderr, "bencher: round %d/%d done\n", r, b->rounds);
  }
  for (int k = 1; k <= b->strace_runs; k++)
    for (int i = 0; i < b->nrt; i++)
      strace_one(b, &b->rt[i], k);
  for (int i = 0; i < b->nrt; i++)
    bin_facts(b, &b->rt[i]);
  fprintf(b->out, "meta\tfailures\t%u\n", b->failures);
  fclose(b->out);
  return b->failures ? 2 : 0;
}

static volatile pid_t measuring_child;

static void forward_signal(int sig)
{
  if (measuring_child > 0)
    kill(measuring_child, sig);
}

/* The parent only reaps (orphaned container processes come to it) until the
 * measuring child is done, and passes on its exit status.  INT/TERM/HUP are
 * passed on to the child; run.sh deletes what it leaves. */
static int reap_until(pid_t child)
{
  int rc = 1;
  struct sigaction sa = {.sa_handler = forward_signal};
  measuring_child = child;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);
  for (;;) {
    int st;
    pid_t p = wait(&st);
    if (p < 0 && errno == EINTR)
      continue;
    if (p < 0)
      break;
    if (p == child) {
      rc = WIFEXITED(st) ? WEXITSTATUS(st) : 1;
      break;
    }
  }
  while (waitpid(-1, NULL, WNOHANG) > 0)
    ;
  return rc;
}

static int cmd_measure(int argc, char **argv)
{
  static struct bench b = {
      .rounds = 30, .containers = 50, .conc = 2, .strace_runs = 3, .cgparent = "/agentrt-bench"};
  const char *out = NULL;
  int i = 2;
  for (; i < argc && argv[i][0] == '-'; i += 2) {
    const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (v == NULL)
      die("%s needs a value", o);
    if (!strcmp(o, "--work"))
      b.work = v;
    else if (!strcmp(o, "--out"))
      out = v;
    else if (!strcmp(o, "--cgroup-parent"))
      b.cgparent = v;
    else if ((!strcmp(o, "--rounds") && parse_pos_int(v, &b.rounds) == 0) ||
             (!strcmp(o, "--containers") && parse_pos_int(v, &b.containers) == 0) ||
             (!strcmp(o, "--concurrency") && parse_pos_int(v, &b.conc) == 0) ||
             (!strcmp(o, "--strace-runs") && parse_pos_int(v, &b.strace_runs) == 0))
      continue;
    else
      die("bad option `%s %s`", o, v);
  }
  if (b.work == NULL || out == NULL || i >= argc)
    die("usage: bencher measure --work DIR --out FILE [options] RUNTIME...");
  for (; i < argc && b.nrt < MAX_RT; i++)
    load_runtime(&b, &b.rt[b.nrt++], argv[i]);
  if (read_line_file(b.work, "docker-image", b.docker_image, sizeof(b.docker_image)) < 0)
    b.docker_image[0] = '\0';
  char logp[1024];
  snprintf(logp, sizeof(logp), "%s/runtime.log", b.work);
  b.logfd = open(logp, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  b.out = fopen(out, "we");
  if (b.logfd < 0 || b.out == NULL)
    die("open `%s` or `%s`: %s", logp, out, strerror(errno));
  if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
    die("PR_SET_CHILD_SUBREAPER: %s", strerror(errno));
  fflush(NULL);
  pid_t child = fork();
  if (child < 0)
    die("fork: %s", strerror(errno));
  if (child == 0)
    _exit(measure(&b));
  fclose(b.out);
  return reap_until(child);
}

/* ---- report ------------------------------------------------------------- */

struct kv {
  char *key, *val;
};

struct data {
  char *rt[MAX_RT];
  int nrt;
  struct kv meta[64];
  int nmeta;
  char *notes[64];
  int nnotes;
  struct {
    int m, rt, round;
    double v;
  } s[MAX_SAMPLES];
  int ns;
};

static const char *meta_get(const struct data *d, const char *key)
{
  for (int i = 0; i < d->nmeta; i++)
    if (!strcmp(d->meta[i].key, key))
      return d->meta[i].val;
  return NULL;
}

static int metric_index(const char *key)
{
  for (size_t i = 0; i < N_METRICS; i++)
    if (!strcmp(metrics[i].key, key))
      return (int)i;
  return -1;
}

static int rt_index(const struct data *d, const char *name)
{
  for (int i = 0; i < d->nrt; i++)
    if (!strcmp(d->rt[i], name))
      return i;
  return -1;
}

static void parse_line(struct data *d, char *l)
{
  char *f[6] = {0};
  int n = 0;
  for (char *save = NULL, *t = strtok_r(l, "\t", &save); t && n < 6;
       t = strtok_r(NULL, "\t", &save))
    f[n++] = t;
  if (n >= 3 && !strcmp(f[0], "meta") && d->nmeta < 64) {
    d->meta[d->nmeta++] = (struct kv){strdup(f[1]), strdup(f[2])};
    if (!strcmp(f[1], "runtimes"))
      for (char *s2 = NULL, *t = strtok_r(f[2], " ", &s2); t && d->nrt < MAX_RT;
           t = strtok_r(NULL, " ", &s2))
        d->rt[d->nrt++] = strdup(t);
  } else if (n >= 2 && !strcmp(f[0], "note") && d->nnotes < 64) {
    d->notes[d->nnotes++] = strdup(f[1]);
  } else if (n == 5 && !strcmp(f[0], "sample") && d->ns < MAX_SAMPLES) {
    int m = metric_index(f[1]), r = rt_index(d, f[2]), round = 0;
    char *end = NULL;
    double v = strtod(f[4], &end);
    if (m < 0 || r < 0 || *end != '\0' || parse_pos_int(f[3], &round) < 0 || !isfinite(v))
      return;
    d->s[d->ns].m = m;
    d->s[d->ns].rt = r;
    d->s[d->ns].round = round;
    d->s[d->ns++].v = v;
  }
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
  if (n == 0)
    return NAN;
  qsort(v, (size_t)n, sizeof(double), cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int values(const struct data *d, int m, int rt, double *out)
{
  int n = 0;
  for (int i = 0; i < d->ns; i++)
    if (d->s[i].m == m && d->s[i].rt == rt)
      out[n++] = d->s[i].v;
  return n;
}

/* Median of per-round ratios a/b over the rounds where both have a sample. */
static double paired_ratio(const struct data *d, int m, int a, int b)
{
  static double r[MAX_SAMPLES];
  int n = 0;
  for (int i = 0; i < d->ns; i++) {
    if (d->s[i].m != m || d->s[i].rt != a)
      continue;
    for (int j = 0; j < d->ns; j++)
      if (d->s[j].m == m && d->s[j].rt == b && d->s[j].round == d->s[i].round && d->s[j].v > 0) {
        r[n++] = d->s[i].v / d->s[j].v;
        break;
      }
  }
  return median(r, n);
}

struct stats {
  double med, min, max;
  int n;
};

static struct stats stats_of(const struct data *d, int m, int rt)
{
  static double v[MAX_SAMPLES];
  struct stats s = {NAN, NAN, NAN, values(d, m, rt, v)};
  if (s.n > 0) {
    s.med = median(v, s.n);
    s.min = v[0];
    s.max = v[s.n - 1];
  }
  return s;
}

static void fmt_num(char *buf, size_t size, const char *unit, double v)
{
  if (isnan(v))
    snprintf(buf, size, "-");
  else if (!strcmp(unit, "ms"))
    snprintf(buf, size, v < 10 ? "%.2f" : "%.1f", v);
  else if (!strcmp(unit, "containers/s"))
    snprintf(buf, size, "%.1f", v);
  else
    snprintf(buf, size, "%.0f", v);
}

/* Ratio columns: later runtimes over earlier ones (agentrt/crun, agentrt/runc, crun/runc). */
static int ratio_pairs(const struct data *d, int pairs[][2])
{
  int n = 0;
  for (int a = d->nrt - 1; a > 0; a--)
    for (int b = a - 1; b >= 0; b--) {
      pairs[n][0] = a;
      pairs[n++][1] = b;
    }
  return n;
}

static void metric_title(const struct data *d, int m, bool brief, char *buf, size_t size)
{
  const char *n = meta_get(d, "containers") ?: "?", *c = meta_get(d, "concurrency") ?: "?";
  if (!strcmp(metrics[m].key, "throughput") && brief)
    snprintf(buf, size, "throughput, %s containers, concurrency %s", n, c);
  else if (!strcmp(metrics[m].key, "throughput"))
    snprintf(buf, size, "throughput: %s containers create/start/wait/delete, concurrency %s", n, c);
  else
    snprintf(buf, size, "%s", metrics[m].title);
}

static bool metric_present(const struct data *d, int m)
{
  for (int i = 0; i < d->ns; i++)
    if (d->s[i].m == m)
      return true;
  return false;
}

static void md_table(FILE *f, const struct data *d)
{
  int pairs[MAX_RT * MAX_RT][2], np = ratio_pairs(d, pairs);
  fprintf(f, "| metric | unit |");
  for (int r = 0; r < d->nrt; r++)
    fprintf(f, " %s median (min-max) |", d->rt[r]);
  for (int p = 0; p < np; p++)
    fprintf(f, " %s/%s |", d->rt[pairs[p][0]], d->rt[pairs[p][1]]);
  fprintf(f, "\n|---|---|");
  for (int c = 0; c < d->nrt + np; c++)
    fprintf(f, "---:|");
  fprintf(f, "\n");
  for (size_t m = 0; m < N_METRICS; m++) {
    char title[256];
    if (!metric_present(d, (int)m))
      continue;
    metric_title(d, (int)m, false, title, sizeof(title));
    fprintf(f, "| %s | %s %s |", title, metrics[m].unit, metrics[m].higher_better ? "↑" : "↓");
    for (int r = 0; r < d->nrt; r++) {
      struct stats s = stats_of(d, (int)m, r);
      char a[32], lo[32], hi[32];
      fmt_num(a, sizeof(a), metrics[m].unit, s.med);
      fmt_num(lo, sizeof(lo), metrics[m].unit, s.min);
      fmt_num(hi, sizeof(hi), metrics[m].unit, s.max);
      if (s.n > 1)
        fprintf(f, " %s (%s-%s) |", a, lo, hi);
      else
        fprintf(f, " %s |", a);
    }
    for (int p = 0; p < np; p++) {
      double q = paired_ratio(d, (int)m, pairs[p][0], pairs[p][1]);
      fprintf(f, isnan(q) ? " - |" : " %.2f |", q);
    }
    fprintf(f, "\n");
  }
}

struct target {
  const char *metric;
  bool at_least;
  double bound;
};

/* issue 24's (run, agent profile, RSS, throughput, docker); create, exec and
 * delete --force keep issue 7's */
static const struct target targets[] = {
    {"run", false, 0.5},          {"create", false, 0.8},     {"exec", false, 0.8},
    {"delete_force", false, 1.0}, {"throughput", true, 2.0},  {"rss", false, 0.5},
    {"agent_run", false, 0.6},    {"docker_run", false, 0.9},
};

static void md_targets(FILE *f, const struct data *d)
{
  int a = rt_index(d, "agentrt"), c = rt_index(d, "crun");
  fprintf(f, "\n## Targets (paired median agentrt/crun)\n\n");
  if (a < 0 || c < 0) {
    fprintf(f, "Not evaluated: agentrt or crun was not part of this run.\n");
    return;
  }
  fprintf(f, "| metric | target | measured | met |\n|---|---|---:|---|\n");
  for (size_t i = 0; i < sizeof(targets) / sizeof(targets[0]); i++) {
    int m = metric_index(targets[i].metric);
    double q = paired_ratio(d, m, a, c);
    const char *met = isnan(q) ? "not measured"
                      : (targets[i].at_least ? q >= targets[i].bound : q <= targets[i].bound)
                          ? "yes"
                          : "**no**";
    fprintf(f, "| %s | %s %.2f | %s%.2f | %s |\n", metrics[m].title,
            targets[i].at_least ? ">=" : "<=", targets[i].bound, "", q, met);
  }
}

static void md_write(FILE *f, const struct data *d)
{
  fprintf(f, "# agentrt benchmark: ");
  for (int r = 0; r < d->nrt; r++)
    fprintf(f, "%s%s", r ? " vs " : "", d->rt[r]);
  fprintf(f, "\n\n- date: %s, host: %s\n", meta_get(d, "date") ?: "?", meta_get(d, "host") ?: "?");
  fprintf(f, "- kernel: %s; cpu: %s\n", meta_get(d, "kernel") ?: "?", meta_get(d, "cpu") ?: "?");
  fprintf(f,
          "- %s rounds; runtimes alternated metric by metric within each round, the order turning "
          "every round; "
          "ratio columns are paired: the ratio per round, then its median\n",
          meta_get(d, "rounds") ?: "?");
  for (int r = 0; r < d->nrt; r++) {
    char k1[64], k2[64];
    snprintf(k1, sizeof(k1), "version-%s", d->rt[r]);
    snprintf(k2, sizeof(k2), "libs-%s", d->rt[r]);
    fprintf(f, "- %s: `%s`; libraries: %s\n", d->rt[r], meta_get(d, k1) ?: "?",
            meta_get(d, k2) ?: "?");
  }
  const char *fail = meta_get(d, "failures");
  fprintf(f, "- failed runtime invocations: %s\n", fail ?: "unknown (run interrupted?)");
  for (int i = 0; i < d->nnotes; i++)
    fprintf(f, "- note: %s\n", d->notes[i]);
  fprintf(f, "\n↓ lower is better, ↑ higher is better. Syscall and process counts come from a few "
             "`strace -f` runs outside the timed rounds (strace slows them; counts only).\n\n");
  md_table(f, d);
  md_targets(f, d);
}

/* ---- SVG chart: medians normalised to the first runtime ---------------- */

static void xml_text(FILE *f, const char *s)
{
  for (; *s; s++) {
    if (*s == '<')
      fputs("&lt;", f);
    else if (*s == '>')
      fputs("&gt;", f);
    else if (*s == '&')
      fputs("&amp;", f);
    else if (*s != '`')
      fputc(*s, f);
  }
}

static const char *const colors[] = {"#8c8c8c", "#3b7dd8", "#e4572e", "#59a14f", "#b07aa1"};

static void svg_write(FILE *f, const struct data *d)
{
  int rows[N_METRICS], nr = 0;
  double maxq = 1.0;
  for (size_t m = 0; m < N_METRICS; m++) {
    struct stats base = stats_of(d, (int)m, 0);
    if (base.n == 0 || !(base.med > 0))
      continue;
    rows[nr++] = (int)m;
    for (int r = 1; r < d->nrt; r++) {
      double q = stats_of(d, (int)m, r).med / base.med;
      if (q > maxq)
        maxq = q;
    }
  }
  if (maxq > 4)
    maxq = 4;
  const int label_w = 380, bar_w = 360, bh = 13, top = 60;
  int row_h = d->nrt * bh + 12, width = label_w + bar_w + 170, height = top + nr * row_h + 40;
  fprintf(f,
          "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
          "font-family=\"sans-serif\" font-size=\"11\">\n",
          width, height);
  fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
  fprintf(f,
          "<text x=\"10\" y=\"20\" font-size=\"14\" font-weight=\"bold\">Medians relative to "
          "%s (= 1.0); lower is better except throughput</text>\n",
          d->rt[0]);
  fprintf(f, "<text x=\"10\" y=\"38\">");
  xml_text(f, meta_get(d, "date") ?: "");
  fprintf(f, ", %s, %s rounds</text>\n", meta_get(d, "host") ?: "", meta_get(d, "rounds") ?: "?");
  for (int r = 0; r < d->nrt; r++)
    fprintf(f,
            "<rect x=\"%d\" y=\"46\" width=\"10\" height=\"10\" fill=\"%s\"/>"
            "<text x=\"%d\" y=\"55\">%s</text>\n",
            label_w + r * 90, colors[r % 5], label_w + r * 90 + 14, d->rt[r]);
  double x1 = label_w + 1.0 / maxq * bar_w;
  fprintf(f,
          "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#999\" "
          "stroke-dasharray=\"4 3\"/>\n",
          x1, top - 4, x1, top + nr * row_h);
  for (int i = 0; i < nr; i++) {
    int m = rows[i], y = top + i * row_h;
    double base = stats_of(d, m, 0).med;
    bool count = !strcmp(metrics[m].unit, "count");
    char title[256];
    metric_title(d, m, true, title, sizeof(title));
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", label_w - 8, y + row_h / 2 + 2);
    xml_text(f, title);
    fprintf(f, " %s</text>\n", metrics[m].higher_better ? "(higher better)" : "");
    for (int r = 0; r < d->nrt; r++) {
      double med = stats_of(d, m, r).med, q = med / base;
      char num[32];
      if (isnan(q))
        continue;
      fmt_num(num, sizeof(num), metrics[m].unit, med);
      double w = (q > maxq ? maxq : q) / maxq * bar_w;
      fprintf(f,
              "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"/>"
              "<text x=\"%.1f\" y=\"%d\">%.2f (%s%s%s)</text>\n",
              label_w, y + r * bh, w, bh - 2, colors[r % 5], label_w + w + 4, y + r * bh + 10, q,
              num, count ? "" : " ", count ? "" : metrics[m].unit);
    }
  }
  fprintf(f, "</svg>\n");
}

static int cmd_report(int argc, char **argv)
{
  const char *md = NULL, *svg = NULL;
  if (argc < 3)
    die("usage: bencher report RAW.tsv --md OUT.md [--svg OUT.svg]");
  for (int i = 3; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--md"))
      md = argv[i + 1];
    else if (!strcmp(argv[i], "--svg"))
      svg = argv[i + 1];
    else
      die("bad option `%s`", argv[i]);
  }
  char *raw = read_file(argv[2]);
  if (raw == NULL || md == NULL)
    die("read `%s`: %s", argv[2], raw ? "no --md given" : strerror(errno));
  static struct data d;
  for (char *save = NULL, *l = strtok_r(raw, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
    parse_line(&d, l);
  if (d.nrt == 0)
    die("%s: no runtimes listed", argv[2]);
  FILE *f = fopen(md, "we");
  if (f == NULL)
    die("open `%s`: %s", md, strerror(errno));
  md_write(f, &d);
  fclose(f);
  if (svg != NULL && (f = fopen(svg, "we")) != NULL) {
    svg_write(f, &d);
    fclose(f);
  }
  free(raw);
  return 0;
}

int main(int argc, char **argv)
{
  if (argc >= 2 && !strcmp(argv[1], "measure"))
    return cmd_measure(argc, argv);
  if (argc >= 2 && !strcmp(argv[1], "report"))
    return cmd_report(argc, argv);
  fprintf(stderr, "usage: bencher measure|report ...\n");
  return 1;
}
