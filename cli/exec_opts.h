/* exec_opts.h - `agentrt exec` flags and the process they describe. */
#ifndef AGENTRT_EXEC_OPTS_H
#define AGENTRT_EXEC_OPTS_H

#include <stdbool.h>

#include "common/error.h"
#include "oci/config.h"

struct exec_opts {
  const char *id;
  const char *process_file;
  const char *pid_file;
  const char *console_socket;
  const char *cwd;
  const char *user;
  const char *apparmor;      /* --apparmor PROFILE */
  const char *process_label; /* --process-label LABEL (SELinux) */
  char **env;                /* --env, repeated */
  char **caps;               /* --cap, repeated */
  char **gids;               /* --additional-gids, repeated */
  char **cgroups;            /* --cgroup [CTRL:]SUB, repeatable */
  char **args;               /* the command line after the id (borrowed) */
  bool detach, tty, tty_set, no_new_privs, ignore_paused, help;
  bool no_new_privs_set; /* given, true or false: it overrides the config either way (runc) */
  int preserve_fds;
  struct oci_process *process; /* --process, read at once (engines delete the file) */
};

/* Read and parse --process FILE into o->process. */
int exec_read_process(struct exec_opts *o, struct error *err);

int exec_opts_parse(int argc, char **argv, struct exec_opts *ret, struct error *err);
void exec_opts_free(struct exec_opts *o);
/* --process FILE, or the container's process with the command line and the
 * flags applied on top. */
int exec_build_process(const struct exec_opts *o, const struct oci_config *cfg,
                       struct oci_process **ret, struct error *err);

#endif
