# bench.mk - the benchmark harness (bench/run.sh, bench/README.md).
#   make bench         full run: agentrt (when built), crun and runc side by side
#   make bench-smoke   a few rounds into $(BUILDDIR)/bench-smoke, only proves it runs
BENCHER := $(BUILDDIR)/bench/bencher
# Measure the current tree's agentrt when its CLI exists, with its TLS plugin
# (the secrets rows: agentrt refuses a plugin of another build).
BENCH_DEPS := $(BENCHER) $(if $(wildcard cli/main.c),agentrt agentrt-tls.so)

.PHONY: bench bench-smoke

$(BENCHER): bench/bencher.c mk/bench.mk
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(LDFLAGS) -lm

# Static, so that its own RSS is small: a process's ru_maxrss starts from the high-water
# mark of the memory it was exec'd from (the kernel carries the old mm's over exec, and
# posix_spawn's child shares bencher's), which is a floor under the peak RSS row of
# every runtime (bench/README.md, "Metrics").  Dynamically linked: 1632 KiB; static: ~520.
ifneq ($(filter /%,$(shell $(CC) -print-file-name=libc.a)),)
$(BENCHER): LINK_PIE = -static-pie
endif

# The docker row through a private dockerd when Debian's docker.io is installed.
bench: $(BENCH_DEPS)
	bench/run.sh --bencher $(BENCHER) $(if $(wildcard /usr/sbin/dockerd),--dockerd) $(BENCH_ARGS)

bench-smoke: $(BENCH_DEPS)
	bench/run.sh --bencher $(BENCHER) --quick --out $(BUILDDIR)/bench-smoke $(BENCH_ARGS)
