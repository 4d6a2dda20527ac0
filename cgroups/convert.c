/* convert.c - pure conversions and checks of the cgroup module (no syscalls).
 *
 * Unit tested directly: shares to weight, blkio weight to io.weight, the
 * OCI memory+swap value to cgroup v2's swap-only value, cpuset syntax, path
 * normalisation (no ".." may leave the hierarchy), the --systemd-cgroup
 * "slice:prefix:name" form and the rules for `unified` keys.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "cgroups/internal.h"
#include "common/util.h"

uint64_t cgroup_shares_to_weight(uint64_t shares)
{
  if (shares == 0)
    return 0;
  if (shares < 2)
    shares = 2;
  if (shares > 262144)
    shares = 262144;
  /* The mapping of runc, crun and Kubernetes: [2, 262144] -> [1, 10000]. */
  return 1 + ((shares - 2) * 9999) / 262142;
}

uint64_t cgroup_blkio_weight_to_io(uint64_t w)
{
  if (w == 0)
    return 0;
  if (w < 10)
    w = 10;
  if (w > 1000)
    w = 1000;
  /* [10, 1000] -> [1, 10000] */
  return 1 + ((w - 10) * 9999) / 990;
}

int cgroup_swap_to_v2(bool has_limit, int64_t limit, int64_t swap, int64_t *ret, struct error *err)
{
  if (swap == 0)
    return 0; /* unset */
  if (swap == -1) {
    *ret = -1;
    return 1;
  }
  if (swap < -1)
    return cg_fail(err, EINVAL, "cgroup: memory.swap: invalid value %" PRId64, swap);
  if (!has_limit || limit <= 0)
    return cg_fail(err, EINVAL, "cgroup: memory.swap %" PRId64 " needs a memory.limit", swap);
  if (swap < limit)
    return cg_fail(err, EINVAL,
                   "cgroup: memory.swap (%" PRId64 ") must be >= memory.limit (%" PRId64
                   "): it counts memory plus swap",
                   swap, limit);
  *ret = swap - limit;
  return 1;
}

const char *cgroup_limit_str(int64_t v, char buf[32])
{
  if (v < 0)
    return "max";
  snprintf(buf, 32, "%" PRId64, v);
  return buf;
}

static int cpuset_num(const char **p, uint64_t *ret)
{
  uint64_t v = 0;
  const char *s = *p;

  if (*s < '0' || *s > '9')
    return -1;
  for (; *s >= '0' && *s <= '9'; s++) {
    v = v * 10 + (uint64_t)(*s - '0');
    if (v > 65535)
      return -1;
  }
  *p = s;
  *ret = v;
  return 0;
}

int cgroup_validate_cpuset(const char *s, const char *what, struct error *err)
{
  const char *p = s;

  if (s == NULL || *s == '\0')
    return 0;
  for (;;) {
    uint64_t a, b;
    if (cpuset_num(&p, &a) < 0)
      goto bad;
    if (*p == '-') {
      p++;
      if (cpuset_num(&p, &b) < 0 || b < a)
        goto bad;
    }
    if (*p == '\0')
      return 0;
    if (*p != ',')
      goto bad;
    p++;
  }
bad:
  return cg_fail(err, EINVAL, "cgroup: %s `%s`: malformed list (expected e.g. `0-3,5`)", what, s);
}

int cgroup_normalize_path(const char *in, char **ret, struct error *err)
{
  cleanup_free char *out = xmalloc(strlen(in) + 2);
  size_t n = 0;
  const char *p = in;

  if (strchr(in, '\n') != NULL)
    return cg_fail(err, EINVAL, "cgroup path `%s`: contains a newline", in);
  if (*p == '/')
    out[n++] = '/';
  while (*p != '\0') {
    const char *end = strchrnul(p, '/');
    size_t len = (size_t)(end - p);
    if (len == 2 && p[0] == '.' && p[1] == '.')
      return cg_fail(err, EINVAL, "cgroup path `%s`: `..` would leave the cgroup hierarchy", in);
    if (len > 0 && !(len == 1 && p[0] == '.')) {
      if (n > 0 && out[n - 1] != '/')
        out[n++] = '/';
      memcpy(out + n, p, len);
      n += len;
    }
    p = *end ? end + 1 : end;
  }
  out[n] = '\0';
  *ret = take_ptr(out);
  return 0;
}

/* "a-b-c.slice" -> "/a.slice/a-b.slice/a-b-c.slice"; "-.slice" -> "". */
static int expand_slice(const char *slice, char **ret, struct error *err)
{
  size_t len = strlen(slice);
  cleanup_free char *name = NULL;
  cleanup_free char *out = NULL;
  size_t olen = 0;

  if (len < 6 || strcmp(slice + len - 6, ".slice") != 0 || strchr(slice, '/') != NULL)
    return cg_fail(err, EINVAL, "cgroup: systemd slice `%s`: invalid name", slice);
  if (streq(slice, "-.slice")) {
    *ret = xstrdup("");
    return 0;
  }
  name = xstrndup(slice, len - 6);
  if (name[0] == '-' || name[strlen(name) - 1] == '-' || strstr(name, "--") != NULL)
    return cg_fail(err, EINVAL, "cgroup: systemd slice `%s`: invalid name", slice);
  out = xmalloc0(len * len + 2);
  for (char *dash = name;; dash++) {
    dash = strchr(dash, '-');
    size_t plen = dash ? (size_t)(dash - name) : strlen(name);
    olen += (size_t)sprintf(out + olen, "/%.*s.slice", (int)plen, name);
    if (dash == NULL)
      break;
  }
  *ret = take_ptr(out);
  return 0;
}

int cgroup_systemd_unit(const char *spec, const char *id, bool rootless, char **ret_slice,
                        char **ret_unit, struct error *err)
{
  cleanup_free char *copy = xstrdup(spec);
  cleanup_free char *slice_path = NULL;
  char *c1 = strchr(copy, ':');
  char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
  const char *slice, *prefix, *name;

  if (c1 == NULL || c2 == NULL || strchr(c2 + 1, ':') != NULL)
    return cg_fail(err, EINVAL,
                   "cgroup path `%s`: expected `slice:prefix:name` with --systemd-cgroup", spec);
  *c1 = '\0';
  *c2 = '\0';
  slice = *copy ? copy : (rootless ? "user.slice" : "system.slice");
  prefix = c1 + 1;
  name = *(c2 + 1) ? c2 + 1 : id;
  if (name == NULL || *name == '\0' || strchr(name, '/') != NULL || strchr(prefix, '/') != NULL)
    return cg_fail(err, EINVAL, "cgroup path `%s`: invalid systemd unit name", spec);
  if (expand_slice(slice, &slice_path, err) < 0)
    return -1;
  *ret_slice = xstrdup(slice);
  if (strlen(name) > 6 && streq(name + strlen(name) - 6, ".slice"))
    *ret_unit = xstrdup(name);
  else if (*prefix == '\0')
    *ret_unit = xfmt("%s.scope", name);
  else
    *ret_unit = xfmt("%s-%s.scope", prefix, name);
  return 0;
}

int cgroup_systemd_to_path(const char *spec, const char *id, bool rootless, char **ret,
                           struct error *err)
{
  cleanup_free char *slice = NULL;
  cleanup_free char *unit = NULL;
  cleanup_free char *slice_path = NULL;
  cleanup_free char *joined = NULL;

  if (cgroup_systemd_unit(spec, id, rootless, &slice, &unit, err) < 0 ||
      expand_slice(slice, &slice_path, err) < 0)
    return -1;
  joined = xfmt("%s/%s", slice_path, unit);
  return cgroup_normalize_path(joined, ret, err);
}

int cgroup_unified_key_check(const char *key, struct error *err)
{
  static const char *const allowed_cgroup_keys[] = {"cgroup.max.depth", "cgroup.max.descendants"};
  const char *dot;

  if (key == NULL || *key == '\0')
    return cg_fail(err, EINVAL, "cgroup: unified: empty key");
  for (const char *p = key; *p; p++) {
    bool ok =
        (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '.' || *p == '_' || *p == '-';
    if (!ok)
      return cg_fail(err, EINVAL,
                     "cgroup: unified key `%s`: only a file name of the container's cgroup "
                     "is allowed",
                     key);
  }
  dot = strchr(key, '.');
  if (dot == NULL || dot == key || dot[1] == '\0' || strstr(key, "..") != NULL)
    return cg_fail(err, EINVAL, "cgroup: unified key `%s`: expected `<controller>.<file>`", key);
  if (str_has_prefix(key, "cgroup.")) {
    for (size_t i = 0; i < ARRAY_SIZE(allowed_cgroup_keys); i++)
      if (streq(key, allowed_cgroup_keys[i]))
        return 0;
    return cg_fail(err, EPERM,
                   "cgroup: unified key `%s`: core cgroup files are managed by the runtime", key);
  }
  return 0;
}

bool cgroup_hugepage_size_ok(const char *s)
{
  size_t n = 0;

  if (s == NULL)
    return false;
  while (s[n] >= '0' && s[n] <= '9')
    n++;
  if (n == 0 || n > 6 || s[0] == '0')
    return false;
  return streq(s + n, "KB") || streq(s + n, "MB") || streq(s + n, "GB");
}

static int check_mem(bool has, int64_t v, const char *what, struct error *err)
{
  if (has && v < -1)
    return cg_fail(err, EINVAL, "cgroup: memory.%s: invalid value %" PRId64 " (must be -1 or >= 0)",
                   what, v);
  return 0;
}

static int validate_memory(const struct oci_resources *r, struct error *err)
{
  if (check_mem(r->has_memory_limit, r->memory_limit, "limit", err) < 0 ||
      check_mem(r->has_memory_reservation, r->memory_reservation, "reservation", err) < 0 ||
      check_mem(r->has_memory_swap, r->memory_swap, "swap", err) < 0 ||
      check_mem(r->has_memory_kernel, r->memory_kernel, "kernel", err) < 0 ||
      check_mem(r->has_memory_kernel_tcp, r->memory_kernel_tcp, "kernelTCP", err) < 0)
    return -1;
  if (r->has_memory_swappiness && r->memory_swappiness != UINT64_MAX && r->memory_swappiness > 100)
    return cg_fail(err, EINVAL, "cgroup: memory.swappiness: %" PRIu64 " is not in 0-100",
                   r->memory_swappiness);
  return 0;
}

static int validate_cpu(const struct oci_resources *r, struct error *err)
{
  if (r->has_cpu_shares && r->cpu_shares != 0 && (r->cpu_shares < 2 || r->cpu_shares > 262144))
    return cg_fail(err, EINVAL, "cgroup: cpu.shares: %" PRIu64 " is not in 2-262144",
                   r->cpu_shares);
  if (r->has_cpu_quota && (r->cpu_quota < -1 || (r->cpu_quota > 0 && r->cpu_quota < 1000)))
    return cg_fail(err, EINVAL,
                   "cgroup: cpu.quota: %" PRId64 " (must be -1, 0 or >= 1000 microseconds)",
                   r->cpu_quota);
  if (r->has_cpu_period && r->cpu_period != 0 && (r->cpu_period < 1000 || r->cpu_period > 1000000))
    return cg_fail(err, EINVAL, "cgroup: cpu.period: %" PRIu64 " is not in 1000-1000000",
                   r->cpu_period);
  if (r->has_cpu_realtime_runtime && r->cpu_realtime_runtime < -1)
    return cg_fail(err, EINVAL, "cgroup: cpu.realtimeRuntime: invalid value %" PRId64,
                   r->cpu_realtime_runtime);
  if (r->has_cpu_idle && r->cpu_idle != 0 && r->cpu_idle != 1)
    return cg_fail(err, EINVAL, "cgroup: cpu.idle: %" PRId64 " (must be 0 or 1)", r->cpu_idle);
  if (cgroup_validate_cpuset(r->cpu_cpus, "cpu.cpus", err) < 0 ||
      cgroup_validate_cpuset(r->cpu_mems, "cpu.mems", err) < 0)
    return -1;
  return 0;
}

static int check_weight(bool has, uint16_t w, const char *what, struct error *err)
{
  if (has && w != 0 && (w < 10 || w > 1000))
    return cg_fail(err, EINVAL, "cgroup: blockIO.%s: %u is not in 10-1000", what, w);
  return 0;
}

static int validate_blkio(const struct oci_resources *r, struct error *err)
{
  if (check_weight(r->has_blkio_weight, r->blkio_weight, "weight", err) < 0 ||
      check_weight(r->has_blkio_leaf_weight, r->blkio_leaf_weight, "leafWeight", err) < 0)
    return -1;
  for (size_t i = 0; i < r->n_blkio_weight_device; i++) {
    const struct oci_weight_device *d = &r->blkio_weight_device[i];
    if (d->major < 0 || d->minor < 0)
      return cg_fail(err, EINVAL, "cgroup: blockIO.weightDevice[%zu]: bad device number", i);
    if (check_weight(d->has_weight, d->weight, "weightDevice.weight", err) < 0 ||
        check_weight(d->has_leaf_weight, d->leaf_weight, "weightDevice.leafWeight", err) < 0)
      return -1;
  }
  return 0;
}

int cgroup_resources_validate(const struct oci_resources *r, struct error *err)
{
  if (r == NULL)
    return 0;
  if (validate_memory(r, err) < 0 || validate_cpu(r, err) < 0 || validate_blkio(r, err) < 0)
    return -1;
  for (size_t i = 0; i < r->n_hugepage_limits; i++)
    if (!cgroup_hugepage_size_ok(r->hugepage_limits[i].page_size))
      return cg_fail(err, EINVAL, "cgroup: hugepageLimits[%zu]: bad page size `%s`", i,
                     r->hugepage_limits[i].page_size ? r->hugepage_limits[i].page_size : "");
  for (size_t i = 0; i < r->n_unified; i++)
    if (cgroup_unified_key_check(r->unified[i].key, err) < 0)
      return -1;
  return 0;
}

bool cgroup_resources_requested(const struct oci_resources *r)
{
  if (r == NULL)
    return false;
  return r->has_memory_limit || r->has_memory_reservation || r->has_memory_swap ||
         r->has_memory_kernel || r->has_memory_kernel_tcp || r->has_memory_swappiness ||
         r->has_disable_oom_killer || r->has_cpu_shares || r->has_cpu_quota || r->has_cpu_burst ||
         r->has_cpu_period || r->has_cpu_realtime_runtime || r->has_cpu_realtime_period ||
         r->has_cpu_idle || (r->cpu_cpus && *r->cpu_cpus) || (r->cpu_mems && *r->cpu_mems) ||
         r->has_pids_limit || r->has_blkio_weight || r->has_blkio_leaf_weight ||
         r->n_blkio_weight_device || r->n_throttle_read_bps || r->n_throttle_write_bps ||
         r->n_throttle_read_iops || r->n_throttle_write_iops || r->n_hugepage_limits ||
         r->has_net_class_id || r->n_net_priorities || r->n_unified;
}
