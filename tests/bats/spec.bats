#!/usr/bin/env bats
# spec.bats - `spec` writes a default config.json.

load helpers

@test "spec writes a valid config.json in the current directory" {
	d=$BUNDLE/new
	mkdir "$d"
	cd "$d"
	run "$AGENTRT" spec
	[ "$status" -eq 0 ] || fail "$output"
	jq -e '.ociVersion and .process.args and .root.path and .mounts and .linux.namespaces' config.json >/dev/null
	[ "$(jq -r .root.path config.json)" = rootfs ]
	jq -e '.linux.namespaces | map(.type) | index("mount") != null and index("pid") != null' config.json >/dev/null
}

# runc's spec has a cgroup namespace only on a cgroup v2 host; runc's own tests add one to
# the spec on v1, and a second entry of the same type is an error.
@test "spec: a cgroup namespace only on a cgroup v2 host (as runc's spec)" {
	d=$BUNDLE/new
	mkdir "$d"
	run "$AGENTRT" spec --bundle "$d"
	[ "$status" -eq 0 ] || fail "$output"
	has=$(jq '.linux.namespaces | map(.type) | index("cgroup") != null' "$d/config.json")
	if [ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ]; then
		[ "$has" = true ] || fail "no cgroup namespace on a cgroup v2 host"
	else
		[ "$has" = false ] || fail "a cgroup namespace on a v1 host"
	fi
}

@test "spec --bundle writes into the bundle" {
	d=$BUNDLE/other
	mkdir "$d"
	run "$AGENTRT" spec --bundle "$d"
	[ "$status" -eq 0 ] || fail "$output"
	jq -e .process "$d/config.json" >/dev/null
}

@test "spec refuses to overwrite an existing config.json" {
	d=$BUNDLE/new
	mkdir "$d"
	echo '{"keep": true}' >"$d/config.json"
	run "$AGENTRT" spec --bundle "$d"
	assert_clean_failure
	[ "$(jq -r .keep "$d/config.json")" = true ]
}

@test "spec --rootless adds a user namespace with mappings, no network namespace" {
	d=$BUNDLE/new
	mkdir "$d"
	run "$AGENTRT" spec --rootless --bundle "$d"
	[ "$status" -eq 0 ] || fail "$output"
	jq -e '.linux.namespaces | map(.type) | index("user") != null' "$d/config.json" >/dev/null
	jq -e '.linux.namespaces | map(.type) | index("network") == null' "$d/config.json" >/dev/null
	jq -e '.linux.uidMappings | length > 0' "$d/config.json" >/dev/null
	jq -e '.linux.gidMappings | length > 0' "$d/config.json" >/dev/null
}

@test "spec emits no inheritable capabilities (CVE-2022-29162)" {
	d=$BUNDLE/new
	mkdir "$d"
	"$AGENTRT" spec --bundle "$d"
	jq -e '(.process.capabilities.inheritable // []) | length == 0' "$d/config.json" >/dev/null
}

@test "spec emits no ambient capabilities" {
	agentrt_only "runc's spec lists ambient capabilities"
	d=$BUNDLE/new
	mkdir "$d"
	"$AGENTRT" spec --bundle "$d"
	jq -e '(.process.capabilities.ambient // []) | length == 0' "$d/config.json" >/dev/null
}

@test "the spec config runs the busybox rootfs" {
	d=$BUNDLE/new
	mkdir "$d"
	"$AGENTRT" spec --bundle "$d"
	cp -a "$ROOTFS" "$d/rootfs"
	jq --arg cg "/$CG_PARENT/spec-$$" '.process.terminal = false | .process.args = ["echo", "spec-ok"] |
		.linux.cgroupsPath = $cg' "$d/config.json" >"$d/c.json" && mv "$d/c.json" "$d/config.json"
	run rt run --bundle "$d" c1
	[ "$status" -eq 0 ] || fail "$output"
	[ "$output" = spec-ok ]
}
