/* global_opts.h - the global options every verb gets, and the container id
 * rule: what the container layer needs of the command line. */
#ifndef AGENTRT_GLOBAL_OPTS_H
#define AGENTRT_GLOBAL_OPTS_H

#include <stdbool.h>

#include "common/error.h"

struct hostconf;

struct global_opts {
  const char *root;            /* state root, already defaulted */
  bool root_given;             /* --root was on the command line */
  const char *data_dir;        /* --data-dir, $AGENTRT_DATA_DIR, host config, default */
  const char *store;           /* data_dir's store of root (datadir/datadir.h) */
  const struct hostconf *conf; /* /etc/agentrt/agentrt.conf or $AGENTRT_CONFIG */
  const char *log_path;
  bool log_json;
  bool debug;
  bool systemd_cgroup;
  const char *profile; /* --profile NAME|PATH, else $AGENTRT_PROFILE, else NULL */
  bool rootless_flag_set;
  const char *rootless; /* --rootless=true|false|auto, informational */
  bool in_userns;       /* running in a non-initial user namespace (rootless engines) */
  char **argv;          /* the whole command line (sandbox executes itself again) */
};

/* Container ids: [A-Za-z0-9][A-Za-z0-9_.+-]*, at most 1024 bytes, no "." or "..". */
int validate_container_id(const char *id, struct error *err);

#endif
