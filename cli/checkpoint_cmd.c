/* checkpoint_cmd.c - `agentrt checkpoint`: not supported, said so. */
#include "cli/cli.h"

int cmd_checkpoint(const struct global_opts *g, int argc, char **argv, struct error *err)
{
  /* Podman probes `checkpoint --help`: a non-zero exit tells it C/R is off. */
  return error_set(err, 0, "%s: checkpoint/restore is not supported by agentrt", argv[0]);
}
