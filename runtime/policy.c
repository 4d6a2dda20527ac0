/* policy.c - applying the profile at create (see policy.h). */
#include "policy.h"

#include <string.h>

#include "common/log.h"
#include "common/util.h"
#include "runtime/fsutil.h"

const char *policy_profile_name(const struct global_opts *g)
{
  return g->profile && *g->profile ? g->profile : PROFILE_DEFAULT;
}

int policy_apply(const struct global_opts *g, const char *id, struct oci_config **cfg,
                 struct profile_result **ret_result, struct error *err)
{
  struct agent_profile *p = NULL;
  struct oci_config *out = NULL;
  const char *name = policy_profile_name(g);

  *ret_result = NULL;
  if (profile_load(name, &p, err) < 0)
    return error_prefix(err, "profile `%s`", name);
  if (profile_apply(*cfg, p, &out, ret_result, err) < 0) {
    profile_free(p);
    return -1;
  }
  profile_free(p);
  oci_config_free(*cfg);
  *cfg = out;
  return 0;
}

int policy_record(int dirfd, const char *id, const struct profile_result *r, struct error *err)
{
  cleanup_free char *json = NULL;
  cleanup_free char *text = NULL;
  size_t len = 0;

  if (r == NULL)
    return 0;
  if (profile_changes_json(r, &json, &len, err) < 0)
    return -1;
  /* One file: `explain` renders the text from it (a file less to write at
   * create and to unlink at delete). */
  if (write_file_atomic_at(dirfd, "profile.json", json, len, err) < 0)
    return -1;
  text = profile_changes_text(r);
  if (text && *text) {
    /* one log record per change, as `explain` lists them */
    for (char *line = text, *nl; line && *line; line = nl ? nl + 1 : NULL) {
      nl = strchr(line, '\n');
      if (nl)
        *nl = '\0';
      if (*line)
        log_info("create `%s`: profile `%s`: %s", id, r->profile ? r->profile : "?", line);
    }
  }
  return 0;
}
