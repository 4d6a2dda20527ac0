/* test_token_bucket.c - the token bucket (common/token_bucket.h) with made-up times. */
#include <stdint.h>

#include "common/token_bucket.h"
#include "tests/unit/tap.h"

static void test_burst_then_rate(void)
{
  struct token_bucket b;
  int n = 0;

  token_bucket_init(&b, 1000, 1000, 5000);
  while (token_bucket_take(&b, 5000))
    n++;
  tap_ok(n == 1000, "a full bucket gives its burst at once (%d)", n);
  tap_ok(!token_bucket_ready(&b, 5000) && !token_bucket_take(&b, 5000),
         "then none at the same time");
  n = 0;
  for (int64_t t = 5001; t <= 6000; t++)
    while (token_bucket_take(&b, t))
      n++;
  tap_ok(n == 1000, "then the rate: 1000 in a second of 1 ms steps (%d)", n);
  token_bucket_init(&b, 10, 20, 0);
  for (int i = 0; i < 10; i++)
    token_bucket_take(&b, 0);
  tap_ok(!token_bucket_take(&b, 49) && token_bucket_take(&b, 50) && !token_bucket_take(&b, 50),
         "20 a second: one token every 50 ms");
  tap_ok(token_bucket_ready(&b, 100000) && b.tokens_mil == 10 * 1000,
         "an idle bucket fills up to its burst, no further");
}

static void test_wait(void)
{
  struct token_bucket b;

  token_bucket_init(&b, 1000, 1000, 0);
  tap_ok(token_bucket_wait_ms(&b, 10, 0) == 0, "no wait while it holds the tokens");
  while (token_bucket_take(&b, 0))
    ;
  tap_ok(token_bucket_wait_ms(&b, 10, 0) == 10, "empty, 1000 a second: 10 tokens in 10 ms");
  tap_ok(token_bucket_wait_ms(&b, 10, 4) == 6, "6 ms more at 4 ms");
  tap_ok(token_bucket_wait_ms(&b, 10, 10) == 0 && token_bucket_take(&b, 10), "there at 10 ms");
  token_bucket_init(&b, 5, 3, 0);
  while (token_bucket_take(&b, 0))
    ;
  tap_ok(token_bucket_wait_ms(&b, 1, 0) == 334, "a wait is rounded up (1 of 3 a second: 334 ms)");
  tap_ok(!token_bucket_ready(&b, 333) && token_bucket_ready(&b, 334),
         "and the token is there then");
  token_bucket_init(&b, 5, 0, 0);
  while (token_bucket_take(&b, 0))
    ;
  tap_ok(token_bucket_wait_ms(&b, 1, 0) == INT64_MAX, "no rate: never");
}

static void test_clock(void)
{
  struct token_bucket b;

  token_bucket_init(&b, 2, 1000, 100);
  token_bucket_take(&b, 100);
  token_bucket_take(&b, 100);
  tap_ok(!token_bucket_take(&b, 50) && b.refill_ms == 100 && b.tokens_mil == 0,
         "an earlier time adds nothing and is not kept");
  tap_ok(!token_bucket_take(&b, 100) && token_bucket_take(&b, 101), "the next millisecond does");
}

int main(void)
{
  test_burst_then_rate();
  test_wait();
  test_clock();
  return tap_done();
}
