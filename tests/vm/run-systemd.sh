#!/bin/bash
# run-systemd.sh - the --systemd-cgroup driver against systemd as PID 1 on
# cgroup v2: one VM boot; in it tests/helpers/vm-systemd-boot.sh starts the host's
# systemd (borrowed with the host root) and runs tests/vm/systemd-cgroup.bats
# and tests/vm/systemd-engines.bats (Docker with native.cgroupdriver=systemd, containerd's
# CRI plugin with SystemdCgroup = true) from a unit.  Under TCG systemd needs about 80 s
# to reach the test unit.
cd "$(dirname "$0")" || exit 1
VM_TIMEOUT=${VM_TIMEOUT:-900} VM_WRAP=tests/helpers/vm-systemd-boot.sh \
	VM_BATS=${VM_BATS:-"tests/vm/systemd-cgroup.bats tests/vm/systemd-engines.bats"} \
	exec ./run-agentrt-v2.sh "$@"
