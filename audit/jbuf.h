/* jbuf.h - a growable buffer for writing JSON record fields by hand.
 *
 * The audit trail's records are built as text ("k":v members joined by
 * commas) so the hash covers exactly the bytes written.  Strings are escaped
 * for JSON; a byte that is not valid UTF-8 becomes \uDCXX (XX the byte, a lone
 * surrogate that no valid text holds) so a file name or an argv with arbitrary
 * bytes still yields a valid document and is told apart from a name with the
 * character U+00XX. */
#ifndef AGENTRT_AUDIT_JBUF_H
#define AGENTRT_AUDIT_JBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct jbuf {
  char *p;
  size_t len, cap;
};

void jb_free(struct jbuf *b);
/* The text (NUL-terminated, "" when empty); the buffer keeps it. */
const char *jb_str(struct jbuf *b);
char *jb_take(struct jbuf *b);
void jb_raw(struct jbuf *b, const char *s, size_t n);
void jb_puts(struct jbuf *b, const char *s);
void jb_printf(struct jbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A quoted, escaped JSON string (n bytes of s). */
void jb_quote(struct jbuf *b, const char *s, size_t n);
/* In place: the bytes jb_quote wrote as \uDC80..\uDCFF, in the UTF-8 form a
 * JSON parser decodes them to, back to the bytes; the new length. */
size_t jb_bytes_unescape(char *s);
/* s has a byte a terminal would act on: a C0 or C1 control, DEL, or one that
 * is not UTF-8 */
bool jb_has_control(const char *s, size_t n);
/* s for a terminal, unquoted: those bytes as \xNN (and `\` as `\\`) */
void jb_text(struct jbuf *b, const char *s, size_t n);
/* Members: a comma is added before the key unless the buffer is empty or
 * ends with '{' or '['. */
void jb_key(struct jbuf *b, const char *key);
void jb_key_str(struct jbuf *b, const char *key, const char *v); /* NULL -> null */
void jb_key_strn(struct jbuf *b, const char *key, const char *v, size_t n);
void jb_key_i64(struct jbuf *b, const char *key, int64_t v);
void jb_key_u64(struct jbuf *b, const char *key, uint64_t v);
void jb_key_bool(struct jbuf *b, const char *key, bool v);
void jb_key_strv(struct jbuf *b, const char *key, char *const *v, size_t n);
/* key: an already-valid JSON value */
void jb_key_raw(struct jbuf *b, const char *key, const char *json);

#endif
