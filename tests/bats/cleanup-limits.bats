#!/usr/bin/env bats
# cleanup-limits.bats - the agent profile's create under a tight limit of the caller's (open
# files): it either makes the container or fails with one line naming the object and the real
# cause, and leaves nothing (teardown_bundle checks the state root, cgroups and mounts; the
# checks here the runtime's helpers by the marker in their environment).

load helpers

setup() {
	setup_bundle
	set_args sleep 100
	CL_MARK=agentrt-cl-$$-$BATS_TEST_NUMBER
}

# Runtime helpers (monitor, resolver, init) still carrying the marker of this test.
cl_leftovers() {
	grep -lsxz "AGENTRT_CL_MARK=$CL_MARK" /proc/[0-9]*/environ | cut -d/ -f3 | tr '\n' ' '
}

@test "emfile-resolver-cause: create under each soft limit of open files fails naming its cause, or works; nothing is left" {
	local n out left bad=()
	for n in $(seq 16 2 48); do
		status=0
		# (stderr to a file: the container keeps the runtime's stdio)
		(ulimit -Sn "$n" && AGENTRT_CL_MARK=$CL_MARK timeout --kill-after=5 30 \
			"$AGENTRT" --root "$TEST_ROOT" --profile agent run -d --bundle "$BUNDLE" c$n \
			</dev/null >/dev/null 2>"$BUNDLE/err") || status=$?
		out=$(<"$BUNDLE/err")
		if [ "$status" -eq 0 ]; then
			rt delete --force c$n >/dev/null 2>&1 || bad+=("$n: delete --force failed")
		else
			# one line, naming the container; an EMFILE is not reported as another cause
			[ "$(grep -c . <<<"$out")" -eq 1 ] || bad+=("$n: not one line: $out")
			[[ $out == "agentrt: create \`c$n\`: "* ]] || bad+=("$n: does not name c$n: $out")
			case "$out" in
			*"Address family not supported"* | *"Success"*) bad+=("$n: wrong cause: $out") ;;
			esac
		fi
		[ -z "$(rt list -q)" ] || bad+=("$n: left in list: $(rt list -q)")
		sleep 0.1
		left=$(cl_leftovers)
		[ -z "$left" ] || bad+=("$n: processes left: $left")
	done
	[ "${#bad[@]}" -eq 0 ] || fail "$(printf '%s\n' "${bad[@]}")"
}

@test "emfile-monitor-files: under a low soft limit of open files the monitor takes the hard limit and still records the workspace's files" {
	local n p mon ok=0 bad=()
	for n in $(seq 26 2 40); do
		(ulimit -Sn "$n" && AGENTRT_CL_MARK=$CL_MARK timeout --kill-after=5 30 \
			"$AGENTRT" --root "$TEST_ROOT" --profile agent run -d --bundle "$BUNDLE" c$n \
			</dev/null >/dev/null 2>"$BUNDLE/err") || continue # (the first test's business)
		ok=$((ok + 1))
		mon=
		for p in $(cl_leftovers); do
			[ "$(cat "/proc/$p/comm" 2>/dev/null)" = agentrt-monitor ] && mon=$p
		done
		if [ -z "$mon" ]; then
			bad+=("$n: no monitor found")
		# soft = hard in the monitor: the caller's soft limit is not the audit's
		elif ! awk '/^Max open files/ { exit $4 != $5 }' "/proc/$mon/limits"; then
			bad+=("$n: monitor's $(grep 'open files' "/proc/$mon/limits")")
		fi
		! grep -q "no file records" "$BUNDLE/err" || bad+=("$n: $(<"$BUNDLE/err")")
		rt delete --force c$n >/dev/null 2>&1 || bad+=("$n: delete --force failed")
	done
	[ "$ok" -gt 0 ] || fail "no create succeeded under limits 26..40"
	[ "${#bad[@]}" -eq 0 ] || fail "$(printf '%s\n' "${bad[@]}")"
}
