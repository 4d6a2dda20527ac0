#!/usr/bin/env bats
# security-core.bats - regression tests for the known runtime escapes
# (THREAT-MODEL.md), one or more per CVE, named after it.
#
# Each test is written so that a vulnerable runtime FAILS it without harming the machine:
# canaries live under /tmp only and are removed afterwards; symlink attacks aim at
# /proc/sys/kernel/hostname, which is per UTS namespace (the container has its own), never at
# core_pattern or sysrq-trigger; nothing is ever written to a procfs file; the runtime binary
# attacked in the CVE-2019-5736 test is a throw-away copy.
# Runtime versions known to be vulnerable are skipped by name (known_vulnerable); set
# AGENTRT_TEST_VULN=1 to run them anyway and watch them fail.

load helpers

# runc before 1.2.8 (the November 2025 procfs trio); checked: runc 1.1.5 fails the
# "/dev/null replaced by a symlink" test below.
RUNC_LT_1_2_8='^runc version (1\.0\.|1\.1\.|1\.2\.[0-7]([^0-9]|$))'

setup() {
	setup_bundle
	CANARIES=()
}

teardown() {
	local c
	for c in "${CANARIES[@]}"; do
		case "$c" in /tmp/agentrt-*) rm -rf --one-file-system "$c" ;; esac
	done
	teardown_bundle
}

canary() { # NAME: a host path under /tmp that must never be created
	CANARY=/tmp/agentrt-$1-$$-$RANDOM
	CANARIES+=("$CANARY")
	[ ! -e "$CANARY" ]
}

# Replace the runtime-made /dev tmpfs by a bind of the rootfs's own dev/ directory, so that
# files placed there by "the image" are what the runtime finds.
rootfs_dev_bind() {
	update_config ".mounts |= map(if .destination == \"/dev\" then
		{\"destination\": \"/dev\", \"type\": \"bind\", \"source\": \"$ROOTFS/dev\", \"options\": [\"rbind\", \"nosuid\"]}
		else . end)"
}

# No mount in the container (pid $1) may come from the procfs file $2 (e.g. /sys/kernel/hostname).
assert_no_proc_file_mount() {
	local hit
	hit=$(awk -v r="$2" '$4 == r' "/proc/$1/mountinfo")
	[ -z "$hit" ] || fail "procfs file $2 is mounted in the container: $hit"
}

# ---------------------------------------------------------------- CVE-2019-5736

@test "CVE-2019-5736: a process in the container cannot reopen the created init's binary for writing" {
	# The exploit: hold an fd to /proc/<runtime process>/exe, and once the runtime no longer
	# executes that file, reopen it for writing through /proc/self/fd.  Container A runs from
	# a throw-away copy of the runtime; container B shares A's pid namespace, where A's
	# created init is pid 1.
	cp "$AGENTRT" "$BUNDLE/rt-copy"
	sum=$(sha256sum <"$BUNDLE/rt-copy")
	set_args sleep 1000
	AGENTRT=$BUNDLE/rt-copy create_container a
	[ "$status" -eq 0 ] || fail "create a: $output"
	pida=$(container_pid a)
	b=$BUNDLE/b
	make_bundle "$b"
	script='if (exec 3</proc/1/exe) 2>/dev/null; then exec 3</proc/1/exe; echo opened > /tmp/opened
	else echo denied > /tmp/opened; fi
	i=0; while [ ! -e /tmp/go ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
	if { echo agentrt-overwritten >> /proc/self/fd/3; } 2>/dev/null; then echo written > /tmp/result
	else echo refused > /tmp/result; fi
	sleep 1000'
	jq --arg p "/proc/$pida/ns/pid" --arg s "$script" '.process.args = ["sh", "-c", $s] |
		.linux.namespaces |= map(if .type == "pid" then .path = $p else . end)' "$b/config.json" >"$b/c.json"
	mv "$b/c.json" "$b/config.json"
	rt_bg run -d --bundle "$b" b
	[ "$status" -eq 0 ] || fail "run b: $output"
	wait_for_file "$b/rootfs/tmp/opened"
	echo "# B: /proc/1/exe $(cat "$b/rootfs/tmp/opened")" >&3
	# Start A: its init leaves the runtime binary for the user program.
	AGENTRT=$BUNDLE/rt-copy rt start a
	for i in $(seq 50); do
		[ "$(readlink "/proc/$pida/exe")" != "$BUNDLE/rt-copy" ] && break
		sleep 0.1
	done
	touch "$b/rootfs/tmp/go"
	wait_for_file "$b/rootfs/tmp/result"
	[ "$(sha256sum <"$BUNDLE/rt-copy")" = "$sum" ] || fail "the runtime binary was modified from inside"
	[ "$(cat "$b/rootfs/tmp/result")" = refused ] || fail "write: $(cat "$b/rootfs/tmp/result")"
}

@test "CVE-2019-5736: the runtime binary cannot be overwritten from inside during exec" {
	# The attacked binary is a copy; a vulnerable runtime damages only the copy.
	cp "$AGENTRT" "$BUNDLE/rt-copy"
	sum=$(sha256sum <"$BUNDLE/rt-copy")
	set_cmd 'echo ready > /tmp/ready
	i=0
	while [ $i -lt 3000 ]; do
		for p in /proc/[0-9]*; do
			[ "$p" = /proc/$$ ] && continue
			case "$(readlink $p/exe 2>/dev/null)" in *busybox*|"") continue ;; esac
			{ echo agentrt-overwritten >> $p/exe; } 2>/dev/null && echo "$p" >> /tmp/opened
		done
		i=$((i + 1))
	done; sleep 1000'
	AGENTRT=$BUNDLE/rt-copy run_detached c1
	[ "$status" -eq 0 ] || fail "run -d: $output"
	wait_for_file "$ROOTFS/tmp/ready"
	for i in $(seq 30); do
		AGENTRT=$BUNDLE/rt-copy rt exec c1 true || true
	done
	[ "$(sha256sum <"$BUNDLE/rt-copy")" = "$sum" ] || fail "the runtime binary was modified from inside"
	[ ! -e "$ROOTFS/tmp/opened" ] || fail "opened for writing: $(cat "$ROOTFS/tmp/opened")"
	AGENTRT=$BUNDLE/rt-copy rt delete --force c1
}

# ---------------------------------------------------------------- CVE-2024-21626

@test "CVE-2024-21626: process.cwd /proc/self/fd/N (N=3..20) never reaches the host" {
	local bad=()
	for n in $(seq 3 20); do
		update_config ".process.cwd = \"/proc/self/fd/$n\""
		set_args fdleak
		rt_bg run --bundle "$BUNDLE" "cwd$n"
		rt delete --force "cwd$n" >/dev/null 2>&1 || true
		[ "$status" -eq 0 ] || continue # refusing is fine
		getcwd=$(sed -n 's/^getcwd //p' <<<"$output")
		case "$getcwd" in
		/*) ;; # a path inside the container's root
		*) bad+=("fd $n: getcwd \`$getcwd'") ;;
		esac
		grep -q '^cwd .*(unreachable)\|^cwd /sys/fs/cgroup\|^cwd /run\|^cwd /tmp/agentrt' <<<"$output" &&
			bad+=("fd $n: $(grep '^cwd' <<<"$output")")
	done
	[ "${#bad[@]}" -eq 0 ] || fail "host cwd leaked: ${bad[*]}"
}

@test "CVE-2024-21626: exec --cwd /proc/self/fd/N never reaches the host" {
	set_args sleep 1000
	run_detached c1
	[ "$status" -eq 0 ] || fail "run -d: $output"
	local bad=()
	for n in $(seq 3 20); do
		run rt exec --cwd "/proc/self/fd/$n" c1 fdleak
		[ "$status" -eq 0 ] || continue
		getcwd=$(sed -n 's/^getcwd //p' <<<"$output")
		[[ "$getcwd" == /* ]] || bad+=("fd $n: getcwd \`$getcwd'")
	done
	[ "${#bad[@]}" -eq 0 ] || fail "host cwd leaked: ${bad[*]}"
}

@test "CVE-2024-21626: fds of the calling shell are not visible in the container" {
	set_args fdleak
	run bash -c "exec 7</ 8</etc 9</sys/fs/cgroup 10<'$BUNDLE/config.json';
		timeout 30 '$AGENTRT' --root '$TEST_ROOT' run --bundle '$BUNDLE' c1"
	[ "$status" -eq 0 ] || fail "$output"
	fds=$(sed -n 's/^fd \([0-9]*\) .*/\1/p' <<<"$output" | tr '\n' ' ')
	[ "$fds" = "0 1 2 " ] || fail "fds in the container: $output"
	grep -q '^cwd /$' <<<"$output"
}

@test "CVE-2024-21626: fds of the calling shell are not visible to exec" {
	set_args sleep 1000
	run_detached c1
	[ "$status" -eq 0 ] || fail "run -d: $output"
	run bash -c "exec 7</ 8</etc 9</sys/fs/cgroup; timeout 30 '$AGENTRT' --root '$TEST_ROOT' exec c1 fdleak"
	[ "$status" -eq 0 ] || fail "$output"
	fds=$(sed -n 's/^fd \([0-9]*\) .*/\1/p' <<<"$output" | tr '\n' ' ')
	[ "$fds" = "0 1 2 " ] || fail "fds in exec: $output"
}

@test "CVE-2024-21626: the created init holds no host directory fds" {
	set_args sleep 1000
	bash -c "exec 7</ 8</etc 9</sys/fs/cgroup;
		timeout 30 '$AGENTRT' --root '$TEST_ROOT' create --bundle '$BUNDLE' c1 </dev/null >'$BUNDLE/out' 2>&1"
	pid=$(container_pid c1)
	croot=$(stat -L -c %d:%i "/proc/$pid/root")
	for fd in /proc/$pid/fd/*; do
		t=$(readlink "$fd")
		if [ -d "$fd" ]; then
			# Only the container's own root, and only close-on-exec.
			[ "$(stat -L -c %d:%i "$fd")" = "$croot" ] || fail "init holds a directory: ${fd##*/} -> $t"
			flags=$(awk '/^flags:/{print $2}' "/proc/$pid/fdinfo/${fd##*/}")
			(( (8#$flags & 02000000) != 0 )) || fail "directory fd ${fd##*/} is not close-on-exec"
			continue
		fi
		case "$t" in
		/dev/null | pipe:* | socket:* | anon_inode:* | /dev/pts/* | /memfd:* | "$BUNDLE"/* | "$TEST_ROOT"/*) ;;
		*) fail "unexpected fd ${fd##*/} -> $t" ;;
		esac
	done
}

# ---------------------------------------------------------------- CVE-2021-30465

@test "CVE-2021-30465: a mount through a relative symlink stays inside the rootfs" {
	canary escape
	mkdir -p "$ROOTFS/vol"
	ln -s "../../../../../../../../..$CANARY" "$ROOTFS/vol/a"
	update_config '.mounts += [{"destination": "/vol/a/b", "type": "tmpfs", "source": "tmpfs", "options": ["size=1m"]}]'
	set_args sleep 1000
	run_detached c1
	[ ! -e "$CANARY" ] || fail "host path $CANARY created"
	if [ "$status" -eq 0 ]; then
		pid=$(container_pid c1)
		run rt exec c1 stat -f -c %T /vol/a/b
		[ "$output" = tmpfs ] || fail "the tmpfs is not at /vol/a/b inside: $output"
		[ -d "$ROOTFS$CANARY/b" ] || fail "mount point not created inside the rootfs"
	fi
	[ -z "$(mounts_below /tmp/agentrt-escape)" ]
}

@test "CVE-2021-30465: a mount through an absolute symlink stays inside the rootfs" {
	canary escape
	mkdir -p "$ROOTFS/vol"
	ln -s "$CANARY" "$ROOTFS/vol/a"
	update_config '.mounts += [{"destination": "/vol/a/b", "type": "tmpfs", "source": "tmpfs", "options": ["size=1m"]}]'
	set_args sleep 1000
	run_detached c1
	[ ! -e "$CANARY" ] || fail "host path $CANARY created"
	if [ "$status" -eq 0 ]; then
		[ -d "$ROOTFS$CANARY/b" ] || fail "mount point not created inside the rootfs"
	fi
}

# ---------------------------------------------------------------- CVE-2019-19921 family

@test "CVE-2019-19921: /proc as a symlink is refused" {
	rm -rf "$ROOTFS/proc"
	mkdir "$ROOTFS/bad-proc"
	ln -s /bad-proc "$ROOTFS/proc"
	set_args true
	run rt run --bundle "$BUNDLE" c1
	assert_clean_failure
	# runc's words, which tools and suites look for
	[[ "$output" == *"must be mounted on ordinary directory"* ]] || fail "$output"
	[ -z "$(ls -A "$ROOTFS/bad-proc")" ]
	! grep -q bad-proc /proc/self/mountinfo
	[ -z "$(rt list -q)" ]
}

@test "CVE-2019-19921: /sys as a symlink is refused" {
	rm -rf "$ROOTFS/sys"
	mkdir "$ROOTFS/bad-sys"
	ln -s /bad-sys "$ROOTFS/sys"
	set_args true
	run rt run --bundle "$BUNDLE" c1
	assert_clean_failure
	! grep -q bad-sys /proc/self/mountinfo
}

@test "CVE-2019-19921: /proc and /sys are the real filesystems" {
	set_cmd 'stat -f -c %T /proc; stat -f -c %T /sys'
	run rt run --bundle "$BUNDLE" c1
	[ "$status" -eq 0 ] || fail "$output"
	[ "$output" = "$(printf 'proc\nsysfs')" ]
}

# ---------------------------------------------------------------- CVE-2025-31133

@test "CVE-2025-31133: the default masked paths are masked" {
	set_args sleep 1000
	run_detached c1
	[ "$status" -eq 0 ] || fail "run -d: $output"
	pid=$(container_pid c1)
	for p in $(jq -r '.linux.maskedPaths[]' "$BUNDLE/config.json"); do
		run rt exec c1 sh -c "if [ -d $p ]; then ls -A $p; elif [ -e $p ]; then head -c 64 $p; fi"
		[ -z "$output" ] || fail "$p is not masked: $output"
		if [ -e "/proc/$pid/root$p" ]; then
			run rt exec c1 umount "$p"
			[ "$status" -ne 0 ] || fail "$p could be unmounted"
		fi
	done
}

@test "CVE-2025-31133: /dev/null replaced by a symlink in the rootfs" {
	known_vulnerable "$RUNC_LT_1_2_8" CVE-2025-31133
	rootfs_dev_bind
	rm -f "$ROOTFS/dev/null"
	ln -s /proc/sys/kernel/hostname "$ROOTFS/dev/null"
	update_config '.hostname = "agentrt-host" | .linux.maskedPaths += ["/proc/timer_list", "/proc/keys", "/proc/cpuinfo"]'
	set_args sleep 1000
	run_detached c1
	[ "$status" -eq 0 ] || return 0 # refusing the rootfs is a pass
	pid=$(container_pid c1)
	assert_no_proc_file_mount "$pid" /sys/kernel/hostname
	for p in /proc/timer_list /proc/keys /proc/cpuinfo; do
		run rt exec c1 sh -c "[ ! -e $p ] || head -c 64 $p"
		[ -z "$output" ] || fail "$p not masked: $output"
	done
	run stat -L -c '%F %t:%T' "/proc/$pid/root/dev/null"
	[ "$output" = "character special file 1:3" ] || fail "/dev/null: $output"
}

@test "CVE-2025-31133: /dev/null deleted from the rootfs" {
	rootfs_dev_bind
	rm -f "$ROOTFS/dev/null"
	update_config '.linux.maskedPaths += ["/proc/cpuinfo"]'
	set_args sleep 1000
	run_detached c1
	[ "$status" -eq 0 ] || return 0
	run rt exec c1 head -c 64 /proc/cpuinfo
	[ -z "$output" ] || fail "/proc/cpuinfo not masked: $output"
}

# ---------------------------------------------------------------- CVE-2025-52565

@test "CVE-2025-52565: /dev/console is the container's pty, not a symlink target" {
	rootfs_dev_bind
	mkdir -p "$ROOTFS/dev/pts"
	rm -f "$ROOTFS/dev/console"
	ln -s /proc/sys/kernel/hostname "$ROOTFS/dev/console"
	update_config '.process.terminal = true | .hostname = "agentrt-host"'
	set_args sleep 1000
	start_recvtty
	run_detached c1 --console-socket "$CONSOLE_SOCKET"
	[ "$status" -eq 0 ] || return 0
	pid=$(container_pid c1)
	assert_no_proc_file_mount "$pid" /sys/kernel/hostname
	run stat -L -c '%F %t' "/proc/$pid/root/dev/console"
	[[ "$output" == "character special file "* ]] || fail "/dev/console: $output"
	major=${output##* }
	[ $((0x$major)) -ge 136 ] && [ $((0x$major)) -le 143 ] || fail "/dev/console major $major"
}

@test "CVE-2025-52565: /dev/console with the default /dev" {
	update_config '.process.terminal = true'
	set_args sleep 1000
	start_recvtty
	run_detached c1 --console-socket "$CONSOLE_SOCKET"
	[ "$status" -eq 0 ] || fail "run -d: $output"
	pid=$(container_pid c1)
	line=$(awk '$5 == "/dev/console"' "/proc/$pid/mountinfo")
	[ -z "$line" ] || [ "$(awk '{print $(NF-2)}' <<<"$line")" = devpts ] || fail "$line"
	assert_no_proc_file_mount "$pid" /sys/kernel/hostname
}

# ---------------------------------------------------------------- CVE-2025-52881

@test "CVE-2025-52881: sysctl writes cannot be redirected (kernel.domainname canary)" {
	host_hostname=$(cat /proc/sys/kernel/hostname)
	host_domainname=$(cat /proc/sys/kernel/domainname)
	# An "image" directory with domainname -> hostname, placed over /proc/sys/kernel.
	mkdir -p "$BUNDLE/fake-kernel"
	ln -s /proc/sys/kernel/hostname "$BUNDLE/fake-kernel/domainname"
	update_config ".hostname = \"agentrt-host\" | .linux.sysctl = {\"kernel.domainname\": \"agentrt-canary\"} |
		.mounts += [{\"destination\": \"/proc/sys/kernel\", \"type\": \"bind\", \"source\": \"$BUNDLE/fake-kernel\", \"options\": [\"rbind\"]}]"
	set_args sleep 1000
	run_detached c1
	if [ "$status" -eq 0 ]; then
		pid=$(container_pid c1)
		run nsenter -t "$pid" -u cat /proc/sys/kernel/hostname /proc/sys/kernel/domainname
		[ "$output" = "$(printf 'agentrt-host\nagentrt-canary')" ] || fail "UTS of the container: $output"
	fi
	[ "$(cat /proc/sys/kernel/hostname)" = "$host_hostname" ]
	[ "$(cat /proc/sys/kernel/domainname)" = "$host_domainname" ]
}

@test "CVE-2025-52881: linux.sysctl lands in the container's namespace" {
	host_domainname=$(cat /proc/sys/kernel/domainname)
	update_config '.linux.sysctl = {"kernel.domainname": "agentrt-canary"}'
	set_args sleep 1000
	run_detached c1
	[ "$status" -eq 0 ] || fail "run -d: $output"
	pid=$(container_pid c1)
	[ "$(nsenter -t "$pid" -u cat /proc/sys/kernel/domainname)" = agentrt-canary ]
	[ "$(cat /proc/sys/kernel/domainname)" = "$host_domainname" ]
}

# ---------------------------------------------------------------- CVE-2022-29162

@test "CVE-2022-29162: no inheritable or ambient capabilities unless asked" {
	update_config 'del(.process.capabilities.inheritable) | del(.process.capabilities.ambient)'
	set_args sleep 1000
	run_detached c1
	[ "$status" -eq 0 ] || fail "run -d: $output"
	pid=$(container_pid c1)
	grep -qP '^CapInh:\t0{16}$' "/proc/$pid/status"
	grep -qP '^CapAmb:\t0{16}$' "/proc/$pid/status"
	run rt exec c1 grep -E '^Cap(Inh|Amb):' /proc/self/status
	[ "$(grep -cP ':\t0{16}$' <<<"$output")" -eq 2 ] || fail "exec: $output"
	run rt exec --cap CAP_NET_RAW c1 grep -E '^Cap(Inh|Amb):' /proc/self/status
	[ "$(grep -cP ':\t0{16}$' <<<"$output")" -eq 2 ] || fail "exec --cap: $output"
}

# ---------------------------------------------------------------- CVE-2024-45310

@test "CVE-2024-45310: no empty files or directories are created on the host" {
	canary canary
	mkdir -p "$ROOTFS/vol"
	ln -s "$CANARY/x" "$ROOTFS/vol/link"
	update_config ".mounts += [{\"destination\": \"/vol/link/y/dir\", \"type\": \"tmpfs\", \"source\": \"tmpfs\", \"options\": [\"size=1m\"]},
		{\"destination\": \"/vol/link/y/file\", \"type\": \"bind\", \"source\": \"$BUNDLE/config.json\", \"options\": [\"bind\", \"ro\"]}]"
	set_args true
	run rt run --bundle "$BUNDLE" c1
	[ ! -e "$CANARY" ] || fail "created on the host: $(find "$CANARY")"
	if [ "$status" -eq 0 ]; then
		[ -d "$ROOTFS$CANARY/x/y/dir" ] && [ -f "$ROOTFS$CANARY/x/y/file" ]
	fi
}

# ---------------------------------------------------------------- CVE-2026-41579

@test "CVE-2026-41579: a /dev symlink in the rootfs does not reach the host" {
	canary devcanary
	rm -rf "$ROOTFS/dev"
	ln -s "$CANARY" "$ROOTFS/dev"
	set_args sh -c 'ls /dev'
	run rt run --bundle "$BUNDLE" c1
	[ ! -e "$CANARY" ] || fail "device nodes created on the host: $(ls -la "$CANARY")"
	[ -z "$(mounts_below "$CANARY")" ]
}

@test "CVE-2026-41579: a /dev/pts symlink in a rootfs-provided /dev does not reach the host" {
	canary ptscanary
	rootfs_dev_bind
	rm -rf "$ROOTFS/dev/pts" "$ROOTFS/dev/shm"
	ln -s "$CANARY" "$ROOTFS/dev/pts"
	ln -s "$CANARY-shm" "$ROOTFS/dev/shm"
	CANARIES+=("$CANARY-shm")
	set_args true
	run rt run --bundle "$BUNDLE" c1
	[ ! -e "$CANARY" ] || fail "created on the host: $CANARY"
	[ ! -e "$CANARY-shm" ] || fail "created on the host: $CANARY-shm"
}

# ---------------------------------------------------------------- session keyring

# The caller's session keyring (a login's, an engine's: Kerberos tickets, ecryptfs or
# fscrypt keys, tokens a tool cached there) is not the container's: the init and every exec
# join a new anonymous one, as runc's `_ses.ID` (a name of its own would let another
# container create a keyring of that name first and share it).  Keyrings are not namespaced:
# without this, root in a container that may call keyctl (--profile oci, a runc-like config)
# searched the caller's and read its keys.  --no-new-keyring keeps the caller's (the control:
# the probe finds the key when it is there).
@test "keyring-leak: the caller's session keyring is not reachable from the container (run, exec)" {
	local secret=s3cr3t-$$-$RANDOM ks=$HELPER_DIR/try-syscall
	set_args try-syscall --find-session-key agentrt-canary
	run "$ks" --session-key agentrt-canary "$secret" timeout 30 "$AGENTRT" --root "$TEST_ROOT" run --bundle "$BUNDLE" c1
	[ "$status" -eq 0 ] || fail "run: $output"
	[ "$output" = ENOKEY ] || fail "run: the caller's key is reachable: $output"

	set_args sleep 1000
	run_detached c2
	[ "$status" -eq 0 ] || fail "run -d: $output"
	run "$ks" --session-key agentrt-canary "$secret" timeout 30 "$AGENTRT" --root "$TEST_ROOT" exec c2 try-syscall --find-session-key agentrt-canary
	[ "$status" -eq 0 ] || fail "exec: $output"
	[ "$output" = ENOKEY ] || fail "exec: the caller's key is reachable: $output"
	rt kill c2 KILL
	wait_for_status c2 stopped
	rt delete c2

	# the control: with --no-new-keyring the container keeps the caller's keyring
	set_args try-syscall --find-session-key agentrt-canary
	run "$ks" --session-key agentrt-canary "$secret" timeout 30 "$AGENTRT" --root "$TEST_ROOT" run --no-new-keyring --bundle "$BUNDLE" c3
	[ "$status" -eq 0 ] || fail "run --no-new-keyring: $output"
	[ "$output" = "$secret" ] || fail "run --no-new-keyring: the probe did not find the caller's key: $output"
}

# key_count KUID: the keys the host charges to KUID (/proc/key-users: qnkeys), 0 for none.
key_count() {
	local uid n rest
	while read -r uid n rest; do
		[ "$uid" = "$1:" ] || continue
		read -r _ q _ <<<"$rest"
		echo "${q%%/*}"
		return 0
	done </proc/key-users
	echo 0
}

# keyring-quota: each exec joins a new anonymous session keyring (keyring-leak) that is charged
# to the uid making it for as long as the exec's process lives.  A user namespace's root is an
# ordinary host uid, with 200 keys (/proc/sys/kernel/keys/maxkeys): charged there, 200 running
# execs would leave the container no key to add (add_key: EDQUOT; the kernel lets a session
# keyring itself overrun the quota, so the execs would still start).  The exec's keyring is
# made before the exec takes the container's uid, as the runtime's (here the host's root);
# runc's execs join the container's one keyring.  Either way the container's uid is not
# charged a key an exec (a bound well under 250, other files may run containers mapped alike).
@test "keyring-quota: 250 execs that stay running in a user-namespace container all start, none charged to the container's uid (oci, agent)" {
	requires userns
	local profile profiles=(oci) i n pids before after
	is_agentrt && profiles+=(agent)
	add_userns
	chown -R 100000:100000 "$ROOTFS"
	set_args sleep 1000
	for profile in "${profiles[@]}"; do
		# (the agent profile's execs are the same code: fewer of them)
		n=250
		[ "$profile" = oci ] || n=50
		AGENTRT_PROFILE=$profile run_detached "k-$profile"
		[ "$status" -eq 0 ] || fail "$profile: run -d: $output"
		before=$(key_count 100000)
		for ((i = 0; i < n; i++)); do
			rt_bg exec -d "k-$profile" sleep 1000
			[ "$status" -eq 0 ] || fail "$profile: exec $i: $output"
		done
		after=$(key_count 100000)
		pids=$(rt ps "k-$profile" | grep -c .)
		[ "$pids" -gt "$n" ] || fail "$profile: $pids processes"
		[ $((after - before)) -lt $((n * 2 / 5)) ] ||
			fail "$profile: $n running execs: keys of uid 100000 $before -> $after"
		rt kill "k-$profile" KILL
		wait_for_status "k-$profile" stopped
		rt delete "k-$profile"
	done
}

# ---------------------------------------------------------------- CVE-2026-30892 (config path)

# (uid_t)-1 and (gid_t)-1 are "leave it unchanged" to setresuid/setresgid: a process.user of
# 4294967295 in config.json or in `exec --process` ran the program as root (the init's and the
# exec helper's uid 0), under --profile oci and agent alike.  `exec --user` refused it already
# (escapes.bats CVE-2026-30892); the config path must too, before anything is made.
@test "CVE-2026-30892: process.user uid or gid 4294967295 in config.json or exec --process is refused, never root" {
	local field profile profiles=(oci)
	is_agentrt && profiles+=(agent)
	set_args sh -c 'echo "$(id -u):$(id -g):$(id -G)"'
	for field in '.uid = 4294967295' '.gid = 4294967295' '.additionalGids = [4294967295]'; do
		for profile in "${profiles[@]}"; do
			cp "$BUNDLE/config.json" "$BUNDLE/config.bad.json"
			jq ".process.user = ({uid: 1000, gid: 1000} | $field)" "$BUNDLE/config.json" >"$BUNDLE/c.json"
			mv "$BUNDLE/c.json" "$BUNDLE/config.json"
			if is_agentrt; then
				run rt --profile "$profile" run --bundle "$BUNDLE" u1
			else
				run rt run --bundle "$BUNDLE" u1
			fi
			mv "$BUNDLE/config.bad.json" "$BUNDLE/config.json"
			assert_clean_failure
			# runc 1.1 refuses too, in its own words ("uids and gids must be in range")
			! is_agentrt || [[ "$output" == *4294967295* && "$output" != *$'\n'* ]] ||
				fail "$profile $field: not one line naming the id: $output"
			[ -z "$(rt list -q)" ] || fail "$profile $field: left behind: $(rt list)"
		done
	done

	set_args sleep 1000
	run_detached c1
	[ "$status" -eq 0 ] || fail "run -d: $output"
	for field in '.uid = 4294967295' '.gid = 4294967295' '.additionalGids = [4294967295]'; do
		jq -n "{args: [\"id\"], cwd: \"/\", user: ({uid: 1000, gid: 1000} | $field)}" >"$BUNDLE/p.json"
		run rt exec --process "$BUNDLE/p.json" c1
		assert_clean_failure
		! is_agentrt || [[ "$output" == *4294967295* ]] || fail "exec --process $field: $output"
	done
}
