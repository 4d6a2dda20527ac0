/* pause.c - `agentrt pause ID` / `agentrt resume ID` through the freezer. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "container/audit_cli.h"
#include "container/container.h"
#include "os/fsutil.h"

static int freeze(const struct global_opts *g, int argc, char **argv, bool on, struct error *err)
{
  const char *verb = on ? "pause" : "resume";
  struct container *c = NULL;
  const char *id;
  int ret = -1;

  if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
    printf("Usage: agentrt %s ID\n", verb);
    return 0;
  }
  if ((id = cli_one_id(verb, argc, argv, err)) == NULL)
    return -1;
  if (container_load(g, id, LOCK_EX, &c, err) < 0)
    return -1;
  if (on && c->status != STATUS_RUNNING && c->status != STATUS_CREATED) {
    error_set(err, 0, "pause `%s`: container not running", c->id);
    goto out;
  }
  if (!on && c->status != STATUS_PAUSED) {
    error_set(err, 0, "resume `%s`: container not paused", c->id);
    goto out;
  }
  if (container_cgroup(c, g, err) < 0)
    goto out;
  if (c->cgroup == NULL) {
    error_set(err, 0, "%s `%s`: the container has no cgroup", verb, c->id);
    goto out;
  }
  /* a created one: its mark first, so that its status reads the freezer */
  if (on && c->status == STATUS_CREATED &&
      write_file_atomic_at(c->dirfd, CONTAINER_PAUSED_MARK, "", 0, err) < 0) {
    error_prefix(err, "%s `%s`", verb, c->id);
    goto out;
  }
  if (cgroup_freeze(c->cgroup, on, err) < 0) {
    error_prefix(err, "%s `%s`", verb, c->id);
    if (on)
      unlinkat(c->dirfd, CONTAINER_PAUSED_MARK, 0);
    goto out;
  }
  if (!on)
    unlinkat(c->dirfd, CONTAINER_PAUSED_MARK, 0);
  audit_cli_event(g->root, c->id, verb, NULL);
  ret = 0;
out:
  container_free(c);
  return ret;
}

int cmd_pause(const struct global_opts *g, int argc, char **argv, struct error *err)
{
  return freeze(g, argc, argv, true, err);
}

int cmd_resume(const struct global_opts *g, int argc, char **argv, struct error *err)
{
  return freeze(g, argc, argv, false, err);
}
