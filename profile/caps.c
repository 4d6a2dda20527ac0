/* caps.c - the capability ceiling.
 *
 * Capabilities in capabilities.trim (Docker grants them by default: NET_RAW,
 * MKNOD, ...) are dropped and recorded; anything else beyond the ceiling
 * (`--privileged`, `--cap-add SYS_ADMIN`) is refused, naming each capability,
 * rather than silently trimmed.  Inheritable and ambient sets are always
 * cleared (CVE-2022-29162 and siblings: tests/security/escapes.bats, hardening.bats H21).
 */
#include <stdio.h>

#include "profile/internal.h"

#include "common/util.h"

const char *profile_cap_name(int cap)
{
  const char *n = oci_cap_name(cap);

  if (n == NULL)
    return "?";
  return str_has_prefix(n, "CAP_") ? n + 4 : n;
}

/* "CHOWN,KILL" ("" for none). */
static char *caps_list(uint64_t mask)
{
  char *s = xstrdup("");

  for (int i = 0; i < 64; i++) {
    char *prev = s;

    if (!(mask & (UINT64_C(1) << i)))
      continue;
    s = xfmt("%s%s%s", prev, prev[0] ? "," : "", profile_cap_name(i));
    free(prev);
  }
  return s;
}

static const char *const set_names[] = {"bounding", "effective", "permitted", "inheritable",
                                        "ambient"};

static uint64_t *set_ptr(struct oci_caps *c, int i, bool **ret_has)
{
  bool *has[] = {&c->has_bounding, &c->has_effective, &c->has_permitted, &c->has_inheritable,
                 &c->has_ambient};
  uint64_t *val[] = {&c->bounding, &c->effective, &c->permitted, &c->inheritable, &c->ambient};

  *ret_has = has[i];
  return val[i];
}

static int refuse_over(struct apply_ctx *x, struct oci_caps *c, uint64_t allowed, uint64_t drop)
{
  uint64_t over = 0;
  const char *where = NULL;
  cleanup_free char *names = NULL;
  char list[ERROR_MSG_MAX / 2] = "";

  for (int i = 0; i < 5; i++) {
    bool *has;
    uint64_t v = *set_ptr(c, i, &has) & ~drop & ~allowed;

    if (*has && v != 0) {
      over |= v;
      if (where == NULL)
        where = set_names[i];
    }
  }
  if (over == 0)
    return 0;
  for (int i = 0; i < 64; i++)
    if (over & (UINT64_C(1) << i))
      snprintf(list + strlen(list), sizeof list - strlen(list), "%sCAP_%s", list[0] ? ", " : "",
               profile_cap_name(i));
  return profile_refuse(x,
                        "%s %s above the profile's capability ceiling (requested in "
                        "process.capabilities.%s); refused rather than silently dropped",
                        list, __builtin_popcountll(over) > 1 ? "are" : "is", where);
}

static void cut_set(struct apply_ctx *x, struct oci_caps *c, int i, uint64_t keep,
                    const char *drop_reason)
{
  bool *has;
  uint64_t *v = set_ptr(c, i, &has);
  uint64_t nv = *v & keep;
  cleanup_free char *field = NULL;
  cleanup_free char *o = NULL;
  cleanup_free char *n = NULL;

  if (!*has || nv == *v)
    return;
  field = xfmt("process.capabilities.%s", set_names[i]);
  o = caps_list(*v);
  n = caps_list(nv);
  *v = nv;
  if (i >= 3)
    profile_change_add(x, PROFILE_CHANGE_CONFIG, field, o, n,
                       "inheritable and ambient capabilities are always cleared (CVE-2022-29162)");
  else
    profile_change_add(x, PROFILE_CHANGE_CONFIG, field, o, n, "%s", drop_reason);
}

/* Real-time scheduling, a higher priority (negative nice) and the real-time
 * I/O class need CAP_SYS_NICE (or SYS_ADMIN) in the process itself; the
 * runtime, which could set them for it, does not give more than the
 * profile's ceiling would: refused, as a capability above it is. */
static int refuse_sched(struct apply_ctx *x, const struct oci_process *proc, uint64_t allowed)
{
  const struct oci_scheduler *s = &proc->scheduler;
  const char *what = NULL;

  if (allowed & (UINT64_C(1) << oci_cap_from_name("CAP_SYS_NICE")))
    return 0;
  /* SCHED_FIFO 1, SCHED_RR 2, SCHED_DEADLINE 6 */
  if (proc->has_scheduler && (s->policy == 1 || s->policy == 2 || s->policy == 6))
    what = oci_sched_policy_name(s->policy);
  else if (proc->has_scheduler && s->nice < 0)
    what = "a negative nice";
  else if (proc->has_io_priority && proc->io_priority_class == 1)
    what = "IOPRIO_CLASS_RT";
  if (what == NULL)
    return 0;
  return profile_refuse(x,
                        "process.%s: %s needs CAP_SYS_NICE, which is above the profile's "
                        "capability ceiling (a real-time agent could starve the host)",
                        proc->has_io_priority && what[0] == 'I' ? "ioPriority" : "scheduler", what);
}

int profile_caps_check_process(struct apply_ctx *x, struct oci_process *proc)
{
  const struct agent_profile *p = x->p;
  uint64_t drop = x->a.caps_drop;
  uint64_t keep = p->caps.ceiling & ~drop;
  cleanup_free char *trimmed = caps_list(p->caps.trim);
  cleanup_free char *reason = NULL;

  if (!p->caps.enforce || proc == NULL)
    return 0;
  if (refuse_sched(x, proc, p->caps.ceiling & ~drop) < 0)
    return -1;
  if (!proc->has_caps)
    return 0;
  if (refuse_over(x, &proc->caps, p->caps.ceiling | p->caps.trim, drop) < 0)
    return -1;
  reason = drop ? xfmt("cut to the profile's ceiling (%s never granted) and annotation "
                       "run.agentrt.caps.drop",
                       trimmed)
                : xfmt("cut to the profile's ceiling (%s never granted)", trimmed);
  for (int i = 0; i < 3; i++)
    cut_set(x, &proc->caps, i, keep, reason);
  for (int i = 3; i < 5; i++)
    cut_set(x, &proc->caps, i, 0, reason);
  return 0;
}

int profile_apply_caps(struct apply_ctx *x)
{
  return profile_caps_check_process(x, x->c->process);
}
