/* errq-recv - what a UDP socket's ICMP error queue hands the program.
 *
 * Usage: errq-recv ADDRESS PORT SOURCE-PORT SECONDS
 * Binds SOURCE-PORT, asks for the error queue (IP_RECVERR, or IPV6_RECVERR for an IPv6
 * ADDRESS), connects to ADDRESS:PORT and for SECONDS sends "x" once a second while printing
 * "recverr ok" or "recverr <errno name>" first, then one line per queued error:
 * "errq from OFFENDER type T code C bytes N [PRINTABLE BYTES]" (the bytes an ICMP error quotes
 * after the transport header).  Used by egress.bats: a host the allowlist refuses must not get
 * bytes into the container through ICMP errors related to an allowed flow.  Exit 0, 1 when
 * the socket cannot be set up, 2 on a usage error. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/errqueue.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static void drain(int s)
{
  for (;;) {
    char data[2048], ctl[512], off[INET6_ADDRSTRLEN] = "?";
    struct iovec iov = {data, sizeof data};
    struct msghdr m = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof ctl};
    ssize_t r = recvmsg(s, &m, MSG_ERRQUEUE | MSG_DONTWAIT);

    if (r < 0)
      return;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c != NULL; c = CMSG_NXTHDR(&m, c)) {
      struct sock_extended_err *e = (struct sock_extended_err *)CMSG_DATA(c);
      struct sockaddr *o = SO_EE_OFFENDER(e);
      if (o->sa_family == AF_INET)
        inet_ntop(AF_INET, &((struct sockaddr_in *)o)->sin_addr, off, sizeof off);
      else if (o->sa_family == AF_INET6)
        inet_ntop(AF_INET6, &((struct sockaddr_in6 *)o)->sin6_addr, off, sizeof off);
      printf("errq from %s type %u code %u bytes %zd [", off, e->ee_type, e->ee_code, r);
      for (ssize_t i = 0; i < r; i++)
        putchar(data[i] >= 32 && data[i] < 127 ? data[i] : '.');
      printf("]\n");
    }
    fflush(stdout);
  }
}

int main(int argc, char **argv)
{
  struct sockaddr_storage to = {0}, me = {0};
  struct sockaddr_in *t4 = (struct sockaddr_in *)&to, *m4 = (struct sockaddr_in *)&me;
  struct sockaddr_in6 *t6 = (struct sockaddr_in6 *)&to, *m6 = (struct sockaddr_in6 *)&me;
  int one = 1, s, v6;
  socklen_t len;
  time_t end, next = 0;

  if (argc != 5)
    goto usage;
  v6 = strchr(argv[1], ':') != NULL;
  if (v6) {
    t6->sin6_family = m6->sin6_family = AF_INET6;
    t6->sin6_port = htons((uint16_t)atoi(argv[2]));
    m6->sin6_port = htons((uint16_t)atoi(argv[3]));
    if (inet_pton(AF_INET6, argv[1], &t6->sin6_addr) != 1)
      goto usage;
    len = sizeof *t6;
  } else {
    t4->sin_family = m4->sin_family = AF_INET;
    t4->sin_port = htons((uint16_t)atoi(argv[2]));
    m4->sin_port = htons((uint16_t)atoi(argv[3]));
    if (inet_pton(AF_INET, argv[1], &t4->sin_addr) != 1)
      goto usage;
    len = sizeof *t4;
  }
  s = socket(to.ss_family, SOCK_DGRAM, 0);
  if (s < 0)
    return 1;
  if ((v6 ? setsockopt(s, IPPROTO_IPV6, IPV6_RECVERR, &one, sizeof one)
          : setsockopt(s, IPPROTO_IP, IP_RECVERR, &one, sizeof one)) == 0)
    printf("recverr ok\n");
  else
    printf("recverr %s\n", strerrorname_np(errno) ? strerrorname_np(errno) : "?");
  fflush(stdout);
  if (bind(s, (struct sockaddr *)&me, len) < 0 || connect(s, (struct sockaddr *)&to, len) < 0) {
    perror("errq-recv: bind/connect");
    return 1;
  }
  end = time(NULL) + atoi(argv[4]);
  while (time(NULL) < end) {
    struct pollfd p = {s, 0, 0};
    if (time(NULL) >= next) {
      send(s, "x", 1, 0);
      next = time(NULL) + 1;
    }
    if (poll(&p, 1, 100) > 0)
      drain(s);
  }
  return 0;
usage:
  fprintf(stderr, "usage: errq-recv ADDRESS PORT SOURCE-PORT SECONDS\n");
  return 2;
}
