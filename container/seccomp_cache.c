/* seccomp_cache.c - see seccomp_cache.h */
#include "container/seccomp_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <seccomp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/sha256.h"
#include "common/util.h"
#include "container/seccomp_filter.h"
#include "os/fsutil.h"

/* The cache key: SHA-256 of a canonical, length-prefixed encoding of the
 * filter (no two filters share an encoding) and the libseccomp version. */
static void h_str(struct sha256 *h, const char *s)
{
  uint64_t n = s ? strlen(s) : UINT64_MAX;

  sha256_update(h, &n, sizeof n);
  if (s)
    sha256_update(h, s, strlen(s));
}

static void h_u64(struct sha256 *h, uint64_t v)
{
  sha256_update(h, &v, sizeof v);
}

/* what seccomp_export makes of the same filter: 2 = a binary tree (a list before), 3 = with
 * the prefix of calls newer than libseccomp (os/syscall_late.h) */
#define SECCOMP_CACHE_LAYOUT 3

static void filter_hash(const struct oci_seccomp *s, char out[SHA256_HEX_LEN + 1])
{
  const struct scmp_version *v = seccomp_version();
  static const char hex[] = "0123456789abcdef";
  uint8_t d[SHA256_LEN];
  struct sha256 h;

  sha256_init(&h);
  h_u64(&h, v ? v->major * 10000 + v->minor * 100 + v->micro : 0);
  h_u64(&h, SECCOMP_CACHE_LAYOUT);
  h_str(&h, s->default_action);
  h_u64(&h, s->has_default_errno_ret ? s->default_errno_ret + 1ULL : 0);
  h_u64(&h, strv_len(s->architectures));
  for (char **a = s->architectures; a && *a; a++)
    h_str(&h, *a);
  h_u64(&h, strv_len(s->flags));
  for (char **f = s->flags; f && *f; f++)
    h_str(&h, *f);
  h_u64(&h, s->n_syscalls);
  for (size_t i = 0; i < s->n_syscalls; i++) {
    const struct oci_seccomp_syscall *sc = &s->syscalls[i];
    h_u64(&h, strv_len(sc->names));
    for (char **n = sc->names; n && *n; n++)
      h_str(&h, *n);
    h_str(&h, sc->action);
    h_u64(&h, sc->has_errno_ret ? sc->errno_ret + 1ULL : 0);
    h_u64(&h, sc->n_args);
    for (size_t j = 0; j < sc->n_args; j++) {
      h_u64(&h, sc->args[j].index);
      h_u64(&h, sc->args[j].value);
      h_u64(&h, sc->args[j].value_two);
      h_str(&h, sc->args[j].op);
    }
    h_u64(&h, sc->direct_only);
  }
  sha256_final(&h, d);
  for (size_t i = 0; i < SHA256_LEN; i++) {
    out[2 * i] = hex[d[i] >> 4];
    out[2 * i + 1] = hex[d[i] & 15];
  }
  out[2 * SHA256_LEN] = '\0';
}

/* Whoever may write an entry chooses the filter of every later container
 * (its name is the hash of the rules it should hold, not of its bytes): a
 * directory or an entry is used only when this user owns it, no one else may
 * write it, and it is what it should be (no symbolic link, no device). */
static bool ours_alone(int fd, mode_t type)
{
  struct stat st;

  return fstat(fd, &st) == 0 && (st.st_mode & S_IFMT) == type && st.st_uid == geteuid() &&
         (st.st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

/* The entry name of dfd: 0 with its BPF, -1 when there is none to trust. */
static int read_entry(int dfd, const char *name, char **data, size_t *len)
{
  struct error ignore = {0};
  int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC), r;

  if (fd < 0)
    return -1;
  r = ours_alone(fd, S_IFREG) ? read_fd_all(fd, 1 << 20, data, len, &ignore) : -1;
  close(fd);
  if (r < 0 || *len == 0 || *len % sizeof(struct sock_filter) != 0 ||
      *len / sizeof(struct sock_filter) > 65535) {
    free(*data);
    *data = NULL;
    return -1;
  }
  return 0;
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
  char key[SHA256_HEX_LEN + 1];
  cleanup_free char *name = NULL;
  cleanup_free char *data = NULL;
  cleanup_free void *bpf = NULL;
  size_t len = 0;
  int dfd;

  filter_hash(s, key);
  name = xfmt("seccomp-%s.bpf", key);

  /* the data directory too: a `--profile oci` container (an engine's, with
   * its own filter) may be the first to need it */
  if (mkdir(dir, 0700) < 0 && errno == ENOENT && mkdir(root, 0700) == 0)
    (void)mkdir(dir, 0700);
  if (mkdir(dir, 0700) < 0 && errno != EEXIST)
    dir[0] = '\0';
  dfd = dir[0] ? open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
  if (dfd >= 0 && !ours_alone(dfd, S_IFDIR)) {
    close(dfd); /* not read, not written: compiled for this container only */
    dfd = -1;
  }
  if (dfd >= 0 && read_entry(dfd, name, &data, &len) == 0) {
    close(dfd);
    *ret = prog_from(data, len);
    return 0;
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
