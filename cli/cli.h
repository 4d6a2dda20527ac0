/* cli.h - command-line plumbing shared by the verbs.
 *
 * Engines pass flags in every form urfave/cli accepts (CRI-O, go-runc):
 * `--flag value`, `--flag=value`, `-flag value`, and runc's short aliases
 * (`kill -a`, `exec -t -d -p`).  Parsing stops at the first positional
 * argument or at "--"; a verb whose words are only its id (and kill's
 * signal) first moves the options given after them to the front
 * (opt_permute), as urfave/cli does for runc (`delete ID --force`).
 */
#ifndef AGENTRT_CLI_H
#define AGENTRT_CLI_H

#include <stdbool.h>

#include "common/error.h"
#include "container/global_opts.h"

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

/* flags-after-id: reorder it->argv from it->i: the options of specs (with
 * their values) first, then the other words in their order; "--" and what
 * follows stay last.  Not for exec or ps, whose words after the id are a
 * command's (runc does not reorder them either). */
void opt_permute(struct opt_iter *it, const struct opt_spec *specs);

/* The container id of a verb that takes nothing else (state, start, pause,
 * resume): an option is reported as unknown, "--" ends them; NULL (err set)
 * unless exactly one id follows. */
const char *cli_one_id(const char *verb, int argc, char **argv, struct error *err);

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
int cmd_audit(const struct global_opts *g, int argc, char **argv, struct error *err);
/* `agentrt egress ID list|allow ENTRY|deny ENTRY` */
int cmd_egress(const struct global_opts *g, int argc, char **argv, struct error *err);
int cmd_workspace(const struct global_opts *g, int argc, char **argv, struct error *err);
/* `agentrt sandbox [OPTIONS] -- CMD`: an agent CLI in a sandbox, no bundle, no engine */
int cmd_sandbox(const struct global_opts *g, int argc, char **argv, struct error *err);
/* `agentrt sub ...`: the sub-agent client (docs/subagents.md), inside a container */
int cmd_sub(const struct global_opts *g, int argc, char **argv, struct error *err);
/* `agentrt doctor`: what the host has of what agentrt needs */
int cmd_doctor(const struct global_opts *g, int argc, char **argv, struct error *err);
/* the pid 1 of a sandbox on the host root (internal) */
int cmd_sandbox_init(const struct global_opts *g, int argc, char **argv, struct error *err);
/* the network hook of a sandbox with egress entries (internal) */
int cmd_sandbox_net(const struct global_opts *g, int argc, char **argv, struct error *err);

/* Exit code a command asks for (run/exec in the foreground return the
 * container process's status); commands return >= 0 for success. */

#endif
