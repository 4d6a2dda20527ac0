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
};

/* Message builder over a growing byte buffer. */
void nftb_init(struct nft_batch_buf *b, uint32_t seq_base);
struct nlmsghdr *nftb_msg(struct nft_batch_buf *b, uint16_t type, uint16_t flags,
                          const char *what_fmt, ...) __attribute__((format(printf, 4, 5)));
void nftb_done(struct nft_batch_buf *b, struct nlmsghdr *nlh);
void nftb_begin(struct nft_batch_buf *b);
void nftb_end(struct nft_batch_buf *b);

/* Sets and elements (nft_sets.c). */
void nftb_add_sets(struct nft_batch_buf *b);
void nftb_flush_set(struct nft_batch_buf *b, const char *name, uint32_t id);
int nftb_allow_elems(struct nft_batch_buf *b, const struct egress_policy *p, enum egress_kind kind,
                     struct error *err);

#endif
