#!/usr/bin/env bats
# subagents-v2.bats - sub-agents (docs/subagents.md) on a pure cgroup v2 host: the VM lane
# (tests/vm/run-agentrt-v2.sh runs this file in its VM).  On v2 a cgroup with processes cannot
# enable controllers for children, so the parent's processes move to a leaf
# (<parent cgroup>/agentrt-parent) when its first child is made, and the child's cgroup goes
# beside it; the parent's limits stay on its cgroup and bound the family.  Checked from
# outside: the cgroup files, the parent's pids in the leaf, `ps`, `pause`, `events --stats`,
# exec after the move, a child's fork bomb, and nothing left after delete.

load ../bats/helpers

SUB=/run/agentrt/bin/agentrt

setup() {
	if [ "$(stat -f -c %T /sys/fs/cgroup 2>/dev/null)" != cgroup2fs ]; then
		skip "not a cgroup v2 host (run it through tests/vm/run-agentrt-v2.sh)"
	fi
	agentrt_only "sub-agents"
	setup_bundle
	ID=subv2-$BATS_TEST_NUMBER
	WS=$BUNDLE/ws
	mkdir -p "$WS" "$ROOTFS/workspace" "$ROOTFS/run"
	update_config ".process.args = [\"sleep\", \"600\"] | .process.cwd = \"/workspace\" |
		.mounts += [{\"destination\": \"/workspace\", \"type\": \"bind\", \"source\": \"$WS\", \"options\": [\"rbind\", \"rw\"]}] |
		.linux.resources.pids.limit = 64"
}

teardown() {
	teardown_bundle
}

sub() { rt exec "$ID" "$SUB" sub "$@"; }
host_pid() { jq -r .pid "$TEST_ROOT/$1/state.json"; }
cg_dir() { echo "/sys/fs/cgroup$(jq -r '[.. | .cgroupPath? // empty][0]' "$TEST_ROOT/$1/state.json")"; }

@test "sub-agents v2: the parent moves to a leaf; the child's cgroup beside it, its own and the parent's limits hold; delete leaves nothing" {
	status=0
	timeout 60 "$AGENTRT" --root "$TEST_ROOT" --profile agent run -d --bundle "$BUNDLE" "$ID" \
		</dev/null >"$BUNDLE/p.out" 2>"$BUNDLE/p.err" || status=$?
	[ "$status" -eq 0 ] || fail "run -d --profile agent: $(cat "$BUNDLE/p.err")"
	pcg=$(cg_dir "$ID")
	ppid=$(host_pid "$ID")
	# the control: before any child the parent's process is in its own cgroup
	grep -qx "$ppid" "$pcg/cgroup.procs" || fail "parent pid $ppid not in $pcg"
	[ ! -d "$pcg/agentrt-parent" ]
	# a child in the foreground runs, with stdio and exit status
	run sub run --pids 16 -- sh -c 'echo child-ran; exit 3'
	[ "$status" -eq 3 ] && [[ "$output" == *child-ran* ]] || fail "sub run: $status $output"
	# a detached child: its cgroup below the parent's, its own pids.max 16
	run sub run --name a --detach --pids 16 -- sleep 120
	[ "$status" -eq 0 ] || fail "sub run --detach: $output"
	ccg=$(cg_dir "$ID.a")
	[ -d "$ccg" ] && [ "${ccg%/*}" = "$pcg" ] || fail "child cgroup $ccg not beside the leaf in $pcg"
	[ "$(cat "$ccg/pids.max")" = 16 ]
	grep -qx "$(host_pid "$ID.a")" "$ccg/cgroup.procs"
	# the parent's processes are in the leaf, its limit still on its cgroup
	[ -z "$(cat "$pcg/cgroup.procs")" ] || fail "processes left in $pcg: $(cat "$pcg/cgroup.procs")"
	grep -qx "$ppid" "$pcg/agentrt-parent/cgroup.procs" || fail "parent pid not in the leaf"
	[[ " $(cat "$pcg/cgroup.subtree_control") " == *" pids "* ]]
	[ "$(cat "$pcg/pids.max")" = 64 ]
	# agentrt's own view of the parent is the whole family
	run rt ps "$ID"
	[ "$status" -eq 0 ] && [[ "$output" == *"$ppid"* ]] || fail "ps: $output"
	run rt events --stats "$ID"
	[ "$status" -eq 0 ] && [[ "$output" == *'"pids":{"current":'* ]] || fail "events --stats: $output"
	cur=$(sed -n 's/.*"pids":{"current":\([0-9]*\).*/\1/p' <<<"$output")
	[ -n "$cur" ] && [ "$cur" -ge 2 ] || fail "pids.current $cur does not count the child"
	# exec after the move lands in the leaf
	run rt exec "$ID" sh -c 'echo exec-ok'
	[ "$status" -eq 0 ] && [[ "$output" == *exec-ok* ]] || fail "exec after the move: $output"
	# pause/resume freeze the family
	rt pause "$ID"
	grep -qx 'frozen 1' "$pcg/cgroup.events"
	grep -qx 'frozen 1' "$ccg/cgroup.events"
	rt resume "$ID"
	grep -qx 'frozen 0' "$pcg/cgroup.events"
	sub kill a
	# a child's fork bomb stops at the parent's 64, not at its own 1024 (the profile's)
	run sub run --name bomb -- sh -c 'i=0; while [ $i -lt 300 ]; do sleep 30 & i=$((i+1)); echo $i; done'
	last=$(grep -E '^[0-9]+$' <<<"$output" | tail -n1)
	[ -n "$last" ] && [ "$last" -lt 64 ] || fail "the child started $last processes"
	# delete of the parent: its children and every cgroup dir go
	run rt delete --force "$ID"
	[ "$status" -eq 0 ] || fail "delete: $output"
	[ ! -d "$pcg" ] || fail "left: $(find "$pcg" -type d)"
	[ ! -d "$ccg" ]
}
