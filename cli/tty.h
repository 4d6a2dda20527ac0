/* tty.h - the foreground side of a terminal: raw mode, resize, relay, and
 * signal forwarding for `run` and `exec` without --detach. */
#ifndef AGENTRT_TTY_H
#define AGENTRT_TTY_H

#include <sys/types.h>

#include "common/error.h"

/* Block the signals we forward; returns a signalfd (CLOEXEC). */
int fwd_signals_block(struct error *err);
/* Relay stdin/stdout <-> pty master (master may be -1), forward signals
 * to pid, reap it; returns its exit code (128+signal when killed). */
int fwd_wait(pid_t pid, int sigfd, int master, struct error *err);

#endif
