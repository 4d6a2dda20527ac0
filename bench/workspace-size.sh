#!/bin/bash
# workspace-size.sh - the `workspace size limit` rows of bench/: what the hard
# limit of an overlay workspace (workspace.size: an ext4 image on a loop
# device, workspace/image.c) costs an agent-profile `run`.
#
#   bench/workspace-size.sh [--rounds N] [--agentrt PATH] [--out FILE]
#
# Per round, alternating which goes first, `agentrt --profile agent run` of a
# container that runs `true` over a bind-mounted host dir at /workspace:
#   limited:   as shipped (1g image: a sparse copy of the template, a loop
#              device, an ext4 mount; the workspace is new each time);
#   unlimited: the same in a private mount namespace whose /dev/loop-control
#              is an empty file, so create falls back to the plain upper dir.
# Also, once: the first create of a size (mkfs.ext4 of the template).
# Prints the medians and the paired ratio (median of per-round limited /
# unlimited); with --out, appends markdown rows.  Everything it makes is
# removed at the end.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
rounds=15 out="" rt=${AGENTRT:-$repo/agentrt}
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --agentrt) rt=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h | --help) sed -n '3,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "workspace-size.sh: unknown argument \`$1'" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" = 0 ] || { echo "workspace-size.sh: must run as root" >&2; exit 1; }
[ -x "$rt" ] || { echo "workspace-size.sh: no agentrt at $rt" >&2; exit 1; }
[ -e /dev/loop-control ] || { echo "workspace-size.sh: needs loop devices" >&2; exit 1; }
[ "$rounds" -ge 1 ] && [ "$rounds" -le 200 ] || { echo "workspace-size.sh: --rounds 1..200" >&2; exit 2; }

work=$(mktemp -d /tmp/agentrt-bench-wssize.XXXXXX)
root=$work/root
export AGENTRT_DATA_DIR=$work/data AGENTRT_CONFIG=$work/agentrt.conf
cleanup() {
  local id
  for id in $("$rt" --root "$root" workspace list --format json 2>/dev/null | jq -r '.[].id'); do
    "$rt" --root "$root" delete --force "$id" >/dev/null 2>&1 || true
    "$rt" --root "$root" workspace "$id" purge >/dev/null 2>&1 || true
  done
  rm -rf --one-file-system "$work"
}
trap cleanup EXIT INT TERM

mkdir -p "$work/bundle/rootfs/bin" "$work/host" "$work/bundle/rootfs/"{proc,dev,sys,workspace}
cp /bin/busybox "$work/bundle/rootfs/bin/"
ln -s busybox "$work/bundle/rootfs/bin/true"
"$rt" spec --bundle "$work/bundle"
jq --arg h "$work/host" '.process.terminal = false | .process.args = ["true"] |
  .mounts += [{"destination": "/workspace", "type": "bind", "source": $h, "options": ["rbind", "rw"]}]' \
  "$work/bundle/config.json" >"$work/c.json" && mv "$work/c.json" "$work/bundle/config.json"
echo hello >"$work/host/a.txt"
: >"$work/not-a-device"

us_now() { date +%s%N; }
n=0
one() { # FILE limited|unlimited
  local t0 t1 id=bwsz-$$-$((n += 1))
  t0=$(us_now)
  if [ "$2" = limited ]; then
    "$rt" --root "$root" --profile agent run --bundle "$work/bundle" "$id" >/dev/null 2>&1
  else
    unshare -m sh -c 'mount --bind "$1" /dev/loop-control && shift && exec "$@"' sh \
      "$work/not-a-device" "$rt" --root "$root" --profile agent run --bundle "$work/bundle" "$id" \
      >/dev/null 2>&1
  fi || { echo "workspace-size.sh: run ($2) failed" >&2; exit 1; }
  t1=$(us_now)
  echo $(((t1 - t0) / 1000)) >>"$1"
  if [ "$2" = limited ] && [ ! -f "$AGENTRT_DATA_DIR/roots/$(printf '%s' "${root#/}" | tr / +)/.workspaces/$id/upper.img" ]; then
    echo "workspace-size.sh: the limited run has no image" >&2
    exit 1
  fi
  "$rt" --root "$root" workspace "$id" purge >/dev/null
}

: >"$work/first" && one "$work/first" limited # mkfs of the 1g template
one /dev/null unlimited                         # warm-up
: >"$work/lim"; : >"$work/unl"
for i in $(seq 1 "$rounds"); do
  if [ $((i % 2)) = 1 ]; then
    one "$work/lim" limited; one "$work/unl" unlimited
  else
    one "$work/unl" unlimited; one "$work/lim" limited
  fi
done

median() { sort -n "$1" | awk '{v[NR] = $1} END { printf "%.1f", ((NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) / 1000 }'; }
paired() { paste "$1" "$2" | awk '{ printf "%.6f\n", $1 / $2 }' | sort -n |
  awk '{v[NR] = $1} END { printf "%.2f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ml=$(median "$work/lim") mu=$(median "$work/unl") pr=$(paired "$work/lim" "$work/unl")
mf=$(median "$work/first")
printf 'workspace size limit: agent-profile run %s ms limited, %s ms unlimited, paired ratio %s; first run of a size (mkfs) %s ms; %d rounds\n' \
  "$ml" "$mu" "$pr" "$mf" "$rounds"
if [ -n "$out" ]; then
  printf '| workspace size limit: agent `run`, 1g image / no limit | %s ms / %s ms | paired ratio %s | %d rounds |\n' \
    "$ml" "$mu" "$pr" "$rounds" >>"$out"
  printf '| workspace size limit: first `run` of a size (mkfs.ext4 of the template) | %s ms | | 1 run |\n' \
    "$mf" >>"$out"
fi
