#!/usr/bin/env bats
# tls-plugin.bats - the TLS proxy is a plugin (monitor/tls_plugin.h): agentrt links no
# OpenSSL, a container without secrets never maps libssl/libcrypto (seen in /proc/PID/maps of
# the `agentrt run` process and of its monitor), a container with secrets loads agentrt-tls.so
# from beside the binary, and a plugin that is writable by others, from another build or
# missing is refused with one line, leaving nothing behind.

load helpers

setup_file() {
	[ "$(id -u)" -eq 0 ] || skip "needs root"
	is_agentrt || skip "agentrt's plugin"
	ensure_rootfs
	export PL_DIR
	PL_DIR=$(mktemp -d /tmp/agentrt-tlsplug-bats.XXXXXX)
	chmod 0700 "$PL_DIR"
	printf 'sk-plugin-test-0123456789\n' >"$PL_DIR/api"
	chmod 0600 "$PL_DIR/api"
	cat >"$PL_DIR/p.json" <<-EOF
		{"name": "sec", "extends": "agent",
		 "egress": {"allow": ["api.example.test"]},
		 "secrets": [{"name": "API_TOKEN", "file": "$PL_DIR/api", "hosts": ["api.example.test"]}]}
	EOF
}

teardown_file() {
	[ -n "${PL_DIR:-}" ] && rm -rf "$PL_DIR"
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
	ID=tlsplug-$BATS_TEST_NUMBER
	update_config '.process.args = ["sleep", "600"] |
		.linux.namespaces |= (map(select(.type != "network")) + [{"type": "network"}])'
	BIN=$BUNDLE/bin
	mkdir "$BIN"
}

teardown() {
	"$AGENTRT" --root "$TEST_ROOT" delete -f "$ID" >/dev/null 2>&1 || true
	teardown_bundle
}

# A copy of the binary under test in $BIN, with the plugin named $1 (none: no plugin).
bin_with() {
	cp "$AGENTRT" "$BIN/agentrt"
	[ -z "${1:-}" ] || install -m 0755 "$1" "$BIN/agentrt-tls.so"
}

sec_create() { # RUNTIME: run -d $ID with the secrets profile (delete -f of a created one hangs here)
	status=0
	timeout --kill-after=5 "$RT_TIMEOUT" "$1" --root "$TEST_ROOT" --profile "$PL_DIR/p.json" \
		run -d --bundle "$BUNDLE" "$ID" </dev/null >"$BUNDLE/out" 2>"$BUNDLE/err" 3>&- || status=$?
	output=$(cat "$BUNDLE/err")
	mapfile -t lines <"$BUNDLE/err"
}

@test "tls-plugin: the agentrt binary links no OpenSSL; the plugin exports one symbol" {
	run readelf -d "$AGENTRT"
	[ "$status" -eq 0 ]
	! grep -Ei 'libssl|libcrypto' <<<"$output"
	run nm "$AGENTRT"
	! grep -E ' [TtDdBbRr] (SSL_|EVP_|X509_|OPENSSL_)' <<<"$output"
	local so
	so=$(dirname "$AGENTRT")/agentrt-tls.so
	[ -f "$so" ]
	run nm -D --defined-only "$so"
	[ "$output" != "" ]
	[ "$(awk '{print $3}' <<<"$output")" = agentrt_tls_plugin_v1 ]
	readelf -d "$so" | grep -q 'NEEDED.*libssl'
}

@test "tls-plugin: no libssl/libcrypto in the maps of a plain agentrt run process and of a monitor without secrets; a secrets monitor has them (control)" {
	# `agentrt --profile oci run` (no monitor under the oci profile): the run process itself
	"$AGENTRT" --root "$TEST_ROOT" --profile oci run --bundle "$BUNDLE" "$ID" </dev/null >/dev/null 2>&1 3>&- &
	local rpid=$! mon maps i
	for i in $(seq 100); do
		[ "$("$AGENTRT" --root "$TEST_ROOT" state "$ID" 2>/dev/null | jq -r .status)" = running ] && break
		sleep 0.1
	done
	maps=$(cat "/proc/$rpid/maps")
	grep -q "$(basename "$AGENTRT")" <<<"$maps" # the run process itself, still there
	! grep -Ei 'libssl|libcrypto|agentrt-tls' <<<"$maps"
	"$AGENTRT" --root "$TEST_ROOT" delete -f "$ID"
	wait "$rpid" || true
	# a monitor (agent profile, egress, no secrets)
	echo '{"name": "plain", "extends": "agent", "egress": {"allow": ["api.example.test"]}}' >"$BUNDLE/plain.json"
	timeout --kill-after=5 "$RT_TIMEOUT" "$AGENTRT" --root "$TEST_ROOT" --profile "$BUNDLE/plain.json" \
		create --bundle "$BUNDLE" "$ID" </dev/null >/dev/null 3>&-
	mon=$(cut -d' ' -f1 "$TEST_ROOT/$ID/monitor.pid")
	maps=$(cat "/proc/$mon/maps")
	grep -q "$(basename "$AGENTRT")" <<<"$maps"
	! grep -Ei 'libssl|libcrypto|agentrt-tls' <<<"$maps"
	"$AGENTRT" --root "$TEST_ROOT" delete -f "$ID"
	# the control: with secrets, the monitor maps the plugin and OpenSSL
	sec_create "$AGENTRT"
	[ "$status" -eq 0 ] || fail "$output"
	mon=$(cut -d' ' -f1 "$TEST_ROOT/$ID/monitor.pid")
	grep -q 'agentrt-tls.so' "/proc/$mon/maps"
	grep -q 'libssl' "/proc/$mon/maps"
}

@test "tls-plugin: a group- or world-writable plugin is refused with one line; 0755 works (control)" {
	bin_with "$(dirname "$AGENTRT")/agentrt-tls.so"
	chmod 0757 "$BIN/agentrt-tls.so"
	sec_create "$BIN/agentrt"
	[ "$status" -ne 0 ]
	[ "${#lines[@]}" -eq 1 ] || fail "$output"
	[[ "$output" == *"TLS plugin $BIN/agentrt-tls.so: refused"* ]] || fail "$output"
	! "$AGENTRT" --root "$TEST_ROOT" state "$ID" >/dev/null 2>&1
	[ ! -e "$TEST_ROOT/$ID" ]
	chmod 0775 "$BIN/agentrt-tls.so"
	sec_create "$BIN/agentrt"
	[ "$status" -ne 0 ]
	[[ "$output" == *"refused"* ]] || fail "$output"
	chmod 0755 "$BIN/agentrt-tls.so"
	sec_create "$BIN/agentrt"
	[ "$status" -eq 0 ] || fail "$output"
	mon=$(cut -d' ' -f1 "$TEST_ROOT/$ID/monitor.pid")
	grep -q "$BIN/agentrt-tls.so" "/proc/$mon/maps"
}

@test "tls-plugin: a plugin from another build is refused with one line" {
	cat >"$BUNDLE/other.c" <<-'EOF'
		struct t { const char *version, *commit; void *f[4]; };
		static const struct t t = {"0.1.0", "0000000-other"};
		const struct t *agentrt_tls_plugin_v1(void) { return &t; }
	EOF
	gcc -shared -fPIC -o "$BUNDLE/other.so" "$BUNDLE/other.c"
	bin_with "$BUNDLE/other.so"
	sec_create "$BIN/agentrt"
	[ "$status" -ne 0 ]
	[ "${#lines[@]}" -eq 1 ] || fail "$output"
	[[ "$output" == *"TLS plugin $BIN/agentrt-tls.so: from another build (0.1.0 0000000-other, this is"* ]] || fail "$output"
	[ ! -e "$TEST_ROOT/$ID" ]
}

@test "tls-plugin: no plugin: secrets fail naming the paths searched; a plain container runs" {
	[ ! -e /usr/local/lib/agentrt/agentrt-tls.so ] || skip "a plugin is installed in /usr/local/lib/agentrt"
	bin_with
	sec_create "$BIN/agentrt"
	[ "$status" -ne 0 ]
	[ "${#lines[@]}" -eq 1 ] || fail "$output"
	[[ "$output" == *"agentrt-tls.so not found (searched $BIN/agentrt-tls.so, /usr/local/lib/agentrt/agentrt-tls.so)"* ]] || fail "$output"
	[ ! -e "$TEST_ROOT/$ID" ]
	update_config '.process.args = ["echo", "plain-ok"]'
	run timeout --kill-after=5 "$RT_TIMEOUT" "$BIN/agentrt" --root "$TEST_ROOT" --profile oci run --bundle "$BUNDLE" "$ID" </dev/null
	[ "$status" -eq 0 ] || fail "$output"
	[[ "$output" == *plain-ok* ]]
}
