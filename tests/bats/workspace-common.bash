# workspace-common.bash - what workspace.bats and workspace-git.bats share: a host directory
# bound at /workspace under the `agent` profile, a fresh one per test, and its helpers.

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

# marked JSON-PATH...: each path (jq string, may hold escapes) is in the diff and protected
# (every change at it: a directory replaced by a symlink is two, its deletion and the link).
marked() {
  local p
  run ar workspace "$ID" diff --format json
  for p in "$@"; do
    [ "$(jq -r --argjson p "\"$p\"" '[.changes[] | select(.path == $p)] | length > 0 and all(.protected)' \
      <<<"$output")" = true ] || fail "$p not protected: $output"
  done
}

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
