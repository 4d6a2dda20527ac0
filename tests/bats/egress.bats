#!/usr/bin/env bats
# egress.bats - the egress allowlist end to end through the agentrt CLI (issue 6,
# SECURITY.md H17/H18): every check runs from INSIDE a container made by `agentrt run -d`
# under the agent profile, against a fake internet built here.
#
# Three network namespaces (TEST-NET addresses only, no route off the machine, nothing
# added to the host's own netns):
#   agentrt-t-ctr-N   the container's (joined by path in config.json, as a pod's would be)
#                     c0 192.0.2.2/30, default route via 192.0.2.1
#   agentrt-t-inet-N  the internet: 203.0.113.10 (:80, :443), 198.51.100.20 (:80),
#                     169.254.169.254 (:80, metadata canary), dnsmasq upstream 192.0.2.53
#                     (allowed.test, denied.test, rebind.test -> 10.0.0.1), a rogue
#                     resolver 192.0.2.99 that answers everything and logs it
#   agentrt-t-host-N  plays the host: agentrt runs in it (nsenter --net), so the egress
#                     helper's upstream socket reaches 192.0.2.53 via h0 192.0.2.6/30
# The servers are started once per file (PIDs in $EGT_DIR/pids, killed in teardown_file);
# each test makes and deletes its own container.  The rootfs gets Debian's nft binary and
# its libraries so that a rule change can be tried from inside.

load helpers

# ---------------------------------------------------------------- the fake internet

egt_ns() { ip netns exec "$@"; }

egt_bg() { # NS CMD...: a server in NS, its PID (ip execs CMD) kept for teardown_file
	local ns=$1
	shift
	ip netns exec "$ns" "$@" </dev/null >/dev/null 2>>"$EGT_DIR/servers.err" &
	echo $! >>"$EGT_DIR/pids"
}

egt_network() {
	# 169.254.169.254 would go on a dummy interface (H17); this kernel has no dummy
	# driver, and lo delivers locally just the same
	fake_links "$EGT_CTR" "$EGT_INET" "$EGT_HOST" \
		203.0.113.10 198.51.100.20 192.0.2.53 192.0.2.99 169.254.169.254
}

egt_servers() {
	local l
	for l in 203.0.113.10:80:allowed-80 203.0.113.10:443:allowed-443 \
		198.51.100.20:80:denied-80 169.254.169.254:80:metadata; do
		IFS=: read -r addr port word <<<"$l"
		egt_bg "$EGT_INET" socat "TCP-LISTEN:$port,bind=$addr,fork,reuseaddr" \
			SYSTEM:"echo hello-$word"
	done
	cat >"$EGT_DIR/upstream.conf" <<-EOF
		no-resolv
		no-hosts
		bind-interfaces
		listen-address=192.0.2.53
		port=53
		local=/test/
		local-ttl=300
		host-record=allowed.test,203.0.113.10
		host-record=denied.test,198.51.100.20
		host-record=rebind.test,10.0.0.1
		log-queries
		log-facility=$EGT_DIR/upstream.log
	EOF
	cat >"$EGT_DIR/rogue.conf" <<-EOF
		no-resolv
		no-hosts
		bind-interfaces
		listen-address=192.0.2.99
		port=53
		address=/#/198.51.100.99
		log-queries
		log-facility=$EGT_DIR/rogue.log
	EOF
	egt_bg "$EGT_INET" dnsmasq -k -C "$EGT_DIR/upstream.conf" --pid-file= --user=root
	egt_bg "$EGT_INET" dnsmasq -k -C "$EGT_DIR/rogue.conf" --pid-file= --user=root
	for _ in $(seq 50); do
		egt_ns "$EGT_INET" busybox nslookup allowed.test 192.0.2.53 >/dev/null 2>&1 &&
			egt_ns "$EGT_INET" busybox nc -w 1 203.0.113.10 80 </dev/null 2>/dev/null | grep -q hello &&
			return 0
		sleep 0.1
	done
	return 1
}

# The test rootfs plus Debian's nft and the libraries it loads.
egt_rootfs() {
	local lib
	cp -a "$TEST_ROOTFS" "$EGT_DIR/rootfs" || return 1
	mkdir -p "$EGT_DIR/rootfs/usr/sbin" "$EGT_DIR/rootfs/lib64" "$EGT_DIR/rootfs/lib/x86_64-linux-gnu"
	cp -L "$(command -v nft)" "$EGT_DIR/rootfs/usr/sbin/nft" || return 1
	for lib in $(ldd "$(command -v nft)" | awk '$3 ~ /^\// {print $3} $1 ~ /^\// {print $1}'); do
		mkdir -p "$EGT_DIR/rootfs$(dirname "$lib")"
		cp -L "$lib" "$EGT_DIR/rootfs$lib" || return 1
	done
}

setup_file() {
	[ "$(id -u)" -eq 0 ] || skip "needs root"
	for t in ip nsenter socat dnsmasq nft busybox ldd; do
		command -v "$t" >/dev/null || skip "needs $t (apt-get install dnsmasq-base socat nftables)"
	done
	ensure_rootfs
	export EGT_TAG=$$
	export EGT_CTR=agentrt-t-ctr-$EGT_TAG EGT_INET=agentrt-t-inet-$EGT_TAG EGT_HOST=agentrt-t-host-$EGT_TAG
	export EGT_DIR
	EGT_DIR=$(mktemp -d /tmp/agentrt-egress-bats.XXXXXX)
	chmod 0755 "$EGT_DIR"
	: >"$EGT_DIR/pids"
	egt_network || fail "fake internet: namespaces and links"
	egt_servers || fail "fake internet: servers did not come up ($(cat "$EGT_DIR/servers.err"))"
	egt_rootfs || fail "rootfs with nft"
	export TEST_ROOTFS=$EGT_DIR/rootfs
	export EGT_PROFILE=$EGT_DIR/egress-test.json
	cat >"$EGT_PROFILE" <<-'EOF'
		{
		  "name": "egress-test",
		  "extends": "agent",
		  "egress": {
		    "allow": ["allowed.test", "rebind.test", "203.0.113.10:443/tcp"],
		    "dns": {"upstream": ["192.0.2.53"]}
		  }
		}
	EOF
}

teardown_file() {
	local pid
	if [ -n "${EGT_DIR:-}" ] && [ -f "$EGT_DIR/pids" ]; then
		for pid in $(cat "$EGT_DIR/pids"); do kill "$pid" 2>/dev/null; done
		for pid in $(cat "$EGT_DIR/pids"); do
			for _ in $(seq 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
			kill -9 "$pid" 2>/dev/null
		done
	fi
	for ns in "${EGT_CTR:-}" "${EGT_INET:-}" "${EGT_HOST:-}"; do
		[ -n "$ns" ] && ip netns delete "$ns" 2>/dev/null
	done
	[ -n "${EGT_DIR:-}" ] && rm -rf "$EGT_DIR"
	# the helpers' teardown_file: the --root must be empty
	local left=
	if [ -d "$TEST_ROOT" ]; then
		left=$(root_leftovers "$TEST_ROOT")
		rm -rf --one-file-system "$TEST_ROOT"
	fi
	remove_data_dir
	for ctrl in /sys/fs/cgroup/*/ /sys/fs/cgroup/; do
		[ -d "$ctrl$CG_PARENT" ] && rmdir "$ctrl$CG_PARENT"/*/ "$ctrl$CG_PARENT" 2>/dev/null
	done
	! ip netns list | grep -q "agentrt-t-[a-z]*-${EGT_TAG:-none}\b" || fail "test namespaces left"
	[ -z "$left" ] || fail "left in $TEST_ROOT: $left"
}

# ---------------------------------------------------------------- per test

setup() {
	setup_bundle
	ID=eg-$BATS_TEST_NUMBER
	update_config ".process.args = [\"sleep\", \"600\"] |
		.linux.namespaces |= map(if .type == \"network\" then .path = \"/var/run/netns/$EGT_CTR\" else . end)"
	# the resolver the container believes in is the rogue one: redirected all the same
	echo "nameserver 192.0.2.99" >"$ROOTFS/etc/resolv.conf"
}

teardown() {
	local r=0
	teardown_bundle || r=1
	# a failed test must not leave rules for the next one
	if egt_ns "$EGT_CTR" nft list tables 2>/dev/null | grep -q agentrt; then
		egt_ns "$EGT_CTR" nft delete table inet agentrt
		echo "teardown: table inet agentrt left in $EGT_CTR" >&2
		r=1
	fi
	return $r
}

# egress_run [--profile P]: run -d $ID from $BUNDLE, the runtime inside the host-role netns
egress_run() {
	local profile=$EGT_PROFILE
	[ "${1:-}" = --profile ] && profile=$2
	status=0
	timeout --kill-after=5 "$RT_TIMEOUT" nsenter --net="/run/netns/$EGT_HOST" \
		"$AGENTRT" --root "$TEST_ROOT" --profile "$profile" run -d --bundle "$BUNDLE" "$ID" \
		</dev/null >"$BUNDLE/$ID.out" 2>"$BUNDLE/$ID.err" || status=$?
	output=$(cat "$BUNDLE/$ID.err")
	[ "$status" -eq 0 ] || fail "run -d: $output"
}

in_ctr() { rt exec "$ID" "$@"; }

# connect HOST PORT: busybox nc from inside; prints what the server said or nc's error
connect() { in_ctr sh -c "nc -w 2 $1 $2 </dev/null 2>&1"; }

# refused_fast HOST PORT: nc is refused (TCP reset), timed inside with busybox time
# (10 ms resolution: date has no %N here); sets $ELAPSED (seconds)
refused_fast() {
	local out
	out=$(in_ctr sh -c "time -p nc -w 3 $1 $2 </dev/null" 2>&1) || true
	grep -q 'Connection refused' <<<"$out" || fail "$1:$2 not refused: $out"
	ELAPSED=$(awk '$1 == "real" {print $2}' <<<"$out")
	[ -n "$ELAPSED" ] || fail "no time in: $out"
	awk -v t="$ELAPSED" 'BEGIN {exit !(t < 2)}' || fail "$1:$2 refused only after ${ELAPSED}s"
}

# helper_running PID: PID is an agentrt-monitor process (the helper that runs the resolver,
# pgrep) that has not exited (a zombie waiting for this machine's PID 1 to reap it is gone for our purpose)
helper_running() {
	local st
	pgrep -x agentrt-monitor | grep -qx "$1" || return 1
	st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)
	[ -n "$st" ] && [ "$st" != Z ]
}

queries_in() { # LOG NAME: how many queries for NAME the dnsmasq LOG holds
	grep -c "query\[.*\] $2 from" "$1" 2>/dev/null || true
}

# ---------------------------------------------------------------- tests

@test "egress: baseline, the fake internet is reachable without a policy" {
	for hp in "203.0.113.10 80" "203.0.113.10 443" "198.51.100.20 80" "169.254.169.254 80"; do
		run egt_ns "$EGT_CTR" busybox nc -w 2 $hp </dev/null
		[[ "$output" == hello-* ]] || fail "baseline $hp: $output"
	done
	run egt_ns "$EGT_CTR" busybox nslookup denied.test 192.0.2.53
	[[ "$output" == *198.51.100.20* ]] || fail "upstream: $output"
	run egt_ns "$EGT_CTR" busybox nslookup anything.test 192.0.2.99
	[[ "$output" == *198.51.100.99* ]] || fail "rogue resolver: $output"
	[ -z "$(egt_ns "$EGT_CTR" nft list ruleset)" ]
	# the rogue log starts empty for the tests below
	: >"$EGT_DIR/rogue.log"
}

@test "egress: an allowed domain resolves, connects, and is listed as pinned" {
	egress_run
	run in_ctr nslookup allowed.test
	[ "$status" -eq 0 ] || fail "$output"
	[[ "$output" == *"Address: 203.0.113.10"* ]] || fail "$output"
	run connect 203.0.113.10 80
	[ "$output" = hello-allowed-80 ] || fail "$output"
	run rt egress "$ID" list
	[ "$status" -eq 0 ] || fail "$output"
	grep -qx "default deny" <<<"$output" || fail "$output"
	grep -qx "allow allowed.test" <<<"$output" || fail "$output"
	grep -qx "allow 203.0.113.10:443/tcp" <<<"$output" || fail "$output"
	grep -q "^pinned 203.0.113.10 expires" <<<"$output" || fail "$output"
	# the container's lo (down in the netns we were given) is up: the resolver needs it
	egt_ns "$EGT_CTR" ip -o link show lo | grep -q ',UP'
}

@test "egress: a non-allowed domain gets NXDOMAIN, is not forwarded, and its address is refused at once" {
	egress_run
	before=$(queries_in "$EGT_DIR/upstream.log" denied.test)
	run in_ctr nslookup denied.test
	[ "$status" -ne 0 ]
	[[ "$output" == *NXDOMAIN* ]] || fail "$output"
	[[ "$output" != *198.51.100.20* ]] || fail "$output"
	exfil=$(head -c 10 /dev/urandom | od -An -tx1 | tr -d ' \n').exfil.test
	run in_ctr nslookup "$exfil"
	[[ "$output" == *NXDOMAIN* ]] || fail "$output"
	[ "$(queries_in "$EGT_DIR/upstream.log" denied.test)" = "$before" ] || fail "denied.test reached the upstream"
	! grep -q "$exfil" "$EGT_DIR/upstream.log" || fail "exfiltration name reached the upstream"
	refused_fast 198.51.100.20 80
	t0=$(date +%s%N)
	run connect 198.51.100.20 80
	t1=$(date +%s%N)
	[[ "$output" == *"Connection refused"* ]] || fail "$output"
	echo "# 198.51.100.20:80 refused in ${ELAPSED}s inside (busybox time); exec round trip $(((t1 - t0) / 1000000)) ms" >&3
	# counted in the deny chain
	egt_ns "$EGT_CTR" nft list chain inet agentrt deny | grep -Eq 'counter packets [1-9]'
}

@test "egress: an allowed CIDR:port connects, another port on the same host does not" {
	egress_run
	# no DNS lookup in this container: 203.0.113.10 is allowed for 443/tcp only
	run connect 203.0.113.10 443
	[ "$output" = hello-allowed-443 ] || fail "$output"
	refused_fast 203.0.113.10 80
	echo "# 203.0.113.10:80 refused in ${ELAPSED}s" >&3
}

@test "egress: queries sent straight to another resolver are answered only by agentrt's" {
	egress_run
	# resolv.conf names 192.0.2.99 (the rogue); then the rogue by address; then the upstream
	run in_ctr nslookup allowed.test
	[[ "$output" == *"Address: 203.0.113.10"* ]] || fail "$output"
	run in_ctr nslookup allowed.test 192.0.2.99
	[[ "$output" == *"Address: 203.0.113.10"* ]] || fail "$output"
	[[ "$output" != *198.51.100.99* ]] || fail "the rogue answered: $output"
	run in_ctr nslookup whatever.test 192.0.2.99
	[[ "$output" == *NXDOMAIN* ]] || fail "$output"
	run in_ctr nslookup denied.test 192.0.2.53
	[[ "$output" == *NXDOMAIN* ]] || fail "$output"
	# DNS over TCP to the rogue (a hand-made query for allowed.test, length-prefixed)
	q='\000\036\022\064\001\000\000\001\000\000\000\000\000\000\007allowed\004test\000\000\001\000\001'
	run in_ctr sh -c "printf '$q' | nc -w 2 192.0.2.99 53 | od -An -tx1 -v | tr -d ' \n'"
	[[ "$output" == *cb00710a* ]] || fail "TCP answer: $output"
	! grep -q 'query\[' "$EGT_DIR/rogue.log" || fail "the rogue resolver saw: $(cat "$EGT_DIR/rogue.log")"
}

@test "egress: the metadata address is unreachable (H17)" {
	egress_run
	refused_fast 169.254.169.254 80
	run in_ctr wget -T 2 -q -O- http://169.254.169.254/
	[ "$status" -ne 0 ]
	[[ "$output" != *hello-metadata* ]] || fail "$output"
}

@test "egress: the rules cannot be changed from inside (nft list/flush fail)" {
	egress_run
	rules=$(egt_ns "$EGT_CTR" nft list ruleset | grep -c .)
	run in_ctr grep CapEff /proc/self/status
	eff=$((16#$(awk '{print $2}' <<<"$output")))
	[ $(((eff >> 12) & 1)) -eq 0 ] || fail "CAP_NET_ADMIN in the effective set: $output"
	run in_ctr nft list ruleset
	[ "$status" -ne 0 ] || fail "nft list ruleset succeeded inside: $output"
	[[ "$output" != *agentrt* ]] || fail "$output"
	echo "# inside: nft list ruleset: $output" >&3
	run in_ctr nft flush ruleset
	[ "$status" -ne 0 ] || fail "nft flush ruleset succeeded inside"
	echo "# inside: nft flush ruleset: $output" >&3
	run in_ctr nft delete table inet agentrt
	[ "$status" -ne 0 ] || fail "nft delete table succeeded inside"
	[ "$(egt_ns "$EGT_CTR" nft list ruleset | grep -c .)" = "$rules" ] || fail "the ruleset changed"
	refused_fast 198.51.100.20 80
}

@test "egress: an allowed name pointing at a private address gets no address (rebinding)" {
	egress_run
	run in_ctr nslookup rebind.test
	[[ "$output" != *10.0.0.1* ]] || fail "$output"
	[[ "$output" == *REFUSED* ]] || fail "$output"
	run rt egress "$ID" list
	! grep -q "pinned 10.0.0.1" <<<"$output" || fail "$output"
}

@test "egress: agentrt egress allow/deny change a running container live" {
	egress_run
	refused_fast 198.51.100.20 80
	run rt egress "$ID" allow 198.51.100.20:80
	[ "$status" -eq 0 ] || fail "$output"
	run connect 198.51.100.20 80
	[ "$output" = hello-denied-80 ] || fail "after allow: $output"
	run rt egress "$ID" list
	grep -qx "allow 198.51.100.20:80" <<<"$output" || fail "$output"
	run rt egress "$ID" deny 198.51.100.20:80
	[ "$status" -eq 0 ] || fail "$output"
	refused_fast 198.51.100.20 80
	run rt egress "$ID" list
	! grep -q "198.51.100.20" <<<"$output" || fail "$output"
	# a domain added live resolves and connects
	run in_ctr nslookup denied.test
	[[ "$output" == *NXDOMAIN* ]] || fail "$output"
	run rt egress "$ID" allow denied.test
	[ "$status" -eq 0 ] || fail "$output"
	run in_ctr nslookup denied.test
	[[ "$output" == *"Address: 198.51.100.20"* ]] || fail "$output"
	run connect 198.51.100.20 80
	[ "$output" = hello-denied-80 ] || fail "after allow denied.test: $output"
	run rt egress "$ID" deny denied.test
	[ "$status" -eq 0 ] || fail "$output"
	refused_fast 198.51.100.20 80
	# a name with a port: pinned with its port only
	run rt egress "$ID" allow denied.test:80/tcp
	[ "$status" -eq 0 ] || fail "$output"
	run in_ctr nslookup denied.test
	[[ "$output" == *"Address: 198.51.100.20"* ]] || fail "$output"
	run rt egress "$ID" list
	grep -q "^pinned 198.51.100.20 tcp 80 expires" <<<"$output" || fail "$output"
	run connect 198.51.100.20 80
	[ "$output" = hello-denied-80 ] || fail "after allow denied.test:80/tcp: $output"
	run rt egress "$ID" deny denied.test:80/tcp
	[ "$status" -eq 0 ] || fail "$output"
	refused_fast 198.51.100.20 80
	run rt egress "$ID" allow 'not an entry'
	assert_clean_failure
	run rt egress "$ID" deny 192.0.2.77
	assert_clean_failure
}

@test "egress: a control client that connects and stalls does not stop DNS" {
	egress_run
	sleep 4 | socat -u - "UNIX-CONNECT:$TEST_ROOT/$ID/egress.sock" &
	stall=$!
	sleep 0.2
	t0=$(date +%s%N)
	run in_ctr nslookup allowed.test
	t1=$(date +%s%N)
	kill "$stall" 2>/dev/null || true
	wait "$stall" 2>/dev/null || true
	[[ "$output" == *"Address: 203.0.113.10"* ]] || fail "$output"
	[ $(((t1 - t0) / 1000000)) -lt 2500 ] || fail "DNS waited $(((t1 - t0) / 1000000)) ms for the stalled client"
	run rt egress "$ID" list
	[ "$status" -eq 0 ] || fail "$output"
}

@test "egress: after delete nothing of ours remains (helper, table, socket)" {
	egress_run
	hpid=$(cut -d' ' -f1 "$TEST_ROOT/$ID/monitor.pid")
	[ -n "$hpid" ] && [ "$(cat "/proc/$hpid/comm")" = agentrt-monitor ] || fail "helper $hpid"
	pgrep -x agentrt-monitor | grep -qx "$hpid"
	[ -S "$TEST_ROOT/$ID/egress.sock" ]
	egt_ns "$EGT_CTR" nft list tables | grep -q 'inet agentrt'
	run rt delete --force "$ID"
	[ "$status" -eq 0 ] || fail "$output"
	! helper_running "$hpid" || fail "helper $hpid still running after delete"
	run egt_ns "$EGT_CTR" nft list tables
	[[ "$output" != *agentrt* ]] || fail "$output"
	[ ! -e "$TEST_ROOT/$ID" ]
	# the network namespace we gave is as it was: reachable again without a policy
	run egt_ns "$EGT_CTR" busybox nc -w 2 198.51.100.20 80 </dev/null
	[ "$output" = hello-denied-80 ] || fail "$output"
}

@test "egress: agentrt's own new network namespace: lo up, every name NXDOMAIN from our resolver" {
	update_config '.linux.namespaces |= map(if .type == "network" then del(.path) else . end)'
	egress_run --profile agent
	pid=$(container_pid "$ID")
	[ "$(readlink "/proc/$pid/ns/net")" != "$(readlink /proc/self/ns/net)" ]
	[ "$(stat -L -c %i "/proc/$pid/ns/net")" != "$(stat -L -c %i "/run/netns/$EGT_CTR")" ]
	run in_ctr ip -o link show
	[ "$(grep -c . <<<"$output")" -eq 1 ] || fail "$output"
	[[ "$output" == *"lo:"*",UP"* ]] || fail "$output"
	for q in "allowed.test 127.0.0.1" "pypi.org 127.0.0.53" "example.org ::1"; do
		run in_ctr nslookup $q
		[[ "$output" == *NXDOMAIN* ]] || fail "nslookup $q: $output"
	done
	# only lo, so no route: a query to any other address fails before our redirect
	# (ENETUNREACH at connect); it gets no answer at all, which is as good
	for q in "allowed.test" "allowed.test 192.0.2.53"; do
		run in_ctr nslookup $q
		[ "$status" -ne 0 ] && [[ "$output" != *"Address: 2"* ]] || fail "nslookup $q: $output"
	done
	nsenter --net="/proc/$pid/ns/net" nft list tables | grep -q 'inet agentrt'
	hpid=$(cut -d' ' -f1 "$TEST_ROOT/$ID/monitor.pid")
	run rt delete --force "$ID"
	[ "$status" -eq 0 ] || fail "$output"
	! helper_running "$hpid" || fail "helper $hpid still running after delete"
}

@test "egress: --profile oci has no egress policy (no helper, no table)" {
	update_config '.linux.namespaces |= map(if .type == "network" then del(.path) else . end)'
	egress_run --profile oci
	[ ! -e "$TEST_ROOT/$ID/monitor.pid" ]
	pid=$(container_pid "$ID")
	[ -z "$(nsenter --net="/proc/$pid/ns/net" nft list ruleset)" ]
	run rt egress "$ID" list
	assert_clean_failure
}

@test "egress: a policy the monitor cannot install fails create with its reason, leaving nothing" {
	cat >"$EGT_DIR/bad-upstream.json" <<-'EOF2'
		{"name": "bad-upstream", "extends": "agent",
		 "egress": {"allow": ["allowed.test"], "dns": {"upstream": ["999.1.1.1"]}}}
	EOF2
	before=$(pgrep -x agentrt-monitor | sort | tr '\n' ' ')
	run timeout --kill-after=5 "$RT_TIMEOUT" nsenter --net="/run/netns/$EGT_HOST" \
		"$AGENTRT" --root "$TEST_ROOT" --profile "$EGT_DIR/bad-upstream.json" create --bundle "$BUNDLE" "$ID"
	assert_clean_failure
	assert_output_contains "create \`$ID\`: egress.dns.upstream \`999.1.1.1\`"
	[ ! -e "$TEST_ROOT/$ID" ] || fail "state dir left: $(ls "$TEST_ROOT/$ID")"
	for p in $(pgrep -x agentrt-monitor); do
		[[ " $before " == *" $p "* ]] || ! helper_running "$p" || fail "monitor $p left running"
	done
	run egt_ns "$EGT_CTR" nft list tables
	[[ "$output" != *agentrt* ]] || fail "$output"
}

# Kubernetes (containerd's CRI, CRI-O) and Podman pods: the containers join the sandbox's netns.
@test "egress: a pod's container shares the sandbox's policy and adds its own entries to it" {
	update_config '.annotations["io.kubernetes.cri.container-type"] = "sandbox"'
	egress_run
	sb=$ID
	cat >"$EGT_DIR/pod-app.json" <<-'EOF2'
		{"name": "pod-app", "extends": "agent",
		 "egress": {"allow": ["198.51.100.20:80/tcp"], "dns": {"upstream": ["192.0.2.53"]}}}
	EOF2
	update_config ".annotations[\"io.kubernetes.cri.container-type\"] = \"container\" |
		.annotations[\"io.kubernetes.cri.sandbox-id\"] = \"$sb\" |
		.linux.cgroupsPath = (.linux.cgroupsPath + \"-app\")"
	ID=$sb-app
	egress_run --profile "$EGT_DIR/pod-app.json"
	# one table and one resolver in the pod's netns: the sandbox's, with the app's entry added
	[ "$(egt_ns "$EGT_CTR" nft list tables | grep -c agentrt)" -eq 1 ]
	[ ! -e "$TEST_ROOT/$ID/egress.sock" ] || fail "the app has a resolver of its own"
	run rt egress "$sb" list
	grep -qx "allow 198.51.100.20:80/tcp" <<<"$output" || fail "$output"
	grep -qx "allow allowed.test" <<<"$output" || fail "$output"
	# from the app: the sandbox's names resolve, its own entry connects, the rest is refused
	run in_ctr nslookup allowed.test
	[[ "$output" == *"Address: 203.0.113.10"* ]] || fail "$output"
	run connect 203.0.113.10 80
	[ "$output" = hello-allowed-80 ] || fail "$output"
	run connect 198.51.100.20 80
	[ "$output" = hello-denied-80 ] || fail "$output"
	refused_fast 198.51.100.20 443
	run in_ctr nslookup denied.test
	[[ "$output" == *NXDOMAIN* ]] || fail "$output"
	# its trail says whose policy it is under
	run rt audit "$ID" --kind monitor --format json
	[[ "$output" == *"\"egress_by_sandbox\":\"$sb\""* ]] || fail "$output"
	# the app leaving keeps the pod's policy; the sandbox leaving takes it away
	run rt delete --force "$ID"
	[ "$status" -eq 0 ] || fail "$output"
	egt_ns "$EGT_CTR" nft list tables | grep -q 'inet agentrt'
	run rt egress "$sb" list
	[ "$status" -eq 0 ] || fail "$output"
	run rt delete --force "$sb"
	[ "$status" -eq 0 ] || fail "$output"
	run egt_ns "$EGT_CTR" nft list tables
	[[ "$output" != *agentrt* ]] || fail "$output"
}

@test "egress: a second policed container in a netns that is not its pod's fails with a clear error" {
	egress_run
	first=$ID
	ID=$first-2
	update_config '.linux.cgroupsPath = (.linux.cgroupsPath + "-2")'
	run timeout --kill-after=5 "$RT_TIMEOUT" nsenter --net="/run/netns/$EGT_HOST" \
		"$AGENTRT" --root "$TEST_ROOT" --profile "$EGT_PROFILE" create --bundle "$BUNDLE" "$ID"
	assert_clean_failure
	assert_output_contains "already has an agentrt egress policy"
	[ ! -e "$TEST_ROOT/$ID" ]
	# the first one's policy and resolver are untouched
	ID=$first
	run in_ctr nslookup allowed.test
	[[ "$output" == *"Address: 203.0.113.10"* ]] || fail "$output"
	run connect 203.0.113.10 80
	[ "$output" = hello-allowed-80 ] || fail "$output"
	refused_fast 198.51.100.20 80
}
