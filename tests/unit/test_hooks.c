/* test_hooks.c - hooks_run(): argv verbatim, env = hook.env (the runtime's
 * own without one; never more than that), cwd the given dir, state JSON on stdin, stdout to the
 * runtime's stderr, exit status, timeout, order, a hook that ignores a large stdin. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"
#include "container/process.h"
#include "tests/unit/tap.h"

static char tmpdir[] = "/tmp/agentrt-test-hooks-XXXXXX";

static char *slurp(const char *path)
{
  static char buf[65536];
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);

  buf[n > 0 ? n : 0] = '\0';
  if (fd >= 0)
    close(fd);
  return buf;
}

static void test_argv_env_stdin(void)
{
  cleanup_free char *out = xfmt("%s/out", tmpdir);
  cleanup_free char *script =
      xfmt("cat > %s; echo; tr '\\0' ' ' < /proc/$$/cmdline >> %s; echo >> %s; env >> %s", out, out,
           out, out);
  char *args[] = {"hook-argv0", "-c", script, "zero", NULL};
  char *env[] = {"FOO=bar", "OCI_HOOK=1", NULL};
  struct oci_hook h = {
      .path = "/bin/sh", .args = args, .env = env, .has_timeout = true, .timeout = 5};
  struct error err = {0};
  const char *state = "{\"ociVersion\":\"1.2.0\",\"id\":\"c1\",\"status\":\"creating\"}";
  char *got;
  int r;

  setenv("AGENTRT_CANARY", "leaked", 1);
  r = hooks_run(&h, 1, "prestart", NULL, state, &err);
  got = slurp(out);
  tap_ok(r == 0, "hook ran: %s", err.msg);
  tap_ok(str_has_prefix(got, state), "state JSON on stdin");
  tap_ok(strstr(got, "hook-argv0 -c cat > ") != NULL && strstr(got, " zero \n") != NULL,
         "argv verbatim (argv[0] from args)");
  tap_ok(strstr(got, "FOO=bar\n") && strstr(got, "OCI_HOOK=1\n"), "hook env present");
  tap_ok(strstr(got, "AGENTRT_CANARY") == NULL && strstr(got, "HOME=") == NULL,
         "runtime environment does not reach the hook");
  unsetenv("AGENTRT_CANARY");
}

static void test_no_args_no_env(void)
{
  cleanup_free char *out = xfmt("%s/out2", tmpdir);
  cleanup_free char *path = xfmt("%s/hook.sh", tmpdir);
  cleanup_free char *body = xfmt("#!/bin/sh\necho \"$# $AGENTRT_INHERITED $(pwd)\" > %s\n", out);
  cleanup_free char *want = xfmt("0 yes %s\n", tmpdir);
  struct oci_hook h = {.path = path};
  struct error err = {0};
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);

  (void)!write(fd, body, strlen(body));
  close(fd);
  setenv("AGENTRT_INHERITED", "yes", 1);
  tap_ok(hooks_run(&h, 1, "poststop", tmpdir, NULL, &err) == 0 && streq(slurp(out), want),
         "no args -> argv [path]; no env -> the runtime's environment; cwd = dir (%s, %s)",
         slurp(out), err.msg);
  unsetenv("AGENTRT_INHERITED");
}

static void test_failures(void)
{
  char *fail[] = {"sh", "-c", "exit 3", NULL};
  char *sleepy[] = {"sh", "-c", "exec sleep 10", NULL};
  char *selfkill[] = {"sh", "-c", "kill -TERM $$", NULL};
  struct oci_hook h = {.path = "/bin/sh", .args = fail};
  struct error err = {0};
  time_t t0;
  int r;

  r = hooks_run(&h, 1, "createRuntime", NULL, "{}", &err);
  tap_ok(r < 0 && streq(err.msg, "error running createRuntime hook #0: `/bin/sh`: exit status 3"),
         "%s", err.msg);

  h.args = selfkill;
  r = hooks_run(&h, 1, "poststart", NULL, "{}", &err);
  tap_ok(r < 0 &&
             streq(err.msg,
                   "error running poststart hook #0: `/bin/sh`: killed by signal 15 (terminated)"),
         "%s", err.msg);

  h.args = sleepy;
  h.has_timeout = true;
  h.timeout = 1;
  t0 = time(NULL);
  r = hooks_run(&h, 1, "prestart", NULL, "{}", &err);
  tap_ok(r < 0 &&
             streq(err.msg, "error running prestart hook #0: `/bin/sh`: timed out after 1 s") &&
             time(NULL) - t0 < 4,
         "%s (%ld s)", err.msg, (long)(time(NULL) - t0));

  h.path = "/nonexistent-agentrt-hook";
  h.args = NULL;
  r = hooks_run(&h, 1, "createContainer", NULL, "{}", &err);
  tap_ok(r < 0 &&
             strstr(err.msg, "error running createContainer hook #0: `/nonexistent-agentrt-hook`: "
                             "exec: No such file or directory"),
         "%s", err.msg);
  h.path = "relative/hook";
  r = hooks_run(&h, 1, "prestart", NULL, "{}", &err);
  tap_ok(r < 0 && strstr(err.msg, "path must be absolute"), "%s", err.msg);
}

static void test_order_and_big_stdin(void)
{
  cleanup_free char *out = xfmt("%s/order", tmpdir);
  cleanup_free char *s1 = xfmt("echo one >> %s", out), *s3 = xfmt("echo three >> %s", out);
  char *a1[] = {"sh", "-c", s1, NULL}, *a2[] = {"sh", "-c", "exit 1", NULL};
  cleanup_free char *count = xfmt("wc -c >> %s", out);
  char *a3[] = {"sh", "-c", s3, NULL}, *atrue[] = {"true", NULL};
  char *acount[] = {"sh", "-c", count, NULL};
  struct oci_hook hooks[] = {{.path = "/bin/sh", .args = a1},
                             {.path = "/bin/sh", .args = a2},
                             {.path = "/bin/sh", .args = a3}};
  struct oci_hook ignorer = {.path = "/bin/true", .args = atrue, .has_timeout = true, .timeout = 5};
  struct error err = {0};
  size_t big = 4 << 20;
  cleanup_free char *state = xmalloc(big + 1);
  int r;

  r = hooks_run(hooks, 3, "prestart", NULL, "{}", &err);
  tap_ok(r < 0 && streq(slurp(out), "one\n") &&
             str_has_prefix(err.msg, "error running prestart hook #1: "),
         "hooks run in order, stop at the first failure, named by its index (%s)", err.msg);
  memset(state, 'x', big);
  state[big] = '\0';
  error_clear(&err);
  r = hooks_run(&ignorer, 1, "prestart", NULL, state, &err);
  tap_ok(r == 0, "a hook that ignores a 4 MiB stdin: no SIGPIPE, no hang (%s)", err.msg);
  ignorer.path = "/bin/sh";
  ignorer.args = acount;
  r = hooks_run(&ignorer, 1, "prestart", NULL, state, &err);
  tap_ok(r == 0 && streq(slurp(out), "one\n4194304\n"), "a hook reads all of a 4 MiB stdin (%s)",
         err.msg);
}

static void test_stdout_to_stderr(void)
{
  cleanup_free char *out = xfmt("%s/stderr", tmpdir);
  char *args[] = {"sh", "-c", "echo to-stdout; echo to-stderr >&2", NULL};
  struct oci_hook h = {.path = "/bin/sh", .args = args};
  struct error err = {0};
  int saved = dup(2), fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

  dup2(fd, 2);
  hooks_run(&h, 1, "poststart", NULL, "{}", &err);
  dup2(saved, 2);
  close(saved);
  close(fd);
  tap_ok(streq(slurp(out), "to-stdout\nto-stderr\n"), "hook stdout and stderr go to stderr");
}

/* A runtime with SIGCHLD ignored gets no exit status: an error, no hang. */
static void test_sigchld_ignored(void)
{
  char *args[] = {"true", NULL};
  struct oci_hook h = {.path = "/bin/true", .args = args, .has_timeout = true, .timeout = 5};
  struct error err = {0};
  struct sigaction ign = {.sa_handler = SIG_IGN}, old;
  int r;

  sigaction(SIGCHLD, &ign, &old);
  r = hooks_run(&h, 1, "poststop", NULL, "{}", &err);
  sigaction(SIGCHLD, &old, NULL);
  tap_ok(r < 0 && strstr(err.msg, "poststop hook #0: `/bin/true`: wait") != NULL, "%s", err.msg);
}

int main(void)
{
  alarm(60);
  if (mkdtemp(tmpdir) == NULL) {
    perror("mkdtemp");
    return 1;
  }
  test_argv_env_stdin();
  test_no_args_no_env();
  test_failures();
  test_order_and_big_stdin();
  test_stdout_to_stderr();
  test_sigchld_ignored();
  {
    cleanup_free char *cmd = xfmt("rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
      tap_ok(false, "cleanup");
  }
  return tap_done();
}
