/* tls_plugin.h - the egress TLS proxy and its CA, loaded on demand.
 *
 * The OpenSSL-using code (tls_ca.c, tls_proxy.c) is built as a plugin,
 * agentrt-tls.so, linked dynamically against libssl/libcrypto; the agentrt
 * binary does not link OpenSSL at all, so the processes of containers
 * without secrets (every run/create/exec/delete and their monitors) never
 * map or relocate it.  create dlopen()s the plugin when a container has
 * secrets or egress.http rules; the monitor it forks inherits it.
 *
 * Search order: beside the running binary (the directory of /proc/self/exe,
 * resolved), then AGENTRT_LIBDIR (make install puts it in
 * $(PREFIX)/lib/agentrt).  A plugin is refused (one-line error) when it is
 * not a regular file owned by root or by the invoking user, when it is group
 * or world writable, or when it was built from another build (version and
 * commit strings differ).  It is opened once and loaded through
 * /proc/self/fd, so the file checked is the file loaded.
 *
 * agentrt is a static PIE (mk/perf.mk): the plugin brings the system's
 * libc.so.6 as its own, with its own heap.  Nothing crosses between the
 * two heaps: the structures agentrt passes in are read only, errors come
 * back in struct error's fixed buffer, and the one string the plugin
 * returns is copied and handed back to the plugin's str_free.  The
 * plugin's libc.so cannot fork there (its fork walks the dynamic loader's
 * thread lists, which a static program does not keep): the proxy forks
 * through fork_hook, which the loader points at agentrt's fork().
 */
#ifndef AGENTRT_MONITOR_TLS_PLUGIN_H
#define AGENTRT_MONITOR_TLS_PLUGIN_H

#include <sys/types.h>

#include "common/error.h"

#define TLS_PLUGIN_NAME "agentrt-tls.so"
#define TLS_PLUGIN_SYMBOL "agentrt_tls_plugin_v1"

struct tls_ca; /* opaque: the plugin's */
struct tls_proxy_opts;

/* The table the plugin's one exported function returns.  version and commit
 * come first and never move: the loader reads them before anything else. */
struct tls_plugin_v1 {
  const char *version;
  const char *commit;
  int (*ca_new)(const char *id, struct tls_ca **ret, struct error *err);
  char *(*ca_cert_pem)(const struct tls_ca *ca);
  void (*ca_free)(struct tls_ca *ca);
  int (*proxy_start)(const struct tls_proxy_opts *o, pid_t *ret_pid, struct error *err);
  /* frees what ca_cert_pem returned: the plugin's malloc is not agentrt's
   * when agentrt is linked statically (mk/perf.mk) */
  void (*str_free)(char *s);
  /* the plugin's fork(): the loader sets it to agentrt's before proxy_start */
  pid_t (**fork_hook)(void);
};

/* Load the plugin (once per process); the wrappers below fail with its
 * error when it cannot be loaded. */
int tls_plugin_load(struct error *err);

int tls_plugin_ca_new(const char *id, struct tls_ca **ret, struct error *err);
/* The CA's certificate in PEM, malloc'd here (free() it), or NULL. */
char *tls_plugin_ca_cert_pem(const struct tls_ca *ca);
/* NULL is a no-op (and loads nothing). */
void tls_plugin_ca_free(struct tls_ca *ca);
int tls_plugin_proxy_start(const struct tls_proxy_opts *o, pid_t *ret_pid, struct error *err);

#endif
