#!/bin/bash
# build-rootfs.sh - build (or reuse) the Debian 12 rootfs of the workload suite with mmdebstrap.
#
# Usage: tests/workload/build-rootfs.sh [--print]
# The rootfs is cached under $WORKLOAD_CACHE (default /var/cache/agentrt-test), in a directory
# named after the SHA-256 of the suite, variant and package list below, so a change to the list
# builds a new one and an unchanged list reuses it.  A build goes to a temporary directory and is
# renamed into place when complete; a lock serialises concurrent callers.  Prints the rootfs
# path on stdout (the build log goes to stderr).  Older rootfs directories of this script are
# removed once a new one is in place.
set -euo pipefail

SUITE=bookworm
VARIANT=apt
PACKAGES=(python3 python3-venv python3-setuptools python3-wheel nodejs npm gcc make libc6-dev
	git golang-go gdb strace procps gnupg ccache linux-perf)
CACHE=${WORKLOAD_CACHE:-/var/cache/agentrt-test}
MIRROR=${WORKLOAD_MIRROR:-}

key=$(printf '%s\n' "$SUITE" "$VARIANT" "${PACKAGES[@]}" | sha256sum | cut -c1-16)
dest=$CACHE/debian12-$key

if [ -f "$dest/.complete" ]; then
	echo "$dest"
	exit 0
fi
if ! command -v mmdebstrap >/dev/null; then
	echo "build-rootfs.sh: mmdebstrap not installed (contrib/install-deps.sh --workload)" >&2
	exit 1
fi
mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"
flock -w 1800 9 || {
	echo "build-rootfs.sh: $CACHE/.lock: still held after 30 min" >&2
	exit 1
}
if [ -f "$dest/.complete" ]; then
	echo "$dest"
	exit 0
fi
tmp=$CACHE/.build-$key-$$
rm -rf "$tmp"
trap 'rm -rf "$tmp"' EXIT
start=$(date +%s)
includes=$(
	IFS=,
	echo "${PACKAGES[*]}"
)
# --mode=root: we are root and want the files owned as in the image.  No recommends: the
# package list above is what the suite needs.
# Without the caller's descriptors: under bats the pipe mmdebstrap hands apt lands on fd 10 or
# above, and Debian's /bin/sh (dash) refuses `cat >&11` ("Bad fd number"): the download fails.
# shellcheck disable=SC2086
(
	for fd in /proc/self/fd/*; do
		fd=${fd##*/}
		if [ "$fd" -gt 2 ] && [ "$fd" -lt 255 ]; then eval "exec $fd>&-"; fi
	done
	exec mmdebstrap --mode=root --variant="$VARIANT" --include="$includes" \
	--aptopt='APT::Install-Recommends "false"' \
	--dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
	--dpkgopt='path-exclude=/usr/share/locale/*' \
	"$SUITE" "$tmp" $MIRROR >&2
)
rm -rf "$dest"
echo "$(($(date +%s) - start))" >"$tmp/.build-seconds"
printf '%s\n' "${PACKAGES[@]}" >"$tmp/.packages"
touch "$tmp/.complete"
mv "$tmp" "$dest"
trap - EXIT
# Older builds of this script (another package list) are of no further use.
for old in "$CACHE"/debian12-*; do
	[ "$old" = "$dest" ] || rm -rf "$old"
done
echo "build-rootfs.sh: built $dest in $(cat "$dest/.build-seconds") s" >&2
echo "$dest"
