/* error.h - the one error convention of agentrt.
 *
 * Every fallible function returns int (< 0 on failure) and takes a trailing
 * `struct error *err` out-parameter.  On failure it fills err with the errno
 * (0 when there is none) and a one-line, lower-case message that names the
 * object and what was being done.  Callers add context with error_prefix().
 * Library code never prints: the CLI top level logs the message once.
 */
#ifndef AGENTRT_ERROR_H
#define AGENTRT_ERROR_H

#include <stddef.h>

#define ERROR_MSG_MAX 1024

struct error {
  int code;                /* errno value, or 0 */
  char msg[ERROR_MSG_MAX]; /* "" when no error */
};

/* Fill err with "fmt: strerror(errnum)" (when errnum != 0) and return -1. */
int error_set(struct error *err, int errnum, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Same as error_set with errnum = errno (captured before formatting). */
int error_errno(struct error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prepend "fmt: " to an already-set message; returns -1. */
int error_prefix(struct error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Clear an error. */
void error_clear(struct error *err);
static inline int error_is_set(const struct error *err)
{
  return err->msg[0] != '\0';
}

#endif
