#!/bin/bash
# run-agentrt-v2.sh - agentrt's cgroup v2 path through the CLI in the VM lane
# (../shared/VM.md): builds ./agentrt and the test rootfs on the host, then
# one VM boot runs the cgroup v2 bats files as TAP.  Prints the TAP lines
# (ok / not ok / #) for the suite runner; without qemu-system-x86_64 or
# vm-run.sh it prints a single "ok - # SKIP" line.
#   env VM_RUN (vm-run.sh), VM_MEM (MiB, default 1536), VM_CPUS (default 1), BATS_FILTER (bats -f),
#       VM_BATS (the bats files, space-separated, default: cgroups-v2, apparmor, sandbox-cgroup,
#       subagents-v2 and abi-i386; run-systemd.sh sets it, make check-cgroups-vm sets
#       cgroups-selftest), VM_WRAP (a command inside the VM that runs bats, e.g.
#       tests/helpers/vm-systemd-boot.sh for systemd as PID 1), VM_LANE (its name in a failure)
set -u
cd "$(dirname "$0")/../.." || exit 1
ROOT=$PWD
VM_RUN=${VM_RUN:-}
for c in "$VM_RUN" "$ROOT/../shared/vm-run.sh" /work/shared/vm-run.sh; do
	[ -n "$c" ] && [ -x "$c" ] && { VM_RUN=$c; break; }
done
if ! command -v qemu-system-x86_64 >/dev/null || [ ! -x "$VM_RUN" ]; then
	echo "ok - # SKIP no qemu (qemu-system-x86_64 or ../shared/vm-run.sh missing)"
	exit 0
fi
# The runtime under test: $AGENTRT (tests/run-all.sh passes it), else ./agentrt,
# built here.  The VM's root is the host's /, so the same path works inside.
log=$(mktemp)
if ! { { [ -n "${AGENTRT:-}" ] || make -s agentrt; } && make -s test-rootfs test-helpers cgroup-driver; } >"$log" 2>&1; then
	echo "not ok - agentrt v2 VM lane: build failed"
	tail -20 "$log" | sed 's/^/# /'
	rm -f "$log"
	exit 1
fi
rm -f "$log"
AGENTRT=${AGENTRT:-$ROOT/agentrt}
case "$AGENTRT" in /*) ;; */*) AGENTRT=$ROOT/${AGENTRT#./} ;; *) AGENTRT=$(command -v "$AGENTRT") ;; esac
# The VM's devtmpfs has no /dev/fd (bats needs it for process substitution).
VM_PREP='for f in fd:fd stdin:fd/0 stdout:fd/1 stderr:fd/2; do
	[ -e /dev/${f%%:*} ] || ln -s /proc/self/${f#*:} /dev/${f%%:*}; done;'
# The default boot runs every bats file that needs only a cgroup v2 kernel with AppArmor (one
# boot costs 1-4 minutes under TCG): systemd as PID 1 has a boot of its own (run-systemd.sh).
# Not cgroups-selftest.bats (make check-cgroups-vm runs it): its checks of the cgroup module
# are cgroups-v2.bats's through the CLI, the cpu throttling too, and its rdma and malformed
# cpuset errors are test_cgroups's and cgroups-v1.bats's; it took 46 s of the lane's 248.
DEFAULT_BATS="tests/vm/cgroups-v2.bats tests/vm/apparmor.bats tests/vm/sandbox-cgroup.bats tests/vm/subagents-v2.bats tests/vm/abi-i386.bats"
filter=()
[ -n "${BATS_FILTER:-}" ] && filter=(-f "$BATS_FILTER")
# The VM's own timeout ends before the lane's (tests/run-all.sh exports VM_DEADLINE, the epoch
# second its `timeout` kills the lane): a lane that runs out of time then says so, with the
# console's tail, rather than being killed with nothing printed
tmo=${VM_TIMEOUT:-1200}
if [ -n "${VM_DEADLINE:-}" ]; then
	tmo=$((VM_DEADLINE - $(date +%s) - 30))
	[ "$tmo" -ge 60 ] || tmo=60
fi
# The TAP lines are passed on as they come (a lane killed from outside still shows how far it got)
raw=$(mktemp)
trap 'rm -f "$raw"' EXIT
# One vCPU (VM_CPUS sets more): beside CI's two passes a two-vCPU guest under TCG spent about
# twice the host CPU time of the same lane on an idle host (the systemd lane 738 CPU-s against
# 380; a vCPU waiting for the other one, descheduled, still spins), and the passes are CPU-bound
VM_CPUS=${VM_CPUS:-1} VM_MEM=${VM_MEM:-1536} VM_TIMEOUT=$tmo \
	"$VM_RUN" --hostroot "$ROOT" bash -c "$VM_PREP"' exec "$@"' \
	bats ${VM_WRAP:+env SD_TIMEOUT=$((tmo > 240 ? tmo - 120 : tmo / 2)) $VM_WRAP} env AGENTRT="$AGENTRT" bats --tap --timing "${filter[@]}" ${VM_BATS:-$DEFAULT_BATS} 2>&1 |
	tee "$raw" | grep --line-buffered -E '^(ok|not ok|#)'
rc=${PIPESTATUS[0]}
out=$(cat "$raw")
if [ $rc = 125 ]; then
	# (vm-run.sh prints the tails of the console and of virtiofsd's log: the console's is what says why)
	echo "not ok - ${VM_LANE:-agentrt v2} VM lane: the VM failed or ran out of its $tmo s"
	printf '%s\n' "$out" | sed -n '/^vm-run: /,$p' | sed '/^==> .*virtiofsd.log <==/,$d' | tail -30 | sed 's/^/# /'
	exit 1
fi
if [ $rc != 0 ] && ! grep -q '^not ok' <<<"$out"; then
	echo "not ok - ${VM_LANE:-agentrt v2} VM lane: bats exited $rc"
	printf '%s\n' "$out" | tail -20 | sed 's/^/# /'
fi
exit $rc
