/* subreq.c - see subreq.h */
#include "monitor/subreq.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/egress_grammar.h"
#include "common/subproto.h"
#include "common/util.h"

static int refuse(char **ret_why, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int refuse(char **ret_why, const char *fmt, ...)
{
  va_list ap;

  va_start(ap, fmt);
  if (vasprintf(ret_why, fmt, ap) < 0)
    *ret_why = NULL;
  va_end(ap);
  if (*ret_why == NULL)
    *ret_why = xstrdup("refused");
  return -1;
}

bool subreq_valid_name(const char *s)
{
  size_t n = strlen(s);

  if (n == 0 || n > SUBREQ_NAME_MAX)
    return false;
  for (size_t i = 0; i < n; i++) {
    char ch = s[i];
    if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
          (i > 0 && (ch == '-' || ch == '_'))))
      return false;
  }
  return true;
}

int subreq_parse_run(const struct subagent_parent *p, char **words, subreq_ws_check *ws_check,
                     struct subreq_run *r, char ***allow, char **ret_why)
{
  char **w = words;
  const struct oci_resources *pr = p->config->linux ? p->config->linux->resources : NULL;
  const char *ws = p->profile->workspace.path;
  size_t i = 1;

  for (; w[i] != NULL; i++) {
    const char *o = w[i], *v = w[i + 1];
    if (streq(o, "--")) {
      i++;
      break;
    }
    if (o[0] != '-')
      break;
    if (streq(o, "--detach") || streq(o, "-d")) {
      r->detach = true;
      continue;
    }
    if (v == NULL)
      return refuse(ret_why, "%s: expected a value", o);
    i++;
    if (streq(o, "--name")) {
      if (!subreq_valid_name(v))
        return refuse(ret_why, "--name `%s`: letters, digits, `-` and `_`, at most %d", v,
                      SUBREQ_NAME_MAX);
      if (strlen(p->id) + 1 + strlen(v) > SUBREQ_ID_MAX)
        return refuse(ret_why, "--name `%s`: the child's id `%s.%s` would be longer than %d", v,
                      p->id, v, SUBREQ_ID_MAX);
      r->name = v;
    } else if (streq(o, "--workspace")) {
      cleanup_free char *abs = v[0] == '/' ? path_normalize(v) : NULL;
      if (abs == NULL) {
        cleanup_free char *j = xfmt("%s/%s", ws ? ws : "", v);
        abs = path_normalize(j);
      }
      if (ws == NULL || !(streq(abs, ws) || (str_has_prefix(abs, ws) && abs[strlen(ws)] == '/')))
        return refuse(ret_why, "--workspace `%s`: not in the parent's workspace %s", v,
                      ws ? ws : "(none)");
      {
        cleanup_free char *why = ws_check(p, ws, abs);
        if (why != NULL)
          return refuse(ret_why, "--workspace `%s`: %s", v, why);
      }
      /* the last one counts; the one before is freed (subreq-repeat-leak: each
       * repeat was lost, up to 127 paths of up to 64 KiB in one request) */
      free(r->workspace);
      r->workspace = xstrdup(abs);
    } else if (streq(o, "--allow")) {
      struct error e = {0};
      struct egress_entry en;
      if (egress_entry_parse(v, &en, &e) < 0)
        return refuse(ret_why, "--allow `%s`: %s", v, e.msg);
      if (p->profile->egress.def != PROFILE_EGRESS_OFF &&
          !subproto_allow_covered(v, p->profile->egress.allow))
        return refuse(ret_why, "--allow `%s`: widens the parent's egress allowlist (egress.allow)",
                      v);
      strv_push(allow, v);
    } else if (streq(o, "--memory")) {
      if (profile_parse_size(v, &r->memory) < 0 || r->memory == 0 || r->memory > INT64_MAX)
        return refuse(ret_why, "--memory `%s`: not a size", v);
      if (pr && pr->has_memory_limit && pr->memory_limit > 0 &&
          r->memory > (uint64_t)pr->memory_limit)
        return refuse(ret_why, "--memory `%s`: above the parent's memory limit (%lld bytes)", v,
                      (long long)pr->memory_limit);
      r->has_memory = true;
    } else if (streq(o, "--pids")) {
      if (parse_u64(v, &r->pids) < 0 || r->pids == 0 || r->pids > INT64_MAX)
        return refuse(ret_why, "--pids `%s`: not a positive number", v);
      if (pr && pr->has_pids_limit && pr->pids_limit > 0 && r->pids > (uint64_t)pr->pids_limit)
        return refuse(ret_why, "--pids `%s`: above the parent's pids limit (%lld)", v,
                      (long long)pr->pids_limit);
      r->has_pids = true;
    } else if (streq(o, "--cpus")) {
      if (profile_parse_cpus(v, &r->cpus_milli) < 0 || r->cpus_milli == 0 ||
          r->cpus_milli > INT64_MAX / 100)
        return refuse(ret_why, "--cpus `%s`: not a number of CPUs", v);
      /* in 128 bits: a product that wraps around in 64 must not pass */
      if (pr && pr->has_cpu_quota && pr->cpu_quota > 0 && pr->has_cpu_period &&
          pr->cpu_period > 0 &&
          (unsigned __int128)r->cpus_milli * pr->cpu_period >
              (unsigned __int128)pr->cpu_quota * 1000)
        return refuse(ret_why, "--cpus `%s`: above the parent's cpu limit (%.3g)", v,
                      (double)pr->cpu_quota / (double)pr->cpu_period);
      r->has_cpus = true;
    } else if (streq(o, "--secret")) {
      bool have = false;
      for (size_t k = 0; k < p->profile->n_secrets; k++)
        have = have || streq(p->profile->secrets[k].name, v);
      if (!have)
        return refuse(ret_why, "--secret `%s`: the parent has no secret `%s`", v, v);
      if (!strv_contains(r->secrets, v))
        strv_push(&r->secrets, v);
    } else if (streq(o, "--cap-add") || streq(o, "--privileged")) {
      return refuse(ret_why, "%s: widens the parent's capabilities", o);
    } else {
      return refuse(ret_why, "unknown option `%s`", o);
    }
  }
  if (w[i] == NULL)
    return refuse(ret_why, "expected a command (agentrt sub run [OPTIONS] -- CMD...)");
  /* a read-only bind, no overlay: no record to layer a child's on (its
   * create failed later, naming a workspace that does not exist, and its
   * name stayed taken); and nothing of a child's may be committed there */
  if (p->profile->workspace.readonly)
    return refuse(ret_why, "the parent's workspace %s is read-only: a child has none to write",
                  ws ? ws : "");
  r->cmd = w + i;
  r->allow = *allow;
  if (r->workspace == NULL) {
    if (ws == NULL)
      return refuse(ret_why, "the parent has no workspace to give a child");
    r->workspace = xstrdup(ws);
  }
  return 0;
}
