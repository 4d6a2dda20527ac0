/* cli.c - option iteration (see cli.h). */
#include "cli/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

/* The spec an argument names (`--name`, `-name`, `--name=v`, `-n`), or NULL. */
static const struct opt_spec *opt_match(const struct opt_spec *specs, const char *arg)
{
  const char *name, *eq;
  size_t namelen;

  if (arg[0] != '-' || arg[1] == '\0' || strcmp(arg, "--") == 0)
    return NULL;
  name = arg + 1;
  if (*name == '-')
    name++;
  eq = strchr(name, '=');
  namelen = eq ? (size_t)(eq - name) : strlen(name);
  for (const struct opt_spec *s = specs; s->name != NULL; s++) {
    bool match_long = strlen(s->name) == namelen && strncmp(s->name, name, namelen) == 0;
    bool match_short =
        s->short_name != 0 && arg[1] != '-' && namelen == 1 && name[0] == s->short_name;
    if (match_long || match_short)
      return s;
  }
  return NULL;
}

void opt_permute(struct opt_iter *it, const struct opt_spec *specs)
{
  int n = it->argc - it->i, no = 0, np = 0, k;
  char **opts, **pos;

  if (n < 2)
    return;
  opts = xmalloc((size_t)n * sizeof *opts);
  pos = xmalloc((size_t)n * sizeof *pos);
  for (k = it->i; k < it->argc && strcmp(it->argv[k], "--") != 0; k++) {
    const struct opt_spec *s = opt_match(specs, it->argv[k]);
    if (s == NULL) {
      pos[np++] = it->argv[k]; /* an unknown option too: opt_next reports it */
      continue;
    }
    opts[no++] = it->argv[k];
    if (s->has_arg && strchr(it->argv[k], '=') == NULL && k + 1 < it->argc)
      opts[no++] = it->argv[++k];
  }
  /* "--" and what follows it stay where they are */
  memcpy(it->argv + it->i, opts, (size_t)no * sizeof *opts);
  memcpy(it->argv + it->i + no, pos, (size_t)np * sizeof *pos);
  free(opts);
  free(pos);
}

int opt_next(struct opt_iter *it, const struct opt_spec *specs, int *ret_id, const char **ret_val,
             const char *cmd, struct error *err)
{
  const char *arg, *eq;
  const struct opt_spec *s;

  if (it->i >= it->argc)
    return 0;
  arg = it->argv[it->i];
  if (arg[0] != '-' || arg[1] == '\0')
    return 0;
  if (strcmp(arg, "--") == 0) {
    it->i++;
    return 0;
  }
  eq = strchr(arg, '=');
  s = opt_match(specs, arg);
  if (s != NULL) {
    it->i++;
    *ret_id = s->id;
    *ret_val = NULL;
    if (!s->has_arg) {
      if (eq != NULL) {
        /* --flag=true / --flag=false for booleans, as urfave/cli allows */
        if (strcmp(eq + 1, "true") == 0 || strcmp(eq + 1, "false") == 0) {
          *ret_val = eq + 1;
          return 1;
        }
        return error_set(err, 0, "%s: option `--%s` takes no value", cmd, s->name);
      }
      return 1;
    }
    if (eq != NULL) {
      *ret_val = eq + 1;
      return 1;
    }
    if (it->i >= it->argc)
      return error_set(err, 0, "%s: option `--%s` needs an argument", cmd, s->name);
    *ret_val = it->argv[it->i++];
    return 1;
  }
  return error_set(err, 0, "%s: unknown option `%s`", cmd, arg);
}

const char *cli_one_id(const char *verb, int argc, char **argv, struct error *err)
{
  static const struct opt_spec none[] = {{0}};
  struct opt_iter it = {argc, argv, 1};
  const char *val;
  int id;

  if (opt_next(&it, none, &id, &val, verb, err) < 0)
    return NULL;
  if (argc - it.i != 1) {
    error_set(err, 0, "%s: expected exactly one container id", verb);
    return NULL;
  }
  return argv[it.i];
}
