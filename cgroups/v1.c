/* v1.c - the cgroup v1 backend (legacy and hybrid hosts).
 *
 * One directory per mounted hierarchy.  Resources go to the controller's
 * files (memory.limit_in_bytes, cpu.cfs_quota_us, devices.allow, ...); a
 * value for a controller that is not mounted is an error naming it.
 * Freezing uses freezer.state; v1 has no cgroup.kill, so killing is done pid
 * by pid by the manager with the cgroup frozen.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/stat.h>

#include "cgroups/internal.h"
#include "common/log.h"
#include "common/util.h"

static struct cgroup_hier *need(struct cgroup_manager *m, const char *c, struct error *err)
{
  struct cgroup_hier *h = cgroup_v1_hier(m, c);
  if (h == NULL)
    cg_missing(err, c);
  return h;
}

/* Fill empty cpuset.cpus/mems from the parent, from the top down to the
 * leaf: a task cannot join a cpuset that has none (ENOSPC).  A level's
 * values, once read or written, are the next level's parent values; the
 * leaf we just made is empty unless the parent has cgroup.clone_children,
 * and then writing the parent's values again changes nothing. */
static int cpuset_fill(struct cgroup_manager *m, struct cgroup_hier *h, struct error *err)
{
  static const char *const files[] = {"cpuset.cpus", "cpuset.mems"};
  cleanup_free char *dir = xstrdup(h->mount);
  char *known[ARRAY_SIZE(files)] = {NULL, NULL}; /* the parent level's values */
  const char *p = h->rel;
  int rc = -1;

  while (*p == '/')
    p++;
  while (*p != '\0') {
    size_t len = strcspn(p, "/");
    cleanup_free char *parent = dir;
    bool leaf;
    dir = xfmt("%s/%.*s", parent, (int)len, p);
    p += len;
    while (*p == '/')
      p++;
    leaf = *p == '\0';
    for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
      char *cur = NULL;
      struct error e = {0};
      if (!(leaf && h->made && known[i] != NULL) && cg_read(dir, files[i], &cur, &e) == 0 &&
          strspn(cur, " \n") != strlen(cur)) {
        free(known[i]);
        known[i] = cur;
        continue;
      }
      free(cur);
      if (known[i] == NULL && cg_read(parent, files[i], &known[i], err) < 0)
        goto out;
      known[i][strcspn(known[i], "\n")] = '\0';
      if (cg_write(m, dir, files[i], known[i], err) < 0)
        goto out;
    }
  }
  rc = 0;
out:
  for (size_t i = 0; i < ARRAY_SIZE(files); i++)
    free(known[i]);
  return rc;
}

static void drop_hier(struct cgroup_manager *m, size_t i)
{
  struct cgroup_hier *h = &m->hier[i];

  strv_free(h->ctrls);
  free(h->mount);
  free(h->rel);
  free(h->dir);
  free(h->mroot);
  memmove(h, h + 1, (m->n_hier - i - 1) * sizeof *h);
  m->n_hier--;
  memset(&m->hier[m->n_hier], 0, sizeof *h);
}

static int v1_create(struct cgroup_manager *m, struct error *err)
{
  if (m->n_hier == 0)
    return error_set(err, ENOENT, "cgroup: no cgroup v1 hierarchy found under `%s`", m->root);
  for (size_t i = 0; i < m->n_hier; i++) {
    struct cgroup_hier *h = &m->hier[i];
    /* the leaf first: one mkdir when the parents exist (the usual case) */
    if (mkdir(h->dir, 0755) == 0) {
      h->made = true;
      continue;
    }
    if (errno == EEXIST) {
      h->made = false;
      continue;
    }
    if (errno != ENOENT && !cgroup_hier_unified(h))
      return error_errno(err, "cgroup: mkdir `%s`", h->dir);
    if (errno == ENOENT && cg_mkdir_p(h->mount, h->rel, err) == 0) {
      h->made = true;
      continue;
    }
    if (!cgroup_hier_unified(h))
      return -1;
    /* the unified hierarchy is a bonus: not delegated to us, go on without */
    log_debug("cgroup: no cgroup in the unified hierarchy (%s), ignoring",
              err->msg[0] ? err->msg : strerror(errno));
    error_clear(err);
    drop_hier(m, i--);
  }
  if (cgroup_v1_hier(m, "cpuset") != NULL && cpuset_fill(m, cgroup_v1_hier(m, "cpuset"), err) < 0)
    return -1;
  return 0;
}

static int v1_add_pid(struct cgroup_manager *m, pid_t pid, struct error *err)
{
  for (size_t i = 0; i < m->n_hier; i++)
    if (!(m->unified_at_clone && cgroup_hier_unified(&m->hier[i])) &&
        cg_writef(m, m->hier[i].dir, "cgroup.procs", err, "%d", (int)pid) < 0) {
      if (!cgroup_hier_unified(&m->hier[i]))
        return -1;
      error_clear(err); /* a bonus, see v1_create */
    }
  return 0;
}

int cgroup_join_fds(struct cgroup_manager *m, int fds[CGROUP_JOIN_MAX], size_t *n,
                    struct error *err)
{
  *n = 0;
  /* a systemd unit not made yet: cgroup_add_pid() makes it with the init */
  if (m->version != 1 || m->fake || m->n_hier > CGROUP_JOIN_MAX || (m->systemd && !m->sd_started))
    return 0;
  for (size_t i = 0; i < m->n_hier; i++) {
    if (m->unified_at_clone && cgroup_hier_unified(&m->hier[i]))
      continue;
    cleanup_free char *path =
        xfmt("%s/%s", m->hier[i].dir, cgroup_hier_unified(&m->hier[i]) ? "cgroup.procs" : "tasks");
    int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
      error_errno(err, "cgroup: open `%s`", path);
      cgroup_join_fds_close(fds, *n);
      *n = 0;
      return -1;
    }
    fds[(*n)++] = fd;
  }
  return 0;
}

int cgroup_join_self(const int *fds, size_t n, struct error *err)
{
  for (size_t i = 0; i < n; i++) {
    if (write(fds[i], "0", 1) != 1)
      return error_errno(err, "cgroup: join the container's cgroup (hierarchy %zu)", i + 1);
    close(fds[i]);
  }
  return 0;
}

void cgroup_join_fds_close(int *fds, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (fds[i] >= 0)
      close(fds[i]);
}

static int wr_i64(struct cgroup_manager *m, const char *dir, const char *file, int64_t v,
                  struct error *err)
{
  return cg_writef(m, dir, file, err, "%" PRId64, v);
}

static bool memsw_supported(struct cgroup_manager *m, const char *dir)
{
  return m->fake || cg_exists(dir, "memory.memsw.limit_in_bytes");
}

/* memory.limit_in_bytes and memory.memsw.limit_in_bytes (memory + swap)
 * must keep memsw >= limit at every step: raise memsw first, lower it last. */
static int v1_memory_limits(struct cgroup_manager *m, const char *dir,
                            const struct oci_resources *r, struct error *err)
{
  bool has_l = r->has_memory_limit && r->memory_limit != 0;
  bool has_s = r->has_memory_swap && r->memory_swap != 0;
  int64_t l = r->memory_limit, s = r->memory_swap;
  uint64_t cur = UINT64_MAX;
  struct error e = {0};
  bool swap_first;

  if (has_l && !has_s && l == -1 && memsw_supported(m, dir)) {
    has_s = true; /* unlimited memory also lifts the memory+swap limit */
    s = -1;
  }
  if (has_s && !memsw_supported(m, dir))
    return cg_fail(err, ENOTSUP,
                   "cgroup: memory.swap: swap accounting not available (no "
                   "memory.memsw.limit_in_bytes)");
  if (has_l && has_s && s != -1 && l != -1 && s < l)
    return cg_fail(err, EINVAL,
                   "cgroup: memory.swap (%" PRId64 ") must be >= memory.limit (%" PRId64 ")", s, l);
  if (!m->fake)
    cg_read_u64(dir, "memory.memsw.limit_in_bytes", &cur, &e);
  swap_first = has_s && (s == -1 || l == -1 || (uint64_t)l > cur || !has_l);
  if (swap_first && wr_i64(m, dir, "memory.memsw.limit_in_bytes", s, err) < 0)
    return -1;
  if (has_l && wr_i64(m, dir, "memory.limit_in_bytes", l, err) < 0)
    return -1;
  if (has_s && !swap_first && wr_i64(m, dir, "memory.memsw.limit_in_bytes", s, err) < 0)
    return -1;
  return 0;
}

static bool memory_requested(const struct oci_resources *r)
{
  return r->has_memory_limit || r->has_memory_reservation || r->has_memory_swap ||
         r->has_memory_kernel || r->has_memory_kernel_tcp ||
         (r->has_memory_swappiness && r->memory_swappiness != UINT64_MAX) ||
         (r->has_disable_oom_killer && r->disable_oom_killer);
}

static int v1_memory(struct cgroup_manager *m, const struct oci_resources *r, struct error *err)
{
  struct cgroup_hier *h;

  if (!memory_requested(r))
    return 0;
  if ((h = need(m, "memory", err)) == NULL)
    return -1;
  if (v1_memory_limits(m, h->dir, r, err) < 0)
    return -1;
  /* 0 is "not set", as runc (and as memory.limit here): not a soft limit of
   * nothing, which makes the container the first to be reclaimed */
  if (r->has_memory_reservation && r->memory_reservation != 0 &&
      wr_i64(m, h->dir, "memory.soft_limit_in_bytes", r->memory_reservation, err) < 0)
    return -1;
  if (r->has_memory_kernel && r->memory_kernel != 0)
    cg_warn(m, "cgroup: memory.kernel is not supported by current kernels, ignoring");
  if (r->has_memory_kernel_tcp && r->memory_kernel_tcp != 0 &&
      wr_i64(m, h->dir, "memory.kmem.tcp.limit_in_bytes", r->memory_kernel_tcp, err) < 0)
    return -1;
  if (r->has_memory_swappiness && r->memory_swappiness != UINT64_MAX &&
      cg_writef(m, h->dir, "memory.swappiness", err, "%" PRIu64, r->memory_swappiness) < 0)
    return -1;
  if (r->has_disable_oom_killer &&
      cg_write(m, h->dir, "memory.oom_control", r->disable_oom_killer ? "1" : "0", err) < 0)
    return -1;
  return 0;
}

/* A period file (when PERIOD is not 0), then the limit beside it (the cfs
 * quota or the rt runtime, when HAS_LIMIT).  The kernel checks each write
 * against the other file's current value and the parent's: a new, lower
 * period may only fit once the new limit is in (an rt runtime above the
 * period, a quota ratio past a capped parent's), so on EINVAL the limit goes
 * first (as runc) */
static int period_then_limit(struct cgroup_manager *m, const char *dir, const char *period_file,
                             uint64_t period, const char *limit_file, bool has_limit, int64_t limit,
                             struct error *err)
{
  if (period != 0 && cg_writef(m, dir, period_file, err, "%" PRIu64, period) < 0) {
    if (!has_limit || err->code != EINVAL)
      return -1;
    error_clear(err);
    if (wr_i64(m, dir, limit_file, limit, err) < 0)
      return -1;
    return cg_writef(m, dir, period_file, err, "%" PRIu64, period);
  }
  if (has_limit && wr_i64(m, dir, limit_file, limit, err) < 0)
    return -1;
  return 0;
}

static int v1_cpu(struct cgroup_manager *m, const struct oci_resources *r, struct error *err)
{
  bool quota = r->has_cpu_quota && r->cpu_quota != 0;
  bool period = r->has_cpu_period && r->cpu_period != 0;
  bool rt = (r->has_cpu_realtime_period && r->cpu_realtime_period != 0) ||
            (r->has_cpu_realtime_runtime && r->cpu_realtime_runtime != 0);
  bool shares = r->has_cpu_shares && r->cpu_shares != 0;
  bool burst = r->has_cpu_burst, idle = r->has_cpu_idle;
  struct cgroup_hier *h;

  if (!quota && !period && !rt && !shares && !burst && !idle)
    return 0;
  if ((h = need(m, "cpu", err)) == NULL)
    return -1;
  if (shares && cg_writef(m, h->dir, "cpu.shares", err, "%" PRIu64, r->cpu_shares) < 0)
    return -1;
  if (period_then_limit(m, h->dir, "cpu.cfs_period_us", period ? r->cpu_period : 0,
                        "cpu.cfs_quota_us", quota, r->cpu_quota, err) < 0)
    return -1;
  if (burst && cg_writef(m, h->dir, "cpu.cfs_burst_us", err, "%" PRIu64, r->cpu_burst) < 0)
    return -1;
  if (period_then_limit(
          m, h->dir, "cpu.rt_period_us", r->has_cpu_realtime_period ? r->cpu_realtime_period : 0,
          "cpu.rt_runtime_us", r->has_cpu_realtime_runtime && r->cpu_realtime_runtime != 0,
          r->cpu_realtime_runtime, err) < 0)
    return -1;
  if (idle && wr_i64(m, h->dir, "cpu.idle", r->cpu_idle, err) < 0)
    return -1;
  return 0;
}

static int v1_cpuset(struct cgroup_manager *m, const struct oci_resources *r, struct error *err)
{
  bool cpus = r->cpu_cpus && *r->cpu_cpus, mems = r->cpu_mems && *r->cpu_mems;
  struct cgroup_hier *h;

  if (!cpus && !mems)
    return 0;
  if ((h = need(m, "cpuset", err)) == NULL)
    return -1;
  if (cpus && cg_write(m, h->dir, "cpuset.cpus", r->cpu_cpus, err) < 0)
    return -1;
  if (mems && cg_write(m, h->dir, "cpuset.mems", r->cpu_mems, err) < 0)
    return -1;
  return 0;
}

static int v1_pids(struct cgroup_manager *m, const struct oci_resources *r, struct error *err)
{
  struct cgroup_hier *h;

  if (!r->has_pids_limit)
    return 0;
  if ((h = need(m, "pids", err)) == NULL)
    return -1;
  if (r->pids_limit <= 0)
    return cg_write(m, h->dir, "pids.max", "max", err);
  return wr_i64(m, h->dir, "pids.max", r->pids_limit, err);
}

static const char *weight_file(struct cgroup_manager *m, const char *dir)
{
  if (cg_exists(dir, "blkio.weight") || (m->fake && !cg_exists(dir, "blkio.bfq.weight")))
    return "blkio.weight";
  if (cg_exists(dir, "blkio.bfq.weight"))
    return "blkio.bfq.weight";
  return NULL;
}

static int v1_throttle(struct cgroup_manager *m, const char *dir, const char *file,
                       const struct oci_throttle_device *t, size_t n, struct error *err)
{
  for (size_t i = 0; i < n; i++)
    if (cg_writef(m, dir, file, err, "%" PRId64 ":%" PRId64 " %" PRIu64, t[i].major, t[i].minor,
                  t[i].rate) < 0)
      return -1;
  return 0;
}

#define BLKIO_DEFAULT_LEAF_WEIGHT                                                                  \
  500 /* CFQ's default; kernels without CFQ have no leaf weights                                   \
       */

/* blkio.leaf_weight[_device] exist only with the CFQ scheduler (gone since
 * Linux 5.0): a missing file is skipped with a warning when the value asked
 * for is the default anyway; any other value cannot be honoured. */
static int leaf_write(struct cgroup_manager *m, const char *dir, const char *file, unsigned weight,
                      const char *text, struct error *err)
{
  if (!m->fake && !cg_exists(dir, file)) {
    if (weight != BLKIO_DEFAULT_LEAF_WEIGHT)
      return cg_fail(err, ENOTSUP, "cgroup: blockIO leafWeight %u: no `%s` on this host", weight,
                     file);
    cg_warn(m, "cgroup: no `%s` on this host (leafWeight %u is the default), ignoring", file,
            weight);
    return 0;
  }
  return cg_write(m, dir, file, text, err);
}

static int v1_blkio_weights(struct cgroup_manager *m, const char *dir,
                            const struct oci_resources *r, struct error *err)
{
  bool any = r->has_blkio_weight && r->blkio_weight;
  const char *wf = weight_file(m, dir);
  const char *wdf =
      wf && streq(wf, "blkio.bfq.weight") ? "blkio.bfq.weight_device" : "blkio.weight_device";
  char buf[64];

  /* a weight of 0 is not set (as runc): only others need the weight file */
  for (size_t i = 0; i < r->n_blkio_weight_device; i++)
    any = any || (r->blkio_weight_device[i].has_weight && r->blkio_weight_device[i].weight != 0);
  if (any && wf == NULL)
    return cg_fail(err, ENOTSUP,
                   "cgroup: blockIO.weight: not supported by the host (no blkio.weight or "
                   "blkio.bfq.weight; is the BFQ scheduler in use?)");
  if (r->has_blkio_weight && r->blkio_weight &&
      cg_writef(m, dir, wf, err, "%u", r->blkio_weight) < 0)
    return -1;
  if (r->has_blkio_leaf_weight && r->blkio_leaf_weight) {
    snprintf(buf, sizeof buf, "%u", r->blkio_leaf_weight);
    if (leaf_write(m, dir, "blkio.leaf_weight", r->blkio_leaf_weight, buf, err) < 0)
      return -1;
  }
  for (size_t i = 0; i < r->n_blkio_weight_device; i++) {
    const struct oci_weight_device *d = &r->blkio_weight_device[i];
    if (d->has_weight && d->weight != 0 &&
        cg_writef(m, dir, wdf, err, "%" PRId64 ":%" PRId64 " %u", d->major, d->minor, d->weight) <
            0)
      return -1;
    if (d->has_leaf_weight && d->leaf_weight != 0) {
      snprintf(buf, sizeof buf, "%" PRId64 ":%" PRId64 " %u", d->major, d->minor, d->leaf_weight);
      if (leaf_write(m, dir, "blkio.leaf_weight_device", d->leaf_weight, buf, err) < 0)
        return -1;
    }
  }
  return 0;
}

static int v1_blkio(struct cgroup_manager *m, const struct oci_resources *r, struct error *err)
{
  struct cgroup_hier *h;

  if (!r->has_blkio_weight && !r->has_blkio_leaf_weight && !r->n_blkio_weight_device &&
      !r->n_throttle_read_bps && !r->n_throttle_write_bps && !r->n_throttle_read_iops &&
      !r->n_throttle_write_iops)
    return 0;
  if ((h = need(m, "blkio", err)) == NULL)
    return -1;
  if (v1_blkio_weights(m, h->dir, r, err) < 0 ||
      v1_throttle(m, h->dir, "blkio.throttle.read_bps_device", r->throttle_read_bps,
                  r->n_throttle_read_bps, err) < 0 ||
      v1_throttle(m, h->dir, "blkio.throttle.write_bps_device", r->throttle_write_bps,
                  r->n_throttle_write_bps, err) < 0 ||
      v1_throttle(m, h->dir, "blkio.throttle.read_iops_device", r->throttle_read_iops,
                  r->n_throttle_read_iops, err) < 0 ||
      v1_throttle(m, h->dir, "blkio.throttle.write_iops_device", r->throttle_write_iops,
                  r->n_throttle_write_iops, err) < 0)
    return -1;
  return 0;
}

static int v1_hugetlb(struct cgroup_manager *m, const struct oci_resources *r, struct error *err)
{
  struct cgroup_hier *h;

  if (r->n_hugepage_limits == 0)
    return 0;
  if ((h = need(m, "hugetlb", err)) == NULL)
    return -1;
  for (size_t i = 0; i < r->n_hugepage_limits; i++) {
    cleanup_free char *f = xfmt("hugetlb.%s.limit_in_bytes", r->hugepage_limits[i].page_size);
    if (cg_writef(m, h->dir, f, err, "%" PRIu64, r->hugepage_limits[i].limit) < 0)
      return -1;
  }
  return 0;
}

/* net_cls.classid and one "ifname prio" line per write to net_prio.ifpriomap.
 * A hierarchy that is not mounted is skipped with a warning, as runc skips
 * it (engines do not set these; a host without net_cls still runs). */
static int v1_network(struct cgroup_manager *m, const struct oci_resources *r, struct error *err)
{
  struct cgroup_hier *h;

  if (r->has_net_class_id) {
    if ((h = cgroup_v1_hier(m, "net_cls")) == NULL)
      cg_warn(m, "cgroup: no net_cls hierarchy: linux.resources.network.classID ignored");
    else if (cg_writef(m, h->dir, "net_cls.classid", err, "%" PRIu32, r->net_class_id) < 0)
      return -1;
  }
  if (r->n_net_priorities == 0)
    return 0;
  if ((h = cgroup_v1_hier(m, "net_prio")) == NULL) {
    cg_warn(m, "cgroup: no net_prio hierarchy: linux.resources.network.priorities ignored");
    return 0;
  }
  for (size_t i = 0; i < r->n_net_priorities; i++)
    if (cg_writef(m, h->dir, "net_prio.ifpriomap", err, "%s %" PRIu32, r->net_priorities[i].name,
                  r->net_priorities[i].priority) < 0)
      return -1;
  return 0;
}

/* Write one rule to devices.allow or devices.deny through an fd kept open
 * for the whole list (the kernel takes one rule per write); a fake tree
 * keeps cg_write's one-line-per-write record. */
static int dev_write(struct cgroup_manager *m, const char *dir, const char *file, int *fd,
                     const char *rule, struct error *err)
{
  cleanup_free char *path = NULL;
  size_t len = strlen(rule);

  if (m->fake)
    return cg_write(m, dir, file, rule, err);
  if (*fd < 0) {
    path = xfmt("%s/%s", dir, file);
    *fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
    if (*fd < 0)
      return error_errno(err, "cgroup: open `%s`", path);
  }
  if (write(*fd, rule, len) != (ssize_t)len) {
    path = path ? path : xfmt("%s/%s", dir, file);
    return error_errno(err, "cgroup: write `%s` to `%s`", rule, path);
  }
  return 0;
}

/* devices.deny "a" first, then every rule in order (last one wins). */
static int v1_devices(struct cgroup_manager *m, const struct oci_resources *r, struct error *err)
{
  cleanup_free struct cgroup_dev_rule *rules = NULL;
  cleanup_close int allow_fd = -1, deny_fd = -1;
  size_t n = 0;
  struct cgroup_hier *h;
  bool explicit = r != NULL && r->n_devices > 0;

  if (cgroup_device_rules(r, &rules, &n, err) < 0)
    return -1;
  h = cgroup_v1_hier(m, "devices");
  if (h == NULL) {
    if (explicit)
      return cg_missing(err, "devices");
    log_debug("cgroup: no devices controller, device rules not applied");
    return 0;
  }
  for (size_t i = 0; i < n; i++) {
    char buf[64];
    const char *s = rules[i].type == 'a' ? "a" : cgroup_dev_rule_str(&rules[i], buf);
    if (dev_write(m, h->dir, rules[i].allow ? "devices.allow" : "devices.deny",
                  rules[i].allow ? &allow_fd : &deny_fd, s, err) < 0) {
      if (m->rootless && !explicit && (err->code == EPERM || err->code == EACCES)) {
        log_debug("cgroup: rootless: device rules not applied: %s", err->msg);
        error_clear(err);
        return 0;
      }
      return -1;
    }
  }
  return 0;
}

static int v1_apply(struct cgroup_manager *m, const struct oci_resources *r, bool update,
                    struct error *err)
{
  if (r != NULL && r->n_unified > 0)
    return cg_fail(err, ENOTSUP,
                   "cgroup: invalid configuration: unified resources need cgroup v2 (this host "
                   "uses cgroup v1)");
  if (r != NULL && (v1_memory(m, r, err) < 0 || v1_cpu(m, r, err) < 0 || v1_cpuset(m, r, err) < 0 ||
                    v1_pids(m, r, err) < 0 || v1_blkio(m, r, err) < 0 ||
                    v1_hugetlb(m, r, err) < 0 || v1_network(m, r, err) < 0))
    return -1;
  if (!update && v1_devices(m, r, err) < 0)
    return -1;
  return 0;
}

/* The last line of freezer.state (a fake tree keeps every write). */
static int freezer_state(const char *dir, char out[16], struct error *err)
{
  cleanup_free char *s = NULL;
  char *last;

  if (cg_read(dir, "freezer.state", &s, err) < 0)
    return -1;
  while (*s && s[strlen(s) - 1] == '\n')
    s[strlen(s) - 1] = '\0';
  last = strrchr(s, '\n');
  snprintf(out, 16, "%s", last ? last + 1 : s);
  return 0;
}

/* Write the state and poll until the kernel reports it (bounded); a freeze
 * stuck in FREEZING is undone and retried, as runc does. */
static int v1_freeze(struct cgroup_manager *m, bool freeze, struct error *err)
{
  const char *want = freeze ? "FROZEN" : "THAWED";
  struct cgroup_hier *h = need(m, "freezer", err);
  char st[16] = "";

  if (h == NULL)
    return -1;
  for (int round = 0; round < 5; round++) {
    if (cg_write(m, h->dir, "freezer.state", want, err) < 0)
      return -1;
    if (m->fake)
      return 0;
    for (int i = 0; i < 200; i++) {
      if (freezer_state(h->dir, st, err) < 0)
        return -1;
      if (streq(st, want))
        return 0;
      cg_sleep_ms(i < 20 ? 1 : 10);
    }
    if (freeze)
      cg_write(m, h->dir, "freezer.state", "THAWED", err);
  }
  return error_set(err, ETIMEDOUT, "cgroup: %s `%s`: still %s", freeze ? "freeze" : "thaw", h->dir,
                   st);
}

static int v1_is_frozen(struct cgroup_manager *m, struct error *err)
{
  struct cgroup_hier *h = need(m, "freezer", err);
  char st[16];

  if (h == NULL || freezer_state(h->dir, st, err) < 0)
    return -1;
  return streq(st, "FROZEN") ? 1 : 0;
}

static int v1_kill_fast(struct cgroup_manager *m, struct error *err)
{
  return 0;
}

static const char *v1_procs_dir(struct cgroup_manager *m)
{
  static const char *const pref[] = {"freezer", "pids", "memory", "cpu"};
  for (size_t i = 0; i < ARRAY_SIZE(pref); i++)
    if (cgroup_v1_hier(m, pref[i]) != NULL)
      return cgroup_v1_hier(m, pref[i])->dir;
  return m->n_hier ? m->hier[0].dir : m->root;
}

static int v1_oom_count(struct cgroup_manager *m, uint64_t *ret, struct error *err)
{
  cleanup_free char *s = NULL;
  struct cgroup_hier *h = need(m, "memory", err);

  if (h == NULL || cg_read(h->dir, "memory.oom_control", &s, err) < 0)
    return -1;
  *ret = 0;
  cg_keyed_u64(s, "oom_kill", ret);
  return 0;
}

const struct cgroup_ops cgroup_v1_ops = {
    .create = v1_create,
    .add_pid = v1_add_pid,
    .apply = v1_apply,
    .freeze = v1_freeze,
    .is_frozen = v1_is_frozen,
    .kill_fast = v1_kill_fast,
    .procs_dir = v1_procs_dir,
    .stats = cgroup_v1_stats,
    .oom_count = v1_oom_count,
};
