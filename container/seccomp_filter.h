/* seccomp_filter.h - building, exporting and loading seccomp filters.
 *
 * seccomp_build() turns linux.seccomp into a libseccomp filter without
 * loading it (pure, unit tested); seccomp_export() gives the BPF bytes (an
 * array of struct sock_filter) that a profile can cache; seccomp_load_bpf()
 * installs such bytes with seccomp(SECCOMP_SET_MODE_FILTER).  seccomp_apply()
 * (process.h) is build + load.  Filters never set no_new_privs themselves:
 * process_exec() does that when the config asks, and without it loading
 * needs CAP_SYS_ADMIN (so process_exec() loads before dropping caps).
 */
#ifndef AGENTRT_SECCOMP_FILTER_H
#define AGENTRT_SECCOMP_FILTER_H

#include <seccomp.h>
#include <stddef.h>

#include "common/error.h"
#include "oci/config.h"

/* The action of the profile filter's denied calls when the monitor records
 * them (a name no config can carry: the OCI parser knows only SCMP_ACT_*). */
#define SECCOMP_ACT_NOTIFY_INTERNAL "agentrt:notify"

int seccomp_build(const struct oci_seccomp *s, scmp_filter_ctx *ret, struct error *err);
int seccomp_export(const struct oci_seccomp *s, void **ret_bpf, size_t *ret_len, struct error *err);
/* flags: SECCOMP_FILTER_FLAG_* of the kernel (see seccomp_kernel_flags()). */
int seccomp_load_bpf(const void *bpf, size_t len, unsigned flags, struct error *err);
/* build + load with SECCOMP_FILTER_FLAG_NEW_LISTENER: *ret_fd is the
 * user-notification fd (for SCMP_ACT_NOTIFY). */
int seccomp_apply_listener(const struct oci_seccomp *s, int *ret_fd, struct error *err);
/* linux.seccomp.flags as kernel SECCOMP_FILTER_FLAG_* bits. */
int seccomp_kernel_flags(const struct oci_seccomp *s, unsigned *ret, struct error *err);

#endif
