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

int loopdev_attach_raw(int backing_fd, int *ret_nr, int *ret_fd, int *ret_stage)
{
  struct loop_config cfg;
  int ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC), e;

  *ret_nr = -1;
  *ret_stage = LOOPDEV_STAGE_CONTROL;
  if (ctl < 0)
    return -1;
  memset(&cfg, 0, sizeof cfg);
  cfg.fd = (__u32)backing_fd;
  cfg.info.lo_flags = LO_FLAGS_AUTOCLEAR;
  /* another process may take the free device first: ask again */
  for (int i = 0; i < LOOP_ATTACH_TRIES; i++) {
    char path[LOOPDEV_PATH_MAX];
    int nr = ioctl(ctl, LOOP_CTL_GET_FREE);
    int fd;

    *ret_stage = LOOPDEV_STAGE_FREE;
    if (nr < 0)
      goto fail;
    *ret_nr = nr;
    *ret_stage = LOOPDEV_STAGE_OPEN;
    fd = open(loopdev_path(path, nr), O_RDWR | O_CLOEXEC);
    if (fd < 0)
      goto fail;
    *ret_stage = LOOPDEV_STAGE_BIND;
    if (ioctl(fd, LOOP_CONFIGURE, &cfg) == 0) {
      close(ctl);
      *ret_fd = fd;
      return 0;
    }
    e = errno;
    close(fd);
    errno = e;
    if (errno != EBUSY)
      goto fail;
  }
  *ret_stage = LOOPDEV_STAGE_TAKEN;
  errno = EBUSY;
fail:
  e = errno;
  close(ctl);
  errno = e;
  return -1;
}

int loopdev_attach_error(int stage, int nr, int errnum, struct error *err)
{
  char path[LOOPDEV_PATH_MAX];

  errno = errnum;
  switch (stage) {
  case LOOPDEV_STAGE_CONTROL:
    return error_errno(err, "open /dev/loop-control");
  case LOOPDEV_STAGE_FREE:
    return error_errno(err, "find a free loop device");
  case LOOPDEV_STAGE_OPEN:
    return error_errno(err, "open `%s`", loopdev_path(path, nr));
  case LOOPDEV_STAGE_BIND:
    return error_errno(err, "bind `%s`", loopdev_path(path, nr));
  default:
    return error_set(err, EBUSY, "bind a loop device: every free one was taken first");
  }
}

/* "/dev/loop<nr>" without printf: loopdev_attach_raw runs in a thread
 * beside a fork (loopdev.h). */
char *loopdev_path(char buf[static LOOPDEV_PATH_MAX], int nr)
{
  char digits[16];
  size_t n = 0, len = strlen("/dev/loop");
  unsigned v = nr < 0 ? 0 : (unsigned)nr;

  memcpy(buf, "/dev/loop", len);
  do {
    digits[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v > 0 && n < sizeof digits);
  while (n > 0)
    buf[len++] = digits[--n];
  buf[len] = '\0';
  return buf;
}

int loopdev_open_bound(int nr, const struct stat *st)
{
  struct loop_info64 info;
  char path[LOOPDEV_PATH_MAX];
  int fd;

  if (nr < 0)
    return -1;
  fd = open(loopdev_path(path, nr), O_RDWR | O_CLOEXEC);
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
