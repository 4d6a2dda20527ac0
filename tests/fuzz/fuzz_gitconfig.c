/* fuzz_gitconfig.c - the host repository's git configuration reader
 * (workspace/gitconfig.c), as the host repository's file and as the
 * operator's: any text parses without a crash, and every path
 * it names lies in the work tree (relative, no `..` component, no empty one). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "workspace/internal.h"

static void check(const char *p)
{
  size_t n = strlen(p);

  if (n == 0 || p[0] == '/' || p[n - 1] == '/' || strstr(p, "//") != NULL)
    abort();
  for (const char *c = p; c != NULL; c = strchr(c, '/')) {
    if (*c == '/')
      c++;
    if (strncmp(c, "..", 2) == 0 && (c[2] == '/' || c[2] == '\0'))
      abort();
    if (strncmp(c, "./", 2) == 0 || strcmp(c, ".") == 0)
      abort();
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct ws_gitcfg g = {0};
  char **inc = NULL;

  ws_gitcfg_parse((const char *)data, size, ".git", "/srv/proj", &g, &inc);
  for (size_t i = 0; i < g.n; i++)
    check(g.paths[i]);
  for (size_t i = 0; inc != NULL && inc[i] != NULL; i++)
    check(inc[i]);
  ws_gitcfg_free(&g);
  strv_free(inc);
  /* as a file outside the work tree (the operator's): its includes are the
   * values as written, the paths it names still in the work tree */
  inc = NULL;
  g = (struct ws_gitcfg){0};
  ws_gitcfg_parse((const char *)data, size, NULL, "/srv/proj", &g, &inc);
  for (size_t i = 0; i < g.n; i++)
    check(g.paths[i]);
  ws_gitcfg_free(&g);
  strv_free(inc);
  return 0;
}
