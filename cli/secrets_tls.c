/* secrets_tls.c - see secrets_tls.h */
#include "cli/secrets_tls.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "os/fsutil.h"

static void add_bind(struct oci_config *cfg, const char *src, const char *dest)
{
  static const char *const opts[] = {"rbind", "ro", "nosuid", "nodev", "noexec", NULL};
  struct oci_mount *m;

  cfg->mounts = xrealloc(cfg->mounts, (cfg->n_mounts + 1) * sizeof *cfg->mounts);
  m = &cfg->mounts[cfg->n_mounts++];
  memset(m, 0, sizeof *m);
  m->destination = xstrdup(dest);
  m->type = xstrdup("bind");
  m->source = xstrdup(src);
  m->options = strv_dup((char **)opts);
}

static void set_env(struct oci_process *p, const char *name, const char *value)
{
  cleanup_free char *kv = xfmt("%s=%s", name, value);
  size_t n = strlen(name);

  for (size_t i = 0; p->env != NULL && p->env[i] != NULL; i++)
    if (strncmp(p->env[i], name, n) == 0 && p->env[i][n] == '=') {
      free(p->env[i]);
      p->env[i] = xstrdup(kv);
      return;
    }
  strv_push(&p->env, kv);
}

/* A regular file (not a symlink: its target is bound, or is another of the
 * paths) at path inside the rootfs. */
static bool rootfs_has_file(const char *rootfs, const char *path)
{
  cleanup_free char *full = xfmt("%s%s", rootfs, path);
  struct stat st;

  return lstat(full, &st) == 0 && S_ISREG(st.st_mode);
}

int secrets_tls_prepare(struct container *c, struct oci_config *cfg, const char *rootfs,
                        struct profile_result *pres, struct tls_ca **ret_ca, struct error *err)
{
  static const char *const paths[] = {SECRETS_TLS_BUNDLE_PATHS};
  static const char *const vars[] = {"SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS",
                                     "CURL_CA_BUNDLE", "GIT_SSL_CAINFO"};
  cleanup_free char *host = NULL, *pem = NULL, *bundle = NULL, *src = NULL;
  struct error ignore = {0};
  size_t hlen = 0;
  struct tls_ca *ca = NULL;

  *ret_ca = NULL;
  if (pres == NULL || (pres->n_secrets == 0 && pres->egress.n_http == 0) ||
      pres->egress.def == PROFILE_EGRESS_OFF)
    return 0;
  if (tls_plugin_ca_new(c->id, &ca, err) < 0)
    return -1;
  pem = tls_plugin_ca_cert_pem(ca);
  /* the host's store, so that flows the proxy does not terminate verify too */
  for (size_t i = 0; i < sizeof paths / sizeof *paths && host == NULL; i++)
    if (read_file_at(AT_FDCWD, paths[i], 8 << 20, &host, &hlen, &ignore) < 0)
      error_clear(&ignore);
  bundle = xfmt("%s%s# agentrt: the container's TLS proxy CA\n%s", host ? host : "",
                host && hlen && host[hlen - 1] != '\n' ? "\n" : "", pem ? pem : "");
  if (pem == NULL ||
      write_file_atomic_at(c->dirfd, "ca-bundle.crt", bundle, strlen(bundle), err) < 0 ||
      fchmodat(c->dirfd, "ca-bundle.crt", 0644, 0) < 0) {
    tls_plugin_ca_free(ca);
    return err->msg[0] ? -1 : error_errno(err, "TLS proxy CA bundle");
  }
  src = xfmt("%s/ca-bundle.crt", c->dir);
  for (size_t i = 0; i < sizeof paths / sizeof *paths; i++)
    if (rootfs_has_file(rootfs, paths[i]))
      add_bind(cfg, src, paths[i]);
  add_bind(cfg, src, SECRETS_TLS_BUNDLE);
  if (cfg->process != NULL)
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
      set_env(cfg->process, vars[i], SECRETS_TLS_BUNDLE);
  *ret_ca = ca;
  return 0;
}
