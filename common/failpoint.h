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
 * FAILPOINT_PAUSE("name") holds the runtime there instead: it makes the file named by
 * AGENTRT_FAILPOINT_RESUME with ".reached" appended, then waits (30 s at most) until that file
 * exists, so that a test can change the world at exactly that point (pid-reuse-exec).
 * FAILPOINT_PAUSE_NOTE("name", n) does the same with the number n (a pid the test needs) in
 * the ".reached" file.
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
#define FAILPOINT_PAUSE_NOTE(name, note)                                                           \
  do {                                                                                             \
    const char *fp_go_ = getenv("AGENTRT_FAILPOINT_RESUME");                                       \
    if (FAILPOINT_FAILS(name) && fp_go_ != NULL)                                                   \
      failpoint_pause_(fp_go_, (long long)(note));                                                 \
  } while (0)
#define FAILPOINT_PAUSE(name) FAILPOINT_PAUSE_NOTE(name, -1)
#include <fcntl.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
static inline __attribute__((unused)) void failpoint_pause_(const char *go, long long note)
{
  char reached[4096];
  struct timespec ts = {0, 10 * 1000 * 1000};
  int fd;

  snprintf(reached, sizeof reached, "%s.reached", go);
  fd = open(reached, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd >= 0 && note >= 0)
    dprintf(fd, "%lld\n", note);
  if (fd >= 0)
    close(fd);
  for (int i = 0; i < 3000 && access(go, F_OK) != 0; i++)
    nanosleep(&ts, NULL);
}
#else
#define FAILPOINT(name)                                                                            \
  do {                                                                                             \
  } while (0)
#define FAILPOINT_FAILS(name) false
#define FAILPOINT_PAUSE(name)                                                                      \
  do {                                                                                             \
  } while (0)
#define FAILPOINT_PAUSE_NOTE(name, note)                                                           \
  do {                                                                                             \
    (void)(note);                                                                                  \
  } while (0)
#endif

#endif
