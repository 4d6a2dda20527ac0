/* memory.c - see memory.h. */
#include "os/memory.h"

#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/util.h"
#include "os/procfs.h"

/* Each mapping of /proc/self/maps: its bounds, its permissions ("rw-p")
 * and the rest of its line; fn returns true to stop.  False when the file
 * cannot be read. */
static bool maps_each(bool (*fn)(uintptr_t lo, uintptr_t hi, const char *perms, const char *rest,
                                 void *ud),
                      void *ud)
{
  cleanup_free char *maps = NULL;
  struct error err = {0};

  if (procfs_read_all("self/maps", &maps, &err) < 0)
    return false;
  for (char *l = maps; l != NULL && *l != '\0';) {
    char *nl = strchr(l, '\n');
    uintptr_t lo, hi;
    char perms[5];
    int end = 0;

    if (nl != NULL)
      *nl = '\0';
    if (sscanf(l, "%" SCNxPTR "-%" SCNxPTR " %4s%n", &lo, &hi, perms, &end) == 3 &&
        fn(lo, hi, perms, l + end, ud))
      break;
    l = nl != NULL ? nl + 1 : NULL;
  }
  return true;
}

static bool find_stack(uintptr_t lo, uintptr_t hi, const char *perms, const char *rest, void *ud)
{
  (void)hi, (void)perms;
  if (strstr(rest, "[stack]") == NULL)
    return false;
  *(uintptr_t *)ud = lo;
  return true;
}

/* The lowest address of the main thread's stack mapping; 0 when not found. */
static uintptr_t stack_low(void)
{
  uintptr_t lo = 0;

  maps_each(find_stack, &lo);
  return lo;
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

#define TAKE_MAX ((uintptr_t)256 << 20)

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

/* Whether the page at p holds only zeros.  A page only ever read is mapped
 * to the kernel's shared zero page, which mincore reports resident like any
 * other: taking it would give the child a page of its own where it had none
 * (a table the parent only scanned).  A real page of zeros is left to fault
 * too, if it is ever written. */
/* (it reads whole pages of the process, redzones and freed blocks too: not
 * the sanitizer's business) */
__attribute__((no_sanitize_address)) static bool page_zero(const void *p, uintptr_t page)
{
  const uint64_t *w = p;

  for (size_t i = 0; i < page / sizeof *w; i += 8)
    if ((w[i] | w[i + 1] | w[i + 2] | w[i + 3] | w[i + 4] | w[i + 5] | w[i + 6] | w[i + 7]) != 0)
      return false;
  return true;
}

/* A private writable mapping's pages that are resident and not zero, written
 * in place (MADV_POPULATE_WRITE breaks their sharing); true (stop) on a
 * kernel without it. */
static bool take_mapping(uintptr_t lo, uintptr_t hi, const char *perms, const char *rest, void *ud)
{
  uintptr_t page = *(const uintptr_t *)ud;
  unsigned char vec[256];

  (void)rest;
  /* "rw-p": a shared mapping has no copy to take; a sanitizer's shadow
   * (terabytes, reserved) is not ours to walk */
  if (strcmp(perms, "rw-p") != 0 || lo >= hi || hi - lo > TAKE_MAX)
    return false;
  for (uintptr_t at = lo; at < hi;) {
    size_t n = (size_t)((hi - at) / page);
    size_t run = 0;

    if (n > sizeof vec)
      n = sizeof vec;
    if (mincore((void *)at, n * page, vec) < 0)
      return false;
    for (size_t i = 0; i <= n; i++) {
      if (i < n && (vec[i] & 1) && !page_zero((const void *)(at + i * page), page)) {
        run++;
        continue;
      }
      if (run > 0 &&
          madvise((void *)(at + (i - run) * page), run * page, MADV_POPULATE_WRITE) < 0 &&
          errno == EINVAL)
        return true; /* a kernel before 5.14 */
      run = 0;
    }
    at += n * page;
  }
  return false;
}

void mem_take_shared_pages(void)
{
  uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);

  maps_each(take_mapping, &page);
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
