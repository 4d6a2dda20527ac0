# mk/fuzz.mk - libFuzzer targets for the parsers (clang, ASan + UBSan): oci/ (config,
# state, process, resources), profile files, `--user` specs, signal names, mount options,
# the host config (/etc/agentrt/agentrt.conf), the TLS proxy's HTTP/1.1 framing and its
# egress.http rule decisions, the workspace review's git index, config, object and ref
# readers, its ignore files and its line diff, the gateways of a namespace's rtnetlink
# dumps, the audit trail's readers, the sub-agent API's run requests.
#
#   make fuzz           run every target for FUZZ_SECONDS (default 60) each
#   make fuzz-smoke     the same, FUZZ_SMOKE_SECONDS (default 4) each (part of `make check`;
#                       keep targets x seconds / FUZZ_JOBS under ~1 minute)
#   make fuzz-build     just build build/fuzz/fuzz_<target>
# Seeds live in tests/fuzz/corpus/<target>/ (committed; crashing inputs that
# were fixed are kept there as regressions); new inputs found while fuzzing
# go to tests/fuzz/corpus-work/<target>/ (ignored by git), crash artifacts to
# build/fuzz/.  The targets compile oci/ and common/ from source with clang,
# independently of the gcc build.

.DEFAULT_GOAL := all

FUZZ_CC ?= clang
FUZZ_SECONDS ?= 60
FUZZ_DIR := build/fuzz
FUZZ_SMOKE_SECONDS ?= 4
FUZZ_TARGETS := config state process resources profile user signal mountopts dns egress_entry http1 \
	hostconf subproto gitindex gitconfig gitobjects gitreflog audit base64 netlog ignore \
	gitrefs linediff gateways httprule subreq
FUZZ_BINS = $(FUZZ_TARGETS:%=$(FUZZ_DIR)/fuzz_%)
FUZZ_LIB_SRCS := common/error.c common/util.c common/egress_grammar.c $(sort $(wildcard oci/*.c))
# Extra sources per target (besides FUZZ_LIB_SRCS).
FUZZ_SRCS_profile := $(sort $(wildcard profile/*.c)) os/syscall_late.c common/log.c
FUZZ_SRCS_user := container/user.c
FUZZ_SRCS_signal := container/signals.c
FUZZ_SRCS_mountopts := container/mount_options.c
FUZZ_SRCS_dns := netfilter/dns.c netfilter/policy.c
FUZZ_SRCS_egress_entry := netfilter/dns.c netfilter/policy.c netfilter/upstream.c
FUZZ_SRCS_hostconf := datadir/hostconf.c profile/units.c
FUZZ_SRCS_http1 := monitor/http1.c
FUZZ_SRCS_httprule = monitor/http1.c monitor/http_rule.c $(FUZZ_SRCS_profile)
FUZZ_SRCS_subproto := common/subproto.c
FUZZ_SRCS_subreq = monitor/subreq.c common/subproto.c $(FUZZ_SRCS_profile)
FUZZ_SRCS_base64 := common/base64.c monitor/secret_store.c
FUZZ_SRCS_audit := audit/read.c audit/summary.c audit/verify.c audit/jbuf.c audit/append.c common/sha256.c
FUZZ_SRCS_netlog := monitor/netlog.c $(FUZZ_SRCS_audit)
FUZZ_SRCS_gitconfig := workspace/gitconfig.c workspace/fsops.c workspace/quote.c os/procfs.c os/passwd.c \
	os/fsutil.c
FUZZ_SRCS_gitindex := workspace/gitindex.c workspace/gitconfig.c workspace/protect.c workspace/fsops.c workspace/quote.c \
	workspace/gitrefs.c workspace/gitobjects.c workspace/hashes.c common/sha256.c os/procfs.c os/fsutil.c os/passwd.c
FUZZ_SRCS_gitobjects := $(FUZZ_SRCS_gitindex)
FUZZ_SRCS_gitreflog := $(FUZZ_SRCS_gitindex)
FUZZ_SRCS_linediff := workspace/linediff.c
FUZZ_SRCS_gateways := netfilter/gateways.c
FUZZ_SRCS_gitrefs := $(FUZZ_SRCS_gitindex) workspace/scan.c
FUZZ_SRCS_ignore := workspace/ignore.c $(FUZZ_SRCS_gitindex) workspace/scan.c
FUZZ_CFLAGS := -std=gnu11 -g -O1 -fno-omit-frame-pointer \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	-D_GNU_SOURCE -I. -Itests/fuzz $(shell pkg-config --cflags yajl 2>/dev/null) \
	-DAGENTRT_VERSION='"$(VERSION)"' -DAGENTRT_COMMIT='"$(COMMIT)"'
FUZZ_LIBS := $(shell pkg-config --libs yajl libseccomp zlib 2>/dev/null || echo -lyajl -lseccomp -lz)
FUZZ_FLAGS ?= -max_len=65536 -timeout=10 -rss_limit_mb=2048 -dict=tests/fuzz/oci.dict

.PHONY: fuzz fuzz-smoke fuzz-build

fuzz-build: $(FUZZ_BINS)

# Every source is compiled once into $(FUZZ_DIR)/obj (the library's files are shared by all the
# targets), each target links its own objects.
FUZZ_OBJ := $(FUZZ_DIR)/obj
fuzz_objs = $(patsubst %.c,$(FUZZ_OBJ)/%.o,$(1))

$(FUZZ_OBJ)/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -MMD -MP -c -o $@ $<

.SECONDEXPANSION:
$(FUZZ_DIR)/fuzz_%: $(FUZZ_OBJ)/tests/fuzz/fuzz_%.o $(call fuzz_objs,$(FUZZ_LIB_SRCS)) \
		$$(call fuzz_objs,$$(FUZZ_SRCS_$$*))
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $^ $(FUZZ_LIBS)

-include $(shell find $(FUZZ_OBJ) -name '*.d' 2>/dev/null)

# Each run: fresh inputs into corpus-work, seeds read from corpus; FUZZ_JOBS targets at a time
# (each libFuzzer run is one process), every target's last line printed when it ends.
FUZZ_JOBS ?= $(shell nproc 2>/dev/null || echo 1)
fuzz: $(FUZZ_BINS)
	@printf '%s\n' $(FUZZ_TARGETS) | xargs -P $(FUZZ_JOBS) -I{} sh -c ' \
	  t={}; mkdir -p tests/fuzz/corpus-work/$$t tests/fuzz/corpus/$$t; \
	  if $(FUZZ_DIR)/fuzz_$$t $(FUZZ_FLAGS) -max_total_time=$(FUZZ_SECONDS) \
	    -artifact_prefix=$(FUZZ_DIR)/crash-$$t- -print_final_stats=0 \
	    tests/fuzz/corpus-work/$$t tests/fuzz/corpus/$$t 2>$(FUZZ_DIR)/fuzz_$$t.log; then \
	    echo "fuzz_$$t: $(FUZZ_SECONDS) s: $$(grep -E "^#[0-9]+[[:space:]]+DONE" $(FUZZ_DIR)/fuzz_$$t.log | tail -1)"; \
	  else tail -40 $(FUZZ_DIR)/fuzz_$$t.log; echo "fuzz_$$t: FAILED"; exit 1; fi' \
	|| { echo "fuzz: a target failed (its log is above)"; exit 1; }

fuzz-smoke:
	@$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=$(FUZZ_SMOKE_SECONDS)
