/* tls_ca.c - see tls_ca.h */
#include "monitor/tls_ca.h"

#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>
#include <string.h>

#include "common/util.h"

static int ssl_fail(struct error *err, const char *what)
{
  char buf[256];
  unsigned long e = ERR_get_error();

  ERR_error_string_n(e, buf, sizeof buf);
  ERR_clear_error();
  return error_set(err, 0, "%s: %s", what, e ? buf : "failed");
}

EVP_PKEY *tls_key_new(void)
{
  return EVP_EC_gen("P-256");
}

static bool add_ext(X509 *cert, X509 *issuer, int nid, const char *value)
{
  X509V3_CTX ctx;
  X509_EXTENSION *ex;

  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, NULL, NULL, 0);
  ex = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
  if (ex == NULL)
    return false;
  X509_add_ext(cert, ex, -1);
  X509_EXTENSION_free(ex);
  return true;
}

/* A certificate for key, serial random, valid from an hour ago (clocks of
 * the container and the host agree, a client's may lag) for `days`. */
static X509 *cert_new(EVP_PKEY *key, const char *cn, long days)
{
  X509 *c = X509_new();
  unsigned char serial[16];
  BIGNUM *bn;
  X509_NAME *name;

  if (c == NULL || RAND_bytes(serial, sizeof serial) != 1) {
    X509_free(c);
    return NULL;
  }
  serial[0] &= 0x7f; /* positive */
  bn = BN_bin2bn(serial, sizeof serial, NULL);
  X509_set_version(c, X509_VERSION_3);
  BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(c));
  BN_free(bn);
  X509_gmtime_adj(X509_getm_notBefore(c), -3600);
  X509_gmtime_adj(X509_getm_notAfter(c), days * 86400);
  X509_set_pubkey(c, key);
  name = X509_get_subject_name(c);
  X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, (const unsigned char *)"agentrt", -1, -1, 0);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, (const unsigned char *)cn, -1, -1, 0);
  return c;
}

int tls_ca_new(const char *id, struct tls_ca **ret, struct error *err)
{
  struct tls_ca *ca = xmalloc0(sizeof *ca);
  cleanup_free char *cn = xfmt("agentrt container CA %.40s", id);

  ca->key = tls_key_new();
  if (ca->key == NULL) {
    free(ca);
    return ssl_fail(err, "TLS proxy CA: key");
  }
  ca->cert = cert_new(ca->key, cn, 365);
  if (ca->cert == NULL || X509_set_issuer_name(ca->cert, X509_get_subject_name(ca->cert)) != 1 ||
      !add_ext(ca->cert, ca->cert, NID_basic_constraints, "critical,CA:TRUE,pathlen:0") ||
      !add_ext(ca->cert, ca->cert, NID_key_usage, "critical,keyCertSign,cRLSign") ||
      !add_ext(ca->cert, ca->cert, NID_subject_key_identifier, "hash") ||
      X509_sign(ca->cert, ca->key, EVP_sha256()) == 0) {
    tls_ca_free(ca);
    return ssl_fail(err, "TLS proxy CA: certificate");
  }
  *ret = ca;
  return 0;
}

char *tls_ca_cert_pem(const struct tls_ca *ca)
{
  BIO *b = BIO_new(BIO_s_mem());
  char *data = NULL, *out;
  long n;

  if (b == NULL || PEM_write_bio_X509(b, ca->cert) != 1) {
    BIO_free(b);
    return NULL;
  }
  n = BIO_get_mem_data(b, &data);
  out = xstrndup(data, (size_t)n);
  BIO_free(b);
  return out;
}

int tls_ca_leaf(const struct tls_ca *ca, EVP_PKEY *leaf_key, const char *name, X509 **ret,
                struct error *err)
{
  cleanup_free char *san = xfmt("DNS:%s", name);
  X509 *c = cert_new(leaf_key, name, 7);

  if (c == NULL || X509_set_issuer_name(c, X509_get_subject_name(ca->cert)) != 1 ||
      !add_ext(c, ca->cert, NID_basic_constraints, "critical,CA:FALSE") ||
      !add_ext(c, ca->cert, NID_key_usage, "critical,digitalSignature") ||
      !add_ext(c, ca->cert, NID_ext_key_usage, "serverAuth") ||
      !add_ext(c, ca->cert, NID_subject_alt_name, san) ||
      !add_ext(c, ca->cert, NID_subject_key_identifier, "hash") ||
      !add_ext(c, ca->cert, NID_authority_key_identifier, "keyid:always") ||
      X509_sign(c, ca->key, EVP_sha256()) == 0) {
    X509_free(c);
    return ssl_fail(err, "TLS proxy: leaf certificate");
  }
  *ret = c;
  return 0;
}

void tls_ca_free(struct tls_ca *ca)
{
  if (ca == NULL)
    return;
  EVP_PKEY_free(ca->key);
  X509_free(ca->cert);
  free(ca);
}
