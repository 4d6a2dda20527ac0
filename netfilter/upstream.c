/* upstream.c - the upstream resolvers of the egress resolver: parsing an
 * address with an optional port ("192.0.2.53", "[2001:db8::53]:5353",
 * "192.0.2.53:5353") and reading the host's resolv.conf.
 *
 * The profile's "egress" object itself is parsed by profile/ (the one
 * grammar of the policy file); the entries and these addresses are checked
 * there with the functions of this folder, so `profile check` refuses what
 * `create` would.
 */
#include "netfilter/egress.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/util.h"

int egress_upstream_parse(const char *s, struct egress_upstream *ret, struct error *err)
{
  char buf[INET6_ADDRSTRLEN + 16];
  struct egress_upstream u = {.port = 53};
  char *host = buf, *port = NULL;
  size_t len = strnlen(s, sizeof buf);

  if (len == 0 || len >= sizeof buf)
    return error_set(err, 0, "invalid upstream resolver `%.*s`", 64, s);
  memcpy(buf, s, len + 1);
  if (buf[0] == '[') {
    char *close = strchr(buf, ']');
    if (close == NULL || (close[1] != '\0' && close[1] != ':'))
      return error_set(err, 0, "invalid upstream resolver `%s`", s);
    *close = '\0';
    host = buf + 1;
    port = close[1] == ':' ? close + 2 : NULL;
  } else if (strchr(buf, ':') != NULL && strchr(buf, ':') == strrchr(buf, ':')) {
    port = strchr(buf, ':');
    *port++ = '\0';
  }
  if (port != NULL) {
    uint32_t v;
    if (parse_u32(port, &v) < 0 || v == 0 || v > 65535)
      return error_set(err, 0, "invalid port in upstream resolver `%s`", s);
    u.port = (uint16_t)v;
  }
  if (inet_pton(AF_INET, host, u.addr) == 1)
    u.family = AF_INET;
  else if (inet_pton(AF_INET6, host, u.addr) == 1)
    u.family = AF_INET6;
  else
    return error_set(err, 0, "invalid upstream resolver address `%s`", s);
  *ret = u;
  return 0;
}

int egress_upstream_from_resolv_conf(const char *path, struct egress_policy *p, struct error *err)
{
  char line[512];
  FILE *f;
  int fd = open(path, O_RDONLY | O_CLOEXEC);

  if (fd < 0)
    return error_errno(err, "open `%s`", path);
  f = fdopen(fd, "r");
  if (f == NULL) {
    close(fd);
    return error_errno(err, "fdopen `%s`", path);
  }
  for (int n = 0; n < 1000 && p->n_upstream < EGRESS_MAX_UPSTREAM && fgets(line, sizeof line, f);
       n++) {
    char addr[128];
    struct error ignored;
    if (sscanf(line, " nameserver %127s", addr) != 1)
      continue;
    /* a zone index (fe80::1%eth0) cannot be used from another netns: skip */
    if (egress_upstream_parse(addr, &p->upstream[p->n_upstream], &ignored) == 0)
      p->n_upstream++;
  }
  fclose(f);
  if (p->n_upstream == 0)
    return error_set(err, 0, "`%s`: no usable nameserver", path);
  return 0;
}
