/* systemd_props.c - linux.resources as systemd unit properties (pure, unit
 * tested).
 *
 * The --systemd-cgroup driver (systemd.c) gives systemd every limit it has
 * a property for, so that systemd's own idea of the unit matches the cgroup
 * files and a daemon-reload does not reset them; everything is also written
 * to cgroupfs afterwards, as runc does, which covers what systemd has no
 * property for (cpusets, devices, hugetlb, rdma, most unified keys).
 * Mapping as runc's: memory.limit -> MemoryMax (v1 MemoryLimit),
 * memory.reservation -> MemoryLow (v2), memory.swap -> MemorySwapMax (v2,
 * swap only), cpu.shares -> CPUWeight (v1 CPUShares), cpu.quota/period ->
 * CPUQuotaPerSecUSec (rounded up to 10 ms, systemd's granularity) and
 * CPUQuotaPeriodUSec, pids.limit -> TasksMax, blkio.weight -> IOWeight (v1
 * BlockIOWeight), and the unified keys memory.{min,low,high,max},
 * pids.max and cpu.weight.  -1 ("max") is systemd's infinity.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cgroups/internal.h"
#include "common/util.h"

static size_t add(struct cgroup_sd_prop *out, size_t n, size_t max, const char *name, uint64_t v)
{
  for (size_t i = 0; i < n; i++)
    if (streq(out[i].name, name)) { /* a later source (unified) wins */
      out[i].value = v;
      return n;
    }
  if (n < max)
    out[n++] = (struct cgroup_sd_prop){.name = name, .value = v};
  return n;
}

static uint64_t limit_or_inf(int64_t v)
{
  return v < 0 ? CGROUP_SD_INFINITY : (uint64_t)v;
}

/* "max" or a decimal number; false when it is neither. */
static bool unified_u64(const char *s, uint64_t *ret)
{
  char *end = NULL;

  if (streq(s, "max")) {
    *ret = CGROUP_SD_INFINITY;
    return true;
  }
  if (*s < '0' || *s > '9')
    return false;
  errno = 0;
  *ret = strtoull(s, &end, 10);
  return errno == 0 && (*end == '\0' || streq(end, "\n"));
}

static size_t cpu_props(const struct oci_resources *r, int version, struct cgroup_sd_prop *out,
                        size_t n, size_t max)
{
  if (r->has_cpu_shares && r->cpu_shares != 0)
    n = version == 2 ? add(out, n, max, "CPUWeight", cgroup_shares_to_weight(r->cpu_shares))
                     : add(out, n, max, "CPUShares", r->cpu_shares);
  if (r->has_cpu_period && r->cpu_period != 0)
    n = add(out, n, max, "CPUQuotaPeriodUSec", r->cpu_period);
  if (r->has_cpu_quota && r->cpu_quota != 0) {
    uint64_t period = r->has_cpu_period && r->cpu_period ? r->cpu_period : 100000;
    uint64_t per_sec = CGROUP_SD_INFINITY;

    if (r->cpu_quota > 0) {
      per_sec = (uint64_t)r->cpu_quota * 1000000 / period;
      if (per_sec % 10000 != 0)
        per_sec = (per_sec / 10000 + 1) * 10000;
    }
    n = add(out, n, max, "CPUQuotaPerSecUSec", per_sec);
  }
  return n;
}

static size_t unified_props(const struct oci_resources *r, struct cgroup_sd_prop *out, size_t n,
                            size_t max)
{
  static const struct {
    const char *key, *prop;
  } map[] = {{"memory.min", "MemoryMin"},   {"memory.low", "MemoryLow"},
             {"memory.high", "MemoryHigh"}, {"memory.max", "MemoryMax"},
             {"pids.max", "TasksMax"},      {"cpu.weight", "CPUWeight"}};
  uint64_t v;

  for (size_t i = 0; i < r->n_unified; i++)
    for (size_t j = 0; j < ARRAY_SIZE(map); j++)
      if (streq(r->unified[i].key, map[j].key) && unified_u64(r->unified[i].value, &v))
        n = add(out, n, max, map[j].prop, v);
  return n;
}

size_t cgroup_systemd_props(const struct oci_resources *r, int version, struct cgroup_sd_prop *out,
                            size_t max)
{
  size_t n = 0;
  int64_t swap = 0;
  struct error e = {0};

  if (r == NULL)
    return 0;
  if (r->has_memory_limit && r->memory_limit != 0)
    n = add(out, n, max, version == 2 ? "MemoryMax" : "MemoryLimit", limit_or_inf(r->memory_limit));
  if (version == 2 && r->has_memory_reservation && r->memory_reservation != 0)
    n = add(out, n, max, "MemoryLow", limit_or_inf(r->memory_reservation));
  if (version == 2 && r->has_memory_swap &&
      cgroup_swap_to_v2(r->has_memory_limit, r->memory_limit, r->memory_swap, &swap, &e) == 1)
    n = add(out, n, max, "MemorySwapMax", limit_or_inf(swap));
  n = cpu_props(r, version, out, n, max);
  if (r->has_pids_limit)
    n = add(out, n, max, "TasksMax",
            r->pids_limit <= 0 ? CGROUP_SD_INFINITY : (uint64_t)r->pids_limit);
  if (r->has_blkio_weight && r->blkio_weight != 0)
    n = version == 2 ? add(out, n, max, "IOWeight", cgroup_blkio_weight_to_io(r->blkio_weight))
                     : add(out, n, max, "BlockIOWeight", r->blkio_weight);
  if (version == 2)
    n = unified_props(r, out, n, max);
  return n;
}
