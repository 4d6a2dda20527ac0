/* mounts.c - engine sockets, other host binds, and the scratch tmpfs mounts.
 *
 * - A bind whose source is an engine socket, or a directory above one
 *   (`-v /:/host`, `-v /run:/run`), or any file named like one, is refused
 *   (CIS 5.31, H14).  Checked lexically on the source: symlinked spellings
 *   are covered by listing both /run and /var/run paths.
 * - A bind of the host's procfs is refused (host-proc-bind).
 * - Every bind gets nosuid,nodev; with mounts.readonlyBinds the ones not in
 *   mounts.writableBinds (and not the workspace) also get ro (H15); an rbind
 *   gets them for every mount below its source too (rnosuid,rnodev,rro).
 * - Scratch entries (/tmp, /var/tmp, $HOME, /dev/shm): a missing one becomes
 *   a size-limited nosuid,nodev tmpfs; an engine tmpfs there is made
 *   nosuid,nodev and clamped to the profile's size.
 */
#include <linux/magic.h>
#include <stdio.h>
#include <sys/vfs.h>

#include "profile/internal.h"

#include "common/util.h"

bool profile_mount_has_opt(const struct oci_mount *m, const char *opt)
{
  return strv_contains(m->options, opt);
}

bool profile_mount_is_bind(const struct oci_mount *m)
{
  return streq(m->type, "bind") || profile_mount_has_opt(m, "bind") ||
         profile_mount_has_opt(m, "rbind");
}

static void opt_remove(struct oci_mount *m, const char *opt, bool prefix)
{
  size_t o = 0;

  for (size_t i = 0; m->options != NULL && m->options[i] != NULL; i++) {
    if (prefix ? str_has_prefix(m->options[i], opt) : streq(m->options[i], opt))
      free(m->options[i]);
    else
      m->options[o++] = m->options[i];
  }
  if (m->options != NULL)
    m->options[o] = NULL;
}

bool profile_mount_set_opt(struct oci_mount *m, const char *opt, const char *opposite)
{
  bool changed = false;

  if (opposite != NULL && profile_mount_has_opt(m, opposite)) {
    opt_remove(m, opposite, false);
    changed = true;
  }
  if (!profile_mount_has_opt(m, opt)) {
    strv_push(&m->options, opt);
    changed = true;
  }
  return changed;
}

static char *opts_text(char **v)
{
  char *s = xstrdup("");

  for (size_t i = 0; v != NULL && v[i] != NULL; i++) {
    char *prev = s;
    s = xfmt("%s%s%s", prev, prev[0] ? "," : "", v[i]);
    free(prev);
  }
  return s;
}

char *profile_mount_describe(const struct oci_mount *m)
{
  cleanup_free char *o = opts_text(m->options);

  return xfmt("%s %s (%s)", m->type ? m->type : "(none)", m->source ? m->source : "(none)", o);
}

void profile_mount_clear(struct oci_mount *m)
{
  free(m->destination);
  free(m->type);
  free(m->source);
  strv_free(m->options);
  memset(m, 0, sizeof *m);
}

struct oci_mount *profile_mount_insert(struct oci_config *c, size_t at)
{
  c->mounts = xrealloc(c->mounts, (c->n_mounts + 1) * sizeof *c->mounts);
  memmove(c->mounts + at + 1, c->mounts + at, (c->n_mounts - at) * sizeof *c->mounts);
  c->n_mounts++;
  memset(&c->mounts[at], 0, sizeof c->mounts[at]);
  return &c->mounts[at];
}

void profile_mount_remove(struct oci_config *c, size_t at)
{
  profile_mount_clear(&c->mounts[at]);
  memmove(c->mounts + at, c->mounts + at + 1, (c->n_mounts - at - 1) * sizeof *c->mounts);
  c->n_mounts--;
}

ssize_t profile_mount_find(const struct oci_config *c, const char *dest)
{
  for (size_t i = c->n_mounts; i-- > 0;) {
    cleanup_free char *d = path_normalize(c->mounts[i].destination ? c->mounts[i].destination : "");

    if (streq(d, dest))
      return (ssize_t)i;
  }
  return -1;
}

const char *profile_process_home(const struct oci_config *c)
{
  char **env = c->process ? c->process->env : NULL;

  for (size_t i = 0; env != NULL && env[i] != NULL; i++)
    if (str_has_prefix(env[i], "HOME="))
      return env[i][5] == '/' ? env[i] + 5 : NULL;
  if (c->process != NULL && c->process->user.uid == 0)
    return "/root";
  return NULL;
}

static const char *basename_of(const char *path)
{
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

/* Engine sockets: refuse the bind (H14). */
static int check_socket(struct apply_ctx *x, size_t i, const struct oci_mount *m)
{
  char **socks = x->p->mounts.deny_sockets;
  cleanup_free char *src = NULL;

  if (m->source == NULL || !profile_mount_is_bind(m))
    return 0;
  src = path_normalize(m->source);
  if (strv_contains(x->p->mounts.deny_basenames, basename_of(src)))
    return profile_refuse(x, "mounts[%zu]: bind of the engine socket `%s` at `%s` is not allowed",
                          i, m->source, m->destination);
  if (m->source[0] != '/')
    return 0;
  for (size_t k = 0; socks != NULL && socks[k] != NULL; k++)
    if (profile_path_is_under(socks[k], src))
      return profile_refuse(
          x,
          "mounts[%zu]: bind of `%s` at `%s` would expose the engine socket `%s`; "
          "it is not allowed",
          i, m->source, m->destination, socks[k]);
  return 0;
}

/* host-proc-bind: the host's procfs shows every host process past the pid
 * namespace (their roots and environments where ptrace's same-uid rule lets,
 * and the container's root may change its uid) and the /proc files the
 * profile masks.  Judged by the file system the source is on, so any
 * spelling (a symlink, /proc/self/..) is caught; a source that cannot be
 * looked at is left to the bind, which fails on it. */
static int check_host_procfs(struct apply_ctx *x, size_t i, const struct oci_mount *m)
{
  struct statfs sf;

  if (m->source == NULL || m->source[0] != '/' || !profile_mount_is_bind(m))
    return 0;
  if (statfs(m->source, &sf) < 0 || sf.f_type != PROC_SUPER_MAGIC)
    return 0;
  return profile_refuse(x,
                        "mounts[%zu]: bind of `%s` at `%s` is the host's procfs (every host "
                        "process, and the files the profile masks); it is not allowed",
                        i, m->source, m->destination);
}

static bool is_workspace_dest(const struct apply_ctx *x, const char *dest)
{
  return x->p->workspace.mode != PROFILE_WS_NONE && streq(dest, x->p->workspace.path);
}

static void harden_bind(struct apply_ctx *x, struct oci_mount *m, const char *dest)
{
  cleanup_free char *old = profile_mount_describe(m);
  bool ro = x->p->mounts.readonly_binds && !is_workspace_dest(x, dest) &&
            !strv_contains(x->p->mounts.writable_binds, dest);
  bool rec = profile_mount_has_opt(m, "rbind");
  bool changed = false;
  cleanup_free char *field = xfmt("mounts[%s]", dest);
  cleanup_free char *now = NULL;

  if (is_workspace_dest(x, dest))
    return; /* workspace.c decides */
  /* An rbind brings the mounts below its source along, each with its own
   * flags: the plain words change only the top one (rbind-submount-rw: a
   * host /sys bound in kept its cgroup hierarchies rw), the r-words all. */
  if (x->p->mounts.harden_binds) {
    changed |= profile_mount_set_opt(m, "nosuid", "suid");
    changed |= profile_mount_set_opt(m, "nodev", "dev");
    if (rec) {
      changed |= profile_mount_set_opt(m, "rnosuid", "rsuid");
      changed |= profile_mount_set_opt(m, "rnodev", "rdev");
    }
  }
  if (ro) {
    changed |= profile_mount_set_opt(m, "ro", "rw");
    if (rec)
      changed |= profile_mount_set_opt(m, "rro", "rrw");
  }
  if (!changed)
    return;
  now = profile_mount_describe(m);
  profile_change_add(x, PROFILE_CHANGE_CONFIG, field, old, now, "%s",
                     ro ? "host binds are read-only outside the workspace, and nosuid,nodev"
                        : "host binds are nosuid,nodev");
}

static void scratch_opts(struct oci_mount *m, const struct profile_scratch *s, bool home,
                         const struct oci_config *c)
{
  strv_push(&m->options, "nosuid");
  strv_push(&m->options, "nodev");
  if (s->noexec)
    strv_push(&m->options, "noexec");
  {
    cleanup_free char *size = xfmt("size=%" PRIu64, s->size);
    cleanup_free char *mode = xfmt("mode=%o", s->mode);
    strv_push(&m->options, size);
    strv_push(&m->options, mode);
  }
  if (home && c->process != NULL && c->process->user.uid != 0) {
    cleanup_free char *uid = xfmt("uid=%u", c->process->user.uid);
    cleanup_free char *gid = xfmt("gid=%u", c->process->user.gid);
    strv_push(&m->options, uid);
    strv_push(&m->options, gid);
  }
}

/* An engine tmpfs at a scratch path: nosuid,nodev and at most the profile's size. */
static void clamp_tmpfs(struct apply_ctx *x, struct oci_mount *m, const struct profile_scratch *s,
                        const char *dest)
{
  cleanup_free char *old = profile_mount_describe(m);
  cleanup_free char *field = xfmt("mounts[%s]", dest);
  cleanup_free char *now = NULL;
  uint64_t size = 0;
  bool ok_size = false, changed = false;

  for (size_t i = 0; m->options != NULL && m->options[i] != NULL; i++)
    if (str_has_prefix(m->options[i], "size="))
      ok_size = profile_parse_size(m->options[i] + 5, &size) == 0 && size > 0 && size <= s->size;
  changed |= profile_mount_set_opt(m, "nosuid", "suid");
  changed |= profile_mount_set_opt(m, "nodev", "dev");
  if (!ok_size) {
    cleanup_free char *opt = xfmt("size=%" PRIu64, s->size);
    opt_remove(m, "size=", true);
    strv_push(&m->options, opt);
    changed = true;
  }
  if (!changed)
    return;
  now = profile_mount_describe(m);
  profile_change_add(x, PROFILE_CHANGE_CONFIG, field, old, now,
                     "scratch space is size-limited (scratch size %" PRIu64 ") and nosuid,nodev",
                     s->size);
}

/* Where a new mount at DEST goes in the list: before the first mount below
 * it (an engine's volume at /tmp/vol, which it would cover otherwise), and
 * after the last one it lies below. */
static size_t scratch_position(const struct oci_config *c, const char *dest)
{
  size_t first_below = c->n_mounts, after_above = 0;

  for (size_t i = 0; i < c->n_mounts; i++) {
    cleanup_free char *d = path_normalize(c->mounts[i].destination);

    if (streq(d, dest))
      continue;
    if (first_below == c->n_mounts && profile_path_is_under(d, dest))
      first_below = i;
    if (profile_path_is_under(dest, d))
      after_above = i + 1;
  }
  return first_below < after_above ? after_above : first_below;
}

static void apply_scratch(struct apply_ctx *x, const struct profile_scratch *s)
{
  bool home = streq(s->path, PROFILE_HOME_TOKEN);
  const char *path = home ? profile_process_home(x->c) : s->path;
  cleanup_free char *dest = NULL;
  cleanup_free char *field = NULL;
  cleanup_free char *now = NULL;
  ssize_t idx;
  struct oci_mount *m;
  const char *ws = x->p->workspace.mode != PROFILE_WS_NONE ? x->p->workspace.path : NULL;

  if (path == NULL)
    return;
  dest = path_normalize(path);
  if (streq(dest, "/") ||
      (ws != NULL && (profile_path_is_under(dest, ws) || profile_path_is_under(ws, dest))))
    return; /* e.g. HOME=/workspace: the workspace rules apply */
  idx = profile_mount_find(x->c, dest);
  if (idx >= 0) {
    m = &x->c->mounts[idx];
    if (streq(m->type, "tmpfs") && !profile_mount_is_bind(m))
      clamp_tmpfs(x, m, s, dest);
    return; /* binds were handled by harden_bind */
  }
  m = profile_mount_insert(x->c, scratch_position(x->c, dest));
  m->destination = xstrdup(dest);
  m->type = xstrdup("tmpfs");
  m->source = xstrdup("tmpfs");
  scratch_opts(m, s, home, x->c);
  field = xfmt("mounts[%s]", dest);
  now = profile_mount_describe(m);
  profile_change_add(x, PROFILE_CHANGE_CONFIG, field, NULL, now,
                     "writable scratch space%s on a read-only root, size-limited",
                     home ? " (home)" : "");
}

/* An idmapped mount that shows a container id other than 0 as host root 0
 * (uid or gid): what that id writes there is owned by root on the host,
 * its set-id bits included, for host tools to run later. */
static int check_idmap(struct apply_ctx *x, size_t i, const struct oci_mount *m)
{
  const struct {
    const char *kind;
    const struct oci_idmap *map;
    size_t n;
  } maps[] = {{"uid", m->uid_mappings, m->n_uid_mappings},
              {"gid", m->gid_mappings, m->n_gid_mappings}};

  for (size_t k = 0; k < ARRAY_SIZE(maps); k++)
    for (size_t j = 0; j < maps[k].n; j++) {
      const struct oci_idmap *e = &maps[k].map[j];
      if (e->host_id == 0 && e->container_id != 0)
        return profile_refuse(x,
                              "mounts[%zu]: an idmapped mount that maps container %s %u to "
                              "host root is not allowed (what it writes there would be root's "
                              "on the host)",
                              i, maps[k].kind, e->container_id);
    }
  return 0;
}

int profile_apply_mounts(struct apply_ctx *x)
{
  for (size_t i = 0; i < x->c->n_mounts; i++) {
    struct oci_mount *m = &x->c->mounts[i];
    cleanup_free char *dest = path_normalize(m->destination ? m->destination : "");

    if (check_socket(x, i, m) < 0)
      return -1;
    if ((x->p->mounts.readonly_binds || x->p->mounts.harden_binds) &&
        (check_idmap(x, i, m) < 0 || check_host_procfs(x, i, m) < 0))
      return -1;
    if (profile_mount_is_bind(m) && (x->p->mounts.readonly_binds || x->p->mounts.harden_binds))
      harden_bind(x, m, dest);
  }
  for (size_t i = 0; i < x->p->n_scratch; i++)
    apply_scratch(x, &x->p->scratch[i]);
  x->r->keep_bind_flags = x->p->mounts.readonly_binds || x->p->mounts.harden_binds;
  return 0;
}
