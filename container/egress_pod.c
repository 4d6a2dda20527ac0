/* egress_pod.c - see egress_pod.h */
#include "container/egress_pod.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "common/util.h"
#include "monitor/egress_helper.h"
#include "netfilter/egress.h"
#include "os/procfs.h"

#define CTL_SOCK EGRESS_CTL_SOCK
#define CTL_MAX EGRESS_CTL_MAX

int egress_check(const struct container *c, const struct profile_egress *pe, struct error *err)
{
  uint64_t bounding = c->config->process ? c->config->process->caps.bounding : 0;

  if (pe == NULL || pe->def == PROFILE_EGRESS_OFF)
    return 0;
  if (bounding & (1ULL << 12))
    return error_set(err, 0,
                     "egress policy in force: CAP_NET_ADMIN would let the container "
                     "change its own rules; refused");
  /* packet-socket: a packet socket's frames leave below IP, never seen by
   * the table; proxy-mark: since Linux 5.17 CAP_NET_RAW may set SO_MARK, and
   * a socket carrying the TLS proxy's own mark is not redirected to it */
  if (bounding & (1ULL << 13))
    return error_set(err, 0,
                     "egress policy in force: CAP_NET_RAW would let the container send past "
                     "the rules (packet sockets, the proxy's socket mark); refused");
  return 0;
}

/* Is o's init alive in the network namespace ns (a stat of it)? */
static bool init_in_netns(const struct container *o, const struct stat *ns)
{
  struct error ignore = {0};
  struct stat st;
  char who[24];

  if (o->status == STATUS_STOPPED || o->state->pid <= 0)
    return false;
  snprintf(who, sizeof who, "%d", o->state->pid);
  cleanup_close int fd = procfs_open_ns(who, "net", &ignore);
  return fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == ns->st_dev && st.st_ino == ns->st_ino;
}

/* The first container of the root other than `self` whose init is alive in
 * the network namespace ns; with `policing`, only one that hosts a policy
 * (its control socket: only those are loaded).  *ret_failed: the root could
 * not be read. */
static char *netns_container(const struct global_opts *g, const char *self, const struct stat *ns,
                             bool policing, bool *ret_failed)
{
  DIR *d = opendir(g->root);
  struct dirent *de;
  char *found = NULL;

  *ret_failed = d == NULL;
  while (d && found == NULL && (de = readdir(d)) != NULL) {
    struct error e = {0};
    struct container *o = NULL;
    cleanup_free char *sock = NULL;

    if (de->d_name[0] == '.' || strcmp(de->d_name, self) == 0 ||
        validate_container_id(de->d_name, &e) < 0)
      continue;
    sock = xfmt("%s/%s", de->d_name, CTL_SOCK);
    if (policing && faccessat(dirfd(d), sock, F_OK, AT_SYMLINK_NOFOLLOW) < 0)
      continue;
    if (container_load(g, de->d_name, 0, &o, &e) < 0)
      continue;
    if (init_in_netns(o, ns))
      found = xstrdup(o->id);
    container_free(o);
  }
  if (d)
    closedir(d);
  return found;
}

/* Does a container of the root other than c have a live init in the network
 * namespace of netns_fd?  The sandbox of a pod can end first (its pause
 * killed, by the OOM killer or by a container of the pod that shares its PID
 * namespace), containerd deletes it at once, and the kubelet stops the pod's
 * other containers only after their grace period: the table must stay for
 * them.  Fails closed: a namespace that cannot be compared is taken as
 * shared. */
static bool netns_shared(const struct global_opts *g, const struct container *c, int netns_fd)
{
  struct stat ns;
  bool failed;
  cleanup_free char *other = NULL;

  if (fstat(netns_fd, &ns) < 0)
    return true;
  other = netns_container(g, c->id, &ns, false, &failed);
  return other != NULL || failed;
}

void egress_teardown(struct container *c, const struct global_opts *g)
{
  struct error e = {0};

  /* the helper (the monitor process) is gone by now: monitor_stop() */
  if (faccessat(c->dirfd, CTL_SOCK, F_OK, AT_SYMLINK_NOFOLLOW) < 0 &&
      faccessat(c->dirfd, EGRESS_POD_MARK, F_OK, AT_SYMLINK_NOFOLLOW) < 0)
    return; /* no policy was in force */
  /* a network namespace joined by path (a pod's) outlives the container:
   * take our table out of it, unless another container of ours still runs
   * there under it (then the last one to leave does) */
  if (container_load_config(c, &e) == 0) {
    const struct oci_namespace *ns = oci_config_namespace(c->config, OCI_NS_NETWORK);
    if (ns && ns->path && *ns->path) {
      cleanup_close int fd = open(ns->path, O_RDONLY | O_CLOEXEC);
      if (fd >= 0 && netns_shared(g, c, fd))
        log_debug("delete `%s`: egress table kept: another container runs in `%s`", c->id,
                  ns->path);
      else if (fd >= 0 && nft_table_delete(fd, &e) < 0)
        log_warning("delete `%s`: egress table: %s", c->id, e.msg);
    }
  }
}

#define NETNS_LOCK ".egress-netns.lock"

/* ----------------------------------------------------------------- pods */

/* containerd's CRI and CRI-O name the pod's sandbox (pause) container */
static const char *annotation2(const struct oci_config *cfg, const char *a, const char *b)
{
  const char *v = oci_config_annotation(cfg, a);
  return v ? v : oci_config_annotation(cfg, b);
}

/* s's policy is in force in the network namespace at `path`: s runs, hosts
 * a policy (its control socket) and its init is in that namespace.
 * *ret_other: s hosts a policy, but in another namespace. */
static bool polices(const struct container *s, const char *path, bool *ret_other)
{
  struct stat ns;

  *ret_other = false;
  if (s->status == STATUS_STOPPED || s->state->pid <= 0 ||
      faccessat(s->dirfd, CTL_SOCK, F_OK, AT_SYMLINK_NOFOLLOW) < 0)
    return false;
  *ret_other = !(stat(path, &ns) == 0 && init_in_netns(s, &ns));
  return !*ret_other;
}

/* Docker's and Podman's --network container:X give the path of X's
 * namespace and no pod annotation: the container of this root that polices
 * that namespace, if any. */
static char *netns_policer(const struct global_opts *g, const char *self, const char *path)
{
  struct stat ns;
  bool failed;

  if (stat(path, &ns) < 0)
    return NULL;
  return netns_container(g, self, &ns, true, &failed);
}

int egress_netns_lock(const struct global_opts *g, const struct container *c)
{
  const struct oci_namespace *ns = oci_config_namespace(c->config, OCI_NS_NETWORK);
  cleanup_free char *path = NULL;

  if (ns == NULL || ns->path == NULL || *ns->path == '\0')
    return -1;
  path = xfmt("%s/" NETNS_LOCK, g->root);
  /* a record lock, not flock(): the monitor and the init, forked while
   * create holds it, must not hold it with their copies of the fd (a flock
   * is the open file's: the next create would wait for the init's exec).
   * The last holder removes the file (egress_netns_unlock): a lock taken
   * on a file removed meanwhile is taken again on the new one. */
  for (int tries = 0; tries < 8; tries++) {
    struct stat a, b;
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
      return -1;
    if (fcntl(fd, F_SETLKW, &(struct flock){.l_type = F_WRLCK, .l_whence = SEEK_SET}) == 0 &&
        fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
      return fd;
    close(fd);
  }
  return -1; /* without it, as before: a second policy fails with EADDRINUSE */
}

void egress_netns_unlock(const struct global_opts *g, int *fd)
{
  cleanup_free char *path = NULL;

  if (*fd < 0)
    return;
  path = xfmt("%s/" NETNS_LOCK, g->root);
  unlink(path); /* still ours: a waiter finds it gone and makes another */
  close(*fd);
  *fd = -1;
}

int egress_pod_sandbox(const struct global_opts *g, const struct container *c, char **ret_id,
                       struct error *err)
{
  const struct oci_namespace *ns = oci_config_namespace(c->config, OCI_NS_NETWORK);
  const char *type, *sb;
  struct container *s = NULL;
  struct error e = {0};
  bool ok, other;

  *ret_id = NULL;
  if (ns == NULL || ns->path == NULL || *ns->path == '\0')
    return 0;
  type = annotation2(c->config, "io.kubernetes.cri.container-type",
                     "io.kubernetes.cri-o.ContainerType");
  sb = annotation2(c->config, "io.kubernetes.cri.sandbox-id", "io.kubernetes.cri-o.SandboxID");
  if (type == NULL && sb == NULL) {
    *ret_id = netns_policer(g, c->id, ns->path);
    return 0;
  }
  if (type == NULL || strcmp(type, "container") != 0 || sb == NULL || strcmp(sb, c->id) == 0)
    return 0;
  /* not ours, or without a policy: this container polices the netns itself */
  if (container_load(g, sb, 0, &s, &e) < 0)
    return 0;
  ok = polices(s, ns->path, &other);
  container_free(s);
  if (other)
    return error_set(err, 0, "egress: sandbox `%s` polices another network namespace than `%s`", sb,
                     ns->path);
  if (ok)
    *ret_id = xstrdup(sb);
  return 0;
}

/* "VERB E1 E2 ..." requests of at most CTL_MAX bytes each, for every entry */
static int send_entries(const struct container *s, const char *verb, char **entries,
                        struct error *err)
{
  cleanup_free char *req = NULL;
  int r = 0;

  for (char **a = entries; a && *a && r == 0;) {
    free(req);
    req = xstrdup(verb);
    for (; *a && strlen(req) + 1 + strlen(*a) <= CTL_MAX; a++) {
      char *next = xfmt("%s %s", req, *a);
      free(req);
      req = next;
    }
    if (strcmp(req, verb) == 0)
      r = error_set(err, 0, "%s entry `%s`: too long", verb, *a);
    else
      r = egress_ctl(s->dirfd, s->id, req, NULL, err);
  }
  return r;
}

int egress_pod_join(const struct global_opts *g, const char *sandbox_id,
                    const struct profile_egress *pe, struct error *err)
{
  struct container *s = NULL;
  int r;

  if ((pe->allow == NULL || pe->allow[0] == NULL) &&
      (pe->ingress_allow == NULL || pe->ingress_allow[0] == NULL))
    return 0;
  if (container_load(g, sandbox_id, 0, &s, err) < 0)
    return -1;
  /* the container's inbound ports too: the pod has one input chain */
  r = send_entries(s, "allow", pe->allow, err);
  if (r == 0)
    r = send_entries(s, "ingress", pe->ingress_allow, err);
  container_free(s);
  return r;
}
