#!/bin/bash
# tests/security/leakcheck.sh - find what agentrt left behind, usable standalone.
#
# Usage: tests/security/leakcheck.sh [--runtime BIN] [--root DIR] [--tag TAG] [--bundles PREFIX]
#                                    [--live] [--nft-baseline FILE]
#   --runtime BIN     the runtime (default ./agentrt)
#   --root DIR        its --root (default /run/agentrt)
#   --tag TAG         a string in the names of the test's cgroups and netns (default agentrt-test)
#   --bundles PREFIX  bundle directories' prefix (default /tmp/agentrt-test-)
#   --live            containers may still exist: check only that each container's state agrees
#                     with reality and that nothing exists WITHOUT a container; default: the root
#                     must be empty and nothing of ours may exist at all
#   --nft-baseline F  `nft list tables` taken before the run: the host's tables must not change
# Checks: state directories; mounts (this mount namespace); cgroups; network namespaces;
# nftables tables in this network namespace; processes (runtime helpers and container
# processes); fds the runtime itself leaves open at exit (valgrind --track-fds, when
# installed; the runtime's own O_CLOEXEC procfs handle is expected) and fds of container inits; state vs reality (pid alive iff
# created/running/paused).  Prints one line per problem; exit 0 when clean, 1 otherwise.
set -uo pipefail

runtime=./agentrt root=/run/agentrt tag=agentrt-test bundles=/tmp/agentrt-test- live=0 nft_base=
while [ $# -gt 0 ]; do
	case "$1" in
	--runtime) runtime=$2; shift 2 ;;
	--root) root=$2; shift 2 ;;
	--tag) tag=$2; shift 2 ;;
	--bundles) bundles=$2; shift 2 ;;
	--live) live=1; shift ;;
	--nft-baseline) nft_base=$2; shift 2 ;;
	*) echo "leakcheck: unknown argument \`$1'" >&2; exit 2 ;;
	esac
done
runtime=$(readlink -f "$runtime")
problems=0
problem() {
	echo "leak: $*"
	problems=$((problems + 1))
}
rt() {
	timeout 30 "$runtime" --root "$root" "$@"
}

# ---- containers: the state directory and what `state` says versus reality
ids=
if [ -d "$root" ]; then
	# .cache (compiled filters), .audit and .workspaces outlive containers by design
	ids=$(ls -A "$root" | grep -vxE '\.cache|\.audit|\.workspaces')
	[ "$live" = 1 ] || [ -z "$ids" ] || problem "state directories in $root: $(echo $ids)"
fi
alive_pids=
for id in $ids; do
	[ -d "$root/$id" ] || { problem "unexpected entry $root/$id"; continue; }
	st=$(rt state "$id" 2>&1) || { problem "state $id fails: $st"; continue; }
	status=$(jq -r .status <<<"$st") pid=$(jq -r .pid <<<"$st")
	alive=0
	[ "$pid" -gt 0 ] 2>/dev/null && kill -0 "$pid" 2>/dev/null && alive=1
	# A zombie is dead for our purposes (nobody will reap it but its parent).
	[ "$alive" = 1 ] && [ "$(awk '/^State:/ {print $2}' /proc/$pid/status 2>/dev/null)" = Z ] && alive=0
	case "$status" in
	created | running | paused)
		[ "$alive" = 1 ] || problem "container $id: status $status but pid $pid is not alive" ;;
	stopped)
		[ "$alive" = 0 ] || problem "container $id: status stopped but pid $pid is alive" ;;
	*) problem "container $id: status \`$status'" ;;
	esac
	[ "$alive" = 1 ] && alive_pids+=" $pid"
	# The init/process of a live container holds no fds beyond its stdio, once it has
	# started (a created one's init, paused too, still holds its set-up fds: exec.fifo)
	if [ "$alive" = 1 ] && [ "$status" != created ] && [ ! -e "$root/$id/exec.fifo" ]; then
		n=$(ls /proc/$pid/fd 2>/dev/null | wc -l)
		[ "$n" -le 3 ] || problem "container $id: pid $pid has $n open fds"
	fi
done

# ---- mounts of bundles or of the state root in this mount namespace
m=$(awk -v b="$bundles" -v r="$root" 'index($5, b) == 1 || index($5, r "/") == 1 {print $5}' /proc/self/mountinfo)
[ -z "$m" ] || problem "mounts: $(echo $m)"

# ---- cgroups (v1 hierarchies and the unified one) with the tag in their path: leaves must
# belong to a live container; without --live none may exist below a tagged parent
cgs=$(find /sys/fs/cgroup -mindepth 2 -maxdepth 4 -type d -path "*$tag*" 2>/dev/null | sort)
for cg in $cgs; do
	procs=$(cat "$cg/cgroup.procs" 2>/dev/null | tr '\n' ' ')
	if [ "$live" = 0 ]; then
		# Parents made by the test harness are fine when empty and childless.
		if [ -n "$(find "$cg" -mindepth 1 -maxdepth 1 -type d 2>/dev/null)" ] || [ -n "$procs" ] ||
			[[ "$(basename "$cg")" != "$tag"* ]]; then
			problem "cgroup $cg${procs:+ (procs: $procs)}"
		fi
	elif [ -n "$procs" ]; then
		# A populated cgroup must hold the init of a live container.
		ok=0
		for a in $alive_pids; do [[ " $procs " == *" $a "* ]] && ok=1; done
		[ "$ok" = 1 ] || problem "cgroup $cg holds processes ($procs) but no live container's init"
	fi
done

# ---- network namespaces and nftables tables
if command -v ip >/dev/null; then
	n=$(ip netns list 2>/dev/null | awk '{print $1}' | grep -F -- "$tag")
	[ -z "$n" ] || problem "network namespaces: $(echo $n)"
fi
if command -v nft >/dev/null; then
	now=$(nft list tables 2>/dev/null | sort)
	if [ -n "$nft_base" ]; then
		[ "$now" = "$(sort "$nft_base")" ] || problem "nftables tables in this netns changed: $(diff <(sort "$nft_base") <(echo "$now") | grep '^[<>]' | tr '\n' ' ')"
	fi
	grep -qi agentrt <<<"$now" && problem "agentrt nftables table in this netns: $(grep -i agentrt <<<"$now" | tr '\n' ' ')"
fi

# ---- processes: runtime helpers (exe = the runtime) and container processes whose root is
# a bundle's rootfs, other than live containers' processes
for p in /proc/[0-9]*; do
	pid=${p#/proc/}
	[ "$pid" = $$ ] && continue
	exe=$(readlink "$p/exe" 2>/dev/null) || continue
	r=$(readlink "$p/root" 2>/dev/null)
	if [ "$exe" = "$runtime" ] || [[ "$r" == "$bundles"* ]]; then
		# Another test file's runtime (CI runs them side by side) names another --root:
		# not ours to judge. Inits and monitors keep the cmdline of the create that made them.
		other=$(tr '\0' '\n' <"$p/cmdline" 2>/dev/null |
			awk -v want="$root" 'prev == "--root" { if ($0 != want) o = 1 } { prev = $0 }
				/^--root=/ { if (substr($0, 8) != want) o = 1 } END { print o + 0 }')
		[ "$exe" = "$runtime" ] && [ "$other" = 1 ] && continue
		# An init's cmdline is `agentrt init` (the create's is not kept: init-cmdline), and a
		# pivoted init's root reads `/` from here: it is ours only in a cgroup of ours (a
		# cgroup that holds a process is never removed, so a leaked init is still in it).
		# Another file's created container was reported as a leak (CI, load.bats).
		if [ "$exe" = "$runtime" ] && [[ "$(tr '\0' ' ' <"$p/cmdline" 2>/dev/null)" == "agentrt init"* ]] &&
			! grep -qF -- "$tag" "$p/cgroup" 2>/dev/null; then
			continue
		fi
		# A zombie: a process that was exiting while this loop read it is reaped by its parent
		# within moments (CI's load.bats saw one once); one still unreaped after 2 s is a leak
		if [ "$(awk '/^State:/ {print $2}' "$p/status" 2>/dev/null)" = Z ]; then
			for _ in $(seq 20); do
				[ "$(awk '/^State:/ {print $2}' "$p/status" 2>/dev/null)" = Z ] || break
				sleep 0.1
			done
			if [ "$(awk '/^State:/ {print $2}' "$p/status" 2>/dev/null)" = Z ]; then
				pp=$(awk '/^PPid:/ {print $2}' "$p/status" 2>/dev/null)
				problem "zombie $pid ($exe) not reaped after 2 s by its parent $pp ($(tr '\0' ' ' </proc/$pp/cmdline 2>/dev/null | head -c 100))"
			fi
			continue
		fi
		[ "$live" = 1 ] && [[ "$r" == "$bundles"* ]] && continue
		# A created container's init is a clone of the runtime: fine while its container lives.
		[[ " $alive_pids " == *" $pid "* ]] && continue
		# The per-container helper (agentrt-monitor: audit trail and egress resolver) lives as
		# long as its container; after every delete it must be gone.
		c=$(cat "$p/comm" 2>/dev/null)
		[ "$live" = 1 ] && [ "$c" = agentrt-monitor ] && continue
		problem "process $pid: $(tr '\0' ' ' <"$p/cmdline" 2>/dev/null | head -c 100) (root $r)"
	fi
done

# ---- fds the runtime leaves open at exit (its own leaks), seen by valgrind
if command -v valgrind >/dev/null; then
	target=$(echo $ids | awk '{print $1}')
	if [ -n "$target" ]; then cmd=(state "$target"); else cmd=(list); fi
	out=$(valgrind --track-fds=yes --trace-children=no "$runtime" --root "$root" "${cmd[@]}" 2>&1 >/dev/null </dev/null)
	leaked=$(awk '/Open file descriptor/ {fd=$0; getline nxt; if (nxt !~ /inherited from parent/) print fd}' <<<"$out" |
		sed 's/^==[0-9]*== *//' | grep -v -E 'descriptor [012]:|descriptor [0-9]+: /proc$')
	[ -z "$leaked" ] || problem "runtime fds open at exit (${cmd[*]}): $(echo $leaked)"
fi

[ "$problems" -eq 0 ] && echo "leakcheck: clean"
[ "$problems" -eq 0 ]
