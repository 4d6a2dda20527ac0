/* secret_store.h - the values of a container's secrets, held by its monitor only.
 *
 * The profile names each secret's host file (profile.h, struct
 * profile_secret); create gives the container a random placeholder in the
 * variable; the monitor reads the file here, before the init runs anything,
 * and keeps the value in its own memory (never written anywhere: not the
 * state dir, the trail, the log).  A file that is missing, empty, larger
 * than SECRET_VALUE_MAX or holds a byte that cannot be in an HTTP header
 * value (a control character, CR or LF: header injection) fails create.
 *
 * secret_header_value() is what the TLS proxy puts in the secret's header
 * when a request to one of its hosts carries the placeholder.
 */
#ifndef AGENTRT_MONITOR_SECRET_STORE_H
#define AGENTRT_MONITOR_SECRET_STORE_H

#include <stdbool.h>
#include <stddef.h>

#include "common/error.h"
#include "profile/profile.h"

#define SECRET_VALUE_MAX 16384

struct secret {
  const struct profile_secret *def; /* name, hosts, header, format, placeholder */
  char *value;                      /* NUL-terminated, header-safe */
  size_t len;
};

struct secret_store {
  struct secret *v;
  size_t n;
};

/* Read every secret of r (placeholders set).  err names the secret and file:
 * "secret API_TOKEN: /etc/agentrt/secrets/api: No such file or directory". */
int secret_store_load(const struct profile_result *r, struct secret_store *ret, struct error *err);
/* A file's content as a value: one final "\n" or "\r\n" dropped; -1 with a
 * reason (no file name) when it cannot be one. */
int secret_value_check(const char *buf, size_t len, size_t *ret_len, const char **why);
/* The header value for s: format with the value in place of "%s". */
char *secret_header_value(const struct secret *s);
/* HTTP Basic credentials ("Basic " and the base64 of user:password, the
 * scheme in any case: RFC 7617) in value that hold placeholder once decoded,
 * as git, pip and npm send a token given in a URL's user or password.
 * secret_basic_holds() says whether they do; secret_basic_substitute()
 * returns the same credentials with s's value in place of each placeholder,
 * encoded again ("Basic ..."), or NULL when value holds none. */
bool secret_basic_holds(const char *value, const char *placeholder);
char *secret_basic_substitute(const struct secret *s, const char *value);
/* Wipe and free the values. */
void secret_store_clear(struct secret_store *st);

#endif
