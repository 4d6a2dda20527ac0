#!/bin/bash
# egress-selftest.sh - the egress allowlist against a fake internet.
#
# Usage: tests/net/egress-selftest.sh build/tests/egress-driver   (root)
#
# Three network namespaces, TEST-NET addresses only, no route off the machine:
#   agentrt-t-h  plays the host: runs egress-driver (nftables + resolver);
#                the resolver's upstream socket lives here
#   agentrt-t-c  the container: the policy is applied in it
#   agentrt-t-s  the internet: 203.0.113.10, 198.51.100.20, 169.254.169.254
#                (TCP listeners on 80 and 8080), dnsmasq upstream at
#                192.0.2.5 and a rogue resolver at 198.51.100.53
# Links: c 192.0.2.2/30 <-> s 192.0.2.1/30, h 192.0.2.6/30 <-> s 192.0.2.5/30.
# Prints one "ok - ..." / "not ok - ..." line per check; exit 1 on failure.
set -u
DRIVER=$(readlink -f "${1:?usage: $0 path/to/egress-driver}")
P=agentrt-t-$$-
NS_H=${P}h NS_C=${P}c NS_S=${P}s
TMP=$(mktemp -d /tmp/agentrt-egress.XXXXXX)
PIDS=()
FAILED=0 COUNT=0

ok() { COUNT=$((COUNT + 1)); echo "ok - $*"; }
nok() { COUNT=$((COUNT + 1)); FAILED=$((FAILED + 1)); echo "not ok - $*"; }
check() { local what=$1; shift; if "$@" >>"$TMP/check.log" 2>&1; then ok "$what"; else nok "$what"; fi; }
in_c() { ip netns exec "$NS_C" "$@"; }
in_s() { ip netns exec "$NS_S" "$@"; }
in_h() { ip netns exec "$NS_H" "$@"; }

cleanup() {
	local pid
	for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null; done
	for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null; done
	for ns in "$NS_C" "$NS_H" "$NS_S"; do ip netns delete "$ns" 2>/dev/null; done
	rm -rf "$TMP"
}
trap cleanup EXIT

# bg NS CMD...: ip execs CMD, so $! is the PID to kill
bg() { local ns=$1; shift; ip netns exec "$ns" "$@" & PIDS+=($!); }

# connect HOST PORT: 0 when a TCP connection is made and the server talks
connect() { in_c timeout 5 socat -T2 -u "TCP:$1:$2,connect-timeout=2" - 2>/dev/null | grep -q hello; }

setup() {
	ip netns add "$NS_H" && ip netns add "$NS_C" && ip netns add "$NS_S" || return 1
	for ns in "$NS_H" "$NS_C" "$NS_S"; do ip -n "$ns" link set lo up; done
	ip link add c0 netns "$NS_C" type veth peer name s0 netns "$NS_S" || return 1
	ip link add h0 netns "$NS_H" type veth peer name s1 netns "$NS_S" || return 1
	ip -n "$NS_C" addr add 192.0.2.2/30 dev c0 && ip -n "$NS_C" link set c0 up
	ip -n "$NS_S" addr add 192.0.2.1/30 dev s0 && ip -n "$NS_S" link set s0 up
	ip -n "$NS_H" addr add 192.0.2.6/30 dev h0 && ip -n "$NS_H" link set h0 up
	ip -n "$NS_S" addr add 192.0.2.5/30 dev s1 && ip -n "$NS_S" link set s1 up
	for a in 203.0.113.10 198.51.100.20 198.51.100.53 169.254.169.254; do
		ip -n "$NS_S" addr add "$a/32" dev lo || return 1
	done
	ip -n "$NS_C" route add default via 192.0.2.1 || return 1
	for port in 80 8080; do
		bg "$NS_S" socat "TCP-LISTEN:$port,fork,reuseaddr" SYSTEM:"echo hello"
	done
	cat >"$TMP/up.conf" <<-EOF
		no-resolv
		no-hosts
		bind-interfaces
		listen-address=192.0.2.5
		port=53
		host-record=allowed.test,203.0.113.10
		address=/denied.test/198.51.100.20
		address=/rebind.test/10.0.0.1
		cname=www.alias.test,allowed.test
		log-queries
		log-facility=$TMP/upstream.log
	EOF
	cat >"$TMP/rogue.conf" <<-EOF
		no-resolv
		no-hosts
		bind-interfaces
		listen-address=198.51.100.53
		port=53
		address=/#/198.51.100.99
		log-queries
		log-facility=$TMP/rogue.log
	EOF
	bg "$NS_S" dnsmasq -k -C "$TMP/up.conf" --pid-file= --user=root
	bg "$NS_S" dnsmasq -k -C "$TMP/rogue.conf" --pid-file= --user=root
	sleep 0.5
}

if ! setup; then
	echo "not ok - setup of the fake internet failed"
	exit 1
fi

# Baseline without a policy: everything is reachable, so the checks below
# measure our rules and not a broken test network.
check "baseline: 198.51.100.20:80 reachable without policy" connect 198.51.100.20 80
check "baseline: metadata 169.254.169.254:80 reachable without policy" connect 169.254.169.254 80

POLICY=(allowed.test www.alias.test rebind.test 198.51.100.20:8080/tcp)
bg "$NS_H" "$DRIVER" resolve "/run/netns/$NS_C" -p 53 -U 192.0.2.5 -r "$TMP/ready" "${POLICY[@]}" \
	>"$TMP/resolver.log" 2>&1
for _ in $(seq 50); do [ -e "$TMP/ready" ] && break; sleep 0.1; done
check "resolver started and policy applied" test -e "$TMP/ready"

q() { in_c "$DRIVER" query "$@" 2>&1; }
out=$(q 192.0.2.1 allowed.test)
[ "$out" = "rcode=0 203.0.113.10" ] && ok "allowed.test resolves ($out)" || nok "allowed.test resolves ($out)"
check "allowed.test:80 connects" connect 203.0.113.10 80
out=$(q 192.0.2.1 www.alias.test)
[ "$out" = "rcode=0 203.0.113.10" ] && ok "CNAME chain to an address ($out)" || nok "CNAME chain ($out)"
out=$(q 192.0.2.1 denied.test)
[ "$out" = "rcode=3" ] && ok "denied.test gets NXDOMAIN ($out)" || nok "denied.test gets NXDOMAIN ($out)"
# refused HOST PORT WHAT: connect is refused (TCP reset);; the time is measured around connect(2)
refused() {
	local out
	out=$(in_c "$DRIVER" connect "$1" "$2" 2>/dev/null)
	case $out in *refused*) ok "$3 ($out)" ;; *) nok "$3 ($out)" ;; esac
}
refused 198.51.100.20 80 "denied address 198.51.100.20:80 refused at once"
check "allowed CIDR:port 198.51.100.20:8080 connects" connect 198.51.100.20 8080
out=$(q 198.51.100.53 allowed.test)
[ "$out" = "rcode=0 203.0.113.10" ] && ok "query to another resolver answered by ours ($out)" ||
	nok "query to another resolver answered by ours ($out)"
out=$(q 198.51.100.53 denied.test tcp)
[ "$out" = "rcode=3" ] && ok "TCP query to another resolver: NXDOMAIN ($out)" || nok "TCP query ($out)"
check "rogue resolver never saw a query" bash -c "! grep -q query '$TMP/rogue.log' 2>/dev/null"
out=$(q 192.0.2.1 rebind.test)
[ "$out" = "rcode=5" ] && ok "rebind.test -> 10.0.0.1 refused ($out)" || nok "rebind.test refused ($out)"
exfil=$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n').exfil.test
out=$(q 192.0.2.1 "$exfil")
check "exfil name not forwarded upstream ($out)" bash -c "! grep -q '$exfil' '$TMP/upstream.log'"
check "busybox nslookup of allowed.test works" bash -c \
	"ip netns exec $NS_C busybox nslookup -type=a allowed.test 192.0.2.1 | grep -q 203.0.113.10"
refused 169.254.169.254 80 "metadata 169.254.169.254 unreachable"
check "allowed.test address pinned in dns4" bash -c \
	"'$DRIVER' list /run/netns/$NS_C dns4 | grep -q '^203.0.113.10 expires'"
check "nft list ruleset inside shows table inet agentrt" bash -c \
	"ip netns exec $NS_C nft list ruleset | grep -q 'table inet agentrt'"
check "nft flush ruleset without CAP_NET_ADMIN fails" bash -c \
	"! ip netns exec $NS_C capsh --drop=cap_net_admin -- -c 'nft flush ruleset' 2>/dev/null"
check "table still there after the attempt" bash -c \
	"ip netns exec $NS_C nft list tables | grep -q agentrt"
check "resolver logged the refusal" grep -q "dns refused denied.test" "$TMP/resolver.log"
check "resolver logged the rebind" grep -q "dns rebind rebind.test" "$TMP/resolver.log"

# Live change: allow 198.51.100.20 port 80 too, atomically, dns sets kept.
check "live update adds 198.51.100.20:80" in_h "$DRIVER" apply "/run/netns/$NS_C" -u \
	198.51.100.20:80/tcp 198.51.100.20:8080/tcp
check "198.51.100.20:80 connects after the update" connect 198.51.100.20 80
check "pinned dns4 elements survive the update" bash -c \
	"'$DRIVER' list /run/netns/$NS_C dns4 | grep -q '^203.0.113.10'"

# Teardown: stop the resolver, delete the table, nothing of ours remains.
for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null; done
for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null; done
left=0
for pid in "${PIDS[@]}"; do kill -0 "$pid" 2>/dev/null && left=$((left + 1)); done
[ "$left" -eq 0 ] && ok "resolver, servers and dnsmasq stopped" || nok "$left test processes left"
PIDS=()
check "table deleted" in_h "$DRIVER" delete "/run/netns/$NS_C"
check "no ruleset left in the container netns" bash -c "[ -z \"\$(ip netns exec $NS_C nft list ruleset)\" ]"
check "no ruleset created in the host-role netns" bash -c "[ -z \"\$(ip netns exec $NS_H nft list ruleset)\" ]"
ip netns delete "$NS_C"; ip netns delete "$NS_H"; ip netns delete "$NS_S"
check "test namespaces removed" bash -c "! ip netns list | grep -q '$P'"
echo "# $COUNT tests, $FAILED failed"
[ "$FAILED" -eq 0 ]
