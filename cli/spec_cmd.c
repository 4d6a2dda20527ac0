/* spec_cmd.c - `agentrt spec` (a default config.json). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/util.h"
#include "oci/spec.h"
#include "os/fsutil.h"
#include "profile/profile.h"

static const struct opt_spec spec_specs[] = {
    {"bundle", 'b', true, 1}, {"rootless", 0, false, 2}, {"help", 'h', false, 3},
    {"profile", 0, true, 4},  {NULL, 0, false, 0},
};

/* The default spec with a profile applied: a ready agent config. */
/* The host's /sys/fs/cgroup is cgroup v2 (unified): the spec then gets a
 * cgroup namespace, as runc's does. */
static bool cgroup2_host(void)
{
  struct statfs st;

  return statfs("/sys/fs/cgroup", &st) == 0 && (unsigned long)st.f_type == CGROUP2_SUPER_MAGIC;
}

static int profiled_spec(const char *name, char **json, struct error *err)
{
  struct agent_profile *p = NULL;
  struct oci_config *in = NULL, *out = NULL;
  struct profile_result *r = NULL;
  char *res = NULL;
  size_t len = 0;
  int ret = -1;

  if (profile_load(name, &p, err) < 0) {
    error_prefix(err, "spec: profile `%s`", name);
    goto out;
  }
  if (oci_config_parse(*json, strlen(*json), "config.json", &in, err) < 0 ||
      profile_apply(in, p, &out, &r, err) < 0 || oci_config_to_json(out, &res, &len, err) < 0) {
    error_prefix(err, "spec");
    goto out;
  }
  free(*json);
  *json = res;
  ret = 0;
out:
  profile_free(p);
  oci_config_free(in);
  oci_config_free(out);
  profile_result_free(r);
  return ret;
}

int cmd_spec(const struct global_opts *g, int argc, char **argv, struct error *err)
{
  struct opt_iter it = {argc, argv, 1};
  const char *bundle = ".", *val;
  bool rootless = false;
  const char *profile = NULL;
  cleanup_free char *json = NULL;
  cleanup_free char *path = NULL;
  int id, n, fd;
  size_t len;

  while ((n = opt_next(&it, spec_specs, &id, &val, "spec", err)) == 1) {
    if (id == 1)
      bundle = val;
    else if (id == 2)
      rootless = true;
    else if (id == 4)
      profile = val;
    else {
      printf("Usage: agentrt spec [--bundle DIR] [--rootless] [--profile NAME|PATH]\n");
      return 0;
    }
  }
  if (n < 0)
    return -1;
  if (argc - it.i != 0)
    return error_set(err, 0, "spec: takes no arguments");
  if (oci_default_spec_json(rootless, cgroup2_host(), getuid(), getgid(), &json, err) < 0)
    return -1;
  if (profile != NULL && profiled_spec(profile, &json, err) < 0)
    return -1;
  path = xfmt("%s/config.json", bundle);
  fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    if (errno == EEXIST)
      return error_set(err, 0, "spec: `%s` exists; remove it first", path);
    return error_errno(err, "spec: create `%s`", path);
  }
  len = strlen(json);
  if (write(fd, json, len) != (ssize_t)len || write(fd, "\n", 1) != 1) {
    error_errno(err, "spec: write `%s`", path);
    close(fd);
    return -1;
  }
  close(fd);
  return 0;
}
