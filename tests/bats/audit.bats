#!/usr/bin/env bats
# audit.bats - the audit trail: what an agent container did, from the kernel,
# recorded outside its reach, hash-chained, surviving `delete` until --purge.
# Containers run under the `agent` profile (tmpfs workspace at /workspace).

load helpers

eval "$(declare -f teardown_file | sed '1s/teardown_file/helpers_teardown_file/')"

setup() {
	setup_bundle
	agentrt_only "the audit trail is agentrt's"
	requires jq
	export AGENTRT_PROFILE=agent # also for create_container / run_detached
}

teardown() {
	fake_internet_down
	teardown_bundle
	local rc=$?
	# trails outlive their containers by design (in the data directory)
	rm -rf "${TEST_STORE:?}/.audit"
	return $rc
}

teardown_file() {
	helpers_teardown_file
}

ra() {
	rt --profile agent "$@"
}

# A small fake internet (TEST-NET addresses only, nothing added to the host's netns), as
# in egress.bats:
#   agentrt-t-aud-ctr-N   the container's (joined by path): c0 192.0.2.2/30, default via .1
#   agentrt-t-aud-inet-N  203.0.113.10:80 (socat), 198.51.100.20 (no listener, denied
#                         anyway), dnsmasq at 192.0.2.53 (allowed.test -> 203.0.113.10)
#   agentrt-t-aud-host-N  agentrt runs in it, so the resolver's upstream reaches 192.0.2.53
# Server PIDs in $BUNDLE/net-pids; fake_internet_down (in teardown) removes it all.
fake_internet_up() {
	local C=$FN_CTR I=$FN_INET H=$FN_HOST
	: >"$BUNDLE/net-pids"
	fake_links "$C" "$I" "$H" 203.0.113.10 198.51.100.20 192.0.2.53 || return 1
	ip netns exec "$I" socat TCP-LISTEN:80,bind=203.0.113.10,fork,reuseaddr SYSTEM:"echo hello" \
		</dev/null >/dev/null 2>&1 &
	echo $! >>"$BUNDLE/net-pids"
	ip netns exec "$I" dnsmasq -k --no-resolv --no-hosts --bind-interfaces \
		--listen-address=192.0.2.53 --port=53 --local=/test/ --local-ttl=300 \
		--host-record=allowed.test,203.0.113.10 --pid-file= --user=root \
		</dev/null >/dev/null 2>&1 &
	echo $! >>"$BUNDLE/net-pids"
	for _ in $(seq 50); do
		ip netns exec "$I" busybox nslookup allowed.test 192.0.2.53 >/dev/null 2>&1 &&
			ip netns exec "$I" busybox nc -w 1 203.0.113.10 80 </dev/null 2>/dev/null | grep -q hello &&
			return 0
		sleep 0.1
	done
	return 1
}

fake_internet_down() {
	local pid ns
	[ -n "${FN_CTR:-}" ] || return 0
	if [ -f "$BUNDLE/net-pids" ]; then
		for pid in $(cat "$BUNDLE/net-pids"); do kill "$pid" 2>/dev/null; done
		for pid in $(cat "$BUNDLE/net-pids"); do
			for _ in $(seq 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
			kill -9 "$pid" 2>/dev/null
		done
	fi
	for ns in "$FN_CTR" "$FN_INET" "$FN_HOST"; do ip netns delete "$ns" 2>/dev/null; done
	FN_CTR=
}

# records ID [FILTER]: the trail as compact JSON lines (jq filter applied per record)
records() {
	ra audit --format json "$1" | jq -c "${2:-.}"
}

trail_dir() {
	echo "$TEST_STORE/.audit/$1"
}

wait_stopped() {
	wait_for_status "$1" stopped 20
}

# A program start: by argv (the normal case) or, for one that was gone before the
# monitor could read it, by its comm.
has_program() { # ID NAME ARG0
	records "$1" "select(.kind == \"process\") | select(.argv[0] == \"$3\" or .comm == \"$2\") | .pid" |
		grep -q .
}

@test "audit: lifecycle, programs and workspace changes are recorded in order" {
	set_cmd '/bin/ls /workspace >/dev/null; echo hi >/workspace/a.txt; echo more >>/workspace/a.txt; mkdir /workspace/d; rm /workspace/a.txt; exit 3'
	run ra run --bundle "$BUNDLE" c1
	[ "$status" -eq 3 ] || fail "run: status $status: $output"
	# lifecycle skeleton, in order
	kinds=$(records c1 '.kind' | jq -r . | grep -vE '^(process|file|dns|denied|flow)$' | tr '\n' ' ')
	[ "$kinds" = "create monitor start exit delete " ] || fail "lifecycle: $kinds"
	[ "$(records c1 'select(.kind == "exit") | .code')" = 3 ] || fail "exit code not recorded"
	[ "$(records c1 'select(.kind == "create") | .profile' | jq -r .)" = agent ]
	records c1 'select(.kind == "create") | .changes[] | .field' | grep -q 'mounts\[/workspace\]' ||
		fail "create does not list the profile's changes"
	# the init's program, then /bin/ls it started
	records c1 'select(.kind == "process") | .argv[0]' | head -1 | grep -qx '"sh"' ||
		fail "first program is not sh: $(records c1 'select(.kind == "process")')"
	has_program c1 ls /bin/ls || fail "/bin/ls not recorded: $(records c1 'select(.kind == "process")')"
	seq_sh=$(records c1 'select(.kind == "process" and .argv[0] == "sh") | .seq' | head -1)
	seq_start=$(records c1 'select(.kind == "start") | .seq')
	[ "$seq_start" -lt "$seq_sh" ]
	# workspace changes, coalesced per path
	[ "$(records c1 'select(.kind == "file" and .path == "/workspace/a.txt") | .ops' )" = '["create","modify","delete"]' ] ||
		fail "a.txt: $(records c1 'select(.kind == "file")')"
	records c1 'select(.kind == "file" and .path == "/workspace/d") | .dir' | grep -qx true
	# nothing outside the workspace is reported as a workspace change
	[ -z "$(records c1 'select(.kind == "file") | .path | select(startswith("/workspace/") | not)')" ]
	# every record names the container
	[ -z "$(records c1 'select(.id != "c1")')" ]
	run ra audit verify c1
	[ "$status" -eq 0 ] || fail "verify: $output"
	assert_output_contains "ok"
}

@test "audit: --kind, --since, --format text and --summary" {
	set_cmd '/bin/echo x >/workspace/f; true'
	run ra run --bundle "$BUNDLE" c1
	[ "$status" -eq 0 ] || fail "run: $output"
	run ra audit --kind file,exit --format json c1
	[ "$status" -eq 0 ]
	[ "$(jq -r .kind <<<"$output" | sort -u | tr '\n' ' ')" = "exit file " ] || fail "$output"
	run ra audit --format text c1
	grep -qE '^[0-9T:.-]+Z #1 create ' <<<"$output" || fail "text: $output"
	run ra audit --since 2000-01-01T00:00:00Z c1
	[ "$(wc -l <<<"$output")" -eq "$(ra audit c1 | wc -l)" ]
	run ra audit --since 1m --kind create c1
	[ "$(wc -l <<<"$output")" -eq 1 ]
	run ra audit --summary c1
	[ "$status" -eq 0 ]
	assert_output_contains "programs run"
	assert_output_contains "/workspace/f (create,modify)"
	assert_output_contains "exit code 0"
}

@test "audit: argv0-spoof: --summary names the file that ran when argv[0] names another program" {
	# argv[0] is the program's own choice: `exec -a git /tmp/exfil` was listed as "git"
	set_cmd 'cp /usr/local/bin/try-syscall /tmp/exfil; (exec -a git /tmp/exfil x) 2>/dev/null
		(exec -a /usr/bin/git /tmp/exfil x) 2>/dev/null; /usr/local/bin/try-syscall x 2>/dev/null; true'
	run ra run --bundle "$BUNDLE" c1
	[ "$status" -eq 0 ] || fail "run: $output"
	for _ in $(seq 50); do
		[ "$(ra audit --format json --kind process c1 | jq -s '[.[] | select(.exe == "/tmp/exfil")] | length')" -eq 2 ] && break
		sleep 0.1
	done
	run ra audit --summary c1
	[ "$status" -eq 0 ] || fail "$output"
	assert_output_contains "  git (exe /tmp/exfil)"
	assert_output_contains "  /usr/bin/git (exe /tmp/exfil)"
	! grep -qx "  git" <<<"$output" || fail "argv[0] alone: $output"
	# a program started by its path or by its plain name from a system directory: as before
	assert_output_contains "  /usr/local/bin/try-syscall"$'\n'
}

@test "audit: script-hidden: --summary names a script exec'd by its own file, not only its interpreter" {
	# The kernel runs a script as its interpreter: /proc's exe is /bin/busybox and argv[0]
	# "/bin/sh", and the script's path is an argument as it was given (./x.sh: relative).
	# --summary listed /tmp/x.sh, ./x.sh and a script found by PATH each as "/bin/sh".
	set_cmd 'printf "#!/bin/sh\nsleep 0.3\n" >/tmp/x.sh; printf "#!/bin/sh -e\nsleep 0.3\n" >/tmp/y
		chmod +x /tmp/x.sh /tmp/y; /tmp/x.sh; cd /tmp && ./x.sh && PATH=/tmp:$PATH y
		printf "sleep 0.3\n" >/tmp/read.sh; sh /tmp/read.sh; true'
	run ra run --bundle "$BUNDLE" c1
	[ "$status" -eq 0 ] || fail "run: $output"
	for _ in $(seq 50); do
		[ "$(ra audit --format json --kind process c1 | jq -s '[.[] | select(.argv == ["sleep", "0.3"])] | length')" -eq 4 ] && break
		sleep 0.1
	done
	json=$(ra audit --format json --kind process c1)
	[ "$(jq -s '[.[] | select(.script == "/tmp/x.sh" and .exe == "/bin/busybox")] | length' <<<"$json")" -eq 2 ] ||
		fail "x.sh: $(jq -c 'del(.prev, .hash)' <<<"$json")"
	jq -se 'any(.[]; .script == "/tmp/y" and .argv == ["/bin/sh", "-e", "/tmp/y"])' <<<"$json" >/dev/null || fail "y: $json"
	# a script an interpreter reads is not exec'd: no script (the THREAT-MODEL's rule)
	! jq -se 'any(.[]; .script == "/tmp/read.sh")' <<<"$json" >/dev/null || fail "read.sh: $json"
	run ra audit --summary c1
	[ "$status" -eq 0 ] || fail "$output"
	assert_output_contains "  /tmp/x.sh (script, run by /bin/busybox) x2"
	assert_output_contains "  /tmp/y (script, run by /bin/busybox)"
}

@test "audit: argv0-spoof: a program in a workspace below /usr (WORKDIR /usr/src/app) is not listed by its bare name" {
	# --summary trusted a bare argv[0] whose file was anywhere below /usr: a workspace at
	# /usr/src/app (a common image layout) let the agent's own `git` be listed as "git"
	cat >"$BUNDLE/profile.json" <<-'JSON'
		{ "name": "agent-usr-src-app", "extends": "agent", "workspace": { "path": "/usr/src/app" } }
	JSON
	mkdir -p "$BUNDLE/app" "$ROOTFS/usr/src/app"
	update_config ".mounts += [{\"destination\": \"/usr/src/app\", \"type\": \"bind\", \"source\": \"$BUNDLE/app\", \"options\": [\"rbind\", \"rw\"]}]"
	set_cmd 'cp /usr/local/bin/try-syscall /usr/src/app/git && PATH=/usr/src/app:$PATH git x 2>/dev/null
		/usr/local/bin/try-syscall x 2>/dev/null; true'
	run rt --profile "$BUNDLE/profile.json" run --bundle "$BUNDLE" c1
	[ "$status" -eq 0 ] || fail "run: $output"
	for _ in $(seq 50); do
		[ "$(ra audit --format json --kind process c1 | jq -s '[.[] | select(.exe == "/usr/local/bin/try-syscall")] | length')" -ge 1 ] && break
		sleep 0.1
	done
	ra audit --format json --kind process c1 | jq -se 'any(.[]; .exe | tostring | endswith("/usr/src/app/git"))' >/dev/null ||
		fail "no record of the program: $(ra audit --format json --kind process c1)"
	run ra audit --summary c1
	[ "$status" -eq 0 ] || fail "$output"
	! grep -qx "  git" <<<"$output" || fail "listed by argv[0] alone: $output"
	assert_output_contains "  git (exe "
	# a program of a system bin directory by its plain name: as before
	assert_output_contains "  /usr/local/bin/try-syscall"$'\n'
}

@test "audit: loader-spoof: --summary names the program the dynamic loader ran" {
	# The loader run by itself maps and runs the program its arguments name; the kernel's exe
	# is the loader: `ld.so /tmp/tool` was listed as the loader alone.
	local ld=/lib64/ld-linux-x86-64.so.2 libc
	[ -e "$ld" ] || skip "no x86-64 glibc loader on this host"
	libc=$(ldd /usr/bin/true | awk '/libc.so/ { print $3 }')
	mkdir -p "$ROOTFS/lib64" "$ROOTFS$(dirname "$libc")"
	cp -L "$ld" "$ROOTFS/lib64/"
	cp -L "$libc" "$ROOTFS$libc"
	cp /usr/bin/true "$ROOTFS/bin/dyn-true"
	set_cmd "cp /bin/dyn-true /tmp/tool; $ld --inhibit-cache /tmp/tool x; echo rc=\$?"
	run ra run --bundle "$BUNDLE" c1
	[ "$status" -eq 0 ] || fail "run: $output"
	assert_output_contains "rc=0"
	run ra audit --summary c1
	[ "$status" -eq 0 ] || fail "$output"
	assert_output_contains "  /tmp/tool (run by the loader "
	! grep -q "^  $ld" <<<"$output" || fail "the loader alone: $output"
}

@test "audit: two containers at once, each record attributed to its own container" {
	set_cmd 'for i in 1 2 3; do /bin/echo only-c1 >/workspace/c1-$i; done; sleep 1'
	run_detached c1
	[ "$status" -eq 0 ] || fail "c1: $output"
	set_cmd 'for i in 1 2 3; do /bin/echo only-c2 >/workspace/c2-$i; done; sleep 1'
	run_detached c2
	[ "$status" -eq 0 ] || fail "c2: $output"
	wait_stopped c1
	wait_stopped c2
	rt delete c1
	rt delete c2
	for pair in "c1 c2" "c2 c1"; do
		set -- $pair
		# each echo by its argv, or, reaped before the monitor read it on a loaded host, as a
		# program gone with no argv left (in this container's trail all the same)
		[ "$(records "$1" "select(.kind == \"process\" and (.argv[1] == \"only-$1\" or
			(.gone == true and ((.argv // []) | length) == 0))) | .pid" | wc -l)" -eq 3 ] ||
			fail "$1: own programs: $(records "$1" "select(.kind != \"file\") | [.seq, .kind, .pid, .argv, .gone, .exe, .exec_opened, .source, .error, .coalesced] | tostring")"
		[ -z "$(records "$1" "select(.kind == \"process\" and .argv[1] == \"only-$2\")")" ] ||
			fail "$1 has $2's programs"
		[ "$(records "$1" "select(.kind == \"file\") | .path" | grep -c "/workspace/$1-")" -eq 3 ]
		[ -z "$(records "$1" "select(.kind == \"file\") | .path" | grep "/workspace/$2-")" ]
	done
}

@test "audit: verify detects a modified, a deleted and a removed last record" {
	set_cmd '/bin/echo x >/workspace/f; true'
	run ra run --bundle "$BUNDLE" c1
	[ "$status" -eq 0 ]
	dir=$(trail_dir c1)
	file=$(ls "$dir"/*.jsonl | head -1)
	cp "$file" "$BUNDLE/orig"
	run ra audit verify c1
	[ "$status" -eq 0 ] || fail "clean trail: $output"
	# modified line 3
	sed -i '3s/"kind":"start"/"kind":"strat"/' "$file"
	run ra audit verify c1
	[ "$status" -ne 0 ] || fail "modified record not detected"
	assert_output_contains "seq 3"
	# deleted line 2
	cp "$BUNDLE/orig" "$file"
	sed -i '2d' "$file"
	run ra audit verify c1
	[ "$status" -ne 0 ] || fail "deleted record not detected"
	assert_output_contains "seq 2"
	# deleted last line
	cp "$BUNDLE/orig" "$file"
	sed -i '$d' "$file"
	run ra audit verify c1
	[ "$status" -ne 0 ] || fail "deleted last record not detected"
	# the last record cut short, then the file emptied: named, not an error without words
	cp "$BUNDLE/orig" "$file"
	truncate -s -1 "$file"
	run ra audit verify c1
	[ "$status" -ne 0 ] || fail "a cut record not detected"
	assert_output_contains "first bad record: seq "
	assert_output_contains "ends with a partial record"
	: >"$file"
	run ra audit verify c1
	[ "$status" -ne 0 ] || fail "an emptied file not detected"
	assert_output_contains "is empty"
	cp "$BUNDLE/orig" "$file"
	run ra audit verify c1
	[ "$status" -eq 0 ]
}

@test "audit: verify-tamper: a reordered record, a removed file (the first, a middle one, the last), an emptied trail and a replaced head are each named" {
	# 128 KiB: files of 32 KiB; execs of 1 KiB of arguments (each an exec and a process
	# record) until there are three files, before retention (past 96 KiB) drops any
	cat >"$BUNDLE/profile.json" <<-'JSON'
		{ "name": "audit-tamper", "extends": "agent", "audit": { "maxSize": "128k" } }
	JSON
	set_args sleep 100
	AGENTRT_PROFILE=$BUNDLE/profile.json run_detached c1
	[ "$status" -eq 0 ] || fail "run: $output"
	dir=$(trail_dir c1)
	arg=$(head -c 1024 /dev/zero | tr '\0' x)
	for i in $(seq 300); do
		[ "$(ls "$dir" | grep -c 'jsonl$')" -lt 3 ] || break
		rt exec c1 /bin/true "$i" "$arg" || fail "exec $i"
	done
	rt delete --force c1
	mapfile -t files < <(ls "$dir"/*.jsonl)
	[ "${#files[@]}" -ge 3 ] || fail "want 3 files: $(ls -l "$dir")"
	cp -a "$dir" "$BUNDLE/orig"
	restore() { rm -rf "$dir" && cp -a "$BUNDLE/orig" "$dir"; }
	run ra audit verify c1
	[ "$status" -eq 0 ] || fail "clean trail: $output"
	[[ "$output" != *"dropped by retention"* ]] || fail "retention dropped records: $output"
	# two records swapped
	sed -i '2{h;d};3{G}' "${files[0]}"
	run ra audit verify c1
	[ "$status" -ne 0 ] || fail "reordered records not detected: $output"
	assert_output_contains "first bad record: seq 2"
	# the first file removed: not retention's doing (it never removes it)
	restore
	rm "${files[0]}"
	run ra audit verify c1
	[ "$status" -ne 0 ] || fail "first file removed, not detected: $output"
	assert_output_contains "first bad record: seq 1"
	# a middle file removed
	restore
	rm "${files[1]}"
	mid=$(head -1 "$BUNDLE/orig/$(basename "${files[1]}")" | jq .seq)
	run ra audit verify c1
	[ "$status" -ne 0 ] || fail "middle file removed, not detected: $output"
	assert_output_contains "first bad record: seq $mid"
	# the last file removed
	restore
	last=${files[${#files[@]} - 1]}
	rm "$last"
	run ra audit verify c1
	[ "$status" -ne 0 ] || fail "last file removed, not detected: $output"
	assert_output_contains "first bad record: seq $(head -1 "$BUNDLE/orig/$(basename "$last")" | jq .seq)"
	# every file removed and the head emptied: no trail is a trail of no records
	restore
	rm "$dir"/*.jsonl
	: >"$dir/head"
	run ra audit verify c1
	[ "$status" -ne 0 ] || fail "emptied trail not detected: $output"
	assert_output_contains "first bad record: seq 1"
	# the head replaced by another trail's (same length, another chain)
	restore
	set_cmd 'true'
	run ra run --bundle "$BUNDLE" c2
	[ "$status" -eq 0 ] || fail "run c2: $output"
	cp "$(trail_dir c2)/head" "$dir/head"
	run ra audit verify c1
	[ "$status" -ne 0 ] || fail "replaced head not detected: $output"
	assert_output_contains "first bad record: seq "
	# the head's hash edited
	restore
	c=$(cut -c22 "$dir/head")
	[ "$c" = a ] && c=b || c=a
	sed -i "s/^\([0-9]* \)./\1$c/" "$dir/head"
	! cmp -s "$dir/head" "$BUNDLE/orig/head" || fail "head not edited"
	run ra audit verify c1
	[ "$status" -ne 0 ] || fail "edited head not detected: $output"
	assert_output_contains "is not the one the head records"
	restore
	run ra audit verify c1
	[ "$status" -eq 0 ] || fail "restored trail: $output"
}

@test "audit: a process inside cannot see or reach the trail or the monitor" {
	set_args sleep 100
	create_container c1
	[ "$status" -eq 0 ] || fail "create: $output"
	rt start c1
	mon=$(cut -d' ' -f1 "$TEST_ROOT/c1/monitor.pid")
	[ "$(cat /proc/"$mon"/comm)" = agentrt-monitor ]
	# the monitor holds no stdio of the runtime (containerd's shim waits for their EOF) and
	# lives outside the container's namespaces and cgroup
	for fd in 0 1 2; do [ "$(readlink /proc/"$mon"/fd/$fd)" = /dev/null ]; done
	cpid=$(container_pid c1)
	[ "$(readlink /proc/"$mon"/ns/pid)" != "$(readlink /proc/"$cpid"/ns/pid)" ]
	[ "$(readlink /proc/"$mon"/ns/mnt)" != "$(readlink /proc/"$cpid"/ns/mnt)" ]
	! grep -qx "$mon" <(rt ps c1 -f json 2>/dev/null | jq -r '.[]' 2>/dev/null)
	run rt exec c1 sh -c "
		test -e '$TEST_ROOT' && echo SEES-ROOT
		test -e '$(trail_dir c1)' && echo SEES-TRAIL
		test -e /proc/$mon/cmdline && grep -q agentrt /proc/$mon/cmdline 2>/dev/null && echo SEES-MONITOR
		for p in /proc/[0-9]*; do grep -qs agentrt-monitor \$p/comm && echo SEES-MONITOR-COMM; done
		echo tamper >>'$(trail_dir c1)/head' 2>/dev/null && echo WROTE
		true"
	[ "$status" -eq 0 ] || fail "exec: $output"
	! grep -q 'SEES\|WROTE' <<<"$output" || fail "reachable from inside: $output"
	rt delete --force c1
	run ra audit verify c1
	[ "$status" -eq 0 ] || fail "verify after the attempts: $output"
}

@test "audit: the trail survives delete; --purge removes it" {
	set_args true
	run ra run --bundle "$BUNDLE" c1
	[ "$status" -eq 0 ]
	[ ! -e "$TEST_ROOT/c1" ]
	run ra audit c1
	[ "$status" -eq 0 ]
	[ "$(tail -1 <<<"$output" | jq -r .kind)" = delete ]
	# --purge is refused while the container exists
	set_args sleep 100
	create_container c2
	run ra audit --purge c2
	[ "$status" -ne 0 ]
	assert_output_contains "delete it first"
	rt delete --force c2
	run ra audit --purge c1
	[ "$status" -eq 0 ] || fail "purge: $output"
	[ ! -e "$(trail_dir c1)" ]
	run ra audit c1
	[ "$status" -ne 0 ]
	assert_output_contains "no audit trail"
}

@test "audit: pause, resume, exec and kill are recorded by the CLI" {
	set_args sleep 100
	create_container c1
	rt start c1
	rt pause c1
	rt resume c1
	rt exec c1 /bin/echo from-exec
	rt kill c1 KILL
	wait_stopped c1
	rt delete c1
	kinds=$(records c1 '.kind' | jq -r . | grep -vE '^(process|file|denied|dns|flow)$' | tr '\n' ' ')
	[ "$kinds" = "create monitor start pause resume exec kill exit delete " ] || fail "$kinds"
	[ "$(records c1 'select(.kind == "exec") | .argv[1]' | jq -r .)" = from-exec ]
	[ "$(records c1 'select(.kind == "kill") | .signal')" = 9 ]
	[ "$(records c1 'select(.kind == "exit") | .signal')" = 9 ]
}

@test "audit: the oci profile keeps no trail and starts no monitor" {
	set_args true
	run rt --profile oci run --bundle "$BUNDLE" c1
	[ "$status" -eq 0 ]
	[ ! -e "$(trail_dir c1)" ]
}

# c1 created to run `sleep 100`, with a route out of its own network namespace (a veth pair
# in there: nothing on the host changes); pid is its init's
created_with_route() {
	set_args sleep 100
	create_container c1
	[ "$status" -eq 0 ] || fail "create: $output"
	pid=$(container_pid c1)
	nsenter -t "$pid" -n sh -c 'ip link add va type veth peer name vb &&
		ip addr add 198.51.100.2/24 dev va && ip link set va up && ip link set vb up' ||
		skip "cannot make a veth pair"
}

@test "audit: egress decisions: a refused name and a denied connection" {
	"$AGENTRT" --help 2>&1 | grep -q '^  egress' || skip "no egress allowlist in this build"
	requires nsenter ip
	created_with_route
	rt start c1
	rt exec c1 sh -c 'nslookup refused.example.com 127.0.0.1; nc -w 1 198.51.100.7 80 </dev/null; true' || true
	sleep 1.5 # denied packets are coalesced for a second
	rt delete --force c1
	records c1 'select(.kind == "dns" and .name == "refused.example.com") | .verdict' | grep -qx '"refused"' ||
		fail "dns: $(records c1 'select(.kind == "dns")')"
	[ "$(records c1 'select(.kind == "denied" and .dst == "198.51.100.7") | .port')" = 80 ] ||
		fail "denied: $(records c1 'select(.kind == "denied")')"
	run ra audit --summary c1
	assert_output_contains "refused.example.com"
	assert_output_contains "198.51.100.7:80/tcp"
}

# The monitor's NFLOG socket is in the container's network namespace, where /proc/net/netlink
# lists its port: a process there with CAP_NET_ADMIN (a profile that grants it) could unicast a
# packet message of its own making, and the monitor took it as the kernel's (nflog-forged)
@test "audit: escape: nflog-forged: a packet message sent to the monitor's NFLOG port by a process, not the kernel, is not recorded" {
	"$AGENTRT" --help 2>&1 | grep -q '^  egress' || skip "no egress allowlist in this build"
	requires nsenter python3 ip
	created_with_route
	rt start c1
	# from the container's network namespace (host root: CAP_NET_ADMIN over it), a "denied"
	# packet to 192.0.2.99:4444 to every NETLINK_NETFILTER port but the kernel's
	run nsenter -t "$pid" -n python3 -c '
import socket, struct
ports = [int(l.split()[2]) for l in open("/proc/net/netlink").read().splitlines()[1:]
         if l.split()[1] == "12" and l.split()[2] != "0"]
ip = bytes([0x45, 0, 0, 40, 0, 1, 0, 0, 64, 6, 0, 0, 10, 0, 0, 2, 192, 0, 2, 99])
tcp = struct.pack(">HHIIBBHHH", 40000, 4444, 1, 0, 0x50, 0x02, 512, 0, 0)
def attr(t, v):
    a = struct.pack("=HH", 4 + len(v), t) + v
    return a + b"\0" * (-len(a) % 4)
body = struct.pack("=BBH", 2, 0, socket.htons(0)) + attr(10, b"agentrt-deny: \0") + attr(9, ip + tcp)
msg = struct.pack("=IHHII", 16 + len(body), 4 << 8, 0, 0, 0) + body
s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 12)
sent = 0
for p in ports:
    try:
        s.sendto(msg, (p, 0)); sent += 1
    except OSError:
        pass
print("ports", ports, "sent", sent)'
	[ "$status" -eq 0 ] && [[ "$output" != *"sent 0"* ]] || fail "nothing sent: $output"
	# a real denied packet after it: the monitor reads its socket
	rt exec c1 sh -c 'nc -w 1 198.51.100.7 80 </dev/null; true' || true
	sleep 1.5 # denied packets are coalesced for a second
	rt delete --force c1
	[ -z "$(records c1 'select(.dst == "192.0.2.99")')" ] ||
		fail "the forged packet is in the trail: $(records c1 'select(.dst == "192.0.2.99")')"
	[ "$(records c1 'select(.kind == "denied" and .dst == "198.51.100.7") | .port')" = 80 ] ||
		fail "the kernel's packet is not: $(records c1 'select(.kind == "denied")')"
	ra audit verify c1 || fail "chain"
}

@test "audit: allowed connections are counted as flows, denied ones are not" {
	"$AGENTRT" --help 2>&1 | grep -q '^  egress' || skip "no egress allowlist in this build"
	requires ip nsenter socat dnsmasq busybox
	FN_CTR=agentrt-t-aud-ctr-$$ FN_INET=agentrt-t-aud-inet-$$ FN_HOST=agentrt-t-aud-host-$$
	fake_internet_up || fail "fake internet did not come up"
	cat >"$BUNDLE/profile.json" <<-'EOF'
		{ "name": "audit-flows", "extends": "agent",
		  "egress": { "allow": ["allowed.test"], "dns": { "upstream": ["192.0.2.53"] } } }
	EOF
	update_config ".process.args = [\"sleep\", \"100\"] |
		.linux.namespaces |= map(if .type == \"network\" then .path = \"/var/run/netns/$FN_CTR\" else . end)"
	echo "nameserver 192.0.2.53" >"$ROOTFS/etc/resolv.conf"
	timeout --kill-after=5 "$RT_TIMEOUT" nsenter --net="/run/netns/$FN_HOST" \
		"$AGENTRT" --root "$TEST_ROOT" --profile "$BUNDLE/profile.json" run -d --bundle "$BUNDLE" c1 \
		</dev/null >"$BUNDLE/c1.out" 2>"$BUNDLE/c1.err" || fail "run -d: $(cat "$BUNDLE/c1.err")"
	# exactly three TCP connections to allowed.test:80, then one denied attempt
	run rt exec c1 sh -c 'for i in 1 2 3; do nc -w 2 allowed.test 80 </dev/null; done
		nc -w 1 198.51.100.20 80 </dev/null; true'
	[ "$(grep -c hello <<<"$output")" -eq 3 ] || fail "connections: $output"
	rt delete --force c1
	flows=$(records c1 'select(.kind == "flow")')
	[ "$(jq -r '"\(.dst):\(.port)/\(.proto)"' <<<"$flows" | sort -u)" = 203.0.113.10:80/tcp ] ||
		fail "flows to something else: $flows"
	[ "$(jq -s 'map(.count) | add' <<<"$flows")" -eq 3 ] || fail "flow counts: $flows"
	# the denied attempt is denied, not a flow; DNS to the resolver is no flow either
	[ "$(records c1 'select(.kind == "denied" and .dst == "198.51.100.20") | .port')" = 80 ] ||
		fail "denied: $(records c1 'select(.kind == "denied")')"
	run ra audit --kind flow --format text c1
	grep -q ' flow .*dst=203.0.113.10' <<<"$output" || fail "text: $output"
	run ra audit --summary c1
	assert_output_contains "203.0.113.10:80/tcp (allowed.test) x3"
	assert_output_contains "198.51.100.20:80/tcp (packet)"
	ra audit verify c1 || fail "chain"
}

@test "audit: a fork refused at the pids limit is recorded" {
	update_config '.linux.resources.pids = {"limit": 4}'
	set_cmd 'for i in 1 2 3 4 5 6 7 8; do sleep 1 & done; wait; true'
	run ra run --bundle "$BUNDLE" c1
	run records c1 'select(.kind == "pids_limit") | .total'
	[ -n "$output" ] && [ "$(tail -n1 <<<"$output")" -ge 1 ] || fail "no pids_limit record: $output"
	ra audit verify c1 || fail "chain"
}

# run-exit-refusals: a program the profile refused says only "Operation not permitted" or
# "ENOTFOUND", never why; only `agentrt audit` named the refusals.  A foreground `run` whose
# stderr is a terminal (a person watching: no engine) ends with one line naming them.
@test "audit: run-exit-refusals: a foreground run on a terminal ends with one line naming the calls the profile refused" {
	requires script
	set_cmd 'try-syscall bpf; try-syscall unshare-user; try-syscall bpf
		p=$(printf "/tmp/t\033[2Jx"); cp /usr/local/bin/try-syscall "$p"; "$p" keyctl; true'
	run script -qec "timeout 30 '$AGENTRT' --root '$TEST_ROOT' --profile agent run --bundle '$BUNDLE' c1" /dev/null
	[ "$status" -eq 0 ] || fail "run: $output"
	output=${output//$'\r'/}
	# a name is shown escaped, as --summary shows it: no escape sequence reaches the terminal
	[[ "$output" == *'keyctl (/tmp/t\x1b[2Jx)'* ]] || fail "escaped name: $(cat -v <<<"$output")"
	[[ "$output" != *$'\033'* ]] || fail "a raw ESC: $(cat -v <<<"$output")"
	[ "$(grep -c '^agentrt: run `c1`' <<<"$output")" -eq 1 ] || fail "no one exit line: $output"
	grep -q '^agentrt: run `c1`: the profile'"'"'s seccomp filter refused .*bpf (/usr/local/bin/try-syscall)' <<<"$output" ||
		fail "bpf: $output"
	grep -q '^agentrt: run `c1`: .*unshare (/usr/local/bin/try-syscall).*agentrt audit c1 --summary' <<<"$output" ||
		fail "unshare: $output"
	# the same run again under its name (its trail goes on): only this run's refusals
	set_cmd 'try-syscall add_key; true'
	run script -qec "timeout 30 '$AGENTRT' --root '$TEST_ROOT' --profile agent run --bundle '$BUNDLE' c1" /dev/null
	output=${output//$'\r'/}
	grep -q '^agentrt: run `c1`: .*refused add_key (/usr/local/bin/try-syscall)' <<<"$output" || fail "again: $output"
	[[ "$output" != *bpf* ]] || fail "the earlier run's refusals: $output"
	# opted out, or stderr no terminal (an engine, a script): no line
	run script -qec "timeout 30 '$AGENTRT' --root '$TEST_ROOT' --profile agent run --no-exit-summary --bundle '$BUNDLE' c1" /dev/null
	[ "$status" -eq 0 ] || fail "--no-exit-summary: $output"
	[[ "$output" != *"agentrt: run"* ]] || fail "--no-exit-summary: $output"
	run ra run --bundle "$BUNDLE" c1
	[ "$status" -eq 0 ] || fail "no terminal: $output"
	[[ "$output" != *"agentrt: run"* ]] || fail "no terminal: $output"
	# nothing refused: no line
	set_cmd 'true'
	run script -qec "timeout 30 '$AGENTRT' --root '$TEST_ROOT' --profile agent run --bundle '$BUNDLE' c1" /dev/null
	[ "$status" -eq 0 ] || fail "clean: $output"
	[[ "$output" != *"agentrt: run"* ]] || fail "clean run: $output"
}

# recorded: exec-paths: the ways to run a program that leave no path or another name behind:
# execveat(AT_EMPTY_PATH) of a memfd, an exec from a second thread (the program gets the
# leader's pid), vfork, a comm set to "git" (PR_SET_NAME) before the exec, and a binary
# deleted before it is run through /proc/self/fd.  Each is a record naming the file that ran.
@test "audit: recorded: exec-paths: memfd, exec from a thread, vfork, a renamed comm and a deleted binary run by its fd are named by the file that ran" {
	set_cmd 'cp /usr/local/bin/try-syscall /tmp/tool
		execvia memfd /tmp/tool memfd-argv0 x; execvia thread /tmp/tool thread-argv0 x
		execvia vfork /tmp/tool vfork-argv0 x; execvia comm /tmp/tool comm-argv0 x
		exec 3</tmp/tool; rm /tmp/tool; /proc/self/fd/3 deleted x; true'
	run ra run --bundle "$BUNDLE" c1
	[ "$status" -eq 0 ] || fail "run: $output"
	local json
	for _ in $(seq 50); do
		json=$(ra audit --format json --kind process c1)
		[ "$(jq -s '[.[] | select(.argv[1] == "x")] | length' <<<"$json")" -eq 5 ] && break
		sleep 0.1
	done
	jq -se 'any(.[]; .exe == "/memfd:innocent (deleted)" and .argv == ["memfd-argv0", "x"])' <<<"$json" >/dev/null ||
		fail "memfd: $json"
	# the thread's exec: under the pid of the execvia that made the thread
	jq -se '(map(select(.argv[1] == "thread"))[0].pid) as $p |
		any(.[]; .exe == "/tmp/tool" and .argv == ["thread-argv0", "x"] and .pid == $p)' <<<"$json" >/dev/null ||
		fail "thread: $json"
	jq -se '(map(select(.argv[1] == "vfork"))[0].pid) as $p |
		any(.[]; .exe == "/tmp/tool" and .argv == ["vfork-argv0", "x"] and .ppid == $p)' <<<"$json" >/dev/null ||
		fail "vfork: $json"
	jq -se 'any(.[]; .exe == "/tmp/tool" and .argv == ["comm-argv0", "x"])' <<<"$json" >/dev/null || fail "comm: $json"
	jq -se 'any(.[]; .exe == "/tmp/tool (deleted)" and .argv == ["/proc/self/fd/3", "deleted", "x"])' <<<"$json" >/dev/null ||
		fail "deleted: $json"
	run ra audit --summary c1
	[ "$status" -eq 0 ] || fail "$output"
	assert_output_contains "  memfd-argv0 (exe /memfd:innocent (deleted))"
	assert_output_contains "  comm-argv0 (exe /tmp/tool)"
	assert_output_contains "  /proc/self/fd/3 (exe /tmp/tool (deleted))"
	! grep -q '^  git' <<<"$output" || fail "listed by comm: $output"
	ra audit verify c1 || fail "chain"
}

@test "audit: run-exit-refusals: the exit line names the names and addresses the egress allowlist refused" {
	"$AGENTRT" --help 2>&1 | grep -q '^  egress' || skip "no egress allowlist in this build"
	requires ip nsenter socat dnsmasq busybox script
	FN_CTR=agentrt-t-aud-ctr-$$ FN_INET=agentrt-t-aud-inet-$$ FN_HOST=agentrt-t-aud-host-$$
	fake_internet_up || fail "fake internet did not come up"
	cat >"$BUNDLE/profile.json" <<-'EOF'
		{ "name": "audit-exit-line", "extends": "agent",
		  "egress": { "allow": ["allowed.test"], "dns": { "upstream": ["192.0.2.53"] } } }
	EOF
	update_config ".linux.namespaces |= map(if .type == \"network\" then .path = \"/var/run/netns/$FN_CTR\" else . end)"
	echo "nameserver 192.0.2.53" >"$ROOTFS/etc/resolv.conf"
	# denied packets reach the monitor through NFLOG: a second for them before the exit
	set_cmd 'nc -w 2 allowed.test 80 </dev/null; nslookup refused.test >/dev/null 2>&1
		nc -w 1 198.51.100.20 80 </dev/null; sleep 1; true'
	run script -qec "nsenter --net=/run/netns/$FN_HOST timeout 30 '$AGENTRT' --root '$TEST_ROOT' --profile '$BUNDLE/profile.json' run --bundle '$BUNDLE' c1" /dev/null
	[ "$status" -eq 0 ] || fail "run: $output"
	output=${output//$'\r'/}
	assert_output_contains hello
	grep -q '^agentrt: run `c1`: the egress allowlist refused .*refused.test' <<<"$output" || fail "name: $output"
	grep -q '^agentrt: run `c1`: .*198.51.100.20:80/tcp (agentrt audit c1 --summary)$' <<<"$output" || fail "address: $output"
	[[ "$output" != *"refused"*"allowed.test"* ]] || fail "an allowed name: $output"
	[ "$(grep -c '^agentrt: run' <<<"$output")" -eq 1 ] || fail "one line: $output"
}
