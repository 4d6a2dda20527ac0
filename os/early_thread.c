/* early_thread.c - see early_thread.h */
#include "os/early_thread.h"

/* AddressSanitizer's allocator (GCC 12's libasan) has no fork handler: a
 * thread that starts or ends takes its locks, and a process forked at that
 * moment (the monitor) inherits one held and hangs at its next malloc or
 * free that needs it.  Seen in CI's ASan pass (the monitor not ready after
 * 10 s; an exec's refused calls unanswered for a minute) and reproduced
 * with a thread and a fork in a loop (about 1 in 100).  glibc's fork takes
 * its malloc locks itself, so the release build keeps the overlap; an ASan
 * build joins the thread at once (the same code, no overlap). */
#if defined(__SANITIZE_ADDRESS__)
#define JOIN_AT_ONCE 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define JOIN_AT_ONCE 1
#endif
#endif

int early_thread_start(pthread_t *t, void *(*fn)(void *), void *arg)
{
  pthread_attr_t a;
  int r;

  if (pthread_attr_init(&a) != 0)
    return -1;
  /* a few system calls: no 8 MiB stack to map */
  pthread_attr_setstacksize(&a, 64 * 1024);
  r = pthread_create(t, &a, fn, arg);
  pthread_attr_destroy(&a);
  if (r != 0)
    return -1;
#ifdef JOIN_AT_ONCE
  pthread_join(*t, NULL);
  return 0;
#else
  return 1;
#endif
}
