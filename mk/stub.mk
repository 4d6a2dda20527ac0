# mk/stub.mk - the sealed exec trampoline (os/stub/stub.c, CVE-2019-5736).
#
# The stub is a static no-libc program; its bytes are embedded into the
# runtime library as the array agentrt_stub_blob[] (os/trampoline.c
# copies them into a sealed memfd at exec time).  Generated with od(1) so
# that no xxd is needed.
# mk files are read before the Makefile's `all`: keep it the default goal.
stub_saved_goal := $(.DEFAULT_GOAL)

STUB_CC ?= $(CC)
STUB_CFLAGS = -std=gnu11 -Os -ffreestanding -fno-builtin -fno-stack-protector -fno-pie \
	-fno-asynchronous-unwind-tables -fno-unwind-tables -Wall -Wextra -Werror
ifneq ($(filter x86_64%,$(shell $(STUB_CC) -dumpmachine)),)
STUB_CFLAGS += -fcf-protection=none
endif
STUB_LDFLAGS = -static -nostdlib -no-pie -s -Wl,--build-id=none -Wl,-z,noexecstack \
	-Wl,-z,norelro -Wl,-z,noseparate-code -Wl,--gc-sections

$(BUILDDIR)/stub/agentrt-stub: os/stub/stub.c mk/stub.mk
	@mkdir -p $(dir $@)
	$(STUB_CC) $(STUB_CFLAGS) -o $@ $< $(STUB_LDFLAGS)

$(BUILDDIR)/stub/stub_blob.c: $(BUILDDIR)/stub/agentrt-stub
	{ echo '/* generated from os/stub/stub.c by mk/stub.mk - do not edit */'; \
	  echo '#include <stddef.h>'; \
	  echo 'const unsigned char agentrt_stub_blob[] = {'; \
	  od -An -v -tx1 $< | sed -e 's/ *\([0-9a-f][0-9a-f]\)/0x\1,/g'; \
	  echo '};'; \
	  echo 'const size_t agentrt_stub_blob_len = sizeof agentrt_stub_blob;'; } > $@.tmp
	mv $@.tmp $@

$(BUILDDIR)/stub_blob.o: $(BUILDDIR)/stub/stub_blob.c
	$(CC) $(CFLAGS) -c -o $@ $<

EXTRA_OBJS += $(BUILDDIR)/stub_blob.o

.DEFAULT_GOAL := $(stub_saved_goal)
