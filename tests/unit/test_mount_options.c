/* test_mount_options.c - the pure mount option parser, propagation names
 * and path cleaning (container/mount_options.c). */
#include <string.h>

#include "common/util.h"
#include "container/mounts.h"
#include "tests/unit/tap.h"

static bool parse(const char *const *words, struct mount_opts *o)
{
  struct error err = {0};

  return mount_options_parse((char *const *)words, o, &err) == 0;
}

static void test_basic_flags(void)
{
  const char *w[] = {"nosuid", "noexec", "nodev", "ro", NULL};
  struct mount_opts o;

  tap_ok(parse(w, &o), "basic: parses");
  tap_ok(o.flags == (MS_NOSUID | MS_NOEXEC | MS_NODEV | MS_RDONLY), "basic: flags %#lx", o.flags);
  tap_ok(o.data == NULL && o.propagation == 0, "basic: no data, no propagation");
  mount_opts_free(&o);
}

static void test_later_wins(void)
{
  const char *w[] = {"ro", "rw", "nosuid", "suid", "exec", "noexec", NULL};
  struct mount_opts o;

  tap_ok(parse(w, &o), "later wins: parses");
  tap_ok(o.flags == MS_NOEXEC, "later wins: only noexec set (%#lx)", o.flags);
  tap_ok((o.cleared & (MS_RDONLY | MS_NOSUID)) == (MS_RDONLY | MS_NOSUID),
         "later wins: rw and suid recorded as cleared");
  mount_opts_free(&o);
}

static void test_bind_and_propagation(void)
{
  const char *w1[] = {"rbind", "rprivate", NULL};
  const char *w2[] = {"bind", "shared", "slave", NULL};
  const char *w3[] = {"runbindable", NULL};
  struct mount_opts o;

  tap_ok(parse(w1, &o) && o.flags == (MS_BIND | MS_REC) && o.propagation == (MS_PRIVATE | MS_REC),
         "rbind,rprivate");
  mount_opts_free(&o);
  tap_ok(parse(w2, &o) && o.flags == MS_BIND && o.propagation == MS_SLAVE,
         "bind: last propagation word wins");
  mount_opts_free(&o);
  tap_ok(parse(w3, &o) && o.propagation == (MS_UNBINDABLE | MS_REC), "runbindable");
  mount_opts_free(&o);
}

static void test_data_passthrough(void)
{
  const char *w[] = {"nosuid", "size=65536k", "mode=755", "newinstance", "ptmxmode=0666", NULL};
  struct mount_opts o;

  tap_ok(parse(w, &o), "data: parses");
  tap_ok(o.data != NULL && strcmp(o.data, "size=65536k,mode=755,newinstance,ptmxmode=0666") == 0,
         "data: unknown words joined in order (%s)", o.data ? o.data : "(null)");
  tap_ok(o.flags == MS_NOSUID, "data: known words are not data");
  mount_opts_free(&o);
}

static void test_atime_attrs(void)
{
  const char *w1[] = {"noatime", "nodiratime", NULL};
  const char *w2[] = {"strictatime", NULL};
  const char *w3[] = {"ro", "relatime", "dev", NULL};
  struct mount_opts o;
  uint64_t set, clr;

  parse(w1, &o);
  mount_opts_attr(&o, &set, &clr);
  tap_ok(set == (MOUNT_ATTR_NOATIME | MOUNT_ATTR_NODIRATIME) && (clr & MOUNT_ATTR__ATIME),
         "attr: noatime,nodiratime -> set %#llx clr %#llx", (unsigned long long)set,
         (unsigned long long)clr);
  mount_opts_free(&o);
  parse(w2, &o);
  mount_opts_attr(&o, &set, &clr);
  tap_ok(set == MOUNT_ATTR_STRICTATIME && clr == MOUNT_ATTR__ATIME, "attr: strictatime");
  mount_opts_free(&o);
  parse(w3, &o);
  mount_opts_attr(&o, &set, &clr);
  tap_ok(set == MOUNT_ATTR_RDONLY && clr == (MOUNT_ATTR__ATIME | MOUNT_ATTR_NODEV),
         "attr: ro,relatime,dev -> set %#llx clr %#llx", (unsigned long long)set,
         (unsigned long long)clr);
  mount_opts_free(&o);
}

static void test_recursive_attrs(void)
{
  const char *w[] = {"rbind", "rro", "rnosuid", "rnoatime", "rrw", NULL};
  struct mount_opts o;

  tap_ok(parse(w, &o), "recursive: parses");
  tap_ok(o.rec_attr_set == (MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOATIME), "recursive: set %#llx",
         (unsigned long long)o.rec_attr_set);
  tap_ok((o.rec_attr_clr & MOUNT_ATTR_RDONLY) && (o.rec_attr_clr & MOUNT_ATTR__ATIME),
         "recursive: rrw after rro clears ro");
  tap_ok(o.flags == (MS_BIND | MS_REC) && o.data == NULL, "recursive: not data, not flags");
  mount_opts_free(&o);
}

static void test_sb_words(void)
{
  const char *w[] = {"sync", "dirsync", "lazytime", "async", NULL};
  const char *sb[8];
  struct mount_opts o;
  size_t n;

  parse(w, &o);
  n = mount_opts_sb_words(&o, sb, ARRAY_SIZE(sb));
  tap_ok(n == 2 && strcmp(sb[0], "dirsync") == 0 && strcmp(sb[1], "lazytime") == 0,
         "sb words: async cancels sync (%zu words)", n);
  mount_opts_free(&o);
}

static void test_errors_and_edge(void)
{
  const char *idm[] = {"rbind", "idmap", NULL}, *ridm[] = {"ridmap", "bind", NULL};
  const char *empty[] = {"", "defaults", NULL};
  struct error err = {0};
  struct mount_opts o;

  tap_ok(parse(idm, &o) && o.idmap && !o.idmap_rec && o.data == NULL,
         "idmap: an idmapped mount, not a data word");
  mount_opts_free(&o);
  tap_ok(parse(ridm, &o) && o.idmap && o.idmap_rec, "ridmap: recursively idmapped");
  mount_opts_free(&o);
  tap_ok(mount_options_parse(NULL, &o, &err) == 0 && o.flags == 0 && o.data == NULL,
         "NULL options vector");
  tap_ok(parse(empty, &o) && o.flags == 0 && o.data == NULL, "empty word and defaults ignored");
  mount_opts_free(&o);
  {
    const char *cu[] = {"nosuid", "tmpcopyup", "size=1m", NULL};
    tap_ok(parse(cu, &o) && o.tmpcopyup && o.data != NULL && strcmp(o.data, "size=1m") == 0,
           "tmpcopyup is a flag, not a kernel word");
    mount_opts_free(&o);
  }
}

static void test_propagation_parse(void)
{
  struct error err = {0};
  unsigned long f = 0;

  tap_ok(mount_propagation_parse("rslave", &f, &err) == 0 && f == (MS_SLAVE | MS_REC),
         "propagation: rslave");
  tap_ok(mount_propagation_parse("private", &f, &err) == 0 && f == MS_PRIVATE,
         "propagation: private");
  tap_ok(mount_propagation_parse("ro", &f, &err) < 0 && strstr(err.msg, "`ro`"),
         "propagation: ro rejected (%s)", err.msg);
  tap_ok(mount_propagation_parse("bogus", &f, &err) < 0, "propagation: bogus rejected");
}

static void test_path_normalize(void)
{
  static const char *const cases[][2] = {
      {"/proc", "/proc"},
      {"//proc/", "/proc"},
      {"/proc/./sys/..", "/proc"},
      {"proc", "/proc"},
      {"/../../etc", "/etc"},
      {"/", "/"},
      {"", "/"},
      {"/a/b/../../..", "/"},
      {"/dev//pts/./ptmx", "/dev/pts/ptmx"},
      {"/a/..b/c", "/a/..b/c"},
      {"/a/.../b", "/a/.../b"},
  };

  for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
    char *c = path_normalize(cases[i][0]);
    tap_ok(strcmp(c, cases[i][1]) == 0, "path_normalize(\"%s\") = \"%s\" (want \"%s\")",
           cases[i][0], c, cases[i][1]);
    free(c);
  }
}

static void test_path_is_below(void)
{
  static const struct {
    const char *path, *dir;
    bool want;
  } cases[] = {
      {"/a/b", "/a", true},     {"/a", "/a", true},       {"/ab", "/a", false},
      {"/a", "/a/b", false},    {"/anything", "/", true}, {"/", "/", true},
      {"/a/b/c", "/a/b", true}, {"/a/bc", "/a/b", false},
  };

  for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
    tap_ok(path_is_below(cases[i].path, cases[i].dir) == cases[i].want,
           "path_is_below(\"%s\", \"%s\") is %s", cases[i].path, cases[i].dir,
           cases[i].want ? "true" : "false");
}

int main(void)
{
  test_basic_flags();
  test_later_wins();
  test_bind_and_propagation();
  test_data_passthrough();
  test_atime_attrs();
  test_recursive_attrs();
  test_sb_words();
  test_errors_and_edge();
  test_propagation_parse();
  test_path_normalize();
  test_path_is_below();
  return tap_done();
}
