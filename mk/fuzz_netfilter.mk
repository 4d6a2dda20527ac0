# fuzz_netfilter.mk - netfilter's libFuzzer targets.
#
# mk/fuzz.mk (shared) builds tests/fuzz/fuzz_$(t).c for every t in
# FUZZ_TARGETS and runs them in the fuzz-smoke / fuzz loops; seeds are in
# tests/fuzz/corpus/$(t)/.  `make fuzz-netfilter` builds and runs just these
# two on their own (clang, ASan+UBSan), copying the seeds to a temp corpus.
# (dns and egress_entry are listed in mk/fuzz.mk: rule prerequisites expand when read)

FUZZ_NETFILTER_SRCS = netfilter/dns.c netfilter/policy.c netfilter/upstream.c common/egress_grammar.c common/error.c common/util.c
FUZZ_SECONDS ?= 30
.PHONY: fuzz-netfilter

$(BUILDDIR)/fuzz-netfilter/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_NETFILTER_SRCS)
	@mkdir -p $(dir $@)
	clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -I. -o $@ $< $(FUZZ_NETFILTER_SRCS)

fuzz-netfilter: $(BUILDDIR)/fuzz-netfilter/fuzz_dns $(BUILDDIR)/fuzz-netfilter/fuzz_egress_entry
	@set -e; for t in dns egress_entry; do \
	  d=$$(mktemp -d); cp tests/fuzz/corpus/$$t/* $$d/; \
	  $(BUILDDIR)/fuzz-netfilter/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) $$d 2>&1 | tail -1; \
	  rm -rf $$d; done
