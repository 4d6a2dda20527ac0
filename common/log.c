/* log.c - see log.h */
#include "common/log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"

static int g_fd = -1;
static bool g_json;
static bool g_debug;

int log_init(const char *path, bool json, bool debug)
{
  g_json = json;
  g_debug = debug;
  if (path == NULL || *path == '\0')
    return 0;
  g_fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  return g_fd < 0 ? -1 : 0;
}

bool log_debug_enabled(void)
{
  return g_debug;
}

int log_fd(void)
{
  return g_fd;
}

static const char *level_name(enum log_level l)
{
  switch (l) {
  case LOG_ERROR:
    return "error";
  case LOG_WARNING:
    return "warning";
  case LOG_INFO:
    return "info";
  default:
    return "debug";
  }
}

/* RFC 3339 with nanoseconds, UTC (what Go's time.Parse(RFC3339) accepts). */
static void now_rfc3339(char *buf, size_t n)
{
  char t[RFC3339_NANO_SIZE];
  size_t len;

  rfc3339_now(t, NULL);
  len = strnlen(t, n - 1);
  memcpy(buf, t, len);
  buf[len] = '\0';
}

/* JSON string escaping into a bounded buffer. */
static size_t json_escape(char *out, size_t n, const char *s)
{
  size_t o = 0;
  for (; *s && o + 7 < n; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') {
      out[o++] = '\\';
      out[o++] = (char)c;
    } else if (c < 0x20) {
      o += (size_t)snprintf(out + o, n - o, "\\u%04x", c);
    } else {
      out[o++] = (char)c;
    }
  }
  out[o] = '\0';
  return o;
}

static void write_record(enum log_level level, const char *msg)
{
  char t[64], esc[4096], line[4608];
  int n;
  ssize_t r;

  if (g_fd < 0)
    return;
  now_rfc3339(t, sizeof t);
  if (g_json) {
    json_escape(esc, sizeof esc, msg);
    n = snprintf(line, sizeof line, "{\"level\":\"%s\",\"msg\":\"%s\",\"time\":\"%s\"}\n",
                 level_name(level), esc, t);
  } else {
    n = snprintf(line, sizeof line, "%s %s: %s\n", t, level_name(level), msg);
  }
  if (n < 0)
    return;
  if ((size_t)n >= sizeof line)
    n = sizeof line - 1;
  r = write(g_fd, line, (size_t)n);
  (void)r;
}

void log_msg(enum log_level level, const char *fmt, ...)
{
  char msg[2048];
  va_list ap;
  int saved = errno;

  if (level == LOG_DEBUG && !g_debug)
    return;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  write_record(level, msg);
  /* Without a log file, warnings (and debug when asked) go to stderr. */
  if (g_fd < 0 && level != LOG_INFO)
    dprintf(2, "agentrt: %s%s\n", level == LOG_WARNING ? "warning: " : "", msg);
  errno = saved;
}

void log_fatal_error(const char *msg)
{
  write_record(LOG_ERROR, msg);
  dprintf(2, "agentrt: %s\n", msg);
}
