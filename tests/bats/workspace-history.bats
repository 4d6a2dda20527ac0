#!/usr/bin/env bats
# workspace-history.bats - the review and the agent's git history: refs, commits, reflogs,
# packs and objects the agent writes never make the host's git write a held-back file, show
# another commit or read for minutes, and an honest agent's history and git work commit
# cleanly.  The same set-up as workspace.bats (workspace-common.bash).

load workspace-common

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
# U+009B, the C1 control CSI, and `\x9b2J` cleared it.  The review decodes the text from the
# encoding it names, and such a commit's ref is held back (an honest Latin-1 commit passes,
# the next test).
@test "escape: a commit in ISO-8859-1 whose message the host's git log re-encodes into a C1 control" {
  host_repo plain
  bundle_usr "set -e; cd /workspace; echo w >>a.txt
    git -c i18n.commitEncoding=ISO-8859-1 commit -q -am \"\$(printf 'fix \2332J typo')\"
    git cat-file commit HEAD | grep -q '^encoding ISO-8859-1' && echo PLANTED"
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] && [[ "$output" == *PLANTED* ]] || fail "plant: $output"
  marked .git/refs/heads/master
  run ar workspace "$ID" diff
  [[ "$output" == *"terminal control characters once the host's \`git log\` re-encodes it"* ]] || fail "diff: $output"
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] || fail "commit: $output"
  ! git -C "$HOST" log --format=%B | grep -q "$(printf '\302\233')" || fail "the host's git log prints a C1 control"
  # control: the ref included, the host's git log prints U+009B (the test can fail)
  run ar workspace "$ID" commit --include-protected .git/refs/heads/master
  [ "$status" -eq 0 ] || fail "commit --include-protected: $output"
  git -C "$HOST" log -1 --format=%B | grep -q "$(printf '\302\2332J')" || fail "control: $(git -C "$HOST" log -1 --format=%B | od -c | head)"
}

# An honest agent whose git writes its messages in Latin-1 (i18n.commitEncoding=ISO-8859-1,
# `café` stored as caf\xe9) or Windows-1252 (\x80 is the euro sign) had its refs held back
# whole, as if it had written a control: the review decodes the text from the encoding named
# and finds none, so they pass and the host's git log shows the text in UTF-8.  An encoding the
# review does not decode (EUC-JP) is still held back.
@test "workspace: honest commits in ISO-8859-1 and Windows-1252 pass, and the host's git log shows them in UTF-8" {
  host_repo plain
  bundle_usr "set -e; cd /workspace; git checkout -q -b latin
    echo w >>a.txt; git -c i18n.commitEncoding=ISO-8859-1 commit -q -am \"\$(printf 'caf\351 \253ok\273')\"
    git checkout -q -b cp master && echo x >>a.txt
    git -c i18n.commitEncoding=windows-1252 commit -q -am \"\$(printf '10 \200 \223quoted\224')\"
    git checkout -q -b jp master && echo y >>a.txt
    git -c i18n.commitEncoding=EUC-JP commit -q -am \"\$(printf '\244\242')\"
    git cat-file commit latin | grep -q '^encoding ISO-8859-1' &&
      git cat-file commit cp | grep -q '^encoding windows-1252' && echo PLANTED"
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] && [[ "$output" == *PLANTED* ]] || fail "plant: $output"
  marked .git/refs/heads/jp
  local p
  for p in .git/refs/heads/latin .git/refs/heads/cp; do
    [ "$(jq -r --arg p "$p" '.changes[] | select(.path == $p) | .protected // "none"' <<<"$output")" = none ] ||
      fail "the honest $p is protected: $output"
  done
  run ar workspace "$ID" diff
  [[ "$output" == *"an encoding other than UTF-8 that agentrt does not decode"*"refs/heads/jp"* ]] || fail "diff: $output"
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] || fail "commit: $output"
  [[ "$output" == *"left out .git/refs/heads/jp"* ]] || fail "commit: $output"
  [ "$(git -C "$HOST" log -1 --format=%s latin)" = "$(printf 'caf\303\251 \302\253ok\302\273')" ] ||
    fail "latin: $(git -C "$HOST" log -1 --format=%s latin | od -c)"
  [ "$(git -C "$HOST" log -1 --format=%s cp)" = "$(printf '10 \342\202\254 \342\200\234quoted\342\200\235')" ] ||
    fail "cp: $(git -C "$HOST" log -1 --format=%s cp | od -c)"
  ! git -C "$HOST" rev-parse -q --verify refs/heads/jp >/dev/null || fail "the EUC-JP branch arrived"
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

# The notes a notes ref brings are each read (above), and the review read up to 100,000 of
# them: 30,000 notes in one pack added 0.9 s to each of the ref's and its reflog's checks
# (2.3 s against 1.3 s of `diff`, on this 2-CPU VM under load), 100,000 took 16 s.  The
# check stops at 10,000 notes and subtrees and holds the ref back saying so; 2,000 honest
# notes on another ref pass and reach the host's git.
@test "escape: review-dos: a notes ref bringing more notes than the review reads is held back saying so" {
  host_repo plain
  local gen='import sys
n, ref = int(sys.argv[1]), sys.argv[2].encode()
o = sys.stdout.buffer
o.write(b"commit %s\ncommitter a <a@b> 0 +0000\ndata 1\nn\n" % ref)
for i in range(n):
    b = b"note %d\n" % i
    h = b"%040x" % (i * 2654435761 % (1 << 160))
    o.write(b"M 100644 inline %s/%s\ndata %d\n%s\n" % (h[:2], h[2:], len(b), b))'
  bundle_usr "set -e; cd /workspace; printf '%s\n' '$gen' >/tmp/gen.py
    python3 /tmp/gen.py 12000 refs/notes/commits | git fast-import --quiet
    python3 /tmp/gen.py 2000 refs/notes/honest | git fast-import --quiet
    test \$(git ls-tree -r refs/notes/commits | wc -l) = 12000 && echo PLANTED"
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] && [[ "$output" == *PLANTED* ]] || fail "plant: $output"
  run ar workspace "$ID" diff
  [ "$status" -eq 0 ] || fail "diff: $output"
  [[ "$output" == *"more new notes than agentrt reads (10,000"*"(ref \`refs/notes/commits\`)"* ]] || fail "diff: $output"
  marked .git/refs/notes/commits
  [ "$(jq -r '.changes[] | select(.path == ".git/refs/notes/honest") | .protected // "none"' <<<"$output")" = none ] ||
    fail "the honest notes ref is protected: $output"
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] || fail "commit: $output"
  ! git -C "$HOST" rev-parse -q --verify refs/notes/commits >/dev/null || fail "the notes ref arrived"
  [ "$(git -C "$HOST" notes --ref honest list | wc -l)" = 2000 ] || fail "the honest notes did not arrive"
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

# More of an honest agent's git: an interactive rebase driven by GIT_SEQUENCE_EDITOR (a squash),
# `git am` of a patch it made, `git bisect run` (then reset) and `git gc --aggressive`: its refs,
# reflogs, index and packs pass unmarked (only git's caches below .git/info and objects/info are
# left out) and the host's git has the history whole.  A host directory renamed with `git mv`
# fails with EXDEV (the overlay makes no directory redirects: README); `mv` and `git add -A`
# commit it as a rename the host's git status shows clean.
@test "workspace: an honest agent's rebase -i, am, bisect run, gc --aggressive and a directory moved with mv commit cleanly" {
  host_repo plain
  bundle_usr "set -e; cd /workspace; export GIT_EDITOR=true
    echo 1 >f && git add f && git commit -qm one && echo 2 >f && git commit -qam two && git commit -q --allow-empty -m three
    git bisect start HEAD HEAD~3 >/dev/null; git bisect run sh -c '! grep -qs 2 f' >/tmp/bisect
    grep -q 'is the first bad commit' /tmp/bisect; git bisect reset >/dev/null 2>&1
    GIT_SEQUENCE_EDITOR='sed -i 2s/^pick/squash/' git rebase -q -i HEAD~2
    echo z >>a.txt && git commit -qam z && git format-patch -q -1 -o /tmp/p && git reset -q --hard HEAD~1 && git am -q /tmp/p/*.patch
    if git mv src src2 2>/tmp/err; then exit 9; fi; grep -q 'cross-device' /tmp/err
    mv src src2 && git add -A && git commit -qm moved
    git gc -q --aggressive && echo PLANTED"
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] && [[ "$output" == *PLANTED* ]] || fail "plant: $output"
  run ar workspace "$ID" diff --format json
  local bad
  bad=$(jq -r '.changes[] | select(.protected != null) | .path' <<<"$output" | grep -vxE '\.git/(COMMIT_EDITMSG|info/refs|objects/info/(packs|commit-graph))') &&
    fail "protected: $bad"
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] || fail "commit: $output"
  [ "$(git -C "$HOST" log --format=%s)" = "$(printf 'moved\nz\ntwo\none\nbase')" ] ||
    fail "log: $(git -C "$HOST" log --format=%s)"
  [ -z "$(git -C "$HOST" status --porcelain)" ] && [ -f "$HOST/src2/main.c" ] && [ ! -e "$HOST/src" ] ||
    fail "status: $(git -C "$HOST" status --porcelain)"
  git -C "$HOST" fsck --no-progress >/dev/null 2>&1 || fail "fsck: $(git -C "$HOST" fsck 2>&1)"
}

# The same with a deep tree and a directory whose name holds a newline and an escape: `git mv`
# fails with EXDEV, `mv` copies; diff lists every file as renamed (quoted names), commit applies
# it, the host's git status is clean and `git log --follow` follows each file through the rename.
@test "workspace: a 40-deep host tree and a directory named with control characters moved with mv commit as renames" {
  host_repo plain
  local d=deep i ctl
  ctl=$(printf 'c\nd\033e')
  for i in $(seq 1 40); do d=$d/l$i; done
  mkdir -p "$HOST/$d" "$HOST/$ctl"
  echo bottom >"$HOST/$d/f.txt" && echo top >"$HOST/deep/g.txt" && echo ctl >"$HOST/$ctl/h.txt"
  git -C "$HOST" add -A && git -C "$HOST" commit -qm tree
  bundle_usr "set -e; cd /workspace
    if git mv deep deep2 2>/tmp/err; then exit 9; fi; grep -q 'cross-device' /tmp/err
    mv deep deep2 && mv \"\$(printf 'c\\nd\\033e')\" ctl2 && git add -A && git commit -qm moved && echo PLANTED"
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] && [[ "$output" == *PLANTED* ]] || fail "plant: $output"
  run ar workspace "$ID" diff --format json
  [ "$status" -eq 0 ] || fail "diff: $output"
  [ "$(jq -r --arg c "$ctl" '[.changes[] | select(.kind == "renamed" and (.old_path | startswith("deep/") or startswith($c + "/")))
      | "\(.old_path)>\(.path)"] | sort | join(" ")' <<<"$output")" = \
    "$ctl/h.txt>ctl2/h.txt deep/g.txt>deep2/g.txt $d/f.txt>deep2/${d#deep/}/f.txt" ] || fail "renames: $output"
  run ar workspace "$ID" diff
  ! grep -q $'\033' <<<"$output" || fail "raw escape in the diff"
  [[ "$output" == *'"c\nd\033e/h.txt"'* ]] || fail "diff: $output"
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] || fail "commit: $output"
  [ -z "$(git -C "$HOST" status --porcelain)" ] || fail "status: $(git -C "$HOST" status --porcelain)"
  [ ! -e "$HOST/deep" ] && [ ! -e "$HOST/$ctl" ] && [ "$(cat "$HOST/ctl2/h.txt")" = ctl ] || fail "host: $(ls -A "$HOST")"
  [ "$(git -C "$HOST" log --follow --format=%s -- "deep2/${d#deep/}/f.txt" | tr '\n' ' ')" = "moved tree " ] ||
    fail "log --follow: $(git -C "$HOST" log --follow --format=%s --name-status -- "deep2/${d#deep/}/f.txt")"
  [ "$(git -C "$HOST" log --follow --format=%s -- ctl2/h.txt | tr '\n' ' ')" = "moved tree " ] || fail "log --follow ctl2"
}

# A host repository in SHA-256 (`git init --object-format=sha256`) is reviewed as a SHA-1 one:
# the agent's commits, a branch, an annotated tag and `git gc` pass unmarked and the host's
# git has them whole (`git fsck`), and a commit of a `.envrc` on another branch (after the gc:
# a loose ref) is held back, its history read with 32-byte ids.
@test "workspace: a SHA-256 host repository: honest commits, a tag and gc pass, a .envrc in history is held back" {
  requires_git
  host_git_env
  git -C "$HOST" init -q --object-format=sha256 && git -C "$HOST" add -A && git -C "$HOST" commit -q -m base
  bundle_usr "set -e; cd /workspace; echo w >>a.txt && git commit -qam w && git checkout -q -b f
    echo v >>b.txt && git commit -qam v && git tag -a -m t t1 && git gc -q && git checkout -q -b bad
    echo 'touch /tmp/x' >.envrc && git add -f .envrc && git commit -qm tidy && git checkout -q f
    git rev-parse HEAD | grep -qE '^[0-9a-f]{64}\$' && echo PLANTED"
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] && [[ "$output" == *PLANTED* ]] || fail "plant: $output"
  run ar workspace "$ID" diff
  [[ "$output" == *"a commit with a new or changed entry on the protected list"*"(ref \`refs/heads/bad\`)"* ]] ||
    fail "diff: $output"
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] || fail "commit: $output"
  [ "$(git -C "$HOST" log --format=%s f)" = "$(printf "v\nw\nbase")" ] || fail "log: $(git -C "$HOST" log --oneline --all): $output"
  [ "$(git -C "$HOST" tag -n1 t1)" = "t1              t" ] || fail "tag: $(git -C "$HOST" tag -n1)"
  ! git -C "$HOST" rev-parse -q --verify refs/heads/bad >/dev/null || fail "the .envrc branch arrived"
  git -C "$HOST" fsck --no-progress >/dev/null 2>&1 || fail "fsck: $(git -C "$HOST" fsck 2>&1)"
}

# An index whose entries keep the host's git status from showing their files: skip-worktree
# (what `git sparse-checkout set` gives every file outside its cone) and assume-unchanged.
# Committed, the sparse set's deletions emptied the host's data/ while the host's `git status`
# said clean, and neither `git checkout -- .` nor `git reset --hard` brought it back.  Now such
# an index is left out (unless the host's index has the same bits): the deletions and the change
# show in the host's git status, and git restores them.
# hidden-by-gitignore: the agent edits .gitignore (honest work, committed) and adds files that
# it, a .gitignore of its own in a subdirectory, or the host's .git/info/exclude ignore: after
# commit the operator's `git status` and `git diff` never show them, while `workspace diff`
# listed them among the rest.  The review marks each new file the resulting ignore files match,
# naming the file and the pattern, and the host's git agrees file by file (`git check-ignore`);
# a file re-included by `!pattern` and an ordinary new file are not marked.
@test "workspace: hidden-by-gitignore: new files the resulting .gitignore hides from the host's git status are marked in diff" {
  host_repo plain
  printf '*.tmp\n' >>"$HOST/.git/info/exclude"
  bundle_usr "set -e; cd /workspace; printf 'secret*\nbuild/\n*.log\n!keep.log\n' >>.gitignore
    echo x >secret-tool.sh; mkdir -p build/sub src/gen; echo y >build/sub/out.o; echo l >app.log
    echo k >keep.log; echo n >notes.md; printf '*.bin\n' >src/gen/.gitignore; echo b >src/gen/blob.bin
    echo t >scratch.tmp; echo PLANTED"
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] && [[ "$output" == *PLANTED* ]] || fail "plant: $output"
  run ar workspace "$ID" diff --format json
  [ "$status" -eq 0 ] || fail "diff: $output"
  local json=$output p
  local ignored=(secret-tool.sh build/sub/out.o app.log src/gen/blob.bin scratch.tmp) shown=(keep.log notes.md .gitignore src/gen/.gitignore)
  for p in "${ignored[@]}"; do
    [ "$(jq -r --arg p "$p" '.changes[] | select(.path == $p) | .ignored // "none"' <<<"$json")" != none ] ||
      fail "$p not marked ignored: $json"
  done
  for p in "${shown[@]}"; do
    [ "$(jq -r --arg p "$p" '.changes[] | select(.path == $p) | .ignored // "none"' <<<"$json")" = none ] ||
      fail "$p marked ignored: $json"
  done
  run ar workspace "$ID" diff
  [[ "$output" == *"secret-tool.sh  (file, 2 bytes)  [new, ignored by git: \`.gitignore\` \`secret*\`"* ]] || fail "diff: $output"
  [[ "$output" == *"src/gen/blob.bin  (file, 2 bytes)  [new, ignored by git: \`src/gen/.gitignore\` \`*.bin\`"* ]] || fail "diff: $output"
  [[ "$output" == *"scratch.tmp  (file, 2 bytes)  [new, ignored by git: \`.git/info/exclude\` \`*.tmp\`"* ]] || fail "diff: $output"
  [[ "$output" == *"# 5 new files the host's git ignores"* ]] || fail "diff: $output"
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] || fail "commit: $output"
  # what the host's git does with them: the marked ones are in no `git status`
  local st
  st=$(git -C "$HOST" status --porcelain --untracked-files=all)
  for p in "${ignored[@]}"; do
    [ -e "$HOST/$p" ] && git -C "$HOST" check-ignore -q "$p" && [[ "$st" != *"$p"* ]] ||
      fail "$p: the host's git does not ignore it: $st"
  done
  for p in keep.log notes.md src/gen/.gitignore; do
    ! git -C "$HOST" check-ignore -q "$p" && [[ "$st" == *"$p"* ]] || fail "$p: the host's git ignores it: $st"
  done
}

# ignore-dos, as an agent does it: it writes into its workspace a .gitignore of 1 MiB, one
# character a line (half a million patterns), hardlinked into 64 directories with 20 new files
# each, a chain of 100 nested directories each with a .gitignore of `**/**/**/...` and
# `*a*a*a...` patterns above a file with a long name of a's, and such patterns at the top.
# Read without limits that is gigabytes of patterns and billions of matches.  The host's
# `workspace diff` and `commit` must end within 120 s and 1 GiB of address space (prlimit; not
# for a sanitizer build, whose shadow is terabytes of it) and mark every new file they could
# not decide as ignored (erring towards marking: unmarked, it would be hidden from the review).
@test "workspace: ignore-dos: an agent's hostile .gitignore files: diff and commit end in bounded time and memory and mark the undecided files" {
  bundle_usr 'set -e; cd /workspace
    printf "%s\n" b c d e f g h i j k l m n o p q r s t u >b0
    for i in $(seq 1 15); do cat b$((i - 1)) b$((i - 1)) >b$i; rm b$((i - 1)); done
    mkdir dos; head -c 1048576 b15 >dos/.gitignore; rm b15
    for d in $(seq 0 63); do
      mkdir dos/d$d; ln dos/.gitignore dos/d$d/.gitignore
      for f in $(seq 0 19); do echo x >dos/d$d/a$f.txt; done
    done
    stars="**"; as=""; long=""
    for i in $(seq 1 300); do stars="$stars/**"; done; stars="$stars/zz"
    for i in $(seq 1 120); do as="$as*a"; done; as="$as[!a]"
    for i in $(seq 1 250); do long="${long}a"; done
    p=deep; for i in $(seq 1 100); do p=$p/n; done; mkdir -p $p
    q=deep; for i in $(seq 1 100); do printf "%s\n%s\n!%s\n" "$stars" "$as" "$as" >$q/.gitignore; q=$q/n; done
    echo x >$p/$long; echo x >deep/$long
    printf "%s\n%s\n%s/\n" "$stars" "$as" "$stars" >.gitignore
    echo PLANTED'
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] && [[ "$output" == *PLANTED* ]] || fail "plant: $output"
  local bound=(timeout --kill-after=5 120)
  grep -qa __asan_init "$AGENTRT" || bound+=(prlimit --as=$((1 << 30)) --)
  local start=$SECONDS
  run "${bound[@]}" "$AGENTRT" --root "$ROOT" workspace "$ID" diff --format json
  [ "$status" -eq 0 ] || fail "diff --format json: status $status after $((SECONDS - start)) s: ${output:0:2000}"
  local json=$output n marked undecided
  n=$(jq '[.changes[] | select(.path | test("^dos/d[0-9]+/a[0-9]+\\.txt$"))] | length' <<<"$json")
  marked=$(jq '[.changes[] | select(.path | test("^dos/d[0-9]+/a[0-9]+\\.txt$")) | select(.ignored != null)] | length' <<<"$json")
  undecided=$(jq '[.changes[] | select(.ignored != null) | select(.ignored | test("not read whole|budget|not decided"))] | length' <<<"$json")
  echo "# diff: $((SECONDS - start)) s, $n new files under dos/, $marked marked, $undecided as undecided" >&3
  [ "$n" -eq 1280 ] || fail "diff lists $n of the 1280 new files under dos/"
  [ "$marked" -eq 1280 ] || fail "only $marked of the 1280 new files under dos/ are marked"
  [ "$undecided" -gt 0 ] || fail "no file marked as undecided: $(jq -c '[.changes[] | select(.ignored != null) | .ignored] | unique' <<<"$json")"
  jq -e --arg p "deep/$(printf 'n/%.0s' $(seq 100))$(printf 'a%.0s' $(seq 250))" \
    '.changes[] | select(.path == $p)' <<<"$json" >/dev/null || fail "the deepest file is not listed"
  run "${bound[@]}" "$AGENTRT" --root "$ROOT" workspace "$ID" diff
  [ "$status" -eq 0 ] || fail "diff: status $status: ${output:0:2000}"
  [[ "$output" == *"new files the host's git ignores"* ]] || fail "diff does not say: ${output: -2000}"
  start=$SECONDS
  run "${bound[@]}" "$AGENTRT" --root "$ROOT" workspace "$ID" commit
  [ "$status" -eq 0 ] || fail "commit: status $status after $((SECONDS - start)) s: ${output:0:2000}"
  echo "# commit: $((SECONDS - start)) s" >&3
  [ "$(find "$HOST/dos" -name 'a*.txt' | wc -l)" -eq 1280 ] && [ -f "$HOST/dos/d63/.gitignore" ] ||
    fail "the commit did not write the agent's files: $(find "$HOST/dos" -name 'a*.txt' | wc -l)"
}

# terminal-inject-review-marks: the marks `workspace diff` puts after a path quote what the agent
# wrote: the .gitignore file and pattern that hide a new file, the nested repository whose new
# objects are held back.  The paths themselves were quoted (core.quotePath), the marks were not: a
# directory or pattern named with a terminal's escape sequences repainted the operator's review.
@test "workspace: terminal-inject-review-marks: a .gitignore's path and pattern and a held-back repository's path with escape sequences are escaped in the marks diff prints" {
  local e
  e=$(printf '\033]0;PWNED\007\033[2J\r')
  bundle_for 'cd /workspace; E=$(printf "\033]0;PWNED\007\033[2J\r")
    mkdir -p "d$E" "r$E/.git/objects/ab" "r$E/.git/refs/heads"
    printf "*.log\nz${E}*\n" >"d$E/.gitignore"; echo x >"d$E/a.log"; echo y >"d$E/z${E}1"
    echo "ref: refs/heads/main" >"r$E/.git/HEAD"
    echo blob >"r$E/.git/objects/ab/cdef0123456789abcdef0123456789abcdef01"
    echo PLANTED'
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] && [[ "$output" == *PLANTED* ]] || fail "plant: $output"
  ar workspace "$ID" diff >"$T/diff.out" 2>&1 || fail "diff: $(cat -v "$T/diff.out")"
  ! LC_ALL=C grep -qaP '[\x00-\x09\x0b-\x1f\x7f]' "$T/diff.out" || fail "raw controls: $(cat -v "$T/diff.out")"
  # each mark still names what the agent wrote, escaped as its path is
  local q='d\033]0;PWNED\a\033[2J\r'
  grep -qF "[new, ignored by git: \`\"$q/.gitignore\"\` \`*.log\`" "$T/diff.out" || fail "file: $(cat -v "$T/diff.out")"
  grep -qF "\`\"$q/.gitignore\"\` \`\"z\\033]0;PWNED\\a\\033[2J\\r*\"\`" "$T/diff.out" ||
    fail "pattern: $(cat -v "$T/diff.out")"
  grep -qF "in the repository \`\"r\\033]0;PWNED\\a\\033[2J\\r/.git\"\`" "$T/diff.out" ||
    fail "repository: $(cat -v "$T/diff.out")"
  # the JSON keeps each path exact
  run ar workspace "$ID" diff --format json
  [ "$status" -eq 0 ] || fail "diff --format json: $output"
  [ "$(jq -r --arg p "d$e/a.log" '.changes[] | select(.path == $p) | .ignored' <<<"$output")" != null ] ||
    fail "json: $output"
}

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

# An honest agent rewrites its history (`git reset --hard`, a new commit, `git reflog expire`,
# `git gc --prune=now`): the commits it dropped leave the object store.  git's caches of it
# (the commit-graph, a multi-pack-index and the packs' bitmaps and reverse indexes) are the
# agent's to rebuild and are held back as above; the host's copies, left in place, named
# objects the committed repository no longer had: the host's `git fsck` failed ("Could not read
# ... failed to parse commit ... for commit-graph").  The host's copies go instead: git rebuilds
# them at its next gc.
@test "workspace: stale-commit-graph: after an agent's history rewrite and gc, the host's git fsck passes" {
  host_repo plain
  for i in 1 2 3 4; do echo "$i" >>"$HOST/a.txt" && git -C "$HOST" commit -qam "c$i"; done
  git -C "$HOST" repack -q -a -d --write-bitmap-index && git -C "$HOST" commit-graph write --reachable &&
    git -C "$HOST" multi-pack-index write
  [ -s "$HOST/.git/objects/info/commit-graph" ] && [ -s "$HOST/.git/objects/pack/multi-pack-index" ] &&
    ls "$HOST"/.git/objects/pack/*.bitmap >/dev/null || fail "the host has no caches: $(ls -R "$HOST/.git/objects")"
  local dropped
  dropped=$(git -C "$HOST" rev-parse HEAD)
  bundle_usr 'set -e; cd /workspace
    git reset -q --hard HEAD~2 && echo agent >b.txt && git add b.txt && git commit -qm agent
    git reflog expire --expire=now --all && git gc -q --prune=now
    git cat-file -e '"$dropped"' 2>/dev/null && echo STILL-THERE; echo GIT-OK'
  run ar run --bundle "$BUNDLE" "$ID"
  check_git_output
  [[ "$output" != *STILL-THERE* ]] || fail "gc kept the dropped commit: nothing to prove"
  run ar workspace "$ID" diff
  local shown=$output
  run ar workspace "$ID" diff --format json
  local diff=$output
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] || fail "commit: $output"
  [ "$(git -C "$HOST" log --format=%s -1)" = agent ] || fail "$(git -C "$HOST" log --oneline | head -3)"
  ! git -C "$HOST" cat-file -e "$dropped" 2>/dev/null || fail "the dropped commit is still on the host"
  run git -C "$HOST" fsck --no-progress
  [ "$status" -eq 0 ] && [[ "$output" != *"commit-graph"* ]] ||
    fail "the host's fsck: $output; diff: $(jq -c '[.changes[] | select(.path | test("objects/")) | [.kind, .path, .protected]]' <<<"$diff")"
  git -C "$HOST" commit-graph verify || fail "commit-graph verify"
  # what commit did to the host's caches, the review showed: deletions, not held back
  for f in .git/objects/info/commit-graph .git/objects/pack/multi-pack-index; do
    [[ "$shown" == *"deleted   $f  (file, "*" bytes)"$'\n'* ]] || fail "diff does not show $f deleted: $shown"
  done
  [ ! -e "$HOST/.git/objects/info/commit-graph" ] || fail "the agent's commit-graph reached the host"
  # the agent's own caches stay out; git rebuilds the host's at its next gc
  [ -z "$(ls "$HOST/.git/objects/pack" | grep -E 'multi-pack|bitmap|\.rev$')" ] || fail "$(ls "$HOST/.git/objects/pack")"
  git -C "$HOST" gc -q && git -C "$HOST" fsck --no-progress && [ -s "$HOST/.git/objects/info/commit-graph" ] ||
    fail "the host's gc: $(git -C "$HOST" fsck 2>&1 | head -5)"
}

# The operator's repository is the operator's uid's; the agent runs as root (Docker's default) or
# as another uid.  git (2.35.2 and later) refuses a repository another uid owns ("detected
# dubious ownership"), so the agent's first `git status` failed in every new container.  The
# profile's env.defaults trust every directory (safe.directory, through GIT_CONFIG_COUNT): every
# uid of the container is the agent's, and the host's git never reads its environment.
@test "workspace: git-dubious-ownership: git works in a host repository another uid owns" {
  host_repo plain
  chown -R 1000:1000 "$HOST"
  bundle_usr 'set -e; cd /workspace; git status --porcelain; git log --format=%s -1
    echo agent >n.txt && git add n.txt && git commit -qm agent; git -C /workspace log --format=%s -1; echo GIT-OK'
  # root with Docker's CAP_DAC_OVERRIDE writes into the operator's directory, as under Docker
  jq '.process.capabilities |= with_entries(.value += ["CAP_DAC_OVERRIDE"])' "$BUNDLE/config.json" >"$T/c.json" &&
    mv "$T/c.json" "$BUNDLE/config.json"
  run ar run --bundle "$BUNDLE" "$ID"
  check_git_output
  [[ "$output" == *$'base\n'*$'agent\nGIT-OK'* ]] || fail "$output"
  run ar workspace "$ID" diff
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] || fail "commit: $output"
  [ "$(git -c safe.directory='*' -C "$HOST" log --format=%s -1)" = agent ] || fail "host: $(git -c safe.directory='*' -C "$HOST" log --oneline 2>&1)"
  # control: an engine's own GIT_CONFIG_COUNT is kept, and git refuses as without the profile
  ar delete --force "$ID" && ar workspace "$ID" purge
  jq '.process.env += ["GIT_CONFIG_COUNT=0"]' "$BUNDLE/config.json" >"$T/c.json" && mv "$T/c.json" "$BUNDLE/config.json"
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -ne 0 ] && [[ "$output" == *"dubious ownership"* ]] || fail "control: $output"
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
  # objects/ab/ may hold one of the host's own (its random data/app.db): the agent's names only
  [ ! -e "$HOST/.git/objects/Pack" ] && [ ! -e "$HOST/.git/objects/2E" ] &&
    [ ! -e "$HOST/.git/objects/ab/cdef0123456789012345678901234567890123." ] &&
    [ ! -e "$HOST/.git/objects/ab/CDEF012345678901234567890123456789012a" ] ||
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
