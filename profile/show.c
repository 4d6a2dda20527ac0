/* show.c - the effective profile as JSON (`agentrt profile show`).
 *
 * The output says "extends": "none" and spells out every field, so parsing it
 * back gives the same profile (unit tested).
 */
#include <stdio.h>

#include "profile/render.h"

#include "common/util.h"

static void gen_size(yajl_gen g, const char *k, uint64_t v)
{
  cleanup_free char *s = profile_fmt_size(v);
  profile_gen_key_str(g, k, s);
}

static void gen_caps(yajl_gen g, const char *k, uint64_t mask)
{
  profile_gen_str(g, k);
  yajl_gen_array_open(g);
  for (int i = 0; i < 64; i++)
    if (mask & (UINT64_C(1) << i))
      profile_gen_str(g, profile_cap_name(i));
  yajl_gen_array_close(g);
}

static void gen_ns(yajl_gen g, const char *k, unsigned mask)
{
  profile_gen_str(g, k);
  yajl_gen_array_open(g);
  for (int t = 0; t < OCI_NS_COUNT; t++)
    if (mask & (1u << t))
      profile_gen_str(g, oci_ns_name((enum oci_ns_type)t));
  yajl_gen_array_close(g);
}

static void gen_limit(yajl_gen g, const char *k, const struct profile_limit *l,
                      char *(*fmt)(uint64_t))
{
  profile_gen_str(g, k);
  yajl_gen_map_open(g);
  profile_gen_str(g, "default");
  if (l->has_default) {
    cleanup_free char *s = fmt(l->def);
    profile_gen_str(g, s);
  } else {
    yajl_gen_null(g);
  }
  profile_gen_str(g, "max");
  if (l->has_max) {
    cleanup_free char *s = fmt(l->max);
    profile_gen_str(g, s);
  } else {
    yajl_gen_null(g);
  }
  yajl_gen_map_close(g);
}

static char *fmt_plain(uint64_t v)
{
  return xfmt("%" PRIu64, v);
}

static void gen_opt(yajl_gen g, const char *k, bool has, uint64_t v, char *(*fmt)(uint64_t))
{
  cleanup_free char *s = has ? fmt(v) : NULL;
  profile_gen_key_str(g, k, s);
}

static void gen_workspace(yajl_gen g, const struct agent_profile *p)
{
  profile_gen_str(g, "workspace");
  yajl_gen_map_open(g);
  profile_gen_key_str(g, "path", p->workspace.path);
  profile_gen_key_str(g, "mode", profile_ws_mode_name(p->workspace.mode));
  gen_size(g, "size", p->workspace.size);
  profile_gen_key_strv(g, "protected", p->workspace.protected);
  profile_gen_retention(g, &p->workspace.retention);
  profile_gen_key_bool(g, "volatile", p->workspace.volatile_upper);
  yajl_gen_map_close(g);
  profile_gen_str(g, "scratch");
  yajl_gen_array_open(g);
  for (size_t i = 0; i < p->n_scratch; i++) {
    cleanup_free char *mode = xfmt("%o", p->scratch[i].mode);

    yajl_gen_map_open(g);
    profile_gen_key_str(g, "path", p->scratch[i].path);
    gen_size(g, "size", p->scratch[i].size);
    profile_gen_key_str(g, "mode", mode);
    profile_gen_key_bool(g, "noexec", p->scratch[i].noexec);
    yajl_gen_map_close(g);
  }
  yajl_gen_array_close(g);
}

static void gen_security(yajl_gen g, const struct agent_profile *p)
{
  profile_gen_str(g, "capabilities");
  yajl_gen_map_open(g);
  profile_gen_key_bool(g, "enforce", p->caps.enforce);
  gen_caps(g, "ceiling", p->caps.ceiling);
  gen_caps(g, "trim", p->caps.trim);
  yajl_gen_map_close(g);
  profile_gen_key_bool(g, "noNewPrivileges", p->no_new_privileges);
  if (p->apparmor_profile != NULL)
    profile_gen_key_str(g, "apparmorProfile", p->apparmor_profile);
  profile_gen_str(g, "env");
  yajl_gen_map_open(g);
  profile_gen_key_strv(g, "defaults", p->env.defaults);
  profile_gen_key_strv(g, "pathAppend", p->env.path_append);
  yajl_gen_map_close(g);
  profile_gen_str(g, "seccomp");
  yajl_gen_map_open(g);
  profile_gen_key_bool(g, "enabled", p->seccomp.enabled);
  if (p->seccomp.errno_ret != 0)
    profile_gen_key_u64(g, "errno", p->seccomp.errno_ret);
  profile_gen_key_strv(g, "deny", p->seccomp.deny);
  profile_gen_key_bool(g, "denyCloneNamespaces", p->seccomp.deny_clone_namespaces);
  profile_gen_key_bool(g, "denyTiocsti", p->seccomp.deny_tiocsti);
  profile_gen_key_bool(g, "denyVsock", p->seccomp.deny_vsock);
  profile_gen_key_bool(g, "denyRecvErr", p->seccomp.deny_recverr);
  yajl_gen_map_close(g);
  profile_gen_str(g, "namespaces");
  yajl_gen_map_open(g);
  gen_ns(g, "required", p->namespaces.required);
  gen_ns(g, "joinable", p->namespaces.joinable);
  yajl_gen_map_close(g);
  profile_gen_str(g, "devices");
  yajl_gen_map_open(g);
  profile_gen_key_bool(g, "restrict", p->devices_restrict);
  yajl_gen_map_close(g);
  profile_gen_key_strv(g, "maskedPaths", p->masked_paths);
  profile_gen_key_strv(g, "readonlyPaths", p->readonly_paths);
  profile_gen_str(g, "mounts");
  yajl_gen_map_open(g);
  profile_gen_key_strv(g, "denySockets", p->mounts.deny_sockets);
  profile_gen_key_strv(g, "denySocketNames", p->mounts.deny_basenames);
  profile_gen_key_bool(g, "hardenBinds", p->mounts.harden_binds);
  profile_gen_key_bool(g, "readonlyBinds", p->mounts.readonly_binds);
  profile_gen_key_strv(g, "writableBinds", p->mounts.writable_binds);
  yajl_gen_map_close(g);
}

static void gen_annotations(yajl_gen g, const struct agent_profile *p)
{
  const struct profile_loosen *l = &p->annotations.loosen;

  profile_gen_str(g, "annotations");
  yajl_gen_map_open(g);
  profile_gen_key_bool(g, "apply", p->annotations.apply);
  profile_gen_str(g, "allowLoosen");
  yajl_gen_map_open(g);
  gen_opt(g, "memory", l->has_memory, l->memory, profile_fmt_size);
  gen_opt(g, "pids", l->has_pids, l->pids, fmt_plain);
  gen_opt(g, "cpus", l->has_cpus, l->cpus, profile_fmt_cpus);
  gen_opt(g, "workspaceSize", l->has_workspace_size, l->workspace_size, profile_fmt_size);
  profile_gen_str(g, "workspaceModes");
  yajl_gen_array_open(g);
  for (int m = PROFILE_WS_TMPFS; m <= PROFILE_WS_BIND; m++)
    if (l->workspace_modes & (1u << m))
      profile_gen_str(g, profile_ws_mode_name((enum profile_ws_mode)m));
  yajl_gen_array_close(g);
  profile_gen_key_strv(g, "egressAllow", l->egress_allow);
  profile_gen_key_strv(g, "ingressAllow", l->ingress_allow);
  yajl_gen_map_close(g);
  yajl_gen_map_close(g);
}

int profile_to_json(const struct agent_profile *p, char **ret_json, size_t *ret_len,
                    struct error *err)
{
  yajl_gen g = yajl_gen_alloc(NULL);

  yajl_gen_config(g, yajl_gen_beautify, 1);
  yajl_gen_config(g, yajl_gen_indent_string, "  ");
  yajl_gen_map_open(g);
  profile_gen_key_str(g, "name", p->name);
  profile_gen_key_str(g, "description", p->description);
  profile_gen_key_str(g, "extends", "none");
  profile_gen_str(g, "rootfs");
  yajl_gen_map_open(g);
  profile_gen_key_bool(g, "readonly", p->rootfs_readonly);
  yajl_gen_map_close(g);
  gen_workspace(g, p);
  gen_security(g, p);
  profile_gen_str(g, "resources");
  yajl_gen_map_open(g);
  gen_limit(g, "memory", &p->resources.memory, profile_fmt_size);
  gen_limit(g, "pids", &p->resources.pids, fmt_plain);
  gen_limit(g, "cpus", &p->resources.cpus, profile_fmt_cpus);
  yajl_gen_map_close(g);
  profile_gen_str(g, "egress");
  profile_gen_egress(g, &p->egress);
  profile_gen_str(g, "ingress");
  profile_gen_ingress(g, &p->egress);
  profile_gen_secrets(g, p->secrets, p->n_secrets);
  profile_gen_str(g, "audit");
  profile_gen_audit(g, &p->audit);
  profile_gen_str(g, "sandbox");
  yajl_gen_map_open(g);
  profile_gen_key_strv(g, "home", p->sandbox.home);
  profile_gen_key_strv(g, "homeDeny", p->sandbox.home_deny);
  yajl_gen_map_close(g);
  profile_gen_str(g, "subagents");
  profile_gen_subagents(g, &p->subagents);
  gen_annotations(g, p);
  yajl_gen_map_close(g);
  return profile_gen_finish(g, ret_json, ret_len, err);
}
