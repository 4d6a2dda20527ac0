/* fuzz_netlog.c - libFuzzer target for what the monitor reads from NFLOG
 * (monitor/netlog.c): the logged packet's headers under each of the egress
 * ruleset's prefixes, a neighbour's ARP and advertisements included, whose
 * bytes a neighbour on the link chooses; and the records they make.
 *
 * The first byte picks the prefix, the rest is the packet.  Invariants: no
 * crash on any input; an accepted packet's strings are terminated; a
 * record is made for it (the first of its key at once).
 */
#include <stdlib.h>
#include <string.h>

#include "monitor/netlog.h"
#include "netfilter/egress.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t emitted;

static void on_emit(void *ud, const char *kind, const char *fields)
{
  (void)ud;
  if (kind == NULL || fields == NULL || strlen(fields) == 0)
    abort();
  emitted++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static const char *const prefixes[] = {
      NULL,
      EGRESS_LOG_DENY_PREFIX,
      EGRESS_LOG_FLOW_PREFIX,
      EGRESS_LOG_IN_DENY_PREFIX,
      EGRESS_LOG_IN_FLOW_PREFIX,
      EGRESS_LOG_SPOOF_PREFIX,
      EGRESS_LOG_ARP_PIN_PREFIX,
      EGRESS_LOG_NA_PIN_PREFIX,
      EGRESS_LOG_ARP_OVER_PREFIX,
      EGRESS_LOG_NA_OVER_PREFIX,
      EGRESS_LOG_ARP_FIRST_PREFIX,
      EGRESS_LOG_NA_FIRST_PREFIX,
      EGRESS_LOG_ARP_TWICE_PREFIX,
      EGRESS_LOG_NA_TWICE_PREFIX,
  };
  static struct netlog t;
  struct netlog_event ev;

  if (size < 1)
    return 0;
  if (!netlog_parse(data + 1, size - 1, prefixes[data[0] % (sizeof prefixes / sizeof *prefixes)],
                    &ev))
    return 0;
  if (memchr(ev.src, 0, sizeof ev.src) == NULL || memchr(ev.dst, 0, sizeof ev.dst) == NULL ||
      memchr(ev.addr, 0, sizeof ev.addr) == NULL ||
      memchr(ev.lladdr, 0, sizeof ev.lladdr) == NULL || ev.proto == NULL)
    abort();
  emitted = 0;
  netlog_init(&t, 1000, on_emit, NULL);
  netlog_note(&t, &ev, 0);
  netlog_flush(&t, 0, true);
  if (emitted != 1)
    abort();
  return 0;
}
