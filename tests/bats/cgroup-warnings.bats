#!/usr/bin/env bats
# cgroup-warnings.bats - a resource the cgroup library ignores (memory.kernel: gone from current
# kernels on v1, no equivalent on v2) is a warning the CLI writes where its log goes: stderr
# without --log, the log file with it (conmon reads create's stderr as the error text).  The
# library only returns the warning (tests/unit/test_cgroups.c); these check what the CLI does.

load helpers

@test "create: an ignored cgroup resource is a warning on stderr, and the container runs" {
	agentrt_only "the warning's text"
	update_config '.linux.resources.memory = {"kernel": 67108864}'
	set_cmd 'sleep 100'
	create_container kw
	[ "$status" -eq 0 ] || fail "create: $output"
	[[ "$output" == *"agentrt: warning: cgroup: memory.kernel"*"ignoring"* ]] || fail "stderr: $output"
	[ "$(container_status kw)" = created ]
}

@test "create --log: the warning goes to the log file, not to stderr" {
	agentrt_only "the warning's text"
	update_config '.linux.resources.memory = {"kernel": 67108864}'
	set_cmd 'sleep 100'
	status=0
	timeout --kill-after=5 "$RT_TIMEOUT" "$AGENTRT" --root "$TEST_ROOT" --log "$BUNDLE/log.json" \
		--log-format json create --bundle "$BUNDLE" kwl </dev/null >"$BUNDLE/kwl.out" \
		2>"$BUNDLE/kwl.err" || status=$?
	[ "$status" -eq 0 ] || fail "create: $(cat "$BUNDLE/kwl.err")"
	[ ! -s "$BUNDLE/kwl.err" ] || fail "stderr not empty: $(cat "$BUNDLE/kwl.err")"
	jq -e 'select(.level == "warning" and (.msg | test("^cgroup: memory.kernel")))' \
		"$BUNDLE/log.json" >/dev/null || fail "log: $(cat "$BUNDLE/log.json")"
}

@test "update: an ignored cgroup resource is a warning, the rest is applied" {
	agentrt_only "the warning's text"
	set_cmd 'sleep 100'
	run_detached ku
	[ "$status" -eq 0 ] || fail "run -d: $output"
	run rt update --resources - ku <<<'{"memory": {"kernel": 67108864}, "pids": {"limit": 77}}'
	[ "$status" -eq 0 ] || fail "update: $output"
	[[ "$output" == *"agentrt: warning: cgroup: memory.kernel"*"ignoring"* ]] || fail "output: $output"
	pid=$(container_pid ku)
	cg=$(awk -F: '$2 == "pids" || $2 == "" {print $3; exit}' "/proc/$pid/cgroup")
	if [ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ]; then
		[ "$(cat "/sys/fs/cgroup$cg/pids.max")" = 77 ]
	else
		[ "$(cat "/sys/fs/cgroup/pids$cg/pids.max")" = 77 ]
	fi
}
