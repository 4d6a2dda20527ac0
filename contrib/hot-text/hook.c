/* hook.c - -finstrument-functions hook for contrib/hot-text.sh (peak RSS: bench/README.md).
 *
 * Records the address (relative to the executable's start) of every function
 * entered, once, into a MAP_SHARED table in the file named by
 * $AGENTRT_HOT_TEXT_OUT: the first half for the container init (pid 1 in its
 * new pid namespace), the second for every other process.  The mapping
 * survives the clone, pivot_root and closed fds, so the init's functions are
 * recorded up to its exec.  Never part of a normal build (make HOT_TEXT_TRACE=1).
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define HOT_SLOTS 65536u

void __cyg_profile_func_enter(void *fn, void *site) __attribute__((no_instrument_function));
void __cyg_profile_func_exit(void *fn, void *site) __attribute__((no_instrument_function));

static uintptr_t *hot_tab;
extern char __executable_start[];

__attribute__((no_instrument_function, constructor(101))) static void hot_init(void)
{
  const char *p = getenv("AGENTRT_HOT_TEXT_OUT");
  size_t len = 2 * HOT_SLOTS * sizeof(uintptr_t);
  void *m;
  int fd;

  if (p == NULL)
    return;
  fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0)
    return;
  if (ftruncate(fd, (off_t)len) == 0) {
    m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m != MAP_FAILED)
      hot_tab = m;
  }
  close(fd);
}

void __cyg_profile_func_enter(void *fn, void *site)
{
  uintptr_t off = (uintptr_t)fn - (uintptr_t)__executable_start;
  uintptr_t *t;
  unsigned i;

  if (hot_tab == NULL || off == 0)
    return;
  t = hot_tab + (syscall(SYS_getpid) == 1 ? 0 : HOT_SLOTS);
  i = (unsigned)((off * 2654435761u) % HOT_SLOTS);
  for (unsigned n = 0; n < HOT_SLOTS; n++, i = (i + 1) % HOT_SLOTS) {
    uintptr_t cur = __atomic_load_n(&t[i], __ATOMIC_RELAXED);

    if (cur == off)
      return;
    if (cur == 0 &&
        (__atomic_compare_exchange_n(&t[i], &cur, off, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED) ||
         cur == off))
      return;
  }
}

void __cyg_profile_func_exit(void *fn, void *site) {}
