/* console.h - the container's terminal: stdio on the pty peer, handing the
 * master to an engine over --console-socket, window size.
 *
 * The pty itself is made by rootfs_setup() (console_setup() in mounts.h)
 * from the container's own devpts instance; see console.c.
 */
#ifndef AGENTRT_CONSOLE_H
#define AGENTRT_CONSOLE_H

#include "common/error.h"

/* setsid(), make fd the controlling terminal (TIOCSCTTY) and dup it onto
 * 0, 1 and 2.  fd itself is closed when it is > 2. */
int console_make_stdio(int peer_or_slave_fd, struct error *err);
/* Connect the SOCK_STREAM unix socket at socket_path and send master_fd in
 * ONE sendmsg: a non-empty name payload (the pty's name) and exactly one
 * SCM_RIGHTS fd (what containerd's go-runc and conmon accept). */
int console_send_fd(const char *socket_path, int master_fd, struct error *err);
/* console_send_fd, then *master_fd is closed (-1); fails when the receiver closed the
 * connection and no copy of the master is left (the terminal is hung up). */
int console_hand_over(const char *socket_path, int *master_fd, struct error *err);
/* A pty agentrt relays itself (run/exec in the foreground, no console
 * socket): no "\n" -> "\r\n" on its output, as runc does, so a pipe or a file
 * gets the program's bytes.  A terminal on our side adds its own \r. */
void console_clear_onlcr(int master_fd);
/* TIOCSWINSZ; returns -1 with errno set on failure. */
int console_set_size(int fd, unsigned int height, unsigned int width);

#endif
