# mk/security.mk - the hardening proof: tests/security/*.bats and their helpers.
#
#   make security-probes   build/test-helpers/sprobe (static; copied into each test bundle)
#   make build-fp          build-fp/agentrt: a FAILPOINTS=1 build for tests/security/faults.bats
#   make check-security    every suite under tests/security (needs root)
# The release build never contains failpoints: common/failpoint.h expands FAILPOINT() to
# nothing unless -DAGENTRT_FAILPOINTS (make FAILPOINTS=1) is given.

.DEFAULT_GOAL := all

ifeq ($(FAILPOINTS),1)
CFLAGS += -DAGENTRT_FAILPOINTS
endif

SPROBE := build/test-helpers/sprobe

.PHONY: security-probes build-fp check-security

security-probes: $(SPROBE)

$(SPROBE): tests/security/probes/sprobe.c
	@mkdir -p $(dir $@)
	$(HELPER_CC) $(HELPER_CFLAGS) -static -o $@ $<

# A separate object tree, so the release build in build/ is never mixed with failpoints.
build-fp:
	@$(MAKE) --no-print-directory FAILPOINTS=1 BUILDDIR=build-fp build-fp/agentrt

check-security: agentrt test-rootfs security-probes build-fp
	bats tests/security

.PHONY: clean-security
clean: clean-security
clean-security:
	rm -rf build-fp
