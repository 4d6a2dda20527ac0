/* setup.h - the steps the container's init process runs to build its world.
 *
 * The init is forked by `create`/`run` (container/spawn.c) into its new
 * namespaces and calls, in this order (each step hard-fails):
 *
 *   sysctl_apply()          linux.sysctl through the verified procfs handle
 *   rootfs_setup()          propagation, rootfs bind, config mounts, /dev, pty
 *   -- createRuntime/prestart hooks run by the parent, createContainer here --
 *   rootfs_pivot()          pivot_root (or MS_MOVE+chroot with --no-pivot)
 *   rootfs_finalize()       masked paths, readonly paths, read-only root
 *   process_check_executable()
 *   -- wait for `start` --
 *   process_exec(): user, capabilities, seccomp, LSM label, then the
 *                   startContainer hooks under all of them, then the exec
 *
 * struct setup_ctx carries what those steps share.  Nothing here is
 * allowed to resolve a path inside the rootfs without safepath.h.
 */
#ifndef AGENTRT_SETUP_H
#define AGENTRT_SETUP_H

#include <stdbool.h>
#include <sys/types.h>

#include "common/error.h"
#include "oci/config.h"

struct cgroup_manager;

struct setup_ctx {
  const struct oci_config *config;
  const char *id;
  const char *bundle; /* absolute */
  const char *rootfs; /* absolute host path (root.path resolved against the bundle) */
  bool no_pivot;
  bool new_userns;      /* we created a user namespace: mknod fails, bind devices instead */
  bool in_userns;       /* running in any non-initial user namespace (rootless engines) */
  bool keep_bind_flags; /* a bind keeps the source's flags its options do not name */
  bool new_cgroupns;
  bool joined_cgroupns; /* by path: /proc/self/cgroup is then relative to another root */
  bool dev_readonly;    /* a config mount of /dev asked for ro: mounted rw, made ro at the end */
  const int
      *bind_fds;      /* per config mount: a bind source cloned by the runtime, or -1; NULL: none */
  int pty_master_fd;  /* out: set by rootfs_setup() when process.terminal, else -1 */
  int pty_peer_fd;    /* out: the pty's peer (TIOCGPTPEER) for the process's stdio, or -1 */
  int rootfd;         /* O_PATH fd of the rootfs, opened by rootfs_setup() */
  char *cgroup_table; /* /proc/self/cgroup read before the cgroup ns was unshared, or NULL */
  struct cgroup_manager *cgroup; /* the runtime's (a copy: we are its clone), or NULL */
  const char *ws_fs_path;        /* a detached mount to attach at this host path before the first
                                    mount that names it (or after the mounts), or NULL */
  int ws_fs_fd;
  bool ws_fs_late; /* ws_fs_fd comes as WS_FS on sync_sock when needed (spawn.h) */
  int sync_sock;   /* the init's end of the create protocol */
  /* a read-only root that is the host's own "/" (agentrt sandbox): the
   * mounts below it that came with the recursive bind (a separate /boot,
   * /srv, /var of the host), by mount id, made read-only too at the end;
   * set by rootfs_setup, freed by rootfs_finalize */
  int *host_submounts;
  size_t n_host_submounts;
};

/* rootfs.c / mount_setup.c / devices.c */
int rootfs_setup(struct setup_ctx *ctx, struct error *err);
/* ws_fs_fd attached at ws_fs_path (taken from the parent first when late);
 * no-op once done or without one. */
int rootfs_attach_ws_fs(struct setup_ctx *ctx, struct error *err);
int rootfs_pivot(struct setup_ctx *ctx, struct error *err);
int rootfs_finalize(struct setup_ctx *ctx, struct error *err);

/* sysctl.c: linux.sysctl, validated against the namespaces the container has
 * (a net.* key needs a private network namespace, kernel.{hostname,domainname,
 * shm*,msg*,sem} an ipc/uts one, as runc checks). */
int sysctl_apply(const struct oci_config *config, struct error *err);

#endif
