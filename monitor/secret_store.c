/* secret_store.c - see secret_store.h */
#include "monitor/secret_store.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

void secret_store_clear(struct secret_store *st)
{
  for (size_t i = 0; i < st->n; i++) {
    explicit_bzero(st->v[i].value, st->v[i].len);
    free(st->v[i].value);
  }
  free(st->v);
  memset(st, 0, sizeof *st);
}
