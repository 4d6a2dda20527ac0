/* log.h - the runtime's log (--log FILE, --log-format text|json, --debug).
 *
 * Engines read it: containerd's shim decodes <bundle>/log.json as a stream of
 * {"level","msg","time"} objects and keeps the last error; Podman reads the
 * whole file as one object.  Each record is one write(2) on an O_APPEND fd.
 * The final error of a command is written once to the log and once to stderr
 * by log_fatal_error().
 */
#ifndef AGENTRT_LOG_H
#define AGENTRT_LOG_H

#include <stdbool.h>
#include <stddef.h>

enum log_level { LOG_ERROR, LOG_WARNING, LOG_INFO, LOG_DEBUG };

/* path NULL = no log file.  json selects the JSON lines format. */
int log_init(const char *path, bool json, bool debug);
bool log_debug_enabled(void);
void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define log_debug(...)                                                                             \
  do {                                                                                             \
    if (log_debug_enabled())                                                                       \
      log_msg(LOG_DEBUG, __VA_ARGS__);                                                             \
  } while (0)
#define log_warning(...) log_msg(LOG_WARNING, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
/* The one error line of a failed command: log file (level error) + stderr
 * as "agentrt: <msg>". */
void log_fatal_error(const char *msg);
/* "agentrt: <prefix><msg>" on stderr, controls, bidi and invisible
 * characters in msg escaped for the terminal */
void log_print_error(const char *prefix, const char *msg);
/* msg into out (n bytes, cut to fit) with controls, bidi and invisible
 * characters written as \xNN or \uXXXX: for a name the agent chose that
 * goes to the operator's terminal */
void log_safe_text(char *out, size_t n, const char *msg);
/* Close the log fd (before handing fds to a container). */
int log_fd(void);

#endif
