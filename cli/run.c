/* run.c - `agentrt run`: create + start (+ wait, in the foreground).
 *
 * In the foreground agentrt stays the init's parent: it forwards every
 * signal it receives to the init, relays the terminal when process.terminal
 * is set, and exits with the container's status (128+signal when killed).
 * Without --keep the container is deleted when it ends.  A foreground run
 * whose stderr is a terminal (a person, not an engine) and whose container
 * kept a trail ends with one line naming what the profile refused
 * (run-exit-refusals), unless --no-exit-summary. */
#include <errno.h>
#include <signal.h>
#include <sys/file.h>
#include <stdio.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/create.h"
#include "cli/refusals.h"
#include "cli/tty.h"
#include "common/log.h"
#include "common/util.h"
#include "container/audit_cli.h"
#include "container/notify_socket.h"
#include "os/fsutil.h"

enum {
  R_BUNDLE = 1,
  R_PIDFILE,
  R_CONSOLE,
  R_NOPIVOT,
  R_NOKEYRING,
  R_PRESERVE,
  R_DETACH,
  R_KEEP,
  R_NOSUMMARY,
  R_NOSUBREAPER,
  R_CONFIG,
  R_HELP,
};

static const struct opt_spec run_specs[] = {
    {"bundle", 'b', true, R_BUNDLE},
    {"pid-file", 0, true, R_PIDFILE},
    {"console-socket", 0, true, R_CONSOLE},
    {"no-pivot", 0, false, R_NOPIVOT},
    {"no-new-keyring", 0, false, R_NOKEYRING},
    {"preserve-fds", 0, true, R_PRESERVE},
    {"detach", 'd', false, R_DETACH},
    {"keep", 0, false, R_KEEP},
    {"no-exit-summary", 0, false, R_NOSUMMARY},
    {"no-subreaper", 0, false, R_NOSUBREAPER},
    {"config", 'f', true, R_CONFIG},
    {"help", 'h', false, R_HELP},
    {NULL, 0, false, 0},
};

static int run_container(const struct global_opts *g, const struct create_opts *op, bool keep,
                         bool exit_line, struct error *err);

int cmd_run(const struct global_opts *g, int argc, char **argv, struct error *err)
{
  struct opt_iter it = {argc, argv, 1};
  struct create_opts o = {.run_mode = true, .foreground = true};
  bool keep = false, exit_line = true;
  const char *val;
  int id, n;

  opt_permute(&it, run_specs);
  while ((n = opt_next(&it, run_specs, &id, &val, "run", err)) == 1) {
    switch (id) {
    case R_BUNDLE:
      o.bundle = val;
      break;
    case R_PIDFILE:
      o.pid_file = val;
      break;
    case R_CONSOLE:
      o.console_socket = val;
      break;
    case R_NOPIVOT:
      o.no_pivot = true;
      break;
    case R_NOKEYRING:
      o.no_new_keyring = true;
      break;
    case R_PRESERVE:
      if (parse_int(val, &o.preserve_fds) < 0 || o.preserve_fds < 0 || o.preserve_fds > 4096)
        return error_set(err, 0, "run: --preserve-fds: invalid number `%s`", val);
      break;
    case R_DETACH:
      o.foreground = false;
      break;
    case R_KEEP:
      keep = true;
      break;
    case R_NOSUMMARY:
      exit_line = false;
      break;
    case R_NOSUBREAPER:
      break;
    case R_CONFIG:
      o.config = val;
      break;
    case R_HELP:
      printf("Usage: agentrt run [--bundle DIR] [--config FILE] [--pid-file FILE]\n"
             "                   [--console-socket SOCK]\n"
             "                   [--detach] [--keep] [--no-exit-summary] [--no-pivot]\n"
             "                   [--no-new-keyring]\n"
             "                   [--preserve-fds N] ID\n");
      return 0;
    }
  }
  if (n < 0)
    return -1;
  if (argc - it.i != 1)
    return error_set(err, 0, "run: expected exactly one container id");
  o.id = argv[it.i];
  /* --keep with --detach changes nothing (run never deletes a detached
   * container) and is taken, as runc 1.1 takes it (run-detach-keep) */
  return run_container(g, &o, keep, exit_line && isatty(STDERR_FILENO), err);
}

int run_foreground(const struct global_opts *g, struct create_opts *o, bool keep, struct error *err)
{
  o->run_mode = true;
  o->foreground = true;
  return run_container(g, o, keep, false, err); /* sandbox prints its own lines */
}

/* NOTIFY_SOCKET (container/notify_socket.h): detached, run returns once the
 * program said READY=1 (or is gone), MAINPID its init, as runc; in the
 * foreground MAINPID is ours and a child of ours waits, so that signals,
 * and a terminal's input and output, are forwarded meanwhile (runc 1.1
 * forwards none before READY=1).  fwd_wait reaps that child. */
static void notify_relay(const struct container *c, const struct spawn_result *r,
                         const char *notify, int fd, bool foreground)
{
  pid_t mainpid = getpid(), child = 0;
  struct error e = {0};

  if (foreground && (child = fork()) < 0)
    log_warning("run `%s`: notify socket: fork: %s, ignoring", c->id, strerror(errno));
  if (child == 0) {
    if (foreground && r->pty_master >= 0) /* the parent's to hang up */
      close(r->pty_master);
    if (notify_socket_relay(fd, notify, r->pid, c->state->pid_start_time,
                            foreground ? mainpid : r->pid, &e) < 0)
      log_warning("run `%s`: %s, ignoring", c->id, e.msg);
    if (foreground)
      _exit(0);
  }
  close(fd);
}

/* The line at the end of a foreground run: what the profile refused its
 * programs, from the trail at trail (a program says "Operation not
 * permitted" or "ENOTFOUND", never why; only `agentrt audit` said it).
 * Nothing when nothing was refused. */
static void print_exit_refusals(const char *id, const char *trail)
{
  struct refusals r = {0};
  char calls[1024], net[1024];

  if (refusals_read(trail, &r) == 0 && (r.calls.n > 0 || r.net.n > 0)) {
    refused_list(&r.calls, calls, sizeof calls);
    refused_list(&r.net, net, sizeof net);
    fprintf(stderr, "agentrt: run `%s`: %s%s%s%s%s (agentrt audit %s --summary)\n", id,
            r.calls.n > 0 ? "the profile's seccomp filter refused " : "", calls,
            r.calls.n > 0 && r.net.n > 0 ? "; " : "",
            r.net.n > 0 ? "the egress allowlist refused " : "", net, id);
  }
  refusals_free(&r);
}

static int run_container(const struct global_opts *g, const struct create_opts *op, bool keep,
                         bool exit_line, struct error *err)
{
  const struct create_opts o = *op;
  struct container *c = NULL;
  struct spawn_result r;
  const char *notify = notify_socket_host();
  cleanup_close int notify_fd = -1;
  cleanup_free char *trail = NULL;
  size_t trail_len = 0;
  int sigfd = -1, code;

  if (o.foreground && (sigfd = fwd_signals_block(err)) < 0)
    return -1;
  if (container_create(g, &o, &c, &r, err) < 0) {
    if (sigfd >= 0)
      close(sigfd);
    return -1;
  }
  /* NOTIFY_SOCKET: bound before the program runs (never started early then) */
  if (notify != NULL && faccessat(c->dirfd, NOTIFY_STATE_DIR, F_OK, 0) == 0 &&
      (notify_fd = notify_socket_bind(c->dirfd, err)) < 0)
    goto fail;
  audit_cli_event(g->root, c->id, "start", NULL); /* before its first process */
  if (spawn_start(&r, err) < 0)
    goto fail;
  /* state.json already says started/running (create in run mode) */
  if (run_poststart_hooks(c, err) < 0)
    goto fail;
  free(c->state->status);
  c->state->status = xstrdup("running");
  flock(c->dirfd, LOCK_UN); /* pause/delete from other shells must not wait for us */
  if (notify_fd >= 0)
    notify_relay(c, &r, notify, take_fd(&notify_fd), o.foreground);
  if (!o.foreground) {
    container_free(c);
    return 0;
  }
  code = fwd_wait(r.pid, sigfd, &r.pty_master, err);
  close(sigfd);
  if (r.pty_master >= 0)
    close(r.pty_master);
  if (code < 0) {
    container_free(c);
    return -1;
  }
  /* the trail's directory, named in the state directory while it has one */
  if (exit_line &&
      read_own_file_at(c->dirfd, "audit", 4096, &trail, &trail_len, &(struct error){0}) < 0)
    trail = NULL;
  if (!keep) {
    struct error e = {0};
    if (container_destroy(c, g, &e) < 0)
      log_warning("run `%s`: %s", c->id, e.msg);
  } else {
    struct error e = {0};
    c->state->has_exit_status = true;
    c->state->exit_status = code;
    container_save_state(c, &e);
  }
  /* after delete: the monitor has written its last records */
  if (trail != NULL)
    print_exit_refusals(c->id, trail);
  container_free(c);
  return code;

fail: /* after create: the container goes, nothing of it is left */
  error_prefix(err, "run `%s`", c->id);
  if (sigfd >= 0)
    close(sigfd);
  container_destroy(c, g, &(struct error){0});
  container_free(c);
  return -1;
}
