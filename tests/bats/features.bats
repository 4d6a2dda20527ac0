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
