#!/usr/bin/env bats
# sandbox-home.bats - what of the user's home `agentrt sandbox` binds in: the profile's
# sandbox.home and --dotfile, never what the home's deny list names (profile/home.c), tried the
# way an attacker would (symlinks to keys, `..`, other cases, hard links, a directory holding a
# credential, a path swapped while the sandbox starts).  As an unprivileged user (uid 65534,
# home made here) unless a test says root.  What is checked is what the program inside can read.

load helpers

SBX_UID=65534

setup() {
	requires root setpriv
	agentrt_only "agentrt sandbox"
	SBX=$(mktemp -d /tmp/agentrt-test-sbxh.XXXXXX)
	H=$SBX/home
	mkdir -p "$H/.ssh" "$H/.aws" "$H/.config/git" "$H/dots" "$SBX/ws" "$SBX/run"
	echo "SECRET-KEY-ssh" >"$H/.ssh/id_rsa"
	echo "SECRET-KEY-aws" >"$H/.aws/credentials"
	echo "SECRET-KEY-hist" >"$H/.bash_history"
	printf '[user]\n\tname = Home Test\n' >"$H/dots/gitconfig"
	echo "ignored-pattern" >"$H/.config/git/ignore"
	echo "SECRET-KEY-gitcred" >"$H/.config/git/credentials"
	echo "x" >"$SBX/ws/file"
	chown -R "$SBX_UID:$SBX_UID" "$SBX"
	chmod 700 "$H" "$SBX/run"
	chmod 755 "$SBX"
	SBX_ROOT=$TEST_ROOT-sbxh
}

teardown() {
	local m
	[ -n "${SWAP_PID:-}" ] && { kill "$SWAP_PID" 2>/dev/null; wait "$SWAP_PID" 2>/dev/null || true; }
	if [ -n "${SBX:-}" ]; then
		m=$(mounts_below "$SBX")
		[ -z "$m" ] || echo "teardown: mounts left: $m" >&2
		[ -z "$m" ] && rm -rf --one-file-system "$SBX"
	fi
	[ -n "${SBX_ROOT:-}" ] && rm -rf --one-file-system "$SBX_ROOT" "$SBX_ROOT-sandbox"
	[ -z "${m:-}" ]
}

as_user() {
	(cd "${SBX_CWD:-$SBX/ws}" && timeout --kill-after=5 "$RT_TIMEOUT" setpriv --reuid "$SBX_UID" \
		--regid "$SBX_UID" --clear-groups env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		HOME="$H" XDG_RUNTIME_DIR="$SBX/run" XDG_DATA_HOME="$H/.local/share" TERM=dumb "$@")
}

sbx() {
	as_user "$AGENTRT" sandbox "$@"
}

# The files the sandbox sees below the home and every secret it can read, as one line each.
SHOW='cd "$HOME" && find . -type f -o -type l | sort; cat .gitconfig 2>/dev/null;
	grep -rh SECRET-KEY . 2>/dev/null; true'

sbx_out() {
	as_user "$AGENTRT" sandbox "$@" 2>/dev/null
}

as_owner() {
	setpriv --reuid "$SBX_UID" --regid "$SBX_UID" --clear-groups "$@"
}

@test "sandbox home: the profile's list is copied in, writes stay in the sandbox, credentials in it are not" {
	as_owner cp "$H/dots/gitconfig" "$H/.gitconfig"
	run sbx --name hl1 -- sh -c "$SHOW; echo x >>\"\$HOME/.gitconfig\" 2>/dev/null; echo w=\$?"
	[ "$status" -eq 0 ]
	[[ "$output" == *"./.gitconfig"* ]]
	[[ "$output" == *"./.config/git/ignore"* ]]
	[[ "$output" == *"name = Home Test"* ]]
	# the sandbox writes its own copy; the host's file is as it was
	[[ "$output" == *"w=0"* ]]
	cmp "$H/dots/gitconfig" "$H/.gitconfig"
	[[ "$output" != *SECRET-KEY* ]]
	# the denied file of a listed directory is named on stderr, once
	[[ "$output" == *"~/.config/git/credentials is not bound: on the home's deny list"* ]]
	# control: the host files are there and readable by the user
	as_owner cat "$H/.config/git/credentials" | grep -q SECRET-KEY-gitcred
}

@test "sandbox-home-git-config: git config --global writes the sandbox's copy of ~/.gitconfig; the host's file is unchanged" {
	# An honest agent's first step (user.name, safe.directory, init.defaultBranch) wrote
	# .gitconfig.lock and renamed it over ~/.gitconfig: a bind mount there made the rename
	# EBUSY ("could not write config file ...: Device or resource busy") and git failed.
	requires git
	as_owner cp "$H/dots/gitconfig" "$H/.gitconfig"
	before=$(sha256sum <"$H/.gitconfig")
	run sbx --name hgc -- sh -c 'git config --global user.email agent@example.invalid &&
		git config --global --add safe.directory "*" && echo x >>"$HOME/.config/git/ignore" &&
		git config --global --get user.name && git config --global --get user.email &&
		git config --global --get safe.directory && tail -n1 "$HOME/.config/git/ignore" &&
		grep -c . "$HOME/.config/git/ignore" && grep -rh SECRET-KEY "$HOME" 2>/dev/null; true'
	[ "$status" -eq 0 ] || { echo "$output" >&2; return 1; }
	[[ "$output" == *"Home Test"* ]] || { echo "$output" >&2; return 1; }
	[[ "$output" == *"agent@example.invalid"* ]] || { echo "$output" >&2; return 1; }
	[[ "$output" != *"Device or resource busy"* ]]
	[[ "$output" != *SECRET-KEY* ]]
	# what the sandbox wrote stays in it: the host's files are as they were
	[ "$(sha256sum <"$H/.gitconfig")" = "$before" ]
	[ "$(cat "$H/.config/git/ignore")" = ignored-pattern ]
	[ ! -e "$H/.gitconfig.lock" ]
}

@test "sandbox home: a profile file's sandbox.home is what is bound; one listing .ssh is refused" {
	echo "tool-settings" >"$H/.toolrc"
	chown "$SBX_UID:$SBX_UID" "$H/.toolrc"
	printf '{"sandbox": {"home": [".toolrc"]}}\n' >"$SBX/p.json"
	chmod 644 "$SBX/p.json"
	run sbx --name hp1 --profile "$SBX/p.json" -- sh -c "$SHOW"
	[ "$status" -eq 0 ]
	[[ "$output" == *"./.toolrc"* ]]
	[[ "$output" != *".config/git"* ]]
	printf '{"sandbox": {"home": [".gitconfig", ".SSH/config"]}}\n' >"$SBX/bad.json"
	chmod 644 "$SBX/bad.json"
	run sbx --name hp2 --profile "$SBX/bad.json" -- true
	[ "$status" -eq 1 ]
	[[ "$output" == *"sandbox.home[1]"*"deny list"* ]]
	[ "${#lines[@]}" -eq 1 ]
}

@test "sandbox home: --dotfile adds a file; a denied one is refused with one line" {
	echo "vim settings" >"$H/.vimrc"
	chown "$SBX_UID:$SBX_UID" "$H/.vimrc"
	run sbx --name hd1 --dotfile .vimrc -- cat "$H/.vimrc"
	[ "$status" -eq 0 ]
	[[ "$output" == *"vim settings"* ]]
	local d
	for d in .ssh/id_rsa .ssh .aws/credentials .bash_history .SSH/id_rsa .Ssh ./.ssh//id_rsa \
		.config/git/credentials .mozilla .config/google-chrome .netrc .npmrc; do
		run sbx --name hd2 --dotfile "$d" -- true
		[ "$status" -eq 1 ] || { echo "accepted: $d"; return 1; }
		[[ "$output" == *"--dotfile"*"deny list"* ]] || { echo "$d: $output"; return 1; }
		[ "${#lines[@]}" -eq 1 ]
	done
	for d in ../x a/../.ssh /etc/passwd ""; do
		run sbx --name hd3 --dotfile "$d" -- true
		[ "$status" -eq 1 ] || { echo "accepted: $d"; return 1; }
		[[ "$output" == *"--dotfile"* ]]
	done
	[ ! -d "$SBX_ROOT-sandbox/hd2" ]
}

@test "sandbox home: a symlink to a key is not followed into it (.gitconfig -> .ssh/id_rsa)" {
	as_owner ln -s .ssh/id_rsa "$H/.gitconfig"
	as_owner ln -s "$H/.aws/credentials" "$H/.editorconfig"
	run sbx --name hs1 -- sh -c "$SHOW"
	[ "$status" -eq 0 ]
	[[ "$output" != *SECRET-KEY* ]]
	[[ "$output" == *"~/.gitconfig is not bound: it is ~/.ssh/id_rsa, on the home's deny list"* ]]
	run sbx --name hs2 --dotfile .gitconfig -- true
	[ "$status" -eq 1 ]
	[[ "$output" == *"--dotfile \`.gitconfig\`: it is ~/.ssh/id_rsa"* ]]
	# a symlinked directory on the way: .config/git -> ../.ssh
	rm -rf "$H/.config/git"
	as_owner ln -s ../.ssh "$H/.config/git"
	rm "$H/.gitconfig" "$H/.editorconfig"
	run sbx --name hs3 -- sh -c "$SHOW"
	[[ "$output" != *SECRET-KEY* ]]
	# control: a symlink to a harmless file (a dotfiles repository) is bound, at the link's name
	rm "$H/.config/git"
	as_owner ln -s dots/gitconfig "$H/.gitconfig"
	run sbx --name hs4 -- sh -c "$SHOW"
	[[ "$output" == *"name = Home Test"* ]]
	[[ "$output" != *"./dots/"* ]]
}

@test "sandbox home: a symlink out of the home into another hidden directory is refused" {
	mkdir -p "$SBX/other"
	echo "SECRET-KEY-other" >"$SBX/other/k"
	# a path in /root, which the sandbox hides (root's own key, as far as the user can name it)
	as_owner ln -s /root/.ssh/id_rsa "$H/.inputrc"
	run sbx --name ho1 --dotfile .inputrc -- true
	[ "$status" -eq 0 ] || [[ "$output" == *"--dotfile"* ]]
	[[ "$output" != *SECRET-KEY* ]]
	# as root, whose home is elsewhere: a link into /run (hidden, as /root and /home are) is
	# refused, not followed
	mkdir -p /run/agentrt-sbxh-$$
	echo "SECRET-KEY-run" >/run/agentrt-sbxh-$$/k
	ln -s /run/agentrt-sbxh-$$/k "$H/.runlink"
	run env HOME="$H" "$AGENTRT" --root "$SBX_ROOT" sandbox --name ho2 --workspace "$SBX/ws" \
		--dotfile .runlink -- cat "$H/.runlink"
	rm -rf /run/agentrt-sbxh-$$
	[ "$status" -eq 1 ]
	[[ "$output" == *"in /run, which the sandbox hides"* ]]
	[[ "$output" != *SECRET-KEY* ]]
}

@test "sandbox home: a hard link to a key is not bound" {
	as_owner ln "$H/.ssh/id_rsa" "$H/.gitconfig"
	run sbx --name hh1 -- sh -c "$SHOW"
	[ "$status" -eq 0 ]
	[[ "$output" != *SECRET-KEY* ]]
	[[ "$output" == *"~/.gitconfig is not bound: it has 2 hard links"* ]]
	run sbx --name hh2 --dotfile .gitconfig -- true
	[ "$status" -eq 1 ]
	[[ "$output" == *"hard links"* ]]
	# and inside a listed directory
	rm "$H/.gitconfig"
	as_owner ln "$H/.aws/credentials" "$H/.config/git/config"
	run sbx --name hh3 -- sh -c "$SHOW"
	[[ "$output" != *SECRET-KEY* ]]
	[[ "$output" == *"./.config/git/ignore"* ]]
}

@test "sandbox home: a directory is bound file by file, without its credentials" {
	mkdir -p "$H/.config/tool/sub" "$H/.config/tool/Credentials"
	echo "setting=1" >"$H/.config/tool/settings"
	echo "deep=1" >"$H/.config/tool/sub/more"
	echo "SECRET-KEY-tool" >"$H/.config/tool/credentials.json"
	echo "SECRET-KEY-tooldir" >"$H/.config/tool/Credentials/x"
	echo "SECRET-KEY-toolkey" >"$H/.config/tool/id_ed25519"
	ln -s ../../.ssh/id_rsa "$H/.config/tool/key-link"
	ln -s "$H/.aws" "$H/.config/tool/aws-link"
	mkfifo "$H/.config/tool/fifo"
	chown -R "$SBX_UID:$SBX_UID" "$H/.config/tool"
	run sbx --name hdir1 --dotfile .config/tool -- sh -c "$SHOW"
	[ "$status" -eq 0 ]
	[[ "$output" == *"./.config/tool/settings"* ]]
	[[ "$output" == *"./.config/tool/sub/more"* ]]
	[[ "$output" != *SECRET-KEY* ]]
	[[ "$output" == *"~/.config/tool/key-link is not bound: it is ~/.ssh/id_rsa"* ]]
	run sbx_out --name hdir1b --dotfile .config/tool -- ls -A "$H/.config/tool"
	[ "$(echo "$output" | sort | tr '\n' ' ')" = "settings sub " ]
	# `--dotfile .config` takes what is harmless in it, never gcloud's credentials
	mkdir -p "$H/.config/gcloud"
	echo "SECRET-KEY-gcloud" >"$H/.config/gcloud/application_default_credentials.json"
	chown -R "$SBX_UID:$SBX_UID" "$H/.config/gcloud"
	run sbx --name hdir2 --dotfile .config -- sh -c "$SHOW"
	[ "$status" -eq 0 ]
	[[ "$output" == *"./.config/tool/settings"* ]]
	[[ "$output" != *SECRET-KEY* ]]
	[[ "$output" != *gcloud/* ]]
}

@test "sandbox home: the workspace cannot be the home, above it, or a denied directory" {
	SBX_CWD=$H run sbx --name hw1 -- true
	[ "$status" -eq 1 ]
	[[ "$output" == *"workspace \`$H\` is the home"* ]]
	run sbx --name hw2 --workspace "$SBX" -- true
	[ "$status" -eq 1 ]
	[[ "$output" == *"holds the home"* ]]
	run sbx --name hw3 --workspace "$H/.ssh" -- true
	[ "$status" -eq 1 ]
	[[ "$output" == *"deny list"* ]]
	# control: a project below the home is fine
	as_owner mkdir "$H/proj"
	run sbx --name hw4 --workspace "$H/proj" -- sh -c "pwd; $SHOW"
	[ "$status" -eq 0 ]
	[[ "$output" == *"$H/proj"* ]]
	[[ "$output" != *SECRET-KEY* ]]
}

@test "sandbox home: a dotfile swapped for a link to a key while sandboxes start never shows the key" {
	[ -x /usr/bin/python3 ] || skip "no /usr/bin/python3"
	as_owner cp "$H/dots/gitconfig" "$H/dots/real"
	as_owner ln -s .ssh/id_rsa "$H/dots/evil"
	# the swapper: ~/.gitconfig flips between a good file and a symlink to the key, atomically,
	# as fast as it can until the kill below (at most 300 s: twelve sandbox runs on a loaded
	# machine outlasted 40 s and the kill found no process)
	# (setpriv execs python: $! is the swapper itself, so the kill below ends it)
	setpriv --reuid "$SBX_UID" --regid "$SBX_UID" --clear-groups /usr/bin/python3 -c 'import os, sys, time
h = sys.argv[1]; end = time.time() + 300
os.symlink("dots/gitconfig", h + "/.gc-good"); os.symlink(".ssh/id_rsa", h + "/.gc-evil")
while time.time() < end:
    for n in (".gc-good", ".gc-evil"):
        os.link(h + "/" + n, h + "/.gc-tmp", follow_symlinks=False)
        os.replace(h + "/.gc-tmp", h + "/.gitconfig")' "$H" &
	SWAP_PID=$!
	local i bound=0 refused=0 failed=0 seen
	for i in $(seq 12); do
		run sbx --name hr$i -- sh -c 'cat "$HOME/.gitconfig" 2>/dev/null; true'
		[[ "$output" != *SECRET-KEY* ]] || { echo "run $i: $output"; return 1; }
		if [[ "$output" == *"name = Home Test"* ]]; then bound=$((bound + 1))
		elif [[ "$output" == *"not bound"* ]]; then refused=$((refused + 1))
		else failed=$((failed + 1)); fi
	done
	# control: a reader that goes by the path does get the key now and then
	seen=$(for i in $(seq 300); do as_owner cat "$H/.gitconfig" 2>/dev/null; done | grep -c SECRET-KEY || true)
	kill "$SWAP_PID" 2>/dev/null
	wait "$SWAP_PID" 2>/dev/null || true
	SWAP_PID=
	echo "# bound $bound, refused $refused, failed $failed of 12; the path gave the key $seen/300 times" >&3
	[ "$seen" -gt 0 ]
	[ "$bound" -gt 0 ] || [ "$refused" -gt 0 ]
}

@test "sandbox home: a home that is itself a symlink gets the same checks" {
	as_owner ln -s .ssh/id_rsa "$H/.gitconfig"
	ln -s home "$SBX/linkhome"
	run bash -c "cd '$SBX/ws' && timeout 60 setpriv --reuid $SBX_UID --regid $SBX_UID --clear-groups \
		env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME='$SBX/linkhome' XDG_RUNTIME_DIR='$SBX/run' \
		XDG_DATA_HOME='$H/.local/share' '$AGENTRT' sandbox --name hl2 -- sh -c 'cat \$HOME/.gitconfig; true'"
	[ "$status" -eq 0 ]
	[[ "$output" != *SECRET-KEY* ]]
	[[ "$output" == *"~/.gitconfig is not bound: it is ~/.ssh/id_rsa"* ]]
}

@test "sandbox home: links to the host's /tmp, /proc or /dev are not bound" {
	echo "SECRET-KEY-tmp" >"$SBX/tmpfile"
	chown "$SBX_UID" "$SBX/tmpfile"
	local t
	t=$(mktemp /tmp/agentrt-sbxh-XXXXXX)
	echo "SECRET-KEY-hosttmp" >"$t"
	chmod 644 "$t"
	as_owner ln -s "$t" "$H/.gitconfig"
	as_owner ln -s /proc/self/environ "$H/.inputrc"
	as_owner ln -s /dev/zero "$H/.editorconfig"
	run env SECRETVAR=SECRET-KEY-env setpriv --reuid "$SBX_UID" --regid "$SBX_UID" --clear-groups \
		env HOME="$H" XDG_RUNTIME_DIR="$SBX/run" XDG_DATA_HOME="$H/.local/share" \
		sh -c "cd '$SBX/ws' && '$AGENTRT' sandbox --name ht1 -- sh -c 'cat \$HOME/.gitconfig \$HOME/.inputrc 2>/dev/null | tr \"\\\\0\" \"\\\\n\" | grep SECRET-KEY-hosttmp; ls -A \$HOME'"
	rm -f "$t"
	[[ "$output" != *SECRET-KEY-hosttmp* ]]
	[[ "$output" == *"~/.gitconfig is not bound: it is /tmp/agentrt-sbxh-"*"private one"* ]]
	[[ "$output" == *"~/.inputrc is not bound: it is /proc/"* ]]
}

@test "home-symlink-workspace: under a HOME that is a symlink, the workspace cannot be the home or its .ssh by the resolved name" {
	ln -s home "$SBX/linkhome"
	# the data directory outside the home: nothing else refuses the home as a workspace
	for cwd in "$H" "$H/.ssh"; do
		run bash -c "cd '$cwd' && timeout 60 setpriv --reuid $SBX_UID --regid $SBX_UID --clear-groups \
			env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME='$SBX/linkhome' XDG_RUNTIME_DIR='$SBX/run' \
			XDG_DATA_HOME='$SBX/run/data' '$AGENTRT' sandbox --name hs -- sh -c 'cat id_rsa .ssh/id_rsa 2>/dev/null; true'"
		[[ "$output" != *SECRET-KEY* ]] || fail "$cwd: the key was shown: $output"
		[ "$status" -eq 1 ] && [[ "$output" == *"is the home"* || "$output" == *"deny list"* ]] || fail "$cwd: $output"
	done
}
