/* caps.c - process.capabilities, all five sets, with libcap.
 *
 * Like runc: an absent capabilities object means no capabilities at all, an
 * absent set means that set is empty.  The bounding set is reduced first
 * (PR_CAPBSET_DROP needs CAP_SETPCAP in the effective set, so the effective
 * set is raised to the permitted one before), then effective, permitted and
 * inheritable are set at once, and the ambient set is cleared and raised
 * only for what the config lists.  CVE-2022-29162: inheritable and ambient
 * stay empty unless explicitly asked for.  Capabilities the running kernel
 * does not know are ignored (logged at debug), as runc does.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>

#include "common/log.h"
#include "common/util.h"
#include "runtime/process.h"

static void cleanup_cap(cap_t *c)
{
  if (*c != NULL)
    cap_free(*c);
}
#define cleanup_cap_t __attribute__((cleanup(cleanup_cap)))

/* Highest capability number of the running kernel. */
static int cap_last(void)
{
  int n = (int)cap_max_bits();
  int last = n > 0 ? n - 1 : CAP_LAST_CAP;

  /* libcap may be older than the kernel: probe upwards, bounded */
  while (last < 63 && prctl(PR_CAPBSET_READ, last + 1, 0, 0, 0) >= 0)
    last++;
  return last;
}

/* "CAP_SYS_ADMIN" for messages. */
static void cap_label(int c, char *buf, size_t n)
{
  char *name = cap_to_name(c);

  if (name != NULL && str_has_prefix(name, "cap_")) {
    snprintf(buf, n, "CAP_%s", name + 4);
    for (size_t i = 4; buf[i]; i++)
      buf[i] = (char)toupper((unsigned char)buf[i]);
  } else {
    snprintf(buf, n, "capability %d", c);
  }
  cap_free(name);
}

int caps_raise_effective(struct error *err)
{
  cleanup_cap_t cap_t cur = cap_get_proc();
  int last = cap_last();

  if (cur == NULL)
    return error_errno(err, "capabilities: read current sets");
  for (int c = 0; c <= last; c++) {
    cap_flag_value_t v = CAP_CLEAR;
    cap_value_t cv = c;

    if (cap_get_flag(cur, cv, CAP_PERMITTED, &v) == 0)
      cap_set_flag(cur, CAP_EFFECTIVE, 1, &cv, v);
  }
  if (cap_set_proc(cur) < 0)
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

/* Put the bits of mask into flag of caps (up to the kernel's last cap). */
static void set_flag_bits(cap_t caps, cap_flag_t flag, uint64_t mask, int last)
{
  for (int c = 0; c < 64; c++) {
    cap_value_t cv = c;

    if (!(mask & (1ULL << c)))
      continue;
    if (c > last) {
      log_debug("capabilities: capability %d unknown to the kernel, ignoring", c);
      continue;
    }
    cap_set_flag(caps, flag, 1, &cv, CAP_SET);
  }
}

static int set_main_sets(uint64_t eff, uint64_t perm, uint64_t inh, int last, struct error *err)
{
  cleanup_cap_t cap_t caps = cap_init();
  char label[64];

  if (caps == NULL)
    return error_errno(err, "capabilities: cap_init");
  if (eff & ~perm) {
    cap_label(__builtin_ctzll(eff & ~perm), label, sizeof label);
    return error_set(err, 0, "capabilities: %s is in the effective but not in the permitted set",
                     label);
  }
  set_flag_bits(caps, CAP_EFFECTIVE, eff, last);
  set_flag_bits(caps, CAP_PERMITTED, perm, last);
  set_flag_bits(caps, CAP_INHERITABLE, inh, last);
  if (cap_set_proc(caps) < 0)
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
