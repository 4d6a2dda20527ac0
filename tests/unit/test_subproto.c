/* test_subproto.c - the pure parts of the sub-agent API (common/subproto.c):
 * a request's words and the narrowing rule for egress entries. */
#include <string.h>

#include "common/subproto.h"
#include "common/util.h"
#include "tests/unit/tap.h"

static bool covered(const char *entry, const char *p1, const char *p2)
{
  char *parent[] = {(char *)p1, (char *)p2, NULL};
  return subproto_allow_covered(entry, parent);
}

static void test_words(void)
{
  char **w = NULL;
  static const char ok[] = "run\0--name\0a\0--\0sh\0";

  tap_ok(subproto_split_words(ok, sizeof ok - 1, &w) == 0 && strv_len(w) == 5 &&
             strcmp(w[0], "run") == 0 && strcmp(w[4], "sh") == 0,
         "words: five NUL-ended words");
  strv_free(w);
  tap_ok(subproto_split_words("run", 3, &w) < 0 && w == NULL, "words: the last word not ended");
  tap_ok(subproto_split_words("", 0, &w) < 0, "words: empty");
  tap_ok(subproto_split_words("\0\0", 2, &w) == 0 && strv_len(w) == 2 && w[0][0] == '\0',
         "words: empty words are words (the verb check refuses them)");
  strv_free(w);
  {
    char many[2 * (SUBPROTO_MAX_WORDS + 1)];
    memset(many, 0, sizeof many);
    for (size_t i = 0; i < sizeof many; i += 2)
      many[i] = 'x';
    tap_ok(subproto_split_words(many, sizeof many, &w) < 0, "words: more than %u refused",
           SUBPROTO_MAX_WORDS);
    tap_ok(subproto_split_words(many, sizeof many - 2, &w) == 0 &&
               strv_len(w) == SUBPROTO_MAX_WORDS,
           "words: exactly %u accepted", SUBPROTO_MAX_WORDS);
    strv_free(w);
  }
}

static void test_allow(void)
{
  /* names */
  tap_ok(covered("pypi.org", "pypi.org", NULL), "allow: the same name");
  tap_ok(!covered("pypi.org.evil.test", "pypi.org", NULL), "allow: a longer name is not covered");
  tap_ok(!covered("evilpypi.org", "*.pypi.org", NULL), "allow: a suffix without the dot is not");
  tap_ok(covered("files.pypi.org", "*.pypi.org", NULL), "allow: a name below a wildcard");
  tap_ok(covered("*.a.pypi.org", "*.pypi.org", NULL), "allow: a narrower wildcard");
  tap_ok(covered("*.pypi.org", "*.pypi.org", NULL), "allow: the same wildcard");
  tap_ok(!covered("pypi.org", "*.pypi.org", NULL), "allow: a wildcard does not cover its base");
  tap_ok(!covered("*.pypi.org", "pypi.org", NULL), "allow: a wildcard is wider than a name");
  tap_ok(covered("PyPI.org.", "pypi.org", NULL), "allow: case and the final dot do not matter");
  tap_ok(!covered("pypi.org", "203.0.113.0/24", NULL), "allow: a name is not covered by a CIDR");
  /* ports and protocols */
  tap_ok(covered("pypi.org:443", "pypi.org", NULL), "allow: a port of an any-port name");
  tap_ok(!covered("pypi.org", "pypi.org:443", NULL), "allow: every port is wider than one");
  tap_ok(!covered("pypi.org:80", "pypi.org:443", NULL), "allow: another port");
  tap_ok(covered("203.0.113.5:8010-8020/tcp", "203.0.113.0/24:8000-8100", NULL),
         "allow: a range inside, tcp of any");
  tap_ok(!covered("203.0.113.5:8000-8200", "203.0.113.0/24:8000-8100", NULL),
         "allow: a range that sticks out");
  tap_ok(!covered("203.0.113.5:443", "203.0.113.0/24:443/tcp", NULL),
         "allow: tcp+udp is wider than tcp");
  /* CIDRs, both families */
  tap_ok(covered("203.0.113.128/25", "203.0.113.0/24", NULL), "allow: a narrower CIDR");
  tap_ok(covered("203.0.113.7", "203.0.113.0/24", NULL), "allow: an address inside");
  tap_ok(!covered("203.0.112.0/23", "203.0.113.0/24", NULL), "allow: a wider CIDR");
  tap_ok(!covered("198.51.100.1", "203.0.113.0/24", NULL), "allow: an address outside");
  tap_ok(covered("2001:db8:1::/48", "2001:db8::/32", NULL), "allow: v6 narrower");
  tap_ok(!covered("2001:db9::1", "2001:db8::/32", NULL), "allow: v6 outside");
  tap_ok(!covered("::ffff:203.0.113.7", "203.0.113.0/24", NULL),
         "allow: a v4-mapped v6 address is not the v4 CIDR's");
  tap_ok(covered("203.0.113.7", "198.51.100.0/24", "203.0.113.0/24"), "allow: any parent entry");
  tap_ok(covered("0.0.0.0/0", "0.0.0.0/0", NULL) && !covered("0.0.0.0/0", "0.0.0.0/1", NULL),
         "allow: /0");
  /* junk */
  tap_ok(!covered("", "pypi.org", NULL) && !covered("not a name", "pypi.org", NULL),
         "allow: an entry that does not parse is not covered");
  {
    char *none[] = {NULL};
    tap_ok(!subproto_allow_covered("pypi.org", none), "allow: an empty allowlist covers nothing");
  }
}

/* sub-signal-junk: only a plain decimal 1-64 is a signal */
static void test_signal(void)
{
  static const char *bad[] = {"",    "0",  "00",         "015",  "15x", " 15", "15 ", "+15",
                              "-15", "65", "4294967311", "15\n", "x",   "1.5", "0x9"};
  static const char *good[] = {"1", "9", "15", "19", "64"};
  static const int want[] = {1, 9, 15, 19, 64};

  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    tap_ok(subproto_parse_signal(bad[i], strlen(bad[i])) == -1, "signal: `%s` refused", bad[i]);
  tap_ok(subproto_parse_signal("15\0", 3) == -1, "signal: a NUL after the number refused");
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
    tap_ok(subproto_parse_signal(good[i], strlen(good[i])) == want[i], "signal: `%s` is %d",
           good[i], want[i]);
}

int main(void)
{
  test_words();
  test_allow();
  test_signal();
  return tap_done();
}
