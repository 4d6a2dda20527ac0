#!/usr/bin/env bats
# bench.bats - the benchmark harness runs and reports.
# Only that `make bench-smoke` works and writes a table with a column per
# runtime found, and that ratios are paired; no timing is ever asserted.

setup() {
  REPO=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
  OUT=$(mktemp -d /tmp/agentrt-bench-bats.XXXXXX)
  ls -d /run/agentrt-bench-* /sys/fs/cgroup/*/agentrt-bench-* 2>/dev/null | sort >"$OUT/before" || true
}

teardown() {
  rm -rf "$OUT"
}

# Runtimes bench/run.sh will find, in its column order.
runtimes_found() {
  command -v runc >/dev/null && echo runc
  command -v crun >/dev/null && echo crun
  [ -x "${AGENTRT:-$REPO/agentrt}" ] && echo agentrt
  return 0
}

@test "bench: make bench-smoke writes a markdown table and a chart for each runtime found" {
  [ "$(id -u)" = 0 ] || skip "needs root"
  [ -n "$(runtimes_found)" ] || skip "no runtime installed"
  unified_before=0
  mountpoint -q /sys/fs/cgroup/unified && unified_before=1

  run make -C "$REPO" -s bench-smoke BENCH_ARGS="--out $OUT/res --rounds 2 --containers 4"
  echo "$output" | tail -n 30
  [ "$status" -eq 0 ]
  md=$OUT/res/latest.md
  [ -s "$md" ]
  [ -s "$OUT/res/latest.svg" ]
  grep -q '^<svg' "$OUT/res/latest.svg"
  ls "$OUT"/res/*-*.md "$OUT"/res/*-*.tsv >/dev/null

  # One column per runtime found, and a number in each of them on the `run` row.
  n=0
  for rt in $(runtimes_found); do
    grep -q "| $rt median (min-max) |" "$md"
    n=$((n + 1))
  done
  row=$(grep '^| `run` of /bin/true' "$md")
  for i in $(seq 1 "$n"); do
    cell=$(echo "$row" | awk -F'|' -v c=$((3 + i)) '{ gsub(/ /, "", $c); print $c }')
    [[ "$cell" =~ ^[0-9] ]]
  done
  for m in '`create`' '`exec` of /bin/true' '`delete --force`' 'throughput' 'peak RSS' 'binary size'; do
    grep -q "^| $m" "$md"
  done
  # the density row (--quick: 3 idle agent containers), a number in KiB
  if [ -x "${AGENTRT:-$REPO/agentrt}" ]; then
    grep -q '^| density: monitor PSS per idle agent container (3 containers) | [0-9][0-9]* KiB' "$md"
  fi

  # Nothing left behind, and the host's mount namespace untouched.
  ls -d /run/agentrt-bench-* /sys/fs/cgroup/*/agentrt-bench-* 2>/dev/null | sort >"$OUT/after" || true
  diff "$OUT/before" "$OUT/after"
  if [ "$unified_before" = 1 ]; then mountpoint -q /sys/fs/cgroup/unified; fi
}

@test "bench: report ratios are paired (median of per-round ratios)" {
  run make -C "$REPO" -s build/bench/bencher
  [ "$status" -eq 0 ]
  cat >"$OUT/raw.tsv" <<'TSV'
meta	runtimes	runc crun
meta	rounds	3
sample	run	runc	1	10
sample	run	crun	1	5
sample	run	runc	2	20
sample	run	crun	2	5
sample	run	runc	3	30
sample	run	crun	3	30
TSV
  run "$REPO/build/bench/bencher" report "$OUT/raw.tsv" --md "$OUT/r.md" --svg "$OUT/r.svg"
  [ "$status" -eq 0 ]
  cat "$OUT/r.md"
  # medians 20 and 5 (ratio of medians 0.25); per-round ratios 0.5 0.25 1 -> 0.50
  grep -q '^| `run` of /bin/true (wall) | ms ↓ | 20.0 (10.0-30.0) | 5.00 (5.00-30.0) | 0.50 |$' "$OUT/r.md"
  grep -q '^<svg' "$OUT/r.svg"
}
