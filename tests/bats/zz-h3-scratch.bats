load /tmp/h3/tests/bats/helpers
load /tmp/h3/tests/bats/syscall-trail
eval "$(sed -n '/^setup() {/,/^}/p;/^teardown() {/,/^}/p;/^ws_count/,/^}/p;/^bind_workspace/,/^}/p;/^wait_ready/,/^}/p;/^file_ops/,/^}/p' /tmp/h3/tests/bats/audit-evidence.bats)"

@test "scratch ops" {
	bind_workspace
	for f in x1 x2 h1 t1 t2 f1 u1 o1 l1 s1; do echo "content of $f" >"$HOSTDIR/$f"; done
	set_cmd 'cd /workspace; sleep 0.5; rm h1; ln -s /etc/passwd h1; touch /workspace/ready; sleep 30'
	run_detached "$ID"
	[ "$status" -eq 0 ] || fail "run: $output"
	wait_ready
	rt kill "$ID" KILL
	wait_for_status "$ID" stopped 20
	ra workspace "$ID" diff >&3
	ra delete "$ID"
	ra audit --format json --kind file "$ID" | jq -c '{path, ops, from, to}' >&3
}
