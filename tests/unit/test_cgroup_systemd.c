/* test_cgroup_systemd.c - the pure parts of the --systemd-cgroup driver:
 * the "slice:prefix:name" parser (the unit and slice systemd is asked for)
 * and linux.resources as unit properties (cgroups/systemd_props.c), plus
 * the manager's choices that need no bus: a fake tree keeps cgroupfs, a
 * real one defers the cgroup to the init (no clone fd before the unit).
 */
#include <stdio.h>
#include <string.h>

#include "cgroups/internal.h"
#include "common/util.h"
#include "tests/unit/tap.h"

static void unit_is(const char *spec, const char *id, bool rootless, const char *slice,
                    const char *unit)
{
  char *s = NULL, *u = NULL;
  struct error e = {0};
  int r = cgroup_systemd_unit(spec, id, rootless, &s, &u, &e);

  tap_ok(r == 0 && streq(s, slice) && streq(u, unit), "unit `%s` -> slice %s, unit %s (%s)", spec,
         s ? s : "-", u ? u : "-", e.msg);
  free(s);
  free(u);
}

static void unit_bad(const char *spec)
{
  char *s = NULL, *u = NULL;
  struct error e = {0};

  tap_ok(cgroup_systemd_unit(spec, "id", false, &s, &u, &e) < 0 && s == NULL && u == NULL &&
             e.msg[0] != '\0',
         "unit `%s` refused: %s", spec, e.msg);
}

static void test_parser(void)
{
  unit_is("system.slice:docker:abc", "abc", false, "system.slice", "docker-abc.scope");
  unit_is("kubepods-besteffort-pod1234.slice:cri-containerd:c0ffee", "c0ffee", false,
          "kubepods-besteffort-pod1234.slice", "cri-containerd-c0ffee.scope");
  unit_is(":agentrt:c1", "c1", false, "system.slice", "agentrt-c1.scope");
  unit_is(":agentrt:c1", "c1", true, "user.slice", "agentrt-c1.scope");
  unit_is("machine.slice::c2", "c2", false, "machine.slice", "c2.scope");
  unit_is("system.slice:libpod:", "fromid", false, "system.slice", "libpod-fromid.scope");
  unit_is("kubepods.slice:x:kubepods-pod9.slice", "id", false, "kubepods.slice",
          "kubepods-pod9.slice");
  unit_bad("nocolons");
  unit_bad("a:b");
  unit_bad("a.slice:b:c:d");
  unit_bad("notaslice:p:n");
  unit_bad("a--b.slice:p:n");
  unit_bad("system.slice:p/x:n");
  unit_bad("system.slice:p:../n");
}

static const struct cgroup_sd_prop *prop(const struct cgroup_sd_prop *p, size_t n, const char *name)
{
  for (size_t i = 0; i < n; i++)
    if (streq(p[i].name, name))
      return &p[i];
  return NULL;
}

static void prop_is(const struct cgroup_sd_prop *p, size_t n, const char *name, uint64_t want)
{
  const struct cgroup_sd_prop *q = prop(p, n, name);

  tap_ok(q != NULL && q->value == want, "%s = %llu (got %s%llu)", name, (unsigned long long)want,
         q ? "" : "none ", q ? (unsigned long long)q->value : 0ULL);
}

static void test_props_v2(void)
{
  struct oci_kv unified[] = {{.key = "memory.high", .value = "300000000"},
                             {.key = "pids.max", .value = "max"},
                             {.key = "memory.oom.group", .value = "1"}};
  struct oci_resources r = {
      .has_memory_limit = true,
      .memory_limit = 512 << 20,
      .has_memory_reservation = true,
      .memory_reservation = 128 << 20,
      .has_memory_swap = true,
      .memory_swap = 768 << 20,
      .has_cpu_shares = true,
      .cpu_shares = 1024,
      .has_cpu_quota = true,
      .cpu_quota = 50000,
      .has_cpu_period = true,
      .cpu_period = 100000,
      .has_pids_limit = true,
      .pids_limit = 100,
      .has_blkio_weight = true,
      .blkio_weight = 500,
  };
  struct cgroup_sd_prop p[CGROUP_SD_PROPS_MAX];
  size_t n = cgroup_systemd_props(&r, 2, p, CGROUP_SD_PROPS_MAX);

  prop_is(p, n, "MemoryMax", 512 << 20);
  prop_is(p, n, "MemoryLow", 128 << 20);
  prop_is(p, n, "MemorySwapMax", 256 << 20);
  prop_is(p, n, "CPUWeight", 39);
  prop_is(p, n, "CPUQuotaPerSecUSec", 500000);
  prop_is(p, n, "CPUQuotaPeriodUSec", 100000);
  prop_is(p, n, "TasksMax", 100);
  prop_is(p, n, "IOWeight", 4950); /* io.weight for blkio.weight 500 */
  tap_ok(prop(p, n, "MemoryLimit") == NULL && prop(p, n, "CPUShares") == NULL,
         "v2: no v1 property names");
  tap_ok(n == 8, "v2: 8 properties, nothing else (%zu)", n);

  r.unified = unified;
  r.n_unified = ARRAY_SIZE(unified);
  n = cgroup_systemd_props(&r, 2, p, CGROUP_SD_PROPS_MAX);
  prop_is(p, n, "MemoryHigh", 300000000);
  prop_is(p, n, "TasksMax", CGROUP_SD_INFINITY); /* unified pids.max wins */
  tap_ok(n == 9, "unified: memory.oom.group has no property, left to cgroupfs (%zu)", n);
}

static void test_props_edges(void)
{
  struct oci_resources r = {
      .has_cpu_quota = true, .cpu_quota = 1234, .has_cpu_period = true, .cpu_period = 100000};
  struct cgroup_sd_prop p[CGROUP_SD_PROPS_MAX];
  size_t n = cgroup_systemd_props(&r, 2, p, CGROUP_SD_PROPS_MAX);

  /* 1234/100000 of a second = 12340 us, rounded up to systemd's 10 ms */
  prop_is(p, n, "CPUQuotaPerSecUSec", 20000);
  r.cpu_quota = -1;
  n = cgroup_systemd_props(&r, 2, p, CGROUP_SD_PROPS_MAX);
  prop_is(p, n, "CPUQuotaPerSecUSec", CGROUP_SD_INFINITY);

  r = (struct oci_resources){
      .has_memory_limit = true, .memory_limit = -1, .has_pids_limit = true, .pids_limit = 0};
  n = cgroup_systemd_props(&r, 2, p, CGROUP_SD_PROPS_MAX);
  prop_is(p, n, "MemoryMax", CGROUP_SD_INFINITY);
  prop_is(p, n, "TasksMax", CGROUP_SD_INFINITY);

  r = (struct oci_resources){.has_memory_limit = true,
                             .memory_limit = 1 << 30,
                             .has_cpu_shares = true,
                             .cpu_shares = 512,
                             .has_blkio_weight = true,
                             .blkio_weight = 300,
                             .has_memory_reservation = true,
                             .memory_reservation = 1 << 20};
  n = cgroup_systemd_props(&r, 1, p, CGROUP_SD_PROPS_MAX);
  prop_is(p, n, "MemoryLimit", 1 << 30);
  prop_is(p, n, "CPUShares", 512);
  prop_is(p, n, "BlockIOWeight", 300);
  tap_ok(prop(p, n, "MemoryLow") == NULL && prop(p, n, "MemoryMax") == NULL,
         "v1: no v2-only properties");

  tap_ok(cgroup_systemd_props(NULL, 2, p, CGROUP_SD_PROPS_MAX) == 0, "no resources: nothing");
  r = (struct oci_resources){
      .has_memory_limit = true, .memory_limit = 1, .has_pids_limit = true, .pids_limit = 5};
  tap_ok(cgroup_systemd_props(&r, 2, p, 1) == 1, "bounded by max");
}

/* A fake tree keeps the old cgroupfs mapping; a real host defers to systemd. */
static void test_manager_choices(void)
{
  char tmpl[] = "/tmp/agentrt-sd-XXXXXX";
  char *root = mkdtemp(tmpl);
  struct cgroup_opts o = {.id = "c1",
                          .cgroups_path = "system.slice:docker:c1",
                          .systemd = true,
                          .fs_root = root,
                          .force_version = 2};
  struct cgroup_manager *m = NULL;
  struct error e = {0};

  tap_ok(root && cgroup_manager_new(&o, &m, &e) == 0 && !m->systemd &&
             streq(cgroup_manager_path(m), "/system.slice/docker-c1.scope"),
         "fake tree: cgroupfs path %s, no unit", m ? cgroup_manager_path(m) : e.msg);
  cgroup_manager_free(m);
  m = NULL;
  o.fs_root = NULL;
  tap_ok(cgroup_manager_new(&o, &m, &e) == 0 && m->systemd && !m->sd_started &&
             streq(m->sd_unit, "docker-c1.scope") && streq(m->sd_slice, "system.slice") &&
             cgroup_clone_fd(m) == -1,
         "real host: unit docker-c1.scope in system.slice, no clone fd before the unit (%s)",
         e.msg);
  cgroup_manager_free(m);
  m = NULL;
  tap_ok(cgroup_manager_load("/system.slice/docker-c1.scope", &o, &m, &e) == 0 && m->systemd &&
             m->sd_started && streq(m->sd_unit, "docker-c1.scope"),
         "loaded: the unit is the path's last component (%s)", e.msg);
  cgroup_manager_free(m);
  if (root)
    rmdir(root);
}

int main(void)
{
  test_parser();
  test_props_v2();
  test_props_edges();
  test_manager_choices();
  return tap_done();
}
