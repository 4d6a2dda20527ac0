/* features_cmd.c - `agentrt features` (what this build supports, OCI
 * features document). */
#include <seccomp.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "common/util.h"
#include "oci/spec.h"

int cmd_features(const struct global_opts *g, int argc, char **argv, struct error *err)
{
  cleanup_free char *json = NULL, *scmp = NULL;
  const struct scmp_version *v = seccomp_version();

  if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
    printf("Usage: agentrt features\n");
    return 0;
  }
  if (argc > 1)
    return error_set(err, 0, "features: takes no arguments");
  if (v != NULL)
    scmp = xfmt("%u.%u.%u", v->major, v->minor, v->micro);
  if (oci_features_json(scmp, &json, err) < 0)
    return -1;
  printf("%s\n", json);
  return 0;
}
