/* datadir.h - where agent work outlives the runtime: the data directory.
 *
 * `--root` (a tmpfs the engine chooses) keeps only per-container runtime
 * state.  What must survive a reboot or `delete` lives in the data directory
 * (`--data-dir`, else $AGENTRT_DATA_DIR, else data-dir in the host config,
 * else /var/lib/agentrt, or $XDG_DATA_HOME/agentrt when not real root):
 *
 *   <data-dir>/roots/<key>/root           the engine's --root it belongs to
 *   <data-dir>/roots/<key>/.workspaces/   workspaces (workspace/workspace.h)
 *   <data-dir>/roots/<key>/.audit/        audit trails (audit/audit.h)
 *   <data-dir>/.cache/                    compiled seccomp filters
 *   <data-dir>/retention/                 audit trail of what retention removed
 *
 * One store per engine root: <key> is the root with '/' as '+' and bytes
 * other than [A-Za-z0-9._-] as %XX (a hash when that is too long), so two
 * engines' containers with the same id never share a workspace or a trail.
 * Before the data directory existed both lived under --root itself (the
 * legacy store); lookups still find them there and `agentrt data migrate`
 * moves them.
 */
#ifndef AGENTRT_DATADIR_H
#define AGENTRT_DATADIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "datadir/hostconf.h"

#define DATADIR_DEFAULT "/var/lib/agentrt"
#define DATADIR_ROOTS "roots"
#define DATADIR_ROOT_FILE "root"
#define DATADIR_RETENTION_TRAIL "retention"
#define DATADIR_WORKSPACES ".workspaces" /* = WS_DIR */
#define DATADIR_AUDIT ".audit"           /* = AUDIT_SUBDIR */

/* The default data directory (real root: /var/lib/agentrt). */
char *datadir_default(bool rootless);
/* "/run/x//y/" -> "/run/x/y" (no symlinks resolved: a tmpfs may be gone). */
char *datadir_normalize_root(const char *root);
char *datadir_key(const char *root);
/* <data_dir>/roots/<key>: where root's workspaces and trails live. */
char *datadir_store(const char *data_dir, const char *root);
/* mkdir -p the store (mode 0700) and record its root. */
int datadir_store_prepare(const char *data_dir, const char *root, struct error *err);

/* A container's workspace or trail, found by id or prefix. */
struct datadir_hit {
  char *id;
  char *root;  /* the engine root it came from */
  char *store; /* the directory holding .workspaces / .audit */
  bool legacy; /* under the root itself, not yet migrated */
};
void datadir_hit_free(struct datadir_hit *h);

struct datadir_query {
  const char *data_dir;
  const char *only_root;   /* NULL: every store of the data dir */
  const char *legacy_root; /* also look in <legacy_root>/<sub> (NULL: no) */
  bool legacy_only;        /* only there (data dir stores skipped) */
  const char *sub;         /* DATADIR_WORKSPACES or DATADIR_AUDIT */
  const char *need;        /* a file the entry must hold: "meta.json", "head" */
  const char *what;        /* "workspace", "audit" (messages) */
  const char *none;        /* "does not exist", "no audit trail" */
};
/* An exact id wins over prefixes; none or more than one is an error (ENOENT,
 * or EEXIST listing the candidates with their roots). */
int datadir_find(const struct datadir_query *q, const char *id, struct datadir_hit *ret,
                 struct error *err);
/* Every entry (any id), sorted by root then id. */
int datadir_list(const struct datadir_query *q, struct datadir_hit **ret, size_t *ret_n,
                 struct error *err);

/* --- host-wide retention (retention.c) --------------------------------- */

struct datadir_sweep {
  const char *data_dir;
  const struct hostconf *conf;
  uint64_t older_than;             /* > 0: this age for both kinds instead of the config's */
  const char *skip_root, *skip_id; /* the container being created */
  bool dry_run;
};
/* Remove the workspaces and trails that no container uses and that are
 * older than the ages, then the oldest until each kind's total is within
 * its cap.  Each removal is recorded in the retention trail; its JSON fields
 * are appended to *ret_json and a line of text to *ret_text (either may be
 * NULL).  Returns the number removed. */
int datadir_retention(const struct datadir_sweep *s, char ***ret_json, char ***ret_text,
                      struct error *err);
/* At create: retention when due (sweep-interval, or space is low), then
 * refuse when less than min-free is left. */
int datadir_create_check(const struct datadir_sweep *s, char ***ret_json, struct error *err);

#endif
