/* render.c - `agentrt explain` (text and JSON) of a profile_result.
 *
 * JSON shape (explain --format json):
 *   {"profile": "agent",
 *    "changes": [{"kind": "config"|"runtime", "field", "old", "new", "reason"}],
 *    "workspace": {"mode", "path", "lowerdir", "size", "readonly",
 *                  "protected": [{"path", "type": "dir"|"file"}] (bind mode's read-only binds),
 *                  "reviewProtected": [...] (overlay mode: left out of commit), "retention"},
 *    "egress": {"default", "allow", "dns": {"upstream"}, "allowPrivateAnswers"},
 *    "ingress": {"default", "allow"},
 *    "secrets": [{"name", "file", "hosts", "header", "format"}] (never a value),
 *    "audit": {...}, "seccomp": {"stacked", "rules"}, "checkJoinedNamespaces"}
 */
#include <stdio.h>
#include <yajl/yajl_tree.h>

#include "profile/render.h"

#include "common/log.h"
#include "common/util.h"

void profile_gen_str(yajl_gen g, const char *s)
{
  if (s == NULL)
    yajl_gen_null(g);
  else
    yajl_gen_string(g, (const unsigned char *)s, strlen(s));
}

void profile_gen_key_str(yajl_gen g, const char *k, const char *v)
{
  profile_gen_str(g, k);
  profile_gen_str(g, v);
}

/* An OCI mount object: {"destination", "type", "source", "options": [...]}. */
void profile_gen_mount(yajl_gen g, const char *dest, const char *type, const char *src,
                       const char *const *opts)
{
  yajl_gen_map_open(g);
  profile_gen_key_str(g, "destination", dest);
  profile_gen_key_str(g, "type", type);
  profile_gen_key_str(g, "source", src);
  profile_gen_str(g, "options");
  yajl_gen_array_open(g);
  for (size_t i = 0; opts[i] != NULL; i++)
    profile_gen_str(g, opts[i]);
  yajl_gen_array_close(g);
  yajl_gen_map_close(g);
}

void profile_gen_key_u64(yajl_gen g, const char *k, uint64_t v)
{
  profile_gen_str(g, k);
  yajl_gen_integer(g, v > INT64_MAX ? INT64_MAX : (long long)v);
}

void profile_gen_key_bool(yajl_gen g, const char *k, bool v)
{
  profile_gen_str(g, k);
  yajl_gen_bool(g, v);
}

void profile_gen_key_strv(yajl_gen g, const char *k, char **v)
{
  profile_gen_str(g, k);
  yajl_gen_array_open(g);
  for (size_t i = 0; v != NULL && v[i] != NULL; i++)
    profile_gen_str(g, v[i]);
  yajl_gen_array_close(g);
}

int profile_gen_finish(yajl_gen g, char **ret_json, size_t *ret_len, struct error *err)
{
  const unsigned char *buf = NULL;
  size_t len = 0;

  if (yajl_gen_get_buf(g, &buf, &len) != yajl_gen_status_ok) {
    yajl_gen_free(g);
    return error_set(err, 0, "generate JSON: internal error");
  }
  *ret_json = xstrndup((const char *)buf, len);
  if (ret_len != NULL)
    *ret_len = len;
  yajl_gen_free(g);
  return 0;
}

const char *profile_egress_default_name(enum profile_egress_default d)
{
  return d == PROFILE_EGRESS_DENY ? "deny" : d == PROFILE_EGRESS_ALLOW ? "allow" : "off";
}

void profile_gen_egress(yajl_gen g, const struct profile_egress *e)
{
  yajl_gen_map_open(g);
  profile_gen_key_str(g, "default", profile_egress_default_name(e->def));
  profile_gen_key_strv(g, "allow", e->allow);
  profile_gen_str(g, "dns");
  yajl_gen_map_open(g);
  profile_gen_key_strv(g, "upstream", e->dns_upstream);
  if (e->dns_upstream_netns)
    profile_gen_key_str(g, "upstreamNetns", e->dns_upstream_netns);
  if (e->has_ttl_min)
    profile_gen_key_u64(g, "ttlMin", e->ttl_min);
  if (e->has_ttl_max)
    profile_gen_key_u64(g, "ttlMax", e->ttl_max);
  yajl_gen_map_close(g);
  profile_gen_key_bool(g, "allowPrivateAnswers", e->allow_private_answers);
  if (e->n_http > 0) {
    profile_gen_str(g, "http");
    yajl_gen_array_open(g);
    for (size_t i = 0; i < e->n_http; i++) {
      yajl_gen_map_open(g);
      profile_gen_key_str(g, "host", e->http[i].host);
      profile_gen_key_strv(g, "methods", e->http[i].methods);
      profile_gen_key_strv(g, "paths", e->http[i].paths);
      yajl_gen_map_close(g);
    }
    yajl_gen_array_close(g);
  }
  if (e->tls_upstream_ca != NULL) {
    profile_gen_str(g, "tls");
    yajl_gen_map_open(g);
    profile_gen_key_str(g, "upstreamCA", e->tls_upstream_ca);
    yajl_gen_map_close(g);
  }
  yajl_gen_map_close(g);
}

/* Names, files, hosts, header and format; never a value, never the
 * placeholder (config.json has that). */
void profile_gen_secrets(yajl_gen g, const struct profile_secret *s, size_t n)
{
  profile_gen_str(g, "secrets");
  yajl_gen_array_open(g);
  for (size_t i = 0; i < n; i++) {
    yajl_gen_map_open(g);
    profile_gen_key_str(g, "name", s[i].name);
    profile_gen_key_str(g, "file", s[i].file);
    profile_gen_key_strv(g, "hosts", s[i].hosts);
    profile_gen_key_str(g, "header", s[i].header);
    if (s[i].format != NULL)
      profile_gen_key_str(g, "format", s[i].format);
    yajl_gen_map_close(g);
  }
  yajl_gen_array_close(g);
}

void profile_gen_ingress(yajl_gen g, const struct profile_egress *e)
{
  yajl_gen_map_open(g);
  profile_gen_key_str(g, "default", e->ingress_default_allow ? "allow" : "deny");
  profile_gen_key_strv(g, "allow", e->ingress_allow);
  yajl_gen_map_close(g);
}

void profile_gen_audit(yajl_gen g, const struct profile_audit *a)
{
  yajl_gen_map_open(g);
  profile_gen_key_bool(g, "enabled", a->enabled);
  profile_gen_key_str(g, "dir", a->dir);
  profile_gen_key_u64(g, "maxSize", a->max_size);
  profile_gen_key_u64(g, "maxAge", a->max_age);
  yajl_gen_map_close(g);
}

void profile_gen_subagents(yajl_gen g, const struct profile_subagents *s)
{
  yajl_gen_map_open(g);
  profile_gen_key_bool(g, "enabled", s->enabled);
  /* 0 is "never set" (the oci base): the parser takes positive counts only */
  if (s->max_children > 0)
    profile_gen_key_u64(g, "maxChildren", s->max_children);
  if (s->max_depth > 0)
    profile_gen_key_u64(g, "maxDepth", s->max_depth);
  yajl_gen_map_close(g);
}

void profile_gen_retention(yajl_gen g, const struct profile_retention *r)
{
  profile_gen_str(g, "retention");
  yajl_gen_map_open(g);
  profile_gen_key_u64(g, "maxSize", r->max_size);
  profile_gen_key_u64(g, "maxAge", r->max_age);
  yajl_gen_map_close(g);
}

static void gen_change(yajl_gen g, const struct profile_change *c)
{
  yajl_gen_map_open(g);
  profile_gen_key_str(g, "kind", c->kind == PROFILE_CHANGE_CONFIG ? "config" : "runtime");
  profile_gen_key_str(g, "field", c->field);
  profile_gen_key_str(g, "old", c->old_value);
  profile_gen_key_str(g, "new", c->new_value);
  profile_gen_key_str(g, "reason", c->reason);
  yajl_gen_map_close(g);
}

static void gen_workspace(yajl_gen g, const struct profile_result *r)
{
  profile_gen_str(g, "workspace");
  yajl_gen_map_open(g);
  profile_gen_key_str(g, "mode", profile_ws_mode_name(r->workspace.mode));
  profile_gen_key_str(g, "path", r->workspace.path);
  profile_gen_key_str(g, "lowerdir", r->workspace.lowerdir);
  profile_gen_key_u64(g, "size", r->workspace.size);
  profile_gen_key_bool(g, "readonly", r->workspace.readonly);
  profile_gen_str(g, "protected");
  yajl_gen_array_open(g);
  for (size_t i = 0; i < r->workspace.n_protected; i++) {
    yajl_gen_map_open(g);
    profile_gen_key_str(g, "path", r->workspace.protected[i].path);
    profile_gen_key_str(g, "type", r->workspace.protected[i].dir ? "dir" : "file");
    yajl_gen_map_close(g);
  }
  yajl_gen_array_close(g);
  profile_gen_str(g, "reviewProtected");
  yajl_gen_array_open(g);
  for (size_t i = 0; r->workspace.review_protected && r->workspace.review_protected[i]; i++)
    profile_gen_str(g, r->workspace.review_protected[i]);
  yajl_gen_array_close(g);
  profile_gen_retention(g, &r->workspace.retention);
  yajl_gen_map_close(g);
}

int profile_changes_json(const struct profile_result *r, char **ret_json, size_t *ret_len,
                         struct error *err)
{
  yajl_gen g = yajl_gen_alloc(NULL);

  yajl_gen_config(g, yajl_gen_beautify, 0);
  yajl_gen_map_open(g);
  profile_gen_key_str(g, "profile", r->profile);
  profile_gen_str(g, "changes");
  yajl_gen_array_open(g);
  for (size_t i = 0; i < r->n_changes; i++)
    gen_change(g, &r->changes[i]);
  yajl_gen_array_close(g);
  gen_workspace(g, r);
  profile_gen_str(g, "egress");
  profile_gen_egress(g, &r->egress);
  profile_gen_str(g, "ingress");
  profile_gen_ingress(g, &r->egress);
  profile_gen_secrets(g, r->secrets, r->n_secrets);
  profile_gen_str(g, "audit");
  profile_gen_audit(g, &r->audit);
  profile_gen_str(g, "subagents");
  profile_gen_subagents(g, &r->subagents);
  profile_gen_str(g, "seccomp");
  yajl_gen_map_open(g);
  profile_gen_key_bool(g, "stacked", r->extra_seccomp != NULL);
  profile_gen_key_u64(g, "rules", r->extra_seccomp ? r->extra_seccomp->n_syscalls : 0);
  yajl_gen_map_close(g);
  profile_gen_key_bool(g, "checkJoinedNamespaces", r->check_joined_ns);
  yajl_gen_map_close(g);
  return profile_gen_finish(g, ret_json, ret_len, err);
}

/* s for the terminal (NULL: dflt): a sub-agent's changes name the
 * workspace its parent chose, whose escape sequences must not reach the
 * operator's screen raw (ws-path-escape) */
static char *safe(const char *s, const char *dflt)
{
  size_t n;
  char *out;

  if (s == NULL)
    s = dflt;
  n = 6 * strlen(s) + 9; /* \u202e for each 3-byte one; \xNN for each byte */
  out = xmalloc(n);
  log_safe_text(out, n, s);
  return out;
}

char *profile_changes_text(const struct profile_result *r)
{
  char *out = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&out, &len);

  if (f == NULL)
    abort();
  fprintf(f, "profile %s: %zu change%s\n", r->profile, r->n_changes, r->n_changes == 1 ? "" : "s");
  for (size_t i = 0; i < r->n_changes; i++) {
    const struct profile_change *c = &r->changes[i];
    cleanup_free char *field = safe(c->field, ""), *reason = safe(c->reason, "");

    if (c->kind == PROFILE_CHANGE_RUNTIME) {
      cleanup_free char *nv = safe(c->new_value, "-");
      fprintf(f, "  [runtime] %s: %s\n      %s\n", field, nv, reason);
    } else {
      cleanup_free char *ov = safe(c->old_value, "(unset)"), *nv = safe(c->new_value, "(removed)");
      fprintf(f, "  [config]  %s: %s -> %s\n      %s\n", field, ov, nv, reason);
    }
  }
  if (fclose(f) != 0)
    abort();
  return out;
}

static char *json_str_dup(yajl_val obj, const char *key)
{
  const char *path[] = {key, NULL};
  yajl_val v = yajl_tree_get(obj, path, yajl_t_string);

  return v ? xstrdup(YAJL_GET_STRING(v)) : NULL;
}

int profile_changes_text_from_json(const char *json, char **ret, struct error *err)
{
  const char *pname[] = {"profile", NULL}, *pchanges[] = {"changes", NULL};
  struct profile_result *r = xmalloc0(sizeof *r);
  yajl_val tree = yajl_tree_parse(json, NULL, 0), a;

  if (tree == NULL || yajl_tree_get(tree, pname, yajl_t_string) == NULL ||
      (a = yajl_tree_get(tree, pchanges, yajl_t_array)) == NULL) {
    yajl_tree_free(tree);
    free(r);
    return error_set(err, 0, "profile.json: not a profile record");
  }
  r->profile = json_str_dup(tree, "profile");
  r->changes = xmalloc0((a->u.array.len + 1) * sizeof *r->changes);
  for (size_t i = 0; i < a->u.array.len; i++) {
    yajl_val c = a->u.array.values[i];
    struct profile_change *ch = &r->changes[r->n_changes++];
    cleanup_free char *kind = json_str_dup(c, "kind");

    ch->kind = kind && streq(kind, "runtime") ? PROFILE_CHANGE_RUNTIME : PROFILE_CHANGE_CONFIG;
    ch->field = json_str_dup(c, "field");
    ch->old_value = json_str_dup(c, "old");
    ch->new_value = json_str_dup(c, "new");
    ch->reason = json_str_dup(c, "reason");
  }
  yajl_tree_free(tree);
  *ret = profile_changes_text(r);
  profile_result_free(r);
  return 0;
}
