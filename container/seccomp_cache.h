/* seccomp_cache.h - the profile's seccomp filter, compiled once.
 *
 * Compiling a filter with libseccomp costs about a millisecond (an engine's
 * default profile of ~350 calls, ~20 ms); the agent profile's filter and an
 * engine's own linux.seccomp are the same for every container, so their BPF is
 * cached in
 * <data-dir>/.cache/seccomp-<hash>.bpf (hash of the filter's content and the
 * libseccomp version) and loaded with seccomp(2) directly.  The directory and
 * an entry are trusted only when they are this user's and no one else may
 * write them (not through a symbolic link either); otherwise the filter is
 * compiled for the container at hand (datadir.bats, "escape: a seccomp cache
 * entry another user wrote is not loaded"). */
#ifndef AGENTRT_SECCOMP_CACHE_H
#define AGENTRT_SECCOMP_CACHE_H

#include <linux/filter.h>

#include "common/error.h"
#include "oci/config.h"

/* *ret is a heap struct sock_fprog whose filter follows it in one block
 * (free() it once). */
int seccomp_cache_get(const char *root, const struct oci_seccomp *s, struct sock_fprog **ret,
                      struct error *err);

#endif
