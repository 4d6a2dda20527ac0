#!/usr/bin/env bats
# lifecycle.bats - create/start/state/kill/delete and their error cases.

load helpers

# A process that records every signal it gets in /tmp/signals (pid 1 ignores signals it
# has no handler for, so the handlers are needed to observe delivery).
trap_cmd='for s in TERM HUP USR1 USR2 INT; do trap "echo $s >> /tmp/signals" $s; done
echo started > /tmp/marker; while :; do sleep 0.1; done'

@test "create leaves the container in status created, the program not yet running" {
	set_cmd 'echo started > /tmp/marker; exec sleep 1000'
	create_container c1
	[ "$status" -eq 0 ] || fail "create: $output"
	[ "$(container_status c1)" = created ]
	pid=$(container_pid c1)
	[ "$pid" -gt 0 ]
	[ -d "/proc/$pid" ] || fail "init pid $pid does not exist"
	# The user program has not been exec'd: no marker, and the cmdline is not ours.
	sleep 0.3
	[ ! -e "$ROOTFS/tmp/marker" ] || fail "program ran before start"
	run cat "/proc/$pid/cmdline"
	[[ "$output" != *marker* ]] || fail "init already runs the program: $output"
	[[ "$output" != sleep* ]] || fail "init already runs the program: $output"
}

@test "start runs the program, status running" {
	set_cmd 'echo started > /tmp/marker; exec sleep 1000'
	create_container c1
	[ "$status" -eq 0 ] || fail "create: $output"
	pid=$(container_pid c1)
	run rt start c1
	[ "$status" -eq 0 ] || fail "start: $status $output"
	wait_for_file "$ROOTFS/tmp/marker"
	[ "$(container_status c1)" = running ]
	# The same pid now runs the program.
	[ "$(container_pid c1)" = "$pid" ]
	for i in $(seq 50); do
		tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q '^sleep 1000' && break
		sleep 0.1
	done
	tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q '^sleep 1000'
}

@test "state JSON has the OCI fields and an RFC 3339 created time" {
	set_args sleep 1000
	update_config '.annotations = {"org.agentrt.test": "yes"}'
	create_container c1
	[ "$status" -eq 0 ] || fail "create: $output"
	run rt state c1
	[ "$status" -eq 0 ]
	echo "$output" | jq -e . >/dev/null || fail "state is not JSON: $output"
	[ "$(jq -r .ociVersion <<<"$output")" != null ]
	[ "$(jq -r .id <<<"$output")" = c1 ]
	[ "$(jq -r .status <<<"$output")" = created ]
	[ "$(jq -r '.pid | type' <<<"$output")" = number ]
	[ "$(jq -r .bundle <<<"$output")" = "$BUNDLE" ]
	created=$(jq -r .created <<<"$output")
	[[ "$created" =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})$ ]] ||
		fail "created is not RFC 3339: $created"
	# ... and close to now.
	t=$(date -d "$created" +%s)
	now=$(date +%s)
	[ $((now - t)) -lt 120 ] && [ $((t - now)) -lt 5 ]
	[ "$(jq -r '.annotations["org.agentrt.test"]' <<<"$output")" = yes ]
}

# state-indented: runc prints `state` indented by two spaces, one key a line, annotations before
# owner ("status": "running" is what a line-based script greps for); agentrt printed it on one
# line.  The JSON is the same.
@test "state-indented: state prints one key a line, indented by two spaces, as runc" {
	set_args sleep 1000
	update_config '.annotations = {"org.agentrt.test": "yes"}'
	create_container c1
	[ "$status" -eq 0 ] || fail "create: $output"
	run rt state c1
	[ "$status" -eq 0 ] || fail "$output"
	jq -e '.status == "created"' <<<"$output" >/dev/null || fail "not JSON: $output"
	[ "${lines[0]}" = "{" ] && [ "${lines[-1]}" = "}" ] || fail "not one key a line: $output"
	[ "${lines[1]}" = "  \"ociVersion\": \"$(jq -r .ociVersion <<<"$output")\"," ] || fail "line 2: ${lines[1]}"
	grep -qx '  "status": "created",' <<<"$output" || fail "no status line: $output"
	grep -qx '    "org.agentrt.test": "yes"' <<<"$output" || fail "annotations not nested: $output"
	[ "${lines[-2]}" = '  "owner": ""' ] || fail "owner not last: $output"
}

# bundle-path-resolved: runc chdirs into --bundle and records where it is (getcwd: absolute,
# clean, links resolved) as the state's bundle, the hooks' too; agentrt recorded what it was
# given: `--bundle DIR/./`, `DIR//sub/..` and a link to DIR gave "DIR/./" (and "DIR/.//rootfs"),
# "DIR//sub/.." and the link's path.
@test "bundle-path-resolved: the state's bundle and rootfs are the bundle's resolved path, as runc" {
	local b i=0 want
	want=$(realpath "$BUNDLE")
	set_args sleep 100
	mkdir "$BUNDLE/sub"
	ln -s "$BUNDLE" "$BUNDLE/link"
	cd "$BUNDLE" # (for the relative one)
	update_config ".hooks.prestart = [{\"path\": \"/bin/sh\", \"args\": [\"sh\", \"-c\", \"cat > $BUNDLE/prestart.json\"]}]"
	for b in "$BUNDLE/./" "$BUNDLE//sub/.." "$BUNDLE/link" "sub/../"; do
		i=$((i + 1))
		rm -f "$BUNDLE/prestart.json"
		rt_bg create --bundle "$b" "c$i"
		[ "$status" -eq 0 ] || fail "create --bundle $b: $output"
		run rt state "c$i"
		[ "$status" -eq 0 ] || fail "state: $output"
		jq -e --arg b "$want" '.bundle == $b and .rootfs == $b + "/rootfs"' <<<"$output" >/dev/null ||
			fail "--bundle $b: state $output"
		jq -e --arg b "$want" '.bundle == $b' "$BUNDLE/prestart.json" >/dev/null ||
			fail "--bundle $b: prestart hook's state $(cat "$BUNDLE/prestart.json")"
		rt delete --force "c$i"
	done
}

# flags-after-id: runc's CLI (urfave/cli) moves the flags given after the container id to the
# front (not exec's nor ps's, whose words after the id are the command's): `run ID -d`,
# `create ID --bundle B --pid-file P`, `kill ID KILL --all` and `delete ID --force` work with
# runc; agentrt said "expected exactly one container id".
@test "flags-after-id: create, run, kill and delete read flags given after the id, as runc" {
	set_args sleep 100
	cd "$BUNDLE"
	rt_bg run c1 -d
	[ "$status" -eq 0 ] || fail "run c1 -d: $output"
	[ "$(container_status c1)" = running ] || fail "c1 is $(container_status c1)"
	rt_bg create c2 --bundle "$BUNDLE" --pid-file "$BUNDLE/c2.pid"
	[ "$status" -eq 0 ] || fail "create c2 --bundle --pid-file: $output"
	[ "$(cat "$BUNDLE/c2.pid")" = "$(container_pid c2)" ] || fail "pid file: $(cat "$BUNDLE/c2.pid")"
	# exec's words after the id are the command's: --user is a program name there
	run rt exec c1 --user 1000 id
	[ "$status" -ne 0 ] && [[ "$output" == *--user*"not found"* ]] || fail "exec c1 --user: $status $output"
	run rt kill c1 KILL --all
	[ "$status" -eq 0 ] || fail "kill c1 KILL --all: $output"
	wait_for_status c1 stopped
	run rt delete c2 --force
	[ "$status" -eq 0 ] || fail "delete c2 --force: $output"
	run rt state c2
	[ "$status" -ne 0 ] || fail "c2 is still there: $output"
	run rt delete c1 -f
	[ "$status" -eq 0 ] || fail "delete c1 -f: $output"
	[ -z "$(rt list -q)" ] || fail "left: $(rt list -q)"
}

@test "kill without a signal sends TERM" {
	set_cmd "$trap_cmd"
	run_detached c1
	[ "$status" -eq 0 ] || fail "run -d: $output"
	wait_for_file "$ROOTFS/tmp/marker"
	run rt kill c1
	[ "$status" -eq 0 ] || fail "kill: $output"
	wait_for_file "$ROOTFS/tmp/signals"
	grep -qx TERM "$ROOTFS/tmp/signals"
}

@test "kill accepts a signal by name, with SIG prefix, and by number" {
	set_cmd "$trap_cmd"
	run_detached c1
	[ "$status" -eq 0 ] || fail "run -d: $output"
	wait_for_file "$ROOTFS/tmp/marker"
	for sig in HUP SIGUSR1 12; do
		run rt kill c1 "$sig"
		[ "$status" -eq 0 ] || fail "kill $sig: $output"
	done
	for i in $(seq 50); do
		[ "$(wc -l <"$ROOTFS/tmp/signals" 2>/dev/null)" -ge 3 ] && break
		sleep 0.1
	done
	sort "$ROOTFS/tmp/signals" | tr '\n' ' ' | grep -qx 'HUP USR1 USR2 '
}

# kill-plus-number: runc reads a signal number with Go's strconv.Atoi, which takes a leading
# `+`: `runc kill ID +1` sends SIGHUP and `+0` checks liveness.  agentrt refused both as
# invalid signals, so an engine or a script that wrote the sign failed against it.
@test "kill-plus-number: kill ID +N sends signal N and +0 checks liveness, as runc" {
	set_cmd "$trap_cmd"
	run_detached c1
	[ "$status" -eq 0 ] || fail "run -d: $output"
	wait_for_file "$ROOTFS/tmp/marker"
	for sig in +1 +10 +0; do
		run rt kill c1 "$sig"
		[ "$status" -eq 0 ] || fail "kill $sig: $output"
	done
	for i in $(seq 50); do
		[ "$(wc -l <"$ROOTFS/tmp/signals" 2>/dev/null)" -ge 2 ] && break
		sleep 0.1
	done
	sort "$ROOTFS/tmp/signals" | tr '\n' ' ' | grep -qx 'HUP USR1 ' || fail "signals seen: $(cat "$ROOTFS/tmp/signals")"
	[ "$(container_status c1)" = running ]
}

@test "kill KILL stops the container, its process is gone" {
	set_args sleep 1000
	run_detached c1
	[ "$status" -eq 0 ] || fail "run -d: $output"
	pid=$(container_pid c1)
	run rt kill c1 KILL
	[ "$status" -eq 0 ]
	wait_for_status c1 stopped
	for i in $(seq 50); do
		[ -d "/proc/$pid" ] || break
		grep -q '^State:.*Z' "/proc/$pid/status" 2>/dev/null && break
		sleep 0.1
	done
	! grep -q '^State:.*[RS]' "/proc/$pid/status" 2>/dev/null
}

@test "kill with a bad signal name fails" {
	set_args sleep 1000
	run_detached c1
	[ "$status" -eq 0 ] || fail "run -d: $output"
	for sig in SIGNOPE 0x9 -1 99999 KILLX; do
		run rt kill c1 "$sig"
		assert_clean_failure
	done
	[ "$(container_status c1)" = running ]
}

@test "kill with signal 0 checks liveness and delivers nothing (also --all)" {
	set_cmd "$trap_cmd"
	run_detached c1
	[ "$status" -eq 0 ] || fail "run -d: $output"
	wait_for_file "$ROOTFS/tmp/marker"
	run rt kill c1 0
	[ "$status" -eq 0 ] || fail "kill 0: $output"
	run rt kill --all c1 0
	[ "$status" -eq 0 ] || fail "kill --all 0: $output"
	# nothing was delivered, and --all 0 did not leave the cgroup frozen
	rt kill c1 HUP
	wait_for_file "$ROOTFS/tmp/signals"
	sleep 0.2
	[ "$(cat "$ROOTFS/tmp/signals")" = HUP ] || fail "signals seen: $(cat "$ROOTFS/tmp/signals")"
	[ "$(container_status c1)" = running ]
	rt kill c1 KILL
	wait_for_status c1 stopped
	run rt kill c1 0
	assert_clean_failure
	assert_output_contains "not running"
}

@test "kill on a stopped container fails with \"container not running\"" {
	set_args true
	run_detached c1
	[ "$status" -eq 0 ] || fail "run -d: $output"
	wait_for_status c1 stopped
	run rt kill c1 KILL
	assert_clean_failure
	assert_output_contains "not running"
}

@test "kill --all on a stopped container succeeds" {
	set_args true
	run_detached c1
	[ "$status" -eq 0 ] || fail "run -d: $output"
	wait_for_status c1 stopped
	run rt kill --all c1 KILL
	[ "$status" -eq 0 ] || fail "kill --all: $output"
}

@test "kill --all signals every process of the container" {
	set_cmd 'sleep 1000 & sleep 1000 & echo started > /tmp/marker; wait'
	run_detached c1
	[ "$status" -eq 0 ] || fail "run -d: $output"
	wait_for_file "$ROOTFS/tmp/marker"
	run rt kill --all c1 KILL
	[ "$status" -eq 0 ] || fail "kill --all: $output"
	wait_for_status c1 stopped
}

@test "kill KILL without a pid namespace of its own kills every process of the container, also once its init is gone (as runc 1.2)" {
	update_config '.linux.namespaces |= map(select(.type != "pid"))'
	set_args sleep 1000
	for init_gone in no yes; do
		run_detached c1
		[ "$status" -eq 0 ] || fail "run -d: $output"
		init=$(container_pid c1)
		for i in 1 2 3; do rt_bg exec -d c1 sleep 1000; done
		cg=$(jq -r .linux.cgroupsPath "$BUNDLE/config.json")
		procs=/sys/fs/cgroup/pids$cg/cgroup.procs
		[ -e "$procs" ] || procs=/sys/fs/cgroup$cg/cgroup.procs
		pids=$(tr '\n' ' ' <"$procs")
		[ "$(wc -w <<<"$pids")" -eq 4 ] || fail "processes: $pids"
		if [ "$init_gone" = yes ]; then
			kill -9 "$init"
			for i in $(seq 50); do kill -0 "$init" 2>/dev/null || break; sleep 0.1; done
		fi
		run rt kill c1 KILL
		[ "$status" -eq 0 ] || fail "kill (init gone: $init_gone): $output"
		for p in $pids; do
			for i in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
			! kill -0 "$p" 2>/dev/null || fail "process $p lives on (init gone: $init_gone)"
		done
		run rt delete c1
		[ "$status" -eq 0 ] || fail "delete: $output"
	done
}

@test "delete of a running container without --force fails and keeps it" {
	set_args sleep 1000
	run_detached c1
	[ "$status" -eq 0 ] || fail "run -d: $output"
	pid=$(container_pid c1)
	run rt delete c1
	assert_clean_failure
	[ "$(container_status c1)" = running ]
	kill -0 "$pid"
}

@test "delete --force kills a running container and removes it" {
	set_args sleep 1000
	run_detached c1
	[ "$status" -eq 0 ] || fail "run -d: $output"
	pid=$(container_pid c1)
	run rt delete --force c1
	[ "$status" -eq 0 ] || fail "delete --force: $output"
	run rt state c1
	assert_clean_failure
	for i in $(seq 50); do
		[ -d "/proc/$pid" ] || break
		sleep 0.1
	done
	[ ! -d "/proc/$pid" ] || grep -q '^State:.*Z' "/proc/$pid/status"
	[ -z "$(rt list -q)" ]
}

@test "delete of a created container removes it and its init" {
	set_args sleep 1000
	create_container c1
	[ "$status" -eq 0 ] || fail "create: $output"
	pid=$(container_pid c1)
	run rt delete c1
	[ "$status" -eq 0 ] || fail "delete: $output"
	for i in $(seq 50); do
		[ -d "/proc/$pid" ] || break
		sleep 0.1
	done
	[ ! -d "/proc/$pid" ] || grep -q '^State:.*Z' "/proc/$pid/status"
	[ -z "$(rt list -q)" ]
}

@test "delete of a stopped container removes its state" {
	set_args true
	run_detached c1
	[ "$status" -eq 0 ] || fail "run -d: $output"
	wait_for_status c1 stopped
	run rt delete c1
	[ "$status" -eq 0 ] || fail "delete: $output"
	[ -z "$(rt list -q)" ]
	[ -z "$(ls -A "$TEST_ROOT")" ] || fail "left in --root: $(ls -A "$TEST_ROOT")"
}

@test "create with a duplicate id fails and leaves the first container alone" {
	set_args sleep 1000
	create_container c1
	[ "$status" -eq 0 ] || fail "create: $output"
	pid=$(container_pid c1)
	create_container c1
	assert_clean_failure
	[ "$(container_status c1)" = created ]
	[ "$(container_pid c1)" = "$pid" ]
	[ "$(rt list -q | wc -l)" -eq 1 ]
}

# cancel_create SIG MARKER [CMD]: create c1 in the background with SIG at its default (bats'
# `&` ignores SIGINT), wait (10 s at most) for MARKER (a hook's), eval CMD, send SIG, wait (10 s at most)
# for the create to end; $status and $output (its stderr) as `run` sets them.  CANCEL_VERB=run:
# a foreground `run` instead of the create.
cancel_create() {
	local sig=$1 marker=$2 pid i
	env --default-signal "$AGENTRT" --root "$TEST_ROOT" "${CANCEL_VERB:-create}" --bundle "$BUNDLE" c1 \
		</dev/null >"$BUNDLE/c1.out" 2>"$BUNDLE/c1.err" &
	pid=$!
	for ((i = 0; i < 100; i++)); do [ -e "$marker" ] && break; sleep 0.1; done
	[ -e "$marker" ] || { kill -KILL "$pid"; wait "$pid" || true; fail "SIG$sig: no $marker: $(cat "$BUNDLE/c1.err")"; }
	[ -z "${3:-}" ] || eval "$3"
	kill -0 "$pid" || fail "create ended before SIG$sig: $(cat "$BUNDLE/c1.err")"
	kill "-$sig" "$pid"
	for ((i = 0; i < 100; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	if kill -0 "$pid" 2>/dev/null; then
		kill -KILL "$pid"
		wait "$pid" || true
		fail "create still running 10 s after SIG$sig: $(cat "$BUNDLE/c1.err")"
	fi
	status=0
	wait "$pid" || status=$?
	output=$(cat "$BUNDLE/c1.err")
}

# create-cancelled: an engine cancels a create (containerd's shim, conmon: SIGTERM when its
# context ends; a terminal's ^C: SIGINT; a closed session: SIGHUP), often while a hook that
# never ends holds it.  Killed there, ours left a `stopped` entry, its cgroups, its monitor and
# the hook (running on) until `delete`.  runc 1.1.5 ignores SIGTERM during create: it ends
# the hook's wait and returns 0 with a created container (a SIGKILL leaves its state
# directory and cgroups, and its `delete` says the container does not exist).  Ours fails
# with one line saying so, having removed what it made: no entry, no cgroup (teardown),
# the hook and what it started killed.
@test "create-cancelled: SIGTERM, SIGINT or SIGHUP during a hook: create fails and leaves nothing" {
	agentrt_only "runc 1.1.5 ignores SIGTERM during create and waits for the hook"
	set_args sleep 1000
	local sig phase marker hookpid
	for t in TERM:prestart INT:createRuntime HUP:createContainer TERM:createContainer; do
		sig=${t%%:*} phase=${t#*:}
		# (createContainer runs before pivot_root: the bundle's path is there too)
		marker=$BUNDLE/hook.pid
		rm -f "$marker"
		jq --arg p "$phase" --arg m "$marker" '.hooks = {($p): [{"path": "/bin/sh",
			"args": ["sh", "-c", "sleep 31.97 & echo $! > " + $m + "; wait"]}]}' \
			"$BUNDLE/config.json" >"$BUNDLE/config.new" && mv "$BUNDLE/config.new" "$BUNDLE/config.json"
		cancel_create "$sig" "$marker"
		assert_clean_failure
		assert_output_contains "create \`c1\`: "
		# (createContainer is the init's to run: create was waiting for the init)
		[ "$phase" = createContainer ] || assert_output_contains "create \`c1\`: $phase hook #0"
		assert_output_contains "cancelled by SIG$sig"
		[ "$(grep -c . <<<"$output")" -eq 1 ] || fail "not one line: $output"
		[ -z "$(rt list -q)" ] || fail "SIG$sig during $phase: left: $(rt list)"
		if [ "$phase" != createContainer ]; then # (else a pid of the container's namespace)
			# the hook's child, on the host: killed with the hook (not left to init)
			hookpid=$(cat "$marker")
			for ((i = 0; i < 50; i++)); do [ -e "/proc/$hookpid" ] || break; sleep 0.1; done
			[ ! -e "/proc/$hookpid" ] || { kill "$hookpid"; fail "SIG$sig during $phase: the hook's sleep runs on"; }
		fi
	done
	# the next create of that id is not in anyone's way
	update_config 'del(.hooks)'
	create_container c1
	[ "$status" -eq 0 ] || fail "create after the cancels: $output"
}

# run-cancelled: a foreground `run` is its own create: a SIGTERM (an engine's cancel) or a SIGINT
# (^C) while a hook holds it must cancel it as it cancels a create.  Ours blocked every signal
# for forwarding before the create, so the cancel waited for the hook (the SIGTERM was then
# forwarded to the container's init, which ignores it: run went on).  runc 1.1.5 does the same:
# it queues the signal, finishes the create after the hook and forwards it.  Ours fails with
# one line, the hook and what it started killed, nothing left.
@test "run-cancelled: SIGTERM or SIGINT during a hook of a foreground run: run fails and leaves nothing" {
	agentrt_only "runc 1.1.5 queues the signal until the hook ends, then forwards it"
	set_args sleep 1000
	local sig phase marker hookpid
	for t in TERM:createRuntime INT:prestart TERM:createContainer; do
		sig=${t%%:*} phase=${t#*:}
		marker=$BUNDLE/hook.pid
		rm -f "$marker"
		jq --arg p "$phase" --arg m "$marker" '.hooks = {($p): [{"path": "/bin/sh",
			"args": ["sh", "-c", "sleep 31.95 & echo $! > " + $m + "; wait"]}]}' \
			"$BUNDLE/config.json" >"$BUNDLE/config.new" && mv "$BUNDLE/config.new" "$BUNDLE/config.json"
		CANCEL_VERB=run cancel_create "$sig" "$marker"
		assert_clean_failure
		assert_output_contains "create \`c1\`: "
		assert_output_contains "cancelled by SIG$sig"
		[ "$(grep -c . <<<"$output")" -eq 1 ] || fail "not one line: $output"
		[ ! -s "$BUNDLE/c1.out" ] || fail "SIG$sig during $phase: the container ran: $(cat "$BUNDLE/c1.out")"
		[ -z "$(rt list -q)" ] || fail "SIG$sig during $phase: left: $(rt list)"
		if [ "$phase" != createContainer ]; then # (else a pid of the container's namespace)
			hookpid=$(cat "$marker")
			for ((i = 0; i < 50; i++)); do [ -e "/proc/$hookpid" ] || break; sleep 0.1; done
			[ ! -e "/proc/$hookpid" ] || { kill "$hookpid"; fail "SIG$sig during $phase: the hook's sleep runs on"; }
		fi
	done
}

# create-killed: a create SIGKILLed (an engine's last word, the OOM killer) cleans nothing.  What
# it left must not be in the way: `list` shows it `stopped`, a new `create` of that id takes
# its place (its cgroup, its monitor, its state removed first), `delete` removes it; the hook
# it was waiting for and what that started die with it (hook-dies-with-runtime).  runc
# 1.1.5 leaves its state directory and cgroups: its `list` omits the id, its `delete` says it
# does not exist and its next `create` of the id fails ("container with id exists").
@test "create-killed: after a create killed by SIGKILL, list shows it stopped, create of its id and delete cope" {
	agentrt_only "runc 1.1.5 keeps the id taken and cannot delete it"
	set_args sleep 1000
	local hookpid cg second
	for next in create delete; do
		rm -f "$BUNDLE/hook.pid"
		jq --arg m "$BUNDLE/hook.pid" '.hooks = {"createRuntime": [{"path": "/bin/sh",
			"args": ["sh", "-c", "sleep 31.96 & echo $! > " + $m + "; wait"]}]}' \
			"$BUNDLE/config.json" >"$BUNDLE/config.new" && mv "$BUNDLE/config.new" "$BUNDLE/config.json"
		# (a create that is alive is left alone: the second fails, the first goes on)
		cancel_create KILL "$BUNDLE/hook.pid" 'second=0; rt create --bundle "$BUNDLE" c1 </dev/null &>/dev/null || second=$?'
		[ "$status" -eq 137 ] || fail "create: $status: $output"
		[ "$second" -ne 0 ] || fail "a second create while the first ran: exit 0"
		# hook-dies-with-runtime: the hook and what it started go with the killed create
		# (runc 1.1.5 leaves them running: its hook's `sh` and `sleep` outlive it)
		hookpid=$(cat "$BUNDLE/hook.pid")
		for ((i = 0; i < 50; i++)); do [ -e "/proc/$hookpid" ] || break; sleep 0.1; done
		[ ! -e "/proc/$hookpid" ] || { kill "$hookpid"; fail "the hook's sleep outlived the killed create"; }
		# (`state` says its create did not finish)
		[ "$(rt list | awk 'NR > 1 {print $1, $3}')" = "c1 stopped" ] ||
			fail "list after SIGKILL: $(rt list)"
		# its pids cgroup was made (the leak `delete` or the next create must remove)
		cg=$(ls -d /sys/fs/cgroup/pids/"$CG_PARENT"/*/ /sys/fs/cgroup/"$CG_PARENT"/*/ 2>/dev/null | head -1)
		[ -n "$cg" ] || fail "no cgroup was made before the hook"
		update_config 'del(.hooks)'
		if [ "$next" = create ]; then
			create_container c1
			[ "$status" -eq 0 ] || fail "create of the killed create's id: $output"
			[ "$(container_status c1)" = created ] || fail "$(rt list)"
			rt delete --force c1
		else
			rt delete c1 || fail "delete of the killed create"
		fi
		[ -z "$(rt list -q)" ] || fail "after $next: $(rt list)"
		[ ! -d "$cg" ] || fail "after $next: cgroup $cg left"
	done
}

# create-killed-createContainer: a create SIGKILLed while the init runs a createContainer hook
# (in the container's namespaces) left the init running the hook to its end, and the hook's
# children with it.  runc 1.1.5 too (its init waits for the hook, then finds its parent gone).
# Now the init dies with its create while such a hook runs, and with it (the pid namespace's
# first process) the hook and all it started.
@test "create-killed-createContainer: the hook and what it started die with a create killed during a createContainer hook" {
	agentrt_only "runc 1.1.5's init runs the hook to its end"
	set_args sleep 1000
	local left
	update_config '.hooks = {"createContainer": [{"path": "/bin/sh",
		"args": ["sh", "-c", "sleep 31.93 & echo started > hook.started; wait"]}]}'
	cancel_create KILL "$BUNDLE/hook.started"
	[ "$status" -eq 137 ] || fail "create: $status: $output"
	for ((i = 0; i < 50; i++)); do
		left=$(grep -lsxz 31.93 /proc/[0-9]*/cmdline) || break
		sleep 0.1
	done
	[ -z "$left" ] || fail "the hook's sleep outlived the killed create: $left"
	rt delete c1 || fail "delete of the killed create"
	[ -z "$(rt list -q)" ] || fail "left: $(rt list)"
}

# pid-reuse: the container's init died (killed from the host, the OOM killer) and its pid went to
# an unrelated host process (pidat: a process at that pid, chrooted to a directory of ours).
# `state` must say stopped, and kill, kill --all, pause, exec, ps and delete --force must never
# signal, freeze or enter that process: it is alive, not stopped, with no new process in its
# root afterwards.  Also (agentrt only) a state.json that names a live host `sleep` with the
# init's start time.  runc 1.1.5 checks its init's start time too.
pid_reuse_check() { # VICTIM-PID VICTIM-ROOT WHAT
	local vp=$1 vroot=$2 what=$3 st f n=0
	[ "$(state_field c1 .status)" = stopped ] || fail "$what: state: $(rt state c1)"
	[ "$(state_field c1 .pid)" = 0 ] || fail "$what: state names pid $(state_field c1 .pid)"
	run rt kill c1 KILL
	[ "$status" -ne 0 ] || fail "$what: kill KILL of a stopped container: exit 0"
	rt kill --all c1 KILL || true
	run rt kill c1 0
	[ "$status" -ne 0 ] || fail "$what: kill 0 said the stopped container's init is alive"
	rt pause c1 &>/dev/null || true
	run rt exec c1 sh -c 'echo entered > /entered'
	[ "$status" -ne 0 ] || fail "$what: exec into a stopped container: exit 0: $output"
	# (runc says null, ours [])
	rt ps --format json c1 | jq -e --argjson p "$vp" '(. // []) | index($p) == null' >/dev/null ||
		fail "$what: ps: $(rt ps --format json c1)"
	rt delete --force c1 || fail "$what: delete --force"
	[ -z "$(rt list -q)" ] || fail "$what: left: $(rt list)"
	read -r st <"/proc/$vp/stat" || fail "$what: the host process $vp died"
	st=${st##*) }
	[ "${st%% *}" = S ] || fail "$what: the host process $vp is in state ${st%% *}"
	[ ! -e "$vroot/entered" ] || fail "$what: exec ran in the host process's root"
	for f in /proc/[0-9]*/root; do
		[ "$(readlink "$f" 2>/dev/null)" = "$vroot" ] && n=$((n + 1))
	done
	[ "$n" -eq 1 ] || fail "$what: $n processes in the host process's root, not 1"
}

@test "pid-reuse: an init's pid taken by a host process: state says stopped, kill, pause, exec, ps and delete --force leave that process alone" {
	[ -x "$HELPER_DIR/pidat" ] || skip "pidat not built (make test-helpers)"
	set_args sleep 1000
	local pid helper vp victim=$BUNDLE/victim
	mkdir -p "$victim"
	create_container c1
	[ "$status" -eq 0 ] || fail "create: $output"
	pid=$(container_pid c1)
	kill -KILL "$pid"
	for ((i = 0; i < 50; i++)); do [ -e "/proc/$pid" ] || break; sleep 0.1; done
	[ ! -e "/proc/$pid" ] || fail "the init $pid did not go"
	"$HELPER_DIR/pidat" "$pid" "$victim" >"$BUNDLE/pidat.out" 2>"$BUNDLE/pidat.err" &
	helper=$!
	for ((i = 0; i < 50; i++)); do [ -s "$BUNDLE/pidat.out" ] && break; sleep 0.1; done
	if [ ! -s "$BUNDLE/pidat.out" ]; then
		wait "$helper" && rc=0 || rc=$?
		[ "$rc" -eq 3 ] && skip "pid $pid was taken meanwhile"
		fail "pidat: $(cat "$BUNDLE/pidat.err")"
	fi
	[ "$(readlink "/proc/$pid/root")" = "$victim" ] || fail "pidat: not at $pid"
	pid_reuse_check "$pid" "$victim" "pidat at $pid"
	kill "$pid"
	wait "$helper" || true
	is_agentrt || return 0
	# the state names a host process that is alive, the init's start time kept
	create_container c1
	[ "$status" -eq 0 ] || fail "create: $output"
	pid=$(container_pid c1)
	cp -a "$ROOTFS/bin" "$victim/"
	chroot "$victim" /bin/sleep 1000 &
	vp=$!
	kill -KILL "$pid"
	for ((i = 0; i < 50; i++)); do [ -e "/proc/$pid" ] || break; sleep 0.1; done
	jq -c --argjson p "$vp" '.pid = $p' "$TEST_ROOT/c1/state.json" >"$BUNDLE/state.new" &&
		mv "$BUNDLE/state.new" "$TEST_ROOT/c1/state.json"
	pid_reuse_check "$vp" "$victim" "state naming host sleep $vp"
	kill "$vp"
	wait "$vp" || true
}

@test "commands on an unknown id fail with \"does not exist\"" {
	for cmd in state start "kill" delete pause resume ps "exec"; do
		case $cmd in
		exec) run rt exec nosuch true ;;
		*) run rt $cmd nosuch ;;
		esac
		assert_clean_failure
		assert_output_contains "does not exist"
	done
}

# A mistyped flag is named as such (urfave/cli says "flag provided but not
# defined"), not taken for a container id or a second argument.
@test "an unknown option is reported as one by every verb" {
	set_args sleep 100
	create_container c1
	[ "$status" -eq 0 ] || fail "create: $output"
	for cmd in state start "kill" delete pause resume ps events update; do
		run rt $cmd --no-such-flag c1
		assert_clean_failure
		if is_agentrt; then
			assert_output_contains "unknown option \`--no-such-flag\`"
		else
			assert_output_contains "no-such-flag"
		fi
	done
	[ "$(container_status c1)" = created ]
}

# The init of a created container is its pid namespace's pid 1, which the
# kernel spares any signal it has no handler for: TERM did nothing, and an
# engine stopping a never-started container waited for its KILL timeout.
# As with runc, HUP, INT and TERM end it before start.
@test "kill TERM ends a created container (created-init-ignores-term)" {
	set_cmd 'echo ran > /tmp/ran; sleep 100'
	local sig id pid
	for sig in TERM INT HUP; do
		id=kt-$sig
		create_container "$id"
		[ "$status" -eq 0 ] || fail "create: $output"
		pid=$(container_pid "$id")
		run rt kill "$id" "$sig"
		[ "$status" -eq 0 ] || fail "kill $sig: $output"
		wait_for_status "$id" stopped 5
		[ ! -d "/proc/$pid" ] || [ "$(awk '{print $3}' "/proc/$pid/stat")" = Z ] ||
			fail "init $pid still alive after $sig: $(grep State "/proc/$pid/status")"
		[ ! -e "$ROOTFS/tmp/ran" ] || fail "the program ran"
		run rt delete "$id"
		[ "$status" -eq 0 ] || fail "delete: $output"
	done
}

# ... and the handler is gone at the exec: the program starts with TERM at its
# default (caught by nobody), also when whoever started the runtime ignored it
# (as with runc and crun; agentrt used to pass an ignored TERM on).
@test "the container's program does not inherit the init's TERM handler" {
	set_args sleep 100
	create_container kh
	[ "$status" -eq 0 ] || fail "create: $output"
	run rt start kh
	[ "$status" -eq 0 ] || fail "start: $status $output"
	local pid cgt ign
	pid=$(container_pid kh)
	cgt=$(awk '/^SigCgt/ {print $2}' "/proc/$pid/status")
	[ $((0x$cgt & (1 << 14))) -eq 0 ] || fail "TERM caught by the program: SigCgt $cgt"
	# `timeout` (rt) would catch TERM itself, so the runtime is called directly
	(
		trap '' TERM
		exec "$AGENTRT" --root "$TEST_ROOT" create --bundle "$BUNDLE" ki </dev/null >/dev/null 2>&1
	) || fail "create with TERM ignored"
	run rt start ki
	[ "$status" -eq 0 ] || fail "start: $status $output"
	pid=$(container_pid ki)
	ign=$(awk '/^SigIgn/ {print $2}' "/proc/$pid/status")
	[ "$((0x$ign))" -eq 0 ] || fail "the caller's ignored TERM reached the program: SigIgn $ign"
	cgt=$(awk '/^SigCgt/ {print $2}' "/proc/$pid/status")
	[ $((0x$cgt & (1 << 14))) -eq 0 ] || fail "TERM caught: SigCgt $cgt"
}

# A verb that waited for the container's lock while a delete removed it found
# a state directory without state.json and said "still being created"
# (start-after-delete-creating).  Both wait on the lock held here; whichever
# goes first, start either ran the container or says it does not exist.
@test "start racing delete --force: started, or \"does not exist\" (start-after-delete-creating)" {
	set_args sleep 100
	local i out lost=0
	for i in 1 2 3 4 5; do
		create_container sd$i
		[ "$status" -eq 0 ] || fail "create: $output"
		flock -x "$TEST_ROOT/sd$i" sleep 0.6 &
		sleep 0.1
		(rt delete --force sd$i >"$BUNDLE/del$i.out" 2>&1 || echo "rc=$?" >>"$BUNDLE/del$i.out") &
		sleep 0.2
		(rt start sd$i >"$BUNDLE/start$i.out" 2>&1 && echo "rc=0" >>"$BUNDLE/start$i.out" ||
			echo "rc=$?" >>"$BUNDLE/start$i.out") &
		wait
		out=$(cat "$BUNDLE/start$i.out")
		case $out in
		*rc=0*) ;;
		*"does not exist"*) lost=$((lost + 1)) ;;
		*) fail "start after a delete: $out" ;;
		esac
		grep -q . "$BUNDLE/del$i.out" && fail "delete --force: $(cat "$BUNDLE/del$i.out")"
		run rt state sd$i
		[ "$status" -ne 0 ] || fail "sd$i still exists"
	done
	echo "# start lost the race $lost of 5 times" >&3
}

# state-while-creating: `state` during a create printed a state document with every field
# empty ("status": "", no bundle, ociVersion ""), and `list --format json` the same entry; a poller
# (crun's test suite) took it for the container's state.  Now `state` fails until create has
# written it (runc: "does not exist"), then says created; `list --format json` leaves it out.
@test "state-while-creating: no empty state document while create runs" {
	update_config '.hooks = {"createRuntime": [{"path": "/bin/sleep", "args": ["sleep", "1"]}]}'
	set_args true
	(create_container cw) &
	local i got_error=0 seen_created=0 out
	for i in $(seq 1 40); do
		sleep 0.1
		if out=$(rt state cw 2>&1); then
			[ "$(jq -r .status <<<"$out")" = created ] || fail "state while creating: $out"
			jq -e '.bundle != "" and .pid > 0 and .ociVersion != ""' <<<"$out" >/dev/null ||
				fail "incomplete state: $out"
			seen_created=1
			break
		fi
		got_error=1
		if is_agentrt; then
			grep -q "still being created" <<<"$out" || fail "state error: $out"
			run rt list --format json
			[ "$status" -eq 0 ] && jq -e 'all((. // [])[]; .status != "" and .bundle != "")' <<<"$output" >/dev/null ||
				fail "list --format json while creating: $output"
		fi
	done
	wait
	[ "$seen_created" = 1 ] || fail "never created"
	[ "$got_error" = 1 ] || echo "# create finished before the first poll" >&3
}

@test "state-while-creating: a state directory left by a dead create is stopped, not creating" {
	agentrt_only "agentrt's state directory layout"
	mkdir "$TEST_ROOT/dead"
	run rt state dead
	assert_clean_failure
	assert_output_contains "its create did not finish"
	run rt list
	grep -E '^dead +0 +stopped' <<<"$output" || fail "list: $output"
	run rt delete dead
	[ "$status" -eq 0 ] || fail "delete: $output"
	[ ! -e "$TEST_ROOT/dead" ]
}

@test "delete --force of an unknown id exits 0" {
	run rt delete --force nosuch
	[ "$status" -eq 0 ] || fail "delete --force nosuch: $output"
}

@test "start of a stopped container fails" {
	set_args true
	run_detached c1
	[ "$status" -eq 0 ] || fail "run -d: $output"
	wait_for_status c1 stopped
	run rt start c1
	assert_clean_failure
	[ "$(container_status c1)" = stopped ]
}

# runtime spec: process is OPTIONAL at create and REQUIRED at start.
@test "create without process succeeds; start fails, naming process, and the container stops" {
	agentrt_only "runc 1.1 requires process at create"
	update_config 'del(.process)'
	create_container c1
	[ "$status" -eq 0 ] || fail "create: $output"
	[ "$(container_status c1)" = created ]
	pid=$(container_pid c1)
	run rt start c1
	assert_clean_failure
	[[ "$output" == *"process: required to start"* ]] || fail "message: $output"
	wait_for_status c1 stopped
	[ ! -e /proc/$pid ] || [ "$(awk '{print $3}' /proc/$pid/stat 2>/dev/null)" = Z ] ||
		fail "init $pid still alive"
	run rt delete c1
	[ "$status" -eq 0 ] || fail "delete: $output"
}

@test "start twice fails the second time" {
	set_args sleep 1000
	create_container c1
	run rt start c1
	[ "$status" -eq 0 ] || fail "start: $status $output"
	run rt start c1
	assert_clean_failure
	[ "$(container_status c1)" = running ]
}

@test "a stopped container reports status stopped" {
	set_args sh -c 'exit 3'
	create_container c1
	rt start c1
	wait_for_status c1 stopped
	run rt state c1
	[ "$status" -eq 0 ]
	[ "$(jq -r .status <<<"$output")" = stopped ]
}

@test "--pid-file holds the init pid without a trailing newline" {
	set_args sleep 1000
	create_container c1 --pid-file "$BUNDLE/pid"
	[ "$status" -eq 0 ] || fail "create: $output"
	[ -f "$BUNDLE/pid" ]
	[ "$(cat "$BUNDLE/pid")" = "$(container_pid c1)" ]
	[ "$(tail -c1 "$BUNDLE/pid" | od -An -c | tr -d ' ')" != '\n' ] || fail "pid file ends in a newline"
	grep -qE '^[0-9]+$' "$BUNDLE/pid"
}

# pid-file-mode: runc creates its pid files 0666 less the umask (0644 under 022), for create and
# exec; agentrt wrote them 0600, unreadable by a monitor that is not root.
@test "pid-file-mode: --pid-file of create and exec is 0666 less the umask" {
	set_args sleep 1000
	umask 022
	create_container c1 --pid-file "$BUNDLE/pid"
	[ "$status" -eq 0 ] || fail "create: $output"
	[ "$(stat -c %a "$BUNDLE/pid")" = 644 ] || fail "create: mode $(stat -c %a "$BUNDLE/pid")"
	rt_bg start c1
	[ "$status" -eq 0 ] || fail "start: $status $output"
	umask 027
	rt_bg exec -d --pid-file "$BUNDLE/exec.pid" c1 sleep 100
	[ "$status" -eq 0 ] || fail "exec: $output"
	[ "$(stat -c %a "$BUNDLE/exec.pid")" = 640 ] || fail "exec: mode $(stat -c %a "$BUNDLE/exec.pid")"
}

@test "--pid-file relative to the current directory" {
	set_args sleep 1000
	cd "$BUNDLE"
	create_container c1 --pid-file pid.rel
	[ "$status" -eq 0 ] || fail "create: $output"
	[ "$(cat "$BUNDLE/pid.rel")" = "$(container_pid c1)" ]
}

@test "create with --bundle relative to the current directory" {
	set_args sleep 1000
	cd "$(dirname "$BUNDLE")"
	rel=$(basename "$BUNDLE")
	rt_bg create --bundle "$rel" c1
	[ "$status" -eq 0 ] || fail "create: $output"
	[ "$(state_field c1 .bundle)" = "$BUNDLE" ]
}

@test "create without --bundle uses the current directory" {
	set_args sleep 1000
	cd "$BUNDLE"
	rt_bg create c1
	[ "$status" -eq 0 ] || fail "create: $output"
	[ "$(state_field c1 .bundle)" = "$BUNDLE" ]
}

@test "--root is created when missing and holds the container state" {
	rm -rf "$TEST_ROOT"
	set_args sleep 1000
	create_container c1
	[ "$status" -eq 0 ] || fail "create: $output"
	[ -d "$TEST_ROOT" ]
	[ -n "$(ls -A "$TEST_ROOT")" ]
	# Another root does not see it.
	run timeout 10 "$AGENTRT" --root "$TEST_ROOT-other" list -q
	[ -z "$output" ]
	rm -rf "$TEST_ROOT-other"
}

@test "--log writes runtime errors to the file" {
	run rt --log "$BUNDLE/rt.log" state nosuch
	assert_clean_failure
	# runc and agentrt log the error to the --log file.
	grep -q 'does not exist' "$BUNDLE/rt.log"
}

@test "--log-format json writes JSON lines with level, msg and time" {
	run rt --log "$BUNDLE/rt.log" --log-format json state nosuch
	assert_clean_failure
	[ -s "$BUNDLE/rt.log" ]
	while read -r line; do
		jq -e 'has("level") and has("msg") and has("time")' <<<"$line" >/dev/null ||
			fail "not a JSON log line: $line"
	done <"$BUNDLE/rt.log"
	grep 'does not exist' "$BUNDLE/rt.log" | jq -e '.level == "error"'
}

# log-format-stderr: runc's --log-format json without --log writes its errors and warnings to
# stderr as JSON lines (logrus' formatter on stderr); agentrt wrote "agentrt: ..." text there.
@test "log-format-stderr: --log-format json without --log writes the error to stderr as one JSON line" {
	rt --log-format json state nosuch >"$BUNDLE/out" 2>"$BUNDLE/err" && fail "state of nothing succeeded"
	[ "$(wc -l <"$BUNDLE/err")" -eq 1 ] || fail "not one line: $(cat "$BUNDLE/err")"
	jq -e '.level == "error" and (.msg | test("does not exist")) and has("time")' <"$BUNDLE/err" >/dev/null ||
		fail "not a JSON error line: $(cat "$BUNDLE/err")"
	[ ! -s "$BUNDLE/out" ]
	# text stays text
	rt state nosuch 2>"$BUNDLE/err" && fail "state of nothing succeeded"
	! jq -e . <"$BUNDLE/err" >/dev/null 2>&1 || fail "text format wrote JSON: $(cat "$BUNDLE/err")"
	grep -q 'does not exist' "$BUNDLE/err"
}

# log-quiet-success: every create wrote an info record of the profile's changes to --log, under
# --profile oci too ("profile oci: 0 changes"); runc writes nothing there when a command succeeds.
# Podman reads its oci-log as one JSON object (ENGINES.md 4.5): with the record before it, a
# failing create's error could not be read back and podman fell back to conmon's text.
@test "log-quiet-success: under --profile oci a create writes nothing to --log; a failing one writes one error record" {
	[ "$AGENTRT_PROFILE" = oci ] || skip "the agent profile logs the changes it makes"
	local log=$BUNDLE/oci-log
	set_args sleep 100
	rt_bg --log "$log" --log-format json create --bundle "$BUNDLE" c2
	[ "$status" -eq 0 ] || fail "create: $output"
	rt --log "$log" --log-format json start c2
	rt --log "$log" --log-format json kill c2 KILL
	wait_for_status c2 stopped
	rt --log "$log" --log-format json delete c2
	[ ! -s "$log" ] || fail "a create, start, kill and delete that succeeded logged: $(cat "$log")"
	set_args no-such-program
	rt_bg --log "$log" --log-format json create --bundle "$BUNDLE" c3
	assert_clean_failure
	# the whole file is one JSON object, as podman reads it
	jq -e -s 'length == 1 and .[0].level == "error" and (.[0].msg | test("executable file not found"))' \
		"$log" >/dev/null || fail "the log of a failing create: $(cat "$log")"
}

# A caller's closed stdio is the lowest free fd: the --log file took fd 2, and the runtime's
# own error text, written to "stderr", went into the JSON log (containerd's shim parses it).
# Closed std fds are /dev/null from the start now (as the Go runtime of runc 1.2 does).
@test "stdio-closed-log: with the caller's stderr or all stdio closed, the --log file has JSON lines only" {
	for closed in '2>&-' '<&- >&- 2>&-'; do
		rm -f "$BUNDLE/rt.log"
		run bash -c "timeout 30 '$AGENTRT' --root '$TEST_ROOT' --log '$BUNDLE/rt.log' --log-format json state nosuch $closed"
		[ "$status" -ne 0 ] || fail "$closed: state of nothing succeeded"
		grep -q 'does not exist' "$BUNDLE/rt.log" || fail "$closed: no error logged: $(cat "$BUNDLE/rt.log")"
		while read -r line; do
			jq -e 'has("level") and has("msg")' <<<"$line" >/dev/null 2>&1 || fail "$closed: not a JSON log line: $line"
		done <"$BUNDLE/rt.log"
	done
}

@test "--version and --help exit 0" {
	run "$AGENTRT" --version
	[ "$status" -eq 0 ]
	[ -n "$output" ]
	run "$AGENTRT" --help
	[ "$status" -eq 0 ]
	assert_output_contains create
}

@test "--systemd-cgroup and --debug are accepted" {
	agentrt_only "runc's --systemd-cgroup needs a running systemd"
	run rt --debug --systemd-cgroup list
	[ "$status" -eq 0 ] || fail "$output"
}

@test "a created container survives the create command, its init stays blocked" {
	set_cmd 'echo started > /tmp/marker; exec sleep 1000'
	create_container c1
	[ "$status" -eq 0 ] || fail "create: $output"
	sleep 1
	[ "$(container_status c1)" = created ]
	[ ! -e "$ROOTFS/tmp/marker" ]
}

# init-environ: the init is a clone of the runtime, so between create and start its
# /proc/PID/environ was the caller's environment (the engine's NOTIFY_SOCKET, tokens, ...), for
# a process exec'd into the created container or sharing its pid namespace to read.  runc's
# init holds only its own _LIBCONTAINER_* variables.  The init now carries nothing of it: its
# startContainer hooks see only their own env, the program only process.env.
@test "init-environ: between create and start the init's environ holds nothing of the caller's" {
	set_cmd 'echo started > /tmp/marker; exec sleep 1000'
	update_config '.hooks.startContainer = [{"path": "/bin/sh", "args": ["sh", "-c", "env > /tmp/hook-env"]}]'
	H8_SECRET=init-environ-token-1234 create_container c1
	[ "$status" -eq 0 ] || fail "create: $output"
	pid=$(container_pid c1)
	env_text=$(tr '\0' '\n' <"/proc/$pid/environ")
	[[ "$env_text" != *init-environ-token-1234* ]] || fail "the caller's environment is in the init's: $env_text"
	[[ "$env_text" != *PATH=* ]] || fail "the caller's PATH is in the init's environ: $env_text"
	run rt start c1
	[ "$status" -eq 0 ] || fail "start: $output"
	wait_for_file "$ROOTFS/tmp/marker"
	wait_for_file "$ROOTFS/tmp/hook-env"
	run cat "$ROOTFS/tmp/hook-env"
	[[ "$output" != *init-environ-token-1234* ]] || fail "a startContainer hook got the caller's env: $output"
	# as runc's: a startContainer hook without env runs with process.env
	[[ "$output" == *PATH=/usr/local/sbin:* ]] || fail "a startContainer hook without process.env: $output"
	# the program's own environment is process.env, untouched
	env_text=$(tr '\0' '\n' <"/proc/$pid/environ")
	[[ "$env_text" == *PATH=/usr/local/sbin* ]] || fail "the program lost process.env: $env_text"
	[[ "$env_text" != *init-environ-token-1234* ]] || fail "the program has the caller's env: $env_text"
}

# init-cmdline: the init's /proc/PID/cmdline, which any process of its pid namespace reads
# without a capability, was the caller's whole command line (--root, --log, the bundle) until
# start; runc's reads "runc init".  It reads "agentrt init" now; the hooks' state keeps the id
# and the bundle.
@test "init-cmdline: between create and start the init's cmdline is \"agentrt init\", not the caller's" {
	agentrt_only "the init's name"
	set_cmd 'echo started > /tmp/marker; exec sleep 1000'
	update_config '.hooks.createContainer = [{"path": "/bin/sh", "args": ["sh", "-c", "cat > '"$BUNDLE"'/cc.state"]}]
		| .hooks.startContainer = [{"path": "/bin/sh", "args": ["sh", "-c", "cat > /tmp/sc.state"]}]'
	create_container c1
	[ "$status" -eq 0 ] || fail "create: $output"
	pid=$(container_pid c1)
	cmdline=$(tr '\0' ' ' <"/proc/$pid/cmdline")
	[[ "$cmdline" == "agentrt init"* ]] || fail "init's cmdline: $cmdline"
	[[ "$cmdline" != *"$BUNDLE"* && "$cmdline" != *"$TEST_ROOT"* && "$cmdline" != *c1* ]] ||
		fail "the caller's command line in the init's: $cmdline"
	jq -e --arg b "$BUNDLE" '.id == "c1" and .bundle == $b' "$BUNDLE/cc.state" >/dev/null ||
		fail "createContainer state: $(cat "$BUNDLE/cc.state")"
	run rt start c1
	[ "$status" -eq 0 ] || fail "start: $output"
	wait_for_file "$ROOTFS/tmp/marker"
	jq -e --arg b "$BUNDLE" '.id == "c1" and .bundle == $b and .status == "running"' "$ROOTFS/tmp/sc.state" >/dev/null ||
		fail "startContainer state: $(cat "$ROOTFS/tmp/sc.state")"
	for i in $(seq 50); do
		tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q '^sleep 1000' && break
		sleep 0.1
	done
	tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q '^sleep 1000'
}

# events-interval-duration: runc parses --interval as a Go duration, and go-runc's Events()
# passes time.Duration.String(): "1m0s" for a minute, "1m30s", "1h0m0s", "500ms".  agentrt
# took one number and one unit (ms, s, m) and refused "1m0s" as an invalid duration.
@test "events-interval-duration: events --interval takes Go durations (1m0s, 1h0m0s, 1s500ms, 2us)" {
	set_args sleep 1000
	run_detached c1
	[ "$status" -eq 0 ] || fail "run -d: $output"
	for d in 1m0s 1m30s 1h0m0s 1s500ms 500ms 1.5s 2us 100ns; do
		status=0
		timeout 2 "$AGENTRT" --root "$TEST_ROOT" events --interval "$d" c1 >"$BUNDLE/ev.out" 2>"$BUNDLE/ev.err" || status=$?
		[ "$status" -eq 124 ] || fail "--interval $d: status $status: $(cat "$BUNDLE/ev.err")"
		[ ! -s "$BUNDLE/ev.err" ] || fail "--interval $d: $(cat "$BUNDLE/ev.err")"
	done
	for d in 1x s 1m30 -1s 0s '' 1..5s 1e3s; do
		run rt events --interval "$d" c1
		[ "$status" -eq 1 ] || fail "--interval '$d': status $status: $output"
	done
}

# events-first-after-interval: runc's `events` takes its first sample one --interval after it
# starts (a Go ticker) and ends when the container's cgroup goes; agentrt printed a sample at
# once and noticed the stop only at the end of an interval, so `events --interval 1h` of a
# container that stopped (or was deleted) kept running for an hour.
@test "events-first-after-interval: the first sample comes one interval in, and events ends when the container stops" {
	set_args sleep 1000
	run_detached c1
	[ "$status" -eq 0 ] || fail "run -d: $output"
	"$AGENTRT" --root "$TEST_ROOT" events --interval 1h c1 >"$BUNDLE/ev.out" 2>"$BUNDLE/ev.err" &
	local ev=$! state=
	# wait until it sleeps (its setup is done), bounded
	for i in $(seq 100); do
		read -r _ _ state _ <"/proc/$ev/stat" 2>/dev/null || break
		[ "$state" = S ] && break
		sleep 0.05
	done
	rt kill c1 KILL
	# runc's ends when the cgroup goes (delete); agentrt's when the init is gone
	is_agentrt || { wait_for_status c1 stopped && rt delete c1; }
	for i in $(seq 100); do
		kill -0 "$ev" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$ev" 2>/dev/null; then
		kill "$ev"
		wait "$ev" || true
		fail "events still running 10 s after the container stopped; output: $(cat "$BUNDLE/ev.out")"
	fi
	wait "$ev" || fail "events: status $?: $(cat "$BUNDLE/ev.err")"
	[ ! -s "$BUNDLE/ev.out" ] || fail "a sample before the first interval: $(head -c 300 "$BUNDLE/ev.out")"
}

# events_watching MEMORY: c1 running with MEMORY as its linux.resources.memory, and `events
# --interval 1h c1` in the background ($EV, to $BUNDLE/ev.out and ev.err) once it watches: until it waits in poll(2) (7; runc: a Go program, in epoll_pwait 281 or futex 202),
# a process asleep is not yet one that watches (under load its S was before the watch)
events_watching() {
	local nr= i
	update_config ".linux.resources.memory = $1"
	set_args sleep 1000
	run_detached c1
	[ "$status" -eq 0 ] || fail "run -d: $output"
	"$AGENTRT" --root "$TEST_ROOT" events --interval 1h c1 >"$BUNDLE/ev.out" 2>"$BUNDLE/ev.err" &
	EV=$!
	for i in $(seq 200); do
		read -r nr _ <"/proc/$EV/syscall" 2>/dev/null || break
		[ "$nr" = 7 ] || [ "$nr" = 281 ] || [ "$nr" = 202 ] && break
		sleep 0.05
	done
	# (is_agentrt: runc starts its watch in a goroutine; give it time to be in place)
	is_agentrt || sleep 1
}

# events_oom_seen: up to 10 s for an oom line, then events is stopped
events_oom_seen() {
	local i
	for i in $(seq 100); do
		grep -q '"oom"' "$BUNDLE/ev.out" && break
		sleep 0.1
	done
	kill "$EV"
	wait "$EV" || true
}

# events-oom-at-once: runc's `events` (not --stats) prints an `oom` event when the kernel
# records one (an eventfd on memory.oom_control, an inotify watch on memory.events), whatever
# its --interval; agentrt looked for one only at each interval, so with runc's default of 5 s
# or an engine's longer one the OOM was told late or, when the container ended first, never.
@test "events-oom-at-once: events prints the oom event when the OOM happens, not at the next interval" {
	events_watching '{"limit": 33554432, "swap": 33554432}'
	run rt exec c1 dd if=/dev/zero of=/dev/null bs=64M count=1
	[ "$status" -eq 137 ] || { kill "$EV"; fail "dd was not OOM-killed: $status: $output"; }
	events_oom_seen
	grep -q '"type":"oom"' "$BUNDLE/ev.out" || fail "no oom event 10 s after the OOM: $(cat "$BUNDLE/ev.out" "$BUNDLE/ev.err")"
	jq -e 'select(.type == "oom") | .id == "c1"' "$BUNDLE/ev.out" >/dev/null || fail "$(cat "$BUNDLE/ev.out")"
}

# events-oom-disabled: with memory.disableOOMKiller (cgroup v1) an out-of-memory container is
# paused, nothing killed; runc's `events` prints an `oom` event for each signal of the
# cgroup's OOM eventfd, and agentrt's waited for a kill count that never moved.
@test "events-oom-disabled: with disableOOMKiller (cgroup v1) events prints the oom event though nothing is killed" {
	[ -f /sys/fs/cgroup/memory/memory.oom_control ] || skip "needs the cgroup v1 memory controller"
	events_watching '{"limit": 33554432, "swap": 33554432, "disableOOMKiller": true}'
	# the allocation waits under OOM (not killed): in the background, bounded.  The pages
	# are touched from user space (a string doubled by awk): a fault in the kernel's copy (dd
	# reading into its buffer) is refused with ENOMEM under disableOOMKiller, not an OOM
	timeout -s KILL 20 "$AGENTRT" --root "$TEST_ROOT" exec c1 \
		awk 'BEGIN { s = "x"; while (length(s) < 100000000) s = s s }' >/dev/null 2>&1 &
	local dd=$!
	events_oom_seen
	grep -qs '^under_oom 1' /sys/fs/cgroup/memory/"$CG_PARENT"/*/memory.oom_control ||
		fail "the container was not under OOM: $(cat /sys/fs/cgroup/memory/"$CG_PARENT"/*/memory.oom_control)"
	rt delete --force c1 >/dev/null 2>&1
	wait "$dd" || true
	grep -q '"type":"oom"' "$BUNDLE/ev.out" || fail "no oom event 10 s into the OOM: $(cat "$BUNDLE/ev.out" "$BUNDLE/ev.err")"
}

# relative-root: runc takes a relative --root from the current directory (filepath.Abs), and any
# later command that names the same directory finds the container; agentrt refused it ("--root:
# must be an absolute path").  An empty --root is still refused.
@test "relative-root: a relative --root is the directory below the current one" {
	set_args sleep 100
	local abs=$BUNDLE/rel-root
	cd "$BUNDLE"
	status=0
	timeout 30 "$AGENTRT" --root ./x/../rel-root run -d --bundle "$BUNDLE" relr \
		</dev/null >"$BUNDLE/relr.out" 2>&1 || status=$?
	[ "$status" -eq 0 ] || fail "run -d: $(cat "$BUNDLE/relr.out")"
	[ -d "$abs/relr" ] || fail "no state in $abs: $(ls -A "$BUNDLE")"
	cd /
	run "$AGENTRT" --root "$abs" state relr
	[ "$status" -eq 0 ] || fail "state: $output"
	jq -e '.status == "running"' <<<"$output" || fail "state: $output"
	run "$AGENTRT" --root "$abs" delete --force relr
	[ "$status" -eq 0 ] || fail "delete: $output"
	[ -z "$(ls -A "$abs")" ]
	if is_agentrt; then
		run "$AGENTRT" --root "" list
		[ "$status" -ne 0 ] && [[ $output == *"--root: must not be empty"* ]] || fail "empty --root: $output"
	fi
}

# notify_listen SOCKET OUT: a host-side sd_notify receiver (the engine's NOTIFY_SOCKET) that
# appends every datagram, one a line, to OUT for at most 20 s; its pid in NOTIFY_PID.
notify_listen() {
	python3 - "$1" "$2" <<'PY' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(0.2)
end = time.time() + 20
with open(sys.argv[2], "a") as out:
    out.write("listening\n"); out.flush()
    while time.time() < end:
        try:
            d = s.recv(4096)
        except socket.timeout:
            continue
        out.write(d.decode(errors="replace").replace("\n", "|") + "\n"); out.flush()
PY
	NOTIFY_PID=$!
	wait_for_file "$2" 5
}

notify_stop() {
	kill "$NOTIFY_PID" 2>/dev/null
	wait "$NOTIFY_PID" 2>/dev/null || true
}

@test "notify-socket: start relays the container's READY=1 to the engine's NOTIFY_SOCKET with MAINPID, after it came" {
	requires python3
	known_broken '^runc' "a READY=1 after another line of the datagram is never relayed (notify_socket.go checks the datagram's prefix), start waits forever"
	notify_listen "$BUNDLE/host.sock" "$BUNDLE/got"
	set_cmd 'echo "ns=$NOTIFY_SOCKET"; grep " /run/notify " /proc/self/mountinfo; sleep 1
		printf "STATUS=warming up\nREADY=1\n" | usock -d "$NOTIFY_SOCKET"; exec sleep 100'
	NOTIFY_SOCKET=$BUNDLE/host.sock create_container c1
	[ "$status" -eq 0 ] || fail "create: $output"
	local t0=$SECONDS pid
	NOTIFY_SOCKET=$BUNDLE/host.sock run rt start c1
	[ "$status" -eq 0 ] || fail "start: $status $output"
	pid=$(container_pid c1)
	wait_for_file "$BUNDLE/c1.out" 5
	grep -qx "ns=/run/notify/notify.sock" "$BUNDLE/c1.out" || fail "container: $(cat "$BUNDLE/c1.out")"
	# the socket's directory, read-only, not executable, no devices or setuid
	grep -E ' /run/notify ro,nosuid,nodev,noexec' "$BUNDLE/c1.out" || fail "mount: $(cat "$BUNDLE/c1.out")"
	sleep 0.3
	notify_stop
	grep -qx 'READY=1|' "$BUNDLE/got" || grep -qx 'READY=1' "$BUNDLE/got" || fail "host got: $(cat "$BUNDLE/got")"
	grep -q "^MAINPID=$pid|\?$" "$BUNDLE/got" || fail "host got (MAINPID=$pid expected): $(cat "$BUNDLE/got")"
	! grep -q STATUS "$BUNDLE/got" || fail "the container's other lines reached the host: $(cat "$BUNDLE/got")"
	# start waited for READY (the container sent it after a second)
	[ $((SECONDS - t0)) -ge 1 ] || fail "start returned before READY=1"
}

# notify-barrier: runc ends its relay with sd_notify_barrier: BARRIER=1 with a pipe's write
# end, and waits (at most 30 s) until systemd closes it, having handled READY=1 and MAINPID:
# systemd drops a notification whose sender is gone by the time it reads it.  agentrt sent
# no barrier, so `start` could exit before the engine had read MAINPID.
@test "notify-socket: notify-barrier: start sends BARRIER=1 with a descriptor and returns after the engine closed it" {
	requires python3
	known_broken '^runc version 1\.[01]\.' "no sd_notify barrier before runc 1.2"
	python3 - "$BUNDLE/host.sock" "$BUNDLE/got" <<'PY' &
import array, os, socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(0.2)
end = time.time() + 20
with open(sys.argv[2], "a") as out:
    out.write("listening\n"); out.flush()
    while time.time() < end:
        try:
            d, anc, _, _ = s.recvmsg(4096, socket.CMSG_SPACE(16))
        except socket.timeout:
            continue
        fds = array.array("i")
        for lvl, typ, data in anc:
            if lvl == socket.SOL_SOCKET and typ == socket.SCM_RIGHTS:
                fds.frombytes(data[:len(data) - len(data) % fds.itemsize])
        out.write(d.decode(errors="replace").replace("\n", "|") + " fds=%d\n" % len(fds)); out.flush()
        if d.startswith(b"BARRIER=1"):
            time.sleep(0.5)
            out.write("barrier-closed\n"); out.flush()
        for fd in fds:
            os.close(fd)
PY
	NOTIFY_PID=$!
	wait_for_file "$BUNDLE/got" 5
	set_cmd 'printf "READY=1" | usock -d "$NOTIFY_SOCKET"; exec sleep 100'
	NOTIFY_SOCKET=$BUNDLE/host.sock create_container c1
	[ "$status" -eq 0 ] || fail "create: $output"
	NOTIFY_SOCKET=$BUNDLE/host.sock run timeout 60 "$AGENTRT" --root "$TEST_ROOT" start c1
	[ "$status" -eq 0 ] || fail "start: $status $output"
	# start returned after the engine closed the barrier's descriptor
	local got
	got=$(cat "$BUNDLE/got")
	notify_stop
	grep -q "^MAINPID=$(container_pid c1)" <<<"$got" || fail "host got: $got"
	grep -qx 'BARRIER=1 fds=1' <<<"$got" || fail "no BARRIER=1 with a descriptor: $got"
	grep -qx 'barrier-closed' <<<"$got" || fail "start returned before the barrier was answered: $got"
	[ "$(grep -n . <<<"$got" | grep -m1 MAINPID | cut -d: -f1)" -lt "$(grep -n . <<<"$got" | grep -m1 BARRIER | cut -d: -f1)" ] ||
		fail "BARRIER=1 before MAINPID: $got"
}

@test "notify-socket: start of a container that exits without READY=1 returns; run -d relays READY=1" {
	requires python3
	notify_listen "$BUNDLE/host.sock" "$BUNDLE/got"
	set_cmd 'sleep 0.5; exit 3'
	NOTIFY_SOCKET=$BUNDLE/host.sock create_container c1
	[ "$status" -eq 0 ] || fail "create: $output"
	NOTIFY_SOCKET=$BUNDLE/host.sock run timeout 15 "$AGENTRT" --root "$TEST_ROOT" start c1
	[ "$status" -eq 0 ] || fail "start: $status $output"
	wait_for_status c1 stopped
	rt delete c1
	set_cmd 'printf "READY=1" | usock -d "$NOTIFY_SOCKET"; exec sleep 100'
	NOTIFY_SOCKET=$BUNDLE/host.sock run_detached c2
	[ "$status" -eq 0 ] || fail "run -d: $output"
	sleep 0.3
	notify_stop
	grep -q "^MAINPID=$(container_pid c2)" "$BUNDLE/got" || fail "host got: $(cat "$BUNDLE/got")"
	[ "$(grep -c READY=1 "$BUNDLE/got")" -eq 1 ] || fail "host got: $(cat "$BUNDLE/got")"
}

@test "notify-socket: without NOTIFY_SOCKET the container has no /run/notify and no NOTIFY_SOCKET" {
	set_cmd 'env; cat /proc/self/mountinfo'
	run env -u NOTIFY_SOCKET "$AGENTRT" --root "$TEST_ROOT" run --bundle "$BUNDLE" c1
	[ "$status" -eq 0 ] || fail "run: $output"
	! grep -q 'NOTIFY_SOCKET\| /run/notify ' <<<"$output" || fail "$output"
}

# A foreground run (and `agentrt sandbox`, which is one) waited for READY=1 before it forwarded
# anything: signals (and a terminal's input and output) stayed with it until then.
@test "notify-socket: a foreground run forwards signals before READY=1, then relays it with its own pid" {
	requires python3
	known_broken '^runc' "a foreground run forwards no signal before READY=1 (signals.go runs the relay first)"
	notify_listen "$BUNDLE/host.sock" "$BUNDLE/got"
	set_cmd 'trap "echo TERM >> /tmp/sig; printf READY=1 | usock -d \$NOTIFY_SOCKET; sleep 0.5; exit 7" TERM
		echo ready > /tmp/ready; while :; do sleep 0.1; done'
	NOTIFY_SOCKET=$BUNDLE/host.sock "$AGENTRT" --root "$TEST_ROOT" run --bundle "$BUNDLE" c1 </dev/null >"$BUNDLE/out" 2>&1 &
	local rtpid=$! rc=0 i
	wait_for_file "$ROOTFS/tmp/ready"
	kill -TERM "$rtpid"
	for i in $(seq 100); do kill -0 "$rtpid" 2>/dev/null || break; sleep 0.1; done
	kill -0 "$rtpid" 2>/dev/null && { kill -KILL "$rtpid"; fail "the runtime did not forward TERM before READY=1"; }
	wait "$rtpid" || rc=$?
	[ "$rc" -eq 7 ] || fail "exit status $rc, want 7: $(cat "$BUNDLE/out")"
	notify_stop
	grep -q "^MAINPID=$rtpid" "$BUNDLE/got" || fail "host got: $(cat "$BUNDLE/got")"
}

# notify-flood: the socket is the container's; a flood of datagrams without READY=1 made
# `start` (outside the container's cgroup) read them as fast as they came.  It reads a bounded
# number a tick; the sender waits on the full socket.
@test "notify-socket: notify-flood: a flood of datagrams costs start little CPU, READY=1 after it still arrives" {
	requires python3
	notify_listen "$BUNDLE/host.sock" "$BUNDLE/got"
	set_cmd 'printf STATUS=flood | timeout 4 usock -d "$NOTIFY_SOCKET" 100000000
		printf READY=1 | usock -d "$NOTIFY_SOCKET"; exec sleep 100'
	NOTIFY_SOCKET=$BUNDLE/host.sock create_container c1
	[ "$status" -eq 0 ] || fail "create: $output"
	NOTIFY_SOCKET=$BUNDLE/host.sock "$AGENTRT" --root "$TEST_ROOT" start c1 &
	local spid=$! ticks i
	sleep 3
	ticks=$(awk '{print $14 + $15}' /proc/$spid/stat) || fail "start is gone before READY=1"
	for i in $(seq 150); do kill -0 "$spid" 2>/dev/null || break; sleep 0.1; done
	kill -0 "$spid" 2>/dev/null && { kill -KILL "$spid"; fail "start did not return after READY=1"; }
	wait "$spid" || fail "start failed"
	sleep 0.3
	notify_stop
	grep -q "^MAINPID=$(container_pid c1)" "$BUNDLE/got" || fail "host got: $(cat "$BUNDLE/got")"
	# 3 s of flood: at most 0.3 s of CPU (clock ticks of 1/100 s)
	[ "$ticks" -le 30 ] || fail "start used $ticks ticks of CPU in 3 s of flood"
}

@test "notify-socket: notify-flood: start returns once the init is gone, though a process it left floods the socket" {
	requires python3
	notify_listen "$BUNDLE/host.sock" "$BUNDLE/got"
	# no pid namespace of its own: what the init started outlives it
	update_config '.linux.namespaces = [.linux.namespaces[] | select(.type != "pid")]'
	set_cmd '(printf STATUS=flood | timeout 12 usock -d "$NOTIFY_SOCKET" 100000000) & sleep 1'
	NOTIFY_SOCKET=$BUNDLE/host.sock create_container c1
	[ "$status" -eq 0 ] || fail "create: $output"
	local start=$SECONDS
	NOTIFY_SOCKET=$BUNDLE/host.sock run rt start c1
	[ "$status" -eq 0 ] || fail "start: $status $output"
	[ $((SECONDS - start)) -lt 8 ] || fail "start returned after $((SECONDS - start)) s, the init lived 1 s"
	notify_stop
	! grep -q READY "$BUNDLE/got" || fail "host got: $(cat "$BUNDLE/got")"
	rt kill --all c1 KILL
}

# runc dials the engine's socket before it waits (and fails start when there is none); agentrt
# waited for a READY=1 it could never pass on: start hung as long as the program ran.
@test "notify-socket: start with a NOTIFY_SOCKET where nothing listens warns and returns, the container runs" {
	set_cmd 'exec sleep 100'
	NOTIFY_SOCKET=$BUNDLE/nobody.sock create_container c1
	[ "$status" -eq 0 ] || fail "create: $output"
	local start=$SECONDS
	NOTIFY_SOCKET=$BUNDLE/nobody.sock run timeout 15 "$AGENTRT" --root "$TEST_ROOT" start c1
	[ $((SECONDS - start)) -lt 5 ] || fail "start took $((SECONDS - start)) s: $status $output"
	[ "$status" -eq 0 ] || fail "start: $status $output"
	grep -q 'nobody.sock' <<<"$output" || fail "no warning: $output"
	[ "$(container_status c1)" = running ] || fail "status $(container_status c1)"
}
