/* token_bucket.c - a token bucket (token_bucket.h). */
#include "common/token_bucket.h"

void token_bucket_init(struct token_bucket *b, int64_t burst, int64_t rate, int64_t now_ms)
{
  *b = (struct token_bucket){
      .burst = burst, .rate = rate, .tokens_mil = burst * 1000, .refill_ms = now_ms};
}

/* rate tokens a second are rate thousandths a millisecond */
static void refill(struct token_bucket *b, int64_t now_ms)
{
  if (now_ms <= b->refill_ms) /* (an earlier time adds nothing, and is not kept) */
    return;
  b->tokens_mil += (now_ms - b->refill_ms) * b->rate;
  if (b->tokens_mil > b->burst * 1000)
    b->tokens_mil = b->burst * 1000;
  b->refill_ms = now_ms;
}

bool token_bucket_ready(struct token_bucket *b, int64_t now_ms)
{
  refill(b, now_ms);
  return b->tokens_mil >= 1000;
}

bool token_bucket_take(struct token_bucket *b, int64_t now_ms)
{
  if (!token_bucket_ready(b, now_ms))
    return false;
  b->tokens_mil -= 1000;
  return true;
}

int64_t token_bucket_wait_ms(struct token_bucket *b, int64_t n, int64_t now_ms)
{
  int64_t short_mil;

  refill(b, now_ms);
  short_mil = n * 1000 - b->tokens_mil;
  if (short_mil <= 0)
    return 0;
  if (b->rate <= 0)
    return INT64_MAX;
  return (short_mil + b->rate - 1) / b->rate;
}
