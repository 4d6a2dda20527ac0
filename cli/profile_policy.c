/* profile_policy.c - applying the profile at create (see profile_policy.h). */
#include "cli/profile_policy.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "common/util.h"
#include "container/lsm.h"
#include "os/fsutil.h"
#include "os/passwd.h"
#include "os/safepath.h"

const char *policy_profile_name(const struct global_opts *g)
{
  return g->profile && *g->profile ? g->profile : PROFILE_DEFAULT;
}

/* CIS 5.31 / H14: the profile refuses binds of engine sockets by path; a
 * bind of a directory that merely holds one (-v /srv/x:/x with x/docker.sock)
 * is found here, with a bounded walk of the bind's source (runtime code:
 * the profile transform does no I/O). */
#define SCAN_DEPTH 3
#define SCAN_MAX_ENTRIES 4096

static int scan_dir(int dfd, const char *src, char **names, int depth, size_t *budget,
                    struct error *err)
{
  DIR *d = fdopendir(dfd);
  struct dirent *e;
  int ret = 0;

  if (d == NULL) {
    close(dfd);
    return 0;
  }
  while (ret == 0 && (e = readdir(d)) != NULL && *budget > 0) {
    struct stat st;
    (*budget)--;
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
      continue;
    if (e->d_type == DT_SOCK ||
        (e->d_type == DT_UNKNOWN && fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
         S_ISSOCK(st.st_mode))) {
      if (strv_contains(names, e->d_name))
        ret = error_set(err, 0,
                        "agent profile: bind mount of `%s` holds the engine socket `%s`: "
                        "refused (an engine socket gives root on the host)",
                        src, e->d_name);
    } else if (e->d_type == DT_DIR && depth > 0) {
      int sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (sub >= 0)
        ret = scan_dir(sub, src, names, depth - 1, budget, err);
    }
  }
  closedir(d);
  return ret;
}

static int refuse_socket_dirs(const struct oci_config *c, const struct agent_profile *p,
                              struct error *err)
{
  if (p->mounts.deny_basenames == NULL || c == NULL)
    return 0;
  for (size_t i = 0; i < c->n_mounts; i++) {
    const struct oci_mount *m = &c->mounts[i];
    size_t budget = SCAN_MAX_ENTRIES;
    int dfd;
    bool bind = streq(m->type, "bind") || strv_contains(m->options, "bind") ||
                strv_contains(m->options, "rbind") || profile_mount_is_workspace(m);
    if (!bind || m->source == NULL || m->source[0] != '/')
      continue;
    dfd = open(m->source, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
      continue; /* a file (checked by the profile) or missing (create fails later) */
    if (scan_dir(dfd, m->source, p->mounts.deny_basenames, SCAN_DEPTH, &budget, err) < 0)
      return -1;
  }
  return 0;
}

/* Each secret's placeholder: "agentrt-secret-" and 32 random hex digits, new
 * for every container, set as NAME=<placeholder> in the process's
 * environment (an engine's own NAME is replaced: the profile says the
 * container gets no real value).  The monitor maps it back (it inherits
 * the result); the value itself is read by the monitor only. */
static int secret_placeholders(struct oci_config *c, struct profile_result *r, struct error *err)
{
  for (size_t i = 0; i < r->n_secrets; i++) {
    struct profile_secret *s = &r->secrets[i];
    unsigned char raw[16];
    char hex[sizeof raw * 2 + 1];
    cleanup_free char *kv = NULL;
    size_t n = strlen(s->name);
    bool replaced = false;

    if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw)
      return error_errno(err, "secret %s: getrandom", s->name);
    for (size_t k = 0; k < sizeof raw; k++)
      snprintf(hex + 2 * k, 3, "%02x", raw[k]);
    free(s->placeholder);
    s->placeholder = xfmt("agentrt-secret-%s", hex);
    if (c->process == NULL)
      continue;
    kv = xfmt("%s=%s", s->name, s->placeholder);
    for (size_t k = 0; c->process->env != NULL && c->process->env[k] != NULL; k++) {
      if (strncmp(c->process->env[k], s->name, n) == 0 && c->process->env[k][n] == '=') {
        free(c->process->env[k]);
        c->process->env[k] = xstrdup(kv);
        replaced = true;
      }
    }
    if (!replaced)
      strv_push(&c->process->env, kv);
  }
  return 0;
}

/* Where the container's /etc/passwd will come from: the source of the last
 * bind mount on /etc/passwd or on /etc (an engine that binds the host's or a
 * generated file: `podman run --userns=keep-id`, `-v /etc/passwd:/etc/passwd`),
 * relative sources under the bundle; else the rootfs's own file.  Sets *host
 * to the host path of such a source, or leaves it NULL; false when another
 * mount (a tmpfs on /etc) hides the file altogether. */
static bool passwd_source(const struct oci_config *c, const char *bundle, char **host)
{
  bool present = true;

  *host = NULL;
  for (size_t i = 0; i < c->n_mounts; i++) {
    const struct oci_mount *m = &c->mounts[i];
    cleanup_free char *dest = m->destination ? path_normalize(m->destination) : NULL;
    bool bind = streq(m->type, "bind") || strv_contains(m->options, "bind") ||
                strv_contains(m->options, "rbind");
    const char *src = m->source;

    if (dest == NULL || (!streq(dest, "/etc/passwd") && !streq(dest, "/etc")))
      continue;
    free(*host);
    *host = NULL;
    present = bind && src != NULL;
    if (!present)
      continue;
    *host =
        xfmt("%s%s%s%s", src[0] == '/' || bundle == NULL ? "" : bundle,
             src[0] == '/' || bundle == NULL ? "" : "/", src, streq(dest, "/etc") ? "/passwd" : "");
  }
  return present;
}

/* A process of a uid other than 0 without HOME: the init takes its home from
 * the container's /etc/passwd, "/" for a uid the file does not list (as runc
 * does; Podman writes an entry whose home is "/").  Under a profile with a read-only root and a
 * scratch home, pass that
 * "/" now, so that the profile gives the process a home of its own
 * (profile/env.c; agent-home-uid-without-passwd).  One read of the
 * container's /etc/passwd (the rootfs's, or a bind mount's source:
 * agent-home-bound-passwd), only for such a process. */
static void home_unlisted_uid(struct oci_config *c, const struct agent_profile *p,
                              const char *bundle, const char *rootfs)
{
  struct oci_process *proc = c->process;
  struct error e = {0};
  cleanup_close int root = -1;
  cleanup_close int fd = -1;
  cleanup_free char *data = NULL;
  cleanup_free char *home = NULL;
  cleanup_free char *bound = NULL;
  bool scratch_home = false;
  size_t len = 0;
  struct stat st;

  if (proc == NULL || proc->user.uid == 0 || rootfs == NULL || !p->rootfs_readonly)
    return;
  for (size_t i = 0; proc->env != NULL && proc->env[i] != NULL; i++)
    if (str_has_prefix(proc->env[i], "HOME="))
      return;
  for (size_t i = 0; i < p->n_scratch; i++)
    scratch_home |= streq(p->scratch[i].path, PROFILE_HOME_TOKEN);
  if (!scratch_home)
    return;
  if (!passwd_source(c, bundle, &bound))
    fd = -1;
  else if (bound != NULL)
    fd = open(bound, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  else if ((root = open(rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC)) >= 0)
    fd = safe_openat(root, "/etc/passwd", O_RDONLY | O_NONBLOCK | O_NOCTTY, 0, &e);
  /* a FIFO or a device planted there must not block or feed us forever */
  if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
      read_fd_all(fd, 4 << 20, &data, &len, &e) == 0)
    home = passwd_home(data, len, NULL, proc->user.uid);
  error_clear(&e);
  /* no entry, or one with the home "/" (Podman adds "container user" so) */
  if (home == NULL || streq(home, "/"))
    strv_push(&proc->env, "HOME=/");
}

int policy_apply(const struct global_opts *g, const struct agent_profile *given, const char *id,
                 const char *bundle, const char *rootfs, struct oci_config **cfg,
                 struct profile_result **ret_result, struct error *err)
{
  struct agent_profile *loaded = NULL;
  const struct agent_profile *p = given;
  struct oci_config *out = NULL;
  const char *name = policy_profile_name(g);
  int r;

  *ret_result = NULL;
  if (p == NULL) {
    if (profile_load(name, &loaded, err) < 0)
      return error_prefix(err, "profile `%s`", name);
    p = loaded;
  }
  home_unlisted_uid(*cfg, p, bundle, rootfs);
  r = profile_apply(*cfg, p, &out, ret_result, err);
  if (r == 0)
    profile_apply_apparmor(out, p, lsm_apparmor_enabled(), *ret_result);
  if (r < 0 || refuse_socket_dirs(out, p, err) < 0 ||
      secret_placeholders(out, *ret_result, err) < 0 ||
      (loaded != NULL && (*ret_result)->subagents.enabled &&
       profile_to_json(loaded, &(*ret_result)->subagent_json, &(*ret_result)->subagent_len, err) <
           0)) {
    profile_free(loaded);
    oci_config_free(out);
    profile_result_free(*ret_result);
    *ret_result = NULL;
    return -1;
  }
  profile_free(loaded);
  oci_config_free(*cfg);
  *cfg = out;
  return 0;
}

/* Where writes go and what the filter refuses, for a person at a terminal
 * (engines and scripts that read our stderr see nothing new; the log and
 * `explain` always have the full list). */
static void notice_terminal(const char *id, const struct profile_result *r)
{
  const char *ptrace = NULL;

  for (size_t i = 0; i < r->n_changes; i++) {
    if (streq(r->changes[i].field, "writes"))
      fprintf(stderr, "agentrt: %s: %s\n", id, r->changes[i].reason);
    if (streq(r->changes[i].field, "ptrace"))
      ptrace = r->changes[i].new_value;
  }
  if (r->extra_seccomp != NULL) {
    const struct oci_seccomp *s = r->extra_seccomp;
    char names[160] = "";
    const char *prev = NULL;
    size_t len = 0, shown = 0;

    /* the first few names (clone has one rule per namespace flag: once) */
    for (size_t i = 0; i < s->n_syscalls && shown < 6; i++) {
      const char *n = s->syscalls[i].names ? s->syscalls[i].names[0] : NULL;
      if (n == NULL || (prev != NULL && streq(prev, n)))
        continue;
      prev = n;
      len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", shown ? ", " : "", n);
      shown++;
      if (len >= sizeof names)
        break;
    }
    fprintf(stderr,
            "agentrt: %s: the profile's seccomp filter refuses %s%s (%zu rules); ptrace: %s; "
            "`agentrt explain %s` lists them, `agentrt audit %s` has the trail\n",
            id, names, s->n_syscalls > shown ? ", ..." : "", s->n_syscalls, ptrace ? ptrace : "-",
            id, id);
  }
}

int policy_record(int dirfd, const char *id, const struct profile_result *r, struct error *err)
{
  cleanup_free char *json = NULL;
  cleanup_free char *text = NULL;
  size_t len = 0;

  if (r == NULL)
    return 0;
  if (profile_changes_json(r, &json, &len, err) < 0)
    return -1;
  /* One file: `explain` renders the text from it (a file less to write at
   * create and to unlink at delete). */
  if (write_file_atomic_at(dirfd, "profile.json", json, len, err) < 0)
    return -1;
  /* log-quiet-success: a profile that changed nothing (oci) logs nothing, as
   * runc logs nothing when a command succeeds (podman reads its --log file as
   * one JSON object: a record before a failure's error hid it) */
  text = r->n_changes > 0 ? profile_changes_text(r) : NULL;
  if (text && *text) {
    /* one log record per change, as `explain` lists them */
    for (char *line = text, *nl; line && *line; line = nl ? nl + 1 : NULL) {
      nl = strchr(line, '\n');
      if (nl)
        *nl = '\0';
      if (*line)
        log_info("create `%s`: profile `%s`: %s", id, r->profile ? r->profile : "?", line);
    }
  }
  if (isatty(STDERR_FILENO))
    notice_terminal(id, r);
  return 0;
}
