/* subagents.h - the monitor's side of the sub-agent API (docs/subagents.md).
 *
 * create binds <state dir>/agent.sock (subagent_listen) before the monitor
 * forks, so the socket exists when the init's mounts bind it at
 * /run/agentrt/agent.sock; the monitor accepts on it and forks one handler
 * per connection, which checks the request against the parent's policy and
 * runs this binary's CLI (`run`, `exec`, `kill`, `workspace`, `audit`) for
 * the child, with the client's stdio.  Children are recorded in
 * <state dir>/sub/<name>/ (id, config.json, profile.json, exit) and are
 * containers of their own in the same state root, named "<parent>.<name>".
 */
#ifndef AGENTRT_SUBAGENTS_H
#define AGENTRT_SUBAGENTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "common/error.h"
#include "oci/config.h"
#include "profile/profile.h"

#define SUBAGENT_SOCK "agent.sock"
#define SUBAGENT_CLIENT_NAME "agentrt-client"
#define SUBAGENT_DIR "sub"

/* Bind and listen on <state dir>/agent.sock (mode 0600 is enough: the
 * container's root reaches it through the bind; a container user that is
 * not root gets 0666). Returns the listening fd. */
int subagent_listen(int state_dirfd, struct error *err);
/* The static client's bytes, written once per data directory as
 * <dir>/agentrt-client-<size> (mode 0555); *ret the path. */
int subagent_client_path(const char *data_dir, char **ret, struct error *err);

/* What a handler needs to know about the parent (filled by the monitor). */
struct subagent_parent {
  const char *exe; /* this binary */
  const char *root;
  const char *data_dir;
  const char *store; /* the root's store in the data directory (workspaces) */
  const char *id;
  const char *rootfs;
  const char *profile_name; /* what the parent was created with (name or path) */
  const char *trail;        /* the parent's trail dir, NULL = none */
  const char *cgroup_path;
  const struct oci_config *config;
  const struct profile_result *profile;
  pid_t init_pid;
  uint64_t init_start; /* its start time: what /proc/PID is checked by */
};

/* A connection accepted by the monitor: handle it in a process of its own
 * (double fork; the caller closes conn afterwards).  Returns -1 when the
 * fork failed. */
int subagent_serve(const struct subagent_parent *p, int conn);
/* An fd (epoll) that is readable when a handler has ended: the monitor
 * then calls subagent_reap_handlers, so no handler stays a zombie.  -1
 * when it cannot be made (handlers are then reaped at the next
 * connection). */
int subagent_reaper_fd(void);
void subagent_reap_handlers(void);
/* The parent is gone: delete every child (bounded), for the monitor's end
 * and `delete`. */
void subagent_reap_children(const char *exe, const char *root, const char *data_dir,
                            const char *id);

#endif
