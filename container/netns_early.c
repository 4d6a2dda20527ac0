/* netns_early.c - see netns_early.h */
#include "container/netns_early.h"

#include <errno.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/failpoint.h"

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
  struct ifreq ifr;
  int fd, s;

  if (FAILPOINT_FAILS("netns-early")) { /* the clone makes it then */
    n->error = ENOSPC;
    return NULL;
  }
  /* a thread has namespaces of its own: the process's stay as they are */
  if (unshare(CLONE_NEWNET) < 0) {
    n->error = errno;
    return NULL;
  }
  /* A new network namespace starts with `lo` down; runc and crun bring it
   * up (the init does for one made by the clone).  The namespace's fd
   * comes from that socket (SIOCGSKNS): no path under /proc to trust. */
  s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  memset(&ifr, 0, sizeof ifr);
  snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
  if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr) < 0 ||
      (ifr.ifr_flags |= IFF_UP | IFF_RUNNING, ioctl(s, SIOCSIFFLAGS, &ifr) < 0) ||
      (fd = ioctl(s, SIOCGSKNS)) < 0) {
    n->error = errno;
    if (s >= 0)
      close(s);
    return NULL;
  }
  close(s);
  n->fd = fd;
  return NULL;
}

void netns_early_start(struct netns_early *n)
{
  pthread_attr_t a;

  n->fd = -1;
  n->error = 0;
  n->started = false;
  if (pthread_attr_init(&a) != 0)
    return;
  /* it calls a few system calls: no 8 MiB stack to map */
  pthread_attr_setstacksize(&a, 64 * 1024);
  n->started = pthread_create(&n->thread, &a, make_netns, n) == 0;
  pthread_attr_destroy(&a);
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
