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

start_sleeper() {
	set_args sleep 1000
	run_detached "${1:-c1}"
	[ "$status" -eq 0 ] || fail "run -d: $output"
	PID=$(container_pid "${1:-c1}")
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
	before=$(md5sum </proc/self/mountinfo)
	create_container c1
	assert_clean_failure
	[[ "$output" == *"a mount namespace is required"* ]] || fail "message: $output"
	[ "$(md5sum </proc/self/mountinfo)" = "$before" ] || fail "mount table changed"
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

@test "joining a namespace path that is not a namespace fails" {
	update_config ".linux.namespaces |= map(if .type == \"network\" then .path = \"$BUNDLE/config.json\" else . end)"
	set_args true
	create_container c1
	assert_clean_failure
	[ -z "$(rt list -q)" ]
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
