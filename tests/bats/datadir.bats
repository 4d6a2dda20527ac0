#!/usr/bin/env bats
# datadir.bats - agent work outlives its engine's runtime state: workspaces and audit trails
# live in the data directory (datadir/datadir.h), not under --root, which engines put on a
# tmpfs.  Found by id or prefix without --root, one store per engine root, host-wide
# retention with a record of every removal, a clear refusal when the disk is full, and the
# migration of data kept under --root by an older agentrt.
#
# Each test file has its own AGENTRT_DATA_DIR and AGENTRT_CONFIG (helpers.bash); the
# engine-like roots here are tmpfs mounts made in private mount namespaces (unshare -m),
# never in the host's.

load helpers

setup() {
	setup_bundle
	agentrt_only "the data directory is agentrt's"
	requires jq
	HOSTDIR=$BUNDLE/host
	mkdir -p "$HOSTDIR/src" "$ROOTFS/workspace"
	echo hello >"$HOSTDIR/a.txt"
	echo keep >"$HOSTDIR/b.txt"
	echo code >"$HOSTDIR/src/main.c"
	update_config ".mounts += [{\"destination\": \"/workspace\", \"type\": \"bind\",
		\"source\": \"$HOSTDIR\", \"options\": [\"rbind\", \"rw\"]}]"
	EXTRA_ROOTS=()
	AGENT_WORK='echo new >/workspace/new.txt; echo changed >/workspace/a.txt; rm /workspace/b.txt'
}

teardown() {
	local r id
	for r in "${EXTRA_ROOTS[@]}"; do
		for id in $("$AGENTRT" --root "$r" list -q 2>/dev/null); do
			"$AGENTRT" --root "$r" delete --force "$id" >/dev/null 2>&1
		done
		rm -rf --one-file-system "$r"
	done
	teardown_bundle
	local rc=$?
	# every test starts from an empty data directory (retention counts all of it)
	remove_data_dir
	return $rc
}

# ar ARGS...: agentrt with the agent profile and no --root (the data dir from the env).
ar() {
	timeout --kill-after=5 "$RT_TIMEOUT" "$AGENTRT" --profile agent "$@"
}

# store_of ROOT: the data dir's store of an engine root.
store_of() {
	echo "$AGENTRT_DATA_DIR/roots/$(printf '%s' "${1#/}" | tr / +)"
}

# kinds JSON-LINES: the sorted "kind:path" of a `workspace diff --format json`.
kinds() {
	jq -r '.changes[] | "\(.kind):\(.path)"' <<<"$1" | sort | tr '\n' ' '
}

@test "datadir: work under a tmpfs engine root survives its loss; diff, commit, audit verify without --root" {
	local R=/run/agentrt-test-$$-engine ID=ddreboot$$-7f3a9c1e5b2d4
	EXTRA_ROOTS+=("$R")
	mkdir -p "$R"
	set_cmd "$AGENT_WORK"
	# the engine: its --root on a tmpfs of its own, `run` (deleted at exit, as docker run --rm)
	run unshare -m --propagation private bash -c "
		mount -t tmpfs -o size=16m tmpfs '$R' || exit 90
		findmnt -n -o FSTYPE -T '$R'
		'$AGENTRT' --root '$R' --profile agent run --bundle '$BUNDLE' '$ID' </dev/null || exit 91
		echo left: \$(ls -A '$R')"
	[ "$status" -eq 0 ] || fail "engine: $output"
	[ "$(head -1 <<<"$output")" = tmpfs ] || fail "not a tmpfs root: $output"
	[ "$(tail -1 <<<"$output")" = "left:" ] || fail "the tmpfs root held data: $output"
	# the reboot: the tmpfs (and the mount namespace) are gone, the root is empty
	! grep -qF " $R " /proc/self/mountinfo
	[ -z "$(ls -A "$R")" ]
	[ -f "$(store_of "$R")/.workspaces/$ID/meta.json" ]
	[ -f "$(store_of "$R")/.audit/$ID/head" ]
	[ "$(cat "$(store_of "$R")/root")" = "$R" ]
	# the host dir is untouched until commit
	[ "$(cat "$HOSTDIR/a.txt")" = hello ] && [ -f "$HOSTDIR/b.txt" ] && [ ! -e "$HOSTDIR/new.txt" ]
	# found by a prefix of the id, as Docker prints ids, with no --root
	ar workspace "${ID:0:12}" diff --format json >"$BUNDLE/diff.json" 2>"$BUNDLE/diff.err" ||
		fail "diff: $(cat "$BUNDLE/diff.err")"
	[ "$(kinds "$(cat "$BUNDLE/diff.json")")" = "added:new.txt deleted:b.txt modified:a.txt " ] ||
		fail "diff: $(cat "$BUNDLE/diff.json")"
	grep -qF "engine root \`$R\`" "$BUNDLE/diff.err" || fail "no engine root named: $(cat "$BUNDLE/diff.err")"
	run ar audit verify "${ID:0:12}"
	[ "$status" -eq 0 ] || fail "verify: $output"
	assert_output_contains "audit \`$ID\`: ok"
	run ar audit --format json "${ID:0:12}"
	[ "$status" -eq 0 ]
	[ "$(grep '^{' <<<"$output" | jq -r .kind | grep -E '^(create|start|exit|delete)$' | tr '\n' ' ')" = "create start exit delete " ] ||
		fail "lifecycle: $output"
	run ar workspace "${ID:0:12}" commit
	[ "$status" -eq 0 ] || fail "commit: $output"
	[ "$(cat "$HOSTDIR/a.txt")" = changed ] && [ "$(cat "$HOSTDIR/new.txt")" = new ] && [ ! -e "$HOSTDIR/b.txt" ]
	run ar workspace "$ID" purge
	[ "$status" -eq 0 ]
	[ ! -e "$(store_of "$R")/.workspaces/$ID" ]
}

@test "datadir: the same id under two engine roots never collides and is disambiguated" {
	local R1=/run/agentrt-test-$$-e1 R2=/run/agentrt-test-$$-e2 r
	EXTRA_ROOTS+=("$R1" "$R2")
	set_cmd 'echo from-$HOSTNAME >/workspace/who.txt'
	update_config '.hostname = "one"'
	"$AGENTRT" --root "$R1" --profile agent run --bundle "$BUNDLE" same-id </dev/null >/dev/null
	update_config '.hostname = "two"'
	"$AGENTRT" --root "$R2" --profile agent run --bundle "$BUNDLE" same-id </dev/null >/dev/null
	# two stores, each with its own workspace and trail
	# (read through review: the upper layer is in the workspace's image)
	"$AGENTRT" --root "$R1" workspace same-id diff --patch | grep -qx '+from-one'
	"$AGENTRT" --root "$R2" workspace same-id diff --patch | grep -qx '+from-two'
	[ -f "$(store_of "$R1")/.workspaces/same-id/upper.img" ] && [ -f "$(store_of "$R2")/.workspaces/same-id/upper.img" ]
	for r in "$R1" "$R2"; do [ -f "$(store_of "$r")/.audit/same-id/head" ]; done
	# without --root: an error listing both candidates with their roots
	for cmd in "workspace same-id diff" "workspace same diff" "audit verify same-id"; do
		run ar $cmd
		assert_clean_failure
		assert_output_contains "ambiguous"
		assert_output_contains "engine root \`$R1\`"
		assert_output_contains "engine root \`$R2\`"
	done
	# with --root: that engine's
	run "$AGENTRT" --root "$R2" workspace same-id diff --format json
	[ "$status" -eq 0 ]
	[ "$(kinds "$output")" = "added:who.txt " ]
	run "$AGENTRT" --root "$R1" workspace same-id commit
	[ "$status" -eq 0 ]
	[ "$(cat "$HOSTDIR/who.txt")" = from-one ]
	run "$AGENTRT" --root "$R1" audit verify same-id
	[ "$status" -eq 0 ]
	# list shows both, with the root each came from
	run ar workspace list --format json
	[ "$status" -eq 0 ]
	[ "$(jq -r '[.[] | select(.id == "same-id") | .root] | sort | join(" ")' <<<"$output")" = "$R1 $R2" ] ||
		fail "list: $output"
	run ar workspace list
	assert_output_contains "ENGINE ROOT"
	assert_output_contains "$R2"
	run ar audit list --format json
	[ "$status" -eq 0 ]
	[ "$(jq -r '[.[] | select(.id == "same-id") | "\(.root):\(.container)"] | sort | join(" ")' <<<"$output")" = "$R1:deleted $R2:deleted" ] ||
		fail "audit list: $output"
	run "$AGENTRT" --root "$R1" audit list
	assert_output_contains "$R1"
	! grep -qF "$R2" <<<"$output" || fail "--root lists another root: $output"
	# a prefix that one id of one root extends is not ambiguous; none at all is an error
	"$AGENTRT" --root "$R1" workspace same-other prepare --lower "$HOSTDIR" --dest /workspace >/dev/null
	run ar workspace same-o diff
	[ "$status" -eq 0 ] || fail "prefix: $output"
	run ar workspace nothing-like-it diff
	assert_clean_failure
	assert_output_contains "does not exist"
}

@test "datadir: host-wide retention removes the oldest unused workspace at create and records it" {
	printf '%s\n' '# test host config' 'workspaces.max-total-size = 96k' 'sweep-interval = 0' >"$AGENTRT_CONFIG"
	local id s=$TEST_STORE/.workspaces
	for id in old-1 old-2; do
		rt workspace "$id" prepare --lower "$HOSTDIR" --dest /workspace >/dev/null
		head -c 40960 /dev/urandom >"$s/$id/upper/big.bin"
		rm -f "$s/$id/mounted"
	done
	touch -d '3 hours ago' "$s/old-1/meta.json"
	touch -d '2 hours ago' "$s/old-2/meta.json"
	# a running container whose workspace is the oldest and over the cap alone: in use, kept
	set_cmd 'head -c 102400 /dev/zero >/workspace/live.bin; sleep 100'
	AGENTRT_PROFILE=agent create_container live
	[ "$status" -eq 0 ] || fail "create live: $output"
	rt start live
	for _ in $(seq 50); do rt workspace live diff 2>/dev/null | grep -q live.bin && break; sleep 0.1; done
	touch -d '5 hours ago' "$s/live/meta.json"
	# 80 KiB unused + 100 KiB in use > 96 KiB: the oldest unused go, the live one stays
	set_cmd 'echo small >/workspace/n.txt'
	run rt --profile agent run --bundle "$BUNDLE" fresh
	[ "$status" -eq 0 ] || fail "run: $output"
	[ ! -e "$s/old-1" ] || fail "old-1 kept"
	[ ! -e "$s/old-2" ] || fail "old-2 kept (still over the cap after old-1)"
	[ -f "$s/live/upper.img" ] && rt workspace live diff | grep -q live.bin ||
		fail "a workspace in use was removed"
	rt workspace fresh diff | grep -q n.txt
	# the creating container's trail and the data dir's retention trail record each removal
	run ar audit --format json --kind retention fresh
	[ "$status" -eq 0 ]
	[ "$(grep '^{' <<<"$output" | jq -r '"\(.removed):\(.container)"' | sort | tr '\n' ' ')" = "workspace:old-1 workspace:old-2 " ] ||
		fail "fresh's trail: $output"
	run ar audit --format json --dir "$AGENTRT_DATA_DIR" retention
	[ "$status" -eq 0 ]
	[ "$(jq -r 'select(.container == "old-1") | "\(.root) \(.bytes >= 40960)"' <<<"$output")" = "$TEST_ROOT true" ] ||
		fail "retention trail: $output"
	run ar audit verify --dir "$AGENTRT_DATA_DIR" retention
	[ "$status" -eq 0 ] || fail "verify retention trail: $output"
	rt delete --force live
}

@test "datadir: host-wide retention of audit trails removes the oldest, never a live container's" {
	printf '%s\n' 'audit.max-total-size = 1' 'sweep-interval = 0' >"$AGENTRT_CONFIG"
	update_config 'del(.mounts[] | select(.destination == "/workspace"))'
	set_args true
	rt --profile agent run --bundle "$BUNDLE" t-1 >/dev/null
	rt --profile agent run --bundle "$BUNDLE" t-2 >/dev/null
	set_args sleep 100
	AGENTRT_PROFILE=agent create_container t-live
	[ "$status" -eq 0 ] || fail "create t-live: $output"
	[ -f "$TEST_STORE/.audit/t-live/head" ]
	[ ! -e "$TEST_STORE/.audit/t-1" ] && [ ! -e "$TEST_STORE/.audit/t-2" ] || fail "old trails kept: $(ls "$TEST_STORE/.audit")"
	set_args true
	rt --profile agent run --bundle "$BUNDLE" t-3 >/dev/null
	[ -f "$TEST_STORE/.audit/t-live/head" ] || fail "the live container's trail was removed"
	run ar audit --format json --dir "$AGENTRT_DATA_DIR" retention
	[ "$(jq -r 'select(.removed == "audit") | .container' <<<"$output" | sort | tr '\n' ' ')" = "t-1 t-2 " ] ||
		fail "retention trail: $output"
	rt delete --force t-live
}

@test "datadir: purge --older-than removes old unused work for cron, --dry-run only says so" {
	local s=$TEST_STORE
	set_cmd 'echo x >/workspace/x'
	rt --profile agent run --bundle "$BUNDLE" p-old >/dev/null
	rt --profile agent run --bundle "$BUNDLE" p-new >/dev/null
	touch -d '3 days ago' "$s/.workspaces/p-old/meta.json" "$s/.audit/p-old/head"
	set_cmd 'sleep 100'
	AGENTRT_PROFILE=agent create_container p-live
	[ "$status" -eq 0 ] || fail "create: $output"
	touch -d '3 days ago' "$s/.workspaces/p-live/meta.json" "$s/.audit/p-live/head"
	run "$AGENTRT" purge --older-than 2d --dry-run
	[ "$status" -eq 0 ]
	assert_output_contains "would remove workspace p-old"
	assert_output_contains "would remove audit p-old"
	[ -d "$s/.workspaces/p-old" ] && [ -d "$s/.audit/p-old" ]
	run "$AGENTRT" purge --older-than 2d
	[ "$status" -eq 0 ] || fail "purge: $output"
	[ "$(grep -c '^removed' <<<"$output")" -eq 2 ] || fail "purge: $output"
	[ ! -e "$s/.workspaces/p-old" ] && [ ! -e "$s/.audit/p-old" ]
	[ -d "$s/.workspaces/p-new" ] && [ -d "$s/.audit/p-new" ]
	[ -d "$s/.workspaces/p-live" ] && [ -d "$s/.audit/p-live" ] || fail "a live container's data was purged"
	run "$AGENTRT" purge --older-than soon
	assert_clean_failure
	assert_output_contains "--older-than"
	rt delete --force p-live
}

@test "datadir: a full data directory makes create fail clearly, and nothing is left half-made" {
	local D=/tmp/agentrt-data-full-$$
	mkdir -p "$D"
	set_args true
	# below min-free (default 128 MiB): refused before anything is written
	run unshare -m --propagation private bash -c "
		mount -t tmpfs -o size=8m tmpfs '$D' || exit 90
		AGENTRT_DATA_DIR='$D' '$AGENTRT' --root '$TEST_ROOT' --profile agent create --bundle '$BUNDLE' full-1 </dev/null
		echo rc=\$?
		echo root: \$(ls -A '$TEST_ROOT')
		echo data: \$(ls -A '$D/roots/'*/.audit '$D/roots/'*/.workspaces 2>/dev/null)"
	rmdir "$D"
	assert_output_contains "rc=1"
	assert_output_contains "data directory \`$D\` is full"
	assert_output_contains "min-free is 128 MiB"
	grep -qx 'root:' <<<"$output" || fail "state left: $output"
	grep -qx 'data:' <<<"$output" || fail "data left: $output"
	# min-free off and the disk really full: the trail cannot be written, so create fails
	# (a container never runs without its trail)
	mkdir -p "$D"
	printf 'min-free = 0\n' >"$AGENTRT_CONFIG"
	run unshare -m --propagation private bash -c "
		mount -t tmpfs -o size=1m tmpfs '$D' || exit 90
		head -c 2m /dev/zero >'$D/fill' 2>/dev/null
		AGENTRT_DATA_DIR='$D' '$AGENTRT' --root '$TEST_ROOT' --profile agent create --bundle '$BUNDLE' full-2 </dev/null
		echo rc=\$?
		echo root: \$(ls -A '$TEST_ROOT')"
	rmdir "$D"
	assert_output_contains "rc=1"
	assert_output_contains "No space left on device"
	grep -qx 'root:' <<<"$output" || fail "state left: $output"
	[ -z "$(rt list -q)" ]
}

# The data directory fills while work waits in it (another container's trail, the disk of a
# laptop): the review must go on.  `diff` rewrote the record of the workspace's loop device
# by an atomic replace and failed on it ("write `loop`: No space left on device"), so did
# `commit`; with that fixed, commit applied every change to the host dir and then failed to
# write meta.json, exiting 1 after doing all of it.  Now diff shows the work, commit finds no
# room for its record before it applies anything (exit 1, the host dir unchanged, the
# data directory named), and with room again commits it all.
@test "datadir: datadir-full-review: on a full data directory diff shows the work and commit applies all of it or none" {
	local D=/tmp/agentrt-data-full-review-$$
	mkdir -p "$D"
	printf 'min-free = 0\n' >"$AGENTRT_CONFIG"
	set_cmd "$AGENT_WORK; head -c 300000 /dev/urandom >/workspace/big.bin"
	run unshare -m --propagation private bash -c "
		mount -t tmpfs -o size=64m tmpfs '$D' || exit 90
		export AGENTRT_DATA_DIR='$D'
		A() { timeout --kill-after=5 '$RT_TIMEOUT' '$AGENTRT' --root '$TEST_ROOT' --profile agent \"\$@\" </dev/null; }
		A run --bundle '$BUNDLE' full-review >/dev/null || exit 91
		head -c 100m /dev/zero >'$D/fill' 2>/dev/null
		[ \"\$(df --output=avail '$D' | tail -1)\" -lt 64 ] || exit 92
		echo '== diff'; A workspace full-review diff --format json; echo diff-rc=\$?
		echo '== commit'; A workspace full-review commit 2>&1; echo commit-rc=\$?
		echo host1: \$(cd '$HOSTDIR' && ls && cat a.txt)
		rm -f '$D/fill'
		echo '== diff2'; A workspace full-review diff >/dev/null; echo diff2-rc=\$?
		echo '== commit2'; A workspace full-review commit 2>&1; echo commit2-rc=\$?
		echo host2: \$(cd '$HOSTDIR' && ls && cat a.txt)
		A workspace full-review purge >/dev/null; echo purge-rc=\$?
		A delete --force full-review >/dev/null 2>&1
		umount '$D'"
	rmdir "$D"
	[ "$status" -eq 0 ] || fail "setup ($status): $output"
	grep -qx 'diff-rc=0' <<<"$output" || fail "diff: $output"
	[ "$(kinds "$(sed -n '/^== diff$/,/^diff-rc/p' <<<"$output" | grep '^{')")" = \
		"added:big.bin added:new.txt deleted:b.txt modified:a.txt " ] || fail "diff: $output"
	grep -qx 'commit-rc=1' <<<"$output" || fail "commit on a full data directory did not fail: $output"
	grep -q "data directory .* no room" <<<"$output" || fail "the error does not say why: $output"
	grep -qx 'host1: a.txt b.txt src hello' <<<"$output" ||
		fail "a failed commit changed the host dir: $(grep host1 <<<"$output")"
	grep -qx 'commit2-rc=0' <<<"$output" || fail "commit with room: $output"
	grep -qx 'host2: a.txt big.bin new.txt src changed' <<<"$output" || fail "host after commit: $(grep host2 <<<"$output")"
	grep -qx 'purge-rc=0' <<<"$output" || fail "purge: $output"
}

@test "datadir: work kept under --root by an older agentrt is found, and data migrate moves it across file systems" {
	local T=/tmp/agentrt-test-legacy-$$ ID=leg-1
	local R=$T/root
	mkdir -p "$T"
	EXTRA_ROOTS+=("$R")
	set_cmd "$AGENT_WORK"
	# the old layout (<root>/.workspaces, <root>/.audit) on a tmpfs that holds the root:
	# made there by a run with the data dir on the same tmpfs, then moved in place
	run unshare -m --propagation private bash -c "
		mount -t tmpfs -o size=256m tmpfs '$T' && mkdir '$R' || exit 90
		AGENTRT_DATA_DIR='$T/d' '$AGENTRT' --root '$R' --profile agent run --bundle '$BUNDLE' '$ID' </dev/null || exit 91
		s='$T/d/roots/'\$(printf '%s' '${R#/}' | tr / +)
		mkdir '$R/.workspaces' '$R/.audit' && mv \"\$s/.workspaces/$ID\" '$R/.workspaces/' &&
			mv \"\$s/.audit/$ID\" '$R/.audit/' || exit 92
		'$AGENTRT' --root '$R' workspace '$ID' diff --format json || exit 93
		'$AGENTRT' --root '$R' audit verify '$ID' || exit 94
		'$AGENTRT' --root '$R' data migrate || exit 95
		echo left: \$(find '$R/.workspaces' '$R/.audit' -mindepth 1)"
	rm -rf --one-file-system "$T"
	[ "$status" -eq 0 ] || fail "legacy: $output"
	[ "$(kinds "$(grep '^{' <<<"$output")")" = "added:new.txt deleted:b.txt modified:a.txt " ] ||
		fail "legacy diff: $output"
	assert_output_contains "moved workspace $ID to $(store_of "$R")"
	assert_output_contains "moved audit $ID to $(store_of "$R")"
	assert_output_contains "2 moved, 0 kept"
	grep -q '^left: *$' <<<"$output" || fail "left under the root: $output"
	# copied from the tmpfs to the data dir on another file system: whiteouts and all
	run ar workspace "$ID" diff --format json
	[ "$status" -eq 0 ] || fail "diff after migrate: $output"
	[ "$(kinds "$(grep '^{' <<<"$output")")" = "added:new.txt deleted:b.txt modified:a.txt " ] ||
		fail "diff after migrate: $output"
	run ar audit verify "$ID"
	[ "$status" -eq 0 ] || fail "verify after migrate: $output"
	run ar workspace "$ID" commit
	[ "$status" -eq 0 ]
	[ "$(cat "$HOSTDIR/a.txt")" = changed ] && [ ! -e "$HOSTDIR/b.txt" ]
}

@test "datadir: an engine restarting a container after the upgrade goes on with the work and trail kept under --root" {
	set_cmd 'echo first >/workspace/first.txt'
	rt --profile agent run --bundle "$BUNDLE" adopt-1 >/dev/null
	# the old layout: both under --root
	mkdir -p "$TEST_ROOT/.workspaces" "$TEST_ROOT/.audit"
	mv "$TEST_STORE/.workspaces/adopt-1" "$TEST_ROOT/.workspaces/"
	mv "$TEST_STORE/.audit/adopt-1" "$TEST_ROOT/.audit/"
	run rt audit verify adopt-1
	[ "$status" -eq 0 ]
	local before=${output#*ok: }
	before=${before%% records*}
	# the same id again (an engine restart): the pending change is there, the chain goes on
	set_cmd 'cat /workspace/first.txt; echo second >/workspace/second.txt'
	run rt --profile agent run --bundle "$BUNDLE" adopt-1
	[ "$status" -eq 0 ] || fail "run: $output"
	[ "$output" = first ] || fail "the kept change is not in the workspace: $output"
	[ ! -e "$TEST_ROOT/.workspaces/adopt-1" ] && [ ! -e "$TEST_ROOT/.audit/adopt-1" ]
	run ar workspace adopt-1 diff --format json
	[ "$(kinds "$(grep '^{' <<<"$output")")" = "added:first.txt added:second.txt " ] || fail "diff: $output"
	run ar audit verify adopt-1
	[ "$status" -eq 0 ] || fail "verify: $output"
	local after=${output#*ok: }
	after=${after%% records*}
	[ "$after" -gt "$before" ] || fail "the chain did not go on: $before -> $after"
	rmdir "$TEST_ROOT/.workspaces" "$TEST_ROOT/.audit"
}

@test "datadir: the host config is parsed strictly and --data-dir > AGENTRT_DATA_DIR > data-dir" {
	local line
	for line in 'colour = blue' 'min-free = lots' 'workspaces.max-age = 3 days' 'data-dir = relative/dir' \
		'data-dir = /a,b' 'no equals sign' 'audit.max-age ='; do
		printf '# ok\n%s\n' "$line" >"$AGENTRT_CONFIG"
		run "$AGENTRT" data path
		assert_clean_failure
		[ "$(wc -l <<<"$output")" -eq 1 ] || fail "not one line: $output"
		assert_output_contains "$AGENTRT_CONFIG:2: "
	done
	printf 'min-free = 1m\nmin-free = 2m\n' >"$AGENTRT_CONFIG"
	run "$AGENTRT" data path
	assert_clean_failure
	assert_output_contains ":2: \`min-free\` given twice"
	# an engine can still tear down what it started: list, state, kill, delete warn and go on
	run "$AGENTRT" --root "$TEST_ROOT" list
	[ "$status" -eq 0 ]
	assert_output_contains "warning: $AGENTRT_CONFIG:2: "
	run "$AGENTRT" --root "$TEST_ROOT" delete no-such-container
	[ "$status" -eq 1 ]
	assert_output_contains "going on with the defaults for \`delete\`"
	assert_output_contains "does not exist"
	run "$AGENTRT" --root "$TEST_ROOT" create --bundle "$BUNDLE" cfg-bad
	assert_clean_failure
	assert_output_contains "$AGENTRT_CONFIG:2: "
	printf '  # comment\n\ndata-dir = /tmp/agentrt-conf-dd-%s\n audit.max-age = 7d \n' $$ >"$AGENTRT_CONFIG"
	run env -u AGENTRT_DATA_DIR "$AGENTRT" --root /run/x data path
	[ "$status" -eq 0 ]
	assert_output_contains "data-dir: /tmp/agentrt-conf-dd-$$"
	assert_output_contains "store: /tmp/agentrt-conf-dd-$$/roots/run+x"
	run "$AGENTRT" data path
	assert_output_contains "data-dir: $AGENTRT_DATA_DIR"
	run "$AGENTRT" --data-dir /tmp/agentrt-flag-dd data path
	assert_output_contains "data-dir: /tmp/agentrt-flag-dd"
	run "$AGENTRT" --data-dir relative data path
	assert_clean_failure
	# no config file at all: the defaults
	rm -f "$AGENTRT_CONFIG"
	run env -u AGENTRT_DATA_DIR "$AGENTRT" data path
	assert_output_contains "data-dir: /var/lib/agentrt"
	[ ! -e /tmp/agentrt-conf-dd-$$ ] && [ ! -e /tmp/agentrt-flag-dd ]
}

# The compiled seccomp filters are cached in <data-dir>/.cache/seccomp-<hash>.bpf, the hash
# being of the filter's rules, not of the file's bytes: whoever can write that file chooses the
# filter every later container gets.  A file or a directory another user owns or may write is
# not trusted (the filter is compiled again); a trusted one still is.
@test "escape: a seccomp cache entry another user wrote is not loaded" {
	local allow_all f n id=ddcache$$
	# the profile's own answer, and a cache filled by that run
	set_cmd 'try-syscall keyctl'
	run ar --root "$TEST_ROOT" run --bundle "$BUNDLE" ${id}a </dev/null
	[ "$status" -eq 0 ] && [ "$output" = EPERM ] || fail "before: $output"
	n=0
	for f in "$AGENTRT_DATA_DIR"/.cache/seccomp-*.bpf; do
		[ -f "$f" ] && n=$((n + 1))
	done
	[ "$n" -ge 1 ] || fail "no cache entry: $(ls -la "$AGENTRT_DATA_DIR/.cache" 2>&1)"
	# one BPF instruction: return SECCOMP_RET_ALLOW (printf's escapes: bash holds no NUL)
	allow_all='\x06\x00\x00\x00\x00\x00\xff\x7f'
	# 1. each entry replaced by another user's (nobody's), world-writable
	for f in "$AGENTRT_DATA_DIR"/.cache/seccomp-*.bpf; do
		printf "$allow_all" >"$f"
		chown 65534:65534 "$f"
		chmod 0666 "$f"
	done
	run ar --root "$TEST_ROOT" run --bundle "$BUNDLE" ${id}b </dev/null
	[ "$status" -eq 0 ] && [ "$output" = EPERM ] || fail "another user's entry was loaded: $output"
	# 2. root's entries, in a directory another user may write (and so replace them)
	for f in "$AGENTRT_DATA_DIR"/.cache/seccomp-*.bpf; do
		printf "$allow_all" >"$f"
		chown 0:0 "$f"
		chmod 0600 "$f"
	done
	chmod 0777 "$AGENTRT_DATA_DIR/.cache"
	run ar --root "$TEST_ROOT" run --bundle "$BUNDLE" ${id}c </dev/null
	[ "$status" -eq 0 ] && [ "$output" = EPERM ] || fail "an entry in a shared directory was loaded: $output"
	# 3. an entry through a symbolic link
	chmod 0700 "$AGENTRT_DATA_DIR/.cache"
	printf "$allow_all" >"$AGENTRT_DATA_DIR/planted.bpf"
	chmod 0600 "$AGENTRT_DATA_DIR/planted.bpf"
	for f in "$AGENTRT_DATA_DIR"/.cache/seccomp-*.bpf; do
		ln -sfn "$AGENTRT_DATA_DIR/planted.bpf" "$f"
	done
	run ar --root "$TEST_ROOT" run --bundle "$BUNDLE" ${id}d </dev/null
	[ "$status" -eq 0 ] && [ "$output" = EPERM ] || fail "an entry through a symlink was loaded: $output"
	# the cache still serves: an entry of ours, written back by the runs above, is read again
	rm -f "$AGENTRT_DATA_DIR"/.cache/seccomp-*.bpf
	run ar --root "$TEST_ROOT" run --bundle "$BUNDLE" ${id}e </dev/null
	[ "$status" -eq 0 ] && [ "$output" = EPERM ] || fail "after: $output"
	for f in "$AGENTRT_DATA_DIR"/.cache/seccomp-*.bpf; do
		[ -f "$f" ] && [ ! -L "$f" ] || fail "not written back: $f"
		[ "$(stat -c '%u %a' "$f")" = "0 600" ] || fail "$f: $(stat -c '%u %a' "$f")"
	done
}

# An engine's own filter (linux.seccomp: Docker's default profile, containerd's RuntimeDefault,
# ~350 names) is one filter for all its containers.  The init compiled it after START, ~20 ms of
# every `docker run`'s start (bench/README.md); create now compiles it once into the same cache,
# and the init and exec load the entry, under the same trust rules as the profile's filters.
@test "engine-seccomp-cache: linux.seccomp is compiled once into the cache and loaded by the init and exec; another user's entry is not" {
	local id=ddeng$$ f n pid allow_all='\x06\x00\x00\x00\x00\x00\xff\x7f'
	update_config '.linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW",
		"syscalls": [{"names": ["keyctl"], "action": "SCMP_ACT_ERRNO", "errnoRet": 95}]}'
	# the init's own answer, kept for exec to read
	set_cmd 'try-syscall keyctl >/tmp/init-keyctl; exec sleep 100'
	rm -rf "$AGENTRT_DATA_DIR"
	# --profile oci: no profile filter, so the cache's entries are the config's
	run_detached ${id}a
	[ "$status" -eq 0 ] || fail "run -d: $output"
	n=0
	for f in "$AGENTRT_DATA_DIR"/.cache/seccomp-*.bpf; do
		[ -f "$f" ] && n=$((n + 1))
	done
	[ "$n" -eq 1 ] || fail "cache entries after create: $n ($(ls -la "$AGENTRT_DATA_DIR/.cache" 2>&1))"
	pid=$(rt state ${id}a | jq -r .pid)
	[ "$(awk '$1 == "Seccomp_filters:" {print $2}' "/proc/$pid/status")" = 1 ] ||
		fail "init's filters: $(grep Seccomp "/proc/$pid/status")"
	wait_for_file "/proc/$pid/root/tmp/init-keyctl"
	[ "$(cat "/proc/$pid/root/tmp/init-keyctl")" = EOPNOTSUPP ] ||
		fail "init keyctl: $(cat "/proc/$pid/root/tmp/init-keyctl")"
	run rt exec ${id}a try-syscall keyctl
	[ "$output" = EOPNOTSUPP ] || fail "exec keyctl: $output"
	run rt exec ${id}a try-syscall add_key
	[ "$output" != EOPNOTSUPP ] || fail "exec add_key: $output"
	rt delete --force ${id}a
	rm -f "$ROOTFS/tmp/init-keyctl"
	# another user's entry (allow everything) is neither the init's nor exec's filter
	for f in "$AGENTRT_DATA_DIR"/.cache/seccomp-*.bpf; do
		printf "$allow_all" >"$f"
		chown 65534:65534 "$f"
		chmod 0666 "$f"
	done
	run_detached ${id}b
	[ "$status" -eq 0 ] || fail "run -d b: $output"
	pid=$(rt state ${id}b | jq -r .pid)
	wait_for_file "/proc/$pid/root/tmp/init-keyctl"
	[ "$(cat "/proc/$pid/root/tmp/init-keyctl")" = EOPNOTSUPP ] ||
		fail "the init loaded another user's entry: $(cat "/proc/$pid/root/tmp/init-keyctl")"
	# (b's create wrote the entry back as ours: planted again for exec)
	for f in "$AGENTRT_DATA_DIR"/.cache/seccomp-*.bpf; do
		printf "$allow_all" >"$f"
		chown 65534:65534 "$f"
		chmod 0666 "$f"
	done
	run rt exec ${id}b try-syscall keyctl
	[ "$output" = EOPNOTSUPP ] || fail "exec loaded another user's entry: $output"
	rt delete --force ${id}b
}
