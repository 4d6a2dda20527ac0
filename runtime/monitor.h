/* monitor.h - the per-container monitor: the helper process that records the
 * audit trail (and, with egress, hosts the DNS resolver).
 *
 * `create` starts it once the init exists (stopped before exec, namespaces
 * and mounts in place) and before the state is saved:
 *
 *   spawn_init() -> monitor_start() -> container_save_state() -> ...
 *
 * monitor_start() writes the trail's "create" record (the profile's changes,
 * as `explain` lists them), then double-forks the monitor: new session, fds
 * 0/1/2 on /dev/null (ENGINES.md §2.4: a helper holding the runtime's stdout
 * or stderr hangs containerd's shim), every other fd closed, no parent-death
 * signal (it outlives `create`), host namespaces, not in the container's
 * cgroup.  It opens its sources (proc connector, fanotify on the workspace,
 * NFLOG in the container's netns), records a "monitor" record, reports ready
 * and only then does monitor_start() return, so `start` cannot outrun it.
 * It writes <state dir>/monitor.pid ("PID STARTTIME") and <state dir>/audit
 * (the trail directory; CLI verbs append there while it exists).
 *
 * The monitor exits on its own when the init exits (pidfd): it drains its
 * sources, flushes coalesced file/network events, records "oom" if the
 * cgroup's OOM-kill count rose, then "exit" (code or signal, from the proc
 * connector's exit event).  `delete` calls monitor_stop() after killing the
 * init and before removing the state dir: a bounded wait for that, then
 * SIGTERM, then SIGKILL.
 */
#ifndef AGENTRT_MONITOR_H
#define AGENTRT_MONITOR_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/error.h"
#include "profile/profile.h"

/* The egress ruleset logs denied packets to this NFLOG group unless the
 * policy says otherwise (struct egress_policy.log_group). */
#define MONITOR_NFLOG_GROUP_DEFAULT 0

struct monitor_opts {
  const char *root; /* state root (--root) */
  const char *id;
  int state_dirfd; /* the container's state dir (monitor.pid, audit) */
  const char *bundle;
  pid_t init_pid;
  uint64_t init_start_time;
  const char *cgroup_path; /* as saved in state.json, NULL = none */
  bool systemd_cgroup;
  /* audit settings, workspace and the changes to record; NULL or
   * audit.enabled == false: no monitor (monitor_start returns 0, pid 0) */
  const struct profile_result *profile;
  int nflog_group; /* -1 = do not listen for denied packets */
};

int monitor_start(const struct monitor_opts *o, pid_t *ret_pid, struct error *err);
/* Wait up to timeout_ms for the monitor named by <state dir>/monitor.pid to
 * finish (after the init died it records "exit" and leaves), then TERM, then
 * KILL.  No pid file: nothing to do. */
int monitor_stop(int state_dirfd, int timeout_ms, struct error *err);

#endif
