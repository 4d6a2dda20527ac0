#!/usr/bin/env bats
# workspace-size.bats - workspace.size is a hard limit on an overlay
# workspace: the upper layer lives in a sparse ext4 image of that size on a
# loop device (workspace/image.c).  What an agent that tries to fill the host
# disk would do, seen from outside: ENOSPC inside, the store's blocks on the
# host (du), losetup and mountinfo after the container is gone, and review
# from a fresh process once nothing has the image mounted (a reboot).

setup() {
  [ "$(id -u)" = 0 ] || skip "needs root"
  [ -x /bin/busybox ] || skip "needs busybox-static"
  [ -e /dev/loop-control ] || skip "needs loop devices"
  REPO=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
  AGENTRT=${AGENTRT:-$REPO/agentrt}
  T=$(mktemp -d /tmp/agentrt-wssize-bats.XXXXXX)
  ROOT=$T/root
  export AGENTRT_DATA_DIR=$T/data AGENTRT_CONFIG=$T/agentrt.conf
  STORE=$AGENTRT_DATA_DIR/roots/$(printf '%s' "${ROOT#/}" | tr / +)
  HOST=$T/host
  BUNDLE=$T/bundle
  ID=wssize-$$-$BATS_TEST_NUMBER
  mkdir -p "$BUNDLE/rootfs/bin" "$HOST"
  cp /bin/busybox "$BUNDLE/rootfs/bin/"
  for a in sh ls cat echo rm mkdir sleep dd df du ln mv sync head seq printf; do
    ln -s busybox "$BUNDLE/rootfs/bin/$a"
  done
  mkdir -p "$BUNDLE/rootfs/proc" "$BUNDLE/rootfs/dev" "$BUNDLE/rootfs/sys" "$BUNDLE/rootfs/workspace"
  "$AGENTRT" spec --bundle "$BUNDLE"
  echo hello >"$HOST/a.txt"
}

teardown() {
  [ -n "${T:-}" ] || return 0
  for id in "$ID" "$ID-b"; do
    "$AGENTRT" --root "$ROOT" delete --force "$id" >/dev/null 2>&1 || true
    "$AGENTRT" --root "$ROOT" workspace "$id" purge >/dev/null 2>&1 || true
  done
  no_leak || true
  rm -rf "$T"
}

fail() {
  echo "FAIL: $*" >&2
  return 1
}

ar() {
  "$AGENTRT" --root "$ROOT" --profile agent "$@"
}

# has_line LINE: $output has exactly that line.
has_line() {
  grep -qxF -- "$1" <<<"$output"
}

# bundle_for SCRIPT [SIZE]: `sh -c SCRIPT` over the host dir at /workspace,
# with run.agentrt.workspace.size=SIZE (default 64m; "" = the profile's).
bundle_for() {
  local args size=${2-64m}
  args=$(jq -cn --arg s "$1" '["sh", "-c", $s]')
  jq --arg h "$HOST" --argjson a "$args" --arg size "$size" \
    '.process.terminal = false | .process.args = $a |
     .mounts += [{"destination": "/workspace", "type": "bind", "source": $h, "options": ["rbind", "rw"]}] |
     if $size != "" then .annotations["run.agentrt.workspace.size"] = $size else . end' \
    "$BUNDLE/config.json" >"$T/config.json"
  mv "$T/config.json" "$BUNDLE/config.json"
}

# KiB the workspace store takes on the host disk (blocks, not apparent size).
store_kib() {
  du -sk "$STORE/.workspaces/${1:-$ID}" | cut -f1
}

# No loop device bound to an image under $T, no mount of $T in a fresh
# process's mountinfo.  The monitor leaves right after its init: wait for it
# (bounded).
no_leak() {
  local i
  for i in $(seq 50); do
    if ! losetup -a | grep -q "$T" && ! grep -q "$T" /proc/self/mountinfo; then
      return 0
    fi
    sleep 0.1
  done
  losetup -a | grep "$T" >&2
  grep "$T" /proc/self/mountinfo >&2
  return 1
}

@test "dd past the limit: ENOSPC inside, the store holds at most the limit (control: 32 MiB fit)" {
  bundle_for 'cd /workspace && dd if=/dev/zero of=ok bs=1M count=32 2>&1 && echo OK32 &&
    dd if=/dev/zero of=big bs=1M count=200 2>&1; echo "rc=$?"; sync; df -k .'
  run ar run --bundle "$BUNDLE" "$ID"
  echo "$output"
  [[ "$output" == *OK32* ]] || fail "32 MiB did not fit in a 64 MiB workspace"
  [[ "$output" == *"No space left on device"* ]] || fail "no ENOSPC past the limit"
  has_line "rc=1" || fail "dd past the limit did not fail"
  kib=$(store_kib)
  echo "store: $kib KiB"
  [ "$kib" -le $((64 * 1024 + 1024)) ] || fail "the store holds $kib KiB, more than the 64 MiB limit"
  [ "$kib" -ge $((40 * 1024)) ] || fail "the store holds $kib KiB: the data is not there"
  no_leak || fail "a loop device or mount is left after the run"
}

@test "inode exhaustion: many small files end with ENOSPC, the store stays bounded" {
  bundle_for 'cd /workspace && mkdir d && cd d && i=0
    while [ $i -lt 20000 ]; do echo x >f$i 2>/dev/null || break; i=$((i+1)); done
    echo "made=$i"; echo y >last; echo "rc=$?"' 16m
  run ar run --bundle "$BUNDLE" "$ID"
  echo "$output"
  made=$(sed -n 's/^made=//p' <<<"$output")
  [ -n "$made" ] && [ "$made" -gt 100 ] && [ "$made" -lt 20000 ] ||
    fail "expected the file system to fill before 20000 files, made $made"
  [[ "$output" == *"No space left on device"* ]] || fail "no ENOSPC"
  [ "$(store_kib)" -le $((16 * 1024 + 1024)) ] || fail "the store holds more than 16 MiB"
}

@test "a sparse file of 1 TiB apparent size and fallocate: blocks stay bounded" {
  bundle_for 'cd /workspace && dd if=/dev/zero of=sparse bs=1 count=1 seek=1099511627775 2>&1
    echo "sparse=$?"; ls -l sparse
    dd if=/dev/zero of=fill bs=1M count=200 2>/dev/null; echo "fill=$?"; sync'
  run ar run --bundle "$BUNDLE" "$ID"
  echo "$output"
  has_line "fill=1" || fail "the fill did not stop at the limit"
  [ "$(store_kib)" -le $((64 * 1024 + 1024)) ] || fail "the store holds more than 64 MiB"
  # snapshot and commit copy only its data: the host gets its blocks, not 1 TiB
  ar workspace "$ID" snapshot s1
  [ "$(du -sk "$STORE/.workspaces/$ID/snapshots/s1" | cut -f1)" -le $((64 * 1024 + 1024)) ] ||
    fail "the snapshot wrote the sparse file out"
  ar workspace "$ID" commit sparse
  [ "$(stat -c %s "$HOST/sparse")" = 1099511627776 ] || fail "the committed file lost its size"
  [ "$(du -sk "$HOST/sparse" | cut -f1)" -le 1024 ] || fail "commit wrote the holes of the sparse file"
  rm -f "$HOST/sparse"
  if command -v fallocate >/dev/null; then
    "$AGENTRT" --root "$ROOT" workspace "$ID" discard
    # the host's fallocate(1) through a borrowed /usr
    jq '.mounts += [{"destination": "/usr", "type": "bind", "source": "/usr", "options": ["rbind", "ro"]}] |
        .process.args = ["/bin/sh", "-c", "cd /workspace && /usr/bin/fallocate -l 500M pre; echo fa=$?; rm -f pre; /usr/bin/fallocate -l 40M small; echo fb=$?"]' \
      "$BUNDLE/config.json" >"$T/c.json" && mv "$T/c.json" "$BUNDLE/config.json"
    mkdir -p "$BUNDLE/rootfs/usr"
    for l in lib lib64; do [ -e "/$l" ] && ln -sfn "usr/$l" "$BUNDLE/rootfs/$l"; done
    run ar run --bundle "$BUNDLE" "$ID"
    echo "$output"
    has_line "fa=1" || fail "fallocate of 500M in 64 MiB did not fail"
    has_line "fb=0" || fail "fallocate of 40M in 64 MiB failed (control)"
    [ "$(store_kib)" -le $((64 * 1024 + 1024)) ] || fail "the store holds more than 64 MiB"
  fi
}

@test "copy-up counts: appending to hard-linked and renamed host files fills the limit" {
  head -c $((40 << 20)) /dev/zero >"$HOST/big1"
  head -c $((40 << 20)) /dev/zero >"$HOST/big2"
  head -c $((40 << 20)) /dev/zero >"$HOST/big3"
  bundle_for 'cd /workspace && ln big1 link1 && echo x >>link1; echo "first=$?"
    mv big2 moved2; echo "mv=$?"; echo x >>big3; echo "third=$?"; sync'
  run ar run --bundle "$BUNDLE" "$ID"
  echo "$output"
  has_line "first=0" || fail "the first copy-up (40 MiB of 64) failed"
  [[ "$output" == *"mv=1"* || "$output" == *"third=1"* ]] ||
    fail "a second 40 MiB copy-up into 64 MiB succeeded"
  [ "$(store_kib)" -le $((64 * 1024 + 1024)) ] || fail "the store holds more than 64 MiB"
}

@test "two containers, each its own limit, at the same time" {
  bundle_for 'cd /workspace && dd if=/dev/zero of=f bs=1M count=200 2>/dev/null; du -k f; sleep 1' 32m
  cp -a "$BUNDLE" "$T/bundle-b"
  jq '.annotations["run.agentrt.workspace.size"] = "64m"' "$BUNDLE/config.json" >"$T/bundle-b/config.json"
  ar run --bundle "$BUNDLE" "$ID" >"$T/a.out" 2>&1 &
  pa=$!
  ar run --bundle "$T/bundle-b" "$ID-b" >"$T/b.out" 2>&1 &
  pb=$!
  wait "$pa" || true
  wait "$pb" || true
  cat "$T/a.out" "$T/b.out"
  a=$(cut -f1 <"$T/a.out" | tail -1)
  b=$(cut -f1 <"$T/b.out" | tail -1)
  [ "$a" -gt $((20 * 1024)) ] && [ "$a" -le $((32 * 1024)) ] || fail "the 32m one wrote $a KiB"
  [ "$b" -gt $((48 * 1024)) ] && [ "$b" -le $((64 * 1024)) ] || fail "the 64m one wrote $b KiB"
  [ "$(store_kib "$ID")" -le $((33 * 1024)) ] || fail "store of the 32m one too big"
  [ "$(store_kib "$ID-b")" -le $((65 * 1024)) ] || fail "store of the 64m one too big"
}

@test "deleting files frees the space, inside and on the host" {
  bundle_for 'cd /workspace && dd if=/dev/zero of=f1 bs=1M count=45 2>/dev/null; echo "w1=$?"
    rm f1 && sync && sleep 0.2; dd if=/dev/zero of=f2 bs=1M count=45 2>/dev/null; echo "w2=$?"
    rm f2 && sync'
  run ar run --bundle "$BUNDLE" "$ID"
  echo "$output"
  has_line "w1=0" || fail "the first 45 MiB failed"
  has_line "w2=0" || fail "45 MiB after deleting 45 MiB failed: space not freed"
  no_leak || fail "the image is still mounted" # its last discards come with the unmount
  # the loop device punches the discarded blocks out of the image from its own
  # work queue: under load they land a while after the device is gone (bounded,
  # 30 s: an ASan run on a loaded machine needed more than 5)
  local i
  for i in $(seq 300); do
    kib=$(store_kib)
    [ "$kib" -le $((20 * 1024)) ] && break
    sleep 0.1
  done
  echo "store after rm: $kib KiB"
  [ "$kib" -le $((20 * 1024)) ] || fail "the host still holds $kib KiB after the files were deleted"
}

@test "review after exit, after a monitor crash and after a reboot: diff, list, commit, purge" {
  bundle_for 'cd /workspace && echo new >n.txt && echo more >>a.txt && mkdir -p sub && echo x >sub/x &&
    echo ready && sleep 30' ""
  ar run --detach --bundle "$BUNDLE" "$ID" >/dev/null 2>&1 </dev/null
  for i in $(seq 100); do [ -f "$STORE/.workspaces/$ID/upper.img" ] && ar workspace "$ID" diff | grep -q sub/x && break; sleep 0.1; done
  # review while it runs shares the container's loop device (one superblock)
  run ar workspace "$ID" diff
  echo "$output"
  [[ "$output" == *"n.txt"* && "$output" == *"sub/x"* ]] || fail "diff while running"
  [ "$(losetup -a | grep -c "$STORE/.workspaces/$ID/upper.img")" = 1 ] ||
    fail "more than one loop device on one image"
  # a monitor crash
  mon=
  for p in $(pgrep -x agentrt-monitor); do
    if tr '\0' ' ' <"/proc/$p/cmdline" | grep -q -- " $ID"; then mon=$p; fi
  done
  [ -n "$mon" ] || fail "no monitor found"
  kill -9 "$mon"
  ar kill "$ID" KILL || true
  for i in $(seq 50); do ar state "$ID" 2>/dev/null | grep -q stopped && break; sleep 0.1; done
  ar delete --force "$ID"
  no_leak || fail "a loop device or mount is left after delete"
  # a reboot: nothing has the image mounted; review from a fresh process
  run ar workspace "$ID" diff --format json
  echo "$output"
  [ "$(jq -r '[.changes[].path] | sort | join(",")' <<<"$output")" = "a.txt,n.txt,sub,sub/x" ] ||
    fail "diff after the reboot does not show every change"
  run ar workspace list --format json
  echo "$output"
  [ "$(jq -r --arg id "$ID" '.[] | select(.id == $id) | .upper_bytes > 0 and .disk_bytes < 8388608' <<<"$output")" = true ] ||
    fail "list: upper bytes missing or disk bytes counted by the image's apparent size"
  run ar workspace "$ID" commit
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(cat "$HOST/n.txt")" = new ] && [ "$(cat "$HOST/sub/x")" = x ] &&
    [ "$(cat "$HOST/a.txt")" = "$(printf 'hello\nmore')" ] || fail "commit did not apply the changes"
  run ar workspace "$ID" purge
  [ "$status" -eq 0 ]
  [ ! -e "$STORE/.workspaces/$ID" ] || fail "purge left the workspace"
  no_leak || fail "review left a loop device or a mount"
}

@test "discard gives the image's blocks back; retention counts blocks, not the sparse size" {
  bundle_for 'cd /workspace && dd if=/dev/zero of=f bs=1M count=30 2>/dev/null; sync' 1g
  ar run --bundle "$BUNDLE" "$ID"
  [ "$(store_kib)" -ge $((25 * 1024)) ] || fail "the data is not in the store"
  ar workspace "$ID" discard
  [ "$(store_kib)" -le 4096 ] || fail "discard left $(store_kib) KiB"
  [ "$(ar workspace "$ID" diff --format json | jq '.changes | length')" = 0 ]
  # a 1 GiB sparse image is not 1 GiB for a retention cap of 100 MiB
  printf 'workspaces.max-total-size = 100m\n' >"$AGENTRT_CONFIG"
  run ar purge --dry-run
  echo "$output"
  [[ "$output" != *"$ID"* ]] || fail "retention would purge a nearly empty image"
}

@test "no loop device: a warning and an unlimited upper, or a refusal when the size was asked for" {
  : >"$T/not-a-device"
  bundle_for 'cd /workspace && echo x >f && echo done' ""
  run unshare -m sh -c "mount --bind '$T/not-a-device' /dev/loop-control && exec \"\$@\"" sh \
    "$AGENTRT" --root "$ROOT" --profile agent run --bundle "$BUNDLE" "$ID"
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"done"* ]]
  [[ "$output" == *"workspace.size is not enforced"* ]] || fail "no warning"
  [ -d "$STORE/.workspaces/$ID/upper" ] && [ ! -e "$STORE/.workspaces/$ID/upper.img" ] ||
    fail "not the plain upper layer"
  ar workspace "$ID" purge
  bundle_for 'echo ran' 64m
  run unshare -m sh -c "mount --bind '$T/not-a-device' /dev/loop-control && exec \"\$@\"" sh \
    "$AGENTRT" --root "$ROOT" --profile agent run --bundle "$BUNDLE" "$ID"
  echo "$output"
  [ "$status" -ne 0 ]
  [[ "$output" != *ran* ]]
  [ "$(grep -c . <<<"$output")" = 1 ] || fail "the error is not one line"
  [[ "$output" == *"cannot be enforced"* ]]
  [ ! -e "$STORE/.workspaces/$ID" ] || fail "the refused create left a workspace"
  [ ! -e "$ROOT/$ID" ] || fail "the refused create left a state dir"
  # doctor says so (and says ok with the device there: the control)
  run unshare -m sh -c "mount --bind '$T/not-a-device' /dev/loop-control && exec \"\$@\"" sh \
    "$AGENTRT" doctor
  [[ "$output" == *"missing  loop devices, mkfs.ext4: /dev/loop-control is not the loop control device"* ]] ||
    fail "doctor: $output"
  run "$AGENTRT" doctor
  [[ "$output" == *"ok       loop devices, mkfs.ext4"* ]] || fail "doctor: $output"
}

@test "real tools: a git clone and many files written by python stay within the limit" {
  [ -x /usr/bin/git ] && [ -x /usr/bin/python3 ] || skip "needs /usr/bin/git and /usr/bin/python3"
  git -C "$T" init -q -b main up && git -C "$T/up" -c user.name=u -c user.email=u@example.com \
    commit -q --allow-empty -m up
  for i in $(seq 200); do head -c 4096 /dev/urandom >"$T/up/f$i"; done
  git -C "$T/up" add -A && git -C "$T/up" -c user.name=u -c user.email=u@example.com commit -q -m files
  r=$BUNDLE/rootfs
  rm -rf "$r" && mkdir -p "$r"/{proc,dev,sys,workspace,tmp,root,etc,usr,up}
  for l in bin lib lib64 sbin; do ln -s "usr/$l" "$r/$l"; done
  py=/usr/bin/python3
  bundle_for "cd /workspace && git clone -q /up clone && echo cloned && ls clone | wc -l &&
    $py -c 'import os
n = 0
try:
    for i in range(100000):
        with open(\"many%d\" % i, \"wb\") as f:
            f.write(os.urandom(8192))
        n += 1
except OSError as e:
    print(\"stopped\", n, e.errno)'" 32m
  jq --arg up "$T/up" '.process.env += ["HOME=/root", "GIT_CONFIG_NOSYSTEM=1"] |
      .mounts = [{"destination": "/usr", "type": "bind", "source": "/usr", "options": ["rbind", "ro"]},
                 {"destination": "/up", "type": "bind", "source": $up, "options": ["rbind", "ro"]}] + .mounts' \
    "$BUNDLE/config.json" >"$T/c.json" && mv "$T/c.json" "$BUNDLE/config.json"
  run ar run --bundle "$BUNDLE" "$ID"
  echo "$output"
  [[ "$output" == *cloned* ]] || fail "git clone failed"
  [[ "$output" == *"stopped"*" 28"* ]] || fail "python did not stop with ENOSPC (28)"
  [ "$(store_kib)" -le $((33 * 1024)) ] || fail "the store holds more than 32 MiB"
  run ar workspace "$ID" diff --format json
  [ "$(jq '[.changes[] | select(.path | startswith("clone/"))] | length' <<<"$output")" -gt 200 ] ||
    fail "the clone is not in the diff"
}

# image-unmount-after-run: `run` returns once the monitor's trail is complete;
# the image's unmount (the overlay's sync of its upper, the ext4's journal, the
# loop device: 1-3 ms, most of what `run` waited for after its program's exit)
# ends in the monitor's last child, which holds a shared lock of the image
# until it is done (monitor/monitor_files.c).  Everything that uses the image
# next takes that lock first, as a host tool does here with flock(1): a create
# of the same id, a review, a purge, a delete, a data migrate.  Pinned from
# before (loop-held-after-run): a `data migrate` that copied the image while
# it was still mounted made a workspace whose layers could not be opened.
@test "image-unmount-after-run: once the image's lock is free it is unmounted and clean; a run, a review and a purge right after run wait for it" {
  command -v dumpe2fs >/dev/null || skip "needs dumpe2fs (e2fsprogs)"
  command -v flock >/dev/null || skip "needs flock (util-linux)"
  local i img=$STORE/.workspaces/$ID/upper.img
  for i in 1 2 3; do
    bundle_for "echo one >/workspace/one-$i.txt"
    run ar run --bundle "$BUNDLE" "$ID"
    [ "$status" -eq 0 ] || fail "round $i: run: $output"
    # the same id at once: its create mounts the image the last run's monitor
    # is letting go of
    bundle_for "cat /workspace/one-$i.txt && echo two >/workspace/two-$i.txt"
    run ar run --bundle "$BUNDLE" "$ID"
    [ "$status" -eq 0 ] || fail "round $i: second run: $output"
    has_line one || fail "round $i: the second run did not see the first one's file: $output"
    # a review at once: both files, from the image
    run "$AGENTRT" --root "$ROOT" workspace "$ID" diff --format json
    [ "$status" -eq 0 ] || fail "round $i: diff right after run: $output"
    [ "$(jq -r '[.changes[] | select(.path == "one-'"$i"'.txt" or .path == "two-'"$i"'.txt")] | length' \
      <<<"$output")" = 2 ] || fail "round $i: the diff right after run: $output"
    bundle_for "rm /workspace/one-$i.txt"
    run ar run --bundle "$BUNDLE" "$ID"
    [ "$status" -eq 0 ] || fail "round $i: third run: $output"
    # what every later user of the image does first: then nothing of it is left
    flock -w 10 "$img" true || fail "round $i: the image's lock was not let go"
    ! losetup -a | grep -F "$img" ||
      fail "round $i: the loop device is still bound once the image's lock is free"
    ! grep -qF "$STORE/.workspaces/$ID" /proc/self/mountinfo ||
      fail "round $i: a mount is left once the image's lock is free"
    image_clean || fail "round $i: the image is not clean once its lock is free"
    # a purge at once after a run removes the image it waited for
    bundle_for "dd if=/dev/zero of=/workspace/big-$i bs=1M count=8 2>/dev/null"
    run ar run --bundle "$BUNDLE" "$ID"
    [ "$status" -eq 0 ] || fail "round $i: fourth run: $output"
    run "$AGENTRT" --root "$ROOT" workspace "$ID" purge
    [ "$status" -eq 0 ] || fail "round $i: purge right after run: $output"
    ! losetup -a | grep -F "$img" || fail "round $i: a loop device is left after purge"
    [ ! -e "$img" ] || fail "round $i: the image is still there after purge"
  done
}

# delete-after-exit-leaves-nothing: an engine's `delete` of a container whose
# program has exited returns with the image unmounted and its loop device gone
# (it waits for the lock above); checked at once, not polled.
@test "delete-after-exit-leaves-nothing: delete returns with no loop device and no mount of the image" {
  command -v flock >/dev/null || skip "needs flock (util-linux)"
  local i img=$STORE/.workspaces/$ID/upper.img
  bundle_for 'echo x >/workspace/new.txt'
  for i in 1 2 3; do
    run ar run --keep --bundle "$BUNDLE" "$ID"
    [ "$status" -eq 0 ] || fail "round $i: run --keep: $output"
    run "$AGENTRT" --root "$ROOT" delete "$ID"
    [ "$status" -eq 0 ] || fail "round $i: delete: $output"
    ! losetup -a | grep -F "$img" || fail "round $i: the loop device is still bound when delete has returned"
    ! grep -qF "$STORE/.workspaces/$ID" /proc/self/mountinfo ||
      fail "round $i: a mount is left when delete has returned"
    flock -n "$img" true || fail "round $i: the image's lock is still held when delete has returned"
  done
}

# store_settles MAX_KIB: the store's host blocks fall to MAX_KIB or less
# (the loop device punches discarded blocks from its work queue: bounded, 30 s).
store_settles() {
  local i
  for i in $(seq 300); do
    kib=$(store_kib)
    [ "$kib" -le "$1" ] && return 0
    sleep 0.1
  done
  echo "store: $kib KiB" >&2
  return 1
}

# image_clean: the image's ext4 says it was unmounted cleanly (no journal to
# replay, state "clean"): the agent's work is in the image, not in a cache.
image_clean() {
  local img=$STORE/.workspaces/$ID/upper.img
  dumpe2fs -h "$img" 2>/dev/null | grep -q '^Filesystem state: *clean$' ||
    { dumpe2fs -h "$img" 2>&1 | grep -E 'state|features' >&2; return 1; }
  ! dumpe2fs -h "$img" 2>/dev/null | grep '^Filesystem features:' | grep -qw needs_recovery
}

@test "trim-after-other-frees: a later run that only truncates or renames over a big file gives its blocks back too" {
  # the image is trimmed at the end only when its file system changed; a run
  # whose one change frees blocks without a delete (a truncate, a rename over
  # a file) must count as a change
  command -v dumpe2fs >/dev/null || skip "needs dumpe2fs (e2fsprogs)"
  local how
  for how in 'truncate -s 0 big' 'echo small >s && mv s big'; do
    bundle_for 'cd /workspace && dd if=/dev/zero of=big bs=1M count=40 2>/dev/null && sync && echo wrote'
    run ar run --bundle "$BUNDLE" "$ID"
    [ "$status" -eq 0 ] && has_line wrote || fail "write: $output"
    no_leak || fail "the image is still mounted"
    [ "$(store_kib)" -ge $((30 * 1024)) ] || fail "the 40 MiB file is not in the store ($(store_kib) KiB)"
    bundle_for "cd /workspace && $how && echo freed"
    ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 strace -f -qq -e trace=ioctl -o "$T/strace" "$AGENTRT" --root "$ROOT" --profile agent \
      run --bundle "$BUNDLE" "$ID" >"$T/out" 2>&1 || { cat "$T/out"; fail "$how: run failed"; }
    grep -q freed "$T/out" || fail "$how: $(cat "$T/out")"
    grep -q 'FITRIM' "$T/strace" || fail "$how: the image was not trimmed after it"
    no_leak || fail "$how: the image is still mounted"
    image_clean || fail "$how: the image was not left clean"
    store_settles $((20 * 1024)) || fail "$how: the host still holds the freed blocks"
    run "$AGENTRT" --root "$ROOT" workspace "$ID" purge
    [ "$status" -eq 0 ] || fail "purge: $output"
  done
}

# cli_exited: the first process of $T/strace (the CLI) has exited with 0.
cli_exited() {
  awk 'NR == 1 { cli = $1 } $1 == cli && / \+\+\+ exited with 0 \+\+\+$/ { found = 1 }
    END { exit !found }' "$T/strace" 2>/dev/null
}

# image-trim-after-run: a run that changed its workspace ends with the image's
# commit (syncfs) and trim (FITRIM), so that the host's file gets the freed
# blocks back.  `run` returned only after them, a journal commit through the
# loop device later; now the monitor's teardown child does them after the
# monitor's exit, before its closes and under the image's lock.  strace makes
# that commit last 3 s: the engine's `run` has returned before it ends, and
# a host tool that takes the image's lock next finds it trimmed and clean.
@test "image-trim-after-run: run returns before the image's last commit and trim; the next holder of its lock finds them done" {
  command -v dumpe2fs >/dev/null || skip "needs dumpe2fs (e2fsprogs)"
  command -v flock >/dev/null || skip "needs flock (util-linux)"
  local img=$STORE/.workspaces/$ID/upper.img i
  bundle_for 'cd /workspace && dd if=/dev/zero of=big bs=1M count=40 2>/dev/null && sync && echo wrote'
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] && has_line wrote || fail "write: $output"
  flock -w 10 "$img" true || fail "the image's lock was not let go"
  [ "$(store_kib)" -ge $((30 * 1024)) ] || fail "the 40 MiB file is not in the store ($(store_kib) KiB)"
  bundle_for 'cd /workspace && rm big && echo freed'
  ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 strace -f -q -o "$T/strace" \
    -e trace=execve,syncfs,ioctl -e inject=syncfs:delay_enter=3000000 \
    "$AGENTRT" --root "$ROOT" --profile agent run --bundle "$BUNDLE" "$ID" >"$T/out" 2>&1 &
  local st=$!
  # the CLI (strace's first tracee) has exited: run has returned
  for i in $(seq 100); do
    cli_exited && break
    sleep 0.1
  done
  cli_exited || { wait "$st"; cat "$T/out" "$T/strace"; fail "run did not return"; }
  grep -q freed "$T/out" || fail "output: $(cat "$T/out")"
  # the commit, held 3 s, had not ended when run returned
  ! grep -E 'syncfs(\(| resumed>).*= 0' "$T/strace" ||
    { cat "$T/strace"; fail "run returned after the image's commit"; }
  # the next holder of the lock: the commit and trim are done, then the unmount
  flock -w 20 "$img" true || fail "the image's lock was not let go"
  grep -qE 'syncfs(\(| resumed>).*= 0' "$T/strace" || { cat "$T/strace"; fail "the image was not committed before its lock went"; }
  grep -qE 'FITRIM.*= 0' "$T/strace" || { cat "$T/strace"; fail "the image was not trimmed before its lock went"; }
  ! losetup -a | grep -F "$img" || fail "the loop device is still bound once the image's lock is free"
  image_clean || fail "the image is not clean once its lock is free"
  wait "$st" || fail "strace or run failed: $(cat "$T/out")"
  store_settles $((20 * 1024)) || fail "the host still holds the freed blocks"
}

@test "an unchanged workspace image: no trim, and unmounted clean once its lock is free" {
  command -v dumpe2fs >/dev/null || skip "needs dumpe2fs (e2fsprogs)"
  bundle_for 'cat /workspace/a.txt'
  ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 strace -f -qq -e trace=ioctl -o "$T/strace" "$AGENTRT" --root "$ROOT" --profile agent \
    run --bundle "$BUNDLE" "$ID" >"$T/out" 2>&1 || { cat "$T/out"; fail "run failed"; }
  grep -qx hello "$T/out" || fail "output: $(cat "$T/out")"
  ! grep -q FITRIM "$T/strace" || fail "an image nothing changed was trimmed"
  ! losetup -a | grep -F "$STORE/.workspaces/$ID/upper.img" || fail "the loop device is still bound"
  image_clean || fail "the image was not left clean"
  # and a file written in a second run is in the image, read back by review
  bundle_for 'echo kept >/workspace/new.txt'
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] || fail "run: $output"
  # the unmount after run ends under the image's lock (image-unmount-after-run)
  flock -w 10 "$STORE/.workspaces/$ID/upper.img" true || fail "the image's lock was not let go"
  image_clean || fail "the image was not left clean after a write"
  run "$AGENTRT" --root "$ROOT" workspace "$ID" diff --format json
  [ "$(jq -r '[.changes[] | select(.path == "new.txt")] | length' <<<"$output")" = 1 ] ||
    fail "new.txt is not in the diff: $output"
}

# workspace-mount-thread-at-clone: a new image is bound and mounted by a thread of create's
# (workspace/image.c).  The init's clone is no fork of glibc's: when the thread had been made but
# had not yet run its first instruction at that clone, the init's glibc waited for it forever at
# the init's setgroups (glibc changes every thread's ids).  It hung the test above once, under
# `strace -f`.  Here strace holds every new thread at its first system call (set_robust_list)
# for 0.3 s: create must have waited for the thread before the init's clone.
@test "workspace-mount-thread-at-clone: a new thread of create's held at its start while the init is cloned, a user with groups still starts" {
  bundle_for 'id -u; id -G; cat /workspace/a.txt'
  jq '.process.user = {"uid": 1000, "gid": 1000, "additionalGids": [5, 7]}' "$BUNDLE/config.json" >"$T/config.json"
  mv "$T/config.json" "$BUNDLE/config.json"
  ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 timeout --kill-after=5 30 \
    strace -f -qq -o /dev/null -e trace=set_robust_list -e inject=set_robust_list:delay_enter=300000 \
    "$AGENTRT" --root "$ROOT" --profile agent run --bundle "$BUNDLE" "$ID" >"$T/out" 2>&1 ||
    fail "run: $? (124 or 137: it hung): $(cat "$T/out")"
  [ "$(cat "$T/out")" = "$(printf '1000\n1000 5 7\nhello')" ] || fail "output: $(cat "$T/out")"
  [ -s "$STORE/.workspaces/$ID/upper.img" ] || fail "no image"
}

# workspace-template-poisoned: a new workspace's image is a copy of the store's template
# (.upper2-<size>.img, made once by mkfs.ext4), mounted by the kernel as root.  Whoever may write
# that template chooses what every later workspace starts with (and hands the kernel an ext4
# image of their making).  One another user owns, or may write, is made again.
@test "workspace-template-poisoned: a template another user owns or may write is not copied" {
  local tmpl
  bundle_for 'echo one >/workspace/one.txt'
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] || fail "run: $output"
  tmpl=$STORE/.workspaces/.upper2-$((64 * 1024 * 1024)).img
  [ -f "$tmpl" ] || fail "no template: $(ls -la "$STORE/.workspaces")"
  [ "$(stat -c '%u %a' "$tmpl")" = "0 600" ] || fail "template: $(stat -c '%u %a' "$tmpl")"
  # another user's template, with a directory of theirs in it (debugfs writes the image as a
  # file: nothing is mounted)
  debugfs -w -R 'mkdir planted' "$tmpl" >/dev/null 2>&1 || fail "debugfs"
  debugfs -R 'ls -l /' "$tmpl" 2>/dev/null | grep -qw planted || fail "not planted"
  chown 65534:65534 "$tmpl"
  chmod 0666 "$tmpl"
  run ar run --bundle "$BUNDLE" "$ID-b"
  [ "$status" -eq 0 ] || fail "run: $output"
  ! debugfs -R 'ls -l /' "$STORE/.workspaces/$ID-b/upper.img" 2>/dev/null | grep -qw planted ||
    fail "the new workspace is a copy of another user's template"
  [ "$(stat -c '%u %a' "$tmpl")" = "0 600" ] || fail "template not made again: $(stat -c '%u %a' "$tmpl")"
  ! debugfs -R 'ls -l /' "$tmpl" 2>/dev/null | grep -qw planted || fail "the template is still theirs"
  no_leak || fail "a loop device or mount is left after the run"
}

@test "monitor-upper-from-create: the monitor reaches a new and an existing image through create's mount, which outlives create; delete frees the loop device" {
  # the monitor mounted the image a second time (its lock, /dev/loopN,
  # fsopen + fsconfig + fsmount) between ROOT and its OK, while the init
  # waited; create's own mount goes to it with ROOT now, and that reference
  # must keep the image mounted after create has exited, as its own did
  local i sp mon cli round
  for round in new existing; do
    bundle_for "while [ ! -e /workspace/go-$round ]; do sleep 0.05; done; echo late >/workspace/late-$round.txt; sleep 30"
    rm -f "$T/trace"
    # strace follows the monitor, which outlives create: detached (killed)
    # once the container is created
    strace -f -q -o "$T/trace" -e trace=fsopen -- "$AGENTRT" --root "$ROOT" --profile agent \
      create --bundle "$BUNDLE" "$ID" </dev/null >"$T/create.out" 2>&1 3>&- &
    sp=$!
    # create's own exit (strace's child): the monitor said OK
    for i in $(seq 100); do cli=$(pgrep -P "$sp") && break; sleep 0.05; done
    for i in $(seq 300); do
      grep -q "^$cli +++ exited" "$T/trace" && break
      sleep 0.1
    done
    kill -KILL "$sp" # its tracees go on, detached
    wait "$sp" || true
    ar state "$ID" | grep -q '"created"' || fail "$round image: create: $(cat "$T/create.out")"
    mon=$(cut -d' ' -f1 "$ROOT/$ID/monitor.pid")
    [ -d "/proc/$mon" ] || fail "$round image: no monitor"
    # the image is mounted once, by create (its thread), not by the monitor
    grep 'fsopen("ext4"' "$T/trace" >&2 || true
    [ "$(grep -c 'fsopen("ext4"' "$T/trace")" = 1 ] || fail "$round image: the image was mounted more than once"
    ! grep -q "^$mon .*fsopen(\"ext4\"" "$T/trace" || fail "$round image: the monitor mounted the image again"
    # create has exited: the monitor's reference keeps the upper reachable and
    # its changes recorded
    [ "$(losetup -a | grep -cF "$STORE/.workspaces/$ID/upper.img")" = 1 ] || fail "$round image: no loop device"
    ar start "$ID"
    ar exec "$ID" sh -c ": >/workspace/go-$round"
    for i in $(seq 100); do
      ar audit --format json --kind file "$ID" 2>/dev/null | jq -r .path | grep -qx "/workspace/late-$round.txt" && break
      sleep 0.1
    done
    ar audit --format json --kind file "$ID" | jq -r .path | grep -qx "/workspace/late-$round.txt" ||
      fail "$round image: a change after create exited is not recorded"
    run ar workspace "$ID" diff
    [[ "$output" == *"late-$round.txt"* ]] || fail "$round image: diff: $output"
    ar kill "$ID" KILL || true
    for i in $(seq 50); do ar state "$ID" 2>/dev/null | grep -q stopped && break; sleep 0.1; done
    ar delete --force "$ID"
    no_leak || fail "$round image: a loop device or mount is left after delete"
  done
}
