/* start.c - `agentrt start ID`: let a created container exec its process. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <fcntl.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/create.h"
#include "common/failpoint.h"
#include "common/log.h"
#include "common/util.h"
#include "container/audit_cli.h"
#include "container/container.h"
#include "container/notify_socket.h"
#include "container/spawn.h"

static bool start_frozen(void *c)
{
  return container_frozen(c);
}

int cmd_start(const struct global_opts *g, int argc, char **argv, struct error *err)
{
  struct container *c = NULL;
  const char *id, *notify = notify_socket_host();
  cleanup_close int notify_fd = -1;
  int ret = -1;

  if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
    printf("Usage: agentrt start ID\n");
    return 0;
  }
  if ((id = cli_one_id("start", argc, argv, err)) == NULL)
    return -1;
  if (container_load(g, id, LOCK_EX, &c, err) < 0)
    return -1;
  switch (c->status) {
  case STATUS_CREATED:
    break;
  case STATUS_STOPPED:
    error_set(err, 0, "start `%s`: cannot start a container that has stopped", c->id);
    goto out;
  case STATUS_CREATING:
    error_set(err, 0, "start `%s`: container is still being created", c->id);
    goto out;
  case STATUS_PAUSED: /* frozen before its start: its init could not answer */
    error_set(err, 0, "start `%s`: cannot start a container in the paused state", c->id);
    goto out;
  default:
    error_set(err, 0, "start `%s`: cannot start an already running container", c->id);
    goto out;
  }
  if (container_load_config(c, err) < 0)
    goto out;
  if (c->config->process == NULL) {
    /* runtime spec: start MUST fail when process was not set; such a
     * container can never run, so it is stopped rather than left waiting */
    error_set(err, 0, "start `%s`: config.json: process: required to start a container", c->id);
    proc_kill_wait(c->state->pid, c->state->pid_start_time, SIGKILL, 2000);
    goto out;
  }
  /* NOTIFY_SOCKET: bound before the program runs (create made its folder) */
  if (notify != NULL && faccessat(c->dirfd, NOTIFY_STATE_DIR, F_OK, 0) == 0 &&
      (notify_fd = notify_socket_bind(c->dirfd, err)) < 0) {
    error_prefix(err, "start `%s`", c->id);
    goto out;
  }
  audit_cli_event(g->root, c->id, "start", NULL); /* before its first process */
  if (fifo_start(c->dirfd, start_frozen, c, err) < 0) {
    error_prefix(err, "start `%s`", c->id);
    audit_cli_event(g->root, c->id, "start_failed", NULL);
    goto out;
  }
  FAILPOINT("start-after-fifo");
  c->state->started = true;
  if (run_poststart_hooks(c, err) < 0) {
    error_prefix(err, "start `%s`", c->id);
    container_save_state(c, &(struct error){0}); /* started: delete runs poststop */
    goto out;
  }
  free(c->state->status);
  c->state->status = strdup("running");
  ret = container_save_state(c, err);
  if (ret == 0 && notify_fd >= 0) {
    struct error e = {0};
    /* as runc: start returns once the program said READY=1 (or is gone);
     * kill and delete from other shells need not wait for that */
    flock(c->dirfd, LOCK_UN);
    if (notify_socket_relay(notify_fd, notify, c->state->pid, c->state->pid_start_time,
                            c->state->pid, &e) < 0)
      log_warning("start `%s`: %s, ignoring", c->id, e.msg);
  }
out:
  container_free(c);
  return ret;
}
