/* workspace_cmd.c - `agentrt workspace ...`: review, commit, discard,
 * snapshot and roll back an agent's overlay workspace (usage in
 * workspace_cmd.h, design in workspace/workspace.h).
 *
 * The container may be running, stopped or already deleted: meta.json is
 * enough for everything except freezing (snapshot, commit, rollback of a
 * running container) and the remount of rollback, which need its cgroup and
 * its init's mount namespace.  discard and purge refuse while a container
 * uses the workspace.  Commands on one workspace serialise on a flock of its
 * directory; the container's own lock is held too while we use it.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "cli/workspace_cmd.h"
#include "common/failpoint.h"
#include "common/log.h"
#include "common/util.h"
#include "cli/data_cmd.h"
#include "container/container.h"
#include "os/fsutil.h"
#include "os/pid.h"
#include "workspace/internal.h"

struct wctx {
  const struct global_opts *g; /* &gs: root and store of the container found */
  struct global_opts gs;
  struct datadir_hit hit;
  struct workspace *w;
  struct container *c; /* NULL once deleted */
  const char *state;
  bool in_use; /* a live container has the workspace mounted */
  bool frozen; /* we froze it (and must thaw) */
  int lockfd;
  int target_lockfd;        /* a sub-agent's commit: its parent's workspace, locked */
  struct container *target; /* and its parent, frozen by us (to thaw), or NULL */
  bool held;                /* termination signals held while something is frozen */
  char *orphan_of; /* a sub-agent whose parent's init has ended: the parent's id, or NULL */
  sigset_t old_mask;
};

enum { O_FORMAT = 1, O_PATCH, O_FORCE, O_LOWER, O_DEST, O_INCLUDE, O_HELP };

static const struct opt_spec ws_specs[] = {
    {"format", 'f', true, O_FORMAT}, {"patch", 'p', false, O_PATCH},
    {"force", 0, false, O_FORCE},    {"lower", 0, true, O_LOWER},
    {"dest", 0, true, O_DEST},       {"include-protected", 0, true, O_INCLUDE},
    {"help", 'h', false, O_HELP},    {NULL, 0, false, 0},
};

struct wopts {
  bool json, patch, force, help;
  const char *lower, *dest;
  char **args; /* positionals after the verb */
  char **incl; /* --include-protected PATH, repeatable */
};

static const char usage[] =
    "Usage: agentrt workspace list [--format text|json]\n"
    "       agentrt workspace ID diff [--format text|json] [--patch]\n"
    "       agentrt workspace ID commit [--force] [--include-protected PATH]... [PATH...]\n"
    "       agentrt workspace ID discard | purge\n"
    "       agentrt workspace ID snapshot [NAME] | rollback NAME\n"
    "       agentrt workspace ID list [--format text|json]\n"
    "commit applies only changes the last diff showed (diff records them; a change\n"
    "written since is refused: diff again), and leaves protected ones out unless named.\n"
    "A sub-agent's (PARENT.NAME) whose parent's init has ended is diffed against the\n"
    "parent's workspace record and committed into the parent's workspace (its pending\n"
    "changes), not while a container uses that workspace.\n"
    "ID: a container id or a unique prefix of it, found in the data directory\n"
    "whichever engine root ran it (only --root's when given).\n"
    "The upper layer is an ext4 image of workspace.size (upper.img): the agent's\n"
    "writes past it fail with ENOSPC; these commands mount it only in this process.\n";

/* Options may come before or after positionals. */
static int parse(int argc, char **argv, int start, struct wopts *o, struct error *err)
{
  struct opt_iter it = {argc, argv, start};
  const char *val;
  int id, n;

  for (int guard = 0; guard <= argc; guard++) {
    while ((n = opt_next(&it, ws_specs, &id, &val, "workspace", err)) == 1) {
      if (id == O_FORMAT && !streq(val, "text") && !streq(val, "json"))
        return error_set(err, 0, "workspace: --format: expected `text` or `json`, got `%s`", val);
      o->json = id == O_FORMAT ? streq(val, "json") : o->json;
      o->patch |= id == O_PATCH;
      o->force |= id == O_FORCE;
      o->help |= id == O_HELP;
      o->lower = id == O_LOWER ? val : o->lower;
      o->dest = id == O_DEST ? val : o->dest;
      if (id == O_INCLUDE)
        strv_push(&o->incl, val);
    }
    if (n < 0)
      return -1;
    if (it.i >= argc)
      return 0;
    strv_push(&o->args, argv[it.i++]);
  }
  return 0;
}

static void wctx_close(struct wctx *x)
{
  struct error e = {0};

  if (x->frozen && x->c && x->c->cgroup && cgroup_freeze(x->c->cgroup, false, &e) < 0)
    log_warning("workspace `%s`: resume: %s", x->w->id, e.msg);
  if (x->target && cgroup_freeze(x->target->cgroup, false, &e) < 0)
    log_warning("workspace `%s`: resume `%s`: %s", x->w->id, x->target->id, e.msg);
  container_free(x->target);
  if (x->held) /* thawed: a signal that came meanwhile ends us now */
    sigprocmask(SIG_SETMASK, &x->old_mask, NULL);
  container_free(x->c);
  free(x->orphan_of);
  workspace_free(x->w);
  if (x->lockfd >= 0)
    close(x->lockfd);
  if (x->target_lockfd >= 0)
    close(x->target_lockfd);
  datadir_hit_free(&x->hit);
}

/* Find the workspace by id or prefix in the data directory (data_cmd.h),
 * load it, lock it, and find out whether a container uses it. */
static int wctx_open(const struct global_opts *g, const char *arg, struct wctx *x,
                     struct error *err)
{
  struct error e = {0};
  const char *id;

  *x = (struct wctx){.g = g, .lockfd = -1, .target_lockfd = -1, .state = "deleted"};
  if (data_find(g, DATA_WORKSPACE, arg, &x->gs, &x->hit, err) < 0)
    return -1;
  x->g = g = &x->gs;
  id = x->hit.id;
  if (workspace_load(g->store, id, &x->w, err) < 0)
    return -1;
  x->lockfd = open(x->w->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (x->lockfd < 0 || flock(x->lockfd, LOCK_EX) < 0)
    return error_errno(err, "workspace `%s`: lock", id);
  if (container_load(g, id, LOCK_EX, &x->c, &e) < 0) {
    if (e.code != ENOENT) {
      *err = e;
      return error_prefix(err, "workspace `%s`", id);
    }
  } else {
    x->state = container_status_name(x->c->status);
    x->in_use = x->c->status != STATUS_STOPPED && workspace_marked_mounted(x->w);
  }
  if (!x->in_use && workspace_marked_mounted(x->w)) {
    workspace_set_mounted(x->w, false); /* the container is gone: stale marker */
    workspace_gc(x->w);
  }
  return 0;
}

/* Before a freeze: SIGINT, SIGTERM, SIGHUP and SIGQUIT (a ^C, the sub-agent
 * client's relayed signal) wait until wctx_close has thawed; taken at once
 * they ended us with the container left frozen (freeze-kill). */
static void hold_signals(struct wctx *x)
{
  sigset_t set;

  if (x->held)
    return;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  sigaddset(&set, SIGQUIT);
  x->held = sigprocmask(SIG_BLOCK, &set, &x->old_mask) == 0;
}

/* Freeze a container using the workspace for the instant we need. */
static int wctx_freeze(struct wctx *x, struct error *err)
{
  if (!x->in_use || x->c->status == STATUS_PAUSED)
    return 0;
  if (container_cgroup(x->c, x->g, err) < 0)
    return error_prefix(err, "workspace `%s`: freeze", x->w->id);
  if (x->c->cgroup == NULL) {
    log_warning("workspace `%s`: the container has no cgroup, not frozen", x->w->id);
    return 0;
  }
  hold_signals(x);
  if (cgroup_freeze(x->c->cgroup, true, err) < 0)
    return error_prefix(err, "workspace `%s`: freeze", x->w->id);
  x->frozen = true;
  return 0;
}

static int refuse_in_use(const struct wctx *x, const char *verb, struct error *err)
{
  if (!x->in_use)
    return 0;
  return error_set(err, 0,
                   "workspace `%s`: %s: the container is %s and uses it; stop or delete it first",
                   x->w->id, verb, x->state);
}

static int scan(const struct workspace *w, struct ws_layers *l, struct ws_changes *c,
                struct error *err)
{
  if (workspace_open_layers(w, l, err) < 0)
    return -1;
  if (ws_scan(l, c, err) < 0 || ws_detect_renames(l, c, err) < 0) {
    ws_layers_close(l);
    return -1;
  }
  ws_drop_mountpoints(c, w->mountpoints);
  {
    cleanup_strv char **patterns = workspace_protected(w);
    ws_mark_protected(c, patterns, l);
  }
  ws_mark_ignored(c, l);
  return 0;
}

/* A sub-agent whose parent's init has ended (its container deleted,
 * restarted, the host rebooted): the parent's id, else NULL. */
static char *orphan_parent(const struct workspace *w)
{
  cleanup_close int hfd = -1;
  char *parent, *dot;

  if (!workspace_is_view(w->lowerdir) || w->view_start == 0 || strrchr(w->id, '.') == NULL)
    return NULL;
  hfd = workspace_open_host(w->lowerdir, w->view_start, O_PATH);
  if (hfd >= 0 || errno != ESRCH)
    return NULL;
  parent = xstrdup(w->id);
  dot = strrchr(parent, '.');
  *dot = '\0';
  return parent;
}

static int do_diff(struct wctx *x, const struct wopts *o, struct error *err)
{
  struct error e = {0};
  struct ws_layers l;
  struct ws_changes c;
  int ret;

  if (strv_len(o->args) != 0)
    return error_set(err, 0, "workspace diff: takes no arguments");
  /* frozen while it reads, so that what it records is what it shows; diff
   * only reads, so it goes on where the container cannot be frozen */
  if (wctx_freeze(x, &e) < 0) {
    log_warning("%s; the container may write while diff reads", e.msg);
    e = (struct error){0};
  }
  if (scan(x->w, &l, &c, err) < 0)
    return -1;
  {
    cleanup_free char *parent = orphan_parent(x->w);
    if (parent != NULL)
      fprintf(stderr,
              "workspace `%s`: its parent's init has ended: shown against the workspace of `%s` "
              "(its layers); commit puts them there\n",
              x->w->id, parent);
  }
  ret = ws_show_diff(stdout, x->w, &l, &c, o->json, o->patch, err);
  if (ret == 0 && workspace_review_record(x->w, &l, &c, &e) < 0)
    log_warning("%s; commit will refuse what it cannot match", e.msg);
  ws_changes_free(&c);
  ws_layers_close(&l);
  return ret;
}

/* "/workspace/a/b/" -> "a/b"; ".." anywhere is refused. */
static int normalize_paths(const struct workspace *w, char **args, struct error *err)
{
  size_t dl = strlen(w->dest);

  for (size_t i = 0; args && args[i]; i++) {
    char *p = args[i], *q;
    if (strncmp(p, w->dest, dl) == 0 && (p[dl] == '/' || p[dl] == '\0'))
      p += dl;
    while (*p == '/')
      p++;
    q = xstrdup(p);
    for (size_t n = strlen(q); n > 0 && q[n - 1] == '/'; n--)
      q[n - 1] = '\0';
    if (streq(q, "..") || str_has_prefix(q, "../") || strstr(q, "/../") ||
        (strlen(q) >= 3 && streq(q + strlen(q) - 3, "/.."))) {
      free(q);
      return error_set(err, EINVAL, "workspace commit: `%s`: `..` is not allowed", args[i]);
    }
    free(args[i]);
    args[i] = q;
  }
  return 0;
}

/* The protected changes the commit leaves out, one warning each. */
static size_t warn_left_out(const struct wctx *x, const struct ws_changes *c, const struct wopts *o)
{
  size_t n = 0;

  for (size_t i = 0; i < c->n; i++) {
    const struct ws_change *ch = &c->v[i];
    if (ch->protect == NULL || !ws_change_selected(ch, o->args) ||
        ws_commit_selected(ch, o->args, o->incl))
      continue;
    cleanup_free char *q = ws_quote_path(ch->path);
    log_warning("workspace `%s`: left out %s (protected: %s); commit --include-protected %s to "
                "apply it",
                x->w->id, q, ch->protect, q);
    n++;
  }
  return n;
}

/* Commit applies only what the last `diff` showed (review.c): a change the
 * container made or rewrote since is refused; with no diff recorded, a
 * container still using the workspace must be reviewed first. */
static int check_reviewed(const struct wctx *x, const struct ws_layers *l,
                          const struct ws_changes *c, const struct wopts *o, struct error *err)
{
  cleanup_strv char **unseen = NULL;
  bool recorded;
  size_t n;

  if (workspace_review_unseen(x->w, l, c, o->args, o->incl, &recorded, &unseen, err) < 0)
    return -1;
  if (!recorded && x->in_use)
    return error_set(err, 0,
                     "workspace `%s`: commit: the container is %s and uses it: run `workspace "
                     "%s diff` first (commit applies only what diff showed)",
                     x->w->id, x->state, x->w->id);
  if (unseen == NULL)
    return 0;
  n = strv_len(unseen);
  for (size_t i = 0; i < n && i < 20; i++) {
    cleanup_free char *q = ws_quote_path(unseen[i]);
    fprintf(stderr, "not reviewed: %s\n", q);
  }
  return error_set(err, 0,
                   "workspace `%s`: commit: %zu change(s) differ from what the last `diff` "
                   "showed (written since); run diff again and review them",
                   x->w->id, n);
}

static int commit_changes(struct wctx *x, const struct wopts *o, struct error *err)
{
  cleanup_strv char **conflicts = NULL, **skipped = NULL;
  struct ws_layers l;
  struct ws_changes c;
  size_t n = 0, sel = 0, left = 0;
  int ret = -1;

  if (scan(x->w, &l, &c, err) < 0)
    return -1;
  for (size_t i = 0; i < c.n; i++)
    sel += ws_commit_selected(&c.v[i], o->args, o->incl);
  for (size_t i = 0; o->incl && o->incl[i]; i++) {
    char *one[] = {o->incl[i], NULL};
    bool hit = false;
    for (size_t j = 0; j < c.n && !hit; j++)
      hit = c.v[j].protect && ws_change_selected(&c.v[j], one);
    if (!hit) {
      cleanup_free char *q = ws_quote_path(o->incl[i]);
      error_set(err, ENOENT,
                "workspace `%s`: commit: --include-protected %s: no protected change there",
                x->w->id, q);
      goto out;
    }
  }
  if (o->args && sel == 0) {
    error_set(err, ENOENT, "workspace `%s`: commit: no change matches the paths given", x->w->id);
    goto out;
  }
  if (check_reviewed(x, &l, &c, o, err) < 0)
    goto out;
  left = warn_left_out(x, &c, o);
  ws_commit_conflicts(x->w, &l, &c, o->args, o->incl, &conflicts, err);
  if (conflicts[0] && !o->force) {
    for (size_t i = 0; conflicts[i]; i++)
      fprintf(stderr, "conflict: %s\n", conflicts[i]);
    error_set(err, 0,
              "workspace `%s`: commit: %zu path(s) changed on the host since the container "
              "started; review them, then commit with --force to overwrite",
              x->w->id, strv_len(conflicts));
    goto out;
  }
  /* meta.json records the host's new state of each path (percent-encoded,
   * 3 bytes a byte at most, and its fields): taken before anything is
   * applied, so that a full data directory refuses the commit, not the
   * record after it (datadir-full-review) */
  {
    uint64_t extra = 0;
    for (size_t i = 0; i < c.n; i++)
      extra += 3 * (strlen(c.v[i].path) + (c.v[i].old_path ? strlen(c.v[i].old_path) : 0)) + 320;
    if (workspace_save_reserve(x->w, "commit", extra, err) < 0)
      goto out;
  }
  if (x->orphan_of != NULL) {
    /* into the parent's workspace record: its pending changes */
    close(l.hostfd);
    l.hostfd = workspace_open_record_host(x->w, true, err);
    if (l.hostfd < 0)
      goto out;
  }
  ret = ws_commit_apply(x->w, &l, &c, o->args, o->incl, &n, &skipped, err);
  for (size_t i = 0; skipped && skipped[i]; i++) {
    cleanup_free char *q = ws_quote_path(skipped[i]);
    log_warning("workspace `%s`: skipped %s: a special file (fifo, socket or device) is never "
                "committed",
                x->w->id, q);
  }
  if (workspace_save(x->w, ret < 0 ? &(struct error){0} : err) < 0)
    ret = -1;
  if (ret == 0 && !x->in_use)
    ws_prune_upper(&l, err);
  if (ret == 0 && x->orphan_of != NULL) {
    printf("committed %zu change(s) into the workspace of `%s` (its parent's init has ended): "
           "review them there (agentrt workspace %s diff)\n",
           n, x->orphan_of, x->orphan_of);
    if (left > 0)
      printf("left out %zu protected change(s)\n", left);
  } else if (ret == 0) {
    cleanup_free char *q = ws_quote_path(x->w->lowerdir); /* ws-path-escape */
    if (left > 0)
      printf("committed %zu change(s) to %s; left out %zu protected change(s)\n", n, q, left);
    else
      printf("committed %zu change(s) to %s\n", n, q);
  }
out:
  ws_changes_free(&c);
  ws_layers_close(&l);
  return ret;
}

/* The parent's processes write its view too: one write between the
 * commit's check and its rename was replaced silently (sub-commit-race).
 * The parent whose init the view is of (not a later one under its id) is
 * frozen for that time, as the operator's commit freezes a running
 * container. */
static int freeze_target(struct wctx *x, const char *parent, struct error *err)
{
  struct container *pc = NULL;
  struct error e = {0};
  char pfx[32];

  if (container_load(x->g, parent, 0, &pc, &e) < 0)
    return 0; /* gone: its view is refused by the commit itself */
  snprintf(pfx, sizeof pfx, "/proc/%d/", (int)pc->state->pid);
  if (pc->status != STATUS_RUNNING || pc->state->pid <= 0 ||
      strncmp(x->w->lowerdir, pfx, strlen(pfx)) != 0) {
    container_free(pc);
    return 0;
  }
  hold_signals(x);
  if (container_cgroup(pc, x->g, err) < 0 ||
      (pc->cgroup != NULL && cgroup_freeze(pc->cgroup, true, err) < 0)) {
    container_free(pc);
    return error_prefix(err, "workspace `%s`: freeze `%s`", x->w->id, parent);
  }
  if (pc->cgroup == NULL) {
    log_warning("workspace `%s`: the container `%s` has no cgroup, not frozen", x->w->id, parent);
    container_free(pc);
    return 0;
  }
  x->target = pc;
  return 0;
}

/* A sub-agent's commit writes into its parent's view (P.N's parent: P),
 * which the parent's own commit and its other children's write too: each
 * checks the paths it changes against the child's start, then applies, so
 * two at once both passed the check and the later rename silently replaced
 * the other's file (sub-commit-race).  They serialise on the flock of the
 * parent's workspace directory, taken after the child's own (children
 * before parents: no cycle).  A parent with no record left: nothing. */
static int lock_target(struct wctx *x, struct error *err)
{
  cleanup_free char *parent = xstrdup(x->w->id);
  cleanup_free char *dir = NULL;
  char *dot = strrchr(parent, '.');

  if (!workspace_is_view(x->w->lowerdir) || dot == NULL)
    return 0;
  *dot = '\0';
  dir = xfmt("%s/%s/%s", x->g->store, WS_DIR, parent);
  x->target_lockfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (x->target_lockfd < 0)
    return errno == ENOENT ? 0 : error_errno(err, "workspace `%s`: lock `%s`", x->w->id, parent);
  if (flock(x->target_lockfd, LOCK_EX) < 0)
    return error_errno(err, "workspace `%s`: lock `%s`", x->w->id, parent);
  return freeze_target(x, parent, err);
}

/* An orphan: a sub-agent whose parent's init has ended (its container
 * deleted, restarted, the host rebooted).  Its commit goes into the
 * parent's workspace record (workspace_open_record_host), which no
 * container may mount meanwhile: refused while the parent's container (run
 * again under its id) has it mounted.  Called with the parent's workspace
 * locked (lock_target). */
static int check_orphan(struct wctx *x, struct error *err)
{
  cleanup_free char *parent = orphan_parent(x->w);
  struct workspace *pw = NULL;
  struct container *pc = NULL;
  struct error e = {0};
  bool used;

  if (parent == NULL)
    return 0;
  if (workspace_load(x->g->store, parent, &pw, &e) < 0)
    return error_set(err, ENOENT,
                     "workspace `%s`: commit: its parent's init has ended and its parent's "
                     "workspace `%s` is gone: nothing to commit into (purge drops the changes)",
                     x->w->id, parent);
  used = workspace_marked_mounted(pw) && container_load(x->g, parent, 0, &pc, &e) == 0 &&
         pc->status != STATUS_STOPPED;
  container_free(pc);
  workspace_free(pw);
  if (used)
    return error_set(err, EBUSY,
                     "workspace `%s`: commit: its parent's init has ended and the container "
                     "`%s` uses its workspace again; stop it first (the changes go into that "
                     "workspace)",
                     x->w->id, parent);
  x->orphan_of = xstrdup(parent);
  return 0;
}

static int do_commit(struct wctx *x, struct wopts *o, struct error *err)
{
  if (normalize_paths(x->w, o->args, err) < 0 || normalize_paths(x->w, o->incl, err) < 0 ||
      lock_target(x, err) < 0 || check_orphan(x, err) < 0 || wctx_freeze(x, err) < 0)
    return -1;
  return commit_changes(x, o, err);
}

static int do_snapshot(struct wctx *x, const struct wopts *o, struct error *err)
{
  cleanup_free char *name = NULL;

  if (strv_len(o->args) > 1)
    return error_set(err, 0, "workspace snapshot: at most one NAME");
  if (o->args && o->args[0])
    name = xstrdup(o->args[0]);
  for (size_t i = x->w->n_snaps + 1; name == NULL && i < x->w->n_snaps + 1000; i++) {
    char *cand = xfmt("snap-%zu", i);
    if (workspace_find_snapshot(x->w, cand) == NULL)
      name = cand;
    else
      free(cand);
  }
  if (name == NULL)
    return error_set(err, EEXIST, "workspace `%s`: give the snapshot a NAME", x->w->id);
  if (wctx_freeze(x, err) < 0 || workspace_snapshot(x->w, name, err) < 0)
    return -1;
  printf("%s\n", name);
  return 0;
}

static int do_rollback(struct wctx *x, const struct wopts *o, struct error *err)
{
  cleanup_close int nsfd = -1;
  char **old;

  if (strv_len(o->args) != 1)
    return error_set(err, 0, "workspace rollback: expected exactly one snapshot NAME");
  if (!workspace_find_snapshot(x->w, o->args[0]))
    return error_set(err, ENOENT, "workspace `%s`: no snapshot `%s`", x->w->id, o->args[0]);
  if (!x->in_use)
    return workspace_rollback_layers(x->w, o->args[0], false, err);
  /* running: freeze, new upper + stack, mount it over the old one, thaw */
  FAILPOINT_PAUSE("workspace-rollback-before-join");
  /* pid-reuse-workspace-rollback: the init may have died since its status was read, and its pid
   * gone to another process (a host one: the host's mount namespace): the namespace is opened
   * through a /proc/PID handle checked against the init's start time, never by the pid alone */
  nsfd = proc_open_ns_identified(x->c->state->pid, x->c->state->pid_start_time, "mnt", err);
  if (nsfd < 0 || wctx_freeze(x, err) < 0)
    return error_prefix(err, "workspace `%s`: rollback", x->w->id);
  old = strv_dup(x->w->layers);
  if (workspace_rollback_layers(x->w, o->args[0], true, err) < 0) {
    strv_free(old);
    return -1;
  }
  if (workspace_remount_in_ns(x->w, nsfd, err) < 0) {
    struct error e2 = {0};
    if (workspace_rollback_undo(x->w, old ? old : xmalloc0(sizeof(char *)), &e2) < 0)
      log_warning("%s", e2.msg);
    return -1;
  }
  strv_free(old);
  return 0;
}

/* The number of entries `diff` would show (protected ones included). */
static long long count_changes(const struct workspace *w)
{
  struct error e = {0};
  struct ws_layers l;
  struct ws_changes c;
  long long n;

  if (workspace_open_layers(w, &l, &e) < 0)
    return -1;
  if (ws_scan(&l, &c, &e) < 0 || ws_detect_renames(&l, &c, &e) < 0) {
    ws_layers_close(&l);
    return -1;
  }
  ws_drop_mountpoints(&c, w->mountpoints);
  n = (long long)c.n;
  ws_changes_free(&c);
  ws_layers_close(&l);
  return n;
}

/* Every workspace of the data directory (only --root's when given), with
 * the engine root each belongs to. */
static int do_list_all(const struct global_opts *g, const struct wopts *o, struct error *err)
{
  struct datadir_hit *hits = NULL;
  struct ws_list_row *rows;
  size_t n = 0, nh = 0;
  int ret;

  if (data_list(g, DATA_WORKSPACE, &hits, &nh, err) < 0)
    return -1;
  rows = xmalloc0((nh + 1) * sizeof *rows);
  for (size_t i = 0; i < nh; i++) {
    struct global_opts gs = *g;
    struct workspace *w = NULL;
    struct container *c = NULL;
    struct error e = {0};
    gs.root = hits[i].root;
    if (workspace_load(hits[i].store, hits[i].id, &w, &e) < 0) {
      log_warning("%s", e.msg);
      continue;
    }
    rows[n].w = w;
    rows[n].root = hits[i].root;
    rows[n].state = "deleted";
    rows[n].changes = count_changes(w);
    rows[n].upper_bytes = workspace_du(w, "upper");
    rows[n].disk_bytes = workspace_du(w, ".");
    if (container_load(&gs, hits[i].id, 0, &c, &e) == 0) {
      rows[n].state = container_status_name(c->status);
      container_free(c);
    }
    n++;
  }
  ret = ws_show_list(stdout, rows, n, o->json, err);
  for (size_t i = 0; i < n; i++)
    workspace_free((struct workspace *)rows[i].w);
  free(rows);
  for (size_t i = 0; i < nh; i++)
    datadir_hit_free(&hits[i]);
  free(hits);
  return ret;
}

static int do_prepare(const struct global_opts *g, const char *id, const struct wopts *o,
                      struct error *err)
{
  struct workspace *w = NULL;
  int ret;

  if (o->lower == NULL || o->dest == NULL)
    return error_set(err, 0, "workspace prepare: --lower DIR and --dest PATH are required");
  if (datadir_store_prepare(g->data_dir, g->root, err) < 0 ||
      workspace_prepare(g->store, id, o->lower, 0, o->dest, NULL, &w, err) < 0)
    return -1;
  ret = ws_show_mount_entry(stdout, w, err);
  workspace_free(w);
  return ret;
}

static int run_verb(struct wctx *x, const char *verb, struct wopts *o, struct error *err)
{
  if (streq(verb, "diff"))
    return do_diff(x, o, err);
  if (streq(verb, "commit"))
    return do_commit(x, o, err);
  if (streq(verb, "snapshot"))
    return do_snapshot(x, o, err);
  if (streq(verb, "rollback"))
    return do_rollback(x, o, err);
  if (streq(verb, "list"))
    return ws_show_snapshots(stdout, x->w, x->state, o->json, err);
  if (streq(verb, "discard")) {
    if (refuse_in_use(x, verb, err) < 0 || workspace_discard(x->w, err) < 0)
      return -1;
    printf("discarded the changes of workspace %s\n", x->w->id);
    return 0;
  }
  if (streq(verb, "purge")) {
    workspace_unmount(x->w); /* the image's device goes with the last mount */
    if (refuse_in_use(x, verb, err) < 0 || workspace_purge(x->g->store, x->w->id, err) < 0)
      return -1;
    printf("purged workspace %s\n", x->w->id);
    return 0;
  }
  return error_set(err, 0, "workspace: unknown command `%s`", verb);
}

int cmd_workspace(const struct global_opts *g, int argc, char **argv, struct error *err)
{
  struct wopts o = {0};
  struct wctx x;
  const char *id, *verb;
  int ret;

  ws_raise_nofile(); /* the tree walks hold one fd per directory level */
  if (argc >= 2 && streq(argv[1], "list")) {
    if (parse(argc, argv, 2, &o, err) < 0)
      goto fail;
    if (o.help)
      printf("%s", usage);
    ret = o.help ? 0 : do_list_all(g, &o, err);
    strv_free(o.args);
    strv_free(o.incl);
    return ret;
  }
  if (argc < 3 || argv[1][0] == '-') {
    if (argc >= 2 && (streq(argv[1], "--help") || streq(argv[1], "-h"))) {
      printf("%s", usage);
      return 0;
    }
    return error_set(err, 0, "workspace: expected `workspace ID COMMAND` (see --help)");
  }
  id = argv[1], verb = argv[2];
  if (parse(argc, argv, 3, &o, err) < 0)
    goto fail;
  if (o.help) {
    printf("%s", usage);
    strv_free(o.args);
    strv_free(o.incl);
    return 0;
  }
  if (streq(verb, "prepare")) {
    ret = do_prepare(g, id, &o, err);
    strv_free(o.args);
    strv_free(o.incl);
    return ret;
  }
  if (wctx_open(g, id, &x, err) < 0) {
    wctx_close(&x);
    goto fail;
  }
  ret = run_verb(&x, verb, &o, err);
  wctx_close(&x);
  strv_free(o.args);
  strv_free(o.incl);
  return ret;
fail:
  strv_free(o.args);
  strv_free(o.incl);
  return -1;
}
