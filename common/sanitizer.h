/* sanitizer.h - what the sanitizer build (make SANITIZE=address,undefined) asks of its runtime.
 * Include it in the one file of a program that has main(): cli/main.c, tests/unit/tap.h.
 *
 * That build traps on undefined behaviour (-fsanitize-undefined-trap-on-error: an ud2 where
 * libubsan would be called, see the Makefile) and links no libubsan, whose 6 MiB of globals
 * LeakSanitizer scanned at every exit of every agentrt process.  ASan reports the trap as it
 * reports a bad access: handle_sigill=1 prints the stack with file and line, then aborts.
 * ASAN_OPTIONS adds to this default.  (A definition in the executable, not libagentrt.a: the
 * weak one in libasan.so would satisfy the reference before the archive is searched.)
 */
#ifndef AGENTRT_SANITIZER_H
#define AGENTRT_SANITIZER_H

#ifdef __SANITIZE_ADDRESS__
#include <link.h>
#include <sanitizer/lsan_interface.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22 /* Linux 5.14 */
#endif

const char *__asan_default_options(void);

/* LeakSanitizer's check at exit reads every word of every module's writable
 * segments for pointers into the heap: libasan's own 5 MiB of globals among
 * them (its tables, no pointer into our heap), most of it never touched, so
 * a read fault a page, ~20 us each on a paravirtualised guest, and 25 ms of
 * every agentrt process's exit in this build.  So its own scan of globals
 * is off (__lsan_default_options) and, just before the check, every other
 * module's writable segments are given to it as root regions, which it
 * scans as it did, after one MADV_POPULATE_READ a segment has mapped their
 * pages without the faults.  Registered after libasan's own atexit handler,
 * so it runs first. */
static int san_root_segments(struct dl_phdr_info *info, size_t size, void *ud)
{
  uintptr_t page = *(const uintptr_t *)ud;

  (void)size;
  if (info->dlpi_name != NULL && strstr(info->dlpi_name, "/libasan.so") != NULL)
    return 0;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    uintptr_t start, end, lo, hi;

    if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_W) || ph->p_memsz == 0)
      continue;
    start = (uintptr_t)(info->dlpi_addr + ph->p_vaddr);
    end = start + ph->p_memsz;
    lo = start & ~(page - 1);
    hi = (end + page - 1) & ~(page - 1);
    (void)madvise((void *)lo, hi - lo, MADV_POPULATE_READ); /* best effort */
    __lsan_register_root_region((const void *)start, end - start);
  }
  return 0;
}

static void san_before_leak_check(void)
{
  uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);

  dl_iterate_phdr(san_root_segments, &page);
}

__attribute__((used)) const char *__lsan_default_options(void)
{
  return "use_globals=0";
}

__attribute__((constructor)) static void san_register(void)
{
  atexit(san_before_leak_check);
}

__attribute__((used)) const char *__asan_default_options(void)
{
  return "handle_sigill=1";
}
#endif

#endif
