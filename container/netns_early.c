/* netns_early.c - see netns_early.h */
#include "container/netns_early.h"

#include <linux/sockios.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/failpoint.h"
#include "netfilter/egress.h"
#include "os/early_thread.h"

bool netns_early_wanted(const struct oci_config *c, bool in_userns)
{
  const struct oci_namespace *net, *user;

  if (in_userns || c->linux == NULL)
    return false;
  net = oci_config_namespace(c, OCI_NS_NETWORK);
  user = oci_config_namespace(c, OCI_NS_USER);
  /* a user namespace owns the network namespaces made in it: the init's */
  return net != NULL && (net->path == NULL || net->path[0] == '\0') && user == NULL;
}

/* The thread: no allocation, no error strings (only errno), so that it may
 * run beside anything the main thread does, a fork included. */
static void *make_netns(void *arg)
{
  struct netns_early *n = arg;
  int s;

  /* on failure the clone makes the namespace (build-fp: netns-early) */
  if (FAILPOINT_FAILS("netns-early"))
    return NULL;
  /* a thread has namespaces of its own: the process's stay as they are */
  if (unshare(CLONE_NEWNET) < 0)
    return NULL;
  /* A new network namespace starts with `lo` down; runc and crun bring it
   * up (the init does for one made by the clone).  The namespace's fd
   * comes from that socket (SIOCGSKNS): no path under /proc to trust. */
  s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0)
    return NULL;
  if (netns_lo_up(s) == 0)
    n->fd = ioctl(s, SIOCGSKNS);
  close(s);
  return NULL;
}

void netns_early_start(struct netns_early *n)
{
  n->fd = -1;
  /* 0: an ASan build's thread has run already (os/early_thread.h) */
  n->started = early_thread_start(&n->thread, make_netns, n) == 1;
}

int netns_early_take(struct netns_early *n)
{
  if (n->started) {
    pthread_join(n->thread, NULL);
    n->started = false;
  }
  return n->fd;
}

void netns_early_close(struct netns_early *n)
{
  netns_early_take(n);
  if (n->fd >= 0)
    close(n->fd);
  n->fd = -1;
}
