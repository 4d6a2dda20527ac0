#!/bin/bash
# egress.sh - the `egress` row of bench/: what an egress policy costs `agentrt create`.
#
#   bench/egress.sh [--rounds N] [--agentrt PATH] [--out FILE]
#
# Times `agentrt create` (then deletes, untimed) of a busybox bundle in its own new network
# namespace, four ways, interleaved round by round (order rotated): the oci profile (no
# policy, no monitor), the agent profile with an empty allowlist (the "plain" agent create),
# and profiles extending agent with 20 and with 200 allow entries (CIDRs with and without
# ports, IPv6, domains) plus 4 ingress ports.  Prints median and p90 per mode and each
# policy's median over the empty one; with --out, appends markdown rows.
# Everything it creates (root, bundle, cgroups) is removed at the end.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
rounds=30 out="" rt=${AGENTRT:-$repo/agentrt}
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --agentrt) rt=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '3,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "egress.sh: unknown argument \`$1'" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" = 0 ] || { echo "egress.sh: must run as root" >&2; exit 1; }
[ -x "$rt" ] || { echo "egress.sh: no agentrt at $rt" >&2; exit 1; }
[ "$rounds" -ge 1 ] && [ "$rounds" -le 1000 ] || { echo "egress.sh: --rounds 1..1000" >&2; exit 2; }
command -v busybox >/dev/null && command -v jq >/dev/null ||
  { echo "egress.sh: busybox and jq are required" >&2; exit 1; }

work=$(mktemp -d /tmp/agentrt-bench-egress.XXXXXX)
root=/run/agentrt-bench-egress-$$
cg=agentrt-bench-egress-$$
cleanup() {
  local c
  for c in $(ls "$root" 2>/dev/null | head -100); do
    timeout 20 "$rt" --root "$root" delete --force "$c" >/dev/null 2>&1 || true
    timeout 20 "$rt" --root "$root" audit --purge "$c" >/dev/null 2>&1 || true
  done
  rm -rf "$root" "$work"
  for c in /sys/fs/cgroup/*/"$cg" /sys/fs/cgroup/"$cg"; do
    [ -d "$c" ] && rmdir "$c"/*/ "$c" 2>/dev/null || true
  done
}
trap cleanup EXIT INT TERM

mkdir -p "$work/bundle/rootfs/bin" "$work/bundle/rootfs/proc" "$work/bundle/rootfs/dev" \
  "$work/bundle/rootfs/sys" "$work/bundle/rootfs/workspace" "$work/bundle/rootfs/tmp"
cp "$(command -v busybox)" "$work/bundle/rootfs/bin/busybox"
ln -s busybox "$work/bundle/rootfs/bin/sleep"
(cd "$work/bundle" && "$rt" spec >/dev/null)

# entries N: N allow entries of every form (TEST-NET addresses and .test names only)
entries() {
  local n=$1 i
  for ((i = 0; i < n; i++)); do
    case $((i % 5)) in
      0) echo "198.51.100.$((i % 250 + 1))" ;;
      1) echo "203.0.113.$((i % 250 + 1)):$((1000 + i))/tcp" ;;
      2) echo "[2001:db8:$((i + 1))::1]:443" ;;
      3) echo "host$i.bench.test" ;;
      4) echo "*.w$i.bench.test:443" ;;
    esac
  done | jq -R . | jq -s .
}
for n in 0 20 200; do
  jq -n --argjson a "$(entries "$n")" --arg n "$n" '{name: ("egress-" + $n), extends: "agent",
    egress: {default: "deny", allow: $a, dns: {upstream: ["192.0.2.53"]}},
    ingress: {allow: ["8080/tcp", "9000-9100/udp", "443", "22/tcp"]}}' >"$work/p$n.json"
done

ms_now() { date +%s%N; }
one() { # MODE ROUND
  local prof id=eg-$1-$2 t0 t1
  case $1 in oci) prof=oci ;; *) prof=$work/p$1.json ;; esac
  jq --arg cg "/$cg/$id" '.process.args = ["/bin/sleep", "30"] | .process.terminal = false |
    .linux.cgroupsPath = $cg' "$work/bundle/config.json" >"$work/bundle/c.json"
  mv "$work/bundle/c.json" "$work/bundle/config.json"
  t0=$(ms_now)
  timeout 60 "$rt" --root "$root" --profile "$prof" create --bundle "$work/bundle" "$id" \
    </dev/null >/dev/null 2>"$work/err" || { echo "egress.sh: create ($1) failed: $(cat "$work/err")" >&2; exit 1; }
  t1=$(ms_now)
  echo $(((t1 - t0) / 1000)) >>"$work/$1.us"
  timeout 20 "$rt" --root "$root" delete --force "$id" >/dev/null 2>&1 || true
  timeout 20 "$rt" --root "$root" audit --purge "$id" >/dev/null 2>&1 || true
}

modes=(oci 0 20 200)
for m in "${modes[@]}"; do one "$m" warm; done # seccomp cache, page cache
for m in "${modes[@]}"; do : >"$work/$m.us"; done
for i in $(seq 1 "$rounds"); do
  for k in 0 1 2 3; do one "${modes[$(((i + k) % 4))]}" "$i"; done
done

stat() { # FILE -> "median p90" in ms
  sort -n "$1" | awk '{v[NR] = $1} END {
    m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    p = v[int(NR * 0.9 + 0.999)]
    printf "%.2f %.2f", m / 1000, p / 1000 }'
}
declare -A med p90
for m in "${modes[@]}"; do read -r "med[$m]" "p90[$m]" <<<"$(stat "$work/$m.us")"; done
label() { case $1 in oci) echo "oci (no policy)" ;; 0) echo "agent, 0 entries" ;; *) echo "agent, $1 entries" ;; esac; }
for m in "${modes[@]}"; do
  extra=$(awk -v a="${med[$m]}" -v b="${med[0]}" 'BEGIN { printf "%+.2f ms vs 0 entries", a - b }')
  printf 'egress: create, %s: %s ms (p90 %s), %s, %d rounds\n' "$(label "$m")" "${med[$m]}" "${p90[$m]}" "$extra" "$rounds"
  [ -z "$out" ] || printf '| egress: `create`, %s | %s ms | p90 %s ms, %s | %d rounds |\n' \
    "$(label "$m")" "${med[$m]}" "${p90[$m]}" "$extra" "$rounds" >>"$out"
done
