/* monitor.h - the per-container monitor: the one helper process that
 * records the audit trail and hosts the egress policy's DNS resolver.
 *
 * `create` forks it early, so that it gets ready while the init is set up:
 *
 *   setup_cgroup() -> monitor_launch() -> spawn_init() [-> monitor_go()]
 *     -> monitor_attach() -> container_save_state() ... -> monitor_wait_ready()
 *
 * monitor_launch() creates the trail, writes <state dir>/audit (the trail
 * directory; CLI verbs append there while it exists) and monitor.pid ("PID
 * STARTTIME") and forks once.  The monitor: new session, fds 0/1/2 on
 * /dev/null (a helper holding the runtime's stdout or
 * stderr hangs containerd's shim), every other fd closed but its channel and
 * the state dir, no parent-death signal (it outlives `create`), host
 * namespaces, not in the container's cgroup.  Until the init exists it
 * parses the egress policy and subscribes to the proc connector.  Right
 * after the clone spawn_init() calls monitor_go() with the init's pid: the
 * monitor writes the trail's "create" record (the profile's changes, as
 * `explain` lists them) and, while the init sets up its root, opens what
 * needs its namespaces (its pidfd, NFLOG and the resolver's sockets in its
 * netns, the nftables table, the control socket egress.sock).  When the
 * root is in place monitor_attach() says so; the monitor marks the
 * workspace (fanotify), records "monitor" and reports ready.
 * monitor_wait_ready() returns only then, so `start` cannot outrun it; an
 * error (a policy that cannot be installed) fails create.
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
#include "monitor/tls_plugin.h"
#include "profile/profile.h"

/* The egress ruleset logs denied packets to this NFLOG group unless the
 * policy says otherwise (struct egress_policy.log_group). */
#define MONITOR_NFLOG_GROUP_DEFAULT 0

struct monitor_opts {
  const char *root;  /* state root (--root) */
  const char *store; /* its store in the data directory (datadir/datadir.h) */
  const char *id;
  int state_dirfd; /* the container's state dir (monitor.pid, audit, egress.sock) */
  const char *bundle;
  const char *cgroup_path; /* as saved in state.json, NULL = none */
  bool systemd_cgroup;
  /* the audit settings, workspace, egress policy and the changes to record;
   * NULL, or no trail and no policy: no monitor (launch sets pid 0) */
  const struct profile_result *profile;
  int nflog_group; /* -1 = do not listen for denied packets */
  /* a pod's container: its egress policy is the sandbox's (container/egress_pod.h), no
   * table, resolver or NFLOG of its own; NULL = none */
  const char *egress_sandbox;
  bool in_userns; /* the runtime runs in a user namespace (a rootless engine) */
  /* the per-container CA of the TLS proxy (profile secrets), NULL = none;
   * the monitor keeps it in memory only */
  const struct tls_ca *tls_ca;
  /* sub-agents (monitor/subagents.h): the listening agent.sock, -1 = off */
  int agent_fd;
  const char *data_dir;
  const char *rootfs;
  const char *profile_name;
  const struct oci_config *config;
  /* the kernel refuses us process events (monitor_proc_refused): the
   * profile's notify filter stops exec calls too, for the monitor to record
   * (monitor_exec.c) */
  bool exec_records;
};

struct monitor_handle {
  pid_t pid; /* 0 = none */
  int fd;    /* our end of its channel */
  bool go_sent;
  bool root_sent;
  char *trail;
  char *warning; /* set by monitor_wait_ready: a source that failed */
  /* For the init's seccomp listener (spawn_opts.notify_fd), -1 = none: the
   * trail is off or the profile has no filter.  create hands it to spawn or
   * sends "OFF <why>" on it. */
  int notify_fd;
  /* The workspace image's mount (ours, -1 = none), set by create: it goes
   * with ROOT (SCM_RIGHTS), so that the monitor reaches the upper layer
   * without mounting the image again; its reference keeps the image
   * mounted as the monitor's own mount did.  Closed once sent. */
  int upper_fs;
};

/* `exec` with the trail on: its process's seccomp listener goes to the
 * monitor over a connection to this socket in the container's state
 * directory (monitor/monitor_seccomp.c): one message, "L" with the fd as
 * SCM_RIGHTS (or "OFF why"), answered "OK" once the monitor polls it. */
#define MONITOR_SECCOMP_SOCKET "monitor.sock"
/* Connected (SOCK_SEQPACKET, O_CLOEXEC), or -1 with err set (no monitor). */
int monitor_seccomp_connect(int state_dirfd, struct error *err);

int monitor_launch(const struct monitor_opts *o, struct monitor_handle *h, struct error *err);
/* Does monitor_launch give the init's seccomp listener a channel to the
 * monitor (monitor_handle.notify_fd)?  The trail on and a profile filter. */
bool monitor_wants_listener(const struct profile_result *p);
/* The init exists in its final namespaces (spawn_opts.on_clone, ud = the
 * handle): hand its pid over; the monitor records "create" and opens what
 * needs only the namespaces (NFLOG, the resolver, the nftables table). */
int monitor_go(void *ud, pid_t init_pid, uint64_t init_start_time, struct error *err);
/* The init's root is final (spawn_opts.on_rooted, ud = the handle): ROOT
 * now, when GO went at the clone, so that the monitor opens the workspace
 * while the init finishes its set-up.  Nothing is said on failure:
 * monitor_attach sends it again and reports. */
void monitor_root(void *ud);
/* Its root is in place, it waits before exec: GO if not sent yet, then
 * ROOT (unless monitor_root did); the monitor opens the workspace's
 * fanotify mark and gets ready. */
int monitor_attach(struct monitor_handle *h, pid_t init_pid, uint64_t init_start_time,
                   struct error *err);
/* Bounded wait for "ready"; the monitor's error otherwise.  A source that
 * could not be set up (recorded as "audit_error") leaves h->warning set. */
int monitor_wait_ready(struct monitor_handle *h, struct error *err);
void monitor_handle_close(struct monitor_handle *h);
/* create failed: close the channel (before attach the monitor leaves at
 * EOF, after it at its init's death), wait for it and reap it. */
void monitor_abandon(struct monitor_handle *h);
/* Wait up to timeout_ms for the monitor named by <state dir>/monitor.pid to
 * finish (after the init died it records "exit" and leaves), then TERM, then
 * KILL.  No pid file: nothing to do. */
int monitor_stop(int state_dirfd, int timeout_ms, struct error *err);
/* Was a monitor started for this state directory (monitor.pid) that is not
 * alive now (killed, or ended)?  false without a pid file or when it runs. */
bool monitor_gone_at(int state_dirfd);

/* The kernel takes a subscription to process events only from its initial
 * user namespace.  A caller about to enter another (the rootless `sandbox`)
 * subscribes first: monitor_proc_subscribe() returns such a socket (or -1,
 * err saying why) and monitor_proc_adopt() hands it to the next monitor this
 * process starts, which then owns it; monitor_proc_adopted() is that fd or
 * -1 (to carry it over an exec). */
int monitor_proc_subscribe(struct error *err);
void monitor_proc_adopt(int fd);
int monitor_proc_adopted(void);
/* Does this kernel refuse us process events (the proc connector takes
 * only privileged subscribers)?  Then create asks for exec_records. */
bool monitor_proc_refused(void);

#endif
