/* test_user_signal.c - parse_user_spec (CVE-2026-30892)
 * and parse_signal tables. */
#include <signal.h>
#include <string.h>

#include "container/process.h"
#include "tests/unit/tap.h"

struct user_case {
  const char *in;
  bool ok;
  uint32_t uid, gid;
  bool has_gid;
  const char *msg; /* substring of the error */
};

static const struct user_case user_cases[] = {
    {"1000", true, 1000, 0, false, NULL},
    {"1000:1000", true, 1000, 1000, true, NULL},
    {"0", true, 0, 0, false, NULL},
    {"0:0", true, 0, 0, true, NULL},
    {"4294967294:4294967294", true, 4294967294u, 4294967294u, true, NULL},
    {"1000:", false, 0, 0, false, "empty gid"},
    {":1000", false, 0, 0, false, "empty uid"},
    {":", false, 0, 0, false, "empty uid"},
    {"", false, 0, 0, false, "empty"},
    {"1000:1000:1", false, 0, 0, false, "expected uid[:gid]"},
    {"-1", false, 0, 0, false, "not a decimal number"},
    {"+1", false, 0, 0, false, "not a decimal number"},
    {"1000:-1", false, 0, 0, false, "gid is not a decimal number"},
    {"4294967295", false, 0, 0, false, "invalid id"},
    {"1:4294967295", false, 0, 0, false, "gid 4294967295"},
    {"4294967296", false, 0, 0, false, "out of range"},
    {"99999999999", false, 0, 0, false, "out of range"},
    {"999999999999999999999999999999999", false, 0, 0, false, "out of range"},
    {"root", false, 0, 0, false, "names are not supported"},
    {"1000:wheel", false, 0, 0, false, "names are not supported"},
    {" 1000", false, 0, 0, false, "not a decimal number"},
    {"1000 ", false, 0, 0, false, "not a decimal number"},
    {"1000\t", false, 0, 0, false, "not a decimal number"},
    {"0x10", false, 0, 0, false, "not a decimal number"},
    {"1e3", false, 0, 0, false, "not a decimal number"},
};

static void test_users(void)
{
  for (size_t i = 0; i < sizeof user_cases / sizeof user_cases[0]; i++) {
    const struct user_case *c = &user_cases[i];
    struct error err = {0};
    uint32_t uid = 77, gid = 77;
    bool has_gid = false;
    int r = parse_user_spec(c->in, &uid, &gid, &has_gid, &err);

    if (c->ok)
      tap_ok(r == 0 && uid == c->uid && gid == c->gid && has_gid == c->has_gid,
             "user `%s` -> %u:%u (has_gid %d): %s", c->in, uid, gid, has_gid, err.msg);
    else
      tap_ok(r < 0 && strstr(err.msg, c->msg) != NULL && uid == 77 && gid == 77,
             "user `%s` rejected: %s", c->in, err.msg);
  }
}

struct sig_case {
  const char *in;
  int sig; /* 0 = must fail */
};

static void test_signals(void)
{
  const struct sig_case cases[] = {
      {"KILL", SIGKILL},
      {"SIGKILL", SIGKILL},
      {"kill", SIGKILL},
      {"sigterm", SIGTERM},
      {"9", 9},
      {"15", 15},
      {"1", 1},
      {"64", 64},
      {"HUP", SIGHUP},
      {"SIGWINCH", SIGWINCH},
      {"USR1", SIGUSR1},
      {"RTMIN", SIGRTMIN},
      {"SIGRTMIN+3", SIGRTMIN + 3},
      {"RTMIN+3", SIGRTMIN + 3},
      {"RTMAX", SIGRTMAX},
      {"RTMAX-1", SIGRTMAX - 1},
      {"0", 0},
      {"65", 0},
      {"-9", 0},
      {"+9", 9},
      {"+64", 64},
      {"+", 0},
      {"++9", 0},
      {"+-9", 0},
      {"+KILL", 0},
      {"+0", 0},
      {" 9", 0},
      {"9 ", 0},
      {"", 0},
      {"SIG", 0},
      {"SIGSIGKILL", 0},
      {"NOPE", 0},
      {"RTMIN+", 0},
      {"RTMIN-1", 0},
      {"RTMIN+31", 0},
      {"RTMAX+1", 0},
      {"RTMIN+-1", 0},
      {"99999999999999999999", 0},
      {"KILLKILLKILLKILLKILLKILLKILLKILLKILL", 0},
  };

  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    struct error err = {0};
    int sig = -1;
    int r = parse_signal(cases[i].in, &sig, &err);

    if (cases[i].sig)
      tap_ok(r == 0 && sig == cases[i].sig, "signal `%s` -> %d (%s)", cases[i].in, sig, err.msg);
    else
      tap_ok(r < 0 && strstr(err.msg, "invalid signal `") != NULL && sig == -1,
             "signal `%s` rejected: %s", cases[i].in, err.msg);
  }
}

int main(void)
{
  test_users();
  test_signals();
  return tap_done();
}
