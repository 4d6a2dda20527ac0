/* egress.c - see egress.h */
#include "egress.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <arpa/inet.h>

#include "audit/audit.h"
#include "audit/jbuf.h"
#include "common/log.h"
#include "common/util.h"
#include "netfilter/egress.h"
#include "runtime/audit_cmd.h"
#include "runtime/fsutil.h"
#include "runtime/procfs.h"

#define CTL_SOCK "egress.sock"
#define CTL_MAX 1024

static int policy_from_profile(const struct profile_egress *pe, struct egress_policy *p,
                               struct error *err)
{
  egress_policy_init(p);
  p->default_allow = pe->def == PROFILE_EGRESS_ALLOW;
  p->allow_private_answers = pe->allow_private_answers;
  for (char **a = pe->allow; a && *a; a++) {
    struct egress_entry e;
    if (egress_entry_parse(*a, &e, err) < 0 || egress_policy_add(p, &e, err) < 0)
      return error_prefix(err, "egress.allow `%s`", *a);
  }
  for (char **u = pe->dns_upstream; u && *u && p->n_upstream < EGRESS_MAX_UPSTREAM; u++)
    if (egress_upstream_parse(*u, &p->upstream[p->n_upstream++], err) < 0)
      return error_prefix(err, "egress.dns.upstream `%s`", *u);
  if (p->n_upstream == 0) {
    struct error ignore = {0};
    /* the host's resolvers; none is not fatal: allowed names then fail */
    if (egress_upstream_from_resolv_conf("/etc/resolv.conf", p, &ignore) < 0)
      log_debug("egress: no upstream resolver: %s", ignore.msg);
  }
  return 0;
}

static int send_batch(int nl_fd, const struct egress_policy *p, bool update, struct error *err)
{
  struct nft_build_opts bo = {.seq_base = 1, .dns_port = 53, .update = update};
  struct nft_batch_buf b;
  int r;

  memset(&b, 0, sizeof b);
  if (nft_build_batch(p, &bo, &b, err) < 0)
    return -1;
  r = nft_batch_send(nl_fd, &b, err);
  nft_batch_buf_free(&b);
  return r;
}

/* The resolver listens on 127.0.0.1 and a TCP reset for a denied connection
 * is delivered through `lo`: with `lo` down, DNS fails and refused
 * connections hang until their timeout.  Our own new namespaces have it up
 * (init.c); one joined by path is brought up here, through a socket that
 * lives in it (the ioctl acts on the socket's netns, never ours). */
static int loopback_up_in(int fd_in_netns, struct error *err)
{
  struct ifreq ifr;

  memset(&ifr, 0, sizeof ifr);
  snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
  if (ioctl(fd_in_netns, SIOCGIFFLAGS, &ifr) < 0)
    return error_errno(err, "egress: flags of `lo`");
  if (ifr.ifr_flags & IFF_UP)
    return 0;
  ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
  if (ioctl(fd_in_netns, SIOCSIFFLAGS, &ifr) < 0)
    return error_errno(err, "egress: bring up `lo`");
  return 0;
}

/* ------------------------------------------------------------ the helper */

struct helper {
  struct egress_resolver_opts *o;
  int listen_fd;
  struct audit_log *audit; /* the container's trail, NULL = none */
};

/* Every DNS decision of the resolver is a "dns" record in the audit trail. */
static void on_dns_event(void *ud, const struct egress_dns_event *ev)
{
  static const char *const verdicts[] = {"allowed", "refused", "rebind", "failed", "nodata"};
  struct helper *h = ud;
  struct jbuf b = {0};
  struct error err = {0};
  char addr[INET6_ADDRSTRLEN];

  if (h->audit == NULL)
    return;
  jb_key_str(&b, "name", ev->name);
  jb_key_i64(&b, "qtype", ev->qtype);
  jb_key_str(&b, "verdict",
             (size_t)ev->verdict < ARRAY_SIZE(verdicts) ? verdicts[ev->verdict] : "?");
  jb_key(&b, "addrs");
  jb_puts(&b, "[");
  for (size_t i = 0; i < ev->n_addrs; i++) {
    inet_ntop(ev->addrs[i].family, ev->addrs[i].addr, addr, sizeof addr);
    jb_puts(&b, i > 0 ? "," : "");
    jb_quote(&b, addr, strlen(addr));
  }
  jb_puts(&b, "]");
  if (ev->detail)
    jb_key_str(&b, "detail", ev->detail);
  audit_log_append(h->audit, "dns", jb_str(&b), &err);
  jb_free(&b);
}

static void reply(int fd, const char *s)
{
  ssize_t r = send(fd, s, strlen(s), MSG_NOSIGNAL);
  (void)r;
}

static void ctl_list(struct helper *h, int fd)
{
  const struct egress_policy *p = h->o->policy;
  char buf[EGRESS_ENTRY_STR_MAX];

  reply(fd, p->default_allow ? "default allow\n" : "default deny\n");
  for (size_t i = 0; i < p->n_entries; i++) {
    egress_entry_format(&p->entries[i], buf);
    reply(fd, "allow ");
    reply(fd, buf);
    reply(fd, "\n");
  }
  /* dns4p/dns6p: addresses of names allowed with a port ("x.org:443") */
  static const char *const sets[] = {"dns4", "dns6", "dns4p", "dns6p"};

  for (size_t s = 0; s < ARRAY_SIZE(sets); s++) {
    cleanup_free char *elems = NULL;
    struct error e = {0};
    if (nft_set_list(h->o->nl_fd, sets[s], &elems, &e) == 0 && elems) {
      for (char *l = strtok(elems, "\n"); l; l = strtok(NULL, "\n")) {
        reply(fd, "pinned ");
        reply(fd, l);
        reply(fd, "\n");
      }
    }
  }
}

/* A domain denied live: the addresses pinned for it must go too.  The sets
 * do not say which name pinned what, so every pin goes; names still allowed
 * are pinned again at their next lookup (connections already made stay). */
static int flush_pins(int nl_fd, struct error *err)
{
  struct nft_batch_buf b;
  int r;

  memset(&b, 0, sizeof b);
  if (nft_build_dns_flush(1, &b, err) < 0)
    return -1;
  r = nft_batch_send(nl_fd, &b, err);
  nft_batch_buf_free(&b);
  return r;
}

/* One control request: "list", "allow ENTRY" or "deny ENTRY". */
static int on_ctl(void *ud, struct egress_policy *p)
{
  struct helper *h = ud;
  char req[CTL_MAX + 1];
  struct error err = {0};
  struct egress_entry e;
  ssize_t n;
  struct timeval tv = {.tv_sec = 1};
  int fd = accept4(h->listen_fd, NULL, NULL, SOCK_CLOEXEC);

  if (fd < 0)
    return 0;
  /* the resolver waits while we talk: a client that stalls must not stop DNS */
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  n = recv(fd, req, CTL_MAX, 0);
  if (n <= 0) {
    close(fd);
    return 0;
  }
  req[n] = '\0';
  req[strcspn(req, "\n")] = '\0';
  if (strcmp(req, "list") == 0) {
    ctl_list(h, fd);
  } else if (strncmp(req, "allow ", 6) == 0 || strncmp(req, "deny ", 5) == 0) {
    bool allow = req[0] == 'a';
    const char *arg = req + (allow ? 6 : 5);
    int r = egress_entry_parse(arg, &e, &err);
    if (r == 0)
      r = allow ? egress_policy_add(p, &e, &err) : egress_policy_remove(p, &e, &err);
    if (r == 0)
      r = send_batch(h->o->nl_fd, p, true, &err);
    if (r == 0 && !allow && e.kind == EGRESS_DOMAIN)
      r = flush_pins(h->o->nl_fd, &err);
    reply(fd, r == 0 ? "ok\n" : "error ");
    if (r < 0) {
      reply(fd, err.msg);
      reply(fd, "\n");
    }
  } else {
    reply(fd, "error unknown request\n");
  }
  close(fd);
  return 0;
}

static int ctl_listen(int dirfd, struct error *err)
{
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  char path[64];
  int fd;

  /* bind through /proc/self/fd so long state paths do not hit sun_path's limit */
  snprintf(path, sizeof path, "/proc/self/fd/%d/" CTL_SOCK, dirfd);
  snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
  fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0)
    return error_errno(err, "egress: control socket");
  unlinkat(dirfd, CTL_SOCK, 0);
  if (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(fd, 8) < 0) {
    error_errno(err, "egress: bind control socket");
    close(fd);
    return -1;
  }
  return fd;
}

/* The helper's life: no stdio of the engine (ENGINES.md §2.4), only the
 * resolver's fds, until the init exits. */
__attribute__((noreturn)) static void helper_main(struct egress_resolver_opts *o, int listen_fd,
                                                  int pidfd, struct audit_log *audit)
{
  struct helper h = {.o = o, .listen_fd = listen_fd, .audit = audit};
  struct error err = {0};
  int null = open("/dev/null", O_RDWR | O_CLOEXEC);

  if (null >= 0) {
    dup2(null, 0);
    dup2(null, 1);
    dup2(null, 2);
  }
  setsid();
  prctl(PR_SET_NAME, "agentrt-egress", 0, 0, 0);
  o->stop_fd = pidfd;
  o->ctl_fd = listen_fd;
  o->on_ctl = on_ctl;
  o->on_event = on_dns_event;
  o->ud = &h;
  if (egress_resolver_run(o, &err) < 0)
    _exit(1);
  /* closing the netfilter socket waits for the kernel's RCU clean-up of the
   * transaction (~13 ms, egress-driver bench) and delete waits for our exit */
  proc_leave_fd_teardown_to_child();
  _exit(0);
}

static int save_helper_pid(struct container *c, pid_t pid, struct error *err)
{
  uint64_t st = 0;
  char buf[64];
  int n;

  proc_start_time(pid, &st, NULL);
  n = snprintf(buf, sizeof buf, "%d %llu", pid, (unsigned long long)st);
  return write_file_atomic_at(c->dirfd, "egress.pid", buf, (size_t)n, err);
}

int egress_setup(struct container *c, const struct profile_egress *pe, pid_t init_pid,
                 struct error *err)
{
  struct egress_resolver_opts o;
  struct egress_policy *p;
  cleanup_close int netns = -1;
  char who[32];
  int listen_fd = -1, pidfd = -1, ret = -1;
  int pp[2] = {-1, -1};
  pid_t pid, hpid = -1;
  struct audit_log *audit = NULL;

  if (pe == NULL || pe->def == PROFILE_EGRESS_OFF)
    return 0;
  if (c->config->process && c->config->process->caps.bounding & (1ULL << 12))
    return error_set(err, 0,
                     "egress policy in force: CAP_NET_ADMIN would let the container "
                     "change its own rules; refused");
  p = xmalloc0(sizeof *p);
  memset(&o, 0, sizeof o);
  o.nl_fd = o.udp4_fd = o.udp6_fd = o.tcp4_fd = o.tcp6_fd = o.stop_fd = o.ctl_fd = -1;
  o.policy = p;
  if (policy_from_profile(pe, p, err) < 0)
    goto out;
  snprintf(who, sizeof who, "%d", init_pid);
  netns = procfs_open_ns(who, "net", err);
  if (netns < 0)
    goto out;
  /* refuses the runtime's own netns: never rules in the host's namespace */
  if (egress_resolver_open(netns, 53, &o, err) < 0)
    goto out;
  if (loopback_up_in(o.udp4_fd, err) < 0)
    goto out;
  if (send_batch(o.nl_fd, p, false, err) < 0)
    goto out;
  if ((listen_fd = ctl_listen(c->dirfd, err)) < 0)
    goto out;
  pidfd = (int)syscall(SYS_pidfd_open, init_pid, 0);
  if (pidfd < 0) {
    error_errno(err, "egress: pidfd of the init");
    goto out;
  }
  if (pipe2(pp, O_CLOEXEC) < 0) {
    error_errno(err, "egress: pipe");
    goto out;
  }
  audit = audit_cli_open(c->dirfd, c->id); /* written by the monitor at create */
  pid = fork();
  if (pid < 0) {
    error_errno(err, "egress: fork helper");
    goto out;
  }
  if (pid == 0) {
    /* second fork: the helper must not stay our child (create exits) */
    pid_t gc = fork();
    if (gc != 0) {
      ssize_t w = write(pp[1], &gc, sizeof gc);
      _exit(gc < 0 || w != sizeof gc ? 1 : 0);
    }
    close(pp[0]);
    close(pp[1]);
    close(c->dirfd);
    helper_main(&o, listen_fd, pidfd, audit);
  }
  close(pp[1]);
  pp[1] = -1;
  waitpid(pid, NULL, 0);
  if (read(pp[0], &hpid, sizeof hpid) != sizeof hpid || hpid <= 0) {
    error_set(err, 0, "egress: the helper did not start");
    goto out;
  }
  if (save_helper_pid(c, hpid, err) < 0)
    goto out;
  ret = 0;
out:
  if (pp[0] >= 0)
    close(pp[0]);
  if (pp[1] >= 0)
    close(pp[1]);
  if (listen_fd >= 0)
    close(listen_fd);
  if (pidfd >= 0)
    close(pidfd);
  audit_log_close(audit);
  egress_resolver_close(&o);
  egress_policy_free(p);
  free(p);
  return ret;
}

void egress_teardown(struct container *c)
{
  cleanup_free char *data = NULL;
  struct error e = {0};
  unsigned long long st = 0;
  size_t len = 0;
  int pid = 0;

  if (read_file_at(c->dirfd, "egress.pid", 256, &data, &len, &e) < 0)
    return;
  if (sscanf(data, "%d %llu", &pid, &st) != 2 || pid <= 0)
    return;
  /* it leaves by itself when the init exits (delete killed it before):
   * wait for that, and SIGKILL only when it does not (a kill now would make
   * us wait for its sockets' teardown); make sure before the state goes */
  if (proc_alive(pid, st) && proc_kill_wait(pid, st, 0, 1000) < 0 &&
      proc_kill_wait(pid, st, SIGKILL, 1000) < 0)
    log_warning("delete `%s`: egress helper %d did not exit", c->id, pid);
  /* a network namespace joined by path (a pod's) outlives the container:
   * take our table out of it */
  if (container_load_config(c, &e) == 0) {
    const struct oci_namespace *ns = oci_config_namespace(c->config, OCI_NS_NETWORK);
    if (ns && ns->path && *ns->path) {
      cleanup_close int fd = open(ns->path, O_RDONLY | O_CLOEXEC);
      if (fd >= 0 && nft_table_delete(fd, &e) < 0)
        log_warning("delete `%s`: egress table: %s", c->id, e.msg);
    }
  }
}

/* --------------------------------------------------------- agentrt egress */

int cmd_egress(const struct global_opts *g, int argc, char **argv, struct error *err)
{
  struct container *c = NULL;
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  cleanup_free char *req = NULL;
  char buf[4096];
  int fd = -1, ret = -1;
  ssize_t n;
  bool failed = false;

  if (argc < 3 || strcmp(argv[1], "--help") == 0) {
    printf("Usage: agentrt egress ID list\n"
           "       agentrt egress ID allow ENTRY\n"
           "       agentrt egress ID deny ENTRY\n"
           "ENTRY: 203.0.113.0/24, 203.0.113.10:443/tcp, pypi.org, *.example.org:443\n");
    return argc < 3 ? error_set(err, 0, "egress: expected ID and list|allow|deny") : 0;
  }
  if (strcmp(argv[2], "list") == 0 && argc == 3)
    req = xstrdup("list");
  else if ((strcmp(argv[2], "allow") == 0 || strcmp(argv[2], "deny") == 0) && argc == 4) {
    struct egress_entry e;
    if (egress_entry_parse(argv[3], &e, err) < 0)
      return error_prefix(err, "egress %s", argv[2]);
    req = xfmt("%s %s", argv[2], argv[3]);
  } else
    return error_set(err, 0, "egress: expected list, allow ENTRY or deny ENTRY");
  if (container_load(g, argv[1], false, &c, err) < 0)
    return -1;
  if (c->status == STATUS_STOPPED) {
    error_set(err, 0, "egress `%s`: container not running", c->id);
    goto out;
  }
  snprintf(sa.sun_path, sizeof sa.sun_path, "/proc/self/fd/%d/" CTL_SOCK, c->dirfd);
  fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
    error_errno(err, "egress `%s`: no egress policy helper (is the profile's egress off?)", c->id);
    goto out;
  }
  if (send(fd, req, strlen(req), MSG_NOSIGNAL) < 0) {
    error_errno(err, "egress `%s`: send", c->id);
    goto out;
  }
  shutdown(fd, SHUT_WR);
  while ((n = recv(fd, buf, sizeof buf - 1, 0)) > 0) {
    buf[n] = '\0';
    if (strncmp(buf, "error ", 6) == 0) {
      failed = true;
      buf[strcspn(buf, "\n")] = '\0';
      error_set(err, 0, "egress `%s`: %s", c->id, buf + 6);
      break;
    }
    if (strcmp(buf, "ok\n") != 0)
      fputs(buf, stdout);
  }
  ret = failed ? -1 : 0;
out:
  if (fd >= 0)
    close(fd);
  container_free(c);
  return ret;
}
