#!/usr/bin/env bats
# faults.bats - the runtime killed (SIGKILL) at each failpoint of create, start, exec and
# delete, then `delete --force` must recover: no state directory, no cgroup, no process, no
# mount left.  Runs build-fp/agentrt, a `make FAILPOINTS=1` build (mk/security.mk), where
# AGENTRT_FAILPOINT=NAME makes FAILPOINT("NAME") raise SIGKILL (common/failpoint.h).

load helpers

FP_AGENTRT=${FP_AGENTRT:-$REPO_ROOT/build-fp/agentrt}

setup_file() {
	if [ ! -x "$FP_AGENTRT" ] || [ "$FP_AGENTRT" -ot "$REPO_ROOT/agentrt" ]; then
		make -s -C "$REPO_ROOT" build-fp >&2 || return 1
	fi
}

setup() {
	setup_security_bundle
	AGENTRT=$FP_AGENTRT
	# Every process the runtime forks inherits this marker until it execs the container's
	# process (which gets process.env): a leftover runtime helper still carries it.
	FP_MARK=agentrt-fp-$$-$BATS_TEST_NUMBER
}

# fp NAME CMD...: run the runtime with the failpoint armed; it must die of SIGKILL there.
fp() {
	local name=$1
	shift
	status=0
	AGENTRT_FAILPOINT=$name AGENTRT_FP_MARK=$FP_MARK timeout --kill-after=5 30 \
		"$AGENTRT" --root "$TEST_ROOT" --profile agent "$@" </dev/null >"$BUNDLE/fp.out" 2>&1 || status=$?
	[ "$status" -eq 137 ] || fail "failpoint $name: expected death by SIGKILL (137), got $status: $(cat "$BUNDLE/fp.out")"
}

# Processes that belong to the test: container processes (root = the bundle's rootfs) and
# runtime helpers (the marker in their environment).
leftover_processes() {
	local p rootfs_ino pids
	rootfs_ino=$(stat -L -c %d:%i "$ROOTFS")
	pids=$(grep -lsxz "AGENTRT_FP_MARK=$FP_MARK" /proc/[0-9]*/environ | cut -d/ -f3)
	for p in /proc/[0-9]*; do
		[ "$(stat -L -c %d:%i "$p/root" 2>/dev/null)" = "$rootfs_ino" ] && pids+=" ${p#/proc/}"
	done
	for p in $(tr ' ' '\n' <<<"$pids" | sort -u); do
		echo "$p:$( { tr '\0' ' ' <"/proc/$p/cmdline"; } 2>/dev/null | head -c 60)[$(awk '/^State/ {print $2}' /proc/$p/status 2>/dev/null)]"
	done
}

leftover_cgroups() {
	find /sys/fs/cgroup -mindepth 2 -maxdepth 3 -type d -path "*/$CG_PARENT/*" 2>/dev/null
}

# recover ID: delete --force (without failpoint) must succeed and leave nothing; what was
# left is described in $RECOVER_LEFT (and cleaned up by hand).
recover() {
	local id=$1 left=() out
	out=$(rt delete --force "$id" 2>&1) || left+=("delete --force failed: $out")
	[ ! -e "$TEST_ROOT/$id" ] || left+=("state dir $TEST_ROOT/$id: $(ls -A "$TEST_ROOT/$id" | tr '\n' ' ')")
	[ -z "$(rt list -q 2>/dev/null)" ] || left+=("list: $(rt list -q)")
	out=$(leftover_cgroups)
	[ -z "$out" ] || left+=("cgroup $(basename "$(head -n1 <<<"$out")") in $(grep -c . <<<"$out") hierarchies;")
	out=$(leftover_processes)
	[ -z "$out" ] || left+=("processes: $out")
	out=$(mounts_below "$BUNDLE")
	[ -z "$out" ] || left+=("mounts: $out")
	if [ "${#left[@]}" -gt 0 ]; then
		# Clean up by hand so that later tests start clean, then report.
		for out in $(leftover_processes | cut -d: -f1); do kill -9 "$out" 2>/dev/null; done
		sleep 0.2
		for out in $(leftover_cgroups | sort -r); do rmdir "$out" 2>/dev/null; done
		rm -rf --one-file-system "${TEST_ROOT:?}/$id"
		RECOVER_LEFT=${left[*]}
		return 1
	fi
}

must_recover() {
	recover "$1" || fail "not recovered after delete --force: $RECOVER_LEFT"
}

# A failpoint where agentrt does not recover today (reported to the lead): until state.json is
# written, nothing records the container's cgroup, so `delete --force` removes the state
# directory and leaves the cgroup (and a ready init) behind.
known_leak() { # ID WHERE
	recover "$1" || finding "killed $2, \`delete --force' leaves: $RECOVER_LEFT"
}

@test "fault: failpoints are compiled out of the release build" {
	! strings "$REPO_ROOT/agentrt" | grep -q AGENTRT_FAILPOINT || fail "release binary knows AGENTRT_FAILPOINT"
	set_args true
	AGENTRT_FAILPOINT=create-after-cgroup timeout 30 "$REPO_ROOT/agentrt" --root "$TEST_ROOT" --profile agent \
		run --bundle "$BUNDLE" rel </dev/null >/dev/null 2>&1
}

@test "fault: create killed after the state directory exists" {
	set_args sleep 100
	fp create-after-statedir create --bundle "$BUNDLE" c1
	must_recover c1
}

@test "fault: create killed after the cgroup exists" {
	set_args sleep 100
	fp create-after-cgroup create --bundle "$BUNDLE" c1
	known_leak c1 "in create after the cgroup was made"
}

@test "fault: create killed right after the init was cloned" {
	set_args sleep 100
	fp spawn-after-clone create --bundle "$BUNDLE" c1
	known_leak c1 "in create right after the init was cloned"
}

@test "fault: create killed after the init is ready, before the state is saved" {
	set_args sleep 100
	fp create-after-spawn create --bundle "$BUNDLE" c1
	known_leak c1 "in create after the init was ready, before state.json"
}

@test "fault: create killed after the state is saved" {
	set_args sleep 100
	fp create-after-state create --bundle "$BUNDLE" c1
	must_recover c1
}

# create-killed: what a create killed before it saved its state left is removed by the next
# create of that id, which then takes it (lifecycle.bats has the same during a hook); the
# first create's init, monitor and cgroups go with it.  Killed before it wrote anything to
# its state directory (create-after-statedir), the id stays taken until `delete`: an empty,
# unlocked directory may be a live create's that has not locked it yet.  The next create runs
# at once: the killed create's lock is still held for some milliseconds by the children it
# forked (its init, its monitor) until they exit; /proc/locks names the dead create.
@test "fault: a create killed before its state was saved leaves its id to the next create" {
	set_args sleep 100
	for point in create-after-cgroup spawn-after-clone create-after-spawn; do
		fp "$point" create --bundle "$BUNDLE" c1
		status=0
		timeout --kill-after=5 30 "$AGENTRT" --root "$TEST_ROOT" --profile agent create \
			--bundle "$BUNDLE" c1 </dev/null >"$BUNDLE/c1.out" 2>"$BUNDLE/c1.err" || status=$?
		[ "$status" -eq 0 ] || fail "create after $point: $(cat "$BUNDLE/c1.err")"
		[ "$(container_status c1)" = created ] || fail "after $point: $(rt list)"
		must_recover c1
	done
}

# list-killed-create: what a create killed before its state was saved left is one entry in
# `list` and one in `list --format json` (but an empty directory, which may be a live create's
# not yet locked, is only in the table): stopped, pid 0, a created time a Go client parses
# (go-runc's time.Time: an empty string fails the whole list); ours listed it `stopped` in
# the table and left it out of the JSON.  runc 1.1.5 (a createRuntime hook's create killed)
# shows it in neither, its `state`, `kill` and `delete` say "container does not exist" (exit
# 1), its `delete --force` exits 0 and removes the directory (its cgroups stay).  Ours: `state`,
# `kill` and `exec` fail with one line naming it, `delete --force` removes everything.
@test "fault: list-killed-create: list and list --format json agree on a killed create; state, kill, exec fail in one line" {
	set_args sleep 100
	local point table json
	for point in create-after-statedir create-after-cgroup spawn-after-clone create-after-spawn; do
		fp "$point" create --bundle "$BUNDLE" c1
		table=$(rt list | awk 'NR > 1 {print $1, $2, $3}')
		[ "$table" = "c1 0 stopped" ] || fail "list after $point: $(rt list)"
		json=$(rt list --format json)
		if [ "$point" = create-after-statedir ]; then
			# an empty directory may be a create's that has not locked it yet: not in JSON
			[ "$json" = null ] || fail "list --format json after $point: $json"
			must_recover c1
			continue
		fi
		jq -e 'length == 1 and .[0].id == "c1" and .[0].pid == 0 and .[0].status == "stopped"
			and .[0].bundle == "" and (.[0].ociVersion | length > 0) and .[0].owner == "root"
			and (.[0].created | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]+)?Z$"))' \
			<<<"$json" >/dev/null || fail "list --format json after $point: $json"
		# the created time is the state directory's, not now
		[ "$(date -d "$(jq -r '.[0].created' <<<"$json")" +%s)" = "$(stat -c %Y "$TEST_ROOT/c1")" ] ||
			fail "created after $point: $json, the directory's: $(stat -c %y "$TEST_ROOT/c1")"
		for verb in "state c1" "kill c1 KILL" "exec c1 true"; do
			run rt $verb
			assert_clean_failure
			assert_output_contains "\`c1\`"
			[ "$(grep -c . <<<"$output")" -eq 1 ] || fail "$verb after $point: not one line: $output"
		done
		must_recover c1
	done
}

# held NAME POINT CMD...: the runtime in the background, held at the failpoint POINT
# (FAILPOINT_PAUSE: it waits there until $BUNDLE/go-NAME exists, 30 s at most; `-` for none);
# its output in $BUNDLE/NAME.out, its pid in $pid_NAME.
held() {
	local name=$1 point=$2
	shift 2
	rm -f "$BUNDLE/go-$name" "$BUNDLE/go-$name.reached"
	AGENTRT_FAILPOINT=$point AGENTRT_FAILPOINT_RESUME=$BUNDLE/go-$name AGENTRT_FP_MARK=$FP_MARK \
		timeout --kill-after=5 60 "$AGENTRT" --root "$TEST_ROOT" --profile agent "$@" \
		</dev/null >"$BUNDLE/$name.out" 2>&1 &
	printf -v "pid_$name" %s $!
}

# held_wait NAME TENTHS: 0 once NAME waits at its failpoint, 1 once it ended without reaching
# it, 2 while it still runs elsewhere (a lock it waits for) after TENTHS tenths of a second
held_wait() {
	local name=$1 pid_var=pid_$1 i
	for ((i = 0; i < $2; i++)); do
		[ -e "$BUNDLE/go-$name.reached" ] && return 0
		kill -0 "${!pid_var}" 2>/dev/null || break
		sleep 0.1
	done
	[ -e "$BUNDLE/go-$name.reached" ] && return 0
	kill -0 "${!pid_var}" 2>/dev/null && return 2
	return 1
}

# held_end NAME...: let them go on, the first first (it is waited for $HELD_TENTHS tenths of a
# second, 150 unless told, before the next is let go: it may wait for a lock the next holds);
# their exit statuses in $st_NAME
held_end() {
	local name pid_var i st
	for name in "$@"; do
		pid_var=pid_$name
		touch "$BUNDLE/go-$name"
		for ((i = 0; i < ${HELD_TENTHS:-150}; i++)); do kill -0 "${!pid_var}" 2>/dev/null || break; sleep 0.1; done
	done
	for name in "$@"; do
		pid_var=pid_$name
		st=0
		wait "${!pid_var}" || st=$?
		printf -v "st_$name" %s "$st"
	done
}

# one_id_outcome ID WHAT: after creates of ID raced with WHAT: ID is either whole (its state
# says created or running, its init lives) or gone with nothing of it left running; each
# create that failed says so in one line naming ID (the names in $creates); then delete
# --force leaves nothing.
one_id_outcome() {
	local id=$1 what=$2 name st_var pid
	for name in $creates; do
		st_var=st_$name
		[ "${!st_var}" -eq 0 ] && continue
		status=${!st_var} output=$(cat "$BUNDLE/$name.out")
		assert_clean_failure
		[ "$(grep -c . <<<"$output")" -eq 1 ] || fail "$what: $name: not one line: $output"
		assert_output_contains "\`$id\`"
	done
	run rt state "$id"
	if [ "$status" -eq 0 ]; then
		pid=$(jq -r .pid <<<"$output")
		case $(jq -r .status <<<"$output") in
		created | running) kill -0 "$pid" || fail "$what: state says pid $pid, which is gone: $output" ;;
		*) fail "$what: $id is not whole: $output" ;;
		esac
	else
		output=$(leftover_processes)
		if [ -n "$output" ]; then
			output+=" ($(rt list))"
			recover "$id" || true # (cleans up by hand)
			fail "$what: \`state $id' fails, yet these live on: $output"
		fi
	fi
	must_recover "$id"
}

# create-delete-race: a `delete --force` of an id whose create had made its state directory
# and not yet locked it took the lock itself, judged the empty directory a killed create's,
# let the lock go again (while it tested it) and removed the directory while that create,
# which got the lock meanwhile, went on: the create said ok, its init and cgroup lived on with
# no state directory, and no `delete` could find them (an orphaned init, as load.bats once
# left).  Held here: the create before its lock, the delete just before it removes the
# directory, so that the create ends in between.
@test "fault: create-delete-race leaves no init: delete --force of an id whose create has not locked its state directory" {
	set_args sleep 100
	local creates=create r=0
	held create create-hold-unlocked create --bundle "$BUNDLE" c1
	held_wait create 100 || fail "create never reached create-hold-unlocked: $(cat "$BUNDLE/create.out")"
	held delete delete-hold-before-remove delete --force c1
	held_wait delete 100 || r=$?
	[ "$r" -ne 2 ] || { held_end create delete; fail "delete --force neither ended nor reached its failpoint"; }
	held_end create delete
	[ "$st_delete" -eq 0 ] || fail "delete --force: $(cat "$BUNDLE/delete.out")"
	one_id_outcome c1 "delete --force during create"
}

# The same where the state root's file system cannot rename without replacing (the failpoint
# makes create take that path): the create makes its directory in place and, once it holds the
# lock, finds it removed (the delete holds the lock until it is gone): it fails in one line.
@test "fault: create-delete-race leaves no init: the same where the state directory is made in place" {
	set_args sleep 100
	local creates=create
	held create create-in-place-hold-unlocked create --bundle "$BUNDLE" c1
	held_wait create 100 || fail "create never reached create-in-place-hold-unlocked: $(cat "$BUNDLE/create.out")"
	held delete delete-hold-before-remove delete --force c1
	held_wait delete 100 || { held_end create delete; fail "delete --force never reached its failpoint: $(cat "$BUNDLE/delete.out")"; }
	# the create waits for the delete's lock: the delete is let go after 2 s
	HELD_TENTHS=20 held_end create delete
	[ "$st_delete" -eq 0 ] || fail "delete --force: $(cat "$BUNDLE/delete.out")"
	one_id_outcome c1 "delete --force during create (in place)"
	[ "$st_create" -ne 0 ] || fail "create of a directory removed before it was locked said ok"
	grep -q "removed while it was made" "$BUNDLE/create.out" || fail "create: $(cat "$BUNDLE/create.out")"
}

# create-reclaim-race: a create that finds a killed create's leftover takes the id over when
# no live process holds the leftover's lock.  `delete --force` of that leftover let its own
# lock go while it tested it, so such a create removed the leftover under the delete, made
# its container, and the delete then removed that container's state directory: the init
# and cgroup lived on with no state directory.
@test "fault: create-reclaim-race leaves no init: a create of an id whose killed create's leftover a delete --force is removing" {
	set_args sleep 100
	local creates=create
	fp create-after-cgroup create --bundle "$BUNDLE" c1
	held delete delete-hold-before-remove delete --force c1
	held_wait delete 100 || { held_end delete; fail "delete --force never reached its failpoint: $(cat "$BUNDLE/delete.out")"; }
	held create - create --bundle "$BUNDLE" c1
	held_wait create 150 || true
	held_end create delete
	[ "$st_delete" -eq 0 ] || fail "delete --force: $(cat "$BUNDLE/delete.out")"
	one_id_outcome c1 "create during delete --force"
}

# create-race: every other command on an id whose create is held at POINT (before its state
# directory is locked, then after, before state.json): no init outlives its container, each
# create fails in one line or its container is whole, and delete --force leaves nothing.
race_each() { # POINT
	local point=$1 racer r creates
	for racer in "state c1" "list --format json" "kill c1 KILL" "delete c1" "delete --force c1" \
		"create --bundle $BUNDLE c1" "run --detach --bundle $BUNDLE c1"; do
		creates=create
		case $racer in create* | run*) creates+=" racer" ;; esac
		held create "$point" create --bundle "$BUNDLE" c1
		held_wait create 100 || { held_end create; fail "create never reached $point: $(cat "$BUNDLE/create.out")"; }
		held racer - $racer
		r=0
		held_wait racer 10 || r=$?
		held_end create racer
		[ "$r" -ne 0 ] || fail "[$racer] reached a failpoint it was not given"
		one_id_outcome c1 "[$racer] at $point"
	done
}

@test "fault: create-race: state, list, kill, delete, create and run of an id whose create has not locked its state directory" {
	set_args sleep 100
	race_each create-hold-unlocked
}

@test "fault: create-race: state, list, kill, delete, create and run of an id whose create holds its lock, before its state is saved" {
	set_args sleep 100
	race_each create-hold-locked
}

# held_kill NAME: SIGKILL the runtime `held` started as NAME (the child of its timeout)
held_kill() {
	local pid_var=pid_$1 child
	child=$(cat "/proc/${!pid_var}/task/${!pid_var}/children" 2>/dev/null)
	[ -n "$child" ] || fail "$1: no runtime under timeout ${!pid_var}"
	kill -KILL $child
	wait "${!pid_var}" || true
}

# creating_dirs: the temporary state directories in the state root, one a line
creating_dirs() {
	find "$TEST_ROOT" -mindepth 1 -maxdepth 1 -name '.creating.*' -printf '%f %i\n' | sort
}

# create-tmp-leftover: a create killed between making its temporary state directory and
# renaming it to its id left an empty hidden .creating.* directory that nothing removed;
# they piled up in the state root.  The next create of that id removes its own; `list`
# removes any once no create is between making one and locking it.
@test "fault: create-tmp-leftover: a create killed before it names its state directory leaves nothing after the next create" {
	set_args sleep 100
	held create create-hold-unlocked create --bundle "$BUNDLE" c1
	held_wait create 100 || fail "create never reached create-hold-unlocked: $(cat "$BUNDLE/create.out")"
	held_kill create
	[ -n "$(creating_dirs)" ] || fail "the killed create left no .creating directory: $(ls -A "$TEST_ROOT")"
	create_container c1
	[ "$status" -eq 0 ] || fail "create after a killed create: $output"
	[ -z "$(creating_dirs)" ] || fail "after the next create, left: $(creating_dirs)"
	rt start c1
	[ "$(container_status c1)" = running ] || fail "c1: $(rt state c1)"
	must_recover c1
	[ -z "$(leftover_processes)" ] || fail "left: $(leftover_processes)"
}

@test "fault: create-tmp-leftover: list removes what creates of other ids killed before they named their state directory" {
	set_args sleep 100
	local id n
	n=$(creating_dirs | wc -l)
	for id in c8 c9; do
		held "k$id" create-hold-unlocked create --bundle "$BUNDLE" "$id"
		held_wait "k$id" 100 || fail "create never reached create-hold-unlocked: $(cat "$BUNDLE/k$id.out")"
		held_kill "k$id"
	done
	[ "$(creating_dirs | wc -l)" -eq $((n + 2)) ] || fail "expected two more leftovers: $(ls -A "$TEST_ROOT")"
	run rt list
	[ "$status" -eq 0 ] || fail "list: $output"
	[ -z "$(creating_dirs)" ] || fail "after list, left: $(creating_dirs)"
}

# The other side: a live create's temporary directory, not yet locked (held there), is never
# taken for a leftover by a concurrent list, delete, delete --force, a create of another id or
# of the same id; the create then finishes and its container works.
@test "fault: create-tmp-leftover: a live create's temporary directory is never removed by list, delete or another create" {
	set_args sleep 100
	local before racer r loser
	held create create-hold-unlocked create --bundle "$BUNDLE" c1
	held_wait create 100 || fail "create never reached create-hold-unlocked: $(cat "$BUNDLE/create.out")"
	before=$(creating_dirs)
	[ -n "$before" ] || fail "no .creating directory while create is held: $(ls -A "$TEST_ROOT")"
	for racer in "list" "list --format json" "delete c1" "delete --force c1" "create c2"; do
		case $racer in
		create*) create_container c2 ;;
		*) run rt $racer ;;
		esac
		[ "$(creating_dirs)" = "$before" ] ||
			{ held_end create; fail "[$racer] changed the held create's directory: $before -> $(creating_dirs)"; }
	done
	rt state c2 >/dev/null || { held_end create; fail "create of c2 beside a held create failed"; }
	# a create of the same id waits or fails; it never takes the held one's directory
	held racer - create --bundle "$BUNDLE" c1
	r=0
	held_wait racer 10 || r=$?
	[ "$(creating_dirs)" = "$before" ] ||
		{ held_end create racer; fail "[create c1] changed the held create's directory: $before -> $(creating_dirs)"; }
	held_end create racer
	# one of the two creates of c1 made it; the other failed in one line
	if [ "$st_create" -eq 0 ]; then
		loser=racer
	else
		loser=create
		[ "$st_racer" -eq 0 ] || fail "both creates of c1 failed: $(cat "$BUNDLE/create.out" "$BUNDLE/racer.out")"
	fi
	local st_var=st_$loser
	[ "${!st_var}" -ne 0 ] || fail "both creates of c1 said ok"
	[ "$(cat "$BUNDLE/$loser.out")" = "agentrt: create \`c1\`: container with given ID already exists" ] ||
		fail "$loser: $(cat "$BUNDLE/$loser.out")"
	rt start c1
	[ "$(container_status c1)" = running ] || fail "c1: $(rt state c1)"
	[ -z "$(creating_dirs)" ] || fail "left: $(creating_dirs)"
	rt delete --force c2 || fail "delete --force c2"
	must_recover c1
}

# create-wait-stopped: a create of an id whose .creating.<id> exists waited for the state
# root's LOCK_EX without end; another create of that id stopped (SIGSTOP) between making that
# directory and locking it (it holds the root's LOCK_SH there) held it forever.  It now gives
# up after a few seconds with one line naming the id, and leaves nothing; the stopped create,
# let go, makes its container.
@test "fault: create-wait-stopped: a create waiting for another create of its id that is stopped fails in seconds, in one line" {
	set_args sleep 100
	local before st=0
	held create create-hold-unlocked create --bundle "$BUNDLE" c1
	held_wait create 100 || fail "create never reached create-hold-unlocked: $(cat "$BUNDLE/create.out")"
	kill -STOP "$pid_create"
	before=$(creating_dirs)
	timeout --kill-after=2 20 "$AGENTRT" --root "$TEST_ROOT" create --bundle "$BUNDLE" c1 \
		</dev/null >"$BUNDLE/second.out" 2>&1 || st=$?
	kill -CONT "$pid_create"
	output=$(cat "$BUNDLE/second.out")
	[ "$st" -ne 124 ] && [ "$st" -ne 137 ] || { held_end create; fail "the second create waited without end (20 s)"; }
	[ "$(creating_dirs)" = "$before" ] || { held_end create; fail "the held create's directory changed: $before -> $(creating_dirs)"; }
	held_end create
	[ "$st" -eq 1 ] || fail "second create: $st: $output"
	[ "$(grep -c . <<<"$output")" -eq 1 ] || fail "not one line: $output"
	assert_output_contains "create \`c1\`"
	[ "$st_create" -eq 0 ] || fail "the stopped create, let go: $(cat "$BUNDLE/create.out")"
	rt start c1
	[ "$(container_status c1)" = running ] || fail "c1: $(rt state c1)"
	[ -z "$(creating_dirs)" ] || fail "left: $(creating_dirs)"
	must_recover c1
}

@test "fault: run killed after the init is ready" {
	set_args sleep 100
	fp create-after-spawn run -d --bundle "$BUNDLE" c1
	known_leak c1 "in run -d after the init was ready, before state.json"
}

@test "fault: start killed after the fifo released the process" {
	set_args sleep 100
	create_container c1
	[ "$status" -eq 0 ] || fail "$output"
	fp start-after-fifo start c1
	# The state the next command reports must agree with reality.
	st=$(container_status c1)
	[ "$st" = running ] || fail "after an interrupted start: status $st"
	must_recover c1
}

@test "fault: exec killed between fork and go" {
	start_agent
	fp exec-after-fork exec c1 sleep 100
	must_recover c1
}

@test "fault: exec killed after the process runs" {
	start_agent
	fp exec-after-spawn exec c1 sleep 100
	must_recover c1
}

# pid-reuse-exec: exec checked that the container's init was alive (pid and start time), then
# opened /proc/PID/ns/* by the pid alone.  An init that died in between, its pid taken by an
# unrelated host process (pidat: chrooted to a directory of ours, in the host's namespaces),
# had exec join that process's namespaces and root instead of failing.  Held at that point
# (exec-before-join), the init is killed and pidat takes its pid: exec must fail in one line,
# run nothing there, and leave that process alone.
@test "fault: pid-reuse-exec: an init replaced by a host process while exec is about to join it: exec fails, never enters it" {
	[ -x "$HELPER_DIR/pidat" ] || skip "pidat not built (make test-helpers)"
	set_args sleep 100
	local pid helper exe victim=$BUNDLE/victim go=$BUNDLE/resume mark=agentrt-pid-reuse-exec-$$
	mkdir -p "$victim/bin"
	cp -a "$ROOTFS/bin/busybox" "$victim/bin/" && ln -s busybox "$victim/bin/sh"
	create_container c1
	[ "$status" -eq 0 ] || fail "create: $output"
	pid=$(container_pid c1)
	AGENTRT_FAILPOINT=exec-before-join AGENTRT_FAILPOINT_RESUME=$go timeout --kill-after=5 60 \
		"$AGENTRT" --root "$TEST_ROOT" exec c1 sh -c "echo entered > /$mark" \
		</dev/null >"$BUNDLE/exec.out" 2>&1 &
	exe=$!
	for ((i = 0; i < 100; i++)); do [ -e "$go.reached" ] && break; sleep 0.1; done
	[ -e "$go.reached" ] || { touch "$go"; wait "$exe" || true; fail "exec never reached the failpoint: $(cat "$BUNDLE/exec.out")"; }
	kill -KILL "$pid"
	for ((i = 0; i < 50; i++)); do [ -e "/proc/$pid" ] || break; sleep 0.1; done
	"$HELPER_DIR/pidat" "$pid" "$victim" >"$BUNDLE/pidat.out" 2>"$BUNDLE/pidat.err" &
	helper=$!
	for ((i = 0; i < 50; i++)); do [ -s "$BUNDLE/pidat.out" ] && break; sleep 0.1; done
	if [ ! -s "$BUNDLE/pidat.out" ]; then
		touch "$go"
		wait "$exe" || true
		wait "$helper" && rc=0 || rc=$?
		[ "$rc" -eq 3 ] && skip "pid $pid was taken meanwhile"
		fail "pidat: $(cat "$BUNDLE/pidat.err")"
	fi
	touch "$go"
	status=0
	wait "$exe" || status=$?
	output=$(cat "$BUNDLE/exec.out")
	kill -0 "$pid" || fail "the host process at $pid is gone"
	kill "$pid"
	wait "$helper" || true
	if [ -e "/$mark" ]; then
		rm -f "/$mark"
		fail "exec ran in the host's root: $output"
	fi
	[ ! -e "$victim/$mark" ] || fail "exec ran in the host process's root: $output"
	assert_clean_failure
	[ "$(grep -c . <<<"$output")" -eq 1 ] || fail "not one line: $output"
	assert_output_contains "\`c1\`"
	must_recover c1
}

# plant_victim PID VICTIM GO EXE: an unrelated process takes the pid PID (pidat -m: a mount
# namespace of its own, rooted at VICTIM, so that a mount that lands there is seen in its
# mountinfo and nowhere else); sets VICTIM_PID, VICTIM_HELPER (pidat, to wait for), VICTIM_NS
# and VICTIM_MOUNTS (its mount namespace and mountinfo now).  When it cannot, the runtime
# (EXE) held at a failpoint is let go (GO) and waited for, then the test skips (PID taken
# meanwhile) or fails.
plant_victim() {
	local pid=$1 victim=$2 go=$3 exe=$4 rc
	"$HELPER_DIR/pidat" -m "$pid" "$victim" >"$BUNDLE/pidat.out" 2>"$BUNDLE/pidat.err" &
	VICTIM_HELPER=$!
	for ((i = 0; i < 50; i++)); do [ -s "$BUNDLE/pidat.out" ] && break; sleep 0.1; done
	if [ ! -s "$BUNDLE/pidat.out" ]; then
		touch "$go"
		wait "$exe" || true
		wait "$VICTIM_HELPER" && rc=0 || rc=$?
		[ "$rc" -eq 3 ] && skip "pid $pid was taken meanwhile"
		fail "pidat: $(cat "$BUNDLE/pidat.err")"
	fi
	VICTIM_PID=$pid
	VICTIM_NS=$(readlink "/proc/$pid/ns/mnt")
	VICTIM_MOUNTS=$(cat "/proc/$pid/mountinfo")
	[ "$VICTIM_NS" != "$(readlink /proc/self/ns/mnt)" ] || fail "pidat: in the host's mount namespace"
}

# held_pid_reuse FAILPOINT VICTIM CMD...: the runtime runs CMD (its arguments, the container
# c1's command) and is held at FAILPOINT; there the init of c1 is killed and an unrelated
# process takes its pid (plant_victim); then CMD goes on.  Sets $status and $output (CMD's)
# and what plant_victim sets.
held_pid_reuse() {
	local fp=$1 victim=$2 go=$BUNDLE/resume pid exe
	shift 2
	pid=$(container_pid c1)
	AGENTRT_FAILPOINT=$fp AGENTRT_FAILPOINT_RESUME=$go timeout --kill-after=5 60 \
		"$AGENTRT" --root "$TEST_ROOT" "$@" </dev/null >"$BUNDLE/held.out" 2>&1 &
	exe=$!
	for ((i = 0; i < 100; i++)); do [ -e "$go.reached" ] && break; sleep 0.1; done
	[ -e "$go.reached" ] || { touch "$go"; wait "$exe" || true; fail "$* never reached $fp: $(cat "$BUNDLE/held.out")"; }
	kill -KILL "$pid"
	for ((i = 0; i < 50; i++)); do [ -e "/proc/$pid" ] || break; sleep 0.1; done
	plant_victim "$pid" "$victim" "$go" "$exe"
	touch "$go"
	status=0
	wait "$exe" || status=$?
	output=$(cat "$BUNDLE/held.out")
}

# victim_untouched WHAT: the process held_pid_reuse put at the init's pid is alive, sleeping,
# in its own mount namespace with the mounts it had, and nothing else runs there; then it ends.
victim_untouched() {
	local st n=0 f bad=
	{ read -r st <"/proc/$VICTIM_PID/stat"; } 2>/dev/null || bad="the process $VICTIM_PID died"
	st=${st##*) }
	[ -n "$bad" ] || [ "${st%% *}" = S ] || bad="the process $VICTIM_PID is in state ${st%% *}"
	[ -n "$bad" ] || [ "$(readlink "/proc/$VICTIM_PID/ns/mnt")" = "$VICTIM_NS" ] || bad="its mount namespace changed"
	[ -n "$bad" ] || [ "$(cat "/proc/$VICTIM_PID/mountinfo")" = "$VICTIM_MOUNTS" ] ||
		bad="mounted into its namespace: $(diff <(echo "$VICTIM_MOUNTS") "/proc/$VICTIM_PID/mountinfo")"
	for f in /proc/[0-9]*/ns/mnt; do
		[ "$(readlink "$f" 2>/dev/null)" = "$VICTIM_NS" ] && n=$((n + 1))
	done
	[ -n "$bad" ] || [ "$n" -eq 1 ] || bad="$n processes in its mount namespace, not 1"
	kill "$VICTIM_PID" 2>/dev/null || true
	wait "$VICTIM_HELPER" || true
	[ -z "$bad" ] || fail "$1: $bad"
}

# pid-reuse-exec-home: exec read the home of its uid from /etc/passwd in /proc/PID/root, by the
# pid alone (an exec as a uid the init is not, under the agent profile): an init that died after
# exec's status check, its pid taken by an unrelated process, had exec open that process's
# /etc/passwd.  Here it is a FIFO with a writer waiting for a reader: opened, the writer goes on.
@test "fault: pid-reuse-exec-home: an init replaced by a host process while exec looks up the home: exec opens nothing in its root" {
	[ -x "$HELPER_DIR/pidat" ] || skip "pidat not built (make test-helpers)"
	local victim=$BUNDLE/victim writer
	mkdir -p "$victim/etc"
	mkfifo "$victim/etc/passwd"
	update_config '.root.readonly = true | .process.env = ["PATH=/bin:/usr/bin"] |
		.process.user = {"uid": 0, "gid": 0}'
	set_args sleep 100
	AGENTRT_PROFILE=agent create_container c1
	[ "$status" -eq 0 ] || fail "create: $output"
	timeout 60 sh -c 'exec 3>"$1" && echo opened >"$2"' sh "$victim/etc/passwd" "$BUNDLE/fifo.opened" &
	writer=$!
	AGENTRT_PROFILE=agent held_pid_reuse exec-before-profile "$victim" exec --user 4242:4242 c1 true
	for ((i = 0; i < 5; i++)); do [ -e "$BUNDLE/fifo.opened" ] && break; sleep 0.1; done
	kill "$writer" 2>/dev/null || true
	wait "$writer" || true
	[ ! -e "$BUNDLE/fifo.opened" ] || fail "exec opened /etc/passwd in the root of process $VICTIM_PID"
	victim_untouched "exec"
	assert_clean_failure
	[ "$(grep -c . <<<"$output")" -eq 1 ] || fail "not one line: $output"
	assert_output_contains "\`c1\`"
	must_recover c1
}

# pid-reuse-workspace-rollback: the rollback of a running container's workspace opened
# /proc/PID/ns/mnt by the pid alone, then mounted the rolled-back overlay there: an init that
# died after the status check, its pid taken by an unrelated process (a host one: the host's
# mount namespace), had the overlay mounted into that process's namespace.  Here the process has
# a namespace of its own with /workspace in it, which must keep the mounts it had.
@test "fault: pid-reuse-workspace-rollback: an init replaced by a host process during a rollback: nothing is mounted in its namespace" {
	[ -x "$HELPER_DIR/pidat" ] || skip "pidat not built (make test-helpers)"
	local victim=$BUNDLE/victim
	mkdir -p "$victim/workspace" "$BUNDLE/host" "$ROOTFS/workspace"
	echo data >"$BUNDLE/host/a.txt"
	update_config ".mounts += [{\"destination\": \"/workspace\", \"type\": \"bind\",
		\"source\": \"$BUNDLE/host\", \"options\": [\"rbind\", \"rw\"]}]"
	set_args sleep 100
	AGENTRT_PROFILE=agent create_container c1
	[ "$status" -eq 0 ] || fail "create: $output"
	rt workspace c1 snapshot s1 >/dev/null || fail "snapshot"
	held_pid_reuse workspace-rollback-before-join "$victim" workspace c1 rollback s1
	victim_untouched "rollback"
	assert_clean_failure
	[ "$(grep -c . <<<"$output")" -eq 1 ] || fail "not one line: $output"
	assert_output_contains "\`c1\`"
	must_recover c1
	rt workspace c1 purge >/dev/null || fail "purge"
}

# pid-reuse-create-abort: a create that failed after the init's clone (its id maps, its cgroup)
# reaped the init, then killed "the init" again on its way out by the pid alone (no start
# time): a process that took the pid meanwhile was killed.  Held after the reap
# (spawn-init-reaped, the pid in the .reached file), an unrelated process takes the pid.
@test "fault: pid-reuse-create-abort: a create failing after its init was reaped kills no process that took the init's pid" {
	[ -x "$HELPER_DIR/pidat" ] || skip "pidat not built (make test-helpers)"
	local victim=$BUNDLE/victim go=$BUNDLE/resume pid exe
	mkdir -p "$victim"
	set_args true
	AGENTRT_FAILPOINT=spawn-init-reaped AGENTRT_FAILPOINT_RESUME=$go timeout --kill-after=5 60 \
		"$AGENTRT" --root "$TEST_ROOT" create --bundle "$BUNDLE" c1 </dev/null >"$BUNDLE/held.out" 2>&1 &
	exe=$!
	for ((i = 0; i < 100; i++)); do [ -s "$go.reached" ] && break; sleep 0.1; done
	[ -s "$go.reached" ] || { touch "$go"; wait "$exe" || true; fail "create never reached spawn-init-reaped: $(cat "$BUNDLE/held.out")"; }
	pid=$(cat "$go.reached")
	[ ! -e "/proc/$pid" ] || { touch "$go"; wait "$exe" || true; fail "the init $pid was not reaped"; }
	plant_victim "$pid" "$victim" "$go" "$exe"
	touch "$go"
	status=0
	wait "$exe" || status=$?
	output=$(cat "$BUNDLE/held.out")
	victim_untouched "create"
	[ "$status" -eq 1 ] || fail "create: $status: $output"
	[ "$(grep -c . <<<"$output")" -eq 1 ] || fail "not one line: $output"
	assert_output_contains "create \`c1\`"
	must_recover c1
}

# pid-reuse-ps: ps read the container's pids from its cgroup, then ran ps(1) (or, without
# it, read /proc/PID/cmdline) by those pids alone: a process of the container that ended in
# between, its pid taken by a host process, had that process shown as the container's.  Held
# after the pids are read (ps-after-pids), a child of the container is killed and pidat takes
# its pid; neither ps(1)'s table nor agentrt's own (no ps(1) in PATH) may show it, and the
# container's other processes are still shown.
@test "fault: pid-reuse-ps: a container's process replaced by a host process while ps runs is not shown as the container's" {
	[ -x "$HELPER_DIR/pidat" ] || skip "pidat not built (make test-helpers)"
	local victim=$BUNDLE/victim go=$BUNDLE/resume pid init exe table nops=$BUNDLE/nops
	mkdir -p "$victim" "$nops"
	ln -s "$(command -v timeout)" "$nops/timeout"
	set_args sh -c 'sleep 1000 & sleep 1001 & while sleep 1; do :; done'
	run_detached c1
	[ "$status" -eq 0 ] || fail "run: $output"
	init=$(container_pid c1)
	for table in ps own; do
		for ((i = 0; i < 50; i++)); do
			pid=$(pgrep -P "$init" -xf 'sleep 100[01]' | head -n1)
			[ -n "$pid" ] && break
			sleep 0.1
		done
		[ -n "$pid" ] || fail "no sleep in c1"
		rm -f "$go" "$go.reached"
		if [ "$table" = ps ]; then
			AGENTRT_FAILPOINT=ps-after-pids AGENTRT_FAILPOINT_RESUME=$go timeout --kill-after=5 60 \
				"$AGENTRT" --root "$TEST_ROOT" ps c1 </dev/null >"$BUNDLE/held.out" 2>&1 &
		else
			PATH=$nops AGENTRT_FAILPOINT=ps-after-pids AGENTRT_FAILPOINT_RESUME=$go timeout --kill-after=5 60 \
				"$AGENTRT" --root "$TEST_ROOT" ps c1 </dev/null >"$BUNDLE/held.out" 2>&1 &
		fi
		exe=$!
		for ((i = 0; i < 100; i++)); do [ -e "$go.reached" ] && break; sleep 0.1; done
		[ -e "$go.reached" ] || { touch "$go"; wait "$exe" || true; fail "ps never reached ps-after-pids: $(cat "$BUNDLE/held.out")"; }
		kill -KILL "$pid"
		for ((i = 0; i < 50; i++)); do [ -e "/proc/$pid" ] || break; sleep 0.1; done
		plant_victim "$pid" "$victim" "$go" "$exe"
		touch "$go"
		status=0
		wait "$exe" || status=$?
		output=$(cat "$BUNDLE/held.out")
		kill "$VICTIM_PID" 2>/dev/null || true
		wait "$VICTIM_HELPER" || true
		[ "$status" -eq 0 ] || fail "[$table] ps: $status: $output"
		[[ $output == *PID* ]] || fail "[$table] no header: $output"
		! grep -qE "^([^ ]+ +)?$pid .*pidat|^$pid " <<<"$output" || fail "[$table] the host process $pid shown as c1's: $output"
		[[ $output == *"sleep 100"* ]] || fail "[$table] c1's other sleep not shown: $output"
	done
	must_recover c1
}

# pid-reuse-kill-all: `kill --all` signalled the pids it read from the cgroup by the pid
# alone: a member that ended after the read (here: the cgroup thawed by someone else and the
# process killed), its pid taken by a host process, got the signal.  Held after the read
# (cgroup-kill-after-pids), a sleep of c1 is killed and pidat takes its pid: it must live on,
# and c1's other processes still get the signal.
@test "fault: pid-reuse-kill-all: a member replaced by a host process while kill --all runs is not signalled" {
	[ -x "$HELPER_DIR/pidat" ] || skip "pidat not built (make test-helpers)"
	local victim=$BUNDLE/victim go=$BUNDLE/resume pid other init exe fz
	mkdir -p "$victim"
	set_args sh -c 'sleep 1000 & sleep 1001 & while sleep 1; do :; done'
	run_detached c1
	[ "$status" -eq 0 ] || fail "run: $output"
	init=$(container_pid c1)
	for ((i = 0; i < 50; i++)); do
		pid=$(pgrep -P "$init" -xf 'sleep 1000')
		other=$(pgrep -P "$init" -xf 'sleep 1001')
		[ -n "$pid" ] && [ -n "$other" ] && break
		sleep 0.1
	done
	[ -n "$pid" ] || fail "no sleep in c1"
	AGENTRT_FAILPOINT=cgroup-kill-after-pids AGENTRT_FAILPOINT_RESUME=$go timeout --kill-after=5 60 \
		"$AGENTRT" --root "$TEST_ROOT" kill --all c1 TERM </dev/null >"$BUNDLE/held.out" 2>&1 &
	exe=$!
	for ((i = 0; i < 100; i++)); do [ -e "$go.reached" ] && break; sleep 0.1; done
	[ -e "$go.reached" ] || { touch "$go"; wait "$exe" || true; fail "kill never reached cgroup-kill-after-pids: $(cat "$BUNDLE/held.out")"; }
	# someone else thaws the cgroup (v1: a frozen task does not die of SIGKILL until then)
	fz=$(awk -F: '$2 == "freezer" { print $3 }' "/proc/$pid/cgroup")
	[ -z "$fz" ] || [ ! -e "/sys/fs/cgroup/freezer$fz/freezer.state" ] ||
		echo THAWED >"/sys/fs/cgroup/freezer$fz/freezer.state"
	kill -KILL "$pid"
	for ((i = 0; i < 50; i++)); do [ -e "/proc/$pid" ] || break; sleep 0.1; done
	plant_victim "$pid" "$victim" "$go" "$exe"
	touch "$go"
	status=0
	wait "$exe" || status=$?
	output=$(cat "$BUNDLE/held.out")
	victim_untouched "kill --all"
	[ "$status" -eq 0 ] || fail "kill --all: $status: $output"
	# (the init, pid 1 of its namespace, ignores SIGTERM; the other sleep dies of it)
	for ((i = 0; i < 50; i++)); do [ -e "/proc/$other" ] || break; sleep 0.1; done
	[ ! -e "/proc/$other" ] || fail "c1's other sleep $other did not get the signal"
	must_recover c1
}

@test "fault: delete killed before it destroys anything" {
	start_agent
	fp delete-before-destroy delete --force c1
	must_recover c1
}

@test "fault: delete killed after the init was killed" {
	start_agent
	fp delete-after-kill delete --force c1
	must_recover c1
}

@test "fault: delete killed after the cgroup was removed" {
	start_agent
	fp delete-after-cgroup delete --force c1
	must_recover c1
}

# image_bundle [JQ]: the bundle binds $BUNDLE/host (a.txt: data) at /workspace with a 64m
# workspace image (a new one at each create), JQ appended to the config's filter.
image_bundle() {
	[ -e /dev/loop-control ] || skip "needs loop devices"
	mkdir -p "$BUNDLE/host" "$ROOTFS/workspace"
	echo data >"$BUNDLE/host/a.txt"
	update_config ".mounts += [{\"destination\": \"/workspace\", \"type\": \"bind\",
		\"source\": \"$BUNDLE/host\", \"options\": [\"rbind\", \"rw\"]}]
		| .annotations[\"run.agentrt.workspace.size\"] = \"64m\" ${1:-}"
}

# fp_create_fails NAME ID: create ID with failpoint NAME must fail (1); its output in
# $BUNDLE/fp.out (a file: a create that wrongly succeeds leaves an init holding a pipe).
fp_create_fails() {
	status=0
	AGENTRT_FAILPOINT=$1 AGENTRT_FP_MARK=$FP_MARK timeout --kill-after=5 30 \
		"$AGENTRT" --root "$TEST_ROOT" --profile agent create --bundle "$BUNDLE" "$2" </dev/null \
		>"$BUNDLE/fp.out" 2>&1 || status=$?
	[ "$status" -eq 1 ] || fail "expected create to fail (1), got $status: $(cat "$BUNDLE/fp.out")"
}

# nothing_left ID OUT: a failed create of ID said one line (OUT) and left no state dir,
# process, cgroup, loop device, mount or workspace.
nothing_left() {
	local id=$1 out=$2
	[ "$(grep -c . <<<"$out")" = 1 ] || fail "more than one line: $out"
	[ ! -e "$TEST_ROOT/$id" ] || fail "state dir left: $(ls -A "$TEST_ROOT/$id")"
	[ -z "$(leftover_processes)" ] || fail "processes left: $(leftover_processes)"
	[ -z "$(leftover_cgroups)" ] || fail "cgroups left: $(leftover_cgroups)"
	! losetup -a | grep -F "$AGENTRT_DATA_DIR" || fail "a loop device is left"
	! grep -F "$AGENTRT_DATA_DIR" /proc/self/mountinfo || fail "a mount is left"
	[ ! -e "$TEST_STORE/.workspaces/$id" ] || fail "the new workspace is left: $(ls -A "$TEST_STORE/.workspaces/$id")"
}

@test "fault: the workspace image's mount fails while the init sets up: create fails, nothing is left" {
	# create mounts a new workspace image after the init is cloned (the init waits for it
	# where its mounts reach the workspace): its failure must end the init and leave no
	# cgroup, loop device, mount or half-made workspace
	image_bundle
	local host=$BUNDLE/host out
	set_args sleep 100
	fp_create_fails create-late-upper c1
	out=$(cat "$BUNDLE/fp.out")
	[[ "$out" == *"create \`c1\`"*"workspace \`/workspace\`: mount the image: failpoint"* ]] ||
		fail "error does not name the workspace's mount: $out"
	nothing_left c1 "$out"
	# and without the failpoint the same bundle runs, its workspace on the image
	set_args sh -c 'echo new >/workspace/b.txt && cat /workspace/a.txt'
	run rt run --bundle "$BUNDLE" c2
	[ "$status" -eq 0 ] && [ "$output" = data ] || fail "run: $status: $output"
	[ -s "$TEST_STORE/.workspaces/c2/upper.img" ] || fail "no image for c2"
	[ ! -e "$host/b.txt" ] || fail "the write reached the host directory"
}

# A new workspace image is bound and mounted by a thread of create's while create does the
# rest (workspace/image.c).  The init's clone is no fork of glibc's: a thread still counted
# there makes the init's setgroups/setresuid wait for it forever (glibc changes the ids of
# every thread).  It first hung workspace-size.bats under `strace -f`, which slowed the thread.
# The failpoint keeps the thread at work for 0.4 s past the clone's point: create must wait
# for it there, and a user with supplementary groups must still start.
@test "fault: workspace-mount-thread-at-clone: a slow image mount at the init's clone, a user with groups still starts" {
	image_bundle '| .process.user = {"uid": 1000, "gid": 1000, "additionalGids": [5, 7]}'
	local host=$BUNDLE/host out
	set_args sh -c 'id -u; id -G; cat /workspace/a.txt; echo w >/tmp/x && echo ok'
	status=0
	out=$(AGENTRT_FAILPOINT=workspace-mount-early-slow timeout --kill-after=5 30 \
		"$AGENTRT" --root "$TEST_ROOT" --profile agent run --bundle "$BUNDLE" wsslow </dev/null 2>&1) || status=$?
	[ "$status" -eq 0 ] || fail "run: $status (124: it hung): $out"
	[ "$out" = "$(printf '1000\n1000 5 7\ndata\nok')" ] || fail "output: $out"
	[ -s "$TEST_STORE/.workspaces/wsslow/upper.img" ] || fail "no image for wsslow"
	# run returns on the trail; the image's last unmount ends under its lock just after
	# (workspace-size.bats image-unmount-after-run): once the lock is free, no device is left
	flock -w 10 "$TEST_STORE/.workspaces/wsslow/upper.img" true || fail "the image's lock was not let go"
	! losetup -a | grep -F "$AGENTRT_DATA_DIR" || fail "a loop device is left"
	[ -z "$(leftover_processes)" ] || fail "processes left: $(leftover_processes)"
	rt workspace wsslow purge >/dev/null
}

# The thread's mount fails (the failpoint turns its mount into EIO): create fails with the one
# line the mount would have given, and nothing is left (as the late mount's failure above).
@test "fault: workspace-mount-thread-fails: create fails with one line naming the image, nothing is left" {
	image_bundle
	local host=$BUNDLE/host out
	set_args true
	fp_create_fails workspace-mount-early-fails wsfail
	out=$(cat "$BUNDLE/fp.out")
	[[ "$out" == *"create \`wsfail\`"*"workspace \`wsfail\`: mount the image"*"upper.img"*"Input/output error"* ]] ||
		fail "error does not name the image's mount: $out"
	nothing_left wsfail "$out"
}

# The image's copy from its template is the thread's first step (its fsync is milliseconds on a
# disk): a copy that fails (ENOSPC by the failpoint) fails create with one line naming the
# template, and no half-copied image or workspace is left.  Without the thread (failpoint
# workspace-mount-early) the late mount copies the image itself and the container runs.
@test "fault: workspace-copy-fails: the thread's image copy fails, one line, nothing left; without a thread the copy is made at the mount" {
	image_bundle
	local host=$BUNDLE/host out
	set_args sh -c 'cat /workspace/a.txt; echo new >/workspace/b.txt'
	fp_create_fails workspace-copy-fails wscopy
	out=$(cat "$BUNDLE/fp.out")
	[[ "$out" == *"create \`wscopy\`"*"workspace \`wscopy\`: copy the image"*".upper2-"*"No space left on device"* ]] ||
		fail "error does not name the image's copy: $out"
	nothing_left wscopy "$out"
	status=0
	out=$(AGENTRT_FAILPOINT=workspace-mount-early timeout --kill-after=5 30 \
		"$AGENTRT" --root "$TEST_ROOT" --profile agent run --bundle "$BUNDLE" wsnothread </dev/null 2>&1) || status=$?
	[ "$status" -eq 0 ] && [ "$out" = data ] || fail "run without the thread: $status: $out"
	[ -s "$TEST_STORE/.workspaces/wsnothread/upper.img" ] || fail "no image for wsnothread"
	[ ! -e "$TEST_STORE/.workspaces/wsnothread/.upper.img.tmp" ] || fail "a temporary image is left"
	[ ! -e "$host/b.txt" ] || fail "the write reached the host directory"
	run rt workspace wsnothread diff
	[[ "$output" == *b.txt* ]] || fail "b.txt is not in the diff: $output"
	rt workspace wsnothread purge >/dev/null
}

# overlay-long-options (mounts.bats) on a kernel without overlayfs's `lowerdir+` (before Linux
# 6.8): the failpoint makes agentrt take this host for one, so the other way is taken, each
# layer by a /proc/self/fd name in one lowerdir; past what one option holds, one line names it.
@test "fault: overlay-long-options without lowerdir+ (a kernel before Linux 6.8): the layers by /proc/self/fd names, and too many for one option is one error line" {
	local deep=$BUNDLE/ovl/$(printf 'd%.0s' {1..90})/$(printf 'e%.0s' {1..90})/$(printf 'f%.0s' {1..90})
	local lower="" i out arr
	AGENT_PROFILE=oci # the agent profile has its own rules for a config's mounts
	for i in 1 2 3; do
		mkdir -p "$deep/l$i"
		echo "layer$i" >"$deep/l$i/only$i"
		lower+="${lower:+:}$deep/l$i"
	done
	mkdir -p "$deep/u" "$deep/w"
	echo top >"$deep/l1/both"
	echo below >"$deep/l2/both"
	arr=$(jq -nc --arg l "lowerdir=$lower" --arg u "upperdir=$deep/u" --arg w "workdir=$deep/w" \
		'[{destination: "/ovl", type: "overlay", source: "overlay", options: [$l, $u, $w]}]')
	update_config ".mounts += $arr"
	set_args sleep 100
	AGENTRT_FAILPOINT=overlay-no-lowerdir-add rt run -d --bundle "$BUNDLE" c1 </dev/null \
		>"$BUNDLE/out" 2>&1 || fail "run -d: $(cat "$BUNDLE/out")"
	pid=$(rt state c1 | jq -r .pid)
	line=$(awk '$5 == "/ovl"' "/proc/$pid/mountinfo")
	[[ "$line" == *"lowerdir=/proc/self/fd/"*":/proc/self/fd/"* ]] || fail "not by descriptors' names: $line"
	run rt exec c1 cat /ovl/both /ovl/only1 /ovl/only2 /ovl/only3
	[ "$output" = "$(printf 'top\nlayer1\nlayer2\nlayer3')" ] || fail "$output"
	rt delete -f c1
	# 20 layers: 20 names of 16 bytes are more than one option's 255
	lower=""
	for i in $(seq 1 20); do
		mkdir -p "$deep/m$i"
		lower+="${lower:+:}$deep/m$i"
	done
	update_config "(.mounts[] | select(.destination == \"/ovl\") | .options[0]) = \"lowerdir=$lower\""
	status=0
	AGENTRT_FAILPOINT=overlay-no-lowerdir-add rt run -d --bundle "$BUNDLE" c2 </dev/null \
		>"$BUNDLE/out" 2>&1 || status=$?
	out=$(cat "$BUNDLE/out")
	[ "$status" -ne 0 ] || fail "20 layers by descriptors' names mounted"
	[[ "$out" == *"create \`c2\`"*"20 lower layers: more than one option holds on this kernel"* ]] || fail "$out"
	[ "$(grep -c . <<<"$out")" = 1 ] || fail "more than one line: $out"
	[ ! -e "$TEST_ROOT/c2" ] || fail "state dir left"
	[ -z "$(leftover_processes)" ] || fail "processes left: $(leftover_processes)"
	# without the failpoint (this kernel has lowerdir+) the same 20 layers mount
	rt run -d --bundle "$BUNDLE" c3 </dev/null >"$BUNDLE/out" 2>&1 ||
		fail "run -d with lowerdir+: $(cat "$BUNDLE/out")"
	rt delete -f c3
}

@test "fault: monitor-stall: a monitor that never answers fails create after its 10 s, with where it is; nothing is left" {
	# the error says the monitor's state and kernel function, so that a stall seen once in a
	# CI log can be told from a slow machine
	set_args sleep 100
	status=0
	AGENTRT_FAILPOINT=monitor-stall AGENTRT_FP_MARK=$FP_MARK timeout --kill-after=5 40 \
		"$AGENTRT" --root "$TEST_ROOT" --profile agent create --bundle "$BUNDLE" c1 </dev/null \
		>"$BUNDLE/fp.out" 2>&1 || status=$?
	out=$(cat "$BUNDLE/fp.out")
	[ "$status" -eq 1 ] || fail "expected create to fail (1), got $status: $out"
	[[ "$out" == *"create \`c1\`"*"monitor: not ready after 10 s (pid "[0-9]*", state S, in "*"pause"* ]] ||
		fail "error does not say where the monitor is: $out"
	[ "$(grep -c . <<<"$out")" = 1 ] || fail "more than one line: $out"
	[ ! -e "$TEST_ROOT/c1" ] || fail "state dir left: $(ls -A "$TEST_ROOT/c1")"
	[ -z "$(leftover_processes)" ] || fail "processes left: $(leftover_processes)"
	[ -z "$(leftover_cgroups)" ] || fail "cgroups left: $(leftover_cgroups)"
}
