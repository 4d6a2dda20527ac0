#!/usr/bin/env bats
# integration/podman.bats - Podman 4.3 (root, cgroupfs, conmon) driving agentrt.
#
# Private storage under a temp dir; agentrt is selected both by path
# (`--runtime /abs/agentrt`) and by name through contrib/podman/containers.conf.
# Parity flows use `--runtime-flag profile=oci`; a few flows use the default
# profile and assert only what holds under both.

load lib
bats_require_minimum_version 1.5.0

IMG=localhost/agentrt-it/busybox:latest
PAUSE_IMG=localhost/agentrt-it/pause:latest

setup_file() {
	it_need_root
	it_need_bin podman conmon
	[ -x "$AGENTRT" ] || it_die "agentrt not built: $AGENTRT (run make)"
	it_tmp podman
	it_build_image "$IT_TMP/img"
	podman_setup "$IT_TMP/podman"
	PODMAN_CGROUP_PARENT=agentrt-it-podman-$$
	export PODMAN_CGROUP_PARENT
	pm import "$IT_TMP/img/rootfs.tar" "$IMG" >/dev/null
	# a pause image for pods (no registry here): busybox with a /pause that sleeps
	cp -a "$IT_TMP/img/rootfs" "$IT_TMP/pauseroot"
	printf '#!/bin/sh\nexec sleep 1000000\n' >"$IT_TMP/pauseroot/pause"
	chmod 755 "$IT_TMP/pauseroot/pause"
	tar -C "$IT_TMP/pauseroot" -cf "$IT_TMP/pause.tar" .
	pm import "$IT_TMP/pause.tar" "$PAUSE_IMG" >/dev/null
}

teardown_file() {
	[ -n "${IT_TMP:-}" ] || return 0
	local rc=0
	podman_teardown
	it_kill_under "$IT_TMP" || rc=1
	it_rm_cgroups "$PODMAN_CGROUP_PARENT"
	it_cleanup_tmp || rc=1
	return $rc
}

teardown() {
	pm --runtime "$AGENTRT" pod rm -a -f -t 0 >/dev/null 2>&1 || true
	pm --runtime "$AGENTRT" rm -a -f -t 0 >/dev/null 2>&1 || true
}

# prun [podman run options...] IMAGE CMD...: parity runtime (profile oci).
prun() {
	pm --runtime "$AGENTRT" --runtime-flag profile=oci run --network none \
		--cgroup-parent "/$PODMAN_CGROUP_PARENT" "$@"
}

@test "podman --runtime PATH run: output and exit code (profile oci)" {
	run prun --rm "$IMG" sh -c 'echo hello; exit 3'
	[ "$status" -eq 3 ]
	[ "$output" = hello ]
}

@test "podman --runtime agentrt (by name, contrib containers.conf, default profile): runs" {
	run pm --runtime agentrt run --rm --network none --cgroup-parent "/$PODMAN_CGROUP_PARENT" "$IMG" sh -c 'echo hi; exit 5'
	[ "$status" -eq 5 ]
	[ "$output" = hi ]
}

@test "podman run --rootfs" {
	cp -a "$IT_TMP/img/rootfs" "$IT_TMP/rootfs2"
	run prun --rm --rootfs "$IT_TMP/rootfs2" sh -c 'cat /proc/1/comm; exit 2'
	[ "$status" -eq 2 ]
	[ "$output" = cat ] || [ "$output" = sh ]
}

@test "podman run: a missing command fails with 127 and agentrt's message" {
	run -127 prun --rm "$IMG" /nonexistent
	[[ "$output" == *"create \`"*'exec: "/nonexistent": stat /nonexistent: no such file or directory'* ]]
}

@test "podman run -e -w -u, -v, --read-only" {
	mkdir -p "$IT_TMP/pvol"
	chmod 1777 "$IT_TMP/pvol"
	run prun --rm -e FOO=bar -w /tmp -u 1000:1000 -v "$IT_TMP/pvol:/data" "$IMG" sh -c 'echo $FOO $(pwd) $(id -u); echo x > /data/f'
	[ "$status" -eq 0 ]
	[ "$output" = "bar /tmp 1000" ]
	[ "$(cat "$IT_TMP/pvol/f")" = x ]
	run prun --rm --read-only --read-only-tmpfs=false "$IMG" touch /x
	[[ "$output" == *"Read-only file system"* ]]
}

@test "podman run --read-only (tmpfs on /tmp, /var/tmp, /run with tmpcopyup)" {
	run prun --rm --read-only "$IMG" sh -c 'touch /x; touch /tmp/y && echo tmp-ok'
	[[ "$output" == *"Read-only file system"* ]]
	[[ "$output" == *tmp-ok* ]]
	# tmpcopyup: the tmpfs starts with the image's files, modes, owners and
	# symlinks (copied, not followed)
	cp -a "$IT_TMP/img/rootfs" "$IT_TMP/rootfs-cu"
	mkdir -p "$IT_TMP/rootfs-cu/run/sub"
	echo marker >"$IT_TMP/rootfs-cu/run/sub/f"
	chown 1000:1000 "$IT_TMP/rootfs-cu/run/sub/f"
	chmod 640 "$IT_TMP/rootfs-cu/run/sub/f"
	ln -s /etc/shadow-on-host "$IT_TMP/rootfs-cu/run/link"
	for rt in runc "$AGENTRT --runtime-flag profile=oci"; do
		run pm --runtime $rt run --rm --network none --cgroup-parent "/$PODMAN_CGROUP_PARENT" --read-only --rootfs "$IT_TMP/rootfs-cu" \
			sh -c 'cat /run/sub/f; stat -c "%a %u" /run/sub/f; readlink /run/link; grep -c " /run tmpfs" /proc/mounts'
		[ "$status" -eq 0 ]
		[ "$(echo $output)" = "marker 640 1000 /etc/shadow-on-host 1" ]
	done
}

@test "podman run -m, --pids-limit, --cap-drop" {
	run prun --rm -m 64m --pids-limit 20 --cap-drop ALL "$IMG" sh -c 'cat /sys/fs/cgroup/memory/memory.limit_in_bytes /sys/fs/cgroup/pids/pids.max; grep CapEff /proc/self/status'
	[ "$status" -eq 0 ]
	[ "$(echo $output)" = "67108864 20 CapEff: 0000000000000000" ]
}

# Podman's --privileged passes every host device with its st_mode (type bits
# included) as fileMode: agentrt refused that config, so --privileged failed at create.
@test "podman run --privileged (profile oci): host devices with the host's modes" {
	local want
	want=$(stat -c '%F %t:%T %a' /dev/loop-control)
	run prun --rm --privileged "$IMG" stat -c '%F %t:%T %a' /dev/loop-control
	[ "$status" -eq 0 ] || it_die "$output"
	[ "$output" = "$want" ] || it_die "in the container: $output, on the host: $want"
}

# A program on a noexec volume: create fails with "permission denied", which Podman maps
# to exit status 126 (agentrt failed it after start: the container's 127, "not found").
@test "podman run: a program on a noexec volume fails with 126 (profile oci)" {
	mkdir -p "$IT_TMP/noexec"
	printf '#!/bin/sh\necho ran\n' >"$IT_TMP/noexec/script"
	chmod 755 "$IT_TMP/noexec/script"
	run -126 prun --rm -v "$IT_TMP/noexec:/vol:noexec" "$IMG" /vol/script
	[[ "$output" == *'permission denied'* ]] || it_die "$output"
	run prun --rm -v "$IT_TMP/noexec:/vol" "$IMG" /vol/script
	[ "$status" -eq 0 ] && [ "$output" = ran ] || it_die "exec volume: $output"
}

@test "podman run -it through a real pty" {
	run it_pty_podman
	[ "$status" -eq 4 ]
	[[ "$output" == */dev/pts/0* ]]
	[[ "$output" == *got-abc* ]]
}

it_pty_podman() {
	timeout 30 script -qec "podman --root $PODMAN_DIR/root --runroot $PODMAN_DIR/runroot --tmpdir $PODMAN_DIR/tmp --cgroup-manager cgroupfs --events-backend file --storage-driver overlay --runtime $AGENTRT --runtime-flag profile=oci run -it --rm --network none --cgroup-parent /$PODMAN_CGROUP_PARENT $IMG sh -c 'tty; read x; echo got-\$x; exit 4'" /dev/null <<<"abc"
}

@test "podman run -d, exec, stop, rm" {
	prun -d --name pd "$IMG" sh -c 'trap "exit 42" TERM; while :; do sleep 0.1; done'
	run pm --runtime "$AGENTRT" exec pd sh -c 'cat /proc/1/cmdline | tr "\0" " "; exit 4'
	[ "$status" -eq 4 ]
	[[ "$output" == *"trap"* ]]
	run -127 pm --runtime "$AGENTRT" exec pd nosuch
	pm --runtime "$AGENTRT" stop -t 5 pd
	[ "$(pm inspect -f '{{.State.ExitCode}}' pd)" = 42 ]
	pm --runtime "$AGENTRT" rm pd
	run pm inspect pd
	[ "$status" -ne 0 ]
}

@test "podman pause / unpause" {
	prun -d --name pp "$IMG" sleep 1000
	pm --runtime "$AGENTRT" pause pp
	[ "$(pm inspect -f '{{.State.Status}}' pp)" = paused ]
	id=$(pm inspect -f '{{.Id}}' pp)
	[ "$(cat /sys/fs/cgroup/freezer/$PODMAN_CGROUP_PARENT/libpod-$id/freezer.state)" = FROZEN ]
	pm --runtime "$AGENTRT" unpause pp
	[ "$(pm inspect -f '{{.State.Status}}' pp)" = running ]
	pm --runtime "$AGENTRT" exec pp true
	pm --runtime "$AGENTRT" rm -f -t 0 pp
}

@test "podman --annotation reaches the runtime (agentrt state)" {
	prun -d --name pa --annotation run.agentrt.test=hello "$IMG" sleep 1000
	id=$(pm inspect -f '{{.Id}}' pa)
	run "$AGENTRT" state "$id"
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | jq -r '.annotations["run.agentrt.test"]')" = hello ]
	[ "$(echo "$output" | jq -r .status)" = running ]
	pm --runtime "$AGENTRT" rm -f -t 0 pa
	run "$AGENTRT" state "$id"
	[ "$status" -ne 0 ]
}

@test "podman kill and wait with the exit code" {
	prun -d --name pk "$IMG" sleep 1000
	pm --runtime "$AGENTRT" kill pk
	[ "$(pm wait pk)" = 137 ]
}

# Podman 4.3 marks a pod's containers with CRI-O's annotations (ContainerType "container",
# SandboxID = the infra container); with the default (agent) profile the infra container polices
# the pod's network namespace and the others add to its policy instead of a second one.
# Podman pods with a user namespace: every container joins the infra container's user
# namespace (by path) and, without --share pid, gets a pid namespace of its own, which must
# belong to that user namespace.  agentrt refused that pair before.
@test "podman pod --uidmap (profile oci): containers join the pod's user namespace with pid namespaces of their own" {
	pm --runtime "$AGENTRT" --runtime-flag profile=oci pod create --name upod --network none \
		--cgroup-parent "/$PODMAN_CGROUP_PARENT" --infra-image "$PAUSE_IMG" --infra-command /pause \
		--uidmap 0:200000:65536 --gidmap 0:200000:65536 >/dev/null
	pm --runtime "$AGENTRT" --runtime-flag profile=oci pod start upod >/dev/null
	infra=$(pm pod inspect -f '{{.InfraContainerID}}' upod)
	run pm --runtime "$AGENTRT" --runtime-flag profile=oci run -d --name uapp --pod upod "$IMG" sleep 1000
	[ "$status" -eq 0 ] || it_die "run --pod: $output"
	ipid=$(pm inspect -f '{{.State.Pid}}' "$infra")
	apid=$(pm inspect -f '{{.State.Pid}}' uapp)
	[ "$(readlink "/proc/$apid/ns/user")" = "$(readlink "/proc/$ipid/ns/user")" ] || it_die "user namespace not the pod's"
	[ "$(readlink "/proc/$apid/ns/pid")" != "$(readlink "/proc/$ipid/ns/pid")" ] || it_die "pid namespace shared"
	[ "$(awk '/^Uid:/{print $2}' "/proc/$apid/status")" = 200000 ] || it_die "$(grep Uid "/proc/$apid/status")"
	run pm --runtime "$AGENTRT" --runtime-flag profile=oci exec uapp sh -c 'id -u; ps -o pid,comm | wc -l'
	[ "$status" -eq 0 ] && [ "${lines[0]}" = 0 ] || it_die "exec: $output"
	# its /proc shows its own processes only (sleep, sh, ps, wc and the header)
	[ "${lines[1]}" -le 5 ] || it_die "exec: $output"
	out=$(pm_pod_rm --runtime "$AGENTRT" pod rm -f -t 0 upod) || it_die "pod rm: $out"
}

@test "podman pod (default profile): the containers share the infra container's egress policy" {
	pm --runtime agentrt pod create --name pod1 --network none --cgroup-parent "/$PODMAN_CGROUP_PARENT" \
		--infra-image "$PAUSE_IMG" --infra-command /pause >/dev/null
	pm --runtime agentrt pod start pod1 >/dev/null
	infra=$(pm pod inspect -f '{{.InfraContainerID}}' pod1)
	pm --runtime agentrt run -d --name app1 --pod pod1 "$IMG" sleep 1000 >/dev/null
	pm --runtime agentrt run -d --name app2 --pod pod1 "$IMG" sleep 1000 >/dev/null
	app1=$(pm inspect -f '{{.Id}}' app1)
	[ "$(pm inspect -f '{{.State.Status}}' app2)" = running ]
	# one policy: the infra's resolver and control socket, none in the apps
	[ -S "/run/agentrt/$infra/egress.sock" ]
	[ ! -e "/run/agentrt/$app1/egress.sock" ]
	run "$AGENTRT" egress "$infra" list
	[ "$status" -eq 0 ] && [ "$(head -1 <<<"$output")" = "default deny" ] || it_die "$output"
	run "$AGENTRT" audit "$app1" --kind monitor --format json
	[[ "$output" == *"\"egress_by_sandbox\":\"$infra\""* ]] || it_die "$output"
	# the app's DNS is answered by the infra's resolver: the agent profile allows no name
	run pm exec app1 nslookup example.org
	[ "$status" -ne 0 ] && [[ "$output" == *NXDOMAIN* ]] || it_die "$output"
	run pm_pod_rm --runtime agentrt pod rm -f -t 0 pod1
	[ "$status" -eq 0 ] || it_die "$output"
	run "$AGENTRT" state "$infra"
	[ "$status" -ne 0 ]
}

# the socket and the client are mounts agentrt's create adds under the default (agent)
# profile; the child is a container beside its parent in the root Podman gave agentrt
# (none: agentrt's default, /run/agentrt)
@test "podman --runtime agentrt (default profile): sub-agents inside the container: a child's exit code, its work committed into the parent's view, no child left after podman rm -f" {
	local host=$IT_TMP/sub-host root cid cpid ccg
	mkdir -p "$host"
	echo hello >"$host/a.txt"
	pm --runtime agentrt run -d --name subp --network none --cgroup-parent "/$PODMAN_CGROUP_PARENT" \
		--ulimit nofile=1024:1024 --ulimit nproc=1024:1024 \
		-v "$host:/workspace" -w /workspace "$IMG" sleep 1000 >/dev/null
	run pm exec subp sh -c 'test -S /run/agentrt/agent.sock && test -x /run/agentrt/bin/agentrt && echo ok'
	[ "$output" = ok ] || it_die "no socket or client in the container: $output"
	run pm exec subp /run/agentrt/bin/agentrt sub run --name c -- sh -c 'exit 5'
	[ "$status" -eq 5 ] || it_die "sub run: $status $output"
	run pm exec subp /run/agentrt/bin/agentrt sub run --name w -- sh -c 'echo from-child; echo x >c.txt'
	[ "$status" -eq 0 ] && [ "$output" = from-child ] || it_die "sub run: $status $output"
	run pm exec subp ls /workspace
	[[ "$output" == *a.txt* && "$output" != *c.txt* ]] || it_die "parent's view before commit: $output"
	run pm exec subp /run/agentrt/bin/agentrt sub commit w
	[ "$status" -eq 0 ] || it_die "commit: $output"
	[ "$(pm exec subp cat /workspace/c.txt)" = x ]
	[ ! -e "$host/c.txt" ]
	pm exec subp /run/agentrt/bin/agentrt sub run --name d --detach -- sleep 600 >/dev/null
	cid=$(pm inspect -f '{{.Id}}' subp)
	root=/run/agentrt
	[ -d "$root/$cid" ] && [ -d "$root/$cid.d" ] || it_die "no child state under $root"
	# the child, listed below its parent
	run "$AGENTRT" --root "$root" list
	[[ "$output" == *"└─ $cid.d"* ]] || it_die "agentrt list: $output"
	cpid=$(jq -r .pid "$root/$cid.d/state.json")
	kill -0 "$cpid"
	ccg=$(awk -F: '$2 == "pids" { print $3 }' "/proc/$cpid/cgroup")
	[[ "$ccg" == "/$PODMAN_CGROUP_PARENT/"* ]] && [ -d "/sys/fs/cgroup/pids$ccg" ] || it_die "child cgroup: $ccg"
	pm --runtime agentrt rm -f -t 0 subp >/dev/null
	! kill -0 "$cpid" 2>/dev/null
	[ ! -e "$root/$cid.d" ] && [ ! -e "$root/$cid" ]
	[ ! -e "/sys/fs/cgroup/pids$ccg" ] || it_die "child cgroup left: $ccg"
	run "$AGENTRT" --root "$root" list
	[[ "$output" != *"$cid"* ]] || it_die "agentrt list after rm: $output"
	for n in "$cid" "$cid.c" "$cid.w" "$cid.d"; do
		"$AGENTRT" workspace "$n" purge >/dev/null 2>&1 || true
		"$AGENTRT" audit --purge "$n" >/dev/null 2>&1 || true
	done
}

@test "network-container-join: podman --runtime agentrt (default profile) --network container:X of an agentrt container runs under X's egress policy" {
	pm --runtime agentrt run -d --name nx --network none --cgroup-parent "/$PODMAN_CGROUP_PARENT" "$IMG" sleep 1000 >/dev/null
	xid=$(pm inspect -f '{{.Id}}' nx)
	xpid=$(pm inspect -f '{{.State.Pid}}' nx)
	[ -S "/run/agentrt/$xid/egress.sock" ] || it_die "no policy in nx"
	run pm --runtime agentrt run --name nj --network container:nx --cgroup-parent "/$PODMAN_CGROUP_PARENT" "$IMG" echo joined
	[ "$status" -eq 0 ] && [ "$output" = joined ] || it_die "$output"
	jid=$(pm inspect -f '{{.Id}}' nj)
	run "$AGENTRT" audit "$jid" --kind monitor --format json
	[[ "$output" == *"\"egress_by_sandbox\":\"$xid\""* ]] || it_die "audit: $output"
	[ "$(nsenter --net="/proc/$xpid/ns/net" nft list tables | grep -c "inet agentrt")" = 1 ]
	run "$AGENTRT" egress "$xid" list
	[ "$status" -eq 0 ] && [ "$(head -1 <<<"$output")" = "default deny" ] || it_die "$output"
	pm --runtime agentrt rm -f -t 0 nj >/dev/null
	pm --runtime agentrt rm -f -t 0 nx >/dev/null
	"$AGENTRT" audit --purge "$jid" >/dev/null 2>&1 || true
	"$AGENTRT" audit --purge "$xid" >/dev/null 2>&1 || true
}

@test "workspace-userns: podman --runtime agentrt (default profile) --uidmap with a host dir at /workspace: the writes are reviewed, then committed as the mapped uid's" {
	local host=$IT_TMP/uw-host id
	mkdir -p "$host"
	echo hello >"$host/a.txt"
	chown -R 100000:100000 "$host"
	run pm --runtime agentrt run --name uw --uidmap 0:100000:65536 --gidmap 0:100000:65536 \
		--network none --cgroup-parent "/$PODMAN_CGROUP_PARENT" -v "$host:/workspace" -w /workspace \
		"$IMG" sh -c 'echo new >n.txt && echo more >>a.txt && id -u && cat a.txt'
	[ "$status" -eq 0 ] && [ "$output" = "$(printf '0\nhello\nmore')" ] || it_die "$output"
	id=$(pm inspect -f '{{.Id}}' uw)
	[ "$(cat "$host/a.txt")" = hello ] && [ ! -e "$host/n.txt" ] || it_die "the host dir changed before commit"
	run --separate-stderr "$AGENTRT" workspace "$id" diff --format json
	[ "$(jq -r '.changes[] | "\(.kind):\(.path)"' <<<"$output" | sort | tr '\n' ' ')" = "added:n.txt modified:a.txt " ] ||
		it_die "$output"
	run "$AGENTRT" workspace "$id" commit
	[ "$status" -eq 0 ] || it_die "commit: $output"
	[ "$(cat "$host/n.txt")" = new ] && [ "$(stat -c %u "$host/n.txt")" = 100000 ] || it_die "$(ls -ln "$host")"
	run pm_pod_rm --runtime agentrt rm -f -t 0 uw
	[ "$status" -eq 0 ] || it_die "rm: $output"
	"$AGENTRT" workspace "$id" purge >/dev/null 2>&1 || true
	"$AGENTRT" audit --purge "$id" >/dev/null 2>&1 || true
}

@test "podman-run-as-uid: podman --runtime agentrt (default profile) -u 4242:4242: a writable home of its own for run and exec, not / on the read-only root" {
	# Podman writes "4242:*:4242:4242:container user:/:/bin/sh" into the container's
	# /etc/passwd and passes no HOME: the home was / on the agent profile's read-only root.
	run pm --runtime agentrt run --rm --network none --cgroup-parent "/$PODMAN_CGROUP_PARENT" -u 4242:4242 \
		"$IMG" sh -c 'echo "home=$HOME"; echo x >"$HOME/.gitconfig" && echo written; stat -c "%u %a" "$HOME"'
	[ "$status" -eq 0 ] || { echo "$output" >&2; return 1; }
	[[ "$output" == *"home=/home/agentrt-4242"* ]] || { echo "$output" >&2; return 1; }
	[[ "$output" == *written* ]]
	[[ "$output" == *"4242 700"* ]]
	pm --runtime agentrt run -d --name uid1 --network none --cgroup-parent "/$PODMAN_CGROUP_PARENT" -u 4242:4242 \
		"$IMG" sleep 4242 >/dev/null
	run pm --runtime agentrt exec uid1 sh -c 'echo "home=$HOME"; echo y >"$HOME/y" && echo written'
	[[ "$output" == *"home=/home/agentrt-4242"* ]] || { echo "exec: $output" >&2; return 1; }
	[[ "$output" == *written* ]]
	run pm --runtime agentrt exec -u 0 uid1 sh -c 'echo "home=$HOME"'
	[[ "$output" == *"home=/root"* ]]
}
