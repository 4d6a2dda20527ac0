/* profile_policy.h - where the chosen profile (--profile, $AGENTRT_PROFILE, or the
 * built-in `agent`) turns the engine's config into the final one, and where
 * the runtime keeps what `explain` shows. */
#ifndef AGENTRT_POLICY_H
#define AGENTRT_POLICY_H

#include "common/error.h"
#include "container/global_opts.h"
#include "oci/config.h"
#include "profile/profile.h"

/* The profile named by the global options (default "agent"). */
const char *policy_profile_name(const struct global_opts *g);
/* Replaces *cfg with the final config (or refuses it); *ret_result gets
 * the changes and runtime directives.  given: the profile itself (`agentrt
 * sandbox` builds one in memory), else the one g names is loaded.  rootfs:
 * the container's root directory (its /etc/passwd, or the source of a bind
 * mount on /etc/passwd or /etc, relative ones under bundle, is read for a
 * non-root process without HOME), or NULL. */
int policy_apply(const struct global_opts *g, const struct agent_profile *given, const char *id,
                 const char *bundle, const char *rootfs, struct oci_config **cfg,
                 struct profile_result **ret_result, struct error *err);
/* Save the changes as <state dir>/profile.json (for `explain`) and log them. */
int policy_record(int dirfd, const char *id, const struct profile_result *r, struct error *err);

#endif
