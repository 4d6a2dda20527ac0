# bench.mk - the benchmark harness (bench/run.sh, bench/README.md).
#   make bench         full run: agentrt (when built), crun and runc side by side
#   make bench-smoke   a few rounds into $(BUILDDIR)/bench-smoke, only proves it runs
BENCHER := $(BUILDDIR)/bench/bencher
# Measure the current tree's agentrt when its CLI exists.
BENCH_DEPS := $(BENCHER) $(if $(wildcard cli/main.c),agentrt)

.PHONY: bench bench-smoke

$(BENCHER): bench/bencher.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(LDFLAGS) -lm

# The docker row through a private dockerd when Debian's docker.io is installed.
bench: $(BENCH_DEPS)
	bench/run.sh --bencher $(BENCHER) $(if $(wildcard /usr/sbin/dockerd),--dockerd) $(BENCH_ARGS)

bench-smoke: $(BENCH_DEPS)
	bench/run.sh --bencher $(BENCHER) --quick --out $(BUILDDIR)/bench-smoke $(BENCH_ARGS)
