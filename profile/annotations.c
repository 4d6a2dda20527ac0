/* annotations.c - run.agentrt.* annotations: per-container tightening, and
 * loosening only within the profile's annotations.allowLoosen.
 *
 *   run.agentrt.memory=512m            memory limit (above the profile's value:
 *   run.agentrt.pids=256               pids limit    loosening, allowed up to
 *   run.agentrt.cpus=0.5               CPU quota     allowLoosen.memory etc.)
 *   run.agentrt.caps.drop=CHOWN,KILL   drop capabilities (always a tightening)
 *   run.agentrt.readonly-workspace=true
 *   run.agentrt.workspace.mode=tmpfs|overlay|bind   (looser than the profile's
 *                                      mode only if in allowLoosen.workspaceModes)
 *   run.agentrt.workspace.size=256m    workspace size (tmpfs, or the overlay's upper
 *                                      image: then a hard requirement)
 *   run.agentrt.egress.allow=a.org,b.org   only entries matching allowLoosen.egressAllow
 *   run.agentrt.egress.default=deny
 *   run.agentrt.ingress=8080/tcp,9090  inbound ports, only those matching
 *                                      allowLoosen.ingressAllow
 *   run.agentrt.secrets=API_TOKEN,GH   only these of the profile's secrets
 *                                      ("" or "none": none); never a path
 *
 * Comparisons that need the engine's config (is 512m below what the engine
 * asked?) are made by the steps in resources.c and workspace.c; the bounds
 * that need only the profile are checked here.  Unknown keys are refused.
 */
#include <fnmatch.h>

#include "profile/internal.h"

#include "common/util.h"
#include "common/egress_grammar.h"

static int bad(struct error *err, const char *key, const char *value, const char *why)
{
  return error_set(err, 0, "annotation %s=%s: %s", key, value, why);
}

static int parse_bool(const char *s, bool *ret)
{
  if (streq(s, "true") || streq(s, "1")) {
    *ret = true;
    return 0;
  }
  if (streq(s, "false") || streq(s, "0")) {
    *ret = false;
    return 0;
  }
  return -1;
}

static int parse_caps_list(const char *key, const char *value, uint64_t *ret, struct error *err)
{
  cleanup_free char *copy = xstrdup(value);
  char *save = NULL;

  for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    int cap = oci_cap_from_name(tok);

    if (cap < 0 || cap > 63)
      return error_set(err, 0, "annotation %s: unknown capability %s", key, tok);
    *ret |= UINT64_C(1) << cap;
  }
  return 0;
}

static bool egress_entry_allowed(const struct agent_profile *p, const char *entry)
{
  char **pat = p->annotations.loosen.egress_allow;

  if (p->egress.def == PROFILE_EGRESS_ALLOW)
    return true; /* adding to an allow-by-default policy loosens nothing */
  for (size_t i = 0; pat != NULL && pat[i] != NULL; i++)
    if (fnmatch(pat[i], entry, FNM_CASEFOLD) == 0)
      return true;
  return false;
}

static int parse_egress_allow(const struct agent_profile *p, const char *key, const char *value,
                              struct profile_annotations *a, struct error *err)
{
  cleanup_free char *copy = xstrdup(value);
  char *save = NULL;

  if (p->egress.def == PROFILE_EGRESS_OFF)
    return bad(err, key, value, "the profile has no egress policy to add to");
  for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    struct egress_entry e;
    if (egress_entry_parse(tok, &e, err) < 0)
      return error_prefix(err, "annotation %s", key);
    if (!egress_entry_allowed(p, tok))
      return error_set(err, 0,
                       "annotation %s: `%s` loosens the egress policy beyond what the profile "
                       "allows (annotations.allowLoosen.egressAllow)",
                       key, tok);
    if (!strv_contains(a->egress_allow, tok))
      strv_push(&a->egress_allow, tok);
  }
  return 0;
}

static int parse_ingress(const struct agent_profile *p, const char *key, const char *value,
                         struct profile_annotations *a, struct error *err)
{
  cleanup_free char *copy = xstrdup(value);
  char **pat = p->annotations.loosen.ingress_allow;
  char *save = NULL;

  if (p->egress.def == PROFILE_EGRESS_OFF)
    return bad(err, key, value, "the profile has no egress policy (ingress is part of it)");
  for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    bool ok = p->egress.ingress_default_allow;
    struct egress_port e;
    for (size_t i = 0; !ok && pat != NULL && pat[i] != NULL; i++)
      ok = fnmatch(pat[i], tok, 0) == 0;
    if (egress_port_parse(tok, &e, err) < 0)
      return error_prefix(err, "annotation %s", key);
    if (!ok)
      return error_set(err, 0,
                       "annotation %s: `%s` opens an inbound port the profile does not allow "
                       "(annotations.allowLoosen.ingressAllow)",
                       key, tok);
    if (!strv_contains(a->ingress_allow, tok))
      strv_push(&a->ingress_allow, tok);
  }
  return 0;
}

/* Select among the profile's secrets: a name it does not offer is refused
 * (an annotation cannot name a file or a host). */
static int parse_secrets(const struct agent_profile *p, const char *key, const char *value,
                         struct profile_annotations *a, struct error *err)
{
  cleanup_free char *copy = xstrdup(value);
  char *save = NULL;

  a->has_secrets = true;
  if (a->secrets == NULL)
    a->secrets = xmalloc0(sizeof(char *));
  if (streq(value, "none"))
    return 0;
  for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    if (profile_secret_find(p, tok) == NULL)
      return error_set(err, 0, "annotation %s: the profile has no secret `%s`", key, tok);
    if (!strv_contains(a->secrets, tok))
      strv_push(&a->secrets, tok);
  }
  return 0;
}

static int parse_one(const struct agent_profile *p, const char *key, const char *value,
                     struct profile_annotations *a, struct error *err)
{
  const char *k = key + strlen(PROFILE_ANNOTATION_PREFIX);
  const struct profile_loosen *lo = &p->annotations.loosen;
  int m;

  if (streq(k, "memory")) {
    if (profile_parse_size(value, &a->memory) < 0 || a->memory == 0)
      return bad(err, key, value, "expected a size such as 512m");
    a->has_memory = true;
    return 0;
  }
  if (streq(k, "pids")) {
    if (parse_u64(value, &a->pids) < 0 || a->pids == 0)
      return bad(err, key, value, "expected a positive integer");
    a->has_pids = true;
    return 0;
  }
  if (streq(k, "cpus")) {
    if (profile_parse_cpus(value, &a->cpus) < 0)
      return bad(err, key, value, "expected a CPU count such as 1.5");
    a->has_cpus = true;
    return 0;
  }
  if (streq(k, "caps.drop"))
    return parse_caps_list(key, value, &a->caps_drop, err);
  if (streq(k, "readonly-workspace")) {
    if (parse_bool(value, &a->readonly_ws) < 0)
      return bad(err, key, value, "expected true or false");
    return 0;
  }
  if (streq(k, "workspace.mode")) {
    m = profile_ws_mode_from_name(value);
    if (m != PROFILE_WS_TMPFS && m != PROFILE_WS_OVERLAY && m != PROFILE_WS_BIND)
      return bad(err, key, value, "expected tmpfs, overlay or bind");
    a->ws_mode = (enum profile_ws_mode)m;
    a->has_ws_mode = true;
    return 0;
  }
  if (streq(k, "workspace.size")) {
    if (profile_parse_size(value, &a->ws_size) < 0 || a->ws_size == 0)
      return bad(err, key, value, "expected a size such as 256m");
    if (a->ws_size > p->workspace.size &&
        (!lo->has_workspace_size || a->ws_size > lo->workspace_size))
      return bad(err, key, value, "above what the profile allows (annotations.allowLoosen)");
    a->has_ws_size = true;
    return 0;
  }
  if (streq(k, "egress.allow"))
    return parse_egress_allow(p, key, value, a, err);
  if (streq(k, "ingress"))
    return parse_ingress(p, key, value, a, err);
  if (streq(k, "secrets"))
    return parse_secrets(p, key, value, a, err);
  if (streq(k, "egress.default")) {
    if (streq(value, "deny") && p->egress.def != PROFILE_EGRESS_OFF) {
      a->egress_deny = true;
      return 0;
    }
    return bad(err, key, value, "only \"deny\" is accepted, and only with an egress policy");
  }
  return error_set(err, 0, "annotation %s: unknown run.agentrt annotation", key);
}

int profile_annotations_parse(const struct oci_config *c, const struct agent_profile *p,
                              struct profile_annotations *ret, struct error *err)
{
  memset(ret, 0, sizeof *ret);
  if (!p->annotations.apply)
    return 0;
  for (size_t i = 0; i < c->n_annotations; i++) {
    const char *key = c->annotations[i].key;
    const char *value = c->annotations[i].value ? c->annotations[i].value : "";

    if (key == NULL || !str_has_prefix(key, PROFILE_ANNOTATION_PREFIX))
      continue;
    if (parse_one(p, key, value, ret, err) < 0) {
      profile_annotations_clear(ret);
      return -1;
    }
  }
  return 0;
}

void profile_annotations_clear(struct profile_annotations *a)
{
  strv_free(a->egress_allow);
  strv_free(a->ingress_allow);
  strv_free(a->secrets);
  memset(a, 0, sizeof *a);
}
