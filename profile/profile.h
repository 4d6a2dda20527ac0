/* profile.h - the agent profile: safe defaults applied to whatever an engine asks.
 *
 * A profile is a JSON document (see docs in profile/builtin.c for the `agent`
 * profile, which is also the base every operator profile extends unless it says
 * "extends": "oci").  Applying one is a pure function:
 *
 *   (engine config, profile, run.agentrt.* annotations)
 *       -> (final config, list of changes, runtime directives) or a refusal
 *
 * Nothing in profile/ makes a syscall except profile/load.c, which reads a
 * profile file.  The runtime consumes the final config as usual plus the
 * directives in struct profile_result that a config.json cannot express.
 *
 * Markers in the final config (the runtime must understand them; a runtime
 * that does not fails to mount them, i.e. fails closed):
 *
 * - Overlay workspace.  The engine's bind mount at the workspace path is
 *   replaced, at the same position in mounts[], by
 *     { destination: <workspace>, type: "overlay", source: <host dir>,
 *       options: ["x-agentrt.workspace=overlay", "nosuid", "nodev"] }
 *   The source is the host directory the engine bound there; it becomes the
 *   overlay's lowerdir.  The runtime creates upper/ and work/ under its state
 *   directory and mounts overlayfs at the destination instead of the bind.
 *   The same values are in profile_result.workspace (mode, path, lowerdir).
 *
 * - Protected paths, bind mode only (overlay mode decides at review time:
 *   profile_result.workspace.review_protected, workspace/protect.c).  For git's
 *   configuration, hooks and redirections (.git/hooks, .git/config, .git/info,
 *   .git/modules, .git/worktrees, .git/objects/info, .git/commondir,
 *   .gitmodules) and each entry of workspace.protected, appended at the end of
 *   mounts[] (so after any mount under the workspace):
 *     { destination: <workspace>/<rel>, type: "agentrt-protect",
 *       source: "agentrt-protect",
 *       options: ["x-agentrt.protect=dir" | "x-agentrt.protect=file",
 *                 ["x-agentrt.protect=existing",] "ro", "nosuid", "nodev", "noexec"] }
 *   The runtime resolves the destination inside the rootfs (safepath); with
 *   `existing` a missing path is skipped, without it the missing directories
 *   and an empty directory or file of the given kind are created; then the
 *   path is bind-mounted onto itself read-only.  They are listed in
 *   profile_result.workspace.protected too.
 *
 * - The profile's seccomp filter is not merged into linux.seccomp: it is
 *   profile_result.extra_seccomp, a second deny-list filter (default action
 *   SCMP_ACT_ALLOW) the runtime loads after the engine's own; the kernel runs
 *   both and the stricter answer wins.
 */
#ifndef AGENTRT_PROFILE_H
#define AGENTRT_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "oci/config.h"

#define PROFILE_DIR "/etc/agentrt/profiles"
#define PROFILE_DEFAULT "agent"
#define PROFILE_ANNOTATION_PREFIX "run.agentrt."

#define PROFILE_OPT_WORKSPACE "x-agentrt.workspace=overlay"
#define PROFILE_PROTECT_TYPE "agentrt-protect"
#define PROFILE_OPT_PROTECT_DIR "x-agentrt.protect=dir"
#define PROFILE_OPT_PROTECT_FILE "x-agentrt.protect=file"
#define PROFILE_OPT_PROTECT_EXISTING "x-agentrt.protect=existing"
#define PROFILE_HOME_TOKEN "$HOME" /* scratch path meaning the process user's home */

enum profile_ws_mode {
  PROFILE_WS_NONE,    /* leave the workspace path alone (the `oci` profile) */
  PROFILE_WS_AUTO,    /* overlay when the engine bound a host dir there, else tmpfs */
  PROFILE_WS_TMPFS,   /* size-limited scratch workspace */
  PROFILE_WS_OVERLAY, /* host dir as lowerdir, writes kept by agentrt until commit */
  PROFILE_WS_BIND,    /* the engine's bind as is, made nosuid,nodev */
};

enum profile_egress_default {
  PROFILE_EGRESS_OFF,   /* no egress policy at all (the `oci` profile) */
  PROFILE_EGRESS_DENY,  /* deny by default, allow[] only */
  PROFILE_EGRESS_ALLOW, /* allow by default */
};

struct profile_scratch {
  char *path;    /* absolute, or PROFILE_HOME_TOKEN */
  uint64_t size; /* bytes */
  uint32_t mode; /* tmpfs root mode, e.g. 01777 */
  bool noexec;
};

/* A default (applied when the engine set nothing) and a ceiling (an engine
 * value above it is refused).  cpus are in millicpus (1000 = one CPU). */
struct profile_limit {
  bool has_default, has_max;
  uint64_t def, max;
};

struct profile_retention {
  uint64_t max_size; /* bytes, 0 = unbounded */
  uint64_t max_age;  /* seconds, 0 = unbounded */
};

/* egress.http: what terminated requests to a host may be (the TLS proxy,
 * monitor/tls_proxy.h, terminates the hosts named here as it does those of
 * secrets).  Empty methods or paths: any. */
struct profile_http_rule {
  char *host;     /* a name or "*." + a domain, as secrets' hosts */
  char **methods; /* "GET", "POST" */
  char **paths;   /* prefixes of the path ("/v1/"), the query not included */
};

struct profile_egress {
  enum profile_egress_default def;
  char **allow;        /* entries as written: "pypi.org", "*.x.org:443", "192.0.2.0/24" */
  char **dns_upstream; /* NULL/empty = the host's resolvers */
  /* dns.upstreamNetns: the network namespace (a path) the resolver's upstream
   * sockets are made in, NULL = the runtime's; a sub-agent's resolver asks
   * its parent's at 127.0.0.1 there (monitor/subagents.h) */
  char *dns_upstream_netns;
  bool allow_private_answers;
  /* dns.ttlMin/ttlMax (seconds): how long a resolved address stays pinned,
   * the upstream's TTL clamped to it; unset = 5 and 3600 */
  bool has_ttl_min, has_ttl_max;
  uint64_t ttl_min, ttl_max;
  /* the profile's "ingress" object (only with an egress policy: the same
   * table): new inbound connections refused unless the port is listed */
  bool ingress_default_allow;
  char **ingress_allow; /* "8080/tcp", "8000-8100/udp", "9090" */
  /* egress.tls.upstreamCA: a host file of PEM certificates the monitor's
   * TLS proxy trusts for upstreams besides the host's store; NULL = none */
  char *tls_upstream_ca;
  struct profile_http_rule *http;
  size_t n_http;
};

/* The in-container API for sub-agents (docs/subagents.md): off, or on
 * with at most max_children live children and max_depth generations
 * below this container (a child gets max_depth - 1). */
struct profile_subagents {
  bool enabled;
  uint64_t max_children;
  uint64_t max_depth;
};
/* One entry of the "secrets" section: a credential the container sees only as
 * a placeholder.  The value is in `file` on the host; the monitor reads it
 * (profile/ never does) and substitutes it for the placeholder in request
 * headers to `hosts` only.  NAME=<placeholder> is added to the process's
 * environment by create (a random value per container, placeholder below). */
struct profile_secret {
  char *name;        /* environment variable name */
  char *file;        /* absolute host path */
  char **hosts;      /* "api.example.com", "*.example.org" (any name below it) */
  char *header;      /* request header the value goes in; default "Authorization" */
  char *format;      /* the header's value with one "%s" for the secret, NULL = "%s" */
  char *placeholder; /* profile_result only: set by create, NULL in a profile */
};
#define PROFILE_SECRETS_MAX 32
#define PROFILE_SECRET_HEADER_DEFAULT "Authorization"

struct profile_audit {
  bool enabled;
  char *dir; /* NULL = in the data directory (datadir/datadir.h) */
  uint64_t max_size;
  uint64_t max_age;
};

/* What run.agentrt.* annotations may loosen, and how far. */
struct profile_loosen {
  bool has_memory, has_pids, has_cpus, has_workspace_size;
  uint64_t memory, pids, cpus, workspace_size;
  unsigned workspace_modes; /* bit (1u << enum profile_ws_mode) */
  char **egress_allow;      /* fnmatch(3) patterns an added entry must match */
  char **ingress_allow;     /* fnmatch(3) patterns a run.agentrt.ingress port must match */
};

struct agent_profile {
  char *name;
  char *description;
  bool rootfs_readonly;
  struct {
    char *path;
    enum profile_ws_mode mode;
    uint64_t size;    /* tmpfs mode */
    char **protected; /* relative; trailing '/' = directory, else file */
    struct profile_retention retention;
    bool volatile_upper; /* overlay "volatile": no syncs of the upper layer's file system */
  } workspace;
  struct profile_scratch *scratch;
  size_t n_scratch;
  struct {
    bool enforce;     /* false: leave process.capabilities alone */
    uint64_t ceiling; /* may be kept */
    uint64_t trim;    /* dropped (recorded) when an engine grants them by default */
  } caps;
  bool no_new_privileges;
  char *apparmor_profile; /* process.apparmorProfile when the engine set none and the
                             host has AppArmor (profile_apply_apparmor); NULL = none */
  struct {
    char **defaults;    /* "NAME=VALUE", set unless the engine's env has NAME */
    char **path_append; /* directories added to the end of PATH */
  } env; /* "$HOME" in a value: the process's writable home (entry skipped without one) */
  struct {
    bool enabled;
    uint32_t errno_ret;
    char **deny;                /* plain syscall names */
    bool deny_clone_namespaces; /* clone with CLONE_NEW* flags, clone3 -> ENOSYS */
    bool deny_tiocsti;
    bool deny_vsock;   /* socket(AF_VSOCK): not network-namespaced */
    bool deny_recverr; /* setsockopt IP_RECVERR, IPV6_RECVERR: ICMP errors' quoted bytes */
  } seccomp;
  struct {
    unsigned required; /* bit (1u << enum oci_ns_type): must not be the host's */
    unsigned joinable; /* may be joined by path (pod sandboxes) */
  } namespaces;
  bool devices_restrict;
  char **masked_paths;
  char **readonly_paths;
  struct {
    char **deny_sockets;   /* engine sockets: exact paths (and their ancestors) */
    char **deny_basenames; /* socket file names refused anywhere */
    bool harden_binds;     /* every host bind gets nosuid,nodev */
    bool readonly_binds;   /* other host binds become read-only */
    char **writable_binds; /* ... except these destinations */
  } mounts;
  struct {
    struct profile_limit memory, pids, cpus;
  } resources;
  struct profile_egress egress;
  struct profile_secret *secrets;
  size_t n_secrets;
  struct profile_audit audit;
  /* `agentrt sandbox`: what of the user's home is bound in, read-only
   * (relative paths; a directory is bound file by file), and what is never
   * bound, on top of the built-in list (profile_home_denied). */
  struct {
    char **home;
    char **home_deny;
  } sandbox;
  struct profile_subagents subagents;
  struct {
    bool apply; /* false: run.agentrt.* annotations are ignored (the `oci` profile) */
    struct profile_loosen loosen;
  } annotations;
};

enum profile_change_kind {
  PROFILE_CHANGE_CONFIG,  /* the final config differs from the engine's here */
  PROFILE_CHANGE_RUNTIME, /* enforced by the runtime outside config.json */
};

struct profile_change {
  enum profile_change_kind kind;
  char *field;     /* "linux.resources.memory.limit", "mounts[/tmp]" */
  char *old_value; /* NULL = unset */
  char *new_value; /* NULL = removed */
  char *reason;
};

struct profile_protected {
  char *path; /* absolute, inside the container */
  bool dir;
};

struct profile_result {
  char *profile;
  struct profile_change *changes;
  size_t n_changes;
  struct oci_seccomp *extra_seccomp; /* NULL: none */
  struct {
    enum profile_ws_mode mode; /* NONE, TMPFS, OVERLAY or BIND */
    char *path;
    char *lowerdir;     /* OVERLAY: the host directory */
    uint64_t size;      /* TMPFS: the tmpfs; OVERLAY: the upper layer's hard limit */
    bool size_explicit; /* run.agentrt.workspace.size set it (refuse if not enforceable) */
    bool readonly;
    struct profile_protected *protected; /* BIND: the read-only binds */
    size_t n_protected;
    char **review_protected; /* OVERLAY: the profile's list, relative (workspace/protect.c) */
    struct profile_retention retention;
    bool volatile_upper; /* OVERLAY: mount it "volatile" */
  } workspace;
  struct profile_egress egress; /* annotations applied */
  /* the secrets this container gets (the profile's, or those named by
   * run.agentrt.secrets); placeholder NULL until create sets it */
  struct profile_secret *secrets;
  size_t n_secrets;
  struct profile_audit audit;
  struct profile_subagents subagents;
  /* With sub-agents on: the profile as loaded by name, rendered (the
   * children's profile, <state dir>/subagent-profile.json), so create need
   * not load it a second time; NULL when the caller gave the profile. */
  char *subagent_json;
  size_t subagent_len;
  /* A namespace is joined by path: the runtime must check (by inode) that it
   * is not one of its own, i.e. not the host's. */
  bool check_joined_ns;
  /* The profile hardens binds: a bind keeps its source's flags that the
   * options do not name (runc's bind remount would clear them). */
  bool keep_bind_flags;
};

/* Parse a profile document.  `file` names it in errors ("profile.json:
 * capabilities.ceiling[2]: unknown capability FOO").  Fields not given keep
 * the value of the base profile named by "extends" (default "agent"). */
int profile_parse(const char *json, size_t len, const char *file, struct agent_profile **ret,
                  struct error *err);
/* Built-in profiles: "agent" and "oci".  NULL when unknown. */
const char *profile_builtin_json(const char *name);
/* The profile's filter refuses ptrace (`agent-strict`; `agent` allows it). */
bool profile_denies_ptrace(const struct agent_profile *p);
/* env.defaults and env.pathAppend for a process of `exec --process`. */
void profile_env_process(struct oci_process *proc, const struct agent_profile *p);
int profile_builtin(const char *name, struct agent_profile **ret, struct error *err);
/* name -> built-in, else PROFILE_DIR/NAME.json, else a path (load.c: the
 * only file of profile/ doing I/O). */
int profile_load(const char *name_or_path, struct agent_profile **ret, struct error *err);
void profile_free(struct agent_profile *p);
/* The effective profile as JSON (`agentrt profile show`). */
int profile_to_json(const struct agent_profile *p, char **ret_json, size_t *ret_len,
                    struct error *err);

/* Apply p to `in` (annotations taken from in->annotations).  On success
 * *ret_out is a new config and *ret_result the changes and directives; on a
 * refusal returns -1 with err naming the rule ("agent profile: ..."). */
int profile_apply(const struct oci_config *in, const struct agent_profile *p,
                  struct oci_config **ret_out, struct profile_result **ret_result,
                  struct error *err);
/* The same capability and no_new_privileges rules for `exec --process`,
 * in place. */
int profile_apply_process(struct oci_process *proc, const struct agent_profile *p,
                          struct error *err);
void profile_result_free(struct profile_result *r);
/* The profile's default AppArmor profile: set in c->process when the engine
 * named none and host_has_apparmor (the runtime asks the host; without
 * AppArmor the default is skipped, as engines skip theirs), recorded in r. */
void profile_apply_apparmor(struct oci_config *c, const struct agent_profile *p,
                            bool host_has_apparmor, struct profile_result *r);

/* `agentrt explain`: text (one change per line) and JSON renderings. */
char *profile_changes_text(const struct profile_result *r);
int profile_changes_json(const struct profile_result *r, char **ret_json, size_t *ret_len,
                         struct error *err);
/* The text of profile_changes_text from what profile_changes_json wrote:
 * the state dir keeps profile.json only, `explain` renders the text. */
int profile_changes_text_from_json(const char *json, char **ret, struct error *err);

/* The names of the profile's secrets, NULL-terminated (free with
 * strv_free); an empty list when it has none. */
char **profile_secret_names(const struct agent_profile *p);
/* The entry named `name`, NULL when the profile has none of that name. */
const struct profile_secret *profile_secret_find(const struct agent_profile *p, const char *name);
/* host (a server name, any case, no port) is one of s->hosts: equal, or below
 * a "*." entry ("*.example.org" matches "a.example.org", not "example.org"). */
bool profile_secret_host_match(const struct profile_secret *s, const char *host);
/* The rule for host (a server name), NULL = none. */
const struct profile_http_rule *profile_http_rule_find(const struct profile_egress *e,
                                                       const char *host);
/* A request (method, path without the query) the rule allows. */
bool profile_http_rule_allows(const struct profile_http_rule *r, const char *method,
                              size_t method_len, const char *path, size_t path_len);
void profile_secret_copy(struct profile_secret *d, const struct profile_secret *s);
void profile_secret_clear(struct profile_secret *s);

/* Marker helpers for the runtime. */
bool profile_mount_is_workspace(const struct oci_mount *m);
/* 'd' or 'f' for a protected-path marker mount, 0 otherwise. */
int profile_mount_protect_kind(const struct oci_mount *m);
/* A protected-path marker that binds only what exists (bind mode). */
bool profile_mount_protect_existing(const struct oci_mount *m);

/* "512m", "2g", "1GiB", "4096" -> bytes. */
int profile_parse_size(const char *s, uint64_t *ret);
/* "90s", "15m", "2h", "30d", "1w", "3600" -> seconds. */
int profile_parse_duration(const char *s, uint64_t *ret);
/* "1.5" -> 1500 millicpus. */
int profile_parse_cpus(const char *s, uint64_t *ret);
const char *profile_ws_mode_name(enum profile_ws_mode m);

/* The home's deny list (home.c), which wins over sandbox.home and
 * `sandbox --dotfile`: credentials (.ssh, .aws, .config/gcloud, .kube,
 * .docker, .netrc, .git-credentials, .npmrc, .gnupg ...), browser profiles and
 * shell histories, matched on whole path components without regard to case,
 * plus credential file names anywhere below the home (id_rsa*, *_history,
 * credentials ...).  rel is relative to the home; extra is the profile's
 * sandbox.homeDeny.  Returns the entry or pattern that denies rel, or NULL. */
const char *profile_home_denied(const char *rel, char *const *extra);
/* rel as a normalised relative path ("a/b": no leading '/', no `.`, `..` or
 * empty components); NULL when it cannot be one. */
char *profile_home_normalize(const char *rel);
/* The built-in deny list, NULL-terminated (for `--help` and the docs). */
extern const char *const profile_home_deny_builtin[];
int profile_ws_mode_from_name(const char *s); /* -1 unknown */

#endif
