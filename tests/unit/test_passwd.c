/* test_passwd.c - os/passwd.c: a home from passwd(5) text, by name or uid,
 * on well-formed and broken lines. */
#include <string.h>

#include "common/util.h"
#include "os/passwd.h"
#include "tests/unit/tap.h"

static bool is(char *got, const char *want)
{
  bool ok = got == NULL ? want == NULL : want != NULL && strcmp(got, want) == 0;
  free(got);
  return ok;
}

int main(void)
{
  static const char pw[] = "root:x:0:0:root:/root:/bin/bash\n"
                           "short:x:5\n"
                           "rel:x:7:7::home/rel:/bin/sh\n"
                           "rel:x:8:8::/home/rel8:/bin/sh\n"
                           "neg:x:-1:0::/neg:/bin/sh\n"
                           "big:x:99999999999999999999999:0::/big:/bin/sh\n"
                           "alice:x:1000:1000:Alice,,,:/home/alice:/bin/bash\n"
                           "alice2:x:1001:1001::/home/alice2\n"
                           "noshell:x:1002:1002::/home/noshell";

  tap_ok(is(passwd_home(pw, strlen(pw), NULL, 0), "/root"), "by uid: root");
  tap_ok(is(passwd_home(pw, strlen(pw), "alice", 0), "/home/alice"), "by name: alice, not alice2");
  tap_ok(is(passwd_home(pw, strlen(pw), "alice2", 0), "/home/alice2"), "a line without a shell");
  tap_ok(is(passwd_home(pw, strlen(pw), NULL, 1002), "/home/noshell"),
         "the last line without a newline and a shell");
  tap_ok(is(passwd_home(pw, strlen(pw), "rel", 0), "/home/rel8"),
         "a relative home is skipped for the next entry of the name");
  tap_ok(is(passwd_home(pw, strlen(pw), NULL, 5), NULL), "a short line is no entry");
  tap_ok(is(passwd_home(pw, strlen(pw), NULL, (uid_t)-1), NULL),
         "a negative or too large uid matches nothing");
  tap_ok(is(passwd_home(pw, strlen(pw), "ali", 0), NULL), "a name's prefix is not the name");
  tap_ok(is(passwd_home(pw, 20, "alice", 0), NULL), "only len bytes are read");
  tap_ok(is(passwd_home("", 0, NULL, 0), NULL), "empty text");
  tap_ok(is(passwd_name(pw, strlen(pw), 0), "root"), "name by uid: root");
  tap_ok(is(passwd_name(pw, strlen(pw), 1001), "alice2"), "name by uid: alice2");
  tap_ok(is(passwd_name(pw, strlen(pw), 5), NULL), "name: a short line is no entry");
  tap_ok(is(passwd_name(pw, strlen(pw), 4242), NULL), "name: no such uid");
  tap_ok(is(passwd_home(":::::::\n:::::/x\n", 16, "", 0), "/x"), "empty fields, an empty name");
  tap_ok(is(passwd_home_file("/nonexistent/passwd", "root", 0), NULL), "no file");
  tap_ok(is(passwd_home_file("/dev/null", "root", 0), NULL), "not a regular file");
  return tap_done();
}
