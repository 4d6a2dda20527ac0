/* stats.c - container statistics from cgroup files, and their JSON in the
 * shape of runc's `events --stats` "data" object (what `docker stats` and
 * containerd read): cpu, memory, pids, blkio, hugetlb, cpuset, intel_rdt,
 * network_interfaces.  agentrt neither sets up Intel RDT nor makes host
 * network interfaces for a container, so those two are runc's empty values
 * ({} and null), as runc reports them for an OCI bundle without them.
 *
 * Missing files read as zero (a controller or knob the host lacks); only a
 * missing cgroup is an error.  Times are nanoseconds as in runc.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>

#include "cgroups/internal.h"
#include "common/util.h"

void cgroup_stats_full_free(struct cgroup_stats_full *f)
{
  free(f->percpu);
  free(f->percpu_user);
  free(f->percpu_kernel);
  free(f->cpuset_cpus);
  free(f->cpuset_mems);
  free(f->mem_raw);
  free(f->blkio);
  free(f->hugetlb);
  memset(f, 0, sizeof *f);
}

static uint64_t rd(const char *dir, const char *file)
{
  uint64_t v = 0;
  struct error e = {0};
  if (dir == NULL || cg_read_u64(dir, file, &v, &e) < 0)
    return 0;
  return v;
}

static char *rd_text(const char *dir, const char *file)
{
  char *s = NULL;
  struct error e = {0};
  if (dir == NULL || cg_read(dir, file, &s, &e) < 0)
    return xstrdup("");
  return s;
}

static uint64_t keyed(const char *text, const char *key)
{
  uint64_t v = 0;
  if (cg_keyed_u64(text, key, &v) < 0)
    return 0;
  return v;
}

static void blkio_push(struct cgroup_stats_full *f, uint64_t maj, uint64_t min, const char *op,
                       uint64_t v)
{
  struct cgroup_blkio_entry *e;

  if (f->n_blkio >= 4096)
    return;
  f->blkio = xrealloc(f->blkio, (f->n_blkio + 1) * sizeof *f->blkio);
  e = &f->blkio[f->n_blkio++];
  e->major = maj;
  e->minor = min;
  e->value = v;
  snprintf(e->op, sizeof e->op, "%s", op);
}

/* "8:0 Read 4096" lines ("Total 123" at the end has no device) */
void cgroup_blkio_parse_v1(struct cgroup_stats_full *f, const char *text)
{
  cleanup_free char *copy = xstrdup(text);
  char *save = NULL;

  for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
    unsigned long long maj, min, v;
    char op[16];
    if (sscanf(l, "%llu:%llu %15s %llu", &maj, &min, op, &v) == 4)
      blkio_push(f, maj, min, op, v);
  }
}

/* "8:0 rbytes=1 wbytes=2 rios=3 wios=4 dbytes=0 dios=0" lines */
void cgroup_blkio_parse_v2(struct cgroup_stats_full *f, const char *text)
{
  cleanup_free char *copy = xstrdup(text);
  char *save = NULL;

  for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
    unsigned long long maj, min, rb = 0, wb = 0;
    const char *p;
    if (sscanf(l, "%llu:%llu", &maj, &min) != 2)
      continue;
    if ((p = strstr(l, " rbytes=")) != NULL)
      sscanf(p + 8, "%llu", &rb);
    if ((p = strstr(l, " wbytes=")) != NULL)
      sscanf(p + 8, "%llu", &wb);
    blkio_push(f, maj, min, "Read", rb);
    blkio_push(f, maj, min, "Write", wb);
    blkio_push(f, maj, min, "Total", rb + wb);
  }
}

void cgroup_hugetlb_push(struct cgroup_stats_full *f, const char *size, uint64_t usage,
                         uint64_t max, uint64_t failcnt)
{
  struct cgroup_hugetlb_entry *e;

  f->hugetlb = xrealloc(f->hugetlb, (f->n_hugetlb + 1) * sizeof *f->hugetlb);
  e = &f->hugetlb[f->n_hugetlb++];
  snprintf(e->size, sizeof e->size, "%s", size);
  e->usage = usage;
  e->max = max;
  e->failcnt = failcnt;
}

char **cgroup_hugepage_sizes(void)
{
  DIR *d = opendir("/sys/kernel/mm/hugepages");
  struct dirent *e;
  char **v = NULL;

  if (d == NULL)
    return NULL;
  while ((e = readdir(d)) != NULL) {
    unsigned long long kb;
    char buf[32];
    if (sscanf(e->d_name, "hugepages-%llukB", &kb) != 1 || kb == 0)
      continue;
    if (kb % (1024 * 1024) == 0)
      snprintf(buf, sizeof buf, "%lluGB", kb / (1024 * 1024));
    else if (kb % 1024 == 0)
      snprintf(buf, sizeof buf, "%lluMB", kb / 1024);
    else
      snprintf(buf, sizeof buf, "%lluKB", kb);
    strv_push(&v, buf);
  }
  closedir(d);
  return v;
}

static void percpu_parse(uint64_t **v, size_t *n, const char *text)
{
  const char *p = text;

  while (*p && *n < 4096) {
    char *end;
    unsigned long long x = strtoull(p, &end, 10);
    if (end == p)
      break;
    *v = xrealloc(*v, (*n + 1) * sizeof **v);
    (*v)[(*n)++] = x;
    p = end;
    while (*p == ' ' || *p == '\n')
      p++;
  }
}

uint64_t *cgroup_parse_list(const char *text, size_t *n)
{
  uint64_t *v = NULL;
  const char *p = text;

  *n = 0;
  while (*p == ' ' || *p == '\n')
    p++;
  while (*p != '\0' && *p != '\n') {
    char *end;
    unsigned long long lo = strtoull(p, &end, 10), hi;
    if (end == p)
      goto bad;
    hi = lo;
    p = end;
    if (*p == '-') {
      hi = strtoull(p + 1, &end, 10);
      if (end == p + 1 || hi < lo)
        goto bad;
      p = end;
    }
    if (hi - lo >= 4096 || *n + (hi - lo) >= 4096)
      goto bad;
    for (unsigned long long i = lo; i <= hi; i++) {
      v = xrealloc(v, (*n + 1) * sizeof *v);
      v[(*n)++] = i;
    }
    if (*p == ',')
      p++;
    else if (*p != '\0' && *p != '\n')
      goto bad;
  }
  return v;
bad:
  free(v);
  *n = 0;
  return NULL;
}

static void v1_cpu_stats(struct cgroup_manager *m, struct cgroup_stats_full *f)
{
  struct cgroup_hier *acct = cgroup_v1_hier(m, "cpuacct");
  struct cgroup_hier *cpu = cgroup_v1_hier(m, "cpu");
  const char *ad = acct ? acct->dir : NULL;
  cleanup_free char *percpu = rd_text(ad, "cpuacct.usage_percpu");
  cleanup_free char *pc_user = rd_text(ad, "cpuacct.usage_percpu_user");
  cleanup_free char *pc_sys = rd_text(ad, "cpuacct.usage_percpu_sys");
  cleanup_free char *st = rd_text(cpu ? cpu->dir : NULL, "cpu.stat");

  f->s.cpu_total_ns = rd(ad, "cpuacct.usage");
  percpu_parse(&f->percpu, &f->n_percpu, percpu);
  percpu_parse(&f->percpu_user, &f->n_percpu_user, pc_user);
  percpu_parse(&f->percpu_kernel, &f->n_percpu_kernel, pc_sys);
  if (ad != NULL && cg_exists(ad, "cpuacct.usage_user")) {
    f->s.cpu_user_ns = rd(ad, "cpuacct.usage_user");
    f->s.cpu_kernel_ns = rd(ad, "cpuacct.usage_sys");
  } else {
    cleanup_free char *t = rd_text(ad, "cpuacct.stat");
    long hz = sysconf(_SC_CLK_TCK);
    hz = hz > 0 ? hz : 100;
    f->s.cpu_user_ns = keyed(t, "user") * (1000000000ull / (uint64_t)hz);
    f->s.cpu_kernel_ns = keyed(t, "system") * (1000000000ull / (uint64_t)hz);
  }
  f->s.cpu_periods = keyed(st, "nr_periods");
  f->s.cpu_throttled_periods = keyed(st, "nr_throttled");
  f->s.cpu_throttled_ns = keyed(st, "throttled_time");
}

static void v1_memory_stats(struct cgroup_manager *m, struct cgroup_stats_full *f)
{
  struct cgroup_hier *h = cgroup_v1_hier(m, "memory");
  const char *d = h ? h->dir : NULL;
  cleanup_free char *oom = rd_text(d, "memory.oom_control");

  f->mem_raw = rd_text(d, "memory.stat");
  f->s.mem_cache = keyed(f->mem_raw, "total_cache");
  if (f->s.mem_cache == 0)
    f->s.mem_cache = keyed(f->mem_raw, "cache");
  f->s.mem_usage = rd(d, "memory.usage_in_bytes");
  f->s.mem_limit = rd(d, "memory.limit_in_bytes");
  f->s.mem_max_usage = rd(d, "memory.max_usage_in_bytes");
  f->s.mem_failcnt = rd(d, "memory.failcnt");
  f->s.mem_swap_usage = rd(d, "memory.memsw.usage_in_bytes");
  f->swap_limit = rd(d, "memory.memsw.limit_in_bytes");
  f->swap_max = rd(d, "memory.memsw.max_usage_in_bytes");
  f->swap_failcnt = rd(d, "memory.memsw.failcnt");
  f->kernel_usage = rd(d, "memory.kmem.usage_in_bytes");
  f->kernel_limit = rd(d, "memory.kmem.limit_in_bytes");
  f->kernel_max = rd(d, "memory.kmem.max_usage_in_bytes");
  f->kernel_failcnt = rd(d, "memory.kmem.failcnt");
  f->tcp_usage = rd(d, "memory.kmem.tcp.usage_in_bytes");
  f->tcp_limit = rd(d, "memory.kmem.tcp.limit_in_bytes");
  f->tcp_max = rd(d, "memory.kmem.tcp.max_usage_in_bytes");
  f->tcp_failcnt = rd(d, "memory.kmem.tcp.failcnt");
  f->s.oom_kill_count = keyed(oom, "oom_kill");
}

int cgroup_v1_stats(struct cgroup_manager *m, struct cgroup_stats_full *f, struct error *err)
{
  const char *pd = m->ops->procs_dir(m);
  struct cgroup_hier *h;

  if (access(pd, F_OK) < 0)
    return error_errno(err, "cgroup: `%s`", pd);
  v1_cpu_stats(m, f);
  v1_memory_stats(m, f);
  if ((h = cgroup_v1_hier(m, "cpuset")) != NULL) {
    cleanup_free char *relax = rd_text(h->dir, "cpuset.sched_relax_domain_level");
    long long lv = 0;
    f->cpuset_cpus = rd_text(h->dir, "cpuset.cpus");
    f->cpuset_mems = rd_text(h->dir, "cpuset.mems");
    f->cpu_exclusive = rd(h->dir, "cpuset.cpu_exclusive");
    f->mem_hardwall = rd(h->dir, "cpuset.mem_hardwall");
    f->mem_exclusive = rd(h->dir, "cpuset.mem_exclusive");
    f->memory_migrate = rd(h->dir, "cpuset.memory_migrate");
    f->memory_spread_page = rd(h->dir, "cpuset.memory_spread_page");
    f->memory_spread_slab = rd(h->dir, "cpuset.memory_spread_slab");
    f->memory_pressure = rd(h->dir, "cpuset.memory_pressure");
    f->sched_load_balance = rd(h->dir, "cpuset.sched_load_balance");
    if (sscanf(relax, "%lld", &lv) == 1)
      f->sched_relax_domain_level = lv;
  }
  if ((h = cgroup_v1_hier(m, "pids")) != NULL) {
    f->s.pids_current = rd(h->dir, "pids.current");
    f->s.pids_limit = rd(h->dir, "pids.max");
    f->s.pids_limit = f->s.pids_limit == UINT64_MAX ? 0 : f->s.pids_limit;
  }
  if ((h = cgroup_v1_hier(m, "blkio")) != NULL) {
    cleanup_free char *t = rd_text(h->dir, "blkio.throttle.io_service_bytes_recursive");
    cgroup_blkio_parse_v1(f, t);
  }
  if ((h = cgroup_v1_hier(m, "hugetlb")) != NULL) {
    cleanup_strv char **sizes = cgroup_hugepage_sizes();
    for (char **s = sizes; s && *s; s++) {
      cleanup_free char *u = xfmt("hugetlb.%s.usage_in_bytes", *s);
      cleanup_free char *mx = xfmt("hugetlb.%s.max_usage_in_bytes", *s);
      cleanup_free char *fc = xfmt("hugetlb.%s.failcnt", *s);
      cgroup_hugetlb_push(f, *s, rd(h->dir, u), rd(h->dir, mx), rd(h->dir, fc));
    }
  }
  return 0;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
  return (a == UINT64_MAX || b == UINT64_MAX || a + b < a) ? UINT64_MAX : a + b;
}

int cgroup_v2_stats(struct cgroup_manager *m, struct cgroup_stats_full *f, struct error *err)
{
  const char *d = m->hier[0].dir;
  cleanup_free char *cpu = NULL;
  cleanup_free char *ev = NULL;
  cleanup_free char *io = NULL;
  cleanup_strv char **sizes = NULL;

  if (access(d, F_OK) < 0)
    return error_errno(err, "cgroup: `%s`", d);
  cpu = rd_text(d, "cpu.stat");
  f->s.cpu_total_ns = keyed(cpu, "usage_usec") * 1000;
  f->s.cpu_user_ns = keyed(cpu, "user_usec") * 1000;
  f->s.cpu_kernel_ns = keyed(cpu, "system_usec") * 1000;
  f->s.cpu_periods = keyed(cpu, "nr_periods");
  f->s.cpu_throttled_periods = keyed(cpu, "nr_throttled");
  f->s.cpu_throttled_ns = keyed(cpu, "throttled_usec") * 1000;
  /* v2 has no cpuset flags: the lists the cgroup runs on */
  f->cpuset_cpus = rd_text(d, "cpuset.cpus.effective");
  f->cpuset_mems = rd_text(d, "cpuset.mems.effective");
  f->mem_raw = rd_text(d, "memory.stat");
  f->s.mem_cache = keyed(f->mem_raw, "file");
  f->s.mem_usage = rd(d, "memory.current");
  f->s.mem_limit = rd(d, "memory.max");
  f->s.mem_max_usage = rd(d, "memory.peak");
  ev = rd_text(d, "memory.events");
  f->s.mem_failcnt = keyed(ev, "max");
  f->s.oom_kill_count = keyed(ev, "oom_kill");
  /* runc reports memory+swap as "swap" on v2 too, for v1 compatibility */
  f->s.mem_swap_usage = sat_add(f->s.mem_usage, rd(d, "memory.swap.current"));
  f->swap_limit = sat_add(f->s.mem_limit, rd(d, "memory.swap.max"));
  f->s.pids_current = rd(d, "pids.current");
  f->s.pids_limit = rd(d, "pids.max");
  f->s.pids_limit = f->s.pids_limit == UINT64_MAX ? 0 : f->s.pids_limit;
  io = rd_text(d, "io.stat");
  cgroup_blkio_parse_v2(f, io);
  sizes = cgroup_hugepage_sizes();
  for (char **s = sizes; s && *s; s++) {
    cleanup_free char *cur = xfmt("hugetlb.%s.current", *s);
    cleanup_free char *evf = xfmt("hugetlb.%s.events", *s);
    cleanup_free char *e = NULL;
    if (!cg_exists(d, cur))
      continue;
    e = rd_text(d, evf);
    /* v2 keeps no peak usage: "max" is 0, as runc reports it (hugetlb.*.max
     * is the limit, not a usage) */
    cgroup_hugetlb_push(f, *s, rd(d, cur), 0, keyed(e, "max"));
  }
  return 0;
}

/* ---- JSON ---- */

static void g_str(yajl_gen g, const char *s)
{
  yajl_gen_string(g, (const unsigned char *)s, strlen(s));
}

static void g_u64(yajl_gen g, const char *key, uint64_t v)
{
  char buf[32];
  int n = snprintf(buf, sizeof buf, "%" PRIu64, v);
  if (key != NULL)
    g_str(g, key);
  yajl_gen_number(g, buf, (size_t)n);
}

static void g_entry(yajl_gen g, const char *key, uint64_t limit, uint64_t usage, uint64_t max,
                    uint64_t failcnt)
{
  g_str(g, key);
  yajl_gen_map_open(g);
  g_u64(g, "limit", limit);
  g_u64(g, "usage", usage);
  g_u64(g, "max", max);
  g_u64(g, "failcnt", failcnt);
  yajl_gen_map_close(g);
}

static void g_cpu(yajl_gen g, const struct cgroup_stats_full *f)
{
  g_str(g, "cpu");
  yajl_gen_map_open(g);
  g_str(g, "usage");
  yajl_gen_map_open(g);
  g_u64(g, "total", f->s.cpu_total_ns);
  g_str(g, "percpu");
  yajl_gen_array_open(g);
  for (size_t i = 0; i < f->n_percpu; i++)
    g_u64(g, NULL, f->percpu[i]);
  yajl_gen_array_close(g);
  /* as runc: only where the host keeps them */
  if (f->n_percpu_kernel > 0) {
    g_str(g, "percpu_kernel");
    yajl_gen_array_open(g);
    for (size_t i = 0; i < f->n_percpu_kernel; i++)
      g_u64(g, NULL, f->percpu_kernel[i]);
    yajl_gen_array_close(g);
  }
  if (f->n_percpu_user > 0) {
    g_str(g, "percpu_user");
    yajl_gen_array_open(g);
    for (size_t i = 0; i < f->n_percpu_user; i++)
      g_u64(g, NULL, f->percpu_user[i]);
    yajl_gen_array_close(g);
  }
  g_u64(g, "kernel", f->s.cpu_kernel_ns);
  g_u64(g, "user", f->s.cpu_user_ns);
  yajl_gen_map_close(g);
  g_str(g, "throttling");
  yajl_gen_map_open(g);
  g_u64(g, "periods", f->s.cpu_periods);
  g_u64(g, "throttledPeriods", f->s.cpu_throttled_periods);
  g_u64(g, "throttledTime", f->s.cpu_throttled_ns);
  yajl_gen_map_close(g);
  yajl_gen_map_close(g);
}

static void g_raw(yajl_gen g, const char *text)
{
  cleanup_free char *copy = xstrdup(text ? text : "");
  char *save = NULL;

  g_str(g, "raw");
  yajl_gen_map_open(g);
  for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
    char *sp = strchr(l, ' ');
    uint64_t v;
    if (sp == NULL)
      continue;
    *sp = '\0';
    if (parse_u64(sp + 1, &v) == 0)
      g_u64(g, l, v);
  }
  yajl_gen_map_close(g);
}

static void g_memory(yajl_gen g, const struct cgroup_stats_full *f)
{
  g_str(g, "memory");
  yajl_gen_map_open(g);
  g_u64(g, "cache", f->s.mem_cache);
  g_entry(g, "usage", f->s.mem_limit, f->s.mem_usage, f->s.mem_max_usage, f->s.mem_failcnt);
  g_entry(g, "swap", f->swap_limit, f->s.mem_swap_usage, f->swap_max, f->swap_failcnt);
  g_entry(g, "kernel", f->kernel_limit, f->kernel_usage, f->kernel_max, f->kernel_failcnt);
  g_entry(g, "kernelTCP", f->tcp_limit, f->tcp_usage, f->tcp_max, f->tcp_failcnt);
  g_raw(g, f->mem_raw);
  yajl_gen_map_close(g);
}

static void g_blkio_hugetlb(yajl_gen g, const struct cgroup_stats_full *f)
{
  g_str(g, "blkio");
  yajl_gen_map_open(g);
  g_str(g, "ioServiceBytesRecursive");
  yajl_gen_array_open(g);
  for (size_t i = 0; i < f->n_blkio; i++) {
    yajl_gen_map_open(g);
    g_u64(g, "major", f->blkio[i].major);
    g_u64(g, "minor", f->blkio[i].minor);
    g_str(g, "op");
    g_str(g, f->blkio[i].op);
    g_u64(g, "value", f->blkio[i].value);
    yajl_gen_map_close(g);
  }
  yajl_gen_array_close(g);
  yajl_gen_map_close(g);
  g_str(g, "hugetlb");
  yajl_gen_map_open(g);
  for (size_t i = 0; i < f->n_hugetlb; i++) {
    g_str(g, f->hugetlb[i].size);
    yajl_gen_map_open(g);
    g_u64(g, "usage", f->hugetlb[i].usage);
    g_u64(g, "max", f->hugetlb[i].max);
    g_u64(g, "failcnt", f->hugetlb[i].failcnt);
    yajl_gen_map_close(g);
  }
  yajl_gen_map_close(g);
}

/* runc leaves out an empty list ("cpus,omitempty") */
static void g_list(yajl_gen g, const char *key, const char *text)
{
  size_t n = 0;
  cleanup_free uint64_t *v = cgroup_parse_list(text ? text : "", &n);

  if (n == 0)
    return;
  g_str(g, key);
  yajl_gen_array_open(g);
  for (size_t i = 0; i < n; i++)
    g_u64(g, NULL, v[i]);
  yajl_gen_array_close(g);
}

static void g_cpuset(yajl_gen g, const struct cgroup_stats_full *f)
{
  char buf[32];
  int n;

  g_str(g, "cpuset");
  yajl_gen_map_open(g);
  g_list(g, "cpus", f->cpuset_cpus);
  g_u64(g, "cpu_exclusive", f->cpu_exclusive);
  g_list(g, "mems", f->cpuset_mems);
  g_u64(g, "mem_hardwall", f->mem_hardwall);
  g_u64(g, "mem_exclusive", f->mem_exclusive);
  g_u64(g, "memory_migrate", f->memory_migrate);
  g_u64(g, "memory_spread_page", f->memory_spread_page);
  g_u64(g, "memory_spread_slab", f->memory_spread_slab);
  g_u64(g, "memory_pressure", f->memory_pressure);
  g_u64(g, "sched_load_balance", f->sched_load_balance);
  g_str(g, "sched_relax_domain_level");
  n = snprintf(buf, sizeof buf, "%" PRId64, f->sched_relax_domain_level);
  yajl_gen_number(g, buf, (size_t)n);
  yajl_gen_map_close(g);
}

int cgroup_stats_to_json(const struct cgroup_stats_full *f, char **ret, struct error *err)
{
  yajl_gen g = yajl_gen_alloc(NULL);
  const unsigned char *buf;
  size_t len;

  if (g == NULL)
    return error_set(err, ENOMEM, "cgroup: stats: json");
  yajl_gen_map_open(g);
  g_cpu(g, f);
  g_memory(g, f);
  g_str(g, "pids");
  yajl_gen_map_open(g);
  g_u64(g, "current", f->s.pids_current);
  g_u64(g, "limit", f->s.pids_limit);
  yajl_gen_map_close(g);
  g_blkio_hugetlb(g, f);
  g_cpuset(g, f);
  g_str(g, "intel_rdt");
  yajl_gen_map_open(g);
  yajl_gen_map_close(g);
  g_str(g, "network_interfaces");
  yajl_gen_null(g);
  yajl_gen_map_close(g);
  if (yajl_gen_get_buf(g, &buf, &len) != yajl_gen_status_ok) {
    yajl_gen_free(g);
    return error_set(err, EINVAL, "cgroup: stats: json generation failed");
  }
  *ret = xstrndup((const char *)buf, len);
  yajl_gen_free(g);
  return 0;
}

/* ---- the public calls ---- */

int cgroup_stats(struct cgroup_manager *m, struct cgroup_stats *ret, struct error *err)
{
  struct cgroup_stats_full f = {0};

  if (m->ops->stats(m, &f, err) < 0) {
    cgroup_stats_full_free(&f);
    return -1;
  }
  *ret = f.s;
  cgroup_stats_full_free(&f);
  return 0;
}

int cgroup_stats_json(struct cgroup_manager *m, char **ret_json, struct error *err)
{
  struct cgroup_stats_full f = {0};
  int r = m->ops->stats(m, &f, err);

  if (r == 0)
    r = cgroup_stats_to_json(&f, ret_json, err);
  cgroup_stats_full_free(&f);
  return r;
}

int cgroup_oom_count(struct cgroup_manager *m, uint64_t *ret, struct error *err)
{
  return m->ops->oom_count(m, ret, err);
}

/* See cgroup.h.  v1: an eventfd the kernel signals on each OOM of the memory
 * cgroup (and when the cgroup goes), registered through cgroup.event_control;
 * v2: an inotify watch on memory.events, which the kernel changes on each
 * event it counts. */
int cgroup_oom_watch(struct cgroup_manager *m, struct error *err)
{
  const char *dir = cgroup_controller_dir(m, "memory");
  cleanup_close int fd = -1, ctl = -1, oc = -1;

  if (dir == NULL)
    return error_set(err, ENOENT, "cgroup: no memory controller");
  if (m->version == 2) {
    cleanup_free char *ev = xfmt("%s/memory.events", dir);
    fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
    if (fd < 0 || inotify_add_watch(fd, ev, IN_MODIFY) < 0)
      return error_errno(err, "cgroup `%s`: watch memory.events", dir);
  } else {
    cleanup_free char *ocp = xfmt("%s/memory.oom_control", dir);
    cleanup_free char *ctlp = xfmt("%s/cgroup.event_control", dir);
    char line[32];
    int n;

    fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    oc = open(ocp, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    ctl = open(ctlp, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 || oc < 0 || ctl < 0)
      return error_errno(err, "cgroup `%s`: OOM notification", dir);
    n = snprintf(line, sizeof line, "%d %d", fd, oc);
    if (write(ctl, line, (size_t)n) != n)
      return error_errno(err, "cgroup `%s`: cgroup.event_control", dir);
  }
  return take_fd(&fd);
}

void cgroup_oom_watch_drain(int fd)
{
  char buf[4096];

  while (read(fd, buf, sizeof buf) > 0)
    ;
}

const char *cgroup_controller_dir(struct cgroup_manager *m, const char *controller)
{
  struct cgroup_hier *h;

  if (m->version == 2)
    return m->ops->procs_dir(m);
  h = cgroup_v1_hier(m, controller);
  return h ? h->dir : NULL;
}
