#!/usr/bin/env bats
# hooks.bats - the six OCI hooks: when they run, the state JSON on their stdin, argv and env
# passed verbatim, failures and timeouts.  Hooks append to $ROOTFS/hooks.log (host path);
# startContainer runs inside the container, where the same file is /hooks.log.

load helpers

# hook KIND LOGPATH: a hook that logs its kind and saves its stdin as hook-KIND.json next to
# the log.
hook() {
	local dir
	dir=$(dirname "$2")
	echo "{\"path\": \"/bin/sh\", \"args\": [\"sh\", \"-c\", \"echo $1 >> $2; cat > $dir/hook-$1.json\"]}"
}

all_hooks() {
	update_config ".hooks = {
		\"prestart\": [$(hook prestart "$ROOTFS/hooks.log")],
		\"createRuntime\": [$(hook createRuntime "$ROOTFS/hooks.log")],
		\"createContainer\": [$(hook createContainer "$ROOTFS/hooks.log")],
		\"startContainer\": [$(hook startContainer /hooks.log)],
		\"poststart\": [$(hook poststart "$ROOTFS/hooks.log")],
		\"poststop\": [$(hook poststop "$ROOTFS/hooks.log")]}"
}

@test "all six hooks run at their moments, in order" {
	known_broken '^runc version 1\.(0|1)\.' "poststart runs at create (fixed in runc 1.2)"
	all_hooks
	set_args sleep 1000
	create_container c1
	[ "$status" -eq 0 ] || fail "create: $output"
	[ "$(tr '\n' ' ' <"$ROOTFS/hooks.log")" = "prestart createRuntime createContainer " ] ||
		fail "after create: $(cat "$ROOTFS/hooks.log")"
	rt start c1
	for i in $(seq 50); do grep -q poststart "$ROOTFS/hooks.log" && break; sleep 0.1; done
	[ "$(tr '\n' ' ' <"$ROOTFS/hooks.log")" = "prestart createRuntime createContainer startContainer poststart " ] ||
		fail "after start: $(cat "$ROOTFS/hooks.log")"
	rt kill c1 KILL
	wait_for_status c1 stopped
	run rt delete c1
	[ "$status" -eq 0 ] || fail "delete: $output"
	[ "$(tail -n1 "$ROOTFS/hooks.log")" = poststop ]
}

@test "hooks get the state JSON on stdin" {
	all_hooks
	set_args sleep 1000
	create_container c1
	[ "$status" -eq 0 ] || fail "create: $output"
	rt start c1
	wait_for_file "$ROOTFS/hook-poststart.json"
	pid=$(container_pid c1)
	rt delete --force c1
	wait_for_file "$ROOTFS/hook-poststop.json"
	for k in prestart createRuntime createContainer startContainer poststart poststop; do
		f=$ROOTFS/hook-$k.json
		jq -e . "$f" >/dev/null || fail "$k: stdin is not JSON: $(cat "$f")"
		[ "$(jq -r .id "$f")" = c1 ] || fail "$k: id $(jq -r .id "$f")"
		[ "$(jq -r .bundle "$f")" = "$BUNDLE" ] || fail "$k: bundle $(jq -r .bundle "$f")"
		jq -e '.ociVersion and .status' "$f" >/dev/null || fail "$k: $(cat "$f")"
	done
	for k in prestart createRuntime poststart; do
		[ "$(jq -r .pid "$ROOTFS/hook-$k.json")" = "$pid" ] || fail "$k: pid $(jq -r .pid "$ROOTFS/hook-$k.json")"
	done
	# The state's pid is the host's view (runc 1.1 passes the in-container pid 1 here).
	for k in createContainer startContainer; do
		p=$(jq -r .pid "$ROOTFS/hook-$k.json")
		if is_agentrt; then
			[ "$p" = "$pid" ] || fail "$k: pid $p, want $pid"
		else
			[ "$p" -gt 0 ] || fail "$k: pid $p"
		fi
	done
	# runc 1.1 runs poststart during create, so its status there is "created";
	# it also passes "creating" to prestart and createRuntime.
	if is_agentrt; then
		for k in prestart createRuntime createContainer; do
			[ "$(jq -r .status "$ROOTFS/hook-$k.json")" = created ] ||
				fail "$k: status $(jq -r .status "$ROOTFS/hook-$k.json")"
		done
		[ "$(jq -r .status "$ROOTFS/hook-poststart.json")" = running ]
	fi
	[ "$(jq -r .status "$ROOTFS/hook-poststop.json")" = stopped ]
}

# poststop-no-stale-pid: the init is dead by poststop; runc leaves the pid out of that hook's
# state, agentrt passed the dead init's (a hook that signals it could hit a process that reused
# the pid).  Also for a create that fails.
@test "poststop-no-stale-pid: the poststop hook's state has no pid of the dead init" {
	update_config ".hooks = {\"poststop\": [$(hook poststop "$BUNDLE/hooks.log")]}"
	set_args sleep 1000
	run_detached c1
	[ "$status" -eq 0 ] || fail "run -d: $output"
	rt delete --force c1
	wait_for_file "$BUNDLE/hook-poststop.json"
	jq -e '.status == "stopped" and (.pid // 0) == 0' "$BUNDLE/hook-poststop.json" ||
		fail "poststop state: $(cat "$BUNDLE/hook-poststop.json")"
	rm -f "$BUNDLE/hook-poststop.json"
	set_args /nonexistent-program
	create_container c2
	assert_clean_failure
	jq -e '.status == "stopped" and (.pid // 0) == 0' "$BUNDLE/hook-poststop.json" ||
		fail "poststop state after a failed create: $(cat "$BUNDLE/hook-poststop.json")"
}

@test "createContainer and startContainer run in the container's namespaces" {
	update_config ".hooks = {
		\"createRuntime\": [{\"path\": \"/bin/sh\", \"args\": [\"sh\", \"-c\", \"readlink /proc/self/ns/mnt > $ROOTFS/ns-createRuntime\"]}],
		\"createContainer\": [{\"path\": \"/bin/sh\", \"args\": [\"sh\", \"-c\", \"readlink /proc/self/ns/mnt > $ROOTFS/ns-createContainer\"]}],
		\"startContainer\": [{\"path\": \"/bin/sh\", \"args\": [\"sh\", \"-c\", \"readlink /proc/self/ns/mnt > /ns-startContainer\"]}]}"
	set_args sleep 1000
	create_container c1
	[ "$status" -eq 0 ] || fail "create: $output"
	rt start c1
	wait_for_file "$ROOTFS/ns-startContainer"
	cns=$(readlink "/proc/$(container_pid c1)/ns/mnt")
	[ "$(cat "$ROOTFS/ns-createRuntime")" = "$(readlink /proc/self/ns/mnt)" ]
	[ "$(cat "$ROOTFS/ns-createContainer")" = "$cns" ]
	[ "$(cat "$ROOTFS/ns-startContainer")" = "$cns" ]
}

# startContainer-home: a startContainer hook without env runs with the program's environment,
# as runc's; runc and agentrt add HOME (from the image's /etc/passwd) to a process.env without
# one, but agentrt's hook got process.env without it (a hook running `git` or `pip` as the
# user found no home).
@test "startContainer-home: a startContainer hook without env gets the program's HOME, as runc" {
	update_config '.process.env = ["PATH=/usr/bin:/bin", "IMAGE_VAR=1"] | .process.user = {"uid": 1000, "gid": 1000} |
		.hooks.startContainer = [{"path": "/bin/sh", "args": ["sh", "-c", "env > /tmp/hook-env"]}]'
	set_cmd 'env > /tmp/prog-env; exec sleep 1000'
	create_container c1
	[ "$status" -eq 0 ] || fail "create: $output"
	rt start c1
	wait_for_file "$ROOTFS/tmp/prog-env"
	grep -qx 'HOME=/home/user' "$ROOTFS/tmp/prog-env" || fail "program: $(cat "$ROOTFS/tmp/prog-env")"
	grep -qx 'HOME=/home/user' "$ROOTFS/tmp/hook-env" || fail "hook: $(cat "$ROOTFS/tmp/hook-env")"
	grep -qx 'IMAGE_VAR=1' "$ROOTFS/tmp/hook-env" || fail "hook: $(cat "$ROOTFS/tmp/hook-env")"
}

# A startContainer hook is a program of the container's: it must not run with more than
# the container's program gets (runc runs it last, under the same restrictions).
@test "startContainer-restricted: a startContainer hook runs with the process's user, capabilities and seccomp filter" {
	mkdir -p "$ROOTFS/out"
	chmod 0777 "$ROOTFS/out"
	update_config '.process.user = {"uid": 1000, "gid": 1000} |
		.process.capabilities = {"bounding": ["CAP_KILL"], "effective": ["CAP_KILL"], "permitted": ["CAP_KILL"]} |
		.process.noNewPrivileges = true |
		.hooks.startContainer = [{"path": "/bin/sh", "args": ["sh", "-c", "id -u > /out/uid; grep -E \"^(CapEff|CapBnd|NoNewPrivs|Seccomp):\" /proc/self/status > /out/status"]}]'
	set_args true
	run rt run --bundle "$BUNDLE" c1
	[ "$status" -eq 0 ] || fail "run: $output"
	[ "$(cat "$ROOTFS/out/uid")" = 1000 ] || fail "uid $(cat "$ROOTFS/out/uid")"
	grep -qx 'CapEff:	0000000000000000' "$ROOTFS/out/status" || fail "$(cat "$ROOTFS/out/status")"
	grep -qx 'CapBnd:	0000000000000020' "$ROOTFS/out/status" || fail "$(cat "$ROOTFS/out/status")"
	grep -qx 'NoNewPrivs:	1' "$ROOTFS/out/status" || fail "$(cat "$ROOTFS/out/status")"
	# runc's own test: the filter kills the hook's mkdir
	update_config '.process.user = {"uid": 0, "gid": 0} | del(.process.capabilities) |
		.linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW", "architectures": ["SCMP_ARCH_X86_64"],
			"syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_KILL"}]} |
		.hooks.startContainer = [{"path": "/bin/sh", "args": ["sh", "-c", "mkdir /out/foo"]}]'
	run rt run --bundle "$BUNDLE" c2
	[ "$status" -ne 0 ] || fail "the hook's mkdir was allowed: $output"
	# (runc 1.1: "error running hook #0: ...")
	is_runc || assert_output_contains "error running startContainer hook #0"
	assert_output_contains "bad system call"
	[ ! -e "$ROOTFS/out/foo" ]
	[ -z "$(rt list -q)" ] || fail "left: $(rt list -q)"
}

@test "hook argv is passed verbatim" {
	update_config ".hooks.prestart = [{\"path\": \"/bin/sh\", \"args\": [\"sh\", \"-c\", \"printf '%s|' \\\"\$0\\\" \\\"\$@\\\" > $BUNDLE/argv\", \"zero\", \"a b\", \"\$HOME\", \"\"]}]"
	set_args true
	run rt run --bundle "$BUNDLE" c1
	[ "$status" -eq 0 ] || fail "$output"
	[ "$(cat "$BUNDLE/argv")" = 'zero|a b|$HOME||' ] || fail "argv: $(cat "$BUNDLE/argv")"
}

@test "hook env is only the hook's env" {
	update_config ".hooks.prestart = [{\"path\": \"/bin/sh\", \"args\": [\"sh\", \"-c\", \"export -p > $BUNDLE/env\"], \"env\": [\"HOOKVAR=hook value\"]}]"
	set_args true
	AGENTRT_LEAK_CANARY=leaked run rt run --bundle "$BUNDLE" c1
	[ "$status" -eq 0 ] || fail "$output"
	grep -q "HOOKVAR='hook value'" "$BUNDLE/env" || fail "$(cat "$BUNDLE/env")"
	! grep -q AGENTRT_LEAK_CANARY "$BUNDLE/env" || fail "runtime env leaked into the hook"
	# Nothing but HOOKVAR and what the shell itself sets.
	others=$(sed -n "s/^export \([A-Za-z_0-9]*\)=.*/\1/p" "$BUNDLE/env" | grep -vxE 'HOOKVAR|PWD|OLDPWD|SHLVL|_' || true)
	[ -z "$others" ] || fail "unexpected variables: $others"
}

# runc and crun: a hook without `env` inherits the runtime's environment (a createRuntime hook
# `nsenter --net=... nft -f` needs PATH), and every hook runs in the bundle directory.  The
# image's environment (process.env) never reaches a hook.
@test "hooks without env inherit the runtime's environment and run in the bundle" {
	local ph phases="prestart createRuntime createContainer poststart poststop"
	# runc 1.1 runs createContainer in the rootfs with the image's env (process.env)
	is_runc && phases="prestart createRuntime poststart poststop"
	for ph in $phases; do
		update_config ".hooks.$ph = [{\"path\": \"/bin/sh\", \"args\": [\"sh\", \"-c\",
			\"{ pwd; echo \\\"canary=\$AGENTRT_HOOK_CANARY\\\"; echo \\\"image=\$IMAGE_ONLY\\\"; command -v ip; } > $BUNDLE/$ph.out\"]}]"
	done
	update_config '.process.env += ["IMAGE_ONLY=from-image"]'
	set_args true
	AGENTRT_HOOK_CANARY=inherited run rt run --bundle "$BUNDLE" c1
	[ "$status" -eq 0 ] || fail "$output"
	for ph in $phases; do
		[ -s "$BUNDLE/$ph.out" ] || fail "$ph hook did not run"
		[ "$(sed -n 1p "$BUNDLE/$ph.out")" = "$BUNDLE" ] || fail "$ph cwd: $(cat "$BUNDLE/$ph.out")"
		grep -qx 'canary=inherited' "$BUNDLE/$ph.out" || fail "$ph env: $(cat "$BUNDLE/$ph.out")"
		grep -qx 'image=' "$BUNDLE/$ph.out" || fail "$ph saw the image env: $(cat "$BUNDLE/$ph.out")"
		grep -q '/ip$' "$BUNDLE/$ph.out" || fail "$ph has no PATH to ip: $(cat "$BUNDLE/$ph.out")"
	done
}

@test "a hook with an empty env gets an empty environment" {
	update_config ".hooks.prestart = [{\"path\": \"/bin/sh\", \"args\": [\"sh\", \"-c\", \"export -p > $BUNDLE/env\"], \"env\": []}]"
	set_args true
	AGENTRT_LEAK_CANARY=leaked run rt run --bundle "$BUNDLE" c1
	[ "$status" -eq 0 ] || fail "$output"
	others=$(sed -n "s/^export \([A-Za-z_0-9]*\)=.*/\1/p" "$BUNDLE/env" | grep -vxE 'PWD|OLDPWD|SHLVL|_' || true)
	[ -z "$others" ] || fail "unexpected variables: $others"
}

@test "a failing prestart hook fails create and leaves nothing behind" {
	update_config '.hooks.prestart = [{"path": "/bin/sh", "args": ["sh", "-c", "exit 3"]}]'
	set_cmd 'echo ran > /tmp/ran; sleep 1000'
	create_container c1
	assert_clean_failure
	[ -z "$(rt list -q)" ] || fail "container left: $(rt list)"
	[ ! -e "$ROOTFS/tmp/ran" ]
	[ -z "$(mounts_below "$BUNDLE")$(mounts_below "$TEST_ROOT")" ]
	# No process of the container is left (its init would run from the bundle's rootfs).
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/root" 2>/dev/null)" != "$ROOTFS" ] || fail "process ${p#/proc/} left in the rootfs"
	done
}

@test "a failing createRuntime hook fails create and leaves nothing behind" {
	update_config '.hooks.createRuntime = [{"path": "/bin/false"}]'
	set_args sleep 1000
	create_container c1
	assert_clean_failure
	[ -z "$(rt list -q)" ]
}

@test "a failing hook is named by its phase and index, as runc (error running createRuntime hook #1)" {
	for ph in prestart createRuntime createContainer; do
		update_config ".hooks = {\"$ph\": [{\"path\": \"/bin/true\"}, {\"path\": \"/bin/false\"}]}"
		set_args true
		create_container c1
		assert_clean_failure
		[[ "$output" == *"error running $ph hook #1: \`/bin/false\`: exit status 1"* ]] || fail "$ph: $output"
		[ -z "$(rt list -q)" ] || fail "$ph: container left"
	done
}

# poststop-after-failed-create: the spec's lifecycle goes on at step 12 (destroy) and 13
# (poststop) when a prestart, createRuntime or createContainer hook fails, and runc runs the
# poststop hooks on any create that fails once the container exists (its destroy), a bad mount
# too; agentrt ran none, so what the earlier hooks set up on the host stayed.
@test "poststop-after-failed-create: a failed create runs the poststop hooks with status stopped" {
	for ph in prestart createRuntime createContainer mount; do
		rm -f "$BUNDLE/poststop.log" "$BUNDLE/hook-poststop.json"
		update_config ".hooks = {\"poststop\": [$(hook poststop "$BUNDLE/poststop.log")]} | .mounts |= map(select(.destination != \"/x\"))"
		if [ "$ph" = mount ]; then
			update_config '.mounts += [{"destination": "/x", "type": "bind", "source": "/nonexistent-agentrt-src"}]'
		else
			update_config ".hooks.$ph = [{\"path\": \"/bin/false\"}]"
		fi
		set_args true
		create_container c1
		assert_clean_failure
		[ -z "$(rt list -q)" ] || fail "$ph: container left"
		[ "$(cat "$BUNDLE/poststop.log" 2>/dev/null)" = poststop ] || fail "$ph: poststop did not run once"
		jq -e '.id == "c1" and .status == "stopped"' "$BUNDLE/hook-poststop.json" ||
			fail "$ph: poststop state: $(cat "$BUNDLE/hook-poststop.json")"
	done
}

@test "a failing poststart hook stops the container and fails start and run (spec 1.1+, runc 1.2); poststop still runs" {
	update_config ".hooks = {\"poststart\": [{\"path\": \"/bin/false\"}],
		\"poststop\": [{\"path\": \"/bin/sh\", \"args\": [\"sh\", \"-c\", \"echo stopped >> $BUNDLE/poststop\"]}]}"
	set_args sleep 1000
	create_container c1
	[ "$status" -eq 0 ] || fail "create: $output"
	pid=$(container_pid c1)
	run rt start c1
	[ "$status" -ne 0 ] && [[ "$output" == *"start \`c1\`: error running poststart hook #0: \`/bin/false\`: exit status 1"* ]] ||
		fail "start: $status: $output"
	for i in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	! kill -0 "$pid" 2>/dev/null || fail "the container's process still runs"
	[ "$(container_status c1)" = stopped ]
	run rt delete c1
	[ "$status" -eq 0 ] || fail "delete: $output"
	[ "$(cat "$BUNDLE/poststop")" = stopped ]
	# run, detached and in the foreground: the same error, nothing left, poststop ran
	for mode in -d ""; do
		rm -f "$BUNDLE/poststop"
		run rt run $mode --bundle "$BUNDLE" c2
		[ "$status" -ne 0 ] && [[ "$output" == *"error running poststart hook #0"* ]] || fail "run $mode: $status: $output"
		[ -z "$(rt list -q)" ] || fail "run $mode: container left"
		[ "$(cat "$BUNDLE/poststop")" = stopped ] || fail "run $mode: no poststop"
	done
}

@test "a nonexistent hook path fails create" {
	update_config '.hooks.prestart = [{"path": "/nonexistent/agentrt-hook"}]'
	set_args true
	create_container c1
	assert_clean_failure
	[ -z "$(rt list -q)" ]
}

@test "a hook that exceeds its timeout is killed and fails create" {
	update_config ".hooks.prestart = [{\"path\": \"/bin/sh\", \"args\": [\"sh\", \"-c\", \"echo \$\$ > $BUNDLE/hook.pid; exec sleep 30\"], \"timeout\": 1}]"
	set_args true
	start=$(date +%s)
	create_container c1
	elapsed=$(($(date +%s) - start))
	assert_clean_failure
	[ "$elapsed" -lt 15 ] || fail "create took ${elapsed}s with a 1 s hook timeout"
	[ -z "$(rt list -q)" ]
	# The hook process is gone.
	pid=$(cat "$BUNDLE/hook.pid")
	for i in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	! kill -0 "$pid" 2>/dev/null || fail "hook process $pid still running"
}

# hook-timeout-children: a hook past its timeout was killed alone; what it had started (a
# stuck curl under a shell script) ran on, holding the runtime's stderr: an engine reading
# create's output waited for it (runc 1.1 leaves them too).  Its whole tree goes now.
@test "hook-timeout-children: a hook killed at its timeout takes its children, and create's output ends" {
	update_config ".hooks.prestart = [{\"path\": \"/bin/sh\", \"args\": [\"sh\", \"-c\", \"sleep 40 & echo \$! > $BUNDLE/child.pid; (sh -c 'echo \$\$ > $BUNDLE/grandchild.pid; exec sleep 40') & wait\"], \"timeout\": 1}]"
	set_args true
	local start=$SECONDS pid
	# through a pipe, as an engine reads it: ends when every holder of the write end is gone
	output=$(timeout 30 "$AGENTRT" --root "$TEST_ROOT" create --bundle "$BUNDLE" c1 2>&1 </dev/null) && fail "create succeeded"
	[ $((SECONDS - start)) -lt 15 ] || fail "create's output ended after $((SECONDS - start)) s: $output"
	grep -q 'timed out' <<<"$output" || fail "$output"
	[ -z "$(rt list -q)" ]
	for pid in $(cat "$BUNDLE/child.pid" "$BUNDLE/grandchild.pid"); do
		# (gone, or a zombie its new parent has yet to reap)
		for i in $(seq 50); do
			[ -e /proc/$pid ] && [ "$(awk '{print $3}' /proc/$pid/stat 2>/dev/null)" != Z ] || break
			sleep 0.1
		done
		[ ! -e /proc/$pid ] || [ "$(awk '{print $3}' /proc/$pid/stat 2>/dev/null)" = Z ] ||
			fail "the hook's child $pid still runs: $(cat /proc/$pid/stat)"
	done
}

# hook-timeout-daemon: a hook past its timeout whose child had left its tree (setsid and a
# double fork: the intermediate process exits, the daemon goes to the host's init) ran on
# with the runtime's stderr, so an engine reading create's output waited for the daemon.
# The runtime is the hooks' subreaper while one runs: what a timed-out hook started stays
# below it and goes with the hook.
@test "hook-timeout-daemon: a hook's daemonised grandchild (setsid, double fork) goes with it at its timeout" {
	update_config ".hooks.prestart = [{\"path\": \"/bin/sh\", \"args\": [\"sh\", \"-c\", \"(setsid sh -c 'echo \$\$ > $BUNDLE/daemon.pid; exec sleep 20' &); sleep 20\"], \"timeout\": 1}]"
	set_args true
	local start=$SECONDS pid
	output=$(timeout 30 "$AGENTRT" --root "$TEST_ROOT" create --bundle "$BUNDLE" c1 2>&1 </dev/null) && fail "create succeeded"
	local took=$((SECONDS - start))
	pid=$(cat "$BUNDLE/daemon.pid")
	[ -n "$pid" ] || fail "the hook did not start its daemon: $output"
	for i in $(seq 50); do
		[ -e /proc/$pid ] && [ "$(awk '{print $3}' /proc/$pid/stat 2>/dev/null)" != Z ] || break
		sleep 0.1
	done
	if [ -e /proc/$pid ] && [ "$(awk '{print $3}' /proc/$pid/stat 2>/dev/null)" != Z ]; then
		kill -9 "$pid"
		fail "the hook's daemon $pid still runs after create failed"
	fi
	[ "$took" -lt 15 ] || fail "create's output ended after $took s: $output"
	grep -q 'timed out' <<<"$output" || fail "$output"
	[ -z "$(rt list -q)" ]
}

# daemon_pids TAG: the host pids of the processes running `sleep TAG` (the daemons below).
daemon_pids() {
	local p a
	for p in /proc/[0-9]*; do
		a=()
		{ mapfile -d '' -t a <"$p/cmdline"; } 2>/dev/null
		[ "${a[0]:-}" = sleep ] && [ "${a[1]:-}" = "$1" ] && echo "${p#/proc/}"
	done
	return 0
}

# hook-timeout-daemon-in-container: the createContainer hook runs from the init, in the
# container's namespaces; what it daemonised (setsid, double fork) must go at its timeout as a
# host-side hook's does, with the container's pid namespace and without one.
@test "hook-timeout-daemon-in-container: a createContainer hook's daemonised grandchild goes with it at its timeout (pid namespace or not)" {
	known_broken runc "runc 1.1.5's create did not end in 10 minutes, the daemon ran on"
	local pidns tag start took pids i
	for pidns in yes no; do
		tag=2$RANDOM.$((${#pidns} + 1))
		cp "$BUNDLE/config.json" "$BUNDLE/config.json.keep"
		update_config ".hooks.createContainer = [{\"path\": \"/bin/sh\", \"args\": [\"sh\", \"-c\", \"(setsid sh -c 'echo up > $BUNDLE/daemon.$pidns; exec sleep $tag' </dev/null &); sleep $tag\"], \"timeout\": 1}]"
		[ "$pidns" = yes ] || update_config '.linux.namespaces |= map(select(.type != "pid"))'
		set_args true
		start=$SECONDS
		# (to a file: a daemon that kept the pipe would keep a $(...) waiting past any timeout)
		timeout -k 5 30 "$AGENTRT" --root "$TEST_ROOT" create --bundle "$BUNDLE" "c-$pidns" \
			</dev/null >"$BUNDLE/create.out" 2>&1 && fail "$pidns: create succeeded"
		took=$((SECONDS - start))
		output=$(<"$BUNDLE/create.out")
		[ -e "$BUNDLE/daemon.$pidns" ] || fail "pid namespace $pidns: the hook did not start its daemon: $output"
		mv "$BUNDLE/config.json.keep" "$BUNDLE/config.json"
		for i in $(seq 50); do
			pids=$(daemon_pids "$tag")
			[ -n "$pids" ] || break
			sleep 0.1
		done
		if [ -n "$pids" ]; then
			kill -9 $pids
			fail "pid namespace $pidns: the hook's processes $pids still run after create failed: $output"
		fi
		[ "$took" -lt 15 ] || fail "pid namespace $pidns: create's output ended after $took s: $output"
		grep -q 'timed out' <<<"$output" || fail "pid namespace $pidns: $output"
		[ -z "$(rt list -q)" ] || fail "pid namespace $pidns: left $(rt list -q)"
	done
}

# hook-child-outlives-container: a createContainer or startContainer hook runs from the init;
# what it starts and leaves (`sleep &`) was, in a container without a pid namespace of its own,
# no process's of the container: it ran on after the hook, and after the container stopped, in
# the container's cgroup, until `delete`.  Now it goes when the hook ends.  With a pid namespace
# of its own it is the init's (its pid 1) until the container stops, as before.
@test "hook-child-outlives-container: what an init's hook leaves goes with the hook (no pid namespace) or the container (its own)" {
	known_broken runc "runc 1.1.5's create waits for the createContainer hook's child (killed at 60 s)"
	local kind pidns tag pids i
	for kind in createContainer startContainer; do
		for pidns in no yes; do
			tag=4$RANDOM.$((${#pidns} + 1))
			cp "$BUNDLE/config.json" "$BUNDLE/config.json.keep"
			printf '#!/bin/sh\nsleep %s </dev/null >/dev/null 2>&1 &\necho up >%s\n' "$tag" \
				"$( [ "$kind" = startContainer ] && echo /hook.up || echo "$BUNDLE/hook.up")" >"$ROOTFS/hook.sh"
			chmod 0755 "$ROOTFS/hook.sh"
			rm -f "$ROOTFS/hook.up" "$BUNDLE/hook.up"
			update_config ".hooks.$kind = [{\"path\": \"$( [ "$kind" = startContainer ] && echo /hook.sh || echo "$ROOTFS/hook.sh")\"}]"
			[ "$pidns" = yes ] || update_config '.linux.namespaces |= map(select(.type != "pid"))'
			set_args sleep 100
			create_container c1
			[ "$status" -eq 0 ] || fail "$kind, pid namespace $pidns: create: $output"
			rt start c1 || fail "$kind, pid namespace $pidns: start"
			mv "$BUNDLE/config.json.keep" "$BUNDLE/config.json"
			[ -e "$ROOTFS/hook.up" ] || [ -e "$BUNDLE/hook.up" ] || fail "$kind, pid namespace $pidns: the hook did not run"
			if [ "$pidns" = no ]; then
				for ((i = 0; i < 50; i++)); do
					pids=$(daemon_pids "$tag")
					[ -n "$pids" ] || break
					sleep 0.1
				done
				[ -z "$pids" ] || { kill -9 $pids; fail "$kind, no pid namespace: the hook's child $pids runs after the hook"; }
			fi
			rt kill c1 KILL || fail "$kind, pid namespace $pidns: kill"
			wait_for_status c1 stopped 10 || fail "$kind, pid namespace $pidns: not stopped"
			for ((i = 0; i < 50; i++)); do
				pids=$(daemon_pids "$tag")
				[ -n "$pids" ] || break
				sleep 0.1
			done
			[ -z "$pids" ] || { kill -9 $pids; fail "$kind, pid namespace $pidns: the hook's child $pids runs after the container stopped"; }
			rt delete c1 || fail "$kind, pid namespace $pidns: delete"
		done
	done
}

@test "poststop runs on delete --force of a running container" {
	update_config ".hooks.poststop = [$(hook poststop "$BUNDLE/hooks.log")]"
	set_args sleep 1000
	run_detached c1
	[ "$status" -eq 0 ] || fail "run -d: $output"
	run rt delete --force c1
	[ "$status" -eq 0 ] || fail "$output"
	grep -qx poststop "$BUNDLE/hooks.log"
}

# hook-state-in-container: the createContainer and startContainer hooks (run from the init) got a
# state without the annotations the other hooks get (runc gives them), and it was formatted
# by hand: a bundle path with a quote or a backslash made it invalid JSON, or added fields.
@test "hook-state-in-container: createContainer and startContainer get the annotations; any bundle path is valid JSON" {
	local b=$BUNDLE/we\"ird\\dir
	make_bundle "$b"
	local cfg=$b/config.json
	jq --arg log "$BUNDLE" '.annotations = {"org.example.k": "v\"1"} | .process.args = ["true"] |
		.hooks = {"createContainer": [{"path": "/bin/sh", "args": ["sh", "-c", "cat > \($log)/cc.json"]}],
			"startContainer": [{"path": "/bin/sh", "args": ["sh", "-c", "cat > /sc.json"]}]}' \
		"$cfg" >"$cfg.new" && mv "$cfg.new" "$cfg"
	run rt run --bundle "$b" hs </dev/null
	[ "$status" -eq 0 ] || fail "run: $output"
	for f in "$BUNDLE/cc.json" "$b/rootfs/sc.json"; do
		jq -e --arg b "$b" '.id == "hs" and .bundle == $b and .annotations["org.example.k"] == "v\"1"' "$f" ||
			fail "$f: $(cat "$f")"
	done
}
