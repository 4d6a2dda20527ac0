/* json.h - internal JSON plumbing of oci/ (not a public interface).
 *
 * Parsing: jparse() builds a small DOM with yajl's event parser so that the
 * input is bounded (size, nesting, element counts, total values), strings
 * with NUL characters are refused, duplicate object keys collapse to the last
 * one (like Go's encoding/json, which produces the documents we read), and
 * syntax errors carry a line number.
 *
 * Conversion: a struct jctx tracks the JSON path of the value being
 * converted, so every error reads "config.json: linux.resources.memory.limit:
 * expected integer".  Converters have the jconv_fn shape and are composed
 * with jfield()/jarray(); JSON null counts as absent everywhere.
 *
 * Generation: struct jgen wraps yajl_gen with a sticky status, so writers
 * emit everything and check once at the end.
 */
#ifndef AGENTRT_OCI_JSON_H
#define AGENTRT_OCI_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yajl/yajl_gen.h>

#include "common/error.h"
#include "oci/config.h"

#define OCI_JSON_MAX_BYTES ((size_t)16 << 20) /* whole document */
#define OCI_JSON_MAX_ITEMS 65536              /* per array or object */
#define OCI_JSON_MAX_DEPTH 64                 /* nesting */
#define OCI_JSON_MAX_NODES ((size_t)1 << 20)  /* values in a document */

enum jtype { JT_NULL, JT_BOOL, JT_NUMBER, JT_STRING, JT_OBJECT, JT_ARRAY };

struct jnode {
  enum jtype type;
  bool b;               /* JT_BOOL */
  char *s;              /* JT_STRING text, JT_NUMBER as written */
  size_t n, cap;        /* JT_OBJECT members, JT_ARRAY elements */
  char **keys;          /* JT_OBJECT */
  struct jnode **items; /* JT_OBJECT values, JT_ARRAY elements */
};

/* Parse a whole document.  Errors: "<file>: line N: parse error: ...". */
int jparse(const char *text, size_t len, const char *file, struct jnode **ret, struct error *err);
void jfree(struct jnode *n);
/* Member of an object; NULL when absent or null. */
const struct jnode *jget(const struct jnode *obj, const char *key);

/* Conversion context: document name + current JSON path. */
struct jctx {
  const char *file;
  struct error *err;
  size_t len;
  char path[384];
};

void jctx_init(struct jctx *c, const char *file, struct error *err);
size_t jpush_key(struct jctx *c, const char *key);    /* .key */
size_t jpush_mapkey(struct jctx *c, const char *key); /* ["key"] */
size_t jpush_index(struct jctx *c, size_t i);         /* [i] */
void jpop(struct jctx *c, size_t mark);
/* "<file>: <path>: <message>"; returns -1. */
int jfail(struct jctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Same, with `.key` appended to the path for this message only. */
int jfail_at(struct jctx *c, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int jexpect(struct jctx *c, const struct jnode *v, enum jtype t);

typedef int (*jconv_fn)(struct jctx *c, const struct jnode *v, void *ret);

/* Convert obj.key with fn when present (not null).  *has (optional) tells. */
int jfield(struct jctx *c, const struct jnode *obj, const char *key, jconv_fn fn, void *ret,
           bool *has);
/* Same, but absence is an error ("<path>.key: is required"). */
int jfield_req(struct jctx *c, const struct jnode *obj, const char *key, jconv_fn fn, void *ret);
/* An array of elem_size-byte structs, each converted by fn.  ret_arr points to
 * the caller's element pointer; it and *ret_n are set before any element is
 * converted (all zeroed), so a free function can clean up after a failure. */
int jarray(struct jctx *c, const struct jnode *v, size_t elem_size, jconv_fn fn, void *ret_arr,
           size_t *ret_n);
int jfield_array(struct jctx *c, const struct jnode *obj, const char *key, size_t elem_size,
                 jconv_fn fn, void *ret_arr, size_t *ret_n);
/* An object of string values -> oci_kv array (keys must not be empty). */
int jfield_kv(struct jctx *c, const struct jnode *obj, const char *key, struct oci_kv **ret,
              size_t *ret_n);

/* Scalar converters (ret points to the C type named). */
int j_str(struct jctx *c, const struct jnode *v, void *ret);      /* char * */
int j_abspath(struct jctx *c, const struct jnode *v, void *ret);  /* char *, absolute */
int j_bool(struct jctx *c, const struct jnode *v, void *ret);     /* bool */
int j_u64(struct jctx *c, const struct jnode *v, void *ret);      /* uint64_t */
int j_u32(struct jctx *c, const struct jnode *v, void *ret);      /* uint32_t */
int j_u16(struct jctx *c, const struct jnode *v, void *ret);      /* uint16_t */
int j_i64(struct jctx *c, const struct jnode *v, void *ret);      /* int64_t */
int j_int(struct jctx *c, const struct jnode *v, void *ret);      /* int */
int j_strv(struct jctx *c, const struct jnode *v, void *ret);     /* char ** (NULL-terminated) */
int j_abspathv(struct jctx *c, const struct jnode *v, void *ret); /* char **, each absolute */

void oci_kv_free(struct oci_kv *kv, size_t n);

/* Writer. */
struct jgen {
  yajl_gen g;
  yajl_gen_status st;
};

void jgen_init(struct jgen *j, bool pretty); /* pretty: tab-indented */
/* indent NULL: compact; else beautified with that indent string */
void jgen_init_indent(struct jgen *j, const char *indent);
/* Take the output (NUL-terminated) and free the generator. */
int jgen_finish(struct jgen *j, const char *what, char **ret, size_t *ret_len, struct error *err);
void jgen_free(struct jgen *j);
void jg_open(struct jgen *j);  /* { */
void jg_close(struct jgen *j); /* } */
void jg_aopen(struct jgen *j); /* [ */
void jg_aclose(struct jgen *j);
void jg_key(struct jgen *j, const char *key);
void jg_str(struct jgen *j, const char *s);
void jg_u64(struct jgen *j, uint64_t v);
void jg_i64(struct jgen *j, int64_t v);
void jg_bool(struct jgen *j, bool v);
/* key + value; the string/vector forms emit nothing when the value is NULL. */
void jg_kstr(struct jgen *j, const char *key, const char *s);
void jg_ku64(struct jgen *j, const char *key, uint64_t v);
void jg_ki64(struct jgen *j, const char *key, int64_t v);
void jg_kbool(struct jgen *j, const char *key, bool v);
void jg_kstrv(struct jgen *j, const char *key, char *const *v);
void jg_kkv(struct jgen *j, const char *key, const struct oci_kv *kv, size_t n);

#endif
