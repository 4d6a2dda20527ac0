/* events.c - `agentrt events [--stats] [--interval DURATION] ID`: runc-shaped
 * JSON lines: {"type":"stats","id":ID,"data":{...}} and {"type":"oom",...}. */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/util.h"
#include "container/container.h"
#include "container/process.h"

static const struct opt_spec events_specs[] = {
    {"stats", 0, false, 1},
    {"interval", 0, true, 2},
    {"help", 'h', false, 3},
    {NULL, 0, false, 0},
};

/* A Go duration, as runc parses it and go-runc writes it (Duration.String:
 * "1m0s", "1h0m0s", "1.5s", "500ms"): [+]?(N[.N]UNIT)+ with the units ns,
 * us (µs, μs), ms, s, m, h; also a bare number, in seconds (agentrt's).
 * Milliseconds, at least 1 (poll's granularity), at most INT_MAX.
 * (events-interval-duration) */
static int parse_interval(const char *s, int *ret_ms, struct error *err)
{
  static const struct {
    const char *name;
    double ms;
  } units[] = {{"ns", 1e-6}, {"us", 1e-3}, {"\xc2\xb5s", 1e-3}, {"\xce\xbcs", 1e-3},
               {"ms", 1},    {"s", 1e3},   {"m", 6e4},          {"h", 3.6e6}};
  const char *p = s;
  double total = 0;

  if (*p == '+')
    p++;
  if (*p == '\0')
    return error_set(err, 0, "events: --interval: invalid duration `%s`", s);
  while (*p != '\0') {
    double v = 0, scale = 1;
    bool digits = false;
    size_t best = 0, k = 0;

    for (; *p >= '0' && *p <= '9'; p++, digits = true)
      v = v * 10 + (*p - '0');
    if (*p == '.')
      for (p++; *p >= '0' && *p <= '9'; p++, digits = true)
        v += (*p - '0') * (scale /= 10);
    if (!digits)
      return error_set(err, 0, "events: --interval: invalid duration `%s`", s);
    if (*p == '\0' && p == s + strspn(s, "+0123456789.")) { /* a bare number: seconds */
      total = v * 1e3;
      break;
    }
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
      size_t n = strlen(units[i].name);
      if (strncmp(p, units[i].name, n) == 0 && n > best) {
        best = n;
        k = i;
      }
    }
    if (best == 0)
      return error_set(err, 0, "events: --interval: invalid duration `%s`", s);
    total += v * units[k].ms;
    p += best;
  }
  if (total <= 0)
    return error_set(err, 0, "events: --interval: must be greater than 0, got `%s`", s);
  if (total > (double)INT_MAX)
    return error_set(err, 0, "events: --interval: out of range `%s`", s);
  *ret_ms = total < 1 ? 1 : (int)total;
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

/* A pidfd of the container's init, checked against its start time after
 * the open (pid reuse), or -1 when it is gone. */
static int init_pidfd(const struct container *c)
{
  int fd = (int)syscall(SYS_pidfd_open, c->state->pid, 0);

  if (fd >= 0 && !proc_alive(c->state->pid, c->state->pid_start_time)) {
    close(fd);
    fd = -1;
  }
  return fd;
}

static long long now_ms(void)
{
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void print_oom(const struct container *c)
{
  printf("{\"type\":\"oom\",\"id\":\"%s\"}\n", c->id);
  fflush(stdout);
}

/* An `oom` line when the cgroup's OOM kill count went past *ooms. */
static bool oom_told(struct container *c, uint64_t *ooms, struct error *err)
{
  uint64_t now = 0;
  bool told = cgroup_oom_count(c->cgroup, &now, err) == 0 && now > *ooms;

  error_clear(err);
  if (told) {
    print_oom(c);
    *ooms = now;
  }
  return told;
}

int cmd_events(const struct global_opts *g, int argc, char **argv, struct error *err)
{
  struct opt_iter it = {argc, argv, 1};
  struct container *c = NULL;
  bool stats = false;
  int interval_ms = 5000, pidfd = -1, oomfd = -1, id, n, ret = -1;
  long long next;
  uint64_t ooms = 0;
  const char *val;

  opt_permute(&it, events_specs);
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
  /* events-oom-at-once: an OOM is told when the kernel records it, as
   * runc's; without a watch (no memory controller) at each interval.  The
   * watch before the count it is compared with: an OOM between the two
   * would be in neither (the eventfd tells only what comes after it) */
  oomfd = cgroup_oom_watch(c->cgroup, err);
  error_clear(err);
  cgroup_oom_count(c->cgroup, &ooms, err);
  error_clear(err);
  pidfd = init_pidfd(c);
  /* as runc's ticker: the first sample one interval in (events-first-after-interval);
   * the init's exit ends the wait at once, not at the interval's end */
  next = now_ms() + interval_ms;
  for (;;) {
    struct pollfd p[2] = {{.fd = pidfd, .events = POLLIN}, {.fd = oomfd, .events = POLLIN}};
    long long left = next - now_ms();
    int r = poll(p, 2, left < 0 ? 0 : (int)left);
    bool woke = false;
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0 || (p[0].revents & POLLIN) || container_refresh_status(c) == STATUS_STOPPED)
      break;
    if (r == 0) {
      if (print_stats(c, err) < 0)
        goto out;
      next += interval_ms;
      if (next < now_ms())
        next = now_ms() + interval_ms;
    } else if (p[1].revents != 0) {
      cgroup_oom_watch_drain(oomfd);
      woke = true;
      if (p[1].revents & (POLLERR | POLLHUP | POLLNVAL)) {
        close(oomfd);
        oomfd = -1;
      }
    }
    /* v1's eventfd fires as the OOM begins, before its kill is counted
     * (oom_kill): without a second look the line came only at the next
     * interval (events-oom-at-once); a wake-up that was no OOM (v2's
     * memory.events also counts `max`) costs these looks, 255 ms at most */
    if (!oom_told(c, &ooms, err) && woke) {
      uint64_t now = 0;
      int ms;
      for (ms = 1; ms <= 128 && !oom_told(c, &ooms, err); ms *= 2)
        nanosleep(&(struct timespec){0, ms * 1000000L}, NULL);
      /* v1's eventfd is signalled by an OOM only (or the cgroup's end, when
       * oom_control is gone): one that killed nothing (disableOOMKiller: the
       * container waits under OOM) is told too, as runc's (events-oom-disabled) */
      if (ms > 128 && cgroup_manager_version(c->cgroup) == 1 &&
          cgroup_oom_count(c->cgroup, &now, err) == 0)
        print_oom(c);
      error_clear(err);
    }
  }
  ret = 0;
out:
  if (pidfd >= 0)
    close(pidfd);
  if (oomfd >= 0)
    close(oomfd);
  container_free(c);
  return ret;
}
