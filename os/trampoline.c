/* trampoline.c - the sealed copy of the exec stub (CVE-2019-5736).
 *
 * runc and crun re-exec a sealed memfd copy of their whole binary; agentrt
 * only needs to get out of its own binary at the very last moment, so it
 * seals a ~1.5 KiB static stub instead and execs through it.  The seals
 * (no write, no grow, no shrink, no more seal changes) are checked with
 * F_GET_SEALS before the fd is used, like runc's IsCloned().
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/memfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/util.h"
#include "os/trampoline.h"

#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U /* Linux 6.3: executable memfd even with vm.memfd_noexec=1 */
#endif

#define STUB_SEALS (F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)

static int memfd_exec_create(void)
{
  int fd = memfd_create("agentrt-stub", MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC);

  if (fd < 0 && errno == EINVAL) /* kernels before 6.3 do not know MFD_EXEC */
    fd = memfd_create("agentrt-stub", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  return fd;
}

int trampoline_prepare(struct error *err)
{
  cleanup_close int fd = memfd_exec_create();
  int seals;

  if (fd < 0)
    return error_errno(err, "exec trampoline: memfd_create");
  if (write_all(fd, agentrt_stub_blob, agentrt_stub_blob_len) < 0)
    return error_errno(err, "exec trampoline: write memfd");
  if (fcntl(fd, F_ADD_SEALS, STUB_SEALS) < 0)
    return error_errno(err, "exec trampoline: seal memfd");
  seals = fcntl(fd, F_GET_SEALS);
  if (seals < 0)
    return error_errno(err, "exec trampoline: F_GET_SEALS");
  if ((seals & STUB_SEALS) != STUB_SEALS)
    return error_set(err, 0, "exec trampoline: memfd seals are 0x%x, expected 0x%x", seals,
                     STUB_SEALS);
  return take_fd(&fd);
}

int trampoline_exec(int fd, char *const argv[], char *const envp[], struct error *err)
{
  static char *const empty[] = {NULL};

  if (argv == NULL || argv[0] == NULL || argv[1] == NULL)
    return error_set(err, 0, "exec trampoline: expected [path, argv0, args...]");
  syscall(SYS_execveat, fd, "", argv, envp ? envp : empty, AT_EMPTY_PATH);
  return error_errno(err, "exec `%s` through the sealed trampoline: execveat", argv[0]);
}
