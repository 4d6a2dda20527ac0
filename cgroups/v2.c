/* v2.c - the cgroup v2 (unified) backend.
 *
 * One directory.  Creating it enables every available controller in the
 * cgroup.subtree_control of each ancestor; a value for a controller that the
 * container's cgroup does not have (cgroup.controllers) is an error naming
 * it.  Devices are an eBPF program (bpf_devices.c), killing uses cgroup.kill,
 * freezing cgroup.freeze with a bounded wait on cgroup.events.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/stat.h>

#include "cgroups/internal.h"
#include "common/log.h"
#include "common/util.h"

static char *dir_of(struct cgroup_manager *m)
{
  return m->hier[0].dir;
}

static char **split_words(const char *s)
{
  cleanup_free char *copy = xstrdup(s);
  char **v = NULL;
  char *save = NULL;

  for (char *t = strtok_r(copy, " \n", &save); t; t = strtok_r(NULL, " \n", &save))
    strv_push(&v, t[0] == '+' ? t + 1 : t);
  return v;
}

/* Enable in dir's subtree_control each controller dir has (errors are not
 * fatal here: a controller that cannot be enabled is reported by apply when
 * a value for it is requested). */
void cgroup_v2_enable_controllers(struct cgroup_manager *m, const char *dir)
{
  cleanup_free char *avail = NULL;
  cleanup_free char *on = NULL;
  cleanup_strv char **a = NULL;
  cleanup_strv char **o = NULL;
  struct error e = {0};

  if (cg_read(dir, "cgroup.controllers", &avail, &e) < 0)
    return;
  if (cg_read(dir, "cgroup.subtree_control", &on, &e) < 0)
    on = xstrdup("");
  a = split_words(avail);
  o = split_words(on);
  for (char **c = a; c && *c; c++) {
    if (strv_contains(o, *c))
      continue;
    if (cg_writef(m, dir, "cgroup.subtree_control", &e, "+%s", *c) < 0)
      log_debug("cgroup: enable %s in `%s`: %s, ignoring", *c, dir, e.msg);
  }
}

static int v2_create(struct cgroup_manager *m, struct error *err)
{
  struct cgroup_hier *h = &m->hier[0];
  cleanup_free char *dir = xstrdup(h->mount);
  const char *p = h->rel;

  h->made = access(h->dir, F_OK) != 0;
  while (*p == '/')
    p++;
  while (*p != '\0') {
    size_t len = strcspn(p, "/");
    char *next = xfmt("%s/%.*s", dir, (int)len, p);
    cgroup_v2_enable_controllers(m, dir);
    free(dir);
    dir = next;
    if (mkdir(dir, 0755) < 0 && errno != EEXIST)
      return error_errno(err, "cgroup: mkdir `%s`", dir);
    p += len;
    while (*p == '/')
      p++;
  }
  return 0;
}

const char *cgroup_v2_procs_target(struct cgroup_manager *m)
{
  struct cgroup_hier *h = &m->hier[0];

  free(h->leaf); /* dir may have changed (cgroup_use_sub) */
  h->leaf = xfmt("%s/%s", h->dir, CGROUP_NEST_LEAF);
  return !m->fake && access(h->leaf, F_OK) == 0 ? h->leaf : h->dir;
}

static int v2_add_pid(struct cgroup_manager *m, pid_t pid, struct error *err)
{
  return cg_writef(m, cgroup_v2_procs_target(m), "cgroup.procs", err, "%d", (int)pid);
}

/* The controllers the container's cgroup has (a fake tree may give them at
 * its root only). */
static char **available(struct cgroup_manager *m)
{
  cleanup_free char *s = NULL;
  struct error e = {0};

  if (cg_read(dir_of(m), "cgroup.controllers", &s, &e) < 0 &&
      (!m->fake || cg_read(m->root, "cgroup.controllers", &s, &e) < 0))
    return NULL;
  return split_words(s);
}

static int need(char **avail, const char *c, struct error *err)
{
  if (!strv_contains(avail, c))
    return cg_missing(err, c);
  return 0;
}

static int wr_limit(struct cgroup_manager *m, const char *file, int64_t v, struct error *err)
{
  char buf[32];
  return cg_write(m, dir_of(m), file, cgroup_limit_str(v, buf), err);
}

static int v2_swap(struct cgroup_manager *m, const struct oci_resources *r, struct error *err)
{
  bool has_l = r->has_memory_limit && r->memory_limit != 0;
  int64_t l = r->memory_limit, v;
  int w;

  if (!r->has_memory_swap)
    return 0;
  if (!has_l && !m->fake) {
    /* update of the swap alone: against the current memory.max */
    uint64_t cur;
    struct error e = {0};
    if (cg_read_u64(dir_of(m), "memory.max", &cur, &e) == 0) {
      has_l = true;
      l = cur == UINT64_MAX ? -1 : (int64_t)cur;
    }
  }
  w = cgroup_swap_to_v2(has_l, l, r->memory_swap, &v, err);
  if (w <= 0)
    return w;
  if (v == -1 && !m->fake && !cg_exists(dir_of(m), "memory.swap.max"))
    return 0; /* no swap accounting: "unlimited" needs nothing */
  return wr_limit(m, "memory.swap.max", v, err);
}

static int v2_memory(struct cgroup_manager *m, char **avail, const struct oci_resources *r,
                     struct error *err)
{
  if (!r->has_memory_limit && !r->has_memory_reservation && !r->has_memory_swap)
    goto unsupported;
  if (need(avail, "memory", err) < 0)
    return -1;
  /* memory.swap.max first: it is independent of memory.max on v2, and a
   * failure leaves memory.max unchanged */
  if (v2_swap(m, r, err) < 0)
    return -1;
  if (r->has_memory_limit && r->memory_limit != 0 &&
      wr_limit(m, "memory.max", r->memory_limit, err) < 0)
    return -1;
  if (r->has_memory_reservation && r->memory_reservation != 0 &&
      wr_limit(m, "memory.low", r->memory_reservation, err) < 0)
    return -1;
unsupported:
  if (r->has_memory_swappiness && r->memory_swappiness != UINT64_MAX)
    cg_warn(m, "cgroup: memory.swappiness has no cgroup v2 equivalent, ignoring");
  if (r->has_disable_oom_killer && r->disable_oom_killer)
    cg_warn(m, "cgroup: memory.disableOOMKiller has no cgroup v2 equivalent, ignoring");
  if ((r->has_memory_kernel && r->memory_kernel != 0) ||
      (r->has_memory_kernel_tcp && r->memory_kernel_tcp != 0))
    cg_warn(m, "cgroup: memory.kernel and kernelTCP have no cgroup v2 equivalent, ignoring");
  return 0;
}

/* cpu.max "$QUOTA $PERIOD": a value not given keeps the current one. */
static int v2_cpu_max(struct cgroup_manager *m, const struct oci_resources *r, struct error *err)
{
  bool quota = r->has_cpu_quota && r->cpu_quota != 0;
  bool period = r->has_cpu_period && r->cpu_period != 0;
  cleanup_free char *cur = NULL;
  char qbuf[32] = "max";
  uint64_t p = 100000;
  struct error e = {0};

  if (!quota && !period)
    return 0;
  if (!m->fake && cg_read(dir_of(m), "cpu.max", &cur, &e) == 0) {
    char *sp = strchr(cur, ' ');
    if (sp != NULL) {
      *sp = '\0';
      sp[1 + strcspn(sp + 1, "\n")] = '\0';
      snprintf(qbuf, sizeof qbuf, "%s", cur);
      if (parse_u64(sp + 1, &p) < 0)
        p = 100000;
    }
  }
  if (quota)
    cgroup_limit_str(r->cpu_quota, qbuf);
  if (quota && r->cpu_quota < 0)
    snprintf(qbuf, sizeof qbuf, "max");
  if (period)
    p = r->cpu_period;
  return cg_writef(m, dir_of(m), "cpu.max", err, "%s %" PRIu64, qbuf, p);
}

static int v2_cpu(struct cgroup_manager *m, char **avail, const struct oci_resources *r,
                  struct error *err)
{
  bool shares = r->has_cpu_shares && r->cpu_shares != 0;
  bool quota = (r->has_cpu_quota && r->cpu_quota != 0) || (r->has_cpu_period && r->cpu_period);

  if ((r->has_cpu_realtime_period && r->cpu_realtime_period != 0) ||
      (r->has_cpu_realtime_runtime && r->cpu_realtime_runtime != 0))
    return cg_fail(err, ENOTSUP, "cgroup: cpu realtime limits are not available on cgroup v2");
  if (!shares && !quota && !r->has_cpu_burst && !r->has_cpu_idle)
    return 0;
  if (need(avail, "cpu", err) < 0)
    return -1;
  if (shares && cg_writef(m, dir_of(m), "cpu.weight", err, "%" PRIu64,
                          cgroup_shares_to_weight(r->cpu_shares)) < 0)
    return -1;
  if (v2_cpu_max(m, r, err) < 0)
    return -1;
  if (r->has_cpu_burst &&
      cg_writef(m, dir_of(m), "cpu.max.burst", err, "%" PRIu64, r->cpu_burst) < 0)
    return -1;
  if (r->has_cpu_idle && cg_writef(m, dir_of(m), "cpu.idle", err, "%" PRId64, r->cpu_idle) < 0)
    return -1;
  return 0;
}

static int v2_cpuset(struct cgroup_manager *m, char **avail, const struct oci_resources *r,
                     struct error *err)
{
  bool cpus = r->cpu_cpus && *r->cpu_cpus, mems = r->cpu_mems && *r->cpu_mems;

  if (!cpus && !mems)
    return 0;
  if (need(avail, "cpuset", err) < 0)
    return -1;
  if (cpus && cg_write(m, dir_of(m), "cpuset.cpus", r->cpu_cpus, err) < 0)
    return -1;
  if (mems && cg_write(m, dir_of(m), "cpuset.mems", r->cpu_mems, err) < 0)
    return -1;
  return 0;
}

static int v2_pids(struct cgroup_manager *m, char **avail, const struct oci_resources *r,
                   struct error *err)
{
  if (!r->has_pids_limit)
    return 0;
  if (need(avail, "pids", err) < 0)
    return -1;
  return wr_limit(m, "pids.max", r->pids_limit > 0 ? r->pids_limit : -1, err);
}

static int v2_io_max(struct cgroup_manager *m, const char *key, const struct oci_throttle_device *t,
                     size_t n, struct error *err)
{
  for (size_t i = 0; i < n; i++) {
    char buf[32];
    const char *v = t[i].rate ? cgroup_limit_str((int64_t)t[i].rate, buf) : "max";
    if (cg_writef(m, dir_of(m), "io.max", err, "%" PRId64 ":%" PRId64 " %s=%s", t[i].major,
                  t[i].minor, key, v) < 0)
      return -1;
  }
  return 0;
}

/* io.bfq.weight takes blkio weights as they are; io.weight needs them
 * scaled to 1-10000. */
static int v2_io_weights(struct cgroup_manager *m, const struct oci_resources *r, struct error *err)
{
  bool bfq = !m->fake && cg_exists(dir_of(m), "io.bfq.weight");
  const char *f = bfq ? "io.bfq.weight" : "io.weight";

  if (r->has_blkio_weight && r->blkio_weight != 0 &&
      cg_writef(m, dir_of(m), f, err, "default %" PRIu64,
                bfq ? r->blkio_weight : cgroup_blkio_weight_to_io(r->blkio_weight)) < 0)
    return -1;
  for (size_t i = 0; i < r->n_blkio_weight_device; i++) {
    const struct oci_weight_device *d = &r->blkio_weight_device[i];
    if (d->has_weight && d->weight != 0 &&
        cg_writef(m, dir_of(m), f, err, "%" PRId64 ":%" PRId64 " %" PRIu64, d->major, d->minor,
                  bfq ? d->weight : cgroup_blkio_weight_to_io(d->weight)) < 0)
      return -1;
  }
  if (r->has_blkio_leaf_weight && r->blkio_leaf_weight != 0)
    cg_warn(m, "cgroup: blockIO.leafWeight has no cgroup v2 equivalent, ignoring");
  return 0;
}

static int v2_io(struct cgroup_manager *m, char **avail, const struct oci_resources *r,
                 struct error *err)
{
  if (!r->has_blkio_weight && !r->n_blkio_weight_device && !r->n_throttle_read_bps &&
      !r->n_throttle_write_bps && !r->n_throttle_read_iops && !r->n_throttle_write_iops)
    return 0;
  if (need(avail, "io", err) < 0)
    return -1;
  if (v2_io_weights(m, r, err) < 0 ||
      v2_io_max(m, "rbps", r->throttle_read_bps, r->n_throttle_read_bps, err) < 0 ||
      v2_io_max(m, "wbps", r->throttle_write_bps, r->n_throttle_write_bps, err) < 0 ||
      v2_io_max(m, "riops", r->throttle_read_iops, r->n_throttle_read_iops, err) < 0 ||
      v2_io_max(m, "wiops", r->throttle_write_iops, r->n_throttle_write_iops, err) < 0)
    return -1;
  return 0;
}

static int v2_hugetlb(struct cgroup_manager *m, char **avail, const struct oci_resources *r,
                      struct error *err)
{
  if (r->n_hugepage_limits == 0)
    return 0;
  if (need(avail, "hugetlb", err) < 0)
    return -1;
  for (size_t i = 0; i < r->n_hugepage_limits; i++) {
    cleanup_free char *f = xfmt("hugetlb.%s.max", r->hugepage_limits[i].page_size);
    if (cg_writef(m, dir_of(m), f, err, "%" PRIu64, r->hugepage_limits[i].limit) < 0)
      return -1;
  }
  return 0;
}

/* Raw keys, checked by cgroup_unified_key_check (a plain file name of this
 * cgroup, no core cgroup.* file); the controller must be there. */
static int v2_unified(struct cgroup_manager *m, char **avail, const struct oci_resources *r,
                      struct error *err)
{
  for (size_t i = 0; i < r->n_unified; i++) {
    const char *k = r->unified[i].key;
    cleanup_free char *ctrl = xstrndup(k, strcspn(k, "."));
    if (cgroup_unified_key_check(k, err) < 0)
      return -1;
    if (!streq(ctrl, "cgroup") && !strv_contains(avail, ctrl))
      return cg_fail(err, ENOTSUP, "cgroup: unified key `%s`: %s controller not available", k,
                     ctrl);
    if (cg_write(m, dir_of(m), k, r->unified[i].value ? r->unified[i].value : "", err) < 0)
      return -1;
  }
  return 0;
}

static int v2_devices(struct cgroup_manager *m, const struct oci_resources *r, struct error *err)
{
  cleanup_free struct cgroup_dev_rule *rules = NULL;
  cleanup_free struct bpf_insn *prog = NULL;
  cleanup_close int fd = -1;
  size_t n = 0, n_insn = 0;
  bool explicit = r != NULL && r->n_devices > 0;

  if (cgroup_device_rules(r, &rules, &n, err) < 0 ||
      cgroup_bpf_devices_build(rules, n, &prog, &n_insn, err) < 0)
    return -1;
  if (m->fake) {
    log_debug("cgroup: fake tree: device filter of %zu instructions not attached", n_insn);
    return 0;
  }
  fd = open(dir_of(m), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return error_errno(err, "cgroup: open `%s`", dir_of(m));
  if (cgroup_bpf_devices_attach(fd, prog, n_insn, err) < 0) {
    if (m->rootless && !explicit && (err->code == EPERM || err->code == EACCES)) {
      log_debug("cgroup: rootless: device filter not attached: %s", err->msg);
      error_clear(err);
      return 0;
    }
    return -1;
  }
  return 0;
}

static int v2_apply(struct cgroup_manager *m, const struct oci_resources *r, bool update,
                    struct error *err)
{
  cleanup_strv char **avail = available(m);

  /* as runc: cgroup v2 has no net_cls/net_prio (tag traffic with the
   * cgroup path in nftables/eBPF instead) */
  if (r != NULL && (r->has_net_class_id || r->n_net_priorities > 0))
    cg_warn(m, "cgroup: linux.resources.network needs cgroup v1 net_cls/net_prio; ignored on "
               "cgroup v2");
  if (r != NULL && (v2_memory(m, avail, r, err) < 0 || v2_cpu(m, avail, r, err) < 0 ||
                    v2_cpuset(m, avail, r, err) < 0 || v2_pids(m, avail, r, err) < 0 ||
                    v2_io(m, avail, r, err) < 0 || v2_hugetlb(m, avail, r, err) < 0 ||
                    v2_unified(m, avail, r, err) < 0))
    return -1;
  if (!update && v2_devices(m, r, err) < 0)
    return -1;
  return 0;
}

/* "frozen 1" in cgroup.events (a fake tree: the last cgroup.freeze write). */
static int frozen_state(struct cgroup_manager *m, struct error *err)
{
  cleanup_free char *s = NULL;
  uint64_t v = 0;

  if (m->fake) {
    if (cg_read(dir_of(m), "cgroup.freeze", &s, err) < 0)
      return err->code == ENOENT ? (error_clear(err), 0) : -1;
    while (*s && s[strlen(s) - 1] == '\n')
      s[strlen(s) - 1] = '\0';
    return s[0] != '\0' && s[strlen(s) - 1] == '1';
  }
  if (cg_read(dir_of(m), "cgroup.events", &s, err) < 0)
    return -1;
  if (cg_keyed_u64(s, "frozen", &v) < 0)
    return cg_fail(err, ENOTSUP, "cgroup: `%s`: no freezer (kernel too old?)", dir_of(m));
  return v == 1;
}

static int v2_freeze(struct cgroup_manager *m, bool freeze, struct error *err)
{
  if (cg_write(m, dir_of(m), "cgroup.freeze", freeze ? "1" : "0", err) < 0)
    return -1;
  if (m->fake)
    return 0;
  /* bounded: ~10 s, the guest of the VM lane is slow */
  for (int i = 0; i < 1000; i++) {
    int s = frozen_state(m, err);
    if (s < 0)
      return -1;
    if (s == (freeze ? 1 : 0))
      return 0;
    cg_sleep_ms(i < 20 ? 1 : 10);
  }
  return error_set(err, ETIMEDOUT, "cgroup: %s `%s`: timed out waiting for cgroup.events",
                   freeze ? "freeze" : "thaw", dir_of(m));
}

static int v2_is_frozen(struct cgroup_manager *m, struct error *err)
{
  return frozen_state(m, err);
}

static int v2_kill_fast(struct cgroup_manager *m, struct error *err)
{
  if (m->fake || !cg_exists(dir_of(m), "cgroup.kill"))
    return 0;
  if (cg_write(m, dir_of(m), "cgroup.kill", "1", err) < 0)
    return err->code == ENOENT ? (error_clear(err), 0) : -1;
  return 1;
}

static const char *v2_procs_dir(struct cgroup_manager *m)
{
  return dir_of(m);
}

static int v2_oom_count(struct cgroup_manager *m, uint64_t *ret, struct error *err)
{
  cleanup_free char *s = NULL;

  if (cg_read(dir_of(m), "memory.events", &s, err) < 0)
    return -1;
  *ret = 0;
  cg_keyed_u64(s, "oom_kill", ret);
  return 0;
}

const struct cgroup_ops cgroup_v2_ops = {
    .create = v2_create,
    .add_pid = v2_add_pid,
    .apply = v2_apply,
    .freeze = v2_freeze,
    .is_frozen = v2_is_frozen,
    .kill_fast = v2_kill_fast,
    .procs_dir = v2_procs_dir,
    .stats = cgroup_v2_stats,
    .oom_count = v2_oom_count,
};
