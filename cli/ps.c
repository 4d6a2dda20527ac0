/* ps.c - `agentrt ps [--format table|json] ID [PS-ARGS...]`: the processes in
 * the container's cgroup (containerd reads the JSON array of host pids).  The
 * table is ps(1)'s output for PS-ARGS (default `-ef`) cut to the container's
 * processes, as runc prints it; without ps(1) on the host and without
 * PS-ARGS, a PID/CMD table of agentrt's own. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "audit/jbuf.h"
#include "cli/cli.h"
#include "common/failpoint.h"
#include "common/util.h"
#include "container/container.h"
#include "os/fsutil.h"
#include "os/pid.h"
#include "os/procfs.h"

static const struct opt_spec ps_specs[] = {
    {"format", 'f', true, 1},
    {"help", 'h', false, 2},
    {NULL, 0, false, 0},
};

/* The command line of pid, opened as /proc/PID (an fd that names that process for as long
 * as it lives), for the terminal; NULL when it is gone.  *ret_dfd: that fd, for the caller to
 * check, once it knows pid is still the container's, that it is still this process. */
static char *read_cmdline(pid_t pid, int *ret_dfd)
{
  char name[24], buf[4096];
  struct error e = {0};
  cleanup_close int dfd = -1, fd = -1;
  struct jbuf b = {0};
  ssize_t n;

  *ret_dfd = -1;
  snprintf(name, sizeof name, "%d", (int)pid);
  dfd = procfs_open(name, O_PATH | O_DIRECTORY, &e);
  fd = dfd < 0 ? -1 : openat(dfd, "cmdline", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  n = fd < 0 ? -1 : read(fd, buf, sizeof buf);
  if (n < 0)
    return NULL;
  for (ssize_t i = 0; i < n - 1; i++)
    if (buf[i] == '\0')
      buf[i] = ' ';
  /* the container's own words: its control characters escaped for the terminal */
  jb_text(&b, buf, n > 0 ? strnlen(buf, (size_t)n) : 0);
  *ret_dfd = dfd;
  dfd = -1;
  return jb_take(&b);
}

/* Is the process opened as dfd (read_cmdline) still alive?  Then its pid still names it. */
static bool still_alive(int dfd)
{
  cleanup_close int fd = openat(dfd, "stat", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  char c;

  return fd >= 0 && read(fd, &c, 1) == 1;
}

/* Column of the header's `PID` field (0-based), -1 when there is none. */
static int pid_column(const char *header)
{
  cleanup_free char *h = xstrdup(header);
  char *save = NULL;
  int col = 0;

  for (char *f = strtok_r(h, " \t", &save); f; f = strtok_r(NULL, " \t", &save), col++)
    if (strcmp(f, "PID") == 0)
      return col;
  return -1;
}

static bool line_pid(const char *line, int col, pid_t *ret)
{
  cleanup_free char *l = xstrdup(line);
  char *save = NULL, *f = strtok_r(l, " \t", &save);
  int v;

  for (int i = 0; f && i < col; i++)
    f = strtok_r(NULL, " \t", &save);
  if (f == NULL || parse_int(f, &v) < 0)
    return false;
  *ret = v;
  return true;
}

/* ps(1) with ARGS, its output in *ret (NUL-terminated).  ENOENT: no ps. */
static int run_ps(char **args, int nargs, char **ret, struct error *err)
{
  int fds[2], st;
  size_t len = 0;
  pid_t pid;
  int r;

  if (pipe2(fds, O_CLOEXEC) < 0)
    return error_errno(err, "ps: pipe");
  pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return error_errno(err, "ps: fork");
  }
  if (pid == 0) {
    char **av = xmalloc(sizeof *av * (size_t)(nargs + 2));
    av[0] = (char *)"ps";
    memcpy(av + 1, args, sizeof *av * (size_t)nargs);
    av[nargs + 1] = NULL;
    dup2(fds[1], STDOUT_FILENO);
    dup2(fds[1], STDERR_FILENO);
    execvp("ps", av);
    _exit(errno == ENOENT ? 127 : 126);
  }
  close(fds[1]);
  r = read_fd_all(fds[0], 16 << 20, ret, &len, err);
  close(fds[0]);
  if (waitpid(pid, &st, 0) < 0)
    st = 0;
  if (r < 0)
    return -1;
  if (WIFEXITED(st) && WEXITSTATUS(st) == 127) {
    free(*ret);
    *ret = NULL;
    error_set(err, 0, "ps: ps(1) not found");
    err->code = ENOENT;
    return -1;
  }
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    error_set(err, 0, "ps: ps(1) failed: %.200s", *ret);
    free(*ret);
    *ret = NULL;
    return -1;
  }
  return 0;
}

static bool has_pid(const pid_t *pids, size_t n, pid_t p)
{
  for (size_t i = 0; i < n; i++)
    if (pids[i] == p)
      return true;
  return false;
}

/* The container's processes now: its cgroup's, or its init while alive (no cgroup). */
static int container_pids(struct container *c, pid_t **ret, size_t *ret_n, struct error *err)
{
  *ret = NULL;
  *ret_n = 0;
  if (c->cgroup)
    return cgroup_pids(c->cgroup, ret, ret_n, err);
  if (c->status != STATUS_STOPPED && proc_alive(c->state->pid, c->state->pid_start_time)) {
    *ret = xmalloc(sizeof **ret);
    (*ret)[0] = c->state->pid;
    *ret_n = 1;
  }
  return 0;
}

/* ps(1)'s header, then its lines whose PID is one of PIDS and still the container's once ps(1)
 * has run (pid-reuse-ps: a process of the container that ended meanwhile, its pid taken by a
 * host process, had that process's line shown as the container's). */
static int print_ps_table(struct container *c, char **args, int nargs, const pid_t *pids,
                          size_t npids, struct error *err)
{
  cleanup_free pid_t *now = NULL;
  size_t nnow = 0;
  static char *dflt[] = {(char *)"-ef"};
  cleanup_free char *out = NULL;
  char *save = NULL, *line;
  int col;

  if (run_ps(nargs ? args : dflt, nargs ? nargs : 1, &out, err) < 0 ||
      container_pids(c, &now, &nnow, err) < 0)
    return -1;
  line = strtok_r(out, "\n", &save);
  if (line == NULL || (col = pid_column(line)) < 0)
    return error_set(err, 0, "ps: no PID field in ps(1)'s output");
  printf("%s\n", line);
  while ((line = strtok_r(NULL, "\n", &save)) != NULL) {
    pid_t p;
    if (!line_pid(line, col, &p))
      return error_set(err, 0, "ps: cannot parse a pid in `%.80s`", line);
    if (has_pid(pids, npids, p) && has_pid(now, nnow, p))
      printf("%s\n", line);
  }
  return 0;
}

/* PID and CMD of each process of PIDS that is still the container's once its command line
 * was read: alive (through the fd read_cmdline opened) and in the container (pid-reuse-ps). */
static int print_own_table(struct container *c, const pid_t *pids, size_t npids, struct error *err)
{
  char **cmd = xmalloc0((npids ? npids : 1) * sizeof *cmd);
  int *dfd = xmalloc0((npids ? npids : 1) * sizeof *dfd);
  cleanup_free pid_t *now = NULL;
  size_t nnow = 0;
  int r;

  for (size_t i = 0; i < npids; i++)
    cmd[i] = read_cmdline(pids[i], &dfd[i]);
  r = container_pids(c, &now, &nnow, err);
  if (r == 0)
    printf("%-8s %s\n", "PID", "CMD");
  for (size_t i = 0; i < npids; i++) {
    if (r == 0 && cmd[i] && has_pid(now, nnow, pids[i]) && still_alive(dfd[i]))
      printf("%-8d %s\n", pids[i], cmd[i]);
    free(cmd[i]);
    if (dfd[i] >= 0)
      close(dfd[i]);
  }
  free(cmd);
  free(dfd);
  return r;
}

int cmd_ps(const struct global_opts *g, int argc, char **argv, struct error *err)
{
  struct opt_iter it = {argc, argv, 1};
  struct container *c = NULL;
  const char *format = "table", *val;
  pid_t *pids = NULL;
  size_t npids = 0;
  int id, n, ret = -1;

  while ((n = opt_next(&it, ps_specs, &id, &val, "ps", err)) == 1) {
    if (id == 1)
      format = val;
    else {
      printf("Usage: agentrt ps [--format table|json] ID [PS-ARGS...]\n");
      return 0;
    }
  }
  if (n < 0)
    return -1;
  if (strcmp(format, "table") != 0 && strcmp(format, "json") != 0)
    return error_set(err, 0, "ps: --format: expected `table` or `json`, got `%s`", format);
  if (argc - it.i < 1)
    return error_set(err, 0, "ps: expected a container id");
  if (container_load(g, argv[it.i], 0, &c, err) < 0)
    return -1;
  if (container_cgroup(c, g, err) < 0)
    goto out;
  if (c->cgroup) {
    if (cgroup_pids(c->cgroup, &pids, &npids, err) < 0)
      goto out;
  } else if (c->status != STATUS_STOPPED) {
    pids = xmalloc(sizeof *pids);
    pids[0] = c->state->pid;
    npids = 1;
  }
  FAILPOINT_PAUSE("ps-after-pids");
  if (strcmp(format, "json") == 0 && npids == 0) {
    printf("null\n"); /* ps-stopped-null: runc's empty list */
  } else if (strcmp(format, "json") == 0) {
    printf("[");
    for (size_t i = 0; i < npids; i++)
      printf("%s%d", i ? "," : "", pids[i]);
    printf("]\n");
  } else if (print_ps_table(c, argv + it.i + 1, argc - it.i - 1, pids, npids, err) < 0) {
    if (err->code != ENOENT || argc - it.i > 1)
      goto out;
    error_clear(err);
    if (print_own_table(c, pids, npids, err) < 0)
      goto out;
  }
  ret = 0;
out:
  free(pids);
  container_free(c);
  return ret;
}
