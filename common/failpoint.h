/* failpoint.h - debug-only fault injection (tests/security/faults.bats).
 *
 * FAILPOINT("create-after-cgroup") kills the runtime with SIGKILL when the
 * environment variable AGENTRT_FAILPOINT equals that name, so that the tests
 * can prove a later `delete --force` (or the next command) cleans up after a
 * runtime that died at exactly that point.  Only a build made with
 * `make FAILPOINTS=1` (-DAGENTRT_FAILPOINTS, see mk/security.mk) honours it;
 * in a release build the macro expands to nothing and the variable is
 * ignored.  A failpoint in code that runs in a child (the container init)
 * kills that child.  FAILPOINT_FAILS("name") is true instead (a step that
 * is to fail with an error rather than die: a monitor source).
 */
#ifndef AGENTRT_FAILPOINT_H
#define AGENTRT_FAILPOINT_H

#ifdef AGENTRT_FAILPOINTS
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#define FAILPOINT(name)                                                                            \
  do {                                                                                             \
    const char *fp_env_ = getenv("AGENTRT_FAILPOINT");                                             \
    if (fp_env_ != NULL && strcmp(fp_env_, (name)) == 0)                                           \
      raise(SIGKILL);                                                                              \
  } while (0)
#define FAILPOINT_FAILS(name)                                                                      \
  (getenv("AGENTRT_FAILPOINT") != NULL && strcmp(getenv("AGENTRT_FAILPOINT"), (name)) == 0)
#else
#define FAILPOINT(name)                                                                            \
  do {                                                                                             \
  } while (0)
#define FAILPOINT_FAILS(name) false
#endif

#endif
