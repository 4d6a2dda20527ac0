/* test_subreq.c - the sub-agent API's reading of a `run` request against
 * its parent's policy (monitor/subreq.c): what it accepts and refuses, and
 * that a request it reads leaves nothing allocated behind (the inputs
 * fuzz_subreq found: tests/fuzz/corpus/subreq). */
#include <malloc.h>
#include <string.h>

#include "common/util.h"
#include "monitor/subreq.h"
#include "tests/unit/tap.h"

static char *parent_allow[] = {"api.example.test", "192.0.2.0/24", NULL};
static struct profile_secret secrets[] = {{.name = "API_TOKEN"}, {.name = "GH_TOKEN"}};
static struct profile_result prof;
static struct oci_resources res;
static struct oci_linux lin;
static struct oci_config cfg;
static const struct subagent_parent parent = {.id = "h-parent", .config = &cfg, .profile = &prof};

static char *no_check(const struct subagent_parent *p, const char *ws, const char *abs)
{
  (void)p;
  (void)ws;
  (void)abs;
  return NULL;
}

/* Parse the NULL-ended words; 0 accepted.  *ret_ws: the workspace (a copy). */
static int parse(char **words, char **ret_ws, char **ret_why)
{
  struct subreq_run r = {0};
  char **allow = NULL;
  int rc;

  *ret_why = NULL;
  rc = subreq_parse_run(&parent, words, no_check, &r, &allow, ret_why);
  if (ret_ws)
    *ret_ws = r.workspace ? xstrdup(r.workspace) : NULL;
  free(r.workspace);
  strv_free(r.secrets);
  strv_free(allow);
  return rc;
}

static size_t in_use(void)
{
  return mallinfo2().uordblks;
}

static void test_limits(void)
{
  static const char *const refused[][8] = {
      {"run", "--memory", "2g", "--", "x"},
      {"run", "--pids", "101", "--", "x"},
      {"run", "--cpus", "1.6", "--", "x"},
      {"run", "--allow", "other.test", "--", "x"},
      {"run", "--allow", "192.0.0.0/16", "--", "x"},
      {"run", "--workspace", "../../etc", "--", "x"},
      {"run", "--name", "-a", "--", "x"},
      {"run", "--secret", "NOPE", "--", "x"},
      {"run", "--cap-add", "ALL", "--", "x"},
      {"run", "--name", "a"},
  };
  char *why = NULL, *ws = NULL;

  for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
    int rc = parse((char **)refused[i], NULL, &why);
    tap_ok(rc < 0 && why != NULL, "refused: %s %s (%s)", refused[i][1],
           refused[i][2] ? refused[i][2] : "", why ? why : "no reason");
    free(why);
  }
  {
    char *w[] = {"run",     "--memory",       "1g",          "--pids",       "100", "--cpus", "1.5",
                 "--allow", "192.0.2.128/25", "--workspace", "sub/./x/../y", "--",  "x",      NULL};
    int rc = parse(w, &ws, &why);
    tap_ok(rc == 0 && ws && strcmp(ws, "/work/space/sub/y") == 0,
           "accepted at the parent's limits, the workspace normalized: %s (%s)", ws ? ws : "",
           why ? why : "");
    free(ws);
    free(why);
  }
}

/* subreq-repeat-leak: each repeated --workspace (and --secret) was allocated
 * and the one before it lost: an agent's request of 256 words left 127
 * copies of a path of up to 64 KiB each in the handler. */
static void test_repeat_leak(void)
{
  char *w[] = {"run",      "--workspace", "a",        "--workspace", "b",  "--workspace", "b",
               "--secret", "GH_TOKEN",    "--secret", "GH_TOKEN",    "--", "x",           NULL};
  char *why = NULL, *ws = NULL;
  size_t before;
  int rc;

  parse(w, &ws, &why); /* the first run's one-time allocations (stdio, locale) */
  free(ws);
  free(why);
  before = in_use();
  rc = parse(w, &ws, &why);
  tap_ok(rc == 0 && ws && strcmp(ws, "/work/space/b") == 0,
         "subreq-repeat-leak: the last --workspace is the child's: %s", ws ? ws : why);
  free(ws);
  free(why);
  tap_ok(in_use() == before,
         "subreq-repeat-leak: a request with --workspace three times leaves nothing allocated (%zu "
         "bytes "
         "before, %zu after)",
         before, in_use());
}

int main(void)
{
  prof.workspace.path = "/work/space";
  prof.egress.def = PROFILE_EGRESS_DENY;
  prof.egress.allow = parent_allow;
  prof.secrets = secrets;
  prof.n_secrets = 2;
  res.has_memory_limit = res.has_pids_limit = res.has_cpu_quota = res.has_cpu_period = true;
  res.memory_limit = 1 << 30;
  res.pids_limit = 100;
  res.cpu_quota = 150000;
  res.cpu_period = 100000;
  lin.resources = &res;
  cfg.linux = &lin;
  test_limits();
  test_repeat_leak();
  return tap_done();
}
