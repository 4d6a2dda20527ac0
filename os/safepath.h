/* safepath.h - resolving paths inside a container rootfs without ever
 * leaving it.
 *
 * CVE-2021-30465, CVE-2024-45310, CVE-2019-18837, CVE-2026-41579: mount
 * targets and device paths are attacker-controlled (the image, a shared
 * volume).  Every lookup goes through openat2(RESOLVE_IN_ROOT |
 * RESOLVE_NO_MAGICLINKS) relative to the rootfs fd (with a userspace walker
 * as fallback when openat2 is unavailable), creating missing components
 * inside the root only; mounts then happen through the resulting fd
 * (/proc/thread-self/fd/N or move_mount), and are verified afterwards.
 */
#ifndef AGENTRT_SAFEPATH_H
#define AGENTRT_SAFEPATH_H

#include <stdbool.h>
#include <sys/types.h>

#include "common/error.h"

enum safe_create {
  SAFE_OPEN,   /* nothing is created */
  SAFE_MKDIR,  /* missing components become directories */
  SAFE_MKFILE, /* missing parents become directories, a missing last one an empty file */
};

/* The in-root resolver everything else uses: resolve `path` inside rootfd
 * following symlinks as if rootfd were "/" (except a symlink as the last
 * component when nofollow_last), creating what is missing per `create`.
 * Returns an O_PATH fd. */
int safe_walk(int rootfd, const char *path, enum safe_create create, bool nofollow_last,
              struct error *err);
/* Open `path` (absolute or relative, interpreted inside rootfd). */
int safe_openat(int rootfd, const char *path, int flags, mode_t mode, struct error *err);
/* mkdir -p inside the root; returns an O_PATH|O_DIRECTORY fd of the last dir. */
int safe_mkdir_all(int rootfd, const char *path, mode_t mode, struct error *err);
/* Create (if missing) a mount target of the right kind (dir, or empty file
 * when the source is not a directory) and return an O_PATH fd to it. */
int safe_mount_target(int rootfd, const char *path, bool is_dir, struct error *err);

#endif
