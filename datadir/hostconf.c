/* hostconf.c - parse /etc/agentrt/agentrt.conf (format in hostconf.h). */
#include "datadir/hostconf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "profile/profile.h"

enum kind { K_PATH, K_SIZE, K_DURATION };

static const struct key {
  const char *name;
  enum kind kind;
  size_t off;
} keys[] = {
    {"data-dir", K_PATH, offsetof(struct hostconf, data_dir)},
    {"workspaces.max-total-size", K_SIZE, offsetof(struct hostconf, ws_max_total)},
    {"workspaces.max-age", K_DURATION, offsetof(struct hostconf, ws_max_age)},
    {"audit.max-total-size", K_SIZE, offsetof(struct hostconf, audit_max_total)},
    {"audit.max-age", K_DURATION, offsetof(struct hostconf, audit_max_age)},
    {"min-free", K_SIZE, offsetof(struct hostconf, min_free)},
    {"sweep-interval", K_DURATION, offsetof(struct hostconf, sweep_interval)},
};

void hostconf_defaults(struct hostconf *c)
{
  *c = (struct hostconf){
      .ws_max_total = HOSTCONF_DEFAULT_WS_MAX_TOTAL,
      .ws_max_age = HOSTCONF_DEFAULT_WS_MAX_AGE,
      .audit_max_total = HOSTCONF_DEFAULT_AUDIT_MAX_TOTAL,
      .audit_max_age = HOSTCONF_DEFAULT_AUDIT_MAX_AGE,
      .min_free = HOSTCONF_DEFAULT_MIN_FREE,
      .sweep_interval = HOSTCONF_DEFAULT_SWEEP_INTERVAL,
  };
}

void hostconf_free(struct hostconf *c)
{
  free(c->data_dir);
  c->data_dir = NULL;
}

static bool blank(char ch)
{
  return ch == ' ' || ch == '\t' || ch == '\r';
}

/* Trim blanks at both ends of [*s, *s + *n). */
static void trim(const char **s, size_t *n)
{
  while (*n > 0 && blank(**s))
    (*s)++, (*n)--;
  while (*n > 0 && blank((*s)[*n - 1]))
    (*n)--;
}

/* A printable value: no control characters (tabs and blanks inside are kept). */
static bool printable(const char *s)
{
  for (; *s; s++)
    if ((unsigned char)*s < 0x20 && *s != '\t')
      return false;
  return true;
}

static int set_value(const struct key *k, const char *v, struct hostconf *c, const char *name,
                     unsigned line, struct error *err)
{
  uint64_t *u = (uint64_t *)((char *)c + k->off);

  switch (k->kind) {
  case K_PATH:
    if (v[0] != '/' || strstr(v, "/../") || (strlen(v) >= 3 && streq(v + strlen(v) - 3, "/..")) ||
        strpbrk(v, ",:\\\"") || strlen(v) > 1024)
      return error_set(err, 0,
                       "%s:%u: %s: expected an absolute path without `..`, `,`, `:`, `\\` or "
                       "`\"`, got `%s`",
                       name, line, k->name, v);
    free(c->data_dir);
    c->data_dir = xstrdup(v);
    return 0;
  case K_SIZE:
    if (profile_parse_size(v, u) < 0)
      return error_set(err, 0, "%s:%u: %s: expected a size (512m, 2g, 0 for none), got `%s`", name,
                       line, k->name, v);
    return 0;
  case K_DURATION:
    if (profile_parse_duration(v, u) < 0)
      return error_set(err, 0,
                       "%s:%u: %s: expected a duration (90s, 15m, 2h, 30d, 0 for none), got `%s`",
                       name, line, k->name, v);
    return 0;
  }
  return 0;
}

static int parse_line(const char *s, size_t n, const char *name, unsigned line, bool *seen,
                      struct hostconf *c, struct error *err)
{
  const char *eq, *ks, *vs;
  size_t kn, vn;
  cleanup_free char *key = NULL, *val = NULL;

  trim(&s, &n);
  if (n == 0 || s[0] == '#')
    return 0;
  eq = memchr(s, '=', n);
  if (eq == NULL)
    return error_set(err, 0, "%s:%u: expected `key = value`", name, line);
  ks = s, kn = (size_t)(eq - s);
  vs = eq + 1, vn = n - kn - 1;
  trim(&ks, &kn);
  trim(&vs, &vn);
  key = xstrndup(ks, kn);
  val = xstrndup(vs, vn);
  if (!printable(key) || !printable(val))
    return error_set(err, 0, "%s:%u: control character in the line", name, line);
  for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
    if (!streq(keys[i].name, key))
      continue;
    if (seen[i])
      return error_set(err, 0, "%s:%u: `%s` given twice", name, line, key);
    seen[i] = true;
    if (vn == 0)
      return error_set(err, 0, "%s:%u: `%s` has no value", name, line, key);
    return set_value(&keys[i], val, c, name, line, err);
  }
  if (kn > 64)
    key[64] = '\0';
  return error_set(err, 0,
                   "%s:%u: unknown key `%s` (known: data-dir, workspaces.max-total-size, "
                   "workspaces.max-age, audit.max-total-size, audit.max-age, min-free, "
                   "sweep-interval)",
                   name, line, key);
}

int hostconf_parse(const char *text, size_t len, const char *name, struct hostconf *c,
                   struct error *err)
{
  bool seen[ARRAY_SIZE(keys)] = {0};
  unsigned line = 0;
  size_t pos = 0;

  if (len > HOSTCONF_MAX_BYTES)
    return error_set(err, 0, "%s: larger than %d bytes", name, HOSTCONF_MAX_BYTES);
  if (memchr(text, '\0', len) != NULL)
    return error_set(err, 0, "%s: holds a NUL byte", name);
  while (pos < len) {
    const char *nl = memchr(text + pos, '\n', len - pos);
    size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;
    line++;
    if (n > HOSTCONF_MAX_LINE)
      return error_set(err, 0, "%s:%u: line longer than %d bytes", name, line, HOSTCONF_MAX_LINE);
    if (parse_line(text + pos, n, name, line, seen, c, err) < 0)
      return -1;
    pos += n + (nl != NULL);
  }
  return 0;
}

int hostconf_load(const char *path, struct hostconf *c, struct error *err)
{
  cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  cleanup_free char *buf = NULL;
  size_t len = 0;
  struct stat st;

  hostconf_defaults(c);
  if (fd < 0 && errno == ENOENT)
    return 0;
  if (fd < 0 || fstat(fd, &st) < 0)
    return error_errno(err, "host config `%s`", path);
  if (!S_ISREG(st.st_mode))
    return error_set(err, 0, "host config `%s`: not a regular file", path);
  buf = xmalloc(HOSTCONF_MAX_BYTES + 2);
  for (;;) {
    ssize_t r = read(fd, buf + len, HOSTCONF_MAX_BYTES + 1 - len);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0)
      return error_errno(err, "host config `%s`: read", path);
    if (r == 0 || (len += (size_t)r) > HOSTCONF_MAX_BYTES)
      break;
  }
  return hostconf_parse(buf, len, path, c, err);
}
