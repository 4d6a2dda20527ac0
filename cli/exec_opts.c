/* exec_opts.c - see exec_opts.h */
#include "cli/exec_opts.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "common/log.h"
#include "common/util.h"
#include "container/process.h"
#include "os/fsutil.h"

enum {
  E_PROCESS = 1,
  E_DETACH,
  E_PIDFILE,
  E_TTY,
  E_CONSOLE,
  E_ENV,
  E_CWD,
  E_USER,
  E_CAP,
  E_NNP,
  E_PRESERVE,
  E_GIDS,
  E_LABEL,
  E_APPARMOR,
  E_IGNORE_PAUSED,
  E_CGROUP,
  E_HELP,
};

static const struct opt_spec exec_specs[] = {
    {"process", 'p', true, E_PROCESS},
    {"detach", 'd', false, E_DETACH},
    {"pid-file", 0, true, E_PIDFILE},
    {"tty", 't', false, E_TTY},
    {"console-socket", 0, true, E_CONSOLE},
    {"env", 'e', true, E_ENV},
    {"cwd", 0, true, E_CWD},
    {"user", 'u', true, E_USER},
    {"cap", 'c', true, E_CAP},
    {"no-new-privs", 0, false, E_NNP},
    {"preserve-fds", 0, true, E_PRESERVE},
    {"additional-gids", 'g', true, E_GIDS},
    {"process-label", 0, true, E_LABEL},
    {"apparmor", 0, true, E_APPARMOR},
    {"ignore-paused", 0, false, E_IGNORE_PAUSED},
    {"cgroup", 0, true, E_CGROUP},
    {"help", 'h', false, E_HELP},
    {NULL, 0, false, 0},
};

int exec_opts_parse(int argc, char **argv, struct exec_opts *o, struct error *err)
{
  struct opt_iter it = {argc, argv, 1};
  const char *val;
  int id, n;

  memset(o, 0, sizeof *o);
  while ((n = opt_next(&it, exec_specs, &id, &val, "exec", err)) == 1) {
    bool on = val == NULL || strcmp(val, "true") == 0;
    switch (id) {
    case E_PROCESS:
      o->process_file = val;
      break;
    case E_DETACH:
      o->detach = on;
      break;
    case E_PIDFILE:
      o->pid_file = val;
      break;
    case E_TTY:
      o->tty = on;
      o->tty_set = true;
      break;
    case E_CONSOLE:
      o->console_socket = val;
      break;
    case E_ENV:
      strv_push(&o->env, val);
      break;
    case E_CWD:
      o->cwd = val;
      break;
    case E_USER:
      o->user = val;
      break;
    case E_CAP:
      strv_push(&o->caps, val);
      break;
    case E_NNP:
      o->no_new_privs = on;
      o->no_new_privs_set = true;
      break;
    case E_PRESERVE:
      if (parse_int(val, &o->preserve_fds) < 0 || o->preserve_fds < 0 || o->preserve_fds > 4096)
        return error_set(err, 0, "exec: --preserve-fds: invalid number `%s`", val);
      break;
    case E_GIDS: {
      uint32_t gid;
      /* a usage error, as runc's (exec-gids-usage): checked again below */
      if (parse_u32(val, &gid) < 0 || gid == UINT32_MAX)
        return error_set(err, 0, "exec: --additional-gids: invalid group id `%s`", val);
      strv_push(&o->gids, val);
      break;
    }
    case E_IGNORE_PAUSED:
      o->ignore_paused = true;
      break;
    case E_CGROUP:
      strv_push(&o->cgroups, val);
      break;
    case E_LABEL:
      o->process_label = val;
      break;
    case E_APPARMOR:
      o->apparmor = val;
      break;
    case E_HELP:
      o->help = true;
      printf("Usage: agentrt exec [--process FILE] [--detach] [--pid-file FILE] [--tty]\n"
             "                    [--console-socket SOCK] [--env K=V]... [--cwd DIR]\n"
             "                    [--user UID[:GID]] [--additional-gids GID]... [--cap CAP]...\n"
             "                    [--no-new-privs]\n"
             "                    [--preserve-fds N] [--ignore-paused] [--cgroup [CTRL:]SUB]\n"
             "                    [--apparmor PROFILE] [--process-label LABEL]\n"
             "                    ID [COMMAND [ARG...]]\n"
             "--console-socket goes with --detach and a terminal (--tty or process.terminal).\n");
      return 0;
    }
  }
  if (n < 0)
    goto fail;
  if (it.i >= argc) {
    error_set(err, 0, "exec: expected a container id");
    goto fail;
  }
  o->id = argv[it.i++];
  /* no command is not a usage error: as runc's, an exec failure (255) once
   * the container is found (exec_build_process, exec-no-command) */
  o->args = argv + it.i;
  return 0;
fail:
  exec_opts_free(o);
  return -1;
}

int exec_read_process(struct exec_opts *o, struct error *err)
{
  cleanup_free char *json = NULL;
  size_t len = 0;

  /* the engine deletes this file as soon as we exit: read it first (exec-process-bad: every
   * error names the container and the file) */
  if (read_file_at(AT_FDCWD, o->process_file, 16 << 20, &json, &len, err) < 0 ||
      oci_process_parse(json, len, o->process_file, &o->process, err) < 0)
    return error_prefix(err, "exec `%s`: --process", o->id ? o->id : "");
  return 0;
}

void exec_opts_free(struct exec_opts *o)
{
  if (o->process)
    oci_process_free(o->process);
  o->process = NULL;
  strv_free(o->env);
  strv_free(o->caps);
  strv_free(o->gids);
  strv_free(o->cgroups);
  o->env = o->caps = o->gids = o->cgroups = NULL;
}

/* The parts of the container's process an exec inherits. */
static struct oci_process *process_from_config(const struct oci_process *base)
{
  struct oci_process *p = xmalloc0(sizeof *p);

  if (base == NULL) {
    p->cwd = xstrdup("/");
    return p;
  }
  p->cwd = xstrdup(base->cwd ? base->cwd : "/");
  p->env = strv_dup(base->env);
  p->user.uid = base->user.uid;
  p->user.gid = base->user.gid;
  p->user.has_umask = base->user.has_umask;
  p->user.umask = base->user.umask;
  if (base->user.n_additional_gids) {
    size_t sz = base->user.n_additional_gids * sizeof(uint32_t);
    p->user.additional_gids = xmalloc(sz);
    memcpy(p->user.additional_gids, base->user.additional_gids, sz);
    p->user.n_additional_gids = base->user.n_additional_gids;
  }
  /* the config's sets, inheritable and ambient too when it lists them (an
   * unlisted set stays empty: CVE-2022-29162) */
  p->has_caps = base->has_caps;
  p->caps = base->caps;
  p->no_new_privileges = base->no_new_privileges;
  if (base->n_rlimits) {
    p->rlimits = xmalloc0(base->n_rlimits * sizeof *p->rlimits);
    for (size_t i = 0; i < base->n_rlimits; i++) {
      p->rlimits[i] = base->rlimits[i];
      p->rlimits[i].type = xstrdup(base->rlimits[i].type);
    }
    p->n_rlimits = base->n_rlimits;
  }
  p->apparmor_profile = xstrdup(base->apparmor_profile);
  p->selinux_label = xstrdup(base->selinux_label);
  /* as runc: an exec runs with the container's scheduling and CPU affinity */
  p->has_scheduler = base->has_scheduler;
  p->scheduler = base->scheduler;
  p->has_io_priority = base->has_io_priority;
  p->io_priority_class = base->io_priority_class;
  p->io_priority = base->io_priority;
  p->exec_cpu_initial = xstrdup(base->exec_cpu_initial);
  p->exec_cpu_final = xstrdup(base->exec_cpu_final);
  /* as runc: the container's oomScoreAdj, not the caller's (an engine's
   * shim runs with one near -1000) */
  p->has_oom_score_adj = base->has_oom_score_adj;
  p->oom_score_adj = base->oom_score_adj;
  return p;
}

static void env_set(char ***env, const char *kv)
{
  const char *eq = strchr(kv, '=');
  size_t klen = eq ? (size_t)(eq - kv) : strlen(kv);

  for (char **e = *env; e && *e; e++) {
    if (strncmp(*e, kv, klen) == 0 && (*e)[klen] == '=') {
      free(*e);
      *e = xstrdup(kv);
      return;
    }
  }
  strv_push(env, kv);
}

static int apply_flags(const struct exec_opts *o, struct oci_process *p, struct error *err)
{
  for (char **e = o->env; e && *e; e++) {
    if (strchr(*e, '=') == NULL || **e == '=') /* a name, not empty (runc refuses it too) */
      return error_set(err, 0, "--env `%s`: expected KEY=VALUE", *e);
    env_set(&p->env, *e);
  }
  if (o->cwd) {
    if (o->cwd[0] != '/')
      return error_set(err, 0, "--cwd `%s`: must be an absolute path", o->cwd);
    free(p->cwd);
    p->cwd = xstrdup(o->cwd);
  }
  if (o->user) {
    bool has_gid = false;
    uint32_t uid, gid;
    if (parse_user_spec(o->user, &uid, &gid, &has_gid, err) < 0)
      return -1;
    p->user.uid = uid;
    p->user.gid = has_gid ? gid : 0;
  }
  for (char **g = o->gids; g && *g; g++) {
    uint32_t gid;
    if (parse_u32(*g, &gid) < 0 || gid == UINT32_MAX)
      return error_set(err, 0, "--additional-gids `%s`: invalid group id", *g);
    p->user.additional_gids =
        xrealloc(p->user.additional_gids, (p->user.n_additional_gids + 1) * sizeof(uint32_t));
    p->user.additional_gids[p->user.n_additional_gids++] = gid;
  }
  for (char **c = o->caps; c && *c; c++) {
    int cap = oci_cap_from_name(*c);
    if (cap < 0) {
      log_warning("exec: --cap `%s`: unknown capability, ignoring", *c);
      continue;
    }
    /* never inheritable (CVE-2022-29162); ambient, as runc, only where the
     * config has an inheritable set (the kernel needs the bit there too) */
    p->has_caps = true;
    p->caps.has_bounding = p->caps.has_effective = p->caps.has_permitted = true;
    p->caps.bounding |= 1ULL << cap;
    p->caps.effective |= 1ULL << cap;
    p->caps.permitted |= 1ULL << cap;
    if (p->caps.has_inheritable) {
      p->caps.has_ambient = true;
      p->caps.ambient |= 1ULL << cap;
    }
  }
  /* either way, as runc: --no-new-privs=false clears the config's (a
   * profile that sets it applies after, exec_apply_profile) */
  if (o->no_new_privs_set)
    p->no_new_privileges = o->no_new_privs;
  if (o->apparmor) {
    free(p->apparmor_profile);
    p->apparmor_profile = xstrdup(o->apparmor);
  }
  if (o->process_label) {
    free(p->selinux_label);
    p->selinux_label = xstrdup(o->process_label);
  }
  if (o->tty_set)
    p->terminal = o->tty;
  return 0;
}

/* A --process without labels runs with the container's, as runc does. */
static void inherit_labels(struct oci_process *p, const struct oci_process *base)
{
  if (base == NULL)
    return;
  /* a --process without oomScoreAdj gets the container's, as runc (which
   * always uses the container's) */
  if (!p->has_oom_score_adj && base->has_oom_score_adj) {
    p->has_oom_score_adj = true;
    p->oom_score_adj = base->oom_score_adj;
  }
  if ((p->apparmor_profile == NULL || *p->apparmor_profile == '\0') && base->apparmor_profile) {
    free(p->apparmor_profile);
    p->apparmor_profile = xstrdup(base->apparmor_profile);
  }
  if ((p->selinux_label == NULL || *p->selinux_label == '\0') && base->selinux_label) {
    free(p->selinux_label);
    p->selinux_label = xstrdup(base->selinux_label);
  }
}

int exec_build_process(const struct exec_opts *o, const struct oci_config *cfg,
                       struct oci_process **ret, struct error *err)
{
  struct oci_process *p = NULL;

  if (o->process_file) {
    if (o->process == NULL && exec_read_process((struct exec_opts *)o, err) < 0)
      return -1;
    p = o->process;
    ((struct exec_opts *)o)->process = NULL;
    inherit_labels(p, cfg->process);
  } else {
    p = process_from_config(cfg->process);
    p->args = strv_dup(o->args);
  }
  if (apply_flags(o, p, err) < 0) {
    oci_process_free(p);
    return -1;
  }
  if (p->args == NULL || p->args[0] == NULL) {
    oci_process_free(p);
    return error_set(err, 0, "process.args: must not be empty");
  }
  *ret = p;
  return 0;
}
