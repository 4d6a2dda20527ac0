#!/bin/bash
# install-deps.sh - install agentrt's build and test dependencies from Debian packages.
#
# Idempotent: packages already installed are left alone and `apt-get update` runs only when
# something is missing and the package lists do not know it.  Optional groups:
#   --engines   docker.io containerd podman uidmap slirp4netns fuse-overlayfs kubernetes-client
#               containernetworking-plugins python3-grpcio python3-protobuf protobuf-compiler
#               (the CRI suite: CNI bridge for the pods, a CRI v1 client over gRPC)
#   --vm        qemu-system-x86 qemu-system-common lz4 linux-image-cloud-amd64 apparmor
#               (apparmor: apparmor_parser, to load the VM lane's test profiles)
#   --net       dnsmasq-base socat (the egress tests; dnsmasq-base: no host service)
#   --bench     gnuplot-nox hyperfine bubblewrap
#   --workload  mmdebstrap (the Debian rootfs of tests/workload/)
#   --ci        ccache (.ci/run compiles through it: a clean clone's builds from the objects
#               of the run before)
#   --all       every group
#   --dry-run   print what would be installed, install nothing
# Packages listed as optional (kubernetes-client) are skipped with a warning when the archive
# does not carry them.
set -euo pipefail

BASE=(build-essential pkg-config libseccomp-dev libyajl-dev libmnl-dev libnftnl-dev zlib1g-dev libssl-dev
	busybox-static bats jq nftables iproute2 clang clang-format runc crun hyperfine strace linux-perf
	util-linux tmux valgrind git ca-certificates python3 file golang-go libsystemd-dev)
ENGINES=(docker.io containerd podman uidmap slirp4netns fuse-overlayfs containernetworking-plugins
	python3-grpcio python3-protobuf protobuf-compiler)
ENGINES_OPTIONAL=(kubernetes-client)
VM=(qemu-system-x86 qemu-system-common lz4 linux-image-cloud-amd64 apparmor)
NET=(dnsmasq-base socat)
BENCH=(gnuplot-nox hyperfine bubblewrap)
WORKLOAD=(mmdebstrap)
CI=(ccache)

usage() {
	sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'
	exit "${1:-0}"
}

want=("${BASE[@]}")
optional=()
dry=0
for arg in "$@"; do
	case "$arg" in
	--engines) want+=("${ENGINES[@]}"); optional+=("${ENGINES_OPTIONAL[@]}") ;;
	--vm) want+=("${VM[@]}") ;;
	--net) want+=("${NET[@]}") ;;
	--bench) want+=("${BENCH[@]}") ;;
	--workload) want+=("${WORKLOAD[@]}") ;;
	--ci) want+=("${CI[@]}") ;;
	--all) want+=("${ENGINES[@]}" "${VM[@]}" "${NET[@]}" "${BENCH[@]}" "${WORKLOAD[@]}" "${CI[@]}"); optional+=("${ENGINES_OPTIONAL[@]}") ;;
	--dry-run) dry=1 ;;
	-h | --help) usage 0 ;;
	*) echo "install-deps.sh: unknown option \`$arg'" >&2; usage 2 >&2 ;;
	esac
done

if [ "$(id -u)" -ne 0 ] && [ "$dry" -eq 0 ]; then
	echo "install-deps.sh: must run as root (apt-get install)" >&2
	exit 1
fi

installed() {
	[ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" = installed ]
}

known() {
	[ -n "$(apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ && $2 != "(none)" {print $2}')" ]
}

# Deduplicate while keeping order.
declare -A seen=()
missing=()
for p in "${want[@]}" "${optional[@]}"; do
	[ -n "${seen[$p]:-}" ] && continue
	seen[$p]=1
	installed "$p" || missing+=("$p")
done

if [ "${#missing[@]}" -eq 0 ]; then
	echo "install-deps.sh: all ${#seen[@]} packages already installed"
	exit 0
fi

# Refresh the package lists only when the archive does not know a missing package.
for p in "${missing[@]}"; do
	if ! known "$p"; then
		if [ "$dry" -eq 0 ]; then
			echo "install-deps.sh: apt-get update (\`$p' unknown to the package lists)"
			apt-get update -qq
		fi
		break
	fi
done

final=()
for p in "${missing[@]}"; do
	if known "$p"; then
		final+=("$p")
		continue
	fi
	is_optional=0
	for o in "${optional[@]}"; do [ "$o" = "$p" ] && is_optional=1; done
	if [ "$is_optional" -eq 1 ]; then
		echo "install-deps.sh: warning: optional package \`$p' is not in the archive, skipping" >&2
	else
		echo "install-deps.sh: package \`$p' is not in the archive" >&2
		exit 1
	fi
done

# Required packages in one transaction; optional ones one by one, each allowed to fail (e.g.
# kubernetes-client when another package already provides /usr/bin/kubectl).
required=() opt=()
for p in "${final[@]}"; do
	is_optional=0
	for o in "${optional[@]}"; do [ "$o" = "$p" ] && is_optional=1; done
	if [ "$is_optional" -eq 1 ]; then opt+=("$p"); else required+=("$p"); fi
done
echo "install-deps.sh: installing ${final[*]}"
[ "$dry" -eq 1 ] && exit 0
if [ "${#required[@]}" -gt 0 ]; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${required[@]}"
fi
for p in "${opt[@]}"; do
	if [ "$p" = kubernetes-client ] && command -v kubectl >/dev/null; then
		echo "install-deps.sh: kubectl is already installed, skipping kubernetes-client"
		continue
	fi
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$p" ||
		echo "install-deps.sh: warning: optional package \`$p' did not install, skipping" >&2
done
exit 0
