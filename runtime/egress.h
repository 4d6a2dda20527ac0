/* egress.h - a container's egress allowlist: the nftables table in its
 * network namespace and the helper process that runs its DNS resolver.
 *
 * At create (after the init exists, before it can run anything) agentrt
 * opens the resolver's sockets inside the container's netns, installs the
 * table in one netlink batch (checked ack by ack) and forks a helper that
 * answers DNS for the container from the host side until the init exits.
 * Live changes go through the helper's control socket <state dir>/egress.sock.
 */
#ifndef AGENTRT_EGRESS_RT_H
#define AGENTRT_EGRESS_RT_H

#include <sys/types.h>

#include "common/error.h"
#include "profile/profile.h"
#include "runtime/container.h"

/* Nothing to do when the profile has no egress policy (`oci`). */
int egress_setup(struct container *c, const struct profile_egress *pe, pid_t init_pid,
                 struct error *err);
/* Stop the helper (delete). */
void egress_teardown(struct container *c);
/* `agentrt egress ID list|allow ENTRY|deny ENTRY` */
int cmd_egress(const struct global_opts *g, int argc, char **argv, struct error *err);

#endif
