/* subagents.c - the server of the in-container sub-agent API (subagents.h,
 * docs/subagents.md): one forked handler per request, which checks that the
 * child narrows its parent and runs this binary's CLI for it. */
#include "profile/render.h"
#include "monitor/subagents.h"
#include "monitor/subreq.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/openat2.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>

#include "audit/audit.h"
#include "audit/jbuf.h"
#include "cgroups/cgroup.h"
#include "common/egress_grammar.h"
#include "common/log.h"
#include "common/subproto.h"
#include "common/util.h"
#include "oci/state.h"
#include "os/fsutil.h"
#include "os/pid.h"
#include "os/procfs.h"
#include "workspace/workspace.h"

extern const unsigned char agentrt_subclient_blob[];
extern const size_t agentrt_subclient_blob_len;

/* Requests served at once (each is a process on the host, outside the
 * container's pids limit): past it a connection is answered "busy". */
#define MAX_HANDLERS 64
#define MAX_HANDLERS_S "64"
/* The whole 'Q' frame must arrive within this. */
#define REQUEST_SECONDS 10
/* A detached child's output kept in sub/NAME/output (the state directory,
 * often a tmpfs): the rest is read and dropped. */
#define OUTPUT_MAX (256u << 10)
/* Children kept (running, or ended and not discarded) at once. */
#define MAX_KEPT 256
/* sub/NAME/upstream-ca.pem: what the child's proxy trusts beside the host's store (the
 * parent's upstreamCA and the parent's own CA: write_child_profile) */
#define UPSTREAM_CA "upstream-ca.pem"

int subagent_listen(int state_dirfd, struct error *err)
{
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  char path[64];
  int fd;

  snprintf(path, sizeof path, "/proc/self/fd/%d/%s", state_dirfd, SUBAGENT_SOCK);
  if (strlen(path) >= sizeof sa.sun_path)
    return error_set(err, ENAMETOOLONG, "sub-agents: socket path");
  strcpy(sa.sun_path, path);
  unlinkat(state_dirfd, SUBAGENT_SOCK, 0);
  fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0)
    return error_errno(err, "sub-agents: socket");
  if (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(fd, 16) < 0) {
    error_errno(err, "sub-agents: bind %s", SUBAGENT_SOCK);
    close(fd);
    return -1;
  }
  /* the container's processes may run as any user */
  if (fchmodat(state_dirfd, SUBAGENT_SOCK, 0666, 0) < 0) {
    error_errno(err, "sub-agents: chmod %s", SUBAGENT_SOCK);
    close(fd);
    return -1;
  }
  return fd;
}

int subagent_client_path(const char *data_dir, char **ret, struct error *err)
{
  cleanup_free char *dir = xfmt("%s/cache", data_dir);
  cleanup_free char *path =
      xfmt("%s/%s-%zu", dir, SUBAGENT_CLIENT_NAME, agentrt_subclient_blob_len);
  cleanup_free char *tmp = NULL;
  struct stat st;
  int fd;

  if (stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
      (size_t)st.st_size == agentrt_subclient_blob_len) {
    *ret = path;
    path = NULL;
    return 0;
  }
  if (mkdir(dir, 0755) < 0 && errno != EEXIST)
    return error_errno(err, "sub-agents: mkdir `%s`", dir);
  tmp = xfmt("%s.%d", path, (int)getpid());
  fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0555);
  if (fd < 0)
    return error_errno(err, "sub-agents: write `%s`", tmp);
  if (write(fd, agentrt_subclient_blob, agentrt_subclient_blob_len) !=
          (ssize_t)agentrt_subclient_blob_len ||
      fchmod(fd, 0555) < 0 || close(fd) < 0 || rename(tmp, path) < 0) {
    error_errno(err, "sub-agents: write `%s`", path);
    unlink(tmp);
    return -1;
  }
  *ret = path;
  path = NULL;
  return 0;
}

/* ---- one connection */

struct conn {
  int fd;
  int io[3]; /* the client's stdin, stdout, stderr (or /dev/null) */
  char **words;
  const struct subagent_parent *p;
  uint32_t uid, gid; /* the caller's, as the container sees them (peer_ids) */
};

static void frame(struct conn *c, int type, const char *data, size_t n)
{
  unsigned char h[5];

  if (n > SUBPROTO_MAX - 1)
    n = SUBPROTO_MAX - 1;
  subproto_put_len(h, (uint32_t)n + 1);
  h[4] = (unsigned char)type;
  if (write_all(c->fd, h, 5) == 0)
    write_all(c->fd, data, n);
}

static void say(struct conn *c, int type, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void say(struct conn *c, int type, const char *fmt, ...)
{
  cleanup_free char *s = NULL;
  va_list ap;

  va_start(ap, fmt);
  if (vasprintf(&s, fmt, ap) < 0)
    s = NULL;
  va_end(ap);
  if (s != NULL)
    frame(c, type, s, strlen(s));
}

static void finish(struct conn *c, int status)
{
  char b[16];

  snprintf(b, sizeof b, "%d", status & 0xff);
  frame(c, SUBPROTO_EXIT, b, strlen(b));
}

/* A refusal: one line on the client's stderr, status 125 (as `docker run`
 * for a daemon error).  It repeats what the agent asked for (a name, a
 * path), so its controls are escaped as an error line's on the host: a
 * newline or an escape sequence in a name forged a line or repainted the
 * terminal that shows it (terminal-inject-sub-name). */
static int refuse(struct conn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int refuse(struct conn *c, const char *fmt, ...)
{
  cleanup_free char *s = NULL, *line = NULL, *safe = NULL;
  size_t n;
  va_list ap;

  va_start(ap, fmt);
  if (vasprintf(&s, fmt, ap) < 0)
    s = NULL;
  va_end(ap);
  /* the verb is the agent's too; \uXXXX at most for each byte */
  line = xfmt("sub %s: %s", c->words[0], s ? s : "refused");
  n = strlen(line) * 6 + 16;
  safe = xmalloc(n);
  log_safe_text(safe, n, line);
  say(c, SUBPROTO_STDERR, "agentrt: %s\n", safe);
  return 125;
}

static int64_t now_ms(void)
{
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Read n bytes, all of them by a deadline (now_ms): a client that sends a
 * byte now and then does not keep the handler. */
static int read_by(int fd, void *buf, size_t n, int64_t deadline)
{
  char *s = buf;

  while (n > 0) {
    struct pollfd pf = {.fd = fd, .events = POLLIN};
    int64_t left = deadline - now_ms();
    ssize_t r;
    if (left <= 0 || poll(&pf, 1, (int)left) <= 0)
      return -1;
    r = read(fd, s, n);
    if (r < 0 && (errno == EINTR || errno == EAGAIN))
      continue;
    if (r <= 0)
      return -1;
    s += r;
    n -= (size_t)r;
  }
  return 0;
}

/* The 'Q' frame and its fds. */
static int read_request(struct conn *c, int64_t deadline)
{
  unsigned char h[5];
  struct msghdr mh = {0};
  struct iovec iov = {.iov_base = h, .iov_len = sizeof h};
  union {
    char b[CMSG_SPACE(3 * sizeof(int))];
    struct cmsghdr align;
  } u;
  uint32_t n;
  cleanup_free char *body = NULL;
  ssize_t r;

  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  mh.msg_control = u.b;
  mh.msg_controllen = sizeof u.b;
  do {
    r = recvmsg(c->fd, &mh, MSG_CMSG_CLOEXEC | MSG_WAITALL);
  } while (r < 0 && errno == EINTR);
  if (r <= 0)
    return -1;
  for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
    if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
      continue;
    size_t k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    int fds[3];
    memcpy(fds, CMSG_DATA(cm), (k > 3 ? 3 : k) * sizeof(int));
    for (size_t i = 0; i < k && i < 3; i++)
      c->io[i] = fds[i];
  }
  if (mh.msg_flags & MSG_CTRUNC)
    return -1;
  if ((size_t)r < sizeof h && read_by(c->fd, h + r, sizeof h - (size_t)r, deadline) < 0)
    return -1;
  n = subproto_get_len(h);
  if (h[4] != SUBPROTO_REQUEST || n < 2 || n > SUBPROTO_MAX)
    return -1;
  body = xmalloc(n);
  if (read_by(c->fd, body, n - 1, deadline) < 0)
    return -1;
  return subproto_split_words(body, n - 1, &c->words);
}

static char *state_path(const struct subagent_parent *p, const char *rel)
{
  return xfmt("%s/%s/%s", p->root, p->id, rel);
}

static char *child_id(const struct subagent_parent *p, const char *name)
{
  return xfmt("%s.%s", p->id, name);
}

/* Is sig one that the CLI we run relays to the child (cli/tty.c,
 * fwd_signals_block)?  The others would end that host process, not the
 * child: SIGKILL or SIGSTOP, or a fault signal's default action, left the
 * child running with no one to delete it and its end recorded in the
 * parent's trail while it went on (sub-signal-supervisor). */
static bool relayed_signal(int sig)
{
  static const int own[] = {SIGKILL, SIGSTOP, SIGSEGV, SIGBUS, SIGILL,
                            SIGFPE,  SIGABRT, SIGTRAP, SIGSYS};

  if (sig <= 0 || sig > SIGRTMAX)
    return false;
  for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
    if (sig == own[i])
      return false;
  return true;
}

/* Run this binary's CLI with the client's stdio; its exit status (128+N on
 * a signal).  While it runs, 'S' frames are sent on to it: those it relays
 * (relayed_signal). */
static int run_cli(struct conn *c, char **argv, int out_fd, pid_t *ret_pid, bool wait_it)
{
  pid_t pid = fork();
  int status = 0;

  if (pid < 0)
    return refuse(c, "fork: %s", strerror(errno));
  if (pid == 0) {
    int in = c->io[0], out = out_fd >= 0 ? out_fd : c->io[1], er = out_fd >= 0 ? out_fd : c->io[2];
    /* above 2 first: a passed fd may be numbered 0..2 */
    int a = fcntl(in, F_DUPFD_CLOEXEC, 3), b = fcntl(out, F_DUPFD_CLOEXEC, 3),
        d = fcntl(er, F_DUPFD_CLOEXEC, 3);
    if (a < 0 || b < 0 || d < 0 || dup2(a, 0) < 0 || dup2(b, 1) < 0 || dup2(d, 2) < 0)
      _exit(125);
    close_fds_except(3, (int[]){-1}, 0);
    setpgid(0, 0);
    execv(c->p->exe, argv);
    _exit(127);
  }
  if (ret_pid)
    *ret_pid = pid;
  if (!wait_it)
    return 0;
  int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
  for (;;) {
    struct pollfd pf[2] = {{.fd = c->fd, .events = POLLIN}, {.fd = pidfd, .events = POLLIN}};
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid)
      break;
    /* the pidfd wakes us when it ends; without one, look every 100 ms */
    if (poll(pf, 2, pidfd >= 0 ? -1 : 100) > 0 && (pf[0].revents & POLLIN)) {
      unsigned char h[5];
      char num[16] = {0};
      uint32_t n;
      /* a frame begun is whole within REQUEST_SECONDS (sub-signal-stall:
       * one left half sent held this process in a read, the child's end
       * neither waited for nor recorded, for as long as the client liked) */
      int64_t deadline = now_ms() + REQUEST_SECONDS * 1000;
      if (read_by(c->fd, h, 5, deadline) == 0 && h[4] == SUBPROTO_SIGNAL &&
          (n = subproto_get_len(h)) >= 2 && n < sizeof num &&
          read_by(c->fd, num, n - 1, deadline) == 0) {
        int sig = subproto_parse_signal(num, n - 1);
        if (relayed_signal(sig))
          kill(pid, sig);
      } else {
        c->fd = -1; /* gone: the child goes on, as with a detached docker client */
      }
    } else if (pf[0].revents & (POLLHUP | POLLERR)) {
      /* the client is gone; keep waiting so the end is recorded */
      c->fd = -1;
    }
    if (c->fd < 0) {
      waitpid(pid, &status, 0);
      break;
    }
  }
  if (pidfd >= 0)
    close(pidfd);
  if (WIFSIGNALED(status))
    return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

/* argv for `agentrt --root R --data-dir D [--profile P] VERB ...` */
static char **cli_argv(const struct subagent_parent *p, const char *profile, const char *verb)
{
  char **v = NULL;

  strv_push(&v, "agentrt");
  strv_push(&v, "--root");
  strv_push(&v, p->root);
  if (p->data_dir) {
    strv_push(&v, "--data-dir");
    strv_push(&v, p->data_dir);
  }
  if (profile) {
    strv_push(&v, "--profile");
    strv_push(&v, profile);
  }
  strv_push(&v, verb);
  return v;
}

static void parent_record(const struct subagent_parent *p, const char *kind, const char *fields)
{
  struct error e = {0};

  if (p->trail != NULL && audit_append_event(p->trail, p->id, kind, fields, &e) < 0)
    log_warning("sub-agents: record %s: %s", kind, e.msg);
}

/* ---- the child's bundle */

static const char *const env_pass[] = {"PATH=", "HOME=", "LANG=", "LC_",
                                       "TERM=", "TZ=",   "USER=", NULL};

/* The parent's own seccomp filter, the engine's (docker's default allowlist,
 * or one the operator gave it), for a child: a notify action has no
 * listener there and is a refusal (EPERM). */
static struct oci_seccomp *engine_seccomp(const struct oci_seccomp *parent)
{
  struct oci_seccomp *sc = oci_seccomp_dup(parent);

  free(sc->listener_path);
  free(sc->listener_metadata);
  sc->listener_path = sc->listener_metadata = NULL;
  if (sc->default_action != NULL && streq(sc->default_action, "SCMP_ACT_NOTIFY")) {
    free(sc->default_action);
    sc->default_action = xstrdup("SCMP_ACT_ERRNO");
    sc->has_default_errno_ret = true;
    sc->default_errno_ret = EPERM;
  }
  for (size_t i = 0; i < sc->n_syscalls; i++) {
    struct oci_seccomp_syscall *s = &sc->syscalls[i];
    if (s->action != NULL && streq(s->action, "SCMP_ACT_NOTIFY")) {
      free(s->action);
      s->action = xstrdup("SCMP_ACT_ERRNO");
      s->has_errno_ret = true;
      s->errno_ret = EPERM;
    }
  }
  return sc;
}

/* Is path strictly below dir (a directory of it, not a prefix of its name)? */
static bool strictly_below(const char *path, const char *dir)
{
  size_t n = strlen(dir);

  if (n == 1 && dir[0] == '/')
    return path[0] == '/' && path[1] != '\0';
  return strncmp(path, dir, n) == 0 && path[n] == '/' && path[n + 1] != '\0';
}

/* A mount of the parent's config inside its workspace that hides what is
 * there (a tmpfs, an empty directory or /dev/null bound over a subdirectory
 * or a file such as .env): the child's workspace layers are the parent's
 * workspace record, its host directory included, so the child saw what the
 * mount hides from the parent (ws-mount-hidden).  Not one that binds the
 * host directory's own content there (a protected path made read-only). */
static bool hides_in_workspace(const struct subagent_parent *p, const struct oci_mount *m)
{
  const char *ws = p->profile->workspace.path;
  const char *src = NULL;

  if (ws == NULL || m->destination == NULL || !strictly_below(m->destination, ws))
    return false;
  for (size_t i = 0; i < p->config->n_mounts; i++)
    if (p->config->mounts[i].destination != NULL && streq(p->config->mounts[i].destination, ws))
      src = p->config->mounts[i].source;
  if (src != NULL && m->source != NULL && str_has_prefix(m->source, src) &&
      streq(m->source + strlen(src), m->destination + strlen(ws)))
    return false;
  return true;
}

/* The parent's init is in a user namespace other than ours (the monitor's):
 * a config's own (root mapped to an unprivileged range), a rootless one. */
static bool parent_own_userns(pid_t init)
{
  struct stat a, b;
  char path[40];

  snprintf(path, sizeof path, "/proc/%d/ns/user", (int)init);
  return stat("/proc/self/ns/user", &a) == 0 && stat(path, &b) == 0 &&
         (a.st_ino != b.st_ino || a.st_dev != b.st_dev);
}

/* The child's config (in y) with what of its parent's config holds the
 * parent's process beyond the profile: the engine's seccomp filter (under
 * the profile's stacked one, as in the parent), its rlimits, its LSM labels
 * and its masked and read-only paths.  Without them a child called what its
 * parent's engine refused, ran with the host runtime's rlimits
 * (engine-seccomp) and read what the parent's config masked (config-masks). */
static int write_child_config_json(const struct subagent_parent *p, const struct subreq_run *r,
                                   int dirfd, yajl_gen y, struct error *err)
{
  const struct oci_process *pp = p->config->process;
  const struct oci_linux *pl = p->config->linux;
  const unsigned char *buf;
  size_t len = 0;
  struct oci_config *c = NULL;
  cleanup_free char *json = NULL;
  int rc;

  if (yajl_gen_get_buf(y, &buf, &len) != yajl_gen_status_ok ||
      oci_config_parse((const char *)buf, len, "config.json", &c, err) < 0 || c->linux == NULL ||
      c->process == NULL) {
    oci_config_free(c);
    return err->msg[0] ? -1 : error_set(err, 0, "cannot write config.json");
  }
  if (pl != NULL && pl->seccomp != NULL) {
    if (c->linux->seccomp != NULL)
      oci_seccomp_free(c->linux->seccomp);
    c->linux->seccomp = engine_seccomp(pl->seccomp);
  }
  if (pl != NULL && pl->mount_label != NULL)
    c->linux->mount_label = xstrdup(pl->mount_label);
  /* what the parent's config masks or makes read-only (the engine's, the
   * operator's) is so for the child too; the child's profile adds its own */
  if (pl != NULL && pl->masked_paths != NULL)
    c->linux->masked_paths = strv_dup(pl->masked_paths);
  if (pl != NULL && pl->readonly_paths != NULL)
    c->linux->readonly_paths = strv_dup(pl->readonly_paths);
  /* what a mount of the parent's hides in its workspace stays hidden: masked
   * (after the child's own mounts, its workspace overlay among them) */
  for (size_t i = 0; i < p->config->n_mounts; i++) {
    const struct oci_mount *m = &p->config->mounts[i];
    if (hides_in_workspace(p, m) && strictly_below(m->destination, r->workspace) &&
        !strv_contains(c->linux->masked_paths, m->destination)) {
      if (c->linux->masked_paths == NULL)
        c->linux->masked_paths = xmalloc0(sizeof(char *));
      strv_push(&c->linux->masked_paths, m->destination);
    }
  }
  if (pp != NULL) {
    if (pp->n_rlimits > 0) {
      c->process->rlimits = xmalloc0(pp->n_rlimits * sizeof *pp->rlimits);
      for (size_t i = 0; i < pp->n_rlimits; i++) {
        c->process->rlimits[i] = pp->rlimits[i];
        c->process->rlimits[i].type = xstrdup(pp->rlimits[i].type);
      }
      c->process->n_rlimits = pp->n_rlimits;
    }
    if (pp->apparmor_profile != NULL)
      c->process->apparmor_profile = xstrdup(pp->apparmor_profile);
    if (pp->selinux_label != NULL)
      c->process->selinux_label = xstrdup(pp->selinux_label);
  }
  rc = oci_config_to_json_pretty(c, &json, &len, err);
  oci_config_free(c);
  if (rc < 0)
    return -1;
  return write_file_atomic_at(dirfd, "config.json", json, len, err);
}

static int write_child_config(const struct subagent_parent *p, const struct subreq_run *r,
                              int dirfd, const char *id, struct error *err)
{
  yajl_gen y = yajl_gen_alloc(NULL);
  const struct oci_process *pp = p->config->process;
  const char *const proc_opts[] = {"nosuid", "noexec", "nodev", NULL};
  const char *const dev_opts[] = {"nosuid", "strictatime", "mode=755", "size=65536k", NULL};
  const char *const pts_opts[] = {"nosuid",        "noexec",    "newinstance",
                                  "ptmxmode=0666", "mode=0620", NULL};
  const char *const shm_opts[] = {"nosuid", "noexec", "nodev", "mode=1777", "size=65536k", NULL};
  const char *const sys_opts[] = {"nosuid", "noexec", "nodev", "ro", NULL};
  const char *const tmp_opts[] = {"nosuid", "nodev", "mode=1777", "size=256m", NULL};
  const char *const ws_bind[] = {"rbind", "nosuid", "nodev", NULL};
  const char *const hide_opts[] = {"nosuid", "nodev", "noexec", "mode=755", "size=1m", NULL};
  cleanup_free char *ws_src = xfmt("/proc/%d/root%s", (int)p->init_pid, r->workspace);
  cleanup_free char *cg = NULL;
  cleanup_free char *netns = xfmt("/proc/%d/ns/net", (int)p->init_pid);
  int rc;

  yajl_gen_config(y, yajl_gen_beautify, 1);
  yajl_gen_map_open(y);
  profile_gen_key_str(y, "ociVersion", "1.2.0");
  profile_gen_str(y, "process");
  yajl_gen_map_open(y);
  profile_gen_str(y, "terminal");
  yajl_gen_bool(y, 0);
  profile_gen_str(y, "user");
  yajl_gen_map_open(y);
  /* the caller's ids, not the parent's process.user: a process of another
   * user (an `exec --user`, a setuid drop) gets no more than it has */
  profile_gen_str(y, "uid");
  yajl_gen_integer(y, r->uid);
  profile_gen_str(y, "gid");
  yajl_gen_integer(y, r->gid);
  yajl_gen_map_close(y);
  profile_gen_str(y, "args");
  yajl_gen_array_open(y);
  for (char **a = r->cmd; *a; a++)
    profile_gen_str(y, *a);
  yajl_gen_array_close(y);
  profile_gen_str(y, "env");
  yajl_gen_array_open(y);
  /* the parent's environment may hold its credentials: only these pass */
  for (char **e = pp ? pp->env : NULL; e && *e; e++)
    for (const char *const *k = env_pass; *k; k++)
      if (str_has_prefix(*e, *k)) {
        profile_gen_str(y, *e);
        break;
      }
  {
    cleanup_free char *e = xfmt("AGENTRT_SUBAGENT=%s", r->name);
    profile_gen_str(y, e);
  }
  yajl_gen_array_close(y);
  profile_gen_key_str(y, "cwd", r->workspace);
  /* no capabilities: at least as strict as any parent's */
  profile_gen_str(y, "noNewPrivileges");
  yajl_gen_bool(y, 1);
  yajl_gen_map_close(y);

  profile_gen_str(y, "root");
  yajl_gen_map_open(y);
  profile_gen_key_str(y, "path", p->rootfs);
  profile_gen_str(y, "readonly");
  yajl_gen_bool(y, 1);
  yajl_gen_map_close(y);
  profile_gen_key_str(y, "hostname", r->name);

  profile_gen_str(y, "mounts");
  yajl_gen_array_open(y);
  profile_gen_mount(y, "/proc", "proc", "proc", proc_opts);
  profile_gen_mount(y, "/dev", "tmpfs", "tmpfs", dev_opts);
  profile_gen_mount(y, "/dev/pts", "devpts", "devpts", pts_opts);
  profile_gen_mount(y, "/dev/shm", "tmpfs", "shm", shm_opts);
  profile_gen_mount(y, "/sys", "sysfs", "sysfs", sys_opts);
  /* its own /tmp, also when the workspace is below it (mounted after) */
  if (!streq(r->workspace, "/tmp"))
    profile_gen_mount(y, "/tmp", "tmpfs", "tmpfs", tmp_opts);
  /* what the parent hides under an empty tmpfs stays hidden (an engine's
   * --tmpfs, a sandbox's /home): an empty one of the child's own, also when
   * it holds the workspace (mounted after it, on top).  A prefix of the
   * workspace's path that is not a directory of it (/work, /workspace) was
   * left out, and so was one that holds it: the child saw the image's files
   * there (tmpfs-prefix). */
  for (size_t i = 0; i < p->config->n_mounts; i++) {
    const struct oci_mount *m = &p->config->mounts[i];
    const char *d = m->destination;
    if (!streq(m->type, "tmpfs") || d == NULL || streq(d, "/dev") || streq(d, "/dev/shm") ||
        streq(d, "/tmp") || streq(d, "/run/agentrt") || str_has_prefix(d, "/run/agentrt/") ||
        streq(d, r->workspace))
      continue;
    profile_gen_mount(y, d, "tmpfs", "tmpfs", hide_opts);
  }
  /* the parent's current view of its workspace, through its init's root:
   * the child's profile makes it the lower layer of its own overlay */
  profile_gen_mount(y, r->workspace, "bind", ws_src, ws_bind);
  yajl_gen_array_close(y);

  if (r->allow != NULL) {
    /* the child's own table and resolver police its namespace; slirp4netns
     * carries what they let out from the parent's, where the parent's do */
    profile_gen_str(y, "hooks");
    yajl_gen_map_open(y);
    profile_gen_str(y, "createRuntime");
    yajl_gen_array_open(y);
    yajl_gen_map_open(y);
    profile_gen_key_str(y, "path", p->exe);
    profile_gen_str(y, "args");
    yajl_gen_array_open(y);
    profile_gen_str(y, "agentrt");
    profile_gen_str(y, "sandbox-net");
    profile_gen_str(y, "--netns");
    profile_gen_str(y, netns);
    yajl_gen_array_close(y);
    profile_gen_str(y, "timeout");
    yajl_gen_integer(y, 20);
    yajl_gen_map_close(y);
    yajl_gen_array_close(y);
    yajl_gen_map_close(y);
  }
  profile_gen_str(y, "annotations");
  yajl_gen_map_open(y);
  profile_gen_key_str(y, "io.agentrt.parent", p->id);
  {
    /* the workspace record keeps it: /proc/PID/root is used only while PID
     * is this init (workspace_open_host) */
    char st[24];
    snprintf(st, sizeof st, "%" PRIu64, p->init_start);
    profile_gen_key_str(y, "io.agentrt.parent-start", st);
  }
  profile_gen_key_str(y, "io.agentrt.subagent", r->name);
  yajl_gen_map_close(y);

  profile_gen_str(y, "linux");
  yajl_gen_map_open(y);
  profile_gen_str(y, "namespaces");
  yajl_gen_array_open(y);
  for (const char *const *t = (const char *const[]){"pid", "ipc", "uts", "mount", "cgroup", NULL};
       *t; t++) {
    yajl_gen_map_open(y);
    profile_gen_key_str(y, "type", *t);
    yajl_gen_map_close(y);
  }
  /* a network namespace of its own: loopback only, or with --allow
   * slirp4netns run from the parent's namespace (below) */
  yajl_gen_map_open(y);
  profile_gen_key_str(y, "type", "network");
  yajl_gen_map_close(y);
  if (parent_own_userns(p->init_pid)) {
    /* the parent's user namespace: in ours the child's uid 0 was the
     * host's, wider than the parent's (a file only the host's root may
     * read in its image), and not the owner of the parent's workspace
     * (sub-userns-write) */
    cleanup_free char *userns = xfmt("/proc/%d/ns/user", (int)p->init_pid);
    yajl_gen_map_open(y);
    profile_gen_key_str(y, "type", "user");
    profile_gen_key_str(y, "path", userns);
    yajl_gen_map_close(y);
  }
  yajl_gen_array_close(y);
  if (p->cgroup_path != NULL && *p->cgroup_path) {
    /* nested: the parent's limits bound the whole family */
    cg = xfmt("%s/%s", p->cgroup_path, id);
    profile_gen_key_str(y, "cgroupsPath", cg);
  }
  if (r->has_memory || r->has_pids || r->has_cpus) {
    profile_gen_str(y, "resources");
    yajl_gen_map_open(y);
    if (r->has_memory) {
      profile_gen_str(y, "memory");
      yajl_gen_map_open(y);
      profile_gen_str(y, "limit");
      yajl_gen_integer(y, (long long)r->memory);
      yajl_gen_map_close(y);
    }
    if (r->has_pids) {
      profile_gen_str(y, "pids");
      yajl_gen_map_open(y);
      profile_gen_str(y, "limit");
      yajl_gen_integer(y, (long long)r->pids);
      yajl_gen_map_close(y);
    }
    if (r->has_cpus) {
      profile_gen_str(y, "cpu");
      yajl_gen_map_open(y);
      profile_gen_str(y, "period");
      yajl_gen_integer(y, 100000);
      profile_gen_str(y, "quota");
      yajl_gen_integer(y, (long long)(r->cpus_milli * 100));
      yajl_gen_map_close(y);
    }
    yajl_gen_map_close(y);
  }
  yajl_gen_map_close(y);
  yajl_gen_map_close(y);
  rc = write_child_config_json(p, r, dirfd, y, err);
  yajl_gen_free(y);
  return rc;
}

/* A limit of the child's profile at most the parent's: its default (what a
 * child asking for none gets) and its ceiling.  For the CPU quota only:
 * cgroup v1 refuses a child's cpu.cfs_quota_us above its parent's, while a
 * child's memory or pids limit above the parent's is allowed, and bounded
 * by the parent's (the nesting shows in subagents.bats' fork bomb). */
static void clamp_limit(struct profile_limit *l, uint64_t parent)
{
  if (parent == 0)
    return;
  if (!l->has_default || l->def > parent) {
    l->def = parent;
    l->has_default = true;
  }
  if (!l->has_max || l->max > parent) {
    l->max = parent;
    l->has_max = true;
  }
}

/* The nameservers of the parent's /etc/resolv.conf, read inside its root
 * (the parent's to change: a symlink resolves within it, a FIFO or a huge
 * file is not read), at most EGRESS_MAX_UPSTREAM; none when unreadable. */
static void parent_nameservers(const struct subagent_parent *p, char ***ret)
{
  struct error e = {0};
  cleanup_close int pfd = proc_open_identified(p->init_pid, p->init_start, &e);
  cleanup_close int rfd = pfd >= 0 ? openat(pfd, "root", O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
  struct open_how how = {.flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC,
                         .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
  cleanup_close int fd = -1;
  cleanup_free char *text = NULL;
  size_t len = 0, n = 0;
  struct stat st;
  char *save = NULL;

  if (rfd < 0)
    return;
  fd = (int)syscall(SYS_openat2, rfd, "etc/resolv.conf", &how, sizeof how);
  if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
      read_fd_all(fd, 65536, &text, &len, &e) < 0)
    return;
  for (char *l = strtok_r(text, "\n", &save); l && n < EGRESS_MAX_UPSTREAM;
       l = strtok_r(NULL, "\n", &save)) {
    char addr[128];
    struct egress_upstream u;
    if (sscanf(l, " nameserver %127s", addr) == 1 && egress_upstream_parse(addr, &u, &e) == 0) {
      strv_push(ret, addr);
      n++;
    }
  }
}

/* The parent's effective profile (create wrote it), narrowed: the
 * workspace at the child's path, no egress table of its own, one generation
 * less of sub-agents. */
static int write_child_profile(const struct subagent_parent *p, const struct subreq_run *r,
                               int dirfd, struct error *err)
{
  cleanup_free char *path = state_path(p, "subagent-profile.json");
  cleanup_free char *text = NULL, *json = NULL;
  struct agent_profile *ap = NULL;
  struct profile_subagents *s;
  size_t len = 0;
  int rc;

  if (read_file_at(AT_FDCWD, path, 1 << 20, &text, &len, err) < 0 ||
      profile_parse(text, len, "subagent-profile.json", &ap, err) < 0)
    return -1;
  free(ap->name);
  ap->name = xstrdup("subagent");
  free(ap->workspace.path);
  ap->workspace.path = xstrdup(r->workspace);
  ap->workspace.mode = PROFILE_WS_OVERLAY;
  /* no image of its own: create attaches the parent's (one per container),
   * whose upper is the child's top lower layer; its own upper is made in
   * that image too, so the parent's size bounds the family (workspace/image.c,
   * subagent-size-bypass) */
  ap->workspace.size = 0;
  /* only the secrets asked for (each one the parent has: parse_run); the
   * child's create gives it placeholders of its own */
  {
    size_t kept = 0;
    for (size_t i = 0; i < ap->n_secrets; i++) {
      if (strv_contains(r->secrets, ap->secrets[i].name))
        ap->secrets[kept++] = ap->secrets[i];
      else
        profile_secret_clear(&ap->secrets[i]);
    }
    ap->n_secrets = kept;
  }
  /* the parent's proxy terminates the child's HTTPS to the names it holds a
   * secret or an HTTP rule for (never putting its own secrets in: the
   * child's connections reach it at TLS_PROXY_CHILD_PORT), so the child's
   * proxy, which puts in the child's secrets, trusts the parent's CA for its
   * upstream beside the parent's upstreamCA; without that, a child's secret
   * never reached its host (certificate verify failed) */
  if (p->profile->egress.def != PROFILE_EGRESS_OFF &&
      (p->profile->n_secrets > 0 || p->profile->egress.n_http > 0)) {
    cleanup_free char *mine = state_path(p, "ca-bundle.crt"), *theirs = NULL, *ours = NULL;
    cleanup_free char *both = NULL;
    size_t n1 = 0, n2 = 0;
    if (read_file_at(AT_FDCWD, mine, 16 << 20, &ours, &n1, err) < 0 ||
        (p->profile->egress.tls_upstream_ca != NULL &&
         read_file_at(AT_FDCWD, p->profile->egress.tls_upstream_ca, 16 << 20, &theirs, &n2, err) <
             0)) {
      profile_free(ap);
      return error_prefix(err, "the child's upstream CA");
    }
    both = xfmt("%s\n%s", theirs ? theirs : "", ours);
    if (write_file_atomic_at(dirfd, UPSTREAM_CA, both, strlen(both), err) < 0) {
      profile_free(ap);
      return -1;
    }
    free(ap->egress.tls_upstream_ca);
    ap->egress.tls_upstream_ca =
        xfmt("%s/%s/%s/%s/%s", p->root, p->id, SUBAGENT_DIR, r->name, UPSTREAM_CA);
  }
  /* its own allowlist, in its own namespace; its resolver asks the parent's
   * (127.0.0.1:53 in the parent's namespace), so a name must pass both and
   * is pinned in both tables */
  strv_free(ap->egress.allow);
  ap->egress.allow = strv_dup(r->allow);
  /* secrets are substituted by the egress policy's proxy: a child with
   * secrets and no --allow gets a policy that lets nothing out */
  ap->egress.def = r->allow || r->secrets ? PROFILE_EGRESS_DENY : PROFILE_EGRESS_OFF;
  /* the resolver's upstream sockets are made in the parent's namespace
   * whatever the parent's policy: made in the runtime's (the host's), a
   * child of a parent with no network at all sent its queries, names of its
   * choosing, out of the host (sub-dns-host-netns) */
  if (r->allow || r->secrets) {
    free(ap->egress.dns_upstream_netns);
    ap->egress.dns_upstream_netns = xfmt("/proc/%d/ns/net", (int)p->init_pid);
  }
  if (r->allow && p->profile->egress.def != PROFILE_EGRESS_OFF) {
    strv_free(ap->egress.dns_upstream);
    ap->egress.dns_upstream = NULL;
    strv_push(&ap->egress.dns_upstream, "127.0.0.1");
  } else if (r->allow && strv_len(ap->egress.dns_upstream) == 0) {
    /* no policy, no upstream of the profile's: the parent's own resolvers */
    parent_nameservers(p, &ap->egress.dns_upstream);
  }
  {
    const struct oci_resources *pr = p->config->linux ? p->config->linux->resources : NULL;
    if (pr && pr->has_cpu_quota && pr->cpu_quota > 0 && pr->has_cpu_period && pr->cpu_period > 0)
      clamp_limit(&ap->resources.cpus,
                  (uint64_t)((unsigned __int128)pr->cpu_quota * 1000 / pr->cpu_period));
  }
  s = &ap->subagents;
  /* one generation less; none left: off (maxDepth itself is at least 1) */
  s->enabled = p->profile->subagents.max_depth > 1;
  s->max_depth = s->enabled ? p->profile->subagents.max_depth - 1 : 1;
  s->max_children = p->profile->subagents.max_children;
  rc = profile_to_json(ap, &json, &len, err);
  profile_free(ap);
  if (rc < 0)
    return -1;
  return write_file_atomic_at(dirfd, "profile.json", json, len, err);
}

/* ---- the verbs */

/* Is there a file or symlink HEAD in the directory dir of the parent's
 * view (git takes such a directory for a bare repository)? */
static bool view_has_head(const struct subagent_parent *p, const char *dir)
{
  cleanup_free char *view = xfmt("/proc/%d/root%s", (int)p->init_pid, dir);
  cleanup_close int fd = workspace_open_host(view, p->init_start, O_PATH);
  struct stat st;

  return fd >= 0 && fstatat(fd, "HEAD", &st, AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH) == 0 &&
         (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode));
}

/* Why the directory abs (normalized, ws or below it) cannot be a child's
 * workspace, or NULL: it must be a directory of the parent's view reached
 * without a symlink (the child's create resolves it from the host, where an
 * absolute symlink or a `..` leads out of the parent's root), and the
 * child's changes are reviewed relative to it, so it must not lie in a
 * protected path or below a bare repository, whose hooks would be the
 * child's plain files there. */
static char *workspace_refusal(const struct subagent_parent *p, const char *ws, const char *abs)
{
  const char *rel = abs + strlen(ws), *pat = NULL, *why;
  cleanup_free char *view = xfmt("/proc/%d/root%s", (int)p->init_pid, abs);
  cleanup_free char *dir = NULL;
  int fd;

  while (*rel == '/')
    rel++;
  for (size_t i = 0; i < p->config->n_mounts; i++) {
    const struct oci_mount *m = &p->config->mounts[i];
    if (hides_in_workspace(p, m) &&
        (streq(abs, m->destination) || strictly_below(abs, m->destination)))
      return xfmt("`%s` is a mount of the parent's that hides what the workspace has there",
                  m->destination);
  }
  why = ws_protect_subdir_reason(rel, p->profile->workspace.review_protected, &pat);
  if (why != NULL)
    return pat ? xfmt("%s (`%s`)", why, pat) : xstrdup(why);
  fd = workspace_open_host(view, p->init_start, O_PATH);
  if (fd < 0)
    return xfmt("%s in the parent's view",
                errno == ESRCH     ? "the parent's process is gone"
                : errno == ELOOP   ? "a symlink on the way (a child's workspace is not reached "
                                     "through one)"
                : errno == ENOENT  ? "no such directory"
                : errno == ENOTDIR ? "not a directory"
                                   : strerror(errno));
  close(fd);
  dir = xstrdup(abs);
  while (*rel != '\0') {
    char *slash = strrchr(dir, '/');
    if (slash == NULL)
      break;
    slash[slash == dir ? 1 : 0] = '\0';
    if (view_has_head(p, dir))
      return xfmt("below `%s`, which git takes for a bare repository (it holds HEAD)", dir);
    if (strlen(dir) <= strlen(ws))
      break;
  }
  return NULL;
}

static int parse_run(struct conn *c, struct subreq_run *r, char ***allow)
{
  cleanup_free char *why = NULL;

  if (subreq_parse_run(c->p, c->words, workspace_refusal, r, allow, &why) < 0)
    return refuse(c, "%s", why);
  return 0;
}

/* The child's cgroup goes below the parent's: on cgroup v2 the parent's
 * processes first move to a leaf beside it (cgroup_make_nestable), done here
 * on the first child so that a container that never starts one keeps the
 * plain layout engines expect. */
static int make_nestable(const struct subagent_parent *p, struct error *err)
{
  struct cgroup_opts co = {.id = p->id};
  struct cgroup_manager *m = NULL;
  int r;

  if (p->cgroup_path == NULL || *p->cgroup_path == '\0' || strchr(p->cgroup_path, ':'))
    return 0;
  if (cgroup_manager_load(p->cgroup_path, &co, &m, err) < 0)
    return -1;
  r = cgroup_make_nestable(m, err);
  cgroup_manager_free(m);
  return r;
}

/* A handler creating a child leaves sub/NAME/starting (its pid) from the
 * name's reservation until `run` returns: the child counts from then on,
 * before its container exists. */
#define STARTING "starting"
/* sub/NAME/owner: the uid (the container's) of the process that started it */
#define OWNER "owner"

static bool starting(const char *dir)
{
  cleanup_free char *f = xfmt("%s/%s", dir, STARTING), *text = NULL;
  size_t len = 0;
  struct error e = {0};
  int64_t pid = 0;

  if (read_file_at(AT_FDCWD, f, 64, &text, &len, &e) < 0)
    return false;
  text[strcspn(text, "\n")] = '\0';
  return parse_i64(text, &pid) == 0 && pid > 0 && kill((pid_t)pid, 0) == 0;
}

/* Children whose container exists or is being made; *ret_kept: every
 * child not discarded. */
static size_t live_children(const struct subagent_parent *p, size_t *ret_kept)
{
  cleanup_free char *dir = state_path(p, SUBAGENT_DIR);
  DIR *d = opendir(dir);
  struct dirent *de;
  size_t n = 0, kept = 0;

  if (ret_kept)
    *ret_kept = 0;
  if (d == NULL)
    return 0;
  while ((de = readdir(d)) != NULL) {
    if (de->d_name[0] == '.' || !subreq_valid_name(de->d_name))
      continue;
    cleanup_free char *st = xfmt("%s/%s.%s", p->root, p->id, de->d_name);
    cleanup_free char *sd = xfmt("%s/%s", dir, de->d_name);
    kept++;
    if (access(st, F_OK) == 0 || starting(sd))
      n++;
  }
  closedir(d);
  if (ret_kept)
    *ret_kept = kept;
  return n;
}

/* subN: not taken in the state directory, nor by a workspace (a child of
 * this id's earlier init, orphan-kept-restart: a default name never
 * reaches its kept changes). */
static char *next_name(const struct subagent_parent *p)
{
  for (unsigned i = 1; i < 100000; i++) {
    cleanup_free char *n = xfmt("%s/%s/sub%u", p->id, SUBAGENT_DIR, i);
    cleanup_free char *full = xfmt("%s/%s", p->root, n);
    cleanup_free char *ws = p->store ? xfmt("%s/%s/%s.sub%u", p->store, WS_DIR, p->id, i) : NULL;
    if (access(full, F_OK) < 0 && (ws == NULL || access(ws, F_OK) < 0))
      return xfmt("sub%u", i);
  }
  return NULL;
}

/* A detached child's output: the first OUTPUT_MAX bytes to sub/NAME/output,
 * the rest read and dropped, until the pipe's writers are gone (the child's
 * processes die with its init, in its own pid namespace) or, its init
 * ended (pidfd), a second later. */
static void keep_output(int dirfd, int in, int pidfd)
{
  int out = openat(dirfd, "output", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
  size_t kept = 0;
  char buf[16384];
  int64_t until = -1;

  for (;;) {
    struct pollfd pf[2] = {{.fd = in, .events = POLLIN}, {.fd = pidfd, .events = POLLIN}};
    int64_t left = until < 0 ? -1 : until - now_ms();
    int n;
    if (until >= 0 && left <= 0)
      break;
    n = poll(pf, pidfd >= 0 && until < 0 ? 2 : 1, (int)left);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 || (n == 0 && until >= 0))
      break;
    if (pidfd >= 0 && until < 0 && (pf[1].revents & POLLIN))
      until = now_ms() + 1000;
    if (pf[0].revents & (POLLIN | POLLHUP)) {
      ssize_t r = read(in, buf, sizeof buf);
      if (r < 0 && errno == EINTR)
        continue;
      if (r <= 0)
        break;
      if (out >= 0 && kept < OUTPUT_MAX) {
        size_t take = (size_t)r < OUTPUT_MAX - kept ? (size_t)r : OUTPUT_MAX - kept;
        if (write_all(out, buf, take) < 0) {
          close(out);
          out = -1;
        }
        kept += take;
        if (kept == OUTPUT_MAX && out >= 0) {
          static const char cut[] = "\n[agentrt: the rest of the output was dropped]\n";
          write_all(out, cut, sizeof cut - 1);
        }
      }
    }
  }
  if (out >= 0)
    close(out);
}

/* The workspace of child `id` was made by an earlier init of this parent
 * (`docker restart`, a restart policy: same id, new init) when it is a view
 * of a process that no longer exists; nothing can commit it any more (its
 * target went with that init), so the name is freed the way `sub discard`
 * frees it.  A view of a live process (another parent's child whose id
 * looks like ours) or anything else is left: -1; one whose upper holds
 * changes too: -2 (only the operator drops them). */
static int purge_orphan(struct conn *c, const char *id)
{
  const struct subagent_parent *p = c->p;
  struct workspace *w = NULL;
  struct error e = {0};
  cleanup_strv char **argv = NULL;
  cleanup_free char *ws = NULL;
  cleanup_close int devnull = -1;
  bool orphan, kept;
  uint64_t start;

  if (workspace_load(p->store, id, &w, &e) < 0)
    return -1;
  orphan = w->view_start != 0 && workspace_is_view(w->lowerdir);
  start = w->view_start;
  if (orphan && workspace_view_start(w->lowerdir, &start) == 0 && start == w->view_start)
    orphan = false; /* the process it was made from still runs */
  /* its changes are kept for the operator, never dropped by a name reused
   * after a restart (orphan-kept-restart) */
  kept = orphan && workspace_kept(w);
  workspace_free(w);
  if (!orphan || kept)
    return kept ? -2 : -1;
  argv = cli_argv(p, NULL, "workspace");
  strv_push(&argv, id);
  strv_push(&argv, "purge");
  /* (its "purged workspace" line is not the child's output) */
  devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (devnull < 0)
    return -1;
  run_cli(c, argv, devnull, NULL, true);
  ws = xfmt("%s/%s/%s", p->store, WS_DIR, id);
  return access(ws, F_OK) == 0 ? -1 : 0;
}

static int verb_run(struct conn *c)
{
  const struct subagent_parent *p = c->p;
  struct subreq_run r = {0};
  cleanup_strv char **allow = NULL;
  cleanup_free char *name = NULL, *id = NULL, *dir = NULL, *profile = NULL, *pidf = NULL;
  cleanup_strv char **argv = NULL;
  cleanup_close int dirfd = -1, lockfd = -1, outr = -1;
  struct error err = {0};
  struct jbuf b = {0};
  int rc, out = -1;
  pid_t pid;

  if (!p->profile->subagents.enabled)
    return refuse(c, "sub-agents are not enabled for this container");
  rc = parse_run(c, &r, &allow);
  if (rc != 0)
    return rc;
  if (p->profile->subagents.max_depth < 1)
    return refuse(c, "the depth limit is reached (subagents.maxDepth)");
  {
    cleanup_free char *sub = state_path(p, SUBAGENT_DIR);
    if (mkdir(sub, 0700) < 0 && errno != EEXIST)
      return refuse(c, "mkdir: %s", strerror(errno));
    lockfd = open(sub, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  }
  /* the count and the reservation of the name under one lock: requests
   * made at once must not each see room for one more */
  if (lockfd < 0 || flock(lockfd, LOCK_EX) < 0)
    return refuse(c, "lock: %s", strerror(errno));
  {
    size_t kept = 0, live = live_children(p, &kept);
    if (p->profile->subagents.max_children > 0 && live >= p->profile->subagents.max_children)
      return refuse(c, "%zu children run already (subagents.maxChildren)", live);
    if (kept >= MAX_KEPT)
      return refuse(c, "%zu children are kept (at most %d): sub discard the ones done with", kept,
                    MAX_KEPT);
  }
  name = r.name ? xstrdup(r.name) : next_name(p);
  if (name == NULL || strlen(p->id) + 1 + strlen(name) > SUBREQ_ID_MAX)
    return refuse(c, "no free name");
  r.name = name;
  id = child_id(p, name);
  dir = xfmt("%s/%s/%s/%s", p->root, p->id, SUBAGENT_DIR, name);
  if (mkdir(dir, 0700) < 0)
    return refuse(c, "--name `%s`: %s", name,
                  errno == EEXIST ? "a child of that name exists (sub discard it first)"
                                  : strerror(errno));
  {
    /* the id may be another container's, or its workspace's: the name is
     * not reserved then, or its verbs would reach them (foreign-child);
     * a child workspace of this id's parent before a restart goes first */
    cleanup_free char *st = xfmt("%s/%s", p->root, id);
    cleanup_free char *ws = p->store ? xfmt("%s/%s/%s", p->store, WS_DIR, id) : NULL;
    int taken = 0;
    if (access(st, F_OK) == 0)
      taken = -1;
    else if (ws != NULL && access(ws, F_OK) == 0)
      taken = purge_orphan(c, id);
    if (taken < 0) {
      rmdir(dir);
      if (taken == -2)
        return refuse(c,
                      "--name `%s`: the workspace `%s` holds the kept changes of a child of this "
                      "container's earlier run (only the operator drops them: agentrt "
                      "workspace %s purge); choose another name",
                      name, id, id);
      return refuse(c, "--name `%s`: `%s` is another container's id or workspace", name, id);
    }
  }
  dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  {
    char me[24];
    snprintf(me, sizeof me, "%d", (int)getpid());
    if (dirfd < 0 || write_file_atomic_at(dirfd, STARTING, me, strlen(me), &err) < 0)
      return refuse(c, "%s", err.msg[0] ? err.msg : strerror(errno));
  }
  flock(lockfd, LOCK_UN);
  if (make_nestable(p, &err) < 0)
    return refuse(c, "%s", err.msg);
  r.uid = c->uid;
  r.gid = c->gid;
  {
    char owner[16];
    snprintf(owner, sizeof owner, "%u", c->uid);
    if (dirfd < 0 || write_file_atomic_at(dirfd, OWNER, owner, strlen(owner), &err) < 0)
      return refuse(c, "%s", err.msg[0] ? err.msg : strerror(errno));
  }
  if (write_child_config(p, &r, dirfd, id, &err) < 0 ||
      write_child_profile(p, &r, dirfd, &err) < 0 ||
      write_file_atomic_at(dirfd, "id", id, strlen(id), &err) < 0)
    return refuse(c, "%s", err.msg[0] ? err.msg : strerror(errno));
  profile = xfmt("%s/profile.json", dir);
  pidf = xfmt("%s/pid", dir);

  jb_key_str(&b, "name", name);
  jb_key_str(&b, "child", id);
  jb_key_strv(&b, "argv", r.cmd, strv_len(r.cmd));
  jb_key_str(&b, "workspace", r.workspace);
  jb_key_strv(&b, "allow", allow, allow ? strv_len(allow) : 0);
  jb_key_strv(&b, "secrets", r.secrets, r.secrets ? strv_len(r.secrets) : 0);
  if (r.has_memory)
    jb_key_i64(&b, "memory", (int64_t)r.memory);
  if (r.has_pids)
    jb_key_i64(&b, "pids", (int64_t)r.pids);
  if (r.has_cpus)
    jb_key_i64(&b, "millicpus", (int64_t)r.cpus_milli);
  jb_key_bool(&b, "detach", r.detach);
  jb_key_i64(&b, "uid", (int64_t)r.uid);
  jb_key_i64(&b, "gid", (int64_t)r.gid);
  parent_record(p, "subagent_start", jb_str(&b));
  jb_free(&b);

  argv = cli_argv(p, profile, "run");
  strv_push(&argv, "--bundle");
  strv_push(&argv, dir);
  if (r.detach) {
    /* through a pipe that we copy, bounded, to the output file */
    int pfd[2];
    strv_push(&argv, "--detach");
    strv_push(&argv, "--pid-file");
    strv_push(&argv, pidf);
    int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (nul < 0 || pipe2(pfd, O_CLOEXEC) < 0)
      return refuse(c, "the output pipe: %s", strerror(errno));
    outr = pfd[0];
    out = pfd[1];
    c->io[0] = nul;
  }
  strv_push(&argv, id);
  rc = run_cli(c, argv, out, &pid, true);
  unlinkat(dirfd, STARTING, 0);
  if (r.detach) {
    close(out);
    if (rc != 0) {
      jb_key_str(&b, "name", name);
      jb_key_i64(&b, "code", rc);
      parent_record(p, "subagent_end", jb_str(&b));
      jb_free(&b);
      return rc;
    }
    say(c, SUBPROTO_STDOUT, "%s\n", name);
    finish(c, 0);
    close(c->fd);
    c->fd = -1;
    /* nor the client's stdio: whoever reads its output waits for their EOF */
    for (int i = 0; i < 3; i++)
      if (c->io[i] > 2)
        close(c->io[i]);
    /* the client has its answer; we stay to keep the child's output and to
     * record its end in the parent's trail (its code is in the child's own
     * trail) */
    {
      cleanup_free char *text = NULL;
      size_t len = 0;
      int64_t cpid = 0;
      int pfd = -1;
      if (read_file_at(dirfd, "pid", 64, &text, &len, &err) == 0 &&
          (text[strcspn(text, "\n")] = '\0', parse_i64(text, &cpid) == 0) && cpid > 0)
        pfd = (int)syscall(SYS_pidfd_open, (pid_t)cpid, 0);
      keep_output(dirfd, outr, pfd);
      if (pfd >= 0) {
        close(pfd);
        jb_key_str(&b, "name", name);
        jb_key_str(&b, "child", id);
        jb_key_bool(&b, "detach", true);
        parent_record(p, "subagent_end", jb_str(&b));
        jb_free(&b);
      }
    }
    return 0;
  }
  {
    char code[16];
    snprintf(code, sizeof code, "%d", rc);
    write_file_atomic_at(dirfd, "exit", code, strlen(code), &err);
  }
  jb_key_str(&b, "name", name);
  jb_key_i64(&b, "code", rc);
  parent_record(p, "subagent_end", jb_str(&b));
  jb_free(&b);
  /* run deleted the container with its process; its workspace and trail
   * stay for diff/commit/discard and audit */
  return rc;
}

/* Does the child's container exist with its init alive (1), exist with its
 * init gone (0), or not exist (-1)?  From its state.json's init pid and
 * start time. */
static int child_live(const struct subagent_parent *p, const char *id)
{
  cleanup_free char *st = xfmt("%s/%s/state.json", p->root, id), *text = NULL;
  struct oci_state *s = NULL;
  struct error e = {0};
  size_t len = 0;
  int r;

  if (read_file_at(AT_FDCWD, st, 1 << 20, &text, &len, &e) < 0)
    return -1;
  if (oci_state_parse(text, len, "state.json", &s, &e) < 0)
    return 0;
  r = s->pid > 0 && proc_alive(s->pid, s->pid_start_time); /* 0: any start */
  oci_state_free(s);
  return r;
}

/* Is the container `id` (PARENT.NAME), when it exists, this parent's child
 * `name`: do its annotations say so?  Another container of the same root
 * may be named PARENT.NAME (ids are the operator's or the engine's to
 * choose); it is not ours to exec into, kill or delete (foreign-child). */
static bool container_is_child(const struct subagent_parent *p, const char *id, const char *name)
{
  cleanup_free char *st = xfmt("%s/%s/state.json", p->root, id), *text = NULL;
  struct oci_state *s = NULL;
  struct error e = {0};
  size_t len = 0;
  bool parent = false, sub = false;

  if (read_file_at(AT_FDCWD, st, 1 << 20, &text, &len, &e) < 0)
    return errno == ENOENT;
  if (oci_state_parse(text, len, "state.json", &s, &e) < 0)
    return false;
  for (size_t i = 0; i < s->n_annotations; i++) {
    const struct oci_kv *kv = &s->annotations[i];
    parent = parent || (streq(kv->key, "io.agentrt.parent") && streq(kv->value, p->id));
    sub = sub || (streq(kv->key, "io.agentrt.subagent") && streq(kv->value, name));
  }
  oci_state_free(s);
  return parent && sub;
}

/* The child named by words[1]: its dir under sub/ must exist, and a
 * container of its id must be the child (container_is_child). */
static char *known_child(struct conn *c, const char *verb)
{
  const char *n = c->words[1];
  cleanup_free char *dir = NULL, *id = NULL;

  if (n == NULL || !subreq_valid_name(n)) {
    refuse(c, "expected a child's name (agentrt sub %s NAME)", verb);
    return NULL;
  }
  dir = xfmt("%s/%s/%s/%s", c->p->root, c->p->id, SUBAGENT_DIR, n);
  if (access(dir, F_OK) < 0) {
    refuse(c, "no child `%s`", n);
    return NULL;
  }
  id = child_id(c->p, n);
  if (!container_is_child(c->p, id, n)) {
    refuse(c, "the container `%s` is not this container's child `%s`", id, n);
    return NULL;
  }
  /* a child is its starter's (and the container's root's): another user's
   * exec would run as the starter, its commit would write as it */
  if (c->uid != 0) {
    cleanup_free char *of = xfmt("%s/%s", dir, OWNER), *owner = NULL;
    struct error err = {0};
    char mine[16];
    size_t len;
    snprintf(mine, sizeof mine, "%u", c->uid);
    if (read_file_at(AT_FDCWD, of, 16, &owner, &len, &err) < 0 || !streq(owner, mine)) {
      refuse(c, "the child `%s` was started by another user (uid %s)", n,
             owner ? owner : "unknown");
      return NULL;
    }
  }
  return take_ptr(id);
}

/* Does the child have a workspace (its create got that far)?  The review
 * commands take an id prefix too: `P.a` must not reach `P.ab`'s. */
static bool has_workspace(const struct subagent_parent *p, const char *id)
{
  cleanup_free char *d = p->store ? xfmt("%s/%s/%s", p->store, WS_DIR, id) : NULL;

  return d == NULL || access(d, F_OK) == 0;
}

static int verb_simple(struct conn *c, const char *verb)
{
  const struct subagent_parent *p = c->p;
  cleanup_free char *id = known_child(c, verb);
  cleanup_strv char **argv = NULL;
  struct jbuf b = {0};
  bool no_ws;
  int rc;

  if (id == NULL)
    return 125;
  no_ws = !has_workspace(p, id);
  if (no_ws && (streq(verb, "diff") || streq(verb, "commit")))
    return refuse(c, "the child `%s` has no workspace (its create failed)", c->words[1]);
  /* a child that runs may be half-way through its writes (a file half
   * written, a tree half moved): its changes are committed only once it
   * has ended, and its diff says that it may still change */
  if (streq(verb, "commit") && child_live(p, id) == 1)
    return refuse(c,
                  "the child `%s` is running: its writes may be half done (wait for its end or "
                  "sub kill it, then commit)",
                  c->words[1]);
  if (streq(verb, "diff") && child_live(p, id) == 1)
    say(c, SUBPROTO_STDERR,
        "agentrt: sub diff: the child `%s` is running: its changes may still change\n",
        c->words[1]);
  if (streq(verb, "exec")) {
    size_t i = 2;
    if (c->words[i] && streq(c->words[i], "--"))
      i++;
    if (c->words[i] == NULL)
      return refuse(c, "expected a command (agentrt sub exec NAME -- CMD...)");
    argv = cli_argv(p, NULL, "exec");
    strv_push(&argv, id);
    for (; c->words[i]; i++)
      strv_push(&argv, c->words[i]);
  } else if (streq(verb, "kill")) {
    argv = cli_argv(p, NULL, "kill");
    strv_push(&argv, id);
    strv_push(&argv, c->words[2] ? c->words[2] : "KILL");
  } else if (streq(verb, "audit")) {
    argv = cli_argv(p, NULL, "audit");
    strv_push(&argv, id);
  } else { /* diff, commit [PATH...], discard */
    argv = cli_argv(p, NULL, "workspace");
    strv_push(&argv, id);
    /* discard: the whole workspace goes, so that the name is free for a
     * child with another --workspace */
    strv_push(&argv, streq(verb, "discard") ? "purge" : verb);
    /* only what the review takes: diff --patch; commit [--include-protected
     * PATH]... [PATH...] (never --lower or --dest: another directory) */
    for (size_t i = 2; c->words[i]; i++) {
      const char *w = c->words[i];
      if (streq(w, "--"))
        continue;
      if (streq(verb, "diff") && streq(w, "--patch")) {
        strv_push(&argv, w);
      } else if (streq(verb, "commit") && streq(w, "--include-protected") && c->words[i + 1] &&
                 c->words[i + 1][0] != '-') {
        strv_push(&argv, w);
        strv_push(&argv, c->words[++i]);
      } else if (streq(verb, "commit") && w[0] != '-') {
        strv_push(&argv, w);
      } else {
        return refuse(c, "`%s`: not an option or path of sub %s", w, verb);
      }
    }
  }
  if (streq(verb, "discard")) {
    /* a stopped (or still running) child's container goes first */
    cleanup_strv char **del = cli_argv(p, NULL, "delete");
    strv_push(&del, "--force");
    strv_push(&del, id);
    run_cli(c, del, -1, NULL, true);
  }
  /* a child whose create failed has nothing to discard but its name */
  rc = streq(verb, "discard") && no_ws ? 0 : run_cli(c, argv, -1, NULL, true);
  if (streq(verb, "discard") && rc == 0) {
    /* forget it: the name is free again */
    cleanup_free char *dir = xfmt("%s/%s/%s/%s", p->root, p->id, SUBAGENT_DIR, c->words[1]);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
      for (const char *const *f =
               (const char *const[]){"config.json", "profile.json", "id", "exit", "output", "pid",
                                     STARTING, OWNER, UPSTREAM_CA, NULL};
           *f; f++)
        unlinkat(dfd, *f, 0);
      close(dfd);
    }
    rmdir(dir);
  }
  if (streq(verb, "commit") || streq(verb, "discard") || streq(verb, "kill")) {
    jb_key_str(&b, "name", c->words[1]);
    jb_key_str(&b, "child", id);
    if (streq(verb, "commit"))
      jb_key_strv(&b, "paths", c->words + 2, strv_len(c->words + 2));
    jb_key_i64(&b, "code", rc);
    cleanup_free char *kind = xfmt("subagent_%s", verb);
    parent_record(p, kind, jb_str(&b));
    jb_free(&b);
  }
  return rc;
}

/* "NAME STATUS ID" lines: running/created while the container exists, else
 * "exited N" (its workspace and trail wait for diff/commit/discard). */
static int verb_list(struct conn *c)
{
  const struct subagent_parent *p = c->p;
  cleanup_free char *dir = state_path(p, SUBAGENT_DIR);
  DIR *d = opendir(dir);
  struct dirent *de;
  struct jbuf out = {0};

  say(c, SUBPROTO_STDOUT, "%-20s %-10s %s\n", "NAME", "STATUS", "ID");
  if (d == NULL)
    return 0;
  while ((de = readdir(d)) != NULL) {
    cleanup_free char *id = NULL, *code = NULL, *ex = NULL;
    const char *status = "exited";
    size_t len;
    struct error e = {0};
    if (de->d_name[0] == '.' || !subreq_valid_name(de->d_name))
      continue;
    id = child_id(p, de->d_name);
    int live = child_live(p, id);
    if (live >= 0) {
      status = live ? "running" : "stopped";
    } else {
      ex = xfmt("%s/%s", dir, de->d_name);
      cleanup_free char *ef = xfmt("%s/exit", ex);
      if (read_file_at(AT_FDCWD, ef, 64, &code, &len, &e) == 0) {
        free(ex);
        ex = xfmt("exited(%s)", code);
        status = ex;
      }
    }
    say(c, SUBPROTO_STDOUT, "%-20s %-10s %s\n", de->d_name, status, id);
  }
  closedir(d);
  jb_free(&out);
  return 0;
}

static int dispatch_verb(struct conn *c)
{
  const char *v = c->words[0];

  if (streq(v, "run"))
    return verb_run(c);
  if (streq(v, "list") || streq(v, "ls"))
    return verb_list(c);
  if (streq(v, "exec") || streq(v, "kill") || streq(v, "diff") || streq(v, "commit") ||
      streq(v, "discard") || streq(v, "audit"))
    return verb_simple(c, v);
  return refuse(c, "unknown command (run, exec, list, kill, diff, commit, discard, audit)");
}

/* The id that host (an id as this process's user namespace sees it) has in
 * a uid_map or gid_map text, or false where it is not mapped. */
static bool map_inside(const char *map, uint32_t host, uint32_t *ret)
{
  for (const char *l = map; l != NULL && *l != '\0';) {
    unsigned long in, out, count;
    if (sscanf(l, "%lu %lu %lu", &in, &out, &count) == 3 && host >= out && host - out < count) {
      *ret = (uint32_t)(in + (host - out));
      return true;
    }
    l = strchr(l, '\n');
    if (l != NULL)
      l++;
  }
  return false;
}

/* The caller's uid and gid as the container sees them: the socket's peer
 * credentials (the host's ids) through the init's maps.  Every process of
 * the container reaches the socket (its mode is 0666), so what a request may
 * do is decided by who made it, never by the parent's process.user. */
static int peer_ids(struct conn *c)
{
  struct ucred cr;
  socklen_t len = sizeof cr;
  cleanup_free char *umap = NULL, *gmap = NULL;
  cleanup_free char *urel = xfmt("%d/uid_map", (int)c->p->init_pid);
  cleanup_free char *grel = xfmt("%d/gid_map", (int)c->p->init_pid);
  struct error err = {0};

  if (getsockopt(c->fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0 || len != sizeof cr ||
      procfs_read_all(urel, &umap, &err) < 0 || procfs_read_all(grel, &gmap, &err) < 0)
    return -1;
  if (!map_inside(umap, cr.uid, &c->uid) || !map_inside(gmap, cr.gid, &c->gid))
    return -1;
  return 0;
}

static void handle(const struct subagent_parent *p, int fd)
{
  struct conn c = {.fd = fd, .io = {-1, -1, -1}, .p = p};
  int null = open("/dev/null", O_RDWR | O_CLOEXEC);
  int rc;
  struct timeval tv = {.tv_sec = REQUEST_SECONDS};

  /* a client that never sends its request does not keep us */
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  if (peer_ids(&c) < 0) {
    struct conn bad = {.fd = fd, .words = (char *[]){"request", NULL}, .p = p};
    finish(&bad, refuse(&bad, "the caller's user and group are not the container's (no peer "
                              "credentials, or not mapped in its user namespace)"));
    return;
  }
  if (read_request(&c, now_ms() + REQUEST_SECONDS * 1000) < 0) {
    struct conn bad = {.fd = fd, .words = (char *[]){"request", NULL}, .p = p};
    finish(&bad, refuse(&bad, "a malformed request (docs/subagents.md)"));
    return;
  }
  tv.tv_sec = 0;
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  for (int i = 0; i < 3; i++)
    if (c.io[i] < 0)
      c.io[i] = null;
  rc = dispatch_verb(&c);
  if (c.fd >= 0)
    finish(&c, rc);
  strv_free(c.words);
}

/* The handlers running (our children), each with a pidfd in one epoll set
 * of its own (subagent_reaper_fd), which the monitor watches: a handler is
 * reaped when it ends, not when the next connection comes (until then each
 * one that ended was a zombie, up to MAX_HANDLERS of them). */
static struct handler {
  pid_t pid;
  int pidfd; /* -1: no pidfd, reaped at the next connection */
} handlers[MAX_HANDLERS];
static size_t n_handlers;
static int reaper_fd = -1;

int subagent_reaper_fd(void)
{
  if (reaper_fd < 0)
    reaper_fd = epoll_create1(EPOLL_CLOEXEC);
  return reaper_fd;
}

void subagent_reap_handlers(void)
{
  if (reaper_fd >= 0) {
    struct epoll_event ev[MAX_HANDLERS];
    /* level-triggered: emptied by closing the reaped ones' pidfds below */
    while (epoll_wait(reaper_fd, ev, MAX_HANDLERS, 0) < 0 && errno == EINTR)
      ;
  }
  for (size_t i = 0; i < n_handlers;) {
    if (waitpid(handlers[i].pid, NULL, WNOHANG) != 0) {
      if (handlers[i].pidfd >= 0)
        close(handlers[i].pidfd); /* and out of the epoll set */
      handlers[i] = handlers[--n_handlers];
    } else {
      i++;
    }
  }
}

static void track_handler(pid_t pid)
{
  int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
  struct epoll_event ev = {.events = EPOLLIN, .data.fd = pidfd};

  if (pidfd >= 0 &&
      (subagent_reaper_fd() < 0 || epoll_ctl(reaper_fd, EPOLL_CTL_ADD, pidfd, &ev) < 0)) {
    close(pidfd);
    pidfd = -1;
  }
  handlers[n_handlers++] = (struct handler){pid, pidfd};
}

int subagent_serve(const struct subagent_parent *p, int conn)
{
  pid_t pid;

  subagent_reap_handlers();
  if (n_handlers >= MAX_HANDLERS) {
    /* answered here, without a process: a small frame into an empty socket
     * buffer, never waited for */
    static const char msg[] = "agentrt: sub: busy: " MAX_HANDLERS_S " requests are served "
                              "already (try again when one has ended)\n";
    unsigned char f[5 + sizeof msg + 5 + 3];
    size_t n = 0;
    subproto_put_len(f, (uint32_t)sizeof msg);
    f[4] = SUBPROTO_STDERR;
    memcpy(f + 5, msg, sizeof msg - 1);
    n = 5 + sizeof msg - 1;
    subproto_put_len(f + n, 4);
    f[n + 4] = SUBPROTO_EXIT;
    memcpy(f + n + 5, "125", 3);
    n += 8;
    if (send(conn, f, n, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
      /* the client went already */
    }
    return 0;
  }
  pid = fork();
  if (pid < 0)
    return -1;
  if (pid == 0) {
    /* the handler: nothing of the monitor's but the connection (its procfs
     * handle too: a fresh one is opened when needed, not a stale number) */
    procfs_reset();
    close_fds_except(3, (int[]){conn}, 1);
    int fl = fcntl(conn, F_GETFL);
    if (fl >= 0)
      fcntl(conn, F_SETFL, fl & ~O_NONBLOCK);
    prctl(PR_SET_NAME, "agentrt-sub", 0, 0, 0);
    handle(p, conn);
    _exit(0);
  }
  track_handler(pid);
  return 0;
}

void subagent_reap_children(const char *exe, const char *root, const char *data_dir, const char *id)
{
  cleanup_free char *dir = xfmt("%s/%s/%s", root, id, SUBAGENT_DIR);
  DIR *d = opendir(dir);
  struct dirent *de;

  if (d == NULL)
    return;
  while ((de = readdir(d)) != NULL) {
    cleanup_free char *cid = NULL, *st = NULL;
    pid_t pid;
    int status;
    if (de->d_name[0] == '.' || !subreq_valid_name(de->d_name))
      continue;
    cid = xfmt("%s.%s", id, de->d_name);
    st = xfmt("%s/%s", root, cid);
    if (access(st, F_OK) < 0)
      continue;
    pid = fork();
    if (pid == 0) {
      int null = open("/dev/null", O_RDWR);
      if (null >= 0) {
        dup2(null, 0);
        dup2(null, 1);
        dup2(null, 2);
      }
      close_fds_except(3, (int[]){-1}, 0);
      if (data_dir)
        execl(exe, "agentrt", "--root", root, "--data-dir", data_dir, "delete", "--force", cid,
              (char *)NULL);
      else
        execl(exe, "agentrt", "--root", root, "delete", "--force", cid, (char *)NULL);
      _exit(127);
    }
    if (pid > 0) {
      /* bounded: 10 s per child */
      for (int i = 0; i < 1000; i++) {
        if (waitpid(pid, &status, WNOHANG) == pid)
          break;
        if (i == 999) {
          kill(pid, SIGKILL);
          waitpid(pid, &status, 0);
        }
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
      }
    }
  }
  closedir(d);
}
