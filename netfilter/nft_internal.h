/* nft_internal.h - shared by the nftables batch builders (nft*.c). */
#ifndef AGENTRT_NETFILTER_NFT_INTERNAL_H
#define AGENTRT_NETFILTER_NFT_INTERNAL_H

#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netlink.h>

#include "netfilter/egress.h"

/* Set ids, unique within a batch (lookups in the same batch use them). */
enum {
  SET_ID_ALLOW4 = 1,
  SET_ID_ALLOW6,
  SET_ID_DNS4,
  SET_ID_DNS6,
  SET_ID_DNS4P,
  SET_ID_DNS6P,
  SET_ID_ARP_GW4 = 16,
  SET_ID_ARP_SEEN,
  SET_ID_ARP_PIN,
  SET_ID_ND_GW6,
  SET_ID_ND_SEEN6,
  SET_ID_ND_PIN6,
  SET_ID_ARP_WIN,
  SET_ID_ARP_BAD,
  SET_ID_ND_WIN6,
  SET_ID_ND_BAD6,
};

/* Message builder over a growing byte buffer. */
void nftb_init(struct nft_batch_buf *b, uint32_t seq_base);
/* A set of table agentrt in family (NFPROTO_INET, _ARP, _IPV6), its name and
 * batch id set; aborts when out of memory. */
struct nftnl_set *nftb_set_new(uint16_t family, const char *name, uint32_t id);
struct nlmsghdr *nftb_msg(struct nft_batch_buf *b, uint16_t type, uint16_t flags,
                          const char *what_fmt, ...) __attribute__((format(printf, 4, 5)));
/* the same for a table of another family (nfgen_family of the header) */
struct nlmsghdr *nftb_msg_family(struct nft_batch_buf *b, uint16_t family, uint16_t type,
                                 uint16_t flags, const char *what_fmt, ...)
    __attribute__((format(printf, 5, 6)));
void nftb_done(struct nft_batch_buf *b, struct nlmsghdr *nlh);
void nftb_begin(struct nft_batch_buf *b);
void nftb_end(struct nft_batch_buf *b);

/* Sets and elements (nft_sets.c). */
void nftb_add_sets(struct nft_batch_buf *b);
void nftb_flush_set(struct nft_batch_buf *b, const char *name, uint32_t id);
int nftb_allow_elems(struct nft_batch_buf *b, const struct egress_policy *p, enum egress_kind kind,
                     struct error *err);

/* Tables arp agentrt and ip6 agentrt (nft_arp.c): made (after deleting
 * any) when o has IPv4 or IPv6 gateways; deleted when there are. */
void nftb_arp_table(struct nft_batch_buf *b, const struct nft_build_opts *o, int log_group);
void nftb_arp_table_delete(struct nft_batch_buf *b);

#endif
