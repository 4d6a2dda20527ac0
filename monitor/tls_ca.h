/* tls_ca.h - the per-container certificate authority of the egress TLS proxy.
 *
 * Made at create (an EC P-256 key and a self-signed CA certificate, "agentrt
 * container CA <id>", valid for a year, path length 0), before the monitor
 * is forked: the key lives in memory only, in the monitor (create's copy is
 * freed when create exits; it never touches a file).  The certificate (PEM)
 * goes into the container's trust store: tls_ca_bundle() appends it to the
 * host's bundle, which create binds over the distribution bundle paths.
 *
 * tls_ca_leaf() issues the certificate the proxy presents for a server
 * name: subject alternative name DNS:<name>, serverAuth, a week, signed by
 * the CA, for a key the proxy made for itself.
 */
#ifndef AGENTRT_MONITOR_TLS_CA_H
#define AGENTRT_MONITOR_TLS_CA_H

#include <openssl/evp.h>
#include <openssl/x509.h>

#include "common/error.h"

struct tls_ca {
  EVP_PKEY *key;
  X509 *cert;
};

int tls_ca_new(const char *id, struct tls_ca **ret, struct error *err);
/* The CA certificate as PEM (malloc'd). */
char *tls_ca_cert_pem(const struct tls_ca *ca);
/* A fresh EC P-256 key (the proxy's leaf key). */
EVP_PKEY *tls_key_new(void);
int tls_ca_leaf(const struct tls_ca *ca, EVP_PKEY *leaf_key, const char *name, X509 **ret,
                struct error *err);
void tls_ca_free(struct tls_ca *ca);

#endif
