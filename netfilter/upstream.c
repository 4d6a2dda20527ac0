/* upstream.c - the host's resolvers as the egress resolver's upstream
 * (`nameserver` lines of resolv.conf, parsed by the one grammar,
 * common/egress_grammar.c).
 *
 * The profile's "egress" object is parsed by profile/, its entries checked
 * there with that grammar, so `profile check` refuses what `create` would.
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
