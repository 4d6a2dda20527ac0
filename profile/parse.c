/* parse.c - profile JSON -> struct agent_profile (yajl tree), with errors that
 * name the file and the field: "profile.json: capabilities.ceiling[2]:
 * unknown capability FOO".
 *
 * A document is laid over a base: "extends": "agent" (the default), "oci" or
 * "none" (everything off, the same as "oci").  Objects merge field by field;
 * arrays and scalars replace.  Unknown fields are errors (a typo must not
 * silently leave a guarantee off).
 */
#include "profile/parse.h"

#include <errno.h>
#include <stdio.h>

#include "common/util.h"

int profile_pfail(struct pctx *c, const char *path, const char *fmt, ...)
{
  char msg[512];
  va_list ap;

  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return error_set(c->err, 0, "%s: %s: %s", c->file, path, msg);
}

char *profile_path_join(const char *path, const char *key)
{
  return path[0] ? xfmt("%s.%s", path, key) : xstrdup(key);
}

int profile_get_bool(struct pctx *c, const char *path, yajl_val v, bool *ret)
{
  if (!YAJL_IS_TRUE(v) && !YAJL_IS_FALSE(v))
    return profile_pfail(c, path, "expected true or false");
  *ret = YAJL_IS_TRUE(v);
  return 0;
}

int profile_get_string(struct pctx *c, const char *path, yajl_val v, char **ret)
{
  if (YAJL_IS_NULL(v)) {
    free(*ret);
    *ret = NULL;
    return 0;
  }
  if (!YAJL_IS_STRING(v))
    return profile_pfail(c, path, "expected a string");
  free(*ret);
  *ret = xstrdup(YAJL_GET_STRING(v));
  return 0;
}

int profile_get_strv(struct pctx *c, const char *path, yajl_val v, char ***ret)
{
  cleanup_strv char **r = xmalloc0(sizeof(char *));

  if (!YAJL_IS_ARRAY(v))
    return profile_pfail(c, path, "expected an array of strings");
  for (size_t i = 0; i < v->u.array.len; i++) {
    yajl_val e = v->u.array.values[i];

    if (!YAJL_IS_STRING(e) || YAJL_GET_STRING(e)[0] == '\0') {
      cleanup_free char *p = xfmt("%s[%zu]", path, i);
      return profile_pfail(c, p, "expected a non-empty string");
    }
    strv_push(&r, YAJL_GET_STRING(e));
  }
  strv_free(*ret);
  *ret = take_ptr(r);
  return 0;
}

/* A size as "512m" or a number of bytes. */
int profile_get_size(struct pctx *c, const char *path, yajl_val v, uint64_t *ret)
{
  if (YAJL_IS_INTEGER(v) && YAJL_GET_INTEGER(v) >= 0) {
    *ret = (uint64_t)YAJL_GET_INTEGER(v);
    return 0;
  }
  if (YAJL_IS_STRING(v) && profile_parse_size(YAJL_GET_STRING(v), ret) == 0)
    return 0;
  return profile_pfail(c, path, "expected a size such as \"512m\" or a number of bytes");
}

int profile_get_count(struct pctx *c, const char *path, yajl_val v, uint64_t *ret)
{
  if (YAJL_IS_INTEGER(v) && YAJL_GET_INTEGER(v) > 0) {
    *ret = (uint64_t)YAJL_GET_INTEGER(v);
    return 0;
  }
  if (YAJL_IS_STRING(v) && parse_u64(YAJL_GET_STRING(v), ret) == 0 && *ret > 0)
    return 0;
  return profile_pfail(c, path, "expected a positive integer");
}

/* CPUs as 2, 1.5 or "1.5" -> millicpus. */
int profile_get_cpus(struct pctx *c, const char *path, yajl_val v, uint64_t *ret)
{
  char buf[64];
  const char *s = NULL;

  if (YAJL_IS_STRING(v)) {
    s = YAJL_GET_STRING(v);
  } else if (YAJL_IS_NUMBER(v) && v->u.number.r != NULL) {
    snprintf(buf, sizeof buf, "%s", v->u.number.r);
    s = buf;
  }
  if (s != NULL && profile_parse_cpus(s, ret) == 0)
    return 0;
  return profile_pfail(c, path, "expected a CPU count such as 2 or \"1.5\"");
}

int profile_get_duration(struct pctx *c, const char *path, yajl_val v, uint64_t *ret)
{
  if (YAJL_IS_INTEGER(v) && YAJL_GET_INTEGER(v) >= 0) {
    *ret = (uint64_t)YAJL_GET_INTEGER(v);
    return 0;
  }
  if (YAJL_IS_STRING(v) && profile_parse_duration(YAJL_GET_STRING(v), ret) == 0)
    return 0;
  return profile_pfail(c, path, "expected a duration such as \"7d\", \"12h\" or seconds");
}

int profile_get_caps(struct pctx *c, const char *path, yajl_val v, uint64_t *ret)
{
  uint64_t mask = 0;

  if (!YAJL_IS_ARRAY(v))
    return profile_pfail(c, path, "expected an array of capability names");
  for (size_t i = 0; i < v->u.array.len; i++) {
    yajl_val e = v->u.array.values[i];
    int cap = YAJL_IS_STRING(e) ? oci_cap_from_name(YAJL_GET_STRING(e)) : -1;

    if (cap < 0 || cap > 63) {
      cleanup_free char *p = xfmt("%s[%zu]", path, i);
      return profile_pfail(c, p, "unknown capability %s",
                           YAJL_IS_STRING(e) ? YAJL_GET_STRING(e) : "");
    }
    mask |= UINT64_C(1) << cap;
  }
  *ret = mask;
  return 0;
}

int profile_get_ns_set(struct pctx *c, const char *path, yajl_val v, unsigned *ret)
{
  unsigned mask = 0;

  if (!YAJL_IS_ARRAY(v))
    return profile_pfail(c, path, "expected an array of namespace types");
  for (size_t i = 0; i < v->u.array.len; i++) {
    yajl_val e = v->u.array.values[i];
    int t = YAJL_IS_STRING(e) ? oci_ns_from_name(YAJL_GET_STRING(e)) : -1;

    if (t < 0) {
      cleanup_free char *p = xfmt("%s[%zu]", path, i);
      return profile_pfail(c, p, "unknown namespace type %s",
                           YAJL_IS_STRING(e) ? YAJL_GET_STRING(e) : "");
    }
    mask |= 1u << t;
  }
  *ret = mask;
  return 0;
}

static int walk_member(struct pctx *c, const char *path, yajl_val v, const struct pfield *f,
                       struct agent_profile *p)
{
  char *base = (char *)p;
  void *dst = base + f->off;

  if (f->has_off != 0 && YAJL_IS_NULL(v)) {
    *(bool *)(base + f->has_off) = false;
    return 0;
  }
  if (f->has_off != 0)
    *(bool *)(base + f->has_off) = true;
  switch (f->type) {
  case P_SKIP:
    return 0;
  case P_BOOL:
    return profile_get_bool(c, path, v, dst);
  case P_STR:
    return profile_get_string(c, path, v, dst);
  case P_STRV:
    return profile_get_strv(c, path, v, dst);
  case P_SIZE:
    return profile_get_size(c, path, v, dst);
  case P_COUNT:
    return profile_get_count(c, path, v, dst);
  case P_CPUS:
    return profile_get_cpus(c, path, v, dst);
  case P_DURATION:
    return profile_get_duration(c, path, v, dst);
  case P_CAPS:
    return profile_get_caps(c, path, v, dst);
  case P_NS:
    return profile_get_ns_set(c, path, v, dst);
  case P_OBJECT:
    return profile_walk_object(c, path, v, f->sub, p);
  case P_FN:
    return f->fn(c, path, v, p);
  }
  return profile_pfail(c, path, "internal error: bad field type");
}

/* Walk an object's members through a table; unknown members are errors. */
int profile_walk_object(struct pctx *c, const char *path, yajl_val v, const struct pfield *fields,
                        struct agent_profile *p)
{
  if (!YAJL_IS_OBJECT(v))
    return profile_pfail(c, path[0] ? path : "(document)", "expected an object");
  for (size_t i = 0; i < v->u.object.len; i++) {
    const char *key = v->u.object.keys[i];
    cleanup_free char *sub = profile_path_join(path, key);
    const struct pfield *f = fields;

    while (f->name != NULL && !streq(f->name, key))
      f++;
    if (f->name == NULL)
      return profile_pfail(c, sub, "unknown field");
    if (walk_member(c, sub, v->u.object.values[i], f, p) < 0)
      return -1;
  }
  return 0;
}

void profile_egress_clear(struct profile_egress *e)
{
  strv_free(e->allow);
  strv_free(e->dns_upstream);
  free(e->dns_upstream_netns);
  strv_free(e->ingress_allow);
  free(e->tls_upstream_ca);
  for (size_t i = 0; i < e->n_http; i++) {
    free(e->http[i].host);
    strv_free(e->http[i].methods);
    strv_free(e->http[i].paths);
  }
  free(e->http);
  memset(e, 0, sizeof *e);
}

void profile_egress_copy(struct profile_egress *d, const struct profile_egress *s)
{
  *d = *s;
  d->allow = strv_dup(s->allow);
  d->dns_upstream = strv_dup(s->dns_upstream);
  d->dns_upstream_netns = s->dns_upstream_netns ? xstrdup(s->dns_upstream_netns) : NULL;
  d->ingress_allow = strv_dup(s->ingress_allow);
  d->tls_upstream_ca = xstrdup(s->tls_upstream_ca);
  d->http = s->n_http ? xmalloc0(s->n_http * sizeof *d->http) : NULL;
  for (size_t i = 0; i < s->n_http; i++) {
    d->http[i].host = xstrdup(s->http[i].host);
    d->http[i].methods = strv_dup(s->http[i].methods);
    d->http[i].paths = strv_dup(s->http[i].paths);
  }
}

void profile_audit_copy(struct profile_audit *d, const struct profile_audit *s)
{
  *d = *s;
  d->dir = xstrdup(s->dir);
}

void profile_free(struct agent_profile *p)
{
  if (p == NULL)
    return;
  free(p->name);
  free(p->description);
  free(p->apparmor_profile);
  free(p->workspace.path);
  strv_free(p->workspace.protected);
  for (size_t i = 0; i < p->n_scratch; i++)
    free(p->scratch[i].path);
  free(p->scratch);
  strv_free(p->seccomp.deny);
  strv_free(p->env.defaults);
  strv_free(p->env.path_append);
  strv_free(p->masked_paths);
  strv_free(p->readonly_paths);
  strv_free(p->mounts.deny_sockets);
  strv_free(p->mounts.deny_basenames);
  strv_free(p->mounts.writable_binds);
  profile_egress_clear(&p->egress);
  for (size_t i = 0; i < p->n_secrets; i++)
    profile_secret_clear(&p->secrets[i]);
  free(p->secrets);
  free(p->audit.dir);
  strv_free(p->sandbox.home);
  strv_free(p->sandbox.home_deny);
  strv_free(p->annotations.loosen.egress_allow);
  strv_free(p->annotations.loosen.ingress_allow);
  free(p);
}

static yajl_val find_member(yajl_val v, const char *key)
{
  if (!YAJL_IS_OBJECT(v))
    return NULL;
  for (size_t i = 0; i < v->u.object.len; i++)
    if (streq(v->u.object.keys[i], key))
      return v->u.object.values[i];
  return NULL;
}

static int tree_parse(const char *json, size_t len, const char *file, yajl_val *ret,
                      struct error *err)
{
  char ebuf[256] = "";
  cleanup_free char *text = xstrndup(json, len);
  char *nl;

  if (strlen(text) != len)
    return error_set(err, 0, "%s: NUL byte in JSON", file);
  *ret = yajl_tree_parse(text, ebuf, sizeof ebuf);
  if (*ret != NULL)
    return 0;
  nl = strchr(ebuf, '\n');
  if (nl != NULL)
    *nl = '\0';
  return error_set(err, 0, "%s: invalid JSON: %s", file, ebuf[0] ? ebuf : "parse error");
}

/* Lay the parsed document over *p (already holding the base). */
static int overlay(yajl_val tree, const char *file, struct agent_profile *p, bool is_base,
                   struct error *err)
{
  struct pctx c = {.file = file, .err = err};
  int ret = profile_parse_document(&c, tree, p);

  if (ret == 0 && !is_base)
    ret = profile_validate_profile(&c, p);
  return ret;
}

/* The base named by "extends" in the parsed document. */
static int base_for(yajl_val tree, const char *file, struct agent_profile **ret, struct error *err)
{
  yajl_val ext = find_member(tree, "extends");
  const char *base = PROFILE_DEFAULT;
  yajl_val btree = NULL;
  int r;

  if (ext != NULL && !YAJL_IS_STRING(ext))
    return error_set(err, 0, "%s: extends: expected \"agent\", \"oci\" or \"none\"", file);
  if (ext != NULL)
    base = YAJL_GET_STRING(ext);
  if (!streq(base, "none") && !streq(base, "oci") && !streq(base, "agent"))
    return error_set(err, 0, "%s: extends: unknown base profile `%s` (expected agent, oci or none)",
                     file, base);
  *ret = xmalloc0(sizeof **ret);
  if (!streq(base, "agent"))
    return 0;
  /* the built-in agent profile extends none: parsed once, laid over nothing */
  if (tree_parse(profile_builtin_json("agent"), strlen(profile_builtin_json("agent")),
                 "builtin:agent", &btree, err) < 0)
    return -1;
  r = overlay(btree, "builtin:agent", *ret, true, err);
  yajl_tree_free(btree);
  return r;
}

int profile_parse(const char *json, size_t len, const char *file, struct agent_profile **ret,
                  struct error *err)
{
  struct agent_profile *p = NULL;
  yajl_val tree = NULL;

  if (tree_parse(json, len, file, &tree, err) < 0)
    return -1;
  if (base_for(tree, file, &p, err) < 0 || overlay(tree, file, p, false, err) < 0) {
    profile_free(p);
    yajl_tree_free(tree);
    return -1;
  }
  yajl_tree_free(tree);
  if (p->name == NULL)
    p->name = xstrdup("custom");
  *ret = p;
  return 0;
}

int profile_builtin(const char *name, struct agent_profile **ret, struct error *err)
{
  const char *json = profile_builtin_json(name);
  cleanup_free char *file = NULL;

  if (json == NULL)
    return error_set(err, ENOENT, "profile `%s`", name);
  file = xfmt("builtin:%s", name);
  return profile_parse(json, strlen(json), file, ret, err);
}
