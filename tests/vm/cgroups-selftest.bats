#!/usr/bin/env bats
# cgroups-selftest.bats - the cgroup module's selftest (tests/helpers/cgroups-selftest.sh v2,
# through tests/helpers/cgroup-driver: limits, OOM, pids, cpu throttling, freeze, cgroup.kill,
# the eBPF device filter, clone3 CLONE_INTO_CGROUP, unified keys, cleanup) on a pure cgroup v2
# kernel, through tests/vm/run-agentrt-v2.sh: `make check-cgroups-vm`.  Not in the lane's default
# files (CI): cgroups-v2.bats checks the same through the CLI.
# One test: the selftest's own "not ok" lines are the failure's message.

setup_file() {
	[ "$(stat -f -c %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ] ||
		skip "not a cgroup v2 host (run it through tests/vm/run-agentrt-v2.sh)"
}

@test "cgroups v2: the cgroup module's selftest through cgroup-driver" {
	local root=$BATS_TEST_DIRNAME/../..
	export CGROUP_DRIVER=${CGROUP_DRIVER:-$root/build/tests/cgroup-driver}
	[ -x "$CGROUP_DRIVER" ] || { echo "no $CGROUP_DRIVER (make cgroup-driver)" >&2; return 1; }
	run "$root/tests/helpers/cgroups-selftest.sh" v2
	echo "# $(grep -c '^ok - ' <<<"$output") checks ok" >&3
	if [ "$status" -ne 0 ] || ! grep -q '^ok - ' <<<"$output"; then
		grep -E '^(not ok|#)' <<<"$output" >&2
		echo "selftest exited $status" >&2
		return 1
	fi
}
