/* lsm.h - the AppArmor profile and SELinux label of the container's
 * processes (process.apparmorProfile, process.selinuxLabel,
 * linux.mountLabel).
 *
 * `create` and `exec` check the labels before anything is spawned
 * (lsm_check_process): a label the host cannot apply is refused with one
 * line, as runc refuses it (runc fails the same configs, later and less
 * clearly).  The process itself opens its exec attribute files early, while
 * it is still root and before any seccomp filter (lsm_exec_open), and
 * writes them as the very last step before execve (lsm_exec_apply), so
 * the label takes effect at that execve and nothing after it can fail.
 */
#ifndef AGENTRT_LSM_H
#define AGENTRT_LSM_H

#include <stdbool.h>

#include "common/error.h"
#include "oci/config.h"

/* AppArmor is active: /sys/module/apparmor/parameters/enabled is "Y". */
bool lsm_apparmor_enabled(void);
/* SELinux is active: selinuxfs is mounted (/sys/fs/selinux/enforce). */
bool lsm_selinux_enabled(void);

/* Refuse what the host cannot apply: an AppArmor profile where AppArmor is
 * disabled or that is not loaded (when securityfs lists the loaded ones),
 * an SELinux process or mount label where SELinux is disabled.
 * mount_label may be NULL. */
int lsm_check_process(const struct oci_process *p, const char *mount_label, struct error *err);

struct lsm_exec {
  int apparmor_fd; /* attr/apparmor/exec (or attr/exec), -1 = none */
  int selinux_fd;  /* attr/exec, -1 = none */
  const char *apparmor_profile;
  const char *selinux_label;
};
#define LSM_EXEC_INIT                                                                              \
  {                                                                                                \
    .apparmor_fd = -1, .selinux_fd = -1                                                            \
  }

/* Open the exec attributes p asks for (nothing when it asks none). */
int lsm_exec_open(const struct oci_process *p, struct lsm_exec *x, struct error *err);
/* Write them: the label applies at the next execve.  Allocates nothing and
 * only calls write(2), so it may run under a seccomp filter. */
int lsm_exec_apply(struct lsm_exec *x, struct error *err);
void lsm_exec_close(struct lsm_exec *x);

/* The text AppArmor expects in attr/exec for profile name: "exec NAME". */
int lsm_apparmor_exec_text(const char *name, char *buf, size_t size);

#endif
