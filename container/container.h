/* container.h - a container's state directory under --root.
 *
 * <root>/<id>/state.json   OCI state + agentrt's private fields (atomic rename)
 * <root>/<id>/config.json  the final config the container was created with
 * <root>/<id>/exec.fifo    exists while the container is "created"
 *
 * Commands lock the directory with flock(2) so concurrent commands on one
 * container serialise.  The status is computed, never trusted from disk:
 * the init must be alive with the start time recorded at create (no pid
 * reuse), the fifo tells created from running, the freezer tells paused.
 */
#ifndef AGENTRT_CONTAINER_H
#define AGENTRT_CONTAINER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/file.h> /* LOCK_SH, LOCK_EX for container_load */
#include <sys/types.h>

#include "cgroups/cgroup.h"
#include "common/error.h"
#include "container/global_opts.h"
#include "oci/config.h"
#include "oci/state.h"
#include "os/pid.h"
#include "profile/profile.h"

enum container_status {
  STATUS_CREATING,
  STATUS_CREATED,
  STATUS_RUNNING,
  STATUS_PAUSED,
  STATUS_STOPPED,
};

struct container {
  char *id;
  char *dir; /* <root>/<id> */
  int dirfd; /* O_DIRECTORY, flock'ed when locked */
  int lock;  /* the flock we hold on dirfd: 0, LOCK_SH or LOCK_EX */
  struct oci_state *state;
  struct oci_config *config;      /* loaded on demand */
  struct cgroup_manager *cgroup;  /* loaded on demand, NULL when none */
  struct profile_result *profile; /* create only: the profile's directives */
  bool has_workspace;             /* create only: an overlay workspace was prepared */
  enum container_status status;
};

const char *container_status_name(enum container_status s);

/* mkdir -p the root (0700). */
int state_root_prepare(const char *root, struct error *err);
/* Create <root>/<id> exclusively, locked (LOCK_EX) before it appears under that name. */
/* Remove the temporary state directories (names, NULL-terminated, ".creating.*" in root)
 * that creates killed before they named them left, when provably dead: unlocked, empty, and
 * no create between making one and locking it (else none now).  Returns how many. */
int container_remove_dead_tmp(const char *root, char **names);
int container_new(const struct global_opts *g, const char *id, struct container **ret,
                  struct error *err);
/* Open an existing container; `lock` is 0 (none), LOCK_SH or LOCK_EX, taken
 * on the state directory before the state is read.  Unknown id:
 * err->code = ENOENT, message "container `id` does not exist". */
int container_load(const struct global_opts *g, const char *id, int lock, struct container **ret,
                   struct error *err);
void container_free(struct container *c);
/* For `delete --force` of a container whose state.json is damaged: the
 * directory, locked, with an empty state (the cgroup is found from
 * config.json by container_destroy). */
int container_load_damaged(const struct global_opts *g, const char *id, struct container **ret,
                           struct error *err);

/* In the state directory while `pause` has frozen a created container (its
 * freezer is read for its status only then; cli/pause.c). */
#define CONTAINER_PAUSED_MARK "paused"

/* Recompute c->status (and c->state->status / pid). */
enum container_status container_refresh_status(struct container *c);
/* Whether the container's cgroup is frozen (a read of its freezer). */
bool container_frozen(struct container *c);
int container_save_state(struct container *c, struct error *err);
int container_save_config(struct container *c, const char *json, size_t len, struct error *err);
int container_load_config(struct container *c, struct error *err);
int container_cgroup(struct container *c, const struct global_opts *g, struct error *err);
/* Log the warnings the cgroup library collected on m (cgroup_take_warnings);
 * m may be NULL. */
void container_log_cgroup_warnings(struct cgroup_manager *m);

/* Kill everything, destroy the cgroup, run poststop hooks, remove the state
 * directory.  Used by delete, a failed create and run without --keep. */
int container_destroy(struct container *c, const struct global_opts *g, struct error *err);
/* The config's poststop hooks with the state (status "stopped") on stdin;
 * a failure is a warning naming `verb` (runtime spec).  delete runs them,
 * and a create that fails once the state directory exists (as runc's
 * destroy: the spec's step 12 after a failing prestart, createRuntime or
 * createContainer hook). */
void container_run_poststop(struct container *c, const char *verb);

/* The OCI state JSON handed to hooks and printed by `state`. */
int container_state_json(struct container *c, char **ret, struct error *err);

/* RFC 3339 UTC timestamp with nanoseconds. */
char *timestamp_rfc3339(void);
/* Remove a directory tree below dirfd (no symlink following). */
int rm_rf_at(int dirfd, const char *name);

#endif
