#!/usr/bin/env bats
# sandbox-cgroup.bats - a user's `agentrt sandbox --pids/--memory` in the user's delegated
# cgroup v2, on a pure cgroup v2 host: the VM lane (tests/vm/run-agentrt-v2.sh boots one VM
# and runs this file in it).  Root makes a cgroup, hands it to uid 65534 (as systemd does with
# Delegate=yes) and starts the user's shell in it; what is checked is the sandbox's cgroup
# files seen from outside while it runs, the effect of the limit, and what is left afterwards.

load ../bats/helpers

SBX_UID=65534

setup() {
	requires root setpriv
	if [ "$(stat -f -c %T /sys/fs/cgroup 2>/dev/null)" != cgroup2fs ]; then
		skip "not a cgroup v2 host (run it through tests/vm/run-agentrt-v2.sh)"
	fi
	SBX=$(mktemp -d /tmp/agentrt-test-sbxcg.XXXXXX)
	mkdir -p "$SBX/home" "$SBX/ws" "$SBX/run"
	chown -R "$SBX_UID:$SBX_UID" "$SBX"
	chmod 700 "$SBX/home" "$SBX/run"
	chmod 755 "$SBX"
	DCG=/sys/fs/cgroup/agentrt-sbxcg-$$
	mkdir "$DCG"
	# what systemd chowns for a delegated unit
	chown "$SBX_UID:$SBX_UID" "$DCG" "$DCG/cgroup.procs" "$DCG/cgroup.subtree_control" \
		"$DCG/cgroup.threads"
}

teardown() {
	local d
	if [ -n "${DCG:-}" ] && [ -d "$DCG" ]; then
		for d in $(find "$DCG" -mindepth 1 -depth -type d); do
			cat "$d/cgroup.procs" 2>/dev/null | while read -r p; do echo "$p" >/sys/fs/cgroup/cgroup.procs; done
			rmdir "$d" 2>/dev/null
		done
		rmdir "$DCG"
	fi
	[ -n "${SBX:-}" ] && rm -rf --one-file-system "$SBX"
	return 0
}

# in_dcg CMD...: CMD as the user, started in the delegated cgroup (root moves the shell there,
# as systemd-run --user --scope does, then drops to the user).
in_dcg() {
	sh -c 'echo $$ >"$0/cgroup.procs" && cd "$1" && shift 2 && exec "$@"' "$DCG" "$SBX/ws" x \
		setpriv --reuid "$SBX_UID" --regid "$SBX_UID" --clear-groups \
		env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$SBX/home" XDG_RUNTIME_DIR="$SBX/run" \
		XDG_DATA_HOME="$SBX/home/.local/share" "$@"
}

@test "sandbox cgroup: a user's --pids and --memory go below the delegated cgroup and stop a fork loop" {
	in_dcg "$AGENTRT" sandbox --name dc1 --pids 20 --memory 64m -- python3 -c '
import os, time
n = 0
for i in range(100):
    try:
        if os.fork() == 0:
            time.sleep(4); os._exit(0)
        n += 1
    except OSError as e:
        print("refused errno", e.errno); break
print("started", n)' >"$SBX/out" 2>&1 &
	local pid=$! i max mem procs n out
	# the cgroup exists before its first process is in it (create makes it, then clones)
	for i in $(seq 100); do
		[ -r "$DCG/dc1/pids.max" ] && [ -n "$(cat "$DCG/dc1/cgroup.procs" 2>/dev/null)" ] && break
		sleep 0.1
	done
	read -r max <"$DCG/dc1/pids.max" || true
	read -r mem <"$DCG/dc1/memory.max" || true
	procs=$(cat "$DCG/dc1/cgroup.procs" 2>/dev/null | wc -l)
	wait "$pid" || true
	out=$(cat "$SBX/out")
	echo "$out"
	[ "$max" = 20 ]
	[ "$mem" = $((64 * 1024 * 1024)) ]
	[ "$procs" -ge 1 ]
	[[ "$out" != *"NOT enforced"* ]]
	[[ "$out" == *"refused errno 11"* ]]
	n=$(echo "$out" | sed -n 's/^started \([0-9]*\).*/\1/p')
	[ -n "$n" ] && [ "$n" -lt 20 ]
	# the sandbox's cgroup is gone; agentrt itself waited in the leaf beside it
	[ ! -d "$DCG/dc1" ]
	[ -d "$DCG/agentrt-supervisor" ]
}

@test "sandbox cgroup: another process in the user's cgroup: a clear warning, no limit" {
	# control: a second process shares the delegated cgroup, so agentrt cannot leave it a
	# parent of cgroups only
	sh -c 'echo $$ >"$0/cgroup.procs"; exec sleep 30' "$DCG" &
	local other=$!
	sleep 0.2
	run in_dcg "$AGENTRT" sandbox --name dc3 --pids 20 -- true
	kill "$other"
	wait "$other" 2>/dev/null || true
	[ "$status" -eq 0 ]
	[[ "$output" == *"NOT enforced: other processes share the user's cgroup"* ]]
	[ ! -d "$DCG/dc3" ]
}
