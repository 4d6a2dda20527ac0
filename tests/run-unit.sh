#!/bin/bash
# tests/run-unit.sh - run the C unit-test binaries and total their results.
#
# Usage: tests/run-unit.sh [-k PATTERN] [BINARY|NAME...]   (default: build/tests/test_*)
# Each binary prints `ok - name` / `not ok - name: detail` lines (tests/unit/tap.h).  A binary
# that exits non-zero without reporting a failure (a crash, a sanitizer report) counts as one
# failed test.  A check the machine cannot make prints `ok - # SKIP why` (tap_skip) and counts as
# skipped.  Prints every result line, then `unit: N passed, N failed, N skipped`; exit 1 on
# failure.
#   NAME        a binary by name (test_cgroups), looked up in $BUILDDIR/tests (default build/)
#   -k PATTERN  report (and count) only the checks whose line matches the extended regex
#               PATTERN; the binary still runs all its checks (milliseconds), and its exit
#               status still counts when it crashed
# Examples: tests/run-unit.sh test_oci_config;  tests/run-unit.sh -k 'dup' test_oci_config
#           make check-unit UNIT=test_oci_config UNIT_K=dup
set -uo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
pattern=
if [ "${1:-}" = -k ]; then
	[ $# -ge 2 ] || { echo "run-unit.sh: -k needs a pattern" >&2; exit 2; }
	pattern=$2
	shift 2
fi
bins=()
for a in "$@"; do
	case "$a" in
	*/*) bins+=("$a") ;;
	*) bins+=("${BUILDDIR:-$repo/build}/tests/$a") ;;
	esac
done
if [ "${#bins[@]}" -eq 0 ]; then
	shopt -s nullglob
	for b in "${BUILDDIR:-$repo/build}"/tests/test_*; do
		case "$b" in *.d | *.o) ;; *) bins+=("$b") ;; esac
	done
fi

passed=0
failed=0
skipped=0
for b in "${bins[@]}"; do
	[ -x "$b" ] || { echo "not ok - $(basename "$b"): not built"; failed=$((failed + 1)); continue; }
	out=$(timeout --kill-after=5 "${UNIT_TIMEOUT:-300}" "$b" 2>&1)
	rc=$?
	if [ -n "$pattern" ]; then
		out=$(grep -E '^(ok|not ok)\b' <<<"$out" | grep -E -- "$pattern")
		[ -n "$out" ] || { echo "not ok - $(basename "$b"): no check matches \`$pattern'"; failed=$((failed + 1)); }
	fi
	[ -z "$out" ] || printf '%s\n' "$out" | sed "s|^|$(basename "$b"): |"
	s=$(grep -c '^ok - # SKIP' <<<"$out")
	p=$(($(grep -c '^ok\b' <<<"$out") - s))
	f=$(grep -c '^not ok\b' <<<"$out")
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "not ok - $(basename "$b"): exited with status $rc${pattern:+ (a crash, or a check outside -k failed)}"
		f=1
	fi
	passed=$((passed + p))
	failed=$((failed + f))
	skipped=$((skipped + s))
done
echo "unit: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
