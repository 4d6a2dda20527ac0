/* tls_plugin_entry.c - the one symbol agentrt-tls.so exports (tls_plugin.h).
 * Built into the plugin only, with tls_ca.c and tls_proxy.c (mk/tls_plugin.mk). */
#include <stdlib.h>

#include "monitor/tls_ca.h"
#include "monitor/tls_plugin.h"
#include "monitor/tls_proxy.h"

const struct tls_plugin_v1 *agentrt_tls_plugin_v1(void);

static void str_free(char *s)
{
  free(s); /* this free is the plugin's libc's */
}

const struct tls_plugin_v1 *agentrt_tls_plugin_v1(void)
{
  static const struct tls_plugin_v1 t = {
      .version = AGENTRT_VERSION,
      .commit = AGENTRT_COMMIT,
      .ca_new = tls_ca_new,
      .ca_cert_pem = tls_ca_cert_pem,
      .ca_free = tls_ca_free,
      .proxy_start = tls_proxy_start,
      .str_free = str_free,
      .fork_hook = &tls_proxy_fork,
  };
  return &t;
}
