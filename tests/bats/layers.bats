#!/usr/bin/env bats
# layers.bats - the source folders stay layers (contrib/check-layers.sh): no include from a
# lower folder to a higher one or between peers, one include style, unique file names.
# Needs no runtime and no root: it reads the tree.

REPO_ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)

setup() {
	command -v git >/dev/null || skip "git not installed"
}

# A scratch copy of the tree's C sources and the checker, to plant violations in.
copy_tree() {
	COPY=$(mktemp -d /tmp/agentrt-layers-XXXXXX)
	(cd "$REPO_ROOT" && git ls-files -co --exclude-standard | grep -E '\.(c|h)$|^contrib/check-layers\.sh$' |
		tar -cf - -T -) | tar -xf - -C "$COPY"
	git -C "$COPY" init -q
}

teardown() {
	[ -z "${COPY:-}" ] || rm -rf "$COPY"
}

@test "the tree's includes run downward only" {
	run "$REPO_ROOT/contrib/check-layers.sh" -v
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"check-layers: ok"* ]]
	# the graph it checked is the real one: the CLI uses the container layer, the monitor the os layer
	[[ "$output" == *"cli -> container "* ]]
	[[ "$output" == *"monitor -> os "* ]]
	[[ "$output" != *"-> cli "* ]]
}

@test "an include from a lower folder to a higher one is refused (workspace -> container)" {
	copy_tree
	sed -i '0,/#include "/s//#include "container\/mounts.h"\n#include "/' "$COPY/workspace/snapshot.c"
	run "$COPY/contrib/check-layers.sh"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *'workspace/snapshot.c:'*'"container/mounts.h": workspace/ (layer 2) must not include from container/ (layer 4)'* ]]
}

@test "a loop between peers is refused (container <-> monitor, cgroups -> profile)" {
	copy_tree
	echo '#include "container/container.h"' >>"$COPY/monitor/monitor.h"
	echo '#include "profile/profile.h"' >>"$COPY/cgroups/cgroup.h"
	run "$COPY/contrib/check-layers.sh"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *'monitor/monitor.h:'*'must not include from container/'* ]]
	[[ "$output" == *'cgroups/cgroup.h:'*'must not include from profile/ (layer 2)'* ]]
}

@test "relative and bare includes are refused" {
	copy_tree
	echo '#include "../common/util.h"' >>"$COPY/oci/json.c"
	echo '#include "util.h"' >>"$COPY/common/log.c"
	run "$COPY/contrib/check-layers.sh"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *'oci/json.c:'*'"../common/util.h": include as "folder/file.h", not relative'* ]]
	[[ "$output" == *'common/log.c:'*'"util.h": include as "folder/file.h"'* ]]
}

@test "two files of the same name in two folders are refused" {
	copy_tree
	cp "$COPY/oci/json.c" "$COPY/cgroups/json.c"
	run "$COPY/contrib/check-layers.sh"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *'json.c: the same file name in'*'cgroups/json.c'*'oci/json.c'* ]]
}

@test "C sources in a folder that is no layer are refused" {
	copy_tree
	mkdir "$COPY/runtime"
	printf '#include "common/util.h"\n' >"$COPY/runtime/x.c"
	run "$COPY/contrib/check-layers.sh"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *'runtime: C sources in a folder that is not a layer'* ]]
}
