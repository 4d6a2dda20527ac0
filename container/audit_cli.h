/* audit_cli.h - the lifecycle records CLI verbs add to a container's trail.
 *
 * A container has a trail while <state dir>/audit exists (written by
 * monitor_start at create, naming the trail directory); the audit_cli_*
 * calls append to it and do nothing for a container without one.  They are
 * best effort: a failure is a logged warning, never the verb's error. */
#ifndef AGENTRT_AUDIT_CLI_H
#define AGENTRT_AUDIT_CLI_H

#include <stdbool.h>
#include <sys/types.h>

#include "common/error.h"

/* fields: JSON members without braces, or NULL. */
void audit_cli_event(const char *root, const char *id, const char *kind, const char *fields);
void audit_cli_exec(const char *root, const char *id, char *const *argv, pid_t pid, bool tty,
                    bool detach);
void audit_cli_kill(const char *root, const char *id, int sig, bool all);

#endif
