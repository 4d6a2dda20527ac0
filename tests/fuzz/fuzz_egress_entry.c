/* fuzz_egress_entry.c - libFuzzer target for the egress grammar: allow
 * entries (egress_entry_parse), ingress ports (egress_port_parse) and
 * upstream resolvers (egress_upstream_parse), the parsers `profile check`,
 * `create`, annotations and `agentrt egress` share.
 *
 * Invariants: no crash on any input; an accepted entry or port formats to
 * text that parses back to the same value; a domain entry matches its own
 * name; an accepted upstream has a family and a port; the private-address
 * test takes any 16 bytes.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common/egress_grammar.h"
#include "netfilter/egress.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void port_roundtrip(const char *in)
{
  struct egress_port e, back;
  struct error err;
  char text[32];

  if (egress_port_parse(in, &e, &err) < 0)
    return;
  if (e.port_min == 0 || e.port_max < e.port_min)
    abort();
  egress_port_format(&e, text);
  if (egress_port_parse(text, &back, &err) < 0 || back.proto != e.proto ||
      back.port_min != e.port_min || back.port_max != e.port_max)
    abort();
}

static void upstream(const char *in)
{
  struct egress_upstream u;
  struct error err;

  if (egress_upstream_parse(in, &u, &err) == 0 &&
      ((u.family != AF_INET && u.family != AF_INET6) || u.port == 0))
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char in[512], text[EGRESS_ENTRY_STR_MAX];
  struct egress_entry e, back;
  struct egress_policy p = {0};
  const struct egress_entry *m;
  struct error err;
  uint8_t addr[16] = {0};

  if (size >= sizeof in)
    return 0;
  memcpy(in, data, size);
  in[size] = '\0';
  memcpy(addr, data, size < 16 ? size : 16);
  (void)egress_addr_is_private(addr, 16);
  (void)egress_addr_is_private(addr, 4);
  port_roundtrip(in);
  upstream(in);
  if (egress_entry_parse(in, &e, &err) < 0)
    return 0;
  egress_entry_format(&e, text);
  if (egress_entry_parse(text, &back, &err) < 0 || !egress_entry_equal(&e, &back))
    abort();
  if (e.kind == EGRESS_DOMAIN && !e.wildcard) {
    p.entries = &e;
    p.n_entries = 1;
    if (egress_policy_match_name(&p, e.domain, &m, 1) != 1)
      abort();
  }
  return 0;
}
