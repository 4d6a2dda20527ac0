/* log.c - see log.h */
#include "common/log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
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

/* Length of the valid UTF-8 sequence at s, 0 when it is not one; *cp its
 * code point. */
static size_t utf8_at(const unsigned char *s, uint32_t *cp)
{
  size_t len = s[0] < 0x80             ? 1
               : (s[0] & 0xe0) == 0xc0 ? 2
               : (s[0] & 0xf0) == 0xe0 ? 3
               : (s[0] & 0xf8) == 0xf0 ? 4
                                       : 0;
  uint32_t c = len == 1 ? s[0] : len == 2 ? s[0] & 0x1fu : len == 3 ? s[0] & 0x0fu : s[0] & 0x07u;

  for (size_t i = 1; i < len; i++) {
    if ((s[i] & 0xc0) != 0x80)
      return 0;
    c = c << 6 | (s[i] & 0x3fu);
  }
  if (len == 0 || (len == 2 && c < 0x80) || (len == 3 && c < 0x800) || (len == 4 && c < 0x10000) ||
      (c >= 0xd800 && c <= 0xdfff) || c > 0x10ffff)
    return 0;
  *cp = c;
  return len;
}

/* Does the terminal act on code point c instead of showing it: a C0 or C1
 * control, DEL, a bidirectional mark, override or isolate, a zero-width
 * character or a line separator? */
static bool terminal_acts_on(uint32_t c)
{
  return c < 0x20 || (c >= 0x7f && c <= 0x9f) || c == 0x061c || (c >= 0x200b && c <= 0x200f) ||
         (c >= 0x2028 && c <= 0x202e) || (c >= 0x2060 && c <= 0x2064) ||
         (c >= 0x2066 && c <= 0x2069) || c == 0xfeff;
}

/* JSON string escaping into a bounded buffer, as audit/jbuf.c's jb_quote: a
 * record on stderr reaches a terminal, and a file's is read by an engine, so
 * what a terminal acts on is \uXXXX and a byte that is not UTF-8 is a lone
 * surrogate U+DC80..U+DCFF, never raw (terminal-inject-json-log). */
static size_t json_escape(char *out, size_t n, const char *msg)
{
  const unsigned char *s = (const unsigned char *)msg;
  size_t o = 0;

  while (*s && o + 7 < n) {
    uint32_t c = 0;
    size_t l = utf8_at(s, &c);
    if (l == 0) {
      o += (size_t)snprintf(out + o, n - o, "\\u%04x", 0xdc00u | *s);
      s++;
    } else if (c == '"' || c == '\\') {
      out[o++] = '\\';
      out[o++] = (char)c;
      s++;
    } else if (terminal_acts_on(c)) {
      o += (size_t)snprintf(out + o, n - o, "\\u%04x", (unsigned)c);
      s += l;
    } else {
      memcpy(out + o, s, l); /* l <= 4: within o + 7 < n */
      o += l;
      s += l;
    }
  }
  out[o] = '\0';
  return o;
}

/* msg for a terminal: error messages name what the agent named (a file in
 * its workspace), and an escape sequence or a newline in one must not
 * repaint or forge the operator's screen (error-name-escape): such
 * characters are written as \xNN (bytes not UTF-8) or \uXXXX. */
void log_safe_text(char *out, size_t n, const char *msg)
{
  const unsigned char *s = (const unsigned char *)msg;
  size_t o = 0;

  while (*s && o + 8 < n) {
    uint32_t c = 0;
    size_t l = utf8_at(s, &c);
    if (l == 0) {
      o += (size_t)snprintf(out + o, n - o, "\\x%02x", *s);
      s++;
    } else if (terminal_acts_on(c)) {
      o += (size_t)snprintf(out + o, n - o, "\\u%04x", (unsigned)c);
      s += l;
    } else {
      memcpy(out + o, s, l);
      o += l;
      s += l;
    }
  }
  out[o] = '\0';
}

void log_print_error(const char *prefix, const char *msg)
{
  char safe[4096];

  log_safe_text(safe, sizeof safe, msg);
  dprintf(2, "agentrt: %s%s\n", prefix, safe);
}

static void write_record_to(int fd, enum log_level level, const char *msg)
{
  char t[64], esc[4096], line[4608];
  int n;
  ssize_t r;

  now_rfc3339(t, sizeof t);
  if (g_json) {
    json_escape(esc, sizeof esc, msg);
    n = snprintf(line, sizeof line, "{\"level\":\"%s\",\"msg\":\"%s\",\"time\":\"%s\"}\n",
                 level_name(level), esc, t);
  } else {
    /* a text log is read on a terminal too (log-file-escape) */
    log_safe_text(esc, sizeof esc, msg);
    n = snprintf(line, sizeof line, "%s %s: %s\n", t, level_name(level), esc);
  }
  if (n < 0)
    return;
  if ((size_t)n >= sizeof line)
    n = sizeof line - 1;
  r = write(fd, line, (size_t)n);
  (void)r;
}

static void write_record(enum log_level level, const char *msg)
{
  if (g_fd >= 0)
    write_record_to(g_fd, level, msg);
}

/* What goes to stderr: "agentrt: ..." text, or with --log-format json and
 * no --log the JSON record, as runc's (log-format-stderr).  With --log the
 * record is in the file and stderr keeps the text (runc's too). */
static void write_stderr(enum log_level level, const char *msg)
{
  if (g_json && g_fd < 0)
    write_record_to(2, level, msg);
  else
    log_print_error(level == LOG_WARNING ? "warning: " : "", msg);
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
    write_stderr(level, msg);
  errno = saved;
}

void log_fatal_error(const char *msg)
{
  write_record(LOG_ERROR, msg);
  write_stderr(LOG_ERROR, msg);
}
