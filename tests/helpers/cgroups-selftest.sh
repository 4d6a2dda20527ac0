#!/bin/bash
# cgroups-selftest.sh - the cgroup module on a REAL host, through
# tests/helpers/cgroup-driver: limits land in the files, a memory limit
# OOM-kills, a pids limit stops a fork loop, a cpu quota throttles, freeze
# stops a process and thaw resumes it, kill empties the cgroup, the device
# rules (v1 devices.*, v2 eBPF) deny what is not allowed, update changes live
# values, stats are plausible, destroy leaves nothing.
#
# usage: cgroups-selftest.sh [v1|v2]   (default: whatever the host has)
#   env CGROUP_DRIVER (default build/tests/cgroup-driver)
# Prints "ok - ..." / "not ok - ..." lines; exits 1 if any failed.
# Creates only cgroups named agentrt-selftest-<pid>-* and removes them.
set -u
cd "$(dirname "$0")/../.." || exit 1
D=$(realpath "${CGROUP_DRIVER:-build/tests/cgroup-driver}")
WANT=${1:-auto}
PFX=agentrt-selftest-$$
CG=/sys/fs/cgroup
T=$(mktemp -d /tmp/agentrt-cgself.XXXXXX)
FAILED=0
IDS=()

ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; FAILED=$((FAILED + 1)); }
check() { local d=$1; shift; if "$@"; then ok "$d"; else notok "$d"; fi; }
jqe() { jq -e "$1" <<<"$2" >/dev/null; }
drv() { timeout 120 "$D" --id "$1" "${@:2}"; }

cleanup() {
  for id in "${IDS[@]}"; do "$D" --id "$id" destroy >/dev/null 2>&1; done
  rm -rf "$T"
}
trap cleanup EXIT

if [ ! -x "$D" ]; then notok "cgroup driver built ($D)"; exit 1; fi
if [ "$(stat -f -c %T $CG)" = cgroup2fs ]; then V=v2; else V=v1; fi
if [ "$WANT" != auto ] && [ "$WANT" != "$V" ]; then
  notok "host has cgroup $WANT (it has $V)"; exit 1
fi
echo "# cgroup selftest on $V, driver $D"

# dir CTRL ID -> the cgroup directory of a controller
dir() { if [ $V = v2 ]; then echo "$CG/agentrt/$2"; else echo "$CG/$1/agentrt/$2"; fi; }
val() { tr -d '\n' < "$(dir "$1" "$2")/$3" 2>/dev/null; }
is() { [ "$(val "$1" "$2" "$3")" = "$4" ] || { echo "# $3 = '$(val "$1" "$2" "$3")', want '$4'"; false; }; }
new() { local id=$PFX-$1; shift; IDS+=("$id"); drv "$id" create "$@" >/dev/null; }

t_limits() {
  local id=$PFX-limits
  new limits --memory 64M --memory-swap 64M --pids 50 --cpu-quota 50000 --cpu-period 100000 \
    --cpu-shares 512 --cpus 0 --mems 0 || { notok "create with limits"; return; }
  if [ $V = v1 ]; then
    check "memory.limit_in_bytes" is memory $id memory.limit_in_bytes 67108864
    check "memory.memsw.limit_in_bytes (memory+swap)" is memory $id memory.memsw.limit_in_bytes 67108864
    check "pids.max" is pids $id pids.max 50
    check "cpu.cfs_quota_us / cfs_period_us" eval 'is cpu $id cpu.cfs_quota_us 50000 && is cpu $id cpu.cfs_period_us 100000'
    check "cpu.shares" is cpu $id cpu.shares 512
  else
    check "memory.max" is memory $id memory.max 67108864
    check "memory.swap.max = swap - limit" is memory $id memory.swap.max 0
    check "pids.max" is pids $id pids.max 50
    check "cpu.max" is cpu $id cpu.max "50000 100000"
    check "cpu.weight from shares 512" is cpu $id cpu.weight 20
  fi
  check "cpuset.cpus / cpuset.mems" eval 'is cpuset $id cpuset.cpus 0 && is cpuset $id cpuset.mems 0'
  drv $id update --pids 20 --memory 128M --memory-swap 128M --cpu-quota 20000 >/dev/null
  local mf=memory.limit_in_bytes cf=cpu.cfs_quota_us cq=20000
  [ $V = v2 ] && { mf=memory.max; cf=cpu.max; cq="20000 100000"; }
  check "update changes live values" eval 'is pids $id pids.max 20 && is memory $id $mf 134217728 && is cpu $id $cf "$cq"'
}

t_oom() {
  local id=$PFX-oom out
  new oom --memory 32M --memory-swap 32M || { notok "create oom cgroup"; return; }
  out=$(drv $id exec -- "$D" alloc-mb 256 2>&1 | grep -v '^cgroup-driver: placed')
  check "memory limit OOM-kills a child allocating past it ($out)" grep -q "signal 9" <<<"$out"
  check "oom count >= 1 ($(drv $id oom))" test "$(drv $id oom)" -ge 1
}

t_pids() {
  local id=$PFX-pids out n
  new pids --pids 8 || { notok "create pids cgroup"; return; }
  out=$(drv $id exec -- "$D" forkloop 60 2>&1 | grep '^forked')
  n=$(sed -n 's/^forked \([0-9]*\) of.*/\1/p' <<<"$out")
  check "pids limit 8 stops a fork loop of 60 ($out)" test "${n:-99}" -le 8
}

t_cpu() {
  local id=$PFX-cpu js
  new cpu --cpu-quota 10000 --cpu-period 100000 || { notok "create cpu cgroup"; return; }
  drv $id exec -- timeout 2 sh -c 'while :; do :; done' >/dev/null 2>&1
  js=$(drv $id stats)
  check "stats: cpu usage > 0 and throttled under quota 10%" \
    jqe '.cpu.usage.total > 0 and .cpu.throttling.throttledPeriods > 0' "$js"
  check "stats: memory and pids present" jqe '.memory.usage.limit > 0 and (.pids | has("current"))' "$js"
}

frozen_file() {
  if [ $V = v1 ]; then val freezer $1 freezer.state; else grep '^frozen' "$(dir x $1)/cgroup.events"; fi
}

t_freeze() {
  local id=$PFX-freeze pid s1 s2 s3 st
  new freeze || { notok "create freeze cgroup"; return; }
  pid=$(drv $id spawn -- sh -c "while :; do echo x >> $T/ticks; sleep 0.05; done")
  sleep 1
  drv $id freeze
  st=$(awk '{print $3}' /proc/$pid/stat)
  check "freeze: $(frozen_file $id) (task state $st)" eval '[ "$(frozen_file $id)" = FROZEN ] || [ "$(frozen_file $id)" = "frozen 1" ]'
  check "frozen reported by the driver" test "$(drv $id frozen)" = frozen
  s1=$(wc -c < $T/ticks); sleep 1; s2=$(wc -c < $T/ticks)
  check "a frozen process makes no progress ($s1 -> $s2)" test "$s1" = "$s2"
  drv $id thaw
  sleep 1; s3=$(wc -c < $T/ticks)
  check "thaw resumes it ($s2 -> $s3, $(frozen_file $id))" test "$s3" -gt "$s2"
}

t_kill() {
  local id=$PFX-kill i n
  new kill || { notok "create kill cgroup"; return; }
  for i in 1 2 3; do drv $id spawn -- sleep 300 >/dev/null; done
  n=$(drv $id pids | wc -l)
  drv $id kill 9
  for i in $(seq 1 100); do [ -z "$(drv $id pids)" ] && break; sleep 0.05; done
  local how="pid by pid with the cgroup frozen"
  [ $V = v2 ] && [ -e "$(dir x $id)/cgroup.kill" ] && how="cgroup.kill"
  check "kill 9 empties the cgroup ($n processes, $how)" test -z "$(drv $id pids)"
}

t_devices() {
  local id=$PFX-dev out kmsg=/dev/kmsg
  [ -c $kmsg ] || { mknod $T/kmsg c 1 11; kmsg=$T/kmsg; }
  new dev || { notok "create devices cgroup"; return; }
  out=$(drv $id exec -- "$D" open /dev/null 2>&1)
  check "devices: /dev/null allowed by default ($V)" grep -q "ok" <<<"$out"
  out=$(drv $id exec -- "$D" open $kmsg 2>&1)
  check "devices: $kmsg (c 1:11) denied: $(grep '^open' <<<"$out")" grep -q "Operation not permitted" <<<"$out"
  new dev2 --device allow:c:1:11:r || { notok "create devices cgroup with a rule"; return; }
  out=$(drv $PFX-dev2 exec -- "$D" open $kmsg 2>&1)
  check "devices: allow c 1:11 r opens it" grep -q ": ok" <<<"$out"
}

t_bad_input() {
  local out
  out=$(drv $PFX-bad1 create --cpus 0- 2>&1)
  check "malformed cpuset is a clear error ($out)" grep -q "malformed" <<<"$out"
  out=$(drv $PFX-bad2 create --memory -5 2>&1)
  check "negative memory limit is a clear error ($out)" grep -q "memory.limit" <<<"$out"
  out=$(drv $PFX-bad3 create --device allow:x:1:1 2>&1)
  check "unknown device type is a clear error ($out)" grep -q "unknown device type" <<<"$out"
  if [ $V = v1 ]; then
    out=$(drv $PFX-bad4 create --hugetlb 2MB:2M 2>&1)
    check "missing controller is named ($out)" grep -q "hugetlb controller not available" <<<"$out"
    out=$(drv $PFX-bad5 create --unified memory.high=1G 2>&1)
    check "unified on v1 is an error ($out)" grep -q "cgroup v2" <<<"$out"
  else
    out=$(drv $PFX-bad4 create --unified cgroup.procs=1 2>&1)
    check "hostile unified key rejected ($out)" grep -q "unified key" <<<"$out"
    if ! grep -qw rdma $CG/cgroup.controllers; then
      out=$(drv $PFX-bad5 create --unified rdma.max=x 2>&1)
      check "missing controller is named ($out)" grep -q "rdma controller not available" <<<"$out"
    fi
  fi
  for n in 1 2 3 4 5; do IDS+=("$PFX-bad$n"); done
}

t_v2_only() {
  local id=$PFX-v2 out
  new v2 --unified memory.high=50M || { notok "create with unified memory.high"; return; }
  check "unified memory.high written" is memory $id memory.high 52428800
  out=$(drv $id exec -- cat /proc/self/cgroup 2>&1)
  check "clone3(CLONE_INTO_CGROUP) places the child ($(tr '\n' ' ' <<<"$out"))" \
    eval 'grep -q "placed with clone3" <<<"$out" && grep -q "^0::/agentrt/$id$" <<<"$out"'
}

t_destroy() {
  local id left
  for id in "${IDS[@]}"; do drv $id destroy >/dev/null 2>&1; done
  left=$(find $CG -maxdepth 4 -type d -name "$PFX*" 2>/dev/null)
  check "destroy leaves no cgroup behind${left:+: $left}" test -z "$left"
}

t_limits
t_oom
t_pids
t_cpu
t_freeze
t_kill
t_devices
t_bad_input
[ $V = v2 ] && t_v2_only
t_destroy
echo "# $FAILED failed"
[ $FAILED = 0 ]
