#!/usr/bin/env bats
# abi-i386.bats - the i386 ABI sweep (abi-i386-bypass) in the VM lane: a 64-bit process enters
# the kernel through `int 0x80` with a call's i386 number, and every call the profile denies
# must fail with its errno and be recorded under its i386 name.  Some machines' kernels (a
# hypervisor's guest kernel) fault `int 0x80` from user space, and there audit-evidence.bats
# skips its i386 tests: the VM's kernel (tests/vm/run-agentrt-v2.sh) takes the gate, so the
# sweep runs here on every machine.

load ../bats/helpers
load ../bats/syscall-trail

setup() {
	requires i386 jq
	agentrt_only "the audit trail is agentrt's"
	setup_bundle
	export AGENTRT_PROFILE=agent
	ID=abi-$BATS_TEST_NUMBER
}

teardown() {
	teardown_bundle
	local rc=$?
	rm -rf "${TEST_STORE:?}/.audit"
	return $rc
}

@test "vm: abi-i386-bypass: every call the agent profile denies (open_tree_attr too), through int 0x80 with its i386 number, fails with EPERM and is recorded, i386's own umount, stime, clock_settime64, clock_adjtime64 too" {
	abi_sweep agent i386
}

@test "vm: abi-i386-bypass: agent-strict's denied calls (ptrace, pidfd_getfd, process_vm_*, personality, vhangup...) through int 0x80 fail with EPERM and are recorded" {
	abi_sweep agent-strict i386
}
