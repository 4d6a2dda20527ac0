/* subreq.h - the sub-agent API's reading of a `run` request (the words a
 * container sends, common/subproto.h) against its parent's policy
 * (docs/subagents.md, "What a child may ask for").  Pure but for the
 * workspace check it is given; fuzzed: tests/fuzz/fuzz_subreq.c. */
#ifndef AGENTRT_MONITOR_SUBREQ_H
#define AGENTRT_MONITOR_SUBREQ_H

#include <stdbool.h>
#include <stdint.h>

#include "monitor/subagents.h"

#define SUBREQ_NAME_MAX 64
/* A child's container id ("PARENT.NAME") is a workspace's name too. */
#define SUBREQ_ID_MAX 128

struct subreq_run {
  const char *name;
  char *workspace; /* in the parent's view, absolute (allocated) */
  char **allow;
  char **secrets; /* among the parent's; the child gets only these */
  bool has_memory, has_pids, has_cpus;
  uint64_t memory, pids, cpus_milli;
  bool detach;
  char **cmd;
  uint32_t uid, gid; /* the caller's: the child runs as them */
};

/* A child's name: letters, digits, '-' and '_' (not first), at most
 * SUBREQ_NAME_MAX. */
bool subreq_valid_name(const char *s);

/* Why the directory abs (normalized, ws or below it) cannot be a child's
 * workspace, or NULL (allocated). */
typedef char *subreq_ws_check(const struct subagent_parent *p, const char *ws, const char *abs);

/* words: "run", its options, then the command.  0: r filled (r->name,
 * r->cmd point into words; r->workspace, r->secrets and *allow are
 * allocated, *allow also as r->allow); -1: refused, *ret_why says why
 * (allocated).  What is accepted is within the parent's policy: a name
 * as subreq_valid_name, the workspace the parent's or below it (ws_check
 * says it may be), each --allow covered by the parent's allowlist, limits
 * at most the parent's, secrets among the parent's. */
int subreq_parse_run(const struct subagent_parent *p, char **words, subreq_ws_check *ws_check,
                     struct subreq_run *r, char ***allow, char **ret_why);

#endif
