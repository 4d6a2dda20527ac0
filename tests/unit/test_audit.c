/* test_audit.c - SHA-256 vectors, the hash chain, tamper detection,
 * rotation and retention, concurrent writers, JSON escaping, reading, the
 * summary's network lists. */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "audit/audit.h"
#include "audit/jbuf.h"
#include "common/sha256.h"
#include "common/util.h"
#include "tests/unit/tap.h"

/* The summary of a trail's lines, rendered. */
static char *summary_of(const char *const *lines, size_t n)
{
  struct audit_summary *s = audit_summary_new();
  char *text;

  for (size_t i = 0; i < n; i++)
    audit_summary_add(s, lines[i], strlen(lines[i]));
  text = audit_summary_render(s);
  audit_summary_free(s);
  return text;
}

/* The vectors and the million 'a', with whichever code this CPU runs. */
static void sha256_vectors(const char *impl)
{
  static const struct {
    const char *in, *out;
  } v[] = {
      {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
      {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
      {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
      {"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrl"
       "mnopqrsmnopqrstnopqrstu",
       "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
  };
  char hex[65];
  struct sha256 s;
  uint8_t d[32];
  static char chunk[1000];

  for (size_t i = 0; i < ARRAY_SIZE(v); i++) {
    sha256_hex(v[i].in, strlen(v[i].in), hex);
    tap_ok(strcmp(hex, v[i].out) == 0, "sha256 (%s) vector %zu (%zu bytes)", impl, i,
           strlen(v[i].in));
  }
  /* one million 'a', fed in uneven pieces */
  memset(chunk, 'a', sizeof chunk);
  sha256_init(&s);
  for (size_t done = 0, step = 1; done < 1000000; done += step, step = step % 997 + 1) {
    if (done + step > 1000000)
      step = 1000000 - done;
    sha256_update(&s, chunk, step);
  }
  sha256_final(&s, d);
  for (int i = 0; i < 32; i++)
    snprintf(hex + 2 * i, 3, "%02x", d[i]);
  tap_ok(strcmp(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0") == 0,
         "sha256 (%s) of a million 'a' in uneven pieces", impl);
}

/* A small xorshift: the same inputs every run. */
static uint64_t rnd_next(uint64_t *x)
{
  *x ^= *x << 13;
  *x ^= *x >> 7;
  *x ^= *x << 17;
  return *x;
}

/* The CPU's SHA extensions against the portable code: random lengths
 * (across block boundaries), unaligned starts, uneven update pieces. */
static void sha256_accel_matches(void)
{
  static uint8_t buf[4200];
  uint64_t x = 0x9e3779b97f4a7c15ULL;
  int bad = 0;

  for (size_t i = 0; i < sizeof buf; i++)
    buf[i] = (uint8_t)rnd_next(&x);
  for (int round = 0; round < 600; round++) {
    size_t off = rnd_next(&x) % 16, len = rnd_next(&x) % (sizeof buf - 16);
    uint8_t d[2][32];
    for (int k = 0; k < 2; k++) {
      struct sha256 s;
      size_t done = 0;
      sha256_set_accelerated(k == 1);
      sha256_init(&s);
      while (done < len) {
        size_t step = 1 + rnd_next(&x) % 300;
        if (step > len - done)
          step = len - done;
        sha256_update(&s, buf + off + done, step);
        done += step;
      }
      sha256_final(&s, d[k]);
    }
    bad += memcmp(d[0], d[1], 32) != 0;
  }
  tap_ok(bad == 0,
         "sha256: the SHA extensions and the portable code agree on 600 inputs (%d differ)", bad);
}

static void test_sha256(void)
{
  bool accel = sha256_accelerated();

  sha256_set_accelerated(false);
  sha256_vectors("portable");
  if (sha256_set_accelerated(true)) {
    sha256_vectors("SHA extensions");
    sha256_accel_matches();
  } else {
    tap_skip("sha256: this CPU has no SHA extensions");
  }
  sha256_set_accelerated(accel);
}

static void test_jbuf(void)
{
  struct jbuf b = {0};
  const char bad[] = {'a', '"', '\\', '\n', 1, (char)0xff, (char)0xc3, (char)0xa9, 0};
  char *argv[] = {"ls", "-l", NULL};

  jb_key_str(&b, "s", bad);
  jb_key_strv(&b, "argv", argv, 2);
  jb_key_i64(&b, "n", -3);
  tap_ok(strcmp(jb_str(&b), "\"s\":\"a\\\"\\\\\\n\\u0001\\udcff\xc3\xa9\",\"argv\":[\"ls\",\"-l\"],"
                            "\"n\":-3") == 0,
         "jbuf escapes control and invalid bytes, keeps UTF-8: %s", jb_str(&b));
  jb_free(&b);
}

static char *tmpdir(void)
{
  char tmpl[] = "/tmp/agentrt-test-audit-XXXXXX";
  char *d = mkdtemp(tmpl);
  return d ? xstrdup(d) : NULL;
}

static int trail_fd(const char *dir)
{
  return open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

static bool verify_ok(const char *dir, struct audit_verify_result *r)
{
  struct error err = {0};
  int fd = trail_fd(dir);
  int ret = audit_verify(fd, r, &err);

  close(fd);
  if (ret < 0)
    printf("# verify: %s\n", err.msg);
  return ret == 0 && r->ok;
}

static void write_n(const char *dir, int n, const struct audit_limits *lim)
{
  struct audit_log *l = NULL;
  struct error err = {0};

  if (audit_log_open(dir, "c1", lim, true, &l, &err) < 0) {
    tap_ok(false, "open trail: %s", err.msg);
    return;
  }
  for (int i = 0; i < n; i++) {
    cleanup_free char *f = xfmt("\"i\":%d,\"path\":\"/workspace/f%d\"", i, i);
    if (audit_log_append(l, "file", f, &err) < 0) {
      tap_ok(false, "append %d: %s", i, err.msg);
      break;
    }
  }
  audit_log_close(l);
}

static char *file_path(const char *dir, uint64_t first)
{
  return xfmt("%s/%020" PRIu64 ".jsonl", dir, first);
}

/* Rewrite the single log file with a change made by `edit`. */
static void edit_file(const char *dir, void (*edit)(char **lines, size_t *n))
{
  cleanup_free char *path = file_path(dir, 1);
  char *lines[64];
  size_t n = 0;
  char buf[4096];
  FILE *f = fopen(path, "r");

  while (f && n < 64 && fgets(buf, sizeof buf, f))
    lines[n++] = xstrdup(buf);
  if (f)
    fclose(f);
  edit(lines, &n);
  f = fopen(path, "w");
  for (size_t i = 0; i < n; i++) {
    fputs(lines[i], f);
    free(lines[i]);
  }
  fclose(f);
}

static void edit_modify(char **l, size_t *n)
{
  char *p = strstr(l[2], "/workspace/f2");
  p[11] = 'X';
}
static void edit_delete(char **l, size_t *n)
{
  free(l[3]);
  memmove(l + 3, l + 4, (*n - 4) * sizeof *l);
  (*n)--;
}
static void edit_swap(char **l, size_t *n)
{
  char *t = l[4];
  l[4] = l[5];
  l[5] = t;
}
static void edit_drop_last(char **l, size_t *n)
{
  free(l[--*n]);
}
/* change a record and recompute its own hash: the next prev link breaks */
static void edit_rehash(char **l, size_t *n)
{
  char *line = l[1], *h = strstr(line, ",\"hash\":\"");
  char hex[65];
  cleanup_free char *body = NULL;

  strstr(line, "/workspace/f1")[11] = 'Y';
  body = xstrndup(line, (size_t)(h - line));
  body = xrealloc(body, strlen(body) + 2);
  strcat(body, "}");
  sha256_hex(body, strlen(body), hex);
  memcpy(h + 9, hex, 64);
}

/* the last record without its newline (a write cut short) */
static void edit_cut_last(char **l, size_t *n)
{
  l[*n - 1][strlen(l[*n - 1]) - 1] = '\0';
}
static void edit_empty(char **l, size_t *n)
{
  while (*n > 0)
    free(l[--*n]);
}

static void tamper_case(const char *name, void (*edit)(char **, size_t *), uint64_t want_bad)
{
  cleanup_free char *dir = tmpdir();
  struct audit_verify_result r;
  struct error err = {0};
  cleanup_free char *cmd = NULL;
  int fd, ret;

  write_n(dir, 8, NULL);
  edit_file(dir, edit);
  fd = trail_fd(dir);
  ret = audit_verify(fd, &r, &err);
  close(fd);
  /* a bad trail is a result with its detail, not an error without a message */
  tap_ok(ret == 0 && !r.ok && r.bad_seq == want_bad && r.detail[0] != '\0',
         "verify detects %s at seq %" PRIu64 " (got %d ok=%d bad=%" PRIu64 ": %s%s)", name,
         want_bad, ret, r.ok, r.bad_seq, r.detail, err.msg);
  cmd = xfmt("rm -rf %s", dir);
  if (system(cmd) != 0)
    printf("# cleanup failed\n");
}

static void test_chain(void)
{
  cleanup_free char *dir = tmpdir();
  cleanup_free char *cmd = xfmt("rm -rf %s", dir);
  struct audit_verify_result r;
  struct error err = {0};

  write_n(dir, 10, NULL);
  tap_ok(audit_append_event(dir, "c1", "delete", NULL, &err) == 0, "append from a second handle");
  verify_ok(dir, &r);
  tap_ok(r.ok && r.records == 11 && r.first_seq == 1 && r.last_seq == 11,
         "a fresh chain verifies (%" PRIu64 " records)", r.records);
  tap_ok(audit_append_event("/nonexistent/agentrt-audit", "c1", "x", NULL, &err) < 0,
         "appending to a missing trail fails without creating it");
  if (system(cmd) != 0)
    printf("# cleanup failed\n");
  tamper_case("a modified line", edit_modify, 3);
  tamper_case("a deleted line", edit_delete, 4);
  tamper_case("reordered lines", edit_swap, 5);
  tamper_case("a deleted last line", edit_drop_last, 8);
  tamper_case("a line rewritten with a fresh hash", edit_rehash, 3);
  tamper_case("a last record cut short", edit_cut_last, 8);
  tamper_case("an emptied file", edit_empty, 1);
}

static void test_rotation(void)
{
  cleanup_free char *dir = tmpdir();
  cleanup_free char *cmd = xfmt("rm -rf %s", dir);
  struct audit_limits lim = {.max_size = 8192, .max_age = 0};
  struct audit_verify_result r;
  cleanup_free uint64_t *files = NULL;
  struct error err = {0};
  size_t n = 0;
  int fd;

  write_n(dir, 400, &lim);
  fd = trail_fd(dir);
  audit_list_files(fd, &files, &n, &err);
  close(fd);
  tap_ok(n > 1 && n <= 6, "rotation made %zu files", n);
  verify_ok(dir, &r);
  tap_ok(r.ok, "the chain verifies across rotated files: %s", r.detail);
  /* the first file (create, the first records) stays; what went is declared */
  tap_ok(r.first_seq == 1 && files[0] == 1 && r.dropped > 0 && r.gaps == 1,
         "retention kept the first file and dropped the oldest others (seq %" PRIu64 "..%" PRIu64
         ", %" PRIu64 " dropped, %zu gap)",
         r.first_seq, r.last_seq, r.dropped, r.gaps);
  tap_ok(r.last_seq > 400 && r.records + r.dropped == r.last_seq,
         "every seq is either there or declared dropped (%" PRIu64 " + %" PRIu64 " of %" PRIu64 ")",
         r.records, r.dropped, r.last_seq);
  /* every file within the bound, the whole trail too */
  {
    cleanup_free char *du = xfmt("test $(cat %s/*.jsonl | wc -c) -le 8192", dir);
    tap_ok(system(du) == 0, "the trail stays within max_size");
  }
  /* a middle file removed by anything but retention is a gap nothing declares */
  if (n > 2) {
    cleanup_free char *p = file_path(dir, files[1]);
    unlink(p);
    verify_ok(dir, &r);
    tap_ok(!r.ok && r.bad_seq > 1 && r.bad_seq <= files[1] &&
               strstr(r.detail, "no retention record") != NULL,
           "a removed middle file is reported at seq %" PRIu64 " (got %" PRIu64 ": %s)", files[1],
           r.bad_seq, r.detail);
  }
  /* the first file, which retention never removes, removed: not "dropped
   * by retention" (the later files' retention records declare only what
   * came after it) */
  {
    cleanup_free char *p = file_path(dir, files[0]);
    unlink(p);
    verify_ok(dir, &r);
    tap_ok(!r.ok && r.bad_seq == 1 && strstr(r.detail, "first file removed") != NULL,
           "a removed first file is reported at seq 1 (got %" PRIu64 ": %s)", r.bad_seq, r.detail);
  }
  /* every file removed and the head emptied: no records is no trail */
  {
    cleanup_free char *rm = xfmt("rm -f %s/*.jsonl && : >%s/head", dir, dir);
    tap_ok(system(rm) == 0, "trail emptied");
    verify_ok(dir, &r);
    tap_ok(!r.ok && r.bad_seq == 1 && strstr(r.detail, "no records") != NULL,
           "an emptied trail is reported at seq 1 (got %" PRIu64 ": %s)", r.bad_seq, r.detail);
  }
  if (system(cmd) != 0)
    printf("# cleanup failed\n");
}

static void test_concurrent(void)
{
  cleanup_free char *dir = tmpdir();
  cleanup_free char *cmd = xfmt("rm -rf %s", dir);
  struct audit_limits lim = {.max_size = 1 << 20}; /* no retention: one whole chain */
  struct audit_verify_result r;
  int st, good = 0;

  write_n(dir, 1, &lim);
  for (int p = 0; p < 4; p++) {
    if (fork() == 0) {
      struct error err = {0};
      for (int i = 0; i < 100; i++)
        if (audit_append_event(dir, "c1", "exec", "\"argv\":[\"x\"]", &err) < 0)
          _exit(1);
      _exit(0);
    }
  }
  for (int p = 0; p < 4; p++)
    if (wait(&st) > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0)
      good++;
  tap_ok(good == 4, "four concurrent writers succeeded");
  verify_ok(dir, &r);
  tap_ok(r.ok && r.last_seq == 401, "their records form one chain (%" PRIu64 ")", r.last_seq);
  if (system(cmd) != 0)
    printf("# cleanup failed\n");
}

static int count_line(void *ctx, const char *line, size_t len)
{
  (*(int *)ctx)++;
  return 0;
}

static void test_read(void)
{
  cleanup_free char *dir = tmpdir();
  cleanup_free char *cmd = xfmt("rm -rf %s", dir);
  struct audit_pos pos = {0};
  struct audit_filter f = {0};
  struct error err = {0};
  char *kinds[] = {"delete", NULL};
  int n = 0, fd;
  int64_t t = 0;
  cleanup_free char *text = NULL;
  const char *rec =
      "{\"seq\":3,\"time\":\"2024-05-01T10:00:00.5Z\",\"id\":\"c1\",\"kind\":\"process\","
      "\"argv\":[\"ls\",\"-l\"],\"prev\":\"0\",\"hash\":\"0\"}";

  write_n(dir, 5, NULL);
  fd = trail_fd(dir);
  audit_scan(fd, &pos, count_line, &n, &err);
  tap_ok(n == 5 && pos.last_seq == 5, "scan delivers every record (%d)", n);
  audit_append_event(dir, "c1", "delete", NULL, &err);
  n = 0;
  audit_scan(fd, &pos, count_line, &n, &err);
  tap_ok(n == 1 && pos.last_seq == 6, "a second scan delivers only the new record");
  close(fd);
  tap_ok(audit_parse_time("2024-05-01T10:00:00.5Z", &t) == 0 && t == 1714557600500000000LL,
         "parse RFC 3339 with fraction");
  tap_ok(audit_parse_time("2024-05-01T12:00:00+02:00", &t) == 0 && t == 1714557600000000000LL,
         "parse RFC 3339 with offset");
  tap_ok(audit_parse_time("yesterday", &t) < 0, "reject a bad time");
  /* out of nanoseconds' range: refused, not wrapped (fuzz_audit found the overflow) */
  tap_ok(audit_parse_time("1014-12-06T09:14:48Z", &t) < 0 &&
             audit_parse_time("2300-01-01T00:00:00Z", &t) < 0 &&
             audit_parse_time("100000000d", &t) < 0 && audit_parse_time("1000000h", &t) == 0,
         "reject times and durations past nanoseconds' range");
  f.kinds = kinds;
  tap_ok(!audit_record_match(rec, strlen(rec), &f), "kind filter excludes");
  f.kinds = NULL;
  audit_parse_time("2024-05-01T10:00:00Z", &f.since_ns);
  tap_ok(audit_record_match(rec, strlen(rec), &f), "since filter includes a later record");
  text = audit_record_text(rec, strlen(rec));
  tap_ok(strcmp(text, "2024-05-01T10:00:00.5Z #3 process  argv=[ls -l]") == 0, "text: %s", text);
  {
    /* the agent's control characters (ESC, BEL, C1 CSI) never reach the terminal raw */
    const char esc[] =
        "{\"seq\":4,\"time\":\"t\",\"kind\":\"file\",\"path\":\"x\\u001b]0;T\\u0007\\u009b\","
        "\"k\\u001b\":1}";
    struct jbuf b = {0};
    char *esc_t;
    cleanup_free char *esc_text = audit_record_text(esc, strlen(esc));
    tap_ok(strpbrk(esc_text, "\033\007") == NULL && strstr(esc_text, "\302\233") == NULL,
           "text: control characters escaped: %s", esc_text);
    jb_text(&b, "a\033b\302\233c\\\377", 8);
    esc_t = jb_take(&b);
    tap_ok(strcmp(esc_t, "a\\x1bb\\xc2\\x9bc\\\\\\xff") == 0, "jb_text: %s", esc_t);
    free(esc_t);
  }
  {
    /* a name with a byte that is not UTF-8 (caf\351) and one with U+00E9 (caf\303\251)
     * are two names in the trail and in its text */
    struct jbuf b = {0};
    char *rec1, *rec2;
    cleanup_free char *t1 = NULL, *t2 = NULL;
    jb_puts(&b, "{\"seq\":5,\"time\":\"t\",\"kind\":\"file\"");
    jb_key_str(&b, "path", "caf\351");
    jb_puts(&b, "}");
    rec1 = jb_take(&b);
    jb_puts(&b, "{\"seq\":6,\"time\":\"t\",\"kind\":\"file\"");
    jb_key_str(&b, "path", "caf\303\251");
    jb_puts(&b, "}");
    rec2 = jb_take(&b);
    t1 = audit_record_text(rec1, strlen(rec1));
    t2 = audit_record_text(rec2, strlen(rec2));
    tap_ok(strstr(rec1, "caf\\udce9") != NULL && strstr(t1, "path=\"caf\\udce9\"") != NULL &&
               strstr(t2, "path=caf\303\251") != NULL,
           "an invalid byte is not the character of its value: %s / %s / %s", rec1, t1, t2);
    free(rec1);
    free(rec2);
  }
  if (system(cmd) != 0)
    printf("# cleanup failed\n");
}

/* --summary: flows are hosts reached (named after the DNS answer that gave
 * the address), denied packets hosts refused; counts add up. */
static void test_summary_net(void)
{
  static const char *const lines[] = {
      "{\"seq\":1,\"id\":\"c1\",\"kind\":\"dns\",\"name\":\"allowed.test\",\"qtype\":1,"
      "\"verdict\":\"allowed\",\"addrs\":[\"203.0.113.10\"]}",
      "{\"seq\":2,\"id\":\"c1\",\"kind\":\"flow\",\"dst\":\"203.0.113.10\",\"proto\":\"tcp\","
      "\"port\":80,\"count\":1}",
      "{\"seq\":3,\"id\":\"c1\",\"kind\":\"flow\",\"dst\":\"203.0.113.10\",\"proto\":\"tcp\","
      "\"port\":80,\"count\":2}",
      "{\"seq\":4,\"id\":\"c1\",\"kind\":\"flow\",\"dst\":\"2001:db8::1\",\"proto\":\"udp\","
      "\"port\":443,\"count\":1}",
      "{\"seq\":5,\"id\":\"c1\",\"kind\":\"denied\",\"dst\":\"198.51.100.20\",\"proto\":\"tcp\","
      "\"port\":80,\"count\":1}",
      "{\"seq\":6,\"id\":\"c1\",\"kind\":\"denied\",\"dst\":\"192.0.2.9\",\"proto\":\"icmp\","
      "\"icmp_type\":8,\"count\":4}",
  };
  cleanup_free char *text = summary_of(lines, ARRAY_SIZE(lines));
  tap_ok(strstr(text, "hosts reached (3):\n") != NULL, "three hosts reached");
  tap_ok(strstr(text, "  allowed.test (dns)\n") != NULL, "the allowed name");
  tap_ok(strstr(text, "  203.0.113.10:80/tcp (allowed.test) x3\n") != NULL,
         "the address connected to, named, with its count");
  tap_ok(strstr(text, "  [2001:db8::1]:443/udp\n") != NULL, "an unnamed v6 flow");
  tap_ok(strstr(text, "  198.51.100.20:80/tcp (packet)\n") != NULL &&
             strstr(text, "  192.0.2.9/icmp (packet) x4\n") != NULL,
         "denied packets are hosts refused");
  if (tap_failed_)
    fputs(text, stdout);
}

/* A counted record and a gap: the summary says what is not there one by one;
 * a file source error makes the file list incomplete instead of "(0)". */
static void test_summary_gaps(void)
{
  static const char *const lines[] = {
      "{\"seq\":1,\"id\":\"c1\",\"kind\":\"create\",\"time\":\"t\"}",
      "{\"seq\":2,\"id\":\"c1\",\"kind\":\"audit_error\",\"source\":\"file\","
      "\"error\":\"fanotify_mark: Operation not supported\"}",
      "{\"seq\":9,\"id\":\"c1\",\"kind\":\"process\",\"coalesced\":500,"
      "\"program\":\"/bin/true\",\"first_pid\":10,\"last_pid\":600}",
  };
  cleanup_free char *text = summary_of(lines, ARRAY_SIZE(lines));
  tap_ok(strstr(text, "incomplete: 6 records dropped by retention") != NULL, "the gap is counted");
  tap_ok(strstr(text, "500 events coalesced into 1 counted records") != NULL,
         "the counted events are added up");
  tap_ok(strstr(text, "  /bin/true (counted) x500\n") != NULL, "a counted program");
  tap_ok(strstr(text, "files changed (incomplete: 0 recorded; fanotify_mark: Operation not "
                      "supported):") != NULL &&
             strstr(text, "files changed (0)") == NULL,
         "a failed file source is no empty file list");
  if (tap_failed_)
    fputs(text, stdout);
}

/* Records of events a kernel queue dropped: verify counts them (a trail with
 * one is no plain ok) with their sources and the events they count; a name
 * inside an error message forges no "lost" member and no count. */
static void test_verify_losses(void)
{
  cleanup_free char *dir = tmpdir();
  cleanup_free char *cmd = xfmt("rm -rf %s", dir);
  struct audit_verify_result r;
  struct error err = {0};

  write_n(dir, 3, NULL);
  verify_ok(dir, &r);
  tap_ok(r.ok && r.loss_records == 0, "no loss in a trail without one");
  tap_ok(audit_append_event(dir, "c1", "audit_error",
                            "\"source\":\"file\",\"error\":\"cannot mark "
                            "`x\\\",\\\"lost\\\":true,\\\"lost_events\\\":99`\"",
                            &err) == 0,
         "append an error naming a forged member");
  verify_ok(dir, &r);
  tap_ok(r.ok && r.loss_records == 0, "a name in an error is no loss (%" PRIu64 ")",
         r.loss_records);
  tap_ok(r.error_records == 1 && strcmp(r.error_sources, "file") == 0,
         "an error is a source in error (%" PRIu64 ": %s)", r.error_records, r.error_sources);
  tap_ok(audit_append_event(dir, "c1", "audit_error",
                            "\"source\":\"net\",\"lost\":true,\"lost_events\":2746,"
                            "\"error\":\"network events lost\"",
                            &err) == 0 &&
             audit_append_event(dir, "c1", "audit_error",
                                "\"source\":\"process\",\"error\":\"process events lost: "
                                "No buffer space available\"",
                                &err) == 0 &&
             audit_append_event(dir, "c1", "audit_error",
                                "\"source\":\"net\",\"lost\":true,\"error\":\"network events "
                                "lost\"",
                                &err) == 0,
         "append loss records");
  verify_ok(dir, &r);
  tap_ok(r.ok && r.loss_records == 3 && r.lost_events == 2746,
         "losses counted (%" PRIu64 " records, %" PRIu64 " events)", r.loss_records, r.lost_events);
  tap_ok(strcmp(r.lost_sources, "net, process") == 0, "their sources once each (%s)",
         r.lost_sources);
  if (system(cmd) != 0)
    printf("# cleanup failed\n");
}

/* A deleted container whose monitor left no record of its end (killed):
 * verify and the summary say so; with its exit record, neither does. */
static void test_monitor_gone(void)
{
  static const char *const kinds[] = {"monitor", "delete", "exit"};
  cleanup_free char *dir = tmpdir();
  cleanup_free char *cmd = xfmt("rm -rf %s", dir);
  struct audit_verify_result r;
  struct error err = {0};
  bool ok = true;

  write_n(dir, 2, NULL);
  for (size_t i = 0; i < 2; i++)
    ok = ok && audit_append_event(dir, "c1", kinds[i], i == 0 ? "\"sources\":[\"process\"]" : NULL,
                                  &err) == 0;
  tap_ok(ok, "append monitor and delete");
  verify_ok(dir, &r);
  tap_ok(r.ok && r.monitor_gone, "deleted, no exit record: the monitor is gone");
  tap_ok(audit_append_event(dir, "c1", kinds[2], "\"pid\":7,\"signal\":9", &err) == 0,
         "append exit");
  verify_ok(dir, &r);
  tap_ok(r.ok && !r.monitor_gone, "with an exit record it is not");
  if (system(cmd) != 0)
    printf("# cleanup failed\n");
  {
    static const char *const lines[] = {
        "{\"seq\":1,\"id\":\"c1\",\"kind\":\"monitor\",\"sources\":[\"process\"]}",
        "{\"seq\":2,\"id\":\"c1\",\"kind\":\"delete\",\"time\":\"t\"}",
    };
    cleanup_free char *text = summary_of(lines, ARRAY_SIZE(lines));
    tap_ok(strstr(text, "ended:   unknown (deleted after its monitor ended)\n") != NULL &&
               strstr(text, "incomplete: the monitor ended before the container") != NULL,
           "the summary says the monitor ended first");
  }
}

/* A loss record makes its source's lists incomplete and is counted. */
static void test_summary_losses(void)
{
  static const char *const lines[] = {
      "{\"seq\":1,\"id\":\"c1\",\"kind\":\"create\",\"time\":\"t\"}",
      "{\"seq\":2,\"id\":\"c1\",\"kind\":\"audit_error\",\"source\":\"net\",\"lost\":true,"
      "\"lost_events\":40,\"error\":\"network events lost (NFLOG queue overflow)\"}",
      "{\"seq\":3,\"id\":\"c1\",\"kind\":\"audit_error\",\"source\":\"process\","
      "\"error\":\"process events lost: No buffer space available\"}",
  };
  cleanup_free char *text = summary_of(lines, ARRAY_SIZE(lines));
  tap_ok(strstr(text, "incomplete: events lost (2 audit_error records, "
                      "40 lost events counted)\n") != NULL,
         "the losses are counted");
  tap_ok(strstr(text, "programs run (incomplete: 0 recorded; process events lost") != NULL,
         "lost process events: the program list is incomplete");
  tap_ok(strstr(text, "hosts refused (incomplete: 0 recorded; network events lost") != NULL &&
             strstr(text, "hosts reached (incomplete: ") != NULL,
         "lost packets: both host lists are incomplete");
  tap_ok(strstr(text, "files changed (0)") != NULL, "the file list is not");
  if (tap_failed_)
    fputs(text, stdout);
}

/* The loader run by itself names the program it runs (loader-spoof). */
static void test_summary_loader(void)
{
  static const char *const lines[] = {
      "{\"seq\":1,\"id\":\"c1\",\"kind\":\"process\",\"exe\":"
      "\"/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2\",\"argv\":[\"/lib64/"
      "ld-linux-x86-64.so.2\",\"--argv0\",\"ls\",\"--inhibit-cache\",\"/tmp/tool\",\"x\"]}",
      "{\"seq\":2,\"id\":\"c1\",\"kind\":\"process\",\"exe\":\"/lib/ld-musl-x86_64.so.1\","
      "\"argv\":[\"ld\",\"--preload\",\"/tmp/p.so\",\"--\",\"/tmp/other\"]}",
      /* `ld.so --help`: no program, listed as itself */
      "{\"seq\":3,\"id\":\"c1\",\"kind\":\"process\",\"exe\":\"/usr/lib/ld.so\","
      "\"argv\":[\"ld.so\",\"--help\"]}",
      /* a program whose name only starts alike */
      "{\"seq\":4,\"id\":\"c1\",\"kind\":\"process\",\"exe\":\"/usr/bin/ld-wrapper\","
      "\"argv\":[\"ld-wrapper\",\"a\"]}",
  };
  cleanup_free char *text = summary_of(lines, ARRAY_SIZE(lines));
  tap_ok(strstr(text, "  /tmp/tool (run by the loader "
                      "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2)\n") != NULL,
         "glibc's loader: the program after its options is named");
  tap_ok(strstr(text, "  /tmp/other (run by the loader /lib/ld-musl-x86_64.so.1)\n") != NULL,
         "musl's loader, after --");
  /* (its directory is no system bin directory: named with its file) */
  tap_ok(strstr(text, "  ld.so (exe /usr/lib/ld.so)\n") != NULL,
         "a loader with no program: itself");
  tap_ok(strstr(text, "  ld-wrapper\n") != NULL, "not a loader");
  if (tap_failed_)
    fputs(text, stdout);
}

/* hardlink-alias-evicted: a write through one name of a file of several,
 * its record without the other names (the monitor no longer remembered
 * them), is a change of the names an earlier record of its inode gave; one
 * of another inode is not. */
static void test_summary_links_by_inode(void)
{
  static const char *const lines[] = {
      "{\"seq\":1,\"id\":\"c1\",\"kind\":\"file\",\"path\":\"/w/k1\",\"ops\":[\"create\"],"
      "\"nlink\":2,\"links\":[\"/w/h1\"],\"ino\":14}",
      "{\"seq\":2,\"id\":\"c1\",\"kind\":\"file\",\"path\":\"/w/n1\",\"ops\":[\"create\"]}",
      "{\"seq\":3,\"id\":\"c1\",\"kind\":\"file\",\"path\":\"/w/k1\",\"ops\":[\"modify\"],"
      "\"nlink\":2,\"ino\":14}",
      "{\"seq\":4,\"id\":\"c1\",\"kind\":\"file\",\"path\":\"/w/k2\",\"ops\":[\"modify\"],"
      "\"nlink\":2,\"ino\":15}",
  };
  cleanup_free char *text = summary_of(lines, ARRAY_SIZE(lines));
  tap_ok(strstr(text, "  /w/h1 (modify via /w/k1)\n") != NULL,
         "a write through k1 is h1's, named by an earlier record of its inode");
  tap_ok(strstr(text, "/w/h1 (modify via /w/k2") == NULL &&
             strstr(text, "/w/n1 (create)\n") != NULL,
         "not another inode's");
  if (tap_failed_)
    fputs(text, stdout);
}

/* inode-reused-links: an inode number freed and given to another file of
 * several links (its birth time another) is not joined to the names of the
 * old one; the same birth time, or a record without one (an older
 * monitor's), is. */
static void test_summary_inode_reused(void)
{
  static const char *const lines[] = {
      "{\"seq\":1,\"id\":\"c1\",\"kind\":\"file\",\"path\":\"/w/k1\",\"ops\":[\"create\"],"
      "\"nlink\":2,\"links\":[\"/w/h1\"],\"ino\":14,\"born\":1000000001}",
      "{\"seq\":2,\"id\":\"c1\",\"kind\":\"file\",\"path\":\"/w/x\",\"ops\":[\"modify\"],"
      "\"nlink\":2,\"ino\":14,\"born\":2000000002}",
      "{\"seq\":3,\"id\":\"c1\",\"kind\":\"file\",\"path\":\"/w/k1\",\"ops\":[\"attrib\"],"
      "\"nlink\":2,\"ino\":14,\"born\":1000000001}",
      "{\"seq\":4,\"id\":\"c1\",\"kind\":\"file\",\"path\":\"/w/k1\",\"ops\":[\"close_write\"],"
      "\"nlink\":2,\"ino\":14}",
  };
  cleanup_free char *text = summary_of(lines, ARRAY_SIZE(lines));
  tap_ok(strstr(text, "via /w/x") == NULL, "a reused inode number is not joined to the old names");
  tap_ok(strstr(text, "attrib via /w/k1") != NULL, "the same inode (its birth time) is");
  tap_ok(strstr(text, "close_write via /w/k1") != NULL, "as is a record without a birth time");
  if (tap_failed_)
    fputs(text, stdout);
}

/* files-flood-hides-host-change: 1,100 new files recorded first, then a
 * host file's change, a deletion and a protected path: the summary keeps
 * them (past its 1,000 entries a new file goes) and shows them first; the
 * agent's own file written again stays one of its new files. */
static void test_summary_flood_ranks(void)
{
  struct audit_summary *s = audit_summary_new();
  static const char *const tail[] = {
      "{\"kind\":\"file\",\"path\":\"/w/new5\",\"ops\":[\"modify\"]}",
      "{\"kind\":\"file\",\"path\":\"/w/host.txt\",\"ops\":[\"modify\"]}",
      "{\"kind\":\"file\",\"path\":\"/w/gone.txt\",\"ops\":[\"delete\"]}",
      "{\"kind\":\"file\",\"path\":\"/w/.envrc\",\"ops\":[\"create\"],\"protected\":true}",
  };
  cleanup_free char *text = NULL;
  const char *more, *prot, *host, *gone;

  for (int i = 0; i < 1100; i++) {
    cleanup_free char *line =
        xfmt("{\"id\":\"c1\",\"kind\":\"file\",\"path\":\"/w/new%d\",\"ops\":[\"create\"]}", i);
    audit_summary_add(s, line, strlen(line));
  }
  for (size_t i = 0; i < ARRAY_SIZE(tail); i++)
    audit_summary_add(s, tail[i], strlen(tail[i]));
  text = audit_summary_render(s);
  audit_summary_free(s);
  more = strstr(text, "  ... and ");
  prot = strstr(text, "  /w/.envrc (create) [protected path]\n");
  host = strstr(text, "  /w/host.txt (modify)\n");
  gone = strstr(text, "  /w/gone.txt (delete)\n");
  tap_ok(prot && host && gone && more && prot < host && host < gone && gone < more,
         "a protected path, then host files changed or deleted, before the new files and the rest");
  tap_ok(strstr(text, "files changed (1000+):") != NULL &&
             strstr(text, "  ... and 980 more (files it made)\n") != NULL,
         "the new files dropped for them are counted");
  tap_ok(strstr(text, "/w/new5 (") == NULL || strstr(text, "/w/new5 (") > more ||
             strstr(text, "/w/new5 (") > host,
         "the agent's own file written again is not a file that was there");
  if (tap_failed_)
    fputs(text, stdout);
}

/* hosts-flood-hides-host: 30 refused lookups of decoys first, then the
 * host that mattered, and 250 more: the summary showed 20 hosts of a list,
 * so the 31st was below "... and N more"; now up to 200 of each. */
static void test_summary_hosts_flood(void)
{
  struct audit_summary *s = audit_summary_new();
  cleanup_free char *text = NULL;

  for (int i = 0; i < 281; i++) {
    cleanup_free char *line =
        i == 30 ? xstrdup("{\"id\":\"c1\",\"kind\":\"dns\",\"name\":\"exfil.example\","
                          "\"verdict\":\"denied\"}")
                : xfmt("{\"id\":\"c1\",\"kind\":\"dns\",\"name\":\"decoy%d.example\","
                       "\"verdict\":\"denied\"}",
                       i);
    audit_summary_add(s, line, strlen(line));
  }
  text = audit_summary_render(s);
  audit_summary_free(s);
  tap_ok(strstr(text, "  exfil.example (") != NULL, "the host after 30 decoys is shown");
  tap_ok(strstr(text, "  ... and 81 more\n") != NULL, "past 200, the rest is counted");
  if (tap_failed_)
    fputs(text, stdout);
}

int main(void)
{
  test_sha256();
  test_jbuf();
  test_chain();
  test_rotation();
  test_concurrent();
  test_summary_gaps();
  test_verify_losses();
  test_summary_losses();
  test_monitor_gone();
  test_read();
  test_summary_net();
  test_summary_loader();
  test_summary_links_by_inode();
  test_summary_inode_reused();
  test_summary_flood_ranks();
  test_summary_hosts_flood();
  return tap_done();
}
