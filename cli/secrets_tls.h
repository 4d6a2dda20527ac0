/* secrets_tls.h - create's part of the secrets' TLS proxy: the
 * per-container CA (monitor/tls_ca.h) and its place in the container's trust
 * store, without writing to the image.
 *
 * The CA certificate is appended to the host's bundle in <state dir>/
 * ca-bundle.crt, bound read-only over each distribution bundle path the
 * rootfs has (SECRETS_TLS_BUNDLE_PATHS) and at SECRETS_TLS_BUNDLE (in the
 * container's /dev tmpfs, so a rootfs without a bundle gets one too); the
 * process's SSL_CERT_FILE, REQUESTS_CA_BUNDLE, NODE_EXTRA_CA_CERTS,
 * CURL_CA_BUNDLE and GIT_SSL_CAINFO name it (an engine's own values are
 * replaced: the proxy's certificates verify against this bundle only).
 * The CA's key stays in memory: create hands it to the monitor it forks.
 */
#ifndef AGENTRT_CLI_SECRETS_TLS_H
#define AGENTRT_CLI_SECRETS_TLS_H

#include "common/error.h"
#include "container/container.h"
#include "monitor/tls_plugin.h"
#include "profile/profile.h"

#define SECRETS_TLS_BUNDLE "/dev/agentrt-ca-bundle.crt"
#define SECRETS_TLS_BUNDLE_PATHS                                                                   \
  "/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt",                        \
      "/etc/ssl/ca-bundle.pem", "/etc/ssl/cert.pem"

/* Nothing to do without secrets (*ret_ca NULL). */
int secrets_tls_prepare(struct container *c, struct oci_config *cfg, const char *rootfs,
                        struct profile_result *pres, struct tls_ca **ret_ca, struct error *err);

#endif
