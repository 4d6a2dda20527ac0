#!/usr/bin/env bats
# systemd-engines.bats - the engines' systemd cgroup driver with agentrt, against a real
# systemd: run by `AGENTRT_VM_ENGINES=1 tests/vm/run-systemd.sh` in the same VM boot as
# systemd-cgroup.bats (systemd as PID 1 on cgroup v2).  Docker 20.10 with `native.cgroupdriver=systemd` (cgroupsPath
# `system.slice:docker:<id>`) and containerd's CRI plugin with `SystemdCgroup = true`
# (contrib/containerd/config-systemd.toml; cgroupsPath `<pod slice>:cri-containerd:<id>`)
# each start agentrt containers; the transient scope is read from systemd (`systemctl show`,
# `busctl`), and after delete it is gone.  Daemons are private (integration/lib.bash), under
# one /tmp/agentrt-it-* dir, stopped by PID.

load ../../integration/lib
bats_require_minimum_version 1.5.0

setup_file() {
	[ "$(cat /proc/1/comm 2>/dev/null)" = systemd ] ||
		skip "systemd is not PID 1 (run it through tests/vm/run-systemd.sh)"
	[ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ] || skip "not cgroup v2"
	it_need_bin containerd dockerd ctr
	it_tmp sdeng
	# built on the host by run-systemd.sh (slow under TCG), else here
	IMG=$IT_SRC/build/vm-engines-img
	if [ -f "$IMG/oci.tar" ] && [ -f "$IMG/pause.tar" ] && [ -f "$IMG/py/runtime_pb2.py" ]; then
		export PYTHONPATH=$IMG/py
	else
		IMG=$IT_TMP/img
		cri_images "$IMG"
	fi
	export IMG
}

teardown_file() {
	[ -n "${IT_TMP:-}" ] || return 0
	local rc=0
	[ -n "${DOCKERD_PID:-}" ] && { docker_stop || rc=1; }
	[ -n "${CRI_DIR:-}" ] && { cri_stop || rc=1; }
	[ -n "${SD_SLICE:-}" ] && systemctl stop "$SD_SLICE" >/dev/null 2>&1
	it_cleanup_tmp || rc=1
	return $rc
}

prop() { # UNIT PROPERTY -> value
	systemctl show -P "$2" "$1"
}

unit_gone() {
	[ "$(prop "$1" ActiveState)" = inactive ] || [ "$(prop "$1" LoadState)" = not-found ]
}

# bus_report: why the system bus does not answer (once seen as "Connection refused" in a CI
# under load, not reproduced): is vm-systemd-boot.sh's dbus-daemon alive, its socket there,
# what it logged, what the kernel killed.
bus_report() {
	echo "# the system bus does not answer:" >&2
	ls -l /run/dbus >&2 2>&1
	local p found=
	for p in /proc/[0-9]*; do
		[ "$(cat "$p/comm" 2>/dev/null)" = dbus-daemon ] || continue
		found=1
		echo "# dbus-daemon ${p#/proc/}: $(tr '\0' ' ' <"$p/cmdline") in $(cat "$p/cgroup")" >&2
	done
	[ -n "$found" ] || echo "# no dbus-daemon process" >&2
	cat "${SD_OUT:-$IT_SRC/build/vm-systemd}/dbus.log" >&2 2>/dev/null
	dmesg 2>/dev/null | grep -iE 'oom|killed process|segfault' | tail -5 >&2
	return 0
}

# scope_holds UNIT PID: systemd's unit is active with Delegate=yes and its cgroup holds PID.
scope_holds() {
	local cg
	[ "$(prop "$1" ActiveState)" = active ] || { systemctl status "$1" >&2; return 1; }
	[ "$(prop "$1" Delegate)" = yes ] || { echo "Delegate=$(prop "$1" Delegate)" >&2; return 1; }
	cg=$(prop "$1" ControlGroup)
	[ -n "$cg" ] || return 1
	[ "$(awk -F: '$1 == "0" { print $3 }' "/proc/$2/cgroup")" = "$cg" ] ||
		{ echo "pid $2 in $(cat "/proc/$2/cgroup"), unit's cgroup $cg" >&2; return 1; }
	# the same unit over D-Bus, as the engines' own libraries see it
	busctl --system status org.freedesktop.systemd1 >/dev/null 2>&1 || bus_report
	busctl --system get-property org.freedesktop.systemd1 \
		"$(busctl --system call org.freedesktop.systemd1 /org/freedesktop/systemd1 \
			org.freedesktop.systemd1.Manager GetUnit s "$1" | awk '{ print $2 }' | tr -d '"')" \
		org.freedesktop.systemd1.Scope ControlGroup | grep -qF "\"$cg\""
}

@test "systemd engines: Docker with native.cgroupdriver=systemd runs agentrt in a transient scope, gone after rm" {
	it_log "docker: start ($SECONDS s)"
	DOCKER_CGROUP_DRIVER=systemd docker_start
	it_log "docker: run ($SECONDS s)"
	[ "$(docker info --format '{{.CgroupDriver}}')" = systemd ]
	docker import "$IMG/rootfs.tar" agentrt-it/busybox >/dev/null
	run -0 docker run -d --runtime agentrt --network none agentrt-it/busybox sleep 300
	id=${output##*$'\n'}
	unit=docker-$id.scope
	pid=$(docker inspect -f '{{.State.Pid}}' "$id")
	[ "$pid" -gt 0 ]
	scope_holds "$unit" "$pid"
	[ "$(prop "$unit" Slice)" = system.slice ]
	# agentrt, not runc, runs it: the agent profile's trail in the suite's data directory
	"$AGENTRT" audit list | grep -q "^$id "
	# the agent profile's memory default is a unit property as well as the cgroup file
	[ "$(prop "$unit" MemoryMax)" = "$(cat "/sys/fs/cgroup$(prop "$unit" ControlGroup)/memory.max")" ]
	run -0 docker exec "$id" sh -c 'echo in-scope'
	[ "$output" = in-scope ]
	cg=/sys/fs/cgroup$(prop "$unit" ControlGroup)
	docker rm -f "$id" >/dev/null
	it_wait 20 unit_gone "$unit"
	[ ! -d "$cg" ]
	it_log "docker: stop ($SECONDS s)"
	docker_stop
	unset DOCKERD_PID
}

# cri_ok METHOD JSON: a CRI call that must succeed; on failure its answer and containerd's last
# log lines are in the TAP output (one CI run's RunPodSandbox exited 2 and showed nothing else).
cri_ok() {
	run cri "$@"
	[ "$status" -eq 0 ] && return 0
	echo "# cri $1: status $status: $output" >&3
	tail -n 15 "$CRI_DIR/containerd.log" 2>/dev/null | sed 's/^/#   containerd: /' >&3
	return 1
}

@test "systemd engines: containerd's CRI plugin with SystemdCgroup = true: pod and container scopes under the pod slice, gone after RemovePodSandbox" {
	cri_need
	it_log "cri: containerd ($SECONDS s)"
	SD_SLICE=agentrt-it$$.slice
	# This VM's root is the host's (virtiofs), and containerd 1.6 keeps libcni's cache in
	# /var/lib/cni, which it cannot be told to move: the host suite's cri.bats, running beside
	# this lane in CI, makes and removes that directory too, and RunPodSandbox failed with
	# "mkdir /var/lib/cni: stale NFS file handle" (107c517's and 2ef0630's CIs; a second try 28 s
	# later met it again).  containerd gets a /var/lib of its own here.
	CRI_PRIVATE_VARLIB=1 CRI_CONTRIB=config-systemd.toml cri_start "$IT_TMP/ctrd" "agrt-sdcri-$$" "$SD_SLICE" "$IMG"
	grep -q 'SystemdCgroup = true' "$CRI_DIR/config.toml"
	it_log "cri: RunPodSandbox ($SECONDS s)"
	mkdir -p "$IT_TMP/logs/p"
	pcfg=$(jq -nc --arg logs "$IT_TMP/logs/p" --arg s "$SD_SLICE" \
		'{metadata: {name: "p", uid: "uid-p", namespace: "agentrt-it"}, log_directory: $logs,
		  linux: {cgroup_parent: $s, security_context: {namespace_options: {pid: "CONTAINER"}}}}')
	cri_ok RuntimeService/RunPodSandbox "$(jq -nc --argjson c "$pcfg" '{config: $c, runtime_handler: "agentrt"}')"
	sb=$(jq -r .pod_sandbox_id <<<"$output")
	cri_ok RuntimeService/CreateContainer "$(jq -nc --arg p "$sb" --argjson s "$pcfg" --arg img "$CRI_BUSYBOX_IMG" \
		'{pod_sandbox_id: $p, sandbox_config: $s, config: {metadata: {name: "c"}, image: {image: $img},
		  command: ["sleep", "300"], log_path: "c.log"}}')"
	c=$(jq -r .container_id <<<"$output")
	it_log "cri: StartContainer ($SECONDS s)"
	cri_ok RuntimeService/StartContainer "{\"container_id\": \"$c\"}"
	art="$AGENTRT --root $CRI_AGENTRT_ROOT/k8s.io"
	for i in "$sb" "$c"; do
		unit=cri-containerd-$i.scope
		scope_holds "$unit" "$($art state "$i" | jq .pid)"
		[ "$(prop "$unit" Slice)" = "$SD_SLICE" ]
	done
	sbcg=/sys/fs/cgroup$(prop "cri-containerd-$sb.scope" ControlGroup)
	ccg=/sys/fs/cgroup$(prop "cri-containerd-$c.scope" ControlGroup)
	it_log "cri: StopPodSandbox ($SECONDS s)"
	cri_ok RuntimeService/StopPodSandbox "{\"pod_sandbox_id\": \"$sb\"}"
	cri_ok RuntimeService/RemovePodSandbox "{\"pod_sandbox_id\": \"$sb\"}"
	[ -z "$($art list -q)" ]
	it_wait 20 unit_gone "cri-containerd-$sb.scope"
	it_wait 20 unit_gone "cri-containerd-$c.scope"
	[ ! -d "$sbcg" ] && [ ! -d "$ccg" ]
}
