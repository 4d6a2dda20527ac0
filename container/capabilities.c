/* capabilities.c - process.capabilities, all five sets, with capget/capset.
 *
 * Like runc: an absent capabilities object means no capabilities at all, an
 * absent set means that set is empty.  The bounding set is reduced first
 * (PR_CAPBSET_DROP needs CAP_SETPCAP in the effective set, so the effective
 * set is raised to the permitted one before), then effective, permitted and
 * inheritable are set at once, and the ambient set is cleared and raised
 * only for what the config lists.  CVE-2022-29162: inheritable and ambient
 * stay empty unless explicitly asked for.  Capabilities the running kernel
 * does not know are ignored (logged at debug), as runc does.
 *
 * The sets are read and written with the raw capget/capset syscalls
 * (version 3: two 32-bit words per set) rather than libcap, whose load-time
 * constructor reads /proc/sys/kernel/cap_last_cap through stdio in every
 * agentrt command (bench/README.md: those stdio/scanf pages were a fifth of the
 * runtime's peak RSS).  The kernel's last capability is probed with
 * PR_CAPBSET_READ instead.
 */
#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/log.h"
#include "common/util.h"
#include "container/process.h"
#include "oci/config.h"

/* The three sets of capget/capset as 64-bit masks. */
struct cap_sets {
  uint64_t eff, perm, inh;
};

static int caps_get(struct cap_sets *s)
{
  struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
  struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];

  memset(d, 0, sizeof d);
  if (syscall(SYS_capget, &h, d) < 0)
    return -1;
  s->eff = (uint64_t)d[1].effective << 32 | d[0].effective;
  s->perm = (uint64_t)d[1].permitted << 32 | d[0].permitted;
  s->inh = (uint64_t)d[1].inheritable << 32 | d[0].inheritable;
  return 0;
}

static int caps_set(const struct cap_sets *s)
{
  struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
  struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3] = {
      {(uint32_t)s->eff, (uint32_t)s->perm, (uint32_t)s->inh},
      {(uint32_t)(s->eff >> 32), (uint32_t)(s->perm >> 32), (uint32_t)(s->inh >> 32)},
  };

  return (int)syscall(SYS_capset, &h, d);
}

/* Highest capability number of the running kernel: PR_CAPBSET_READ fails
 * with EINVAL for a number the kernel does not know.  Probed down from the
 * names agentrt knows (an older kernel), then up (a newer one), bounded. */
static int cap_last(void)
{
  static int cached = -1;
  int last = oci_cap_last();

  if (cached >= 0)
    return cached;
  while (last > 0 && prctl(PR_CAPBSET_READ, last, 0, 0, 0) < 0)
    last--;
  while (last < 63 && prctl(PR_CAPBSET_READ, last + 1, 0, 0, 0) >= 0)
    last++;
  cached = last;
  return last;
}

/* Bits 0..last. */
static uint64_t cap_known_mask(int last)
{
  return last >= 63 ? ~0ULL : (1ULL << (last + 1)) - 1;
}

/* "CAP_SYS_ADMIN" for messages. */
static void cap_label(int c, char *buf, size_t n)
{
  const char *name = oci_cap_name(c);

  if (name != NULL)
    snprintf(buf, n, "%s", name);
  else
    snprintf(buf, n, "capability %d", c);
}

int caps_raise_effective(struct error *err)
{
  struct cap_sets cur;
  int last = cap_last();

  if (caps_get(&cur) < 0)
    return error_errno(err, "capabilities: read current sets");
  cur.eff = (cur.eff & ~cap_known_mask(last)) | (cur.perm & cap_known_mask(last));
  if (caps_set(&cur) < 0)
    return error_errno(err, "capabilities: raise effective set");
  return 0;
}

static int drop_bounding(uint64_t keep, int last, struct error *err)
{
  char label[64];

  for (int c = 0; c <= last; c++) {
    if (c < 64 && (keep & (1ULL << c)))
      continue;
    /* drop first (one syscall for the usual present cap); a failure only
     * counts when the cap is still there (absent ones need no CAP_SETPCAP) */
    if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0) {
      int e = errno;
      if (prctl(PR_CAPBSET_READ, c, 0, 0, 0) != 1)
        continue;
      errno = e;
      cap_label(c, label, sizeof label);
      return error_errno(err, "capabilities: drop %s from the bounding set", label);
    }
  }
  return 0;
}

/* The bits of mask the kernel knows; the others are logged and ignored. */
static uint64_t known_bits(uint64_t mask, int last)
{
  uint64_t unknown = mask & ~cap_known_mask(last);

  for (int c = 0; c < 64; c++)
    if (unknown & (1ULL << c))
      log_debug("capabilities: capability %d unknown to the kernel, ignoring", c);
  return mask & cap_known_mask(last);
}

static int set_main_sets(uint64_t eff, uint64_t perm, uint64_t inh, int last, struct error *err)
{
  struct cap_sets s;
  char label[64];

  if (eff & ~perm) {
    cap_label(__builtin_ctzll(eff & ~perm), label, sizeof label);
    return error_set(err, 0, "capabilities: %s is in the effective but not in the permitted set",
                     label);
  }
  s.eff = known_bits(eff, last);
  s.perm = known_bits(perm, last);
  s.inh = known_bits(inh, last);
  if (caps_set(&s) < 0)
    return error_errno(err, "capabilities: set effective/permitted/inheritable");
  return 0;
}

static int set_ambient(uint64_t amb, int last, struct error *err)
{
  char label[64];

  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
    return error_errno(err, "capabilities: clear ambient set");
  for (int c = 0; c <= last && c < 64; c++) {
    if (!(amb & (1ULL << c)))
      continue;
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, c, 0, 0) < 0) {
      /* runc only warns here: the cap must also be permitted and inheritable */
      cap_label(c, label, sizeof label);
      log_debug("capabilities: cannot raise ambient %s (%s), ignoring", label, strerror(errno));
    }
  }
  return 0;
}

/* The kernel's capset() rules (and PR_CAPBSET_DROP's), applied before the
 * init waits for start: a set that caps_apply() would be refused is
 * create's error, as runc's and crun's, not a container that starts and
 * dies with the message on its stderr.  Nothing between here and
 * caps_apply() adds a capability (setresuid() keeps the permitted set:
 * PR_SET_KEEPCAPS). */
int caps_check(const struct oci_caps *caps, bool has_caps, struct error *err)
{
  static const struct oci_caps none;
  const struct oci_caps *c = has_caps && caps != NULL ? caps : &none;
  int last = cap_last();
  uint64_t known = cap_known_mask(last);
  uint64_t perm = (c->has_permitted ? c->permitted : 0) & known;
  uint64_t inh = (c->has_inheritable ? c->inheritable : 0) & known;
  uint64_t bnd = (c->has_bounding ? c->bounding : 0) & known;
  bool setpcap;
  struct cap_sets cur;
  uint64_t bad;
  char label[64];

  bad = (c->has_effective ? c->effective : 0) & ~(c->has_permitted ? c->permitted : 0);
  if (bad != 0) {
    cap_label(__builtin_ctzll(bad), label, sizeof label);
    return error_set(err, 0, "capabilities: %s is in the effective but not in the permitted set",
                     label);
  }
  if (caps_get(&cur) < 0)
    return error_errno(err, "capabilities: read current sets");
  setpcap = cur.perm & (1ULL << CAP_SETPCAP);
  bad = perm & ~cur.perm;
  if (bad != 0) {
    cap_label(__builtin_ctzll(bad), label, sizeof label);
    return error_set(err, EPERM,
                     "process.capabilities.permitted: %s is not in the runtime's own permitted "
                     "set",
                     label);
  }
  bad = inh & ~(cur.inh | cur.perm);
  if (bad != 0 && !setpcap) {
    cap_label(__builtin_ctzll(bad), label, sizeof label);
    return error_set(err, EPERM,
                     "process.capabilities.inheritable: %s is neither inheritable nor permitted "
                     "for the runtime (and it has no CAP_SETPCAP)",
                     label);
  }
  /* drop_bounding needs CAP_SETPCAP for a capability still in the set */
  for (int i = 0; !setpcap && i <= last && i < 64; i++) {
    if (!(bnd & (1ULL << i)) && prctl(PR_CAPBSET_READ, i, 0, 0, 0) == 1) {
      cap_label(i, label, sizeof label);
      return error_set(err, EPERM,
                       "process.capabilities.bounding: %s cannot be dropped without CAP_SETPCAP",
                       label);
    }
  }
  /* the bounding set after drop_bounding: the config's, where we have it */
  bad = inh & ~cur.inh;
  for (int i = 0; i <= last && i < 64; i++) {
    if (!(bad & (1ULL << i)))
      continue;
    if (!(bnd & (1ULL << i)) || prctl(PR_CAPBSET_READ, i, 0, 0, 0) != 1) {
      cap_label(i, label, sizeof label);
      return error_set(err, EPERM,
                       "process.capabilities.inheritable: %s is not in the bounding set it "
                       "would have",
                       label);
    }
  }
  return 0;
}

int caps_apply(const struct oci_caps *caps, bool has_caps, struct error *err)
{
  static const struct oci_caps none;
  const struct oci_caps *c = has_caps && caps != NULL ? caps : &none;
  int last = cap_last();

  if (caps_raise_effective(err) < 0)
    return -1;
  if (drop_bounding(c->has_bounding ? c->bounding : 0, last, err) < 0)
    return -1;
  if (set_main_sets(c->has_effective ? c->effective : 0, c->has_permitted ? c->permitted : 0,
                    c->has_inheritable ? c->inheritable : 0, last, err) < 0)
    return -1;
  return set_ambient(c->has_ambient ? c->ambient : 0, last, err);
}
