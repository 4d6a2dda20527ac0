/* fuzz_audit.c - libFuzzer target for the trail's readers: each line of the
 * input as a record for the summary, the text view, the filter and the seq
 * reader, and the whole input as a trail's one file for `audit verify`
 * (with a head naming its last line, so the chain walk runs).  A trail is
 * written by the monitor, but a disk or a hand can damage it: the readers
 * must say so, never crash.  The first line is also a --since value. */
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit/audit.h"
#include "audit/internal.h"
#include "common/util.h"
#include "tests/fuzz/fuzz_common.h"

static char dir_path[64];

static void remove_dir(void)
{
  char p[128];

  snprintf(p, sizeof p, "%s/head", dir_path);
  unlink(p);
  snprintf(p, sizeof p, "%s/00000000000000000001.jsonl", dir_path);
  unlink(p);
  rmdir(dir_path);
}

static int trail_dir(void)
{
  static int fd = -1;

  if (fd >= 0)
    return fd;
  snprintf(dir_path, sizeof dir_path, "/dev/shm/fuzz-audit-%d", (int)getpid());
  if (mkdir(dir_path, 0700) == 0)
    atexit(remove_dir);
  fd = open(dir_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    abort();
  return fd;
}

static void write_at(int dfd, const char *name, const void *p, size_t n)
{
  int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

  if (fd < 0 || (n > 0 && write(fd, p, n) != (ssize_t)n))
    abort();
  close(fd);
}

static void verify_as_trail(const uint8_t *data, size_t size, const char *last, size_t last_len)
{
  int dfd = trail_dir();
  struct audit_verify_result r;
  struct error err = {0};
  char head[AUDIT_HEAD_LEN + 1], hash[SHA256_HEX_LEN + 1];
  const char *h = last ? memmem(last, last_len, "\"hash\":\"", 8) : NULL;
  uint64_t seq = last ? audit_line_seq(last, last_len) : 0;

  memset(hash, '0', SHA256_HEX_LEN);
  hash[SHA256_HEX_LEN] = '\0';
  if (h != NULL && (size_t)(last + last_len - (h + 8)) >= SHA256_HEX_LEN)
    for (int i = 0; i < SHA256_HEX_LEN; i++)
      hash[i] = (h[8 + i] >= '0' && h[8 + i] <= '9') || (h[8 + i] >= 'a' && h[8 + i] <= 'f')
                    ? h[8 + i]
                    : '0';
  snprintf(head, sizeof head, "%020" PRIu64 " %s %020" PRIu64 " %020" PRIu64 " %020" PRIu64 "\n",
           seq, hash, (uint64_t)1, (uint64_t)0, (uint64_t)0);
  write_at(dfd, "head", head, AUDIT_HEAD_LEN);
  write_at(dfd, "00000000000000000001.jsonl", data, size);
  if (audit_verify(dfd, &r, &err) < 0) {
    if (err.msg[0] == '\0')
      fuzz_fail("verify", "failure without a message");
  } else if (!r.ok && r.detail[0] == '\0') {
    fuzz_fail("verify", "a bad trail without a detail");
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct audit_summary *s = audit_summary_new();
  char *kinds[] = {"process", "exec", NULL};
  struct audit_filter f = {.since_ns = 1, .kinds = kinds};
  const char *p = (const char *)data, *end = p + size, *last = NULL;
  size_t last_len = 0;
  char *text;
  int64_t ns;

  for (const char *q; p < end; p = q + 1) {
    q = memchr(p, '\n', (size_t)(end - p));
    if (q == NULL)
      q = end;
    char *line = fuzz_copy((const unsigned char *)p, (size_t)(q - p));
    size_t n = (size_t)(q - p);
    if (last == NULL) {
      char *c = fuzz_cstr((const unsigned char *)p, n);
      audit_parse_time(c, &ns);
      free(c);
    }
    audit_line_seq(line, n);
    audit_record_match(line, n, &f);
    text = audit_record_text(line, n);
    if (text == NULL)
      fuzz_fail("record text", "NULL");
    free(text);
    audit_summary_add(s, line, n);
    free(line);
    last = p;
    last_len = n;
  }
  audit_summary_set_monitor_dead(s);
  text = audit_summary_render(s);
  if (text == NULL)
    fuzz_fail("summary", "NULL");
  free(text);
  audit_summary_free(s);
  verify_as_trail(data, size, last, last_len);
  return 0;
}
