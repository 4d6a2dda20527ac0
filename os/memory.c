/* memory.c - see memory.h. */
#include "os/memory.h"

#include <inttypes.h>
#include <malloc.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/util.h"
#include "os/procfs.h"

/* The lowest address of the main thread's stack mapping, from
 * /proc/self/maps ("[stack]"); 0 when not found. */
static uintptr_t stack_low(void)
{
  cleanup_free char *maps = NULL;
  struct error err = {0};
  uintptr_t lo = 0, hi = 0;

  if (procfs_read_all("self/maps", &maps, &err) < 0)
    return 0;
  for (char *l = maps; l != NULL && *l != '\0';) {
    char *nl = strchr(l, '\n');

    if (nl != NULL)
      *nl = '\0';
    if (strstr(l, "[stack]") != NULL && sscanf(l, "%" SCNxPTR "-%" SCNxPTR, &lo, &hi) == 2)
      return lo;
    l = nl != NULL ? nl + 1 : NULL;
  }
  return 0;
}

__attribute__((noinline)) void mem_release_unused(void)
{
  volatile char here = 0;
  uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
  uintptr_t lo = stack_low();
  /* two pages of margin under our own frame (the red zone, this call's callees) */
  uintptr_t hi = ((uintptr_t)&here & ~(page - 1)) - 2 * page;
  sigset_t all, old;

  if (lo != 0 && lo < hi && (uintptr_t)&here - lo < (64u << 20)) {
    sigfillset(&all);
    if (sigprocmask(SIG_SETMASK, &all, &old) == 0) {
      (void)madvise((void *)lo, hi - lo, MADV_DONTNEED);
      sigprocmask(SIG_SETMASK, &old, NULL);
    }
  }
  (void)here;
  malloc_trim(0);
}

#ifdef __SANITIZE_ADDRESS__
/* The ASan build keeps these on the heap, where its redzones catch an
 * overrun of a message buffer; only the release build maps them. */
void *mem_pages_alloc(size_t n)
{
  return xmalloc0(n);
}

void mem_pages_free(void *p, size_t n)
{
  (void)n;
  free(p);
}
#else
void *mem_pages_alloc(size_t n)
{
  void *p = mmap(NULL, n ? n : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

  if (p == MAP_FAILED)
    die_oom();
  return p;
}

void mem_pages_free(void *p, size_t n)
{
  if (p != NULL)
    munmap(p, n ? n : 1);
}
#endif
