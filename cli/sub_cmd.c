/* sub_cmd.c - `agentrt sub ...` from the full binary: the same client as
 * /run/agentrt/bin/agentrt (monitor/client/agentrt-client.c, embedded),
 * executed from a sealed memfd, so that an image that ships agentrt itself
 * speaks the sub-agent API (docs/subagents.md) with one implementation. */
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/util.h"

extern const unsigned char agentrt_subclient_blob[];
extern const size_t agentrt_subclient_blob_len;
extern char **environ;

int cmd_sub(const struct global_opts *g, int argc, char **argv, struct error *err)
{
  cleanup_free char **args = xmalloc0((size_t)(argc + 2) * sizeof *args);
  int fd = memfd_create("agentrt-sub", MFD_CLOEXEC | MFD_ALLOW_SEALING);

  (void)g;
  if (fd < 0)
    return error_errno(err, "sub: memfd");
  if (write(fd, agentrt_subclient_blob, agentrt_subclient_blob_len) !=
          (ssize_t)agentrt_subclient_blob_len ||
      fcntl(fd, F_ADD_SEALS, F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE) < 0) {
    error_errno(err, "sub: write the client");
    close(fd);
    return -1;
  }
  args[0] = "agentrt";
  for (int i = 0; i < argc; i++)
    args[i + 1] = argv[i]; /* argv[0] is "sub" */
  fexecve(fd, args, environ);
  error_errno(err, "sub: execute the client");
  close(fd);
  return -1;
}
