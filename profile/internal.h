/* internal.h - what the files of profile/ share, not part of its interface. */
#ifndef AGENTRT_PROFILE_INTERNAL_H
#define AGENTRT_PROFILE_INTERNAL_H

#include <inttypes.h>
#include <stdarg.h>
#include <sys/types.h>

#include "profile/profile.h"

/* units.c */
bool profile_path_is_under(const char *path, const char *dir);
bool profile_path_is_normal_abs(const char *path);
char *profile_fmt_size(uint64_t v);
char *profile_fmt_cpus(uint64_t milli);

/* parse.c */
void profile_egress_copy(struct profile_egress *d, const struct profile_egress *s);
void profile_egress_clear(struct profile_egress *e);
void profile_audit_copy(struct profile_audit *d, const struct profile_audit *s);
/* Capability name of bit n without the CAP_ prefix ("SYS_ADMIN"). */
const char *profile_cap_name(int cap);

/* annotations.c: run.agentrt.* parsed and checked against the profile's
 * allowLoosen bounds where that needs no knowledge of the config. */
struct profile_annotations {
  bool has_memory, has_pids, has_cpus, has_ws_size, has_ws_mode, readonly_ws;
  uint64_t memory, pids, cpus, ws_size;
  enum profile_ws_mode ws_mode;
  uint64_t caps_drop;
  char **egress_allow;  /* already checked against allowLoosen.egressAllow */
  bool egress_deny;     /* run.agentrt.egress.default=deny */
  char **ingress_allow; /* run.agentrt.ingress, checked against allowLoosen.ingressAllow */
  bool has_secrets;     /* run.agentrt.secrets: only these of the profile's secrets */
  char **secrets;       /* names, each one the profile has; empty = none */
};
int profile_annotations_parse(const struct oci_config *c, const struct agent_profile *p,
                              struct profile_annotations *ret, struct error *err);
void profile_annotations_clear(struct profile_annotations *a);

/* apply.c: the state one profile_apply() call works on. */
struct apply_ctx {
  const struct agent_profile *p;
  struct oci_config *c; /* the copy being changed */
  struct profile_result *r;
  struct profile_annotations a;
  struct error *err;
};
void profile_change_add(struct apply_ctx *x, enum profile_change_kind kind, const char *field,
                        const char *old_value, const char *new_value, const char *reason_fmt, ...)
    __attribute__((format(printf, 6, 7)));
/* Fill err with "<profile> profile: <msg>" and return -1. */
int profile_refuse(struct apply_ctx *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The steps, each in its own file. */
int profile_apply_caps(struct apply_ctx *x); /* caps.c */
int profile_caps_check_process(struct apply_ctx *x, struct oci_process *proc);
int profile_apply_namespaces(struct apply_ctx *x); /* linux.c */
int profile_apply_devices(struct apply_ctx *x);
int profile_apply_masks(struct apply_ctx *x);
int profile_apply_resources(struct apply_ctx *x);                         /* resources.c */
int profile_apply_mounts(struct apply_ctx *x);                            /* mounts.c */
int profile_apply_workspace(struct apply_ctx *x);                         /* workspace.c */
struct oci_seccomp *profile_seccomp_build(const struct agent_profile *p); /* seccomp.c */
void profile_apply_env(struct apply_ctx *x);                              /* env.c */
void profile_apply_home(struct apply_ctx *x);                             /* env.c */
void profile_apply_writes_summary(struct apply_ctx *x);

/* mounts.c helpers shared with workspace.c */
bool profile_mount_is_bind(const struct oci_mount *m);
bool profile_mount_has_opt(const struct oci_mount *m, const char *opt);
/* Add opt unless present; drop its opposite ("suid" for "nosuid"). Returns
 * true when something changed. */
bool profile_mount_set_opt(struct oci_mount *m, const char *opt, const char *opposite);
char *profile_mount_describe(const struct oci_mount *m);
void profile_mount_clear(struct oci_mount *m);
struct oci_mount *profile_mount_insert(struct oci_config *c, size_t at);
void profile_mount_remove(struct oci_config *c, size_t at);
/* Index of the last mount whose normalised destination is dest, or -1. */
ssize_t profile_mount_find(const struct oci_config *c, const char *dest);
const char *profile_process_home(const struct oci_config *c);

#endif
