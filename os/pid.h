/* pid.h - is a process (pid + start time, so a reused pid is not it) alive,
 * and ending one.  Used by the container state, the CLI and the monitor. */
#ifndef AGENTRT_PID_H
#define AGENTRT_PID_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/error.h"

int proc_start_time(pid_t pid, uint64_t *ret, char *ret_state);
/* An O_PATH fd of /proc/PID (the verified procfs) for the process pid
 * started at start_time (stat field 22), read through that fd, so that the
 * entries opened from it (root, ns/...) are that process's even if pid is
 * reused later: they fail once it is gone.  -1 and err (ESRCH) when pid is
 * gone, a zombie, or now another process; start_time 0 is never matched. */
int proc_open_identified(pid_t pid, uint64_t start_time, struct error *err);
/* /proc/PID/ns/NAME of that process, opened through proc_open_identified's
 * fd (checked to be an nsfs file): its namespace, never the namespace of a
 * process that took the pid since.  -1 and err (ESRCH) when it is gone. */
int proc_open_ns_identified(pid_t pid, uint64_t start_time, const char *name, struct error *err);
/* The same for a path "/proc/PID/ns/NAME" (as a config names a namespace to join); -2, err
 * untouched, when path is not of that form. */
int proc_open_ns_path_identified(const char *path, uint64_t start_time, struct error *err);
/* The pid /proc/locks names for the flock(2) lock held on fd's file: the process that took it,
 * which may be gone while a child it forked still holds the descriptor (and the lock).  0 when
 * there is none or /proc/locks cannot be read. */
pid_t proc_flock_holder(int fd);
/* Is pid alive (not a zombie) with this start time? */
bool proc_alive(pid_t pid, uint64_t start_time);
/* Send sig (SIGKILL; 0 only waits) and wait (bounded) for the process to be gone. */
int proc_kill_wait(pid_t pid, uint64_t start_time, int sig, int timeout_ms);
/* SIGKILL a child of ours and reap it (the unwind of a failed set-up). */
void proc_kill_reap(pid_t pid);
/* For a helper about to exit whose fds are slow to release (a fanotify
 * group, a netfilter netlink socket: a grace period each): a child shares
 * them (and our memory) and exits only once we are gone, so whoever waits
 * for our exit (a pidfd) does not wait for that teardown.  Best effort;
 * returns in the caller, which must then exit at once (_exit), closing
 * nothing: the descriptor table is the child's too. */
void proc_leave_fd_teardown_to_child(void);
/* Before it: fd is for that child to close first, in the order given, before
 * it waits for us (a mount whose unmount may take milliseconds, then the
 * lock that tells others it is done); closed at once when that child cannot
 * be made. */
void proc_teardown_close_first(int fd);
/* How many more proc_teardown_close_first takes in order (past that, it closes at once). */
int proc_teardown_room(void);
/* Before it: fd's file system is for that child to commit (syncfs) and trim
 * (FITRIM) before its closes, which unmount it; done at once, here, when that
 * child cannot be made.  One file system: -1 when one is already there (the
 * caller trims its own), 0 when taken. */
int proc_teardown_trim_first(int fd);

/* The wait status of the process of PIDFD once it has exited and been reaped
 * by its parent (any process holding a pidfd may ask: Linux 6.15's
 * PIDFD_GET_INFO with PIDFD_INFO_EXIT), waiting up to timeout_ms for the
 * reap.  0 with *ret_status set; -1 when the kernel cannot tell (older
 * kernels: EINVAL/ENOTTY) or not in time. */
int pidfd_exit_status(int pidfd, int timeout_ms, int *ret_status);

#endif
