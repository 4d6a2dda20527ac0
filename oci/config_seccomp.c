/* config_seccomp.c - linux.seccomp: parse, validate, write, free.
 *
 * Names (actions, operators, architectures, flags) are checked against the
 * vocabulary in names.c so that a typo fails at parse time with its JSON
 * path instead of deep inside filter construction.  Building the filter is
 * the runtime's business; this file only checks the document.
 */
#include "common/util.h"
#include "oci/internal.h"

static int conv_name_in(struct jctx *c, const struct jnode *v, void *ret, const char *const *list,
                        const char *what)
{
  if (j_str(c, v, ret) < 0)
    return -1;
  if (!oci_name_in(list, *(char **)ret))
    return jfail(c, "unknown %s `%s`", what, *(char **)ret);
  return 0;
}

static int conv_action(struct jctx *c, const struct jnode *v, void *ret)
{
  return conv_name_in(c, v, ret, oci_seccomp_actions, "seccomp action");
}

static int conv_op(struct jctx *c, const struct jnode *v, void *ret)
{
  return conv_name_in(c, v, ret, oci_seccomp_operators, "seccomp operator");
}

static int conv_names(struct jctx *c, const struct jnode *v, void *ret, const char *const *list,
                      const char *what)
{
  char **names;

  if (j_strv(c, v, ret) < 0)
    return -1;
  names = *(char ***)ret;
  for (size_t i = 0; names[i] != NULL; i++) {
    if (!oci_name_in(list, names[i])) {
      size_t m = jpush_index(c, i);
      jfail(c, "unknown %s `%s`", what, names[i]);
      jpop(c, m);
      return -1;
    }
  }
  return 0;
}

static int conv_archs(struct jctx *c, const struct jnode *v, void *ret)
{
  return conv_names(c, v, ret, oci_seccomp_archs, "seccomp architecture");
}

static int conv_flags(struct jctx *c, const struct jnode *v, void *ret)
{
  return conv_names(c, v, ret, oci_seccomp_flags, "seccomp flag");
}

static int conv_arg(struct jctx *c, const struct jnode *v, void *ret)
{
  struct oci_seccomp_arg *a = ret;

  if (jexpect(c, v, JT_OBJECT) < 0)
    return -1;
  if (jfield_req(c, v, "index", j_u32, &a->index) < 0 ||
      jfield_req(c, v, "value", j_u64, &a->value) < 0 ||
      jfield(c, v, "valueTwo", j_u64, &a->value_two, NULL) < 0 ||
      jfield_req(c, v, "op", conv_op, &a->op) < 0)
    return -1;
  if (a->index > 5)
    return jfail_at(c, "index", "out of range (0 to 5)");
  return 0;
}

/* errnoRet only makes sense for actions that return an errno (spec). */
static int check_errno_action(struct jctx *c, const char *key, const char *action)
{
  if (strcmp(action, "SCMP_ACT_ERRNO") == 0 || strcmp(action, "SCMP_ACT_TRACE") == 0)
    return 0;
  return jfail_at(c, key, "not supported with action `%s`", action);
}

static int conv_syscall(struct jctx *c, const struct jnode *v, void *ret)
{
  struct oci_seccomp_syscall *s = ret;

  if (jexpect(c, v, JT_OBJECT) < 0)
    return -1;
  if (jfield_req(c, v, "names", j_strv, &s->names) < 0 ||
      jfield_req(c, v, "action", conv_action, &s->action) < 0 ||
      jfield(c, v, "errnoRet", j_u32, &s->errno_ret, &s->has_errno_ret) < 0 ||
      jfield_array(c, v, "args", sizeof(struct oci_seccomp_arg), conv_arg, &s->args, &s->n_args) <
          0)
    return -1;
  if (s->names[0] == NULL)
    return jfail_at(c, "names", "must not be empty");
  for (size_t i = 0; s->names[i] != NULL; i++) {
    if (s->names[i][0] == '\0') {
      size_t m = jpush_key(c, "names");
      size_t m2 = jpush_index(c, i);
      jfail(c, "must not be empty");
      jpop(c, m2);
      jpop(c, m);
      return -1;
    }
  }
  if (s->has_errno_ret && check_errno_action(c, "errnoRet", s->action) < 0)
    return -1;
  return 0;
}

bool oci_seccomp_uses_notify(const struct oci_seccomp *s)
{
  if (s == NULL)
    return false;
  if (strcmp(s->default_action, "SCMP_ACT_NOTIFY") == 0)
    return true;
  for (size_t i = 0; i < s->n_syscalls; i++)
    if (strcmp(s->syscalls[i].action, "SCMP_ACT_NOTIFY") == 0)
      return true;
  return false;
}

int oci_seccomp_node(struct jctx *c, const struct jnode *v, void *ret)
{
  struct oci_seccomp **out = ret;
  struct oci_seccomp *s;

  if (jexpect(c, v, JT_OBJECT) < 0)
    return -1;
  s = *out = xmalloc0(sizeof **out);
  if (jfield_req(c, v, "defaultAction", conv_action, &s->default_action) < 0 ||
      jfield(c, v, "defaultErrnoRet", j_u32, &s->default_errno_ret, &s->has_default_errno_ret) <
          0 ||
      jfield(c, v, "architectures", conv_archs, &s->architectures, NULL) < 0 ||
      jfield(c, v, "flags", conv_flags, &s->flags, NULL) < 0 ||
      jfield(c, v, "listenerPath", j_abspath, &s->listener_path, NULL) < 0 ||
      jfield(c, v, "listenerMetadata", j_str, &s->listener_metadata, NULL) < 0 ||
      jfield_array(c, v, "syscalls", sizeof(struct oci_seccomp_syscall), conv_syscall, &s->syscalls,
                   &s->n_syscalls) < 0)
    return -1;
  if (s->has_default_errno_ret && check_errno_action(c, "defaultErrnoRet", s->default_action) < 0)
    return -1;
  if (s->listener_path == NULL && oci_seccomp_uses_notify(s))
    return jfail_at(c, "listenerPath", "is required when SCMP_ACT_NOTIFY is used");
  /* as runc: the runtime's own last writes (its errors, the listener's
   * hand-over) would wait on the agent, and every call would be the
   * agent's to answer */
  if (strcmp(s->default_action, "SCMP_ACT_NOTIFY") == 0)
    return jfail_at(c, "defaultAction", "SCMP_ACT_NOTIFY cannot be used as the default action");
  for (size_t i = 0; i < s->n_syscalls; i++) {
    const struct oci_seccomp_syscall *sc = &s->syscalls[i];
    if (strcmp(sc->action, "SCMP_ACT_NOTIFY") != 0)
      continue;
    for (size_t j = 0; sc->names != NULL && sc->names[j] != NULL; j++)
      if (strcmp(sc->names[j], "write") == 0)
        return jfail_at(c, "syscalls", "SCMP_ACT_NOTIFY cannot be used for the write syscall");
  }
  return 0;
}

void oci_seccomp_free(struct oci_seccomp *s)
{
  if (s == NULL)
    return;
  free(s->default_action);
  strv_free(s->architectures);
  strv_free(s->flags);
  free(s->listener_path);
  free(s->listener_metadata);
  for (size_t i = 0; s->syscalls != NULL && i < s->n_syscalls; i++) {
    struct oci_seccomp_syscall *sc = &s->syscalls[i];
    strv_free(sc->names);
    free(sc->action);
    for (size_t k = 0; sc->args != NULL && k < sc->n_args; k++)
      free(sc->args[k].op);
    free(sc->args);
  }
  free(s->syscalls);
  free(s);
}

static void gen_syscall(struct jgen *j, const struct oci_seccomp_syscall *sc)
{
  jg_open(j);
  jg_kstrv(j, "names", sc->names);
  jg_kstr(j, "action", sc->action);
  if (sc->has_errno_ret)
    jg_ku64(j, "errnoRet", sc->errno_ret);
  if (sc->args != NULL) {
    jg_key(j, "args");
    jg_aopen(j);
    for (size_t k = 0; k < sc->n_args; k++) {
      jg_open(j);
      jg_ku64(j, "index", sc->args[k].index);
      jg_ku64(j, "value", sc->args[k].value);
      jg_ku64(j, "valueTwo", sc->args[k].value_two);
      jg_kstr(j, "op", sc->args[k].op);
      jg_close(j);
    }
    jg_aclose(j);
  }
  jg_close(j);
}

void oci_seccomp_gen(struct jgen *j, const struct oci_seccomp *s)
{
  jg_open(j);
  jg_kstr(j, "defaultAction", s->default_action);
  if (s->has_default_errno_ret)
    jg_ku64(j, "defaultErrnoRet", s->default_errno_ret);
  jg_kstrv(j, "architectures", s->architectures);
  jg_kstrv(j, "flags", s->flags);
  jg_kstr(j, "listenerPath", s->listener_path);
  jg_kstr(j, "listenerMetadata", s->listener_metadata);
  if (s->syscalls != NULL) {
    jg_key(j, "syscalls");
    jg_aopen(j);
    for (size_t i = 0; i < s->n_syscalls; i++)
      gen_syscall(j, &s->syscalls[i]);
    jg_aclose(j);
  }
  jg_close(j);
}
