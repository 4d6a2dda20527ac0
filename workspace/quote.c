/* quote.c - file names in text output, quoted as git's core.quotePath does
 * (an agent chooses the names; a newline or an escape sequence in one must
 * not forge or hide a line of the review). */
#include <stdio.h>
#include <string.h>

#include "common/util.h"
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
