/* secret_store.c - see secret_store.h */
#include "monitor/secret_store.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/base64.h"
#include "common/util.h"

int secret_value_check(const char *buf, size_t len, size_t *ret_len, const char **why)
{
  if (len > 0 && buf[len - 1] == '\n')
    len--;
  if (len > 0 && buf[len - 1] == '\r')
    len--;
  if (len == 0) {
    *why = "empty";
    return -1;
  }
  for (size_t i = 0; i < len; i++) {
    unsigned char ch = (unsigned char)buf[i];
    if ((ch < 0x20 && ch != '\t') || ch == 0x7f) {
      *why = "holds a control character or line break (not allowed in a header value)";
      return -1;
    }
  }
  *ret_len = len;
  return 0;
}

static int load_one(const struct profile_secret *d, struct secret *s, struct error *err)
{
  char buf[SECRET_VALUE_MAX + 2];
  size_t len = 0, vlen = 0;
  const char *why = NULL;
  struct stat st;
  int fd = open(d->file, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  ssize_t n;

  if (fd < 0)
    return error_errno(err, "secret %s: %s", d->name, d->file);
  if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return error_set(err, 0, "secret %s: %s: not a regular file", d->name, d->file);
  }
  while (len < sizeof buf && (n = read(fd, buf + len, sizeof buf - len)) != 0) {
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      int e = errno;
      close(fd);
      explicit_bzero(buf, sizeof buf);
      return error_set(err, e, "secret %s: %s: read: %s", d->name, d->file, strerror(e));
    }
    len += (size_t)n;
  }
  close(fd);
  if (len > SECRET_VALUE_MAX + 1 || (len == SECRET_VALUE_MAX + 1 && buf[len - 1] != '\n')) {
    explicit_bzero(buf, sizeof buf);
    return error_set(err, 0, "secret %s: %s: larger than %d bytes", d->name, d->file,
                     SECRET_VALUE_MAX);
  }
  if (secret_value_check(buf, len, &vlen, &why) < 0) {
    explicit_bzero(buf, sizeof buf);
    return error_set(err, 0, "secret %s: %s: %s", d->name, d->file, why);
  }
  s->def = d;
  s->value = xmalloc0(vlen + 1);
  memcpy(s->value, buf, vlen);
  s->len = vlen;
  explicit_bzero(buf, sizeof buf);
  return 0;
}

int secret_store_load(const struct profile_result *r, struct secret_store *ret, struct error *err)
{
  struct secret_store st = {0};

  memset(ret, 0, sizeof *ret);
  if (r == NULL || r->n_secrets == 0)
    return 0;
  st.v = xmalloc0(r->n_secrets * sizeof *st.v);
  for (size_t i = 0; i < r->n_secrets; i++) {
    if (r->secrets[i].placeholder == NULL) {
      secret_store_clear(&st);
      return error_set(err, 0, "secret %s: no placeholder", r->secrets[i].name);
    }
    if (load_one(&r->secrets[i], &st.v[i], err) < 0) {
      secret_store_clear(&st);
      return -1;
    }
    st.n++;
  }
  *ret = st;
  return 0;
}

char *secret_header_value(const struct secret *s)
{
  const char *f = s->def->format ? s->def->format : "%s";
  const char *at = strstr(f, "%s");
  size_t pre = (size_t)(at - f), post = strlen(at + 2);
  char *out = xmalloc0(pre + s->len + post + 1);

  memcpy(out, f, pre);
  memcpy(out + pre, s->value, s->len);
  memcpy(out + pre + s->len, at + 2, post);
  return out;
}

/* The credentials of a Basic value, decoded (NUL-terminated, *len bytes), or
 * NULL: another scheme, or not base64. */
static unsigned char *basic_decode(const char *value, size_t *len)
{
  const char *b64;
  unsigned char *out;
  ssize_t n;

  if (strncasecmp(value, "Basic", 5) != 0 || value[5] != ' ')
    return NULL;
  for (b64 = value + 5; *b64 == ' '; b64++)
    ;
  n = (ssize_t)strlen(b64);
  while (n > 0 && b64[n - 1] == ' ')
    n--;
  out = xmalloc0((size_t)n / 4 * 3 + 1);
  n = base64_decode(b64, (size_t)n, out);
  if (n <= 0) {
    free(out);
    return NULL;
  }
  *len = (size_t)n;
  return out;
}

bool secret_basic_holds(const char *value, const char *placeholder)
{
  size_t len = 0;
  cleanup_free unsigned char *cred = basic_decode(value, &len);

  return cred != NULL && memmem(cred, len, placeholder, strlen(placeholder)) != NULL;
}

char *secret_basic_substitute(const struct secret *s, const char *value)
{
  const char *ph = s->def->placeholder;
  size_t len = 0, phlen = strlen(ph), n = 0, cap;
  unsigned char *cred = basic_decode(value, &len);
  unsigned char *real, *at, *from;
  char *out;

  if (cred == NULL)
    return NULL;
  if (memmem(cred, len, ph, phlen) == NULL) {
    free(cred);
    return NULL;
  }
  /* each placeholder (at most len / phlen of them) becomes the value */
  cap = len + (len / phlen) * s->len + 1;
  real = xmalloc0(cap);
  for (from = cred; (at = memmem(from, len - (size_t)(from - cred), ph, phlen)) != NULL;
       from = at + phlen) {
    memcpy(real + n, from, (size_t)(at - from));
    n += (size_t)(at - from);
    memcpy(real + n, s->value, s->len);
    n += s->len;
  }
  memcpy(real + n, from, len - (size_t)(from - cred));
  n += len - (size_t)(from - cred);
  out = xmalloc0(6 + BASE64_ENCODED_SIZE(n));
  memcpy(out, "Basic ", 6);
  base64_encode(real, n, out + 6);
  explicit_bzero(real, cap);
  free(real);
  free(cred);
  return out;
}

void secret_store_clear(struct secret_store *st)
{
  for (size_t i = 0; i < st->n; i++) {
    explicit_bzero(st->v[i].value, st->v[i].len);
    free(st->v[i].value);
  }
  free(st->v);
  memset(st, 0, sizeof *st);
}
