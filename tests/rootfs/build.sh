#!/bin/bash
# tests/rootfs/build.sh - build the busybox test rootfs (default build/rootfs).
#
# Usage: tests/rootfs/build.sh [OUTDIR]
# Debian's busybox-static with every applet symlinked, /etc/passwd and /etc/group (root,
# nobody, user 1000), the usual empty directories, and the static probes from
# build/test-helpers (try-syscall, fdleak, xchg, ptrace-race, usock, srh-send, mmap-write, udp-ports, forkstorm, tmpfile-link, callflood, execfail, errq-recv, dns-flood, mark-connect, packet-send, fileops, execvia) in /usr/local/bin.  The result is cached:
# a hash of the inputs is kept in OUTDIR/.inputs and the tree is rebuilt only when it changes.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=${1:-$repo/build/rootfs}
helpers=${HELPER_DIR:-$repo/build/test-helpers}
busybox=${BUSYBOX:-/bin/busybox}
probes=(try-syscall fdleak xchg ptrace-race usock srh-send mmap-write udp-ports forkstorm tmpfile-link callflood execfail errq-recv dns-flood mark-connect packet-send fileops execvia)

die() {
	echo "rootfs/build.sh: $*" >&2
	exit 1
}

[ -x "$busybox" ] || die "\`$busybox' not found (apt-get install busybox-static)"
file -L "$busybox" 2>/dev/null | grep -q 'statically linked' ||
	ldd "$busybox" 2>&1 | grep -q 'not a dynamic' ||
	die "\`$busybox' is not statically linked (install busybox-static)"
for p in "${probes[@]}"; do
	[ -x "$helpers/$p" ] || die "probe \`$helpers/$p' missing (run make test-helpers)"
done

inputs=$( (sha256sum "$0" "$busybox" "${probes[@]/#/$helpers/}" | awk '{print $1}') | sha256sum | cut -d' ' -f1)
if [ -f "$out/.inputs" ] && [ "$(cat "$out/.inputs")" = "$inputs" ]; then
	exit 0
fi

echo "rootfs/build.sh: building $out"
tmp=$(mktemp -d "${out%/}.tmp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

chmod 0755 "$tmp"
mkdir -p "$tmp"/{bin,sbin,usr/bin,usr/sbin,usr/local/bin,etc,dev,proc,sys,tmp,root,home/user,run,var/tmp,mnt}
chmod 1777 "$tmp/tmp" "$tmp/var/tmp"
chmod 0700 "$tmp/root"
cp "$busybox" "$tmp/bin/busybox"
# `busybox --list-full` gives paths such as bin/ls, usr/bin/env.
while read -r applet; do
	[ "$applet" = bin/busybox ] && continue
	dir=$(dirname "$applet")
	mkdir -p "$tmp/$dir"
	# Relative to the applet's directory; not realpath, which would see the host's /bin
	# (a symlink to usr/bin on merged-/usr systems).
	up=$(sed -e 's|[^/][^/]*|..|g' <<<"$dir")
	case "$dir" in
	bin) rel=busybox ;;
	.) rel=bin/busybox ;;
	*) rel=$up/bin/busybox ;;
	esac
	ln -sf "$rel" "$tmp/$applet"
done < <("$busybox" --list-full)
for p in "${probes[@]}"; do
	install -m 0755 "$helpers/$p" "$tmp/usr/local/bin/$p"
done

cat >"$tmp/etc/passwd" <<'PASSWD'
root:x:0:0:root:/root:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
user:x:1000:1000:test user:/home/user:/bin/sh
PASSWD
cat >"$tmp/etc/group" <<'GROUP'
root:x:0:
users:x:100:user
user:x:1000:
nogroup:x:65534:
GROUP
echo agentrt-test >"$tmp/etc/hostname"
: >"$tmp/etc/resolv.conf"
: >"$tmp/etc/hosts"
chown 1000:1000 "$tmp/home/user"
echo "$inputs" >"$tmp/.inputs"

rm -rf "$out"
mv "$tmp" "$out"
trap - EXIT
