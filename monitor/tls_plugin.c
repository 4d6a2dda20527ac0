/* tls_plugin.c - find, check and load agentrt-tls.so (tls_plugin.h). */
#include "monitor/tls_plugin.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"

#ifndef AGENTRT_LIBDIR
#define AGENTRT_LIBDIR "/usr/local/lib/agentrt"
#endif

static const struct tls_plugin_v1 *plugin;

/* Beside the resolved binary (malloc'd, NULL when unknown). */
static char *plugin_beside(void)
{
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  char *slash;

  if (n <= 0)
    return NULL;
  exe[n] = '\0';
  slash = strrchr(exe, '/');
  if (slash == NULL)
    return NULL;
  *slash = '\0';
  return xfmt("%s/%s", exe, TLS_PLUGIN_NAME);
}

static int plugin_open(const char *path, struct error *err)
{
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  struct stat st;
  char fdpath[64];
  void *h;

  if (fd < 0)
    return error_errno(err, "TLS plugin %s", path);
  if (fstat(fd, &st) < 0) {
    error_errno(err, "TLS plugin %s", path);
    close(fd);
    return -1;
  }
  if (!S_ISREG(st.st_mode) || (st.st_uid != 0 && st.st_uid != getuid()) ||
      (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    close(fd);
    return error_set(err, 0,
                     "TLS plugin %s: refused: not a regular file owned by root or uid %u, or "
                     "group/world writable (mode %04o, owner %u)",
                     path, (unsigned)getuid(), (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid);
  }
  snprintf(fdpath, sizeof fdpath, "/proc/self/fd/%d", fd);
  h = dlopen(fdpath, RTLD_NOW | RTLD_LOCAL);
  close(fd);
  if (h == NULL)
    return error_set(err, 0, "TLS plugin %s: %s", path, dlerror());
  const struct tls_plugin_v1 *(*get)(void) =
      (const struct tls_plugin_v1 *(*)(void))dlsym(h, TLS_PLUGIN_SYMBOL);
  const struct tls_plugin_v1 *t = get ? get() : NULL;
  if (t == NULL) {
    dlclose(h);
    return error_set(err, 0, "TLS plugin %s: no %s", path, TLS_PLUGIN_SYMBOL);
  }
  if (t->version == NULL || t->commit == NULL || strcmp(t->version, AGENTRT_VERSION) != 0 ||
      strcmp(t->commit, AGENTRT_COMMIT) != 0) {
    error_set(err, 0, "TLS plugin %s: from another build (%s %s, this is %s %s)", path,
              t->version ? t->version : "?", t->commit ? t->commit : "?", AGENTRT_VERSION,
              AGENTRT_COMMIT);
    dlclose(h);
    return -1;
  }
  if (t->fork_hook == NULL || t->str_free == NULL) {
    dlclose(h);
    return error_set(err, 0, "TLS plugin %s: an incomplete table", path);
  }
  *t->fork_hook = fork; /* this fork is agentrt's libc's: tls_plugin.h */
  plugin = t;           /* never closed: the CA and the proxy live in it */
  return 0;
}

int tls_plugin_load(struct error *err)
{
  cleanup_free char *beside = NULL;
  const char *libdir = AGENTRT_LIBDIR "/" TLS_PLUGIN_NAME;

  if (plugin != NULL)
    return 0;
  beside = plugin_beside();
  if (beside != NULL && access(beside, F_OK) == 0)
    return plugin_open(beside, err);
  if (access(libdir, F_OK) == 0)
    return plugin_open(libdir, err);
  return error_set(err, ENOENT, "TLS plugin %s not found (searched %s%s%s)", TLS_PLUGIN_NAME,
                   beside ? beside : "", beside ? ", " : "", libdir);
}

int tls_plugin_ca_new(const char *id, struct tls_ca **ret, struct error *err)
{
  *ret = NULL;
  if (tls_plugin_load(err) < 0)
    return -1;
  return plugin->ca_new(id, ret, err);
}

char *tls_plugin_ca_cert_pem(const struct tls_ca *ca)
{
  char *theirs, *ours;

  if (plugin == NULL || ca == NULL || (theirs = plugin->ca_cert_pem(ca)) == NULL)
    return NULL;
  ours = xstrdup(theirs);
  plugin->str_free(theirs);
  return ours;
}

void tls_plugin_ca_free(struct tls_ca *ca)
{
  if (plugin != NULL && ca != NULL)
    plugin->ca_free(ca);
}

int tls_plugin_proxy_start(const struct tls_proxy_opts *o, pid_t *ret_pid, struct error *err)
{
  if (tls_plugin_load(err) < 0)
    return -1;
  return plugin->proxy_start(o, ret_pid, err);
}
