/* policy.h - where the chosen profile (--profile, $AGENTRT_PROFILE, or the
 * built-in `agent`) turns the engine's config into the final one. */
#ifndef AGENTRT_POLICY_H
#define AGENTRT_POLICY_H

#include "common/error.h"
#include "oci/config.h"
#include "runtime/cli.h"

/* Replaces *cfg with the final config (or refuses it). */
int policy_apply(const struct global_opts *g, const char *id, struct oci_config **cfg,
                 struct error *err);

#endif
