/* systemd.c - the --systemd-cgroup driver: the container's cgroup is a
 * transient systemd unit, made and changed over D-Bus with libsystemd's
 * sd-bus (org.freedesktop.systemd1.Manager), as runc and crun do.
 *
 * A scope needs a process when it is started, so the unit is made by
 * cgroup_add_pid() once the init exists (it then waits in the parent's
 * cgroup; spawn.c does not clone into the cgroup here):
 * StartTransientUnit(unit, "replace", {Description, Slice, Delegate=yes,
 * DefaultDependencies=no, *Accounting=yes, PIDs=[init], the limits of
 * systemd_props.c}), then wait for the job's JobRemoved signal.  Slices
 * named in the path are made by systemd itself (implicit units).  `update`
 * is SetUnitProperties(unit, runtime=true, ...), `delete` StopUnit.
 *
 * libsystemd is loaded with dlopen() on first use: agentrt links its other
 * libraries statically for start-up time, and only this driver needs it.
 * Every call is bounded (SD_TIMEOUT_USEC).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <time.h>
#include <unistd.h>

#include "cgroups/internal.h"
#include "common/log.h"
#include "common/util.h"

#define SD_DEST "org.freedesktop.systemd1"
#define SD_PATH "/org/freedesktop/systemd1"
#define SD_MANAGER "org.freedesktop.systemd1.Manager"
#define SD_TIMEOUT_USEC (30ULL * 1000000)
#define SD_PRIVATE "unix:path=/run/systemd/private"

struct cgroup_sd_bus {
  void *lib;
  sd_bus *bus;
  int (*open_system)(sd_bus **);
  int (*open_user)(sd_bus **);
  int (*bus_new)(sd_bus **);
  int (*set_address)(sd_bus *, const char *);
  int (*start)(sd_bus *);
  int (*new_method_call)(sd_bus *, sd_bus_message **, const char *, const char *, const char *,
                         const char *);
  int (*append)(sd_bus_message *, const char *, ...);
  int (*open_container)(sd_bus_message *, char, const char *);
  int (*close_container)(sd_bus_message *);
  int (*call)(sd_bus *, sd_bus_message *, uint64_t, sd_bus_error *, sd_bus_message **);
  int (*read)(sd_bus_message *, const char *, ...);
  void (*error_free)(sd_bus_error *);
  int (*error_has_name)(const sd_bus_error *, const char *);
  int (*match_signal)(sd_bus *, sd_bus_slot **, const char *, const char *, const char *,
                      const char *, sd_bus_message_handler_t, void *);
  int (*process)(sd_bus *, sd_bus_message **);
  int (*wait)(sd_bus *, uint64_t);
  sd_bus_message *(*message_unref)(sd_bus_message *);
  sd_bus_slot *(*slot_unref)(sd_bus_slot *);
  sd_bus *(*flush_close_unref)(sd_bus *);
};

static const struct {
  const char *name;
  size_t off;
} syms[] = {
    {"sd_bus_open_system", offsetof(struct cgroup_sd_bus, open_system)},
    {"sd_bus_open_user", offsetof(struct cgroup_sd_bus, open_user)},
    {"sd_bus_new", offsetof(struct cgroup_sd_bus, bus_new)},
    {"sd_bus_set_address", offsetof(struct cgroup_sd_bus, set_address)},
    {"sd_bus_start", offsetof(struct cgroup_sd_bus, start)},
    {"sd_bus_message_new_method_call", offsetof(struct cgroup_sd_bus, new_method_call)},
    {"sd_bus_message_append", offsetof(struct cgroup_sd_bus, append)},
    {"sd_bus_message_open_container", offsetof(struct cgroup_sd_bus, open_container)},
    {"sd_bus_message_close_container", offsetof(struct cgroup_sd_bus, close_container)},
    {"sd_bus_call", offsetof(struct cgroup_sd_bus, call)},
    {"sd_bus_message_read", offsetof(struct cgroup_sd_bus, read)},
    {"sd_bus_error_free", offsetof(struct cgroup_sd_bus, error_free)},
    {"sd_bus_error_has_name", offsetof(struct cgroup_sd_bus, error_has_name)},
    {"sd_bus_match_signal", offsetof(struct cgroup_sd_bus, match_signal)},
    {"sd_bus_process", offsetof(struct cgroup_sd_bus, process)},
    {"sd_bus_wait", offsetof(struct cgroup_sd_bus, wait)},
    {"sd_bus_message_unref", offsetof(struct cgroup_sd_bus, message_unref)},
    {"sd_bus_slot_unref", offsetof(struct cgroup_sd_bus, slot_unref)},
    {"sd_bus_flush_close_unref", offsetof(struct cgroup_sd_bus, flush_close_unref)},
};

static int load_lib(struct cgroup_sd_bus *b, struct error *err)
{
  b->lib = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL);
  if (b->lib == NULL)
    return cg_fail(err, ENOENT, "cgroup: --systemd-cgroup needs libsystemd.so.0: %s", dlerror());
  for (size_t i = 0; i < ARRAY_SIZE(syms); i++) {
    void *f = dlsym(b->lib, syms[i].name);

    if (f == NULL)
      return cg_fail(err, ENOENT, "cgroup: libsystemd.so.0 has no %s", syms[i].name);
    memcpy((char *)b + syms[i].off, &f, sizeof f);
  }
  return 0;
}

/* The system bus; as root without a bus daemon, systemd's private socket. */
static int open_bus(struct cgroup_sd_bus *b, bool rootless)
{
  int r;

  if (rootless)
    return b->open_user(&b->bus);
  r = b->open_system(&b->bus);
  if (r >= 0 || access("/run/systemd/private", F_OK) != 0)
    return r;
  if ((r = b->bus_new(&b->bus)) < 0)
    return r;
  if ((r = b->set_address(b->bus, SD_PRIVATE)) < 0 || (r = b->start(b->bus)) < 0) {
    b->bus = b->flush_close_unref(b->bus);
    return r;
  }
  return 0;
}

static void bus_free(struct cgroup_sd_bus *b)
{
  if (b->bus)
    b->flush_close_unref(b->bus);
  if (b->lib)
    dlclose(b->lib);
  free(b);
}

/* err from a failed call: "cgroup: systemd `unit`: what: message". */
static int bus_fail(struct cgroup_manager *m, const char *what, int r, const sd_bus_error *e,
                    struct error *err)
{
  if (e != NULL && e->message != NULL)
    return cg_fail(err, -r > 0 ? -r : EIO, "cgroup: systemd unit `%s`: %s: %s", m->sd_unit, what,
                   e->message);
  return error_set(err, -r, "cgroup: systemd unit `%s`: %s", m->sd_unit, what);
}

static int ping(struct cgroup_sd_bus *b, sd_bus_error *e)
{
  sd_bus_message *msg = NULL, *reply = NULL;
  int r = b->new_method_call(b->bus, &msg, SD_DEST, SD_PATH, "org.freedesktop.DBus.Peer", "Ping");

  if (r >= 0)
    r = b->call(b->bus, msg, SD_TIMEOUT_USEC, e, &reply);
  if (msg)
    b->message_unref(msg);
  if (reply)
    b->message_unref(reply);
  return r;
}

int cg_sd_connect(struct cgroup_manager *m, struct error *err)
{
  struct cgroup_sd_bus *b;
  sd_bus_error e = SD_BUS_ERROR_NULL;
  int r;

  if (m->sd_bus != NULL)
    return 0;
  b = xmalloc0(sizeof *b);
  if (load_lib(b, err) < 0) {
    bus_free(b);
    return -1;
  }
  r = open_bus(b, m->rootless);
  if (r < 0) {
    bus_free(b);
    /* no socket: said without ENOENT's text, which engines read as a missing
     * program (Podman: "command not found", exit status 127) */
    if (r == -ENOENT || r == -ECONNREFUSED)
      return cg_fail(err, -r,
                     "cgroup: --systemd-cgroup: cannot reach systemd over D-Bus (no %s bus: "
                     "systemd is not running here); leave out --systemd-cgroup (cgroupfs)",
                     m->rootless ? "user" : "system");
    return cg_fail(err, -r,
                   "cgroup: --systemd-cgroup: cannot reach systemd over D-Bus (%s bus: %s); "
                   "where systemd does not run, leave out --systemd-cgroup (cgroupfs)",
                   m->rootless ? "user" : "system", strerror(-r));
  }
  r = ping(b, &e);
  if (r < 0) {
    error_set(err, 0,
              "cgroup: --systemd-cgroup: systemd does not answer on D-Bus: %s; where systemd "
              "does not run, leave out --systemd-cgroup (cgroupfs)",
              e.message ? e.message : strerror(-r));
    err->code = -r;
    b->error_free(&e);
    bus_free(b);
    return -1;
  }
  m->sd_bus = b;
  return 0;
}

void cg_sd_close(struct cgroup_manager *m)
{
  if (m->sd_bus)
    bus_free(m->sd_bus);
  m->sd_bus = NULL;
}

static int append_props(struct cgroup_sd_bus *b, sd_bus_message *msg, int version,
                        const struct oci_resources *r)
{
  struct cgroup_sd_prop props[CGROUP_SD_PROPS_MAX];
  size_t n = cgroup_systemd_props(r, version, props, ARRAY_SIZE(props));
  int ret = 0;

  for (size_t i = 0; i < n && ret >= 0; i++)
    ret = b->append(msg, "(sv)", props[i].name, "t", props[i].value);
  return ret;
}

static bool is_slice(const char *unit)
{
  size_t n = strlen(unit);

  return n > 6 && streq(unit + n - 6, ".slice");
}

static int start_message(struct cgroup_manager *m, pid_t pid, const struct oci_resources *res,
                         sd_bus_message *msg)
{
  struct cgroup_sd_bus *b = m->sd_bus;
  cleanup_free char *desc = xfmt("agentrt container %s", m->sd_unit);
  int r = b->append(msg, "ss", m->sd_unit, "replace");

  if (r >= 0)
    r = b->open_container(msg, 'a', "(sv)");
  if (r >= 0)
    r = b->append(msg, "(sv)(sv)(sv)", "Description", "s", desc, "Delegate", "b", 1,
                  "DefaultDependencies", "b", 0);
  if (r >= 0 && !is_slice(m->sd_unit))
    r = b->append(msg, "(sv)(sv)", "Slice", "s", m->sd_slice, "PIDs", "au", 1, (uint32_t)pid);
  if (r >= 0)
    r = b->append(msg, "(sv)(sv)(sv)", "MemoryAccounting", "b", 1, "CPUAccounting", "b", 1,
                  "TasksAccounting", "b", 1);
  if (r >= 0)
    r = b->append(msg, "(sv)", m->version == 2 ? "IOAccounting" : "BlockIOAccounting", "b", 1);
  if (r >= 0)
    r = append_props(b, msg, m->version, res);
  if (r >= 0)
    r = b->close_container(msg);
  if (r >= 0)
    r = b->append(msg, "a(sa(sv))", 0);
  return r;
}

/* What on_job_removed looks for and found. */
struct job_wait {
  struct cgroup_sd_bus *b;
  const char *unit;
  bool done;
  char result[32];
};

/* Manager.JobRemoved(u id, o job, s unit, s result) of our unit. */
static int on_job_removed(sd_bus_message *msg, void *userdata, sd_bus_error *ret_error)
{
  struct job_wait *w = userdata;
  const char *path = NULL, *unit = NULL, *result = NULL;
  uint32_t id = 0;

  if (w->b->read(msg, "uoss", &id, &path, &unit, &result) < 0 || unit == NULL)
    return 0;
  if (streq(unit, w->unit)) {
    w->done = true;
    snprintf(w->result, sizeof w->result, "%s", result ? result : "");
  }
  return 0;
}

static uint64_t now_usec(void)
{
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* Run sd-bus until w->done or the deadline. */
static int wait_job(struct cgroup_manager *m, struct job_wait *w, const char *what,
                    struct error *err)
{
  struct cgroup_sd_bus *b = m->sd_bus;
  uint64_t deadline = now_usec() + SD_TIMEOUT_USEC;

  while (!w->done) {
    uint64_t now;
    int r = b->process(b->bus, NULL);

    if (r < 0)
      return bus_fail(m, what, r, NULL, err);
    if (r > 0)
      continue;
    now = now_usec();
    if (now >= deadline)
      return cg_fail(err, ETIMEDOUT, "cgroup: systemd unit `%s`: %s: no answer in %llu s",
                     m->sd_unit, what, SD_TIMEOUT_USEC / 1000000);
    r = b->wait(b->bus, deadline - now);
    if (r < 0 && r != -EINTR)
      return bus_fail(m, what, r, NULL, err);
  }
  if (!streq(w->result, "done"))
    return cg_fail(err, EIO, "cgroup: systemd unit `%s`: %s: job %s", m->sd_unit, what, w->result);
  return 0;
}

/* Call Manager.method (StartTransientUnit: start_message(); else the unit
 * name and "replace"), then wait for the unit's job. */
static int call_job(struct cgroup_manager *m, const char *method, pid_t pid,
                    const struct oci_resources *res, struct error *err)
{
  struct cgroup_sd_bus *b = m->sd_bus;
  struct job_wait w = {.b = b, .unit = m->sd_unit};
  sd_bus_error e = SD_BUS_ERROR_NULL;
  sd_bus_message *msg = NULL, *reply = NULL;
  sd_bus_slot *slot = NULL;
  int r, ret = -1;

  r = b->match_signal(b->bus, &slot, SD_DEST, SD_PATH, SD_MANAGER, "JobRemoved", on_job_removed,
                      &w);
  if (r >= 0)
    r = b->new_method_call(b->bus, &msg, SD_DEST, SD_PATH, SD_MANAGER, method);
  if (r >= 0)
    r = streq(method, "StartTransientUnit") ? start_message(m, pid, res, msg)
                                            : b->append(msg, "ss", m->sd_unit, "replace");
  if (r < 0) {
    bus_fail(m, method, r, NULL, err);
    goto out;
  }
  r = b->call(b->bus, msg, SD_TIMEOUT_USEC, &e, &reply);
  if (r < 0) {
    if (streq(method, "StopUnit") &&
        (b->error_has_name(&e, "org.freedesktop.systemd1.NoSuchUnit") ||
         b->error_has_name(&e, "org.freedesktop.systemd1.LoadFailed")))
      ret = 0; /* already gone */
    else
      bus_fail(m, method, r, &e, err);
    goto out;
  }
  ret = wait_job(m, &w, method, err);
out:
  b->error_free(&e);
  if (msg)
    b->message_unref(msg);
  if (reply)
    b->message_unref(reply);
  if (slot)
    b->slot_unref(slot);
  return ret;
}

int cg_sd_start(struct cgroup_manager *m, pid_t pid, const struct oci_resources *r,
                struct error *err)
{
  if (cg_sd_connect(m, err) < 0)
    return -1;
  return call_job(m, "StartTransientUnit", pid, r, err);
}

int cg_sd_stop(struct cgroup_manager *m, struct error *err)
{
  if (cg_sd_connect(m, err) < 0)
    return -1;
  return call_job(m, "StopUnit", 0, NULL, err);
}

int cg_sd_set(struct cgroup_manager *m, const struct oci_resources *res, struct error *err)
{
  struct cgroup_sd_bus *b;
  sd_bus_error e = SD_BUS_ERROR_NULL;
  sd_bus_message *msg = NULL, *reply = NULL;
  int r;

  if (res == NULL)
    return 0;
  if (cg_sd_connect(m, err) < 0)
    return -1;
  b = m->sd_bus;
  r = b->new_method_call(b->bus, &msg, SD_DEST, SD_PATH, SD_MANAGER, "SetUnitProperties");
  if (r >= 0)
    r = b->append(msg, "sb", m->sd_unit, 1);
  if (r >= 0)
    r = b->open_container(msg, 'a', "(sv)");
  if (r >= 0)
    r = append_props(b, msg, m->version, res);
  if (r >= 0)
    r = b->close_container(msg);
  if (r >= 0)
    r = b->call(b->bus, msg, SD_TIMEOUT_USEC, &e, &reply);
  if (r < 0)
    bus_fail(m, "SetUnitProperties", r, &e, err);
  b->error_free(&e);
  if (msg)
    b->message_unref(msg);
  if (reply)
    b->message_unref(reply);
  return r < 0 ? -1 : 0;
}
