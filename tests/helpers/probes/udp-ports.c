/* udp-ports - one UDP datagram to each of COUNT ports of a host, from one socket.
 *
 * Usage: udp-ports ADDRESS FIRST COUNT
 * Sends "x" to ADDRESS:FIRST, ADDRESS:FIRST+1, ... (IPv4 or IPv6), as fast as the socket
 * takes them, and prints "sent N refused M" (M: sendto failed, e.g. EPERM where the egress
 * policy refuses the packet in the output path).  Exit 0, 2 on a usage error.  Used by the
 * egress suite for a flood of refused packets, each to a port of its own: a shell loop of one
 * program per packet is slow enough on a busy machine (45 ms a packet seen) to stay below the
 * flood limit it means to exceed. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv)
{
  struct sockaddr_storage ss = {0};
  struct sockaddr_in *v4 = (struct sockaddr_in *)&ss;
  struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&ss;
  socklen_t len;
  long first, count, sent = 0, refused = 0;
  char *end;
  int s;

  if (argc != 4)
    goto usage;
  first = strtol(argv[2], &end, 10);
  if (*end != '\0' || first < 1 || first > 65535)
    goto usage;
  count = strtol(argv[3], &end, 10);
  if (*end != '\0' || count < 1 || first + count - 1 > 65535)
    goto usage;
  if (inet_pton(AF_INET, argv[1], &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    len = sizeof *v4;
  } else if (inet_pton(AF_INET6, argv[1], &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    len = sizeof *v6;
  } else {
    goto usage;
  }
  s = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) {
    perror("udp-ports: socket");
    return 1;
  }
  for (long p = first; p < first + count; p++) {
    if (ss.ss_family == AF_INET)
      v4->sin_port = htons((uint16_t)p);
    else
      v6->sin6_port = htons((uint16_t)p);
    if (sendto(s, "x", 1, 0, (struct sockaddr *)&ss, len) == 1)
      sent++;
    else
      refused++;
  }
  close(s);
  printf("sent %ld refused %ld\n", sent, refused);
  return 0;
usage:
  fprintf(stderr, "usage: udp-ports ADDRESS FIRST COUNT\n");
  return 2;
}
