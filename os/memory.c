/* memory.c - see memory.h. */
#include "os/memory.h"

#include <errno.h>
#include <fcntl.h>
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

#define TAKE_MAX ((uintptr_t)256 << 20)

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

/* The hex number at *p (lower case, as /proc/self/maps has it), up to stop. */
static bool hex_until(const char **p, char stop, uintptr_t *ret)
{
  uintptr_t v = 0;
  const char *s = *p;

  for (; *s != stop; s++) {
    if (*s >= '0' && *s <= '9')
      v = v * 16 + (uintptr_t)(*s - '0');
    else if (*s >= 'a' && *s <= 'f')
      v = v * 16 + (uintptr_t)(*s - 'a' + 10);
    else
      return false;
  }
  *p = s + 1;
  *ret = v;
  return true;
}

/* One line of /proc/self/maps: a private writable mapping's pages that are
 * resident, written in place (MADV_POPULATE_WRITE breaks their sharing). */
static void take_line(const char *p, uintptr_t page)
{
  unsigned char vec[256];
  uintptr_t lo, hi;

  /* "lo-hi rw-p ...": writable and private (a shared mapping has no copy to take) */
  if (!hex_until(&p, '-', &lo) || !hex_until(&p, ' ', &hi) || p[0] != 'r' || p[1] != 'w' ||
      p[2] == '\0' || p[3] != 'p' || lo >= hi)
    return;
  /* a sanitizer's shadow (terabytes, reserved): nothing of ours is that large */
  if (hi - lo > TAKE_MAX)
    return;
  for (uintptr_t at = lo; at < hi;) {
    size_t n = (size_t)((hi - at) / page);
    size_t run = 0;

    if (n > sizeof vec)
      n = sizeof vec;
    if (mincore((void *)at, n * page, vec) < 0)
      return;
    for (size_t i = 0; i <= n; i++) {
      if (i < n && (vec[i] & 1)) {
        run++;
        continue;
      }
      if (run > 0 &&
          madvise((void *)(at + (i - run) * page), run * page, MADV_POPULATE_WRITE) < 0 &&
          errno == EINVAL)
        return; /* a kernel before 5.14 */
      run = 0;
    }
    at += n * page;
  }
}

void mem_take_shared_pages(void)
{
  char buf[2048];
  size_t have = 0;
  uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
  struct error err = {0};
  int fd = procfs_open("self/maps", O_RDONLY | O_CLOEXEC, &err);

  if (fd < 0)
    return;
  for (;;) {
    ssize_t n = read(fd, buf + have, sizeof buf - 1 - have);
    char *l = buf, *nl;

    if (n <= 0)
      break;
    have += (size_t)n;
    buf[have] = '\0';
    while ((nl = strchr(l, '\n')) != NULL) {
      *nl = '\0';
      take_line(l, page);
      l = nl + 1;
    }
    have -= (size_t)(l - buf);
    memmove(buf, l, have);
    if (have == sizeof buf - 1)
      have = 0; /* a line longer than the buffer: dropped */
  }
  close(fd);
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
