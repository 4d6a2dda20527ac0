#!/usr/bin/env bats
# workload.bats - real agent toolchains on a Debian 12 rootfs (tests/workload/build-rootfs.sh:
# python3, node/npm, gcc/make, git, go, gdb, strace) under the default `agent` profile, with a
# host directory at /workspace.  Each case asserts what the tool produced, not only its status.
#
# WORKLOAD_PROFILE (default agent) selects the profile (bench/workload.sh runs the suite under
# agent and oci).  Cases marked "workspace:" pin that an overlay workspace lets git write its
# .git (init, config, tracking branches, submodules) and leaves no placeholder .git/ behind
# that would break `go build`'s VCS stamping outside a repository.

REPO_ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
AGENTRT=${AGENTRT:-$REPO_ROOT/agentrt}
case "$AGENTRT" in /*) ;; *) AGENTRT=$REPO_ROOT/${AGENTRT#./} ;; esac
WORKLOAD_PROFILE=${WORKLOAD_PROFILE:-agent}
WROOT=/run/agentrt-workload-${BATS_ROOT_PID:-$$}
RT_TIMEOUT=${RT_TIMEOUT:-600}
# agentrt's data directory (workspaces, trails) of this file, removed at its end: the suite
# never writes to the host's /var/lib/agentrt
export AGENTRT_DATA_DIR=$WROOT-data AGENTRT_CONFIG=$WROOT-data.conf

setup_file() {
	[ "$(id -u)" -eq 0 ] || skip "needs root"
	WORKLOAD_ROOTFS=$("$REPO_ROOT/tests/workload/build-rootfs.sh") || {
		echo "cannot build the Debian rootfs" >&2
		return 1
	}
	export WORKLOAD_ROOTFS
}

teardown_file() {
	local id
	[ -d "$WROOT" ] || { rm -rf --one-file-system "$AGENTRT_DATA_DIR"; return 0; }
	for id in $("$AGENTRT" --root "$WROOT" list -q 2>/dev/null); do
		"$AGENTRT" --root "$WROOT" delete --force "$id" >/dev/null 2>&1
	done
	rm -rf --one-file-system "$WROOT" "$AGENTRT_DATA_DIR"
}

setup() {
	W=$(mktemp -d /tmp/agentrt-workload-XXXXXX)
	chmod 0755 "$W"
	mkdir -p "$W/bundle" "$W/ws"
	(cd "$W/bundle" && "$AGENTRT" spec)
	jq --arg r "$WORKLOAD_ROOTFS" --arg ws "$W/ws" '.root = {path: $r, readonly: true} |
		.process.terminal = false | .process.cwd = "/workspace" |
		.mounts += [{destination: "/workspace", type: "bind", source: $ws, options: ["rbind", "rw"]}]' \
		"$W/bundle/config.json" >"$W/bundle/c" && mv "$W/bundle/c" "$W/bundle/config.json"
	if [ "$WORKLOAD_PROFILE" != agent ]; then
		# What an engine's writable layer would give (the shared rootfs stays read-only): a
		# writable /tmp and home, HOME, and installs there, as the agent profile sets them.
		jq '.mounts += [{destination: "/tmp", type: "tmpfs", source: "tmpfs", options: ["nosuid", "nodev"]},
			{destination: "/root", type: "tmpfs", source: "tmpfs", options: ["nosuid", "nodev", "mode=700"]}] |
			.process.env += ["HOME=/root", "NPM_CONFIG_PREFIX=/root/.npm-global",
			"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/root/.npm-global/bin"] |
			.process.env |= (map(select(startswith("PATH=") | not)) + [last(.[] | select(startswith("PATH=")))])' \
			"$W/bundle/config.json" >"$W/bundle/c" && mv "$W/bundle/c" "$W/bundle/config.json"
	fi
	IDS=()
}

teardown() {
	local id
	for id in "${IDS[@]}"; do
		"$AGENTRT" --root "$WROOT" delete --force "$id" >/dev/null 2>&1
		"$AGENTRT" --root "$WROOT" workspace "$id" purge >/dev/null 2>&1
		"$AGENTRT" --root "$WROOT" audit "$id" --purge >/dev/null 2>&1
	done
	rm -rf "$W"
}

fail() {
	echo "FAIL: $*" >&2
	return 1
}

# inside 'SCRIPT' [ID]: run `bash -euc SCRIPT` in a fresh container (foreground); $status,
# $output (stdout and stderr).  The script is a file in the workspace (bind-read).
inside() {
	local id=${2:-w$RANDOM$RANDOM}
	IDS+=("$id")
	printf '%s\n' "$1" >"$W/ws/.case.sh"
	jq '.process.args = ["bash", "-euo", "pipefail", "/workspace/.case.sh"]' "$W/bundle/config.json" \
		>"$W/bundle/c" && mv "$W/bundle/c" "$W/bundle/config.json"
	status=0
	timeout --kill-after=10 "$RT_TIMEOUT" "$AGENTRT" --root "$WROOT" --profile "$WORKLOAD_PROFILE" \
		run --bundle "$W/bundle" "$id" </dev/null >"$W/out" 2>&1 || status=$?
	output=$(cat "$W/out")
}

ok_inside() {
	inside "$@"
	[ "$status" -eq 0 ] || fail "status $status: $output"
}

has() {
	grep -qF -- "$1" <<<"$output" || fail "no \`$1' in: $output"
}

# ---------------------------------------------------------------- Python

@test "python: venv, pip install --no-index of a locally built wheel and sdist" {
	ok_inside '
	mkdir -p /tmp/src/hello_agentrt && cd /tmp/src
	printf "def greet():\n    return \"hello from wheel\"\n" >hello_agentrt/__init__.py
	printf "from setuptools import setup\nsetup(name=\"hello_agentrt\", version=\"1.2\", packages=[\"hello_agentrt\"])\n" >setup.py
	python3 setup.py -q bdist_wheel sdist >/dev/null 2>&1
	ls dist
	python3 -m venv /tmp/venv
	/tmp/venv/bin/pip install -q --no-index dist/hello_agentrt-1.2-py3-none-any.whl
	/tmp/venv/bin/python -c "import hello_agentrt; print(hello_agentrt.greet())"
	python3 -m venv /tmp/venv2
	/tmp/venv2/bin/pip install -q --no-index --no-build-isolation dist/hello_agentrt-1.2.tar.gz
	/tmp/venv2/bin/pip show hello_agentrt | grep ^Version'
	has "hello_agentrt-1.2-py3-none-any.whl"
	has "hello_agentrt-1.2.tar.gz"
	has "hello from wheel"
	has "Version: 1.2"
}

@test "python: multiprocessing fork/spawn/forkserver, asyncio subprocesses, sqlite WAL in the workspace" {
	ok_inside '
	cat >/tmp/mp.py <<EOF
import multiprocessing as mp, os
def sq(x): return x * x
if __name__ == "__main__":
    for m in ("fork", "spawn", "forkserver"):
        with mp.get_context(m).Pool(3) as p:
            print(m, sum(p.map(sq, range(100))))
EOF
	python3 /tmp/mp.py
	cat >/tmp/aio.py <<EOF
import asyncio
async def one(i):
    p = await asyncio.create_subprocess_exec("sh", "-c", f"echo child{i}", stdout=asyncio.subprocess.PIPE)
    out, _ = await p.communicate()
    return out.decode().strip()
async def main():
    print(" ".join(await asyncio.gather(*(one(i) for i in range(5)))))
asyncio.run(main())
EOF
	python3 /tmp/aio.py
	python3 - <<EOF
import sqlite3
db = sqlite3.connect("/workspace/app.db")
print("journal", db.execute("pragma journal_mode=wal").fetchone()[0])
db.execute("create table t(x)")
db.executemany("insert into t values (?)", [(i,) for i in range(1000)])
db.commit()
r = sqlite3.connect("/workspace/app.db")
print("rows", r.execute("select count(*), sum(x) from t").fetchone())
import os
print("wal file", os.path.exists("/workspace/app.db-wal"), os.path.exists("/workspace/app.db-shm"))
EOF'
	has "fork 328350"
	has "spawn 328350"
	has "forkserver 328350"
	has "child0 child1 child2 child3 child4"
	has "journal wal"
	has "rows (1000, 499500)"
	has "wal file True True"
}

# ---------------------------------------------------------------- Node

@test "node: fs, child_process, worker_threads; npm install of a local tarball and npm install -g" {
	ok_inside '
	cd /tmp
	cat >t.js <<EOF
const fs = require("fs"), cp = require("child_process");
const { Worker } = require("worker_threads");
fs.writeFileSync("/workspace/node.txt", "written by node");
console.log("fs", fs.readFileSync("/workspace/node.txt", "utf8"));
console.log("cp", cp.execFileSync("sh", ["-c", "echo from-child"]).toString().trim());
const w = new Worker("const {parentPort}=require(\"worker_threads\"); parentPort.postMessage(6*7)", { eval: true });
w.on("message", (m) => console.log("worker", m));
EOF
	node t.js
	mkdir -p pkg/bin && cd pkg
	printf "{\"name\":\"agentrt-hello\",\"version\":\"0.3.0\",\"bin\":{\"agentrt-hello\":\"bin/hello.js\"},\"main\":\"index.js\"}\n" >package.json
	printf "module.exports = () => \"hello from npm\";\n" >index.js
	printf "#!/usr/bin/env node\nconsole.log(\"global bin ran\");\n" >bin/hello.js
	chmod +x bin/hello.js
	npm pack --silent
	mkdir -p /tmp/app && cd /tmp/app && npm init -y >/dev/null
	npm install --offline --no-audit --no-fund /tmp/pkg/agentrt-hello-0.3.0.tgz 2>&1 | tail -1
	node -e "console.log(require(\"agentrt-hello\")())"
	npm install -g --offline --no-audit --no-fund /tmp/pkg/agentrt-hello-0.3.0.tgz 2>&1 | tail -1
	echo "prefix $(npm prefix -g)"
	agentrt-hello
	command -v agentrt-hello'
	has "fs written by node"
	has "cp from-child"
	has "worker 42"
	has "hello from npm"
	has "prefix /root/.npm-global"
	has "global bin ran"
	has "/root/.npm-global/bin/agentrt-hello"
}

# ---------------------------------------------------------------- C, gdb, strace

@test "c: make -j, and an ASan+UBSan build whose LeakSanitizer reports a planted leak" {
	ok_inside '
	mkdir -p /tmp/c && cd /tmp/c
	for i in 1 2 3 4 5 6; do printf "int f$i(void) { return $i; }\n" >f$i.c; done
	printf "#include <stdio.h>\nint f1(void);int f2(void);int f3(void);int f4(void);int f5(void);int f6(void);\nint main(void){printf(\"sum %%d\\\\n\", f1()+f2()+f3()+f4()+f5()+f6());return 0;}\n" >main.c
	printf "OBJS=main.o f1.o f2.o f3.o f4.o f5.o f6.o\nprog: \$(OBJS)\n\t\$(CC) -o \$@ \$(OBJS)\n" >Makefile
	make -j4 -s && ./prog
	cat >leak.c <<EOF
#include <limits.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv) {
  char *p = malloc(77);
  memset(p, 1, 77);
  p = NULL;
  int big = INT_MAX - 1 + argc; /* argc == 1: INT_MAX; +1 below overflows */
  big += argc;
  return big == 0;
}
EOF
	gcc -g -fsanitize=address,undefined -o leak leak.c
	ASAN_OPTIONS=detect_leaks=1 ./leak || echo "leak exit $?"'
	has "sum 21"
	has "runtime error: signed integer overflow"
	has "ERROR: LeakSanitizer: detected memory leaks"
	has "Direct leak of 77 byte(s) in 1 object(s)"
	has "leak exit 1"
	! grep -q "does not work under ptrace" <<<"$output" || fail "$output"
}

@test "gdb and strace on a program" {
	ok_inside '
	cd /tmp
	printf "#include <stdio.h>\nint answer(int x) { return x * 2; }\nint main(void) { FILE *f = fopen(\"/workspace/traced.txt\", \"w\"); fprintf(f, \"%%d\\\\n\", answer(21)); fclose(f); return 0; }\n" >p.c
	gcc -g -O0 -o p p.c
	gdb -q -batch -ex "break answer" -ex run -ex "print x" -ex "finish" ./p 2>&1 | grep -E "^\\\$1|Value returned|Breakpoint 1,"
	strace -f -e trace=openat -o /tmp/st ./p
	grep traced.txt /tmp/st
	cat /workspace/traced.txt'
	has "Breakpoint 1, answer (x=21)"
	has '$1 = 21'
	has 'Value returned is $2 = 42'
	has 'openat(AT_FDCWD, "/workspace/traced.txt", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3'
	has "42"
}

@test "CVE-2016-9962: strace -p and gdb -p cannot attach to agentrt's init waiting in our pid namespace" {
	[ "$WORKLOAD_PROFILE" = agent ] || skip "ptrace is the agent profile's"
	jq '.process.args = ["sleep", "60"]' "$W/bundle/config.json" >"$W/bundle/c" && mv "$W/bundle/c" "$W/bundle/config.json"
	IDS+=(wa$$ wb$$)
	"$AGENTRT" --root "$WROOT" --profile agent run -d --bundle "$W/bundle" wa$$ </dev/null >/dev/null 2>&1 || fail "run -d"
	apid=$("$AGENTRT" --root "$WROOT" state wa$$ | jq -r .pid)
	jq --arg ns /proc/$apid/ns/pid '(.linux.namespaces[] | select(.type == "pid")) |= . + {path: $ns}' \
		"$W/bundle/config.json" >"$W/bundle/c" && mv "$W/bundle/c" "$W/bundle/config.json"
	"$AGENTRT" --root "$WROOT" --profile agent create --bundle "$W/bundle" wb$$ </dev/null >/dev/null 2>&1 ||
		fail "create wb in wa's pid namespace"
	bpid=$("$AGENTRT" --root "$WROOT" state wb$$ | jq -r .pid)
	nspid=$(awk '/^NSpid:/ {print $NF}' /proc/$bpid/status)
	run timeout 60 "$AGENTRT" --root "$WROOT" exec wa$$ sh -c "strace -p $nspid 2>&1 | head -3;
		gdb -q -batch -p $nspid 2>&1 | grep -i ptrace | head -2; strace -f true 2>&1 | tail -1"
	[[ "$output" == *"strace: attach: ptrace(PTRACE_SEIZE, $nspid): Operation not permitted"* ]] || fail "strace: $output"
	[[ "$output" == *"ptrace: Operation not permitted"* ]] || fail "gdb: $output"
	# and the same strace works on the container's own child
	[[ "$output" == *"+++ exited with 0 +++"* ]] || fail "strace of a child: $output"
}

@test "seccomp: perf stat is refused (EPERM, perf's own words) and the trail names perf_event_open" {
	[ "$WORKLOAD_PROFILE" = agent ] || skip "perf_event_open is refused by the agent profile"
	inside 'perf stat -e task-clock true' perf$$
	[ "$status" -ne 0 ] || fail "perf stat ran: $output"
	has "No permission to enable task-clock event"
	run "$AGENTRT" --root "$WROOT" audit perf$$ --kind syscall --format json
	[[ "$output" == *'"syscall":"perf_event_open"'*'"program":"/usr/bin/perf'* ]] || fail "trail: $output"
}

@test "home: gpg makes the agent's own key in the writable home, and git commit -S signs with it" {
	ok_inside '
	gpg --batch --passphrase "" --quick-gen-key "Agent <agent@example.invalid>" ed25519 sign never 2>/dev/null
	echo "gnupg home $(gpgconf --list-dirs homedir)"
	git init -q -b main && git config user.email agent@example.invalid && git config user.name Agent
	git config user.signingkey agent@example.invalid
	echo signed >s.txt && git add s.txt && git commit -q -S -m "signed by the agent"
	git verify-commit HEAD 2>&1 | grep -o "Good signature from \"Agent <agent@example.invalid>\""
	gpgconf --kill gpg-agent'
	has "gnupg home /root/.gnupg"
	has 'Good signature from "Agent <agent@example.invalid>"'
}

@test "workspace: ccache keeps its cache in the workspace; the second build hits" {
	ok_inside '
	export CCACHE_DIR=/workspace/.ccache
	printf "int main(void) { return 0; }\n" >/tmp/m.c
	for i in 1 2; do ccache gcc -c -o /tmp/m.o /tmp/m.c; done
	ccache --print-stats | grep -E "^(direct_cache_hit|cache_miss)\s"'
	has "direct_cache_hit	1"
	has "cache_miss	1"
	[ -d "$W/ws/.ccache" ] || [ "$WORKLOAD_PROFILE" = agent ] || fail "no cache in the bound workspace"
}

# ---------------------------------------------------------------- git

git_case='
git config --global user.email agent@example.invalid
git config --global user.name Agent
git config --global init.defaultBranch main
git config --global protocol.file.allow always
cd "$1"
git init -q . 2>/dev/null || git init -q .
git config core.autocrlf false
echo "# repo" >README.md && git add README.md && git commit -qm first
git config --get core.autocrlf
git branch feature && git branch --set-upstream-to=main feature
git rev-parse --abbrev-ref feature@{upstream}
git worktree add -q /tmp/wt feature && git -C /tmp/wt log --oneline | wc -l
git init -q /tmp/sub && git -C /tmp/sub commit -q --allow-empty -m sub
git submodule add -q /tmp/sub libsub && git commit -qm "add submodule"
git submodule status | cut -c42-
git gc -q && git count-objects -v | grep ^count:
git log --oneline | wc -l
'

@test "workspace: git init, config, branch with tracking, worktree, submodule, gc in an empty workspace" {
	ok_inside "set -- /workspace; $git_case"
	has "false"
	has "main"
	has "libsub"
	has "count: 0"
	[ "$(tail -n1 <<<"$output")" = 2 ] || fail "$output"
}

@test "workspace: git: the same in a host repository bound at /workspace" {
	git -C "$W/ws" init -q -b main && git -C "$W/ws" -c user.email=h@example.invalid -c user.name=h \
		commit -q --allow-empty -m host-commit
	ok_inside "set -- /workspace; $git_case
	git log --format=%s | tail -n1"
	has "main"
	has "libsub"
	has "host-commit"
	# the host repository is unchanged until the workspace is committed
	[ "$(git -C "$W/ws" log --oneline | wc -l)" -eq 1 ] || [ "$WORKLOAD_PROFILE" != agent ] ||
		fail "host repo changed before commit"
}

@test "workspace: bind mode, .git a symlink to the real git dir: git commits, its hooks and config stay read-only" {
	# bind-protect-via-symlink with the real tool: the protected names are reached through
	# the link (and the link's target is bound read-only), and an honest agent's commit works
	git init -q -b main "$W/ws" && mv "$W/ws/.git" "$W/ws/realgit" && ln -s realgit "$W/ws/.git"
	git -C "$W/ws" -c user.email=h@example.invalid -c user.name=h commit -q --allow-empty -m host-commit
	jq '.annotations["run.agentrt.workspace.mode"] = "bind"' "$W/bundle/config.json" >"$W/bundle/c" &&
		mv "$W/bundle/c" "$W/bundle/config.json"
	ok_inside 'git -c user.email=a@example.invalid -c user.name=a commit -q --allow-empty -m agent-commit
git log -1 --format=%s
for f in .git/hooks/pre-commit realgit/hooks/post-commit; do
	printf "#!/bin/sh\necho pwned\n" >"$f" 2>/dev/null && echo "WRITTEN $f" || echo "refused $f"
done
git config user.name x 2>/dev/null && echo CONFIG-WRITTEN || echo config-refused'
	has "agent-commit"
	has "refused .git/hooks/pre-commit"
	has "refused realgit/hooks/post-commit"
	has "config-refused"
	[[ "$output" != *WRITTEN* ]] || fail "$output"
	# the commit reached the host repository (bind mode writes through), the hooks did not
	[ "$(git -C "$W/ws" log --format=%s | head -n1)" = agent-commit ] || fail "no commit on the host"
	[ ! -e "$W/ws/realgit/hooks/pre-commit" ] && [ ! -e "$W/ws/realgit/hooks/post-commit" ] ||
		fail "a hook reached the host"
}

# ---------------------------------------------------------------- Go

@test "workspace: go build, test and build -race in a workspace that is not a git repository" {
	ok_inside '
	cd /workspace
	go mod init example.com/agent >/dev/null 2>&1
	printf "package main\nimport \"fmt\"\nfunc Add(a, b int) int { return a + b }\nfunc main() { fmt.Println(\"go says\", Add(40, 2)) }\n" >main.go
	printf "package main\nimport \"testing\"\nfunc TestAdd(t *testing.T) { if Add(1, 2) != 3 { t.Fatal(\"bad\") } }\n" >main_test.go
	go build -o /tmp/app . && /tmp/app
	go test ./... 2>&1
	go build -race -o /tmp/app-race . && /tmp/app-race
	echo "gocache $(go env GOCACHE)"'
	has "go says 42"
	has "ok  	example.com/agent"
	has "gocache /root/.cache/go-build"
	[ "$(grep -c 'go says 42' <<<"$output")" -eq 2 ] || fail "$output"
}

# ---------------------------------------------------------------- limits

@test "limits: a 3 GB allocation is OOM-killed and the audit trail says so" {
	[ "$WORKLOAD_PROFILE" = agent ] || skip "the limits are the agent profile's"
	inside 'python3 -c "
b = bytearray(3 * 1024**3)
for i in range(0, len(b), 4096): b[i] = 1
print(\"allocated\")"' oom$$
	[ "$status" -eq 137 ] || fail "status $status: $output"
	! grep -qx allocated <<<"$output" || fail "$output"
	run "$AGENTRT" --root "$WROOT" audit oom$$ --kind oom --format json
	[[ "$output" == *'"oom"'* ]] || fail "no oom record: $output"
}

@test "limits: 1,100 processes stop at the pids limit" {
	[ "$WORKLOAD_PROFILE" = agent ] || skip "the limits are the agent profile's"
	ok_inside 'python3 - <<EOF
import os, time, signal
kids, err = [], None
for i in range(1100):
    try:
        pid = os.fork()
    except OSError as e:
        err = e
        break
    if pid == 0:
        time.sleep(30)
        os._exit(0)
    kids.append(pid)
print("forked", len(kids), "error", err)
for k in kids: os.kill(k, signal.SIGKILL)
for k in kids: os.waitpid(k, 0)
EOF'
	has "Resource temporarily unavailable"
	n=$(sed -n 's/^forked \([0-9]*\) .*/\1/p' <<<"$output")
	[ "$n" -ge 1000 ] && [ "$n" -lt 1024 ] || fail "forked $n: $output"
}
