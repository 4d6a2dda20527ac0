#!/usr/bin/env bats
# exec.bats - `exec` into a running container: command line, --process, --env, --cwd,
# --user, --detach/--pid-file, --tty with a console socket, exit codes, namespaces.

load helpers

start_sleeper() {
	set_args sleep 1000
	run_detached c1
	[ "$status" -eq 0 ] || fail "run -d: $output"
	INIT_PID=$(container_pid c1)
}

@test "exec runs a command line and returns its output" {
	start_sleeper
	run rt exec c1 echo hello exec
	[ "$status" -eq 0 ] || fail "$output"
	[ "$output" = "hello exec" ]
}

@test "exec propagates the exit status" {
	start_sleeper
	for code in 0 1 5 42 254; do
		run rt exec c1 sh -c "exit $code"
		[ "$status" -eq "$code" ] || fail "exit $code gave $status"
	done
}

@test "exec: its own failures exit 255 with one line (as runc), a bad command line 1" {
	start_sleeper
	for args in "--pid-file /non-existent/directory/pid c1 true" "c1 no-such-binary" \
		"no_such_container true" "--cwd relative c1 true"; do
		# shellcheck disable=SC2086
		run rt exec $args
		[ "$status" -eq 255 ] || fail "exec $args: $status: $output"
		[ "$(wc -l <<<"$output")" -eq 1 ] && [[ "$output" == "agentrt: "* ]] || fail "exec $args: $output"
	done
	run rt exec
	[ "$status" -eq 1 ] || fail "no arguments: $status: $output"
	[ "$(container_status c1)" = running ]
}

# exec-no-command: `exec ID` without a command (and without --process) is an exec failure in
# runc, found after the container is looked up: exit 255, "process args cannot be empty" for
# a running container, "does not exist" for an unknown id.  agentrt refused it as a bad
# command line (exit 1) before looking at the container.
@test "exec-no-command: exec ID without a command exits 255 after the container is looked up, as runc" {
	start_sleeper
	run rt exec c1
	[ "$status" -eq 255 ] || fail "exec c1: $status: $output"
	if is_agentrt; then
		[[ "$output" == "agentrt: exec \`c1\`: "*"must not be empty" ]] || fail "exec c1: $output"
	else
		[[ "$output" == *"cannot be empty"* ]] || fail "exec c1: $output"
	fi
	run rt exec no_such_container
	[ "$status" -eq 255 ] || fail "exec no_such_container: $status: $output"
	[[ "$output" == *"does not exist"* ]] || fail "exec no_such_container: $output"
	[ "$(container_status c1)" = running ]
}

# exec-gids-usage: runc parses --additional-gids as a list of numbers, so `-g 5,6` is a
# usage error, exit 1, before anything is looked up; agentrt exited 255 (an exec failure).
@test "exec-gids-usage: a malformed --additional-gids is a usage error (exit 1, as runc) and runs nothing" {
	start_sleeper
	for g in 5,6 abc ''; do
		run rt exec --additional-gids "$g" c1 touch /tmp/gids-ran
		[ "$status" -eq 1 ] || fail "-g '$g': status $status: $output"
		! is_agentrt || [ "$(wc -l <<<"$output")" -eq 1 ] || fail "-g '$g': $output"
		[[ "$output" == *additional-gids* ]] || fail "-g '$g': $output"
	done
	[ ! -e "$ROOTFS/tmp/gids-ran" ] || fail "the process ran"
	run rt exec -g 5 -g 6 c1 id -G
	[ "$status" -eq 0 ] || fail "-g 5 -g 6: $output"
	[ "$output" = "0 5 6" ] || fail "-g 5 -g 6: $output"
}

@test "exec joins every namespace of the container" {
	start_sleeper
	run rt exec c1 sh -c 'for n in pid net ipc uts mnt; do readlink /proc/self/ns/$n; done'
	[ "$status" -eq 0 ] || fail "$output"
	expected=$(for n in pid net ipc uts mnt; do readlink "/proc/$INIT_PID/ns/$n"; done)
	[ "$output" = "$expected" ] || fail "exec namespaces: $output, init: $expected"
	# And they are not the host's.
	for n in pid net ipc uts mnt; do
		[ "$(readlink /proc/self/ns/$n)" != "$(readlink "/proc/$INIT_PID/ns/$n")" ]
	done
}

@test "exec sees the container's root filesystem" {
	start_sleeper
	echo inside >"$ROOTFS/marker"
	run rt exec c1 cat /marker
	[ "$status" -eq 0 ]
	[ "$output" = inside ]
}

@test "exec --process runs the process from a JSON file" {
	start_sleeper
	cat >"$BUNDLE/process.json" <<'JSON'
{
	"terminal": false,
	"user": {"uid": 1000, "gid": 1000},
	"args": ["sh", "-c", "echo $GREETING; pwd; id -u; id -g"],
	"env": ["PATH=/usr/bin:/bin", "GREETING=from-process-json"],
	"cwd": "/tmp",
	"noNewPrivileges": true
}
JSON
	run rt exec --process "$BUNDLE/process.json" c1
	[ "$status" -eq 0 ] || fail "$output"
	[ "$output" = "$(printf 'from-process-json\n/tmp\n1000\n1000')" ] || fail "got: $output"
}

@test "exec --env sets variables" {
	start_sleeper
	run rt exec --env FOO=bar --env BAZ='with space' c1 sh -c 'echo "$FOO|$BAZ"'
	[ "$status" -eq 0 ] || fail "$output"
	[ "$output" = "bar|with space" ]
}

@test "exec --env overrides the config's environment" {
	update_config '.process.env += ["FOO=from-config"]'
	start_sleeper
	run rt exec c1 sh -c 'echo $FOO'
	[ "$output" = from-config ]
	run rt exec -e FOO=override c1 sh -c 'echo $FOO'
	[ "$output" = override ]
}

@test "exec --env with an empty name or without = is refused, as runc does, and runs nothing" {
	start_sleeper
	for bad in '=x' 'NOEQUALS'; do
		run rt exec --env "$bad" c1 sh -c 'touch /tmp/ran'
		[ "$status" -ne 0 ] || fail "--env $bad: accepted"
		[[ "$output" == *"--env \`$bad\`: expected KEY=VALUE"* ]] || fail "--env $bad: $output"
	done
	run rt exec c1 test -e /tmp/ran
	[ "$status" -ne 0 ] || fail "a refused exec ran its process"
}

@test "exec --cwd sets the working directory" {
	start_sleeper
	run rt exec --cwd /tmp c1 pwd
	[ "$status" -eq 0 ] || fail "$output"
	[ "$output" = /tmp ]
}

@test "exec --user uid:gid" {
	start_sleeper
	run rt exec --user 1000:1000 c1 sh -c 'id -u; id -g'
	[ "$status" -eq 0 ] || fail "$output"
	[ "$output" = "$(printf '1000\n1000')" ]
	run rt exec -u 65534:65534 c1 sh -c 'id -u; id -g'
	[ "$output" = "$(printf '65534\n65534')" ]
}

@test "exec --user uid alone gives gid 0" {
	start_sleeper
	run rt exec --user 1000 c1 sh -c 'id -u; id -g'
	[ "$status" -eq 0 ] || fail "$output"
	[ "$output" = "$(printf '1000\n0')" ]
}

@test "exec --user: the process's status shows the ids" {
	start_sleeper
	run rt exec --user 1000:1000 c1 grep -E '^(Uid|Gid):' /proc/self/status
	[ "$status" -eq 0 ]
	grep -qP '^Uid:\t1000\t1000\t1000\t1000$' <<<"$output"
	grep -qP '^Gid:\t1000\t1000\t1000\t1000$' <<<"$output"
}

@test "exec --detach --pid-file: the process runs in the container" {
	start_sleeper
	rt_bg exec --detach --pid-file "$BUNDLE/exec.pid" c1 sleep 999
	[ "$status" -eq 0 ] || fail "exec -d: $output"
	[ -s "$BUNDLE/exec.pid" ]
	pid=$(cat "$BUNDLE/exec.pid")
	[[ "$pid" =~ ^[0-9]+$ ]]
	tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q '^sleep 999'
	[ "$(readlink "/proc/$pid/ns/pid")" = "$(readlink "/proc/$INIT_PID/ns/pid")" ]
	[ "$(readlink "/proc/$pid/ns/mnt")" = "$(readlink "/proc/$INIT_PID/ns/mnt")" ]
	# ps lists it.
	run rt ps c1
	[ "$status" -eq 0 ]
	grep -q "\b$pid\b" <<<"$output"
}

@test "exec --tty with --console-socket hands over a pty" {
	start_sleeper
	start_recvtty
	rt_bg exec -d -t --console-socket "$CONSOLE_SOCKET" c1 sh -c 'tty > /tmp/tty; echo pty-hello'
	[ "$status" -eq 0 ] || fail "exec -t: $output"
	wait_for_file "$BUNDLE/tty.info"
	grep -q '^pty /dev/pts/' "$BUNDLE/tty.info" || fail "$(cat "$BUNDLE/tty.info")"
	wait_for_file "$ROOTFS/tmp/tty"
	grep -q '^/dev/pts/[0-9]' "$ROOTFS/tmp/tty"
	for i in $(seq 50); do grep -q pty-hello "$BUNDLE/tty.out" 2>/dev/null && break; sleep 0.1; done
	grep -q pty-hello "$BUNDLE/tty.out"
}

@test "exec --preserve-fds passes extra fds" {
	start_sleeper
	echo passed-fd >"$BUNDLE/fd3"
	run bash -c "exec 3<'$BUNDLE/fd3'; timeout 30 '$AGENTRT' --root '$TEST_ROOT' exec --preserve-fds 1 c1 cat /proc/self/fd/3"
	[ "$status" -eq 0 ] || fail "$output"
	[ "$output" = passed-fd ]
}

@test "exec does not pass the caller's extra fds without --preserve-fds" {
	start_sleeper
	run bash -c "exec 3</ 4</etc; timeout 30 '$AGENTRT' --root '$TEST_ROOT' exec c1 ls /proc/self/fd"
	[ "$status" -eq 0 ] || fail "$output"
	# ls itself opens the directory as fd 3.
	for fd in $output; do
		[ "$fd" -le 3 ] || fail "fd $fd leaked into exec: $output"
	done
}

# runc takes exec's --no-new-privs as a boolean that overrides the config's noNewPrivileges
# either way (--no-new-privs=false clears it); agentrt read only the true form.  A profile that
# sets noNewPrivileges (agent) still has the last word.
@test "exec-no-new-privs-false: --no-new-privs=false clears the config's noNewPrivileges for the exec'd process, as runc; the agent profile keeps it" {
	update_config '.process.noNewPrivileges = true'
	start_sleeper
	nnp_of_exec() { # ID FLAG...
		local id=$1
		shift
		rm -f "$BUNDLE/e.pid"
		rt_bg exec -d "$@" --pid-file "$BUNDLE/e.pid" "$id" sleep 1000
		[ "$status" -eq 0 ] || fail "exec $*: $output"
		awk '/^NoNewPrivs:/ {print $2}' "/proc/$(cat "$BUNDLE/e.pid")/status"
	}
	[ "$(nnp_of_exec c1)" = 1 ] || fail "the config's noNewPrivileges not applied"
	[ "$(nnp_of_exec c1 --no-new-privs=false)" = 0 ] || fail "--no-new-privs=false: still set"
	[ "$(nnp_of_exec c1 --no-new-privs)" = 1 ] || fail "--no-new-privs: not set"
	agentrt_only "the agent profile is agentrt's"
	rt_bg --profile agent run -d --bundle "$BUNDLE" c2
	[ "$status" -eq 0 ] || fail "agent run: $output"
	rm -f "$BUNDLE/e.pid"
	rt_bg --profile agent exec -d --no-new-privs=false --pid-file "$BUNDLE/e.pid" c2 sleep 1000
	[ "$status" -eq 0 ] || fail "agent exec: $output"
	[ "$(awk '/^NoNewPrivs:/ {print $2}' "/proc/$(cat "$BUNDLE/e.pid")/status")" = 1 ] || fail "the agent profile's no_new_privs was cleared"
}

@test "exec --cap adds a capability to the effective set, none inheritable" {
	start_sleeper
	run rt exec --cap CAP_NET_RAW c1 grep -E '^Cap(Eff|Inh|Amb):' /proc/self/status
	[ "$status" -eq 0 ] || fail "$output"
	eff=$(awk '/^CapEff/{print $2}' <<<"$output")
	(( (0x$eff >> 13) & 1 )) || fail "CAP_NET_RAW not effective: $output"
	grep -qP '^CapInh:\t0{16}$' <<<"$output"
	grep -qP '^CapAmb:\t0{16}$' <<<"$output"
}

# runc's exec takes all five sets from the config; --cap then adds to ambient only where the
# config has an inheritable set (the kernel needs the bit there as well).
@test "exec: the config's inheritable and ambient sets as listed; --cap adds ambient only with an inheritable set" {
	update_config '.process.capabilities = {"inheritable": ["CAP_CHOWN", "CAP_SYSLOG"],
		"permitted": ["CAP_KILL", "CAP_CHOWN"], "effective": ["CAP_KILL"],
		"bounding": ["CAP_KILL", "CAP_CHOWN", "CAP_SYSLOG"], "ambient": ["CAP_CHOWN"]}'
	start_sleeper
	run rt exec c1 grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb):' /proc/self/status
	[ "$status" -eq 0 ] || fail "$output"
	want=$(printf 'CapInh:\t0000000400000001\nCapPrm:\t0000000000000021\nCapEff:\t0000000000000021\nCapBnd:\t0000000400000021\nCapAmb:\t0000000000000001')
	[ "$output" = "$want" ] || fail "$output"
	run rt exec --cap CAP_SYSLOG c1 grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb):' /proc/self/status
	[ "$status" -eq 0 ] || fail "$output"
	want=$(printf 'CapInh:\t0000000400000001\nCapPrm:\t0000000400000021\nCapEff:\t0000000400000021\nCapBnd:\t0000000400000021\nCapAmb:\t0000000400000001')
	[ "$output" = "$want" ] || fail "$output"
}

@test "exec --no-new-privs sets NoNewPrivs" {
	update_config '.process.noNewPrivileges = false'
	start_sleeper
	run rt exec c1 grep NoNewPrivs /proc/self/status
	grep -qP 'NoNewPrivs:\t0' <<<"$output"
	run rt exec --no-new-privs c1 grep NoNewPrivs /proc/self/status
	grep -qP 'NoNewPrivs:\t1' <<<"$output"
}

@test "exec into a stopped container fails" {
	set_args true
	run_detached c1
	wait_for_status c1 stopped
	run rt exec c1 true
	assert_clean_failure
}

@test "exec into a paused container fails unless --ignore-paused" {
	start_sleeper
	rt pause c1
	run rt exec c1 true
	assert_clean_failure
	[[ "$output" == *"cannot exec in a paused container"* ]] && [ "$status" -eq 255 ] || fail "message: $status: $output"
	rt resume c1
	run rt exec c1 true
	[ "$status" -eq 0 ] || fail "exec after resume: $output"
}

# runc: exec --ignore-paused starts the process in the frozen cgroup; it runs once the
# container is resumed.  The resume must not wait for the blocked exec (it used to: exec held
# the container's lock while its process sat frozen).
# exec-environ: the process `exec` forks is a clone of the runtime, so until its execve its
# /proc/PID/environ was the caller's environment (the engine's tokens) and its cmdline the
# caller's command line (--root, --env values), and it is in the container's pid namespace
# and cgroup: with --ignore-paused it waits frozen there for `resume`.  runc's reads "runc init"
# with only its own variables.  It reads "agentrt init" with nothing of the caller's now.
@test "exec-environ: the exec'd process carries neither the caller's environment nor its command line before its execve" {
	agentrt_only "the exec helper's name"
	start_sleeper
	rt pause c1
	H1_CALLER_SECRET=caller-token-$$ timeout 30 "$AGENTRT" --root "$TEST_ROOT" exec --ignore-paused \
		--env EXEC_ONLY=xyz c1 sh -c 'exit 0' </dev/null >"$BUNDLE/exec.out" 2>&1 &
	local execpid=$! rtpid= child= kids=
	# timeout's child is the runtime; the runtime's the process it forks
	for i in $(seq 100); do
		read -r kids <"/proc/$execpid/task/$execpid/children" 2>/dev/null || true
		rtpid=${kids%% *}
		[ -n "$rtpid" ] && read -r kids <"/proc/$rtpid/task/$rtpid/children" 2>/dev/null || true
		child=${kids%% *}
		[ -n "$child" ] && [ "$child" != "$rtpid" ] && break
		child=
		sleep 0.05
	done
	[ -n "$child" ] || { kill "$execpid"; fail "no exec child: $(cat "$BUNDLE/exec.out")"; }
	local env cmdline rtcmdline
	env=$(tr '\0' '\n' <"/proc/$child/environ")
	cmdline=$(tr '\0' ' ' <"/proc/$child/cmdline")
	rtcmdline=$(tr '\0' ' ' <"/proc/$rtpid/cmdline")
	run timeout 10 "$AGENTRT" --root "$TEST_ROOT" resume c1
	[ "$status" -eq 0 ] || { kill "$execpid"; fail "resume: $output"; }
	wait "$execpid" || fail "exec: $(cat "$BUNDLE/exec.out")"
	[[ "$env" != *H1_CALLER_SECRET* ]] || fail "the caller's environment in the exec child's: $env"
	[[ "$cmdline" == "agentrt init"* ]] || fail "exec child's cmdline: $cmdline"
	[[ "$cmdline" != *"$TEST_ROOT"* && "$cmdline" != *EXEC_ONLY* ]] ||
		fail "the caller's command line in the exec child's: $cmdline"
	# the runtime's own, on the host, stays as it was
	[[ "$rtcmdline" == *" exec --ignore-paused "* ]] || fail "the runtime's cmdline: $rtcmdline"
	[ "$(container_status c1)" = running ]
}

@test "exec --ignore-paused into a paused container: resume is not blocked, the process then runs" {
	start_sleeper
	rt pause c1
	timeout 30 "$AGENTRT" --root "$TEST_ROOT" exec --ignore-paused c1 sh -c 'echo ran >/ignore-paused.out' \
		</dev/null >"$BUNDLE/exec.out" 2>&1 &
	execpid=$!
	sleep 1
	# still frozen: the process has not run yet
	[ ! -e "$ROOTFS/ignore-paused.out" ] || fail "the exec ran in a paused container"
	run timeout 10 "$AGENTRT" --root "$TEST_ROOT" resume c1
	[ "$status" -eq 0 ] || { kill "$execpid"; fail "resume (status $status): $output"; }
	wait "$execpid" || fail "exec --ignore-paused: $(cat "$BUNDLE/exec.out")"
	[ "$(cat "$ROOTFS/ignore-paused.out")" = ran ] || fail "the exec's process did not run after resume"
	[ "$(container_status c1)" = running ]
}

# Found by tests/security/load.bats: a `pause` between exec's status check and its process
# joining the cgroup left exec blocked forever.  exec holds the container's lock shared until
# its process is in (pause takes it exclusively), so it waits for a command holding the lock.
@test "exec waits for a command that holds the container's lock (no pause can slip in)" {
	agentrt_only "runc has no such lock"
	start_sleeper
	marker=$BATS_TEST_TMPDIR/released
	flock -x "$TEST_ROOT/c1" sh -c "sleep 1; touch '$marker'" &
	holder=$!
	sleep 0.2
	run rt exec c1 true
	# exec could only finish once the holder had let go, i.e. after the marker
	[ -e "$marker" ] || fail_waiting=1
	wait "$holder"
	[ -z "${fail_waiting:-}" ] || fail "exec did not wait for the lock"
	[ "$status" -eq 0 ] || fail "exec: $output"
}

@test "exec of a nonexistent program fails, container keeps running" {
	start_sleeper
	run rt exec c1 /no/such/program
	assert_clean_failure
	[ "$(container_status c1)" = running ]
}

@test "exec: many sequential execs leave no processes behind" {
	start_sleeper
	for i in $(seq 20); do
		run rt exec c1 true
		[ "$status" -eq 0 ] || fail "exec $i: $output"
	done
	run rt ps --format json c1
	[ "$(jq length <<<"$output")" -eq 1 ] || fail "processes left: $output"
}

# exec-oom-score-adj: runc gives an exec'd process the container's process.oomScoreAdj, with or
# without --process; agentrt's kept the caller's (an engine's shim runs near -1000, which made
# every exec'd process of a container the last the OOM killer would pick).
@test "exec-oom-score-adj: an exec'd process gets the container's oomScoreAdj, not the caller's" {
	update_config '.process.oomScoreAdj = 50'
	start_sleeper
	jq '.process | .args = ["cat", "/proc/self/oom_score_adj"] | del(.oomScoreAdj)' \
		"$BUNDLE/config.json" >"$BUNDLE/process.json"
	run bash -c 'echo 300 >/proc/self/oom_score_adj &&
		"$@" exec c1 cat /proc/self/oom_score_adj &&
		"$@" exec --process "'"$BUNDLE/process.json"'" c1' bash timeout 30 "$AGENTRT" --root "$TEST_ROOT"
	[ "$status" -eq 0 ] || fail "$output"
	[ "${lines[0]}" = 50 ] && [ "${lines[1]}" = 50 ] || fail "oom_score_adj: $output"
}
