#!/usr/bin/env bats
# secrets.bats - the profile's "secrets" (profile/secrets.c, monitor/secrets.c): the container
# sees a random placeholder per container in NAME, the value is read on the host by the
# monitor only and is nowhere else: not in config.json, the state dir, the trail, the log,
# any process's environment or any file inside.  Every check looks from outside (the state
# dir, /proc/PID/environ of every process of the container, the trail's files) and from
# inside (env, a grep of every file the container can read).

load helpers

SEC_VALUE=sk-live-7f3a9c1e5b2d4f6a8c0e1b3d5f7a9c2e4b6d8f0a
# Inside: every file but /proc, /sys and /dev (devices: /dev/zero never ends), then every
# process's environ and cmdline.  The value is looked for as two halves (fixed strings: busybox's
# regex grep takes minutes on binaries): files with the first half, then of those the ones with
# the whole value (a shell pattern: no command line ever holds the value whole, so the search's
# own processes, and the trail's records of them, are no hits).
SEARCH="h1=sk-live-7f3a9c1e5b2d4f6a8; h2=c0e1b3d5f7a9c2e4b6d8f0a
	{ for d in /*; do case \$d in /proc|/sys|/dev) ;; *) grep -rlF -- \"\$h1\" \"\$d\" 2>/dev/null ;; esac; done
	  grep -lF -- \"\$h1\" /proc/[0-9]*/environ /proc/[0-9]*/cmdline 2>/dev/null
	  grep -rlF -- \"\$h1\" /dev/shm /dev/mqueue 2>/dev/null; } |
	while read -r f; do case \"\$(cat \"\$f\" 2>/dev/null)\" in *\"\$h1\$h2\"*) echo \"\$f\" ;; esac; done; echo done"

setup_file() {
	[ "$(id -u)" -eq 0 ] || skip "needs root"
	ensure_rootfs
	export SEC_DIR
	SEC_DIR=$(mktemp -d /tmp/agentrt-secrets-bats.XXXXXX)
	chmod 0700 "$SEC_DIR"
	printf '%s\n' "$SEC_VALUE" >"$SEC_DIR/api"
	printf 'ghp_second_value_0123456789\n' >"$SEC_DIR/gh"
	chmod 0600 "$SEC_DIR/api" "$SEC_DIR/gh"
	cat >"$SEC_DIR/p.json" <<-EOF
		{"name": "sec", "extends": "agent",
		 "egress": {"allow": ["api.example.test", "*.example.org"]},
		 "secrets": [
		   {"name": "API_TOKEN", "file": "$SEC_DIR/api", "hosts": ["api.example.test"],
		    "format": "Bearer %s"},
		   {"name": "GH_TOKEN", "file": "$SEC_DIR/gh", "hosts": ["*.example.org"],
		    "header": "X-Api-Key"}]}
	EOF
}

teardown_file() {
	[ -n "${SEC_DIR:-}" ] && rm -rf "$SEC_DIR"
	local left=
	if [ -d "$TEST_ROOT" ]; then
		left=$(root_leftovers "$TEST_ROOT")
		rm -rf --one-file-system "$TEST_ROOT"
	fi
	remove_data_dir
	for ctrl in /sys/fs/cgroup/*/ /sys/fs/cgroup/; do
		[ -d "$ctrl$CG_PARENT" ] && rmdir "$ctrl$CG_PARENT"/*/ "$ctrl$CG_PARENT" 2>/dev/null
	done
	[ -z "$left" ] || fail "left in $TEST_ROOT: $left"
}

setup() {
	setup_bundle
	ID=sec-$BATS_TEST_NUMBER
	update_config '.process.args = ["sleep", "600"] |
		.linux.namespaces |= (map(select(.type != "network")) + [{"type": "network"}])'
}

teardown() {
	teardown_bundle
}

sec_run() { # [PROFILE] [create|run]: the container $ID, detached
	local profile=${1:-$SEC_DIR/p.json} verb=${2:-run}
	status=0
	if [ "$verb" = run ]; then
		timeout --kill-after=5 "$RT_TIMEOUT" "$AGENTRT" --root "$TEST_ROOT" --profile "$profile" \
			run -d --bundle "$BUNDLE" "$ID" </dev/null >"$BUNDLE/$ID.out" 2>"$BUNDLE/$ID.err" || status=$?
	else
		timeout --kill-after=5 "$RT_TIMEOUT" "$AGENTRT" --root "$TEST_ROOT" --profile "$profile" \
			create --bundle "$BUNDLE" "$ID" </dev/null >"$BUNDLE/$ID.out" 2>"$BUNDLE/$ID.err" || status=$?
	fi
	output=$(cat "$BUNDLE/$ID.err")
}

# every byte of the state dir, the trail and the data dir's files for $ID, and the log
assert_value_nowhere_on_host() {
	local v=$1 hits
	hits=$(grep -rlF -- "$v" "$TEST_ROOT" "$AGENTRT_DATA_DIR" "$BUNDLE/config.json" \
		"$BUNDLE/$ID.out" "$BUNDLE/$ID.err" 2>/dev/null || true)
	[ -z "$hits" ] || fail "the value is in: $hits"
}

# every process of the container: its environment, from the host's /proc
assert_value_not_in_environ() {
	local v=$1 pid n=0
	for pid in $(rt ps --format json "$ID" 2>/dev/null | jq -r ".[]"); do
		n=$((n + 1))
		! grep -qaF -- "$v" "/proc/$pid/environ" || fail "the value is in /proc/$pid/environ"
	done
	[ "$n" -gt 0 ] || fail "no process listed by ps"
}

@test "secrets: the process gets a random placeholder, not the value; a second container another one" {
	sec_run
	[ "$status" -eq 0 ] || fail "run: $output"
	run rt exec "$ID" sh -c 'echo "$API_TOKEN"; echo "$GH_TOKEN"'
	[ "$status" -eq 0 ] || fail "$output"
	ph1=$(sed -n 1p <<<"$output") gh1=$(sed -n 2p <<<"$output")
	[[ "$ph1" =~ ^agentrt-secret-[0-9a-f]{32}$ ]] || fail "API_TOKEN=$ph1"
	[[ "$gh1" =~ ^agentrt-secret-[0-9a-f]{32}$ ]] || fail "GH_TOKEN=$gh1"
	[ "$ph1" != "$gh1" ]
	# the init's own environment (from the host), the same placeholder
	pid=$(container_pid "$ID")
	tr '\0' '\n' <"/proc/$pid/environ" | grep -qx "API_TOKEN=$ph1" || fail "init env: $(tr '\0' ' ' <"/proc/$pid/environ")"
	# a second container of the same bundle and profile: other placeholders
	first=$ID
	ID=$first-b
	sec_run
	[ "$status" -eq 0 ] || fail "run: $output"
	run rt exec "$ID" sh -c 'echo "$API_TOKEN"'
	[[ "$output" =~ ^agentrt-secret-[0-9a-f]{32}$ ]] && [ "$output" != "$ph1" ] || fail "second: $output vs $ph1"
	rt delete --force "$ID"
	ID=$first
}

@test "secrets: the value is nowhere: state dir, trail, data dir, config.json, the log, every environ, every file inside" {
	sec_run
	[ "$status" -eq 0 ] || fail "run: $output"
	# a second process, so that there is more than the init to look at
	rt exec -d "$ID" sleep 300
	assert_value_nowhere_on_host "$SEC_VALUE"
	assert_value_nowhere_on_host ghp_second_value_0123456789
	assert_value_not_in_environ "$SEC_VALUE"
	# inside: the environment, and every file the container can read (/proc of its own
	# processes included: environ, cmdline, the monitor is not visible there)
	run rt exec "$ID" env
	[[ "$output" == *"API_TOKEN=agentrt-secret-"* ]] || fail "$output"
	[[ "$output" != *"$SEC_VALUE"* ]] || fail "env: $output"
	run rt exec "$ID" sh -c "$SEARCH"
	[ "$status" -eq 0 ] || fail "$output"
	[ "$output" = done ] || fail "found inside: $output"
	# the trail holds the secret's name and host, never its value
	run rt audit "$ID"
	[ "$status" -eq 0 ] || fail "$output"
	[[ "$output" != *"$SEC_VALUE"* ]] || fail "the value is in the trail: $(grep -F -- "$SEC_VALUE" <<<"$output")"
	# the monitor holds it, in its memory only: not in its environment or command line
	mpid=$(cut -d' ' -f1 "$TEST_ROOT/$ID/monitor.pid")
	! grep -qaF -- "$SEC_VALUE" "/proc/$mpid/environ" "/proc/$mpid/cmdline" || fail "monitor env"
}

@test "secrets: the control: the grep above finds a value that is in a file inside" {
	printf '%s\n' "$SEC_VALUE" >"$ROOTFS/planted"
	sec_run
	[ "$status" -eq 0 ] || fail "run: $output"
	run rt exec "$ID" sh -c "$SEARCH"
	[[ "$output" == */planted* ]] || fail "the search cannot find a planted value: $output"
	run grep -rlF -- "$SEC_VALUE" "$BUNDLE/config.json" "$ROOTFS/planted"
	[[ "$output" == *planted* ]]
}

@test "secrets: an engine's own value in the variable is replaced by the placeholder" {
	update_config ".process.env += [\"API_TOKEN=$SEC_VALUE\"]"
	sec_run
	[ "$status" -eq 0 ] || fail "run: $output"
	run rt exec "$ID" sh -c 'echo "$API_TOKEN"'
	[[ "$output" =~ ^agentrt-secret-[0-9a-f]{32}$ ]] || fail "$output"
	pid=$(container_pid "$ID")
	! grep -qaF -- "$SEC_VALUE" "/proc/$pid/environ" || fail "the engine's value reached the init"
	! grep -qF -- "$SEC_VALUE" "$TEST_ROOT/$ID/config.json" || fail "the engine's value is in the state dir"
}

@test "secrets: explain names each secret, its header and hosts, never the value" {
	sec_run
	[ "$status" -eq 0 ] || fail "run: $output"
	run rt explain "$ID"
	[ "$status" -eq 0 ] || fail "$output"
	assert_output_contains "API_TOKEN holds a placeholder"
	assert_output_contains "Authorization header of HTTPS requests to api.example.test only"
	assert_output_contains "X-Api-Key header of HTTPS requests to *.example.org only"
	[[ "$output" != *"$SEC_VALUE"* ]]
	run rt profile show "$SEC_DIR/p.json"
	[ "$status" -eq 0 ] || fail "$output"
	assert_output_contains '"format": "Bearer %s"'
	[[ "$output" != *"$SEC_VALUE"* ]]
}

@test "secrets: a missing, empty, multi-line or oversized file fails create naming the secret and file, leaving nothing" {
	for bad in missing empty multiline big; do
		case $bad in
		missing) rm -f "$SEC_DIR/bad" ;;
		empty) : >"$SEC_DIR/bad" ;;
		multiline) printf 'abc\r\nX-Evil: 1\n' >"$SEC_DIR/bad" ;;
		big) head -c 20000 /dev/zero | tr '\0' a >"$SEC_DIR/bad" ;;
		esac
		jq --arg f "$SEC_DIR/bad" '.secrets[0].file = $f' "$SEC_DIR/p.json" >"$SEC_DIR/bad.json"
		before=$(pgrep -x agentrt-monitor | sort | tr '\n' ' ')
		sec_run "$SEC_DIR/bad.json" create
		assert_clean_failure
		[ "$(grep -c . <<<"$output")" -eq 1 ] || fail "$bad: not one line: $output"
		assert_output_contains "create \`$ID\`"
		assert_output_contains "secret API_TOKEN: $SEC_DIR/bad"
		case $bad in
		missing) assert_output_contains "No such file" ;;
		empty) assert_output_contains "empty" ;;
		multiline) assert_output_contains "control character or line break" ;;
		big) assert_output_contains "larger than 16384 bytes" ;;
		esac
		[ ! -e "$TEST_ROOT/$ID" ] || fail "$bad: state dir left"
		# (other suites may run monitors of their own meanwhile: ours hold our --root)
		for p in $(pgrep -x agentrt-monitor); do
			[[ " $before " == *" $p "* ]] && continue
			! ls -l "/proc/$p/fd/" 2>/dev/null | grep -qF "$TEST_ROOT" || fail "$bad: monitor $p left"
		done
	done
}

@test "secrets: run.agentrt.secrets selects among the profile's secrets, never names a file" {
	update_config '.annotations["run.agentrt.secrets"] = "GH_TOKEN"'
	sec_run
	[ "$status" -eq 0 ] || fail "run: $output"
	run rt exec "$ID" sh -c 'echo "A=${API_TOKEN:-unset} G=$GH_TOKEN"'
	[[ "$output" =~ ^A=unset\ G=agentrt-secret-[0-9a-f]{32}$ ]] || fail "$output"
	rt delete --force "$ID"
	update_config '.annotations["run.agentrt.secrets"] = "none"'
	sec_run
	[ "$status" -eq 0 ] || fail "run: $output"
	run rt exec "$ID" sh -c 'echo "A=${API_TOKEN:-unset} G=${GH_TOKEN:-unset}"'
	[ "$output" = "A=unset G=unset" ] || fail "$output"
	rt delete --force "$ID"
	for v in OTHER /etc/shadow "API_TOKEN,../x" ; do
		update_config ".annotations[\"run.agentrt.secrets\"] = \"$v\""
		sec_run "$SEC_DIR/p.json" create
		assert_clean_failure
		assert_output_contains "annotation run.agentrt.secrets: the profile has no secret"
		[ ! -e "$TEST_ROOT/$ID" ] || fail "state dir left"
	done
}

@test "secrets: profile check refuses bad entries with one line naming the field" {
	local cases=(
		'.secrets[0].name = "1BAD"|secrets[0].name: `1BAD` is not an environment variable name'
		'.secrets[1].name = "API_TOKEN"|secrets[1].name: `API_TOKEN` is also secrets[0]'
		'.secrets[0].file = "rel/path"|secrets[0].file: `rel/path` is not a normalised absolute path'
		'.secrets[0].file = "/a/../b"|secrets[0].file: `/a/../b` is not a normalised absolute path'
		'.secrets[0].hosts = []|secrets[0].hosts: needs at least one host'
		'.secrets[0].hosts = ["192.0.2.1"]|secrets[0].hosts[0]: `192.0.2.1` is not a host name'
		'.secrets[0].hosts = ["a.test:443"]|secrets[0].hosts[0]: `a.test:443` is not a host name'
		'.secrets[0].hosts = ["bad host"]|secrets[0].hosts[0]:'
		'.secrets[0].header = "Host"|secrets[0].header: `Host` is a header the proxy manages itself'
		'.secrets[0].header = "Transfer-Encoding"|secrets[0].header: `Transfer-Encoding` is a header the proxy manages itself'
		'.secrets[0].header = "X Bad"|secrets[0].header: `X Bad` is not an HTTP header name'
		'.secrets[0].format = "Bearer"|secrets[0].format: needs exactly one %s'
		'.secrets[0].format = "%s %s"|secrets[0].format:'
		'.secrets[0].format = "%d"|secrets[0].format:'
		'.secrets[0].format = "a\r\nX: %s"|secrets[0].format:'
		'.secrets[0].extra = 1|secrets[0].extra: unknown field'
		'.secrets[0] = "x"|secrets[0]: expected an object'
		'del(.secrets[0].file)|secrets[0]: needs "name", "file" and "hosts"'
		'.secrets = {}|secrets: expected an array'
		'.egress.default = "off"|secrets[0]: secrets need an egress policy'
		'.egress.tls = {"upstreamCA": "ca.pem"}|egress.tls.upstreamCA: `ca.pem` is not a normalised absolute path'
	)
	for c in "${cases[@]}"; do
		jq "${c%%|*}" "$SEC_DIR/p.json" >"$SEC_DIR/c.json" || fail "jq ${c%%|*}"
		run rt profile check "$SEC_DIR/c.json"
		[ "$status" -ne 0 ] || fail "accepted: ${c%%|*}"
		[ "$(grep -c . <<<"$output")" -eq 1 ] || fail "not one line: $output"
		[[ "$output" == *"${c#*|}"* ]] || fail "${c%%|*}: want \`${c#*|}\`: $output"
	done
	# the control: the profile itself, and a CA file, are accepted
	jq '.egress.tls = {"upstreamCA": "/etc/ssl/test-ca.pem"}' "$SEC_DIR/p.json" >"$SEC_DIR/c.json"
	run rt profile check "$SEC_DIR/c.json"
	[ "$status" -eq 0 ] || fail "$output"
}

@test "secrets: exec --process (an engine's own env) gets the placeholder, never an engine value" {
	sec_run
	[ "$status" -eq 0 ] || fail "run: $output"
	ph=$(rt exec "$ID" sh -c 'echo "$API_TOKEN"')
	cat >"$BUNDLE/process.json" <<-JSON
		{"terminal": false, "user": {"uid": 0, "gid": 0}, "cwd": "/",
		 "args": ["sh", "-c", "echo \$API_TOKEN \$GH_TOKEN \$SSL_CERT_FILE"],
		 "env": ["PATH=/usr/bin:/bin", "API_TOKEN=$SEC_VALUE"]}
	JSON
	run rt exec --process "$BUNDLE/process.json" "$ID"
	[ "$status" -eq 0 ] || fail "$output"
	[[ "$output" == "$ph agentrt-secret-"*" /dev/agentrt-ca-bundle.crt" ]] || fail "got: $output (init's: $ph)"
	[[ "$output" != *"$SEC_VALUE"* ]] || fail "the engine's value reached the process"
}

@test "secrets: proxy-holds-create-lock: delete -f of a created, never started container returns and leaves no proxy" {
	# the proxy was forked with the monitor's descriptors, among them the state
	# directory's, on which create's lock lives: delete -f waited for ever
	sec_run "" create
	[ "$status" -eq 0 ] || fail "create: $output"
	local init ns p proxies=
	init=$(state_field "$ID" .pid)
	ns=$(readlink "/proc/$init/ns/net")
	# ours: the proxies in the container's network namespace
	for p in $(pgrep -x agentrt-proxy); do
		[ "$(readlink "/proc/$p/ns/net" 2>/dev/null)" = "$ns" ] && proxies="$proxies $p"
	done
	[ -n "$proxies" ] || fail "no agentrt-proxy running (the test would not test anything)"
	for p in $proxies; do
		! ls -l "/proc/$p/fd" 2>/dev/null | grep -qF -- "$TEST_ROOT/$ID" ||
			fail "proxy $p holds a descriptor of the state directory"
	done
	status=0
	timeout --kill-after=5 20 "$AGENTRT" --root "$TEST_ROOT" delete -f "$ID" || status=$?
	[ "$status" -eq 0 ] || fail "delete -f: status $status (124: it hung)"
	[ ! -e "$TEST_ROOT/$ID" ]
	for p in $proxies; do
		for _ in $(seq 50); do [ -d "/proc/$p" ] || break; sleep 0.1; done
		[ ! -d "/proc/$p" ] || fail "proxy $p left after delete"
	done
}
