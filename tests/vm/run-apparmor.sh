#!/bin/bash
# run-apparmor.sh - process.apparmorProfile where AppArmor is enabled: the VM
# lane's kernel has it (the build hosts do not).  One VM boot runs
# tests/vm/apparmor.bats through run-agentrt-v2.sh; apparmor_parser is the
# host's (Debian `apparmor`, contrib/install-deps.sh --vm), borrowed with the
# host root.  Without it the file skips itself.
cd "$(dirname "$0")" || exit 1
VM_BATS=tests/vm/apparmor.bats exec ./run-agentrt-v2.sh "$@"
