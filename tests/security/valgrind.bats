#!/usr/bin/env bats
# valgrind.bats - memcheck on the lifecycle commands of a simple agent container: no errors and
# no definite leaks (--trace-children=no).
#
# valgrind 3.19 (Debian 12) does not know the new mount API (open_tree, fsopen, move_mount,
# mount_setattr: "unhandled syscall", ENOSYS) and the container init is a clone of `create'
# (no exec), so a *successful* create cannot run under it: create/run are checked on their
# failure paths (which run the whole config/profile pipeline).  `exec' forks a child that
# stays under valgrind and fails there (valgrind refuses its setrlimit(RLIMIT_NOFILE)).  Both
# are covered, when build-san/agentrt
# exists (make SANITIZE=address,undefined), under ASan/LeakSanitizer.

load helpers

VG=(valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite
	--show-leak-kinds=definite --trace-children=no)

# agentrt is a static PIE (mk/perf.mk), where memcheck cannot replace malloc and takes glibc's
# own start-up for errors: valgrind runs the same objects linked with glibc shared, which make
# builds beside it (agentrt-dynamic).
VG_AGENTRT=$AGENTRT
if ! readelf -lW "$AGENTRT" 2>/dev/null | grep -q INTERP; then
	VG_AGENTRT=$(dirname "$AGENTRT")/agentrt-dynamic
fi

setup() {
	requires valgrind
	[ -x "$VG_AGENTRT" ] || fail "$AGENTRT is static and there is no $VG_AGENTRT (make builds it)"
	setup_security_bundle
}

# vg NAME CMD...: the runtime under valgrind; the report goes to $BUNDLE/vg.NAME.
vg() {
	local name=$1
	shift
	status=0
	timeout --kill-after=5 120 "${VG[@]}" --log-file="$BUNDLE/vg.$name" "$VG_AGENTRT" --root "$TEST_ROOT" \
		--profile agent "$@" </dev/null >"$BUNDLE/out.$name" 2>&1 || status=$?
	output="$(cat "$BUNDLE/out.$name") $(cat "$BUNDLE/vg.$name")"
	[ "$status" -ne 99 ] || fail "valgrind found errors in \`$*': $(cat "$BUNDLE/vg.$name")"
	[ "$status" -eq 0 ] || fail "\`$*' failed ($status): $output"
	# valgrind's own "--PID-- WARNING: unhandled syscall" notes are not findings.
	! grep -q '^==' "$BUNDLE/vg.$name" || fail "valgrind report for \`$*': $(grep '^==' "$BUNDLE/vg.$name")"
}

@test "valgrind: state, start, state, list, kill, delete" {
	set_args sleep 100
	create_container c1
	[ "$status" -eq 0 ] || fail "create: $output"
	vg state1 state c1
	vg start start c1
	vg state2 state c1
	vg list list
	# kill needs pidfd_open, which valgrind 3.19 does not know (agentrt then reports
	# "container not running" for any pidfd_open error): run it natively.
	rt kill c1 KILL
	wait_for_status c1 stopped
	vg delete delete c1
}

@test "valgrind: ps, pause, resume, explain, delete --force" {
	set_args sleep 100
	run_detached c1
	[ "$status" -eq 0 ] || fail "run -d: $output"
	vg ps ps c1
	vg pause pause c1
	vg resume resume c1
	vg explain explain c1
	vg delete delete --force c1
}

@test "valgrind: spec, profile show, profile check, features" {
	vg spec spec --bundle "$BUNDLE/specdir" 2>/dev/null || true
	mkdir -p "$BUNDLE/specdir"
	vg spec spec --bundle "$BUNDLE/specdir"
	vg show profile show agent
	"$AGENTRT" profile show agent >"$BUNDLE/p.json"
	vg check profile check "$BUNDLE/p.json"
	vg features features
}

@test "ASan/LSan: create, start, exec, delete (build-san)" {
	SAN=$REPO_ROOT/build-san/agentrt
	[ -x "$SAN" ] || skip "no build-san/agentrt (make SANITIZE=address,undefined)"
	set_args sleep 100
	export ASAN_OPTIONS=detect_leaks=1:exitcode=99
	AGENTRT=$SAN
	create_container c1
	[ "$status" -eq 0 ] || fail "create: $output"
	for cmd in "start c1" "exec c1 true" "state c1" "delete --force c1"; do
		run rt $cmd
		[ "$status" -eq 0 ] || fail "$cmd ($status): $output"
	done
}

@test "valgrind: failing create (bad config) cleans up without leaks" {
	update_config '.process.capabilities.bounding += ["CAP_SYS_ADMIN"]'
	status=0
	timeout 120 "${VG[@]}" --log-file="$BUNDLE/vg.bad" "$VG_AGENTRT" --root "$TEST_ROOT" --profile agent \
		create --bundle "$BUNDLE" c1 </dev/null >/dev/null 2>&1 || status=$?
	[ "$status" -ne 99 ] || fail "valgrind: $(cat "$BUNDLE/vg.bad")"
	[ "$status" -ne 0 ] || fail "create with SYS_ADMIN succeeded"
	! grep -q '^==' "$BUNDLE/vg.bad" || fail "$(grep '^==' "$BUNDLE/vg.bad")"
}
