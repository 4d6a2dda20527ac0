#!/bin/bash
# tests/run-unit.sh - run the C unit-test binaries and total their results.
#
# Usage: tests/run-unit.sh [BINARY...]   (default: build/tests/test_*)
# Each binary prints `ok - name` / `not ok - name: detail` lines (tests/unit/tap.h).  A binary
# that exits non-zero without reporting a failure (a crash, a sanitizer report) counts as one
# failed test.  Prints every result line, then `unit: N passed, N failed`; exit 1 on failure.
set -uo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
bins=("$@")
if [ "${#bins[@]}" -eq 0 ]; then
	shopt -s nullglob
	bins=("$repo"/build/tests/test_*)
fi

passed=0
failed=0
for b in "${bins[@]}"; do
	[ -x "$b" ] || { echo "not ok - $(basename "$b"): not built"; failed=$((failed + 1)); continue; }
	out=$(timeout --kill-after=5 "${UNIT_TIMEOUT:-120}" "$b" 2>&1)
	rc=$?
	printf '%s\n' "$out" | sed "s|^|$(basename "$b"): |"
	p=$(grep -c '^ok\b' <<<"$out")
	f=$(grep -c '^not ok\b' <<<"$out")
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "not ok - $(basename "$b"): exited with status $rc"
		f=1
	fi
	passed=$((passed + p))
	failed=$((failed + f))
done
echo "unit: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
