/* fuzz_subreq.c - libFuzzer target for the sub-agent API's reading of a
 * `run` request (monitor/subreq.c), what the monitor applies to every
 * request a container sends on /run/agentrt/agent.sock.
 *
 * The input: one byte that shapes the parent (read-only workspace, no
 * workspace, an egress policy or none, which of its memory, pids and CPU
 * limits it has), then the request's body as it comes in the 'Q' frame
 * (NUL-ended words, common/subproto.h), split as the monitor splits it.
 * The workspace check of the parent's view is a stand-in: a directory
 * named "refused" is refused.
 *
 * Invariants, beyond no crash and no leak: what is accepted is inside the
 * documented limits (docs/subagents.md): a name of letters, digits, '-'
 * and '_' (not first) of at most 64, with the child's id at most 128; the
 * workspace the parent's or a normalized path below it, and not one the
 * check refuses; each --allow an entry covered by one of the parent's
 * (any when it has no policy); memory, pids and CPUs above zero and at most
 * the parent's; secrets among the parent's, each once; a command after the
 * options; nothing accepted from a read-only workspace.  A refusal says
 * why.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/egress_grammar.h"
#include "common/subproto.h"
#include "common/util.h"
#include "monitor/subreq.h"
#include "tests/fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *check_ws(const struct subagent_parent *p, const char *ws, const char *abs)
{
  const char *last = strrchr(abs, '/');

  (void)p;
  (void)ws;
  return last && streq(last + 1, "refused") ? xstrdup("refused by the view") : NULL;
}

static bool name_ok(const char *s)
{
  size_t n = strlen(s);

  if (n == 0 || n > 64)
    return false;
  for (size_t i = 0; i < n; i++)
    if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
          (s[i] >= '0' && s[i] <= '9') || (i > 0 && (s[i] == '-' || s[i] == '_'))))
      return false;
  return true;
}

static bool normalized_below(const char *abs, const char *ws)
{
  size_t wl = strlen(ws), n = strlen(abs);

  if (!streq(abs, ws) && !(strncmp(abs, ws, wl) == 0 && abs[wl] == '/'))
    return false;
  if (abs[0] != '/' || strstr(abs, "//") || strstr(abs, "/./") || strstr(abs, "/../") ||
      (n > 1 && abs[n - 1] == '/') || (n >= 2 && streq(abs + n - 2, "/.")) ||
      (n >= 3 && streq(abs + n - 3, "/..")))
    return false;
  return true;
}

static void check(const struct subagent_parent *p, const struct oci_resources *pr, char **w,
                  const struct subreq_run *r, char **allow)
{
  const char *ws = p->profile->workspace.path;
  bool cmd_in = false;

  if (p->profile->workspace.readonly)
    fuzz_fail("subreq", "a child of a read-only workspace");
  for (size_t i = 1; w[i]; i++)
    cmd_in = cmd_in || r->cmd == w + i;
  if (!cmd_in || r->cmd[0] == NULL)
    fuzz_fail("subreq", "no command, or one that is not among the words");
  /* the options, each with its value but --detach, -d and "--" (a value
   * may be any word: "--workspace --privileged" names a directory) */
  for (char **o = w + 1; o < r->cmd; o++) {
    if (streq(*o, "--cap-add") || streq(*o, "--privileged"))
      fuzz_fail("subreq", "a capability option taken");
    if (!streq(*o, "--detach") && !streq(*o, "-d") && !streq(*o, "--"))
      o++;
  }
  if (r->name && (!name_ok(r->name) || strlen(p->id) + 1 + strlen(r->name) > 128))
    fuzz_fail("subreq", "a name outside the limits");
  if (ws == NULL || r->workspace == NULL || !normalized_below(r->workspace, ws))
    fuzz_fail("subreq", "a workspace that is not the parent's or a normalized path below it");
  {
    const char *last = strrchr(r->workspace, '/');
    if (streq(last + 1, "refused"))
      fuzz_fail("subreq", "a workspace the view refuses");
  }
  if (r->allow != allow)
    fuzz_fail("subreq", "r->allow is not the allow list");
  for (size_t i = 0; allow && allow[i]; i++) {
    struct egress_entry e;
    struct error err = {0};
    if (i >= SUBPROTO_MAX_WORDS || egress_entry_parse(allow[i], &e, &err) < 0)
      fuzz_fail("subreq", "an --allow entry that does not parse");
    if (p->profile->egress.def != PROFILE_EGRESS_OFF &&
        !subproto_allow_covered(allow[i], p->profile->egress.allow))
      fuzz_fail("subreq", "an --allow entry the parent's allowlist does not cover");
  }
  if (r->has_memory && (r->memory == 0 || r->memory > INT64_MAX ||
                        (pr->has_memory_limit && r->memory > (uint64_t)pr->memory_limit)))
    fuzz_fail("subreq", "a memory limit outside the parent's");
  if (r->has_pids && (r->pids == 0 || r->pids > INT64_MAX ||
                      (pr->has_pids_limit && r->pids > (uint64_t)pr->pids_limit)))
    fuzz_fail("subreq", "a pids limit outside the parent's");
  if (r->has_cpus && (r->cpus_milli == 0 ||
                      (pr->has_cpu_quota && (unsigned __int128)r->cpus_milli * pr->cpu_period >
                                                (unsigned __int128)pr->cpu_quota * 1000)))
    fuzz_fail("subreq", "CPUs outside the parent's");
  for (size_t i = 0; r->secrets && r->secrets[i]; i++) {
    bool have = false;
    for (size_t k = 0; k < p->profile->n_secrets; k++)
      have = have || streq(p->profile->secrets[k].name, r->secrets[i]);
    if (!have)
      fuzz_fail("subreq", "a secret the parent does not have");
    for (size_t k = 0; k < i; k++)
      if (streq(r->secrets[k], r->secrets[i]))
        fuzz_fail("subreq", "a secret given twice");
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static char *parent_allow[] = {"api.example.test", "*.pkg.test:443",      "192.0.2.0/24",
                                 "2001:db8::/32",    "udp:198.51.100.7:53", NULL};
  static struct profile_secret secrets[] = {{.name = "API_TOKEN"}, {.name = "GH_TOKEN"}};
  struct profile_result prof = {0};
  struct oci_resources res = {0};
  struct oci_linux lin = {0};
  struct oci_config cfg = {0};
  struct subagent_parent p = {.id = "h-parent", .config = &cfg, .profile = &prof};
  struct subreq_run r = {0};
  char **w = NULL, **allow = NULL, *why = NULL;
  uint8_t shape;

  if (size == 0)
    return 0;
  shape = data[0];
  prof.workspace.path = (shape & 1) ? NULL : "/work/space";
  prof.workspace.readonly = (shape & 2) != 0;
  prof.egress.def = (shape & 4) ? PROFILE_EGRESS_OFF : PROFILE_EGRESS_DENY;
  prof.egress.allow = parent_allow;
  prof.secrets = secrets;
  prof.n_secrets = 2;
  res.has_memory_limit = (shape & 8) != 0;
  res.memory_limit = 1 << 30;
  res.has_pids_limit = (shape & 16) != 0;
  res.pids_limit = 100;
  res.has_cpu_quota = res.has_cpu_period = (shape & 32) != 0;
  res.cpu_quota = 150000;
  res.cpu_period = 100000;
  lin.resources = &res;
  cfg.linux = (shape & 64) ? NULL : &lin;
  if (subproto_split_words((const char *)data + 1, size - 1, &w) < 0)
    return 0;
  if (subreq_parse_run(&p, w, check_ws, &r, &allow, &why) == 0) {
    if (cfg.linux == NULL)
      res = (struct oci_resources){0};
    check(&p, &res, w, &r, allow);
  } else if (why == NULL) {
    fuzz_fail("subreq", "refused without a reason");
  }
  free(why);
  free(r.workspace);
  strv_free(r.secrets);
  strv_free(allow);
  strv_free(w);
  return 0;
}
