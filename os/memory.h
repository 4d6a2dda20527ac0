/* memory.h - giving back what a long-lived helper no longer uses. */
#ifndef AGENTRT_MEMORY_H
#define AGENTRT_MEMORY_H

/* For a process that has finished its set-up and now mostly waits (the
 * monitor of an idle container): the stack pages below the caller's frame
 * (dead frames of the set-up, and of the CLI it was forked from) and the
 * heap's free pages go back to the kernel, so they stop counting in its
 * PSS.  Signals are blocked meanwhile (no handler runs on the pages being
 * dropped).  Best effort: a failure leaves the memory as it was. */
void mem_release_unused(void);

#endif
