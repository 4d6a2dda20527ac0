#!/bin/bash
# cri.sh - the `cri` row of bench/: a Kubernetes pod start through containerd's CRI plugin,
# runtime handler agentrt (agent profile, as a RuntimeClass gets it) against runc.
#
#   bench/cri.sh [--rounds N] [--agentrt PATH] [--out FILE]
#
# Times, in one CRI client process (integration/cri/cri.py bench), RunPodSandbox +
# CreateContainer + StartContainer of a busybox `sleep` container until StartContainer returns
# (the container is running), then stops and removes the pod untimed.  The handlers alternate
# (order flipped every round) after one warm-up pod each; prints the medians and the median of
# the per-round ratios agentrt/runc; with --out, appends a markdown row.  The private
# containerd runs in a network namespace of its own (integration/lib.bash: cri_start), with
# everything under one /tmp/agentrt-it-benchcri.* directory, removed at the end.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
rounds=20 out=""
AGENTRT=${AGENTRT:-$repo/agentrt}
while [ $# -gt 0 ]; do
	case "$1" in
	--rounds) rounds=$2; shift 2 ;;
	--agentrt) AGENTRT=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	-h | --help) sed -n '3,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "cri.sh: unknown argument \`$1'" >&2; exit 2 ;;
	esac
done
[ "$(id -u)" = 0 ] || { echo "cri.sh: must run as root" >&2; exit 1; }
[ "$rounds" -ge 1 ] && [ "$rounds" -le 500 ] || { echo "cri.sh: --rounds 1..500" >&2; exit 2; }
case $AGENTRT in /*) ;; *) AGENTRT=$PWD/$AGENTRT ;; esac
[ -x "$AGENTRT" ] || { echo "cri.sh: no agentrt at $AGENTRT" >&2; exit 1; }
export AGENTRT

# integration/lib.bash's helpers; `skip` is bats', here it ends the row with a reason
skip() { echo "cri.sh: skipped: $*" >&2; exit 0; }
# shellcheck source=../integration/lib.bash
. "$repo/integration/lib.bash"
it_log() { echo "# $*" >&2; }
cri_need

IT_TMP=$(mktemp -d /tmp/agentrt-it-benchcri.XXXXXX)
chmod 755 "$IT_TMP"
export IT_TMP AGENTRT_DATA_DIR=$IT_TMP/agentrt-data AGENTRT_CONFIG=$IT_TMP/agentrt.conf
it_hostdirs_note
cleanup() {
	cri_stop || true
	it_cleanup_tmp || true
}
trap cleanup EXIT INT TERM

cri_images "$IT_TMP/img" >/dev/null
cri_start "$IT_TMP/ctrd" "agrt-bcri-$$" "agentrt-bench-cri-$$" "$IT_TMP/img"
res=$(timeout $((60 + rounds * 30)) "$CRI_PYTHON" "$repo/integration/cri/cri.py" --addr "$CRI_SOCK" bench \
	--handlers agentrt,runc --rounds "$rounds" --image "$CRI_BUSYBOX_IMG" \
	--cgroup-parent "/$CRI_PARENT" --log-dir "$IT_TMP/logs" 2>"$IT_TMP/rounds.log") || {
	cat "$IT_TMP/rounds.log" >&2
	echo "cri.sh: the bench failed" >&2
	exit 1
}
a=$(jq -r '.median_ms.agentrt' <<<"$res")
r=$(jq -r '.median_ms.runc' <<<"$res")
q=$(jq -r '.paired_median_ratio' <<<"$res")
printf 'CRI pod start (RunPodSandbox+CreateContainer+StartContainer), %s rounds, median:\n' "$rounds"
printf '  runc    %8.1f ms\n  agentrt %8.1f ms (agent profile)\n  agentrt/runc paired median ratio %.2f\n' "$r" "$a" "$q"
if [ -n "$out" ]; then
	printf '| CRI pod start, %s rounds | %.1f ms | %.1f ms | %.2f |\n' \
		"$rounds" "$r" "$a" "$q" >>"$out"
fi
