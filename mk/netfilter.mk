# netfilter.mk - egress allowlist helpers and the network self-test.
#
#   make egress-driver      build/tests/egress-driver (used by tests/net/)
#   make check-egress       run tests/net/egress-selftest.sh (root; makes
#                           its own netns with TEST-NET addresses only)
#   make update-golden-nft  rewrite tests/data/nft/*.bin from the builder
.PHONY: egress-driver check-egress update-golden-nft

egress-driver: $(BUILDDIR)/tests/egress-driver

$(BUILDDIR)/tests/egress-driver: tests/helpers/egress-driver.c $(BUILDDIR)/libagentrt.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(BUILDDIR)/libagentrt.a $(LDFLAGS) $(LIBS)

check-egress: $(BUILDDIR)/tests/egress-driver
	tests/net/egress-selftest.sh $(BUILDDIR)/tests/egress-driver

update-golden-nft: $(BUILDDIR)/tests/test_egress
	UPDATE_GOLDEN=1 $(BUILDDIR)/tests/test_egress
