/* checkpoint_cmd.c - `agentrt checkpoint`: not supported, said so. */
#include <string.h>

#include "cli/cli.h"
#include "container/container.h"

int cmd_checkpoint(const struct global_opts *g, int argc, char **argv, struct error *err)
{
  const char *id = argc > 1 && argv[argc - 1][0] != '-' ? argv[argc - 1] : NULL;
  struct container *c = NULL;

  /* A container that is not there is said first, as for every other
   * command (engines match "does not exist"; checkpoint-missing). */
  if (id != NULL && container_load(g, id, 0, &c, err) < 0)
    return error_prefix(err, "%s", argv[0]);
  container_free(c);
  /* Podman probes `checkpoint --help`: a non-zero exit tells it C/R is off. */
  return error_set(err, 0, "%s: checkpoint/restore is not supported by agentrt", argv[0]);
}
