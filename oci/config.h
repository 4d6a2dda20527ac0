/* config.h - the OCI runtime spec 1.2 config.json as plain C structs.
 *
 * oci/ parses and validates JSON into these structs and writes them back;
 * it makes no syscalls.  Optional scalars carry a `has_*` flag so that
 * "absent" and "zero" stay distinct (the spec gives them different meaning).
 * Strings are heap-allocated and NUL-terminated; vectors are NULL-terminated
 * (char **) or have an explicit count.  oci_config_free() releases it all.
 */
#ifndef AGENTRT_OCI_CONFIG_H
#define AGENTRT_OCI_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

/* -std=gnu11 predefines the macro `linux` (= 1), which would break the
 * field oci_config.linux below; nothing in agentrt uses the old macro. */
#undef linux

struct oci_kv {
  char *key;
  char *value;
};

struct oci_idmap {
  uint32_t container_id;
  uint32_t host_id;
  uint32_t size;
};

struct oci_rlimit {
  char *type;   /* "RLIMIT_NOFILE" ... */
  int resource; /* RLIMIT_* number, resolved by the parser */
  uint64_t soft;
  uint64_t hard;
};

/* Capability sets as bit masks (bit n = capability number n). */
struct oci_caps {
  bool has_bounding, has_effective, has_inheritable, has_permitted, has_ambient;
  uint64_t bounding, effective, inheritable, permitted, ambient;
  /* names this build does not know, skipped (runc and crun warn and go on):
   * n_unknown of them, the first ones space-separated in unknown */
  unsigned n_unknown;
  char unknown[160];
};

struct oci_user {
  uint32_t uid;
  uint32_t gid;
  bool has_umask;
  uint32_t umask;
  uint32_t *additional_gids;
  size_t n_additional_gids;
  char *username; /* informational */
};

/* process.scheduler (sched_setattr(2)); policy and flags as the kernel's values */
struct oci_scheduler {
  int policy; /* SCHED_OTHER, SCHED_FIFO, ... */
  int nice;
  int priority;
  uint64_t flags; /* SCHED_FLAG_* */
  uint64_t runtime, deadline, period;
};

struct oci_process {
  bool terminal;
  bool has_console_size;
  uint32_t console_height, console_width;
  char *cwd;
  char **env;  /* NULL-terminated, "K=V" */
  char **args; /* NULL-terminated */
  struct oci_user user;
  struct oci_rlimit *rlimits;
  size_t n_rlimits;
  char *apparmor_profile;
  char *selinux_label;
  bool has_caps;
  struct oci_caps caps;
  bool no_new_privileges;
  bool has_oom_score_adj;
  int oom_score_adj;
  bool has_scheduler;
  struct oci_scheduler scheduler;
  bool has_io_priority;
  int io_priority_class; /* IOPRIO_CLASS_RT 1, _BE 2, _IDLE 3 */
  int io_priority;       /* 0-7 */
  /* execCPUAffinity: CPU lists ("0-3,7"), checked by oci_cpu_list_parse */
  char *exec_cpu_initial;
  char *exec_cpu_final;
};

/* "SCHED_FIFO" for 1, ...; "?" for a value no policy has. */
const char *oci_sched_policy_name(int policy);
/* A CPU list ("0-3,7", "5"): set each CPU's bit in mask (nbits bits wide);
 * -1 on a malformed list or a CPU at or above nbits. */
int oci_cpu_list_parse(const char *s, unsigned long *mask, size_t nbits);

struct oci_mount {
  char *destination;
  char *type;     /* may be NULL (bind when options contain bind/rbind) */
  char *source;   /* may be NULL */
  char **options; /* NULL-terminated, verbatim */
  /* an idmapped bind mount (spec 1.2): both or neither */
  struct oci_idmap *uid_mappings, *gid_mappings;
  size_t n_uid_mappings, n_gid_mappings;
};

struct oci_hook {
  char *path;
  char **args; /* NULL-terminated, may be NULL */
  char **env;  /* NULL-terminated, may be NULL */
  bool has_timeout;
  int timeout; /* seconds, > 0 */
};

enum oci_hook_kind {
  OCI_HOOK_PRESTART,
  OCI_HOOK_CREATE_RUNTIME,
  OCI_HOOK_CREATE_CONTAINER,
  OCI_HOOK_START_CONTAINER,
  OCI_HOOK_POSTSTART,
  OCI_HOOK_POSTSTOP,
  OCI_HOOK_KINDS
};

struct oci_hooks {
  struct oci_hook *list[OCI_HOOK_KINDS];
  size_t n[OCI_HOOK_KINDS];
};

enum oci_ns_type {
  OCI_NS_PID,
  OCI_NS_NETWORK,
  OCI_NS_MOUNT,
  OCI_NS_IPC,
  OCI_NS_UTS,
  OCI_NS_USER,
  OCI_NS_CGROUP,
  OCI_NS_TIME,
  OCI_NS_COUNT
};

struct oci_namespace {
  enum oci_ns_type type;
  char *path; /* NULL = create a new one */
};

struct oci_device {
  char *path;
  char type; /* 'c', 'b', 'u', 'p' */
  int64_t major, minor;
  bool has_file_mode;
  uint32_t file_mode;
  bool has_uid, has_gid;
  uint32_t uid, gid;
};

/* linux.resources (also the document of `update --resources`). */
struct oci_device_cgroup {
  bool allow;
  char type; /* 'a', 'c', 'b' (0 = all) */
  bool has_major, has_minor;
  int64_t major, minor;
  char *access; /* "rwm" subset, NULL = all */
};

struct oci_weight_device {
  int64_t major, minor;
  bool has_weight, has_leaf_weight;
  uint16_t weight, leaf_weight;
};

struct oci_throttle_device {
  int64_t major, minor;
  uint64_t rate;
};

struct oci_hugepage_limit {
  char *page_size; /* "2MB" */
  uint64_t limit;
};

struct oci_net_priority {
  char *name; /* interface */
  uint32_t priority;
};

struct oci_resources {
  struct oci_device_cgroup *devices;
  size_t n_devices;

  bool has_memory_limit, has_memory_reservation, has_memory_swap, has_memory_kernel,
      has_memory_kernel_tcp, has_memory_swappiness, has_disable_oom_killer, has_use_hierarchy,
      has_check_before_update;
  int64_t memory_limit, memory_reservation, memory_swap, memory_kernel, memory_kernel_tcp;
  uint64_t memory_swappiness;
  bool disable_oom_killer, use_hierarchy, check_before_update;

  bool has_cpu_shares, has_cpu_quota, has_cpu_burst, has_cpu_period, has_cpu_realtime_runtime,
      has_cpu_realtime_period, has_cpu_idle;
  uint64_t cpu_shares, cpu_period, cpu_realtime_period, cpu_burst;
  int64_t cpu_quota, cpu_realtime_runtime, cpu_idle;
  char *cpu_cpus; /* cpuset */
  char *cpu_mems;

  bool has_pids_limit;
  int64_t pids_limit; /* <= 0 means unlimited */

  bool has_blkio_weight, has_blkio_leaf_weight;
  uint16_t blkio_weight, blkio_leaf_weight;
  struct oci_weight_device *blkio_weight_device;
  size_t n_blkio_weight_device;
  struct oci_throttle_device *throttle_read_bps, *throttle_write_bps, *throttle_read_iops,
      *throttle_write_iops;
  size_t n_throttle_read_bps, n_throttle_write_bps, n_throttle_read_iops, n_throttle_write_iops;

  struct oci_hugepage_limit *hugepage_limits;
  size_t n_hugepage_limits;

  bool has_net_class_id; /* network: cgroup v1 net_cls / net_prio */
  uint32_t net_class_id;
  struct oci_net_priority *net_priorities;
  size_t n_net_priorities;

  struct oci_kv *unified; /* cgroup v2 raw key/values */
  size_t n_unified;
};

struct oci_seccomp_arg {
  uint32_t index;
  uint64_t value;
  uint64_t value_two;
  char *op; /* "SCMP_CMP_EQ" ... */
};

struct oci_seccomp_syscall {
  char **names; /* NULL-terminated */
  char *action; /* "SCMP_ACT_ERRNO" ... */
  bool has_errno_ret;
  uint32_t errno_ret;
  struct oci_seccomp_arg *args;
  size_t n_args;
  /* never from a config (profile/seccomp.c): an argument rule left out on an
   * ABI that also reaches the call through socketcall (i386), where libseccomp
   * cannot compare the arguments and would refuse every call of the kind */
  bool direct_only;
};

struct oci_seccomp {
  char *default_action;
  bool has_default_errno_ret;
  uint32_t default_errno_ret;
  char **architectures; /* "SCMP_ARCH_X86_64" ... */
  char **flags;         /* "SECCOMP_FILTER_FLAG_..." */
  char *listener_path;
  char *listener_metadata;
  struct oci_seccomp_syscall *syscalls;
  size_t n_syscalls;
};

struct oci_time_offset {
  char *clock; /* "monotonic" or "boottime" */
  int64_t secs;
  uint32_t nanosecs;
};

struct oci_linux {
  struct oci_namespace *namespaces;
  size_t n_namespaces;
  struct oci_idmap *uid_mappings, *gid_mappings;
  size_t n_uid_mappings, n_gid_mappings;
  struct oci_time_offset *time_offsets;
  size_t n_time_offsets;
  struct oci_device *devices;
  size_t n_devices;
  char *cgroups_path;
  struct oci_resources *resources; /* NULL when absent */
  char *rootfs_propagation;        /* "private", "rprivate", "slave", ... */
  char **masked_paths;
  char **readonly_paths;
  char *mount_label;
  struct oci_kv *sysctl;
  size_t n_sysctl;
  struct oci_seccomp *seccomp; /* NULL when absent */
  bool has_personality;
  char *personality_domain; /* "LINUX" or "LINUX32" */
};

struct oci_config {
  char *oci_version;
  char *root_path;
  bool root_readonly;
  struct oci_process *process; /* NULL when absent (allowed by the spec) */
  char *hostname;
  char *domainname;
  struct oci_mount *mounts;
  size_t n_mounts;
  struct oci_hooks hooks;
  struct oci_linux *linux; /* NULL when absent */
  struct oci_kv *annotations;
  size_t n_annotations;
};

/* Parse config.json text.  `file` names the document in error messages:
 * "config.json: linux.resources.memory.limit: expected integer". */
int oci_config_parse(const char *json, size_t len, const char *file, struct oci_config **ret,
                     struct error *err);
/* Serialise back to JSON (for the state dir copy and `explain`). */
int oci_config_to_json(const struct oci_config *c, char **ret_json, size_t *ret_len,
                       struct error *err);
void oci_config_free(struct oci_config *c);
/* Deep copies (config_dup.c): they share no memory with the original. */
struct oci_config *oci_config_dup(const struct oci_config *c);
struct oci_seccomp *oci_seccomp_dup(const struct oci_seccomp *s);
/* A seccomp section built outside a config (the profile's stacked filter). */
void oci_seccomp_free(struct oci_seccomp *s);
/* Same, indented with tabs (for files people read). */
int oci_config_to_json_pretty(const struct oci_config *c, char **ret_json, size_t *ret_len,
                              struct error *err);

/* A process.json as given to `exec --process`. */
int oci_process_parse(const char *json, size_t len, const char *file, struct oci_process **ret,
                      struct error *err);
void oci_process_free(struct oci_process *p);
int oci_process_to_json(const struct oci_process *p, char **ret_json, size_t *ret_len,
                        struct error *err);

/* A LinuxResources document as given to `update --resources`. */
int oci_resources_parse(const char *json, size_t len, const char *file, struct oci_resources **ret,
                        struct error *err);
void oci_resources_free(struct oci_resources *r);
int oci_resources_to_json(const struct oci_resources *r, char **ret_json, size_t *ret_len,
                          struct error *err);

/* Lookups used by the runtime. */
const struct oci_namespace *oci_config_namespace(const struct oci_config *c, enum oci_ns_type t);
/* A SCMP_ACT_NOTIFY action (default or in a rule): the filter needs a listener. */
bool oci_seccomp_uses_notify(const struct oci_seccomp *s);
const char *oci_config_annotation(const struct oci_config *c, const char *key);

/* Names <-> numbers (pure tables). */
int oci_cap_from_name(const char *name);    /* "CAP_SYS_ADMIN" or "SYS_ADMIN" -> 21, -1 unknown */
const char *oci_cap_name(int cap);          /* 21 -> "CAP_SYS_ADMIN", NULL if unknown */
int oci_cap_last(void);                     /* highest capability number known */
int oci_rlimit_from_name(const char *name); /* "RLIMIT_NOFILE" -> 7, -1 unknown */
const char *oci_rlimit_name(int resource);  /* 7 -> "RLIMIT_NOFILE", NULL if unknown */
const char *oci_hook_name(enum oci_hook_kind k); /* OCI_HOOK_PRESTART -> "prestart" */
int oci_ns_clone_flag(enum oci_ns_type t);       /* OCI_NS_PID -> CLONE_NEWPID */
const char *oci_ns_name(enum oci_ns_type t);     /* OCI_NS_NETWORK -> "network" */
int oci_ns_from_name(const char *name);          /* "network" -> OCI_NS_NETWORK, -1 unknown */

#endif
