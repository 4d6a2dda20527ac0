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

# runc's rootless containers: an unprivileged user runs `spec --rootless`'s bundle with the
# runtime itself, no engine and no user namespace of its own.  The init was born non-dumpable,
# so its /proc/PID/setgroups and uid_map were root's and the user's runtime could not write
# them: "open `/proc/PID/setgroups`: Permission denied" (rootless-run)
@test "spec: rootless-run: an unprivileged user runs a spec --rootless bundle; its created init is not dumpable" {
	requires setpriv
	local d u=4242 pid
	d=$(mktemp -d /tmp/agentrt-rootless-XXXXXX)
	chmod 755 "$d"
	mkdir "$d/b"
	cp -a "$ROOTFS" "$d/b/rootfs"
	chown -R "$u:$u" "$d"
	as_user() {
		setpriv --reuid "$u" --regid "$u" --clear-groups env -i PATH=/usr/bin:/bin HOME="$d" \
			XDG_RUNTIME_DIR="$d/run" "$@"
	}
	as_user "$AGENTRT" spec --rootless --bundle "$d/b" || fail "spec"
	jq '.process.terminal = false | .process.args = ["sh", "-c", "id -u; cat /proc/self/uid_map"]' \
		"$d/b/config.json" >"$d/c.json" && mv "$d/c.json" "$d/b/config.json" && chown "$u" "$d/b/config.json"
	run as_user "$AGENTRT" --root "$d/state" --profile oci run --bundle "$d/b" r1
	echo "# $output" >&3
	[ "$status" -eq 0 ] || { rm -rf "$d"; fail "run: $output"; }
	[ "$(head -1 <<<"$output")" = 0 ] && [[ "$(sed -n 2p <<<"$output" | tr -s ' ')" == " 0 $u 1" ]] ||
		{ rm -rf "$d"; fail "ids: $output"; }
	jq '.process.args = ["sleep", "100"]' "$d/b/config.json" >"$d/c.json" && mv "$d/c.json" "$d/b/config.json" &&
		chown "$u" "$d/b/config.json"
	# (the init keeps create's stdio until its program is done: not bats' pipe)
	as_user "$AGENTRT" --root "$d/state" --profile oci create --bundle "$d/b" r2 </dev/null >/dev/null 2>"$d/err" ||
		{ local e; e=$(cat "$d/err"); rm -rf "$d"; fail "create: $e"; }
	pid=$(as_user "$AGENTRT" --root "$d/state" state r2 | jq -r .pid)
	# non-dumpable again once the maps are written: its /proc files are root's, not the user's
	local owner
	owner=$(stat -c %u "/proc/$pid/mem")
	as_user "$AGENTRT" --root "$d/state" delete --force r2 || { rm -rf "$d"; fail "delete"; }
	local left
	left=$(as_user "$AGENTRT" --root "$d/state" list -q)
	rm -rf "$d"
	# (a zombie of the host's pid 1 at most)
	[ ! -e "/proc/$pid" ] || grep -q '^State:.*Z' "/proc/$pid/status" || fail "the init $pid is still there"
	[ -z "$left" ] || fail "left in list: $left"
	[ "$owner" = 0 ] || fail "the created init's /proc/$pid/mem is uid $owner's"
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
