/* sandbox.c - `agentrt sandbox -- CMD`: an agent CLI in an agent sandbox,
 * with no bundle and no engine, as root or as an unprivileged user.
 *
 * The sandbox is an ordinary agentrt container whose config and profile are
 * generated here, in a private directory of the state root, and run through
 * `run` in the foreground (so the terminal, the signals and the exit status
 * pass through):
 *
 *   root        the host's /, read-only (or --rootfs DIR)
 *   private     /tmp, /var/tmp: tmpfs mounts of its own, also when the
 *               workspace is below one; the state root and the data
 *               directory are masked, and so are the host's UNIX sockets
 *               at a path it shows (hide_host_sockets) and, as root, what
 *               only root may read there (hide_root_only)
 *   hidden      /home, /root, /run, /mnt, /media: empty tmpfs mounts; the
 *               user's home is an empty scratch tmpfs, with a copy of the
 *               files the profile lists (sandbox.home) and --dotfile adds
 *               (bound read-only, then copied up into a second tmpfs: the
 *               sandbox writes its copy), never what the home's deny list names
 *               (profile/home.c: keys, cloud and registry credentials,
 *               browser profiles, shell histories)
 *   workspace   the current directory (or --workspace DIR) at its own path,
 *               the profile's reviewed overlay (or --write-through: a bind
 *               with the protected paths read-only)
 *   session     its own session and process group, with or without a terminal
 *   network     a network namespace of its own with loopback only: the
 *               host's loopback services are unreachable
 *   secrets     --secret NAME: only those of the profile's secrets (none
 *               without it), through the egress TLS proxy as in any container
 *   profile     `agent` (or --profile: any profile), with the limits of
 *               --memory/--pids/--cpus; handed to create in memory, with the
 *               config (no bundle on disk)
 *
 * As an unprivileged user agentrt first enters a user namespace of its own in
 * which the user keeps its uid and gid (as a rootless engine does), so the
 * agent's files keep their owner; where the host forbids that, the error says
 * why and what to change (`agentrt doctor` checks it beforehand).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <sys/socket.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <linux/capability.h>
#include <linux/netlink.h>
#include <sys/prctl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <grp.h>
#include <link.h>
#include <sys/auxv.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>

#include "audit/audit.h"
#include "profile/render.h"
#include "cli/cli.h"
#include "cli/create.h"
#include "cli/refusals.h"
#include "cli/tty.h"
#include "common/egress_grammar.h"
#include "common/log.h"
#include "common/subproto.h"
#include "common/util.h"
#include "container/container.h"
#include "monitor/monitor.h"
#include "monitor/subagents.h"
#include "os/procfs.h"
#include "os/fsutil.h"
#include "profile/profile.h"
#include "workspace/workspace.h"

extern char **environ;

enum {
  S_NAME = 1,
  S_PROFILE,
  S_WORKSPACE,
  S_WRITE_THROUGH,
  S_ROOTFS,
  S_MEMORY,
  S_PIDS,
  S_CPUS,
  S_KEEP,
  S_ENV,
  S_DOTFILE,
  S_ALLOW,
  S_SECRET,
  S_DNS,
  S_HELP,
};

static const struct opt_spec sandbox_specs[] = {
    {"name", 'n', true, S_NAME},
    {"profile", 0, true, S_PROFILE},
    {"workspace", 'w', true, S_WORKSPACE},
    {"write-through", 0, false, S_WRITE_THROUGH},
    {"rootfs", 0, true, S_ROOTFS},
    {"memory", 'm', true, S_MEMORY},
    {"pids", 0, true, S_PIDS},
    {"cpus", 0, true, S_CPUS},
    {"keep", 0, false, S_KEEP},
    {"env", 'e', true, S_ENV},
    {"dotfile", 0, true, S_DOTFILE},
    {"allow", 0, true, S_ALLOW},
    {"secret", 0, true, S_SECRET},
    {"dns", 0, true, S_DNS},
    {"help", 'h', false, S_HELP},
    {NULL, 0, false, 0},
};

static const char sandbox_usage[] =
    "Usage: agentrt sandbox [--name N] [--profile P] [--workspace DIR] [--write-through]\n"
    "                       [--rootfs DIR] [--memory M] [--pids N] [--cpus C]\n"
    "                       [--env K=V|NAME]... [--dotfile PATH]... [--allow ENTRY]... [--dns "
    "ADDR]...\n"
    "                       [--secret NAME]... [--keep] -- CMD [ARGS...]\n"
    "\n"
    "Runs CMD in an agent sandbox, with no bundle and no engine, as root or as an\n"
    "unprivileged user: the host's root read-only, /home, /root and /run hidden, /tmp\n"
    "and /var/tmp private, agentrt's state root, data directory and the host's UNIX\n"
    "sockets masked (as root, also the files only root may read, such as /etc/shadow),\n"
    "the home empty but for a private copy of the profile's sandbox.home files and\n"
    "--dotfile PATH (relative to the home), never keys, credentials, browser profiles\n"
    "or histories (the built-in deny list, plus the profile's sandbox.homeDeny), the\n"
    "current directory (or --workspace) as the reviewed workspace, no network but\n"
    "loopback (with --allow or the profile's egress.allow: slirp4netns, and only the\n"
    "entries leave), the profile's seccomp, capability and audit rules and its limits.\n"
    "--secret NAME: one of the profile's secrets (by name; none without it): CMD gets\n"
    "$NAME as a placeholder, the egress TLS proxy puts the real value in requests to\n"
    "the secret's hosts, which --allow or the profile's egress.allow must already let\n"
    "out (a secret never widens egress).\n"
    "The caller's environment is passed in without its credentials: AWS_*, AZURE_*,\n"
    "GOOGLE_*, names with TOKEN, SECRET, PASSWORD, API_KEY, CREDENTIAL..., SSH_AUTH_SOCK,\n"
    "values with a URL's user or password (https://u:pw@host) or an Authorization header;\n"
    "--env NAME passes the caller's NAME all the same, --env K=V sets one.\n"
    "Afterwards: agentrt workspace N diff|commit|discard, agentrt audit N.\n";

/* Environment variables that hand the sandbox a way out to the host's agents
 * and buses; they are not passed in. */
static const char *const env_drop[] = {
    "SSH_AUTH_SOCK=",
    "SSH_AGENT_PID=",
    "GPG_AGENT_INFO=",
    "DBUS_SESSION_BUS_ADDRESS=",
    "XDG_RUNTIME_DIR=",
    "DOCKER_HOST=",
    "CONTAINER_HOST=",
    "KRB5CCNAME=",
    "WAYLAND_DISPLAY=",
    "DISPLAY=",
    "XAUTHORITY=",
    "AGENTRT_PROFILE=",
    "LD_PRELOAD=",
    "SYSTEMD_EXEC_PID=",
    "INVOCATION_ID=",
    "AGENTRT_DATA_DIR=",
    "AGENTRT_SANDBOX_CGROUP=",
    "AGENTRT_SANDBOX_PROC_FD=",
    NULL,
};

/* Variables whose name says they hold a credential: a cloud's (by prefix),
 * or a token, key, password or secret (by a word of the name, in any case),
 * or whose value carries one (cred_value, value_has_userinfo).  They are
 * not passed in unless named with --env NAME. */
static const char *const cred_prefix[] = {
    "AWS_",     "AZURE_",         "ARM_",      "GOOGLE_",       "GCLOUD_", "GCP_",   "CLOUDSDK_",
    "OCI_CLI_", "ALIBABA_CLOUD_", "ALICLOUD_", "DIGITALOCEAN_", "HCLOUD_", "VAULT_", NULL,
};
static const char *const cred_word[] = {
    "TOKEN",      "SECRET",      "PASSWORD",   "PASSWD", "PASSPHRASE", "API_KEY", "APIKEY",
    "ACCESS_KEY", "PRIVATE_KEY", "CREDENTIAL", "COOKIE", "AUTH_",      NULL,
};
/* and a name ending in one of these */
static const char *const cred_suffix[] = {
    "_KEY", "_PAT", "_AUTH", "_DSN", "DATABASE_URL", "_PWD", "_PASS", "_JWT",
    /* files of keys and tokens: the variable, and the file it names */
    "KUBECONFIG", "DOCKER_CONFIG", "GNUPGHOME", "NETRC",
    /* ... spelled as a file's: a password file (PGPASSFILE), a key's file
     * or path (SOPS_AGE_KEY_FILE, BORG_KEY_FILE, SSH_KEY_PATH), a client
     * certificate's directory with its key (DOCKER_CERT_PATH), a keytab
     * (KRB5_KTNAME, KRB5_CLIENT_KTNAME), a login file (MYSQL_TEST_LOGIN_FILE),
     * and tools' configs that hold their tokens (gh's hosts.yml, rclone's,
     * boto's, npm's user .npmrc, terraform's credentials): escape test
     * "variables whose only use is to name a credential file" */
    "PASSFILE", "KEY_FILE", "_KEYFILE", "KEY_PATH", "DOCKER_CERT_PATH", "_KTNAME", "LOGIN_FILE",
    "GH_CONFIG_DIR", "RCLONE_CONFIG", "BOTO_CONFIG", "NPM_CONFIG_USERCONFIG", "TF_CLI_CONFIG_FILE",
    NULL};
/* A value that carries a credential whatever the name: an HTTP
 * Authorization header (GIT_CONFIG_PARAMETERS' http.extraHeader,
 * GIT_CONFIG_VALUE_N) or a bearer token, matched in any case. */
static const char *const cred_value[] = {"AUTHORIZATION:", "BEARER ", NULL};

/* Does the value hold a URL with a user or password before its host
 * (https://user:password@host/, redis://:password@host, https://TOKEN@host:
 * PIP_INDEX_URL, HTTPS_PROXY, REDIS_URL, a git remote)? */
static bool value_has_userinfo(const char *v)
{
  for (const char *p = strstr(v, "://"); p != NULL; p = strstr(p, "://")) {
    p += 3;
    size_t n = strcspn(p, "/?#@ \t\n");
    if (p[n] == '@')
      return true;
  }
  return false;
}

static const char *const hidden_dirs[] = {"/home", "/root", "/run", "/mnt", "/media", NULL};
/* What a file of the home may not lead to either: the sandbox's own private
 * /tmp, /var/tmp and /dev hide the host's, and /proc and /sys files are not
 * dotfiles (a link to /proc/1/environ, say). */
static const char *const hidden_too[] = {"/tmp", "/var/tmp", "/dev", "/proc", "/sys", NULL};

/* At most this many files of the home are bound (a directory is bound file
 * by file), and directories are walked this deep. */
#define HOME_MAX_FILES 256
#define HOME_MAX_DEPTH 8

/* One file of the home bound read-only: opened once (O_PATH), checked on
 * what it really is, and bound from that descriptor (/proc/self/fd/N), so
 * a path changed between the check and the bind changes nothing. */
struct home_bind {
  char *dest; /* $HOME/rel, where the sandbox sees it */
  int fd;
};

struct home_binds {
  struct home_bind *v;
  size_t n;
  size_t skipped; /* denied or refused below a listed directory */
};

struct sandbox_opts {
  const char *name;
  const char *profile;
  const char *workspace;
  bool write_through;
  const char *rootfs;
  const char *memory;
  const char *pids;
  const char *cpus;
  const char *cgroup; /* a user's sandbox: its cgroup in the user's delegated one */
  bool keep;
  char **env;      /* --env K=V */
  char **env_pass; /* --env NAME: the caller's value of NAME, credential or not */
  char **dotfiles; /* --dotfile, relative to $HOME (normalised, checked) */
  const struct home_binds *binds;
  char **hide;  /* agentrt's state root and data directory, where the sandbox would see them:
                   masked (after every mount: the workspace's layers are in there) */
  char **allow; /* --allow: egress entries */
  bool network; /* slirp4netns and the egress policy (--allow, the profile's allowlist) */
  char **dns;   /* --dns: upstream resolvers */
  char **cmd;
  const char *shim; /* this binary, as the sandbox's pid 1 (NULL with --rootfs: a dynamic build) */
  int shim_fd;      /* the same, O_PATH: bound at SANDBOX_INIT inside */
  const char *self; /* this binary's path on the host: the network hook (createRuntime hooks
                       run in the runtime's namespaces, whatever the root: --rootfs too) */
};

/* Where the sandbox's pid 1 (this binary) is inside: bound from an fd of it,
 * since its own path may be below what the sandbox hides or makes private
 * (~/.local/bin, /tmp, /run). */
#define SANDBOX_INIT "/dev/.agentrt-init"

static bool env_dropped(const char *e)
{
  for (size_t i = 0; env_drop[i] != NULL; i++)
    if (str_has_prefix(e, env_drop[i]))
      return true;
  return false;
}

/* `e` (NAME=VALUE) holds a credential by its name (cred_prefix, cred_word,
 * cred_suffix). */
static bool env_credential(const char *e)
{
  const char *eq = strchr(e, '=');
  size_t n = eq != NULL ? (size_t)(eq - e) : strlen(e);
  char name[256];

  if (n >= sizeof name)
    return true; /* nobody names a variable like that: not passed in */
  for (size_t i = 0; i < n; i++)
    name[i] = (char)toupper((unsigned char)e[i]);
  name[n] = '\0';
  for (size_t i = 0; cred_prefix[i] != NULL; i++)
    if (str_has_prefix(name, cred_prefix[i]))
      return true;
  for (size_t i = 0; cred_word[i] != NULL; i++)
    if (strstr(name, cred_word[i]) != NULL)
      return true;
  for (size_t i = 0; cred_suffix[i] != NULL; i++) {
    size_t k = strlen(cred_suffix[i]);
    if (n >= k && streq(name + n - k, cred_suffix[i]))
      return true;
  }
  if (eq == NULL)
    return false;
  for (size_t i = 0; cred_value[i] != NULL; i++)
    if (strcasestr(eq + 1, cred_value[i]) != NULL)
      return true;
  return value_has_userinfo(eq + 1);
}

/* `e` (NAME=VALUE) is named by a --env NAME */
static bool env_named(char *const *names, const char *e)
{
  size_t n = strcspn(e, "=");

  for (size_t i = 0; names != NULL && names[i] != NULL; i++)
    if (strlen(names[i]) == n && strncmp(names[i], e, n) == 0)
      return true;
  return false;
}

static bool env_name_ok(const char *s)
{
  if (!(isalpha((unsigned char)s[0]) || s[0] == '_'))
    return false;
  for (const char *c = s; *c != '\0'; c++)
    if (!(isalnum((unsigned char)*c) || *c == '_'))
      return false;
  return true;
}

static bool is_dir(const char *p)
{
  struct stat st;
  return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* This binary needs no loader nor shared library (no PT_INTERP): it runs in
 * any --rootfs image as the sandbox's pid 1.  Read from our own program
 * headers in memory: no system call. */
static bool self_is_static(void)
{
  const ElfW(Phdr) *ph = (const ElfW(Phdr) *)getauxval(AT_PHDR);
  unsigned long n = getauxval(AT_PHNUM);

  if (ph == NULL)
    return false;
  for (unsigned long i = 0; i < n; i++)
    if (ph[i].p_type == PT_INTERP)
      return false;
  return true;
}

/* `path` (absolute) is a directory of the sandbox's root: the host's
 * (rootfs NULL) or --rootfs */
static bool in_root_is_dir(const char *rootfs, const char *path)
{
  cleanup_free char *p = xfmt("%s%s", rootfs != NULL ? rootfs : "", path);
  return is_dir(p);
}

/* A size for the limits: digits with an optional k/m/g suffix, in bytes. */
static int parse_size(const char *s, uint64_t *ret)
{
  char *end;
  unsigned long long v;
  uint64_t mul = 1;

  errno = 0;
  v = strtoull(s, &end, 10);
  if (errno != 0 || end == s)
    return -1;
  switch (*end) {
  case 'k':
  case 'K':
    mul = 1ULL << 10;
    end++;
    break;
  case 'm':
  case 'M':
    mul = 1ULL << 20;
    end++;
    break;
  case 'g':
  case 'G':
    mul = 1ULL << 30;
    end++;
    break;
  }
  if (*end == 'b' || *end == 'B')
    end++;
  if (*end != '\0' || v == 0 || v > (UINT64_MAX / mul))
    return -1;
  *ret = v * mul;
  return 0;
}

/* The sandbox's config.json, in memory (*ret: malloc'd, *ret_len bytes). */
static int build_config(const struct sandbox_opts *o, const char *ws, const char *home, char **ret,
                        size_t *ret_len, struct error *err)
{
  yajl_gen y = yajl_gen_alloc(NULL);
  const unsigned char *buf;
  size_t len;
  char num[32];
  const char *const proc_opts[] = {"nosuid", "noexec", "nodev", NULL};
  const char *const dev_opts[] = {"nosuid", "strictatime", "mode=755", "size=65536k", NULL};
  const char *const pts_opts[] = {"nosuid",        "noexec",    "newinstance",
                                  "ptmxmode=0666", "mode=0620", NULL};
  const char *const shm_opts[] = {"nosuid", "noexec", "nodev", "mode=1777", "size=65536k", NULL};
  const char *const mq_opts[] = {"nosuid", "noexec", "nodev", NULL};
  const char *const sys_opts[] = {"nosuid", "noexec", "nodev", "ro", NULL};
  const char *const hide_opts[] = {"nosuid", "nodev", "noexec", "mode=755", "size=1m", NULL};
  const char *const home_opts[] = {"nosuid", "nodev", "mode=700", "size=256m", NULL};
  const char *const home_copy_opts[] = {"nosuid",    "nodev",     "mode=700",
                                        "size=256m", "tmpcopyup", NULL};
  const char *const tmp_opts[] = {"nosuid", "nodev", "mode=1777", "size=512m", NULL};
  const char *const var_tmp_opts[] = {"nosuid", "nodev", "mode=1777", "size=256m", NULL};
  const char *const ro_bind[] = {"bind", "ro", "nosuid", "nodev", NULL};
  const char *const ws_bind[] = {"rbind", "nosuid", "nodev", NULL};
  bool tty = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);

  yajl_gen_config(y, yajl_gen_beautify, 1);
  yajl_gen_map_open(y);
  profile_gen_key_str(y, "ociVersion", "1.2.0");

  profile_gen_str(y, "process");
  yajl_gen_map_open(y);
  profile_gen_str(y, "terminal");
  yajl_gen_bool(y, tty);
  profile_gen_str(y, "user");
  yajl_gen_map_open(y);
  profile_gen_str(y, "uid");
  yajl_gen_integer(y, getuid());
  profile_gen_str(y, "gid");
  yajl_gen_integer(y, getgid());
  yajl_gen_map_close(y);
  profile_gen_str(y, "args");
  yajl_gen_array_open(y);
  if (o->shim != NULL) {
    profile_gen_str(y, SANDBOX_INIT);
    profile_gen_str(y, "sandbox-init");
    profile_gen_str(y, "--");
  }
  for (char **a = o->cmd; *a != NULL; a++)
    profile_gen_str(y, *a);
  yajl_gen_array_close(y);
  profile_gen_str(y, "env");
  yajl_gen_array_open(y);
  for (char **e = environ; e != NULL && *e != NULL; e++) {
    if (strchr(*e, '=') == NULL || env_named(o->env_pass, *e))
      continue;
    if (env_dropped(*e) || env_credential(*e))
      continue;
    if (str_has_prefix(*e, "HOME="))
      continue;
    profile_gen_str(y, *e);
  }
  {
    cleanup_free char *h = xfmt("HOME=%s", home);
    profile_gen_str(y, h);
  }
  profile_gen_str(y, "AGENTRT_SANDBOX=1");
  for (char **e = environ; e != NULL && *e != NULL; e++)
    if (strchr(*e, '=') != NULL && env_named(o->env_pass, *e))
      profile_gen_str(y, *e);
  for (char **e = o->env; e != NULL && *e != NULL; e++)
    profile_gen_str(y, *e);
  yajl_gen_array_close(y);
  profile_gen_key_str(y, "cwd", ws);
  profile_gen_str(y, "noNewPrivileges");
  yajl_gen_bool(y, 1);
  yajl_gen_map_close(y);

  profile_gen_str(y, "root");
  yajl_gen_map_open(y);
  profile_gen_key_str(y, "path", o->rootfs ? o->rootfs : "/");
  profile_gen_str(y, "readonly");
  yajl_gen_bool(y, 1);
  yajl_gen_map_close(y);
  profile_gen_key_str(y, "hostname", "sandbox");

  profile_gen_str(y, "mounts");
  yajl_gen_array_open(y);
  profile_gen_mount(y, "/proc", "proc", "proc", proc_opts);
  profile_gen_mount(y, "/dev", "tmpfs", "tmpfs", dev_opts);
  profile_gen_mount(y, "/dev/pts", "devpts", "devpts", pts_opts);
  profile_gen_mount(y, "/dev/shm", "tmpfs", "shm", shm_opts);
  profile_gen_mount(y, "/dev/mqueue", "mqueue", "mqueue", mq_opts);
  profile_gen_mount(y, "/sys", "sysfs", "sysfs", sys_opts);
  if (o->shim != NULL) {
    char src[64];
    snprintf(src, sizeof src, "/proc/self/fd/%d", o->shim_fd);
    profile_gen_mount(y, SANDBOX_INIT, "bind", src, ro_bind);
  }
  /* /tmp and /var/tmp are the sandbox's own even when the workspace is below
   * one (the profile's scratch leaves those out): the host's hold other
   * programs' files and sockets */
  if (in_root_is_dir(o->rootfs, "/tmp"))
    profile_gen_mount(y, "/tmp", "tmpfs", "tmpfs", tmp_opts);
  if (in_root_is_dir(o->rootfs, "/var/tmp"))
    profile_gen_mount(y, "/var/tmp", "tmpfs", "tmpfs", var_tmp_opts);
  if (o->rootfs == NULL) {
    for (size_t i = 0; hidden_dirs[i] != NULL; i++)
      if (is_dir(hidden_dirs[i]))
        profile_gen_mount(y, hidden_dirs[i], "tmpfs", "tmpfs", hide_opts);
  }
  /* The home: an empty scratch tmpfs, then the dotfiles read-only, then a
   * second tmpfs over it that starts with a copy of them (tmpcopyup), then the
   * workspace (which may lie below it).  The copy is what the sandbox sees and
   * writes: a program that replaces a file by rename (git config --global
   * renames .gitconfig.lock over ~/.gitconfig) would get EBUSY on a bind mount
   * point, and what it writes never reaches the host's file. */
  profile_gen_mount(y, home, "tmpfs", "tmpfs", home_opts);
  for (size_t i = 0; o->binds != NULL && i < o->binds->n; i++) {
    char src[64];
    snprintf(src, sizeof src, "/proc/self/fd/%d", o->binds->v[i].fd);
    profile_gen_mount(y, o->binds->v[i].dest, "bind", src, ro_bind);
  }
  if (o->binds != NULL && o->binds->n > 0)
    profile_gen_mount(y, home, "tmpfs", "tmpfs", home_copy_opts);
  profile_gen_mount(y, ws, "bind", ws, ws_bind);
  yajl_gen_array_close(y);

  if (o->network) {
    /* The network helper, started once the sandbox's network namespace exists. */
    profile_gen_str(y, "hooks");
    yajl_gen_map_open(y);
    profile_gen_str(y, "createRuntime");
    yajl_gen_array_open(y);
    yajl_gen_map_open(y);
    profile_gen_key_str(y, "path", o->self);
    profile_gen_str(y, "args");
    yajl_gen_array_open(y);
    profile_gen_str(y, "agentrt");
    profile_gen_str(y, "sandbox-net");
    yajl_gen_array_close(y);
    profile_gen_str(y, "timeout");
    yajl_gen_integer(y, 20);
    yajl_gen_map_close(y);
    yajl_gen_array_close(y);
    yajl_gen_map_close(y);
  }

  profile_gen_str(y, "linux");
  yajl_gen_map_open(y);
  if (o->cgroup != NULL)
    profile_gen_key_str(y, "cgroupsPath", o->cgroup);
  /* the host's mounts below / are made read-only at the start (rootfs.c):
   * one the host makes later (a disk, a bind below /srv) would come in with
   * its own rw by propagation; private, nothing comes in */
  if (o->rootfs == NULL)
    profile_gen_key_str(y, "rootfsPropagation", "rprivate");
  profile_gen_str(y, "namespaces");
  yajl_gen_array_open(y);
  for (const char *const *t =
           (const char *const[]){"pid", "network", "ipc", "uts", "mount", "cgroup", NULL};
       *t != NULL; t++) {
    yajl_gen_map_open(y);
    profile_gen_key_str(y, "type", *t);
    yajl_gen_map_close(y);
  }
  yajl_gen_array_close(y);
  if (o->memory || o->pids || o->cpus) {
    profile_gen_str(y, "resources");
    yajl_gen_map_open(y);
    if (o->memory) {
      uint64_t v;
      if (parse_size(o->memory, &v) < 0) {
        yajl_gen_free(y);
        return error_set(err, 0, "sandbox: --memory: invalid size `%s`", o->memory);
      }
      profile_gen_str(y, "memory");
      yajl_gen_map_open(y);
      profile_gen_str(y, "limit");
      snprintf(num, sizeof num, "%llu", (unsigned long long)v);
      yajl_gen_number(y, num, strlen(num));
      yajl_gen_map_close(y);
    }
    if (o->pids) {
      int64_t v;
      if (parse_i64(o->pids, &v) < 0 || v <= 0) {
        yajl_gen_free(y);
        return error_set(err, 0, "sandbox: --pids: invalid number `%s`", o->pids);
      }
      profile_gen_str(y, "pids");
      yajl_gen_map_open(y);
      profile_gen_str(y, "limit");
      yajl_gen_integer(y, v);
      yajl_gen_map_close(y);
    }
    if (o->cpus) {
      char *end;
      double v;
      errno = 0;
      v = strtod(o->cpus, &end);
      if (errno != 0 || end == o->cpus || *end != '\0' || !(v > 0) || v > 4096) {
        yajl_gen_free(y);
        return error_set(err, 0, "sandbox: --cpus: invalid number `%s`", o->cpus);
      }
      profile_gen_str(y, "cpu");
      yajl_gen_map_open(y);
      profile_gen_str(y, "period");
      yajl_gen_integer(y, 100000);
      profile_gen_str(y, "quota");
      yajl_gen_integer(y, (long long)(v * 100000));
      yajl_gen_map_close(y);
    }
    yajl_gen_map_close(y);
  }
  yajl_gen_map_close(y);
  yajl_gen_map_close(y);

  if (yajl_gen_get_buf(y, &buf, &len) != yajl_gen_status_ok) {
    yajl_gen_free(y);
    return error_set(err, 0, "sandbox: cannot build config.json");
  }
  *ret = xmalloc(len + 1);
  memcpy(*ret, buf, len);
  (*ret)[len] = '\0';
  *ret_len = len;
  yajl_gen_free(y);
  return 0;
}

/* The profile: the chosen one (loaded, so that an operator's file or
 * agent-strict works as well as a built-in), with the workspace at its path
 * and the egress entries of --allow; handed to create in memory. */
static void sandbox_profile(const struct sandbox_opts *o, struct agent_profile *p, const char *ws)
{
  free(p->name);
  p->name = xstrdup("sandbox");
  free(p->workspace.path);
  p->workspace.path = xstrdup(ws);
  p->workspace.mode = o->write_through ? PROFILE_WS_BIND : PROFILE_WS_OVERLAY;
  /* No syncs of the upper layer: its unmount would otherwise flush the whole
   * file system it is on (2-50 ms here, growing with everybody's dirty data);
   * the changes wait in the page cache like any other write. */
  p->workspace.volatile_upper = true;
  /* A user's sandbox: the device cgroup's filter is an eBPF program only the
   * host's root may attach, and adds nothing there (a user namespace cannot
   * make device nodes; /dev holds the default ones only). */
  if (geteuid() != 0)
    p->devices_restrict = false;
  /* no sub-agent API in a sandbox yet: its children would need its hidden
   * directories and its user namespace (monitor/subagents.h) */
  p->subagents.enabled = false;
  for (char **h = o->hide; h != NULL && *h != NULL; h++) {
    if (p->masked_paths == NULL)
      p->masked_paths = xmalloc0(sizeof(char *));
    strv_push(&p->masked_paths, *h);
  }
  if (!o->network) {
    /* loopback only: there is nowhere to go, so no rules to install (and
     * nothing needs the init's network namespace: see cmd_sandbox) */
    p->egress.def = PROFILE_EGRESS_OFF;
  } else {
    if (p->egress.def == PROFILE_EGRESS_OFF)
      p->egress.def = PROFILE_EGRESS_DENY;
    for (char **a = o->allow; *a != NULL; a++)
      strv_push(&p->egress.allow, *a);
    if (o->dns != NULL) {
      strv_free(p->egress.dns_upstream);
      p->egress.dns_upstream = strv_dup(o->dns);
    }
  }
}

/* `path` is `dir` or below it; *rest the part after dir ("" for dir). */
static bool path_under(const char *path, const char *dir, const char **rest)
{
  size_t n = strlen(dir);

  if (strncmp(path, dir, n) != 0 || (path[n] != '\0' && path[n] != '/'))
    return false;
  *rest = path[n] == '/' ? path + n + 1 : path + n;
  return true;
}

/* What an opened file of the home really is, as a reason to refuse it, or
 * NULL: the path the kernel has for the descriptor (after every symlink) must
 * be in the home and not denied, or outside the directories the sandbox hides
 * (the host's root is readable in the sandbox anyway); a regular file must
 * have no other hard link (the other name could be a key). */
static char *home_refusal(int fd, const char *home, const char *home_real, char *const *deny,
                          const struct stat *st)
{
  char lnk[64], real[PATH_MAX];
  const char *rest, *why;
  ssize_t n;

  snprintf(lnk, sizeof lnk, "/proc/self/fd/%d", fd);
  n = readlink(lnk, real, sizeof real - 1);
  if (n <= 0)
    return xfmt("cannot tell what it is (%s)", strerror(errno));
  real[n] = '\0';
  if (real[0] != '/')
    return xfmt("it is `%s`, not a file of a file system", real);
  /* the home by its own name, or by the path it really has (a home that is
   * a symlink: /home/u -> /data/u) */
  if (path_under(real, home, &rest) || path_under(real, home_real, &rest)) {
    if (*rest == '\0')
      return xstrdup("it is the home itself");
    if ((why = profile_home_denied(rest, deny)) != NULL)
      return xfmt("it is ~/%s, on the home's deny list (`%s`)", rest, why);
  } else {
    for (size_t i = 0; hidden_dirs[i] != NULL; i++)
      if (path_under(real, hidden_dirs[i], &rest))
        return xfmt("it is %s, in %s, which the sandbox hides", real, hidden_dirs[i]);
    for (size_t i = 0; hidden_too[i] != NULL; i++)
      if (path_under(real, hidden_too[i], &rest))
        return xfmt("it is %s, in %s, which the sandbox has a private one of", real, hidden_too[i]);
  }
  if (S_ISREG(st->st_mode) && st->st_nlink > 1)
    return xfmt("it has %ju hard links (another name of it may be a credential)",
                (uintmax_t)st->st_nlink);
  return NULL;
}

static void binds_free(struct home_binds *b)
{
  for (size_t i = 0; i < b->n; i++) {
    free(b->v[i].dest);
    close(b->v[i].fd);
  }
  free(b->v);
  *b = (struct home_binds){0};
}

static bool binds_have(const struct home_binds *b, const char *dest)
{
  for (size_t i = 0; i < b->n; i++)
    if (streq(b->v[i].dest, dest))
      return true;
  return false;
}

/* Bind the opened file `fd` (owned) of the home at ~/rel, or, for a
 * directory, each file below it.  strict (a --dotfile itself): a refusal is
 * the error; else a refused file is skipped with a warning. */
static int home_add(struct home_binds *b, int fd, const char *rel, const char *home,
                    const char *home_real, char *const *deny, bool strict, int depth,
                    struct error *err)
{
  struct stat st;
  cleanup_free char *why = NULL;
  const char *d;

  if (fstat(fd, &st) < 0) {
    close(fd);
    return 0;
  }
  if ((d = profile_home_denied(rel, deny)) != NULL)
    why = xfmt("on the home's deny list (`%s`)", d);
  else if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))
    why = home_refusal(fd, home, home_real, deny, &st);
  else {
    close(fd); /* a socket, a fifo, a device: nothing to read */
    return 0;
  }
  if (why == NULL && S_ISDIR(st.st_mode) && depth >= HOME_MAX_DEPTH)
    why = xfmt("deeper than %d directories", HOME_MAX_DEPTH);
  if (why == NULL && S_ISREG(st.st_mode) && b->n >= HOME_MAX_FILES)
    why = xfmt("more than %d files of the home", HOME_MAX_FILES);
  if (why != NULL) {
    close(fd);
    if (strict)
      return error_set(err, 0, "sandbox: --dotfile `%s`: %s; it is not bound", rel, why);
    b->skipped++;
    log_warning("sandbox: ~/%s is not bound: %s", rel, why);
    return 0;
  }
  if (S_ISREG(st.st_mode)) {
    cleanup_free char *dest = xfmt("%s/%s", home, rel);
    if (binds_have(b, dest)) {
      close(fd);
      return 0;
    }
    b->v = xrealloc(b->v, (b->n + 1) * sizeof *b->v);
    b->v[b->n++] = (struct home_bind){.dest = take_ptr(dest), .fd = fd};
    return 0;
  }
  {
    int dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *dir = dfd >= 0 ? fdopendir(dfd) : NULL;
    struct dirent *e;
    int r = 0;

    if (dir == NULL) {
      if (dfd >= 0)
        close(dfd);
      close(fd);
      return 0;
    }
    while (r == 0 && (e = readdir(dir)) != NULL) {
      cleanup_free char *sub = NULL;
      int cfd;
      if (streq(e->d_name, ".") || streq(e->d_name, ".."))
        continue;
      sub = xfmt("%s/%s", rel, e->d_name);
      /* the child of this very directory, following a symlink it is (what
       * it resolves to is checked as any other file) */
      cfd = openat(fd, e->d_name, O_PATH | O_CLOEXEC);
      if (cfd < 0)
        continue;
      r = home_add(b, cfd, sub, home, home_real, deny, false, depth + 1, err);
    }
    closedir(dir);
    close(fd);
    return r;
  }
}

/* The home's files for the sandbox: the profile's sandbox.home, then
 * --dotfile; missing ones are skipped. */
static int home_collect(struct home_binds *b, const char *home, const struct agent_profile *p,
                        char **dotfiles, struct error *err)
{
  cleanup_close int hfd = open(home, O_PATH | O_DIRECTORY | O_CLOEXEC);
  char *const *deny = p->sandbox.home_deny;
  char lnk[64], home_real[PATH_MAX];
  ssize_t n;

  if (hfd < 0)
    return 0; /* no home on the host: nothing to bind */
  snprintf(lnk, sizeof lnk, "/proc/self/fd/%d", hfd);
  n = readlink(lnk, home_real, sizeof home_real - 1);
  if (n <= 0 || home_real[0] != '/')
    return error_errno(err, "sandbox: the home `%s`: what is its path", home);
  home_real[n] = '\0';
  for (int pass = 0; pass < 2; pass++) {
    char **list = pass == 0 ? p->sandbox.home : dotfiles;
    for (size_t i = 0; list != NULL && list[i] != NULL; i++) {
      cleanup_free char *rel = profile_home_normalize(list[i]);
      int fd;
      if (rel == NULL)
        continue; /* the profile's are validated, --dotfile's checked at parse */
      fd = openat(hfd, rel, O_PATH | O_CLOEXEC);
      if (fd < 0) {
        if (errno == ENOENT || errno == ENOTDIR)
          continue;
        if (pass == 1)
          return error_errno(err, "sandbox: --dotfile `%s`", rel);
        log_warning("sandbox: ~/%s is not bound: %s", rel, strerror(errno));
        continue;
      }
      if (home_add(b, fd, rel, home, home_real, deny, pass == 1, 0, err) < 0)
        return -1;
    }
  }
  return 0;
}

static bool have_slirp(void)
{
  const char *path = getenv("PATH");
  cleanup_free char *copy = xstrdup(path && *path ? path : "/usr/bin:/bin");

  for (char *save = NULL, *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
    cleanup_free char *f = xfmt("%s/slirp4netns", d);
    if (access(f, X_OK) == 0)
      return true;
  }
  return false;
}

static int write_id_map(const char *file, const char *line, struct error *err)
{
  cleanup_close int fd = open(file, O_WRONLY | O_CLOEXEC);
  size_t n = strlen(line);

  if (fd < 0 || write(fd, line, n) != (ssize_t)n)
    return error_errno(err, "sandbox: write %s", file);
  return 0;
}

static long read_sysctl(const char *path)
{
  FILE *f = fopen(path, "re");
  long v = -1;

  if (f != NULL) {
    if (fscanf(f, "%ld", &v) != 1)
      v = -1;
    fclose(f);
  }
  return v;
}

/* The trail's process records: the kernel takes a subscription to process
 * events only from its initial user namespace, so a user's sandbox makes it
 * before entering its own and hands the socket to its monitor (over the
 * exec into the namespace too, in AGENTRT_SANDBOX_PROC_FD).  Without it the
 * monitor records programs only while something else on the host listens. */
#define PROC_FD_ENV "AGENTRT_SANDBOX_PROC_FD"

static void proc_events_subscribe(const struct agent_profile *prof)
{
  struct error e = {0};
  int fd;

  if (!prof->audit.enabled || monitor_proc_adopted() >= 0)
    return;
  fd = monitor_proc_subscribe(&e);
  if (fd < 0) {
    log_debug("sandbox: %s", e.msg);
    return;
  }
  monitor_proc_adopt(fd);
}

/* Executed again in our user namespace: the socket from before, if it is
 * one (a netlink connector socket); the variable goes either way. */
static void proc_events_inherit(void)
{
  const char *v = getenv(PROC_FD_ENV);
  int fd, dom = 0, proto = 0;
  socklen_t l1 = sizeof dom, l2 = sizeof proto;
  char *end = NULL;
  long n;

  if (v == NULL)
    return;
  errno = 0;
  n = strtol(v, &end, 10);
  unsetenv(PROC_FD_ENV);
  if (errno != 0 || end == v || *end != '\0' || n < 3 || n > INT_MAX)
    return;
  fd = (int)n;
  if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &l1) < 0 ||
      getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &l2) < 0 || dom != AF_NETLINK ||
      proto != NETLINK_CONNECTOR || fcntl(fd, F_SETFD, FD_CLOEXEC) < 0)
    return;
  monitor_proc_adopt(fd);
}

/* Enter a user namespace in which we keep our uid and gid (an unprivileged
 * user; the CAP_SYS_ADMIN we get there is what the container set-up needs). */
static int enter_userns(struct error *err)
{
  uid_t uid = getuid();
  gid_t gid = getgid();
  char line[64];
  int fd;

  if (unshare(CLONE_NEWUSER) < 0) {
    int e = errno;
    long max = read_sysctl("/proc/sys/user/max_user_namespaces");
    long aa = read_sysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
    long clone = read_sysctl("/proc/sys/kernel/unprivileged_userns_clone");
    errno = e;
    if (aa > 0)
      return error_errno(err, "sandbox: cannot create a user namespace "
                              "(kernel.apparmor_restrict_unprivileged_userns=1 forbids it: set it "
                              "to 0, or allow agentrt with an AppArmor profile that has `userns,`; "
                              "see `agentrt doctor`)");
    if (e == ENOSPC && max == 0)
      return error_errno(err, "sandbox: cannot create a user namespace (user.max_user_namespaces=0 "
                              "forbids it: set it above 0, e.g. `sysctl -w "
                              "user.max_user_namespaces=15000`; see `agentrt doctor`)");
    if (e == ENOSPC)
      return error_errno(
          err,
          "sandbox: cannot create a user namespace (the limit user.max_user_namespaces=%ld "
          "is reached)",
          max);
    if (e == EUSERS)
      return error_errno(err, "sandbox: cannot create a user namespace (user namespaces are nested "
                              "32 deep already)");
    if (e == EPERM && clone == 0)
      return error_errno(err, "sandbox: cannot create a user namespace "
                              "(kernel.unprivileged_userns_clone=0 forbids it: set it to 1; see "
                              "`agentrt doctor`)");
    return error_errno(err, "sandbox: cannot create a user namespace (check "
                            "user.max_user_namespaces and kernel.unprivileged_userns_clone; "
                            "see `agentrt doctor`)");
  }
  fd = open("/proc/self/setgroups", O_WRONLY | O_CLOEXEC);
  if (fd >= 0) {
    if (write(fd, "deny", 4) != 4) {
      close(fd);
      return error_errno(err, "sandbox: write /proc/self/setgroups");
    }
    close(fd);
  }
  snprintf(line, sizeof line, "%u %u 1\n", (unsigned)uid, (unsigned)uid);
  if (write_id_map("/proc/self/uid_map", line, err) < 0)
    return error_prefix(err, "(the host restricts unprivileged user namespaces? see `agentrt "
                             "doctor`)");
  snprintf(line, sizeof line, "%u %u 1\n", (unsigned)gid, (unsigned)gid);
  if (write_id_map("/proc/self/gid_map", line, err) < 0)
    return -1;
  return 0;
}

/* A user without the capabilities the set-up needs: not root, and not
 * agentrt executed again in the user namespace it made (which holds them).
 * A user already in some other user namespace (a rootless container, a
 * toolbox) needs one of its own all the same. */
static bool needs_userns(void)
{
  struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
  struct __user_cap_data_struct d[2] = {{0}};

  if (geteuid() == 0)
    return false;
  if (syscall(SYS_capget, &h, d) < 0)
    return true;
  return (d[CAP_SYS_ADMIN / 32].effective & (1U << (CAP_SYS_ADMIN % 32))) == 0;
}

static int keep_caps_over_exec(struct error *err)
{
  struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
  struct __user_cap_data_struct d[2] = {{0}};
  int last = 40;
  FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "re");

  if (f != NULL) {
    if (fscanf(f, "%d", &last) != 1)
      last = 40;
    fclose(f);
  }
  if (syscall(SYS_capget, &h, d) < 0)
    return error_errno(err, "sandbox: capget");
  d[0].inheritable = d[0].permitted;
  d[1].inheritable = d[1].permitted;
  if (syscall(SYS_capset, &h, d) < 0)
    return error_errno(err, "sandbox: capset");
  for (int cap = 0; cap <= last && cap < 64; cap++)
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap, 0, 0) < 0 && errno != EINVAL)
      return error_errno(err, "sandbox: raise the ambient capability %d", cap);
  return 0;
}

#define SUPERVISOR_CGROUP "agentrt-supervisor"

/* word is one of the blank-separated words of s */
static bool has_word(const char *s, const char *word)
{
  size_t n = strlen(word);

  for (const char *p = s; (p = strstr(p, word)) != NULL; p += n)
    if ((p == s || p[-1] == ' ' || p[-1] == '\n') && (p[n] == '\0' || p[n] == ' ' || p[n] == '\n'))
      return true;
  return false;
}

static bool only_us_in(const char *procs_file)
{
  cleanup_free char *s = NULL;
  size_t len = 0;
  struct error e = {0};

  if (read_file_at(AT_FDCWD, procs_file, 1 << 20, &s, &len, &e) < 0)
    return false;
  for (char *save = NULL, *t = strtok_r(s, "\n", &save); t; t = strtok_r(NULL, "\n", &save))
    if (atoi(t) != (int)getpid())
      return false;
  return true;
}

/* The cgroup of a user's sandbox with --memory/--pids/--cpus: a child of
 * the user's own cgroup when it is a delegated cgroup v2 (what `systemd-run
 * --user --scope -p Delegate=yes` gives: /proc/self/cgroup names only the
 * unified hierarchy, and its cgroup.subtree_control and cgroup.procs are the
 * user's).  cgroup v2 lets a cgroup that hands controllers to its children
 * hold no process of its own, so agentrt first moves itself into a leaf,
 * OWN/agentrt-supervisor (and finds OWN again from there the next time);
 * that only works when nothing else runs in OWN.  Returns "OWN/NAME", or
 * NULL with *why saying what is missing. */
static char *user_cgroup(const char *name, const struct sandbox_opts *o, char **why)
{
  cleanup_free char *self = NULL;
  cleanup_free char *own = NULL;
  cleanup_free char *dir = NULL;
  cleanup_free char *f = NULL;
  cleanup_free char *avail = NULL;
  size_t len = 0;
  struct error e = {0};
  char *nl, *slash;
  const char *want[3] = {o->memory ? "memory" : NULL, o->pids ? "pids" : NULL,
                         o->cpus ? "cpu" : NULL};

  if (read_file_at(AT_FDCWD, "/proc/self/cgroup", 65536, &self, &len, &e) < 0 ||
      !str_has_prefix(self, "0::/") || ((nl = strchr(self, '\n')) != NULL && nl[1] != '\0')) {
    *why = xstrdup("this host is not cgroup v2 only");
    return NULL;
  }
  if (nl != NULL)
    *nl = '\0';
  own = xstrdup(self + 3);
  slash = strrchr(own, '/');
  if (slash != NULL && streq(slash + 1, SUPERVISOR_CGROUP))
    *(slash == own ? slash + 1 : slash) = '\0'; /* a sandbox before us moved us there */
  dir = xfmt("/sys/fs/cgroup%s", streq(own, "/") ? "" : own);
  f = xfmt("%s/cgroup.subtree_control", dir);
  if (streq(own, "/") || access(f, W_OK) != 0) {
    *why = xfmt("the user's cgroup %s is not delegated to it", own);
    return NULL;
  }
  free(f);
  f = xfmt("%s/cgroup.controllers", dir);
  if (read_file_at(AT_FDCWD, f, 4096, &avail, &len, &e) < 0)
    avail = xstrdup("");
  for (size_t i = 0; i < 3; i++) {
    if (want[i] == NULL)
      continue;
    bool found = has_word(avail, want[i]);
    if (!found) {
      *why = xfmt("the user's cgroup %s has no %s controller", own, want[i]);
      return NULL;
    }
  }
  free(f);
  f = xfmt("%s/" SUPERVISOR_CGROUP, dir);
  {
    cleanup_free char *procs = xfmt("%s/cgroup.procs", dir);
    cleanup_free char *leaf = xfmt("%s/cgroup.procs", f);
    cleanup_close int fd = -1;
    char pid[24];
    int n;
    if (!only_us_in(procs)) {
      *why = xfmt("other processes share the user's cgroup %s (run it under `systemd-run "
                  "--user --scope -p Delegate=yes`)",
                  own);
      return NULL;
    }
    if (mkdir(f, 0755) < 0 && errno != EEXIST) {
      *why = xfmt("mkdir %s: %s", f, strerror(errno));
      return NULL;
    }
    n = snprintf(pid, sizeof pid, "%d", (int)getpid());
    fd = open(leaf, O_WRONLY | O_CLOEXEC);
    if (fd < 0 || write(fd, pid, (size_t)n) != n) {
      *why = xfmt("move agentrt into %s: %s", f, strerror(errno));
      return NULL;
    }
  }
  for (size_t i = 0; i < 3; i++) {
    cleanup_close int fd = -1;
    char w[16];
    int n;
    if (want[i] == NULL)
      continue;
    free(f);
    f = xfmt("%s/cgroup.subtree_control", dir);
    n = snprintf(w, sizeof w, "+%s", want[i]);
    fd = open(f, O_WRONLY | O_CLOEXEC);
    if (fd < 0 || write(fd, w, (size_t)n) != n) {
      *why = xfmt("enable %s in %s: %s", want[i], own, strerror(errno));
      return NULL;
    }
  }
  return xfmt("%s/%s", streq(own, "/") ? "" : own, name);
}

/* An allow entry that lets HTTPS (tcp 443) to the secret's host `h` (a name,
 * or "*." and a domain) out: the same name, or a wildcard over it. */
static bool entry_covers(const struct egress_entry *e, const char *h)
{
  bool wild = str_has_prefix(h, "*.");
  const char *name = wild ? h + 2 : h;
  size_t hn = strlen(name), dn = strlen(e->domain);

  if (e->kind != EGRESS_DOMAIN || (e->proto != 0 && e->proto != IPPROTO_TCP) ||
      (e->port_min != 0 && (e->port_min > 443 || e->port_max < 443)))
    return false;
  if (!e->wildcard)
    return !wild && strcasecmp(name, e->domain) == 0;
  /* "*.x" covers the names below x, and "*.y" for y below x or y = x */
  return (hn > dn && name[hn - dn - 1] == '.' && strcasecmp(name + hn - dn, e->domain) == 0) ||
         (wild && strcasecmp(name, e->domain) == 0);
}

/* --secret NAME...: only these of the profile's secrets (none without one:
 * a sandbox gets a credential only when asked for it by name, never by a
 * path), each of whose hosts the allowlist (--allow, the profile's
 * egress.allow, or a profile that allows everything) must already let out:
 * a secret never widens egress.  The caller's own variables of those names
 * (selected or not) are not passed in: the profile says the agent gets no
 * real value of them (the selected ones hold their placeholder), nor are
 * the secrets' files visible. */
static int select_secrets(struct agent_profile *p, const char *pname, char **names, char **allow,
                          char ***files, struct error *err)
{
  struct profile_secret *kept = xmalloc0((p->n_secrets ? p->n_secrets : 1) * sizeof *kept);
  size_t n = 0;

  for (size_t i = 0; i < p->n_secrets; i++) {
    /* the root is the host's: a secret's file outside the hidden
     * directories would be readable by the agent (the monitor reads it
     * outside the sandbox); masked, by its path and by what it resolves to
     * (and its directory with it: hide_secret_dirs) */
    cleanup_free char *real = realpath(p->secrets[i].file, NULL);
    unsetenv(p->secrets[i].name);
    if (p->masked_paths == NULL)
      p->masked_paths = xmalloc0(sizeof(char *));
    strv_push(&p->masked_paths, p->secrets[i].file);
    strv_push(files, p->secrets[i].name);
    strv_push(files, p->secrets[i].file);
    if (real != NULL && !streq(real, p->secrets[i].file)) {
      strv_push(&p->masked_paths, real);
      strv_push(files, p->secrets[i].name);
      strv_push(files, real);
    }
  }
  for (char **s = names; s != NULL && *s != NULL; s++)
    if (profile_secret_find(p, *s) == NULL) {
      free(kept);
      return error_set(err, 0, "sandbox: --secret `%s`: the profile `%s` has no secret `%s`", *s,
                       pname, *s);
    }
  for (size_t i = 0; i < p->n_secrets; i++) {
    struct profile_secret *s = &p->secrets[i];
    if (!strv_contains(names, s->name)) {
      profile_secret_clear(s);
      continue;
    }
    for (size_t j = 0; p->egress.def != PROFILE_EGRESS_ALLOW && s->hosts[j] != NULL; j++) {
      bool ok = false;
      for (int l = 0; l < 2 && !ok; l++)
        for (char **a = l ? p->egress.allow : allow; a != NULL && *a != NULL && !ok; a++) {
          struct egress_entry e;
          struct error ignore = {0};
          ok = egress_entry_parse(*a, &e, &ignore) == 0 && entry_covers(&e, s->hosts[j]);
        }
      if (!ok) {
        int r = error_set(err, 0,
                          "sandbox: --secret `%s`: its host `%s` is not in the allowlist (give "
                          "--allow %s:443, or list it in the profile's egress.allow): a secret "
                          "never widens egress",
                          s->name, s->hosts[j], s->hosts[j]);
        for (size_t k = 0; k < n; k++)
          profile_secret_clear(&kept[k]);
        for (size_t k = i; k < p->n_secrets; k++)
          profile_secret_clear(&p->secrets[k]);
        free(kept);
        free(p->secrets);
        p->secrets = NULL;
        p->n_secrets = 0;
        return r;
      }
    }
    kept[n++] = *s;
    memset(s, 0, sizeof *s);
  }
  free(p->secrets);
  p->secrets = kept;
  p->n_secrets = n;
  return 0;
}

static void profile_freep(struct agent_profile **p)
{
  profile_free(*p);
}

static char *random_name(void)
{
  unsigned char b[4] = {0};
  cleanup_close int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);

  if (fd < 0 || read(fd, b, sizeof b) != (ssize_t)sizeof b) {
    unsigned v = (unsigned)getpid() ^ (unsigned)time(NULL);
    memcpy(b, &v, sizeof b);
  }
  return xfmt("sandbox-%02x%02x%02x%02x", b[0], b[1], b[2], b[3]);
}

/* agentrt's state root and data directory, as the sandbox would see them on
 * the host's root (other containers' state, workspaces' layers, the audit
 * trails): hidden (*ret: the ones not already in a hidden directory, /tmp,
 * /var/tmp or the home).  A workspace in one of them, or holding one, is
 * refused. */
static int hide_state_dirs(const struct global_opts *g, const char *ws, const char *home,
                           char ***ret, struct error *err)
{
  const char *const dirs[] = {g->root, g->data_dir};
  const char *const what[] = {"state root (--root)", "data directory"};

  for (size_t i = 0; i < 2; i++) {
    cleanup_free char *d = dirs[i] != NULL ? realpath(dirs[i], NULL) : NULL;
    const char *rest;
    bool covered = false;

    if (dirs[i] == NULL)
      continue;
    if (d == NULL) {
      /* not made yet: where it will be */
      cleanup_free char *cwd = getcwd(NULL, 0);
      cleanup_free char *abs =
          dirs[i][0] == '/' ? xstrdup(dirs[i]) : xfmt("%s/%s", cwd ? cwd : "/", dirs[i]);
      d = path_normalize(abs);
    }
    if (path_under(ws, d, &rest) || path_under(d, ws, &rest))
      return error_set(err, 0, "sandbox: the workspace `%s` %s agentrt's %s `%s`", ws,
                       path_under(d, ws, &rest) ? "holds" : "is in", what[i], d);
    for (size_t j = 0; hidden_dirs[j] != NULL && !covered; j++)
      covered = path_under(d, hidden_dirs[j], &rest);
    covered = covered || path_under(d, "/tmp", &rest) || path_under(d, "/var/tmp", &rest) ||
              path_under(d, home, &rest);
    if (!covered && !strv_contains(*ret, d))
      strv_push(ret, d);
  }
  return 0;
}

/* Does the sandbox show path (by its name and by what it resolves to) on
 * the host's root: not in a hidden or private directory, the home or the
 * workspace? */
static bool shown_path(const char *path, const char *ws, const char *home)
{
  cleanup_free char *real = realpath(path, NULL);
  const char *const names[] = {path, real};
  const char *rest;

  for (size_t k = 0; k < 2; k++) {
    const char *q = names[k];
    if (q == NULL)
      continue;
    for (size_t i = 0; hidden_dirs[i] != NULL; i++)
      if (path_under(q, hidden_dirs[i], &rest))
        return false;
    for (size_t i = 0; hidden_too[i] != NULL; i++)
      if (path_under(q, hidden_too[i], &rest))
        return false;
    if (path_under(q, home, &rest) || path_under(q, ws, &rest))
      return false;
  }
  return true;
}

/* A credential variable held back (env_credential) that names files or
 * directories (GOOGLE_APPLICATION_CREDENTIALS=/opt/keys/sa.json,
 * AWS_SHARED_CREDENTIALS_FILE, KUBECONFIG=a:b): the root is the host's, so
 * the files themselves were readable where the sandbox shows them; masked,
 * by their names and by what they resolve to (cred-file). */
/* A file of public certificates only, as a CA bundle is (AWS_CA_BUNDLE,
 * CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE name one, often the host's own
 * /etc/ssl/certs/ca-certificates.crt): PEM CERTIFICATE blocks, blank lines
 * and # comments, nothing else (no key), at most 8 MiB. */
#define CERT_BUNDLE_MAX (8u << 20)
static bool certificates_only(const char *path)
{
  cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  cleanup_free char *buf = NULL;
  struct stat st;
  size_t len = 0;
  bool in_block = false, certs = false;

  if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
      (uint64_t)st.st_size > CERT_BUNDLE_MAX)
    return false;
  buf = xmalloc((size_t)st.st_size + 1);
  while (len < (size_t)st.st_size) {
    ssize_t n = read(fd, buf + len, (size_t)st.st_size - len);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    len += (size_t)n;
  }
  buf[len] = '\0';
  for (char *line = buf, *next; line < buf + len; line = next) {
    size_t n;
    next = strchr(line, '\n');
    next = next ? next + 1 : buf + len;
    n = (size_t)(next - line);
    while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r' || line[n - 1] == ' '))
      n--;
    if (!in_block) {
      if (n == 0 || line[0] == '#')
        continue;
      if ((n == 27 && strncmp(line, "-----BEGIN CERTIFICATE-----", 27) == 0) ||
          (n == 35 && strncmp(line, "-----BEGIN TRUSTED CERTIFICATE-----", 35) == 0)) {
        in_block = true;
        continue;
      }
      return false; /* a key, or anything else */
    }
    if ((n == 25 && strncmp(line, "-----END CERTIFICATE-----", 25) == 0) ||
        (n == 33 && strncmp(line, "-----END TRUSTED CERTIFICATE-----", 33) == 0)) {
      in_block = false;
      certs = true;
      continue;
    }
    for (size_t i = 0; i < n; i++)
      if (!(isalnum((unsigned char)line[i]) || line[i] == '+' || line[i] == '/' || line[i] == '='))
        return false;
  }
  return certs && !in_block;
}

static void hide_credential_files(char *const *env_pass, const char *ws, const char *home,
                                  char ***hide)
{
  for (char **e = environ; e != NULL && *e != NULL; e++) {
    const char *eq = strchr(*e, '=');
    cleanup_free char *v = NULL;
    char *save = NULL;
    if (eq == NULL || env_named(env_pass, *e) || !env_credential(*e))
      continue;
    v = xstrdup(eq + 1);
    for (char *p = strtok_r(v, ":", &save); p != NULL; p = strtok_r(NULL, ":", &save)) {
      struct stat st;
      cleanup_free char *real = NULL;
      if (p[0] != '/' || stat(p, &st) < 0 || !shown_path(p, ws, home))
        continue;
      /* a CA bundle is public, and masked it emptied the trust store of
       * every TLS client inside (cred-file: a CA bundle) */
      if (S_ISREG(st.st_mode) && certificates_only(p))
        continue;
      real = realpath(p, NULL);
      if (!strv_contains(*hide, p))
        strv_push(hide, p);
      if (real != NULL && !strv_contains(*hide, real))
        strv_push(hide, real);
    }
  }
}

/* Does the directory hold nothing but secret files (files: pairs of a
 * secret's name and file), symlinks and dot names, and neither the
 * workspace nor the home? */
static bool secret_dir(const char *dir, char *const *files, const char *ws, const char *home)
{
  DIR *d;
  struct dirent *de;
  const char *rest;
  unsigned n = 0;
  bool ok = true;

  if (streq(dir, "/") || path_under(ws, dir, &rest) || path_under(home, dir, &rest) ||
      (d = opendir(dir)) == NULL)
    return false;
  while (ok && (de = readdir(d)) != NULL) {
    cleanup_free char *full = NULL, *real = NULL;
    struct stat st;

    if (de->d_name[0] == '.') /* ".", "..", a rotation's temporary file, ..data */
      continue;
    full = xfmt("%s/%s", dir, de->d_name);
    if (++n > 256 || lstat(full, &st) < 0) {
      ok = false;
      break;
    }
    if (S_ISLNK(st.st_mode))
      continue;
    real = realpath(full, NULL);
    ok = false;
    for (size_t i = 1; files[i - 1] != NULL && files[i] != NULL && !ok; i += 2)
      ok = streq(files[i], full) || (real != NULL && streq(files[i], real));
  }
  closedir(d);
  return ok;
}

/* A secret's file is masked by a mount over its path, and a mount goes with
 * the file it is on: a file the host renames over it while the sandbox runs
 * (a rotation: a new token written and moved in place, as Vault agent's
 * sink does, or Kubernetes' ..data swapped) was shown, with the new value
 * (escape: a secret's file replaced on the host).  Its directory, as named
 * and as resolved, is hidden whole where it holds nothing else (secret
 * files, symlinks and dot names: what a rotation leaves there); elsewhere
 * only the file is masked, and a warning says so.  Files the sandbox does
 * not show (the home, the workspace's overlay, the hidden directories) are
 * left alone. */
static void hide_secret_dirs(char *const *files, const char *ws, const char *home, char ***hide)
{
  for (size_t i = 1; files != NULL && files[i - 1] != NULL && files[i] != NULL; i += 2) {
    const char *f = files[i], *slash = strrchr(f, '/'), *rest;
    cleanup_free char *dir = NULL;
    bool covered = false;

    if (slash == NULL || !shown_path(f, ws, home))
      continue;
    dir = slash == f ? xstrdup("/") : xstrndup(f, (size_t)(slash - f));
    for (char **h = *hide; h != NULL && *h != NULL && !covered; h++)
      covered = path_under(dir, *h, &rest);
    if (covered)
      continue;
    if (secret_dir(dir, files, ws, home))
      strv_push(hide, dir);
    else
      log_warning("sandbox: the secret `%s`'s file `%s` is masked by its path only (`%s` holds "
                  "other files): a file the host renames over it while the sandbox runs would "
                  "be shown; keep secret files in a directory of their own",
                  files[i - 1], f, dir);
  }
}

/* At most this many of the host's sockets are masked (a bind each). */
#define HOST_SOCKETS_MAX 512

/* The host's bound UNIX sockets at a path the sandbox shows (the host's
 * root, read-only; connect(2) needs no write): masked.  A daemon's socket
 * outside /run (LXD's in /var/snap, Incus's in /var/lib) that the caller may
 * reach, by its supplementary groups too (a user namespace keeps them), was
 * the agent's to connect to (host-socket).  Listed from /proc/net/unix of
 * the host's network namespace, where they are bound: one bound later is not
 * masked. */
static void hide_host_sockets(const char *ws, const char *home, bool ws_bound, char ***hide)
{
  cleanup_free char *all = NULL;
  struct error e = {0};
  char *save = NULL;
  size_t n = 0, more = 0;

  if (procfs_read_all("self/net/unix", &all, &e) < 0)
    return;
  for (char *line = strtok_r(all, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
    char *p = line, *path;
    bool shown;
    /* Num RefCount Protocol Flags Type St Inode Path */
    for (int field = 0; field < 7 && p != NULL; field++) {
      p += strspn(p, " ");
      p = strchr(p, ' ');
    }
    if (p == NULL)
      continue;
    path = p + strspn(p, " ");
    path[strcspn(path, "\n")] = '\0';
    if (path[0] != '/') /* abstract (@...) or unnamed: the netns is the sandbox's own */
      continue;
    /* the workspace's own: the overlay's socket is not the host's inode (a
     * connect is refused), but bound (--write-through) it is, and the
     * program behind it (a tmux -S or ssh ControlPath socket in the project)
     * answered the agent (ws-socket) */
    shown = shown_path(path, ws, home);
    if (!shown && ws_bound) {
      cleanup_free char *real = realpath(path, NULL);
      const char *rest;
      shown = path_under(path, ws, &rest) || (real != NULL && path_under(real, ws, &rest));
    }
    /* the name service's own (SSSD): users and groups must still resolve */
    if (!shown || strv_contains(*hide, path) || streq(path, "/var/lib/sss/pipes/nss"))
      continue;
    if (n >= HOST_SOCKETS_MAX) {
      more++;
      continue;
    }
    strv_push(hide, path);
    n++;
  }
  if (more > 0)
    log_warning("sandbox: %zu more of the host's UNIX sockets are not masked (at most %d)", more,
                HOST_SOCKETS_MAX);
}

/* A sandbox of the host's root (real root, no user namespace): the agent is
 * uid 0 there, without capabilities, and uid 0 owns what only root may read,
 * so the modes that keep it from every user (/etc/shadow, an SSH host key,
 * Docker's key.json, /var/lib/docker 0710) kept nothing from the agent.
 * Every file others may not read, and every directory others may not list
 * or enter, that is root's (by owner or group: another owner's 0600 file is
 * closed to the agent already) is masked, a directory whole and not walked,
 * in the places a host keeps its own data: /etc whole, /var three levels
 * deep (cloud-init's and the kubelet's data further), /opt and /srv four,
 * /usr/local/etc, /boot and / itself.  Bounded in what is looked at and in
 * what is masked (a mount each), with a warning past either (root-only).
 * ~2 ms here (1,700 entries looked at, 30 masked). */
#define ROOT_ONLY_LOOK_MAX 20000
#define ROOT_ONLY_MAX 512

struct root_only {
  const char *ws, *home;
  char ***hide;
  size_t looked, masked, more;
  bool cut;
};

static void root_only_add(struct root_only *r, const char *path)
{
  if (!shown_path(path, r->ws, r->home) || strv_contains(*r->hide, path))
    return;
  if (r->masked >= ROOT_ONLY_MAX) {
    r->more++;
    return;
  }
  strv_push(r->hide, path);
  r->masked++;
}

/* Is st closed to others but open to root's uid or group? */
static bool root_only(const struct stat *st)
{
  mode_t others = S_ISDIR(st->st_mode) ? S_IROTH | S_IXOTH : S_IROTH;

  return (st->st_mode & others) != others && (st->st_uid == 0 || st->st_gid == 0);
}

static void root_only_walk(struct root_only *r, int fd, const char *path, unsigned depth)
{
  DIR *d = fdopendir(fd);
  struct dirent *e;

  if (d == NULL) {
    close(fd);
    return;
  }
  while ((e = readdir(d)) != NULL) {
    cleanup_free char *child = NULL;
    struct stat st;
    int sub;
    if (streq(e->d_name, ".") || streq(e->d_name, ".."))
      continue;
    if (++r->looked > ROOT_ONLY_LOOK_MAX) {
      r->cut = true;
      break;
    }
    if ((e->d_type != DT_DIR && e->d_type != DT_REG && e->d_type != DT_UNKNOWN) ||
        fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
        (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)))
      continue;
    child = streq(path, "/") ? xfmt("/%s", e->d_name) : xfmt("%s/%s", path, e->d_name);
    /* the sandbox's own, or hidden anyway */
    if (S_ISDIR(st.st_mode) &&
        (strv_contains((char **)hidden_dirs, child) || strv_contains((char **)hidden_too, child)))
      continue;
    if (root_only(&st)) {
      root_only_add(r, child);
      continue;
    }
    if (!S_ISDIR(st.st_mode) || depth == 0)
      continue;
    sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (sub >= 0)
      root_only_walk(r, sub, child, depth - 1);
  }
  closedir(d);
}

static void hide_root_only(const char *ws, const char *home, char ***hide)
{
  static const struct {
    const char *dir;
    unsigned depth; /* levels below the first walked */
  } places[] = {{"/etc", 16}, {"/var", 2}, {"/var/lib/cloud", 4}, {"/var/lib/kubelet", 3},
                {"/opt", 3},  {"/srv", 3}, {"/usr/local/etc", 3}, {"/boot", 0},
                {"/", 0}};
  struct root_only r = {.ws = ws, .home = home, .hide = hide};

  for (size_t i = 0; i < ARRAY_SIZE(places) && !r.cut; i++) {
    int fd = open(places[i].dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0)
      root_only_walk(&r, fd, places[i].dir, places[i].depth);
  }
  if (r.cut || r.more > 0)
    log_warning("sandbox: as root, the files only root may read are masked, but %s (root-only)",
                r.cut ? "not all were looked at (more than 20000 files in /etc, /var, /opt, /srv)"
                      : "more than 512 of them are not");
}

/* A line at exit for what the profile refused the program: a program says
 * only "ENOTFOUND", "connection refused" or "No permission to enable
 * task-clock event", never why (sandbox-refused-names). */
static void print_refused(const struct global_opts *g, const char *name, bool network)
{
  cleanup_free char *dir = audit_trail_dir(g->store, NULL, name);
  struct refusals r = {0};
  char list[1024];

  if (refusals_read(dir, &r) < 0)
    goto out;
  if (network && r.net.n > 0) {
    refused_list(&r.net, list, sizeof list);
    fprintf(stderr,
            "agentrt: sandbox `%s`: the egress allowlist refused %s (allow one with --allow "
            "ENTRY; agentrt audit %s --summary)\n",
            name, list, name);
  }
  if (r.calls.n > 0) {
    refused_list(&r.calls, list, sizeof list);
    fprintf(stderr,
            "agentrt: sandbox `%s`: the profile's seccomp filter refused %s (a profile without "
            "the call in seccomp.deny allows it: --profile FILE)\n",
            name, list);
  }
out:
  refusals_free(&r);
}

/* The one line at exit: what changed and how to review it. */
static void print_summary(const struct global_opts *g, const char *name, const char *ws,
                          bool write_through, bool clean)
{
  if (clean) {
    fprintf(stderr, "agentrt: sandbox `%s` ended; no changes to %s (trail: agentrt audit %s)\n",
            name, ws, name);
    return;
  }
  if (write_through) {
    fprintf(stderr,
            "agentrt: sandbox `%s` ended; workspace %s was written through; trail: "
            "agentrt audit %s\n",
            name, ws, name);
    return;
  }
  fprintf(stderr,
          "agentrt: sandbox `%s` ended; its changes to %s wait for review: agentrt "
          "workspace %s diff|commit|discard (trail: agentrt audit %s)\n",
          name, ws, name, name);
  (void)g;
}

/* Held by a live `agentrt sandbox --name NAME` for its whole run:
 * <root>/.sandbox-NAME.lock, locked exclusively (the kernel drops the lock
 * with the last holder, killed or not).  Taken, no other agentrt sandbox of
 * that name is alive, so a stopped sandbox NAME with no exit status kept
 * (not --keep) is one whose agentrt sandbox was killed: it is deleted as
 * `delete` would (its sub-agents, its cgroup, its state; its workspace stays
 * for review), and NAME is free again (sandbox-dead-name).  A live holder, a
 * container that is not a sandbox, one still running or kept: left alone.
 * Returns the lock's fd (close-on-exec, kept until we exit), or -1. */
static int sandbox_name_lock(const struct global_opts *g, const char *name)
{
  cleanup_free char *path = NULL;
  struct container *c = NULL;
  struct error e = {0};
  bool sandbox = false;
  int fd = -1;

  if (state_root_prepare(g->root, &e) < 0)
    return -1;
  path = xfmt("%s/.sandbox-%s.lock", g->root, name);
  for (int tries = 0; tries < 8; tries++) {
    struct stat a, b;
    fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
      return -1;
    if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
      close(fd);
      return -1; /* a live agentrt sandbox of that name: create will say so */
    }
    /* the file we locked is still the one at the path (not one a sandbox
     * ending just now unlinked) */
    if (fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_ino == b.st_ino && a.st_dev == b.st_dev)
      break;
    close(fd);
    fd = -1;
  }
  if (fd < 0)
    return -1;
  if (container_load(g, name, LOCK_EX, &c, &e) < 0)
    return fd;
  if (!c->state->has_exit_status && container_refresh_status(c) == STATUS_STOPPED &&
      container_load_config(c, &e) == 0 && c->config->process != NULL)
    for (char **v = c->config->process->env; v != NULL && *v != NULL && !sandbox; v++)
      sandbox = streq(*v, "AGENTRT_SANDBOX=1");
  if (sandbox) {
    log_warning("sandbox `%s`: its agentrt sandbox was killed: deleting what it left", name);
    subagent_reap_children("/proc/self/exe", g->root, g->data_dir, c->id);
    if (container_destroy(c, g, &e) < 0)
      log_warning("sandbox `%s`: %s", name, e.msg);
  }
  container_free(c);
  return fd;
}

int cmd_sandbox(const struct global_opts *g0, int argc, char **argv, struct error *err)
{
  struct opt_iter it = {argc, argv, 1};
  struct sandbox_opts o = {0};
  struct global_opts g = *g0;
  cleanup_free char *name = NULL;
  cleanup_free char *ws = NULL;
  cleanup_free char *home = NULL;
  cleanup_free char *dir = NULL;
  cleanup_free char *cfg_json = NULL;
  size_t cfg_len = 0;
  cleanup_free char *shim = NULL, *rootfs_real = NULL, *self = NULL;
  cleanup_close int shim_fd = -1;
  cleanup_strv char **env = NULL;
  cleanup_strv char **env_pass = NULL;
  cleanup_strv char **hide = NULL;
  cleanup_strv char **dots = NULL;
  cleanup_strv char **allow = NULL;
  cleanup_strv char **dns = NULL;
  cleanup_strv char **secrets = NULL;
  cleanup_strv char **secret_files = NULL; /* a secret's name, then a file of it */
  struct home_binds binds = {0};
  cleanup_free char *user_cgroup_path = NULL;
  bool clean = false; /* the run changed nothing: its workspace is gone */
  bool warned_limits = false;
  const char *c;
  __attribute__((cleanup(profile_freep))) struct agent_profile *prof = NULL;
  const char *val;
  int id, n, code;

  while ((n = opt_next(&it, sandbox_specs, &id, &val, "sandbox", err)) == 1) {
    switch (id) {
    case S_NAME:
      o.name = val;
      break;
    case S_PROFILE:
      o.profile = val;
      break;
    case S_WORKSPACE:
      o.workspace = val;
      break;
    case S_WRITE_THROUGH:
      o.write_through = true;
      break;
    case S_ROOTFS:
      o.rootfs = val;
      break;
    case S_MEMORY:
      o.memory = val;
      break;
    case S_PIDS:
      o.pids = val;
      break;
    case S_CPUS:
      o.cpus = val;
      break;
    case S_KEEP:
      o.keep = true;
      break;
    case S_ENV:
      if (strchr(val, '=') == NULL && env_name_ok(val)) {
        strv_push(&env_pass, val);
        break;
      }
      if (strchr(val, '=') == NULL || val[0] == '=')
        return error_set(err, 0, "sandbox: --env: expected KEY=VALUE or NAME, got `%s`", val);
      strv_push(&env, val);
      break;
    case S_DOTFILE: {
      cleanup_free char *rel = profile_home_normalize(val);
      if (rel == NULL)
        return error_set(err, 0,
                         "sandbox: --dotfile: `%s`: a path relative to the home, "
                         "without `..`",
                         val);
      strv_push(&dots, rel);
      break;
    }
    case S_ALLOW:
      strv_push(&allow, val);
      break;
    case S_DNS:
      strv_push(&dns, val);
      break;
    case S_SECRET:
      if (!strv_contains(secrets, val))
        strv_push(&secrets, val);
      break;
    case S_HELP:
      fputs(sandbox_usage, stdout);
      return 0;
    }
  }
  if (n < 0)
    return -1;
  if (it.i >= argc)
    return error_set(err, 0, "sandbox: expected a command (agentrt sandbox [OPTIONS] -- CMD)");
  o.cmd = argv + it.i;
  o.env = env;
  o.env_pass = env_pass;
  o.allow = allow;
  o.dns = dns;
  o.dotfiles = dots;
  if (profile_load(o.profile ? o.profile : "agent", &prof, err) < 0)
    return error_prefix(err, "sandbox: --profile");
  if (select_secrets(prof, o.profile ? o.profile : "agent", secrets, allow, &secret_files, err) < 0)
    return -1;
  /* A network (slirp4netns) only for something to reach: --allow, the
   * profile's allowlist, or a profile that allows everything.  Without one
   * the sandbox has loopback only and no egress policy to keep. */
  o.network = allow != NULL || prof->n_secrets > 0 || prof->egress.def == PROFILE_EGRESS_ALLOW ||
              (prof->egress.def == PROFILE_EGRESS_DENY && strv_len(prof->egress.allow) > 0);
  if (o.network) {
    if (!have_slirp())
      return error_set(
          err, 0,
          "sandbox: a network (--allow, --secret, or the profile's egress.allow) needs "
          "slirp4netns (Debian package `slirp4netns`) on PATH");
  }
  /* a denied --dotfile is refused by its name first (what it resolves to is
   * checked once it is opened) */
  for (char **d = dots; d != NULL && *d != NULL; d++) {
    const char *why = profile_home_denied(*d, prof->sandbox.home_deny);
    if (why != NULL)
      return error_set(err, 0,
                       "sandbox: --dotfile `%s`: on the home's deny list (`%s`): credentials, "
                       "browser profiles and shell histories are never bound",
                       *d, why);
  }
  /* sandbox-init as pid 1 (its parent-death signal ends the sandbox with
   * us), also in a --rootfs image when this binary is static: run there as
   * pid 1 directly, the program went on after a SIGKILL of agentrt sandbox
   * (sandbox-orphan-rootfs) */
  if (o.rootfs == NULL || self_is_static()) {
    o.shim = shim = realpath("/proc/self/exe", NULL);
    o.shim_fd = shim_fd = open("/proc/self/exe", O_PATH | O_CLOEXEC);
    if (shim == NULL || shim_fd < 0)
      return error_errno(err, "sandbox: this binary (/proc/self/exe)");
  }

  /* the network hook runs in our namespaces, from the host's root, also for a
   * --rootfs image (sandbox-rootfs-allow) */
  if (o.network && (o.self = self = realpath("/proc/self/exe", NULL)) == NULL)
    return error_errno(err, "sandbox: this binary (/proc/self/exe)");

  name = o.name ? xstrdup(o.name) : random_name();
  if (validate_container_id(name, err) < 0)
    return error_prefix(err, "sandbox: --name");
  {
    char *cwd = o.workspace ? realpath(o.workspace, NULL) : getcwd(NULL, 0);
    if (cwd == NULL)
      return error_errno(err, "sandbox: workspace `%s`", o.workspace ? o.workspace : ".");
    ws = cwd;
  }
  if (!is_dir(ws))
    return error_set(err, 0, "sandbox: workspace `%s`: not a directory", ws);
  if (streq(ws, "/") || streq(ws, "/tmp") || streq(ws, "/var/tmp"))
    return error_set(err, 0,
                     "sandbox: the workspace cannot be `%s` (run it from a project "
                     "directory, or give --workspace DIR)",
                     ws);
  if (o.rootfs != NULL && !is_dir(o.rootfs))
    return error_set(err, 0, "sandbox: --rootfs `%s`: not a directory", o.rootfs);
  /* its resolved path: create refuses a root.path through a symlink */
  if (o.rootfs != NULL) {
    rootfs_real = realpath(o.rootfs, NULL);
    if (rootfs_real == NULL)
      return error_errno(err, "sandbox: --rootfs `%s`", o.rootfs);
    o.rootfs = rootfs_real;
  }
  {
    const char *h = getenv("HOME");
    home = xstrdup(h && h[0] == '/' ? h : (getuid() == 0 ? "/root" : "/nonexistent"));
    while (strlen(home) > 1 && home[strlen(home) - 1] == '/')
      home[strlen(home) - 1] = '\0';
  }
  if (streq(home, "/"))
    return error_set(err, 0, "sandbox: HOME=/ cannot be hidden: set HOME");
  {
    /* the workspace is shown whole: not the home, nor above it, nor in
     * what the home's deny list names; by the home's name and by what it
     * resolves to (the workspace is a resolved path: under a HOME that is
     * a symlink, the home itself or its .ssh passed, keys and all:
     * home-symlink-workspace) */
    cleanup_free char *home_real = realpath(home, NULL);
    const char *const homes[] = {home, home_real};
    for (size_t i = 0; i < 2; i++) {
      const char *rest, *why;
      if (homes[i] == NULL)
        continue;
      if (path_under(homes[i], ws, &rest))
        return error_set(err, 0,
                         "sandbox: the workspace `%s` %s the home, whose keys and "
                         "credentials the sandbox hides (run it from a project directory, or "
                         "give --workspace DIR)",
                         ws, *rest == '\0' ? "is" : "holds");
      if (path_under(ws, homes[i], &rest) &&
          (why = profile_home_denied(rest, prof->sandbox.home_deny)))
        return error_set(err, 0, "sandbox: the workspace `%s` is on the home's deny list (`%s`)",
                         ws, why);
    }
  }

  if (hide_state_dirs(&g, ws, home, &hide, err) < 0)
    return -1;
  hide_secret_dirs(secret_files, ws, home, &hide);
  hide_host_sockets(ws, home, o.write_through, &hide);
  hide_credential_files(env_pass, ws, home, &hide);
  if (geteuid() == 0 && !g.in_userns && o.rootfs == NULL)
    hide_root_only(ws, home, &hide);
  o.hide = hide;

  /* A user's limits: in a cgroup below the user's delegated one, else
   * dropped, loudly (before the user namespace: the cgroup files are the
   * host user's). */
  if (geteuid() != 0 && g.in_userns)
    proc_events_inherit();
  else
    unsetenv(PROC_FD_ENV);
  if (geteuid() != 0 && g.in_userns && (c = getenv("AGENTRT_SANDBOX_CGROUP")) != NULL) {
    /* executed again in our user namespace: what was decided before */
    if (*c != '\0')
      o.cgroup = user_cgroup_path = xstrdup(c);
    else
      o.memory = o.pids = o.cpus = NULL;
    unsetenv("AGENTRT_SANDBOX_CGROUP");
  } else if (needs_userns() && (o.memory || o.pids || o.cpus)) {
    /* the values are checked all the same */
    cleanup_free char *scratch = NULL;
    cleanup_free char *why = NULL;
    size_t scratch_len = 0;
    struct sandbox_opts lim = {.memory = o.memory, .pids = o.pids, .cpus = o.cpus, .cmd = o.cmd};
    if (build_config(&lim, ws, home, &scratch, &scratch_len, err) < 0)
      return -1;
    o.cgroup = user_cgroup_path = user_cgroup(name, &o, &why);
    if (o.cgroup == NULL) {
      log_warning("sandbox: --memory, --pids and --cpus are NOT enforced: %s", why);
      o.memory = o.pids = o.cpus = NULL;
      warned_limits = true;
    }
  }
  if (needs_userns()) {
    bool limits_asked = user_cgroup_path != NULL || warned_limits;
    proc_events_subscribe(prof);
    if (enter_userns(err) < 0)
      return -1;
    g.in_userns = true;
    /* With a network: again from the start, inside.  A process's memory
     * belongs to the user namespace it was executed in, and only from there
     * can the monitor open the /proc/PID/ns/net of the (non-dumpable)
     * container init to install the egress rules.  We are not root in there
     * (we kept our uid), so the namespace's capabilities go through the exec
     * as ambient ones; the container's process gets only what its config
     * says.  Without a network nothing opens the init's namespaces (file
     * records need a fanotify mark a user cannot have anyway), and the exec
     * is saved. */
    if (o.network) {
      if (keep_caps_over_exec(err) < 0)
        return -1;
      if (limits_asked)
        setenv("AGENTRT_SANDBOX_CGROUP", o.cgroup ? o.cgroup : "", 1);
      if (monitor_proc_adopted() >= 0 && fcntl(monitor_proc_adopted(), F_SETFD, 0) == 0) {
        char num[16];
        snprintf(num, sizeof num, "%d", monitor_proc_adopted());
        setenv(PROC_FD_ENV, num, 1);
      }
      execv("/proc/self/exe", g.argv);
      return error_errno(err, "sandbox: re-execute agentrt in its user namespace");
    }
  }

  /* No bundle on disk: the config and the profile go to create in memory,
   * the workspace stands for the bundle directory (nothing is written
   * there; the state directory keeps its own copy of the config). */
  if (home_collect(&binds, home, prof, dots, err) < 0)
    goto fail;
  o.binds = &binds;
  if (build_config(&o, ws, home, &cfg_json, &cfg_len, err) < 0)
    goto fail;
  sandbox_profile(&o, prof, ws);
  /* the state records the base profile's name (exec applies its process
   * rules, which the sandbox does not change) */
  g.profile = o.profile ? o.profile : "agent";
  {
    struct create_opts co = {
        .id = name,
        .bundle = ws,
        .config_json = cfg_json,
        .config_len = cfg_len,
        .profile = prof,
        /* no sandbox-init in a --rootfs image of a dynamic build: the
         * program itself is pid 1 (sandbox-orphan-rootfs) */
        .pdeathsig = o.shim == NULL,
    };
    struct tty_saved tty;
    /* without a pty of its own the program holds the caller's terminal:
     * whatever it leaves it in (raw, non-blocking), it gets back as it was */
    int lock = sandbox_name_lock(&g, name);
    tty_save(&tty);
    code = run_foreground(&g, &co, o.keep, err);
    tty_restore(&tty);
    /* a workspace with nothing in it goes (under the name's lock: no
     * sandbox of that name uses it now): every run left one (a 1 GiB sparse
     * image as root) and said its changes waited for review
     * (sandbox-no-changes) */
    if (code >= 0 && !o.keep && !o.write_through) {
      struct workspace *w = NULL;
      struct error e = {0};
      if (workspace_load(g.store, name, &w, &e) == 0) {
        clean = !workspace_pending(w);
        workspace_free(w);
        if (clean && workspace_purge(g.store, name, &e) < 0)
          clean = false;
      }
    }
    if (lock >= 0) {
      /* ours ended as it should: nothing left for the next to look at */
      if (!o.keep) {
        cleanup_free char *path = xfmt("%s/.sandbox-%s.lock", g.root, name);
        unlink(path);
      }
      close(lock);
    }
  }
  binds_free(&binds);
  profile_free(take_ptr(prof));
  if (code < 0)
    return error_prefix(err, "sandbox `%s`", name);
  print_refused(&g, name, o.network);
  print_summary(&g, name, ws, o.write_through, clean);
  return code;

fail:
  binds_free(&binds);
  profile_free(take_ptr(prof));
  return error_prefix(err, "sandbox `%s`", name);
}

/* `agentrt sandbox-init -- CMD`: the sandbox's pid 1 (on the host's root the
 * sandbox runs this binary there).  The kernel gives a pid 1 no default signal
 * actions, so an agent CLI run as pid 1 would ignore SIGTERM and SIGINT; here
 * CMD runs as pid 2, signals sent to pid 1 by a process (the runtime
 * forwarding `kill`, or `agentrt kill`) go on to it, the terminal's own
 * signals reach its process group directly, orphans are reaped, and the exit
 * status is CMD's (128+N when a signal N ended it). */
int cmd_sandbox_init(const struct global_opts *g, int argc, char **argv, struct error *err)
{
  sigset_t all, old;
  pid_t child;
  int i = 1, status = 0;

  (void)g;
  if (i < argc && streq(argv[i], "--"))
    i++;
  if (i >= argc)
    return error_set(err, 0, "sandbox-init: expected a command");
  /* The sandbox ends with the agentrt sandbox that runs it (our parent: it
   * waits for us, relays signals and deletes the sandbox): killed (SIGKILL,
   * a harness's timeout, the OOM killer), it left the agent running with no
   * one to end it (sandbox-orphan).  Set here, after the last change of our
   * credentials, which clears it; the kernel's SIGKILL to a pid 1 ends its
   * namespace. */
  if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
    return error_errno(err, "sandbox-init: PR_SET_PDEATHSIG");
  sigfillset(&all);
  sigprocmask(SIG_SETMASK, &all, &old);
  child = fork();
  if (child < 0)
    return error_errno(err, "sandbox-init: fork");
  if (child == 0) {
    sigprocmask(SIG_SETMASK, &old, NULL);
    execvp(argv[i], argv + i);
    fprintf(stderr, "agentrt: sandbox: exec `%s`: %s\n", argv[i], strerror(errno));
    _exit(errno == ENOENT ? 127 : 126);
  }
  for (;;) {
    siginfo_t si;
    int sig = sigwaitinfo(&all, &si);

    if (sig < 0)
      continue;
    if (sig == SIGCHLD) {
      pid_t p;
      int st;
      while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
        if (p != child)
          continue;
        status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        fflush(NULL);
        _exit(status); /* nothing of ours to run at exit (nor a sanitizer's leak check) */
      }
      continue;
    }
    /* From a process (SI_USER, SI_QUEUE, SI_TKILL): pass it on.  From the
     * kernel (the terminal's ^C, ^\\, SIGWINCH) the process group has it. */
    if (si.si_code <= 0 && sig != SIGKILL && sig != SIGSTOP)
      kill(child, sig);
  }
}

/* The init's pid from the OCI state a hook gets on stdin, and the start time of a sub-agent's
 * parent's init (io.agentrt.parent-start, monitor/subagents.c; 0 when none). */
static pid_t state_pid(uint64_t *ret_parent_start, struct error *err)
{
  char buf[65536];
  size_t len = 0;
  ssize_t n;
  const char *p;
  long v;
  struct oci_state *st = NULL;
  struct error ignore = {0};

  while (len < sizeof buf - 1 && (n = read(STDIN_FILENO, buf + len, sizeof buf - 1 - len)) != 0) {
    if (n < 0) {
      if (errno == EINTR)
        continue;
      error_errno(err, "sandbox-net: read the state");
      return -1;
    }
    len += (size_t)n;
  }
  buf[len] = '\0';
  *ret_parent_start = 0;
  if (oci_state_parse(buf, len, "the hook's state", &st, &ignore) == 0) {
    for (size_t i = 0; i < st->n_annotations; i++)
      if (streq(st->annotations[i].key, "io.agentrt.parent-start") &&
          (parse_u64(st->annotations[i].value, ret_parent_start) < 0 || *ret_parent_start == 0))
        *ret_parent_start = UINT64_MAX; /* matches no process */
    oci_state_free(st);
  }
  p = strstr(buf, "\"pid\"");
  if (p == NULL || (p = strchr(p, ':')) == NULL) {
    error_set(err, 0, "sandbox-net: no pid in the state");
    return -1;
  }
  v = strtol(p + 1, NULL, 10);
  if (v <= 0 || v > 4194304) {
    error_set(err, 0, "sandbox-net: bad pid in the state");
    return -1;
  }
  return (pid_t)v;
}

/* The babysitter: starts slirp4netns for the init's network namespace, says
 * when it is up, and ends it when the init is gone. */
static void babysit(pid_t init, int up, int netns_fd, bool host_loopback)
{
  int ready[2];
  pid_t slirp;
  char pidstr[16], fdarg[32], c;
  int pfd = (int)syscall(SYS_pidfd_open, init, 0);
  int null = open("/dev/null", O_RDWR | O_CLOEXEC);

  if (pfd < 0 || null < 0 || pipe2(ready, O_CLOEXEC) < 0)
    _exit(1);
  setsid();
  slirp = fork();
  if (slirp < 0)
    _exit(1);
  if (slirp == 0) {
    int wfd = dup(ready[1]); /* without O_CLOEXEC: slirp4netns writes it */
    if (netns_fd >= 0) {
      /* a sub-agent's: slirp4netns connects out from its parent's namespace,
       * where the parent's table decides (monitor/subagents.h) */
      if (setns(netns_fd, CLONE_NEWNET) < 0)
        _exit(126);
      close(netns_fd);
      /* the child's connections must be told from the parent's own there:
       * by this group, the parent's proxy puts none of the parent's secrets
       * into them (common/subproto.h); no network rather than the parent's
       * secrets */
      if ((setgroups(0, NULL) < 0 && errno != EPERM) ||
          setresgid(SUBPROTO_NET_GID, SUBPROTO_NET_GID, SUBPROTO_NET_GID) < 0)
        _exit(126);
    }
    dup2(null, STDIN_FILENO);
    dup2(null, STDOUT_FILENO);
    dup2(null, STDERR_FILENO);
    snprintf(pidstr, sizeof pidstr, "%d", (int)init);
    snprintf(fdarg, sizeof fdarg, "--ready-fd=%d", wfd);
    /* 10.0.2.2 would be the host's loopback; --disable-host-loopback refuses it */
    if (host_loopback) /* 10.0.2.2: the parent's loopback, its resolver */
      execlp("slirp4netns", "slirp4netns", "--configure", "--mtu=65520", fdarg, pidstr, "tap0",
             (char *)NULL);
    else
      execlp("slirp4netns", "slirp4netns", "--configure", "--mtu=65520", "--disable-host-loopback",
             fdarg, pidstr, "tap0", (char *)NULL);
    _exit(127);
  }
  close(ready[1]);
  if (read(ready[0], &c, 1) != 1) {
    kill(slirp, SIGKILL);
    waitpid(slirp, NULL, 0);
    _exit(1);
  }
  if (write(up, "1", 1) != 1)
    _exit(1);
  close(up);
  dup2(null, STDIN_FILENO);
  dup2(null, STDOUT_FILENO);
  dup2(null, STDERR_FILENO);
  for (;;) {
    struct pollfd p[1] = {{.fd = pfd, .events = POLLIN}};
    int st;
    if (poll(p, 1, 1000) > 0)
      break; /* the init is gone */
    if (waitpid(slirp, &st, WNOHANG) == slirp)
      _exit(0);
  }
  kill(slirp, SIGTERM);
  waitpid(slirp, NULL, 0);
  _exit(0);
}

/* `agentrt sandbox-net`: the sandbox's createRuntime hook when it has egress
 * entries: user-mode networking (slirp4netns) for its network namespace,
 * from this namespace, with the host's loopback refused; the profile's
 * nftables rules inside decide what may leave. */
int cmd_sandbox_net(const struct global_opts *g, int argc, char **argv, struct error *err)
{
  int up[2];
  pid_t init, sitter;
  char c;
  struct pollfd p;

  const char *netns = NULL;
  bool host_loopback = false;
  uint64_t parent_start;
  cleanup_close int netns_fd = -1;

  (void)g;
  for (int i = 1; i < argc; i++) {
    if (streq(argv[i], "--netns") && i + 1 < argc && argv[i + 1][0] == '/')
      netns = argv[++i];
    else if (streq(argv[i], "--host-loopback"))
      host_loopback = true;
    else
      return error_set(err, 0, "sandbox-net: unknown argument `%s`", argv[i]);
  }
  if ((init = state_pid(&parent_start, err)) < 0)
    return -1;
  /* pid-reuse-subagent-slirp: a sub-agent's --netns is /proc/PID/ns/net, PID its parent's init;
   * once that init has died the pid may be a host process's (the host's namespace): opened
   * through a /proc/PID handle checked against the parent's start time */
  if (netns != NULL && parent_start != 0 &&
      (netns_fd = proc_open_ns_path_identified(netns, parent_start, err)) == -1)
    return error_prefix(err, "sandbox-net: --netns `%s`", netns);
  if (netns != NULL && netns_fd < 0 && (netns_fd = open(netns, O_RDONLY | O_CLOEXEC)) < 0)
    return error_errno(err, "sandbox-net: --netns `%s`", netns);
  if (pipe2(up, O_CLOEXEC) < 0)
    return error_errno(err, "sandbox-net: pipe");
  sitter = fork();
  if (sitter < 0)
    return error_errno(err, "sandbox-net: fork");
  if (sitter == 0) {
    close(up[0]);
    /* detached from the hook: the runtime waits for the hook, not for us */
    if (fork() != 0)
      _exit(0);
    babysit(init, up[1], netns_fd, host_loopback);
  }
  close(up[1]);
  waitpid(sitter, NULL, 0);
  p = (struct pollfd){.fd = up[0], .events = POLLIN};
  if (poll(&p, 1, 15000) <= 0 || read(up[0], &c, 1) != 1)
    return error_set(err, 0, "sandbox-net: slirp4netns did not bring the network up");
  return 0;
}
