#!/bin/bash
# vm-systemd-boot.sh - run CMD... under systemd as PID 1 inside the VM lane.
#
# vm-run.sh's own init stays PID 1 of the VM; this script (run by it, as
# root, in the VM) starts /lib/systemd/systemd as PID 1 of a new pid and
# mount namespace (systemd's container mode, as under systemd-nspawn) on the
# VM's cgroup v2 hierarchy, with a single unit to start (no sysinit.target:
# its tmpfiles would empty the VM's /tmp and it costs more minutes): a
# service that starts the system bus (dbus-daemon, then SIGUSR1 makes systemd
# connect to it), runs CMD and tells systemd to exit.  CMD's output and
# status come back through files in $SD_OUT (default build/vm-systemd in the
# shared folder); prints the output, exits with CMD's status.  Measured
# under TCG: about 80 s from exec to the test unit (loading the host's units
# and running its generators), about 12 s to exit.
#   usage: tests/helpers/vm-systemd-boot.sh CMD [ARGS...]   env SD_TIMEOUT (s, 600)
set -u
[ $# -ge 1 ] || { echo "usage: $0 CMD [ARGS...]" >&2; exit 2; }
out=${SD_OUT:-$PWD/build/vm-systemd}
mkdir -p "$out" /run/systemd/system
printf '%q ' "$@" >"$out/cmd"
: >"$out/output"
rm -f "$out/rc"
cat >/run/systemd/system/agentrt-vm-test.service <<UNIT
[Unit]
Description=agentrt VM tests under systemd
DefaultDependencies=no
[Service]
Type=oneshot
WorkingDirectory=$PWD
Environment=PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root
ExecStart=/bin/bash $out/run
UNIT
cat >"$out/run" <<RUN
mkdir -p /run/dbus
dbus-daemon --system --fork --nopidfile >$out/dbus.log 2>&1 || echo "# dbus-daemon failed" >>$out/output
for i in \$(seq 50); do busctl --system status org.freedesktop.systemd1 >/dev/null 2>&1 && break
	[ \$i = 1 ] && kill -USR1 1; sleep 0.2; done
bash $out/cmd >>$out/output 2>&1
echo \$? >$out/rc
systemctl --no-block exit
RUN
start=$(date +%s.%N)
# Without the host's generators (fstab, getty, sysv, cryptsetup, postgresql...: units for a
# machine that boots, none of which the test unit needs; each a program started under TCG, at
# the start and again at every daemon-reload): an empty read-only tmpfs over each generator
# directory, in systemd's own mount namespace (unshare's mounts are private)
unshare --pid --fork --mount-proc --kill-child \
	sh -c 'seen=
	for d in /lib/systemd/system-generators /usr/lib/systemd/system-generators \
		/usr/local/lib/systemd/system-generators /etc/systemd/system-generators; do
		r=$(readlink -f "$d") && [ -d "$r" ] || continue
		case " $seen " in *" $r "*) continue ;; esac
		seen="$seen $r"
		mount -t tmpfs -o ro,mode=755 agentrt-nogen "$r" || exit 1
	done
	exec "$@"' - \
	/lib/systemd/systemd --unit=agentrt-vm-test.service --log-target=console --log-level=warning \
	--show-status=false </dev/null >"$out/systemd.log" 2>&1 &
sd=$!
# CMD's output is passed on as it grows (a lane stopped from outside still shows how far it got)
shown=0
show_output() {
	local size
	size=$(stat -c %s "$out/output" 2>/dev/null) || return 0
	[ "$size" -gt "$shown" ] || return 0
	tail -c +$((shown + 1)) "$out/output" | head -c $((size - shown))
	shown=$size
}
# Bounded: the test unit's status file (or SD_TIMEOUT), then up to 30 s for systemd to exit
# on its own; killing unshare (--kill-child) kills the rest.
# (a deadline in seconds of the clock: under TCG beside a loaded host each round of the loop
# costs much more than its sleep)
deadline=$((SECONDS + ${SD_TIMEOUT:-600}))
while [ "$SECONDS" -lt "$deadline" ]; do
	show_output
	[ -s "$out/rc" ] && break
	kill -0 $sd 2>/dev/null || break
	sleep 0.5
done
for ((i = 0; i < 60; i++)); do kill -0 $sd 2>/dev/null || break; sleep 0.5; done
# SIGKILL: unshare --fork ignores SIGTERM while it waits for its child (a plain kill left this
# script in `wait` until the lane's outer timeout, with nothing printed); --kill-child then
# takes systemd and everything in its pid namespace with it
kill -KILL $sd 2>/dev/null
wait $sd
src=$?
end=$(date +%s.%N)
show_output
echo "# systemd-boot: systemd ran for $(echo "$end - $start" | bc 2>/dev/null || echo "?") s (exit $src)"
if [ ! -s "$out/rc" ]; then
	echo "# systemd-boot: the test unit did not finish in ${SD_TIMEOUT:-600} s; systemd log:"
	tail -n 30 "$out/systemd.log" | sed 's/^/#   /'
	exit 1
fi
exit "$(cat "$out/rc")"
