#!/usr/bin/env bats
# integration/docker.bats - Docker (Debian docker.io 20.10) driving agentrt.
#
# setup_file starts a private containerd + dockerd (own sockets, data and
# exec roots under a temp dir) with three runtimes: agentrt (default
# profile), agentrt-oci (--profile oci, used for the runc-parity flows) and
# agentrt-cli (registered with --add-runtime).  Each flow checks its effect
# from inside the container.  teardown_file stops both daemons by PID and
# removes every container, mount, cgroup and file they made.

load lib
bats_require_minimum_version 1.5.0

IMG=agentrt-it/busybox:latest
RT=agentrt-oci

setup_file() {
	it_need_root
	it_need_bin dockerd containerd ctr
	[ -x "$DOCKER_CLI" ] || skip "docker CLI not installed"
	[ -x "$AGENTRT" ] || it_die "agentrt not built: $AGENTRT (run make)"
	it_tmp docker
	it_build_image "$IT_TMP/img"
	docker_start
	docker import "$IT_TMP/img/rootfs.tar" "$IMG" >/dev/null
}

teardown_file() {
	[ -n "${IT_TMP:-}" ] || return 0
	local rc=0
	docker_stop || rc=1
	it_cleanup_tmp || rc=1
	return $rc
}

teardown() {
	# containers a test left running (a failed assertion)
	local ids
	ids=$(docker ps -aq --filter label=agentrt-it 2>/dev/null)
	[ -z "$ids" ] || docker rm -f $ids >/dev/null 2>&1 || true
}

# drun RUNTIME ARGS...: foreground `docker run --rm` with the test label.
drun() {
	local rt=$1
	shift
	docker run --rm --label agentrt-it --runtime "$rt" "$@"
}

# dstart NAME RUNTIME ARGS...: a detached container (ARGS: options, image, command).
dstart() {
	local name=$1 rt=$2
	shift 2
	docker run -d --label agentrt-it --name "$name" --runtime "$rt" "$@"
}

# dsleep NAME RUNTIME [OPTIONS...]: a detached `sleep 1000`.
dsleep() { dstart "$@" "$IMG" sleep 1000; }

inspect() { docker inspect -f "$2" "$1"; }

# it_pty CMD: run CMD under a real pty (script(1)); stdin is fed to it.
it_pty() { timeout 30 script -qec "$1" /dev/null; }

@test "docker info lists agentrt, agentrt-oci, agentrt-cli and contrib's runtimes" {
	run docker info --format '{{json .Runtimes}}'
	[ "$status" -eq 0 ]
	for r in agentrt agentrt-oci agentrt-cli $(jq -r '.runtimes | keys[]' "$IT_SRC/contrib/docker/daemon.json"); do
		echo "$output" | jq -e --arg r "$r" '.[$r]' >/dev/null
	done
	[ "$(echo "$output" | jq -r '.agentrt.path')" = "$AGENTRT" ]
	[ "$(echo "$output" | jq -c '.["agentrt-oci"].runtimeArgs')" = '["--profile","oci"]' ]
}

@test "agentrt (default profile): runs and returns the exit code" {
	run drun agentrt "$IMG" sh -c 'echo hello; exit 3'
	[ "$status" -eq 3 ]
	[ "$output" = hello ]
}

@test "agentrt (default profile): -d, wait, logs, stop" {
	dstart def agentrt "$IMG" sh -c 'echo up; exec sleep 1000'
	it_wait 10 eval '[ "$(docker logs def 2>&1)" = up ]'
	[ "$(inspect def '{{.State.Running}}')" = true ]
	docker stop -t 1 def
	[ "$(docker wait def)" = 137 ]
}

@test "agentrt (default profile): after docker run --rm -v DIR:/workspace, agentrt workspace <id prefix> diff with no other flag" {
	local host=$IT_TMP/ws-host cid
	mkdir -p "$host"
	echo hello >"$host/a.txt"
	echo keep >"$host/b.txt"
	run drun agentrt --cidfile "$IT_TMP/ws.cid" -v "$host:/workspace" "$IMG" \
		sh -c 'echo new >/workspace/new.txt; echo changed >/workspace/a.txt; rm /workspace/b.txt'
	[ "$status" -eq 0 ] || { echo "run: $output"; return 1; }
	cid=$(cat "$IT_TMP/ws.cid")
	rm -f "$IT_TMP/ws.cid"
	# Docker removed the container and its runtime state; the host dir is untouched
	! docker inspect "$cid" >/dev/null 2>&1
	[ ! -e "$IT_TMP/docker/exec/runtime-agentrt/moby/$cid" ]
	[ "$(cat "$host/a.txt")" = hello ] && [ -f "$host/b.txt" ] && [ ! -e "$host/new.txt" ]
	# what an operator types: the short id Docker prints, and no --root
	"$AGENTRT" workspace "${cid:0:12}" diff --format json >"$IT_TMP/ws.json" 2>"$IT_TMP/ws.err" ||
		{ cat "$IT_TMP/ws.err"; return 1; }
	[ "$(jq -r '.changes[] | "\(.kind):\(.path)"' "$IT_TMP/ws.json" | sort | tr '\n' ' ')" = \
		"added:new.txt deleted:b.txt modified:a.txt " ] || { cat "$IT_TMP/ws.json"; return 1; }
	# it says which engine root (Docker's, under its exec root) the container ran under
	grep -qF "engine root \`$IT_TMP/docker/exec/" "$IT_TMP/ws.err" || { cat "$IT_TMP/ws.err"; return 1; }
	run "$AGENTRT" audit verify "${cid:0:12}"
	[ "$status" -eq 0 ] || { echo "verify: $output"; return 1; }
	run "$AGENTRT" workspace "${cid:0:12}" commit
	[ "$status" -eq 0 ] || { echo "commit: $output"; return 1; }
	[ "$(cat "$host/a.txt")" = changed ] && [ ! -e "$host/b.txt" ] && [ "$(cat "$host/new.txt")" = new ]
	"$AGENTRT" workspace "$cid" purge >/dev/null 2>&1
	"$AGENTRT" audit --purge "$cid" >/dev/null 2>&1
}

@test "agentrt (default profile): sub-agents inside a Docker container: a child's exit code, its work committed into the parent's view, no child left after docker rm -f" {
	local host=$IT_TMP/sub-host root
	mkdir -p "$host"
	echo hello >"$host/a.txt"
	dsleep subp agentrt -v "$host:/workspace" -w /workspace
	run docker exec subp /run/agentrt/bin/agentrt sub run --name c -- sh -c 'echo from-child; echo x >c.txt; exit 5'
	[ "$status" -eq 5 ] && [ "$output" = from-child ] || { echo "sub run: $status $output"; return 1; }
	run docker exec subp ls /workspace
	[[ "$output" != *c.txt* ]]
	run docker exec subp /run/agentrt/bin/agentrt sub commit c
	[ "$status" -eq 0 ] || { echo "commit: $output"; return 1; }
	[ "$(docker exec subp cat /workspace/c.txt)" = x ]
	[ ! -e "$host/c.txt" ]
	docker exec subp /run/agentrt/bin/agentrt sub run --name d --detach -- sleep 600
	cid=$(inspect subp '{{.Id}}')
	# the child is a container in the runtime root Docker gave agentrt, beside its parent
	root=$(dirname "$(find "$IT_TMP/docker" -maxdepth 6 -type d -name "$cid.d" | head -n1)")
	[ -d "$root/$cid" ] && [ -d "$root/$cid.d" ] || { echo "no child state: $root"; return 1; }
	cpid=$(jq -r .pid "$root/$cid.d/state.json")
	kill -0 "$cpid"
	docker rm -f subp >/dev/null
	! kill -0 "$cpid" 2>/dev/null
	[ ! -e "$root/$cid.d" ] && [ ! -e "$root/$cid" ]
	"$AGENTRT" workspace "$cid" purge >/dev/null 2>&1 || true
	"$AGENTRT" audit --purge "$cid" >/dev/null 2>&1 || true
}

@test "agentrt-cli (--add-runtime): runs" {
	run drun agentrt-cli "$IMG" true
	[ "$status" -eq 0 ]
}

@test "run (foreground): stdout, stderr and exit code" {
	run drun $RT "$IMG" sh -c 'echo out; echo err >&2; exit 42'
	[ "$status" -eq 42 ]
	[[ "$output" == *out* && "$output" == *err* ]]
}

@test "run: stdin is passed with -i" {
	run sh -c "echo piped | docker run --rm -i --label agentrt-it --runtime $RT $IMG cat"
	[ "$status" -eq 0 ]
	[ "$output" = piped ]
}

@test "run: a missing or non-executable command: 127/126 with agentrt's message" {
	run -127 drun $RT "$IMG" /nonexistent
	[[ "$output" == *"create \`"*'exec: "/nonexistent": stat /nonexistent: no such file or directory'* ]]
	run -126 drun $RT "$IMG" /etc/passwd
	[[ "$output" == *"create \`"*'permission denied'* ]]
	# same codes with runc
	run -127 drun runc "$IMG" /nonexistent
	run -126 drun runc "$IMG" /etc/passwd
}

@test "run -d, logs, wait with the exit code" {
	dstart bg $RT "$IMG" sh -c 'echo to-out; echo to-err >&2; sleep 1; exit 7'
	[ "$(docker wait bg)" = 7 ]
	run docker logs bg
	[[ "$output" == *to-out* && "$output" == *to-err* ]]
	[ "$(inspect bg '{{.State.ExitCode}}')" = 7 ]
	docker rm bg
}

@test "run --rm removes the container" {
	docker run --rm --label agentrt-it --name gone --runtime $RT "$IMG" true
	run docker inspect gone
	[ "$status" -ne 0 ]
}

@test "run -it through a real pty: tty, input, exit code" {
	run it_pty "docker run -it --rm --label agentrt-it --runtime $RT $IMG sh -c 'tty; read x; echo got-\$x; exit 4'" <<<"abc"
	[ "$status" -eq 4 ]
	[[ "$output" == */dev/pts/0* ]]
	[[ "$output" == *got-abc* ]]
}

@test "run -e -w -u" {
	run drun $RT -e FOO=bar -w /tmp -u 1000:1000 "$IMG" sh -c 'echo $FOO $(pwd) $(id -u) $(id -g)'
	[ "$status" -eq 0 ]
	[ "$output" = "bar /tmp 1000 1000" ]
}

@test "run -v: read-write and read-only bind mounts" {
	mkdir -p "$IT_TMP/vol" "$IT_TMP/rovol"
	echo host-data >"$IT_TMP/rovol/f"
	drun $RT -v "$IT_TMP/vol:/data" -v "$IT_TMP/rovol:/ro:ro" "$IMG" sh -c 'echo from-ctr > /data/out; cat /ro/f'
	[ "$(cat "$IT_TMP/vol/out")" = from-ctr ]
	run drun $RT -v "$IT_TMP/rovol:/ro:ro" "$IMG" sh -c 'echo x > /ro/f'
	[ "$status" -ne 0 ]
	[[ "$output" == *"Read-only file system"* ]]
	[ "$(cat "$IT_TMP/rovol/f")" = host-data ]
}

@test "run --read-only with --tmpfs" {
	run drun $RT --read-only --tmpfs /run:size=1m "$IMG" sh -c 'touch /x 2>&1; touch /run/y && echo tmpfs-ok; grep " /run " /proc/mounts'
	[[ "$output" == *"Read-only file system"* ]]
	[[ "$output" == *tmpfs-ok* ]]
	[[ "$output" == *"tmpfs /run tmpfs"*"size=1024k"* ]]
}

@test "run -m sets the memory limit" {
	run drun $RT -m 64m "$IMG" cat /sys/fs/cgroup/memory/memory.limit_in_bytes
	[ "$status" -eq 0 ]
	[ "$output" = 67108864 ]
}

@test "run --pids-limit" {
	run drun $RT --pids-limit 20 "$IMG" cat /sys/fs/cgroup/pids/pids.max
	[ "$output" = 20 ]
}

@test "run --cpus" {
	run drun $RT --cpus 0.5 "$IMG" sh -c 'cat /sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us /sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us 2>/dev/null || cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us /sys/fs/cgroup/cpu/cpu.cfs_period_us'
	[ "$status" -eq 0 ]
	[ "$(echo $output)" = "50000 100000" ]
}

@test "run --cap-drop ALL --cap-add NET_ADMIN" {
	run drun $RT --cap-drop ALL --cap-add NET_ADMIN "$IMG" grep -E '^Cap(Prm|Eff|Bnd)' /proc/self/status
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | awk '{print $2}' | sort -u)" = 0000000000001000 ]
}

@test "run --cap-drop CHOWN: chown is refused" {
	run drun $RT --cap-drop CHOWN "$IMG" chown 1000 /tmp
	[ "$status" -ne 0 ]
	[[ "$output" == *"Operation not permitted"* ]]
	run drun $RT "$IMG" chown 1000 /tmp
	[ "$status" -eq 0 ]
}

@test "run --security-opt no-new-privileges" {
	run drun $RT --security-opt no-new-privileges "$IMG" grep NoNewPrivs /proc/self/status
	[[ "$output" == *"NoNewPrivs:"*1 ]]
	run drun $RT "$IMG" grep NoNewPrivs /proc/self/status
	[[ "$output" == *"NoNewPrivs:"*0 ]]
}

@test "run --network none: only lo" {
	run drun $RT --network none "$IMG" ls /sys/class/net
	[ "$status" -eq 0 ]
	[ "$output" = lo ]
}

@test "parity with runc: caps, seccomp, ids, limits, hostname, mounts" {
	# Known difference: on a hybrid host agentrt also mounts the cgroup2
	# tree at /sys/fs/cgroup/unified (runc 1.1 does not); filtered out.
	local probe='grep -E "^(Cap|NoNewPrivs|Seccomp:)" /proc/self/status; id; ulimit -n; ulimit -u; hostname; awk "{print \$2, \$3}" /proc/mounts | grep -v /sys/fs/cgroup/unified | sort; ls /dev | sort'
	a=$(drun runc --hostname h "$IMG" sh -c "$probe" 2>&1)
	b=$(drun $RT --hostname h "$IMG" sh -c "$probe" 2>&1)
	diff <(echo "$a") <(echo "$b")
}

@test "exec: plain, exit code, environment" {
	dsleep ex $RT
	run docker exec -e X=1 ex sh -c 'echo $X; cat /proc/1/cmdline | tr "\0" " "; exit 3'
	[ "$status" -eq 3 ]
	[[ "$output" == *"1"*"sleep 1000"* ]]
	run docker exec -u 1000 -w /tmp ex sh -c 'id -u; pwd'
	[ "$(echo $output)" = "1000 /tmp" ]
	run -126 docker exec ex nosuch
	[[ "$output" == *"exec \`"*'executable file not found in $PATH'* ]]
	docker rm -f ex
}

# agent-home-exec-other-uid: the image runs as root, the agent's tools as a user: `docker exec -u`
# with a uid the image does not list passed HOME=/ on the read-only root (git config --global
# failed with EROFS).  The exec gets a home of its own in the container's /tmp, kept between execs.
@test "agent-home-exec-other-uid: docker exec -u 4242 into a root container under the agent profile" {
	dsleep exh agentrt
	run docker exec -u 4242 exh sh -c 'echo "home=$HOME"; touch "$HOME/.gitconfig" && echo written'
	[ "$status" -eq 0 ] || it_die "$output"
	[[ "$output" == *"home=/tmp/agentrt-home-4242"* ]] || it_die "$output"
	[[ "$output" == *written* ]] || it_die "$output"
	run docker exec -u 4242 exh sh -c 'ls -A "$HOME"; stat -c "%u %a" "$HOME"'
	[[ "$output" == *".gitconfig"*"4242 700"* ]] || it_die "second exec: $output"
	run docker exec -u 1000 exh sh -c 'echo "home=$HOME"'
	[[ "$output" == *"home=/home/user"* ]] || it_die "listed uid: $output"
	docker rm -f exh
}

@test "exec -it through a real pty" {
	dsleep exi $RT
	run it_pty "docker exec -it exi sh -c 'tty; read x; echo got-\$x; exit 5'" <<<"xyz"
	[ "$status" -eq 5 ]
	[[ "$output" == */dev/pts/* ]]
	[[ "$output" == *got-xyz* ]]
	docker rm -f exi
}

@test "stop delivers SIGTERM (then SIGKILL)" {
	dstart st $RT "$IMG" sh -c 'trap "exit 42" TERM; while :; do sleep 0.1; done'
	docker stop -t 5 st
	[ "$(inspect st '{{.State.ExitCode}}')" = 42 ]
	dstart st2 $RT "$IMG" sh -c 'trap "" TERM; while :; do sleep 0.1; done'
	docker stop -t 1 st2
	[ "$(inspect st2 '{{.State.ExitCode}}')" = 137 ]
	docker rm st st2
}

@test "kill: default SIGKILL and -s USR1" {
	dstart k1 $RT "$IMG" sh -c 'trap "exit 43" USR1; while :; do sleep 0.1; done'
	sleep 0.3
	docker kill -s USR1 k1
	[ "$(docker wait k1)" = 43 ]
	dsleep k2 $RT
	docker kill k2
	[ "$(docker wait k2)" = 137 ]
	docker rm k1 k2
}

@test "rm -f removes a running container" {
	dsleep rmf $RT
	docker rm -f rmf
	run docker inspect rmf
	[ "$status" -ne 0 ]
}

@test "restart: a new init, still running" {
	dsleep rs $RT
	p1=$(inspect rs '{{.State.Pid}}')
	docker restart -t 1 rs
	p2=$(inspect rs '{{.State.Pid}}')
	[ "$(inspect rs '{{.State.Running}}')" = true ]
	[ "$p1" != "$p2" ]
	[ "$(docker exec rs cat /proc/1/comm)" = sleep ]
	docker rm -f rs
}

@test "pause / unpause freezes the cgroup" {
	dstart pz $RT "$IMG" sh -c 'i=0; while :; do i=$((i + 1)); echo $i > /tmp/t; sleep 0.1; done'
	docker pause pz
	[ "$(inspect pz '{{.State.Status}}')" = paused ]
	id=$(inspect pz '{{.Id}}')
	[ "$(cat /sys/fs/cgroup/freezer/$DOCKER_CGROUP_PARENT/$id/freezer.state)" = FROZEN ]
	run docker exec pz true
	[ "$status" -ne 0 ]
	docker unpause pz
	[ "$(inspect pz '{{.State.Status}}')" = running ]
	t1=$(docker exec pz cat /tmp/t)
	sleep 0.5
	t2=$(docker exec pz cat /tmp/t)
	[ "$t1" != "$t2" ]
	docker rm -f pz
}

@test "update: memory and pids limits change inside" {
	dsleep up $RT -m 64m
	docker update -m 128m --memory-swap 256m --pids-limit 30 up
	[ "$(docker exec up cat /sys/fs/cgroup/memory/memory.limit_in_bytes)" = 134217728 ]
	[ "$(docker exec up cat /sys/fs/cgroup/pids/pids.max)" = 30 ]
	docker rm -f up
}

@test "stats --no-stream and top" {
	dsleep sx $RT
	run docker stats --no-stream --format '{{.Name}} {{.MemUsage}} {{.PIDs}}' sx
	[ "$status" -eq 0 ]
	[[ "$output" == "sx "* ]]
	[[ "$output" != *"0B / 0B"* ]]
	[ "$(echo "$output" | awk '{print $NF}')" = 1 ]
	run docker top sx
	[ "$status" -eq 0 ]
	[[ "$output" == *"sleep 1000"* ]]
	docker rm -f sx
}

# --- parity probes: each prints the same through agentrt (profile oci) and runc ---

# dsame ARGS...: `docker run` ARGS through $RT and runc; both must succeed and print the same.
dsame() {
	local a r
	a=$(drun $RT "$@" 2>&1) || it_die "$RT: $a"
	r=$(drun runc "$@" 2>&1) || it_die "runc: $r"
	[ "$a" = "$r" ] || it_die "$(printf '%s:\n%s\nrunc:\n%s' "$RT" "$a" "$r")"
}

@test "parity: run --device with a new path and permissions" {
	dsame --device /dev/loop-control:/dev/lc:r "$IMG" sh -c 'stat -c "%n %F %t:%T %a" /dev/lc; cat /sys/fs/cgroup/devices/devices.list 2>/dev/null | grep "10:237" || true'
}

@test "parity: run --init, --ulimit, --sysctl, --shm-size, --pid host, --ipc host, --uts host" {
	dsame --init "$IMG" sh -c 'cat /proc/1/comm; grep PPid /proc/$$/status'
	dsame --ulimit nofile=512:1000 "$IMG" sh -c 'ulimit -n; ulimit -Hn'
	dsame --sysctl net.ipv4.ip_unprivileged_port_start=80 --network none "$IMG" cat /proc/sys/net/ipv4/ip_unprivileged_port_start
	dsame --shm-size 8m "$IMG" sh -c 'df -k /dev/shm | tail -1 | awk "{print \$2}"'
	dsame --pid host "$IMG" sh -c '[ "$(cat /proc/1/comm)" != sh ] && echo host-pid'
	dsame --ipc host "$IMG" readlink /proc/self/ns/ipc
	dsame --uts host "$IMG" hostname
}

@test "parity: run as a user with groups, --group-add, --workdir that does not exist" {
	dsame -u 1000:1000 --group-add 65534 -w /no/such/dir "$IMG" sh -c 'id; pwd; ls -ld /no/such/dir | cut -c1-10'
}

@test "parity: run --read-only with a volume and --tmpfs options" {
	dsame --read-only --tmpfs /run:size=1m,mode=1770 "$IMG" sh -c 'touch /x 2>&1 | sed "s/.*: //"; grep -E " /run " /proc/self/mountinfo | cut -d" " -f5-6,9-'
	# the mode asked for: runc's copy-up (Docker adds tmpcopyup) gives the tmpfs the
	# image directory's mode (755) instead
	run drun $RT --read-only --tmpfs /run:size=1m,mode=1770 "$IMG" stat -c %a /run
	[ "$status" -eq 0 ] && [ "$output" = 1770 ] || it_die "$output"
}

@test "network-container-join: agentrt (default profile): --network container:X of an agentrt container runs under X's egress policy, as runc's does" {
	local xid xpid root jid
	dsleep nx agentrt
	xid=$(inspect nx '{{.Id}}')
	xpid=$(inspect nx '{{.State.Pid}}')
	root=$(dirname "$(find "$IT_TMP/docker/exec" -maxdepth 3 -type d -path "*/moby/$xid" | head -n1)")
	[ -S "$root/$xid/egress.sock" ] || it_die "no policy in nx: $root"
	# runc joins it; so does agentrt, with the same profile
	run drun runc --network container:nx "$IMG" echo joined
	[ "$status" -eq 0 ] && [ "$output" = joined ] || it_die "runc: $output"
	run drun agentrt --cidfile "$IT_TMP/nj.cid" --network container:nx "$IMG" echo joined
	[ "$status" -eq 0 ] && [ "$output" = joined ] || it_die "agentrt: $output"
	jid=$(cat "$IT_TMP/nj.cid")
	rm -f "$IT_TMP/nj.cid"
	# the joiner ran under nx's policy (its monitor says so), not a second one of its own
	run "$AGENTRT" audit "$jid" --kind monitor --format json
	[[ "$output" == *"\"egress_by_sandbox\":\"$xid\""* ]] || it_die "audit: $output"
	# after it: one agentrt table in nx's netns, nx's policy still in force
	[ "$(nsenter --net="/proc/$xpid/ns/net" nft list tables | grep -c "inet agentrt")" = 1 ]
	run "$AGENTRT" --root "$root" egress "$xid" list
	[ "$status" -eq 0 ] && [ "$(head -1 <<<"$output")" = "default deny" ] || it_die "$output"
	docker rm -f nx >/dev/null
	"$AGENTRT" audit --purge "$jid" >/dev/null 2>&1 || true
	"$AGENTRT" audit --purge "$xid" >/dev/null 2>&1 || true
}

@test "subagent-name-after-restart: agentrt (default profile): after docker restart a sub-agent's name is free again (one with kept changes once they are purged); a child of the running parent still holds its own" {
	local host=$IT_TMP/subr-host cid store
	mkdir -p "$host"
	dsleep subr agentrt -v "$host:/workspace" -w /workspace
	run docker exec subr /run/agentrt/bin/agentrt sub run --name d --detach -- sleep 600
	[ "$status" -eq 0 ] || it_die "sub run: $output"
	run docker exec subr /run/agentrt/bin/agentrt sub run --name c -- sh -c 'echo one >c.txt'
	[ "$status" -eq 0 ] || it_die "sub run c: $output"
	cid=$(inspect subr '{{.Id}}')
	store=$(dirname "$(find "$AGENTRT_DATA_DIR" -maxdepth 4 -type d -path "*/.workspaces/$cid.d" | head -n1)")
	[ -d "$store/$cid.d" ] || it_die "no child workspace under $AGENTRT_DATA_DIR"
	docker restart -t 1 subr >/dev/null
	# the names of the children of the init before the restart: the same verbs work again
	run docker exec subr /run/agentrt/bin/agentrt sub run --name d -- sh -c 'echo again; echo two >c.txt'
	[ "$status" -eq 0 ] && [ "$output" = again ] || it_die "sub run d after restart: $status $output"
	# c's kept change (one, never committed) is not dropped by its name's reuse
	# (subagents.bats orphan-kept-restart): refused until the operator purges it
	run docker exec subr /run/agentrt/bin/agentrt sub run --name c -- true
	[ "$status" -eq 125 ] && [[ "$output" == *"\`$cid.c\`"*"kept changes"* ]] ||
		it_die "sub run c after restart: $status $output"
	"$AGENTRT" workspace "$cid.c" purge >/dev/null || it_die "purge $cid.c"
	run docker exec subr /run/agentrt/bin/agentrt sub run --name c -- true
	[ "$status" -eq 0 ] || it_die "sub run c after its purge: $status $output"
	# the new d's workspace is a view of the new init
	[ "$(jq -r .lowerdir "$store/$cid.d/meta.json")" = "/proc/$(inspect subr '{{.State.Pid}}')/root/workspace" ]
	run docker exec subr /run/agentrt/bin/agentrt sub commit d
	[ "$status" -eq 0 ] || it_die "commit: $output"
	[ "$(docker exec subr cat /workspace/c.txt)" = two ]
	# a child of the running parent keeps its name
	docker exec subr /run/agentrt/bin/agentrt sub run --name e --detach -- sleep 600
	run docker exec subr /run/agentrt/bin/agentrt sub run --name e -- true
	[ "$status" -ne 0 ] || it_die "a second e: $output"
	docker rm -f subr >/dev/null
	for n in "" .c .d .e; do
		"$AGENTRT" workspace "$cid$n" purge >/dev/null 2>&1 || true
		"$AGENTRT" audit --purge "$cid$n" >/dev/null 2>&1 || true
	done
}
