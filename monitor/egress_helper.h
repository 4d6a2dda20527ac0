/* egress_helper.h - a container's egress allowlist: the nftables table in its
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
#ifndef AGENTRT_EGRESS_HELPER_H
#define AGENTRT_EGRESS_HELPER_H

#include <stdio.h>
#include <sys/types.h>

#include "audit/audit.h"
#include "common/error.h"
#include "profile/profile.h"

/* The helper's control socket in the state dir, and its longest request. */
#define EGRESS_CTL_SOCK "egress.sock"
#define EGRESS_CTL_MAX 1024

struct egress_helper;

/* Parse the policy (and the upstream resolvers).  No policy: 0, *ret NULL.  upstream_start:
 * the start time of the process a dns.upstreamNetns of the form /proc/PID/ns/net must still be
 * (a sub-agent's parent's init, pid-reuse-subagent-dns); 0: none, the path is opened as is. */
int egress_helper_new(const struct profile_egress *pe, uint64_t upstream_start,
                      struct egress_helper **ret, struct error *err);
/* The init exists (stopped before exec): resolver sockets in its netns, the
 * table, the control socket in the state dir.  DNS decisions are appended
 * to `audit` (NULL: not recorded). */
int egress_helper_attach(struct egress_helper *h, pid_t init_pid, int state_dirfd,
                         struct audit_log *audit, struct error *err);
/* Asked before each "dns" record is written (kind "dns", detail its verdict):
 * false = counted elsewhere (a flood of lookups), not written. */
void egress_helper_set_admit(struct egress_helper *h,
                             bool (*admit)(void *ud, const char *kind, const char *detail),
                             void *ud);
/* Resolve until stop_fd is readable or on_aux (called when aux_fd is
 * readable; NULL = none) returns > 0. */
int egress_helper_run(struct egress_helper *h, int stop_fd, int aux_fd, int (*on_aux)(void *ud),
                      void *aux_ud, struct error *err);
void egress_helper_free(struct egress_helper *h);
/* Close the resolver's sockets bound to port 53 in the container's
 * namespace (and the control socket's listener) now, before the monitor
 * leaves its descriptors' teardown to a child (os/pid.h): the port stayed
 * bound until that child ended, after `delete` had returned, and the next
 * policy in a namespace given by path failed with EADDRINUSE
 * (egress.bats netns-join-race under the sanitizers). */
void egress_helper_release_ports(struct egress_helper *h);
/* Before attach: the table redirects new TCP connections to ports 443 and 80
 * to the TLS proxy at port inside the netns (monitor/tls_proxy.h); sockets
 * with the mark are not redirected. */
void egress_helper_set_proxy(struct egress_helper *h, uint16_t port, uint32_t mark,
                             uint16_t child_port, uint32_t child_gid);
/* One control request to a container's egress.sock ("list", "allow E1 E2
 * ...", "deny E1 ..."); its reply (but "ok") to out, NULL = none. */
int egress_ctl(int dirfd, const char *id, const char *req, FILE *out, struct error *err);

#endif
