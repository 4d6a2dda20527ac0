/* test_procfs.c - /proc/<pid>/status as the monitor reads it (os/procfs.c:
 * procfs_parse_status): names, states and ids, from the kernel's own text and
 * from text a process could try to shape through its name. */
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "os/procfs.h"
#include "tests/unit/tap.h"

static const char sample[] = "Name:\ttry-syscall\n"
                             "Umask:\t0022\n"
                             "State:\tZ (zombie)\n"
                             "Tgid:\t4242\n"
                             "Ngid:\t0\n"
                             "Pid:\t4242\n"
                             "PPid:\t4200\n"
                             "TracerPid:\t0\n"
                             "Uid:\t1000\t1001\t1002\t1003\n"
                             "Gid:\t0\t0\t0\t0\n"
                             "NStgid:\t4242\t17\n"
                             "NSpid:\t4242\t17\n"
                             "NSpgid:\t4200\t1\n";

static void test_sample(void)
{
  struct procfs_status st;

  procfs_parse_status(sample, &st);
  tap_ok(strcmp(st.comm, "try-syscall") == 0, "Name (%s)", st.comm);
  tap_ok(st.state == 'Z', "State of a zombie (%c)", st.state ? st.state : '0');
  tap_ok(st.cpid == 17, "cpid: the last NSpid (%lld)", st.cpid);
  tap_ok(st.ctgid == 17, "ctgid: the last NStgid (%lld)", st.ctgid);
  tap_ok(st.ppid == 4200, "PPid (%lld)", st.ppid);
  tap_ok(st.uid == 1000, "Uid: the real one (%lld)", st.uid);
}

/* a thread's status: its own ids (Pid, NSpid) and its thread group's (Tgid,
 * NStgid), which a thread's exec takes (thread-exec-pid) */
static void test_thread(void)
{
  struct procfs_status st;

  procfs_parse_status("Name:\tworker\nTgid:\t4242\nPid:\t4250\nPPid:\t4200\n"
                      "NStgid:\t4242\t17\nNSpid:\t4250\t19\n",
                      &st);
  tap_ok(st.tgid == 4242 && st.ctgid == 17,
         "a thread: its group's Tgid and last NStgid (%lld, %lld)", st.tgid, st.ctgid);
  tap_ok(st.cpid == 19, "a thread: its own last NSpid (%lld)", st.cpid);
}

static void test_missing(void)
{
  struct procfs_status st;

  procfs_parse_status("", &st);
  tap_ok(st.comm[0] == '\0' && st.state == 0 && st.cpid == -1 && st.ppid == -1 && st.uid == -1,
         "empty text (a reaped process): no name, no state, ids -1");
  procfs_parse_status("Name:\tx\nSta", &st);
  tap_ok(strcmp(st.comm, "x") == 0 && st.state == 0 && st.ppid == -1,
         "text cut short: what is there, nothing else");
  procfs_parse_status("Name:\tx\nPPid:\t\nUid:\tabc\n", &st);
  tap_ok(st.ppid == -1 && st.uid == -1, "empty and non-numeric values are -1");
  procfs_parse_status("Name:\tx\nPPid:\t99999999999999999999999\n", &st);
  tap_ok(st.ppid == -1, "a number too large is -1, not a wrapped value");
  procfs_parse_status("XName:\tevil\nMyPPid:\t1\nName:\tgood\nPPid:\t7\n", &st);
  tap_ok(strcmp(st.comm, "good") == 0 && st.ppid == 7, "keys match whole line starts only");
}

static void test_names(void)
{
  struct procfs_status st;

  /* the kernel escapes a newline and a backslash in Name; nothing else */
  procfs_parse_status("Name:\ta\\nPPid:\t1\nState:\tR (running)\nPPid:\t55\n", &st);
  tap_ok(strcmp(st.comm, "a\nPPid:\t1") == 0 && st.ppid == 55,
         "a name holding an escaped newline and a fake PPid line stays one name");
  procfs_parse_status("Name:\tback\\\\slash\n", &st);
  tap_ok(strcmp(st.comm, "back\\slash") == 0, "an escaped backslash is one backslash (%s)",
         st.comm);
  procfs_parse_status("Name:\t\\\\n\n", &st);
  tap_ok(strcmp(st.comm, "\\n") == 0, "backslash then n is not a newline (%s)", st.comm);
  procfs_parse_status("Name:\t with  spaces \t\n", &st);
  tap_ok(strcmp(st.comm, " with  spaces \t") == 0, "spaces and a tab in a name are kept");
  procfs_parse_status("Name:\t0123456789abcdef0123456789abcdef0123456789\n", &st);
  tap_ok(strlen(st.comm) == sizeof st.comm - 1, "a name longer than comm is cut (%zu)",
         strlen(st.comm));
}

/* The kernel's text for this process, with a name that needs escaping. */
static void test_self(void)
{
  struct procfs_status st;
  struct error err = {0};
  char text[4096], old[32] = "";
  ssize_t n;

  prctl(PR_GET_NAME, old);
  prctl(PR_SET_NAME, "a\\b\nc");
  n = procfs_read("self/status", text, sizeof text, &err);
  prctl(PR_SET_NAME, old);
  if (!tap_ok(n > 0, "read self/status (%s)", n > 0 ? "ok" : err.msg))
    return;
  procfs_parse_status(text, &st);
  tap_ok(strcmp(st.comm, "a\\b\nc") == 0, "this process's name as set with prctl");
  tap_ok(st.state == 'R', "this process is running (%c)", st.state ? st.state : '0');
  tap_ok(st.ppid == getppid() && st.uid == getuid() && st.cpid == getpid(),
         "ppid, uid and cpid are getppid(), getuid() and getpid()");
}

int main(void)
{
  test_sample();
  test_thread();
  test_missing();
  test_names();
  test_self();
  return tap_done();
}
