/* env.c - the profile's environment defaults and the "where writes go" line.
 *
 * On a read-only root, "global" installs (`npm install -g`, `pip install`
 * falling back to --user, `go install`, `cargo install`) fail with messages
 * that point at /usr/local.  The profile's env.defaults (NAME=VALUE, "$HOME"
 * = the process's home) send them to the writable home instead, but only
 * where the engine set no value of its own, and env.pathAppend adds their bin
 * directories to PATH.  Without a writable home nothing is added.  Applying
 * the step to its own output changes nothing (idempotence).
 *
 * HOME itself is among them: root's home is known (/root) even when the engine
 * passed no HOME, and git, npm and go refuse to run without one.
 *
 * PIP_USER is deliberately not among the defaults: pip refuses every install
 * inside a virtualenv while it is set; pip already falls back to a user
 * install (PYTHONUSERBASE) where site-packages is not writable.
 *
 * GIT_CONFIG_COUNT/KEY_0/VALUE_0 (git's command-line scope) set
 * safe.directory=*: the host dir at the workspace is the operator's uid's, and
 * git refuses a repository another uid owns ("detected dubious ownership"),
 * so the agent's git failed in every new container (git-dubious-ownership).
 * The check guards a user against another user's repository; every uid of
 * the container is the agent's, and the host's git never reads this
 * environment.  An engine's own GIT_CONFIG_COUNT, _KEY_0 or _VALUE_0 keeps
 * the three out (a stray KEY_0 of its own would count with ours).
 */
#include "profile/internal.h"

#include "common/util.h"

#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

static const char *env_home(char **env, uint32_t uid)
{
  for (size_t i = 0; env != NULL && env[i] != NULL; i++)
    if (str_has_prefix(env[i], "HOME="))
      return env[i][5] == '/' ? env[i] + 5 : NULL;
  return uid == 0 ? "/root" : NULL;
}

static ssize_t env_find(char **env, const char *name, size_t n);

/* HOME=/ for a uid other than 0 is what Docker and Podman pass for a uid the
 * image's /etc/passwd does not list (`docker run -u 1000:1000`); runc's and
 * agentrt's own fallback is "/" as well.  On this profile's read-only root that
 * home is unusable (git config --global, GOCACHE, npm -g, pip --user fail with
 * EROFS), so such a process gets /home/agentrt-UID instead, which the scratch
 * "$HOME" entry then makes a tmpfs of its own (at create; an exec as that uid
 * takes the init's home, cli/exec.c).  Returns the new HOME entry, or NULL when
 * nothing changes. */
static char *home_for_rootless_slash(const struct agent_profile *p, struct oci_process *proc,
                                     ssize_t *ret_at)
{
  bool scratch_home = false;
  cleanup_free char *h = NULL;
  ssize_t at;

  if (proc->user.uid == 0 || !p->rootfs_readonly)
    return NULL;
  for (size_t i = 0; i < p->n_scratch; i++)
    scratch_home |= streq(p->scratch[i].path, PROFILE_HOME_TOKEN);
  if (!scratch_home || (at = env_find(proc->env, "HOME", 4)) < 0)
    return NULL;
  h = path_normalize(proc->env[at] + 5);
  if (!streq(h, "/"))
    return NULL;
  *ret_at = at;
  return xfmt("HOME=/home/agentrt-%u", proc->user.uid);
}

static void home_fix(struct apply_ctx *x, const struct agent_profile *p, struct oci_process *proc)
{
  ssize_t at = -1;
  char *kv = home_for_rootless_slash(p, proc, &at);

  if (kv == NULL)
    return;
  profile_change_add(x, PROFILE_CHANGE_CONFIG, "process.env[HOME]", proc->env[at] + 5, kv + 5,
                     "a uid without a passwd entry had HOME=/ on the read-only root: a "
                     "writable home of its own");
  free(proc->env[at]);
  proc->env[at] = kv;
}

void profile_apply_home(struct apply_ctx *x)
{
  if (x->c->process != NULL)
    home_fix(x, x->p, x->c->process);
}

/* The home is writable under this profile: a scratch tmpfs ("$HOME"), the
 * workspace, or a writable root. */
static bool home_writable(const struct agent_profile *p, const char *home)
{
  cleanup_free char *h = NULL;

  if (home == NULL)
    return false;
  h = path_normalize(home);
  if (streq(h, "/"))
    return false;
  if (!p->rootfs_readonly)
    return true;
  if (p->workspace.mode != PROFILE_WS_NONE && p->workspace.path != NULL &&
      profile_path_is_under(h, p->workspace.path))
    return true;
  for (size_t i = 0; i < p->n_scratch; i++)
    if (streq(p->scratch[i].path, PROFILE_HOME_TOKEN) ||
        profile_path_is_under(h, p->scratch[i].path))
      return true;
  return false;
}

/* s with every "$HOME" replaced by home. */
static char *expand_home(const char *s, const char *home)
{
  char *out = xstrdup("");
  const char *t;

  while ((t = strstr(s, PROFILE_HOME_TOKEN)) != NULL) {
    char *prev = out;
    out = xfmt("%s%.*s%s", prev, (int)(t - s), s, home);
    free(prev);
    s = t + strlen(PROFILE_HOME_TOKEN);
  }
  t = out;
  out = xfmt("%s%s", t, s);
  free((char *)t);
  return out;
}

static ssize_t env_find(char **env, const char *name, size_t n)
{
  for (size_t i = 0; env != NULL && env[i] != NULL; i++)
    if (strncmp(env[i], name, n) == 0 && env[i][n] == '=')
      return (ssize_t)i;
  return -1;
}

static bool path_has(const char *path, const char *dir)
{
  size_t n = strlen(dir);

  for (const char *s = path; s != NULL; s = strchr(s, ':') ? strchr(s, ':') + 1 : NULL)
    if (strncmp(s, dir, n) == 0 && (s[n] == ':' || s[n] == '\0'))
      return true;
  return false;
}

/* Apply to one process; each change is reported through x (may be NULL). */
static void env_apply(struct apply_ctx *x, const struct agent_profile *p, struct oci_process *proc)
{
  const char *home = env_home(proc->env, proc->user.uid);
  cleanup_free char *hhome = NULL;
  bool engine_git;
  ssize_t at;

  if (!home_writable(p, home))
    return;
  hhome = path_normalize(home);
  engine_git = env_find(proc->env, "GIT_CONFIG_COUNT", 16) >= 0 ||
               env_find(proc->env, "GIT_CONFIG_KEY_0", 16) >= 0 ||
               env_find(proc->env, "GIT_CONFIG_VALUE_0", 18) >= 0;
  for (size_t i = 0; p->env.defaults != NULL && p->env.defaults[i] != NULL; i++) {
    const char *d = p->env.defaults[i];
    size_t n = (size_t)(strchr(d, '=') - d);
    cleanup_free char *val = NULL;
    cleanup_free char *field = NULL;

    if (env_find(proc->env, d, n) >= 0 || (str_has_prefix(d, "GIT_CONFIG_") && engine_git))
      continue;
    val = expand_home(d, hhome);
    strv_push(&proc->env, val);
    if (x != NULL) {
      field = xfmt("process.env[%.*s]", (int)n, d);
      profile_change_add(x, PROFILE_CHANGE_CONFIG, field, NULL, val + n + 1, "%s",
                         str_has_prefix(d, "GIT_CONFIG_")
                             ? "git trusts the workspace, which the host dir's owner owns "
                               "(safe.directory=*: every uid here is the agent's)"
                             : "the root is read-only: \"global\" installs go to the writable "
                               "home");
    }
  }
  at = env_find(proc->env, "PATH", 4);
  {
    cleanup_free char *old = xstrdup(at >= 0 ? proc->env[at] + 5 : DEFAULT_PATH);
    char *now = xstrdup(old);

    for (size_t i = 0; p->env.path_append != NULL && p->env.path_append[i] != NULL; i++) {
      cleanup_free char *dir = expand_home(p->env.path_append[i], hhome);
      if (!path_has(now, dir)) {
        char *prev = now;
        now = *prev ? xfmt("%s:%s", prev, dir) : xstrdup(dir);
        free(prev);
      }
    }
    /* nothing appended: an env without PATH stays without one, as runc and
     * crun pass it (env-no-path-added); the lookup has its default */
    if (streq(now, old)) {
      free(now);
      return;
    }
    if (at >= 0) {
      free(proc->env[at]);
      proc->env[at] = xfmt("PATH=%s", now);
    } else {
      char *kv = xfmt("PATH=%s", now);
      strv_push(&proc->env, kv);
      free(kv);
    }
    if (x != NULL)
      profile_change_add(x, PROFILE_CHANGE_CONFIG, "process.env[PATH]", at >= 0 ? old : NULL, now,
                         "the bin directories of the home's installs are on PATH");
    free(now);
  }
}

void profile_apply_env(struct apply_ctx *x)
{
  if (x->c->process == NULL)
    return;
  env_apply(x, x->p, x->c->process);
}

void profile_env_process(struct oci_process *proc, const struct agent_profile *p)
{
  env_apply(NULL, p, proc);
}

/* "/tmp 512m, /var/tmp 256m, /root (home) 256m, /dev/shm 64m" from the final
 * config's tmpfs mounts that the profile's scratch list names. */
static char *scratch_list(struct apply_ctx *x, const char *home)
{
  char *out = NULL;

  for (size_t i = 0; i < x->p->n_scratch; i++) {
    const struct profile_scratch *s = &x->p->scratch[i];
    bool is_home = streq(s->path, PROFILE_HOME_TOKEN);
    const char *path = is_home ? home : s->path;
    cleanup_free char *size = profile_fmt_size(s->size);
    char *prev = out;

    if (path == NULL || profile_mount_find(x->c, path) < 0)
      continue;
    out = xfmt("%s%s%s%s %s", prev ? prev : "", prev ? ", " : "", path, is_home ? " (home)" : "",
               size);
    free(prev);
  }
  return out;
}

void profile_apply_writes_summary(struct apply_ctx *x)
{
  const char *home = x->c->process ? env_home(x->c->process->env, x->c->process->user.uid) : NULL;
  cleanup_free char *h = home ? path_normalize(home) : NULL;
  cleanup_free char *scratch = NULL;
  cleanup_free char *ws = NULL;
  const char *wsp = x->r->workspace.path;

  if (!x->p->rootfs_readonly)
    return;
  scratch = scratch_list(x, h);
  switch (x->r->workspace.mode) {
  case PROFILE_WS_OVERLAY:
    ws = xfmt("%s (kept apart until `agentrt workspace ID commit`)", wsp);
    break;
  case PROFILE_WS_BIND:
    ws = xfmt("%s (the host directory)", wsp);
    break;
  case PROFILE_WS_TMPFS:
    ws = xfmt("%s (tmpfs, lost at delete)", wsp);
    break;
  default:
    break;
  }
  profile_change_add(x, PROFILE_CHANGE_RUNTIME, "writes", NULL, "read-only root",
                     "the root filesystem is read-only; writes go to %s%s%s; \"global\" installs "
                     "(npm -g, pip --user, go install, cargo install) go to %s",
                     ws ? ws : "", ws && scratch ? ", " : "", scratch ? scratch : "",
                     home_writable(x->p, h) && x->p->env.defaults ? h : "(no writable home)");
}
