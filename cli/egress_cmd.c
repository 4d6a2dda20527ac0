/* egress_cmd.c - `agentrt egress ID list|allow ENTRY|deny ENTRY`: live
 * changes through the container's egress helper (monitor/egress_helper.h). */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "common/util.h"
#include "container/container.h"
#include "monitor/egress_helper.h"
#include "netfilter/egress.h"

int cmd_egress(const struct global_opts *g, int argc, char **argv, struct error *err)
{
  struct container *c = NULL;
  cleanup_free char *req = NULL;
  int ret = -1;
  bool failed = false;
  bool help = argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0);

  if (argc < 3 || help) {
    /* asked for: on stdout, exit 0; a missing argument: on stderr, with the error */
    fprintf(help ? stdout : stderr,
            "Usage: agentrt egress ID list\n"
            "       agentrt egress ID allow ENTRY\n"
            "       agentrt egress ID deny ENTRY\n"
            "ENTRY: 203.0.113.0/24, 203.0.113.10:443/tcp, [2001:db8::/32]:443, pypi.org,\n"
            "       *.example.org:443 (the grammar of the profile's egress.allow)\n"
            "A deny ends the open connections it no longer allows; inbound ports are the\n"
            "profile's ingress.allow and the annotation run.agentrt.ingress.\n");
    return help ? 0 : error_set(err, 0, "egress: expected ID and list|allow|deny");
  }
  if (strcmp(argv[2], "list") == 0 && argc == 3)
    req = xstrdup("list");
  else if ((strcmp(argv[2], "allow") == 0 || strcmp(argv[2], "deny") == 0) && argc == 4) {
    struct egress_entry e;
    if (egress_entry_parse(argv[3], &e, err) < 0)
      return error_prefix(err, "egress %s", argv[2]);
    req = xfmt("%s %s", argv[2], argv[3]);
  } else
    return error_set(err, 0, "egress: expected list, allow ENTRY or deny ENTRY");
  if (container_load(g, argv[1], 0, &c, err) < 0)
    return -1;
  if (c->status == STATUS_STOPPED) {
    error_set(err, 0, "egress `%s`: container not running", c->id);
    goto out;
  }
  failed = egress_ctl(c->dirfd, c->id, req, stdout, err) < 0;
  ret = failed ? -1 : 0;
out:
  container_free(c);
  return ret;
}
