#!/usr/bin/env bats
# process.bats - the process section: user, umask, rlimits, capabilities, noNewPrivileges,
# oomScoreAdj, hostname/domainname, sysctl, seccomp, personality, args/env/cwd.
# Checked from the host through /proc/<pid>/ of the container's init where possible.

load helpers

start_sleeper() {
	set_args sleep 1000
	run_detached c1
	[ "$status" -eq 0 ] || fail "run -d: $output"
	PID=$(container_pid c1)
}

status_field() { # FIELD
	sed -n "s/^$1:\t//p" "/proc/$PID/status"
}

caps() { # JSON-ARRAY: set bounding, effective and permitted; inheritable/ambient emptied
	update_config ".process.capabilities = {\"bounding\": $1, \"effective\": $1, \"permitted\": $1}"
}

@test "args, env and cwd are applied verbatim" {
	update_config '.process.env = ["PATH=/bin:/usr/bin", "A=1", "B=with space", "C=x=y"] | .process.cwd = "/tmp"'
	set_args sh -c 'printf "%s|" "$0" "$1" "$A" "$B" "$C" "$(pwd)"' 'arg zero' '$NOT_EXPANDED'
	run rt run --bundle "$BUNDLE" c1
	[ "$status" -eq 0 ] || fail "$output"
	[ "$output" = 'arg zero|$NOT_EXPANDED|1|with space|x=y|/tmp|' ] || fail "$output"
}

# runc and crun pass process.env as it is (HOME added from /etc/passwd); a name without PATH is
# looked up in a default one but no PATH is put in the environment.  The oci profile added
# PATH=/usr/local/sbin:... to the init's and every exec's environment when the user has a home.
@test "env-no-path-added: a process.env without PATH reaches the init and an exec without one" {
	update_config '.process.env = ["A=1"] | .process.user = {"uid": 0, "gid": 0}'
	set_args /bin/sleep 100
	run_detached c1
	[ "$status" -eq 0 ] || fail "run -d: $output"
	env=$(tr '\0' '\n' <"/proc/$(container_pid c1)/environ")
	[ "$(sort <<<"$env" | tr '\n' ' ')" = "A=1 HOME=/root " ] || fail "init's environment: $env"
	run rt exec c1 /usr/bin/env
	[ "$status" -eq 0 ] || fail "exec: $output"
	[ "$(sort <<<"$output" | tr '\n' ' ')" = "A=1 HOME=/root " ] || fail "exec's environment: $output"
}

# A capability name this runtime does not know (a newer kernel's) is skipped with a warning, as
# runc and crun do; the known ones still apply.
@test "unknown capability names are skipped with a warning" {
	caps '["CAP_KILL", "CAP_AGENTRT_FROM_THE_FUTURE"]'
	start_sleeper
	[ "$(status_field CapBnd)" = 0000000000000020 ] || fail "CapBnd $(status_field CapBnd)"
	[ "$(status_field CapEff)" = 0000000000000020 ] || fail "CapEff $(status_field CapEff)"
	grep -q CAP_AGENTRT_FROM_THE_FUTURE "$BUNDLE/c1.err" || fail "no warning: $(cat "$BUNDLE/c1.err")"
	jq '.process | .args = ["sh", "-c", "grep CapEff /proc/self/status"] |
		.capabilities = {"bounding": ["CAP_CHOWN", "CAP_NO_SUCH_THING"], "effective": ["CAP_CHOWN", "CAP_NO_SUCH_THING"],
			"permitted": ["CAP_CHOWN", "CAP_NO_SUCH_THING"]}' "$BUNDLE/config.json" >"$BUNDLE/p.json"
	run rt exec --process "$BUNDLE/p.json" c1
	[ "$status" -eq 0 ] || fail "exec: $output"
	grep -q 'CapEff:.*0000000000000001' <<<"$output" || fail "exec CapEff: $output"
	grep -q CAP_NO_SUCH_THING <<<"$output" || fail "exec: no warning: $output"
}

# runc and crun create a missing cwd (inside the rootfs: a symlink in the path is resolved as
# if the rootfs were "/", so nothing is made on the host).
@test "a missing process.cwd is created inside the rootfs" {
	update_config '.process.cwd = "/work/deep/dir"'
	set_args pwd
	run rt run --bundle "$BUNDLE" c1
	[ "$status" -eq 0 ] || fail "$output"
	[ "$output" = /work/deep/dir ]
	[ -d "$ROOTFS/work/deep/dir" ]
	# an absolute symlink in the image must not lead the mkdir out of the rootfs
	escape=$BATS_TEST_TMPDIR/escape-$$
	ln -s "$escape" "$ROOTFS/evil"
	update_config '.process.cwd = "/evil/sub"'
	run rt run --bundle "$BUNDLE" c2
	[ ! -e "$escape" ] || fail "created $escape on the host"
	# runc 1.1 refuses a cwd through a symlink; agentrt follows it inside the rootfs
	is_agentrt || return 0
	[ "$status" -eq 0 ] || fail "$output"
	[ -d "$ROOTFS/$escape/sub" ] || fail "not created inside the rootfs"
	[ "$output" = "$escape/sub" ] || fail "cwd: $output"
}

# runc and crun: HOME comes from the container's /etc/passwd when process.env has none ("/"
# for a uid without an entry); a HOME in env is kept.  For exec too.
@test "HOME is set from the container's /etc/passwd when env has none" {
	update_config '.process.env = ["PATH=/bin:/usr/bin"] | .process.user = {"uid": 1000, "gid": 1000}'
	set_args sh -c 'echo "$HOME"'
	run rt run --bundle "$BUNDLE" c1
	[ "$status" -eq 0 ] || fail "$output"
	[ "$output" = /home/user ] || fail "uid 1000: HOME=$output"
	update_config '.process.user = {"uid": 4242, "gid": 4242}'
	run rt run --bundle "$BUNDLE" c2
	[ "$output" = / ] || fail "uid without an entry: HOME=$output"
	update_config '.process.env = ["PATH=/bin:/usr/bin", "HOME=/explicit"] | .process.user = {"uid": 1000, "gid": 1000}'
	run rt run --bundle "$BUNDLE" c3
	[ "$output" = /explicit ] || fail "HOME from env: $output"
	update_config '.process.env = ["PATH=/bin:/usr/bin"] | .process.user = {"uid": 0, "gid": 0}'
	set_args sleep 100
	run_detached c4
	run rt exec --env PATH=/bin c4 sh -c 'echo "$HOME"'
	[ "$output" = /root ] || fail "exec as root: HOME=$output"
}

# agent-home-uid-without-passwd: `docker run -u 1000:1000` (an agent keeping the workspace's
# files its user's) passes HOME=/ for a uid the image's /etc/passwd does not list.  Under the
# agent profile / is read-only and no scratch home was made: git config --global, go build
# (GOCACHE), npm -g and pip --user all failed with "Read-only file system".
@test "agent-home-uid-without-passwd: the agent profile gives a uid whose HOME is / a writable home of its own" {
	is_agentrt || skip "the agent profile is agentrt's"
	update_config '.root.readonly = true | .process.env = ["PATH=/bin:/usr/bin", "HOME=/"] |
		.process.user = {"uid": 4242, "gid": 4242}'
	set_args sh -c 'echo "home=$HOME"; touch "$HOME/.gitconfig" && echo written;
		stat -c "%u %a" "$HOME"; echo "gocache=$GOCACHE"; grep " $HOME " /proc/self/mountinfo'
	run rt --profile agent run --bundle "$BUNDLE" c1
	[ "$status" -eq 0 ] || fail "$output"
	[[ "$output" == *"home=/home/agentrt-4242"* ]] || fail "$output"
	[[ "$output" == *written* ]] || fail "$output"
	[[ "$output" == *"4242 700"* ]] || fail "$output"
	[[ "$output" == *"gocache=/home/agentrt-4242/.cache/go-build"* ]] || fail "$output"
	[[ "$output" == *" /home/agentrt-4242 "*" - tmpfs "* ]] || fail "not a tmpfs of its own: $output"
	# an exec as that uid gets the same home
	update_config '.process.args = ["sleep", "100"]'
	AGENTRT_PROFILE=agent run_detached c2
	[ "$status" -eq 0 ] || fail "$output"
	run rt exec --user 4242:4242 --env HOME=/ c2 sh -c 'echo "home=$HOME"; touch "$HOME/x" && echo written'
	[[ "$output" == *"home=/home/agentrt-4242"* ]] || fail "exec: $output"
	[[ "$output" == *written* ]] || fail "exec: $output"
	# Docker passes no HOME at all (the runtime looks it up): the same home, for exec too
	update_config '.process.env = ["PATH=/bin:/usr/bin"] | .process.args = ["sh", "-c", "echo home=$HOME; touch $HOME/w && echo written"]'
	run rt --profile agent run --bundle "$BUNDLE" c4
	[[ "$output" == *"home=/home/agentrt-4242"* ]] || fail "no HOME: $output"
	[[ "$output" == *written* ]] || fail "no HOME: $output"
	update_config '.process.args = ["sleep", "100"]'
	AGENTRT_PROFILE=agent run_detached c5
	[ "$status" -eq 0 ] || fail "$output"
	run rt exec --user 4242:4242 --env PATH=/bin c5 sh -c 'echo "home=$HOME"; touch "$HOME/x" && echo written'
	[[ "$output" == *"home=/home/agentrt-4242"* ]] || fail "exec, no HOME: $output"
	[[ "$output" == *written* ]] || fail "exec, no HOME: $output"
	# a uid the image lists keeps its passwd home (runc's rule), as before
	update_config '.process.user = {"uid": 1000, "gid": 1000} | .process.args = ["sh", "-c", "echo home=$HOME"]'
	run rt --profile agent run --bundle "$BUNDLE" c6
	[[ "$output" == *"home=/home/user"* ]] || fail "listed uid: $output"
	# a HOME the engine set to a real directory is kept
	update_config '.process.env = ["PATH=/bin:/usr/bin", "HOME=/home/user"] | .process.user = {"uid": 1000, "gid": 1000} |
		.process.args = ["sh", "-c", "echo home=$HOME; touch $HOME/y && echo written"]'
	run rt --profile agent run --bundle "$BUNDLE" c7
	[[ "$output" == *"home=/home/user"* ]] || fail "$output"
	[[ "$output" == *written* ]] || fail "$output"
}

# agent-home-exec-other-uid: `docker exec -u 1000` into a container whose init is root (the
# common case: the image runs as root, the agent's tools are run as a user) passes HOME=/ (or none)
# for a uid the image does not list, and `agentrt exec` without --process passed on the init's
# HOME=/root.  The init's home is root's (0700), so the exec had "/" on the read-only root or
# root's home: git config --global, npm -g, pip --user and GOCACHE failed (EROFS, EACCES).
@test "agent-home-exec-other-uid: an exec as an unlisted uid into a root container gets a writable home" {
	is_agentrt || skip "the agent profile is agentrt's"
	update_config '.root.readonly = true | .process.env = ["PATH=/bin:/usr/bin"] |
		.process.user = {"uid": 0, "gid": 0}'
	set_args sleep 100
	AGENTRT_PROFILE=agent run_detached c1
	[ "$status" -eq 0 ] || fail "$output"
	run rt exec --user 4242:4242 --env HOME=/ c1 sh -c 'echo "home=$HOME"; echo "gocache=$GOCACHE";
		touch "$HOME/.gitconfig" && echo written; stat -c "%u %a" "$HOME"'
	[ "$status" -eq 0 ] || fail "$output"
	[[ "$output" == *"home=/tmp/agentrt-home-4242"* ]] || fail "HOME=/: $output"
	[[ "$output" == *"gocache=/tmp/agentrt-home-4242/.cache/go-build"* ]] || fail "$output"
	[[ "$output" == *written* ]] || fail "$output"
	[[ "$output" == *"4242 700"* ]] || fail "$output"
	# Docker passes no HOME: the same home, kept from one exec to the next
	# (`exec` without --process takes the init's env, HOME=/root and PATH's /root/.local/bin too)
	run rt exec --user 4242:4242 c1 sh -c 'echo "home=$HOME"; echo "path=$PATH"; ls -A "$HOME"'
	[ "$status" -eq 0 ] || fail "$output"
	[[ "$output" != *"/root/"* ]] || fail "the init's home dirs: $output"
	[[ "$output" == *"home=/tmp/agentrt-home-4242"* ]] || fail "no HOME: $output"
	[[ "$output" == *.gitconfig* ]] || fail "not the same home: $output"
	# another uid cannot plant the home of the next: a squatted name is not taken
	run rt exec --user 4343:4343 --env HOME=/ c1 sh -c 'mkdir -m 777 /tmp/agentrt-home-4444 && echo planted'
	[[ "$output" == *planted* ]] || fail "$output"
	run rt exec --user 4444:4444 --env HOME=/ c1 sh -c 'echo "home=$HOME"'
	[ "$status" -ne 0 ] || fail "took a home another uid made: $output"
	[[ "$output" == "agentrt: exec \`c1\`: home \`/tmp/agentrt-home-4444\` is not uid 4444's own directory"* ]] || fail "$output"
	# root and a listed uid keep theirs
	run rt exec --user 1000:1000 --env PATH=/bin c1 sh -c 'echo "home=$HOME"'
	[[ "$output" == *"home=/home/user"* ]] || fail "listed uid: $output"
	run rt exec c1 sh -c 'echo "home=$HOME"'
	[[ "$output" == *"home=/root"* ]] || fail "root: $output"
}

# agent-home-bound-passwd: an engine that binds the host's /etc/passwd (or a generated one) over
# the image's (`podman run --userns=keep-id`, `-v /etc/passwd:/etc/passwd:ro`) lists the uid
# there only.  create read the image's file, took the uid for unlisted and gave it
# /home/agentrt-UID, not the home the container's own /etc/passwd names (which runc gives it).
@test "agent-home-bound-passwd: a uid listed only in a bind-mounted /etc/passwd keeps that home" {
	is_agentrt || skip "the agent profile is agentrt's"
	mkdir "$BUNDLE/etc-bound"
	printf 'root:x:0:0:root:/root:/bin/sh\nagent:x:4343:4343:agent:/work/agent:/bin/sh\n' >"$BUNDLE/passwd-bound"
	cp "$BUNDLE/passwd-bound" "$BUNDLE/etc-bound/passwd"
	update_config '.root.readonly = true | .process.env = ["PATH=/bin:/usr/bin"] |
		.process.user = {"uid": 4343, "gid": 4343} |
		.mounts += [{"destination": "/etc/passwd", "type": "bind", "source": "'"$BUNDLE"'/passwd-bound", "options": ["rbind", "ro"]}]'
	set_args sh -c 'echo "home=$HOME"'
	run rt --profile agent run --bundle "$BUNDLE" c1
	[ "$status" -eq 0 ] || fail "$output"
	[ "$output" = home=/work/agent ] || fail "bound /etc/passwd: $output"
	# the whole /etc bound (a source relative to the bundle, as the spec allows)
	update_config '.mounts |= map(select(.destination != "/etc/passwd")) |
		.mounts += [{"destination": "/etc", "type": "bind", "source": "etc-bound", "options": ["rbind", "ro"]}]'
	run rt --profile agent run --bundle "$BUNDLE" c2
	[ "$status" -eq 0 ] || fail "$output"
	[ "$output" = home=/work/agent ] || fail "bound /etc: $output"
	# a bound file that does not list the uid: still a home of its own
	printf 'root:x:0:0:root:/root:/bin/sh\n' >"$BUNDLE/etc-bound/passwd"
	run rt --profile agent run --bundle "$BUNDLE" c3
	[ "$status" -eq 0 ] || fail "$output"
	[ "$output" = home=/home/agentrt-4343 ] || fail "unlisted in the bound file: $output"
}

# A FIFO planted at /etc/passwd must not hang the runtime looking for HOME.
@test "HOME lookup does not block on a FIFO at /etc/passwd" {
	known_broken '^runc' "opens a FIFO at /etc/passwd and blocks"
	rm "$ROOTFS/etc/passwd"
	mkfifo "$ROOTFS/etc/passwd"
	update_config '.process.env = ["PATH=/bin:/usr/bin"]'
	set_args sh -c 'echo "$HOME"'
	RT_TIMEOUT=20 run rt run --bundle "$BUNDLE" c1
	[ "$status" -eq 0 ] || fail "$output"
	[ "$output" = / ]
}

@test "user uid, gid and additionalGids" {
	update_config '.process.user = {"uid": 1000, "gid": 1000, "additionalGids": [100, 65534]}'
	start_sleeper
	[ "$(status_field Uid)" = "$(printf '1000\t1000\t1000\t1000')" ]
	[ "$(status_field Gid)" = "$(printf '1000\t1000\t1000\t1000')" ]
	groups=$(status_field Groups | tr ' \t' '\n\n' | sed '/^$/d' | sort -n | tr '\n' ' ')
	[ "$groups" = "100 65534 " ] || fail "Groups: $groups"
}

# additional-gids-once: runc sets each additional gid once; agentrt passed a repeated one to
# setgroups as it came, and the kernel kept it twice (Groups: 5 5 7), for init and exec.
@test "additional-gids-once: a repeated additionalGid is set once, for init and exec" {
	update_config '.process.user = {"uid": 1000, "gid": 1000, "additionalGids": [65534, 100, 65534, 100]}'
	start_sleeper
	[ "$(status_field Groups | xargs)" = "100 65534" ] || fail "Groups: $(status_field Groups)"
	run rt exec c1 sh -c "grep ^Groups: /proc/self/status"
	[ "$status" -eq 0 ] || fail "exec: $output"
	[ "$(xargs <<<"${output#Groups:}")" = "100 65534" ] || fail "exec Groups: $output"
}

@test "user umask" {
	update_config '.process.user.umask = 23'
	start_sleeper
	[ "$(status_field Umask)" = 0027 ] || fail "Umask $(status_field Umask)"
}

@test "rlimits are set (checked in /proc/<pid>/limits)" {
	update_config '.process.rlimits = [{"type": "RLIMIT_NOFILE", "soft": 512, "hard": 768}, {"type": "RLIMIT_CORE", "soft": 0, "hard": 0}, {"type": "RLIMIT_NPROC", "soft": 300, "hard": 400}]'
	start_sleeper
	grep -E '^Max open files +512 +768 ' "/proc/$PID/limits" || fail "$(cat "/proc/$PID/limits")"
	grep -E '^Max core file size +0 +0 ' "/proc/$PID/limits"
	grep -E '^Max processes +300 +400 ' "/proc/$PID/limits"
}

@test "capabilities: exactly the configured sets, no inheritable or ambient" {
	caps '["CAP_CHOWN", "CAP_KILL"]'
	start_sleeper
	for s in CapEff CapPrm CapBnd; do
		[ "$(status_field $s)" = 0000000000000021 ] || fail "$s $(status_field $s)"
	done
	[ "$(status_field CapInh)" = 0000000000000000 ]
	[ "$(status_field CapAmb)" = 0000000000000000 ]
}

@test "capabilities: empty sets drop everything" {
	caps '[]'
	start_sleeper
	for s in CapEff CapPrm CapBnd CapInh CapAmb; do
		[ "$(status_field $s)" = 0000000000000000 ] || fail "$s $(status_field $s)"
	done
}

@test "capabilities: ambient when asked for, for a non-root user" {
	update_config '.process.user = {"uid": 1000, "gid": 1000} | .process.capabilities = {
		"bounding": ["CAP_NET_BIND_SERVICE", "CAP_KILL"], "effective": ["CAP_NET_BIND_SERVICE"],
		"permitted": ["CAP_NET_BIND_SERVICE"], "inheritable": ["CAP_NET_BIND_SERVICE"],
		"ambient": ["CAP_NET_BIND_SERVICE"]}'
	start_sleeper
	[ "$(status_field CapAmb)" = 0000000000000400 ] || fail "CapAmb $(status_field CapAmb)"
	[ "$(status_field CapEff)" = 0000000000000400 ] || fail "CapEff $(status_field CapEff)"
	[ "$(status_field CapBnd)" = 0000000000000420 ] || fail "CapBnd $(status_field CapBnd)"
}

@test "capabilities are enforced: chown without CAP_CHOWN fails" {
	caps '["CAP_KILL"]'
	set_cmd 'touch /tmp/f; chown 1000 /tmp/f'
	run rt run --bundle "$BUNDLE" c1
	[ "$status" -ne 0 ]
	[ "$(stat -c %u "$ROOTFS/tmp/f")" = 0 ]
}

# caps-refused-at-start: capabilities the kernel will refuse (capset's rules) were applied only
# after START, so `create` and `start` both succeeded and the container stopped at once with the
# error on its own stderr (runtime-tools' process_capabilities read that as a silent pass).  runc
# and crun refuse at create; so does agentrt now, leaving nothing behind.
caps_refused_at_create() { # JQ-CAPS-OBJECT [setpriv args...]
	local obj=$1
	shift
	update_config ".process.capabilities = $obj"
	set_cmd 'touch /tmp/ran'
	status=0
	timeout --kill-after=5 "$RT_TIMEOUT" setpriv "$@" "$AGENTRT" --root "$TEST_ROOT" create \
		--bundle "$BUNDLE" c1 </dev/null >"$BUNDLE/c1.out" 2>"$BUNDLE/c1.err" || status=$?
	output=$(cat "$BUNDLE/c1.err")
	assert_clean_failure
	local create_output=$output
	run rt state c1
	[ "$status" -ne 0 ] || fail "the refused container exists: $output"
	rt start c1 2>/dev/null && fail "start of a refused container succeeded"
	[ ! -e "$ROOTFS/tmp/ran" ] || fail "the program ran"
	output=$create_output
}

@test "caps-refused-at-start: a permitted capability the runtime lacks fails create" {
	command -v setpriv >/dev/null || skip "no setpriv (util-linux)"
	# the runtime runs without CAP_MAC_ADMIN in its bounding (so permitted) set
	caps_refused_at_create '{"bounding": ["CAP_CHOWN", "CAP_MAC_ADMIN"],
		"effective": ["CAP_CHOWN", "CAP_MAC_ADMIN"], "permitted": ["CAP_CHOWN", "CAP_MAC_ADMIN"]}' \
		--bounding-set -mac_admin
	if is_agentrt; then
		assert_output_contains "CAP_MAC_ADMIN"
		assert_output_contains "create \`c1\`"
	fi
}

@test "caps-refused-at-start: inheritable outside the bounding set fails create" {
	caps_refused_at_create '{"bounding": ["CAP_CHOWN"], "effective": ["CAP_CHOWN"],
		"permitted": ["CAP_CHOWN"], "inheritable": ["CAP_KILL"]}'
	! is_agentrt || assert_output_contains "CAP_KILL"
}

@test "caps-refused-at-start: effective outside permitted fails create" {
	caps_refused_at_create '{"bounding": ["CAP_CHOWN", "CAP_KILL"], "effective": ["CAP_KILL"],
		"permitted": ["CAP_CHOWN"]}'
	! is_agentrt || assert_output_contains "CAP_KILL"
}

@test "caps-refused-at-start: what the runtime has is still granted, bounding beyond it ignored" {
	command -v setpriv >/dev/null || skip "no setpriv (util-linux)"
	# asking for a bounding capability the runtime lacks is not an error (it can only drop)
	update_config '.process.capabilities = {"bounding": ["CAP_CHOWN", "CAP_MAC_ADMIN"],
		"effective": ["CAP_CHOWN"], "permitted": ["CAP_CHOWN"]}'
	set_args sleep 1000
	status=0
	timeout --kill-after=5 "$RT_TIMEOUT" setpriv --bounding-set -mac_admin "$AGENTRT" \
		--root "$TEST_ROOT" run -d --bundle "$BUNDLE" c1 </dev/null >"$BUNDLE/c1.out" \
		2>"$BUNDLE/c1.err" || status=$?
	[ "$status" -eq 0 ] || fail "run -d: $(cat "$BUNDLE/c1.err")"
	PID=$(container_pid c1)
	[ "$(status_field CapPrm)" = 0000000000000001 ] || fail "CapPrm $(status_field CapPrm)"
	[ "$(status_field CapBnd)" = 0000000000000001 ] || fail "CapBnd $(status_field CapBnd)"
}

# user-unmapped-at-start: in a user namespace, a process.user id the namespace does not map made
# setresuid()/setgroups() fail only after START (create and start succeeded, the container
# stopped with "Invalid argument" on its stderr); runc refuses at create, and so does agentrt.
user_refused_at_create() { # JQ-USER-OBJECT
	add_userns
	update_config ".linux.uidMappings[0].size = 1000 | .linux.gidMappings[0].size = 1000 |
		.process.user = $1"
	set_cmd 'touch /tmp/ran'
	create_container c1
	assert_clean_failure
	local create_output=$output
	run rt state c1
	[ "$status" -ne 0 ] || fail "the refused container exists: $output"
	[ ! -e "$ROOTFS/tmp/ran" ] || fail "the program ran"
	output=$create_output
}

@test "user-unmapped-at-start: an unmapped uid fails create" {
	requires userns
	user_refused_at_create '{"uid": 1000, "gid": 0}'
	! is_agentrt || assert_output_contains "process.user.uid: 1000 is not mapped"
}

@test "user-unmapped-at-start: an unmapped gid fails create" {
	requires userns
	user_refused_at_create '{"uid": 0, "gid": 4294967294}'
	! is_agentrt || assert_output_contains "process.user.gid: 4294967294 is not mapped"
}

@test "user-unmapped-at-start: an unmapped additional gid fails create" {
	requires userns
	user_refused_at_create '{"uid": 0, "gid": 0, "additionalGids": [5, 1000]}'
	! is_agentrt || assert_output_contains "process.user.additionalGids: 1000 is not mapped"
}

@test "user-unmapped-at-start: the last mapped ids are accepted" {
	requires userns
	add_userns
	update_config '.linux.uidMappings[0].size = 1000 | .linux.gidMappings[0].size = 1000 |
		.process.user = {"uid": 999, "gid": 999, "additionalGids": [0, 998]}'
	start_sleeper
	[ "$(awk '/^Uid:/{print $2}' "/proc/$PID/status")" = 100999 ] || fail "$(grep Uid "/proc/$PID/status")"
	[ "$(awk '/^Groups:/{print $2, $3}' "/proc/$PID/status")" = "100000 100998" ] ||
		fail "$(grep Groups "/proc/$PID/status")"
}

@test "noNewPrivileges true and false" {
	update_config '.process.noNewPrivileges = true'
	start_sleeper
	[ "$(status_field NoNewPrivs)" = 1 ]
	rt delete --force c1
	update_config '.process.noNewPrivileges = false'
	start_sleeper
	[ "$(status_field NoNewPrivs)" = 0 ]
}

@test "oomScoreAdj" {
	update_config '.process.oomScoreAdj = 500'
	start_sleeper
	[ "$(cat "/proc/$PID/oom_score_adj")" = 500 ]
}

# spec 1.2: process.scheduler, process.ioPriority, process.execCPUAffinity; read from the
# host (util-linux's chrt and ionice, /proc/PID/status and stat)
sched_of() { # PID: "POLICY nice N ioprio CLASS-LEVEL"
	printf '%s nice %s io %s\n' "$(chrt -p "$1" | sed -n 's/.*policy: //p')" \
		"$(awk '{print $19}' "/proc/$1/stat")" "$(ionice -p "$1")"
}

@test "process.scheduler and process.ioPriority apply to the init and to an exec'd process" {
	update_config '.process.scheduler = {"policy": "SCHED_BATCH", "nice": 5}
		| .process.ioPriority = {"class": "IOPRIO_CLASS_BE", "priority": 4}'
	start_sleeper
	[ "$(sched_of "$PID")" = "SCHED_BATCH nice 5 io best-effort: prio 4" ] || fail "init: $(sched_of "$PID")"
	rt_bg exec -d --pid-file "$BUNDLE/exec.pid" c1 sleep 1000
	[ "$status" -eq 0 ] || fail "exec: $output"
	epid=$(cat "$BUNDLE/exec.pid")
	[ "$(sched_of "$epid")" = "SCHED_BATCH nice 5 io best-effort: prio 4" ] || fail "exec: $(sched_of "$epid")"
	# written back into the state's config as given
	jq -e '.process.scheduler.policy == "SCHED_BATCH" and .process.ioPriority.priority == 4' \
		"$TEST_ROOT/c1/config.json" >/dev/null || fail "state config: $(jq -c .process "$TEST_ROOT/c1/config.json")"
}

@test "CPU affinity: a runtime under taskset does not pass it on; execCPUAffinity pins init and exec" {
	[ "$(nproc --all)" -ge 2 ] || skip "needs two CPUs"
	all=$(cat /sys/devices/system/cpu/online)
	set_args sleep 1000
	status=0
	taskset -c 0 "$AGENTRT" --root "$TEST_ROOT" run -d --bundle "$BUNDLE" c1 </dev/null >/dev/null 2>"$BUNDLE/err" || status=$?
	[ "$status" -eq 0 ] || fail "run: $(cat "$BUNDLE/err")"
	PID=$(container_pid c1)
	[ "$(status_field Cpus_allowed_list)" = "$all" ] || fail "init kept the runtime's: $(status_field Cpus_allowed_list)"
	taskset -c 0 "$AGENTRT" --root "$TEST_ROOT" exec -d --pid-file "$BUNDLE/e.pid" c1 sleep 1000 </dev/null >/dev/null 2>&1
	[ "$(sed -n 's/^Cpus_allowed_list:\t//p' "/proc/$(cat "$BUNDLE/e.pid")/status")" = "$all" ] || fail "exec kept it"
	rt delete --force c1
	update_config '.process.execCPUAffinity = {"initial": "0", "final": "1"}'
	start_sleeper
	[ "$(status_field Cpus_allowed_list)" = 1 ] || fail "init: $(status_field Cpus_allowed_list)"
	rt_bg exec -d --pid-file "$BUNDLE/e2.pid" c1 sleep 1000
	[ "$(sed -n 's/^Cpus_allowed_list:\t//p' "/proc/$(cat "$BUNDLE/e2.pid")/status")" = 1 ] || fail "exec not pinned"
}

@test "process.scheduler: SCHED_DEADLINE with linux.resources.cpu.cpus fails create naming it, leaves nothing" {
	[ "$(nproc --all)" -ge 2 ] || skip "needs two CPUs"
	update_config '.linux.resources.cpu.cpus = "0"
		| .process.scheduler = {"policy": "SCHED_DEADLINE", "runtime": 42000, "deadline": 1000000, "period": 1000000}'
	set_args sleep 1000
	run_detached c1
	[ "$status" -ne 0 ] || fail "ran"
	[[ "$output" == *"process.scheduler: SCHED_DEADLINE: Operation not permitted (it needs a CPU affinity of every CPU"* ]] || fail "$output"
	[ "$(wc -l <<<"$output")" -eq 1 ] || fail "not one line: $output"
	run rt state c1
	[ "$status" -ne 0 ]
}

@test "process.scheduler, ioPriority and execCPUAffinity: bad values are refused at the field" {
	cp "$BUNDLE/config.json" "$BUNDLE/orig.json"
	for bad in '.process.scheduler = {"policy": "SCHED_NOPE"}|unknown scheduling policy `SCHED_NOPE`' \
		'.process.scheduler = {"policy": "SCHED_OTHER", "nice": 20}|process.scheduler.nice: out of range' \
		'.process.scheduler = {"policy": "SCHED_OTHER", "flags": ["SCHED_FLAG_X"]}|unknown scheduler flag' \
		'.process.scheduler = {"nice": 1}|process.scheduler.policy: is required' \
		'.process.ioPriority = {"class": "IOPRIO_CLASS_X", "priority": 1}|unknown I/O priority class' \
		'.process.ioPriority = {"class": "IOPRIO_CLASS_BE", "priority": 8}|process.ioPriority.priority: out of range' \
		'.process.execCPUAffinity = {"final": "3-1"}|is not a CPU list' \
		'.process.execCPUAffinity = {"initial": "0,"}|is not a CPU list' \
		'.process.execCPUAffinity = {"final": "4096"}|is not a CPU list'; do
		cp "$BUNDLE/orig.json" "$BUNDLE/config.json"
		update_config "${bad%%|*}"
		run rt run --bundle "$BUNDLE" c1
		[ "$status" -ne 0 ] && [[ "$output" == *"${bad#*|}"* ]] || fail "${bad%%|*}: $status: $output"
	done
}

@test "agent profile: real-time scheduling, a negative nice and IOPRIO_CLASS_RT are refused (create and exec)" {
	for bad in '.process.scheduler = {"policy": "SCHED_FIFO", "priority": 10}|process.scheduler: SCHED_FIFO needs CAP_SYS_NICE' \
		'.process.scheduler = {"policy": "SCHED_RR", "priority": 1}|process.scheduler: SCHED_RR needs CAP_SYS_NICE' \
		'.process.scheduler = {"policy": "SCHED_DEADLINE", "runtime": 1000, "deadline": 2000, "period": 2000}|SCHED_DEADLINE needs CAP_SYS_NICE' \
		'.process.scheduler = {"policy": "SCHED_OTHER", "nice": -5}|a negative nice needs CAP_SYS_NICE' \
		'.process.ioPriority = {"class": "IOPRIO_CLASS_RT", "priority": 0}|process.ioPriority: IOPRIO_CLASS_RT needs CAP_SYS_NICE'; do
		cp "$BUNDLE/config.json" "$BUNDLE/orig.json"
		update_config "${bad%%|*}"
		run rt --profile agent run --bundle "$BUNDLE" c1
		[ "$status" -ne 0 ] && [[ "$output" == *"${bad#*|}"* ]] || fail "${bad%%|*}: $status: $output"
		cp "$BUNDLE/orig.json" "$BUNDLE/config.json"
	done
	# an exec's own process document is held to the same ceiling
	update_config '.process.scheduler = {"policy": "SCHED_IDLE"}'
	set_args sleep 1000
	rt_bg --profile agent run -d --bundle "$BUNDLE" c2
	[ "$status" -eq 0 ] || fail "run (SCHED_IDLE is allowed): $output"
	[[ "$(chrt -p "$(container_pid c2)")" == *SCHED_IDLE* ]] || fail "not SCHED_IDLE"
	jq '.process | .args = ["true"] | .scheduler = {"policy": "SCHED_FIFO", "priority": 1}' \
		"$BUNDLE/config.json" >"$BUNDLE/p.json"
	run rt --profile agent exec --process "$BUNDLE/p.json" c2
	[ "$status" -ne 0 ] && [[ "$output" == *"SCHED_FIFO needs CAP_SYS_NICE"* ]] || fail "exec: $status: $output"
}

@test "hostname in a new UTS namespace" {
	update_config '.hostname = "agentrt-host"'
	host_before=$(hostname)
	start_sleeper
	run rt exec c1 hostname
	[ "$output" = agentrt-host ]
	[ "$(hostname)" = "$host_before" ]
	[ "$(readlink "/proc/$PID/ns/uts")" != "$(readlink /proc/self/ns/uts)" ]
}

@test "domainname in a new UTS namespace" {
	agentrt_only "runc 1.1 ignores domainname"
	update_config '.hostname = "agentrt-host" | .domainname = "agentrt.test"'
	host_before=$(cat /proc/sys/kernel/domainname)
	start_sleeper
	run rt exec c1 cat /proc/sys/kernel/domainname
	[ "$output" = agentrt.test ]
	[ "$(cat /proc/sys/kernel/domainname)" = "$host_before" ]
}

# sysctl_set_seen FWD_KEY MSGMAX_KEY: ip_forward flipped and kernel.msgmax 4096 set under those
# keys are what c1 reads, and the host's ip_forward is unchanged
sysctl_set_seen() {
	local host_fwd want
	host_fwd=$(cat /proc/sys/net/ipv4/ip_forward)
	want=$((1 - host_fwd))
	update_config ".linux.sysctl = {\"$1\": \"$want\", \"$2\": \"4096\"}"
	start_sleeper
	run rt exec c1 cat /proc/sys/net/ipv4/ip_forward /proc/sys/kernel/msgmax
	[ "$output" = "$(printf '%s\n4096' "$want")" ] || fail "$output"
	[ "$(cat /proc/sys/net/ipv4/ip_forward)" = "$host_fwd" ]
}

@test "linux.sysctl sets namespaced sysctls without touching the host" {
	sysctl_set_seen net.ipv4.ip_forward kernel.msgmax
}

# sysctl-slash-keys: runc takes sysctl(8)'s slash form of a key ("net/ipv4/ip_forward", as
# Kubernetes may send it) and writes the same file; agentrt refused it as an invalid key.  A
# slash key that climbs out of /proc/sys is still refused, and a host-wide one is still checked.
@test "sysctl-slash-keys: a key in slash form is the dotted one, checked and written alike" {
	sysctl_set_seen net/ipv4/ip_forward kernel/msgmax
	rt delete --force c1
	update_config '.linux.sysctl = {"net/../../kernel/ostype": "x"}'
	create_container c2
	assert_clean_failure
	update_config '.linux.sysctl = {"vm/swappiness": "10"}'
	create_container c3
	assert_clean_failure
	! is_agentrt || assert_output_contains "not in a separate kernel namespace"
}

# kernel.hostname/domainname change the UTS namespace the container is in: refused unless that
# namespace is the container's own (without a uts entry it would rename the host).
@test "linux.sysctl kernel.hostname/domainname need a private UTS namespace" {
	host_dn=$(cat /proc/sys/kernel/domainname)
	host_hn=$(cat /proc/sys/kernel/hostname)
	set_args true
	update_config '.linux.sysctl = {"kernel.hostname": "agentrt-sysctl-canary"} |
		del(.hostname) | .linux.namespaces |= map(select(.type != "uts"))'
	run_detached noutsns
	assert_clean_failure
	[ "$(cat /proc/sys/kernel/hostname)" = "$host_hn" ] || fail "the host's hostname changed"
	# a private UTS namespace: allowed
	update_config '.linux.sysctl = {"kernel.domainname": "agentrt-sysctl-canary"} | .linux.namespaces += [{"type": "uts"}]'
	set_args cat /proc/sys/kernel/domainname
	run rt run --bundle "$BUNDLE" privuts
	[ "$status" -eq 0 ] || fail "private uts: $output"
	[ "$output" = agentrt-sysctl-canary ]
	[ "$(cat /proc/sys/kernel/domainname)" = "$host_dn" ]
}

# sysctl-hostname-conflict: kernel.hostname was written even in a private UTS namespace, where
# the OCI hostname field owns it (runc refuses it always, crun too); a kernel.domainname that
# contradicts the domainname field left the container with one of the two.  Both fail create now;
# the same domainname in both places is allowed.
@test "sysctl-hostname-conflict: kernel.hostname is refused, with or without the hostname field" {
	set_args true
	for cfg in '.hostname = "h1"' 'del(.hostname)'; do
		update_config "$cfg"' | .linux.sysctl = {"kernel.hostname": "foo"}'
		run_detached "c$RANDOM"
		assert_clean_failure
		! is_agentrt || assert_output_contains "conflicts with the OCI \`hostname\` field"
	done
}

@test "sysctl-hostname-conflict: a kernel.domainname other than the domainname field is refused" {
	agentrt_only "runc 1.1 ignores domainname"
	update_config '.domainname = "one.test" | .linux.sysctl = {"kernel.domainname": "two.test"}'
	set_args cat /proc/sys/kernel/domainname
	run rt run --bundle "$BUNDLE" c1
	assert_clean_failure
	assert_output_contains "conflicts with the OCI \`domainname\` field \`one.test\`"
	update_config '.linux.sysctl = {"kernel.domainname": "one.test"}'
	run rt run --bundle "$BUNDLE" c2
	[ "$status" -eq 0 ] || fail "the same value twice: $output"
	[ "$output" = one.test ] || fail "$output"
}

# A uts entry whose path is the host's own namespace is not private either.  (The domainname,
# not the hostname, so that a regression renames nothing that matters; it is put back at once.)
@test "linux.sysctl kernel.domainname in the host's UTS namespace joined by path is refused" {
	known_broken '^runc' "writes the host's domainname when the uts path is the host's namespace"
	host_dn=$(cat /proc/sys/kernel/domainname)
	set_args true
	update_config '.linux.sysctl = {"kernel.domainname": "agentrt-sysctl-canary"} |
		del(.hostname) | .linux.namespaces |= map(select(.type != "uts")) |
		.linux.namespaces += [{"type": "uts", "path": "/proc/'"$$"'/ns/uts"}]'
	run_detached hostuts
	if [ "$(cat /proc/sys/kernel/domainname)" != "$host_dn" ]; then
		echo "$host_dn" >/proc/sys/kernel/domainname
		fail "the host's domainname changed"
	fi
	assert_clean_failure
	assert_output_contains "private uts namespace"
}

@test "seccomp: a denied syscall returns the configured errno" {
	update_config '.linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW", "architectures": ["SCMP_ARCH_X86_64"],
		"syscalls": [{"names": ["keyctl"], "action": "SCMP_ACT_ERRNO", "errnoRet": 95},
		             {"names": ["io_uring_setup"], "action": "SCMP_ACT_ERRNO"}]}'
	start_sleeper
	[ "$(status_field Seccomp)" = 2 ]
	run rt exec c1 try-syscall keyctl
	[ "$output" = EOPNOTSUPP ] || fail "keyctl: $output"
	run rt exec c1 try-syscall io_uring_setup
	[ "$output" = EPERM ] || fail "io_uring_setup: $output"
	run rt exec c1 try-syscall add_key
	[ "$output" != EOPNOTSUPP ]
}

@test "seccomp: unknown syscall names are ignored" {
	update_config '.linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW",
		"syscalls": [{"names": ["agentrt_no_such_syscall", "keyctl"], "action": "SCMP_ACT_ERRNO", "errnoRet": 95}]}'
	set_args try-syscall keyctl
	run rt run --bundle "$BUNDLE" c1
	[ "$status" -eq 0 ] || fail "$output"
	[ "$output" = EOPNOTSUPP ]
}

# runc: a deny-by-default profile gives ENOSYS, not its default errno, to syscalls newer than
# the newest one it names, so that glibc and runtimes fall back (clone3 -> clone, openat2 ->
# openat).  Older syscalls the profile leaves out still get the default errno.
@test "seccomp: syscalls newer than the profile get ENOSYS, older unlisted ones the default errno" {
	local hdr=/usr/include/x86_64-linux-gnu/asm/unistd_64.h names
	[ -r "$hdr" ] && [ "$(uname -m)" = x86_64 ] || skip "needs x86_64 and $hdr"
	# every syscall numbered below clone3 (435) except keyctl
	names=$(awk '$1 == "#define" && $2 ~ /^__NR_/ && $3 + 0 < 435 {sub("__NR_", "", $2); print $2}' "$hdr" |
		grep -vx keyctl | jq -R . | jq -s .)
	update_config ".linux.seccomp = {\"defaultAction\": \"SCMP_ACT_ERRNO\", \"architectures\": [\"SCMP_ARCH_X86_64\"],
		\"syscalls\": [{\"names\": $names, \"action\": \"SCMP_ACT_ALLOW\"}]}"
	set_args sh -c 'for s in clone3 openat2 keyctl; do echo "$s=$(try-syscall $s)"; done'
	run rt run --bundle "$BUNDLE" c1
	[ "$status" -eq 0 ] || fail "$output"
	grep -qx 'clone3=ENOSYS' <<<"$output" || fail "clone3: $output"
	grep -qx 'openat2=ENOSYS' <<<"$output" || fail "openat2: $output"
	grep -qx 'keyctl=EPERM' <<<"$output" || fail "keyctl: $output"
	# the same for exec
	update_config '.process.args = ["sleep", "100"]'
	AGENTRT_PROFILE=agent run_detached c2
	run rt exec c2 try-syscall clone3
	[ "$output" = ENOSYS ] || fail "exec clone3: $output"
}

# linux.seccomp.listenerPath (runtime spec 1.2): SCMP_ACT_NOTIFY hands the listener fd and the
# container process state to the agent (tests/helpers/seccomp-agent, which answers EXDEV).
start_seccomp_agent() { # ARGS...
	AGENT=$HELPER_DIR/seccomp-agent
	[ -x "$AGENT" ] || skip "seccomp-agent not built (make test-helpers)"
	AGENT_SOCK=$BUNDLE/agent.sock
	"$AGENT" --state "$BUNDLE/agent.state" --log "$BUNDLE/agent.log" "$@" "$AGENT_SOCK" \
		</dev/null >/dev/null 2>&1 &
	AGENT_PID=$!
	for i in $(seq 50); do [ -S "$AGENT_SOCK" ] && break; sleep 0.1; done
	[ -S "$AGENT_SOCK" ] || fail "seccomp-agent did not listen"
	update_config ".linux.seccomp = {\"defaultAction\": \"SCMP_ACT_ALLOW\",
		\"listenerPath\": \"$AGENT_SOCK\", \"listenerMetadata\": \"agentrt-test-meta\",
		\"syscalls\": [{\"names\": [\"mkdir\", \"mkdirat\"], \"action\": \"SCMP_ACT_NOTIFY\"}]}"
}

stop_seccomp_agent() {
	kill "$AGENT_PID" 2>/dev/null || true
	wait "$AGENT_PID" 2>/dev/null || true
}

@test "seccomp: SCMP_ACT_NOTIFY sends the listener fd and the state to listenerPath (run, exec)" {
	known_broken '^runc' "its exec with a listener times out against this agent (not investigated)"
	start_seccomp_agent --conns 2
	set_cmd 'mkdir /notified 2>&1; echo "mkdir=$?"; exec sleep 100'
	run_detached c1
	[ "$status" -eq 0 ] || { stop_seccomp_agent; fail "run -d: $output"; }
	wait_for_file "$BUNDLE/c1.out"
	run rt exec c1 sh -c 'mkdir /from-exec 2>&1; echo "exec-mkdir=$?"'
	stop_seccomp_agent
	grep -q 'mkdir=1' "$BUNDLE/c1.out" || fail "init: $(cat "$BUNDLE/c1.out")"
	grep -qi 'cross-device' "$BUNDLE/c1.out" || fail "not the agent's answer: $(cat "$BUNDLE/c1.out")"
	grep -q 'exec-mkdir=1' <<<"$output" && grep -qi 'cross-device' <<<"$output" || fail "exec: $output"
	[ ! -e "$ROOTFS/notified" ] && [ ! -e "$ROOTFS/from-exec" ]
	# one document per connection, one fd, the connection closed after it
	[ "$(grep -c '^fds=1 eof=yes$' "$BUNDLE/agent.state")" -eq 2 ] || fail "$(cat "$BUNDLE/agent.state")"
	doc=$(grep '^{' "$BUNDLE/agent.state" | head -n1)
	jq -e '.fds == ["seccompFd"] and .metadata == "agentrt-test-meta" and .state.id == "c1" and
		(.pid > 0) and .state.pid == .pid and (.state.bundle | length > 0) and (.ociVersion | length > 0)' \
		<<<"$doc" >/dev/null || fail "state document: $doc"
	[ "$(jq -r .state.pid <<<"$doc")" = "$(container_pid c1)" ] || fail "pid: $doc"
	grep -qE '^nr=(83|258) ' "$BUNDLE/agent.log" || fail "agent log: $(cat "$BUNDLE/agent.log")"
}

@test "seccomp: a listenerPath nobody listens on fails create, leaving nothing" {
	update_config ".linux.seccomp = {\"defaultAction\": \"SCMP_ACT_ALLOW\",
		\"listenerPath\": \"$BUNDLE/nobody.sock\",
		\"syscalls\": [{\"names\": [\"mkdir\"], \"action\": \"SCMP_ACT_NOTIFY\"}]}"
	set_args true
	run_detached c1
	assert_clean_failure
	# runc's words, which its own suite looks for
	assert_output_contains "failed to connect with seccomp agent"
	run rt state c1
	[ "$status" -ne 0 ] || fail "container left: $output"
}

# notify-write: SCMP_ACT_NOTIFY on write (the runtime's own last writes would wait on the agent)
# or as the default action is refused at create, as runc refuses it.
@test "seccomp: notify-write: SCMP_ACT_NOTIFY for write or as the default action fails create" {
	for sc in '"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["mkdir", "write"], "action": "SCMP_ACT_NOTIFY"}]' \
		'"defaultAction": "SCMP_ACT_NOTIFY"'; do
		update_config ".linux.seccomp = {\"listenerPath\": \"$BUNDLE/nobody.sock\", $sc}"
		set_args true
		run_detached "c$RANDOM"
		assert_clean_failure
		assert_output_contains "SCMP_ACT_NOTIFY cannot be used"
	done
}

@test "seccomp: when the agent is gone, notified syscalls fail with ENOSYS" {
	known_broken '^runc' "its run fails when the agent exits first (not investigated)"
	start_seccomp_agent
	set_cmd 'echo up > /up; i=0; while [ ! -e /gone ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
		mkdir /late 2>&1; echo "mkdir=$?"; exec sleep 100'
	run_detached c1
	[ "$status" -eq 0 ] || { stop_seccomp_agent; fail "run -d: $output"; }
	wait_for_file "$ROOTFS/up" 30
	grep -q '^fds=1' "$BUNDLE/agent.state" || fail "the agent got no fd: $(cat "$BUNDLE/agent.state")"
	stop_seccomp_agent
	touch "$ROOTFS/gone"
	for i in $(seq 100); do grep -q mkdir= "$BUNDLE/c1.out" 2>/dev/null && break; sleep 0.1; done
	out=$(cat "$BUNDLE/c1.out")
	grep -q 'mkdir=1' <<<"$out" && grep -qi 'not implemented' <<<"$out" || fail "$out"
	[ ! -e "$ROOTFS/late" ]
}

@test "seccomp: argument filters" {
	# personality(0xffffffff) queries; deny only personality(PER_LINUX32 = 8).
	update_config '.linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW",
		"syscalls": [{"names": ["personality"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1,
			"args": [{"index": 0, "value": 8, "op": "SCMP_CMP_EQ"}]}]}'
	set_cmd 'linux32 uname -m; echo rc=$?; uname -m'
	run rt run --bundle "$BUNDLE" c1
	grep -q 'rc=[1-9]' <<<"$output" || fail "linux32 was allowed: $output"
	[ "$(tail -n1 <<<"$output")" = x86_64 ]
}

@test "personality LINUX32, for the init and an exec'd process" {
	agentrt_only "runc 1.1 ignores linux.personality"
	update_config '.linux.personality = {"domain": "LINUX32"}'
	set_args uname -m
	run rt run --bundle "$BUNDLE" c1
	[ "$status" -eq 0 ] || fail "$output"
	[ "$output" = i686 ] || fail "uname -m: $output"
	# an exec'd process gets the container's personality too (as runc)
	set_args sleep 1000
	AGENTRT_PROFILE=agent run_detached c2
	[ "$status" -eq 0 ] || fail "run -d: $output"
	run rt exec c2 uname -m
	[ "$status" -eq 0 ] && [ "$output" = i686 ] || fail "exec: uname -m: $output"
	[ "$(cat "/proc/$(container_pid c2)/personality")" = 00000008 ] || fail "init: $(cat "/proc/$(container_pid c2)/personality")"
}

# An engine that ignores signals (conmon ignores SIGPIPE) passed them on: agentrt reset only
# the mask, so the program started with SIGPIPE ignored and a shell could not trap it
# (podman's own "podman kill - test signal handling" timed out on signal 13). runc and crun
# start the program, an exec'd one too, with every signal at its default action.
@test "engine-ignored-signals: the program and an exec'd one start with default dispositions" {
	known_broken '^runc' "an ignored SIGRTMIN (34) stays ignored in the program"
	# glibc's own real-time signals (32, 33) too: its sigaction() refuses them, and in CI the
	# runtime's caller had them ignored
	ignoring() { perl -e 'require "syscall.ph"; my $z = "\0" x 64; my $i = pack("Q4", 1, 0, 0, 0);
		syscall(&SYS_rt_sigaction, $_, $i, 0, 8) for 32, 33;
		$SIG{$_} = "IGNORE" for qw(PIPE HUP INT USR1 TERM XFSZ RTMIN); exec @ARGV or die "exec: $!"' -- "$@"; }
	set_args sh -c 'grep SigIgn /proc/self/status; trap "echo got PIPE" PIPE; kill -PIPE $$; echo after'
	run ignoring timeout --kill-after=5 "$RT_TIMEOUT" "$AGENTRT" --root "$TEST_ROOT" run --bundle "$BUNDLE" c1
	[ "$status" -eq 0 ] || fail "$output"
	[ "$output" = "$(printf 'SigIgn:\t0000000000000000\ngot PIPE\nafter')" ] || fail "$output"
	set_args sleep 1000
	status=0
	ignoring timeout --kill-after=5 "$RT_TIMEOUT" "$AGENTRT" --root "$TEST_ROOT" run -d \
		--bundle "$BUNDLE" c2 </dev/null >"$BUNDLE/c2.out" 2>"$BUNDLE/c2.err" || status=$?
	[ "$status" -eq 0 ] || fail "run -d: $(cat "$BUNDLE/c2.err")"
	grep -q '^SigIgn:[[:space:]]*0*$' "/proc/$(container_pid c2)/status" || fail "init: $(grep SigIgn "/proc/$(container_pid c2)/status")"
	run ignoring timeout --kill-after=5 "$RT_TIMEOUT" "$AGENTRT" --root "$TEST_ROOT" exec c2 grep SigIgn /proc/self/status
	[ "$status" -eq 0 ] || fail "$output"
	[ "$output" = "$(printf 'SigIgn:\t0000000000000000')" ] || fail "exec: $output"
	# the control: the wrapper does ignore them
	run ignoring grep SigIgn /proc/self/status
	[ "$output" != "$(printf 'SigIgn:\t0000000000000000')" ] || fail "the wrapper ignored nothing: $output"
}
