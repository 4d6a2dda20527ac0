/* json.c - a bounded JSON DOM built on yajl's event parser (see json.h).
 *
 * yajl_tree would do, except that it has no limits (a deeply nested document
 * overflows the stack of its recursive free), keeps duplicate keys, and hides
 * the byte offset of a syntax error.  This builder enforces the OCI_JSON_MAX_*
 * bounds while parsing and reports errors with a line number.
 */
#include "oci/json.h"

#include <stdio.h>
#include <yajl/yajl_parse.h>

#include "common/util.h"

struct builder {
  yajl_handle h;
  struct jnode *root;
  struct jnode *stack[OCI_JSON_MAX_DEPTH];
  size_t depth;
  char *key; /* pending object key */
  size_t nodes;
  const char *why; /* reason when a callback cancels the parse */
};

void jfree(struct jnode *n)
{
  if (n == NULL)
    return;
  for (size_t i = 0; i < n->n; i++) {
    if (n->keys != NULL)
      free(n->keys[i]);
    jfree(n->items[i]);
  }
  free(n->keys);
  free(n->items);
  free(n->s);
  free(n);
}

const struct jnode *jget(const struct jnode *obj, const char *key)
{
  if (obj == NULL || obj->type != JT_OBJECT)
    return NULL;
  /* keys are unique after jparse (end_map dedups) */
  for (size_t i = 0; i < obj->n; i++)
    if (strcmp(obj->keys[i], key) == 0)
      return obj->items[i]->type == JT_NULL ? NULL : obj->items[i];
  return NULL;
}

static struct jnode *node_new(struct builder *b, enum jtype t)
{
  struct jnode *n;

  if (b->nodes >= OCI_JSON_MAX_NODES) {
    b->why = "too many values (limit 1048576)";
    return NULL;
  }
  b->nodes++;
  n = xmalloc0(sizeof *n);
  n->type = t;
  return n;
}

/* Attach n to the current container (or make it the root).  Takes n. */
static int attach(struct builder *b, struct jnode *n)
{
  struct jnode *p;

  if (n == NULL)
    return 0;
  if (b->depth == 0) {
    b->root = n;
    return 1;
  }
  p = b->stack[b->depth - 1];
  if (p->n >= OCI_JSON_MAX_ITEMS) {
    b->why = "too many elements in an array or object (limit 65536)";
    jfree(n);
    return 0;
  }
  if (p->n == p->cap) {
    p->cap = p->cap ? p->cap * 2 : 8;
    p->items = xrealloc(p->items, p->cap * sizeof *p->items);
    if (p->type == JT_OBJECT)
      p->keys = xrealloc(p->keys, p->cap * sizeof *p->keys);
  }
  if (p->type == JT_OBJECT)
    p->keys[p->n] = take_ptr(b->key);
  p->items[p->n++] = n;
  return 1;
}

/* Is s[0..len) UTF-8 as RFC 3629 has it?  yajl's own check lets an overlong form (C0 AF for
 * '/'), a surrogate (ED A0 80) and a code point past U+10FFFF (F4 90 80 80) through; written
 * back into `state` and `list --format json` they made a document a strict parser (Python's,
 * serde_json) refuses (state-invalid-utf8). */
static bool utf8_valid(const unsigned char *s, size_t len)
{
  size_t i = 0;

  while (i < len) {
    unsigned char c = s[i];
    size_t n = c < 0x80                 ? 0
               : c >= 0xc2 && c <= 0xdf ? 1
               : c >= 0xe0 && c <= 0xef ? 2
               : c >= 0xf0 && c <= 0xf4 ? 3
                                        : 4;
    unsigned char lo = 0x80, hi = 0xbf;
    if (n == 4 || len - i <= n)
      return false; /* not a lead byte, or cut short */
    if (c == 0xe0)
      lo = 0xa0; /* overlong */
    else if (c == 0xed)
      hi = 0x9f; /* surrogates */
    else if (c == 0xf0)
      lo = 0x90; /* overlong */
    else if (c == 0xf4)
      hi = 0x8f; /* past U+10FFFF */
    for (size_t k = 1; k <= n; k++, lo = 0x80, hi = 0xbf)
      if (s[i + k] < lo || s[i + k] > hi)
        return false;
    i += n + 1;
  }
  return true;
}

static int bad_string(struct builder *b, const void *s, size_t len)
{
  if (memchr(s, '\0', len) != NULL) {
    b->why = "string contains a NUL character";
    return 1;
  }
  if (!utf8_valid(s, len)) {
    b->why = "string is not valid UTF-8 (an overlong form, a surrogate or past U+10FFFF)";
    return 1;
  }
  return 0;
}

static int cb_null(void *ctx)
{
  struct builder *b = ctx;
  return attach(b, node_new(b, JT_NULL));
}

static int cb_bool(void *ctx, int v)
{
  struct builder *b = ctx;
  struct jnode *n = node_new(b, JT_BOOL);
  if (n != NULL)
    n->b = v != 0;
  return attach(b, n);
}

static int cb_number(void *ctx, const char *s, size_t len)
{
  struct builder *b = ctx;
  struct jnode *n = node_new(b, JT_NUMBER);
  if (n != NULL)
    n->s = xstrndup(s, len);
  return attach(b, n);
}

static int cb_string(void *ctx, const unsigned char *s, size_t len)
{
  struct builder *b = ctx;
  struct jnode *n;

  if (bad_string(b, s, len))
    return 0;
  n = node_new(b, JT_STRING);
  if (n != NULL)
    n->s = xstrndup((const char *)s, len);
  return attach(b, n);
}

static int open_container(struct builder *b, enum jtype t)
{
  struct jnode *n;

  if (b->depth >= OCI_JSON_MAX_DEPTH) {
    b->why = "nesting too deep (limit 64 levels)";
    return 0;
  }
  n = node_new(b, t);
  if (!attach(b, n))
    return 0;
  b->stack[b->depth++] = n;
  return 1;
}

static int cb_start_map(void *ctx)
{
  return open_container(ctx, JT_OBJECT);
}

static int cb_start_array(void *ctx)
{
  return open_container(ctx, JT_ARRAY);
}

static int cb_map_key(void *ctx, const unsigned char *s, size_t len)
{
  struct builder *b = ctx;

  if (bad_string(b, s, len))
    return 0;
  free(b->key);
  b->key = xstrndup((const char *)s, len);
  return 1;
}

/* Sorting helper for dedup: by key, then by position. */
struct keyref {
  const char *key;
  size_t pos;
};

static int keyref_cmp(const void *a, const void *b)
{
  const struct keyref *x = a, *y = b;
  int r = strcmp(x->key, y->key);
  if (r != 0)
    return r;
  return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Drop all but the last occurrence of each key, keeping document order. */
static void dedup_keys(struct jnode *o)
{
  struct keyref *refs;
  bool *drop;
  size_t w = 0;

  if (o->n < 2)
    return;
  refs = xmalloc(o->n * sizeof *refs);
  drop = xmalloc0(o->n * sizeof *drop);
  for (size_t i = 0; i < o->n; i++)
    refs[i] = (struct keyref){o->keys[i], i};
  qsort(refs, o->n, sizeof *refs, keyref_cmp);
  for (size_t i = 0; i + 1 < o->n; i++)
    if (strcmp(refs[i].key, refs[i + 1].key) == 0)
      drop[refs[i].pos] = true;
  for (size_t i = 0; i < o->n; i++) {
    if (drop[i]) {
      free(o->keys[i]);
      jfree(o->items[i]);
      continue;
    }
    o->keys[w] = o->keys[i];
    o->items[w++] = o->items[i];
  }
  o->n = w;
  free(refs);
  free(drop);
}

static int cb_end_map(void *ctx)
{
  struct builder *b = ctx;
  dedup_keys(b->stack[--b->depth]);
  return 1;
}

static int cb_end_array(void *ctx)
{
  struct builder *b = ctx;
  b->depth--;
  return 1;
}

static const yajl_callbacks callbacks = {
    .yajl_null = cb_null,
    .yajl_boolean = cb_bool,
    .yajl_number = cb_number,
    .yajl_string = cb_string,
    .yajl_start_map = cb_start_map,
    .yajl_map_key = cb_map_key,
    .yajl_end_map = cb_end_map,
    .yajl_start_array = cb_start_array,
    .yajl_end_array = cb_end_array,
};

static size_t line_at(const char *text, size_t len, size_t off)
{
  size_t line = 1;
  if (off > len)
    off = len;
  for (size_t i = 0; i < off; i++)
    if (text[i] == '\n')
      line++;
  return line;
}

static const char *fname(const char *file)
{
  return file != NULL ? file : "json";
}

/* Report a yajl error or a cancellation at byte offset off. */
static int parse_error(struct builder *b, const char *text, size_t len, size_t off,
                       const char *file, struct error *err)
{
  size_t line = line_at(text, len, off);
  unsigned char *msg;
  size_t n;

  if (b->why != NULL)
    return error_set(err, 0, "%s: line %zu: %s", fname(file), line, b->why);
  msg = yajl_get_error(b->h, 0, NULL, 0);
  if (msg == NULL)
    return error_set(err, 0, "%s: line %zu: parse error", fname(file), line);
  n = strlen((char *)msg);
  while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == ' ' || msg[n - 1] == '.'))
    msg[--n] = '\0';
  error_set(err, 0, "%s: line %zu: %s", fname(file), line, (char *)msg);
  yajl_free_error(b->h, msg);
  return -1;
}

int jparse(const char *text, size_t len, const char *file, struct jnode **ret, struct error *err)
{
  struct builder b = {0};
  yajl_status st;
  int r = -1;

  if (len > OCI_JSON_MAX_BYTES)
    return error_set(err, 0, "%s: document too large (%zu bytes, limit 16 MiB)", fname(file), len);
  b.h = yajl_alloc(&callbacks, NULL, &b);
  if (b.h == NULL)
    return error_set(err, 0, "%s: cannot allocate a JSON parser", fname(file));
  st = yajl_parse(b.h, (const unsigned char *)text, len);
  if (st != yajl_status_ok) {
    parse_error(&b, text, len, yajl_get_bytes_consumed(b.h), file, err);
    goto out;
  }
  st = yajl_complete_parse(b.h);
  if (st != yajl_status_ok) {
    parse_error(&b, text, len, len, file, err);
    goto out;
  }
  if (b.root == NULL) {
    error_set(err, 0, "%s: line %zu: parse error: premature EOF", fname(file),
              line_at(text, len, len));
    goto out;
  }
  *ret = take_ptr(b.root);
  r = 0;
out:
  yajl_free(b.h);
  jfree(b.root);
  free(b.key);
  return r;
}
