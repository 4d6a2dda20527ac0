/* main.c - agentrt's command line: global flags, then one verb per file.
 *
 * The grammar engines use (Docker, Podman, containerd: integration/): global
 * flags first, then the command, its flags, the container id, then command
 * arguments.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/help.h"
#include "cli/workspace_cmd.h"
#include "container/init.h"
#include "common/log.h"
#include "common/sanitizer.h"
#include "common/util.h"
#include "os/fsutil.h"
#include "datadir/datadir.h"

struct command {
  const char *name;
  command_fn fn;
};

static const struct command commands[] = {
    {"create", cmd_create},
    {"start", cmd_start},
    {"run", cmd_run},
    {"state", cmd_state},
    {"kill", cmd_kill},
    {"delete", cmd_delete},
    {"exec", cmd_exec},
    {"list", cmd_list},
    {"ps", cmd_ps},
    {"pause", cmd_pause},
    {"resume", cmd_resume},
    {"update", cmd_update},
    {"events", cmd_events},
    {"spec", cmd_spec},
    {"features", cmd_features},
    {"explain", cmd_explain},
    {"profile", cmd_profile},
    {"sandbox", cmd_sandbox},
    {"sub", cmd_sub},
    {"doctor", cmd_doctor},
    {"sandbox-init", cmd_sandbox_init},
    {"sandbox-net", cmd_sandbox_net},
    {"checkpoint", cmd_checkpoint},
    {"restore", cmd_checkpoint},
    {"workspace", cmd_workspace},
    {"egress", cmd_egress},
    {"audit", cmd_audit},
    {"purge", cmd_purge},
    {"data", cmd_data},
    {NULL, NULL},
};

enum {
  G_ROOT = 1,
  G_DATA_DIR,
  G_LOG,
  G_LOG_FORMAT,
  G_DEBUG,
  G_SYSTEMD,
  G_PROFILE,
  G_CRIU,
  G_ROOTLESS,
  G_CGROUP_MANAGER,
  G_VERSION,
  G_HELP,
};

static const struct opt_spec global_specs[] = {
    {"root", 0, true, G_ROOT},
    {"data-dir", 0, true, G_DATA_DIR},
    {"log", 0, true, G_LOG},
    {"log-format", 0, true, G_LOG_FORMAT},
    {"debug", 0, false, G_DEBUG},
    {"systemd-cgroup", 0, false, G_SYSTEMD},
    {"profile", 0, true, G_PROFILE},
    {"criu", 0, true, G_CRIU},
    {"rootless", 0, true, G_ROOTLESS},
    {"cgroup-manager", 0, true, G_CGROUP_MANAGER},
    {"version", 'v', false, G_VERSION},
    {"help", 'h', false, G_HELP},
    {NULL, 0, false, 0},
};

/* Next unsigned decimal field of a uid_map line at *p (blanks skipped). */
static bool uid_map_field(const char **p, unsigned long *ret)
{
  char *end;

  while (**p == ' ' || **p == '\t')
    (*p)++;
  if (**p < '0' || **p > '9')
    return false;
  errno = 0;
  *ret = strtoul(*p, &end, 10);
  if (errno != 0 || *ret > 4294967295UL)
    return false;
  *p = end;
  return true;
}

/* Not the initial user namespace: uid_map is not "0 0 4294967295".  Read
 * with read(2), not stdio's fscanf, which every command would otherwise
 * pay in touched libc pages (peak RSS: bench/README.md). */
static bool in_user_namespace(void)
{
  char buf[256];
  const char *p = buf;
  unsigned long a, b, c;
  int fd = open("/proc/self/uid_map", O_RDONLY | O_CLOEXEC);
  ssize_t n;

  if (fd < 0)
    return false;
  n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0)
    return false;
  buf[n] = '\0';
  if (!uid_map_field(&p, &a) || !uid_map_field(&p, &b) || !uid_map_field(&p, &c))
    return false;
  return !(a == 0 && b == 0 && c == 4294967295UL);
}

/* Not real root, runc's rule (Podman passes no --root): another uid, or
 * root inside a user namespace without USER=root. */
static bool not_real_root(void)
{
  const char *user;

  if (geteuid() != 0)
    return true;
  if (!in_user_namespace())
    return false;
  user = getenv("USER");
  return user == NULL || strcmp(user, "root") != 0;
}

/* $XDG_RUNTIME_DIR/agentrt when not real root; an empty XDG_RUNTIME_DIR
 * counts as unset. */
static char *default_root(void)
{
  const char *xdg = getenv("XDG_RUNTIME_DIR");

  if (xdg != NULL && *xdg != '\0' && not_real_root())
    return xfmt("%s/agentrt", xdg);
  return xstrdup("/run/agentrt");
}

/* --data-dir, else $AGENTRT_DATA_DIR, else the host config's data-dir, else
 * the default (datadir.h).  The host config is read here, strictly: a bad
 * line fails every command, naming the file and the line, but the ones an
 * engine needs to tear a container down (they warn and use the defaults). */
static int data_settings(struct global_opts *g, const char *flag, const char *cmd,
                         struct hostconf *conf, char **ret_dir, struct error *err)
{
  const char *path = getenv("AGENTRT_CONFIG"), *env = getenv("AGENTRT_DATA_DIR");
  const char *dir = flag;

  if (path == NULL || *path == '\0')
    path = HOSTCONF_PATH;
  if (hostconf_load(path, conf, err) < 0) {
    /* An engine must still be able to stop and remove what it started:
     * these go on with the defaults, saying why. */
    static const char *const teardown[] = {"delete", "kill", "state", "list", "ps", NULL};
    bool go_on = false;
    for (size_t i = 0; cmd != NULL && teardown[i] != NULL; i++)
      go_on = go_on || strcmp(cmd, teardown[i]) == 0;
    if (!go_on)
      return -1;
    log_warning("%s (going on with the defaults for `%s`)", err->msg, cmd);
    hostconf_free(conf);
    hostconf_defaults(conf);
    *err = (struct error){0};
  }
  if (dir == NULL && env != NULL && *env != '\0')
    dir = env;
  if (dir == NULL)
    dir = conf->data_dir;
  *ret_dir = dir ? datadir_normalize_root(dir) : datadir_default(not_real_root());
  if ((*ret_dir)[0] != '/')
    return error_set(err, 0, "data directory `%s`: must be an absolute path", *ret_dir);
  if (strpbrk(*ret_dir, ",:\\\"\n") != NULL)
    return error_set(err, 0,
                     "data directory `%s`: holds `,`, `:`, `\\` or `\"`, which overlayfs "
                     "options cannot carry",
                     *ret_dir);
  g->data_dir = *ret_dir;
  g->conf = conf;
  return 0;
}

/* A std fd the caller left closed would be the lowest free one: the first
 * file we open (the --log file, a state directory, the signalfd) took it,
 * and our "stderr" went into the JSON log, a hook's output into a pidfd.
 * Each closed one is /dev/null from the start, as the Go runtime does for
 * runc (stdio-closed-log).  One poll() when all three are open. */
static void stdio_fill(void)
{
  struct pollfd p[3] = {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}};

  if (poll(p, 3, 0) < 0)
    return;
  for (int i = 0; i < 3; i++) {
    if (!(p[i].revents & POLLNVAL))
      continue;
    int fd = open("/dev/null", O_RDWR); /* the lowest free fd: this one */
    if (fd > 2)
      close(fd);
  }
}

static void print_version(void)
{
  printf("agentrt version %s\ncommit: %s\nspec: 1.2.0\n", AGENTRT_VERSION, AGENTRT_COMMIT);
}

int main(int argc, char **argv)
{
  struct global_opts g = {0};
  struct opt_iter it = {argc, argv, 1};
  struct error err = {0};
  cleanup_free char *root = NULL, *data_dir = NULL, *store = NULL;
  const char *data_flag = NULL;
  static struct hostconf conf; /* reachable until exit */
  const char *log_format = "text";
  const char *cmd;
  int id, r;
  const char *val;

  init_note_process_area(argc, argv, environ);
  stdio_fill();
  /* The sandbox's pid 1 (cli/sandbox.c) runs inside the sandbox: none of
   * the runtime's set-up below (options, log, state root, data directory)
   * is its business, and it is on the path of every sandbox's start. */
  if (argc > 1 && strcmp(argv[1], "sandbox-init") == 0) {
    r = cmd_sandbox_init(&g, argc - 1, argv + 1, &err);
    if (r < 0)
      log_print_error("", err.msg);
    return r < 0 ? 1 : r;
  }
  while ((r = opt_next(&it, global_specs, &id, &val, "agentrt", &err)) == 1) {
    switch (id) {
    case G_ROOT:
      g.root = val;
      g.root_given = true;
      break;
    case G_DATA_DIR:
      data_flag = val;
      break;
    case G_LOG:
      g.log_path = val;
      break;
    case G_LOG_FORMAT:
      log_format = val;
      break;
    case G_DEBUG:
      g.debug = val == NULL || strcmp(val, "true") == 0;
      break;
    case G_SYSTEMD:
      g.systemd_cgroup = val == NULL || strcmp(val, "true") == 0;
      break;
    case G_PROFILE:
      g.profile = val;
      break;
    case G_ROOTLESS:
      g.rootless_flag_set = true;
      g.rootless = val;
      break;
    case G_CRIU:
    case G_CGROUP_MANAGER:
      break; /* accepted for compatibility; agentrt has no CRIU support */
    case G_VERSION:
      print_version();
      return 0;
    case G_HELP:
      print_help(stdout);
      return 0;
    }
  }
  if (r < 0) {
    /* the parser names its verb, here the program, which log_fatal_error
     * names too (global-option-prefix) */
    log_fatal_error(str_has_prefix(err.msg, "agentrt: ") ? err.msg + strlen("agentrt: ") : err.msg);
    return 1;
  }
  if (strcmp(log_format, "json") == 0)
    g.log_json = true;
  else if (strcmp(log_format, "text") != 0) {
    log_fatal_error("--log-format: expected `text` or `json`");
    return 1;
  }
  if (log_init(g.log_path, g.log_json, g.debug) < 0) {
    fprintf(stderr, "agentrt: open log file `%s`: %s\n", g.log_path, strerror(errno));
    return 1;
  }
  g.argv = argv;
  g.in_userns = in_user_namespace();
  if (g.root == NULL)
    g.root = root = default_root();
  if (g.root[0] == '\0') {
    log_fatal_error("--root: must not be empty");
    return 1;
  }
  if (g.root[0] != '/') {
    /* from the current directory, as runc (filepath.Abs): the same root
     * whatever directory a later command runs in */
    cleanup_free char *abs = path_absolute(g.root);
    if (abs[0] != '/') {
      log_fatal_error("--root: cannot make it absolute (no current directory)");
      return 1;
    }
    free(root);
    g.root = root = path_normalize(abs);
  }
  if (data_settings(&g, data_flag, it.i < argc ? argv[it.i] : NULL, &conf, &data_dir, &err) < 0) {
    log_fatal_error(err.msg);
    return 1;
  }
  g.store = store = datadir_store(g.data_dir, g.root);
  if (g.profile == NULL) {
    const char *p = getenv("AGENTRT_PROFILE");
    if (p != NULL && *p != '\0')
      g.profile = p;
  }
  if (it.i >= argc) {
    print_help(stderr);
    return 1;
  }
  cmd = argv[it.i];
  if (strcmp(cmd, "help") == 0) {
    print_help(stdout);
    return 0;
  }
  for (const struct command *c = commands; c->name; c++) {
    if (strcmp(c->name, cmd) != 0)
      continue;
    r = c->fn(&g, argc - it.i, argv + it.i, &err);
    if (r < 0) {
      log_fatal_error(err.msg[0] ? err.msg : "unknown error");
      return 1;
    }
    return r;
  }
  fprintf(stderr, "agentrt: unknown command `%s` (see agentrt --help)\n", cmd);
  return 1;
}
