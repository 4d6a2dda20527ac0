/* names.c - pure name <-> number tables: capabilities, rlimits, namespaces,
 * and the seccomp vocabulary the parser accepts (shared with `features`). */
#include <sched.h>
#include <strings.h>
#include <sys/resource.h>

#include "common/util.h"
#include "oci/config.h"
#include "oci/internal.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif
#ifndef CLONE_NEWCGROUP
#define CLONE_NEWCGROUP 0x02000000
#endif

/* Index = capability number (linux/capability.h). */
static const char *const cap_names[] = {
    "CAP_CHOWN",
    "CAP_DAC_OVERRIDE",
    "CAP_DAC_READ_SEARCH",
    "CAP_FOWNER",
    "CAP_FSETID",
    "CAP_KILL",
    "CAP_SETGID",
    "CAP_SETUID",
    "CAP_SETPCAP",
    "CAP_LINUX_IMMUTABLE",
    "CAP_NET_BIND_SERVICE",
    "CAP_NET_BROADCAST",
    "CAP_NET_ADMIN",
    "CAP_NET_RAW",
    "CAP_IPC_LOCK",
    "CAP_IPC_OWNER",
    "CAP_SYS_MODULE",
    "CAP_SYS_RAWIO",
    "CAP_SYS_CHROOT",
    "CAP_SYS_PTRACE",
    "CAP_SYS_PACCT",
    "CAP_SYS_ADMIN",
    "CAP_SYS_BOOT",
    "CAP_SYS_NICE",
    "CAP_SYS_RESOURCE",
    "CAP_SYS_TIME",
    "CAP_SYS_TTY_CONFIG",
    "CAP_MKNOD",
    "CAP_LEASE",
    "CAP_AUDIT_WRITE",
    "CAP_AUDIT_CONTROL",
    "CAP_SETFCAP",
    "CAP_MAC_OVERRIDE",
    "CAP_MAC_ADMIN",
    "CAP_SYSLOG",
    "CAP_WAKE_ALARM",
    "CAP_BLOCK_SUSPEND",
    "CAP_AUDIT_READ",
    "CAP_PERFMON",
    "CAP_BPF",
    "CAP_CHECKPOINT_RESTORE",
};

int oci_cap_last(void)
{
  return (int)ARRAY_SIZE(cap_names) - 1;
}

const char *oci_cap_name(int cap)
{
  if (cap < 0 || cap > oci_cap_last())
    return NULL;
  return cap_names[cap];
}

int oci_cap_from_name(const char *name)
{
  if (name == NULL)
    return -1;
  if (strncasecmp(name, "CAP_", 4) == 0)
    name += 4;
  for (size_t i = 0; i < ARRAY_SIZE(cap_names); i++)
    if (strcasecmp(name, cap_names[i] + 4) == 0)
      return (int)i;
  return -1;
}

static const struct {
  const char *name;
  int resource;
} rlimits[] = {
    {"RLIMIT_CPU", RLIMIT_CPU},           {"RLIMIT_FSIZE", RLIMIT_FSIZE},
    {"RLIMIT_DATA", RLIMIT_DATA},         {"RLIMIT_STACK", RLIMIT_STACK},
    {"RLIMIT_CORE", RLIMIT_CORE},         {"RLIMIT_RSS", RLIMIT_RSS},
    {"RLIMIT_NPROC", RLIMIT_NPROC},       {"RLIMIT_NOFILE", RLIMIT_NOFILE},
    {"RLIMIT_MEMLOCK", RLIMIT_MEMLOCK},   {"RLIMIT_AS", RLIMIT_AS},
    {"RLIMIT_LOCKS", RLIMIT_LOCKS},       {"RLIMIT_SIGPENDING", RLIMIT_SIGPENDING},
    {"RLIMIT_MSGQUEUE", RLIMIT_MSGQUEUE}, {"RLIMIT_NICE", RLIMIT_NICE},
    {"RLIMIT_RTPRIO", RLIMIT_RTPRIO},     {"RLIMIT_RTTIME", RLIMIT_RTTIME},
};

int oci_rlimit_from_name(const char *name)
{
  for (size_t i = 0; name != NULL && i < ARRAY_SIZE(rlimits); i++)
    if (strcasecmp(name, rlimits[i].name) == 0)
      return rlimits[i].resource;
  return -1;
}

const char *oci_rlimit_name(int resource)
{
  for (size_t i = 0; i < ARRAY_SIZE(rlimits); i++)
    if (rlimits[i].resource == resource)
      return rlimits[i].name;
  return NULL;
}

static const struct {
  const char *name;
  int flag;
} namespaces[OCI_NS_COUNT] = {
    [OCI_NS_PID] = {"pid", CLONE_NEWPID},          [OCI_NS_NETWORK] = {"network", CLONE_NEWNET},
    [OCI_NS_MOUNT] = {"mount", CLONE_NEWNS},       [OCI_NS_IPC] = {"ipc", CLONE_NEWIPC},
    [OCI_NS_UTS] = {"uts", CLONE_NEWUTS},          [OCI_NS_USER] = {"user", CLONE_NEWUSER},
    [OCI_NS_CGROUP] = {"cgroup", CLONE_NEWCGROUP}, [OCI_NS_TIME] = {"time", CLONE_NEWTIME},
};

int oci_ns_clone_flag(enum oci_ns_type t)
{
  if ((unsigned)t >= OCI_NS_COUNT)
    return 0;
  return namespaces[t].flag;
}

const char *oci_ns_name(enum oci_ns_type t)
{
  if ((unsigned)t >= OCI_NS_COUNT)
    return NULL;
  return namespaces[t].name;
}

int oci_ns_from_name(const char *name)
{
  for (int i = 0; name != NULL && i < OCI_NS_COUNT; i++)
    if (strcmp(name, namespaces[i].name) == 0)
      return i;
  return -1;
}

const char *const oci_seccomp_actions[] = {
    "SCMP_ACT_KILL",        "SCMP_ACT_KILL_PROCESS",
    "SCMP_ACT_KILL_THREAD", "SCMP_ACT_TRAP",
    "SCMP_ACT_ERRNO",       "SCMP_ACT_TRACE",
    "SCMP_ACT_ALLOW",       "SCMP_ACT_LOG",
    "SCMP_ACT_NOTIFY",      NULL,
};

const char *const oci_seccomp_operators[] = {
    "SCMP_CMP_NE", "SCMP_CMP_LT", "SCMP_CMP_LE",        "SCMP_CMP_EQ",
    "SCMP_CMP_GE", "SCMP_CMP_GT", "SCMP_CMP_MASKED_EQ", NULL,
};

const char *const oci_seccomp_archs[] = {
    "SCMP_ARCH_X86",     "SCMP_ARCH_X86_64",   "SCMP_ARCH_X32",         "SCMP_ARCH_ARM",
    "SCMP_ARCH_AARCH64", "SCMP_ARCH_MIPS",     "SCMP_ARCH_MIPS64",      "SCMP_ARCH_MIPS64N32",
    "SCMP_ARCH_MIPSEL",  "SCMP_ARCH_MIPSEL64", "SCMP_ARCH_MIPSEL64N32", "SCMP_ARCH_PPC",
    "SCMP_ARCH_PPC64",   "SCMP_ARCH_PPC64LE",  "SCMP_ARCH_S390",        "SCMP_ARCH_S390X",
    "SCMP_ARCH_PARISC",  "SCMP_ARCH_PARISC64", "SCMP_ARCH_RISCV64",     "SCMP_ARCH_LOONGARCH64",
    "SCMP_ARCH_M68K",    "SCMP_ARCH_SH",       "SCMP_ARCH_SHEB",        NULL,
};

const char *const oci_seccomp_flags[] = {
    "SECCOMP_FILTER_FLAG_TSYNC",
    "SECCOMP_FILTER_FLAG_LOG",
    "SECCOMP_FILTER_FLAG_SPEC_ALLOW",
    "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV",
    NULL,
};

const char *const oci_mount_propagations[] = {
    "private", "rprivate",   "slave",       "rslave", "shared",
    "rshared", "unbindable", "runbindable", NULL,
};
