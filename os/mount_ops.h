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
/* Descriptors of layers an overlay option named by /proc/self/fd (below),
 * to close once the file system is made. */
struct mnt_held {
  int *fds;
  size_t n;
};
/* fsconfig() KEY=VALUE on the context fsfd of a TYPE file system.  It takes
 * at most 255 bytes of a value (mount(2) took a page): an overlay's lowerdir,
 * upperdir or workdir longer than that is given layer by layer (`lowerdir+`,
 * Linux 6.8) or by /proc/self/fd names of layers opened here, held in *h
 * until the file system is made (mnt_held_close after FSCONFIG_CMD_CREATE). */
int mnt_fs_set(int fsfd, const char *type, const char *key, const char *value, struct mnt_held *h,
               struct error *err);
void mnt_held_close(struct mnt_held *h);
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
