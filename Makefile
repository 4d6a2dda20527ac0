# agentrt - an OCI container runtime for AI agents.
#
#   make                 build ./agentrt (gcc, -O2, hardened)
#   make check           every test: unit, fuzz smoke, bats (and engines / VM lane when present)
#   make check SANITIZE=address,undefined   the same against an ASan/UBSan build
#   make install         PREFIX=/usr/local DESTDIR=
#   make fmt / fmt-check, make bench, make fuzz, make check-layers
CC ?= gcc
PREFIX ?= /usr/local
DESTDIR ?=
BINDIR = $(PREFIX)/bin
MANDIR = $(PREFIX)/share/man
BASHCOMPDIR = $(PREFIX)/share/bash-completion/completions
PROFILEDIR ?= /etc/agentrt/profiles
VERSION := 0.1.0
COMMIT := $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)

PKGS = libseccomp yajl libmnl libnftnl zlib
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
# libsystemd (sd-bus, libsystemd-dev): cgroups/systemd.c needs its headers and
# dlopen()s libsystemd.so.0 for --systemd-cgroup only, so nothing links it
PKGS_DLOPEN = libsystemd
PKG_CFLAGS += $(shell pkg-config --cflags $(PKGS_DLOPEN) 2>/dev/null)

SANITIZE ?=
ifeq ($(SANITIZE),)
BUILDDIR ?= build
OPT = -O2 -D_FORTIFY_SOURCE=2
else
BUILDDIR ?= build-san
# With both ASan and UBSan, undefined behaviour traps (no libubsan; common/sanitizer.h has
# ASan report the trap with file and line): LeakSanitizer no longer scans libubsan's globals at
# every exit, which halved the page faults of an `agentrt list` (4,821 -> 2,548) on this VM
SAN_TRAP = $(if $(and $(findstring address,$(SANITIZE)),$(findstring undefined,$(SANITIZE))),\
	-fsanitize-undefined-trap-on-error)
OPT = -O1 -g -fno-omit-frame-pointer -fsanitize=$(SANITIZE) $(SAN_TRAP) -fno-sanitize-recover=all
endif

WARN = -Wall -Wextra -Werror -Wno-unused-parameter -Wformat=2 -Wshadow=local
HARDEN = -fstack-protector-strong -fPIE -fstack-clash-protection
CFLAGS ?=
CFLAGS += -std=gnu11 -Ulinux $(OPT) $(WARN) $(HARDEN) -D_GNU_SOURCE -MMD -MP $(PKG_CFLAGS) \
	-DAGENTRT_VERSION='"$(VERSION)"' -DAGENTRT_COMMIT='"$(COMMIT)"' -I.
# LINK_PIE: -static-pie for agentrt itself when glibc links statically (mk/perf.mk)
LINK_PIE = -pie
LDFLAGS += $(LINK_PIE) -Wl,-z,relro,-z,now -Wl,-z,noexecstack -Wl,--as-needed
ifneq ($(SANITIZE),)
LDFLAGS += -fsanitize=$(SANITIZE) $(SAN_TRAP)
endif
LIBS = $(PKG_LIBS)

# Every .c under these folders is part of the runtime library (the layers, lowest first, are
# listed in contrib/check-layers.sh); cli/main.c is the CLI entry point.  Files under os/stub/
# are built separately (mk/stub.mk).
SRC_DIRS := common oci os profile cgroups netfilter workspace audit datadir monitor container cli
LIB_SRCS := $(sort $(foreach d,$(SRC_DIRS),$(wildcard $(d)/*.c)))
LIB_SRCS := $(filter-out cli/main.c,$(LIB_SRCS))
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILDDIR)/%.o)
EXTRA_OBJS :=
UNIT_SRCS := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILDDIR)/tests/%)

.DEFAULT_GOAL := all
-include mk/*.mk

.PHONY: all clean install uninstall check check-unit check-bats check-layers fmt fmt-check bench fuzz deps
all: agentrt

ifeq ($(SANITIZE),)
agentrt: $(BUILDDIR)/agentrt
	cp $< $@
else
all: $(BUILDDIR)/agentrt
endif

$(BUILDDIR)/agentrt: $(BUILDDIR)/cli/main.o $(BUILDDIR)/libagentrt.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDFLAGS) $(LIBS)

$(BUILDDIR)/libagentrt.a: $(LIB_OBJS) $(EXTRA_OBJS)
	@rm -f $@
	ar rcsP $@ $^

# Every object depends on the flags it was built with (not the commit's name, which only main.o
# and spec_default.o print): a change of SANITIZE's flags, OPT or LDFLAGS rebuilds the BUILDDIR
FLAGS_STAMP := $(BUILDDIR)/flags.stamp
FLAGS_NOW := $(filter-out -DAGENTRT_COMMIT=%,$(CFLAGS)) | $(LDFLAGS)
ifneq ($(file <$(FLAGS_STAMP)),$(FLAGS_NOW))
$(shell mkdir -p $(BUILDDIR))
$(file >$(FLAGS_STAMP),$(FLAGS_NOW))
endif

$(BUILDDIR)/%.o: %.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

$(BUILDDIR)/tests/%: tests/unit/%.c $(BUILDDIR)/libagentrt.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(BUILDDIR)/libagentrt.a $(LDFLAGS) $(LIBS)

# make check-unit UNIT=test_oci_config [UNIT_K=REGEX]: one binary (only the checks matching)
UNIT ?=
UNIT_K ?=
UNIT_RUN = $(if $(UNIT),$(filter $(addprefix %/,$(UNIT)),$(UNIT_BINS)),$(UNIT_BINS))
check-unit: $(UNIT_RUN)
	@tests/run-unit.sh $(if $(UNIT_K),-k '$(UNIT_K)') $(UNIT_RUN)

# the include graph between folders runs downward only (also tests/bats/layers.bats)
check-layers:
	contrib/check-layers.sh -v

# the unit binaries are built here and run by run-all.sh's `unit` suite: once, and a failed
# unit check does not keep the other suites from running
check: all $(UNIT_BINS)
	tests/run-all.sh $(BUILDDIR)/agentrt

install: agentrt agentrt-tls.so
	install -D -m 0755 agentrt $(DESTDIR)$(BINDIR)/agentrt
	# the TLS proxy plugin (monitor/tls_plugin.h), loaded for containers with secrets only
	install -D -m 0755 agentrt-tls.so $(DESTDIR)$(LIBDIR)/agentrt-tls.so
	if [ -f docs/agentrt.1 ]; then install -D -m 0644 docs/agentrt.1 $(DESTDIR)$(MANDIR)/man1/agentrt.1; fi
	if [ -f contrib/completion/agentrt.bash ]; then install -D -m 0644 contrib/completion/agentrt.bash $(DESTDIR)$(BASHCOMPDIR)/agentrt; fi
	# example operator profiles (e.g. agent-strict, used by contrib/docker/daemon.json);
	# never overwrite an operator's edited copy
	# (agent-strict is built in and would shadow its copy: not installed)
	for p in contrib/profiles/*.json; do \
	  [ "$$(basename $$p)" = agent-strict.json ] && continue; \
	  t=$(DESTDIR)$(PROFILEDIR)/$$(basename $$p); \
	  [ -e "$$t" ] || install -D -m 0644 "$$p" "$$t"; \
	done

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/agentrt $(DESTDIR)$(LIBDIR)/agentrt-tls.so
	rm -f $(DESTDIR)$(MANDIR)/man1/agentrt.1 $(DESTDIR)$(BASHCOMPDIR)/agentrt
	-rmdir $(DESTDIR)$(LIBDIR) 2>/dev/null

fmt:
	clang-format -i $$(git ls-files '*.c' '*.h')

fmt-check:
	clang-format --dry-run --Werror $$(git ls-files '*.c' '*.h')

deps:
	contrib/install-deps.sh

clean:
	rm -rf build build-san agentrt agentrt-tls.so

-include $(LIB_OBJS:.o=.d) $(BUILDDIR)/cli/main.d $(UNIT_BINS:=.d)
