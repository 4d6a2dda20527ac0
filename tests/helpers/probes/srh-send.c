/* srh-send - one UDP datagram over IPv6 with a segment routing header.
 *
 * Usage: srh-send VIA DST PORT MESSAGE
 * Sends MESSAGE to [DST]:PORT with an SRH (routing header type 4, set with
 * IPV6_RTHDR, which needs no capability) whose next segment is VIA: the
 * packet's IPv6 destination is VIA, DST is only in the routing header.
 * Exit 0 when sendto succeeded, 1 when it failed (errno printed). Used by
 * the egress suite: an allowed address must not carry a refused one. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv)
{
  struct sockaddr_in6 sa = {.sin6_family = AF_INET6};
  /* next header, length (8-octet units after the first 8), type 4, segments
   * left 1, last entry 1, flags, tag; then two segments */
  uint8_t srh[8 + 2 * 16] = {0, 4, 4, 1, 1, 0, 0, 0};
  int s;

  if (argc != 5 || inet_pton(AF_INET6, argv[1], srh + 8 + 16) != 1 ||
      inet_pton(AF_INET6, argv[2], &sa.sin6_addr) != 1) {
    fprintf(stderr, "usage: srh-send VIA DST PORT MESSAGE\n");
    return 2;
  }
  memcpy(srh + 8, &sa.sin6_addr, 16); /* the kernel writes the destination there */
  sa.sin6_port = htons((uint16_t)atoi(argv[3]));
  s = socket(AF_INET6, SOCK_DGRAM, 0);
  if (s < 0 || setsockopt(s, IPPROTO_IPV6, IPV6_RTHDR, srh, sizeof srh) < 0) {
    fprintf(stderr, "srh-send: IPV6_RTHDR: %s\n", strerror(errno));
    return 1;
  }
  if (sendto(s, argv[4], strlen(argv[4]), 0, (struct sockaddr *)&sa, sizeof sa) < 0) {
    fprintf(stderr, "srh-send: sendto: %s\n", strerror(errno));
    return 1;
  }
  return 0;
}
