/* data_cmd.h - the data directory from the CLI (datadir/datadir.h):
 *
 *   agentrt purge [--older-than DURATION] [--dry-run]
 *   agentrt data path                      the data directory and --root's store
 *   agentrt data migrate [--dry-run]       move --root's workspaces and trails
 *                                          into the data directory
 *
 * and the lookup `workspace` and `audit` share: a container's data by its id
 * or a unique prefix, in every engine root's store (only --root's when it
 * is given), then under the root itself (data from before the data
 * directory). */
#ifndef AGENTRT_DATA_CMD_H
#define AGENTRT_DATA_CMD_H

#include "common/error.h"
#include "datadir/datadir.h"
#include "cli/cli.h"

enum data_kind { DATA_WORKSPACE, DATA_AUDIT };

/* Find id; *ret_g is g with root and store of the hit (valid while *ret_hit
 * is).  Without --root, says on stderr which engine root it came from. */
int data_find(const struct global_opts *g, enum data_kind k, const char *id,
              struct global_opts *ret_g, struct datadir_hit *ret_hit, struct error *err);
/* Every entry of kind k, as data_find would see them. */
int data_list(const struct global_opts *g, enum data_kind k, struct datadir_hit **ret,
              size_t *ret_n, struct error *err);

/* At create: a workspace or trail of id that an older agentrt kept under
 * --root (and the store has none) moves into the store, so the restarted
 * container goes on with its pending work and its chain. */
int data_adopt_legacy(const struct global_opts *g, const char *id, struct error *err);

#endif
