/* jbuf.c - JSON text building for audit records (see jbuf.h). */
#include "audit/jbuf.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/util.h"

void jb_free(struct jbuf *b)
{
  free(b->p);
  b->p = NULL;
  b->len = b->cap = 0;
}

static void reserve(struct jbuf *b, size_t n)
{
  if (b->len + n + 1 <= b->cap)
    return;
  b->cap = (b->len + n + 1) * 2;
  b->p = xrealloc(b->p, b->cap);
}

const char *jb_str(struct jbuf *b)
{
  reserve(b, 0);
  b->p[b->len] = '\0';
  return b->p;
}

char *jb_take(struct jbuf *b)
{
  char *p;

  jb_str(b);
  p = b->p;
  b->p = NULL;
  b->len = b->cap = 0;
  return p;
}

void jb_raw(struct jbuf *b, const char *s, size_t n)
{
  reserve(b, n);
  memcpy(b->p + b->len, s, n);
  b->len += n;
  b->p[b->len] = '\0';
}

void jb_puts(struct jbuf *b, const char *s)
{
  jb_raw(b, s, strlen(s));
}

void jb_printf(struct jbuf *b, const char *fmt, ...)
{
  va_list ap;
  int n;

  va_start(ap, fmt);
  n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0)
    return;
  reserve(b, (size_t)n);
  va_start(ap, fmt);
  vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 if invalid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
  size_t len;
  uint32_t cp;

  if (s[0] < 0x80)
    return 1;
  if ((s[0] & 0xe0) == 0xc0)
    len = 2, cp = s[0] & 0x1f;
  else if ((s[0] & 0xf0) == 0xe0)
    len = 3, cp = s[0] & 0x0f;
  else if ((s[0] & 0xf8) == 0xf0)
    len = 4, cp = s[0] & 0x07;
  else
    return 0;
  if (len > n)
    return 0;
  for (size_t i = 1; i < len; i++) {
    if ((s[i] & 0xc0) != 0x80)
      return 0;
    cp = cp << 6 | (s[i] & 0x3f);
  }
  /* overlong forms, surrogates, beyond U+10FFFF */
  if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
      (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
    return 0;
  return len;
}

/* the character at p (l bytes, 0: not UTF-8) is a control: C0, DEL, or
 * C1 (U+0080..U+009F, which some terminals take as CSI and the like) */
static bool is_control(const unsigned char *p, size_t l)
{
  return l == 0 || p[0] < 0x20 || p[0] == 0x7f || (l == 2 && p[0] == 0xc2 && p[1] < 0xa0);
}

/* The code point of the character at p (l bytes) if it is one a terminal
 * shows as nothing while it changes the line: a bidirectional mark,
 * embedding, override or isolate (U+061C, U+200E, U+200F, U+202A..U+202E,
 * U+2066..U+2069: "rlo<U+202E>hs.txt" shows as "rlotxt.sh"), a zero-width
 * character (U+200B..U+200D, U+2060..U+2064, U+FEFF) or a line or
 * paragraph separator (U+2028, U+2029); else 0. */
static uint32_t invisible_cp(const unsigned char *p, size_t l)
{
  uint32_t cp;

  if (l == 2 && p[0] == 0xd8 && p[1] == 0x9c)
    return 0x061c;
  if (l != 3)
    return 0;
  cp = (uint32_t)(p[0] & 0x0f) << 12 | (uint32_t)(p[1] & 0x3f) << 6 | (p[2] & 0x3f);
  if ((cp >= 0x200b && cp <= 0x200f) || (cp >= 0x2028 && cp <= 0x202e) ||
      (cp >= 0x2060 && cp <= 0x2064) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0xfeff)
    return cp;
  return 0;
}

bool jb_has_control(const char *s, size_t n)
{
  const unsigned char *p = (const unsigned char *)s;

  for (size_t i = 0, l; i < n; i += l ? l : 1) {
    l = utf8_len(p + i, n - i);
    if (is_control(p + i, l) || invisible_cp(p + i, l) != 0)
      return true;
  }
  return false;
}

void jb_text(struct jbuf *b, const char *s, size_t n)
{
  const unsigned char *p = (const unsigned char *)s;

  for (size_t i = 0, l; i < n; i += l) {
    l = utf8_len(p + i, n - i);
    if (is_control(p + i, l)) {
      l = l ? l : 1;
      for (size_t k = 0; k < l; k++)
        jb_printf(b, "\\x%02x", p[i + k]);
    } else if (invisible_cp(p + i, l) != 0) {
      jb_printf(b, "\\u%04x", (unsigned)invisible_cp(p + i, l));
    } else if (p[i] == '\\') {
      jb_raw(b, "\\\\", 2);
    } else {
      jb_raw(b, s + i, l);
    }
  }
}

void jb_quote(struct jbuf *b, const char *s, size_t n)
{
  const unsigned char *p = (const unsigned char *)s;
  size_t i = 0;

  jb_raw(b, "\"", 1);
  while (i < n) {
    unsigned char c = p[i];
    size_t l = utf8_len(p + i, n - i);

    if (c == '"' || c == '\\') {
      char esc[2] = {'\\', (char)c};
      jb_raw(b, esc, 2);
    } else if (c == '\n') {
      jb_raw(b, "\\n", 2);
    } else if (c == '\t') {
      jb_raw(b, "\\t", 2);
    } else if (l == 0) {
      /* not UTF-8: U+DC80..U+DCFF, a lone surrogate no valid text can
       * hold (\u00XX would read back as the character U+00XX, another
       * name); jb_bytes_unescape makes it the byte again */
      jb_printf(b, "\\u%04x", 0xdc00 | c);
      l = 1;
    } else if (c < 0x20 || c == 0x7f) {
      jb_printf(b, "\\u%04x", c);
    } else if (is_control(p + i, l)) {
      jb_printf(b, "\\u%04x", p[i + 1]); /* C1: U+0080..U+009F */
    } else if (invisible_cp(p + i, l) != 0) {
      /* the same string to a JSON reader, no bidi control on a terminal */
      jb_printf(b, "\\u%04x", (unsigned)invisible_cp(p + i, l));
    } else {
      jb_raw(b, s + i, l);
    }
    i += l ? l : 1;
  }
  jb_raw(b, "\"", 1);
}

size_t jb_bytes_unescape(char *s)
{
  unsigned char *p = (unsigned char *)s;
  size_t i = 0, o = 0;

  for (; p[i] != '\0'; i++) {
    /* U+DC80..U+DCFF as a JSON parser writes it: ED B2|B3 80..BF */
    if (p[i] == 0xed && (p[i + 1] == 0xb2 || p[i + 1] == 0xb3) && (p[i + 2] & 0xc0) == 0x80) {
      p[o++] = (unsigned char)(((p[i + 1] & 0x01) << 6 | (p[i + 2] & 0x3f)) + 0x80);
      i += 2;
    } else {
      p[o++] = p[i];
    }
  }
  p[o] = '\0';
  return o;
}

void jb_key(struct jbuf *b, const char *key)
{
  if (b->len > 0 && b->p[b->len - 1] != '{' && b->p[b->len - 1] != '[')
    jb_raw(b, ",", 1);
  jb_quote(b, key, strlen(key));
  jb_raw(b, ":", 1);
}

void jb_key_str(struct jbuf *b, const char *key, const char *v)
{
  jb_key(b, key);
  if (v == NULL)
    jb_puts(b, "null");
  else
    jb_quote(b, v, strlen(v));
}

void jb_key_strn(struct jbuf *b, const char *key, const char *v, size_t n)
{
  jb_key(b, key);
  jb_quote(b, v, n);
}

void jb_key_i64(struct jbuf *b, const char *key, int64_t v)
{
  jb_key(b, key);
  jb_printf(b, "%" PRId64, v);
}

void jb_key_u64(struct jbuf *b, const char *key, uint64_t v)
{
  jb_key(b, key);
  jb_printf(b, "%" PRIu64, v);
}

void jb_key_bool(struct jbuf *b, const char *key, bool v)
{
  jb_key(b, key);
  jb_puts(b, v ? "true" : "false");
}

void jb_key_strv(struct jbuf *b, const char *key, char *const *v, size_t n)
{
  jb_key(b, key);
  jb_raw(b, "[", 1);
  for (size_t i = 0; i < n && v[i] != NULL; i++) {
    if (i > 0)
      jb_raw(b, ",", 1);
    jb_quote(b, v[i], strlen(v[i]));
  }
  jb_raw(b, "]", 1);
}

void jb_key_raw(struct jbuf *b, const char *key, const char *json)
{
  jb_key(b, key);
  jb_puts(b, json);
}
