/* spec.h - documents agentrt generates rather than reads: the default
 * config.json of `agentrt spec` and the OCI features document of
 * `agentrt features`.  Pure: no syscalls, the caller supplies the ids. */
#ifndef AGENTRT_OCI_SPEC_H
#define AGENTRT_OCI_SPEC_H

#include <stdbool.h>
#include <stdint.h>

#include "common/error.h"

/* The config.json written by `agentrt spec` (tab-indented, like runc's).
 * rootless: user namespace mapping container 0 to the caller's uid/gid
 * (the caller passes getuid()/getgid()), no network namespace, /sys bound
 * read-only instead of a fresh sysfs, no gid=5 on devpts.  uid/gid are
 * ignored when rootless is false. */
int oci_default_spec_json(bool rootless, bool cgroupns, uint32_t uid, uint32_t gid, char **ret,
                          struct error *err);

/* The OCI runtime features document (runtime-spec features.md);
 * libseccomp_version ("2.5.4", or NULL) is its
 * io.github.seccomp.libseccomp.version annotation, as runc and crun give it. */
int oci_features_json(const char *libseccomp_version, char **ret, struct error *err);

/* Mount options a mount-options parser should accept (NULL-terminated);
 * listed by `features`. */
extern const char *const oci_mount_options[];

#endif
