/* state_cmd.c - `agentrt state ID`: the OCI state JSON on stdout. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/util.h"
#include "container/container.h"

int cmd_state(const struct global_opts *g, int argc, char **argv, struct error *err)
{
  struct container *c = NULL;
  const char *id;
  cleanup_free char *json = NULL;

  if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
    printf("Usage: agentrt state ID\n");
    return 0;
  }
  if ((id = cli_one_id("state", argc, argv, err)) == NULL)
    return -1;
  if (container_load(g, id, 0, &c, err) < 0)
    return -1;
  if (c->status == STATUS_CREATING) {
    /* no state.json yet: no bundle, no pid, nothing the spec's state
     * requires (runc says the container does not exist yet) */
    bool creating = container_refresh_status(c) == STATUS_CREATING;
    error_set(err, 0,
              creating ? "container `%s` is still being created"
                       : "container `%s` has no state: its create did not finish (delete removes "
                         "it)",
              id);
    container_free(c);
    return -1;
  }
  if (c->status == STATUS_STOPPED)
    c->state->pid = 0;
  /* indented as runc prints it (hooks, list and the saved state stay compact) */
  if (oci_state_to_json_ex(c->state, false, true, &json, NULL, err) < 0) {
    container_free(c);
    return -1;
  }
  /* one newline at the end (the beautifier ends with one of its own) */
  printf("%s%s", json, json[0] != '\0' && json[strlen(json) - 1] == '\n' ? "" : "\n");
  container_free(c);
  return 0;
}
