/* notify_socket.h - sd_notify passed through from a container to the engine
 * (NOTIFY_SOCKET), as runc and crun do: `podman run --sdnotify=container`. */
#ifndef AGENTRT_NOTIFY_SOCKET_H
#define AGENTRT_NOTIFY_SOCKET_H

#include <stdint.h>
#include <sys/types.h>

#include "common/error.h"

/* The state directory's folder bound read-only at NOTIFY_CONTAINER_DIR, and
 * the socket's name in it (the path runc and crun give: Podman's tests read it). */
#define NOTIFY_STATE_DIR "notify"
#define NOTIFY_CONTAINER_DIR "/run/notify"
#define NOTIFY_CONTAINER_SOCKET "/run/notify/notify.sock"

/* The engine's socket: NOTIFY_SOCKET of our environment, NULL when unset or
 * empty (then nothing of this file runs). */
const char *notify_socket_host(void);
/* Bind the container's socket, dirfd's NOTIFY_STATE_DIR/notify.sock (any
 * old one replaced), writable by the container's users.  Returns the fd. */
int notify_socket_bind(int dirfd, struct error *err);
/* Read the container's datagrams on fd until one has a line READY=1 or the
 * process pid (start_time) is gone; then send READY=1 and MAINPID=mainpid
 * to host (connected first: none there, no wait, an error).  The
 * container's other lines are not passed on (they could name
 * another MAINPID or hand the engine descriptors).  0 also when it exited. */
int notify_socket_relay(int fd, const char *host, pid_t pid, uint64_t start_time, pid_t mainpid,
                        struct error *err);

#endif
