# mk/testhelpers.mk - test helpers and the cached busybox test rootfs.
#
#   make test-helpers   static probes (try-syscall, fdleak, xchg, ptrace-race, usock, srh-send, mmap-write, udp-ports, forkstorm, tmpfile-link, callflood, execfail, errq-recv, dns-flood, mark-connect, packet-send, fileops, execvia) and the host-side recvtty, seccomp-agent, pidat
#   make test-rootfs    build/rootfs: busybox-static + probes (rebuilt only when inputs change)
# The helpers are built without the sanitizer flags so SANITIZE=... builds share them.

# This file is included before the main rules; keep `all' the default goal.
.DEFAULT_GOAL := all

HELPER_DIR := build/test-helpers
HELPER_CC ?= gcc
HELPER_CFLAGS := -std=gnu11 -O2 -Wall -Wextra -Werror -Wno-unused-parameter
PROBES := try-syscall fdleak xchg ptrace-race usock srh-send mmap-write udp-ports forkstorm tmpfile-link callflood execfail errq-recv dns-flood mark-connect packet-send fileops execvia
PROBE_BINS := $(PROBES:%=$(HELPER_DIR)/%)
HOST_HELPERS := $(HELPER_DIR)/recvtty $(HELPER_DIR)/seccomp-agent $(HELPER_DIR)/pidat
TEST_ROOTFS ?= build/rootfs

.PHONY: test-helpers test-rootfs

test-helpers: $(PROBE_BINS) $(HOST_HELPERS)

$(HELPER_DIR)/%: tests/helpers/probes/%.c
	@mkdir -p $(dir $@)
	$(HELPER_CC) $(HELPER_CFLAGS) -static -o $@ $<

$(HELPER_DIR)/recvtty: tests/helpers/recvtty.c
	@mkdir -p $(dir $@)
	$(HELPER_CC) $(HELPER_CFLAGS) -o $@ $<

$(HELPER_DIR)/pidat: tests/helpers/pidat.c
	@mkdir -p $(dir $@)
	$(HELPER_CC) $(HELPER_CFLAGS) -o $@ $<

$(HELPER_DIR)/seccomp-agent: tests/helpers/seccomp-agent.c
	@mkdir -p $(dir $@)
	$(HELPER_CC) $(HELPER_CFLAGS) -o $@ $<

# build.sh keeps a hash of its inputs and returns at once when nothing changed.
test-rootfs: test-helpers
	@tests/rootfs/build.sh $(TEST_ROOTFS)
