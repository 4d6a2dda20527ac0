/* data_cmd.c - `agentrt purge`, `agentrt data`, and finding a container's
 * workspace or trail in the data directory (data_cmd.h). */
#include "cli/data_cmd.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "profile/profile.h"
#include "container/container.h"
#include "os/fsutil.h"
#include "workspace/workspace.h"

static void query(const struct global_opts *g, enum data_kind k, struct datadir_query *q)
{
  *q = (struct datadir_query){
      .data_dir = g->data_dir,
      .only_root = g->root_given ? g->root : NULL,
      .legacy_root = g->root,
      .sub = k == DATA_WORKSPACE ? DATADIR_WORKSPACES : DATADIR_AUDIT,
      .need = k == DATA_WORKSPACE ? "meta.json" : "head",
      .what = k == DATA_WORKSPACE ? "workspace" : "audit",
      .none = k == DATA_WORKSPACE ? "does not exist" : "no audit trail",
  };
}

int data_find(const struct global_opts *g, enum data_kind k, const char *id,
              struct global_opts *ret_g, struct datadir_hit *ret_hit, struct error *err)
{
  struct datadir_query q;

  query(g, k, &q);
  if (datadir_find(&q, id, ret_hit, err) < 0)
    return -1;
  *ret_g = *g;
  ret_g->root = ret_hit->root;
  ret_g->store = ret_hit->store;
  if (!g->root_given)
    fprintf(stderr, "agentrt: %s `%s`: engine root `%s`%s\n", q.what, ret_hit->id, ret_hit->root,
            ret_hit->legacy ? " (kept under the root itself: `agentrt data migrate` moves it)"
                            : "");
  return 0;
}

int data_list(const struct global_opts *g, enum data_kind k, struct datadir_hit **ret,
              size_t *ret_n, struct error *err)
{
  struct datadir_query q;

  query(g, k, &q);
  return datadir_list(&q, ret, ret_n, err);
}

/* ---------------------------------------------------------------- purge */

enum { P_OLDER = 1, P_DRY, P_HELP };

static const struct opt_spec purge_specs[] = {
    {"older-than", 0, true, P_OLDER},
    {"dry-run", 'n', false, P_DRY},
    {"help", 'h', false, P_HELP},
    {NULL, 0, false, 0},
};

int cmd_purge(const struct global_opts *g, int argc, char **argv, struct error *err)
{
  struct opt_iter it = {argc, argv, 1};
  struct datadir_sweep s = {.data_dir = g->data_dir, .conf = g->conf};
  cleanup_strv char **text = NULL;
  const char *val;
  int id, n;

  while ((n = opt_next(&it, purge_specs, &id, &val, "purge", err)) == 1) {
    switch (id) {
    case P_OLDER:
      if (profile_parse_duration(val, &s.older_than) < 0 || s.older_than == 0)
        return error_set(err, 0, "purge: --older-than: expected a duration (12h, 7d), got `%s`",
                         val);
      break;
    case P_DRY:
      s.dry_run = true;
      break;
    case P_HELP:
      printf("Usage: agentrt purge [--older-than DURATION] [--dry-run]\n"
             "Removes the workspaces and audit trails of the data directory that no container\n"
             "uses: those unused for longer than DURATION (default: the host config's\n"
             "workspaces.max-age and audit.max-age), then the oldest while the total is over\n"
             "workspaces.max-total-size / audit.max-total-size.  Each removal is recorded in\n"
             "the trail `agentrt audit --dir DATA-DIR retention`.\n");
      return 0;
    }
  }
  if (n < 0)
    return -1;
  if (it.i != argc)
    return error_set(err, 0, "purge: unexpected argument `%s`", argv[it.i]);
  n = datadir_retention(&s, NULL, &text, err);
  for (size_t i = 0; text && text[i]; i++)
    printf("%s\n", text[i]);
  if (n == 0)
    printf("nothing to remove in %s\n", g->data_dir);
  return 0;
}

/* ---------------------------------------------------------------- data */

/* The file names of a flat directory (bounded). */
static char **file_names(int dfd)
{
  char **v = xmalloc0(sizeof *v);
  int fd = dup(dfd);
  DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
  struct dirent *e;
  size_t n = 0;

  if (d == NULL) {
    if (fd >= 0)
      close(fd);
    return v;
  }
  while ((e = readdir(d)) != NULL && n++ < 100000)
    if (e->d_type == DT_REG)
      strv_push(&v, e->d_name);
  closedir(d);
  return v;
}

/* <from>/.audit/<id> -> <to>/.audit/<id>: a rename, else a copy of the
 * trail's files (a flat directory) and the removal of the old one. */
static int move_trail(const char *from, const char *to, const char *id, struct error *err)
{
  cleanup_free char *src = xfmt("%s/%s/%s", from, DATADIR_AUDIT, id);
  cleanup_free char *base = xfmt("%s/%s", to, DATADIR_AUDIT);
  cleanup_free char *dst = xfmt("%s/%s", base, id);
  cleanup_close int sfd = -1, dfd = -1, pfd = -1;
  cleanup_strv char **names = NULL;

  if (mkdir(base, 0700) < 0 && errno != EEXIST)
    return error_errno(err, "audit `%s`: mkdir `%s`", id, base);
  if (access(dst, F_OK) == 0)
    return error_set(err, EEXIST, "audit `%s`: `%s` already exists", id, dst);
  if (rename(src, dst) == 0)
    return 0;
  if (errno != EXDEV)
    return error_errno(err, "audit `%s`: move to `%s`", id, dst);
  sfd = open(src, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (sfd < 0 || mkdir(dst, 0700) < 0 ||
      (dfd = open(dst, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
    return error_errno(err, "audit `%s`: copy to `%s`", id, dst);
  names = file_names(sfd);
  for (size_t i = 0; names[i]; i++) {
    cleanup_free char *data = NULL;
    size_t len = 0;
    if (read_file_at(sfd, names[i], (size_t)1 << 30, &data, &len, err) < 0 ||
        write_file_atomic_at(dfd, names[i], data, len, err) < 0) {
      pfd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (pfd >= 0)
        rm_rf_at(pfd, id);
      return error_prefix(err, "audit `%s`: copy to `%s`", id, dst);
    }
  }
  {
    cleanup_free char *parent = xfmt("%s/%s", from, DATADIR_AUDIT);
    pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (pfd < 0 || rm_rf_at(pfd, id) < 0)
      return error_errno(err, "audit `%s`: remove `%s` after the copy", id, src);
  }
  return 0;
}

int data_adopt_legacy(const struct global_opts *g, const char *id, struct error *err)
{
  cleanup_free char *ws = xfmt("%s/%s/%s/meta.json", g->root, DATADIR_WORKSPACES, id);
  cleanup_free char *trail = xfmt("%s/%s/%s/head", g->root, DATADIR_AUDIT, id);
  cleanup_free char *ws_new = xfmt("%s/%s/%s", g->store, DATADIR_WORKSPACES, id);
  cleanup_free char *trail_new = xfmt("%s/%s/%s", g->store, DATADIR_AUDIT, id);

  if (access(ws, F_OK) == 0 && access(ws_new, F_OK) != 0 &&
      workspace_move(g->root, g->store, id, err) < 0)
    return -1;
  if (access(trail, F_OK) == 0 && access(trail_new, F_OK) != 0 &&
      move_trail(g->root, g->store, id, err) < 0)
    return -1;
  return 0;
}

/* Move every workspace and trail kept under --root into its store; those
 * of containers that still exist stay (their mounts and monitors use them). */
static int migrate(const struct global_opts *g, bool dry_run, struct error *err)
{
  static const struct {
    const char *sub, *need, *what;
  } kinds[] = {{DATADIR_WORKSPACES, "meta.json", "workspace"}, {DATADIR_AUDIT, "head", "audit"}};
  size_t moved = 0, kept = 0;

  if (!dry_run && datadir_store_prepare(g->data_dir, g->root, err) < 0)
    return -1;
  for (size_t k = 0; k < ARRAY_SIZE(kinds); k++) {
    struct datadir_query q = {.data_dir = g->data_dir,
                              .legacy_root = g->root,
                              .legacy_only = true,
                              .sub = kinds[k].sub,
                              .need = kinds[k].need,
                              .what = kinds[k].what};
    struct datadir_hit *v = NULL;
    size_t n = 0;
    datadir_list(&q, &v, &n, err);
    for (size_t i = 0; i < n; i++) {
      cleanup_free char *state = xfmt("%s/%s/state.json", g->root, v[i].id);
      struct error e = {0};
      int r = 0;
      if (!v[i].legacy) {
        datadir_hit_free(&v[i]);
        continue;
      }
      if (access(state, F_OK) == 0) {
        printf("kept %s %s: the container still exists; delete it, then migrate again\n",
               kinds[k].what, v[i].id);
        kept++;
      } else if (!dry_run) {
        r = k == 0 ? workspace_move(g->root, g->store, v[i].id, &e)
                   : move_trail(g->root, g->store, v[i].id, &e);
      }
      if (r < 0) {
        fprintf(stderr, "agentrt: data migrate: %s\n", e.msg);
        kept++;
      } else if (access(state, F_OK) != 0) {
        printf("%s %s %s to %s\n", dry_run ? "would move" : "moved", kinds[k].what, v[i].id,
               g->store);
        moved++;
      }
      datadir_hit_free(&v[i]);
    }
    free(v);
  }
  printf("%zu moved, %zu kept under %s\n", moved, kept, g->root);
  return kept > 0 ? error_set(err, 0, "data migrate: %zu left under `%s`", kept, g->root) : 0;
}

int cmd_data(const struct global_opts *g, int argc, char **argv, struct error *err)
{
  bool dry_run = argc == 3 && (streq(argv[2], "--dry-run") || streq(argv[2], "-n"));

  if (argc >= 2 && (streq(argv[1], "--help") || streq(argv[1], "-h"))) {
    printf("Usage: agentrt [--root R] [--data-dir D] data path\n"
           "       agentrt [--root R] [--data-dir D] data migrate [--dry-run]\n");
    return 0;
  }
  if (argc == 2 && streq(argv[1], "path")) {
    printf("data-dir: %s\nroot: %s\nstore: %s\n", g->data_dir, g->root, g->store);
    return 0;
  }
  if (argc >= 2 && streq(argv[1], "migrate") && (argc == 2 || dry_run))
    return migrate(g, dry_run, err);
  return error_set(err, 0, "data: expected `data path` or `data migrate [--dry-run]`");
}
