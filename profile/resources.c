/* resources.c - memory, pids and CPU: defaults when the engine set none,
 * ceilings (refusals) when it set more, and run.agentrt.{memory,pids,cpus}.
 *
 * An annotation below the value the container would otherwise get tightens
 * it; above, it is a loosening, allowed only up to annotations.allowLoosen.
 */
#include "profile/internal.h"

#include "common/util.h"

#define DEFAULT_CPU_PERIOD 100000

struct limit_rule {
  const char *field;       /* "linux.resources.memory.limit" */
  const char *annotation;  /* "run.agentrt.memory" */
  const char *profile_key; /* "memory" */
  const struct profile_limit *l;
  bool has_loosen, has_ann;
  uint64_t loosen, ann;
  char *(*fmt)(uint64_t);
};

static char *fmt_count(uint64_t v)
{
  return xfmt("%" PRIu64, v);
}

/* The value the container gets: *ret_set false = unlimited. */
static int decide(struct apply_ctx *x, const struct limit_rule *r, bool engine_set, uint64_t engine,
                  bool *ret_set, uint64_t *ret)
{
  bool set = engine_set || r->l->has_default;
  uint64_t v = engine_set ? engine : r->l->def;
  cleanup_free char *a = NULL;
  cleanup_free char *b = NULL;

  if (r->has_ann) {
    bool within_loosen = r->has_loosen && r->ann <= r->loosen;

    if (set && r->ann > v && !within_loosen) {
      a = r->fmt(r->ann);
      b = r->fmt(v);
      return profile_refuse(
          x,
          "annotation %s=%s would raise %s above %s, beyond what the profile allows "
          "(annotations.allowLoosen.%s)",
          r->annotation, a, r->field, b, r->profile_key);
    }
    set = true;
    v = r->ann;
    if (within_loosen) {
      *ret_set = true;
      *ret = v;
      return 0;
    }
  }
  if (set && r->l->has_max && v > r->l->max) {
    a = r->fmt(v);
    b = r->fmt(r->l->max);
    return profile_refuse(x, "%s %s is above the profile's ceiling %s (resources.%s.max)", r->field,
                          a, b, r->profile_key);
  }
  *ret_set = set;
  *ret = v;
  return 0;
}

static void record(struct apply_ctx *x, const struct limit_rule *r, bool was_set, uint64_t was,
                   uint64_t now)
{
  cleanup_free char *o = was_set ? r->fmt(was) : NULL;
  cleanup_free char *n = r->fmt(now);

  if (was_set && was == now)
    return;
  if (r->has_ann)
    profile_change_add(x, PROFILE_CHANGE_CONFIG, r->field, o, n, "annotation %s", r->annotation);
  else
    profile_change_add(x, PROFILE_CHANGE_CONFIG, r->field, o, n,
                       "the profile's default (resources.%s)", r->profile_key);
}

static int do_memory(struct apply_ctx *x, struct oci_resources *res)
{
  const struct profile_loosen *lo = &x->p->annotations.loosen;
  struct limit_rule r = {"linux.resources.memory.limit",
                         "run.agentrt.memory",
                         "memory",
                         &x->p->resources.memory,
                         lo->has_memory,
                         x->a.has_memory,
                         lo->memory,
                         x->a.memory,
                         profile_fmt_size};
  bool was_set = res->has_memory_limit && res->memory_limit > 0, set = false;
  uint64_t v = 0;

  if (decide(x, &r, was_set, was_set ? (uint64_t)res->memory_limit : 0, &set, &v) < 0)
    return -1;
  if (!set || v > INT64_MAX)
    return 0;
  record(x, &r, was_set, was_set ? (uint64_t)res->memory_limit : 0, v);
  res->has_memory_limit = true;
  res->memory_limit = (int64_t)v;
  if (res->has_memory_swap && res->memory_swap > 0 && res->memory_swap < res->memory_limit) {
    cleanup_free char *o = profile_fmt_size((uint64_t)res->memory_swap);
    cleanup_free char *n = profile_fmt_size(v);

    profile_change_add(x, PROFILE_CHANGE_CONFIG, "linux.resources.memory.swap", o, n,
                       "memory+swap cannot be below the memory limit");
    res->memory_swap = res->memory_limit;
  }
  return 0;
}

static int do_pids(struct apply_ctx *x, struct oci_resources *res)
{
  const struct profile_loosen *lo = &x->p->annotations.loosen;
  struct limit_rule r = {"linux.resources.pids.limit",
                         "run.agentrt.pids",
                         "pids",
                         &x->p->resources.pids,
                         lo->has_pids,
                         x->a.has_pids,
                         lo->pids,
                         x->a.pids,
                         fmt_count};
  bool was_set = res->has_pids_limit && res->pids_limit > 0, set = false;
  uint64_t v = 0;

  if (decide(x, &r, was_set, was_set ? (uint64_t)res->pids_limit : 0, &set, &v) < 0)
    return -1;
  if (!set || v > INT64_MAX)
    return 0;
  record(x, &r, was_set, was_set ? (uint64_t)res->pids_limit : 0, v);
  res->has_pids_limit = true;
  res->pids_limit = (int64_t)v;
  return 0;
}

static int do_cpus(struct apply_ctx *x, struct oci_resources *res)
{
  const struct profile_loosen *lo = &x->p->annotations.loosen;
  struct limit_rule r = {"linux.resources.cpu (quota/period)",
                         "run.agentrt.cpus",
                         "cpus",
                         &x->p->resources.cpus,
                         lo->has_cpus,
                         x->a.has_cpus,
                         lo->cpus,
                         x->a.cpus,
                         profile_fmt_cpus};
  uint64_t period =
      res->has_cpu_period && res->cpu_period > 0 ? res->cpu_period : DEFAULT_CPU_PERIOD;
  bool was_set = res->has_cpu_quota && res->cpu_quota > 0, set = false;
  /* in 128 bits, saturated: a quota whose product wraps around must not
   * pass under the ceiling */
  unsigned __int128 w128 = was_set ? (unsigned __int128)res->cpu_quota * 1000 / period : 0;
  uint64_t was = w128 > UINT64_MAX ? UINT64_MAX : (uint64_t)w128, v = 0;
  uint64_t quota;

  if (decide(x, &r, was_set, was, &set, &v) < 0)
    return -1;
  if (!set || v > INT64_MAX / period)
    return 0;
  quota = v * period / 1000;
  if (was_set && quota == (uint64_t)res->cpu_quota)
    return 0;
  record(x, &r, was_set, was, v);
  res->has_cpu_quota = true;
  res->cpu_quota = (int64_t)quota;
  res->has_cpu_period = true;
  res->cpu_period = period;
  return 0;
}

int profile_apply_resources(struct apply_ctx *x)
{
  const struct agent_profile *p = x->p;
  struct oci_resources *res;
  bool any = p->resources.memory.has_default || p->resources.memory.has_max ||
             p->resources.pids.has_default || p->resources.pids.has_max ||
             p->resources.cpus.has_default || p->resources.cpus.has_max || x->a.has_memory ||
             x->a.has_pids || x->a.has_cpus;

  if (!any)
    return 0;
  if (x->c->linux == NULL)
    x->c->linux = xmalloc0(sizeof *x->c->linux);
  if (x->c->linux->resources == NULL)
    x->c->linux->resources = xmalloc0(sizeof *x->c->linux->resources);
  res = x->c->linux->resources;
  if (do_memory(x, res) < 0 || do_pids(x, res) < 0 || do_cpus(x, res) < 0)
    return -1;
  return 0;
}
