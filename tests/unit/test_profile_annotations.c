/* test_profile_annotations.c - run.agentrt.* annotations (tightening, loosening
 * within and beyond bounds), workspace modes and protected paths, and
 * idempotence (applying a profile to its own output changes nothing). */
#include "tests/unit/profile_helpers.h"

static struct agent_profile *strict_profile(void)
{
  const char *dir = getenv("AGENTRT_SRCDIR");
  char *path = xfmt("%s/contrib/profiles/agent-strict.json", dir ? dir : ".");
  struct error err = {0};
  struct agent_profile *p = NULL;

  if (profile_load(path, &p, &err) < 0) {
    fprintf(stderr, "%s\n", err.msg);
    abort();
  }
  free(path);
  return p;
}

/* Apply with one annotation; returns the result (NULL = refused, msg set). */
static struct profile_result *with_annotation(const struct agent_profile *p, const char *k,
                                              const char *v, struct oci_config **out, char *msg,
                                              size_t msgsz)
{
  struct oci_config *c = docker_cfg();
  struct profile_result *r;

  add_annotation(c, k, v);
  r = run(c, p, out, msg, msgsz);
  oci_config_free(c);
  return r;
}

static void accept_case(const struct agent_profile *p, const char *k, const char *v,
                        bool (*check)(const struct oci_config *, const struct profile_result *),
                        const char *name)
{
  char msg[ERROR_MSG_MAX];
  struct oci_config *out = NULL;
  struct profile_result *r = with_annotation(p, k, v, &out, msg, sizeof msg);

  tap_ok(r != NULL && check(out, r), "annotation %s=%s: %s (%s)", k, v, name, msg);
  profile_result_free(r);
  oci_config_free(out);
}

static void refuse_case(const struct agent_profile *p, const char *k, const char *v,
                        const char *needle)
{
  char msg[ERROR_MSG_MAX];
  struct oci_config *out = NULL;
  struct profile_result *r = with_annotation(p, k, v, &out, msg, sizeof msg);

  tap_ok(r == NULL && strstr(msg, needle) != NULL && strstr(msg, k) != NULL,
         "annotation %s=%s refused, naming it (%s)", k, v, r ? "accepted" : msg);
  profile_result_free(r);
  oci_config_free(out);
}

static bool mem_512m(const struct oci_config *c, const struct profile_result *r)
{
  const struct profile_change *ch = change_for(r, "linux.resources.memory.limit");
  return c->linux->resources->memory_limit == 512ll << 20 && ch &&
         strstr(ch->reason, "run.agentrt.memory");
}
static bool mem_4g(const struct oci_config *c, const struct profile_result *r)
{
  return c->linux->resources->memory_limit == 4ll << 30;
}
static bool mem_256m(const struct oci_config *c, const struct profile_result *r)
{
  return c->linux->resources->memory_limit == 256ll << 20;
}
static bool pids_100(const struct oci_config *c, const struct profile_result *r)
{
  return c->linux->resources->pids_limit == 100;
}
static bool cpus_half(const struct oci_config *c, const struct profile_result *r)
{
  return c->linux->resources->cpu_quota == 50000 && c->linux->resources->cpu_period == 100000;
}
static bool no_chown(const struct oci_config *c, const struct profile_result *r)
{
  uint64_t b = capbit("CHOWN") | capbit("KILL");
  return !(c->process->caps.bounding & b) && !(c->process->caps.effective & b) &&
         (c->process->caps.bounding & capbit("SETUID"));
}
static bool egress_pypi(const struct oci_config *c, const struct profile_result *r)
{
  return strv_contains(r->egress.allow, "pypi.org") &&
         strv_contains(r->egress.allow, "files.pythonhosted.org") &&
         r->egress.def == PROFILE_EGRESS_DENY;
}
static bool ws_small(const struct oci_config *c, const struct profile_result *r)
{
  return has_opt(mount_at(c, "/workspace"), "size=268435456") && r->workspace.size == 256 << 20;
}
static bool ws_ro_tmpfs(const struct oci_config *c, const struct profile_result *r)
{
  return has_opt(mount_at(c, "/workspace"), "ro") && r->workspace.readonly;
}

static void test_annotations(void)
{
  struct agent_profile *a = builtin("agent");
  struct agent_profile *s = strict_profile();
  struct agent_profile *o = builtin("oci");

  accept_case(a, "run.agentrt.memory", "512m", mem_512m, "tightens memory");
  accept_case(a, "run.agentrt.memory", "4g", mem_4g, "loosens memory within allowLoosen 8g");
  refuse_case(a, "run.agentrt.memory", "12g", "beyond what the profile allows");
  refuse_case(s, "run.agentrt.memory", "1g", "beyond what the profile allows");
  accept_case(s, "run.agentrt.memory", "256m", mem_256m, "agent-strict still allows tightening");
  refuse_case(a, "run.agentrt.memory", "lots", "expected a size");
  accept_case(a, "run.agentrt.pids", "100", pids_100, "tightens pids");
  refuse_case(a, "run.agentrt.pids", "10000", "beyond what the profile allows");
  refuse_case(a, "run.agentrt.pids", "-1", "expected a positive integer");
  accept_case(a, "run.agentrt.cpus", "0.5", cpus_half, "tightens cpus");
  refuse_case(a, "run.agentrt.cpus", "8", "beyond what the profile allows");
  accept_case(a, "run.agentrt.caps.drop", "CHOWN,CAP_KILL", no_chown, "drops capabilities");
  refuse_case(a, "run.agentrt.caps.drop", "FOO", "unknown capability FOO");
  accept_case(a, "run.agentrt.egress.allow", "pypi.org,files.pythonhosted.org", egress_pypi,
              "adds allowed egress entries");
  refuse_case(a, "run.agentrt.egress.allow", "pypi.org,evil.example", "`evil.example` loosens");
  refuse_case(s, "run.agentrt.egress.allow", "pypi.org", "`pypi.org` loosens");
  refuse_case(a, "run.agentrt.egress.default", "allow", "only \"deny\"");
  accept_case(a, "run.agentrt.workspace.size", "256m", ws_small, "smaller tmpfs workspace");
  refuse_case(a, "run.agentrt.workspace.size", "64g", "above what the profile allows");
  refuse_case(s, "run.agentrt.workspace.size", "1g", "above what the profile allows");
  accept_case(a, "run.agentrt.readonly-workspace", "true", ws_ro_tmpfs, "read-only workspace");
  refuse_case(a, "run.agentrt.readonly-workspace", "yes please", "expected true or false");
  refuse_case(a, "run.agentrt.workspace.mode", "none", "expected tmpfs, overlay or bind");
  refuse_case(a, "run.agentrt.bogus", "1", "unknown run.agentrt annotation");
  refuse_case(a, "run.agentrt.profile", "oci", "unknown run.agentrt annotation");
  {
    char msg[ERROR_MSG_MAX];
    struct oci_config *out = NULL;
    struct profile_result *r = with_annotation(a, "org.example.other", "x", &out, msg, sizeof msg);
    tap_ok(r != NULL, "annotations outside run.agentrt. are ignored");
    profile_result_free(r);
    oci_config_free(out);
    r = with_annotation(o, "run.agentrt.bogus", "x", &out, msg, sizeof msg);
    tap_ok(r != NULL && r->n_changes == 0, "oci profile ignores run.agentrt.* annotations");
    profile_result_free(r);
    oci_config_free(out);
  }
  profile_free(a);
  profile_free(s);
  profile_free(o);
}

/* A config with the engine's bind of a host directory at /workspace. */
static struct oci_config *ws_cfg(const char *opt)
{
  struct oci_config *c = docker_cfg();
  add_mount(c, "/workspace", "bind", "/home/u/proj", "rbind", opt);
  return c;
}

static void test_workspace(void)
{
  struct agent_profile *a = builtin("agent");
  struct agent_profile *s = strict_profile();
  struct oci_config *c, *out = NULL;
  struct profile_result *r;
  const struct oci_mount *m;
  char msg[ERROR_MSG_MAX];

  c = ws_cfg("rw");
  r = run(c, a, &out, msg, sizeof msg);
  m = r ? mount_at(out, "/workspace") : NULL;
  tap_ok(m && profile_mount_is_workspace(m) && streq(m->source, "/home/u/proj") &&
             has_opt(m, "nosuid") && has_opt(m, "nodev") && !has_opt(m, "rbind"),
         "workspace: host bind becomes the overlay marker mount (%s)", msg);
  tap_ok(r && r->workspace.mode == PROFILE_WS_OVERLAY && streq(r->workspace.path, "/workspace") &&
             streq(r->workspace.lowerdir, "/home/u/proj"),
         "workspace: result carries overlay mode and lowerdir");
  tap_ok(r && mount_at(out, "/workspace/.git/hooks") == NULL &&
             mount_at(out, "/workspace/.git/config") == NULL && r->workspace.n_protected == 0 &&
             strv_contains(r->workspace.review_protected, ".envrc"),
         "workspace: overlay mode mounts nothing over protected paths; the list goes to review");
  profile_result_free(r);
  oci_config_free(out);
  oci_config_free(c);

  c = ws_cfg("ro");
  r = run(c, a, &out, msg, sizeof msg);
  m = r ? mount_at(out, "/workspace") : NULL;
  tap_ok(m && streq(m->type, "bind") && has_opt(m, "ro") && has_opt(m, "nosuid") &&
             r->workspace.mode == PROFILE_WS_BIND && r->workspace.n_protected == 0,
         "workspace: an engine read-only bind stays a read-only bind (%s)", msg);
  profile_result_free(r);
  oci_config_free(out);

  add_annotation(c, "run.agentrt.workspace.mode", "bind");
  free(c->mounts[c->n_mounts - 1].options[1]);
  c->mounts[c->n_mounts - 1].options[1] = xstrdup("rw");
  r = run(c, a, &out, msg, sizeof msg);
  m = r ? mount_at(out, "/workspace") : NULL;
  tap_ok(m && streq(m->type, "bind") && has_opt(m, "nosuid") && !has_opt(m, "ro") &&
             r->workspace.mode == PROFILE_WS_BIND && r->workspace.n_protected > 8,
         "workspace: annotation loosens overlay to bind where the profile allows (%s)", msg);
  m = r ? mount_at(out, "/workspace/.git/hooks") : NULL;
  tap_ok(m && profile_mount_protect_kind(m) == 'd' && profile_mount_protect_existing(m) &&
             has_opt(m, "ro") && mount_at(out, "/workspace/.git/commondir") &&
             mount_at(out, "/workspace/.envrc") &&
             profile_mount_protect_kind(mount_at(out, "/workspace/.envrc")) == 'f' &&
             m > mount_at(out, "/workspace"),
         "workspace: bind mode binds git's config, hooks, redirections and the list read-only, "
         "if they exist, after the workspace");
  profile_result_free(r);
  oci_config_free(out);
  expect_refusal(c, s, "run.agentrt.workspace.mode=bind is looser", "bind under agent-strict");
  oci_config_free(c);

  c = ws_cfg("rw");
  add_annotation(c, "run.agentrt.workspace.mode", "tmpfs");
  r = run(c, s, &out, msg, sizeof msg);
  m = r ? mount_at(out, "/workspace") : NULL;
  tap_ok(m && streq(m->type, "tmpfs") && has_opt(m, "size=268435456") &&
             !mount_at(out, "/workspace/.git/hooks"),
         "workspace: annotation tmpfs replaces the host dir (tightening) (%s)", msg);
  profile_result_free(r);
  oci_config_free(out);
  oci_config_free(c);

  c = ws_cfg("rw");
  add_annotation(c, "run.agentrt.readonly-workspace", "true");
  r = run(c, a, &out, msg, sizeof msg);
  m = r ? mount_at(out, "/workspace") : NULL;
  tap_ok(m && streq(m->type, "bind") && has_opt(m, "ro") && r->workspace.readonly,
         "workspace: readonly annotation turns overlay into a read-only bind (%s)", msg);
  profile_result_free(r);
  oci_config_free(out);
  oci_config_free(c);

  c = docker_cfg();
  add_mount(c, "/workspace/data", "bind", "/srv/data", "rbind", NULL);
  r = run(c, a, &out, msg, sizeof msg);
  tap_ok(r && mount_at(out, "/workspace") && mount_at(out, "/workspace/data") &&
             mount_at(out, "/workspace") < mount_at(out, "/workspace/data"),
         "workspace: the tmpfs goes before mounts nested in it (%s)", msg);
  profile_result_free(r);
  oci_config_free(out);
  oci_config_free(c);

  c = docker_cfg();
  free(c->process->env[1]);
  c->process->env[1] = xstrdup("HOME=/workspace");
  r = run(c, a, &out, msg, sizeof msg);
  m = r ? mount_at(out, "/workspace") : NULL;
  tap_ok(m && streq(m->type, "tmpfs") && !has_opt(m, "mode=700"),
         "workspace: HOME=/workspace gets no separate home tmpfs (%s)", msg);
  profile_result_free(r);
  oci_config_free(out);
  oci_config_free(c);
  profile_free(a);
  profile_free(s);
}

static void test_misc(void)
{
  struct agent_profile *a = builtin("agent");
  struct agent_profile *mine = NULL;
  struct oci_config *c, *out = NULL;
  struct profile_result *r;
  const struct oci_mount *m;
  char msg[ERROR_MSG_MAX];
  struct error err = {0};

  c = docker_cfg();
  add_mount(c, "/tmp", "tmpfs", "tmpfs", "size=10g", "suid");
  r = run(c, a, &out, msg, sizeof msg);
  m = r ? mount_at(out, "/tmp") : NULL;
  tap_ok(m && has_opt(m, "size=536870912") && !has_opt(m, "size=10g") && has_opt(m, "nosuid") &&
             !has_opt(m, "suid") && change_for(r, "mounts[/tmp]"),
         "scratch: an engine tmpfs larger than the profile's size is clamped (%s)", msg);
  profile_result_free(r);
  oci_config_free(out);
  oci_config_free(c);

  c = docker_cfg();
  c->process->caps.bounding |= capbit("SYS_ADMIN");
  add_annotation(c, "run.agentrt.caps.drop", "SYS_ADMIN");
  r = run(c, a, &out, msg, sizeof msg);
  tap_ok(r && !(out->process->caps.bounding & capbit("SYS_ADMIN")),
         "caps: a capability above the ceiling that an annotation drops is not refused (%s)", msg);
  profile_result_free(r);
  oci_config_free(out);
  oci_config_free(c);

  mine = profile_str("{'name': 'ro-only', 'extends': 'oci', 'rootfs': {'readonly': true}}", &err);
  c = docker_cfg();
  add_annotation(c, "run.agentrt.egress.allow", "pypi.org");
  r = mine ? run(c, mine, &out, msg, sizeof msg) : NULL;
  /* the one rule, and the line that says where writes go on the read-only root */
  tap_ok(r && out->root_readonly && config_changes(r) == 1 && r->n_changes == 2 &&
             change_for(r, "writes") && !out->process->no_new_privileges,
         "extends oci: only the listed rule applies (%s%s)", err.msg, msg);
  profile_result_free(r);
  oci_config_free(out);
  profile_free(mine);
  mine = profile_str("{'extends': 'oci', 'annotations': {'apply': true}}", &err);
  r = mine ? run(c, mine, &out, msg, sizeof msg) : NULL;
  tap_ok(r == NULL && strstr(msg, "no egress policy to add to"),
         "egress annotation without an egress policy is refused (%s)", msg);
  profile_result_free(r);
  oci_config_free(out);
  profile_free(mine);
  oci_config_free(c);
  profile_free(a);
}

static void idempotent(const struct agent_profile *p, struct oci_config *in, const char *name)
{
  char msg[ERROR_MSG_MAX];
  struct oci_config *once = NULL, *twice = NULL;
  struct profile_result *r1 = run(in, p, &once, msg, sizeof msg), *r2 = NULL;
  char *a = NULL, *b = NULL;

  if (r1 != NULL)
    r2 = run(once, p, &twice, msg, sizeof msg);
  if (r2 != NULL) {
    a = to_json(once);
    b = to_json(twice);
  }
  tap_ok(r2 != NULL && config_changes(r2) == 0 && streq(a, b) &&
             r1->workspace.mode == r2->workspace.mode &&
             (r1->workspace.lowerdir == r2->workspace.lowerdir ||
              streq(r1->workspace.lowerdir, r2->workspace.lowerdir)) &&
             r1->workspace.n_protected == r2->workspace.n_protected &&
             (r1->extra_seccomp != NULL) == (r2->extra_seccomp != NULL),
         "idempotent: %s (%s; %zu config changes the second time)", name, msg,
         r2 ? config_changes(r2) : 0);
  for (size_t i = 0; r2 != NULL && i < r2->n_changes; i++)
    if (r2->changes[i].kind == PROFILE_CHANGE_CONFIG)
      fprintf(stdout, "#   second pass changed %s\n", r2->changes[i].field);
  free(a);
  free(b);
  profile_result_free(r1);
  profile_result_free(r2);
  oci_config_free(once);
  oci_config_free(twice);
  oci_config_free(in);
}

static void test_idempotence(void)
{
  struct agent_profile *a = builtin("agent");
  struct agent_profile *s = strict_profile();
  struct oci_config *c;

  idempotent(a, docker_cfg(), "agent, tmpfs workspace");
  idempotent(a, ws_cfg("rw"), "agent, overlay workspace");
  idempotent(a, ws_cfg("ro"), "agent, read-only bind workspace");
  idempotent(s, ws_cfg("rw"), "agent-strict, overlay workspace");
  c = ws_cfg("rw");
  add_annotation(c, "run.agentrt.workspace.mode", "bind");
  add_annotation(c, "run.agentrt.memory", "4g");
  add_annotation(c, "run.agentrt.cpus", "0.5");
  add_annotation(c, "run.agentrt.caps.drop", "CHOWN");
  idempotent(a, c, "agent with loosening and tightening annotations");
  c = docker_cfg();
  add_mount(c, "/tmp", "tmpfs", "tmpfs", "size=10g", NULL);
  add_mount(c, "/data", "bind", "/srv/data", "rbind", "rw");
  idempotent(a, c, "agent with an oversized /tmp and a host bind");
  profile_free(a);
  profile_free(s);
}

int main(void)
{
  test_annotations();
  test_workspace();
  test_misc();
  test_idempotence();
  return tap_done();
}
