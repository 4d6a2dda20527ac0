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
const char *__asan_default_options(void);

__attribute__((used)) const char *__asan_default_options(void)
{
  return "handle_sigill=1";
}
#endif

#endif
