#!/usr/bin/env bats
# bad-input.bats - malformed invocations beyond tests/bats/errors.bats: every command with
# missing and extra arguments, bad ids on every command, huge and negative numbers, JSON
# (config.json, --process, --resources, state.json) truncated at many offsets.  Each must give
# ONE error line naming what is wrong, an exit status in 1..127, and leave nothing behind.

load helpers

# expect_error KEYWORD CMD...: collects contract violations in $ERRS (one test reports all).
# Besides the command under test it starts no program (builtins only): it runs a few hundred
# times, and every program started from the test's shell costs milliseconds on a VM (on this
# one the same checks with ls, grep, tr, head, awk and find made 250 ms a call).
expect_error() {
	local keyword=$1 lines=0 before_root short line args
	shift
	root_entries
	before_root=$ROOT_ENTRIES
	status=0
	timeout --kill-after=5 "${EXPECT_SECONDS:-30}" "$AGENTRT" --root "$TEST_ROOT" --profile agent "$@" \
		</dev/null >"$BUNDLE/err.out" 2>&1 || status=$?
	output=
	while IFS= read -r line || [ -n "$line" ]; do
		output+=${output:+$'\n'}$line
		[ -z "$line" ] || lines=$((lines + 1))
	done <"$BUNDLE/err.out"
	short=${output:0:200}
	short=${short//[$'\n\t']/ }
	args="$*"
	local row="[$keyword: ${args:0:120}]"
	if [ "$status" -eq 0 ]; then
		ERRS+=("$row: exit 0: $short")
	elif [ "$status" -ge 124 ] && ! { [ "$1" = exec ] && [ "$status" -eq 255 ]; }; then
		# (exec's own failures are 255, as runc's)
		ERRS+=("$row: crashed, hung or status >= 124 ($status)")
	fi
	root_entries
	[ "$ROOT_ENTRIES" = "$before_root" ] || ERRS+=("$row: --root changed: $ROOT_ENTRIES")
	! mounted_below "$BUNDLE" "$TEST_ROOT" || ERRS+=("$row: mounts left")
	local cgs=(/sys/fs/cgroup/*/"$CG_PARENT"/*bad*/)
	[ ! -d "${cgs[0]}" ] || ERRS+=("$row: cgroup left: ${cgs[*]}")
	[ "$lines" -eq 1 ] || ERRS+=("$row: $lines lines of output: $short")
	[[ ${output,,} == *"${keyword,,}"* ]] || ERRS+=("$row: error does not name \`$keyword': $short")
	return 0
}

# root_entries: ROOT_ENTRIES, the names in --root but .cache, space-separated
root_entries() {
	local e dotglob=0 nullglob=0
	! shopt -q dotglob || dotglob=1
	! shopt -q nullglob || nullglob=1
	shopt -s dotglob nullglob
	ROOT_ENTRIES=
	for e in "$TEST_ROOT"/*; do
		[ "${e##*/}" = .cache ] || ROOT_ENTRIES+="${e##*/} "
	done
	[ "$dotglob" = 1 ] || shopt -u dotglob
	[ "$nullglob" = 1 ] || shopt -u nullglob
}

report() {
	if [ "${#ERRS[@]}" -gt 0 ]; then
		printf '%s\n' "${ERRS[@]}" >&2
		return 1
	fi
}

setup() {
	setup_security_bundle
	set_args sleep 1000
	mkdir -p "$TEST_ROOT"
	ERRS=()
}

@test "bad-input: every command with missing or extra arguments" {
	for c in start state delete pause resume update events explain ps exec; do
		expect_error "id" "$c"
	done
	for c in start state delete pause resume update events explain; do
		expect_error "id" "$c" a b
	done
	expect_error "id" kill
	expect_error "id" kill a TERM extra
	expect_error "id" create --bundle "$BUNDLE"
	expect_error "id" create --bundle "$BUNDLE" bad1 bad2
	expect_error "id" run --bundle "$BUNDLE"
	expect_error "id" run --bundle "$BUNDLE" bad1 bad2
	# exec ID without a command looks the container up first, as runc does (exec.bats
	# exec-no-command): an unknown one is named
	expect_error "nosuch" exec nosuch
	expect_error "argument" list extra
	expect_error "argument" spec extra
	expect_error "file" profile check
	expect_error "bogus" profile bogus
	expect_error "profile" profile show a b
	expect_error "--bundle" create --bundle
	expect_error "--root" --root
	expect_error "--profile" --profile
	expect_error "nosuch-profile" --profile nosuch-profile create --bundle "$BUNDLE" bad
	report
}

@test "bad-input: argument rules agentrt does not follow yet" {
	expect_error "argument" features extra
	expect_error "show" profile
	if [ "${#ERRS[@]}" -gt 0 ]; then
		finding "$(printf '%s; ' "${ERRS[@]}")"
	fi
}

@test "bad-input: bad ids on every command" {
	long=$(printf 'a%.0s' $(seq 1025))
	for id in '../x' 'a/b' "$long" '..' '-x' $'a\tb'; do
		# `-x' is read as an option: the error names it instead.
		kw=id
		[ "$id" != -x ] || kw=-x
		for c in state start delete pause resume events explain ps; do
			expect_error "$kw" "$c" "$id"
		done
		expect_error "$kw" kill "$id" KILL
		expect_error "$kw" exec "$id" true
		expect_error "$kw" update --memory 1m "$id"
		expect_error "$kw" run --bundle "$BUNDLE" "$id"
		expect_error "$kw" create --bundle "$BUNDLE" "$id"
	done
	report
	[ ! -e "$(dirname "$TEST_ROOT")/x" ]
}

@test "bad-input: huge, negative and malformed numbers" {
	start_agent c1
	pid=$PID
	# (A negative pids limit means "unlimited" to runc and agentrt: not an error.)
	for v in 99999999999999999999999 -5 18446744073709551616 1e9 0x10 ' 5' '5 ' ''; do
		expect_error "memory" update --memory "$v" c1
		[ "$v" = -5 ] || expect_error "pids" update --pids-limit "$v" c1
		expect_error "quota" update --cpu-quota "$v" c1
		expect_error "shares" update --cpu-shares "$v" c1
	done
	for v in 99999999999 -1 65 4294967297 ' 9' RTMAX+1 SIGNOPE; do
		expect_error "signal" kill c1 "$v"
	done
	for v in 99999999999 4294967295 -1 '1000:99999999999' 'root'; do
		expect_error "user" exec --user "$v" c1 true
	done
	expect_error "preserve-fds" exec --preserve-fds 99999999999 c1 true
	expect_error "preserve-fds" exec --preserve-fds -1 c1 true
	# config.json numbers
	mkdir -p "$BUNDLE/bad"
	ln -sfn "$ROOTFS" "$BUNDLE/bad/rootfs"
	for f in '.process.user.uid = 4294967296' '.process.user.gid = -1' \
		'.linux.resources.pids.limit = 1e400' '.linux.resources.memory.limit = -99999999999999999999' \
		'.process.rlimits = [{"type": "RLIMIT_NOFILE", "soft": 18446744073709551616, "hard": 1}]' \
		'.process.oomScoreAdj = 99999' '.process.consoleSize = {"height": -1, "width": 99999999999}'; do
		jq "$f" "$BUNDLE/config.json" >"$BUNDLE/bad/config.json"
		expect_error "config.json" create --bundle "$BUNDLE/bad" bad
	done
	report
	# The container was not touched by any of it.
	[ "$(container_status c1)" = running ] && [ "$(container_pid c1)" = "$pid" ]
}

# truncations FILE: the offsets at which FILE is cut (about 40, spread over its length, up to
# the last byte before the final `}' and newline).
truncations() {
	local len step i
	len=$(($(stat -c %s "$1") - 1))
	[ "$(tail -c 1 "$1")" = "" ] && len=$((len - 1))
	step=$(((len + 39) / 40))
	for ((i = 0; i < len; i += step)); do echo "$i"; done
	echo $((len - 1))
}

@test "bad-input: config.json truncated at 40 offsets" {
	mkdir -p "$BUNDLE/bad"
	ln -s "$ROOTFS" "$BUNDLE/bad/rootfs"
	for off in $(truncations "$BUNDLE/config.json"); do
		head -c "$off" "$BUNDLE/config.json" >"$BUNDLE/bad/config.json"
		expect_error "config.json" create --bundle "$BUNDLE/bad" bad
	done
	report
}

@test "bad-input: exec --process and update --resources truncated at 40 offsets" {
	start_agent c1
	jq '.process | .args = ["true"]' "$BUNDLE/config.json" >"$BUNDLE/proc.json"
	echo '{"memory": {"limit": 104857600}, "pids": {"limit": 100}, "cpu": {"shares": 512, "quota": 50000, "period": 100000}}' >"$BUNDLE/res.json"
	for off in $(truncations "$BUNDLE/proc.json"); do
		head -c "$off" "$BUNDLE/proc.json" >"$BUNDLE/bad.json"
		expect_error "bad.json" exec --process "$BUNDLE/bad.json" c1
	done
	for off in $(truncations "$BUNDLE/res.json"); do
		head -c "$off" "$BUNDLE/res.json" >"$BUNDLE/bad.json"
		expect_error "bad.json" update --resources "$BUNDLE/bad.json" c1
	done
	report
	[ "$(container_status c1)" = running ]
}

# A damaged state.json (disk full, a crash mid-write by another tool): commands say so in one
# line, and `delete --force` still removes the container and its processes and cgroup.
@test "bad-input: a truncated state.json gives clean errors and delete --force still cleans up" {
	start_agent c1
	cp "$TEST_ROOT/c1/state.json" "$BUNDLE/state.orig"
	for off in 0 1 17 $(($(stat -c %s "$BUNDLE/state.orig") / 2)); do
		head -c "$off" "$BUNDLE/state.orig" >"$TEST_ROOT/c1/state.json"
		expect_error "state" state c1
		expect_error "c1" kill c1 KILL
	done
	report
	# (a killed init whose parent does not reap it stays a zombie: not alive)
	if ! out=$(rt delete --force c1 2>&1) || { kill -0 "$PID" 2>/dev/null &&
		[ "$(awk '/^State:/ {print $2}' "/proc/$PID/status" 2>/dev/null)" != Z ]; } ||
		[ -e "$TEST_ROOT/c1" ]; then
		# Clean up by hand (the init, then the state put back for delete), then report.
		kill -9 "$PID" 2>/dev/null
		mkdir -p "$TEST_ROOT/c1"
		cp "$BUNDLE/state.orig" "$TEST_ROOT/c1/state.json"
		rt delete --force c1
		finding "delete --force of a container whose state.json is damaged fails ($out): its init, cgroup and state dir stay"
	fi
}

# hostile-state-file: state.json replaced by a FIFO nobody writes, a symlink (to a FIFO, to
# /dev/zero, to a valid state document outside the state directory), a directory or a huge
# sparse file.  Each command says so in one line naming c1 at once (a FIFO held state, list,
# kill and delete 10 s each: read_file_at waits that long for a writer; a symlink was
# followed, its target read as the container's state), list still lists, and delete --force
# removes the container, its init and its cgroup.
@test "bad-input: hostile-state-file: state.json a FIFO, a symlink, a directory or huge: one line at once, delete --force cleans up" {
	start_agent c1
	local st=$TEST_ROOT/c1/state.json kind out
	cp "$st" "$BUNDLE/state.orig"
	mkfifo "$BUNDLE/fifo"
	for kind in fifo symlink-fifo symlink-zero symlink-doc dir huge; do
		rm -rf "$st"
		case $kind in
		fifo) mkfifo "$st" ;;
		symlink-fifo) ln -s "$BUNDLE/fifo" "$st" ;;
		symlink-zero) ln -s /dev/zero "$st" ;;
		symlink-doc) ln -s "$BUNDLE/state.orig" "$st" ;;
		dir) mkdir "$st" || { report; fail "state dir gone after the previous kind"; } ;;
		huge) cp "$BUNDLE/state.orig" "$st" && truncate -s 4G "$st" ;;
		esac
		EXPECT_SECONDS=5 expect_error "c1" state c1
		EXPECT_SECONDS=5 expect_error "c1" kill c1 KILL
		EXPECT_SECONDS=5 expect_error "c1" exec c1 true
		EXPECT_SECONDS=5 expect_error "c1" delete c1
		out=$(timeout --kill-after=2 5 "$AGENTRT" --root "$TEST_ROOT" list 2>&1) ||
			ERRS+=("[$kind] list: $? $out")
	done
	rm -rf "$st"
	mkfifo "$st"
	report
	kill -0 "$PID" || fail "the init $PID died while its state was damaged"
	out=$(timeout --kill-after=2 10 "$AGENTRT" --root "$TEST_ROOT" delete --force c1 2>&1) || {
		rm -f "$st"
		cp "$BUNDLE/state.orig" "$st"
		rt delete --force c1
		fail "delete --force with a FIFO for state.json: $out"
	}
	[ ! -e "$TEST_ROOT/c1" ] || fail "delete --force left the state directory"
	for ((i = 0; i < 50; i++)); do kill -0 "$PID" 2>/dev/null || break; sleep 0.1; done
	if kill -0 "$PID" 2>/dev/null && [ "$(awk '/^State:/ {print $2}' "/proc/$PID/status" 2>/dev/null)" != Z ]; then
		fail "delete --force left the init $PID alive"
	fi
}
