/* process.h - turning the init (or an exec'd process) into the configured
 * process and executing it.
 *
 * process_apply_limits() (rlimits, oom_score_adj through procfs) may run
 * early.  Order inside process_exec() (personality is the caller's):
 *   umask; prepare the sealed trampoline memfd (before seccomp, so no
 *   profile has to allow memfd_create); mark every fd >= 3 + preserve_fds
 *   close-on-exec and clear the flag on the preserved ones (CVE-2024-21626);
 *   open the LSM exec attributes (container/lsm.h) while still root;
 *   chdir(cwd) as root; PR_SET_KEEPCAPS, setgroups, setresgid, setresuid;
 *   chdir again as the user if root got EACCES; getcwd() must be inside the
 *   root (CVE-2024-21626); without no_new_privs load the seccomp filter now
 *   (effective caps raised back from permitted: it needs CAP_SYS_ADMIN);
 *   capabilities (all five sets; inheritable and ambient only when asked,
 *   CVE-2022-29162); no_new_privs; with no_new_privs load the filter now;
 *   write the AppArmor profile / SELinux label to the exec attributes (the
 *   last step that can fail); execveat of the sealed trampoline (CVE-2019-5736), which execs the
 *   program, so /proc/<pid>/exe never names the agentrt binary on the host.
 * Under the filter, before the program runs: capget/capset/prctl (only
 * without no_new_privs), write (the LSM attributes), execveat and execve.
 */
#ifndef AGENTRT_PROCESS_H
#define AGENTRT_PROCESS_H

#include <stdbool.h>

#include "common/error.h"
#include "oci/config.h"

struct process_opts {
  int preserve_fds; /* fds 3 .. 3+preserve_fds-1 are kept */
  int keep_fd;      /* one more fd to keep open across setup (e.g. the sync socket), -1;
                       it is close-on-exec like every other fd: gone at the exec */
  bool in_userns;   /* setgroups may be denied */
  const struct oci_seccomp *seccomp; /* NULL = no filter */
  const void *seccomp_bpf;           /* precompiled filter (struct sock_fprog), overrides seccomp;
                                        the kernel flags still come from seccomp->flags if set */
  const void *extra_bpf;             /* the profile's filter (struct sock_fprog), stacked after the
                                        engine's own: the kernel runs both, the stricter wins */
  /* The same filter with the denied calls as SCMP_ACT_NOTIFY (NULL = none):
   * loaded instead of extra_bpf with a new listener, which is sent over
   * notify_fd (SCM_RIGHTS) to the monitor and closed here.  When the chain
   * has a listener already (EBUSY) extra_bpf is loaded and "OFF ..." sent. */
  const void *notify_bpf;
  int notify_fd;
  bool notify_ack;   /* exec: wait for the monitor's "OK" (it polls the
                        listener) before going on; anything else fails */
  bool has_listener; /* seccomp uses SCMP_ACT_NOTIFY: after loading it, send */
  int listener_fd;   /* listener_msg and the notify fd on this socket (connected
                        to listenerPath by the runtime), then close it */
  const char *listener_msg;
  bool pdeathsig; /* SIGKILL when the parent dies (create_opts.pdeathsig) */
  /* Keep the caller's session keyring (--no-new-keyring).  Otherwise the
   * process joins a new anonymous one before its user changes: keyrings are
   * not namespaced, and the caller's keys would be the container's. */
  bool keep_keyring;
  /* Run last, with the process's user, capabilities, no_new_privs, seccomp
   * filter and LSM exec label in place (the init's startContainer hooks, as
   * runc runs them); failing fails the exec.  NULL = none. */
  int (*before_exec)(const void *ud, struct error *err);
  const void *before_exec_ud;
};

/* Resolve args[0] against the process PATH (in the current root) the way
 * execvp does, so `create` can fail now with runc's texts:
 * "exec: \"x\": executable file not found in $PATH", "no such file or
 * directory", "permission denied". ret_path receives the absolute path. */
int process_resolve_executable(const struct oci_process *p, char **ret_path, struct error *err);
/* rlimits, CPU affinity (execCPUAffinity.final, else every CPU), scheduler,
 * I/O priority, oom_score_adj: may run early (before waiting for start), in
 * the container's cgroups. */
int process_apply_limits(const struct oci_process *p, struct error *err);
/* In a user namespace: are process.user's uid, gid and additional gids
 * mapped there?  (setresuid() and setgroups() would refuse them after
 * start; runc refuses at create.) */
int user_check_mapped(const struct oci_user *u, struct error *err);
/* linux.personality, for the init and (as runc) every exec'd process. */
int process_set_personality(const struct oci_linux *l, struct error *err);
/* Every signal at its default action, none blocked: what a program started
 * by the runtime (the container's process, an exec'd one, a hook) begins with. */
void process_reset_signals(void);
/* create-cancelled: create (and run) take SIGHUP, SIGINT and SIGTERM (an engine's cancel, a
 * terminal's ^C) as "stop, clean up, fail".  process_cancel_arm() catches those that are at
 * their default (one the caller ignores stays ignored), without SA_RESTART; the waits that can
 * be long (a hook, the init's setup) see process_cancelled() (the signal, or 0) and fail.
 * process_cancel_hold() blocks them while the failure is cleaned up; process_cancel_commit()
 * ends it at success: -1 when a signal came first (they stay blocked: the caller fails), else
 * the old dispositions are back and a signal from then on does what it did before.
 * open_blocked (run-cancelled: a foreground run, which blocked every signal to forward it):
 * the three are open inside the waits even though the caller's mask blocks them. */
void process_cancel_arm(bool open_blocked);
int process_cancelled(void);
/* "cancelled by SIGTERM" (the signal process_cancelled() saw); returns -1 */
int process_cancel_error(struct error *err);
/* poll(), but a cancel signal that came before it or comes during it ends it: -1, EINTR
 * (a plain poll() when nothing is armed) */
struct pollfd;
int process_cancel_poll(struct pollfd *p, unsigned long n, int ms);
void process_cancel_hold(void);
int process_cancel_commit(void);
/* execCPUAffinity.initial: an exec's affinity before it joins the cgroups. */
int process_apply_cpu_initial(const struct oci_process *p, struct error *err);
/* Everything else and execve; returns only on failure. */
int process_exec(const struct oci_process *p, const char *resolved_path,
                 const struct process_opts *opts, struct error *err);

/* capabilities.c */
int caps_apply(const struct oci_caps *caps, bool has_caps, struct error *err);
/* Would caps_apply() be refused (capset's rules)?  For create's checks. */
int caps_check(const struct oci_caps *caps, bool has_caps, struct error *err);
/* effective := permitted (after setresuid() with PR_SET_KEEPCAPS cleared it),
 * e.g. to load a seccomp filter without no_new_privs (needs CAP_SYS_ADMIN). */
int caps_raise_effective(struct error *err);
/* seccomp_filter.c */
int seccomp_apply(const struct oci_seccomp *s, struct error *err);

/* hooks.c: run hooks in order; each gets argv = hook.args verbatim (argv[0]
 * from args, the binary from path), env = hook.env, or the runtime's own
 * environment when the hook has no env, cwd = dir (the bundle; NULL: ours),
 * the state JSON on stdin, and is killed after its timeout.  A failing hook
 * fails the call. */
int hooks_run(const struct oci_hook *hooks, size_t n, const char *phase, const char *dir,
              const char *state_json, struct error *err);

/* user.c: parse `exec --user uid[:gid]` strictly (CVE-2026-30892). */
int parse_user_spec(const char *s, uint32_t *ret_uid, uint32_t *ret_gid, bool *ret_has_gid,
                    struct error *err);
/* signals.c: "KILL", "SIGKILL", "9" -> 9; unknown -> error naming it. */
int parse_signal(const char *s, int *ret, struct error *err);

#endif
