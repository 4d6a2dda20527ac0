/* ps.c - `agentrt ps [--format table|json] ID`: the processes in the
 * container's cgroup (containerd reads the JSON array of host pids). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/util.h"
#include "container/container.h"
#include "os/procfs.h"

static const struct opt_spec ps_specs[] = {
    {"format", 'f', true, 1},
    {"help", 'h', false, 2},
    {NULL, 0, false, 0},
};

static void print_cmdline(pid_t pid)
{
  char path[64], buf[4096];
  struct error e = {0};
  ssize_t n;

  snprintf(path, sizeof path, "%d/cmdline", pid);
  n = procfs_read(path, buf, sizeof buf, &e);
  if (n <= 0) {
    printf("\n");
    return;
  }
  for (ssize_t i = 0; i < n - 1; i++)
    if (buf[i] == '\0')
      buf[i] = ' ';
  printf("%s\n", buf);
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
      printf("Usage: agentrt ps [--format table|json] ID\n");
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
  if (strcmp(format, "json") == 0) {
    printf("[");
    for (size_t i = 0; i < npids; i++)
      printf("%s%d", i ? "," : "", pids[i]);
    printf("]\n");
  } else {
    printf("%-8s %s\n", "PID", "CMD");
    for (size_t i = 0; i < npids; i++) {
      printf("%-8d ", pids[i]);
      print_cmdline(pids[i]);
    }
  }
  ret = 0;
out:
  free(pids);
  container_free(c);
  return ret;
}
