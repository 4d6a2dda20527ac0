/* linux.c - namespaces, devices, masked and read-only paths.
 *
 * Namespaces: the profile's required types must not be the host's.  A missing
 * network or pid entry means the host's (`--network host`, `--pid host`) and
 * is refused; the other missing ones get a new namespace.  A path entry
 * (Kubernetes and Podman pass the pod's namespaces by path) is allowed for the
 * joinable types and recorded; the runtime then checks by inode that it is not
 * its own (profile_result.check_joined_ns).  Paths of pid 1's or our own
 * namespaces are refused outright.
 * Devices: only the default set (H7); device cgroup rules granting read/write
 * beyond it are removed, an allow-all rule (`--privileged`) is refused.
 */
#include <stdio.h>

#include "profile/internal.h"

#include "common/util.h"

static struct oci_linux *linux_of(struct oci_config *c)
{
  if (c->linux == NULL)
    c->linux = xmalloc0(sizeof *c->linux);
  return c->linux;
}

static bool host_ns_path(const char *path)
{
  static const char *const host[] = {"/proc/1/ns/", "/proc/self/ns/", "/proc/thread-self/ns/"};
  cleanup_free char *n = path_normalize(path);

  for (size_t i = 0; i < ARRAY_SIZE(host); i++)
    if (str_has_prefix(n, host[i]))
      return true;
  return false;
}

static int check_joined(struct apply_ctx *x, const struct oci_namespace *ns)
{
  const char *name = oci_ns_name(ns->type);
  unsigned bit = 1u << ns->type;
  cleanup_free char *field = xfmt("linux.namespaces[%s]", name);

  if (!(x->p->namespaces.required & bit))
    return 0;
  if (host_ns_path(ns->path))
    return profile_refuse(x, "joining the host %s namespace (`%s`) is not allowed", name, ns->path);
  if (!(x->p->namespaces.joinable & bit))
    return profile_refuse(x, "joining an existing %s namespace (`%s`) is not allowed", name,
                          ns->path);
  x->r->check_joined_ns = true;
  profile_change_add(x, PROFILE_CHANGE_RUNTIME, field, ns->path, ns->path,
                     "joined by path (a pod's namespace); checked at create not to be the host's");
  return 0;
}

int profile_apply_namespaces(struct apply_ctx *x)
{
  unsigned required = x->p->namespaces.required, seen = 0;
  struct oci_linux *l;

  if (required == 0)
    return 0;
  l = linux_of(x->c);
  for (size_t i = 0; i < l->n_namespaces; i++) {
    seen |= 1u << l->namespaces[i].type;
    if (l->namespaces[i].path != NULL && check_joined(x, &l->namespaces[i]) < 0)
      return -1;
  }
  if ((required & ~seen) & (1u << OCI_NS_NETWORK))
    return profile_refuse(x, "joining the host network namespace is not allowed");
  if ((required & ~seen) & (1u << OCI_NS_PID))
    return profile_refuse(x, "joining the host pid namespace is not allowed");
  /* the host's System V and POSIX message queues and shared memory */
  if ((required & ~seen) & (1u << OCI_NS_IPC))
    return profile_refuse(x, "joining the host ipc namespace is not allowed");
  for (int t = 0; t < OCI_NS_COUNT; t++) {
    cleanup_free char *field = NULL;

    if (!((required & ~seen) & (1u << t)))
      continue;
    l->namespaces = xrealloc(l->namespaces, (l->n_namespaces + 1) * sizeof *l->namespaces);
    l->namespaces[l->n_namespaces++] = (struct oci_namespace){.type = (enum oci_ns_type)t};
    field = xfmt("linux.namespaces[%s]", oci_ns_name((enum oci_ns_type)t));
    profile_change_add(x, PROFILE_CHANGE_CONFIG, field, "host", "new",
                       "a new %s namespace instead of the host's",
                       oci_ns_name((enum oci_ns_type)t));
  }
  return 0;
}

struct devdef {
  const char *path;
  int64_t major, minor;
};

static const struct devdef default_devices[] = {
    {"/dev/null", 1, 3},    {"/dev/zero", 1, 5}, {"/dev/full", 1, 7},    {"/dev/random", 1, 8},
    {"/dev/urandom", 1, 9}, {"/dev/tty", 5, 0},  {"/dev/console", 5, 1}, {"/dev/ptmx", 5, 2},
};

static bool default_device(int64_t major, int64_t minor)
{
  for (size_t i = 0; i < ARRAY_SIZE(default_devices); i++)
    if (default_devices[i].major == major && default_devices[i].minor == minor)
      return true;
  return false;
}

/* A memory device (null, zero, full, random, urandom: no state of their own)
 * at another path below /dev, as Docker's --device /dev/null:/dev/mynull
 * gives it.  Not the tty or ptmx (what those open depends on where they
 * are), nor a path outside /dev (a node in the workspace reaches the host). */
static bool memory_device_below_dev(const struct oci_device *d)
{
  return d->type == 'c' && d->major == 1 && default_device(d->major, d->minor) && d->path != NULL &&
         strncmp(d->path, "/dev/", 5) == 0 && d->path[5] != '\0' &&
         strstr(d->path, "/..") == NULL && strstr(d->path, "/./") == NULL &&
         strstr(d->path, "//") == NULL;
}

static int check_device_nodes(struct apply_ctx *x, const struct oci_linux *l)
{
  for (size_t i = 0; i < l->n_devices; i++) {
    const struct oci_device *d = &l->devices[i];
    bool ok = memory_device_below_dev(d);

    for (size_t j = 0; j < ARRAY_SIZE(default_devices) && !ok; j++)
      ok = d->type == 'c' && streq(d->path, default_devices[j].path) &&
           d->major == default_devices[j].major && d->minor == default_devices[j].minor;
    if (!ok)
      return profile_refuse(
          x,
          "linux.devices[%zu]: host device `%s` (%c %" PRId64 ":%" PRId64
          ") is not allowed; only null, zero, full, random, urandom, tty, console "
          "and ptmx (the first five also at another path below /dev)",
          i, d->path ? d->path : "", d->type ? d->type : '?', d->major, d->minor);
  }
  return 0;
}

static bool rule_grants_rw(const struct oci_device_cgroup *r)
{
  const char *acc = r->access ? r->access : "rwm";

  return r->allow && (strchr(acc, 'r') != NULL || strchr(acc, 'w') != NULL);
}

/* Read/write access the default devices need: c 1:3 ... and /dev/pts (136:*). */
static bool rule_is_default(const struct oci_device_cgroup *r)
{
  if (r->type != 'c' || !r->has_major)
    return false;
  if (r->major == 136 && !r->has_minor)
    return true;
  return r->has_minor && default_device(r->major, r->minor);
}

static char *rule_text(const struct oci_device_cgroup *r)
{
  char maj[24] = "*", min[24] = "*";

  if (r->has_major)
    snprintf(maj, sizeof maj, "%" PRId64, r->major);
  if (r->has_minor)
    snprintf(min, sizeof min, "%" PRId64, r->minor);
  return xfmt("%s %c %s:%s %s", r->allow ? "allow" : "deny", r->type ? r->type : 'a', maj, min,
              r->access ? r->access : "rwm");
}

static bool is_deny_all(const struct oci_device_cgroup *r)
{
  return !r->allow && (r->type == 0 || r->type == 'a') && !r->has_major && !r->has_minor &&
         (r->access == NULL ||
          (strchr(r->access, 'r') && strchr(r->access, 'w') && strchr(r->access, 'm')));
}

static int apply_device_rules(struct apply_ctx *x, struct oci_resources *res)
{
  size_t o = 0;

  for (size_t i = 0; i < res->n_devices; i++) {
    struct oci_device_cgroup *r = &res->devices[i];
    cleanup_free char *text = rule_text(r);

    if (rule_grants_rw(r) && (r->type == 0 || r->type == 'a' || !r->has_major))
      return profile_refuse(
          x, "linux.resources.devices[%zu]: `%s` gives access to every host device", i, text);
    if (rule_grants_rw(r) && !rule_is_default(r)) {
      profile_change_add(x, PROFILE_CHANGE_CONFIG, "linux.resources.devices", text, NULL,
                         "access to devices beyond the default set is removed");
      free(r->access);
      continue;
    }
    res->devices[o++] = *r;
  }
  res->n_devices = o;
  if (o > 0 && is_deny_all(&res->devices[0]))
    return 0;
  res->devices = xrealloc(res->devices, (o + 1) * sizeof *res->devices);
  memmove(res->devices + 1, res->devices, o * sizeof *res->devices);
  res->devices[0] =
      (struct oci_device_cgroup){.allow = false, .type = 'a', .access = xstrdup("rwm")};
  res->n_devices = o + 1;
  profile_change_add(x, PROFILE_CHANGE_CONFIG, "linux.resources.devices", NULL, "deny a *:* rwm",
                     "device access starts from deny-all");
  return 0;
}

int profile_apply_devices(struct apply_ctx *x)
{
  struct oci_linux *l;

  if (!x->p->devices_restrict)
    return 0;
  l = linux_of(x->c);
  if (check_device_nodes(x, l) < 0)
    return -1;
  if (l->resources == NULL)
    l->resources = xmalloc0(sizeof *l->resources);
  return apply_device_rules(x, l->resources);
}

static char *join_paths(char **v)
{
  char *s = NULL;

  for (size_t i = 0; v != NULL && v[i] != NULL; i++) {
    char *prev = s;
    s = prev ? xfmt("%s %s", prev, v[i]) : xstrdup(v[i]);
    free(prev);
  }
  return s;
}

static void union_paths(struct apply_ctx *x, char ***dst, char **add, const char *field,
                        const char *reason)
{
  cleanup_free char *old = join_paths(*dst);
  cleanup_free char *now = NULL;
  bool changed = false;

  for (size_t i = 0; add != NULL && add[i] != NULL; i++) {
    if (strv_contains(*dst, add[i]))
      continue;
    strv_push(dst, add[i]);
    changed = true;
  }
  if (!changed)
    return;
  now = join_paths(*dst);
  profile_change_add(x, PROFILE_CHANGE_CONFIG, field, old, now, "%s", reason);
}

int profile_apply_masks(struct apply_ctx *x)
{
  struct oci_linux *l;

  if (x->p->masked_paths == NULL && x->p->readonly_paths == NULL)
    return 0;
  l = linux_of(x->c);
  union_paths(x, &l->masked_paths, x->p->masked_paths, "linux.maskedPaths",
              "kernel information and interfaces hidden from the container");
  union_paths(x, &l->readonly_paths, x->p->readonly_paths, "linux.readonlyPaths",
              "kernel tunables kept read-only");
  return 0;
}
