#!/bin/bash
# density.sh - the `density` row of bench/: N idle agent containers side by side and the
# memory of each one's monitor (agentrt-monitor: audit trail, file records, DNS resolver),
# read from /proc/PID/smaps_rollup (target: PSS <= 512 KiB a container).
#
#   bench/density.sh [--containers N] [--agentrt PATH] [--out FILE]
#
# Each container runs `sleep 1000` under a profile extending `agent` with bench/run.sh's
# 20-entry egress allowlist, a bind-mounted /workspace (so an overlay workspace) and a cgroup of
# its own; all N are created and started first, then, after two seconds of idling, every
# monitor's Pss, Pss_Anon and Rss are read. Prints the median, the maximum and the sum; with
# --out, appends a markdown row. PSS splits a page shared by k processes k ways, so the
# monitors share agentrt's and libc's text; Pss_Anon is what one more idle container adds.
# Everything it creates (root, bundle, data directory, cgroups) is removed at the end.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
n=20 out="" rt=${AGENTRT:-$repo/agentrt}
while [ $# -gt 0 ]; do
  case "$1" in
    --containers) n=$2; shift 2 ;;
    --agentrt) rt=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '3,7p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "density.sh: unknown argument \`$1'" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" = 0 ] || { echo "density.sh: must run as root" >&2; exit 1; }
[ -x "$rt" ] || { echo "density.sh: no agentrt at $rt" >&2; exit 1; }
rt=$(readlink -f "$rt")
[ "$n" -ge 1 ] && [ "$n" -le 200 ] || { echo "density.sh: --containers 1..200" >&2; exit 2; }
command -v busybox >/dev/null || { echo "density.sh: busybox is required" >&2; exit 1; }
command -v jq >/dev/null || { echo "density.sh: jq is required" >&2; exit 1; }

work=$(mktemp -d /tmp/agentrt-bench-density.XXXXXX)
root=/run/agentrt-bench-density-$$
export AGENTRT_DATA_DIR=$root-data AGENTRT_CONFIG=$root-data.conf
cg=agentrt-bench-density-$$
cleanup() {
  local c
  for c in $(ls "$root" 2>/dev/null | head -250); do
    timeout 20 "$rt" --root "$root" delete --force "$c" >/dev/null 2>&1 || true
  done
  rm -rf "$root" "$work" "$AGENTRT_DATA_DIR"
  for c in /sys/fs/cgroup/*/"$cg" /sys/fs/cgroup/"$cg"; do
    [ -d "$c" ] && rmdir "$c"/*/ "$c" 2>/dev/null || true
  done
}
trap cleanup EXIT INT TERM

b=$work/bundle
mkdir -p "$b/rootfs/bin" "$b/rootfs/proc" "$b/rootfs/dev" "$b/rootfs/sys" "$b/rootfs/tmp" \
  "$b/rootfs/workspace" "$work/ws"
cp "$(command -v busybox)" "$b/rootfs/bin/busybox"
ln -s busybox "$b/rootfs/bin/sleep"
(cd "$b" && "$rt" spec >/dev/null)
jq --arg ws "$work/ws" '.process.args = ["/bin/sleep", "1000"] | .process.terminal = false |
  .mounts += [{"destination": "/workspace", "type": "bind", "source": $ws, "options": ["rbind", "rw"]}]' \
  "$b/config.json" >"$work/c.json"
mv "$work/c.json" "$b/config.json"
cat >"$work/profile.json" <<'EOF'
{
  "name": "bench-density",
  "extends": "agent",
  "egress": {"default": "deny", "allow": ["192.0.2.1/32", "192.0.2.2/32", "192.0.2.3/32",
    "192.0.2.4/32", "192.0.2.5/32", "198.51.100.0/28", "198.51.100.16/28", "198.51.100.32/28",
    "198.51.100.48/28", "203.0.113.1/32", "203.0.113.2/32", "203.0.113.3/32", "203.0.113.4/32",
    "203.0.113.64/26", "2001:db8::/64", "2001:db8:1::/64", "pypi.org", "files.pythonhosted.org",
    "github.com", "*.githubusercontent.com"]}
}
EOF

for i in $(seq 1 "$n"); do
  jq --arg cg "/$cg/d$i" '.linux.cgroupsPath = $cg' "$b/config.json" >"$work/c.json"
  mv "$work/c.json" "$b/config.json"
  timeout 60 "$rt" --root "$root" --profile "$work/profile.json" create --bundle "$b" "d$i" \
    </dev/null >/dev/null 2>"$work/err" || { echo "density.sh: create d$i: $(cat "$work/err")" >&2; exit 1; }
  timeout 60 "$rt" --root "$root" start "d$i" >/dev/null 2>"$work/err" ||
    { echo "density.sh: start d$i: $(cat "$work/err")" >&2; exit 1; }
done
sleep 2 # idle: the monitors give back their set-up memory a second after ready

: >"$work/kib"
for i in $(seq 1 "$n"); do
  pid=$(cut -d' ' -f1 "$root/d$i/monitor.pid")
  awk '/^Pss:/ {p = $2} /^Pss_Anon:/ {a = $2} /^Rss:/ {r = $2} END {print p, a, r}' \
    "/proc/$pid/smaps_rollup" >>"$work/kib"
done
read -r med_p max_p sum_p med_a med_r <<<"$(awk '{p[NR] = $1; a[NR] = $2; r[NR] = $3; s += $1}
  function med(v, n,  i, j, t) {
    for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
    return (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }
  END { m = 0; for (i = 1; i <= NR; i++) if (p[i] > m) m = p[i]
    printf "%d %d %d %d %d", med(p, NR), m, s, med(a, NR), med(r, NR) }' "$work/kib")"
printf 'density: %d idle agent containers: monitor PSS median %d KiB (max %d, sum %d), Pss_Anon median %d KiB, RSS median %d KiB\n' \
  "$n" "$med_p" "$max_p" "$sum_p" "$med_a" "$med_r"
if [ -n "$out" ]; then
  printf '| density: monitor PSS per idle agent container (%d containers) | %d KiB (max %d) | Pss_Anon %d KiB, RSS %d KiB; %d KiB for all %d (target <= 512 KiB each) |\n' \
    "$n" "$med_p" "$max_p" "$med_a" "$med_r" "$sum_p" "$n" >>"$out"
fi
