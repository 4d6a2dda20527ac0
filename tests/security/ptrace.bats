#!/usr/bin/env bats
# ptrace.bats - ptrace inside the container (THREAT-MODEL.md, "ptrace"): the `agent` profile lets
# a container's processes trace each other (gdb, strace, LeakSanitizer), `agent-strict` refuses
# it, and under both agentrt's own processes that enter the container's pid namespace (the exec
# helper, an init before execve) can never be traced: they are non-dumpable until they exec and
# hold more capabilities than the container (CVE-2016-9962).  The attacker is
# tests/helpers/probes/ptrace-race.c: it PTRACE_SEIZEs every pid it sees, as fast as it can.

load helpers

# The racer's `attached PID EXE` lines that name agentrt's binary (not the sealed stub, which
# by design holds only what the container's program will hold).
runtime_attached() {
	grep '^attached ' "$1" | grep agentrt | grep -v 'memfd:agentrt-stub' || true
}

@test "agent: a process may trace its own child and read its own memory (gdb, strace, sanitizers)" {
	in_agent 'echo "ptrace $(try-syscall ptrace)"; echo "pvr $(try-syscall process_vm_readv)"'
	[ "$status" -eq 0 ] || fail "$output"
	grep -qx 'ptrace ok' <<<"$output" || fail "ptrace of a child: $output"
	grep -qx 'pvr ok' <<<"$output" || fail "process_vm_readv: $output"
	# Not a capability: the container still has no CAP_SYS_PTRACE.
	in_agent 'grep ^CapEff: /proc/self/status'
	eff=$(awk '{print $2}' <<<"$output")
	(((0x$eff >> 19) & 1)) && fail "CAP_SYS_PTRACE in the effective set: $output"
	true
}

@test "agent-strict: ptrace and process_vm_readv are refused with EPERM" {
	AGENT_PROFILE=agent-strict in_agent 'echo "ptrace $(try-syscall ptrace)";
		echo "pvr $(try-syscall process_vm_readv)"'
	[ "$status" -eq 0 ] || fail "$output"
	assert_denied "$(awk '$1 == "ptrace" {print $2}' <<<"$output")" ptrace
	assert_denied "$(awk '$1 == "pvr" {print $2}' <<<"$output")" process_vm_readv
}

@test "agent-strict: pidfd-getfd: another process's fd cannot be taken with pidfd_getfd either (ptrace's access check, not refused before)" {
	# pidfd_open + pidfd_getfd duplicate a descriptor of any process the caller may ptrace
	# attach to: with ptrace refused, it still handed over a sibling's fd (ok on the binary
	# before); profiles that deny ptrace deny it too
	AGENT_PROFILE=agent-strict in_agent 'sleep 30 </etc/hostname & p=$!; sleep 0.2
		echo "child $(try-syscall pidfd_getfd)"; echo "sibling $(try-syscall pidfd_getfd $p)"
		[ "$(try-syscall --abi-usable i386)" != yes ] || echo "i386 $(try-syscall i386:pidfd_getfd)"; kill $p'
	[ "$status" -eq 0 ] || fail "$output"
	assert_denied "$(awk '$1 == "child" {print $2}' <<<"$output")" pidfd_getfd
	assert_denied "$(awk '$1 == "sibling" {print $2}' <<<"$output")" pidfd_getfd
	# where int 0x80 faults (i386_abi) no i386 call is made: the VM lane has the i386 sweep
	if i386_abi; then
		assert_denied "$(awk '$1 == "i386" {print $2}' <<<"$output")" pidfd_getfd
	fi
	# the agent profile allows ptrace, and so this
	in_agent 'echo "child $(try-syscall pidfd_getfd)"'
	grep -qx 'child ok' <<<"$output" || fail "agent: $output"
}

@test "explain says whether ptrace is allowed (agent) or denied (agent-strict)" {
	set_args true
	rt create --bundle "$BUNDLE" pa >/dev/null 2>&1 || fail "create under agent"
	run rt explain pa
	[[ "$output" == *"[runtime] ptrace: within the container"* ]] || fail "$output"
	[[ "$output" == *"refuses (errno 1, EPERM)"*"open_by_handle_at"* ]] || fail "$output"
	rt delete --force pa
	AGENT_PROFILE=agent-strict rt create --bundle "$BUNDLE" ps >/dev/null 2>&1 ||
		fail "create under agent-strict"
	run rt explain ps
	[[ "$output" == *"[runtime] ptrace: denied"* ]] || fail "$output"
	[[ "$output" == *"refuses"*" ptrace "* ]] || fail "$output"
	rt delete --force ps
}

@test "CVE-2016-9962: an exec helper is never traceable before it execs (racing tracer)" {
	set_cmd 'ptrace-race 12 /tmp/ready'
	run_detached r1 || true
	[ "$status" -eq 0 ] || fail "run -d: $output"
	pid=$(container_pid r1)
	for _ in $(seq 100); do [ -e /proc/$pid/root/tmp/ready ] && break; sleep 0.1; done
	[ -e /proc/$pid/root/tmp/ready ] || fail "racer not ready"
	n=0
	start=$SECONDS
	while [ $n -lt 60 ] && [ $((SECONDS - start)) -lt 9 ]; do
		rt exec r1 sleep 0.1 >/dev/null 2>&1 || fail "exec $n failed"
		n=$((n + 1))
	done
	[ "$n" -ge 20 ] || fail "only $n execs in 9 s"
	wait_for_status r1 stopped 20 || fail "racer did not finish"
	out=$BUNDLE/r1.out
	bad=$(runtime_attached "$out")
	[ -z "$bad" ] || fail "traced agentrt's own process: $bad"
	# The racer works: it saw and attached to the exec'd programs (busybox sleep).
	grep -q '^attached [0-9]* /bin/busybox' "$out" || fail "racer attached to nothing: $(tail -5 "$out")"
	grep -q '^seen ' "$out" || fail "no summary: $(tail -3 "$out")"
	echo "# $n execs raced: $(tail -n1 "$out")" >&3
}

@test "CVE-2016-9962: a created init in our pid namespace cannot be traced while it waits for start" {
	set_cmd 'ptrace-race 4 /tmp/ready'
	run_detached r2 || true
	[ "$status" -eq 0 ] || fail "run -d: $output"
	pid=$(container_pid r2)
	for _ in $(seq 100); do [ -e /proc/$pid/root/tmp/ready ] && break; sleep 0.1; done
	# Container b joins r2's pid namespace and stays created: its init is agentrt code.
	cp "$BUNDLE/config.json" "$BUNDLE/config.r2.json"
	update_config "(.linux.namespaces[] | select(.type == \"pid\")) |= . + {path: \"/proc/$pid/ns/pid\"} |
		.process.args = [\"true\"]"
	rt create --bundle "$BUNDLE" b2 >/dev/null 2>&1 || fail "create b2 in r2's pid namespace"
	bpid=$(container_pid b2)
	nspid=$(awk '/^NSpid:/ {print $NF}' /proc/$bpid/status)
	[ "$nspid" != "$bpid" ] || fail "b2's init is not in r2's pid namespace"
	wait_for_status r2 stopped 20 || fail "racer did not finish"
	out=$BUNDLE/r2.out
	grep -q "^denied $nspid " "$out" || fail "racer never tried b2's init ($nspid): $(cat "$out")"
	! grep -q "^attached $nspid " "$out" || fail "b2's init was traced: $(cat "$out")"
	[ -z "$(runtime_attached "$out")" ] || fail "$(runtime_attached "$out")"
	rt delete --force b2
}

@test "create on a terminal says where writes go and what the filter refuses; off a terminal nothing" {
	set_args true
	run script -qec "timeout 60 $AGENTRT --root $TEST_ROOT --profile agent create --bundle $BUNDLE tt1 </dev/null" /dev/null
	[ "$status" -eq 0 ] || fail "$output"
	[[ "$output" == *"agentrt: tt1: the root filesystem is read-only; writes go to /workspace"*"/tmp 512m"* ]] ||
		fail "$output"
	[[ "$output" == *"agentrt: tt1: the profile's seccomp filter refuses unshare, setns, mount"*"ptrace: within the container; \`agentrt explain tt1\` lists them"* ]] ||
		fail "$output"
	rt delete --force tt1
	rt create --bundle "$BUNDLE" tt2 >"$BUNDLE/tt2.out" 2>"$BUNDLE/tt2.err" </dev/null || fail "create tt2"
	[ ! -s "$BUNDLE/tt2.err" ] || fail "stderr off a terminal: $(cat "$BUNDLE/tt2.err")"
	rt delete --force tt2
}
