/* delete.c - `agentrt delete [--force] ID`.
 *
 * created -> the init is killed and the container removed; stopped ->
 * removed; running/paused -> refused unless --force (SIGKILL first).
 * `delete --force` of an unknown id succeeds: Podman and CRI-O call it
 * from cleanup paths that must be idempotent. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/failpoint.h"
#include "common/log.h"
#include "common/util.h"
#include "container/container.h"
#include "datadir/datadir.h"
#include "monitor/subagents.h"
#include "workspace/workspace.h"

static const struct opt_spec delete_specs[] = {
    {"force", 'f', false, 1},
    {"help", 'h', false, 2},
    {NULL, 0, false, 0},
};

/* An `agentrt sandbox` of that name holds <root>/.sandbox-ID.lock while it
 * runs (cli/sandbox.c); one killed, or run with --keep, left the file after
 * its container went.  Removed when no sandbox holds it: a sandbox that
 * locks it meanwhile finds it gone and makes another. */
static void drop_sandbox_lock(const struct global_opts *g, const char *id)
{
  cleanup_free char *path = xfmt("%s/.sandbox-%s.lock", g->root, id);
  cleanup_close int fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);

  if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0)
    unlink(path);
}

int cmd_delete(const struct global_opts *g, int argc, char **argv, struct error *err)
{
  struct opt_iter it = {argc, argv, 1};
  struct container *c = NULL;
  bool force = false;
  const char *val;
  int id, n, ret;

  opt_permute(&it, delete_specs);
  while ((n = opt_next(&it, delete_specs, &id, &val, "delete", err)) == 1) {
    if (id == 2) {
      printf("Usage: agentrt delete [--force] ID\n");
      return 0;
    }
    force = val == NULL || strcmp(val, "true") == 0;
  }
  if (n < 0)
    return -1;
  if (argc - it.i != 1)
    return error_set(err, 0, "delete: expected exactly one container id");
  if (container_load(g, argv[it.i], LOCK_EX, &c, err) < 0) {
    if (force && err->code == ENOENT) {
      error_clear(err);
      return 0;
    }
    if (!force || err->code != EBADMSG)
      return -1;
    log_warning("delete `%s`: %s; removing what can be found", argv[it.i], err->msg);
    error_clear(err);
    if (container_load_damaged(g, argv[it.i], &c, err) < 0)
      return -1;
  }
  container_refresh_status(c);
  if ((c->status == STATUS_RUNNING || c->status == STATUS_PAUSED) && !force) {
    error_set(err, 0, "delete `%s`: cannot delete a container that is not stopped: container %s",
              c->id, c->status == STATUS_PAUSED ? "paused" : "still running");
    container_free(c);
    return -1;
  }
  /* its sub-agents first: their cgroups are nested in its own, and a child
   * must not outlive its parent (monitor/subagents.h) */
  subagent_reap_children("/proc/self/exe", g->root, g->data_dir, c->id);
  FAILPOINT("delete-before-destroy");
  ret = container_destroy(c, g, err);
  if (ret == 0)
    drop_sandbox_lock(g, c->id);
  /* an engine's delete returns with nothing left: the image's unmount the
   * monitor's last child may still be making (monitor/monitor_files.c) is
   * waited for here; `run` does not wait for it */
  if (ret == 0 && g->store != NULL) {
    cleanup_free char *dir = xfmt("%s/%s/%s", g->store, DATADIR_WORKSPACES, c->id);
    if (workspace_image_settle(dir, 5000) < 0)
      log_warning("delete `%s`: the workspace image `%s` is still being unmounted", c->id, dir);
  }
  container_free(c);
  return ret;
}
