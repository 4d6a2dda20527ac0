/* bpf_devices.c - the device cgroup rules and their cgroup v2 eBPF filter.
 *
 * The rule list is the same for both backends: deny all, the container's
 * linux.resources.devices in order, then the devices every container gets
 * (as runc's default allow list).  The last matching rule wins.  As with
 * runc and crun, a linux.devices entry is not allowed implicitly: it needs
 * a linux.resources.devices rule.  v1 writes them to devices.deny/allow; v2 has no
 * device files and instead attaches a BPF_PROG_TYPE_CGROUP_DEVICE program,
 * generated here as plain instructions (pure, unit tested) and then loaded
 * and attached with BPF_F_ALLOW_MULTI, replacing the programs attached
 * before so that an update never leaves the cgroup without a filter.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/syscall.h>

#include "cgroups/internal.h"
#include "common/util.h"

#define ACC_ALL (BPF_DEVCG_ACC_MKNOD | BPF_DEVCG_ACC_READ | BPF_DEVCG_ACC_WRITE)

/* runc's default allow list: mknod of any char/block device, and the usual
 * pseudo devices and ptys. */
static const struct cgroup_dev_rule default_rules[] = {
    {true, 'c', -1, -1, BPF_DEVCG_ACC_MKNOD},
    {true, 'b', -1, -1, BPF_DEVCG_ACC_MKNOD},
    {true, 'c', 1, 3, ACC_ALL},    /* /dev/null */
    {true, 'c', 1, 8, ACC_ALL},    /* /dev/random */
    {true, 'c', 1, 7, ACC_ALL},    /* /dev/full */
    {true, 'c', 5, 0, ACC_ALL},    /* /dev/tty */
    {true, 'c', 1, 5, ACC_ALL},    /* /dev/zero */
    {true, 'c', 1, 9, ACC_ALL},    /* /dev/urandom */
    {true, 'c', 136, -1, ACC_ALL}, /* /dev/pts/N, /dev/console */
    {true, 'c', 5, 2, ACC_ALL},    /* /dev/ptmx */
};

static int parse_access(const char *s, unsigned *ret)
{
  unsigned acc = 0;

  if (s == NULL || *s == '\0') {
    *ret = ACC_ALL;
    return 0;
  }
  for (; *s; s++) {
    if (*s == 'r')
      acc |= BPF_DEVCG_ACC_READ;
    else if (*s == 'w')
      acc |= BPF_DEVCG_ACC_WRITE;
    else if (*s == 'm')
      acc |= BPF_DEVCG_ACC_MKNOD;
    else
      return -1;
  }
  *ret = acc;
  return 0;
}

static int rule_from_oci(const struct oci_device_cgroup *d, size_t i, struct cgroup_dev_rule *r,
                         struct error *err)
{
  r->allow = d->allow;
  r->type = d->type == 0 ? 'a' : d->type;
  if (r->type != 'a' && r->type != 'b' && r->type != 'c')
    return cg_fail(err, EINVAL, "cgroup: devices[%zu]: unknown device type `%c`", i, d->type);
  r->major = d->has_major ? d->major : -1;
  r->minor = d->has_minor ? d->minor : -1;
  if (r->major < -1 || r->minor < -1 || r->major > UINT32_MAX || r->minor > UINT32_MAX)
    return cg_fail(err, EINVAL, "cgroup: devices[%zu]: bad device number", i);
  if (parse_access(d->access, &r->access) < 0)
    return cg_fail(err, EINVAL, "cgroup: devices[%zu]: bad access `%s` (expected a subset of rwm)",
                   i, d->access);
  return 0;
}

int cgroup_device_rules(const struct oci_resources *r, struct cgroup_dev_rule **ret, size_t *ret_n,
                        struct error *err)
{
  size_t n_res = r ? r->n_devices : 0;
  size_t cap = 1 + n_res + ARRAY_SIZE(default_rules), n = 0;
  cleanup_free struct cgroup_dev_rule *rules = xmalloc0(cap * sizeof *rules);

  rules[n++] = (struct cgroup_dev_rule){false, 'a', -1, -1, ACC_ALL};
  for (size_t i = 0; i < n_res; i++)
    if (rule_from_oci(&r->devices[i], i, &rules[n++], err) < 0)
      return -1;
  for (size_t i = 0; i < ARRAY_SIZE(default_rules); i++)
    rules[n++] = default_rules[i];
  *ret = take_ptr(rules);
  *ret_n = n;
  return 0;
}

const char *cgroup_dev_rule_str(const struct cgroup_dev_rule *r, char buf[64])
{
  char maj[24] = "*", min[24] = "*", acc[4];
  size_t k = 0;

  if (r->major >= 0)
    snprintf(maj, sizeof maj, "%" PRId64, r->major);
  if (r->minor >= 0)
    snprintf(min, sizeof min, "%" PRId64, r->minor);
  if (r->access & BPF_DEVCG_ACC_READ)
    acc[k++] = 'r';
  if (r->access & BPF_DEVCG_ACC_WRITE)
    acc[k++] = 'w';
  if (r->access & BPF_DEVCG_ACC_MKNOD)
    acc[k++] = 'm';
  acc[k] = '\0';
  snprintf(buf, 64, "%c %s:%s %s", r->type, maj, min, acc);
  return buf;
}

/* ---- program generation ---- */

static struct bpf_insn insn(uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm)
{
  struct bpf_insn i = {.code = code, .dst_reg = dst, .src_reg = src, .off = off, .imm = imm};
  return i;
}

#define LDX_W(dst, src, off) insn(BPF_LDX | BPF_MEM | BPF_W, dst, src, off, 0)
#define MOV32_REG(dst, src) insn(BPF_ALU | BPF_MOV | BPF_X, dst, src, 0, 0)
#define AND32_IMM(dst, imm) insn(BPF_ALU | BPF_AND | BPF_K, dst, 0, 0, imm)
#define RSH32_IMM(dst, imm) insn(BPF_ALU | BPF_RSH | BPF_K, dst, 0, 0, imm)
#define MOV64_IMM(dst, imm) insn(BPF_ALU64 | BPF_MOV | BPF_K, dst, 0, 0, imm)
#define JNE_IMM(dst, imm, off) insn(BPF_JMP | BPF_JNE | BPF_K, dst, 0, off, imm)
#define JNE_REG(dst, src, off) insn(BPF_JMP | BPF_JNE | BPF_X, dst, src, off, 0)
#define EXIT_INSN() insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

/* Registers after the prologue: r2 access, r3 device type, r4 major, r5 minor. */
static size_t emit_rule(const struct cgroup_dev_rule *r, struct bpf_insn *out, bool *catch_all)
{
  size_t n = 0;
  size_t jumps[4];
  size_t nj = 0;

  if (r->type != 'a') {
    jumps[nj++] = n;
    out[n++] = JNE_IMM(BPF_REG_3, r->type == 'b' ? BPF_DEVCG_DEV_BLOCK : BPF_DEVCG_DEV_CHAR, 0);
  }
  if ((r->access & ACC_ALL) != ACC_ALL) {
    /* every requested access bit must be in the rule: (req & acc) == req */
    out[n++] = MOV32_REG(BPF_REG_1, BPF_REG_2);
    out[n++] = AND32_IMM(BPF_REG_1, (int32_t)r->access);
    jumps[nj++] = n;
    out[n++] = JNE_REG(BPF_REG_1, BPF_REG_2, 0);
  }
  if (r->major >= 0) {
    jumps[nj++] = n;
    out[n++] = JNE_IMM(BPF_REG_4, (int32_t)r->major, 0);
  }
  if (r->minor >= 0) {
    jumps[nj++] = n;
    out[n++] = JNE_IMM(BPF_REG_5, (int32_t)r->minor, 0);
  }
  out[n++] = MOV64_IMM(BPF_REG_0, r->allow ? 1 : 0);
  out[n++] = EXIT_INSN();
  /* a non-matching test jumps past this rule's exit */
  for (size_t j = 0; j < nj; j++)
    out[jumps[j]].off = (int16_t)(n - jumps[j] - 1);
  *catch_all = nj == 0;
  return n;
}

int cgroup_bpf_devices_build(const struct cgroup_dev_rule *rules, size_t n, struct bpf_insn **ret,
                             size_t *ret_n, struct error *err)
{
  cleanup_free struct bpf_insn *p = NULL;
  size_t k = 0;
  bool catch_all = false;

  if (n > 4096)
    return cg_fail(err, E2BIG, "cgroup: %zu device rules are too many", n);
  p = xmalloc0((8 + n * 8) * sizeof *p);
  /* struct bpf_cgroup_dev_ctx: access_type (ACC << 16 | DEV), major, minor */
  p[k++] = LDX_W(BPF_REG_2, BPF_REG_1, 0);
  p[k++] = MOV32_REG(BPF_REG_3, BPF_REG_2);
  p[k++] = AND32_IMM(BPF_REG_3, 0xffff);
  p[k++] = RSH32_IMM(BPF_REG_2, 16);
  p[k++] = LDX_W(BPF_REG_4, BPF_REG_1, 4);
  p[k++] = LDX_W(BPF_REG_5, BPF_REG_1, 8);
  /* Last rule wins: test them from the end; a rule that matches every
   * device hides everything before it. */
  for (size_t i = n; i-- > 0 && !catch_all;)
    k += emit_rule(&rules[i], p + k, &catch_all);
  if (!catch_all) {
    p[k++] = MOV64_IMM(BPF_REG_0, 0);
    p[k++] = EXIT_INSN();
  }
  *ret = take_ptr(p);
  *ret_n = k;
  return 0;
}

/* ---- loading and attaching ---- */

static long sys_bpf(int cmd, union bpf_attr *a)
{
  return syscall(SYS_bpf, cmd, a, sizeof *a);
}

static int prog_load(const struct bpf_insn *insns, size_t n, struct error *err)
{
  static char log[16384];
  union bpf_attr a;
  long fd;

  memset(&a, 0, sizeof a);
  a.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
  a.insns = (uint64_t)(uintptr_t)insns;
  a.insn_cnt = (uint32_t)n;
  a.license = (uint64_t)(uintptr_t) "Apache";
  fd = sys_bpf(BPF_PROG_LOAD, &a);
  if (fd >= 0)
    return (int)fd;
  if (errno == EPERM || errno == ENOSYS)
    return error_errno(err, "cgroup: load the device filter (bpf)");
  /* again with the verifier's log for the message */
  a.log_buf = (uint64_t)(uintptr_t)log;
  a.log_size = sizeof log;
  a.log_level = 1;
  log[0] = '\0';
  fd = sys_bpf(BPF_PROG_LOAD, &a);
  if (fd >= 0)
    return (int)fd;
  return error_errno(err, "cgroup: load the device filter (bpf, verifier: %.200s)", log);
}

/* The ids of the device programs attached to the cgroup now (up to 64). */
static int prog_query(int cgroup_fd, uint32_t ids[64], uint32_t *ret_n)
{
  union bpf_attr a;

  memset(&a, 0, sizeof a);
  a.query.target_fd = (uint32_t)cgroup_fd;
  a.query.attach_type = BPF_CGROUP_DEVICE;
  a.query.prog_ids = (uint64_t)(uintptr_t)ids;
  a.query.prog_cnt = 64;
  if (sys_bpf(BPF_PROG_QUERY, &a) < 0)
    return -1;
  *ret_n = a.query.prog_cnt < 64 ? a.query.prog_cnt : 64;
  return 0;
}

static void prog_detach_id(int cgroup_fd, uint32_t id)
{
  union bpf_attr a;
  cleanup_close int pfd = -1;

  memset(&a, 0, sizeof a);
  a.prog_id = id;
  pfd = (int)sys_bpf(BPF_PROG_GET_FD_BY_ID, &a);
  if (pfd < 0)
    return;
  memset(&a, 0, sizeof a);
  a.target_fd = (uint32_t)cgroup_fd;
  a.attach_bpf_fd = (uint32_t)pfd;
  a.attach_type = BPF_CGROUP_DEVICE;
  sys_bpf(BPF_PROG_DETACH, &a);
}

int cgroup_bpf_devices_attach(int cgroup_fd, const struct bpf_insn *insns, size_t n,
                              struct error *err)
{
  uint32_t old[64];
  uint32_t n_old = 0;
  union bpf_attr a;
  cleanup_close int pfd = prog_load(insns, n, err);

  if (pfd < 0)
    return -1;
  if (prog_query(cgroup_fd, old, &n_old) < 0)
    n_old = 0;
  memset(&a, 0, sizeof a);
  a.target_fd = (uint32_t)cgroup_fd;
  a.attach_bpf_fd = (uint32_t)pfd;
  a.attach_type = BPF_CGROUP_DEVICE;
  a.attach_flags = BPF_F_ALLOW_MULTI;
  if (sys_bpf(BPF_PROG_ATTACH, &a) < 0)
    return error_errno(err, "cgroup: attach the device filter");
  for (uint32_t i = 0; i < n_old; i++)
    prog_detach_id(cgroup_fd, old[i]);
  return 0;
}
