# tls_plugin.mk - agentrt-tls.so: the egress TLS proxy and its CA, the only
# OpenSSL-using code (monitor/tls_plugin.h).  The agentrt binary does not link
# OpenSSL: it dlopen()s this plugin for containers with secrets only, so no
# other process maps or relocates libssl/libcrypto (bench/README.md, "Found
# at the last merge").  Linked dynamically against Debian's libssl3/libcrypto3;
# the rest of what the proxy calls comes from libagentrt.a, hidden behind the
# version script (one exported symbol).
TLS_PLUGIN_SRCS := monitor/tls_ca.c monitor/tls_proxy.c monitor/tls_plugin_entry.c
TLS_PLUGIN_OBJS := $(TLS_PLUGIN_SRCS:%.c=$(BUILDDIR)/%.o)
LIB_OBJS := $(filter-out $(TLS_PLUGIN_OBJS),$(LIB_OBJS))
TLS_PLUGIN_CFLAGS := $(shell pkg-config --cflags openssl 2>/dev/null)
TLS_PLUGIN_LIBS := $(shell pkg-config --libs openssl 2>/dev/null || echo -lssl -lcrypto)
LIBDIR = $(PREFIX)/lib/agentrt
CFLAGS += -DAGENTRT_LIBDIR='"$(LIBDIR)"'

# The plugin takes what it calls from libagentrt.a's -fPIE objects; those link
# into a shared object while they reference no outside data directly, which
# the sanitizers' instrumentation does (__asan_option_*): their build is -fPIC.
ifneq ($(SANITIZE),)
CFLAGS += -fPIC
endif

$(TLS_PLUGIN_OBJS): CFLAGS += $(TLS_PLUGIN_CFLAGS) -fPIC

all: $(BUILDDIR)/agentrt-tls.so
ifeq ($(SANITIZE),)
all: agentrt-tls.so
agentrt-tls.so: $(BUILDDIR)/agentrt-tls.so
	install -m 0755 $< $@
endif

$(BUILDDIR)/agentrt-tls.so: $(TLS_PLUGIN_OBJS) $(BUILDDIR)/libagentrt.a mk/tls_plugin.map
	$(CC) $(CFLAGS) -shared -o $@ $(TLS_PLUGIN_OBJS) $(BUILDDIR)/libagentrt.a \
	  -Wl,--version-script=mk/tls_plugin.map -Wl,-z,relro,-z,now -Wl,-z,noexecstack \
	  -Wl,--no-undefined -Wl,--as-needed $(if $(SANITIZE),-fsanitize=$(SANITIZE)) \
	  $(TLS_PLUGIN_LIBS) $(PKG_LIBS)
	chmod 0755 $@

-include $(TLS_PLUGIN_OBJS:.o=.d)

# The loader and the plugin compare AGENTRT_COMMIT: both are rebuilt when it
# changes, so that a rebuild after a commit never pairs two builds.
$(shell mkdir -p $(BUILDDIR); echo '$(COMMIT)' | cmp -s - $(BUILDDIR)/tls-commit.stamp || echo '$(COMMIT)' >$(BUILDDIR)/tls-commit.stamp)
# (main.o and spec_default.o print it: `agentrt --version`, `agentrt spec`'s annotation)
$(BUILDDIR)/monitor/tls_plugin.o $(BUILDDIR)/monitor/tls_plugin_entry.o: $(BUILDDIR)/tls-commit.stamp
$(BUILDDIR)/cli/main.o $(BUILDDIR)/oci/spec_default.o: $(BUILDDIR)/tls-commit.stamp
