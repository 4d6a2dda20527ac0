/* test_oci_state.c - the state document: public and private forms, round
 * trips, validation errors, truncations. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/util.h"
#include "oci/state.h"
#include "tests/unit/tap.h"

static struct oci_state *sample(void)
{
  struct oci_state *s = xmalloc0(sizeof *s);

  s->oci_version = xstrdup("1.2.0");
  s->id = xstrdup("web1");
  s->status = xstrdup("running");
  s->pid = 4242;
  s->bundle = xstrdup("/srv/bundles/web1");
  s->rootfs = xstrdup("/srv/bundles/web1/rootfs");
  s->created = xstrdup("2026-11-29T21:54:49.123456789Z");
  s->owner = xstrdup("");
  s->pid_start_time = 18446744073709551615u;
  s->cgroup_path = xstrdup("/agentrt/web1");
  s->systemd_cgroup = true;
  s->profile = xstrdup("agent");
  s->has_pidns = true;
  s->started = true;
  s->has_exit_status = true;
  s->exit_status = 137;
  return s;
}

static void test_public(void)
{
  struct error err = {0};
  struct oci_state *s = sample();
  char *json = NULL;
  size_t len = 0;

  tap_ok(oci_state_to_json(s, false, &json, &len, &err) == 0 &&
             strcmp(json, "{\"ociVersion\":\"1.2.0\",\"id\":\"web1\",\"pid\":4242,\"status\":"
                          "\"running\",\"bundle\":\"/srv/bundles/web1\",\"rootfs\":"
                          "\"/srv/bundles/web1/rootfs\",\"created\":"
                          "\"2026-11-29T21:54:49.123456789Z\",\"owner\":\"\"}") == 0 &&
             len == strlen(json),
         "public state, no annotations key when there are none: %s", json ? json : err.msg);
  free(json);
  json = NULL;
  s->annotations = xmalloc0(sizeof *s->annotations);
  s->annotations[0] = (struct oci_kv){xstrdup("a"), xstrdup("b")};
  s->n_annotations = 1;
  tap_ok(oci_state_to_json(s, false, &json, NULL, &err) == 0 &&
             strstr(json, ",\"annotations\":{\"a\":\"b\"},\"owner\":\"\"}") != NULL &&
             strstr(json, "agentrt") == NULL,
         "public state with annotations before owner, as runc: %s", json ? json : err.msg);
  free(json);
  json = NULL;
  tap_ok(oci_state_to_json_ex(s, false, true, &json, NULL, &err) == 0 &&
             strncmp(json, "{\n  \"ociVersion\": \"1.2.0\",\n  \"id\": \"web1\",\n", 43) == 0 &&
             strstr(json, "\n  \"annotations\": {\n    \"a\": \"b\"\n  },\n  \"owner\": \"\"\n}") !=
                 NULL,
         "indented form: two spaces, as runc's state: %s", json ? json : err.msg);
  free(json);
  oci_state_free(s);
}

static void test_private_roundtrip(void)
{
  struct error err = {0};
  struct oci_state *s = sample(), *t = NULL;
  char *json = NULL, *json2 = NULL;
  size_t len = 0;

  tap_ok(oci_state_to_json(s, true, &json, &len, &err) == 0 &&
             strstr(json, "\"agentrt\":{\"pidStartTime\":18446744073709551615,\"cgroupPath\":"
                          "\"/agentrt/web1\",\"systemdCgroup\":true,\"profile\":\"agent\","
                          "\"hasPidns\":true,\"started\":true,\"exitStatus\":137}") != NULL,
         "private fields under \"agentrt\": %s", json ? json : err.msg);
  tap_ok(oci_state_parse(json, len, "state.json", &t, &err) == 0, "private state parses (%s)",
         err.msg);
  if (t != NULL) {
    tap_ok(streq(t->id, "web1") && t->pid == 4242 && streq(t->status, "running") &&
               streq(t->bundle, s->bundle) && streq(t->rootfs, s->rootfs) &&
               streq(t->created, s->created) && streq(t->owner, "") &&
               t->pid_start_time == s->pid_start_time && streq(t->cgroup_path, "/agentrt/web1") &&
               t->systemd_cgroup && streq(t->profile, "agent") && t->has_pidns && t->started &&
               t->has_exit_status && t->exit_status == 137,
           "every field survives the round trip");
    tap_ok(oci_state_to_json(t, true, &json2, NULL, &err) == 0 && strcmp(json, json2) == 0,
           "second serialisation identical");
  }
  oci_state_free(t);
  t = NULL;
  free(json);
  json = NULL;
  s->has_exit_status = false;
  tap_ok(oci_state_to_json(s, false, &json, &len, &err) == 0 &&
             oci_state_parse(json, len, "state.json", &t, &err) == 0 && t->pid_start_time == 0 &&
             t->cgroup_path == NULL && !t->started && !t->has_exit_status,
         "public form parses; private fields default");
  oci_state_free(t);
  oci_state_free(s);
  free(json);
  free(json2);
}

static const struct {
  const char *json;
  const char *msg;
} bad[] = {
    {"{\"id\":\"a\",\"status\":\"running\"}", "state.json: ociVersion: is required"},
    {"{\"ociVersion\":\"1\",\"status\":\"running\"}", "state.json: id: is required"},
    {"{\"ociVersion\":\"1\",\"id\":\"\",\"status\":\"running\"}",
     "state.json: id: must not be empty"},
    {"{\"ociVersion\":\"1\",\"id\":\"a\"}", "state.json: status: is required"},
    {"{\"ociVersion\":\"1\",\"id\":\"a\",\"status\":\"zombie\"}",
     "state.json: status: unknown status `zombie`"},
    {"{\"ociVersion\":\"1\",\"id\":\"a\",\"status\":\"created\",\"pid\":-1}",
     "state.json: pid: must not be negative"},
    {"{\"ociVersion\":\"1\",\"id\":\"a\",\"status\":\"created\",\"pid\":\"1\"}",
     "state.json: pid: expected integer"},
    {"{\"ociVersion\":\"1\",\"id\":\"a\",\"status\":\"created\",\"pid\":2147483648}",
     "state.json: pid: out of range (-2147483648 to 2147483647)"},
    {"{\"ociVersion\":\"1\",\"id\":\"a\",\"status\":\"created\",\"agentrt\":{\"pidStartTime\":-5}}",
     "state.json: agentrt.pidStartTime: must not be negative"},
    {"{\"ociVersion\":\"1\",\"id\":\"a\",\"status\":\"created\",\"agentrt\":{\"started\":1}}",
     "state.json: agentrt.started: expected boolean"},
    {"{\"ociVersion\":\"1\",\"id\":\"a\",\"status\":\"created\",\"agentrt\":[]}",
     "state.json: agentrt: expected object"},
    {"{\"ociVersion\":\"1\",\"id\":\"a\",\"status\":\"created\",\"annotations\":{\"x\":null}}",
     "state.json: annotations[\"x\"]: expected string"},
    {"{\"ociVersion\":\"1\",\"id\":\"a\",\"status\":\"created\",\n\"bundle\":7}",
     "state.json: bundle: expected string"},
    {"\n\n{\"ociVersion\":", "state.json: line 3: parse error: premature EOF"},
    {"null", "state.json: expected object"},
};

static void test_errors(void)
{
  for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
    struct error err = {0};
    struct oci_state *s = NULL;
    int r = oci_state_parse(bad[i].json, strlen(bad[i].json), "state.json", &s, &err);
    tap_ok(r < 0 && s == NULL && strcmp(err.msg, bad[i].msg) == 0, "state error %zu: %s%s%s", i,
           bad[i].msg, strcmp(err.msg, bad[i].msg) ? " -- got: " : "",
           strcmp(err.msg, bad[i].msg) ? err.msg : "");
    oci_state_free(s);
  }
}

static void test_truncated(void)
{
  struct error err = {0};
  struct oci_state *s = sample(), *t = NULL;
  char *json = NULL;
  size_t len = 0, accepted = 0;

  oci_state_to_json(s, true, &json, &len, &err);
  for (size_t n = 0; n < len; n++) {
    char *copy = xstrndup(json, n);
    t = NULL;
    if (oci_state_parse(copy, n, "state.json", &t, &err) == 0) {
      accepted++;
      oci_state_free(t);
    }
    free(copy);
  }
  tap_ok(accepted == 0, "every truncation of the state document is rejected (%zu accepted)",
         accepted);
  free(json);
  oci_state_free(s);
}

/* list-killed-create: the created time of a state directory that has no state.json */
static void test_rfc3339_at(void)
{
  char buf[RFC3339_NANO_SIZE];
  struct timespec ts = {.tv_sec = 0, .tv_nsec = 0};

  rfc3339_at(&ts, buf);
  tap_ok(strcmp(buf, "1970-01-01T00:00:00.000000000Z") == 0, "rfc3339_at: the epoch: %s", buf);
  ts = (struct timespec){.tv_sec = 951782400 + 86399, .tv_nsec = 5}; /* 2000-02-29 23:59:59 */
  rfc3339_at(&ts, buf);
  tap_ok(strcmp(buf, "2000-02-29T23:59:59.000000005Z") == 0, "rfc3339_at: a leap day: %s", buf);
  ts = (struct timespec){.tv_sec = -1, .tv_nsec = 0};
  rfc3339_at(&ts, buf);
  tap_ok(strcmp(buf, "1969-12-31T23:59:59.000000000Z") == 0, "rfc3339_at: before the epoch: %s",
         buf);
}

int main(void)
{
  test_rfc3339_at();
  test_public();
  test_private_roundtrip();
  test_errors();
  test_truncated();
  return tap_done();
}
