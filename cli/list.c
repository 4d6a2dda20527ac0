/* list.c - `agentrt list [--format table|json] [--quiet]`. */
#include <dirent.h>
#include <fcntl.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "audit/jbuf.h"
#include "common/util.h"
#include "os/fsutil.h"
#include "os/passwd.h"
#include "container/container.h"

static const struct opt_spec list_specs[] = {
    {"format", 'f', true, 1},
    {"quiet", 'q', false, 2},
    {"help", 'h', false, 3},
    {NULL, 0, false, 0},
};

/* Is `id` a sub-agent of `parent`: its sub/ directory names it? */
static bool is_subagent_of(const struct global_opts *g, const char *id, const char *parent)
{
  cleanup_free char *p = xfmt("%s/%s/sub/%s/id", g->root, parent, id + strlen(parent) + 1);
  cleanup_free char *text = NULL;
  size_t len = 0;
  struct error e = {0};

  return read_file_at(AT_FDCWD, p, 4096, &text, &len, &e) == 0 && streq(text, id);
}

/* runc's OWNER: the user owning the container's state directory, by name from
 * the host's /etc/passwd, or "#UID" */
static char *state_owner(const struct global_opts *g, const char *id)
{
  cleanup_free char *p = xfmt("%s/%s", g->root, id);
  struct stat st;
  char *name;

  if (lstat(p, &st) < 0)
    return xstrdup("");
  name = passwd_name_file("/etc/passwd", st.st_uid);
  return name != NULL ? name : xfmt("#%u", (unsigned)st.st_uid);
}

/* list-killed-create: a state directory without state.json that no create works on (one killed
 * before it saved its state) is listed in the table and in JSON alike, with runc's fields:
 * pid 0, no bundle, created when the directory last changed (a Go client cannot parse an
 * empty time: go-runc's list would fail whole). */
static void describe_unsaved(struct container *c)
{
  char buf[RFC3339_NANO_SIZE];
  struct stat st;

  if (fstat(c->dirfd, &st) == 0) {
    rfc3339_at(&st.st_mtim, buf);
    free(c->state->created);
    c->state->created = xstrdup(buf);
  }
  if (c->state->oci_version == NULL)
    c->state->oci_version = xstrdup(OCI_STATE_VERSION);
}

/* A column of the table as a terminal may show it: the engine's bundle path or a user name
 * with escape sequences in it, its controls as \xNN (list-table-escapes: they retitled and
 * recoloured the terminal of whoever ran `list`); "" for none. */
static char *for_terminal(const char *s)
{
  struct jbuf b = {0};

  if (s == NULL)
    return xstrdup("");
  jb_text(&b, s, strlen(s));
  return jb_take(&b);
}

static int id_cmp(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

int cmd_list(const struct global_opts *g, int argc, char **argv, struct error *err)
{
  struct opt_iter it = {argc, argv, 1};
  const char *format = "table", *val;
  bool quiet = false, first = true, json;
  cleanup_strv char **ids = NULL;
  cleanup_strv char **tmps = NULL;
  DIR *d;
  struct dirent *e;
  int id, n;

  opt_permute(&it, list_specs);
  while ((n = opt_next(&it, list_specs, &id, &val, "list", err)) == 1) {
    if (id == 1)
      format = val;
    else if (id == 2)
      quiet = true;
    else {
      printf("Usage: agentrt list [--format table|json] [--quiet]\n");
      return 0;
    }
  }
  if (n < 0)
    return -1;
  if (strcmp(format, "table") != 0 && strcmp(format, "json") != 0)
    return error_set(err, 0, "list: --format: expected `table` or `json`, got `%s`", format);
  if (argc - it.i != 0)
    return error_set(err, 0, "list: takes no arguments");
  d = opendir(g->root);
  if (d == NULL && errno != ENOENT)
    return error_errno(err, "list: open `%s`", g->root);
  while (d && (e = readdir(d)) != NULL) {
    struct error ignore = {0};
    if (strncmp(e->d_name, ".creating.", 10) == 0) /* (create-tmp-leftover) */
      strv_push(&tmps, e->d_name);
    if (e->d_name[0] == '.' || validate_container_id(e->d_name, &ignore) < 0)
      continue;
    strv_push(&ids, e->d_name);
  }
  if (d)
    closedir(d);
  container_remove_dead_tmp(g->root, tmps);
  if (ids)
    qsort(ids, strv_len(ids), sizeof *ids, id_cmp);
  /* sub-agents ("<parent>.<name>", monitor/subagents.h) sort right after
   * their parent: the table indents them below it */
  /* as runc: --quiet wins over --format (list-quiet-json) */
  json = !quiet && strcmp(format, "json") == 0;
  if (!json && !quiet)
    printf("%-12s %-8s %-10s %-40s %-30s %s\n", "ID", "PID", "STATUS", "BUNDLE", "CREATED",
           "OWNER");
  for (size_t i = 0; ids && ids[i]; i++) {
    struct container *c = NULL;
    struct error e2 = {0};
    cleanup_free char *doc = NULL;
    cleanup_free char *owner = NULL;
    if (container_load(g, ids[i], 0, &c, &e2) < 0)
      continue;
    /* no state.json: a create in progress, or one that died (stopped) */
    if (c->status == STATUS_CREATING && container_refresh_status(c) != STATUS_CREATING)
      c->state->pid = 0;
    /* a create at work: no state document yet (as `state`, as runc); an empty directory may
     * be one that has not locked it yet, where container_new makes it in place (create takes
     * over only a non-empty one) */
    if (c->state->bundle == NULL && json &&
        (c->status == STATUS_CREATING || !fs_dir_has_entries(c->dirfd))) {
      container_free(c);
      continue;
    }
    if (c->state->bundle == NULL)
      describe_unsaved(c);
    if (c->status == STATUS_STOPPED)
      c->state->pid = 0;
    if (quiet) {
      printf("%s\n", c->id);
    } else if (json) {
      /* `state` says "" as runc's does; runc's list names the owner */
      owner = state_owner(g, c->id);
      free(c->state->owner);
      c->state->owner = xstrdup(owner);
      if (container_state_json(c, &doc, &e2) == 0) {
        printf("%s%s", first ? "[" : ",", doc);
        first = false;
      }
    } else {
      cleanup_free char *shown = NULL;
      int depth = 0;
      for (size_t j = 0; j < i; j++) {
        size_t l = strlen(ids[j]);
        if (strncmp(ids[i], ids[j], l) == 0 && ids[i][l] == '.' &&
            is_subagent_of(g, ids[i], ids[j]))
          depth++;
      }
      owner = state_owner(g, c->id);
      if (depth > 0)
        shown = xfmt("%*s└─ %s", 3 * (depth - 1), "", c->id);
      cleanup_free char *bundle = for_terminal(c->state->bundle);
      cleanup_free char *created = for_terminal(c->state->created);
      cleanup_free char *who = for_terminal(owner);
      printf("%-12s %-8d %-10s %-40s %-30s %s\n", shown ? shown : c->id, c->state->pid,
             container_status_name(c->status), bundle, created, who);
    }
    container_free(c);
  }
  /* runc encodes an empty list as null (list-empty-null) */
  if (json)
    printf("%s\n", first ? "null" : "]");
  return 0;
}
