#!/usr/bin/env bats
# secrets-proxy.bats - the egress TLS proxy of a container with secrets (monitor/tls_proxy.c),
# end to end on a fake internet built here (the namespaces of egress.bats, TEST-NET only):
#   agentrt-t-ctr-N   the container's netns, 192.0.2.2/30
#   agentrt-t-inet-N  the internet: 203.0.113.10 (api.example.test), 203.0.113.20 (other.test,
#                     front.test and hidden.test share it), HTTPS echo servers with a test CA
#                     made here by openssl (tests/helpers/https-echo.py), plain HTTP on :80,
#                     dnsmasq at 192.0.2.53
#   agentrt-t-host-N  agentrt runs here (nsenter --net), as in egress.bats
# The clients inside are the host's curl, node and git, bound read-only into the container
# with the host's libraries (nothing is copied into the rootfs).  What the upstream received
# is read from its log on the host; the real value must be there and nowhere inside.

load helpers

SEC_VALUE=sk-live-5e1f0a9d3c7b2e4f6a8d0c1b3e5f7a9d

px_bg() { # NS CMD...
	local ns=$1
	shift
	ip netns exec "$ns" "$@" </dev/null >/dev/null 2>>"$PX_DIR/servers.err" &
	echo $! >>"$PX_DIR/pids"
}

setup_file() {
	[ "$(id -u)" -eq 0 ] || skip "needs root"
	for t in ip nsenter dnsmasq openssl python3 curl; do
		command -v "$t" >/dev/null || skip "needs $t"
	done
	ensure_rootfs
	export PX_TAG=$$
	export PX_CTR=agentrt-t-ctr-$PX_TAG PX_INET=agentrt-t-inet-$PX_TAG PX_HOST=agentrt-t-host-$PX_TAG
	export PX_DIR
	PX_DIR=$(mktemp -d /tmp/agentrt-secrets-proxy.XXXXXX)
	chmod 0755 "$PX_DIR"
	: >"$PX_DIR/pids"
	fake_links "$PX_CTR" "$PX_INET" "$PX_HOST" 203.0.113.10 203.0.113.20 192.0.2.53 2001:db8:203::20 ||
		fail "fake internet: links"
	# the test CA and the upstreams' certificates
	(
		cd "$PX_DIR" || exit 1
		openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
			-subj "/CN=agentrt test upstream CA" -keyout ca.key -out ca.pem 2>/dev/null || exit 1
		for n in api.example.test other.test; do
			openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$n" \
				-addext "subjectAltName=DNS:$n,DNS:front.test,DNS:hidden.test" \
				-keyout "$n.key" -out "$n.csr" 2>/dev/null || exit 1
			printf 'subjectAltName=DNS:%s,DNS:front.test,DNS:hidden.test\n' "$n" >"$n.ext"
			openssl x509 -req -in "$n.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
				-extfile "$n.ext" -out "$n.pem" 2>/dev/null || exit 1
		done
		chmod 0644 ./*.pem
	) || fail "openssl: test CA"
	local echo=$REPO_ROOT/tests/helpers/https-echo.py
	px_bg "$PX_INET" python3 "$echo" 203.0.113.10 443 "$PX_DIR/api.example.test.pem" \
		"$PX_DIR/api.example.test.key" "$PX_DIR/api.log"
	px_bg "$PX_INET" python3 "$echo" 203.0.113.20 443 "$PX_DIR/other.test.pem" \
		"$PX_DIR/other.test.key" "$PX_DIR/other.log"
	px_bg "$PX_INET" python3 "$echo" 203.0.113.20 80 - - "$PX_DIR/other80.log"
	px_bg "$PX_INET" python3 "$echo" 2001:db8:203::20 80 - - "$PX_DIR/other6-80.log"
	px_bg "$PX_INET" python3 "$echo" 203.0.113.10 80 - - "$PX_DIR/api80.log"
	cat >"$PX_DIR/dns.conf" <<-EOF
		no-resolv
		no-hosts
		bind-interfaces
		listen-address=192.0.2.53
		port=53
		local=/test/
		local-ttl=300
		host-record=api.example.test,203.0.113.10
		host-record=other.test,203.0.113.20
		host-record=front.test,203.0.113.20
		host-record=hidden.test,203.0.113.20
	EOF
	px_bg "$PX_INET" dnsmasq -k -C "$PX_DIR/dns.conf" --pid-file= --user=root
	for _ in $(seq 50); do
		ip netns exec "$PX_INET" curl -s --cacert "$PX_DIR/ca.pem" --resolve api.example.test:443:203.0.113.10 \
			https://api.example.test/ready >/dev/null 2>&1 &&
			ip netns exec "$PX_INET" curl -s http://203.0.113.20/ready >/dev/null 2>&1 && break
		sleep 0.2
	done
	ip netns exec "$PX_INET" curl -s --cacert "$PX_DIR/ca.pem" --resolve api.example.test:443:203.0.113.10 \
		https://api.example.test/ready >/dev/null || fail "upstream not up: $(cat "$PX_DIR/servers.err")"
	printf '%s\n' "$SEC_VALUE" >"$PX_DIR/api.secret"
	chmod 0600 "$PX_DIR/api.secret"
	export PX_PROFILE=$PX_DIR/p.json
	cat >"$PX_PROFILE" <<-EOF
		{"name": "secrets-proxy", "extends": "agent",
		 "egress": {"allow": ["api.example.test", "other.test", "front.test"],
		            "dns": {"upstream": ["192.0.2.53"]},
		            "tls": {"upstreamCA": "$PX_DIR/ca.pem"}},
		 "secrets": [{"name": "API_TOKEN", "file": "$PX_DIR/api.secret",
		              "hosts": ["api.example.test"]}]}
	EOF
}

teardown_file() {
	local pid
	if [ -n "${PX_DIR:-}" ] && [ -f "$PX_DIR/pids" ]; then
		for pid in $(cat "$PX_DIR/pids"); do kill "$pid" 2>/dev/null; done
		for pid in $(cat "$PX_DIR/pids"); do
			for _ in $(seq 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
			kill -9 "$pid" 2>/dev/null
		done
	fi
	for ns in "${PX_CTR:-}" "${PX_INET:-}" "${PX_HOST:-}"; do
		[ -n "$ns" ] && ip netns delete "$ns" 2>/dev/null
	done
	[ -n "${PX_DIR:-}" ] && rm -rf "$PX_DIR"
	local left=
	if [ -d "$TEST_ROOT" ]; then
		left=$(root_leftovers "$TEST_ROOT")
		rm -rf --one-file-system "$TEST_ROOT"
	fi
	remove_data_dir
	for ctrl in /sys/fs/cgroup/*/ /sys/fs/cgroup/; do
		[ -d "$ctrl$CG_PARENT" ] && rmdir "$ctrl$CG_PARENT"/*/ "$ctrl$CG_PARENT" 2>/dev/null
	done
	! ip netns list | grep -q "agentrt-t-[a-z]*-${PX_TAG:-none}\b" || fail "test namespaces left"
	[ -z "$left" ] || fail "left in $TEST_ROOT: $left"
}

setup() {
	setup_bundle
	ID=px-$BATS_TEST_NUMBER
	# the host's clients and their libraries, read-only (the rootfs is busybox)
	local binds='[]' d
	for d in /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/bin/curl /usr/bin/node /usr/bin/git \
		/usr/lib/git-core /usr/share/git-core /etc/ssl/openssl.cnf; do
		[ -e "$d" ] && binds=$(jq --arg d "$d" '. + [{"destination": $d, "type": "bind",
			"source": $d, "options": ["rbind", "ro", "nosuid", "nodev"]}]' <<<"$binds")
	done
	# the host's merged /usr layout: /lib and /lib64 are links into /usr
	mkdir -p "$ROOTFS/usr/lib" "$ROOTFS/usr/lib64"
	[ -e "$ROOTFS/lib" ] || ln -s usr/lib "$ROOTFS/lib"
	[ -e "$ROOTFS/lib64" ] || ln -s usr/lib64 "$ROOTFS/lib64"
	cp "$PX_DIR/ca.pem" "$ROOTFS/upstream-ca.pem"
	cp "$REPO_ROOT/tests/helpers/raw-tls.js" "$ROOTFS/raw-tls.js"
	update_config ".process.args = [\"sleep\", \"600\"] | .mounts += $binds |
		.linux.namespaces |= map(if .type == \"network\" then .path = \"/var/run/netns/$PX_CTR\" else . end)"
	echo "nameserver 192.0.2.99" >"$ROOTFS/etc/resolv.conf"
	: >"$PX_DIR/api.log"
	: >"$PX_DIR/other.log"
}

teardown() {
	local r=0
	teardown_bundle || r=1
	if ip netns exec "$PX_CTR" nft list tables 2>/dev/null | grep -q agentrt; then
		ip netns exec "$PX_CTR" nft delete table inet agentrt
		r=1
	fi
	return $r
}

px_run() {
	local profile=${1:-$PX_PROFILE}
	status=0
	timeout --kill-after=5 "$RT_TIMEOUT" nsenter --net="/run/netns/$PX_HOST" \
		"$AGENTRT" --root "$TEST_ROOT" --profile "$profile" run -d --bundle "$BUNDLE" "$ID" \
		</dev/null >"$BUNDLE/$ID.out" 2>"$BUNDLE/$ID.err" || status=$?
	output=$(cat "$BUNDLE/$ID.err")
	[ "$status" -eq 0 ] || fail "run -d: $output"
}

in_ctr() { rt exec "$ID" "$@"; }

sha() { printf '%s' "$1" | sha256sum | cut -d' ' -f1; }

# raw PAYLOAD [SNI [ALPN [HOST]]]: PAYLOAD as it is to HOST (api.example.test):443 from inside
# (tests/helpers/raw-tls.js); SNI "plain": to port 80 without TLS
raw() {
	[ -x /usr/bin/node ] || skip "no node on the host"
	run in_ctr node /raw-tls.js "${4:-api.example.test}" "${2:-api.example.test}" "${3:--}" "$1"
}

# hello_to ADDR SNI... [ech] [hrr:NAME]: a hand-made ClientHello from the container's namespace,
# naming each SNI in one server_name list (the nft redirect takes it to the proxy like the
# container's own); slow: the second hello (hrr:) a byte a second, then "open after 25 s" or
# "closed after S s"; hrr:NAME: a TLS 1.3 hello with no key share (the server answers with a
# HelloRetryRequest), then a second ClientHello naming NAME
hello_to() {
	ip netns exec "$PX_CTR" python3 - "$@" <<-'PYEOF'
		import socket, struct, sys
		import select, time
		args = sys.argv[2:]
		slow = "slow" in args
		args = [a for a in args if a != "slow"]
		addr, names = sys.argv[1], [a for a in args if a != "ech" and not a.startswith("hrr:")]
		second = [a[4:] for a in args if a.startswith("hrr:")]
		def ext(t, d):
		    return struct.pack(">HH", t, len(d)) + d
		def hello(names, tls13, share):
		    lst = b"".join(b"\0" + struct.pack(">H", len(n)) + n.encode() for n in names)
		    e = ext(0, struct.pack(">H", len(lst)) + lst)
		    if "ech" in args:
		        e += ext(0xFE0D, b"\0\0\1\0")
		    if tls13:
		        e += ext(43, b"\2\3\4") + ext(10, b"\0\2\0\x17") + ext(13, b"\0\4\4\3\x08\4")
		        e += ext(51, struct.pack(">H", len(share)) + share)
		    body = b"\3\3" + b"\x11" * 32 + b"\0" + b"\0\2\x13\1" + b"\1\0" + struct.pack(">H", len(e)) + e
		    hs = b"\1" + struct.pack(">I", len(body))[1:] + body
		    return b"\x16\3\1" + struct.pack(">H", len(hs)) + hs
		s = socket.create_connection((addr, 443), timeout=5)
		s.sendall(hello(names, bool(second), b""))
		try:
		    got = s.recv(5)
		    if second and len(got) == 5:
		        rest = struct.unpack(">H", got[3:5])[0]
		        while rest > 0:
		            rest -= len(s.recv(rest))
		        p256 = b"\0\x17\0\x41\4" + b"\x22" * 64
		        if slow: # the second hello a byte a second, for up to 25 s
		            t0 = time.time()
		            try:
		                for b in hello(second, True, p256)[:25]:
		                    s.send(bytes([b]))
		                    if select.select([s], [], [], 1)[0] and not s.recv(100):
		                        break
		            except OSError:
		                pass
		            print("open" if time.time() - t0 > 24 else "closed", "after", round(time.time() - t0), "s")
		        s.sendall(hello(second, True, p256))
		        s.recv(100)
		except OSError:
		    pass
	PYEOF
}

@test "secrets-proxy: curl's Authorization: Bearer \$API_TOKEN arrives upstream with the real value" {
	px_run
	run in_ctr sh -c 'curl -sS --max-time 10 -H "Authorization: Bearer $API_TOKEN" https://api.example.test/v1/models'
	[ "$status" -eq 0 ] || fail "curl: $output"
	[[ "$output" == *"\"auth_sha256\": \"$(sha "Bearer $SEC_VALUE")\""* ]] || fail "upstream did not get the value: $output"
	grep -qF "Authorization: Bearer $SEC_VALUE" "$PX_DIR/api.log" || fail "log: $(cat "$PX_DIR/api.log")"
	# the control: without the header nothing is added
	run in_ctr sh -c 'curl -sS --max-time 10 https://api.example.test/none'
	[[ "$output" == *'"auth_sha256": null'* ]] || fail "$output"
	# the trail: one record per request, never the value
	run rt audit "$ID"
	[[ "$output" == *'"kind":"http"'*'"path":"/v1/models"'*'"status":200'*'"secret":"API_TOKEN"'* ]] ||
		fail "no http record: $(grep '"http"' <<<"$output")"
	[[ "$output" != *"$SEC_VALUE"* ]] || fail "the value is in the trail"
}

@test "secrets-proxy: the value is nowhere inside after use; the CA key is not readable" {
	px_run
	in_ctr sh -c 'curl -sS --max-time 10 -H "Authorization: Bearer $API_TOKEN" https://api.example.test/x' >/dev/null
	grep -qF "Bearer $SEC_VALUE" "$PX_DIR/api.log" || fail "not substituted"
	run in_ctr sh -c "h1='${SEC_VALUE:0:20}'; h2='${SEC_VALUE:20}'
		{ for d in /*; do case \$d in /proc|/sys|/dev|/usr|/lib|/lib64) ;; *) grep -rlF -- \"\$h1\" \"\$d\" 2>/dev/null ;; esac; done
		  grep -lF -- \"\$h1\" /proc/[0-9]*/environ /proc/[0-9]*/cmdline 2>/dev/null
		  grep -rlF -- \"\$h1\" /dev/shm /dev/agentrt-ca-bundle.crt 2>/dev/null; } |
		while read -r f; do case \"\$(cat \"\$f\" 2>/dev/null)\" in *\"\$h1\$h2\"*) echo \"\$f\" ;; esac; done; echo done"
	[ "$output" = done ] || fail "found inside: $output"
	# the bundle inside holds the CA's certificate, no private key; none in the state dir
	run in_ctr sh -c 'grep -c "BEGIN CERTIFICATE" /dev/agentrt-ca-bundle.crt; grep -c "PRIVATE [K]EY" /dev/agentrt-ca-bundle.crt'
	[ "$(sed -n 2p <<<"$output")" = 0 ] || fail "$output"
	run grep -rl "PRIVATE KEY" "$TEST_ROOT/$ID" "$AGENTRT_DATA_DIR"
	[ -z "$output" ] || fail "a key on disk: $output"
	# the proxy and the monitor are host processes the container cannot see
	run in_ctr sh -c 'ls /proc | grep -c "^[0-9]"; cat /proc/[0-9]*/comm'
	[[ "$output" != *agentrt-proxy* && "$output" != *agentrt-monitor* ]] || fail "$output"
}

@test "secrets-proxy: the placeholder sent to another allowed host stays a placeholder" {
	px_run
	run in_ctr sh -c 'curl -sS --max-time 10 --cacert /upstream-ca.pem -H "Authorization: Bearer $API_TOKEN" https://other.test/leak'
	[ "$status" -eq 0 ] || fail "curl: $output"
	grep -q "Authorization: Bearer agentrt-secret-[0-9a-f]\{32\}" "$PX_DIR/other.log" || fail "log: $(cat "$PX_DIR/other.log")"
	! grep -qF "$SEC_VALUE" "$PX_DIR/other.log" || fail "the value went to other.test"
	# in another header of the secret's own host: unchanged too, and recorded
	run in_ctr sh -c 'curl -sS --max-time 10 -H "X-Api-Key: $API_TOKEN" https://api.example.test/other-header'
	grep -q "X-Api-Key: agentrt-secret-" "$PX_DIR/api.log" || fail "$(cat "$PX_DIR/api.log")"
	! grep -qF "$SEC_VALUE" "$PX_DIR/api.log" || fail "substituted in another header"
	# plain HTTP to the secret's host: never substituted
	run in_ctr sh -c 'curl -sS --max-time 10 -H "Authorization: Bearer $API_TOKEN" http://api.example.test/plain'
	! grep -qF "$SEC_VALUE" "$PX_DIR/api80.log" || fail "substituted in plain HTTP"
	run rt audit "$ID"
	[[ "$output" == *'"kind":"secret_placeholder"'*'"header":"X-Api-Key"'* ]] || fail "not recorded"
}

# basic-auth-token: git, pip, npm and `curl -u` send a token given as a URL's user or password in
# Basic credentials (base64 of user:password): the placeholder was never substituted there, so
# an honest agent's `https://x-access-token:$TOKEN@host/` reached the host with the placeholder.
@test "secrets-proxy: basic-auth-token: the placeholder in Basic credentials arrives as the value, to the secret's host only" {
	px_run
	local want
	want="Basic $(printf 'x-access-token:%s' "$SEC_VALUE" | base64 -w0)"
	run in_ctr sh -c 'curl -sS --max-time 10 -u "x-access-token:$API_TOKEN" https://api.example.test/basic'
	[ "$status" -eq 0 ] || fail "curl: $output"
	[[ "$output" == *"\"auth_sha256\": \"$(sha "$want")\""* ]] || fail "upstream did not get the value: $output $(grep -i authorization "$PX_DIR/api.log")"
	# the token as the user (GitHub's and GitLab's form), the scheme in another case
	want="Basic $(printf '%s:x-oauth-basic' "$SEC_VALUE" | base64 -w0)"
	run in_ctr sh -c 'curl -sS --max-time 10 -H "Authorization: basic $(printf "%s:x-oauth-basic" "$API_TOKEN" | base64 | tr -d "\n")" https://api.example.test/basic-user'
	[[ "$output" == *"\"auth_sha256\": \"$(sha "$want")\""* ]] || fail "token as the user: $output"
	# the same credentials to another allowed host, and in another header: the placeholder stays
	run in_ctr sh -c 'curl -sS --max-time 10 --cacert /upstream-ca.pem -u "x-access-token:$API_TOKEN" https://other.test/basic'
	[ "$status" -eq 0 ] || fail "curl: $output"
	! grep -qF "$SEC_VALUE" "$PX_DIR/other.log" || fail "the value went to other.test"
	grep -q "Authorization: Basic " "$PX_DIR/other.log" || fail "$(cat "$PX_DIR/other.log")"
	run in_ctr sh -c 'curl -sS --max-time 10 -H "X-Api-Key: Basic $(printf "u:%s" "$API_TOKEN" | base64 | tr -d "\n")" https://api.example.test/basic-other-header'
	! grep -qF "$(printf 'u:%s' "$SEC_VALUE" | base64 -w0)" "$PX_DIR/api.log" || fail "substituted in another header"
	run rt audit "$ID"
	[[ "$output" == *'"kind":"secret_placeholder"'*'"header":"X-Api-Key"'* ]] || fail "not recorded"
	[[ "$output" != *"$SEC_VALUE"* ]] || fail "the value is in the trail"
}

@test "secrets-proxy: a server name or Host that does not resolve to the address is refused" {
	px_run
	in_ctr nslookup front.test >/dev/null
	# SNI hidden.test (not allowed) to front.test's address: refused (domain fronting)
	run in_ctr sh -c 'curl -sS --max-time 10 --cacert /upstream-ca.pem --resolve hidden.test:443:203.0.113.20 https://hidden.test/'
	[ "$status" -ne 0 ] || fail "fronting with SNI hidden.test got through: $output"
	# the control: the allowed name on the same address works
	run in_ctr sh -c 'curl -sS --max-time 10 --cacert /upstream-ca.pem https://front.test/ok'
	[ "$status" -eq 0 ] && [[ "$output" == *'"path": "/ok"'* ]] || fail "control: $output"
	# the secret's name to another allowed address: refused before any TLS
	run in_ctr sh -c 'curl -sS --max-time 10 --resolve api.example.test:443:203.0.113.20 -H "Authorization: Bearer $API_TOKEN" https://api.example.test/'
	[ "$status" -ne 0 ] || fail "api.example.test at other.test's address: $output"
	! grep -qF "$SEC_VALUE" "$PX_DIR/other.log" || fail "the value went to the wrong address"
	# plain HTTP: Host hidden.test to that address
	run in_ctr sh -c 'curl -sS --max-time 10 -H "Host: hidden.test" http://203.0.113.20/'
	[ "$status" -ne 0 ] || [ -z "$output" ] || fail "Host hidden.test answered: $output"
	run in_ctr sh -c 'curl -sS --max-time 10 http://front.test/plain-ok'
	[[ "$output" == *'"path": "/plain-ok"'* ]] || fail "plain control: $output"
	# inside a terminated flow: Host other than the server name gets 421
	run in_ctr sh -c 'curl -sS --max-time 10 -H "Host: other.test" -H "Authorization: Bearer $API_TOKEN" https://api.example.test/'
	[[ "$output" == *"not the TLS server name"* ]] || fail "Host fronting inside TLS: $output"
	! grep -qF "$SEC_VALUE" "$PX_DIR/other.log" "$PX_DIR/api.log" || fail "value sent"
	run rt audit "$ID"
	[[ "$output" == *'"kind":"tls_flow"'*'"name":"hidden.test"'*'"verdict":"refused"'* ]] || fail "not recorded"
}

@test "secrets-proxy: keep-alive, a chunked upload, server-sent events, a WebSocket upgrade" {
	px_run
	# two requests on one connection: both substituted
	run in_ctr sh -c 'curl -sS --max-time 10 -H "Authorization: Bearer $API_TOKEN" https://api.example.test/a https://api.example.test/b'
	[ "$(grep -c "\"auth_sha256\": \"$(sha "Bearer $SEC_VALUE")\"" <<<"$output")" -eq 2 ] || fail "$output"
	# chunked upload of 200 KiB
	run in_ctr sh -c 'head -c 204800 /dev/zero | curl -sS --max-time 10 -H "Transfer-Encoding: chunked" -H "Authorization: Bearer $API_TOKEN" --data-binary @- https://api.example.test/up'
	[[ "$output" == *'"body_len": 204800'* ]] || fail "chunked: $output"
	# server-sent events arrive as a stream
	run in_ctr sh -c 'curl -sSN --max-time 10 https://api.example.test/sse'
	[ "$(grep -c '^data: tick' <<<"$output")" -eq 3 ] || fail "sse: $output"
	# WebSocket: 101, then bytes both ways (node's tls against the container's bundle)
	run in_ctr node -e '
		const tls = require("tls"), fs = require("fs");
		const s = tls.connect({host: "api.example.test", port: 443, servername: "api.example.test",
			ca: fs.readFileSync(process.env.SSL_CERT_FILE)}, () => {
			s.write("GET /ws HTTP/1.1\r\nHost: api.example.test\r\nConnection: Upgrade\r\n" +
				"Upgrade: websocket\r\nAuthorization: Bearer " + process.env.API_TOKEN + "\r\n\r\n");
		});
		let got = "", sent = false;
		s.on("data", d => { got += d; if (!sent && got.includes("\r\n\r\n")) { sent = true; s.write("hello-ws"); }
			if (got.includes("echo:hello-ws")) { console.log(got.split("\r\n")[0], "echo:hello-ws"); s.destroy(); } });
		s.on("error", e => { console.log("ERR", e.message); process.exit(1); });
		setTimeout(() => { console.log("TIMEOUT", JSON.stringify(got)); process.exit(1); }, 5000);'
	[[ "$output" == "HTTP/1.1 101"*"echo:hello-ws"* ]] || fail "websocket: $output"
	grep -q "Upgrade: websocket" "$PX_DIR/api.log" || fail "upgrade not forwarded"
}

@test "secrets-proxy: node fetch and git over https carry the value to the secret's host" {
	[ -x /usr/bin/node ] || skip "no node on the host"
	px_run
	run in_ctr node -e 'fetch("https://api.example.test/node", {headers: {Authorization: "Bearer " + process.env.API_TOKEN}}).then(r => r.text()).then(t => console.log(t)).catch(e => {console.log("ERR", e.cause || e); process.exit(1)})'
	[[ "$output" == *"\"auth_sha256\": \"$(sha "Bearer $SEC_VALUE")\""* ]] || fail "node: $output"
	run in_ctr sh -c 'HOME=/tmp git -c http.extraHeader="Authorization: Bearer $API_TOKEN" ls-remote https://api.example.test/repo.git 2>&1; true'
	grep -q "GET /repo.git/info/refs" "$PX_DIR/api.log" || fail "git: $output"
	grep -qF "Authorization: Bearer $SEC_VALUE" <(grep -A20 "GET /repo.git" "$PX_DIR/api.log") || fail "git header: $(cat "$PX_DIR/api.log")"
}

@test "secrets-proxy: a client that does not trust the CA fails with a TLS error, recorded" {
	px_run
	run in_ctr sh -c 'curl -sS --max-time 10 --cacert /upstream-ca.pem https://api.example.test/'
	[ "$status" -ne 0 ] || fail "a client pinning another CA accepted the proxy: $output"
	[[ "$output" == *"SSL certificate problem"* || "$output" == *"certificate"* ]] || fail "$output"
	# the proxy records the failed handshake when it sees it end, which may be just after curl
	# has exited (once in CI, under load): up to 5 s
	for _ in $(seq 50); do
		run rt audit "$ID"
		[[ "$output" == *'"kind":"tls_error"'*'"name":"api.example.test"'* ]] && break
		sleep 0.1
	done
	[[ "$output" == *'"kind":"tls_error"'*'"name":"api.example.test"'* ]] || fail "not recorded"
	# explain says what such a client meets, and where the bundle is
	run rt explain "$ID"
	assert_output_contains "a client that pins certificates or uses its own CA store fails there"
	assert_output_contains "/dev/agentrt-ca-bundle.crt"
}

@test "secrets-proxy: a live egress deny of the host ends the proxied connection" {
	px_run
	in_ctr sh -c 'curl -sSN --max-time 40 https://api.example.test/slow >/tmp/slow.out 2>&1 & echo $! >/tmp/slow.pid'
	for _ in $(seq 50); do
		[ "$(in_ctr sh -c 'grep -c tick /tmp/slow.out' 2>/dev/null)" -ge 3 ] 2>/dev/null && break
		sleep 0.1
	done
	run rt egress "$ID" deny api.example.test
	[ "$status" -eq 0 ] || fail "deny: $output"
	before=$(in_ctr sh -c 'grep -c tick /tmp/slow.out')
	ended=0
	for _ in $(seq 50); do
		# curl's parent is gone: a zombie under the init (sleep does not reap) has ended
		st=$(in_ctr sh -c 'cut -d" " -f3 /proc/$(cat /tmp/slow.pid)/stat 2>/dev/null')
		if [ -z "$st" ] || [ "$st" = Z ]; then ended=1; break; fi
		sleep 0.1
	done
	[ "$ended" = 1 ] || fail "the stream goes on after deny ($(in_ctr sh -c 'grep -c tick /tmp/slow.out') ticks, $before at deny)"
	after=$(in_ctr sh -c 'grep -c tick /tmp/slow.out')
	[ "$after" -lt 100 ] || fail "ran to the end: $after"
}

@test "secrets-proxy: HTTP rules allow and refuse as written, with no way around them by path tricks" {
	jq '.name = "px-rules" | .egress.http = [{"host": "api.example.test", "methods": ["GET"], "paths": ["/v1/"]},
		{"host": "other.test", "methods": ["POST"]}]' "$PX_PROFILE" >"$PX_DIR/rules.json"
	px_run "$PX_DIR/rules.json"
	for c in "GET /v1/models 200" "GET /v1/ 200" "GET /v1?x=1 403" "GET /v2/x 403" "POST /v1/x 403" \
		"GET /v1/../admin 403" "GET /v1/%2e%2e/admin 403" "GET /v1/..%2fadmin 403" "GET /v1//x 403" \
		"GET /v1/./x 403" "GET /V1/x 403" "GET /v1/a?p=/v2 200"; do
		read -r m p want <<<"$c"
		run in_ctr sh -c "curl -sS --max-time 10 --path-as-is -X $m -o /dev/null -w '%{http_code}' 'https://api.example.test$p'"
		[ "$output" = "$want" ] || fail "$m $p: got $output, want $want"
	done
	# refused requests never reached the upstream
	! grep -q "^GET /v2/x\|/admin\|^POST /v1/x" "$PX_DIR/api.log" || fail "a refused request went out: $(cat "$PX_DIR/api.log")"
	grep -q "^GET /v1/models" "$PX_DIR/api.log" || fail "the allowed one did not"
	# a host with a rule but no secret is terminated too: POST only
	run in_ctr sh -c "curl -sS --max-time 10 -o /dev/null -w '%{http_code}' -X POST -d x https://other.test/p"
	[ "$output" = 200 ] || fail "POST other.test: $output"
	run in_ctr sh -c "curl -sS --max-time 10 -o /dev/null -w '%{http_code}' https://other.test/p"
	[ "$output" = 403 ] || fail "GET other.test: $output"
	# keep-alive: an allowed request then a refused one on the same connection
	run in_ctr sh -c "curl -sS --max-time 10 -o /dev/null -o /dev/null -w '%{http_code} ' https://api.example.test/v1/a https://api.example.test/v9/b"
	[[ "$output" == "200 403"* ]] || fail "keep-alive: $output"
	run rt audit "$ID"
	[[ "$output" == *'"kind":"http"'*'"path":"/v2/x"'*'"status":403'*'"refused":'* ]] || fail "no refusal record"
}

@test "secrets-proxy: profile check refuses bad HTTP rules, naming the field" {
	for c in '.egress.http = [{"methods": ["GET"]}]|egress.http[0]: needs "host"' \
		'.egress.http = [{"host": "a.test", "methods": ["get"]}]|egress.http[0].methods[0]: `get` is not an upper-case method name' \
		'.egress.http = [{"host": "a.test", "paths": ["v1"]}]|egress.http[0].paths[0]: `v1` is not a plain path prefix' \
		'.egress.http = [{"host": "a.test", "paths": ["/v1/../x"]}]|egress.http[0].paths[0]:' \
		'.egress.http = [{"host": "1.2.3.4"}]|egress.http[0].host[0]: `1.2.3.4` is not a host name' \
		'.egress.http = [{"host": "a.test", "x": 1}]|egress.http[0].x: unknown field'; do
		jq "${c%%|*}" "$PX_PROFILE" >"$PX_DIR/bad.json"
		run rt profile check "$PX_DIR/bad.json"
		[ "$status" -ne 0 ] && [[ "$output" == *"${c#*|}"* ]] || fail "${c%%|*}: $output"
	done
}

@test "secrets-proxy: after delete no proxy is left" {
	px_run
	mpid=$(cut -d' ' -f1 "$TEST_ROOT/$ID/monitor.pid")
	ppids=$(pgrep -P "$mpid" -x agentrt-proxy || true)
	[ -n "$ppids" ] || fail "no proxy under monitor $mpid"
	rt delete --force "$ID"
	for _ in $(seq 30); do
		alive=0
		for p in $ppids; do kill -0 "$p" 2>/dev/null && alive=1; done
		[ "$alive" = 0 ] && break
		sleep 0.1
	done
	[ "$alive" = 0 ] || fail "proxy $ppids left"
}

@test "secrets-proxy: smuggling: Transfer-Encoding in HTTP/1.0 is refused, its body never read as a request" {
	px_run
	# an HTTP/1.0 server may ignore chunked and read the chunk as the next request (Host other.test)
	smuggled='GET /smuggled HTTP/1.1\r\nHost: other.test\r\nAuthorization: Bearer {PH}\r\n\r\n'
	raw "POST /te10 HTTP/1.0\r\nHost: api.example.test\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n4a\r\n$smuggled\r\n0\r\n\r\nGET /after HTTP/1.1\r\nHost: api.example.test\r\nAuthorization: Bearer {PH}\r\n\r\n"
	[[ "$output" == "HTTP/1.1 400"* ]] || fail "not refused: $output"
	! grep -q "/te10\|/smuggled\|/after" "$PX_DIR/api.log" || fail "went upstream: $(cat "$PX_DIR/api.log")"
}

@test "secrets-proxy: smuggling: CL with TE, obfuscated TE, folding, a hidden second request: refused, nothing after read" {
	px_run
	local after='GET /after HTTP/1.1\r\nHost: api.example.test\r\nAuthorization: Bearer {PH}\r\nConnection: close\r\n\r\n' h
	for h in 'Content-Length: 4\r\nTransfer-Encoding: chunked' 'Transfer-Encoding: xchunked' \
		'Transfer-Encoding: chunked, identity' 'Transfer-Encoding : chunked' 'Transfer-Encoding\t: chunked' \
		'Transfer-Encoding:\r\n chunked' 'X: y\r\n\tTransfer-Encoding: chunked' 'Content-Length: 4\r\nContent-Length: 40' \
		'Content-Length: +4' 'Content-Length: 4, 4' 'Content_Length: 4' 'Transfer_Encoding: chunked'; do
		raw "POST /smuggle HTTP/1.1\r\nHost: api.example.test\r\n$h\r\n\r\n0\r\n\r\n$after"
		[[ "$output" == "HTTP/1.1 400"* ]] || fail "$h: not refused: $output"
	done
	# the chunk framing: a size with junk, a control byte in an extension, a bare LF, an oversized size:
	# the proxy ends the connection at the bad line and reads nothing after it as a request
	for b in '4 4\r\nabcd\r\n0\r\n\r\n' '4;x\x01\r\nabcd\r\n0\r\n\r\n' '4\nabcd\r\n0\r\n\r\n' \
		'10000000000000004\r\nabcd\r\n0\r\n\r\n' '4\r\nabcd\r\n0\r\nno-colon\r\n\r\n'; do
		raw "POST /chunks HTTP/1.1\r\nHost: api.example.test\r\nTransfer-Encoding: chunked\r\n\r\n$b$after"
		[[ "$output" != *"HTTP/1.1 200"*"HTTP/1.1 200"* ]] || fail "$b: a request after it was answered: $output"
	done
	! grep -q "^GET /after" "$PX_DIR/api.log" || fail "a request after a bad body went upstream: $(cat "$PX_DIR/api.log")"
	# the control: a well-formed chunked body with an extension and a trailer, then the next request
	raw "POST /ok HTTP/1.1\r\nHost: api.example.test\r\nTransfer-Encoding: chunked\r\n\r\n4;a=\"b c\"\r\nabcd\r\n0\r\nX-T: v\r\n\r\n$after"
	[[ "$output" == *'"body_len": 4'*'"path": "/after"'* ]] || fail "control: $output"
	grep -qF "Bearer $SEC_VALUE" "$PX_DIR/api.log" || fail "control not substituted"
}

@test "secrets-proxy: Host with userinfo, a list or another port after the name (api.example.test:@other.test) gets no secret" {
	px_run
	for h in 'api.example.test:@other.test' 'api.example.test:443@other.test' 'api.example.test:443, other.test' \
		'api.example.test:443 other.test' 'api.example.test:8443' 'api.example.test@other.test' \
		'api.example.test:443/x'; do
		raw "GET /host HTTP/1.1\r\nHost: $h\r\nAuthorization: Bearer {PH}\r\n\r\n"
		[[ "$output" == "HTTP/1.1 400"* || "$output" == "HTTP/1.1 421"* ]] || fail "Host $h: $output"
	done
	! grep -qF "$SEC_VALUE" "$PX_DIR/api.log" || fail "the value went out: $(grep -B3 -F "$SEC_VALUE" "$PX_DIR/api.log")"
	# two Host fields, an absolute-form target naming another host: refused as before
	raw 'GET /host HTTP/1.1\r\nHost: api.example.test\r\nHost: other.test\r\nAuthorization: Bearer {PH}\r\n\r\n'
	[[ "$output" == "HTTP/1.1 400"* ]] || fail "two Hosts: $output"
	raw 'GET http://other.test/ HTTP/1.1\r\nHost: api.example.test\r\nAuthorization: Bearer {PH}\r\n\r\n'
	[[ "$output" == "HTTP/1.1 400"* ]] || fail "absolute form: $output"
	! grep -qF "$SEC_VALUE" "$PX_DIR/api.log" || fail "the value went out"
	# the control: any case, a final dot, port 443
	raw 'GET /host-ok HTTP/1.1\r\nHost: API.Example.TEST.:443\r\nAuthorization: Bearer {PH}\r\nConnection: close\r\n\r\n'
	[[ "$output" == "HTTP/1.1 200"*"\"auth_sha256\": \"$(sha "Bearer $SEC_VALUE")\""* ]] || fail "control: $output"
}

# A flow terminated for the secret's host, whose certificate also names front.test (a shared SAN):
# a second request on that connection naming the other name, or a request naming none
# (HTTP/1.0 has no Host), must not take the secret there.
@test "secrets-proxy: refused: a second request on a kept-alive TLS connection to another name of the certificate, and HTTP/1.0 without Host, get no secret" {
	px_run
	raw 'GET /first HTTP/1.1\r\nHost: api.example.test\r\n\r\n{PAUSE}GET /second HTTP/1.1\r\nHost: front.test\r\nAuthorization: Bearer {PH}\r\nConnection: close\r\n\r\n'
	[[ "$output" == "HTTP/1.1 200"*'"path": "/first"'* ]] || fail "control, the first request: $output"
	[[ "$output" == *"HTTP/1.1 421"* && "$output" != *'"path": "/second"'* ]] || fail "second request to front.test: $output"
	for v in 1.0 1.1; do
		raw "GET /nohost HTTP/$v\r\nAuthorization: Bearer {PH}\r\nConnection: close\r\n\r\n"
		[[ "$output" == "HTTP/1.1 4"* && "$output" != *'"path": "/nohost"'* ]] || fail "HTTP/$v without Host: $output"
	done
	! grep -qF "$SEC_VALUE" "$PX_DIR/api.log" "$PX_DIR/other.log" || fail "the value went out"
	! grep -q '/second\|/nohost' "$PX_DIR/api.log" "$PX_DIR/other.log" || fail "went upstream"
}

@test "secrets-proxy: a target //other.test/x, CONNECT and the HTTP/2 preface get no secret" {
	px_run
	raw 'GET //other.test/x HTTP/1.1\r\nHost: api.example.test\r\nAuthorization: Bearer {PH}\r\n\r\n'
	[[ "$output" == "HTTP/1.1 400"* ]] || fail "//other.test: $output"
	raw 'CONNECT /x HTTP/1.1\r\nHost: api.example.test\r\nAuthorization: Bearer {PH}\r\n\r\n'
	[[ "$output" == "HTTP/1.1 400"* ]] || fail "CONNECT /x: $output"
	raw 'CONNECT other.test:443 HTTP/1.1\r\nHost: api.example.test\r\nAuthorization: Bearer {PH}\r\n\r\n'
	[[ "$output" == "HTTP/1.1 400"* ]] || fail "CONNECT other.test: $output"
	# a client offering only h2: no ALPN agreed; its preface is no HTTP/1.1 request
	raw 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n' api.example.test h2
	[[ "$output" == "HTTP/1.1 400"* ]] || fail "h2 preface: $output"
	! grep -q "other.test\|^PRI\|^CONNECT" "$PX_DIR/api.log" || fail "went upstream: $(cat "$PX_DIR/api.log")"
	! grep -qF "$SEC_VALUE" "$PX_DIR/api.log" || fail "the value went out"
}

@test "secrets-proxy: a 101 to a request without Connection: upgrade ends the flow, what follows gets no secret" {
	px_run
	# the upstream switches (its WebSocket echo), the proxy did not see an upgrade asked for
	raw 'GET /ws-unasked HTTP/1.1\r\nHost: api.example.test\r\nUpgrade: websocket\r\n\r\n{PAUSE}GET /next HTTP/1.1\r\nHost: api.example.test\r\nAuthorization: Bearer {PH}\r\n\r\n'
	[[ "$output" == "HTTP/1.1 101"* ]] || fail "no 101: $output"
	[[ "$output" != *"502"* && "$output" != *"echo:"* ]] || fail "the next request went into the upgraded stream: $output"
	run rt audit "$ID"
	[[ "$output" == *'"refused":"101 to a request that asked no upgrade"'* ]] || fail "not recorded"
}

@test "secrets-proxy: placeholder split across writes is substituted in a header, never in the request line or body" {
	px_run
	raw 'POST /split?t={PH} HTTP/1.1\r\nHost: api.example.test\r\nAuthorization: Bearer agentrt-{PAUSE}'"$(in_ctr sh -c 'printf %s "${API_TOKEN#agentrt-}"')"'\r\nContent-Length: 53\r\nConnection: close\r\n\r\nbody:{PH}:'
	[[ "$output" == *"\"auth_sha256\": \"$(sha "Bearer $SEC_VALUE")\""* ]] || fail "split header not substituted: $output"
	grep -q "^POST /split?t=agentrt-secret-" "$PX_DIR/api.log" || fail "request line: $(cat "$PX_DIR/api.log")"
}

@test "secrets-proxy: a ClientHello with two server names, or with ECH on a passthrough flow, is refused" {
	px_run
	in_ctr nslookup front.test >/dev/null
	hello_to 203.0.113.20 front.test hidden.test
	hello_to 203.0.113.20 front.test ech
	sleep 0.3
	run rt audit "$ID"
	! grep '"kind":"tls_flow"' <<<"$output" | grep -q '"verdict":"allowed"' || fail "let through: $(grep tls_flow <<<"$output")"
	[[ "$output" == *'"reason":"an encrypted ClientHello (ECH)'* ]] || fail "ECH not recorded: $(grep tls_flow <<<"$output")"
	# the control: the same hello with one name goes through
	hello_to 203.0.113.20 front.test
	sleep 0.3
	run rt audit "$ID"
	grep '"kind":"tls_flow"' <<<"$output" | grep -q '"name":"front.test".*"verdict":"allowed"' || fail "control: $(grep tls_flow <<<"$output")"
}

@test "secrets-proxy: plain HTTP keep-alive: a second request with another Host on the connection is refused" {
	px_run
	: >"$PX_DIR/other80.log"
	# the first request's Host (front.test) is checked; hidden.test shares its address, is not allowed
	raw 'GET /first HTTP/1.1\r\nHost: front.test\r\n\r\n{PAUSE}GET /second HTTP/1.1\r\nHost: hidden.test\r\n\r\n' plain - front.test
	[[ "$output" == *'"path": "/first"'* ]] || fail "the first request: $output"
	[[ "$output" != *'"path": "/second"'* ]] || fail "hidden.test reached behind front.test: $output"
	! grep -q "hidden.test" "$PX_DIR/other80.log" || fail "upstream got: $(cat "$PX_DIR/other80.log")"
	# a second request in absolute form or CONNECT (an open forward proxy behind an allowed name)
	raw 'GET /first HTTP/1.1\r\nHost: front.test\r\n\r\n{PAUSE}GET http://hidden.test/abs HTTP/1.1\r\nHost: front.test\r\n\r\n' plain - front.test
	[[ "$output" != *'"path": "http://hidden.test/abs"'* ]] || fail "absolute form went out: $output"
	raw 'GET /first HTTP/1.1\r\nHost: front.test\r\n\r\n{PAUSE}CONNECT hidden.test:443 HTTP/1.1\r\nHost: hidden.test:443\r\n\r\n' plain - front.test
	! grep -q "^CONNECT\|^GET http://hidden" "$PX_DIR/other80.log" || fail "upstream got: $(cat "$PX_DIR/other80.log")"
	# a Host naming another port than the one connected to
	raw 'GET /port HTTP/1.1\r\nHost: front.test:8080\r\n\r\n' plain - front.test
	! grep -q "^GET /port" "$PX_DIR/other80.log" || fail "front.test:8080 went out"
	# the control: two requests to the same name on one connection
	raw 'GET /a HTTP/1.1\r\nHost: front.test.\r\n\r\n{PAUSE}GET /b HTTP/1.1\r\nHost: FRONT.test:80\r\nConnection: close\r\n\r\n' plain - front.test
	[[ "$output" == *'"path": "/a"'*'"path": "/b"'* ]] || fail "control: $output"
}

@test "secrets-proxy: refused: pipelined Hosts in one write, fronting both ways, userinfo in an absolute URI, a 70 KiB head: no secret leaves for another host" {
	px_run
	: >"$PX_DIR/other.log"
	: >"$PX_DIR/api.log"
	# two requests in one TLS record: the second names another host and carries the placeholder
	raw 'GET /p1 HTTP/1.1\r\nHost: api.example.test\r\n\r\nGET /p2 HTTP/1.1\r\nHost: other.test\r\nAuthorization: Bearer {PH}\r\n\r\n'
	[[ "$output" == *'"path": "/p1"'* ]] || fail "the first request: $output"
	[[ "$output" != *'"path": "/p2"'* ]] || fail "the second Host was served: $output"
	# the same in one plain HTTP write (port 80, the first Host allowed, the second not)
	raw 'GET /p1 HTTP/1.1\r\nHost: front.test\r\n\r\nGET /p2 HTTP/1.1\r\nHost: hidden.test\r\n\r\n' plain - front.test
	[[ "$output" == *'"path": "/p1"'* && "$output" != *'"path": "/p2"'* ]] || fail "plain, pipelined: $output"
	! grep -q "hidden.test" "$PX_DIR/other80.log" || fail "upstream got: $(cat "$PX_DIR/other80.log")"
	# fronting: the secret's host in Host under another allowed server name, and the reverse
	# (other.test holds no secret: its flow is not terminated, the upstream's own certificate
	# is seen, so the placeholder reaches it as it is)
	run in_ctr env SSL_CERT_FILE=/upstream-ca.pem node /raw-tls.js other.test other.test - \
		'GET /front HTTP/1.1\r\nHost: api.example.test\r\nAuthorization: Bearer {PH}\r\nConnection: close\r\n\r\n'
	[[ "$output" == "HTTP/1.1 200"* ]] || fail "Host api.example.test under server name other.test: $output"
	[[ "$output" != *"$(sha "Bearer $SEC_VALUE")"* ]] || fail "substituted under server name other.test"
	grep -q "Bearer agentrt-" "$PX_DIR/other.log" || fail "other.test did not get the placeholder: $(cat "$PX_DIR/other.log")"
	raw 'GET /front HTTP/1.1\r\nHost: other.test\r\nAuthorization: Bearer {PH}\r\n\r\n'
	[[ "$output" == "HTTP/1.1 421"* ]] || fail "Host other.test under server name api.example.test: $output"
	# userinfo in an absolute-form target, either way round
	raw 'GET http://api.example.test@other.test/u HTTP/1.1\r\nHost: api.example.test\r\nAuthorization: Bearer {PH}\r\n\r\n'
	[[ "$output" == "HTTP/1.1 400"* ]] || fail "absolute form with userinfo: $output"
	raw 'GET https://other.test:x@api.example.test/u HTTP/1.1\r\nHost: api.example.test\r\nAuthorization: Bearer {PH}\r\n\r\n'
	[[ "$output" == "HTTP/1.1 400"* ]] || fail "absolute form with userinfo (reverse): $output"
	# a head over the proxy's 64 KiB: refused whole, the placeholder after it never sent
	raw "GET /long HTTP/1.1\r\nHost: api.example.test\r\nX-Long: $(printf '%*s' 70000 '' | tr ' ' a)\r\nAuthorization: Bearer {PH}\r\n\r\n"
	[[ "$output" != *'"path": "/long"'* ]] || fail "a 70 KiB head went out: ${output:0:300}"
	! grep -q "GET /long\|GET /p2\|GET /u\|/front" "$PX_DIR/api.log" || fail "api.example.test got: $(grep "GET /long\|GET /p2\|GET /u\|/front" "$PX_DIR/api.log" | cut -c1-200)"
	! grep -qF "$SEC_VALUE" "$PX_DIR/other.log" "$PX_DIR/other80.log" || fail "the value went to other.test"
	run rt audit "$ID"
	[[ "$output" == *'"refused"'* ]] || fail "nothing recorded as refused: $output"
}

@test "secrets-proxy: refused: a request inside a WebSocket tunnel (another Host, the placeholder) is bytes: nothing substituted, nothing sent elsewhere" {
	px_run
	: >"$PX_DIR/other.log"
	: >"$PX_DIR/api.log"
	raw 'GET /ws HTTP/1.1\r\nHost: api.example.test\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nAuthorization: Bearer {PH}\r\n\r\n{PAUSE}GET /inner HTTP/1.1\r\nHost: other.test\r\nAuthorization: Bearer {PH}\r\n\r\n'
	[[ "$output" == "HTTP/1.1 101"* ]] || fail "no 101: $output"
	# the upstream echoes the tunnel's bytes: the placeholder as the container sent it
	[[ "$output" == *"echo:GET /inner HTTP/1.1"*"Authorization: Bearer agentrt-"* ]] || fail "not echoed as sent: $output"
	[[ "$output" != *"$SEC_VALUE"* ]] || fail "the value came back through the tunnel"
	[ "$(grep -cF "Bearer $SEC_VALUE" "$PX_DIR/api.log")" -eq 1 ] || fail "api.example.test: $(grep -c Bearer "$PX_DIR/api.log") values"
	! grep -q "/inner" "$PX_DIR/other.log" || fail "other.test got the inner request"
}

@test "secrets-proxy: plain HTTP to a host with HTTP rules: the rules hold there too" {
	jq '.name = "px-rules80" | .egress.http = [{"host": "api.example.test", "methods": ["GET"], "paths": ["/v1/"]}]' \
		"$PX_PROFILE" >"$PX_DIR/rules80.json"
	px_run "$PX_DIR/rules80.json"
	: >"$PX_DIR/api80.log"
	run in_ctr sh -c "curl -sS --max-time 10 -o /dev/null -w '%{http_code}' http://api.example.test/v2/x"
	[ "$output" = 403 ] || fail "GET /v2/x over plain HTTP: $output"
	run in_ctr sh -c "curl -sS --max-time 10 -o /dev/null -w '%{http_code}' -X POST -d x http://api.example.test/v1/x"
	[ "$output" = 403 ] || fail "POST /v1/x over plain HTTP: $output"
	! grep -q "^GET /v2/x\|^POST" "$PX_DIR/api80.log" || fail "went out: $(cat "$PX_DIR/api80.log")"
	# the control
	run in_ctr sh -c "curl -sS --max-time 10 -o /dev/null -w '%{http_code}' http://api.example.test/v1/x"
	[ "$output" = 200 ] || fail "control: $output"
}

@test "secrets-proxy: a second ClientHello after a HelloRetryRequest naming another server is refused" {
	px_run
	in_ctr nslookup front.test >/dev/null
	hello_to 203.0.113.20 front.test hrr:hidden.test
	sleep 0.3
	run rt audit "$ID"
	[[ "$output" == *'"reason":"the ClientHello after a HelloRetryRequest names another server"'* ]] ||
		fail "not refused: $(grep tls_flow <<<"$output")"
	# the control: the same name again goes on to the server
	hello_to 203.0.113.20 front.test hrr:front.test
	sleep 0.3
	run rt audit "$ID"
	[ "$(grep -c 'HelloRetryRequest' <<<"$output")" -eq 1 ] || fail "control refused: $(grep tls_flow <<<"$output")"
}

# reset_after SECONDS REQUEST: REQUEST ({PH} the placeholder) over TLS to api.example.test from
# the container's namespace, then a reset (SO_LINGER 0) after SECONDS, before any answer
reset_after() {
	local ph
	ph=$(in_ctr sh -c 'printf %s "$API_TOKEN"')
	ip netns exec "$PX_CTR" python3 - "$1" "${2//\{PH\}/$ph}" <<-'PYEOF'
		import socket, ssl, struct, sys, time
		ctx = ssl.create_default_context()
		ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
		raw = socket.create_connection(("203.0.113.10", 443), timeout=5)
		s = ctx.wrap_socket(raw, server_hostname="api.example.test")
		s.sendall(sys.argv[2].encode().decode("unicode_escape").encode())
		time.sleep(float(sys.argv[1]))
		s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
		s.close()
	PYEOF
}

@test "secrets-proxy: unrecorded-reset: a request with the secret whose client resets before the answer is recorded" {
	px_run
	# the upstream acts on it (answers after 1 s); the client is gone by then
	reset_after 0.3 'DELETE /delay/resource HTTP/1.1\r\nHost: api.example.test\r\nAuthorization: Bearer {PH}\r\n\r\n'
	# a head with the secret and half a body
	reset_after 0.3 'POST /half HTTP/1.1\r\nHost: api.example.test\r\nAuthorization: Bearer {PH}\r\nContent-Length: 100\r\n\r\n0123456789'
	sleep 1.5
	grep -q "^DELETE /delay/resource" "$PX_DIR/api.log" && grep -q "^POST /half" "$PX_DIR/api.log" &&
		grep -qF "Bearer $SEC_VALUE" "$PX_DIR/api.log" || fail "upstream log: $(cat "$PX_DIR/api.log")"
	run rt audit "$ID"
	grep '"kind":"http"' <<<"$output" | grep '"method":"DELETE"' | grep '"path":"/delay/resource"' |
		grep -q '"secret":"API_TOKEN"' || fail "the DELETE is not in the trail: $(grep '"http"' <<<"$output")"
	grep '"kind":"http"' <<<"$output" | grep '"method":"POST"' | grep '"path":"/half"' |
		grep -q '"refused":"cut during the request"' || fail "the POST is not in the trail: $(grep '"http"' <<<"$output")"
}

@test "secrets-proxy: leak: TRACE echoes the request: no secret put into a TRACE or TRACK, any case" {
	px_run
	local m
	for m in TRACE TRACK trace; do
		run in_ctr sh -c "curl -sS --max-time 10 -X $m -H \"Authorization: Bearer \$API_TOKEN\" https://api.example.test/echo"
		[ "$status" -eq 0 ] || fail "curl -X $m: $output"
		[[ "$output" != *"$SEC_VALUE"* ]] || fail "$m echoed the value: $output"
		[[ "$output" == *"Authorization: Bearer agentrt-secret-"* ]] || fail "$m not echoed: $output"
	done
	! grep -qF "$SEC_VALUE" "$PX_DIR/api.log" || fail "the value went out in a TRACE: $(cat "$PX_DIR/api.log")"
	run rt audit "$ID"
	[[ "$output" == *'"action":"sent unchanged (TRACE echoes the request)"'* ]] || fail "not recorded"
	# the control: the same request as GET gets the value
	run in_ctr sh -c 'curl -sS --max-time 10 -H "Authorization: Bearer $API_TOKEN" https://api.example.test/echo'
	[[ "$output" == *"\"auth_sha256\": \"$(sha "Bearer $SEC_VALUE")\""* ]] || fail "control: $output"
}

@test "secrets-proxy: h2c upgrade: only a WebSocket upgrade opens a tunnel, HTTP rules and Host hold after an Upgrade: h2c" {
	jq '.name = "px-h2c" | .egress.http = [{"host": "api.example.test", "methods": ["GET"], "paths": ["/ws"]}]' \
		"$PX_PROFILE" >"$PX_DIR/h2c.json"
	px_run "$PX_DIR/h2c.json"
	local up='GET /ws HTTP/1.1\r\nHost: %s\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: %s\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n{PAUSE}'
	# a server that speaks HTTP/2 after the 101 takes any method and path: past the rules
	# (the echo stands for it)
	raw "$(printf "$up" api.example.test h2c)DELETE /admin HTTP/1.1\r\nHost: api.example.test\r\n\r\n"
	[[ "$output" != *"101"* && "$output" != *"echo:DELETE /admin"* ]] || fail "h2c tunnel past the rules: $output"
	[[ "$output" == *'"path": "/ws"'* && "$output" == *"403 Forbidden"* ]] || fail "not refused as HTTP/1.1: $output"
	# offered with websocket, the server may pick h2c
	raw "$(printf "$up" api.example.test 'h2c, websocket')DELETE /admin HTTP/1.1\r\nHost: api.example.test\r\n\r\n"
	[[ "$output" != *"echo:DELETE /admin"* ]] || fail "h2c in a list: $output"
	! grep -q "^Upgrade: h2c" "$PX_DIR/api.log" || fail "the upstream was offered h2c: $(cat "$PX_DIR/api.log")"
	# plain HTTP: behind front.test's upgrade, hidden.test (same address, not allowed)
	raw "$(printf "$up" front.test h2c)GET /x HTTP/1.1\r\nHost: hidden.test\r\n\r\n" plain - front.test
	[[ "$output" != *"echo:GET /x HTTP/1.1"* ]] || fail "fronted through an h2c tunnel: $output"
	# the control: a WebSocket upgrade still opens one
	raw 'GET /ws HTTP/1.1\r\nHost: api.example.test\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n{PAUSE}hello-ws'
	[[ "$output" == "HTTP/1.1 101"*"echo:hello-ws"* ]] || fail "websocket: $output"
}

@test "secrets-proxy: rule bypass: ..; segments, %u and overlong dots, method override and X-Original-URL headers: refused as the rules say" {
	jq '.name = "px-bypass" | .egress.http = [{"host": "api.example.test", "methods": ["GET", "POST"], "paths": ["/v1/"]}]' \
		"$PX_PROFILE" >"$PX_DIR/bypass.json"
	px_run "$PX_DIR/bypass.json"
	local c m p h want
	# Tomcat and Spring read "..;" as "..", IIS reads %u002e and %c0%ae as "."
	for c in "GET /v1/..;/admin 403 -" "GET /v1/.;/../admin 403 -" "GET /v1/%u002e%u002e/admin 403 -" \
		"GET /v1/%c0%ae%c0%ae/admin 403 -" "GET /v1/%252e%252e/admin 403 -" \
		"POST /v1/x 403 X-HTTP-Method-Override:DELETE" "POST /v1/x 403 X-HTTP-Method:delete" \
		"POST /v1/x 403 X-Method-Override:PUT" "POST /v1/x 200 X-HTTP-Method-Override:GET" \
		"GET /v1/x 403 X-Original-URL:/admin" "GET /v1/x 403 X-Rewrite-URL:/v1/../admin" \
		"GET /v1/x 200 X-Original-URL:/v1/y?z=1" \
		"GET /v1/a;b=c 200 -" "GET /v1/x 200 -"; do
		read -r m p want h <<<"$c"
		[ "$h" = - ] && h="X-Nothing: 1"
		run in_ctr sh -c "curl -sS --max-time 10 --path-as-is -X $m -H '$h' -o /dev/null -w '%{http_code}' 'https://api.example.test$p'"
		[ "$output" = "$want" ] || fail "$m $p $h: got $output, want $want"
	done
	! grep -qi "admin\|Override: \(DELETE\|PUT\)\|X-HTTP-Method: delete" "$PX_DIR/api.log" ||
		fail "went out: $(cat "$PX_DIR/api.log")"
}

@test "secrets-proxy: rule bypass: double-encoding, overlong-dots, fragment-dots, rewrite-raw-overlong: refused as the rules say" {
	jq '.name = "px-bypass2" | .egress.http = [{"host": "api.example.test", "methods": ["GET"], "paths": ["/v1/"]}]' \
		"$PX_PROFILE" >"$PX_DIR/bypass2.json"
	px_run "$PX_DIR/bypass2.json"
	local c p h want
	# what a server that decodes twice, or decodes overlong UTF-8 (IIS), or cuts at a NUL or a
	# ';' once decoded, reads as "/v1/../bypass-zone" (found by fuzz_httprule)
	for c in "/v1/%25%32%65%25%32%65/bypass-zone 403 -" "/v1/%%32%65%%32%65/bypass-zone 403 -" \
		"/v1/%25u002e%25u002e/bypass-zone 403 -" "/v1/%25c0%25ae%25c0%25ae/bypass-zone 403 -" \
		"/v1/%e0%81%9c..%e0%81%9cbypass-zone 403 -" "/v1/%f0%80%80%ae%f0%80%80%ae/bypass-zone 403 -" \
		"/v1/..%00/bypass-zone 403 -" "/v1/..%3b/bypass-zone 403 -" \
		"/v1/x 403 X-Original-URL:/v1/%f0%80%80%ae%f0%80%80%ae/bypass-zone" \
		"/v1/%e4%b8%ad%20x 200 -" "/v1/x 200 X-Original-URL:/v1/y"; do
		read -r p want h <<<"$c"
		[ "$h" = - ] && h="X-Nothing: 1"
		run in_ctr sh -c "curl -sS --max-time 10 --path-as-is -H '$h' -o /dev/null -w '%{http_code}' 'https://api.example.test$p'"
		[ "$output" = "$want" ] || fail "GET $p $h: got $output, want $want"
	done
	# a rewrite header's raw bytes: "\xc0\xae" is an overlong '.'
	run in_ctr sh -c 'curl -sS --max-time 10 -H "$(printf "X-Rewrite-URL: /v1/\300\256\300\256/bypass-zone")" -o /dev/null -w "%{http_code}" https://api.example.test/v1/x'
	[ "$output" = 403 ] || fail "X-Rewrite-URL with raw overlong dots: got $output, want 403"
	# nginx cuts the path at a '#' (curl does not send one: raw)
	raw 'GET /v1/..#/bypass-zone HTTP/1.1\r\nHost: api.example.test\r\n\r\n'
	[[ "$output" == "HTTP/1.1 403"* ]] || fail "a '#' after a dot segment: $output"
	raw 'GET /v1/x HTTP/1.1\r\nHost: api.example.test\r\nX-Rewrite-URL: /v1/..#/bypass-zone\r\n\r\n'
	[[ "$output" == "HTTP/1.1 403"* ]] || fail "a '#' in X-Rewrite-URL: $output"
	! grep -q "bypass-zone" "$PX_DIR/api.log" || fail "went out: $(grep -B1 -A1 bypass-zone "$PX_DIR/api.log")"
	run rt audit "$ID"
	[ "$(grep -c '"refused":"the path is not in normal form' <<<"$output")" -ge 9 ] ||
		fail "not recorded as refused: $(grep '"kind":"http"' <<<"$output")"
}

@test "secrets-proxy: in-flight: a request with the secret still waiting for its answer when the container ends is recorded" {
	px_run
	local ph
	ph=$(in_ctr sh -c 'printf %s "$API_TOKEN"')
	# the upstream answers after 3 s; the container is deleted after 0.5 s
	ip netns exec "$PX_CTR" timeout 8 python3 - "$ph" 2>"$PX_DIR/inflight-client.err" <<-'PYEOF' &
		import socket, ssl, sys, time
		ctx = ssl.create_default_context()
		ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
		s = ctx.wrap_socket(socket.create_connection(("203.0.113.10", 443), timeout=5),
		                    server_hostname="api.example.test")
		s.sendall(("DELETE /delay/3/thing HTTP/1.1\r\nHost: api.example.test\r\n"
		           "Authorization: Bearer " + sys.argv[1] + "\r\n\r\n").encode())
		time.sleep(6)
	PYEOF
	local client=$! mpid procs p alive conn= i
	mpid=$(cut -d' ' -f1 "$TEST_ROOT/$ID/monitor.pid")
	procs=$(pgrep -P "$mpid" -x agentrt-proxy) || fail "no proxy process under the monitor $mpid"
	# until the proxy has forked the connection's process and sent the request upstream (0.5 s
	# when the machine is idle; a fixed wait missed it on a busy CI machine)
	for i in $(seq 100); do
		conn=$(for p in $procs; do pgrep -P "$p"; done || true)
		[ -n "$conn" ] && grep -q "^DELETE /delay/3/thing" "$PX_DIR/api.log" 2>/dev/null && break
		sleep 0.05
	done
	procs="$procs $conn"
	rt delete --force "$ID"
	wait "$client" || true
	if ! grep -q "^DELETE /delay/3/thing" "$PX_DIR/api.log" || ! grep -qF "Bearer $SEC_VALUE" "$PX_DIR/api.log"; then
		# (seen once in a CI: nothing arrived upstream; what the client and the trail said)
		run rt audit "$ID"
		fail "upstream log: $(cat "$PX_DIR/api.log"); client: $(cat "$PX_DIR/inflight-client.err"); trail: $(grep -E '"(http|tls_flow|net|denied|audit_error)"' <<<"$output" | tail -8)"
	fi
	run rt audit "$ID"
	grep '"kind":"http"' <<<"$output" | grep '"method":"DELETE"' | grep '"path":"/delay/3/thing"' |
		grep '"secret":"API_TOKEN"' | grep -q '"refused":"the proxy stopped (its container ended)' ||
		fail "the DELETE is not in the trail: $(grep '"http"\|tls_flow' <<<"$output")"
	run rt audit verify "$ID"
	[ "$status" -eq 0 ] || fail "audit verify: $output"
	# the connection's process was there, and none is left (its grace is bounded)
	[ "$(wc -w <<<"$procs")" -ge 2 ] || fail "no connection process: $procs"
	for _ in $(seq 30); do
		alive=0
		for p in $procs; do kill -0 "$p" 2>/dev/null && alive=1; done
		[ "$alive" = 0 ] && break
		sleep 0.1
	done
	[ "$alive" = 0 ] || fail "proxy processes left: $procs"
}

@test "secrets-proxy: quic-bypass: HTTP/3 (UDP 443) to the secret's host is refused and recorded; other UDP as the allowlist says" {
	px_run
	local p
	for p in 443 4433; do
		px_bg "$PX_INET" timeout 20 python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("203.0.113.10", int(sys.argv[1])))
while True:
    d, _ = s.recvfrom(2048)
    open(sys.argv[2], "ab").write(d + b"\n")' "$p" "$PX_DIR/udp$p.log"
	done
	# until both are bound (python's start took more than a fixed 0.3 s on a busy machine)
	for _ in $(seq 100); do
		[ "$(ip netns exec "$PX_INET" ss -Hlun src 203.0.113.10 | grep -c ':443 \|:4433 ')" -eq 2 ] && break
		sleep 0.05
	done
	in_ctr nslookup api.example.test >/dev/null
	# a datagram each (an HTTP/3 client's Initial would carry any method and path)
	run in_ctr node -e '
		const s = require("dgram").createSocket("udp4");
		let n = 0;
		for (const p of [443, 4433])
			s.send("quic-probe-" + p, p, "203.0.113.10", () => { if (++n === 2) setTimeout(() => process.exit(0), 300); });'
	sleep 0.5
	[ ! -s "$PX_DIR/udp443.log" ] || fail "UDP 443 went past the proxy: $(cat "$PX_DIR/udp443.log")"
	grep -q "quic-probe-4433" "$PX_DIR/udp4433.log" 2>/dev/null || fail "control: UDP 4433 did not arrive"
	run rt audit "$ID"
	grep '"kind":"denied"' <<<"$output" | grep '"proto":"udp"' | grep -q '"port":443' ||
		fail "not recorded: $(grep -v '"kind":"program"' <<<"$output" | tail -5)"
}

@test "secrets-proxy: placeholder-in-target: the placeholder in a request's query is sent unchanged and recorded" {
	px_run
	# the secret's own host (never substituted in the target), and plain HTTP to another host
	run in_ctr sh -c 'curl -sS --max-time 10 "https://api.example.test/collect?k=$API_TOKEN"; curl -sS --max-time 10 "http://front.test/c?k=$API_TOKEN"'
	grep -q "^GET /collect?k=agentrt-secret-" "$PX_DIR/api.log" && grep -q "^GET /c?k=agentrt-secret-" "$PX_DIR/other80.log" ||
		fail "not sent: $(cat "$PX_DIR/api.log" "$PX_DIR/other80.log")"
	run rt audit "$ID"
	for h in api.example.test front.test; do
		grep '"kind":"secret_placeholder"' <<<"$output" | grep "\"host\":\"$h\"" |
			grep -q '"action":"sent unchanged (in the request target)"' ||
			fail "$h not recorded: $(grep -v '"kind":"program"' <<<"$output" | tail -6)"
	done
}

@test "secrets-proxy: proxy-flood-rotation: a flood of proxied requests cannot rotate earlier evidence out, and is counted" {
	# a 2 MiB trail: the floods below are 3.6 MB of records in full.  Coalesced, they are ~200
	# records a key and then 21 a second (7 KB/s), so their length matters: under a load of 100
	# they took 110 s and 1.3 MB in full records, past a 1 MiB trail (a flood that long at that
	# rate is the retention's, THREAT-MODEL.md)
	jq '.name = "px-small-trail" | .audit = {"enabled": true, "maxSize": "2m"}' "$PX_PROFILE" >"$PX_DIR/small.json"
	px_run "$PX_DIR/small.json"
	local verified total
	# plain HTTP requests on one connection, each an http record of the proxy (~350 bytes):
	# a thousand; then the evidence; then 8,000 more
	in_ctr sh -c 'curl -sS --max-time 60 -o /dev/null "http://front.test/f1/[1-1000]"' || fail "flood 1"
	run in_ctr sh -c 'curl -sS --max-time 10 -H "Authorization: Bearer $API_TOKEN" https://api.example.test/evidence'
	[[ "$output" == *"\"auth_sha256\": \"$(sha "Bearer $SEC_VALUE")\""* ]] || fail "evidence: $output"
	in_ctr sh -c 'curl -sS --max-time 120 -o /dev/null "http://front.test/f2/[1-8000]"' || fail "flood 2"
	# and 1,500 connections refused, each naming another Host (a key per name would never fill)
	in_ctr node -e '
		let left = 1500, open = 0;
		const net = require("net");
		const one = () => {
			if (left-- <= 0) { if (open === 0) process.exit(0); return; }
			open++;
			const s = net.connect(80, "203.0.113.20", () =>
				s.write("GET / HTTP/1.1\r\nHost: r" + left + ".invalid\r\n\r\n"));
			s.on("error", () => {});
			s.on("close", () => { open--; one(); });
		};
		for (let i = 0; i < 20; i++) one();
		setTimeout(() => process.exit(1), 120000);' || fail "refused connections"
	sleep 2.5 # the counted records of the last second
	rt kill "$ID" KILL
	wait_for_status "$ID" stopped 20
	rt delete "$ID"
	run rt audit verify "$ID"
	[ "$status" -eq 0 ] || fail "verify: $output"
	verified=$output
	echo "# $verified" >&3
	[ -n "$(rt audit --format json "$ID" | jq -c 'select(.kind == "http" and .path == "/evidence" and .secret == "API_TOKEN")')" ] ||
		fail "the evidence is gone ($verified)"
	[[ "$verified" != *"dropped by retention"* ]] || fail "retention dropped records: $verified"
	# honest counts: full records plus counted ones are every request
	total=$(rt audit --format json "$ID" | jq -r 'select(.kind == "http" and .secret == null and
		(.host == "front.test" or .coalesced != null)) | (.coalesced // 1)' | awk '{n += $1} END {print n + 0}')
	echo "# 9000 requests, $total counted in the trail" >&3
	[ "$total" -eq 9000 ] || fail "$total of 9000 requests in the trail"
	total=$(rt audit --format json "$ID" | jq -r 'select(.kind == "tls_flow" and .verdict == "refused") | (.coalesced // 1)' |
		awk '{n += $1} END {print n + 0}')
	echo "# 1500 refused connections, $total counted in the trail" >&3
	[ "$total" -eq 1500 ] || fail "$total of 1500 refused connections in the trail"
}

# copy_curl: the host's curl and the libraries it loads into the bundle's rootfs (a child's root
# is the parent's image: the binds of the parent's config are not its)
copy_curl() {
	local f
	for f in /usr/bin/curl $(ldd /usr/bin/curl | grep -o '/[^ ]*'); do
		cp -L --parents "$f" "$ROOTFS" 2>/dev/null || true
	done
}

# sub_ws: a workspace for the parent, so that it may start children (docs/subagents.md)
sub_ws() {
	command -v slirp4netns >/dev/null || skip "needs slirp4netns"
	copy_curl
	mkdir -p "$ROOTFS/workspace" "$ROOTFS/run" "$BUNDLE/ws"
	update_config ".process.cwd = \"/workspace\" |
		.mounts += [{\"destination\": \"/workspace\", \"type\": \"bind\", \"source\": \"$BUNDLE/ws\", \"options\": [\"rbind\", \"rw\"]}]"
}

# child_uses_parent_secret [PROFILE]: a child given no secret sends its parent's placeholder to
# the secret's host; fails when the value arrives there
child_uses_parent_secret() {
	px_run "$@"
	# the parent keeps its placeholder where its tools read it (a file of the workspace): the
	# placeholder is no secret, the value is
	in_ctr sh -c 'echo "$API_TOKEN" >/workspace/.token'
	# control: the parent's own request gets the value
	in_ctr sh -c 'curl -sS --max-time 10 -H "Authorization: Bearer $(cat /workspace/.token)" https://api.example.test/parent' >/dev/null
	grep -qF "Bearer $SEC_VALUE" "$PX_DIR/api.log" || fail "control: not substituted for the parent: $(cat "$PX_DIR/api.log")"
	: >"$PX_DIR/api.log"
	# a child given no secret (a package's tests, an install script) that may reach the host reads
	# the placeholder and sends it there (-k: it need not trust the parent's CA for that)
	run in_ctr /run/agentrt/bin/agentrt sub run --name nosec --allow api.example.test -- sh -c \
		'echo "[$API_TOKEN]"; curl -ksS --max-time 10 -H "Authorization: Bearer $(cat /workspace/.token)" https://api.example.test/child'
	[[ "$output" == "[]"* ]] || fail "the child has a secret: $output"
	# the request arrived, with the placeholder as it was sent
	grep -q "^GET /child" "$PX_DIR/api.log" || fail "the child's request did not arrive: $output"
	! grep -qF "$SEC_VALUE" "$PX_DIR/api.log" || fail "the child used its parent's secret: $(cat "$PX_DIR/api.log")"
	grep -q "Authorization: Bearer agentrt-secret-[0-9a-f]\{32\}" "$PX_DIR/api.log" || fail "$(cat "$PX_DIR/api.log")"
	run rt audit "$ID"
	[[ "$output" != *"$SEC_VALUE"* ]] || fail "the value is in the trail"
	# honest use: the parent's own requests still get the value, after the child's
	in_ctr sh -c 'curl -sS --max-time 10 -H "Authorization: Bearer $API_TOKEN" https://api.example.test/parent-after' >/dev/null
	grep -qF "Bearer $SEC_VALUE" "$PX_DIR/api.log" || fail "the parent's request after the child's lost its value"
}

@test "escape: a sub-agent not given the secret has its parent's placeholder substituted by the parent's proxy" {
	sub_ws
	child_uses_parent_secret
	# the parent's proxy terminated the child's flow (its Host checked, its request recorded)
	# and put no secret in; the trail says why
	rt audit --format json "$ID" | jq -se 'map(select(.kind == "http" and .path == "/child" and .secret == null)) | length == 1' >/dev/null ||
		fail "no http record of the child's request: $(rt audit "$ID" | grep /child)"
	run rt audit "$ID"
	[[ "$output" == *'"kind":"secret_placeholder"'*"a sub-agent's request"* ]] ||
		fail "not recorded: $(grep secret_placeholder <<<"$output")"
}

@test "secrets-proxy: a sub-agent not given the secret, to a host with an HTTP rule (the child's own proxy, then the parent's): not substituted" {
	sub_ws
	jq '.name = "secrets-proxy-rule" | .egress.http = [{"host": "api.example.test"}]' "$PX_PROFILE" >"$BUNDLE/rule.json"
	child_uses_parent_secret "$BUNDLE/rule.json"
}

# child_own_secret [PROFILE]: a child given --secret reaches the secret's host with the value
child_own_secret() {
	px_run "$@"
	pph=$(in_ctr sh -c 'echo "$API_TOKEN"')
	run in_ctr /run/agentrt/bin/agentrt sub run --name sec --secret API_TOKEN --allow api.example.test -- sh -c \
		'echo "[$API_TOKEN]"; curl -sS --max-time 10 --cacert /dev/agentrt-ca-bundle.crt -H "Authorization: Bearer $API_TOKEN" https://api.example.test/childsec'
	[ "$status" -eq 0 ] || fail "the child's request: $output"
	[[ "$output" =~ ^\[agentrt-secret-[0-9a-f]{32}\] && "$output" != *"$pph"* ]] || fail "the child's placeholder: $output"
	[[ "$output" == *"\"auth_sha256\": \"$(sha "Bearer $SEC_VALUE")\""* ]] || fail "upstream did not get the value: $output"
	[[ "$output" != *"$SEC_VALUE"* ]] || fail "the child saw the value"
	rt audit --format json "$ID.sec" | jq -se 'map(select(.kind == "http" and .path == "/childsec" and .secret == "API_TOKEN")) | length == 1' >/dev/null ||
		fail "the child's trail: $(rt audit "$ID.sec" | grep -i 'http\|tls')"
}

@test "secrets-proxy: a sub-agent given --secret gets the value at the secret's host through its own proxy and its parent's" {
	sub_ws
	child_own_secret
}

@test "secrets-proxy: ... and to a host with an HTTP rule of the parent's" {
	sub_ws
	jq '.name = "secrets-proxy-rule" | .egress.http = [{"host": "api.example.test", "methods": ["GET"]}]' "$PX_PROFILE" >"$BUNDLE/rule.json"
	child_own_secret "$BUNDLE/rule.json"
	# the parent's rules hold for the child: a POST is refused
	run in_ctr /run/agentrt/bin/agentrt sub run --name post --secret API_TOKEN --allow api.example.test -- sh -c \
		'curl -sS --max-time 10 --cacert /dev/agentrt-ca-bundle.crt -X POST -H "Authorization: Bearer $API_TOKEN" https://api.example.test/childpost -o /dev/null -w "%{http_code}\n"'
	[[ "$output" == *403* ]] || fail "the child's POST: $output"
	! grep -q "/childpost" "$PX_DIR/api.log" || fail "the POST arrived"
}

# mon and px (the caller's): the container $ID's monitor and its proxy process
find_proxy() {
	mon=$(cut -d' ' -f1 "$TEST_ROOT/$ID/monitor.pid")
	px=$(pgrep -P "$mon" -x agentrt-proxy | head -1)
	[ -n "$px" ] || fail "no proxy under the monitor $mon"
}

@test "secrets-proxy: escape: handshake-flood-cpu: a container held to 0.25 CPU sending ClientHellos in a loop keeps its proxy to its handshake budget; the secret still reaches its host" {
	[ -x /usr/bin/node ] || skip "no node on the host"
	cp "$REPO_ROOT/tests/helpers/hello-flood.js" "$ROOTFS/hello-flood.js"
	update_config '.linux.resources.cpu = {"quota": 25000, "period": 100000}'
	px_run
	local mon px c0 t0 out used wall answered
	find_proxy
	# the proxy's own time and its connections' (it reaps them)
	c0=$(awk '{print $14 + $15 + $16 + $17}' "/proc/$px/stat")
	t0=$(date +%s%N)
	# a ClientHello of fixed bytes costs the client no cryptography; each cost the proxy (outside
	# the container's cgroup) a process, a lookup, a leaf certificate and a handshake's key
	# exchange and signature: before, 1,156 of them in 4 s took 2.46 s of its CPU, twice what the
	# container itself may use, uncharged
	# (rounds of 4 s until the flood is past the budget's burst: on a machine loaded by other
	# work a round sent 89)
	local sent=0 round
	answered=0
	for round in 1 2 3 4 5; do
		out=$(in_ctr node /hello-flood.js 203.0.113.10 api.example.test 4)
		[[ "$out" =~ ^sent\ ([0-9]+)\ answered\ ([0-9]+)$ ]] || fail "$out"
		sent=$((sent + BASH_REMATCH[1])) answered=$((answered + BASH_REMATCH[2]))
		[ "$answered" -lt 160 ] || break
	done
	out="sent $sent answered $answered in $round rounds"
	sleep 1
	used=$((($(awk '{print $14 + $15 + $16 + $17}' "/proc/$px/stat") - c0) * 1000 / $(getconf CLK_TCK)))
	wall=$((($(date +%s%N) - t0) / 1000000))
	echo "# $out; the proxy: $used ms of CPU in $wall ms" >&3
	[ "$answered" -ge 128 ] || fail "the flood was too small to show anything: $out"
	# what the proxy took is within its budget (128 at once, then 32 a second), whatever the
	# build's or the machine's speed: that is the guarantee.  What a handshake costs the proxy
	# is the machine's: about 5 ms where this test was written (under a quarter of a CPU for the
	# budget's worth), 19 ms on a machine whose page faults cost ~20 us (3.8 s in 5.8 s, the
	# same for the build before and after 2026-12-06's changes).  The CPU bound is one CPU; the
	# budget's check above is what catches an unbudgeted proxy (1,156 handshakes in 4 s)
	[ "$answered" -le $((128 + 32 * (wall / 1000 + 2))) ] || fail "the proxy took $answered in $wall ms"
	# (ASan's build spends ~65 ms of CPU on a handshake: the budget's 32 a second are two CPUs
	# there, so only the budget above is its bound)
	if ! ldd "$AGENTRT" 2>/dev/null | grep -q libasan; then
		[ "$used" -lt "$wall" ] || fail "the proxy used $used ms of CPU in $wall ms"
	fi
	# honest use after the flood: the value reaches its host (the connections queued behind the
	# budget go first)
	run in_ctr sh -c 'curl -sS --max-time 30 -H "Authorization: Bearer $API_TOKEN" https://api.example.test/after'
	[[ "$output" == *"\"auth_sha256\": \"$(sha "Bearer $SEC_VALUE")\""* ]] || fail "after the flood: $output"
}

@test "secrets-proxy: escape: child-conn-starve: a sub-agent holding its parent's proxy connections left the parent none" {
	# the proxy runs at most 128 connection processes; a child's connections (its slirp4netns, in
	# the parent's namespace) went to the same count, so a child with an allowed host took every
	# one and the parent's own HTTPS, its secret's included, was cut at once
	sub_ws
	px_run
	local mon px n=0 i
	find_proxy
	in_ctr /run/agentrt/bin/agentrt sub run --name hog --detach --allow api.example.test -- sh -c \
		'for i in $(seq 150); do curl -ks --max-time 40 -o /dev/null https://api.example.test/slow & done; wait' >/dev/null ||
		fail "sub run"
	# the child's slow downloads: each a connection process of the parent's proxy for 30 s
	for i in $(seq 100); do
		n=$(pgrep -P "$px" | wc -l)
		[ "$n" -ge 60 ] && break
		sleep 0.1
	done
	[ "$n" -ge 60 ] || fail "the child's connections did not come: $n"
	sleep 2
	echo "# the proxy's connection processes with the child's downloads: $(pgrep -P "$px" | wc -l)" >&3
	run in_ctr sh -c 'curl -sS --max-time 10 -H "Authorization: Bearer $API_TOKEN" https://api.example.test/parent'
	[[ "$output" == *"\"auth_sha256\": \"$(sha "Bearer $SEC_VALUE")\""* ]] || fail "the parent's request: $output"
	in_ctr /run/agentrt/bin/agentrt sub kill hog KILL >/dev/null 2>&1 || true
}

@test "secrets-proxy: escape: stall-cpu: connections that send the first byte of a ClientHello or request and stall keep the proxy idle" {
	[ -x /usr/bin/node ] || skip "no node on the host"
	cp "$REPO_ROOT/tests/helpers/stall.js" "$ROOTFS/stall.js"
	px_run
	local mon px c0 t0 out used wall port limit=8
	# a sanitizer build's proxy spends some eight times as much on each connection it takes
	# (the bound: an eighth of a CPU, taking 120 connections' processes included, 4-9 % here;
	# the old busy wait took 36 %)
	! ldd "$AGENTRT" 2>/dev/null | grep -q libasan || limit=2
	find_proxy
	# each connection's process waited for the rest of the ClientHello (or request head) by
	# peeking at what it had every 2 ms, awake, for up to 10 s: 120 connections that sent one
	# byte took 4 s of its CPU in 11 s (outside the container's cgroup) while the client slept
	for port in 443 80; do
		c0=$(awk '{print $14 + $15 + $16 + $17}' "/proc/$px/stat")
		t0=$(date +%s%N)
		out=$(in_ctr node /stall.js "$([ "$port" = 443 ] && echo 203.0.113.10 || echo 203.0.113.20)" "$port" 120 6 \
			"$([ "$port" = 443 ] && echo 16 || echo 47)")
		# their processes end on the client's close and are reaped (their time is the proxy's then)
		for _ in $(seq 50); do
			[ -z "$(pgrep -P "$px")" ] && break
			sleep 0.1
		done
		used=$((($(awk '{print $14 + $15 + $16 + $17}' "/proc/$px/stat") - c0) * 1000 / $(getconf CLK_TCK)))
		wall=$((($(date +%s%N) - t0) / 1000000))
		echo "# port $port: $out; the proxy: $used ms of CPU in $wall ms" >&3
		# (the flood is real: a connection whose SYN the loaded machine dropped may still be
		# in its retries at the end, CI saw 119 once)
		[ "${out#open }" -ge 110 ] 2>/dev/null || fail "port $port: $out"
		[ "$((used * limit))" -lt "$wall" ] || fail "port $port: the proxy used $used ms of CPU in $wall ms"
	done
	# honest use: a whole request right after
	run in_ctr sh -c 'curl -sS --max-time 20 -H "Authorization: Bearer $API_TOKEN" https://api.example.test/after'
	[[ "$output" == *"\"auth_sha256\": \"$(sha "Bearer $SEC_VALUE")\""* ]] || fail "after: $output"
}

@test "secrets-proxy: cidr-literal: an address the allowlist names by CIDR is reached by its IP over HTTP and HTTPS while the proxy runs; a name there still must resolve" {
	# with secrets in the profile every flow to ports 80 and 443 goes through the proxy, whose
	# name check refused a client that names no host (an IP URL: no SNI, Host the address)
	# although the allowlist lets the address out, as it does without a proxy: a package mirror
	# or service the operator allows by address broke as soon as a secret was added
	jq '.egress.allow += ["203.0.113.20/32"]' "$PX_PROFILE" >"$PX_DIR/cidr.json"
	px_run "$PX_DIR/cidr.json"
	: >"$PX_DIR/other.log"
	run in_ctr sh -c 'curl -sS --max-time 10 http://203.0.113.20/ip80; echo; curl -ksS --max-time 10 https://203.0.113.20/ip443'
	[[ "$output" == *'"path": "/ip80"'*'"path": "/ip443"'* ]] || fail "by address: $output"
	grep -q '^GET /ip443 203.0.113.20' "$PX_DIR/other.log" || fail "not upstream: $(cat "$PX_DIR/other.log")"
	# an IPv6 address in brackets (cidr-literal-v6): its Host `[2001:db8:203::20]` was read as
	# the name "[2001" on port 0 and refused ("the Host field names another port")
	rt delete -f "$ID"
	jq '.egress.allow += ["2001:db8:203::20/128"]' "$PX_DIR/cidr.json" >"$PX_DIR/cidr6.json"
	px_run "$PX_DIR/cidr6.json"
	run in_ctr sh -c 'curl -sS --max-time 10 "http://[2001:db8:203::20]/ip6"; echo; curl -sS --max-time 10 "http://[2001:db8:203::20]:80/ip6port"'
	[[ "$output" == *'"path": "/ip6"'*'"path": "/ip6port"'* ]] || fail "by IPv6 address: $output"
	# a name on that address is still checked: hidden.test is not allowed (fronting by Host)
	run in_ctr sh -c 'curl -sS --max-time 10 -H "Host: hidden.test" http://203.0.113.20/hidden80 2>&1'
	[[ "$output" != *'"path": "/hidden80"'* ]] || fail "a name not allowed went through: $output"
	# and without the CIDR entry an address stays refused, as before
	rt delete -f "$ID"
	px_run
	run in_ctr sh -c 'curl -sS --max-time 10 http://203.0.113.20/noallow 2>&1'
	[[ "$output" != *'"path": "/noallow"'* ]] || fail "an address not allowed went through: $output"
	# with an HTTP rule in the profile a flow without a name stays refused: inside TLS it could
	# name the ruled host (other.test: POST only) and the server would route by that Host
	rt delete -f "$ID"
	jq '.egress.http = [{"host": "other.test", "methods": ["POST"]}]' "$PX_DIR/cidr.json" >"$PX_DIR/cidr-rule.json"
	px_run "$PX_DIR/cidr-rule.json"
	: >"$PX_DIR/other.log"
	run in_ctr sh -c 'curl -ksS --max-time 10 -H "Host: other.test" https://203.0.113.20/ruled 2>&1;
		curl -sS --max-time 10 http://203.0.113.20/ruled80 2>&1'
	! grep -q '^GET /ruled' "$PX_DIR/other.log" || fail "past the HTTP rule: $output $(cat "$PX_DIR/other.log")"
}

@test "secrets-proxy: escape: keepalive-idle: kept-alive connections (plain HTTP and terminated HTTPS) idle for 30 s are closed, their processes gone" {
	[ -x /usr/bin/node ] || skip "no node on the host"
	cp "$REPO_ROOT/tests/helpers/keepalive-idle.js" "$ROOTFS/keepalive-idle.js"
	px_run
	local mon px out
	find_proxy
	# each connection is a process of the proxy's on the host, outside the container's cgroup:
	# an agent held 128 of them idle for as long as it liked
	in_ctr node /keepalive-idle.js 4 >"$BUNDLE/idle.out" 2>&1 &
	local client=$!
	for _ in $(seq 100); do
		grep -q 'answered 8' "$BUNDLE/idle.out" && break
		sleep 0.1
	done
	grep -q 'answered 8' "$BUNDLE/idle.out" || fail "the requests: $(cat "$BUNDLE/idle.out")"
	[ "$(pgrep -P "$px" | wc -l)" -ge 8 ] || fail "the control: $(pgrep -P "$px" | wc -l) connection processes"
	sleep 20
	[ "$(pgrep -P "$px" | wc -l)" -ge 8 ] || fail "closed before 20 s of idleness: $(cat "$BUNDLE/idle.out")"
	for _ in $(seq 150); do
		[ -z "$(pgrep -P "$px")" ] && break
		sleep 0.1
	done
	out=$(pgrep -P "$px" | wc -l)
	wait "$client"
	[ "$out" -eq 0 ] || fail "$out connection processes after 35 s of idleness: $(cat "$BUNDLE/idle.out")"
	[ "$(grep -cE 'closed after (3[0-9]|4[0-4]) s' "$BUNDLE/idle.out")" -eq 8 ] || fail "$(cat "$BUNDLE/idle.out")"
	# honest use: a keep-alive pool's next request on a new connection
	run in_ctr sh -c 'curl -sS --max-time 10 -H "Authorization: Bearer $API_TOKEN" https://api.example.test/after'
	[[ "$output" == *"\"auth_sha256\": \"$(sha "Bearer $SEC_VALUE")\""* ]] || fail "after: $output"
}

@test "secrets-proxy: escape: proxy-mark: CAP_NET_RAW (which sets SO_MARK) is refused under an egress policy; without it a socket cannot take the proxy's own mark, and HTTP rules hold" {
	# since Linux 5.17 CAP_NET_RAW may set SO_MARK; a profile that kept NET_RAW (ping) let the
	# agent mark its sockets as the proxy's own upstream ones, which the nat rules pass: a POST
	# that the HTTP rule refuses reached other.test:80 (200 from the upstream)
	local caps='["CHOWN", "DAC_OVERRIDE", "FSETID", "FOWNER", "SETGID", "SETUID", "NET_BIND_SERVICE", "KILL", "SETPCAP", "NET_RAW"]'
	jq --argjson c "$caps" '.name = "px-netraw" |
		.capabilities = {"ceiling": $c, "trim": ["MKNOD", "SETFCAP", "SYS_CHROOT", "AUDIT_WRITE"]} |
		.egress.http = [{"host": "other.test", "methods": ["GET"], "paths": ["/ok/"]}]' \
		"$PX_PROFILE" >"$PX_DIR/netraw.json"
	update_config '.process.capabilities |= with_entries(.value += ["CAP_NET_RAW"])'
	run "$AGENTRT" profile check "$PX_DIR/netraw.json"
	[ "$status" -ne 0 ] && [[ "$output" == *capabilities.ceiling*NET_RAW* ]] || fail "profile check: $output"
	status=0
	timeout --kill-after=5 "$RT_TIMEOUT" nsenter --net="/run/netns/$PX_HOST" \
		"$AGENTRT" --root "$TEST_ROOT" --profile "$PX_DIR/netraw.json" run -d --bundle "$BUNDLE" "$ID" \
		</dev/null >"$BUNDLE/$ID.out" 2>"$BUNDLE/$ID.err" || status=$?
	output=$(cat "$BUNDLE/$ID.err")
	[ "$status" -ne 0 ] || fail "a container with CAP_NET_RAW and a proxy was created"
	[[ "$output" == *NET_RAW* ]] && [ "$(grep -c . <<<"$output")" -eq 1 ] || fail "the error: $output"
	[ ! -e "$TEST_ROOT/$ID" ] || fail "left: $(ls "$TEST_ROOT/$ID")"
	# caps.enforce off: the config's bounding set is checked at create too
	jq '.capabilities.enforce = false | del(.capabilities.ceiling) | del(.capabilities.trim)' \
		"$PX_DIR/netraw.json" >"$PX_DIR/netraw-noenf.json"
	status=0
	timeout --kill-after=5 "$RT_TIMEOUT" nsenter --net="/run/netns/$PX_HOST" \
		"$AGENTRT" --root "$TEST_ROOT" --profile "$PX_DIR/netraw-noenf.json" run -d --bundle "$BUNDLE" "$ID" \
		</dev/null >"$BUNDLE/$ID.out" 2>"$BUNDLE/$ID.err" || status=$?
	output=$(cat "$BUNDLE/$ID.err")
	[ "$status" -ne 0 ] && [[ "$output" == *NET_RAW* ]] || fail "caps.enforce false: $status $output"
	[ ! -e "$TEST_ROOT/$ID" ] || fail "left: $(ls "$TEST_ROOT/$ID")"
	# the control: NET_RAW with no egress policy (no table, no proxy) runs, with the cap
	jq 'del(.secrets) | .egress = {"default": "off"} | .name = "px-netraw-off"' "$PX_DIR/netraw.json" >"$PX_DIR/netraw-np.json"
	px_run "$PX_DIR/netraw-np.json"
	run in_ctr grep CapEff /proc/self/status
	[ "$(((0x${output##*:	} >> 13) & 1))" = 1 ] || fail "the control: no CAP_NET_RAW: $output"
	rt delete -f "$ID"
	# the proxy's profile as it is (NET_RAW trimmed): the mark is refused, the rule holds
	jq '.egress.http = [{"host": "other.test", "methods": ["GET"], "paths": ["/ok/"]}]' "$PX_PROFILE" >"$PX_DIR/rule.json"
	px_run "$PX_DIR/rule.json"
	: >"$PX_DIR/other80.log"
	local req='POST /forbidden HTTP/1.1\r\nHost: other.test\r\nContent-Length: 0\r\nConnection: close\r\n\r\n'
	run in_ctr sh -c "printf '$req' | mark-connect 0 203.0.113.20 80"
	[[ "$output" == *" 403 "* ]] || fail "the rule: $output"
	run in_ctr sh -c "printf '$req' | mark-connect 0x61677274 203.0.113.20 80 2>&1"
	[[ "$output" == *"mark: Operation not permitted"* ]] || fail "the mark: $output"
	! grep -q 'POST /forbidden' "$PX_DIR/other80.log" || fail "upstream saw: $(cat "$PX_DIR/other80.log")"
}

@test "secrets-proxy: escape: slowloris: a request head fed one byte a second (plain HTTP kept alive, terminated HTTPS) is cut 10 s after it began, its process gone" {
	[ -x /usr/bin/node ] || skip "no node on the host"
	cp "$REPO_ROOT/tests/helpers/trickle-head.js" "$ROOTFS/trickle-head.js"
	px_run
	local mon px out
	find_proxy
	# each read from the client waited at most 30 s, but a head that grew by a byte within
	# that was awaited for ever: an agent held its 128 connection processes (outside its
	# cgroup) with a byte every 29 s each
	out=$(in_ctr node /trickle-head.js 25 2>&1)
	echo "# $out" | tr '\n' ' ' >&3
	echo >&3
	[[ "$out" == *answered* ]] || fail "the control (a whole request first): $out"
	[[ "$out" != *"open after"* ]] || fail "a trickled head held its connection: $out"
	# the head began at 1-2 s (a byte a second): cut 10 s later, with a 408
	[ "$(grep -cE '^(plain|tls) closed after (1[0-9]|2[0-2]) s: HTTP/1.1 408 ' <<<"$out")" -eq 2 ] || fail "$out"
	for _ in $(seq 50); do
		[ -z "$(pgrep -P "$px")" ] && break
		sleep 0.1
	done
	[ -z "$(pgrep -P "$px")" ] || fail "connection processes left: $(pgrep -P "$px" | wc -l)"
	# honest use right after, on both ports
	run in_ctr sh -c 'curl -sS --max-time 10 -H "Authorization: Bearer $API_TOKEN" https://api.example.test/after; curl -sS --max-time 10 http://other.test/after80'
	[[ "$output" == *"\"auth_sha256\": \"$(sha "Bearer $SEC_VALUE")\""*'"path": "/after80"'* ]] || fail "after: $output"
}

@test "secrets-proxy: escape: body-trickle: a request body fed a byte every 29 s (plain HTTP) or 2 s (terminated HTTPS) is cut with a 408 about 30 s in, its process gone; a 2.5 MiB upload at 64 KiB/s passes" {
	[ -x /usr/bin/node ] || skip "no node on the host"
	cp "$REPO_ROOT/tests/helpers/trickle-body.js" "$ROOTFS/trickle-body.js"
	px_run
	local mon px out
	find_proxy
	: >"$PX_DIR/other80.log"
	# a head had to be whole within 10 s, but a body only had each read's 30 s: a byte every
	# 29 s held the connection's process (outside the container's cgroup) for ever
	out=$(RT_TIMEOUT=80 in_ctr node /trickle-body.js 55 2>&1)
	echo "# $out" | tr '\n' ' ' >&3
	echo >&3
	[[ "$out" != *"open after"* ]] || fail "an upload held its connection: $out"
	[ "$(grep -cE '^(plain|tls)-trickle closed after (29|3[0-6]) s: HTTP/1.1 408 ' <<<"$out")" -eq 2 ] || fail "$out"
	# the honest uploads took 40 s, longer than the trickles were allowed, and came whole
	[ "$(grep -cE '^(plain|tls)-honest closed after (39|[45][0-9]) s: HTTP/1.1 200 OK "body_len": 2621440$' <<<"$out")" -eq 2 ] || fail "$out"
	grep -q '^POST /upload other.test' "$PX_DIR/other80.log" || fail "upstream: $(cat "$PX_DIR/other80.log")"
	for _ in $(seq 50); do
		[ -z "$(pgrep -P "$px")" ] && break
		sleep 0.1
	done
	[ -z "$(pgrep -P "$px")" ] || fail "connection processes left: $(pgrep -P "$px" | wc -l)"
	# the honest TLS upload had the secret put in; the trickles are recorded as refused
	run rt audit "$ID"
	[ "$(grep -c '"status":408' <<<"$output")" -eq 2 ] || fail "audit: $output"
	grep -q '"status":200.*"secret":"API_TOKEN"' <<<"$output" || fail "audit: $output"
}

@test "secrets-proxy: escape: expect-early: a body an upstream answered without reading (Expect: 100-continue, 417 at once) is never taken as a request, nor its answer given to the next request (plain HTTP and terminated HTTPS)" {
	px_run
	# the body is a request for hidden.test (not allowed; it shares other.test's address)
	local body='GET /smuggled HTTP/1.1\r\nHost: hidden.test\r\n\r\n' host out
	for host in other.test api.example.test; do
		: >"$PX_DIR/other80.log"
		: >"$PX_DIR/api.log"
		raw "POST /early HTTP/1.1\r\nHost: $host\r\nExpect: 100-continue\r\nContent-Length: 45\r\n\r\n{PAUSE}$body{PAUSE}{PAUSE}{PAUSE}GET /next HTTP/1.1\r\nHost: $host\r\n\r\n" \
			"$([ "$host" = other.test ] && echo plain || echo "$host")" - "$host"
		out=$output
		echo "# $host: $(tr '\r\n' '  ' <<<"$out")" >&3
		# the proxy answered the Expect itself and passed the 417 on
		[[ "$out" == *"HTTP/1.1 100 Continue"*"HTTP/1.1 417 "* ]] || fail "$host: $out"
		# the upstream misread the body as a request: the proxy cannot stop that, but its answer
		# is not the answer to the next request (hidden.test's content, behind other.test's)
		[[ "$out" != *'"path": "/smuggled"'* ]] || fail "$host: the smuggled request's answer reached the client: $out"
		# the control: the upstream did read the body as a request
		grep -q '^GET /smuggled hidden.test' "$PX_DIR/other80.log" "$PX_DIR/api.log" ||
			fail "$host: the upstream did not misread the body: $(cat "$PX_DIR/other80.log" "$PX_DIR/api.log")"
	done
	# the proxy never read the body as a request head (no record of it; the upstream saw it)
	# (the exec records name it in their argv: the proxy's http records only)
	run rt audit "$ID"
	output=$(grep '"kind":"http"' <<<"$output")
	[ "$(grep -c '"path":"/early","status":417' <<<"$output")" -eq 2 ] || fail "audit: $output"
	[[ "$output" != *'/smuggled'* ]] || fail "audit: $output"
	# the next request was not sent on the connection that had answered out of turn
	[ "$(grep -c '"path":"/next".*"refused":"the upstream sent bytes no request asked for (or closed)' <<<"$output")" -eq 2 ] ||
		fail "audit: $output"
}

@test "secrets-proxy: escape: child-gid: root with CAP_SETGID cannot take the sub-agents' group (the proxy's port for sub-agents)" {
	[ -x /usr/bin/node ] || skip "no node on the host"
	# Docker's default set has CAP_SETGID, and so has the agent profile's ceiling
	update_config '.process.capabilities |= with_entries(.value += ["CAP_SETGID"])'
	px_run
	run in_ctr grep CapEff /proc/self/status
	[ "$(((0x${output##*:	} >> 6) & 1))" = 1 ] || fail "no CAP_SETGID: $output"
	# the table sends connections of group 0x61677273 (a sub-agent's slirp4netns,
	# common/subproto.h) to the proxy's port for sub-agents: 64 more connection processes
	# outside the container's cgroup, past its own 128, for a container root that set it
	local js='const cp = require("child_process"); const g = 0x61677273;
		for (const [n, f] of [["setgid", () => process.setgid(g)], ["setegid", () => process.setegid(g)]]) {
			try { f(); console.log(n + " ok"); } catch (e) { console.log(n + " " + e.code); } }
		console.log("gid " + process.getgid() + " " + process.getegid());
		console.log(cp.execFileSync("curl", ["-sS", "--max-time", "10", "-H",
			"Authorization: Bearer " + process.env.API_TOKEN, "https://api.example.test/gid"]).toString());'
	run in_ctr node -e "$js"
	echo "# $output" | head -3 >&3
	[[ "$output" == *"setgid EPERM"*"setegid EPERM"* ]] || fail "the group was taken: $output"
	[[ "$output" == *"gid 0 0"* ]] || fail "$output"
	# its request went to the container's own port: the secret's value put in, as for any
	[[ "$output" == *"\"auth_sha256\": \"$(sha "Bearer $SEC_VALUE")\""* ]] || fail "the request: $output"
	# the control: another group is still the container's to take
	run in_ctr node -e 'process.setgid(1000); console.log("gid " + process.getgid())'
	[ "$output" = "gid 1000" ] || fail "the control: $output"
}

@test "secrets-proxy: escape: slowloris-hrr: a passthrough flow's second ClientHello (after a HelloRetryRequest) fed a byte a second is cut 10 s after it began" {
	px_run
	# each poll for its bytes waited at most 10 s, the whole record for ever
	run hello_to 203.0.113.20 other.test slow hrr:other.test
	echo "# $output" >&3
	[[ "$output" == "closed after "* ]] || fail "$output"
	[ "${output//[^0-9]/}" -ge 9 ] && [ "${output//[^0-9]/}" -le 15 ] || fail "$output"
}

# literal_sweep PORT NAME...: from the container's namespace, one connection per NAME to
# 203.0.113.20:PORT (front.test's address); :80 a plain HTTP request with Host NAME and the path
# /sweep-I, :443 a ClientHello naming NAME; prints "I answered" or "I closed" per NAME
literal_sweep() {
	ip netns exec "$PX_CTR" python3 - "$@" <<-'PYEOF'
		import socket, struct, sys
		port, names = int(sys.argv[1]), sys.argv[2:]
		def hello(name):
		    n = name.encode()
		    lst = b"\0" + struct.pack(">H", len(n)) + n
		    e = struct.pack(">HH", 0, len(lst) + 2) + struct.pack(">H", len(lst)) + lst
		    body = b"\3\3" + b"\x11" * 32 + b"\0" + b"\0\2\xc0\x2f" + b"\1\0" + struct.pack(">H", len(e)) + e
		    hs = b"\1" + struct.pack(">I", len(body))[1:] + body
		    return b"\x16\3\1" + struct.pack(">H", len(hs)) + hs
		for i, name in enumerate(names):
		    got = b""
		    try:
		        s = socket.create_connection(("203.0.113.20", port), timeout=5)
		        if port == 443:
		            s.sendall(hello(name))
		        else:
		            s.sendall(("GET /sweep-%d HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % (i, name)).encode())
		        got = s.recv(100)
		        s.close()
		    except OSError:
		        pass
		    print(i, "answered" if got else "closed")
	PYEOF
}

@test "secrets-proxy: refused: a refused address or name spelt as an IP literal, encoded or decorated in Host and SNI, to an allowed name's address" {
	px_run
	in_ctr nslookup front.test >/dev/null
	: >"$PX_DIR/other80.log"
	# 203.0.113.10 (api.example.test's) and 203.0.113.20 (the address itself, allowed by no
	# address entry) as decimal, octal, hex, short forms, IPv4-mapped, NAT64 and 6to4 IPv6, a zone
	# id; hidden.test (not allowed, same address) in upper case, with a final dot, percent-encoded,
	# full-width (IDNA maps it to hidden.test), as punycode, behind userinfo
	local forms=(3405803786 0313.0.0161.012 0xcb00710a 0xcb.0.0x71.0xa 203.0.28938 203.28938
		203.0.113.10 203.0.113.20 3405803796 0xcb007114 '[::ffff:203.0.113.20]' '[::ffff:cb00:7114]'
		'[64:ff9b::cb00:7114]' '[2002:cb00:7114::1]' '[fe80::1%25c0]' '[::ffff:cb00:710a]'
		HIDDEN.TEST hidden.test. 'hidden%2etest' '%68idden.test' $'\xef\xbd\x88idden.test'
		xn--hidden-test xn--hdden-1ua.test 'front.test@hidden.test' 'hidden.test@front.test'
		'front.test%00.hidden.test' 'hidden.test..' '*.test' localhost 127.0.0.1 0)
	run literal_sweep 80 "${forms[@]}"
	[ "$status" -eq 0 ] || fail "sweep :80: $output"
	! grep -q 'answered' <<<"$output" || fail "answered on :80 (index into forms): $(grep answered <<<"$output")"
	! grep -q '/sweep-' "$PX_DIR/other80.log" || fail "upstream :80 got: $(grep -A1 /sweep- "$PX_DIR/other80.log")"
	run literal_sweep 443 "${forms[@]}"
	[ "$status" -eq 0 ] || fail "sweep :443: $output"
	! grep -q 'answered' <<<"$output" || fail "answered on :443 (index into forms): $(grep answered <<<"$output")"
	run rt audit "$ID"
	! grep '"kind":"tls_flow"' <<<"$output" | grep -q '"verdict":"allowed"' || fail "let through: $(grep tls_flow <<<"$output" | grep allowed)"
	# the control: the allowed name, as written and with a final dot and in upper case
	run literal_sweep 80 front.test FRONT.TEST. front.test:80
	[ "$output" = $'0 answered\n1 answered\n2 answered' ] || fail "control :80: $output"
	run literal_sweep 443 front.test FRONT.TEST.
	[ "$output" = $'0 answered\n1 answered' ] || fail "control :443: $output"
}
