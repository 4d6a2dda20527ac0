/* egress_pod.h - the container side of the egress policy (the policy itself
 * runs in the monitor, egress_helper.h): the checks at create, a pod's
 * containers joining their sandbox's policy, the table's removal at delete. */
#ifndef AGENTRT_EGRESS_POD_H
#define AGENTRT_EGRESS_POD_H

#include "common/error.h"
#include "container/container.h"
#include "profile/profile.h"

/* create, before anything is started: refuse a policy the container's own
 * capabilities could undo.  No policy (`oci`): 0. */
int egress_check(const struct container *c, const struct profile_egress *pe, struct error *err);
/* A container joining a network namespace by path: an exclusive lock of the
 * root's .egress-netns.lock (its fd, or -1: no path, or no lock), held by
 * create until it ends (the file removed then: egress_netns_unlock), so that a second create
 * looking for the policer of that namespace (egress_pod_sandbox) waits until the first one's
 * monitor polices it or the first create failed and is gone: two `run` given one namespace path at
 * once both started their own policy, and one failed with EADDRINUSE (egress.bats netns-join-race).
 */
int egress_netns_lock(const struct global_opts *g, const struct container *c);
/* Removes the lock file and closes *fd (-1 after; nothing when -1). */
void egress_netns_unlock(const struct global_opts *g, int *fd);
/* Pods (Kubernetes through containerd's CRI or CRI-O, Podman pods): the
 * containers share the sandbox (pause) container's network namespace.  The
 * sandbox installs the table and hosts the resolver; a container of the
 * pod (annotation container-type "container" naming the sandbox) adds its
 * allow entries to the sandbox's policy through its control socket instead
 * of a second table and resolver.  *ret_id: the sandbox's id when it is an
 * agentrt container with a policy in force in the same netns, else NULL. */
int egress_pod_sandbox(const struct global_opts *g, const struct container *c, char **ret_id,
                       struct error *err);
int egress_pod_join(const struct global_opts *g, const char *sandbox_id,
                    const struct profile_egress *pe, struct error *err);
/* In the state directory of a pod's container that joined its sandbox's
 * policy (the sandbox's id): its delete may have to take the table out. */
#define EGRESS_POD_MARK "egress-pod"
/* delete: take the table out of a network namespace joined by path, when no
 * other container of the root runs there (a pod whose sandbox ended first). */
void egress_teardown(struct container *c, const struct global_opts *g);

#endif
