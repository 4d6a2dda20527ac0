#!/usr/bin/env bats
# dev.bats - /dev: default devices, /dev/pts and /dev/ptmx, /dev/shm, /dev/fd links,
# linux.devices, maskedPaths and readonlyPaths.  Device nodes are checked from the host
# through /proc/<pid>/root.

load helpers

start_sleeper() {
	set_args sleep 1000
	run_detached c1
	[ "$status" -eq 0 ] || fail "run -d: $output"
	PID=$(container_pid c1)
	CROOT=/proc/$PID/root
}

@test "default devices exist with the right type and major:minor" {
	start_sleeper
	for d in null:1:3 zero:1:5 full:1:7 random:1:8 urandom:1:9 tty:5:0; do
		IFS=: read -r name maj min <<<"$d"
		run stat -c '%F %t %T' "$CROOT/dev/$name"
		[ "$status" -eq 0 ] || fail "/dev/$name missing"
		[ "$output" = "character special file $(printf '%x %x' "$maj" "$min")" ] || fail "/dev/$name: $output"
	done
	run rt exec c1 sh -c 'echo x > /dev/null && head -c 4 /dev/zero | wc -c && head -c 4 /dev/urandom | wc -c'
	[ "$status" -eq 0 ] || fail "$output"
	[ "$output" = "$(printf '4\n4')" ]
	run rt exec c1 sh -c 'echo x > /dev/full'
	[ "$status" -ne 0 ]
}

# userns-device-binds-exec: in a user namespace the devices are the host's nodes bind-mounted,
# and the binds kept the host mount's flags (exec and, off devtmpfs, suid allowed).  They are
# nosuid,noexec now (as crun's), and still work.
@test "userns-device-binds-exec: default devices bound in a user namespace are nosuid,noexec" {
	requires userns
	known_broken '^runc' "keeps the host mount's flags on device binds"
	add_userns
	start_sleeper
	local d n=0 opts
	for d in null zero full random urandom tty; do
		opts=$(awk -v m="/dev/$d" '$5 == m {print $6}' "/proc/$PID/mountinfo")
		[ -n "$opts" ] || fail "/dev/$d is not a bind mount: $(grep " /dev/" "/proc/$PID/mountinfo")"
		[[ ",$opts," == *,nosuid,* && ",$opts," == *,noexec,* ]] || fail "/dev/$d: $opts"
		n=$((n + 1))
	done
	[ "$n" = 6 ]
	run rt exec c1 sh -c 'echo x > /dev/null && head -c 4 /dev/zero | wc -c'
	[ "$status" -eq 0 ] && [ "$output" = 4 ] || fail "devices after the bind: $output"
}

@test "/dev contains no host devices" {
	start_sleeper
	allowed=" null zero full random urandom tty console ptmx pts shm mqueue fd stdin stdout stderr core "
	for e in $(ls -A "$CROOT/dev"); do
		[[ "$allowed" == *" $e "* ]] || fail "unexpected /dev/$e"
	done
	# No block devices at all.
	[ -z "$(find "$CROOT/dev" -xdev -type b 2>/dev/null)" ]
}

@test "/dev/pts is a new devpts instance and /dev/ptmx leads to it" {
	start_sleeper
	line=$(awk '$5 == "/dev/pts"' "/proc/$PID/mountinfo")
	[ "$(awk '{print $(NF-2)}' <<<"$line")" = devpts ] || fail "$line"
	grep -q 'ptmxmode=0\?666' <<<"$line" || fail "ptmxmode: $line"
	run rt exec c1 sh -c 'readlink /dev/ptmx || stat -c %t:%T /dev/ptmx'
	[[ "$output" = pts/ptmx || "$output" = /dev/pts/ptmx || "$output" = 5:2 ]] || fail "ptmx: $output"
	# A pty can be allocated in the container's own instance.
	run rt exec c1 sh -c 'script -q -c "tty" /dev/null 2>/dev/null || true; ls /dev/pts'
	grep -q ptmx <<<"$output"
}

@test "/dev/shm is a tmpfs" {
	start_sleeper
	[ "$(awk '$5 == "/dev/shm" {print $(NF-2)}' "/proc/$PID/mountinfo")" = tmpfs ]
	run rt exec c1 sh -c 'echo shm > /dev/shm/x && cat /dev/shm/x'
	[ "$output" = shm ]
}

@test "/dev/fd and /dev/std* links point into /proc/self/fd" {
	start_sleeper
	[ "$(readlink "$CROOT/dev/fd")" = /proc/self/fd ]
	[ "$(readlink "$CROOT/dev/stdin")" = /proc/self/fd/0 ]
	[ "$(readlink "$CROOT/dev/stdout")" = /proc/self/fd/1 ]
	[ "$(readlink "$CROOT/dev/stderr")" = /proc/self/fd/2 ]
}

@test "linux.devices creates nodes with type, numbers, mode and owner" {
	update_config '.linux.devices = [
		{"path": "/dev/agentrt-null", "type": "c", "major": 1, "minor": 3, "fileMode": 416, "uid": 1000, "gid": 1000},
		{"path": "/dev/agentrt-loop", "type": "b", "major": 7, "minor": 200, "fileMode": 384}]'
	start_sleeper
	run stat -c '%F %t:%T %a %u:%g' "$CROOT/dev/agentrt-null"
	[ "$output" = "character special file 1:3 640 1000:1000" ] || fail "$output"
	run stat -c '%F %t:%T %a' "$CROOT/dev/agentrt-loop"
	[ "$output" = "block special file 7:c8 600" ] || fail "$output"
	run rt exec --user 1000:1000 c1 sh -c 'echo x > /dev/agentrt-null'
	[ "$status" -eq 0 ] || fail "$output"
	# The nodes exist in the container's /dev only.
	[ ! -e /dev/agentrt-null ]
}

# Podman's --privileged passes each host device with its st_mode as fileMode,
# type bits included (020620 for a tty); runc and crun take them. agentrt
# refused the config, so `podman run --privileged` failed at create.
# device-path-twice-first-wins: runc makes the node of the first linux.devices entry for a path
# (its second mknod finds the name taken); agentrt replaced it with the last one.
# A config bind over a device path (docker run -v /dev/urandom:/dev/random) is the engine's
# choice: runc leaves what is mounted there (mknod EEXIST).  agentrt removed the name to make
# its node and failed create ("remove `/dev/random`: Device or resource busy"); and the node
# it then chowned would have been the bound one: the host's.
@test "dev-bind-over-device: a config bind on a device's path is kept, and the bound node is not chowned" {
	mknod "$BUNDLE/urandom-node" c 1 9
	mknod "$BUNDLE/random-node" c 1 8 # the very device the entry names
	update_config '.mounts += [{"destination": "/dev/random", "type": "bind", "source": "'"$BUNDLE/urandom-node"'", "options": ["bind"]},
			{"destination": "/dev/random2", "type": "bind", "source": "'"$BUNDLE/random-node"'", "options": ["bind"]}] |
		.linux.devices += [{"path": "/dev/random", "type": "c", "major": 1, "minor": 8, "uid": 4242, "gid": 4242},
			{"path": "/dev/random2", "type": "c", "major": 1, "minor": 8, "uid": 4242, "gid": 4242}]'
	start_sleeper
	[ "$(stat -c %u:%g "$BUNDLE/random-node")" = 0:0 ] || fail "the bound node of the same device was chowned: $(stat -c %u:%g "$BUNDLE/random-node")"
	[ "$(stat -c '%t:%T' "$CROOT/dev/random")" = 1:9 ] || fail "/dev/random: $(stat -c '%t:%T %u' "$CROOT/dev/random")"
	awk '$5 == "/dev/random"' "/proc/$PID/mountinfo" | grep -q . || fail "/dev/random is not a mount point"
	[ "$(stat -c %u:%g "$BUNDLE/urandom-node")" = 0:0 ] || fail "the bound node was chowned: $(stat -c %u:%g "$BUNDLE/urandom-node")"
	run rt exec c1 sh -c 'head -c 4 /dev/random | wc -c'
	[ "$output" = 4 ] || fail "$output"
}

@test "device-path-twice-first-wins: a path given twice gets the first entry's node" {
	update_config '.linux.devices = [
		{"path": "/dev/twice", "type": "c", "major": 1, "minor": 3, "fileMode": 438, "uid": 0, "gid": 0},
		{"path": "/dev/./twice", "type": "c", "major": 1, "minor": 5, "fileMode": 384, "uid": 1, "gid": 1}]'
	start_sleeper
	run stat -c '%F %t:%T %a %u:%g' "$CROOT/dev/twice"
	[ "$status" -eq 0 ] || fail "$output"
	[ "$output" = "character special file 1:3 666 0:0" ] || fail "/dev/twice: $output"
}

@test "podman-privileged-filemode: fileMode with the device's own type bits" {
	update_config '.linux.devices = [
		{"path": "/dev/agentrt-null", "type": "c", "major": 1, "minor": 3, "fileMode": 8592, "uid": 0, "gid": 5},
		{"path": "/dev/agentrt-loop", "type": "b", "major": 7, "minor": 200, "fileMode": 25008}]'
	start_sleeper
	run stat -c '%F %t:%T %a %u:%g' "$CROOT/dev/agentrt-null"
	[ "$output" = "character special file 1:3 620 0:5" ] || fail "$output"
	run stat -c '%F %t:%T %a' "$CROOT/dev/agentrt-loop"
	[ "$output" = "block special file 7:c8 660" ] || fail "$output"
	rt delete -f c1
	# another type's bits: a block device's mode on a character device is refused, naming
	# the field (runc ORs the bits together and makes a block device)
	is_agentrt || return 0
	update_config '.linux.devices = [{"path": "/dev/agentrt-x", "type": "c", "major": 1, "minor": 3, "fileMode": 25008}]'
	set_args true
	run rt run --bundle "$BUNDLE" c2
	[ "$status" -ne 0 ]
	[[ "$output" == *"linux.devices[0].fileMode: file type bits 060000 do not match type \"c\""* ]] || fail "$output"
	run rt state c2
	[ "$status" -ne 0 ]
}

@test "maskedPaths: files read empty, directories are empty, both read-only" {
	mkdir -p "$ROOTFS/etc/secret-dir"
	echo secret >"$ROOTFS/etc/secret-dir/key"
	echo secret >"$ROOTFS/etc/secret-file"
	update_config '.linux.maskedPaths += ["/etc/secret-dir", "/etc/secret-file", "/proc/kcore", "/nonexistent-masked"]'
	start_sleeper
	run rt exec c1 cat /etc/secret-file
	[ "$output" = "" ]
	run rt exec c1 ls -A /etc/secret-dir
	[ "$output" = "" ]
	run rt exec c1 sh -c 'echo x > /etc/secret-dir/new'
	[ "$status" -ne 0 ]
	run rt exec c1 sh -c '[ ! -e /proc/kcore ] || head -c 16 /proc/kcore | wc -c'
	[ -z "$output" ] || [ "$output" = 0 ] || fail "/proc/kcore: $output"
	# The files are still there on the host side.
	[ "$(cat "$ROOTFS/etc/secret-file")" = secret ]
}

@test "the default maskedPaths of the config are masked" {
	start_sleeper
	for p in $(jq -r '.linux.maskedPaths[]' "$BUNDLE/config.json"); do
		run rt exec c1 sh -c "if [ -d $p ]; then ls -A $p; elif [ -e $p ]; then head -c 64 $p; fi"
		[ -z "$output" ] || fail "$p not masked: $output"
	done
}

@test "readonlyPaths are read-only" {
	mkdir -p "$ROOTFS/etc/ro-dir"
	update_config '.linux.readonlyPaths += ["/etc/ro-dir"]'
	start_sleeper
	run rt exec c1 touch /etc/ro-dir/x
	[ "$status" -ne 0 ]
	[[ "$(awk '$5 == "/etc/ro-dir" {print $6}' "/proc/$PID/mountinfo")" =~ (^|,)ro(,|$) ]]
	# /proc/sys is read-only: writing the (namespaced) hostname back fails.
	if jq -e '.linux.readonlyPaths | index("/proc/sys")' "$BUNDLE/config.json" >/dev/null; then
		run rt exec c1 sh -c 'cat /proc/sys/kernel/hostname > /proc/sys/kernel/hostname'
		[ "$status" -ne 0 ]
	fi
}

# A config that mounts /dev read-only (runc: /dev is made read-only after the devices and the
# mounts below it are in place) must work: the devices exist, /dev/pts and /dev/shm are
# mounted and writable, /dev itself is read-only.
@test "a read-only /dev mount: devices and sub-mounts are there, /dev itself is read-only" {
	update_config '(.mounts[] | select(.destination == "/dev") | .options) += ["ro"] | .process.terminal = true'
	set_cmd 'echo x > /dev/null && echo null-ok; touch /dev/newfile 2>&1 || echo dev-ro;
		touch /dev/shm/f && echo shm-rw; tty; grep " /dev " /proc/self/mountinfo; sleep 1'
	start_recvtty
	run_detached c1 --console-socket "$CONSOLE_SOCKET"
	[ "$status" -eq 0 ] || fail "run -d: $output"
	for i in $(seq 50); do grep -q ' /dev ' "$BUNDLE/tty.out" 2>/dev/null && break; sleep 0.1; done
	out=$(cat "$BUNDLE/tty.out")
	grep -q null-ok <<<"$out" || fail "/dev/null: $out"
	grep -q dev-ro <<<"$out" || fail "/dev is writable: $out"
	grep -q shm-rw <<<"$out" || fail "/dev/shm: $out"
	grep -qE '^/dev/pts/[0-9]+' <<<"$out" || fail "pty: $out"
	grep -E ' /dev ' <<<"$out" | grep -qE ' ro[, ]' || fail "mountinfo: $out"
}
