#!/usr/bin/env bats
# features.bats - `features` prints the OCI features document.

load helpers

setup() { :; }
teardown() { :; }

@test "features prints JSON with OCI versions, hooks and mount options" {
	run "$AGENTRT" features
	[ "$status" -eq 0 ] || fail "$output"
	jq -e '.ociVersionMin and .ociVersionMax' <<<"$output" >/dev/null
	for h in prestart createRuntime createContainer startContainer poststart poststop; do
		jq -e --arg h "$h" '.hooks | index($h) != null' <<<"$output" >/dev/null || fail "hook $h missing"
	done
	for o in ro nosuid nodev noexec bind rbind; do
		jq -e --arg o "$o" '.mountOptions | index($o) != null' <<<"$output" >/dev/null || fail "mount option $o missing"
	done
}

# features-tmpcopyup: runc's features lists "tmpcopyup", which agentrt takes too (Docker's --tmpfs
# sends it) but left out of its list, so a caller going by features would not send it.
@test "features-tmpcopyup: mountOptions lists tmpcopyup, and a tmpfs with it is filled from the image" {
	run "$AGENTRT" features
	[ "$status" -eq 0 ] || fail "$output"
	jq -e '.mountOptions | index("tmpcopyup") != null' <<<"$output" >/dev/null || fail "no tmpcopyup: $output"
	setup_bundle
	update_config '.mounts += [{"destination": "/etc", "type": "tmpfs", "source": "tmpfs", "options": ["tmpcopyup"]}]'
	set_cmd 'stat -f -c %T /etc; cat /etc/hostname'
	run rt run --bundle "$BUNDLE" tcu
	teardown_bundle
	[ "$status" -eq 0 ] || fail "run: $output"
	[ "${lines[0]}" = tmpfs ] && [ "${lines[1]}" = "$(cat "$TEST_ROOTFS/etc/hostname")" ] || fail "$output"
}

@test "features has a linux object with namespaces and capabilities" {
	run "$AGENTRT" features
	[ "$status" -eq 0 ]
	for ns in cgroup ipc mount network pid user uts; do
		jq -e --arg n "$ns" '.linux.namespaces | index($n) != null' <<<"$output" >/dev/null || fail "namespace $ns missing"
	done
	for c in CAP_CHOWN CAP_SYS_ADMIN CAP_NET_RAW CAP_KILL; do
		jq -e --arg c "$c" '.linux.capabilities | index($c) != null' <<<"$output" >/dev/null || fail "capability $c missing"
	done
}

@test "features lists the time namespace" {
	agentrt_only "runc 1.1 has no time namespace"
	run "$AGENTRT" features
	jq -e '.linux.namespaces | index("time") != null' <<<"$output" >/dev/null
}

@test "features describes seccomp: actions, operators, architectures" {
	run "$AGENTRT" features
	jq -e '.linux.seccomp.enabled == true' <<<"$output" >/dev/null
	for a in SCMP_ACT_ALLOW SCMP_ACT_ERRNO SCMP_ACT_KILL_PROCESS; do
		jq -e --arg a "$a" '.linux.seccomp.actions | index($a) != null' <<<"$output" >/dev/null || fail "action $a missing"
	done
	jq -e '.linux.seccomp.operators | index("SCMP_CMP_EQ") != null' <<<"$output" >/dev/null
	jq -e '.linux.seccomp.archs | index("SCMP_ARCH_X86_64") != null' <<<"$output" >/dev/null
}

@test "features lists seccomp flags" {
	agentrt_only "runc 1.1.5 reports no known seccomp flags"
	run "$AGENTRT" features
	jq -e '.linux.seccomp.knownFlags | index("SECCOMP_FILTER_FLAG_TSYNC") != null' <<<"$output" >/dev/null
}

# features-libseccomp-version: runc and crun name the libseccomp they were built with in the
# features document's annotations (io.github.seccomp.libseccomp.version); agentrt gave only its
# own version and commit.  The value is the library's own (the static build's archive is
# Debian's libseccomp-dev, the same version as the shared library dpkg lists).
@test "features-libseccomp-version: the annotations name libseccomp's version" {
	run "$AGENTRT" features
	[ "$status" -eq 0 ] || fail "$output"
	v=$(jq -r '.annotations["io.github.seccomp.libseccomp.version"] // "none"' <<<"$output")
	[[ "$v" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || fail "annotation: $v"
	deb=$(dpkg-query -W -f '${Version}' libseccomp-dev 2>/dev/null || true)
	[ -z "$deb" ] || [[ "$deb" == "$v"* ]] || fail "libseccomp-dev is $deb, features says $v"
}
