/* doctor.c - `agentrt doctor [--format text|json]`: what this host has of what
 * agentrt needs, each piece tried for real (in a child process, inside
 * namespaces of its own: nothing on the host changes), and what a missing
 * piece disables.
 *
 * Exit status 0 when everything a container needs is there (namespaces, the
 * new mount API, seccomp); 1 when one of those is missing.  Optional pieces
 * (cgroup delegation, nftables, overlayfs, fanotify, seccomp notify, the proc
 * connector, AppArmor, Landlock) are reported with what they disable.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <grp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/util.h"
#include "workspace/workspace.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif
#ifndef TMPFS_MAGIC
#define TMPFS_MAGIC 0x01021994
#endif
#ifndef FAN_REPORT_DFID_NAME
#define FAN_REPORT_DFID_NAME 0x00000c00
#endif
#ifndef LANDLOCK_CREATE_RULESET_VERSION
#define LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#endif
#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#endif
#ifndef __NR_open_tree
#define __NR_open_tree 428
#endif

struct check {
  const char *name;
  bool required;
  bool ok;
  char detail[256];
  const char *disables; /* what a missing piece turns off */
};

static void set_detail(struct check *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_detail(struct check *c, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->detail, sizeof c->detail, fmt, ap);
  va_end(ap);
}

static int read_int_file(const char *path, long *ret)
{
  FILE *f = fopen(path, "re");
  int r = -1;

  if (f == NULL)
    return -1;
  if (fscanf(f, "%ld", ret) == 1)
    r = 0;
  fclose(f);
  return r;
}

/* Run fn in a child; its exit status is 0 for yes, else an errno. */
static int in_child(int (*fn)(void *), void *arg)
{
  pid_t pid = fork();
  int st;

  if (pid < 0)
    return errno;
  if (pid == 0)
    _exit(fn(arg) & 0xff);
  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR)
      return errno;
  if (WIFEXITED(st))
    return WEXITSTATUS(st);
  return EINTR;
}

static int write_str(const char *path, const char *s)
{
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  ssize_t n;

  if (fd < 0)
    return -1;
  n = write(fd, s, strlen(s));
  close(fd);
  return n == (ssize_t)strlen(s) ? 0 : -1;
}

/* A user namespace of our own where we are mapped (as an unprivileged user
 * when asked: root drops to nobody first). */
static int userns_child(void *arg)
{
  bool as_nobody = arg != NULL;
  uid_t uid;
  gid_t gid;
  char line[64];

  if (as_nobody && geteuid() == 0) {
    if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
        setresuid(65534, 65534, 65534) < 0)
      return errno;
    /* a change of credentials made us non-dumpable: /proc/self is root's */
    if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0)
      return errno;
  }
  uid = getuid();
  gid = getgid();
  if (unshare(CLONE_NEWUSER) < 0)
    return errno;
  if (write_str("/proc/self/setgroups", "deny") < 0 && errno != ENOENT)
    return errno;
  snprintf(line, sizeof line, "0 %u 1\n", (unsigned)uid);
  if (write_str("/proc/self/uid_map", line) < 0)
    return errno;
  snprintf(line, sizeof line, "0 %u 1\n", (unsigned)gid);
  if (write_str("/proc/self/gid_map", line) < 0)
    return errno;
  /* AppArmor's restriction lets the namespace be made but takes the
   * capabilities away: a mount namespace tells. */
  if (unshare(CLONE_NEWNS) < 0)
    return errno;
  return 0;
}

/* Privilege for the namespace tests: root as it is, anyone else in a user
 * namespace of its own. */
static int gain_ns_privilege(void)
{
  if (geteuid() == 0)
    return 0;
  return userns_child(NULL);
}

static void check_userns(struct check *c)
{
  long max = -1, restrict_ns = 0, clone_ok = 1;
  int e;

  c->name = "user namespaces (unprivileged)";
  c->disables = "`agentrt sandbox` for unprivileged users, rootless engines";
  read_int_file("/proc/sys/user/max_user_namespaces", &max);
  read_int_file("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", &restrict_ns);
  read_int_file("/proc/sys/kernel/unprivileged_userns_clone", &clone_ok);
  e = in_child(userns_child, (void *)1);
  c->ok = e == 0;
  if (c->ok)
    set_detail(c, "user.max_user_namespaces=%ld", max);
  else if (restrict_ns == 1)
    set_detail(c,
               "%s: kernel.apparmor_restrict_unprivileged_userns=1 (set it to 0, or give "
               "agentrt an AppArmor profile with `userns,`)",
               strerror(e));
  else if (max == 0)
    set_detail(c, "%s: user.max_user_namespaces=0 (raise it)", strerror(e));
  else if (clone_ok == 0)
    set_detail(c, "%s: kernel.unprivileged_userns_clone=0 (set it to 1)", strerror(e));
  else
    set_detail(c, "%s", strerror(e));
}

static int namespaces_child(void *arg)
{
  int e = gain_ns_privilege();

  (void)arg;
  if (e != 0)
    return e;
  if (unshare(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWNET |
              CLONE_NEWCGROUP) < 0)
    return errno;
  return 0;
}

static void check_namespaces(struct check *c)
{
  int e = in_child(namespaces_child, NULL);

  c->name = "namespaces (mount, pid, ipc, uts, network, cgroup)";
  c->required = true;
  c->disables = "every container";
  c->ok = e == 0;
  set_detail(c, "%s", e == 0 ? "all six can be made" : strerror(e));
}

static void check_mount_api(struct check *c)
{
  long r = syscall(__NR_open_tree, -1, "", 0x80000000u /* an invalid flag */);

  c->name = "new mount API (open_tree, move_mount; Linux 5.12+)";
  c->required = true;
  c->disables = "every container (agentrt mounts with it)";
  c->ok = !(r < 0 && errno == ENOSYS);
  set_detail(c, "%s", c->ok ? "present" : "ENOSYS: the kernel is too old");
  if (r >= 0)
    close((int)r);
}

static void check_seccomp(struct check *c, struct check *notify)
{
  unsigned int action = SECCOMP_RET_USER_NOTIF;
  long r = syscall(__NR_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action);
  int e = errno;

  c->name = "seccomp filters";
  c->required = true;
  c->disables = "every agent profile (syscall filtering)";
  c->ok = !(r < 0 && (e == ENOSYS || e == EINVAL));
  set_detail(c, "%s", c->ok ? "present" : strerror(e));
  notify->name = "seccomp user notification";
  notify->disables = "refused-syscall records, linux.seccomp.listenerPath";
  notify->ok = r == 0;
  set_detail(notify, "%s", r == 0 ? "present" : strerror(e));
}

static void check_cgroups(struct check *c, struct check *deleg)
{
  struct statfs sf;
  FILE *f;
  char line[4096];
  char *path = NULL;

  c->name = "cgroup version";
  c->disables = "nothing (both are supported)";
  deleg->name = "cgroup delegation";
  deleg->disables = "memory, pids and cpu limits (a warning at create)";
  if (statfs("/sys/fs/cgroup", &sf) < 0) {
    c->ok = false;
    set_detail(c, "/sys/fs/cgroup: %s", strerror(errno));
    deleg->ok = false;
    set_detail(deleg, "no cgroup file system");
    return;
  }
  c->ok = true;
  if ((unsigned long)sf.f_type == CGROUP2_SUPER_MAGIC)
    set_detail(c, "v2 (unified)");
  else if ((unsigned long)sf.f_type == TMPFS_MAGIC) {
    struct statfs u;
    bool unified =
        statfs("/sys/fs/cgroup/unified", &u) == 0 && (unsigned long)u.f_type == CGROUP2_SUPER_MAGIC;
    set_detail(c, "%s",
               unified ? "hybrid (v1 controllers, cgroup2 at /sys/fs/cgroup/unified)"
                       : "v1 (legacy)");
  } else
    set_detail(c, "unknown file system type %#lx", (unsigned long)sf.f_type);

  if (geteuid() == 0) {
    deleg->ok = true;
    set_detail(deleg, "root: every controller");
    return;
  }
  f = fopen("/proc/self/cgroup", "re");
  while (f != NULL && fgets(line, sizeof line, f) != NULL)
    if (strncmp(line, "0::", 3) == 0) {
      line[strcspn(line, "\n")] = '\0';
      path = xstrdup(line + 3);
    }
  if (f != NULL)
    fclose(f);
  if (path != NULL && (unsigned long)sf.f_type == CGROUP2_SUPER_MAGIC) {
    cleanup_free char *procs = xfmt("/sys/fs/cgroup%s/cgroup.procs", path);
    cleanup_free char *ctl = xfmt("/sys/fs/cgroup%s/cgroup.subtree_control", path);
    deleg->ok = access(procs, W_OK) == 0 && access(ctl, W_OK) == 0;
    set_detail(deleg, "%s %s", path,
               deleg->ok
                   ? "is delegated to this user"
                   : "is not writable by this user (systemd-run --user --scope -p Delegate=yes)");
  } else {
    deleg->ok = false;
    set_detail(deleg, "cgroup v1: not delegated to unprivileged users");
  }
  free(path);
}

static int nft_child(void *arg)
{
  int e = gain_ns_privilege();
  int fd;
  struct {
    struct nlmsghdr nh;
    struct nfgenmsg nfg;
  } req = {0};
  char buf[8192];
  ssize_t n;

  (void)arg;
  if (e != 0)
    return e;
  if (unshare(CLONE_NEWNET) < 0)
    return errno;
  fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER);
  if (fd < 0)
    return errno;
  req.nh.nlmsg_len = sizeof req;
  req.nh.nlmsg_type = (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_GETGEN;
  req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
  req.nh.nlmsg_seq = 1;
  req.nfg.nfgen_family = AF_UNSPEC;
  req.nfg.version = NFNETLINK_V0;
  if (send(fd, &req, sizeof req, 0) < 0)
    return errno;
  n = recv(fd, buf, sizeof buf, 0);
  if (n < (ssize_t)sizeof(struct nlmsghdr))
    return n < 0 ? errno : EPROTO;
  for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
    if (h->nlmsg_type == NLMSG_ERROR) {
      struct nlmsgerr *ne = NLMSG_DATA(h);
      if (ne->error != 0)
        return -ne->error;
    }
  }
  return 0;
}

static void check_nftables(struct check *c)
{
  int e = in_child(nft_child, NULL);

  c->name = "nftables (in a network namespace)";
  c->disables = "the egress allowlist and the ingress policy";
  c->ok = e == 0;
  set_detail(c, "%s", e == 0 ? "nf_tables answers" : strerror(e));
}

static int overlay_child(void *arg)
{
  const char *dir = arg;
  char lower[4096], upper[4096], work[4096], merged[4096], opts[16384];
  int e = gain_ns_privilege();

  if (e != 0)
    return e;
  if (unshare(CLONE_NEWNS) < 0)
    return errno;
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
    return errno;
  if (mount("tmpfs", dir, "tmpfs", 0, "size=1m") < 0)
    return errno;
  snprintf(lower, sizeof lower, "%s/l", dir);
  snprintf(upper, sizeof upper, "%s/u", dir);
  snprintf(work, sizeof work, "%s/w", dir);
  snprintf(merged, sizeof merged, "%s/m", dir);
  if (mkdir(lower, 0700) < 0 || mkdir(upper, 0700) < 0 || mkdir(work, 0700) < 0 ||
      mkdir(merged, 0700) < 0)
    return errno;
  snprintf(opts, sizeof opts, "lowerdir=%s,upperdir=%s,workdir=%s", lower, upper, work);
  if (mount("overlay", merged, "overlay", 0, opts) < 0)
    return errno;
  return 0;
}

static void check_overlay(struct check *c)
{
  char dir[] = "/tmp/agentrt-doctor-XXXXXX";
  int e;

  c->name = "overlayfs";
  c->disables = "the reviewed workspace (overlay mode); the profile falls back to tmpfs";
  if (mkdtemp(dir) == NULL) {
    c->ok = false;
    set_detail(c, "mkdtemp: %s", strerror(errno));
    return;
  }
  e = in_child(overlay_child, dir);
  rmdir(dir);
  c->ok = e == 0;
  set_detail(c, "%s", e == 0 ? "an overlay mounts" : strerror(e));
}

static void check_loop(struct check *c)
{
  const char *why = NULL;

  c->name = "loop devices, mkfs.ext4";
  c->disables = "the hard workspace.size limit of overlay workspaces (create warns, or refuses "
                "when run.agentrt.workspace.size asks for it)";
  c->ok = workspace_size_limit_supported(&why);
  set_detail(c, "%s", c->ok ? "an upper layer of workspace.size can be made" : why);
}

static void check_fanotify(struct check *c)
{
  int fd = fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_REPORT_DFID_NAME, O_RDONLY);

  c->name = "fanotify (directory entry events)";
  c->disables = "file records in the audit trail";
  if (fd < 0) {
    c->ok = false;
    set_detail(c, "%s", strerror(errno));
    return;
  }
  /* The trail marks the workspace's file system, which needs privilege;
   * without it, an overlay's upper layer directory by directory (the
   * user's directories: /tmp stands for one here) */
  c->ok = fanotify_mark(fd, FAN_MARK_ADD | FAN_MARK_FILESYSTEM,
                        FAN_CREATE | FAN_DELETE | FAN_MOVED_FROM | FAN_MOVED_TO | FAN_ONDIR,
                        AT_FDCWD, "/tmp") == 0;
  if (c->ok) {
    set_detail(c, "a file system mark is accepted");
  } else if (errno == EPERM && fanotify_mark(fd, FAN_MARK_ADD,
                                             FAN_CREATE | FAN_DELETE | FAN_MOVED_FROM |
                                                 FAN_MOVED_TO | FAN_ONDIR | FAN_EVENT_ON_CHILD,
                                             AT_FDCWD, "/tmp") == 0) {
    c->ok = true;
    set_detail(c, "directory marks (a file system mark needs privilege): overlay workspaces "
                  "are watched directory by directory");
  } else {
    set_detail(c, "%s", strerror(errno));
  }
  close(fd);
}

/* Subscribe; the kernel acks with the error (EPERM without CAP_NET_ADMIN). */
static int proc_listen(int fd, int *ret_err)
{
  struct {
    struct nlmsghdr nh;
    struct cn_msg cn;
    enum proc_cn_mcast_op op;
  } __attribute__((packed)) req = {0};
  char buf[4096] __attribute__((aligned(8)));
  struct timeval tv = {.tv_sec = 1};
  ssize_t n;

  req.nh.nlmsg_len = sizeof req;
  req.nh.nlmsg_type = NLMSG_DONE;
  req.nh.nlmsg_pid = (unsigned)getpid();
  req.cn.id.idx = CN_IDX_PROC;
  req.cn.id.val = CN_VAL_PROC;
  req.cn.len = sizeof req.op;
  req.op = PROC_CN_MCAST_LISTEN;
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  if (send(fd, &req, sizeof req, 0) < 0) {
    *ret_err = errno;
    return -1;
  }
  for (int i = 0; i < 16; i++) {
    struct nlmsghdr *h = (struct nlmsghdr *)buf;
    struct cn_msg *cn;
    struct proc_event ev;

    n = recv(fd, buf, sizeof buf, 0);
    if (n < 0) {
      *ret_err = errno == EAGAIN ? ETIMEDOUT : errno;
      return -1;
    }
    if (!NLMSG_OK(h, (size_t)n))
      continue;
    cn = NLMSG_DATA(h);
    if ((size_t)n < NLMSG_HDRLEN + sizeof *cn + sizeof ev)
      continue;
    memcpy(&ev, cn->data, sizeof ev); /* cn->data is 4-byte aligned only */
    if (ev.what != PROC_EVENT_NONE)
      continue;
    *ret_err = (int)ev.event_data.ack.err;
    return *ret_err == 0 ? 0 : -1;
  }
  *ret_err = EPROTO;
  return -1;
}

static void check_proc_connector(struct check *c)
{
  int e = 0;
  int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_CONNECTOR);
  struct sockaddr_nl sa = {.nl_family = AF_NETLINK, .nl_groups = CN_IDX_PROC, .nl_pid = 0};

  c->name = "proc connector";
  /* without privilege the programs come from their exec calls instead
   * (monitor/monitor_exec.c): create asks for that when this bind fails */
  c->disables = geteuid() == 0 ? "program records in the audit trail"
                               : "program records read after the exec (they come from the exec "
                                 "calls instead: the path and argv asked for)";
  if (fd < 0) {
    c->ok = false;
    set_detail(c, "%s", strerror(errno));
    return;
  }
  if (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
    c->ok = false;
    set_detail(c, "%s", strerror(errno));
    close(fd);
    return;
  }
  c->ok = proc_listen(fd, &e) == 0;
  set_detail(c, "%s", c->ok ? "events can be subscribed" : strerror(e));
  close(fd);
}

static void check_apparmor(struct check *c)
{
  FILE *f = fopen("/sys/module/apparmor/parameters/enabled", "re");
  int ch = f ? fgetc(f) : EOF;

  if (f != NULL)
    fclose(f);
  c->name = "AppArmor";
  c->disables = "process.apparmorProfile (the field is ignored, as runc does)";
  c->ok = ch == 'Y';
  set_detail(c, "%s", c->ok ? "enabled" : "not enabled in this kernel");
}

static void check_landlock(struct check *c)
{
  long abi = syscall(__NR_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);

  c->name = "Landlock";
  c->disables = "nothing yet (reported for completeness)";
  c->ok = abi > 0;
  if (abi > 0)
    set_detail(c, "ABI %ld", abi);
  else
    set_detail(c, "%s", strerror(errno));
}

static void json_str(const char *s)
{
  putchar('"');
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\')
      printf("\\%c", ch);
    else if (ch < 0x20)
      printf("\\u%04x", ch);
    else
      putchar(ch);
  }
  putchar('"');
}

int cmd_doctor(const struct global_opts *g, int argc, char **argv, struct error *err)
{
  static const struct opt_spec specs[] = {
      {"format", 'f', true, 1},
      {"help", 'h', false, 2},
      {NULL, 0, false, 0},
  };
  struct opt_iter it = {argc, argv, 1};
  struct check checks[16] = {0};
  size_t n = 0;
  bool json = false, fatal = false;
  const char *val;
  int id, r;

  (void)g;
  while ((r = opt_next(&it, specs, &id, &val, "doctor", err)) == 1) {
    if (id == 2) {
      printf("Usage: agentrt doctor [--format text|json]\n");
      return 0;
    }
    if (streq(val, "json"))
      json = true;
    else if (!streq(val, "text"))
      return error_set(err, 0, "doctor: --format: expected `text` or `json`");
  }
  if (r < 0)
    return -1;
  if (it.i != argc)
    return error_set(err, 0, "doctor: takes no arguments");

  check_namespaces(&checks[n++]);
  check_mount_api(&checks[n++]);
  check_seccomp(&checks[n], &checks[n + 1]);
  n += 2;
  check_userns(&checks[n++]);
  check_cgroups(&checks[n], &checks[n + 1]);
  n += 2;
  check_nftables(&checks[n++]);
  check_overlay(&checks[n++]);
  check_loop(&checks[n++]);
  check_fanotify(&checks[n++]);
  check_proc_connector(&checks[n++]);
  check_apparmor(&checks[n++]);
  check_landlock(&checks[n++]);

  for (size_t i = 0; i < n; i++)
    if (checks[i].required && !checks[i].ok)
      fatal = true;
  if (json) {
    printf("{\"ok\":%s,\"checks\":[", fatal ? "false" : "true");
    for (size_t i = 0; i < n; i++) {
      printf("%s{\"name\":", i ? "," : "");
      json_str(checks[i].name);
      printf(",\"ok\":%s,\"required\":%s,\"detail\":", checks[i].ok ? "true" : "false",
             checks[i].required ? "true" : "false");
      json_str(checks[i].detail);
      printf(",\"disables\":");
      json_str(checks[i].ok ? "" : checks[i].disables);
      printf("}");
    }
    printf("]}\n");
  } else {
    for (size_t i = 0; i < n; i++) {
      printf("%-8s %s: %s\n",
             checks[i].ok         ? "ok"
             : checks[i].required ? "MISSING"
                                  : "missing",
             checks[i].name, checks[i].detail);
      if (!checks[i].ok)
        printf("         disables: %s\n", checks[i].disables);
    }
    printf("%s\n", fatal ? "agentrt cannot run containers on this host"
                         : "agentrt can run containers on this host");
  }
  return fatal ? 1 : 0;
}
