/* manager.c - picks the cgroup backend, computes the container's paths and
 * dispatches the cgroup.h calls through the backend's table of operations.
 *
 * Paths: an absolute cgroupsPath is taken from the hierarchy root; a
 * relative one from the runtime's own cgroup (on v1 per controller, since a
 * process may sit in different places in each hierarchy); an empty one is
 * /agentrt/<id>.  --systemd-cgroup "slice:prefix:name" is mapped to the
 * path systemd itself would use.  On v1 the path saved in state.json is the
 * common path, or "ctrl=path;ctrl=path..." when the hierarchies differ.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <linux/magic.h>

#include "cgroups/internal.h"
#include "common/failpoint.h"
#include "common/log.h"
#include "common/util.h"

static const char *const v1_known[] = {"cpu",      "cpuacct",    "cpuset", "memory",  "devices",
                                       "freezer",  "blkio",      "pids",   "hugetlb", "net_cls",
                                       "net_prio", "perf_event", "rdma",   "misc"};

static bool v1_is_controller(const char *s)
{
  if (str_has_prefix(s, "name="))
    return true;
  for (size_t i = 0; i < ARRAY_SIZE(v1_known); i++)
    if (streq(s, v1_known[i]))
      return true;
  return false;
}

static struct cgroup_hier *hier_add(struct cgroup_manager *m, const char *mount, const char *mroot)
{
  struct cgroup_hier *h;

  if (m->n_hier == CGROUP_MAX_HIER)
    return NULL;
  for (size_t i = 0; i < m->n_hier; i++)
    if (streq(m->hier[i].mount, mount))
      return NULL;
  h = &m->hier[m->n_hier++];
  h->mount = xstrdup(mount);
  h->mroot = xstrdup(mroot);
  return h;
}

/* A fake tree: each directory of the root is a v1 mount named after its
 * controllers ("cpu,cpuacct"; "systemd" is name=systemd; "unified" the
 * hybrid cgroup2 mount, which is skipped). */
static int v1_discover_fake(struct cgroup_manager *m, struct error *err)
{
  DIR *d = opendir(m->root);
  struct dirent *e;

  if (d == NULL)
    return error_errno(err, "cgroup: open `%s`", m->root);
  while ((e = readdir(d)) != NULL) {
    cleanup_free char *mount = NULL;
    cleanup_free char *names = NULL;
    struct cgroup_hier *h;
    char *save = NULL;
    if (e->d_type != DT_DIR || e->d_name[0] == '.' || streq(e->d_name, "unified"))
      continue;
    mount = xfmt("%s/%s", m->root, e->d_name);
    h = hier_add(m, mount, "/");
    if (h == NULL)
      continue;
    names = xstrdup(e->d_name);
    for (char *t = strtok_r(names, ",", &save); t; t = strtok_r(NULL, ",", &save))
      strv_push(&h->ctrls, streq(t, "systemd") ? "name=systemd" : t);
  }
  closedir(d);
  return 0;
}

/* mountinfo escapes blanks as \040 etc. */
static void unescape_octal(char *s)
{
  char *w = s;
  for (char *r = s; *r; r++) {
    if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' && r[3] >= '0' &&
        r[3] <= '7') {
      *w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
      r += 3;
    } else {
      *w++ = *r;
    }
  }
  *w = '\0';
}

static void v1_mountinfo_line(struct cgroup_manager *m, char *line)
{
  char *f[6] = {0};
  char *save = NULL, *sep = strstr(line, " - ");
  char *fstype, *opts, *tok;
  struct cgroup_hier *h;
  size_t rl = strlen(m->root);

  if (sep == NULL)
    return;
  *sep = '\0';
  fstype = strtok_r(sep + 3, " ", &save);
  strtok_r(NULL, " ", &save); /* source */
  opts = strtok_r(NULL, " ", &save);
  if ((!streq(fstype, "cgroup") && !streq(fstype, "cgroup2")) || opts == NULL)
    return;
  save = NULL;
  for (int i = 0; i < 6 && (tok = strtok_r(i ? NULL : line, " ", &save)); i++)
    f[i] = tok;
  if (f[4] == NULL)
    return;
  unescape_octal(f[3]);
  unescape_octal(f[4]);
  if (strncmp(f[4], m->root, rl) != 0 || f[4][rl] != '/')
    return;
  h = hier_add(m, f[4], f[3]);
  if (h == NULL)
    return;
  /* a hybrid host's cgroup2 mount (/sys/fs/cgroup/unified): the container
   * gets a cgroup there too, as with runc, so tools that read the unified
   * hierarchy (systemd, BPF programs) see it */
  if (streq(fstype, "cgroup2")) {
    strv_push(&h->ctrls, CGROUP_UNIFIED);
    return;
  }
  save = NULL;
  for (tok = strtok_r(opts, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
    if (v1_is_controller(tok))
      strv_push(&h->ctrls, tok);
  if (h->ctrls == NULL) {
    free(h->mount);
    free(h->mroot);
    m->n_hier--;
    memset(h, 0, sizeof *h);
  }
}

/* mountinfo is read in one go and split in place: stdio's FILE and getline
 * would bring in pages of libc that nothing else on the create path uses
 * (peak RSS: bench/README.md). */
static int v1_discover_real(struct cgroup_manager *m, struct error *err)
{
  cleanup_free char *text = NULL;

  if (cg_read("/proc/self", "mountinfo", &text, err) < 0)
    return -1;
  for (char *line = text, *next; line != NULL && *line != '\0'; line = next) {
    next = strchr(line, '\n');
    if (next != NULL)
      *next++ = '\0';
    v1_mountinfo_line(m, line);
  }
  if (m->n_hier == 0)
    return error_set(err, ENOENT, "cgroup: no cgroup v1 hierarchy mounted under `%s`", m->root);
  return 0;
}

struct cgroup_hier *cgroup_v1_hier(struct cgroup_manager *m, const char *c)
{
  for (size_t i = 0; i < m->n_hier; i++)
    if (strv_contains(m->hier[i].ctrls, c))
      return &m->hier[i];
  return NULL;
}

const char *cgroup_v1_own_dir(struct cgroup_manager *m, const char *field, const char *own)
{
  char first[64];
  size_t n = strcspn(field, ",");
  const struct cgroup_hier *h;
  const char *rel;

  if (m == NULL || m->version != 1 || m->fake || n >= sizeof(first))
    return NULL;
  memcpy(first, field, n);
  first[n] = '\0';
  h = cgroup_v1_hier(m, n ? first : CGROUP_UNIFIED);
  if (h == NULL || h->dir == NULL || h->rel == NULL || h->mroot == NULL)
    return NULL;
  /* own = the mount's root in the hierarchy, then our path below it */
  rel = own;
  if (!streq(h->mroot, "/")) {
    if (!str_has_prefix(own, h->mroot))
      return NULL;
    rel = own + strlen(h->mroot);
  }
  return streq(rel, h->rel) ? h->dir : NULL;
}

static int detect_version(const struct cgroup_manager *m)
{
  struct statfs st;

  if (statfs(m->root, &st) == 0 && st.f_type == CGROUP2_SUPER_MAGIC)
    return 2;
  if (m->fake && cg_exists(m->root, "cgroup.controllers"))
    return 2;
  return 1;
}

/* The runtime's own cgroup in hierarchy h, from /proc/self/cgroup
 * ("4:memory:/a/b", "0::/a/b"), made relative to the mount's root. */
static int own_cgroup(const struct cgroup_manager *m, const struct cgroup_hier *h, const char *text,
                      char **ret, struct error *err)
{
  cleanup_free char *copy = xstrdup(text);
  char *save = NULL;

  for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
    char *c1 = strchr(l, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    cleanup_strv char **ctrls = NULL;
    char *s2 = NULL;
    const char *p;
    bool match;
    if (c2 == NULL)
      continue;
    *c2 = '\0';
    for (char *t = strtok_r(c1 + 1, ",", &s2); t; t = strtok_r(NULL, ",", &s2))
      strv_push(&ctrls, t);
    match = m->version == 2 || cgroup_hier_unified(h)
                ? (c1 == l + 1 && ctrls == NULL && l[0] == '0')
                : (ctrls != NULL && strv_contains(ctrls, h->ctrls[0]));
    if (!match)
      continue;
    p = c2 + 1;
    if (!streq(h->mroot, "/") && str_has_prefix(p, h->mroot))
      p += strlen(h->mroot);
    return cgroup_normalize_path(*p ? p : "/", ret, err);
  }
  return error_set(err, ENOENT, "cgroup: own cgroup of `%s` not found in /proc/self/cgroup",
                   h->mount);
}

static void set_hier_path(struct cgroup_hier *h, const char *rel)
{
  free(h->rel);
  free(h->dir);
  h->rel = xstrdup(rel);
  h->dir = xfmt("%s%s", h->mount, rel);
}

/* The saved form: the common path, or "ctrl=path;..." */
static void compute_saved_path(struct cgroup_manager *m)
{
  bool same = true;
  char *s = NULL;

  for (size_t i = 1; i < m->n_hier; i++)
    same = same && streq(m->hier[i].rel, m->hier[0].rel);
  free(m->path);
  if (same) {
    m->path = xstrdup(m->n_hier ? m->hier[0].rel : "/");
    return;
  }
  for (size_t i = 0; i < m->n_hier; i++) {
    char *n = xfmt("%s%s%s=%s", s ? s : "", s ? ";" : "", m->hier[i].ctrls[0], m->hier[i].rel);
    free(s);
    s = n;
  }
  m->path = s;
}

static int base_path(struct cgroup_manager *m, const struct cgroup_opts *o, char **ret,
                     struct error *err)
{
  const char *p = o->cgroups_path ? o->cgroups_path : "";
  cleanup_free char *spec = NULL;

  if (o->systemd) {
    if (*p == '\0')
      p = spec = xfmt(":agentrt:%s", o->id ? o->id : "");
    return cgroup_systemd_to_path(p, o->id, o->rootless, ret, err);
  }
  if (*p == '\0') {
    if (o->id == NULL || *o->id == '\0' || strchr(o->id, '/') != NULL || streq(o->id, "..") ||
        streq(o->id, "."))
      return cg_fail(err, EINVAL, "cgroup: invalid container id for the cgroup path");
    *ret = xfmt("/agentrt/%s", o->id);
    return 0;
  }
  return cgroup_normalize_path(p, ret, err);
}

static int read_self_cgroup(const struct cgroup_opts *o, char **ret, struct error *err)
{
  const char *f = o->proc_self_cgroup ? o->proc_self_cgroup : "/proc/self/cgroup";
  cleanup_free char *dir = xstrdup(f);
  char *slash = strrchr(dir, '/');

  if (slash == NULL)
    return cg_read(".", f, ret, err);
  *slash = '\0';
  return cg_read(*dir ? dir : "/", slash + 1, ret, err);
}

static int resolve_paths(struct cgroup_manager *m, const struct cgroup_opts *o, struct error *err)
{
  cleanup_free char *base = NULL;
  cleanup_free char *self = NULL;

  if (base_path(m, o, &base, err) < 0)
    return -1;
  if (base[0] != '/' && read_self_cgroup(o, &self, err) < 0)
    return -1;
  for (size_t i = 0; i < m->n_hier; i++) {
    cleanup_free char *own = NULL;
    cleanup_free char *full = NULL;
    if (base[0] == '/') {
      set_hier_path(&m->hier[i], base);
      continue;
    }
    if (own_cgroup(m, &m->hier[i], self, &own, err) < 0)
      return -1;
    full = xfmt("%s/%s", streq(own, "/") ? "" : own, base);
    set_hier_path(&m->hier[i], full);
  }
  for (size_t i = 0; i < m->n_hier; i++)
    if (streq(m->hier[i].rel, "/") || streq(m->hier[i].rel, ""))
      return cg_fail(err, EINVAL, "cgroup path `%s`: the root cgroup cannot hold a container",
                     base);
  compute_saved_path(m);
  return 0;
}

static int manager_init(const struct cgroup_opts *o, struct cgroup_manager **ret, struct error *err)
{
  struct cgroup_manager *m = xmalloc0(sizeof *m);
  struct cgroup_hier *h;
  int r = 0;

  *ret = m;
  m->root = xstrdup(o->fs_root ? o->fs_root : CGROUP_DEFAULT_ROOT);
  m->fake = o->fs_root != NULL;
  m->rootless = o->rootless;
  m->requested = o->resources;
  m->version = o->force_version ? o->force_version : detect_version(m);
  if (m->version != 1 && m->version != 2)
    return cg_fail(err, EINVAL, "cgroup: unknown cgroup version %d", m->version);
  if (m->version == 2) {
    m->ops = &cgroup_v2_ops;
    h = hier_add(m, m->root, "/");
    (void)h;
    return 0;
  }
  m->ops = &cgroup_v1_ops;
  r = m->fake ? v1_discover_fake(m, err) : v1_discover_real(m, err);
  return r;
}

/* --systemd-cgroup on a real host: the unit and slice systemd is asked for
 * (a fake test tree keeps the plain cgroupfs path systemd would use). */
static int systemd_names(struct cgroup_manager *m, const struct cgroup_opts *o, struct error *err)
{
  const char *p = o->cgroups_path && *o->cgroups_path ? o->cgroups_path : NULL;
  cleanup_free char *spec = p ? NULL : xfmt(":agentrt:%s", o->id ? o->id : "");

  if (!o->systemd || m->fake)
    return 0;
  m->systemd = true;
  return cgroup_systemd_unit(p ? p : spec, o->id, o->rootless, &m->sd_slice, &m->sd_unit, err);
}

int cgroup_manager_new(const struct cgroup_opts *o, struct cgroup_manager **ret, struct error *err)
{
  struct cgroup_manager *m = NULL;

  if (manager_init(o, &m, err) < 0 || resolve_paths(m, o, err) < 0 ||
      systemd_names(m, o, err) < 0) {
    cgroup_manager_free(m);
    return -1;
  }
  *ret = m;
  return 0;
}

/* Assign the saved path(s); a hierarchy absent from a per-controller map is
 * dropped (it was not there when the container was created). */
static int assign_saved(struct cgroup_manager *m, const char *saved, struct error *err)
{
  size_t keep = 0;

  if (saved[0] == '/') {
    cleanup_free char *norm = NULL;
    if (cgroup_normalize_path(saved, &norm, err) < 0)
      return -1;
    for (size_t i = 0; i < m->n_hier; i++)
      set_hier_path(&m->hier[i], norm);
    return 0;
  }
  for (size_t i = 0; i < m->n_hier; i++) {
    cleanup_free char *key = xfmt("%s=", m->hier[i].ctrls ? m->hier[i].ctrls[0] : "");
    const char *p = strstr(saved, key);
    cleanup_free char *val = NULL;
    cleanup_free char *norm = NULL;
    while (p != NULL && p != saved && p[-1] != ';')
      p = strstr(p + 1, key);
    if (p == NULL) {
      strv_free(m->hier[i].ctrls);
      free(m->hier[i].mount);
      free(m->hier[i].mroot);
      continue;
    }
    val = xstrndup(p + strlen(key), strcspn(p + strlen(key), ";"));
    if (val[0] != '/' || cgroup_normalize_path(val, &norm, err) < 0)
      return cg_fail(err, EINVAL, "cgroup: saved path `%s`: malformed", saved);
    m->hier[keep] = m->hier[i];
    set_hier_path(&m->hier[keep++], norm);
  }
  for (size_t i = keep; i < m->n_hier; i++)
    memset(&m->hier[i], 0, sizeof m->hier[i]);
  m->n_hier = keep;
  return 0;
}

int cgroup_manager_load(const char *saved_path, const struct cgroup_opts *o,
                        struct cgroup_manager **ret, struct error *err)
{
  struct cgroup_manager *m = NULL;

  if (saved_path == NULL || *saved_path == '\0')
    return cg_fail(err, EINVAL, "cgroup: no saved cgroup path");
  if (manager_init(o, &m, err) < 0 || assign_saved(m, saved_path, err) < 0) {
    cgroup_manager_free(m);
    return -1;
  }
  compute_saved_path(m);
  m->created = true;
  if (o->systemd && !m->fake && m->n_hier > 0) {
    /* the unit is the last component of the path systemd made */
    m->systemd = m->sd_started = true;
    m->sd_unit = xstrdup(strrchr(m->hier[0].rel, '/') + 1);
  }
  *ret = m;
  return 0;
}

void cg_warn(struct cgroup_manager *m, const char *fmt, ...)
{
  char msg[1024];
  va_list ap;

  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  strv_push(&m->warnings, msg);
}

char **cgroup_take_warnings(struct cgroup_manager *m)
{
  char **w = m ? m->warnings : NULL;

  if (m)
    m->warnings = NULL;
  return w;
}

void cgroup_manager_free(struct cgroup_manager *m)
{
  if (m == NULL)
    return;
  strv_free(m->warnings);
  for (size_t i = 0; i < m->n_hier; i++) {
    free(m->hier[i].mount);
    free(m->hier[i].mroot);
    free(m->hier[i].rel);
    free(m->hier[i].dir);
    free(m->hier[i].leaf);
    strv_free(m->hier[i].ctrls);
  }
  cg_sd_close(m);
  free(m->sd_unit);
  free(m->sd_slice);
  free(m->root);
  free(m->path);
  free(m);
}

const char *cgroup_manager_path(const struct cgroup_manager *m)
{
  return m->path;
}

int cgroup_manager_version(const struct cgroup_manager *m)
{
  return m->version;
}

static bool soft_errno(int e)
{
  return e == EACCES || e == EPERM || e == EROFS;
}

/* Processes in the cgroup before we create it belong to another container
 * given the same cgroupsPath (runc 1.1 warns, crun allows it): a failed
 * create must leave them alone. */
static void check_shared(struct cgroup_manager *m)
{
  cleanup_free pid_t *pids = NULL;
  size_t n = 0;
  struct error e = {0};

  if (m->fake || cg_read_pids(m->ops->procs_dir(m), &pids, &n, &e) < 0 || n == 0)
    return;
  m->shared = true;
  cg_warn(m,
          "container's cgroup is not empty: `%s` has %zu processes (sharing a cgroup with "
          "another container; deleting either kills both)",
          m->path, n);
}

/* A process put in a cgroup that is already frozen never runs: create
 * would wait for the init for ever.  Refuse it (runc does too). */
static int refuse_frozen(struct cgroup_manager *m, struct error *err)
{
  struct error e = {0};

  if (m->ops->is_frozen(m, &e) != 1)
    return 0;
  m->refused = true;
  return error_set(err, 0,
                   "cgroup `%s`: container's cgroup unexpectedly frozen (it exists and is "
                   "frozen): thaw it or use another cgroupsPath",
                   m->path);
}

int cgroup_create(struct cgroup_manager *m, struct error *err)
{
  /* systemd makes the cgroup with the init (cgroup_add_pid); fail now,
   * before anything exists, when systemd cannot be reached */
  if (m->systemd && !m->sd_started) {
    if (cg_sd_connect(m, err) < 0)
      return -1;
    m->created = true;
    return 0;
  }
  if (refuse_frozen(m, err) < 0)
    return -1;
  check_shared(m);
  if (m->ops->create(m, err) == 0) {
    m->created = true;
    return 0;
  }
  for (size_t i = 0; i < m->n_hier; i++)
    if (m->hier[i].made)
      rmdir(m->hier[i].dir);
  if (soft_errno(err->code) && !cgroup_resources_requested(m->requested))
    return 1;
  return -1;
}

/* exec --cgroup [CTRL[,CTRL...]:]SUB: run in a sub-cgroup of the
 * container's that already exists (runc's option).  SUB is taken below the
 * container's cgroup; a `..` component, which would leave it, is refused. */
static bool sub_is_inside(const char *sub)
{
  cleanup_free char *copy = xstrdup(sub);
  char *save = NULL;

  for (char *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save))
    if (strcmp(c, "..") == 0)
      return false;
  return true;
}

static bool hier_matches(const struct cgroup_hier *h, const char *ctrls)
{
  cleanup_free char *copy = NULL;
  char *save = NULL;

  if (ctrls == NULL)
    return true;
  copy = xstrdup(ctrls);
  for (char *c = strtok_r(copy, ",", &save); c; c = strtok_r(NULL, ",", &save))
    if (strv_contains(h->ctrls, c))
      return true;
  return false;
}

int cgroup_use_sub(struct cgroup_manager *m, const char *spec, struct error *err)
{
  cleanup_free char *ctrls = NULL;
  const char *colon = strchr(spec, ':'), *sub = colon ? colon + 1 : spec;
  bool any = false;

  if (colon != NULL)
    ctrls = xstrndup(spec, (size_t)(colon - spec));
  if (*sub == '\0' || !sub_is_inside(sub))
    return error_set(err, 0,
                     "--cgroup `%s`: %s is not a sub cgroup path (it must name a sub-cgroup "
                     "inside the container's)",
                     spec, sub);
  if (ctrls != NULL && m->version == 2)
    return error_set(err, 0, "--cgroup `%s`: a controller prefix needs cgroup v1", spec);
  for (size_t i = 0; i < m->n_hier; i++) {
    struct cgroup_hier *h = &m->hier[i];
    cleanup_free char *dir = NULL;
    struct stat st;

    if (!hier_matches(h, ctrls))
      continue;
    while (*sub == '/')
      sub++;
    dir = xfmt("%s/%s", h->dir, sub);
    if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
      return error_set(err, 0,
                       "--cgroup `%s`: sub-cgroup `%s` does not exist; adding pid to "
                       "%s/cgroup.procs: no such file or directory",
                       spec, dir, dir);
    free(h->dir);
    h->dir = take_ptr(dir);
    any = true;
  }
  if (!any)
    return error_set(err, 0, "--cgroup `%s`: unknown controller `%s`", spec, ctrls ? ctrls : "");
  return 0;
}

int cgroup_clone_fd(struct cgroup_manager *m)
{
  if (m->version != 2 || m->fake || (m->systemd && !m->sd_started))
    return -1;
  return open(cgroup_v2_procs_target(m), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

int cgroup_unified_clone_fd(struct cgroup_manager *m)
{
  if (m->version != 1 || m->fake || (m->systemd && !m->sd_started))
    return -1;
  for (size_t i = 0; i < m->n_hier; i++)
    if (cgroup_hier_unified(&m->hier[i]))
      return open(m->hier[i].dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  return -1;
}

void cgroup_unified_at_clone(struct cgroup_manager *m, bool at_clone)
{
  m->unified_at_clone = at_clone;
}

/* The unified hierarchy is a bonus on v1 (v1_create): a failed write is
 * ignored, as in v1_add_pid. */
int cgroup_unified_add_pid(struct cgroup_manager *m, pid_t pid, struct error *err)
{
  for (size_t i = 0; i < m->n_hier; i++)
    if (cgroup_hier_unified(&m->hier[i]) &&
        cg_writef(m, m->hier[i].dir, "cgroup.procs", err, "%d", (int)pid) < 0)
      error_clear(err);
  return 0;
}

/* The unit with the container's first process, then the cgroupfs part as
 * on any host: hierarchies systemd does not manage (v1), the pid where
 * systemd did not put it (a slice unit), every limit (cgroup_apply). */
static int systemd_start(struct cgroup_manager *m, pid_t pid, struct error *err)
{
  if (cg_sd_start(m, pid, m->sd_pending, err) < 0)
    return -1;
  m->sd_started = true;
  if (m->ops->create(m, err) < 0 || m->ops->add_pid(m, pid, err) < 0)
    return -1;
  return m->sd_pending ? m->ops->apply(m, m->sd_pending, false, err) : 0;
}

int cgroup_add_pid(struct cgroup_manager *m, pid_t pid, struct error *err)
{
  if (m->systemd && !m->sd_started)
    return systemd_start(m, pid, err);
  return m->ops->add_pid(m, pid, err);
}

int cgroup_apply(struct cgroup_manager *m, const struct oci_resources *r, bool update,
                 struct error *err)
{
  if (cgroup_resources_validate(r, err) < 0)
    return -1;
  if (m->systemd && !m->sd_started) {
    m->sd_pending = r; /* applied when the unit exists */
    return 0;
  }
  if (m->systemd && update && cg_sd_set(m, r, err) < 0)
    return -1;
  return m->ops->apply(m, r, update, err);
}

int cgroup_freeze(struct cgroup_manager *m, bool freeze, struct error *err)
{
  return m->ops->freeze(m, freeze, err);
}

int cgroup_is_frozen(struct cgroup_manager *m, struct error *err)
{
  return m->ops->is_frozen(m, err);
}

/* v2: the whole subtree (the container's own leaf and its sub-agents'
 * cgroups, see cgroup_make_nestable); v1: the container's cgroup. */
static int read_pids(struct cgroup_manager *m, pid_t **ret, size_t *ret_n, struct error *err)
{
  if (m->version == 2 && !m->fake)
    return cg_read_pids_tree(m->ops->procs_dir(m), ret, ret_n, err);
  return cg_read_pids(m->ops->procs_dir(m), ret, ret_n, err);
}

int cgroup_pids(struct cgroup_manager *m, pid_t **ret, size_t *ret_n, struct error *err)
{
  return read_pids(m, ret, ret_n, err);
}

int cgroup_make_nestable(struct cgroup_manager *m, struct error *err)
{
  cleanup_free char *leaf = NULL;

  if (m->version != 2 || m->fake)
    return 0;
  leaf = xfmt("%s/%s", m->hier[0].dir, CGROUP_NEST_LEAF);
  if (mkdir(leaf, 0755) < 0 && errno != EEXIST)
    return error_errno(err, "cgroup: mkdir `%s`", leaf);
  /* bounded: a process forking meanwhile lands in the parent cgroup and is
   * moved on the next pass */
  for (int pass = 0; pass < 50; pass++) {
    cleanup_free pid_t *pids = NULL;
    size_t n = 0;
    if (cg_read_pids(m->hier[0].dir, &pids, &n, err) < 0)
      return -1;
    if (n == 0)
      break;
    for (size_t i = 0; i < n; i++) {
      struct error e = {0};
      if (cg_writef(m, leaf, "cgroup.procs", &e, "%d", (int)pids[i]) < 0 && e.code != ESRCH) {
        *err = e;
        return -1;
      }
    }
  }
  cgroup_v2_enable_controllers(m, m->hier[0].dir);
  return 0;
}

/* Send sig to each of pids that is still a member: each is pinned by a pidfd first, then the
 * cgroup is read again, and a pid still in it names the pidfd's process if that one is alive
 * (else the signal fails with ESRCH).  A member that ended after the first read, its pid
 * taken by a process outside (a frozen task still dies of a SIGKILL sent by others; without a
 * freezer nothing holds them), is never signalled (pid-reuse-kill-all). */
static void signal_members(struct cgroup_manager *m, const pid_t *pids, size_t n, int sig)
{
  cleanup_free int *fds = xmalloc0((n ? n : 1) * sizeof *fds);
  cleanup_free pid_t *now = NULL;
  size_t nnow = 0;
  struct error e = {0};

  bool nopidfd = false; /* no pidfd_open (Linux < 5.3, valgrind): kill() by the pid */

  for (size_t i = 0; i < n; i++) {
    fds[i] = (int)syscall(SYS_pidfd_open, pids[i], 0);
    if (fds[i] < 0 && errno == ENOSYS)
      nopidfd = true;
  }
  if (read_pids(m, &now, &nnow, &e) < 0)
    nnow = 0;
  for (size_t i = 0; i < n; i++) {
    bool member = false;
    int rc = 0;

    for (size_t k = 0; k < nnow && !member; k++)
      member = now[k] == pids[i];
    if (member && fds[i] >= 0)
      rc = (int)syscall(SYS_pidfd_send_signal, fds[i], sig, NULL, 0);
    else if (member && nopidfd)
      rc = kill(pids[i], sig);
    if (rc < 0 && errno != ESRCH)
      log_debug("cgroup: kill %d: %s, ignoring", (int)pids[i], strerror(errno));
    if (fds[i] >= 0)
      close(fds[i]);
  }
}

/* Signal pid by pid with the cgroup frozen, so that nothing forks past the
 * loop (as runc does); a cgroup paused by the user stays paused, except for
 * SIGKILL, which needs the tasks thawed to take effect.  Signal 0 (a liveness
 * check) sends nothing and needs no freeze. */
int cgroup_kill_all(struct cgroup_manager *m, int sig, struct error *err)
{
  cleanup_free pid_t *pids = NULL;
  size_t n = 0;
  struct error e2 = {0};
  bool froze = false;

  if (sig == SIGKILL) {
    int r = m->ops->kill_fast(m, err);
    if (r != 0)
      return r < 0 ? -1 : 0;
  }
  if (sig != 0 && m->ops->is_frozen(m, &e2) == 0)
    froze = m->ops->freeze(m, true, &e2) == 0;
  if (read_pids(m, &pids, &n, err) < 0) {
    if (froze)
      m->ops->freeze(m, false, &e2);
    return err->code == ENOENT ? 0 : -1;
  }
  FAILPOINT_PAUSE("cgroup-kill-after-pids");
  signal_members(m, pids, n, sig);
  /* a frozen task dies of SIGKILL only once thawed, paused or not */
  if ((froze || sig == SIGKILL) && m->ops->freeze(m, false, froze ? err : &e2) < 0 && froze)
    return -1;
  return 0;
}

static bool any_dir_exists(const struct cgroup_manager *m)
{
  for (size_t i = 0; i < m->n_hier; i++)
    if (access(m->hier[i].dir, F_OK) == 0)
      return true;
  return false;
}

/* Wait (bounded, ~3 s) for the cgroup to have no process left. */
static void wait_empty(struct cgroup_manager *m)
{
  for (int i = 0; i < 150; i++) {
    cleanup_free pid_t *pids = NULL;
    size_t n = 0;
    struct error e = {0};
    if (read_pids(m, &pids, &n, &e) < 0 || n == 0)
      return;
    cg_sleep_ms(20);
  }
}

/* One rmdir per hierarchy, which the kernel grants only to a cgroup with no
 * task and no child: the common case (the container has exited, `delete` of
 * a stopped one) skips the freeze/kill/thaw round trip (~20 syscalls on v1
 * plus the freezer polls).  false: something is left, take the full path. */
static bool rmdir_if_empty(struct cgroup_manager *m)
{
  for (size_t i = 0; i < m->n_hier; i++)
    if (rmdir(m->hier[i].dir) < 0 && errno != ENOENT)
      return false;
  return true;
}

static int fs_destroy(struct cgroup_manager *m, struct error *err)
{
  struct error e2 = {0};
  int ret = 0;
  bool gone;

  if (m->refused || !any_dir_exists(m))
    return 0;
  if (m->shared) {
    /* a failed create: the processes left are the other container's */
    for (size_t i = 0; i < m->n_hier; i++)
      rmdir(m->hier[i].dir);
    return 0;
  }
  gone = !m->fake && rmdir_if_empty(m);
  if (!m->fake && !gone) {
    if (cgroup_kill_all(m, SIGKILL, &e2) < 0)
      log_debug("cgroup: kill: %s, ignoring", e2.msg);
    m->ops->freeze(m, false, &e2); /* a frozen v1 task dies only when thawed */
    wait_empty(m);
  }
  for (size_t i = 0; i < m->n_hier; i++) {
    struct cgroup_hier *h = &m->hier[i];
    if (!gone && cg_rmdir_tree(m, h->dir, ret < 0 ? &e2 : err) < 0)
      ret = -1;
    /* the default parent /agentrt goes when it is empty */
    if (str_has_prefix(h->rel, "/agentrt/") && strchr(h->rel + 9, '/') == NULL) {
      cleanup_free char *parent = xfmt("%s/agentrt", h->mount);
      rmdir(parent);
    }
  }
  return ret;
}

/* Kill what is left and remove the cgroup through cgroupfs (at once,
 * cgroup.kill), then stop the unit. */
static int systemd_destroy(struct cgroup_manager *m, struct error *err)
{
  struct error e2 = {0};
  int ret = fs_destroy(m, err);

  /* The cgroup is gone either way: systemd drops an empty transient unit.
   * A unit this process never saw started needs no word when systemd is
   * unreachable (a create that failed for that very reason). */
  if (cg_sd_connect(m, &e2) < 0) {
    if (m->sd_started)
      log_warning("%s, ignoring", e2.msg);
    return ret;
  }
  if (cg_sd_stop(m, &e2) < 0)
    log_warning("%s, ignoring", e2.msg);
  return ret;
}

int cgroup_destroy(struct cgroup_manager *m, struct error *err)
{
  if (m->systemd)
    return systemd_destroy(m, err);
  return fs_destroy(m, err);
}
