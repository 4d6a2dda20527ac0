/* seccomp_notify.h - linux.seccomp.listenerPath: handing the seccomp
 * user-notification fd of the config's filter to the engine's agent.
 *
 * Runtime spec 1.2 (config-linux.md, "container process state"): when the
 * filter uses SCMP_ACT_NOTIFY, the runtime connects to listenerPath (AF_UNIX,
 * SOCK_STREAM), sends one container process state document with the
 * listener fd as SCM_RIGHTS (`fds: ["seccompFd"]`, `metadata` =
 * listenerMetadata) and closes the connection.  A failure to connect or to
 * send is an error of create/run/exec.  The kernel allows one listener per
 * filter chain: with a listenerPath the config's filter owns it.
 *
 * The runtime connects before the process is forked (the socket is on the
 * host, which the container's process cannot reach after the pivot); the
 * process builds the message, loads the filter with
 * SECCOMP_FILTER_FLAG_NEW_LISTENER and sends it just before its exec, so the
 * agent gets the fd when the filter is in force.  When the agent goes away
 * later, the kernel fails the notified syscalls with ENOSYS. */
#ifndef AGENTRT_SECCOMP_NOTIFY_H
#define AGENTRT_SECCOMP_NOTIFY_H

#include <stddef.h>
#include <sys/types.h>

#include "common/error.h"
#include "oci/config.h"

/* Connect to s->listener_path; returns the socket (O_CLOEXEC), or -1 with
 * err set.  Returns -2 (no error) when the filter needs no listener. */
int seccomp_listener_connect(const struct oci_seccomp *s, struct error *err);
/* The container process state document (JSON, NUL-terminated, malloc'd). */
char *seccomp_listener_msg(const struct oci_seccomp *s, const char *id, const char *status,
                           pid_t pid, const char *bundle, const struct oci_kv *annotations,
                           size_t n_annotations);
/* One sendmsg of msg with notify_fd as SCM_RIGHTS on sock. */
int seccomp_listener_send(int sock, const char *msg, int notify_fd, struct error *err);

#endif
