/* init.h - the container init's own side of the create protocol. */
#ifndef AGENTRT_INIT_H
#define AGENTRT_INIT_H

#include <stdbool.h>

#include "container/namespaces.h"
#include "oci/config.h"

struct init_args {
  const struct oci_config *config;
  struct ns_plan *plan;
  int sock;        /* our end of the sync socketpair */
  int fifo_fd;     /* exec.fifo held read-write, or -1 (run) */
  int host_pid;    /* our pid in the runtime's pid namespace (from GO), for hooks */
  int lock_fd;     /* the state dir fd the parent flock()s: closed at once */
  int runtime_pid; /* our parent, the runtime, in its pid namespace (init_main), or 0 */
  const char *id;
  const char *bundle;
  const char *rootfs;
  bool no_pivot;
  int preserve_fds;
  bool new_userns;
  bool dumpable_until_go;     /* made by a non-root caller: its maps are written after the clone */
  bool netns_early;           /* born in a network namespace made before the clone, `lo` up */
  bool tell_rooted;           /* send ROOTED right after the pivot */
  const void *config_bpf;     /* struct sock_fprog of linux.seccomp, or NULL (spawn_opts) */
  const void *extra_bpf;      /* struct sock_fprog of the profile's filter, or NULL */
  const void *notify_bpf;     /* its notify variant, or NULL (process_opts) */
  int notify_fd;              /* the monitor's socket for the listener, -1 */
  int listener_fd;            /* connected to linux.seccomp.listenerPath, or < 0 */
  const int *bind_fds;        /* bind sources cloned by the runtime (per mount, -1), or NULL */
  bool in_userns;             /* already in a non-initial user namespace (rootless engine) */
  bool keep_bind_flags;       /* profile_result.keep_bind_flags */
  const int *cgroup_join_fds; /* v1 `tasks` fds to join right after GO (cgroup_join_self) */
  size_t n_cgroup_join;
  struct cgroup_manager *cgroup; /* the runtime's, or NULL: mounts_cgroup binds its dirs */
  const char *ws_fs_path;        /* attach ws_fs_fd there before the mounts (spawn.h), or NULL */
  int ws_fs_fd;
  bool ws_fs_late;     /* ws_fs_fd arrives as WS_FS on sock, before the mount that needs it */
  bool pdeathsig;      /* spawn_opts.pdeathsig */
  bool no_new_keyring; /* spawn_opts.no_new_keyring */
};

/* init-environ, init-cmdline: remember where the kernel put the runtime's
 * argument and environment strings at execve (what /proc/PID/cmdline and
 * /proc/PID/environ show); main calls it before anything changes them.
 * The init rewrites them (keeping copies of what it needs) so that, until
 * the execve at `start`, it reads "agentrt init" and carries nothing of the
 * caller's command line or environment. */
void init_note_process_area(int argc, char **argv, char **envp);

/* exec-environ: the process `exec` forks is a clone of the runtime in the
 * container's pid namespace (frozen there with --ignore-paused) until its
 * execve.  Around the fork the parent moves its environment to the heap and
 * rewrites the kernel's copies as the init does; the child is born with
 * them, the parent puts its own back with process_area_restore. */
struct process_area_copy {
  char *args, *env;
};
void process_area_hide(struct process_area_copy *ret_saved);
void process_area_restore(struct process_area_copy *saved);

__attribute__((noreturn)) void init_main(struct init_args *a);

#endif
