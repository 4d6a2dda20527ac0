/* token_bucket.h - a token bucket: up to burst events at once, then rate a
 * second.
 *
 * Kept in thousandths of a token, refilled from the time the caller passes
 * (milliseconds of a monotonic clock), so it is pure: the monitor's flood
 * limits (monitor/monitor_flood.c) and its budget for refused-call
 * notifications (monitor/monitor_seccomp.c) use it, tests/unit/test_token_bucket.c
 * checks it with made-up times.
 */
#ifndef AGENTRT_TOKEN_BUCKET_H
#define AGENTRT_TOKEN_BUCKET_H

#include <stdbool.h>
#include <stdint.h>

struct token_bucket {
  int64_t burst;      /* tokens it holds at most */
  int64_t rate;       /* tokens a second */
  int64_t tokens_mil; /* tokens x 1000 */
  int64_t refill_ms;  /* when they were counted */
};

/* A full bucket at now_ms. */
void token_bucket_init(struct token_bucket *b, int64_t burst, int64_t rate, int64_t now_ms);
/* Is there a token at now_ms?  (refills; takes none) */
bool token_bucket_ready(struct token_bucket *b, int64_t now_ms);
/* One token at now_ms: false when there was none (then nothing is taken). */
bool token_bucket_take(struct token_bucket *b, int64_t now_ms);
/* Milliseconds after now_ms until it holds n tokens (n <= burst), 0 when it
 * does already. */
int64_t token_bucket_wait_ms(struct token_bucket *b, int64_t n, int64_t now_ms);

#endif
