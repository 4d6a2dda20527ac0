# mk/rootfs.mk - container filesystem setup: test driver and self-test.
#
#   make rootfs-driver     build/tests/rootfs-driver (not part of agentrt)
#   make check-rootfs      run tests/helpers/rootfs-selftest.sh as root

# gnu11 predefines `linux` as 1, which breaks `config->linux` (oci/config.h).
CFLAGS += -Ulinux

ROOTFS_DRIVER := $(BUILDDIR)/tests/rootfs-driver

.PHONY: rootfs-driver check-rootfs
rootfs-driver: $(ROOTFS_DRIVER)

$(ROOTFS_DRIVER): tests/helpers/rootfs-driver.c $(BUILDDIR)/libagentrt.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(BUILDDIR)/libagentrt.a $(LDFLAGS) $(LIBS)

check-rootfs: $(ROOTFS_DRIVER)
	unshare -m --propagation private tests/helpers/rootfs-selftest.sh $(ROOTFS_DRIVER)
