/* spec_default.c - `agentrt spec` and `agentrt features` documents.
 *
 * The default config is written as compact JSON text, then parsed by our own
 * parser and printed indented: the template can never drift from what
 * `create` accepts.  Capabilities: bounding/effective/permitted only -- no
 * inheritable (CVE-2022-29162: a non-empty inheritable set let execve of a
 * file with inheritable file caps gain them) and no ambient.
 */
#include "oci/spec.h"

#include "common/util.h"
#include "oci/internal.h"

#ifndef AGENTRT_VERSION
#define AGENTRT_VERSION "unknown"
#endif
#ifndef AGENTRT_COMMIT
#define AGENTRT_COMMIT "unknown"
#endif

#define CAPS "[\"CAP_AUDIT_WRITE\",\"CAP_KILL\",\"CAP_NET_BIND_SERVICE\"]"

static const char process_json[] =
    "\"process\":{\"terminal\":true,\"user\":{\"uid\":0,\"gid\":0},\"args\":[\"sh\"],"
    "\"env\":[\"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\","
    "\"TERM=xterm\"],\"cwd\":\"/\",\"capabilities\":{\"bounding\":" CAPS ",\"effective\":" CAPS
    ",\"permitted\":" CAPS "},"
    "\"rlimits\":[{\"type\":\"RLIMIT_NOFILE\",\"hard\":1024,\"soft\":1024}],"
    "\"noNewPrivileges\":true}";

static const char mounts_head[] =
    "\"mounts\":["
    "{\"destination\":\"/proc\",\"type\":\"proc\",\"source\":\"proc\"},"
    "{\"destination\":\"/dev\",\"type\":\"tmpfs\",\"source\":\"tmpfs\","
    "\"options\":[\"nosuid\",\"strictatime\",\"mode=755\",\"size=65536k\"]},";

static const char devpts_root[] =
    "{\"destination\":\"/dev/pts\",\"type\":\"devpts\",\"source\":\"devpts\","
    "\"options\":[\"nosuid\",\"noexec\",\"newinstance\",\"ptmxmode=0666\",\"mode=0620\","
    "\"gid=5\"]},";
/* rootless: gid 5 is not mapped in the user namespace */
static const char devpts_rootless[] =
    "{\"destination\":\"/dev/pts\",\"type\":\"devpts\",\"source\":\"devpts\","
    "\"options\":[\"nosuid\",\"noexec\",\"newinstance\",\"ptmxmode=0666\",\"mode=0620\"]},";

static const char mounts_mid[] =
    "{\"destination\":\"/dev/shm\",\"type\":\"tmpfs\",\"source\":\"shm\","
    "\"options\":[\"nosuid\",\"noexec\",\"nodev\",\"mode=1777\",\"size=65536k\"]},"
    "{\"destination\":\"/dev/mqueue\",\"type\":\"mqueue\",\"source\":\"mqueue\","
    "\"options\":[\"nosuid\",\"noexec\",\"nodev\"]},";

static const char sysfs_root[] =
    "{\"destination\":\"/sys\",\"type\":\"sysfs\",\"source\":\"sysfs\","
    "\"options\":[\"nosuid\",\"noexec\",\"nodev\",\"ro\"]},";
/* rootless: sysfs cannot be mounted without owning the network namespace */
static const char sysfs_rootless[] =
    "{\"destination\":\"/sys\",\"type\":\"none\",\"source\":\"/sys\","
    "\"options\":[\"rbind\",\"nosuid\",\"noexec\",\"nodev\",\"ro\"]},";

static const char mounts_tail[] =
    "{\"destination\":\"/sys/fs/cgroup\",\"type\":\"cgroup\",\"source\":\"cgroup\","
    "\"options\":[\"nosuid\",\"noexec\",\"nodev\",\"relatime\",\"ro\"]}]";

static const char masked_readonly[] =
    "\"maskedPaths\":[\"/proc/acpi\",\"/proc/asound\",\"/proc/kcore\",\"/proc/keys\","
    "\"/proc/latency_stats\",\"/proc/timer_list\",\"/proc/timer_stats\","
    "\"/proc/sched_debug\",\"/sys/firmware\",\"/proc/scsi\"],"
    "\"readonlyPaths\":[\"/proc/bus\",\"/proc/fs\",\"/proc/irq\",\"/proc/sys\","
    "\"/proc/sysrq-trigger\"]";

/* A cgroup namespace only where the host has cgroup v2 (as runc's spec): on
 * v1 engines run without one, and a config adding its own must not find a
 * duplicate. */
static char *linux_json(bool rootless, bool cgroupns, uint32_t uid, uint32_t gid)
{
  const char *cg = cgroupns ? ",{\"type\":\"cgroup\"}" : "";

  if (!rootless)
    return xfmt("\"linux\":{\"resources\":{\"devices\":[{\"allow\":false,\"access\":\"rwm\"}]},"
                "\"namespaces\":[{\"type\":\"pid\"},{\"type\":\"network\"},{\"type\":\"ipc\"},"
                "{\"type\":\"uts\"},{\"type\":\"mount\"}%s],%s}",
                cg, masked_readonly);
  return xfmt("\"linux\":{\"uidMappings\":[{\"containerID\":0,\"hostID\":%u,\"size\":1}],"
              "\"gidMappings\":[{\"containerID\":0,\"hostID\":%u,\"size\":1}],"
              "\"namespaces\":[{\"type\":\"pid\"},{\"type\":\"ipc\"},{\"type\":\"uts\"},"
              "{\"type\":\"mount\"}%s,{\"type\":\"user\"}],%s}",
              uid, gid, cg, masked_readonly);
}

int oci_default_spec_json(bool rootless, bool cgroupns, uint32_t uid, uint32_t gid, char **ret,
                          struct error *err)
{
  cleanup_free char *lx = linux_json(rootless, cgroupns, uid, gid);
  cleanup_free char *text = NULL;
  struct oci_config *cfg = NULL;
  int r;

  text = xfmt("{\"ociVersion\":\"1.2.0\",%s,\"root\":{\"path\":\"rootfs\",\"readonly\":true},"
              "\"hostname\":\"agentrt\",%s%s%s%s%s,%s}",
              process_json, mounts_head, rootless ? devpts_rootless : devpts_root, mounts_mid,
              rootless ? sysfs_rootless : sysfs_root, mounts_tail, lx);
  if (oci_config_parse(text, strlen(text), "default spec", &cfg, err) < 0)
    return -1;
  r = oci_config_to_json_pretty(cfg, ret, NULL, err);
  oci_config_free(cfg);
  return r;
}

const char *const oci_mount_options[] = {
    "acl",
    "async",
    "atime",
    "bind",
    "defaults",
    "dev",
    "diratime",
    "dirsync",
    "exec",
    "idmap",
    "iversion",
    "lazytime",
    "loud",
    "mand",
    "noacl",
    "noatime",
    "nodev",
    "nodiratime",
    "noexec",
    "noiversion",
    "nolazytime",
    "nomand",
    "norelatime",
    "nostrictatime",
    "nosuid",
    "nosymfollow",
    "private",
    "ratime",
    "rbind",
    "rdev",
    "rdiratime",
    "relatime",
    "remount",
    "rexec",
    "ridmap",
    "rnoatime",
    "rnodev",
    "rnodiratime",
    "rnoexec",
    "rnorelatime",
    "rnostrictatime",
    "rnosuid",
    "rnosymfollow",
    "ro",
    "rprivate",
    "rrelatime",
    "rro",
    "rrw",
    "rshared",
    "rslave",
    "rstrictatime",
    "rsuid",
    "rsymfollow",
    "runbindable",
    "rw",
    "shared",
    "silent",
    "slave",
    "strictatime",
    "suid",
    "symfollow",
    "sync",
    "tmpcopyup", /* runc's and crun's extension (container/copyup.c) */
    "unbindable",
    NULL,
};

static const char *const hook_list[] = {
    "prestart", "createRuntime", "createContainer", "startContainer", "poststart", "poststop", NULL,
};

/* Flags libseccomp 2.5 and the kernel support; WAIT_KILLABLE_RECV needs 2.6. */
static const char *const seccomp_supported_flags[] = {
    "SECCOMP_FILTER_FLAG_TSYNC",
    "SECCOMP_FILTER_FLAG_LOG",
    "SECCOMP_FILTER_FLAG_SPEC_ALLOW",
    NULL,
};

static void gen_list(struct jgen *j, const char *key, const char *const *list)
{
  jg_key(j, key);
  jg_aopen(j);
  for (; *list != NULL; list++)
    jg_str(j, *list);
  jg_aclose(j);
}

static void gen_enabled(struct jgen *j, const char *key, bool on)
{
  jg_key(j, key);
  jg_open(j);
  jg_kbool(j, "enabled", on);
  jg_close(j);
}

static void gen_linux_features(struct jgen *j)
{
  jg_key(j, "linux");
  jg_open(j);
  jg_key(j, "namespaces");
  jg_aopen(j);
  for (int t = 0; t < OCI_NS_COUNT; t++)
    jg_str(j, oci_ns_name((enum oci_ns_type)t));
  jg_aclose(j);
  jg_key(j, "capabilities");
  jg_aopen(j);
  for (int cap = 0; cap <= oci_cap_last(); cap++)
    jg_str(j, oci_cap_name(cap));
  jg_aclose(j);
  jg_key(j, "cgroup");
  jg_open(j);
  jg_kbool(j, "v1", true);
  jg_kbool(j, "v2", true);
  jg_kbool(j, "systemd", true);
  jg_kbool(j, "systemdUser", true);
  jg_kbool(j, "rdma", false);
  jg_close(j);
  jg_key(j, "seccomp");
  jg_open(j);
  jg_kbool(j, "enabled", true);
  gen_list(j, "actions", oci_seccomp_actions);
  gen_list(j, "operators", oci_seccomp_operators);
  gen_list(j, "archs", oci_seccomp_archs);
  gen_list(j, "knownFlags", oci_seccomp_flags);
  gen_list(j, "supportedFlags", seccomp_supported_flags);
  jg_close(j);
  gen_enabled(j, "apparmor", true); /* applied where the host has AppArmor */
  gen_enabled(j, "selinux", true);  /* applied where the host has SELinux */
  gen_enabled(j, "intelRdt", false);
  jg_key(j, "mountExtensions");
  jg_open(j);
  gen_enabled(j, "idmap", true); /* bind mounts, given their mapping by the runtime */
  jg_close(j);
  jg_close(j);
}

int oci_features_json(const char *libseccomp_version, char **ret, struct error *err)
{
  struct jgen j;

  jgen_init(&j, true);
  jg_open(&j);
  jg_kstr(&j, "ociVersionMin", "1.0.0");
  jg_kstr(&j, "ociVersionMax", "1.2.0");
  gen_list(&j, "hooks", hook_list);
  gen_list(&j, "mountOptions", oci_mount_options);
  gen_linux_features(&j);
  jg_key(&j, "annotations");
  jg_open(&j);
  jg_kstr(&j, "run.agentrt.version", AGENTRT_VERSION);
  jg_kstr(&j, "run.agentrt.commit", AGENTRT_COMMIT);
  if (libseccomp_version != NULL)
    jg_kstr(&j, "io.github.seccomp.libseccomp.version", libseccomp_version);
  jg_close(&j);
  jg_close(&j);
  return jgen_finish(&j, "features", ret, NULL, err);
}
