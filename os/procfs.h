/* procfs.h - one verified handle for every /proc access the runtime makes.
 *
 * CVE-2019-16884, CVE-2019-19921, CVE-2025-52881: a container can put a fake
 * /proc in place, or redirect a path under /proc to another procfs file.  The
 * runtime therefore never opens a "/proc/..." path string directly: it opens
 * files relative to a procfs instance it checked (fstatfs() == PROC_SUPER_MAGIC),
 * preferably a private one from fsopen("proc"), with O_NOFOLLOW and checks
 * that the file opened is still on procfs.
 */
#ifndef AGENTRT_PROCFS_H
#define AGENTRT_PROCFS_H

#include <stdbool.h>
#include <sys/types.h>

#include "common/error.h"

/* The verified procfs root fd (opened once per process, O_PATH|O_DIRECTORY).
 * Call procfs_reset() after changing pid namespace or mount namespace. */
int procfs_root(struct error *err);
void procfs_reset(void);
/* Open "self/...", "<pid>/...", "thread-self/...", "sys/..." under the
 * verified root; the result is checked to be on procfs. */
int procfs_open(const char *relpath, int flags, struct error *err);
/* Open /proc/<who>/ns/<name> (who = "self" or a pid), following that one
 * magic link, checked to be an nsfs file. */
int procfs_open_ns(const char *who, const char *name, struct error *err);
/* The same in two steps, for several entries: the verified /proc/<who>/ns
 * directory (O_PATH), then one entry of it (who only names it in errors). */
int procfs_open_ns_dir(const char *who, struct error *err);
int procfs_open_ns_at(int nsdir, const char *who, const char *name, struct error *err);
/* Write a whole value (one write) to a procfs file, e.g. "self/oom_score_adj". */
int procfs_write(const char *relpath, const char *value, struct error *err);
/* Read a small procfs file into buf (NUL-terminated); returns bytes read. */
ssize_t procfs_read(const char *relpath, char *buf, size_t size, struct error *err);
/* Read a whole procfs file (e.g. "self/mountinfo") into a new buffer. */
int procfs_read_all(const char *relpath, char **ret, struct error *err);
/* Reopen an O_PATH fd with real open flags through the verified
 * "thread-self/fd/N" magic link (the one place a magic link is followed). */
int procfs_reopen(int fd, int flags, struct error *err);
/* Is fd on procfs? */
bool fd_is_procfs(int fd);

/* What one read of /proc/<pid>/status says about a process (a zombie's too):
 * its name (the Name line unescaped: the kernel writes a newline in it as
 * "\n" and a backslash as "\\"), its state letter, and its ids; -1 and 0
 * for what the text does not have. */
struct procfs_status {
  char comm[32];
  char state;
  long long cpid;  /* the last NSpid: its pid in its own pid namespace */
  long long tgid;  /* its thread group's: the pid a thread's exec takes */
  long long ctgid; /* the last NStgid: tgid in its own pid namespace */
  long long ppid;
  long long uid; /* the real uid */
};
void procfs_parse_status(const char *text, struct procfs_status *st);

#endif
