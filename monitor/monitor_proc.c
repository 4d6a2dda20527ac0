/* monitor_proc.c - the monitor's process source: the kernel's proc connector
 * (NETLINK_CONNECTOR, CN_IDX_PROC), not /proc polling.
 *
 * PROC_EVENT_FORK: a child of one of the container's processes is one of
 * them too (known even if it is reaped before its exec is read).
 * PROC_EVENT_EXEC: when the process belongs to the container (known from
 * forks, else its pid namespace, else its cgroup), record pid, container pid, ppid, uid, argv
 * (bounded) and exe, read from /proc at once (a process that is already gone
 * is recorded with its comm from the zombie's status, and with the file its
 * exec opened: monitor_execfan.c).  PROC_EVENT_EXIT gives
 * the init's wait status (the monitor is not its parent) and, for a SIGKILL
 * death, prompts an OOM counter check.  Listening needs CAP_NET_ADMIN in the
 * initial user namespace: the monitor runs as host root.  The whole host's
 * events reach every monitor: each wake-up reads what is queued and handles
 * the container's known processes before the rest (handle_batch), and an
 * unknown pid is checked against the container before anything else of it
 * is read.  On kernels >= 6.6, which filter event types per socket, only
 * exec events wake the monitor: forks and exits come on a second socket
 * that is read after the exec socket on every wake-up (each fork and exit
 * that happened before a queued exec is queued on it by then) and, so that
 * it cannot fill up, armed one-shot in the epoll set at most every
 * MONITOR_TICK_MS, or again at once while a storm keeps it full; the two
 * are handled in the order of their timestamps, a batch at a time when
 * more are queued than a batch holds (proc_read).
 * A host's forks and exits no longer wake every idle monitor (bench/README,
 * "the exec-heavy row").  Messages not sent by
 * the kernel (nl_pid != 0) are ignored: a local process could unicast fakes.
 *
 * The runtime starts every container process through its sealed memfd stub
 * (trampoline.c), which execs the real program at once: an exec whose
 * executable is byte for byte that stub is not recorded (the next one is),
 * and when the monitor reads a process only after its second exec, the same
 * record is not written twice for one pid.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/sha256.h"
#include "common/util.h"
#include "monitor/monitor_internal.h"
#include "os/procfs.h"
#include "os/trampoline.h"

#define PROC_DRAIN_MAX 1024 /* datagrams per wake-up */
#define RECENT_MAX 64       /* last record per pid, for the duplicate check */
#define SIDE_ROUNDS_MAX 64  /* batches of forks and exits per wake-up (then the next one) */

struct recent {
  pid_t pid;
  char digest[SHA256_HEX_LEN + 1];
};
static struct recent recent[RECENT_MAX];
static size_t recent_next;

static int proc_fd = -1; /* every event, or only execs when side_fd is open */
static int side_fd = -1; /* forks and exits (kernels >= 6.6), one-shot in the epoll set */
static bool side_armed;
static bool side_busy; /* its last read filled a batch: read it again at once */
static int64_t side_fired_ms;
static int64_t last_loss_ms;

/* struct proc_input of kernels >= 6.6 (linux/cn_proc.h there) */
struct proc_input_v2 {
  uint32_t mcast_op;
  uint32_t event_type;
};

static bool kernel_filters_events(void)
{
  struct utsname u;
  unsigned major = 0, minor = 0;

  if (uname(&u) < 0 || sscanf(u.release, "%u.%u", &major, &minor) != 2)
    return false;
  return major > 6 || (major == 6 && minor >= 6);
}

#define PROC_TYPES_ALL (PROC_EVENT_FORK | PROC_EVENT_EXEC | PROC_EVENT_EXIT)
#define PROC_TYPES_SIDE (PROC_EVENT_FORK | PROC_EVENT_EXIT)

/* types: the event types this socket wants (Linux 6.6), else 0: the plain
 * op (every type, the acknowledgement included) */
static int send_op(int fd, uint32_t op, uint32_t types)
{
  uint8_t buf[NLMSG_SPACE(sizeof(struct cn_msg) + sizeof(struct proc_input_v2))] = {0};
  struct nlmsghdr *nl = (struct nlmsghdr *)buf;
  struct cn_msg *cn = NLMSG_DATA(nl);
  struct proc_input_v2 in = {op, types};
  size_t plen = types != 0 && kernel_filters_events() ? sizeof in : sizeof(uint32_t);

  nl->nlmsg_len = (uint32_t)NLMSG_LENGTH(sizeof *cn + plen);
  nl->nlmsg_type = NLMSG_DONE;
  nl->nlmsg_pid = (uint32_t)getpid();
  cn->id.idx = CN_IDX_PROC;
  cn->id.val = CN_VAL_PROC;
  cn->ack = (uint32_t)getpid(); /* the kernel answers with it + 1 (listen_answer) */
  cn->len = (uint16_t)plen;
  memcpy(cn->data, &in, plen);
  return send(fd, buf, nl->nlmsg_len, 0) < 0 ? -1 : 0;
}

/* ---- reading a process */

ssize_t monitor_read_at(int dirfd, const char *name, char *buf, size_t size)
{
  int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  size_t off = 0;
  ssize_t n = 0;

  if (fd < 0)
    return -1;
  while (off < size - 1 && (n = read(fd, buf + off, size - 1 - off)) > 0)
    off += (size_t)n;
  close(fd);
  buf[off] = '\0';
  return n < 0 ? -1 : (ssize_t)off;
}

/* One read of the process's status: what procfs_parse_status() finds, or
 * nothing (-1, no name, no state) when the process is gone. */
static void read_status(int dir, struct procfs_status *st)
{
  char status[2048];

  if (monitor_read_at(dir, "status", status, sizeof status) <= 0)
    status[0] = '\0';
  procfs_parse_status(status, st);
}

/* The ids the status held (one it did not hold is left out, not -1) */
static void add_ids(struct jbuf *b, const struct procfs_status *st)
{
  if (st->cpid >= 0)
    jb_key_i64(b, "cpid", st->cpid);
  if (st->ppid >= 0)
    jb_key_i64(b, "ppid", st->ppid);
  if (st->uid >= 0)
    jb_key_i64(b, "uid", st->uid);
}

pid_t monitor_proc_caller_ids(struct jbuf *b, int dir, pid_t tid)
{
  struct procfs_status st;
  pid_t pid = tid;

  read_status(dir, &st);
  /* an exec makes its thread the leader, under the leader's pid
   * (thread-exec-pid) */
  if (st.tgid > 0 && st.tgid <= INT_MAX)
    pid = (pid_t)st.tgid;
  if (st.ctgid >= 0)
    st.cpid = st.ctgid;
  jb_key_i64(b, "pid", pid);
  add_ids(b, &st);
  return pid;
}

void monitor_add_argv(struct jbuf *b, const char *cmd, ssize_t len, bool truncated)
{
  size_t n = 0;

  jb_key(b, "argv");
  jb_puts(b, "[");
  for (ssize_t i = 0; i < len && n < ARGV_MAX_ARGS; n++) {
    size_t l = strnlen(cmd + i, (size_t)(len - i));
    if (n > 0)
      jb_puts(b, ",");
    jb_quote(b, cmd + i, l > ARG_MAX_LEN ? ARG_MAX_LEN : l);
    i += (ssize_t)l + 1;
  }
  jb_puts(b, "]");
  if (truncated || len >= ARGV_MAX_BYTES - 1 || n == ARGV_MAX_ARGS)
    jb_key_bool(b, "truncated", true);
}

/* The container's processes known from fork events (a child of a known
 * process is known at once, before it can exit and be reaped), with their
 * parent.  Open addressing, linear probing, backward-shift deletion.  Every
 * host fork is looked up by its parent: the 8 KiB occupancy bitmap is
 * read first, so those misses leave the 512 KiB table's pages untouched (on
 * a kernel that gives a read fault a page of its own, an idle monitor made
 * all of it resident).  It holds three quarters of TRACK_MAX, more than the
 * profile's highest pids limit (32,768): with 4,096 (3,072 held), a
 * container allowed more processes had its programs beyond them unknown, and
 * those reaped before they were read left no record (track-table-full).  A
 * table full all the same (exit events lost) is a loss the trail records. */
#define TRACK_MAX 65536
static struct tracked {
  pid_t pid, ppid;
} track[TRACK_MAX];
static uint64_t track_used[TRACK_MAX / 64];
static size_t n_track;
static bool track_full; /* a process was not tracked: a loss to record */

static size_t slot_of(pid_t pid)
{
  return ((uint32_t)pid * 2654435761u) % TRACK_MAX;
}

static bool slot_used(size_t i)
{
  return (track_used[i / 64] >> (i % 64)) & 1;
}

static void slot_set(size_t i, bool used)
{
  if (used)
    track_used[i / 64] |= (uint64_t)1 << (i % 64);
  else
    track_used[i / 64] &= ~((uint64_t)1 << (i % 64));
}

static struct tracked *track_find(pid_t pid)
{
  for (size_t i = slot_of(pid), n = 0; n < TRACK_MAX && slot_used(i); i = (i + 1) % TRACK_MAX, n++)
    if (track[i].pid == pid)
      return &track[i];
  return NULL;
}

static void track_add(pid_t pid, pid_t ppid)
{
  size_t i = slot_of(pid);

  if (pid <= 0 || track_find(pid) != NULL)
    return;
  if (n_track >= TRACK_MAX * 3 / 4) {
    track_full = true; /* the /proc check still attributes live processes */
    return;
  }
  while (slot_used(i))
    i = (i + 1) % TRACK_MAX;
  track[i] = (struct tracked){pid, ppid};
  slot_set(i, true);
  n_track++;
}

static void track_del(pid_t pid)
{
  struct tracked *t = track_find(pid);
  size_t i, j;

  if (t == NULL)
    return;
  i = (size_t)(t - track);
  track[i].pid = 0;
  slot_set(i, false);
  n_track--;
  /* move later members of the cluster back so lookups still find them */
  for (j = (i + 1) % TRACK_MAX; slot_used(j); j = (j + 1) % TRACK_MAX) {
    size_t home = slot_of(track[j].pid);
    if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
      track[i] = track[j];
      slot_set(i, true);
      track[j].pid = 0;
      slot_set(j, false);
      i = j;
    }
  }
}

/* The container's processes whose exit was handled, last EXITED_MAX of
 * them.  Forks and exits are read whole on every wake-up, execs at most
 * PROC_DRAIN_MAX / 2 (and one queued between the two reads waits too): a
 * short program's fork and exit can be handled before its exec, which then
 * found it neither tracked nor there to look at, and it went unrecorded
 * without a loss (exit-before-exec, audit-evidence.bats).  Its exit leaves
 * it here, so that exec is still known as ours.  As many as the exec
 * socket can queue: with 512, a backlog of more execs than that (the
 * monitor behind, 1,500 programs) had the exits of its first ones pushed
 * out before their execs were read, and those programs left no record and
 * no loss (exec-storm-at-exit, audit-evidence.bats).  A bit a pid says
 * which pids to look for, so that the host's execs, each looked up here,
 * do not scan the ring.  128 KiB and a bit map of 512 KiB, their pages
 * touched only by a container whose processes exit. */
#define EXITED_MAX 16384
#define EXITED_PIDS 4194304 /* the kernel's highest pid_max */
static struct tracked exited[EXITED_MAX];
static size_t n_exited, exited_next;
static uint64_t exited_bits[EXITED_PIDS / 64];

static void exited_bit(pid_t pid, bool on)
{
  if (pid <= 0 || pid >= EXITED_PIDS)
    return;
  if (on)
    exited_bits[pid / 64] |= 1ULL << (pid % 64);
  else
    exited_bits[pid / 64] &= ~(1ULL << (pid % 64));
}

static void exited_add(pid_t pid, pid_t ppid)
{
  if (n_exited == EXITED_MAX)
    exited_bit(exited[exited_next].pid, false); /* (a later exit of that pid: rare) */
  exited[exited_next] = (struct tracked){pid, ppid};
  exited_bit(pid, true);
  exited_next = (exited_next + 1) % EXITED_MAX;
  if (n_exited < EXITED_MAX)
    n_exited++;
}

/* pid's parent when pid exited as ours (the latest such exit), else 0 */
static pid_t exited_parent(pid_t pid)
{
  if (pid <= 0 || pid >= EXITED_PIDS || !(exited_bits[pid / 64] & (1ULL << (pid % 64))))
    return 0;
  for (size_t n = 0; n < n_exited; n++) {
    const struct tracked *e = &exited[(exited_next + EXITED_MAX - 1 - n) % EXITED_MAX];
    if (e->pid == pid)
      return e->ppid > 0 ? e->ppid : -1;
  }
  return 0;
}

/* A live process with an empty cmdline is between two execs (or wiped its
 * arguments): look again at the next tick, then record its comm. */
#define INCOMPLETE_MAX 32
static struct {
  pid_t pid, ppid;
  int64_t since;
} incomplete[INCOMPLETE_MAX];
static size_t n_incomplete;

static bool incomplete_take(pid_t pid)
{
  for (size_t i = 0; i < n_incomplete; i++) {
    if (incomplete[i].pid != pid)
      continue;
    incomplete[i] = incomplete[--n_incomplete];
    return true;
  }
  return false;
}

static bool incomplete_has(pid_t pid)
{
  for (size_t i = 0; i < n_incomplete; i++)
    if (incomplete[i].pid == pid)
      return true;
  return false;
}

static bool incomplete_add(pid_t pid, pid_t ppid)
{
  if (n_incomplete == INCOMPLETE_MAX)
    return false;
  incomplete[n_incomplete].pid = pid;
  incomplete[n_incomplete].ppid = ppid;
  incomplete[n_incomplete++].since = monitor_now_ms();
  return true;
}

/* Is the process's executable our own exec stub? */
static bool is_stub(int exe_fd, const char *exe, ssize_t elen)
{
  static const char prefix[] = "/memfd:agentrt-stub";
  size_t len = agentrt_stub_blob_len;
  cleanup_free uint8_t *buf = NULL;
  size_t off = 0;
  ssize_t n = 0;

  if (exe_fd < 0 || (size_t)elen < sizeof prefix - 1 || memcmp(exe, prefix, sizeof prefix - 1) != 0)
    return false;
  buf = xmalloc(len + 1);
  while (off < len + 1 && (n = pread(exe_fd, buf + off, len + 1 - off, (off_t)off)) > 0)
    off += (size_t)n;
  return off == len && memcmp(buf, agentrt_stub_blob, len) == 0;
}

/* Was exactly this record the last one written for pid? */
static bool seen(pid_t pid, const char *fields)
{
  char digest[SHA256_HEX_LEN + 1];
  struct recent *free_slot = &recent[recent_next % RECENT_MAX];

  sha256_hex(fields, strlen(fields), digest);
  for (size_t i = 0; i < RECENT_MAX; i++) {
    if (recent[i].pid != pid)
      continue;
    if (strcmp(recent[i].digest, digest) == 0)
      return true;
    free_slot = &recent[i];
    break;
  }
  if (free_slot == &recent[recent_next % RECENT_MAX])
    recent_next++;
  free_slot->pid = pid;
  memcpy(free_slot->digest, digest, sizeof digest);
  return false;
}

/* The parent a fork event named for pid (ppid: one kept from before, when
 * its exit has since dropped it from the table), or 0. */
static pid_t tracked_parent(pid_t pid, pid_t ppid)
{
  struct tracked *t = track_find(pid);

  return t != NULL && t->ppid > 0 ? t->ppid : ppid;
}

/* The other files exec opened (a script's interpreters), as long as the
 * record stays far enough below AUDIT_MAX_RECORD for an argv (its names are
 * the agent's: PATH_MAX bytes that are not UTF-8 take six times that
 * escaped, and four of them were a 68 KB record the trail refused); beyond,
 * "exec_opened_truncated". */
#define EXEC_OPENED_ROOM (AUDIT_MAX_RECORD / 2)
static void add_exec_opened(struct jbuf *b, struct jbuf *more)
{
  if (more->len == 0)
    return;
  if (b->len + more->len <= EXEC_OPENED_ROOM)
    jb_key_raw(b, "exec_opened", jb_str(more));
  else
    jb_key_bool(b, "exec_opened_truncated", true);
}

/* The files the pid's exec calls opened before the exec that ran (ones that
 * could not run, or a program that ran before it): "exec_before", with how
 * many earlier ones were not kept ("exec_before_dropped"). */
static void add_exec_before(struct jbuf *b, struct jbuf *before, struct jbuf *failed,
                            unsigned dropped)
{
  /* and the files of exec calls after it that could not run */
  if (failed->len > 0 && b->len + before->len + failed->len <= EXEC_OPENED_ROOM)
    jb_key_raw(b, "exec_failed", jb_str(failed));
  if (before->len > 0 && b->len + before->len <= EXEC_OPENED_ROOM)
    jb_key_raw(b, "exec_before", jb_str(before));
  else if (before->len > 0)
    dropped++;
  if (dropped > 0)
    jb_key_u64(b, "exec_before_dropped", dropped);
}

/* A process of ours that was reaped before we could read anything. */
static void record_reaped(struct monitor *m, pid_t pid, pid_t ppid)
{
  struct jbuf b = {0}, more = {0}, before = {0}, failed = {0};
  char exe[4096];
  unsigned dropped = 0;
  bool opened = monitor_execfan_take(pid, exe, sizeof exe, &more, &before, &failed, &dropped);

  jb_key_i64(&b, "pid", pid);
  ppid = tracked_parent(pid, ppid);
  if (ppid > 0)
    jb_key_i64(&b, "ppid", ppid);
  /* what its exec opened, the one thing left of it */
  if (opened)
    jb_key_str(&b, "exe", exe);
  jb_key(&b, "argv");
  jb_puts(&b, "[]");
  jb_key_bool(&b, "gone", true);
  add_exec_opened(&b, &more);
  add_exec_before(&b, &before, &failed, dropped);
  if (monitor_flood_admit(m, "process", opened ? exe : "?", NULL, pid))
    monitor_record(m, "process", jb_str(&b));
  jb_free(&more);
  jb_free(&before);
  jb_free(&failed);
  jb_free(&b);
}

/* Record the program pid runs now.  force: no more waiting for its argv;
 * ppid: its parent when known from before (a deferred one, see flush). */
static void record_exec(struct monitor *m, pid_t pid, bool owned, bool force, pid_t ppid)
{
  char rel[24], cmd[ARGV_MAX_BYTES], exe[4096], script[4096];
  bool has_script = false;
  struct procfs_status st;
  struct error err = {0};
  cleanup_close int dir = -1, exe_fd = -1;
  struct jbuf b = {0}, more = {0}, before = {0}, failed = {0};
  unsigned dropped = 0;
  ssize_t clen, elen;
  bool gone;

  snprintf(rel, sizeof rel, "%d", pid);
  dir = procfs_open(rel, O_PATH | O_DIRECTORY, &err);
  if (dir < 0) {
    if (owned)
      record_reaped(m, pid, ppid);
    return;
  }
  /* The exe file first, then its name, then cmdline: each read may
   * already see the next exec (stub -> program), never an earlier one, so
   * a stub name is only trusted when the file opened before it is the
   * stub (opening it after could find the program and record the stub). */
  /* an unknown pid is most often the host's: checked before anything is read */
  if (!owned && !monitor_owns_procdir(m, dir))
    return;
  exe_fd = openat(dir, "exe", O_RDONLY | O_CLOEXEC);
  elen = readlinkat(dir, "exe", exe, sizeof exe - 1);
  clen = monitor_read_at(dir, "cmdline", cmd, sizeof cmd);
  if (elen > 0 && is_stub(exe_fd, exe, elen))
    return;
  track_add(pid, 0);
  /* name, state and ids from one read (a process reaped between two reads
   * left records with its name but no parent).  No status: reaped after
   * the directory was opened; its parent is the fork event's. */
  read_status(dir, &st);
  gone = st.state == 'Z' || st.state == 'X' || st.state == '\0';
  if (st.state == '\0' && st.ppid <= 0 && tracked_parent(pid, ppid) > 0)
    st.ppid = tracked_parent(pid, ppid);
  if (clen <= 0 && !gone && !force && incomplete_add(pid, tracked_parent(pid, st.ppid)))
    return;
  /* what its exec opened: the exe of a program /proc no longer has
   * (taken either way, so that the next exec of this pid starts afresh) */
  /* a script exec'd by its own file: /proc names its interpreter, and the
   * kernel's argv the script by the path it was given (./x: relative),
   * so the file exec opened first is recorded too (script-hidden); and
   * what the pid's exec calls opened before the exec /proc shows: a
   * program that ran and exec'd another before we read it (exec-chain-hidden) */
  if (elen > 0) {
    exe[elen] = '\0';
    if (monitor_execfan_take(pid, script, sizeof script, NULL, &before, &failed, &dropped) &&
        !streq(script, exe))
      has_script = true;
  } else if (monitor_execfan_take(pid, exe, sizeof exe, &more, &before, &failed, &dropped))
    elen = (ssize_t)strlen(exe);
  /* under a flood of one program: counted, nothing more to read */
  if (elen > 0)
    exe[elen] = '\0';
  if (!monitor_flood_admit(m, "process",
                           elen > 0             ? exe
                           : st.comm[0] != '\0' ? st.comm
                                                : "?",
                           NULL, pid)) {
    jb_free(&more);
    jb_free(&before);
    jb_free(&failed);
    return;
  }
  jb_key_i64(&b, "pid", pid);
  add_ids(&b, &st);
  if (elen > 0)
    jb_key_strn(&b, "exe", exe, (size_t)elen);
  if (has_script)
    jb_key_str(&b, "script", script);
  add_exec_opened(&b, &more);
  add_exec_before(&b, &before, &failed, dropped);
  if (clen > 0) {
    monitor_add_argv(&b, cmd, clen, false);
  } else {
    jb_key(&b, "argv");
    jb_puts(&b, "[]");
    if (st.comm[0] != '\0')
      jb_key_str(&b, "comm", st.comm);
    jb_key_bool(&b, gone ? "gone" : "argv_unavailable", true);
  }
  if (!seen(pid, jb_str(&b)))
    monitor_record(m, "process", jb_str(&b));
  jb_free(&more);
  jb_free(&before);
  jb_free(&failed);
  jb_free(&b);
}

/* Is the process at dir the one of ours that exited as pid (a zombie of
 * that parent), not a process the pid was given to since? */
static bool still_exited(struct monitor *m, pid_t pid, pid_t ppid)
{
  char rel[24];
  struct procfs_status st;
  struct error err = {0};
  cleanup_close int dir = -1;

  snprintf(rel, sizeof rel, "%d", pid);
  dir = procfs_open(rel, O_PATH | O_DIRECTORY, &err);
  if (dir < 0)
    return true; /* reaped */
  read_status(dir, &st);
  if (st.state == '\0' || ((st.state == 'Z' || st.state == 'X') && (ppid < 0 || st.ppid == ppid)))
    return true;
  return monitor_owns_procdir(m, dir);
}

static void on_exec(struct monitor *m, pid_t pid)
{
  bool known = incomplete_take(pid) || track_find(pid) != NULL;
  pid_t ppid = 0;

  /* its fork and exit were handled first: ours, and most likely gone */
  if (!known && (ppid = exited_parent(pid)) != 0) {
    known = still_exited(m, pid, ppid);
    /* the pid is another's now: an exec of ours under it came before this
     * one on the socket, so none is left to come, and the host's later
     * execs under that pid no longer look through the ring */
    if (!known)
      exited_bit(pid, false);
    if (ppid < 0)
      ppid = 0;
  }
  record_exec(m, pid, known, false, ppid);
}

static bool proc_flush(struct monitor *m, void *ctx, bool final)
{
  int64_t now = monitor_now_ms();
  bool side_waits = false;

  /* the fork/exit socket fired a while ago: let it wake us again */
  if (side_fd >= 0 && !side_armed && !final) {
    if ((side_busy || now - side_fired_ms >= MONITOR_TICK_MS) &&
        monitor_rearm_fd(m, side_fd, EPOLLIN | EPOLLONESHOT) == 0)
      side_armed = true;
    else
      side_waits = true;
  }

  for (size_t i = 0; i < n_incomplete;) {
    pid_t pid = incomplete[i].pid, ppid = incomplete[i].ppid;
    if (!final && now - incomplete[i].since < MONITOR_TICK_MS) {
      i++;
      continue;
    }
    incomplete[i] = incomplete[--n_incomplete];
    record_exec(m, pid, true, true, ppid);
  }
  return n_incomplete > 0 || side_waits;
}

static void on_exit_event(struct monitor *m, const struct proc_event *ev)
{
  pid_t pid = ev->event_data.exit.process_pid, tgid = ev->event_data.exit.process_tgid;
  int status = (int)ev->event_data.exit.exit_code;
  struct tracked *t;

  if (pid != tgid)
    return; /* a thread */
  if ((t = track_find(tgid)) != NULL) {
    monitor_check_pids_soon(m, true);
    exited_add(tgid, t->ppid);
  }
  track_del(tgid);
  if (tgid == m->init_pid) {
    m->have_exit = true;
    m->exit_status = status;
  }
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
    monitor_check_oom(m);
}

static void on_loss(struct monitor *m)
{
  int64_t now = monitor_now_ms();

  if (now - last_loss_ms < 1000)
    return;
  last_loss_ms = now;
  monitor_loss(m, "process", "process events lost: No buffer space available", 0);
}

/* The events of one wake-up, in the order the kernel sent them. */
static bool proc_acked;     /* the kernel answered our LISTEN */
static bool proc_seen;      /* an event came (acked or not) */
static int adopted_fd = -1; /* monitor_proc_adopt() */
static struct proc_event batch[PROC_DRAIN_MAX];
static bool batch_done[PROC_DRAIN_MAX];
static size_t n_batch;

/* The events of one datagram into the batch (keep false: dropped).  The
 * kernel's answer to our LISTEN (PROC_EVENT_NONE with our ack + 1) is not an
 * event: true when the datagram held it, its error in *ack_err. */
static bool collect(const uint8_t *buf, size_t len, bool keep, int *ack_err)
{
  int n = (int)len;
  bool answered = false;

  for (const struct nlmsghdr *nl = (const void *)buf; NLMSG_OK(nl, n); nl = NLMSG_NEXT(nl, n)) {
    const struct cn_msg *cn = NLMSG_DATA(nl);
    struct proc_event ev;

    if (nl->nlmsg_len < NLMSG_LENGTH(sizeof *cn + sizeof ev) || cn->id.idx != CN_IDX_PROC ||
        cn->id.val != CN_VAL_PROC)
      continue;
    /* cn->data is only 4-byte aligned: copy (UBSan) */
    memcpy(&ev, cn->data, sizeof ev);
    if (ev.what == PROC_EVENT_NONE) {
      if (cn->ack == (uint32_t)getpid() + 1) {
        *ack_err = (int)ev.event_data.ack.err;
        answered = true;
      }
      continue;
    }
    if (!keep || n_batch == PROC_DRAIN_MAX)
      continue;
    batch[n_batch] = ev;
    batch_done[n_batch++] = false;
    proc_seen = true;
  }
  return answered;
}

/* The container's own processes first: the whole host's execs reach every
 * monitor, and a backlog of them (a build beside it, other containers)
 * read in order would leave a short program of ours reaped before its
 * argv is read.  Pass 1, in order: forks (tracking), exits, and the execs
 * of processes known to be ours; pass 2: the other execs, each checked
 * against the container (its pid namespace, its cgroup) through /proc. */
static void handle_first(struct monitor *m, size_t n)
{
  bool exits = false;

  for (size_t i = 0; i < n; i++) {
    const struct proc_event *ev = &batch[i];

    if (ev->what == PROC_EVENT_FORK) {
      const struct fork_proc_event *f = &ev->event_data.fork;
      if (f->child_pid == f->child_tgid && track_find(f->parent_tgid) != NULL)
        track_add(f->child_tgid, f->parent_tgid);
    } else if (ev->what == PROC_EVENT_EXEC) {
      pid_t pid = ev->event_data.exec.process_tgid;
      if (track_find(pid) == NULL && !incomplete_has(pid))
        continue;
      on_exec(m, pid);
    } else if (ev->what == PROC_EVENT_EXIT) {
      on_exit_event(m, ev);
      exits = true;
    }
    batch_done[i] = true;
  }
  /* A fork bomb held at pids.max: its forks come faster than they are
   * read, so most of its processes were never tracked and their exits
   * above did not look at pids.events (cgroup v1 gives no inotify event).
   * Any exit looks, at most once a MONITOR_TICK_MS: one pread. */
  if (exits)
    monitor_check_pids_soon(m, false);
  for (size_t i = 0; i < n; i++)
    if (!batch_done[i] && batch[i].what == PROC_EVENT_EXEC)
      on_exec(m, batch[i].event_data.exec.process_tgid);
  if (track_full) {
    static int64_t last_full_ms = -1000;
    track_full = false;
    if (monitor_now_ms() - last_full_ms >= 1000) {
      last_full_ms = monitor_now_ms();
      monitor_loss(m, "process",
                   "process events lost: too many processes to track (No buffer space available)",
                   0);
    }
  }
  /* what is left waits for the events before it */
  memmove(batch, batch + n, (n_batch - n) * sizeof *batch);
  n_batch -= n;
  memset(batch_done, 0, n_batch * sizeof *batch_done);
}

static void handle_batch(struct monitor *m)
{
  handle_first(m, n_batch);
}

/* The datagrams queued on fd into the batch, until it holds limit events:
 * DRAIN_VEC at a time (recvmmsg), as a host's fork storm queues thousands;
 * one event is one datagram of under 100 bytes (one that does not fit
 * DRAIN_DGRAM is not an event: dropped). */
#define DRAIN_VEC 64
#define DRAIN_DGRAM 128
static void drain(struct monitor *m, int fd, size_t limit)
{
  uint8_t buf[DRAIN_VEC][DRAIN_DGRAM] __attribute__((aligned(NLMSG_ALIGNTO)));
  struct sockaddr_nl from[DRAIN_VEC];
  struct iovec iov[DRAIN_VEC];
  struct mmsghdr msg[DRAIN_VEC];
  int ack_err;

  for (int i = 0; i < PROC_DRAIN_MAX && n_batch < limit;) {
    size_t want = limit - n_batch;
    int n;

    if (want > DRAIN_VEC)
      want = DRAIN_VEC;
    if (want > (size_t)(PROC_DRAIN_MAX - i))
      want = (size_t)(PROC_DRAIN_MAX - i);
    for (size_t j = 0; j < want; j++) {
      iov[j] = (struct iovec){.iov_base = buf[j], .iov_len = sizeof buf[j]};
      msg[j] = (struct mmsghdr){.msg_hdr = {.msg_name = &from[j],
                                            .msg_namelen = sizeof from[j],
                                            .msg_iov = &iov[j],
                                            .msg_iovlen = 1}};
    }
    n = recvmmsg(fd, msg, (unsigned)want, MSG_DONTWAIT, NULL);
    if (n < 0 && errno == ENOBUFS) {
      on_loss(m);
      i++;
      continue;
    }
    if (n < 0 && errno == EINTR) {
      i++;
      continue;
    }
    if (n <= 0)
      break;
    for (int j = 0; j < n; j++) {
      if (msg[j].msg_hdr.msg_namelen != sizeof from[j] || from[j].nl_pid != 0 ||
          (msg[j].msg_hdr.msg_flags & MSG_TRUNC))
        continue; /* not from the kernel, or not an event */
      collect(buf[j], msg[j].msg_len, true, &ack_err);
    }
    i += n;
    if ((size_t)n < want)
      break; /* the queue is empty */
  }
}

/* batch[from..to) in the order of the events' timestamps, by insertion
 * (stable: equal times keep their order); a socket's events come nearly in
 * order, so few moves. */
static void sort_run(size_t from, size_t to)
{
  for (size_t i = from + 1; i < to; i++) {
    struct proc_event ev = batch[i];
    size_t j = i;
    while (j > from && batch[j - 1].timestamp_ns > ev.timestamp_ns) {
      batch[j] = batch[j - 1];
      j--;
    }
    batch[j] = ev;
  }
}

/* The batch in the order of the events' timestamps: what it held (in
 * order already, or the exec socket's run) and the side socket's run read
 * after it (from first on), each sorted, then merged (stable, the earlier
 * run first).  By insertion alone, each of a storm's forks moved past every
 * exec that waited before it. */
static struct proc_event *merged; /* made at the first merge: a storm's */
static void sort_batch(size_t first)
{
  size_t a = 0, b = first, k = 0;

  sort_run(0, first);
  sort_run(first, n_batch);
  if (first == 0 || first == n_batch || batch[first - 1].timestamp_ns <= batch[first].timestamp_ns)
    return; /* already in order */
  /* one run short: inserting it costs at most 64 moves an event, and no buffer */
  if (first <= 64 || n_batch - first <= 64) {
    sort_run(0, n_batch);
    return;
  }
  if (merged == NULL)
    merged = xmalloc(PROC_DRAIN_MAX * sizeof *merged);
  while (a < first && b < n_batch)
    merged[k++] = batch[b].timestamp_ns < batch[a].timestamp_ns ? batch[b++] : batch[a++];
  while (a < first)
    merged[k++] = batch[a++];
  while (b < n_batch)
    merged[k++] = batch[b++];
  memcpy(batch, merged, n_batch * sizeof *batch);
}

static void proc_read(struct monitor *m, int fd, short revents, void *ctx)
{
  if (side_fd < 0) {
    drain(m, fd, PROC_DRAIN_MAX);
    monitor_execfan_drain(m); /* the opens of the execs read (they come first) */
    handle_batch(m);
    return;
  }
  if (fd == side_fd) { /* one-shot: quiet until proc_flush arms it again */
    side_armed = false;
    side_fired_ms = monitor_now_ms();
  }
  /* the execs first: a fork or exit before any of them is queued on the
   * side socket by then (a child's fork event is sent before it runs) */
  drain(m, proc_fd, PROC_DRAIN_MAX / 2);
  monitor_execfan_drain(m); /* the opens of the execs read (they come first) */
  /* A host's fork storm can queue more forks and exits than the batch
   * holds: while it fills up, what happened up to the last side event read
   * is handled (later events on that socket are later still) and the
   * execs after it wait, so an exec is never handled before its fork. */
  side_busy = false;
  for (int round = 0; round < SIDE_ROUNDS_MAX; round++) {
    size_t first = n_batch, n = 0;
    uint64_t cut = 0;

    drain(m, side_fd, PROC_DRAIN_MAX);
    for (size_t i = first; i < n_batch; i++)
      if (batch[i].timestamp_ns > cut)
        cut = batch[i].timestamp_ns;
    sort_batch(first);
    if (n_batch < PROC_DRAIN_MAX || first == n_batch)
      break;
    /* a storm: no waiting for the tick before the next read, or its
     * queue overflows (the kernel drops what does not fit) */
    side_busy = true;
    while (n < n_batch && batch[n].timestamp_ns <= cut)
      n++;
    handle_first(m, n);
  }
  handle_batch(m);
}

/* The kernel answers a LISTEN with an acknowledgement (PROC_EVENT_NONE, the
 * request's ack + 1, ack.err) as it handles the request, in our send(), so
 * the answer is queued when send() returns; a socket that asked for some
 * event types only never sees it (its filter drops type 0), so the first
 * LISTEN is the plain one.  From a user namespace other than the initial one
 * the request is ignored without an answer: such a monitor gets events only
 * while another socket on the host listens (the kernel counts listeners, and
 * sends to every socket bound to the group while the count is not zero).
 * Events queued before the answer go to the batch (m NULL: dropped).
 * Returns 0, the kernel's error, or ETIMEDOUT when nothing answered. */
#define LISTEN_ANSWER_MS 2 /* in case a kernel answers later */
static int listen_answer(struct monitor *m, int fd)
{
  uint8_t buf[16384] __attribute__((aligned(NLMSG_ALIGNTO)));
  bool waited = false;
  int ack_err = 0;

  for (int i = 0; i < PROC_DRAIN_MAX; i++) {
    struct sockaddr_nl from;
    socklen_t flen = sizeof from;
    ssize_t n = recvfrom(fd, buf, sizeof buf, MSG_DONTWAIT, (struct sockaddr *)&from, &flen);

    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && errno == EAGAIN && !waited) {
      struct pollfd p = {.fd = fd, .events = POLLIN};
      waited = true;
      if (poll(&p, 1, LISTEN_ANSWER_MS) > 0)
        continue;
    }
    if (n < 0 && errno == ENOBUFS) {
      if (m != NULL)
        on_loss(m); /* events queued before the answer were dropped */
      continue;
    }
    if (n <= 0)
      break;
    if (flen != sizeof from || from.nl_pid != 0)
      continue;
    if (collect(buf, (size_t)n, m != NULL, &ack_err)) {
      if (m != NULL)
        handle_batch(m);
      return ack_err;
    }
  }
  if (m != NULL)
    handle_batch(m);
  return ETIMEDOUT;
}

static int refused = -1; /* proc_socket: the bind refused (1), taken (0), unknown */

static int proc_socket(struct error *err)
{
  struct sockaddr_nl sa = {.nl_family = AF_NETLINK, .nl_groups = CN_IDX_PROC};
  int size = 4 << 20;
  cleanup_close int fd =
      socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_CONNECTOR);

  if (fd < 0)
    return error_errno(err, "proc connector socket");
  /* bursts of exec (a build) must not overflow the queue */
  if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size) < 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
  if (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
    if (errno == EPERM && geteuid() != 0) {
      refused = 1;
      return error_set(err, 0,
                       "process events: this kernel lets only privileged processes subscribe "
                       "(the proc connector refused the bind: Operation not permitted)");
    }
    return error_errno(err, "bind proc connector");
  }
  refused = 0;
  return take_fd(&fd);
}

bool monitor_proc_refused(void)
{
  struct error ignore = {0};
  int fd;

  if (refused < 0 && (fd = proc_socket(&ignore)) >= 0)
    close(fd);
  return refused == 1;
}

/* The plain LISTEN and its answer, then (Linux 6.6) only the types we read:
 * the kernel counts one listener per socket.  0, the kernel's refusal, or
 * ETIMEDOUT (no answer: it ignored us). */
static int subscribe(struct monitor *m, int fd, uint32_t types)
{
  int r;

  if (send_op(fd, PROC_CN_MCAST_LISTEN, 0) < 0)
    return errno;
  r = listen_answer(m, fd);
  if (r == 0 && kernel_filters_events() && send_op(fd, PROC_CN_MCAST_LISTEN, types) < 0)
    return errno;
  return r;
}

int monitor_proc_subscribe(struct error *err)
{
  cleanup_close int fd = proc_socket(err);
  int r;

  if (fd < 0)
    return -1;
  r = subscribe(NULL, fd, PROC_TYPES_ALL);
  if (r == ETIMEDOUT)
    return error_set(err, 0, "subscribe to process events: the kernel did not answer");
  if (r != 0)
    return error_set(err, r, "subscribe to process events");
  return take_fd(&fd);
}

void monitor_proc_adopt(int fd)
{
  if (adopted_fd >= 0 && adopted_fd != fd)
    close(adopted_fd);
  adopted_fd = fd;
}

int monitor_proc_adopted(void)
{
  return adopted_fd;
}

/* The fork/exit socket, then proc_fd narrowed to execs (in that order, so
 * that every type reaches one socket at every moment; one that reaches both
 * meanwhile is handled twice, which changes nothing).  Without it proc_fd
 * keeps every type, as on kernels before 6.6. */
static void open_side(struct monitor *m)
{
  struct error ignore = {0};
  cleanup_close int fd = proc_socket(&ignore);

  if (fd < 0)
    return;
  if (subscribe(m, fd, PROC_TYPES_SIDE) != 0) {
    send_op(fd, PROC_CN_MCAST_IGNORE, PROC_TYPES_SIDE);
    return;
  }
  if (monitor_add_fd(m, fd, POLLIN, proc_read, NULL) < 0) {
    send_op(fd, PROC_CN_MCAST_IGNORE, PROC_TYPES_SIDE);
    return;
  }
  if (monitor_rearm_fd(m, fd, EPOLLIN | EPOLLONESHOT) < 0 ||
      send_op(proc_fd, PROC_CN_MCAST_LISTEN, PROC_EVENT_EXEC) < 0) {
    send_op(fd, PROC_CN_MCAST_IGNORE, PROC_TYPES_SIDE);
    monitor_drop_fd(m, fd);
    fd = -1;
    return;
  }
  side_armed = true;
  side_fd = take_fd(&fd);
}

int monitor_proc_open(struct monitor *m, struct error *err)
{
  cleanup_close int fd = -1;
  int r = 0;

  if (adopted_fd >= 0) {
    /* subscribed by our caller before it entered a user namespace */
    fd = adopted_fd;
    adopted_fd = -1;
  } else {
    fd = proc_socket(err);
    if (fd < 0)
      return -1;
    r = subscribe(m, fd, PROC_TYPES_ALL);
    if (r != 0 && r != ETIMEDOUT)
      return error_set(err, r, "subscribe to process events");
  }
  proc_acked = r == 0;
  if (monitor_add_fd(m, fd, POLLIN, proc_read, NULL) < 0)
    return error_set(err, 0, "too many monitor sources");
  monitor_set_flush(m, fd, proc_flush);
  proc_fd = take_fd(&fd);
  if (proc_acked && kernel_filters_events())
    open_side(m);
  if (proc_acked)
    return 0;
  /* a user namespace: events still reach every socket bound to the group
   * while another process on the host listens, so keep reading */
  error_set(err, 0,
            "subscribe to process events: the kernel takes subscriptions only from the initial "
            "user namespace; programs are recorded only while another process on the host "
            "listens");
  return 1;
}

void monitor_proc_attach(struct monitor *m)
{
  if (proc_fd >= 0)
    track_add(m->init_pid, 0);
}

void monitor_proc_await_exit(struct monitor *m, int ms)
{
  int64_t end = monitor_now_ms() + ms;

  /* nothing subscribed and nothing came: no exit event will come either */
  if (!proc_acked && !proc_seen)
    return;
  while (proc_fd >= 0 && !m->have_exit && monitor_now_ms() < end) {
    /* exit events come on the side socket when there is one */
    int fd = side_fd >= 0 ? side_fd : proc_fd;
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (poll(&p, 1, 5) > 0)
      proc_read(m, fd, POLLIN, NULL);
  }
}

/* At the end: every event queued before the container's end is read, not
 * one wake-up's worth (512 execs, the host's among them): the loop stopped
 * at the init's death and the drain after it read once, so the programs
 * of a container's last moments beyond that read left no record and no
 * loss (exec-storm-at-exit: 1,501 run while the monitor lagged, 290 in the
 * trail).  Bounded by ms, as a busy host keeps the sockets filling: what is
 * still queued then is a loss the trail records. */
void monitor_proc_drain_end(struct monitor *m, int ms)
{
  int64_t end = monitor_now_ms() + ms;

  while (proc_fd >= 0) {
    struct pollfd p[2] = {{.fd = proc_fd, .events = POLLIN}, {.fd = side_fd, .events = POLLIN}};

    if (poll(p, side_fd >= 0 ? 2 : 1, 0) <= 0)
      return; /* both empty */
    if (monitor_now_ms() >= end) {
      monitor_loss(m, "process",
                   "process events lost: still queued when the monitor ended (it read them for "
                   "the time it had)",
                   0);
      return;
    }
    proc_read(m, proc_fd, POLLIN, NULL);
  }
}

void monitor_proc_close(struct monitor *m)
{
  if (side_fd >= 0) {
    send_op(side_fd, PROC_CN_MCAST_IGNORE, PROC_TYPES_SIDE);
    close(side_fd);
    side_fd = -1;
  }
  if (proc_fd < 0)
    return;
  send_op(proc_fd, PROC_CN_MCAST_IGNORE, PROC_TYPES_ALL);
  close(proc_fd);
  proc_fd = -1;
}
