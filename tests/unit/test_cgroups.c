/* test_cgroups.c - the cgroup module against fake cgroupfs trees in a temp
 * dir (fs_root + force_version), plus its pure parts: conversions, paths,
 * unified key checks, validation and the eBPF device program.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "cgroups/internal.h"
#include "common/util.h"
#include "tests/unit/tap.h"

static char tmp[256];

static void put(const char *rel, const char *content)
{
  char *p = xfmt("%s/%s", tmp, rel);
  FILE *f = fopen(p, "we");
  if (f != NULL) {
    fputs(content, f);
    fclose(f);
  }
  free(p);
}

static void mk(const char *rel)
{
  char *p = xfmt("%s/%s", tmp, rel);
  mkdir(p, 0755);
  free(p);
}

/* the file's content ("" when missing); static buffer */
static const char *get(const char *rel)
{
  static char buf[8192];
  char *p = xfmt("%s/%s", tmp, rel);
  int fd = open(p, O_RDONLY | O_CLOEXEC);
  ssize_t n = fd < 0 ? 0 : read(fd, buf, sizeof buf - 1);
  if (fd >= 0)
    close(fd);
  buf[n > 0 ? n : 0] = '\0';
  free(p);
  return buf;
}

static bool exists(const char *rel)
{
  char *p = xfmt("%s/%s", tmp, rel);
  bool r = access(p, F_OK) == 0;
  free(p);
  return r;
}

static void rm_tree(void)
{
  char *cmd = xfmt("rm -rf '%s'", tmp);
  if (system(cmd) != 0)
    fprintf(stderr, "cleanup of %s failed\n", tmp);
  free(cmd);
}

static void new_tmp(void)
{
  snprintf(tmp, sizeof tmp, "/tmp/agentrt-cgtest-XXXXXX");
  if (mkdtemp(tmp) == NULL)
    abort();
}

static void test_conversions(void)
{
  struct error e = {0};
  int64_t v = 0;
  char buf[32];

  tap_ok(cgroup_shares_to_weight(2) == 1, "shares 2 -> weight 1");
  tap_ok(cgroup_shares_to_weight(1024) == 39, "shares 1024 -> weight 39");
  tap_ok(cgroup_shares_to_weight(262144) == 10000, "shares 262144 -> weight 10000");
  tap_ok(cgroup_shares_to_weight(0) == 0, "shares 0 -> unset");
  tap_ok(cgroup_blkio_weight_to_io(10) == 1 && cgroup_blkio_weight_to_io(1000) == 10000,
         "blkio weight 10..1000 -> io.weight 1..10000");
  tap_ok(cgroup_swap_to_v2(true, 100, 300, &v, &e) == 1 && v == 200,
         "swap v2: memory+swap 300, limit 100 -> swap.max 200");
  tap_ok(cgroup_swap_to_v2(true, 100, 100, &v, &e) == 1 && v == 0,
         "swap v2: memory+swap == limit -> swap.max 0");
  tap_ok(cgroup_swap_to_v2(true, 100, -1, &v, &e) == 1 && v == -1, "swap v2: -1 -> max");
  tap_ok(cgroup_swap_to_v2(true, 100, 0, &v, &e) == 0, "swap v2: 0 -> unset");
  tap_ok(cgroup_swap_to_v2(true, 100, 50, &v, &e) < 0 && strstr(e.msg, "must be >=") != NULL,
         "swap v2: swap below limit is an error: %s", e.msg);
  tap_ok(cgroup_swap_to_v2(false, 0, 500, &v, &e) < 0 && strstr(e.msg, "needs a memory.limit"),
         "swap v2: swap without limit is an error");
  tap_ok(streq(cgroup_limit_str(-1, buf), "max") && streq(cgroup_limit_str(42, buf), "42"),
         "limit -1 -> max");
}

static void test_cpuset_and_validation(void)
{
  static const char *const good[] = {"0", "0-3", "0-3,5,7-8", ""};
  static const char *const bad[] = {"0-", "a", "3-1", "1,,2", "1-2-3", ",1", "1 2", "-1"};
  struct error e = {0};
  struct oci_resources r = {0};

  for (size_t i = 0; i < ARRAY_SIZE(good); i++)
    tap_ok(cgroup_validate_cpuset(good[i], "cpu.cpus", &e) == 0, "cpuset `%s` accepted", good[i]);
  for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
    int rc = cgroup_validate_cpuset(bad[i], "cpu.cpus", &e);
    tap_ok(rc < 0 && strstr(e.msg, "malformed") != NULL, "cpuset `%s` rejected: %s", bad[i], e.msg);
  }
  r.has_memory_limit = true;
  r.memory_limit = -5;
  tap_ok(cgroup_resources_validate(&r, &e) < 0 && strstr(e.msg, "memory.limit"),
         "memory.limit -5 rejected: %s", e.msg);
  r.memory_limit = -1;
  tap_ok(cgroup_resources_validate(&r, &e) == 0, "memory.limit -1 accepted");
  r.has_cpu_shares = true;
  r.cpu_shares = 1;
  tap_ok(cgroup_resources_validate(&r, &e) < 0, "cpu.shares 1 rejected: %s", e.msg);
  r.cpu_shares = 1024;
  r.has_cpu_quota = true;
  r.cpu_quota = -7;
  tap_ok(cgroup_resources_validate(&r, &e) < 0, "cpu.quota -7 rejected: %s", e.msg);
  r.cpu_quota = 50000;
  r.cpu_mems = "0-";
  tap_ok(cgroup_resources_validate(&r, &e) < 0 && strstr(e.msg, "cpu.mems"),
         "cpu.mems `0-` rejected: %s", e.msg);
  r.cpu_mems = NULL;
  r.has_memory_swappiness = true;
  r.memory_swappiness = 101;
  tap_ok(cgroup_resources_validate(&r, &e) < 0, "swappiness 101 rejected: %s", e.msg);
}

static void test_paths(void)
{
  struct error e = {0};
  char *p = NULL;

  tap_ok(cgroup_normalize_path("/a//b/./c/", &p, &e) == 0 && streq(p, "/a/b/c"),
         "normalize /a//b/./c/ -> %s", p ? p : "(null)");
  free(p);
  p = NULL;
  tap_ok(cgroup_normalize_path("a/b", &p, &e) == 0 && streq(p, "a/b"), "relative kept");
  free(p);
  p = NULL;
  tap_ok(cgroup_normalize_path("/a/../../etc", &p, &e) < 0 && strstr(e.msg, ".."),
         "`..` rejected: %s", e.msg);
  tap_ok(cgroup_normalize_path("..", &p, &e) < 0, "bare `..` rejected");
  tap_ok(cgroup_systemd_to_path("system.slice:docker:abc", "id", false, &p, &e) == 0 &&
             streq(p, "/system.slice/docker-abc.scope"),
         "systemd system.slice:docker:abc -> %s", p ? p : "(null)");
  free(p);
  p = NULL;
  tap_ok(cgroup_systemd_to_path("a-b-c.slice:x:y", "id", false, &p, &e) == 0 &&
             streq(p, "/a.slice/a-b.slice/a-b-c.slice/x-y.scope"),
         "systemd nested slice -> %s", p ? p : "(null)");
  free(p);
  p = NULL;
  tap_ok(cgroup_systemd_to_path(":agentrt:c1", "c1", false, &p, &e) == 0 &&
             streq(p, "/system.slice/agentrt-c1.scope"),
         "systemd default slice -> %s", p ? p : "(null)");
  free(p);
  p = NULL;
  tap_ok(cgroup_systemd_to_path("-.slice:p:n", "id", false, &p, &e) == 0 && streq(p, "/p-n.scope"),
         "systemd root slice -> %s", p ? p : "(null)");
  free(p);
  p = NULL;
  tap_ok(cgroup_systemd_to_path("x.slice:p:sub.slice", "id", false, &p, &e) == 0 &&
             streq(p, "/x.slice/sub.slice"),
         "systemd slice unit -> %s", p ? p : "(null)");
  free(p);
  p = NULL;
  tap_ok(cgroup_systemd_to_path("nocolons", "id", false, &p, &e) < 0, "systemd malformed: %s",
         e.msg);
  tap_ok(cgroup_systemd_to_path("a--b.slice:p:n", "id", false, &p, &e) < 0, "systemd bad slice: %s",
         e.msg);
  tap_ok(cgroup_systemd_to_path("x.slice:p:../../etc", "id", false, &p, &e) < 0,
         "systemd name with `/` rejected");
}

static void test_unified_keys(void)
{
  static const char *const bad[] = {"../cgroup.procs",
                                    "cgroup.procs",
                                    "cgroup.subtree_control",
                                    "memory.max/../x",
                                    "",
                                    "/etc/passwd",
                                    "memory",
                                    "MEMORY.max",
                                    "cgroup.kill",
                                    "memory..max",
                                    ".memory",
                                    "cgroup.threads"};
  static const char *const good[] = {"memory.high", "cgroup.max.depth", "io.latency",
                                     "memory.oom.group"};
  struct error e = {0};

  for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
    tap_ok(cgroup_unified_key_check(bad[i], &e) < 0, "unified key `%s` rejected: %s", bad[i],
           e.msg);
  for (size_t i = 0; i < ARRAY_SIZE(good); i++)
    tap_ok(cgroup_unified_key_check(good[i], &e) == 0, "unified key `%s` accepted", good[i]);
}

static struct oci_device_cgroup dev_rules[] = {
    {false, 'a', false, false, 0, 0, "rwm"},
    {true, 'c', true, true, 10, 200, "rwm"},
};

static struct oci_throttle_device rbps = {8, 0, 1048576};
static struct oci_weight_device wdev = {8, 0, true, false, 300, 0};

/* A rich resources struct used for both backends. */
static void rich(struct oci_resources *r)
{
  memset(r, 0, sizeof *r);
  r->has_memory_limit = r->has_memory_swap = r->has_memory_reservation = true;
  r->memory_limit = 64 << 20;
  r->memory_swap = 128 << 20;
  r->memory_reservation = 32 << 20;
  r->has_cpu_shares = r->has_cpu_quota = r->has_cpu_period = true;
  r->cpu_shares = 1024;
  r->cpu_quota = 50000;
  r->cpu_period = 100000;
  r->cpu_cpus = "0-1";
  r->cpu_mems = "0";
  r->has_pids_limit = true;
  r->pids_limit = 100;
  r->has_blkio_weight = true;
  r->blkio_weight = 500;
  r->blkio_weight_device = &wdev;
  r->n_blkio_weight_device = 1;
  r->throttle_read_bps = &rbps;
  r->n_throttle_read_bps = 1;
  r->devices = dev_rules;
  r->n_devices = ARRAY_SIZE(dev_rules);
}

static const char *const v1_dirs[] = {"cpu",     "cpuacct", "cpuset", "memory", "devices",
                                      "freezer", "blkio",   "pids",   "systemd"};

static void fake_v1(void)
{
  new_tmp();
  for (size_t i = 0; i < ARRAY_SIZE(v1_dirs); i++)
    mk(v1_dirs[i]);
  put("cpuset/cpuset.cpus", "0-1\n");
  put("cpuset/cpuset.mems", "0\n");
  put("self_cgroup", "9:name=systemd:/\n8:pids:/\n7:blkio:/\n6:freezer:/\n5:devices:/\n"
                     "4:memory:/process_api/h\n3:cpuset:/\n2:cpuacct:/\n1:cpu:/\n0::/\n");
}

static struct cgroup_manager *mgr(int version, const char *path, bool systemd,
                                  const struct oci_resources *r, struct error *e)
{
  char self[300];
  struct cgroup_opts o = {.id = "c1",
                          .cgroups_path = path,
                          .systemd = systemd,
                          .fs_root = tmp,
                          .force_version = version,
                          .resources = r};
  struct cgroup_manager *m = NULL;

  snprintf(self, sizeof self, "%s/self_cgroup", tmp);
  o.proc_self_cgroup = self;
  if (cgroup_manager_new(&o, &m, e) < 0)
    return NULL;
  return m;
}

static void test_v1_paths(void)
{
  struct error e = {0};
  struct cgroup_manager *m, *m2;
  char self[300];
  struct cgroup_opts o = {.fs_root = tmp, .force_version = 1};

  fake_v1();
  m = mgr(1, "", false, NULL, &e);
  tap_ok(m && streq(cgroup_manager_path(m), "/agentrt/c1"), "v1 empty path -> %s",
         m ? cgroup_manager_path(m) : e.msg);
  cgroup_manager_free(m);
  m = mgr(1, "sub/x", false, NULL, &e);
  tap_ok(m && strstr(cgroup_manager_path(m), "memory=/process_api/h/sub/x") &&
             strstr(cgroup_manager_path(m), "cpu=/sub/x"),
         "v1 relative path per controller -> %s", m ? cgroup_manager_path(m) : e.msg);
  snprintf(self, sizeof self, "%s/self_cgroup", tmp);
  o.proc_self_cgroup = self;
  if (m && cgroup_manager_load(cgroup_manager_path(m), &o, &m2, &e) == 0) {
    tap_ok(streq(cgroup_v1_hier(m2, "memory")->rel, "/process_api/h/sub/x") &&
               streq(cgroup_v1_hier(m2, "cpu")->rel, "/sub/x"),
           "v1 load of the per-controller saved path");
    cgroup_manager_free(m2);
  } else {
    tap_ok(false, "v1 load: %s", e.msg);
  }
  cgroup_manager_free(m);
  m = mgr(1, "system.slice:docker:abc", true, NULL, &e);
  tap_ok(m && streq(cgroup_v1_hier(m, "memory")->rel, "/system.slice/docker-abc.scope"),
         "v1 systemd path is absolute");
  cgroup_manager_free(m);
  tap_ok(mgr(1, "/x/../../../etc", false, NULL, &e) == NULL, "v1 `..` rejected: %s", e.msg);
  tap_ok(mgr(1, "/", false, NULL, &e) == NULL, "v1 root cgroup rejected: %s", e.msg);
  rm_tree();
}

static bool lines_start(const char *text, const char *first)
{
  return strncmp(text, first, strlen(first)) == 0;
}

static void test_v1_apply(void)
{
  struct error e = {0};
  struct oci_resources r;
  struct cgroup_manager *m;
  int rc;

  fake_v1();
  rich(&r);
  r.has_memory_swappiness = r.has_disable_oom_killer = r.disable_oom_killer = true;
  r.memory_swappiness = 60;
  m = mgr(1, "/agentrt/c1", false, &r, &e);
  rc = m ? cgroup_create(m, &e) : -1;
  tap_ok(rc == 0, "v1 create: %s", e.msg);
  tap_ok(exists("memory/agentrt/c1") && exists("systemd/agentrt/c1") && exists("cpu/agentrt/c1"),
         "v1 create makes a dir in every hierarchy");
  tap_ok(streq(get("cpuset/agentrt/cpuset.cpus"), "0-1\n") &&
             streq(get("cpuset/agentrt/c1/cpuset.mems"), "0\n"),
         "v1 cpuset parents populated from the root");
  rc = cgroup_apply(m, &r, false, &e);
  tap_ok(rc == 0, "v1 apply: %s", e.msg);
  tap_ok(streq(get("memory/agentrt/c1/memory.limit_in_bytes"), "67108864\n"), "v1 memory limit");
  tap_ok(streq(get("memory/agentrt/c1/memory.memsw.limit_in_bytes"), "134217728\n"),
         "v1 memsw = memory+swap as given");
  tap_ok(streq(get("memory/agentrt/c1/memory.soft_limit_in_bytes"), "33554432\n"),
         "v1 reservation");
  {
    struct oci_resources z = {.has_memory_reservation = true, .memory_reservation = 0};
    tap_ok(cgroup_apply(m, &z, true, &e) == 0 &&
               streq(get("memory/agentrt/c1/memory.soft_limit_in_bytes"), "33554432\n"),
           "v1 reservation 0 is not set, as runc (%s)", e.msg);
  }
  tap_ok(streq(get("memory/agentrt/c1/memory.swappiness"), "60\n"), "v1 swappiness");
  tap_ok(streq(get("memory/agentrt/c1/memory.oom_control"), "1\n"), "v1 disableOOMKiller");
  tap_ok(streq(get("cpu/agentrt/c1/cpu.shares"), "1024\n") &&
             streq(get("cpu/agentrt/c1/cpu.cfs_quota_us"), "50000\n") &&
             streq(get("cpu/agentrt/c1/cpu.cfs_period_us"), "100000\n"),
         "v1 cpu shares/quota/period");
  tap_ok(strstr(get("cpuset/agentrt/c1/cpuset.cpus"), "0-1\n") != NULL, "v1 cpuset.cpus");
  tap_ok(streq(get("pids/agentrt/c1/pids.max"), "100\n"), "v1 pids.max");
  tap_ok(streq(get("blkio/agentrt/c1/blkio.weight"), "500\n") &&
             streq(get("blkio/agentrt/c1/blkio.weight_device"), "8:0 300\n") &&
             streq(get("blkio/agentrt/c1/blkio.throttle.read_bps_device"), "8:0 1048576\n"),
         "v1 blkio weight, weight_device, throttle");
  tap_ok(lines_start(get("devices/agentrt/c1/devices.deny"), "a\na\n"),
         "v1 devices: deny all first");
  tap_ok(lines_start(get("devices/agentrt/c1/devices.allow"), "c 10:200 rwm\nc *:* m\n") &&
             strstr(get("devices/agentrt/c1/devices.allow"), "c 1:3 rwm\n"),
         "v1 devices: rules in order, then defaults");
  r.n_devices = 0;
  r.n_hugepage_limits = 1;
  r.hugepage_limits = &(struct oci_hugepage_limit){"2MB", 1 << 21};
  tap_ok(cgroup_apply(m, &r, true, &e) < 0 &&
             streq(e.msg, "cgroup: hugetlb controller not available"),
         "v1 missing controller is an error: %s", e.msg);
  r.n_hugepage_limits = 0;
  r.n_unified = 1;
  r.unified = &(struct oci_kv){"memory.high", "1G"};
  tap_ok(cgroup_apply(m, &r, true, &e) < 0 && strstr(e.msg, "cgroup v2"),
         "v1 unified is an error: %s", e.msg);
  r.n_unified = 0;
  r.unified = NULL;
  {
    /* a BFQ host: blkio.bfq.weight and blkio.bfq.weight_device, no blkio.weight */
    cleanup_free char *w = xfmt("%s/blkio/agentrt/c1/blkio.weight", tmp);
    unlink(w);
    put("blkio/agentrt/c1/blkio.bfq.weight", ""); /* the fake tree appends what is written */
    tap_ok(cgroup_apply(m, &r, true, &e) == 0 &&
               streq(get("blkio/agentrt/c1/blkio.bfq.weight"), "500\n") &&
               streq(get("blkio/agentrt/c1/blkio.bfq.weight_device"), "8:0 300\n"),
           "v1 blkio on BFQ: blkio.bfq.weight and blkio.bfq.weight_device");
  }
  tap_ok(cgroup_freeze(m, true, &e) == 0 && cgroup_is_frozen(m, &e) == 1 &&
             cgroup_freeze(m, false, &e) == 0 && cgroup_is_frozen(m, &e) == 0,
         "v1 freezer.state FROZEN/THAWED");
  tap_ok(cgroup_destroy(m, &e) == 0 && !exists("memory/agentrt/c1") && !exists("memory/agentrt"),
         "v1 destroy removes every dir: %s", e.msg);
  tap_ok(cgroup_destroy(m, &e) == 0, "v1 destroy of a missing cgroup is fine");
  cgroup_manager_free(m);
  rm_tree();
}

static void fake_v2(const char *controllers)
{
  new_tmp();
  put("cgroup.controllers", controllers);
  put("cgroup.subtree_control", "");
  put("self_cgroup", "0::/user.slice/sess\n");
}

static void test_v2_paths(void)
{
  struct error e = {0};
  struct cgroup_manager *m;

  fake_v2("cpu memory pids\n");
  m = mgr(0, "sub/x", false, NULL, &e);
  tap_ok(m && cgroup_manager_version(m) == 2 &&
             streq(cgroup_manager_path(m), "/user.slice/sess/sub/x"),
         "v2 detected; relative path -> %s", m ? cgroup_manager_path(m) : e.msg);
  cgroup_manager_free(m);
  m = mgr(2, "/abs/p", false, NULL, &e);
  tap_ok(m && streq(cgroup_manager_path(m), "/abs/p"), "v2 absolute path");
  cgroup_manager_free(m);
  rm_tree();
}

static void test_v2_apply(void)
{
  struct error e = {0};
  struct oci_resources r;
  struct cgroup_manager *m;

  fake_v2("cpuset cpu io memory hugetlb pids\n");
  rich(&r);
  r.n_hugepage_limits = 1;
  r.hugepage_limits = &(struct oci_hugepage_limit){"2MB", 1 << 21};
  r.n_unified = 1;
  r.unified = &(struct oci_kv){"memory.high", "50000000"};
  m = mgr(2, "", false, &r, &e);
  tap_ok(m && cgroup_create(m, &e) == 0 && exists("agentrt/c1"), "v2 create: %s", e.msg);
  tap_ok(strstr(get("cgroup.subtree_control"), "+memory\n") != NULL,
         "v2 controllers enabled in the parent");
  tap_ok(cgroup_apply(m, &r, false, &e) == 0, "v2 apply: %s", e.msg);
  tap_ok(streq(get("agentrt/c1/memory.max"), "67108864\n"), "v2 memory.max");
  tap_ok(streq(get("agentrt/c1/memory.swap.max"), "67108864\n"),
         "v2 memory.swap.max = swap - limit");
  tap_ok(streq(get("agentrt/c1/memory.low"), "33554432\n"), "v2 memory.low");
  {
    struct oci_resources z = {.has_memory_reservation = true, .memory_reservation = 0};
    tap_ok(cgroup_apply(m, &z, true, &e) == 0 && streq(get("agentrt/c1/memory.low"), "33554432\n"),
           "v2 reservation 0 is not set, as runc (%s)", e.msg);
  }
  tap_ok(streq(get("agentrt/c1/cpu.weight"), "39\n"), "v2 cpu.weight from shares 1024");
  tap_ok(streq(get("agentrt/c1/cpu.max"), "50000 100000\n"), "v2 cpu.max");
  tap_ok(streq(get("agentrt/c1/cpuset.cpus"), "0-1\n"), "v2 cpuset.cpus");
  tap_ok(streq(get("agentrt/c1/pids.max"), "100\n"), "v2 pids.max");
  tap_ok(streq(get("agentrt/c1/io.weight"), "default 4950\n8:0 2930\n"), "v2 io.weight");
  tap_ok(streq(get("agentrt/c1/io.max"), "8:0 rbps=1048576\n"), "v2 io.max");
  tap_ok(streq(get("agentrt/c1/hugetlb.2MB.max"), "2097152\n"), "v2 hugetlb.2MB.max");
  tap_ok(streq(get("agentrt/c1/memory.high"), "50000000\n"), "v2 unified key written");
  r = (struct oci_resources){.has_pids_limit = true, .pids_limit = 0};
  tap_ok(cgroup_apply(m, &r, true, &e) == 0 && strstr(get("agentrt/c1/pids.max"), "\nmax\n"),
         "v2 pids limit 0 -> max");
  r = (struct oci_resources){.n_unified = 1, .unified = &(struct oci_kv){"cgroup.procs", "1"}};
  tap_ok(cgroup_apply(m, &r, true, &e) < 0 && !exists("agentrt/c1/cgroup.procs"),
         "v2 hostile unified key rejected: %s", e.msg);
  r = (struct oci_resources){.n_unified = 1, .unified = &(struct oci_kv){"rdma.max", "x"}};
  tap_ok(cgroup_apply(m, &r, true, &e) < 0 && strstr(e.msg, "rdma controller not available"),
         "v2 unified key of a missing controller: %s", e.msg);
  r = (struct oci_resources){.has_cpu_realtime_runtime = true, .cpu_realtime_runtime = 5};
  tap_ok(cgroup_apply(m, &r, true, &e) < 0, "v2 realtime is an error: %s", e.msg);
  tap_ok(cgroup_freeze(m, true, &e) == 0 && cgroup_is_frozen(m, &e) == 1, "v2 cgroup.freeze");
  tap_ok(cgroup_destroy(m, &e) == 0 && !exists("agentrt"), "v2 destroy: %s", e.msg);
  cgroup_manager_free(m);
  rm_tree();

  fake_v2("cpu memory\n");
  r = (struct oci_resources){.has_pids_limit = true, .pids_limit = 10};
  m = mgr(2, "", false, &r, &e);
  tap_ok(m && cgroup_create(m, &e) == 0 && cgroup_apply(m, &r, false, &e) < 0 &&
             streq(e.msg, "cgroup: pids controller not available"),
         "v2 missing controller named: %s", e.msg);
  cgroup_destroy(m, &e);
  cgroup_manager_free(m);
  rm_tree();
}

static void test_bpf(void)
{
  struct error e = {0};
  struct cgroup_dev_rule rules[] = {
      {false, 'a', -1, -1, 7},
      {true, 'c', 1, 3, 7},
  };
  struct cgroup_dev_rule partial = {true, 'c', 1, 5, BPF_DEVCG_ACC_READ};
  struct bpf_insn *p = NULL;
  size_t n = 0;
  struct cgroup_dev_rule *all = NULL;
  struct oci_device_cgroup badtype = {true, 'x', false, false, 0, 0, NULL};
  struct oci_device_cgroup badacc = {true, 'c', false, false, 0, 0, "rwx"};
  struct oci_resources r = {.devices = &badtype, .n_devices = 1};

  tap_ok(cgroup_bpf_devices_build(rules, 2, &p, &n, &e) == 0 && n == 13,
         "bpf: 2 rules -> 13 instructions (got %zu)", n);
  if (p != NULL && n == 13) {
    tap_ok(p[6].code == (BPF_JMP | BPF_JNE | BPF_K) && p[6].dst_reg == BPF_REG_3 &&
               p[6].imm == BPF_DEVCG_DEV_CHAR && p[6].off == 4,
           "bpf: type test jumps past the rule");
    tap_ok(p[7].imm == 1 && p[8].imm == 3 && p[9].imm == 1 && p[10].code == (BPF_JMP | BPF_EXIT),
           "bpf: major 1, minor 3, allow");
    tap_ok(p[11].imm == 0 && p[12].code == (BPF_JMP | BPF_EXIT),
           "bpf: the deny-all rule ends the program");
  }
  free(p);
  p = NULL;
  tap_ok(cgroup_bpf_devices_build(&partial, 1, &p, &n, &e) == 0 && n == 6 + 8 + 2,
         "bpf: partial access adds a mask test, default deny at the end (%zu)", n);
  free(p);
  tap_ok(cgroup_device_rules(NULL, &all, &n, &e) == 0 && n == 11 && !all[0].allow &&
             all[0].type == 'a',
         "device rules: deny all, then the 10 defaults");
  free(all);
  tap_ok(cgroup_device_rules(&r, &all, &n, &e) < 0 && strstr(e.msg, "unknown device type"),
         "device rule with type x: %s", e.msg);
  r.devices = &badacc;
  tap_ok(cgroup_device_rules(&r, &all, &n, &e) < 0 && strstr(e.msg, "bad access"),
         "device rule with access rwx: %s", e.msg);
}

static void test_parse_list(void)
{
  size_t n = 9;
  uint64_t *v = cgroup_parse_list("0-3,7\n", &n);

  tap_ok(n == 5 && v != NULL && v[0] == 0 && v[3] == 3 && v[4] == 7, "cpu list 0-3,7");
  free(v);
  v = cgroup_parse_list("", &n);
  tap_ok(n == 0 && v == NULL, "empty cpu list");
  v = cgroup_parse_list("3-1", &n);
  tap_ok(n == 0 && v == NULL, "cpu list 3-1 refused");
  v = cgroup_parse_list("0-99999", &n);
  tap_ok(n == 0 && v == NULL, "cpu list too long refused");
  v = cgroup_parse_list("1,x", &n);
  tap_ok(n == 0 && v == NULL, "cpu list 1,x refused");
}

static void test_stats(void)
{
  struct error e = {0};
  struct cgroup_manager *m;
  char *json = NULL;
  uint64_t oom = 0;

  fake_v1();
  m = mgr(1, "/agentrt/c1", false, NULL, &e);
  cgroup_create(m, &e);
  put("cpuacct/agentrt/c1/cpuacct.usage", "123456\n");
  put("cpuacct/agentrt/c1/cpuacct.usage_percpu", "100000 23456 \n");
  put("cpuacct/agentrt/c1/cpuacct.usage_percpu_sys", "7 8 \n");
  put("cpuacct/agentrt/c1/cpuacct.usage_percpu_user", "9 10 \n");
  put("cpuset/agentrt/c1/cpuset.cpus", "0-2,5\n");
  put("cpuset/agentrt/c1/cpuset.mems", "0\n");
  put("cpuset/agentrt/c1/cpuset.sched_load_balance", "1\n");
  put("cpuset/agentrt/c1/cpuset.sched_relax_domain_level", "-1\n");
  put("memory/agentrt/c1/memory.kmem.tcp.limit_in_bytes", "4096\n");
  put("cpu/agentrt/c1/cpu.stat", "nr_periods 10\nnr_throttled 3\nthrottled_time 999\n");
  put("memory/agentrt/c1/memory.usage_in_bytes", "4096\n");
  put("memory/agentrt/c1/memory.limit_in_bytes", "9223372036854771712\n");
  put("memory/agentrt/c1/memory.stat", "cache 8192\nrss 4096\ntotal_cache 8192\n");
  put("memory/agentrt/c1/memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n");
  put("pids/agentrt/c1/pids.current", "3\n");
  put("pids/agentrt/c1/pids.max", "max\n");
  put("blkio/agentrt/c1/blkio.throttle.io_service_bytes_recursive",
      "8:0 Read 512\n8:0 Write 1024\nTotal 1536\n");
  tap_ok(cgroup_stats_json(m, &json, &e) == 0, "v1 stats json: %s", e.msg);
  if (json != NULL) {
    tap_ok(strstr(json, "\"cpu\":{\"usage\":{\"total\":123456,\"percpu\":[100000,23456]") != NULL,
           "stats: cpu usage");
    tap_ok(strstr(json,
                  "\"throttling\":{\"periods\":10,\"throttledPeriods\":3,\"throttledTime\":999}"),
           "stats: throttling");
    tap_ok(strstr(json, "\"usage\":{\"limit\":9223372036854771712,\"usage\":4096") != NULL,
           "stats: memory usage");
    tap_ok(strstr(json, "\"cache\":8192") && strstr(json, "\"raw\":{\"cache\":8192,\"rss\":4096"),
           "stats: memory cache and raw");
    tap_ok(strstr(json, "\"pids\":{\"current\":3,\"limit\":0}") != NULL, "stats: pids");
    tap_ok(strstr(json, "{\"major\":8,\"minor\":0,\"op\":\"Write\",\"value\":1024}") != NULL,
           "stats: blkio");
    tap_ok(strstr(json, "\"hugetlb\":{}") != NULL, "stats: hugetlb");
    tap_ok(
        strstr(json, "\"percpu\":[100000,23456],\"percpu_kernel\":[7,8],\"percpu_user\":[9,10]") !=
            NULL,
        "stats: per-cpu kernel and user times");
    tap_ok(strstr(json, "\"kernelTCP\":{\"limit\":4096,") != NULL, "stats: kernelTCP");
    tap_ok(strstr(json, "\"cpuset\":{\"cpus\":[0,1,2,5],\"cpu_exclusive\":0,\"mems\":[0],") !=
                   NULL &&
               strstr(json, "\"sched_load_balance\":1,\"sched_relax_domain_level\":-1}") != NULL,
           "stats: cpuset");
    tap_ok(strstr(json, "\"intel_rdt\":{},\"network_interfaces\":null}") != NULL,
           "stats: intel_rdt and network_interfaces");
  }
  free(json);
  tap_ok(cgroup_oom_count(m, &oom, &e) == 0 && oom == 2, "v1 oom count from oom_control");
  cgroup_destroy(m, &e);
  cgroup_manager_free(m);
  rm_tree();
}

/* Without permission to mkdir (an unprivileged user here): 1 (no cgroup)
 * when no limit is requested, a plain error when one is. */
static int create_as_nobody(const struct oci_resources *r)
{
  pid_t pid = fork();
  int st = 0;

  if (pid == 0) {
    struct error e = {0};
    struct cgroup_manager *m;
    int rc;
    if (setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
      _exit(100);
    m = mgr(2, "", false, r, &e);
    if (m == NULL)
      _exit(101);
    rc = cgroup_create(m, &e);
    _exit(rc == 1 && (e.code == EACCES || e.code == EPERM || e.code == EROFS) ? 10
          : rc == -1 && e.code == EACCES                                      ? 11
                                                                              : 12);
  }
  if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st))
    return -1;
  return WEXITSTATUS(st);
}

static void test_rootless(void)
{
  struct oci_resources r = {.has_pids_limit = true, .pids_limit = 5};

  fake_v2("cpu memory pids\n");
  chmod(tmp, 0755);
  tap_ok(create_as_nobody(NULL) == 10, "no permission, no limits: 1, not an error (err says why)");
  tap_ok(create_as_nobody(&r) == 11, "no permission with a pids limit: an error");
  rm_tree();
}

/* linux.resources.network: net_cls.classid and net_prio.ifpriomap on v1
 * (the two are usually co-mounted); ignored with a warning on v2. */
static void test_network(void)
{
  struct error e = {0};
  struct oci_resources r = {0};
  struct oci_net_priority prio[] = {{"lo", 10}, {"eth0", 30}};
  struct cgroup_manager *m;
  char **w;

  fake_v1();
  mk("net_cls,net_prio");
  put("self_cgroup", "10:net_cls,net_prio:/\n9:name=systemd:/\n8:pids:/\n7:blkio:/\n"
                     "6:freezer:/\n5:devices:/\n4:memory:/\n3:cpuset:/\n2:cpuacct:/\n1:cpu:/\n");
  r.has_net_class_id = true;
  r.net_class_id = 0x100001;
  r.net_priorities = prio;
  r.n_net_priorities = 2;
  m = mgr(1, "/agentrt/c1", false, &r, &e);
  tap_ok(m && cgroup_create(m, &e) == 0 && cgroup_apply(m, &r, false, &e) == 0,
         "v1 network apply: %s", e.msg);
  tap_ok(streq(get("net_cls,net_prio/agentrt/c1/net_cls.classid"), "1048577\n"),
         "v1 net_cls.classid");
  tap_ok(streq(get("net_cls,net_prio/agentrt/c1/net_prio.ifpriomap"), "lo 10\neth0 30\n"),
         "v1 net_prio.ifpriomap, one interface per write");
  w = cgroup_take_warnings(m);
  tap_ok(w == NULL, "v1 network applied: no warning (%s)", w ? w[0] : "");
  strv_free(w);
  cgroup_destroy(m, &e);
  cgroup_manager_free(m);
  rm_tree();

  fake_v1(); /* no net_cls hierarchy */
  m = mgr(1, "/agentrt/c1", false, &r, &e);
  tap_ok(m && cgroup_create(m, &e) == 0 && cgroup_apply(m, &r, false, &e) == 0 &&
             !exists("cpu/agentrt/c1/net_cls.classid"),
         "v1 network without a net_cls hierarchy: skipped with a warning, as runc does: %s", e.msg);
  /* the library returns its warnings to the caller (it never prints) */
  w = cgroup_take_warnings(m);
  tap_ok(
      strv_len(w) == 2 &&
          streq(w[0], "cgroup: no net_cls hierarchy: linux.resources.network.classID ignored") &&
          streq(w[1], "cgroup: no net_prio hierarchy: linux.resources.network.priorities ignored"),
      "v1 network without net_cls/net_prio: two warnings for the caller (%zu)", strv_len(w));
  strv_free(w);
  tap_ok(cgroup_take_warnings(m) == NULL, "warnings are taken once");
  cgroup_destroy(m, &e);
  cgroup_manager_free(m);
  rm_tree();

  error_clear(&e);
  fake_v2("cpuset cpu io memory hugetlb pids\n");
  m = mgr(2, "/agentrt/c1", false, &r, &e);
  tap_ok(m && cgroup_create(m, &e) == 0 && cgroup_apply(m, &r, false, &e) == 0,
         "v2 network resources are ignored, as runc does: %s", e.msg);
  w = cgroup_take_warnings(m);
  tap_ok(strv_len(w) == 1 && strstr(w[0], "linux.resources.network needs cgroup v1") != NULL,
         "v2 network: the warning goes to the caller (%s)", w ? w[0] : "none");
  strv_free(w);
  cgroup_destroy(m, &e);
  cgroup_manager_free(m);
  rm_tree();
}

int main(void)
{
  test_conversions();
  test_cpuset_and_validation();
  test_paths();
  test_unified_keys();
  test_v1_paths();
  test_v1_apply();
  test_network();
  test_v2_paths();
  test_v2_apply();
  test_bpf();
  test_parse_list();
  test_stats();
  if (geteuid() == 0)
    test_rootless();
  return tap_done();
}
