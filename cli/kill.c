/* kill.c - `agentrt kill [--all] ID [SIGNAL]` (default SIGTERM).
 *
 * Plain kill of a stopped container fails with "container not running"
 * (containerd maps it to NotFound); --all on a stopped container succeeds
 * and signals whatever is left in the cgroup.  Signal 0 is a liveness check:
 * it succeeds while the container's init (or, with --all, a process of its
 * cgroup) is alive and sends nothing. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/log.h"
#include "container/audit_cli.h"
#include "container/container.h"
#include "container/process.h"

static const struct opt_spec kill_specs[] = {
    {"all", 'a', false, 1},
    {"help", 'h', false, 2},
    {NULL, 0, false, 0},
};

/* "0", "+0", "00": signal 0 as runc reads it (Go's strconv.Atoi) */
static bool is_signal_zero(const char *s)
{
  s += *s == '+';
  return *s != '\0' && s[strspn(s, "0")] == '\0';
}

static int signal_init(struct container *c, int sig, struct error *err)
{
  int pidfd = (int)syscall(SYS_pidfd_open, c->state->pid, 0);
  int r;

  if (pidfd < 0)
    return error_set(err, 0, "kill `%s`: container not running", c->id);
  /* the start time check in refresh_status guards the pid; the pidfd pins it */
  if (!proc_alive(c->state->pid, c->state->pid_start_time)) {
    close(pidfd);
    return error_set(err, 0, "kill `%s`: container not running", c->id);
  }
  r = (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
  close(pidfd);
  if (r < 0)
    return error_errno(err, "kill `%s`", c->id);
  return 0;
}

int cmd_kill(const struct global_opts *g, int argc, char **argv, struct error *err)
{
  struct opt_iter it = {argc, argv, 1};
  struct container *c = NULL;
  bool all = false;
  const char *val;
  int id, n, sig = SIGTERM, ret = -1;

  opt_permute(&it, kill_specs);
  while ((n = opt_next(&it, kill_specs, &id, &val, "kill", err)) == 1) {
    if (id == 2) {
      printf("Usage: agentrt kill [--all] ID [SIGNAL]\n");
      return 0;
    }
    all = val == NULL || strcmp(val, "true") == 0;
  }
  if (n < 0)
    return -1;
  if (argc - it.i < 1 || argc - it.i > 2)
    return error_set(err, 0, "kill: expected a container id and an optional signal");
  /* signal 0 checks that the process exists and sends nothing (kill(2)) */
  if (argc - it.i == 2 && is_signal_zero(argv[it.i + 1]))
    sig = 0;
  else if (argc - it.i == 2 && parse_signal(argv[it.i + 1], &sig, err) < 0)
    return error_prefix(err, "kill");
  if (container_load(g, argv[it.i], 0, &c, err) < 0)
    return -1;
  /* SIGKILL to a container without a pid namespace of its own: its init is
   * nothing special there, the others would live on; every process of its
   * cgroup goes, also once the init is gone (runc 1.2) */
  if (!all && sig == SIGKILL && !c->state->has_pidns)
    all = true;
  if (all) {
    if (container_cgroup(c, g, err) < 0)
      goto out;
    if (c->cgroup != NULL) {
      audit_cli_kill(g->root, c->id, sig, true);
      if (cgroup_kill_all(c->cgroup, sig, err) < 0) {
        error_prefix(err, "kill `%s`", c->id);
        goto out;
      }
      ret = 0;
      goto thaw;
    }
    if (c->status == STATUS_STOPPED) {
      ret = 0;
      goto out;
    }
  } else if (c->status == STATUS_STOPPED || c->status == STATUS_CREATING) {
    error_set(err, 0, "kill `%s`: container not running", c->id);
    goto out;
  }
  audit_cli_kill(g->root, c->id, sig, all); /* before the exit it may cause */
  if (signal_init(c, sig, err) < 0)
    goto out;
  ret = 0;
thaw:
  /* SIGKILL to a paused container must take effect: thaw it (as runc does) */
  if (sig == SIGKILL && c->status == STATUS_PAUSED && c->cgroup) {
    struct error e = {0};
    if (cgroup_freeze(c->cgroup, false, &e) < 0)
      log_warning("kill `%s`: thaw: %s", c->id, e.msg);
  }
out:
  container_free(c);
  return ret;
}
