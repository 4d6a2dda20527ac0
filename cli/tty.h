/* tty.h - the foreground side of a terminal: raw mode, resize, relay, and
 * signal forwarding for `run` and `exec` without --detach. */
#ifndef AGENTRT_TTY_H
#define AGENTRT_TTY_H

#include <stdbool.h>
#include <sys/types.h>
#include <termios.h>

#include "common/error.h"

/* Block the signals we forward; returns a signalfd (CLOEXEC). */
int fwd_signals_block(struct error *err);
/* Relay stdin/stdout <-> pty master (*master may be -1), forward signals
 * to pid, reap it; returns its exit code (128+signal when killed).  The
 * master may be moved to another fd, or closed and set to -1 (hung up when
 * stdout is gone): the caller closes what *master is afterwards. */
int fwd_wait(pid_t pid, int sigfd, int *master, struct error *err);

/* The caller's terminal as it was: the modes and the file status flags of
 * each of stdin, stdout and stderr that is a terminal.  A program that gets
 * them directly (no pty of its own) can leave them raw or non-blocking;
 * tty_restore() puts back what tty_save() saw. */
struct tty_saved {
  struct termios tio[3];
  int flags[3];
  bool is_tty[3];
};
void tty_save(struct tty_saved *s);
void tty_restore(const struct tty_saved *s);

#endif
