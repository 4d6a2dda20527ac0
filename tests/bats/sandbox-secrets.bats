#!/usr/bin/env bats
# sandbox-secrets.bats - `agentrt sandbox --secret NAME`: one of the profile's secrets, by name,
# through the egress TLS proxy (monitor/tls_proxy.c), on a fake internet built here:
#   C  where the sandbox is started (192.0.2.2/30); slirp4netns takes its traffic out of here
#   S  192.0.2.1/30 (dnsmasq: api.example.test -> 203.0.113.10, on S's lo), an HTTPS echo
#      server (tests/helpers/https-echo.py) with a test CA made here by openssl
# What the upstream received is read from its log on the host.

load helpers

SEC_VALUE=sk-live-7c2d9e4a1b3f5e7d9c0a2b4d6f8e0a1c

setup_file() {
	[ "$(id -u)" -eq 0 ] || skip "needs root"
	for t in ip nsenter dnsmasq openssl python3 curl slirp4netns; do
		command -v "$t" >/dev/null || skip "needs $t"
	done
	export SS_C=agentrt-ssc-$$ SS_S=agentrt-sss-$$ SS_DIR
	SS_DIR=$(mktemp -d /tmp/agentrt-sbx-secrets.XXXXXX)
	chmod 0755 "$SS_DIR"
	: >"$SS_DIR/pids"
	ip netns add "$SS_C" && ip netns add "$SS_S" || fail "netns"
	ip link add "ssc$$" netns "$SS_C" type veth peer name "sss$$" netns "$SS_S"
	ip -n "$SS_C" addr add 192.0.2.2/30 dev "ssc$$"
	ip -n "$SS_S" addr add 192.0.2.1/30 dev "sss$$"
	ip -n "$SS_S" addr add 203.0.113.10/32 dev lo
	ip -n "$SS_C" link set "ssc$$" up && ip -n "$SS_S" link set "sss$$" up
	ip -n "$SS_C" link set lo up && ip -n "$SS_S" link set lo up
	ip -n "$SS_C" route add default via 192.0.2.1
	(
		cd "$SS_DIR" || exit 1
		openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
			-subj "/CN=agentrt test upstream CA" -keyout ca.key -out ca.pem 2>/dev/null || exit 1
		openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=api.example.test" \
			-keyout api.key -out api.csr 2>/dev/null || exit 1
		echo 'subjectAltName=DNS:api.example.test' >api.ext
		openssl x509 -req -in api.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
			-extfile api.ext -out api.pem 2>/dev/null || exit 1
		chmod 0644 ./*.pem
	) || fail "openssl: test CA"
	ip netns exec "$SS_S" python3 "$REPO_ROOT/tests/helpers/https-echo.py" 203.0.113.10 443 \
		"$SS_DIR/api.pem" "$SS_DIR/api.key" "$SS_DIR/api.log" </dev/null >/dev/null 2>>"$SS_DIR/err" &
	echo $! >>"$SS_DIR/pids"
	ip netns exec "$SS_S" dnsmasq -k --no-resolv --no-hosts --bind-interfaces --listen-address=192.0.2.1 \
		--port=53 --host-record=api.example.test,203.0.113.10 --pid-file= --user=root \
		</dev/null >/dev/null 2>>"$SS_DIR/err" &
	echo $! >>"$SS_DIR/pids"
	for _ in $(seq 50); do
		ip netns exec "$SS_C" curl -s --max-time 2 --cacert "$SS_DIR/ca.pem" \
			--resolve api.example.test:443:203.0.113.10 https://api.example.test/ready >/dev/null 2>&1 && break
		sleep 0.2
	done
	printf '%s\n' "$SEC_VALUE" >"$SS_DIR/api.secret"
	chmod 0600 "$SS_DIR/api.secret"
	cat >"$SS_DIR/p.json" <<-EOF
		{"name": "sbx-secrets", "extends": "agent",
		 "egress": {"tls": {"upstreamCA": "$SS_DIR/ca.pem"}},
		 "secrets": [{"name": "API_TOKEN", "file": "$SS_DIR/api.secret",
		              "hosts": ["api.example.test"]}]}
	EOF
	chmod 0644 "$SS_DIR/p.json"
}

teardown_file() {
	local pid
	if [ -n "${SS_DIR:-}" ] && [ -f "$SS_DIR/pids" ]; then
		for pid in $(cat "$SS_DIR/pids"); do kill "$pid" 2>/dev/null; done
		for pid in $(cat "$SS_DIR/pids"); do
			for _ in $(seq 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
			kill -9 "$pid" 2>/dev/null
		done
	fi
	[ -n "${SS_C:-}" ] && ip netns delete "$SS_C" 2>/dev/null
	[ -n "${SS_S:-}" ] && ip netns delete "$SS_S" 2>/dev/null
	[ -n "${SS_DIR:-}" ] && rm -rf "$SS_DIR"
	rm -rf --one-file-system "$TEST_ROOT-ss"
	remove_data_dir
}

setup() {
	agentrt_only "agentrt sandbox"
	WS=$(mktemp -d /tmp/agentrt-sbx-secrets-ws.XXXXXX)
	: >"$SS_DIR/api.log"
}

teardown() {
	[ -n "${WS:-}" ] && rm -rf --one-file-system "$WS"
	return 0
}

# ss ARGS...: agentrt sandbox as root in C, with the test profile and resolver.
ss() {
	(cd "$WS" && API_TOKEN=host-env-value timeout --kill-after=5 "$RT_TIMEOUT" \
		nsenter --net="/run/netns/$SS_C" "$AGENTRT" --root "$TEST_ROOT-ss" sandbox \
		--profile "${SS_PROFILE:-$SS_DIR/p.json}" --dns 192.0.2.1 "$@")
}

sha() { printf '%s' "$1" | sha256sum | cut -d' ' -f1; }

@test "sandbox --secret: curl's Bearer \$API_TOKEN arrives upstream with the real value (root)" {
	run ss --name sec1 --secret API_TOKEN --allow api.example.test:443 -- sh -c \
		'curl -sS --max-time 10 -H "Authorization: Bearer $API_TOKEN" https://api.example.test/v1/x; echo
		 env | grep -c -- "'"$SEC_VALUE"'" || true; echo "tok=${API_TOKEN%%-*}"'
	[ "$status" -eq 0 ] || fail "sandbox: $output"
	[[ "$output" == *"\"auth_sha256\": \"$(sha "Bearer $SEC_VALUE")\""* ]] || fail "no value upstream: $output"
	grep -qF "Authorization: Bearer $SEC_VALUE" "$SS_DIR/api.log" || fail "log: $(cat "$SS_DIR/api.log")"
	# inside: a placeholder (not the host's API_TOKEN, not the value) in the environment
	[[ "$output" == *$'\n0\n'*"tok=agentrt"* ]] || fail "environment: $output"
	[[ "$output" != *host-env-value* ]] || fail "the host's API_TOKEN went in"
}

@test "sandbox --secret: without it, the placeholder is not there and nothing is substituted" {
	run ss --name sec2 --allow api.example.test:443 -- sh -c \
		'curl -sS --max-time 10 -k -H "Authorization: Bearer x" https://api.example.test/v1/y 2>&1; echo "tok=${API_TOKEN:-unset}"'
	[[ "$output" == *"tok=unset"* ]] || fail "API_TOKEN inside without --secret: $output"
	grep -qF "GET /v1/y" "$SS_DIR/api.log" || fail "the request did not arrive: $output"
	! grep -qF "$SEC_VALUE" "$SS_DIR/api.log" || fail "substituted without --secret"
}

@test "sandbox --secret: an unknown name, a path, and a host not allowed are refused in one line" {
	run ss --name sec3 --secret NOPE --allow api.example.test:443 -- true
	[ "$status" -eq 1 ]
	[[ "$output" == *"--secret \`NOPE\`: the profile"*"has no secret"* ]] || fail "$output"
	[ "$(wc -l <<<"$output")" -eq 1 ] || fail "$output"
	run ss --name sec4 --secret "$SS_DIR/api.secret" --allow api.example.test:443 -- true
	[ "$status" -eq 1 ]
	[[ "$output" == *"has no secret"* ]] || fail "$output"
	# the secret's host is not in the allowlist: refused, egress is not widened
	run ss --name sec5 --secret API_TOKEN --allow other.test:443 -- true
	[ "$status" -eq 1 ]
	[[ "$output" == *"its host \`api.example.test\` is not in the allowlist"* ]] || fail "$output"
	[ ! -d "$TEST_ROOT-ss/sec3" ] && [ ! -d "$TEST_ROOT-ss/sec5" ]
	[[ "$output" != *"$SEC_VALUE"* ]]
}

@test "sandbox --secret: as an unprivileged user, the same (the proxy in the user's namespace)" {
	requires setpriv
	local u=65534 d
	d=$(mktemp -d /tmp/agentrt-sbx-secrets-user.XXXXXX)
	mkdir -p "$d/home" "$d/run" "$d/ws"
	printf '%s\n' "$SEC_VALUE" >"$d/api.secret"
	sed "s|$SS_DIR/api.secret|$d/api.secret|" "$SS_DIR/p.json" >"$d/p.json"
	chown -R "$u:$u" "$d"
	chmod 0600 "$d/api.secret"
	chmod 0700 "$d/home" "$d/run"
	chmod 0755 "$d"
	run nsenter --net="/run/netns/$SS_C" setpriv --reuid "$u" --regid "$u" --clear-groups \
		env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$d/home" XDG_RUNTIME_DIR="$d/run" \
		XDG_DATA_HOME="$d/home/.local/share" API_TOKEN=host-env-value sh -c "cd '$d/ws' && \
		timeout 60 '$AGENTRT' sandbox --name usec1 --profile '$d/p.json' --dns 192.0.2.1 \
		--secret API_TOKEN --allow api.example.test:443 -- sh -c '
			curl -sS --max-time 10 -H \"Authorization: Bearer \$API_TOKEN\" https://api.example.test/v1/u; echo
			env | grep -c -- $SEC_VALUE || true; echo tok=\${API_TOKEN%%-*}'"
	rm -rf --one-file-system "$d"
	[ "$status" -eq 0 ] || fail "sandbox: $output"
	[[ "$output" == *"\"auth_sha256\": \"$(sha "Bearer $SEC_VALUE")\""* ]] || fail "no value upstream: $output"
	grep -qF "Authorization: Bearer $SEC_VALUE" "$SS_DIR/api.log" || fail "log: $(cat "$SS_DIR/api.log")"
	[[ "$output" == *$'\n0\n'*"tok=agentrt"* ]] || fail "environment: $output"
}

@test "sandbox --secret: the secret's file is masked where the host's root shows it (regression: file in the workspace)" {
	mkdir -p "$WS/.keys"
	printf '%s\n' "$SEC_VALUE" >"$WS/.keys/api"
	chmod 0600 "$WS/.keys/api"
	ln -s .keys/api "$WS/api-link"
	sed "s|$SS_DIR/api.secret|$WS/api-link|" "$SS_DIR/p.json" >"$WS/p.json"
	local n=0 sel
	for sel in "--secret API_TOKEN" ""; do
		n=$((n + 1))
		# shellcheck disable=SC2086
		SS_PROFILE=$WS/p.json run ss --name "sec6-$n" $sel --allow api.example.test:443 -- sh -c \
			"cat '$WS/.keys/api' '$WS/api-link'; grep -rl -- '${SEC_VALUE:0:24}' '$WS' /proc/self/environ; echo end"
		[[ "$output" == *end* ]] || fail "[$sel] $output"
		[[ "$output" != *"${SEC_VALUE:0:24}"* ]] || fail "[$sel] the value is readable inside: $output"
	done
	# the control: the same file is readable without a profile that names it
	SS_PROFILE=agent run ss --name sec7 --allow api.example.test:443 -- cat "$WS/.keys/api"
	[[ "$output" == *"$SEC_VALUE"* ]] || fail "control: $output"
}

@test "escape: a secret's file replaced on the host (a new file renamed over it) while the sandbox runs was shown" {
	requires unshare
	# a tmpfs over /srv stands for a directory of the host's that the sandbox shows, in a mount
	# namespace of the test's (the host's is never changed).  A mount over a path goes with the
	# file it is on: a rotation that writes a new token and renames it over the old one (Vault
	# agent's sink, a refresh job, Kubernetes' ..data swap) unmasked the new value inside.
	export AGENTRT RT_TIMEOUT WS SS_DIR SS_C ROOT_SS="$TEST_ROOT-ss"
	run unshare -m --propagation private bash -c '
		set -u
		mount -t tmpfs -o mode=755 agentrt-test-srv /srv || { echo "no tmpfs over /srv"; exit 90; }
		mkdir -p /srv/keys /srv/k8s/..v1 /srv/mixed
		echo old-value-1 >/srv/keys/api
		echo old-value-2 >/srv/k8s/..v1/gh
		ln -s ..v1 /srv/k8s/..data && ln -s ..data/gh /srv/k8s/gh
		echo old-value-3 >/srv/mixed/db && echo readme-ok >/srv/mixed/README
		echo public-ok >/srv/public
		chmod 0600 /srv/keys/api /srv/k8s/..v1/gh /srv/mixed/db
		cat >"$WS.rot.json" <<-EOP
			{"name": "rot", "extends": "agent", "egress": {"tls": {"upstreamCA": "$SS_DIR/ca.pem"}},
			 "secrets": [
			 {"name": "A", "file": "/srv/keys/api", "hosts": ["api.example.test"]},
			 {"name": "G", "file": "/srv/k8s/gh", "hosts": ["api.example.test"]},
			 {"name": "M", "file": "/srv/mixed/db", "hosts": ["api.example.test"]}]}
		EOP
		out=$WS.rot.out
		(cd "$WS" && timeout --kill-after=5 "$RT_TIMEOUT" nsenter --net="/run/netns/$SS_C" "$AGENTRT" \
			--root "$ROOT_SS" sandbox --name rot1 --profile "$WS.rot.json" --dns 192.0.2.1 --secret A \
			--allow api.example.test:443 -- sh -c "
				curl -sS --max-time 10 -H \"Authorization: Bearer \$A\" https://api.example.test/rot >/dev/null
				echo started
				for i in \$(seq 100); do [ -e /srv/rotated ] && break; sleep 0.1; done
				cat /srv/keys/api /srv/k8s/gh /srv/k8s/..data/gh /srv/public /srv/mixed/README
				echo end") >"$out" 2>&1 &
		for i in $(seq 100); do grep -q started "$out" && break; sleep 0.1; done
		# the rotations, as the tools do them
		echo new-value-1 >/srv/keys/.api.tmp && chmod 0600 /srv/keys/.api.tmp && mv /srv/keys/.api.tmp /srv/keys/api
		mkdir /srv/k8s/..v2 && echo new-value-2 >/srv/k8s/..v2/gh && ln -s ..v2 /srv/k8s/..tmp &&
			mv -T /srv/k8s/..tmp /srv/k8s/..data
		: >/srv/rotated
		wait
		cat "$out"
		"$AGENTRT" --root "$ROOT_SS" workspace rot1 purge >/dev/null 2>&1
		rm -f "$out" "$WS.rot.json"
		umount /srv'
	[ "$status" -eq 0 ] || fail "$output"
	[[ "$output" == *started* && "$output" == *end* ]] || fail "$output"
	[[ "$output" != *new-value* ]] || fail "a rotated secret was shown: $output"
	[[ "$output" != *old-value* ]] || fail "a secret was shown: $output"
	# the rest of the host's directory is shown as ever, and the hidden one's secret reaches its host
	[[ "$output" == *public-ok*readme-ok* ]] || fail "$output"
	grep -qF "Authorization: Bearer old-value-1" "$SS_DIR/api.log" || fail "not upstream: $output"
	# a secret's file beside other files is masked by its path only, and the sandbox says so
	[[ "$output" == *"warning: sandbox: the secret \`M\`"*"/srv/mixed/db"* ]] || fail "no warning: $output"
}
