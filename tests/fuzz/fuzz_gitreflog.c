/* fuzz_gitreflog.c - libFuzzer target for the reflog reader of the workspace
 * review (workspace/gitrefs.c, ws_git_reflog_new_ids): which entries of the
 * agent's reflog are not the host's, and the ids they name.
 *
 * The input: a 2-byte little-endian length, the host's reflog text (that
 * long, or the rest), the agent's (the rest).
 *
 * Invariants: no crash and no read outside the texts; a text checked against
 * itself names nothing; the ids named are sorted, each once, none all-zero,
 * each written in the agent's text; against the host's text they are a
 * subset of those against none (a host's line only takes entries away); a
 * lower limit refuses (-E2BIG) or names the same ids.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workspace/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what)
{
  fprintf(stderr, "fuzz invariant violated: %s\n", what);
  abort();
}

/* Are ids (n) sorted, each once, none all-zero, each in text as hex? */
static void check_ids(const struct ws_oid *ids, size_t n, const char *text, size_t len)
{
  for (size_t i = 0; i < n; i++) {
    char hex[65];
    bool zero = true;
    if (ids[i].hlen != 20 && ids[i].hlen != 32)
      fail("an id of another length");
    for (size_t b = 0; b < ids[i].hlen; b++) {
      snprintf(hex + 2 * b, 3, "%02x", ids[i].b[b]);
      zero = zero && ids[i].b[b] == 0;
    }
    if (zero)
      fail("an all-zero id");
    if (memmem(text, len, hex, 2 * ids[i].hlen) == NULL)
      fail("an id the text does not hold");
    if (i > 0 &&
        (ids[i].hlen < ids[i - 1].hlen ||
         (ids[i].hlen == ids[i - 1].hlen && memcmp(ids[i - 1].b, ids[i].b, ids[i].hlen) >= 0)))
      fail("ids not sorted or not each once");
  }
}

static bool has_id(const struct ws_oid *ids, size_t n, const struct ws_oid *id)
{
  for (size_t i = 0; i < n; i++)
    if (ids[i].hlen == id->hlen && memcmp(ids[i].b, id->b, id->hlen) == 0)
      return true;
  return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  size_t hn, n, nh = 0, nn = 0, ns = 0, ne = 0;
  const char *host, *text;
  struct ws_oid *with = NULL, *none = NULL, *small = NULL, *self = NULL;
  int kh, kn, ks;

  if (size < 2)
    return 0;
  hn = (size_t)data[0] | (size_t)data[1] << 8;
  if (hn > size - 2)
    hn = size - 2;
  host = (const char *)data + 2;
  text = host + hn;
  n = size - 2 - hn;
  kh = ws_git_reflog_new_ids(text, n, host, hn, 100000, &with, &nh);
  kn = ws_git_reflog_new_ids(text, n, NULL, 0, 100000, &none, &nn);
  ks = ws_git_reflog_new_ids(text, n, host, hn, 2, &small, &ns);
  if (ws_git_reflog_new_ids(text, n, text, n, 0, &self, &ne) != 0 || ne != 0)
    fail("a text against itself names something");
  if ((kh != 0 && kh != -EBADMSG && kh != -E2BIG) || (kn != 0 && kn != -EBADMSG))
    fail("another error");
  if ((kh != 0 && (with || nh)) || (kn != 0 && (none || nn)))
    fail("ids with an error");
  check_ids(with, nh, text, n);
  check_ids(none, nn, text, n);
  if (kn == 0 && kh != 0)
    fail("the host's text made an error");
  for (size_t i = 0; kh == 0 && kn == 0 && i < nh; i++)
    if (!has_id(none, nn, &with[i]))
      fail("the host's text added an id");
  if (ks != -E2BIG && (ks != kh || ns != nh || (ns && memcmp(small, with, ns * sizeof *small))))
    fail("a lower limit changed the ids");
  free(with);
  free(none);
  free(small);
  free(self);
  return 0;
}
