#!/bin/bash
# run-cgroups-v2.sh - the cgroup selftest in the cgroup v2 VM lane
# (../shared/VM.md): one VM boot runs tests/helpers/cgroups-selftest.sh v2
# (limits, OOM, pids, cpu throttling, freeze, cgroup.kill, eBPF device
# filter, clone3 CLONE_INTO_CGROUP, unified keys, cleanup).
# Prints ok / not ok lines; without qemu it prints one "ok - # SKIP" line.
#   env CGROUP_DRIVER (default build/tests/cgroup-driver), VM_RUN (vm-run.sh)
set -u
cd "$(dirname "$0")/../.." || exit 1
ROOT=$PWD
VM_RUN=${VM_RUN:-}
for c in "$VM_RUN" "$ROOT/../shared/vm-run.sh" /work/shared/vm-run.sh; do
  [ -n "$c" ] && [ -x "$c" ] && { VM_RUN=$c; break; }
done
if ! command -v qemu-system-x86_64 >/dev/null || [ ! -x "$VM_RUN" ]; then
  echo "ok - cgroup v2 VM lane # SKIP no qemu-system-x86_64 or vm-run.sh"
  exit 0
fi
export CGROUP_DRIVER=${CGROUP_DRIVER:-build/tests/cgroup-driver}
[ -x "$CGROUP_DRIVER" ] || make -s cgroup-driver >/dev/null || { echo "not ok - build cgroup-driver"; exit 1; }
# one vCPU, as run-agentrt-v2.sh (VM_CPUS sets more)
out=$(VM_CPUS=${VM_CPUS:-1} "$VM_RUN" --hostroot "$ROOT" env CGROUP_DRIVER="$CGROUP_DRIVER" \
  tests/helpers/cgroups-selftest.sh v2 2>&1)
rc=$?
printf '%s\n' "$out" | grep -E '^(ok|not ok|#)'
if [ $rc = 125 ]; then
  echo "not ok - cgroup v2 VM lane: the VM failed"
  printf '%s\n' "$out" | tail -20 | sed 's/^/# /'
fi
[ $rc = 0 ] || { grep -q '^not ok' <<<"$out" || echo "not ok - cgroup v2 selftest exited $rc"; exit 1; }
