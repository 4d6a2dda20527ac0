/* validate.c - cross-field checks of a parsed profile (`agentrt profile check`).
 *
 * Each error names the field: "strict.json: seccomp.deny[3]: unknown syscall
 * mountt".  Runs on the final profile (after the base was laid under it).
 */
#include <seccomp.h>

#include "profile/parse.h"

#include "common/util.h"
#include "common/egress_grammar.h"
#include "os/syscall_late.h"

static int check_abs_list(struct pctx *c, const char *field, char **v)
{
  for (size_t i = 0; v != NULL && v[i] != NULL; i++) {
    if (!profile_path_is_normal_abs(v[i])) {
      cleanup_free char *sub = xfmt("%s[%zu]", field, i);
      return profile_pfail(c, sub, "`%s` is not a normalised absolute path", v[i]);
    }
  }
  return 0;
}

static bool relative_ok(const char *rel)
{
  size_t n = strlen(rel);
  cleanup_free char *abs = NULL;
  cleanup_free char *norm = NULL;

  if (n == 0 || rel[0] == '/')
    return false;
  abs = xfmt("/%.*s", (int)(rel[n - 1] == '/' ? n - 1 : n), rel);
  norm = path_normalize(abs);
  return streq(abs, norm) && !streq(norm, "/");
}

static int check_workspace(struct pctx *c, const struct agent_profile *p)
{
  char **prot = p->workspace.protected;

  if (p->workspace.mode == PROFILE_WS_NONE)
    return 0;
  if (p->workspace.path == NULL || !profile_path_is_normal_abs(p->workspace.path) ||
      streq(p->workspace.path, "/"))
    return profile_pfail(c, "workspace.path", "expected a normalised absolute path other than /");
  if ((p->workspace.mode == PROFILE_WS_AUTO || p->workspace.mode == PROFILE_WS_TMPFS) &&
      p->workspace.size == 0)
    return profile_pfail(c, "workspace.size", "a tmpfs workspace needs a non-zero size");
  for (size_t i = 0; prot != NULL && prot[i] != NULL; i++) {
    if (!relative_ok(prot[i])) {
      cleanup_free char *sub = xfmt("workspace.protected[%zu]", i);
      return profile_pfail(c, sub, "`%s` must be a relative path inside the workspace, without ..",
                           prot[i]);
    }
  }
  return 0;
}

static int check_scratch(struct pctx *c, const struct agent_profile *p)
{
  for (size_t i = 0; i < p->n_scratch; i++) {
    const char *path = p->scratch[i].path;

    if (streq(path, PROFILE_HOME_TOKEN) || (profile_path_is_normal_abs(path) && !streq(path, "/")))
      continue;
    cleanup_free char *sub = xfmt("scratch[%zu].path", i);
    return profile_pfail(c, sub, "`%s` is not an absolute path or \"$HOME\"", path);
  }
  return 0;
}

static int check_seccomp(struct pctx *c, const struct agent_profile *p)
{
  char **deny = p->seccomp.deny;

  for (size_t i = 0; deny != NULL && deny[i] != NULL; i++) {
    cleanup_free char *sub = xfmt("seccomp.deny[%zu]", i);

    if (streq(deny[i], "clone") || streq(deny[i], "clone3"))
      return profile_pfail(c, sub, "%s cannot be denied outright (use denyCloneNamespaces)",
                           deny[i]);
    if (streq(deny[i], "ioctl"))
      return profile_pfail(c, sub, "ioctl cannot be denied outright (use denyTiocsti)");
    if (seccomp_syscall_resolve_name(deny[i]) == __NR_SCMP_ERROR && syscall_late_nr(deny[i]) < 0)
      return profile_pfail(c, sub, "unknown syscall %s", deny[i]);
  }
  return 0;
}

/* env.defaults: NAME=VALUE with a shell-style NAME (not PATH: pathAppend is for that);
 * env.pathAppend: absolute directories or "$HOME/...", without ':'. */
static int check_env(struct pctx *c, const struct agent_profile *p)
{
  char **d = p->env.defaults, **pa = p->env.path_append;

  for (size_t i = 0; d != NULL && d[i] != NULL; i++) {
    const char *eq = strchr(d[i], '=');
    size_t n = eq ? (size_t)(eq - d[i]) : 0;
    bool ok = n > 0 && !(d[i][0] >= '0' && d[i][0] <= '9');
    cleanup_free char *sub = xfmt("env.defaults[%zu]", i);

    for (size_t k = 0; ok && k < n; k++)
      ok = d[i][k] == '_' || (d[i][k] >= 'A' && d[i][k] <= 'Z') ||
           (d[i][k] >= 'a' && d[i][k] <= 'z') || (d[i][k] >= '0' && d[i][k] <= '9');
    if (!ok)
      return profile_pfail(c, sub, "`%s` is not NAME=VALUE", d[i]);
    if (n == 4 && strncmp(d[i], "PATH", 4) == 0)
      return profile_pfail(c, sub, "PATH is extended with env.pathAppend, not set");
  }
  for (size_t i = 0; pa != NULL && pa[i] != NULL; i++) {
    const char *rest = str_has_prefix(pa[i], PROFILE_HOME_TOKEN "/") ? pa[i] + 5 : pa[i];
    cleanup_free char *sub = xfmt("env.pathAppend[%zu]", i);

    if (strchr(pa[i], ':') != NULL || !profile_path_is_normal_abs(rest))
      return profile_pfail(c, sub, "`%s` is not an absolute directory or \"$HOME/...\"", pa[i]);
  }
  return 0;
}

static int check_caps(struct pctx *c, const struct agent_profile *p)
{
  int net_admin = oci_cap_from_name("NET_ADMIN"), net_raw = oci_cap_from_name("NET_RAW");
  uint64_t both = p->caps.ceiling & p->caps.trim;

  if (both != 0)
    return profile_pfail(c, "capabilities.trim", "CAP_%s is also in capabilities.ceiling",
                         profile_cap_name(__builtin_ctzll(both)));
  if (p->egress.def == PROFILE_EGRESS_DENY && net_admin >= 0 &&
      (p->caps.ceiling & (UINT64_C(1) << net_admin)))
    return profile_pfail(c, "capabilities.ceiling",
                         "NET_ADMIN is not allowed while egress.default is deny (the agent could "
                         "rewrite its own egress rules)");
  /* packet-socket: frames below IP pass no table; proxy-mark: CAP_NET_RAW
   * sets SO_MARK (Linux 5.17+), and the TLS proxy's mark skips its redirect */
  if (p->egress.def != PROFILE_EGRESS_OFF && net_raw >= 0 &&
      (p->caps.ceiling & (UINT64_C(1) << net_raw)))
    return profile_pfail(c, "capabilities.ceiling",
                         "NET_RAW is not allowed with an egress policy (packet sockets send "
                         "past its rules, and a socket could take the TLS proxy's mark)");
  return 0;
}

/* The egress and ingress entries and the upstream resolvers, with the
 * parsers `create` uses (netfilter/): `profile check` refuses every entry
 * that `create` would, naming it. */
static int check_egress(struct pctx *c, const struct agent_profile *p)
{
  const struct profile_egress *e = &p->egress;
  struct error err = {0};
  size_t i;

  for (i = 0; e->allow != NULL && e->allow[i] != NULL; i++) {
    struct egress_entry ent;
    cleanup_free char *sub = xfmt("egress.allow[%zu]", i);
    if (i >= EGRESS_MAX_ENTRIES)
      return profile_pfail(c, "egress.allow", "more than %d entries", EGRESS_MAX_ENTRIES);
    if (egress_entry_parse(e->allow[i], &ent, &err) < 0)
      return profile_pfail(c, sub, "%s", err.msg);
  }
  for (i = 0; e->dns_upstream != NULL && e->dns_upstream[i] != NULL; i++) {
    struct egress_upstream u;
    cleanup_free char *sub = xfmt("egress.dns.upstream[%zu]", i);
    if (i >= EGRESS_MAX_UPSTREAM)
      return profile_pfail(c, "egress.dns.upstream", "more than %d resolvers", EGRESS_MAX_UPSTREAM);
    if (egress_upstream_parse(e->dns_upstream[i], &u, &err) < 0)
      return profile_pfail(c, sub, "%s", err.msg);
  }
  {
    uint64_t lo, hi;
    egress_ttl_bounds(e->has_ttl_min, e->ttl_min, e->has_ttl_max, e->ttl_max, &lo, &hi);
    if (lo > 7 * 86400 || hi > 7 * 86400)
      return profile_pfail(c, "egress.dns", "ttlMin and ttlMax are at most 7 days");
    if (hi == 0 || lo > hi)
      return profile_pfail(c, "egress.dns",
                           "ttlMin (%llu s) is above ttlMax (%llu s), or ttlMax is 0",
                           (unsigned long long)lo, (unsigned long long)hi);
  }
  for (i = 0; e->ingress_allow != NULL && e->ingress_allow[i] != NULL; i++) {
    struct egress_port port;
    cleanup_free char *sub = xfmt("ingress.allow[%zu]", i);
    if (i >= EGRESS_MAX_ENTRIES)
      return profile_pfail(c, "ingress.allow", "more than %d entries", EGRESS_MAX_ENTRIES);
    if (egress_port_parse(e->ingress_allow[i], &port, &err) < 0)
      return profile_pfail(c, sub, "%s", err.msg);
  }
  return 0;
}

/* sandbox.home: relative paths, none of them denied (the deny list wins;
 * saying so here is clearer than a path that is silently never bound). */
static int check_sandbox(struct pctx *c, const struct agent_profile *p)
{
  char **home = p->sandbox.home, **deny = p->sandbox.home_deny;
  size_t i;

  for (i = 0; deny != NULL && deny[i] != NULL; i++) {
    cleanup_free char *n = profile_home_normalize(deny[i]);
    if (n == NULL) {
      cleanup_free char *sub = xfmt("sandbox.homeDeny[%zu]", i);
      return profile_pfail(c, sub, "`%s` must be a relative path inside the home, without ..",
                           deny[i]);
    }
  }
  for (i = 0; home != NULL && home[i] != NULL; i++) {
    cleanup_free char *n = profile_home_normalize(home[i]);
    cleanup_free char *sub = xfmt("sandbox.home[%zu]", i);
    const char *why;
    if (i >= 256)
      return profile_pfail(c, "sandbox.home", "more than 256 entries");
    if (n == NULL)
      return profile_pfail(c, sub, "`%s` must be a relative path inside the home, without ..",
                           home[i]);
    if ((why = profile_home_denied(n, deny)) != NULL)
      return profile_pfail(c, sub, "`%s` is on the home's deny list (`%s`): it is never bound",
                           home[i], why);
  }
  return 0;
}

static int check_limit(struct pctx *c, const char *field, const struct profile_limit *l)
{
  if (l->has_default && l->has_max && l->def > l->max)
    return profile_pfail(c, field, "default is above max");
  return 0;
}

int profile_validate_profile(struct pctx *c, const struct agent_profile *p)
{
  if (check_workspace(c, p) < 0 || check_scratch(c, p) < 0 || check_seccomp(c, p) < 0 ||
      check_env(c, p) < 0 || check_caps(c, p) < 0 || check_egress(c, p) < 0 ||
      check_sandbox(c, p) < 0 || profile_validate_secrets(c, p) < 0)
    return -1;
  if (check_abs_list(c, "maskedPaths", p->masked_paths) < 0 ||
      check_abs_list(c, "readonlyPaths", p->readonly_paths) < 0 ||
      check_abs_list(c, "mounts.denySockets", p->mounts.deny_sockets) < 0 ||
      check_abs_list(c, "mounts.writableBinds", p->mounts.writable_binds) < 0)
    return -1;
  if (check_limit(c, "resources.memory", &p->resources.memory) < 0 ||
      check_limit(c, "resources.pids", &p->resources.pids) < 0 ||
      check_limit(c, "resources.cpus", &p->resources.cpus) < 0)
    return -1;
  return 0;
}
