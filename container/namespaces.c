/* namespaces.c - see namespaces.h */
#include "container/namespaces.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/util.h"
#include "os/pid.h"
#include "os/procfs.h"

/* pid-reuse-subagent-join: a sub-agent's config (monitor/subagents.c) joins its parent's
 * namespaces as /proc/PID/ns/NAME, PID the parent's init, whose start time the annotation
 * io.agentrt.parent-start gives.  An init that died before this create opens them may have
 * given its pid to another process (a host one: the host's namespaces): such a path is opened
 * through a /proc/PID handle checked against that start time.  -2: not such a path. */
static int open_parent_ns(const struct oci_config *c, const char *path, struct error *err)
{
  const char *s = oci_config_annotation(c, "io.agentrt.parent-start");
  uint64_t start = 0;

  if (s == NULL || parse_u64(s, &start) < 0 || start == 0)
    return -2;
  return proc_open_ns_path_identified(path, start, err);
}

int ns_plan_build(const struct oci_config *c, struct ns_plan *p, struct error *err)
{
  memset(p, 0, sizeof *p);
  for (int i = 0; i < OCI_NS_COUNT; i++)
    p->join_fd[i] = -1;
  if (c->linux == NULL)
    return 0;
  for (size_t i = 0; i < c->linux->n_namespaces; i++) {
    const struct oci_namespace *ns = &c->linux->namespaces[i];
    p->has_ns[ns->type] = true;
    if (ns->path == NULL || ns->path[0] == '\0') {
      p->new_ns[ns->type] = true;
      p->clone_flags |= oci_ns_clone_flag(ns->type);
      continue;
    }
    p->join_fd[ns->type] = open_parent_ns(c, ns->path, err);
    if (p->join_fd[ns->type] == -1) {
      error_prefix(err, "linux.namespaces: open %s namespace `%s`", oci_ns_name(ns->type),
                   ns->path);
      ns_plan_close(p);
      return -1;
    }
    if (p->join_fd[ns->type] == -2)
      p->join_fd[ns->type] = open(ns->path, O_RDONLY | O_CLOEXEC);
    if (p->join_fd[ns->type] < 0) {
      error_errno(err, "linux.namespaces: open %s namespace `%s`", oci_ns_name(ns->type), ns->path);
      ns_plan_close(p);
      return -1;
    }
  }
  /* The time namespace is entered through the parent (offsets must be
   * written before anyone is inside): never a clone flag. */
  p->clone_flags &= ~CLONE_NEWTIME;
  return 0;
}

void ns_plan_close(struct ns_plan *p)
{
  for (int i = 0; i < OCI_NS_COUNT; i++) {
    if (p->join_fd[i] >= 0)
      close(p->join_fd[i]);
    p->join_fd[i] = -1;
  }
}

int ns_join_paths(struct ns_plan *p, bool skip_pid_time, struct error *err)
{
  /* user first: joining the others needs CAP_SYS_ADMIN in their owner */
  static const enum oci_ns_type order[] = {OCI_NS_USER, OCI_NS_MOUNT,  OCI_NS_NETWORK, OCI_NS_IPC,
                                           OCI_NS_UTS,  OCI_NS_CGROUP, OCI_NS_PID,     OCI_NS_TIME};
  for (size_t i = 0; i < ARRAY_SIZE(order); i++) {
    enum oci_ns_type t = order[i];
    if (p->join_fd[t] < 0)
      continue;
    if (skip_pid_time && (t == OCI_NS_PID || t == OCI_NS_TIME))
      continue;
    if (t == OCI_NS_USER && p->user_joined)
      continue;
    if (setns(p->join_fd[t], oci_ns_clone_flag(t)) < 0)
      return error_errno(err, "join %s namespace", oci_ns_name(t));
  }
  return 0;
}

static int write_map(pid_t pid, const char *file, const struct oci_idmap *m, size_t n,
                     struct error *err)
{
  char path[64];
  char *buf = NULL;
  size_t len = 0;
  int r;

  if (n == 0)
    return 0;
  for (size_t i = 0; i < n; i++) {
    char line[64];
    int l = snprintf(line, sizeof line, "%u %u %u\n", m[i].container_id, m[i].host_id, m[i].size);
    buf = xrealloc(buf, len + (size_t)l + 1);
    memcpy(buf + len, line, (size_t)l + 1);
    len += (size_t)l;
  }
  snprintf(path, sizeof path, "%d/%s", pid, file);
  r = procfs_write(path, buf, err);
  free(buf);
  return r;
}

int ns_userns_fd(const struct oci_idmap *uids, size_t nu, const struct oci_idmap *gids, size_t ng,
                 struct error *err)
{
  int ready[2], go[2], fd = -1;
  char c = 0, who[32];
  pid_t pid;

  if (pipe2(ready, O_CLOEXEC) < 0)
    return error_errno(err, "idmap: pipe");
  if (pipe2(go, O_CLOEXEC) < 0) {
    close(ready[0]);
    close(ready[1]);
    return error_errno(err, "idmap: pipe");
  }
  pid = fork();
  if (pid == 0) { /* only async-signal-safe calls from here */
    close(ready[0]);
    close(go[1]);
    if (unshare(CLONE_NEWUSER) < 0)
      _exit(1);
    if (write(ready[1], &c, 1) != 1)
      _exit(1);
    while (read(go[0], &c, 1) < 0 && errno == EINTR)
      ;
    _exit(0);
  }
  close(ready[1]);
  close(go[0]);
  if (pid < 0) {
    error_errno(err, "idmap: fork");
    goto out;
  }
  if (read(ready[0], &c, 1) != 1) {
    error_set(err, 0, "idmap: the helper could not make a user namespace");
    goto out;
  }
  snprintf(who, sizeof who, "%d", (int)pid);
  if (write_map(pid, "uid_map", uids, nu, err) < 0 || write_map(pid, "gid_map", gids, ng, err) < 0)
    error_prefix(err, "idmap");
  else
    fd = procfs_open_ns(who, "user", err);
out:
  close(ready[0]);
  close(go[1]); /* the helper leaves; its namespace lives on in fd */
  if (pid > 0)
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
      ;
  return fd;
}

int ns_write_id_maps(pid_t pid, const struct oci_config *c, struct error *err)
{
  const struct oci_linux *l = c->linux;

  if (l == NULL)
    return 0;
  if (geteuid() != 0 && l->n_gid_mappings > 0) {
    char path[64];
    snprintf(path, sizeof path, "%d/setgroups", pid);
    if (procfs_write(path, "deny", err) < 0)
      return -1;
  }
  if (write_map(pid, "uid_map", l->uid_mappings, l->n_uid_mappings, err) < 0)
    return error_prefix(err, "linux.uidMappings");
  if (write_map(pid, "gid_map", l->gid_mappings, l->n_gid_mappings, err) < 0)
    return error_prefix(err, "linux.gidMappings");
  return 0;
}

int ns_write_time_offsets(const struct oci_config *c, struct error *err)
{
  const struct oci_linux *l = c->linux;
  char buf[256];
  size_t len = 0;

  if (l == NULL || l->n_time_offsets == 0)
    return 0;
  for (size_t i = 0; i < l->n_time_offsets && len < sizeof buf - 64; i++)
    len += (size_t)snprintf(buf + len, sizeof buf - len, "%s %lld %u\n", l->time_offsets[i].clock,
                            (long long)l->time_offsets[i].secs, l->time_offsets[i].nanosecs);
  return procfs_write("self/timens_offsets", buf, err);
}
