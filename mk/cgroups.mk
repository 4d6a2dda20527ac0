# mk/cgroups.mk - test helpers of the cgroup module (included by the Makefile).
#
#   make cgroup-driver      build $(BUILDDIR)/tests/cgroup-driver
#   make check-cgroups      the driver-based selftest on this host (cgroup v1/hybrid or v2)
#   make check-cgroups-vm   the same in the cgroup v2 VM lane (needs qemu-system-x86_64)
.PHONY: cgroup-driver check-cgroups check-cgroups-vm

CGROUP_DRIVER := $(BUILDDIR)/tests/cgroup-driver

cgroup-driver: $(CGROUP_DRIVER)

$(CGROUP_DRIVER): tests/helpers/cgroup-driver.c $(BUILDDIR)/libagentrt.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(BUILDDIR)/libagentrt.a $(LDFLAGS) $(LIBS)

check-cgroups: $(CGROUP_DRIVER)
	CGROUP_DRIVER=$(CGROUP_DRIVER) tests/helpers/cgroups-selftest.sh

check-cgroups-vm: $(CGROUP_DRIVER)
	VM_BATS=tests/vm/cgroups-selftest.bats tests/vm/run-agentrt-v2.sh
