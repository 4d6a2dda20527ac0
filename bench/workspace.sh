#!/bin/bash
# workspace.sh - the `workspace` rows of bench/: review of a big change set.
#
#   bench/workspace.sh [--rounds N] [--files N] [--agentrt PATH] [--out FILE]
#
# A host dir of N files (default 10,000: 100 directories of 100 files, 1 KiB each) and a
# workspace whose upper layer changes every one of them (written through a real overlay,
# mounted in a private mount namespace).  Per round, alternating which goes first:
#   diff:   `agentrt workspace ID diff --format json`  vs  `git status --porcelain` of a git
#           repository holding the same tree with the same changes in its work tree;
#   commit: `agentrt workspace ID commit` of a fresh copy of the workspace into a fresh copy of
#           the host dir  vs  `cp -a` of the changed files over another fresh copy.
# Prints the medians and the paired ratio (median of the per-round agentrt/baseline ratios);
# with --out, appends markdown rows.  Everything it makes is removed at the end.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
rounds=5 files=10000 out="" rt=${AGENTRT:-$repo/agentrt}
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --files) files=$2; shift 2 ;;
    --agentrt) rt=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h | --help) sed -n '3,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "workspace.sh: unknown argument \`$1'" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" = 0 ] || { echo "workspace.sh: must run as root" >&2; exit 1; }
[ -x "$rt" ] || { echo "workspace.sh: no agentrt at $rt" >&2; exit 1; }
[ "$rounds" -ge 1 ] && [ "$rounds" -le 100 ] || { echo "workspace.sh: --rounds 1..100" >&2; exit 2; }
[ "$files" -ge 100 ] && [ "$files" -le 200000 ] || { echo "workspace.sh: --files 100..200000" >&2; exit 2; }
command -v git >/dev/null || { echo "workspace.sh: git is required" >&2; exit 1; }

work=$(mktemp -d /tmp/agentrt-bench-ws.XXXXXX)
root=$work/root
cleanup() {
  local i
  for i in $(seq 0 "$rounds"); do
    "$rt" --root "$root" workspace "bws-$$-$i" purge >/dev/null 2>&1 || true
  done
  rm -rf --one-file-system "$work"
}
trap cleanup EXIT INT TERM
export HOME=$work GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=b GIT_AUTHOR_EMAIL=b@example.com \
  GIT_COMMITTER_NAME=b GIT_COMMITTER_EMAIL=b@example.com

# The host tree, and the same tree changed (every file gets a new last line).
dirs=$((files / 100))
mkdir -p "$work/host"
head -c 1000 /dev/urandom | base64 -w 100 >"$work/blob"
for d in $(seq 1 "$dirs"); do
  mkdir "$work/host/d$d"
  for f in $(seq 1 100); do cp "$work/blob" "$work/host/d$d/f$f"; done
done
cp -a "$work/host" "$work/changed"
find "$work/changed" -type f -exec sh -c 'for f; do echo changed >>"$f"; done' sh {} +
# The git baseline: the host tree committed, the changed files in its work tree.
cp -a "$work/host" "$work/git" && git -C "$work/git" init -q && git -C "$work/git" add -A &&
  git -C "$work/git" commit -q -m base
cp -a "$work/changed/." "$work/git/"

# A workspace over a copy of the host dir with the changes in its upper layer.
make_ws() { # ID HOSTCOPY
  local opts
  cp -a "$work/host" "$2"
  opts=$("$rt" --root "$root" workspace "$1" prepare --lower "$2" --dest /workspace |
    jq -r '.options | map(select(test("^(lower|upper|work)dir=|^(redirect_dir|index|metacopy)="))) | join(",")')
  mkdir -p "$work/mnt"
  unshare -m --propagation private sh -c \
    "mount -t overlay overlay -o '$opts' '$work/mnt' && cp -a '$work/changed/.' '$work/mnt/'"
}

us_now() { date +%s%N; }
timed() { # FILE CMD...
  local f=$1 t0 t1
  shift
  t0=$(us_now)
  "$@" >/dev/null 2>&1 || { echo "workspace.sh: failed: $*" >&2; exit 1; }
  t1=$(us_now)
  echo $(((t1 - t0) / 1000)) >>"$f"
}

make_ws "bws-$$-0" "$work/h0"
git -C "$work/git" status --porcelain >/dev/null # warm-up (index refresh)
"$rt" --root "$root" workspace "bws-$$-0" diff --format json >/dev/null
: >"$work/diff.rt"; : >"$work/diff.git"; : >"$work/commit.rt"; : >"$work/commit.cp"
for i in $(seq 1 "$rounds"); do
  make_ws "bws-$$-$i" "$work/h$i"
  cp -a "$work/host" "$work/c$i"
  sync
  if [ $((i % 2)) = 1 ]; then
    timed "$work/diff.rt" "$rt" --root "$root" workspace "bws-$$-0" diff --format json
    timed "$work/diff.git" git -C "$work/git" status --porcelain
    timed "$work/commit.rt" "$rt" --root "$root" workspace "bws-$$-$i" commit
    timed "$work/commit.cp" cp -a "$work/changed/." "$work/c$i/"
  else
    timed "$work/diff.git" git -C "$work/git" status --porcelain
    timed "$work/diff.rt" "$rt" --root "$root" workspace "bws-$$-0" diff --format json
    timed "$work/commit.cp" cp -a "$work/changed/." "$work/c$i/"
    timed "$work/commit.rt" "$rt" --root "$root" workspace "bws-$$-$i" commit
  fi
  cmp -s "$work/h$i/d1/f1" "$work/changed/d1/f1" || { echo "workspace.sh: commit did not apply" >&2; exit 1; }
  "$rt" --root "$root" workspace "bws-$$-$i" purge >/dev/null
  rm -rf "$work/h$i" "$work/c$i"
done

median() { sort -n "$1" | awk '{v[NR] = $1} END { printf "%.1f", ((NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) / 1000 }'; }
paired() { paste "$1" "$2" | awk '{ printf "%.6f\n", $1 / $2 }' | sort -n |
  awk '{v[NR] = $1} END { printf "%.2f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
dr=$(median "$work/diff.rt") dg=$(median "$work/diff.git") dp=$(paired "$work/diff.rt" "$work/diff.git")
cr=$(median "$work/commit.rt") cc=$(median "$work/commit.cp") cp=$(paired "$work/commit.rt" "$work/commit.cp")
printf 'workspace: diff of %d changed files %s ms, git status %s ms, paired ratio %s; commit %s ms, cp -a %s ms, paired ratio %s; %d rounds\n' \
  "$files" "$dr" "$dg" "$dp" "$cr" "$cc" "$cp" "$rounds"
if [ -n "$out" ]; then
  printf '| workspace: `diff` of %d changed files / `git status` | %s ms / %s ms | paired ratio %s | %d rounds |\n' \
    "$files" "$dr" "$dg" "$dp" "$rounds" >>"$out"
  printf '| workspace: `commit` of %d changed files / `cp -a` | %s ms / %s ms | paired ratio %s | %d rounds |\n' \
    "$files" "$cr" "$cc" "$cp" "$rounds" >>"$out"
fi
