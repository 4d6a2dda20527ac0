/* fuzz_gateways.c - libFuzzer target for the gateways read from a network
 * namespace's rtnetlink dumps (netfilter/gateways.c): routes, nexthop
 * objects and neighbour entries, as one recv gives them.
 *
 * The first four bytes are the dump's sequence number, the rest the
 * messages.  Invariants: no crash or read past the buffer on any input; at
 * most NFT_MAX_GW4 gateways of each version, none twice, and over4/over6
 * set only when that many are held.
 */
#include <stdlib.h>
#include <string.h>

#include "netfilter/egress.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct nft_build_opts o;
  uint32_t seq;
  uint8_t *copy;

  if (size < 4)
    return 0;
  memcpy(&seq, data, 4);
  /* aligned, as a recv buffer is */
  copy = malloc(size - 4 + 1);
  if (copy == NULL)
    return 0;
  memcpy(copy, data + 4, size - 4);
  memset(&o, 0, sizeof o);
  (void)egress_gw_nl_parse(copy, size - 4, seq, &o);
  free(copy);
  if (o.n_gw4 > NFT_MAX_GW4 || o.n_gw6 > NFT_MAX_GW4 || (o.over4 && o.n_gw4 != NFT_MAX_GW4) ||
      (o.over6 && o.n_gw6 != NFT_MAX_GW4))
    abort();
  for (size_t i = 0; i < o.n_gw4; i++)
    for (size_t k = i + 1; k < o.n_gw4; k++)
      if (memcmp(o.gw4[i].ip, o.gw4[k].ip, 4) == 0)
        abort();
  for (size_t i = 0; i < o.n_gw6; i++)
    for (size_t k = i + 1; k < o.n_gw6; k++)
      if (memcmp(o.gw6[i], o.gw6[k], 16) == 0)
        abort();
  return 0;
}
