/* state_json.c - the container state document (see state.h).
 *
 * Public part: the OCI state as `agentrt state` prints it, in runc's field
 * order; "annotations" only when there are some (runc: omitempty).
 * Private part (with_private): an "agentrt" object holding what the runtime
 * needs to find the container again; the state dir copy carries both.
 * The parser accepts either form.
 */
#include "oci/state.h"

#include "common/util.h"
#include "oci/internal.h"

static const char *const statuses[] = {"creating", "created", "running", "paused", "stopped", NULL};

static int conv_status(struct jctx *c, const struct jnode *v, void *ret)
{
  if (j_str(c, v, ret) < 0)
    return -1;
  if (!oci_name_in(statuses, *(char **)ret))
    return jfail(c, "unknown status `%s`", *(char **)ret);
  return 0;
}

static int conv_pid(struct jctx *c, const struct jnode *v, void *ret)
{
  if (j_int(c, v, ret) < 0)
    return -1;
  if (*(int *)ret < 0)
    return jfail(c, "must not be negative");
  return 0;
}

static int conv_private(struct jctx *c, const struct jnode *v, void *ret)
{
  struct oci_state *s = ret;

  if (jexpect(c, v, JT_OBJECT) < 0)
    return -1;
  if (jfield(c, v, "pidStartTime", j_u64, &s->pid_start_time, NULL) < 0 ||
      jfield(c, v, "cgroupPath", j_str, &s->cgroup_path, NULL) < 0 ||
      jfield(c, v, "systemdCgroup", j_bool, &s->systemd_cgroup, NULL) < 0 ||
      jfield(c, v, "profile", j_str, &s->profile, NULL) < 0 ||
      jfield(c, v, "hasPidns", j_bool, &s->has_pidns, NULL) < 0 ||
      jfield(c, v, "started", j_bool, &s->started, NULL) < 0 ||
      jfield(c, v, "noNewKeyring", j_bool, &s->no_new_keyring, NULL) < 0 ||
      jfield(c, v, "exitStatus", j_int, &s->exit_status, &s->has_exit_status) < 0)
    return -1;
  return 0;
}

static int conv_state(struct jctx *c, const struct jnode *v, void *ret)
{
  struct oci_state **out = ret;
  struct oci_state *s;

  if (jexpect(c, v, JT_OBJECT) < 0)
    return -1;
  s = *out = xmalloc0(sizeof **out);
  if (jfield_req(c, v, "ociVersion", j_str, &s->oci_version) < 0 ||
      jfield_req(c, v, "id", j_str, &s->id) < 0 ||
      jfield_req(c, v, "status", conv_status, &s->status) < 0 ||
      jfield(c, v, "pid", conv_pid, &s->pid, NULL) < 0 ||
      jfield(c, v, "bundle", j_str, &s->bundle, NULL) < 0 ||
      jfield(c, v, "rootfs", j_str, &s->rootfs, NULL) < 0 ||
      jfield(c, v, "created", j_str, &s->created, NULL) < 0 ||
      jfield(c, v, "owner", j_str, &s->owner, NULL) < 0 ||
      jfield_kv(c, v, "annotations", &s->annotations, &s->n_annotations) < 0 ||
      jfield(c, v, "agentrt", conv_private, s, NULL) < 0)
    return -1;
  if (s->id[0] == '\0')
    return jfail_at(c, "id", "must not be empty");
  return 0;
}

int oci_state_parse(const char *json, size_t len, const char *file, struct oci_state **ret,
                    struct error *err)
{
  struct oci_state *s = NULL;

  if (oci_parse_doc(json, len, file, conv_state, &s, err) < 0) {
    oci_state_free(s);
    return -1;
  }
  *ret = s;
  return 0;
}

void oci_state_free(struct oci_state *s)
{
  if (s == NULL)
    return;
  free(s->oci_version);
  free(s->id);
  free(s->status);
  free(s->bundle);
  free(s->rootfs);
  free(s->created);
  free(s->owner);
  oci_kv_free(s->annotations, s->n_annotations);
  free(s->cgroup_path);
  free(s->profile);
  free(s);
}

static void gen_private(struct jgen *j, const struct oci_state *s)
{
  jg_key(j, "agentrt");
  jg_open(j);
  jg_ku64(j, "pidStartTime", s->pid_start_time);
  jg_kstr(j, "cgroupPath", s->cgroup_path);
  jg_kbool(j, "systemdCgroup", s->systemd_cgroup);
  jg_kstr(j, "profile", s->profile);
  jg_kbool(j, "hasPidns", s->has_pidns);
  jg_kbool(j, "started", s->started);
  if (s->no_new_keyring)
    jg_kbool(j, "noNewKeyring", true);
  if (s->has_exit_status)
    jg_ki64(j, "exitStatus", s->exit_status);
  jg_close(j);
}

int oci_state_to_json_ex(const struct oci_state *s, bool with_private, bool pretty, char **ret_json,
                         size_t *ret_len, struct error *err)
{
  struct jgen j;

  /* pretty: as runc's `state` prints it (Go's MarshalIndent, two spaces) */
  jgen_init_indent(&j, pretty ? "  " : NULL);
  jg_open(&j);
  jg_kstr(&j, "ociVersion", s->oci_version != NULL ? s->oci_version : "");
  jg_kstr(&j, "id", s->id != NULL ? s->id : "");
  jg_ki64(&j, "pid", s->pid);
  jg_kstr(&j, "status", s->status != NULL ? s->status : "");
  jg_kstr(&j, "bundle", s->bundle != NULL ? s->bundle : "");
  jg_kstr(&j, "rootfs", s->rootfs != NULL ? s->rootfs : "");
  jg_kstr(&j, "created", s->created != NULL ? s->created : "");
  /* runc's order: annotations (when any) before owner */
  if (s->n_annotations > 0)
    jg_kkv(&j, "annotations", s->annotations, s->n_annotations);
  jg_kstr(&j, "owner", s->owner != NULL ? s->owner : "");
  if (with_private)
    gen_private(&j, s);
  jg_close(&j);
  return jgen_finish(&j, "state", ret_json, ret_len, err);
}

int oci_state_to_json(const struct oci_state *s, bool with_private, char **ret_json,
                      size_t *ret_len, struct error *err)
{
  return oci_state_to_json_ex(s, with_private, false, ret_json, ret_len, err);
}
