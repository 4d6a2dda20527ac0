/* seccomp_cache.c - see seccomp_cache.h */
#include "seccomp_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "runtime/fsutil.h"
#include "runtime/seccomp_filter.h"

static void h_str(uint64_t *h, const char *s)
{
  for (; s && *s; s++) {
    *h ^= (unsigned char)*s;
    *h *= 1099511628211ULL;
  }
  *h ^= 0xff;
  *h *= 1099511628211ULL;
}

static void h_u64(uint64_t *h, uint64_t v)
{
  char buf[24];
  snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
  h_str(h, buf);
}

static uint64_t filter_hash(const struct oci_seccomp *s)
{
  const struct scmp_version *v = seccomp_version();
  uint64_t h = 1469598103934665603ULL;

  h_u64(&h, v ? v->major * 10000 + v->minor * 100 + v->micro : 0);
  h_str(&h, s->default_action);
  h_u64(&h, s->has_default_errno_ret ? s->default_errno_ret + 1 : 0);
  for (char **a = s->architectures; a && *a; a++)
    h_str(&h, *a);
  for (char **f = s->flags; f && *f; f++)
    h_str(&h, *f);
  for (size_t i = 0; i < s->n_syscalls; i++) {
    const struct oci_seccomp_syscall *sc = &s->syscalls[i];
    for (char **n = sc->names; n && *n; n++)
      h_str(&h, *n);
    h_str(&h, sc->action);
    h_u64(&h, sc->has_errno_ret ? sc->errno_ret + 1 : 0);
    for (size_t j = 0; j < sc->n_args; j++) {
      h_u64(&h, sc->args[j].index);
      h_u64(&h, sc->args[j].value);
      h_u64(&h, sc->args[j].value_two);
      h_str(&h, sc->args[j].op);
    }
  }
  return h;
}

static struct sock_fprog *prog_from(const void *bpf, size_t len)
{
  struct sock_fprog *p = xmalloc(sizeof *p + len);
  memcpy(p + 1, bpf, len);
  p->filter = (struct sock_filter *)(p + 1);
  p->len = (unsigned short)(len / sizeof(struct sock_filter));
  return p;
}

int seccomp_cache_get(const char *root, const struct oci_seccomp *s, struct sock_fprog **ret,
                      struct error *err)
{
  cleanup_free char *dir = xfmt("%s/.cache", root);
  cleanup_free char *name = xfmt("seccomp-%016llx.bpf", (unsigned long long)filter_hash(s));
  cleanup_free char *data = NULL;
  cleanup_free void *bpf = NULL;
  size_t len = 0;
  int dfd;

  if (mkdir(dir, 0700) < 0 && errno != EEXIST)
    dir[0] = '\0';
  dfd = dir[0] ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
  if (dfd >= 0) {
    struct error ignore = {0};
    if (read_file_at(dfd, name, 1 << 20, &data, &len, &ignore) == 0 && len > 0 &&
        len % sizeof(struct sock_filter) == 0 && len / sizeof(struct sock_filter) <= 65535) {
      close(dfd);
      *ret = prog_from(data, len);
      return 0;
    }
  }
  if (seccomp_export(s, &bpf, &len, err) < 0) {
    if (dfd >= 0)
      close(dfd);
    return error_prefix(err, "profile seccomp filter");
  }
  if (dfd >= 0) {
    struct error ignore = {0};
    write_file_atomic_at(dfd, name, bpf, len, &ignore); /* a cache: failures are harmless */
    close(dfd);
  }
  *ret = prog_from(bpf, len);
  return 0;
}
