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
# Logs go to $BUILDDIR/test-logs/.  The last line is `N passed, N failed[, N skipped]`;
# the exit status is 1 when anything failed.
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
logdir=$BUILDDIR/test-logs
mkdir -p "$logdir"
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

total_p=0 total_f=0 total_s=0
summary=()
failures=()

wanted() {
	[[ " $RUN_SUITES " == *" $1 "* ]]
}

# add SUITE PASSED FAILED SKIPPED: the counts, and the seconds since the previous add (or since
# the start), so the summary says where CI's time goes.
last_add=$SECONDS
add() {
	total_p=$((total_p + $2))
	total_f=$((total_f + $3))
	total_s=$((total_s + $4))
	summary+=("$(printf '%-24s %4d passed, %3d failed, %3d skipped %5ds' "$1" "$2" "$3" "$4" $((SECONDS - last_add)))")
	last_add=$SECONDS
}

# Count TAP results in LOG: `ok`, `not ok`, `ok ... # skip`.
tap_counts() {
	local p f s
	s=$(grep -cE '^ok [0-9]+ .*# (skip|SKIP)' "$1")
	p=$(($(grep -cE '^ok [0-9]+' "$1") - s))
	f=$(grep -cE '^not ok [0-9]+' "$1")
	echo "$p $f $s"
}

# run_bats SUITE FILE: one bats file, TAP to the log and to stdout.
run_bats() {
	local suite=$1 file=$2 log rc p f s
	log=$logdir/$suite-$(basename "$file" .bats).tap
	echo "# $suite: $file"
	timeout --kill-after=10 "$BATS_FILE_TIMEOUT" bats --tap --timing "$file" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	read -r p f s < <(tap_counts "$log")
	grep -E '^not ok' "$log" | sed "s|^|$file: |" >>"$logdir/failures.txt"
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		# bats itself failed (syntax error, timeout, a failing setup_file/teardown_file).
		echo "not ok - $file: bats exited with status $rc"
		echo "$file: bats exited with status $rc" >>"$logdir/failures.txt"
		f=1
	fi
	add "$suite/$(basename "$file" .bats)" "$p" "$f" "$s"
}

: >"$logdir/failures.txt"

# The test rootfs and helpers (cached; cheap when up to date).
if wanted bats || wanted security || wanted integration; then
	if ! make -s test-rootfs >"$logdir/rootfs.log" 2>&1; then
		cat "$logdir/rootfs.log"
		echo "rootfs: build failed" >>"$logdir/failures.txt"
		add rootfs 0 1 0
	fi
fi

if wanted unit; then
	shopt -s nullglob
	units=("$BUILDDIR"/tests/test_*)
	shopt -u nullglob
	# Only executables (not .d/.o files).
	bins=()
	for u in "${units[@]}"; do [ -x "$u" ] && [ -f "$u" ] && bins+=("$u"); done
	if [ "${#bins[@]}" -gt 0 ]; then
		tests/run-unit.sh "${bins[@]}" 2>&1 | tee "$logdir/unit.log"
		p=$(grep -cE '^[^ ]+: ok\b' "$logdir/unit.log")
		f=$(grep -cE '^([^ ]+: )?not ok\b' "$logdir/unit.log")
		grep -E '^([^ ]+: )?not ok\b' "$logdir/unit.log" >>"$logdir/failures.txt"
		add unit "$p" "$f" 0
	else
		echo "# unit: no unit-test binaries in $BUILDDIR/tests"
	fi
fi

if wanted fuzz; then
	if make -n fuzz-smoke >/dev/null 2>&1; then
		echo "# fuzz: make fuzz-smoke"
		make -j"$(nproc)" fuzz-smoke 2>&1 | tee "$logdir/fuzz.log"
		rc=${PIPESTATUS[0]}
		p=$(grep -cE '^ok\b' "$logdir/fuzz.log")
		f=$(grep -cE '^not ok\b' "$logdir/fuzz.log")
		if [ "$p" -eq 0 ] && [ "$f" -eq 0 ]; then
			[ "$rc" -eq 0 ] && p=1 || f=1
		elif [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
			f=1
		fi
		[ "$f" -gt 0 ] && echo "fuzz: make fuzz-smoke failed (status $rc)" >>"$logdir/failures.txt"
		add fuzz "$p" "$f" 0
	else
		echo "# fuzz: no fuzz-smoke target, skipped"
	fi
fi

for suite in bats security integration workload; do
	wanted "$suite" || continue
	case $suite in
	bats) dir=tests/bats ;;
	security) dir=tests/security ;;
	integration) dir=integration ;;
	workload) dir=tests/workload ;;
	esac
	shopt -s nullglob
	files=("$dir"/*.bats)
	shopt -u nullglob
	for f in "${files[@]}"; do
		run_bats "$suite" "$f"
	done
done

if wanted vm; then
	shopt -s nullglob
	vms=(tests/vm/*.sh)
	shopt -u nullglob
	if [ "${#vms[@]}" -gt 0 ] && command -v qemu-system-x86_64 >/dev/null; then
		for v in "${vms[@]}"; do
			log=$logdir/vm-$(basename "$v" .sh).log
			echo "# vm: $v"
			timeout --kill-after=10 "${VM_TIMEOUT:-1200}" "$v" 2>&1 | tee "$log"
			rc=${PIPESTATUS[0]}
			read -r p f s < <(tap_counts "$log")
			if [ $((p + f + s)) -eq 0 ] && [ "$rc" -eq 0 ] && grep -qE '^ok - # (skip|SKIP)' "$log"; then
				s=1 # the lane could not run here (no qemu, no vm-run.sh): skipped, not passed
			elif [ $((p + f + s)) -eq 0 ]; then
				[ "$rc" -eq 0 ] && p=1 || f=1
			elif [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
				f=1
			fi
			[ "$f" -gt 0 ] && echo "$v: failed (status $rc)" >>"$logdir/failures.txt"
			add "vm/$(basename "$v" .sh)" "$p" "$f" "$s"
		done
	elif [ "${#vms[@]}" -gt 0 ]; then
		echo "# vm: qemu-system-x86_64 not installed, skipped"
	fi
fi

echo
echo "# runtime: $AGENTRT ($("$AGENTRT" --version 2>/dev/null | head -n1))"
echo "# summary (logs in $logdir; ${SECONDS}s in all):"
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
