#!/usr/bin/env bats
# run.bats - `run`: create+start+wait, exit status, --detach, --keep, signal forwarding.

load helpers

@test "the program's exec failing late (a missing interpreter) says so on its stderr in runc's words, exit 127" {
	printf '#!/nonexistent/interpreter\necho ran\n' >"$ROOTFS/run.sh"
	chmod 755 "$ROOTFS/run.sh"
	set_args /run.sh
	status=0
	output=$(rt run --bundle "$BUNDLE" c1 2>&1) || status=$?
	[ "$status" -eq 127 ] || fail "status $status: $output"
	mapfile -t lines <<<"$output"
	[ "${lines[0]}" = "exec /run.sh: no such file or directory" ] || fail "$output"
	[ -z "$(rt list -q)" ]
}

@test "run prints the container's output and removes it afterwards" {
	set_args echo hello-from-agentrt
	run rt run --bundle "$BUNDLE" c1
	[ "$status" -eq 0 ] || fail "run: $output"
	[ "$output" = hello-from-agentrt ]
	[ -z "$(rt list -q)" ]
}

@test "run propagates the exit status" {
	for code in 0 1 42 255; do
		set_cmd "exit $code"
		run rt run --bundle "$BUNDLE" c1
		[ "$status" -eq "$code" ] || fail "exit $code gave $status: $output"
	done
}

@test "run exits with 128+signal when the container is killed" {
	set_args sleep 1000
	(
		rc=0
		"$AGENTRT" --root "$TEST_ROOT" run --bundle "$BUNDLE" c1 </dev/null >"$BUNDLE/out" 2>&1 || rc=$?
		echo $rc >"$BUNDLE/rc"
	) &
	wait_for_status c1 running
	rt kill c1 KILL
	wait_for_file "$BUNDLE/rc"
	wait
	[ "$(cat "$BUNDLE/rc")" -eq 137 ] || fail "exit status $(cat "$BUNDLE/rc"), want 137"
}

@test "run forwards signals to the container in the foreground" {
	set_cmd 'trap "echo USR1 >> /tmp/sig" USR1; trap "echo TERM >> /tmp/sig; exit 7" TERM
echo ready > /tmp/ready; while :; do sleep 0.1; done'
	"$AGENTRT" --root "$TEST_ROOT" run --bundle "$BUNDLE" c1 </dev/null >"$BUNDLE/out" 2>&1 &
	rtpid=$!
	wait_for_file "$ROOTFS/tmp/ready"
	kill -USR1 "$rtpid"
	for i in $(seq 50); do grep -q USR1 "$ROOTFS/tmp/sig" 2>/dev/null && break; sleep 0.1; done
	kill -TERM "$rtpid"
	for i in $(seq 100); do kill -0 "$rtpid" 2>/dev/null || break; sleep 0.1; done
	kill -0 "$rtpid" 2>/dev/null && { kill -KILL "$rtpid"; fail "runtime did not exit after TERM"; }
	rc=0
	wait "$rtpid" || rc=$?
	grep -qx USR1 "$ROOTFS/tmp/sig" || fail "USR1 not forwarded: $(cat "$ROOTFS/tmp/sig")"
	grep -qx TERM "$ROOTFS/tmp/sig" || fail "TERM not forwarded"
	[ "$rc" -eq 7 ] || fail "exit status $rc, want 7"
}

@test "run --detach returns at once with the container running" {
	set_args sleep 1000
	start=$(date +%s)
	run_detached c1
	[ "$status" -eq 0 ] || fail "run -d: $output"
	[ $(($(date +%s) - start)) -lt 20 ]
	[ "$(container_status c1)" = running ]
	pid=$(container_pid c1)
	tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q '^sleep 1000'
}

@test "run --detach writes --pid-file" {
	set_args sleep 1000
	run_detached c1 --pid-file "$BUNDLE/pid"
	[ "$status" -eq 0 ] || fail "run -d: $output"
	[ "$(cat "$BUNDLE/pid")" = "$(container_pid c1)" ]
}

# Without a monitor, hooks or a terminal, run queues START with GO (spawn.h, start_early):
# the state and the pid file must still be there before the program's first instruction.
@test "run-early-start: state.json and --pid-file exist, saying running, when the program starts" {
	update_config '.mounts += [
		{"destination": "/b", "type": "bind", "source": "'"$BUNDLE"'", "options": ["rbind", "ro"]},
		{"destination": "/r", "type": "bind", "source": "'"$TEST_ROOT"'", "options": ["rbind", "ro"]}]'
	set_cmd 'cat /b/pid; echo; cat /r/c1/state.json'
	run rt run --pid-file "$BUNDLE/pid" --bundle "$BUNDLE" c1
	[ "$status" -eq 0 ] || fail "$output"
	pid=$(head -n1 <<<"$output")
	state=$(tail -n1 <<<"$output")
	[[ "$pid" =~ ^[0-9]+$ ]] || fail "no pid file when the program ran: $output"
	[ "$(jq -r .pid <<<"$state")" = "$pid" ] || fail "state.json: $state, pid file $pid"
	[ "$(jq -r .status <<<"$state")" = running ] || fail "state.json: $state"
	[ -z "$(ls -A "$TEST_ROOT")" ] || fail "left in --root: $(ls -A "$TEST_ROOT")"
}

# An init that fails with START already queued closes its end with our message unread: the
# kernel reports ECONNRESET once, ahead of the init's ERROR (seen in CI as "sync: receive:
# Connection reset by peer" instead of the init's message).
@test "run-early-start: an init failing after START was queued reports its own error, leaves nothing" {
	agentrt_only "a failpoint of build-fp/agentrt"
	FP_AGENTRT=${FP_AGENTRT:-$REPO_ROOT/build-fp/agentrt}
	if [ ! -x "$FP_AGENTRT" ] || [ "$FP_AGENTRT" -ot "$AGENTRT" ]; then
		make -s -C "$REPO_ROOT" build-fp >&2 || fail "cannot build build-fp/agentrt"
	fi
	set_args true
	for i in 1 2 3; do
		run env AGENTRT_FAILPOINT=init-fails-late timeout 30 "$FP_AGENTRT" --root "$TEST_ROOT" \
			run --bundle "$BUNDLE" "late$i"
		[ "$status" -ne 0 ] || fail "run succeeded"
		[ "${#lines[@]}" -eq 1 ] || fail "$output"
		assert_output_contains "failpoint init-fails-late"
		[ -z "$(ls -A "$TEST_ROOT")" ] || fail "left in --root: $(ls -A "$TEST_ROOT")"
	done
}

# systemd socket activation (Podman's socket-activated containers): with LISTEN_FDS=N and a
# LISTEN_PID naming the runtime, runc and crun pass fds 3..N+2 to the container first (then
# --preserve-fds's) and give its process LISTEN_FDS=N and LISTEN_PID=1; agentrt passed neither.
@test "socket-activation: LISTEN_FDS for the runtime's own pid passes the sockets with LISTEN_FDS and LISTEN_PID=1; exec and another pid's get none" {
	set_args sleep 1000
	echo l3 >"$BUNDLE/l3"
	echo l4 >"$BUNDLE/l4"
	echo p5 >"$BUNDLE/p5"
	# sh's $$ is the runtime's pid once it execs it
	run timeout 30 bash -c "exec 3<'$BUNDLE/l3' 4<'$BUNDLE/l4' 5<'$BUNDLE/p5'; LISTEN_FDS=2 exec sh -c \
		'export LISTEN_PID=\$\$; exec \"\$0\" --root \"\$1\" run -d --preserve-fds 1 --bundle \"\$2\" c1' \
		'$AGENTRT' '$TEST_ROOT' '$BUNDLE' </dev/null >/dev/null 2>&1"
	[ "$status" -eq 0 ] || fail "run -d: $output"
	pid=$(container_pid c1)
	for fd in 3:l3 4:l4 5:p5; do
		[ "$(readlink "/proc/$pid/fd/${fd%%:*}")" = "$BUNDLE/${fd#*:}" ] ||
			fail "fd ${fd%%:*}: $(readlink "/proc/$pid/fd/${fd%%:*}")"
	done
	env=$(tr '\0' '\n' <"/proc/$pid/environ")
	grep -qx LISTEN_FDS=2 <<<"$env" && grep -qx LISTEN_PID=1 <<<"$env" || fail "environment: $env"
	run rt exec c1 /usr/bin/env
	[[ "$output" != *LISTEN_* ]] || fail "exec: $output"
	# a LISTEN_PID that is not the runtime's: not ours to pass
	run timeout 30 bash -c "exec 3<'$BUNDLE/l3'; LISTEN_FDS=1 LISTEN_PID=1 exec '$AGENTRT' --root '$TEST_ROOT' run -d \
		--bundle '$BUNDLE' c2 </dev/null >/dev/null 2>&1"
	[ "$status" -eq 0 ] || fail "run -d c2: $output"
	pid=$(container_pid c2)
	[ ! -e "/proc/$pid/fd/3" ] || fail "c2 got fd 3: $(readlink "/proc/$pid/fd/3")"
	! tr '\0' '\n' <"/proc/$pid/environ" | grep -q '^LISTEN_PID=1$' || fail "c2 was told it is activated"
}

@test "run --keep keeps the stopped container" {
	set_cmd 'exit 3'
	run rt run --keep --bundle "$BUNDLE" c1
	[ "$status" -eq 3 ]
	[ "$(container_status c1)" = stopped ]
	run rt delete c1
	[ "$status" -eq 0 ]
}

# run-detach-keep: runc 1.1 takes `run -d --keep` (a detached container is never deleted
# by run: --keep changes nothing); agentrt refused it, so a script written for runc failed.
@test "run-detach-keep: run --detach --keep runs the container, which stays once stopped" {
	set_cmd 'echo ran > /tmp/ran; sleep 1'
	run_detached c1 --keep
	[ "$status" -eq 0 ] || fail "run -d --keep: $output"
	wait_for_file "$ROOTFS/tmp/ran"
	wait_for_status c1 stopped
	[ "$(container_status c1)" = stopped ]
	run rt delete c1
	[ "$status" -eq 0 ] || fail "delete: $output"
}

@test "run without --keep leaves nothing in --root" {
	set_args true
	run rt run --bundle "$BUNDLE" c1
	[ "$status" -eq 0 ]
	[ -z "$(ls -A "$TEST_ROOT")" ] || fail "left in --root: $(ls -A "$TEST_ROOT")"
}

@test "run passes stdin and stderr through" {
	set_cmd 'read line; echo "got $line"; echo to-stderr >&2'
	run bash -c "echo piped | timeout 30 '$AGENTRT' --root '$TEST_ROOT' run --bundle '$BUNDLE' c1 2>'$BUNDLE/err'"
	[ "$status" -eq 0 ] || fail "$output"
	[ "$output" = "got piped" ]
	grep -qx to-stderr "$BUNDLE/err"
}

@test "run of a nonexistent program fails and leaves nothing" {
	set_args /no/such/program
	run rt run --bundle "$BUNDLE" c1
	assert_clean_failure
	[ -z "$(rt list -q)" ] || fail "container left: $(rt list)"
}

# crun's --config FILE: a config outside the bundle (absolute, or relative to the bundle);
# the bundle's own config.json is not read.
@test "run/create --config FILE uses that config instead of the bundle's" {
	agentrt_only "crun's option; runc 1.1 has no --config"
	set_args echo from-bundle-config
	jq '.process.args = ["echo", "from-other-config"]' "$BUNDLE/config.json" >"$BATS_TEST_TMPDIR/other.json"
	run rt run --bundle "$BUNDLE" --config "$BATS_TEST_TMPDIR/other.json" c1
	[ "$status" -eq 0 ] || fail "run --config: $output"
	[ "$output" = from-other-config ]
	jq '.process.args = ["echo", "relative"]' "$BUNDLE/config.json" >"$BUNDLE/alt.json"
	run rt run --bundle "$BUNDLE" -f alt.json c2
	[ "$output" = relative ] || fail "run -f alt.json: $output"
	jq '.process.args = ["sleep", "100"]' "$BUNDLE/config.json" >"$BATS_TEST_TMPDIR/other.json"
	create_container c3 --config "$BATS_TEST_TMPDIR/other.json"
	[ "$status" -eq 0 ] || fail "create --config: $output"
	[ "$(tr '\0' ' ' </proc/"$(container_pid c3)"/cmdline)" != "" ]
	rt start c3
	wait_for_status c3 running
	grep -q 'sleep' /proc/"$(container_pid c3)"/cmdline || fail "c3 does not run the other config's program"
	run rt run --bundle "$BUNDLE" --config /nonexistent-$$.json c4
	assert_clean_failure
	assert_output_contains "/nonexistent-$$.json"
}

# runc's init and exec'd processes are session leaders: without a terminal the container's
# program was in the caller's process group and session, and `kill 0` inside signalled the
# caller (a script running `agentrt run`, a shim).
@test "kill0-caller-pgid: kill(0) in a container without a terminal (run and exec) does not reach the caller's process group" {
	set_args sh -c 'cut -d" " -f6 /proc/self/stat; kill -USR1 0; sleep 0.3'
	run setsid sh -c 'trap "echo CALLER-SIGNALLED" USR1
		"$0" --root "$1" run --bundle "$2" k0 </dev/null; echo rc=$?' "$AGENTRT" "$TEST_ROOT" "$BUNDLE"
	[[ "$output" != *CALLER-SIGNALLED* ]] || fail "$output"
	# the session is the init's own (pid 1 in its namespace)
	[ "${lines[0]}" = 1 ] || fail "$output"
	set_args sleep 1000
	run_detached k1
	[ "$status" -eq 0 ] || fail "$output"
	run setsid sh -c 'trap "echo CALLER-SIGNALLED" USR1
		"$0" --root "$1" exec k1 sh -c "kill -USR1 0; sleep 0.3" </dev/null; echo rc=$?' "$AGENTRT" "$TEST_ROOT"
	[[ "$output" != *CALLER-SIGNALLED* ]] || fail "$output"
	[[ "$output" == *rc=138* ]] || fail "$output"
	run rt exec k1 sh -c 'cut -d" " -f6 /proc/self/stat; echo $$'
	[ "${lines[0]}" = "${lines[1]}" ] || fail "exec not a session leader: $output"
}
