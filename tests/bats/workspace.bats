#!/usr/bin/env bats
# workspace.bats - overlay workspaces: the agent's writes reach the host only
# when committed (issue 10).  The engine's view: a host directory bound at
# /workspace, run under the `agent` profile, which turns it into an overlay.

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
  mkdir -p "$BUNDLE/rootfs/bin" "$HOST/data" "$HOST/src"
  cp /bin/busybox "$BUNDLE/rootfs/bin/"
  for a in sh ls cat echo mv rm mkdir sleep sed cp; do ln -s busybox "$BUNDLE/rootfs/bin/$a"; done
  mkdir -p "$BUNDLE/rootfs/proc" "$BUNDLE/rootfs/dev" "$BUNDLE/rootfs/sys" "$BUNDLE/rootfs/workspace"
  "$AGENTRT" spec --bundle "$BUNDLE"
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

# Contents, names, modes and times of the host dir as one hash.
host_sum() {
  tar -C "$HOST" --sort=name -cf - . | sha256sum | cut -d' ' -f1
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

# The rollback mounts a new overlay over /workspace; the read-only binds of the
# protected paths made at create lie under the old one and would be hidden.
@test "workspace: protected paths stay read-only after a rollback of a running container" {
  bundle_for "exec sleep 600"
  ar create --bundle "$BUNDLE" "$ID"
  ar start "$ID"
  run ar workspace "$ID" snapshot s1
  [ "$status" -eq 0 ]
  run ar workspace "$ID" rollback s1
  [ "$status" -eq 0 ]
  run ar exec "$ID" sh -c 'echo evil >/workspace/.git/hooks/pre-commit'
  [ "$status" -ne 0 ]
  run ar exec "$ID" sh -c 'echo evil >/workspace/.git/config'
  [ "$status" -ne 0 ]
  # on top of the new overlay (the last /workspace mount) sits a read-only bind of each
  run ar exec "$ID" sh -c 'cat /proc/self/mountinfo'
  for p in /workspace/.git/hooks /workspace/.git/config; do
    echo "$output" | awk -v p="$p" '$5 == "/workspace" { top = $1 } { l[NR] = $0 }
      END { for (i = 1; i <= NR; i++) { split(l[i], f, " ")
              if (f[5] == p && f[2] == top && f[6] ~ /^ro,/) found = 1 }
            exit !found }'
  done
  ar exec "$ID" sh -c 'echo fine >/workspace/ok.txt'
  ar delete --force "$ID"
  run changes
  [ "$output" = "added:ok.txt" ]
  # Had a bind been missing: a hook planted in the upper layer is left out of
  # the diff with a warning and never reaches the host on commit.
  mkdir -p "$STORE/.workspaces/$ID/upper/.git/hooks"
  echo evil >"$STORE/.workspaces/$ID/upper/.git/hooks/pre-commit"
  [ "$(changes 2>/dev/null)" = "added:ok.txt" ]
  run ar workspace "$ID" diff
  [[ "$output" == *".git/hooks/pre-commit"*"protected"* ]]
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ]
  [ "$(cat "$HOST/ok.txt")" = fine ]
  [ ! -e "$HOST/.git/hooks/pre-commit" ] && [ ! -e "$HOST/.git" ]
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
  [ -d "$STORE/.workspaces/$ID/upper" ]
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
