#!/bin/bash
# contrib/demo.sh - run one container with agentrt in a throw-away busybox bundle.
#
# Usage: contrib/demo.sh            (as root; uses $AGENTRT, else ./agentrt, else agentrt in PATH)
# Builds a bundle in a temporary directory from Debian's busybox-static, generates its
# config.json with `agentrt spec`, runs a container that shows who and where it is (ids,
# hostname, namespaces, capabilities, mounts), then deletes the container and the bundle.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
rt=${AGENTRT:-}
if [ -z "$rt" ]; then
	if [ -x "$here/agentrt" ]; then rt=$here/agentrt; else rt=$(command -v agentrt || true); fi
fi
[ -n "$rt" ] && [ -x "$rt" ] || { echo "demo: agentrt not found (run make, or set AGENTRT)" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "demo: must run as root" >&2; exit 1; }
[ -x /bin/busybox ] || { echo "demo: /bin/busybox missing (apt-get install busybox-static)" >&2; exit 1; }

tmp=$(mktemp -d /tmp/agentrt-demo.XXXXXX)
id=demo-$$
cleanup() {
	"$rt" --root "$tmp/state" delete --force "$id" >/dev/null 2>&1 || true
	rm -rf --one-file-system "$tmp"
}
trap cleanup EXIT

# The root filesystem: busybox and its applets, a passwd file.
bundle=$tmp/bundle
mkdir -p "$bundle/rootfs"/{bin,sbin,usr/bin,usr/sbin,etc,proc,sys,dev,tmp,root}
chmod 1777 "$bundle/rootfs/tmp"
cp /bin/busybox "$bundle/rootfs/bin/busybox"
/bin/busybox --list-full | while read -r applet; do
	[ "$applet" = bin/busybox ] || ln -sf /bin/busybox "$bundle/rootfs/$applet"
done
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' >"$bundle/rootfs/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$bundle/rootfs/etc/group"

# The config: the runtime's default spec, with our program.
(cd "$bundle" && "$rt" spec)
cat >"$bundle/rootfs/demo.sh" <<'DEMO'
echo "== inside an agentrt container"
echo "id:        $(id)"
echo "hostname:  $(hostname)"
echo "kernel:    $(uname -sr)"
echo "pid:       $$ (pid namespace: $(readlink /proc/self/ns/pid))"
echo "processes: $(ls -d /proc/[0-9]* | wc -l)"
grep -E '^(CapEff|CapBnd|NoNewPrivs|Seccomp):' /proc/self/status | sed 's/^/status:    /'
echo "network:   $(ls /sys/class/net | tr '\n' ' ')"
echo "mounts:"
sed 's/^/  /' /proc/self/mounts
DEMO
tmpcfg=$bundle/config.json.new
jq '.process.terminal = false | .process.args = ["sh", "/demo.sh"] | .hostname = "agentrt-demo" |
	.root.readonly = true | .linux.cgroupsPath = "/agentrt-demo/'"$id"'"' \
	"$bundle/config.json" >"$tmpcfg"
mv "$tmpcfg" "$bundle/config.json"

echo "== $("$rt" --version | head -n1): running container $id from $bundle"
status=0
"$rt" --root "$tmp/state" run --bundle "$bundle" "$id" || status=$?
for c in /sys/fs/cgroup/*/agentrt-demo /sys/fs/cgroup/agentrt-demo; do
	[ -d "$c" ] && rmdir "$c" 2>/dev/null
done
echo "== container exited with status $status; bundle and state removed"
exit "$status"
