#!/bin/sh
# run-unit.sh - run each unit-test binary given as argument, show failures,
# and print "N passed, N failed" (counting binaries).  Exit 1 on any failure.
passed=0
failed=0
for t in "$@"; do
  out=$("$t" 2>&1)
  rc=$?
  if [ "$rc" -eq 0 ]; then
    passed=$((passed + 1))
    echo "PASS $t ($(printf '%s\n' "$out" | grep -c '^ok - ') checks)"
  else
    failed=$((failed + 1))
    echo "FAIL $t (exit $rc)"
    printf '%s\n' "$out" | grep -v '^ok - '
  fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
