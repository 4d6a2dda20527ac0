/* early_thread.h - a short thread of system calls that runs beside the
 * caller's other work (container/netns_early.c, workspace/image.c).
 *
 * Such a thread makes only system calls: no allocation, no lock of libc's,
 * so that a fork of glibc's beside it inherits nothing held.  Its caller
 * joins it before any clone that is not glibc's fork (the init's clone3):
 * the child's glibc would still count it, and setgroups/setresuid there
 * would wait for it forever (glibc changes the ids of every thread).
 */
#ifndef AGENTRT_EARLY_THREAD_H
#define AGENTRT_EARLY_THREAD_H

#include <pthread.h>

/* Start fn(arg) on a 64 KiB stack.  1: it runs, pthread_join *t later;
 * 0: it has run already (an ASan build joins it at once: GCC 12's
 * AddressSanitizer has no fork handler for the locks its allocator takes
 * when a thread starts and ends, and a process forked at that moment hung
 * at its next malloc); -1: no thread (the caller does the work itself). */
int early_thread_start(pthread_t *t, void *(*fn)(void *), void *arg);

#endif
