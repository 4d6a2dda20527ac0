/* passwd.h - a home directory from /etc/passwd's text, without NSS (the
 * binary is static: glibc's getpwuid would load NSS modules at run time). */
#ifndef AGENTRT_PASSWD_H
#define AGENTRT_PASSWD_H

#include <stddef.h>
#include <sys/types.h>

/* The home (6th field, absolute) of the first entry in data (len bytes of
 * passwd(5) lines) whose name is `name` (when not NULL) or, with name NULL,
 * whose uid is `uid`; a new string, or NULL when none has one. */
char *passwd_home(const char *data, size_t len, const char *name, uid_t uid);

/* The same from the file at path (a regular file of at most 4 MiB, opened
 * without blocking), or NULL. */
char *passwd_home_file(const char *path, const char *name, uid_t uid);

/* The name (1st field) of the first entry in data whose uid is `uid`, a new
 * string, or NULL when none; and the same from the file at path. */
char *passwd_name(const char *data, size_t len, uid_t uid);
char *passwd_name_file(const char *path, uid_t uid);

#endif
