/* config_process.c - the OCI "process" object: parse, validate, write, free.
 *
 * Used for config.json's process and for `exec --process` documents.
 * Validation follows the runtime spec: cwd absolute, args non-empty,
 * env entries KEY=VALUE, rlimit types known and not repeated, capability
 * names known (unknown names are rejected rather than silently dropped, so
 * a typo never runs a container with fewer or more privileges than meant).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "common/util.h"
#include "oci/internal.h"

static int conv_console(struct jctx *c, const struct jnode *v, void *ret)
{
  struct oci_process *p = ret;

  if (jexpect(c, v, JT_OBJECT) < 0)
    return -1;
  if (jfield_req(c, v, "height", j_u32, &p->console_height) < 0 ||
      jfield_req(c, v, "width", j_u32, &p->console_width) < 0)
    return -1;
  p->has_console_size = true;
  return 0;
}

static int conv_user(struct jctx *c, const struct jnode *v, void *ret)
{
  struct oci_user *u = ret;

  if (jexpect(c, v, JT_OBJECT) < 0)
    return -1;
  if (jfield(c, v, "uid", j_u32, &u->uid, NULL) < 0 ||
      jfield(c, v, "gid", j_u32, &u->gid, NULL) < 0 ||
      jfield(c, v, "umask", j_u32, &u->umask, &u->has_umask) < 0 ||
      jfield_array(c, v, "additionalGids", sizeof(uint32_t), j_u32, &u->additional_gids,
                   &u->n_additional_gids) < 0 ||
      jfield(c, v, "username", j_str, &u->username, NULL) < 0)
    return -1;
  if (u->has_umask && u->umask > 0777)
    return jfail_at(c, "umask", "out of range (maximum 0777)");
  /* (uid_t)-1 is "unchanged" to setresuid and setresgid: the program would
   * keep the runtime's root (CVE-2026-30892, here through the config) */
  if (u->uid == UINT32_MAX)
    return jfail_at(c, "uid", "4294967295 is the invalid id (the user would stay root)");
  if (u->gid == UINT32_MAX)
    return jfail_at(c, "gid", "4294967295 is the invalid id (the group would stay root's)");
  for (size_t i = 0; i < u->n_additional_gids; i++)
    if (u->additional_gids[i] == UINT32_MAX)
      return jfail_at(c, "additionalGids", "4294967295 is the invalid id");
  return 0;
}

static int conv_rlimit(struct jctx *c, const struct jnode *v, void *ret)
{
  struct oci_rlimit *rl = ret;

  if (jexpect(c, v, JT_OBJECT) < 0)
    return -1;
  if (jfield_req(c, v, "type", j_str, &rl->type) < 0)
    return -1;
  rl->resource = oci_rlimit_from_name(rl->type);
  if (rl->resource < 0)
    return jfail_at(c, "type", "unknown rlimit `%s`", rl->type);
  free(rl->type);
  rl->type = xstrdup(oci_rlimit_name(rl->resource));
  if (jfield_req(c, v, "soft", j_u64, &rl->soft) < 0 ||
      jfield_req(c, v, "hard", j_u64, &rl->hard) < 0)
    return -1;
  if (rl->soft > rl->hard)
    return jfail_at(c, "soft", "must not exceed the hard limit");
  return 0;
}

static int check_rlimits(struct jctx *c, const struct oci_process *p)
{
  uint64_t seen = 0;

  for (size_t i = 0; i < p->n_rlimits; i++) {
    uint64_t bit = UINT64_C(1) << p->rlimits[i].resource;
    if (seen & bit) {
      size_t m = jpush_key(c, "rlimits");
      size_t m2 = jpush_index(c, i);
      jfail_at(c, "type", "duplicate rlimit `%s`", p->rlimits[i].type);
      jpop(c, m2);
      jpop(c, m);
      return -1;
    }
    seen |= bit;
  }
  return 0;
}

struct capset_ret {
  uint64_t *mask;
  struct oci_caps *caps;
};

static bool listed(const char *list, const char *name)
{
  size_t n = strlen(name);

  if (n == 0) /* strstr would find "" at the same place for ever */
    return false;
  for (const char *p = list; (p = strstr(p, name)) != NULL; p += n)
    if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
      return true;
  return false;
}

static void note_unknown_cap(struct oci_caps *k, const char *name)
{
  size_t used = strlen(k->unknown);

  if (name[0] == '\0')
    name = "\"\""; /* an empty name, shown as such */

  if (listed(k->unknown, name))
    return;
  k->n_unknown++;
  if (used + strlen(name) + 2 <= sizeof k->unknown)
    snprintf(k->unknown + used, sizeof k->unknown - used, "%s%s", used ? " " : "", name);
}

/* An unknown name is skipped, not an error: a config written for a newer
 * kernel (CAP_CHECKPOINT_RESTORE, ...) still runs, as with runc and crun. */
static int conv_capset(struct jctx *c, const struct jnode *v, void *ret)
{
  struct capset_ret *r = ret;

  if (jexpect(c, v, JT_ARRAY) < 0)
    return -1;
  *r->mask = 0;
  for (size_t i = 0; i < v->n; i++) {
    size_t m = jpush_index(c, i);
    int cap;
    if (jexpect(c, v->items[i], JT_STRING) < 0) {
      jpop(c, m);
      return -1;
    }
    jpop(c, m);
    cap = oci_cap_from_name(v->items[i]->s);
    if (cap < 0)
      note_unknown_cap(r->caps, v->items[i]->s);
    else
      *r->mask |= UINT64_C(1) << cap;
  }
  return 0;
}

static int conv_caps(struct jctx *c, const struct jnode *v, void *ret)
{
  struct oci_caps *k = ret;
  struct capset_ret b = {&k->bounding, k}, e = {&k->effective, k}, i = {&k->inheritable, k},
                    p = {&k->permitted, k}, a = {&k->ambient, k};

  if (jexpect(c, v, JT_OBJECT) < 0)
    return -1;
  if (jfield(c, v, "bounding", conv_capset, &b, &k->has_bounding) < 0 ||
      jfield(c, v, "effective", conv_capset, &e, &k->has_effective) < 0 ||
      jfield(c, v, "inheritable", conv_capset, &i, &k->has_inheritable) < 0 ||
      jfield(c, v, "permitted", conv_capset, &p, &k->has_permitted) < 0 ||
      jfield(c, v, "ambient", conv_capset, &a, &k->has_ambient) < 0)
    return -1;
  return 0;
}

static const char *const sched_policies[] = {
    [0] = "SCHED_OTHER", [1] = "SCHED_FIFO", [2] = "SCHED_RR",       [3] = "SCHED_BATCH",
    [4] = "SCHED_ISO",   [5] = "SCHED_IDLE", [6] = "SCHED_DEADLINE",
};
static const char *const sched_flags[] = {
    "SCHED_FLAG_RESET_ON_FORK",  "SCHED_FLAG_RECLAIM",     "SCHED_FLAG_DL_OVERRUN",
    "SCHED_FLAG_KEEP_POLICY",    "SCHED_FLAG_KEEP_PARAMS", "SCHED_FLAG_UTIL_CLAMP_MIN",
    "SCHED_FLAG_UTIL_CLAMP_MAX",
};

static const char *const ioprio_classes[] = {"", "IOPRIO_CLASS_RT", "IOPRIO_CLASS_BE",
                                             "IOPRIO_CLASS_IDLE"};

const char *oci_sched_policy_name(int policy)
{
  return policy >= 0 && (size_t)policy < ARRAY_SIZE(sched_policies) ? sched_policies[policy] : "?";
}

/* v, a string, as its index in names[0..n) (the kernel's value), or an error */
static int name_index(struct jctx *c, const struct jnode *v, const char *const *names, size_t n,
                      const char *what, int *ret)
{
  if (jexpect(c, v, JT_STRING) < 0)
    return -1;
  for (size_t i = 0; i < n; i++)
    if (names[i][0] != '\0' && streq(v->s, names[i])) {
      *ret = (int)i;
      return 0;
    }
  return jfail(c, "unknown %s `%s`", what, v->s);
}

static int conv_sched_policy(struct jctx *c, const struct jnode *v, void *ret)
{
  return name_index(c, v, sched_policies, ARRAY_SIZE(sched_policies), "scheduling policy", ret);
}

static int conv_sched_flags(struct jctx *c, const struct jnode *v, void *ret)
{
  uint64_t *flags = ret;

  if (jexpect(c, v, JT_ARRAY) < 0)
    return -1;
  for (size_t i = 0; i < v->n; i++) {
    size_t m = jpush_index(c, i);
    int k;

    if (name_index(c, v->items[i], sched_flags, ARRAY_SIZE(sched_flags), "scheduler flag", &k) < 0)
      return -1;
    *flags |= 1ULL << k;
    jpop(c, m);
  }
  return 0;
}

static int conv_scheduler(struct jctx *c, const struct jnode *v, void *ret)
{
  struct oci_scheduler *s = ret;

  if (jexpect(c, v, JT_OBJECT) < 0)
    return -1;
  if (jfield_req(c, v, "policy", conv_sched_policy, &s->policy) < 0 ||
      jfield(c, v, "nice", j_int, &s->nice, NULL) < 0 ||
      jfield(c, v, "priority", j_int, &s->priority, NULL) < 0 ||
      jfield(c, v, "flags", conv_sched_flags, &s->flags, NULL) < 0 ||
      jfield(c, v, "runtime", j_u64, &s->runtime, NULL) < 0 ||
      jfield(c, v, "deadline", j_u64, &s->deadline, NULL) < 0 ||
      jfield(c, v, "period", j_u64, &s->period, NULL) < 0)
    return -1;
  if (s->nice < -20 || s->nice > 19)
    return jfail_at(c, "nice", "out of range (-20 to 19)");
  if (s->priority < 0 || s->priority > 99)
    return jfail_at(c, "priority", "out of range (0 to 99)");
  return 0;
}

static int conv_ioprio_class(struct jctx *c, const struct jnode *v, void *ret)
{
  return name_index(c, v, ioprio_classes, ARRAY_SIZE(ioprio_classes), "I/O priority class", ret);
}

static int conv_ioprio(struct jctx *c, const struct jnode *v, void *ret)
{
  struct oci_process *p = ret;

  if (jexpect(c, v, JT_OBJECT) < 0)
    return -1;
  if (jfield_req(c, v, "class", conv_ioprio_class, &p->io_priority_class) < 0 ||
      jfield(c, v, "priority", j_int, &p->io_priority, NULL) < 0)
    return -1;
  if (p->io_priority < 0 || p->io_priority > 7)
    return jfail_at(c, "priority", "out of range (0 to 7)");
  return 0;
}

int oci_cpu_list_parse(const char *s, unsigned long *mask, size_t nbits)
{
  const size_t w = 8 * sizeof *mask;

  if (s == NULL || *s == '\0')
    return -1;
  for (;;) {
    char *end;
    unsigned long a, b;

    if (*s < '0' || *s > '9')
      return -1;
    errno = 0;
    a = b = strtoul(s, &end, 10);
    if (errno != 0)
      return -1;
    if (*end == '-') {
      s = end + 1;
      if (*s < '0' || *s > '9')
        return -1;
      b = strtoul(s, &end, 10);
      if (errno != 0 || b < a)
        return -1;
    }
    if (b >= nbits)
      return -1;
    for (unsigned long i = a; i <= b; i++)
      mask[i / w] |= 1UL << (i % w);
    if (*end == '\0')
      return 0;
    if (*end != ',')
      return -1;
    s = end + 1;
  }
}

static int conv_cpu_list(struct jctx *c, const struct jnode *v, void *ret)
{
  unsigned long mask[1024 / (8 * sizeof(unsigned long))] = {0};

  if (j_str(c, v, ret) < 0)
    return -1;
  if (oci_cpu_list_parse(*(char **)ret, mask, 1024) < 0)
    return jfail(c, "`%s` is not a CPU list (\"0-3,7\")", *(char **)ret);
  return 0;
}

static int conv_exec_cpu(struct jctx *c, const struct jnode *v, void *ret)
{
  struct oci_process *p = ret;

  if (jexpect(c, v, JT_OBJECT) < 0)
    return -1;
  return jfield(c, v, "initial", conv_cpu_list, &p->exec_cpu_initial, NULL) < 0 ||
                 jfield(c, v, "final", conv_cpu_list, &p->exec_cpu_final, NULL) < 0
             ? -1
             : 0;
}

static int check_env(struct jctx *c, char **env)
{
  for (size_t i = 0; env != NULL && env[i] != NULL; i++) {
    const char *eq = strchr(env[i], '=');
    if (eq == NULL || eq == env[i]) {
      size_t m = jpush_key(c, "env");
      size_t m2 = jpush_index(c, i);
      jfail(c, "must be KEY=VALUE");
      jpop(c, m2);
      jpop(c, m);
      return -1;
    }
  }
  return 0;
}

static int process_fields(struct jctx *c, const struct jnode *v, struct oci_process *p)
{
  if (jfield(c, v, "terminal", j_bool, &p->terminal, NULL) < 0 ||
      jfield(c, v, "consoleSize", conv_console, p, NULL) < 0 ||
      jfield_req(c, v, "cwd", j_abspath, &p->cwd) < 0 ||
      jfield(c, v, "env", j_strv, &p->env, NULL) < 0 ||
      jfield_req(c, v, "args", j_strv, &p->args) < 0 ||
      jfield(c, v, "user", conv_user, &p->user, NULL) < 0 ||
      jfield_array(c, v, "rlimits", sizeof(struct oci_rlimit), conv_rlimit, &p->rlimits,
                   &p->n_rlimits) < 0 ||
      jfield(c, v, "apparmorProfile", j_str, &p->apparmor_profile, NULL) < 0 ||
      jfield(c, v, "selinuxLabel", j_str, &p->selinux_label, NULL) < 0 ||
      jfield(c, v, "capabilities", conv_caps, &p->caps, &p->has_caps) < 0 ||
      jfield(c, v, "noNewPrivileges", j_bool, &p->no_new_privileges, NULL) < 0 ||
      jfield(c, v, "oomScoreAdj", j_int, &p->oom_score_adj, &p->has_oom_score_adj) < 0 ||
      jfield(c, v, "scheduler", conv_scheduler, &p->scheduler, &p->has_scheduler) < 0 ||
      jfield(c, v, "ioPriority", conv_ioprio, p, &p->has_io_priority) < 0 ||
      jfield(c, v, "execCPUAffinity", conv_exec_cpu, p, NULL) < 0)
    return -1;
  if (p->args[0] == NULL)
    return jfail_at(c, "args", "must not be empty");
  if (p->has_oom_score_adj && (p->oom_score_adj < -1000 || p->oom_score_adj > 1000))
    return jfail_at(c, "oomScoreAdj", "out of range (-1000 to 1000)");
  if (check_env(c, p->env) < 0 || check_rlimits(c, p) < 0)
    return -1;
  return 0;
}

int oci_process_node(struct jctx *c, const struct jnode *v, void *ret)
{
  struct oci_process **out = ret;

  if (jexpect(c, v, JT_OBJECT) < 0)
    return -1;
  *out = xmalloc0(sizeof **out);
  return process_fields(c, v, *out);
}

int oci_process_parse(const char *json, size_t len, const char *file, struct oci_process **ret,
                      struct error *err)
{
  struct oci_process *p = NULL;

  if (oci_parse_doc(json, len, file, oci_process_node, &p, err) < 0) {
    oci_process_free(p);
    return -1;
  }
  *ret = p;
  return 0;
}

void oci_process_free(struct oci_process *p)
{
  if (p == NULL)
    return;
  free(p->cwd);
  strv_free(p->env);
  strv_free(p->args);
  free(p->user.additional_gids);
  free(p->user.username);
  for (size_t i = 0; p->rlimits != NULL && i < p->n_rlimits; i++)
    free(p->rlimits[i].type);
  free(p->rlimits);
  free(p->apparmor_profile);
  free(p->selinux_label);
  free(p->exec_cpu_initial);
  free(p->exec_cpu_final);
  free(p);
}

static void gen_capset(struct jgen *j, const char *key, bool has, uint64_t mask)
{
  if (!has)
    return;
  jg_key(j, key);
  jg_aopen(j);
  for (int i = 0; i <= oci_cap_last(); i++)
    if (mask & (UINT64_C(1) << i))
      jg_str(j, oci_cap_name(i));
  jg_aclose(j);
}

static void gen_user(struct jgen *j, const struct oci_user *u)
{
  jg_key(j, "user");
  jg_open(j);
  jg_ku64(j, "uid", u->uid);
  jg_ku64(j, "gid", u->gid);
  if (u->has_umask)
    jg_ku64(j, "umask", u->umask);
  if (u->additional_gids != NULL) {
    jg_key(j, "additionalGids");
    jg_aopen(j);
    for (size_t i = 0; i < u->n_additional_gids; i++)
      jg_u64(j, u->additional_gids[i]);
    jg_aclose(j);
  }
  jg_kstr(j, "username", u->username);
  jg_close(j);
}

static void gen_rlimits(struct jgen *j, const struct oci_process *p)
{
  if (p->rlimits == NULL)
    return;
  jg_key(j, "rlimits");
  jg_aopen(j);
  for (size_t i = 0; i < p->n_rlimits; i++) {
    jg_open(j);
    jg_kstr(j, "type", p->rlimits[i].type);
    jg_ku64(j, "hard", p->rlimits[i].hard);
    jg_ku64(j, "soft", p->rlimits[i].soft);
    jg_close(j);
  }
  jg_aclose(j);
}

static void gen_sched(struct jgen *j, const struct oci_process *p)
{
  const struct oci_scheduler *s = &p->scheduler;

  if (p->has_scheduler) {
    jg_key(j, "scheduler");
    jg_open(j);
    jg_kstr(j, "policy", oci_sched_policy_name(s->policy));
    if (s->nice)
      jg_ki64(j, "nice", s->nice);
    if (s->priority)
      jg_ki64(j, "priority", s->priority);
    if (s->flags) {
      jg_key(j, "flags");
      jg_aopen(j);
      for (size_t k = 0; k < ARRAY_SIZE(sched_flags); k++)
        if (s->flags & (1ULL << k))
          jg_str(j, sched_flags[k]);
      jg_aclose(j);
    }
    if (s->runtime)
      jg_ku64(j, "runtime", s->runtime);
    if (s->deadline)
      jg_ku64(j, "deadline", s->deadline);
    if (s->period)
      jg_ku64(j, "period", s->period);
    jg_close(j);
  }
  if (p->has_io_priority) {
    jg_key(j, "ioPriority");
    jg_open(j);
    jg_kstr(j, "class", ioprio_classes[p->io_priority_class]);
    jg_ki64(j, "priority", p->io_priority);
    jg_close(j);
  }
  if (p->exec_cpu_initial != NULL || p->exec_cpu_final != NULL) {
    jg_key(j, "execCPUAffinity");
    jg_open(j);
    jg_kstr(j, "initial", p->exec_cpu_initial);
    jg_kstr(j, "final", p->exec_cpu_final);
    jg_close(j);
  }
}

void oci_process_gen(struct jgen *j, const struct oci_process *p)
{
  jg_open(j);
  if (p->terminal)
    jg_kbool(j, "terminal", true);
  if (p->has_console_size) {
    jg_key(j, "consoleSize");
    jg_open(j);
    jg_ku64(j, "height", p->console_height);
    jg_ku64(j, "width", p->console_width);
    jg_close(j);
  }
  gen_user(j, &p->user);
  jg_kstrv(j, "args", p->args);
  jg_kstrv(j, "env", p->env);
  jg_kstr(j, "cwd", p->cwd);
  if (p->has_caps) {
    jg_key(j, "capabilities");
    jg_open(j);
    gen_capset(j, "bounding", p->caps.has_bounding, p->caps.bounding);
    gen_capset(j, "effective", p->caps.has_effective, p->caps.effective);
    gen_capset(j, "inheritable", p->caps.has_inheritable, p->caps.inheritable);
    gen_capset(j, "permitted", p->caps.has_permitted, p->caps.permitted);
    gen_capset(j, "ambient", p->caps.has_ambient, p->caps.ambient);
    jg_close(j);
  }
  gen_rlimits(j, p);
  if (p->no_new_privileges)
    jg_kbool(j, "noNewPrivileges", true);
  jg_kstr(j, "apparmorProfile", p->apparmor_profile);
  if (p->has_oom_score_adj)
    jg_ki64(j, "oomScoreAdj", p->oom_score_adj);
  jg_kstr(j, "selinuxLabel", p->selinux_label);
  gen_sched(j, p);
  jg_close(j);
}

int oci_process_to_json(const struct oci_process *p, char **ret_json, size_t *ret_len,
                        struct error *err)
{
  struct jgen j;

  jgen_init(&j, false);
  oci_process_gen(&j, p);
  return jgen_finish(&j, "process", ret_json, ret_len, err);
}
