#!/usr/bin/env bats
# cgroups-v2.bats - agentrt's cgroup v2 path through the CLI, on a pure
# cgroup v2 host: the VM lane (tests/vm/run-agentrt-v2.sh boots one VM and
# runs this file in it).  Limits are checked in the container's cgroup files
# and by their effect (OOM kill, failed forks, frozen tasks, EPERM on a
# device), plus clone3(CLONE_INTO_CGROUP), the cgroup namespace and mount,
# cgroup.kill, the eBPF device filter, `update`, `events`, `ps`, --systemd-cgroup
# without systemd (a clear error), `unified` keys, the agent profile's default limits and cleanup.
# Plain OCI (--profile oci, set by helpers.bash) unless testing the profile.
#
# Every process costs a lot in the emulated VM (jq about a second), so the
# bundle comes from a template made once per file, JSON is quoted in bash and
# cgroup files are read with `read`; each test makes at most one jq call.

load ../bats/helpers

setup_file() {
	if [ "$(stat -f -c %T /sys/fs/cgroup 2>/dev/null)" != cgroup2fs ]; then
		skip "not a cgroup v2 host (run it through tests/vm/run-agentrt-v2.sh)"
	fi
	ensure_rootfs
	mkdir -p "$TEST_ROOT"
	export RF_CACHE=$BATS_FILE_TMPDIR/rootfs TEMPLATE=$BATS_FILE_TMPDIR/config.json
	cp -a "$TEST_ROOTFS" "$RF_CACHE"
	(cd "$BATS_FILE_TMPDIR" && "$AGENTRT" spec) || return 1
	jq '.process.terminal = false | .process.args = ["sh"] | .root.readonly = false |
		.linux.cgroupsPath = "@CG@"' "$TEMPLATE" >"$TEMPLATE.new" && mv "$TEMPLATE.new" "$TEMPLATE"
}

# A fresh bundle: hard links to the file's rootfs copy (tests only add
# files), the template config with this test's cgroup.
setup() {
	local tmpl
	requires root
	BUNDLE=${TEST_TMP_PREFIX}$BATS_ROOT_PID-$BATS_SUITE_TEST_NUMBER
	ROOTFS=$BUNDLE/rootfs
	CG=/$CG_PARENT/t$BATS_SUITE_TEST_NUMBER
	CGDIR=/sys/fs/cgroup$CG
	mkdir -p "$BUNDLE"
	cp -al "$RF_CACHE" "$ROOTFS"
	read -r -d '' tmpl <"$TEMPLATE" || true
	printf '%s\n' "${tmpl//@CG@/$CG}" >"$BUNDLE/config.json"
	NETNS_CREATED=()
	RECVTTY_PID=
	export BUNDLE ROOTFS
}

# ---------------------------------------------------------------- cheap helpers

# JSON without jq: $REPLY = the quoted string
json_quote() {
	local s=$1
	s=${s//\\/\\\\}
	s=${s//\"/\\\"}
	s=${s//$'\n'/\\n}
	s=${s//$'\t'/\\t}
	REPLY="\"$s\""
}

json_array() {
	local a out=
	for a in "$@"; do
		json_quote "$a"
		out+=${out:+,}$REPLY
	done
	echo "[$out]"
}

# cfg 'JQ' [ARG...]: one jq call for config.json; with ARGs process.args too
cfg() {
	local filter=$1
	shift
	if [ $# -gt 0 ]; then
		filter="$filter | .process.args = $(json_array "$@")"
	fi
	update_config "$filter"
}

# From `state`, without jq.
container_pid() {
	local s
	s=$(rt state "$1")
	[[ $s =~ \"pid\":\ *([0-9]+) ]] && echo "${BASH_REMATCH[1]}"
}

container_status() {
	local s
	s=$(rt state "$1" 2>/dev/null)
	[[ $s =~ \"status\":\ *\"([a-z]+)\" ]] && echo "${BASH_REMATCH[1]}"
}

# cgis FILE VALUE: the first line of the container's cgroup FILE is VALUE
cgis() {
	local v=
	read -r v <"$CGDIR/$1" || true
	[ "$v" = "$2" ] || fail "$1 is \`$v', expected \`$2'"
}

# keyed FILE KEY: $REPLY = KEY's value in a flat-keyed cgroup file
keyed() {
	local k v
	REPLY=
	while read -r k v; do
		[ "$k" = "$2" ] && { REPLY=$v; return 0; }
	done <"$CGDIR/$1"
	fail "no $2 in $1"
}

slurp() { # FILE -> $REPLY
	REPLY=
	[ -e "$1" ] && { read -r -d '' REPLY <"$1" || true; }
	return 0
}

wait_for_text() { # TEXT FILE [SECONDS]
	local i limit=$((${3:-20} * 10))
	for ((i = 0; i < limit; i++)); do
		slurp "$2"
		[[ $REPLY == *"$1"* ]] && return 0
		sleep 0.1
	done
	fail "\`$1' not in $2 after ${3:-20}s: $REPLY"
}

# also remove the systemd test's slices (systemd's job where it runs)
teardown() {
	teardown_bundle || return 1
	local s=/sys/fs/cgroup/agentrt.slice
	[ ! -d "$s" ] || rmdir "$s/agentrt-test.slice" "$s"
}

cg_procs() { # DIR -> $REPLY (pids, blank separated)
	local p
	REPLY=
	while read -r p; do REPLY+=${REPLY:+ }$p; done <"$1/cgroup.procs"
}

# ---------------------------------------------------------------- limits

@test "cgroups v2: run reports 137 when the init allocates past memory.max" {
	cfg '.linux.resources.memory = {"limit": 33554432}' dd if=/dev/zero of=/dev/null bs=64M count=1
	run rt run --bundle "$BUNDLE" oomrun
	[ "$status" -eq 137 ] || fail "run exited $status: $output"
	[ ! -d "$CGDIR" ] || fail "cgroup left after run: $CGDIR"
}

@test "cgroups v2: an OOM kill shows in memory.events, events --stats and an oom event" {
	cfg '.linux.resources.memory = {"limit": 33554432}' sh -c \
		'i=0; while [ ! -e /go ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
		dd if=/dev/zero of=/dev/null bs=64M count=1; echo "dd=$?"; sleep 100'
	run_detached oom
	[ "$status" -eq 0 ] || fail "run -d: $output"
	cgis memory.max 33554432
	keyed memory.events oom_kill
	[ "$REPLY" = 0 ]
	timeout 60 "$AGENTRT" --root "$TEST_ROOT" events --interval 100ms oom \
		>"$BUNDLE/events.out" 2>"$BUNDLE/events.err" &
	local evpid=$!
	wait_for_text '"type":"stats"' "$BUNDLE/events.out"
	touch "$ROOTFS/go"
	wait_for_text 'dd=' "$BUNDLE/oom.out"
	[[ $REPLY == *dd=137* ]] || fail "dd not OOM-killed: $REPLY"
	keyed memory.events oom_kill
	[ "$REPLY" -ge 1 ] || fail "oom_kill $REPLY"
	wait_for_text '{"type":"oom","id":"oom"' "$BUNDLE/events.out" 10
	kill "$evpid"
	wait "$evpid" || true
	run rt events --stats oom
	[ "$status" -eq 0 ] || fail "events --stats: $output"
	jq -e '.type == "stats" and .id == "oom" and .data.memory.usage.limit == 33554432 and
		.data.memory.usage.failcnt >= 1 and .data.memory.usage.usage > 0 and
		.data.memory.usage.usage <= 33554432' <<<"$output" || fail "stats: $output"
}

@test "cgroups v2: a pids limit stops a bounded fork loop" {
	# the subshell gives up at the first failed fork; init and the sleeps stay
	cfg '.linux.resources.pids = {"limit": 10}' sh -c \
		'(i=0; while [ $i -lt 40 ]; do sleep 60 & i=$((i+1)); done); echo forked; sleep 100'
	run_detached pids
	[ "$status" -eq 0 ] || fail "run -d: $output"
	wait_for_text forked "$BUNDLE/pids.out" 30
	slurp "$BUNDLE/pids.err"
	[[ $REPLY == *fork* ]] || fail "no fork failure: $REPLY"
	cgis pids.max 10
	local n
	read -r n <"$CGDIR/pids.current"
	[ "$n" -le 10 ] && [ "$n" -ge 5 ] || fail "pids.current $n"
	keyed pids.events max
	[ "$REPLY" -ge 1 ] || fail "pids.events max $REPLY"
	run rt events --stats pids
	[[ $output == *'"pids":{"current":'*',"limit":10}'* ]] || fail "stats: $output"
}

@test "cgroups v2: cpu quota/period, cpuset and shares land in cpu.max, cpuset.*, cpu.weight" {
	# the guest's last CPU (the lanes boot one vCPU: a child's cpuset.cpus stays empty in v2
	# until written, so "0" there is still the runtime's write)
	local last
	last=$(($(nproc) - 1))
	cfg '.linux.resources.cpu = {"quota": 50000, "period": 100000, "cpus": "'"$last"'", "mems": "0", "shares": 512}' \
		sleep 100
	run_detached cpu
	[ "$status" -eq 0 ] || fail "run -d: $output"
	cgis cpu.max "50000 100000"
	cgis cpuset.cpus "$last"
	cgis cpuset.mems 0
	cgis cpuset.cpus.effective "$last"
	# the quota throttles (cpu.stat and events --stats): a second of a busy loop at 50 %, which
	# a fast host needs (under TCG the container's start alone is throttled; without the quota
	# nr_throttled stays 0 there, seen)
	run rt exec cpu timeout 1 sh -c 'while :; do :; done'
	keyed cpu.stat nr_throttled
	[ "$REPLY" -gt 0 ] || fail "cpu.stat nr_throttled $REPLY after a busy second under 50 %"
	run rt events --stats cpu
	[[ $output =~ \"throttledPeriods\":([0-9]+) ]] && [ "${BASH_REMATCH[1]}" -gt 0 ] ||
		fail "events --stats: no throttled periods: $output"
	slurp /proc/"$(container_pid cpu)"/status
	[[ $REPLY =~ Cpus_allowed_list:[[:space:]]*$last$'\n' ]] || fail "affinity: $REPLY"
	# runc's conversion: 1 + ((shares - 2) * 9999) / 262142
	cgis cpu.weight 20
	local s
	for s in 2:1 1024:39 262144:10000; do
		run rt update --cpu-shares "${s%%:*}" cpu
		[ "$status" -eq 0 ] || fail "update --cpu-shares ${s%%:*}: $output"
		cgis cpu.weight "${s#*:}"
	done
}

@test "cgroups v2: pause freezes (cgroup.freeze, task state) and resume thaws" {
	cfg . sh -c 'i=0; while [ $i -lt 3000 ]; do echo x >>/tmp/ticks; sleep 0.1; i=$((i+1)); done'
	run_detached fr
	[ "$status" -eq 0 ] || fail "run -d: $output"
	wait_for_file "$ROOTFS/tmp/ticks"
	run rt pause fr
	[ "$status" -eq 0 ] || fail "pause: $output"
	cgis cgroup.freeze 1
	keyed cgroup.events frozen
	[ "$REPLY" = 1 ]
	[ "$(container_status fr)" = paused ]
	local pid st wchan s1 s2 i
	pid=$(container_pid fr)
	# a task of a frozen v2 cgroup sleeps in the signal-delivery freezer trap
	read -r _ _ st _ </proc/"$pid"/stat
	read -r wchan </proc/"$pid"/wchan || true
	[ "$st" = S ] || fail "init state $st while frozen"
	[[ $wchan == *get_signal* || $wchan == *freezer* ]] || fail "init wchan $wchan while frozen"
	s1=$(stat -c %s "$ROOTFS/tmp/ticks")
	sleep 1
	s2=$(stat -c %s "$ROOTFS/tmp/ticks")
	[ "$s1" = "$s2" ] || fail "ticks grew while paused: $s1 -> $s2"
	run rt resume fr
	[ "$status" -eq 0 ] || fail "resume: $output"
	cgis cgroup.freeze 0
	keyed cgroup.events frozen
	[ "$REPLY" = 0 ]
	[ "$(container_status fr)" = running ]
	for ((i = 0; i < 50; i++)); do
		[ "$(stat -c %s "$ROOTFS/tmp/ticks")" -gt "$s2" ] && break
		sleep 0.1
	done
	[ "$(stat -c %s "$ROOTFS/tmp/ticks")" -gt "$s2" ] || fail "ticks did not resume"
}

# The v1 twin is in tests/bats/cgroups-v1.bats: runc and crun pause a created
# container; start is refused until resume, which leaves it created.
@test "cgroups v2: a created container can be paused; start waits for resume" {
	cfg . sh -c 'echo started >>/tmp/started; sleep 100'
	create_container cp
	[ "$status" -eq 0 ] || fail "create: $output"
	run rt pause cp
	[ "$status" -eq 0 ] || fail "pause: $output"
	cgis cgroup.freeze 1
	keyed cgroup.events frozen
	[ "$REPLY" = 1 ] || fail "cgroup.events frozen $REPLY"
	[ "$(container_status cp)" = paused ] || fail "status $(container_status cp) while frozen"
	run rt start cp
	[ "$status" -ne 0 ] || fail "start of a paused container succeeded"
	[[ "$output" == *"paused state"* ]] || fail "start: $output"
	[ ! -e "$ROOTFS/tmp/started" ] || fail "the program ran while paused"
	run rt resume cp
	[ "$status" -eq 0 ] || fail "resume: $output"
	cgis cgroup.freeze 0
	[ "$(container_status cp)" = created ] || fail "status $(container_status cp) after resume"
	run rt start cp
	[ "$status" -eq 0 ] || fail "start after resume: $output"
	wait_for_file "$ROOTFS/tmp/started"
}

@test "cgroups v2: update changes live values (flags and --resources -)" {
	cfg '.linux.resources.memory = {"limit": 67108864} | .linux.resources.pids = {"limit": 50}' sleep 100
	run_detached up
	[ "$status" -eq 0 ] || fail "run -d: $output"
	cgis memory.max 67108864
	cgis pids.max 50
	cgis cpu.max "max 100000"
	run rt update --memory 134217728 --pids-limit 20 --cpu-quota 20000 up
	[ "$status" -eq 0 ] || fail "update: $output"
	cgis memory.max 134217728
	cgis pids.max 20
	cgis cpu.max "20000 100000"
	run rt update --cpu-period 50000 up
	[ "$status" -eq 0 ] || fail "update --cpu-period: $output"
	cgis cpu.max "20000 50000"
	run rt update --resources - up <<<'{"memory": {"limit": 100663296}, "pids": {"limit": 30},
		"cpu": {"shares": 1024, "quota": 30000, "period": 100000}}'
	[ "$status" -eq 0 ] || fail "update --resources: $output"
	cgis memory.max 100663296
	cgis pids.max 30
	cgis cpu.weight 39
	cgis cpu.max "30000 100000"
	run rt update --pids-limit -1 up
	[ "$status" -eq 0 ] || fail "update --pids-limit -1: $output"
	cgis pids.max max
	# v2 swap is memory+swap minus memory; blkio weight 10-1000 -> 1-10000
	run rt update --memory 134217728 --memory-swap 201326592 --memory-reservation 33554432 \
		--blkio-weight 500 up
	[ "$status" -eq 0 ] || fail "update: $output"
	cgis memory.max 134217728
	cgis memory.swap.max 67108864
	cgis memory.low 33554432
	cgis io.weight "default 4950"
	run rt events --stats up
	jq -e '.data.memory.usage.limit == 134217728 and .data.memory.swap.limit == 201326592 and
		.data.pids.limit == 0 and .data.cpu.usage.total > 0 and
		([.data.hugetlb[] | .max] | all(. == 0))' <<<"$output" || fail "stats: $output"
}

# ---------------------------------------------------------------- cgroup features

@test "cgroups v2: kill --all uses cgroup.kill (a nested cgroup dies too)" {
	cfg . sh -c 'sleep 100 & sleep 100 & echo started; wait'
	run_detached ka
	[ "$status" -eq 0 ] || fail "run -d: $output"
	wait_for_text started "$BUNDLE/ka.out"
	local pids init p nested= i
	cg_procs "$CGDIR"
	pids=$REPLY
	init=$(container_pid ka)
	[ "$(wc -w <<<"$pids")" -eq 3 ] || fail "cgroup.procs: $pids"
	# one sleep moved to a sub-cgroup (no controllers are enabled below the
	# container's cgroup): only a recursive kill reaches it
	for p in $pids; do [ "$p" = "$init" ] || nested=$p; done
	mkdir "$CGDIR/agentrt-nested"
	echo "$nested" >"$CGDIR/agentrt-nested/cgroup.procs"
	if command -v strace >/dev/null; then
		timeout 60 strace -qq -o "$BUNDLE/kill.strace" -e trace=openat \
			"$AGENTRT" --root "$TEST_ROOT" kill --all ka KILL
		slurp "$BUNDLE/kill.strace"
		[[ $REPLY == *"$CG/cgroup.kill\", O_WRONLY"* ]] || fail "no cgroup.kill: $REPLY"
	else
		run rt kill --all ka KILL
		[ "$status" -eq 0 ] || fail "kill --all: $output"
	fi
	wait_for_status ka stopped
	for ((i = 0; i < 50; i++)); do
		cg_procs "$CGDIR/agentrt-nested"
		[ -z "$REPLY" ] && break
		sleep 0.1
	done
	[ -z "$REPLY" ] || fail "left in the nested cgroup: $REPLY"
	for p in $pids; do
		[ ! -e /proc/"$p" ] || fail "pid $p survived kill --all"
	done
	run rt delete ka
	[ "$status" -eq 0 ] || fail "delete: $output"
	[ ! -d "$CGDIR" ] || fail "cgroup left: $(find "$CGDIR" -type d)"
}

@test "cgroups v2: the eBPF device filter denies what is not allowed" {
	# /kmsg2 and /null2 made by the host (no CAP_MKNOD involved); /dev/kmsg
	# from linux.devices, which (as with runc and crun) is not allowed by itself
	mknod "$ROOTFS/kmsg2" c 1 11
	mknod "$ROOTFS/null2" c 1 3
	cfg '.linux.devices = [{"path": "/dev/kmsg", "type": "c", "major": 1, "minor": 11, "fileMode": 438}]' \
		sh -c 'for d in /dev/kmsg /kmsg2 /null2; do echo probe >$d; echo "$d=$?"; done'
	run rt run --bundle "$BUNDLE" devdeny
	[ "$status" -eq 0 ] || fail "run: $output"
	[[ $output == *"/dev/kmsg=1"* && $output == *"/kmsg2=1"* ]] || fail "kmsg opened: $output"
	[[ $output == *"/null2=0"* ]] || fail "an allowed device (c 1:3) did not open: $output"
	[[ $output == *"/dev/kmsg: Operation not permitted"* ]] || fail "not EPERM: $output"
	# write access to c 1:11 (not read: that needs CAP_SYSLOG)
	update_config '.linux.resources.devices += [{"allow": true, "type": "c", "major": 1, "minor": 11, "access": "w"}]'
	run rt run --bundle "$BUNDLE" devallow
	[ "$status" -eq 0 ] || fail "run: $output"
	[[ $output == *"/dev/kmsg=0"* && $output == *"/kmsg2=0"* ]] || fail "allowed device not opened: $output"
}

@test "cgroups v2: the init is cloned into its cgroup (clone3 CLONE_INTO_CGROUP); ps lists the cgroup" {
	cfg . sh -c 'sleep 100 & sleep 100 & echo started; wait'
	if command -v strace >/dev/null; then
		timeout 60 strace -qq -o "$BUNDLE/create.strace" -e trace=clone3,clone,openat \
			"$AGENTRT" --root "$TEST_ROOT" create --bundle "$BUNDLE" ci \
			</dev/null >"$BUNDLE/ci.out" 2>"$BUNDLE/ci.err" || fail "create: $(cat "$BUNDLE/ci.err")"
		slurp "$BUNDLE/create.strace"
		[[ $REPLY =~ clone3\(\{flags=[^}]*CLONE_INTO_CGROUP ]] || fail "no clone3 CLONE_INTO_CGROUP: $REPLY"
		[[ $REPLY != *"cgroup.procs\", O_WRONLY"* ]] || fail "init moved through cgroup.procs: $REPLY"
	else
		create_container ci
		[ "$status" -eq 0 ] || fail "create: $output"
	fi
	local pid
	pid=$(container_pid ci)
	slurp /proc/"$pid"/cgroup
	[ "$REPLY" = "0::$CG" ] || fail "init in $REPLY"
	cg_procs "$CGDIR"
	[ "$REPLY" = "$pid" ] || fail "cgroup.procs: $REPLY"
	run rt start ci
	[ "$status" -eq 0 ] || fail "start: $output"
	wait_for_text started "$BUNDLE/ci.out"
	# exec joins the container's cgroup and cgroup namespace
	run rt exec ci cat /proc/self/cgroup
	[ "$status" -eq 0 ] && [ "$output" = 0::/ ] || fail "exec: $output"
	rt_bg exec -d ci sleep 100
	[ "$status" -eq 0 ] || fail "exec -d: $output"
	cg_procs "$CGDIR"
	[ "$(wc -w <<<"$REPLY")" -eq 4 ] || fail "cgroup.procs after exec -d: $REPLY"
	run rt ps --format json ci
	[ "$status" -eq 0 ] || fail "ps: $output"
	[ "$(tr -d '[] ' <<<"$output" | tr , '\n' | sort -n | tr '\n' ' ')" = "$(tr ' ' '\n' <<<"$REPLY" | sort -n | tr '\n' ' ')" ] ||
		fail "ps: $output; cgroup.procs: $REPLY"
	run rt delete --force ci
	[ "$status" -eq 0 ] || fail "delete: $output"
}

@test "cgroups v2: the cgroup namespace is rooted at the container's cgroup; the mount is read-only cgroup2" {
	cfg '.linux.resources.memory = {"limit": 67108864}' sh -c \
		'cat /proc/self/cgroup; cat /sys/fs/cgroup/memory.max
		grep " /sys/fs/cgroup " /proc/self/mountinfo
		mkdir /sys/fs/cgroup/agentrt-x && echo mkdir-ok
		echo 1 >/sys/fs/cgroup/pids.max && echo write-ok
		echo $$ >/sys/fs/cgroup/cgroup.procs && echo procs-ok
		echo end'
	run rt run --bundle "$BUNDLE" ns
	[ "$status" -eq 0 ] || fail "run: $output"
	[ "${lines[0]}" = "0::/" ] || fail "/proc/self/cgroup: ${lines[0]}"
	[ "${lines[1]}" = 67108864 ] || fail "memory.max inside: ${lines[1]}"
	# mountinfo: ID PARENT DEV ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTS
	local mi=${lines[2]} f
	read -r -a f <<<"$mi"
	[ "${f[3]}" = / ] || fail "mount root: $mi"
	[[ ${f[5]} == ro,* ]] || fail "not read-only: $mi"
	[[ $mi == *" - cgroup2 "* ]] || fail "not cgroup2: $mi"
	[[ $output != *-ok* ]] || fail "wrote to /sys/fs/cgroup: $output"
	[[ $output == *"Read-only file system"* ]] || fail "$output"
	[ "${lines[-1]}" = end ]
	[ ! -d "$CGDIR/agentrt-x" ]
}

@test "cgroups v2: in a user namespace too the cgroup namespace and a read-only cgroup2 mount" {
	# identity mapping: no chown of the (hard-linked) rootfs needed
	cfg '.linux.namespaces += [{"type": "user"}] |
		.linux.uidMappings = [{"containerID": 0, "hostID": 0, "size": 65536}] |
		.linux.gidMappings = [{"containerID": 0, "hostID": 0, "size": 65536}] |
		.linux.resources.pids = {"limit": 33}' sh -c \
		'cat /proc/self/cgroup; cat /sys/fs/cgroup/pids.max; grep " /sys/fs/cgroup " /proc/self/mountinfo
		readlink /proc/self/ns/user; echo 5 >/sys/fs/cgroup/pids.max && echo write-ok; echo end'
	run rt run --bundle "$BUNDLE" uns
	[ "$status" -eq 0 ] || fail "run: $output"
	[ "${lines[0]}" = "0::/" ] || fail "/proc/self/cgroup: ${lines[0]}"
	[ "${lines[1]}" = 33 ] || fail "pids.max inside: ${lines[1]}"
	[[ ${lines[2]} == *" / /sys/fs/cgroup ro,"*" - cgroup2 "* ]] || fail "mount: ${lines[2]}"
	[ "${lines[3]}" != "$(readlink /proc/self/ns/user)" ] || fail "no user namespace"
	[[ $output != *write-ok* ]] || fail "wrote pids.max: $output"
}

@test "cgroups v2: --systemd-cgroup without systemd fails at create, makes no cgroup" {
	# with systemd as PID 1 the driver makes a transient unit (tests/vm/systemd-cgroup.bats);
	# here systemd does not run: a clear error, never a silent cgroupfs fallback
	cfg '.linux.cgroupsPath = "agentrt-test.slice:agentrt:sd1" | .linux.resources.pids = {"limit": 42}' sleep 100
	local top=/sys/fs/cgroup/agentrt.slice
	status=0
	timeout 60 "$AGENTRT" --root "$TEST_ROOT" --systemd-cgroup run -d --bundle "$BUNDLE" sd1 \
		</dev/null >"$BUNDLE/sd1.out" 2>"$BUNDLE/sd1.err" || status=$?
	slurp "$BUNDLE/sd1.err"
	[ "$status" -ne 0 ] || fail "run -d succeeded without systemd"
	[[ $REPLY == *"cannot reach systemd over D-Bus"* ]] || fail "unclear error: $REPLY"
	[ ! -d "$top" ] || fail "$top made"
	[ ! -e "$TEST_ROOT/sd1" ] || fail "state left"
}

@test "cgroups v2: unified keys are applied; hostile keys are rejected" {
	cfg '.linux.resources.unified = {"memory.high": "50331648", "pids.max": "77"}' sleep 100
	run_detached un
	[ "$status" -eq 0 ] || fail "run -d: $output"
	cgis memory.high 50331648
	cgis pids.max 77
	# a bad key: another cgroup, which must not be left behind
	update_config '.linux.resources.unified = {"@KEY@": "1"} | .linux.cgroupsPath += "-bad"'
	local tmpl k
	read -r -d '' tmpl <"$BUNDLE/config.json" || true
	for k in '../memory.max' 'cgroup.procs' 'memory.max/../../memory.max' 'nosuch.key' \
		'memory.max\u0000x'; do
		# k is put in the JSON as it is: \u0000 is a NUL in the key
		printf '%s\n' "${tmpl//@KEY@/$k}" >"$BUNDLE/config.json"
		create_container bad
		assert_clean_failure
		[[ $output == *unified* || $output == *NUL* ]] || fail "key $k: $output"
		[ ! -d "$CGDIR-bad" ] || fail "key $k: $CGDIR-bad left"
	done
	cgis memory.max max
	cgis pids.max 77
	[ "$(container_status un)" = running ]
}

@test "cgroups v2: bad limits are clear errors and leave no cgroup" {
	agentrt_only "error texts"
	update_config '.linux.resources = "@RES@"'
	local tmpl r
	read -r -d '' tmpl <"$BUNDLE/config.json" || true
	for r in '{"memory": {"limit": -5}}:memory.limit' '{"cpu": {"cpus": "7"}}:cpuset.cpus' \
		'{"cpu": {"quota": 5}}:cpu.quota' \
		'{"devices": [{"allow": true, "type": "x"}]}:type'; do
		printf '%s\n' "${tmpl//\"@RES@\"/${r%:*}}" >"$BUNDLE/config.json"
		create_container bad
		assert_clean_failure
		[[ $output == *"${r##*:}"* ]] || fail "${r%:*}: $output"
		[ ! -d "$CGDIR" ] || fail "${r%:*}: cgroup left"
	done
}

@test "cgroups v2: a failed create sharing a running container's cgroup leaves it alone" {
	cfg . sleep 100
	run_detached first
	[ "$status" -eq 0 ] || fail "run -d: $output"
	local pid
	pid=$(container_pid first)
	# same cgroupsPath (runc 1.1 warns, crun allows); fails after joining it
	update_config '.linux.resources.cpu = {"cpus": "7"}'
	create_container second
	assert_clean_failure
	[ -e /proc/"$pid" ] || fail "the failed create killed the other container"
	[ "$(container_status first)" = running ]
	cg_procs "$CGDIR"
	[ "$REPLY" = "$pid" ] || fail "cgroup.procs: $REPLY"
}

@test "cgroups v2: the agent profile's default limits land in memory.max, pids.max, cpu.max" {
	agentrt_only "the agent profile"
	cfg . sleep 100
	# its own --root: the profile keeps a cache there
	local root=$BUNDLE/root
	status=0
	timeout 60 "$AGENTRT" --root "$root" --profile agent run -d --bundle "$BUNDLE" ag \
		</dev/null >"$BUNDLE/ag.out" 2>"$BUNDLE/ag.err" || status=$?
	[ "$status" -eq 0 ] || fail "run -d --profile agent: $(cat "$BUNDLE/ag.err")"
	cgis memory.max $((2 * 1024 * 1024 * 1024))
	cgis pids.max 1024
	cgis cpu.max "200000 100000"
	run timeout 60 "$AGENTRT" --root "$root" delete --force ag
	[ "$status" -eq 0 ] || fail "delete: $output"
	[ ! -d "$CGDIR" ] || fail "cgroup left"
}

@test "cgroups v2: delete removes the cgroup; nothing of ours is left" {
	cfg '.linux.resources.pids = {"limit": 20}' sleep 100
	run_detached d1
	[ "$status" -eq 0 ] || fail "run -d: $output"
	[ -d "$CGDIR" ]
	run rt pause d1
	[ "$status" -eq 0 ] || fail "pause: $output"
	run rt delete --force d1
	[ "$status" -eq 0 ] || fail "delete --force of a paused container: $output"
	[ ! -d "$CGDIR" ] || fail "cgroup left: $CGDIR"
	# the default path /agentrt/<id> (empty cgroupsPath); the parent goes too
	update_config '.linux.cgroupsPath = ""'
	create_container d2
	[ "$status" -eq 0 ] || fail "create: $output"
	[ -d /sys/fs/cgroup/agentrt/d2 ] || fail "no /sys/fs/cgroup/agentrt/d2"
	run rt delete d2
	[ "$status" -eq 0 ] || fail "delete: $output"
	[ ! -d /sys/fs/cgroup/agentrt ] || fail "left: $(find /sys/fs/cgroup/agentrt)"
	# after every test of this file: only this file's parent, with this test's
	# (now removed) cgroup below it
	local left
	left=$(find /sys/fs/cgroup -mindepth 1 -type d -name '*agentrt*' ! -path "/sys/fs/cgroup/$CG_PARENT")
	[ -z "$left" ] || fail "cgroups left: $left"
}
