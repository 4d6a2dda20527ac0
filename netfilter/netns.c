/* netns.c - sockets inside another network namespace, without moving there.
 *
 * A vfork-like child (shared memory and fd table, we wait) does
 * setns(CLONE_NEWNET) and creates the sockets, which land in our fd table; a
 * socket keeps the netns it was created in for its whole life.  The caller's own netns is never
 * changed, so a failure halfway can never leave the runtime (or the host) in the wrong namespace.
 */
#include "netfilter/egress.h"

#include <errno.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/neighbour.h>
#include <linux/nexthop.h>
#include <linux/rtnetlink.h>

#include "common/util.h"

#define NETNS_MAX_SOCKETS 8
#define CHILD_STACK 16384

struct child_args {
  int netns_fd;
  size_t n;
  const int *domain, *type, *proto;
  int fds[NETNS_MAX_SOCKETS];
  int errs[NETNS_MAX_SOCKETS];
  int setns_err;
};

/* Runs in the child, which shares our memory and fd table (CLONE_VM |
 * CLONE_FILES) while we wait (CLONE_VFORK): only raw system calls here.
 * setns() changes the child's namespaces, never ours. */
static int child_main(void *arg)
{
  struct child_args *a = arg;

  if (setns(a->netns_fd, CLONE_NEWNET) < 0) {
    a->setns_err = errno;
    return 0;
  }
  for (size_t i = 0; i < a->n; i++) {
    a->fds[i] = socket(a->domain[i], a->type[i] | SOCK_CLOEXEC, a->proto[i]);
    a->errs[i] = a->fds[i] < 0 ? errno : 0;
  }
  return 0;
}

static int same_netns_as_self(int netns_fd, bool *ret)
{
  struct stat a, b;

  if (fstat(netns_fd, &a) < 0 || stat("/proc/self/ns/net", &b) < 0)
    return -1;
  *ret = a.st_dev == b.st_dev && a.st_ino == b.st_ino;
  return 0;
}

int netns_sockets(int netns_fd, size_t n, const int *domain, const int *type, const int *proto,
                  int *ret_fds, struct error *err)
{
  _Alignas(16) char stack[CHILD_STACK];
  struct child_args a = {
      .netns_fd = netns_fd, .n = n, .domain = domain, .type = type, .proto = proto};
  bool same = false;
  pid_t pid;

  if (n == 0 || n > NETNS_MAX_SOCKETS)
    return error_set(err, EINVAL, "netns sockets");
  if (same_netns_as_self(netns_fd, &same) < 0)
    return error_errno(err, "stat network namespace");
  /* Never install rules in (or listen on) the caller's own namespace: for the
   * runtime that is the host's. */
  if (same)
    return error_set(err, 0, "network namespace is the caller's own (host network?): refusing");
  for (size_t i = 0; i < n; i++)
    a.fds[i] = -1;
  pid = clone(child_main, stack + sizeof stack, CLONE_VM | CLONE_VFORK | CLONE_FILES | SIGCHLD, &a);
  if (pid < 0)
    return error_errno(err, "clone");
  while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
    ;
  if (a.setns_err != 0)
    return error_set(err, a.setns_err, "setns into network namespace");
  for (size_t i = 0; i < n; i++) {
    ret_fds[i] = a.fds[i];
    if (a.errs[i] != 0)
      errno = a.errs[i]; /* the caller sees the last failure when an fd is -1 */
  }
  return 0;
}

int netns_lo_up(int sock)
{
  struct ifreq ifr;

  memset(&ifr, 0, sizeof ifr);
  snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
  if (ioctl(sock, SIOCGIFFLAGS, &ifr) < 0)
    return -1;
  if (ifr.ifr_flags & IFF_UP)
    return 0;
  ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
  return ioctl(sock, SIOCSIFFLAGS, &ifr);
}

/* One dump (type, family; hdrlen: its family header's size) through fd,
 * its messages given to egress_gw_nl_parse.  0, or -1 with errno. */
static int gw_dump(int fd, uint16_t type, uint8_t family, size_t hdrlen, uint32_t seq,
                   struct nft_build_opts *o)
{
  struct {
    struct nlmsghdr n;
    uint8_t body[16]; /* rtmsg, nhmsg, ndmsg: family first, the rest 0 */
  } req;
  char buf[32768];

  memset(&req, 0, sizeof req);
  req.n.nlmsg_len = (uint32_t)NLMSG_LENGTH(hdrlen);
  req.n.nlmsg_type = type;
  req.n.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  req.n.nlmsg_seq = seq;
  req.body[0] = family;
  if (send(fd, &req, req.n.nlmsg_len, 0) < 0)
    return -1;
  for (int rounds = 0; rounds < 4096; rounds++) {
    ssize_t n = recv(fd, buf, sizeof buf, MSG_TRUNC);
    int r;
    if (n <= 0 || (size_t)n > sizeof buf) {
      errno = n < 0 ? errno : EMSGSIZE;
      return -1;
    }
    r = egress_gw_nl_parse(buf, (size_t)n, seq, o);
    if (r != 0) {
      errno = r < 0 ? -r : 0;
      return r < 0 ? -1 : 0;
    }
  }
  errno = E2BIG;
  return -1;
}

int netns_gateways_read(int fd, struct nft_build_opts *o)
{
  o->n_gw4 = o->n_gw6 = 0;
  o->over4 = o->over6 = false;
  if (gw_dump(fd, RTM_GETROUTE, AF_INET, sizeof(struct rtmsg), 11, o) < 0 ||
      gw_dump(fd, RTM_GETROUTE, AF_INET6, sizeof(struct rtmsg), 12, o) < 0)
    return -1;
  /* a kernel without nexthop objects refuses the dump: none */
  if (gw_dump(fd, RTM_GETNEXTHOP, AF_UNSPEC, sizeof(struct nhmsg), 13, o) < 0 && errno != EINVAL &&
      errno != EOPNOTSUPP && errno != EAFNOSUPPORT)
    return -1;
  if (o->n_gw4 + o->n_gw6 == 0)
    return 0;
  return gw_dump(fd, RTM_GETNEIGH, AF_UNSPEC, sizeof(struct ndmsg), 14, o);
}

/* One neighbour request for addr on ifindex, acked: type, flags, state */
static int neigh_req(int fd, uint16_t type, uint16_t flags, uint16_t state, uint8_t ntf, int family,
                     const uint8_t *addr, int ifindex)
{
  struct {
    struct nlmsghdr n;
    struct ndmsg nd;
    struct rtattr a;
    uint8_t addr[16];
  } req;
  char buf[1024];
  size_t alen = family == AF_INET ? 4 : 16;
  ssize_t n;

  if (ifindex <= 0) {
    errno = ENODEV;
    return -1;
  }
  memset(&req, 0, sizeof req);
  req.n.nlmsg_len = NLMSG_LENGTH(sizeof req.nd) + RTA_LENGTH(alen);
  req.n.nlmsg_type = type;
  req.n.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
  req.n.nlmsg_seq = 2;
  req.nd.ndm_family = (uint8_t)family;
  req.nd.ndm_ifindex = ifindex;
  req.nd.ndm_state = state;
  req.nd.ndm_flags = ntf;
  req.a.rta_type = NDA_DST;
  req.a.rta_len = (unsigned short)RTA_LENGTH(alen);
  memcpy(req.addr, addr, alen);
  if (send(fd, &req, req.n.nlmsg_len, 0) < 0)
    return -1;
  n = recv(fd, buf, sizeof buf, 0);
  if (n < (ssize_t)NLMSG_LENGTH(sizeof(struct nlmsgerr)))
    return -1;
  {
    const struct nlmsghdr *h = (const struct nlmsghdr *)buf;
    const struct nlmsgerr *e = NLMSG_DATA(h);
    if (h->nlmsg_type == NLMSG_ERROR && e->error != 0) {
      errno = -e->error;
      return -1;
    }
  }
  return 0;
}

int netns_neigh_solicit(int fd, int family, const uint8_t *addr, int ifindex)
{
  return neigh_req(fd, RTM_NEWNEIGH, NLM_F_CREATE | NLM_F_REPLACE, NUD_NONE, NTF_USE, family, addr,
                   ifindex);
}

int netns_neigh_forget(int fd, int family, const uint8_t *addr, int ifindex)
{
  if (neigh_req(fd, RTM_DELNEIGH, 0, 0, 0, family, addr, ifindex) < 0 && errno != ENOENT)
    return -1;
  return 0;
}
