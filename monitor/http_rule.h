/* http_rule.h - the TLS proxy's decisions on a parsed request head (pure,
 * fuzzed: tests/fuzz/fuzz_httprule.c): whether a profile's egress.http
 * rule allows it, and the name and port a plain HTTP connection's first
 * head asks for.  monitor/tls_proxy.c acts on them. */
#ifndef AGENTRT_MONITOR_HTTP_RULE_H
#define AGENTRT_MONITOR_HTTP_RULE_H

#include <stdbool.h>
#include <stddef.h>

#include "monitor/http1.h"
#include "profile/profile.h"

/* path[0..plen) (no query) is read by a server as it is sent: no dot
 * segments, no encoded or doubled separators (see http_rule.c). */
bool http_rule_path_normal(const char *path, size_t plen);
/* The request m passes the rule r: its path in normal form and listed,
 * its method listed, and so are a method override header's method and an
 * X-Original-URL's or X-Rewrite-URL's path.  false: *why says which. */
bool http_rule_check(const struct profile_http_rule *r, const struct http_msg *m, const char **why);
/* The Host of the request head at buf[0..len) (the first one, what may
 * follow it is not looked at): 1 and name (lower case, one final dot taken
 * off, not empty, at most 253 bytes) and *ret_port (its port, -1 none); 0 when the
 * head is not whole yet; -1 malformed or without a Host. */
int http_head_host(const char *buf, size_t len, char name[256], long *ret_port);

#endif
