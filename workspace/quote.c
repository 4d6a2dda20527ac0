/* quote.c - file names in text output, quoted as git's core.quotePath does
 * (an agent chooses the names; a newline or an escape sequence in one must
 * not forge or hide a line of the review). */
#include <stdio.h>
#include <string.h>

#include "common/util.h"
#include "workspace/internal.h"
#include "workspace/workspace.h"

static bool needs_quote(unsigned char c)
{
  return c < 0x20 || c >= 0x7f || c == '"' || c == '\\';
}

char *ws_quote_path(const char *path)
{
  static const char esc[] = "\a\b\t\n\v\f\r\"\\";
  static const char name[] = "abtnvfr\"\\";
  const unsigned char *s = (const unsigned char *)(path ? path : "");
  size_t n = 0;
  char *out, *p;

  for (const unsigned char *c = s; *c; c++)
    n += needs_quote(*c);
  if (n == 0)
    return xstrdup((const char *)s);
  out = p = xmalloc(strlen((const char *)s) + 4 * n + 3);
  *p++ = '"';
  for (const unsigned char *c = s; *c; c++) {
    const char *e = needs_quote(*c) ? strchr(esc, *c) : NULL;
    if (!needs_quote(*c)) {
      *p++ = (char)*c;
    } else if (e != NULL && *c != '\0') {
      *p++ = '\\';
      *p++ = name[e - esc];
    } else {
      p += sprintf(p, "\\%03o", *c);
    }
  }
  *p++ = '"';
  *p = '\0';
  return out;
}

/* Bytes of a code point at s that a terminal acts on instead of showing: a C1
 * control (U+0080 to U+009F: 0x9b is CSI), a bidirectional mark, override or
 * isolate (U+061C, U+200E, U+200F, U+202A to U+202E, U+2066 to U+2069: a
 * line shown in another order than it is read), a zero-width character
 * (U+200B to U+200D, U+2060 to U+2064, U+FEFF) or a line or paragraph
 * separator (U+2028, U+2029), or 0.  *cp: the code point. */
static size_t hidden_cp(const unsigned char *s, unsigned *cp)
{
  unsigned c;

  if (s[0] == 0xc2 && s[1] >= 0x80 && s[1] <= 0x9f) {
    *cp = s[1];
    return 2;
  }
  if (s[0] == 0xd8 && s[1] == 0x9c) {
    *cp = 0x061c;
    return 2;
  }
  if ((s[0] & 0xf0) != 0xe0 || (s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80)
    return 0;
  c = (unsigned)(s[0] & 0x0f) << 12 | (unsigned)(s[1] & 0x3f) << 6 | (s[2] & 0x3f);
  if ((c >= 0x200b && c <= 0x200f) || (c >= 0x2028 && c <= 0x202e) ||
      (c >= 0x2060 && c <= 0x2064) || (c >= 0x2066 && c <= 0x2069) || c == 0xfeff) {
    *cp = c;
    return 3;
  }
  return 0;
}

char *ws_quote_text(const char *text)
{
  const unsigned char *s = (const unsigned char *)(text ? text : "");
  size_t n = strlen((const char *)s);
  char *out = xmalloc(8 * n + 1), *p = out;
  unsigned cp;

  for (size_t i = 0; i < n; i++) {
    size_t k = hidden_cp(s + i, &cp);
    if (k > 0) {
      p += sprintf(p, "<U+%04X>", cp);
      i += k - 1;
    } else if ((s[i] < 0x20 && s[i] != '\t' && s[i] != '\n') || s[i] == 0x7f) {
      *p++ = '^';
      *p++ = (char)(s[i] ^ 0x40);
    } else {
      *p++ = (char)s[i];
    }
  }
  *p = '\0';
  return out;
}

/* A bidirectional embedding, override or isolate (U+202A to U+202E, U+2066
 * to U+2069) at p (n bytes left): the terminal shows the rest of the line in
 * another order than it is printed.  The marks (U+200E, U+200F, U+061C) and
 * the zero-width joiners are not: honest right-to-left text and emoji use
 * them, and they reorder nothing but neutral characters. */
static bool bidi_control(const unsigned char *p, size_t n)
{
  if (n < 3 || p[0] != 0xe2)
    return false;
  return (p[1] == 0x80 && p[2] >= 0xaa && p[2] <= 0xae) ||
         (p[1] == 0x81 && p[2] >= 0xa6 && p[2] <= 0xa9);
}

bool ws_term_control(const unsigned char *p, size_t n)
{
  for (size_t i = 0; i < n; i++) {
    unsigned char c = p[i];
    if (c == '\t' || c == '\n' || (c == '\r' && i + 1 < n && p[i + 1] == '\n'))
      continue;
    if (c < 0x20 || c == 0x7f || (c == 0xc2 && i + 1 < n && p[i + 1] >= 0x80 && p[i + 1] <= 0x9f))
      return true;
    if (bidi_control(p + i, n - i))
      return true;
  }
  return false;
}
