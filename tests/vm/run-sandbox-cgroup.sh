#!/bin/bash
# run-sandbox-cgroup.sh - a user's `agentrt sandbox --pids/--memory` in a delegated cgroup v2:
# the VM lane's hierarchy is pure cgroup v2 (the build hosts are hybrid).  One VM boot runs
# tests/vm/sandbox-cgroup.bats through run-agentrt-v2.sh.
cd "$(dirname "$0")" || exit 1
VM_BATS=tests/vm/sandbox-cgroup.bats exec ./run-agentrt-v2.sh "$@"
