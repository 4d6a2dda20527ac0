/* spawn.h - starting a container's init process.
 *
 * The parent (create/run) and the init talk over a SOCK_SEQPACKET pair:
 *
 *   parent                          init (cloned into new namespaces)
 *   id maps, cgroup  -- GO -->
 *   (workspace image) -- WS_FS(fd) -> join ns, sysctl, rootfs_setup (takes
 *                                   WS_FS before the mount that needs it)
 *   (run, start_early) -- START ->
 *                    <-- HOOKS --   (when prestart/createRuntime hooks exist)
 *   run those hooks  -- HOOKS_DONE ->
 *                                   createContainer hooks, pivot
 *   (on_rooted)      <-- ROOTED --  (with on_clone and on_rooted)
 *                                   finalize
 *                    <-- PTY(fd) -- (terminal)
 *                    <-- READY --   executable resolved; now waits for start
 *   (create exits; `start` writes exec.fifo / `run` sends START)
 *
 * Any failure in the init arrives as ERROR with its message; an init that
 * dies without a word is reported with its wait status.
 */
#ifndef AGENTRT_SPAWN_H
#define AGENTRT_SPAWN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/error.h"
#include "container/container.h"
#include "container/netns_early.h"

struct spawn_opts {
  struct container *c; /* state (for hooks' JSON); c->config is the final config */
  const char *bundle;
  const char *rootfs;
  bool no_pivot;
  bool use_fifo; /* create: wait on <dir>/exec.fifo; run: wait for START */
  int preserve_fds;
  const struct global_opts *g;
  const void *config_bpf; /* the config's own seccomp filter, compiled (struct sock_fprog), or
                             NULL: the init compiles linux.seccomp itself */
  const void *extra_bpf;  /* the profile's compiled seccomp filter (struct sock_fprog) or NULL */
  const void *notify_bpf; /* its notify variant (process_opts), NULL = none */
  bool pdeathsig;         /* the program's parent-death signal (create_opts.pdeathsig) */
  bool no_new_keyring;    /* keep the caller's session keyring (create_opts) */
  int notify_fd;          /* the monitor's socket for the listener (with notify_bpf) */
  int listener_fd;        /* connected to linux.seccomp.listenerPath, or < 0 (the init uses it) */
  /* An overlay workspace's size-limited upper layer (workspace/image.c): a
   * detached mount the init attaches at ws_fs_path (a host path) in its
   * mount namespace before the config's mounts.  NULL: none. */
  const char *ws_fs_path;
  int ws_fs_fd;
  /* Or, with ws_fs_fd -1: made by this right after GO, while the init sets
   * up, and passed to it (WS_FS); the init waits for it before the first
   * mount that names ws_fs_path.  Returns the mount's fd (ours to close) or
   * -1 with err, which fails the spawn. */
  int (*ws_fs_late)(void *ud, struct error *err);
  void *ws_fs_ud;
  /* Per config mount: a file system this made (an overlay workspace under
   * a user namespace whose root is another uid, which could not reach its
   * layers), the init attaches it instead of making it; -1 = none.  NULL:
   * none at all.  n_premounted: its length (mounts added after it have none). */
  const int *premounted;
  size_t n_premounted;
  /* Called right after the clone when the init got a new network
   * namespace from it (one joined by path, or unshared under a joined user
   * namespace, comes later), while it sets up its root: the monitor starts
   * the work that needs only its namespaces.  NULL = none; < 0 fails the
   * spawn. */
  int (*on_clone)(void *ud, pid_t pid, uint64_t start_time, struct error *err);
  /* Called when the init's root is final (after its pivot, before its
   * masks and READY), with on_clone's ud; only where on_clone ran.  NULL =
   * none. */
  void (*on_rooted)(void *ud);
  void *ud;
  /* A new network namespace made beside create's work (netns_early.h): the
   * init is cloned inside it instead of with CLONE_NEWNET.  NULL = none. */
  struct netns_early *netns_early;
  /* run, when nothing is to happen between the init's READY and its START
   * (no monitor, console socket, terminal, prestart or createRuntime hooks):
   * called right after GO to record the state, whereupon START is queued at
   * once and the init goes on to exec without a round trip through us.
   * NULL = START comes from spawn_start. */
  int (*start_early)(void *ud, pid_t pid, uint64_t start_time, struct error *err);
  void *start_ud;
};

struct spawn_result {
  pid_t pid;
  uint64_t start_time;
  int pty_master; /* -1 unless process.terminal */
  int sync_fd;    /* run: the parent's end, to send START */
  bool started;   /* START queued already (spawn_opts.start_early) */
};

int spawn_init(const struct spawn_opts *o, struct spawn_result *ret, struct error *err);
/* run: let the init go on to exec the process. */
int spawn_start(struct spawn_result *r, struct error *err);

/* start: wake a created init through its fifo.  An init that has not
 * taken START after a short wait is asked about: when frozen(ud) says its
 * cgroup is frozen, START is taken back and start refused (-1, the fifo
 * still there: the container stays created).  frozen may be NULL. */
int fifo_start(int dirfd, bool (*frozen)(void *), void *ud, struct error *err);

#endif
