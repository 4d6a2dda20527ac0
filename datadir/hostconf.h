/* hostconf.h - the host's settings for agentrt: /etc/agentrt/agentrt.conf.
 *
 * Engines never pass these: they are the operator's, for every container on
 * the host.  The file is optional; `AGENTRT_CONFIG` names another one.
 * Format: one `key = value` per line; blank lines and lines whose first
 * non-blank character is `#` are ignored; keys are those below, each at most
 * once; sizes take k, m, g, t suffixes (powers of 1024), durations s, m, h,
 * d, w; 0 turns a limit off.  Anything else is an error naming the line:
 *
 *   data-dir = /var/lib/agentrt          workspaces, audit trails, caches
 *   workspaces.max-total-size = 2g       all workspaces of the host together
 *   workspaces.max-age = 30d             since a workspace was last used
 *   audit.max-total-size = 1g            all audit trails of the host together
 *   audit.max-age = 90d                  since a trail was last written
 *   min-free = 128m                      free space create needs in data-dir
 *   sweep-interval = 60s                 host-wide retention at most this often at create
 */
#ifndef AGENTRT_DATADIR_HOSTCONF_H
#define AGENTRT_DATADIR_HOSTCONF_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

#define HOSTCONF_PATH "/etc/agentrt/agentrt.conf"
#define HOSTCONF_MAX_BYTES (64 * 1024)
#define HOSTCONF_MAX_LINE 4096

struct hostconf {
  char *data_dir; /* NULL: the default */
  uint64_t ws_max_total, ws_max_age;
  uint64_t audit_max_total, audit_max_age;
  uint64_t min_free;
  uint64_t sweep_interval;
};

#define HOSTCONF_DEFAULT_WS_MAX_TOTAL ((uint64_t)2 << 30)
#define HOSTCONF_DEFAULT_WS_MAX_AGE ((uint64_t)30 * 86400)
#define HOSTCONF_DEFAULT_AUDIT_MAX_TOTAL ((uint64_t)1 << 30)
#define HOSTCONF_DEFAULT_AUDIT_MAX_AGE ((uint64_t)90 * 86400)
#define HOSTCONF_DEFAULT_MIN_FREE ((uint64_t)128 << 20)
#define HOSTCONF_DEFAULT_SWEEP_INTERVAL 60

void hostconf_defaults(struct hostconf *c);
/* Parse text (len bytes, may hold NULs: refused) over the values already in
 * c; name is used in messages ("agentrt.conf:3: ..."). */
int hostconf_parse(const char *text, size_t len, const char *name, struct hostconf *c,
                   struct error *err);
/* Defaults, then path when it exists (a missing file is no error). */
int hostconf_load(const char *path, struct hostconf *c, struct error *err);
void hostconf_free(struct hostconf *c);

#endif
