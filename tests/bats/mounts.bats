#!/usr/bin/env bats
# mounts.bats - mounts from the config: bind ro/rw, tmpfs size/mode, flags, mount points
# created inside the rootfs only, rootfsPropagation, readonly root.  Checked from the host
# through /proc/<pid>/mountinfo of the container's init, and from inside.

load helpers

# mountinfo line of mount point $2 in the mount namespace of pid $1
mnt_line() {
	awk -v m="$2" '$5 == m' "/proc/$1/mountinfo" | tail -n1
}

start_with_mounts() { # JQ-ARRAY-OF-MOUNTS
	update_config ".mounts += $1"
	set_args sleep 1000
	run_detached c1
	[ "$status" -eq 0 ] || fail "run -d: $output"
	PID=$(container_pid c1)
}

@test "read-only bind mount is really read-only" {
	mkdir "$BUNDLE/vol"
	echo host-data >"$BUNDLE/vol/file"
	start_with_mounts "[{\"destination\": \"/vol\", \"type\": \"bind\", \"source\": \"$BUNDLE/vol\", \"options\": [\"rbind\", \"ro\"]}]"
	line=$(mnt_line "$PID" /vol)
	[ -n "$line" ] || fail "/vol is not a mount point in the container"
	[[ "$(awk '{print $6}' <<<"$line")" =~ (^|,)ro(,|$) ]] || fail "not ro: $line"
	run rt exec c1 cat /vol/file
	[ "$output" = host-data ]
	run rt exec c1 sh -c 'echo x > /vol/new'
	[ "$status" -ne 0 ]
	run rt exec c1 sh -c 'echo x >> /vol/file'
	[ "$status" -ne 0 ]
	[ ! -e "$BUNDLE/vol/new" ]
	[ "$(cat "$BUNDLE/vol/file")" = host-data ]
	# The host's own view of the directory is untouched.
	[ -z "$(mounts_below "$BUNDLE/vol")" ]
}

@test "read-write bind mount writes through to the host" {
	mkdir "$BUNDLE/vol"
	start_with_mounts "[{\"destination\": \"/vol\", \"type\": \"bind\", \"source\": \"$BUNDLE/vol\", \"options\": [\"bind\"]}]"
	run rt exec c1 sh -c 'echo from-container > /vol/new'
	[ "$status" -eq 0 ] || fail "$output"
	[ "$(cat "$BUNDLE/vol/new")" = from-container ]
}

@test "bind mount of a single file" {
	echo file-data >"$BUNDLE/hostfile"
	start_with_mounts "[{\"destination\": \"/etc/injected\", \"type\": \"bind\", \"source\": \"$BUNDLE/hostfile\", \"options\": [\"bind\", \"ro\"]}]"
	run rt exec c1 cat /etc/injected
	[ "$output" = file-data ]
	[ -f "$ROOTFS/etc/injected" ]
}

@test "tmpfs without mode= takes the mode of the directory it covers, as runc; a new one gets 1777" {
	mkdir "$ROOTFS/priv" "$ROOTFS/stk" "$ROOTFS/given"
	chmod 0710 "$ROOTFS/priv"
	chmod 'a=rwx,ug+s,+t' "$ROOTFS/stk"
	start_with_mounts '[{"destination": "/priv", "type": "tmpfs", "source": "tmpfs", "options": ["size=1m"]},
		{"destination": "/stk", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid"]},
		{"destination": "/given", "type": "tmpfs", "source": "tmpfs", "options": ["mode=0444"]},
		{"destination": "/made/here", "type": "tmpfs", "source": "tmpfs"}]'
	# the kernel's record of each superblock, read from the host
	[[ "$(mnt_line "$PID" /priv | awk '{print $NF}')" =~ (^|,)mode=710(,|$) ]] ||
		fail "/priv: $(mnt_line "$PID" /priv)"
	[[ "$(mnt_line "$PID" /stk | awk '{print $NF}')" =~ (^|,)mode=7777(,|$) ]] ||
		fail "/stk: $(mnt_line "$PID" /stk)"
	run rt exec c1 stat -c '%a %A' /priv /stk /given /made/here
	[ "$status" -eq 0 ] || fail "$output"
	[ "${lines[0]}" = "710 drwx--x---" ] || fail "/priv: ${lines[0]}"
	[ "${lines[1]}" = "7777 drwsrwsrwt" ] || fail "/stk: ${lines[1]}"
	[ "${lines[2]}" = "444 dr--r--r--" ] || fail "/given (mode= wins): ${lines[2]}"
	[ "${lines[3]}" = "1777 drwxrwxrwt" ] || fail "/made/here (new): ${lines[3]}"
}

@test "idmapped bind mount (spec 1.2): on-disk ids shown through the mapping, new files owned on disk as mapped back" {
	requires root
	mkdir "$BUNDLE/vol"
	echo zero >"$BUNDLE/vol/f0"
	echo thousand >"$BUNDLE/vol/f1000"
	chown 1000:1000 "$BUNDLE/vol/f1000"
	update_config '.process.user = {"uid": 1000, "gid": 1000}'
	start_with_mounts "[{\"destination\": \"/vol\", \"type\": \"bind\", \"source\": \"$BUNDLE/vol\", \"options\": [\"bind\", \"idmap\"],
		\"uidMappings\": [{\"containerID\": 0, \"hostID\": 1000, \"size\": 1}],
		\"gidMappings\": [{\"containerID\": 0, \"hostID\": 1000, \"size\": 1}]}]"
	[[ "$(mnt_line "$PID" /vol | awk '{print $6}')" =~ (^|,)idmapped(,|$) ]] || fail "not idmapped: $(mnt_line "$PID" /vol)"
	run rt exec c1 stat -c '%n %u:%g' /vol /vol/f0 /vol/f1000
	[ "$status" -eq 0 ] || fail "$output"
	[ "${lines[0]}" = "/vol 1000:1000" ] && [ "${lines[1]}" = "/vol/f0 1000:1000" ] &&
		[ "${lines[2]}" = "/vol/f1000 65534:65534" ] || fail "ids inside: $output"
	# the container's uid 1000 writes: on the host the file is owned by 0, as the mapping says
	run rt exec c1 sh -c 'echo new > /vol/new'
	[ "$status" -eq 0 ] || fail "write: $output"
	[ "$(stat -c %u:%g "$BUNDLE/vol/new")" = 0:0 ] || fail "on the host: $(stat -c %u:%g "$BUNDLE/vol/new")"
	# the host's own view is not idmapped
	[ "$(stat -c %u "$BUNDLE/vol/f1000")" = 1000 ]
	[ -z "$(mounts_below "$BUNDLE/vol")" ]
}

@test "idmapped bind mount in a user namespace: idmap alone uses the container's mappings (a volume owned by host root is root's inside)" {
	requires userns
	mkdir "$BUNDLE/vol" "$ROOTFS/vol" # the mapped root cannot make the mount point in the rootfs
	echo zero >"$BUNDLE/vol/f0"
	add_userns
	start_with_mounts "[{\"destination\": \"/vol\", \"type\": \"bind\", \"source\": \"$BUNDLE/vol\", \"options\": [\"rbind\", \"idmap\"]}]"
	run rt exec c1 sh -c 'stat -c "%u:%g" /vol/f0; echo new > /vol/new && stat -c "%u:%g" /vol/new'
	[ "$status" -eq 0 ] || fail "$output"
	[ "${lines[0]}" = 0:0 ] && [ "${lines[1]}" = 0:0 ] || fail "inside: $output"
	# written by the container's root: on disk as host root, not as host 100000
	[ "$(stat -c %u:%g "$BUNDLE/vol/new")" = 0:0 ] || fail "on the host: $(stat -c %u:%g "$BUNDLE/vol/new")"
}

@test "idmapped bind mount, user namespace joined by path: idmap alone uses that namespace's mappings (as runc 1.2)" {
	requires userns
	mkdir "$BUNDLE/vol" "$ROOTFS/vol"
	echo zero >"$BUNDLE/vol/f0"
	chown 100:211 "$BUNDLE/vol/f0"
	update_config '.linux.namespaces += [{"type": "user"}] |
		.linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}] |
		.linux.gidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}] |
		.process.args = ["sleep", "1000"]'
	run_detached target
	[ "$status" -eq 0 ] || fail "$output"
	tpid=$(container_pid target)
	update_config '.linux.namespaces |= map(if .type == "user" then .path = "/proc/'"$tpid"'/ns/user" else . end) |
		del(.linux.uidMappings) | del(.linux.gidMappings) | .linux.cgroupsPath += "-c2" |
		.mounts += [{"destination": "/vol", "type": "bind", "source": "'"$BUNDLE/vol"'", "options": ["rbind", "idmap"]}] |
		.process.args = ["sh", "-c", "stat -c %u:%g /vol/f0; echo new > /vol/new"]'
	run rt run --bundle "$BUNDLE" c2 </dev/null
	[ "$status" -eq 0 ] || fail "$output"
	[ "$output" = 100:211 ] || fail "inside: $output"
	[ "$(stat -c %u:%g "$BUNDLE/vol/new")" = 0:0 ] || fail "on the host: $(stat -c %u:%g "$BUNDLE/vol/new")"
}

@test "idmapped mounts: bad requests fail create naming the mount, leaving nothing" {
	mkdir "$BUNDLE/vol"
	set_args true
	for m in '{"destination": "/vol", "type": "tmpfs", "source": "tmpfs", "options": ["idmap"], "uidMappings": [{"containerID": 0, "hostID": 1000, "size": 1}], "gidMappings": [{"containerID": 0, "hostID": 1000, "size": 1}]}|an idmapped mount must be a bind mount' \
		'{"destination": "/vol", "type": "bind", "source": "VOL", "options": ["bind", "idmap"]}|`idmap` without uidMappings and gidMappings needs the container'"'"'s' \
		'{"destination": "/vol", "type": "bind", "source": "VOL", "options": ["bind"], "uidMappings": [{"containerID": 0, "hostID": 1000, "size": 1}]}|needs both uidMappings and gidMappings' \
		'{"destination": "/vol", "type": "bind", "source": "/nonexistent/agentrt-vol", "options": ["bind", "idmap"], "uidMappings": [{"containerID": 0, "hostID": 1000, "size": 1}], "gidMappings": [{"containerID": 0, "hostID": 1000, "size": 1}]}|/nonexistent/agentrt-vol'; do
		cp "$BUNDLE/config.json" "$BUNDLE/orig.json"
		update_config ".mounts += [${m%%|*}]"
		sed -i "s|\"VOL\"|\"$BUNDLE/vol\"|" "$BUNDLE/config.json"
		run rt run --bundle "$BUNDLE" c1
		[ "$status" -ne 0 ] && [[ "$output" == *"${m#*|}"* ]] || fail "${m%%|*}: $status: $output"
		[ "$(wc -l <<<"$output")" -eq 1 ] || fail "not one line: $output"
		[ -z "$(rt list -q)" ] && [ -z "$(mounts_below "$BUNDLE")" ] || fail "left behind"
		cp "$BUNDLE/orig.json" "$BUNDLE/config.json"
	done
	# the agent profile: a mapping that makes a container user host root on the volume
	update_config ".mounts += [{\"destination\": \"/vol\", \"type\": \"bind\", \"source\": \"$BUNDLE/vol\", \"options\": [\"bind\", \"idmap\"],
		\"uidMappings\": [{\"containerID\": 1000, \"hostID\": 0, \"size\": 1}], \"gidMappings\": [{\"containerID\": 0, \"hostID\": 1000, \"size\": 1}]}]"
	run rt --profile agent run --bundle "$BUNDLE" c1
	[ "$status" -ne 0 ] && [[ "$output" == *"maps container uid 1000 to host root is not allowed"* ]] || fail "agent: $status: $output"
}

@test "a relative mount destination is taken from the container's / (as runc and crun)" {
	start_with_mounts '[{"destination": "rel/scratch", "type": "tmpfs", "source": "tmpfs", "options": ["size=1m"]}]'
	[ -n "$(mnt_line "$PID" /rel/scratch)" ] || fail "not at /rel/scratch: $(awk '{print $5}' "/proc/$PID/mountinfo" | tr '\n' ' ')"
	[ -d "$ROOTFS/rel/scratch" ] && [ ! -e "$BUNDLE/rel" ]
}

@test "nosuid, nodev and noexec are applied" {
	mkdir "$BUNDLE/vol"
	cp "$ROOTFS/bin/busybox" "$BUNDLE/vol/bb"
	start_with_mounts "[{\"destination\": \"/vol\", \"type\": \"bind\", \"source\": \"$BUNDLE/vol\", \"options\": [\"rbind\", \"nosuid\", \"nodev\", \"noexec\"]}]"
	opts=$(mnt_line "$PID" /vol | awk '{print $6}')
	for o in nosuid nodev noexec; do
		[[ "$opts" =~ (^|,)$o(,|$) ]] || fail "$o missing: $opts"
	done
	run rt exec c1 /vol/bb true
	[ "$status" -ne 0 ] || fail "executed from a noexec mount"
}

# A program on a noexec mount passed the mode-bit check, so create succeeded and the
# execve failed after start, as the container's exit status 127 ("not found"); runc
# and crun refuse it at create with "permission denied" (Podman: exit status 126).
@test "noexec-program-at-create: a program on a noexec mount fails create, not after start" {
	mkdir "$BUNDLE/vol"
	printf '#!/bin/sh\necho ran\n' >"$BUNDLE/vol/script"
	chmod 755 "$BUNDLE/vol/script"
	update_config ".mounts += [{\"destination\": \"/vol\", \"type\": \"bind\", \"source\": \"$BUNDLE/vol\", \"options\": [\"rbind\", \"noexec\"]}]"
	set_args /vol/script
	rt_bg create --bundle "$BUNDLE" c2
	assert_clean_failure
	[[ "$output" == *"permission denied"* ]] || fail "$output"
	is_agentrt && { [[ "$output" == *'exec: "/vol/script": permission denied'* ]] || fail "$output"; }
	run rt state c2
	[ "$status" -ne 0 ] || fail "c2 left behind: $output"
	# found through PATH the same
	update_config '.process.env += ["PATH=/vol:/bin"]'
	set_args script
	rt_bg create --bundle "$BUNDLE" c3
	assert_clean_failure
	[[ "$output" == *"permission denied"* ]] || fail "$output"
	# the same program on an exec mount runs; an exec of it into a container fails
	update_config '.mounts[-1].options = ["rbind"]'
	set_args /vol/script
	run rt run --bundle "$BUNDLE" c4
	[ "$status" -eq 0 ] && [ "$output" = ran ] || fail "exec mount: $output"
	start_with_mounts "[{\"destination\": \"/vol2\", \"type\": \"bind\", \"source\": \"$BUNDLE/vol\", \"options\": [\"rbind\", \"noexec\"]}]"
	run rt exec c1 /vol2/script
	assert_clean_failure
	[[ "$output" == *"permission denied"* ]] || fail "exec: $output"
}

@test "tmpfs with size and mode" {
	start_with_mounts '[{"destination": "/scratch", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "nodev", "size=1m", "mode=1770"]}]'
	line=$(mnt_line "$PID" /scratch)
	[ "$(awk '{print $(NF-2)}' <<<"$line")" = tmpfs ] || fail "not tmpfs: $line"
	grep -q 'size=1024k' <<<"$line" || fail "size not 1m: $line"
	grep -q 'mode=1770' <<<"$line" || fail "mode not 1770: $line"
	run rt exec c1 stat -c %a /scratch
	[ "$output" = 1770 ]
	run rt exec c1 dd if=/dev/zero of=/scratch/big bs=1k count=2048
	[ "$status" -ne 0 ] || fail "wrote 2 MiB into a 1 MiB tmpfs"
}

# acl, noacl, iversion, noiversion, silent and loud are mount(2) superblock flags (runc passes
# them as MS_POSIXACL, MS_I_VERSION, MS_SILENT; a file system that decides them itself, as
# tmpfs does, takes them as no-ops) and features lists them; fsconfig() has no generic key for
# them and tmpfs refused each word ("Unknown parameter 'acl'"), failing create.
@test "mount-sb-flag-words: acl, noacl, iversion, noiversion, silent and loud on a tmpfs mount, as runc" {
	start_with_mounts '[{"destination": "/scratch", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "acl", "iversion", "silent", "size=1m"]},
		{"destination": "/scratch2", "type": "tmpfs", "source": "tmpfs", "options": ["noacl", "noiversion", "loud", "mode=700"]}]'
	line=$(mnt_line "$PID" /scratch)
	[ "$(awk '{print $(NF-2)}' <<<"$line")" = tmpfs ] && grep -q 'size=1024k' <<<"$line" || fail "/scratch: $line"
	line=$(mnt_line "$PID" /scratch2)
	[ "$(awk '{print $(NF-2)}' <<<"$line")" = tmpfs ] && grep -q 'mode=700' <<<"$line" || fail "/scratch2: $line"
}

@test "missing mount points are created inside the rootfs only" {
	d=/agentrt-mp-$$-$RANDOM
	start_with_mounts "[{\"destination\": \"$d/deep/dir\", \"type\": \"tmpfs\", \"source\": \"tmpfs\", \"options\": [\"size=1m\"]},
		{\"destination\": \"$d/file\", \"type\": \"bind\", \"source\": \"$BUNDLE/config.json\", \"options\": [\"bind\", \"ro\"]}]"
	[ -d "$ROOTFS$d/deep/dir" ]
	[ -f "$ROOTFS$d/file" ]
	[ ! -e "$d" ] || fail "mount point created on the host: $d"
	[ -n "$(mnt_line "$PID" "$d/deep/dir")" ]
}

@test "mounts are applied in order" {
	start_with_mounts '[{"destination": "/m", "type": "tmpfs", "source": "tmpfs", "options": ["size=1m"]},
		{"destination": "/m/inner", "type": "tmpfs", "source": "tmpfs", "options": ["size=2m"]}]'
	[ -n "$(mnt_line "$PID" /m)" ]
	mnt_line "$PID" /m/inner | grep -q size=2048k
	# /m/inner was created on the first tmpfs, not in the rootfs.
	[ ! -e "$ROOTFS/m/inner" ]
}

@test "proc and sysfs are the real filesystems" {
	set_args sleep 1000
	run_detached c1
	run rt exec c1 stat -f -c %T /proc
	[ "$output" = proc ]
	run rt exec c1 stat -f -c %T /sys
	[ "$output" = sysfs ]
}

@test "root.readonly makes / read-only" {
	update_config '.root.readonly = true'
	set_args sleep 1000
	run_detached c1
	[ "$status" -eq 0 ] || fail "run -d: $output"
	PID=$(container_pid c1)
	[[ "$(mnt_line "$PID" / | awk '{print $6}')" =~ (^|,)ro(,|$) ]]
	run rt exec c1 touch /newfile
	[ "$status" -ne 0 ]
	[ ! -e "$ROOTFS/newfile" ]
}

@test "rootfsPropagation private: no shared peer group on /" {
	update_config '.linux.rootfsPropagation = "private"'
	set_args sleep 1000
	run_detached c1
	[ "$status" -eq 0 ] || fail "run -d: $output"
	line=$(mnt_line "$(container_pid c1)" /)
	! grep -q 'shared:' <<<"$line" || fail "root is shared: $line"
}

@test "rootfsPropagation shared: / is in a shared peer group" {
	agentrt_only "runc 1.1 leaves the root mount private"
	update_config '.linux.rootfsPropagation = "shared"'
	set_args sleep 1000
	run_detached c1
	[ "$status" -eq 0 ] || fail "run -d: $output"
	line=$(mnt_line "$(container_pid c1)" /)
	grep -q 'shared:' <<<"$line" || fail "root not shared: $line"
}

# containerd (a Kubernetes pod with a Bidirectional mount): the caller's / is rshared, the
# rootfs is a mount point of its own (the image's overlay) and rootfsPropagation is rshared.
# pivot_root refuses a shared new root: the mount at the rootfs itself must be made private
# first (its parent directory's mount is not enough), / is made rshared again after the pivot.
@test "rshared-rootfs-mountpoint: rootfsPropagation rshared with the rootfs a shared mount point (containerd's overlay) runs, and a mount made inside reaches the caller" {
	mkdir -p "$BUNDLE/prop" "$ROOTFS/prop"
	update_config '.linux.rootfsPropagation = "rshared" |
		.process.capabilities = {"bounding": ["CAP_SYS_ADMIN"], "effective": ["CAP_SYS_ADMIN"], "permitted": ["CAP_SYS_ADMIN"]} |
		del(.linux.seccomp) |
		.mounts += [{"destination": "/prop", "type": "bind", "source": "'"$BUNDLE/prop"'", "options": ["rbind", "rshared"]}]'
	cat >"$ROOTFS/inner.sh" <<-'EOF'
		mkdir -p /prop/in && mount -t tmpfs -o size=1m t /prop/in || exit 1
		awk '$5 == "/" && / shared:/ {f = 1} END {exit !f}' /proc/self/mountinfo && echo inside-ok
	EOF
	set_args sh /inner.sh
	# all of it in a mount namespace of the test's own (made private first: nothing reaches the host's)
	cat >"$BUNDLE/outer.sh" <<-'EOF'
		mount --make-rshared / &&
			mount --bind "$1" "$1" && mount --bind "$2" "$2" &&
			"$3" --root "$4" run --bundle "$5" c1 </dev/null || exit 1
		grep -q " $2/in " /proc/self/mountinfo && echo propagated
	EOF
	run timeout 60 unshare -m --propagation private bash "$BUNDLE/outer.sh" "$ROOTFS" "$BUNDLE/prop" "$AGENTRT" "$TEST_ROOT" "$BUNDLE"
	[ "$status" -eq 0 ] || fail "$output"
	[ "${lines[0]}" = inside-ok ] && [ "${lines[1]}" = propagated ] || fail "$output"
	[ -z "$(mounts_below "$BUNDLE")" ] || fail "host sees: $(mounts_below "$BUNDLE")"
}

# rootfsPropagation private or slave (not recursive) changes only the caller's "/" in the new
# mount namespace: a rootfs below another mount that is shared (an engine's /run, /var/lib on a
# shared mount) stays in the caller's peer group, so the rootfs bind and every mount made in it
# (/proc, /dev, ...) would propagate back to the caller's namespace and pivot_root refuses the
# shared root.  runc makes the mount holding the rootfs private whatever the propagation.
@test "rootfs-propagation-leak: rootfsPropagation private or slave with the rootfs below a shared mount runs, and no mount of the container reaches the caller" {
	set_args true
	cat >"$BUNDLE/outer.sh" <<-'EOF'
		# $1 bundle, $2 runtime, $3 --root, $4 propagation
		mount --bind "$1" "$1" && mount --make-shared "$1" || exit 1
		"$2" --root "$3" run --bundle "$1" "c-$4" </dev/null || echo "run failed: $?"
		awk -v d="$1/rootfs" '$5 == d || index($5, d "/") == 1 {print "leaked:", $5}' /proc/self/mountinfo
		echo done
	EOF
	for p in private slave; do
		update_config ".linux.rootfsPropagation = \"$p\""
		run timeout 60 unshare -m --propagation private bash "$BUNDLE/outer.sh" "$BUNDLE" "$AGENTRT" "$TEST_ROOT" "$p"
		[ "$status" -eq 0 ] || fail "$p: $output"
		[ "$output" = done ] || fail "$p: $output"
	done
	[ -z "$(mounts_below "$BUNDLE")" ] || fail "host sees: $(mounts_below "$BUNDLE")"
}

# A mount's own propagation option is kept whatever rootfsPropagation says, as runc applies the
# root's first: containerd gives a pod with Bidirectional (rshared), HostToContainer (rslave)
# and None (rprivate) mounts rootfsPropagation rshared, and a HostToContainer pod rslave.
@test "mount-propagation-kept: a bind's own rshared, rslave or rprivate survives rootfsPropagation rshared, rslave and rprivate" {
	mkdir -p "$BUNDLE/src"
	update_config '.mounts += [
		{"destination": "/m-sh", "type": "bind", "source": "'"$BUNDLE/src"'", "options": ["rbind", "rshared"]},
		{"destination": "/m-sl", "type": "bind", "source": "'"$BUNDLE/src"'", "options": ["rbind", "rslave"]},
		{"destination": "/m-pr", "type": "bind", "source": "'"$BUNDLE/src"'", "options": ["rbind", "rprivate"]},
		{"destination": "/m-hid/x", "type": "bind", "source": "'"$BUNDLE/src"'", "options": ["rbind", "rprivate"]},
		{"destination": "/m-hid", "type": "tmpfs", "source": "tmpfs", "options": ["size=1m"]}]'
	# (/m-hid/x is covered by the later /m-hid: nothing to give its propagation again)
	set_args cat /proc/self/mountinfo
	cat >"$BUNDLE/outer.sh" <<-'EOF'
		# $1 bundle, $2 runtime, $3 --root, $4 propagation
		mount --bind "$1/src" "$1/src" && mount --make-shared "$1/src" || exit 1
		"$2" --root "$3" run --bundle "$1" "c-$4" </dev/null
	EOF
	# the optional fields (7th to the "-") of mount point $2 in mountinfo $1
	tags() { awk -v m="$2" '$5 == m {t = ""; for (i = 7; $i != "-"; i++) t = t " " $i; print t}' <<<"$1"; }
	for p in rshared rslave rprivate; do
		update_config ".linux.rootfsPropagation = \"$p\""
		run timeout 60 unshare -m --propagation private bash "$BUNDLE/outer.sh" "$BUNDLE" "$AGENTRT" "$TEST_ROOT" "$p"
		[ "$status" -eq 0 ] || fail "$p: $output"
		[[ "$(tags "$output" /m-sh)" == *shared:* ]] || fail "$p: /m-sh not shared:$(tags "$output" /m-sh)"
		[[ "$(tags "$output" /m-sl)" != *shared:* ]] || fail "$p: /m-sl shared:$(tags "$output" /m-sl)"
		[ -z "$(tags "$output" /m-pr)" ] || fail "$p: /m-pr not private:$(tags "$output" /m-pr)"
		# rslave keeps the source's peer group as its master where the root's propagation left it one
		[ "$p" = rprivate ] || [[ "$(tags "$output" /m-sl)" == *master:* ]] || fail "$p: /m-sl not a slave:$(tags "$output" /m-sl)"
	done
}

# fsconfig() takes an option's value of at most 255 bytes; mount(2), which runc and crun use,
# took a page.  An overlay of a few deep layers (a sub-agent's grandchild names two upper layers
# in the data directory, ~140 bytes each under an engine's 64-character ids) is longer.
@test "overlay-long-options: an overlay whose lowerdir, upperdir and workdir are each longer than fsconfig takes mounts, escaped colons and layer order kept" {
	local deep=$BUNDLE/ovl/$(printf 'd%.0s' {1..90})/$(printf 'e%.0s' {1..90})/$(printf 'f%.0s' {1..90})
	mkdir -p "$deep"/{l1,l2,l3,'l:4',u,w}
	echo top >"$deep/l1/both"
	echo below >"$deep/l2/both"
	echo two >"$deep/l2/only2"
	echo three >"$deep/l3/only3"
	echo four >"$deep/l:4/only4"
	local lower="$deep/l1:$deep/l2:$deep/l3:${deep//:/\\:}/l\\:4"
	[ "${#lower}" -gt 255 ] && [ "${#deep}" -gt 255 ] || fail "not long enough: ${#lower} ${#deep}"
	start_with_mounts "$(jq -n --arg l "lowerdir=$lower" --arg u "upperdir=$deep/u" --arg w "workdir=$deep/w" \
		'[{destination: "/ovl", type: "overlay", source: "overlay", options: [$l, $u, $w]}]')"
	[[ "$(mnt_line "$PID" /ovl)" == *" - overlay "* ]] || fail "no overlay at /ovl: $(mnt_line "$PID" /ovl)"
	run rt exec c1 cat /ovl/both /ovl/only2 /ovl/only3 /ovl/only4
	[ "$status" -eq 0 ] && [ "$output" = "$(printf 'top\ntwo\nthree\nfour')" ] || fail "$output"
	rt exec c1 sh -c 'echo new >/ovl/written'
	[ "$(cat "$deep/u/written")" = new ] || fail "the write did not reach the upper layer"
	[ ! -e "$deep/l1/written" ]
}

@test "overlay-long-options: a missing layer of a long lowerdir fails create with one line naming it, and leaves nothing" {
	local deep=$BUNDLE/ovl/$(printf 'd%.0s' {1..90})/$(printf 'e%.0s' {1..90})
	mkdir -p "$deep/l1" "$deep/u" "$deep/w"
	local arr
	arr=$(jq -nc --arg l "lowerdir=$deep/l1:$deep/missing-layer:$deep/l1" --arg u "upperdir=$deep/u" \
		--arg w "workdir=$deep/w" '[{destination: "/ovl", type: "overlay", source: "overlay", options: [$l, $u, $w]}]')
	update_config ".mounts += $arr"
	set_args true
	create_container c1
	assert_clean_failure
	is_agentrt || return 0
	[[ "$output" == *"create \`c1\`"*"missing-layer"* ]] || fail "the error does not name the layer: $output"
	[ "$(grep -c . <<<"$output")" = 1 ] || fail "more than one line: $output"
	[ -z "$(rt list -q)" ]
	[ -z "$(mounts_below "$BUNDLE")" ]
}

@test "the container's mounts do not appear in the host's mount namespace" {
	start_with_mounts '[{"destination": "/scratch", "type": "tmpfs", "source": "tmpfs", "options": ["size=1m"]}]'
	[ -z "$(mounts_below "$BUNDLE")" ] || fail "host sees: $(mounts_below "$BUNDLE")"
	! grep -q ' /scratch ' /proc/self/mountinfo
}

@test "mount with a nonexistent bind source fails and leaves nothing" {
	update_config '.mounts += [{"destination": "/vol", "type": "bind", "source": "/nonexistent-agentrt-src", "options": ["bind"]}]'
	set_args true
	create_container c1
	assert_clean_failure
	[ -z "$(rt list -q)" ]
}

# In a new user namespace the init has the mapped credentials: a bind source below a directory
# only the host's root may search must still bind (crun, and runc 1.2, open the sources
# outside the user namespace first; so does agentrt).
@test "bind mount source below a root-only directory, in a user namespace" {
	requires userns
	local priv=$BATS_TEST_TMPDIR/private-$$
	mkdir -p "$priv/src"
	chmod 0700 "$priv"
	echo visible >"$priv/src/file"
	chmod 0755 "$priv/src"
	chmod 0644 "$priv/src/file"
	update_config ".linux.namespaces += [{\"type\": \"user\"}] |
		.linux.uidMappings = [{\"containerID\": 0, \"hostID\": 100000, \"size\": 65536}] |
		.linux.gidMappings = [{\"containerID\": 0, \"hostID\": 100000, \"size\": 65536}] |
		.mounts += [{\"destination\": \"/mnt\", \"type\": \"bind\", \"source\": \"$priv/src\", \"options\": [\"rbind\", \"ro\"]}]"
	set_args cat /mnt/file
	run rt run --bundle "$BUNDLE" c1
	[ "$status" -eq 0 ] || fail "$output"
	[ "$output" = visible ]
}

# A bind source /proc/self/fd/N (how `agentrt sandbox` binds the home's files): the file the
# caller's descriptor N holds is bound; when the path that file had now holds another file
# (swapped between the caller's check and the bind), the mount fails instead of binding it.
@test "bind source /proc/self/fd/N: the descriptor's file, and never another one at its path" {
	agentrt_only "fd bind sources"
	echo checked-file >"$BUNDLE/dot"
	update_config '.mounts += [{"destination": "/dot", "type": "bind", "source": "/proc/self/fd/7", "options": ["bind", "ro"]}]'
	set_args cat /dot
	run rt run --bundle "$BUNDLE" c1 7<"$BUNDLE/dot"
	[ "$status" -eq 0 ]
	[ "$output" = checked-file ]
	rt delete -f c1 >/dev/null 2>&1 || true
	# the checked file is replaced at its path; the kernel then names the descriptor
	# "<path> (deleted)", and an attacker made a file of exactly that name
	exec 7<"$BUNDLE/dot"
	echo SECRET-KEY >"$BUNDLE/other"
	mv "$BUNDLE/other" "$BUNDLE/dot"
	echo SECRET-KEY >"$BUNDLE/dot (deleted)"
	run rt run --bundle "$BUNDLE" c2
	exec 7<&-
	[ "$status" -ne 0 ]
	[[ "$output" == *"another file than the one checked"* ]]
	[[ "$output" != *SECRET-KEY* ]]
	rt delete -f c2 >/dev/null 2>&1 || true
}

# mount_order_tree [userns]: a tree of binds whose later sources are paths inside the rootfs
# (written with the rootfs's host path, destinations too, as runc's own tests write them):
# each such source is what the earlier mounts made there, not the host's directory.
mount_order_tree() {
	local src=$BUNDLE/bind-src d
	for d in a/x b/y c/z; do
		mkdir -p "$src/$d"
		echo "$d" >"$src/$d/file"
		ln -s "$(dirname "$d")" "$src/sym-$(dirname "$d")"
	done
	chmod o-rwx "$src" # a userns root cannot reach it: the runtime's clones must be used
	mkdir -p "$ROOTFS/mnt" "$ROOTFS/final"
	local m='[]' r=$ROOTFS idmap=${1:-}
	add() { m=$(jq -c --arg s "$1" --arg d "$2" --arg o "$3" '. + [{source: $s, destination: $d, type: "bind", options: [$o, "rprivate"]}]' <<<"$m"); }
	# the sources inside the rootfs idmapped too (host 100000 shown as 0)
	addc() {
		add "$@"
		[ -z "$idmap" ] || m=$(jq -c '.[-1] += {uidMappings: [{containerID: 0, hostID: 100000, size: 65536}],
			gidMappings: [{containerID: 0, hostID: 100000, size: 65536}]} | .[-1].options += ["idmap"]' <<<"$m")
	}
	add "$src/a" /mnt bind
	add "$src/sym-b" /mnt/x bind
	add "$src/c" /mnt/x/y bind
	add "$src/sym-a" /mnt/x/y/z bind
	addc "$r/mnt/x" "$r/mnt/x/y/z/x" rbind
	addc "$r/mnt/x/y" "$r/mnt/x/y/z" rbind
	addc "$r/mnt" "$r/final" rbind
	update_config ".mounts += $m"
	set_args sh -c 'cat /final/x/y/z/z/x/y/z/x/file; stat -c %u /final'
	run rt run --bundle "$BUNDLE" c1
	[ "$status" -eq 0 ] || fail "run: $output"
	[ "${lines[0]}" = a/x ] || fail "read $output"
	# host root's directory through the idmapped mount (container 0 = host 100000): on disk 0
	# is seen as 100000 from outside any user namespace (the top mount only: "idmap" is not
	# recursive)
	if [ -n "$idmap" ]; then
		[ "${lines[1]}" = 100000 ] || fail "not idmapped: $output"
	fi
	# nothing made inside the rootfs under its own host path
	[ ! -e "$ROOTFS/${ROOTFS#/}" ] || fail "destination taken literally"
	[ -z "$(mounts_below "$ROOTFS")" ]
}

@test "mount-order: bind sources inside the rootfs name the tree the earlier mounts made (as runc)" {
	mount_order_tree
}

@test "mount-order: idmapped sources inside the rootfs are made in the mount order too (as runc 1.2)" {
	mount_order_tree idmap
}

@test "mount-order: the same in a user namespace (those sources are the init's, not the runtime's clones)" {
	requires userns
	add_userns
	mount_order_tree
}

# bind_flags SOURCE-FLAGS BIND-OPTIONS [userns]: the flags (/proc/self/mounts) a container sees
# on /mnt, a bind of a tmpfs whose mount has SOURCE-FLAGS (set with a bind remount, as
# runc's tests do), made in a mount namespace of the test's own.  Sets $status and $output.
bind_flags() {
	local opts
	opts=$(jq -cR 'split(",")' <<<"$2")
	mkdir -p "$BUNDLE/src" "$ROOTFS/mnt"
	update_config '.mounts = ([.mounts[] | select(.destination != "/mnt")] + [{"destination": "/mnt", "type": "bind", "source": "'"$BUNDLE/src"'", "options": '"$opts"'}]) |
		.process.args = ["awk", "$2 == \"/mnt\" {print $4}", "/proc/self/mounts"]'
	[ "${3:-}" != userns ] || add_userns
	cat >"$BUNDLE/outer.sh" <<-'EOS'
		mount -t tmpfs -o size=1m,rw,suid,dev,exec,strictatime t "$1" &&
			mount --bind -o "remount,$2" "$1" || exit 99
		"$3" --root "$4" run --bundle "$5" bf </dev/null
	EOS
	run timeout 60 unshare -m --propagation private bash "$BUNDLE/outer.sh" "$BUNDLE/src" "$1" \
		"$AGENTRT" "$TEST_ROOT" "$BUNDLE"
	[ "$status" -ne 99 ] || fail "source set-up: $output"
}

has_flag() { grep -qw -- "$1" <<<"$(tr , ' ' <<<"$output")"; }

@test "bind-flags: no flag keeps the source's; a flag makes the rest runc's remount defaults (cleared), atime kept unless set" {
	known_broken '^runc version 1\.(0|1)\.' "bind flags as runc 1.2 makes them"
	bind_flags ro,noexec,nosymfollow,nodiratime bind
	[ "$status" -eq 0 ] || fail "$output"
	has_flag ro && has_flag noexec && has_flag nosymfollow && has_flag nodiratime || fail "$output"
	bind_flags ro,noexec,nosymfollow,nodiratime bind,dev
	[ "$status" -eq 0 ] || fail "$output"
	has_flag rw && ! has_flag noexec && ! has_flag nosymfollow && has_flag nodiratime || fail "$output"
	bind_flags ro bind,nosuid,nodev,rprivate
	[ "$status" -eq 0 ] || fail "$output"
	has_flag rw && has_flag nosuid && has_flag nodev || fail "$output"
	bind_flags nosuid,nodev,noexec,noatime bind,dev,suid,exec,atime
	[ "$status" -eq 0 ] || fail "$output"
	! has_flag nosuid && ! has_flag nodev && ! has_flag noexec && has_flag noatime || fail "$output"
	bind_flags noatime bind,relatime
	[ "$status" -eq 0 ] || fail "$output"
	has_flag relatime && ! has_flag noatime || fail "$output"
	bind_flags noatime bind,nodiratime
	[ "$status" -eq 0 ] || fail "$output"
	has_flag nodiratime && has_flag relatime && ! has_flag noatime || fail "$output"
	bind_flags nodiratime bind,strictatime
	[ "$status" -eq 0 ] || fail "$output"
	! has_flag nodiratime && ! has_flag relatime && ! has_flag noatime || fail "$output"
	bind_flags relatime bind,noatime,nodiratime
	[ "$status" -eq 0 ] || fail "$output"
	has_flag noatime && has_flag nodiratime && ! has_flag relatime || fail "$output"
}

@test "bind-flags: in a user namespace the source's locked flags are kept, and clearing one is refused (as the kernel does)" {
	known_broken '^runc version 1\.(0|1)\.' "bind flags as runc 1.2 makes them"
	requires userns
	bind_flags rw,nodev,nosuid,noexec,noatime bind,ro userns
	[ "$status" -eq 0 ] || fail "$output"
	has_flag ro && has_flag nosuid && has_flag nodev && has_flag noexec && has_flag noatime || fail "$output"
	bind_flags ro,noexec,nosymfollow,nodiratime bind,dev userns
	[ "$status" -eq 0 ] || fail "$output"
	has_flag ro && has_flag noexec && has_flag nodiratime && ! has_flag nosymfollow || fail "$output"
	bind_flags ro bind,rw,nosuid,nodev userns
	[ "$status" -ne 0 ] || fail "rw over a ro source allowed: $output"
	assert_output_contains "operation not permitted"
	bind_flags nodiratime bind,strictatime userns
	[ "$status" -ne 0 ] || fail "atime changed: $output"
	[ -z "$(rt list -q)" ]
}

@test "bind-flags: a profile that hardens binds keeps what the source has (a ro source stays ro under nosuid,nodev)" {
	agentrt_only "the agent profile"
	cat >"$BUNDLE/p.json" <<-'EOF'
		{"extends": "oci", "mounts": {"hardenBinds": true}}
	EOF
	AGENTRT_PROFILE=$BUNDLE/p.json bind_flags ro,noexec bind
	[ "$status" -eq 0 ] || fail "$output"
	has_flag ro && has_flag noexec && has_flag nosuid && has_flag nodev || fail "$output"
}
