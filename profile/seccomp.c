/* seccomp.c - the profile's own seccomp filter, stacked on the engine's.
 *
 * A deny list with default action SCMP_ACT_ALLOW: the engine's allowlist
 * still runs (both filters are loaded, the kernel takes the strictest
 * answer), this one only removes more.  Rules:
 *   - every name in seccomp.deny            -> ERRNO(errno, default EPERM)
 *   - clone with any CLONE_NEW* flag         -> ERRNO, one MASKED_EQ rule per flag
 *     (arguments of one rule are ANDed, so "any bit" needs one rule each);
 *     CLONE_NEWTIME is not a clone() flag (it overlaps the exit signal bits)
 *   - clone3                                -> ERRNO(ENOSYS): its flags live in
 *     memory seccomp cannot read; libc then falls back to clone (H9)
 *   - ioctl(fd, TIOCSTI)                    -> ERRNO (CVE-2017-5226, H19); the
 *     command is compared on its low 32 bits, as the kernel reads it.
 *   - socket(AF_VSOCK, ...)                 -> ERRNO(EAFNOSUPPORT): vsock has no
 *     network namespace, so a container's socket reaches the host's ports, the
 *     hypervisor (CID 2) and other guests past the netns and the egress
 *     allowlist (a container's listen on a port made the host's bind of it fail
 *     with EADDRINUSE).  EAFNOSUPPORT, not the profile's errno: it is what a
 *     kernel without vsock answers, and programs that probe for vsock handle
 *     it.  The family is compared on its low 32 bits.  On i386 the rule is on
 *     the direct socket call only (direct_only): socket through socketcall
 *     passes its arguments in memory, which seccomp cannot read, and refusing
 *     every socketcall(SYS_SOCKET) would take 32-bit programs' networking (glibc
 *     on i386 creates sockets that way).  socketcall stays a way to vsock on
 *     i386, as in Docker's default profile (THREAT-MODEL.md).
 *   - setsockopt(fd, IPPROTO_IP, IP_RECVERR) and (IPPROTO_IPV6, IPV6_RECVERR)
 *                                           -> ERRNO(0): the call returns 0
 *     and does nothing.  The error queue hands a socket the bytes an ICMP
 *     error quotes after the transport header and the address it came from;
 *     the ingress rules must let errors related to the container's flows in
 *     (path MTU discovery needs those of routers on the path), so any host
 *     that knows a flow's ports could put its own bytes into the container
 *     through them, past the allowlist (tests/bats/egress.bats "escape:
 *     icmp-error-inbound").  Success, not an error: glibc's resolver asks
 *     for the queue on every lookup and gives up when it is refused; a
 *     connected socket still gets a port unreachable as ECONNREFUSED.  Not
 *     a refusal the program sees, so not sent to the monitor as one
 *     (cli/create.c notify_variant keeps ERRNO(0) rules in the kernel).
 *     Direct calls only, as for vsock.
 *   - setgid, setregid, setresgid, setfsgid (and i386's *32 names) to
 *     SUBPROTO_NET_GID                        -> ERRNO: the group a sub-agent's
 *     slirp4netns runs as, by which the egress table sends its connections
 *     to the proxy's port for sub-agents (common/subproto.h).  Root with
 *     CAP_SETGID took it and had its own connections counted there (64 more
 *     connection processes outside its cgroup, past its own bound).  The
 *     rest of the ways to the group are shut already in the agent profile:
 *     a setgid file's group (no_new_privs) and a user namespace mapping it
 *     (namespaces denied); compared on the low 32 bits, as gid_t.
 * Architectures: the native ones of the build (a deny list must cover every
 * ABI the kernel accepts, or the other ABI would bypass it).  libseccomp
 * gives each name its number on every one of them (mount is 165 on x86_64,
 * 21 on i386, 0x40000000|165 on x32), but some operations have other names
 * on the 32-bit ABIs only: i386's umount, stime, clock_settime64 and
 * clock_adjtime64 reached the kernel from a 64-bit process through `int 0x80`
 * while umount2, settimeofday, clock_settime and clock_adjtime were denied
 * (tests/bats/audit-evidence.bats, abi-i386-bypass).  A denied name therefore
 * brings the other names of its operation (same_call) into its rule; names an
 * architecture lacks are skipped for it (container/seccomp_filter.c).
 */
#include <errno.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "profile/internal.h"

#include "common/subproto.h"
#include "common/util.h"

static const uint64_t clone_ns_flags[] = {CLONE_NEWNS,  CLONE_NEWCGROUP, CLONE_NEWUTS,
                                          CLONE_NEWIPC, CLONE_NEWUSER,   CLONE_NEWPID,
                                          CLONE_NEWNET};

static const char *const native_arches[] = {
#if defined(__x86_64__)
    "SCMP_ARCH_X86_64",
    "SCMP_ARCH_X86",
    "SCMP_ARCH_X32",
#elif defined(__aarch64__)
    "SCMP_ARCH_AARCH64",
    "SCMP_ARCH_ARM",
#elif defined(__i386__)
    "SCMP_ARCH_X86",
#elif defined(__arm__)
    "SCMP_ARCH_ARM",
#endif
    NULL,
};

/* Names of one operation: denying one denies all (each is a name on some ABI
 * the filter admits; see the comment at the top). */
static const char *const same_call[][3] = {
    {"umount2", "umount", NULL},
    {"settimeofday", "stime", NULL},
    {"clock_settime", "clock_settime64", NULL},
    {"clock_adjtime", "clock_adjtime64", NULL},
    {"open_tree", "open_tree_attr", NULL}, /* open_tree + mount_setattr in one (Linux 6.15) */
    {"quotactl", "quotactl_fd", NULL},     /* the same commands, on a file's filesystem */
    {"ptrace", "pidfd_getfd", NULL},       /* another process's fd, by ptrace's access check */
};

static struct oci_seccomp_syscall *add_rule(struct oci_seccomp *s, const char *name,
                                            uint32_t errno_ret)
{
  struct oci_seccomp_syscall *sc;

  s->syscalls = xrealloc(s->syscalls, (s->n_syscalls + 1) * sizeof *s->syscalls);
  sc = &s->syscalls[s->n_syscalls++];
  memset(sc, 0, sizeof *sc);
  strv_push(&sc->names, name);
  sc->action = xstrdup("SCMP_ACT_ERRNO");
  sc->has_errno_ret = true;
  sc->errno_ret = errno_ret;
  return sc;
}

/* The other names of SC's operation, unless DENY lists them itself. */
static void add_other_names(struct oci_seccomp_syscall *sc, char **deny)
{
  for (size_t g = 0; g < ARRAY_SIZE(same_call); g++) {
    bool member = false;

    for (size_t k = 0; k < ARRAY_SIZE(same_call[g]) && same_call[g][k] != NULL; k++)
      member |= streq(same_call[g][k], sc->names[0]);
    if (!member)
      continue;
    for (size_t k = 0; k < ARRAY_SIZE(same_call[g]) && same_call[g][k] != NULL; k++)
      if (!strv_contains(deny, same_call[g][k]))
        strv_push(&sc->names, same_call[g][k]);
  }
}

static void add_arg(struct oci_seccomp_syscall *sc, uint32_t index, uint64_t mask, uint64_t value)
{
  sc->args = xrealloc(sc->args, (sc->n_args + 1) * sizeof *sc->args);
  sc->args[sc->n_args++] = (struct oci_seccomp_arg){
      .index = index, .value = mask, .value_two = value, .op = xstrdup("SCMP_CMP_MASKED_EQ")};
}

struct oci_seccomp *profile_seccomp_build(const struct agent_profile *p)
{
  uint32_t eno = p->seccomp.errno_ret ? p->seccomp.errno_ret : EPERM;
  struct oci_seccomp_syscall *sc;
  struct oci_seccomp *s;

  if (!p->seccomp.enabled)
    return NULL;
  s = xmalloc0(sizeof *s);
  s->default_action = xstrdup("SCMP_ACT_ALLOW");
  for (size_t i = 0; native_arches[i] != NULL; i++)
    strv_push(&s->architectures, native_arches[i]);
  for (size_t i = 0; p->seccomp.deny != NULL && p->seccomp.deny[i] != NULL; i++)
    add_other_names(add_rule(s, p->seccomp.deny[i], eno), p->seccomp.deny);
  if (p->seccomp.deny_clone_namespaces) {
    for (size_t i = 0; i < ARRAY_SIZE(clone_ns_flags); i++)
      add_arg(add_rule(s, "clone", eno), 0, clone_ns_flags[i], clone_ns_flags[i]);
    add_rule(s, "clone3", ENOSYS);
  }
  {
    static const struct {
      const char *name, *name32;
      uint32_t n_args;
    } set_gid[] = {{"setgid", "setgid32", 1},
                   {"setregid", "setregid32", 2},
                   {"setresgid", "setresgid32", 3},
                   {"setfsgid", "setfsgid32", 1}};
    for (size_t i = 0; i < ARRAY_SIZE(set_gid); i++)
      for (uint32_t a = 0; a < set_gid[i].n_args; a++) {
        sc = add_rule(s, set_gid[i].name, eno);
        strv_push(&sc->names, set_gid[i].name32);
        add_arg(sc, a, UINT32_MAX, SUBPROTO_NET_GID);
      }
  }
  if (p->seccomp.deny_tiocsti)
    add_arg(add_rule(s, "ioctl", eno), 1, UINT32_MAX, TIOCSTI);
  if (p->seccomp.deny_vsock) {
    sc = add_rule(s, "socket", EAFNOSUPPORT);
    add_arg(sc, 0, UINT32_MAX, AF_VSOCK);
    sc->direct_only = true;
  }
  if (p->seccomp.deny_recverr) {
    static const uint32_t level_opt[2][2] = {{IPPROTO_IP, IP_RECVERR},
                                             {IPPROTO_IPV6, IPV6_RECVERR}};
    for (size_t i = 0; i < ARRAY_SIZE(level_opt); i++) {
      sc = add_rule(s, "setsockopt", 0);
      add_arg(sc, 1, UINT32_MAX, level_opt[i][0]);
      add_arg(sc, 2, UINT32_MAX, level_opt[i][1]);
      sc->direct_only = true;
    }
  }
  return s;
}

bool profile_denies_ptrace(const struct agent_profile *p)
{
  return p->seccomp.enabled && strv_contains(p->seccomp.deny, "ptrace");
}
