#!/usr/bin/env bats
# integration/containerd.bats - containerd 1.6 (ctr, io.containerd.runc.v2
# shim) with agentrt as the shim's runc binary.
#
# setup_file starts a private containerd (root, state and sockets under a
# temp dir), imports the busybox OCI archive with `ctr image import`; the
# shim's runtime root (--runc-root) is under the temp dir too.  The contrib
# config.toml (CRI runtime handler) is checked with `containerd config dump`.

load lib
bats_require_minimum_version 1.5.0

IMG=docker.io/agentrt-it/busybox:latest

setup_file() {
	it_need_root
	it_need_bin containerd ctr containerd-shim-runc-v2
	[ -x "$AGENTRT" ] || it_die "agentrt not built: $AGENTRT (run make)"
	it_tmp containerd
	it_build_image "$IT_TMP/img"
	containerd_start "$IT_TMP/ctrd"
	CTR_NS=agentrt-it-$$
	export CTR_NS
	c image import --all-platforms "$IT_TMP/img/oci.tar" >/dev/null
}

teardown_file() {
	[ -n "${IT_TMP:-}" ] || return 0
	local rc=0 t
	for t in $(c task ls -q 2>/dev/null); do c task kill -s SIGKILL "$t" >/dev/null 2>&1; done
	sleep 0.3
	for t in $(c task ls -q 2>/dev/null); do c task delete -f "$t" >/dev/null 2>&1; done
	for t in $(c container ls -q 2>/dev/null); do c container rm "$t" >/dev/null 2>&1; done
	containerd_stop
	it_kill_under "$IT_TMP" || rc=1
	it_rm_cgroups "$CTR_NS"
	it_cleanup_tmp || rc=1
	return $rc
}

c() { ctr --address "$CTRD_SOCK" -n "$CTR_NS" "$@"; }

# crt ARGS...: `ctr run` with agentrt as the runc binary of the v2 shim.
crt() {
	c run --fifo-dir "$IT_TMP/ctrd/fifo" --runtime io.containerd.runc.v2 --runc-binary "$AGENTRT" \
		--runc-root "$IT_TMP/ctrd/runc-root" "$@"
}

@test "ctr image import of the busybox OCI archive" {
	run c image ls -q
	[[ "$output" == *"$IMG"* ]]
}

@test "ctr run --runc-binary agentrt: output and exit code" {
	run crt --rm "$IMG" t1 sh -c 'echo hello; exit 3'
	[ "$status" -eq 3 ]
	[ "$output" = hello ]
	# the shim kept agentrt's state under --runc-root/<namespace>
	[ -d "$IT_TMP/ctrd/runc-root/$CTR_NS" ]
}

@test "ctr run: the container is in its cgroup /<namespace>/<id>" {
	# seen from the host: inside, the agent profile's cgroup namespace shows `/`
	crt -d "$IMG" t1b sleep 60
	pid=$(c task ls | awk '$1 == "t1b" {print $2}')
	[ -n "$pid" ]
	run grep pids: "/proc/$pid/cgroup"
	c task kill -s SIGKILL t1b >/dev/null 2>&1 || true
	for _ in $(seq 50); do c task delete t1b >/dev/null 2>&1 && break; sleep 0.1; done
	c container rm t1b >/dev/null 2>&1 || true
	[[ "$output" == *"pids:/$CTR_NS/t1b"* ]]
}

@test "ctr run: a missing command fails with agentrt's message" {
	run crt --rm "$IMG" t1c /nonexistent
	[ "$status" -ne 0 ]
	[[ "$output" == *"create \`t1c\`"*"no such file or directory"* ]]
}

@test "ctr run -d, task exec (exit code), ps, pause/resume, kill, delete" {
	crt -d "$IMG" t2 sh -c 'trap "exit 7" TERM; while :; do sleep 0.1; done'
	[ "$(c task ls | awk '$1 == "t2" { print $3 }')" = RUNNING ]
	# the exec's stdout reaches ctr; ctr 1.6 can lose a short exec's output under load (cx,
	# below; seen in CI with the exit code right), so up to three tries, each its own exec
	local i
	for i in 1 2 3; do
		run c task exec --fifo-dir "$IT_TMP/ctrd/fifo" --exec-id "e1-$i" t2 sh -c 'echo ex; exit 4'
		[ "$status" -eq 4 ] || it_die "exec: $status $output"
		[ "$output" = ex ] && break
	done
	[ "$output" = ex ] || it_die "no output from 3 execs: [$output]"
	pid=$(c task ls | awk '$1 == "t2" { print $2 }')
	run c task ps t2
	[[ "$output" == *"$pid"* ]]
	c task pause t2
	[ "$(c task ls | awk '$1 == "t2" { print $3 }')" = PAUSED ]
	[ "$(cat /sys/fs/cgroup/freezer/$CTR_NS/t2/freezer.state)" = FROZEN ]
	c task resume t2
	[ "$(c task ls | awk '$1 == "t2" { print $3 }')" = RUNNING ]
	c task kill -s SIGTERM t2
	it_wait 10 eval '[ "$(c task ls | awk "\$1 == \"t2\" { print \$3 }")" = STOPPED ]'
	run c task delete t2
	[ "$status" -eq 0 ]
	[[ "$output" == *"exit code 7"* ]]
	c container rm t2
	[ ! -e "$IT_TMP/ctrd/runc-root/$CTR_NS/t2" ]
}

@test "ctr run -t through a real pty" {
	run timeout 30 script -qec "ctr --address $CTRD_SOCK -n $CTR_NS run --fifo-dir $IT_TMP/ctrd/fifo -t --rm --runtime io.containerd.runc.v2 --runc-binary $AGENTRT --runc-root $IT_TMP/ctrd/runc-root $IMG t3 sh -c 'tty; exit 5'" /dev/null </dev/null
	[ "$status" -eq 5 ]
	[[ "$output" == */dev/pts/0* ]]
}

@test "contrib/containerd/config.toml: containerd parses the agentrt runtime handler" {
	local d=$IT_TMP/cfgcheck
	mkdir -p "$d"
	sed "s|/usr/local/bin/agentrt|$AGENTRT|" "$IT_SRC/contrib/containerd/config.toml" >"$d/agentrt.toml"
	printf 'version = 2\nroot = "%s/root"\nstate = "%s/state"\nimports = ["%s/agentrt.toml"]\n' "$d" "$d" "$d" >"$d/config.toml"
	run containerd --config "$d/config.toml" config dump
	[ "$status" -eq 0 ]
	echo "$output" | grep -A12 'runtimes.agentrt\]' | grep -q 'runtime_type = "io.containerd.runc.v2"'
	echo "$output" | grep -A3 'runtimes.agentrt.options\]' | grep -q "BinaryName = \"$AGENTRT\""
}

# the socket and the client are mounts agentrt's create adds under the default (agent)
# profile; the child is a container beside its parent in the shim's --runc-root/<namespace>
@test "ctr run --runc-binary agentrt (default profile): sub-agents inside the container: a child's exit code, its work committed into the parent's view, no child left after task delete" {
	local host=$IT_TMP/sub-host root=$IT_TMP/ctrd/runc-root/$CTR_NS cpid ccg
	mkdir -p "$host"
	echo hello >"$host/a.txt"
	crt -d --mount "type=bind,src=$host,dst=/workspace,options=rbind:rw" --cwd /workspace \
		"$IMG" subp sleep 1000 >/dev/null
	# what the container prints is compared inside it (cx, below)
	run cx e0 sh -c 'test -S /run/agentrt/agent.sock && test -x /run/agentrt/bin/agentrt'
	[ "$status" -eq 0 ] || it_die "no socket or client in the container: $status $output"
	run cx e1 /run/agentrt/bin/agentrt sub run --name c -- sh -c 'exit 5'
	[ "$status" -eq 5 ] || it_die "sub run: $status $output"
	run cx e2 sh -c 'out=$(/run/agentrt/bin/agentrt sub run --name w -- sh -c "echo from-child; echo x >c.txt") || exit $?
		[ "$out" = from-child ] || exit 99'
	[ "$status" -eq 0 ] || it_die "sub run: $status $output (99: not the child's output)"
	run cx e3 sh -c 'test -e /workspace/a.txt && ! test -e /workspace/c.txt'
	[ "$status" -eq 0 ] || it_die "parent's view before commit: $status $output"
	run cx e4 /run/agentrt/bin/agentrt sub commit w
	[ "$status" -eq 0 ] || it_die "commit: $output"
	run cx e5 sh -c '[ "$(cat /workspace/c.txt)" = x ]'
	[ "$status" -eq 0 ] || it_die "parent's view after commit: $status $output"
	[ ! -e "$host/c.txt" ]
	cx e6 /run/agentrt/bin/agentrt sub run --name d --detach -- sleep 600 >/dev/null
	[ -d "$root/subp" ] && [ -d "$root/subp.d" ] || it_die "no child state under $root"
	# the child, listed below its parent
	run "$AGENTRT" --root "$root" list
	[[ "$output" == *"└─ subp.d"* ]] || it_die "agentrt list: $output"
	cpid=$(jq -r .pid "$root/subp.d/state.json")
	kill -0 "$cpid"
	ccg=$(awk -F: '$2 == "pids" { print $3 }' "/proc/$cpid/cgroup")
	[[ "$ccg" == "/$CTR_NS/subp/"* ]] && [ -d "/sys/fs/cgroup/pids$ccg" ] || it_die "child cgroup: $ccg"
	c task kill -s SIGKILL subp >/dev/null
	it_wait 10 eval '[ "$(c task ls | awk "\$1 == \"subp\" { print \$3 }")" = STOPPED ]'
	c task delete subp >/dev/null
	c container rm subp
	! kill -0 "$cpid" 2>/dev/null
	[ ! -e "$root/subp.d" ] && [ ! -e "$root/subp" ]
	[ ! -e "/sys/fs/cgroup/pids$ccg" ] || it_die "child cgroup left: $ccg"
	run "$AGENTRT" --root "$root" list
	[[ "$output" != *subp* ]] || it_die "agentrt list after delete: $output"
	for n in subp subp.c subp.w subp.d; do
		"$AGENTRT" workspace "$n" purge >/dev/null 2>&1 || true
		"$AGENTRT" audit --purge "$n" >/dev/null 2>&1 || true
	done
}

# cx EXEC-ID CMD...: `ctr task exec` in the container subp.  Its exit code is the test's; its
# output is only for messages: with containerd 1.6 an exec that prints and exits at once
# sometimes reaches ctr with no output at all under load: 1 run in 30 of this test, `cat` of a
# file that held `x` (read again by the next exec) printed nothing and exited 0.  150 execs of
# `cat /etc/passwd` in a loaded loop lost nothing with runc or agentrt; where ctr loses it (its
# fifo's open, done by a goroutine, is cancelled once the exit is in) is read from its code,
# not proven.
cx() {
	local id=$1
	shift
	c task exec --fifo-dir "$IT_TMP/ctrd/fifo" --exec-id "$id" subp "$@"
}
