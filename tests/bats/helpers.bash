# tests/bats/helpers.bash - shared helpers for the black-box bats suites.
#
# Every suite runs against the runtime binary in $AGENTRT (default: the repo's ./agentrt);
# any runc-compatible binary works (AGENTRT=/usr/sbin/runc bats tests/bats/...).  Each test
# file gets its own --root directory, each test a fresh bundle under /tmp/agentrt-test-XXXX
# with a copy of the cached busybox rootfs (build/rootfs, see tests/rootfs/build.sh).
#
#   setup_bundle / teardown_bundle   fresh bundle in $BUNDLE; delete every container, check
#                                    nothing (containers, mounts, cgroups, netns) is left
#   rt ARGS...                       the runtime with --root $TEST_ROOT (bounded by a timeout)
#   rt_bg ARGS...                    same, stdio to files: for create / run -d / exec -d,
#                                    whose container keeps the stdio; sets $status, $output
#   update_config 'JQ'               edit $BUNDLE/config.json;  set_args ARG...  the process
#   wait_for_status ID STATUS        poll `state` until STATUS (default 10 s)
#   agentrt_only, requires ...       skips
#   start_recvtty                    console socket in $CONSOLE_SOCKET (tests/helpers/recvtty)

REPO_ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
AGENTRT=${AGENTRT:-$REPO_ROOT/agentrt}
case "$AGENTRT" in
/*) ;;
*/*) AGENTRT=$REPO_ROOT/${AGENTRT#./} ;;
*) AGENTRT=$(command -v "$AGENTRT" || echo "$AGENTRT") ;;
esac
export AGENTRT
# The runc-parity suites run agentrt as a plain OCI runtime; suites about the
# agent profile pass --profile agent (or set AGENTRT_PROFILE) themselves.
export AGENTRT_PROFILE=${AGENTRT_PROFILE:-oci}
TEST_ROOTFS=${TEST_ROOTFS:-$REPO_ROOT/build/rootfs}
HELPER_DIR=${HELPER_DIR:-$REPO_ROOT/build/test-helpers}
RECVTTY=$HELPER_DIR/recvtty
RT_TIMEOUT=${RT_TIMEOUT:-60}

# One --root, one data directory and one cgroup parent per test file (and per bats run):
# the suites never write to the host's /var/lib/agentrt.  $TEST_STORE is where the data dir
# keeps the workspaces and audit trails of $TEST_ROOT (datadir/datadir.h).  The --root is
# under $AGENTRT_TEST_RUN (default /run), the data directory and the bundles under
# $AGENTRT_TEST_TMP (default /tmp): tests/run-all.sh points both at /dev/shm on a host whose
# /run and /tmp are on a disk (tests/README.md).
# (bash expansions here, not basename or tr: this file is read again for every test, and a
# process costs a few milliseconds on a slow machine, tests/README.md)
_file_tag=${BATS_TEST_FILENAME##*/}
_file_tag=${_file_tag%.bats}
TEST_ROOT=${AGENTRT_TEST_RUN:-/run}/agentrt-test-${BATS_ROOT_PID:-$$}-$_file_tag
export AGENTRT_DATA_DIR=${TEST_DATA_DIR:-${AGENTRT_TEST_TMP:-/tmp}/agentrt-data-${BATS_ROOT_PID:-$$}-$_file_tag}
_root_key=${TEST_ROOT#/}
TEST_STORE=$AGENTRT_DATA_DIR/roots/${_root_key//\//+}
# No host config from /etc unless a test writes one of its own.
export AGENTRT_CONFIG=${AGENTRT_CONFIG:-$AGENTRT_DATA_DIR.conf}
CG_PARENT=agentrt-test-${BATS_ROOT_PID:-$$}-$_file_tag
TEST_TMP_PREFIX=${AGENTRT_TEST_TMP:-/tmp}/agentrt-test-

# ---------------------------------------------------------------- runtime identity and skips

# rt_version: the first line of `$AGENTRT --version`, asked once a bats run and runtime (a
# file in BATS_RUN_TMPDIR; files ask in every test's setup, and it was four processes a time).
# rt_version_load sets _RTV without a subshell.
rt_version_load() {
	[ "${_RTV_FOR:-}" != "$AGENTRT" ] || return 0
	local f=${BATS_RUN_TMPDIR:-/nonexistent}/rt-version${AGENTRT//\//_}
	if [ -s "$f" ]; then
		read -r _RTV <"$f"
	else
		_RTV=$("$AGENTRT" --version 2>/dev/null | head -n1)
		[ -z "${BATS_RUN_TMPDIR:-}" ] || printf '%s\n' "$_RTV" >"$f"
	fi
	_RTV_FOR=$AGENTRT
}

rt_version() {
	rt_version_load
	printf '%s\n' "$_RTV"
}

# True when $AGENTRT is agentrt itself (not runc, crun, ...).
is_agentrt() {
	rt_version_load
	[[ ${_RTV,,} == agentrt* ]]
}

is_runc() {
	rt_version_load
	[[ ${_RTV,,} == runc* ]]
}

# A test of behaviour where agentrt deliberately differs from runc (error texts, extra
# commands and options): skipped against other runtimes.
agentrt_only() {
	is_agentrt || skip "agentrt-specific (${1:-behaviour differs from $(rt_version)})"
}

# A CVE regression test that the runtime under test is known to fail because that version is
# vulnerable (the test was checked to fail on it).  AGENTRT_TEST_VULN=1 runs it anyway.
known_vulnerable() { # RUNTIME-REGEX CVE
	[ "${AGENTRT_TEST_VULN:-0}" = 1 ] && return 0
	if rt_version | grep -qiE "$1"; then
		skip "$(rt_version) is vulnerable to $2 (set AGENTRT_TEST_VULN=1 to run)"
	fi
}

# A test of specified behaviour that a known runtime version gets wrong (a bug, not a
# deliberate difference): skipped for that runtime with the reason.
known_broken() { # RUNTIME-REGEX REASON
	[ "${AGENTRT_TEST_VULN:-0}" = 1 ] && return 0
	if rt_version | grep -qiE "$1"; then
		skip "known bug in $(rt_version): $2"
	fi
}

# i386_abi: true when `int 0x80` reaches this kernel (some guest kernels fault it: then no i386
# call is a way in, and the i386 checks run in the VM lane); else false, the reason in I386_WHY.
i386_abi() {
	local r
	r=$("$HELPER_DIR/try-syscall" --abi-usable i386 2>&1)
	I386_WHY=${r#no: }
	[ "$r" = yes ]
}

requires() {
	local r
	for r in "$@"; do
		case "$r" in
		root) [ "$EUID" -eq 0 ] || skip "needs root" ;;
		userns) [ -e /proc/self/ns/user ] && unshare -U true 2>/dev/null || skip "needs user namespaces" ;;
		timens) [ -e /proc/self/ns/time ] || skip "needs time namespaces" ;;
		cgroupns) [ -e /proc/self/ns/cgroup ] || skip "needs cgroup namespaces" ;;
		netns) command -v ip >/dev/null && ip netns help 2>&1 | grep -q add || skip "needs ip netns" ;;
		recvtty) [ -x "$RECVTTY" ] || skip "recvtty not built (make test-helpers)" ;;
		i386) i386_abi || skip "the i386 ABI: $I386_WHY (tests/vm/abi-i386.bats runs this in the VM lane)" ;;
		*) command -v "$r" >/dev/null || skip "needs $r" ;;
		esac
	done
}

# ---------------------------------------------------------------- running the runtime

# The runtime with this file's --root, bounded in time.
rt() {
	timeout --kill-after=5 "$RT_TIMEOUT" "$AGENTRT" --root "$TEST_ROOT" "$@"
}

# For commands whose container keeps the runtime's stdio (create, run -d, exec -d without a
# terminal): stdin from /dev/null, stdout/stderr to a file in the bundle, so that bats'
# output pipe is not held open by the container.  Sets $status and $output like `run`.
rt_bg() {
	local log
	log=$(mktemp "$BUNDLE/rt-bg.XXXXXX")
	status=0
	timeout --kill-after=5 "$RT_TIMEOUT" "$AGENTRT" --root "$TEST_ROOT" "$@" \
		</dev/null >"$log" 2>&1 || status=$?
	output=$(cat "$log")
	RT_BG_LOG=$log
	return 0
}

# create ID [ARGS...]: create from $BUNDLE; the container's stdout/stderr go to
# $BUNDLE/ID.out and $BUNDLE/ID.err (runtime errors land in ID.err too).
create_container() {
	local id=$1
	shift
	status=0
	timeout --kill-after=5 "$RT_TIMEOUT" "$AGENTRT" --root "$TEST_ROOT" create \
		--bundle "$BUNDLE" "$@" "$id" </dev/null >"$BUNDLE/$id.out" 2>"$BUNDLE/$id.err" || status=$?
	output=$(cat "$BUNDLE/$id.err")
	return 0
}

# run -d ID [ARGS...] with the same redirections as create_container.
run_detached() {
	local id=$1
	shift
	status=0
	timeout --kill-after=5 "$RT_TIMEOUT" "$AGENTRT" --root "$TEST_ROOT" run -d \
		--bundle "$BUNDLE" "$@" "$id" </dev/null >"$BUNDLE/$id.out" 2>"$BUNDLE/$id.err" || status=$?
	output=$(cat "$BUNDLE/$id.err")
	return 0
}

# Fail the test with a message (works outside `run`).
fail() {
	echo "FAIL: $*" >&2
	return 1
}

# Exit status must be a plain failure: not 0, not a timeout (124), not death by a signal
# (128+N).  agentrt itself must stay below 128; runc uses 255 for some errors.
assert_clean_failure() {
	[ "$status" -ne 0 ] || fail "expected failure, got exit 0; output: $output"
	[ "$status" -ne 124 ] || fail "timed out; output: $output"
	if [ "$status" -gt 128 ] && [ "$status" -le 192 ]; then
		fail "killed by signal $((status - 128)); output: $output"
	fi
	# 255: exec's own failures, as runc (the program's statuses are 0-254)
	if is_agentrt && [ "$status" -ge 128 ] && [ "$status" -ne 255 ]; then
		fail "exit status $status >= 128; output: $output"
	fi
	return 0
}

assert_output_contains() {
	grep -qiF -- "$1" <<<"$output" || fail "output does not contain \`$1': $output"
}

state_field() { # ID JQ-FIELD
	rt state "$1" | jq -r "$2"
}

container_pid() {
	state_field "$1" .pid
}

container_status() {
	rt state "$1" 2>/dev/null | jq -r .status 2>/dev/null
}

wait_for_status() { # ID STATUS [SECONDS]
	local i limit=$((${3:-10} * 10)) s=
	for ((i = 0; i < limit; i++)); do
		s=$(container_status "$1")
		[ "$s" = "$2" ] && return 0
		sleep 0.1
	done
	fail "container $1: status \`$s', expected \`$2' after ${3:-10}s"
}

# Wait until FILE exists and is non-empty (default 10 s).
wait_for_file() {
	local i limit=$((${2:-10} * 10))
	for ((i = 0; i < limit; i++)); do
		[ -s "$1" ] && return 0
		sleep 0.1
	done
	fail "file $1 did not appear within ${2:-10}s"
}

# ---------------------------------------------------------------- bundles and configs

ensure_rootfs() {
	if [ ! -f "$TEST_ROOTFS/.inputs" ] || [ ! -x "$TEST_ROOTFS/usr/local/bin/try-syscall" ]; then
		make -s -C "$REPO_ROOT" test-rootfs >&2 || fail "cannot build the test rootfs"
	fi
}

_cg_counter=0

# config_template: the path of this runtime's normalised config.json with @CGROUP@ for its
# cgroupsPath, made once per test file (`spec` and two jq runs cost more than many a test on a
# slow machine): the runtime's `spec` (or tests/data/config-base.json when it has none, or with
# AGENTRT_TEST_SPEC=base), no terminal, args `sh`, a writable rootfs.
config_template() {
	local key=${AGENTRT//[^A-Za-z0-9]/_}-${AGENTRT_TEST_SPEC:-runtime} d
	CONFIG_TEMPLATE=${BATS_FILE_TMPDIR:-$TEST_ROOT}/config-$key.json
	[ -s "$CONFIG_TEMPLATE" ] && return 0
	d=$(mktemp -d "${TEST_TMP_PREFIX}spec-XXXXXX")
	if [ "${AGENTRT_TEST_SPEC:-runtime}" = runtime ] && (cd "$d" && "$AGENTRT" spec) >/dev/null 2>&1 &&
		jq -e .process "$d/config.json" >/dev/null 2>&1; then
		:
	else
		cp "$REPO_ROOT/tests/data/config-base.json" "$d/config.json"
	fi
	jq '.process.terminal = false | .process.args = ["sh"] | .root.readonly = false |
		.linux.cgroupsPath = "@CGROUP@"' "$d/config.json" >"$CONFIG_TEMPLATE.new" &&
		mv "$CONFIG_TEMPLATE.new" "$CONFIG_TEMPLATE"
	rm -rf "$d"
	[ -s "$CONFIG_TEMPLATE" ] || fail "config_template: cannot make $CONFIG_TEMPLATE"
}

# make_bundle DIR: a bundle with a copy of the rootfs and a normalised config.json (no
# terminal, a writable rootfs, args `sh`, our own cgroup).
make_bundle() {
	local dir=$1 cg cfg
	[ -d "$dir" ] || mkdir -p "$dir"
	cp -a "$TEST_ROOTFS" "$dir/rootfs"
	config_template
	_cg_counter=$((_cg_counter + 1))
	cg="/$CG_PARENT/${BUNDLE##*/}-$_cg_counter"
	cfg=$(<"$CONFIG_TEMPLATE")
	printf '%s\n' "${cfg//@CGROUP@/$cg}" >"$dir/config.json"
}

setup_bundle() {
	requires root
	ensure_rootfs
	local try
	[ -d "$TEST_ROOT" ] || mkdir -p "$TEST_ROOT"
	# a new directory (mkdir fails on anything that exists, a link too), 0755 for the
	# container's users; named in bash rather than by mktemp and chmod (two processes a test)
	for try in 1 2 3 4 5 6 7 8; do
		BUNDLE=${TEST_TMP_PREFIX}${BASHPID}-$RANDOM
		mkdir -m 0755 -- "$BUNDLE" 2>/dev/null && break
		[ "$try" -lt 8 ] || fail "setup_bundle: cannot make a bundle directory"
	done
	make_bundle "$BUNDLE"
	ROOTFS=$BUNDLE/rootfs
	NETNS_CREATED=()
	RECVTTY_PID=
	export BUNDLE ROOTFS
}

setup() {
	setup_bundle
}

teardown() {
	teardown_bundle
}

# update_config 'JQ' [FILE]: apply a jq filter to config.json (extra jq args after the file).
update_config() {
	local file=${2:-$BUNDLE/config.json}
	jq "$1" "$file" >"$file.new" || fail "update_config: jq \`$1' failed"
	mv "$file.new" "$file"
}

# add_userns: a new user namespace in the config, container ids 0-65535 mapped to host
# 100000-165535 (uids and gids), replacing any user namespace entry and mappings.
add_userns() {
	update_config '.linux.namespaces = ([.linux.namespaces[] | select(.type != "user")] + [{"type": "user"}]) |
		.linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}] |
		.linux.gidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]'
}

# nul_args ARG...: the arguments for jq's stdin, each ended by a NUL, then an `E` (jq 1.6 drops
# a NUL that ends its input); `split("\u0000") | .[:-1]` gives them back, any bytes but NUL.
# (As jq's own arguments, `-c` and `--` would be taken for its options.)
nul_args() {
	printf '%s\0' "$@"
	printf E
}

# set_args ARG...: process.args, in one jq
set_args() {
	local file=$BUNDLE/config.json
	[ $# -gt 0 ] || { update_config '.process.args = []'; return; }
	nul_args "$@" | jq --rawfile a /dev/stdin '.process.args = ($a | split("\u0000") | .[:-1])' \
		"$file" >"$file.new" || fail "set_args: jq failed"
	mv "$file.new" "$file"
}

# json_array ARG...: a JSON array of strings
json_array() {
	[ $# -gt 0 ] || { echo '[]'; return; }
	nul_args "$@" | jq -c -R -s 'split("\u0000") | .[:-1]'
}

# set_cmd 'SHELL COMMAND': process.args = sh -c 'COMMAND'
set_cmd() {
	set_args sh -c "$1"
}

# make_netns: a named network namespace made by `ip netns add`, its name in $NETNS; removed
# at teardown.  (Not in a $(...) subshell: the list of namespaces to remove would be lost.)
make_netns() {
	NETNS=agentrt-test-$$-$RANDOM
	ip netns add "$NETNS" || fail "ip netns add $NETNS"
	NETNS_CREATED+=("$NETNS")
}

# ---------------------------------------------------------------- console socket

# start_recvtty [--input TEXT]: listen on $CONSOLE_SOCKET; the received pty is described in
# $BUNDLE/tty.info and its output copied to $BUNDLE/tty.out.
start_recvtty() {
	requires recvtty
	CONSOLE_SOCKET=$BUNDLE/console.sock
	"$RECVTTY" --timeout 60 --info "$BUNDLE/tty.info" --out "$BUNDLE/tty.out" "$@" \
		"$CONSOLE_SOCKET" </dev/null >/dev/null 2>"$BUNDLE/recvtty.err" &
	RECVTTY_PID=$!
	local i
	for ((i = 0; i < 50; i++)); do
		[ -S "$CONSOLE_SOCKET" ] && return 0
		sleep 0.1
	done
	fail "recvtty did not listen on $CONSOLE_SOCKET"
}

# ---------------------------------------------------------------- teardown and leak checks

# Mount points (from our mount namespace) below DIR.
mounts_below() {
	awk -v d="$1" '$5 == d || index($5, d "/") == 1 {print $5}' /proc/self/mountinfo
}

# mounted_below DIR...: true when a mount point is one of the DIRs or below one (mounts_below
# as a test, in builtins: for checks run hundreds of times, e.g. bad-input.bats)
mounted_below() {
	local id parent dev root mp rest d
	while read -r id parent dev root mp rest; do
		for d; do
			[[ $mp == "$d" || $mp == "$d"/* ]] && return 0
		done
	done </proc/self/mountinfo
	return 1
}

teardown_bundle() {
	local problems=() id ids left m cg ctrl
	if [ -n "${RECVTTY_PID:-}" ]; then
		kill "$RECVTTY_PID" 2>/dev/null
		wait "$RECVTTY_PID" 2>/dev/null
	fi
	# (`list` only when the root holds anything: compgen is a builtin, `list` two processes)
	if [ -d "$TEST_ROOT" ] && compgen -G "$TEST_ROOT/*" >/dev/null; then
		ids=$(rt list -q 2>/dev/null)
		for id in $ids; do
			rt delete --force "$id" >/dev/null 2>&1 || problems+=("delete --force $id failed")
		done
		if [ -n "$ids" ]; then
			left=$(rt list -q 2>/dev/null)
			[ -z "$left" ] || problems+=("containers left after delete --force: $left")
		fi
	fi
	for m in "${NETNS_CREATED[@]}"; do
		ip netns delete "$m" 2>/dev/null
	done
	# Leaf cgroups the runtime should have removed, then our per-file parent: one rmdir for
	# all of them (a process each hierarchy was ten forks a test)
	local cgdirs=()
	for ctrl in /sys/fs/cgroup/*/ /sys/fs/cgroup/; do
		[ -d "$ctrl$CG_PARENT" ] || continue
		for cg in "$ctrl$CG_PARENT"/*/; do
			[ -d "$cg" ] || continue
			cgdirs+=("$cg")
			problems+=("cgroup left behind: $cg")
		done
		cgdirs+=("$ctrl$CG_PARENT")
	done
	[ "${#cgdirs[@]}" -eq 0 ] || rmdir "${cgdirs[@]}" 2>/dev/null
	if [ -n "${BUNDLE:-}" ] && [ -d "$BUNDLE" ]; then
		m=
		mounted_below "$BUNDLE" && m=$(mounts_below "$BUNDLE")
		if [ -n "$m" ]; then
			problems+=("mounts left in the host namespace: $m")
			# Never recurse into a leaked bind mount of a host directory.
			for m in $(echo "$m" | sort -r); do umount -l "$m" 2>/dev/null; done
			m=$(mounts_below "$BUNDLE")
		fi
		[ -z "$m" ] && rm -rf --one-file-system "$BUNDLE"
	fi
	if [ "${#problems[@]}" -gt 0 ]; then
		printf 'teardown: %s\n' "${problems[@]}" >&2
		return 1
	fi
}

# Runs once per file after its last test: the --root must be empty, then it is removed,
# and so is the file's data directory (audit trails and workspaces outlive `delete` until
# purged, by design; their own suites test the purge).
root_leftovers() {
	ls -A "$1" 2>/dev/null || true
}

teardown_file() {
	local left=
	if [ -d "$TEST_ROOT" ]; then
		left=$(root_leftovers "$TEST_ROOT")
		if [ -n "$left" ]; then
			for id in $(rt list -q 2>/dev/null); do rt delete --force "$id" >/dev/null 2>&1; done
		fi
		rm -rf --one-file-system "$TEST_ROOT"
	fi
	remove_data_dir
	for ctrl in /sys/fs/cgroup/*/ /sys/fs/cgroup/; do
		[ -d "$ctrl$CG_PARENT" ] && rmdir "$ctrl$CG_PARENT"/*/ "$ctrl$CG_PARENT" 2>/dev/null
	done
	if [ -n "$left" ]; then
		echo "teardown_file: left in $TEST_ROOT: $left" >&2
		return 1
	fi
}

# The file's data directory (never one that is not ours: it must be named as ours are).
remove_data_dir() {
	case "$AGENTRT_DATA_DIR" in
	"${AGENTRT_TEST_TMP:-/tmp}"/agentrt-data-*)
		rm -rf --one-file-system "$AGENTRT_DATA_DIR" "$AGENTRT_DATA_DIR.conf"
		;;
	esac
}

# fake_links CTR INET HOST ADDR...: the test "internet" of audit.bats and egress.bats, all in
# network namespaces made here (TEST-NET addresses, no route to a host interface):
#   CTR (192.0.2.2/30, c0) -- INET (192.0.2.1 i0, 192.0.2.5 i1, ADDR.../32 or /128 on lo) -- HOST
#   (192.0.2.6/30, h0); CTR and HOST route through INET; IPv6 likewise (below).  CTR's lo stays down: engines (CNI)
# bring it up, agentrt must cope.
fake_links() {
	local C=$1 I=$2 H=$3 a
	shift 3
	ip netns add "$C" && ip netns add "$I" && ip netns add "$H" || return 1
	ip -n "$I" link set lo up && ip -n "$H" link set lo up || return 1
	ip link add c0 netns "$C" type veth peer name i0 netns "$I" || return 1
	ip link add h0 netns "$H" type veth peer name i1 netns "$I" || return 1
	ip -n "$C" addr add 192.0.2.2/30 dev c0 && ip -n "$C" link set c0 up &&
		ip -n "$I" addr add 192.0.2.1/30 dev i0 && ip -n "$I" link set i0 up &&
		ip -n "$H" addr add 192.0.2.6/30 dev h0 && ip -n "$H" link set h0 up &&
		ip -n "$I" addr add 192.0.2.5/30 dev i1 && ip -n "$I" link set i1 up || return 1
	# IPv6 alongside (2001:db8::/32): CTR 2001:db8:2::2/64 -- INET 2001:db8:2::1, 2001:db8:6::5
	# -- HOST 2001:db8:6::6/64 (nodad: usable at once)
	ip -n "$C" addr add 2001:db8:2::2/64 dev c0 nodad && ip -n "$I" addr add 2001:db8:2::1/64 dev i0 nodad &&
		ip -n "$H" addr add 2001:db8:6::6/64 dev h0 nodad &&
		ip -n "$I" addr add 2001:db8:6::5/64 dev i1 nodad || return 1
	for a in "$@"; do
		case $a in
		*:*) ip -n "$I" addr add "$a/128" dev lo nodad || return 1 ;;
		*) ip -n "$I" addr add "$a/32" dev lo || return 1 ;;
		esac
	done
	ip -n "$C" route add default via 192.0.2.1 && ip -n "$H" route add default via 192.0.2.5 &&
		ip -n "$C" -6 route add default via 2001:db8:2::1 && ip -n "$H" -6 route add default via 2001:db8:6::5
}
