/* json_conv.c - typed conversion of DOM values with JSON-path errors.
 *
 * Numbers are converted from the text as written: a fraction or exponent is
 * "expected integer", a minus sign where the C type is unsigned is "must not
 * be negative", and anything that does not fit is "out of range" (never
 * wrapped or clamped).
 */
#include "oci/json.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>

#include "common/util.h"

void jctx_init(struct jctx *c, const char *file, struct error *err)
{
  c->file = file;
  c->err = err;
  c->len = 0;
  c->path[0] = '\0';
}

/* Append formatted text to the path; a path that does not fit ends in "...". */
static size_t push(struct jctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static size_t push(struct jctx *c, const char *fmt, ...)
{
  size_t mark = c->len;
  size_t room = sizeof c->path - c->len;
  va_list ap;
  int n;

  va_start(ap, fmt);
  n = vsnprintf(c->path + c->len, room, fmt, ap);
  va_end(ap);
  if (n < 0)
    n = 0;
  if ((size_t)n >= room) {
    memcpy(c->path + sizeof c->path - 4, "...", 4);
    c->len = sizeof c->path - 1;
  } else {
    c->len += (size_t)n;
  }
  return mark;
}

size_t jpush_key(struct jctx *c, const char *key)
{
  return push(c, c->len == 0 ? "%s" : ".%s", key);
}

size_t jpush_mapkey(struct jctx *c, const char *key)
{
  /* show at most 64 bytes of a user-supplied key */
  return push(c, "[\"%.64s%s\"]", key, strlen(key) > 64 ? "..." : "");
}

size_t jpush_index(struct jctx *c, size_t i)
{
  return push(c, "[%zu]", i);
}

void jpop(struct jctx *c, size_t mark)
{
  c->len = mark;
  c->path[mark] = '\0';
}

static int vfail(struct jctx *c, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
static int vfail(struct jctx *c, const char *fmt, va_list ap)
{
  char msg[ERROR_MSG_MAX];
  const char *file = c->file != NULL ? c->file : "json";

  vsnprintf(msg, sizeof msg, fmt, ap);
  if (c->len == 0)
    error_set(c->err, 0, "%s: %s", file, msg);
  else
    error_set(c->err, 0, "%s: %s: %s", file, c->path, msg);
  /* keys and values quoted in the message come from the document: keep the
   * message on one line (log records and engines parse it line by line) */
  for (char *p = c->err->msg; *p != '\0'; p++)
    if ((unsigned char)*p < 0x20 || *p == 0x7f)
      *p = '?';
  return -1;
}

int jfail(struct jctx *c, const char *fmt, ...)
{
  va_list ap;

  va_start(ap, fmt);
  vfail(c, fmt, ap);
  va_end(ap);
  return -1;
}

int jfail_at(struct jctx *c, const char *key, const char *fmt, ...)
{
  size_t mark = jpush_key(c, key);
  va_list ap;

  va_start(ap, fmt);
  vfail(c, fmt, ap);
  va_end(ap);
  jpop(c, mark);
  return -1;
}

static const char *type_name(enum jtype t)
{
  switch (t) {
  case JT_BOOL:
    return "boolean";
  case JT_NUMBER:
    return "integer";
  case JT_STRING:
    return "string";
  case JT_OBJECT:
    return "object";
  case JT_ARRAY:
    return "array";
  default:
    return "null";
  }
}

int jexpect(struct jctx *c, const struct jnode *v, enum jtype t)
{
  if (v != NULL && v->type == t)
    return 0;
  return jfail(c, "expected %s", type_name(t));
}

int jfield(struct jctx *c, const struct jnode *obj, const char *key, jconv_fn fn, void *ret,
           bool *has)
{
  const struct jnode *v = jget(obj, key);
  size_t mark;
  int r;

  if (has != NULL)
    *has = v != NULL;
  if (v == NULL)
    return 0;
  mark = jpush_key(c, key);
  r = fn(c, v, ret);
  jpop(c, mark);
  return r;
}

int jfield_req(struct jctx *c, const struct jnode *obj, const char *key, jconv_fn fn, void *ret)
{
  bool has = false;

  if (jfield(c, obj, key, fn, ret, &has) < 0)
    return -1;
  if (!has)
    return jfail_at(c, key, "is required");
  return 0;
}

int jarray(struct jctx *c, const struct jnode *v, size_t elem_size, jconv_fn fn, void *ret_arr,
           size_t *ret_n)
{
  char *arr;

  if (jexpect(c, v, JT_ARRAY) < 0)
    return -1;
  arr = xmalloc0(v->n * elem_size);
  memcpy(ret_arr, &arr, sizeof arr);
  *ret_n = v->n;
  for (size_t i = 0; i < v->n; i++) {
    size_t mark = jpush_index(c, i);
    int r = fn(c, v->items[i], arr + i * elem_size);
    jpop(c, mark);
    if (r < 0)
      return -1;
  }
  return 0;
}

int jfield_array(struct jctx *c, const struct jnode *obj, const char *key, size_t elem_size,
                 jconv_fn fn, void *ret_arr, size_t *ret_n)
{
  const struct jnode *v = jget(obj, key);
  size_t mark;
  int r;

  if (v == NULL)
    return 0;
  mark = jpush_key(c, key);
  r = jarray(c, v, elem_size, fn, ret_arr, ret_n);
  jpop(c, mark);
  return r;
}

void oci_kv_free(struct oci_kv *kv, size_t n)
{
  for (size_t i = 0; kv != NULL && i < n; i++) {
    free(kv[i].key);
    free(kv[i].value);
  }
  free(kv);
}

int jfield_kv(struct jctx *c, const struct jnode *obj, const char *key, struct oci_kv **ret,
              size_t *ret_n)
{
  const struct jnode *v = jget(obj, key);
  size_t mark;
  int r = 0;

  if (v == NULL)
    return 0;
  mark = jpush_key(c, key);
  if (jexpect(c, v, JT_OBJECT) < 0) {
    jpop(c, mark);
    return -1;
  }
  *ret = xmalloc0(v->n * sizeof **ret);
  *ret_n = v->n;
  for (size_t i = 0; i < v->n && r == 0; i++) {
    size_t m2 = jpush_mapkey(c, v->keys[i]);
    if (v->keys[i][0] == '\0')
      r = jfail(c, "key must not be empty");
    else if (v->items[i]->type != JT_STRING)
      r = jfail(c, "expected string");
    else
      (*ret)[i] = (struct oci_kv){xstrdup(v->keys[i]), xstrdup(v->items[i]->s)};
    jpop(c, m2);
  }
  jpop(c, mark);
  return r;
}

int j_str(struct jctx *c, const struct jnode *v, void *ret)
{
  char **out = ret;

  if (jexpect(c, v, JT_STRING) < 0)
    return -1;
  free(*out);
  *out = xstrdup(v->s);
  return 0;
}

int j_abspath(struct jctx *c, const struct jnode *v, void *ret)
{
  if (j_str(c, v, ret) < 0)
    return -1;
  if (**(char **)ret != '/')
    return jfail(c, "must be an absolute path");
  return 0;
}

int j_bool(struct jctx *c, const struct jnode *v, void *ret)
{
  if (jexpect(c, v, JT_BOOL) < 0)
    return -1;
  *(bool *)ret = v->b;
  return 0;
}

/* Check the number's text: integer syntax only. */
static int int_text(struct jctx *c, const struct jnode *v)
{
  if (jexpect(c, v, JT_NUMBER) < 0)
    return -1;
  if (strpbrk(v->s, ".eE") != NULL)
    return jfail(c, "expected integer");
  return 0;
}

static int to_u64(struct jctx *c, const struct jnode *v, uint64_t max, uint64_t *ret)
{
  char *end = NULL;
  unsigned long long x;

  if (int_text(c, v) < 0)
    return -1;
  if (v->s[0] == '-')
    return jfail(c, "must not be negative");
  errno = 0;
  x = strtoull(v->s, &end, 10);
  if (end == v->s || *end != '\0')
    return jfail(c, "expected integer");
  if (errno == ERANGE || x > max)
    return jfail(c, "out of range (maximum %llu)", (unsigned long long)max);
  *ret = x;
  return 0;
}

static int to_i64(struct jctx *c, const struct jnode *v, int64_t min, int64_t max, int64_t *ret)
{
  char *end = NULL;
  long long x;

  if (int_text(c, v) < 0)
    return -1;
  errno = 0;
  x = strtoll(v->s, &end, 10);
  if (end == v->s || *end != '\0')
    return jfail(c, "expected integer");
  if (errno == ERANGE || x < min || x > max)
    return jfail(c, "out of range (%lld to %lld)", (long long)min, (long long)max);
  *ret = x;
  return 0;
}

int j_u64(struct jctx *c, const struct jnode *v, void *ret)
{
  return to_u64(c, v, UINT64_MAX, ret);
}

int j_u32(struct jctx *c, const struct jnode *v, void *ret)
{
  uint64_t x;
  if (to_u64(c, v, UINT32_MAX, &x) < 0)
    return -1;
  *(uint32_t *)ret = (uint32_t)x;
  return 0;
}

int j_u16(struct jctx *c, const struct jnode *v, void *ret)
{
  uint64_t x;
  if (to_u64(c, v, UINT16_MAX, &x) < 0)
    return -1;
  *(uint16_t *)ret = (uint16_t)x;
  return 0;
}

int j_i64(struct jctx *c, const struct jnode *v, void *ret)
{
  return to_i64(c, v, INT64_MIN, INT64_MAX, ret);
}

int j_int(struct jctx *c, const struct jnode *v, void *ret)
{
  int64_t x;
  if (to_i64(c, v, INT_MIN, INT_MAX, &x) < 0)
    return -1;
  *(int *)ret = (int)x;
  return 0;
}

static int strv_conv(struct jctx *c, const struct jnode *v, void *ret, jconv_fn elem)
{
  char ***out = ret;

  if (jexpect(c, v, JT_ARRAY) < 0)
    return -1;
  strv_free(*out);
  *out = xmalloc0((v->n + 1) * sizeof(char *));
  for (size_t i = 0; i < v->n; i++) {
    size_t mark = jpush_index(c, i);
    int r = elem(c, v->items[i], &(*out)[i]);
    jpop(c, mark);
    if (r < 0)
      return -1;
  }
  return 0;
}

int j_strv(struct jctx *c, const struct jnode *v, void *ret)
{
  return strv_conv(c, v, ret, j_str);
}

int j_abspathv(struct jctx *c, const struct jnode *v, void *ret)
{
  return strv_conv(c, v, ret, j_abspath);
}
