#!/usr/bin/env bats
# list.bats - `list` in table, JSON and quiet form.

load helpers

# list-empty-null: runc's `list --format json` encodes its empty (nil) list as `null`; agentrt
# printed `[]`.  Go callers (go-runc) read both; a consumer written against runc, which
# tests the text, did not.
@test "list-empty-null: list with no containers prints nothing, and null in JSON (as runc)" {
	mkdir -p "$TEST_ROOT"
	run rt list -q
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	run rt list --format json
	[ "$status" -eq 0 ]
	[ "$output" = null ] || fail "$output"
}

# list-missing-root: a --root that does not exist lists no containers, as runc 1.1: the
# header alone, `null` in JSON, nothing with -q, exit 0 (runc also makes the directory; agentrt
# leaves the host as it was: a read is no reason to create a state directory).
@test "list-missing-root: list with a --root that does not exist prints the empty list and exits 0 (as runc)" {
	local root=$BUNDLE/no-such-root
	run timeout 30 "$AGENTRT" --root "$root" list
	[ "$status" -eq 0 ] || fail "$output"
	[[ "$output" == ID* ]] && [ "$(grep -c . <<<"$output")" -eq 1 ] || fail "$output"
	run timeout 30 "$AGENTRT" --root "$root" list --format json
	[ "$status" -eq 0 ] && [ "$output" = null ] || fail "$status: $output"
	run timeout 30 "$AGENTRT" --root "$root" list -q
	[ "$status" -eq 0 ] && [ -z "$output" ] || fail "$status: $output"
	if is_agentrt; then
		[ ! -e "$root" ] || fail "list made $root"
	fi
}

# list-quiet-json: runc's --quiet wins over --format: `list -q -f json` prints the ids one a
# line; agentrt printed the JSON document.
@test "list-quiet-json: list --quiet --format json prints only the ids (as runc)" {
	set_args sleep 1000
	run_detached c1
	[ "$status" -eq 0 ] || fail "run -d: $output"
	run rt list -q --format json
	[ "$status" -eq 0 ] || fail "$output"
	[ "$output" = c1 ] || fail "$output"
}

@test "list --format json shows id, pid, status, bundle and created" {
	set_args sleep 1000
	run_detached c1
	[ "$status" -eq 0 ] || fail "run -d: $output"
	create_container c2
	[ "$status" -eq 0 ] || fail "create: $output"
	run rt list --format json
	[ "$status" -eq 0 ] || fail "$output"
	[ "$(jq length <<<"$output")" -eq 2 ]
	[ "$(jq -r '.[] | select(.id == "c1") | .status' <<<"$output")" = running ]
	[ "$(jq -r '.[] | select(.id == "c2") | .status' <<<"$output")" = created ]
	[ "$(jq -r '.[] | select(.id == "c1") | .pid' <<<"$output")" = "$(container_pid c1)" ]
	[ "$(jq -r '.[] | select(.id == "c1") | .bundle' <<<"$output")" = "$BUNDLE" ]
	jq -e '.[] | select(.id == "c1") | .created | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T")' <<<"$output" >/dev/null
}

# list-json-owner: runc's `list --format json` names the owner of the container's state
# directory ("owner":"root", which runc's own list.bats matches) while `state` says "";
# agentrt's list said "" too.  Annotations come before owner in both, as runc writes them.
@test "list-json-owner: list --format json names the state directory's owner; state leaves it empty" {
	update_config '.annotations = {"org.example.k": "v"}'
	create_container own
	[ "$status" -eq 0 ] || fail "create: $output"
	local want
	want=$(awk -F: -v u="$(stat -c %u "$TEST_ROOT/own")" '$3 == u { print $1; exit }' /etc/passwd)
	[ -n "$want" ] || want="#$(stat -c %u "$TEST_ROOT/own")"
	run rt list --format json
	[ "$status" -eq 0 ] || fail "$output"
	jq -e --arg w "$want" '.[] | select(.id == "own") | .owner == $w' <<<"$output" ||
		fail "owner not $want: $output"
	[[ $output == *'"annotations":{"org.example.k":"v"},"owner":"'* ]] || fail "key order: $output"
	run rt list
	[ "$(awk 'NR == 2 { print $NF }' <<<"$output")" = "$want" ] || fail "table: $output"
	run rt state own
	[ "$status" -eq 0 ] || fail "$output"
	jq -e '.owner == ""' <<<"$output" || fail "state owner: $output"
}

@test "list shows a table with a header and one row per container" {
	set_args sleep 1000
	run_detached c1
	[ "$status" -eq 0 ] || fail "run -d: $output"
	run rt list
	[ "$status" -eq 0 ]
	head=$(head -n1 <<<"$output")
	for col in ID PID STATUS BUNDLE CREATED; do
		grep -qw "$col" <<<"$head" || fail "no column $col: $head"
	done
	[ "$(wc -l <<<"$output")" -eq 2 ]
	row=$(sed -n 2p <<<"$output")
	[ "$(awk '{print $1}' <<<"$row")" = c1 ]
	[ "$(awk '{print $2}' <<<"$row")" = "$(container_pid c1)" ]
	[ "$(awk '{print $3}' <<<"$row")" = running ]
	[ "$(awk '{print $4}' <<<"$row")" = "$BUNDLE" ]
}

@test "list --quiet prints only the ids" {
	set_args sleep 1000
	create_container c1
	create_container c2
	run rt list --quiet
	[ "$status" -eq 0 ]
	[ "$(sort <<<"$output" | tr '\n' ' ')" = "c1 c2 " ]
}

@test "list shows a stopped container as stopped with pid 0" {
	set_args true
	run_detached c1
	wait_for_status c1 stopped
	run rt list --format json
	[ "$(jq -r '.[0].status' <<<"$output")" = stopped ]
	[ "$(jq -r '.[0].pid' <<<"$output")" = 0 ]
}

@test "list --format with a bad value fails" {
	run rt list --format yaml
	assert_clean_failure
}

# list-table-escapes: the table printed the bundle path (the engine's, a directory name
# anyone who can make one chooses) as it is: an OSC title and an SGR colour in it retitled and
# recoloured the terminal of whoever ran `list`.  Its controls are \xNN in the table now;
# state and list --format json keep the path itself (JSON-escaped).
@test "list-table-escapes: a bundle path with escape sequences does not paint the terminal in the list table" {
	local dir line
	printf -v dir '%s/b\033]0;pwned\007\033[31m' "$BUNDLE"
	mkdir "$dir"
	jq --arg r "$BUNDLE/rootfs" '.root.path = $r' "$BUNDLE/config.json" >"$dir/config.json"
	"$AGENTRT" --root "$TEST_ROOT" create --bundle "$dir" esc </dev/null >"$BUNDLE/esc.out" 2>&1 ||
		fail "create: $(cat "$BUNDLE/esc.out")"
	run rt list
	[ "$status" -eq 0 ] || fail "$output"
	[[ $output != *[$'\033\007']* ]] || fail "escape sequences reached the terminal: $(cat -v <<<"$output")"
	line=$(grep '^esc ' <<<"$output") || fail "no row for esc: $output"
	[[ $line == *'b\x1b]0;pwned\x07\x1b[31m'* ]] || fail "bundle not shown escaped: $line"
	run rt state esc
	jq -e --arg d "$dir" '.bundle == $d' <<<"$output" >/dev/null || fail "state bundle: $output"
	run rt list --format json
	jq -e --arg d "$dir" '.[] | select(.id == "esc") | .bundle == $d' <<<"$output" >/dev/null ||
		fail "list json bundle: $output"
	rt delete --force esc
}

# state-invalid-utf8: yajl's UTF-8 check let an overlong form, a surrogate and a code point
# past U+10FFFF through; an annotation holding one was written back raw into `state` and
# `list --format json`, which a strict parser (Python's, serde_json) then refused as a whole.
# Those are refused at create now, in one line, nothing left; controls, DEL and C1 (valid
# UTF-8) still come out as strict JSON with the value unchanged.
@test "state-invalid-utf8: annotations come out of state and list as strict JSON; overlong, surrogate, past U+10FFFF refused at create" {
	local strict='import json,sys; d=json.loads(sys.stdin.buffer.read().decode("utf-8", "strict")); d=d[0] if isinstance(d, list) else d; sys.stdout.write(d["annotations"]["k"].encode("unicode_escape").decode())'
	local bad
	update_config '.annotations = {"k": "\u0001\u001b[31m\u007f\u0085\u009b2J\ud83d\ude00"}'
	create_container ok
	[ "$status" -eq 0 ] || fail "create: $output"
	run rt state ok
	run python3 -c "$strict" <<<"$output"
	[ "$status" -eq 0 ] || fail "state is not strict JSON: $output"
	[ "$output" = '\x01\x1b[31m\x7f\x85\x9b2J\U0001f600' ] || fail "state value: $output"
	run rt list --format json
	run python3 -c "$strict" <<<"$output"
	[ "$status" -eq 0 ] || fail "list is not strict JSON: $output"
	[ "$output" = '\x01\x1b[31m\x7f\x85\x9b2J\U0001f600' ] || fail "list value: $output"
	rt delete --force ok
	for bad in '\xc0\xaf' '\xed\xa0\x80' '\xf4\x90\x80\x80' '\xe0\x80\xaf'; do
		printf -v bad "$bad"
		python3 -c 'import sys; p=sys.argv[1]; b=open(p,"rb").read(); i=b.rindex(b"}"); open(p,"wb").write(b[:i] + b",\"annotations\":{\"k\":\"" + sys.argv[2].encode("utf-8", "surrogateescape") + b"\"}}")' \
			"$BUNDLE/config.json" "$bad"
		create_container bad
		[ "$status" -eq 1 ] || fail "create with $(od -An -tx1 <<<"$bad"): $status: $output"
		[ "$(grep -c . <<<"$output")" -eq 1 ] || fail "not one line: $output"
		[[ $output == *"bad"*"config.json"*"UTF-8"* ]] || fail "error: $output"
		[ ! -e "$TEST_ROOT/bad" ] || fail "state left: $(ls -A "$TEST_ROOT/bad")"
		python3 -c 'import sys,json; p=sys.argv[1]; b=open(p,"rb").read(); i=b.rindex(b",\"annotations\""); open(p,"wb").write(b[:i] + b"}")' "$BUNDLE/config.json"
	done
}
