#!/usr/bin/env bats
# terminal.bats - process.terminal: the pty master goes over --console-socket (SCM_RIGHTS,
# received by tests/helpers/recvtty), /dev/console is the pty, input and output flow,
# foreground run wires the caller's terminal, detached without a socket is an error.

load helpers

@test "terminal with --console-socket: master received, stdio is the pty" {
	update_config '.process.terminal = true'
	set_cmd 'tty; [ -t 0 ] && [ -t 1 ] && [ -t 2 ] && echo all-ttys; sleep 1000'
	start_recvtty
	run_detached c1 --console-socket "$CONSOLE_SOCKET"
	[ "$status" -eq 0 ] || fail "run -d: $output"
	wait_for_file "$BUNDLE/tty.info"
	grep -q '^pty /dev/pts/[0-9]' "$BUNDLE/tty.info" || fail "$(cat "$BUNDLE/tty.info")"
	for i in $(seq 50); do grep -q all-ttys "$BUNDLE/tty.out" 2>/dev/null && break; sleep 0.1; done
	grep -q all-ttys "$BUNDLE/tty.out" || fail "tty output: $(cat "$BUNDLE/tty.out")"
	grep -qE '^/dev/(pts/[0-9]+|console)' "$BUNDLE/tty.out"
	# The container's fd 0 is a pty slave (major 136-143).
	pid=$(container_pid c1)
	major=$(stat -L -c %t "/proc/$pid/fd/0")
	[ $((0x$major)) -ge 136 ] && [ $((0x$major)) -le 143 ] || fail "fd 0 major $major"
}

@test "terminal: /dev/console is the pty" {
	update_config '.process.terminal = true'
	set_args sleep 1000
	start_recvtty
	run_detached c1 --console-socket "$CONSOLE_SOCKET"
	[ "$status" -eq 0 ] || fail "run -d: $output"
	pid=$(container_pid c1)
	run stat -L -c '%F %t' "/proc/$pid/root/dev/console"
	[[ "$output" == "character special file "* ]] || fail "$output"
	major=${output##* }
	[ $((0x$major)) -ge 136 ] && [ $((0x$major)) -le 143 ] || fail "/dev/console major $major"
	# Mounted from the container's devpts (or a symlink into /dev/pts).
	line=$(awk '$5 == "/dev/console"' "/proc/$pid/mountinfo")
	if [ -n "$line" ]; then
		[ "$(awk '{print $(NF-2)}' <<<"$line")" = devpts ] || fail "$line"
	else
		[[ "$(readlink "/proc/$pid/root/dev/console")" == *pts/* ]]
	fi
}

@test "terminal: input typed on the master reaches the process" {
	update_config '.process.terminal = true'
	set_cmd 'read line; echo "got:$line"; sleep 2'
	start_recvtty --input $'typed-input\n'
	run_detached c1 --console-socket "$CONSOLE_SOCKET"
	[ "$status" -eq 0 ] || fail "run -d: $output"
	for i in $(seq 50); do grep -q 'got:typed-input' "$BUNDLE/tty.out" 2>/dev/null && break; sleep 0.1; done
	grep -q 'got:typed-input' "$BUNDLE/tty.out" || fail "$(cat "$BUNDLE/tty.out")"
}

@test "terminal: create with --console-socket, output after start" {
	update_config '.process.terminal = true'
	set_cmd 'echo after-start; sleep 1000'
	start_recvtty
	create_container c1 --console-socket "$CONSOLE_SOCKET"
	[ "$status" -eq 0 ] || fail "create: $output"
	wait_for_file "$BUNDLE/tty.info"
	sleep 0.3
	! grep -q after-start "$BUNDLE/tty.out" 2>/dev/null
	rt start c1
	for i in $(seq 50); do grep -q after-start "$BUNDLE/tty.out" 2>/dev/null && break; sleep 0.1; done
	grep -q after-start "$BUNDLE/tty.out"
}

@test "terminal detached without --console-socket is a clear error" {
	update_config '.process.terminal = true'
	set_args true
	run_detached c1
	assert_clean_failure
	assert_output_contains console
	[ -z "$(rt list -q)" ]
}

# console-socket-misuse: runc takes --console-socket only for a detached process with a terminal
# ("cannot use console socket if runc will not detach or allocate tty"): run in the foreground,
# and exec without -t or without -d, fail before anything runs.  agentrt ignored the socket in
# those exec cases and ran the process, and took it for run in the foreground.
@test "console-socket-misuse: --console-socket without -d, or for exec without -t, fails and runs nothing" {
	update_config '.process.terminal = true'
	set_args true
	start_recvtty
	run rt run --console-socket "$CONSOLE_SOCKET" --bundle "$BUNDLE" fg </dev/null
	assert_clean_failure
	[ -z "$(rt list -q)" ] || fail "run left $(rt list -q)"
	update_config '.process.terminal = false'
	set_args sleep 100
	run_detached c1
	[ "$status" -eq 0 ] || fail "run -d: $output"
	local how
	for how in "-t" "-d" ""; do
		run rt exec $how --console-socket "$CONSOLE_SOCKET" c1 touch "/tmp/ran$how"
		[ "$status" -ne 0 ] || fail "exec $how --console-socket: exit 0"
		assert_clean_failure
		[ ! -e "$ROOTFS/tmp/ran$how" ] || fail "exec $how --console-socket ran the process"
	done
}

@test "terminal: a console socket that does not listen is an error, nothing left" {
	update_config '.process.terminal = true'
	set_args true
	run_detached c1 --console-socket "$BUNDLE/nobody-listens.sock"
	assert_clean_failure
	[ -z "$(rt list -q)" ]
}

# console-receiver-drops-master: a receiver that takes the pty master and closes it (and then
# the connection) hangs the container's terminal up: its init dies of SIGHUP.  runc 1.1.5's
# create fails ("error during container init"), its init dead before create ends; ours
# returned 0 and left a `stopped` container.  Now create fails naming the socket, nothing left.
# Receivers that never accept, or accept and never read, keep the master in the socket's
# queue: create succeeds there, as runc's.
@test "console-receiver-drops-master: a receiver that closes the pty master fails create, nothing left" {
	update_config '.process.terminal = true'
	set_args sleep 1000
	start_recvtty --close
	create_container c1 --console-socket "$CONSOLE_SOCKET"
	assert_clean_failure
	if is_agentrt; then
		assert_output_contains "console socket \`$CONSOLE_SOCKET\`"
		[ "$(grep -c . <<<"$output")" -eq 1 ] || fail "not one line: $output"
	fi
	[ -z "$(rt list -q)" ] || fail "left: $(rt list)"
}

# The same for exec -d -t: runc 1.1.5's exec returns 0 and its process dies of SIGHUP.
@test "console-receiver-drops-master: exec -t whose receiver closes the pty master fails, its process is gone" {
	agentrt_only "runc 1.1.5's exec returns 0, its process dies of SIGHUP"
	set_args sleep 1000
	run_detached c1
	[ "$status" -eq 0 ] || fail "run -d: $output"
	start_recvtty --close
	rt_bg exec -d -t --console-socket "$CONSOLE_SOCKET" c1 sleep 31.94
	assert_clean_failure
	assert_output_contains "console socket \`$CONSOLE_SOCKET\`"
	[ "$(grep -c . <<<"$output")" -eq 1 ] || fail "not one line: $output"
	# (a zombie's cmdline is empty)
	for ((i = 0; i < 50; i++)); do
		left=$(grep -lsxz 31.94 /proc/[0-9]*/cmdline) || break
		sleep 0.1
	done
	[ -z "$left" ] || fail "exec's process runs on: $left"
}

@test "console-receiver-never-accepts: a receiver that never accepts or never reads: create succeeds (as runc)" {
	requires python3
	update_config '.process.terminal = true'
	set_args sleep 1000
	for mode in noaccept noread; do
		CONSOLE_SOCKET=$BUNDLE/$mode.sock
		python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[2]); s.listen(1)
if sys.argv[1] == "noread":
    c, _ = s.accept()
time.sleep(60)' "$mode" "$CONSOLE_SOCKET" </dev/null >/dev/null 2>&1 &
		RECVTTY_PID=$!
		for ((i = 0; i < 50; i++)); do [ -S "$CONSOLE_SOCKET" ] && break; sleep 0.1; done
		create_container "c-$mode" --console-socket "$CONSOLE_SOCKET"
		[ "$status" -eq 0 ] || fail "$mode: create: $output"
		[ "$(container_status "c-$mode")" = created ] || fail "$mode: $(rt list)"
		rt delete --force "c-$mode"
		kill "$RECVTTY_PID"
		wait "$RECVTTY_PID" 2>/dev/null || true
		RECVTTY_PID=
	done
}

# console-receiver-races: receivers an engine's console code can be (a shim that dies before it
# reads, one that never accepts, one that accepts and never reads) for exec -d -t and create:
# no hang (bounded by timeout), one line when it fails, nothing left.  Measured with runc
# 1.1.5: exec -d -t returns 0 for the receiver that never accepts or never reads (the master
# waits in the socket's queue) and fails (255, "broken pipe") for the one that accepts and
# exits, its process gone; create fails for that one too ("broken pipe"), nothing listed.
# Ours: the same statuses, the failures naming the socket.
console_receiver() { # MODE SOCKET: noaccept, noread, or exit (accept, close, exit)
	python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[2]); s.listen(1)
if sys.argv[1] != "noaccept":
    c, _ = s.accept()
if sys.argv[1] == "exit":
    sys.exit(0)
time.sleep(60)' "$1" "$2" </dev/null >/dev/null 2>&1 &
	RECVTTY_PID=$!
	for ((i = 0; i < 50; i++)); do [ -S "$2" ] && break; sleep 0.1; done
	[ -S "$2" ] || fail "no receiver on $2"
}

@test "console-receiver-races: exec -d -t and create with a receiver that never accepts, never reads, or accepts and exits" {
	requires python3
	set_args sleep 1000
	run_detached c1
	[ "$status" -eq 0 ] || fail "run -d: $output"
	local mode tag left
	for mode in noaccept noread exit; do
		CONSOLE_SOCKET=$BUNDLE/x-$mode.sock
		console_receiver "$mode" "$CONSOLE_SOCKET"
		tag=31.9$((${#mode} % 10))1
		rt_bg exec -d -t --console-socket "$CONSOLE_SOCKET" c1 sleep "$tag"
		[ "$status" -ne 124 ] || fail "exec with a $mode receiver: timed out"
		if [ "$mode" = exit ]; then
			assert_clean_failure
			if is_agentrt; then
				assert_output_contains "console socket \`$CONSOLE_SOCKET\`"
				[ "$(grep -c . <<<"$output")" -eq 1 ] || fail "$mode: not one line: $output"
			fi
		else
			[ "$status" -eq 0 ] || fail "exec with a $mode receiver: $status: $output"
		fi
		kill "$RECVTTY_PID" 2>/dev/null || true
		wait "$RECVTTY_PID" 2>/dev/null || true
		RECVTTY_PID=
		# the receiver is gone: the master with it, the process has its SIGHUP (a zombie's
		# cmdline is empty)
		for ((i = 0; i < 50; i++)); do
			left=$(grep -lsxz "$tag" /proc/[0-9]*/cmdline) || break
			sleep 0.1
		done
		[ -z "$left" ] || fail "$mode: exec's process runs on: $left"
	done
	rt delete --force c1
	update_config '.process.terminal = true'
	CONSOLE_SOCKET=$BUNDLE/c-exit.sock
	console_receiver exit "$CONSOLE_SOCKET"
	create_container c2 --console-socket "$CONSOLE_SOCKET"
	[ "$status" -ne 124 ] || fail "create with an exiting receiver: timed out"
	assert_clean_failure
	if is_agentrt; then
		assert_output_contains "console socket \`$CONSOLE_SOCKET\`"
		[ "$(grep -c . <<<"$output")" -eq 1 ] || fail "create: not one line: $output"
	fi
	[ -z "$(rt list -q)" ] || fail "left: $(rt list)"
}

@test "terminal in the foreground uses the caller's terminal" {
	requires script
	update_config '.process.terminal = true'
	set_cmd 'tty; echo fg-done'
	run script -qec "timeout 30 '$AGENTRT' --root '$TEST_ROOT' run --bundle '$BUNDLE' c1" /dev/null
	[ "$status" -eq 0 ] || fail "$output"
	grep -q fg-done <<<"$output"
	grep -qE '/dev/(pts/[0-9]+|console)' <<<"$output"
}

@test "terminal relayed by agentrt: a pipe gets the program's bytes, no CR added (as runc); a console socket's pty is left as it is" {
	update_config '.process.terminal = true'
	set_cmd 'printf "a\nb\n"'
	# foreground run, stdout a pipe: agentrt relays the pty
	out=$(timeout 30 "$AGENTRT" --root "$TEST_ROOT" run --bundle "$BUNDLE" c1 </dev/null | od -An -tx1 | tr -d ' \n')
	[ "$out" = 610a620a ] || fail "run: $out"
	update_config '.process.terminal = false'
	set_args sleep 1000
	run_detached c3
	[ "$status" -eq 0 ] || fail "run -d: $output"
	out=$(timeout 30 "$AGENTRT" --root "$TEST_ROOT" exec -t c3 printf 'x\ny\n' </dev/null | od -An -tx1 | tr -d ' \n')
	[ "$out" = 780a790a ] || fail "exec -t: $out"
	# the engine's pty (through a console socket) keeps the kernel's default: LF -> CR LF
	jq '.process | .terminal = true | .args = ["sh", "-c", "printf \"p\\n\"; sleep 2"]' \
		"$BUNDLE/config.json" >"$BUNDLE/process.json"
	start_recvtty
	run rt exec -d --console-socket "$CONSOLE_SOCKET" --process "$BUNDLE/process.json" c3
	[ "$status" -eq 0 ] || fail "exec: $output"
	for i in $(seq 50); do grep -q p "$BUNDLE/tty.out" 2>/dev/null && break; sleep 0.1; done
	[ "$(od -An -tx1 <"$BUNDLE/tty.out" | tr -d ' \n')" = 700d0a ] || fail "console socket pty: $(od -c "$BUNDLE/tty.out" | head -3)"
}

# The foreground relay (run/exec -t without a console socket) with the caller's stdin closed:
# the signalfd took fd 0 and the relay read it as stdin, swallowing the SIGCHLD, so agentrt
# never ended (20 s to the timeout, the program long gone).  runc 1.1 refuses a foreground
# terminal without a /dev/tty of the caller's.
@test "tty-relay-stdin-closed: run -t and exec -t with stdin closed end with the program and its status" {
	agentrt_only "runc 1.1 needs the caller's /dev/tty for a foreground terminal"
	update_config '.process.terminal = true'
	set_cmd 'sleep 0.3; echo done; exit 5'
	run bash -c "timeout --kill-after=2 20 '$AGENTRT' --root '$TEST_ROOT' run --bundle '$BUNDLE' c1 <&-"
	[ "$status" -eq 5 ] && [ "$output" = done ] || fail "run: $status: $output"
	update_config '.process.terminal = false'
	set_args sleep 1000
	run_detached c2
	[ "$status" -eq 0 ] || fail "run -d: $output"
	run bash -c "timeout --kill-after=2 20 '$AGENTRT' --root '$TEST_ROOT' exec -t c2 sh -c 'echo done; exit 6' <&-"
	[ "$status" -eq 6 ] && [ "$output" = done ] || fail "exec -t: $status: $output"
}

# The relay's input ended (/dev/null, a pipe whose writer left, a closed stdin): nothing told
# the program, and one reading its terminal (`cat`, a shell) waited for ever, agentrt with it (a
# TERM it forwards is ignored by a pid 1).  Now the relay sends the pty's EOF character, as a
# user at the terminal does (twice after a line without its newline).  runc 1.1 refuses a
# foreground terminal without a /dev/tty of the caller's.
@test "tty-relay-stdin-eof: run -t and exec -t of a program reading the pty end when stdin ends" {
	agentrt_only "runc 1.1 needs the caller's /dev/tty for a foreground terminal"
	update_config '.process.terminal = true'
	set_cmd 'cat >/dev/null; echo got-eof; exit 4'
	run bash -c "timeout --kill-after=2 10 '$AGENTRT' --root '$TEST_ROOT' run --bundle '$BUNDLE' c1 </dev/null"
	[ "$status" -eq 4 ] && [[ "$output" == *got-eof* ]] || fail "run </dev/null: $status: $output"
	rt delete -f c1 >/dev/null 2>&1 || true
	set_args cat
	run bash -c "printf 'line1\\nno-newline' | timeout --kill-after=2 10 '$AGENTRT' --root '$TEST_ROOT' run --bundle '$BUNDLE' c1"
	[ "$status" -eq 0 ] || fail "run from a pipe: $status: $output"
	[[ "$output" == *no-newline* ]] || fail "run from a pipe: $output"
	rt delete -f c1 >/dev/null 2>&1 || true
	# more than the pty holds: the relay wrote the input blocking while `cat` blocked on its
	# output, which the relay no longer read (2 KiB of 229 KB came through, then nothing)
	set_args cat
	run bash -c "seq 40000 | timeout --kill-after=2 20 '$AGENTRT' --root '$TEST_ROOT' run --bundle '$BUNDLE' c1 | grep -c ."
	[ "$status" -eq 0 ] && [ "$output" -ge 40000 ] || fail "run with 40,000 lines in: $status: $output"
	rt delete -f c1 >/dev/null 2>&1 || true
	update_config '.process.terminal = false'
	set_args sleep 1000
	run_detached c2
	[ "$status" -eq 0 ] || fail "run -d: $output"
	for in in '</dev/null' '<&-'; do
		run bash -c "timeout --kill-after=2 10 '$AGENTRT' --root '$TEST_ROOT' exec -t c2 sh -c 'cat >/dev/null; echo got-eof; exit 6' $in"
		[ "$status" -eq 6 ] && [[ "$output" == *got-eof* ]] || fail "exec -t $in: $status: $output"
	done
}

# The relay's output gone (stdout closed, /dev/full, a reader that went away as in `| head
# -1`): it stopped reading the pty, the program blocked writing to it and agentrt waited for it
# for ever (a TERM it forwards is ignored by a pid 1).  Now the pty is hung up: the program's
# writes fail (EIO), it runs to its end and agentrt returns its status.
@test "tty-relay-stdout-gone: a program writing to a relayed pty whose output is gone is not blocked" {
	agentrt_only "runc 1.1 needs the caller's /dev/tty for a foreground terminal"
	update_config '.process.terminal = true'
	set_cmd 'i=0; while [ $i -lt 3000 ]; do echo line-$i-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx; i=$((i+1)); done 2>/dev/null; exit 3'
	for out in '>/dev/full' '>&-' '| head -n1 >/dev/null'; do
		run bash -c "timeout --kill-after=2 20 '$AGENTRT' --root '$TEST_ROOT' run --bundle '$BUNDLE' c1 </dev/null $out; echo \"status \${PIPESTATUS[0]}\""
		[ "${lines[-1]}" = "status 3" ] || fail "stdout $out: $output"
		rt delete -f c1 >/dev/null 2>&1 || true
	done
	run bash -c "timeout --kill-after=2 20 '$AGENTRT' --root '$TEST_ROOT' run --bundle '$BUNDLE' c1 </dev/null | wc -l"
	[ "$status" -eq 0 ] && [ "$output" -eq 3000 ] || fail "all lines through a pipe: $output"
}

@test "no terminal: stdio is the runtime's own (pipes pass through)" {
	set_cmd 'ls -l /proc/self/fd/0 /proc/self/fd/1'
	run bash -c "echo | timeout 30 '$AGENTRT' --root '$TEST_ROOT' run --bundle '$BUNDLE' c1 | cat"
	[ "$status" -eq 0 ] || fail "$output"
	[ "$(grep -c 'pipe:' <<<"$output")" -eq 2 ] || fail "$output"
}

# process.consoleSize sets the pty's window size; the pty (and so /dev/stdin etc.) belongs to
# the process's uid as runc's "tty owner" makes it, so a non-root process can reopen it.
@test "terminal: run applies process.consoleSize; the pty is owned by the process's uid" {
	update_config '.process.terminal = true | .process.consoleSize = {"height": 41, "width": 133} |
		.process.user = {"uid": 1000, "gid": 1000}'
	set_cmd 'stty size; echo reopened >/dev/stdout && echo reopen-ok; sleep 1000'
	start_recvtty
	run_detached c1 --console-socket "$CONSOLE_SOCKET"
	[ "$status" -eq 0 ] || fail "run -d: $output"
	for i in $(seq 50); do grep -q reopen-ok "$BUNDLE/tty.out" 2>/dev/null && break; sleep 0.1; done
	grep -q '^41 133' "$BUNDLE/tty.out" || fail "window size: $(cat "$BUNDLE/tty.out")"
	grep -q reopen-ok "$BUNDLE/tty.out" || fail "reopen /dev/stdout as uid 1000: $(cat "$BUNDLE/tty.out")"
	pid=$(container_pid c1)
	[ "$(stat -L -c %u "/proc/$pid/fd/0")" = 1000 ] || fail "pty owner: $(stat -L -c %u:%g "/proc/$pid/fd/0")"
}

@test "terminal: exec --tty applies process.consoleSize and gives the pty to the process's uid" {
	set_args sleep 1000
	run_detached c1
	[ "$status" -eq 0 ] || fail "run -d: $output"
	jq '.process | .terminal = true | .consoleSize = {"height": 23, "width": 71} |
		.user = {"uid": 1000, "gid": 1000} | .args = ["sh", "-c", "stty size; stat -c owner=%u /proc/self/fd/0; sleep 2"]' \
		"$BUNDLE/config.json" >"$BUNDLE/process.json"
	start_recvtty
	run rt exec -d --console-socket "$CONSOLE_SOCKET" --process "$BUNDLE/process.json" c1
	[ "$status" -eq 0 ] || fail "exec: $output"
	for i in $(seq 50); do grep -q owner= "$BUNDLE/tty.out" 2>/dev/null && break; sleep 0.1; done
	grep -q '^23 71' "$BUNDLE/tty.out" || fail "window size: $(cat "$BUNDLE/tty.out")"
	grep -q 'owner=1000' "$BUNDLE/tty.out" || fail "pty owner: $(cat "$BUNDLE/tty.out")"
}
