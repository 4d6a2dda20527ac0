/* test_datadir.c - the host config parser (datadir/hostconf.c) and the
 * store keys of engine roots (datadir/layout.c). */
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "datadir/datadir.h"
#include "datadir/hostconf.h"
#include "tests/unit/tap.h"

struct conf_case {
  const char *text;
  const char *msg; /* NULL: accepted; else a substring of the error */
};

static const struct conf_case conf_cases[] = {
    {"", NULL},
    {"# only a comment\n\n   \n\t# indented\n", NULL},
    {"data-dir = /srv/agentrt\n", NULL},
    {"data-dir=/srv/agentrt", NULL},
    {"  min-free   =  1g  \r\n", NULL},
    {"workspaces.max-total-size = 0\nworkspaces.max-age = 0\n", NULL},
    {"audit.max-age = 2w\nsweep-interval = 5m\n", NULL},
    {"colour = blue\n", "t.conf:1: unknown key `colour`"},
    {"# x\nmin-free = lots\n", "t.conf:2: min-free: expected a size"},
    {"audit.max-age = 3 days\n", "t.conf:1: audit.max-age: expected a duration"},
    {"audit.max-age = -1\n", "expected a duration"},
    {"min-free = 99999999999999999999\n", "expected a size"},
    {"min-free = 16777216t\n", "expected a size"},
    {"data-dir = relative\n", "expected an absolute path"},
    {"data-dir = /a/../etc\n", "expected an absolute path"},
    {"data-dir = /a,b\n", "expected an absolute path"},
    {"data-dir = /a/..\n", "expected an absolute path"},
    {"data-dir = /a:b\n", "expected an absolute path"},
    {"no equals here\n", "t.conf:1: expected `key = value`"},
    {"min-free =\n", "t.conf:1: `min-free` has no value"},
    {"min-free = 1m\nmin-free = 2m\n", "t.conf:2: `min-free` given twice"},
    {"= 5\n", "unknown key ``"},
    {"min-free = 1m\x01\n", "control character"},
};

static void test_conf_cases(void)
{
  for (size_t i = 0; i < ARRAY_SIZE(conf_cases); i++) {
    const struct conf_case *tc = &conf_cases[i];
    struct hostconf c;
    struct error err = {0};
    int r;
    hostconf_defaults(&c);
    r = hostconf_parse(tc->text, strlen(tc->text), "t.conf", &c, &err);
    if (tc->msg == NULL)
      tap_ok(r == 0, "conf case %zu accepted (%s)", i, err.msg);
    else
      tap_ok(r < 0 && strstr(err.msg, tc->msg) != NULL && strchr(err.msg, '\n') == NULL,
             "conf case %zu refused with one line: %s", i, err.msg);
    hostconf_free(&c);
  }
}

static void test_conf_values(void)
{
  static const char text[] = "data-dir = /srv/a\nworkspaces.max-total-size = 512m\n"
                             "workspaces.max-age = 2h\naudit.max-total-size = 1k\n"
                             "audit.max-age = 1d\nmin-free = 0\nsweep-interval = 0\n";
  struct hostconf c;
  struct error err = {0};

  hostconf_defaults(&c);
  tap_ok(c.ws_max_total == HOSTCONF_DEFAULT_WS_MAX_TOTAL &&
             c.min_free == HOSTCONF_DEFAULT_MIN_FREE && c.sweep_interval == 60 &&
             c.data_dir == NULL,
         "defaults");
  tap_ok(hostconf_parse(text, strlen(text), "t", &c, &err) == 0, "all keys parse (%s)", err.msg);
  tap_ok(streq(c.data_dir, "/srv/a") && c.ws_max_total == 512u << 20 && c.ws_max_age == 7200 &&
             c.audit_max_total == 1024 && c.audit_max_age == 86400 && c.min_free == 0 &&
             c.sweep_interval == 0,
         "all values as written");
  hostconf_free(&c);
  {
    char *big = xmalloc(HOSTCONF_MAX_LINE + 16);
    memset(big, '#', HOSTCONF_MAX_LINE + 8);
    big[HOSTCONF_MAX_LINE + 8] = '\0';
    hostconf_defaults(&c);
    tap_ok(hostconf_parse(big, strlen(big), "t", &c, &err) < 0 &&
               strstr(err.msg, "t:1: line longer"),
           "an overlong line is refused (%s)", err.msg);
    free(big);
  }
  tap_ok(hostconf_parse("a\0b", 3, "t", &c, &err) < 0 && strstr(err.msg, "NUL"),
         "a NUL byte is refused");
  tap_ok(hostconf_load("/nonexistent/agentrt.conf", &c, &err) == 0 &&
             c.audit_max_age == HOSTCONF_DEFAULT_AUDIT_MAX_AGE,
         "a missing file means the defaults");
  tap_ok(hostconf_load("/", &c, &err) < 0 && strstr(err.msg, "not a regular file"),
         "a directory is refused (%s)", err.msg);
}

static void test_keys(void)
{
  static const struct {
    const char *root, *key;
  } cases[] = {
      {"/run/docker/runtime-agentrt/moby", "run+docker+runtime-agentrt+moby"},
      {"/run/containerd/runc/k8s.io", "run+containerd+runc+k8s.io"},
      {"/run//agentrt/", "run+agentrt"},
      {"/", "+"},
      {"/a b/+x%", "a%20b+%2Bx%25"},
      {"/a+b", "a%2Bb"},
      {"/a/b", "a+b"},
  };
  for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
    cleanup_free char *k = datadir_key(cases[i].root);
    tap_ok(streq(k, cases[i].key), "key of `%s` is `%s` (got `%s`)", cases[i].root, cases[i].key,
           k);
  }
  {
    char long_root[400];
    memset(long_root, 'r', sizeof long_root - 1);
    long_root[0] = '/';
    long_root[sizeof long_root - 1] = '\0';
    cleanup_free char *k = datadir_key(long_root);
    tap_ok(str_has_prefix(k, "h-") && strlen(k) == 2 + 64, "a long root gets a hashed key");
  }
  {
    cleanup_free char *a = datadir_key("/."), *b = datadir_key("/..");
    tap_ok(str_has_prefix(a, "h-") && str_has_prefix(b, "h-") && !streq(a, b),
           "`.` and `..` never become directory names");
  }
  {
    cleanup_free char *s = datadir_store("/var/lib/agentrt", "/run/agentrt");
    tap_ok(streq(s, "/var/lib/agentrt/roots/run+agentrt"), "store path (%s)", s);
  }
}

int main(void)
{
  test_conf_cases();
  test_conf_values();
  test_keys();
  return tap_done();
}
