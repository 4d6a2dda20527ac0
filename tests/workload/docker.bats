#!/usr/bin/env bats
# tests/workload/docker.bats - a few of workload.bats's cases through `docker run --runtime
# agentrt` (the default agent profile, Docker's own seccomp profile under it), on an image
# imported from the same Debian 12 rootfs (tests/workload/build-rootfs.sh), with a host
# directory at /workspace.  The private containerd + dockerd are integration/lib.bash's.

load ../../integration/lib
bats_require_minimum_version 1.5.0

IMG=agentrt-workload/debian12:latest

setup_file() {
	it_need_root
	it_need_bin dockerd containerd ctr
	[ -x "$DOCKER_CLI" ] || skip "docker CLI not installed"
	[ -x "$AGENTRT" ] || it_die "agentrt not built: $AGENTRT (run make)"
	rootfs=$("$IT_SRC/tests/workload/build-rootfs.sh") || it_die "cannot build the Debian rootfs"
	it_tmp workload
	docker_start
	tar -C "$rootfs" --exclude=./.complete --exclude=./.packages --exclude=./.build-seconds \
		-c . | docker import - "$IMG" >/dev/null || it_die "docker import"
}

teardown_file() {
	[ -n "${IT_TMP:-}" ] || return 0
	local rc=0
	docker_stop || rc=1
	it_cleanup_tmp || rc=1
	return $rc
}

setup() {
	WS=$(mktemp -d "$IT_TMP/ws.XXXXXX")
	chmod 755 "$WS"
}

teardown() {
	local ids
	ids=$(docker ps -aq --filter label=agentrt-workload 2>/dev/null)
	[ -z "$ids" ] || docker rm -f $ids >/dev/null 2>&1 || true
}

# dcase 'SCRIPT': `bash -euo pipefail SCRIPT` under agentrt's default profile, /workspace = $WS.
dcase() {
	printf '%s\n' "$1" >"$WS/.case.sh"
	run timeout 600 "$DOCKER_CLI" run --rm --label agentrt-workload --runtime agentrt \
		--network none -v "$WS:/workspace" -w /workspace "$IMG" bash -euo pipefail /workspace/.case.sh
	[ "$status" -eq 0 ] || {
		echo "status $status: $output" >&2
		return 1
	}
}

has() {
	grep -qF -- "$1" <<<"$output" || {
		echo "no \`$1' in: $output" >&2
		return 1
	}
}

@test "docker: python venv and pip install --no-index of a locally built wheel" {
	dcase '
	mkdir -p /tmp/src/hello_agentrt && cd /tmp/src
	printf "def greet():\n    return \"hello via docker\"\n" >hello_agentrt/__init__.py
	printf "from setuptools import setup\nsetup(name=\"hello_agentrt\", version=\"1.2\", packages=[\"hello_agentrt\"])\n" >setup.py
	python3 setup.py -q bdist_wheel >/dev/null 2>&1
	python3 -m venv /tmp/venv
	/tmp/venv/bin/pip install -q --no-index dist/hello_agentrt-1.2-py3-none-any.whl
	/tmp/venv/bin/python -c "import hello_agentrt; print(hello_agentrt.greet())"'
	has "hello via docker"
}

@test "docker: ASan+UBSan with LeakSanitizer, gdb and strace work under Docker's seccomp profile" {
	dcase '
	cd /tmp
	printf "#include <stdlib.h>\nint main(void) { void *p = malloc(77); p = 0; return 0; }\n" >leak.c
	gcc -g -fsanitize=address,undefined -o leak leak.c
	./leak || echo "leak exit $?"
	printf "int twice(int x) { return 2 * x; }\nint main(void) { return twice(21) - 42; }\n" >p.c
	gcc -g -O0 -o p p.c
	gdb -q -batch -ex "break twice" -ex run -ex "print x" ./p 2>&1 | grep "^.1 = "
	strace -f -o /tmp/st ./p && grep -c "exit_group(0)" /tmp/st'
	has "Direct leak of 77 byte(s) in 1 object(s)"
	has "leak exit 1"
	has '$1 = 21'
	[ "$(tail -n1 <<<"$output")" = 1 ]
}

@test "docker: npm install -g lands in the writable home and runs from PATH" {
	dcase '
	mkdir -p /tmp/pkg/bin && cd /tmp/pkg
	printf "{\"name\":\"agentrt-hello\",\"version\":\"0.3.0\",\"bin\":{\"agentrt-hello\":\"bin/hello.js\"}}\n" >package.json
	printf "#!/usr/bin/env node\nconsole.log(\"global bin ran\");\n" >bin/hello.js
	chmod +x bin/hello.js
	npm pack --silent >/dev/null
	npm install -g --offline --no-audit --no-fund ./agentrt-hello-0.3.0.tgz >/dev/null 2>&1
	command -v agentrt-hello
	agentrt-hello'
	has "/root/.npm-global/bin/agentrt-hello"
	has "global bin ran"
}

@test "docker: a 3 GB allocation is OOM-killed (exit 137, docker inspect says OOMKilled)" {
	printf '%s\n' 'b = bytearray(3 * 1024**3)' 'for i in range(0, len(b), 4096): b[i] = 1' \
		'print("allocated")' >"$WS/oom.py"
	run timeout 300 "$DOCKER_CLI" run --label agentrt-workload --name oom$$ --runtime agentrt \
		--network none -v "$WS:/workspace" "$IMG" python3 /workspace/oom.py
	[ "$status" -eq 137 ] || { echo "status $status: $output" >&2; return 1; }
	[ "$(docker inspect -f '{{.State.OOMKilled}}' oom$$)" = true ]
	docker rm -f oom$$ >/dev/null
}

@test "docker-run-as-uid: docker run -u 1000:1000 (no passwd entry): git config --global, go build and docker exec work in a home of its own" {
	# Docker passes no HOME; the runtime's lookup gives "/" for a uid the image does not list,
	# which the agent profile's read-only root made unusable: git "could not lock config file
	# //.gitconfig: Read-only file system", go "failed to initialize build cache at /.cache/go-build".
	chmod 777 "$WS"
	dcase_u() {
		printf '%s\n' "$1" >"$WS/.case.sh"
		run timeout 600 "$DOCKER_CLI" run --rm --label agentrt-workload --runtime agentrt -u 1000:1000 \
			--network none -v "$WS:/workspace" -w /workspace "$IMG" bash -euo pipefail /workspace/.case.sh
		[ "$status" -eq 0 ] || { echo "status $status: $output" >&2; return 1; }
	}
	dcase_u '
	echo "home=$HOME"
	git config --global user.email agent@example.invalid
	git config --global --get user.email
	cd /tmp && printf "package main\nfunc main() { println(\"built as 1000\") }\n" >m.go && go build -o m m.go && ./m
	stat -c "%u %a" "$HOME"'
	has "home=/home/agentrt-1000"
	has "agent@example.invalid"
	has "built as 1000"
	has "1000 700"
	id=$("$DOCKER_CLI" run -d --label agentrt-workload --runtime agentrt -u 1000:1000 --network none "$IMG" sleep 300)
	run "$DOCKER_CLI" exec "$id" sh -c 'echo "home=$HOME"; git config --global user.name a && git config --global --get user.name'
	[ "$status" -eq 0 ] || { echo "exec: $output" >&2; return 1; }
	has "home=/home/agentrt-1000"
	# root in the same container keeps /root
	run "$DOCKER_CLI" exec -u 0 "$id" sh -c 'echo "home=$HOME"'
	has "home=/root"
}

@test "docker-exec-as-uid: docker exec -u 1000 into a root container (no passwd entry): git config --global, go build and pip --user work in a home of its own" {
	# agent-home-exec-other-uid: the image runs as root, the agent's tools as a user; Docker
	# passed HOME=/ for the exec and git failed with "could not lock config file //.gitconfig:
	# Read-only file system"
	local id
	id=$("$DOCKER_CLI" run -d --label agentrt-workload --runtime agentrt --network none "$IMG" sleep 300)
	run "$DOCKER_CLI" exec -u 1000 "$id" bash -euo pipefail -c '
	echo "home=$HOME"
	git config --global user.email agent@example.invalid
	git config --global --get user.email
	cd /tmp && printf "package main\nfunc main() { println(\"built by exec\") }\n" >m.go && go build -o m m.go && ./m
	python3 -c "import site; print(\"usersite=\" + site.getusersitepackages())"
	stat -c "%u %a" "$HOME"'
	[ "$status" -eq 0 ] || { echo "exec: $output" >&2; return 1; }
	has "home=/tmp/agentrt-home-1000"
	has "agent@example.invalid"
	has "built by exec"
	has "usersite=/tmp/agentrt-home-1000/.local/"
	has "1000 700"
	# the next exec as that uid finds its config; root keeps /root
	run "$DOCKER_CLI" exec -u 1000 "$id" git config --global --get user.email
	has "agent@example.invalid"
	run "$DOCKER_CLI" exec "$id" sh -c 'echo "home=$HOME"'
	has "home=/root"
}
