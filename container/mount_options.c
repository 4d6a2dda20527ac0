/* mount_options.c - the pure part of mounting: option words, propagation
 * names and lexical path cleaning.  No syscalls; unit tested in
 * tests/unit/test_mount_options.c.
 */
#include "container/mounts.h"

#include <errno.h>
#include <string.h>

#include "common/util.h"

enum opt_kind {
  OPT_SET,
  OPT_CLEAR,
  OPT_PROPAGATION,
  OPT_REC_SET,
  OPT_REC_CLR,
  OPT_REC_ATIME, /* flag = the atime mode of the whole tree */
  OPT_IGNORE,
  OPT_TMPCOPYUP,
  OPT_LOWER_BENEATH,
};

struct opt_word {
  const char *name;
  enum opt_kind kind;
  unsigned long flag; /* MS_* (or MOUNT_ATTR_* for OPT_REC_*) */
};

/* The words runc and crun accept (OCI runtime spec, "Mounts" and the
 * recursive attributes of 1.1), in the order of mount(8). */
static const struct opt_word words[] = {
    {"defaults", OPT_IGNORE, 0},
    {"tmpcopyup", OPT_TMPCOPYUP, 0},
    /* agentrt's own: a sub-agent's overlay (workspace/view.c) */
    {"x-agentrt.lower-beneath", OPT_LOWER_BENEATH, 0},
    {"ro", OPT_SET, MS_RDONLY},
    {"rw", OPT_CLEAR, MS_RDONLY},
    {"nosuid", OPT_SET, MS_NOSUID},
    {"suid", OPT_CLEAR, MS_NOSUID},
    {"nodev", OPT_SET, MS_NODEV},
    {"dev", OPT_CLEAR, MS_NODEV},
    {"noexec", OPT_SET, MS_NOEXEC},
    {"exec", OPT_CLEAR, MS_NOEXEC},
    {"sync", OPT_SET, MS_SYNCHRONOUS},
    {"async", OPT_CLEAR, MS_SYNCHRONOUS},
    {"dirsync", OPT_SET, MS_DIRSYNC},
    {"remount", OPT_SET, MS_REMOUNT},
    {"mand", OPT_SET, MS_MANDLOCK},
    {"nomand", OPT_CLEAR, MS_MANDLOCK},
    {"atime", OPT_CLEAR, MS_NOATIME},
    {"noatime", OPT_SET, MS_NOATIME},
    {"diratime", OPT_CLEAR, MS_NODIRATIME},
    {"nodiratime", OPT_SET, MS_NODIRATIME},
    {"relatime", OPT_SET, MS_RELATIME},
    {"norelatime", OPT_CLEAR, MS_RELATIME},
    {"strictatime", OPT_SET, MS_STRICTATIME},
    {"nostrictatime", OPT_CLEAR, MS_STRICTATIME},
    {"lazytime", OPT_SET, MS_LAZYTIME},
    {"nolazytime", OPT_CLEAR, MS_LAZYTIME},
    {"silent", OPT_SET, MS_SILENT},
    {"loud", OPT_CLEAR, MS_SILENT},
    {"nosymfollow", OPT_SET, MS_NOSYMFOLLOW},
    {"symfollow", OPT_CLEAR, MS_NOSYMFOLLOW},
    {"bind", OPT_SET, MS_BIND},
    {"rbind", OPT_SET, MS_BIND | MS_REC},
    {"shared", OPT_PROPAGATION, MS_SHARED},
    {"rshared", OPT_PROPAGATION, MS_SHARED | MS_REC},
    {"slave", OPT_PROPAGATION, MS_SLAVE},
    {"rslave", OPT_PROPAGATION, MS_SLAVE | MS_REC},
    {"private", OPT_PROPAGATION, MS_PRIVATE},
    {"rprivate", OPT_PROPAGATION, MS_PRIVATE | MS_REC},
    {"unbindable", OPT_PROPAGATION, MS_UNBINDABLE},
    {"runbindable", OPT_PROPAGATION, MS_UNBINDABLE | MS_REC},
    {"rro", OPT_REC_SET, MOUNT_ATTR_RDONLY},
    {"rrw", OPT_REC_CLR, MOUNT_ATTR_RDONLY},
    {"rnosuid", OPT_REC_SET, MOUNT_ATTR_NOSUID},
    {"rsuid", OPT_REC_CLR, MOUNT_ATTR_NOSUID},
    {"rnodev", OPT_REC_SET, MOUNT_ATTR_NODEV},
    {"rdev", OPT_REC_CLR, MOUNT_ATTR_NODEV},
    {"rnoexec", OPT_REC_SET, MOUNT_ATTR_NOEXEC},
    {"rexec", OPT_REC_CLR, MOUNT_ATTR_NOEXEC},
    {"rnodiratime", OPT_REC_SET, MOUNT_ATTR_NODIRATIME},
    {"rdiratime", OPT_REC_CLR, MOUNT_ATTR_NODIRATIME},
    {"rnosymfollow", OPT_REC_SET, MOUNT_ATTR_NOSYMFOLLOW},
    {"rsymfollow", OPT_REC_CLR, MOUNT_ATTR_NOSYMFOLLOW},
    /* recursive atime words set one mode for the tree; the "no" forms go
     * back to the kernel default, relatime */
    {"rrelatime", OPT_REC_ATIME, MOUNT_ATTR_RELATIME},
    {"rnorelatime", OPT_REC_ATIME, MOUNT_ATTR_RELATIME},
    {"rnoatime", OPT_REC_ATIME, MOUNT_ATTR_NOATIME},
    {"ratime", OPT_REC_ATIME, MOUNT_ATTR_RELATIME},
    {"rstrictatime", OPT_REC_ATIME, MOUNT_ATTR_STRICTATIME},
    {"rnostrictatime", OPT_REC_ATIME, MOUNT_ATTR_RELATIME},
};

static const struct opt_word *find_word(const char *w)
{
  for (size_t i = 0; i < ARRAY_SIZE(words); i++)
    if (strcmp(words[i].name, w) == 0)
      return &words[i];
  return NULL;
}

static void apply_word(struct mount_opts *o, const struct opt_word *w)
{
  switch (w->kind) {
  case OPT_SET:
    o->flags |= w->flag;
    o->cleared &= ~w->flag;
    break;
  case OPT_CLEAR:
    o->flags &= ~w->flag;
    o->cleared |= w->flag;
    break;
  case OPT_PROPAGATION:
    o->propagation = w->flag;
    break;
  case OPT_REC_SET:
    o->rec_attr_set |= w->flag;
    o->rec_attr_clr &= ~(uint64_t)w->flag;
    break;
  case OPT_REC_CLR:
    o->rec_attr_clr |= w->flag;
    o->rec_attr_set &= ~(uint64_t)w->flag;
    break;
  case OPT_REC_ATIME:
    o->rec_attr_set = (o->rec_attr_set & ~(uint64_t)MOUNT_ATTR__ATIME) | w->flag;
    o->rec_attr_clr |= MOUNT_ATTR__ATIME;
    break;
  case OPT_IGNORE:
    break;
  case OPT_TMPCOPYUP:
    o->tmpcopyup = true;
    break;
  case OPT_LOWER_BENEATH:
    o->lower_beneath = true;
    break;
  }
}

static void append_data(char **data, const char *w)
{
  char *old = *data;

  *data = old == NULL ? xstrdup(w) : xfmt("%s,%s", old, w);
  free(old);
}

int mount_options_parse(char *const *opts, struct mount_opts *ret, struct error *err)
{
  memset(ret, 0, sizeof *ret);
  for (size_t i = 0; opts != NULL && opts[i] != NULL; i++) {
    const char *w = opts[i];
    const struct opt_word *known;

    if (*w == '\0')
      continue;
    if (strcmp(w, "idmap") == 0 || strcmp(w, "ridmap") == 0) {
      ret->idmap = true;
      ret->idmap_rec = w[0] == 'r';
      continue;
    }
    known = find_word(w);
    if (known != NULL)
      apply_word(ret, known);
    else
      append_data(&ret->data, w);
  }
  return 0;
}

void mount_opts_free(struct mount_opts *o)
{
  free(o->data);
  o->data = NULL;
}

void mount_opts_attr(const struct mount_opts *o, uint64_t *ret_set, uint64_t *ret_clr)
{
  static const struct {
    unsigned long ms;
    uint64_t attr;
  } map[] = {
      {MS_RDONLY, MOUNT_ATTR_RDONLY},         {MS_NOSUID, MOUNT_ATTR_NOSUID},
      {MS_NODEV, MOUNT_ATTR_NODEV},           {MS_NOEXEC, MOUNT_ATTR_NOEXEC},
      {MS_NODIRATIME, MOUNT_ATTR_NODIRATIME}, {MS_NOSYMFOLLOW, MOUNT_ATTR_NOSYMFOLLOW},
  };
  const unsigned long atime = MS_NOATIME | MS_STRICTATIME | MS_RELATIME;
  uint64_t set = 0, clr = 0;

  for (size_t i = 0; i < ARRAY_SIZE(map); i++) {
    if (o->flags & map[i].ms)
      set |= map[i].attr;
    else if (o->cleared & map[i].ms)
      clr |= map[i].attr;
  }
  /* atime is one mode, not three bits: noatime beats strictatime beats
   * relatime, as in mount(2) */
  if ((o->flags | o->cleared) & atime) {
    clr |= MOUNT_ATTR__ATIME;
    if (o->flags & MS_NOATIME)
      set |= MOUNT_ATTR_NOATIME;
    else if (o->flags & MS_STRICTATIME)
      set |= MOUNT_ATTR_STRICTATIME;
  }
  *ret_set = set;
  *ret_clr = clr;
}

size_t mount_opts_sb_words(const struct mount_opts *o, const char **ret, size_t max)
{
  static const struct {
    unsigned long ms;
    const char *word;
  } map[] = {
      {MS_SYNCHRONOUS, "sync"},  {MS_DIRSYNC, "dirsync"}, {MS_MANDLOCK, "mand"},
      {MS_LAZYTIME, "lazytime"}, {MS_SILENT, "silent"},
  };
  size_t n = 0;

  for (size_t i = 0; i < ARRAY_SIZE(map) && n < max; i++)
    if (o->flags & map[i].ms)
      ret[n++] = map[i].word;
  return n;
}

int mount_propagation_parse(const char *s, unsigned long *ret, struct error *err)
{
  const struct opt_word *w = s != NULL ? find_word(s) : NULL;

  if (w == NULL || w->kind != OPT_PROPAGATION)
    return error_set(err, EINVAL,
                     "rootfs propagation `%s` is not one of shared, slave, private, "
                     "unbindable (or their r* forms)",
                     s != NULL ? s : "");
  *ret = w->flag;
  return 0;
}
