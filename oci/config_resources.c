/* config_resources.c - LinuxResources: linux.resources in config.json and the
 * document of `update --resources`.  Parse, validate, write, free. */
#include "common/util.h"
#include "oci/internal.h"

static int conv_devtype(struct jctx *c, const struct jnode *v, void *ret)
{
  if (jexpect(c, v, JT_STRING) < 0)
    return -1;
  if (strcmp(v->s, "a") != 0 && strcmp(v->s, "c") != 0 && strcmp(v->s, "b") != 0)
    return jfail(c, "must be \"a\", \"c\" or \"b\"");
  *(char *)ret = v->s[0];
  return 0;
}

/* r, w and m; other letters beside them are dropped, as runc reads the
 * field ("rwa" is "rw"), a string with none of the three is refused */
static int conv_access(struct jctx *c, const struct jnode *v, void *ret)
{
  char *a, *d;

  if (j_str(c, v, ret) < 0)
    return -1;
  a = *(char **)ret;
  if (*a != '\0' && strpbrk(a, "rwm") == NULL)
    return jfail(c, "must be a combination of r, w and m");
  d = a;
  for (const char *s = a; *s; s++)
    if (*s == 'r' || *s == 'w' || *s == 'm')
      *d++ = *s;
  *d = '\0';
  return 0;
}

static int conv_devcg(struct jctx *c, const struct jnode *v, void *ret)
{
  struct oci_device_cgroup *d = ret;

  if (jexpect(c, v, JT_OBJECT) < 0)
    return -1;
  if (jfield_req(c, v, "allow", j_bool, &d->allow) < 0 ||
      jfield(c, v, "type", conv_devtype, &d->type, NULL) < 0 ||
      jfield(c, v, "major", j_i64, &d->major, &d->has_major) < 0 ||
      jfield(c, v, "minor", j_i64, &d->minor, &d->has_minor) < 0 ||
      jfield(c, v, "access", conv_access, &d->access, NULL) < 0)
    return -1;
  return 0;
}

static int conv_memory(struct jctx *c, const struct jnode *v, void *ret)
{
  struct oci_resources *r = ret;

  if (jexpect(c, v, JT_OBJECT) < 0)
    return -1;
  if (jfield(c, v, "limit", j_i64, &r->memory_limit, &r->has_memory_limit) < 0 ||
      jfield(c, v, "reservation", j_i64, &r->memory_reservation, &r->has_memory_reservation) < 0 ||
      jfield(c, v, "swap", j_i64, &r->memory_swap, &r->has_memory_swap) < 0 ||
      jfield(c, v, "kernel", j_i64, &r->memory_kernel, &r->has_memory_kernel) < 0 ||
      jfield(c, v, "kernelTCP", j_i64, &r->memory_kernel_tcp, &r->has_memory_kernel_tcp) < 0 ||
      jfield(c, v, "swappiness", j_u64, &r->memory_swappiness, &r->has_memory_swappiness) < 0 ||
      jfield(c, v, "disableOOMKiller", j_bool, &r->disable_oom_killer, &r->has_disable_oom_killer) <
          0 ||
      jfield(c, v, "useHierarchy", j_bool, &r->use_hierarchy, &r->has_use_hierarchy) < 0 ||
      jfield(c, v, "checkBeforeUpdate", j_bool, &r->check_before_update,
             &r->has_check_before_update) < 0)
    return -1;
  /* engines encode "unset" as (uint64)-1; runc treats it the same way */
  if (r->has_memory_swappiness && r->memory_swappiness == UINT64_MAX)
    r->has_memory_swappiness = false;
  if (r->has_memory_swappiness && r->memory_swappiness > 100)
    return jfail_at(c, "swappiness", "out of range (0 to 100)");
  return 0;
}

static int conv_cpu(struct jctx *c, const struct jnode *v, void *ret)
{
  struct oci_resources *r = ret;

  if (jexpect(c, v, JT_OBJECT) < 0)
    return -1;
  if (jfield(c, v, "shares", j_u64, &r->cpu_shares, &r->has_cpu_shares) < 0 ||
      jfield(c, v, "quota", j_i64, &r->cpu_quota, &r->has_cpu_quota) < 0 ||
      jfield(c, v, "burst", j_u64, &r->cpu_burst, &r->has_cpu_burst) < 0 ||
      jfield(c, v, "period", j_u64, &r->cpu_period, &r->has_cpu_period) < 0 ||
      jfield(c, v, "realtimeRuntime", j_i64, &r->cpu_realtime_runtime,
             &r->has_cpu_realtime_runtime) < 0 ||
      jfield(c, v, "realtimePeriod", j_u64, &r->cpu_realtime_period, &r->has_cpu_realtime_period) <
          0 ||
      jfield(c, v, "cpus", j_str, &r->cpu_cpus, NULL) < 0 ||
      jfield(c, v, "mems", j_str, &r->cpu_mems, NULL) < 0 ||
      jfield(c, v, "idle", j_i64, &r->cpu_idle, &r->has_cpu_idle) < 0)
    return -1;
  return 0;
}

static int conv_pids(struct jctx *c, const struct jnode *v, void *ret)
{
  struct oci_resources *r = ret;

  if (jexpect(c, v, JT_OBJECT) < 0)
    return -1;
  return jfield(c, v, "limit", j_i64, &r->pids_limit, &r->has_pids_limit);
}

static int conv_weight_dev(struct jctx *c, const struct jnode *v, void *ret)
{
  struct oci_weight_device *d = ret;

  if (jexpect(c, v, JT_OBJECT) < 0)
    return -1;
  if (jfield_req(c, v, "major", j_i64, &d->major) < 0 ||
      jfield_req(c, v, "minor", j_i64, &d->minor) < 0 ||
      jfield(c, v, "weight", j_u16, &d->weight, &d->has_weight) < 0 ||
      jfield(c, v, "leafWeight", j_u16, &d->leaf_weight, &d->has_leaf_weight) < 0)
    return -1;
  return 0;
}

static int conv_throttle_dev(struct jctx *c, const struct jnode *v, void *ret)
{
  struct oci_throttle_device *d = ret;

  if (jexpect(c, v, JT_OBJECT) < 0)
    return -1;
  if (jfield_req(c, v, "major", j_i64, &d->major) < 0 ||
      jfield_req(c, v, "minor", j_i64, &d->minor) < 0 ||
      jfield_req(c, v, "rate", j_u64, &d->rate) < 0)
    return -1;
  return 0;
}

static int conv_blkio(struct jctx *c, const struct jnode *v, void *ret)
{
  struct oci_resources *r = ret;
  const size_t tsz = sizeof(struct oci_throttle_device);

  if (jexpect(c, v, JT_OBJECT) < 0)
    return -1;
  if (jfield(c, v, "weight", j_u16, &r->blkio_weight, &r->has_blkio_weight) < 0 ||
      jfield(c, v, "leafWeight", j_u16, &r->blkio_leaf_weight, &r->has_blkio_leaf_weight) < 0 ||
      jfield_array(c, v, "weightDevice", sizeof(struct oci_weight_device), conv_weight_dev,
                   &r->blkio_weight_device, &r->n_blkio_weight_device) < 0 ||
      jfield_array(c, v, "throttleReadBpsDevice", tsz, conv_throttle_dev, &r->throttle_read_bps,
                   &r->n_throttle_read_bps) < 0 ||
      jfield_array(c, v, "throttleWriteBpsDevice", tsz, conv_throttle_dev, &r->throttle_write_bps,
                   &r->n_throttle_write_bps) < 0 ||
      jfield_array(c, v, "throttleReadIOPSDevice", tsz, conv_throttle_dev, &r->throttle_read_iops,
                   &r->n_throttle_read_iops) < 0 ||
      jfield_array(c, v, "throttleWriteIOPSDevice", tsz, conv_throttle_dev, &r->throttle_write_iops,
                   &r->n_throttle_write_iops) < 0)
    return -1;
  return 0;
}

static int conv_hugepage(struct jctx *c, const struct jnode *v, void *ret)
{
  struct oci_hugepage_limit *h = ret;

  if (jexpect(c, v, JT_OBJECT) < 0)
    return -1;
  if (jfield_req(c, v, "pageSize", j_str, &h->page_size) < 0 ||
      jfield_req(c, v, "limit", j_u64, &h->limit) < 0)
    return -1;
  if (h->page_size[0] == '\0')
    return jfail_at(c, "pageSize", "must not be empty");
  return 0;
}

static int conv_net_prio(struct jctx *c, const struct jnode *v, void *ret)
{
  struct oci_net_priority *p = ret;

  if (jexpect(c, v, JT_OBJECT) < 0)
    return -1;
  if (jfield_req(c, v, "name", j_str, &p->name) < 0 ||
      jfield_req(c, v, "priority", j_u32, &p->priority) < 0)
    return -1;
  /* one "name prio" line per write to net_prio.ifpriomap: no blanks in the name */
  if (p->name[0] == '\0' || strpbrk(p->name, " \t\n") != NULL || strlen(p->name) >= 16)
    return jfail_at(c, "name", "`%s` is not an interface name", p->name);
  return 0;
}

static int conv_network(struct jctx *c, const struct jnode *v, void *ret)
{
  struct oci_resources *r = ret;

  if (jexpect(c, v, JT_OBJECT) < 0)
    return -1;
  if (jfield(c, v, "classID", j_u32, &r->net_class_id, &r->has_net_class_id) < 0 ||
      jfield_array(c, v, "priorities", sizeof(struct oci_net_priority), conv_net_prio,
                   &r->net_priorities, &r->n_net_priorities) < 0)
    return -1;
  return 0;
}

int oci_resources_node(struct jctx *c, const struct jnode *v, void *ret)
{
  struct oci_resources **out = ret;
  struct oci_resources *r;

  if (jexpect(c, v, JT_OBJECT) < 0)
    return -1;
  r = *out = xmalloc0(sizeof **out);
  if (jfield_array(c, v, "devices", sizeof(struct oci_device_cgroup), conv_devcg, &r->devices,
                   &r->n_devices) < 0 ||
      jfield(c, v, "memory", conv_memory, r, NULL) < 0 ||
      jfield(c, v, "cpu", conv_cpu, r, NULL) < 0 || jfield(c, v, "pids", conv_pids, r, NULL) < 0 ||
      jfield(c, v, "blockIO", conv_blkio, r, NULL) < 0 ||
      jfield_array(c, v, "hugepageLimits", sizeof(struct oci_hugepage_limit), conv_hugepage,
                   &r->hugepage_limits, &r->n_hugepage_limits) < 0 ||
      jfield(c, v, "network", conv_network, r, NULL) < 0 ||
      jfield_kv(c, v, "unified", &r->unified, &r->n_unified) < 0)
    return -1;
  return 0;
}

int oci_resources_parse(const char *json, size_t len, const char *file, struct oci_resources **ret,
                        struct error *err)
{
  struct oci_resources *r = NULL;

  if (oci_parse_doc(json, len, file, oci_resources_node, &r, err) < 0) {
    oci_resources_free(r);
    return -1;
  }
  *ret = r;
  return 0;
}

void oci_resources_free(struct oci_resources *r)
{
  if (r == NULL)
    return;
  for (size_t i = 0; r->devices != NULL && i < r->n_devices; i++)
    free(r->devices[i].access);
  free(r->devices);
  free(r->cpu_cpus);
  free(r->cpu_mems);
  free(r->blkio_weight_device);
  free(r->throttle_read_bps);
  free(r->throttle_write_bps);
  free(r->throttle_read_iops);
  free(r->throttle_write_iops);
  for (size_t i = 0; r->hugepage_limits != NULL && i < r->n_hugepage_limits; i++)
    free(r->hugepage_limits[i].page_size);
  free(r->hugepage_limits);
  for (size_t i = 0; r->net_priorities != NULL && i < r->n_net_priorities; i++)
    free(r->net_priorities[i].name);
  free(r->net_priorities);
  oci_kv_free(r->unified, r->n_unified);
  free(r);
}

static void gen_devices(struct jgen *j, const struct oci_resources *r)
{
  if (r->devices == NULL)
    return;
  jg_key(j, "devices");
  jg_aopen(j);
  for (size_t i = 0; i < r->n_devices; i++) {
    const struct oci_device_cgroup *d = &r->devices[i];
    char type[2] = {d->type, '\0'};
    jg_open(j);
    jg_kbool(j, "allow", d->allow);
    if (d->type != 0)
      jg_kstr(j, "type", type);
    if (d->has_major)
      jg_ki64(j, "major", d->major);
    if (d->has_minor)
      jg_ki64(j, "minor", d->minor);
    jg_kstr(j, "access", d->access);
    jg_close(j);
  }
  jg_aclose(j);
}

static bool has_memory(const struct oci_resources *r)
{
  return r->has_memory_limit || r->has_memory_reservation || r->has_memory_swap ||
         r->has_memory_kernel || r->has_memory_kernel_tcp || r->has_memory_swappiness ||
         r->has_disable_oom_killer || r->has_use_hierarchy || r->has_check_before_update;
}

static void gen_memory(struct jgen *j, const struct oci_resources *r)
{
  if (!has_memory(r))
    return;
  jg_key(j, "memory");
  jg_open(j);
  if (r->has_memory_limit)
    jg_ki64(j, "limit", r->memory_limit);
  if (r->has_memory_reservation)
    jg_ki64(j, "reservation", r->memory_reservation);
  if (r->has_memory_swap)
    jg_ki64(j, "swap", r->memory_swap);
  if (r->has_memory_kernel)
    jg_ki64(j, "kernel", r->memory_kernel);
  if (r->has_memory_kernel_tcp)
    jg_ki64(j, "kernelTCP", r->memory_kernel_tcp);
  if (r->has_memory_swappiness)
    jg_ku64(j, "swappiness", r->memory_swappiness);
  if (r->has_disable_oom_killer)
    jg_kbool(j, "disableOOMKiller", r->disable_oom_killer);
  if (r->has_use_hierarchy)
    jg_kbool(j, "useHierarchy", r->use_hierarchy);
  if (r->has_check_before_update)
    jg_kbool(j, "checkBeforeUpdate", r->check_before_update);
  jg_close(j);
}

static void gen_cpu(struct jgen *j, const struct oci_resources *r)
{
  if (!(r->has_cpu_shares || r->has_cpu_quota || r->has_cpu_burst || r->has_cpu_period ||
        r->has_cpu_realtime_runtime || r->has_cpu_realtime_period || r->has_cpu_idle ||
        r->cpu_cpus != NULL || r->cpu_mems != NULL))
    return;
  jg_key(j, "cpu");
  jg_open(j);
  if (r->has_cpu_shares)
    jg_ku64(j, "shares", r->cpu_shares);
  if (r->has_cpu_quota)
    jg_ki64(j, "quota", r->cpu_quota);
  if (r->has_cpu_burst)
    jg_ku64(j, "burst", r->cpu_burst);
  if (r->has_cpu_period)
    jg_ku64(j, "period", r->cpu_period);
  if (r->has_cpu_realtime_runtime)
    jg_ki64(j, "realtimeRuntime", r->cpu_realtime_runtime);
  if (r->has_cpu_realtime_period)
    jg_ku64(j, "realtimePeriod", r->cpu_realtime_period);
  jg_kstr(j, "cpus", r->cpu_cpus);
  jg_kstr(j, "mems", r->cpu_mems);
  if (r->has_cpu_idle)
    jg_ki64(j, "idle", r->cpu_idle);
  jg_close(j);
}

static void gen_throttle(struct jgen *j, const char *key, const struct oci_throttle_device *d,
                         size_t n)
{
  if (d == NULL)
    return;
  jg_key(j, key);
  jg_aopen(j);
  for (size_t i = 0; i < n; i++) {
    jg_open(j);
    jg_ki64(j, "major", d[i].major);
    jg_ki64(j, "minor", d[i].minor);
    jg_ku64(j, "rate", d[i].rate);
    jg_close(j);
  }
  jg_aclose(j);
}

static void gen_weight_devices(struct jgen *j, const struct oci_resources *r)
{
  if (r->blkio_weight_device == NULL)
    return;
  jg_key(j, "weightDevice");
  jg_aopen(j);
  for (size_t i = 0; i < r->n_blkio_weight_device; i++) {
    const struct oci_weight_device *d = &r->blkio_weight_device[i];
    jg_open(j);
    jg_ki64(j, "major", d->major);
    jg_ki64(j, "minor", d->minor);
    if (d->has_weight)
      jg_ku64(j, "weight", d->weight);
    if (d->has_leaf_weight)
      jg_ku64(j, "leafWeight", d->leaf_weight);
    jg_close(j);
  }
  jg_aclose(j);
}

static void gen_blkio(struct jgen *j, const struct oci_resources *r)
{
  if (!(r->has_blkio_weight || r->has_blkio_leaf_weight || r->blkio_weight_device != NULL ||
        r->throttle_read_bps != NULL || r->throttle_write_bps != NULL ||
        r->throttle_read_iops != NULL || r->throttle_write_iops != NULL))
    return;
  jg_key(j, "blockIO");
  jg_open(j);
  if (r->has_blkio_weight)
    jg_ku64(j, "weight", r->blkio_weight);
  if (r->has_blkio_leaf_weight)
    jg_ku64(j, "leafWeight", r->blkio_leaf_weight);
  gen_weight_devices(j, r);
  gen_throttle(j, "throttleReadBpsDevice", r->throttle_read_bps, r->n_throttle_read_bps);
  gen_throttle(j, "throttleWriteBpsDevice", r->throttle_write_bps, r->n_throttle_write_bps);
  gen_throttle(j, "throttleReadIOPSDevice", r->throttle_read_iops, r->n_throttle_read_iops);
  gen_throttle(j, "throttleWriteIOPSDevice", r->throttle_write_iops, r->n_throttle_write_iops);
  jg_close(j);
}

static void gen_network(struct jgen *j, const struct oci_resources *r)
{
  if (!r->has_net_class_id && r->net_priorities == NULL)
    return;
  jg_key(j, "network");
  jg_open(j);
  if (r->has_net_class_id)
    jg_ku64(j, "classID", r->net_class_id);
  if (r->net_priorities != NULL) {
    jg_key(j, "priorities");
    jg_aopen(j);
    for (size_t i = 0; i < r->n_net_priorities; i++) {
      jg_open(j);
      jg_kstr(j, "name", r->net_priorities[i].name);
      jg_ku64(j, "priority", r->net_priorities[i].priority);
      jg_close(j);
    }
    jg_aclose(j);
  }
  jg_close(j);
}

void oci_resources_gen(struct jgen *j, const struct oci_resources *r)
{
  jg_open(j);
  gen_devices(j, r);
  gen_memory(j, r);
  gen_cpu(j, r);
  if (r->has_pids_limit) {
    jg_key(j, "pids");
    jg_open(j);
    jg_ki64(j, "limit", r->pids_limit);
    jg_close(j);
  }
  gen_blkio(j, r);
  if (r->hugepage_limits != NULL) {
    jg_key(j, "hugepageLimits");
    jg_aopen(j);
    for (size_t i = 0; i < r->n_hugepage_limits; i++) {
      jg_open(j);
      jg_kstr(j, "pageSize", r->hugepage_limits[i].page_size);
      jg_ku64(j, "limit", r->hugepage_limits[i].limit);
      jg_close(j);
    }
    jg_aclose(j);
  }
  gen_network(j, r);
  jg_kkv(j, "unified", r->unified, r->n_unified);
  jg_close(j);
}

int oci_resources_to_json(const struct oci_resources *r, char **ret_json, size_t *ret_len,
                          struct error *err)
{
  struct jgen j;

  jgen_init(&j, false);
  oci_resources_gen(&j, r);
  return jgen_finish(&j, "resources", ret_json, ret_len, err);
}
