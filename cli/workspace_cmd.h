/* workspace_cmd.h - `agentrt workspace ...` (design in
 * workspace/workspace.h).
 *
 *   agentrt workspace list [--format text|json]
 *   agentrt workspace ID diff [--format text|json] [--patch]
 *   agentrt workspace ID commit [--force] [--include-protected PATH]... [PATH...]
 *   agentrt workspace ID discard
 *   agentrt workspace ID snapshot [NAME]
 *   agentrt workspace ID rollback NAME
 *   agentrt workspace ID list [--format text|json]
 *   agentrt workspace ID purge
 *   agentrt workspace ID prepare --lower DIR --dest PATH   (tests: prints the
 *       overlay mount entry that `create` puts in place of the engine's bind)
 */
#ifndef AGENTRT_WORKSPACE_CMD_H
#define AGENTRT_WORKSPACE_CMD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cli/cli.h"
#include "common/error.h"
#include "workspace/workspace.h"

/* workspace_show.c: the renderings (internal to the command). */
int ws_show_diff(FILE *out, const struct workspace *w, const struct ws_layers *l,
                 const struct ws_changes *c, bool json, bool patch, struct error *err);
struct ws_list_row {
  const struct workspace *w;
  const char *state; /* "running", "created", "paused", "stopped", "deleted" */
  long long changes; /* the diff's entries, -1 when it cannot be computed */
  uint64_t upper_bytes, disk_bytes;
  const char *root; /* the engine root it belongs to */
};
int ws_show_list(FILE *out, const struct ws_list_row *rows, size_t n, bool json, struct error *err);
int ws_show_snapshots(FILE *out, const struct workspace *w, const char *state, bool json,
                      struct error *err);
int ws_show_mount_entry(FILE *out, const struct workspace *w, struct error *err);

#endif
