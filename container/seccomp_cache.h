/* seccomp_cache.h - the profile's seccomp filter, compiled once.
 *
 * Compiling a filter with libseccomp costs about a millisecond; the agent
 * profile's filter is the same for every container, so its BPF is cached in
 * <data-dir>/.cache/seccomp-<hash>.bpf (hash of the filter's content and the
 * libseccomp version) and loaded with seccomp(2) directly. */
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
