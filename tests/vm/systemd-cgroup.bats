#!/usr/bin/env bats
# systemd-cgroup.bats - the --systemd-cgroup driver against a real systemd:
# the VM lane with systemd as PID 1 on cgroup v2 (tests/vm/run-systemd.sh
# boots one VM, tests/helpers/vm-systemd-boot.sh starts systemd in it and runs this
# file from a unit).  What systemd knows is read with `systemctl show`, what
# the kernel enforces from the cgroup files: the transient scope exists with
# Delegate=yes and the container's init, the limits are unit properties and
# cgroup values, a daemon-reload does not reset them, `update` changes both,
# `delete` stops the unit and its cgroup is gone.

load ../bats/helpers

setup_file() {
	[ "$(cat /proc/1/comm 2>/dev/null)" = systemd ] ||
		skip "systemd is not PID 1 (run it through tests/vm/run-systemd.sh)"
	[ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ] || skip "not cgroup v2"
	# a dash nests: agentrt-testN.slice lives in agentrt.slice
	export SLICE=agentrt-test$BATS_ROOT_PID.slice SLICE_DIR=agentrt.slice/agentrt-test$BATS_ROOT_PID.slice
}

setup() {
	setup_bundle
	update_config ".linux.cgroupsPath = \"$SLICE:agentrt:c$BATS_TEST_NUMBER\""
	UNIT=agentrt-c$BATS_TEST_NUMBER.scope
	CGDIR=/sys/fs/cgroup/$SLICE_DIR/$UNIT
}

teardown() {
	local ids id
	ids=$(rt list -q 2>/dev/null)
	for id in $ids; do rt --systemd-cgroup delete --force "$id" >/dev/null 2>&1; done
	systemctl stop "$UNIT" >/dev/null 2>&1 || true
	teardown_bundle
}

teardown_file() {
	[ -n "${SLICE:-}" ] && systemctl stop "$SLICE" >/dev/null 2>&1
	rmdir "/sys/fs/cgroup/${SLICE_DIR:-none}" 2>/dev/null || true
	rm -rf --one-file-system "$TEST_ROOT"
}

prop() { # UNIT PROPERTY -> value
	systemctl show -P "$2" "$1"
}

@test "systemd: run -d makes a transient scope with Delegate=yes holding the init" {
	set_args sleep 300
	rt_bg --systemd-cgroup run -d --bundle "$BUNDLE" c$BATS_TEST_NUMBER
	[ "$status" -eq 0 ] || fail "$output"
	[ "$(prop "$UNIT" ActiveState)" = active ] || fail "unit not active: $(systemctl status "$UNIT" 2>&1)"
	[ "$(prop "$UNIT" Delegate)" = yes ] || fail "Delegate is $(prop "$UNIT" Delegate)"
	[ "$(prop "$UNIT" Slice)" = "$SLICE" ] || fail "slice is $(prop "$UNIT" Slice)"
	[ "$(prop "$UNIT" ControlGroup)" = "/$SLICE_DIR/$UNIT" ] || fail "cgroup is $(prop "$UNIT" ControlGroup)"
	pid=$(state_field c$BATS_TEST_NUMBER .pid)
	grep -qx "$pid" "$CGDIR/cgroup.procs" || fail "init $pid not in $CGDIR: $(cat "$CGDIR/cgroup.procs")"
	[ "$(state_field c$BATS_TEST_NUMBER .status)" = running ]
	[ "$(rt state c$BATS_TEST_NUMBER | jq -r .pid)" = "$pid" ]
}

# One daemon-reload for the limits a create set and those an update changed: under TCG each
# reload re-reads the host's units (~40 s beside a loaded host)
@test "systemd: limits and update are unit properties and cgroup files; a daemon-reload keeps them" {
	update_config '.linux.resources = {"memory": {"limit": 134217728}, "pids": {"limit": 42},
		"cpu": {"quota": 50000, "period": 100000, "shares": 1024}}'
	set_args sleep 300
	rt_bg --systemd-cgroup run -d --bundle "$BUNDLE" c$BATS_TEST_NUMBER
	[ "$status" -eq 0 ] || fail "$output"
	[ "$(prop "$UNIT" MemoryMax)" = 134217728 ] || fail "MemoryMax $(prop "$UNIT" MemoryMax)"
	[ "$(prop "$UNIT" TasksMax)" = 42 ] || fail "TasksMax $(prop "$UNIT" TasksMax)"
	[ "$(prop "$UNIT" CPUQuotaPerSecUSec)" = 500ms ] || fail "quota $(prop "$UNIT" CPUQuotaPerSecUSec)"
	[ "$(prop "$UNIT" CPUWeight)" = 39 ] || fail "CPUWeight $(prop "$UNIT" CPUWeight)"
	[ "$(cat "$CGDIR/memory.max")" = 134217728 ]
	[ "$(cat "$CGDIR/pids.max")" = 42 ]
	[ "$(cat "$CGDIR/cpu.max")" = "50000 100000" ] || fail "cpu.max $(cat "$CGDIR/cpu.max")"
	# update: memory and pids change, the CPU limits stay
	run rt --systemd-cgroup update --memory 268435456 --pids-limit 64 c$BATS_TEST_NUMBER
	[ "$status" -eq 0 ] || fail "$output"
	[ "$(prop "$UNIT" MemoryMax)" = 268435456 ] || fail "MemoryMax $(prop "$UNIT" MemoryMax)"
	[ "$(prop "$UNIT" TasksMax)" = 64 ] || fail "TasksMax $(prop "$UNIT" TasksMax)"
	[ "$(prop "$UNIT" CPUQuotaPerSecUSec)" = 500ms ] || fail "update changed the quota: $(prop "$UNIT" CPUQuotaPerSecUSec)"
	[ "$(cat "$CGDIR/memory.max")" = 268435456 ]
	[ "$(cat "$CGDIR/pids.max")" = 64 ]
	# systemd writes every cgroup file from its unit's properties again: a value set in the
	# cgroup only (not as a property) would go back here
	systemctl daemon-reload
	[ "$(cat "$CGDIR/memory.max")" = 268435456 ] || fail "daemon-reload went back: memory.max $(cat "$CGDIR/memory.max")"
	[ "$(cat "$CGDIR/pids.max")" = 64 ] || fail "daemon-reload went back: pids.max $(cat "$CGDIR/pids.max")"
	[ "$(cat "$CGDIR/cpu.max")" = "50000 100000" ] || fail "daemon-reload reset cpu.max: $(cat "$CGDIR/cpu.max")"
	# the limit holds: a fork bomb in the container stops at 64 tasks
	run rt exec c$BATS_TEST_NUMBER sh -c 'for i in $(seq 90); do sleep 30 & done 2>/dev/null; sleep 1; echo done'
	[ "$(cat "$CGDIR/pids.current")" -le 64 ] || fail "pids.current $(cat "$CGDIR/pids.current")"
	[ "$(awk '$1 == "max" { print $2 }' "$CGDIR/pids.events")" -gt 0 ] || fail "no fork was refused: $(cat "$CGDIR/pids.events")"
}

@test "systemd: delete stops the unit and its cgroup is gone; exec and kill work before" {
	set_args sleep 300
	rt_bg --systemd-cgroup run -d --bundle "$BUNDLE" c$BATS_TEST_NUMBER
	[ "$status" -eq 0 ] || fail "$output"
	rt_bg --systemd-cgroup exec -d --pid-file "$BUNDLE/e.pid" c$BATS_TEST_NUMBER sleep 300
	[ "$status" -eq 0 ] || fail "$output"
	grep -qx "$(cat "$BUNDLE/e.pid")" "$CGDIR/cgroup.procs" || fail "exec'd process not in the scope"
	run rt --systemd-cgroup kill c$BATS_TEST_NUMBER KILL
	[ "$status" -eq 0 ] || fail "$output"
	wait_for_status c$BATS_TEST_NUMBER stopped
	run rt --systemd-cgroup delete c$BATS_TEST_NUMBER
	[ "$status" -eq 0 ] || fail "$output"
	[ ! -d "$CGDIR" ] || fail "cgroup $CGDIR left"
	st=$(prop "$UNIT" ActiveState)
	[ "$st" = inactive ] || [ "$(prop "$UNIT" LoadState)" = not-found ] || fail "unit still $st"
}

@test "systemd: a create that fails after the unit started leaves no unit and no cgroup" {
	set_args /nonexistent-binary
	rt_bg --systemd-cgroup run -d --bundle "$BUNDLE" c$BATS_TEST_NUMBER
	assert_clean_failure
	[ ! -d "$CGDIR" ] || fail "cgroup $CGDIR left"
	st=$(prop "$UNIT" ActiveState)
	[ "$st" = inactive ] || [ "$(prop "$UNIT" LoadState)" = not-found ] || fail "unit still $st"
	run rt state c$BATS_TEST_NUMBER
	[ "$status" -ne 0 ]
}
