#!/bin/bash
# sandbox.sh - the `sandbox` row of bench/: `agentrt sandbox -- /bin/true` as an unprivileged
# user against `bwrap --ro-bind / / --dev /dev --proc /proc --unshare-all /bin/true` (Debian's
# bubblewrap) and `unshare -r -fmnpiu --mount-proc /bin/true`, each N rounds, the order rotated
# every round; prints the median wall time of each and the paired ratios (median of per-round
# agentrt/bwrap and agentrt/unshare), as the main table does.
#
#   bench/sandbox.sh [--rounds N] [--agentrt PATH] [--uid UID] [--programs N] [--out FILE]
#
# Then the exec-heavy row: one sandbox running --programs short programs (200), trail on
# against off (max(3, N/3) rounds).
#
# The user (default 65534) gets a home, runtime and workspace directory made here; everything
# (workspaces, trails, the directory) is removed at the end.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
rounds=20 out="" rt=${AGENTRT:-$repo/agentrt} uid=65534 programs=200
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --agentrt) rt=$2; shift 2 ;;
    --uid) uid=$2; shift 2 ;;
    --programs) programs=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '3,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "sandbox.sh: unknown argument \`$1'" >&2; exit 2 ;;
  esac
done
[ -n "$out" ] && out=$(realpath -m "$out")
[ "$(id -u)" = 0 ] || { echo "sandbox.sh: must run as root (it makes the user's directories)" >&2; exit 1; }
[ -x "$rt" ] || { echo "sandbox.sh: no agentrt at $rt" >&2; exit 1; }
[ "$rounds" -ge 1 ] && [ "$rounds" -le 1000 ] || { echo "sandbox.sh: --rounds 1..1000" >&2; exit 2; }
[[ "$programs" =~ ^[0-9]+$ ]] && [ "$programs" -ge 1 ] && [ "$programs" -le 100000 ] ||
  { echo "sandbox.sh: --programs 1..100000" >&2; exit 2; }
command -v python3 >/dev/null || { echo "sandbox.sh: python3 is required" >&2; exit 1; }
have_bwrap=0
command -v bwrap >/dev/null && have_bwrap=1

work=$(mktemp -d /tmp/agentrt-bench-sbx.XXXXXX)
cleanup() {
  [ -n "$(awk -v d="$work" 'index($5, d) == 1' /proc/self/mountinfo)" ] && return
  rm -rf --one-file-system "$work"
}
trap cleanup EXIT
mkdir -p "$work/home" "$work/run" "$work/ws"
chown -R "$uid:$uid" "$work"
chmod 700 "$work/home" "$work/run"

# The timing loop runs as the user: python3 spawns each command and takes the wall time.
# It prints the markdown row last, as `ROW: ...`; we (root) append it to --out.
echo '{"name": "bench-sbx-off", "extends": "agent", "audit": {"enabled": false}}' >"$work/off.json"
chmod 644 "$work/off.json"
setpriv --reuid "$uid" --regid "$uid" --clear-groups env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
  HOME="$work/home" XDG_RUNTIME_DIR="$work/run" XDG_DATA_HOME="$work/home/.local/share" \
  SBX_PROGRAMS="$programs" SBX_OFF_PROFILE="$work/off.json" python3 - "$rt" "$rounds" "$have_bwrap" "$work/ws" "$here" >"$work/report" <<'PY'
import os, statistics, subprocess, sys, time
rt, rounds, have_bwrap, ws = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1", sys.argv[4]
sys.dont_write_bytecode = True  # nothing written into the tree
sys.path.insert(0, sys.argv[5])
from timed import timed  # a blocking wait: bench/timed.py says why
os.chdir(ws)
cmds = {"agentrt": None,
        "unshare": ["unshare", "-r", "-fmnpiu", "--mount-proc", "/bin/true"]}
if have_bwrap:
    cmds["bwrap"] = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
                     "--unshare-all", "/bin/true"]
names = list(cmds)
samples = {n: [] for n in names}
fails = {n: 0 for n in names}
seq = 0
def once(n):
    global seq
    seq += 1
    argv = cmds[n] or [rt, "sandbox", "--name", "bench-%d" % seq, "--", "/bin/true"]
    dt, rc = timed(argv)
    if n == "agentrt":
        subprocess.run([rt, "workspace", "bench-%d" % seq, "purge"], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=60)
        subprocess.run([rt, "audit", "bench-%d" % seq, "--purge"], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=60)
    if rc != 0:
        fails[n] += 1
        return None
    return dt
for n in names:   # one untimed warm-up each
    once(n)
for i in range(rounds):
    order = names[i % len(names):] + names[:i % len(names)]
    got = {n: once(n) for n in order}
    for n in names:
        samples[n].append(got[n])
def med(v):
    v = [x for x in v if x is not None]
    return statistics.median(v) if v else float("nan")
def paired(a, b):
    r = [x / y for x, y in zip(samples[a], samples[b]) if x is not None and y is not None]
    return statistics.median(r) if r else float("nan")
print("sandbox row: %d rounds, medians (ms)" % rounds)
for n in names:
    print("  %-8s %8.2f ms  (%d failed)" % (n, med(samples[n]), fails[n]))
line = "| `sandbox -- /bin/true` (user) | %.2f ms |" % med(samples["agentrt"])
if have_bwrap:
    print("  agentrt/bwrap   (paired) %.2f" % paired("agentrt", "bwrap"))
    line += " bwrap %.2f ms, ratio %.2f |" % (med(samples["bwrap"]), paired("agentrt", "bwrap"))
print("  agentrt/unshare (paired) %.2f" % paired("agentrt", "unshare"))
line += " unshare %.2f ms, ratio %.2f |" % (med(samples["unshare"]), paired("agentrt", "unshare"))
print("ROW: " + line)

# The exec-heavy row: N short programs in one sandbox, the trail on against a profile
# extending agent with the trail off.  Where the kernel refuses the user process events the
# trail's program records come from the exec calls (each stops at the monitor's seccomp
# listener): (on - off) / N is that cost per program.
progs = int(os.environ["SBX_PROGRAMS"])
loop = "i=0; while [ $i -lt %d ]; do /bin/true; i=$((i+1)); done" % progs
lsamples = {"on": [], "off": []}
def loop_once(n):
    global seq
    seq += 1
    name = "bench-%d" % seq
    argv = [rt, "sandbox", "--name", name]
    if n == "off":
        argv += ["--profile", os.environ["SBX_OFF_PROFILE"]]
    dt, rc = timed(argv + ["--", "sh", "-c", loop], limit=300)
    for extra in (["workspace", name, "purge"], ["audit", name, "--purge"]):
        subprocess.run([rt] + extra, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       timeout=60)
    return dt if rc == 0 else None
lrounds = max(3, rounds // 3)
loop_once("on")
for i in range(lrounds):
    for n in (["on", "off"] if i % 2 == 0 else ["off", "on"]):
        lsamples[n].append(loop_once(n))
lr = [a / b for a, b in zip(lsamples["on"], lsamples["off"]) if a is not None and b is not None]
on, off = med(lsamples["on"]), med(lsamples["off"])
print("exec-heavy row: %d rounds of %d programs: on %.1f ms, off %.1f ms" % (lrounds, progs, on, off))
print("ROW2: | `sandbox` of %d short programs (user), trail on / off | %.1f ms | %.1f ms | %.3f | %.1f us |"
      % (progs, on, off, statistics.median(lr) if lr else float("nan"), (on - off) * 1000 / progs))
PY
grep -v '^ROW2\?: ' "$work/report"
if [ -n "$out" ]; then
  sed -n 's/^ROW: //p' "$work/report" >>"$out"
  {
    printf '\nThe same user, one sandbox running %s short programs (`/bin/true` in a shell loop), its trail on against a profile extending agent with `"audit": {"enabled": false}`, alternated; medians, the paired ratio, and (on - off) per program (where the kernel refuses users process events, the program records come from the exec calls: bench/README.md).\n\n' "$programs"
    printf '| row | trail on | trail off | on / off (paired) | per program |\n|---|---|---|---|---|\n'
    sed -n 's/^ROW2: //p' "$work/report"
  } >>"$out"
fi
