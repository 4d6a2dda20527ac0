/* config.c - config.json (OCI runtime spec 1.2): the top level (ociVersion,
 * root, hostname, domainname, mounts, hooks, annotations), the public
 * parse/serialise/free entry points and the lookups.  config_process.c, config_linux.c,
 * config_resources.c and config_seccomp.c handle the nested objects.
 *
 * Unknown fields are ignored (the spec allows extensions); a known field of
 * the wrong type, a value out of range for its C type, or a violation of a
 * MUST of the spec is an error naming the file and JSON path.
 */
#include "common/util.h"
#include "oci/internal.h"

int oci_parse_doc(const char *json, size_t len, const char *file, jconv_fn fn, void *ret,
                  struct error *err)
{
  struct jnode *root = NULL;
  struct jctx c;
  int r;

  if (json == NULL)
    return error_set(err, 0, "%s: no document", file != NULL ? file : "json");
  if (jparse(json, len, file, &root, err) < 0)
    return -1;
  jctx_init(&c, file, err);
  r = fn(&c, root, ret);
  jfree(root);
  return r;
}

static int conv_root(struct jctx *c, const struct jnode *v, void *ret)
{
  struct oci_config *cfg = ret;

  if (jexpect(c, v, JT_OBJECT) < 0)
    return -1;
  if (jfield_req(c, v, "path", j_str, &cfg->root_path) < 0 ||
      jfield(c, v, "readonly", j_bool, &cfg->root_readonly, NULL) < 0)
    return -1;
  if (cfg->root_path[0] == '\0')
    return jfail_at(c, "path", "must not be empty");
  return 0;
}

/* A mount's destination: a relative one is taken from the container's /,
 * as runc and crun do (older configs have them); stored absolute. */
static int conv_mount_dest(struct jctx *c, const struct jnode *v, void *ret)
{
  char **out = ret;

  if (j_str(c, v, ret) < 0)
    return -1;
  if (**out == '\0')
    return jfail(c, "must not be empty");
  if (**out != '/') {
    char *abs = xfmt("/%s", *out);
    free(*out);
    *out = abs;
  }
  return 0;
}

static int conv_mount(struct jctx *c, const struct jnode *v, void *ret)
{
  struct oci_mount *m = ret;

  if (jexpect(c, v, JT_OBJECT) < 0)
    return -1;
  if (jfield_req(c, v, "destination", conv_mount_dest, &m->destination) < 0 ||
      jfield(c, v, "type", j_str, &m->type, NULL) < 0 ||
      jfield(c, v, "source", j_str, &m->source, NULL) < 0 ||
      jfield(c, v, "options", j_strv, &m->options, NULL) < 0)
    return -1;
  if (jfield_array(c, v, "uidMappings", sizeof(struct oci_idmap), oci_idmap_node, &m->uid_mappings,
                   &m->n_uid_mappings) < 0 ||
      jfield_array(c, v, "gidMappings", sizeof(struct oci_idmap), oci_idmap_node, &m->gid_mappings,
                   &m->n_gid_mappings) < 0)
    return -1;
  /* a mapping of one kind alone would show the other's ids as nobody */
  if ((m->uid_mappings != NULL) != (m->gid_mappings != NULL))
    return jfail_at(c, m->uid_mappings ? "gidMappings" : "uidMappings",
                    "an idmapped mount needs both uidMappings and gidMappings");
  if ((m->uid_mappings != NULL && m->n_uid_mappings == 0) ||
      (m->gid_mappings != NULL && m->n_gid_mappings == 0))
    return jfail_at(c, m->n_uid_mappings == 0 ? "uidMappings" : "gidMappings", "must not be empty");
  return 0;
}

static int conv_hook(struct jctx *c, const struct jnode *v, void *ret)
{
  struct oci_hook *h = ret;

  if (jexpect(c, v, JT_OBJECT) < 0)
    return -1;
  if (jfield_req(c, v, "path", j_abspath, &h->path) < 0 ||
      jfield(c, v, "args", j_strv, &h->args, NULL) < 0 ||
      jfield(c, v, "env", j_strv, &h->env, NULL) < 0 ||
      jfield(c, v, "timeout", j_int, &h->timeout, &h->has_timeout) < 0)
    return -1;
  if (h->has_timeout && h->timeout <= 0)
    return jfail_at(c, "timeout", "must be greater than 0");
  return 0;
}

static const char *const hook_names[OCI_HOOK_KINDS] = {
    [OCI_HOOK_PRESTART] = "prestart",
    [OCI_HOOK_CREATE_RUNTIME] = "createRuntime",
    [OCI_HOOK_CREATE_CONTAINER] = "createContainer",
    [OCI_HOOK_START_CONTAINER] = "startContainer",
    [OCI_HOOK_POSTSTART] = "poststart",
    [OCI_HOOK_POSTSTOP] = "poststop",
};

const char *oci_hook_name(enum oci_hook_kind k)
{
  return (unsigned)k < OCI_HOOK_KINDS ? hook_names[k] : NULL;
}

static int conv_hooks(struct jctx *c, const struct jnode *v, void *ret)
{
  struct oci_hooks *hooks = ret;

  if (jexpect(c, v, JT_OBJECT) < 0)
    return -1;
  for (int k = 0; k < OCI_HOOK_KINDS; k++)
    if (jfield_array(c, v, hook_names[k], sizeof(struct oci_hook), conv_hook, &hooks->list[k],
                     &hooks->n[k]) < 0)
      return -1;
  return 0;
}

static int conv_config(struct jctx *c, const struct jnode *v, void *ret)
{
  struct oci_config **out = ret;
  struct oci_config *cfg;

  if (jexpect(c, v, JT_OBJECT) < 0)
    return -1;
  cfg = *out = xmalloc0(sizeof **out);
  if (jfield_req(c, v, "ociVersion", j_str, &cfg->oci_version) < 0)
    return -1;
  if (cfg->oci_version[0] == '\0')
    return jfail_at(c, "ociVersion", "must not be empty");
  if (jfield_req(c, v, "root", conv_root, cfg) < 0 ||
      jfield(c, v, "process", oci_process_node, &cfg->process, NULL) < 0 ||
      jfield(c, v, "hostname", j_str, &cfg->hostname, NULL) < 0 ||
      jfield(c, v, "domainname", j_str, &cfg->domainname, NULL) < 0 ||
      jfield_array(c, v, "mounts", sizeof(struct oci_mount), conv_mount, &cfg->mounts,
                   &cfg->n_mounts) < 0 ||
      jfield(c, v, "hooks", conv_hooks, &cfg->hooks, NULL) < 0 ||
      jfield_kv(c, v, "annotations", &cfg->annotations, &cfg->n_annotations) < 0 ||
      jfield(c, v, "linux", oci_linux_node, &cfg->linux, NULL) < 0)
    return -1;
  return 0;
}

int oci_config_parse(const char *json, size_t len, const char *file, struct oci_config **ret,
                     struct error *err)
{
  struct oci_config *cfg = NULL;

  if (oci_parse_doc(json, len, file, conv_config, &cfg, err) < 0) {
    oci_config_free(cfg);
    return -1;
  }
  *ret = cfg;
  return 0;
}

static void hook_free(struct oci_hook *h)
{
  free(h->path);
  strv_free(h->args);
  strv_free(h->env);
}

void oci_config_free(struct oci_config *c)
{
  if (c == NULL)
    return;
  free(c->oci_version);
  free(c->root_path);
  oci_process_free(c->process);
  free(c->hostname);
  free(c->domainname);
  for (size_t i = 0; c->mounts != NULL && i < c->n_mounts; i++) {
    free(c->mounts[i].destination);
    free(c->mounts[i].type);
    free(c->mounts[i].source);
    strv_free(c->mounts[i].options);
    free(c->mounts[i].uid_mappings);
    free(c->mounts[i].gid_mappings);
  }
  free(c->mounts);
  for (int k = 0; k < OCI_HOOK_KINDS; k++) {
    for (size_t i = 0; c->hooks.list[k] != NULL && i < c->hooks.n[k]; i++)
      hook_free(&c->hooks.list[k][i]);
    free(c->hooks.list[k]);
  }
  oci_linux_free(c->linux);
  oci_kv_free(c->annotations, c->n_annotations);
  free(c);
}

const struct oci_namespace *oci_config_namespace(const struct oci_config *c, enum oci_ns_type t)
{
  if (c == NULL || c->linux == NULL)
    return NULL;
  for (size_t i = 0; i < c->linux->n_namespaces; i++)
    if (c->linux->namespaces[i].type == t)
      return &c->linux->namespaces[i];
  return NULL;
}

const char *oci_config_annotation(const struct oci_config *c, const char *key)
{
  if (c == NULL || key == NULL)
    return NULL;
  for (size_t i = 0; i < c->n_annotations; i++)
    if (strcmp(c->annotations[i].key, key) == 0)
      return c->annotations[i].value;
  return NULL;
}

static void gen_mounts(struct jgen *j, const struct oci_config *c)
{
  if (c->mounts == NULL)
    return;
  jg_key(j, "mounts");
  jg_aopen(j);
  for (size_t i = 0; i < c->n_mounts; i++) {
    jg_open(j);
    jg_kstr(j, "destination", c->mounts[i].destination);
    jg_kstr(j, "type", c->mounts[i].type);
    jg_kstr(j, "source", c->mounts[i].source);
    jg_kstrv(j, "options", c->mounts[i].options);
    oci_idmaps_gen(j, "uidMappings", c->mounts[i].uid_mappings, c->mounts[i].n_uid_mappings);
    oci_idmaps_gen(j, "gidMappings", c->mounts[i].gid_mappings, c->mounts[i].n_gid_mappings);
    jg_close(j);
  }
  jg_aclose(j);
}

static bool has_hooks(const struct oci_hooks *h)
{
  for (int k = 0; k < OCI_HOOK_KINDS; k++)
    if (h->list[k] != NULL)
      return true;
  return false;
}

static void gen_hooks(struct jgen *j, const struct oci_hooks *h)
{
  if (!has_hooks(h))
    return;
  jg_key(j, "hooks");
  jg_open(j);
  for (int k = 0; k < OCI_HOOK_KINDS; k++) {
    if (h->list[k] == NULL)
      continue;
    jg_key(j, hook_names[k]);
    jg_aopen(j);
    for (size_t i = 0; i < h->n[k]; i++) {
      const struct oci_hook *hk = &h->list[k][i];
      jg_open(j);
      jg_kstr(j, "path", hk->path);
      jg_kstrv(j, "args", hk->args);
      jg_kstrv(j, "env", hk->env);
      if (hk->has_timeout)
        jg_ki64(j, "timeout", hk->timeout);
      jg_close(j);
    }
    jg_aclose(j);
  }
  jg_close(j);
}

void oci_config_gen(struct jgen *j, const struct oci_config *c)
{
  jg_open(j);
  jg_kstr(j, "ociVersion", c->oci_version);
  if (c->process != NULL) {
    jg_key(j, "process");
    oci_process_gen(j, c->process);
  }
  jg_key(j, "root");
  jg_open(j);
  jg_kstr(j, "path", c->root_path);
  if (c->root_readonly)
    jg_kbool(j, "readonly", true);
  jg_close(j);
  jg_kstr(j, "hostname", c->hostname);
  jg_kstr(j, "domainname", c->domainname);
  gen_mounts(j, c);
  gen_hooks(j, &c->hooks);
  jg_kkv(j, "annotations", c->annotations, c->n_annotations);
  if (c->linux != NULL) {
    jg_key(j, "linux");
    oci_linux_gen(j, c->linux);
  }
  jg_close(j);
}

int oci_config_to_json(const struct oci_config *c, char **ret_json, size_t *ret_len,
                       struct error *err)
{
  struct jgen j;

  jgen_init(&j, false);
  oci_config_gen(&j, c);
  return jgen_finish(&j, "config", ret_json, ret_len, err);
}

int oci_config_to_json_pretty(const struct oci_config *c, char **ret_json, size_t *ret_len,
                              struct error *err)
{
  struct jgen j;

  jgen_init(&j, true);
  oci_config_gen(&j, c);
  return jgen_finish(&j, "config", ret_json, ret_len, err);
}
