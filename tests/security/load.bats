#!/usr/bin/env bats
# load.bats - 500 randomized lifecycle operations (create/start/exec/kill/pause/resume/delete,
# plus state) from 3 concurrent workers on shared and per-worker containers, then the leak
# checker: every container's state agrees with reality while they live, and after
# `delete --force` of all of them nothing is left.  Errors of individual operations are
# expected (starting a deleted container, ...); crashes, hangs and signals are not.

load helpers

OPS=${LOAD_OPS:-500}
WORKERS=${LOAD_WORKERS:-3}

setup() {
	setup_security_bundle
	LOAD_DIR=$BUNDLE/load
	mkdir -p "$LOAD_DIR"
	nft list tables 2>/dev/null >"$LOAD_DIR/nft.before" || true
}

# A bundle per container (each needs its own cgroupsPath); the rootfs is shared read-only
# through the agent profile's read-only root, named by its path (a symlink to it is refused:
# rootfs-symlink; with one, every create failed and the test checked nothing).
make_load_bundle() {
	local id=$1 b=$LOAD_DIR/$1
	mkdir -p "$b"
	jq --arg cg "/$CG_PARENT/$id" --arg root "$ROOTFS" \
		'.root.path = $root | .linux.cgroupsPath = $cg | .process.args = ["sleep", "1000"]' \
		"$BUNDLE/config.json" >"$b/config.json"
}

# worker N COUNT: COUNT random operations; failures worse than an error exit go to $LOAD_DIR/bad.N
worker() {
	local n=$1 count=$2 i id op st ids
	RANDOM=$((n * 7919 + ${LOAD_SEED:-1}))
	ids=(s1 s2 s3 "w$n-a" "w$n-b")
	for ((i = 0; i < count; i++)); do
		id=${ids[RANDOM % ${#ids[@]}]}
		case $((RANDOM % 10)) in
		0 | 1) op=(create --bundle "$LOAD_DIR/$id" "$id") ;;
		2) op=(start "$id") ;;
		3) op=(exec "$id" true) ;;
		4) op=(exec -d "$id" sleep 3) ;;
		5) op=(kill "$id" KILL) ;;
		6) op=(pause "$id") ;;
		7) op=(resume "$id") ;;
		8) op=(delete --force "$id") ;;
		9) op=(state "$id") ;;
		esac
		st=0 t0=$(date +%s%N)
		timeout --kill-after=2 "${LOAD_OP_TIMEOUT:-8}" "$AGENTRT" --root "$TEST_ROOT" --profile agent "${op[@]}" \
			</dev/null >/dev/null 2>"$LOAD_DIR/err.$n" || st=$?
		# 128+N from an exec whose process another worker's kill or delete ended is its
		# status, as with runc; only the timeout's own 124/137 after the whole bound is a hang
		[ "$st" -ne 0 ] || echo "${op[0]}" >>"$LOAD_DIR/done.$n"
		if [ "$st" -gt 124 ] && [ $((($(date +%s%N) - t0) / 1000000)) -lt $((${LOAD_OP_TIMEOUT:-8} * 1000)) ]; then
			st=1
		fi
		# An exec whose process started just before another worker's `pause` is frozen with the
		# container until a `resume` (as with runc): that wait is not a hang of ours.
		if [ "$st" -ge 124 ] && [ "${op[0]}" = exec ] &&
			[ "$(timeout 10 "$AGENTRT" --root "$TEST_ROOT" state "$id" 2>/dev/null | jq -r .status)" = paused ]; then
			echo "worker $n op $i [${op[*]}]: frozen by a later pause" >>"$LOAD_DIR/frozen.$n"
		elif [ "$st" -ge 124 ]; then
			echo "worker $n op $i [${op[*]}]: status $st: $(head -c 300 "$LOAD_DIR/err.$n")" >>"$LOAD_DIR/bad.$n"
		fi
		if grep -qiE 'corrupt|assert|sanitizer|double free|segmentation' "$LOAD_DIR/err.$n"; then
			echo "worker $n op $i [${op[*]}]: $(head -c 300 "$LOAD_DIR/err.$n")" >>"$LOAD_DIR/bad.$n"
		fi
	done
}

@test "load: $OPS randomized lifecycle operations from $WORKERS workers, then no leaks" {
	for id in s1 s2 s3; do make_load_bundle "$id"; done
	for ((n = 1; n <= WORKERS; n++)); do make_load_bundle "w$n-a"; make_load_bundle "w$n-b"; done
	start=$SECONDS
	pids=()
	for ((n = 1; n <= WORKERS; n++)); do
		worker "$n" $((OPS / WORKERS + (n <= OPS % WORKERS))) 3>&- &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p"; done
	done_ops=$(cat "$LOAD_DIR"/done.* 2>/dev/null | sort | uniq -c | awk '{printf "%s%s %s", (NR > 1 ? ", " : ""), $2, $1}')
	echo "# $OPS operations in $((SECONDS - start)) s (seed ${LOAD_SEED:-1}, LOAD_SEED=N for another);" \
		"succeeded: ${done_ops:-none}; $(rt list -q | wc -l) containers exist;" \
		"$(cat "$LOAD_DIR"/frozen.* 2>/dev/null | wc -l) execs frozen by a pause that came after them" >&3
	bad=$(cat "$LOAD_DIR"/bad.* 2>/dev/null || true)
	# a run whose creates all failed (a bundle the runtime refuses) tested nothing
	created=$(cat "$LOAD_DIR"/done.* 2>/dev/null | grep -cx create || true)
	[ "$created" -ge $((OPS / 50)) ] ||
		bad+=$'\n'"only $created creates of about $((OPS / 5)) succeeded: $(head -c 300 "$LOAD_DIR"/err.*)"
	# While they live: every state agrees with reality, nothing exists without a container.
	live=$("$REPO_ROOT/tests/security/leakcheck.sh" --runtime "$AGENTRT" --root "$TEST_ROOT" \
		--tag "$CG_PARENT" --bundles "$BUNDLE" --live 2>&1) || bad+=$'\n'"$(sed 's/^/live /' <<<"$live")"
	for id in $(rt list -q); do rt delete --force "$id" || fail "delete --force $id"; done
	run "$REPO_ROOT/tests/security/leakcheck.sh" --runtime "$AGENTRT" --root "$TEST_ROOT" \
		--tag "$CG_PARENT" --bundles "$BUNDLE" --nft-baseline "$LOAD_DIR/nft.before"
	[ "$status" -eq 0 ] || fail "after delete --force of every container: $output${bad:+; during the run: $bad}"
	bad=$(grep . <<<"$bad" || true)
	[ -z "$bad" ] && return 0
	# Found here once and fixed: an `exec` whose process joined the cgroup just after a
	# `pause` froze it blocked forever (timed-out execs, frozen helpers in the live leak
	# check).  A paused created container reads paused until resumed (the test below; start
	# and exec refuse it) and exec holds the container's lock shared until its process is in
	# (exec.bats), so a recurrence fails here.
	fail "$bad"
}

# Found by the load test: the state of a paused *created* container.
@test "load: a paused created container reports paused and can be resumed" {
	set_args sleep 100
	create_container c1
	[ "$status" -eq 0 ] || fail "$output"
	run rt pause c1
	if ! is_agentrt; then
		[ "$status" -eq 0 ] || return 0 # refusing to pause a created container is fine too
	fi
	[ "$status" -eq 0 ] || fail "pause of a created container: $output"
	st=$(container_status c1)
	run rt exec c1 true
	[ "$status" -ne 0 ] && [ "$status" -ne 124 ] || fail "exec into a paused created container: status $status"
	run rt resume c1
	if [ "$st" != paused ] || [ "$status" -ne 0 ]; then
		finding "after \`pause' of a created container \`state' says \`$st' and \`resume' fails ($output); \`exec' into it hangs"
	fi
	[ "$(container_status c1)" = created ] || fail "after resume: $(container_status c1)"
}
