#!/usr/bin/env bats
# apparmor.bats - process.apparmorProfile on a host with AppArmor enabled: the
# VM lane (tests/vm/run-agentrt-v2.sh boots one VM, whose kernel has AppArmor,
# and runs this file in it; apparmor_parser comes from Debian's `apparmor`,
# contrib/install-deps.sh --vm).  A test profile is loaded; the container's
# init and an exec'd process are seen in it from outside
# (/proc/PID/attr/current), the profile's deny rule refuses a file the same
# process reads without the profile, and a profile that is not loaded is
# refused at create with nothing left behind.

load ../bats/helpers

aa_enabled() {
	[ "$(cat /sys/module/apparmor/parameters/enabled 2>/dev/null)" = Y ]
}

setup_file() {
	aa_enabled || skip "AppArmor is not enabled (run it through tests/vm/run-agentrt-v2.sh)"
	command -v apparmor_parser >/dev/null || skip "no apparmor_parser (contrib/install-deps.sh --vm)"
	if [ ! -e /sys/kernel/security/apparmor/profiles ]; then
		mount -t securityfs securityfs /sys/kernel/security || return 1
	fi
	export AA=agentrt-test-$BATS_ROOT_PID AA2=agentrt-test2-$BATS_ROOT_PID
	local p
	for p in "$AA" "$AA2"; do
		cat >"$BATS_FILE_TMPDIR/$p" <<-EOF
			profile $p flags=(attach_disconnected,mediate_deleted) {
			  file,
			  capability,
			  network,
			  signal,
			  ptrace,
			  unix,
			  deny /etc/agentrt-denied r,
			}
		EOF
		apparmor_parser -r -K "$BATS_FILE_TMPDIR/$p" || return 1
	done
	grep -q "^$AA (enforce)" /sys/kernel/security/apparmor/profiles || return 1
}

teardown_file() {
	local p
	for p in "${AA:-}" "${AA2:-}"; do
		[ -n "$p" ] && [ -e "$BATS_FILE_TMPDIR/$p" ] &&
			apparmor_parser -R "$BATS_FILE_TMPDIR/$p" 2>/dev/null
	done
	rm -rf --one-file-system "$TEST_ROOT"
	rmdir "/sys/fs/cgroup/$CG_PARENT" 2>/dev/null || true
}

setup() {
	setup_bundle
	echo secret >"$ROOTFS/etc/agentrt-denied"
}

# attr_is PID WANT: /proc/PID/attr/current, read from outside, is WANT
attr_is() {
	local v=
	read -r v <"/proc/$1/attr/current" || true
	[ "$v" = "$2" ] || fail "/proc/$1/attr/current is \`$v', expected \`$2'"
}

@test "apparmor: run confines the process; the profile's deny rule is enforced" {
	set_args sh -c 'cat /proc/self/attr/current; cat /etc/agentrt-denied; echo "cat=$?"'
	run rt run --bundle "$BUNDLE" plain$$
	[ "$status" -eq 0 ] || fail "$output"
	assert_output_contains "unconfined"
	assert_output_contains "secret"
	update_config ".process.apparmorProfile = \"$AA\""
	run rt run --bundle "$BUNDLE" conf$$
	[ "$status" -eq 0 ] || fail "$output"
	assert_output_contains "$AA (enforce)"
	assert_output_contains "Permission denied"
	assert_output_contains "cat=1"
	! grep -q secret <<<"$output" || fail "the denied file was read: $output"
}

@test "apparmor: the init and exec'd processes are in the profile, seen from outside" {
	update_config ".process.apparmorProfile = \"$AA\" | .process.args = [\"sleep\", \"300\"]"
	run_detached c$$
	[ "$status" -eq 0 ] || fail "$output"
	attr_is "$(container_pid c$$)" "$AA (enforce)"
	# an exec without a profile of its own gets the container's
	rt_bg exec -d --pid-file "$BUNDLE/e1.pid" c$$ sleep 300
	[ "$status" -eq 0 ] || fail "$output"
	attr_is "$(cat "$BUNDLE/e1.pid")" "$AA (enforce)"
	# --apparmor names another one
	rt_bg exec -d --apparmor "$AA2" --pid-file "$BUNDLE/e2.pid" c$$ sleep 300
	[ "$status" -eq 0 ] || fail "$output"
	attr_is "$(cat "$BUNDLE/e2.pid")" "$AA2 (enforce)"
	# and the exec'd process is denied what the profile denies
	run rt exec c$$ cat /etc/agentrt-denied
	[ "$status" -ne 0 ] || fail "exec read the denied file: $output"
	assert_output_contains "Permission denied"
}

@test "apparmor: a profile that is not loaded is refused at create; nothing is left" {
	update_config '.process.apparmorProfile = "agentrt-not-loaded"'
	set_args true
	run rt run --bundle "$BUNDLE" nl$$
	assert_clean_failure
	assert_output_contains "process.apparmorProfile \`agentrt-not-loaded\`: no such AppArmor profile is loaded"
	[ "$(wc -l <<<"$output")" -eq 1 ] || fail "more than one line: $output"
	[ ! -e "$TEST_ROOT/nl$$" ] || fail "state left behind"
	run rt exec nl$$ true
	[ "$status" -ne 0 ]
}

@test "apparmor: exec with a profile that is not loaded fails and runs nothing" {
	set_args sleep 300
	run_detached x$$
	[ "$status" -eq 0 ] || fail "$output"
	run rt exec --apparmor agentrt-not-loaded x$$ sh -c 'echo ran > /exec-ran'
	assert_clean_failure
	assert_output_contains "no such AppArmor profile is loaded"
	[ ! -e "$ROOTFS/exec-ran" ] || fail "the exec'd process ran"
}

@test "apparmor: a profile's default AppArmor profile confines the container when the engine set none" {
	agentrt_only "agent profiles"
	printf '{"name": "aa", "extends": "oci", "apparmorProfile": "%s"}\n' "$AA" >"$BUNDLE/prof.json"
	set_args sleep 300
	run_detached d$$
	[ "$status" -eq 0 ] || fail "$output"
	attr_is "$(container_pid d$$)" unconfined
	rt_bg --profile "$BUNDLE/prof.json" run -d --bundle "$BUNDLE" d2$$
	[ "$status" -eq 0 ] || fail "$output"
	attr_is "$(container_pid d2$$)" "$AA (enforce)"
	run rt --profile "$BUNDLE/prof.json" explain d2$$
	assert_output_contains "process.apparmorProfile"
	# an engine's own profile wins over the default
	update_config ".process.apparmorProfile = \"$AA2\""
	rt_bg --profile "$BUNDLE/prof.json" run -d --bundle "$BUNDLE" d3$$
	[ "$status" -eq 0 ] || fail "$output"
	attr_is "$(container_pid d3$$)" "$AA2 (enforce)"
}
