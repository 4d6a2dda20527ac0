/* syscall_late.h - system calls newer than the libseccomp agentrt is built
 * with.  libseccomp 2.5.4 knows numbers up to 456 (futex_requeue): a filter
 * rule naming a later call was dropped (an unknown name is ignored) and a
 * deny-list filter let it through, so open_tree_attr (467, Linux 6.15),
 * open_tree under another name, passed a profile that denies open_tree
 * (tests/bats/audit-evidence.bats, open-tree-attr-bypass).  Since 424 every
 * call has one number on x86_64, i386, x32 (with 0x40000000), arm and
 * aarch64, so one table serves them all. */
#ifndef AGENTRT_SYSCALL_LATE_H
#define AGENTRT_SYSCALL_LATE_H

/* The number of a call of the table, -1 for any other name. */
int syscall_late_nr(const char *name);
/* The name of number nr (no x32 bit), NULL when the table has none. */
const char *syscall_late_name(long nr);

#endif
