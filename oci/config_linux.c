/* config_linux.c - the "linux" object of config.json: namespaces, id mappings,
 * time offsets, devices, cgroups path, resources, propagation, masked and
 * read-only paths, sysctl, seccomp (config_seccomp.c) and personality. */
#include <sys/stat.h>

#include "common/util.h"
#include "oci/internal.h"

static int conv_ns_type(struct jctx *c, const struct jnode *v, void *ret)
{
  int t;

  if (jexpect(c, v, JT_STRING) < 0)
    return -1;
  t = oci_ns_from_name(v->s);
  if (t < 0)
    return jfail(c, "unknown namespace type `%s`", v->s);
  *(enum oci_ns_type *)ret = (enum oci_ns_type)t;
  return 0;
}

/* An empty path is no path, as runc and the Go spec types read it (omitempty):
 * a new namespace of that type. */
static int conv_ns_path(struct jctx *c, const struct jnode *v, void *ret)
{
  if (v->type == JT_STRING && v->s[0] == '\0')
    return 0;
  return j_abspath(c, v, ret);
}

static int conv_ns(struct jctx *c, const struct jnode *v, void *ret)
{
  struct oci_namespace *ns = ret;

  if (jexpect(c, v, JT_OBJECT) < 0)
    return -1;
  if (jfield_req(c, v, "type", conv_ns_type, &ns->type) < 0 ||
      jfield(c, v, "path", conv_ns_path, &ns->path, NULL) < 0)
    return -1;
  return 0;
}

static int check_namespaces(struct jctx *c, const struct oci_linux *l)
{
  unsigned seen = 0;

  for (size_t i = 0; i < l->n_namespaces; i++) {
    unsigned bit = 1u << l->namespaces[i].type;
    if (seen & bit) {
      size_t m = jpush_key(c, "namespaces");
      size_t m2 = jpush_index(c, i);
      jfail_at(c, "type", "duplicate namespace `%s`", oci_ns_name(l->namespaces[i].type));
      jpop(c, m2);
      jpop(c, m);
      return -1;
    }
    seen |= bit;
  }
  return 0;
}

static bool has_ns(const struct oci_linux *l, enum oci_ns_type t)
{
  for (size_t i = 0; i < l->n_namespaces; i++)
    if (l->namespaces[i].type == t)
      return true;
  return false;
}

int oci_idmap_node(struct jctx *c, const struct jnode *v, void *ret)
{
  struct oci_idmap *m = ret;

  if (jexpect(c, v, JT_OBJECT) < 0)
    return -1;
  if (jfield_req(c, v, "containerID", j_u32, &m->container_id) < 0 ||
      jfield_req(c, v, "hostID", j_u32, &m->host_id) < 0 ||
      jfield_req(c, v, "size", j_u32, &m->size) < 0)
    return -1;
  if (m->size == 0)
    return jfail_at(c, "size", "must be greater than 0");
  if ((uint64_t)m->container_id + m->size - 1 > UINT32_MAX ||
      (uint64_t)m->host_id + m->size - 1 > UINT32_MAX)
    return jfail_at(c, "size", "out of range (the mapping wraps past 4294967295)");
  return 0;
}

static int conv_time_offsets(struct jctx *c, const struct jnode *v, void *ret)
{
  struct oci_linux *l = ret;

  if (jexpect(c, v, JT_OBJECT) < 0)
    return -1;
  l->time_offsets = xmalloc0(v->n * sizeof *l->time_offsets);
  l->n_time_offsets = v->n;
  for (size_t i = 0; i < v->n; i++) {
    struct oci_time_offset *t = &l->time_offsets[i];
    const struct jnode *o = v->items[i];
    size_t m = jpush_mapkey(c, v->keys[i]);
    int r = 0;

    if (strcmp(v->keys[i], "monotonic") != 0 && strcmp(v->keys[i], "boottime") != 0)
      r = jfail(c, "unknown clock (expected monotonic or boottime)");
    else if (jexpect(c, o, JT_OBJECT) < 0)
      r = -1;
    else
      t->clock = xstrdup(v->keys[i]);
    if (r == 0 && (jfield(c, o, "secs", j_i64, &t->secs, NULL) < 0 ||
                   jfield(c, o, "nanosecs", j_u32, &t->nanosecs, NULL) < 0))
      r = -1;
    if (r == 0 && t->nanosecs >= 1000000000u)
      r = jfail_at(c, "nanosecs", "out of range (maximum 999999999)");
    jpop(c, m);
    if (r < 0)
      return -1;
  }
  return 0;
}

static int conv_dev_type(struct jctx *c, const struct jnode *v, void *ret)
{
  if (jexpect(c, v, JT_STRING) < 0)
    return -1;
  if (strlen(v->s) != 1 || strchr("cbup", v->s[0]) == NULL)
    return jfail(c, "must be one of \"c\", \"b\", \"u\", \"p\"");
  *(char *)ret = v->s[0];
  return 0;
}

static int conv_devnum(struct jctx *c, const struct jnode *v, void *ret)
{
  if (j_i64(c, v, ret) < 0)
    return -1;
  if (*(int64_t *)ret < 0)
    return jfail(c, "must not be negative");
  return 0;
}

static uint32_t dev_type_ifmt(char type)
{
  switch (type) {
  case 'b':
    return S_IFBLK;
  case 'p':
    return S_IFIFO;
  default:
    return S_IFCHR;
  }
}

static int conv_device(struct jctx *c, const struct jnode *v, void *ret)
{
  struct oci_device *d = ret;
  bool has_major = false, has_minor = false;

  if (jexpect(c, v, JT_OBJECT) < 0)
    return -1;
  if (jfield_req(c, v, "path", j_abspath, &d->path) < 0 ||
      jfield_req(c, v, "type", conv_dev_type, &d->type) < 0 ||
      jfield(c, v, "major", conv_devnum, &d->major, &has_major) < 0 ||
      jfield(c, v, "minor", conv_devnum, &d->minor, &has_minor) < 0 ||
      jfield(c, v, "fileMode", j_u32, &d->file_mode, &d->has_file_mode) < 0 ||
      jfield(c, v, "uid", j_u32, &d->uid, &d->has_uid) < 0 ||
      jfield(c, v, "gid", j_u32, &d->gid, &d->has_gid) < 0)
    return -1;
  if (d->type != 'p' && !has_major)
    return jfail_at(c, "major", "is required");
  if (d->type != 'p' && !has_minor)
    return jfail_at(c, "minor", "is required");
  if (d->has_file_mode) {
    /* Podman's --privileged passes each host device's st_mode, type bits and all
     * (020666): runc and crun take them; they must name the device's own type. */
    uint32_t fmt = d->file_mode & S_IFMT;

    if (fmt != 0 && fmt != dev_type_ifmt(d->type))
      return jfail_at(c, "fileMode", "file type bits 0%o do not match type \"%c\"", fmt, d->type);
    d->file_mode &= ~(uint32_t)S_IFMT;
    if (d->file_mode > 07777)
      return jfail_at(c, "fileMode", "out of range (maximum 07777)");
  }
  return 0;
}

static int conv_propagation(struct jctx *c, const struct jnode *v, void *ret)
{
  if (j_str(c, v, ret) < 0)
    return -1;
  if (!oci_name_in(oci_mount_propagations, *(char **)ret))
    return jfail(c, "unknown propagation `%s`", *(char **)ret);
  return 0;
}

static int conv_personality(struct jctx *c, const struct jnode *v, void *ret)
{
  struct oci_linux *l = ret;
  char **flags = NULL;
  int r;

  if (jexpect(c, v, JT_OBJECT) < 0)
    return -1;
  if (jfield_req(c, v, "domain", j_str, &l->personality_domain) < 0)
    return -1;
  if (strcmp(l->personality_domain, "LINUX") != 0 && strcmp(l->personality_domain, "LINUX32") != 0)
    return jfail_at(c, "domain", "must be \"LINUX\" or \"LINUX32\"");
  /* flags are type-checked; the spec defines none yet */
  r = jfield(c, v, "flags", j_strv, &flags, NULL);
  strv_free(flags);
  if (r < 0)
    return -1;
  l->has_personality = true;
  return 0;
}

/* linux.intelRdt: agentrt has no Intel RDT (`features` says intelRdt is not
 * enabled), so a schema or monitoring asked for is refused rather than
 * silently not applied (runc refuses the schemas where the host has no
 * RDT/CAT or RDT/MBA); a closID alone is checked as runc checks it and has
 * no effect, as with runc on such a host. */
static int conv_intel_rdt(struct jctx *c, const struct jnode *v, void *ret)
{
  static const char *const wants[] = {"l3CacheSchema", "memBwSchema"};
  cleanup_free char *clos = NULL;
  cleanup_strv char **schemata = NULL;
  bool monitoring = false;

  (void)ret;
  if (jexpect(c, v, JT_OBJECT) < 0)
    return -1;
  if (jfield(c, v, "closID", j_str, &clos, NULL) < 0 ||
      jfield(c, v, "schemata", j_strv, &schemata, NULL) < 0 ||
      jfield(c, v, "enableMonitoring", j_bool, &monitoring, NULL) < 0)
    return -1;
  if (clos != NULL &&
      (strcmp(clos, ".") == 0 || strcmp(clos, "..") == 0 || strchr(clos, '/') != NULL))
    return jfail_at(c, "closID", "invalid `%s`", clos);
  for (size_t i = 0; i < sizeof wants / sizeof *wants; i++) {
    cleanup_free char *schema = NULL;
    if (jfield(c, v, wants[i], j_str, &schema, NULL) < 0)
      return -1;
    if (schema != NULL && schema[0] != '\0')
      return jfail_at(c, wants[i], "Intel RDT is not supported");
  }
  if (schemata != NULL && schemata[0] != NULL)
    return jfail_at(c, "schemata", "Intel RDT is not supported");
  if (monitoring)
    return jfail_at(c, "enableMonitoring", "Intel RDT is not supported");
  return 0;
}

/* A user namespace of the container's own: in the list, no path to join ("" is
 * a new one too, as runc reads it). */
static bool new_userns(const struct oci_linux *l)
{
  for (size_t i = 0; i < l->n_namespaces; i++)
    if (l->namespaces[i].type == OCI_NS_USER &&
        (l->namespaces[i].path == NULL || l->namespaces[i].path[0] == '\0'))
      return true;
  return false;
}

static int check_linux(struct jctx *c, const struct oci_linux *l)
{
  if (check_namespaces(c, l) < 0)
    return -1;
  /* userns-no-mappings: nothing would be mapped (create failed later with
   * EOVERFLOW on the first file it made); runc refuses it too */
  if (new_userns(l) && l->n_uid_mappings == 0)
    return jfail_at(c, "uidMappings", "a new user namespace needs uid mappings");
  if (new_userns(l) && l->n_gid_mappings == 0)
    return jfail_at(c, "gidMappings", "a new user namespace needs gid mappings");
  if (l->uid_mappings != NULL && l->n_uid_mappings > 0 && !has_ns(l, OCI_NS_USER))
    return jfail_at(c, "uidMappings", "mappings given but no user namespace configured");
  if (l->gid_mappings != NULL && l->n_gid_mappings > 0 && !has_ns(l, OCI_NS_USER))
    return jfail_at(c, "gidMappings", "mappings given but no user namespace configured");
  if (l->n_time_offsets > 0 && !has_ns(l, OCI_NS_TIME))
    return jfail_at(c, "timeOffsets", "offsets given but no time namespace configured");
  return 0;
}

int oci_linux_node(struct jctx *c, const struct jnode *v, void *ret)
{
  struct oci_linux **out = ret;
  struct oci_linux *l;
  const size_t msz = sizeof(struct oci_idmap);

  if (jexpect(c, v, JT_OBJECT) < 0)
    return -1;
  l = *out = xmalloc0(sizeof **out);
  if (jfield_array(c, v, "namespaces", sizeof(struct oci_namespace), conv_ns, &l->namespaces,
                   &l->n_namespaces) < 0 ||
      jfield_array(c, v, "uidMappings", msz, oci_idmap_node, &l->uid_mappings, &l->n_uid_mappings) <
          0 ||
      jfield_array(c, v, "gidMappings", msz, oci_idmap_node, &l->gid_mappings, &l->n_gid_mappings) <
          0 ||
      jfield(c, v, "timeOffsets", conv_time_offsets, l, NULL) < 0 ||
      jfield_array(c, v, "devices", sizeof(struct oci_device), conv_device, &l->devices,
                   &l->n_devices) < 0 ||
      jfield(c, v, "cgroupsPath", j_str, &l->cgroups_path, NULL) < 0 ||
      jfield(c, v, "resources", oci_resources_node, &l->resources, NULL) < 0 ||
      jfield(c, v, "rootfsPropagation", conv_propagation, &l->rootfs_propagation, NULL) < 0 ||
      jfield(c, v, "maskedPaths", j_abspathv, &l->masked_paths, NULL) < 0 ||
      jfield(c, v, "readonlyPaths", j_abspathv, &l->readonly_paths, NULL) < 0 ||
      jfield(c, v, "mountLabel", j_str, &l->mount_label, NULL) < 0 ||
      jfield_kv(c, v, "sysctl", &l->sysctl, &l->n_sysctl) < 0 ||
      jfield(c, v, "seccomp", oci_seccomp_node, &l->seccomp, NULL) < 0 ||
      jfield(c, v, "personality", conv_personality, l, NULL) < 0 ||
      jfield(c, v, "intelRdt", conv_intel_rdt, NULL, NULL) < 0)
    return -1;
  return check_linux(c, l);
}

void oci_linux_free(struct oci_linux *l)
{
  if (l == NULL)
    return;
  for (size_t i = 0; l->namespaces != NULL && i < l->n_namespaces; i++)
    free(l->namespaces[i].path);
  free(l->namespaces);
  free(l->uid_mappings);
  free(l->gid_mappings);
  for (size_t i = 0; l->time_offsets != NULL && i < l->n_time_offsets; i++)
    free(l->time_offsets[i].clock);
  free(l->time_offsets);
  for (size_t i = 0; l->devices != NULL && i < l->n_devices; i++)
    free(l->devices[i].path);
  free(l->devices);
  free(l->cgroups_path);
  oci_resources_free(l->resources);
  free(l->rootfs_propagation);
  strv_free(l->masked_paths);
  strv_free(l->readonly_paths);
  free(l->mount_label);
  oci_kv_free(l->sysctl, l->n_sysctl);
  oci_seccomp_free(l->seccomp);
  free(l->personality_domain);
  free(l);
}

void oci_idmaps_gen(struct jgen *j, const char *key, const struct oci_idmap *m, size_t n)
{
  if (m == NULL)
    return;
  jg_key(j, key);
  jg_aopen(j);
  for (size_t i = 0; i < n; i++) {
    jg_open(j);
    jg_ku64(j, "containerID", m[i].container_id);
    jg_ku64(j, "hostID", m[i].host_id);
    jg_ku64(j, "size", m[i].size);
    jg_close(j);
  }
  jg_aclose(j);
}

static void gen_namespaces(struct jgen *j, const struct oci_linux *l)
{
  if (l->namespaces == NULL)
    return;
  jg_key(j, "namespaces");
  jg_aopen(j);
  for (size_t i = 0; i < l->n_namespaces; i++) {
    jg_open(j);
    jg_kstr(j, "type", oci_ns_name(l->namespaces[i].type));
    jg_kstr(j, "path", l->namespaces[i].path);
    jg_close(j);
  }
  jg_aclose(j);
}

static void gen_time_offsets(struct jgen *j, const struct oci_linux *l)
{
  if (l->time_offsets == NULL)
    return;
  jg_key(j, "timeOffsets");
  jg_open(j);
  for (size_t i = 0; i < l->n_time_offsets; i++) {
    jg_key(j, l->time_offsets[i].clock);
    jg_open(j);
    jg_ki64(j, "secs", l->time_offsets[i].secs);
    jg_ku64(j, "nanosecs", l->time_offsets[i].nanosecs);
    jg_close(j);
  }
  jg_close(j);
}

static void gen_devices(struct jgen *j, const struct oci_linux *l)
{
  if (l->devices == NULL)
    return;
  jg_key(j, "devices");
  jg_aopen(j);
  for (size_t i = 0; i < l->n_devices; i++) {
    const struct oci_device *d = &l->devices[i];
    char type[2] = {d->type, '\0'};
    jg_open(j);
    jg_kstr(j, "path", d->path);
    jg_kstr(j, "type", type);
    if (d->type != 'p' || d->major != 0 || d->minor != 0) {
      jg_ki64(j, "major", d->major);
      jg_ki64(j, "minor", d->minor);
    }
    if (d->has_file_mode)
      jg_ku64(j, "fileMode", d->file_mode);
    if (d->has_uid)
      jg_ku64(j, "uid", d->uid);
    if (d->has_gid)
      jg_ku64(j, "gid", d->gid);
    jg_close(j);
  }
  jg_aclose(j);
}

void oci_linux_gen(struct jgen *j, const struct oci_linux *l)
{
  jg_open(j);
  oci_idmaps_gen(j, "uidMappings", l->uid_mappings, l->n_uid_mappings);
  oci_idmaps_gen(j, "gidMappings", l->gid_mappings, l->n_gid_mappings);
  jg_kkv(j, "sysctl", l->sysctl, l->n_sysctl);
  if (l->resources != NULL) {
    jg_key(j, "resources");
    oci_resources_gen(j, l->resources);
  }
  jg_kstr(j, "cgroupsPath", l->cgroups_path);
  gen_namespaces(j, l);
  gen_time_offsets(j, l);
  gen_devices(j, l);
  if (l->seccomp != NULL) {
    jg_key(j, "seccomp");
    oci_seccomp_gen(j, l->seccomp);
  }
  jg_kstr(j, "rootfsPropagation", l->rootfs_propagation);
  jg_kstrv(j, "maskedPaths", l->masked_paths);
  jg_kstrv(j, "readonlyPaths", l->readonly_paths);
  jg_kstr(j, "mountLabel", l->mount_label);
  if (l->has_personality) {
    jg_key(j, "personality");
    jg_open(j);
    jg_kstr(j, "domain", l->personality_domain);
    jg_close(j);
  }
  jg_close(j);
}
