/* loopdev.c - loop devices bound by LOOP_CONFIGURE (loopdev.h). */
#include "os/loopdev.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "common/util.h"

#ifndef LOOP_CONFIGURE
#define LOOP_CONFIGURE 0x4C0A
struct loop_config {
  __u32 fd;
  __u32 block_size;
  struct loop_info64 info;
  __u64 __reserved[8];
};
#endif

#define LOOP_ATTACH_TRIES 16

bool loopdev_available(const char **why)
{
  int fd = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
  struct stat st;

  if (fd < 0) {
    *why = errno == ENOENT ? "no /dev/loop-control" : "/dev/loop-control cannot be opened";
    return false;
  }
  if (fstat(fd, &st) < 0 || !S_ISCHR(st.st_mode)) {
    close(fd);
    *why = "/dev/loop-control is not the loop control device";
    return false;
  }
  close(fd);
  return true;
}

int loopdev_attach(int backing_fd, int *ret_nr, int *ret_fd, struct error *err)
{
  cleanup_close int ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
  struct loop_config cfg;

  if (ctl < 0)
    return error_errno(err, "open /dev/loop-control");
  memset(&cfg, 0, sizeof cfg);
  cfg.fd = (__u32)backing_fd;
  cfg.info.lo_flags = LO_FLAGS_AUTOCLEAR;
  /* another process may take the free device first: ask again */
  for (int i = 0; i < LOOP_ATTACH_TRIES; i++) {
    char path[32];
    int nr = ioctl(ctl, LOOP_CTL_GET_FREE);
    int fd;

    if (nr < 0)
      return error_errno(err, "find a free loop device");
    snprintf(path, sizeof path, "/dev/loop%d", nr);
    fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
      return error_errno(err, "open `%s`", path);
    if (ioctl(fd, LOOP_CONFIGURE, &cfg) == 0) {
      *ret_nr = nr;
      *ret_fd = fd;
      return 0;
    }
    close(fd);
    if (errno != EBUSY)
      return error_errno(err, "bind `%s`", path);
  }
  return error_set(err, EBUSY, "bind a loop device: every free one was taken first");
}

int loopdev_open_bound(int nr, const struct stat *st)
{
  struct loop_info64 info;
  char path[32];
  int fd;

  if (nr < 0)
    return -1;
  snprintf(path, sizeof path, "/dev/loop%d", nr);
  fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0)
    return -1;
  memset(&info, 0, sizeof info);
  if (ioctl(fd, LOOP_GET_STATUS64, &info) < 0 || info.lo_inode != (__u64)st->st_ino ||
      info.lo_device != (__u64)st->st_dev) {
    close(fd);
    return -1;
  }
  return fd;
}
