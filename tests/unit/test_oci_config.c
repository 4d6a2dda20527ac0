/* test_oci_config.c - config.json parser: the rich fixture, round trips,
 * every validation error with its exact message, truncated documents,
 * wrong types, numbers out of range, input bounds, process/resources
 * documents, name tables, the default spec and the features document. */
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <yajl/yajl_tree.h>

#include "common/util.h"
#include "oci/config.h"
#include "oci/spec.h"
#include "tests/unit/tap.h"

static char *slurp(const char *name, size_t *len)
{
  const char *dir = getenv("AGENTRT_TESTDATA");
  char path[512];
  FILE *f;
  char *buf;
  long n;

  snprintf(path, sizeof path, "%s/%s", dir != NULL ? dir : "tests/data", name);
  f = fopen(path, "re");
  if (f == NULL)
    return NULL;
  fseek(f, 0, SEEK_END);
  n = ftell(f);
  fseek(f, 0, SEEK_SET);
  buf = xmalloc((size_t)n + 1);
  *len = fread(buf, 1, (size_t)n, f);
  buf[*len] = '\0';
  fclose(f);
  return buf;
}

static int parse(const char *json, struct oci_config **c, struct error *err)
{
  error_clear(err);
  return oci_config_parse(json, strlen(json), "config.json", c, err);
}

#define CAP(n) (UINT64_C(1) << (n))

static void check_full(const struct oci_config *c)
{
  const struct oci_process *p = c->process;
  const struct oci_linux *l = c->linux;
  const struct oci_resources *r = l->resources;

  tap_ok(streq(c->oci_version, "1.0.2-dev"), "full: ociVersion");
  tap_ok(streq(c->root_path, "/var/lib/docker/overlay2/9b1d6c4e0f/merged") && !c->root_readonly,
         "full: root");
  tap_ok(p->terminal && p->has_console_size && p->console_height == 40 && p->console_width == 120,
         "full: terminal + consoleSize");
  tap_ok(p->user.uid == 1000 && p->user.gid == 1000 && p->user.has_umask && p->user.umask == 18 &&
             p->user.n_additional_gids == 3 && p->user.additional_gids[2] == 4294967294u &&
             streq(p->user.username, "agent"),
         "full: user");
  tap_ok(strv_len(p->args) == 3 && streq(p->args[2], "echo hello; exec sleep 3600"), "full: args");
  tap_ok(strv_len(p->env) == 4 && streq(p->env[3], "EMPTY="), "full: env");
  tap_ok(streq(p->cwd, "/workspace"), "full: cwd");
  tap_ok(p->has_caps && p->caps.has_bounding && !p->caps.has_inheritable &&
             p->caps.bounding ==
                 (CAP(0) | CAP(1) | CAP(4) | CAP(3) | CAP(27) | CAP(13) | CAP(6) | CAP(7) |
                  CAP(31) | CAP(8) | CAP(10) | CAP(18) | CAP(5) | CAP(29)) &&
             p->caps.effective == p->caps.bounding && p->caps.permitted == p->caps.bounding,
         "full: capabilities");
  tap_ok(p->caps.has_ambient && p->caps.ambient == (CAP(10) | CAP(40)),
         "full: ambient caps without prefix / lower case");
  tap_ok(p->n_rlimits == 3 && p->rlimits[0].resource == RLIMIT_NOFILE &&
             p->rlimits[0].soft == 1024 && p->rlimits[0].hard == 1048576 &&
             p->rlimits[1].hard == UINT64_MAX && p->rlimits[2].resource == RLIMIT_RTTIME,
         "full: rlimits");
  tap_ok(p->no_new_privileges && streq(p->apparmor_profile, "docker-default") &&
             p->has_oom_score_adj && p->oom_score_adj == -500 &&
             streq(p->selinux_label, "system_u:system_r:container_t:s0:c1,c2"),
         "full: nnp, apparmor, oomScoreAdj, selinux");
  tap_ok(p->has_scheduler && p->scheduler.policy == 3 && p->scheduler.nice == 3 &&
             p->scheduler.flags == 0x10 && p->has_io_priority && p->io_priority_class == 2 &&
             p->io_priority == 6 && streq(p->exec_cpu_initial, "0") &&
             streq(p->exec_cpu_final, "0-1"),
         "full: scheduler, ioPriority, execCPUAffinity");
  tap_ok(streq(c->hostname, "4f0e2c1b9a77") && streq(c->domainname, "example.internal"),
         "full: hostname, domainname");
  tap_ok(c->n_mounts == 12 && streq(c->mounts[7].destination, "/etc/resolv.conf") &&
             streq(c->mounts[7].type, "bind") && strv_len(c->mounts[7].options) == 2 &&
             c->mounts[10].type == NULL && streq(c->mounts[10].source, "/srv/agent/ws") &&
             c->mounts[10].uid_mappings == NULL,
         "full: mounts");
  tap_ok(c->mounts[11].n_uid_mappings == 1 && c->mounts[11].uid_mappings[0].host_id == 1000 &&
             c->mounts[11].n_gid_mappings == 2 && c->mounts[11].gid_mappings[1].container_id == 1 &&
             c->mounts[11].gid_mappings[1].size == 10,
         "full: an idmapped mount's mappings");
  tap_ok(c->hooks.n[OCI_HOOK_PRESTART] == 1 &&
             streq(c->hooks.list[OCI_HOOK_PRESTART][0].args[0], "libnetwork-setkey") &&
             c->hooks.list[OCI_HOOK_CREATE_RUNTIME][0].has_timeout &&
             c->hooks.list[OCI_HOOK_CREATE_RUNTIME][0].timeout == 5 &&
             c->hooks.n[OCI_HOOK_CREATE_CONTAINER] == 1 &&
             c->hooks.n[OCI_HOOK_START_CONTAINER] == 1 &&
             c->hooks.list[OCI_HOOK_POSTSTART][0].timeout == 30 &&
             strv_len(c->hooks.list[OCI_HOOK_POSTSTART][0].env) == 2 &&
             c->hooks.n[OCI_HOOK_POSTSTOP] == 1,
         "full: hooks (all six kinds)");
  tap_ok(c->n_annotations == 3 && streq(oci_config_annotation(c, "run.agentrt.profile"), "agent") &&
             streq(oci_config_annotation(c, "com.example.empty"), "") &&
             oci_config_annotation(c, "nope") == NULL,
         "full: annotations + lookup");
  tap_ok(l->n_uid_mappings == 1 && l->uid_mappings[0].host_id == 100000 &&
             l->uid_mappings[0].size == 65536 && l->n_gid_mappings == 1,
         "full: id mappings");
  tap_ok(l->n_sysctl == 2 && streq(l->sysctl[1].value, "0 2147483647"), "full: sysctl");
  tap_ok(r != NULL && r->n_devices == 9 && !r->devices[0].allow && r->devices[0].type == 0 &&
             r->devices[1].type == 'c' && r->devices[1].has_major && r->devices[1].minor == 5 &&
             r->devices[8].type == 'b' && !r->devices[8].has_minor && r->devices[8].access == NULL,
         "full: device cgroup rules");
  tap_ok(r->has_memory_limit && r->memory_limit == 536870912 && r->memory_swap == -1 &&
             r->has_memory_swappiness && r->memory_swappiness == 60 && r->has_disable_oom_killer &&
             r->use_hierarchy && r->check_before_update && r->has_memory_kernel_tcp,
         "full: memory");
  tap_ok(r->cpu_shares == 1024 && r->cpu_quota == 150000 && r->has_cpu_burst &&
             r->cpu_period == 100000 && streq(r->cpu_cpus, "0-1") && streq(r->cpu_mems, "0") &&
             r->has_cpu_idle && r->has_cpu_realtime_runtime && r->has_cpu_realtime_period,
         "full: cpu");
  tap_ok(r->has_pids_limit && r->pids_limit == 512, "full: pids");
  tap_ok(r->blkio_weight == 500 && r->blkio_leaf_weight == 300 && r->n_blkio_weight_device == 2 &&
             r->blkio_weight_device[0].weight == 600 && !r->blkio_weight_device[1].has_weight &&
             r->n_throttle_read_bps == 1 && r->throttle_write_iops[0].rate == 500,
         "full: blockIO");
  tap_ok(r->n_hugepage_limits == 2 && streq(r->hugepage_limits[0].page_size, "2MB") &&
             r->hugepage_limits[0].limit == 209715200,
         "full: hugepageLimits");
  tap_ok(r->n_unified == 2 && streq(r->unified[1].key, "io.weight"), "full: unified");
  tap_ok(streq(l->cgroups_path, "system.slice:docker:4f0e2c1b9a77"), "full: cgroupsPath");
  tap_ok(
      l->n_namespaces == 8 &&
          streq(oci_config_namespace(c, OCI_NS_NETWORK)->path, "/var/run/docker/netns/default") &&
          oci_config_namespace(c, OCI_NS_PID)->path == NULL &&
          oci_config_namespace(c, OCI_NS_TIME) != NULL,
      "full: namespaces + lookup");
  tap_ok(l->n_time_offsets == 2 && streq(l->time_offsets[0].clock, "monotonic") &&
             l->time_offsets[0].secs == -3600 && l->time_offsets[0].nanosecs == 500,
         "full: timeOffsets");
  tap_ok(l->n_devices == 4 && l->devices[0].type == 'c' && l->devices[0].major == 10 &&
             l->devices[0].has_file_mode && l->devices[0].file_mode == 438 &&
             l->devices[0].has_uid && !l->devices[1].has_uid && l->devices[3].type == 'p',
         "full: devices");
  tap_ok(l->seccomp != NULL && streq(l->seccomp->default_action, "SCMP_ACT_ERRNO") &&
             l->seccomp->has_default_errno_ret && l->seccomp->default_errno_ret == 1 &&
             strv_len(l->seccomp->architectures) == 3 && strv_len(l->seccomp->flags) == 1 &&
             streq(l->seccomp->listener_path, "/run/agentrt/seccomp.sock") &&
             streq(l->seccomp->listener_metadata, "agent=1") && l->seccomp->n_syscalls == 6,
         "full: seccomp header");
  tap_ok(l->seccomp->syscalls[3].n_args == 1 &&
             l->seccomp->syscalls[3].args[0].value == 2114060288 &&
             streq(l->seccomp->syscalls[3].args[0].op, "SCMP_CMP_MASKED_EQ") &&
             l->seccomp->syscalls[4].has_errno_ret && l->seccomp->syscalls[4].errno_ret == 38,
         "full: seccomp rules");
  tap_ok(streq(l->rootfs_propagation, "rslave") && strv_len(l->masked_paths) == 10 &&
             strv_len(l->readonly_paths) == 5 && l->mount_label != NULL && l->has_personality &&
             streq(l->personality_domain, "LINUX"),
         "full: propagation, masked/readonly, label, personality");
}

static void test_full_and_roundtrip(void)
{
  struct error err = {0};
  struct oci_config *c = NULL, *c2 = NULL;
  char *j1 = NULL, *j2 = NULL, *pretty = NULL;
  size_t len = 0, l1 = 0, l2 = 0;
  char *text = slurp("config-full.json", &len);

  if (!tap_ok(text != NULL, "fixture tests/data/config-full.json readable"))
    return;
  if (!tap_ok(oci_config_parse(text, len, "config.json", &c, &err) == 0, "full: parses (%s)",
              err.msg))
    goto out;
  check_full(c);
  tap_ok(oci_config_to_json(c, &j1, &l1, &err) == 0 && strlen(j1) == l1, "round trip: to_json");
  tap_ok(oci_config_parse(j1, l1, "copy.json", &c2, &err) == 0, "round trip: reparse (%s)",
         err.msg);
  if (c2 != NULL) {
    check_full(c2);
    tap_ok(oci_config_to_json(c2, &j2, &l2, &err) == 0 && l1 == l2 && strcmp(j1, j2) == 0,
           "round trip: second serialisation identical");
  }
  tap_ok(oci_config_to_json_pretty(c, &pretty, NULL, &err) == 0 && strchr(pretty, '\t') != NULL,
         "pretty serialisation");
  tap_ok(strstr(j1, "\"hard\":18446744073709551615") != NULL, "uint64 max written exactly");
  tap_ok(strstr(j1, "vendorExtension") == NULL && strstr(j1, "commandLine") == NULL,
         "unknown fields are not carried over");
out:
  oci_config_free(c);
  oci_config_free(c2);
  free(j1);
  free(j2);
  free(pretty);
  free(text);
}

/* oci_config_dup: the copy owns all its memory (the original is freed before
 * the copy is read: under ASan a pointer the copy shares is a use after free)
 * and has every field check_full() looks at. */
static void test_dup(void)
{
  struct error err = {0};
  struct oci_config *c = NULL, *d = NULL;
  char *j1 = NULL, *j2 = NULL;
  size_t len = 0;
  char *text = slurp("config-full.json", &len);

  if (!tap_ok(text != NULL && oci_config_parse(text, len, "config.json", &c, &err) == 0,
              "dup: fixture parses (%s)", err.msg))
    goto out;
  tap_ok(oci_config_to_json(c, &j1, NULL, &err) == 0, "dup: original serialises");
  d = oci_config_dup(c);
  tap_ok(d != NULL, "dup: copies");
  oci_config_free(c);
  c = NULL;
  if (d == NULL)
    goto out;
  check_full(d);
  tap_ok(oci_config_to_json(d, &j2, NULL, &err) == 0 && strcmp(j1, j2) == 0,
         "dup: the copy serialises like the original did");
out:
  oci_config_free(c);
  oci_config_free(d);
  free(j1);
  free(j2);
  free(text);
}

/* A tripwire for a new field in oci/config.h, which five functions must know:
 * the parser, oci_config_to_json, oci_config_free, oci_config_dup (a heap
 * field it forgets is freed twice) and this test's fixture.  When a struct
 * changes size here: copy the field in oci/config_dup.c, free it, write and
 * read it, set it in tests/data/config-full.json and check it in
 * check_full(); then update the size below.  (A field without heap memory,
 * such as oci_caps.unknown, is copied by the struct assignment and needs no
 * free; if it is not part of the document, it needs no serialiser either.) */
static void test_struct_sizes(void)
{
#if defined(__x86_64__) && defined(__LP64__)
  static const struct {
    const char *name;
    size_t size, expected;
  } sizes[] = {
      {"oci_kv", sizeof(struct oci_kv), 16},
      {"oci_idmap", sizeof(struct oci_idmap), 12},
      {"oci_rlimit", sizeof(struct oci_rlimit), 32},
      {"oci_caps", sizeof(struct oci_caps), 216},
      {"oci_user", sizeof(struct oci_user), 40},
      {"oci_process", sizeof(struct oci_process), 432},
      {"oci_mount", sizeof(struct oci_mount), 64},
      {"oci_hook", sizeof(struct oci_hook), 32},
      {"oci_hooks", sizeof(struct oci_hooks), 96},
      {"oci_namespace", sizeof(struct oci_namespace), 16},
      {"oci_device", sizeof(struct oci_device), 56},
      {"oci_device_cgroup", sizeof(struct oci_device_cgroup), 32},
      {"oci_weight_device", sizeof(struct oci_weight_device), 24},
      {"oci_throttle_device", sizeof(struct oci_throttle_device), 24},
      {"oci_hugepage_limit", sizeof(struct oci_hugepage_limit), 16},
      {"oci_net_priority", sizeof(struct oci_net_priority), 16},
      {"oci_resources", sizeof(struct oci_resources), 328},
      {"oci_seccomp_arg", sizeof(struct oci_seccomp_arg), 32},
      {"oci_seccomp_syscall", sizeof(struct oci_seccomp_syscall),
       48}, /* direct_only: copied, not in the document */
      {"oci_seccomp", sizeof(struct oci_seccomp), 64},
      {"oci_time_offset", sizeof(struct oci_time_offset), 24},
      {"oci_linux", sizeof(struct oci_linux), 168},
      {"oci_config", sizeof(struct oci_config), 184},
  };
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
    tap_ok(
        sizes[i].size == sizes[i].expected,
        "struct %s: %zu bytes, recorded %zu (a difference is a new field: see test_struct_sizes)",
        sizes[i].name, sizes[i].size, sizes[i].expected);
#else
  tap_ok(1, "struct sizes: recorded for x86_64 only, not checked here");
#endif
}

#define BASE "\"ociVersion\":\"1.2.0\",\"root\":{\"path\":\"rootfs\"}"
#define PROC(x) "{" BASE ",\"process\":{\"cwd\":\"/\",\"args\":[\"sh\"]," x "}}"
#define LNX(x) "{" BASE ",\"linux\":{" x "}}"
#define RES(x) LNX("\"resources\":{" x "}")
#define SECCOMP(x) LNX("\"seccomp\":{\"defaultAction\":\"SCMP_ACT_ALLOW\"," x "}")

static const struct {
  const char *json;
  const char *msg;
} bad[] = {
    /* required fields and top level */
    {"[]", "config.json: expected object"},
    {"{\"root\":{\"path\":\"r\"}}", "config.json: ociVersion: is required"},
    {"{\"ociVersion\":\"\",\"root\":{\"path\":\"r\"}}",
     "config.json: ociVersion: must not be empty"},
    {"{\"ociVersion\":\"1.2.0\"}", "config.json: root: is required"},
    {"{\"ociVersion\":\"1.2.0\",\"root\":{}}", "config.json: root.path: is required"},
    {"{\"ociVersion\":\"1.2.0\",\"root\":{\"path\":\"\"}}",
     "config.json: root.path: must not be empty"},
    {"{\"ociVersion\":1,\"root\":{\"path\":\"r\"}}", "config.json: ociVersion: expected string"},
    {"{" BASE ",\"hostname\":[]}", "config.json: hostname: expected string"},
    {"{\"ociVersion\":\"1.2.0\",\"root\":{\"path\":\"r\",\"readonly\":\"yes\"}}",
     "config.json: root.readonly: expected boolean"},
    /* process */
    {"{" BASE ",\"process\":{\"args\":[\"sh\"]}}", "config.json: process.cwd: is required"},
    {"{" BASE ",\"process\":{\"cwd\":\"tmp\",\"args\":[\"sh\"]}}",
     "config.json: process.cwd: must be an absolute path"},
    {"{" BASE ",\"process\":{\"cwd\":\"/\"}}", "config.json: process.args: is required"},
    {"{" BASE ",\"process\":{\"cwd\":\"/\",\"args\":[]}}",
     "config.json: process.args: must not be empty"},
    {"{" BASE ",\"process\":{\"cwd\":\"/\",\"args\":[\"sh\",7]}}",
     "config.json: process.args[1]: expected string"},
    {PROC("\"env\":[\"A=1\",\"NOEQUALS\"]"), "config.json: process.env[1]: must be KEY=VALUE"},
    {PROC("\"env\":[\"=x\"]"), "config.json: process.env[0]: must be KEY=VALUE"},
    {PROC("\"env\":\"A=1\""), "config.json: process.env: expected array"},
    {PROC("\"terminal\":1"), "config.json: process.terminal: expected boolean"},
    {PROC("\"consoleSize\":{\"height\":1}"), "config.json: process.consoleSize.width: is required"},
    {PROC("\"user\":{\"uid\":-1}"), "config.json: process.user.uid: must not be negative"},
    {PROC("\"user\":{\"uid\":4294967296}"),
     "config.json: process.user.uid: out of range (maximum 4294967295)"},
    {PROC("\"user\":{\"uid\":4294967295}"),
     "config.json: process.user.uid: 4294967295 is the invalid id (the user would stay root)"},
    {PROC("\"user\":{\"gid\":4294967295}"),
     "config.json: process.user.gid: 4294967295 is the invalid id (the group would stay root's)"},
    {PROC("\"user\":{\"additionalGids\":[1,4294967295]}"),
     "config.json: process.user.additionalGids: 4294967295 is the invalid id"},
    {PROC("\"user\":{\"gid\":1.5}"), "config.json: process.user.gid: expected integer"},
    {PROC("\"user\":{\"gid\":1e3}"), "config.json: process.user.gid: expected integer"},
    {PROC("\"user\":{\"umask\":512}"),
     "config.json: process.user.umask: out of range (maximum 0777)"},
    {PROC("\"user\":{\"additionalGids\":[1,\"2\"]}"),
     "config.json: process.user.additionalGids[1]: expected integer"},
    {PROC("\"rlimits\":[{\"type\":\"RLIMIT_BOGUS\",\"soft\":1,\"hard\":1}]"),
     "config.json: process.rlimits[0].type: unknown rlimit `RLIMIT_BOGUS`"},
    {PROC("\"rlimits\":[{\"type\":\"RLIMIT_NOFILE\",\"hard\":1}]"),
     "config.json: process.rlimits[0].soft: is required"},
    {PROC("\"rlimits\":[{\"type\":\"RLIMIT_NOFILE\",\"soft\":18446744073709551616,\"hard\":1}]"),
     "config.json: process.rlimits[0].soft: out of range (maximum 18446744073709551615)"},
    {PROC("\"rlimits\":[{\"type\":\"RLIMIT_NOFILE\",\"soft\":2,\"hard\":1}]"),
     "config.json: process.rlimits[0].soft: must not exceed the hard limit"},
    {PROC("\"rlimits\":[{\"type\":\"RLIMIT_CPU\",\"soft\":1,\"hard\":1},"
          "{\"type\":\"RLIMIT_CPU\",\"soft\":1,\"hard\":1}]"),
     "config.json: process.rlimits[1].type: duplicate rlimit `RLIMIT_CPU`"},
    {PROC("\"capabilities\":{\"ambient\":[41]}"),
     "config.json: process.capabilities.ambient[0]: expected string"},
    {PROC("\"capabilities\":{\"permitted\":\"CAP_KILL\"}"),
     "config.json: process.capabilities.permitted: expected array"},
    {PROC("\"oomScoreAdj\":1001"),
     "config.json: process.oomScoreAdj: out of range (-1000 to 1000)"},
    {PROC("\"oomScoreAdj\":2147483648"),
     "config.json: process.oomScoreAdj: out of range (-2147483648 to 2147483647)"},
    {PROC("\"noNewPrivileges\":\"true\""),
     "config.json: process.noNewPrivileges: expected boolean"},
    /* mounts */
    {"{" BASE ",\"mounts\":[{\"destination\":\"/a\"},{\"destination\":\"\"}]}",
     "config.json: mounts[1].destination: must not be empty"},
    {"{" BASE ",\"mounts\":[{\"type\":\"tmpfs\"}]}",
     "config.json: mounts[0].destination: is required"},
    {"{" BASE ",\"mounts\":[{\"destination\":\"/a\",\"options\":[\"ro\",false]}]}",
     "config.json: mounts[0].options[1]: expected string"},
    {"{" BASE ",\"mounts\":[{\"destination\":\"/a\",\"uidMappings\":[]}]}",
     "config.json: mounts[0].gidMappings: an idmapped mount needs both uidMappings and "
     "gidMappings"},
    {"{" BASE ",\"mounts\":[{\"destination\":\"/a\",\"uidMappings\":[],\"gidMappings\":[]}]}",
     "config.json: mounts[0].uidMappings: must not be empty"},
    {"{" BASE ",\"mounts\":[{\"destination\":\"/a\",\"uidMappings\":[{\"containerID\":0,"
     "\"hostID\":1,\"size\":0}],\"gidMappings\":[]}]}",
     "config.json: mounts[0].uidMappings[0].size: must be greater than 0"},
    {"{" BASE ",\"mounts\":{}}", "config.json: mounts: expected array"},
    /* hooks */
    {"{" BASE ",\"hooks\":{\"prestart\":[{\"path\":\"hook\"}]}}",
     "config.json: hooks.prestart[0].path: must be an absolute path"},
    {"{" BASE ",\"hooks\":{\"poststop\":[{\"args\":[]}]}}",
     "config.json: hooks.poststop[0].path: is required"},
    {"{" BASE ",\"hooks\":{\"createRuntime\":[{\"path\":\"/h\",\"timeout\":0}]}}",
     "config.json: hooks.createRuntime[0].timeout: must be greater than 0"},
    {"{" BASE ",\"hooks\":{\"startContainer\":[{\"path\":\"/h\",\"timeout\":-5}]}}",
     "config.json: hooks.startContainer[0].timeout: must be greater than 0"},
    {"{" BASE ",\"hooks\":{\"createContainer\":[{\"path\":\"/h\",\"env\":[1]}]}}",
     "config.json: hooks.createContainer[0].env[0]: expected string"},
    {"{" BASE ",\"hooks\":{\"poststart\":{}}}", "config.json: hooks.poststart: expected array"},
    /* annotations */
    {"{" BASE ",\"annotations\":{\"a\":\"1\",\"b\":2}}",
     "config.json: annotations[\"b\"]: expected string"},
    {"{" BASE ",\"annotations\":{\"\":\"x\"}}",
     "config.json: annotations[\"\"]: key must not be empty"},
    {"{" BASE ",\"annotations\":[]}", "config.json: annotations: expected object"},
    /* linux */
    {LNX("\"namespaces\":[{\"type\":\"pid\"},{\"type\":\"pid\"}]"),
     "config.json: linux.namespaces[1].type: duplicate namespace `pid`"},
    {LNX("\"namespaces\":[{\"type\":\"net\"}]"),
     "config.json: linux.namespaces[0].type: unknown namespace type `net`"},
    {LNX("\"namespaces\":[{\"path\":\"/x\"}]"),
     "config.json: linux.namespaces[0].type: is required"},
    {LNX("\"namespaces\":[{\"type\":\"network\",\"path\":\"proc/1/ns/net\"}]"),
     "config.json: linux.namespaces[0].path: must be an absolute path"},
    {LNX("\"namespaces\":[{\"type\":\"user\"}],\"uidMappings\":[{\"containerID\":0,\"hostID\":1000,"
         "\"size\":0}]"),
     "config.json: linux.uidMappings[0].size: must be greater than 0"},
    {LNX("\"namespaces\":[{\"type\":\"user\"}],\"gidMappings\":[{\"containerID\":0,\"hostID\":1000}"
         "]"),
     "config.json: linux.gidMappings[0].size: is required"},
    {LNX("\"namespaces\":[{\"type\":\"user\"}],\"gidMappings\":[{\"containerID\":0,"
         "\"hostID\":4294967295,\"size\":2}]"),
     "config.json: linux.gidMappings[0].size: out of range (the mapping wraps past 4294967295)"},
    {LNX("\"uidMappings\":[{\"containerID\":0,\"hostID\":1000,\"size\":1}]"),
     "config.json: linux.uidMappings: mappings given but no user namespace configured"},
    {LNX("\"timeOffsets\":{\"monotonic\":{\"secs\":1}}"),
     "config.json: linux.timeOffsets: offsets given but no time namespace configured"},
    {LNX("\"namespaces\":[{\"type\":\"time\"}],\"timeOffsets\":{\"realtime\":{\"secs\":1}}"),
     "config.json: linux.timeOffsets[\"realtime\"]: unknown clock (expected monotonic or "
     "boottime)"},
    {LNX("\"namespaces\":[{\"type\":\"time\"}],\"timeOffsets\":{\"boottime\":{\"nanosecs\":"
         "1000000000}}"),
     "config.json: linux.timeOffsets[\"boottime\"].nanosecs: out of range (maximum 999999999)"},
    {LNX("\"devices\":[{\"path\":\"/dev/x\",\"type\":\"q\",\"major\":1,\"minor\":1}]"),
     "config.json: linux.devices[0].type: must be one of \"c\", \"b\", \"u\", \"p\""},
    {LNX("\"devices\":[{\"path\":\"dev/x\",\"type\":\"c\",\"major\":1,\"minor\":1}]"),
     "config.json: linux.devices[0].path: must be an absolute path"},
    {LNX("\"devices\":[{\"path\":\"/dev/x\",\"type\":\"c\",\"minor\":1}]"),
     "config.json: linux.devices[0].major: is required"},
    {LNX("\"devices\":[{\"path\":\"/dev/x\",\"type\":\"b\",\"major\":-1,\"minor\":1}]"),
     "config.json: linux.devices[0].major: must not be negative"},
    {LNX("\"devices\":[{\"path\":\"/dev/"
         "x\",\"type\":\"c\",\"major\":1,\"minor\":1,\"fileMode\":4096}]"),
     "config.json: linux.devices[0].fileMode: file type bits 010000 do not match type \"c\""},
    {LNX("\"devices\":[{\"path\":\"/dev/"
         "x\",\"type\":\"c\",\"major\":1,\"minor\":1,\"fileMode\":33188}]"),
     "config.json: linux.devices[0].fileMode: file type bits 0100000 do not match type \"c\""},
    {LNX("\"devices\":[{\"path\":\"/dev/"
         "x\",\"type\":\"b\",\"major\":1,\"minor\":1,\"fileMode\":8630}]"),
     "config.json: linux.devices[0].fileMode: file type bits 020000 do not match type \"b\""},
    {LNX("\"rootfsPropagation\":\"sideways\""),
     "config.json: linux.rootfsPropagation: unknown propagation `sideways`"},
    {LNX("\"maskedPaths\":[\"/proc/kcore\",\"proc/keys\"]"),
     "config.json: linux.maskedPaths[1]: must be an absolute path"},
    {LNX("\"readonlyPaths\":[1]"), "config.json: linux.readonlyPaths[0]: expected string"},
    {LNX("\"sysctl\":{\"net.ipv4.ip_forward\":1}"),
     "config.json: linux.sysctl[\"net.ipv4.ip_forward\"]: expected string"},
    {LNX("\"cgroupsPath\":42"), "config.json: linux.cgroupsPath: expected string"},
    {LNX("\"personality\":{\"domain\":\"LINUX64\"}"),
     "config.json: linux.personality.domain: must be \"LINUX\" or \"LINUX32\""},
    {LNX("\"personality\":{}"), "config.json: linux.personality.domain: is required"},
    {LNX("\"personality\":{\"domain\":\"LINUX\",\"flags\":[1]}"),
     "config.json: linux.personality.flags[0]: expected string"},
    {LNX("\"intelRdt\":{\"l3CacheSchema\":\"L3:0=f\"}"),
     "config.json: linux.intelRdt.l3CacheSchema: Intel RDT is not supported"},
    {LNX("\"intelRdt\":{\"memBwSchema\":\"MB:0=50\"}"),
     "config.json: linux.intelRdt.memBwSchema: Intel RDT is not supported"},
    {LNX("\"intelRdt\":{\"schemata\":[\"L2:0=1\"]}"),
     "config.json: linux.intelRdt.schemata: Intel RDT is not supported"},
    {LNX("\"intelRdt\":{\"enableMonitoring\":true}"),
     "config.json: linux.intelRdt.enableMonitoring: Intel RDT is not supported"},
    {LNX("\"intelRdt\":{\"closID\":\"a/b\"}"), "config.json: linux.intelRdt.closID: invalid `a/b`"},
    {LNX("\"intelRdt\":[]"), "config.json: linux.intelRdt: expected object"},
    {"{" BASE ",\"linux\":[]}", "config.json: linux: expected object"},
    /* resources */
    {RES("\"memory\":{\"limit\":\"1G\"}"),
     "config.json: linux.resources.memory.limit: expected integer"},
    {RES("\"memory\":{\"limit\":9223372036854775808}"),
     "config.json: linux.resources.memory.limit: out of range (-9223372036854775808 to "
     "9223372036854775807)"},
    {RES("\"memory\":{\"swappiness\":-1}"),
     "config.json: linux.resources.memory.swappiness: must not be negative"},
    {RES("\"memory\":{\"swappiness\":101}"),
     "config.json: linux.resources.memory.swappiness: out of range (0 to 100)"},
    {RES("\"cpu\":{\"shares\":-2}"),
     "config.json: linux.resources.cpu.shares: must not be negative"},
    {RES("\"cpu\":{\"cpus\":0}"), "config.json: linux.resources.cpu.cpus: expected string"},
    {RES("\"pids\":{\"limit\":1.0}"), "config.json: linux.resources.pids.limit: expected integer"},
    {RES("\"devices\":[{\"type\":\"c\"}]"),
     "config.json: linux.resources.devices[0].allow: is required"},
    {RES("\"devices\":[{\"allow\":true,\"type\":\"x\"}]"),
     "config.json: linux.resources.devices[0].type: must be \"a\", \"c\" or \"b\""},
    {RES("\"devices\":[{\"allow\":true,\"access\":\"xyz\"}]"),
     "config.json: linux.resources.devices[0].access: must be a combination of r, w and m"},
    {RES("\"blockIO\":{\"weight\":65536}"),
     "config.json: linux.resources.blockIO.weight: out of range (maximum 65535)"},
    {RES("\"blockIO\":{\"throttleReadBpsDevice\":[{\"major\":8,\"minor\":0}]}"),
     "config.json: linux.resources.blockIO.throttleReadBpsDevice[0].rate: is required"},
    {RES("\"blockIO\":{\"weightDevice\":[{\"major\":8}]}"),
     "config.json: linux.resources.blockIO.weightDevice[0].minor: is required"},
    {RES("\"hugepageLimits\":[{\"pageSize\":\"2MB\",\"limit\":-1}]"),
     "config.json: linux.resources.hugepageLimits[0].limit: must not be negative"},
    {RES("\"network\":{\"priorities\":[{\"name\":\"eth 0\",\"priority\":1}]}"),
     "config.json: linux.resources.network.priorities[0].name: `eth 0` is not an interface name"},
    {RES("\"network\":{\"classID\":-1}"),
     "config.json: linux.resources.network.classID: must not be negative"},
    {RES("\"unified\":{\"memory.max\":[]}"),
     "config.json: linux.resources.unified[\"memory.max\"]: expected string"},
    /* seccomp */
    {LNX("\"seccomp\":{}"), "config.json: linux.seccomp.defaultAction: is required"},
    {LNX("\"seccomp\":{\"defaultAction\":\"SCMP_ACT_MAYBE\"}"),
     "config.json: linux.seccomp.defaultAction: unknown seccomp action `SCMP_ACT_MAYBE`"},
    {SECCOMP("\"defaultErrnoRet\":1"),
     "config.json: linux.seccomp.defaultErrnoRet: not supported with action `SCMP_ACT_ALLOW`"},
    {SECCOMP("\"architectures\":[\"SCMP_ARCH_X86_64\",\"SCMP_ARCH_Z80\"]"),
     "config.json: linux.seccomp.architectures[1]: unknown seccomp architecture `SCMP_ARCH_Z80`"},
    {SECCOMP("\"flags\":[\"SECCOMP_FILTER_FLAG_FAST\"]"),
     "config.json: linux.seccomp.flags[0]: unknown seccomp flag `SECCOMP_FILTER_FLAG_FAST`"},
    {SECCOMP("\"listenerPath\":\"sock\""),
     "config.json: linux.seccomp.listenerPath: must be an absolute path"},
    {SECCOMP("\"syscalls\":[{\"names\":[\"read\"],\"action\":\"SCMP_ACT_NOTIFY\"}]"),
     "config.json: linux.seccomp.listenerPath: is required when SCMP_ACT_NOTIFY is used"},
    {SECCOMP("\"listenerPath\":\"/a\",\"syscalls\":[{\"names\":[\"read\",\"write\"],"
             "\"action\":\"SCMP_ACT_NOTIFY\"}]"),
     "config.json: linux.seccomp.syscalls: SCMP_ACT_NOTIFY cannot be used for the write syscall"},
    {LNX("\"seccomp\":{\"defaultAction\":\"SCMP_ACT_NOTIFY\",\"listenerPath\":\"/a\"}"),
     "config.json: linux.seccomp.defaultAction: SCMP_ACT_NOTIFY cannot be used as the default "
     "action"},
    {SECCOMP("\"syscalls\":[{\"action\":\"SCMP_ACT_ERRNO\"}]"),
     "config.json: linux.seccomp.syscalls[0].names: is required"},
    {SECCOMP("\"syscalls\":[{\"names\":[],\"action\":\"SCMP_ACT_ERRNO\"}]"),
     "config.json: linux.seccomp.syscalls[0].names: must not be empty"},
    {SECCOMP("\"syscalls\":[{\"names\":[\"read\",\"\"],\"action\":\"SCMP_ACT_ERRNO\"}]"),
     "config.json: linux.seccomp.syscalls[0].names[1]: must not be empty"},
    {SECCOMP("\"syscalls\":[{\"names\":[\"read\"]}]"),
     "config.json: linux.seccomp.syscalls[0].action: is required"},
    {SECCOMP("\"syscalls\":[{\"names\":[\"read\"],\"action\":\"SCMP_ACT_KILL\",\"errnoRet\":1}]"),
     "config.json: linux.seccomp.syscalls[0].errnoRet: not supported with action `SCMP_ACT_KILL`"},
    {SECCOMP("\"syscalls\":[{\"names\":[\"read\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":-1}]"),
     "config.json: linux.seccomp.syscalls[0].errnoRet: must not be negative"},
    {SECCOMP(
         "\"syscalls\":[{\"names\":[\"read\"],\"action\":\"SCMP_ACT_ERRNO\",\"args\":[{\"index\":6,"
         "\"value\":1,\"op\":\"SCMP_CMP_EQ\"}]}]"),
     "config.json: linux.seccomp.syscalls[0].args[0].index: out of range (0 to 5)"},
    {SECCOMP(
         "\"syscalls\":[{\"names\":[\"read\"],\"action\":\"SCMP_ACT_ERRNO\",\"args\":[{\"index\":0,"
         "\"value\":1,\"op\":\"SCMP_CMP_ABOUT\"}]}]"),
     "config.json: linux.seccomp.syscalls[0].args[0].op: unknown seccomp operator "
     "`SCMP_CMP_ABOUT`"},
    {SECCOMP(
         "\"syscalls\":[{\"names\":[\"read\"],\"action\":\"SCMP_ACT_ERRNO\",\"args\":[{\"index\":0,"
         "\"op\":\"SCMP_CMP_EQ\"}]}]"),
     "config.json: linux.seccomp.syscalls[0].args[0].value: is required"},
    {SECCOMP(
         "\"syscalls\":[{\"names\":[\"read\"],\"action\":\"SCMP_ACT_ERRNO\",\"args\":[{\"index\":0,"
         "\"value\":18446744073709551616,\"op\":\"SCMP_CMP_EQ\"}]}]"),
     "config.json: linux.seccomp.syscalls[0].args[0].value: out of range (maximum "
     "18446744073709551615)"},
    /* malformed JSON */
    {"", "config.json: line 1: parse error: premature EOF"},
    {"{\n\"ociVersion\": \"1.2.0\",\n\n  \"root\": {\"path\": \"r\"},,\n}",
     "config.json: line 4: parse error: invalid object key (must be a string)"},
    {"{\n\"a\":\n[1,2\n", "config.json: line 4: parse error: premature EOF"},
    {"{\"a\":\"x\\u0000y\"}", "config.json: line 1: string contains a NUL character"},
    {"{\"a\\u0000b\":1}", "config.json: line 1: string contains a NUL character"},
    {"{\"a\":tru}", "config.json: line 1: lexical error: invalid string in json text"},
    {"{} {}", "config.json: line 1: parse error: trailing garbage"},
    {"{\"a\":\"\xff\"}", "config.json: line 1: lexical error: invalid bytes in UTF8 string"},
};

static void test_errors(void)
{
  for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
    struct error err = {0};
    struct oci_config *c = NULL;
    int r = parse(bad[i].json, &c, &err);
    tap_ok(r < 0 && c == NULL && strcmp(err.msg, bad[i].msg) == 0, "error %zu: %s%s%s", i,
           bad[i].msg, strcmp(err.msg, bad[i].msg) != 0 ? " -- got: " : "",
           strcmp(err.msg, bad[i].msg) != 0 ? err.msg : "");
    oci_config_free(c);
  }
}

static const char small_doc[] =
    "{\"ociVersion\":\"1.2.0\",\"root\":{\"path\":\"rootfs\",\"readonly\":true},"
    "\"process\":{\"terminal\":false,\"user\":{\"uid\":0,\"gid\":0},\"args\":[\"sh\",\"-c\","
    "\"echo \\u00e9 \\\"q\\\"\"],\"env\":[\"PATH=/bin\"],\"cwd\":\"/\",\"capabilities\":"
    "{\"bounding\":[\"CAP_KILL\"]},\"rlimits\":[{\"type\":\"RLIMIT_NOFILE\",\"hard\":1024,"
    "\"soft\":1024}],\"oomScoreAdj\":-10},\"mounts\":[{\"destination\":\"/proc\",\"type\":"
    "\"proc\",\"source\":\"proc\"}],\"linux\":{\"namespaces\":[{\"type\":\"pid\"},{\"type\":"
    "\"mount\"}],\"resources\":{\"memory\":{\"limit\":1048576},\"pids\":{\"limit\":-1}},"
    "\"maskedPaths\":[\"/proc/kcore\"]},\"annotations\":{\"k\":\"v\"}}";

static void test_truncated(void)
{
  size_t n = strlen(small_doc), failed = 0, crashed_msg = 0;
  struct error err = {0};
  struct oci_config *c = NULL;

  tap_ok(oci_config_parse(small_doc, n, "config.json", &c, &err) == 0, "small doc parses (%s)",
         err.msg);
  oci_config_free(c);
  for (size_t len = 0; len < n; len++) {
    char *copy = xstrndup(small_doc, len); /* exact-size heap copy: ASan sees overreads */
    c = NULL;
    error_clear(&err);
    if (oci_config_parse(copy, len, "config.json", &c, &err) == 0) {
      failed++;
      oci_config_free(c);
    } else if (!str_has_prefix(err.msg, "config.json: line 1: ")) {
      crashed_msg++;
    }
    free(copy);
  }
  tap_ok(failed == 0, "every truncation of a %zu-byte document is rejected (%zu accepted)", n,
         failed);
  tap_ok(crashed_msg == 0, "every truncation reports a line-numbered syntax error (%zu did not)",
         crashed_msg);
}

static void test_bounds(void)
{
  struct error err = {0};
  struct oci_config *c = NULL;
  size_t big = ((size_t)16 << 20) + 1;
  char *doc = xmalloc(big + 1);
  size_t n;

  memset(doc, ' ', big);
  doc[0] = '{';
  doc[big - 1] = '}';
  doc[big] = '\0';
  tap_ok(oci_config_parse(doc, big, "config.json", &c, &err) < 0 &&
             strcmp(err.msg, "config.json: document too large (16777217 bytes, limit 16 MiB)") == 0,
         "documents over 16 MiB are refused: %s", err.msg);
  /* 65537 elements in one array */
  n = (size_t)snprintf(doc, big, "{" BASE ",\"process\":{\"cwd\":\"/\",\"args\":[");
  for (int i = 0; i < 65537; i++)
    n += (size_t)snprintf(doc + n, big - n, "%s\"a\"", i ? "," : "");
  n += (size_t)snprintf(doc + n, big - n, "]}}");
  tap_ok(oci_config_parse(doc, n, "config.json", &c, &err) < 0 &&
             strstr(err.msg, "too many elements in an array or object (limit 65536)") != NULL,
         "arrays over 65536 elements are refused: %s", err.msg);
  /* 65536 is fine */
  n = (size_t)snprintf(doc, big, "{" BASE ",\"process\":{\"cwd\":\"/\",\"args\":[");
  for (int i = 0; i < 65536; i++)
    n += (size_t)snprintf(doc + n, big - n, "%s\"a\"", i ? "," : "");
  n += (size_t)snprintf(doc + n, big - n, "]}}");
  c = NULL;
  tap_ok(oci_config_parse(doc, n, "config.json", &c, &err) == 0 &&
             strv_len(c->process->args) == 65536,
         "arrays of exactly 65536 elements are accepted");
  oci_config_free(c);
  c = NULL;
  /* nesting */
  n = 0;
  n += (size_t)snprintf(doc, big, "{" BASE ",\"x\":");
  for (int i = 0; i < 100; i++)
    doc[n++] = '[';
  for (int i = 0; i < 100; i++)
    doc[n++] = ']';
  doc[n++] = '}';
  tap_ok(oci_config_parse(doc, n, "config.json", &c, &err) < 0 &&
             strstr(err.msg, "nesting too deep (limit 64 levels)") != NULL,
         "deep nesting is refused: %s", err.msg);
  free(doc);
}

static void test_duplicates_and_null(void)
{
  struct error err = {0};
  struct oci_config *c = NULL;
  const char *doc = "{\"ociVersion\":\"1.0.0\",\"ociVersion\":\"1.2.0\",\"root\":{\"path\":\"a\"},"
                    "\"hostname\":null,\"process\":null,\"linux\":{\"resources\":null,"
                    "\"seccomp\":null},\"annotations\":{\"k\":\"1\",\"k\":\"2\"}}";

  tap_ok(parse(doc, &c, &err) == 0, "null fields parse (%s)", err.msg);
  if (c == NULL)
    return;
  tap_ok(streq(c->oci_version, "1.2.0"), "duplicate key: the last one wins");
  tap_ok(c->n_annotations == 1 && streq(c->annotations[0].value, "2"),
         "duplicate annotation: one entry, last value");
  tap_ok(c->hostname == NULL && c->process == NULL && c->linux != NULL &&
             c->linux->resources == NULL && c->linux->seccomp == NULL,
         "null means absent");
  oci_config_free(c);
}

/* runc and the Go spec types read an empty namespace path as none (omitempty);
 * runc's own tests write "path": "" for a namespace to create */
static void test_empty_ns_path(void)
{
  struct error err = {0};
  struct oci_config *c = NULL;
  const char *doc = "{\"ociVersion\":\"1.2.0\",\"root\":{\"path\":\"rootfs\"},\"linux\":{"
                    "\"namespaces\":[{\"type\":\"mount\",\"path\":\"\"},"
                    "{\"type\":\"network\",\"path\":\"/proc/1/ns/net\"}]}}";

  tap_ok(parse(doc, &c, &err) == 0, "an empty namespace path parses (%s)", err.msg);
  if (c == NULL)
    return;
  tap_ok(oci_config_namespace(c, OCI_NS_MOUNT) != NULL &&
             oci_config_namespace(c, OCI_NS_MOUNT)->path == NULL &&
             streq(oci_config_namespace(c, OCI_NS_NETWORK)->path, "/proc/1/ns/net"),
         "an empty namespace path is a new namespace, a non-empty one is kept");
  oci_config_free(c);
}

/* Podman's --privileged passes each host device's st_mode: the type bits of the
 * device's own type are taken off, the permission bits kept */
static void test_device_mode_type_bits(void)
{
  struct error err = {0};
  struct oci_config *c = NULL;
  const char *doc =
      "{\"ociVersion\":\"1.2.0\",\"root\":{\"path\":\"rootfs\"},\"linux\":{\"devices\":["
      "{\"path\":\"/dev/tty1\",\"type\":\"c\",\"major\":4,\"minor\":1,\"fileMode\":8592},"
      "{\"path\":\"/dev/loop0\",\"type\":\"b\",\"major\":7,\"minor\":0,\"fileMode\":25008},"
      "{\"path\":\"/dev/p\",\"type\":\"p\",\"fileMode\":4516},"
      "{\"path\":\"/dev/u\",\"type\":\"u\",\"major\":1,\"minor\":3,\"fileMode\":8630}]}}";

  tap_ok(parse(doc, &c, &err) == 0, "device modes with their own type bits parse (%s)", err.msg);
  if (c == NULL)
    return;
  tap_ok(c->linux->n_devices == 4 && c->linux->devices[0].file_mode == 0620 &&
             c->linux->devices[1].file_mode == 0660 && c->linux->devices[2].file_mode == 0644 &&
             c->linux->devices[3].file_mode == 0666,
         "device modes keep the permission bits only (%o %o %o %o)", c->linux->devices[0].file_mode,
         c->linux->devices[1].file_mode, c->linux->devices[2].file_mode,
         c->linux->devices[3].file_mode);
  oci_config_free(c);
}

/* spec 1.2's scheduler, ioPriority and execCPUAffinity: parsed, written back
 * as given, and CPU lists checked */
static void test_sched_fields(void)
{
  struct error err = {0};
  struct oci_process *p = NULL, *q = NULL;
  const char *doc =
      "{\"cwd\":\"/\",\"args\":[\"x\"],\"scheduler\":{\"policy\":\"SCHED_DEADLINE\",\"nice\":-3,"
      "\"priority\":0,\"flags\":[\"SCHED_FLAG_RESET_ON_FORK\",\"SCHED_FLAG_UTIL_CLAMP_MAX\"],"
      "\"runtime\":42000,\"deadline\":1000000,\"period\":2000000},"
      "\"ioPriority\":{\"class\":\"IOPRIO_CLASS_IDLE\",\"priority\":7},"
      "\"execCPUAffinity\":{\"initial\":\"0-3,7\",\"final\":\"5\"}}";
  char *out = NULL;
  unsigned long m[2] = {0};

  tap_ok(oci_process_parse(doc, strlen(doc), "p.json", &p, &err) == 0 && p->has_scheduler &&
             p->scheduler.policy == 6 && p->scheduler.nice == -3 &&
             p->scheduler.flags == (0x01 | 0x40) && p->scheduler.runtime == 42000 &&
             p->scheduler.period == 2000000 && p->has_io_priority && p->io_priority_class == 3 &&
             p->io_priority == 7 && streq(p->exec_cpu_initial, "0-3,7") &&
             streq(p->exec_cpu_final, "5"),
         "scheduler, ioPriority, execCPUAffinity parse (%s)", err.msg);
  tap_ok(p != NULL && oci_process_to_json(p, &out, NULL, &err) == 0 &&
             oci_process_parse(out, strlen(out), "p.json", &q, &err) == 0 &&
             q->scheduler.policy == 6 && q->scheduler.flags == (0x01 | 0x40) &&
             q->scheduler.deadline == 1000000 && q->io_priority_class == 3 &&
             streq(q->exec_cpu_final, "5"),
         "written back and read again: %s", out ? out : err.msg);
  free(out);
  oci_process_free(p);
  oci_process_free(q);
  tap_ok(oci_cpu_list_parse("0-3,7,64", m, 128) == 0 && m[0] == 0x8f && m[1] == 1,
         "cpu list 0-3,7,64");
  tap_ok(oci_cpu_list_parse("", m, 128) < 0 && oci_cpu_list_parse("1-", m, 128) < 0 &&
             oci_cpu_list_parse("3-1", m, 128) < 0 && oci_cpu_list_parse("1,,2", m, 128) < 0 &&
             oci_cpu_list_parse("-1", m, 128) < 0 && oci_cpu_list_parse("128", m, 128) < 0 &&
             oci_cpu_list_parse("0x1", m, 128) < 0 && oci_cpu_list_parse("1 ", m, 128) < 0 &&
             oci_cpu_list_parse("99999999999999999999999", m, 128) < 0,
         "bad cpu lists are refused");
}

/* a relative mount destination is taken from the container's / (runc, crun) */
static void test_relative_mount_dest(void)
{
  struct error err = {0};
  struct oci_config *c = NULL;
  const char *doc = "{\"ociVersion\":\"1.2.0\",\"root\":{\"path\":\"rootfs\"},\"mounts\":["
                    "{\"destination\":\"mnt/x\",\"type\":\"tmpfs\",\"source\":\"tmpfs\"}]}";

  tap_ok(parse(doc, &c, &err) == 0 && c->n_mounts == 1 && streq(c->mounts[0].destination, "/mnt/x"),
         "a relative mount destination is read from / (%s)", err.msg);
  oci_config_free(c);
}

static void test_intel_rdt_closid_alone(void)
{
  struct error err = {0};
  struct oci_config *c = NULL;

  tap_ok(parse(LNX("\"intelRdt\":{\"closID\":\"x\",\"l3CacheSchema\":\"\",\"schemata\":[],"
                   "\"enableMonitoring\":false}"),
               &c, &err) == 0,
         "intelRdt: a closID alone, empty schemas and no monitoring are accepted (%s)", err.msg);
  oci_config_free(c);
}

static void test_process_doc(void)
{
  struct error err = {0};
  struct oci_process *p = NULL;
  const char *ok = "{\"cwd\":\"/w\",\"args\":[\"ls\"],\"env\":[\"A=1\"],\"terminal\":true}";
  const char *badp = "{\"cwd\":\"/w\",\"args\":[\"ls\"],\"user\":{\"uid\":\"root\"}}";
  char *out = NULL;

  tap_ok(oci_process_parse(ok, strlen(ok), "process.json", &p, &err) == 0 && streq(p->cwd, "/w") &&
             p->terminal,
         "process document parses");
  tap_ok(p != NULL && oci_process_to_json(p, &out, NULL, &err) == 0 &&
             strcmp(out, "{\"terminal\":true,\"user\":{\"uid\":0,\"gid\":0},\"args\":[\"ls\"],"
                         "\"env\":[\"A=1\"],\"cwd\":\"/w\"}") == 0,
         "process document written back: %s", out ? out : "");
  free(out);
  oci_process_free(p);
  p = NULL;
  tap_ok(oci_process_parse(badp, strlen(badp), "process.json", &p, &err) < 0 &&
             strcmp(err.msg, "process.json: user.uid: expected integer") == 0,
         "process document errors are relative to its root: %s", err.msg);
  tap_ok(oci_process_parse("{\"args\":[\"x\"]}", 14, "process.json", &p, &err) < 0 &&
             strcmp(err.msg, "process.json: cwd: is required") == 0,
         "process document without cwd: %s", err.msg);
  {
    const char *caps = "{\"cwd\":\"/\",\"args\":[\"x\"],\"capabilities\":{\"bounding\":"
                       "[\"CAP_KILL\",\"CAP_FLY\",\"CAP_FLY\"],\"effective\":[\"CAP_FLYX\"]}}";
    p = NULL;
    tap_ok(oci_process_parse(caps, strlen(caps), "process.json", &p, &err) == 0 && p != NULL &&
               p->caps.bounding == (UINT64_C(1) << 5) && p->caps.effective == 0 &&
               p->caps.n_unknown == 2 && streq(p->caps.unknown, "CAP_FLY CAP_FLYX"),
           "unknown capability names are skipped and listed: %s", p ? p->caps.unknown : err.msg);
    oci_process_free(p);
  }
  {
    /* fuzz_process found it: an empty name after another unknown one looped for ever */
    const char *caps = "{\"cwd\":\"/\",\"args\":[\"x\"],\"capabilities\":{\"bounding\":"
                       "[\"*AP_KILL\"],\"effective\":[\"\",\"\"],\"permitted\":[\"cap_kill\"]}}";
    p = NULL;
    tap_ok(oci_process_parse(caps, strlen(caps), "process.json", &p, &err) == 0 && p != NULL &&
               p->caps.n_unknown == 2 && strstr(p->caps.unknown, "\"\"") != NULL,
           "an empty capability name is listed, not looped on: %s", p ? p->caps.unknown : err.msg);
    oci_process_free(p);
  }
}

static void test_resources_doc(void)
{
  struct error err = {0};
  struct oci_resources *r = NULL;
  const char *ok = "{\"memory\":{\"limit\":104857600,\"swap\":-1},\"cpu\":{\"quota\":-1},"
                   "\"pids\":{\"limit\":100},\"unified\":{\"cpu.weight\":\"50\"}}";
  char *out = NULL;

  tap_ok(oci_resources_parse(ok, strlen(ok), "resources.json", &r, &err) == 0 &&
             r->memory_limit == 104857600 && r->has_cpu_quota && r->cpu_quota == -1 &&
             r->pids_limit == 100,
         "resources document parses (%s)", err.msg);
  tap_ok(r != NULL && oci_resources_to_json(r, &out, NULL, &err) == 0 &&
             strcmp(out, "{\"memory\":{\"limit\":104857600,\"swap\":-1},\"cpu\":{\"quota\":-1},"
                         "\"pids\":{\"limit\":100},\"unified\":{\"cpu.weight\":\"50\"}}") == 0,
         "resources written back: %s", out ? out : "");
  free(out);
  oci_resources_free(r);
  r = NULL;
  {
    const char *net = "{\"network\":{\"classID\":1048577,\"priorities\":[{\"name\":\"lo\","
                      "\"priority\":10},{\"name\":\"eth0\",\"priority\":30}]}}";
    tap_ok(oci_resources_parse(net, strlen(net), "-", &r, &err) == 0 && r->has_net_class_id &&
               r->net_class_id == 1048577 && r->n_net_priorities == 2 &&
               strcmp(r->net_priorities[1].name, "eth0") == 0 &&
               r->net_priorities[1].priority == 30,
           "network classID and priorities parse (%s)", err.msg);
    int rc = r != NULL ? oci_resources_to_json(r, &out, NULL, &err) : -1;
    tap_ok(rc == 0 && strcmp(out, net) == 0, "network written back: %s", rc == 0 ? out : "");
    free(out);
    out = NULL;
    oci_resources_free(r);
    r = NULL;
  }
  tap_ok(oci_resources_parse("{\"memory\":{\"limit\":true}}", 25, "-", &r, &err) < 0 &&
             strcmp(err.msg, "-: memory.limit: expected integer") == 0,
         "resources errors name the path: %s", err.msg);
  {
    /* runc reads only r, w and m of an access string (its test suite writes "rwa") */
    const char *acc = "{\"devices\":[{\"allow\":false,\"type\":\"c\",\"major\":1,"
                      "\"minor\":11,\"access\":\"rwa\"},{\"allow\":true,\"access\":\"\"}]}";
    tap_ok(oci_resources_parse(acc, strlen(acc), "-", &r, &err) == 0 && r->n_devices == 2 &&
               streq(r->devices[0].access, "rw") && streq(r->devices[1].access, ""),
           "device access: letters other than r, w, m are dropped (%s)", err.msg);
    oci_resources_free(r);
    r = NULL;
  }
  tap_ok(oci_resources_parse("{}", 2, "-", &r, &err) == 0 && r != NULL,
         "empty resources document is valid");
  oci_resources_free(r);
  r = NULL;
  tap_ok(oci_resources_parse("{\"memory\":{\"swappiness\":18446744073709551615}}", 46, "-", &r,
                             &err) == 0 &&
             !r->has_memory_swappiness,
         "swappiness (uint64)-1 means unset (%s)", err.msg);
  oci_resources_free(r);
  r = NULL;
  tap_ok(oci_resources_parse("{\"unified\":{\"a\\nb\":1}}", 22, "-", &r, &err) < 0 &&
             strcmp(err.msg, "-: unified[\"a?b\"]: expected string") == 0,
         "control characters from the document do not reach the message: %s", err.msg);
}

static void test_names(void)
{
  tap_ok(oci_cap_from_name("CAP_SYS_ADMIN") == 21 && oci_cap_from_name("sys_admin") == 21 &&
             oci_cap_from_name("cap_chown") == 0 && oci_cap_from_name("Cap_Bpf") == 39,
         "capability names with/without prefix, any case");
  tap_ok(oci_cap_from_name("CAP_") == -1 && oci_cap_from_name("CAP_NOPE") == -1 &&
             oci_cap_from_name("") == -1 && oci_cap_from_name(NULL) == -1,
         "unknown capability names");
  tap_ok(oci_cap_last() == 40 && streq(oci_cap_name(40), "CAP_CHECKPOINT_RESTORE") &&
             oci_cap_name(41) == NULL && oci_cap_name(-1) == NULL,
         "capability table ends at CAP_CHECKPOINT_RESTORE");
  tap_ok(oci_rlimit_from_name("RLIMIT_NOFILE") == RLIMIT_NOFILE &&
             oci_rlimit_from_name("RLIMIT_RTTIME") == RLIMIT_RTTIME &&
             oci_rlimit_from_name("NOFILE") == -1 && streq(oci_rlimit_name(RLIMIT_AS), "RLIMIT_AS"),
         "rlimit names");
  tap_ok(oci_ns_from_name("network") == OCI_NS_NETWORK && oci_ns_from_name("net") == -1 &&
             streq(oci_ns_name(OCI_NS_TIME), "time") && oci_ns_clone_flag(OCI_NS_TIME) == 0x80 &&
             oci_ns_clone_flag(OCI_NS_USER) == 0x10000000,
         "namespace names and clone flags");
  tap_ok(streq(oci_hook_name(OCI_HOOK_CREATE_RUNTIME), "createRuntime") &&
             oci_hook_name(OCI_HOOK_KINDS) == NULL,
         "hook names");
}

static void test_default_spec(void)
{
  struct error err = {0};
  struct oci_config *c = NULL;
  char *json = NULL;

  tap_ok(oci_default_spec_json(false, true, 0, 0, &json, &err) == 0, "default spec (%s)", err.msg);
  tap_ok(json != NULL && oci_config_parse(json, strlen(json), "config.json", &c, &err) == 0,
         "default spec parses back");
  if (c != NULL) {
    tap_ok(c->process->terminal && streq(c->process->args[0], "sh") &&
               c->process->caps.bounding == (CAP(29) | CAP(5) | CAP(10)) &&
               !c->process->caps.has_inheritable && !c->process->caps.has_ambient &&
               c->process->n_rlimits == 1 && c->process->no_new_privileges,
           "default spec: process (no inheritable caps, CVE-2022-29162)");
    tap_ok(c->n_mounts == 7 && oci_config_namespace(c, OCI_NS_NETWORK) != NULL &&
               oci_config_namespace(c, OCI_NS_CGROUP) != NULL &&
               oci_config_namespace(c, OCI_NS_USER) == NULL &&
               strv_contains(c->mounts[2].options, "gid=5") && streq(c->mounts[5].type, "sysfs") &&
               strv_len(c->linux->masked_paths) == 10 && strv_len(c->linux->readonly_paths) == 5,
           "default spec: mounts, namespaces, masked paths");
  }
  oci_config_free(c);
  c = NULL;
  free(json);
  json = NULL;
  tap_ok(oci_default_spec_json(true, true, 1234, 5678, &json, &err) == 0 &&
             oci_config_parse(json, strlen(json), "config.json", &c, &err) == 0,
         "rootless spec parses back (%s)", err.msg);
  if (c != NULL) {
    tap_ok(oci_config_namespace(c, OCI_NS_USER) != NULL &&
               oci_config_namespace(c, OCI_NS_NETWORK) == NULL &&
               c->linux->uid_mappings[0].host_id == 1234 &&
               c->linux->gid_mappings[0].host_id == 5678 && c->linux->uid_mappings[0].size == 1 &&
               !strv_contains(c->mounts[2].options, "gid=5") &&
               strv_contains(c->mounts[5].options, "rbind") && c->linux->resources == NULL,
           "rootless spec: userns mapping, no netns, /sys rbind, no gid=5");
  }
  oci_config_free(c);
  c = NULL;
  free(json);
  json = NULL;
  /* cgroup v1 hosts: no cgroup namespace (runc's spec), rootful and rootless */
  for (int rootless = 0; rootless <= 1; rootless++) {
    tap_ok(oci_default_spec_json(rootless, false, 0, 0, &json, &err) == 0 &&
               oci_config_parse(json, strlen(json), "config.json", &c, &err) == 0 &&
               oci_config_namespace(c, OCI_NS_CGROUP) == NULL &&
               oci_config_namespace(c, OCI_NS_MOUNT) != NULL &&
               (oci_config_namespace(c, OCI_NS_USER) != NULL) == rootless,
           "spec without a cgroup namespace (rootless %d)", rootless);
    oci_config_free(c);
    c = NULL;
    free(json);
    json = NULL;
  }
}

static void test_features(void)
{
  struct error err = {0};
  char *json = NULL;
  char ebuf[256];
  yajl_val v = NULL;
  const char *p_max[] = {"ociVersionMax", NULL};
  const char *p_caps[] = {"linux", "capabilities", NULL};
  const char *p_idmap[] = {"linux", "mountExtensions", "idmap", "enabled", NULL};
  const char *p_ann[] = {"annotations", "run.agentrt.version", NULL};
  yajl_val caps;

  tap_ok(oci_features_json("2.5.4", &json, &err) == 0, "features document (%s)", err.msg);
  if (json != NULL)
    v = yajl_tree_parse(json, ebuf, sizeof ebuf);
  tap_ok(v != NULL, "features is valid JSON");
  if (v == NULL) {
    free(json);
    return;
  }
  caps = yajl_tree_get(v, p_caps, yajl_t_array);
  tap_ok(YAJL_IS_STRING(yajl_tree_get(v, p_max, yajl_t_string)) &&
             streq(YAJL_GET_STRING(yajl_tree_get(v, p_max, yajl_t_string)), "1.2.0"),
         "features: ociVersionMax 1.2.0");
  tap_ok(caps != NULL && caps->u.array.len == 41, "features: 41 capabilities");
  tap_ok(YAJL_IS_TRUE(yajl_tree_get(v, p_idmap, yajl_t_any)), "features: idmap enabled");
  tap_ok(yajl_tree_get(v, p_ann, yajl_t_string) != NULL, "features: run.agentrt.version");
  tap_ok(strstr(json, "\"rro\"") != NULL && strstr(json, "\"rdma\": false") != NULL,
         "features: mount options and cgroup");
  yajl_tree_free(v);
  free(json);
}

static void test_writer_rejects_bad_utf8(void)
{
  struct error err = {0};
  struct oci_config *c = NULL;
  char *out = NULL;

  if (parse("{\"ociVersion\":\"1.2.0\",\"root\":{\"path\":\"r\"},\"hostname\":\"h\"}", &c, &err) <
      0)
    return;
  free(c->hostname);
  c->hostname = xstrdup("bad\xc3");
  tap_ok(oci_config_to_json(c, &out, NULL, &err) < 0 &&
             strcmp(err.msg, "write config: a string is not valid UTF-8") == 0,
         "writer refuses invalid UTF-8 set by code: %s", err.msg);
  free(out);
  oci_config_free(c);
}

/* state-invalid-utf8: what yajl's own check let through is refused, in a value and in a key;
 * UTF-8 that is valid (the last code point, U+FFFD, controls, DEL, C1) is kept byte for byte. */
static void test_parser_strict_utf8(void)
{
  static const char *bad[] = {"\xc0\xaf",
                              "\xe0\x80\xaf",
                              "\xed\xa0\x80",
                              "\xed\xbf\xbf",
                              "\xf4\x90\x80\x80",
                              "\xf0\x8f\xbf\xbf",
                              "\xf8\x88\x80\x80\x80",
                              "\xff",
                              "a\xc3",
                              "\\udc00"};
  /* as written in the document, and as parsed */
  static const char *good[][2] = {{"\xf4\x8f\xbf\xbf", "\xf4\x8f\xbf\xbf"},
                                  {"\xef\xbf\xbd", "\xef\xbf\xbd"},
                                  {"\\u0001\\u001b[31m\x7f\xc2\x85", "\x01\x1b[31m\x7f\xc2\x85"},
                                  {"caf\xc3\xa9", "caf\xc3\xa9"},
                                  {"\xed\x9f\xbf", "\xed\x9f\xbf"},
                                  {"\xf0\x90\x80\x80", "\xf0\x90\x80\x80"}};
  struct error err = {0};
  struct oci_config *c = NULL;
  char doc[256];

  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    for (int key = 0; key < 2; key++) {
      snprintf(
          doc, sizeof doc,
          "{\"ociVersion\":\"1.2.0\",\"root\":{\"path\":\"r\"},\"annotations\":{\"%s\":\"%s\"}}",
          key ? bad[i] : "k", key ? "v" : bad[i]);
      c = NULL;
      tap_ok(parse(doc, &c, &err) < 0 && strstr(err.msg, "UTF") != NULL,
             "invalid UTF-8 %zu (%s) refused: %s", i, key ? "key" : "value", err.msg);
      oci_config_free(c);
    }
  }
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
    snprintf(doc, sizeof doc,
             "{\"ociVersion\":\"1.2.0\",\"root\":{\"path\":\"r\"},\"annotations\":{\"k\":\"%s\"}}",
             good[i][0]);
    c = NULL;
    tap_ok(parse(doc, &c, &err) == 0 && streq(oci_config_annotation(c, "k"), good[i][1]),
           "valid UTF-8 %zu kept: %s", i, err.msg);
    oci_config_free(c);
  }
}

int main(void)
{
  test_full_and_roundtrip();
  test_dup();
  test_struct_sizes();
  test_errors();
  test_truncated();
  test_bounds();
  test_duplicates_and_null();
  test_empty_ns_path();
  test_device_mode_type_bits();
  test_sched_fields();
  test_relative_mount_dest();
  test_intel_rdt_closid_alone();
  test_process_doc();
  test_resources_doc();
  test_names();
  test_default_spec();
  test_features();
  test_writer_rejects_bad_utf8();
  test_parser_strict_utf8();
  return tap_done();
}
