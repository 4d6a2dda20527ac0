/* rootfs-driver.c - test driver for the container filesystem setup
 * (container/setup.h) without the rest of agentrt.
 *
 * It builds a struct oci_config by hand from its flags, unshares the
 * namespaces (always mount + pid, the rest as asked), forks the container
 * init and calls sysctl_apply(), rootfs_setup(), rootfs_pivot() and
 * rootfs_finalize() in that order, then execs CMD inside the new root.
 * Run it under `unshare -m --propagation private` as a second safety net.
 *
 *   rootfs-driver [flags] ROOTFS -- CMD [ARG...]
 *     -D                     runc's default mounts, masked and readonly paths
 *     -m DEST:TYPE:SRC:OPTS  a config mount (OPTS comma separated, SRC may be empty)
 *     -d PATH:T:MAJ:MIN:MODE a linux.devices entry
 *     -M PATH / -R PATH      masked / readonly path
 *     -s KEY=VALUE           linux.sysctl
 *     -n NS                  a namespace in the config (net, ipc, uts, cgroup), also unshared
 *     -p PROP                linux.rootfsPropagation
 *     -r -t -P -U            root.readonly, process.terminal, --no-pivot, new user namespace
 *     -b BUNDLE              bundle directory (relative bind sources), default: cwd
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/util.h"
#include "container/setup.h"
#include "os/procfs.h"

#define MAX_ITEMS 64

static struct oci_mount mounts[MAX_ITEMS];
static struct oci_device devices[MAX_ITEMS];
static struct oci_namespace namespaces[OCI_NS_COUNT];
static struct oci_kv sysctls[MAX_ITEMS];
static char **masked, **readonly;
static struct oci_process process;
static struct oci_linux lnx;
static struct oci_config config;
static int unshare_flags = CLONE_NEWNS | CLONE_NEWPID;
static bool opt_userns, opt_no_pivot;

__attribute__((format(printf, 1, 2), noreturn)) static void die(const char *fmt, ...)
{
  va_list ap;

  fprintf(stderr, "rootfs-driver: ");
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  exit(2);
}

static void add_ns(enum oci_ns_type t, int flag)
{
  for (size_t i = 0; i < lnx.n_namespaces; i++)
    if (lnx.namespaces[i].type == t)
      return;
  namespaces[lnx.n_namespaces++].type = t;
  unshare_flags |= flag;
}

static char **split(const char *s, const char *sep)
{
  char **v = NULL;
  char *copy = xstrdup(s), *save = NULL;

  for (char *w = strtok_r(copy, sep, &save); w != NULL; w = strtok_r(NULL, sep, &save))
    strv_push(&v, w);
  free(copy);
  return v;
}

static void add_mount(const char *dest, const char *type, const char *src, const char *opts)
{
  struct oci_mount *m = &mounts[config.n_mounts];

  if (config.n_mounts >= MAX_ITEMS)
    die("too many mounts");
  m->destination = xstrdup(dest);
  m->type = *type != '\0' ? xstrdup(type) : NULL;
  m->source = *src != '\0' ? xstrdup(src) : NULL;
  m->options = split(opts, ",");
  config.n_mounts++;
}

/* DEST:TYPE:SRC:OPTS */
static void parse_mount(const char *arg)
{
  char *copy = xstrdup(arg);
  char *f[4] = {0};
  char *p = copy;

  for (int i = 0; i < 4; i++) {
    f[i] = p;
    p = i < 3 ? strchr(p, ':') : NULL;
    if (i < 3 && p == NULL)
      die("bad -m `%s` (DEST:TYPE:SRC:OPTS)", arg);
    if (p != NULL)
      *p++ = '\0';
  }
  add_mount(f[0], f[1], f[2], f[3]);
  free(copy);
}

/* PATH:T:MAJ:MIN:MODE */
static void parse_device(const char *arg)
{
  struct oci_device *d = &devices[lnx.n_devices];
  char path[PATH_MAX], type;
  long long maj, min;
  unsigned int mode;

  if (lnx.n_devices >= MAX_ITEMS ||
      sscanf(arg, "%4095[^:]:%c:%lld:%lld:%o", path, &type, &maj, &min, &mode) != 5)
    die("bad -d `%s` (PATH:T:MAJ:MIN:MODE)", arg);
  d->path = xstrdup(path);
  d->type = type;
  d->major = maj;
  d->minor = min;
  d->has_file_mode = true;
  d->file_mode = mode;
  lnx.n_devices++;
}

static void parse_sysctl(const char *arg)
{
  const char *eq = strchr(arg, '=');

  if (eq == NULL || lnx.n_sysctl >= MAX_ITEMS)
    die("bad -s `%s` (KEY=VALUE)", arg);
  sysctls[lnx.n_sysctl].key = xstrndup(arg, (size_t)(eq - arg));
  sysctls[lnx.n_sysctl].value = xstrdup(eq + 1);
  lnx.n_sysctl++;
}

static void parse_ns(const char *arg)
{
  if (strcmp(arg, "net") == 0)
    add_ns(OCI_NS_NETWORK, CLONE_NEWNET);
  else if (strcmp(arg, "ipc") == 0)
    add_ns(OCI_NS_IPC, CLONE_NEWIPC);
  else if (strcmp(arg, "uts") == 0)
    add_ns(OCI_NS_UTS, CLONE_NEWUTS);
  else if (strcmp(arg, "cgroup") == 0)
    add_ns(OCI_NS_CGROUP, CLONE_NEWCGROUP);
  else
    die("unknown namespace `%s`", arg);
}

/* What `runc spec` writes. */
static void runc_defaults(void)
{
  static const char *const m[] = {"/proc/acpi",
                                  "/proc/asound",
                                  "/proc/kcore",
                                  "/proc/keys",
                                  "/proc/latency_stats",
                                  "/proc/timer_list",
                                  "/proc/timer_stats",
                                  "/proc/sched_debug",
                                  "/sys/firmware",
                                  "/proc/scsi",
                                  NULL};
  static const char *const r[] = {"/proc/bus",           "/proc/fs", "/proc/irq", "/proc/sys",
                                  "/proc/sysrq-trigger", NULL};

  add_mount("/proc", "proc", "proc", "");
  add_mount("/dev", "tmpfs", "tmpfs", "nosuid,strictatime,mode=755,size=65536k");
  add_mount("/dev/pts", "devpts", "devpts",
            "nosuid,noexec,newinstance,ptmxmode=0666,mode=0620,gid=5");
  add_mount("/dev/shm", "tmpfs", "shm", "nosuid,noexec,nodev,mode=1777,size=65536k");
  add_mount("/dev/mqueue", "mqueue", "mqueue", "nosuid,noexec,nodev");
  add_mount("/sys", "sysfs", "sysfs", "nosuid,noexec,nodev,ro");
  add_mount("/sys/fs/cgroup", "cgroup", "cgroup", "nosuid,noexec,nodev,relatime,ro");
  for (size_t i = 0; m[i] != NULL; i++)
    strv_push(&masked, m[i]);
  for (size_t i = 0; r[i] != NULL; i++)
    strv_push(&readonly, r[i]);
  add_ns(OCI_NS_IPC, CLONE_NEWIPC);
  add_ns(OCI_NS_UTS, CLONE_NEWUTS);
}

static int container_init(const char *rootfs, const char *bundle, char **cmd)
{
  struct error err = {0};
  struct setup_ctx ctx = {
      .config = &config,
      .id = "rootfs-driver",
      .bundle = bundle,
      .rootfs = rootfs,
      .no_pivot = opt_no_pivot,
      .new_userns = opt_userns,
      .in_userns = opt_userns,
      .new_cgroupns = (unshare_flags & CLONE_NEWCGROUP) != 0,
      .pty_master_fd = -1,
      .pty_peer_fd = -1,
      .rootfd = -1,
  };

  procfs_reset();
  if (sysctl_apply(&config, &err) < 0 || rootfs_setup(&ctx, &err) < 0 ||
      rootfs_pivot(&ctx, &err) < 0 || rootfs_finalize(&ctx, &err) < 0) {
    fprintf(stderr, "rootfs-driver: %s\n", err.msg);
    return 1;
  }
  if (ctx.pty_master_fd >= 0)
    close(ctx.pty_master_fd);
  if (ctx.pty_peer_fd >= 0)
    close(ctx.pty_peer_fd);
  if (ctx.rootfd >= 0)
    close(ctx.rootfd);
  procfs_reset();
  execv(cmd[0], cmd);
  fprintf(stderr, "rootfs-driver: exec `%s`: %s\n", cmd[0], strerror(errno));
  return 127;
}

static int wait_status(pid_t pid)
{
  int st;

  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR)
      return 125;
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void write_file(const char *path, const char *s)
{
  int fd = open(path, O_WRONLY | O_CLOEXEC);

  if (fd < 0 || write(fd, s, strlen(s)) != (ssize_t)strlen(s))
    die("write %s failed", path);
  close(fd);
}

/* The child unshares; with -U the parent writes its id maps in between. */
static int run(const char *rootfs, const char *bundle, char **cmd)
{
  int up[2], down[2];
  char c = 0;
  pid_t pid;

  if (pipe2(up, O_CLOEXEC) < 0 || pipe2(down, O_CLOEXEC) < 0)
    die("pipe: %s", strerror(errno));
  pid = fork();
  if (pid < 0)
    die("fork: %s", strerror(errno));
  if (pid == 0) {
    pid_t init;

    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (unshare(unshare_flags | (opt_userns ? CLONE_NEWUSER : 0)) < 0)
      die("unshare: %s", strerror(errno));
    if (opt_userns && (write(up[1], "u", 1) != 1 || read(down[0], &c, 1) != 1))
      die("user namespace sync failed");
    if (opt_userns && (setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0))
      die("setresuid: %s", strerror(errno));
    init = fork();
    if (init == 0)
      _exit(container_init(rootfs, bundle, cmd));
    _exit(init < 0 ? 125 : wait_status(init));
  }
  if (opt_userns) {
    char path[64];

    if (read(up[0], &c, 1) != 1)
      return wait_status(pid);
    snprintf(path, sizeof path, "/proc/%d/uid_map", (int)pid);
    write_file(path, "0 0 65536\n");
    snprintf(path, sizeof path, "/proc/%d/gid_map", (int)pid);
    write_file(path, "0 0 65536\n");
    if (write(down[1], "g", 1) != 1)
      die("user namespace sync failed");
  }
  return wait_status(pid);
}

int main(int argc, char **argv)
{
  const char *bundle = NULL, *rootfs;
  char cwd[PATH_MAX];
  int ch;

  config.mounts = mounts;
  config.linux = &lnx;
  config.process = &process;
  lnx.devices = devices;
  lnx.namespaces = namespaces;
  lnx.sysctl = sysctls;
  add_ns(OCI_NS_PID, 0);
  add_ns(OCI_NS_MOUNT, 0);
  while ((ch = getopt(argc, argv, "+Dm:d:M:R:s:n:p:rtPUb:")) != -1) {
    switch (ch) {
    case 'D':
      runc_defaults();
      break;
    case 'm':
      parse_mount(optarg);
      break;
    case 'd':
      parse_device(optarg);
      break;
    case 'M':
      strv_push(&masked, optarg);
      break;
    case 'R':
      strv_push(&readonly, optarg);
      break;
    case 's':
      parse_sysctl(optarg);
      break;
    case 'n':
      parse_ns(optarg);
      break;
    case 'p':
      lnx.rootfs_propagation = optarg;
      break;
    case 'r':
      config.root_readonly = true;
      break;
    case 't':
      process.terminal = true;
      break;
    case 'P':
      opt_no_pivot = true;
      break;
    case 'U':
      opt_userns = true;
      break;
    case 'b':
      bundle = optarg;
      break;
    default:
      die("usage: rootfs-driver [flags] ROOTFS -- CMD...");
    }
  }
  if (optind >= argc)
    die("usage: rootfs-driver [flags] ROOTFS -- CMD...");
  rootfs = argv[optind++];
  if (optind < argc && strcmp(argv[optind], "--") == 0)
    optind++;
  if (optind >= argc)
    die("usage: rootfs-driver [flags] ROOTFS -- CMD...");
  lnx.masked_paths = masked;
  lnx.readonly_paths = readonly;
  if (bundle == NULL)
    bundle = getcwd(cwd, sizeof cwd);
  return run(rootfs, bundle, argv + optind);
}
