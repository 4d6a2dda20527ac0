#!/bin/bash
# subagents.sh - the `sub run` row of bench/: `sub run -- /bin/true` asked from inside a parent
# container (agent profile) against a plain `agentrt run` of a /bin/true container on the host
# (agent profile, same rootfs), N rounds, the order alternated every round; and the memory an
# idle child costs (its cgroup's memory and its monitor's RSS).
#
#   bench/subagents.sh [--rounds N] [--agentrt PATH] [--out FILE]
#
# `sub run` is timed as `agentrt exec P /run/agentrt/bin/agentrt sub run -- /bin/true` minus
# `agentrt exec P /bin/true` of the same round (the exec that carries the client in), so the
# figure is the client, the monitor's handler and the child's own run. Prints the medians and
# the median of the per-round ratios, as the main table does. Needs root and busybox-static.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
rounds=20 out="" rt=${AGENTRT:-$repo/agentrt}
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --agentrt) rt=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '3,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "subagents.sh: unknown argument \`$1'" >&2; exit 2 ;;
  esac
done
[ -n "$out" ] && out=$(realpath -m "$out")
[ "$(id -u)" = 0 ] || { echo "subagents.sh: must run as root" >&2; exit 1; }
[ -x "$rt" ] || { echo "subagents.sh: no agentrt at $rt" >&2; exit 1; }
[ -x /bin/busybox ] || { echo "subagents.sh: needs busybox-static" >&2; exit 1; }
[ "$rounds" -ge 1 ] && [ "$rounds" -le 1000 ] || { echo "subagents.sh: --rounds 1..1000" >&2; exit 2; }

work=$(mktemp -d /tmp/agentrt-bench-sub.XXXXXX)
root=$work/root
export AGENTRT_DATA_DIR=$work/data AGENTRT_CONFIG=$work/agentrt.conf
cleanup() {
  for id in $("$rt" --root "$root" list -q 2>/dev/null); do
    "$rt" --root "$root" delete --force "$id" >/dev/null 2>&1 || true
  done
  # the parent cgroup of the containers' (agentrt removes only their own leaves)
  for d in /sys/fs/cgroup/*/agentrt-bench-sub-$$ /sys/fs/cgroup/agentrt-bench-sub-$$; do
    [ -d "$d" ] && rmdir "$d"/*/ "$d" 2>/dev/null || true
  done
  [ -n "$(awk -v d="$work" 'index($5, d) == 1' /proc/self/mountinfo)" ] && return
  rm -rf --one-file-system "$work"
}
trap cleanup EXIT
mkdir -p "$work/b/rootfs/bin" "$work/b/rootfs/proc" "$work/b/rootfs/dev" "$work/b/rootfs/sys" \
  "$work/b/rootfs/workspace" "$work/b/rootfs/run" "$work/b/rootfs/tmp" "$work/ws"
cp /bin/busybox "$work/b/rootfs/bin/"
for a in sh true sleep; do ln -s busybox "$work/b/rootfs/bin/$a"; done
"$rt" spec --bundle "$work/b"
jq --arg w "$work/ws" '.process.terminal = false | .process.args = ["sleep", "100000"] |
  .mounts += [{"destination": "/workspace", "type": "bind", "source": $w, "options": ["rbind", "rw"]}] |
  .linux.cgroupsPath = "/agentrt-bench-sub-'$$'/parent"' "$work/b/config.json" >"$work/c.json"
mv "$work/c.json" "$work/b/config.json"
cp -a "$work/b" "$work/h"
jq '.process.args = ["/bin/true"] | del(.linux.cgroupsPath)' "$work/h/config.json" >"$work/c.json"
mv "$work/c.json" "$work/h/config.json"
"$rt" --root "$root" --profile agent run -d --bundle "$work/b" parent </dev/null >/dev/null 2>&1

python3 - "$rt" "$root" "$rounds" "$work/h" "$here" >"$work/report" <<'PY'
import statistics, subprocess, sys
rt, root, rounds, hb = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
sys.dont_write_bytecode = True  # nothing written into the tree
sys.path.insert(0, sys.argv[5])
from timed import timed as t  # a blocking wait: bench/timed.py says why
A = [rt, "--root", root, "--profile", "agent"]
def sub_once(i):
    e, rc0 = t(A + ["exec", "parent", "/bin/true"])
    s, rc1 = t(A + ["exec", "parent", "/run/agentrt/bin/agentrt", "sub", "run", "--name",
                    "b%d" % i, "--", "/bin/true"])
    subprocess.run(A + ["exec", "parent", "/run/agentrt/bin/agentrt", "sub", "discard",
                        "b%d" % i], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return (s - e) if rc0 == 0 and rc1 == 0 else None
def host_once(i):
    d, rc = t(A + ["run", "--bundle", hb, "h%d" % i])
    subprocess.run([rt, "--root", root, "workspace", "h%d" % i, "purge"],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    subprocess.run([rt, "--root", root, "audit", "h%d" % i, "--purge"],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return d if rc == 0 else None
sub_once(0); host_once(0)   # untimed warm-up
S, H, R, fails = [], [], [], 0
for i in range(1, rounds + 1):
    pair = (sub_once(i), host_once(i)) if i % 2 else tuple(reversed((host_once(i), sub_once(i))))
    if None in pair:
        fails += 1
        continue
    S.append(pair[0]); H.append(pair[1]); R.append(pair[0] / pair[1])
if not S:
    print("no successful round"); sys.exit(1)
print("sub run (from inside, less the exec) median %.2f ms, host agentrt run median %.2f ms, "
      "paired ratio %.2f, %d rounds, %d failed" %
      (statistics.median(S), statistics.median(H), statistics.median(R), len(S), fails))
print("ROW: | `sub run /bin/true` from inside vs host `agentrt run` (agent profile) | %.2f ms | %.2f ms | %.2f |"
      % (statistics.median(S), statistics.median(H), statistics.median(R)))
PY
cat "$work/report"

# an idle child: its cgroup's memory and its monitor's resident set
"$rt" --root "$root" exec parent /run/agentrt/bin/agentrt sub run --name idle --detach -- sleep 600 \
  </dev/null >/dev/null 2>&1
sleep 1
cgp=$(jq -r '[.. | .cgroupPath? // empty][0]' "$root/parent.idle/state.json")
mem=""
for f in "/sys/fs/cgroup/memory$cgp/memory.usage_in_bytes" "/sys/fs/cgroup$cgp/memory.current"; do
  [ -r "$f" ] && mem=$(cat "$f") && break
done
mpid=$(cut -d' ' -f1 "$root/parent.idle/monitor.pid" 2>/dev/null || true)
rss=$([ -n "$mpid" ] && awk '/^VmRSS/ {print $2}' "/proc/$mpid/status" 2>/dev/null || true)
echo "idle child: cgroup memory ${mem:-?} bytes, its monitor's RSS ${rss:-?} kB"
if [ -n "$out" ]; then
  grep '^ROW: ' "$work/report" | sed 's/^ROW: //' >>"$out"
  echo "| idle child (\`sleep\`): cgroup memory, its monitor's RSS | $((${mem:-0} / 1024)) KiB | ${rss:-?} kB | |" >>"$out"
fi
