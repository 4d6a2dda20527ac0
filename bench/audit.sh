#!/bin/bash
# audit.sh - the `audit` row of bench/: `agentrt run` (agent profile, busybox /bin/true)
# with the audit trail on vs off, alternating, N rounds each (target: on within 10% of off).
#
#   bench/audit.sh [--rounds N] [--agentrt PATH] [--out FILE]
#
# "off" is the agent profile with "audit": {"enabled": false} (a profile file extending it).
# The order alternates round by round (on-off, off-on, ...) so neither mode always runs first.
# Prints median and p90 wall time per mode, the ratio of the medians and the paired ratio (the
# median of per-round on/off ratios, as the main table's ratios are); with --out, appends a
# markdown row.
# Everything it creates (root, bundle, cgroups, trails) is removed at the end.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
rounds=30 out="" rt=${AGENTRT:-$repo/agentrt}
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --agentrt) rt=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '3,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "audit.sh: unknown argument \`$1'" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" = 0 ] || { echo "audit.sh: must run as root" >&2; exit 1; }
[ -x "$rt" ] || { echo "audit.sh: no agentrt at $rt" >&2; exit 1; }
[ "$rounds" -ge 1 ] && [ "$rounds" -le 1000 ] || { echo "audit.sh: --rounds 1..1000" >&2; exit 2; }
command -v busybox >/dev/null || { echo "audit.sh: busybox is required" >&2; exit 1; }

work=$(mktemp -d /tmp/agentrt-bench-audit.XXXXXX)
root=/run/agentrt-bench-audit-$$
export AGENTRT_DATA_DIR=$root-data AGENTRT_CONFIG=$root-data.conf
cg=agentrt-bench-audit-$$
cleanup() {
  local c
  for c in $(ls "$root" 2>/dev/null | head -100); do
    timeout 20 "$rt" --root "$root" delete --force "$c" >/dev/null 2>&1 || true
  done
  rm -rf "$root" "$work" "$AGENTRT_DATA_DIR"
  for c in /sys/fs/cgroup/*/"$cg" /sys/fs/cgroup/"$cg"; do
    [ -d "$c" ] && rmdir "$c"/*/ "$c" 2>/dev/null || true
  done
}
trap cleanup EXIT INT TERM

mkdir -p "$work/bundle/rootfs/bin" "$work/bundle/rootfs/proc" "$work/bundle/rootfs/dev" \
  "$work/bundle/rootfs/sys" "$work/bundle/rootfs/workspace" "$work/bundle/rootfs/tmp"
cp "$(command -v busybox)" "$work/bundle/rootfs/bin/busybox"
ln -s busybox "$work/bundle/rootfs/bin/true"
ln -s busybox "$work/bundle/rootfs/bin/sh"
(cd "$work/bundle" && "$rt" spec >/dev/null)
printf '{"name": "agent-noaudit", "extends": "agent", "audit": {"enabled": false}}\n' >"$work/noaudit.json"

ms_now() { date +%s%N; }
one() { # MODE ROUND
  local prof=agent id=audit-$1-$2 t0 t1
  [ "$1" = off ] && prof=$work/noaudit.json
  jq --arg cg "/$cg/$id" '.process.args = ["/bin/true"] | .process.terminal = false |
    .linux.cgroupsPath = $cg' "$work/bundle/config.json" >"$work/bundle/c.json"
  mv "$work/bundle/c.json" "$work/bundle/config.json"
  t0=$(ms_now)
  timeout 60 "$rt" --root "$root" --profile "$prof" run --bundle "$work/bundle" "$id" \
    </dev/null >/dev/null 2>&1 || { echo "audit.sh: run ($1) failed" >&2; exit 1; }
  t1=$(ms_now)
  echo $(((t1 - t0) / 1000)) >>"$work/$1.us"
  "$rt" --root "$root" audit --purge "$id" >/dev/null 2>&1 || true
}

one on 0; one off 0 # warm-up (seccomp cache, page cache)
: >"$work/on.us"; : >"$work/off.us"
for i in $(seq 1 "$rounds"); do
  if [ $((i % 2)) = 1 ]; then
    one on "$i"
    one off "$i"
  else
    one off "$i"
    one on "$i"
  fi
done

stat() { # FILE -> "median p90" in ms
  sort -n "$1" | awk '{v[NR] = $1} END {
    m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    p = v[int(NR * 0.9 + 0.999)]
    printf "%.2f %.2f", m / 1000, p / 1000 }'
}
read -r on_m on_p <<<"$(stat "$work/on.us")"
read -r off_m off_p <<<"$(stat "$work/off.us")"
ratio=$(awk -v a="$on_m" -v b="$off_m" 'BEGIN { printf "%.3f", a / b }')
# paired: round i's on sample over round i's off sample, then the median of those
paired=$(paste "$work/on.us" "$work/off.us" | awk '{ printf "%.6f\n", $1 / $2 }' | sort -n |
  awk '{v[NR] = $1} END { printf "%.3f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
printf 'audit: run with the trail on %s ms (p90 %s), off %s ms (p90 %s), ratio of medians %s, paired ratio %s, %d rounds\n' \
  "$on_m" "$on_p" "$off_m" "$off_p" "$ratio" "$paired" "$rounds"
if [ -n "$out" ]; then
  printf '| audit: `run` trail on / off | %s ms / %s ms | paired ratio %s, ratio of medians %s (target <= 1.10) | %d rounds |\n' \
    "$on_m" "$off_m" "$paired" "$ratio" "$rounds" >>"$out"
fi
