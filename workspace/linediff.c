/* linediff.c - a small unified diff for `workspace diff --patch`.
 *
 * Myers' O(ND) algorithm on lines after trimming the common prefix and
 * suffix, keeping each round's frontier for the backtrack.  The number of
 * edit rounds is bounded (WS_DIFF_MAX_EDITS): past it the middle is shown as
 * one replacement, which is still a correct (if not minimal) patch.  Binary
 * or oversized inputs give NULL and the caller says "binary files differ".
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/util.h"
#include "workspace/workspace.h"

#define WS_DIFF_MAX_EDITS 1500
#define CONTEXT 3

struct line {
  const char *p;
  size_t len; /* without the newline */
  uint32_t hash;
  bool noeol; /* the last line of its text, without a newline */
};

struct text {
  struct line *l;
  size_t n;
};

struct op {
  char kind; /* ' ', '-', '+' */
  const struct line *line;
};

struct buf {
  char *s;
  size_t len, cap;
};

static void bputn(struct buf *b, const char *s, size_t n)
{
  if (b->len + n + 1 > b->cap) {
    b->cap = (b->len + n + 1) * 2;
    b->s = xrealloc(b->s, b->cap);
  }
  memcpy(b->s + b->len, s, n);
  b->len += n;
  b->s[b->len] = '\0';
}

static void __attribute__((format(printf, 2, 3))) bprintf(struct buf *b, const char *fmt, ...)
{
  char tmp[512];
  va_list ap;
  int n;

  va_start(ap, fmt);
  n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n > 0)
    bputn(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* A NUL anywhere (not only in the first 8 KiB, as git looks): the patch is
 * printed as a C string, and a NUL after the first 8 KiB cut off the lines
 * after it from the review. */
static bool looks_binary(const char *s, size_t n)
{
  return memchr(s, '\0', n) != NULL;
}

static int split(const char *s, size_t n, struct text *t)
{
  size_t cap = 16;

  t->l = xmalloc(cap * sizeof *t->l);
  t->n = 0;
  for (size_t i = 0; i < n;) {
    const char *nl = memchr(s + i, '\n', n - i);
    size_t len = nl ? (size_t)(nl - (s + i)) : n - i;
    uint32_t h = 2166136261u;

    if (t->n == WS_DIFF_MAX_LINES)
      return -1;
    if (t->n == cap)
      t->l = xrealloc(t->l, (cap *= 2) * sizeof *t->l);
    for (size_t k = 0; k < len; k++)
      h = (h ^ (unsigned char)s[i + k]) * 16777619u;
    t->l[t->n++] = (struct line){s + i, len, h, nl == NULL};
    i += len + 1;
  }
  return 0;
}

static bool line_eq(const struct line *a, const struct line *b)
{
  return a->hash == b->hash && a->len == b->len && a->noeol == b->noeol &&
         memcmp(a->p, b->p, a->len) == 0;
}

static void push(struct op **ops, size_t *n, char kind, const struct line *l)
{
  (*ops)[(*n)++] = (struct op){kind, l};
}

/* Myers on a[0..N) b[0..M); appends ops in reverse order to rev. */
static void myers(const struct line *a, size_t N, const struct line *b, size_t M, struct op **rev,
                  size_t *nrev)
{
  long max = (long)(N + M), dmax = max < WS_DIFF_MAX_EDITS ? max : WS_DIFF_MAX_EDITS, d, x = 0, y;
  long *v = xmalloc0((size_t)(2 * max + 3) * sizeof *v), off = max + 1;
  long **trace = xmalloc0((size_t)(dmax + 1) * sizeof *trace);
  bool done = false;

  for (d = 0; d <= dmax && !done; d++) {
    trace[d] = xmalloc((size_t)(2 * d + 3) * sizeof **trace);
    memcpy(trace[d], v + off - d - 1, (size_t)(2 * d + 3) * sizeof **trace);
    for (long k = -d; k <= d && !done; k += 2) {
      x = (k == -d || (k != d && v[off + k - 1] < v[off + k + 1])) ? v[off + k + 1]
                                                                   : v[off + k - 1] + 1;
      y = x - k;
      while (x < (long)N && y < (long)M && line_eq(&a[x], &b[y]))
        x++, y++;
      v[off + k] = x;
      done = x >= (long)N && y >= (long)M;
    }
  }
  if (!done) { /* too many edits: replace the whole range */
    for (size_t i = M; i > 0; i--)
      push(rev, nrev, '+', &b[i - 1]);
    for (size_t i = N; i > 0; i--)
      push(rev, nrev, '-', &a[i - 1]);
  } else {
    x = (long)N, y = (long)M;
    for (long e = d - 1; e >= 0; e--) {
      long *tv = trace[e] + e + 1; /* tv[k] for k in [-e-1, e+1] */
      long k = x - y, pk, px, py;
      pk = (k == -e || (k != e && tv[k - 1] < tv[k + 1])) ? k + 1 : k - 1;
      px = tv[pk], py = px - pk;
      while (x > px && y > py)
        push(rev, nrev, ' ', &a[--x]), y--;
      if (e > 0) {
        if (x == px)
          push(rev, nrev, '+', &b[--y]);
        else
          push(rev, nrev, '-', &a[--x]);
      }
    }
  }
  for (long i = 0; i < d && i <= dmax; i++)
    free(trace[i]);
  free(trace);
  free(v);
}

/* The whole edit script, forward order. */
static struct op *script(const struct text *a, const struct text *b, size_t *ret_n)
{
  size_t pre = 0, suf = 0, n = 0, nrev = 0;
  struct op *ops = xmalloc((a->n + b->n + 1) * sizeof *ops), *rev;

  while (pre < a->n && pre < b->n && line_eq(&a->l[pre], &b->l[pre]))
    pre++;
  while (suf < a->n - pre && suf < b->n - pre &&
         line_eq(&a->l[a->n - 1 - suf], &b->l[b->n - 1 - suf]))
    suf++;
  rev = xmalloc((a->n + b->n + 1) * sizeof *rev);
  myers(a->l + pre, a->n - pre - suf, b->l + pre, b->n - pre - suf, &rev, &nrev);
  for (size_t i = 0; i < pre; i++)
    push(&ops, &n, ' ', &a->l[i]);
  while (nrev > 0)
    ops[n++] = rev[--nrev];
  for (size_t i = a->n - suf; i < a->n; i++)
    push(&ops, &n, ' ', &a->l[i]);
  free(rev);
  *ret_n = n;
  return ops;
}

static void emit_line(struct buf *out, const struct op *o)
{
  bputn(out, &o->kind, 1);
  bputn(out, o->line->p, o->line->len);
  bputn(out, "\n", 1);
  if (o->line->noeol)
    bputn(out, "\\ No newline at end of file\n", 28);
}

/* "start,count", or just "start" when count is 1 (as GNU diff writes it). */
static void range(struct buf *out, size_t start, size_t count)
{
  if (count == 1)
    bprintf(out, "%zu", start);
  else
    bprintf(out, "%zu,%zu", start, count);
}

static void hunks(struct buf *out, struct op *ops, size_t n)
{
  size_t i = 0, la = 0, lb = 0; /* lines of a / b before ops[i] */

  while (i < n) {
    size_t start, end, last, ca = 0, cb = 0, sa, sb;
    while (i < n && ops[i].kind == ' ')
      i++, la++, lb++;
    if (i == n)
      break;
    start = i >= CONTEXT ? i - CONTEXT : 0;
    sa = la - (i - start), sb = lb - (i - start);
    last = i;
    for (end = i; end < n; end++) {
      if (ops[end].kind != ' ')
        last = end;
      else if (end - last > 2 * CONTEXT)
        break;
    }
    end = last + 1 + CONTEXT < n ? last + 1 + CONTEXT : n;
    for (size_t k = start; k < end; k++) {
      ca += ops[k].kind != '+';
      cb += ops[k].kind != '-';
    }
    bputn(out, "@@ -", 4);
    range(out, ca ? sa + 1 : sa, ca);
    bputn(out, " +", 2);
    range(out, cb ? sb + 1 : sb, cb);
    bputn(out, " @@\n", 4);
    for (size_t k = start; k < end; k++)
      emit_line(out, &ops[k]);
    for (; i < end; i++) {
      la += ops[i].kind != '+';
      lb += ops[i].kind != '-';
    }
  }
}

char *ws_unified_diff(const char *a, size_t alen, const char *b, size_t blen, const char *label_a,
                      const char *label_b)
{
  struct text ta = {0}, tb = {0};
  struct buf out = {0};
  struct op *ops = NULL;
  size_t n = 0;

  if (alen > WS_DIFF_MAX_BYTES || blen > WS_DIFF_MAX_BYTES || looks_binary(a, alen) ||
      looks_binary(b, blen))
    return NULL;
  if (split(a, alen, &ta) < 0 || split(b, blen, &tb) < 0)
    goto out;
  ops = script(&ta, &tb, &n);
  /* the labels are paths of any length: not through bprintf's 512 bytes */
  bputn(&out, "--- ", 4);
  bputn(&out, label_a, strlen(label_a));
  bputn(&out, "\n+++ ", 5);
  bputn(&out, label_b, strlen(label_b));
  bputn(&out, "\n", 1);
  hunks(&out, ops, n);
out:
  free(ops);
  free(ta.l);
  free(tb.l);
  return out.s;
}
