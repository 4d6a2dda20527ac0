/* mount_ops.h - the fd-based mount primitives on the new mount API, shared
 * by the container's mount set-up (container/mounts.h) and the workspace's
 * rollback.  `what` and `dest` only name things in errors.
 *
 * Every mount the runtime makes inside a container rootfs uses the new mount
 * API: a detached mount (open_tree(OPEN_TREE_CLONE) for binds, fsopen() +
 * fsmount() for filesystems) is configured with mount_setattr() and then
 * attached with move_mount() onto an O_PATH fd of the target that safepath.h
 * resolved inside the root.  Nothing is mounted "by path", so a symlink swapped
 * in after the check cannot redirect a mount (CVE-2021-30465, CVE-2024-45310).
 */
#ifndef AGENTRT_MOUNT_OPS_H
#define AGENTRT_MOUNT_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mount.h>

#include "common/error.h"

/* Clone the tree at dirfd/path (path "" = dirfd itself) as a detached mount. */
int mnt_clone(int dirfd, const char *path, bool recursive, const char *what, struct error *err);
/* Create a new detached filesystem mount: fsopen(type) with source, data
 * words, superblock words and the mount attributes attr. */
int mnt_new_fs(const char *type, const char *source, const char *data, const char *const *sb_words,
               size_t n_sb, uint64_t attr, struct error *err);
/* mount_setattr() on mntfd (recursive: the whole tree). */
int mnt_setattr(int mntfd, bool recursive, uint64_t set, uint64_t clr, uint64_t propagation,
                const char *dest, struct error *err);
/* Propagation flags (MS_SHARED... | MS_REC) applied to an attached mount. */
int mnt_set_propagation(int mntfd, unsigned long propagation, const char *dest, struct error *err);
/* Make the detached mount mntfd (and with recursive its submounts) show ids
 * through the user namespace usernsfd (an idmapped mount). */
int mnt_set_idmap(int mntfd, int usernsfd, bool recursive, const char *dest, struct error *err);
/* Attach detached mntfd onto the O_PATH fd targetfd. */
int mnt_attach(int mntfd, int targetfd, const char *what, const char *dest, struct error *err);
/* Bind the object open at srcfd (any fd, "" path) onto targetfd, read-only if ro. */
int mnt_bind_fd(int srcfd, int targetfd, bool ro, const char *what, const char *dest,
                struct error *err);

/* The profile's protected path dest (a directory if is_dir) of a bind
 * workspace, bound onto itself read-only, nosuid, nodev, noexec; when
 * missing: skipped if only_existing, else created below rootfd. */
int mnt_protect(int rootfd, const char *dest, bool is_dir, bool only_existing, struct error *err);

#endif
