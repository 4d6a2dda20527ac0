/* parse.h - the profile parser's helpers, shared by parse.c and sections.c. */
#ifndef AGENTRT_PROFILE_PARSE_H
#define AGENTRT_PROFILE_PARSE_H

#include <yajl/yajl_tree.h>

#include "profile/internal.h"

struct pctx {
  const char *file;
  struct error *err;
};

/* One member of a JSON object, stored at byte offset `off` of the profile.
 * has_off (when non-zero) is the offset of its has_* flag: null clears it. */
enum ptype {
  P_SKIP,
  P_BOOL,
  P_STR,
  P_STRV,
  P_SIZE,
  P_COUNT,
  P_CPUS,
  P_DURATION,
  P_CAPS,
  P_NS,
  P_OBJECT,
  P_FN
};
struct pfield {
  const char *name;
  enum ptype type;
  size_t off;
  size_t has_off;
  const struct pfield *sub; /* P_OBJECT */
  /* P_FN: path is the JSON path of v ("workspace.mode"). */
  int (*fn)(struct pctx *c, const char *path, yajl_val v, struct agent_profile *p);
};

int profile_pfail(struct pctx *c, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
char *profile_path_join(const char *path, const char *key);
int profile_walk_object(struct pctx *c, const char *path, yajl_val v, const struct pfield *fields,
                        struct agent_profile *p);

int profile_get_bool(struct pctx *c, const char *path, yajl_val v, bool *ret);
int profile_get_string(struct pctx *c, const char *path, yajl_val v, char **ret);
int profile_get_strv(struct pctx *c, const char *path, yajl_val v, char ***ret);
int profile_get_size(struct pctx *c, const char *path, yajl_val v, uint64_t *ret);
int profile_get_count(struct pctx *c, const char *path, yajl_val v, uint64_t *ret);
int profile_get_cpus(struct pctx *c, const char *path, yajl_val v, uint64_t *ret);
int profile_get_duration(struct pctx *c, const char *path, yajl_val v, uint64_t *ret);
int profile_get_caps(struct pctx *c, const char *path, yajl_val v, uint64_t *ret);
int profile_get_ns_set(struct pctx *c, const char *path, yajl_val v, unsigned *ret);

/* sections.c */
int profile_parse_document(struct pctx *c, yajl_val v, struct agent_profile *p);
/* secrets.c */
int profile_parse_secrets(struct pctx *c, const char *path, yajl_val v, struct agent_profile *p);
int profile_parse_http_rules(struct pctx *c, const char *path, yajl_val v, struct agent_profile *p);
int profile_validate_secrets(struct pctx *c, const struct agent_profile *p);
/* validate.c: cross-field checks on the final profile. */
int profile_validate_profile(struct pctx *c, const struct agent_profile *p);

#endif
