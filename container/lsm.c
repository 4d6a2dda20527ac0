/* lsm.c - AppArmor and SELinux labels of the container's processes (see
 * lsm.h for the order of the steps).
 *
 * AppArmor: the process writes "exec PROFILE" to its own
 * attr/apparmor/exec (attr/exec on kernels before 5.8); the kernel moves it
 * into that profile at its next execve, so the agentrt code still running
 * stays unconfined and the container's program never runs unconfined.
 * SELinux: the label is written as is to attr/exec; linux.mountLabel
 * becomes a context= option of the filesystems the container mounts
 * (runtime/mounts.c).
 */
#include "container/lsm.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/util.h"
#include "os/fsutil.h"
#include "os/procfs.h"

#define APPARMOR_ENABLED "/sys/module/apparmor/parameters/enabled"
#define APPARMOR_PROFILES "/sys/kernel/security/apparmor/profiles"
#define SELINUX_ENFORCE "/sys/fs/selinux/enforce"
#define LABEL_MAX 4096

static bool empty(const char *s)
{
  return s == NULL || *s == '\0';
}

bool lsm_apparmor_enabled(void)
{
  char c = 0;
  int fd = open(APPARMOR_ENABLED, O_RDONLY | O_CLOEXEC);

  if (fd < 0)
    return false;
  if (read(fd, &c, 1) != 1)
    c = 0;
  close(fd);
  return c == 'Y';
}

bool lsm_selinux_enabled(void)
{
  return access(SELINUX_ENFORCE, F_OK) == 0;
}

/* Is `name` in securityfs's list of loaded profiles ("NAME (MODE)" lines)?
 * 1 yes, 0 no, -1 the list cannot be read (securityfs not mounted). */
static int apparmor_loaded(const char *name)
{
  cleanup_free char *list = NULL;
  size_t len = 0, n = strlen(name);
  struct error e = {0};

  if (read_file_at(AT_FDCWD, APPARMOR_PROFILES, 16 << 20, &list, &len, &e) < 0)
    return -1;
  for (char *line = list; line != NULL && *line != '\0';) {
    char *nl = strchr(line, '\n');

    if (strncmp(line, name, n) == 0 && strncmp(line + n, " (", 2) == 0)
      return 1;
    line = nl ? nl + 1 : NULL;
  }
  return 0;
}

static int check_apparmor(const char *profile, struct error *err)
{
  int loaded;

  if (!lsm_apparmor_enabled())
    return error_set(err, 0,
                     "process.apparmorProfile `%s`: AppArmor is not enabled on this host "
                     "(" APPARMOR_ENABLED " is not Y)",
                     profile);
  if (strlen(profile) > LABEL_MAX - 8)
    return error_set(err, 0, "process.apparmorProfile: longer than %d bytes", LABEL_MAX - 8);
  /* "unconfined" is no profile of the list but a valid target */
  if (streq(profile, "unconfined"))
    return 0;
  loaded = apparmor_loaded(profile);
  if (loaded == 0)
    return error_set(err, 0,
                     "process.apparmorProfile `%s`: no such AppArmor profile is loaded (load it "
                     "with apparmor_parser -r FILE)",
                     profile);
  return 0; /* loaded, or no list to check: the write at exec tells */
}

int lsm_check_process(const struct oci_process *p, const char *mount_label, struct error *err)
{
  const char *aa = p ? p->apparmor_profile : NULL;
  const char *se = p ? p->selinux_label : NULL;

  if (!empty(aa) && check_apparmor(aa, err) < 0)
    return -1;
  if (!empty(se) && !lsm_selinux_enabled())
    return error_set(err, 0,
                     "process.selinuxLabel `%s`: SELinux is not enabled on this host "
                     "(no " SELINUX_ENFORCE ")",
                     se);
  if (!empty(se) && strlen(se) >= LABEL_MAX)
    return error_set(err, 0, "process.selinuxLabel: longer than %d bytes", LABEL_MAX - 1);
  if (!empty(mount_label) && !lsm_selinux_enabled())
    return error_set(err, 0,
                     "linux.mountLabel `%s`: SELinux is not enabled on this host "
                     "(no " SELINUX_ENFORCE ")",
                     mount_label);
  return 0;
}

int lsm_apparmor_exec_text(const char *name, char *buf, size_t size)
{
  int n = snprintf(buf, size, "exec %s", name);

  return n < 0 || (size_t)n >= size ? -1 : n;
}

int lsm_exec_open(const struct oci_process *p, struct lsm_exec *x, struct error *err)
{
  if (!empty(p->apparmor_profile)) {
    x->apparmor_fd = procfs_open("thread-self/attr/apparmor/exec", O_WRONLY | O_CLOEXEC, err);
    if (x->apparmor_fd < 0 && err->code == ENOENT) {
      error_clear(err);
      x->apparmor_fd = procfs_open("thread-self/attr/exec", O_WRONLY | O_CLOEXEC, err);
    }
    if (x->apparmor_fd < 0)
      return error_prefix(err, "process.apparmorProfile `%s`", p->apparmor_profile);
    x->apparmor_profile = p->apparmor_profile;
  }
  if (!empty(p->selinux_label)) {
    x->selinux_fd = procfs_open("thread-self/attr/exec", O_WRONLY | O_CLOEXEC, err);
    if (x->selinux_fd < 0)
      return error_prefix(err, "process.selinuxLabel `%s`", p->selinux_label);
    x->selinux_label = p->selinux_label;
  }
  return 0;
}

static int write_attr(int fd, const char *text, size_t len)
{
  ssize_t w;

  do
    w = write(fd, text, len);
  while (w < 0 && errno == EINTR);
  if (w < 0)
    return -1;
  if ((size_t)w != len) {
    errno = EIO;
    return -1;
  }
  return 0;
}

int lsm_exec_apply(struct lsm_exec *x, struct error *err)
{
  char buf[LABEL_MAX];
  int n;

  if (x->apparmor_fd >= 0) {
    n = lsm_apparmor_exec_text(x->apparmor_profile, buf, sizeof buf);
    if (n < 0)
      return error_set(err, 0, "process.apparmorProfile: too long");
    if (write_attr(x->apparmor_fd, buf, (size_t)n) < 0) {
      if (errno == ENOENT)
        return error_set(err, ENOENT,
                         "process.apparmorProfile `%s`: no such AppArmor profile "
                         "is loaded",
                         x->apparmor_profile);
      return error_errno(err, "process.apparmorProfile `%s`: write attr/apparmor/exec",
                         x->apparmor_profile);
    }
  }
  if (x->selinux_fd >= 0 &&
      write_attr(x->selinux_fd, x->selinux_label, strlen(x->selinux_label)) < 0)
    return error_errno(err, "process.selinuxLabel `%s`: write attr/exec", x->selinux_label);
  return 0;
}

void lsm_exec_close(struct lsm_exec *x)
{
  if (x->apparmor_fd >= 0)
    close(x->apparmor_fd);
  if (x->selinux_fd >= 0)
    close(x->selinux_fd);
  x->apparmor_fd = x->selinux_fd = -1;
}
