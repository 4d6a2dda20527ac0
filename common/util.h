/* util.h - memory, string and cleanup helpers shared by every module.
 *
 * Allocation failure aborts (like crun's xmalloc): a runtime that cannot get
 * a few bytes cannot do anything useful, and checking every strdup hides the
 * real error paths.  Cleanup attributes release resources at scope exit;
 * take_ptr()/take_fd() hand ownership out of such a scope.
 */
#ifndef AGENTRT_UTIL_H
#define AGENTRT_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* "agentrt: out of memory" on stderr, then abort (what the x* allocators do) */
__attribute__((noreturn)) void die_oom(void);
void *xmalloc(size_t n);
void *xmalloc0(size_t n);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
int xasprintf(char **ret, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Returns a newly allocated formatted string. */
char *xfmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* NULL-terminated string vectors. */
size_t strv_len(char *const *v);
void strv_free(char **v);
char **strv_dup(char *const *v);
/* Append a copy of s; *v may be NULL. */
void strv_push(char ***v, const char *s);
bool strv_contains(char *const *v, const char *s);

static inline bool streq(const char *a, const char *b)
{
  return a != NULL && b != NULL && strcmp(a, b) == 0;
}
static inline bool str_has_prefix(const char *s, const char *p)
{
  return strncmp(s, p, strlen(p)) == 0;
}

/* The one lexical path normaliser (the profile and the mount code must agree
 * on what a mount destination is): "a/./b//../c/" -> "/a/c", always
 * absolute, ".." never above "/".  No symlinks are followed (nothing here
 * touches the filesystem); resolving inside a root is os/safepath.h's job. */
char *path_normalize(const char *path);
/* PATH is DIR or below it (both normalized; DIR "/" holds every absolute path). */
static inline bool path_is_below(const char *path, const char *dir)
{
  size_t n = strlen(dir);

  if (strcmp(dir, "/") == 0)
    return path[0] == '/';
  return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* Strict number parsing: whole string, no sign surprises, range checked.
 * Return 0 on success, -1 (errno = EINVAL or ERANGE) otherwise. */
/* The current UTC time in RFC 3339 with nanoseconds ("2026-11-29T22:01:02.123456789Z")
 * into buf; *ret_s (may be NULL) gets the seconds since the epoch.  Computed
 * by hand: glibc's gmtime_r and strftime read /etc/localtime on first use. */
#define RFC3339_NANO_SIZE 64
void rfc3339_now(char buf[RFC3339_NANO_SIZE], int64_t *ret_s);
/* The same for a given time (a file's mtime). */
struct timespec;
void rfc3339_at(const struct timespec *ts, char buf[RFC3339_NANO_SIZE]);

int parse_u64(const char *s, uint64_t *ret);
int parse_i64(const char *s, int64_t *ret);
int parse_u32(const char *s, uint32_t *ret);
int parse_int(const char *s, int *ret);

/* Write all N bytes of BUF to FD (retrying short writes and EINTR): 0, or -1
 * with errno set (EIO for a write that wrote nothing). */
int write_all(int fd, const void *buf, size_t n);

/* cleanup helpers */
static inline void cleanup_freep(void *p)
{
  free(*(void **)p);
}
static inline void cleanup_closep(int *fd)
{
  if (*fd >= 0)
    close(*fd);
}
static inline void cleanup_strvp(char ***v)
{
  strv_free(*v);
}
#define cleanup_free __attribute__((cleanup(cleanup_freep)))
#define cleanup_close __attribute__((cleanup(cleanup_closep)))
#define cleanup_strv __attribute__((cleanup(cleanup_strvp)))

static inline void *take_ptr_impl(void *pp)
{
  void **p = pp;
  void *r = *p;
  *p = NULL;
  return r;
}
#define take_ptr(p) take_ptr_impl(&(p))
static inline int take_fd(int *fd)
{
  int r = *fd;
  *fd = -1;
  return r;
}

#endif
