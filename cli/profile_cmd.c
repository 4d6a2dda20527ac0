/* profile_cmd.c - `agentrt profile show [NAME]` and `agentrt profile check
 * FILE`. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/profile_policy.h"
#include "common/util.h"
#include "os/fsutil.h"
#include "profile/profile.h"

static int profile_show(const struct global_opts *g, const char *name, struct error *err)
{
  struct agent_profile *p = NULL;
  cleanup_free char *json = NULL;
  size_t len = 0;

  if (name == NULL)
    name = policy_profile_name(g);
  if (profile_load(name, &p, err) < 0)
    return error_prefix(err, "profile `%s`", name);
  if (profile_to_json(p, &json, &len, err) < 0) {
    profile_free(p);
    return -1;
  }
  profile_free(p);
  printf("%s\n", json);
  return 0;
}

static int profile_check(const char *file, struct error *err)
{
  cleanup_free char *json = NULL;
  struct agent_profile *p = NULL;
  size_t len = 0;

  if (read_file_at(AT_FDCWD, file, 16 << 20, &json, &len, err) < 0)
    return error_prefix(err, "profile check");
  if (profile_parse(json, len, file, &p, err) < 0)
    return -1;
  profile_free(p);
  printf("%s: ok\n", file);
  return 0;
}

int cmd_profile(const struct global_opts *g, int argc, char **argv, struct error *err)
{
  if (argc < 2)
    return error_set(err, 0, "profile: expected `show [NAME|PATH]` or `check FILE`");
  if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
    printf("Usage: agentrt profile show [NAME|PATH]\n"
           "       agentrt profile check FILE\n");
    return 0;
  }
  if (strcmp(argv[1], "show") == 0) {
    if (argc > 3)
      return error_set(err, 0, "profile show: expected at most one profile name");
    return profile_show(g, argc == 3 ? argv[2] : NULL, err);
  }
  if (strcmp(argv[1], "check") == 0) {
    if (argc != 3)
      return error_set(err, 0, "profile check: expected one file");
    return profile_check(argv[2], err);
  }
  return error_set(err, 0, "profile: unknown subcommand `%s` (show, check)", argv[1]);
}
