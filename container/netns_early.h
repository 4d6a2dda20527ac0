/* netns_early.h - a container's new network namespace, made by a thread
 * while create does its own work.
 *
 * A new network namespace is the dearest part of the init's clone (~0.45 ms
 * here: its loopback device, per-namespace sysctl tables and protocol
 * state), and everything create does before the clone (profile, state
 * directory, workspace, cgroups, the monitor) does not need it.  So a thread
 * unshares one, brings its `lo` up and keeps an fd of it; spawn_init enters
 * it around the clone (the init is born in it, as with CLONE_NEWNET) and
 * leaves again.  Used only where the clone would make the namespace in the
 * caller's user namespace (no user namespace in the config) and where we may
 * enter it and come back (not under a user namespace of our own: a rootless
 * engine cannot re-enter the host's).
 *
 * The thread is worth it only where create has enough work of its own to
 * hide it behind: measured here (2 CPUs, a nested VM), the thread took
 * ~0.6 ms from its creation to its join (its start on the idle CPU, 0.34 ms
 * of unshare, `lo`, its exit and the wake-up) against ~0.27 ms the same
 * namespace adds to the clone; an agent run (monitor, workspace) does
 * ~1.5 ms before its clone, a plain one ~0.3 ms. */
#ifndef AGENTRT_NETNS_EARLY_H
#define AGENTRT_NETNS_EARLY_H

#include <pthread.h>
#include <stdbool.h>

#include "oci/config.h"

struct netns_early {
  pthread_t thread;
  bool started;
  int fd; /* the namespace, once the thread is joined; -1 = none (the clone makes one) */
};

#define NETNS_EARLY_INIT                                                                           \
  {                                                                                                \
    .fd = -1                                                                                       \
  }

/* Does this config get its network namespace from the clone, in our user
 * namespace? (in_userns: we run in a user namespace of our own) */
bool netns_early_wanted(const struct oci_config *c, bool in_userns);
/* Start the thread (nothing when it cannot be started: the clone makes the
 * namespace as before). */
void netns_early_start(struct netns_early *n);
/* Join the thread: the namespace's fd (still ours, closed by
 * netns_early_close) or -1 when there is none. */
int netns_early_take(struct netns_early *n);
/* Join the thread if it runs and close the fd (idempotent). */
void netns_early_close(struct netns_early *n);

#endif
