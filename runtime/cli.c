/* cli.c - option iteration and id validation (see cli.h). */
#include "cli.h"

#include <stdio.h>
#include <string.h>

int opt_next(struct opt_iter *it, const struct opt_spec *specs, int *ret_id, const char **ret_val,
             const char *cmd, struct error *err)
{
  const char *arg, *name, *eq;
  size_t namelen;

  if (it->i >= it->argc)
    return 0;
  arg = it->argv[it->i];
  if (arg[0] != '-' || arg[1] == '\0')
    return 0;
  if (strcmp(arg, "--") == 0) {
    it->i++;
    return 0;
  }
  name = arg + 1;
  if (*name == '-')
    name++;
  eq = strchr(name, '=');
  namelen = eq ? (size_t)(eq - name) : strlen(name);

  for (const struct opt_spec *s = specs; s->name != NULL; s++) {
    bool match_long = strlen(s->name) == namelen && strncmp(s->name, name, namelen) == 0;
    bool match_short =
        s->short_name != 0 && arg[1] != '-' && namelen == 1 && name[0] == s->short_name;
    if (!match_long && !match_short)
      continue;
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

int validate_container_id(const char *id, struct error *err)
{
  size_t n = strlen(id);

  if (n == 0)
    return error_set(err, 0, "container id must not be empty");
  if (n > 1024)
    return error_set(err, 0, "container id is too long (%zu bytes, at most 1024)", n);
  if (strcmp(id, ".") == 0 || strcmp(id, "..") == 0)
    return error_set(err, 0, "invalid container id `%s`", id);
  for (size_t i = 0; i < n; i++) {
    char c = id[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              (i > 0 && (c == '_' || c == '-' || c == '.' || c == '+'));
    if (!ok) {
      char shown[80];
      size_t o = 0;
      for (size_t j = 0; id[j] && o + 5 < sizeof shown; j++) {
        unsigned char ch = (unsigned char)id[j];
        if (ch < 0x20 || ch >= 0x7f || ch == '`')
          o += (size_t)snprintf(shown + o, sizeof shown - o, "\\x%02x", ch);
        else
          shown[o++] = (char)ch;
      }
      shown[o] = '\0';
      return error_set(
          err, 0, "invalid container id `%s`: only letters, digits and _ - . + allowed", shown);
    }
  }
  return 0;
}
