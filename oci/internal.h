/* internal.h - declarations shared by the files of oci/ (not public).
 *
 * Node parsers have the jconv_fn shape; `ret` points to the caller's
 * pointer (struct oci_process **, struct oci_linux **, ...), which is
 * allocated zeroed before any field is read so that a failure can always be
 * cleaned up with the matching free function.
 */
#ifndef AGENTRT_OCI_INTERNAL_H
#define AGENTRT_OCI_INTERNAL_H

#include <stdbool.h>
#include <string.h>

#include "oci/config.h"
#include "oci/json.h"

int oci_process_node(struct jctx *c, const struct jnode *v, void *ret);
int oci_linux_node(struct jctx *c, const struct jnode *v, void *ret);
int oci_resources_node(struct jctx *c, const struct jnode *v, void *ret);
int oci_seccomp_node(struct jctx *c, const struct jnode *v, void *ret);
/* one LinuxIDMapping; and an array of them written under key */
int oci_idmap_node(struct jctx *c, const struct jnode *v, void *ret);
void oci_idmaps_gen(struct jgen *j, const char *key, const struct oci_idmap *m, size_t n);

void oci_config_gen(struct jgen *j, const struct oci_config *c);
void oci_process_gen(struct jgen *j, const struct oci_process *p);
void oci_linux_gen(struct jgen *j, const struct oci_linux *l);
void oci_resources_gen(struct jgen *j, const struct oci_resources *r);
void oci_seccomp_gen(struct jgen *j, const struct oci_seccomp *s);

void oci_linux_free(struct oci_linux *l);

/* Parse a whole document whose root is converted by fn into *ret. */
int oci_parse_doc(const char *json, size_t len, const char *file, jconv_fn fn, void *ret,
                  struct error *err);

/* NULL-terminated vocabularies (names.c). */
extern const char *const oci_seccomp_actions[];
extern const char *const oci_seccomp_operators[];
extern const char *const oci_seccomp_archs[];
extern const char *const oci_seccomp_flags[];
extern const char *const oci_mount_propagations[];

static inline bool oci_name_in(const char *const *list, const char *name)
{
  for (; *list != NULL; list++)
    if (strcmp(*list, name) == 0)
      return true;
  return false;
}

#endif
