#!/bin/sh
# rootfs-selftest.sh - black-box checks of the container filesystem setup
# (container/setup.h) through build/tests/rootfs-driver, as root.
#
#   tests/helpers/rootfs-selftest.sh [path/to/rootfs-driver]
#
# Prints one "ok - name" / "not ok - name: detail" line per check and exits
# non-zero if any failed.  Everything happens under a private mount
# namespace (the script re-executes itself under `unshare -m`) and in a
# temp dir that is removed at the end.  The symlink-attack cases follow
# CVE-2019-16884, CVE-2019-19921 (/proc as a symlink), CVE-2021-30465,
# CVE-2024-45310, CVE-2025-31133, CVE-2025-52565 and the rootfs /dev
# symlinks (THREAT-MODEL.md): their canaries are host paths that must never appear.
set -u

DRIVER=${1:-build/tests/rootfs-driver}
case $DRIVER in /*) ;; *) DRIVER=$(pwd)/$DRIVER ;; esac

if [ "$(id -u)" != 0 ]; then
	echo "ok - skipped: needs root # SKIP"
	exit 0
fi
if [ -z "${AGENTRT_ROOTFS_SELFTEST_NS:-}" ]; then
	export AGENTRT_ROOTFS_SELFTEST_NS=1
	exec unshare -m --propagation private "$0" "$DRIVER"
fi

T=$(mktemp -d /tmp/agentrt-rootfs-selftest.XXXXXX) || exit 1
CANARY=/tmp/agentrt-canary-$$
ESCAPE=/tmp/agentrt-escape-$$
DEVCANARY=/tmp/agentrt-devcanary-$$
FAILED=0
N=0

cleanup() {
	if [ -n "${KEEP_OUTPUT:-}" ]; then
		for f in "$T"/*.out; do echo "== $f"; cat "$f"; done >"$KEEP_OUTPUT"
	fi
	for m in $(awk -v t="$T" 'index($5, t) == 1 { print $5 }' /proc/self/mountinfo | sort -r); do
		umount -l "$m" 2>/dev/null
	done
	rm -rf "$T"
}
trap cleanup EXIT

ok() { # ok COND-EXIT-STATUS NAME [DETAIL]
	N=$((N + 1))
	if [ "$1" = 0 ]; then
		echo "ok - $2"
	else
		echo "not ok - $2${3:+: $3}"
		FAILED=$((FAILED + 1))
	fi
}

# A busybox rootfs at $1.
make_rootfs() {
	mkdir -p "$1/bin" "$1/proc" "$1/sys" "$1/dev" "$1/tmp" "$1/etc" "$1/mnt"
	cp /bin/busybox "$1/bin/busybox"
	for a in $(/bin/busybox --list); do
		[ "$a" = busybox ] || ln -s busybox "$1/bin/$a"
	done
}

# run NAME [driver flags...] -- script   -> output in $T/NAME.out, status in $RC
run() {
	name=$1
	shift
	timeout 30 "$DRIVER" "$@" >"$T/$name.out" 2>&1
	RC=$?
}

has() { grep -q -- "$2" "$T/$1.out"; }
hasline() { grep -qx -- "$2" "$T/$1.out"; }
detail() { tr '\n' '|' <"$T/$1.out" | cut -c1-300; }

R=$T/rootfs
make_rootfs "$R"
mkdir -p "$T/share/sub" "$T/vol"
echo hello >"$T/share/file"
mount -t tmpfs -o size=1m sub "$T/share/sub"

PROBE='
set -u
while read -r _ _ _ root mp opts rest; do echo "MNT $mp $opts ${rest#*- }"; done </proc/self/mountinfo
touch /rootwrite 2>/dev/null && echo ROOT_RW || echo ROOT_RO
echo x >/proc/sys/kernel/domainname 2>/dev/null && echo SYS_RW || echo SYS_RO
echo KEYS $(wc -c </proc/keys) TIMER $(wc -c </proc/timer_list)
echo ACPI $(ls -A /proc/acpi | wc -l)
touch /proc/acpi/x 2>/dev/null && echo ACPI_RW || echo ACPI_RO
for d in null zero full random urandom tty; do stat -c "DEV %n %F %t:%T %a" /dev/$d; done
for l in ptmx fd stdin stdout stderr; do echo "LINK $l $(readlink /dev/$l)"; done
stat -c "CONSOLE %F %t" /dev/console 2>/dev/null || echo CONSOLE none
echo CG $(ls /sys/fs/cgroup | tr "\n" " ")
touch /sys/fs/cgroup/memory/x 2>/dev/null && echo CG_RW || echo CG_RO
echo DONE
'

defaults_checks() { # defaults_checks NAME
	n=$1
	ok $RC "$n: run succeeds" "$(detail "$n")"
	hasline "$n" DONE
	ok $? "$n: probe ran to the end"
	has "$n" '^MNT / ro,'
	ok $? "$n: root.readonly gives a read-only /"
	hasline "$n" ROOT_RO
	ok $? "$n: writing / fails"
	has "$n" '^MNT /proc .* proc proc'
	ok $? "$n: /proc is procfs"
	has "$n" '^MNT /sys ro,nosuid,nodev,noexec.* sysfs'
	ok $? "$n: /sys is a read-only sysfs"
	has "$n" '^MNT /dev/pts .* devpts devpts .*gid=5,mode=620,ptmxmode=666'
	ok $? "$n: /dev/pts is a new devpts instance with the options given"
	has "$n" '^MNT /dev/shm rw,nosuid,nodev,noexec.* tmpfs shm rw,size=65536k'
	ok $? "$n: /dev/shm tmpfs with size"
	has "$n" '^MNT /dev/mqueue .* mqueue'
	ok $? "$n: /dev/mqueue"
	has "$n" '^MNT /proc/sys ro,'
	ok $? "$n: readonlyPaths /proc/sys is read-only"
	hasline "$n" SYS_RO
	ok $? "$n: writing /proc/sys fails"
	hasline "$n" "KEYS 0 TIMER 0"
	ok $? "$n: masked files read empty" "$(grep ^KEYS "$T/$n.out")"
	hasline "$n" "ACPI 0" && hasline "$n" ACPI_RO
	ok $? "$n: masked directory is an empty read-only tmpfs"
	has "$n" '^MNT /sys/firmware ro,.* tmpfs'
	ok $? "$n: /sys/firmware masked with tmpfs"
	for d in null:1:3 zero:1:5 full:1:7 random:1:8 urandom:1:9 tty:5:0; do
		name=${d%%:*}
		mm=${d#*:}
		hasline "$n" "DEV /dev/$name character special file $(printf '%x:%x' "${mm%:*}" "${mm#*:}") 666"
		ok $? "$n: /dev/$name is char $mm mode 666"
	done
	hasline "$n" "LINK ptmx pts/ptmx" && hasline "$n" "LINK fd /proc/self/fd" &&
		hasline "$n" "LINK stdin /proc/self/fd/0" && hasline "$n" "LINK stderr /proc/self/fd/2"
	ok $? "$n: /dev links ptmx, fd, stdin, stderr"
	has "$n" '^MNT /sys/fs/cgroup ro,.* tmpfs' || has "$n" '^MNT /sys/fs/cgroup ro,.* cgroup2'
	ok $? "$n: /sys/fs/cgroup mounted read-only"
	hasline "$n" CG_RO
	ok $? "$n: cgroupfs not writable"
}

# --- 1. runc's default config, pivot_root, read-only root, terminal ---------
run defaults -D -r -t "$R" -- /bin/sh -c "$PROBE"
defaults_checks defaults
has defaults '^MNT /dev/console .* devpts devpts' && hasline defaults "CONSOLE character special file 88"
ok $? "defaults: /dev/console is the pty peer from the container's devpts (CVE-2025-52565)"

# --- 2. the same in a new user namespace (devices are bind mounts) ----------
run userns -D -r -t -U "$R" -- /bin/sh -c "$PROBE"
defaults_checks userns
has userns '^MNT /dev/null .*devtmpfs'
ok $? "userns: /dev/null is the host node bind-mounted"

# --- 3. --no-pivot ----------------------------------------------------------
run nopivot -D -P "$R" -- /bin/sh -c 'ls /; echo DONE'
ok $RC "no-pivot: run succeeds" "$(detail nopivot)"
hasline nopivot bin
ok $? "no-pivot: / is the rootfs"

# --- 4. bind mounts ---------------------------------------------------------
run bind -b "$T" -m /mnt/ro:bind:$T/share:rbind,ro -m /mnt/rro:bind:$T/share:rbind,rro \
	-m /mnt/rel:none:share:bind,nosuid -m /mnt/f/file:bind:$T/share/file:bind,ro \
	-m /mnt/shared:bind:$T/share:rbind,rshared -m /proc:proc:proc: "$R" -- /bin/sh -c '
cat /mnt/ro/file; touch /mnt/ro/x 2>/dev/null && echo RO_TOP_RW || echo RO_TOP_RO
touch /mnt/ro/sub/x 2>/dev/null && echo RO_SUB_RW || echo RO_SUB_RO
touch /mnt/rro/sub/y 2>/dev/null && echo RRO_SUB_RW || echo RRO_SUB_RO
ls /mnt/rel/file && echo REL_OK
echo F $(cat /mnt/f/file); echo x >/mnt/f/file 2>/dev/null && echo FILE_RW || echo FILE_RO
grep " /mnt/rel " /proc/self/mountinfo
grep " /mnt/shared " /proc/self/mountinfo'
ok $RC "bind: run succeeds" "$(detail bind)"
hasline bind hello && hasline bind RO_TOP_RO
ok $? "bind: ro bind readable, not writable"
hasline bind RO_SUB_RW
ok $? "bind: rbind,ro leaves submounts writable (as runc)"
hasline bind RRO_SUB_RO
ok $? "bind: rro makes submounts read-only (mount_setattr AT_RECURSIVE)"
hasline bind REL_OK && has bind ' /mnt/rel rw,nosuid'
ok $? "bind: type none + bind, source relative to the bundle, nosuid"
hasline bind "F hello" && hasline bind FILE_RO
ok $? "bind: file source gets a file mount point, ro"
has bind ' /mnt/shared .* shared:'
ok $? "bind: rshared propagation"
test ! -e "$T/share/x"
ok $? "bind: nothing written to the ro source"

# --- 5. tmpfs options, linux.devices, sysctl --------------------------------
run misc -n net -n uts -m /proc:proc:proc: -m /dev:tmpfs:tmpfs:nosuid,mode=755 \
	-m /scratch:tmpfs:tmpfs:size=1m,mode=1777,nodev,noexec -d /dev/net/tun:c:10:200:0600 \
	-d /dev/fifo:p:0:0:0640 -s net.ipv4.ip_forward=1 -s kernel.domainname=agentrt-canary \
	"$R" -- /bin/sh -c '
stat -c "SCRATCH %a" /scratch; grep " /scratch " /proc/self/mountinfo
stat -c "TUN %F %t:%T %a" /dev/net/tun; stat -c "FIFO %F %a" /dev/fifo
echo FWD $(cat /proc/sys/net/ipv4/ip_forward); echo DOM $(cat /proc/sys/kernel/domainname)'
ok $RC "misc: run succeeds" "$(detail misc)"
hasline misc "SCRATCH 1777" && has misc ' /scratch rw,nodev,noexec.* tmpfs .*size=1024k'
ok $? "tmpfs: size=, mode= and flags"
hasline misc "TUN character special file a:c8 600" && hasline misc "FIFO fifo 640"
ok $? "linux.devices: char device and fifo with fileMode, parent created"
hasline misc "FWD 1"
ok $? "sysctl: net.ipv4.ip_forward written in the private netns"
hasline misc "DOM agentrt-canary" && [ "$(cat /proc/sys/kernel/domainname)" != agentrt-canary ]
ok $? "sysctl: kernel.domainname set in the container only"

run sysctl_nons -m /proc:proc:proc: -s net.ipv4.ip_forward=1 "$R" -- /bin/true
[ $RC != 0 ] && has sysctl_nons 'net.ipv4.ip_forward.*network namespace'
ok $? "sysctl: net.* without a private netns is refused, naming the key" "$(detail sysctl_nons)"
run sysctl_host -n uts -s kernel.core_pattern=x "$R" -- /bin/true
[ $RC != 0 ] && has sysctl_host 'kernel.core_pattern.*not in a separate'
ok $? "sysctl: non-namespaced key refused" "$(detail sysctl_host)"
run sysctl_bad -n net -s net..ipv4=1 "$R" -- /bin/true
[ $RC != 0 ] && has sysctl_bad 'invalid key'
ok $? "sysctl: key with an empty component refused"
run sysctl_slash -n net -s net/ipv4/ip_forward=1 "$R" -- /bin/true
[ $RC != 0 ] && has sysctl_slash 'invalid key'
ok $? "sysctl: key with / refused"

# --- 6. rootfsPropagation ----------------------------------------------------
run prop_shared -p rshared -m /proc:proc:proc: "$R" -- /bin/sh -c 'grep "^[0-9]* [0-9]* [^ ]* [^ ]* / " /proc/self/mountinfo'
ok $RC "rootfsPropagation rshared: run succeeds" "$(detail prop_shared)"
has prop_shared ' / .*shared:'
ok $? "rootfsPropagation rshared: / is shared"
run prop_private -p private -m /proc:proc:proc: "$R" -- /bin/sh -c 'grep "^[0-9]* [0-9]* [^ ]* [^ ]* / " /proc/self/mountinfo'
[ $RC = 0 ] && ! has prop_private 'shared:\|master:'
ok $? "rootfsPropagation private: / is private"
run prop_unbind -p runbindable -m /proc:proc:proc: "$R" -- /bin/sh -c 'grep "^[0-9]* [0-9]* [^ ]* [^ ]* / " /proc/self/mountinfo'
[ $RC = 0 ] && has prop_unbind ' / .*unbindable'
ok $? "rootfsPropagation runbindable: / is unbindable" "$(detail prop_unbind)"
run prop_bad -p bogus "$R" -- /bin/true
[ $RC != 0 ] && has prop_bad 'rootfsPropagation'
ok $? "rootfsPropagation bogus: refused"

# --- 7. attacks --------------------------------------------------------------
# 1.4 CVE-2019-19921 / CVE-2023-27561: /proc (or /sys) is a symlink
A=$T/a14 && make_rootfs "$A" && rmdir "$A/proc" && mkdir "$A/bad-proc" && ln -s /bad-proc "$A/proc"
run a14 -m /proc:proc:proc: "$A" -- /bin/true
[ $RC != 0 ] && has a14 'ordinary directory'
ok $? "CVE-2019-19921: proc on a symlinked /proc refused" "$(detail a14)"
A=$T/a14s && make_rootfs "$A" && rmdir "$A/sys" && mkdir "$A/bad-sys" && ln -s /bad-sys "$A/sys"
run a14s -m /sys:sysfs:sysfs:ro "$A" -- /bin/true
[ $RC != 0 ] && has a14s 'ordinary directory'
ok $? "CVE-2023-27561: sysfs on a symlinked /sys refused" "$(detail a14s)"

# 1.3 / 1.10: nothing but procfs over /proc
run a13 -m /proc:tmpfs:tmpfs: "$R" -- /bin/true
[ $RC != 0 ] && has a13 'only procfs'
ok $? "CVE-2019-16884: tmpfs over /proc refused" "$(detail a13)"
run a110 -m /proc:proc:proc: -m /proc/sys/kernel:tmpfs:tmpfs: "$R" -- /bin/true
[ $RC != 0 ]
ok $? "CVE-2025-52881: tmpfs over /proc/sys/kernel refused" "$(detail a110)"
run a110ok -m /proc:proc:proc: -m /proc/meminfo:bind:$T/share/file:bind "$R" -- /bin/cat /proc/meminfo
[ $RC = 0 ] && hasline a110ok hello
ok $? "lxcfs-style bind over /proc/meminfo allowed" "$(detail a110ok)"

# 1.5a CVE-2021-30465: a mount target under a symlink that climbs out
A=$T/a15 && make_rootfs "$A" && mkdir -p "$A/vol" && ln -s ../../../../../../..$ESCAPE "$A/vol/a"
run a15 -m /vol/a/b:tmpfs:tmpfs: "$A" -- /bin/sh -c 'stat -f -c "FS %T" /vol/a/b'
[ $RC = 0 ] && hasline a15 "FS tmpfs" && [ -d "$A$ESCAPE/b" ] && [ ! -e "$ESCAPE" ]
ok $? "CVE-2021-30465: mount lands inside the rootfs, host path not created" "$(detail a15)"

# 1.7 CVE-2024-45310: parent of a target is an absolute symlink to a host path
A=$T/a17 && make_rootfs "$A" && ln -s "$CANARY/x" "$A/vol2" && ln -s "$CANARY/f" "$A/vol3"
run a17 -m /vol2/y/z:tmpfs:tmpfs: -m /vol3/g:bind:$T/share/file:bind "$A" -- /bin/cat /vol3/g
[ ! -e "$CANARY" ] && [ -d "$A$CANARY/x/y/z" ] && [ -f "$A$CANARY/f/g" ]
ok $? "CVE-2024-45310: mount points created inside the rootfs only" "rc=$RC $(detail a17)"

# 1.8 CVE-2025-31133: /dev/null replaced by a symlink to a procfs file, or deleted
A=$T/a18 && make_rootfs "$A" && mkdir -p "$T/devsrc18"
ln -s /proc/sys/kernel/core_pattern "$T/devsrc18/null"
run a18 -m /proc:proc:proc: -m /dev:bind:$T/devsrc18:rbind -M /proc/timer_list "$A" -- /bin/true
[ $RC != 0 ] && has a18 'not the null device'
ok $? "CVE-2025-31133: masking with a symlinked /dev/null fails hard" "$(detail a18)"
mkdir -p "$T/devsrc18b"
run a18b -m /proc:proc:proc: -m /dev:bind:$T/devsrc18b:rbind -M /proc/timer_list "$A" -- /bin/true
[ $RC != 0 ] && has a18b '/dev/null'
ok $? "CVE-2025-31133: masking without /dev/null fails hard" "$(detail a18b)"
run a18c -m /proc:proc:proc: -m /dev:bind:$T/devsrc18b:rbind -M /proc/no-such-file "$A" -- /bin/true
ok $RC "masked path that does not exist is skipped" "$(detail a18c)"

# 1.9 CVE-2025-52565: /dev/console is a symlink to a procfs file
A=$T/a19 && make_rootfs "$A" && mkdir -p "$T/devsrc19/pts"
ln -s /proc/sys/kernel/core_pattern "$T/devsrc19/console"
run a19 -t -m /proc:proc:proc: -m /dev:bind:$T/devsrc19:rbind \
	-m /dev/pts:devpts:devpts:newinstance,ptmxmode=0666 "$A" -- /bin/true
[ $RC != 0 ] && has a19 'console'
ok $? "CVE-2025-52565: symlinked /dev/console refused" "$(detail a19)"

# 1.11 CVE-2026-41579: the image's /dev is a symlink to a host path
A=$T/a111 && make_rootfs "$A" && rmdir "$A/dev" && ln -s "$DEVCANARY" "$A/dev"
run a111 -m /proc:proc:proc: "$A" -- /bin/true
[ $RC != 0 ] && [ ! -e "$DEVCANARY" ]
ok $? "CVE-2026-41579: symlinked /dev refused, no host node created" "$(detail a111)"
run a111b -D "$A" -- /bin/true
[ $RC != 0 ] && [ ! -e "$DEVCANARY" ] && [ ! -e "$A$DEVCANARY" ]
ok $? "CVE-2026-41579: tmpfs on a symlinked /dev refused" "$(detail a111b)"

# 1.15: files the runtime creates in the rootfs never land on the host
A=$T/a115 && make_rootfs "$A" && ln -s "$CANARY/dev/net" "$A/dev/net"
run a115 -m /proc:proc:proc: -d /dev/net/tun:c:10:200:0600 "$A" -- /bin/true
[ ! -e "$CANARY" ]
ok $? "linux.devices under a symlinked dir stays in the rootfs" "rc=$RC $(detail a115)"

for c in "$CANARY" "$ESCAPE" "$DEVCANARY"; do
	[ ! -e "$c" ]
	ok $? "canary $c never appeared on the host"
done

echo "# $N checks, $FAILED failed"
[ $FAILED = 0 ]
