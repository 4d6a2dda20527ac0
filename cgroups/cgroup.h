/* cgroup.h - the container cgroup manager, independent of the CLI.
 *
 * Two backends behind one table of operations, chosen at run time from what
 * the host mounts: cgroup v2 (unified, primary) and cgroup v1 (legacy and
 * hybrid hosts).  Each backend takes its hierarchy root as a parameter so
 * unit tests can run it against a fake tree in a temp directory.
 */
#ifndef AGENTRT_CGROUP_H
#define AGENTRT_CGROUP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/error.h"
#include "oci/config.h"

struct cgroup_manager;

struct cgroup_opts {
  const char *id;               /* container id (default path /agentrt/<id>) */
  const char *cgroups_path;     /* linux.cgroupsPath, may be NULL/"" */
  bool systemd;                 /* --systemd-cgroup: "slice:prefix:name" form */
  const char *fs_root;          /* NULL = /sys/fs/cgroup; tests pass a fake tree */
  int force_version;            /* 0 = detect, 1 or 2 = that backend (tests) */
  bool rootless;                /* not real root: only delegated cgroups are usable */
  const char *proc_self_cgroup; /* NULL = /proc/self/cgroup; tests pass a fake file */
  /* linux.resources of the container, consulted by cgroup_create: when the
   * cgroup cannot be made (EACCES/EROFS) and none is requested, cgroup_create
   * returns 1, not an error (see cgroup_create).  Borrowed, may be NULL. */
  const struct oci_resources *resources;
  /* linux.devices: unused.  As runc and crun do, a linux.devices entry is
   * not allowed in the device cgroup by itself: it needs a rule in
   * linux.resources.devices.  Borrowed, may be NULL. */
  const struct oci_device *devices;
  size_t n_devices;
};

/* true when r asks for any limit (so a missing cgroup must be an error). */
bool cgroup_resources_requested(const struct oci_resources *r);

/* Work out the backend and the container's cgroup path (no changes made). */
int cgroup_manager_new(const struct cgroup_opts *o, struct cgroup_manager **ret, struct error *err);
/* Reopen an existing container cgroup from the path saved in state.json. */
int cgroup_manager_load(const char *saved_path, const struct cgroup_opts *o,
                        struct cgroup_manager **ret, struct error *err);
void cgroup_manager_free(struct cgroup_manager *m);

/* The warnings the calls on m collected since the last take (a resource with
 * no equivalent on this cgroup version that is ignored, a cgroup shared with
 * another container), oldest first; NULL when none.  The library never prints
 * them: the caller logs them (or not) and frees the vector. */
char **cgroup_take_warnings(struct cgroup_manager *m);

/* The path to save in state.json (relative to the hierarchy root). */
const char *cgroup_manager_path(const struct cgroup_manager *m);
int cgroup_manager_version(const struct cgroup_manager *m);

/* mkdir the cgroup (all v1 controllers / v2 with controllers enabled).
 * 0: created.  1: not created for lack of permission (EACCES/EPERM/EROFS,
 * typically rootless without delegation) while o->resources requests no
 * limit: not an error, err says why (err->code = the errno); the caller may
 * warn and run without a cgroup.  -1: any other failure (err->code = errno). */
int cgroup_create(struct cgroup_manager *m, struct error *err);
/* An O_DIRECTORY fd of the v2 cgroup for clone3(CLONE_INTO_CGROUP), or -1. */
int cgroup_clone_fd(struct cgroup_manager *m);
/* A hybrid host (v1 controllers, a cgroup2 mount without controllers): an
 * O_DIRECTORY fd of the container's cgroup in that cgroup2 hierarchy, for
 * clone3(CLONE_INTO_CGROUP), or -1 (v2, pure v1, a fake tree, a systemd
 * unit not made yet).  Joining it by a write to cgroup.procs takes the
 * kernel's threadgroup lock, whose write side waits for an RCU grace
 * period: 5-8 ms on this host for a `create` that follows no other within a
 * few ms.  While cgroup_unified_at_clone(m, true) is in force,
 * cgroup_join_fds and cgroup_add_pid leave that hierarchy out; a clone that
 * was refused the flag joins it with cgroup_unified_add_pid. */
int cgroup_unified_clone_fd(struct cgroup_manager *m);
void cgroup_unified_at_clone(struct cgroup_manager *m, bool at_clone);
int cgroup_unified_add_pid(struct cgroup_manager *m, pid_t pid, struct error *err);
int cgroup_add_pid(struct cgroup_manager *m, pid_t pid, struct error *err);
/* cgroup v1: open each hierarchy's `tasks` file (O_WRONLY) into fds[0..*n)
 * for a forked, still single-threaded child to join with cgroup_join_self
 * instead of the parent's cgroup_add_pid.  Writing a pid to cgroup.procs
 * takes the kernel's global threadgroup lock, whose write side waits for an
 * RCU grace period (~10 ms, the largest cost of `create` on v1 hosts); a
 * thread writing "0" to `tasks` moves only itself and skips that lock.
 * The kernel checks permission against the opener (us).  *n = 0 on v2 and
 * in a fake tree: use CLONE_INTO_CGROUP or cgroup_add_pid there. */
/* cgroup v1 (and a hybrid host's cgroup2): the host directory of the
 * container's cgroup in the hierarchy that a line of /proc/self/cgroup names
 * `field` ("cpu,cpuacct", "name=systemd"; "" for cgroup2), when `own` (that
 * line's path) is the cgroup this manager made there; else NULL.  The init
 * binds it for a config mount of type "cgroup" instead of mounting the
 * whole hierarchy to take a subtree of it. */
const char *cgroup_v1_own_dir(struct cgroup_manager *m, const char *field, const char *own);
/* exec --cgroup [CTRL[,CTRL]:]SUB: from now on the manager's cgroup is the
 * existing sub-cgroup SUB of the container's (for the matching v1
 * controllers, or all); `..` is refused. */
int cgroup_use_sub(struct cgroup_manager *m, const char *spec, struct error *err);
#define CGROUP_JOIN_MAX 16
int cgroup_join_fds(struct cgroup_manager *m, int fds[CGROUP_JOIN_MAX], size_t *n,
                    struct error *err);
/* In the child: write "0" to each fd (moves the calling thread), close them. */
int cgroup_join_self(const int *fds, size_t n, struct error *err);
void cgroup_join_fds_close(int *fds, size_t n);
/* Apply linux.resources (create and update); a value the host cannot
 * enforce is an error naming the controller, never silently dropped.
 * r may be NULL.  When update is false the device cgroup is also set up:
 * deny all, then r->devices in order, then the default devices every
 * container gets (null, zero, full, random, urandom, tty, ptmx, pts, mknod).
 * With update true devices are left alone. */
int cgroup_apply(struct cgroup_manager *m, const struct oci_resources *r, bool update,
                 struct error *err);
int cgroup_freeze(struct cgroup_manager *m, bool freeze, struct error *err);
/* 1 frozen, 0 not, < 0 error */
int cgroup_is_frozen(struct cgroup_manager *m, struct error *err);
/* Signal every process in the cgroup (cgroup.kill for SIGKILL on v2). */
int cgroup_kill_all(struct cgroup_manager *m, int sig, struct error *err);
int cgroup_pids(struct cgroup_manager *m, pid_t **ret, size_t *ret_n, struct error *err);
/* Before a nested cgroup is made below this one (a sub-agent's): on v2 move
 * the container's processes into the leaf CGROUP_NEST_LEAF ("agentrt-parent")
 * and enable the controllers in its subtree_control (the kernel refuses that
 * for a cgroup with processes).  The container's cgroup, and the path in
 * state.json, stay the same: its limits bound the whole family; add_pid and
 * clone_fd then use the leaf, cgroup_pids and kill_all the subtree.
 * Idempotent; nothing to do on v1. */
int cgroup_make_nestable(struct cgroup_manager *m, struct error *err);
/* Kill what is left and remove the cgroup; missing cgroup is not an error. */
int cgroup_destroy(struct cgroup_manager *m, struct error *err);

struct cgroup_stats {
  uint64_t cpu_total_ns, cpu_user_ns, cpu_kernel_ns;
  uint64_t cpu_throttled_periods, cpu_periods, cpu_throttled_ns;
  uint64_t mem_usage, mem_limit, mem_max_usage, mem_failcnt, mem_cache, mem_swap_usage;
  uint64_t pids_current, pids_limit;
  uint64_t oom_kill_count;
  /* blkio and hugetlb are reported through the JSON writer below */
};
int cgroup_stats(struct cgroup_manager *m, struct cgroup_stats *ret, struct error *err);
/* The runc-shaped `events --stats` JSON "data" object. */
int cgroup_stats_json(struct cgroup_manager *m, char **ret_json, struct error *err);
/* The directory holding `controller`'s files for this cgroup (v2: the
 * cgroup itself), or NULL when the host lacks the controller. */
const char *cgroup_controller_dir(struct cgroup_manager *m, const char *controller);
/* Count of OOM kills so far (memory.events oom_kill / v1 memory.oom_control). */
int cgroup_oom_count(struct cgroup_manager *m, uint64_t *ret, struct error *err);
/* A non-blocking fd that becomes readable when the cgroup may have had an
 * OOM (read cgroup_oom_count to know): what `events` waits on besides its
 * interval.  Drain it with cgroup_oom_watch_drain. */
int cgroup_oom_watch(struct cgroup_manager *m, struct error *err);
void cgroup_oom_watch_drain(int fd);

#endif
