/* json_gen.c - yajl_gen with a sticky status (see json.h).
 *
 * Writers call the jg_* helpers unconditionally; the first failure (invalid
 * UTF-8 in a string, mismatched nesting) is remembered and reported once by
 * jgen_finish().  Integers go through yajl_gen_number so that uint64 values
 * above INT64_MAX (RLIM_INFINITY) are written exactly.
 */
#include "oci/json.h"

#include <inttypes.h>
#include <stdio.h>

#include "common/util.h"

static void note(struct jgen *j, yajl_gen_status st)
{
  if (j->st == yajl_gen_status_ok && st != yajl_gen_status_ok)
    j->st = st;
}

void jgen_init(struct jgen *j, bool pretty)
{
  jgen_init_indent(j, pretty ? "\t" : NULL);
}

void jgen_init_indent(struct jgen *j, const char *indent)
{
  j->g = yajl_gen_alloc(NULL);
  j->st = yajl_gen_status_ok;
  if (j->g == NULL) {
    j->st = yajl_gen_no_buf;
    return;
  }
  yajl_gen_config(j->g, yajl_gen_validate_utf8, 1);
  if (indent != NULL) {
    yajl_gen_config(j->g, yajl_gen_beautify, 1);
    yajl_gen_config(j->g, yajl_gen_indent_string, indent);
  }
}

void jgen_free(struct jgen *j)
{
  if (j->g != NULL)
    yajl_gen_free(j->g);
  j->g = NULL;
}

static const char *gen_error(yajl_gen_status st)
{
  switch (st) {
  case yajl_gen_invalid_string:
    return "a string is not valid UTF-8";
  case yajl_gen_no_buf:
    return "out of memory";
  default:
    return "internal error in the JSON writer";
  }
}

int jgen_finish(struct jgen *j, const char *what, char **ret, size_t *ret_len, struct error *err)
{
  const unsigned char *buf = NULL;
  size_t len = 0;

  if (j->st == yajl_gen_status_ok && j->g != NULL)
    note(j, yajl_gen_get_buf(j->g, &buf, &len));
  if (j->st != yajl_gen_status_ok) {
    error_set(err, 0, "write %s: %s", what, gen_error(j->st));
    jgen_free(j);
    return -1;
  }
  *ret = xstrndup((const char *)buf, len);
  if (ret_len != NULL)
    *ret_len = len;
  jgen_free(j);
  return 0;
}

#define G(call)                                                                                    \
  do {                                                                                             \
    if (j->g != NULL && j->st == yajl_gen_status_ok)                                               \
      note(j, call);                                                                               \
  } while (0)

void jg_open(struct jgen *j)
{
  G(yajl_gen_map_open(j->g));
}

void jg_close(struct jgen *j)
{
  G(yajl_gen_map_close(j->g));
}

void jg_aopen(struct jgen *j)
{
  G(yajl_gen_array_open(j->g));
}

void jg_aclose(struct jgen *j)
{
  G(yajl_gen_array_close(j->g));
}

void jg_str(struct jgen *j, const char *s)
{
  if (s == NULL)
    s = "";
  G(yajl_gen_string(j->g, (const unsigned char *)s, strlen(s)));
}

void jg_key(struct jgen *j, const char *key)
{
  jg_str(j, key);
}

void jg_u64(struct jgen *j, uint64_t v)
{
  char buf[32];
  int n = snprintf(buf, sizeof buf, "%" PRIu64, v);
  G(yajl_gen_number(j->g, buf, (size_t)n));
}

void jg_i64(struct jgen *j, int64_t v)
{
  char buf[32];
  int n = snprintf(buf, sizeof buf, "%" PRId64, v);
  G(yajl_gen_number(j->g, buf, (size_t)n));
}

void jg_bool(struct jgen *j, bool v)
{
  G(yajl_gen_bool(j->g, v));
}

void jg_kstr(struct jgen *j, const char *key, const char *s)
{
  if (s == NULL)
    return;
  jg_key(j, key);
  jg_str(j, s);
}

void jg_ku64(struct jgen *j, const char *key, uint64_t v)
{
  jg_key(j, key);
  jg_u64(j, v);
}

void jg_ki64(struct jgen *j, const char *key, int64_t v)
{
  jg_key(j, key);
  jg_i64(j, v);
}

void jg_kbool(struct jgen *j, const char *key, bool v)
{
  jg_key(j, key);
  jg_bool(j, v);
}

void jg_kstrv(struct jgen *j, const char *key, char *const *v)
{
  if (v == NULL)
    return;
  jg_key(j, key);
  jg_aopen(j);
  for (; *v != NULL; v++)
    jg_str(j, *v);
  jg_aclose(j);
}

void jg_kkv(struct jgen *j, const char *key, const struct oci_kv *kv, size_t n)
{
  if (kv == NULL)
    return;
  jg_key(j, key);
  jg_open(j);
  for (size_t i = 0; i < n; i++) {
    jg_key(j, kv[i].key);
    jg_str(j, kv[i].value);
  }
  jg_close(j);
}
