#!/bin/bash
# contrib/demo.sh - the agent-sandbox demo: one container under the `agent`
# profile on a bundled busybox rootfs, showing each guarantee from inside,
# then cleaning everything up.  Run as root after `make`.
#
#   contrib/demo.sh            uses ./agentrt (or $AGENTRT)
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
AGENTRT=${AGENTRT:-$repo/agentrt}
[ -x "$AGENTRT" ] || AGENTRT=$(command -v agentrt) || { echo "demo: build agentrt first (make)" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "demo: run as root" >&2; exit 1; }

make -s -C "$repo" test-helpers test-rootfs >/dev/null
root=/run/agentrt-demo-$$
bundle=$(mktemp -d /tmp/agentrt-demo.XXXXXX)
# the demo's workspace and trail in a data directory of its own, removed at the end
export AGENTRT_DATA_DIR=$bundle/data
id=demo-$$
cleanup() {
	"$AGENTRT" --root "$root" delete --force "$id" >/dev/null 2>&1 || true
	"$AGENTRT" --root "$root" workspace "$id" purge >/dev/null 2>&1 || true
	rm -rf "$bundle" "$root"
}
trap cleanup EXIT

cp -a "$repo/build/rootfs" "$bundle/rootfs"
mkdir -p "$bundle/project"
echo "the operator's real data" >"$bundle/project/data.txt"
"$AGENTRT" spec --bundle "$bundle"

cat >"$bundle/rootfs/demo.sh" <<'INSIDE'
#!/bin/sh
check() { if eval "$2" >/dev/null 2>&1; then echo "  [ok] $1"; else echo "  [!!] $1"; fi; }
echo "inside the agent sandbox (uid $(id -u)):"
check "the root filesystem is read-only" '! touch /usr/evil'
check "/workspace is writable" 'echo draft >/workspace/notes.txt'
check "the agent may rm -rf its workspace copy" 'rm -rf /workspace/data.txt'
check "git may write .git/ (a planted hook is marked by diff, left out of commit)" 'mkdir -p /workspace/.git/hooks && echo x >/workspace/.git/hooks/post-checkout'
check "no_new_privs is set" 'grep -q "^NoNewPrivs:[[:space:]]*1" /proc/self/status'
check "a seccomp filter is loaded" 'grep -q "^Seccomp:[[:space:]]*2" /proc/self/status'
check "no inheritable or ambient capabilities" 'grep -q "^CapInh:[[:space:]]*0000000000000000" /proc/self/status && grep -q "^CapAmb:[[:space:]]*0000000000000000" /proc/self/status'
check "new user namespaces are refused" 'try-syscall unshare-user | grep -q EPERM'
check "mount is refused" 'try-syscall mount | grep -q EPERM'
check "bpf is refused" 'try-syscall bpf | grep -q EPERM'
check "the pid limit is in force" 'test "$(cat /sys/fs/cgroup/pids/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids.max)" != max'
check "the memory limit is in force" 'test "$(cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/memory.max)" -lt 9223372036854771712'
check "no network interface but loopback" '! ls /sys/class/net | grep -v "^lo$"'
grep -E '^Cap(Eff|Bnd):' /proc/self/status | sed 's/^/  /'
INSIDE
chmod 755 "$bundle/rootfs/demo.sh"

jq --arg p "$bundle/project" '.process.terminal = false | .process.args = ["/demo.sh"] |
	.mounts += [{"destination": "/workspace", "type": "bind", "source": $p, "options": ["rbind", "rw"]}]' \
	"$bundle/config.json" >"$bundle/config.tmp" && mv "$bundle/config.tmp" "$bundle/config.json"

echo "== agentrt --profile agent run $id"
"$AGENTRT" --root "$root" --profile agent run --keep --bundle "$bundle" "$id"
echo
echo "== what the profile changed (agentrt explain $id)"
"$AGENTRT" --root "$root" explain "$id" | head -n 40
echo
echo "== the host directory after the run:"
ls -l "$bundle/project"
if "$AGENTRT" --help | grep -q '^  workspace'; then
	echo
	echo "== the agent's changes, held back until approved (agentrt workspace $id diff)"
	"$AGENTRT" --root "$root" workspace "$id" diff || true
fi
