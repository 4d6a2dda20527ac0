/* sections.c - the profile document's fields, as tables for profile_walk_object().
 *
 * Every field a profile may set is listed here; the meaning of each is in
 * profile.h (struct agent_profile) and the `agent` profile in builtin.c.
 */
#include <stddef.h>

#include "profile/parse.h"

#include "common/util.h"

#define OFF(member) offsetof(struct agent_profile, member)
#define F(name, type, member)                                                                      \
  {                                                                                                \
    name, type, OFF(member), 0, NULL, NULL                                                         \
  }
#define FH(name, type, member, has)                                                                \
  {                                                                                                \
    name, type, OFF(member), OFF(has), NULL, NULL                                                  \
  }
#define FOBJ(name, sub)                                                                            \
  {                                                                                                \
    name, P_OBJECT, 0, 0, sub, NULL                                                                \
  }
#define FFN(name, fn)                                                                              \
  {                                                                                                \
    name, P_FN, 0, 0, NULL, fn                                                                     \
  }
#define FEND                                                                                       \
  {                                                                                                \
    NULL, P_SKIP, 0, 0, NULL, NULL                                                                 \
  }

static int ws_mode(struct pctx *c, const char *path, yajl_val v, struct agent_profile *p)
{
  int m = YAJL_IS_STRING(v) ? profile_ws_mode_from_name(YAJL_GET_STRING(v)) : -1;

  if (m < 0)
    return profile_pfail(c, path,
                         "expected \"auto\", \"tmpfs\", \"overlay\", \"bind\" or \"none\"");
  p->workspace.mode = (enum profile_ws_mode)m;
  return 0;
}

static int ws_modes(struct pctx *c, const char *path, yajl_val v, struct agent_profile *p)
{
  unsigned mask = 0;

  if (!YAJL_IS_ARRAY(v))
    return profile_pfail(c, path, "expected an array of workspace modes");
  for (size_t i = 0; i < v->u.array.len; i++) {
    yajl_val e = v->u.array.values[i];
    int m = YAJL_IS_STRING(e) ? profile_ws_mode_from_name(YAJL_GET_STRING(e)) : -1;

    if (m != PROFILE_WS_TMPFS && m != PROFILE_WS_OVERLAY && m != PROFILE_WS_BIND) {
      cleanup_free char *sub = xfmt("%s[%zu]", path, i);
      return profile_pfail(c, sub, "expected \"tmpfs\", \"overlay\" or \"bind\"");
    }
    mask |= 1u << m;
  }
  p->annotations.loosen.workspace_modes = mask;
  return 0;
}

static int octal_mode(struct pctx *c, const char *path, yajl_val v, uint32_t *ret)
{
  const char *s = YAJL_IS_STRING(v) ? YAJL_GET_STRING(v) : "";
  char *end = NULL;
  unsigned long m;

  m = strtoul(s, &end, 8);
  if (s[0] < '0' || s[0] > '7' || *end != '\0' || m > 07777)
    return profile_pfail(c, path, "expected an octal mode string such as \"1777\"");
  *ret = (uint32_t)m;
  return 0;
}

/* One scratch entry: {"path", "size", "mode", "noexec"}. */
static int scratch_entry(struct pctx *c, const char *path, yajl_val v, struct profile_scratch *s)
{
  static const char *const keys[] = {"path", "size", "mode", "noexec"};

  if (!YAJL_IS_OBJECT(v))
    return profile_pfail(c, path, "expected an object");
  s->mode = 01777;
  for (size_t i = 0; i < v->u.object.len; i++) {
    const char *k = v->u.object.keys[i];
    yajl_val m = v->u.object.values[i];
    cleanup_free char *sub = profile_path_join(path, k);
    int r = 0;

    if (streq(k, keys[0]))
      r = profile_get_string(c, sub, m, &s->path);
    else if (streq(k, keys[1]))
      r = profile_get_size(c, sub, m, &s->size);
    else if (streq(k, keys[2]))
      r = octal_mode(c, sub, m, &s->mode);
    else if (streq(k, keys[3]))
      r = profile_get_bool(c, sub, m, &s->noexec);
    else
      r = profile_pfail(c, sub, "unknown field");
    if (r < 0)
      return -1;
  }
  if (s->path == NULL || s->size == 0)
    return profile_pfail(c, path, "needs \"path\" and a non-zero \"size\"");
  return 0;
}

static int scratch(struct pctx *c, const char *path, yajl_val v, struct agent_profile *p)
{
  struct profile_scratch *list;
  size_t n;

  if (!YAJL_IS_ARRAY(v))
    return profile_pfail(c, path, "expected an array of {\"path\", \"size\"} objects");
  n = v->u.array.len;
  list = xmalloc0((n ? n : 1) * sizeof *list);
  for (size_t i = 0; i < n; i++) {
    cleanup_free char *sub = xfmt("%s[%zu]", path, i);

    if (scratch_entry(c, sub, v->u.array.values[i], &list[i]) < 0) {
      for (size_t j = 0; j <= i; j++)
        free(list[j].path);
      free(list);
      return -1;
    }
  }
  for (size_t i = 0; i < p->n_scratch; i++)
    free(p->scratch[i].path);
  free(p->scratch);
  p->scratch = list;
  p->n_scratch = n;
  return 0;
}

static int seccomp_errno(struct pctx *c, const char *path, yajl_val v, struct agent_profile *p)
{
  if (!YAJL_IS_INTEGER(v) || YAJL_GET_INTEGER(v) < 1 || YAJL_GET_INTEGER(v) > 4095)
    return profile_pfail(c, path, "expected an errno number between 1 and 4095");
  p->seccomp.errno_ret = (uint32_t)YAJL_GET_INTEGER(v);
  return 0;
}

static int egress_default(struct pctx *c, const char *path, yajl_val v, struct agent_profile *p)
{
  const char *s = YAJL_IS_STRING(v) ? YAJL_GET_STRING(v) : "";

  if (streq(s, "deny"))
    p->egress.def = PROFILE_EGRESS_DENY;
  else if (streq(s, "allow"))
    p->egress.def = PROFILE_EGRESS_ALLOW;
  else if (streq(s, "off"))
    p->egress.def = PROFILE_EGRESS_OFF;
  else
    return profile_pfail(c, path, "expected \"deny\", \"allow\" or \"off\"");
  return 0;
}

static int ingress_default(struct pctx *c, const char *path, yajl_val v, struct agent_profile *p)
{
  const char *s = YAJL_IS_STRING(v) ? YAJL_GET_STRING(v) : "";

  if (!streq(s, "deny") && !streq(s, "allow"))
    return profile_pfail(c, path, "expected \"deny\" or \"allow\"");
  p->egress.ingress_default_allow = streq(s, "allow");
  return 0;
}

static const struct pfield rootfs_fields[] = {F("readonly", P_BOOL, rootfs_readonly), FEND};

static const struct pfield retention_fields[] = {
    F("maxSize", P_SIZE, workspace.retention.max_size),
    F("maxAge", P_DURATION, workspace.retention.max_age),
    FEND,
};

static const struct pfield workspace_fields[] = {
    F("path", P_STR, workspace.path),
    FFN("mode", ws_mode),
    F("size", P_SIZE, workspace.size),
    F("protected", P_STRV, workspace.protected),
    FOBJ("retention", retention_fields),
    F("volatile", P_BOOL, workspace.volatile_upper),
    FEND,
};

static const struct pfield caps_fields[] = {
    F("enforce", P_BOOL, caps.enforce),
    F("ceiling", P_CAPS, caps.ceiling),
    F("trim", P_CAPS, caps.trim),
    FEND,
};

static const struct pfield seccomp_fields[] = {
    F("enabled", P_BOOL, seccomp.enabled),
    FFN("errno", seccomp_errno),
    F("deny", P_STRV, seccomp.deny),
    F("denyCloneNamespaces", P_BOOL, seccomp.deny_clone_namespaces),
    F("denyTiocsti", P_BOOL, seccomp.deny_tiocsti),
    F("denyVsock", P_BOOL, seccomp.deny_vsock),
    F("denyRecvErr", P_BOOL, seccomp.deny_recverr),
    FEND,
};

static const struct pfield ns_fields[] = {
    F("required", P_NS, namespaces.required),
    F("joinable", P_NS, namespaces.joinable),
    FEND,
};

static const struct pfield env_fields[] = {
    F("defaults", P_STRV, env.defaults),
    F("pathAppend", P_STRV, env.path_append),
    FEND,
};

static const struct pfield devices_fields[] = {F("restrict", P_BOOL, devices_restrict), FEND};

static const struct pfield mounts_fields[] = {
    F("denySockets", P_STRV, mounts.deny_sockets),
    F("denySocketNames", P_STRV, mounts.deny_basenames),
    F("hardenBinds", P_BOOL, mounts.harden_binds),
    F("readonlyBinds", P_BOOL, mounts.readonly_binds),
    F("writableBinds", P_STRV, mounts.writable_binds),
    FEND,
};

#define LIMIT_FIELDS(name, type, member)                                                           \
  static const struct pfield name[] = {                                                            \
      FH("default", type, member.def, member.has_default),                                         \
      FH("max", type, member.max, member.has_max),                                                 \
      FEND,                                                                                        \
  }
LIMIT_FIELDS(memory_fields, P_SIZE, resources.memory);
LIMIT_FIELDS(pids_fields, P_COUNT, resources.pids);
LIMIT_FIELDS(cpus_fields, P_CPUS, resources.cpus);

static const struct pfield resources_fields[] = {
    FOBJ("memory", memory_fields),
    FOBJ("pids", pids_fields),
    FOBJ("cpus", cpus_fields),
    FEND,
};

static const struct pfield dns_fields[] = {
    F("upstream", P_STRV, egress.dns_upstream),
    F("upstreamNetns", P_STR, egress.dns_upstream_netns),
    FH("ttlMin", P_DURATION, egress.ttl_min, egress.has_ttl_min),
    FH("ttlMax", P_DURATION, egress.ttl_max, egress.has_ttl_max),
    FEND,
};

static const struct pfield tls_fields[] = {
    F("upstreamCA", P_STR, egress.tls_upstream_ca),
    FEND,
};

static const struct pfield egress_fields[] = {
    FFN("default", egress_default),
    F("allow", P_STRV, egress.allow),
    FOBJ("dns", dns_fields),
    FOBJ("tls", tls_fields),
    FFN("http", profile_parse_http_rules),
    F("allowPrivateAnswers", P_BOOL, egress.allow_private_answers),
    FEND,
};

static const struct pfield ingress_fields[] = {
    FFN("default", ingress_default),
    F("allow", P_STRV, egress.ingress_allow),
    FEND,
};

static const struct pfield audit_fields[] = {
    F("enabled", P_BOOL, audit.enabled),
    F("dir", P_STR, audit.dir),
    F("maxSize", P_SIZE, audit.max_size),
    F("maxAge", P_DURATION, audit.max_age),
    FEND,
};

static const struct pfield sandbox_fields[] = {
    F("home", P_STRV, sandbox.home),
    F("homeDeny", P_STRV, sandbox.home_deny),
    FEND,
};

static const struct pfield subagents_fields[] = {
    F("enabled", P_BOOL, subagents.enabled),
    F("maxChildren", P_COUNT, subagents.max_children),
    F("maxDepth", P_COUNT, subagents.max_depth),
    FEND,
};

#define L(member) annotations.loosen.member
static const struct pfield loosen_fields[] = {
    FH("memory", P_SIZE, L(memory), L(has_memory)),
    FH("pids", P_COUNT, L(pids), L(has_pids)),
    FH("cpus", P_CPUS, L(cpus), L(has_cpus)),
    FH("workspaceSize", P_SIZE, L(workspace_size), L(has_workspace_size)),
    FFN("workspaceModes", ws_modes),
    F("egressAllow", P_STRV, L(egress_allow)),
    F("ingressAllow", P_STRV, L(ingress_allow)),
    FEND,
};

static const struct pfield annotations_fields[] = {
    F("apply", P_BOOL, annotations.apply),
    FOBJ("allowLoosen", loosen_fields),
    FEND,
};

static const struct pfield top_fields[] = {
    F("name", P_STR, name),
    F("description", P_STR, description),
    {"extends", P_SKIP, 0, 0, NULL, NULL}, /* read by parse.c before */
    FOBJ("rootfs", rootfs_fields),
    FOBJ("workspace", workspace_fields),
    FFN("scratch", scratch),
    FOBJ("capabilities", caps_fields),
    F("noNewPrivileges", P_BOOL, no_new_privileges),
    F("apparmorProfile", P_STR, apparmor_profile),
    FOBJ("env", env_fields),
    FOBJ("seccomp", seccomp_fields),
    FOBJ("namespaces", ns_fields),
    FOBJ("devices", devices_fields),
    F("maskedPaths", P_STRV, masked_paths),
    F("readonlyPaths", P_STRV, readonly_paths),
    FOBJ("mounts", mounts_fields),
    FOBJ("resources", resources_fields),
    FOBJ("egress", egress_fields),
    FOBJ("ingress", ingress_fields),
    FFN("secrets", profile_parse_secrets),
    FOBJ("audit", audit_fields),
    FOBJ("sandbox", sandbox_fields),
    FOBJ("subagents", subagents_fields),
    FOBJ("annotations", annotations_fields),
    FEND,
};

int profile_parse_document(struct pctx *c, yajl_val v, struct agent_profile *p)
{
  return profile_walk_object(c, "", v, top_fields, p);
}
