#!/bin/bash
# workload.sh - the cost of the agent profile on real work: tests/workload/workload.bats (Debian
# rootfs, python/node/gcc/gdb/strace/git/go) under `--profile agent` against `--profile oci`,
# alternating the order round by round.
#
#   bench/workload.sh [--rounds N] [--agentrt PATH] [--out FILE]
#
# Each round runs the suite once per profile with `bats --timing`; per case, the paired ratio
# agent/oci is the median of the per-round ratios, counted only in rounds where the case passed
# under both (a case that fails or is skipped under either is listed but not in a ratio).  The
# suite row sums the cases that passed under both.  Prints a markdown table; --out writes it.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
rounds=3 out="" rt=${AGENTRT:-$repo/agentrt}
while [ $# -gt 0 ]; do
	case "$1" in
	--rounds) rounds=$2; shift 2 ;;
	--agentrt) rt=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	-h | --help) sed -n '3,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "workload.sh: unknown argument \`$1'" >&2; exit 2 ;;
	esac
done
[ "$(id -u)" = 0 ] || { echo "workload.sh: must run as root" >&2; exit 1; }
[ -x "$rt" ] || { echo "workload.sh: no agentrt at $rt" >&2; exit 1; }
[ "$rounds" -ge 1 ] && [ "$rounds" -le 50 ] || { echo "workload.sh: --rounds 1..50" >&2; exit 2; }

work=$(mktemp -d /tmp/agentrt-bench-workload.XXXXXX)
trap 'rm -rf "$work"' EXIT
"$repo/tests/workload/build-rootfs.sh" >/dev/null

# one_run PROFILE ROUND: TAP with timings to $work/PROFILE.ROUND.tap
one_run() {
	local t0 t1
	t0=$(date +%s.%N)
	WORKLOAD_PROFILE=$1 AGENTRT=$rt timeout 1800 bats --timing --tap \
		"$repo/tests/workload/workload.bats" >"$work/$1.$2.tap" 2>&1 || true
	t1=$(date +%s.%N)
	echo "$1 $2 $(echo "$t1 - $t0" | bc)" >>"$work/wall"
	echo "# round $2 $1: $(grep -c '^ok' "$work/$1.$2.tap") ok, $(grep -c '^not ok' "$work/$1.$2.tap") not ok" >&2
}

for ((r = 1; r <= rounds; r++)); do
	if ((r % 2)); then one_run agent "$r"; one_run oci "$r"; else one_run oci "$r"; one_run agent "$r"; fi
done

# name<TAB>profile<TAB>round<TAB>ms for the cases that passed (and were not skipped)
for f in "$work"/*.tap; do
	b=$(basename "$f" .tap)
	sed -nE '/# skip/d; s/^ok [0-9]+ (.*) in ([0-9]+)ms$/\1\t\2/p' "$f" |
		awk -F'\t' -v p="${b%.*}" -v r="${b#*.}" '{print $1 "\t" p "\t" r "\t" $2}'
done >"$work/times.tsv"

python3 - "$work/times.tsv" "$work/wall" "$rounds" >"$work/table.md" <<'EOF'
import statistics as st, sys, collections
times = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    name, prof, rnd, ms = line.rstrip("\n").split("\t")
    times[name][(prof, rnd)] = int(ms)
walls = collections.defaultdict(list)
for line in open(sys.argv[2]):
    prof, rnd, secs = line.split()
    walls[prof].append(float(secs))
rounds = int(sys.argv[3])
print(f"| case | agent ms (median) | oci ms (median) | agent/oci (paired median) | rounds |")
print("|---|---:|---:|---:|---:|")
tot = collections.defaultdict(float)
for name in sorted(times):
    t = times[name]
    pairs = [(t[("agent", str(r))], t[("oci", str(r))]) for r in range(1, rounds + 1)
             if ("agent", str(r)) in t and ("oci", str(r)) in t]
    if not pairs:
        print(f"| {name} | {'-' if not any(k[0]=='agent' for k in t) else st.median(v for k,v in t.items() if k[0]=='agent')} | "
              f"{'-' if not any(k[0]=='oci' for k in t) else st.median(v for k,v in t.items() if k[0]=='oci')} | "
              "not passed under both | 0 |")
        continue
    a = st.median(p[0] for p in pairs); o = st.median(p[1] for p in pairs)
    ratio = st.median(p[0] / p[1] for p in pairs if p[1] > 0)
    print(f"| {name} | {a:.0f} | {o:.0f} | {ratio:.2f} | {len(pairs)} |")
    for p in pairs:
        tot["agent"] += p[0]; tot["oci"] += p[1]
if tot["oci"]:
    print(f"| **cases passed under both, summed** | {tot['agent']/rounds:.0f} | {tot['oci']/rounds:.0f} | "
          f"{tot['agent']/tot['oci']:.2f} | {rounds} |")
print()
print(f"whole suite wall time (s, median of {rounds}): agent {st.median(walls['agent']):.1f}, "
      f"oci {st.median(walls['oci']):.1f} (includes cases that failed or were skipped under one profile)")
EOF
cat "$work/table.md"
[ -z "$out" ] || cp "$work/table.md" "$out"
