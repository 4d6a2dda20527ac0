# syscall-trail.bash - the trail's refused system calls, for audit-evidence.bats and the VM
# lane's tests/vm/abi-i386.bats: counts, records, and the sweep of a profile's denied calls
# through another ABI of x86-64.

# ra ARGS...: the runtime with the agent profile
ra() {
	rt --profile agent "$@"
}

# refused ID NAME: how many refused calls of NAME the trail has (counted ones included)
refused() {
	ra audit --format json --kind syscall "$1" |
		jq -s --arg n "$2" '[.[] | select(.syscall == $n and .verdict == "refused" or (.coalesced and .syscall == $n)) | (.coalesced // .count)] | add // 0'
}

# wait_refused ID NAME: until the trail has a refused call of NAME (up to 10 s; the caller
# checks what it needs afterwards)
wait_refused() {
	for _ in $(seq 100); do
		[ "$(refused "$1" "$2")" -ge 1 ] && return
		sleep 0.1
	done
}

# monitor_where ID: the container's monitor as seen from outside (state, kernel function,
# kernel stack, its user stack when gdb is there), for a failure's message: an exec whose
# denied calls are not answered waits on the monitor
monitor_where() {
	local mon
	mon=$(cut -d' ' -f1 "$TEST_ROOT/$1/monitor.pid" 2>/dev/null) || { echo "no monitor.pid"; return; }
	echo "monitor $mon: $(grep -E '^State' "/proc/$mon/status" 2>/dev/null | tr -s '\t ' ' ') in $(cat "/proc/$mon/wchan" 2>/dev/null);" \
		"kernel: $(sed 's/^\[<0>\] //' "/proc/$mon/stack" 2>/dev/null | tr '\n' ' ')"
	if command -v gdb >/dev/null; then
		echo "user: $(timeout 20 gdb -p "$mon" -batch -ex bt 2>/dev/null | grep '^#' | head -12 | tr '\n' ' ')"
	fi
}

# syscall_recs ID: the trail's syscall records, one JSON object a line
syscall_recs() {
	ra audit --format json --kind syscall "$1"
}

# abi_calls PROFILE ABI: the calls to try through ABI (i386 or x32): every name of PROFILE's
# deny list that the ABI has, the ABI's own names of the same operations (i386: umount, stime,
# clock_settime64, clock_adjtime64), clone with CLONE_NEWUSER and ioctl TIOCSTI.  A denied name
# try-syscall has no probe for fails the test: a new deny-list entry gets one.
abi_calls() {
	local n line
	local -A known=()
	# (no grep a name: under the VM lane's emulation a process costs more than the call)
	while read -r n line; do known[$n]=$line; done < <("$HELPER_DIR/try-syscall" --abi-list)
	for n in $(rt profile show "$1" | jq -r '.seccomp.deny[]') \
		umount stime clock_settime64 clock_adjtime64 clone-newuser tiocsti; do
		[ -n "${known[$n]+set}" ] || fail "try-syscall has no i386/x32 probe for $n"
		[[ " ${known[$n]} " == *" $2=-1 "* ]] || echo "$n"
	done
}

# abi_results ARRAY ABI TEXT: ARRAY[call] = result for each "ABI:call=result" line of
# `try-syscall --each` in TEXT
abi_results() {
	local -n into=$1
	local k v
	while IFS="=" read -r k v; do [ -z "$k" ] || into[${k#"$2:"}]=$v; done <<<"$3"
}

# abi_sweep PROFILE ABI: every call of abi_calls from the process of a container of PROFILE and
# from one exec; each
# must fail with the profile's errno (EPERM) and be in the trail as refused, under its name on
# that ABI and with the ABI named; getpid through the same ABI is the control (not refused).
abi_sweep() {
	local profile=$1 abi=$2 calls n rec bad= unrecorded= recs arch loop results init_results
	local -A in_exec=() in_init=() recorded=()
	calls=$(abi_calls "$profile" "$abi" | tr '\n' ' ')
	[ "$(wc -w <<<"$calls")" -ge 30 ] || fail "too few calls: $calls"
	# one exec of try-syscall for the sweep, each call in a child of its own (--each)
	# shellcheck disable=SC2086
	loop="try-syscall --each $(printf "$abi:%s " $calls getpid)"
	# from the container's process (the init's filter) and from exec (the one exec loads)
	set_cmd "$loop >/tmp/init.res; mv /tmp/init.res /tmp/init.done; sleep 60"
	AGENTRT_PROFILE=$profile run_detached "$ID"
	[ "$status" -eq 0 ] || fail "run: $output"
	run rt exec "$ID" sh -c "$loop"
	[ "$status" -eq 0 ] || fail "exec: $output"
	results=$output
	for _ in $(seq 100); do rt exec "$ID" test -e /tmp/init.done && break; sleep 0.1; done
	init_results=$(rt exec "$ID" cat /tmp/init.done) || fail "no results from the container's process"
	abi_results in_exec "$abi" "$results"
	abi_results in_init "$abi" "$init_results"
	for n in $calls; do
		[ "${in_exec[$n]:-}" = EPERM ] || bad+=" exec:$n=${in_exec[$n]:-(no result)}"
		[ "${in_init[$n]:-}" = EPERM ] || bad+=" init:$n=${in_init[$n]:-(no result)}"
	done
	[ -z "$bad" ] || fail "$abi calls not refused with EPERM:$bad"
	# the control went through the filter: i386's getpid works, x32's is ENOSYS without x32
	[ "${in_exec[getpid]:-}" = ok ] || { [ "$abi" = x32 ] && [ "${in_exec[getpid]:-}" = ENOSYS ]; } ||
		fail "getpid: $results"
	for _ in $(seq 50); do [ "$(refused "$ID" ioctl)" -ge 2 ] && break; sleep 0.1; done
	recs=$(syscall_recs "$ID")
	[ "$abi" = i386 ] && arch=x86 || arch=x32
	while read -r n; do recorded[$n]=1; done < <(jq -r --arg a "$arch" \
		'select(.verdict == "refused" and .arch == $a and .errno == 1) | .syscall' <<<"$recs")
	for n in $calls; do
		rec=$n
		[ "$n" = clone-newuser ] && rec=clone
		[ "$n" = tiocsti ] && rec=ioctl
		[ -n "${recorded[$rec]:-}" ] || unrecorded+=" $rec"
	done
	[ -z "$unrecorded" ] || fail "$abi calls refused without a record of their own:$unrecorded; trail: $recs"
	! jq -se 'any(.[]; .syscall == "getpid")' <<<"$recs" >/dev/null || fail "getpid recorded: $recs"
}
