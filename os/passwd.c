/* passwd.c - see passwd.h */
#include "os/passwd.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "os/fsutil.h"

#define PASSWD_MAX ((size_t)4 << 20)

/* field 0 (the name) or 5 (the home) of the first matching entry */
static char *passwd_field(const char *data, size_t len, const char *name, uid_t uid, int field)
{
  const char *end = data + len;

  for (const char *l = data; l < end;) {
    const char *nl = memchr(l, '\n', (size_t)(end - l)), *f[7] = {0};
    const char *lend = nl ? nl : end;
    size_t n = 0;

    /* name:password:uid:gid:gecos:home:shell */
    for (const char *c = l; n < 7; c++) {
      f[n++] = c;
      c = memchr(c, ':', (size_t)(lend - c));
      if (c == NULL)
        break;
    }
    l = nl ? nl + 1 : end;
    if (n < 6)
      continue;
    if (name != NULL) {
      size_t k = (size_t)(f[1] - 1 - f[0]);
      if (k != strlen(name) || memcmp(f[0], name, k) != 0)
        continue;
    } else {
      char num[24], *e;
      size_t k = (size_t)(f[3] - 1 - f[2]);
      unsigned long v;
      if (k == 0 || k >= sizeof num)
        continue;
      memcpy(num, f[2], k);
      num[k] = '\0';
      errno = 0;
      v = strtoul(num, &e, 10);
      if (errno != 0 || *e != '\0' || num[0] == '-' || v != (unsigned long)uid)
        continue;
    }
    if (field == 0) {
      if (f[1] - 1 > f[0])
        return xstrndup(f[0], (size_t)(f[1] - 1 - f[0]));
      continue;
    }
    {
      const char *h = f[5];
      const char *hend = n > 6 ? f[6] - 1 : lend;
      if (hend > h && *h == '/')
        return xstrndup(h, (size_t)(hend - h));
    }
  }
  return NULL;
}

char *passwd_home(const char *data, size_t len, const char *name, uid_t uid)
{
  return passwd_field(data, len, name, uid, 5);
}

char *passwd_name(const char *data, size_t len, uid_t uid)
{
  return passwd_field(data, len, NULL, uid, 0);
}

static char *passwd_file(const char *path, const char *name, uid_t uid, int field)
{
  cleanup_close int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  cleanup_free char *data = NULL;
  struct error e = {0};
  struct stat st;
  size_t len = 0;

  /* a FIFO or a device there must not block or feed us forever */
  if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
      read_fd_all(fd, PASSWD_MAX, &data, &len, &e) < 0)
    return NULL;
  return passwd_field(data, len, name, uid, field);
}

char *passwd_home_file(const char *path, const char *name, uid_t uid)
{
  return passwd_file(path, name, uid, 5);
}

char *passwd_name_file(const char *path, uid_t uid)
{
  return passwd_file(path, NULL, uid, 0);
}
