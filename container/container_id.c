/* container_id.c - the container id rule (see global_opts.h). */
#include "container/global_opts.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

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
