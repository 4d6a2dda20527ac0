/* features_cmd.c - `agentrt features` (what this build supports, OCI
 * features document). */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "common/util.h"
#include "oci/spec.h"

int cmd_features(const struct global_opts *g, int argc, char **argv, struct error *err)
{
  cleanup_free char *json = NULL;

  if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
    printf("Usage: agentrt features\n");
    return 0;
  }
  if (argc > 1)
    return error_set(err, 0, "features: takes no arguments");
  if (oci_features_json(&json, err) < 0)
    return -1;
  printf("%s\n", json);
  return 0;
}
