#!/bin/bash
# run-systemd.sh - the --systemd-cgroup driver against systemd as PID 1 on
# cgroup v2: one VM boot; in it tests/helpers/vm-systemd-boot.sh starts the host's
# systemd (borrowed with the host root) and runs tests/vm/systemd-cgroup.bats
# from a unit, with AGENTRT_VM_ENGINES=1 also tests/vm/systemd-engines.bats (Docker with
# native.cgroupdriver=systemd, containerd's CRI plugin with SystemdCgroup = true).  Under
# TCG systemd needs about 80 s to reach the test unit (3-4 min at a host load of ~10).
# run-all: first (the longest lane: 324 s with one vCPU on an idle host, over 1,800 s in a CI
# run where it started after the other lanes, beside both passes)
cd "$(dirname "$0")" || exit 1
# systemd-engines.bats with AGENTRT_VM_ENGINES=1 (.ci/run sets it): under TCG it adds minutes
# (measured at a host load of ~10: Docker's test 225 s, the CRI test ~190 s)
if [ "${AGENTRT_VM_ENGINES:-0}" = 1 ]; then
	VM_BATS=${VM_BATS:-"tests/vm/systemd-cgroup.bats tests/vm/systemd-engines.bats"}
else
	VM_BATS=${VM_BATS:-tests/vm/systemd-cgroup.bats}
fi
# systemd-engines.bats's images (busybox, the static pause, the CRI stubs) are built here on
# the host: under TCG the rootfs's few hundred `ln -s` and a static gcc link take minutes
if [[ " $VM_BATS " == *systemd-engines.bats* ]] && [ -x /usr/bin/containerd ]; then
	rm -rf ../../build/vm-engines-img
	(cd ../.. && bash -c '. integration/lib.bash && cri_images build/vm-engines-img' >/dev/null 2>&1) ||
		rm -rf ../../build/vm-engines-img
fi
# One vCPU, as the other lanes: beside CI's passes each vCPU thread of a TCG guest competes for
# the host's two CPUs, and a second one mostly adds host CPU (the lane alone on an idle host,
# engines included: 308 CPU-s in 314 s with one; two took ~380 CPU-s idle and about twice that
# beside the passes).  (Two came in after a CI run's RunPodSandbox exited 2 with
# nothing printed; CRI calls since print containerd's answer, and the failures they showed
# later were the shared /var/lib/cni, now private: see systemd-engines.bats.)
VM_CPUS=${VM_CPUS:-1} VM_LANE=systemd VM_TIMEOUT=${VM_TIMEOUT:-900} VM_WRAP=tests/helpers/vm-systemd-boot.sh \
	VM_BATS=$VM_BATS \
	exec ./run-agentrt-v2.sh "$@"
