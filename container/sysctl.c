/* sysctl.c - linux.sysctl, written through the verified procfs handle.
 *
 * As runc validates: a key is only allowed when it belongs to a namespace
 * the container has (net.* -> network; the SysV IPC keys and fs.mqueue.* ->
 * ipc; kernel.hostname/domainname -> uts), and that namespace is not the
 * host's (joined by a path to it); anything else would change the host.
 * kernel.hostname is refused (the OCI hostname field sets it, as runc
 * says), kernel.domainname when it contradicts the domainname field.  Keys are dotted names (or
 * sysctl(8)'s slash form, converted as runc does); empty, "." or ".." components are refused so
 * that a key cannot name a file outside /proc/sys.  The
 * write goes through procfs_write() (CVE-2025-52881: no path in /proc can be redirected).
 */
#include "container/setup.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "os/procfs.h"

static const char *const ipc_keys[] = {
    "kernel.msgmax", "kernel.msgmnb", "kernel.msgmni",          "kernel.sem", "kernel.shmall",
    "kernel.shmmax", "kernel.shmmni", "kernel.shm_rmid_forced", NULL,
};

static bool same_ns(int self, const char *who, const char *name)
{
  struct error e = {0};
  cleanup_close int other = procfs_open_ns(who, name, &e);
  struct stat a, b;

  if (other < 0 || fstat(self, &a) < 0 || fstat(other, &b) < 0)
    return false;
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* True when we share our `name` namespace with the runtime that forked us
 * (still in the caller's namespaces) or with pid 1: this runs in the init
 * after it joined the config's namespaces. */
static bool in_hosts_ns(const char *name)
{
  struct error e = {0};
  cleanup_close int self = procfs_open_ns("self", name, &e);
  char parent[16];

  if (self < 0)
    return false;
  snprintf(parent, sizeof parent, "%d", (int)getppid());
  return same_ns(self, parent, name) || same_ns(self, "1", name);
}

/* A namespace of the container's own: a new one, or one joined by path
 * that is not the host's (a `path` to /proc/1/ns/uts shares the host's). */
static bool config_has_ns(const struct oci_config *c, enum oci_ns_type t)
{
  const struct oci_namespace *ns = oci_config_namespace(c, t);

  if (ns == NULL)
    return false;
  return ns->path == NULL || !in_hosts_ns(t == OCI_NS_IPC       ? "ipc"
                                          : t == OCI_NS_NETWORK ? "net"
                                                                : "uts");
}

/* The namespace a key lives in, or -1 when it is not namespaced. */
static int key_namespace(const char *key)
{
  if (strv_contains((char *const *)ipc_keys, key) || str_has_prefix(key, "fs.mqueue."))
    return OCI_NS_IPC;
  if (str_has_prefix(key, "net."))
    return OCI_NS_NETWORK;
  if (strcmp(key, "kernel.hostname") == 0 || strcmp(key, "kernel.domainname") == 0)
    return OCI_NS_UTS;
  return -1;
}

/* The dotted form of a key.  A key whose first separator is "/" is in the
 * slash form of sysctl(8) and Kubernetes ("net/ipv4/conf/eth0.100/rp_filter",
 * where "." is part of a name): dots and slashes swap, as runc converts it
 * ("net.ipv4.conf.eth0/100.rp_filter"). */
static char *key_dotted(const char *key)
{
  char *d = xstrdup(key);
  size_t sep = strcspn(key, "./");

  if (key[sep] == '/')
    for (char *p = d; *p != '\0'; p++)
      *p = *p == '/' ? '.' : *p == '.' ? '/' : *p;
  return d;
}

/* The file below /proc for a dotted key ("sys/net/ipv4/conf/eth0.100/rp_filter"),
 * or NULL when a component is empty, "." or ".." (a key must not name a file
 * outside /proc/sys). */
static char *key_path(const char *dotted)
{
  size_t n = strlen(dotted);
  char *path, *save = NULL;
  cleanup_free char *copy = NULL;

  if (n == 0 || n > 255 || dotted[0] == '.' || dotted[n - 1] == '.' || strstr(dotted, "..") != NULL)
    return NULL;
  copy = xstrdup(dotted);
  path = xstrdup("sys");
  for (char *c = strtok_r(copy, ".", &save); c != NULL; c = strtok_r(NULL, ".", &save)) {
    char *next;
    for (char *p = c; *p != '\0'; p++)
      if (*p == '/')
        *p = '.';
    if (streq(c, ".") || streq(c, "..") || c[0] == '\0') {
      free(path);
      return NULL;
    }
    next = xfmt("%s/%s", path, c);
    free(path);
    path = next;
  }
  return path;
}

static const char *ns_word(int ns)
{
  switch (ns) {
  case OCI_NS_IPC:
    return "ipc";
  case OCI_NS_NETWORK:
    return "network";
  default:
    return "uts";
  }
}

static int apply_one(const struct oci_config *c, const struct oci_kv *kv, struct error *err)
{
  cleanup_free char *path = NULL;
  cleanup_free char *key = NULL;
  int ns;

  if (kv->key == NULL || (path = key_path((key = key_dotted(kv->key)))) == NULL)
    return error_set(err, EINVAL, "linux.sysctl: invalid key `%s`", kv->key ? kv->key : "");
  ns = key_namespace(key);
  if (ns < 0)
    return error_set(err, EPERM, "linux.sysctl: `%s` is not in a separate kernel namespace",
                     kv->key);
  if (!config_has_ns(c, (enum oci_ns_type)ns))
    return error_set(err, EPERM, "linux.sysctl: `%s` requires a private %s namespace", kv->key,
                     ns_word(ns));
  /* as runc: the hostname belongs to the OCI field; a domainname that
   * contradicts the field would leave the container with either */
  if (streq(key, "kernel.hostname"))
    return error_set(err, 0,
                     "linux.sysctl: `kernel.hostname` conflicts with the OCI `hostname` field "
                     "(set that instead)");
  if (streq(key, "kernel.domainname") && c->domainname != NULL &&
      !streq(c->domainname, kv->value != NULL ? kv->value : ""))
    return error_set(err, 0,
                     "linux.sysctl: `kernel.domainname` = `%s` conflicts with the OCI "
                     "`domainname` field `%s`",
                     kv->value != NULL ? kv->value : "", c->domainname);
  if (procfs_write(path, kv->value != NULL ? kv->value : "", err) < 0)
    return error_prefix(err, "linux.sysctl: `%s`", kv->key);
  return 0;
}

int sysctl_apply(const struct oci_config *config, struct error *err)
{
  const struct oci_linux *l = config->linux;

  for (size_t i = 0; l != NULL && i < l->n_sysctl; i++)
    if (apply_one(config, &l->sysctl[i], err) < 0)
      return -1;
  return 0;
}
