/* explain.c - `agentrt explain ID [--format text|json]` (what the profile
 * changed at create, and why). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/profile_policy.h"
#include "common/util.h"
#include "container/container.h"
#include "os/fsutil.h"
#include "profile/profile.h"

static const struct opt_spec explain_specs[] = {
    {"format", 'f', true, 1},
    {"help", 'h', false, 2},
    {NULL, 0, false, 0},
};

int cmd_explain(const struct global_opts *g, int argc, char **argv, struct error *err)
{
  struct opt_iter it = {argc, argv, 1};
  const char *format = "text", *val;
  struct container *c = NULL;
  cleanup_free char *data = NULL;
  size_t len = 0;
  int id, n, ret = -1;

  while ((n = opt_next(&it, explain_specs, &id, &val, "explain", err)) == 1) {
    if (id == 1)
      format = val;
    else {
      printf("Usage: agentrt explain [--format text|json] ID\n");
      return 0;
    }
  }
  if (n < 0)
    return -1;
  if (strcmp(format, "text") != 0 && strcmp(format, "json") != 0)
    return error_set(err, 0, "explain: --format: expected `text` or `json`, got `%s`", format);
  if (argc - it.i != 1)
    return error_set(err, 0, "explain: expected exactly one container id");
  if (container_load(g, argv[it.i], 0, &c, err) < 0)
    return -1;
  if (read_own_file_at(c->dirfd, "profile.json", 16 << 20, &data, &len, err) < 0) {
    if (err->code == ENOENT)
      error_set(err, 0, "explain `%s`: no profile record (created by another runtime?)", c->id);
    goto out;
  }
  if (strcmp(format, "text") == 0) {
    char *text = NULL;
    if (profile_changes_text_from_json(data, &text, err) < 0)
      goto out;
    free(data);
    data = text;
    len = strlen(text);
  }
  fwrite(data, 1, len, stdout);
  if (len > 0 && data[len - 1] != '\n')
    putchar('\n');
  ret = 0;
out:
  container_free(c);
  return ret;
}
