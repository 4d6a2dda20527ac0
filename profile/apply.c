/* apply.c - profile_apply(): the pure transform (engine config, profile,
 * annotations) -> (final config, changes, runtime directives) or a refusal.
 *
 * The engine's config is never modified: every step works on a deep copy and
 * records what it changed and why (struct profile_change), for `agentrt
 * explain` and the create log.  Applying the same profile to its own output
 * records no PROFILE_CHANGE_CONFIG change (idempotence, unit tested).
 */
#include <stdio.h>

#include "profile/internal.h"

#include "common/util.h"

void profile_change_add(struct apply_ctx *x, enum profile_change_kind kind, const char *field,
                        const char *old_value, const char *new_value, const char *reason_fmt, ...)
{
  struct profile_result *r = x->r;
  struct profile_change *ch;
  va_list ap;

  r->changes = xrealloc(r->changes, (r->n_changes + 1) * sizeof *r->changes);
  ch = &r->changes[r->n_changes++];
  ch->kind = kind;
  ch->field = xstrdup(field);
  ch->old_value = xstrdup(old_value);
  ch->new_value = xstrdup(new_value);
  va_start(ap, reason_fmt);
  if (vasprintf(&ch->reason, reason_fmt, ap) < 0)
    abort();
  va_end(ap);
}

int profile_refuse(struct apply_ctx *x, const char *fmt, ...)
{
  char msg[ERROR_MSG_MAX];
  va_list ap;

  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return error_set(x->err, 0, "%s profile: %s", x->p->name, msg);
}

static void apply_rootfs(struct apply_ctx *x)
{
  if (!x->p->rootfs_readonly || x->c->root_readonly)
    return;
  x->c->root_readonly = true;
  profile_change_add(x, PROFILE_CHANGE_CONFIG, "root.readonly", "false", "true",
                     "the root filesystem is read-only; writable: workspace and scratch mounts");
}

static void apply_nnp(struct apply_ctx *x)
{
  if (!x->p->no_new_privileges || x->c->process == NULL || x->c->process->no_new_privileges)
    return;
  x->c->process->no_new_privileges = true;
  profile_change_add(x, PROFILE_CHANGE_CONFIG, "process.noNewPrivileges", "false", "true",
                     "setuid binaries and file capabilities cannot raise privileges");
}

static char *deny_list(char **deny)
{
  char *out = NULL;

  for (size_t i = 0; deny != NULL && deny[i] != NULL; i++) {
    char *prev = out;
    out = xfmt("%s%s%s", prev ? prev : "", prev ? " " : "", deny[i]);
    free(prev);
  }
  return out;
}

static void apply_seccomp(struct apply_ctx *x)
{
  cleanup_free char *list = NULL;
  uint32_t eno;
  size_t n;

  x->r->extra_seccomp = profile_seccomp_build(x->p);
  if (x->r->extra_seccomp == NULL)
    return;
  n = x->r->extra_seccomp->n_syscalls;
  eno = x->p->seccomp.errno_ret ? x->p->seccomp.errno_ret : 1;
  list = deny_list(x->p->seccomp.deny);
  profile_change_add(
      x, PROFILE_CHANGE_RUNTIME, "linux.seccomp (stacked)", NULL,
      x->c->linux && x->c->linux->seccomp ? "engine filter + profile filter" : "profile filter",
      "a second filter of %zu rules refuses (errno %u, %s) %s%s%s; both filters run, "
      "the stricter wins; a tool that fails with \"%s\" on one of these was refused "
      "by the profile (see `agentrt audit ID`)%s%s",
      n, eno, strerrorname_np((int)eno) ? strerrorname_np((int)eno) : "?", list ? list : "",
      x->p->seccomp.deny_clone_namespaces ? ", clone with namespace flags (clone3: ENOSYS)" : "",
      x->p->seccomp.deny_tiocsti ? ", ioctl TIOCSTI" : "", strerror((int)eno),
      x->p->seccomp.deny_vsock ? "; AF_VSOCK sockets fail with EAFNOSUPPORT, as without vsock" : "",
      x->p->seccomp.deny_recverr
          ? "; setsockopt IP_RECVERR and IPV6_RECVERR return 0 and do nothing (no ICMP error "
            "queue)"
          : "");
  profile_change_add(x, PROFILE_CHANGE_RUNTIME, "ptrace", NULL,
                     profile_denies_ptrace(x->p) ? "denied" : "within the container",
                     profile_denies_ptrace(x->p)
                         ? "ptrace, process_vm_readv/writev and pidfd_getfd are refused: no gdb, "
                           "strace or "
                           "LeakSanitizer inside"
                         : "gdb, strace and sanitizers may trace the container's own processes "
                           "(same uid, no CAP_SYS_PTRACE; agentrt's init and exec helper are "
                           "non-dumpable until they exec, so they cannot be traced)");
}

static void fill_egress(struct apply_ctx *x)
{
  struct profile_egress *e = &x->r->egress;
  char **add = x->a.egress_allow;
  cleanup_free char *list = NULL;

  profile_egress_copy(e, &x->p->egress);
  if (x->a.egress_deny && e->def == PROFILE_EGRESS_ALLOW) {
    e->def = PROFILE_EGRESS_DENY;
    profile_change_add(x, PROFILE_CHANGE_RUNTIME, "egress.default", "allow", "deny",
                       "annotation run.agentrt.egress.default");
  }
  for (size_t i = 0; add != NULL && add[i] != NULL; i++)
    if (!strv_contains(e->allow, add[i]))
      strv_push(&e->allow, add[i]);
  for (size_t i = 0; x->a.ingress_allow && x->a.ingress_allow[i]; i++)
    if (!strv_contains(e->ingress_allow, x->a.ingress_allow[i])) {
      strv_push(&e->ingress_allow, x->a.ingress_allow[i]);
      profile_change_add(x, PROFILE_CHANGE_RUNTIME, "ingress.allow", NULL, x->a.ingress_allow[i],
                         "annotation run.agentrt.ingress");
    }
  if (e->def == PROFILE_EGRESS_OFF)
    return;
  for (size_t i = 0; e->allow && e->allow[i]; i++) {
    char *prev = list;
    list = prev ? xfmt("%s,%s", prev, e->allow[i]) : xstrdup(e->allow[i]);
    free(prev);
  }
  profile_change_add(
      x, PROFILE_CHANGE_RUNTIME, "egress", NULL, e->def == PROFILE_EGRESS_DENY ? "deny" : "allow",
      "egress %s by default; allowed: %s", e->def == PROFILE_EGRESS_DENY ? "denied" : "allowed",
      list ? list : "(nothing)");
  free(list);
  list = NULL;
  for (size_t i = 0; e->ingress_allow && e->ingress_allow[i]; i++) {
    char *prev = list;
    list = prev ? xfmt("%s,%s", prev, e->ingress_allow[i]) : xstrdup(e->ingress_allow[i]);
    free(prev);
  }
  profile_change_add(
      x, PROFILE_CHANGE_RUNTIME, "ingress", NULL, e->ingress_default_allow ? "allow" : "deny",
      "new inbound connections %s; listed: %s",
      e->ingress_default_allow ? "accepted" : "refused unless listed", list ? list : "(nothing)");
}

/* The profile's secrets, or those run.agentrt.secrets names; the
 * placeholder and the environment entry are create's (random per
 * container: profile/ makes no syscall). */
static void fill_secrets(struct apply_ctx *x)
{
  const struct agent_profile *p = x->p;
  struct profile_result *r = x->r;

  r->secrets = xmalloc0((p->n_secrets ? p->n_secrets : 1) * sizeof *r->secrets);
  for (size_t i = 0; i < p->n_secrets; i++) {
    const struct profile_secret *s = &p->secrets[i];
    cleanup_free char *hosts = NULL;

    if (x->a.has_secrets && !strv_contains(x->a.secrets, s->name))
      continue;
    profile_secret_copy(&r->secrets[r->n_secrets++], s);
    for (size_t j = 0; s->hosts[j] != NULL; j++) {
      char *prev = hosts;
      hosts = prev ? xfmt("%s,%s", prev, s->hosts[j]) : xstrdup(s->hosts[j]);
      free(prev);
    }
    profile_change_add(x, PROFILE_CHANGE_RUNTIME, "secrets", NULL, s->name,
                       "%s holds a placeholder; the egress proxy puts the real value (from %s on "
                       "the host) in the %s header of HTTPS requests to %s only",
                       s->name, s->file, s->header, hosts);
  }
}

/* The proxy's line in explain: who terminates what, and what fails. */
static void note_proxy(struct apply_ctx *x)
{
  if (x->r->egress.def == PROFILE_EGRESS_OFF || (x->r->n_secrets == 0 && x->r->egress.n_http == 0))
    return;
  profile_change_add(
      x, PROFILE_CHANGE_RUNTIME, "egress.tls", NULL, "proxy",
      "HTTPS to the secrets' and HTTP rules' hosts is terminated by the egress proxy with a "
      "per-container CA (in /dev/agentrt-ca-bundle.crt and the distribution bundle paths; "
      "SSL_CERT_FILE, REQUESTS_CA_BUNDLE, NODE_EXTRA_CA_CERTS, CURL_CA_BUNDLE, GIT_SSL_CAINFO): a "
      "client that pins certificates or uses its own CA store fails there with a certificate "
      "error (a tls_error record in the trail); every other HTTPS flow must name (SNI) an allowed "
      "host that resolves to the address it connects to");
}

static int run_steps(struct apply_ctx *x)
{
  if (profile_annotations_parse(x->c, x->p, &x->a, x->err) < 0)
    return -1;
  apply_rootfs(x);
  if (profile_apply_caps(x) < 0)
    return -1;
  apply_nnp(x);
  if (profile_apply_namespaces(x) < 0 || profile_apply_devices(x) < 0 || profile_apply_masks(x) < 0)
    return -1;
  profile_apply_home(x);
  if (profile_apply_mounts(x) < 0 || profile_apply_workspace(x) < 0)
    return -1;
  if (profile_apply_resources(x) < 0)
    return -1;
  profile_apply_env(x);
  apply_seccomp(x);
  fill_egress(x);
  fill_secrets(x);
  note_proxy(x);
  profile_audit_copy(&x->r->audit, &x->p->audit);
  x->r->subagents = x->p->subagents;
  x->r->workspace.retention = x->p->workspace.retention;
  x->r->workspace.volatile_upper = x->p->workspace.volatile_upper;
  profile_apply_writes_summary(x);
  return 0;
}

int profile_apply(const struct oci_config *in, const struct agent_profile *p,
                  struct oci_config **ret_out, struct profile_result **ret_result,
                  struct error *err)
{
  struct apply_ctx x = {.p = p, .err = err};

  x.c = oci_config_dup(in);
  x.r = xmalloc0(sizeof *x.r);
  x.r->profile = xstrdup(p->name);
  if (run_steps(&x) < 0) {
    profile_annotations_clear(&x.a);
    oci_config_free(x.c);
    profile_result_free(x.r);
    return -1;
  }
  profile_annotations_clear(&x.a);
  *ret_out = x.c;
  *ret_result = x.r;
  return 0;
}

int profile_apply_process(struct oci_process *proc, const struct agent_profile *p,
                          struct error *err)
{
  struct apply_ctx x = {.p = p, .err = err};
  int ret;

  x.r = xmalloc0(sizeof *x.r);
  ret = profile_caps_check_process(&x, proc);
  if (ret == 0 && p->no_new_privileges)
    proc->no_new_privileges = true;
  if (ret == 0)
    profile_env_process(proc, p);
  profile_result_free(x.r);
  return ret;
}

void profile_apply_apparmor(struct oci_config *c, const struct agent_profile *p,
                            bool host_has_apparmor, struct profile_result *r)
{
  struct apply_ctx x = {.p = p, .c = c, .r = r};
  struct oci_process *proc = c->process;

  if (p->apparmor_profile == NULL || *p->apparmor_profile == '\0' || proc == NULL ||
      (proc->apparmor_profile != NULL && *proc->apparmor_profile != '\0') || !host_has_apparmor)
    return;
  proc->apparmor_profile = xstrdup(p->apparmor_profile);
  profile_change_add(&x, PROFILE_CHANGE_CONFIG, "process.apparmorProfile", NULL,
                     p->apparmor_profile,
                     "the profile's default AppArmor profile (the engine set none)");
}

void profile_result_free(struct profile_result *r)
{
  if (r == NULL)
    return;
  free(r->profile);
  for (size_t i = 0; i < r->n_changes; i++) {
    free(r->changes[i].field);
    free(r->changes[i].old_value);
    free(r->changes[i].new_value);
    free(r->changes[i].reason);
  }
  free(r->changes);
  oci_seccomp_free(r->extra_seccomp);
  free(r->workspace.path);
  free(r->workspace.lowerdir);
  for (size_t i = 0; i < r->workspace.n_protected; i++)
    free(r->workspace.protected[i].path);
  free(r->workspace.protected);
  strv_free(r->workspace.review_protected);
  profile_egress_clear(&r->egress);
  for (size_t i = 0; i < r->n_secrets; i++)
    profile_secret_clear(&r->secrets[i]);
  free(r->secrets);
  free(r->audit.dir);
  free(r->subagent_json);
  free(r);
}
