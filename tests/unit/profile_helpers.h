/* profile_helpers.h - fixtures shared by the profile unit tests: a config as
 * Docker passes it for `docker run --rm -it busybox sh` (uid 1000, HOME set),
 * builders to vary it, and lookups on the result. */
#ifndef AGENTRT_TEST_PROFILE_HELPERS_H
#define AGENTRT_TEST_PROFILE_HELPERS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "oci/config.h"
#include "profile/profile.h"
#include "tests/unit/tap.h"

#define HELPER static __attribute__((unused))

/* JSON written with ' for " to keep the fixture readable. */
static const char docker_json[] =
    "{'ociVersion': '1.0.2-dev',"
    " 'process': {'terminal': true, 'user': {'uid': 1000, 'gid': 1000},"
    "   'args': ['sh'], 'cwd': '/',"
    "   'env': ['PATH=/usr/bin:/bin', 'HOME=/home/agent', 'TERM=xterm'],"
    "   'capabilities': {"
    "     'bounding': ['CAP_CHOWN','CAP_DAC_OVERRIDE','CAP_FSETID','CAP_FOWNER','CAP_MKNOD',"
    "       'CAP_NET_RAW','CAP_SETGID','CAP_SETUID','CAP_SETFCAP','CAP_SETPCAP',"
    "       'CAP_NET_BIND_SERVICE','CAP_SYS_CHROOT','CAP_KILL','CAP_AUDIT_WRITE'],"
    "     'effective': ['CAP_CHOWN','CAP_DAC_OVERRIDE','CAP_FSETID','CAP_FOWNER','CAP_MKNOD',"
    "       'CAP_NET_RAW','CAP_SETGID','CAP_SETUID','CAP_SETFCAP','CAP_SETPCAP',"
    "       'CAP_NET_BIND_SERVICE','CAP_SYS_CHROOT','CAP_KILL','CAP_AUDIT_WRITE'],"
    "     'permitted': ['CAP_CHOWN','CAP_DAC_OVERRIDE','CAP_FSETID','CAP_FOWNER','CAP_MKNOD',"
    "       'CAP_NET_RAW','CAP_SETGID','CAP_SETUID','CAP_SETFCAP','CAP_SETPCAP',"
    "       'CAP_NET_BIND_SERVICE','CAP_SYS_CHROOT','CAP_KILL','CAP_AUDIT_WRITE']},"
    "   'noNewPrivileges': false},"
    " 'root': {'path': 'rootfs', 'readonly': false},"
    " 'hostname': 'c1',"
    " 'mounts': ["
    "   {'destination': '/proc', 'type': 'proc', 'source': 'proc', 'options': "
    "['nosuid','noexec','nodev']},"
    "   {'destination': '/dev', 'type': 'tmpfs', 'source': 'tmpfs', 'options': "
    "['nosuid','strictatime','mode=755','size=65536k']},"
    "   {'destination': '/dev/pts', 'type': 'devpts', 'source': 'devpts', 'options': "
    "['nosuid','noexec','newinstance','ptmxmode=0666','mode=0620','gid=5']},"
    "   {'destination': '/sys', 'type': 'sysfs', 'source': 'sysfs', 'options': "
    "['nosuid','noexec','nodev','ro']},"
    "   {'destination': '/dev/mqueue', 'type': 'mqueue', 'source': 'mqueue', 'options': "
    "['nosuid','noexec','nodev']},"
    "   {'destination': '/dev/shm', 'type': 'bind', 'source': "
    "'/var/lib/docker/containers/c1/mounts/shm', 'options': ['rbind','nosuid','noexec','nodev']},"
    "   {'destination': '/etc/resolv.conf', 'type': 'bind', 'source': "
    "'/var/lib/docker/containers/c1/resolv.conf', 'options': ['rbind','rprivate']},"
    "   {'destination': '/etc/hosts', 'type': 'bind', 'source': "
    "'/var/lib/docker/containers/c1/hosts', 'options': ['rbind','rprivate']}"
    " ],"
    " 'linux': {"
    "   'resources': {'devices': ["
    "     {'allow': false, 'access': 'rwm'},"
    "     {'allow': true, 'type': 'c', 'major': 1, 'minor': 3, 'access': 'rwm'},"
    "     {'allow': true, 'type': 'c', 'major': 136, 'access': 'rwm'},"
    "     {'allow': true, 'type': 'c', 'access': 'm'},"
    "     {'allow': true, 'type': 'b', 'access': 'm'}]},"
    "   'namespaces': [{'type': 'mount'}, {'type': 'network'}, {'type': 'uts'}, {'type': 'pid'},"
    "                  {'type': 'ipc'}],"
    "   'maskedPaths': ['/proc/kcore', '/proc/keys'],"
    "   'readonlyPaths': ['/proc/sys'],"
    "   'seccomp': {'defaultAction': 'SCMP_ACT_ERRNO', 'architectures': ['SCMP_ARCH_X86_64'],"
    "     'syscalls': [{'names': ['read', 'write'], 'action': 'SCMP_ACT_ALLOW'}]}"
    " }}";

HELPER char *squote(const char *s)
{
  char *r = xstrdup(s);
  for (char *p = r; *p; p++)
    if (*p == '\'')
      *p = '"';
  return r;
}

HELPER struct oci_config *parse_cfg(const char *single_quoted)
{
  struct error err = {0};
  struct oci_config *c = NULL;
  char *json = squote(single_quoted);

  if (oci_config_parse(json, strlen(json), "test.json", &c, &err) < 0) {
    fprintf(stderr, "fixture: %s\n", err.msg);
    abort();
  }
  free(json);
  return c;
}

HELPER struct oci_config *docker_cfg(void)
{
  return parse_cfg(docker_json);
}

HELPER struct agent_profile *builtin(const char *name)
{
  struct error err = {0};
  struct agent_profile *p = NULL;

  if (profile_builtin(name, &p, &err) < 0) {
    fprintf(stderr, "builtin %s: %s\n", name, err.msg);
    abort();
  }
  return p;
}

HELPER struct agent_profile *profile_str(const char *single_quoted, struct error *err)
{
  struct agent_profile *p = NULL;
  char *json = squote(single_quoted);
  int r = profile_parse(json, strlen(json), "profile.json", &p, err);

  free(json);
  return r < 0 ? NULL : p;
}

HELPER void add_mount(struct oci_config *c, const char *dest, const char *type, const char *src,
                      const char *opt1, const char *opt2)
{
  struct oci_mount *m;

  c->mounts = xrealloc(c->mounts, (c->n_mounts + 1) * sizeof *c->mounts);
  m = &c->mounts[c->n_mounts++];
  memset(m, 0, sizeof *m);
  m->destination = xstrdup(dest);
  m->type = xstrdup(type);
  m->source = xstrdup(src);
  if (opt1)
    strv_push(&m->options, opt1);
  if (opt2)
    strv_push(&m->options, opt2);
}

HELPER void add_annotation(struct oci_config *c, const char *k, const char *v)
{
  c->annotations = xrealloc(c->annotations, (c->n_annotations + 1) * sizeof *c->annotations);
  c->annotations[c->n_annotations].key = xstrdup(k);
  c->annotations[c->n_annotations].value = xstrdup(v);
  c->n_annotations++;
}

HELPER void drop_ns(struct oci_config *c, enum oci_ns_type t)
{
  size_t o = 0;
  for (size_t i = 0; i < c->linux->n_namespaces; i++)
    if (c->linux->namespaces[i].type != t)
      c->linux->namespaces[o++] = c->linux->namespaces[i];
  c->linux->n_namespaces = o;
}

HELPER void set_ns_path(struct oci_config *c, enum oci_ns_type t, const char *path)
{
  for (size_t i = 0; i < c->linux->n_namespaces; i++)
    if (c->linux->namespaces[i].type == t) {
      free(c->linux->namespaces[i].path);
      c->linux->namespaces[i].path = xstrdup(path);
    }
}

HELPER uint64_t capbit(const char *name)
{
  return UINT64_C(1) << oci_cap_from_name(name);
}

/* Apply; on refusal *msg gets the message. Returns the result or NULL. */
HELPER struct profile_result *run(const struct oci_config *in, const struct agent_profile *p,
                                  struct oci_config **out, char *msg, size_t msgsz)
{
  struct error err = {0};
  struct profile_result *r = NULL;

  *out = NULL;
  if (profile_apply(in, p, out, &r, &err) < 0) {
    snprintf(msg, msgsz, "%s", err.msg);
    return NULL;
  }
  snprintf(msg, msgsz, "%s", "");
  return r;
}

HELPER const struct oci_mount *mount_at(const struct oci_config *c, const char *dest)
{
  for (size_t i = c->n_mounts; i-- > 0;)
    if (streq(c->mounts[i].destination, dest))
      return &c->mounts[i];
  return NULL;
}

HELPER bool has_opt(const struct oci_mount *m, const char *opt)
{
  return m != NULL && strv_contains(m->options, opt);
}

HELPER const struct profile_change *change_for(const struct profile_result *r, const char *field)
{
  for (size_t i = 0; r != NULL && i < r->n_changes; i++)
    if (streq(r->changes[i].field, field))
      return &r->changes[i];
  return NULL;
}

HELPER size_t config_changes(const struct profile_result *r)
{
  size_t n = 0;
  for (size_t i = 0; i < r->n_changes; i++)
    n += r->changes[i].kind == PROFILE_CHANGE_CONFIG;
  return n;
}

HELPER char *to_json(const struct oci_config *c)
{
  struct error err = {0};
  char *json = NULL;
  size_t len = 0;

  if (oci_config_to_json(c, &json, &len, &err) < 0) {
    fprintf(stderr, "to_json: %s\n", err.msg);
    abort();
  }
  return json;
}

/* Expect a refusal whose message contains `needle`. */
HELPER void expect_refusal(const struct oci_config *in, const struct agent_profile *p,
                           const char *needle, const char *name)
{
  char msg[ERROR_MSG_MAX];
  struct oci_config *out = NULL;
  struct profile_result *r = run(in, p, &out, msg, sizeof msg);

  tap_ok(r == NULL && strstr(msg, needle) != NULL, "refused: %s (%s)", name, r ? "accepted" : msg);
  profile_result_free(r);
  oci_config_free(out);
}

#endif
