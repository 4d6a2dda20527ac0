/* move.c - move a workspace from one store to another (the data directory
 * migration, datadir/datadir.h): a rename on one file system, else a copy
 * of the whole directory (layers with whiteouts and opaque markers, modes,
 * times) and then the removal of the old one. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "workspace/internal.h"

int workspace_move(const char *from, const char *to, const char *id, struct error *err)
{
  cleanup_free char *src = xfmt("%s/%s/%s", from, WS_DIR, id);
  cleanup_free char *base = xfmt("%s/%s", to, WS_DIR);
  cleanup_free char *dst = xfmt("%s/%s", base, id);
  cleanup_close int sfd = -1, dfd = -1;

  if (!ws_valid_name(id))
    return error_set(err, EINVAL, "workspace `%s`: invalid id", id);
  if (mkdir(base, 0700) < 0 && errno != EEXIST)
    return error_errno(err, "workspace `%s`: mkdir `%s`", id, base);
  if (access(dst, F_OK) == 0)
    return error_set(err, EEXIST, "workspace `%s`: `%s` already exists", id, dst);
  /* an image still being unmounted (after `run`) is copied once it is clean */
  if (workspace_image_settle(src, 60000) < 0)
    return error_errno(err, "workspace `%s`: wait for its image", id);
  if (rename(src, dst) == 0)
    return 0;
  if (errno != EXDEV)
    return error_errno(err, "workspace `%s`: move to `%s`", id, dst);
  sfd = open(from, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  dfd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (sfd < 0 || dfd < 0)
    return error_errno(err, "workspace `%s`: move", id);
  {
    cleanup_free char *rel = xfmt("%s/%s", WS_DIR, id);
    if (ws_copy_tree(sfd, rel, dfd, id, err) < 0) {
      ws_rm_tree(dfd, id);
      return error_prefix(err, "workspace `%s`: copy to `%s`", id, dst);
    }
  }
  {
    cleanup_close int wfd = open(src, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    cleanup_free char *parent = xfmt("%s/%s", from, WS_DIR);
    cleanup_close int pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (pfd < 0 || ws_rm_tree(pfd, id) < 0)
      return error_errno(err, "workspace `%s`: remove `%s` after the copy", id, src);
  }
  return 0;
}
