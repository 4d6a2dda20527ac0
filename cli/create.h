/* create.h - building a container up to "created" (shared by create and run). */
#ifndef AGENTRT_CREATE_H
#define AGENTRT_CREATE_H

#include <stdbool.h>

#include "cli/cli.h"
#include "container/container.h"
#include "container/spawn.h"

struct agent_profile;

struct create_opts {
  const char *id;
  const char *bundle; /* NULL = cwd */
  const char *config; /* NULL = config.json; relative: to the bundle (crun's --config) */
  const char *pid_file;
  const char *console_socket;
  bool no_pivot;
  bool no_new_keyring;
  int preserve_fds;
  bool run_mode;   /* run: no fifo, the caller sends START */
  bool foreground; /* run without --detach: the pty stays with us */
  /* `agentrt sandbox`: the config and the profile in memory (NULL: the
   * bundle's config.json, the profile the global options name) */
  const char *config_json;
  size_t config_len;
  const struct agent_profile *profile;
  /* `agentrt sandbox` whose pid 1 is the program itself (--rootfs with a
   * dynamic build: no sandbox-init there): the program gets SIGKILL when
   * this process dies (its parent-death signal, set after its credentials) */
  bool pdeathsig;
};

int container_create(const struct global_opts *g, const struct create_opts *o,
                     struct container **ret_c, struct spawn_result *ret_r, struct error *err);
/* Undo a create that failed half-way (no poststop hooks). */
void container_abort(struct container *c, const struct global_opts *g);
int write_pid_file(const char *path, pid_t pid, struct error *err);
/* `run` in the foreground from o (run_mode and foreground are set here);
 * keep: no delete at exit.  Returns the container's exit code. */
int run_foreground(const struct global_opts *g, struct create_opts *o, bool keep,
                   struct error *err);
/* The poststart hooks, with state "running".  One failing (runtime spec
 * 1.1+, runc 1.2): the container's process is killed and -1 returned with
 * the hook's error; the caller fails its command. */
int run_poststart_hooks(struct container *c, struct error *err);

#endif
