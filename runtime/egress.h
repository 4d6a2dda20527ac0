/* egress.h - a container's egress allowlist: the nftables table in its
 * network namespace and the DNS resolver that pins allowed names.
 *
 * Both live in the container's monitor process (monitor.h), the one
 * per-container helper: it is forked by `create` before the init, parses
 * the policy while the init is being set up (egress_helper_new), and once
 * the init exists and before it can run anything opens the resolver's
 * sockets inside the container's netns and installs the table in one
 * netlink batch, checked ack by ack (egress_helper_attach).  It then
 * answers DNS for the container from the host side until the init exits
 * (egress_helper_run).  Live changes go through its control socket
 * <state dir>/egress.sock.
 */
#ifndef AGENTRT_EGRESS_RT_H
#define AGENTRT_EGRESS_RT_H

#include <stdio.h>
#include <sys/types.h>

#include "audit/audit.h"
#include "common/error.h"
#include "profile/profile.h"
#include "runtime/container.h"

struct egress_helper;

/* create, before anything is started: refuse a policy the container's own
 * capabilities could undo.  No policy (`oci`): 0. */
int egress_check(const struct container *c, const struct profile_egress *pe, struct error *err);
/* Parse the policy (and the upstream resolvers).  No policy: 0, *ret NULL. */
int egress_helper_new(const struct profile_egress *pe, struct egress_helper **ret,
                      struct error *err);
/* The init exists (stopped before exec): resolver sockets in its netns, the
 * table, the control socket in the state dir.  DNS decisions are appended
 * to `audit` (NULL: not recorded). */
int egress_helper_attach(struct egress_helper *h, pid_t init_pid, int state_dirfd,
                         struct audit_log *audit, struct error *err);
/* Resolve until stop_fd is readable or on_aux (called when aux_fd is
 * readable; NULL = none) returns > 0. */
int egress_helper_run(struct egress_helper *h, int stop_fd, int aux_fd, int (*on_aux)(void *ud),
                      void *aux_ud, struct error *err);
void egress_helper_free(struct egress_helper *h);
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
/* One control request to a container's egress.sock ("list", "allow E1 E2
 * ...", "deny E1 ..."); its reply (but "ok") to out, NULL = none. */
int egress_ctl(int dirfd, const char *id, const char *req, FILE *out, struct error *err);
/* delete: take the table out of a network namespace joined by path. */
void egress_teardown(struct container *c);
/* `agentrt egress ID list|allow ENTRY|deny ENTRY` */
int cmd_egress(const struct global_opts *g, int argc, char **argv, struct error *err);

#endif
