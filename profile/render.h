/* render.h - yajl generation helpers shared by render.c and show.c. */
#ifndef AGENTRT_PROFILE_RENDER_H
#define AGENTRT_PROFILE_RENDER_H

#include <yajl/yajl_gen.h>

#include "profile/internal.h"

void profile_gen_str(yajl_gen g, const char *s);
void profile_gen_key_str(yajl_gen g, const char *k, const char *v);
void profile_gen_mount(yajl_gen g, const char *dest, const char *type, const char *src,
                       const char *const *opts);
void profile_gen_key_u64(yajl_gen g, const char *k, uint64_t v);
void profile_gen_key_bool(yajl_gen g, const char *k, bool v);
void profile_gen_key_strv(yajl_gen g, const char *k, char **v);
void profile_gen_egress(yajl_gen g, const struct profile_egress *e);
void profile_gen_ingress(yajl_gen g, const struct profile_egress *e);
void profile_gen_secrets(yajl_gen g, const struct profile_secret *s, size_t n);
void profile_gen_audit(yajl_gen g, const struct profile_audit *a);
void profile_gen_subagents(yajl_gen g, const struct profile_subagents *s);
void profile_gen_retention(yajl_gen g, const struct profile_retention *r);
const char *profile_egress_default_name(enum profile_egress_default d);
/* Hands out the buffer and frees g. */
int profile_gen_finish(yajl_gen g, char **ret_json, size_t *ret_len, struct error *err);

#endif
