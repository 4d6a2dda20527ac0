/* internal.h - what the cgroup backends share (not part of the interface).
 *
 * manager.c works out the hierarchies and paths and dispatches through a
 * struct cgroup_ops; v1.c and v2.c implement it; fs.c holds the file
 * helpers (which create files only in a fake test tree); convert.c the pure
 * conversions and path rules; bpf_devices.c the v2 device filter; stats.c
 * the runc-shaped statistics.
 */
#ifndef AGENTRT_CGROUP_INTERNAL_H
#define AGENTRT_CGROUP_INTERNAL_H

#include <linux/bpf.h>
#include <stdint.h>

#include "cgroups/cgroup.h"

#define CGROUP_DEFAULT_ROOT "/sys/fs/cgroup"
#define CGROUP_MAX_HIER 32

/* One mounted hierarchy (v1: one per mount; v2: the single one). */
struct cgroup_hier {
  char *mount;  /* absolute mount point */
  char **ctrls; /* v1 controllers on it ("cpu", "name=systemd"); NULL on v2 */
  char *rel;    /* the container's path below the mount, "/agentrt/x" */
  char *dir;    /* mount + rel */
  char *mroot;  /* the mount's root inside the hierarchy (mountinfo field 4) */
  bool made;    /* cgroup_create made the leaf (remove it on failure) */
  char *leaf;   /* v2: dir/CGROUP_NEST_LEAF, kept for cgroup_v2_procs_target */
};

/* The "controller" name of a hybrid host's cgroup2 hierarchy in a v1 manager. */
#define CGROUP_UNIFIED "unified"
static inline bool cgroup_hier_unified(const struct cgroup_hier *h)
{
  return h->ctrls != NULL && h->ctrls[0] != NULL &&
         __builtin_strcmp(h->ctrls[0], CGROUP_UNIFIED) == 0;
}

struct cgroup_manager;

struct cgroup_stats_full;

struct cgroup_ops {
  int (*create)(struct cgroup_manager *m, struct error *err);
  int (*add_pid)(struct cgroup_manager *m, pid_t pid, struct error *err);
  int (*apply)(struct cgroup_manager *m, const struct oci_resources *r, bool update,
               struct error *err);
  int (*freeze)(struct cgroup_manager *m, bool freeze, struct error *err);
  int (*is_frozen)(struct cgroup_manager *m, struct error *err);
  /* SIGKILL everything at once if the backend can (v2 cgroup.kill): 1 done,
   * 0 not supported (the manager then signals pid by pid) */
  int (*kill_fast)(struct cgroup_manager *m, struct error *err);
  /* the directory whose cgroup.procs lists the container's processes */
  const char *(*procs_dir)(struct cgroup_manager *m);
  int (*stats)(struct cgroup_manager *m, struct cgroup_stats_full *s, struct error *err);
  int (*oom_count)(struct cgroup_manager *m, uint64_t *ret, struct error *err);
};

struct cgroup_manager {
  const struct cgroup_ops *ops;
  int version;
  bool fake; /* a test tree: files are created on write, nothing is probed */
  bool rootless;
  bool created;          /* cgroup_create made it (or it existed) */
  bool shared;           /* it had processes before cgroup_create: not ours to kill */
  bool refused;          /* create refused a cgroup that exists: never remove it */
  bool unified_at_clone; /* hybrid: the clone put the process in the unified hierarchy */
  char *root;            /* /sys/fs/cgroup or the test tree */
  char *path;            /* the form saved in state.json */
  struct cgroup_hier hier[CGROUP_MAX_HIER];
  size_t n_hier;
  const struct oci_resources *requested; /* borrowed from the opts */
  /* --systemd-cgroup on a real host: the unit systemd makes the cgroup for */
  bool systemd;
  bool sd_started;                        /* the unit exists (loaded, or started by add_pid) */
  char *sd_unit;                          /* "docker-abc.scope" */
  char *sd_slice;                         /* "system.slice" */
  const struct oci_resources *sd_pending; /* cgroup_apply before the unit exists (borrowed) */
  struct cgroup_sd_bus *sd_bus;           /* systemd.c, NULL until needed */
  char **warnings;                        /* collected for the caller: cgroup_take_warnings() */
};

extern const struct cgroup_ops cgroup_v1_ops;
extern const struct cgroup_ops cgroup_v2_ops;

/* v2: the leaf a container's own processes move to when its first
 * sub-agent's cgroup is made beside it (cgroup_make_nestable). */
#define CGROUP_NEST_LEAF "agentrt-parent"
/* v2: where a new process of the container goes: the leaf when it exists,
 * else the container's cgroup. */
const char *cgroup_v2_procs_target(struct cgroup_manager *m);
void cgroup_v2_enable_controllers(struct cgroup_manager *m, const char *dir);

/* The v1 hierarchy carrying controller c, or NULL. */
struct cgroup_hier *cgroup_v1_hier(struct cgroup_manager *m, const char *c);

/* A message that needs no strerror suffix, with err->code = code; -1. */
#define cg_fail(err, ecode, ...) (error_set((err), 0, __VA_ARGS__), (err)->code = (ecode), -1)
/* A warning for the caller (something ignored or risky, not an error): the
 * library never prints, the CLI logs what cgroup_take_warnings() returns. */
void cg_warn(struct cgroup_manager *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "cgroup: <c> controller not available" (err->code ENOTSUP, no strerror). */
int cg_missing(struct error *err, const char *c);

/* ---- fs.c ---- */
/* Write val to dir/file.  In a fake tree the file is created and each write
 * is appended as one line, so tests can read back the sequence. */
int cg_write(const struct cgroup_manager *m, const char *dir, const char *file, const char *val,
             struct error *err);
int cg_writef(const struct cgroup_manager *m, const char *dir, const char *file, struct error *err,
              const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Read dir/file (at most 4 MiB), trailing newline kept. */
int cg_read(const char *dir, const char *file, char **ret, struct error *err);
/* Read a file holding one number (or "max" = UINT64_MAX). */
int cg_read_u64(const char *dir, const char *file, uint64_t *ret, struct error *err);
/* From "key value\n" lines: the value of key (0 and -1 when missing). */
int cg_keyed_u64(const char *text, const char *key, uint64_t *ret);
bool cg_exists(const char *dir, const char *file);
/* mkdir every component of rel below base (EEXIST is fine). */
int cg_mkdir_p(const char *base, const char *rel, struct error *err);
/* rmdir dir and the cgroups below it (a fake tree: unlink its files too);
 * retried briefly on EBUSY.  A missing dir is not an error. */
int cg_rmdir_tree(const struct cgroup_manager *m, const char *dir, struct error *err);
/* Read the pids of dir/cgroup.procs. */
int cg_read_pids(const char *dir, pid_t **ret, size_t *ret_n, struct error *err);
int cg_read_pids_tree(const char *dir, pid_t **ret, size_t *ret_n, struct error *err);
void cg_sleep_ms(unsigned ms);

/* ---- convert.c (pure) ---- */
/* cpu.shares (2..262144) -> cpu.weight (1..10000), as runc/crun/k8s do. */
uint64_t cgroup_shares_to_weight(uint64_t shares);
/* blkio.weight (10..1000) -> io.weight (1..10000). */
uint64_t cgroup_blkio_weight_to_io(uint64_t w);
/* OCI memory.swap (memory+swap) -> v2 memory.swap.max (swap only).
 * Returns 1 and *ret (-1 = max) when something is to be written, 0 when
 * not, -1 with err on a contradiction. */
int cgroup_swap_to_v2(bool has_limit, int64_t limit, int64_t swap, int64_t *ret, struct error *err);
/* "max" for -1, the number otherwise (buf of 32 bytes). */
const char *cgroup_limit_str(int64_t v, char buf[32]);
/* "0-3,5" style lists; an empty string is accepted (unset). */
int cgroup_validate_cpuset(const char *s, const char *what, struct error *err);
/* Normalise an absolute or relative cgroup path: collapse "//" and "./",
 * drop the trailing "/", reject ".." (a path must not leave the hierarchy). */
int cgroup_normalize_path(const char *in, char **ret, struct error *err);
/* --systemd-cgroup "slice:prefix:name" -> the cgroupfs path systemd would
 * use ("system.slice:docker:abc" -> "/system.slice/docker-abc.scope"). */
int cgroup_systemd_to_path(const char *spec, const char *id, bool rootless, char **ret,
                           struct error *err);
/* The same spec as the unit systemd is asked for: its slice ("system.slice")
 * and unit name ("docker-abc.scope", or a ".slice" given as the name). */
int cgroup_systemd_unit(const char *spec, const char *id, bool rootless, char **ret_slice,
                        char **ret_unit, struct error *err);

/* ---- systemd_props.c (pure): linux.resources as unit properties ---- */
#define CGROUP_SD_INFINITY UINT64_MAX
#define CGROUP_SD_PROPS_MAX 16
struct cgroup_sd_prop {
  const char *name; /* "MemoryMax", ...; every one is of D-Bus type t (uint64) */
  uint64_t value;   /* CGROUP_SD_INFINITY = no limit */
};
/* Fill out[0..max) for cgroup version 1 or 2; returns the count. */
size_t cgroup_systemd_props(const struct oci_resources *r, int version, struct cgroup_sd_prop *out,
                            size_t max);

/* ---- systemd.c: the unit over D-Bus (libsystemd's sd-bus, dlopen()ed so
 * that only --systemd-cgroup pays for loading it) ---- */
/* Connect (system bus; the user bus when rootless); a clear error when
 * systemd cannot be reached. */
int cg_sd_connect(struct cgroup_manager *m, struct error *err);
/* StartTransientUnit(m->sd_unit) with Delegate=yes, pid (a scope) and r's
 * properties; waits for the job. */
int cg_sd_start(struct cgroup_manager *m, pid_t pid, const struct oci_resources *r,
                struct error *err);
/* SetUnitProperties(runtime) with r's properties (`update`). */
int cg_sd_set(struct cgroup_manager *m, const struct oci_resources *r, struct error *err);
/* StopUnit, waiting for the job; a unit systemd no longer knows is fine. */
int cg_sd_stop(struct cgroup_manager *m, struct error *err);
void cg_sd_close(struct cgroup_manager *m);

/* A linux.resources.unified key that names a plain file of the cgroup. */
int cgroup_unified_key_check(const char *key, struct error *err);
/* "2MB" / "1GB" / "64KB" */
bool cgroup_hugepage_size_ok(const char *s);
/* Validate numbers given in r (negative other than -1, ranges). */
int cgroup_resources_validate(const struct oci_resources *r, struct error *err);

/* ---- bpf_devices.c ---- */
struct cgroup_dev_rule {
  bool allow;
  char type;            /* 'a', 'b', 'c' */
  int64_t major, minor; /* -1 = any */
  unsigned access;      /* BPF_DEVCG_ACC_* bits */
};
/* The full rule list of a container: deny all, r's rules, then the
 * defaults.  Validates types and access strings. */
int cgroup_device_rules(const struct oci_resources *r, struct cgroup_dev_rule **ret, size_t *ret_n,
                        struct error *err);
/* "c 1:3 rwm" (buf of 64 bytes) */
const char *cgroup_dev_rule_str(const struct cgroup_dev_rule *r, char buf[64]);
/* The BPF_PROG_TYPE_CGROUP_DEVICE program for the rules (last match wins,
 * default deny). */
int cgroup_bpf_devices_build(const struct cgroup_dev_rule *rules, size_t n, struct bpf_insn **ret,
                             size_t *ret_n, struct error *err);
/* Load it and attach to the cgroup fd with BPF_F_ALLOW_MULTI, replacing the
 * programs attached there before. */
int cgroup_bpf_devices_attach(int cgroup_fd, const struct bpf_insn *insns, size_t n,
                              struct error *err);

/* ---- stats.c ---- */
struct cgroup_blkio_entry {
  uint64_t major, minor, value;
  char op[16];
};
struct cgroup_hugetlb_entry {
  char size[16];
  uint64_t usage, max, failcnt;
};
struct cgroup_stats_full {
  struct cgroup_stats s;
  uint64_t *percpu;
  size_t n_percpu;
  uint64_t *percpu_user, *percpu_kernel; /* v1 cpuacct.usage_percpu_{user,sys} */
  size_t n_percpu_user, n_percpu_kernel;
  uint64_t swap_limit, swap_max, swap_failcnt;
  uint64_t kernel_usage, kernel_limit, kernel_max, kernel_failcnt;
  uint64_t tcp_usage, tcp_limit, tcp_max, tcp_failcnt; /* v1 memory.kmem.tcp.* */
  /* cpuset: the lists as the files give them ("0-3,5"), the v1 flags */
  char *cpuset_cpus, *cpuset_mems;
  uint64_t cpu_exclusive, mem_hardwall, mem_exclusive, memory_migrate, memory_spread_page,
      memory_spread_slab, memory_pressure, sched_load_balance;
  int64_t sched_relax_domain_level;
  char *mem_raw; /* memory.stat text */
  struct cgroup_blkio_entry *blkio;
  size_t n_blkio;
  struct cgroup_hugetlb_entry *hugetlb;
  size_t n_hugetlb;
};
void cgroup_stats_full_free(struct cgroup_stats_full *f);
/* v1 blkio.throttle.io_service_bytes / v2 io.stat parsing */
void cgroup_blkio_parse_v1(struct cgroup_stats_full *f, const char *text);
void cgroup_blkio_parse_v2(struct cgroup_stats_full *f, const char *text);
void cgroup_hugetlb_push(struct cgroup_stats_full *f, const char *size, uint64_t usage,
                         uint64_t max, uint64_t failcnt);
/* The hugepage sizes the host offers ("2MB", ...), from /sys/kernel/mm/hugepages. */
char **cgroup_hugepage_sizes(void);
int cgroup_v1_stats(struct cgroup_manager *m, struct cgroup_stats_full *f, struct error *err);
int cgroup_v2_stats(struct cgroup_manager *m, struct cgroup_stats_full *f, struct error *err);
/* A cpu or memory-node list ("0-3,5") as numbers; NULL (n 0) when empty or malformed. */
uint64_t *cgroup_parse_list(const char *text, size_t *n);
/* The JSON text of the runc "data" object. */
int cgroup_stats_to_json(const struct cgroup_stats_full *f, char **ret, struct error *err);

#endif
