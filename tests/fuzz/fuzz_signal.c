/* fuzz_signal.c - libFuzzer target for parse_signal (`kill ID SIGNAL`).
 *
 * An accepted name yields a signal in 1..SIGRTMAX; a failure has a message. */
#include <signal.h>
#include <stdint.h>

#include "common/util.h"
#include "container/process.h"
#include "tests/fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct error err = {0};
  char *in = fuzz_cstr(data, size);
  int sig = -1;

  if (parse_signal(in, &sig, &err) < 0) {
    if (err.msg[0] == '\0')
      fuzz_fail("signal", "failure without a message");
  } else if (sig < 1 || sig > SIGRTMAX) {
    fuzz_fail("signal", "accepted a signal out of range");
  }
  free(in);
  return 0;
}
