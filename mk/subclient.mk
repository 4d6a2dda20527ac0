# mk/subclient.mk - /run/agentrt/bin/agentrt, the sub-agent client
# (monitor/client/agentrt-client.c, docs/subagents.md).
#
# Static (glibc's libc.a) so it runs on any container root; its bytes are
# embedded into the runtime library as agentrt_subclient_blob[], which create
# writes once into the data directory and binds read-only into the container.
subclient_saved_goal := $(.DEFAULT_GOAL)

SUBCLIENT_CFLAGS = -std=gnu11 -Os -Wall -Wextra -Werror -D_GNU_SOURCE -I. -fno-asynchronous-unwind-tables
SUBCLIENT_LDFLAGS = -static -s -Wl,--gc-sections -Wl,-z,noexecstack

$(BUILDDIR)/subclient/agentrt-client: monitor/client/agentrt-client.c common/subproto.h mk/subclient.mk
	@mkdir -p $(dir $@)
	$(STUB_CC) $(SUBCLIENT_CFLAGS) -o $@ $< $(SUBCLIENT_LDFLAGS)

$(BUILDDIR)/subclient/subclient_blob.c: $(BUILDDIR)/subclient/agentrt-client
	{ echo '/* generated from monitor/client/agentrt-client.c by mk/subclient.mk - do not edit */'; \
	  echo '#include <stddef.h>'; \
	  echo 'const unsigned char agentrt_subclient_blob[] = {'; \
	  od -An -v -tx1 $< | sed -e 's/ *\([0-9a-f][0-9a-f]\)/0x\1,/g'; \
	  echo '};'; \
	  echo 'const size_t agentrt_subclient_blob_len = sizeof agentrt_subclient_blob;'; } > $@.tmp
	mv $@.tmp $@

$(BUILDDIR)/subclient_blob.o: $(BUILDDIR)/subclient/subclient_blob.c
	$(CC) $(CFLAGS) -c -o $@ $<

EXTRA_OBJS += $(BUILDDIR)/subclient_blob.o

.DEFAULT_GOAL := $(subclient_saved_goal)
