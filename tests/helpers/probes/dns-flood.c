/* dns-flood - DNS queries over UDP, as fast as one socket sends them.
 *
 * Usage: dns-flood ADDRESS SECONDS SUFFIX
 * Sends queries (type A) for n.SUFFIX, n = 0, 1, 2, ..., to ADDRESS port 53 for SECONDS
 * seconds, reading whatever answers are there between sends without waiting for them, and
 * prints "sent N answered M".  Exit 0, 2 on a usage error.  Used by the egress suite: a
 * container's lookups cost the resolver, which runs in its monitor outside the container's
 * cgroup, and a shell loop of nslookup is far too slow to show what a flood costs. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* header, question n.SUFFIX type A class IN; returns its length or -1 */
static int query(unsigned char *q, size_t cap, unsigned long n, const char *suffix)
{
  char name[300];
  size_t p = 12;

  if (snprintf(name, sizeof name, "%lu.%s", n, suffix) >= (int)sizeof name)
    return -1;
  memset(q, 0, 12);
  q[0] = (unsigned char)(n >> 8);
  q[1] = (unsigned char)n;
  q[2] = 1; /* RD */
  q[5] = 1; /* one question */
  for (const char *c = name; *c != '\0';) {
    size_t l = strcspn(c, ".");
    if (l == 0 || l > 63 || p + l + 1 + 5 > cap)
      return -1;
    q[p++] = (unsigned char)l;
    memcpy(q + p, c, l);
    p += l;
    c += l;
    if (*c == '.')
      c++;
  }
  q[p++] = 0;
  q[p++] = 0;
  q[p++] = 1; /* A */
  q[p++] = 0;
  q[p++] = 1; /* IN */
  return (int)p;
}

int main(int argc, char **argv)
{
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(53)};
  unsigned char q[512], a[512];
  unsigned long sent = 0, answered = 0;
  time_t end;
  char *e;
  long secs;
  int s;

  if (argc != 4 || inet_pton(AF_INET, argv[1], &sa.sin_addr) != 1)
    goto usage;
  secs = strtol(argv[2], &e, 10);
  if (*e != '\0' || secs < 1 || secs > 60)
    goto usage;
  s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof sa) < 0) {
    perror("dns-flood: socket");
    return 1;
  }
  for (end = time(NULL) + secs; time(NULL) < end;) {
    for (int k = 0; k < 64; k++) {
      int len = query(q, sizeof q, sent, argv[3]);
      if (len < 0)
        goto usage;
      if (send(s, q, (size_t)len, MSG_DONTWAIT) == len)
        sent++;
      while (recv(s, a, sizeof a, MSG_DONTWAIT) > 0)
        answered++;
    }
  }
  printf("sent %lu answered %lu\n", sent, answered);
  return 0;
usage:
  fprintf(stderr, "usage: dns-flood ADDRESS SECONDS SUFFIX\n");
  return 2;
}
