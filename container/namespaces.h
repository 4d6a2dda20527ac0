/* namespaces.h - which namespaces a container gets, joining by path, and
 * user namespace id mappings. */
#ifndef AGENTRT_NAMESPACES_H
#define AGENTRT_NAMESPACES_H

#include <stdbool.h>
#include <sys/types.h>

#include "common/error.h"
#include "oci/config.h"

struct ns_plan {
  int clone_flags;           /* CLONE_NEW* created at clone time */
  int unshare_flags;         /* created by the init after joining (cgroup ns on v1) */
  int join_fd[OCI_NS_COUNT]; /* fds of namespaces joined by path, -1 otherwise */
  bool new_ns[OCI_NS_COUNT];
  bool has_ns[OCI_NS_COUNT]; /* listed in the config at all */
  bool user_joined;          /* the user namespace of join_fd was joined before the clone */
};

/* Validate linux.namespaces and open every path (errors name the path). */
int ns_plan_build(const struct oci_config *c, struct ns_plan *ret, struct error *err);
void ns_plan_close(struct ns_plan *p);
/* Close the plan's fds at scope exit (ns_plan_close is idempotent).  The plan
 * must be built before the scope can be left: ns_plan_build initialises it
 * before it can fail, a zeroed plan would close fd 0. */
#define cleanup_ns_plan __attribute__((cleanup(ns_plan_close)))
/* In the init: join every namespace given by path (user first). */
int ns_join_paths(struct ns_plan *p, bool skip_pid_time, struct error *err);
/* In the parent: write /proc/<pid>/{uid_map,gid_map} (and setgroups). */
int ns_write_id_maps(pid_t pid, const struct oci_config *c, struct error *err);
/* A new user namespace with these mappings, held by nothing but the
 * returned fd (for an idmapped mount). */
int ns_userns_fd(const struct oci_idmap *uids, size_t nu, const struct oci_idmap *gids, size_t ng,
                 struct error *err);
/* In the parent: /proc/self/timens_offsets before the init enters a new time ns. */
int ns_write_time_offsets(const struct oci_config *c, struct error *err);

#endif
