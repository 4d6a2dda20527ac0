#!/usr/bin/env bats
# subagents.bats - an agent starts sandboxes for its sub-agents that can only narrow its own
# (docs/subagents.md, monitor/subagents.h).  Everything is asked from INSIDE a parent
# container (`agentrt exec P /run/agentrt/bin/agentrt sub ...`), as an agent would, and
# checked from outside: the host's cgroup files, /proc, mountinfo, the trails, packets that
# arrive or not at a fake internet built here (TEST-NET only, as egress.bats):
#   agentrt-t-sctr-N   the parent's network namespace (joined by path), 192.0.2.2/30
#   agentrt-t-sinet-N  the internet: 203.0.113.10:80 (allowed.test), 198.51.100.20:80
#                      (other.test), [2001:db8:203::10]:80, [2001:db8:198::20]:80, dnsmasq 192.0.2.53
#   agentrt-t-shost-N  plays the host: agentrt runs in it (nsenter --net)

load helpers

SUB=/run/agentrt/bin/agentrt

sn_bg() {
	local ns=$1
	shift
	ip netns exec "$ns" "$@" </dev/null >/dev/null 2>>"$SNT_DIR/servers.err" &
	echo $! >>"$SNT_DIR/pids"
}

setup_file() {
	[ "$(id -u)" -eq 0 ] || skip "needs root"
	for t in ip nsenter socat dnsmasq slirp4netns jq; do
		command -v "$t" >/dev/null || skip "needs $t"
	done
	ensure_rootfs
	export SNT_TAG=$$
	export SNT_CTR=agentrt-t-sctr-$SNT_TAG SNT_INET=agentrt-t-sinet-$SNT_TAG SNT_HOST=agentrt-t-shost-$SNT_TAG
	export SNT_DIR
	SNT_DIR=$(mktemp -d /tmp/agentrt-sub-bats.XXXXXX)
	chmod 0755 "$SNT_DIR"
	: >"$SNT_DIR/pids"
	fake_links "$SNT_CTR" "$SNT_INET" "$SNT_HOST" 203.0.113.10 198.51.100.20 192.0.2.53 \
		2001:db8:203::10 2001:db8:198::20 || fail "fake internet: links"
	sn_bg "$SNT_INET" socat TCP-LISTEN:80,bind=203.0.113.10,fork,reuseaddr SYSTEM:"echo hello-allowed"
	sn_bg "$SNT_INET" socat TCP-LISTEN:80,bind=198.51.100.20,fork,reuseaddr SYSTEM:"echo hello-other"
	sn_bg "$SNT_INET" socat "TCP6-LISTEN:80,bind=[2001:db8:203::10],fork,reuseaddr" SYSTEM:"echo hello6-allowed"
	sn_bg "$SNT_INET" socat "TCP6-LISTEN:80,bind=[2001:db8:198::20],fork,reuseaddr" SYSTEM:"echo hello6-other"
	cat >"$SNT_DIR/dns.conf" <<-EOF
		no-resolv
		no-hosts
		bind-interfaces
		listen-address=192.0.2.53
		port=53
		local=/test/
		server=/slow.test/192.0.2.53#5399
		host-record=allowed.test,203.0.113.10
		host-record=other.test,198.51.100.20
		log-queries
		log-facility=$SNT_DIR/dns.log
	EOF
	# slow.test's server reads every query and answers none (sub-dns-share)
	sn_bg "$SNT_INET" socat -u UDP-RECV:5399,bind=192.0.2.53 OPEN:/dev/null
	sn_bg "$SNT_INET" dnsmasq -k -C "$SNT_DIR/dns.conf" --pid-file= --user=root
	for _ in $(seq 50); do
		ip netns exec "$SNT_INET" busybox nslookup allowed.test 192.0.2.53 >/dev/null 2>&1 && break
		sleep 0.1
	done
	# the parent may reach both names; the agent profile otherwise
	export SNT_PROFILE=$SNT_DIR/parent.json
	cat >"$SNT_PROFILE" <<-'EOF'
		{"name": "sub-parent", "extends": "agent",
		 "egress": {"allow": ["allowed.test", "other.test"], "dns": {"upstream": ["192.0.2.53"]}}}
	EOF
	jq '.name = "sub-flat" | .subagents.maxDepth = 1' "$SNT_PROFILE" >"$SNT_DIR/flat.json"
	jq '.name = "sub-off" | .subagents.enabled = false' "$SNT_PROFILE" >"$SNT_DIR/off.json"
	jq '.name = "sub-two" | .subagents.maxChildren = 2' "$SNT_PROFILE" >"$SNT_DIR/two.json"
	jq '.name = "sub-v6" | .egress.allow += ["2001:db8:203::10", "2001:db8:198::20"]' \
		"$SNT_PROFILE" >"$SNT_DIR/v6.json"
	printf 'sub-secret-value-0123456789\n' >"$SNT_DIR/api"
	chmod 0600 "$SNT_DIR/api"
	jq --arg f "$SNT_DIR/api" '.name = "sub-sec" |
		.secrets = [{"name": "API_TOKEN", "file": $f, "hosts": ["allowed.test"]}]' \
		"$SNT_PROFILE" >"$SNT_DIR/sec.json"
}

teardown_file() {
	local pid
	if [ -n "${SNT_DIR:-}" ] && [ -f "$SNT_DIR/pids" ]; then
		for pid in $(cat "$SNT_DIR/pids"); do kill "$pid" 2>/dev/null; done
		for pid in $(cat "$SNT_DIR/pids"); do
			for _ in $(seq 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
			kill -9 "$pid" 2>/dev/null
		done
	fi
	for ns in "${SNT_CTR:-}" "${SNT_INET:-}" "${SNT_HOST:-}"; do
		[ -n "$ns" ] && ip netns delete "$ns" 2>/dev/null
	done
	[ -n "${SNT_DIR:-}" ] && rm -rf "$SNT_DIR"
	local left=
	if [ -d "$TEST_ROOT" ]; then
		left=$(root_leftovers "$TEST_ROOT")
		rm -rf --one-file-system "$TEST_ROOT"
	fi
	remove_data_dir
	for ctrl in /sys/fs/cgroup/*/ /sys/fs/cgroup/; do
		[ -d "$ctrl$CG_PARENT" ] && rmdir "$ctrl$CG_PARENT"/*/*/ "$ctrl$CG_PARENT"/*/ "$ctrl$CG_PARENT" 2>/dev/null
	done
	! ip netns list | grep -q "agentrt-t-s[a-z]*-${SNT_TAG:-none}\b" || fail "test namespaces left"
	[ -z "$left" ] || fail "left in $TEST_ROOT: $left"
}

setup() {
	setup_bundle
	ID=sub-$BATS_TEST_NUMBER
	WS=$BUNDLE/ws
	mkdir -p "$WS" "$ROOTFS/workspace" "$ROOTFS/run"
	echo hello >"$WS/a.txt"
	update_config ".process.args = [\"sleep\", \"600\"] | .process.cwd = \"/workspace\" |
		.mounts += [{\"destination\": \"/workspace\", \"type\": \"bind\", \"source\": \"$WS\", \"options\": [\"rbind\", \"rw\"]}] |
		.linux.namespaces |= map(if .type == \"network\" then .path = \"/var/run/netns/$SNT_CTR\" else . end)"
}

teardown() {
	teardown_bundle
}

# parent [PROFILE]: run -d $ID (the runtime in the host-role netns)
parent() {
	local profile=${1:-$SNT_PROFILE}
	status=0
	timeout --kill-after=5 "$RT_TIMEOUT" nsenter --net="/run/netns/$SNT_HOST" \
		"$AGENTRT" --root "$TEST_ROOT" --profile "$profile" run -d --bundle "$BUNDLE" "$ID" \
		</dev/null >"$BUNDLE/$ID.out" 2>"$BUNDLE/$ID.err" || status=$?
	[ "$status" -eq 0 ] || fail "run -d: $(cat "$BUNDLE/$ID.err")"
}

# sub ARGS...: the client inside the parent
sub() { rt exec "$ID" "$SUB" sub "$@"; }

host_pid() { jq -r .pid "$TEST_ROOT/$1/state.json"; }

# the host's cgroup directory of a container (the pids controller's, or the unified one)
cg_dir() {
	local p
	p=$(jq -r '[.. | .cgroupPath? // empty][0]' "$TEST_ROOT/$1/state.json")
	if [ -d /sys/fs/cgroup/pids ]; then echo "/sys/fs/cgroup/pids$p"; else echo "/sys/fs/cgroup$p"; fi
}

@test "sub run: the child's stdio and exit status; its own pid, mount, ipc, uts namespaces; the parent's root read-only" {
	parent
	run sub run -- sh -c 'echo out; echo err >&2; hostname; exit 7'
	[ "$status" -eq 7 ]
	[[ "$output" == *out* ]] && [[ "$output" == *err* ]] && [[ "$output" == *sub1* ]]
	# a detached child, seen from the host: namespaces other than the parent's
	run sub run --name d1 --detach -- sleep 300
	[ "$status" -eq 0 ] && [ "$output" = d1 ]
	ppid=$(host_pid "$ID")
	cpid=$(host_pid "$ID.d1")
	for ns in pid mnt ipc uts net; do
		[ "$(readlink /proc/$ppid/ns/$ns)" != "$(readlink /proc/$cpid/ns/$ns)" ] || fail "$ns shared"
	done
	# the root is the parent's rootfs, read-only
	run rt exec "$ID.d1" touch /x
	[ "$status" -ne 0 ] && [[ "$output" == *"Read-only file system"* ]]
	[ "$(awk '$5 == "/" {print $6}' /proc/$cpid/mountinfo | cut -d, -f1)" = ro ]
	[ "$(stat -L -c %i /proc/$cpid/root/bin)" = "$(stat -c %i "$ROOTFS/bin")" ]
	# the child's processes are not in the parent's pid namespace
	run rt exec "$ID" ps
	[[ "$output" != *"sleep 300"* ]]
	run sub list
	[[ "$output" == *"d1"*running* ]] && [[ "$output" == *sub1*exited* ]]
	# the operator sees the child under its parent
	run rt list
	[[ "$output" == *"$ID"* ]] && [[ "$output" == *"└─ $ID.d1"* ]]
	run sub kill d1
	[ "$status" -eq 0 ]
}

@test "run-bind-over-run: a host directory bound at /run under the agent profile (docker -v DIR:/run) runs; nothing is made in it, the sub-agent API is off with one warning" {
	# the agent profile's read-only bind left no place for /run/agentrt: create failed with
	# "create `/run/agentrt` in rootfs: Read-only file system"
	mkdir -p "$BUNDLE/hostrun"
	echo from-host >"$BUNDLE/hostrun/marker"
	update_config ".mounts += [{\"destination\": \"/run\", \"type\": \"bind\", \"source\": \"$BUNDLE/hostrun\", \"options\": [\"rbind\", \"rw\"]}]"
	parent
	run rt exec "$ID" cat /run/marker
	[ "$status" -eq 0 ] && [ "$output" = from-host ] || fail "/run/marker: $output"
	[ "$(ls -A "$BUNDLE/hostrun")" = marker ] || fail "made in the host's directory: $(ls -A "$BUNDLE/hostrun")"
	grep -q "sub-agents are off" "$BUNDLE/$ID.err" || fail "no warning: $(cat "$BUNDLE/$ID.err")"
	run rt exec "$ID" test -e /run/agentrt/agent.sock
	[ "$status" -ne 0 ]
	rt kill "$ID" KILL
	# with an agentrt/ directory in it the API is there, on a tmpfs of its own: still nothing
	# reaches the host's directory
	rt delete -f "$ID"
	mkdir "$BUNDLE/hostrun/agentrt"
	parent
	run rt exec "$ID" "$SUB" sub list
	[ "$status" -eq 0 ] || fail "sub list: $output"
	[ -z "$(ls -A "$BUNDLE/hostrun/agentrt")" ] || fail "made in the host's directory: $(ls -A "$BUNDLE/hostrun/agentrt")"
}

@test "sub run: what the parent hides under a tmpfs stays hidden from its child (the root is the same image)" {
	mkdir -p "$ROOTFS/hidden"
	echo image-secret >"$ROOTFS/hidden/key"
	update_config '.mounts += [{"destination": "/hidden", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid"]}]'
	parent
	run rt exec "$ID" ls -A /hidden
	[ -z "$output" ]
	run sub run -- sh -c 'ls -A /hidden; cat /hidden/key 2>&1'
	[[ "$output" != *image-secret* ]] || fail "the child sees what the parent hides: $output"
	# the control: the image has it
	[ "$(cat "$ROOTFS/hidden/key")" = image-secret ]
}

@test "sub run: a signal to the client reaches the child in the foreground" {
	parent
	(rc=0; rt exec "$ID" "$SUB" sub run --name sig -- sh -c 'trap "echo got-term; exit 42" TERM; sleep 100 & wait' \
		>"$BUNDLE/sig.out" 2>&1 || rc=$?; echo "rc=$rc" >>"$BUNDLE/sig.out") &
	for _ in $(seq 50); do
		cp=$(pgrep -f "^$SUB sub run --name sig" | head -n1)
		[ -n "$cp" ] && [ -d "$TEST_ROOT/$ID.sig" ] && break
		sleep 0.1
	done
	sleep 0.3
	kill -TERM "$cp"
	for _ in $(seq 100); do grep -q '^rc=' "$BUNDLE/sig.out" && break; sleep 0.1; done
	grep -q got-term "$BUNDLE/sig.out" && grep -q '^rc=42$' "$BUNDLE/sig.out" || fail "$(cat "$BUNDLE/sig.out")"
}

@test "sub run: the child's writes reach the parent's view only by sub commit; a protected path is held back; discard drops" {
	parent
	run sub run --name w -- sh -c 'echo changed >>a.txt; echo n >new.txt; mkdir -p .git/hooks; echo evil >.git/hooks/pre-commit'
	[ "$status" -eq 0 ]
	# nothing in the parent's view yet (nor on the host)
	run rt exec "$ID" sh -c 'cat /workspace/a.txt; ls -a /workspace'
	[ "$(head -n1 <<<"$output")" = hello ] && [[ "$output" != *new.txt* ]] && [[ "$output" != *.git* ]]
	run sub diff w
	[ "$status" -eq 0 ] && [[ "$output" == *"new.txt"* ]]
	run sub commit w
	[ "$status" -eq 0 ]
	[[ "$output" == *"left out .git/hooks/pre-commit"* ]] || [[ "$output" == *"left out .git"* ]]
	run rt exec "$ID" sh -c 'cat /workspace/a.txt /workspace/new.txt; ls -a /workspace'
	[[ "$output" == *changed* ]] && [[ "$output" == *n* ]] && [[ "$output" != *".git"* ]]
	# the host's directory still waits for the operator's review of the parent
	[ "$(cat "$WS/a.txt")" = hello ] && [ ! -e "$WS/new.txt" ]
	# another child's work, discarded: gone, and the name is free again
	run sub run --name w2 -- sh -c 'echo junk >junk.txt'
	run sub discard w2
	[ "$status" -eq 0 ]
	run sub diff w2
	[ "$status" -ne 0 ]
	run rt exec "$ID" ls /workspace
	[[ "$output" != *junk* ]]
	run sub run --name w2 -- true
	[ "$status" -eq 0 ]
}

# subreq-repeat-leak (fuzz_subreq): a request that names --workspace again and again, as an agent
# may send it; each one was allocated and the one before lost in the handler (test_subreq
# measures that; the handler ends with the request, so from outside what shows is the answer):
# the last one is the child's, and each is checked (a refused one among them refuses the
# request).
@test "subreq-repeat-leak: sub run with --workspace 100 times: the last is the child's, each is checked" {
	parent
	local args=() i
	rt exec "$ID" mkdir -p /workspace/d/last /workspace/d/other
	for i in $(seq 99); do args+=(--workspace "/workspace/d/other/../$(printf 'x/../%.0s' $(seq 40))other"); done
	run sub run --name rep "${args[@]}" --workspace /workspace/d/last -- sh -c 'pwd; echo r >r.txt'
	[ "$status" -eq 0 ] && [ "$output" = /workspace/d/last ] || fail "the child's cwd: $output"
	run sub diff rep
	[ "$status" -eq 0 ] && [[ "$output" == *"r.txt"* ]] || fail "sub diff rep: $output"
	run sub run --name rep2 --workspace /workspace/d/last --workspace /etc "${args[@]}" -- true
	[ "$status" -ne 0 ] && [[ "$output" == *"--workspace \`/etc\`: not in the parent's workspace"* ]] ||
		fail "a refused --workspace among them: $output"
}

# ws-path-escape: a child's --workspace is a directory the agent names inside its workspace; its
# path is the child's workspace's destination and is in its host directory, which the operator's
# `workspace list`, `workspace ID list`, `workspace ID diff` and `explain` print on the host's terminal.
@test "ws-path-escape: a child's workspace path with escape sequences is printed escaped by the host's workspace list, ID list, diff and explain" {
	parent
	local d
	d=$(printf 'd\033]0;PWNED\007\033[2J-ok\342\200\256')
	rt exec "$ID" mkdir "/workspace/$d"
	run sub run --name esc --workspace "/workspace/$d" -- sh -c 'echo n >new.txt'
	[ "$status" -eq 0 ] || fail "sub run: $output"
	local out
	for v in list "$ID.esc list" "$ID.esc diff"; do
		out=$("$AGENTRT" --root "$TEST_ROOT" workspace $v 2>&1) || fail "workspace $v: $out"
		[[ "$out" == *PWNED* ]] || fail "workspace $v does not name it: $(cat -v <<<"$out")"
		[[ "$out" != *$'\033'* && "$out" != *$'\007'* && "$out" != *$'\342\200\256'* ]] ||
			fail "workspace $v, raw: $(cat -v <<<"$out")"
	done
	# a child that runs: explain shows its profile's changes (its workspace and cwd)
	run sub run --detach --name esc2 --workspace "/workspace/$d" -- sleep 60
	[ "$status" -eq 0 ] || fail "sub run --detach: $output"
	out=$("$AGENTRT" --root "$TEST_ROOT" explain "$ID.esc2" 2>&1) || fail "explain: $out"
	[[ "$out" == *PWNED* ]] || fail "explain does not name it: $(cat -v <<<"$out")"
	[[ "$out" != *$'\033'* && "$out" != *$'\007'* && "$out" != *$'\342\200\256'* ]] ||
		fail "explain, raw: $(cat -v <<<"$out")"
}

# ro-workspace-child: run.agentrt.readonly-workspace (or the engine's `:ro`) makes the parent's
# workspace a read-only bind of the host's directory; a child of that parent must not be the way
# to write it (its commit into the parent's view, or onto the host).
@test "ro-workspace-child: a parent whose workspace is read-only (run.agentrt.readonly-workspace) is refused a child in one line, and cannot write its workspace through one" {
	update_config '.annotations["run.agentrt.readonly-workspace"] = "true"'
	parent
	run rt exec "$ID" sh -c 'echo x >/workspace/direct.txt'
	[ "$status" -ne 0 ] || fail "control: the parent wrote its read-only workspace"
	run sub run --name rw -- sh -c 'echo changed >>a.txt; echo n >new.txt'
	[ "$status" -ne 0 ] && [[ "$output" == *"the parent's workspace /workspace is read-only"* ]] ||
		fail "sub run: $status $output"
	[ "$(grep -c '^agentrt: ' <<<"$output")" -eq 1 ] || fail "not one line: $output"
	# refused before its name was taken (a failed create kept it)
	run sub run --name rw -- true
	[[ "$output" == *"is read-only"* && "$output" != *"exists"* ]] || fail "again: $output"
	run sub commit rw
	[ "$status" -ne 0 ] || fail "sub commit of no child: $output"
	run rt exec "$ID" sh -c 'cat /workspace/a.txt; ls /workspace'
	[ "$(head -n1 <<<"$output")" = hello ] && [[ "$output" != *new.txt* ]] || fail "the parent's view: $output"
	[ "$(cat "$WS/a.txt")" = hello ] && [ ! -e "$WS/new.txt" ] || fail "the host's directory: $(ls "$WS")"
	[ ! -e "$WS/direct.txt" ]
}

@test "sub-userns-write: a parent in a user namespace of its own (root mapped to 100000): its child is in it too (it writes its workspace, it reads no more than the parent), and sub commit brings the change" {
	# the child ran in the monitor's user namespace, as the host's uid 0 (no capabilities):
	# the workspace (the parent's, host 100000) was not its to write, and a file only the
	# host's root may read in the parent's image was its to read
	add_userns
	# a network namespace of its own (one joined by path is the host user namespace's)
	update_config '.linux.namespaces |= map(if .type == "network" then del(.path) else . end)'
	chown -R 100000:100000 "$WS" "$ROOTFS"
	# a file of the host's root in the image, closed to others: not the parent's to read
	echo host-root-only >"$ROOTFS/etc/host-only"
	chown 0:0 "$ROOTFS/etc/host-only"
	chmod 0600 "$ROOTFS/etc/host-only"
	parent
	run rt exec "$ID" cat /etc/host-only
	[[ "$output" != *host-root-only* ]] || fail "the control: the parent read it"
	run sub run --name u -- sh -c 'echo from-child >child.txt && echo wrote; cat /etc/host-only; cat /proc/self/uid_map'
	[ "$status" -eq 0 ] || fail "sub run: $output"
	[[ "$output" == *wrote* ]] || fail "sub run: $output"
	# no wider than its parent: the child is in the parent's user namespace
	[[ "$output" != *host-root-only* ]] || fail "the child read what the parent may not: $output"
	[[ "$output" == *100000* ]] || fail "the child's uid_map: $output"
	run sub commit u
	[ "$status" -eq 0 ] || fail "sub commit: $output"
	run rt exec "$ID" cat /workspace/child.txt
	[ "$output" = from-child ] || fail "parent's view: $output"
	[ ! -e "$WS/child.txt" ] || fail "reached the host before the operator's review"
}

@test "sub run: a child that crashed keeps its changes and trail for the parent" {
	parent
	run sub run --name c --detach -- sh -c 'echo partial >part.txt; sleep 300'
	[ "$status" -eq 0 ]
	for _ in $(seq 50); do [ -n "$(sub diff c 2>/dev/null | grep part.txt)" ] && break; sleep 0.1; done
	run sub kill c
	[ "$status" -eq 0 ]
	for _ in $(seq 50); do [[ "$(sub list)" == *"c "*stopped* ]] && break; sleep 0.1; done
	run sub list
	[[ "$output" == *stopped* ]]
	# the parent's trail has the detached child's end too
	for _ in $(seq 50); do
		rt audit "$ID" --kind subagent_end --format json | grep -q '"child":"'"$ID.c"'"' && break
		sleep 0.1
	done
	rt audit "$ID" --kind subagent_end --format json | grep '"child":"'"$ID.c"'"' | grep -q '"detach":true'
	run sub diff c
	[[ "$output" == *part.txt* ]]
	# the child's monitor writes its exit record once it has the status: without process
	# events (the proc connector answers only the host's first network namespace, and this
	# suite runs the parent in one of its own) that is the init's pidfd, a little later
	for _ in $(seq 50); do [[ "$(sub audit c 2>/dev/null)" == *'"kind":"exit"'* ]] && break; sleep 0.1; done
	run sub audit c
	[ "$status" -eq 0 ] && [[ "$output" == *exit* ]] || fail "sub audit c: $status $output"
}

@test "sub run: a request that widens anything is refused, naming the field" {
	update_config '.linux.resources.memory.limit = 268435456 | .linux.resources.pids.limit = 200 |
		.linux.resources.cpu = {"quota": 50000, "period": 100000}'
	parent
	check() { # WANT ARGS...
		local want=$1
		shift
		run sub run "$@" -- true
		[ "$status" -eq 125 ] || fail "$* was not refused: $output"
		[[ "$output" == *"$want"* ]] || fail "$*: expected '$want' in: $output"
	}
	check "--allow \`example.com\`: widens the parent's egress allowlist" --allow example.com
	check "widens the parent's egress allowlist" --allow '*.test'
	check "widens the parent's egress allowlist" --allow 203.0.113.0/24
	check "above the parent's memory limit" --memory 512m
	check "above the parent's pids limit" --pids 201
	check "above the parent's cpu limit" --cpus 1
	check "the parent has no secret \`TOKEN\`" --secret TOKEN
	check "not in the parent's workspace" --workspace /etc
	check "not in the parent's workspace" --workspace ../..
	check "widens the parent's capabilities" --cap-add SYS_ADMIN
	# the control: the same fields, narrower, are accepted
	run sub run --allow allowed.test --memory 128m --pids 100 --cpus 0.25 -- true
	[ "$status" -eq 0 ] || fail "narrower refused: $output"
	# nothing was started for the refusals: one child, in the parent's trail
	[ "$(rt audit "$ID" --format json | jq -s '[.[] | select(.kind == "subagent_start")] | length')" = 1 ]
}

@test "sub run --secret: only a secret the parent has, as a placeholder of the child's own" {
	parent "$SNT_DIR/sec.json"
	pph=$(rt exec "$ID" sh -c 'echo "$API_TOKEN"')
	[[ "$pph" =~ ^agentrt-secret- ]] || fail "parent: $pph"
	run sub run --secret API_TOKEN -- sh -c 'echo "$API_TOKEN"'
	[ "$status" -eq 0 ] && [[ "$output" =~ ^agentrt-secret-[0-9a-f]{32}$ ]] || fail "child: $output"
	[ "$output" != "$pph" ]
	# not asked for: not given
	run sub run -- sh -c 'echo "[$API_TOKEN]"'
	[ "$output" = "[]" ]
	run sub run --secret GH_TOKEN -- true
	[ "$status" -eq 125 ] && [[ "$output" == *"the parent has no secret \`GH_TOKEN\`"* ]]
	# the value is in no child's state, bundle or environment
	sub run --name s --detach --secret API_TOKEN -- sleep 60
	! grep -r sub-secret-value "$TEST_ROOT/$ID/sub" "$TEST_ROOT/$ID.s" 2>/dev/null
	! tr '\0' '\n' <"/proc/$(host_pid "$ID.s")/environ" | grep -q sub-secret-value
}

@test "sub run: the child's capabilities are none and its seccomp filter is the parent's profile's" {
	parent
	run sub run -- sh -c 'grep -E "^Cap(Eff|Bnd)|^Seccomp:|^NoNewPrivs" /proc/self/status'
	[ "$status" -eq 0 ]
	[[ "$output" == *"CapEff:	0000000000000000"* ]] && [[ "$output" == *"CapBnd:	0000000000000000"* ]]
	[[ "$output" == *"Seccomp:	2"* ]] && [[ "$output" == *"NoNewPrivs:	1"* ]]
}

@test "sub run --allow: the child resolves and reaches only its narrower allowlist (the kernel enforces both tables)" {
	parent
	# the control: the parent reaches both names
	run rt exec "$ID" sh -c 'nc -w 3 allowed.test 80 </dev/null; nc -w 3 other.test 80 </dev/null'
	[[ "$output" == *hello-allowed* ]] && [[ "$output" == *hello-other* ]] || fail "parent: $output"
	run sub run --allow allowed.test -- sh -c 'nc -w 3 allowed.test 80 </dev/null; echo rc=$?'
	[[ "$output" == *hello-allowed* ]] || fail "child cannot reach its allowed name: $output"
	# the other name: not resolved for the child, and its address not reachable by IP either
	run sub run --allow allowed.test -- sh -c 'nslookup other.test 2>&1; nc -w 3 198.51.100.20 80 </dev/null 2>&1; echo rc=$?'
	[[ "$output" != *hello-other* ]] || fail "child reached other.test: $output"
	[[ "$output" != *"198.51.100.20"*"Address"* ]]
	# and the parent still can: it was the child's table, not the network
	run rt exec "$ID" sh -c 'nc -w 3 198.51.100.20 80 </dev/null'
	[[ "$output" == *hello-other* ]]
	# without --allow a child has loopback only
	run sub run -- sh -c 'nc -w 2 203.0.113.10 80 </dev/null 2>&1; ip -o link 2>/dev/null | grep -vc " lo:"; cat /proc/net/dev | grep -c :'
	[[ "$output" != *hello-allowed* ]]
}

@test "sub run: a child's fork bomb is bounded by the parent's pids limit" {
	update_config '.linux.resources.pids.limit = 64'
	parent
	# the control: the child's cgroup is nested in the parent's, its own limit (the profile's
	# default, 1024) is above the parent's
	sub run --name idle --detach -- sleep 120
	pcg=$(cg_dir "$ID")
	ccg=$(cg_dir "$ID.idle")
	[ -d "$ccg" ] && [[ "$ccg" == "$pcg"/* ]] || fail "child cgroup $ccg not under $pcg"
	[ "$(cat "$ccg/pids.max")" = 1024 ]
	sub kill idle
	# the bomb: 300 sleeps asked for, each counted; the family stops at the parent's 64
	run sub run --name bomb -- sh -c 'i=0; while [ $i -lt 300 ]; do sleep 30 & i=$((i+1)); echo $i; done'
	[ "$status" -ne 0 ]
	last=$(grep -E '^[0-9]+$' <<<"$output" | tail -n1)
	[ -n "$last" ] && [ "$last" -lt 64 ] || fail "the child started $last processes"
	[[ "$output" == *"fork"* ]] || [[ "$output" == *"Resource temporarily unavailable"* ]]
	# what stopped it was not its own limit (1024, above) but its parent's
	[ "$(cat "$pcg/pids.max")" = 64 ]
}

@test "sub run: maxChildren and maxDepth; the socket is not there where sub-agents are off" {
	parent "$SNT_DIR/two.json"
	sub run --name a --detach -- sleep 120
	sub run --name b --detach -- sleep 120
	run sub run --name c -- true
	[ "$status" -eq 125 ] && [[ "$output" == *"subagents.maxChildren"* ]]
	# a child may start its own (maxDepth 2 -> 1), a grandchild may not (-> 0): no socket in it
	run rt exec "$ID.a" "$SUB" sub run --name g -- sh -c "ls -la /run/agentrt/ 2>&1; $SUB sub list; echo rc=\$?"
	[ "$status" -eq 0 ]
	[[ "$output" != *agent.sock* ]] && [[ "$output" =~ rc=12[57] ]]
	[ -d "$TEST_ROOT/$ID.a.g" ] || [ -d "$TEST_ROOT/$ID.a/sub/g" ]
	# the parent's socket is not reachable from a child's mount namespace either
	cpid=$(host_pid "$ID.b")
	run nsenter -t "$cpid" -m ls /run/agentrt
	[[ "$output" == *agent.sock* ]] # the child's own (depth 1)
	[ "$(stat -L -c %i /proc/$cpid/root/run/agentrt/agent.sock)" != "$(stat -c %i "$TEST_ROOT/$ID/agent.sock")" ]
	rt delete --force "$ID"
	ID=$ID-flat
	parent "$SNT_DIR/flat.json"
	run sub run -- sh -c "ls -A /run/agentrt 2>&1; $SUB sub list 2>&1; echo rc=\$?"
	[[ "$output" != *agent.sock* ]] && [[ "$output" =~ rc=12[57] ]]
	# an agent that brings its own client finds no socket to talk to
	run sub run -- sh -c "cat /proc/net/unix | grep -c agent.sock"
	[ "$output" = 0 ]
	rt delete --force "$ID"
	ID=${ID%-flat}-off
	parent "$SNT_DIR/off.json"
	run rt exec "$ID" ls -A /run/agentrt
	[ -z "$output" ] || [[ "$output" == *"No such file"* ]]
	[ ! -e "$TEST_ROOT/$ID/agent.sock" ]
}

@test "sub run: deleting the parent kills and cleans up its children (no state, cgroup, mount, process or netns left)" {
	parent
	sub run --name k1 --detach --allow allowed.test -- sleep 301
	sub run --name k2 --detach -- sleep 302
	c1=$(host_pid "$ID.k1")
	c2=$(host_pid "$ID.k2")
	netns1=$(readlink /proc/$c1/ns/net)
	pcg=$(cg_dir "$ID")
	[ -d "$pcg/$ID.k1" ] || ls "$pcg" | grep -q k1
	rt delete --force "$ID"
	[ ! -e "$TEST_ROOT/$ID.k1" ] && [ ! -e "$TEST_ROOT/$ID.k2" ] && [ ! -e "$TEST_ROOT/$ID" ]
	! kill -0 "$c1" 2>/dev/null && ! kill -0 "$c2" 2>/dev/null
	for ctrl in /sys/fs/cgroup/*/; do
		[ ! -d "$ctrl${pcg#/sys/fs/cgroup/pids}" ] || fail "cgroup left: $ctrl"
	done
	! grep -q "$ID" /proc/self/mountinfo
	! pgrep -f "sleep 30[12]" >/dev/null
	# no slirp4netns left for the child's namespace, no process in it
	for p in $(pgrep slirp4netns); do
		[ "$(readlink /proc/$p/ns/net)" != "$netns1" ] || fail "a process left in the child's netns"
		grep -q "$c1" /proc/$p/cmdline && fail "slirp4netns of the child left"
	done
	# no nftables table left in the parent's netns (the parent's own went with it)
	! ip netns exec "$SNT_CTR" nft list tables 2>/dev/null | grep -q agentrt
}

@test "sub run: the parent's trail records start, end, commit and discard; the child's trail is its own and verifies; audit --tree" {
	parent
	sub run --name t -- sh -c 'echo x >t.txt; exit 3' || true
	sub commit t
	sub run --name u -- true
	sub discard u
	run rt audit "$ID" --format json
	[ "$status" -eq 0 ]
	j=$output
	[ "$(jq -rs '[.[] | select(.kind == "subagent_start")][0].argv | join(" ")' <<<"$j")" = "sh -c echo x >t.txt; exit 3" ]
	[ "$(jq -rs '[.[] | select(.kind == "subagent_end")][0].code' <<<"$j")" = 3 ]
	[ "$(jq -rs '[.[] | select(.kind == "subagent_commit")] | length' <<<"$j")" = 1 ]
	[ "$(jq -rs '[.[] | select(.kind == "subagent_discard")] | length' <<<"$j")" = 1 ]
	run rt audit verify "$ID.t"
	[ "$status" -eq 0 ]
	run rt audit "$ID.t" --format json
	[[ "$output" == *'"kind":"exit"'* ]] || [[ "$output" == *'"kind": "exit"'* ]]
	run rt audit "$ID" --tree
	[ "$status" -eq 0 ]
	[[ "$output" == *"== $ID"* ]] && [[ "$output" == *"subagent_start"* ]]
	# the children's own trails, indented below their parent's
	grep -q "^  == $ID.t\$" <<<"$output" || fail "no child trail in the tree: $output"
	grep -q "^  .* #[0-9]* exit " <<<"$output" || fail "no child exit in the tree: $output"
}

@test "sub: a malformed request, unknown verbs and names are refused with one line" {
	parent
	run sub frobnicate
	[ "$status" -eq 125 ] && [[ "$output" == *"unknown command"* ]]
	run sub diff ../../etc
	[ "$status" -eq 125 ] && [[ "$output" == *"expected a child's name"* ]]
	run sub run --name '../x' -- true
	[ "$status" -eq 125 ]
	run sub kill nosuch
	[ "$status" -eq 125 ] && [[ "$output" == *"no child \`nosuch\`"* ]]
	# the review takes only paths and --include-protected: never another directory
	sub run --name r -- sh -c 'echo x >r.txt'
	for opt in --lower --dest --force -p; do
		run sub commit r "$opt" /etc
		[ "$status" -eq 125 ] && [[ "$output" == *"not an option or path of sub commit"* ]] || fail "$opt: $output"
	done
	[ ! -e /etc/r.txt ]
	run sub commit r r.txt
	[ "$status" -eq 0 ]
	# raw frames from inside (usock: nc -U), in one exec: garbage, a frame too long, a partial
	# frame then EOF, a request with 200 descriptors (each answered `malformed` or closed), and
	# the control, the same request with its 3 descriptors, served
	run rt exec "$ID" sh -c 'u() { usock "$@" /run/agentrt/agent.sock | tr "\000" .; echo; echo =end; }
		for f in "\377\377\377\377garbage" "\001\000\002\000Qx" "\006\000\000\000Qli"; do
			printf "$f" | u
		done
		printf "\006\000\000\000Qlist\000" | u -f 200
		printf "\006\000\000\000Qlist\000" | u -f 3'
	[ "$(grep -c '^=end$' <<<"$output")" -eq 5 ] || fail "$output"
	[ "$(grep -c 'malformed request' <<<"$output")" -ge 3 ] || fail "$output"
	awk '/=end/ {n++} n == 3 && /malformed request/ {ok = 1} END {exit !ok}' <<<"$output" ||
		fail "200 descriptors: $output"
	awk '/=end/ {n++} n == 4 && /NAME.*STATUS/ {ok = 1} END {exit !ok}' <<<"$output" ||
		fail "3 descriptors: $output"
	run sub list
	[ "$status" -eq 0 ]
}

# terminal-inject-sub-name: a refusal repeats what the agent asked for (a name, a workspace, a
# child), and its line reaches whoever reads the client's stderr (the operator's terminal in a
# foreground run, a log).  A name with escape sequences, CR or a newline repainted that screen or
# forged a second line after the refusal's one; now the refusal is one line, escaped.
@test "sub: terminal-inject-sub-name: a refusal naming the agent's --name, --workspace, option, review path or verb writes its escape sequences, CR and newlines escaped, in one line" {
	parent
	local bad out
	bad=$(printf 'x\033]0;PWNED\007\033[2J\rok\nagentrt: sub run: started')
	# an option's value, an unknown option, a path given to a child's review, an unknown verb
	sub run --name r -- true || fail "sub run r"
	for args in "run --name B -- true" "run --workspace B -- true" "run -B x -- true" "commit r -B" "B"; do
		set -- $args
		for i in $(seq $#); do
			[ "${!i}" = B ] && set -- "${@:1:i-1}" "$bad" "${@:i+1}"
			[ "${!i}" = -B ] && set -- "${@:1:i-1}" "-$bad" "${@:i+1}"
		done
		rt exec "$ID" "$SUB" sub "$@" >"$BUNDLE/refusal.out" 2>&1 && fail "$args: not refused"
		out=$(cat -v "$BUNDLE/refusal.out")
		[ "$(wc -l <"$BUNDLE/refusal.out")" -eq 1 ] || fail "$args: not one line: $out"
		! LC_ALL=C grep -qaP '[\x00-\x09\x0b-\x1f\x7f]' "$BUNDLE/refusal.out" || fail "$args: raw controls: $out"
		grep -qF 'x\u001b]0;PWNED\u0007\u001b[2J\u000dok\u000aagentrt: sub run: started' "$BUNDLE/refusal.out" ||
			fail "$args: the name is not shown escaped: $out"
	done
	! ls "$TEST_ROOT" | grep -q PWNED || fail "a child was made: $(ls "$TEST_ROOT")"
}

# ---- attacks from inside the parent (each fails on the binary before its fix)

@test "sub run --workspace through a symlink the parent planted (absolute, or .. out of its root) never reaches the host's files, nor does a commit after the parent swaps a directory for one; a directory only the parent made, or only the host dir has, is a workspace" {
	out=$BUNDLE/outside
	mkdir -p "$out/lib" "$out/d"
	echo host-secret >"$out/lib/secret"
	# the host dir has the names; the parent replaces their top directory with a symlink
	mkdir -p "$WS/pkg/lib" "$WS/up/lib" "$WS/sw/d" "$WS/hostonly/d" "$WS/op/old"
	echo from-host >"$WS/hostonly/d/h"
	parent
	rt exec "$ID" sh -c "rm -rf /workspace/pkg /workspace/up && ln -s $out /workspace/pkg &&
		ln -s ../../../../../../../../../../../../../../..$out /workspace/up"
	for w in pkg/lib up/lib; do
		run sub run --workspace "/workspace/$w" -- sh -c 'cat secret; echo planted >planted'
		[ "$status" -eq 125 ] && [[ "$output" == *"a symlink on the way"* ]] || fail "$w: $status $output"
		[[ "$output" != *host-secret* ]] || fail "$w: the child read the host's file"
	done
	# a child on a real directory; the parent then makes its path a symlink to the host's
	run sub run --name sw --workspace /workspace/sw/d -- sh -c 'echo planted >planted'
	[ "$status" -eq 0 ] || fail "sw: $output"
	rt exec "$ID" sh -c "rm -rf /workspace/sw && ln -s $out /workspace/sw"
	run sub commit sw
	[ "$status" -ne 0 ]
	[ ! -e "$out/d/planted" ] && [ ! -e "$out/lib/planted" ] || fail "the commit wrote into the host's directory"
	[ -z "$(ls -A "$out/d")" ] && [ "$(ls -A "$out/lib")" = secret ]
	# the controls: a directory only the parent made, one only the host dir has (a layer
	# without it is left out), one the parent emptied (opaque: the layers below are hidden)
	rt exec "$ID" sh -c 'mkdir -p /workspace/mine && echo p >/workspace/mine/f && rm -rf /workspace/op && mkdir -p /workspace/op/new'
	run sub run --name m --workspace /workspace/mine -- sh -c 'cat f; echo c >c.txt'
	[ "$status" -eq 0 ] && [ "$output" = p ] || fail "mine: $status $output"
	run sub run --name h --workspace /workspace/hostonly/d -- sh -c 'cat h; echo c >c.txt'
	[ "$status" -eq 0 ] && [ "$output" = from-host ] || fail "hostonly: $status $output"
	run sub run --workspace /workspace/op -- ls -A
	[ "$status" -eq 0 ] && [ "$output" = new ] || fail "op: $status $output"
	sub commit m && sub commit h
	[ "$(rt exec "$ID" cat /workspace/mine/c.txt /workspace/hostonly/d/c.txt)" = "$(printf 'c\nc')" ]
	[ ! -e "$WS/hostonly/d/c.txt" ]
}

@test "sub run --workspace inside .git, a protected path or below a bare repository is refused (the child's hook would be reviewed as a plain file and committed)" {
	mkdir -p "$WS/proj/.git/hooks" "$WS/.vscode/x" "$WS/bare/hooks"
	echo 'ref: refs/heads/main' >"$WS/proj/.git/HEAD"
	echo 'ref: refs/heads/main' >"$WS/bare/HEAD"
	parent
	# the parent's own writes there (its upper holds the directories too)
	rt exec "$ID" sh -c 'for d in proj/.git/hooks .vscode/x bare/hooks; do touch /workspace/$d/.k && rm /workspace/$d/.k; done'
	for w in proj/.git/hooks proj/.git .vscode/x bare/hooks; do
		run sub run --workspace "/workspace/$w" -- sh -c 'printf "#!/bin/sh\necho pwned\n" >pre-commit; chmod +x pre-commit'
		[ "$status" -eq 125 ] || fail "$w: $status $output"
		[[ "$output" == *".git"* ]] || [[ "$output" == *"protected"* ]] || [[ "$output" == *"bare repository"* ]] || fail "$w: $output"
	done
	[ -z "$(rt exec "$ID" find /workspace -name pre-commit)" ]
	# the control: the work tree is a child's workspace, and a hook it writes is held back
	run sub run --name ok --workspace /workspace/proj -- sh -c 'echo x >x.txt; printf "#!/bin/sh\n" >.git/hooks/pre-commit'
	[ "$status" -eq 0 ]
	run sub commit ok
	[ "$status" -eq 0 ] && [[ "$output" == *"left out .git/hooks/pre-commit"* ]] || fail "$output"
	[ "$(rt exec "$ID" sh -c 'cat /workspace/proj/x.txt; ls /workspace/proj/.git/hooks')" = x ]
}

# A grandchild's overlay names its parent's and grandparent's upper layers in the data
# directory; under an engine's 64-character ids that lowerdir is longer than the 255 bytes
# fsconfig() takes (mounts.bats "overlay-long-options"), and its create failed.
@test "sub-grandchild-long-ids: a grandchild of a parent with a 64-character id (as Docker's) gets its workspace" {
	ID=$(printf '%s' "$BATS_TEST_NUMBER-$$" | sha256sum | cut -c1-64)
	parent "$SNT_DIR/two.json"
	rt exec "$ID" sh -c 'echo parent >/workspace/p.txt'
	sub run --name a --detach -- sh -c 'echo child >/workspace/c.txt; sleep 120'
	for _ in $(seq 50); do rt exec "$ID.a" test -e /workspace/c.txt 2>/dev/null && break; sleep 0.1; done
	# the grandchild sees each layer: the host dir's, its grandparent's and its parent's writes
	run rt exec "$ID.a" "$SUB" sub run --name g -- cat /workspace/a.txt /workspace/p.txt /workspace/c.txt
	[ "$status" -eq 0 ] && [ "$output" = "$(printf 'hello\nparent\nchild')" ] || fail "grandchild: $status: $output"
}

@test "sub run: requests made at once do not start more children than maxChildren" {
	parent "$SNT_DIR/two.json"
	# six clients started together from one shell inside the parent
	run rt exec "$ID" sh -c "for i in 1 2 3 4 5 6; do
		($SUB sub run --name r\$i --detach -- sleep 120 >/tmp/r\$i 2>&1; echo rc=\$? >>/tmp/r\$i) &
		done; wait; cat /tmp/r?"
	started=$(grep -c '^rc=0$' <<<"$output")
	[ "$started" -eq 2 ] || fail "$started children started: $output"
	[ "$(grep -c 'subagents.maxChildren' <<<"$output")" -eq 4 ]
	# seen from the host: two child containers
	[ "$(find "$TEST_ROOT" -maxdepth 1 -name "$ID.r*" | wc -l)" -eq 2 ]
}

@test "sub run: --cpus whose quota wraps around 64 bits is refused; a child asking for no CPU limit gets at most its parent's (cgroup v1 refused the profile's 2 CPUs below a parent's half)" {
	update_config '.linux.resources.cpu = {"quota": 50000, "period": 100000} |
		.linux.resources.memory.limit = 268435456 | .linux.resources.pids.limit = 200'
	parent
	# 184467440737096 millicpus x 100000 is 48384 modulo 2^64: under the parent's 50000 x 1000
	run sub run --cpus 184467440737.096 -- true
	[ "$status" -eq 125 ] && [[ "$output" == *"above the parent's cpu limit"* ]] || fail "$status $output"
	run sub run --cpus 1e3 -- true
	[ "$status" -eq 125 ]
	run sub run --name dflt --detach -- sleep 60
	[ "$status" -eq 0 ] || fail "a child with no limits: $output"
	[ "$(jq -r '.linux.resources.cpu.quota' "$TEST_ROOT/$ID.dflt/config.json")" -le 50000 ]
	# seen from the host: the child's quota in its cgroup, below its parent's
	p=$(jq -r '[.. | .cgroupPath? // empty][0]' "$TEST_ROOT/$ID.dflt/state.json")
	if [ -f "/sys/fs/cgroup/cpu$p/cpu.cfs_quota_us" ]; then
		[ "$(cat "/sys/fs/cgroup/cpu$p/cpu.cfs_quota_us")" -le 50000 ]
	else
		[ "$(cut -d' ' -f1 "/sys/fs/cgroup$p/cpu.max")" -le 50000 ]
	fi
	sub kill dflt
}

@test "sub: past 64 requests at once a connection is answered busy, not served by one more host process; a request trickled in is cut off at 10 s" {
	parent
	# the handlers: forks of the parent's monitor (its command line names the bundle), named
	# agentrt-sub; two processes, whatever their number
	handlers() {
		local pids
		pids=$(grep -lzxF -- "$BUNDLE" /proc/[0-9]*/cmdline 2>/dev/null | cut -d/ -f3)
		[ -n "$pids" ] || { echo 0; return; }
		# shellcheck disable=SC2046
		grep -lx agentrt-sub $(printf '/proc/%s/comm ' $pids) 2>/dev/null | wc -l
	}
	# a client that sends its request a few bytes at a time, each within 10 s
	(rt exec "$ID" sh -c '(printf "\006\000\000\000Q"; sleep 5.5; printf "li"; sleep 5.5; printf "st\000") |
		usock /run/agentrt/agent.sock' >"$BUNDLE/slow.out" 2>&1 || true; echo end >>"$BUNDLE/slow.out") &
	slow=$!
	for _ in $(seq 50); do [ "$(handlers)" -ge 1 ] && break; sleep 0.1; done
	# 70 clients that connect and send nothing (each held until its handler gives up, then again)
	rt exec -d "$ID" sh -c 'ln -s /usr/local/bin/usock /tmp/flood; for i in $(seq 70); do
		(while [ ! -e /tmp/stop ]; do /tmp/flood /run/agentrt/agent.sock </dev/null >/dev/null 2>&1; sleep 0.2; done) &
		done; wait' </dev/null >/dev/null 2>&1
	max=0 busy=
	for _ in $(seq 60); do
		n=$(handlers)
		[ "$n" -gt "$max" ] && max=$n
		if [ "$n" -ge 64 ]; then
			run sub list
			[ "$status" -eq 125 ] && [[ "$output" == *busy* ]] && busy=1 && break
		fi
		sleep 0.2
	done
	n=$(handlers)
	[ "$n" -gt "$max" ] && max=$n
	[ "$max" -eq 64 ] && [ -n "$busy" ] || fail "$max handlers, busy: ${busy:-no} ($output)"
	# the flood stops (the container's own processes, in its pid namespace): served again
	rt exec "$ID" sh -c 'touch /tmp/stop; kill $(pidof flood) 2>/dev/null; true'
	for _ in $(seq 50); do sub list >/dev/null 2>&1 && break; sleep 0.2; done
	run sub list
	[ "$status" -eq 0 ] && [[ "$output" == NAME* ]] || fail "after the flood: $output"
	wait "$slow"
	grep -q 'malformed request' "$BUNDLE/slow.out" || fail "the trickled request was served: $(cat "$BUNDLE/slow.out")"
}

@test "sub run --detach: the child's output kept on the host stops at 256 KiB" {
	parent
	sub run --name o --detach -- sh -c 'head -c 3000000 /dev/zero | tr "\0" x; echo; echo last-line'
	for _ in $(seq 100); do [[ "$(sub list)" == *"o "*stopped* ]] && break; sleep 0.1; done
	f=$TEST_ROOT/$ID/sub/o/output
	for _ in $(seq 50); do grep -q 'output was dropped' "$f" && break; sleep 0.1; done
	size=$(stat -c %s "$f")
	[ "$size" -ge 262144 ] && [ "$size" -le 262300 ] || fail "output: $size bytes"
	grep -q 'the rest of the output was dropped' "$f"
	! grep -q last-line "$f"
}

@test "sub discard frees the name for another workspace; a child whose create failed is discarded; its name does not reach a sibling's workspace (P.a is a prefix of P.ab)" {
	parent
	# 1 byte of memory: the child's init is killed during its create
	run sub run --name a --memory 1 -- true
	[ "$status" -ne 0 ] && [ "$status" -ne 125 ] || fail "a: $status $output"
	sub run --name ab -- sh -c 'echo ab >ab.txt'
	for verb in diff commit; do
		run sub "$verb" a
		[ "$status" -eq 125 ] && [[ "$output" == *"has no workspace"* ]] && [[ "$output" != *ab.txt* ]] || fail "$verb: $output"
	done
	[ -z "$(rt exec "$ID" ls /workspace/ab.txt 2>/dev/null)" ]
	run sub discard a
	[ "$status" -eq 0 ] || fail "discard a: $output"
	[[ "$(sub list)" != *"a "* ]]
	run sub diff ab
	[[ "$output" == *ab.txt* ]]
	# a name discarded is free, whatever workspace its next child has
	rt exec "$ID" mkdir -p /workspace/dd
	sub run --name q --workspace /workspace/dd -- true
	sub discard q
	run sub run --name q -- true
	[ "$status" -eq 0 ] || fail "q again: $output"
}

@test "pid reuse: a child's workspace commit or diff after its parent died never reaches the root of another process that took the parent's pid (it goes to the parent's record)" {
	[ -x "$HELPER_DIR/pidat" ] || skip "pidat not built (make test-helpers)"
	parent
	sub run --name r -- sh -c 'echo from-child >planted.txt'
	ppid=$(host_pid "$ID")
	rt delete --force "$ID"
	for _ in $(seq 50); do [ -d "/proc/$ppid" ] || break; sleep 0.1; done
	# another process takes the pid: its root has the same workspace path
	victim=$BUNDLE/victim
	mkdir -p "$victim/workspace"
	"$HELPER_DIR/pidat" "$ppid" "$victim" >"$BUNDLE/pidat.out" 2>"$BUNDLE/pidat.err" &
	helper=$!
	for _ in $(seq 50); do [ -s "$BUNDLE/pidat.out" ] && break; sleep 0.05; done
	if [ ! -s "$BUNDLE/pidat.out" ]; then
		wait "$helper" && rc=0 || rc=$?
		[ "$rc" -eq 3 ] && skip "pid $ppid was taken meanwhile"
		fail "pidat: $(cat "$BUNDLE/pidat.err")"
	fi
	[ "$(readlink /proc/$ppid/root)" = "$victim" ]
	run rt workspace "$ID.r" diff
	d_status=$status d_out=$output
	run rt workspace "$ID.r" commit
	c_status=$status c_out=$output
	kill "$ppid"
	wait "$helper" || true
	[ ! -e "$victim/workspace/planted.txt" ] || fail "commit wrote into another process's root: $c_out"
	# an orphan's diff and commit are against its parent's workspace record, never the pid's
	# root (orphan-kept-review): the change lands in the parent's pending changes
	[ "$d_status" -eq 0 ] && [[ "$d_out" == *"parent's init has ended"* ]] && [[ "$d_out" == *planted.txt* ]] ||
		fail "diff: $d_status $d_out"
	[ "$c_status" -eq 0 ] && [[ "$c_out" == *"into the workspace of \`$ID\`"* ]] || fail "commit: $c_status $c_out"
	run rt workspace "$ID" diff
	[[ "$output" == *planted.txt* ]] || fail "the parent's diff: $output"
	rt workspace "$ID.r" purge
	rt workspace "$ID" purge
}

@test "handler reaping: after 200 quick sub list calls the parent's monitor has no zombie children" {
	parent
	# the monitor: the process of comm agentrt-monitor whose command line names the bundle
	mon=
	for p in $(grep -lzxF -- "$BUNDLE" /proc/[0-9]*/cmdline 2>/dev/null | cut -d/ -f3); do
		[ "$(cat /proc/$p/comm 2>/dev/null)" = agentrt-monitor ] && mon=$p && break
	done
	[ -n "$mon" ] || fail "no monitor found"
	zombies() {
		local n=0 f
		for f in /proc/[0-9]*/stat; do
			# fields after comm: state ppid
			read -r _ _ st pp _ < <(sed 's/^.*) /x x /' "$f" 2>/dev/null) || continue
			[ "$pp" = "$mon" ] && [ "$st" = Z ] && n=$((n + 1))
		done
		echo "$n"
	}
	# 200 calls from inside, one after another, then 50 at once
	rt exec "$ID" sh -c 'i=0; while [ $i -lt 200 ]; do /run/agentrt/bin/agentrt sub list >/dev/null || exit 1; i=$((i+1)); done'
	rt exec "$ID" sh -c 'for i in $(seq 50); do /run/agentrt/bin/agentrt sub list >/dev/null & done; wait'
	# what has ended is reaped without waiting for another request
	for _ in $(seq 20); do [ "$(zombies)" -eq 0 ] && break; sleep 0.1; done
	n=$(zombies)
	[ "$n" -eq 0 ] || fail "$n zombie children of the monitor $mon"
}

@test "sub run --allow: IPv6: a child reaches no v6 address that its allowlist leaves out and its parent reaches" {
	parent "$SNT_DIR/v6.json"
	# the control: the parent reaches both v6 servers
	run rt exec "$ID" sh -c 'nc -w 3 2001:db8:203::10 80 </dev/null; nc -w 3 2001:db8:198::20 80 </dev/null'
	[[ "$output" == *hello6-allowed* ]] && [[ "$output" == *hello6-other* ]] || fail "parent: $output"
	# a child allowed one v6 address (and one name, to show that its network is up)
	run sub run --allow 2001:db8:203::10 --allow allowed.test -- sh -c '
		nc -w 3 allowed.test 80 </dev/null; nc -w 3 2001:db8:198::20 80 </dev/null 2>&1; echo rc=$?'
	[[ "$output" == *hello-allowed* ]] || fail "the child's network is not up: $output"
	[[ "$output" != *hello6-other* ]] || fail "the child reached a v6 address only its parent may: $output"
	# and the parent still does: it was the child's policy, not the network
	run rt exec "$ID" sh -c 'nc -w 3 2001:db8:198::20 80 </dev/null'
	[[ "$output" == *hello6-other* ]] || fail "parent after: $output"
	# a child's v6 goes nowhere at all (docs/subagents.md): not even to its own allowed address
	run sub run --allow 2001:db8:203::10 -- sh -c 'nc -w 3 2001:db8:203::10 80 </dev/null 2>&1; echo rc=$?'
	[[ "$output" != *hello6-allowed* ]] || fail "the child reached v6 (update docs/subagents.md): $output"
}

@test "running commit: sub commit of a child that still runs is refused (its writes may be half done); diff says it runs; after its end both work" {
	parent
	run sub run --name rc --detach -- sh -c 'echo part1 >half.txt; sleep 300; echo part2 >>half.txt'
	[ "$status" -eq 0 ]
	for _ in $(seq 50); do sub diff rc 2>/dev/null | grep -q half.txt && break; sleep 0.1; done
	run sub commit rc
	c_status=$status c_out=$output
	run rt exec "$ID" cat /workspace/half.txt
	[ "$status" -ne 0 ] || fail "a running child's half-written file was committed: $output ($c_status $c_out)"
	[ "$c_status" -eq 125 ] && [[ "$c_out" == *running* ]] || fail "commit: $c_status $c_out"
	run sub diff rc
	[ "$status" -eq 0 ] && [[ "$output" == *half.txt* ]] && [[ "$output" == *running* ]] || fail "diff: $status $output"
	sub kill rc
	for _ in $(seq 50); do [[ "$(sub list)" == *"rc "*stopped* ]] && break; sleep 0.1; done
	run sub commit rc
	[ "$status" -eq 0 ] || fail "commit after the end: $output"
	[ "$(rt exec "$ID" cat /workspace/half.txt)" = part1 ]
}

# sub-signal-stall: while a child runs in the foreground its client may send 'S' frames; a client
# that sends the first bytes of one and no more held the handler (a host process, outside the
# container's pids limit) in a read for as long as it kept the connection: the child's end was
# neither waited for nor recorded.  A frame begun must be whole within 10 s, as the request.
@test "sub-signal-stall: a signal frame begun and never finished does not hold the handler: the child's end is recorded while the client stays" {
	parent
	printf 'run\0--name\0st\0--\0sleep\0%s\0' 1 >"$WS/q.body"
	{
		n=$(($(stat -c %s "$WS/q.body") + 1))
		printf "\\$(printf %03o "$n")\\000\\000\\000Q"
		cat "$WS/q.body"
	} >"$WS/q.bin"
	# the request, then two bytes of an S frame's header, then nothing for 40 s
	(rt exec "$ID" sh -c '(cat /workspace/q.bin; sleep 0.5; printf "\002\000"; sleep 40) |
		usock /run/agentrt/agent.sock' >"$BUNDLE/stall.out" 2>&1 || true) &
	local client=$! start=$SECONDS ended=
	while [ $((SECONDS - start)) -lt 25 ]; do
		if rt audit "$ID" --format json 2>/dev/null |
			jq -se '[.[] | select(.kind == "subagent_end" and .name == "st")] | length == 1' >/dev/null; then
			ended=$((SECONDS - start))
			break
		fi
		sleep 0.2
	done
	echo "# the end recorded after ${ended:-more than 25} s (the client still connected: $(kill -0 "$client" 2>/dev/null && echo yes || echo no))" >&3
	kill -0 "$client" 2>/dev/null || fail "the client ended early: $(cat "$BUNDLE/stall.out")"
	[ -n "$ended" ] || fail "no subagent_end for the child 25 s after its 1 s run, its client stalled mid-frame: $(rt audit "$ID" | grep subagent)"
	run sub list
	[[ "$output" == *"st "*"exited(0)"* ]] || fail "sub list: $output"
	rt exec "$ID" sh -c 'kill $(pidof usock) 2>/dev/null; true'
	wait "$client"
}

@test "sub-signal-supervisor: an S frame of SIGKILL, SIGSTOP or a fault signal does not end the host process that runs the child (the child went on running, unsupervised, its end recorded early)" {
	parent
	# the agent's own client (usock, raw frames): `run --name k -- sleep 3`, then signal
	# frames the shipped client never sends
	printf 'run\0--name\0k\0--\0sleep\0%s\0' 3 >"$WS/q.body"
	{
		n=$(($(stat -c %s "$WS/q.body") + 1))
		printf "\\$(printf %03o "$n")\\000\\000\\000Q"
		cat "$WS/q.body"
	} >"$WS/q.bin"
	run rt exec "$ID" sh -c '(cat /workspace/q.bin; sleep 1
		for s in 9 19 11 6; do printf "\00$((${#s} + 1))\000\000\000S$s"; done) |
		usock /run/agentrt/agent.sock | tr "\000" .'
	[[ "$output" == *X0* ]] || fail "the run ended with: $output"
	run sub list
	[[ "$output" == *"k "*"exited(0)"* ]] || fail "$output"
	# nothing of it is left running, and the trail's end is its real one
	[ ! -e "$TEST_ROOT/$ID.k" ] || fail "the child's container outlived its run: $(sub list)"
	rt audit "$ID" --format json | jq -se '[.[] | select(.kind == "subagent_end" and .name == "k")] |
		length == 1 and .[0].code == 0' >/dev/null || fail "$(rt audit "$ID" | grep subagent)"
}

# sub-signal-junk: an 'S' frame's payload was read with atoi: "15x", " 15", "+15" and
# 4294967311 (2^32 + 15) were SIGTERM, sent on to the child.  Only a plain decimal number is a
# signal now; these are dropped, and the child runs to its end.
@test "sub-signal-junk: S frames with junk after the number, a space, a sign or past 2^32 signal nothing" {
	parent
	# (the child's pid 1 ignores a signal it has no handler for: this one ends 42 on SIGTERM)
	printf 'run\0--name\0j\0--\0sh\0-c\0%s\0' 'trap "exit 42" TERM; sleep 3 & wait' >"$WS/q.body"
	{
		n=$(($(stat -c %s "$WS/q.body") + 1))
		printf "\\$(printf %03o "$n")\\000\\000\\000Q"
		cat "$WS/q.body"
	} >"$WS/q.bin"
	run rt exec "$ID" sh -c '(cat /workspace/q.bin; sleep 1
		for s in 15x " 15" +15 4294967311; do
			printf "\\$(printf %03o $((${#s} + 1)))\000\000\000S%s" "$s"
		done) | usock /run/agentrt/agent.sock | tr "\000" .'
	[[ "$output" == *X0* ]] || fail "the run ended with: $output"
	run sub list
	[[ "$output" == *"j "*"exited(0)"* ]] || fail "$output"
	rt audit "$ID" --format json | jq -se '[.[] | select(.kind == "subagent_end" and .name == "j")] |
		length == 1 and .[0].code == 0' >/dev/null || fail "$(rt audit "$ID" | grep subagent)"
}

@test "sub-dns-host-netns: a child of a parent with no network and no egress policy sends no DNS query out of the host (its resolver's upstream was the host's namespace)" {
	jq '.name = "sub-nopolicy" | .egress = {"default": "off", "dns": {"upstream": ["192.0.2.53"]}}' \
		"$SNT_PROFILE" >"$SNT_DIR/nopolicy.json"
	# the parent: a network namespace of its own with loopback only (docker --network none)
	update_config '.linux.namespaces |= map(if .type == "network" then del(.path) else . end)'
	parent "$SNT_DIR/nopolicy.json"
	run rt exec "$ID" nslookup allowed.test 192.0.2.53
	[ "$status" -ne 0 ] || fail "the control: the parent reaches the resolver: $output"
	# with no policy any --allow is narrower; the names asked for carry the data
	run sub run --allow '*.test' -- sh -c 'nslookup leak-4242.allowed.test; nslookup leak-4343.test 127.0.0.1'
	! grep -q 'leak-4[23]4[23]' "$SNT_DIR/dns.log" ||
		fail "the child's queries left the host: $(grep leak- "$SNT_DIR/dns.log")"
}

@test "sub-dns-host-netns: a child of a parent with a network and no egress policy resolves through the parent's resolv.conf, in the parent's namespace" {
	jq '.name = "sub-nopolicy2" | .egress = {"default": "off"}' "$SNT_PROFILE" >"$SNT_DIR/nopolicy2.json"
	printf 'search example\nnameserver 192.0.2.53\n' >"$ROOTFS/etc/resolv.conf"
	parent "$SNT_DIR/nopolicy2.json"
	seen=$(wc -l <"$SNT_DIR/dns.log")
	run sub run --allow allowed.test -- sh -c 'nc -w 3 allowed.test 80 </dev/null; echo rc=$?'
	[[ "$output" == *hello-allowed* ]] || fail "the child cannot reach its allowed name: $output"
	# its query came from the parent's namespace (192.0.2.2), not the host's (192.0.2.6)
	new=$(tail -n +$((seen + 1)) "$SNT_DIR/dns.log")
	grep -q 'allowed.test from 192.0.2.2' <<<"$new" || fail "$new"
	! grep -q 'allowed.test from 192.0.2.6' <<<"$new" || fail "$new"
}

@test "tmpfs-prefix: what the parent hides under a tmpfs whose path begins the workspace's (/work, /workspace) or holds it stays hidden from its child" {
	mkdir -p "$ROOTFS/work" "$ROOTFS/srv/other" "$ROOTFS/srv/ws"
	echo image-secret-work >"$ROOTFS/work/key"
	echo image-secret-srv >"$ROOTFS/srv/other/key"
	mkdir -p "$BUNDLE/ws2"
	echo in-ws2 >"$BUNDLE/ws2/f.txt"
	update_config '.mounts += [{"destination": "/work", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid"]}]'
	parent
	run sub run -- sh -c 'cat /work/key 2>&1'
	[[ "$output" != *image-secret* ]] || fail "the child sees what the parent hides at /work: $output"
	rt delete -f "$ID"
	ID=$ID-b
	# a workspace below the tmpfs: the child gets the tmpfs, empty, and its workspace in it
	jq '.name = "sub-srv" | .workspace.path = "/srv/ws"' "$SNT_PROFILE" >"$SNT_DIR/srv.json"
	update_config ".mounts |= map(select(.destination != \"/work\")) |
		.mounts += [{\"destination\": \"/srv\", \"type\": \"tmpfs\", \"source\": \"tmpfs\", \"options\": [\"nosuid\"]},
			{\"destination\": \"/srv/ws\", \"type\": \"bind\", \"source\": \"$BUNDLE/ws2\", \"options\": [\"rbind\", \"rw\"]}] |
		.process.cwd = \"/srv/ws\""
	parent "$SNT_DIR/srv.json"
	run rt exec "$ID" sh -c 'cat /srv/other/key 2>&1; cat /srv/ws/f.txt'
	[[ "$output" != *image-secret* ]] && [[ "$output" == *in-ws2* ]] || fail "the control: $output"
	run sub run --name s -- sh -c 'cat /srv/other/key 2>&1; cat /srv/ws/f.txt; echo w >/srv/ws/g.txt'
	[[ "$output" != *image-secret* ]] || fail "the child sees what the parent hides at /srv: $output"
	[[ "$output" == *in-ws2* ]] || fail "the child's workspace: $output"
	run sub commit s
	[ "$status" -eq 0 ] || fail "commit: $output"
	[ "$(rt exec "$ID" cat /srv/ws/g.txt)" = w ]
}

@test "engine-seccomp: a child is held by its parent's engine seccomp filter and rlimits too (the engine's filter denies what the profile's allows)" {
	# the engine's filter (docker --security-opt seccomp=...): chmod denied; docker --ulimit nofile=64
	update_config '.process.rlimits = [{"type": "RLIMIT_NOFILE", "soft": 64, "hard": 64}]'
	update_config '.linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW", "architectures": ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"],
		"syscalls": [{"names": ["chmod", "fchmod", "fchmodat", "fchmodat2"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1}]}'
	parent
	run rt exec "$ID" sh -c 'chmod 600 /workspace/a.txt 2>&1; echo rc=$?'
	[[ "$output" == *rc=1* ]] || fail "the control: the parent's chmod: $output"
	run sub run -- sh -c 'echo x >b.txt; chmod 600 b.txt 2>&1; echo rc=$?'
	[[ "$output" == *rc=1* ]] || fail "the child escaped its parent's engine filter: $output"
	# the profile's own filter stays stacked on it: unshare is refused as in the parent
	run sub run -- sh -c 'unshare -U true 2>&1; echo rc=$?'
	[[ "$output" != *rc=0* ]] || fail "the profile's filter: $output"
	[ "$(rt exec "$ID" sh -c 'ulimit -Hn')" = 64 ] || fail "the control: the parent's nofile"
	run sub run -- sh -c 'ulimit -Hn'
	[ "$output" = 64 ] || fail "the child's hard nofile limit: $output"
}

@test "foreign-child: a container of another's whose id is PARENT.NAME is not the parent's child (sub exec, kill, diff, commit, discard never reach it)" {
	# the operator's other container, named as a child of ours would be, with a pending change
	V=$BUNDLE/victim
	make_bundle "$V"
	mkdir -p "$V/ws"
	echo victim-secret >"$V/rootfs/victim-secret"
	jq --arg ws "$V/ws" '.process.args = ["sleep", "600"] |
		.mounts += [{"destination": "/workspace", "type": "bind", "source": $ws, "options": ["rbind", "rw"]}]' \
		"$V/config.json" >"$V/c.json" && mv "$V/c.json" "$V/config.json"
	rt --profile agent run -d --bundle "$V" "$ID.victim" </dev/null >/dev/null 2>&1 || fail "the victim"
	rt exec "$ID.victim" sh -c 'echo pending >/workspace/pending.txt'
	parent
	run sub run --name victim -- true
	[ "$status" -ne 0 ] || fail "a child named over another container ran: $output"
	run sub exec victim -- cat /victim-secret
	[[ "$output" != *victim-secret* ]] || fail "sub exec reached the other container: $output"
	run sub diff victim
	[[ "$output" != *pending.txt* ]] || fail "sub diff showed the other container's changes: $output"
	run sub commit victim
	run sub discard victim
	run sub kill victim
	# the other container runs on, its change still pending, the host dir untouched
	[ "$(jq -r .status "$TEST_ROOT/$ID.victim/state.json" 2>/dev/null)" = running ] || fail "the victim was killed or deleted"
	[ ! -e "$V/ws/pending.txt" ] || fail "the victim's change was committed to its host dir"
	run rt workspace "$ID.victim" diff
	[[ "$output" == *pending.txt* ]] || fail "the victim's change was discarded: $output"
	rt delete -f "$ID.victim"
	rt workspace "$ID.victim" purge >/dev/null 2>&1 || true
}

@test "sub-peer-uid: a process of another user (exec --user 1000) gets a child with its own ids, not the parent's root, and cannot reach root's children" {
	parent
	rt exec "$ID" sh -c 'echo TOPSECRET >/workspace/secret.txt && chmod 600 /workspace/secret.txt &&
		echo orig >/workspace/rootfile && chmod 644 /workspace/rootfile'
	run sub run --name r1 --detach -- sleep 300
	[ "$status" -eq 0 ] || fail "root's child: $output"
	# control: the caller itself can do neither
	run rt exec --user 1000:1000 "$ID" sh -c 'cat /workspace/secret.txt; echo x >/workspace/rootfile'
	[[ "$output" != *TOPSECRET* && "$output" == *"Permission denied"* ]] || fail "control: $output"
	run rt exec --user 1000:1000 "$ID" "$SUB" sub run --name u1 -- sh -c \
		'echo "ids $(id -u):$(id -g)"; cat /workspace/secret.txt; echo pwned >/workspace/rootfile'
	[[ "$output" == *"ids 1000:1000"* ]] || fail "the child's ids: $output"
	[[ "$output" != *TOPSECRET* ]] || fail "the uid-1000 caller's child read root's file: $output"
	[ "$(jq -r '.process.user | "\(.uid):\(.gid)"' "$TEST_ROOT/$ID/sub/u1/config.json")" = 1000:1000 ] ||
		fail "the child's config: $(jq -c .process.user "$TEST_ROOT/$ID/sub/u1/config.json")"
	run rt exec --user 1000:1000 "$ID" "$SUB" sub commit u1
	[ "$(rt exec "$ID" cat /workspace/rootfile)" = orig ] || fail "root's file was rewritten through the child"
	# root's child is not another user's to run in, stop or commit
	for v in "exec r1 -- id -u" "kill r1" "diff r1" "commit r1" "discard r1"; do
		run rt exec --user 1000:1000 "$ID" "$SUB" sub $v
		[ "$status" -ne 0 ] && [[ "$output" == *"started by another user (uid 0)"* ]] || fail "sub $v: $status $output"
	done
	[ "$(jq -r .status "$TEST_ROOT/$ID.r1/state.json")" = running ] || fail "root's child was stopped"
	# another uid's neither; root may manage the uid-1000 child
	run rt exec --user 1001:1001 "$ID" "$SUB" sub diff u1
	[ "$status" -ne 0 ] && [[ "$output" == *"(uid 1000)"* ]] || fail "uid 1001: $output"
	run sub diff u1
	[ "$status" -eq 0 ] || fail "root's diff of u1: $output"
	# the parent's trail says who started each
	rt audit --format json "$ID" | jq -se 'map(select(.kind == "subagent_start" and .name == "u1" and .uid == 1000 and .gid == 1000)) | length == 1' >/dev/null ||
		fail "trail: $(rt audit --format json "$ID" | jq -c 'select(.kind == "subagent_start")')"
	sub kill r1 >/dev/null
}

@test "config-masks: what the parent's config masks or makes read-only (the operator's linux.maskedPaths, readonlyPaths) is so for its child" {
	echo image-secret-masked >"$ROOTFS/masked-secret"
	update_config '.linux.maskedPaths += ["/masked-secret"] | .linux.readonlyPaths += ["/dev/shm"]'
	parent
	run rt exec "$ID" sh -c 'cat /masked-secret; touch /dev/shm/x 2>&1; echo rc=$?'
	[[ "$output" != *image-secret* ]] && [[ "$output" != *rc=0* ]] || fail "the control: $output"
	run sub run -- sh -c 'cat /masked-secret; touch /dev/shm/x 2>&1; echo rc=$?'
	[[ "$output" != *image-secret* ]] || fail "the child reads what its parent's config masks: $output"
	[[ "$output" != *rc=0* ]] || fail "the child writes where its parent's config is read-only: $output"
}

@test "ws-mount-hidden: what a mount of the parent's hides inside its workspace (a tmpfs, an empty directory, /dev/null over .env) stays hidden from its child" {
	mkdir -p "$WS/secrets" "$WS/ro" "$BUNDLE/empty"
	echo ws-secret-tmpfs >"$WS/secrets/key"
	echo ws-secret-ro >"$WS/ro/key"
	echo ws-secret-env >"$WS/.env"
	update_config ".mounts += [{\"destination\": \"/workspace/secrets\", \"type\": \"tmpfs\", \"source\": \"tmpfs\", \"options\": [\"nosuid\"]},
		{\"destination\": \"/workspace/ro\", \"type\": \"bind\", \"source\": \"$BUNDLE/empty\", \"options\": [\"rbind\", \"ro\"]},
		{\"destination\": \"/workspace/.env\", \"type\": \"bind\", \"source\": \"/dev/null\", \"options\": [\"bind\"]}]"
	parent
	run rt exec "$ID" sh -c 'cat /workspace/secrets/key /workspace/ro/key /workspace/.env 2>&1'
	[[ "$output" != *ws-secret* ]] || fail "the control: the parent reads it: $output"
	run sub run --name h -- sh -c 'cat /workspace/secrets/key /workspace/ro/key /workspace/.env 2>&1; cat a.txt; echo n >new.txt'
	[[ "$output" != *ws-secret* ]] || fail "the child reads what the parent's mounts hide: $output"
	[[ "$output" == *hello* ]] || fail "the child's workspace: $output"
	run sub commit h
	[ "$status" -eq 0 ] || fail "commit: $output"
	[ "$(rt exec "$ID" cat /workspace/new.txt)" = n ]
	# a workspace at or below such a mount is refused
	run sub run --workspace /workspace/secrets -- cat key
	[ "$status" -eq 125 ] && [[ "$output" != *ws-secret* ]] && [[ "$output" == *"hides"* ]] || fail "$output"
}

# forged-opaque (workspace.bats) for a child: the parent's overlay keeps its markers in
# trusted.overlay.*, where the user.overlay.opaque the parent agent sets on a host directory is
# plain data.  The child's layers were chosen reading it as opaque: a child whose workspace is
# that directory was given the parent's upper layer alone and saw it empty, while the parent
# saw the host's files there.
@test "escape: forged-opaque: a child's workspace below a directory its parent marked user.overlay.opaque shows what the parent sees" {
	mkdir -p "$WS/d"
	echo host-file >"$WS/d/f.txt"
	parent
	rt exec "$ID" fileops setxattr /workspace/d user.overlay.opaque y || fail "setxattr"
	[ "$(rt exec "$ID" cat /workspace/d/f.txt)" = host-file ] || fail "the parent's view"
	run sub run --name fo --workspace /workspace/d -- sh -c 'ls -A; cat f.txt'
	[ "$status" -eq 0 ] && [ "$output" = "$(printf 'f.txt\nhost-file')" ] || fail "the child's view: $output"
	run sub diff fo
	[ "$status" -eq 0 ] && [[ "$output" != *deleted* ]] || fail "diff: $output"
}

@test "sub-net-gid: a child's slirp4netns runs in the parent's namespace as the group the parent's proxy tells a child's connections by (escape: a sub-agent not given the secret ..., secrets-proxy.bats)" {
	parent
	sub run --name net --allow allowed.test --detach -- sleep 60 >/dev/null
	local cpid slirp
	cpid=$(host_pid "$ID.net")
	for _ in $(seq 50); do
		slirp=$(ps -eo pid=,args= | awk -v p="$cpid" '$2 == "slirp4netns" && $NF == "tap0" && $(NF-1) == p {print $1}')
		[ -n "$slirp" ] && break
		sleep 0.1
	done
	[ -n "$slirp" ] || fail "no slirp4netns for the child's init $cpid: $(ps -eo pid,args | grep slirp)"
	# group 0x61677273 (common/subproto.h), no supplementary group, in the parent's netns
	[ "$(awk '/^Gid:/ {print $2, $3, $4, $5}' "/proc/$slirp/status")" = "1634169459 1634169459 1634169459 1634169459" ] ||
		fail "slirp4netns's groups: $(grep -E '^(Gid|Groups):' "/proc/$slirp/status")"
	[ -z "$(awk '/^Groups:/ {$1 = ""; print}' "/proc/$slirp/status" | tr -d ' ')" ] || fail "$(grep Groups "/proc/$slirp/status")"
	[ "$(readlink "/proc/$slirp/ns/net")" = "$(readlink "/proc/$(host_pid "$ID")/ns/net")" ]
	# and the child's network works as before
	run sub exec net -- sh -c 'nc -w 3 allowed.test 80 </dev/null'
	[[ "$output" == *hello-allowed* ]] || fail "the child's network: $output"
	sub kill net >/dev/null
}

@test "escape: sub-dns-share: a child that floods lookups its upstream never answers does not use up its parent's resolver (the parent's lookups are answered at once)" {
	jq '.name = "sub-slow" | .egress.allow += ["*.slow.test"]' "$SNT_PROFILE" >"$SNT_DIR/slow.json"
	parent "$SNT_DIR/slow.json"
	run rt exec "$ID" sh -c 'nslookup allowed.test'
	[[ "$output" == *203.0.113.10* ]] || fail "the control: the parent resolves: $output"
	# the child: 25 lookups of new names every 0.2 s for 9 s, each waiting for its answer
	sub run --name flood --allow '*.slow.test' --detach -- sh -c 'i=0; while [ $i -lt 45 ]; do
		j=0; while [ $j -lt 25 ]; do nslookup f$i-$j.slow.test >/dev/null 2>&1 & j=$((j + 1)); done
		i=$((i + 1)); sleep 0.2; done; wait' >/dev/null
	# the flood reaches slow.test's server through the parent's resolver (which asks from the host, 192.0.2.6)
	for _ in $(seq 30); do
		[ "$(grep -c 'query.*f[0-9]*-[0-9]*.slow.test from 192.0.2.6' "$SNT_DIR/dns.log")" -ge 16 ] && break
		sleep 0.1
	done
	[ "$(grep -c 'query.*f[0-9]*-[0-9]*.slow.test from 192.0.2.6' "$SNT_DIR/dns.log")" -ge 16 ] ||
		fail "the child's flood did not reach the parent's upstream: $(grep -c slow.test "$SNT_DIR/dns.log")"
	# meanwhile 8 lookups of the parent's, each within 2 s (the resolver's upstream timeout)
	local ok=0 n t0 t1
	for n in $(seq 8); do
		t0=$(date +%s%N)
		out=$(rt exec "$ID" timeout 2 nslookup allowed.test 2>&1) && [[ "$out" == *203.0.113.10* ]] && ok=$((ok + 1))
		t1=$(date +%s%N)
		echo "parent lookup $n: $(((t1 - t0) / 1000000)) ms" >&3
		sleep 0.3
	done
	[ "$ok" -eq 8 ] || fail "the parent's lookups answered during its child's flood: $ok of 8"
	sub kill flood >/dev/null 2>&1 || true
}

# subagent-size-bypass: the parent's workspace.size bounds its whole family.  A child's upper
# layer was a plain directory in the data directory (not the parent's image): an agent wrote
# past its own limit by starting a child, up to the host's disk.  Measured from outside: the
# blocks the family's workspace records take on the host (du, which counts an image by its
# blocks), against the bound.
# family_kib: KiB on the host disk of the parent's workspace record and its descendants'.
family_kib() {
	du -sck "$TEST_STORE/.workspaces/$ID" "$TEST_STORE/.workspaces/$ID".* 2>/dev/null | tail -n1 | cut -f1
}

# family_bounded MIB WHAT: the family's records take at most MIB MiB (and 2 MiB of records).
family_bounded() {
	local kib
	kib=$(family_kib)
	echo "$2: the family takes $kib KiB" >&2
	[ "$kib" -le $(($1 * 1024 + 2048)) ] || fail "$2: the family's records take $kib KiB, past the $1 MiB bound"
}

@test "subagent-size-bypass: a child's dd, fallocate, sparse writes, mmap and empty files end in ENOSPC at the parent's workspace.size; the data directory stays bounded" {
	update_config '.annotations["run.agentrt.workspace.size"] = "32m"'
	parent
	# control: the parent itself is held at 32 MiB
	run rt exec "$ID" sh -c 'dd if=/dev/zero of=/workspace/p bs=1M count=64 2>&1; echo rc=$?; rm -f /workspace/p'
	[[ "$output" == *"No space left on device"* && "$output" == *rc=1* ]] || fail "control: $output"
	run sub run --name dd -- sh -c 'dd if=/dev/zero of=big bs=1M count=64 2>&1; echo rc=$?; sync'
	echo "$output"
	family_bounded 32 "dd"
	[[ "$output" == *"No space left on device"* && "$output" == *rc=1* ]] || fail "dd: $output"
	# what it wrote is kept, and is the child's: diff and the host's workspace list show it
	run sub diff dd
	[ "$status" -eq 0 ] && [[ "$output" == *big* ]] || fail "sub diff dd: $output"
	run rt workspace list
	[[ "$output" == *"$ID.dd"* ]] || fail "workspace list: $output"
	sub discard dd
	run sub run --name fa -- sh -c 'fallocate -l 64M big 2>&1; echo rc=$?; ls -ls big; sync'
	echo "$output"
	family_bounded 32 "fallocate"
	[[ "$output" == *rc=1* ]] || fail "fallocate: $output"
	sub discard fa
	# a sparse file of 4 GiB written 1 MiB at a time, 64 times, far apart
	run sub run --name sp -- sh -c 'truncate -s 4G s || exit 9; i=0
		while [ $i -lt 64 ]; do dd if=/dev/zero of=s bs=1M count=1 seek=$((i * 60)) conv=notrunc 2>/dev/null || break; i=$((i + 1)); done
		echo sparse=$i; sync'
	echo "$output"
	family_bounded 32 "sparse"
	[[ "$output" =~ sparse=([0-9]+) ]] && [ "${BASH_REMATCH[1]}" -lt 64 ] || fail "sparse: $output"
	sub discard sp
	# pages of a sparse file written through a shared mapping: SIGBUS once the image is full
	run sub run --name mm -- sh -c 'truncate -s 64M m && /usr/local/bin/mmap-write m --fill; echo rc=$?; sync'
	echo "$output"
	family_bounded 32 "mmap"
	[[ "$output" == *rc=135* ]] || fail "mmap: $output"
	sub discard mm
	# inodes: empty files until the image has none left
	run sub run --name in -- sh -c 'mkdir d && i=0
		while [ $i -lt 20000 ]; do { true >d/f$i; } 2>/dev/null || break; i=$((i + 1)); done; echo made=$i'
	echo "$output"
	[[ "$output" =~ made=([0-9]+) ]] && [ "${BASH_REMATCH[1]}" -gt 100 ] && [ "${BASH_REMATCH[1]}" -lt 20000 ] ||
		fail "inodes: $output"
	family_bounded 32 "inodes"
	sub discard in
	# the room is back: the parent writes 24 MiB
	run rt exec "$ID" sh -c 'dd if=/dev/zero of=/workspace/p bs=1M count=24 2>&1; echo rc=$?'
	[[ "$output" == *rc=0* ]] || fail "after discard: $output"
}

@test "subagent-size-bypass: children together, a grandchild and a child's kept changes after its end are held to the parent's workspace.size; discard gives the room back" {
	update_config '.annotations["run.agentrt.workspace.size"] = "32m"'
	parent
	# four children, 12 MiB each: 48 MiB together, past 32
	local n ok=0
	for n in 1 2 3 4; do
		run sub run --name c$n -- sh -c 'dd if=/dev/zero of=c bs=1M count=12 2>&1; echo rc=$?; sync'
		[[ "$output" == *rc=0* ]] && ok=$((ok + 1))
	done
	echo "children whose 12 MiB fit: $ok" >&2
	family_bounded 32 "four children"
	[ "$ok" -lt 4 ] || fail "all four children wrote 12 MiB in a 32 MiB workspace"
	# their kept changes count once they have ended: the parent finds no room for 16 MiB
	run rt exec "$ID" sh -c 'dd if=/dev/zero of=/workspace/p bs=1M count=16 2>&1; echo rc=$?; rm -f /workspace/p'
	[[ "$output" == *"No space left on device"* ]] || fail "the parent after its children: $output"
	# the host's review of an ended child still works (diff, commit into the parent's view)
	run rt workspace "$ID.c1" diff
	[ "$status" -eq 0 ] && grep -qE '^[a-z]+ +c( |$)' <<<"$output" || fail "workspace $ID.c1 diff: $output"
	# the host's list counts the first child's 12 MiB as its upper bytes
	run rt workspace list --format json
	jq -e --arg id "$ID.c1" '[.. | objects | select(.id? == $id)][0].upper_bytes >= 12582912' <<<"$output" >/dev/null ||
		fail "workspace list: $output"
	# the operator's discard of an ended child empties its upper in the image
	run rt workspace "$ID.c1" discard
	[ "$status" -eq 0 ] || fail "workspace $ID.c1 discard: $output"
	run rt workspace "$ID.c1" diff
	[ "$status" -eq 0 ] && ! grep -qE '^[a-z]+ +c( |$)' <<<"$output" || fail "diff after discard: $output"
	for n in 1 2 3 4; do sub discard c$n; done
	# a grandchild (maxDepth 2) is held too
	sub run --name g --detach -- sleep 120
	run rt exec "$ID.g" "$SUB" sub run --name gg -- sh -c 'dd if=/dev/zero of=big bs=1M count=64 2>&1; echo rc=$?; sync'
	echo "$output"
	family_bounded 32 "grandchild"
	[[ "$output" == *"No space left on device"* && "$output" == *rc=1* ]] || fail "grandchild: $output"
	run rt exec "$ID.g" "$SUB" sub diff gg
	[ "$status" -eq 0 ] && [[ "$output" == *big* ]] || fail "sub diff gg: $output"
	run rt exec "$ID.g" "$SUB" sub discard gg
	[ "$status" -eq 0 ] || fail "sub discard gg: $output"
	# discarded: the room is the parent's again
	run rt exec "$ID" sh -c 'dd if=/dev/zero of=/workspace/p bs=1M count=24 2>&1; echo rc=$?'
	[[ "$output" == *rc=0* ]] || fail "after discard: $output"
}

# The parent's monitor marks its image's file system, where its children's upper layers now are:
# a directory a child made and removed before the parent's monitor read the events is the
# child's, not a change of the parent's workspace lost (its trail said "events lost (file)").
@test "subagent-size-bypass: directories a child makes, fills and removes in the parent's image while the parent's monitor cannot read are no loss in the parent's trail" {
	parent
	run sub run --name gd --detach -- sh -c 'while [ ! -e /tmp/go ]; do sleep 0.1; done
		i=0; while [ $i -lt 90 ]; do mkdir d$i; i=$((i + 1)); done
		i=0; while [ $i -lt 90 ]; do : >d$i/f; i=$((i + 1)); done; rm -rf d*
		echo done >/tmp/done; sleep 300'
	[ "$status" -eq 0 ] || fail "sub run: $output"
	local cpid mon
	cpid=$(host_pid "$ID.gd")
	mon=$(cut -d' ' -f1 "$TEST_ROOT/$ID/monitor.pid")
	kill -STOP "$mon"
	touch "/proc/$cpid/root/tmp/go"
	for _ in $(seq 300); do [ -e "/proc/$cpid/root/tmp/done" ] && break; sleep 0.1; done
	kill -CONT "$mon"
	[ -e "/proc/$cpid/root/tmp/done" ] || fail "the child's commands did not finish"
	# the parent's own change after, seen by its monitor: its events were read by then
	rt exec "$ID" sh -c 'echo p >/workspace/after.txt'
	for _ in $(seq 50); do
		rt audit "$ID" --format json | grep -q '"path":"/workspace/after.txt"' && break
		sleep 0.1
	done
	rt audit "$ID" --format json | grep -q '"path":"/workspace/after.txt"' || fail "no record of the parent's change"
	run rt audit verify "$ID"
	[ "$status" -eq 0 ] && [[ "$output" != *"events lost"* ]] || fail "verify: $output"
	run rt audit "$ID" --kind audit_error --format json
	[[ "$output" != *'"lost"'* ]] || fail "the parent's trail: $output"
}

# sub-rollback: the operator rolls a child back to a snapshot of its workspace; the child's upper
# is in its parent's image, which the rollback must reach as the child's create does.
@test "sub-rollback: a child's workspace rollback, running or ended, gives the snapshot's view, and its sub commit brings exactly that into the parent" {
	parent
	run sub run --name rb --detach -- sleep 300
	[ "$status" -eq 0 ] || fail "sub run: $output"
	rt exec "$ID.rb" sh -c 'echo v1 >/workspace/s.txt; echo keep >/workspace/k.txt'
	run rt workspace "$ID.rb" snapshot s1
	[ "$status" -eq 0 ] || fail "snapshot: $output"
	rt exec "$ID.rb" sh -c 'echo v2 >/workspace/s.txt; echo late >/workspace/late.txt; rm /workspace/k.txt'
	run rt workspace "$ID.rb" rollback s1
	[ "$status" -eq 0 ] || fail "rollback of the running child: $output"
	# the child sees the snapshot
	run rt exec "$ID.rb" sh -c 'cat /workspace/s.txt /workspace/k.txt; ls /workspace'
	[ "$status" -eq 0 ] && [ "$(head -n2 <<<"$output" | tr '\n' ' ')" = "v1 keep " ] && [[ "$output" != *late.txt* ]] ||
		fail "the child after its rollback: $output"
	# it writes on, then ends; a second rollback, of the ended child
	rt exec "$ID.rb" sh -c 'echo v3 >/workspace/s.txt; echo late2 >/workspace/late2.txt'
	run rt workspace "$ID.rb" snapshot s2
	[ "$status" -eq 0 ] || fail "snapshot s2: $output"
	rt exec "$ID.rb" sh -c 'echo v4 >/workspace/s.txt; rm /workspace/late2.txt'
	run sub kill rb
	for _ in $(seq 50); do [[ "$(sub list)" == *"rb "*stopped* ]] && break; sleep 0.1; done
	run rt workspace "$ID.rb" rollback s2
	[ "$status" -eq 0 ] || fail "rollback of the ended child: $output"
	run rt workspace "$ID.rb" diff
	[ "$status" -eq 0 ] || fail "diff: $output"
	grep -qE '^added +s.txt' <<<"$output" && grep -qE '^added +k.txt' <<<"$output" &&
		grep -qE '^added +late2.txt' <<<"$output" && ! grep -q 'late.txt' <<<"$output" ||
		fail "diff after the rollback: $output"
	run sub commit rb
	[ "$status" -eq 0 ] || fail "sub commit: $output"
	run rt exec "$ID" sh -c 'cat /workspace/s.txt /workspace/k.txt /workspace/late2.txt; ls /workspace'
	[ "$(head -n3 <<<"$output" | tr '\n' ' ')" = "v3 keep late2 " ] && [[ "$output" != *"late.txt"* ]] ||
		fail "the parent's view after sub commit: $output"
	run rt workspace "$ID" diff
	grep -qE '^added +s.txt' <<<"$output" && grep -qE '^added +late2.txt' <<<"$output" &&
		! grep -q 'late.txt' <<<"$output" || fail "the parent's diff: $output"
}

# parent-purge-kept-children: a child's upper layer is in its parent's image (subagent-size-bypass),
# so whatever removes that image (the operator's purge or discard of the parent's workspace, the
# data directory's retention) reached the child's kept changes too, and dropped them silently.
# Checked from outside: the file read out of the image with debugfs, and the host's workspace list.
kept_in_image() { debugfs -R "cat /sub/$1/upper/$2" "$TEST_STORE/.workspaces/$ID/upper.img" 2>/dev/null; }

@test "parent-purge-kept-children: the purge, discard or retention of a parent's workspace never drops a child's kept changes in its image; the purge names the children" {
	command -v debugfs >/dev/null || skip "needs debugfs"
	parent
	[ -e "$TEST_STORE/.workspaces/$ID/upper.img" ] || skip "the parent's workspace has no image here"
	run sub run --name k -- sh -c 'echo kept-by-k >kept.txt'
	[ "$status" -eq 0 ] || fail "sub run k: $output"
	run sub run --name e -- true
	rt exec "$ID" sh -c 'echo mine >/workspace/parent.txt'
	run rt delete -f "$ID"
	[ "$status" -eq 0 ] || fail "delete: $output"
	[ "$(kept_in_image "$ID.k" kept.txt)" = kept-by-k ] || fail "the child's change is not in the image"
	# the parent's discard drops the parent's own change, not its child's
	run rt workspace "$ID" discard
	[ "$status" -eq 0 ] || fail "discard: $output"
	[ "$(kept_in_image "$ID.k" kept.txt)" = kept-by-k ] || fail "the parent's discard dropped its child's change"
	[ -z "$(debugfs -R 'ls -l /upper' "$TEST_STORE/.workspaces/$ID/upper.img" 2>/dev/null | grep parent.txt)" ] ||
		fail "the parent's own change is still there after its discard"
	# the purge is refused, naming the child with kept changes (not the one without)
	run rt workspace "$ID" purge
	[ "$status" -ne 0 ] && [[ "$output" == *"\`$ID.k\`"* ]] && [[ "$output" != *"\`$ID.e\`"* ]] ||
		fail "the parent's purge: $status $output"
	[[ "$(wc -l <<<"$output")" -eq 1 ]] || fail "not one line: $output"
	[ "$(kept_in_image "$ID.k" kept.txt)" = kept-by-k ] || fail "the parent's purge dropped its child's change"
	# the data directory's retention: the parent unused for two days, the child's changes new
	touch -d '2 days ago' "$TEST_STORE/.workspaces/$ID/meta.json"
	run rt purge --older-than 1d --dry-run
	[[ "$output" == *"would keep (engine root "*"workspace \`$ID\`: purge: "*"\`$ID.k\`"* ]] &&
		[[ "$output" != *"would remove workspace $ID "* ]] || fail "purge --dry-run: $output"
	run rt purge --older-than 1d
	[ "$(kept_in_image "$ID.k" kept.txt)" = kept-by-k ] || fail "retention dropped the child's change: $output"
	[[ "$output" == *"kept (engine root "*"workspace \`$ID\`: purge: "*"\`$ID.k\`"* ]] || fail "purge does not say what it kept: $output"
	run rt workspace list --format json
	jq -e --arg id "$ID.k" '[.. | objects | select(.id? == $id)][0].upper_bytes > 0' <<<"$output" >/dev/null ||
		fail "workspace list: $output"
	# once the child's changes are purged, the parent's purge goes through
	run rt workspace "$ID.k" purge
	[ "$status" -eq 0 ] || fail "purge of the child: $output"
	run rt workspace "$ID" purge
	[ "$status" -eq 0 ] || fail "purge after the child's: $output"
	[ ! -e "$TEST_STORE/.workspaces/$ID" ] || fail "the parent's workspace is still there"
	rt workspace "$ID.e" purge
}

# retention-kept-parent: a parent's workspace whose image held a child's kept changes was kept by
# retention (parent-purge-kept-children), and when the same sweep removed that child (old too),
# the parent stayed until a later sweep. Checked from outside: the records in the data
# directory after one `agentrt purge` (and its --dry-run), and after one create's sweep.
@test "retention-kept-parent: a sweep that removes a parent's last kept child removes the parent too, in that sweep (agentrt purge, its --dry-run, and create's sweep)" {
	parent
	[ -e "$TEST_STORE/.workspaces/$ID/upper.img" ] || skip "the parent's workspace has no image here"
	run sub run --name k -- sh -c 'echo kept-by-k >kept.txt'
	[ "$status" -eq 0 ] || fail "sub run k: $output"
	run rt delete -f "$ID"
	[ "$status" -eq 0 ] || fail "delete: $output"
	touch -d '2 days ago' "$TEST_STORE/.workspaces/$ID/meta.json"
	touch -d '1 day ago' "$TEST_STORE/.workspaces/$ID.k/meta.json"
	run rt purge --older-than 12h --dry-run
	[[ "$output" == *"would remove workspace $ID.k "* ]] && [[ "$output" == *"would remove workspace $ID "* ]] &&
		[[ "$output" != *"would keep"* ]] || fail "purge --dry-run: $output"
	[ -e "$TEST_STORE/.workspaces/$ID.k/meta.json" ] || fail "the dry run removed the child"
	run rt purge --older-than 12h
	[[ "$output" == *"removed workspace $ID.k "* ]] && [[ "$output" == *"removed workspace $ID "* ]] ||
		fail "purge: $output"
	[ ! -e "$TEST_STORE/.workspaces/$ID" ] && [ ! -e "$TEST_STORE/.workspaces/$ID.k" ] ||
		fail "left after the sweep: $(ls "$TEST_STORE/.workspaces")"
	# create's sweep (the profile's workspace.retention.maxAge), the records' created times old
	parent
	run sub run --name k -- sh -c 'echo kept-by-k >kept.txt'
	[ "$status" -eq 0 ] || fail "sub run k: $output"
	rt delete -f "$ID"
	local old
	old=$(date -d '3 days ago' +%s)
	for w in "$ID" "$ID.k"; do
		jq --argjson t "$old" '.created_s = $t' "$TEST_STORE/.workspaces/$w/meta.json" >"$BUNDLE/m.json"
		cp "$BUNDLE/m.json" "$TEST_STORE/.workspaces/$w/meta.json"
	done
	rm -f "$TEST_STORE/.workspaces/.last-sweep"
	jq '.name = "sub-ret" | .workspace.retention.maxAge = "1d"' "$SNT_PROFILE" >"$BUNDLE/ret.json"
	local first=$ID
	ID=$first-2
	parent "$BUNDLE/ret.json"
	[ ! -e "$TEST_STORE/.workspaces/$first" ] && [ ! -e "$TEST_STORE/.workspaces/$first.k" ] ||
		fail "left after create's sweep: $(ls "$TEST_STORE/.workspaces")"
	rt delete -f "$ID"
}

# stopped_commit ID: `workspace ID commit` stopped at its syncfs (strace); sets $tracer, $apid
stopped_commit() {
	local st=$BUNDLE/$1.strace
	apid=
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 strace -f -qq -o "$st" -e trace=syncfs \
		-e inject=syncfs:signal=SIGSTOP "$AGENTRT" --root "$TEST_ROOT" workspace "$1" commit \
		>"$BUNDLE/$1.out" 2>&1 &
	tracer=$!
	for _ in $(seq 100); do
		apid=$(grep -m1 'stopped by SIGSTOP' "$st" 2>/dev/null | cut -d' ' -f1)
		[ -n "$apid" ] && return 0
		sleep 0.1
	done
	kill "$tracer"
	fail "the commit of $1 never reached its syncfs: $(cat "$BUNDLE/$1.out" "$st")"
}

# sub-commit-race: two children's commits into the parent's view at once.  Each checks that
# what it changes is as it was at the child's start, then applies; the first is stopped (strace
# turns its syncfs, after every check and before the first rename, into a SIGSTOP) while the
# second runs.  The second must not pass its check against a view the first is about to change:
# both exited 0 and the first's rename silently replaced the second's file.
@test "sub-commit-race: two children committing the same path into the parent at once: one wins, the other is refused with the conflict, none is silently overwritten" {
	command -v strace >/dev/null || skip "needs strace"
	parent
	run sub run --name a -- sh -c 'echo from-a >f.txt; echo a-only >a.txt'
	[ "$status" -eq 0 ] || fail "sub run a: $output"
	run sub run --name b -- sh -c 'echo from-b >f.txt'
	[ "$status" -eq 0 ] || fail "sub run b: $output"
	local tracer apid bpid inode
	stopped_commit "$ID.a"
	# b's commit while a's is between its checks and its renames
	inode=$(stat -c %i "$TEST_STORE/.workspaces/$ID")
	rt workspace "$ID.b" commit >"$BUNDLE/b.out" 2>&1 &
	bpid=$!
	for _ in $(seq 100); do
		kill -0 "$bpid" 2>/dev/null || break
		grep -q -- "-> FLOCK .*:$inode " /proc/locks && break
		sleep 0.1
	done
	kill -CONT "$apid"
	local arc=0 brc=0
	wait "$tracer" || arc=$?
	wait "$bpid" || brc=$?
	echo "a: $arc $(cat "$BUNDLE/$ID.a.out")" >&2
	echo "b: $brc $(cat "$BUNDLE/b.out")" >&2
	run rt exec "$ID" cat /workspace/f.txt /workspace/a.txt
	echo "the parent's view: $output" >&2
	# whichever commit's file the parent's view holds, the other's commit did not report success
	case "$(head -n1 <<<"$output")" in
	from-a) [ "$brc" -ne 0 ] && grep -q 'conflict: f.txt' "$BUNDLE/b.out" || fail "b's commit succeeded and its f.txt was overwritten by a's" ;;
	from-b) [ "$arc" -ne 0 ] || fail "a's commit succeeded and its f.txt was overwritten by b's" ;;
	*) fail "f.txt in the parent's view: $output" ;;
	esac
}

# orphan-kept-restart: a parent deleted (or its /run lost) and run again under the same id
# (docker restart, a reboot with a restart policy) finds its names free again; a name whose
# earlier child's workspace held kept changes was freed by purging them, and a default name
# (sub1, sub2, ...) was always one of those.
@test "orphan-kept-restart: a parent run again under its id never drops a child's kept changes of its earlier run by a name it reuses (default or --name); a name without changes is free again" {
	command -v debugfs >/dev/null || skip "needs debugfs"
	parent
	[ -e "$TEST_STORE/.workspaces/$ID/upper.img" ] || skip "the parent's workspace has no image here"
	run sub run -- sh -c 'echo one >one.txt'
	[ "$status" -eq 0 ] || fail "sub run: $output"
	run sub run --name c -- sh -c 'echo kept-c >k.txt'
	[ "$status" -eq 0 ] || fail "sub run c: $output"
	run sub run --name d -- true
	[ "$status" -eq 0 ] || fail "sub run d: $output"
	local old
	old=$(host_pid "$ID")
	run rt delete -f "$ID"
	[ "$status" -eq 0 ] || fail "delete: $output"
	# the earlier init reaped (a zombie still has its start time: the view's process "runs")
	for _ in $(seq 200); do [ -e "/proc/$old" ] || break; sleep 0.1; done
	[ ! -e "/proc/$old" ] || fail "the earlier init $old is still there: $(cat "/proc/$old/status" 2>&1 | head -3)"
	parent
	# a default name is not the earlier sub1
	run sub run --detach -- true
	[ "$status" -eq 0 ] && [ -n "$output" ] && [ "$output" != sub1 ] || fail "the default name after the restart: $status $output"
	[ "$(kept_in_image "$ID.sub1" one.txt)" = one ] || fail "the earlier sub1's change is gone"
	# --name c: refused, naming the workspace that holds the changes; they stay
	run sub run --name c -- true
	[ "$status" -eq 125 ] && [[ "$output" == *"\`$ID.c\`"*"kept changes"* ]] || fail "sub run --name c: $status $output"
	[ "$(kept_in_image "$ID.c" k.txt)" = kept-c ] || fail "the earlier c's change is gone"
	run rt workspace list --format json
	jq -e --arg id "$ID.c" '[.. | objects | select(.id? == $id)][0].upper_bytes > 0' <<<"$output" >/dev/null ||
		fail "workspace list: $output"
	# d had no change: its name is free again
	run sub run --name d -- true
	[ "$status" -eq 0 ] || fail "sub run --name d: $output"
	# the operator purges c's: the name is free
	run rt workspace "$ID.c" purge
	[ "$status" -eq 0 ] || fail "purge c: $output"
	run sub run --name c -- true
	[ "$status" -eq 0 ] || fail "sub run --name c after the purge: $output"
}

# orphan-kept-review: a child whose parent's init has ended (the parent deleted, or restarted
# under its id) kept its changes, but nothing showed them: `workspace list` gave `?`, `diff` and
# `commit` refused ("the process whose view it is has ended"); only purge was left. They are
# shown against the parent's workspace record (its layers), and commit puts them into the
# parent's workspace as its pending changes (as `sub commit` would have), reviewed there before
# anything reaches the host. Checked from outside: the host dir, the parent's image (debugfs).
@test "orphan-kept-review: an orphan child's kept changes are listed, diffed against its parent's layers and committed into the parent's workspace (never the host dir), refused while the parent runs again" {
	command -v debugfs >/dev/null || skip "needs debugfs"
	echo base >"$WS/gone.txt"
	parent
	[ -e "$TEST_STORE/.workspaces/$ID/upper.img" ] || skip "the parent's workspace has no image here"
	rt exec "$ID" sh -c 'echo by-parent >/workspace/p.txt'
	run sub run --name k -- sh -c 'echo kept-k >k.txt; echo changed >a.txt; rm gone.txt; cat p.txt >seen.txt'
	[ "$status" -eq 0 ] || fail "sub run k: $output"
	run rt delete -f "$ID"
	[ "$status" -eq 0 ] || fail "delete: $output"
	run rt workspace list --format json
	jq -e --arg id "$ID.k" '[.. | objects | select(.id? == $id)][0].changes == 4' <<<"$output" >/dev/null ||
		fail "workspace list: $output"
	run rt workspace "$ID.k" diff --format json
	[ "$status" -eq 0 ] || fail "diff: $output"
	local d=$output
	jq -e '[.changes[] | "\(.kind) \(.path)"] | sort == ["added k.txt", "added seen.txt", "deleted gone.txt", "modified a.txt"]' \
		<<<"$(grep '^{' <<<"$d")" >/dev/null || fail "diff: $d"
	[[ "$d" == *"its parent's init has ended"* ]] || fail "diff does not say what it is against: $d"
	# the parent runs again with its workspace: the commit is refused in one line, nothing moves
	parent
	rt exec "$ID" sh -c 'echo again >/workspace/r.txt'
	run rt workspace "$ID.k" commit
	[ "$status" -ne 0 ] && [[ "$output" == *"\`$ID.k\`"*"uses its workspace again"* ]] &&
		[ "$(wc -l <<<"$output")" -eq 1 ] || fail "commit while the parent runs: $status $output"
	run rt exec "$ID" ls /workspace
	[[ "$output" != *k.txt* ]] || fail "the running parent sees the child's change: $output"
	rt delete -f "$ID"
	run rt workspace "$ID.k" commit
	[ "$status" -eq 0 ] && [[ "$output" == *"into the workspace of \`$ID\`"* ]] || fail "commit: $status $output"
	# not the host dir
	[ ! -e "$WS/k.txt" ] && [ "$(cat "$WS/a.txt")" = hello ] && [ -e "$WS/gone.txt" ] ||
		fail "the orphan's commit reached the host dir: $(ls "$WS")"
	# the parent's pending changes: its own (p.txt, r.txt) and the child's
	[ "$(debugfs -R 'cat /upper/k.txt' "$TEST_STORE/.workspaces/$ID/upper.img" 2>/dev/null)" = kept-k ] ||
		fail "k.txt is not in the parent's upper layer"
	run rt workspace "$ID" diff --format json
	jq -e '[.changes[] | "\(.kind) \(.path)"] | sort == ["added k.txt", "added p.txt", "added r.txt", "added seen.txt", "deleted gone.txt", "modified a.txt"]' \
		<<<"$output" >/dev/null || fail "the parent's diff: $output"
	run rt workspace "$ID.k" diff
	[[ "$output" == *"no changes"* ]] || fail "the child's diff after its commit: $output"
	# the operator's review of the parent takes them to the host dir
	run rt workspace "$ID" commit
	[ "$status" -eq 0 ] || fail "the parent's commit: $output"
	[ "$(cat "$WS/k.txt")" = kept-k ] && [ "$(cat "$WS/a.txt")" = changed ] && [ ! -e "$WS/gone.txt" ] &&
		[ "$(cat "$WS/seen.txt")" = by-parent ] || fail "the host dir after the parent's commit: $(ls "$WS")"
	run rt workspace "$ID.k" purge
	[ "$status" -eq 0 ] || fail "purge k: $output"
	run rt workspace "$ID" purge
	[ "$status" -eq 0 ] || fail "purge: $output"
}

# orphan-kept-review, a grandchild: a grandchild whose parent (a child) ended keeps its changes;
# its parent's record is itself a view of the grandparent's layers (its own recorded view), and
# the grandchild's commit goes into its parent's workspace, from where the parent's `sub commit`
# (the grandparent's agent) brings it on, as if the parent had committed it itself.
@test "orphan-kept-review: a grandchild whose parent ended is diffed against that parent's layers and committed into its workspace, which the grandparent then commits" {
	parent
	run sub run --name c --detach -- sleep 300
	[ "$status" -eq 0 ] || fail "sub run c: $output"
	run rt exec "$ID.c" "$SUB" sub run --name g -- sh -c 'echo by-g >g.txt; echo changed-by-g >a.txt'
	[ "$status" -eq 0 ] || fail "sub run g: $output"
	run sub kill c
	[ "$status" -eq 0 ] || fail "sub kill c: $output"
	for _ in $(seq 100); do [[ "$(sub list)" == *"c "*stopped* ]] && break; sleep 0.1; done
	run rt workspace "$ID.c.g" diff --format json
	[ "$status" -eq 0 ] || fail "diff g: $output"
	jq -e '[.changes[] | "\(.kind) \(.path)"] | sort == ["added g.txt", "modified a.txt"]' \
		<<<"$(grep '^{' <<<"$output")" >/dev/null || fail "diff g: $output"
	run rt workspace "$ID.c.g" commit
	[ "$status" -eq 0 ] && [[ "$output" == *"into the workspace of \`$ID.c\`"* ]] || fail "commit g: $status $output"
	# the grandparent's view is untouched until its child's commit
	run rt exec "$ID" cat /workspace/a.txt
	[ "$output" = hello ] || fail "the grandparent's view changed: $output"
	run sub commit c
	[ "$status" -eq 0 ] || fail "sub commit c: $output"
	run rt exec "$ID" cat /workspace/g.txt /workspace/a.txt
	[ "$output" = "$(printf 'by-g\nchanged-by-g')" ] || fail "the grandparent's view: $output"
	[ "$(cat "$WS/a.txt")" = hello ] && [ ! -e "$WS/g.txt" ] || fail "reached the host dir"
	rt workspace "$ID.c.g" purge
}

# zombie-parent-name: the parent's earlier init, once deleted, may stay a zombie until the
# host's pid 1 (or the engine's shim) reaps it; a zombie keeps its pid and start time, so a
# child's view of it counted as a live parent's and `sub run --name N` of that child's name was
# refused as "another container's id or workspace". The record of an earlier child is made to
# name a zombie here (a process of the test that is never waited for).
@test "zombie-parent-name: a name whose earlier child's view is of a zombie init is free again (no changes) or refused as kept (changes), never taken for another container's" {
	parent
	run sub run --name z -- true
	[ "$status" -eq 0 ] || fail "sub run z: $output"
	run sub run --name y -- sh -c 'echo kept-y >y.txt'
	[ "$status" -eq 0 ] || fail "sub run y: $output"
	rt delete -f "$ID"
	# a zombie: `sleep 0.3` ends after its parent has become `sleep 300`, which never waits
	bash -c 'sleep 0.3 & echo $! >"$1"; exec sleep 300' _ "$BUNDLE/zpid" &
	local holder=$! zpid= start
	for _ in $(seq 50); do
		zpid=$(cat "$BUNDLE/zpid" 2>/dev/null || true)
		[ -n "$zpid" ] && [ "$(awk '{print $3}' "/proc/$zpid/stat" 2>/dev/null)" = Z ] && break
		sleep 0.1
	done
	[ "$(awk '{print $3}' "/proc/$zpid/stat")" = Z ] || { kill "$holder"; fail "no zombie"; }
	start=$(sed 's/.*) //' "/proc/$zpid/stat" | awk '{print $20}')
	for w in z y; do
		jq --arg l "/proc/$zpid/root/workspace" --argjson s "$start" '.lowerdir = $l | .view_start = $s' \
			"$TEST_STORE/.workspaces/$ID.$w/meta.json" >"$BUNDLE/m.json"
		cp "$BUNDLE/m.json" "$TEST_STORE/.workspaces/$ID.$w/meta.json"
	done
	parent
	run sub run --name z -- sh -c 'echo new-z >z.txt'
	local zs=$status zo=$output
	run sub run --name y -- true
	local ys=$status yo=$output
	run rt workspace "$ID.z" diff
	local zd=$output
	kill "$holder"
	wait "$holder" 2>/dev/null || true
	[ "$zs" -eq 0 ] || fail "sub run --name z (no changes, its init a zombie): $zs $zo"
	[[ "$zd" == *z.txt* ]] || fail "the new z's workspace: $zd"
	[ "$ys" -eq 125 ] && [[ "$yo" == *"\`$ID.y\`"*"kept changes"* ]] && [ "$(wc -l <<<"$yo")" -eq 1 ] ||
		fail "sub run --name y (kept changes, its init a zombie): $ys $yo"
	rt workspace "$ID.y" purge
}

# The parent's own processes write its view too: a write of the parent's between a child's
# commit's check and its rename was replaced by the child's file, the commit exiting 0.
@test "sub-commit-race: a parent's write while its child's commit runs is not silently replaced (the parent is frozen for the commit)" {
	command -v strace >/dev/null || skip "needs strace"
	parent
	run sub run --name a -- sh -c 'echo from-a >f.txt'
	[ "$status" -eq 0 ] || fail "sub run a: $output"
	local tracer apid cg ppid
	# a process of the parent's that writes f.txt when told to (a file in its /tmp)
	rt_bg exec -d "$ID" sh -c 'while [ ! -e /tmp/go ]; do sleep 0.05; done; echo from-parent >/workspace/f.txt; touch /tmp/done'
	[ "$status" -eq 0 ] || fail "exec -d: $output"
	ppid=$(host_pid "$ID")
	stopped_commit "$ID.a"
	# the parent writes the same path meanwhile: done at once, or held while it is frozen
	touch "/proc/$ppid/root/tmp/go"
	cg=$(cg_dir "$ID")
	for _ in $(seq 100); do
		[ -e "/proc/$ppid/root/tmp/done" ] && break
		grep -qs 1 "$cg/cgroup.freeze" && break
		grep -qs FROZEN "${cg/\/pids\///freezer/}/freezer.state" && break
		sleep 0.1
	done
	kill -CONT "$apid"
	local arc=0
	wait "$tracer" || arc=$?
	for _ in $(seq 100); do [ -e "/proc/$ppid/root/tmp/done" ] && break; sleep 0.1; done
	[ -e "/proc/$ppid/root/tmp/done" ] || fail "the parent's write never happened"
	echo "a: $arc $(cat "$BUNDLE/$ID.a.out")" >&2
	run rt exec "$ID" cat /workspace/f.txt
	echo "the parent's view: $output" >&2
	# the parent's write is the last one, or the commit did not say it applied over it
	[ "$output" = from-parent ] || [ "$arc" -ne 0 ] || fail "the parent's write was replaced by a's f.txt, commit 0"
}

# freeze-kill: a commit freezes a container (the parent for a child's commit, a running container
# for the operator's); a SIGTERM or ^C while it was frozen (the sub-agent client relays SIGINT,
# SIGTERM, SIGHUP, SIGQUIT to the commit) ended the commit there and left the container frozen:
# every process of the agent stopped, for good.

# frozen CGDIR: is that cgroup frozen (v2 cgroup.freeze, v1 freezer.state)?
frozen() {
	grep -qs 1 "$1/cgroup.freeze" || grep -qs FROZEN "${1/\/pids\///freezer/}/freezer.state"
}

@test "freeze-kill: a commit sent SIGTERM while it holds a container frozen (a child's commit: its parent; the operator's: the running container) ends only after thawing it" {
	command -v strace >/dev/null || skip "needs strace"
	parent
	local cg tracer apid rc
	cg=$(cg_dir "$ID")
	run sub run --name a -- sh -c 'echo from-a >f.txt'
	[ "$status" -eq 0 ] || fail "sub run a: $output"
	stopped_commit "$ID.a"
	frozen "$cg" || fail "the parent is not frozen during its child's commit"
	kill -TERM "$apid"
	kill -CONT "$apid"
	rc=0
	wait "$tracer" || rc=$?
	echo "child's commit: $rc $(cat "$BUNDLE/$ID.a.out")" >&2
	for _ in $(seq 50); do frozen "$cg" || break; sleep 0.1; done
	! frozen "$cg" || fail "the parent stays frozen after its child's commit got SIGTERM"
	run rt exec "$ID" cat /workspace/f.txt
	[ "$status" -eq 0 ] && [ "$output" = from-a ] || fail "the parent after the commit: $status $output"
	# the operator's commit of the running parent (reviewed first)
	rt workspace "$ID" diff >/dev/null
	stopped_commit "$ID"
	frozen "$cg" || fail "the parent is not frozen during its commit"
	kill -TERM "$apid"
	kill -CONT "$apid"
	rc=0
	wait "$tracer" || rc=$?
	echo "operator's commit: $rc $(cat "$BUNDLE/$ID.out")" >&2
	for _ in $(seq 50); do frozen "$cg" || break; sleep 0.1; done
	! frozen "$cg" || fail "the parent stays frozen after the operator's commit got SIGTERM"
	run rt exec "$ID" true
	[ "$status" -eq 0 ] || fail "exec after the commit: $output"
	[ "$(cat "$WS/f.txt")" = from-a ] || fail "the host dir after the commit: $(cat "$WS/f.txt" 2>&1)"
}

# Guards (no defect found): what a child wrote is kept when it is deleted with --force mid-write,
# and a parent's rollback under a running child leaves the child's change to a path the rollback
# took away as a conflict at commit, not applied over the parent's view.
@test "kept-after-force-delete: a child deleted with --force while it writes keeps what it wrote; sub diff and sub commit bring exactly that into the parent" {
	parent
	run sub run --name w --detach -- sh -c 'i=0; while [ $i -lt 100000 ]; do echo line$i >>log.txt; i=$((i + 1)); done; sleep 300'
	[ "$status" -eq 0 ] || fail "sub run: $output"
	local cpid
	cpid=$(host_pid "$ID.w")
	for _ in $(seq 100); do [ "$(wc -l <"/proc/$cpid/root/workspace/log.txt" 2>/dev/null || echo 0)" -gt 100 ] && break; sleep 0.1; done
	run rt delete -f "$ID.w"
	[ "$status" -eq 0 ] || fail "delete -f: $output"
	run sub diff w
	[ "$status" -eq 0 ] && grep -qE '^added +log.txt' <<<"$output" || fail "sub diff: $output"
	run sub commit w
	[ "$status" -eq 0 ] || fail "sub commit: $output"
	# every line the child wrote, in order, in the parent's view
	run rt exec "$ID" sh -c 'n=$(wc -l </workspace/log.txt); i=0; while read -r l; do [ "$l" = line$i ] || { echo "bad line $i: $l"; exit 1; }; i=$((i + 1)); done </workspace/log.txt; echo "$n lines"'
	[ "$status" -eq 0 ] && [[ "$output" == *" lines" ]] && [ "${output% lines}" -gt 100 ] || fail "the parent's log.txt: $output"
}

@test "parent-rollback-under-child: a parent rolled back while its child runs: the child's change to a path the rollback took away is a conflict at commit, the parent's view keeps the rollback" {
	parent
	rt exec "$ID" sh -c 'echo p1 >/workspace/p1.txt'
	run rt workspace "$ID" snapshot s1
	[ "$status" -eq 0 ] || fail "snapshot: $output"
	rt exec "$ID" sh -c 'echo p2 >/workspace/p2.txt'
	run sub run --name c --detach -- sleep 300
	[ "$status" -eq 0 ] || fail "sub run: $output"
	run rt workspace "$ID" rollback s1
	[ "$status" -eq 0 ] || fail "rollback: $output"
	rt exec "$ID.c" sh -c 'echo p2-edited >/workspace/p2.txt; echo c >/workspace/c.txt'
	run sub kill c
	for _ in $(seq 50); do [[ "$(sub list)" == *"c "*stopped* ]] && break; sleep 0.1; done
	run sub commit c
	[ "$status" -ne 0 ] && [[ "$output" == *"conflict: p2.txt"* ]] || fail "sub commit: $status $output"
	run rt exec "$ID" ls /workspace
	[[ "$output" != *p2.txt* ]] && [[ "$output" != *c.txt* ]] || fail "the parent's view after a refused commit: $output"
	# the child's changes are still there, for a commit of what does not conflict
	run sub commit c c.txt
	[ "$status" -eq 0 ] || fail "sub commit c.txt: $output"
	run rt exec "$ID" cat /workspace/c.txt
	[ "$output" = c ] || fail "c.txt: $output"
}
