/* tls_proxy.h - the egress proxy of a container with secrets: TLS
 * termination where a secret is bound, a server-name check everywhere else.
 *
 * The monitor forks it once the init exists (tls_proxy_start); it enters the
 * container's network namespace and listens on 127.0.0.1 and ::1 at
 * TLS_PROXY_PORT.  The egress table's nat_out chain (netfilter/egress.h)
 * redirects the container's new TCP connections to ports 443 and 80 there;
 * the proxy's own upstream sockets carry TLS_PROXY_MARK and are not
 * redirected, but go through the allowlist like every other packet of the
 * namespace (so a live `egress deny` cuts them: the client's connection
 * ends with them).
 *
 * Per connection (one process each, forked by the proxy: a blocking state
 * machine per connection, and a crash or a slow handshake costs that
 * connection only, never the monitor's trail or its DNS):
 *   - port 443: the ClientHello's server name (SNI) is read without being
 *     consumed.  None: refused.  A name one of the secrets is bound to:
 *     the TLS is terminated with a certificate for that name from the
 *     per-container CA (tls_ca.h), ALPN http/1.1 only; the proxy connects
 *     to the original destination itself, verifies the upstream against
 *     the host's trust store and egress.tls.upstreamCA, and forwards
 *     request by request (http1.h): Host must be the server name (421
 *     otherwise), and a secret's placeholder in the secret's header is
 *     replaced by the value when that name is one of the secret's hosts.
 *     A placeholder anywhere else goes out as it is and is recorded.
 *     After a 101 (WebSocket) the bytes are copied as they are.
 *   - every other name (443), and plain HTTP (80: the Host field): the
 *     name must be allowed and resolve (through the container's own
 *     resolver) to the connection's destination address, else the
 *     connection is refused and recorded (no domain fronting across a
 *     shared address); then the bytes are copied untouched.
 * Trail records: "http" for each terminated request (method, host, path
 * without the query, status, bytes each way, the secret used: never a
 * header value), "tls_flow" for each checked flow (name, address, port,
 * allowed or why not).
 */
#ifndef AGENTRT_MONITOR_TLS_PROXY_H
#define AGENTRT_MONITOR_TLS_PROXY_H

#include <stdint.h>
#include <sys/types.h>

#include "common/error.h"
#include "monitor/secret_store.h"
struct tls_ca; /* monitor/tls_ca.h (the plugin only) */
#include "profile/profile.h"

#define TLS_PROXY_PORT 15001
#define TLS_PROXY_MARK 0x61677274u /* "agrt" */
/* Where the egress table sends the connections of a sub-agent's slirp4netns
 * (the group SUBPROTO_NET_GID, common/subproto.h): the same proxy, but no
 * secret of this container's is put into what a child sends, whatever
 * placeholder it learnt (the child's own secrets are its own proxy's). */
#define TLS_PROXY_CHILD_PORT 15002
#define TLS_PROXY_MAX_CONNS 128 /* connection processes at once; more are closed */
/* ... of which a sub-agent's (TLS_PROXY_CHILD_PORT), counted apart: a child
 * holding the proxy's connections (slow downloads) took all of them, and its
 * parent's own were closed (secrets-proxy.bats child-conn-starve) */
#define TLS_PROXY_MAX_CHILD_CONNS 64
/* New connections taken a second, per listening port (the container's, a
 * sub-agent's): TLS_PROXY_CONN_BURST at once, then TLS_PROXY_CONN_RATE; the
 * rest wait in the kernel's accept queue.  Each costs the proxy, outside the
 * container's cgroup, a process, a lookup and, terminated, a leaf
 * certificate and a handshake (about 2 ms of CPU): a container held to 0.25
 * CPU sending ClientHellos of fixed bytes in a loop made it spend 0.8 of a
 * CPU, uncharged (secrets-proxy.bats handshake-flood-cpu). */
#define TLS_PROXY_CONN_BURST 128
#define TLS_PROXY_CONN_RATE 32

struct tls_proxy_opts {
  const char *id;
  pid_t init_pid; /* its network namespace */
  const struct secret_store *secrets;
  const struct tls_ca *ca;
  const char *upstream_ca;             /* PEM file, NULL = the host's store only */
  const char *trail;                   /* the audit trail, NULL = none */
  const struct profile_egress *egress; /* egress.http rules */
};

/* Fork the proxy; returns once it listens (or with its error).  It exits
 * when the monitor does (parent-death signal). */
int tls_proxy_start(const struct tls_proxy_opts *o, pid_t *ret_pid, struct error *err);

/* fork() for the proxy and each connection (tls_proxy.c; the plugin's
 * loader points it at agentrt's own). */
extern pid_t (*tls_proxy_fork)(void);

#endif
