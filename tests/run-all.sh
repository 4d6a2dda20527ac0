#!/bin/bash
# tests/run-all.sh - run every test suite and print one total.
#
# Usage: tests/run-all.sh [RUNTIME-BINARY]
# The runtime under test is the argument (make check passes $(BUILDDIR)/agentrt), else
# $AGENTRT, else ./agentrt.  Suites, in order (RUN_SUITES selects, default all):
#   unit         C unit tests: $BUILDDIR/tests/test_* via tests/run-unit.sh
#   fuzz         `make fuzz-smoke` when that target exists
#   bats         tests/bats/*.bats          (core CLI, black-box)
#   security     tests/security/*.bats
#   integration  integration/*.bats         (skip themselves when an engine is missing)
#   workload     tests/workload/*.bats      (Debian 12 rootfs with real toolchains, built once
#                                           with mmdebstrap and cached, see build-rootfs.sh)
#   vm           tests/vm/*.sh              (only when qemu-system-x86_64 exists)
# BUILDDIR defaults to the runtime binary's directory when that is build/ or build-san/.
# Logs go to $BUILDDIR/test-logs/ (RUN_LOGDIR: elsewhere, for a second run beside this one).  The last line is `N passed, N failed[, N skipped]`;
# the exit status is 1 when anything failed.
#
# RUN_EXCLUDE: names of bats files (without .bats) to leave out.
# RUN_BATS_TAGS: bats --filter-tags for every bats file (e.g. '!flood': leave out the tests
# tagged `# bats test_tags=flood`, the minutes-long floods, which the sanitizer pass skips).
# TEST_JOBS (default: the number of CPUs) bats files run at a time: every file has its own
# --root, data directory, cgroup parent, temp dirs and network namespaces (helpers.bash), so
# files do not share state.  The engine suites (integration, workload: private daemons) run
# one after the other in one job, the VM lanes in another; a file that looks at host-wide
# state (the whole mount table) says `# run-all: alone` in its first lines and runs after the
# others, by itself.  Each file's TAP is printed whole when it ends; the summary keeps the
# order above.
set -uo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"

bin=${1:-${AGENTRT:-$repo/agentrt}}
case "$bin" in /*) ;; */*) bin=$repo/${bin#./} ;; *) bin=$(command -v "$bin" || echo "$bin") ;; esac
export AGENTRT=$bin
if [ -z "${BUILDDIR:-}" ]; then
	case "$(basename "$(dirname "$bin")")" in
	build | build-san) BUILDDIR=$(dirname "$bin") ;;
	*) BUILDDIR=$repo/build ;;
	esac
fi
case "$BUILDDIR" in /*) ;; *) BUILDDIR=$repo/$BUILDDIR ;; esac
RUN_SUITES=${RUN_SUITES:-unit fuzz bats security integration workload vm}
BATS_FILE_TIMEOUT=${BATS_FILE_TIMEOUT:-900}
logdir=${RUN_LOGDIR:-$BUILDDIR/test-logs}
mkdir -p "$logdir"
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# The bats suites' state roots (/run), data directories and bundles (/tmp): on a tmpfs, as a
# host's /run is, when this one's /run or /tmp is on a disk; /dev/shm then (helpers.bash,
# AGENTRT_TEST_RUN and AGENTRT_TEST_TMP; set either to keep it).  Measured on this VM, whose
# /run and /tmp are on its ext4: lifecycle.bats and mounts.bats 55.9 s -> 49.0 s.
on_tmpfs() {
	[ "$(stat -f -c %T "$1" 2>/dev/null)" = tmpfs ]
}
if on_tmpfs /dev/shm && [ -w /dev/shm ]; then
	if [ -z "${AGENTRT_TEST_RUN:-}" ] && ! on_tmpfs /run; then
		export AGENTRT_TEST_RUN=/dev/shm
	fi
	if [ -z "${AGENTRT_TEST_TMP:-}" ] && ! on_tmpfs /tmp; then
		export AGENTRT_TEST_TMP=/dev/shm
	fi
fi

TEST_JOBS=${TEST_JOBS:-$(nproc 2>/dev/null || echo 1)}
resdir=$logdir/results
rm -rf "$resdir"
mkdir -p "$resdir"
: >"$logdir/failures.txt"
outlock=$logdir/.output.lock

wanted() {
	[[ " $RUN_SUITES " == *" $1 "* ]]
}

# under_lock CMD...: CMD with the output lock held (whole logs, not interleaved lines).
under_lock() {
	flock "$outlock" "$@"
}

# child_cpu VAR: VAR = the CPU seconds (user + system) of every child this job has waited for,
# as bash's `times` reports them (to a file, and no $(...) here: a subshell's children are not
# this job's); a file's or lane's is the difference across it.  On a machine whose CPUs the
# passes and the VM lanes keep busy, this, not the wall time, is what a test costs the CI.
child_cpu() {
	local f=$logdir/.times.$BASHPID l u s t re='^([0-9]+)m([0-9]+)\.[0-9]+s$' n=0
	times >"$f"
	{ read -r l; read -r u s; } <"$f"
	rm -f "$f"
	for t in "$u" "$s"; do
		[[ $t =~ $re ]] && n=$((n + BASH_REMATCH[1] * 60 + 10#${BASH_REMATCH[2]}))
	done
	printf -v "$1" %d "$n"
}

# record KEY NAME PASSED FAILED SKIPPED T0 [CPU0]: one result, summed and printed in KEY order;
# with CPU0 (child_cpu at the start) the CPU seconds of the job's children since then
record() {
	local cpu=- c1
	[ -z "${7:-}" ] || { child_cpu c1; cpu=$((c1 - $7)); }
	printf '%s %s %s %s %s %s\n' "$2" "$3" "$4" "$5" $((SECONDS - $6)) "$cpu" >"$resdir/$1"
}

# Count TAP results in LOG: `ok`, `not ok`, `ok ... # skip`.
tap_counts() {
	local p f s
	s=$(grep -cE '^ok [0-9]+ .*# (skip|SKIP)' "$1")
	p=$(($(grep -cE '^ok [0-9]+' "$1") - s))
	f=$(grep -cE '^not ok [0-9]+' "$1")
	echo "$p $f $s"
}

# run_bats KEY SUITE FILE: one bats file, TAP to its log, then printed whole.
run_bats() {
	local key=$1 suite=$2 file=$3 log rc p f s t0=$SECONDS c0
	child_cpu c0
	log=$logdir/$suite-$(basename "$file" .bats).tap
	timeout --kill-after=10 "$BATS_FILE_TIMEOUT" bats --tap --timing \
		${RUN_BATS_TAGS:+--filter-tags "$RUN_BATS_TAGS"} "$file" >"$log" 2>&1
	rc=$?
	read -r p f s < <(tap_counts "$log")
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		# bats itself failed (syntax error, timeout, a failing setup_file/teardown_file).
		echo "not ok - $file: bats exited with status $rc" >>"$log"
		f=1
	fi
	under_lock sh -c 'echo "# $1: $2 ($3 s)"; cat "$4"; grep -E "^not ok" "$4" | sed "s|^|$2: |" >>"$5"' \
		- "$suite" "$file" $((SECONDS - t0)) "$log" "$logdir/failures.txt"
	record "$key" "$suite/$(basename "$file" .bats)" "$p" "$f" "$s" "$t0" "$c0"
}

# run_vm KEY SCRIPT: one VM lane (tests/vm/*.sh), TAP from inside the VM.
run_vm() {
	local key=$1 v=$2 log rc p f s t0=$SECONDS c0
	child_cpu c0
	log=$logdir/vm-$(basename "$v" .sh).log
	# VM_DEADLINE: the lane's VM stops itself before this kills it, and says so
	VM_DEADLINE=$(($(date +%s) + ${VM_TIMEOUT:-1200})) \
		timeout --kill-after=10 "${VM_TIMEOUT:-1200}" "$v" >"$log" 2>&1
	rc=$?
	read -r p f s < <(tap_counts "$log")
	if [ $((p + f + s)) -eq 0 ] && [ "$rc" -eq 0 ] && grep -qE '^ok - # (skip|SKIP)' "$log"; then
		s=1 # the lane could not run here (no qemu, no vm-run.sh): skipped, not passed
	elif [ $((p + f + s)) -eq 0 ]; then
		[ "$rc" -eq 0 ] && p=1 || f=1
	elif [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
	fi
	under_lock sh -c 'echo "# vm: $1 ($2 s)"; cat "$3"' - "$v" $((SECONDS - t0)) "$log"
	[ "$f" -gt 0 ] && under_lock sh -c 'echo "$1: failed (status $2)" >>"$3"' - "$v" "$rc" "$logdir/failures.txt"
	record "$key" "vm/$(basename "$v" .sh)" "$p" "$f" "$s" "$t0" "$c0"
}

run_fuzz() {
	local key=$1 rc p f t0=$SECONDS c0
	child_cpu c0
	# one job of the pool: the targets one at a time
	make -j"$(nproc)" fuzz-smoke FUZZ_JOBS=1 >"$logdir/fuzz.log" 2>&1
	rc=$?
	p=$(grep -cE '^ok\b' "$logdir/fuzz.log")
	f=$(grep -cE '^not ok\b' "$logdir/fuzz.log")
	if [ "$p" -eq 0 ] && [ "$f" -eq 0 ]; then
		[ "$rc" -eq 0 ] && p=1 || f=1
	elif [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
	fi
	under_lock sh -c 'echo "# fuzz: make fuzz-smoke ($1 s)"; grep -E "^fuzz_|FAILED|ERROR|^==" "$2"' - $((SECONDS - t0)) "$logdir/fuzz.log"
	[ "$f" -gt 0 ] && under_lock sh -c 'echo "fuzz: make fuzz-smoke failed (status $1)" >>"$2"' - "$rc" "$logdir/failures.txt"
	record "$key" fuzz "$p" "$f" 0 "$t0" "$c0"
}

# in_pool CMD...: CMD as a background job once fewer than TEST_JOBS run.
in_pool() {
	while [ "$(jobs -rp | wc -l)" -ge "$TEST_JOBS" ]; do
		wait -n
	done
	"$@" </dev/null &
}

# The test rootfs and helpers (cached; cheap when up to date).
if wanted bats || wanted security || wanted integration; then
	if ! make -s test-rootfs >"$logdir/rootfs.log" 2>&1; then
		cat "$logdir/rootfs.log"
		echo "rootfs: build failed" >>"$logdir/failures.txt"
		record 000 rootfs 0 1 0 "$SECONDS"
	fi
fi

if wanted unit; then
	t0=$SECONDS
	shopt -s nullglob
	units=("$BUILDDIR"/tests/test_*)
	shopt -u nullglob
	# Only executables (not .d/.o files).
	bins=()
	for u in "${units[@]}"; do [ -x "$u" ] && [ -f "$u" ] && bins+=("$u"); done
	if [ "${#bins[@]}" -gt 0 ]; then
		tests/run-unit.sh "${bins[@]}" 2>&1 | tee "$logdir/unit.log"
		s=$(grep -cE '^[^ ]+: ok - # SKIP' "$logdir/unit.log")
		p=$(($(grep -cE '^[^ ]+: ok\b' "$logdir/unit.log") - s))
		f=$(grep -cE '^([^ ]+: )?not ok\b' "$logdir/unit.log")
		grep -E '^([^ ]+: )?not ok\b' "$logdir/unit.log" >>"$logdir/failures.txt"
		record 010 unit "$p" "$f" "$s" "$t0"
	else
		echo "# unit: no unit-test binaries in $BUILDDIR/tests"
	fi
fi

# The pool's work, longest first: the VM lanes are one job of lanes run in turn (a lane marked
# `# run-all: first`, the longest, before the others: two VMs at once beside CI's first pass
# slowed its floods and listeners enough to fail them), the engines' daemons another; every
# other bats file is a job of its own.
# alone FILE: true when FILE asks to run by itself.
alone() {
	head -n 20 "$1" | grep -q '^# run-all: alone'
}

vm_lanes() {
	local v i=0
	for v in "$@"; do
		run_vm "$(printf '900-%03d' $i)" "$v"
		i=$((i + 1))
	done
}

engines() {
	local e
	for e in "$@"; do
		run_bats "${e%%|*}" "$(cut -d'|' -f2 <<<"$e")" "${e##*|}"
	done
}

vms=()
if wanted vm; then
	shopt -s nullglob
	for v in tests/vm/*.sh; do
		if head -n 20 "$v" | grep -q '^# run-all: first'; then vms=("$v" "${vms[@]}"); else vms+=("$v"); fi
	done
	shopt -u nullglob
	if [ "${#vms[@]}" -gt 0 ] && ! command -v qemu-system-x86_64 >/dev/null; then
		echo "# vm: qemu-system-x86_64 not installed, skipped"
		vms=()
	fi
fi
files=() engine_files=() alone_files=()
n=0
for suite in bats security integration workload; do
	wanted "$suite" || continue
	case $suite in
	bats) dir=tests/bats ;;
	security) dir=tests/security ;;
	integration) dir=integration ;;
	workload) dir=tests/workload ;;
	esac
	shopt -s nullglob
	for f in "$dir"/*.bats; do
		[[ " ${RUN_EXCLUDE:-} " != *" $(basename "$f" .bats) "* ]] || continue
		key=$(printf '%03d' $((100 + n)))
		n=$((n + 1))
		if [ "$suite" = integration ] || [ "$suite" = workload ]; then
			engine_files+=("$key|$suite|$f")
		elif alone "$f"; then
			alone_files+=("$key|$suite|$f")
		else
			# largest first: file size stands for its length
			files+=("$(stat -c %s "$f") $key $suite $f")
		fi
	done
	shopt -u nullglob
done

[ "${#vms[@]}" -eq 0 ] || in_pool vm_lanes "${vms[@]}"
[ "${#engine_files[@]}" -eq 0 ] || in_pool engines "${engine_files[@]}"
if wanted fuzz; then
	if make -n fuzz-smoke >/dev/null 2>&1; then
		in_pool run_fuzz 020
	else
		echo "# fuzz: no fuzz-smoke target, skipped"
	fi
fi
# (the list is read first: a job started inside a `while read` loop would inherit its input)
mapfile -t order < <(printf '%s\n' "${files[@]}" | sort -rn)
for o in "${order[@]}"; do
	read -r _ key suite f <<<"$o"
	[ -n "$key" ] && in_pool run_bats "$key" "$suite" "$f"
done
wait
for e in "${alone_files[@]}"; do
	engines "$e"
done

total_p=0 total_f=0 total_s=0 total_cpu=0
summary=()
for r in $(ls "$resdir" | sort); do
	read -r name p f s secs cpu <"$resdir/$r"
	total_p=$((total_p + p))
	total_f=$((total_f + f))
	total_s=$((total_s + s))
	summary+=("$(printf '%-24s %4d passed, %3d failed, %3d skipped %5ds  cpu %4ss' "$name" "$p" "$f" "$s" "$secs" "${cpu:--}")")
	[[ ${cpu:--} == - ]] || total_cpu=$((total_cpu + cpu))
done

echo
echo "# runtime: $AGENTRT ($("$AGENTRT" --version 2>/dev/null | head -n1))"
echo "# summary (logs in $logdir; ${SECONDS}s in all, $TEST_JOBS jobs at a time; cpu: the CPU time of each file's processes that its bats waited for, ${total_cpu}s together):"
printf '#   %s\n' "${summary[@]}"
if [ -s "$logdir/failures.txt" ]; then
	echo "# failures:"
	sed 's/^/#   /' "$logdir/failures.txt"
fi
if [ "$total_s" -gt 0 ]; then
	echo "$total_p passed, $total_f failed, $total_s skipped"
else
	echo "$total_p passed, $total_f failed"
fi
[ "$total_f" -eq 0 ]
