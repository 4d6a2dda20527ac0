/* seccomp_filter.c - linux.seccomp with libseccomp (see seccomp_filter.h).
 *
 * Semantics follow runc/crun so that Docker's and containerd's profiles
 * behave the same: unknown syscall names are skipped (logged at debug), a
 * rule whose action equals the default action is dropped, errnoRet defaults
 * to EPERM, several conditions on the same argument index become separate
 * rules (OR, as Docker's profile expects) while conditions on distinct
 * indexes are ANDed in one rule, syscalls newer than the profile get ENOSYS
 * (see below).  SCMP_ACT_NOTIFY loads the filter with a listener whose fd
 * goes to the agent on listenerPath (seccomp_notify.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "common/util.h"
#include "container/process.h"
#include "container/seccomp_filter.h"
#include "os/syscall_late.h"

#define MAX_SYSCALL_ARGS 6

static void cleanup_scmp(scmp_filter_ctx *ctx)
{
  if (*ctx != NULL)
    seccomp_release(*ctx);
}
#define cleanup_scmp_ctx __attribute__((cleanup(cleanup_scmp)))

static const struct {
  const char *name;
  uint32_t arch;
} arch_names[] = {
    {"SCMP_ARCH_X86", SCMP_ARCH_X86},
    {"SCMP_ARCH_X86_64", SCMP_ARCH_X86_64},
    {"SCMP_ARCH_X32", SCMP_ARCH_X32},
    {"SCMP_ARCH_ARM", SCMP_ARCH_ARM},
    {"SCMP_ARCH_AARCH64", SCMP_ARCH_AARCH64},
    {"SCMP_ARCH_MIPS", SCMP_ARCH_MIPS},
    {"SCMP_ARCH_MIPS64", SCMP_ARCH_MIPS64},
    {"SCMP_ARCH_MIPS64N32", SCMP_ARCH_MIPS64N32},
    {"SCMP_ARCH_MIPSEL", SCMP_ARCH_MIPSEL},
    {"SCMP_ARCH_MIPSEL64", SCMP_ARCH_MIPSEL64},
    {"SCMP_ARCH_MIPSEL64N32", SCMP_ARCH_MIPSEL64N32},
    {"SCMP_ARCH_PPC", SCMP_ARCH_PPC},
    {"SCMP_ARCH_PPC64", SCMP_ARCH_PPC64},
    {"SCMP_ARCH_PPC64LE", SCMP_ARCH_PPC64LE},
    {"SCMP_ARCH_S390", SCMP_ARCH_S390},
    {"SCMP_ARCH_S390X", SCMP_ARCH_S390X},
    {"SCMP_ARCH_PARISC", SCMP_ARCH_PARISC},
    {"SCMP_ARCH_PARISC64", SCMP_ARCH_PARISC64},
    {"SCMP_ARCH_RISCV64", SCMP_ARCH_RISCV64},
#ifdef SCMP_ARCH_LOONGARCH64
    {"SCMP_ARCH_LOONGARCH64", SCMP_ARCH_LOONGARCH64},
#endif
#ifdef SCMP_ARCH_M68K
    {"SCMP_ARCH_M68K", SCMP_ARCH_M68K},
#endif
};

static const struct {
  const char *name;
  enum scmp_compare op;
} op_names[] = {
    {"SCMP_CMP_NE", SCMP_CMP_NE},
    {"SCMP_CMP_LT", SCMP_CMP_LT},
    {"SCMP_CMP_LE", SCMP_CMP_LE},
    {"SCMP_CMP_EQ", SCMP_CMP_EQ},
    {"SCMP_CMP_GE", SCMP_CMP_GE},
    {"SCMP_CMP_GT", SCMP_CMP_GT},
    {"SCMP_CMP_MASKED_EQ", SCMP_CMP_MASKED_EQ},
};

/* `what` names the rule for messages ("defaultAction", "syscall `mkdir`"). */
static int parse_action(const char *name, bool has_errno, uint32_t errno_ret, const char *what,
                        uint32_t *ret, struct error *err)
{
  uint32_t e = has_errno ? errno_ret : EPERM;

  if (name == NULL)
    return error_set(err, 0, "seccomp: %s: missing action", what);
  if ((streq(name, "SCMP_ACT_ERRNO") || streq(name, "SCMP_ACT_TRACE")) && e > 0xffff)
    return error_set(err, 0, "seccomp: %s: errnoRet %u out of range", what, e);
  if (streq(name, "SCMP_ACT_ALLOW"))
    *ret = SCMP_ACT_ALLOW;
  else if (streq(name, "SCMP_ACT_ERRNO"))
    *ret = SCMP_ACT_ERRNO(e);
  else if (streq(name, "SCMP_ACT_KILL") || streq(name, "SCMP_ACT_KILL_THREAD"))
    *ret = SCMP_ACT_KILL_THREAD;
  else if (streq(name, "SCMP_ACT_KILL_PROCESS"))
    *ret = SCMP_ACT_KILL_PROCESS;
  else if (streq(name, "SCMP_ACT_TRAP"))
    *ret = SCMP_ACT_TRAP;
  else if (streq(name, "SCMP_ACT_TRACE"))
    *ret = SCMP_ACT_TRACE(e);
  else if (streq(name, "SCMP_ACT_LOG"))
    *ret = SCMP_ACT_LOG;
  else if (streq(name, SECCOMP_ACT_NOTIFY_INTERNAL))
    *ret = SCMP_ACT_NOTIFY; /* the profile's filter for the monitor (never from a config) */
  else if (streq(name, "SCMP_ACT_NOTIFY"))
    *ret = SCMP_ACT_NOTIFY;
  else
    return error_set(err, 0, "seccomp: %s: unknown action `%s`", what, name);
  return 0;
}

static int add_architectures(scmp_filter_ctx ctx, char **archs, struct error *err)
{
  for (size_t i = 0; archs != NULL && archs[i] != NULL; i++) {
    size_t j;
    int r;

    for (j = 0; j < ARRAY_SIZE(arch_names); j++)
      if (streq(archs[i], arch_names[j].name))
        break;
    if (j == ARRAY_SIZE(arch_names))
      return error_set(err, 0, "seccomp: unknown architecture `%s`", archs[i]);
    r = seccomp_arch_add(ctx, arch_names[j].arch);
    if (r < 0 && r != -EEXIST)
      return error_set(err, -r, "seccomp: add architecture `%s`", archs[i]);
  }
  return 0;
}

static int set_attr(scmp_filter_ctx ctx, enum scmp_filter_attr attr, const char *name,
                    struct error *err)
{
  int r = seccomp_attr_set(ctx, attr, 1);

  if (r < 0)
    return error_set(err, -r, "seccomp: flag `%s`", name);
  return 0;
}

static int apply_flags(scmp_filter_ctx ctx, char **flags, struct error *err)
{
  for (size_t i = 0; flags != NULL && flags[i] != NULL; i++) {
    const char *f = flags[i];
    int r = 0;

    if (streq(f, "SECCOMP_FILTER_FLAG_TSYNC"))
      r = set_attr(ctx, SCMP_FLTATR_CTL_TSYNC, f, err);
    else if (streq(f, "SECCOMP_FILTER_FLAG_LOG"))
      r = set_attr(ctx, SCMP_FLTATR_CTL_LOG, f, err);
    else if (streq(f, "SECCOMP_FILTER_FLAG_SPEC_ALLOW"))
      r = set_attr(ctx, SCMP_FLTATR_CTL_SSB, f, err);
    else if (streq(f, "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV"))
      log_debug("seccomp: flag %s only matters with a listener, ignoring", f);
    else
      return error_set(err, 0, "seccomp: unknown flag `%s`", f);
    if (r < 0)
      return r;
  }
  return 0;
}

int seccomp_kernel_flags(const struct oci_seccomp *s, unsigned *ret, struct error *err)
{
  unsigned flags = 0;

  for (size_t i = 0; s != NULL && s->flags != NULL && s->flags[i] != NULL; i++) {
    const char *f = s->flags[i];

    if (streq(f, "SECCOMP_FILTER_FLAG_TSYNC"))
      flags |= SECCOMP_FILTER_FLAG_TSYNC;
    else if (streq(f, "SECCOMP_FILTER_FLAG_LOG"))
      flags |= SECCOMP_FILTER_FLAG_LOG;
    else if (streq(f, "SECCOMP_FILTER_FLAG_SPEC_ALLOW"))
      flags |= SECCOMP_FILTER_FLAG_SPEC_ALLOW;
    else if (!streq(f, "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV"))
      return error_set(err, 0, "seccomp: unknown flag `%s`", f);
  }
  *ret = flags;
  return 0;
}

static int parse_arg(const struct oci_seccomp_arg *a, const char *sysname, struct scmp_arg_cmp *ret,
                     struct error *err)
{
  size_t j;

  if (a->index >= MAX_SYSCALL_ARGS)
    return error_set(err, 0, "seccomp: syscall `%s`: argument index %u out of range", sysname,
                     a->index);
  for (j = 0; j < ARRAY_SIZE(op_names); j++)
    if (streq(a->op, op_names[j].name))
      break;
  if (j == ARRAY_SIZE(op_names))
    return error_set(err, 0, "seccomp: syscall `%s`: unknown operator `%s`", sysname,
                     a->op ? a->op : "");
  /* For MASKED_EQ the spec's value is the mask and valueTwo the value,
   * which is also libseccomp's datum_a/datum_b order. */
  *ret = (struct scmp_arg_cmp){
      .arg = a->index, .op = op_names[j].op, .datum_a = a->value, .datum_b = a->value_two};
  return 0;
}

/* Several comparisons on one argument index cannot be ANDed in one
 * libseccomp rule; runc then adds one rule per comparison. */
static bool args_repeat_index(const struct oci_seccomp_syscall *sc)
{
  unsigned seen = 0;

  for (size_t i = 0; i < sc->n_args; i++) {
    unsigned bit = sc->args[i].index < 32 ? 1u << sc->args[i].index : 0;
    if (seen & bit)
      return true;
    seen |= bit;
  }
  return false;
}

static int add_syscall(scmp_filter_ctx ctx, uint32_t action, const struct oci_seccomp_syscall *sc,
                       const char *name, struct error *err)
{
  struct scmp_arg_cmp cmp[MAX_SYSCALL_ARGS * 4];
  int nr = seccomp_syscall_resolve_name(name);
  int r = 0;

  if (nr == __NR_SCMP_ERROR) {
    /* a call newer than libseccomp without conditions: late_prefix() has it */
    if (syscall_late_nr(name) < 0 || sc->n_args > 0)
      log_debug("seccomp: unknown syscall `%s`%s, ignoring", name,
                sc->n_args > 0 ? " with argument conditions" : "");
    return 0;
  }
  if (sc->n_args > ARRAY_SIZE(cmp))
    return error_set(err, 0, "seccomp: syscall `%s`: too many argument conditions", name);
  for (size_t i = 0; i < sc->n_args; i++)
    if (parse_arg(&sc->args[i], name, &cmp[i], err) < 0)
      return -1;
  if (sc->n_args == 0 || !args_repeat_index(sc)) {
    r = seccomp_rule_add_array(ctx, action, nr, (unsigned)sc->n_args, cmp);
  } else {
    for (size_t i = 0; i < sc->n_args && r >= 0; i++)
      r = seccomp_rule_add_array(ctx, action, nr, 1, &cmp[i]);
  }
  if (r < 0)
    return error_set(err, -r, "seccomp: add rule for syscall `%s`", name);
  return 0;
}

/* libseccomp numbers a call that ARCH multiplexes (socket through socketcall,
 * semop through ipc on i386: -1xx, -2xx) apart from one it lacks (-10000 and
 * below, skipped by libseccomp itself). */
static bool multiplexed_on(uint32_t arch, const char *name)
{
  int nr = seccomp_syscall_resolve_name_arch(arch, name);

  return nr <= -100 && nr > -10000;
}

/* ARCH, if a direct_only rule's call is multiplexed on it, else 0: its
 * filter is built apart, without that rule (oci/config.h). */
static uint32_t skip_on(const struct oci_seccomp *s, uint32_t arch)
{
  for (size_t i = 0; i < s->n_syscalls; i++)
    for (size_t j = 0;
         s->syscalls[i].direct_only && s->syscalls[i].names && s->syscalls[i].names[j] != NULL; j++)
      if (multiplexed_on(arch, s->syscalls[i].names[j]))
        return arch;
  return 0;
}

/* SKIP: the one architecture of CTX on which direct_only rules are left out
 * where multiplexed, or 0. */
static int add_rules(scmp_filter_ctx ctx, uint32_t def_action, const struct oci_seccomp *s,
                     uint32_t skip, struct error *err)
{
  for (size_t i = 0; i < s->n_syscalls; i++) {
    const struct oci_seccomp_syscall *sc = &s->syscalls[i];
    const char *first = sc->names && sc->names[0] ? sc->names[0] : "";
    cleanup_free char *what = xfmt("syscall `%s`", first);
    uint32_t action;

    if (parse_action(sc->action, sc->has_errno_ret, sc->errno_ret, what, &action, err) < 0)
      return -1;
    if (action == def_action) /* libseccomp refuses it; it changes nothing */
      continue;
    for (size_t j = 0; sc->names != NULL && sc->names[j] != NULL; j++) {
      if (skip != 0 && sc->direct_only && multiplexed_on(skip, sc->names[j])) {
        log_debug("seccomp: `%s` with argument conditions left out where multiplexed",
                  sc->names[j]);
        continue;
      }
      if (add_syscall(ctx, action, sc, sc->names[j], err) < 0)
        return -1;
    }
  }
  return 0;
}

static int new_ctx(const struct oci_seccomp *s, uint32_t def_action, scmp_filter_ctx *ret,
                   struct error *err)
{
  cleanup_scmp_ctx scmp_filter_ctx ctx = seccomp_init(def_action);
  int r;

  if (ctx == NULL)
    return error_set(err, 0, "seccomp: cannot initialise filter for defaultAction `%s`",
                     s->default_action);
  /* no_new_privs is process_exec()'s business (noNewPrivileges). */
  r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
  if (r == 0)
    r = seccomp_attr_set(ctx, SCMP_FLTATR_API_SYSRAWRC, 1);
  if (r < 0)
    return error_set(err, -r, "seccomp: set filter attributes");
  /* a binary tree of the syscall numbers instead of a list: fewer
   * instructions per call, and the kernel's per-syscall action cache, which
   * runs the filter for every syscall number when it is loaded, builds
   * faster.  libseccomp before 2.5 has no such attribute: a list then. */
  if (seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2) < 0) {
    /* the default layout */
  }
  if (apply_flags(ctx, s->flags, err) < 0)
    return -1;
  *ret = take_ptr(ctx);
  return 0;
}

/* ARCH, whose direct_only rules are left out (skip_on), in a filter of its
 * own merged into CTX (which must not have it): libseccomp adds a rule to
 * every architecture of a filter. */
static int split_arch(scmp_filter_ctx ctx, const struct oci_seccomp *s, uint32_t def_action,
                      uint32_t arch, struct error *err)
{
  cleanup_scmp_ctx scmp_filter_ctx one = NULL;
  int r;

  if (new_ctx(s, def_action, &one, err) < 0)
    return -1;
  r = seccomp_arch_add(one, arch);
  if (r == 0)
    r = seccomp_arch_remove(one, SCMP_ARCH_NATIVE);
  if (r < 0)
    return error_set(err, -r, "seccomp: filter apart for architecture %#x", arch);
  if (add_rules(one, def_action, s, arch, err) < 0)
    return -1;
  r = seccomp_merge(ctx, one);
  if (r < 0)
    return error_set(err, -r, "seccomp: merge the filter for architecture %#x", arch);
  one = NULL; /* merged: CTX has it now */
  return 0;
}

int seccomp_build(const struct oci_seccomp *s, scmp_filter_ctx *ret, struct error *err)
{
  cleanup_scmp_ctx scmp_filter_ctx ctx = NULL;
  uint32_t native = seccomp_arch_native(), def_action;

  if (parse_action(s->default_action, s->has_default_errno_ret, s->default_errno_ret,
                   "defaultAction", &def_action, err) < 0)
    return -1;
  if (new_ctx(s, def_action, &ctx, err) < 0 || add_architectures(ctx, s->architectures, err) < 0)
    return -1;
  /* rules first, into the architectures that take them all; the native one
   * cannot leave the filter seccomp_init made (an i386 build's profile
   * filter has no other: the rules are left out of it in place) */
  for (size_t i = 0; s->architectures != NULL && s->architectures[i] != NULL; i++)
    for (size_t j = 0; j < ARRAY_SIZE(arch_names); j++) {
      uint32_t a = arch_names[j].arch;
      if (!streq(s->architectures[i], arch_names[j].name) || a == native || skip_on(s, a) == 0 ||
          seccomp_arch_exist(ctx, a) != 0)
        continue;
      if (seccomp_arch_remove(ctx, a) < 0)
        return error_set(err, 0, "seccomp: filter apart for `%s`", s->architectures[i]);
    }
  if (add_rules(ctx, def_action, s, skip_on(s, native), err) < 0)
    return -1;
  for (size_t i = 0; s->architectures != NULL && s->architectures[i] != NULL; i++)
    for (size_t j = 0; j < ARRAY_SIZE(arch_names); j++) {
      uint32_t a = arch_names[j].arch;
      if (streq(s->architectures[i], arch_names[j].name) && a != native && skip_on(s, a) != 0 &&
          seccomp_arch_exist(ctx, a) != 0 && split_arch(ctx, s, def_action, a, err) < 0)
        return -1;
    }
  *ret = take_ptr(ctx);
  return 0;
}

static int read_all_fd(int fd, void **ret, size_t *ret_len, struct error *err)
{
  struct stat st;
  cleanup_free unsigned char *buf = NULL;
  size_t off = 0;

  if (fstat(fd, &st) < 0)
    return error_errno(err, "seccomp: export: fstat");
  buf = xmalloc((size_t)st.st_size + 1);
  while (off < (size_t)st.st_size) {
    ssize_t n = pread(fd, buf + off, (size_t)st.st_size - off, (off_t)off);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return error_errno(err, "seccomp: export: read");
    off += (size_t)n;
  }
  *ret_len = off;
  *ret = take_ptr(buf);
  return 0;
}

/* ---- ENOSYS for syscalls newer than the profile
 *
 * A profile that denies by default was written against some kernel; a
 * syscall added after it (clone3, openat2, ...) would get the default errno,
 * usually EPERM, and glibc or a language runtime then fails instead of
 * falling back to the older call, which it does on ENOSYS.  As runc does, the
 * syscalls numbered above the highest one the profile names (per
 * architecture) get ENOSYS: a short BPF prefix in front of libseccomp's
 * program checks the architecture and the number, and falls through to
 * libseccomp's program for everything else. */

#define X32_SYSCALL_BIT 0x40000000u

struct arch_max {
  uint32_t arch; /* AUDIT_ARCH_* (libseccomp's SCMP_ARCH_* tokens are those) */
  uint32_t max;  /* highest syscall number the profile names, 0 = none */
};

static bool denies_unknown(uint32_t def_action)
{
  uint32_t kind = def_action & SECCOMP_RET_ACTION_FULL;

  if (kind == SECCOMP_RET_ALLOW || kind == SECCOMP_RET_LOG)
    return false;
  return def_action != SCMP_ACT_ERRNO(ENOSYS);
}

static size_t profile_arches(const struct oci_seccomp *s, struct arch_max *a, size_t cap)
{
  size_t n = 0;

  a[n++] = (struct arch_max){seccomp_arch_native(), 0};
  for (size_t i = 0; s->architectures && s->architectures[i] && n < cap; i++)
    for (size_t j = 0; j < ARRAY_SIZE(arch_names); j++) {
      bool dup = false;
      if (!streq(s->architectures[i], arch_names[j].name))
        continue;
      for (size_t k = 0; k < n; k++)
        dup |= a[k].arch == arch_names[j].arch;
      if (!dup)
        a[n++] = (struct arch_max){arch_names[j].arch, 0};
    }
  for (size_t k = 0; k < n; k++)
    for (size_t i = 0; i < s->n_syscalls; i++)
      for (size_t j = 0; s->syscalls[i].names && s->syscalls[i].names[j]; j++) {
        int nr = seccomp_syscall_resolve_name_arch(a[k].arch, s->syscalls[i].names[j]);
        if (nr >= 0 && (uint32_t)nr > a[k].max)
          a[k].max = (uint32_t)nr;
      }
  return n;
}

static struct sock_filter stmt(uint16_t code, uint32_t k)
{
  return (struct sock_filter){code, 0, 0, k};
}

static struct sock_filter jump(uint16_t code, uint32_t k, size_t from, size_t jt, size_t jf)
{
  return (struct sock_filter){code, (uint8_t)(jt - from - 1), (uint8_t)(jf - from - 1), k};
}

/* The prefix, or *ret_n = 0 when the profile needs none. */
static void enosys_prefix(const struct oci_seccomp *s, uint32_t def_action, struct sock_filter *out,
                          size_t *ret_n)
{
  struct arch_max a[ARRAY_SIZE(arch_names) + 1];
  size_t na, n = 0, pc, end, ret_enosys;

  *ret_n = 0;
  if (!denies_unknown(def_action))
    return;
  na = profile_arches(s, a, ARRAY_SIZE(a));
  /* layout: ld arch; per arch: jeq arch / ld nr / [jge x32] / jgt max;
   * then ret ENOSYS; the rest falls through to libseccomp's program */
  for (size_t k = 0; k < na; k++)
    n += a[k].max ? (a[k].arch == SCMP_ARCH_X86_64 ? 4 : 3) : 0;
  if (n == 0)
    return;
  ret_enosys = 1 + n + 1; /* after the checks and one `ja end` */
  end = ret_enosys + 1;
  pc = 0;
  out[pc++] = stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
  for (size_t k = 0; k < na; k++) {
    size_t len = a[k].arch == SCMP_ARCH_X86_64 ? 4 : 3, next = pc + len;
    if (a[k].max == 0)
      continue;
    out[pc] = jump(BPF_JMP | BPF_JEQ | BPF_K, a[k].arch, pc, pc + 1, next);
    pc++;
    out[pc++] = stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
    /* x32 numbers (and the 0x40000000 bit) stay libseccomp's business */
    if (a[k].arch == SCMP_ARCH_X86_64) {
      out[pc] = jump(BPF_JMP | BPF_JGE | BPF_K, X32_SYSCALL_BIT, pc, end, pc + 1);
      pc++;
    }
    out[pc] = jump(BPF_JMP | BPF_JGT | BPF_K, a[k].max, pc, ret_enosys, end);
    pc++;
  }
  out[pc] = stmt(BPF_JMP | BPF_JA, (uint32_t)(end - pc - 1));
  pc++;
  out[pc++] = stmt(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA));
  *ret_n = pc;
}

/* ---- calls newer than libseccomp (os/syscall_late.h)
 *
 * libseccomp cannot name them, so its program has no rule for them: a rule
 * of the filter that names one is put in a prefix of our own, in front of
 * the ENOSYS one (an allowlist naming such a call allows it instead of
 * answering ENOSYS).  Layout: ld arch; a jeq per architecture of the filter
 * whose numbers are the shared ones (x86_64 with x32, i386, arm, aarch64) to
 * a block of its own: ld nr; a jeq per rule (x86_64's audit arch: the number
 * if the filter has x86_64, with the x32 bit if it has x32); one ret per
 * rule; anything else falls through. */

#define LATE_RULES_MAX 16 /* the table has 13: jumps stay below 256 */

struct late_rule {
  uint32_t nr, action;
};

static size_t late_rules(const struct oci_seccomp *s, uint32_t def_action, struct late_rule *out)
{
  size_t n = 0;

  for (size_t i = 0; i < s->n_syscalls; i++) {
    const struct oci_seccomp_syscall *sc = &s->syscalls[i];
    struct error e = {0};
    uint32_t action;

    if (sc->n_args > 0 ||
        parse_action(sc->action, sc->has_errno_ret, sc->errno_ret, "rule", &action, &e) < 0 ||
        action == def_action)
      continue;
    for (size_t j = 0; sc->names && sc->names[j] && n < LATE_RULES_MAX; j++) {
      int nr = syscall_late_nr(sc->names[j]);
      bool dup = false;
      if (nr < 0 || seccomp_syscall_resolve_name(sc->names[j]) != __NR_SCMP_ERROR)
        continue;
      for (size_t k = 0; k < n; k++)
        dup |= out[k].nr == (uint32_t)nr; /* the first rule wins, as in libseccomp */
      if (!dup)
        out[n++] = (struct late_rule){(uint32_t)nr, action};
    }
  }
  return n;
}

static bool late_arch(const struct oci_seccomp *s, uint32_t arch)
{
  if (arch == seccomp_arch_native())
    return true;
  for (size_t i = 0; s->architectures && s->architectures[i]; i++)
    for (size_t j = 0; j < ARRAY_SIZE(arch_names); j++)
      if (streq(s->architectures[i], arch_names[j].name) && arch_names[j].arch == arch)
        return true;
  return false;
}

/* blocks: x86_64 (x86_64 and x32 share its audit arch), i386, arm, aarch64 */
#define LATE_BLOCKS 4
#define LATE_PREFIX_MAX (2 + LATE_BLOCKS * (3 + 2 * LATE_RULES_MAX) + LATE_RULES_MAX)

struct late_block {
  uint32_t arch;
  bool plain, x32; /* compare the number as it is, with the x32 bit */
};

static void late_prefix(const struct oci_seccomp *s, uint32_t def_action, struct sock_filter *out,
                        size_t *ret_n)
{
  struct late_block b[LATE_BLOCKS] = {
      {SCMP_ARCH_X86_64, late_arch(s, SCMP_ARCH_X86_64), late_arch(s, SCMP_ARCH_X32)},
      {SCMP_ARCH_X86, late_arch(s, SCMP_ARCH_X86), false},
      {SCMP_ARCH_ARM, late_arch(s, SCMP_ARCH_ARM), false},
      {SCMP_ARCH_AARCH64, late_arch(s, SCMP_ARCH_AARCH64), false},
  };
  struct late_rule r[LATE_RULES_MAX];
  size_t nr_rules = late_rules(s, def_action, r), nb = 0, pc = 0, start[LATE_BLOCKS], rets, end;

  *ret_n = 0;
  for (size_t k = 0; k < LATE_BLOCKS; k++)
    if (b[k].plain || b[k].x32)
      b[nb++] = b[k];
  if (nr_rules == 0 || nb == 0)
    return;
  /* ld arch, a jeq per block, ja end; per block: ld nr, its jeqs, ja end; the rets */
  rets = 1 + nb + 1;
  for (size_t k = 0; k < nb; k++) {
    start[k] = rets;
    rets += 1 + nr_rules * ((b[k].plain ? 1 : 0) + (b[k].x32 ? 1 : 0)) + 1;
  }
  end = rets + nr_rules;
  out[pc++] = stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
  for (size_t k = 0; k < nb; k++, pc++)
    out[pc] = jump(BPF_JMP | BPF_JEQ | BPF_K, b[k].arch, pc, start[k], pc + 1);
  out[pc] = stmt(BPF_JMP | BPF_JA, (uint32_t)(end - pc - 1));
  pc++;
  for (size_t k = 0; k < nb; k++) {
    out[pc++] = stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
    for (size_t i = 0; i < nr_rules; i++) {
      if (b[k].plain) {
        out[pc] = jump(BPF_JMP | BPF_JEQ | BPF_K, r[i].nr, pc, rets + i, pc + 1);
        pc++;
      }
      if (b[k].x32) {
        out[pc] = jump(BPF_JMP | BPF_JEQ | BPF_K, r[i].nr | X32_SYSCALL_BIT, pc, rets + i, pc + 1);
        pc++;
      }
    }
    out[pc] = stmt(BPF_JMP | BPF_JA, (uint32_t)(end - pc - 1));
    pc++;
  }
  for (size_t i = 0; i < nr_rules; i++)
    out[pc++] = stmt(BPF_RET | BPF_K, r[i].action);
  *ret_n = pc;
}

/* libseccomp's program with the ENOSYS prefix in front (when it needs one),
 * and the prefix of calls newer than libseccomp in front of that. */
static int add_enosys_prefix(const struct oci_seccomp *s, void **bpf, size_t *len,
                             struct error *err)
{
  struct sock_filter pre[4 * (ARRAY_SIZE(arch_names) + 1) + 3 + LATE_PREFIX_MAX];
  uint32_t def_action;
  unsigned char *out;
  size_t n, nl;

  if (parse_action(s->default_action, s->has_default_errno_ret, s->default_errno_ret,
                   "defaultAction", &def_action, err) < 0)
    return -1;
  late_prefix(s, def_action, pre, &nl);
  enosys_prefix(s, def_action, pre + nl, &n);
  n += nl;
  if (n == 0)
    return 0;
  if (*len / sizeof(struct sock_filter) + n > BPF_MAXINSNS)
    return error_set(err, 0, "seccomp: filter too long (%zu instructions)",
                     *len / sizeof(struct sock_filter) + n);
  out = xmalloc(n * sizeof *pre + *len);
  memcpy(out, pre, n * sizeof *pre);
  memcpy(out + n * sizeof *pre, *bpf, *len);
  free(*bpf);
  *bpf = out;
  *len += n * sizeof *pre;
  return 0;
}

int seccomp_export(const struct oci_seccomp *s, void **ret_bpf, size_t *ret_len, struct error *err)
{
  cleanup_scmp_ctx scmp_filter_ctx ctx = NULL;
  cleanup_close int fd = -1;
  int r;

  if (seccomp_build(s, &ctx, err) < 0)
    return -1;
  /* libseccomp 2.5 has no seccomp_export_bpf_mem(): go through a memfd. */
  fd = memfd_create("agentrt-seccomp", MFD_CLOEXEC);
  if (fd < 0)
    return error_errno(err, "seccomp: export: memfd_create");
  r = seccomp_export_bpf(ctx, fd);
  if (r < 0)
    return error_set(err, -r, "seccomp: export filter");
  if (read_all_fd(fd, ret_bpf, ret_len, err) < 0)
    return -1;
  if (add_enosys_prefix(s, ret_bpf, ret_len, err) < 0) {
    free(*ret_bpf);
    *ret_bpf = NULL;
    return -1;
  }
  return 0;
}

int seccomp_load_bpf(const void *bpf, size_t len, unsigned flags, struct error *err)
{
  struct sock_fprog prog = {
      .len = (unsigned short)(len / sizeof(struct sock_filter)),
      .filter = (struct sock_filter *)bpf,
  };

  if (bpf == NULL || len == 0 || len % sizeof(struct sock_filter) != 0 ||
      len / sizeof(struct sock_filter) > BPF_MAXINSNS)
    return error_set(err, 0, "load seccomp filter: invalid BPF program of %zu bytes", len);
  if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog) < 0)
    return error_errno(err, "load seccomp filter");
  return 0;
}

int seccomp_apply_listener(const struct oci_seccomp *s, int *ret_fd, struct error *err)
{
  cleanup_free void *bpf = NULL;
  size_t len = 0;
  unsigned flags = 0;
  struct sock_fprog prog;
  long fd;

  if (seccomp_export(s, &bpf, &len, err) < 0 || seccomp_kernel_flags(s, &flags, err) < 0)
    return -1;
  prog =
      (struct sock_fprog){.len = (unsigned short)(len / sizeof(struct sock_filter)), .filter = bpf};
  /* TSYNC would make the listener fd the return value's other meaning */
  flags &= ~SECCOMP_FILTER_FLAG_TSYNC;
  fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags | SECCOMP_FILTER_FLAG_NEW_LISTENER,
               &prog);
  if (fd < 0)
    return error_errno(err, "load seccomp filter with a listener (SCMP_ACT_NOTIFY)");
  *ret_fd = (int)fd;
  return 0;
}

/* build + export (with the ENOSYS prefix) + load */
int seccomp_apply(const struct oci_seccomp *s, struct error *err)
{
  cleanup_free void *bpf = NULL;
  size_t len = 0;
  unsigned flags = 0;

  if (seccomp_export(s, &bpf, &len, err) < 0 || seccomp_kernel_flags(s, &flags, err) < 0)
    return -1;
  return seccomp_load_bpf(bpf, len, flags, err);
}
