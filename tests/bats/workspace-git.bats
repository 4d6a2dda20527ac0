#!/usr/bin/env bats
# workspace-git.bats - the review and git: what an agent writes into a repository's .git and
# work tree (hooks, config, attributes, index, nested and bare repositories, files host tools
# load) never runs on the host or hides a change from the operator's git.  The history (refs,
# commits, packs) is workspace-history.bats; both share workspace.bats' set-up
# (workspace-common.bash), split so that they run side by side.

load workspace-common

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

# The overlay makes no directory redirects, so moving a host directory into .git/hooks (or
# putting another host directory in place of .git) fails with EXDEV and `mv` copies it: the hook
# arrives as a rename from tools/ (or .git/config as a modification), and either is held back.
@test "escape: a host directory moved into .git/hooks (mv .git/hooks away, mv tools .git/hooks)" {
  HOST_SETUP='mkdir tools && printf "#!/bin/sh\ntouch $MARK\n" >tools/pre-commit && chmod +x tools/pre-commit' \
    escape hooks-moved 'mv .git/hooks .git/hooks.orig && mv tools .git/hooks && [ -x .git/hooks/pre-commit ] &&
      [ ! -e tools ]' "" .git/hooks/pre-commit
}

@test "escape: .git renamed and a host directory with core.fsmonitor moved to .git" {
  host_repo plain
  MARK=$T/marker-git-moved
  (cd "$HOST" && mkdir evil && cp -r .git/objects .git/refs .git/HEAD evil/ && eval "$FSMON" >evil/config)
  bundle_for "cd /workspace && mv .git .git.orig && mv evil .git && grep -q fsmonitor .git/config && echo PLANTED"
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] && [[ "$output" == *PLANTED* ]] || fail "plant: $output"
  marked .git/config
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] && [[ "$output" == *"left out .git/config"* ]] || fail "commit: $output"
  ! grep -q fsmonitor "$HOST/.git/config" || fail "the agent's config reached the host"
  git -C "$HOST" --no-optional-locks status >/dev/null 2>&1 || true
  [ ! -e "$MARK" ] || fail "the agent's core.fsmonitor ran on the host after commit"
  # control: the same config committed on purpose does run it
  run ar workspace "$ID" commit --include-protected .git/config
  [ "$status" -eq 0 ] || fail "commit --include-protected: $output"
  git -C "$HOST" --no-optional-locks status >/dev/null 2>&1 || true
  [ -e "$MARK" ] || fail "control: the planted core.fsmonitor did not run even when committed"
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

# pip reads the pip.conf of the venv it runs in (its "site" file) and re-runs itself under the
# interpreter its `python` option names: the agent's `.venv/pip.conf` naming a script of its
# own ran that script at the operator's next `pip list`.  direnv's `layout python` puts
# `.direnv/python-<version>/bin` first on the operator's PATH on every cd into the directory
# (and nix-direnv sources the environment it cached in `.direnv/`): the agent's
# `.direnv/python-3/bin/git` ran in place of git.
@test "escape: pip-conf-python: a venv's pip.conf whose python option runs the agent's script, and .direnv/ on the PATH direnv gives the shell" {
  command -v python3 >/dev/null && python3 -m venv "$HOST/.venv" >/dev/null 2>&1 || skip "needs python3 -m venv"
  "$HOST/.venv/bin/pip" --version >/dev/null 2>&1 || skip "no pip in the venv"
  requires_git
  host_repo plain
  mkdir -p "$HOST/.direnv/python-3/bin" # what the operator's direnv made (layout python)
  MARK=$T/marker-pip DMARK=$T/marker-direnv
  bundle_for "cd /workspace && mkdir -p tools && printf '#!/bin/sh\ntouch $MARK\nexit 1\n' >tools/py.sh &&
    chmod 755 tools/py.sh && printf '[global]\npython = $HOST/tools/py.sh\n' >.venv/pip.conf &&
    printf '#!/bin/sh\ntouch $DMARK\n' >.direnv/python-3/bin/git && chmod 755 .direnv/python-3/bin/git &&
    echo ok >ok.txt"
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] || fail "plant: $output"
  marked .venv/pip.conf .direnv/python-3/bin/git
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] || fail "commit: $output"
  [ "$(cat "$HOST/ok.txt")" = ok ] && [ -x "$HOST/tools/py.sh" ] || fail "the rest was not committed"
  [ ! -e "$HOST/.venv/pip.conf" ] && [ ! -e "$HOST/.direnv/python-3/bin/git" ] || fail "reached the host"
  # the operator's pip, and git in a shell where direnv's layout python is loaded
  (cd "$HOST" && .venv/bin/pip list) >/dev/null 2>&1 </dev/null || true
  (cd "$HOST" && PATH=$HOST/.direnv/python-3/bin:$PATH git status) >/dev/null 2>&1 </dev/null || true
  [ ! -e "$MARK" ] || fail "the agent's pip.conf ran its script on the host"
  [ ! -e "$DMARK" ] || fail "the agent's .direnv/ program ran on the host"
  # control: committed, both run (the attacks are real)
  run ar workspace "$ID" commit --include-protected .venv/pip.conf --include-protected .direnv
  [ "$status" -eq 0 ] || fail "commit --include-protected: $output"
  (cd "$HOST" && .venv/bin/pip list) >/dev/null 2>&1 </dev/null || true
  (cd "$HOST" && PATH=$HOST/.direnv/python-3/bin:$PATH git status) >/dev/null 2>&1 </dev/null || true
  [ -e "$MARK" ] || fail "control: pip did not run the script pip.conf names"
  [ -e "$DMARK" ] || fail "control: the shell did not run .direnv's git"
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

# Shell and editor loaders that run a project file when the operator enters the directory or
# opens a file in it, as direnv runs `.envrc`: RVM sources `.rvmrc`, rbenv-vars exports
# `.rbenv-vars` (RUBYOPT) to every Ruby command, zsh-autoenv sources `.autoenv.zsh` and
# `.autoenv_leave.zsh`, the localvimrc plugin sources `.lvimrc`.
@test "workspace: the list's loaders of directory files (.rvmrc, .rbenv-vars, .autoenv.zsh, .autoenv_leave.zsh, .lvimrc)" {
  bundle_for "cd /workspace && mkdir -p sub && for f in .rvmrc .rbenv-vars sub/.autoenv.zsh sub/.autoenv_leave.zsh .lvimrc; do
      echo x >\$f; done && echo ok >rvmrc.txt"
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] || fail "plant: $output"
  marked .rvmrc .rbenv-vars sub/.autoenv.zsh sub/.autoenv_leave.zsh .lvimrc
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] || fail "commit: $output"
  for p in .rvmrc .rbenv-vars sub/.autoenv.zsh sub/.autoenv_leave.zsh .lvimrc; do
    [ ! -e "$HOST/$p" ] || fail "$p reached the host"
  done
  [ "$(cat "$HOST/rvmrc.txt")" = ok ] || fail "rvmrc.txt was not committed"
}

# Overlay mode reviews names, and the host's own symlinks give a protected name another path:
# `.pdbrc -> tools/pdbrc` (pdb runs .pdbrc's commands at start, through the link) and
# `.vscode -> editor` (dotfiles kept in a tracked directory).  The agent's edit of the target
# was an ordinary change; python -m pdb on the host ran it.
@test "escape: protected-name-symlink: the host's .pdbrc and .vscode are symlinks to tracked paths the agent edits" {
  command -v python3 >/dev/null || skip "needs python3"
  MARK=$T/marker-pdbrc
  mkdir -p "$HOST/tools" "$HOST/editor"
  echo 'alias ll list' >"$HOST/tools/pdbrc" && ln -s tools/pdbrc "$HOST/.pdbrc"
  echo '{}' >"$HOST/editor/tasks.json" && ln -s editor "$HOST/.vscode"
  echo 'x = 1' >"$HOST/s.py"
  bundle_for "cd /workspace && echo 'import os; open(\"$MARK\", \"w\")' >tools/pdbrc &&
    echo '{\"tasks\": []}' >editor/tasks.json && echo more >>a.txt"
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] || fail "plant: $output"
  marked tools/pdbrc editor/tasks.json
  run ar workspace "$ID" diff
  [[ "$output" == *"tools/pdbrc"*'a symlink) `.pdbrc`'* && "$output" == *"editor/tasks.json"*'`.vscode`'* ]] ||
    fail "diff: $output"
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] && [[ "$output" == *"left out tools/pdbrc"* ]] || fail "commit: $output"
  [ "$(tail -n1 "$HOST/a.txt")" = more ] && [ "$(cat "$HOST/editor/tasks.json")" = '{}' ] || fail "commit applied the wrong set"
  (cd "$HOST" && python3 -m pdb s.py) </dev/null >/dev/null 2>&1 || true
  [ ! -e "$MARK" ] || fail "the agent's .pdbrc commands ran on the host"
  # control: included, the host's pdb runs it through the link
  run ar workspace "$ID" commit --include-protected tools/pdbrc
  [ "$status" -eq 0 ] || fail "commit --include-protected: $output"
  (cd "$HOST" && python3 -m pdb s.py) </dev/null >/dev/null 2>&1 || true
  [ -e "$MARK" ] || fail "control: pdb did not run the .pdbrc it reached through the link"
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

# The way hooks were shared before core.hooksPath, and still common: a hook in the host's
# `.git/hooks/` that is a symlink to a tracked script (`ln -s ../../scripts/pre-commit`), a
# hook that runs one (`exec ./tools/check-msg.sh "$1"`), or `.git/hooks` itself a symlink to
# a tracked directory.  The agent's edit of the tracked script was an ordinary change, and
# the operator's next `git commit` ran it.
@test "escape: hook-runs-worktree-file: a host hook that is a symlink to, or runs, a tracked script (and .git/hooks a symlink to a tracked directory)" {
  host_repo plain
  MARK=$T/marker-hooklink
  mkdir -p "$HOST/scripts" "$HOST/tools" "$HOST/sub/hooks"
  printf '#!/bin/sh\nexit 0\n' >"$HOST/scripts/pre-commit"
  printf '#!/bin/sh\nexit 0\n' >"$HOST/tools/check-msg.sh"
  printf '#!/bin/sh\nexit 0\n' >"$HOST/sub/hooks/pre-commit"
  chmod +x "$HOST/scripts/pre-commit" "$HOST/tools/check-msg.sh" "$HOST/sub/hooks/pre-commit"
  ln -s ../../scripts/pre-commit "$HOST/.git/hooks/pre-commit"
  printf '#!/bin/sh\nexec ./tools/check-msg.sh "$1"\n' >"$HOST/.git/hooks/commit-msg"
  chmod +x "$HOST/.git/hooks/commit-msg"
  git init -q "$HOST/sub" && rm -rf "$HOST/sub/.git/hooks" && ln -s ../hooks "$HOST/sub/.git/hooks"
  git -C "$HOST/sub" add -A && git -C "$HOST/sub" commit -q -m sub
  git -C "$HOST" add scripts tools && git -C "$HOST" commit -q -m hooks
  bundle_for "cd /workspace && printf '#!/bin/sh\ntouch $MARK\n' >scripts/pre-commit &&
    printf '#!/bin/sh\ntouch $MARK.msg\n' >tools/check-msg.sh &&
    printf '#!/bin/sh\ntouch $MARK.sub\n' >sub/hooks/pre-commit && echo more >>a.txt && echo more >>sub/x.txt"
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] || fail "run: $output"
  marked scripts/pre-commit tools/check-msg.sh sub/hooks/pre-commit
  run ar workspace "$ID" diff
  [[ "$output" == *"scripts/pre-commit"*'`.git/hooks/pre-commit`'* ]] || fail "diff: $output"
  [[ "$output" == *"tools/check-msg.sh"*'`.git/hooks/commit-msg`'* ]] || fail "diff: $output"
  [[ "$output" == *"sub/hooks/pre-commit"*'`sub/.git/hooks`'* ]] || fail "diff: $output"
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] && [[ "$output" == *"left out scripts/pre-commit"* ]] || fail "commit: $output"
  [ "$(tail -n1 "$HOST/a.txt")" = more ] || fail "a.txt not committed"
  host_git sub
  [ ! -e "$MARK" ] && [ ! -e "$MARK.msg" ] && [ ! -e "$MARK.sub" ] ||
    fail "the agent's code ran on the host: $(ls "$T" | grep marker)"
  # control: the same files included by hand do run
  run ar workspace "$ID" commit --include-protected scripts/pre-commit --include-protected tools/check-msg.sh \
    --include-protected sub/hooks/pre-commit
  [ "$status" -eq 0 ] || fail "commit --include-protected: $output"
  echo more2 >>"$HOST/a.txt" && echo more2 >>"$HOST/sub/x.txt"
  host_git sub
  [ -e "$MARK" ] && [ -e "$MARK.msg" ] && [ -e "$MARK.sub" ] ||
    fail "control: the included hooks did not run: $(ls "$T" | grep marker)"
}

# The same through a symlink of the host's: `core.hooksPath = .githooks` where `.githooks` is
# a symlink to the tracked `tools/hooks`; the agent's edit of `tools/hooks/pre-commit` is not a
# path the config names by its letters, and git ran it through the link.
@test "escape: hook-runs-worktree-file: core.hooksPath names a host symlink to a tracked directory (.githooks -> tools/hooks)" {
  host_repo plain
  MARK=$T/marker-hookspath-link
  mkdir -p "$HOST/tools/hooks"
  printf '#!/bin/sh\nexit 0\n' >"$HOST/tools/hooks/pre-commit" && chmod +x "$HOST/tools/hooks/pre-commit"
  ln -s tools/hooks "$HOST/.githooks"
  git -C "$HOST" config core.hooksPath .githooks
  git -C "$HOST" add -A && git -C "$HOST" commit -q -m hooks
  bundle_for "cd /workspace && printf '#!/bin/sh\ntouch $MARK\n' >tools/hooks/pre-commit && echo more >>a.txt"
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] || fail "run: $output"
  marked tools/hooks/pre-commit
  run ar workspace "$ID" diff
  [[ "$output" == *"tools/hooks/pre-commit"*"core.hooksPath"* ]] || fail "diff: $output"
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] && [[ "$output" == *"left out tools/hooks/pre-commit"* ]] || fail "commit: $output"
  host_git
  [ ! -e "$MARK" ] || fail "the agent's hook ran on the host"
  run ar workspace "$ID" commit --include-protected tools/hooks/pre-commit
  [ "$status" -eq 0 ] || fail "commit --include-protected: $output"
  echo more2 >>"$HOST/a.txt"
  host_git
  [ -e "$MARK" ] || fail "control: the included hook did not run"
}

# The host's configuration and hooks name files; the agent replaced the directory above such a
# file by a symlink to a directory of its own: `conf -> evil` under `include.path =
# ../conf/git.inc`, `scripts -> evil2` under `.git/hooks/pre-commit -> ../../scripts/pre-commit`.
# The symlinks stay in the workspace (rule 6 passed them) and named no file the rules name;
# git read the agent's `evil/git.inc` and ran its `evil2/pre-commit` through them.
@test "escape: named-parent-replaced: the directory above a file the host's config or hook names, replaced by a symlink to the agent's" {
  host_repo plain
  MARK=$T/marker-parent
  mkdir -p "$HOST/conf" "$HOST/scripts"
  printf '[alias]\n\tst = status\n' >"$HOST/conf/git.inc"
  printf '#!/bin/sh\nexit 0\n' >"$HOST/scripts/pre-commit" && chmod +x "$HOST/scripts/pre-commit"
  git -C "$HOST" config include.path ../conf/git.inc
  ln -s ../../scripts/pre-commit "$HOST/.git/hooks/pre-commit"
  git -C "$HOST" add -A && git -C "$HOST" commit -q -m named
  bundle_for "cd /workspace && mkdir evil evil2 &&
    printf '[core]\n\tfsmonitor = \"touch $MARK.fsmon; false\"\n' >evil/git.inc && rm -rf conf && ln -s evil conf &&
    printf '#!/bin/sh\ntouch $MARK.hook\n' >evil2/pre-commit && chmod 755 evil2/pre-commit &&
    rm -rf scripts && ln -s evil2 scripts && echo more >>a.txt"
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] || fail "plant: $output"
  marked conf scripts
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] || fail "commit: $output"
  [ -d "$HOST/conf" ] && [ ! -L "$HOST/conf" ] && [ -d "$HOST/scripts" ] && [ ! -L "$HOST/scripts" ] ||
    fail "a named file's directory was replaced: $(ls -la "$HOST")"
  [ "$(tail -n1 "$HOST/a.txt")" = more ] || fail "a.txt not committed"
  host_git
  [ ! -e "$MARK.fsmon" ] && [ ! -e "$MARK.hook" ] || fail "the agent's code ran on the host: $(ls "$T" | grep marker)"
  # control: included, git reads and runs the agent's files through the symlinks
  run ar workspace "$ID" commit --include-protected conf --include-protected scripts
  [ "$status" -eq 0 ] || fail "commit --include-protected: $output"
  echo more2 >>"$HOST/a.txt"
  host_git
  [ -e "$MARK.fsmon" ] && [ -e "$MARK.hook" ] || fail "control: $(ls "$T" | grep marker)"
}

# A submodule's hooks live in the superproject's `.git/modules/<name>/hooks`, and a linked
# worktree's in its common dir (the host's `.git/hooks`), run at the top of the submodule or
# worktree: a hook there that is a symlink to the submodule's tracked script, or that runs one
# (`exec ./tools/check-msg.sh`), ran the agent's edit at the operator's next `git commit` in
# the submodule or worktree.
@test "escape: hook-runs-submodule-file: a submodule's or linked worktree's hook that is a symlink to, or runs, its tracked script" {
  host_repo
  MARK=$T/marker-subhook
  mkdir -p "$HOST/lib/scripts" "$HOST/lib/tools"
  printf '#!/bin/sh\nexit 0\n' >"$HOST/lib/scripts/pre-commit"
  printf '#!/bin/sh\nexit 0\n' >"$HOST/lib/tools/check-msg.sh"
  chmod +x "$HOST/lib/scripts/pre-commit" "$HOST/lib/tools/check-msg.sh"
  git -C "$HOST/lib" add -A && git -C "$HOST/lib" commit -q -m scripts
  [ -f "$HOST/lib/.git" ] && [ -d "$HOST/.git/modules/lib/hooks" ] || fail "set-up: lib is not a submodule"
  ln -s ../../../../lib/scripts/pre-commit "$HOST/.git/modules/lib/hooks/pre-commit"
  printf '#!/bin/sh\nexec ./tools/check-msg.sh "$1"\n' >"$HOST/.git/modules/lib/hooks/commit-msg"
  chmod +x "$HOST/.git/modules/lib/hooks/commit-msg"
  # a linked worktree in the host dir, with the host's hook running its tracked script
  mkdir -p "$HOST/wtools"
  printf '#!/bin/sh\nexit 0\n' >"$HOST/wtools/check.sh" && chmod +x "$HOST/wtools/check.sh"
  printf '#!/bin/sh\nexec ./wtools/check.sh\n' >"$HOST/.git/hooks/pre-commit" && chmod +x "$HOST/.git/hooks/pre-commit"
  git -C "$HOST" add -A && git -C "$HOST" commit -q -m base2
  git -C "$HOST" worktree add -q "$HOST/wt" 2>/dev/null
  [ -f "$HOST/wt/.git" ] && [ -f "$HOST/wt/wtools/check.sh" ] || fail "set-up: no linked worktree"
  bundle_for "cd /workspace && printf '#!/bin/sh\ntouch $MARK\n' >lib/scripts/pre-commit &&
    printf '#!/bin/sh\ntouch $MARK.msg\n' >lib/tools/check-msg.sh &&
    printf '#!/bin/sh\ntouch $MARK.wt\n' >wt/wtools/check.sh && echo more >>lib/x.txt && echo more >>wt/a.txt"
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] || fail "run: $output"
  marked lib/scripts/pre-commit lib/tools/check-msg.sh wt/wtools/check.sh
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] && [[ "$output" == *"left out lib/scripts/pre-commit"* ]] || fail "commit: $output"
  [ "$(tail -n1 "$HOST/lib/x.txt")" = more ] || fail "lib/x.txt not committed"
  sub_git() {
    local d
    for d in lib wt; do
      (cd "$HOST/$d" && git status && git add -A && git commit -q --allow-empty -m review) >/dev/null 2>&1 </dev/null || true
    done
  }
  sub_git
  [ ! -e "$MARK" ] && [ ! -e "$MARK.msg" ] && [ ! -e "$MARK.wt" ] ||
    fail "the agent's code ran on the host: $(ls "$T" | grep marker)"
  # control: the same files included by hand do run
  run ar workspace "$ID" commit --include-protected lib/scripts/pre-commit --include-protected lib/tools/check-msg.sh \
    --include-protected wt/wtools/check.sh
  [ "$status" -eq 0 ] || fail "commit --include-protected: $output"
  echo more2 >>"$HOST/lib/x.txt" && echo more2 >>"$HOST/wt/a.txt"
  sub_git
  [ -e "$MARK" ] && [ -e "$MARK.msg" ] && [ -e "$MARK.wt" ] ||
    fail "control: the included hooks did not run: $(ls "$T" | grep marker)"
}

# The operator's hooks kept outside the repository (`core.hooksPath = ~/ophooks` in
# ~/.gitconfig, or an absolute directory in .git/config) that name tracked files of the host
# dir: a hook that is a symlink to `$HOST/scripts/pre-commit`, or that runs `./tools/check-msg.sh`
# at the top of the work tree.  The agent's edit of those scripts ran at the next `git commit`.
@test "escape: hook-runs-hookspath-outside: a hook in a core.hooksPath outside the host dir linked to, or running, a tracked script" {
  host_repo plain
  MARK=$T/marker-hooksout
  mkdir -p "$HOST/scripts" "$HOST/tools" "$HOME/ophooks"
  printf '#!/bin/sh\nexit 0\n' >"$HOST/scripts/pre-commit"
  printf '#!/bin/sh\nexit 0\n' >"$HOST/tools/check-msg.sh"
  chmod +x "$HOST/scripts/pre-commit" "$HOST/tools/check-msg.sh"
  git -C "$HOST" add -A && git -C "$HOST" commit -q -m scripts
  ln -s "$HOST/scripts/pre-commit" "$HOME/ophooks/pre-commit"
  printf '#!/bin/sh\nexec ./tools/check-msg.sh "$1"\n' >"$HOME/ophooks/commit-msg" && chmod +x "$HOME/ophooks/commit-msg"
  git config --global core.hooksPath '~/ophooks'
  bundle_for "cd /workspace && printf '#!/bin/sh\ntouch $MARK\n' >scripts/pre-commit &&
    printf '#!/bin/sh\ntouch $MARK.msg\n' >tools/check-msg.sh && echo more >>a.txt"
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] || fail "run: $output"
  marked scripts/pre-commit tools/check-msg.sh
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] && [[ "$output" == *"left out scripts/pre-commit"* ]] || fail "commit: $output"
  [ "$(tail -n1 "$HOST/a.txt")" = more ] || fail "a.txt not committed"
  host_git
  [ ! -e "$MARK" ] && [ ! -e "$MARK.msg" ] || fail "the agent's code ran on the host: $(ls "$T" | grep marker)"
  # control: the same files included by hand do run
  run ar workspace "$ID" commit --include-protected scripts/pre-commit --include-protected tools/check-msg.sh
  [ "$status" -eq 0 ] || fail "commit --include-protected: $output"
  echo more2 >>"$HOST/a.txt"
  host_git
  [ -e "$MARK" ] && [ -e "$MARK.msg" ] || fail "control: the included hooks did not run: $(ls "$T" | grep marker)"
}

# A nested repository's own `.git/config` and a linked worktree's `config.worktree` set
# core.hooksPath to a tracked directory of theirs (`ci/hooks`, `.wthooks`): git ran the
# agent's edit of `sub/ci/hooks/pre-commit` or `wt/.wthooks/pre-commit` at the operator's next
# `git commit` there.
@test "escape: hook-runs-nested-hookspath: a nested repository's or worktree's own core.hooksPath naming its tracked hooks" {
  host_repo plain
  MARK=$T/marker-nestedhp
  mkdir -p "$HOST/sub/ci/hooks" "$HOST/.wthooks"
  printf '#!/bin/sh\nexit 0\n' >"$HOST/sub/ci/hooks/pre-commit"
  printf '#!/bin/sh\nexit 0\n' >"$HOST/.wthooks/pre-commit"
  chmod +x "$HOST/sub/ci/hooks/pre-commit" "$HOST/.wthooks/pre-commit"
  git init -q "$HOST/sub" && git -C "$HOST/sub" config core.hooksPath ci/hooks
  git -C "$HOST/sub" add -A && git -C "$HOST/sub" commit -q -m sub
  printf 'sub/\n' >"$HOST/.gitignore"
  git -C "$HOST" add -A && git -C "$HOST" commit -q -m base2
  git -C "$HOST" worktree add -q "$HOST/wt" 2>/dev/null
  echo wt/ >>"$HOST/.gitignore"
  git -C "$HOST" config extensions.worktreeConfig true && git -C "$HOST/wt" config --worktree core.hooksPath .wthooks
  [ -f "$HOST/wt/.git" ] && [ -x "$HOST/wt/.wthooks/pre-commit" ] || fail "set-up: no linked worktree"
  bundle_for "cd /workspace && printf '#!/bin/sh\ntouch $MARK.sub\n' >sub/ci/hooks/pre-commit &&
    printf '#!/bin/sh\ntouch $MARK.wt\n' >wt/.wthooks/pre-commit && echo more >>sub/a.txt && echo more >>wt/a.txt"
  run ar run --bundle "$BUNDLE" "$ID"
  [ "$status" -eq 0 ] || fail "run: $output"
  marked sub/ci/hooks/pre-commit wt/.wthooks/pre-commit
  run ar workspace "$ID" commit
  [ "$status" -eq 0 ] && [[ "$output" == *"left out sub/ci/hooks/pre-commit"* ]] || fail "commit: $output"
  [ "$(tail -n1 "$HOST/wt/a.txt")" = more ] || fail "wt/a.txt not committed"
  sub_git() {
    local d
    for d in sub wt; do
      (cd "$HOST/$d" && git add -A && git commit -q --allow-empty -m review) >/dev/null 2>&1 </dev/null || true
    done
  }
  sub_git
  [ ! -e "$MARK.sub" ] && [ ! -e "$MARK.wt" ] || fail "the agent's code ran on the host: $(ls "$T" | grep marker)"
  run ar workspace "$ID" commit --include-protected sub/ci/hooks/pre-commit --include-protected wt/.wthooks/pre-commit
  [ "$status" -eq 0 ] || fail "commit --include-protected: $output"
  echo more2 >>"$HOST/sub/a.txt" && echo more2 >>"$HOST/wt/a.txt"
  sub_git
  [ -e "$MARK.sub" ] && [ -e "$MARK.wt" ] || fail "control: the included hooks did not run: $(ls "$T" | grep marker)"
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
