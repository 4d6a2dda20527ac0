/* resolver_sockets.c - the resolver's sockets inside the container netns.
 *
 * Netlink (for the dns sets), UDP and TCP on 127.0.0.1:port and [::1]:port
 * are created in the container netns by netns_sockets() and bound from
 * here.  IP_FREEBIND lets us bind before `lo` is up.  IPv6 sockets are
 * optional: a netns without IPv6 just has none.
 */
#include "netfilter/egress.h"

#include <arpa/inet.h>
#include <linux/netlink.h>
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "common/util.h"

static int bind_local(int fd, int family, uint16_t port, bool tcp)
{
  int one = 1;
  struct sockaddr_in a4 = {
      .sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  struct sockaddr_in6 a6 = {
      .sin6_family = AF_INET6, .sin6_port = htons(port), .sin6_addr = IN6ADDR_LOOPBACK_INIT};

  if (family == AF_INET) {
    setsockopt(fd, IPPROTO_IP, IP_FREEBIND, &one, sizeof one);
  } else {
    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    setsockopt(fd, IPPROTO_IPV6, IPV6_FREEBIND, &one, sizeof one);
  }
  if (tcp)
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (family == AF_INET ? bind(fd, (struct sockaddr *)&a4, sizeof a4)
                        : bind(fd, (struct sockaddr *)&a6, sizeof a6))
    return -1;
  return tcp ? listen(fd, 16) : 0;
}

void egress_resolver_close(struct egress_resolver_opts *o)
{
  int *fds[] = {&o->nl_fd, &o->udp4_fd, &o->udp6_fd, &o->tcp4_fd, &o->tcp6_fd};

  for (size_t i = 0; i < ARRAY_SIZE(fds); i++) {
    if (*fds[i] >= 0)
      close(*fds[i]);
    *fds[i] = -1;
  }
}

int egress_resolver_open(int netns_fd, uint16_t port, struct egress_resolver_opts *o,
                         struct error *err)
{
  /* one child makes all five sockets: netlink, udp4, udp6, tcp4, tcp6 */
  static const int dom[5] = {AF_NETLINK, AF_INET, AF_INET6, AF_INET, AF_INET6};
  static const int typ[5] = {SOCK_RAW, SOCK_DGRAM | SOCK_NONBLOCK, SOCK_DGRAM | SOCK_NONBLOCK,
                             SOCK_STREAM | SOCK_NONBLOCK, SOCK_STREAM | SOCK_NONBLOCK};
  static const int pro[5] = {NETLINK_NETFILTER, 0, 0, 0, 0};
  int fds[5] = {-1, -1, -1, -1, -1};
  int *out[5] = {&o->nl_fd, &o->udp4_fd, &o->udp6_fd, &o->tcp4_fd, &o->tcp6_fd};
  int sock_errno;

  o->nl_fd = o->udp4_fd = o->udp6_fd = o->tcp4_fd = o->tcp6_fd = -1;
  errno = 0;
  if (netns_sockets(netns_fd, 5, dom, typ, pro, fds, err) < 0)
    return -1;
  /* why a socket is missing (EMFILE under a low limit, not "no IPv4") */
  sock_errno = errno != 0 ? errno : EAFNOSUPPORT;
  for (int i = 0; i < 5; i++)
    *out[i] = fds[i];
  if (o->nl_fd < 0 || nft_socket_setup(o->nl_fd, err) < 0) {
    if (o->nl_fd < 0)
      error_set(err, sock_errno, "resolver: netfilter netlink socket");
    egress_resolver_close(o);
    return -1;
  }
  for (int i = 1; i < 5; i++) {
    if (fds[i] < 0 || bind_local(fds[i], dom[i], port, i >= 3) == 0)
      continue;
    if (dom[i] == AF_INET) {
      error_errno(err, "resolver: bind %s 127.0.0.1:%u", i >= 3 ? "tcp" : "udp", port);
      egress_resolver_close(o);
      return -1;
    }
    close(fds[i]); /* no IPv6 in this netns */
    *out[i] = -1;
  }
  if (o->udp4_fd < 0 || o->tcp4_fd < 0) {
    egress_resolver_close(o);
    return error_set(err, sock_errno, "resolver: ipv4 sockets");
  }
  return 0;
}
