/* fuzz_linediff.c - libFuzzer target for the unified diff of
 * `workspace diff --patch` (workspace/linediff.c, ws_unified_diff): the
 * host's file against the agent's, both the agent's choice.
 *
 * The input: a byte choosing the labels' length (the paths, which the
 * agent names: up to 4 KiB), a 2-byte little-endian length, the old text
 * (that long, or the rest), the new text (the rest).
 *
 * Invariants: NULL exactly for a text with a NUL, over WS_DIFF_MAX_BYTES or
 * WS_DIFF_MAX_LINES lines; else the patch starts with the two labels'
 * lines whole, each hunk's counts are its lines', and the patch applied to
 * the old text (as `patch` does, every context and removed line checked)
 * gives the new text.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "tests/fuzz/fuzz_common.h"
#include "workspace/workspace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t lines_of(const char *s, size_t n)
{
  size_t k = 0;

  for (size_t i = 0; i < n; k++) {
    const char *nl = memchr(s + i, '\n', n - i);
    i = nl ? (size_t)(nl - s) + 1 : n;
  }
  return k;
}

/* The line of s (n bytes) starting at *pos, its newline included; *pos
 * past it.  False at the end. */
static bool next_line(const char *s, size_t n, size_t *pos, const char **ret, size_t *ret_n)
{
  const char *nl;

  if (*pos >= n)
    return false;
  nl = memchr(s + *pos, '\n', n - *pos);
  *ret = s + *pos;
  *ret_n = nl ? (size_t)(nl - (s + *pos)) + 1 : n - *pos;
  *pos += *ret_n;
  return true;
}

static size_t number(const char **p)
{
  size_t v = 0;

  if (**p < '0' || **p > '9')
    fuzz_fail("linediff", "a hunk header without a number");
  while (**p >= '0' && **p <= '9')
    v = v * 10 + (size_t)(*(*p)++ - '0');
  return v;
}

/* "start[,count]" */
static void range(const char **p, size_t *start, size_t *count)
{
  *start = number(p);
  *count = 1;
  if (**p == ',') {
    (*p)++;
    *count = number(p);
  }
}

/* Apply the hunks of patch (from *pp) to a; the result must be b. */
static void apply(const char *patch, size_t pn, size_t pos, const char *a, size_t an, const char *b,
                  size_t bn)
{
  char *out = malloc(an + bn + 1);
  size_t on = 0, apos = 0, aline = 0;
  const char *l;
  size_t ln;

  if (out == NULL)
    abort();
  while (next_line(patch, pn, &pos, &l, &ln)) {
    const char *p = l + 4;
    size_t sa, ca, sb, cb, start, seen_a = 0, seen_b = 0;
    if (ln < 4 || memcmp(l, "@@ -", 4) != 0)
      fuzz_fail("linediff", "a line outside a hunk");
    range(&p, &sa, &ca);
    if (strncmp(p, " +", 2) != 0)
      fuzz_fail("linediff", "a hunk header without +");
    p += 2;
    range(&p, &sb, &cb);
    if (strncmp(p, " @@\n", 4) != 0)
      fuzz_fail("linediff", "a hunk header not ended by @@");
    start = ca ? sa - 1 : sa;
    if (start < aline)
      fuzz_fail("linediff", "hunks out of order");
    for (; aline < start; aline++) { /* the lines between hunks, as they are */
      const char *al;
      size_t aln;
      if (!next_line(a, an, &apos, &al, &aln))
        fuzz_fail("linediff", "a hunk past the old text");
      memcpy(out + on, al, aln);
      on += aln;
    }
    while (seen_a < ca || seen_b < cb) {
      const char *hl, *al;
      size_t hln, aln, save = pos, cn;
      bool noeol = false;
      if (!next_line(patch, pn, &pos, &hl, &hln) || hln < 2 || hl[hln - 1] != '\n')
        fuzz_fail("linediff", "a hunk shorter than its counts");
      {
        const char *ml;
        size_t mln;
        save = pos;
        if (next_line(patch, pn, &pos, &ml, &mln) && mln > 0 && ml[0] == '\\') {
          if (mln != 28 || memcmp(ml, "\\ No newline at end of file\n", 28) != 0)
            fuzz_fail("linediff", "a marker line of another text");
          noeol = true;
        } else {
          pos = save;
        }
      }
      cn = hln - 1 - (noeol ? 1 : 0); /* the content and its newline, if it has one */
      if (hl[0] == ' ' || hl[0] == '-') {
        if (!next_line(a, an, &apos, &al, &aln) || aln != cn || memcmp(al, hl + 1, cn) != 0)
          fuzz_fail("linediff", "a context or removed line not the old text's");
        aline++;
        seen_a++;
      }
      if (hl[0] == ' ' || hl[0] == '+') {
        memcpy(out + on, hl + 1, cn);
        on += cn;
        seen_b++;
      }
      if (hl[0] != ' ' && hl[0] != '-' && hl[0] != '+')
        fuzz_fail("linediff", "a hunk line of another kind");
      if (seen_a > ca || seen_b > cb)
        fuzz_fail("linediff", "a hunk longer than its counts");
    }
  }
  for (const char *al; next_line(a, an, &apos, &al, &ln);) {
    memcpy(out + on, al, ln);
    on += ln;
  }
  if (on != bn || memcmp(out, b, bn) != 0)
    fuzz_fail("linediff", "the patch applied does not give the new text");
  free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  const char *s = (const char *)data;
  size_t llen, alen, blen;
  cleanup_free char *la = NULL, *lb = NULL, *patch = NULL, *head = NULL;
  bool refused;

  if (size < 3)
    return 0;
  llen = (size_t)data[0] * 16 + 1; /* 1 .. 4081 bytes */
  alen = (size_t)data[1] | (size_t)data[2] << 8;
  s += 3;
  size -= 3;
  if (alen > size)
    alen = size;
  blen = size - alen;
  la = xmalloc(llen + 3);
  lb = xmalloc(llen + 3);
  memcpy(la, "a/", 2);
  memcpy(lb, "b/", 2);
  memset(la + 2, 'x', llen);
  memset(lb + 2, 'x', llen);
  la[llen + 2] = lb[llen + 2] = '\0';
  {
    char *a = fuzz_copy((const uint8_t *)s, alen), *b = fuzz_copy((const uint8_t *)s + alen, blen);
    patch = ws_unified_diff(a, alen, b, blen, la, lb);
    refused = memchr(a, '\0', alen) != NULL || memchr(b, '\0', blen) != NULL ||
              alen > WS_DIFF_MAX_BYTES || blen > WS_DIFF_MAX_BYTES ||
              lines_of(a, alen) > WS_DIFF_MAX_LINES || lines_of(b, blen) > WS_DIFF_MAX_LINES;
    if ((patch == NULL) != refused)
      fuzz_fail("linediff", patch ? "a patch for a refused text" : "no patch for a text");
    if (patch != NULL) {
      size_t pn = strlen(patch);
      head = xfmt("--- %s\n+++ %s\n", la, lb);
      if (strncmp(patch, head, strlen(head)) != 0)
        fuzz_fail("linediff", "the labels' lines not whole");
      apply(patch, pn, strlen(head), a, alen, b, blen);
    }
    free(a);
    free(b);
  }
  return 0;
}
