/* memory.h - giving back what a long-lived helper no longer uses. */
#ifndef AGENTRT_MEMORY_H
#define AGENTRT_MEMORY_H

#include <stddef.h>

/* For a process that has finished its set-up and now mostly waits (the
 * monitor of an idle container): the stack pages below the caller's frame
 * (dead frames of the set-up, and of the CLI it was forked from) and the
 * heap's free pages go back to the kernel, so they stop counting in its
 * PSS.  Signals are blocked meanwhile (no handler runs on the pages being
 * dropped).  Best effort: a failure leaves the memory as it was. */
void mem_release_unused(void);

/* In a child just forked: copy now, one call per run of pages, every
 * private writable page it shares with its parent, instead of taking one
 * copy-on-write fault per page as it writes them.  Only pages already
 * resident and not all zeros are taken: the child's resident memory does
 * not grow (a page the parent only read is the kernel's zero page).  For a
 * child that writes much of what it inherited (the monitor: bench/README.md,
 * "ninth round"); one that writes little (the init) pays more for the copies
 * than the faults cost.  First thing in the child, while it is still
 * single-threaded.  Best effort: a kernel before 5.14 (no
 * MADV_POPULATE_WRITE) leaves the faults as they were. */
void mem_take_shared_pages(void);

/* N zeroed bytes in pages of their own, straight from the kernel (mmap):
 * for a long-lived helper's large buffers and tables, which then count in
 * its RSS only where they are written.  From malloc they would reuse heap
 * pages the forking CLI had already touched, and calloc writes every byte.
 * Aborts when out of memory, as xmalloc does.  Free with mem_pages_free and
 * the same size.  The ASan build takes them from the heap (redzones). */
void *mem_pages_alloc(size_t n);
void mem_pages_free(void *p, size_t n);

#endif
