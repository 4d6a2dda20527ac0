# integration/lib.bash - shared helpers for the engine suites.
#
# Installs nothing: CI gets the engines from contrib/install-deps.sh --engines.
# Every daemon is started by the suite itself with private state under one
# temp dir (IT_TMP), stopped by PID in teardown_file, and everything it left
# (mounts, cgroups, shims, files) is removed.  A suite skips when its engine
# binary is missing; a daemon that does not come up fails the suite.

IT_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
AGENTRT=${AGENTRT:-$IT_SRC/agentrt}
case $AGENTRT in /*) ;; *) AGENTRT=$(cd "$(dirname "$AGENTRT")" && pwd)/$(basename "$AGENTRT") ;; esac
BUSYBOX=${BUSYBOX:-$(command -v busybox)}
# Debian's docker CLI matches the daemon; a newer one in /usr/local may shadow it.
DOCKER_CLI=${DOCKER_CLI:-$(if [ -x /usr/bin/docker ]; then echo /usr/bin/docker; else command -v docker; fi)}

it_log() { echo "# $*" >&3; }

it_die() {
	echo "FATAL: $*" >&2
	return 1
}

# it_need_root / it_need_bin BIN... : skip the test (or suite) when missing.
it_need_root() { [ "$(id -u)" = 0 ] || skip "needs root"; }
it_need_bin() {
	local b
	for b in "$@"; do
		command -v "$b" >/dev/null 2>&1 || skip "$b not installed"
	done
}

# it_tmp NAME: create the suite's temp dir and export IT_TMP.
it_tmp() {
	IT_TMP=$(mktemp -d "/tmp/agentrt-it-$1.XXXXXX") || return 1
	chmod 755 "$IT_TMP"
	export IT_TMP
	# agentrt's data directory (workspaces, audit trails) for every engine of the suite:
	# the daemons we start pass their environment down to the runtime, so the suite never
	# writes to the host's /var/lib/agentrt (it_default_root_clean checks anyway)
	export AGENTRT_DATA_DIR=$IT_TMP/agentrt-data AGENTRT_CONFIG=$IT_TMP/agentrt.conf
	it_hostdirs_note
}

# it_wait SECONDS CMD...: poll CMD every 0.2s until it succeeds or time runs out.
it_wait() {
	local limit=$(($1 * 5)) i=0
	shift
	while ! "$@" >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -ge $limit ] && return 1
		sleep 0.2
	done
}

# it_stop_pid PID [SECONDS]: SIGTERM, wait, then SIGKILL.
it_stop_pid() {
	local pid=$1 secs=${2:-20}
	[ -n "$pid" ] || return 0
	kill -0 "$pid" 2>/dev/null || return 0
	kill -TERM "$pid" 2>/dev/null
	if ! it_wait "$secs" eval "! kill -0 $pid"; then
		echo "pid $pid ignored SIGTERM for ${secs}s: SIGKILL" >&2
		kill -KILL "$pid" 2>/dev/null
		it_wait 5 eval "! kill -0 $pid"
	fi
}

# it_kill_under DIR: kill (by PID) leftover processes whose command line
# names DIR, e.g. containerd shims started with `-address DIR/...sock`.
it_kill_under() {
	local dir=$1 p cmd found=0
	for p in /proc/[0-9]*; do
		cmd=$({ tr '\0' ' ' <"$p/cmdline"; } 2>/dev/null) || continue
		case $cmd in *"$dir"*)
			[ "${p#/proc/}" = $$ ] && continue
			echo "leftover process ${p#/proc/}: $cmd" >&2
			kill -KILL "${p#/proc/}" 2>/dev/null
			found=1
			;;
		esac
	done
	return $found
}

# it_mounts_under DIR: mount points at or below DIR, deepest first.
it_mounts_under() {
	awk -v d="$1" '$5 == d || index($5, d "/") == 1 { print $5 }' /proc/self/mountinfo | sort -r
}

# it_umount_under DIR: unmount everything below DIR (never anything else).
it_umount_under() {
	local dir=$1 m i
	case $dir in /tmp/agentrt-it-*) ;; *) it_die "refusing to unmount under $dir"; return 1 ;; esac
	for i in 1 2 3; do
		[ -z "$(it_mounts_under "$dir")" ] && return 0
		for m in $(it_mounts_under "$dir"); do
			umount -R "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
		done
	done
	if [ -n "$(it_mounts_under "$dir")" ]; then
		echo "mounts left under $dir:" >&2
		it_mounts_under "$dir" >&2
		return 1
	fi
}

# it_rm_cgroups NAME: remove our cgroup NAME (and its children) in every
# mounted hierarchy.  NAME must contain "agentrt" (house rule).
it_rm_cgroups() {
	local name=$1 d
	case $name in *agentrt*) ;; *) it_die "refusing to remove cgroup $name"; return 1 ;; esac
	for d in /sys/fs/cgroup/*/"$name" /sys/fs/cgroup/"$name"; do
		[ -d "$d" ] || continue
		# killed members may take a moment to leave
		it_wait 5 eval "find '$d' -depth -type d -exec rmdir {} \\; 2>/dev/null; ! test -d '$d'"
		[ -d "$d" ] && echo "cgroup left: $d" >&2
	done
	return 0
}

# Host paths the engines create outside their configured roots: containerd
# 1.6 shim sockets in /run/containerd/s, dockerd's /run/docker/plugins,
# Podman's /run/containers/networks and its blob-info cache in
# /var/lib/containers/cache, agentrt's default state root /run/agentrt (Podman
# passes no --root), the CNI result cache /var/lib/cni/results (libcni's, which
# containerd 1.6 does not let us move).  it_hostdirs_note records which existed before;
# it_hostdirs_clean removes those we created (files by name, dirs if empty).
IT_HOSTDIRS="/run/containerd/s /run/containerd/fifo /run/containerd /run/docker/plugins /run/docker
/run/containers/networks /run/containers /var/lib/containers/cache/blob-info-cache-v1.boltdb
/var/lib/containers/cache /var/lib/containers /run/agentrt /var/lib/agentrt /var/lib/cni/results /var/lib/cni"
it_hostdirs_note() {
	local d
	IT_HOSTDIRS_NEW=""
	for d in $IT_HOSTDIRS; do
		[ -e "$d" ] || IT_HOSTDIRS_NEW="$IT_HOSTDIRS_NEW $d"
	done
	IT_SHIMSOCKS_OLD=$(ls /run/containerd/s 2>/dev/null | tr '\n' ' ')
	export IT_HOSTDIRS_NEW IT_SHIMSOCKS_OLD
}

# Shim sockets that appeared since it_hostdirs_note and that nobody listens
# on any more (a shim that had to be SIGKILLed leaves its socket behind).
it_shimsocks_clean() {
	local s listening
	[ -d /run/containerd/s ] || return 0
	listening=$(ss -xlH 2>/dev/null | awk '{ print $5 }')
	for s in /run/containerd/s/*; do
		[ -S "$s" ] || continue
		case " ${IT_SHIMSOCKS_OLD:-} " in *" ${s##*/} "*) continue ;; esac
		case $listening in *"$s"*) continue ;; esac
		rm -f "$s"
	done
}
# Podman passes no --root.  Should an engine not pass AGENTRT_DATA_DIR down, the agent
# profile's trails and workspaces of our containers land in agentrt's default data
# directory (or, from an agentrt before it, under the default root): remove those whose
# bundle lies in this suite's temp dir (and only those), and a store left empty.
it_default_root_clean() {
	local store d
	for store in /var/lib/agentrt/roots/* /run/agentrt; do
		[ -d "$store" ] || continue
		for d in "$store"/.audit/* "$store"/.workspaces/*; do
			[ -d "$d" ] || continue
			grep -qsF "\"$IT_TMP/" "$d"/*.json "$d"/*.jsonl || continue
			echo "# left outside the suite's data directory: $d" >&3
			rm -rf --one-file-system "$d"
		done
		case $store in
		/var/lib/agentrt/roots/*)
			if [ -z "$(find "$store/.audit" "$store/.workspaces" -mindepth 1 -maxdepth 1 2>/dev/null)" ]; then
				rm -rf --one-file-system "$store"
			fi
			;;
		esac
	done
}

it_hostdirs_clean() {
	local d
	it_shimsocks_clean
	it_default_root_clean
	for d in ${IT_HOSTDIRS_NEW:-}; do
		# agentrt's default root, created by this suite: what the agent profile keeps there
		# after delete by design (audit trails, the compiled-filter cache) goes with it, as
		# long as no container is left
		if [ "$d" = /run/agentrt ] && [ -d "$d" ] && [ -z "$(ls "$d" 2>/dev/null)" ]; then
			rm -rf --one-file-system "$d/.audit" "$d/.cache" "$d/.workspaces"
		fi
		# agentrt's default data directory, created by this suite: nothing of ours is left in
		# it (it_default_root_clean), so what remains is its cache and retention trail
		if [ "$d" = /var/lib/agentrt ] && [ -d "$d" ] && [ -z "$(ls "$d/roots" 2>/dev/null)" ]; then
			rm -rf --one-file-system "$d/roots" "$d/.cache" "$d/retention" "$d/.last-sweep"
		fi
		if [ -d "$d" ]; then
			rmdir "$d" 2>/dev/null
		elif [ -f "$d" ]; then
			rm -f "$d"
		fi
	done
	return 0
}

# it_cleanup_tmp: unmount, then remove IT_TMP; fail if a mount survives.
it_cleanup_tmp() {
	local rc=0
	[ -n "${IT_TMP:-}" ] && [ -d "$IT_TMP" ] || return 0
	it_umount_under "$IT_TMP" || rc=1
	if [ -z "$(it_mounts_under "$IT_TMP")" ]; then
		rm -rf "$IT_TMP" || rc=1
	fi
	it_hostdirs_clean
	return $rc
}

# --- images ------------------------------------------------------------

# it_build_rootfs DIR: a minimal busybox-static root filesystem.
it_build_rootfs() {
	local d=$1 a
	[ -n "$BUSYBOX" ] || it_die "busybox not found" || return 1
	if ldd "$BUSYBOX" >/dev/null 2>&1; then
		it_die "$BUSYBOX is dynamically linked (install busybox-static)" || return 1
	fi
	mkdir -p "$d"/{bin,sbin,etc,proc,sys,dev,tmp,root,home/user,var/tmp,run,usr/bin,usr/sbin,mnt}
	cp "$BUSYBOX" "$d/bin/busybox"
	for a in $("$BUSYBOX" --list); do
		[ -e "$d/bin/$a" ] || ln -s busybox "$d/bin/$a"
	done
	cat >"$d/etc/passwd" <<-'EOF'
		root:x:0:0:root:/root:/bin/sh
		user:x:1000:1000:user:/home/user:/bin/sh
		nobody:x:65534:65534:nobody:/nonexistent:/bin/false
	EOF
	cat >"$d/etc/group" <<-'EOF'
		root:x:0:
		user:x:1000:
		nogroup:x:65534:
	EOF
	chmod 1777 "$d/tmp" "$d/var/tmp"
	chown 1000:1000 "$d/home/user"
}

# it_build_image DIR: $DIR/rootfs, $DIR/rootfs.tar (plain rootfs, for
# `docker import` / `podman import`) and $DIR/oci.tar (an OCI image
# archive named docker.io/agentrt-it/busybox:latest, for `ctr image import`).
it_build_image() {
	local d=$1
	it_build_rootfs "$d/rootfs" || return 1
	tar --numeric-owner -C "$d/rootfs" -cf "$d/rootfs.tar" . || return 1
	it_oci_archive "$d/rootfs.tar" docker.io/agentrt-it/busybox:latest '"Cmd":["sh"]' "$d/oci.tar"
}

# it_oci_archive LAYER.tar NAME CONFIG-FIELDS OUT.tar: a one-layer OCI image archive named
# NAME (`ctr image import` takes the name from the index); CONFIG-FIELDS is JSON put into the
# image config's "config" beside Env, e.g. '"Cmd":["sh"]' or '"Entrypoint":["/pause"]'.
it_oci_archive() {
	local tar=$1 name=$2 fields=$3 out=$4 d layer cfg man lsz csz msz
	d=$(mktemp -d "$out.XXXXXX") || return 1
	mkdir -p "$d/oci/blobs/sha256"
	layer=$(sha256sum "$tar" | cut -d' ' -f1)
	cp "$tar" "$d/oci/blobs/sha256/$layer"
	lsz=$(stat -c %s "$tar")
	printf '{"architecture":"%s","os":"linux","config":{"Env":["PATH=/usr/sbin:/usr/bin:/sbin:/bin"],%s},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
		"$(it_goarch)" "$fields" "$layer" >"$d/config.json"
	cfg=$(sha256sum "$d/config.json" | cut -d' ' -f1)
	csz=$(stat -c %s "$d/config.json")
	mv "$d/config.json" "$d/oci/blobs/sha256/$cfg"
	printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:%s","size":%s}]}' \
		"$cfg" "$csz" "$layer" "$lsz" >"$d/manifest.json"
	man=$(sha256sum "$d/manifest.json" | cut -d' ' -f1)
	msz=$(stat -c %s "$d/manifest.json")
	mv "$d/manifest.json" "$d/oci/blobs/sha256/$man"
	printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"platform":{"architecture":"%s","os":"linux"},"annotations":{"io.containerd.image.name":"%s","org.opencontainers.image.ref.name":"%s"}}]}' \
		"$man" "$msz" "$(it_goarch)" "$name" "${name##*:}" >"$d/oci/index.json"
	echo '{"imageLayoutVersion":"1.0.0"}' >"$d/oci/oci-layout"
	tar -C "$d/oci" -cf "$out" . || return 1
	rm -rf "$d"
}

it_goarch() {
	case $(uname -m) in
	x86_64) echo amd64 ;; aarch64) echo arm64 ;; *) uname -m ;;
	esac
}

# --- containerd ----------------------------------------------------------

# containerd_start DIR: a private containerd (root, state, sockets under DIR).
# Exports CTRD_SOCK and CTRD_PID.  Fails loudly if it does not answer.
containerd_start() {
	local c=$1
	mkdir -p "$c"
	cat >"$c/config.toml" <<-EOF
		version = 2
		root = "$c/root"
		state = "$c/state"
		disabled_plugins = ["io.containerd.grpc.v1.cri", "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.internal.v1.opt", "io.containerd.tracing.processor.v1.otlp"]
		[grpc]
		  address = "$c/containerd.sock"
		[ttrpc]
		  address = "$c/containerd.sock.ttrpc"
		[debug]
		  address = ""
		[metrics]
		  address = ""
	EOF
	CTRD_SOCK=$c/containerd.sock
	containerd --config "$c/config.toml" --log-level info >"$c/containerd.log" 2>&1 3>&- &
	CTRD_PID=$!
	export CTRD_SOCK CTRD_PID
	if ! it_wait 30 ctr --address "$CTRD_SOCK" version; then
		echo "containerd did not start; its log:" >&2
		tail -n 30 "$c/containerd.log" >&2
		return 1
	fi
}

containerd_stop() {
	it_stop_pid "${CTRD_PID:-}" 20
}

# --- containerd's CRI plugin ---------------------------------------------

CRI_PAUSE_IMG=docker.io/agentrt-it/pause:1
CRI_BUSYBOX_IMG=docker.io/agentrt-it/busybox:latest
CRI_SUBNET=198.51.100
CRI_GW=$CRI_SUBNET.1
# Debian's python3 (python3-grpcio, python3-protobuf), not one a version manager put first on PATH
CRI_PYTHON=${CRI_PYTHON:-$(if [ -x /usr/bin/python3 ]; then echo /usr/bin/python3; else command -v python3; fi)}

# cri_need: skip unless everything the CRI suite uses is installed.
cri_need() {
	it_need_root
	it_need_bin containerd ctr containerd-shim-runc-v2 protoc gcc nsenter ip runc
	[ -x /usr/lib/cni/bridge ] && [ -x /usr/lib/cni/host-local ] && [ -x /usr/lib/cni/loopback ] ||
		skip "containernetworking-plugins not installed"
	"$CRI_PYTHON" -c 'import grpc, google.protobuf' 2>/dev/null || skip "python3-grpcio or python3-protobuf not installed"
}

# cri_images DIR: the pause image (integration/cri/pause.c, static) and the busybox image
# as OCI archives: DIR/pause.tar, DIR/oci.tar.  The stubs of integration/cri/runtime.proto
# go to DIR/py (exported on PYTHONPATH for cri.py).
cri_images() {
	local d=$1
	it_build_image "$d" || return 1
	mkdir -p "$d/pause-root" "$d/py"
	gcc -static -O2 -s -o "$d/pause-root/pause" "$IT_SRC/integration/cri/pause.c" || return 1
	tar --numeric-owner -C "$d/pause-root" -cf "$d/pause-layer.tar" . || return 1
	it_oci_archive "$d/pause-layer.tar" "$CRI_PAUSE_IMG" '"Entrypoint":["/pause"]' "$d/pause.tar" || return 1
	protoc -I "$IT_SRC/integration/cri" --python_out="$d/py" runtime.proto || return 1
	export PYTHONPATH=$d/py${PYTHONPATH:+:$PYTHONPATH}
}

# cri_start DIR NETNS CGROUP-PARENT: containerd with its CRI plugin, running in the network
# namespace NETNS that this function creates (loopback up), so the CNI bridge, the pods'
# veths and the stream server live there and nothing touches the host's network.  Root,
# state, sockets, the CNI config and IPAM data are under DIR; the pods' netns are bind-mounted
# under the state dir.  Runtime handlers: `runc` (the default) and `agentrt` from
# contrib/containerd/config.toml (appended; $CRI_CONTRIB names another fragment of that
# directory, e.g. config-systemd.toml), its BinaryName and Root rewritten.  Imports both images into
# the k8s.io namespace.  Exports CRI_SOCK, CTRD_SOCK, CTRD_PID, CRI_NETNS, CRI_DIR,
# CRI_AGENTRT_ROOT.
cri_start() {
	local c=$1 ns=$2 parent=$3 img=${4:-}
	mkdir -p "$c/cni" "$c/ipam"
	# the sandbox asks for oom_score_adj -998, which needs CAP_SYS_RESOURCE; where this
	# machine's bounding set lacks it (runc fails the same way), containerd is told to keep
	# scores at or above its own
	CRI_RESTRICT_OOM=false
	grep -q '^CapBnd:' /proc/self/status &&
		[ $((0x$(awk '/^CapBnd:/ { print $2 }' /proc/self/status) >> 24 & 1)) -eq 0 ] &&
		CRI_RESTRICT_OOM=true
	CRI_DIR=$c CRI_NETNS=$ns CRI_AGENTRT_ROOT=$c/agentrt-root CRI_PARENT=$parent
	export CRI_DIR CRI_NETNS CRI_AGENTRT_ROOT CRI_PARENT
	ip netns add "$ns" || return 1
	ip -n "$ns" link set lo up || return 1
	cat >"$c/cni/10-agentrt-it.conflist" <<-EOF
		{"cniVersion": "1.0.0", "name": "agentrt-it-cri", "plugins": [
		  {"type": "bridge", "bridge": "agrtcri0", "isGateway": true, "ipMasq": false,
		   "ipam": {"type": "host-local", "dataDir": "$c/ipam",
		            "ranges": [[{"subnet": "$CRI_SUBNET.0/24", "gateway": "$CRI_GW"}]]}}]}
	EOF
	sed -e "s|/usr/local/bin/agentrt|$AGENTRT|" -e "s|/run/containerd/agentrt|$CRI_AGENTRT_ROOT|" \
		"$IT_SRC/contrib/containerd/${CRI_CONTRIB:-config.toml}" >"$c/agentrt.toml"
	cat >"$c/config.toml" <<-EOF
		version = 2
		root = "$c/root"
		state = "$c/state"
		disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.internal.v1.opt", "io.containerd.tracing.processor.v1.otlp"]
		[grpc]
		  address = "$c/containerd.sock"
		[ttrpc]
		  address = "$c/containerd.sock.ttrpc"
		[debug]
		  address = ""
		[metrics]
		  address = ""
		[plugins."io.containerd.grpc.v1.cri"]
		  sandbox_image = "$CRI_PAUSE_IMG"
		  disable_apparmor = true
		  restrict_oom_score_adj = $CRI_RESTRICT_OOM
		  enable_selinux = false
		  netns_mounts_under_state_dir = true
		  stream_server_address = "127.0.0.1"
		  stream_server_port = "0"
		  enable_tls_streaming = false
		  disable_hugetlb_controller = true
		  tolerate_missing_hugetlb_controller = true
		  [plugins."io.containerd.grpc.v1.cri".containerd]
		    default_runtime_name = "runc"
		    snapshotter = "overlayfs"
		    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
		      runtime_type = "io.containerd.runc.v2"
		      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
		        BinaryName = "$(command -v runc)"
		        Root = "$c/runc-root"
		  [plugins."io.containerd.grpc.v1.cri".cni]
		    bin_dir = "/usr/lib/cni"
		    conf_dir = "$c/cni"
		    max_conf_num = 1
		  [plugins."io.containerd.grpc.v1.cri".registry]
		    config_path = "$c/certs.d"
	EOF
	# the fragment as an operator pastes it (an `imports` file would replace the whole CRI
	# plugin table: containerd merges imported plugin tables by key, not deeply)
	grep -v '^version' "$c/agentrt.toml" >>"$c/config.toml"
	CRI_SOCK=$c/containerd.sock CTRD_SOCK=$c/containerd.sock
	if [ -n "${CRI_PRIVATE_VARLIB:-}" ]; then
		# (a VM lane whose root is the host's) containerd in a mount namespace of its own with
		# an empty tmpfs on /var/lib: libcni's cache (/var/lib/cni, which containerd 1.6 cannot
		# move) is then its own, not the host's directory that the host suite makes and
		# removes beside it (seen as ESTALE through virtiofs).  Same pid: each step execs.
		unshare -m --propagation private sh -c 'mount -t tmpfs -o size=16m,mode=755 agentrt-it-varlib /var/lib &&
			exec nsenter --net="/run/netns/$1" containerd --config "$2/config.toml" --log-level info' \
			sh "$ns" "$c" >"$c/containerd.log" 2>&1 3>&- &
	else
		nsenter --net="/run/netns/$ns" containerd --config "$c/config.toml" --log-level info \
			>"$c/containerd.log" 2>&1 3>&- &
	fi
	CTRD_PID=$!
	export CRI_SOCK CTRD_SOCK CTRD_PID
	if ! it_wait 30 ctr --address "$CTRD_SOCK" version; then
		echo "containerd did not start; its log:" >&2
		tail -n 30 "$c/containerd.log" >&2
		return 1
	fi
	if [ -n "$img" ]; then
		ctr --address "$CTRD_SOCK" -n k8s.io images import --all-platforms "$img/pause.tar" >/dev/null &&
			ctr --address "$CTRD_SOCK" -n k8s.io images import --all-platforms "$img/oci.tar" >/dev/null ||
			return 1
	fi
}

# cri CALL [JSON]: one CRI call (cri.py call), the response as JSON on stdout.
cri() { timeout 90 "$CRI_PYTHON" "$IT_SRC/integration/cri/cri.py" --addr "$CRI_SOCK" call "$@"; }

# cri_stop: remove every pod (containers with them), stop containerd by PID, then remove
# what is left: processes naming the dir, mounts under it, the netns, our cgroups.
cri_stop() {
	local p rc=0
	if [ -n "${CTRD_PID:-}" ] && kill -0 "$CTRD_PID" 2>/dev/null; then
		for p in $(cri RuntimeService/ListPodSandbox '{}' 2>/dev/null | jq -r '.items[].id'); do
			cri RuntimeService/StopPodSandbox "{\"pod_sandbox_id\": \"$p\"}" >/dev/null 2>&1
			cri RuntimeService/RemovePodSandbox "{\"pod_sandbox_id\": \"$p\"}" >/dev/null 2>&1
		done
		it_stop_pid "$CTRD_PID" 20
	fi
	it_kill_under "$CRI_DIR" || rc=1
	[ -n "${CRI_NETNS:-}" ] && [ -e "/run/netns/$CRI_NETNS" ] && ip netns del "$CRI_NETNS"
	[ -n "${CRI_PARENT:-}" ] && it_rm_cgroups "$CRI_PARENT"
	return $rc
}

# --- docker --------------------------------------------------------------

docker() { command "$DOCKER_CLI" "$@"; }

# docker_start: dockerd on its own socket, data root, exec root and
# containerd; runtimes from contrib/docker/daemon.json (agentrt with the
# default profile, ...), agentrt-oci (--profile oci) and agentrt-cli from
# --add-runtime.
docker_start() {
	local d=$IT_TMP/docker
	mkdir -p "$d/cli"
	# Our own containerd, passed with --containerd: without it dockerd 20.10
	# uses a system containerd whenever /run/containerd/containerd.sock
	# exists (state and shims would land there), else supervises its own.
	containerd_start "$d/containerd" || return 1
	# contrib/docker/daemon.json with the built binary's path, plus agentrt-oci
	jq --arg p "$AGENTRT" '.runtimes |= (map_values(.path = $p)
		+ {"agentrt-oci": {"path": $p, "runtimeArgs": ["--profile", "oci"]}})' \
		"$IT_SRC/contrib/docker/daemon.json" >"$d/daemon.json" || return 1
	DOCKER_CGROUP_PARENT=agentrt-it-docker-$$
	export DOCKER_HOST=unix://$d/docker.sock DOCKER_CONFIG=$d/cli DOCKER_CGROUP_PARENT
	# DOCKER_CGROUP_DRIVER=systemd (the VM lane): Docker's default parent, system.slice
	local cgopts=(--exec-opt native.cgroupdriver=cgroupfs --cgroup-parent "/$DOCKER_CGROUP_PARENT")
	[ "${DOCKER_CGROUP_DRIVER:-cgroupfs}" = systemd ] && cgopts=(--exec-opt native.cgroupdriver=systemd)
	dockerd --config-file "$d/daemon.json" \
		--data-root "$d/data" --exec-root "$d/exec" --pidfile "$d/dockerd.pid" \
		-H "$DOCKER_HOST" --containerd "$CTRD_SOCK" \
		--iptables=false --ip-masq=false --bridge=none \
		--default-ulimit nofile=1024:1024 --default-ulimit nproc=1024:1024 \
		"${cgopts[@]}" \
		--add-runtime "agentrt-cli=$AGENTRT" \
		>"$d/dockerd.log" 2>&1 3>&- &
	DOCKERD_PID=$!
	export DOCKERD_PID
	if ! it_wait 60 docker info; then
		echo "dockerd did not start; its log:" >&2
		tail -n 40 "$d/dockerd.log" >&2
		return 1
	fi
}

docker_stop() {
	local ids rc=0
	if [ -n "${DOCKERD_PID:-}" ] && kill -0 "$DOCKERD_PID" 2>/dev/null; then
		ids=$(timeout 20 "$DOCKER_CLI" ps -aq 2>/dev/null)
		[ -n "$ids" ] && timeout 60 "$DOCKER_CLI" rm -f $ids >/dev/null 2>&1
		it_stop_pid "$DOCKERD_PID" 30
	fi
	containerd_stop
	it_kill_under "$IT_TMP" || rc=1
	[ -n "${DOCKER_CGROUP_PARENT:-}" ] && it_rm_cgroups "$DOCKER_CGROUP_PARENT"
	return $rc
}

# --- podman --------------------------------------------------------------

# podman_setup DIR: private storage (--root/--runroot/--tmpdir under DIR), a
# containers.conf made from contrib/podman/containers.conf (agentrt path
# rewritten) plus this machine's ulimits and a private CNI config dir.
# Sets PODMAN_DIR; `pm` then runs podman with those flags.
podman_setup() {
	PODMAN_DIR=$1
	mkdir -p "$PODMAN_DIR/cni"
	# conmon starts agentrt with conmon_env_vars only: pass the suite's data directory there
	sed -e "s|/usr/local/bin/agentrt|$AGENTRT|" \
		-e "/^\[engine\]\$/a conmon_env_vars = [\"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\", \"AGENTRT_DATA_DIR=$AGENTRT_DATA_DIR\", \"AGENTRT_CONFIG=$AGENTRT_CONFIG\"]" \
		"$IT_SRC/contrib/podman/containers.conf" >"$PODMAN_DIR/containers.conf"
	cat >>"$PODMAN_DIR/containers.conf" <<-EOF
		[containers]
		default_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]
		[network]
		network_config_dir = "$PODMAN_DIR/cni"
	EOF
	export PODMAN_DIR CONTAINERS_CONF=$PODMAN_DIR/containers.conf
}

pm() {
	podman --root "$PODMAN_DIR/root" --runroot "$PODMAN_DIR/runroot" --tmpdir "$PODMAN_DIR/tmp" \
		--cgroup-manager cgroupfs --events-backend file --storage-driver overlay "$@"
}

# pm_pod_rm ARGS...: `pm ARGS... pod rm -f -t 0 POD...`, once more (up to 3 times, 1 s apart)
# when Podman's own removal fails with "device or resource busy": Podman 4.3 races its
# cleanup process (the container's exit command) unmounting the container's shm and root
# against the removal of its storage, runc or agentrt alike; the retry finds them unmounted.
# Any other failure is returned at once, with Podman's output on stdout.
pm_pod_rm() {
	local out rc i
	for i in 1 2 3; do
		out=$(pm "$@" 2>&1) && rc=0 || rc=$?
		[ "$rc" -ne 0 ] && [[ "$out" == *"device or resource busy"* ]] && [ "$i" -lt 3 ] || break
		sleep 1
	done
	printf '%s\n' "$out"
	return "$rc"
}

# podman_teardown: remove every container and the storage (unmounts it).
podman_teardown() {
	[ -n "${PODMAN_DIR:-}" ] && [ -d "$PODMAN_DIR/root" ] || return 0
	timeout 60 podman --root "$PODMAN_DIR/root" --runroot "$PODMAN_DIR/runroot" \
		--tmpdir "$PODMAN_DIR/tmp" --cgroup-manager cgroupfs --events-backend file \
		--storage-driver overlay --runtime "$AGENTRT" rm -a -f -t 0 >/dev/null 2>&1
	timeout 60 podman --root "$PODMAN_DIR/root" --runroot "$PODMAN_DIR/runroot" \
		--tmpdir "$PODMAN_DIR/tmp" --cgroup-manager cgroupfs --events-backend file \
		--storage-driver overlay system reset -f >/dev/null 2>&1
	return 0
}

# --- rootless ------------------------------------------------------------

# rl_user_create: an unprivileged user for rootless tests (home and
# XDG_RUNTIME_DIR under IT_TMP, 65536 subordinate uids/gids after any
# existing range).  Exports RL_USER, RL_UID, RL_GID, RL_HOME, RL_XDG.
rl_user_create() {
	local start
	RL_USER=agentrtit$$
	RL_HOME=$IT_TMP/home
	start=$(cat /etc/subuid /etc/subgid 2>/dev/null |
		awk -F: 'BEGIN { m = 100000 } { e = $2 + $3; if (e > m) m = e } END { print m }')
	useradd -M -d "$RL_HOME" -s /bin/sh "$RL_USER" || return 1
	export RL_USER RL_HOME
	usermod --add-subuids "$start-$((start + 65535))" --add-subgids "$start-$((start + 65535))" "$RL_USER" ||
		return 1
	RL_UID=$(id -u "$RL_USER")
	RL_GID=$(id -g "$RL_USER")
	RL_XDG=$IT_TMP/xdg
	mkdir -p "$RL_HOME" "$RL_XDG"
	chown "$RL_UID:$RL_GID" "$RL_HOME" "$RL_XDG"
	chmod 700 "$RL_XDG"
	export RL_UID RL_GID RL_XDG
}

# rl_user_remove: kill what the user still runs (by PID), delete the user
# and its subordinate ranges.
rl_user_remove() {
	local p u
	[ -n "${RL_USER:-}" ] && id "$RL_USER" >/dev/null 2>&1 || return 0
	for p in /proc/[0-9]*; do
		u=$(awk '/^Uid:/ { print $2 }' "$p/status" 2>/dev/null)
		[ "$u" = "$RL_UID" ] && kill -KILL "${p#/proc/}" 2>/dev/null
	done
	sleep 0.2
	userdel "$RL_USER" 2>/dev/null || userdel -f "$RL_USER"
	sed -i "/^$RL_USER:/d" /etc/subuid /etc/subgid
	grep -q "^$RL_GID:\\|^$RL_USER:" /etc/group && groupdel "$RL_USER" 2>/dev/null
	return 0
}

# rl_run CMD...: run CMD as the rootless user with a clean environment.
rl_run() {
	setpriv --reuid "$RL_UID" --regid "$RL_GID" --init-groups \
		env -i HOME="$RL_HOME" USER="$RL_USER" LOGNAME="$RL_USER" \
		XDG_RUNTIME_DIR="$RL_XDG" PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin \
		CONTAINERS_CONF="${RL_CONTAINERS_CONF:-}" "$@"
}

# rpm ARGS...: rootless podman with private storage under IT_TMP/rl.
rpm() {
	rl_run podman --root "$IT_TMP/rl/root" --runroot "$IT_TMP/rl/runroot" --tmpdir "$IT_TMP/rl/tmp" \
		--cgroup-manager cgroupfs --events-backend file --storage-driver vfs "$@"
}
