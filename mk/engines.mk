# mk/engines.mk - engine integration suites (integration/*.bats).
#
#   make check-engines   bats integration/ as root: each suite starts and stops
#                        its own dockerd/containerd/podman and skips itself when
#                        the engine is not installed (contrib/install-deps.sh
#                        --engines installs them)
.PHONY: check-engines
check-engines: agentrt
	AGENTRT=$(CURDIR)/agentrt bats integration/
