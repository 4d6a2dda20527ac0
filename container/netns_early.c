/* netns_early.c - see netns_early.h */
#include "container/netns_early.h"

#include <linux/sockios.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/failpoint.h"
#include "netfilter/egress.h"

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

/* AddressSanitizer's allocator (GCC 12's libasan) has no fork handler: a
 * thread that starts or ends takes its locks, and a process forked at that
 * moment (the monitor) inherits one held and hangs at its next malloc or
 * free that needs it.  Seen in CI's ASan pass (the monitor not ready after
 * 10 s; an exec's refused calls unanswered for a minute) and reproduced
 * with a thread and a fork in a loop (about 1 in 100).  glibc's fork takes
 * its malloc locks itself, so the release build keeps the overlap; an ASan
 * build joins the thread at once (the same code, no overlap). */
#if defined(__SANITIZE_ADDRESS__)
#define NETNS_EARLY_JOIN_AT_ONCE 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NETNS_EARLY_JOIN_AT_ONCE 1
#endif
#endif

void netns_early_start(struct netns_early *n)
{
  pthread_attr_t a;

  n->fd = -1;
  n->started = false;
  if (pthread_attr_init(&a) != 0)
    return;
  /* it calls a few system calls: no 8 MiB stack to map */
  pthread_attr_setstacksize(&a, 64 * 1024);
  n->started = pthread_create(&n->thread, &a, make_netns, n) == 0;
  pthread_attr_destroy(&a);
#ifdef NETNS_EARLY_JOIN_AT_ONCE
  netns_early_take(n);
#endif
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
