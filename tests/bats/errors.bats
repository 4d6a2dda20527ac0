#!/usr/bin/env bats
# errors.bats - table-driven malformed invocations: bad flags, bad ids,
# missing bundle/rootfs, truncated JSON, wrong types, relative paths.  Each must exit
# non-zero without crashing (agentrt: status < 128) and leave nothing in --root, no mount
# and no cgroup; agentrt must also print exactly one error line naming what is wrong.

load helpers

# expect_error KEYWORD CMD...: run CMD (a runtime command line, stdio redirected), check the
# contract; failures are collected in $ERRS so one test reports every bad row.
expect_error() {
	local keyword=$1 lines
	shift
	status=0
	timeout --kill-after=5 "$RT_TIMEOUT" "$AGENTRT" --root "$TEST_ROOT" "$@" \
		</dev/null >"$BUNDLE/err.out" 2>&1 || status=$?
	output=$(cat "$BUNDLE/err.out")
	local row="[$keyword: $*]"
	if [ "$status" -eq 0 ]; then
		ERRS+=("$row: exit 0")
	elif [ "$status" -eq 124 ] || { [ "$status" -gt 128 ] && [ "$status" -le 192 ]; }; then
		ERRS+=("$row: crashed or hung (status $status)")
	elif is_agentrt && [ "$status" -ge 128 ] && ! { [ "$1" = exec ] && [ "$status" -eq 255 ]; }; then
		# (exec's own failures are 255, as runc's)
		ERRS+=("$row: status $status >= 128")
	fi
	if [ -d "$TEST_ROOT" ] && [ -n "$(ls -A "$TEST_ROOT")" ]; then
		ERRS+=("$row: left in --root: $(ls -A "$TEST_ROOT")")
		for id in $(rt list -q 2>/dev/null); do rt delete --force "$id" >/dev/null 2>&1; done
		rm -rf --one-file-system "${TEST_ROOT:?}"/* 2>/dev/null
	fi
	[ -z "$(mounts_below "$BUNDLE")$(mounts_below "$TEST_ROOT")" ] || ERRS+=("$row: mounts left on the host")
	if is_agentrt; then
		lines=$(grep -c . <<<"$output" || :)
		[ "$lines" -eq 1 ] || ERRS+=("$row: $lines lines of error output: $output")
		grep -qiF -- "$keyword" <<<"$output" || ERRS+=("$row: error does not name \`$keyword': $output")
	fi
	return 0
}

report() {
	if [ "${#ERRS[@]}" -gt 0 ]; then
		printf '%s\n' "${ERRS[@]}" >&2
		return 1
	fi
}

# config_case KEYWORD 'JQ-FILTER': create with a config edited by the filter (on a copy).
config_case() {
	cp "$BUNDLE/config.json.orig" "$BUNDLE/config.json"
	update_config "$2"
	expect_error "$1" create --bundle "$BUNDLE" bad
}

setup() {
	setup_bundle
	set_args true
	cp "$BUNDLE/config.json" "$BUNDLE/config.json.orig"
	mkdir -p "$TEST_ROOT"
	ERRS=()
}

@test "bad flags and commands" {
	expect_error --no-such-flag --no-such-flag list
	expect_error frobnicate frobnicate
	expect_error --no-such-flag create --no-such-flag --bundle "$BUNDLE" bad
	expect_error --log-format --log-format xml list
	expect_error preserve-fds create --preserve-fds nope --bundle "$BUNDLE" bad
	expect_error preserve-fds create --preserve-fds 99999999999999999999999 --bundle "$BUNDLE" bad
	expect_error format list --format xml
	report
}

# global-option-prefix: an unknown or incomplete global option was reported as
# "agentrt: agentrt: unknown option ..." (the parser's verb was the program's name).
@test "global-option-prefix: a bad global option is reported once, without a doubled program name" {
	agentrt_only "the error's text"
	for args in "--no-such-flag list" "--root"; do
		run rt $args
		[ "$status" -eq 1 ] || fail "$args: status $status: $output"
		[[ "$output" == "agentrt: "* ]] || fail "$args: $output"
		[[ "$output" != *"agentrt: agentrt:"* ]] || fail "$args: doubled program name: $output"
	done
}

# checkpoint-missing: checkpoint and restore of a container that is not there said only "not
# supported"; every other command says the container does not exist (what engines match).
@test "checkpoint-missing: checkpoint and restore of a missing container say it does not exist" {
	expect_error "does not exist" checkpoint nope
	expect_error "does not exist" restore nope
	report
	if is_agentrt; then
		set_args sleep 100
		rt create --bundle "$BUNDLE" cp1 >/dev/null
		run rt checkpoint cp1
		[ "$status" -ne 0 ] && [[ "$output" == *"not supported"* ]] || fail "checkpoint of an existing one: $status $output"
		rt delete --force cp1
	fi
}

# log-file-escape: the --log file's text records carried a path's escape sequence raw (ESC
# [2J cleared the screen of whoever ran `cat` or `tail -f` on the log); stderr's copy was
# escaped already.
@test "log-file-escape: a text --log record escapes the controls of a name it quotes" {
	agentrt_only "the log file's text"
	local bad=$BUNDLE/nx$'\e'"[2J"$'\e'"]0;title"$'\a'q
	run "$AGENTRT" --root "$TEST_ROOT" --log "$BUNDLE/rt.log" create --bundle "$bad" c1
	[ "$status" -ne 0 ] || fail "create of a missing bundle: $output"
	grep -q 'bundle' "$BUNDLE/rt.log" || fail "no record: $(cat -v "$BUNDLE/rt.log")"
	! LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$BUNDLE/rt.log" ||
		fail "raw controls in the log: $(cat -v "$BUNDLE/rt.log")"
	grep -qF '\u001b[2J' "$BUNDLE/rt.log" || fail "not escaped: $(cat -v "$BUNDLE/rt.log")"
}

@test "missing or extra arguments" {
	expect_error id create --bundle "$BUNDLE"
	expect_error id start
	expect_error id state
	expect_error id delete
	expect_error id kill
	report
}

@test "bad container ids" {
	long=$(printf 'a%.0s' $(seq 1025))
	expect_error id create --bundle "$BUNDLE" '../x'
	expect_error id create --bundle "$BUNDLE" 'a/b'
	expect_error id create --bundle "$BUNDLE" '..'
	expect_error id create --bundle "$BUNDLE" '.'
	expect_error id create --bundle "$BUNDLE" ''
	expect_error id create --bundle "$BUNDLE" "$long"
	expect_error id create --bundle "$BUNDLE" $'new\nline'
	expect_error id state '../x'
	expect_error id delete --force 'a/b'
	report
	# Nothing was created outside the root either.
	[ ! -e "$(dirname "$TEST_ROOT")/x" ]
}

@test "missing bundle, config, rootfs and pid-file directory" {
	expect_error /nonexistent-agentrt-bundle create --bundle /nonexistent-agentrt-bundle bad
	mv "$BUNDLE/config.json" "$BUNDLE/config.moved"
	expect_error config.json create --bundle "$BUNDLE" bad
	mv "$BUNDLE/config.moved" "$BUNDLE/config.json"
	mv "$ROOTFS" "$BUNDLE/rootfs.moved"
	expect_error rootfs create --bundle "$BUNDLE" bad
	mv "$BUNDLE/rootfs.moved" "$ROOTFS"
	expect_error /nonexistent-agentrt-dir create --bundle "$BUNDLE" --pid-file /nonexistent-agentrt-dir/pid bad
	expect_error /nonexistent-agentrt-process exec --process /nonexistent-agentrt-process nosuch
	report
}

# rootfs-not-a-directory: a root.path naming a file failed (as with runc) saying "No such file or
# directory", a stale errno; it says what is wrong now.
@test "rootfs-not-a-directory: a root.path that is a file fails saying it is not a directory" {
	agentrt_only "runc says: fork/exec /proc/self/exe: not a directory"
	config_case "Not a directory" '.root.path = "config.json.orig"'
	report
}

# rootfs-symlink: a root.path that is (or passes through) a symlink was followed, so the
# container's root was wherever the link pointed when create resolved it.  runc refuses such a
# root.path ("invalid rootfs: not an absolute path, or a symlink"); agentrt does too.  A bundle
# reached through a symlink is still taken (runc resolves the bundle directory).
@test "rootfs-symlink: a root.path that is a symlink or goes through one is refused (as runc)" {
	mv "$ROOTFS" "$BUNDLE/real"
	ln -s real "$ROOTFS"
	expect_error rootfs create --bundle "$BUNDLE" bad
	mkdir "$BUNDLE/dir"
	mv "$BUNDLE/real" "$BUNDLE/dir/rootfs"
	ln -s dir "$BUNDLE/via"
	rm "$ROOTFS"
	config_case rootfs '.root.path = "via/rootfs"'
	config_case rootfs ".root.path = \"$BUNDLE/via/rootfs\""
	report
	# the same tree by its own path, and a bundle that is itself a symlink, are taken
	cp "$BUNDLE/config.json.orig" "$BUNDLE/config.json"
	update_config '.root.path = "dir/rootfs"'
	ln -s "$BUNDLE" "$BUNDLE.link"
	run rt run --bundle "$BUNDLE.link" ok
	rm -f "$BUNDLE.link"
	[ "$status" -eq 0 ] || fail "run through a bundle symlink: $output"
}

@test "malformed and truncated JSON" {
	head -c 100 "$BUNDLE/config.json.orig" >"$BUNDLE/config.json"
	expect_error config.json create --bundle "$BUNDLE" bad
	: >"$BUNDLE/config.json"
	expect_error config.json create --bundle "$BUNDLE" bad
	echo '[]' >"$BUNDLE/config.json"
	expect_error config.json create --bundle "$BUNDLE" bad
	printf '{"ociVersion": "1.0.2", "process": {"args": ["sh"]}, "root": {"path": "rootfs"}} trailing' >"$BUNDLE/config.json"
	expect_error config.json create --bundle "$BUNDLE" bad
	printf '\xff\xfe{' >"$BUNDLE/config.json"
	expect_error config.json create --bundle "$BUNDLE" bad
	report
}

@test "wrong types in config.json" {
	config_case process.args '.process.args = "sh"'
	config_case process.args '.process.args = [1, 2]'
	config_case root.path '.root.path = 42'
	config_case uid '.process.user.uid = "root"'
	config_case uid '.process.user.uid = -1'
	config_case uid '.process.user.uid = 99999999999'
	config_case terminal '.process.terminal = "yes"'
	config_case mounts '.mounts = {}'
	config_case namespaces '.linux.namespaces = "pid"'
	config_case env '.process.env = [1]'
	report
}

@test "invalid values in config.json" {
	config_case cwd '.process.cwd = "tmp"'
	config_case namespace '.linux.namespaces += [{"type": "nosuchns"}]'
	config_case RLIMIT_NOSUCH '.process.rlimits = [{"type": "RLIMIT_NOSUCH", "soft": 1, "hard": 1}]'
	config_case SCMP_ACT_NOSUCH '.linux.seccomp = {"defaultAction": "SCMP_ACT_NOSUCH"}'
	config_case args '.process.args = []'
	config_case namespace '.linux.namespaces += [{"type": "pid"}]'
	report
}

# intel-rdt-refused: runc refuses linux.intelRdt schemas and `update --l3-cache-schema` /
# `--mem-bw-schema` where the host has no RDT/CAT or RDT/MBA (this one has no resctrl);
# agentrt has no Intel RDT at all and took both silently (exit 0, nothing applied).
@test "intel-rdt-refused: intelRdt schemas and update's RDT flags are refused, a closID alone is not" {
	[ ! -d /sys/fs/resctrl/info ] || is_agentrt || skip "this host has Intel RDT"
	config_case l3CacheSchema '.linux.intelRdt = {"l3CacheSchema": "L3:0=f"}'
	config_case memBwSchema '.linux.intelRdt = {"memBwSchema": "MB:0=50"}'
	config_case closID '.linux.intelRdt = {"closID": "../x"}'
	report
	cp "$BUNDLE/config.json.orig" "$BUNDLE/config.json"
	update_config '.linux.intelRdt = {"closID": "agentrt-test"}'
	set_args sleep 100
	run_detached rdt
	[ "$status" -eq 0 ] || fail "closID alone: $output"
	local pids=/sys/fs/cgroup/pids$(jq -r .linux.cgroupsPath "$BUNDLE/config.json")/pids.max
	local f
	for f in --l3-cache-schema --mem-bw-schema; do
		run rt update --pids-limit 10 "$f" "X:0=1" rdt
		[ "$status" -ne 0 ] || fail "update $f: exit 0"
		assert_clean_failure
		! is_agentrt || [[ $output == *"$f: Intel RDT is not supported"* ]] || fail "update $f: $output"
		[ "$(cat "$pids")" = max ] || fail "update $f changed pids.max to $(cat "$pids") though it failed"
	done
	run rt update --l3-cache-schema= rdt
	[ "$status" -eq 0 ] || fail "an empty schema: $output"
	rt delete --force rdt
}

@test "invalid values agentrt rejects (runc accepts them)" {
	agentrt_only "runc does not validate these"
	config_case ociVersion 'del(.ociVersion)'
	config_case path '.hooks.prestart = [{"path": "relative/hook"}]'
	config_case timeout '.hooks.prestart = [{"path": "/bin/true", "timeout": -1}]'
	config_case uidMappings '.linux.uidMappings = [{"containerID": 0, "hostID": 1000, "size": 1}]'
	report
}

@test "an error leaves an existing container untouched" {
	set_args sleep 1000
	run_detached c1
	[ "$status" -eq 0 ] || fail "run -d: $output"
	pid=$(container_pid c1)
	create_container c1
	assert_clean_failure
	run rt kill c1 NOSUCHSIG
	assert_clean_failure
	run rt start c1
	assert_clean_failure
	[ "$(container_status c1)" = running ]
	[ "$(container_pid c1)" = "$pid" ]
}

# fifo-no-writer: a file agentrt reads that is a FIFO nobody writes (`exec --process`,
# `update -r`, a bundle's config.json) blocked the command forever in open(2); runc's too.
# It is read without blocking now: a writer may still come, but a FIFO that gives nothing
# for 10 s fails the command, naming the file.  A pipe with a writer still works.
@test "fifo-no-writer: exec --process, update -r and a config.json that are FIFOs nobody writes fail in bounded time" {
	agentrt_only "runc waits for a writer forever"
	set_args sleep 1000
	run_detached c1
	[ "$status" -eq 0 ] || fail "run -d: $output"
	mkfifo "$BUNDLE/proc.fifo"
	local args
	for args in "exec --process $BUNDLE/proc.fifo c1" "update -r $BUNDLE/proc.fifo c1"; do
		# shellcheck disable=SC2086
		run timeout 30 "$AGENTRT" --root "$TEST_ROOT" $args
		[ "$status" -ne 124 ] || fail "$args: still blocked after 30 s"
		assert_clean_failure
		[[ "$output" == *proc.fifo* ]] || fail "$args: $output"
	done
	# a pipe that has a writer is still read (process substitution)
	run timeout 30 "$AGENTRT" --root "$TEST_ROOT" exec --process <(jq -c '.process | .args = ["echo", "via-pipe"]' "$BUNDLE/config.json") c1
	[ "$status" -eq 0 ] && [ "$output" = via-pipe ] || fail "exec --process from a pipe: $status: $output"
	local fb=$BUNDLE/fifo-bundle
	mkdir "$fb"
	ln -s "$ROOTFS" "$fb/rootfs"
	mkfifo "$fb/config.json"
	run timeout 30 "$AGENTRT" --root "$TEST_ROOT" create --bundle "$fb" c2
	[ "$status" -ne 124 ] || fail "create: still blocked after 30 s"
	assert_clean_failure
	[[ "$output" == *config.json* ]] || fail "create: $output"
	[ "$(rt list -q)" = c1 ] || fail "left behind: $(rt list -q)"
}

# exec-process-bad: what an engine's `exec --process FILE` can hand over broken (a file gone, a
# directory, not JSON, cut short, wrong types, too deep, a NUL, bad values): each fails with one
# line naming the container and the file (and the line, for a syntax error), exit 255 as
# runc's exec failures, and nothing runs in the container.  runc 1.1.5: exit 255, "exec failed:
# ..." naming the file only when it cannot open or read it ("unexpected EOF", "json: cannot
# unmarshal number into Go struct field Process.cwd of type string").  Ours named neither the
# container nor, for a read error, anything but "exec: --process".
@test "exec-process-bad: a broken --process FILE fails in one line naming the container and the file; nothing runs" {
	set_args sleep 1000
	run_detached c1
	[ "$status" -eq 0 ] || fail "run -d: $output"
	local d=$BUNDLE/procs f name keyword before
	mkdir -p "$d/dir.json"
	printf 'not json' >"$d/notjson.json"
	printf '{"args": ["sh", "-c", "touch /ran"],\n "cwd": "/",\n' >"$d/cut.json"
	printf '{"args": ["sh", "-c", "touch /ran"],\n "cwd": 5}\n' >"$d/cwdnum.json"
	printf '[]' >"$d/array.json"
	printf '{}' >"$d/emptyobj.json"
	printf '{"args": "touch /ran", "cwd": "/"}' >"$d/argsstr.json"
	: >"$d/zero.json"
	printf '%*s' 100 '' | tr ' ' '[' >"$d/deep.json"
	printf '{"args": ["sh", "-c", "touch /ran"], "cwd": "/", "env": ["A=\\u0000"]}' >"$d/nul.json"
	printf '{"args": ["sh", "-c", "touch /ran"], "cwd": "/", "user": {"uid": -1}}' >"$d/uid.json"
	printf '{"args": ["sh", "-c", "touch /ran"], "cwd": "/", "rlimits": [{"type": "RLIMIT_NOFILE", "hard": 1, "soft": 2}]}' >"$d/rlimit.json"
	printf '\xff\xfe\x00\x01' >"$d/binary.json"
	before=$(rt ps --format json c1 | jq length)
	# name:keyword (what the one line must say besides the container and the file)
	for f in nosuch:"No such file" dir:"directory" notjson:"line 1" cut:"line 3" cwdnum:"cwd" \
		array:"object" emptyobj:"cwd" argsstr:"args" zero:"line 1" deep:"nesting" nul:"NUL" \
		uid:"user.uid" rlimit:"rlimits[0]" binary:"line 1"; do
		name=${f%%:*} keyword=${f#*:}
		run rt exec --process "$d/$name.json" c1
		assert_clean_failure
		is_agentrt || continue
		[ "$status" -eq 255 ] || fail "$name: exit $status: $output"
		[ "$(grep -c . <<<"$output")" -eq 1 ] || fail "$name: not one line: $output"
		[[ "$output" == *"exec \`c1\`"* ]] || fail "$name: does not name the container: $output"
		[[ "$output" == *"$name.json"* ]] || fail "$name: does not name the file: $output"
		[[ "$output" == *"$keyword"* ]] || fail "$name: does not say $keyword: $output"
	done
	[ "$(container_status c1)" = running ] || fail "after the bad exec's: $(rt list)"
	[ "$(rt ps --format json c1 | jq length)" = "$before" ] || fail "processes: $(rt ps c1)"
	[ ! -e "$ROOTFS/ran" ] || fail "a broken --process ran"
}
