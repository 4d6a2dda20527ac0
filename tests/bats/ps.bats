#!/usr/bin/env bats
# ps.bats - `ps` in table and JSON form.

load helpers

@test "ps --format json lists the host pids of the container's processes" {
	set_cmd 'sleep 1000 & echo $! > /tmp/child; exec sleep 999'
	run_detached c1
	[ "$status" -eq 0 ] || fail "run -d: $output"
	wait_for_file "$ROOTFS/tmp/child"
	init=$(container_pid c1)
	run rt ps --format json c1
	[ "$status" -eq 0 ] || fail "$output"
	[ "$(jq length <<<"$output")" -eq 2 ] || fail "$output"
	jq -e --argjson p "$init" 'index($p) != null' <<<"$output" >/dev/null || fail "init $init missing: $output"
	# Every listed pid is really in the container's pid namespace.
	for p in $(jq -r '.[]' <<<"$output"); do
		[ "$(readlink "/proc/$p/ns/pid")" = "$(readlink "/proc/$init/ns/pid")" ] || fail "pid $p not in the container"
	done
}

@test "ps shows a table with a PID column" {
	set_args sleep 1000
	run_detached c1
	[ "$status" -eq 0 ] || fail "run -d: $output"
	run rt ps c1
	[ "$status" -eq 0 ] || fail "$output"
	head -n1 <<<"$output" | grep -qw PID
	grep -qw "$(container_pid c1)" <<<"$output"
}

@test "ps of a created container lists its init" {
	set_args sleep 1000
	create_container c1
	run rt ps --format json c1
	[ "$status" -eq 0 ] || fail "$output"
	[ "$(jq -r '.[0]' <<<"$output")" = "$(container_pid c1)" ]
}

# ps-stopped-null: `ps --format json` of a stopped container printed `[]`; runc prints `null`
# (its empty list), as `list --format json` with no containers does (list-empty-null).
@test "ps-stopped-null: ps --format json of a stopped container prints null, as runc" {
	set_args true
	run_detached c1
	[ "$status" -eq 0 ] || fail "run -d: $output"
	wait_for_status c1 stopped
	run rt ps --format json c1
	[ "$status" -eq 0 ] || fail "$output"
	[ "$output" = null ] || fail "ps of a stopped container: $output"
	run rt ps c1
	[ "$status" -eq 0 ] || fail "$output"
	[ "${#lines[@]}" -eq 1 ] && head -n1 <<<"$output" | grep -qw PID || fail "table: $output"
}

@test "ps --format with a bad value fails" {
	set_args sleep 1000
	run_detached c1
	run rt ps --format yaml c1
	assert_clean_failure
}

@test "ps passes the arguments after the id to ps(1) and keeps only the container's lines" {
	requires ps
	set_cmd 'sleep 1000 & echo $! > /tmp/child; exec sleep 999'
	run_detached c1
	[ "$status" -eq 0 ] || fail "run -d: $output"
	wait_for_file "$ROOTFS/tmp/child"
	init=$(container_pid c1)
	run rt ps c1 -o pid,comm
	[ "$status" -eq 0 ] || fail "$output"
	[ "$(head -n1 <<<"$output" | awk '{print $1, $2}')" = "PID COMMAND" ] || fail "header: $output"
	# the header and the container's two sleeps, nothing of the host (ps -e would list them)
	[ "$(wc -l <<<"$output")" -eq 3 ] || fail "lines: $output"
	grep -qE "^ *$init +sleep$" <<<"$output" || fail "init $init missing: $output"
	run rt ps c1 -e -x
	[ "$status" -eq 0 ] || fail "$output"
	[ "$(wc -l <<<"$output")" -eq 3 ] || fail "ps -e -x: $output"
	# default: ps -ef's columns
	run rt ps c1
	head -n1 <<<"$output" | grep -qE '^UID +PID +PPID' || fail "default table: $output"
	# --format json is unchanged by ps arguments
	run rt ps --format json c1
	[ "$(jq length <<<"$output")" -eq 2 ] || fail "json: $output"
	# a ps(1) without a PID column is an error
	run rt ps c1 -o comm
	assert_clean_failure
}
