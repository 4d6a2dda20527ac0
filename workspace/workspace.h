/* workspace.h - reviewable, reversible agent workspaces.
 *
 * Design
 * ------
 * In `overlay` mode the host directory the engine bound at the workspace path
 * becomes the read-only lower layer of an overlayfs; everything the agent
 * writes lands in an upper layer kept by agentrt.  The host directory changes
 * only when the operator runs `agentrt workspace ID commit`.
 *
 * Storage lives in the data directory's store of the engine root
 * (datadir/datadir.h), not in the per-container state dir, so it survives
 * `delete` (engines delete containers as soon as they exit) and a reboot:
 *
 *   <store>/.workspaces/<id>/
 *     meta.json          container id, host lower dir, destination, created
 *                        time, the current layer stack, the snapshots and a
 *                        manifest of the host dir at start (path, type, size,
 *                        mtime ns, mode, SHA-256 for small files) used to
 *                        detect host changes made since (conflicts)
 *     upper/ work/       the live overlay upper and work dirs, or, with a
 *                        size limit (workspace.size), in:
 *     upper.img          a sparse ext4 image of that size holding upper/,
 *                        work/ and retired/ (image.c); loop: the loop
 *                        device last bound to it; fs/: the empty directory
 *                        the container's init mounts it on in its own
 *                        mount namespace
 *     snapshots/<name>/  read-only layers (full copies of upper at the time)
 *     retired/<n>/       uppers replaced by a rollback while the container
 *                        ran; removed once nothing can use them
 *     mounted            marker while a container uses the workspace
 *
 * Overlay options: lowerdir=<layers...>:<host dir>, upperdir, workdir, and
 * redirect_dir=off, index=off, metacopy=off, set explicitly whatever the
 * kernel defaults: with these the upper layer holds whole files only (no
 * metacopy stubs whose data stays in the lower), a directory never points at
 * another lower path (renaming a host directory inside the container returns
 * EXDEV and tools fall back to copy + delete), so the change set is the plain
 * union of the layers: a file is added or modified, a whiteout (char device
 * 0/0) is a deletion, an opaque directory (overlay.opaque = "y" in the
 * namespace of the mount, trusted. or user. with userxattr: ws_dir_opaque)
 * hides everything below it.  File renames show as delete + add and are
 * reported as renames when the SHA-256 of an added file equals that of a
 * deleted one.
 *
 * Snapshots: `snapshot NAME` freezes the container, copies upper into
 * snapshots/NAME (whiteouts and opaque markers included) and records the
 * layer stack it was taken on (its base).  `rollback NAME` makes NAME + its
 * base the lower stack and starts an empty upper; on a running container the
 * new overlay is mounted over the workspace path inside the container's mount
 * namespace while it is frozen (the old mount stays underneath, so processes
 * holding files open keep them).  Every later mount (a restart with the same
 * id) uses meta.json's stack.
 *
 * Commit: allowed in any container state.  While the workspace is mounted the
 * container is frozen during the commit and the upper layer is left alone
 * (the diff compares contents, so a committed path no longer shows); when it
 * is not mounted the redundant entries are then pruned from upper.  Committing
 * moves the baseline: a later rollback to an older snapshot keeps what the
 * host now has for the committed paths.  discard and rollback-free operations
 * that rewrite upper (discard, purge) refuse while the workspace is mounted.
 *
 * Reuse: a workspace with the same id, host dir and destination is reused by
 * the next prepare (an engine restarting a container keeps the agent's work);
 * a different host dir or destination is refused until commit/discard/purge.
 *
 * Commit checks and stages every selected change first (temporary files
 * and new directories in place, one syncfs), undoes it all when anything
 * fails, and only then renames and removes: all or nothing.  Protected
 * changes (protect.c) and special files are left out with a warning.
 *
 * Walks (scan, removal, copies, sizes) are iterative with one fd per
 * directory level, so any depth the agent can build is reviewed, committed,
 * snapshotted and purged.
 *
 * Security: the upper layer is written by the agent.  Commit opens every host
 * path with openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV)
 * relative to a fd of the host dir (a symlink or a mount planted anywhere on
 * the path is refused), copies symlinks as symlinks, clears setuid/setgid
 * bits of files and directories, gives new files the owner of the file they replace (or of their
 * directory) and only ever chowns/chmods the files it just created.
 */
#ifndef AGENTRT_WORKSPACE_H
#define AGENTRT_WORKSPACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/error.h"

#define WS_DIR ".workspaces"

/* Bounds, from the profile (retention) or the defaults below. */
struct ws_limits {
  uint64_t max_files;      /* manifest entries; past it: ctime check only */
  uint64_t max_hash_bytes; /* total bytes hashed into the manifest */
  uint64_t max_file_hash;  /* larger files are recorded by mtime + size */
  uint64_t max_size;       /* retention: bytes of upper + snapshots, 0 = none */
  uint64_t max_age;        /* retention: seconds since created, 0 = none */
  uint64_t size;           /* the upper layer's hard limit (image.c), 0 = none */
  bool size_required;      /* refuse, rather than warn, when it cannot be enforced */
  bool copy_later;         /* a new image is copied by workspace_mount_start's thread */
};
#define WS_DEFAULT_MAX_FILES 100000
#define WS_DEFAULT_MAX_HASH_BYTES ((uint64_t)64 << 20)
#define WS_DEFAULT_MAX_FILE_HASH ((uint64_t)4 << 20)
void ws_limits_default(struct ws_limits *l);

enum ws_ftype { WS_T_NONE, WS_T_FILE, WS_T_DIR, WS_T_SYMLINK, WS_T_OTHER };

struct ws_mentry { /* one manifest entry */
  char *path;      /* relative to the host dir, no leading '/' */
  enum ws_ftype type;
  uint64_t size;
  int64_t mtime_ns;
  uint32_t mode;
  bool has_hash;
  unsigned char hash[32];
};

struct ws_manifest {
  struct ws_mentry *v; /* sorted by path */
  size_t n;
  bool complete; /* false: bounded by max_files, check unlisted paths by ctime */
};

/* Where overlayfs keeps its metadata (opaque markers) in the layers: trusted.overlay.* or, with
 * userxattr, user.overlay.*.  Only that namespace is the overlay's: in the other one an xattr is
 * ordinary data (the agent may set user.overlay.opaque through a trusted-mode overlay). */
#define WS_XATTR_TRUSTED 1u
#define WS_XATTR_USER 2u

struct ws_snapshot {
  char *name;
  char *created; /* RFC 3339 */
  int64_t created_s;
  char **base; /* the layer stack it was taken on, top first */
};

struct workspace {
  char *id;
  char *dir;           /* <store>/.workspaces/<id> */
  char *lowerdir;      /* host dir */
  uint64_t view_start; /* a view (/proc/PID/root/DIR): PID's start time, 0 = none */
  char *dest;          /* absolute path inside the container */
  char *created;       /* RFC 3339 */
  int64_t created_s;
  char **layers; /* snapshot names of the current lower stack, top first */
  /* mount destinations below dest (relative) whose mount points the runtime
   * made in the workspace: not the agent's changes (workspace_note_mountpoints) */
  char **mountpoints;
  struct ws_snapshot *snaps;
  size_t n_snaps;
  uint64_t retired_seq;
  struct ws_manifest manifest;
  /* WS_XATTR_*: the namespace of the last mount's options (workspace_mount_options), 0 when
   * meta.json predates the record (both are read) */
  unsigned ovl_xattr;
  /* Filled by workspace_prepare / workspace_mount_options: */
  char *mount_data;  /* "lowerdir=...,upperdir=...,workdir=...,redirect_dir=off,..." */
  char **mount_optv; /* the same as a config mount "options" array + nosuid, nodev */
  struct ws_fs *fs;  /* image.c: the mounted upper image, if any */
  /* a sub-agent's: the id of the ancestor whose image holds its upper and
   * work dirs (<image>/sub/<id>/), from <dir>/upper-in; NULL: its own */
  char *upper_in;
  char *warning;    /* workspace_prepare: why the size limit is not enforced, or NULL */
  bool upper_later; /* workspace_prepare: a new image, mounted by workspace_finish_upper */
};

/* --- the interface `create` uses (in the parent, before the init) ------- */

/* Create or reuse <store>/.workspaces/<id> (the root argument of these
 * functions is the store that holds .workspaces), record the manifest of lowerdir
 * (when there are no pending changes), write the `mounted` marker and fill
 * (*ret)->mount_optv: the options of the config mount entry
 *   { type: "overlay", source: "overlay", destination: dest, options }
 * that replaces the engine's bind at dest.  lim may be NULL (defaults).
 * A sub-agent's lowerdir is a view, /proc/PID/root/DIR: view_start is
 * PID's start time as its parent's monitor knows it (0: PID's now), kept in
 * the record and checked at every later use (workspace_open_host).
 * Also runs the retention sweep for the other workspaces, at most once a
 * minute (store.c: sweep_due). */
/* Record (and save) the mount destinations of the container's config that
 * lie below the workspace's destination, dests (absolute, normalised): the
 * runtime makes their mount points (and missing parents) in the workspace,
 * and an added empty directory there is not listed as a change. */
int workspace_note_mountpoints(struct workspace *w, char *const *dests, struct error *err);
int workspace_prepare(const char *root, const char *id, const char *lowerdir, uint64_t view_start,
                      const char *dest, const struct ws_limits *lim, struct workspace **ret,
                      struct error *err);
/* A new workspace with an image: workspace_prepare leaves the image's
 * mount and the empty upper/ and work/ in it to this (w->upper_later), so
 * that create can do them while the init sets up its namespaces and the
 * mounts before the workspace's (the mount and its first directory take
 * 0.6-0.9 ms of the kernel's time here).  Then workspace_fs_fd(w) is the
 * image's mount.  No-op otherwise. */
int workspace_finish_upper(struct workspace *w, struct error *err);
/* Start binding and mounting that new image now, in a thread of its own
 * (image.c), so that workspace_finish_upper finds it done; anything that
 * cannot start that way is done by workspace_finish_upper as before.  What
 * the thread made goes with w when it is not taken.  workspace_mount_join
 * waits for the thread: before any clone that is not glibc's fork. */
void workspace_mount_start(struct workspace *w);
void workspace_mount_join(struct workspace *w);
/* A failed create: drop the `mounted` marker (and the workspace itself when
 * it was new and holds nothing). */
void workspace_abandon(const char *root, const char *id);

/* The container is gone (delete, run without --keep: container_destroy,
 * after the init is dead): drop the `mounted` marker and retired uppers.
 * The changes stay until commit/discard/purge.  No-op without a workspace. */
void workspace_release(const char *root, const char *id);

/* --- a sub-agent's view of its parent (view.c) -------------------------- */

/* Is lowerdir a sub-agent's host dir, /proc/PID/root/DIR (its parent's
 * view)? */
bool workspace_is_view(const char *lowerdir);
/* The host dir as a directory fd (flags: O_RDONLY or O_PATH): a view is
 * resolved inside the parent's root with no symlink on the way
 * (RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS), and only while PID is the
 * process that started at view_start (its /proc/PID/stat field 22, which
 * the workspace records: a pid reused by another process after the parent
 * died must not lead into that process's root); any other path with no
 * symlink as its last component (view_start unused).  -1 and errno
 * (ESRCH: the parent is gone). */
int workspace_open_host(const char *lowerdir, uint64_t view_start, int flags);
/* An orphan's host dir: a sub-agent whose parent's init has ended (deleted,
 * restarted, the host rebooted) is reviewed against its parent's workspace
 * record instead of its parent's mount: the parent's layers (its upper, its
 * snapshots, its host dir or, a sub-agent itself, its own view) merged in an
 * overlay made here as a detached mount (never attached anywhere, gone with
 * the last descriptor), and the view's directory opened below it without a
 * symlink.  rw: the parent's upper and work directories are the overlay's,
 * so what is written there becomes the parent's pending change, as `sub
 * commit` writes it through the parent's mount (the caller makes sure that
 * no container mounts the parent's workspace meanwhile).  An image is
 * attached in a private mount namespace that this process enters (unshare):
 * for short-lived commands only. */
int workspace_open_record_host(const struct workspace *w, bool rw, struct error *err);
/* A view's PID's start time now (for a view prepared without one); -1
 * (ESRCH) when PID is gone or a zombie. */
int workspace_view_start(const char *lowerdir, uint64_t *ret);
/* A sub-agent's overlay names its lower layers ROOT//REL (view.c) and
 * carries this option word, which is not the kernel's: */
#define WORKSPACE_OPT_BENEATH "x-agentrt.lower-beneath"
/* The value of such a lowerdir option with each ROOT//REL opened (O_PATH)
 * as REL below ROOT without following a symlink, and named
 * /proc/self/fd/N; *ret_fds the descriptors to close once mounted.  NULL
 * and err when one is not there that way. */
char *workspace_lowerdir_beneath(const char *lowerdir, int **ret_fds, size_t *ret_n,
                                 struct error *err);

/* --- the size-limited upper layer (image.c) ------------------------------ */

/* Does the upper layer live in <dir>/upper.img? (Not for a sub-agent whose
 * upper is in its ancestor's image: w->upper_in.) */
bool workspace_has_image(const struct workspace *w);
/* Its size in bytes (the limit), 0 without an image. */
uint64_t workspace_image_size(const struct workspace *w);
/* The detached mount of the image (prepare mounted it), or -1; borrowed. */
int workspace_fs_fd(const struct workspace *w);
/* <dir>/fs: where the container's init attaches that mount. */
char *workspace_fs_path(const struct workspace *w);
/* Mount the image (detached) if it is not yet: a sub-agent's create needs
 * its parent's, whose upper is a lower layer of the child's overlay
 * (monitor/subagents.h).  0 without an image (workspace_fs_fd stays -1). */
int workspace_fs_open(struct workspace *w, struct error *err);
/* Close this process's mount of the image (the device goes with the last). */
void workspace_unmount(struct workspace *w);
/* The image's file, opened to be locked (flock), or -1 (no image of its own).
 * Whoever leaves an unmount of the image to run after it has gone (the
 * monitor's last child, monitor/monitor_files.c) holds LOCK_SH on it until
 * its last mount of the image is closed; every process that mounts the image
 * takes LOCK_EX first (ws_fs_mount), so none meets a superblock on its way out. */
int workspace_image_lock_fd(const struct workspace *w);
/* Wait (bounded: timeout_ms) until no unmount of the image in the workspace
 * directory dir is under way: delete returns with the loop device gone, and
 * a copy of the image (data migrate) reads it clean.  0 also without an
 * image; -1 (ETIMEDOUT) when the lock stayed held. */
int workspace_image_settle(const char *dir, int timeout_ms);
/* Can this host enforce workspace.size on an overlay (loop devices that
 * this process may bind, mkfs.ext4)?  *why (a few words) when not. */
bool workspace_size_limit_supported(const char **why);

/* --- loading and storage (store.c) -------------------------------------- */

int workspace_load(const char *root, const char *id, struct workspace **ret, struct error *err);
void workspace_free(struct workspace *w);
int workspace_save(struct workspace *w, struct error *err);
/* Take the room on the data directory's file system that the next
 * workspace_save needs (meta.json as it is now and extra bytes more) before
 * a change that cannot be undone (commit), so that it never fails for want
 * of room after it: -1 with a one-line error naming what ("commit") when
 * there is none. */
int workspace_save_reserve(struct workspace *w, const char *what, uint64_t extra,
                           struct error *err);
/* Ids that have a workspace under root (sorted). */
int workspace_ids(const char *root, char ***ret, struct error *err);
/* Compute mount_data / mount_optv from the current layers. */
int workspace_mount_options(struct workspace *w, struct error *err);
bool workspace_marked_mounted(const struct workspace *w);
void workspace_set_mounted(struct workspace *w, bool on);
/* Bytes used by upper, by one snapshot, by everything. */
uint64_t workspace_du(const struct workspace *w, const char *sub);
/* Throw upper and every snapshot away (must not be mounted). */
int workspace_discard(struct workspace *w, struct error *err);
/* Remove the whole workspace directory; refused (EBUSY) while its image
 * holds a sub-agent's kept changes (workspace_purge_check). */
int workspace_purge(const char *root, const char *id, struct error *err);
/* -1 (EBUSY, naming them) when the workspace's image holds the kept changes
 * of sub-agents' workspaces, which a purge would drop with it. */
int workspace_purge_check(const char *root, const char *id, struct error *err);
/* The same, the sub-agents' workspaces named in gone (ids, removed by the
 * same sweep, or to be in a dry run) not counted. */
int workspace_purge_check_except(const char *root, const char *id, char *const *gone,
                                 struct error *err);
/* Move <from>/.workspaces/<id> to <to>/.workspaces/<id> (move.c; not while
 * mounted). */
int workspace_move(const char *from, const char *to, const char *id, struct error *err);
/* Remove retired uppers (must not be mounted). */
void workspace_gc(struct workspace *w);
/* Changes pending (non-empty upper, or snapshots)? */
bool workspace_pending(const struct workspace *w);
/* The same, except that a sub-agent's upper gone with its ancestor's image
 * holds nothing (workspace_pending: pending). */
bool workspace_kept(const struct workspace *w);
/* Purge the workspaces (other than skip_id) not in use and over lim's
 * retention; their "id (reason)" are appended to *ret_purged (may be NULL).
 * Returns how many were purged. */
int workspace_retention_sweep(const char *root, const struct ws_limits *lim, const char *skip_id,
                              char ***ret_purged);
/* Retention: true when the workspace is older/larger than lim allows. */
bool workspace_over_retention(const struct workspace *w, const struct ws_limits *lim, char *why,
                              size_t why_len);

/* --- snapshots (snapshot.c) ---------------------------------------------- */

/* Copy upper into snapshots/name (the caller freezes a running container). */
int workspace_snapshot(struct workspace *w, const char *name, struct error *err);
const struct ws_snapshot *workspace_find_snapshot(const struct workspace *w, const char *name);
/* Make name + its base the lower stack with a fresh, empty upper.  When
 * `running` the old upper/work are moved to retired/ (still used by the old
 * mount) instead of being removed.  Updates and saves meta.json. */
int workspace_rollback_layers(struct workspace *w, const char *name, bool running,
                              struct error *err);
/* After a failed remount: put the retired upper back and restore the layer
 * stack old_layers (ownership taken). */
int workspace_rollback_undo(struct workspace *w, char **old_layers, struct error *err);
/* Build the overlay for the current layers as a detached mount (fsmount),
 * and attach it over dest inside the mount namespace nsfd (a forked child
 * does setns; the caller's namespaces are untouched). */
int workspace_remount_in_ns(struct workspace *w, int nsfd, struct error *err);
/* The protected paths recorded at create (relative, directories end in
 * '/'), NULL when there are none. */
char **workspace_protected(const struct workspace *w);

/* --- the change set (scan.c) --------------------------------------------- */

enum ws_kind { WS_ADDED, WS_MODIFIED, WS_DELETED, WS_RENAMED };

struct ws_change {
  enum ws_kind kind;
  enum ws_ftype type;     /* new type (old type for deletions) */
  enum ws_ftype old_type; /* WS_T_NONE for additions */
  char *path;             /* relative, no leading '/' */
  char *old_path;         /* WS_RENAMED */
  uint64_t size, old_size;
  uint32_t mode, old_mode;
  int layer;         /* index of the layer holding the new object, -1 = none */
  bool content_same; /* WS_MODIFIED: only the mode changed */
  uint64_t n_files;  /* deleted directory: regular files below it */
  char *protect;     /* why a host tool could run or read something because of
                        it (protect.c), NULL when it is an ordinary change */
  char *target;      /* a symlink's target (not WS_DELETED), else NULL */
  char *ignored;     /* a new file the host's git would ignore: "`FILE` `PATTERN`" of the
                        ignore file and line that hide it (ignore.c), else NULL */
};

struct ws_changes {
  struct ws_change *v;
  size_t n, cap;
};

/* Drop from c the added directories that are a recorded mount point or a
 * parent of one and hold no listed change. */
void ws_drop_mountpoints(struct ws_changes *c, char *const *mountpoints);

/* The layers of a scan: fds of each layer root (upper first) and the host
 * dir.  Pure file-system reading: no state, usable on fake trees. */
struct ws_layers {
  int *fds;
  size_t n;
  int hostfd;
  unsigned xattr; /* WS_XATTR_*: the overlay's metadata namespace, 0: both */
  /* the host dir at start (the workspace's; NULL: none), for the host's own
   * symlinks of protected names (protect.c) */
  const struct ws_manifest *manifest;
};

int ws_scan(const struct ws_layers *l, struct ws_changes *ret, struct error *err);
/* Pair added and deleted regular files with equal SHA-256 into renames. */
int ws_detect_renames(const struct ws_layers *l, struct ws_changes *c, struct error *err);
void ws_changes_free(struct ws_changes *c);
const char *ws_kind_name(enum ws_kind k);

/* --- the protection rule (protect.c) -------------------------------------- */

/* Why committing path (of type type; deleted: the change removes it) could
 * make a host tool run something or read from elsewhere, or NULL.  patterns:
 * the profile's protected list (relative; matched as a run of components at
 * any depth); *ret_pattern is the entry that matched, if one did. */
const char *ws_protect_reason(const char *path, enum ws_ftype type, bool deleted,
                              char *const *patterns, const char **ret_pattern);
/* The same, also protecting what lies below a directory that git takes for
 * a bare repository: probe->is_gitdir(ctx, path, len) says whether the
 * directory named by the first len bytes of path ("" = the root) is one. */
struct ws_gitdir_probe {
  bool (*is_gitdir)(void *ctx, const char *path, size_t len);
  void *ctx;
};
const char *ws_protect_reason_in(const char *path, enum ws_ftype type, bool deleted,
                                 char *const *patterns, const struct ws_gitdir_probe *probe,
                                 const char **ret_pattern);

/* Would a sub-agent whose workspace is the directory rel (relative to its
 * parent's) write below a protected path, whatever it writes (a `.git` or
 * `.gitmodules` component, or an entry of patterns that starts in rel and
 * ends in it or below it)?  Its changes are reviewed relative to its own
 * root, where those components are not seen.  The reason, or NULL. */
const char *ws_protect_subdir_reason(const char *rel, char *const *patterns,
                                     const char **ret_pattern);
/* Set c->v[i].protect for every change (path and renamed-from path); a
 * directory holding a regular file HEAD in c or below l->hostfd (l NULL or
 * l->hostfd -1: none) is a bare repository; a git index or ref file in c
 * is read from its layer in l, and a ref's commits from l's layers and the
 * host dir. */
void ws_mark_protected(struct ws_changes *c, char *const *patterns, const struct ws_layers *l);
/* Mark (ch->ignored) the new files that the merged view's .gitignore files
 * or the host's .git/info/exclude make the host's git ignore: its `git
 * status` and `git diff` will not show them after commit (ignore.c); past
 * the limits on reading them, the files not decided.  Returns the matching
 * work spent (at most WS_IGNORE_MAX_WORK). */
#define WS_IGNORE_MAX_WORK ((size_t)100000000)
size_t ws_mark_ignored(struct ws_changes *c, const struct ws_layers *l);
/* Why a symlink at path pointing at target could lead a host tool that
 * follows it out of the workspace (absolute, `..` past the root, `dir/..`)
 * or into `.git`, `.gitmodules` or a path of patterns; NULL when it stays
 * among ordinary files. */
const char *ws_protect_link_reason(const char *path, const char *target, char *const *patterns,
                                   const char **ret_pattern);
/* ".git" or a name a case-folding file system resolves to it. */
bool ws_is_git_name(const char *s, size_t n);
const char *ws_ftype_name(enum ws_ftype t);

/* Whiteout and opaque classification of one layer entry. */
enum ws_entry { WS_E_NONE, WS_E_WHITEOUT, WS_E_DIR, WS_E_OPAQUE_DIR, WS_E_OTHER };
enum ws_entry ws_classify(int dirfd, const char *name, unsigned xattr, enum ws_ftype *ret_type);
/* Is the directory at fd opaque (overlay.opaque = "y" in xattr's namespace, WS_XATTR_*, 0: both)?
 */
bool ws_dir_opaque(int fd, unsigned xattr);

/* Open the layers of w (upper first, then the stack) and the host dir; an
 * orphan sub-agent's host dir is its parent's record
 * (workspace_open_record_host: this process's mount namespace becomes a
 * private one of its own). */
int workspace_open_layers(const struct workspace *w, struct ws_layers *ret, struct error *err);
/* The same, the image's upper reached through fs (a mount of the image's
 * root that the caller holds, -1 = mount it) when the workspace has one;
 * an orphan's host dir is refused (ESRCH), its namespace never changed. */
int workspace_open_layers_at(const struct workspace *w, int fs, struct ws_layers *ret,
                             struct error *err);
void ws_layers_close(struct ws_layers *l);

/* --- manifest (manifest.c) ----------------------------------------------- */

int ws_manifest_record(int hostfd, const struct ws_limits *lim, struct ws_manifest *ret,
                       struct error *err);
void ws_manifest_free(struct ws_manifest *m);
const struct ws_mentry *ws_manifest_find(const struct ws_manifest *m, const char *path);
enum ws_conflict {
  WS_C_NONE,
  WS_C_DELETED, /* in the manifest, gone from the host */
  WS_C_CHANGED, /* size/mtime (and hash, when recorded) differ */
  WS_C_CREATED, /* not in the manifest, present on the host */
  WS_C_TYPE,    /* file became a directory, ... */
  WS_C_UNSAFE,  /* the host path crosses a symlink or a mount */
};
/* Has the host path changed since the manifest was recorded (at created_s)? */
enum ws_conflict ws_manifest_conflict(const struct ws_manifest *m, int hostfd, const char *path,
                                      int64_t created_s);
const char *ws_conflict_name(enum ws_conflict c);
/* Replace (or, when missing on the host, remove) the entry of path. */
void ws_manifest_update(struct ws_manifest *m, int hostfd, const char *path);

/* --- commit (commit.c) ---------------------------------------------------- */

/* Changes selected by paths (NULL = all): a change is selected when its path
 * (or old path) equals one of them or lies below one. */
bool ws_change_selected(const struct ws_change *c, char *const *paths);
/* What commit applies: an ordinary change selected by paths, a protected
 * one (c->protect) only when incl (--include-protected) selects it. */
bool ws_commit_selected(const struct ws_change *c, char *const *paths, char *const *incl);
/* Conflicts of the selected changes, "path: reason" each. */
int ws_commit_conflicts(const struct workspace *w, const struct ws_layers *l,
                        const struct ws_changes *c, char *const *paths, char *const *incl,
                        char ***ret, struct error *err);
/* Apply the selected changes to the host dir; *ret_n = applied count.  All
 * are checked and staged first: a failure there leaves the host as it was.
 * Special files are skipped, their paths appended to *ret_skipped (may be
 * NULL). */
int ws_commit_apply(struct workspace *w, const struct ws_layers *l, const struct ws_changes *c,
                    char *const *paths, char *const *incl, size_t *ret_n, char ***ret_skipped,
                    struct error *err);
/* --- review (review.c) ---------------------------------------------------- */

/* Record the fingerprint (kind, paths, mode, size, target, content) of every
 * change `diff` showed, in <dir>/reviewed. */
int workspace_review_record(const struct workspace *w, const struct ws_layers *l,
                            const struct ws_changes *c, struct error *err);
/* The changes commit would apply (paths, incl as ws_commit_selected) whose
 * fingerprint the last recorded diff did not show, into *ret_unseen (NULL:
 * none); *ret_recorded is false when no diff was recorded. */
int workspace_review_unseen(const struct workspace *w, const struct ws_layers *l,
                            const struct ws_changes *c, char *const *paths, char *const *incl,
                            bool *ret_recorded, char ***ret_unseen, struct error *err);

/* Remove entries of upper that equal the host (after a commit; the workspace
 * must not be mounted and must have no snapshot layers). */
int ws_prune_upper(const struct ws_layers *l, struct error *err);

/* --- helpers -------------------------------------------------------------- */

/* path as the text output shows it (git's core.quotePath): unchanged when it
 * holds only printable ASCII other than `"` and `\`, else in double quotes
 * with C escapes (\n, \t, \", \\, ...) and octal \ooo for every other
 * control byte and every byte >= 0x80, so a name cannot forge a line. */
char *ws_quote_path(const char *path);
/* Text (a patch's lines) as a terminal shows it harmlessly: control bytes
 * other than tab and newline as ^X (ESC ^[, CR ^M, DEL ^?), C1 controls and
 * bidirectional overrides as <U+XXXX>.  The review shows what the file holds,
 * not what an escape sequence in it paints over it. */
char *ws_quote_text(const char *text);

void ws_sha256(const void *data, size_t len, unsigned char out[32]);
/* SHA-256 of a regular file open at fd (read from offset 0). */
int ws_sha256_fd(int fd, unsigned char out[32]);
void ws_hex(const unsigned char *h, size_t n, char *out); /* out: 2n + 1 */

/* A unified diff of two texts (NULL when either looks binary or is too big);
 * labels a/<path> b/<path>, 3 lines of context. */
char *ws_unified_diff(const char *a, size_t alen, const char *b, size_t blen, const char *label_a,
                      const char *label_b);
#define WS_DIFF_MAX_BYTES ((size_t)1 << 20)
#define WS_DIFF_MAX_LINES 20000

#endif
