/* mounts.h - mount options and the config mounts, shared by rootfs.c,
 * mount_setup.c, devices.c and console.c.  The fd-based primitives they all
 * use (nothing is mounted "by path") are os/mount_ops.h.
 */
#ifndef AGENTRT_MOUNTS_H
#define AGENTRT_MOUNTS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/mount.h>

#include "common/error.h"
#include "container/setup.h"
#include "os/mount_ops.h"

/* The meaning of a config mount's "options" array. */
struct mount_opts {
  unsigned long flags;       /* MS_* asked for: ro, nosuid, bind, rec, remount, sync, ... */
  unsigned long cleared;     /* MS_* explicitly turned off: rw, suid, dev, exec, atime, ... */
  unsigned long propagation; /* MS_SHARED|MS_SLAVE|MS_PRIVATE|MS_UNBINDABLE (| MS_REC), 0 = none */
  uint64_t rec_attr_set;     /* recursive MOUNT_ATTR_* ("rro", "rnosuid", ...) */
  uint64_t rec_attr_clr;
  char *data;     /* words the kernel must interpret ("size=64m,mode=755"), NULL if none */
  bool tmpcopyup; /* "tmpcopyup": fill a new tmpfs with what it covers (copyup.c) */
  bool idmap;     /* "idmap" (this mount) or "ridmap" (and its submounts, idmap_rec) */
  bool idmap_rec;
  /* "x-agentrt.lower-beneath": an overlay's lowerdir entries ROOT//REL are
   * opened as REL below ROOT without a symlink (workspace/view.c) */
  bool lower_beneath;
};

/* Parse a NULL-terminated options vector (NULL = none).  Later words win
 * over earlier ones ("ro" then "rw" is rw).  Unknown words go to ->data.
 * Words that cannot be honoured are an error naming them. */
int mount_options_parse(char *const *opts, struct mount_opts *ret, struct error *err);
void mount_opts_free(struct mount_opts *o);
/* The per-mount attributes (non-recursive) of o as mount_setattr() wants
 * them: ro/nosuid/nodev/noexec/atime/nodiratime/nosymfollow set or cleared. */
void mount_opts_attr(const struct mount_opts *o, uint64_t *ret_set, uint64_t *ret_clr);
/* Superblock flags (sync, dirsync, mand, lazytime, silent) of o as fsconfig words. */
size_t mount_opts_sb_words(const struct mount_opts *o, const char **ret, size_t max);
/* "rslave" -> MS_SLAVE|MS_REC, ...; for linux.rootfsPropagation. */
/* tmpcopyup: copy the directory target (an O_PATH fd in the rootfs) into
 * the detached mount mntfd before it is attached (copyup.c). */
int mnt_tmpcopyup(int target, int mntfd, const char *dest, struct error *err);
int mount_propagation_parse(const char *s, unsigned long *ret, struct error *err);

/* mount_setup.c: every mount of config->mounts, in order. */
int mounts_setup(struct setup_ctx *ctx, struct error *err);
/* After a recursive propagation was given to the new "/" (rshared,
 * runbindable): each config mount that names a propagation gets its own
 * again, in order, as if the root's had come first (runc's order). */
int mounts_propagation_again(struct setup_ctx *ctx, struct error *err);
/* The runtime's clones of the bind sources (*ret_fds[i] per config mount,
 * -1 for others or on failure; with idmap_only, of the idmapped ones only),
 * an idmapped one given its mapping here; returns how many were cloned, -1
 * (err set, nothing left open) when an idmapped one cannot be made.  A
 * source inside the rootfs is left to the init (it names the tree the
 * earlier mounts made, as runc reads it). */
int mounts_open_bind_sources(const struct oci_config *c, const char *bundle, const char *rootfs,
                             bool idmap_only, int **ret_fds, struct error *err);
/* Does a mount of the config ask for an idmapped bind (spec 1.2)? */
bool mounts_any_idmap(const struct oci_config *c);
/* Does the config mount something at `dest` (cleaned path)?  ret_bind says
 * whether it is a bind mount. */
bool mounts_has_dest(const struct oci_config *c, const char *dest, bool *ret_bind);
/* mounts_cgroup.c: a "cgroup"/"cgroup2" config mount onto targetfd. */
int mounts_cgroup(struct setup_ctx *ctx, const struct oci_mount *m, const struct mount_opts *o,
                  int targetfd, const char *dest, struct error *err);
/* devices.c: /dev nodes and links (after the config mounts). */
int devices_setup(struct setup_ctx *ctx, struct error *err);
/* console.c: the pty and /dev/console (after devices_setup). */
int console_setup(struct setup_ctx *ctx, struct error *err);

#endif
