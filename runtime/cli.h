/* cli.h - command-line plumbing shared by the verbs.
 *
 * Engines pass flags in every form urfave/cli accepts (ENGINES.md §1.1):
 * `--flag value`, `--flag=value`, `-flag value`, and runc's short aliases
 * (`kill -a`, `exec -t -d -p`).  Parsing stops at the first positional
 * argument or at "--".
 */
#ifndef AGENTRT_CLI_H
#define AGENTRT_CLI_H

#include <stdbool.h>

#include "common/error.h"

struct hostconf;

struct global_opts {
  const char *root;            /* state root, already defaulted */
  bool root_given;             /* --root was on the command line */
  const char *data_dir;        /* --data-dir, $AGENTRT_DATA_DIR, host config, default */
  const char *store;           /* data_dir's store of root (datadir/datadir.h) */
  const struct hostconf *conf; /* /etc/agentrt/agentrt.conf or $AGENTRT_CONFIG */
  const char *log_path;
  bool log_json;
  bool debug;
  bool systemd_cgroup;
  const char *profile; /* --profile NAME|PATH, else $AGENTRT_PROFILE, else NULL */
  bool rootless_flag_set;
  const char *rootless; /* --rootless=true|false|auto, informational */
  bool in_userns;       /* running in a non-initial user namespace (rootless engines) */
};

struct opt_spec {
  const char *name; /* long name without dashes */
  char short_name;  /* 0 = none */
  bool has_arg;
  int id;
};

struct opt_iter {
  int argc;
  char **argv;
  int i; /* next argument to look at */
};

/* 1: an option was found (ret_id, ret_val), 0: no more options (it->i is the
 * first positional), -1: bad option (err set). */
int opt_next(struct opt_iter *it, const struct opt_spec *specs, int *ret_id, const char **ret_val,
             const char *cmd, struct error *err);

/* Container ids: [A-Za-z0-9][A-Za-z0-9_.+-]*, at most 1024 bytes, no "." or "..". */
int validate_container_id(const char *id, struct error *err);

typedef int (*command_fn)(const struct global_opts *g, int argc, char **argv, struct error *err);

int cmd_create(const struct global_opts *g, int argc, char **argv, struct error *err);
int cmd_start(const struct global_opts *g, int argc, char **argv, struct error *err);
int cmd_run(const struct global_opts *g, int argc, char **argv, struct error *err);
int cmd_state(const struct global_opts *g, int argc, char **argv, struct error *err);
int cmd_kill(const struct global_opts *g, int argc, char **argv, struct error *err);
int cmd_delete(const struct global_opts *g, int argc, char **argv, struct error *err);
int cmd_exec(const struct global_opts *g, int argc, char **argv, struct error *err);
int cmd_list(const struct global_opts *g, int argc, char **argv, struct error *err);
int cmd_ps(const struct global_opts *g, int argc, char **argv, struct error *err);
int cmd_pause(const struct global_opts *g, int argc, char **argv, struct error *err);
int cmd_resume(const struct global_opts *g, int argc, char **argv, struct error *err);
int cmd_update(const struct global_opts *g, int argc, char **argv, struct error *err);
int cmd_events(const struct global_opts *g, int argc, char **argv, struct error *err);
int cmd_spec(const struct global_opts *g, int argc, char **argv, struct error *err);
int cmd_features(const struct global_opts *g, int argc, char **argv, struct error *err);
int cmd_explain(const struct global_opts *g, int argc, char **argv, struct error *err);
int cmd_profile(const struct global_opts *g, int argc, char **argv, struct error *err);
int cmd_purge(const struct global_opts *g, int argc, char **argv, struct error *err);
int cmd_data(const struct global_opts *g, int argc, char **argv, struct error *err);
int cmd_checkpoint(const struct global_opts *g, int argc, char **argv, struct error *err);

/* Exit code a command asks for (run/exec in the foreground return the
 * container process's status); commands return >= 0 for success. */

#endif
