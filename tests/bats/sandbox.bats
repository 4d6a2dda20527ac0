#!/usr/bin/env bats
# sandbox.bats - `agentrt sandbox -- CMD` (no bundle, no engine) and `agentrt doctor`, as an
# unprivileged user (uid 65534 with a home of its own made here) and as root.  What each test
# checks is what the program inside sees, and what is on the host afterwards.

load helpers

SBX_UID=65534

setup() {
	requires root setpriv
	agentrt_only "agentrt sandbox"
	SBX=$(mktemp -d /tmp/agentrt-test-sbx.XXXXXX)
	mkdir -p "$SBX/home/.ssh" "$SBX/home/.aws" "$SBX/home/.docker" "$SBX/ws" "$SBX/run"
	echo "PRIVATE KEY" >"$SBX/home/.ssh/id_rsa"
	echo "aws_secret_access_key = AKIA" >"$SBX/home/.aws/credentials"
	echo '{"auths": {"x": {"auth": "c2VjcmV0"}}}' >"$SBX/home/.docker/config.json"
	echo "history line" >"$SBX/home/.bash_history"
	printf '[user]\n\tname = Sandbox Test\n' >"$SBX/home/.gitconfig"
	echo "original" >"$SBX/ws/file.txt"
	# Our own test tree, handed to the test user.
	chown -R "$SBX_UID:$SBX_UID" "$SBX"
	chmod 700 "$SBX/home" "$SBX/run"
	chmod 755 "$SBX"
	SBX_ROOT=$TEST_ROOT-sbx
}

teardown() {
	local m
	if [ -n "${SBX:-}" ]; then
		m=$(mounts_below "$SBX")
		[ -z "$m" ] || echo "teardown: mounts left: $m" >&2
		[ -z "$m" ] && rm -rf --one-file-system "$SBX"
	fi
	[ -n "${SBX_ROOT:-}" ] && rm -rf --one-file-system "$SBX_ROOT" "$SBX_ROOT-sandbox"
	[ -z "${m:-}" ]
}

# as_user CMD...: CMD as the unprivileged test user, with its home and runtime dir.
as_user() {
	(cd "$SBX/ws" && timeout --kill-after=5 "$RT_TIMEOUT" setpriv --reuid "$SBX_UID" \
		--regid "$SBX_UID" --clear-groups env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		HOME="$SBX/home" XDG_RUNTIME_DIR="$SBX/run" XDG_DATA_HOME="$SBX/home/.local/share" \
		SSH_AUTH_SOCK=/tmp/agent.sock TERM=dumb "$@")
}

# user_proc_events: true when this kernel lets the test user subscribe to process events (the
# proc connector; some kernels refuse every unprivileged bind: then a user's sandbox records its
# programs from their exec calls, says so in its trail, and takes the exit status from the init's
# pidfd)
user_proc_events() {
	! as_user "$AGENTRT" doctor 2>&1 | grep -q '^missing  proc connector'
}

# NOT_PROC_REFUSED: a jq filter for the audit_errors other than that refusal
NOT_PROC_REFUSED='select(.source != "process" or (.error | test("lets only privileged processes subscribe") | not))'

# sbx ARGS...: agentrt sandbox as the test user.
sbx() {
	as_user "$AGENTRT" sandbox "$@"
}

# sbx_out ARGS...: the same, only the program's standard output (agentrt's warnings, such as
# "no file records" for a user's sandbox without fanotify, go to stderr).
sbx_out() {
	as_user "$AGENTRT" sandbox "$@" 2>/dev/null
}

@test "sandbox: the exit status passes through (user)" {
	run sbx --name st1 -- sh -c 'exit 7'
	[ "$status" -eq 7 ]
	[[ "$output" == *"sandbox \`st1\` ended"* ]]
	run sbx --name st2 -- true
	[ "$status" -eq 0 ]
	run sbx --name st3 -- sh -c 'kill -TERM $$'
	[ "$status" -eq 143 ]
}

@test "sandbox: runs as the user, in the workspace, in namespaces of its own" {
	run sbx_out --name ns1 -- sh -c 'id -u; pwd; readlink /proc/self/ns/pid /proc/self/ns/net /proc/self/ns/mnt'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "$SBX_UID" ]
	[ "${lines[1]}" = "$SBX/ws" ]
	[ "${lines[2]}" != "$(readlink /proc/self/ns/pid)" ]
	[ "${lines[3]}" != "$(readlink /proc/self/ns/net)" ]
	[ "${lines[4]}" != "$(readlink /proc/self/ns/mnt)" ]
}

@test "sandbox: the root and /etc are read-only" {
	run sbx --name ro1 -- sh -c 'touch /etc/agentrt-sbx-x; echo etc=$?; touch /usr/agentrt-sbx-x; echo usr=$?; (echo x >/agentrt-sbx-x) 2>/dev/null; echo root=$?; grep -c " / / ro," /proc/self/mountinfo'
	[[ "$output" == *"etc=1"* ]]
	[[ "$output" == *"usr=1"* ]]
	[[ "$output" == *"root=2"* ]]
	[[ "$output" == *"Read-only file system"* ]]
	[ ! -e /etc/agentrt-sbx-x ] && [ ! -e /usr/agentrt-sbx-x ] && [ ! -e /agentrt-sbx-x ]
}

@test "sandbox: credentials in the home are unreadable, dotfiles a private copy" {
	run sbx --name cred1 -- sh -c '
		for f in .ssh/id_rsa .aws/credentials .docker/config.json .bash_history; do
			cat "$HOME/$f" 2>/dev/null && echo "LEAK $f"; done
		ls -A "$HOME"; cat "$HOME/.gitconfig"; (echo x >>"$HOME/.gitconfig") 2>/dev/null; echo gc=$?
		echo "sock=${SSH_AUTH_SOCK:-none}"'
	[ "$status" -eq 0 ]
	[[ "$output" != *LEAK* ]]
	[[ "$output" != *"PRIVATE KEY"* ]]
	[[ "$output" == *"name = Sandbox Test"* ]]
	[[ "$output" == *"gc=0"* ]]
	[[ "$output" == *"sock=none"* ]]
	# nothing of it changed on the host: the sandbox wrote its own copy
	[ "$(cat "$SBX/home/.gitconfig")" = "$(printf '[user]\n\tname = Sandbox Test')" ]
}

@test "sandbox: other users' homes, /root and /run are hidden" {
	run sbx_out --name hide1 -- sh -c 'ls -A /root /run /home | wc -l; ls /run/agentrt* 2>&1 | head -1'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" -le 5 ] # the three headers and blank lines, nothing else
	[[ "$output" != *"$TEST_ROOT"* ]]
}

@test "sandbox: a workspace write is held for review, then committed with workspace commit" {
	run sbx --name ws1 -- sh -c 'echo changed >file.txt; echo new >new.txt; mkdir -p d/e; echo deep >d/e/f'
	[ "$status" -eq 0 ]
	[[ "$output" == *"agentrt workspace ws1 diff"* ]]
	# The host directory is untouched until the review.
	[ "$(cat "$SBX/ws/file.txt")" = original ]
	[ ! -e "$SBX/ws/new.txt" ]
	run as_user "$AGENTRT" workspace ws1 diff
	[ "$status" -eq 0 ]
	[[ "$output" == *"new.txt"* ]]
	[[ "$output" == *"d/e/f"* ]]
	[[ "$output" == *"file.txt"* ]]
	run as_user "$AGENTRT" workspace ws1 commit
	[ "$status" -eq 0 ]
	[ "$(cat "$SBX/ws/file.txt")" = changed ]
	[ "$(cat "$SBX/ws/d/e/f")" = deep ]
	# the files are the user's, not root's
	[ "$(stat -c %u "$SBX/ws/new.txt")" = "$SBX_UID" ]
	as_user "$AGENTRT" workspace ws1 purge >/dev/null 2>&1 || true
}

# A user has no CAP_DAC_OVERRIDE: overlayfs makes the work dir's work/ mode 0 when a user mounts
# it, Go's module cache is 0555, and an agent can chmod 000 its own directories.  `purge` and
# `discard` then failed with "Permission denied" after every user's sandbox, having removed
# meta.json first, so the rest (its work/ dir, the agent's files) stayed behind under a
# workspace no command could name any more.  And a directory the agent made unreadable stopped
# the review with a bare "open: Permission denied".
@test "sandbox: a user's purge and discard remove what the agent made unremovable (regression: purge left work/work and the agent's files)" {
	local wsd
	run sbx --name pg0 -- sh -c 'mkdir -p locked/in ro/mod/pkg wx; echo x >locked/in/f
		echo y >ro/mod/pkg/g.go; echo z >wx/h; chmod 000 locked; chmod 0555 ro/mod/pkg ro/mod ro; chmod 0311 wx'
	[ "$status" -eq 0 ] || fail "$output"
	wsd=$(find "$SBX/home/.local/share/agentrt" -maxdepth 4 -type d -path '*/.workspaces/pg0')
	[ -n "$wsd" ] && [ -d "$wsd/work/work" ] || fail "no workspace dir: $wsd"
	# the review says which directory it cannot read and what to do, not a bare errno
	run as_user "$AGENTRT" workspace pg0 diff
	[ "$status" -ne 0 ]
	[[ "$output" == *'`locked` cannot be listed (mode 0000, set inside the sandbox)'* ]] || fail "$output"
	run as_user "$AGENTRT" workspace pg0 discard
	[ "$status" -eq 0 ] || fail "discard: $output"
	[ -z "$(ls -A "$wsd/upper")" ] || fail "discard left: $(ls -A "$wsd/upper")"
	run as_user "$AGENTRT" workspace pg0 diff
	[ "$status" -eq 0 ] || fail "diff after discard: $output"
	# a second sandbox in the same workspace, then purge: nothing of it stays
	run sbx --name pg1 -- sh -c 'mkdir -p a/b; chmod 000 a'
	[ "$status" -eq 0 ] || fail "$output"
	for id in pg0 pg1; do
		run as_user "$AGENTRT" workspace "$id" purge
		[ "$status" -eq 0 ] || fail "purge $id: $output"
		[ ! -e "${wsd%/*}/$id" ] || fail "purge $id left: $(find "${wsd%/*}/$id" | head)"
	done
	# the host directory was never touched
	[ ! -e "$SBX/ws/locked" ] && [ ! -e "$SBX/ws/a" ]
}

# Go's module cache is read-only (0555 directories).  A user's commit set each directory's mode
# before writing into it: the first file below a 0555 directory failed ("Permission denied"),
# half the tree and a `.agentrt-ws.*` temporary file stayed in the user's directory.  Modes are
# set after the contents now, the deepest first.
@test "sandbox: a user commits a read-only tree such as Go's module cache (regression: commit stopped half way, a temporary file left)" {
	run sbx --name ro1 -- sh -c 'mkdir -p gomod/cache/mod/x@v1/sub; echo "package x" >gomod/cache/mod/x@v1/sub/x.go
		echo go >gomod/cache/mod/x@v1/go.mod; chmod -R a-w gomod; chmod 0711 gomod/cache'
	[ "$status" -eq 0 ] || fail "$output"
	run as_user "$AGENTRT" workspace ro1 commit
	[ "$status" -eq 0 ] || fail "commit: $output"
	[ "$(cat "$SBX/ws/gomod/cache/mod/x@v1/sub/x.go")" = "package x" ]
	[ "$(stat -c %a "$SBX/ws/gomod/cache/mod/x@v1/sub")" = 555 ]
	[ "$(stat -c %a "$SBX/ws/gomod/cache")" = 711 ]
	[ "$(stat -c %a "$SBX/ws/gomod/cache/mod/x@v1/go.mod")" = 444 ]
	[ -z "$(find "$SBX/ws" -name '.agentrt-ws.*')" ] || fail "left: $(find "$SBX/ws" -name '.agentrt-ws.*')"
	run as_user "$AGENTRT" workspace ro1 diff
	[ "$status" -eq 0 ] && [[ "$output" == *"no changes to"* ]] || fail "diff after commit: $output"
	as_user "$AGENTRT" workspace ro1 purge >/dev/null
	chmod -R u+w "$SBX/ws/gomod"
}

# A user's sandbox mounts its overlay with userxattr: a directory removed and made again is opaque
# by user.overlay.opaque, which its review (recorded in meta.json as that mount's namespace, see
# workspace.bats forged-opaque) reads: the host's files below it are deleted, by the commit too.
@test "sandbox: a user's directory removed and made again hides the host's files below it, in diff and commit" {
	mkdir -p "$SBX/ws/sub" && echo old >"$SBX/ws/sub/old.txt" && chown -R "$SBX_UID:$SBX_UID" "$SBX/ws/sub"
	local wsd out
	run sbx_out --name op1 -- sh -c 'rm -rf sub && mkdir sub && echo new >sub/new.txt && ls sub'
	[ "$status" -eq 0 ] && [ "$output" = new.txt ] || fail "$output"
	wsd=$(find "$SBX/home/.local/share/agentrt" -maxdepth 4 -type d -path '*/.workspaces/op1')
	[ "$(jq -r .overlay_xattr "$wsd/meta.json")" = user ] || fail "meta: $(jq -c . "$wsd/meta.json" | head -c 300)"
	out=$(as_user "$AGENTRT" workspace op1 diff --format json 2>/dev/null) || fail "diff: $out"
	[ "$(jq -r '[.changes[] | "\(.kind):\(.path)"] | sort | join(" ")' <<<"$out")" = "added:sub/new.txt deleted:sub/old.txt" ] ||
		fail "diff: $out"
	run as_user "$AGENTRT" workspace op1 commit
	[ "$status" -eq 0 ] || fail "commit: $output"
	[ "$(ls -A "$SBX/ws/sub")" = new.txt ] || fail "host sub/: $(ls -A "$SBX/ws/sub")"
	as_user "$AGENTRT" workspace op1 purge >/dev/null
}

# forged-redirect in a user's sandbox (userxattr: the overlay's own metadata is user.overlay.*,
# which the agent may set through the overlay).  The kernel stores what it sets there under an
# escaped name (user.overlay.overlay.*), so it is no marker: the directories show their own files,
# can still not be renamed (redirect_dir=nofollow makes no redirect; redirect_dir=on is refused
# with userxattr), the review shows no change and the commit leaves the host as it was.
@test "sandbox: escape: forged-redirect: user.overlay.* set through a user's overlay neither redirects, hides nor moves a directory" {
	local sum0 script out
	mkdir -p "$SBX/ws/src" "$SBX/ws/data" "$SBX/ws/cfg"
	echo s >"$SBX/ws/src/main.c" && echo d >"$SBX/ws/data/rows.txt" && echo c >"$SBX/ws/cfg/c.txt"
	chown -R "$SBX_UID:$SBX_UID" "$SBX/ws"
	sum0=$(cd "$SBX/ws" && find . -printf '%p %y %m %s\n' | sort && find . -type f -exec sha256sum {} + | sort)
	script=$(
		cat <<'PY'
import errno, os
for d, n, v in (('src', 'user.overlay.redirect', b'/data'), ('data', 'user.overlay.redirect', b'..'),
                ('cfg', 'user.overlay.redirect', b'/../../etc'), ('data', 'user.overlay.opaque', b'y'),
                ('src', 'trusted.overlay.redirect', b'/data')):
    try:
        os.setxattr(d, n, v); print('set', d, n)
    except OSError as e:
        print('refused', d, n, e.errno)
for d in ('src', 'data', 'cfg'):
    print('view', d, ' '.join(sorted(os.listdir(d))))
    try:
        os.rename(d, d + '2'); print('RENAMED', d)
    except OSError as e:
        print('rename', d, 'EXDEV' if e.errno == errno.EXDEV else e)
print('PLANTED')
PY
	)
	run sbx_out --name fr1 -- python3 -c "$script"
	[ "$status" -eq 0 ] && [[ "$output" == *PLANTED* ]] || fail "plant: $output"
	# (stored escaped, or refused by a kernel that does not escape them)
	[[ "$output" =~ (set|refused)\ src\ user.overlay.redirect && "$output" =~ (set|refused)\ data\ user.overlay.opaque ]] ||
		fail "not planted: $output"
	[[ "$output" == *"refused src trusted.overlay.redirect 1"* && "$output" != *RENAMED* ]] || fail "$output"
	grep -qx 'view src main.c' <<<"$output" && grep -qx 'view data rows.txt' <<<"$output" &&
		grep -qx 'view cfg c.txt' <<<"$output" || fail "the sandbox's view moved: $output"
	[ "$(grep -c 'EXDEV$' <<<"$output")" = 3 ] || fail "rename: $output"
	out=$(as_user "$AGENTRT" workspace fr1 diff --format json 2>/dev/null) || fail "diff: $out"
	[ "$(jq '.changes | length' <<<"$out")" = 0 ] || fail "diff: $out"
	run as_user "$AGENTRT" workspace fr1 commit
	[ "$status" -eq 0 ] || fail "commit: $output"
	[ "$(cd "$SBX/ws" && find . -printf '%p %y %m %s\n' | sort && find . -type f -exec sha256sum {} + | sort)" = "$sum0" ] ||
		fail "host changed: $(cd "$SBX/ws" && find . | sort)"
	[ "$(python3 -c 'import os, sys; print(sum(len(os.listxattr(os.path.join(sys.argv[1], d))) for d in ("src", "data", "cfg")))' "$SBX/ws")" = 0 ] ||
		fail "the host dirs got xattrs"
	as_user "$AGENTRT" workspace fr1 purge >/dev/null
}

@test "sandbox: --write-through writes the host directory, protected paths stay read-only" {
	mkdir -p "$SBX/ws/.git/hooks"
	chown -R "$SBX_UID:$SBX_UID" "$SBX/ws/.git"
	run sbx --name wt1 --write-through -- sh -c 'echo direct >direct.txt; (echo evil >.git/hooks/pre-commit) 2>/dev/null; echo hook=$?'
	[ "$(cat "$SBX/ws/direct.txt")" = direct ]
	[[ "$output" == *"hook=2"* ]]
	[ ! -e "$SBX/ws/.git/hooks/pre-commit" ]
}

@test "sandbox: the audit trail of a user's sandbox holds its programs" {
	run sbx --name au1 -- sh -c 'sleep 0.5; exit 3'
	[ "$status" -eq 3 ] || fail "$output"
	run as_user "$AGENTRT" audit au1 --summary
	[ "$status" -eq 0 ] || fail "$output"
	[[ "$output" == *"exit code 3"* ]] || fail "no exit code: $output"
	[[ "$output" == *"sleep"* ]] || fail "no programs: $output"
	if ! user_proc_events; then
		# a kernel that refuses process events to users: the programs come from their exec
		# calls, and the trail says so, in one record
		local trail
		trail=$(as_user "$AGENTRT" audit au1 --format json 2>/dev/null)
		[ "$(jq -s '[.[] | select(.kind == "audit_error" and .source == "process" and (.error | test("lets only privileged processes subscribe.*programs recorded from their exec calls")))] | length' <<<"$trail")" -eq 1 ] ||
			fail "the refusal is not in the trail: $trail"
	fi
}

# On a kernel that refuses process events to users, a user's sandbox had no program records at
# all; its monitor now records programs from their exec calls (the filter stops execve and
# execveat for it: monitor/monitor_exec.c).  What an agent would try so that a program it runs
# is missing from the trail or listed under another name: a program in a memfd run by its fd
# (fexecve), argv[0] set to a harmless name, an exec from a process that made itself not dumpable
# (its memory closed to same-uid readers), a symlink to the program, a name with a newline, a
# relative path; with and without a network (the monitor then runs inside the user namespace).
# The misses of a PATH search are in the JSON trail (`found: false`), not listed as programs run.
@test "sandbox: exec-call-records: a user's sandbox names the programs it runs (regression: no program records without process events)" {
	local net n json sum want
	cat >"$SBX/ws/t.py" <<'EOF'
import os
fd = os.memfd_create("agent-tool")
os.write(fd, open("/usr/bin/true", "rb").read())
pid = os.fork()
if pid == 0:
    os.execve(fd, ["hidden-tool"], {})
os.waitpid(pid, 0)
pid = os.fork()
if pid == 0:
    os.execv("/usr/bin/true", ["git", "push", "--force"])
os.waitpid(pid, 0)
pid = os.fork()
if pid == 0:
    import ctypes
    ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0: /proc/PID/mem becomes root's
    os.execv("/usr/bin/true", ["sneaky"])
os.waitpid(pid, 0)
os.symlink("/usr/bin/id", "/tmp/ln")
os.chdir("/usr")
os.system("/tmp/ln -u >/dev/null; bin/id -g >/dev/null; cp /usr/bin/true '/tmp/a\nb'; '/tmp/a\nb'")
EOF
	chown "$SBX_UID:$SBX_UID" "$SBX/ws/t.py"
	for net in none allow; do
		n=ex$net
		set --
		if [ "$net" = allow ]; then
			command -v slirp4netns >/dev/null || continue
			set -- --allow 192.0.2.1
		fi
		run sbx --name "$n" "$@" -- python3 t.py
		[ "$status" -eq 0 ] || fail "$net: $output"
		json=$(as_user "$AGENTRT" audit "$n" --format json 2>/dev/null)
		sum=$(as_user "$AGENTRT" audit "$n" --summary 2>/dev/null)
		for want in 'python3 (exe /usr/bin/python3.11)' 'hidden-tool (exe /memfd:agent-tool (deleted))' \
			'git (exe /usr/bin/true)' 'sneaky (exe /usr/bin/true)' '/tmp/ln (exe /usr/bin/id)' 'bin/id (exe /usr/bin/id)' 'cp' \
			'/tmp/a\x0ab'; do
			grep -qxF "  $want" <<<"$sum" || fail "$net: \`$want' is not among the programs run: $sum"
		done
		# the runtime's own exec of its stub is not a record, and every record names its file
		jq -e -s 'map(select(.kind == "process" and (.exe == null or .exe == "?" or (.exe | test("agentrt-stub"))))) | length == 0' \
			<<<"$json" >/dev/null || fail "$net: a record without its program: $json"
		if ! user_proc_events; then
			jq -e -s 'map(select(.kind == "process")) | all(.via == "exec call")' <<<"$json" >/dev/null ||
				fail "$net: not from exec calls: $json"
			# PATH=/usr/sbin:... : python3 was looked for in /usr/sbin first
			jq -e -s 'map(select(.kind == "process" and .found == false and .exe == "/usr/sbin/python3")) | length == 1' \
				<<<"$json" >/dev/null || fail "$net: the PATH search's miss is not in the trail: $json"
			[[ "$sum" != *"/usr/sbin/python3"* ]] || fail "$net: a miss listed as a program run: $sum"
		fi
		as_user "$AGENTRT" workspace "$n" discard >/dev/null 2>&1 || true
	done
}

# thread-exec-pid: an exec from a second thread: the kernel gives the program the thread group
# leader's pid (the thread's own id is gone).  Recorded from the exec call, the program was
# put under the thread's id, a pid that never ran anything, and the leader's pid stayed the
# program before it: what that pid did next (refused calls, files) was laid at the wrong door.
@test "sandbox: exec-call-records: thread-exec-pid: a program exec'd from a second thread is recorded under the pid it runs as" {
	user_proc_events && skip "this kernel gives users process events: programs are not recorded from exec calls"
	[ -x "$HELPER_DIR/execvia" ] || skip "execvia not built (make test-helpers)"
	cp "$HELPER_DIR/execvia" "$SBX/ws/execvia"
	chown "$SBX_UID:$SBX_UID" "$SBX/ws/execvia"
	run sbx --name th1 -- ./execvia thread /bin/sh thread-sh -c 'echo "ns-pid=$$"'
	[ "$status" -eq 0 ] || fail "$output"
	local json ns
	ns=$(sed -n 's/^ns-pid=//p' <<<"$output")
	json=$(as_user "$AGENTRT" audit th1 --format json 2>/dev/null)
	as_user "$AGENTRT" workspace th1 purge >/dev/null 2>&1 || true
	jq -se --argjson ns "$ns" '(map(select(.kind == "process" and .argv[0] == "./execvia"))[0]) as $e |
		any(.[]; .kind == "process" and .argv[0] == "thread-sh" and .pid == $e.pid and .cpid == $e.cpid and .cpid == $ns)' \
		<<<"$json" >/dev/null || fail "ns-pid=$ns: $(jq -c 'select(.kind == "process") | {pid, cpid, ppid, argv}' <<<"$json")"
}

# The monitor answers every exec call where it records them: with the monitor killed, an exec
# fails (the kernel answers ENOSYS) instead of running unrecorded.
@test "sandbox: exec-call-records: with the monitor killed an exec fails instead of running unrecorded" {
	user_proc_events && skip "this kernel gives users process events: programs are not recorded from exec calls"
	local mon="" i
	(sbx --name mk -- sh -c 'sleep 3.25; /bin/true; echo "rc=$?"' >"$SBX/mk.out" 2>&1 &)
	# once the shell's sleep runs (its exec was answered), this sandbox's monitor goes (by its
	# pid file: a process of an earlier test may still be ending)
	for i in $(seq 1 150); do
		pgrep -u "$SBX_UID" -xf 'sleep 3.25' >/dev/null &&
			mon=$(cut -d' ' -f1 "$SBX/run/agentrt/mk/monitor.pid" 2>/dev/null) && [ -n "$mon" ] && break
		sleep 0.1
	done
	[ -n "$mon" ] || fail "no sleep or no monitor: $(cat "$SBX/mk.out")"
	[ "$(cat "/proc/$mon/comm")" = agentrt-monitor ] || fail "pid $mon is $(cat "/proc/$mon/comm")"
	kill -9 "$mon"
	for i in $(seq 1 100); do
		grep -q '^rc=' "$SBX/mk.out" && break
		sleep 0.2
	done
	grep -q '^rc=126$' "$SBX/mk.out" || fail "the exec did not fail: $(cat "$SBX/mk.out")"
	grep -q 'Function not implemented' "$SBX/mk.out" || fail "$(cat "$SBX/mk.out")"
	as_user "$AGENTRT" workspace mk purge >/dev/null 2>&1 || true
}

# Exec calls ride the listener of the refused calls: while a flood of refused calls has spent the
# monitor's budget (monitor_seccomp.c) the listener is not read, so an exec waits for the next
# read too, and is then answered and recorded as ever: none fails, none goes unrecorded.
@test "sandbox: exec-call-records: refused-call-flood-cpu: execs during a flood of refused calls run and are recorded; the flood is counted" {
	user_proc_events && skip "this kernel gives users process events: programs are not recorded from exec calls"
	local json calls
	cp "$HELPER_DIR/callflood" "$SBX/ws/callflood"
	chown "$SBX_UID:$SBX_UID" "$SBX/ws/callflood"
	run sbx_out --name fl -- sh -c './callflood 3 4 mount >/tmp/flood.out & sleep 0.5; t0=$(date +%s%N)
		i=0; while [ $i -lt 30 ]; do /usr/bin/env true || echo "exec $i failed"; i=$((i + 1)); done
		echo "execs_ms=$((($(date +%s%N) - t0) / 1000000))"; wait; cat /tmp/flood.out'
	[ "$status" -eq 0 ] || fail "$output"
	echo "# $(tr '\n' ' ' <<<"$output")" >&3
	! grep -q failed <<<"$output" || fail "$output"
	calls=$(sed -n 's/.*calls=\([0-9]*\).*/\1/p' <<<"$output")
	[ -n "$calls" ] && grep -q "eperm=$calls other=0 " <<<"$output" || fail "not every call failed with EPERM: $output"
	json=$(as_user "$AGENTRT" audit fl --format json 2>/dev/null)
	# past the budget's burst: the execs came while the listener was held
	[ "$calls" -gt 1000 ] || fail "no flood: $output"
	[ "$(jq -s '[.[] | select(.kind == "process" and .exe == "/usr/bin/env" and .via == "exec call")] | length' <<<"$json")" -eq 30 ] ||
		fail "not 30 records of env: $(jq -c 'select(.kind == "process")' <<<"$json" | tail -5)"
	[ "$(jq -s '[.[] | select(.kind == "syscall" and .syscall == "mount") | (.coalesced // .count)] | add' <<<"$json")" -eq "$calls" ] ||
		fail "the trail does not count $calls mount calls: $(jq -c 'select(.kind == "syscall")' <<<"$json" | tail -3)"
	as_user "$AGENTRT" workspace fl discard >/dev/null 2>&1 || true
}

# Without privilege the monitor can neither mark a file system nor open the init's root, and a
# user's sandbox had no file records at all ("files changed (incomplete: 0 recorded; open the
# container's root: Permission denied)").  It now marks the overlay's upper layer directory by
# directory.  What an agent would try so that a change goes unrecorded: a file deep below
# directories made faster than the monitor marks them, a directory renamed and then written
# into, directories made and removed before the write, a host file changed or
# removed through the overlay (a copy-up and a whiteout), and the same with a network (the
# monitor then runs inside the user namespace).
@test "sandbox: a user's sandbox records its file changes (regression: no file records without privilege)" {
	local net n trail
	mkdir -p "$SBX/ws/lower/sub"
	echo a >"$SBX/ws/lower/sub/gone.txt"
	echo 'echo hi' >"$SBX/ws/lower/sub/tool.sh"
	chown -R "$SBX_UID:$SBX_UID" "$SBX/ws/lower"
	for net in none allow; do
		n=fr$net
		if [ "$net" = allow ]; then
			requires slirp4netns
			set -- --allow 192.0.2.1
		else
			set --
		fi
		run sbx --name "$n" "$@" -- sh -c '
			p=deep; for i in $(seq 1 80); do p=$p/d; done
			mkdir -p "$p" && echo bottom >"$p/bottom.txt"
			mkdir -p mv1/in && mv mv1 mv2 && echo after >mv2/in/after.txt
			i=0; while [ $i -lt 60 ]; do mkdir f$i && rmdir f$i; i=$((i + 1)); done
			mkdir -p late/x && echo late >late/x/late.txt
			echo more >>file.txt
			rm lower/sub/gone.txt
			chmod +x lower/sub/tool.sh'
		[ "$status" -eq 0 ] || fail "$net: $output"
		[[ "$output" != *"no file records"* ]] || fail "$net: $output"
		trail=$SBX/trail-$n.json
		as_user "$AGENTRT" audit "$n" --format json >"$trail" 2>/dev/null
		# (f<N>, made and removed at once, may be gone before the monitor marks it: a loss
		# naming it, gone-dir-unwatched; no other)
		jq -e -s --arg g "^file events lost: directory $SBX/ws/f[0-9]+ " \
			'map(select(.kind == "audit_error" and .source == "file" and (.error | test($g) | not))) | length == 0' "$trail" >/dev/null ||
			fail "$net: $(jq -c -s 'map(select(.kind == "audit_error"))' "$trail")"
		# without a network there is nothing for a net source to listen to (it failed to
		# enter the namespace: an audit_error in every user's trail)
		if [ "$net" = none ]; then
			jq -e -s --arg g "^file events lost: directory $SBX/ws/f[0-9]+ " \
				"map(select(.kind == \"audit_error\" and (.source != \"file\" or (.error | test(\$g) | not))) | $NOT_PROC_REFUSED) | length == 0" "$trail" >/dev/null ||
				fail "$net: $(jq -c -s 'map(select(.kind == "audit_error"))' "$trail")"
		fi
		for want in "bottom.txt create" "mv2/in/after.txt create" "late/x/late.txt create" \
			"file.txt modify" "lower/sub/gone.txt delete" "mv1 moved_from" "mv2 moved_to" \
			"lower/sub/tool.sh attrib"; do
			jq -e -s --arg p "$SBX/ws/" --arg f "${want% *}" --arg op "${want#* }" \
				'map(select(.kind == "file" and (.path | startswith($p)) and (.path | endswith("/" + $f)) and (.ops | index($op)))) | length == 1' \
				"$trail" >/dev/null || fail "$net: no record: $want: $(jq -c -s 'map(select(.kind == "file") | [.path, .ops])' "$trail" | cut -c1-3000)"
		done
		# the bottom of the tree at its full path, 80 levels down
		jq -e -s --arg p "$SBX/ws/deep$(printf '/d%.0s' $(seq 1 80))/bottom.txt" \
			'map(select(.kind == "file" and .path == $p)) | length == 1' "$trail" >/dev/null ||
			fail "$net: the deep file's path"
		# the summary gives a count, not "incomplete", unless an f<N> was gone before it was
		# marked (allowed above): then "incomplete" naming that directory and nothing else
		run as_user "$AGENTRT" audit "$n" --summary
		if jq -e -s --arg g "^file events lost: directory $SBX/ws/f[0-9]+ " \
			'any(.[]; .kind == "audit_error" and .source == "file" and (.error | test($g)))' "$trail" >/dev/null; then
			[[ "$output" == *"files changed (incomplete: "[0-9]*" recorded; file events lost: directory $SBX/ws/f"[0-9]* ]] ||
				fail "$net: $output"
		else
			[[ "$output" == *"files changed ("[0-9]* ]] && [[ "$output" != *"files changed (incomplete"* ]] ||
				fail "$net: $output"
		fi
		as_user "$AGENTRT" workspace "$n" purge >/dev/null 2>&1 || true
	done
}

# A user's monitor marks upper's directories one by one, after it sees them appear.  A change to
# a host file whose directory exists only in the lower layer copies that directory up and changes
# the file in one system call (`echo x >>a/b/f`): none of its events could come, and the scan of
# the new directory took the file for a copy-up and dropped it.  Appending to a host file, as the
# agent's first act in that directory, left no record at all (the review showed it).  A file
# found in a directory marked late is compared with the lower file it was copied from.
@test "sandbox: leak: a host file changed in the system call that copies its directory up is recorded (user)" {
	local d
	for d in a b c e; do mkdir -p "$SBX/ws/l/$d/in"; done
	echo orig >"$SBX/ws/l/a/in/file"
	echo 'echo hi' >"$SBX/ws/l/b/in/tool.sh"
	echo gone >"$SBX/ws/l/c/in/gone"
	echo long >"$SBX/ws/l/e/in/trunc"
	chown -R "$SBX_UID:$SBX_UID" "$SBX/ws/l"
	run sbx --name late1 -- sh -c 'echo evil >>l/a/in/file; chmod +x l/b/in/tool.sh; rm l/c/in/gone; : >l/e/in/trunc'
	[ "$status" -eq 0 ] || fail "$output"
	as_user "$AGENTRT" audit late1 --format json >"$SBX/late1.json" 2>/dev/null
	for want in "l/a/in/file modify" "l/b/in/tool.sh attrib" "l/c/in/gone delete" "l/e/in/trunc modify"; do
		jq -e -s --arg p "$SBX/ws/${want% *}" --arg op "${want#* }" \
			'map(select(.kind == "file" and .path == $p and (.ops | index($op)))) | length == 1' \
			"$SBX/late1.json" >/dev/null ||
			fail "no record: $want: $(jq -c -s 'map(select(.kind == "file") | [.path, .ops])' "$SBX/late1.json")"
	done
	# a copy-up alone is not a change: the directories copied up are not recorded as made
	jq -e -s --arg p "$SBX/ws/l/a" 'map(select(.kind == "file" and (.path == $p or .path == $p + "/in"))) | length == 0' \
		"$SBX/late1.json" >/dev/null || fail "copy-up recorded: $(jq -c -s 'map(select(.kind == "file") | [.path, .ops])' "$SBX/late1.json")"
	as_user "$AGENTRT" workspace late1 purge >/dev/null
}

# relinked-host-file in a user's sandbox: its overlay leaves a copy-up's origin empty, so the
# bytes tell a copy-up from another file given the host file's size, mode and mtime; a copy-up
# that changed nothing (opened for writing, of one link or two) is no record.
@test "sandbox: relinked-host-file: a host file replaced by a link to a file of its size, mode and mtime is recorded; a copy-up alone is not (user)" {
	mkdir -p "$SBX/ws/r"
	for f in r1 r2 k1 k2; do echo "host $f" >"$SBX/ws/r/$f"; done
	ln "$SBX/ws/r/k2" "$SBX/ws/r/k2b"
	chown -R "$SBX_UID:$SBX_UID" "$SBX/ws/r"
	run sbx --name relink -- sh -c 'cd r && printf "evil r1\n" >t1 && touch -r r1 t1 && rm r1 && ln t1 r1 && rm t1 &&
		printf "evil r2\n" >t2 && touch -r r2 t2 && rm r2 && sleep 1.2 && ln t2 r2 && rm t2 && exec 3<>k1 4<>k2 && sleep 1.2'
	[ "$status" -eq 0 ] || fail "$output"
	as_user "$AGENTRT" audit relink --format json >"$SBX/relink.json" 2>/dev/null
	for f in r1 r2; do
		jq -e -s --arg p "$SBX/ws/r/$f" 'any(.[]; .kind == "file" and .path == $p and (.ops | index("create") or index("modify")))' \
			"$SBX/relink.json" >/dev/null || fail "$f: $(jq -c -s 'map(select(.kind == "file") | [.path, .ops])' "$SBX/relink.json")"
	done
	# (opened for writing and closed unchanged: no record, as in the diff: opened-unchanged-false-change)
	jq -e -s --arg p "$SBX/ws/r/k" 'map(select(.kind == "file" and (.path | startswith($p)))) | length == 0' \
		"$SBX/relink.json" >/dev/null || fail "copy-up recorded: $(jq -c -s 'map(select(.kind == "file") | [.path, .ops])' "$SBX/relink.json")"
	as_user "$AGENTRT" workspace relink purge >/dev/null
}

# A user's monitor marks a directory when it reads its create; one made, filled and removed
# before that had no mark, so nothing written in it had an event: the trail held its create and
# delete and no word of a loss (the root path counts such a directory as one:
# gone-dir-changes-plain-upper).  Without a mark an empty directory cannot be told from one filled
# and emptied, so each such directory is a loss naming it (the first of a second by its path).
@test "sandbox: gone-dir-unwatched: directories made, filled and removed before the monitor marked them are a loss naming them, never silence (user)" {
	requires perl
	local mon="" pid="" i tag=gdflood-$$ trail n lost
	# one process (the user's exec calls wait for the monitor: no exec while it is stopped),
	# which floods on SIGUSR1 and ends on SIGUSR2, each wait bounded
	(sbx --name gd -- perl -e '
		$SIG{USR1} = sub { $go = 1 }; $SIG{USR2} = sub { $end = 1 };
		$0 = "'"$tag"' wait"; for (1..300) { last if $go; select(undef, undef, undef, 0.1) } exit 3 unless $go;
		mkdir "keep" or die; open(F, ">keep/f") or die; close F;
		for $i (0..199) { mkdir "g$i" or die; open(F, ">g$i/f") or die; print F "x"; close F;
			unlink "g$i/f"; rmdir "g$i" or die }
		$0 = "'"$tag"' done"; for (1..300) { last if $end; select(undef, undef, undef, 0.1) }' >"$SBX/gd.out" 2>&1 &)
	for i in $(seq 1 150); do
		pid=$(pgrep -u "$SBX_UID" -xf "$tag wait") &&
			mon=$(cut -d' ' -f1 "$SBX/run/agentrt/gd/monitor.pid" 2>/dev/null) && [ -n "$mon" ] && break
		sleep 0.1
	done
	[ -n "$mon" ] && [ -n "$pid" ] || fail "no flood process or no monitor: $(cat "$SBX/gd.out")"
	[ "$(cat "/proc/$mon/comm")" = agentrt-monitor ] || fail "pid $mon is $(cat "/proc/$mon/comm")"
	kill -STOP "$mon"
	kill -USR1 "$pid"
	for i in $(seq 1 300); do
		[ "$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)" = "$tag done " ] && break
		sleep 0.1
	done
	kill -CONT "$mon"
	kill -USR2 "$pid"
	for i in $(seq 1 300); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	# (the sandbox returns once its monitor has written the trail's end)
	for i in $(seq 1 100); do
		as_user "$AGENTRT" audit gd --format json 2>/dev/null | grep -q '"kind":"delete"' && break
		sleep 0.1
	done
	trail=$SBX/gd.json
	as_user "$AGENTRT" audit gd --format json >"$trail" 2>/dev/null
	jq -e -s --arg p "$SBX/ws/keep/f" 'any(.[]; .kind == "file" and .path == $p)' "$trail" >/dev/null ||
		fail "keep/f: $(jq -c -s 'map(select(.kind == "file" or .kind == "audit_error"))' "$trail" | cut -c1-3000)"
	# every directory g<N> either had its file recorded (marked in time) or is counted in a loss
	# naming the first of its second
	n=$(jq -s --arg p "$SBX/ws/g" '[.[] | select(.kind == "file" and ((.path // "") | startswith($p)) and ((.path // "") | endswith("/f")))] | length' "$trail")
	lost=$(jq -s --arg p "directory $SBX/ws/g" '[.[] | select(.kind == "audit_error" and .source == "file" and .lost and (.error | contains($p))) | .lost_events] | add // 0' "$trail")
	echo "# $n of 200 files recorded, $lost directories a loss" >&3
	[ $((n + lost)) -ge 200 ] || fail "$n files recorded, $lost directories lost: $(jq -c -s 'map(select(.kind == "audit_error"))' "$trail")"
	[ "$lost" -gt 0 ] || skip "the monitor marked every directory in time"
	run as_user "$AGENTRT" audit verify gd
	assert_output_contains "events lost (file)"
	as_user "$AGENTRT" workspace gd purge >/dev/null 2>&1 || true
}

# A user's monitor knows upper's directories by handle and by path; a directory removed is found
# by its path (rm -rf of 30,000 directories was 30,000 scans of the whole table: the sandbox's
# end waited seconds for the monitor).  Entries moved, removed and made again, past the table's
# regrowth, must still name the right directories: a write below each survivor is recorded at
# its path of the moment.
@test "sandbox: a user's sandbox records writes after directories are moved, removed and made again past the table's regrowth (the path index)" {
	run sbx --name pix -- sh -c '
		i=0; while [ $i -lt 70 ]; do mkdir -p "t/d$i"; i=$((i + 1)); done
		i=0; while [ $i -lt 70 ]; do rmdir "t/d$i"; i=$((i + 2)); done
		mv t/d1 t/moved && mkdir t/moved/new && rmdir t/moved/new
		mkdir t/d1 && echo again >t/d1/again.txt
		mkdir t/d0 && echo back >t/d0/back.txt
		i=3; while [ $i -lt 70 ]; do echo w >"t/d$i/w.txt"; i=$((i + 2)); done
		echo m >t/moved/m.txt'
	[ "$status" -eq 0 ] || fail "$output"
	as_user "$AGENTRT" audit pix --format json >"$SBX/pix.json" 2>/dev/null
	# (a directory removed before the monitor marked it is a loss naming it: gone-dir-unwatched)
	jq -e -s --arg g "^file events lost: directory $SBX/ws/t/(d[0-9]+|moved/new) " \
		"map(select((.kind == \"audit_error\" and (.source != \"file\" or (.error | test(\$g) | not))) or .coalesced != null) | $NOT_PROC_REFUSED) | length == 0" "$SBX/pix.json" >/dev/null ||
		fail "$(jq -c -s 'map(select(.kind == "audit_error" or .coalesced != null))' "$SBX/pix.json")"
	for f in t/d1/again.txt t/d0/back.txt t/moved/m.txt t/d3/w.txt t/d35/w.txt t/d69/w.txt; do
		jq -e -s --arg p "$SBX/ws/$f" \
			'map(select(.kind == "file" and .path == $p and (.ops | index("create")))) | length == 1' \
			"$SBX/pix.json" >/dev/null || fail "no create record of $f"
	done
	# every file written below a survivor, each once
	n=$(jq -s --arg p "$SBX/ws/t/d" '[.[] | select(.kind == "file" and (.path | startswith($p)) and (.path | endswith("/w.txt")))] | length' "$SBX/pix.json")
	[ "$n" -eq 34 ] || fail "w.txt records: $n"
	# and the removed ones recorded as deleted at their path
	n=$(jq -s --arg p "$SBX/ws/t/d" '[.[] | select(.kind == "file" and (.path | startswith($p)) and (.ops | index("delete")))] | length' "$SBX/pix.json")
	[ "$n" -ge 35 ] || fail "delete records: $n"
	as_user "$AGENTRT" workspace pix purge >/dev/null
}

# The kernel takes a subscription to process events only from its initial user namespace; one
# sent from inside the sandbox's is ignored without an answer.  The trail then had process
# records only while something else on the host listened (a root container's monitor, a leak),
# and the end of every sandbox waited 200 ms for an exit event that could not come.  The user's
# sandbox subscribes before it enters its user namespace and its monitor reads that socket, also
# over the exec into the namespace that a network needs.
@test "sandbox: the user's process events are subscribed before its user namespace (regression: no programs in the trail, 200 ms at exit)" {
	requires strace
	user_proc_events || skip "this kernel refuses process events to users (agentrt doctor: proc connector missing)"
	# (LeakSanitizer cannot stop the world under a tracer: off for the strace'd runs)
	local net log who sock unsh
	for net in none allow; do
		log=$SBX/strace-$net.log
		if [ "$net" = allow ]; then
			requires slirp4netns
			run as_user env ASAN_OPTIONS=detect_leaks=0 strace -f -o "$log" -e trace=socket,unshare,sendto,execve \
				"$AGENTRT" sandbox --name pe$net --allow 192.0.2.1 -- sh -c 'sleep 0.3; true'
		else
			run as_user env ASAN_OPTIONS=detect_leaks=0 strace -f -o "$log" -e trace=socket,unshare,sendto,execve \
				"$AGENTRT" sandbox --name pe$net -- sh -c 'sleep 0.3; true'
		fi
		[ "$status" -eq 0 ] || fail "$net: $output"
		# one process opens the connector socket, before it enters the user namespace
		who=$(grep 'socket(AF_NETLINK, .*NETLINK_CONNECTOR' "$log" | awk '{print $1}' | sort -u)
		[ "$(wc -w <<<"$who")" -eq 1 ] || fail "$net: connector sockets by: $who"
		# (strace pads the pid column: compare it as a field)
		sock=$(awk -v p="$who" '$1 == p && /socket\(AF_NETLINK, .*NETLINK_CONNECTOR/ {print NR; exit}' "$log")
		unsh=$(awk -v p="$who" '$1 == p && /unshare\(CLONE_NEWUSER/ {print NR; exit}' "$log")
		[ -n "$sock" ] && [ -n "$unsh" ] && [ "$sock" -lt "$unsh" ] ||
			fail "$net: socket at line $sock, unshare at $unsh"
		[[ "$output" != *"process records"* ]] || fail "$net: $output"
		run as_user "$AGENTRT" audit pe$net --summary
		[ "$status" -eq 0 ] || fail "$net: audit: $output"
		[[ "$output" == *"exit code 0"* ]] || fail "$net: no exit code: $output"
		[[ "$output" == *"sleep"* ]] || fail "$net: no programs: $output"
		as_user "$AGENTRT" audit pe$net --format json >"$SBX/trail-$net.json" 2>/dev/null
		jq -e -s 'map(select(.kind == "process") | .argv[0]) | any(. == "sleep")' "$SBX/trail-$net.json" >/dev/null ||
			fail "$net: no process record of sleep: $(cat "$SBX/trail-$net.json")"
		if jq -e -s 'map(select(.kind == "audit_error" and .source == "process")) | length > 0' "$SBX/trail-$net.json" >/dev/null; then
			fail "$net: $(cat "$SBX/trail-$net.json")"
		fi
	done
}

@test "sandbox: a server on the host's loopback is unreachable" {
	requires python3
	local port=$((20000 + RANDOM % 20000)) pid
	python3 -c 'import socket,sys,time
s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(4); s.settimeout(20)
try:
    c,_=s.accept(); c.send(b"REACHED\n"); c.close()
except Exception: pass' "$port" &
	pid=$!
	sleep 0.3
	run sbx --name lo1 -- python3 -c 'import socket,sys
try:
    s=socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=2); print(s.recv(16))
except OSError as e: print("refused", e.errno)' "$port"
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null || true
	[[ "$output" == *refused* ]]
	[[ "$output" != *REACHED* ]]
}

@test "sandbox: --secret NAME the profile does not offer is refused in one line" {
	run sbx --name al1 --secret API_TOKEN -- true
	[ "$status" -eq 1 ]
	[[ "$output" == *"--secret \`API_TOKEN\`: the profile \`agent\` has no secret"* ]] || fail "$output"
	[ ! -d "$SBX/run/agentrt/al1" ]
}

# sbx_net_setup: the caller's "internet" in network namespaces made here: C (where the
# sandbox is started, 192.0.2.2/30) -- S (192.0.2.1/30, and 198.51.100.1 on its lo), a TCP
# server on both addresses at 8080 that greets with its address.
sbx_net_setup() {
	requires ip python3 slirp4netns nsenter
	SBX_C=agentrt-sbxc-$$-$RANDOM SBX_S=agentrt-sbxs-$$-$RANDOM
	SBX_SLIRP_BEFORE=$(pgrep -x slirp4netns | sort)
	ip netns add "$SBX_C" && ip netns add "$SBX_S" || return 1
	ip link add "sbc$$" netns "$SBX_C" type veth peer name "sbs$$" netns "$SBX_S"
	ip -n "$SBX_C" addr add 192.0.2.2/30 dev "sbc$$"
	ip -n "$SBX_S" addr add 192.0.2.1/30 dev "sbs$$"
	ip -n "$SBX_S" addr add 198.51.100.1/32 dev lo
	ip -n "$SBX_C" link set "sbc$$" up && ip -n "$SBX_S" link set "sbs$$" up
	ip -n "$SBX_C" link set lo up && ip -n "$SBX_S" link set lo up
	ip -n "$SBX_C" route add default via 192.0.2.1
	ip netns exec "$SBX_S" python3 -c 'import socket, threading, time
def serve(a):
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((a, 8080)); s.listen(8); s.settimeout(1); end = time.time() + 60
    while time.time() < end:
        try: c, _ = s.accept()
        except OSError: continue
        c.send(b"HELLO " + a.encode() + b"\n"); c.close()
for a in ("192.0.2.1", "198.51.100.1"): threading.Thread(target=serve, args=(a,)).start()' &
	SBX_SRV=$!
	cat >"$SBX/ws/probe.py" <<-'PY'
		import socket, sys
		for a in sys.argv[1:]:
		    h, p = a.rsplit(":", 1)
		    try:
		        s = socket.create_connection((h, int(p)), timeout=3)
		        print(a, "->", s.recv(64).decode().strip()); s.close()
		    except OSError as e:
		        print(a, "-> refused", e.errno)
	PY
	chmod 644 "$SBX/ws/probe.py"
	# until both listen (bounded: 10 s)
	local i
	for i in $(seq 50); do
		ip netns exec "$SBX_C" python3 "$SBX/ws/probe.py" 192.0.2.1:8080 198.51.100.1:8080 2>/dev/null |
			grep -c HELLO | grep -qx 2 && return 0
		sleep 0.2
	done
	echo "the test servers did not come up" >&2
	return 1
}

# slirp_left: slirp4netns processes that were not there at sbx_net_setup, still there after 3 s
slirp_left() {
	local i new
	for i in $(seq 30); do
		new=$(pgrep -x slirp4netns | sort | comm -13 <(echo "$SBX_SLIRP_BEFORE") -)
		[ -z "$new" ] && return 0
		sleep 0.1
	done
	echo "$new"
}

sbx_net_teardown() {
	if [ -n "${SBX_SRV:-}" ]; then
		kill "$SBX_SRV" 2>/dev/null
		wait "$SBX_SRV" 2>/dev/null || true
	fi
	[ -n "${SBX_C:-}" ] && ip netns delete "$SBX_C" 2>/dev/null
	[ -n "${SBX_S:-}" ] && ip netns delete "$SBX_S" 2>/dev/null
	return 0
}

@test "sandbox: --allow gives a network where only the allowlist goes out (user, slirp4netns)" {
	sbx_net_setup
	run nsenter --net=/run/netns/"$SBX_C" setpriv --reuid "$SBX_UID" --regid "$SBX_UID" \
		--clear-groups env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$SBX/home" \
		XDG_RUNTIME_DIR="$SBX/run" sh -c "cd '$SBX/ws' && timeout 60 '$AGENTRT' sandbox --name net1 \
		--allow 192.0.2.1:8080/tcp -- python3 '$SBX/ws/probe.py' 192.0.2.1:8080 198.51.100.1:8080 \
		10.0.2.2:8080 192.0.2.1:22"
	local out=$output left
	# no helper is left once the sandbox is gone (its babysitter ends it at once)
	left=$(slirp_left)
	sbx_net_teardown
	[ -z "$left" ]
	[[ "$out" == *"192.0.2.1:8080 -> HELLO 192.0.2.1"* ]]
	[[ "$out" == *"198.51.100.1:8080 -> refused"* ]]
	[[ "$out" != *"HELLO 198.51.100.1"* ]]
	# the host's loopback through slirp's gateway is refused
	[[ "$out" == *"10.0.2.2:8080 -> refused"* ]]
	[[ "$out" == *"192.0.2.1:22 -> refused"* ]]
	run as_user "$AGENTRT" audit net1 --kind denied --format json
	[[ "$output" == *198.51.100.1* ]]
}

@test "sandbox: --allow NAME: glibc programs resolve it (and only it) through the pinning resolver" {
	requires dnsmasq
	sbx_net_setup
	ip netns exec "$SBX_S" dnsmasq --no-daemon --no-resolv --no-hosts --bind-interfaces \
		--listen-address=192.0.2.1 --port=53 --address=/allowed.test/192.0.2.1 \
		--address=/other.test/198.51.100.1 --pid-file= >/dev/null 2>&1 &
	local dns=$! out left
	sleep 0.5
	# python's getaddrinfo is glibc's stub resolver, which takes an answer only from the
	# address it asked (the regression: answers left from the tap's address)
	run nsenter --net=/run/netns/"$SBX_C" setpriv --reuid "$SBX_UID" --regid "$SBX_UID" \
		--clear-groups env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$SBX/home" \
		XDG_RUNTIME_DIR="$SBX/run" sh -c "cd '$SBX/ws' && timeout 60 '$AGENTRT' sandbox --name dns1 \
		--allow allowed.test:8080 --dns 192.0.2.1 -- python3 -c '
import socket
for h in (\"allowed.test\", \"other.test\"):
    try:
        s = socket.create_connection((h, 8080), timeout=3); print(h, s.recv(64).decode().strip())
    except socket.gaierror as e: print(h, \"no name\", e.errno)
    except OSError as e: print(h, \"refused\", e.errno)'"
	out=$output
	kill "$dns" 2>/dev/null
	wait "$dns" 2>/dev/null || true
	left=$(slirp_left)
	sbx_net_teardown
	[ -z "$left" ]
	[[ "$out" == *"allowed.test HELLO 192.0.2.1"* ]]
	[[ "$out" == *"other.test no name"* ]]
	[[ "$out" != *"HELLO 198.51.100.1"* ]]
}

# sandbox-refused-names: a name the allowlist does not have got NXDOMAIN and a denied address a
# reset, and the program said only "ENOTFOUND" or "Connection refused": nothing named the policy.
# At its end the sandbox names what was refused, and the --allow that lets it out.
@test "sandbox-refused-names: at its end the sandbox names the names and addresses its allowlist refused (root)" {
	requires dnsmasq
	sbx_net_setup
	ip netns exec "$SBX_S" dnsmasq --no-daemon --no-resolv --no-hosts --bind-interfaces \
		--listen-address=192.0.2.1 --port=53 --address=/allowed.test/192.0.2.1 \
		--address=/other.test/198.51.100.1 --pid-file= >/dev/null 2>&1 &
	local dns=$! out err left
	sleep 0.5
	cd "$SBX/ws"
	out=$(nsenter --net=/run/netns/"$SBX_C" timeout 60 "$AGENTRT" --root "$SBX_ROOT" sandbox \
		--name ref1 --allow allowed.test:8080 --dns 192.0.2.1 -- python3 "$SBX/ws/probe.py" \
		allowed.test:8080 other.test:8080 198.51.100.1:8080 2>"$SBX/stderr")
	err=$(<"$SBX/stderr")
	kill "$dns" 2>/dev/null
	wait "$dns" 2>/dev/null || true
	left=$(slirp_left)
	sbx_net_teardown
	"$AGENTRT" --root "$SBX_ROOT" workspace ref1 purge >/dev/null 2>&1 || true
	[ -z "$left" ] || fail "slirp4netns left: $left"
	[[ "$out" == *"allowed.test:8080 -> HELLO 192.0.2.1"* ]] || fail "$out"
	[[ "$out" == *"198.51.100.1:8080 -> refused"* ]] || fail "$out"
	[[ "$err" == *"sandbox \`ref1\`: the egress allowlist refused "*"other.test"* ]] || fail "stderr: $err"
	[[ "$err" == *"198.51.100.1:8080/tcp"*"(allow one with --allow ENTRY"* ]] || fail "stderr: $err"
	[[ "$err" != *"refused"*"allowed.test"* ]] || fail "stderr: $err"
	# one line, before the review line
	[ "$(grep -c 'egress allowlist refused' <<<"$err")" -eq 1 ] || fail "stderr: $err"
}

# sandbox-refused-calls: `perf stat` in a sandbox says "No permission to enable task-clock event"
# (perf blames perf_event_paranoid); the refusal is the profile's seccomp filter, which only the
# trail said. At its end the sandbox names the call and the program.
@test "sandbox-refused-calls: at its end the sandbox names the system calls its seccomp filter refused (user)" {
	as_user "$AGENTRT" sandbox --name rc1 -- python3 -c 'import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
print("perf_event_open", libc.syscall(298, 0, 0, -1, -1, 0), os.strerror(ctypes.get_errno()))' \
		>"$SBX/out" 2>"$SBX/err" || fail "status $?: $(cat "$SBX/out" "$SBX/err")"
	local out err
	out=$(<"$SBX/out") err=$(<"$SBX/err")
	[[ "$out" == "perf_event_open -1 Operation not permitted" ]] || fail "$out"
	[[ "$err" == *"sandbox \`rc1\`: the profile's seccomp filter refused perf_event_open ("*python3*")"* ]] ||
		fail "stderr: $err"
	# nothing refused, nothing said
	as_user "$AGENTRT" sandbox --name rc2 -- true >/dev/null 2>"$SBX/err" || fail "rc2: $(cat "$SBX/err")"
	[[ "$(<"$SBX/err")" != *refused* ]] || fail "rc2: $(cat "$SBX/err")"
	# run again under its name (the same trail goes on): the first run's refusal is not this one's
	as_user "$AGENTRT" sandbox --name rc1 -- true >/dev/null 2>"$SBX/err" || fail "rc1 again: $(cat "$SBX/err")"
	[[ "$(<"$SBX/err")" != *refused* ]] || fail "rc1 again: $(cat "$SBX/err")"
}

# summary-name-escape: the lines at a sandbox's end name what the agent chose (a program's path,
# a name it looked up) and were written raw: a program named with ESC ]0; set the operator's
# terminal title, ESC [2J cleared the screen, a newline forged a line of agentrt's own.
@test "sandbox: summary-name-escape: the refused-calls line at the end writes the program's escape sequences and newlines escaped (user)" {
	local n
	n=$(printf 'p\033]0;PWNED\007\033[2J\nagentrt: ok\342\200\256y')
	as_user sh -c 'cp "$(command -v python3)" "$1" && "$2" sandbox --name se1 -- "$PWD/$1" -c "import ctypes
ctypes.CDLL(None).syscall(298, 0, 0, -1, -1, 0)"' sh "$n" "$AGENTRT" >"$SBX/out" 2>"$SBX/err" ||
		fail "status $?: $(cat -v "$SBX/out" "$SBX/err")"
	grep -q "sandbox \`se1\`: the profile's seccomp filter refused perf_event_open (" "$SBX/err" ||
		fail "no refused line: $(cat -v "$SBX/err")"
	grep -qF 'PWNED' "$SBX/err" || fail "the program not named: $(cat -v "$SBX/err")"
	! LC_ALL=C grep -q $'\033\\|\007' "$SBX/err" || fail "raw escape: $(cat -v "$SBX/err")"
	! LC_ALL=C grep -qF "$(printf '\342\200\256')" "$SBX/err" || fail "raw U+202E: $(cat -v "$SBX/err")"
	! grep -q '^agentrt: ok' "$SBX/err" || fail "a forged line: $(cat -v "$SBX/err")"
	grep -qF 'p\x1b]0;PWNED\x07' "$SBX/err" || fail "the name, escaped: $(cat -v "$SBX/err")"
	as_user "$AGENTRT" workspace se1 purge >/dev/null 2>&1 || true
}

# sandbox-refused-calls-raw-name: the exit line wrote the refused program's name as the trail
# held it, decoded: a program whose path carried ESC [2J cleared the reviewer's terminal
# and one with ESC [1A ESC [2K wrote over the line above.  Its name is shown escaped, as
# `audit --summary` shows it.
@test "sandbox-refused-calls-raw-name: the exit line shows a refused program's name with its control characters escaped (user)" {
	as_user "$AGENTRT" sandbox --name rc3 -- sh -c 'p=$(printf "/tmp/py\033[2J\033[1A\033[2Kx\302\233y")
cp "$(readlink -f /usr/bin/python3)" "$p" && "$p" -c "import ctypes; ctypes.CDLL(None).syscall(298, 0, 0, -1, -1, 0)"' \
		>"$SBX/out" 2>"$SBX/err" || fail "status $?: $(cat -v "$SBX/out" "$SBX/err")"
	local err
	err=$(<"$SBX/err")
	[[ "$err" == *"the profile's seccomp filter refused perf_event_open (/tmp/py\x1b[2J\x1b[1A\x1b[2Kx\xc2\x9by)"* ]] ||
		fail "stderr: $(cat -v "$SBX/err")"
	! LC_ALL=C grep -q $'\033' "$SBX/err" || fail "a raw ESC: $(cat -v "$SBX/err")"
	! LC_ALL=C grep -q $'\302\233' "$SBX/err" || fail "a raw CSI: $(cat -v "$SBX/err")"
}

@test "sandbox: --allow as root: the same allowlist, and no slirp4netns left" {
	sbx_net_setup
	cd "$SBX/ws"
	run nsenter --net=/run/netns/"$SBX_C" timeout 60 "$AGENTRT" --root "$SBX_ROOT" sandbox --name net2 \
		--allow 198.51.100.1:8080/tcp -- python3 "$SBX/ws/probe.py" 198.51.100.1:8080 192.0.2.1:8080
	local out=$output left
	left=$(slirp_left)
	sbx_net_teardown
	[ -z "$left" ]
	[[ "$out" == *"198.51.100.1:8080 -> HELLO 198.51.100.1"* ]]
	[[ "$out" == *"192.0.2.1:8080 -> refused"* ]]
	"$AGENTRT" --root "$SBX_ROOT" workspace net2 purge >/dev/null 2>&1 || true
}

# sandbox-rootfs-allow: `--rootfs IMAGE --allow ENTRY` was refused ("the network helper runs from
# the host's root"), although the helper is a createRuntime hook, run in agentrt's namespaces: an
# agent in an image of its toolchain (npm ci, pip) could have no network at all.
@test "sandbox-rootfs-allow: --rootfs with --allow: the image's tools reach the allowlist and nothing else (user, root)" {
	sbx_net_setup
	local probe='for a in 192.0.2.1 198.51.100.1; do echo "$a: $(nc -w 3 $a 8080 </dev/null 2>&1 || echo refused)"; done'
	run nsenter --net=/run/netns/"$SBX_C" setpriv --reuid "$SBX_UID" --regid "$SBX_UID" \
		--clear-groups env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$SBX/home" \
		XDG_RUNTIME_DIR="$SBX/run" sh -c "cd '$SBX/ws' && timeout 60 '$AGENTRT' sandbox --name rnet1 \
		--rootfs '$TEST_ROOTFS' --allow 192.0.2.1:8080/tcp -- sh -c '$probe'"
	local user_out=$output user_status=$status
	run bash -c "cd '$SBX/ws' && nsenter --net=/run/netns/'$SBX_C' timeout 60 '$AGENTRT' --root '$SBX_ROOT' \
		sandbox --name rnet2 --rootfs '$TEST_ROOTFS' --allow 198.51.100.1:8080/tcp -- sh -c '$probe'"
	local root_out=$output root_status=$status left
	left=$(slirp_left)
	sbx_net_teardown
	"$AGENTRT" --root "$SBX_ROOT" workspace rnet2 purge >/dev/null 2>&1 || true
	[ -z "$left" ] || fail "slirp4netns left: $left"
	[ "$user_status" -eq 0 ] || fail "user: $user_status: $user_out"
	[[ "$user_out" == *"192.0.2.1: HELLO 192.0.2.1"* ]] || fail "user: $user_out"
	[[ "$user_out" != *"HELLO 198.51.100.1"* ]] || fail "user: $user_out"
	[ "$root_status" -eq 0 ] || fail "root: $root_status: $root_out"
	[[ "$root_out" == *"198.51.100.1: HELLO 198.51.100.1"* ]] || fail "root: $root_out"
	[[ "$root_out" != *"HELLO 192.0.2.1"* ]] || fail "root: $root_out"
}

# orphan_after_kill TAG CMD...: start a sandbox (CMD, whose program is `sleep TAG`) in the
# background, SIGKILL the `agentrt sandbox` that runs it (the parent of its pid 1), and print
# "gone" once sleep TAG has ended (within 5 s) or "ALIVE" (then its pid 1 is killed here)
orphan_after_kill() {
	local sleeper init sup
	sleeper=$(sandbox_sleeper "$@") || { echo "$sleeper"; return 1; }
	init=$(awk '{print $4}' "/proc/$sleeper/stat")
	sup=$(awk '{print $4}' "/proc/$init/stat")
	[ "$(cat "/proc/$init/comm")" = .agentrt-init ] || { echo "pid $init: $(cat "/proc/$init/comm")"; return 1; }
	gone_after_kill "$sleeper" "$sup" "$init"
}

# sandbox_sleeper TAG CMD...: CMD in the background; prints the pid of its `sleep TAG` (within
# 10 s), else "no sleep TAG" and fails
sandbox_sleeper() {
	local tag=$1 i sleeper=""
	shift
	("$@" >/dev/null 2>&1 &)
	for i in $(seq 1 100); do
		sleeper=$(pgrep -xf "sleep $tag" | head -1) && [ -n "$sleeper" ] && break
		sleep 0.1
	done
	[ -n "$sleeper" ] || { echo "no sleep $tag"; return 1; }
	echo "$sleeper"
}

# gone_after_kill SLEEPER SUP LAST: SIGKILL SUP; "gone" once SLEEPER has ended (within 5 s),
# else "ALIVE", and LAST is killed here
gone_after_kill() {
	local i
	kill -9 "$2"
	for i in $(seq 1 50); do
		[ -d "/proc/$1" ] || { echo gone; return 0; }
		sleep 0.1
	done
	echo ALIVE
	kill -9 "$3"
}

@test "sandbox-orphan: the sandbox's program ends with the agentrt sandbox that runs it (SIGKILL; user, root, with --allow)" {
	# a harness's `timeout -s KILL`, the OOM killer or a crash took agentrt sandbox away and
	# the agent went on running with no one to end it (and, with a network, slirp4netns too)
	local out left
	out=$(orphan_after_kill 31.61 sbx --name orph1 -- sleep 31.61)
	[ "$out" = gone ] || fail "user: $out"
	out=$(cd "$SBX/ws" && orphan_after_kill 31.62 timeout 60 "$AGENTRT" --root "$SBX_ROOT" sandbox \
		--name orph2 -- sleep 31.62)
	[ "$out" = gone ] || fail "root: $out"
	# what the killed sandbox left (its state, its cgroup) goes with delete, as an operator's
	run "$AGENTRT" --root "$SBX_ROOT" delete --force orph2
	[ "$status" -eq 0 ] || fail "delete orph2: $output"
	left=$(find /sys/fs/cgroup -maxdepth 3 -type d -name orph2 2>/dev/null)
	[ -z "$left" ] || fail "cgroups left after delete: $left"
	sbx_net_setup
	out=$(orphan_after_kill 31.63 nsenter --net=/run/netns/"$SBX_C" setpriv --reuid "$SBX_UID" \
		--regid "$SBX_UID" --clear-groups env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$SBX/home" \
		XDG_RUNTIME_DIR="$SBX/run" sh -c "cd '$SBX/ws' && exec timeout 60 '$AGENTRT' sandbox \
		--name orph3 --allow 192.0.2.1:8080/tcp -- sleep 31.63")
	left=$(slirp_left)
	sbx_net_teardown
	[ "$out" = gone ] || fail "user with --allow: $out"
	[ -z "$left" ] || fail "slirp4netns left: $left"
	# honest use: the program's own end is unchanged
	run sbx --name orph4 -- sh -c 'sleep 0.2; exit 3'
	[ "$status" -eq 3 ]
}

# rootfs_orphan TAG CMD...: CMD runs a --rootfs sandbox that sleeps TAG; its agentrt sandbox
# (the nearest agentrt above the sleep, outside the sandbox's pid namespace) is killed with
# SIGKILL. Prints "gone" when the sleep ended with it, else "ALIVE" (and ends the sleep).
rootfs_orphan() {
	local i sleeper p sup=""
	sleeper=$(sandbox_sleeper "$@") || { echo "$sleeper"; return 1; }
	p=$sleeper
	for i in 1 2 3 4 5 6; do
		p=$(awk '{print $4}' "/proc/$p/stat")
		[ "$(cat "/proc/$p/comm")" = agentrt ] && { sup=$p; break; }
	done
	[ -n "$sup" ] || { echo "no agentrt above $sleeper"; kill -9 "$sleeper"; return 1; }
	gone_after_kill "$sleeper" "$sup" "$sleeper"
}

@test "sandbox-orphan-rootfs: a --rootfs sandbox's program ends with the agentrt sandbox that runs it (SIGKILL; user, root)" {
	# --rootfs ran the command as the sandbox's pid 1 with no parent-death signal: a killed
	# agentrt sandbox left it running with no one to end it
	local out
	out=$(rootfs_orphan 31.71 sbx --name orphr1 --rootfs "$TEST_ROOTFS" -- sleep 31.71)
	[ "$out" = gone ] || fail "user: $out"
	out=$(cd "$SBX/ws" && rootfs_orphan 31.72 timeout 60 "$AGENTRT" --root "$SBX_ROOT" sandbox \
		--name orphr2 --rootfs "$TEST_ROOTFS" -- sleep 31.72)
	[ "$out" = gone ] || fail "root: $out"
	"$AGENTRT" --root "$SBX_ROOT" delete --force orphr2 >/dev/null 2>&1 || true
	# honest use: the program's exit status, pid 1's signals (SIGTERM ends it) and its
	# own tools inside the image are unchanged
	run sbx --name orphr3 --rootfs "$TEST_ROOTFS" -- sh -c 'sleep 0.2; exit 3'
	[ "$status" -eq 3 ]
	# (a dynamic build, the sanitizers' pass, has no sandbox-init in the image: the program is pid
	# 1 itself, which the kernel gives no default action for SIGTERM; its parent-death signal
	# above holds for both)
	if ! ldd "$AGENTRT" 2>/dev/null | grep -q '=>'; then
		run sbx_out --name orphr4 --rootfs "$TEST_ROOTFS" -- sh -c 'kill -TERM $$; sleep 5; echo survived'
		[[ "$output" != *survived* ]] || fail "SIGTERM: $output"
	fi
	run sbx_out --name orphr5 --rootfs "$TEST_ROOTFS" -- sh -c 'cat /etc/hostname 2>/dev/null; echo $HOME; pwd'
	[ "$status" -eq 0 ] || fail "plain: $output"
	[[ "$output" == *"$SBX/ws"* ]] || fail "cwd: $output"
}

# sandbox-rootfs-link: create refuses a root.path through a symlink (as runc); the sandbox
# gives create the resolved path of --rootfs, so an image reached through a link still runs.
@test "sandbox-rootfs-link: a --rootfs given through a symlink runs (user)" {
	ln -s "$TEST_ROOTFS" "$SBX/image-link"
	run sbx_out --name rlink1 --rootfs "$SBX/image-link" -- sh -c 'echo in-image; exit 4'
	[ "$status" -eq 4 ] && [ "$output" = in-image ] || fail "$status: $output"
}

@test "sandbox-rerun: a sandbox run again under its --name while its changes wait for review goes on from them (root: the workspace in an image)" {
	# the volatile overlay's mark (work/work/incompat/volatile) stayed in the workspace's image:
	# the second run failed with "mount `overlay`: create: Invalid argument"
	mkdir "$SBX/rws" && cd "$SBX/rws"
	run timeout 60 "$AGENTRT" --root "$SBX_ROOT" sandbox --name rerun1 -- sh -c 'echo first >made.txt'
	[ "$status" -eq 0 ] || fail "first: $output"
	run timeout 60 "$AGENTRT" --root "$SBX_ROOT" sandbox --name rerun1 -- sh -c 'cat made.txt; echo second >>made.txt'
	[ "$status" -eq 0 ] || fail "second: $output"
	[[ "$output" == *first* ]] || fail "second: $output"
	[ ! -e "$SBX/rws/made.txt" ] || fail "the host directory was written before review"
	run "$AGENTRT" --root "$SBX_ROOT" workspace rerun1 commit
	[ "$status" -eq 0 ] || fail "commit: $output"
	[ "$(cat "$SBX/rws/made.txt")" = "first"$'\n'"second" ] || fail "committed: $(cat "$SBX/rws/made.txt")"
}

@test "sandbox-no-changes: a sandbox that changed nothing leaves no workspace behind and says so (user, root); one that did keeps it" {
	# every run left a workspace (as root a 1 GiB sparse image in the data directory) and said
	# its changes waited for review
	run sbx --name nochg1 -- sh -c 'cat file.txt >/dev/null; ls >/dev/null'
	[ "$status" -eq 0 ] || fail "user: $output"
	[[ "$output" == *"no changes to $SBX/ws"* ]] || fail "user: $output"
	run as_user "$AGENTRT" workspace nochg1 diff
	[ "$status" -ne 0 ] || fail "user: a workspace left: $output"
	mkdir "$SBX/rws2" && cd "$SBX/rws2"
	run timeout 60 "$AGENTRT" --root "$SBX_ROOT" sandbox --name nochg2 -- true
	[ "$status" -eq 0 ] || fail "root: $output"
	[[ "$output" == *"no changes to $SBX/rws2"* ]] || fail "root: $output"
	run "$AGENTRT" --root "$SBX_ROOT" workspace nochg2 diff
	[ "$status" -ne 0 ] || fail "root: a workspace left: $output"
	# the trail stays
	run "$AGENTRT" --root "$SBX_ROOT" audit nochg2 --format json
	[ "$status" -eq 0 ] || fail "root: trail: $output"
	# a change (a file removed counts) is kept for review, as before
	echo x >"$SBX/rws2/gone.txt"
	run timeout 60 "$AGENTRT" --root "$SBX_ROOT" sandbox --name nochg3 -- rm gone.txt
	[[ "$output" == *"wait for review"* ]] || fail "root, a change: $output"
	run "$AGENTRT" --root "$SBX_ROOT" workspace nochg3 diff
	[[ "$output" == *gone.txt* ]] || fail "root, a change: $output"
	"$AGENTRT" --root "$SBX_ROOT" workspace nochg3 discard >/dev/null
}

# killed_sandbox TAG CMD...: CMD runs a sandbox that sleeps TAG; its agentrt sandbox is killed
# with SIGKILL and the sleep waited for; prints "dead" once it is gone
killed_sandbox() {
	local out
	out=$(orphan_after_kill "$@")
	[ "$out" = gone ] && echo dead || echo "$out"
}

@test "sandbox-dead-name: a sandbox whose agentrt sandbox was killed does not block its --name (user, root); a live one does" {
	# the killed sandbox's stopped state and cgroup stayed: the next `sandbox --name X` failed
	# with "container with given ID already exists" until an operator's delete
	local out i
	out=$(killed_sandbox 31.81 sbx --name dead1 -- sleep 31.81)
	[ "$out" = dead ] || fail "user: $out"
	run sbx_out --name dead1 -- sh -c 'echo second'
	[ "$status" -eq 0 ] || fail "user, again: $output"
	[ "$output" = second ]
	[ ! -e "$SBX/run/agentrt/dead1" ] || [ -z "$(ls -A "$SBX/run/agentrt/dead1" 2>/dev/null)" ] ||
		fail "user: state left: $(ls "$SBX/run/agentrt/dead1")"
	out=$(cd "$SBX/ws" && killed_sandbox 31.82 timeout 60 "$AGENTRT" --root "$SBX_ROOT" sandbox \
		--name dead2 -- sleep 31.82)
	[ "$out" = dead ] || fail "root: $out"
	# the sleep ends before its init does (the init's own death signal): list says stopped once
	# the init is gone too
	for i in $(seq 1 50); do
		run "$AGENTRT" --root "$SBX_ROOT" list
		[[ "$output" == *dead2*stopped* ]] && break
		sleep 0.1
	done
	[[ "$output" == *dead2*stopped* ]] || fail "root: no stopped state: $output"
	run bash -c "cd '$SBX/ws' && timeout 60 '$AGENTRT' --root '$SBX_ROOT' sandbox --name dead2 -- \
		cat /proc/self/cgroup"
	[ "$status" -eq 0 ] || fail "root, again: $output"
	[ ! -d "$SBX_ROOT/dead2" ] || fail "root: state left after the second run"
	left=$(find /sys/fs/cgroup -maxdepth 3 -type d -name dead2 2>/dev/null)
	[ -z "$left" ] || fail "root: cgroups left: $left"
	# a live sandbox of that name is never taken: the second is refused, the first runs on
	(cd "$SBX/ws" && timeout 60 "$AGENTRT" --root "$SBX_ROOT" sandbox --name live1 -- \
		sleep 31.83 >/dev/null 2>&1 &)
	for i in $(seq 1 100); do pgrep -xf "sleep 31.83" >/dev/null && break; sleep 0.1; done
	run bash -c "cd '$SBX/ws' && timeout 20 '$AGENTRT' --root '$SBX_ROOT' sandbox --name live1 -- true"
	[ "$status" -ne 0 ] || fail "a live sandbox's name was taken"
	pgrep -xf "sleep 31.83" >/dev/null || fail "the live sandbox was ended"
	"$AGENTRT" --root "$SBX_ROOT" kill live1 KILL
	for i in $(seq 1 50); do pgrep -xf "sleep 31.83" >/dev/null || break; sleep 0.1; done
	# a kept sandbox (--keep) stays for its operator
	run bash -c "cd '$SBX/ws' && timeout 20 '$AGENTRT' --root '$SBX_ROOT' sandbox --keep --name kept1 -- true"
	[ "$status" -eq 0 ]
	run bash -c "cd '$SBX/ws' && timeout 20 '$AGENTRT' --root '$SBX_ROOT' sandbox --name kept1 -- true"
	[ "$status" -ne 0 ] || fail "a kept sandbox was deleted"
	[ -d "$SBX_ROOT/kept1" ]
	"$AGENTRT" --root "$SBX_ROOT" delete --force kept1
	# sandbox-lock-left: the name's lock file of a kept (or killed) sandbox stayed in the state
	# root after the operator's delete; the delete takes it when no sandbox holds it
	run bash -c "cd '$SBX/ws' && timeout 20 '$AGENTRT' --root '$SBX_ROOT' sandbox --keep --name kept2 -- true"
	[ "$status" -eq 0 ]
	[ -e "$SBX_ROOT/.sandbox-kept2.lock" ] || fail "no lock file for a kept sandbox: $(ls -A "$SBX_ROOT")"
	"$AGENTRT" --root "$SBX_ROOT" delete --force kept2
	[ ! -e "$SBX_ROOT/.sandbox-kept2.lock" ] || fail "the lock file stayed after the delete"
}

@test "sandbox: without --allow only loopback exists" {
	run sbx_out --name lo2 -- sh -c 'ls /sys/class/net'
	[ "$status" -eq 0 ]
	[ "$output" = lo ] || [[ "$output" == "lo"$'\n'* ]]
	[[ "$output" != *tap0* ]]
}

@test "sandbox: bad options name themselves" {
	run sbx --memory lots -- true
	[ "$status" -eq 1 ]
	[[ "$output" == *"--memory: invalid size"* ]]
	run sbx --name 'bad/name' -- true
	[ "$status" -eq 1 ]
	run sbx
	[ "$status" -eq 1 ]
	[[ "$output" == *"expected a command"* ]]
	run sbx --workspace /nonexistent-agentrt -- true
	[ "$status" -eq 1 ]
	[[ "$output" == *"/nonexistent-agentrt"* ]]
}

@test "sandbox: as root, --pids stops a fork loop" {
	requires python3
	cd "$SBX/ws"
	run timeout 60 "$AGENTRT" --root "$SBX_ROOT" sandbox --name pid1 --pids 20 -- python3 -c '
import os, time
n = 0
for i in range(100):
    try:
        if os.fork() == 0:
            time.sleep(5); os._exit(0)
        n += 1
    except OSError as e:
        print("refused errno", e.errno); break
print("started", n)'
	[[ "$output" == *"refused errno 11"* ]]
	n=$(echo "$output" | sed -n 's/^started \([0-9]*\).*/\1/p')
	[ -n "$n" ] && [ "$n" -lt 20 ]
	"$AGENTRT" --root "$SBX_ROOT" workspace pid1 purge >/dev/null 2>&1 || true
}

@test "sandbox: the command is not pid 1, so SIGTERM and SIGINT end it" {
	run sbx --name sig1 -- sh -c 'echo pid=$$; kill -INT $$; sleep 5'
	[ "$status" -eq 130 ]
	[[ "$output" == *"pid=2"* ]]
}

@test "sandbox: a terminal session passes through (script)" {
	requires script
	run as_user script -qec "$AGENTRT sandbox --name tty1 -- sh -c 'tty; test -t 0 && echo interactive; exit 4'" /dev/null
	[ "$status" -eq 4 ]
	[[ "$output" == *"/dev/pts/"* ]]
	[[ "$output" == *interactive* ]]
}

@test "sandbox: kill(0) from inside does not reach the caller's process group (regression: same pgid, user)" {
	# The caller is a shell of the same user (a signal from the sandbox may reach it); before,
	# the sandbox's program was in its process group and session, and `kill 0` signalled it.
	run as_user sh -c 'trap "echo CALLER-SIGNALLED" USR1
		"$0" sandbox --name pg1 -- sh -c "cut -d\" \" -f5,6 /proc/self/stat; kill -USR1 0; sleep 0.5"
		echo rc=$?' "$AGENTRT"
	[[ "$output" != *CALLER-SIGNALLED* ]]
	# a session and process group of its own: the ones of the sandbox's pid 1, not invisible (0)
	[[ "$output" == *$'\n1 1'* || "$output" == "1 1"* ]]
	[[ "$output" == *rc=138* ]]
}

@test "sandbox: kill(0) from inside does not reach the caller's process group (regression: same pgid, root)" {
	run setsid sh -c 'trap "echo CALLER-SIGNALLED" USR1
		cd "$1" && "$0" --root "$2" sandbox --name pg2 -- sh -c "kill -USR1 0; sleep 0.5"
		echo rc=$?' "$AGENTRT" "$SBX/ws" "$SBX_ROOT"
	[[ "$output" != *CALLER-SIGNALLED* ]]
	[[ "$output" == *rc=138* ]]
	"$AGENTRT" --root "$SBX_ROOT" workspace pg2 purge >/dev/null 2>&1 || true
}

@test "sandbox: TIOCSTI on the caller's terminal is refused (stdin a terminal, stdout not)" {
	requires script perl
	printf 'ioctl(STDIN, 0x5412, my $c = "x") ? print "INJECTED\n" : print "refused: $!\n";\n' >"$SBX/ws/sti.pl"
	chmod 644 "$SBX/ws/sti.pl"
	run as_user script -qec "$AGENTRT sandbox --name sti1 -- perl $SBX/ws/sti.pl >$SBX/ws/sti.out 2>&1" /dev/null
	run cat "$SBX/ws/sti.out"
	[[ "$output" == *refused* ]]
	[[ "$output" != *INJECTED* ]]
}

@test "sandbox: ^C on a terminal reaches the program, and job control works in bash" {
	requires script bash
	# ^C typed while the program waits: it gets SIGINT (through the pty)
	run as_user script -qec "$AGENTRT sandbox --name cc1 -- sh -c 'trap \"echo got-INT; exit 3\" INT; echo ready; sleep 5 & wait'" /dev/null < <(sleep 2; printf '\003'; sleep 3)
	[[ "$output" == *got-INT* ]]
	[ "$status" -eq 3 ]
	# bash -i on the pty: a job stopped and brought back (fg) needs it to be the terminal's
	run as_user script -qec "$AGENTRT sandbox --name jc1 -- bash --norc -i" /dev/null < <(sleep 2; printf 'sleep 2; echo SLEPT\n'; sleep 1; printf '\032'; sleep 1; printf 'fg; echo JOBS-DONE; exit 5\n'; sleep 4)
	[[ "$output" == *Stopped* ]]
	[[ "$output" == *JOBS-DONE* ]]
	[ "$status" -eq 5 ]
}

@test "sandbox: the caller's credential variables are not passed in (regression: env leaked GITHUB_TOKEN, AWS_*, *_API_KEY)" {
	run as_user env GITHUB_TOKEN=ghp-leak GH_TOKEN=gh-leak AWS_ACCESS_KEY_ID=AKIA-leak \
		AWS_SECRET_ACCESS_KEY=aws-leak OPENAI_API_KEY=sk-leak NPM_TOKEN=npm-leak PGPASSWORD=pg-leak \
		GOOGLE_APPLICATION_CREDENTIALS=/x/leak.json my_service_secret=s-leak GIT_AUTHOR_NAME=kept \
		"$AGENTRT" sandbox --name env1 -- env
	[ "$status" -eq 0 ]
	[[ "$output" != *leak* ]]
	[[ "$output" != *SSH_AUTH_SOCK* ]]
	[[ "$output" == *GIT_AUTHOR_NAME=kept* ]]
	[[ "$output" == *TERM=dumb* ]]
	# named explicitly, it is passed; K=V sets one; a bad name is refused in one line
	run as_user env GH_TOKEN=gh-asked OPENAI_API_KEY=sk-not "$AGENTRT" sandbox --name env2 --env GH_TOKEN \
		--env X_TOKEN=given -- env
	[ "$status" -eq 0 ]
	[[ "$output" == *GH_TOKEN=gh-asked* ]]
	[[ "$output" == *X_TOKEN=given* ]]
	[[ "$output" != *sk-not* ]]
	run sbx --env 1BAD -- true
	[ "$status" -ne 0 ]
	[[ "$output" == *"--env: expected KEY=VALUE or NAME, got \`1BAD\`"* ]]
}

@test "leak: credentials spelled otherwise in the caller's environment are not passed in (MYSQL_PWD, a JWT, a URL's user:password, an Authorization header)" {
	run as_user env MYSQL_PWD=pwd-leak SMTP_PASS=pass-leak CI_JOB_JWT=jwt-leak \
		PIP_INDEX_URL=https://u:url-leak@pypi.example/simple HTTPS_PROXY=http://u:proxy-leak@192.0.2.1:3128 \
		REDIS_URL=redis://:redis-leak@192.0.2.2:6379/0 GIT_REMOTE=https://tok-leak@git.example/r.git \
		GIT_CONFIG_PARAMETERS="'http.extraheader=AUTHORIZATION: basic hdr-leak'" CURL_HDR="bearer b-leak" \
		HTTP_PROXY=http://192.0.2.1:3128 NPM_SCOPE_URL=https://registry.example/@scope/pkg \
		GIT_AUTHOR_EMAIL=dev@example.org OLDPWD=/kept-oldpwd \
		"$AGENTRT" sandbox --name envx -- env
	[ "$status" -eq 0 ]
	[[ "$output" != *leak* ]] || fail "passed in: $(grep leak <<<"$output")"
	# honest values are kept: a proxy without a password, an @ in a URL's path, an address
	[[ "$output" == *HTTP_PROXY=http://192.0.2.1:3128* ]] || fail "$output"
	[[ "$output" == *NPM_SCOPE_URL=https://registry.example/@scope/pkg* ]] || fail "$output"
	[[ "$output" == *GIT_AUTHOR_EMAIL=dev@example.org* ]] || fail "$output"
	[[ "$output" == *OLDPWD=/kept-oldpwd* ]] || fail "$output"
	# --env NAME passes one all the same
	run as_user env PIP_INDEX_URL=https://u:asked@pypi.example/simple "$AGENTRT" sandbox --name envy \
		--env PIP_INDEX_URL -- env
	[[ "$output" == *PIP_INDEX_URL=https://u:asked@pypi.example/simple* ]] || fail "$output"
}

@test "host-socket: a host daemon's UNIX socket outside the hidden directories (LXD's in /var/snap, Incus's in /var/lib) is masked, also from the caller's supplementary groups" {
	requires socat
	# a daemon of the host's, its socket root:users 0660 where the sandbox shows the root
	D=$(mktemp -d /var/lib/agentrt-test-sock.XXXXXX)
	chmod 0755 "$D"
	socat UNIX-LISTEN:"$D/daemon.sock",mode=660,group=100,fork SYSTEM:'echo root-daemon-answers' \
		</dev/null >/dev/null 2>&1 &
	lp=$!
	for _ in $(seq 50); do [ -S "$D/daemon.sock" ] && break; sleep 0.1; done
	# the control: the caller (uid 65534, in group 100) reaches it on the host
	run timeout 10 setpriv --reuid "$SBX_UID" --regid "$SBX_UID" --groups 100 \
		socat -T 2 - UNIX-CONNECT:"$D/daemon.sock" </dev/null
	ctl=$output
	run timeout --kill-after=5 "$RT_TIMEOUT" setpriv --reuid "$SBX_UID" --regid "$SBX_UID" --groups 100 \
		env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$SBX/home" XDG_RUNTIME_DIR="$SBX/run" \
		XDG_DATA_HOME="$SBX/home/.local/share" TERM=dumb sh -c "cd '$SBX/ws' && '$AGENTRT' sandbox --name sock1 -- \
		sh -c 'socat -T 2 - UNIX-CONNECT:$D/daemon.sock </dev/null 2>&1; ls $D'"
	kill "$lp" 2>/dev/null
	wait "$lp" 2>/dev/null || true
	rm -rf "$D"
	[[ "$ctl" == *root-daemon-answers* ]] || fail "the control: $ctl"
	[[ "$output" != *root-daemon-answers* ]] || fail "the sandbox reached the host's daemon: $output"
	# the name is still there (the root is the host's), the socket behind it is not
	[[ "$output" == *daemon.sock* ]] || fail "$output"
}

@test "ws-socket: with --write-through a host program's UNIX socket in the workspace (a tmux -S or ssh ControlPath socket there) is masked; the agent's own sockets work" {
	requires socat
	# the workspace bound as it is: the socket is the host's own inode, and the host program
	# behind it (a tmux server, an ssh master) answered the agent
	mkdir -p "$SBX/ws/.ctl"
	socat UNIX-LISTEN:"$SBX/ws/.ctl/host.sock",mode=666,fork SYSTEM:'echo host-program-answers' \
		</dev/null >/dev/null 2>&1 &
	lp=$!
	for _ in $(seq 50); do [ -S "$SBX/ws/.ctl/host.sock" ] && break; sleep 0.1; done
	run sbx --write-through --name wsock1 -- sh -c 'socat -T 2 - UNIX-CONNECT:.ctl/host.sock </dev/null 2>&1
		socat UNIX-LISTEN:own.sock SYSTEM:"echo own-answers" &
		i=0; while [ ! -S own.sock ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
		socat -T 2 - UNIX-CONNECT:own.sock </dev/null; rm -f own.sock; ls .ctl'
	out=$output
	run timeout 5 socat -T 2 - UNIX-CONNECT:"$SBX/ws/.ctl/host.sock" </dev/null
	ctl=$output
	kill "$lp" 2>/dev/null
	wait "$lp" 2>/dev/null || true
	[[ "$ctl" == *host-program-answers* ]] || fail "the control: $ctl"
	[[ "$out" != *host-program-answers* ]] || fail "the sandbox reached the host's program: $out"
	[[ "$out" == *own-answers* ]] || fail "the agent's own socket: $out"
	[[ "$out" == *host.sock* ]] || fail "$out"
	# root, as well
	run bash -c "cd '$SBX/ws' && timeout 60 '$AGENTRT' --root '$SBX_ROOT' sandbox --write-through --name wsock2 -- \
		socat -T 2 - UNIX-CONNECT:.ctl/host.sock </dev/null 2>&1"
	[[ "$output" != *host-program-answers* ]] || fail "root: the sandbox reached the host's program: $output"
}

@test "cred-file: the file a held-back credential variable names (GOOGLE_APPLICATION_CREDENTIALS, KUBECONFIG) is masked where the host's root shows it" {
	D=$(mktemp -d /var/lib/agentrt-test-cred.XXXXXX)
	chmod 0755 "$D"
	echo '{"private_key": "SA-SECRET-leak"}' >"$D/sa.json"
	echo 'token: KUBE-SECRET-leak' >"$D/kubeconfig"
	chown "$SBX_UID" "$D/sa.json" "$D/kubeconfig"
	chmod 0600 "$D/sa.json" "$D/kubeconfig"
	ln -s sa.json "$D/link.json"
	run as_user env GOOGLE_APPLICATION_CREDENTIALS="$D/link.json" KUBECONFIG="/nonexistent:$D/kubeconfig" \
		"$AGENTRT" sandbox --name cred1 -- sh -c "cat $D/sa.json $D/link.json $D/kubeconfig; env"
	rm -rf "$D"
	[ "$status" -eq 0 ] || fail "$output"
	[[ "$output" != *leak* ]] || fail "a credential file was shown: $output"
	[[ "$output" != *KUBECONFIG=* ]] || fail "$output"
}

@test "cred-file: a CA bundle that a held-back variable names (AWS_CA_BUNDLE, CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE) is not masked: TLS clients keep the host's trust store" {
	requires openssl
	# a bundle of certificates is public; masked with /dev/null it left python's, pip's, grpc's
	# and curl's default trust store empty, and every TLS client in the sandbox failed
	local sys=/etc/ssl/certs/ca-certificates.crt
	[ -s "$sys" ] || skip "no $sys"
	D=$(mktemp -d /var/lib/agentrt-test-ca.XXXXXX)
	chmod 0755 "$D"
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj "/CN=corp CA" \
		-keyout "$D/ca.key" -out "$D/ca.pem" 2>/dev/null || fail "openssl"
	{ echo "# corp CA"; cat "$D/ca.pem"; } >"$D/corp-bundle.pem"
	# a client certificate with its key is a credential: still masked
	{ cat "$D/ca.pem" "$D/ca.key"; echo CLIENT-KEY-leak; } >"$D/client.pem"
	chmod 0644 "$D/corp-bundle.pem" "$D/client.pem"
	run as_user env AWS_CA_BUNDLE="$sys" CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE="$D/corp-bundle.pem" \
		AWS_CLIENT_CERT="$D/client.pem" "$AGENTRT" sandbox --name ca1 -- sh -c \
		"echo sys=\$(wc -c <$sys) corp=\$(wc -c <'$D/corp-bundle.pem'); cat '$D/client.pem' 2>&1; echo end"
	local want_sys want_corp
	want_sys=$(wc -c <"$sys")
	want_corp=$(wc -c <"$D/corp-bundle.pem")
	rm -rf "$D"
	[ "$status" -eq 0 ] || fail "$output"
	[[ "$output" == *end* ]] || fail "$output"
	[[ "$output" != *leak* ]] || fail "a key was shown: $output"
	[[ "$output" == *"sys=$want_sys corp=$want_corp"* ]] || fail "a CA bundle was masked: $output"
}

@test "escape: variables whose only use is to name a credential file (PGPASSFILE, SOPS_AGE_KEY_FILE, GH_CONFIG_DIR, DOCKER_CERT_PATH, RCLONE_CONFIG, ...) passed in, their files shown" {
	D=$(mktemp -d /var/lib/agentrt-test-cred2.XXXXXX)
	chmod 0755 "$D"
	mkdir "$D/gh" "$D/docker"
	echo 'host:5432:*:app:PG-SECRET-leak' >"$D/pgpass"
	echo 'AGE-SECRET-KEY-leak' >"$D/age.txt"
	echo 'oauth_token: GH-SECRET-leak' >"$D/gh/hosts.yml"
	echo 'DOCKER-CLIENT-KEY-leak' >"$D/docker/key.pem"
	echo 'token = RCLONE-SECRET-leak' >"$D/rclone.conf"
	echo 'BORG-KEY-leak' >"$D/borg.key"
	echo 'KEYTAB-leak' >"$D/app.keytab"
	echo 'NPMRC-TOKEN-leak' >"$D/npmrc"
	chown -R "$SBX_UID" "$D"/*
	chmod 0600 "$D/pgpass" "$D/age.txt" "$D/gh/hosts.yml" "$D/docker/key.pem" "$D/rclone.conf" \
		"$D/borg.key" "$D/app.keytab" "$D/npmrc"
	run as_user env PGPASSFILE="$D/pgpass" SOPS_AGE_KEY_FILE="$D/age.txt" GH_CONFIG_DIR="$D/gh" \
		DOCKER_CERT_PATH="$D/docker" RCLONE_CONFIG="$D/rclone.conf" BORG_KEY_FILE="$D/borg.key" \
		KRB5_CLIENT_KTNAME="$D/app.keytab" NPM_CONFIG_USERCONFIG="$D/npmrc" \
		"$AGENTRT" sandbox --name cred2 -- sh -c "cat $D/pgpass $D/age.txt $D/gh/hosts.yml $D/docker/key.pem \
			$D/rclone.conf $D/borg.key $D/app.keytab $D/npmrc; env"
	local out=$output st=$status
	# control: --env NAME passes one and shows its file, as for any held-back variable
	run as_user env PGPASSFILE="$D/pgpass" "$AGENTRT" sandbox --name cred3 --env PGPASSFILE -- sh -c 'cat "$PGPASSFILE"'
	rm -rf "$D"
	[ "$st" -eq 0 ] || fail "$out"
	[[ "$out" != *leak* ]] || fail "a credential file was shown: $out"
	[[ "$out" != *PGPASSFILE=* && "$out" != *GH_CONFIG_DIR=* && "$out" != *DOCKER_CERT_PATH=* ]] || fail "$out"
	[[ "$output" == *PG-SECRET-leak* ]] || fail "control: --env PGPASSFILE: $output"
}

@test "escape: a host mount below / (a separate /boot, /srv or /var of the host) was writable from the sandbox (root and user)" {
	requires unshare
	# a tmpfs over /srv stands for the host's own mount there, in a mount namespace of the test's
	# (the host's is never changed); the workspaces live below it, as a project in /srv would
	export SBX SBX_UID SBX_ROOT AGENTRT RT_TIMEOUT
	run unshare -m --propagation private bash -c "$(declare -f as_user)"'
		set -u
		mount -t tmpfs -o mode=1777 agentrt-test-srv /srv || { echo "no tmpfs over /srv"; exit 90; }
		echo host-file >/srv/existing
		chmod 666 /srv/existing
		mkdir -m 777 /srv/ws /srv/uws
		(cd /srv/ws && timeout 60 "$AGENTRT" --root "$SBX_ROOT" sandbox --name srv1 -- sh -c \
			"echo root-pwned >/srv/root-pwned; echo root-pwned >>/srv/existing; echo ok >/srv/ws/new && echo root-ws-ok") 2>&1
		(cd /srv/uws && timeout --kill-after=5 "$RT_TIMEOUT" setpriv --reuid "$SBX_UID" --regid "$SBX_UID" \
			--clear-groups env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$SBX/home" XDG_RUNTIME_DIR="$SBX/run" \
			XDG_DATA_HOME="$SBX/home/.local/share" "$AGENTRT" sandbox --name srv2 -- sh -c \
			"echo user-pwned >/srv/user-pwned; echo user-pwned >>/srv/existing; echo ok >/srv/uws/new && echo user-ws-ok") 2>&1
		echo "host: $(ls /srv | tr "\n" " ")"
		echo "existing: $(cat /srv/existing | tr "\n" " ")"
		"$AGENTRT" --root "$SBX_ROOT" workspace srv1 purge >/dev/null 2>&1
		as_user "$AGENTRT" workspace srv2 purge >/dev/null 2>&1
		umount /srv'
	[ "$status" -eq 0 ] || fail "$output"
	# the workspaces below the mount are written as ever (their overlays)
	[[ "$output" == *root-ws-ok* && "$output" == *user-ws-ok* ]] || fail "the workspaces: $output"
	# the host's mount is not
	[ "$(grep '^host: ' <<<"$output")" = "host: existing uws ws " ] || fail "written to the host's /srv: $output"
	[ "$(grep '^existing: ' <<<"$output")" = "existing: host-file " ] || fail "a host file changed: $output"
	[[ "$output" == *"Read-only file system"* ]] || fail "$output"
}

@test "escape: a host mount made below / after the sandbox started came in writable (propagation)" {
	requires unshare
	# the test's own mount namespace, shared as systemd makes the host's: a mount there after the
	# start propagated into the sandbox with its own rw
	export SBX_ROOT AGENTRT
	run unshare -m --propagation shared bash -c '
		set -u
		mount --make-rshared / && mount -t tmpfs -o mode=1777 agentrt-test-srv /srv || { echo "no tmpfs over /srv"; exit 90; }
		mkdir -m 777 /srv/ws
		(cd /srv/ws && timeout 60 "$AGENTRT" --root "$SBX_ROOT" sandbox --name late1 -- sh -c \
			"for i in \$(seq 50); do [ -e /srv/ready ] && break; sleep 0.1; done; sleep 0.5
			 echo in: \$(grep -c agentrt-test-late /proc/self/mountinfo); echo late-pwned >/srv/late/pwned") 2>&1 &
		sleep 1
		mkdir -m 777 /srv/late && mount -t tmpfs -o mode=1777 agentrt-test-late /srv/late && : >/srv/ready
		wait
		echo "late: $(ls /srv/late | tr "\n" " ")"
		umount /srv/late
		"$AGENTRT" --root "$SBX_ROOT" workspace late1 purge >/dev/null 2>&1
		umount /srv'
	[ "$status" -eq 0 ] || fail "$output"
	[[ "$output" == *"in: 0"* ]] || fail "the mount came in: $output"
	[ "$(grep '^late: ' <<<"$output")" = "late: " ] || fail "written to the host's later mount: $output"
}

@test "root-only: as root, files and directories only root may read (/etc/shadow, a 0700 data directory, a 0600 key) are masked; the rest of the host's root stays readable" {
	# the sandbox's agent is uid 0 there, and uid 0 owns what the modes keep from every user: it
	# read /etc/shadow, /etc/docker/key.json and what /var/lib/docker holds before
	local D ws st=$TEST_ROOT-ro dd=$TEST_ROOT-ro-data
	D=$(umask 022 && mktemp -d /var/lib/agentrt-test-ro.XXXXXX)
	chmod 0755 "$D"
	ws=$(mktemp -d /var/tmp/agentrt-test-sbx-ws.XXXXXX)
	mkdir -p "$D/pub" "$D/db/main"
	echo 'KEY-SECRET-leak' >"$D/server.key"
	chmod 0600 "$D/server.key"
	echo 'ROWS-SECRET-leak' >"$D/db/main/table"
	chmod 0700 "$D/db"
	echo 'public-ok' >"$D/pub/readme"
	# another owner's 0600 file is closed to the agent without a mask (no capabilities)
	echo 'OTHER-SECRET-leak' >"$D/pub/other.key"
	chown 65534 "$D/pub/other.key"
	chmod 0600 "$D/pub/other.key"
	run sh -c 'cd "$1" && "$2" --root "$3" --data-dir "$4" sandbox --name ro1 -- sh -c "
		cat \"\$0/server.key\" \"\$0/pub/readme\" \"\$0/pub/other.key\" /etc/shadow; ls -A \"\$0/db\"
		head -c 5 /etc/passwd; echo; echo end" "$5"' \
		sh "$ws" "$AGENTRT" "$st" "$dd" "$D"
	"$AGENTRT" --root "$st" --data-dir "$dd" workspace ro1 purge >/dev/null 2>&1 || true
	"$AGENTRT" --root "$st" --data-dir "$dd" audit --purge ro1 >/dev/null 2>&1 || true
	rm -rf --one-file-system "$D" "$ws" "$st" "$dd"
	[ "$status" -eq 0 ] || fail "$output"
	[[ "$output" != *leak* ]] || fail "a root-only file was shown: $output"
	[[ "$output" != *main* ]] || fail "a root-only directory was listed: $output"
	[[ "$output" != *'root:*'* && "$output" != *'root:$'* ]] || fail "/etc/shadow was shown: $output"
	[[ "$output" == *public-ok*"root:"*end* ]] || fail "the readable files are gone too: $output"
}

@test "sandbox: /tmp is private even with the workspace below it (regression: the host's /tmp was visible, user)" {
	# the test's workspace is below /tmp ($SBX): the profile's /tmp scratch left it out
	local f=/tmp/agentrt-test-sbx-host-$BATS_ROOT_PID
	echo HOST-TMP-SECRET >"$f"
	chmod 644 "$f"
	run sbx_out --name tmp1 -- sh -c "cat $f; ls /tmp; echo scratch >/tmp/s && cat /tmp/s; echo w >ws-file && cat ws-file"
	rm -f "$f"
	[ "$status" -eq 0 ]
	[[ "$output" != *HOST-TMP-SECRET* ]]
	[[ "$output" != *agentrt-test-sbx-host* ]]
	[[ "$output" == *scratch* ]]
	[[ "$output" == *$'\nw'* ]]
	[ ! -e /tmp/s ]
	"$AGENTRT" --root "$SBX/run/agentrt" workspace tmp1 purge >/dev/null 2>&1 || true
}

@test "sandbox: agentrt's state root and data directory are hidden inside (regression: --root and the data dir were readable, root)" {
	local st=/var/lib/agentrt-test-sbx-st-$BATS_ROOT_PID dd=/var/lib/agentrt-test-sbx-dd-$BATS_ROOT_PID
	local ws
	ws=$(mktemp -d /var/tmp/agentrt-test-sbx-ws.XXXXXX)
	run sh -c 'cd "$1" && "$2" --root "$3" --data-dir "$4" sandbox --name hid1 -- sh -c "ls -A \"\$0\" \"\$1\"; echo end" "$3" "$4"' \
		sh "$ws" "$AGENTRT" "$st" "$dd"
	"$AGENTRT" --root "$st" --data-dir "$dd" workspace hid1 purge >/dev/null 2>&1 || true
	rm -rf --one-file-system "$st" "$dd" "$ws"
	[ "$status" -eq 0 ]
	# the state directory of the sandbox itself (hid1) and the data directory's roots/ are not listed
	local listed=${output%%end*}
	[[ "$listed" != *hid1* ]]
	[[ "$listed" != *roots* ]]
	[[ "$output" == *end* ]]
}

@test "sandbox: the workspace cannot be /, /tmp or /var/tmp, nor hold agentrt's state root" {
	run sbx --workspace /tmp -- true
	[ "$status" -eq 1 ]
	[[ "$output" == *"the workspace cannot be \`/tmp\`"* ]]
	run sbx --workspace /var/tmp -- true
	[ "$status" -eq 1 ]
	[[ "$output" == *"cannot be \`/var/tmp\`"* ]]
	run sbx --workspace / -- true
	[ "$status" -eq 1 ]
	[[ "$output" == *"cannot be \`/\`"* ]]
	run as_user "$AGENTRT" --root "$SBX/ws/state" sandbox -- true
	[ "$status" -eq 1 ]
	[[ "$output" == *"holds agentrt's state root (--root) \`$SBX/ws/state\`"* ]]
	[ ! -e "$SBX/ws/state" ]
}

@test "sandbox: the terminal's modes come back when the program leaves it raw or non-blocking (regression: stdin a terminal, stdout not)" {
	requires script python3
	# stdout to a file: no pty of its own, the program holds the caller's terminal
	cat >"$SBX/ws/tty.sh" <<-EOF
		show() { stty -a | grep -o -- '-\\?icanon\\|-\\?echo ' | tr '\\n' ' '; python3 -c 'import fcntl, os; print("nonblock" if fcntl.fcntl(0, fcntl.F_GETFL) & os.O_NONBLOCK else "block")'; }
		show
		"$AGENTRT" sandbox --name raw1 -- python3 -c 'import fcntl, os, tty; tty.setraw(0); fcntl.fcntl(0, fcntl.F_SETFL, os.O_NONBLOCK)' >/dev/null 2>&1
		echo "raw1 rc=\$?"; show
		"$AGENTRT" sandbox --name raw2 -- sh -c 'stty raw -echo; kill -9 \$\$' >/dev/null 2>&1
		echo "raw2 rc=\$?"; show
	EOF
	chmod 644 "$SBX/ws/tty.sh"
	run as_user script -qec "sh $SBX/ws/tty.sh" /dev/null
	[[ "$output" == *"raw1 rc=0"* ]]
	[[ "$output" == *"raw2 rc=137"* ]]
	[[ "$output" != *-icanon* ]]
	[[ "$output" != *-echo* ]]
	[[ "$output" != *nonblock* ]]
	[ "$(echo "$output" | grep -c "icanon echo")" -eq 3 ]
}

@test "sandbox: audit and ps text output escape the agent's control characters (regression: raw ESC from argv and file names)" {
	mkdir "$SBX/rws"
	cd "$SBX/rws"
	# a program named with a terminal's escape sequences (set the title, clear the screen)
	"$AGENTRT" --root "$SBX_ROOT" sandbox --name esc1 --keep -- sh -c \
		'n=$(printf "x\033]0;PWNED\007y"); cp /bin/sh "$PWD/$n"; "$PWD/$n" -c "sleep 6" "$(printf "\033[2J\302\233")"' \
		>"$SBX/esc.log" 2>&1 &
	local pid=$! out i
	for i in $(seq 50); do
		grep -q PWNED "$SBX_ROOT/esc1/state.json" 2>/dev/null && break
		[ -n "$(PATH=/nonexistent "$AGENTRT" --root "$SBX_ROOT" ps esc1 2>/dev/null | grep PWNED)" ] && break
		sleep 0.2
	done
	# ps without ps(1) on PATH: agentrt's own table of the command lines
	out=$(PATH=/nonexistent "$AGENTRT" --root "$SBX_ROOT" ps esc1 2>&1 || true)
	wait "$pid" || true
	[[ "$out" == *PWNED* ]]
	[[ "$out" != *$'\033'* && "$out" != *$'\007'* && "$out" != *$'\302\233'* ]]
	run "$AGENTRT" --root "$SBX_ROOT" audit esc1 --format text
	[[ "$output" == *PWNED* ]]
	[[ "$output" != *$'\033'* && "$output" != *$'\007'* && "$output" != *$'\302\233'* ]]
	run "$AGENTRT" --root "$SBX_ROOT" audit esc1 --summary
	[[ "$output" == *'x\x1b]0;PWNED\x07y'* ]]
	[[ "$output" != *$'\033'* && "$output" != *$'\007'* ]]
	"$AGENTRT" --root "$SBX_ROOT" delete -f esc1 >/dev/null 2>&1 || true
	"$AGENTRT" --root "$SBX_ROOT" workspace esc1 purge >/dev/null 2>&1 || true
}

# in_new_userns SCRIPT: sh SCRIPT as root of a new user namespace that maps 0..65535 to the host's
# (so the test user is there too); its user.max_user_namespaces is its own to change.
in_new_userns() {
	local fifo=$SBX/userns.fifo p i
	mkfifo "$fifo"
	unshare --user sh -c 'read x <"$0"; exec sh "$1"' "$fifo" "$1" &
	p=$!
	for i in $(seq 50); do
		[ "$(readlink /proc/$p/ns/user)" != "$(readlink /proc/self/ns/user)" ] && break
		sleep 0.1
	done
	echo "0 0 65536" >/proc/$p/uid_map
	echo "0 0 65536" >/proc/$p/gid_map
	echo go >"$fifo"
	wait $p
}

@test "sandbox: user.max_user_namespaces=0 gives one clear line (regression: clone container init: Operation not permitted)" {
	requires unshare
	cat >"$SBX/limit.sh" <<-EOF
		echo 0 >/proc/sys/user/max_user_namespaces || exit 99
		cd "$SBX/ws" && exec setpriv --reuid $SBX_UID --regid $SBX_UID --clear-groups env -i \
			PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$SBX/home" XDG_RUNTIME_DIR="$SBX/run" \
			"$AGENTRT" sandbox --name uns1 -- true
	EOF
	run in_new_userns "$SBX/limit.sh"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == *"cannot create a user namespace (user.max_user_namespaces=0 forbids it"* ]]
}

@test "sandbox: a user already in another user namespace (a rootless container) gets one of its own (regression: clone container init: Operation not permitted)" {
	requires unshare
	cat >"$SBX/nested.sh" <<-EOF
		cd "$SBX/ws" && exec setpriv --reuid $SBX_UID --regid $SBX_UID --clear-groups env -i \
			PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$SBX/home" XDG_RUNTIME_DIR="$SBX/run" \
			"$AGENTRT" sandbox --name uns2 -- sh -c 'echo uid=\$(id -u); exit 3'
	EOF
	run in_new_userns "$SBX/nested.sh"
	[ "$status" -eq 3 ]
	[[ "$output" == *uid=$SBX_UID* ]]
}

@test "doctor: everything a container needs is found on this host" {
	run "$AGENTRT" doctor
	[ "$status" -eq 0 ]
	[[ "$output" == *"ok       namespaces"* ]]
	[[ "$output" == *"ok       new mount API"* ]]
	run "$AGENTRT" doctor --format json
	[ "$status" -eq 0 ]
	echo "$output" | jq -e '.ok == true and (.checks | length) >= 10' >/dev/null
}

@test "doctor: reports what it is made to miss, and what that disables" {
	# unprivileged: no delegated cgroup on this host; no fanotify file-system mark, so the
	# trail marks an overlay's directories one by one
	run as_user "$AGENTRT" doctor
	[ "$status" -eq 0 ]
	[[ "$output" == *"missing  cgroup delegation"* ]]
	[[ "$output" == *"disables: memory, pids and cpu limits"* ]]
	[[ "$output" == *"ok       fanotify (directory entry events): directory marks"* ]]
	# inside a sandbox the agent profile refuses new namespaces
	# (a sanitizer build's leak check is not what this test is about)
	# (agentrt from the workspace: its own path may be under /tmp, private inside)
	cp "$AGENTRT" "$SBX/ws/agentrt-doctor"
	run sbx --name doc1 --env ASAN_OPTIONS=detect_leaks=0 -- ./agentrt-doctor doctor
	rm -f "$SBX/ws/agentrt-doctor"
	[[ "$output" == *"MISSING  namespaces"* ]]
	[[ "$output" == *"missing  user namespaces"* ]]
	[[ "$output" == *"agentrt cannot run containers on this host"* ]]
}

@test "sandbox and doctor are in agentrt --help, the man page and the completion" {
	run "$AGENTRT" --help
	[[ "$output" == *"  sandbox "* ]] && [[ "$output" == *"  doctor "* ]]
	grep -q '^\.B sandbox' "$REPO_ROOT/docs/agentrt.1"
	grep -q '^\.B doctor' "$REPO_ROOT/docs/agentrt.1"
	grep -q 'sandbox doctor' "$REPO_ROOT/contrib/completion/agentrt.bash"
}

@test "sandbox: a user's --pids on a host without a delegated cgroup v2: not enforced, one line says why" {
	run sbx --name upl1 --pids 5 -- sh -c 'for i in 1 2 3 4 5 6 7 8; do sleep 1 & done; echo started; kill $(jobs -p) 2>/dev/null; true'
	[ "$status" -eq 0 ]
	# this host is hybrid (tests/vm/sandbox-cgroup.bats has the delegated case)
	[[ "$output" == *"--pids and --cpus are NOT enforced: this host is not cgroup v2 only"* ]]
	[[ "$output" == *started* ]]
	# the bad value is still refused
	run sbx --name upl2 --pids lots -- true
	[ "$status" -eq 1 ]
}

@test "sandbox: a user's --pids with --allow (executed again in the user namespace): the warning once, and it runs" {
	requires slirp4netns unshare
	run unshare -n sh -c "cd '$SBX/ws' && exec timeout 60 setpriv --reuid $SBX_UID --regid $SBX_UID \
		--clear-groups env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME='$SBX/home' \
		XDG_RUNTIME_DIR='$SBX/run' XDG_DATA_HOME='$SBX/home/.local/share' '$AGENTRT' sandbox \
		--name upl3 --allow 192.0.2.1:80 --pids 20 -- sh -c 'echo ran; env | grep -c AGENTRT_SANDBOX_CGROUP || true'"
	[ "$status" -eq 0 ]
	[[ "$output" == *ran* ]]
	[ "$(grep -c 'NOT enforced' <<<"$output")" -eq 1 ]
	# what agentrt told itself across the exec does not reach the command
	[[ "$output" == *"ran"$'\n'"0"* ]]
}

@test "sandbox: agentrt installed below what the sandbox hides runs (regression: exec of its own path under /tmp or ~/.local/bin: no such file)" {
	# the binary in the user's home (hidden inside) and so below /tmp (private inside)
	mkdir -p "$SBX/home/.local/bin"
	cp "$AGENTRT" "$SBX/home/.local/bin/agentrt"
	[ ! -e "$(dirname "$AGENTRT")/agentrt-tls.so" ] || cp "$(dirname "$AGENTRT")/agentrt-tls.so" "$SBX/home/.local/bin/"
	chown -R "$SBX_UID:$SBX_UID" "$SBX/home/.local"
	run as_user "$SBX/home/.local/bin/agentrt" sandbox --name inst1 -- sh -c 'echo pid1=$(tr "\0" " " </proc/1/cmdline); ls /tmp /home'
	[ "$status" -eq 0 ] || fail "user: $output"
	[[ "$output" == *"pid1=/dev/.agentrt-init sandbox-init -- sh"* ]] || fail "user: $output"
	[[ "$output" != *.local* ]] || fail "the home shows inside: $output"
	# as root too
	run "$SBX/home/.local/bin/agentrt" --root "$SBX_ROOT" sandbox --name inst2 --workspace "$SBX/ws" -- true
	[ "$status" -eq 0 ] || fail "root: $output"
	"$AGENTRT" --root "$SBX_ROOT" workspace inst2 purge >/dev/null 2>&1 || true
	rm -rf "$SBX/home/.local"
}

@test "sandbox: error-name-escape: the review's error naming the agent's directory writes its escape sequences and newlines escaped" {
	# `workspace diff` fails on a directory the agent made unreadable, and its error names it:
	# agentrt printed error messages raw, so a name with ESC [2J cleared the operator's screen,
	# an OSC 8 made a link of it, a newline forged a line, U+202E reversed the rest.
	run sbx --name en0 -- sh -c 'd=$(printf "e\033[2J\033]8;;http:203.0.113.9\007x\nagentrt: ok\342\200\256"); mkdir "$d" && chmod 000 "$d"'
	[ "$status" -eq 0 ] || fail "$output"
	as_user "$AGENTRT" workspace en0 diff >"$SBX/run/out" 2>"$SBX/run/err" && fail "diff read an unreadable directory"
	grep -q '^agentrt: .*cannot be listed' "$SBX/run/err" || fail "no error naming it: $(cat -v "$SBX/run/err")"
	! LC_ALL=C grep -q $'\033\|\007' "$SBX/run/err" || fail "raw escape: $(cat -v "$SBX/run/err")"
	! LC_ALL=C grep -qF "$(printf '\342\200\256')" "$SBX/run/err" || fail "raw U+202E: $(cat -v "$SBX/run/err")"
	[ "$(grep -c '^agentrt: ' "$SBX/run/err")" = "$(wc -l <"$SBX/run/err")" ] || fail "a forged line: $(cat -v "$SBX/run/err")"
	grep -qF 'e\u001b[2J' "$SBX/run/err" || fail "the name, escaped: $(cat -v "$SBX/run/err")"
	as_user "$AGENTRT" workspace en0 purge
}

# terminal-inject-json-log: with --log-format json and no --log, the error line on stderr is a JSON
# record (as runc's); its string escaping left DEL, C1 controls (U+009B is a CSI to a terminal),
# bidi controls and bytes that are not UTF-8 raw: the operator's terminal acted on them, and a
# byte that is not UTF-8 made the record no JSON for whoever reads it (an engine, jq).
@test "sandbox: terminal-inject-json-log: a JSON error record on stderr naming the agent's directory escapes its controls and stays valid JSON" {
	run sbx --name ej0 -- sh -c 'd=$(printf "e\033[2J\302\233c\177\377x\nagentrt: ok\342\200\256"); mkdir "$d" && chmod 000 "$d"'
	[ "$status" -eq 0 ] || fail "$output"
	as_user "$AGENTRT" --log-format json workspace ej0 diff >"$SBX/run/out" 2>"$SBX/run/err" && fail "diff read an unreadable directory"
	# (a text line may come before it: the engine root the workspace was found in)
	grep -a '^{' "$SBX/run/err" >"$SBX/run/rec" || true
	[ "$(wc -l <"$SBX/run/rec")" -eq 1 ] || fail "not one record: $(cat -v "$SBX/run/err")"
	! LC_ALL=C grep -qaP '[\x00-\x09\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|\xe2\x80\xae' "$SBX/run/err" ||
		fail "raw controls: $(cat -v "$SBX/run/err")"
	iconv -f UTF-8 -t UTF-8 "$SBX/run/err" >/dev/null || fail "not UTF-8: $(cat -v "$SBX/run/err")"
	local msg
	msg=$(jq -er 'select(.level == "error") | .msg' "$SBX/run/rec") || fail "not a JSON record: $(cat -v "$SBX/run/err")"
	# the reader gets the name back: the controls as they were, the byte not UTF-8 as a lone surrogate
	[[ "$msg" == *"cannot be listed"* && "$msg" == *$'e\e[2J\302\233c\177'* && "$msg" == *$'x\nagentrt: ok\342\200\256'* ]] ||
		fail "the name: $(cat -v <<<"$msg")"
	grep -qF 'e\u001b[2J\u009bc\u007f\udcffx\u000a' "$SBX/run/rec" || fail "escaped: $(cat -v "$SBX/run/err")"
	as_user "$AGENTRT" workspace ej0 purge
}
