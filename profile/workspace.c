/* workspace.c - the workspace mount and its protected paths.
 *
 * Modes (profile workspace.mode, annotation run.agentrt.workspace.mode):
 *   tmpfs    a size-limited tmpfs; an engine mount there is replaced
 *   overlay  the engine's host bind becomes the lowerdir of an overlay whose
 *            upper layer agentrt keeps (marker mount: see profile.h)
 *   bind     the engine's bind as is, plus nosuid,nodev
 *   auto     overlay when the engine bound a host directory there, else tmpfs
 * Strictness: tmpfs < overlay < bind; an annotation asking for a looser mode
 * than the profile's needs annotations.allowLoosen.workspaceModes.
 * A read-only workspace (engine `:ro`, or run.agentrt.readonly-workspace)
 * needs no review: overlay becomes a read-only bind.  Without a host
 * directory, overlay and bind fall back to tmpfs.
 */
#include "profile/internal.h"

#include "common/util.h"

bool profile_mount_is_workspace(const struct oci_mount *m)
{
  return streq(m->type, "overlay") && strv_contains(m->options, PROFILE_OPT_WORKSPACE);
}

bool profile_mount_protect_existing(const struct oci_mount *m)
{
  return streq(m->type, PROFILE_PROTECT_TYPE) &&
         strv_contains(m->options, PROFILE_OPT_PROTECT_EXISTING);
}

int profile_mount_protect_kind(const struct oci_mount *m)
{
  if (!streq(m->type, PROFILE_PROTECT_TYPE))
    return 0;
  if (strv_contains(m->options, PROFILE_OPT_PROTECT_DIR))
    return 'd';
  if (strv_contains(m->options, PROFILE_OPT_PROTECT_FILE))
    return 'f';
  return 0;
}

static int strictness(enum profile_ws_mode m)
{
  return m == PROFILE_WS_TMPFS ? 0 : m == PROFILE_WS_OVERLAY ? 1 : 2;
}

struct ws_state {
  const char *path;
  ssize_t idx;      /* the engine's mount there, or -1 */
  const char *host; /* host directory (bind source or overlay lowerdir) */
  bool readonly;
  enum profile_ws_mode mode;
};

static int choose_mode(struct apply_ctx *x, struct ws_state *w)
{
  enum profile_ws_mode m = x->p->workspace.mode;
  const struct oci_mount *em = w->idx >= 0 ? &x->c->mounts[w->idx] : NULL;

  if (em != NULL && profile_mount_is_workspace(em))
    m = PROFILE_WS_OVERLAY; /* made by an earlier pass */
  else if (m == PROFILE_WS_AUTO)
    m = w->host ? PROFILE_WS_OVERLAY : PROFILE_WS_TMPFS;
  if (x->a.has_ws_mode) {
    if (strictness(x->a.ws_mode) > strictness(m) &&
        !(x->p->annotations.loosen.workspace_modes & (1u << x->a.ws_mode)))
      return profile_refuse(x,
                            "annotation run.agentrt.workspace.mode=%s is looser than the profile's "
                            "%s mode, which the profile does not allow "
                            "(annotations.allowLoosen.workspaceModes)",
                            profile_ws_mode_name(x->a.ws_mode), profile_ws_mode_name(m));
    m = x->a.ws_mode;
  }
  if (m != PROFILE_WS_TMPFS && w->host == NULL)
    m = PROFILE_WS_TMPFS;
  if (m == PROFILE_WS_OVERLAY && w->readonly)
    m = PROFILE_WS_BIND;
  w->mode = m;
  return 0;
}

static void set_tmpfs(struct apply_ctx *x, struct ws_state *w)
{
  struct oci_mount *m;
  cleanup_free char *old = NULL;
  cleanup_free char *now = NULL;
  cleanup_free char *field = xfmt("mounts[%s]", w->path);
  uint64_t size = x->a.has_ws_size ? x->a.ws_size : x->p->workspace.size;
  const struct oci_process *proc = x->c->process;
  size_t at = x->c->n_mounts;

  if (w->idx >= 0) {
    m = &x->c->mounts[w->idx];
    if (streq(m->type, "tmpfs") && m->options != NULL) {
      cleanup_free char *want = xfmt("size=%" PRIu64, size);
      if (strv_contains(m->options, want) && profile_mount_has_opt(m, "nosuid") &&
          (!w->readonly || profile_mount_has_opt(m, "ro")))
        goto done; /* already ours */
    }
    old = profile_mount_describe(m);
    profile_mount_clear(m);
  } else {
    for (size_t i = 0; i < x->c->n_mounts && at == x->c->n_mounts; i++) {
      cleanup_free char *d =
          path_normalize(x->c->mounts[i].destination ? x->c->mounts[i].destination : "");
      if (profile_path_is_under(d, w->path))
        at = i; /* before the first mount nested in the workspace */
    }
    m = profile_mount_insert(x->c, at);
  }
  m->destination = xstrdup(w->path);
  m->type = xstrdup("tmpfs");
  m->source = xstrdup("tmpfs");
  strv_push(&m->options, "nosuid");
  strv_push(&m->options, "nodev");
  {
    cleanup_free char *s = xfmt("size=%" PRIu64, size);
    strv_push(&m->options, s);
  }
  strv_push(&m->options, "mode=755");
  if (proc != NULL && proc->user.uid != 0) {
    cleanup_free char *u = xfmt("uid=%u", proc->user.uid);
    cleanup_free char *g = xfmt("gid=%u", proc->user.gid);
    strv_push(&m->options, u);
    strv_push(&m->options, g);
  }
  if (w->readonly)
    strv_push(&m->options, "ro");
  now = profile_mount_describe(m);
  profile_change_add(x, PROFILE_CHANGE_CONFIG, field, old, now,
                     old ? "the workspace is a size-limited tmpfs (no host directory to review)"
                         : "a size-limited tmpfs workspace");
done:
  x->r->workspace.size = size;
}

static void set_bind(struct apply_ctx *x, struct ws_state *w)
{
  struct oci_mount *m = &x->c->mounts[w->idx];
  cleanup_free char *old = profile_mount_describe(m);
  cleanup_free char *field = xfmt("mounts[%s]", w->path);
  cleanup_free char *now = NULL;
  bool changed = false;

  if (profile_mount_is_workspace(m)) { /* an overlay marker turned back into a bind */
    free(m->type);
    m->type = xstrdup("bind");
    strv_free(m->options);
    m->options = NULL;
    strv_push(&m->options, "rbind");
    changed = true;
  }
  changed |= profile_mount_set_opt(m, "nosuid", "suid");
  changed |= profile_mount_set_opt(m, "nodev", "dev");
  if (w->readonly)
    changed |= profile_mount_set_opt(m, "ro", "rw");
  if (!changed)
    return;
  now = profile_mount_describe(m);
  profile_change_add(x, PROFILE_CHANGE_CONFIG, field, old, now, "%s",
                     w->readonly ? "the workspace is read-only"
                                 : "the workspace bind is nosuid,nodev");
}

static void set_overlay(struct apply_ctx *x, struct ws_state *w)
{
  struct oci_mount *m = &x->c->mounts[w->idx];
  cleanup_free char *old = NULL;
  cleanup_free char *field = xfmt("mounts[%s]", w->path);
  cleanup_free char *now = NULL;
  bool noexec = profile_mount_has_opt(m, "noexec");

  x->r->workspace.size = x->a.has_ws_size ? x->a.ws_size : x->p->workspace.size;
  x->r->workspace.size_explicit = x->a.has_ws_size;
  if (profile_mount_is_workspace(m))
    return;
  old = profile_mount_describe(m);
  free(m->type);
  m->type = xstrdup("overlay");
  strv_free(m->options);
  m->options = NULL;
  strv_push(&m->options, PROFILE_OPT_WORKSPACE);
  strv_push(&m->options, "nosuid");
  strv_push(&m->options, "nodev");
  if (noexec)
    strv_push(&m->options, "noexec");
  now = profile_mount_describe(m);
  profile_change_add(
      x, PROFILE_CHANGE_CONFIG, field, old, now,
      "the host directory is the overlay's read-only lower layer; the agent's writes "
      "reach it only on `agentrt workspace ID commit`");
}

/* What bind mode can protect with mounts: git's configuration, hooks and
 * redirections that exist at create, and the profile's list.  Each is bound
 * read-only onto itself if it exists; nothing is created (a placeholder
 * `.git/` would make the directory look like a broken repository). */
static const char *const bind_git_paths[] = {
    ".git/hooks/",     ".git/config",        ".git/info/",     ".git/modules/",
    ".git/worktrees/", ".git/objects/info/", ".git/commondir", ".gitmodules",
};

static void add_one_bind(struct apply_ctx *x, const char *ws, const char *rel)
{
  size_t len = strlen(rel);
  bool dir = rel[len - 1] == '/';
  cleanup_free char *dest = xfmt("%s/%.*s", ws, (int)(dir ? len - 1 : len), rel);
  ssize_t idx = profile_mount_find(x->c, dest);
  cleanup_free char *field = NULL;
  struct oci_mount *m;

  for (size_t i = 0; i < x->r->workspace.n_protected; i++)
    if (streq(x->r->workspace.protected[i].path, dest))
      return;
  x->r->workspace.protected =
      xrealloc(x->r->workspace.protected,
               (x->r->workspace.n_protected + 1) * sizeof *x->r->workspace.protected);
  x->r->workspace.protected[x->r->workspace.n_protected++] =
      (struct profile_protected){.path = xstrdup(dest), .dir = dir};
  if (idx >= 0 && profile_mount_protect_kind(&x->c->mounts[idx]) == (dir ? 'd' : 'f'))
    return;
  m = profile_mount_insert(x->c, x->c->n_mounts);
  m->destination = xstrdup(dest);
  m->type = xstrdup(PROFILE_PROTECT_TYPE);
  m->source = xstrdup(PROFILE_PROTECT_TYPE);
  strv_push(&m->options, dir ? PROFILE_OPT_PROTECT_DIR : PROFILE_OPT_PROTECT_FILE);
  strv_push(&m->options, PROFILE_OPT_PROTECT_EXISTING);
  strv_push(&m->options, "ro");
  strv_push(&m->options, "nosuid");
  strv_push(&m->options, "nodev");
  strv_push(&m->options, "noexec");
  field = xfmt("mounts[%s]", dest);
  profile_change_add(x, PROFILE_CHANGE_CONFIG, field, NULL, "read-only if it exists at create",
                     "bind mode: protected path (a new file, repository or `.git` redirection made "
                     "later is NOT protected in bind mode)");
}

static void add_bind_protected(struct apply_ctx *x, const char *ws)
{
  char **prot = x->p->workspace.protected;

  for (size_t i = 0; i < ARRAY_SIZE(bind_git_paths); i++)
    add_one_bind(x, ws, bind_git_paths[i]);
  for (size_t i = 0; prot && prot[i]; i++)
    if (strpbrk(prot[i], "*?[") == NULL) /* a glob names no one path to bind */
      add_one_bind(x, ws, prot[i]);
}

/* Overlay mode: the upper layer's limit (an ext4 image, workspace/image.c). */
static void add_size_limit(struct apply_ctx *x)
{
  cleanup_free char *v = xfmt("%" PRIu64, x->r->workspace.size);

  profile_change_add(x, PROFILE_CHANGE_RUNTIME, "workspace.size", NULL, v,
                     "the overlay's upper layer is an ext4 image of this size: writes past it "
                     "fail with ENOSPC%s",
                     x->r->workspace.size_explicit
                         ? " (asked for by annotation: create is refused where it cannot be "
                           "enforced)"
                         : " (not enforced, with a warning, on a host without loop devices)");
}

/* Overlay mode: nothing is mounted; commit leaves protected changes out. */
static void add_review_protected(struct apply_ctx *x, const struct ws_state *w)
{
  x->r->workspace.review_protected = strv_dup(x->p->workspace.protected);
  if (x->r->workspace.review_protected == NULL)
    x->r->workspace.review_protected = xmalloc0(sizeof(char *));
  profile_change_add(
      x, PROFILE_CHANGE_RUNTIME, "workspace.protected", NULL, "at review",
      "%s: `workspace diff` marks and `commit` leaves out (unless "
      "--include-protected PATH) changes below any `.git` other than objects, refs, "
      "logs and the index, `.git` files, `.gitmodules` and the profile's protected list",
      w->path);
}

static void record_mode(struct apply_ctx *x, const struct ws_state *w)
{
  static const char *const why[] = {
      [PROFILE_WS_TMPFS] = "scratch workspace, discarded with the container",
      [PROFILE_WS_OVERLAY] = "writes kept by agentrt for review: agentrt workspace ID "
                             "diff|commit|discard",
      [PROFILE_WS_BIND] = "writes land on the host directory at once",
  };

  profile_change_add(x, PROFILE_CHANGE_RUNTIME, "workspace", NULL, profile_ws_mode_name(w->mode),
                     "%s %s%s%s: %s", w->path, w->host ? "over " : "", w->host ? w->host : "",
                     w->readonly ? " (read-only)" : "", why[w->mode]);
}

int profile_apply_workspace(struct apply_ctx *x)
{
  struct ws_state w = {.path = x->p->workspace.path, .idx = -1};
  const struct oci_mount *em;

  if (x->p->workspace.mode == PROFILE_WS_NONE)
    return 0;
  w.idx = profile_mount_find(x->c, w.path);
  em = w.idx >= 0 ? &x->c->mounts[w.idx] : NULL;
  if (em != NULL && em->source != NULL && em->source[0] == '/' &&
      (profile_mount_is_bind(em) || profile_mount_is_workspace(em)))
    w.host = em->source;
  w.readonly = x->a.readonly_ws || (em != NULL && profile_mount_has_opt(em, "ro"));
  if (choose_mode(x, &w) < 0)
    return -1;
  if (w.mode == PROFILE_WS_TMPFS) {
    w.host = NULL;
    set_tmpfs(x, &w);
  } else if (w.mode == PROFILE_WS_BIND) {
    set_bind(x, &w);
  } else {
    set_overlay(x, &w);
  }
  x->r->workspace.mode = w.mode;
  x->r->workspace.path = xstrdup(w.path);
  x->r->workspace.readonly = w.readonly;
  if (w.mode == PROFILE_WS_OVERLAY)
    x->r->workspace.lowerdir = xstrdup(w.host);
  record_mode(x, &w);
  if (w.mode == PROFILE_WS_OVERLAY) {
    add_review_protected(x, &w);
    if (x->r->workspace.size > 0)
      add_size_limit(x);
  } else if (w.mode == PROFILE_WS_BIND && !w.readonly)
    add_bind_protected(x, w.path);
  return 0;
}
