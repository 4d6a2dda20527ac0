/* fsutil.h - small file helpers for the runtime's own files (state dir,
 * bundle, pid files).  Never used for paths inside a container rootfs:
 * those go through safepath.h. */
#ifndef AGENTRT_FSUTIL_H
#define AGENTRT_FSUTIL_H

#include <stdbool.h>
#include <stddef.h>

#include "common/error.h"

/* Read a whole file (at most max bytes, else an error) NUL-terminated.
 * dirfd may be AT_FDCWD.  ENOENT is reported in err->code.  A FIFO is read
 * to its writer's close; nothing from it for 10 s is an error,
 * never a wait without end. */
int read_file_at(int dirfd, const char *path, size_t max, char **ret, size_t *ret_len,
                 struct error *err);
/* The same for a file of the runtime's own (the state directory's): it must be a regular file
 * there, not a symbolic link (ELOOP), a FIFO, a device or a directory (EINVAL), so that a
 * damaged or planted entry is one error at once, never a wait or someone else's file
 * (hostile-state-file).  ENOENT is reported in err->code. */
int read_own_file_at(int dirfd, const char *name, size_t max, char **ret, size_t *ret_len,
                     struct error *err);
/* Read all of an fd (stdin) up to max bytes. */
int read_fd_all(int fd, size_t max, char **ret, size_t *ret_len, struct error *err);
/* Write via a temp file + fsync-free rename in the same directory (mode 0600). */
int write_file_atomic_at(int dirfd, const char *name, const char *data, size_t len,
                         struct error *err);
/* Write a file by absolute/relative path (pid files): create or truncate,
 * atomically via rename when possible; mode 0666 less the umask, as runc. */
int write_file_path(const char *path, const char *data, size_t len, struct error *err);
/* Close every fd from `from` up, except the n in keep (sorted in place). */
void close_fds_except(int from, int *keep, size_t n);
/* Make a path absolute against cwd (no symlink resolution). */
char *path_absolute(const char *path);
/* Does the directory at dirfd hold any entry?  Unknown (it cannot be read):
 * true, so that a caller judging a create dead by an empty state directory
 * does not (a create locks its new directory before it writes the first file). */
bool fs_dir_has_entries(int dirfd);

#endif
