/* events.c - `agentrt events [--stats] [--interval Ns] ID`: runc-shaped
 * JSON lines: {"type":"stats","id":ID,"data":{...}} and {"type":"oom",...}. */
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "common/util.h"
#include "container/container.h"

static const struct opt_spec events_specs[] = {
    {"stats", 0, false, 1},
    {"interval", 0, true, 2},
    {"help", 'h', false, 3},
    {NULL, 0, false, 0},
};

/* "5s", "500ms", "1m", "2" (seconds) -> milliseconds */
static int parse_interval(const char *s, int *ret_ms, struct error *err)
{
  char *end = NULL;
  double v = strtod(s, &end);
  double mult = 1000;

  if (end == s || v <= 0)
    return error_set(err, 0, "events: --interval: invalid duration `%s`", s);
  if (strcmp(end, "ms") == 0)
    mult = 1;
  else if (strcmp(end, "s") == 0 || *end == '\0')
    mult = 1000;
  else if (strcmp(end, "m") == 0)
    mult = 60000;
  else
    return error_set(err, 0, "events: --interval: invalid duration `%s`", s);
  if (v * mult < 1 || v * mult > 86400000.0)
    return error_set(err, 0, "events: --interval: out of range `%s`", s);
  *ret_ms = (int)(v * mult);
  return 0;
}

static int print_stats(struct container *c, struct error *err)
{
  cleanup_free char *data = NULL;

  if (cgroup_stats_json(c->cgroup, &data, err) < 0)
    return -1;
  printf("{\"type\":\"stats\",\"id\":\"%s\",\"data\":%s}\n", c->id, data);
  fflush(stdout);
  return 0;
}

int cmd_events(const struct global_opts *g, int argc, char **argv, struct error *err)
{
  struct opt_iter it = {argc, argv, 1};
  struct container *c = NULL;
  bool stats = false;
  int interval_ms = 5000, id, n, ret = -1;
  uint64_t ooms = 0, now_ooms = 0;
  const char *val;

  while ((n = opt_next(&it, events_specs, &id, &val, "events", err)) == 1) {
    if (id == 1)
      stats = true;
    else if (id == 2) {
      if (parse_interval(val, &interval_ms, err) < 0)
        return -1;
    } else {
      printf("Usage: agentrt events [--stats] [--interval DURATION] ID\n");
      return 0;
    }
  }
  if (n < 0)
    return -1;
  if (argc - it.i != 1)
    return error_set(err, 0, "events: expected exactly one container id");
  if (container_load(g, argv[it.i], 0, &c, err) < 0)
    return -1;
  if (c->status == STATUS_STOPPED) {
    error_set(err, 0, "events `%s`: container not running", c->id);
    goto out;
  }
  if (container_cgroup(c, g, err) < 0)
    goto out;
  if (c->cgroup == NULL) {
    error_set(err, 0, "events `%s`: the container has no cgroup", c->id);
    goto out;
  }
  if (stats) {
    ret = print_stats(c, err);
    goto out;
  }
  cgroup_oom_count(c->cgroup, &ooms, err);
  error_clear(err);
  for (;;) {
    if (print_stats(c, err) < 0)
      goto out;
    if (cgroup_oom_count(c->cgroup, &now_ooms, err) == 0 && now_ooms > ooms) {
      printf("{\"type\":\"oom\",\"id\":\"%s\"}\n", c->id);
      fflush(stdout);
      ooms = now_ooms;
    }
    error_clear(err);
    poll(NULL, 0, interval_ms);
    if (container_refresh_status(c) == STATUS_STOPPED)
      break;
  }
  ret = 0;
out:
  container_free(c);
  return ret;
}
