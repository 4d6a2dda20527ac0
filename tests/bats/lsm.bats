#!/usr/bin/env bats
# lsm.bats - process.apparmorProfile, process.selinuxLabel and linux.mountLabel
# on a host WITHOUT AppArmor or SELinux (the build machines: no
# /sys/module/apparmor, no selinuxfs).  There runc 1.1.5 fails such a config
# (`write /proc/self/attr/exec: invalid argument` for the profile, "selinux
# label is specified in config, but selinux is disabled" for the label, EINVAL
# mounting /dev with context= for the mount label); agentrt fails it too, at
# create, before anything exists, with one line naming the field.  Runs
# against runc as well (AGENTRT=runc): the outcome is the same, the texts are
# agentrt's.  Where AppArmor is enabled, tests/vm/lsm.bats covers it.

load helpers

no_apparmor() {
	if [ "$(cat /sys/module/apparmor/parameters/enabled 2>/dev/null)" = Y ]; then
		skip "AppArmor is enabled here (tests/vm/lsm.bats covers that host)"
	fi
}

no_selinux() {
	[ ! -e /sys/fs/selinux/enforce ] || skip "SELinux is enabled here"
}

# Nothing of container $1 exists after a refused create.
assert_nothing_left() {
	run rt state "$1"
	[ "$status" -ne 0 ] || fail "state of refused container $1 succeeded: $output"
	[ ! -e "$TEST_ROOT/$1" ] || fail "state directory $TEST_ROOT/$1 left behind"
	is_agentrt || return 0 # runc 1.1.5 leaves the cgroup of a run that failed in its init
	for ctrl in /sys/fs/cgroup/*/ /sys/fs/cgroup/; do
		[ -z "$(ls -A "$ctrl$CG_PARENT" 2>/dev/null)" ] || fail "cgroup left in $ctrl$CG_PARENT"
	done
}

@test "features: apparmor and selinux support is reported" {
	agentrt_only "runc reports the same, checked here for agentrt"
	run "$AGENTRT" features
	[ "$status" -eq 0 ] || fail "$output"
	jq -e '.linux.apparmor.enabled == true and .linux.selinux.enabled == true' \
		<<<"$output" >/dev/null || fail "apparmor/selinux not enabled in features: $output"
}

@test "apparmorProfile without AppArmor on the host: create fails as runc's does, nothing left" {
	no_apparmor
	update_config '.process.apparmorProfile = "agentrt-test-profile"'
	set_args true
	run rt run --bundle "$BUNDLE" aa$$
	assert_clean_failure
	if is_agentrt; then
		assert_output_contains "process.apparmorProfile \`agentrt-test-profile\`: AppArmor is not enabled"
		[ "$(wc -l <<<"$output")" -eq 1 ] || fail "more than one line: $output"
	fi
	assert_nothing_left aa$$
}

@test "an empty apparmorProfile is no profile: the container runs unconfined" {
	update_config '.process.apparmorProfile = ""'
	set_args echo ran
	run rt run --bundle "$BUNDLE" ab$$
	[ "$status" -eq 0 ] || fail "$output"
	assert_output_contains ran
}

@test "exec --apparmor and an exec process.json with a profile fail without AppArmor; the container lives on" {
	no_apparmor
	set_args sleep 300
	run_detached ax$$
	[ "$status" -eq 0 ] || fail "$output"
	run rt exec --apparmor agentrt-test-profile ax$$ sh -c 'echo ran > /exec-ran'
	assert_clean_failure
	is_agentrt && assert_output_contains "AppArmor is not enabled"
	jq '.process | .args = ["sh", "-c", "echo ran > /exec-ran"] | .apparmorProfile = "agentrt-test-profile"' \
		"$BUNDLE/config.json" >"$BUNDLE/proc.json"
	run rt exec --process "$BUNDLE/proc.json" ax$$
	assert_clean_failure
	[ ! -e "$ROOTFS/exec-ran" ] || fail "the exec'd process ran"
	[ "$(container_status ax$$)" = running ] || fail "container not running"
	run rt exec ax$$ true
	[ "$status" -eq 0 ] || fail "a plain exec fails afterwards: $output"
}

@test "selinuxLabel without SELinux on the host: refused at create as runc refuses it" {
	no_selinux
	update_config '.process.selinuxLabel = "system_u:system_r:container_t:s0:c1,c2"'
	set_args true
	run rt run --bundle "$BUNDLE" se$$
	assert_clean_failure
	is_agentrt && assert_output_contains "process.selinuxLabel"
	is_agentrt && assert_output_contains "SELinux is not enabled"
	assert_nothing_left se$$
}

@test "mountLabel without SELinux on the host: refused at create (runc fails mounting /dev)" {
	no_selinux
	update_config '.linux.mountLabel = "system_u:object_r:container_file_t:s0:c1,c2"'
	set_args true
	run rt run --bundle "$BUNDLE" ml$$
	assert_clean_failure
	is_agentrt && assert_output_contains "linux.mountLabel"
	assert_nothing_left ml$$
}

@test "a profile's default apparmorProfile is skipped where the host has no AppArmor" {
	agentrt_only "agent profiles"
	no_apparmor
	cat >"$BUNDLE/prof.json" <<-'EOF'
		{"name": "aa-test", "extends": "oci", "apparmorProfile": "agentrt-default"}
	EOF
	run "$AGENTRT" profile show "$BUNDLE/prof.json"
	[ "$status" -eq 0 ] || fail "$output"
	jq -e '.apparmorProfile == "agentrt-default"' <<<"$output" >/dev/null || fail "not shown: $output"
	set_args echo ran
	run rt --profile "$BUNDLE/prof.json" run --bundle "$BUNDLE" ad$$
	[ "$status" -eq 0 ] || fail "$output"
	assert_output_contains ran
}
