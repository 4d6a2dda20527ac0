/* sync.h - the messages between the runtime and a process it is setting up
 * (see spawn.h for the create protocol; exec uses GO/PTY/READY/ERROR). */
#ifndef AGENTRT_SYNC_H
#define AGENTRT_SYNC_H

#include "common/error.h"

enum sync_type {
  SYNC_GO = 1,
  SYNC_HOOKS,
  SYNC_HOOKS_DONE,
  SYNC_PTY,
  SYNC_READY,
  SYNC_START,
  SYNC_ERROR,
  SYNC_WS_FS,  /* the workspace image's mount (fd), made after GO (spawn.h) */
  SYNC_ROOTED, /* the init's root is final (pivoted); spawn_opts.on_rooted */
};

struct sync_msg {
  int type;
  int code;
  char msg[ERROR_MSG_MAX];
};

/* Send a message (and optionally one fd with SCM_RIGHTS). */
int sync_send(int sock, int type, int fd, struct error *err);
int sync_send_error(int sock, const struct error *e);
/* A message carrying a number in `code` (GO carries the init's host pid). */
int sync_send_code(int sock, int type, int code, struct error *err);
/* Receive; *ret_fd gets a passed fd or -1.  0 on EOF (peer gone). */
int sync_recv(int sock, struct sync_msg *m, int *ret_fd, struct error *err);
/* Receive and require `type`; ERROR messages become err. */
int sync_expect(int sock, int type, int *ret_fd, struct error *err);
int sync_expect_code(int sock, int type, int *ret_code, struct error *err);

#endif
