/* monitor_internal.h - the monitor's loop and its event sources.
 *
 * One process, one thread.  Sources register an fd with a callback that
 * reads until EAGAIN and never blocks; the fds sit in one epoll set, which
 * is polled with the init's pidfd by the monitor's loop or, when the
 * container has an egress policy, by the DNS resolver's loop (egress_helper.h) as
 * its aux fd.  Sources with coalesced state register a flush function,
 * called at least every MONITOR_TICK_MS (a timerfd in the set) while they
 * have something pending and once with final = true before the monitor
 * exits.
 */
#ifndef AGENTRT_MONITOR_INTERNAL_H
#define AGENTRT_MONITOR_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "audit/audit.h"
#include "audit/jbuf.h"
#include "cgroups/cgroup.h"
#include "monitor/monitor.h"
#include "monitor/subagents.h"
#include "monitor/secret_store.h"

#define MONITOR_MAX_SOURCES 16
#define MONITOR_TICK_MS 250
#define MONITOR_COALESCE_MS 1000

struct monitor;
typedef void (*monitor_fd_fn)(struct monitor *m, int fd, short revents, void *ctx);
/* Returns true while it still holds pending events. */
typedef bool (*monitor_flush_fn)(struct monitor *m, void *ctx, bool final);

struct monitor_source {
  int fd;
  short events;
  monitor_fd_fn fn;
  monitor_flush_fn flush;
  void *ctx;
};

struct monitor {
  struct audit_log *log;
  char *id;
  const char *root; /* the store in the data directory (the workspaces) */
  char *warning;    /* for create's stderr: a source that failed */
  pid_t init_pid;
  uint64_t init_start; /* its /proc/PID/stat start time, 0 = unknown */
  int init_pidfd;
  int upper_fs;          /* the workspace image's mount, from create with ROOT; -1 */
  bool serves_children;  /* the sub-agent API: children write in our image too */
  bool init_not_ns_init; /* the init joined a pid namespace (a pod's): not its pid 1 */
  uint64_t pidns_ino;    /* the init's pid namespace (0: shares ours -> cgroup check) */
  char *cgroup_path;
  struct cgroup_manager *cg;
  uint64_t oom_count;
  int pids_events_fd;      /* pids.events of the cgroup, -1 */
  uint64_t pids_max_count; /* its "max" counter at the last look */
  int64_t pids_looked_ms;  /* monitor_now_ms() of that look (monitor_check_pids_soon) */
  bool pids_pending;       /* an exit came within the interval: look at the next tick */
  bool have_proc;          /* the proc connector is subscribed */
  struct error early_err;  /* why it is not (recorded after "create") */
  bool have_net;           /* NFLOG is bound */
  bool in_userns;          /* monitor_opts.in_userns */
  bool have_exit;
  int exit_status; /* wait status from the proc connector */
  bool stop;
  bool ending; /* finish(): the container ended, its queued events are read whole */
  unsigned write_errors;
  struct subagent_parent sub; /* the sub-agent API's view of us (.exe NULL: off) */
  int epfd;                   /* the sources' epoll set */
  int tick_fd;                /* timerfd: the flush tick, armed while events are pending */
  bool tick_armed;
  struct seccomp_src *seccomp; /* monitor_seccomp.c, NULL = off */
  struct secret_store secrets; /* the values (secret_store.h); never written anywhere */
  struct monitor_source src[MONITOR_MAX_SOURCES];
  size_t n_src;
};

/* Register a source: fd (may be -1 for a flush-only source). */
int monitor_add_fd(struct monitor *m, int fd, short events, monitor_fd_fn fn, void *ctx);
void monitor_set_flush(struct monitor *m, int fd, monitor_flush_fn flush);
/* epoll events of fd again (EPOLL_CTL_MOD), e.g. EPOLLIN | EPOLLONESHOT. */
int monitor_rearm_fd(struct monitor *m, int fd, uint32_t events);
/* Remove a source (its fd is closed): one at EOF or hung up, which a
 * level-triggered epoll would otherwise report for ever. */
void monitor_drop_fd(struct monitor *m, int fd);
/* Append a record (fields: JSON members or NULL); failures are counted. */
void monitor_record(struct monitor *m, const char *kind, const char *fields);
/* An "audit_error" record: a source could not be set up or lost events. */
void monitor_error(struct monitor *m, const char *source, const struct error *err);
/* An "audit_error" record of events a kernel queue dropped ("lost": true,
 * read by `audit verify` and --summary): what says which, events how many
 * when the kernel tells (0: not known). */
void monitor_loss(struct monitor *m, const char *source, const char *what, uint64_t events);
/* Is the process whose verified /proc/<pid> directory is `dir` one of the
 * container's?  (its pid namespace, else its cgroup) */
bool monitor_owns_procdir(struct monitor *m, int dir);
/* A process record's argv (monitor_proc.c): cmd is NUL-separated, len bytes,
 * at most ARGV_MAX_ARGS of ARG_MAX_LEN bytes each ("truncated" beyond, or
 * when the caller says so). */
#define ARGV_MAX_BYTES 4096 /* of /proc/<pid>/cmdline */
#define ARGV_MAX_ARGS 64
#define ARG_MAX_LEN 512
void monitor_add_argv(struct jbuf *b, const char *cmd, ssize_t len, bool truncated);
/* The file name below dirfd (a /proc/<pid> directory) into buf (size > 1),
 * NUL-terminated: its length, or -1. */
ssize_t monitor_read_at(int dirfd, const char *name, char *buf, size_t size);
/* "pid" and the ids of the exec call's caller (thread tid, its /proc
 * directory dir) as the program it runs will have them: its thread group's
 * (a thread's exec takes the leader's pid); that pid. */
pid_t monitor_proc_caller_ids(struct jbuf *b, int dir, pid_t tid);
/* An exec call (at: execveat) that stopped at the seccomp listener fd
 * (monitor_exec.c): let it go on, and record it unless it is the runtime's
 * exec of its stub (stub).  For a container whose kernel refuses us process
 * events (monitor_opts.exec_records). */
struct seccomp_notif;
void monitor_exec_call(struct monitor *m, int fd, const struct seccomp_notif *req, bool at,
                       bool stub);
/* The files exec opened on the container's mounts, by pid (monitor_execfan.c):
 * open marks them (after the init's root is set up); drain reads what is
 * queued (a full queue is a loss record); take gives the first file of the exec that ran (the
 * latest, with the interpreters and loader it opened) into exe (when not NULL), those others as a
 * JSON array into more, the files pid's exec calls opened before it into before (when not NULL;
 * *ret_dropped: how many more there were), those of exec calls after it that could not run into
 * failed, and forgets them: false when it opened none. */
int monitor_execfan_open(struct monitor *m, struct error *err);
void monitor_execfan_drain(struct monitor *m);
/* The same to the end of the queue, at the monitor's end. */
void monitor_execfan_drain_end(struct monitor *m);
bool monitor_execfan_take(pid_t pid, char *exe, size_t size, struct jbuf *more, struct jbuf *before,
                          struct jbuf *failed, unsigned *ret_dropped);
void monitor_execfan_close(void);
/* Check the cgroup's OOM-kill counter, record "oom" when it rose. */
void monitor_check_oom(struct monitor *m);
void monitor_check_pids(struct monitor *m);
/* The same at most once a MONITOR_TICK_MS, on an exit: the kernel wakes no
 * watch of pids.events on cgroup v1 (nor on v2 mounted with
 * pids_localevents), and a fork refused at the limit is most often its
 * process's end (pids-limit-unseen).  ours: the exit was of a known process of the container; then
 * a look the interval put off is taken at the next tick (the last exits of a burst), while any
 * other exit looks only when the interval is over (a bomb's processes come faster than they are
 * tracked; the host's exits must not arm the tick of an idle monitor). */
void monitor_check_pids_soon(struct monitor *m, bool ours);
/* Under a flood (monitor_flood.c): may this record of kind by program be
 * written in full?  false: it was counted into a coalesced record. */
bool monitor_flood_admit(struct monitor *m, const char *kind, const char *program,
                         const char *detail, pid_t pid);
/* The same for a record that stands for n events, whose detail (may be
 * NULL) is written as member detail_key; program "" = none. */
bool monitor_flood_admit_n(struct monitor *m, const char *kind, const char *program,
                           const char *detail_key, const char *detail, pid_t pid, uint64_t n);
/* Write the counted records older than the window (all when final). */
bool monitor_flood_flush(struct monitor *m, bool final);

/* An overlay's upper file (urel below updir, up its stat) whose type, mode,
 * size and mtime are the lower file's (lrel below lodir, lo): is it that
 * file's copy-up (or its very bytes), another file put at its name, or not
 * told (its bytes not compared: too large, or past the monitor's read
 * budget) (monitor_copyup.c)?  *origins: this workspace's copy-ups carry
 * origins. */
struct stat;
enum copyup_verdict { COPYUP_SAME, COPYUP_CHANGED, COPYUP_UNVERIFIED };
enum copyup_verdict monitor_copyup_check(int updir, const char *urel, const struct stat *up,
                                         int lodir, const char *lrel, const struct stat *lo,
                                         bool *origins);
/* Milliseconds of CLOCK_MONOTONIC. */
int64_t monitor_now_ms(void);

/* Sources (each returns < 0 with err set when it cannot be used). */
/* subscribes to the kernel's process events (before the init exists;
 * they queue until the loop runs), or takes the socket monitor_proc_adopt()
 * was given; _attach then tracks the init.  1: open, but the kernel did not
 * take the subscription (a user namespace; err says so). */
int monitor_proc_open(struct monitor *m, struct error *err);
void monitor_proc_attach(struct monitor *m);
void monitor_proc_close(struct monitor *m);
/* The kernel sends a process's exit event after it wakes the process's
 * pidfd: wait up to ms for the init's (m->have_exit) once its pidfd fired. */
void monitor_proc_await_exit(struct monitor *m, int ms);
/* Once the container ended: what the kernel queued before, read to its end
 * (up to ms; then a loss). */
void monitor_proc_drain_end(struct monitor *m, int ms);
/* protected: the profile's review list (workspace/protect.c): changes to
 * such paths are always recorded in full, also under a flood. */
int monitor_files_open(struct monitor *m, const char *workspace, char *const *protected,
                       struct error *err);
void monitor_files_release(struct monitor *m);
int monitor_net_open(struct monitor *m, int group, struct error *err);
/* the channel on which the init sends its seccomp listener (or "OFF why");
 * denied calls are answered with -eno, or the errno of the FILTER rule with
 * argument conditions they match, and recorded as "syscall"; with
 * exec_records, exec calls go on and are recorded as "process" */
int monitor_seccomp_open(struct monitor *m, int chan, const struct oci_seccomp *filter, int eno,
                         bool exec_records, struct error *err);
/* then: <state dir>/monitor.sock, on which `exec` sends its processes' */
int monitor_seccomp_listen(struct monitor *m, int state_dirfd, struct error *err);

#endif
