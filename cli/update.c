/* update.c - `agentrt update [--resources FILE|-] [runc flags] ID`: change
 * a live container's cgroup limits.  Engines pass LinuxResources JSON on
 * stdin (containerd, CRI-O) or in a temp file (Podman). */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/util.h"
#include "container/container.h"
#include "os/fsutil.h"

enum {
  U_RESOURCES = 1,
  U_MEMORY,
  U_MEMORY_SWAP,
  U_MEMORY_RES,
  U_KMEM,
  U_CPU_SHARES,
  U_CPU_BURST,
  U_CPU_IDLE,
  U_CPU_PERIOD,
  U_CPU_QUOTA,
  U_CPU_RT_PERIOD,
  U_CPU_RT_RUNTIME,
  U_CPUSET_CPUS,
  U_CPUSET_MEMS,
  U_PIDS,
  U_BLKIO,
  U_L3,
  U_MBA,
  U_HELP,
};

static const struct opt_spec update_specs[] = {
    {"resources", 'r', true, U_RESOURCES},
    {"memory", 'm', true, U_MEMORY},
    {"memory-swap", 0, true, U_MEMORY_SWAP},
    {"memory-reservation", 0, true, U_MEMORY_RES},
    {"kernel-memory", 0, true, U_KMEM},
    {"kernel-memory-tcp", 0, true, U_KMEM},
    {"cpu-share", 0, true, U_CPU_SHARES}, /* runc's name */
    {"cpu-shares", 0, true, U_CPU_SHARES},
    {"cpu-burst", 0, true, U_CPU_BURST},
    {"cpu-idle", 0, true, U_CPU_IDLE},
    {"cpu-period", 0, true, U_CPU_PERIOD},
    {"cpu-quota", 0, true, U_CPU_QUOTA},
    {"cpu-rt-period", 0, true, U_CPU_RT_PERIOD},
    {"cpu-rt-runtime", 0, true, U_CPU_RT_RUNTIME},
    {"cpuset-cpus", 0, true, U_CPUSET_CPUS},
    {"cpuset-mems", 0, true, U_CPUSET_MEMS},
    {"pids-limit", 0, true, U_PIDS},
    {"blkio-weight", 0, true, U_BLKIO},
    {"l3-cache-schema", 0, true, U_L3},
    {"mem-bw-schema", 0, true, U_MBA},
    {"help", 'h', false, U_HELP},
    {NULL, 0, false, 0},
};

/* A size as runc reads it (docker's RAMInBytes): N[.N][ ][kmgtp][i][b], any
 * case, binary multiples ("512m", "1.5g", "100MiB", "64 MB", "1024"); "-1"
 * is unlimited.  (update-size-units) */
static int parse_bytes(const char *flag, const char *s, int64_t *ret, struct error *err)
{
  static const char units[] = "kmgtp";
  const char *p = s, *unit;
  double v, mult = 1;
  char num[64];

  if (strcmp(s, "-1") == 0) {
    *ret = -1;
    return 0;
  }
  p += strspn(p, "0123456789");
  if (p == s)
    return error_set(err, 0, "update: %s: invalid size `%s`", flag, s);
  if (*p == '.') {
    size_t d = strspn(p + 1, "0123456789");
    if (d == 0)
      return error_set(err, 0, "update: %s: invalid size `%s`", flag, s);
    p += 1 + d;
  }
  if ((size_t)(p - s) >= sizeof num)
    return error_set(err, 0, "update: %s: invalid size `%s`", flag, s);
  memcpy(num, s, (size_t)(p - s));
  num[p - s] = '\0';
  v = strtod(num, NULL);
  if (*p == ' ')
    p++;
  if (*p != '\0' && (unit = strchr(units, tolower((unsigned char)*p))) != NULL) {
    mult = (double)(1ULL << (10 * (unit - units + 1)));
    p++;
  }
  if (*p == 'i' || *p == 'I')
    p++;
  if (*p == 'b' || *p == 'B')
    p++;
  if (*p != '\0' || v * mult >= 9223372036854775807.0)
    return error_set(err, 0, "update: %s: invalid size `%s`", flag, s);
  *ret = (int64_t)(v * mult);
  return 0;
}

static int parse_num(const char *flag, const char *s, int64_t *ret, struct error *err)
{
  if (parse_i64(s, ret) < 0)
    return error_set(err, 0, "update: %s: invalid number `%s`", flag, s);
  return 0;
}

/* A flag that takes a number >= 0: the field and its has_ flag set. */
static int set_u64(const char *flag, const char *val, bool *has, uint64_t *out, struct error *err)
{
  int64_t v = 0;

  if (parse_num(flag, val, &v, err) < 0 || v < 0)
    return error_set(err, 0, "update: %s: invalid value `%s`", flag, val);
  *has = true;
  *out = (uint64_t)v;
  return 0;
}

static int apply_flag(struct oci_resources *r, int id, const char *val, struct error *err)
{
  int64_t v = 0;

  switch (id) {
  case U_MEMORY:
    r->has_memory_limit = true;
    return parse_bytes("--memory", val, &r->memory_limit, err);
  case U_MEMORY_SWAP:
    r->has_memory_swap = true;
    return parse_bytes("--memory-swap", val, &r->memory_swap, err);
  case U_MEMORY_RES:
    r->has_memory_reservation = true;
    return parse_bytes("--memory-reservation", val, &r->memory_reservation, err);
  case U_CPU_SHARES:
    return set_u64("--cpu-shares", val, &r->has_cpu_shares, &r->cpu_shares, err);
  case U_CPU_BURST:
    return set_u64("--cpu-burst", val, &r->has_cpu_burst, &r->cpu_burst, err);
  case U_CPU_IDLE:
    if (parse_num("--cpu-idle", val, &v, err) < 0 || (v != 0 && v != 1))
      return error_set(err, 0, "update: --cpu-idle: expected 0 or 1, got `%s`", val);
    r->has_cpu_idle = true;
    r->cpu_idle = v;
    return 0;
  case U_CPU_PERIOD:
    return set_u64("--cpu-period", val, &r->has_cpu_period, &r->cpu_period, err);
  case U_CPU_QUOTA:
    r->has_cpu_quota = true;
    return parse_num("--cpu-quota", val, &r->cpu_quota, err);
  case U_CPU_RT_PERIOD:
    return set_u64("--cpu-rt-period", val, &r->has_cpu_realtime_period, &r->cpu_realtime_period,
                   err);
  case U_CPU_RT_RUNTIME:
    r->has_cpu_realtime_runtime = true;
    return parse_num("--cpu-rt-runtime", val, &r->cpu_realtime_runtime, err);
  case U_CPUSET_CPUS:
    free(r->cpu_cpus);
    r->cpu_cpus = xstrdup(val);
    return 0;
  case U_CPUSET_MEMS:
    free(r->cpu_mems);
    r->cpu_mems = xstrdup(val);
    return 0;
  case U_PIDS:
    r->has_pids_limit = true;
    return parse_num("--pids-limit", val, &r->pids_limit, err);
  case U_BLKIO:
    if (parse_num("--blkio-weight", val, &v, err) < 0 || v < 10 || v > 1000)
      return error_set(err, 0, "update: --blkio-weight: expected 10..1000, got `%s`", val);
    r->has_blkio_weight = true;
    r->blkio_weight = (uint16_t)v;
    return 0;
  case U_L3:
  case U_MBA:
    /* no Intel RDT here (linux.intelRdt's schemas are refused at create):
     * an empty schema is nothing asked, as runc takes it */
    if (val[0] != '\0')
      return error_set(err, 0, "update: %s: Intel RDT is not supported",
                       id == U_L3 ? "--l3-cache-schema" : "--mem-bw-schema");
    return 0;
  default:
    return 0; /* kernel memory: accepted, nothing to do */
  }
}

int cmd_update(const struct global_opts *g, int argc, char **argv, struct error *err)
{
  struct opt_iter it = {argc, argv, 1};
  struct oci_resources *res = NULL;
  struct container *c = NULL;
  const char *resources = NULL, *val;
  int ids[32];
  const char *vals[32];
  const char *cid = NULL;
  int nflags = 0, id, n, applied, ret = -1;

  /* runc's flags may come before or after the id */
  while ((n = opt_next(&it, update_specs, &id, &val, "update", err)) == 1 ||
         (n == 0 && it.i < argc && cid == NULL)) {
    if (n == 0) {
      cid = argv[it.i++];
      continue;
    }
    if (id == U_HELP) {
      printf("Usage: agentrt update [--resources FILE|-] [--memory N] [--memory-swap N]\n"
             "       [--memory-reservation N] [--cpu-share N] [--cpu-period N] [--cpu-quota N]\n"
             "       [--cpu-burst N] [--cpu-idle 0|1] [--cpu-rt-period N] [--cpu-rt-runtime N]\n"
             "       [--cpuset-cpus L] [--cpuset-mems L] [--pids-limit N] [--blkio-weight N] ID "
             "[FLAGS]\n"
             "(no Intel RDT: --l3-cache-schema and --mem-bw-schema fail unless empty)\n");
      return 0;
    }
    if (id == U_RESOURCES)
      resources = val;
    else if (nflags < 32) {
      ids[nflags] = id;
      vals[nflags++] = val;
    }
  }
  if (n < 0)
    return -1;
  if (cid == NULL || it.i != argc)
    return error_set(err, 0, "update: expected exactly one container id");
  if (resources) {
    cleanup_free char *json = NULL;
    size_t len = 0;
    int r = strcmp(resources, "-") == 0
                ? read_fd_all(0, 16 << 20, &json, &len, err)
                : read_file_at(AT_FDCWD, resources, 16 << 20, &json, &len, err);
    if (r < 0)
      return error_prefix(err, "update: --resources");
    if (oci_resources_parse(json, len, strcmp(resources, "-") == 0 ? "stdin" : resources, &res,
                            err) < 0)
      return error_prefix(err, "update");
  } else {
    res = xmalloc0(sizeof *res);
  }
  for (int i = 0; i < nflags; i++)
    if (apply_flag(res, ids[i], vals[i], err) < 0)
      goto out;
  if (container_load(g, cid, LOCK_EX, &c, err) < 0)
    goto out;
  if (c->status == STATUS_STOPPED) {
    error_set(err, 0, "update `%s`: container not running", c->id);
    goto out;
  }
  if (container_cgroup(c, g, err) < 0)
    goto out;
  if (c->cgroup == NULL) {
    error_set(err, 0, "update `%s`: the container has no cgroup", c->id);
    goto out;
  }
  applied = cgroup_apply(c->cgroup, res, true, err);
  container_log_cgroup_warnings(c->cgroup);
  if (applied < 0) {
    error_prefix(err, "update `%s`", c->id);
    goto out;
  }
  ret = 0;
out:
  oci_resources_free(res);
  container_free(c);
  return ret;
}
