/* packet-send - one IPv4 UDP datagram written through a packet socket (AF_PACKET).
 *
 * Usage: packet-send IFNAME DSTMAC SRC DST PORT PAYLOAD
 * Builds IPv4 + UDP (source port 40000, no UDP checksum) from SRC to DST:PORT carrying
 * PAYLOAD and sends it out of IFNAME to the link address DSTMAC (aa:bb:cc:dd:ee:ff) with
 * sendto on a SOCK_DGRAM packet socket.  Prints "sent N" or "packet: ERROR" (the socket
 * refused: no CAP_NET_RAW) and exits 0, 1 on an error, 2 on a usage error.  Used by
 * egress.bats: frames sent below IP never pass the egress table (packet-socket). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static uint16_t csum(const uint8_t *p, size_t n)
{
  uint32_t s = 0;

  for (size_t i = 0; i + 1 < n; i += 2)
    s += (uint32_t)(p[i] << 8 | p[i + 1]);
  while (s >> 16)
    s = (s & 0xffff) + (s >> 16);
  return (uint16_t)~s;
}

int main(int argc, char **argv)
{
  struct sockaddr_ll sll = {
      .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_IP), .sll_halen = 6};
  uint8_t pkt[1500] = {0};
  struct in_addr src, dst;
  size_t plen, total;
  unsigned mac[6];
  uint16_t c;
  ssize_t n;
  int s;

  if (argc != 7 || inet_pton(AF_INET, argv[3], &src) != 1 ||
      inet_pton(AF_INET, argv[4], &dst) != 1 ||
      sscanf(argv[2], "%x:%x:%x:%x:%x:%x", &mac[0], &mac[1], &mac[2], &mac[3], &mac[4], &mac[5]) !=
          6)
    goto usage;
  plen = strlen(argv[6]);
  if (plen > 1400)
    goto usage;
  for (int i = 0; i < 6; i++)
    sll.sll_addr[i] = (uint8_t)mac[i];
  sll.sll_ifindex = (int)if_nametoindex(argv[1]);
  if (sll.sll_ifindex == 0)
    goto usage;
  total = 20 + 8 + plen;
  pkt[0] = 0x45;
  pkt[2] = (uint8_t)(total >> 8);
  pkt[3] = (uint8_t)total;
  pkt[8] = 64;
  pkt[9] = IPPROTO_UDP;
  memcpy(pkt + 12, &src, 4);
  memcpy(pkt + 16, &dst, 4);
  c = csum(pkt, 20);
  pkt[10] = (uint8_t)(c >> 8);
  pkt[11] = (uint8_t)c;
  pkt[20] = 40000 >> 8;
  pkt[21] = 40000 & 0xff;
  pkt[22] = (uint8_t)(atoi(argv[5]) >> 8);
  pkt[23] = (uint8_t)atoi(argv[5]);
  pkt[24] = (uint8_t)((8 + plen) >> 8);
  pkt[25] = (uint8_t)(8 + plen);
  memcpy(pkt + 28, argv[6], plen);
  s = socket(AF_PACKET, SOCK_DGRAM, htons(ETH_P_IP));
  if (s < 0) {
    printf("packet: %s\n", strerror(errno));
    return 1;
  }
  n = sendto(s, pkt, total, 0, (struct sockaddr *)&sll, sizeof sll);
  if (n < 0) {
    printf("packet: %s\n", strerror(errno));
    return 1;
  }
  printf("sent %zd\n", n);
  return 0;
usage:
  fprintf(stderr, "usage: packet-send IFNAME DSTMAC SRC DST PORT PAYLOAD\n");
  return 2;
}
