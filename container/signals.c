/* signals.c - signal names and numbers as `kill` accepts them.
 *
 * Like runc: a decimal number 1..SIGRTMAX (a leading `+` allowed), or a name with or
 * without the "SIG" prefix in any case ("KILL", "SIGKILL", "kill"), including
 * the real-time forms RTMIN, RTMIN+n, RTMAX-n, RTMAX.
 */
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <strings.h>

#include "common/util.h"
#include "container/process.h"

static const struct {
  const char *name;
  int sig;
} signal_names[] = {
    {"HUP", SIGHUP},       {"INT", SIGINT},     {"QUIT", SIGQUIT}, {"ILL", SIGILL},
    {"TRAP", SIGTRAP},     {"ABRT", SIGABRT},   {"IOT", SIGIOT},   {"BUS", SIGBUS},
    {"FPE", SIGFPE},       {"KILL", SIGKILL},   {"USR1", SIGUSR1}, {"SEGV", SIGSEGV},
    {"USR2", SIGUSR2},     {"PIPE", SIGPIPE},   {"ALRM", SIGALRM}, {"TERM", SIGTERM},
    {"STKFLT", SIGSTKFLT}, {"CHLD", SIGCHLD},   {"CLD", SIGCHLD},  {"CONT", SIGCONT},
    {"STOP", SIGSTOP},     {"TSTP", SIGTSTP},   {"TTIN", SIGTTIN}, {"TTOU", SIGTTOU},
    {"URG", SIGURG},       {"XCPU", SIGXCPU},   {"XFSZ", SIGXFSZ}, {"VTALRM", SIGVTALRM},
    {"PROF", SIGPROF},     {"WINCH", SIGWINCH}, {"IO", SIGIO},     {"POLL", SIGPOLL},
    {"PWR", SIGPWR},       {"SYS", SIGSYS},
};

/* "RTMIN", "RTMIN+n", "RTMAX", "RTMAX-n" (already upper-cased, no SIG). */
static int parse_realtime(const char *s, int *ret)
{
  const char *rest;
  int base, off = 0, sign;

  if (str_has_prefix(s, "RTMIN")) {
    base = SIGRTMIN;
    sign = 1;
  } else if (str_has_prefix(s, "RTMAX")) {
    base = SIGRTMAX;
    sign = -1;
  } else {
    return -1;
  }
  rest = s + 5;
  if (*rest != '\0') {
    if (*rest != (sign > 0 ? '+' : '-') || rest[1] < '0' || rest[1] > '9' ||
        parse_int(rest + 1, &off) < 0)
      return -1;
  }
  off = base + sign * off;
  if (off < SIGRTMIN || off > SIGRTMAX)
    return -1;
  *ret = off;
  return 0;
}

int parse_signal(const char *s, int *ret, struct error *err)
{
  char up[32];
  const char *name, *num;
  int n;

  if (s == NULL || *s == '\0')
    return error_set(err, 0, "invalid signal ``");
  /* a number, with an optional `+` as Go's strconv.Atoi (runc's) takes it */
  num = s[0] == '+' ? s + 1 : s;
  if (num[0] >= '0' && num[0] <= '9') {
    if (parse_int(num, &n) < 0 || n < 1 || n > SIGRTMAX)
      return error_set(err, 0, "invalid signal `%s`", s);
    *ret = n;
    return 0;
  }
  if (strlen(s) >= sizeof up)
    return error_set(err, 0, "invalid signal `%.40s...`", s);
  for (n = 0; s[n]; n++)
    up[n] = (char)toupper((unsigned char)s[n]);
  up[n] = '\0';
  name = str_has_prefix(up, "SIG") ? up + 3 : up;
  for (size_t i = 0; i < ARRAY_SIZE(signal_names); i++) {
    if (strcmp(name, signal_names[i].name) == 0) {
      *ret = signal_names[i].sig;
      return 0;
    }
  }
  if (parse_realtime(name, ret) == 0)
    return 0;
  return error_set(err, 0, "invalid signal `%s`", s);
}
