/* internal.h - helpers shared by the files of workspace/ (not an interface). */
#ifndef AGENTRT_WORKSPACE_INTERNAL_H
#define AGENTRT_WORKSPACE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "common/error.h"
#include "workspace/workspace.h"

#define WS_MAX_DEPTH 256           /* nesting walked by the manifest and the pruning of upper */
#define WS_MAX_LAYERS 64           /* snapshots in one stack */
#define WS_MAX_DIR_ENTRIES 1000000 /* names read from one directory */
#define WS_MAX_CHANGES 1000000

enum ws_ftype ws_mode_type(mode_t m);
/* Sorted names of the directory open at fd (not "." / ".."); bounded. */
int ws_list_dir(int fd, char ***ret, size_t *ret_n);
/* Open a directory entry below dirfd without following symlinks. */
int ws_open_dir(int dirfd, const char *name);
/* Files with equal content? (both regular, open by name below each dir) */
bool ws_same_content(int adir, const char *aname, int bdir, const char *bname, uint64_t size);
/* Symlink targets equal? */
bool ws_same_link(int adir, const char *aname, int bdir, const char *bname);
/* Count regular files and bytes below dirfd/name (same device, bounded). */
void ws_tree_size(int dirfd, const char *name, uint64_t *ret_files, uint64_t *ret_bytes);
/* Remove a tree below dirfd: never follows symlinks, never crosses into
 * another mount (st_dev), any depth.  It goes on past an entry it cannot
 * remove and removes everything else; -1 (errno of the first failure) when
 * something is left.  ENOENT is success. */
int ws_rm_tree(int dirfd, const char *name);
/* chmod the file of fd, an O_PATH descriptor too (fchmodat2, or its procfs
 * link on kernels before 6.6). */
int ws_chmod_fd(int fd, mode_t mode);
/* The walks keep one fd per directory level: raise RLIMIT_NOFILE to what we
 * may (the hard limit, for root up to fs.nr_open).  Only `agentrt workspace`
 * calls it: a container created by this process must not inherit it. */
void ws_raise_nofile(void);
/* Iterative walk of the tree below dirfd/name (no recursion, any depth; never
 * follows a symlink or crosses into another file system).  entry() sees
 * every entry below (dirfd of its directory, name, stat, path relative to
 * the walk's root); for a directory it returns 1 to descend, 0 not to; < 0
 * stops the walk.  leave(), if set, runs after a directory's entries (fd:
 * the directory itself).  Directory-relative paths are built only when
 * want_path. */
struct ws_walker {
  int (*entry)(void *ctx, int dirfd, const char *name, const struct stat *st, const char *path,
               size_t depth);
  int (*leave)(void *ctx, int dirfd, const char *name, int fd, const struct stat *st,
               const char *path, size_t depth);
  void *ctx;
  bool want_path;
};
int ws_walk(int dirfd, const char *name, const struct ws_walker *w);
/* Copy a layer tree (files, dirs, symlinks, whiteouts, opaque markers,
 * modes, times) from src/sname to dst/dname. */
int ws_copy_data(int in, int out);
int ws_copy_tree(int src, const char *sname, int dst, const char *dname, struct error *err);
/* Open path (relative, "" = the dir itself) below rootfd with openat2
 * RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV. */
int ws_open_beneath(int rootfd, const char *path, int flags, mode_t mode);
/* "a/b/c" -> parent "a/b" (or "") and base "c"; returns a new string. */
char *ws_split_path(const char *path, const char **ret_base);
/* Percent-encoding of paths for meta.json (bytes < 0x21, > 0x7e, '%'). */
char *ws_path_encode(const char *s);
char *ws_path_decode(const char *s);
/* meta.c: fill w (dir set) from <dir>/meta.json. */
int ws_meta_read(struct workspace *w, struct error *err);
/* RFC 3339 UTC now (and the seconds). */
char *ws_now(int64_t *ret_s);
/* Ids and snapshot names: [A-Za-z0-9][A-Za-z0-9_.+-]*, at most 128 bytes. */
#define WS_NAME_MAX 128 /* bytes of a workspace's or snapshot's name */
bool ws_valid_name(const char *s);
void ws_changes_push(struct ws_changes *c, const struct ws_change *ch);
/* gitindex.c: why the git index open at fd could make git write where it
 * never would (an entry's path with a `.git`, `.` or `..` component; an
 * index it cannot read), or write what a change could not bring unmarked
 * (an entry that the host's index open at host_fd, -1 for none, does not
 * hold with the same path, mode and object id, and that is a symlink, a
 * gitlink, or a path ws_protect_reason_in protects with these patterns), or
 * NULL; *ret_path: the entry's path (freed by the caller), or NULL.  A split
 * index's entries are merged with those of its shared index, which sh opens
 * (NULL: a split index cannot be read). */
struct ws_git_shared {
  /* `name` (sharedindex.<id>) beside the index: in the agent's workspace (the
   * first layer holding a regular file of that name, else the host dir) or,
   * when host, in the host dir; an fd, or -1 when it is not there */
  int (*open)(void *ctx, const char *name, bool host);
  void *ctx;
};
const char *ws_git_index_reason(int fd, int host_fd, const struct ws_git_shared *sh,
                                char *const *patterns, size_t hlen, char **ret_path);
/* May git write a file at path (n bytes): no empty, `.`, `..` or `.git`
 * (by its key) component? */
bool ws_git_path_ok(const char *path, size_t n);
/* Does checking out an entry at path with this mode write what a change
 * could not bring unmarked: a symlink, a gitlink, or a path
 * ws_protect_reason_in protects with these patterns? */
bool ws_git_entry_risky(const char *path, uint32_t mode, char *const *patterns);

/* gitobjects.c: the objects of one git dir (gitdir, relative to each layer
 * root; "" for the root itself) read from the layers fds (n of them, upper
 * first, the host dir last; -1 skipped), loose or packed, each copy checked
 * against its id.  fds must outlive it. */
struct ws_gitodb;
struct ws_gitodb *ws_gitodb_open(const int *fds, size_t n, const char *gitdir);
void ws_gitodb_free(struct ws_gitodb *db);
/* The object oid (hlen 20 or 32 bytes): its type (1 commit, 2 tree, 3 blob,
 * 4 tag) and content (freed by the caller); -1 when no layer holds it or a
 * copy cannot be read, is over the limits or does not match the id. */
int ws_gitodb_read(struct ws_gitodb *db, const unsigned char *oid, size_t hlen, int *ret_type,
                   unsigned char **ret_data, size_t *ret_size);
/* A file of the agent's below a git dir's objects/ (rel: its path below
 * objects/; in layer `layer` of fds, as ws_gitodb_open takes them): the
 * reason when it is a loose object whose content is not the object its name
 * gives, or a pack (its .pack or .idx) with an entry whose content is not
 * the object its index names, or one that cannot be read: git reads objects
 * without checking their ids (a host's tree, forged, brings the agent's
 * files with the host's own `git reset --hard`).  NULL otherwise. */
const char *ws_git_objfile_reason(const int *fds, size_t n, int layer, const char *gitdir,
                                  const char *rel);
/* The id (hlen bytes: 20 SHA-1, 32 SHA-256) of the object of this type
 * ("tree", "blob", ...) and content, into out. */
/* Does text (n bytes) hold a byte a terminal takes for a control (C0 but a
 * tab, a newline or the CR of a CRLF; DEL; a C1 control in UTF-8), the start
 * of an escape sequence when git prints it, or a bidirectional embedding,
 * override or isolate in UTF-8 (the line shown in another order)? */
bool ws_term_control(const unsigned char *p, size_t n);
void ws_git_object_id(size_t hlen, const char *type, const unsigned char *data, size_t size,
                      unsigned char *out);
/* Trees read so far (the comparison's cost). */
size_t ws_gitodb_trees_read(const struct ws_gitodb *db);
/* Parse 2 * hlen hex digits (lower case, as git writes them) of s (n bytes). */
bool ws_git_parse_hex(const char *s, size_t n, size_t hlen, unsigned char *ret_oid);
/* Why checking out new_id (a commit, a tag of one, or a tree) could make
 * git write what a change could not bring unmarked, compared with old_id
 * (NULL: nothing): an entry of its tree with a path git would never write,
 * or a new or changed entry (not in old_id's tree with the same mode and
 * id) that ws_git_entry_risky calls risky; only subtrees whose ids differ
 * are read.  A commit or tree that cannot be read is a reason too.  NULL
 * when none; *ret_path: the entry's path (freed by the caller), or NULL. */
const char *ws_git_commit_reason(struct ws_gitodb *db, const unsigned char *new_id,
                                 const unsigned char *old_id, size_t hlen, char *const *patterns,
                                 char **ret_path);
/* Why the notes commit new_id (a notes ref's value: a tree of blobs, one
 * for each object annotated, that `git log` prints under it) could rewrite
 * what the reviewer's terminal shows, against old_id (the host's value of
 * that ref, NULL: none): its message, or a note it brings that old_id's tree
 * does not hold, holds a terminal control (ws_term_control); more notes
 * than agentrt reads or one it cannot read is a reason too.  NULL when none. */
const char *ws_git_notes_reason(struct ws_gitodb *db, const unsigned char *new_id,
                                const unsigned char *old_id, size_t hlen);
/* The first max parents of the commit id (or of the commit a tag names)
 * into ret (*ret_n of them); -1 when it cannot be read or is no commit. */
int ws_git_commit_parents(struct ws_gitodb *db, const unsigned char *id, size_t hlen,
                          unsigned char (*ret)[32], size_t max, size_t *ret_n);
/* The same, and the committer's time (seconds; 0 when there is none). */
int ws_git_commit_info(struct ws_gitodb *db, const unsigned char *id, size_t hlen,
                       unsigned char (*ret)[32], size_t max, size_t *ret_n, int64_t *ret_time);
/* An object id: hlen bytes (20 SHA-1, 32 SHA-256) of b. */
struct ws_oid {
  unsigned char b[32];
  size_t hlen;
};
/* gitrefs.c: the ids a reflog text (n bytes) names that the host's version
 * of it (host, hn bytes; NULL: none) does not: of each entry (a line
 * "<old> <new> <name> <<email>> <time> <tz>[\t<msg>]") that is not one of
 * the host's lines, both ids, less the all-zero one and those any line of
 * the host's names; sorted, each once, into *ret (*ret_n of them, freed by
 * the caller).  -EBADMSG when such a line is not of that form (or has no
 * newline), -E2BIG when there are more than max of them. */
int ws_git_reflog_new_ids(const char *text, size_t n, const char *host, size_t hn, size_t max,
                          struct ws_oid **ret, size_t *ret_n);
/* gitrefs.c: when ch changes a ref file of a git dir (`refs/...`,
 * `packed-refs`, `HEAD`, `ORIG_HEAD`, `FETCH_HEAD` in a `.git` or a
 * directory probe calls a bare repository) or a reflog (`logs/<ref>`: the
 * ids of the entries the agent added, ws_git_reflog_new_ids), the reason (a
 * new string: what, the path found and the ref) that a commit it names and
 * the host's same ref did not is risky against the host's commit for that ref
 * (ws_git_commit_reason; the commits below it that the host's does not reach
 * too; for refs/stash its index and untracked parents; a new or changed
 * refs/replace/ ref always), or NULL; a deleted
 * loose ref is checked for the
 * value the workspace's packed-refs gives it.  *cache keeps the git dir's
 * state between calls (NULL at first; ws_gitrefs_free after the last). */
struct ws_gitrefs;
char *ws_git_ref_reason(struct ws_gitrefs **cache, const struct ws_change *ch,
                        const struct ws_layers *l, char *const *patterns,
                        const struct ws_gitdir_probe *probe);
void ws_gitrefs_free(struct ws_gitrefs *r);

/* gitconfig.c: the work-tree paths (relative to the host dir) that the
 * host's `.git/config`, the operator's own (system and global) ones, and
 * what they include, make git run or read; keys[i] names the key that
 * named paths[i]. */
struct ws_gitcfg {
  char **paths;
  char **keys;
  size_t n;
  /* extensions.objectFormat: 20 (sha1), 32 (sha256), SIZE_MAX another, 0 unset */
  size_t hash_size;
  /* the last core.hooksPath read, as written (`~/` expanded for a file of
   * the operator's): one outside the host dir has its hooks read too */
  char *hooks_path;
  /* set by the caller: the top of the work tree the paths are relative to
   * (a nested repository's; NULL or "" the host dir) */
  const char *top;
};
/* Parse one config text; cfgdir: its directory in the work tree (includes
 * are relative to it), or NULL for a file outside it; host: the host dir's
 * absolute path (absolute values below it count), or NULL.  The work-tree
 * files it includes are added to *ret_includes (may be NULL); for a file
 * outside, every include's value as written. */
void ws_gitcfg_parse(const char *text, size_t len, const char *cfgdir, const char *host,
                     struct ws_gitcfg *g, char ***ret_includes);
/* The host dir's `.git/config`, the operator's system and global files
 * (/etc/gitconfig or GIT_CONFIG_SYSTEM, GIT_CONFIG_GLOBAL, ~/.gitconfig and
 * ~/.config/git/config of $HOME, of $SUDO_USER and of the host dir's owner)
 * and their includes, as above, with the hooks of the host dir and of a
 * core.hooksPath outside it (g empty when none names anything). */
void ws_gitcfg_read(int hostfd, struct ws_gitcfg *g);
/* The work-tree paths that the hooks of the host's repository at repo ("" the
 * host dir's own; its `.git/hooks`, which may be a symlink into the work tree,
 * or for a `.git` file the hooks of its gitdir or of that one's commondir)
 * run: a hook that is a symlink into the work tree, the words of a hook's text
 * that name a file of it; added to g (named by the hook's path). */
void ws_gitcfg_read_hooks(int hostfd, const char *repo, struct ws_gitcfg *g);
/* The work-tree path that path (a path of the work tree) leads to on the host:
 * itself, or where the symlinks of the host at its end lead (up to 8), or
 * NULL when that is outside the host dir (host: its absolute path) or does
 * not resolve. */
char *ws_host_link_end(int hostfd, const char *path, const char *host);
void ws_gitcfg_free(struct ws_gitcfg *g);
/* The hash size of the repository whose config is open at fd, as git reads
 * it: 32 for extensions.objectFormat = sha256, 20 for sha1 or none; 0 when
 * it cannot be read or names another. */
size_t ws_gitcfg_hash_size(int fd);

/* view.c: the lowerdir option of a sub-agent's overlay (w->lowerdir a
 * view), from its parent's workspace record; records the layers in
 * <dir>/view for its own children.  NULL and err when a layer's path
 * holds a symlink or is otherwise not the parent's view. */
char *ws_view_layers(struct workspace *w, struct error *err);
/* The error of a failed workspace_open_host (errno) of w's host dir: for a
 * view whose process is gone (ESRCH), says so. */
int ws_host_error(const struct workspace *w, struct error *err);

/* image.c: the size-limited upper layer (an ext4 image on a loop device). */
struct ws_fs *ws_fs_new(void);
void ws_fs_free(struct ws_fs *fs);
/* Mount the image of w (detached) unless it is mounted already. */
int ws_fs_mount(const struct workspace *w, struct error *err);
/* A new fd of the directory that holds upper/, work/ and retired/: the
 * image's root, a sub-agent's <image>/sub/<id> in its ancestor's image
 * (w->upper_in), or w->dir when the workspace has no image. */
int ws_upper_base(const struct workspace *w, struct error *err);
/* ws_upper_base, making a sub-agent's <image>/sub/<id> in its ancestor's
 * image first (w->upper_in). */
int ws_upper_base_make(const struct workspace *w, struct error *err);
/* The path of that directory where its image is attached (<dir>/fs, the
 * ancestor's <dir>/fs/sub/<id>), or w->dir: the overlay's upperdir and
 * workdir are below it. */
char *ws_upper_base_path(const struct workspace *w);
/* w->upper_in from <dir>/upper-in (left NULL without one). */
int ws_family_read(struct workspace *w, struct error *err);
/* Record owner's image as the one that holds w's upper (<dir>/upper-in). */
int ws_family_record(struct workspace *w, const char *owner, struct error *err);
/* *ret: the workspace w->upper_in names, its image mounted (detached);
 * ENOENT when it or its image is gone. */
int ws_family_load(const struct workspace *w, struct workspace **ret, struct error *err);
/* *ret: the ids of the sub-agents' workspaces whose upper layer in w's
 * image holds changes (NULL: none, or w has no image). */
int ws_family_kept(struct workspace *w, char ***ret, struct error *err);
/* Remove w's upper and work dirs from its ancestor's image (nothing to do
 * when the image is gone, or w has an upper of its own). */
int ws_family_remove(const struct workspace *w, struct error *err);
/* Can this host make and mount images?  *why when not. */
bool ws_image_supported(const char **why);
/* <dir>/upper.img: a sparse copy of the template of that size (made once). */
int ws_image_create(const struct workspace *w, uint64_t size, struct error *err);
/* ws_image_create for create's new workspace: the template and fs/ now, the
 * copy itself by workspace_mount_start's thread (or ws_fs_mount without
 * one); workspace_has_image is true from here on. */
int ws_image_plan(struct workspace *w, uint64_t size, struct error *err);
/* <dir>/retired.mark: a rollback left retired uppers in the image. */
#define WS_RETIRED_MARK "retired.mark"
/* Unmount and delete <dir>/upper.img. */
int ws_image_remove(struct workspace *w, struct error *err);
/* Blocks of the image on the host disk (bytes); *ret_apparent: its size. */
uint64_t ws_image_disk_bytes(const struct workspace *w, uint64_t *ret_apparent);

#endif
