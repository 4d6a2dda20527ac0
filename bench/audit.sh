#!/bin/bash
# audit.sh - the `audit` rows of bench/: `agentrt run` (agent profile, busybox /bin/true)
# with the audit trail on vs off, alternating, N rounds each (target: on within 10% of off);
# the same for an exec-heavy container (1,000 short programs: /bin/true from a shell loop);
# and the per-call cost of an allowed and of a denied system call inside the container
# (with the trail on, denied calls go through the monitor's seccomp listener).
#
#   bench/audit.sh [--rounds N] [--quick] [--agentrt PATH] [--out FILE]
#
# --quick (bench/run.sh --quick, the suite's bench-smoke): every row runs, each about a tenth as
# long (100 programs, a tenth of the allowed calls and 200 denied ones, one run of 1,000 host
# files): it proves the rows work, its numbers are not the table's.
# "off" is the agent profile with "audit": {"enabled": false} (a profile file extending it).
# The order alternates round by round (on-off, off-on, ...) so neither mode always runs first.
# Prints median and p90 wall time per mode, the ratio of the medians and the paired ratio (the
# median of per-round on/off ratios, as the main table's ratios are); with --out, appends a
# markdown row.
# Everything it creates (root, bundle, cgroups, trails) is removed at the end.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
rounds=30 out="" rt=${AGENTRT:-$repo/agentrt} quick=0
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    --agentrt) rt=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '3,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
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
cc -O2 -static -o "$work/bundle/rootfs/bin/syscall-loop" "$here/syscall-loop.c"
ln -s busybox "$work/bundle/rootfs/bin/true"
ln -s busybox "$work/bundle/rootfs/bin/sh"
(cd "$work/bundle" && "$rt" spec >/dev/null)
printf '{"name": "agent-noaudit", "extends": "agent", "audit": {"enabled": false}}\n' >"$work/noaudit.json"

ms_now() { date +%s%N; }
# one MODE ROUND [ROW ARGS_JSON]: one timed `run`; its wall time goes to ROW-MODE.us and
# the container's stdout to ROW-MODE.out
one() {
  local prof=agent id=audit-$1-$2 row=${3:-run} args=${4:-'["/bin/true"]'} t0 t1
  [ "$1" = off ] && prof=$work/noaudit.json
  jq --arg cg "/$cg/$id" --argjson a "$args" '.process.args = $a | .process.terminal = false |
    .linux.cgroupsPath = $cg' "$work/bundle/config.json" >"$work/bundle/c.json"
  mv "$work/bundle/c.json" "$work/bundle/config.json"
  t0=$(ms_now)
  timeout 120 "$rt" --root "$root" --profile "$prof" run --bundle "$work/bundle" "$id" \
    </dev/null >>"$work/$row-$1.out" 2>&1 || { echo "audit.sh: run ($row, $1) failed" >&2; exit 1; }
  t1=$(ms_now)
  echo $(((t1 - t0) / 1000)) >>"$work/$row-$1.us"
  "$rt" --root "$root" audit --purge "$id" >/dev/null 2>&1 || true
}

# alternate ROW ROUNDS [ARGS_JSON]: on/off pairs, the order flipped every round
alternate() {
  local i
  one on "0-$1" "$1-warm" "${3:-}"; one off "0-$1" "$1-warm" "${3:-}" # seccomp cache, page cache
  : >"$work/$1-on.us"; : >"$work/$1-off.us"
  for i in $(seq 1 "$2"); do
    if [ $((i % 2)) = 1 ]; then
      one on "$i-$1" "$1" "${3:-}"
      one off "$i-$1" "$1" "${3:-}"
    else
      one off "$i-$1" "$1" "${3:-}"
      one on "$i-$1" "$1" "${3:-}"
    fi
  done
}

# the sizes of the rows (--quick: a tenth)
# (denied: within the monitor's budget of refused calls, 1,000 at once, then 1,000 a second:
# past it the row would time the budget, not the listener's round trip; bench/README.md)
programs=1000 allowed=200000 denied=900 files=10000 churn_runs=3
[ "$quick" = 0 ] || programs=100 allowed=20000 denied=200 files=1000 churn_runs=1
alternate run "$rounds"
execs_rounds=$(((rounds + 2) / 3))
alternate execs "$execs_rounds" \
  '["/bin/sh", "-c", "i=0; while [ $i -lt '"$programs"' ]; do /bin/true; i=$((i + 1)); done"]'
# the syscall costs: $allowed allowed and $denied denied calls per run (200,000 and 900), 3 runs a mode
for i in 1 2 3; do
  for mode in on off; do
    one "$mode" "$i-sys" "sys-allowed" '["/bin/syscall-loop", "allowed", "'"$allowed"'"]'
    one "$mode" "$i-sys" "sys-denied" '["/bin/syscall-loop", "denied", "'"$denied"'"]'
  done
done

# `agentrt exec` of /bin/true into a running container, trail on / off: with the trail on
# each exec'd process loads the notify variant of the profile's filter and hands its
# listener to the monitor (monitor.sock), which answers before the program runs.  "plain":
# the trail on, but the container's seccomp-notify.bpf removed, so its execs load the plain
# errno filter as before refused-syscall records of exec: on / plain is the listener's cost
for mode in on off plain; do
  prof=agent
  [ "$mode" = off ] && prof=$work/noaudit.json
  jq --arg cg "/$cg/exec-$mode" '.process.args = ["/bin/sh", "-c", "sleep 1000"] |
    .process.terminal = false | .linux.cgroupsPath = $cg' "$work/bundle/config.json" >"$work/bundle/c.json"
  mv "$work/bundle/c.json" "$work/bundle/config.json"
  ln -sf busybox "$work/bundle/rootfs/bin/sleep"
  timeout 60 "$rt" --root "$root" --profile "$prof" run -d --bundle "$work/bundle" "exec-$mode" \
    </dev/null >/dev/null 2>&1 || { echo "audit.sh: run -d exec-$mode failed" >&2; exit 1; }
  : >"$work/exec-$mode.us"
done
rm -f "$root/exec-plain/seccomp-notify.bpf"
exec_rounds=$((rounds * 3))
for i in $(seq 0 "$exec_rounds"); do
  for mode in $(case $((i % 3)) in 0) echo on off plain ;; 1) echo off plain on ;; *) echo plain on off ;; esac); do
    t0=$(ms_now)
    timeout 30 "$rt" --root "$root" exec "exec-$mode" /bin/true </dev/null >/dev/null 2>&1 ||
      { echo "audit.sh: exec ($mode) failed" >&2; exit 1; }
    t1=$(ms_now)
    [ "$i" = 0 ] || echo $(((t1 - t0) / 1000)) >>"$work/exec-$mode.us" # round 0 warms up
  done
done
cp "$work/exec-on.us" "$work/execl-on.us"
cp "$work/exec-plain.us" "$work/execl-off.us"
for mode in on off plain; do
  timeout 20 "$rt" --root "$root" delete --force "exec-$mode" >/dev/null 2>&1 || true
  "$rt" --root "$root" audit --purge "exec-$mode" >/dev/null 2>&1 || true
done

# Idle monitors while the host writes files on the filesystem of their workspaces' upper
# layers (the data directory's): N containers with an overlay workspace (a host directory
# bound at /workspace) sleep while the host creates 10,000 files (a tenth renamed) in two
# directories of that filesystem; the CPU ticks the N monitors used meanwhile, from
# /proc/PID/stat.  Their fanotify mark is on the whole filesystem; each ignores a directory
# outside its tree in the kernel after its first event there.  The agent profile's
# workspace.size puts each upper layer in an ext4 image of its own, whose filesystem mark
# sees nothing of the host's: these containers use a profile without it (a plain upper, as
# on a host without loop devices), the case the ignore marks are for.
idle_n=4
printf '{"name": "agent-plain-upper", "extends": "agent", "workspace": {"mode": "overlay", "size": "0"}}\n' \
  >"$work/plain-upper.json"
mkdir -p "$work/host" "$AGENTRT_DATA_DIR/churn/a/b"
jq --arg h "$work/host" '.process.args = ["/bin/sh", "-c", "sleep 1000"] | .process.terminal = false |
  .mounts += [{"destination": "/workspace", "type": "bind", "source": $h, "options": ["rbind", "rw"]}]' \
  "$work/bundle/config.json" >"$work/bundle/c.json"
mv "$work/bundle/c.json" "$work/bundle/config.json"
mons=""
for i in $(seq 1 "$idle_n"); do
  jq --arg cg "/$cg/idle-$i" '.linux.cgroupsPath = $cg' "$work/bundle/config.json" >"$work/bundle/c.json"
  mv "$work/bundle/c.json" "$work/bundle/config.json"
  timeout 60 "$rt" --root "$root" --profile "$work/plain-upper.json" run -d --bundle "$work/bundle" "idle-$i" \
    </dev/null >/dev/null 2>&1 || { echo "audit.sh: run -d idle-$i failed" >&2; exit 1; }
  mons="$mons $(cut -d' ' -f1 "$root/idle-$i/monitor.pid")"
done
ticks() { local t=0 p; for p in $mons; do t=$((t + $(awk '{ print $14 + $15 }' /proc/"$p"/stat))); done; echo $t; }
churn() {
  python3 - "$AGENTRT_DATA_DIR/churn" "$1" "$files" <<'PY'
import os, sys
base, tag, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
for i in range(n):
    d = os.path.join(base, "a", "b") if i % 2 else base
    p = os.path.join(d, "%s-%d" % (tag, i))
    with open(p, "w") as f:
        f.write("x")
    if i % 10 == 0:
        os.rename(p, p + ".moved")
PY
}
t_idle0=$(ticks); sleep 2; t_idle1=$(ticks)
idle_ticks=() churn_ms=()
for i in $(seq 1 "$churn_runs"); do
  t0=$(ticks); c0=$(ms_now)
  churn "r$i"
  c1=$(ms_now); t1=$(ticks)
  idle_ticks+=($((t1 - t0))) churn_ms+=($(((c1 - c0) / 1000000)))
done
for i in $(seq 1 "$idle_n"); do
  timeout 20 "$rt" --root "$root" delete --force "idle-$i" >/dev/null 2>&1 || true
  "$rt" --root "$root" workspace "idle-$i" purge >/dev/null 2>&1 || true
done
med() { printf '%s\n' "$@" | sort -n | awk '{v[NR] = $1} END { print v[int((NR + 1) / 2)] }'; }
printf 'audit: %d idle monitors while the host writes %d files on their upper layers'"'"' filesystem: %s CPU ticks in all (runs: %s; %s ms of writing each), %s ticks in 2 s without writes\n' \
  "$idle_n" "$files" "$(med "${idle_ticks[@]}")" "${idle_ticks[*]}" "$(med "${churn_ms[@]}")" "$((t_idle1 - t_idle0))"
if [ -n "$out" ]; then
  printf '| audit: %d idle monitors, host writes %d files on their filesystem | %s CPU ticks (median of %d; %s ms of writing) | %s ticks in 2 s idle | %d runs |\n' \
    "$idle_n" "$files" "$(med "${idle_ticks[@]}")" "$churn_runs" "$(med "${churn_ms[@]}")" "$((t_idle1 - t_idle0))" "$churn_runs" >>"$out"
fi

stat() { # FILE -> "median p90" in ms
  sort -n "$1" | awk '{v[NR] = $1} END {
    m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    p = v[int(NR * 0.9 + 0.999)]
    printf "%.2f %.2f", m / 1000, p / 1000 }'
}
# row NAME TITLE: medians, p90s, the ratio of medians and the paired ratio of NAME-{on,off}.us
row() {
  local on_m on_p off_m off_p ratio paired n
  read -r on_m on_p <<<"$(stat "$work/$1-on.us")"
  read -r off_m off_p <<<"$(stat "$work/$1-off.us")"
  ratio=$(awk -v a="$on_m" -v b="$off_m" 'BEGIN { printf "%.3f", a / b }')
  # paired: round i's on sample over round i's off sample, then the median of those
  paired=$(paste "$work/$1-on.us" "$work/$1-off.us" | awk '{ printf "%.6f\n", $1 / $2 }' | sort -n |
    awk '{v[NR] = $1} END { printf "%.3f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
  n=$(wc -l <"$work/$1-on.us")
  printf 'audit: %s with the trail on %s ms (p90 %s), off %s ms (p90 %s), ratio of medians %s, paired ratio %s, %d rounds\n' \
    "$2" "$on_m" "$on_p" "$off_m" "$off_p" "$ratio" "$paired" "$n"
  if [ -n "$out" ]; then
    printf '| audit: %s, trail on / off | %s ms / %s ms | paired ratio %s, ratio of medians %s (target <= 1.10) | %d rounds |\n' \
      "$2" "$on_m" "$off_m" "$paired" "$ratio" "$n" >>"$out"
  fi
}
row run '`run` of /bin/true'
row execs "\`run\` of $programs short programs (exec-heavy)"
row exec '`exec` of /bin/true into a running container (per exec)'
row execl '`exec` of /bin/true with its refused calls recorded (on) / not (plain filter, off), both with the trail'
# syscall-loop printed ns per call; a denied call that succeeded failed its run above
nsmed() { sort -n "$work/$1.out" | awk '{v[NR] = $1} END { print v[int((NR + 1) / 2)] }'; }
printf 'audit: per call inside the container, median of 3 runs: allowed (getppid) %s ns on / %s ns off; denied (unshare) %s ns on (seccomp listener in the monitor) / %s ns off (errno filter)\n' \
  "$(nsmed sys-allowed-on)" "$(nsmed sys-allowed-off)" "$(nsmed sys-denied-on)" "$(nsmed sys-denied-off)"
if [ -n "$out" ]; then
  printf '| audit: one system call inside, trail on / off | allowed %s / %s ns, denied %s / %s ns | allowed calls never reach the listener | 3 runs |\n' \
    "$(nsmed sys-allowed-on)" "$(nsmed sys-allowed-off)" "$(nsmed sys-denied-on)" "$(nsmed sys-denied-off)" >>"$out"
fi
