#!/usr/bin/env bats
# systemd-cgroup.bats - --systemd-cgroup where systemd does not run (the
# build hosts): create fails with one line naming the reason, before
# anything exists, instead of falling back to cgroupfs.  Against systemd,
# tests/vm/systemd-cgroup.bats (the VM lane with systemd as PID 1).

load helpers

no_systemd() {
	[ ! -d /run/systemd/system ] || skip "systemd runs here (tests/vm/systemd-cgroup.bats covers it)"
}

@test "--systemd-cgroup without systemd: create fails with one line; no state, no cgroup" {
	agentrt_only "runc's error texts differ"
	no_systemd
	update_config ".linux.cgroupsPath = \"agentrt-test$$.slice:agentrt:sd$$\""
	set_args true
	run rt --systemd-cgroup run --bundle "$BUNDLE" sd$$
	assert_clean_failure
	assert_output_contains "cannot reach systemd over D-Bus"
	assert_output_contains "leave out --systemd-cgroup"
	# Podman reads "no such file or directory" in a runtime's error as a missing program
	[[ "${output,,}" != *"no such file or directory"* ]] || fail "ENOENT's text: $output"
	[ "$(wc -l <<<"$output")" -eq 1 ] || fail "more than one line: $output"
	[ ! -e "$TEST_ROOT/sd$$" ] || fail "state left behind"
	for d in /sys/fs/cgroup/*/agentrt.slice /sys/fs/cgroup/agentrt.slice /sys/fs/cgroup/*/agentrt-test$$.slice; do
		[ ! -e "$d" ] || fail "cgroup $d made"
	done
}

@test "without --systemd-cgroup the cgroupfs driver is untouched (no D-Bus, no libsystemd)" {
	agentrt_only "agentrt's own driver"
	set_args true
	# LeakSanitizer cannot run under ptrace (an ASan build)
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
		run strace -f -qq -e trace=openat,connect -o "$BUNDLE/trace" "$AGENTRT" --root "$TEST_ROOT" run --bundle "$BUNDLE" plain$$
	[ "$status" -eq 0 ] || fail "$output"
	! grep -E 'libsystemd|dbus|systemd/private' "$BUNDLE/trace" || fail "the cgroupfs path touched systemd"
}
