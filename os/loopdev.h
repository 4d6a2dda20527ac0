/* loopdev.h - loop block devices for the runtime's own image files (the
 * size-limited upper layer of an overlay workspace, workspace/image.c).
 *
 * Devices are bound with LOOP_CONFIGURE and LO_FLAGS_AUTOCLEAR: the kernel
 * detaches one when its last opener (an fd or a mounted superblock) goes, so
 * a process that dies, a container whose mount namespace ends, or a reboot
 * leaves no device behind.  Nothing here mounts anything.
 */
#ifndef AGENTRT_LOOPDEV_H
#define AGENTRT_LOOPDEV_H

#include <stdbool.h>
#include <sys/stat.h>

#include "common/error.h"

/* Can this process bind loop devices at all (/dev/loop-control opens)?
 * When not, *why says why in a few words. */
bool loopdev_available(const char **why);
/* Bind a free loop device to backing_fd (open read-write), autoclear; the
 * device stays bound while *ret_fd (open read-write) is.  *ret_nr: N of
 * /dev/loopN.  System calls only (no allocation, no lock of libc's): it runs
 * in a thread beside a fork too.  -1 with errno and *ret_stage (and *ret_nr
 * from LOOPDEV_STAGE_OPEN on), which loopdev_attach_error makes a message. */
enum {
  LOOPDEV_STAGE_CONTROL,
  LOOPDEV_STAGE_FREE,
  LOOPDEV_STAGE_OPEN,
  LOOPDEV_STAGE_BIND,
  LOOPDEV_STAGE_TAKEN,
};
int loopdev_attach_raw(int backing_fd, int *ret_nr, int *ret_fd, int *ret_stage);
int loopdev_attach_error(int stage, int nr, int errnum, struct error *err);
#define LOOPDEV_PATH_MAX 32
/* "/dev/loop<nr>" in buf, without printf */
char *loopdev_path(char buf[static LOOPDEV_PATH_MAX], int nr);
/* Open /dev/loop<nr> when it is bound to the file st describes (same
 * device and inode); -1 otherwise.  The open fd keeps it bound. */
int loopdev_open_bound(int nr, const struct stat *st);

#endif
