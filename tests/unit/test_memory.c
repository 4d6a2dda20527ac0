/* test_memory.c - mem_take_shared_pages(): a forked child that takes its
 * parent's pages writes them without a fault each, sees what the parent had
 * written, and never touches what neither of them had (seen from outside:
 * getrusage's minor faults, mincore, smaps, the parent's copy after the
 * child), and leaves the pages its parent only read to the zero page. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "os/memory.h"
#include "tests/unit/tap.h"

#define PAGES 64

static long minflt(void)
{
  struct rusage ru;

  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_minflt;
}

/* In a child: take (or not), check the parent's bytes, write every page;
 * the exit status is the number of faults the writes cost (capped), or 255
 * when a byte was not the parent's. */
static int child_writes(volatile char *buf, size_t page, bool take)
{
  long before;

  if (take)
    mem_take_shared_pages();
  for (size_t i = 0; i < PAGES; i++)
    if (buf[i * page] != (char)('a' + i % 26))
      return 255;
  before = minflt();
  for (size_t i = 0; i < PAGES; i++)
    buf[i * page] = 'X';
  before = minflt() - before;
  return before > 200 ? 200 : (int)before;
}

/* The pages of the mapping that starts at p that are this process's alone
 * (smaps's Private_Clean + Private_Dirty: not shared with a parent, not the
 * zero page), or -1. */
static int own_pages(const void *p)
{
  FILE *f = fopen("/proc/self/smaps", "re");
  char line[256];
  unsigned long lo, hi, kib;
  bool in = false;
  int n = -1, seen = 0;

  if (f == NULL)
    return -1;
  while (fgets(line, sizeof line, f) != NULL) {
    if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2)
      in = lo == (uintptr_t)p;
    else if (in && (sscanf(line, "Private_Clean: %lu kB", &kib) == 1 ||
                    sscanf(line, "Private_Dirty: %lu kB", &kib) == 1)) {
      n = (n < 0 ? 0 : n) + (int)(kib / 4);
      if (++seen == 2)
        break;
    }
  }
  fclose(f);
  return seen == 2 ? n : -1;
}

static int run_child(volatile char *buf, size_t page, bool take)
{
  int status = 0;
  pid_t pid = fork();

  if (pid == 0)
    _exit(child_writes(buf, page, take));
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
    return -1;
  return WEXITSTATUS(status);
}

int main(void)
{
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  volatile char *buf =
      mmap(NULL, PAGES * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  char *untouched =
      mmap(NULL, PAGES * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  /* between two PROT_NONE pages: a mapping of its own in smaps */
  char *guarded = mmap(NULL, (PAGES + 2) * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  char *readonly = guarded == MAP_FAILED ? MAP_FAILED : guarded + page;
  unsigned char vec[PAGES];
  int without, with, status = 0, resident = -1;
  pid_t pid;
  bool intact = true;

  if (buf == MAP_FAILED || untouched == MAP_FAILED || readonly == MAP_FAILED ||
      mprotect(readonly, PAGES * page, PROT_READ | PROT_WRITE) < 0) {
    tap_ok(false, "mmap");
    return tap_done();
  }
  for (size_t i = 0; i < PAGES; i++)
    buf[i * page] = (char)('a' + i % 26);

  without = run_child(buf, page, false);
  tap_ok(without >= PAGES && without != 255,
         "without taking, a child's writes to %d shared pages fault once each (%d faults)", PAGES,
         without);
  with = run_child(buf, page, true);
  tap_ok(with >= 0 && with < PAGES / 4,
         "after mem_take_shared_pages, the same writes cost %d faults (the parent's bytes were "
         "there)",
         with);
  for (size_t i = 0; i < PAGES; i++)
    intact = intact && buf[i * page] == (char)('a' + i % 26);
  tap_ok(intact, "the parent's pages keep its own bytes after the child wrote its copies");

  /* pages nobody wrote stay absent: the child's memory does not grow */
  pid = fork();
  if (pid == 0) {
    int n = 0;
    mem_take_shared_pages();
    if (mincore(untouched, PAGES * page, vec) < 0)
      _exit(255);
    for (size_t i = 0; i < PAGES; i++)
      n += vec[i] & 1;
    _exit(n);
  }
  if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status))
    resident = WEXITSTATUS(status);
  tap_ok(resident == 0,
         "a mapping nobody wrote stays absent in the child (%d of %d pages resident)", resident,
         PAGES);

  /* pages the parent only read (the kernel's zero page, which mincore says
   * is resident, or on some kernels a zeroed page of the parent's): the
   * child makes no copy of its own of them */
  for (size_t i = 0; i < PAGES; i++)
    (void)((volatile char *)readonly)[i * page];
  resident = -1;
  pid = fork();
  if (pid == 0) {
    int n;
    mem_take_shared_pages();
    n = own_pages(readonly);
    _exit(n < 0 ? 255 : n);
  }
  if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status))
    resident = WEXITSTATUS(status);
  tap_ok(resident == 0,
         "a mapping the parent only read is not copied into the child (%d of %d pages its own)",
         resident, PAGES);

  /* called with nothing to take (no child): harmless */
  mem_take_shared_pages();
  tap_ok(buf[0] == 'a', "called in a process that shares nothing: its memory is unchanged");
  return tap_done();
}
