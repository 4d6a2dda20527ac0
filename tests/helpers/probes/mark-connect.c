/* mark-connect - a TCP connection from a socket carrying a firewall mark.
 *
 * Usage: mark-connect MARK ADDRESS PORT
 * Sets SO_MARK to MARK (hex or decimal; 0: none) on a TCP socket, connects to ADDRESS:PORT
 * (IPv4 or IPv6), writes stdin to it, shuts down its writing side and copies what comes back
 * to stdout.  Prints "mark: ERROR" to stderr and exits 1 when SO_MARK is refused, 3 when the
 * connection fails; 2 on a usage error.  Used by secrets-proxy.bats: a socket that carries
 * the proxy's own mark must still be redirected to the proxy (proxy-mark). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
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
  unsigned long mark;
  char buf[4096], *end;
  ssize_t n;
  int s;

  if (argc != 4)
    goto usage;
  mark = strtoul(argv[1], &end, 0);
  if (*end != '\0')
    goto usage;
  if (inet_pton(AF_INET, argv[2], &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons((unsigned short)atoi(argv[3]));
    len = sizeof *v4;
  } else if (inet_pton(AF_INET6, argv[2], &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons((unsigned short)atoi(argv[3]));
    len = sizeof *v6;
  } else {
    goto usage;
  }
  s = socket(ss.ss_family, SOCK_STREAM, 0);
  if (s < 0) {
    perror("socket");
    return 3;
  }
  if (mark != 0 &&
      setsockopt(s, SOL_SOCKET, SO_MARK, &(unsigned){(unsigned)mark}, sizeof(unsigned)) < 0) {
    fprintf(stderr, "mark: %s\n", strerror(errno));
    return 1;
  }
  if (connect(s, (struct sockaddr *)&ss, len) < 0) {
    perror("connect");
    return 3;
  }
  while ((n = read(0, buf, sizeof buf)) > 0)
    if (write(s, buf, (size_t)n) != n)
      return 3;
  shutdown(s, SHUT_WR);
  while ((n = read(s, buf, sizeof buf)) > 0)
    if (write(1, buf, (size_t)n) != n)
      return 3;
  return 0;
usage:
  fprintf(stderr, "usage: mark-connect MARK ADDRESS PORT\n");
  return 2;
}
