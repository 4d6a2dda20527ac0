/* test_profile.c - the agent profile: parsing, built-ins, every rule and
 * refusal on a Docker-like config, rendering, deep copy.  Annotations,
 * workspace modes and idempotence are in test_profile_annotations.c. */
#include <errno.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <yajl/yajl_tree.h>

#include "tests/unit/profile_helpers.h"

static void test_units(void)
{
  uint64_t v = 0;

  tap_ok(profile_parse_size("512m", &v) == 0 && v == 512ull << 20, "size 512m");
  tap_ok(profile_parse_size("2GiB", &v) == 0 && v == 2ull << 30, "size 2GiB");
  tap_ok(profile_parse_size("4096", &v) == 0 && v == 4096, "size in bytes");
  tap_ok(profile_parse_size("1x", &v) < 0 && profile_parse_size("", &v) < 0 &&
             profile_parse_size("-1m", &v) < 0 && profile_parse_size("99999999999999t", &v) < 0,
         "bad sizes refused");
  tap_ok(profile_parse_cpus("1.5", &v) == 0 && v == 1500, "cpus 1.5");
  tap_ok(profile_parse_cpus("2", &v) == 0 && v == 2000, "cpus 2");
  tap_ok(profile_parse_cpus("0", &v) < 0 && profile_parse_cpus("1.", &v) < 0 &&
             profile_parse_cpus("0.0001", &v) < 0 && profile_parse_cpus("a", &v) < 0,
         "bad cpus refused");
}

static void test_builtins(void)
{
  struct agent_profile *a = builtin("agent");
  struct agent_profile *o = builtin("oci");
  struct error err = {0};
  struct agent_profile *x = NULL;

  tap_ok(streq(a->name, "agent") && a->rootfs_readonly && a->no_new_privileges,
         "agent: read-only root, no_new_privileges");
  tap_ok(a->caps.ceiling == (capbit("CHOWN") | capbit("DAC_OVERRIDE") | capbit("FSETID") |
                             capbit("FOWNER") | capbit("SETGID") | capbit("SETUID") |
                             capbit("NET_BIND_SERVICE") | capbit("KILL") | capbit("SETPCAP")),
         "agent: capability ceiling is Docker's set minus NET_RAW MKNOD SETFCAP SYS_CHROOT "
         "AUDIT_WRITE");
  tap_ok(streq(a->workspace.path, "/workspace") && a->workspace.mode == PROFILE_WS_AUTO &&
             strv_contains(a->workspace.protected, ".envrc") &&
             strv_contains(a->workspace.protected, ".vscode/") &&
             strv_contains(a->workspace.protected, ".mcp.json") &&
             strv_contains(a->workspace.protected, ".bashrc"),
         "agent: workspace /workspace auto; .envrc, .vscode/, .mcp.json, .bashrc protected");
  tap_ok(a->egress.def == PROFILE_EGRESS_DENY && strv_len(a->egress.allow) == 0,
         "agent: egress deny, empty allow list");
  tap_ok(a->resources.memory.def == 2ull << 30 && a->resources.pids.def == 1024 &&
             a->resources.cpus.def == 2000,
         "agent: defaults 2g memory, 1024 pids, 2 cpus");
  tap_ok(streq(o->name, "oci") && !o->rootfs_readonly && !o->caps.enforce && !o->seccomp.enabled &&
             o->workspace.mode == PROFILE_WS_NONE && o->egress.def == PROFILE_EGRESS_OFF &&
             !o->annotations.apply,
         "oci: everything off");
  tap_ok(profile_load("agent", &x, &err) == 0 && streq(x->name, "agent"), "load agent by name");
  profile_free(x);
  x = NULL;
  tap_ok(profile_load("no-such-profile-xyz", &x, &err) < 0 && strstr(err.msg, "no-such"),
         "load unknown name fails: %s", err.msg);
  profile_free(a);
  profile_free(o);
}

static void test_strict_file(void)
{
  const char *dir = getenv("AGENTRT_SRCDIR");
  char *path = xfmt("%s/contrib/profiles/agent-strict.json", dir ? dir : ".");
  struct error err = {0};
  struct agent_profile *p = NULL;

  tap_ok(profile_load(path, &p, &err) == 0, "agent-strict.json parses (%s)", err.msg);
  if (p != NULL) {
    tap_ok(streq(p->name, "agent-strict") && p->resources.memory.max == 2ull << 30 &&
               p->egress.def == PROFILE_EGRESS_DENY && !p->annotations.loosen.has_memory &&
               p->annotations.loosen.egress_allow &&
               p->annotations.loosen.egress_allow[0] == NULL &&
               p->annotations.loosen.workspace_modes == 0,
           "agent-strict: small limits, egress deny, no loosening");
    tap_ok(p->no_new_privileges && p->rootfs_readonly && p->seccomp.enabled,
           "agent-strict: inherits the agent base");
  }
  profile_free(p);
  free(path);
}

struct bad_case {
  const char *json;
  const char *msg;
};

static void test_bad_profiles(void)
{
  static const struct bad_case cases[] = {
      {"{'capabilities': {'ceiling': ['CHOWN', 'KILL', 'FOO']}}",
       "profile.json: capabilities.ceiling[2]: unknown capability FOO"},
      {"{'workspace': {'sise': '1g'}}", "profile.json: workspace.sise: unknown field"},
      {"{'workspace': {'mode': 'fast'}}", "profile.json: workspace.mode: expected"},
      {"{'workspace': {'protected': ['../x']}}", "profile.json: workspace.protected[0]:"},
      {"{'workspace': {'path': 'ws'}}", "profile.json: workspace.path:"},
      {"{'seccomp': {'deny': ['mount', 'mountt']}}",
       "profile.json: seccomp.deny[1]: unknown syscall mountt"},
      {"{'seccomp': {'deny': ['clone']}}", "profile.json: seccomp.deny[0]: clone cannot"},
      {"{'seccomp': {'errno': 0}}", "profile.json: seccomp.errno:"},
      {"{'resources': {'memory': {'default': 'lots'}}}",
       "profile.json: resources.memory.default: expected a size"},
      {"{'resources': {'memory': {'default': '4g', 'max': '1g'}}}",
       "profile.json: resources.memory: default is above max"},
      {"{'resources': {'pids': {'max': -3}}}", "profile.json: resources.pids.max:"},
      {"{'scratch': [{'path': 'tmp', 'size': '1m'}]}", "profile.json: scratch[0].path:"},
      {"{'scratch': [{'path': '/tmp'}]}", "profile.json: scratch[0]: needs"},
      {"{'scratch': [{'path': '/tmp', 'size': '1m', 'mode': '999'}]}",
       "profile.json: scratch[0].mode:"},
      {"{'maskedPaths': ['/proc/kcore', 'proc/x']}", "profile.json: maskedPaths[1]:"},
      {"{'namespaces': {'required': ['pid', 'netwrk']}}",
       "profile.json: namespaces.required[1]: unknown namespace type netwrk"},
      {"{'capabilities': {'ceiling': ['CHOWN', 'NET_ADMIN']}}",
       "profile.json: capabilities.ceiling: NET_ADMIN is not allowed"},
      {"{'capabilities': {'trim': ['CHOWN']}}", "profile.json: capabilities.trim: CAP_CHOWN"},
      {"{'egress': {'default': 'maybe'}}", "profile.json: egress.default:"},
      /* the egress grammar of `create`, here at parse (`profile check`) */
      {"{'egress': {'allow': ['pypi.org', 'not a host!!']}}",
       "profile.json: egress.allow[1]: egress entry `not a host!!`: invalid character"},
      {"{'egress': {'allow': ['300.1.2.3/99']}}",
       "profile.json: egress.allow[0]: egress entry `300.1.2.3/99`: invalid prefix length"},
      {"{'egress': {'allow': ['300.1.2.3']}}",
       "profile.json: egress.allow[0]: egress entry `300.1.2.3`: invalid ipv4 address"},
      {"{'egress': {'allow': ['10.0.0.1/8']}}", "profile.json: egress.allow[0]: egress entry"},
      {"{'egress': {'allow': ['x.org:0']}}", "profile.json: egress.allow[0]: egress entry"},
      {"{'egress': {'dns': {'upstream': ['999.1.1.1']}}}",
       "profile.json: egress.dns.upstream[0]: invalid upstream resolver address `999.1.1.1`"},
      {"{'egress': {'dns': {'upstream': ['192.0.2.53', '127.0.0.1:99999']}}}",
       "profile.json: egress.dns.upstream[1]: invalid port in upstream resolver "
       "`127.0.0.1:99999`"},
      {"{'egress': {'dns': {'upstream': ['a', 'b', 'c', 'd', 'e']}}}",
       "profile.json: egress.dns.upstream[0]: invalid upstream resolver address `a`"},
      {"{'egress': {'dns': {'upstream': ['192.0.2.1', '192.0.2.2', '192.0.2.3', '192.0.2.4', "
       "'192.0.2.5']}}}",
       "profile.json: egress.dns.upstream: more than 4 resolvers"},
      {"{'ingress': {'allow': ['8080/tcp', '70000/tcp']}}",
       "profile.json: ingress.allow[1]: ingress entry `70000/tcp`: invalid port"},
      {"{'ingress': {'allow': ['9-1']}}", "profile.json: ingress.allow[0]: ingress entry `9-1`"},
      {"{'ingress': {'allow': ['http']}}", "profile.json: ingress.allow[0]: ingress entry"},
      {"{'ingress': {'default': 'open'}}", "profile.json: ingress.default: expected"},
      {"{'egress': {'dns': {'ttlMin': 100, 'ttlMax': 10}}}",
       "profile.json: egress.dns: ttlMin (100 s) is above ttlMax (10 s)"},
      {"{'egress': {'dns': {'ttlMax': '30d'}}}", "profile.json: egress.dns: ttlMin and ttlMax"},
      {"{'egress': {'dns': {'ttlMin': 'soon'}}}", "profile.json: egress.dns.ttlMin: expected"},
      {"{'annotations': {'allowLoosen': {'workspaceModes': ['none']}}}",
       "profile.json: annotations.allowLoosen.workspaceModes[0]:"},
      {"{'rootfs': {'readonly': 'yes'}}", "profile.json: rootfs.readonly: expected true or false"},
      {"{'extends': 'nothing'}", "profile.json: extends: unknown base profile"},
      {"{'name': 'x',", "profile.json: invalid JSON"},
      {"[1]", "profile.json: (document): expected an object"},
      {"{'nmae': 'x'}", "profile.json: nmae: unknown field"},
  };

  for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
    struct error err = {0};
    struct agent_profile *p = profile_str(cases[i].json, &err);

    tap_ok(p == NULL && strstr(err.msg, cases[i].msg) == err.msg, "bad profile %zu: %s", i,
           err.msg);
    profile_free(p);
  }
}

static void test_profile_overlay_and_show(void)
{
  struct error err = {0};
  struct agent_profile *p = profile_str(
      "{'name': 'mine', 'resources': {'memory': {'default': '1g'}}, 'egress': {'allow': "
      "['pypi.org']}}",
      &err);
  struct agent_profile *q = NULL;
  char *j1 = NULL, *j2 = NULL;
  size_t n = 0;

  tap_ok(p != NULL && p->resources.memory.def == 1ull << 30 && p->resources.pids.def == 1024 &&
             p->rootfs_readonly && strv_contains(p->egress.allow, "pypi.org"),
         "operator profile extends agent field by field (%s)", err.msg);
  tap_ok(p && profile_to_json(p, &j1, &n, &err) == 0 &&
             profile_parse(j1, n, "shown.json", &q, &err) == 0 &&
             profile_to_json(q, &j2, &n, &err) == 0 && streq(j1, j2),
         "profile show output parses back to the same profile (%s)", err.msg);
  tap_ok(p && q && p->seccomp.deny_vsock && q->seccomp.deny_vsock && j1 &&
             strstr(j1, "\"denyVsock\": true") != NULL,
         "profile show: seccomp.denyVsock inherited from agent, shown and read back");
  tap_ok(p && q && p->seccomp.deny_recverr && q->seccomp.deny_recverr && j1 &&
             strstr(j1, "\"denyRecvErr\": true") != NULL,
         "profile show: seccomp.denyRecvErr inherited from agent, shown and read back");
  free(j1);
  free(j2);
  profile_free(p);
  profile_free(q);
}

static void test_oci_changes_nothing(void)
{
  struct agent_profile *o = builtin("oci");
  struct oci_config *in = docker_cfg(), *out = NULL;
  char msg[ERROR_MSG_MAX];
  struct profile_result *r;
  char *a, *b;

  add_annotation(in, "run.agentrt.memory", "1g");
  add_annotation(in, "run.agentrt.bogus", "x");
  drop_ns(in, OCI_NS_NETWORK);
  add_mount(in, "/var/run/docker.sock", "bind", "/var/run/docker.sock", "rbind", NULL);
  r = run(in, o, &out, msg, sizeof msg);
  tap_ok(r != NULL, "oci: applies (%s)", msg);
  if (r == NULL)
    return;
  a = to_json(in);
  b = to_json(out);
  tap_ok(streq(a, b), "oci: final config identical to the engine's");
  tap_ok(r->n_changes == 0 && r->extra_seccomp == NULL && r->workspace.mode == PROFILE_WS_NONE &&
             r->egress.def == PROFILE_EGRESS_OFF,
         "oci: no changes, no directives (%zu changes)", r->n_changes);
  free(a);
  free(b);
  profile_result_free(r);
  oci_config_free(in);
  oci_config_free(out);
  profile_free(o);
}

static void check_agent_rules(const struct oci_config *out, const struct profile_result *r)
{
  const struct oci_caps *caps = &out->process->caps;
  const struct oci_resources *res = out->linux->resources;
  const struct oci_mount *m;
  uint64_t ceiling = capbit("CHOWN") | capbit("DAC_OVERRIDE") | capbit("FSETID") |
                     capbit("FOWNER") | capbit("SETGID") | capbit("SETUID") |
                     capbit("NET_BIND_SERVICE") | capbit("KILL") | capbit("SETPCAP");

  tap_ok(out->root_readonly && change_for(r, "root.readonly"), "rule: read-only root");
  tap_ok(caps->bounding == ceiling && caps->effective == ceiling && caps->permitted == ceiling,
         "rule: Docker's default capabilities cut to the ceiling");
  tap_ok(caps->inheritable == 0 && caps->ambient == 0, "rule: no inheritable/ambient caps");
  tap_ok(out->process->no_new_privileges, "rule: noNewPrivileges forced");
  tap_ok(oci_config_namespace(out, OCI_NS_CGROUP) != NULL &&
             change_for(r, "linux.namespaces[cgroup]"),
         "rule: missing cgroup namespace added");
  tap_ok(res->n_devices > 0 && !res->devices[0].allow && !res->devices[0].has_major &&
             (res->devices[0].type == 'a' || res->devices[0].type == 0),
         "rule: device rules start from deny-all");
  tap_ok(strv_contains(out->linux->masked_paths, "/proc/sched_debug") &&
             strv_contains(out->linux->masked_paths, "/sys/firmware") &&
             strv_contains(out->linux->masked_paths, "/sys/devices/virtual/powercap") &&
             strv_contains(out->linux->masked_paths, "/proc/kpagecgroup") &&
             strv_len(out->linux->masked_paths) == 15,
         "rule: masked paths are the union (no duplicates)");
  tap_ok(strv_contains(out->linux->readonly_paths, "/proc/sysrq-trigger") &&
             strv_contains(out->linux->readonly_paths, "/proc/irq") &&
             strv_len(out->linux->readonly_paths) == 5,
         "rule: read-only paths are the union");
  m = mount_at(out, "/tmp");
  tap_ok(m && streq(m->type, "tmpfs") && has_opt(m, "nosuid") && has_opt(m, "nodev") &&
             has_opt(m, "size=536870912") && has_opt(m, "mode=1777"),
         "rule: /tmp is a 512m nosuid,nodev tmpfs");
  m = mount_at(out, "/home/agent");
  tap_ok(m && streq(m->type, "tmpfs") && has_opt(m, "uid=1000") && has_opt(m, "mode=700"),
         "rule: the user's home is a tmpfs owned by the user");
  tap_ok(mount_at(out, "/var/tmp") != NULL, "rule: /var/tmp scratch");
  m = mount_at(out, "/dev/shm");
  tap_ok(m && streq(m->type, "bind") && has_opt(m, "nosuid") && !has_opt(m, "ro"),
         "rule: the engine's /dev/shm stays writable");
  m = mount_at(out, "/etc/hosts");
  tap_ok(m && has_opt(m, "nosuid") && has_opt(m, "nodev") && !has_opt(m, "ro"),
         "rule: /etc/hosts bind is nosuid,nodev, still writable");
  m = mount_at(out, "/data");
  tap_ok(m && has_opt(m, "ro") && !has_opt(m, "rw") && has_opt(m, "nosuid"),
         "rule: other host binds become read-only");
  m = mount_at(out, "/workspace");
  tap_ok(m && streq(m->type, "tmpfs") && has_opt(m, "size=1073741824") &&
             r->workspace.mode == PROFILE_WS_TMPFS && r->workspace.n_protected == 0,
         "rule: without a host dir the workspace is a 1g tmpfs");
  tap_ok(res->has_memory_limit && res->memory_limit == 2ll << 30 && res->has_pids_limit &&
             res->pids_limit == 1024 && res->cpu_quota == 200000 && res->cpu_period == 100000,
         "rule: resource defaults (2g, 1024 pids, 2 cpus)");
  tap_ok(r->egress.def == PROFILE_EGRESS_DENY && strv_len(r->egress.allow) == 0,
         "rule: egress deny-all carried to the runtime");
  tap_ok(out->linux->seccomp != NULL && out->linux->seccomp->n_syscalls == 1,
         "rule: the engine's own seccomp filter is kept as is");
}

static const struct oci_seccomp_syscall *rule_for(const struct oci_seccomp *s, const char *name,
                                                  size_t nth)
{
  for (size_t i = 0; i < s->n_syscalls; i++)
    if (strv_contains(s->syscalls[i].names, name) && nth-- == 0)
      return &s->syscalls[i];
  return NULL;
}

static void check_seccomp(const struct profile_result *r)
{
  const struct oci_seccomp *s = r->extra_seccomp;
  const struct oci_seccomp_syscall *sc;
  static const char *const denied[] = {"unshare",
                                       "setns",
                                       "mount",
                                       "umount2",
                                       "fsopen",
                                       "fsconfig",
                                       "fsmount",
                                       "fspick",
                                       "move_mount",
                                       "open_tree",
                                       "pivot_root",
                                       "mount_setattr",
                                       "bpf",
                                       "perf_event_open",
                                       "keyctl",
                                       "add_key",
                                       "request_key",
                                       "userfaultfd",
                                       "io_uring_setup",
                                       "io_uring_enter",
                                       "io_uring_register",
                                       "init_module",
                                       "finit_module",
                                       "delete_module",
                                       "kexec_load",
                                       "kexec_file_load",
                                       "open_by_handle_at",
                                       "clock_settime",
                                       "clock_adjtime",
                                       "settimeofday",
                                       "adjtimex",
                                       "reboot",
                                       "swapon",
                                       "swapoff",
                                       "acct",
                                       "syslog"};
  bool all = true;
  int clones = 0;

  if (!tap_ok(s != NULL && streq(s->default_action, "SCMP_ACT_ALLOW"),
              "seccomp: stacked deny-list filter with default allow"))
    return;
  for (size_t i = 0; i < ARRAY_SIZE(denied); i++) {
    sc = rule_for(s, denied[i], 0);
    if (sc == NULL || !streq(sc->action, "SCMP_ACT_ERRNO") || sc->errno_ret != EPERM ||
        sc->n_args != 0) {
      all = false;
      tap_ok(false, "seccomp: %s denied with EPERM", denied[i]);
    }
  }
  tap_ok(all, "seccomp: all %zu listed syscalls denied with EPERM", ARRAY_SIZE(denied));
  /* the names of the same operations on i386 (int 0x80 from a 64-bit process) */
  tap_ok(rule_for(s, "umount", 0) == rule_for(s, "umount2", 0) &&
             rule_for(s, "stime", 0) == rule_for(s, "settimeofday", 0) &&
             rule_for(s, "clock_settime64", 0) == rule_for(s, "clock_settime", 0) &&
             rule_for(s, "clock_adjtime64", 0) == rule_for(s, "clock_adjtime", 0) &&
             rule_for(s, "umount", 0) != NULL && rule_for(s, "umount", 1) == NULL,
         "seccomp: abi-i386-bypass: umount, stime, clock_settime64, clock_adjtime64 denied "
         "with the x86_64 names of their operations");
  for (size_t k = 0; (sc = rule_for(s, "clone", k)) != NULL; k++)
    clones += sc->n_args == 1 && streq(sc->args[0].op, "SCMP_CMP_MASKED_EQ") &&
              sc->args[0].index == 0 && sc->args[0].value == sc->args[0].value_two &&
              (sc->args[0].value & (CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWPID |
                                    CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP));
  tap_ok(clones == 7, "seccomp: clone with any CLONE_NEW* flag denied (%d masked rules)", clones);
  sc = rule_for(s, "clone3", 0);
  tap_ok(sc && sc->errno_ret == ENOSYS, "seccomp: clone3 -> ENOSYS");
  sc = rule_for(s, "ioctl", 0);
  tap_ok(sc && sc->n_args == 1 && sc->args[0].index == 1 && sc->args[0].value == 0xffffffffu &&
             sc->args[0].value_two == TIOCSTI,
         "seccomp: ioctl TIOCSTI denied");
  sc = rule_for(s, "socket", 0);
  tap_ok(sc && streq(sc->action, "SCMP_ACT_ERRNO") && sc->errno_ret == EAFNOSUPPORT &&
             sc->n_args == 1 && sc->args[0].index == 0 && sc->args[0].value == 0xffffffffu &&
             sc->args[0].value_two == AF_VSOCK && streq(sc->args[0].op, "SCMP_CMP_MASKED_EQ") &&
             sc->direct_only && rule_for(s, "socket", 1) == NULL,
         "seccomp: socket(AF_VSOCK) -> EAFNOSUPPORT, on the direct call only (denyVsock)");
  for (size_t i = 0; i < 2; i++) {
    static const uint64_t level_opt[2][2] = {{0 /* IPPROTO_IP */, 11 /* IP_RECVERR */},
                                             {41 /* IPPROTO_IPV6 */, 25 /* IPV6_RECVERR */}};
    sc = rule_for(s, "setsockopt", i);
    tap_ok(sc && streq(sc->action, "SCMP_ACT_ERRNO") && sc->has_errno_ret && sc->errno_ret == 0 &&
               sc->n_args == 2 && sc->args[0].index == 1 && sc->args[0].value == 0xffffffffu &&
               sc->args[0].value_two == level_opt[i][0] && sc->args[1].index == 2 &&
               sc->args[1].value == 0xffffffffu && sc->args[1].value_two == level_opt[i][1] &&
               streq(sc->args[1].op, "SCMP_CMP_MASKED_EQ") && sc->direct_only,
           "seccomp: setsockopt(%s) -> 0 without effect, direct calls only (denyRecvErr)",
           i == 0 ? "IP_RECVERR" : "IPV6_RECVERR");
  }
  tap_ok(rule_for(s, "setsockopt", 2) == NULL, "seccomp: no other setsockopt rule");
  tap_ok(s->architectures && s->architectures[0], "seccomp: architectures listed");
}

static void test_agent_on_docker(void)
{
  struct agent_profile *a = builtin("agent");
  struct oci_config *in = docker_cfg(), *out = NULL;
  char msg[ERROR_MSG_MAX];
  struct profile_result *r;
  char *before = NULL, *after = NULL, *text = NULL, *json = NULL;
  size_t n = 0;
  struct error err = {0};
  yajl_val tree = NULL;

  add_mount(in, "/data", "bind", "/srv/data", "rbind", "rw");
  before = to_json(in);
  r = run(in, a, &out, msg, sizeof msg);
  if (!tap_ok(r != NULL, "agent: Docker config accepted (%s)", msg))
    return;
  after = to_json(in);
  tap_ok(streq(before, after), "agent: the engine's config is not modified");
  check_agent_rules(out, r);
  check_seccomp(r);
  text = profile_changes_text(r);
  tap_ok(text && strstr(text, "profile agent:") && strstr(text, "root.readonly: false -> true"),
         "explain text lists changes");
  tap_ok(profile_changes_json(r, &json, &n, &err) == 0 &&
             (tree = yajl_tree_parse(json, NULL, 0)) != NULL,
         "explain json is valid JSON");
  if (tree) {
    const char *path[] = {"changes", NULL};
    yajl_val ch = yajl_tree_get(tree, path, yajl_t_array);
    tap_ok(ch && ch->u.array.len == r->n_changes, "explain json has every change");
    yajl_tree_free(tree);
  }
  free(text);
  free(json);
  free(before);
  free(after);
  profile_result_free(r);
  oci_config_free(in);
  oci_config_free(out);
  profile_free(a);
}

static void test_refusals(void)
{
  struct agent_profile *a = builtin("agent");
  struct oci_config *c;

  c = docker_cfg();
  c->process->caps.bounding |= capbit("SYS_ADMIN");
  expect_refusal(c, a, "CAP_SYS_ADMIN is above the profile's capability ceiling",
                 "cap-add SYS_ADMIN");
  oci_config_free(c);
  c = docker_cfg();
  c->process->caps.effective |= capbit("SYS_PTRACE") | capbit("NET_ADMIN");
  expect_refusal(c, a, "CAP_NET_ADMIN, CAP_SYS_PTRACE are above", "two capabilities named");
  oci_config_free(c);
  c = docker_cfg();
  c->process->caps.bounding = c->process->caps.effective = ~UINT64_C(0) >> 23;
  expect_refusal(c, a, "CAP_DAC_READ_SEARCH", "--privileged capability set");
  oci_config_free(c);
  c = docker_cfg();
  drop_ns(c, OCI_NS_NETWORK);
  expect_refusal(c, a, "agent profile: joining the host network namespace is not allowed",
                 "--network host");
  oci_config_free(c);
  c = docker_cfg();
  drop_ns(c, OCI_NS_PID);
  expect_refusal(c, a, "joining the host pid namespace is not allowed", "--pid host");
  oci_config_free(c);
  c = docker_cfg();
  drop_ns(c, OCI_NS_IPC);
  expect_refusal(c, a, "joining the host ipc namespace is not allowed", "--ipc host");
  oci_config_free(c);
  c = docker_cfg();
  set_ns_path(c, OCI_NS_NETWORK, "/proc/1/ns/net");
  expect_refusal(c, a, "joining the host network namespace (`/proc/1/ns/net`)", "netns of pid 1");
  oci_config_free(c);
  c = docker_cfg();
  set_ns_path(c, OCI_NS_MOUNT, "/proc/4242/ns/mnt");
  expect_refusal(c, a, "joining an existing mount namespace", "mount namespace by path");
  oci_config_free(c);
  c = docker_cfg();
  c->linux->devices = xmalloc0(sizeof *c->linux->devices);
  c->linux->n_devices = 1;
  c->linux->devices[0] = (struct oci_device){.path = xstrdup("/dev/sda"), .type = 'b', .major = 8};
  expect_refusal(c, a, "linux.devices[0]: host device `/dev/sda` (b 8:0) is not allowed",
                 "host block device");
  c->linux->devices[0].type = 'c';
  free(c->linux->devices[0].path);
  c->linux->devices[0].path = xstrdup("/dev/null");
  expect_refusal(c, a, "host device `/dev/null` (c 8:0)", "/dev/null with a disk's numbers");
  oci_config_free(c);
  c = docker_cfg();
  c->linux->resources->devices[1].type = 'a';
  c->linux->resources->devices[1].has_major = false;
  c->linux->resources->devices[1].has_minor = false;
  expect_refusal(c, a, "linux.resources.devices[1]: `allow a *:* rwm` gives access to every",
                 "--privileged device rule");
  oci_config_free(c);

  static const char *const socks[][2] = {
      {"/var/run/docker.sock", "engine socket `/var/run/docker.sock`"},
      {"/run/containerd/containerd.sock", "engine socket"},
      {"/run/user/1000/podman/podman.sock", "engine socket"},
      {"/", "would expose the engine socket `/run/docker.sock`"},
      {"/var/run", "would expose the engine socket"},
      {"/run/containerd/", "would expose the engine socket `/run/containerd/containerd.sock`"},
      {"/run//crio/./", "would expose the engine socket"},
  };
  for (size_t i = 0; i < ARRAY_SIZE(socks); i++) {
    c = docker_cfg();
    add_mount(c, "/x", "bind", socks[i][0], "rbind", NULL);
    expect_refusal(c, a, socks[i][1], socks[i][0]);
    oci_config_free(c);
  }
  c = docker_cfg();
  c->linux->resources->has_memory_limit = true;
  c->linux->resources->memory_limit = 32ll << 30;
  expect_refusal(c, a, "linux.resources.memory.limit 32g is above the profile's ceiling 16g",
                 "memory above ceiling");
  oci_config_free(c);
  c = docker_cfg();
  c->linux->resources->has_pids_limit = true;
  c->linux->resources->pids_limit = 100000;
  expect_refusal(c, a, "linux.resources.pids.limit 100000 is above", "pids above ceiling");
  oci_config_free(c);
  c = docker_cfg();
  c->linux->resources->has_cpu_quota = true;
  c->linux->resources->cpu_quota = 3200000;
  expect_refusal(c, a, "32 is above the profile's ceiling 16", "cpus above ceiling");
  oci_config_free(c);
  /* quota x 1000 is 48384000 modulo 2^64: under the ceiling unless computed wider */
  c = docker_cfg();
  c->linux->resources->has_cpu_quota = true;
  c->linux->resources->cpu_quota = 18446744073709600;
  c->linux->resources->has_cpu_period = true;
  c->linux->resources->cpu_period = 100000;
  expect_refusal(c, a, "is above the profile's ceiling 16", "cpus whose quota x 1000 wraps around");
  oci_config_free(c);
  profile_free(a);
}

static void test_accepted_variants(void)
{
  struct agent_profile *a = builtin("agent");
  struct oci_config *c = docker_cfg(), *out = NULL;
  struct profile_result *r;
  char msg[ERROR_MSG_MAX];
  const struct oci_resources *res;

  set_ns_path(c, OCI_NS_NETWORK, "/var/run/netns/cni-1234");
  add_mount(c, "/x", "bind", "/home/u/docker.socket.txt", "rbind", NULL);
  add_mount(c, "/dev/shm2", "bind", "/run/containerd/io.containerd.grpc.v1.cri/sandboxes/a/shm",
            "rbind", NULL);
  c->linux->resources->devices =
      xrealloc(c->linux->resources->devices, 6 * sizeof *c->linux->resources->devices);
  c->linux->resources->devices[5] = (struct oci_device_cgroup){.allow = true,
                                                               .type = 'c',
                                                               .has_major = true,
                                                               .has_minor = true,
                                                               .major = 10,
                                                               .minor = 200,
                                                               .access = xstrdup("rwm")};
  c->linux->resources->n_devices = 6;
  c->linux->resources->has_memory_limit = true;
  c->linux->resources->memory_limit = 1ll << 30;
  r = run(c, a, &out, msg, sizeof msg);
  if (tap_ok(r != NULL, "pod netns by path, shm under /run/containerd accepted (%s)", msg)) {
    tap_ok(r->check_joined_ns &&
               change_for(r, "linux.namespaces[network]")->kind == PROFILE_CHANGE_RUNTIME,
           "joined netns recorded, runtime told to check it");
    res = out->linux->resources;
    tap_ok(res->n_devices == 5 && change_for(r, "linux.resources.devices"),
           "device rule c 10:200 rwm removed and recorded");
    tap_ok(res->memory_limit == 1ll << 30 && !change_for(r, "linux.resources.memory.limit"),
           "engine memory below the ceiling kept, no change recorded");
  }
  profile_result_free(r);
  oci_config_free(c);
  oci_config_free(out);
  profile_free(a);
}

static void test_exec_process(void)
{
  struct agent_profile *a = builtin("agent");
  struct oci_config *c = docker_cfg();
  struct error err = {0};
  struct oci_process *p = c->process;

  p->caps.has_inheritable = true;
  p->caps.inheritable = capbit("CHOWN");
  tap_ok(profile_apply_process(p, a, &err) == 0 && p->caps.inheritable == 0 &&
             !(p->caps.bounding & capbit("NET_RAW")) && p->no_new_privileges,
         "exec process: trimmed, inheritable cleared, nnp (%s)", err.msg);
  p->caps.effective |= capbit("SYS_ADMIN");
  tap_ok(profile_apply_process(p, a, &err) < 0 && strstr(err.msg, "CAP_SYS_ADMIN"),
         "exec process with SYS_ADMIN refused");
  oci_config_free(c);
  profile_free(a);
}

static const char *env_get(char **env, const char *name)
{
  size_t n = strlen(name);

  for (size_t i = 0; env != NULL && env[i] != NULL; i++)
    if (strncmp(env[i], name, n) == 0 && env[i][n] == '=')
      return env[i] + n + 1;
  return NULL;
}

/* ptrace: allowed by `agent` (with process_vm_*), denied by `agent-strict`, and explain says so. */
static void test_ptrace(void)
{
  struct agent_profile *a = builtin("agent"), *s = builtin("agent-strict");
  struct oci_config *in = docker_cfg(), *out = NULL, *out2 = NULL;
  char msg[ERROR_MSG_MAX];
  struct profile_result *r = run(in, a, &out, msg, sizeof msg), *r2;
  const struct profile_change *ch;

  tap_ok(!profile_denies_ptrace(a) && profile_denies_ptrace(s),
         "ptrace: agent allows it, agent-strict denies it");
  if (r != NULL) {
    tap_ok(rule_for(r->extra_seccomp, "ptrace", 0) == NULL &&
               rule_for(r->extra_seccomp, "process_vm_readv", 0) == NULL &&
               rule_for(r->extra_seccomp, "process_vm_writev", 0) == NULL,
           "agent: no rule for ptrace, process_vm_readv, process_vm_writev");
    ch = change_for(r, "ptrace");
    tap_ok(ch && streq(ch->new_value, "within the container") &&
               strstr(ch->reason, "CAP_SYS_PTRACE"),
           "agent: explain says ptrace is allowed within the container");
    ch = change_for(r, "linux.seccomp (stacked)");
    tap_ok(ch && strstr(ch->reason, "EPERM") && strstr(ch->reason, " bpf ") &&
               strstr(ch->reason, "io_uring_setup") && !strstr(ch->reason, "ptrace"),
           "agent: explain names the refused syscalls and the errno (%s)", ch ? ch->reason : "-");
  }
  r2 = run(in, s, &out2, msg, sizeof msg);
  if (tap_ok(r2 != NULL, "agent-strict applies (%s)", msg)) {
    const struct oci_seccomp_syscall *sc = rule_for(r2->extra_seccomp, "ptrace", 0);
    tap_ok(sc && sc->errno_ret == EPERM && rule_for(r2->extra_seccomp, "process_vm_readv", 0),
           "agent-strict: ptrace and process_vm_readv denied with EPERM");
    ch = change_for(r2, "ptrace");
    tap_ok(ch && streq(ch->new_value, "denied"), "agent-strict: explain says ptrace is denied");
  }
  profile_result_free(r);
  profile_result_free(r2);
  oci_config_free(in);
  oci_config_free(out);
  oci_config_free(out2);
  profile_free(a);
  profile_free(s);
}

/* env.defaults / pathAppend: set where the engine set nothing, under the writable home. */
static void test_env_defaults(void)
{
  struct agent_profile *a = builtin("agent"), *o = builtin("oci");
  struct oci_config *in = docker_cfg(), *out = NULL, *again = NULL, *oout = NULL;
  char msg[ERROR_MSG_MAX];
  struct profile_result *r, *r2, *ro;
  const struct profile_change *ch;
  bool config_change = false;
  char **env;

  strv_push(&in->process->env, "GOPATH=/srv/go");
  r = run(in, a, &out, msg, sizeof msg);
  if (!tap_ok(r != NULL, "env: agent applies (%s)", msg))
    return;
  env = out->process->env;
  tap_ok(streq(env_get(env, "NPM_CONFIG_PREFIX"), "/home/agent/.npm-global") &&
             streq(env_get(env, "PYTHONUSERBASE"), "/home/agent/.local") &&
             streq(env_get(env, "GOCACHE"), "/home/agent/.cache/go-build") &&
             streq(env_get(env, "CARGO_HOME"), "/home/agent/.cargo"),
         "env: npm prefix, pip user base, go cache and cargo home under $HOME");
  tap_ok(streq(env_get(env, "GOPATH"), "/srv/go"), "env: the engine's GOPATH is kept");
  tap_ok(streq(env_get(env, "GIT_CONFIG_COUNT"), "1") &&
             streq(env_get(env, "GIT_CONFIG_KEY_0"), "safe.directory") &&
             streq(env_get(env, "GIT_CONFIG_VALUE_0"), "*"),
         "env: git trusts the workspace another uid owns (git-dubious-ownership)");
  {
    struct oci_config *gin = docker_cfg(), *gout = NULL;
    struct profile_result *gr;
    strv_push(&gin->process->env, "GIT_CONFIG_COUNT=0");
    gr = run(gin, a, &gout, msg, sizeof msg);
    tap_ok(gr && streq(env_get(gout->process->env, "GIT_CONFIG_COUNT"), "0") &&
               env_get(gout->process->env, "GIT_CONFIG_KEY_0") == NULL &&
               env_get(gout->process->env, "GIT_CONFIG_VALUE_0") == NULL,
           "env: an engine's own GIT_CONFIG_COUNT keeps the git defaults out");
    profile_result_free(gr);
    oci_config_free(gin);
    oci_config_free(gout);
    gin = docker_cfg();
    gout = NULL;
    strv_push(&gin->process->env, "GIT_CONFIG_KEY_0=core.pager");
    gr = run(gin, a, &gout, msg, sizeof msg);
    tap_ok(gr && env_get(gout->process->env, "GIT_CONFIG_COUNT") == NULL &&
               env_get(gout->process->env, "GIT_CONFIG_VALUE_0") == NULL,
           "env: a stray GIT_CONFIG_KEY_0 of the engine's is not counted in");
    profile_result_free(gr);
    oci_config_free(gin);
    oci_config_free(gout);
  }
  tap_ok(env_get(env, "PIP_USER") == NULL, "env: no PIP_USER (it breaks pip in a virtualenv)");
  tap_ok(streq(env_get(env, "PATH"), "/usr/bin:/bin:/home/agent/.local/bin:/home/agent/.npm-global/"
                                     "bin:/home/agent/go/bin:/home/agent/.cargo/bin"),
         "env: PATH gets the bin dirs appended (%s)", env_get(env, "PATH"));
  ch = change_for(r, "process.env[NPM_CONFIG_PREFIX]");
  tap_ok(ch && ch->kind == PROFILE_CHANGE_CONFIG && ch->old_value == NULL,
         "env: each default is an explained change");
  tap_ok(change_for(r, "process.env[GOPATH]") == NULL, "env: no change recorded for GOPATH");
  ch = change_for(r, "writes");
  tap_ok(ch && strstr(ch->reason, "read-only") && strstr(ch->reason, "/tmp 512m") &&
             strstr(ch->reason, "/home/agent (home) 256m") &&
             strstr(ch->reason, "go to /home/agent"),
         "writes: one line says where writes go (%s)", ch ? ch->reason : "-");
  /* idempotent */
  r2 = run(out, a, &again, msg, sizeof msg);
  for (size_t i = 0; r2 && i < r2->n_changes; i++)
    if (str_has_prefix(r2->changes[i].field, "process.env"))
      config_change = true;
  tap_ok(r2 && !config_change && strv_len(again->process->env) == strv_len(env),
         "env: applying to its own output adds nothing");
  /* no writable home: nothing added */
  {
    struct oci_config *nohome = docker_cfg(), *nout = NULL;
    struct profile_result *rn;
    for (size_t i = 0; nohome->process->env[i]; i++)
      if (str_has_prefix(nohome->process->env[i], "HOME="))
        nohome->process->env[i][5] = 'x'; /* HOME=xhome/agent: not absolute */
    rn = run(nohome, a, &nout, msg, sizeof msg);
    tap_ok(rn && env_get(nout->process->env, "NPM_CONFIG_PREFIX") == NULL &&
               streq(env_get(nout->process->env, "PATH"), "/usr/bin:/bin"),
           "env: without a usable home nothing is added");
    profile_result_free(rn);
    oci_config_free(nohome);
    oci_config_free(nout);
  }
  /* HOME=/ of a uid other than 0 (no passwd entry): a home of its own, a tmpfs there */
  {
    struct oci_config *slash = docker_cfg(), *sout = NULL;
    struct profile_result *rs;
    bool mounted = false;
    for (size_t i = 0; slash->process->env[i]; i++)
      if (str_has_prefix(slash->process->env[i], "HOME=")) {
        free(slash->process->env[i]);
        slash->process->env[i] = xstrdup("HOME=/");
      }
    slash->process->user.uid = 4242;
    rs = run(slash, a, &sout, msg, sizeof msg);
    for (size_t i = 0; sout && i < sout->n_mounts; i++)
      mounted |= streq(sout->mounts[i].destination, "/home/agentrt-4242") &&
                 streq(sout->mounts[i].type, "tmpfs") &&
                 strv_contains(sout->mounts[i].options, "uid=4242");
    tap_ok(rs && streq(env_get(sout->process->env, "HOME"), "/home/agentrt-4242") && mounted &&
               streq(env_get(sout->process->env, "GOCACHE"), "/home/agentrt-4242/.cache/go-build"),
           "env: HOME=/ of uid 4242 becomes a tmpfs home of its own (%s)", msg);
    ch = rs ? change_for(rs, "process.env[HOME]") : NULL;
    tap_ok(ch && streq(ch->old_value, "/") && streq(ch->new_value, "/home/agentrt-4242"),
           "env: the new HOME is an explained change");
    profile_result_free(rs);
    oci_config_free(sout);
    sout = NULL;
    slash->process->user.uid = 0;
    rs = run(slash, a, &sout, msg, sizeof msg);
    tap_ok(rs && streq(env_get(sout->process->env, "HOME"), "/"), "env: root's HOME=/ is kept");
    profile_result_free(rs);
    oci_config_free(sout);
    oci_config_free(slash);
  }
  ro = run(in, o, &oout, msg, sizeof msg);
  tap_ok(ro && env_get(oout->process->env, "NPM_CONFIG_PREFIX") == NULL,
         "env: the oci profile adds nothing");
  /* exec --process gets the same defaults */
  {
    struct oci_config *c = docker_cfg();
    struct error err = {0};
    tap_ok(profile_apply_process(c->process, a, &err) == 0 &&
               streq(env_get(c->process->env, "GOPATH"), "/home/agent/go"),
           "env: exec --process gets the defaults (%s)", err.msg);
    oci_config_free(c);
  }
  profile_result_free(r);
  profile_result_free(r2);
  profile_result_free(ro);
  oci_config_free(in);
  oci_config_free(out);
  oci_config_free(again);
  oci_config_free(oout);
  profile_free(a);
  profile_free(o);
}

static void test_env_validation(void)
{
  struct error err = {0};
  struct agent_profile *p;

  p = profile_str("{'env': {'defaults': ['1X=y']}}", &err);
  tap_ok(p == NULL && strstr(err.msg, "env.defaults[0]"), "env: bad name refused (%s)", err.msg);
  profile_free(p);
  p = profile_str("{'env': {'defaults': ['PATH=/x']}}", &err);
  tap_ok(p == NULL && strstr(err.msg, "pathAppend"), "env: PATH in defaults refused (%s)", err.msg);
  profile_free(p);
  p = profile_str("{'env': {'pathAppend': ['rel/bin']}}", &err);
  tap_ok(p == NULL && strstr(err.msg, "env.pathAppend[0]"), "env: relative dir refused (%s)",
         err.msg);
  profile_free(p);
  p = profile_str("{'env': {'defaults': ['A=$HOME/a'], 'pathAppend': ['$HOME/bin', '/opt/bin']}}",
                  &err);
  tap_ok(p != NULL, "env: a valid env section parses (%s)", err.msg);
  profile_free(p);
}

/* The secrets section: parsed, shown without values, selected by annotation. */
static void test_secrets(void)
{
  static const char doc[] =
      "{'egress': {'allow': ['a.test']}, 'secrets': ["
      " {'name': 'API', 'file': '/s/api', 'hosts': ['a.test', '*.b.test'], 'format': 'Bearer %s'},"
      " {'name': 'GH', 'file': '/s/gh', 'hosts': ['gh.test'], 'header': 'X-Key'}]}";
  struct error err = {0};
  struct agent_profile *p = profile_str(doc, &err);
  struct oci_config *c, *out = NULL;
  struct profile_result *r;
  char msg[ERROR_MSG_MAX];
  char **names;
  char *json = NULL;
  size_t len = 0;

  if (!tap_ok(p != NULL, "secrets: a valid section parses (%s)", err.msg))
    return;
  names = profile_secret_names(p);
  tap_ok(names[0] && streq(names[0], "API") && names[1] && streq(names[1], "GH") && !names[2],
         "secrets: profile_secret_names lists them in order");
  strv_free(names);
  tap_ok(streq(profile_secret_find(p, "API")->header, "Authorization") &&
             streq(profile_secret_find(p, "GH")->header, "X-Key") &&
             profile_secret_find(p, "NONE") == NULL,
         "secrets: header defaults to Authorization");
  {
    const struct profile_secret *s = profile_secret_find(p, "API");
    tap_ok(profile_secret_host_match(s, "a.test") && profile_secret_host_match(s, "A.TEST.") &&
               profile_secret_host_match(s, "x.b.test") &&
               profile_secret_host_match(s, "y.x.b.test"),
           "secrets: exact names, any case, a final dot, and below a *. entry match");
    tap_ok(!profile_secret_host_match(s, "b.test") && !profile_secret_host_match(s, "xa.test") &&
               !profile_secret_host_match(s, "a.test.evil") &&
               !profile_secret_host_match(s, "xb.test") && !profile_secret_host_match(s, "") &&
               !profile_secret_host_match(s, NULL) && !profile_secret_host_match(s, "."),
           "secrets: the *. base, suffix look-alikes and empty names do not");
  }
  tap_ok(profile_to_json(p, &json, &len, &err) == 0 && strstr(json, "\"Bearer %s\"") &&
             strstr(json, "\"/s/gh\""),
         "secrets: profile show lists them");
  free(json);
  c = docker_cfg();
  r = run(c, p, &out, msg, sizeof msg);
  oci_config_free(out);
  tap_ok(r && r->n_secrets == 2 && r->secrets[0].placeholder == NULL && change_for(r, "secrets"),
         "secrets: all of them by default, recorded; no placeholder from profile/");
  profile_result_free(r);
  add_annotation(c, "run.agentrt.secrets", "GH");
  r = run(c, p, &out, msg, sizeof msg);
  oci_config_free(out);
  tap_ok(r && r->n_secrets == 1 && streq(r->secrets[0].name, "GH"),
         "secrets: run.agentrt.secrets narrows the list");
  profile_result_free(r);
  oci_config_free(c);
  c = docker_cfg();
  add_annotation(c, "run.agentrt.secrets", "/etc/shadow");
  expect_refusal(c, p, "the profile has no secret `/etc/shadow`", "secrets: a path is no name");
  oci_config_free(c);
  profile_free(p);
  p = profile_str("{'secrets': [{'name': 'A', 'file': '/s', 'hosts': ['*.x']}]}", &err);
  tap_ok(p != NULL, "secrets: a one-label wildcard parses (%s)", err.msg);
  profile_free(p);
  p = profile_str("{'egress': {'default': 'off'}, 'secrets': [{'name': 'A', 'file': '/s', "
                  "'hosts': ['x.test']}]}",
                  &err);
  tap_ok(p == NULL && strstr(err.msg, "secrets[0]: secrets need an egress policy"),
         "secrets: refused without an egress policy (%s)", err.msg);
  profile_free(p);
}

static void test_dup(void)
{
  const char *dir = getenv("AGENTRT_SRCDIR");
  char *path = xfmt("%s/tests/data/config-full.json", dir ? dir : ".");
  FILE *f = fopen(path, "re");
  char buf[65536];
  size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
  struct error err = {0};
  struct oci_config *c = NULL, *d;
  char *a, *b;

  if (f)
    fclose(f);
  if (!tap_ok(n > 0 && oci_config_parse(buf, n, path, &c, &err) == 0, "fixture %s (%s)", path,
              err.msg)) {
    free(path);
    return;
  }
  d = oci_config_dup(c);
  a = to_json(c);
  b = to_json(d);
  tap_ok(streq(a, b), "oci_config_dup: the copy serialises identically");
  free(a);
  free(b);
  oci_config_free(c);
  oci_config_free(d);
  free(path);
}

/* sandbox.home and the home's deny list (profile/home.c) */
static void test_home_deny(void)
{
  static const char *const denied[] = {
      ".ssh",
      ".ssh/id_rsa",
      "./.ssh//id_ed25519",
      ".SSH/id_rsa",
      ".Ssh",
      ".aws/credentials",
      ".config/gcloud/application_default_credentials.json",
      ".config/GCLOUD",
      ".kube/config",
      ".docker/config.json",
      ".netrc",
      ".git-credentials",
      ".config/git/credentials",
      ".gnupg",
      ".mozilla/firefox/x.default/logins.json",
      ".config/google-chrome/Default",
      ".config/chromium",
      ".bash_history",
      ".zsh_history",
      ".python_history",
      ".node_repl_history",
      ".password-store",
      ".npmrc",
      ".config/foo/id_rsa.bak",
      ".config/foo/credentials",
      ".config/tool/Credentials.json",
      ".local/share/fish/fish_history",
      "projects/x/.env",
      ".config/x/auth.json",
      ".local/share/agentrt/roots",
      NULL,
  };
  static const char *const allowed[] = {
      ".gitconfig",  ".config/git",       ".config/git/config", ".config/git/ignore", ".config",
      ".sshd_notes", ".config/gcloudish", ".editorconfig",      "projects/x/README",  ".awsome",
      NULL,
  };
  char *extra[] = {".secret-tool", NULL};
  struct agent_profile *p = NULL;
  struct error err = {0};
  char *n;

  for (size_t i = 0; denied[i] != NULL; i++)
    tap_ok(profile_home_denied(denied[i], NULL) != NULL, "home: `%s` is denied", denied[i]);
  for (size_t i = 0; allowed[i] != NULL; i++)
    tap_ok(profile_home_denied(allowed[i], NULL) == NULL, "home: `%s` is not denied (%s)",
           allowed[i], profile_home_denied(allowed[i], NULL));
  tap_ok(profile_home_denied(".secret-tool/x", extra) != NULL &&
             profile_home_denied(".secret-tool/x", NULL) == NULL,
         "home: sandbox.homeDeny adds to the list");
  tap_ok(profile_home_denied("../.ssh", NULL) != NULL && profile_home_denied("/x", NULL) != NULL &&
             profile_home_denied("", NULL) != NULL,
         "home: `..`, absolute and empty paths are never allowed");
  n = profile_home_normalize("./a//b/./c/");
  tap_ok(n != NULL && streq(n, "a/b/c"), "home: normalise ./a//b/./c/ -> %s", n ? n : "(null)");
  free(n);
  tap_ok(profile_home_normalize("a/../b") == NULL && profile_home_normalize("/a") == NULL &&
             profile_home_normalize(".") == NULL,
         "home: normalise refuses .., absolute paths and nothing");
  /* the built-in list is compared as it is written (home.c): each entry
   * must be its own normal form */
  {
    size_t bad = 0, i;
    for (i = 0; profile_home_deny_builtin[i] != NULL; i++) {
      cleanup_free char *e = profile_home_normalize(profile_home_deny_builtin[i]);
      if (e == NULL || !streq(e, profile_home_deny_builtin[i]))
        bad++;
    }
    tap_ok(bad == 0 && i > 0, "home: the %zu built-in deny entries are in normal form (%zu not)", i,
           bad);
  }
  /* the agent profile's list, and a profile listing a denied path is refused */
  tap_ok(profile_builtin("agent", &p, &err) == 0 && p->sandbox.home != NULL &&
             strv_contains(p->sandbox.home, ".gitconfig") &&
             !strv_contains(p->sandbox.home, ".npmrc"),
         "home: agent lists .gitconfig and not .npmrc");
  for (size_t i = 0; p && p->sandbox.home && p->sandbox.home[i]; i++)
    tap_ok(profile_home_denied(p->sandbox.home[i], NULL) == NULL, "home: agent's `%s` is allowed",
           p->sandbox.home[i]);
  profile_free(p);
  p = NULL;
  {
    const char *j = "{\"sandbox\": {\"home\": [\".gitconfig\", \".ssh/config\"]}}";
    error_clear(&err);
    tap_ok(profile_parse(j, strlen(j), "t.json", &p, &err) < 0 &&
               strstr(err.msg, "sandbox.home[1]") != NULL && strstr(err.msg, "deny list"),
           "home: a profile listing .ssh/config is refused (%s)", err.msg);
    profile_free(p);
    p = NULL;
    j = "{\"sandbox\": {\"home\": [\"a/../.ssh\"]}}";
    error_clear(&err);
    tap_ok(profile_parse(j, strlen(j), "t.json", &p, &err) < 0 && strstr(err.msg, "without .."),
           "home: a profile entry with .. is refused (%s)", err.msg);
    profile_free(p);
  }
}

int main(void)
{
  test_home_deny();
  test_units();
  test_builtins();
  test_strict_file();
  test_bad_profiles();
  test_profile_overlay_and_show();
  test_oci_changes_nothing();
  test_agent_on_docker();
  test_refusals();
  test_accepted_variants();
  test_exec_process();
  test_ptrace();
  test_env_defaults();
  test_env_validation();
  test_secrets();
  test_dup();
  return tap_done();
}
