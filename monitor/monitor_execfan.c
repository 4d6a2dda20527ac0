/* monitor_execfan.c - the file each program was exec'd from, taken at its
 * exec, for the records of programs gone before /proc could be read.
 *
 * The proc connector says that a pid exec'd, not what: monitor_proc.c reads
 * the executable from /proc/<pid>/exe afterwards, and a short program that
 * has exited and been reaped by then left a record with its parent and
 * nothing else (THREAT-MODEL.md, "Gaps in the audit trail").  Here a
 * fanotify group (file descriptors, notification class) has FAN_OPEN_EXEC
 * on every mount of the container, marked through the init's root once it
 * is set up: when exec opens a file on one of them the kernel queues the
 * opener's pid with an open descriptor of the file, whose path we read at
 * once (a program's file cannot be read back from a pid that is gone, but
 * its descriptor names it).  An exec's open comes before its proc
 * connector event, so monitor_proc.c drains this queue after reading its
 * exec events and before handling them, and takes what a pid opened when
 * /proc no longer has it.  One exec can open more than one file (a script,
 * then its interpreter; a dynamic program, then its loader), and an exec
 * that fails after its open leaves one too: the files a pid opened since
 * its last record are kept in order (the latest EXECFAN_PER_PID), each
 * with the file its exec would open next (a script's interpreter, an ELF's
 * loader, found in the container's root when the open is read); the exec
 * that ran is the last chain of them: its first file is the record's
 * "exe", the others its "exec_opened", what came before "exec_before".
 * Needs CAP_SYS_ADMIN (fanotify mount marks): not in a user's sandbox,
 * which records programs from their exec calls instead (monitor_exec.c).
 * Mounts made after the marks (the agent profile lets the container make
 * none) are not marked, nor mounts that are not directories (fanotify_mark
 * takes no O_PATH descriptor of a file), nor FUSE mounts, nor noexec ones,
 * where no exec can open a file (mark_mounts).  A
 * queue overflow loses names only, never records.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <elf.h>
#include <sys/fanotify.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/util.h"
#include "monitor/monitor_internal.h"
#include "os/procfs.h"

#define EXECFAN_PIDS 256   /* pids with opens not yet taken (oldest replaced) */
#define EXECFAN_PER_PID 8  /* files kept per pid (the latest) */
#define EXECFAN_MOUNTS 256 /* mounts marked at most */

/* One file exec opened: its identity, and that of the file its exec opens
 * next when it runs: a script's interpreter, a dynamic ELF's loader (0:
 * none, or none that exists). */
struct exec_file {
  char *path;
  dev_t dev, next_dev;
  ino_t ino, next_ino;
  bool runs; /* an ELF with no loader: the last file of an exec that ran */
};

struct opened {
  pid_t pid;
  unsigned n, dropped; /* dropped: earlier opens no longer kept */
  struct exec_file *f; /* EXECFAN_PER_PID of them, while the pid has any */
};

static int fan = -1;
static int fd_dir = -1;  /* our /proc/self/fd */
static int root_fd = -1; /* the container's root, where interpreters are found */
static struct opened opened[EXECFAN_PIDS];
static size_t next_slot;
static bool evicted; /* a pid's opens replaced before they were taken */

static void slot_clear(struct opened *o)
{
  for (unsigned i = 0; i < o->n; i++)
    free(o->f[i].path);
  free(o->f);
  *o = (struct opened){0};
}

static struct opened *slot_find(pid_t pid)
{
  for (size_t i = 0; i < EXECFAN_PIDS; i++)
    if (opened[i].pid == pid)
      return &opened[i];
  return NULL;
}

/* The file an interpreter path names in the container's root. */
static void find_next(const char *path, struct exec_file *e)
{
  struct open_how how = {.flags = O_PATH | O_CLOEXEC,
                         .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
  cleanup_close int fd = -1;
  struct stat st;

  if (root_fd < 0 || path[0] != '/' ||
      (fd = (int)syscall(SYS_openat2, root_fd, path, &how, sizeof how)) < 0 || fstat(fd, &st) < 0)
    return;
  e->next_dev = st.st_dev;
  e->next_ino = st.st_ino;
}

/* Can this machine run a program built for machine (a kernel that runs it
 * natively, not through binfmt_misc)? */
static bool native_machine(unsigned machine)
{
#if defined(__x86_64__) || defined(__i386__)
  return machine == EM_X86_64 || machine == EM_386;
#elif defined(__aarch64__) || defined(__arm__)
  return machine == EM_AARCH64 || machine == EM_ARM;
#else
  return machine != EM_NONE;
#endif
}

/* What runs after the file fd when its exec goes on: a script's "#!"
 * interpreter, an ELF's PT_INTERP (its loader), into e. */
static void read_next(int fd, struct exec_file *e)
{
  union {
    char c[256];
    Elf64_Ehdr h64;
    Elf32_Ehdr h32;
  } u = {0};
  char interp[PATH_MAX];
  Elf64_Phdr ph[64];
  ssize_t n = pread(fd, u.c, sizeof u.c - 1, 0);
  uint64_t phoff, off = 0, size = 0;
  unsigned phnum, phentsize;
  bool is64;

  if (n >= 2 && u.c[0] == '#' && u.c[1] == '!') {
    char *p = u.c + 2;
    p += strspn(p, " \t");
    p[strcspn(p, " \t\n")] = '\0';
    find_next(p, e);
    return;
  }
  if (n < (ssize_t)sizeof u.h32 || memcmp(u.c, ELFMAG, SELFMAG) != 0)
    return;
  is64 = u.c[EI_CLASS] == ELFCLASS64;
  if (is64 && n < (ssize_t)sizeof u.h64)
    return;
  phoff = is64 ? u.h64.e_phoff : u.h32.e_phoff;
  phnum = is64 ? u.h64.e_phnum : u.h32.e_phnum;
  phentsize = is64 ? u.h64.e_phentsize : u.h32.e_phentsize;
  /* (the ELF header's e_machine and e_type are at the same offsets in both
   * classes) another machine's program, or one we cannot read, cannot be
   * told to have run */
  if (phentsize != (is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr)) || phnum > 64 ||
      !native_machine(u.h32.e_machine) || (u.h32.e_type != ET_EXEC && u.h32.e_type != ET_DYN))
    return;
  e->runs = true; /* unless it names a loader */
  /* the program headers in one read (at most 64: the monitor's work for
   * each exec the agent makes stays small) */
  if (pread(fd, ph, (size_t)phnum * phentsize, (off_t)phoff) != (ssize_t)(phnum * phentsize))
    return;
  for (unsigned i = 0; i < phnum && size == 0; i++) {
    Elf64_Phdr p64;
    Elf32_Phdr p32;
    memcpy(is64 ? (void *)&p64 : (void *)&p32, (const char *)ph + i * phentsize, phentsize);
    if ((is64 ? p64.p_type : p32.p_type) == PT_INTERP) {
      off = is64 ? p64.p_offset : p32.p_offset;
      size = is64 ? p64.p_filesz : p32.p_filesz;
    }
  }
  if (size > 0)
    e->runs = false;
  if (size < 2 || size > sizeof interp || pread(fd, interp, size, (off_t)off) != (ssize_t)size)
    return;
  interp[size - 1] = '\0';
  find_next(interp, e);
}

static void note_open(pid_t pid, const char *path, int fd)
{
  struct opened *o = slot_find(pid);
  struct exec_file *e;
  struct stat st;

  if (o == NULL) {
    o = &opened[next_slot++ % EXECFAN_PIDS];
    evicted |= o->n > 0;
    slot_clear(o);
    o->pid = pid;
  }
  if (o->f == NULL)
    o->f = xmalloc(EXECFAN_PER_PID * sizeof *o->f);
  if (o->n == EXECFAN_PER_PID) { /* the latest are kept: the exec that ran is last */
    free(o->f[0].path);
    memmove(o->f, o->f + 1, (EXECFAN_PER_PID - 1) * sizeof *o->f);
    o->n--;
    o->dropped++;
  }
  e = &o->f[o->n++];
  *e = (struct exec_file){.path = xstrdup(path)};
  if (fstat(fd, &st) == 0) {
    e->dev = st.st_dev;
    e->ino = st.st_ino;
  }
  read_next(fd, e);
}

/* A mountinfo field with its octal escapes (\040 and the like) undone, in place. */
static void unescape(char *s)
{
  char *w = s;

  for (char *r = s; *r != '\0'; r++) {
    if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' && r[3] >= '0' &&
        r[3] <= '7') {
      *w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
      r += 3;
    } else {
      *w++ = *r;
    }
  }
  *w = '\0';
}

/* Does a mount table's per-mount options field (its 6th) say noexec? */
static bool mount_noexec(const char *opts)
{
  const size_t n = sizeof "noexec" - 1;

  for (const char *o = opts;; o++) {
    if (strncmp(o, "noexec", n) == 0 && (o[n] == ',' || o[n] == '\0'))
      return true;
    if ((o = strchr(o, ',')) == NULL)
      return false;
  }
}

/* Mark every mount in the init's mount table (its 5th field, the mount
 * point), each opened inside the init's root.  The count marked. */
static int mark_mounts(pid_t init, int *ret_root, struct error *err)
{
  struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                         .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
  cleanup_free char *table = NULL;
  cleanup_close int piddir = -1, root = -1;
  char rel[32];
  int marked = 0, tried = 0;

  snprintf(rel, sizeof rel, "%d/mountinfo", init);
  if (procfs_read_all(rel, &table, err) < 0)
    return -1;
  snprintf(rel, sizeof rel, "%d", init);
  if ((piddir = procfs_open(rel, O_PATH | O_DIRECTORY, err)) < 0)
    return -1;
  root = openat(piddir, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root < 0)
    return error_errno(err, "open the container's root");
  for (char *line = table, *end; line != NULL && *line != '\0' && tried < EXECFAN_MOUNTS;
       line = end) {
    char *field[6] = {0}, *save = NULL, *fstype = NULL;
    int fd;

    end = strchr(line, '\n');
    if (end != NULL)
      *end++ = '\0';
    field[0] = strtok_r(line, " ", &save);
    for (int i = 1; i < 6 && field[i - 1] != NULL; i++)
      field[i] = strtok_r(NULL, " ", &save);
    if (field[5] == NULL)
      continue;
    /* no exec opens a file on a noexec mount (the kernel refuses it before
     * the open), and the container cannot make one exec again: about half
     * of an agent container's mounts (/sys, the cgroup hierarchies, /dev/shm,
     * devpts, mqueue, masked directories) need no mark */
    if (mount_noexec(field[5]))
      continue;
    /* the file system type follows " - ": the kernel opens each file
     * exec opened for us, and a FUSE server (the container's, perhaps)
     * could leave that open, and so us, waiting */
    for (char *f = strtok_r(NULL, " ", &save); f != NULL; f = strtok_r(NULL, " ", &save))
      if (strcmp(f, "-") == 0) {
        fstype = strtok_r(NULL, " ", &save);
        break;
      }
    if (fstype == NULL || strncmp(fstype, "fuse", 4) == 0)
      continue;
    unescape(field[4]);
    tried++;
    fd = (int)syscall(SYS_openat2, root, field[4], &how, sizeof how);
    if (fd < 0)
      continue; /* not a directory, hidden under another mount, or gone */
    if (fanotify_mark(fan, FAN_MARK_ADD | FAN_MARK_MOUNT, FAN_OPEN_EXEC, fd, ".") == 0)
      marked++;
    close(fd);
  }
  *ret_root = root;
  root = -1;
  return marked;
}

int monitor_execfan_open(struct monitor *m, struct error *err)
{
  int marked;

  fan = fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK,
                      O_RDONLY | O_CLOEXEC | O_LARGEFILE);
  if (fan < 0)
    return error_errno(err, "fanotify_init (exec opens)");
  if ((fd_dir = procfs_open("self/fd", O_PATH | O_DIRECTORY, err)) < 0 ||
      (marked = mark_mounts(m->init_pid, &root_fd, err)) < 0) {
    monitor_execfan_close();
    return -1;
  }
  if (marked == 0) {
    monitor_execfan_close();
    return error_set(err, 0, "no mount of the container could be marked for exec opens");
  }
  return 0;
}

/* Read up to rounds reads of the queue (about 40 events each). */
static void drain_rounds(struct monitor *m, int rounds)
{
  /* about 40 events a read: each is a new descriptor of ours until it is closed */
  char buf[1024] __attribute__((aligned(__alignof__(struct fanotify_event_metadata))));
  static int64_t last_loss_ms = -1000; /* one loss record a second at most */

  if (fan < 0)
    return;
  for (int round = 0; round < rounds; round++) {
    ssize_t n = read(fan, buf, sizeof buf);

    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return;
    for (struct fanotify_event_metadata *ev = (void *)buf; FAN_EVENT_OK(ev, n);
         ev = FAN_EVENT_NEXT(ev, n)) {
      char name[16], path[PATH_MAX];
      ssize_t len;

      if (ev->vers != FANOTIFY_METADATA_VERSION)
        return;
      if ((ev->mask & FAN_Q_OVERFLOW) && monitor_now_ms() - last_loss_ms >= 1000) {
        /* the names of programs reaped before they were read are lost, their
         * process records are not */
        last_loss_ms = monitor_now_ms();
        monitor_loss(m, "exec_opens",
                     "exec opens lost (queue overflow): programs gone before they were read "
                     "may have no name",
                     0);
      }
      if (ev->fd < 0)
        continue;
      snprintf(name, sizeof name, "%d", ev->fd);
      len = readlinkat(fd_dir, name, path, sizeof path - 1);
      if (len > 0 && ev->pid > 0 && (ev->mask & FAN_OPEN_EXEC)) {
        path[len] = '\0';
        note_open(ev->pid, path, ev->fd);
      }
      close(ev->fd);
    }
  }
}

/* Opens of more pids than the table holds came before their programs were
 * recorded: the oldest were replaced, and their programs, when gone before
 * they were read, have no name (300 programs run while the monitor could
 * not: 46 without one, and the trail did not say why). */
static void report_evicted(struct monitor *m)
{
  static int64_t last_ms = -1000;

  if (!evicted || monitor_now_ms() - last_ms < 1000)
    return;
  evicted = false;
  last_ms = monitor_now_ms();
  monitor_loss(m, "exec_opens",
               "exec opens lost (more pids than kept): programs gone before they were read may "
               "have no name",
               0);
}

void monitor_execfan_drain(struct monitor *m)
{
  drain_rounds(m, 64);
  report_evicted(m);
}

void monitor_execfan_drain_end(struct monitor *m)
{
  /* the kernel queues its overflow event after the 16,384 events it kept:
   * a drain after each batch of execs reads ~2,700 of them, and execs that
   * fail after their open leave events and no exec to drain after, so the
   * queue is read to its end once more (a loss is recorded, not missed) */
  drain_rounds(m, 4096);
  report_evicted(m);
}

/* files [from, to) of o into more as a JSON array (nothing when empty) */
static void paths_json(const struct opened *o, unsigned from, unsigned to, struct jbuf *more)
{
  if (more == NULL || from >= to)
    return;
  jb_puts(more, "[");
  for (unsigned i = from; i < to; i++) {
    if (i > from)
      jb_puts(more, ",");
    jb_quote(more, o->f[i].path, strlen(o->f[i].path));
  }
  jb_puts(more, "]");
}

/* The first file of the chain that ends at last: each file before it that
 * its exec opens next (a script's interpreter, a dynamic ELF's loader). */
static unsigned chain_start(const struct opened *o, unsigned last)
{
  unsigned start = last;

  while (start > 0 && o->f[start - 1].next_ino != 0 &&
         o->f[start - 1].next_ino == o->f[start].ino && o->f[start - 1].next_dev == o->f[start].dev)
    start--;
  return start;
}

bool monitor_execfan_take(pid_t pid, char *exe, size_t size, struct jbuf *more, struct jbuf *before,
                          struct jbuf *failed, unsigned *ret_dropped)
{
  struct opened *o;
  unsigned start = 0, end;

  if (fan < 0 || pid <= 0 || (o = slot_find(pid)) == NULL)
    return false;
  /* The exec that ran is the last chain whose last file runs (an ELF with
   * no loader to open): a chain after it ends in a file that needs an
   * interpreter or a loader that did not follow, or is no ELF, and could
   * not run (a program that ran, then made an exec that failed).  What is
   * before it exec opened and did not run, or ran before (exec-opens-decoy:
   * a PATH search's files that cannot run named the program that did).
   * When no chain ends in such a file, the last one. */
  for (end = o->n; end > 0; end = start) {
    start = chain_start(o, end - 1);
    if (o->f[end - 1].runs)
      break;
  }
  if (end == 0 && o->n > 0) {
    end = o->n;
    start = chain_start(o, end - 1);
  }
  if (exe != NULL && o->n > 0)
    snprintf(exe, size, "%s", o->f[start].path);
  paths_json(o, start + 1, end, more);
  paths_json(o, 0, start, before);
  paths_json(o, end, o->n, failed);
  if (ret_dropped != NULL)
    *ret_dropped = o->dropped;
  slot_clear(o);
  return true;
}

void monitor_execfan_close(void)
{
  if (fan >= 0)
    close(fan);
  if (fd_dir >= 0)
    close(fd_dir);
  if (root_fd >= 0)
    close(root_fd);
  fan = fd_dir = root_fd = -1;
  for (size_t i = 0; i < EXECFAN_PIDS; i++)
    slot_clear(&opened[i]);
}
