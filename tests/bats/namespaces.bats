#!/usr/bin/env bats
# namespaces.bats - new namespaces differ from the host's, joined namespaces (by path) are
# the ones named, user namespaces get their mappings.  Compared through readlink of
# /proc/<pid>/ns/* from the host.
# run-all: alone (a test compares the whole host mount table before and after: another file
# mounting at the same time would change it)

load helpers

ns_of() { # PID NS
	readlink "/proc/$1/ns/$2"
}

# The inode of the user namespace that owns PID's namespace NS (NS_GET_USERNS).
ns_owner() { # PID NS
	python3 - "$1" "$2" <<'PY'
import fcntl, os, sys
fd = os.open("/proc/%s/ns/%s" % (sys.argv[1], sys.argv[2]), os.O_RDONLY)
print(os.fstat(fcntl.ioctl(fd, 0xb701)).st_ino)
PY
}

netns_owner() {
	ns_owner "$1" net
}

start_sleeper() {
	set_args sleep 1000
	run_detached "${1:-c1}"
	[ "$status" -eq 0 ] || fail "run -d: $output"
	PID=$(container_pid "${1:-c1}")
}

# start_joiner JQ-PREFIX [JQ-SUFFIX]: c2 from a second bundle whose namespaces all join c1's
# ($first) by path, but the mount one, whose path is "" (a new one: runc's own tests write
# that); the JQ-PREFIX filter runs first on c2's config, JQ-SUFFIX last.  Sets $second.
start_joiner() {
	local b2=$BUNDLE/b2
	make_bundle "$b2"
	jq --arg p "/proc/$first/ns" "$1"' | .process.args = ["sleep", "1000"] |
		.linux.namespaces |= map_values(.path = if .type == "mount" then "" else
			($p + "/" + ({"network": "net"}[.type] // .type)) end) | '"${2:-.}" "$b2/config.json" >"$b2/c.json"
	mv "$b2/c.json" "$b2/config.json"
	rt_bg run -d --bundle "$b2" c2
	[ "$status" -eq 0 ] || fail "run c2: $output"
	second=$(container_pid c2)
}

@test "every configured namespace is new" {
	update_config '.linux.namespaces = [{"type": "pid"}, {"type": "network"}, {"type": "ipc"}, {"type": "uts"}, {"type": "mount"}, {"type": "cgroup"}]'
	start_sleeper
	for n in pid net ipc uts mnt cgroup; do
		[ "$(ns_of "$PID" $n)" != "$(ns_of $$ $n)" ] || fail "$n namespace shared with the host"
	done
	# pid 1 inside
	run rt exec c1 sh -c 'echo $$; cat /proc/1/cmdline | tr "\0" " "'
	[[ "$(tail -n1 <<<"$output")" == "sleep 1000"* ]] || fail "$output"
}

@test "a namespace not in the config is the host's" {
	update_config '.linux.namespaces |= map(select(.type != "network" and .type != "ipc"))'
	start_sleeper
	[ "$(ns_of "$PID" net)" = "$(ns_of $$ net)" ]
	[ "$(ns_of "$PID" ipc)" = "$(ns_of $$ ipc)" ]
	[ "$(ns_of "$PID" mnt)" != "$(ns_of $$ mnt)" ]
}

# runc and crun mount the rootfs into the caller's mount namespace here and leave those
# mounts behind after delete; agentrt refuses and the caller's mount table stays as it was.
@test "a config without a mount namespace is refused, the caller's mounts untouched" {
	agentrt_only "runc mounts into the caller's namespace"
	update_config '.linux.namespaces = [{"type": "pid"}, {"type": "network"}]'
	# the create runs in a mount namespace of its own, private, so that the other test files'
	# mounts (parallel jobs) do not show in the table compared; a mount create made into its
	# caller's namespace would
	status=0
	unshare -m --propagation private sh -c '
		before=$(md5sum </proc/self/mountinfo)
		timeout --kill-after=5 "$1" "$2" --root "$3" create --bundle "$4" c1 </dev/null \
			>"$4/c1.out" 2>"$4/c1.err"
		rc=$?
		[ "$(md5sum </proc/self/mountinfo)" = "$before" ] || { echo changed >"$4/c1.mounts"; }
		exit $rc' - "$RT_TIMEOUT" "$AGENTRT" "$TEST_ROOT" "$BUNDLE" || status=$?
	output=$(cat "$BUNDLE/c1.err")
	assert_clean_failure
	[[ "$output" == *"a mount namespace is required"* ]] || fail "message: $output"
	[ ! -e "$BUNDLE/c1.mounts" ] || fail "mount table changed"
	run rt state c1
	[ "$status" -ne 0 ] || fail "a refused container was left behind"
}

@test "the new network namespace has only a loopback interface" {
	start_sleeper
	run rt exec c1 sh -c 'ls /sys/class/net'
	[ "$output" = lo ] || fail "$output"
}

@test "join a network namespace made by ip netns add" {
	requires netns
	make_netns
	ns=$NETNS
	ip netns exec "$ns" ip addr add 192.0.2.1/24 dev lo
	update_config ".linux.namespaces |= map(if .type == \"network\" then .path = \"/run/netns/$ns\" else . end)"
	start_sleeper
	[ "$(stat -L -c %i "/run/netns/$ns")" = "$(stat -L -c %i "/proc/$PID/ns/net")" ]
	run rt exec c1 ip -4 addr show dev lo
	grep -q '192.0.2.1/24' <<<"$output" || fail "$output"
}

@test "join the network and ipc namespaces of another container" {
	start_sleeper c1
	first=$PID
	b2=$BUNDLE/b2
	make_bundle "$b2"
	jq --arg p "/proc/$first/ns" '.process.args = ["sleep", "1000"] |
		.linux.namespaces |= map(if .type == "network" then .path = ($p + "/net")
		elif .type == "ipc" then .path = ($p + "/ipc") else . end)' "$b2/config.json" >"$b2/c.json"
	mv "$b2/c.json" "$b2/config.json"
	rt_bg run -d --bundle "$b2" c2
	[ "$status" -eq 0 ] || fail "run c2: $output"
	second=$(container_pid c2)
	[ "$(ns_of "$second" net)" = "$(ns_of "$first" net)" ]
	[ "$(ns_of "$second" ipc)" = "$(ns_of "$first" ipc)" ]
	[ "$(ns_of "$second" pid)" != "$(ns_of "$first" pid)" ]
	[ "$(ns_of "$second" mnt)" != "$(ns_of "$first" mnt)" ]
}

@test "an empty namespace path is a new namespace, as runc reads it (other containers' namespaces joined beside it)" {
	start_sleeper c1
	first=$PID
	start_joiner .
	for n in net ipc uts pid cgroup; do
		[ "$(ns_of "$second" $n)" = "$(ns_of "$first" $n)" ] || fail "$n not joined"
	done
	[ "$(ns_of "$second" mnt)" != "$(ns_of "$first" mnt)" ] || fail "mount namespace joined"
	[ "$(ns_of "$second" mnt)" != "$(ns_of $$ mnt)" ] || fail "mount namespace is the host's"
	# in c1's cgroup namespace c2 still sees its own cgroup at /sys/fs/cgroup
	# (on v1 a bind of its directory: the mount's root is c2's cgroup, read from the host)
	if [ "$(stat -f -c %T /sys/fs/cgroup)" != cgroup2fs ]; then
		own=$(awk -F: '$2 == "pids" {print $3}' "/proc/$second/cgroup")
		root=$(awk '$5 == "/sys/fs/cgroup/pids" {print $4}' "/proc/$second/mountinfo")
		[ -n "$own" ] && [ "$root" = "$own" ] || fail "pids bound from '$root', c2 is in '$own'"
	fi
}

@test "joining another container's user namespace (and the rest but mount): the init is that namespace's root and makes its mounts" {
	requires userns
	update_config '.linux.namespaces += [{"type": "user"}] |
		.linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 100}] |
		.linux.gidMappings = [{"containerID": 0, "hostID": 200000, "size": 200}]'
	start_sleeper c1
	first=$PID
	start_joiner '.linux.namespaces = ([.linux.namespaces[] | select(.type != "cgroup")] + [{"type": "user"}])'
	for n in user net ipc uts pid; do
		[ "$(ns_of "$second" $n)" = "$(ns_of "$first" $n)" ] || fail "$n not joined"
	done
	[ "$(awk '/^Uid:/{print $2}' "/proc/$second/status")" = 100000 ] || fail "uid: $(grep Uid "/proc/$second/status")"
	run rt exec c2 sh -c 'id -u; ls -d /dev/pts /dev/shm'
	[ "$status" -eq 0 ] && [ "${lines[0]}" = 0 ] || fail "exec: $output"
}

# Podman pods and Kubernetes pods with user namespaces: each container joins the pod's user
# namespace and gets a pid namespace of its own, which must belong to that user namespace
# (its /proc is mounted from inside it).  It was refused.
@test "joined-userns-new-pidns: a container joining another's user namespace gets its own pid namespace, owned by that user namespace" {
	requires userns
	add_userns
	start_sleeper c1
	first=$PID
	# c2 joins only c1's user and network namespaces: pid, ipc, uts, mount, cgroup are new
	start_joiner '.linux.namespaces = [{"type": "pid"}, {"type": "ipc"}, {"type": "uts"}, {"type": "mount"}, {"type": "cgroup"}, {"type": "network"}, {"type": "user"}]' \
		'.linux.namespaces |= map(if .type == "user" or .type == "network" then . else .path = "" end)'
	for n in user net; do
		[ "$(ns_of "$second" $n)" = "$(ns_of "$first" $n)" ] || fail "$n not joined"
	done
	for n in pid ipc uts mnt cgroup; do
		[ "$(ns_of "$second" $n)" != "$(ns_of "$first" $n)" ] || fail "$n shared with c1"
		[ "$(ns_of "$second" $n)" != "$(ns_of $$ $n)" ] || fail "$n shared with the host"
		[ "$(ns_owner "$second" $n)" = "$(stat -L -c %i "/proc/$first/ns/user")" ] ||
			fail "$n owned by user namespace $(ns_owner "$second" $n)"
	done
	# in a cgroup of its own (the runtime writes it there: no CLONE_INTO_CGROUP from the helper)
	cg_of() { awk -F: '$2 == "pids" {print $3; f = 1} END {exit !f}' "/proc/$1/cgroup" ||
		awk -F: '$1 == 0 {print $3}' "/proc/$1/cgroup"; }
	[ "$(cg_of "$second")" != "$(cg_of $$)" ] && [ "$(cg_of "$second")" != "$(cg_of "$first")" ] ||
		fail "c2 in cgroup $(cg_of "$second")"
	# pid 1 of its namespace, root of the user namespace
	[ "$(awk '/^NSpid:/{print $3}' "/proc/$second/status")" = 1 ] || fail "$(grep NSpid "/proc/$second/status")"
	[ "$(awk '/^Uid:/{print $2}' "/proc/$second/status")" = 100000 ] || fail "uid: $(grep Uid "/proc/$second/status")"
	run rt exec c2 sh -c 'id -u; echo $$; ls /proc | grep -c "^[0-9]"; touch /tmp/x && echo ok'
	[ "$status" -eq 0 ] || fail "exec: $output"
	[ "${lines[0]}" = 0 ] || fail "exec id: $output"
	# its own /proc: sleep (1), the shell and ls/grep only, none of c1's
	[ "${lines[2]}" -le 4 ] && [ "${lines[3]}" = ok ] || fail "exec: $output"
	rt kill c2 KILL
	wait_for_status c2 stopped
	rt delete c2
	# in the foreground: `run` waits for the init (its child, not the helper's) and gives
	# back its exit status
	jq '.process.args = ["sh", "-c", "echo $$; exit 7"]' "$BUNDLE/b2/config.json" >"$BUNDLE/b2/c.json"
	mv "$BUNDLE/b2/c.json" "$BUNDLE/b2/config.json"
	run rt run --bundle "$BUNDLE/b2" c3 </dev/null
	[ "$status" -eq 7 ] && [ "$output" = 1 ] || fail "run c3: $status: $output"
	[ -z "$(rt list -q | grep -v -x c1)" ] || fail "left: $(rt list -q)"
}

@test "joined-userns-new-pidns: a user namespace that cannot be joined (the caller's own) fails create with one line, nothing left" {
	agentrt_only "runc's message differs"
	update_config '.linux.namespaces += [{"type": "user", "path": "/proc/self/ns/user"}]'
	set_args true
	create_container c1
	assert_clean_failure
	assert_output_contains "join user namespace: Invalid argument"
	[ -z "$(rt list -q)" ]
}

@test "joining a namespace path that is not a namespace fails" {
	update_config ".linux.namespaces |= map(if .type == \"network\" then .path = \"$BUNDLE/config.json\" else . end)"
	set_args true
	create_container c1
	assert_clean_failure
	[ -z "$(rt list -q)" ]
}

# reused_parent: a process in a network namespace of its own plays a sub-agent's parent init
# (PARENT, its start time PARENT_START); it is killed and an unrelated process takes its pid
# (pidat, PARENT_HELPER: a host process, in the host's network namespace), as happens when a
# parent dies before its child's create is done.
reused_parent() {
	local st rc victim=$BUNDLE/victim
	[ -x "$HELPER_DIR/pidat" ] || skip "pidat not built (make test-helpers)"
	mkdir -p "$victim"
	unshare -n sleep 1000 &
	PARENT=$!
	for ((i = 0; i < 50; i++)); do
		[ "$(readlink "/proc/$PARENT/ns/net")" != "$(readlink /proc/self/ns/net)" ] && break
		sleep 0.1
	done
	st=$(cat "/proc/$PARENT/stat")
	st=${st##*) }
	PARENT_START=$(cut -d' ' -f20 <<<"$st")
	kill -KILL "$PARENT"
	wait "$PARENT" || true
	"$HELPER_DIR/pidat" "$PARENT" "$victim" >"$BUNDLE/pidat.out" 2>"$BUNDLE/pidat.err" &
	PARENT_HELPER=$!
	for ((i = 0; i < 50; i++)); do [ -s "$BUNDLE/pidat.out" ] && break; sleep 0.1; done
	if [ ! -s "$BUNDLE/pidat.out" ]; then
		wait "$PARENT_HELPER" && rc=0 || rc=$?
		[ "$rc" -eq 3 ] && skip "pid $PARENT was taken meanwhile"
		fail "pidat: $(cat "$BUNDLE/pidat.err")"
	fi
	[ "$(readlink "/proc/$PARENT/ns/net")" = "$(readlink /proc/self/ns/net)" ] || fail "pidat: not in the host's network namespace"
}

# reused_parent_end: the process at the parent's pid was alive until now; it ends.
reused_parent_end() {
	local alive=yes
	kill -0 "$PARENT" 2>/dev/null || alive=no
	kill "$PARENT" 2>/dev/null || true
	wait "$PARENT_HELPER" || true
	[ "$alive" = yes ] || fail "the process at $PARENT is gone"
}

# pid-reuse-subagent-join: a sub-agent's config (monitor/subagents.c) joins its parent's
# namespaces as /proc/PID/ns/..., PID the parent's init, with that init's start time in the
# annotation io.agentrt.parent-start.  The parent's init may die before the child's create
# opens them, and its pid go to an unrelated process: the child joined that process's
# namespace (here the host's).
@test "pid-reuse-subagent-join: a sub-agent's create never joins the namespace of a process that took its parent's pid" {
	agentrt_only "io.agentrt.parent-start is agentrt's"
	local joined
	reused_parent
	update_config ".linux.namespaces |= map(if .type == \"network\" then .path = \"/proc/$PARENT/ns/net\" else . end) |
		.annotations[\"io.agentrt.parent-start\"] = \"$PARENT_START\""
	set_args sleep 100
	create_container c1
	if [ "$status" -eq 0 ]; then
		joined=$(readlink "/proc/$(container_pid c1)/ns/net")
		reused_parent_end
		fail "create joined $joined (the host's: $(readlink /proc/self/ns/net)), the namespace of the process that took pid $PARENT"
	fi
	reused_parent_end
	assert_clean_failure
	[ "$(grep -c . <<<"$output")" -eq 1 ] || fail "not one line: $output"
	assert_output_contains "\`c1\`"
	assert_output_contains "/proc/$PARENT/ns/net"
	[ -z "$(rt list -q)" ] || fail "left: $(rt list)"
}

# pid-reuse-subagent-slirp: a sub-agent with --allow gets the createRuntime hook `agentrt
# sandbox-net --netns /proc/PID/ns/net` (monitor/subagents.c), PID its parent's init:
# slirp4netns carries the child's packets out from the parent's namespace, where the parent's
# egress table decides.  A parent that died before the hook, its pid taken by a host process,
# had slirp4netns connect out from the host's namespace.
@test "pid-reuse-subagent-slirp: a sub-agent's slirp4netns never runs in the namespace of a process that took its parent's pid" {
	agentrt_only "sandbox-net and io.agentrt.parent-start are agentrt's"
	command -v slirp4netns >/dev/null || skip "needs slirp4netns"
	local p pp slirps= host
	host=$(readlink /proc/self/ns/net)
	reused_parent
	update_config ".hooks.createRuntime = [{\"path\": \"$AGENTRT\", \"timeout\": 20,
		\"args\": [\"agentrt\", \"sandbox-net\", \"--netns\", \"/proc/$PARENT/ns/net\"]}] |
		.annotations[\"io.agentrt.parent-start\"] = \"$PARENT_START\""
	set_args sleep 100
	create_container c1
	# (ours: its parent, the babysitter, is sandbox-net's fork, with the same command line)
	for p in $(grep -lsz '^slirp4netns$' /proc/[0-9]*/cmdline | cut -d/ -f3); do
		pp=$(cut -d' ' -f2 <<<"$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null)")
		grep -qsxzF "/proc/$PARENT/ns/net" "/proc/$pp/cmdline" || continue
		[ "$(readlink "/proc/$p/ns/net" 2>/dev/null)" = "$host" ] && slirps+=" $p"
	done
	if [ -n "$slirps" ]; then
		rt delete --force c1 || true
		kill $slirps 2>/dev/null || true
		reused_parent_end
		fail "slirp4netns$slirps ran in the host's network namespace (create: $status)"
	fi
	reused_parent_end
	assert_clean_failure
	assert_output_contains "\`c1\`"
	assert_output_contains "/proc/$PARENT/ns/net"
	[ -z "$(rt list -q)" ] || fail "left: $(rt list)"
}

# pid-reuse-subagent-dns: a sub-agent's resolver asks upstream from its parent's network
# namespace, egress.dns.upstreamNetns = /proc/PID/ns/net (monitor/subagents.c), PID its
# parent's init.  The monitor opened that path by the pid alone: a parent that died before the
# child's create, its pid taken by a host process, had the child's upstream queries leave from
# the host's namespace (the monitor held it for them).
@test "pid-reuse-subagent-dns: a sub-agent's resolver never asks upstream from the namespace of a process that took its parent's pid" {
	agentrt_only "egress.dns.upstreamNetns and io.agentrt.parent-start are agentrt's"
	local p mon= host held=
	host=$(readlink /proc/self/ns/net)
	reused_parent
	cat >"$BUNDLE/sub-profile.json" <<-EOF2
		{"name": "sub-upstream", "extends": "agent",
		 "egress": {"allow": ["allowed.test"], "dns": {"upstreamNetns": "/proc/$PARENT/ns/net"}}}
	EOF2
	update_config ".annotations[\"io.agentrt.parent-start\"] = \"$PARENT_START\""
	set_args sleep 100
	AGENTRT_PROFILE=$BUNDLE/sub-profile.json create_container c1
	if [ "$status" -eq 0 ]; then
		# (the monitor: comm agentrt-monitor, its command line names the bundle)
		for p in $(grep -lzxF -- "$BUNDLE" /proc/[0-9]*/cmdline 2>/dev/null | cut -d/ -f3); do
			[ "$(cat "/proc/$p/comm" 2>/dev/null)" = agentrt-monitor ] && mon=$p && break
		done
		for f in /proc/$mon/fd/*; do
			[ "$(readlink "$f" 2>/dev/null)" = "$host" ] && held+=" ${f##*/}"
		done
		reused_parent_end
		fail "create succeeded; its monitor ${mon:-?} holds the host's network namespace (fd$held)"
	fi
	reused_parent_end
	assert_clean_failure
	assert_output_contains "\`c1\`"
	assert_output_contains "/proc/$PARENT/ns/net"
	[ -z "$(rt list -q)" ] || fail "left: $(rt list)"
}

@test "joining a namespace of the wrong type fails" {
	update_config '.linux.namespaces |= map(if .type == "network" then .path = "/proc/self/ns/ipc" else . end)'
	set_args true
	create_container c1
	assert_clean_failure
}

@test "user namespace with uid and gid mappings" {
	requires userns
	update_config '.linux.namespaces += [{"type": "user"}] |
		.linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}] |
		.linux.gidMappings = [{"containerID": 0, "hostID": 200000, "size": 65536}]'
	# The mapped root must be able to read the rootfs; it is world-readable.
	start_sleeper
	[ "$(ns_of "$PID" user)" != "$(ns_of $$ user)" ]
	[ "$(tr -s ' ' <"/proc/$PID/uid_map" | sed 's/^ //')" = "0 100000 65536" ]
	[ "$(tr -s ' ' <"/proc/$PID/gid_map" | sed 's/^ //')" = "0 200000 65536" ]
	# The process runs as host uid 100000, root inside.
	[ "$(awk '/^Uid:/{print $2}' "/proc/$PID/status")" = 100000 ]
	[ "$(awk '/^Gid:/{print $2}' "/proc/$PID/status")" = 200000 ]
	run rt exec c1 sh -c 'id -u; cat /proc/self/uid_map'
	[ "$(head -n1 <<<"$output")" = 0 ]
	grep -qE '^ *0 +100000 +65536$' <<<"$output"
}

# userns-no-mappings: a new user namespace without uidMappings or gidMappings was taken, and
# create failed later with "create `/dev/pts` in rootfs: Value too large for defined data type"
# (the ids of nothing mapped); runc refuses the config ("User namespaces enabled, but no uid
# mappings found.").  Refused now before anything is made, naming the field.
@test "userns-no-mappings: a new user namespace without uid or gid mappings is refused, naming them, as runc" {
	requires userns
	set_args true
	update_config '.linux.namespaces += [{"type": "user"}] | del(.linux.uidMappings, .linux.gidMappings)'
	create_container c1
	assert_clean_failure
	[[ "$output" == *"uid mappings"* ]] || fail "no uid mappings named: $output"
	[[ "$output" != *"Value too large"* ]] || fail "$output"
	run rt state c1
	[ "$status" -ne 0 ] && [[ "$output" == *"does not exist"* ]] || fail "c1 left: $output"
	update_config '.linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]'
	create_container c1
	assert_clean_failure
	[[ "$output" == *"gid mappings"* ]] || fail "no gid mappings named: $output"
}

@test "--no-pivot in a new user namespace: no procfs mount from inside (refused without a /proc of its own)" {
	requires userns
	update_config '.linux.namespaces += [{"type": "user"}] |
		.linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}] |
		.linux.gidMappings = [{"containerID": 0, "hostID": 200000, "size": 65536}] |
		.mounts |= map(select(.destination != "/proc"))'
	set_cmd sh -c 'mkdir -p /tmp/p && mount -t proc proc /tmp/p && echo MOUNTED'
	run rt run --no-pivot --bundle "$BUNDLE" np1
	if is_agentrt; then
		# the caller's /proc would stay below the chrooted root, fully visible to the kernel
		[ "$status" -ne 0 ]
		assert_output_contains "--no-pivot with a new user namespace and no /proc mount"
		[ -z "$(rt list -q)" ]
	fi
	[[ "$output" != *MOUNTED* ]]
	# pivot_root (the default) leaves no procfs behind: the mount is refused inside
	run rt run --bundle "$BUNDLE" np2
	[[ "$output" != *MOUNTED* ]]
}

# With --no-pivot the caller's mounts stay in the container's mount namespace below the chroot;
# a private one does not see the caller unmount them, so it keeps them mounted (a disk the host
# unmounts stays busy) for the container's life.  runc refuses it: "rootfsPropagation of
# [r]private is not safe without pivot_root"; agentrt ran it.
@test "no-pivot-private: --no-pivot with rootfsPropagation private or rprivate is refused, as runc; rslave runs" {
	set_args true
	for p in private rprivate; do
		update_config ".linux.rootfsPropagation = \"$p\""
		run rt run --no-pivot --bundle "$BUNDLE" np1
		[ "$status" -ne 0 ] || fail "$p: --no-pivot ran"
		assert_output_contains "rootfsPropagation of [r]private is not safe without pivot_root"
		[ -z "$(rt list -q)" ] || fail "$p: left $(rt list -q)"
	done
	update_config '.linux.rootfsPropagation = "rslave"'
	run rt run --no-pivot --bundle "$BUNDLE" np2
	[ "$status" -eq 0 ] || fail "rslave: $output"
}

# The caller's /proc and /sys would stay below the chrooted root, fully visible to the kernel,
# which then lets a user namespace made inside mount a fresh procfs (mount_too_revealing).
@test "no-pivot-bare-proc: with --no-pivot a user namespace made inside cannot mount a procfs; the container's own /proc and /sys work" {
	update_config '.process.capabilities.bounding += ["CAP_SETFCAP"] | .process.capabilities.permitted += ["CAP_SETFCAP"] | del(.linux.seccomp)'
	set_args unshare -mrpf sh -c 'mount -t proc none /proc && echo MOUNTED'
	run rt run --no-pivot --bundle "$BUNDLE" np1
	[ "$status" -ne 0 ] && [[ "$output" != *MOUNTED* ]] || fail "$status: $output"
	[[ "$output" == *"ermission denied"* ]] || fail "$output"
	# with pivot_root (the default) the same
	run rt run --bundle "$BUNDLE" np2
	[ "$status" -ne 0 ] && [[ "$output" != *MOUNTED* ]] || fail "$status: $output"
	set_cmd 'grep -c . /proc/self/status >/dev/null && ls /sys/kernel >/dev/null && awk "\$5 == \"/proc\" || \$5 == \"/sys\" {n++} END {print n}" /proc/self/mountinfo'
	run rt run --no-pivot --bundle "$BUNDLE" np3
	[ "$status" -eq 0 ] && [ "$output" = 2 ] || fail "$status: $output"
	[ -z "$(rt list -q)" ]
}

@test "time namespace" {
	agentrt_only "runc 1.1 has no time namespace"
	requires timens
	update_config '.linux.namespaces += [{"type": "time"}] | .linux.timeOffsets = {"boottime": {"secs": 86400, "nanosecs": 0}, "monotonic": {"secs": 86400, "nanosecs": 0}}'
	start_sleeper
	[ "$(ns_of "$PID" time)" != "$(ns_of $$ time)" ]
	host_up=$(cut -d. -f1 /proc/uptime)
	run rt exec c1 cut -d. -f1 /proc/uptime
	[ "$output" -ge $((host_up + 86000)) ] || fail "uptime inside $output, host $host_up"
}


# A profile with a monitor (trail, egress) gets its network namespace from a thread of
# create (container/netns_early.c), entered around the clone: the init must be born in it,
# and nothing of the runtime may stay there.
@test "netns-early: the network namespace made beside create is the init's own, with lo up; the runtime's hooks and monitor stay in the host's" {
	agentrt_only "the agent profile"
	export AGENTRT_PROFILE=agent
	host_net=$(readlink /proc/self/ns/net)
	update_config '.hooks.createRuntime = [{"path": "/bin/sh", "args": ["sh", "-c", "readlink /proc/self/ns/net >'"$BUNDLE"'/hook-net"]}]'
	set_args sleep 1000
	# the path under test: the init cloned without CLONE_NEWNET between two setns (strace
	# without -f: the CLI's main thread only; the thread's unshare is not seen)
	# (LeakSanitizer cannot run under ptrace)
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
		strace -qq -e trace=clone3,setns -o "$BUNDLE/strace" "$AGENTRT" --root "$TEST_ROOT" run -d \
		--bundle "$BUNDLE" c1 </dev/null >"$BUNDLE/c1.out" 2>&1 || fail "run -d: $(cat "$BUNDLE/c1.out")"
	init_clone=$(grep 'clone3({flags=CLONE_NEWNS|' "$BUNDLE/strace") || fail "$(cat "$BUNDLE/strace")"
	[[ "$init_clone" == *CLONE_NEWPID* && "$init_clone" != *CLONE_NEWNET* ]] || fail "$init_clone"
	[ "$(grep -cE 'setns\(.*CLONE_NEWNET\) += 0' "$BUNDLE/strace")" -eq 2 ] || fail "$(cat "$BUNDLE/strace")"
	PID=$(container_pid c1)
	[ "$(ns_of "$PID" net)" != "$host_net" ] || fail "the init is in the host's network namespace"
	[ "$(cat "$BUNDLE/hook-net")" = "$host_net" ] || fail "createRuntime hook in $(cat "$BUNDLE/hook-net")"
	mon=$(cut -d' ' -f1 "$TEST_ROOT/c1/monitor.pid")
	[ "$(ns_of "$mon" net)" = "$host_net" ] || fail "the monitor is in $(ns_of "$mon" net)"
	# owned by the host's user namespace, as one made by the clone would be
	[ "$(netns_owner "$PID")" = "$(stat -L -c %i /proc/self/ns/user)" ]
	run rt exec c1 sh -c 'readlink /proc/self/ns/net; ls /sys/class/net; cat /sys/class/net/lo/flags'
	[ "$status" -eq 0 ] || fail "$output"
	[ "${lines[0]}" = "$(ns_of "$PID" net)" ] || fail "exec in ${lines[0]}"
	[ "${lines[1]}" = lo ] && [ "${#lines[@]}" -eq 3 ] || fail "interfaces: $output"
	# IFF_UP | IFF_LOOPBACK (| IFF_RUNNING is not shown in flags)
	[ $((${lines[2]} & 1)) -eq 1 ] || fail "lo is down: ${lines[2]}"
	# a second container gets a namespace of its own
	set_args sleep 1000
	run_detached c2
	[ "$status" -eq 0 ] || fail "$output"
	[ "$(ns_of "$(container_pid c2)" net)" != "$(ns_of "$PID" net)" ]
}

@test "netns-early: with a user namespace the network namespace is that user namespace's (made by the clone)" {
	agentrt_only "a profile with a monitor"
	requires userns
	# the agent profile's /workspace cannot be made by the mapped root in this rootfs
	echo '{"name": "ns-trail", "extends": "oci", "audit": {"enabled": true}}' >"$BUNDLE/p.json"
	export AGENTRT_PROFILE=$BUNDLE/p.json
	update_config '.linux.namespaces += [{"type": "user"}] |
		.linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}] |
		.linux.gidMappings = [{"containerID": 0, "hostID": 200000, "size": 65536}]'
	start_sleeper
	[ "$(netns_owner "$PID")" = "$(stat -L -c %i "/proc/$PID/ns/user")" ] || fail "owned by $(netns_owner "$PID")"
	[ "$(ns_of "$PID" net)" != "$(ns_of $$ net)" ]
}

@test "netns-path-new-userns: a network namespace joined by path with a user namespace of the container's own (Podman --userns=auto with its netns path)" {
	requires userns ip
	# the init, root of its new user namespace only, may not join a netns the host's user
	# namespace owns: "join network namespace: Operation not permitted" (runc and crun join
	# it before they make the user namespace)
	local ns=h5-nsu-$$
	ip netns add "$ns" || fail "ip netns add"
	ip -n "$ns" addr add 192.0.2.77/32 dev lo
	ip -n "$ns" link set lo up
	update_config '.linux.namespaces |= (map(select(.type != "network")) + [{"type": "network", "path": "/run/netns/'"$ns"'"}, {"type": "user"}]) |
		.linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}] |
		.linux.gidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]'
	set_args sleep 1000
	run_detached c1
	local st=$status out=$output want got=""
	want=$(stat -L -c %i "/run/netns/$ns")
	if [ "$st" -eq 0 ]; then
		PID=$(container_pid c1)
		got=$(stat -L -c %i "/proc/$PID/ns/net")
		[ "$(ns_of "$PID" user)" != "$(ns_of $$ user)" ] || got="host-userns"
		rt delete -f c1 >/dev/null 2>&1
	fi
	ip netns delete "$ns"
	[ "$st" -eq 0 ] || fail "run -d: $out"
	[ "$got" = "$want" ] || fail "the init's netns $got, the path's $want"
}

# The thread's namespace is an optimisation: when it cannot be made (here a failpoint of
# build-fp/agentrt, as if unshare had failed) the clone makes one, as for a plain profile.
@test "netns-early: when the thread cannot make the namespace, the clone does, with lo up" {
	agentrt_only "the agent profile"
	FP_AGENTRT=${FP_AGENTRT:-$REPO_ROOT/build-fp/agentrt}
	if [ ! -x "$FP_AGENTRT" ] || [ "$FP_AGENTRT" -ot "$AGENTRT" ]; then
		make -s -C "$REPO_ROOT" build-fp >&2 || fail "cannot build build-fp/agentrt"
	fi
	set_args sleep 1000
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 AGENTRT_FAILPOINT=netns-early \
		strace -qq -e trace=clone3,setns -o "$BUNDLE/strace" "$FP_AGENTRT" --root "$TEST_ROOT" \
		--profile agent run -d --bundle "$BUNDLE" c1 </dev/null >"$BUNDLE/c1.out" 2>&1 ||
		fail "run -d: $(cat "$BUNDLE/c1.out")"
	init_clone=$(grep 'clone3({flags=CLONE_NEWNS|' "$BUNDLE/strace") || fail "$(cat "$BUNDLE/strace")"
	[[ "$init_clone" == *CLONE_NEWNET* ]] || fail "$init_clone"
	! grep -q 'setns(.*CLONE_NEWNET)' "$BUNDLE/strace" || fail "$(cat "$BUNDLE/strace")"
	PID=$(container_pid c1)
	[ "$(ns_of "$PID" net)" != "$(ns_of $$ net)" ]
	run rt exec c1 sh -c 'ls /sys/class/net; cat /sys/class/net/lo/flags'
	[ "$status" -eq 0 ] || fail "$output"
	[ "${lines[0]}" = lo ] && [ $((${lines[1]} & 1)) -eq 1 ] || fail "$output"
}
