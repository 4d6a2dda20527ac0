/* state.h - the container state document (OCI "state" plus what agentrt
 * needs to find the container again).  Pure: JSON in, JSON out. */
#ifndef AGENTRT_OCI_STATE_H
#define AGENTRT_OCI_STATE_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#include "oci/config.h"

/* The ociVersion of the state documents we write. */
#define OCI_STATE_VERSION "1.2.0"

struct oci_state {
  char *oci_version;
  char *id;
  char *status; /* creating, created, running, paused, stopped (computed on read) */
  int pid;      /* host pid of the init process, 0 when none */
  char *bundle;
  char *rootfs;
  char *created; /* RFC 3339 with nanoseconds, UTC */
  char *owner;   /* "" like runc */
  struct oci_kv *annotations;
  size_t n_annotations;

  /* agentrt-private fields, kept in state.json under "agentrt" */
  uint64_t pid_start_time; /* /proc/<pid>/stat field 22, guards against pid reuse */
  char *cgroup_path;       /* the container's cgroup, relative to the hierarchy root */
  bool systemd_cgroup;
  char *profile;        /* profile applied at create */
  bool has_pidns;       /* the container has its own pid namespace */
  bool started;         /* start succeeded at least once */
  bool has_exit_status; /* exit code known (run --keep, recorded by a monitor) */
  bool no_new_keyring;  /* created with --no-new-keyring: exec keeps the caller's keyring */
  int exit_status;
};

/* The OCI state JSON printed by `state` (ociVersion, id, status, pid, bundle,
 * rootfs, created, owner, annotations). */
int oci_state_to_json(const struct oci_state *s, bool with_private, char **ret_json,
                      size_t *ret_len, struct error *err);
/* Same, optionally indented (`state` prints it indented like runc). */
int oci_state_to_json_ex(const struct oci_state *s, bool with_private, bool pretty, char **ret_json,
                         size_t *ret_len, struct error *err);
int oci_state_parse(const char *json, size_t len, const char *file, struct oci_state **ret,
                    struct error *err);
void oci_state_free(struct oci_state *s);

#endif
