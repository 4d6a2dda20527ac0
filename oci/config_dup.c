/* config_dup.c - deep copy of struct oci_config (every field of config.h).
 *
 * profile_apply() never modifies the engine's config: it works on a copy, so
 * that `explain` can compare the two.  Everything is copied, including fields
 * the profile never touches, because oci_config_free() frees them all.
 *
 * Field by field, because it runs at every create: a copy by serialising and
 * parsing again costs 0.1-0.5 ms (the parser's checks), this one 5-25 us.  A
 * heap field forgotten here would be shared by both configs (a double free):
 * tests/unit/test_oci_config.c frees the original before it reads the copy
 * of a fixture that sets every field, and its struct-size tripwire fails
 * when a field is added, until the field is copied, freed, serialised, parsed
 * and set in the fixture.
 */
#include <string.h>

#include "common/util.h"
#include "oci/config.h"

/* strv_dup() turns NULL into an empty vector; a copy must keep "absent". */
static char **vdup(char *const *v)
{
  return v ? strv_dup(v) : NULL;
}

#define DUP_ARRAY(dst, src, n)                                                                     \
  ((n) ? memcpy(xmalloc((n) * sizeof *(src)), (src), (n) * sizeof *(src)) : NULL)

static struct oci_kv *kv_dup(const struct oci_kv *kv, size_t n)
{
  struct oci_kv *r = DUP_ARRAY(r, kv, n);

  for (size_t i = 0; i < n; i++) {
    r[i].key = xstrdup(kv[i].key);
    r[i].value = xstrdup(kv[i].value);
  }
  return r;
}

static void process_copy(struct oci_process *d, const struct oci_process *s)
{
  *d = *s;
  d->cwd = xstrdup(s->cwd);
  d->env = vdup(s->env);
  d->args = vdup(s->args);
  d->user.additional_gids =
      DUP_ARRAY(d->user.additional_gids, s->user.additional_gids, s->user.n_additional_gids);
  d->user.username = xstrdup(s->user.username);
  d->rlimits = DUP_ARRAY(d->rlimits, s->rlimits, s->n_rlimits);
  for (size_t i = 0; i < s->n_rlimits; i++)
    d->rlimits[i].type = xstrdup(s->rlimits[i].type);
  d->apparmor_profile = xstrdup(s->apparmor_profile);
  d->selinux_label = xstrdup(s->selinux_label);
  d->exec_cpu_initial = xstrdup(s->exec_cpu_initial);
  d->exec_cpu_final = xstrdup(s->exec_cpu_final);
}

static struct oci_mount *mounts_dup(const struct oci_mount *m, size_t n)
{
  struct oci_mount *r = DUP_ARRAY(r, m, n);

  for (size_t i = 0; i < n; i++) {
    r[i].destination = xstrdup(m[i].destination);
    r[i].type = xstrdup(m[i].type);
    r[i].source = xstrdup(m[i].source);
    r[i].options = vdup(m[i].options);
    r[i].uid_mappings = DUP_ARRAY(r[i].uid_mappings, m[i].uid_mappings, m[i].n_uid_mappings);
    r[i].gid_mappings = DUP_ARRAY(r[i].gid_mappings, m[i].gid_mappings, m[i].n_gid_mappings);
  }
  return r;
}

static void hooks_copy(struct oci_hooks *d, const struct oci_hooks *s)
{
  for (int k = 0; k < OCI_HOOK_KINDS; k++) {
    size_t n = s->n[k];

    d->n[k] = n;
    d->list[k] = DUP_ARRAY(d->list[k], s->list[k], n);
    for (size_t i = 0; i < n; i++) {
      d->list[k][i].path = xstrdup(s->list[k][i].path);
      d->list[k][i].args = vdup(s->list[k][i].args);
      d->list[k][i].env = vdup(s->list[k][i].env);
    }
  }
}

static struct oci_resources *resources_dup(const struct oci_resources *s)
{
  struct oci_resources *d = xmalloc(sizeof *d);

  *d = *s;
  d->devices = DUP_ARRAY(d->devices, s->devices, s->n_devices);
  for (size_t i = 0; i < s->n_devices; i++)
    d->devices[i].access = xstrdup(s->devices[i].access);
  d->cpu_cpus = xstrdup(s->cpu_cpus);
  d->cpu_mems = xstrdup(s->cpu_mems);
  d->blkio_weight_device =
      DUP_ARRAY(d->blkio_weight_device, s->blkio_weight_device, s->n_blkio_weight_device);
  d->throttle_read_bps =
      DUP_ARRAY(d->throttle_read_bps, s->throttle_read_bps, s->n_throttle_read_bps);
  d->throttle_write_bps =
      DUP_ARRAY(d->throttle_write_bps, s->throttle_write_bps, s->n_throttle_write_bps);
  d->throttle_read_iops =
      DUP_ARRAY(d->throttle_read_iops, s->throttle_read_iops, s->n_throttle_read_iops);
  d->throttle_write_iops =
      DUP_ARRAY(d->throttle_write_iops, s->throttle_write_iops, s->n_throttle_write_iops);
  d->hugepage_limits = DUP_ARRAY(d->hugepage_limits, s->hugepage_limits, s->n_hugepage_limits);
  for (size_t i = 0; i < s->n_hugepage_limits; i++)
    d->hugepage_limits[i].page_size = xstrdup(s->hugepage_limits[i].page_size);
  d->net_priorities = DUP_ARRAY(d->net_priorities, s->net_priorities, s->n_net_priorities);
  for (size_t i = 0; i < s->n_net_priorities; i++)
    d->net_priorities[i].name = xstrdup(s->net_priorities[i].name);
  d->unified = kv_dup(s->unified, s->n_unified);
  return d;
}

struct oci_seccomp *oci_seccomp_dup(const struct oci_seccomp *s)
{
  struct oci_seccomp *d;

  if (s == NULL)
    return NULL;
  d = xmalloc(sizeof *d);
  *d = *s;
  d->default_action = xstrdup(s->default_action);
  d->architectures = vdup(s->architectures);
  d->flags = vdup(s->flags);
  d->listener_path = xstrdup(s->listener_path);
  d->listener_metadata = xstrdup(s->listener_metadata);
  d->syscalls = DUP_ARRAY(d->syscalls, s->syscalls, s->n_syscalls);
  for (size_t i = 0; i < s->n_syscalls; i++) {
    struct oci_seccomp_syscall *sc = &d->syscalls[i];

    sc->names = vdup(s->syscalls[i].names);
    sc->action = xstrdup(s->syscalls[i].action);
    sc->args = DUP_ARRAY(sc->args, s->syscalls[i].args, s->syscalls[i].n_args);
    for (size_t j = 0; j < sc->n_args; j++)
      sc->args[j].op = xstrdup(s->syscalls[i].args[j].op);
  }
  return d;
}

static struct oci_linux *linux_dup(const struct oci_linux *s)
{
  struct oci_linux *d = xmalloc(sizeof *d);

  *d = *s;
  d->namespaces = DUP_ARRAY(d->namespaces, s->namespaces, s->n_namespaces);
  for (size_t i = 0; i < s->n_namespaces; i++)
    d->namespaces[i].path = xstrdup(s->namespaces[i].path);
  d->uid_mappings = DUP_ARRAY(d->uid_mappings, s->uid_mappings, s->n_uid_mappings);
  d->gid_mappings = DUP_ARRAY(d->gid_mappings, s->gid_mappings, s->n_gid_mappings);
  d->time_offsets = DUP_ARRAY(d->time_offsets, s->time_offsets, s->n_time_offsets);
  for (size_t i = 0; i < s->n_time_offsets; i++)
    d->time_offsets[i].clock = xstrdup(s->time_offsets[i].clock);
  d->devices = DUP_ARRAY(d->devices, s->devices, s->n_devices);
  for (size_t i = 0; i < s->n_devices; i++)
    d->devices[i].path = xstrdup(s->devices[i].path);
  d->cgroups_path = xstrdup(s->cgroups_path);
  d->resources = s->resources ? resources_dup(s->resources) : NULL;
  d->rootfs_propagation = xstrdup(s->rootfs_propagation);
  d->masked_paths = vdup(s->masked_paths);
  d->readonly_paths = vdup(s->readonly_paths);
  d->mount_label = xstrdup(s->mount_label);
  d->sysctl = kv_dup(s->sysctl, s->n_sysctl);
  d->seccomp = oci_seccomp_dup(s->seccomp);
  d->personality_domain = xstrdup(s->personality_domain);
  return d;
}

struct oci_config *oci_config_dup(const struct oci_config *c)
{
  struct oci_config *d = xmalloc(sizeof *d);

  *d = *c;
  d->oci_version = xstrdup(c->oci_version);
  d->root_path = xstrdup(c->root_path);
  if (c->process) {
    d->process = xmalloc(sizeof *d->process);
    process_copy(d->process, c->process);
  }
  d->hostname = xstrdup(c->hostname);
  d->domainname = xstrdup(c->domainname);
  d->mounts = mounts_dup(c->mounts, c->n_mounts);
  hooks_copy(&d->hooks, &c->hooks);
  d->linux = c->linux ? linux_dup(c->linux) : NULL;
  d->annotations = kv_dup(c->annotations, c->n_annotations);
  return d;
}
