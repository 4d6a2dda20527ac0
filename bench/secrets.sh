#!/bin/bash
# secrets.sh - the `secrets` rows of bench/: what the secrets' TLS proxy (monitor/tls_proxy.c)
# costs an HTTPS client inside the container.
#
#   bench/secrets.sh [--rounds N] [--requests N] [--bulk MIB] [--agentrt PATH] [--out FILE]
#
# A fake internet of network namespaces (TEST-NET addresses, no route off the machine): an
# HTTPS server (tests/helpers/https-echo.py, a test CA made here) and agentrt's container in
# the `agent` profile with an egress policy, two ways, alternated round by round: "proxy" (a
# secret bound to the server's name: the flow is terminated and re-encrypted by the proxy) and
# "direct" (the same profile without the secret: no proxy).  Inside, the host's curl, bound
# read-only, measures: per-request time on one kept-alive connection (the first request left
# out), time of a request on a new connection (TCP + TLS handshake + request), and the download
# rate of MIB mebibytes.  Memory: the proportional set size (Pss) of the proxy and its
# connection processes, idle and while a download runs.  Prints medians and proxy/direct
# ratios; with --out, appends markdown rows.  Everything it creates is removed at the end.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
rounds=5 requests=20 bulk=64 out="" rt=${AGENTRT:-$repo/agentrt}
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --requests) requests=$2; shift 2 ;;
    --bulk) bulk=$2; shift 2 ;;
    --agentrt) rt=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '3,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "secrets.sh: unknown argument \`$1'" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" = 0 ] || { echo "secrets.sh: must run as root" >&2; exit 1; }
[ -x "$rt" ] || { echo "secrets.sh: no agentrt at $rt" >&2; exit 1; }
for t in busybox jq openssl python3 curl dnsmasq ip nsenter; do
  command -v $t >/dev/null || { echo "secrets.sh: $t is required" >&2; exit 1; }
done

tag=$$
ctr=agentrt-b-ctr-$tag inet=agentrt-b-inet-$tag host=agentrt-b-host-$tag
work=$(mktemp -d /tmp/agentrt-bench-secrets.XXXXXX)
root=/run/agentrt-bench-secrets-$tag
cg=agentrt-bench-secrets-$tag
pids=()
cleanup() {
  local c p
  for c in $(ls "$root" 2>/dev/null | head -100); do
    timeout 20 "$rt" --root "$root" delete --force "$c" >/dev/null 2>&1 || true
  done
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for n in "$ctr" "$inet" "$host"; do ip netns delete "$n" 2>/dev/null || true; done
  rm -rf "$root" "$work"
  for c in /sys/fs/cgroup/*/"$cg" /sys/fs/cgroup/"$cg"; do
    [ -d "$c" ] && rmdir "$c"/*/ "$c" 2>/dev/null || true
  done
}
trap cleanup EXIT INT TERM
chmod 0755 "$work"
export AGENTRT_DATA_DIR=$work/data AGENTRT_CONFIG=$work/agentrt.conf

# ---- the fake internet: ctr (192.0.2.2) -- inet (203.0.113.10, dns 192.0.2.53) -- host (192.0.2.6)
ip netns add "$ctr"; ip netns add "$inet"; ip netns add "$host"
ip -n "$inet" link set lo up; ip -n "$host" link set lo up
ip link add c0 netns "$ctr" type veth peer name i0 netns "$inet"
ip link add h0 netns "$host" type veth peer name i1 netns "$inet"
ip -n "$ctr" addr add 192.0.2.2/30 dev c0; ip -n "$ctr" link set c0 up
ip -n "$inet" addr add 192.0.2.1/30 dev i0; ip -n "$inet" link set i0 up
ip -n "$host" addr add 192.0.2.6/30 dev h0; ip -n "$host" link set h0 up
ip -n "$inet" addr add 192.0.2.5/30 dev i1; ip -n "$inet" link set i1 up
ip -n "$inet" addr add 203.0.113.10/32 dev lo; ip -n "$inet" addr add 192.0.2.53/32 dev lo
ip -n "$ctr" route add default via 192.0.2.1; ip -n "$host" route add default via 192.0.2.5
(
  cd "$work"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
    -subj "/CN=bench CA" -keyout ca.key -out ca.pem 2>/dev/null
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=api.bench.test" \
    -keyout srv.key -out srv.csr 2>/dev/null
  echo "subjectAltName=DNS:api.bench.test" >srv.ext
  openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile srv.ext \
    -out srv.pem 2>/dev/null
  chmod 0644 ./*.pem
)
ip netns exec "$inet" python3 "$repo/tests/helpers/https-echo.py" 203.0.113.10 443 "$work/srv.pem" \
  "$work/srv.key" /dev/null </dev/null >/dev/null 2>&1 &
pids+=($!)
printf 'no-resolv\nno-hosts\nbind-interfaces\nlisten-address=192.0.2.53\nlocal=/test/\nhost-record=api.bench.test,203.0.113.10\n' \
  >"$work/dns.conf"
ip netns exec "$inet" dnsmasq -k -C "$work/dns.conf" --pid-file= --user=root </dev/null >/dev/null 2>&1 &
pids+=($!)
for _ in $(seq 50); do
  ip netns exec "$inet" curl -s --cacert "$work/ca.pem" --resolve api.bench.test:443:203.0.113.10 \
    https://api.bench.test/ready >/dev/null 2>&1 && break
  sleep 0.2
done
echo bench-secret-value >"$work/secret"; chmod 0600 "$work/secret"
cat >"$work/direct.json" <<EOF
{"name": "bench-direct", "extends": "agent",
 "egress": {"allow": ["api.bench.test"], "dns": {"upstream": ["192.0.2.53"]},
            "tls": {"upstreamCA": "$work/ca.pem"}}}
EOF
jq --arg f "$work/secret" '.name = "bench-proxy" | .secrets = [{"name": "API_TOKEN", "file": $f,
  "hosts": ["api.bench.test"]}]' "$work/direct.json" >"$work/proxy.json"

# ---- the bundle: busybox + the host's curl and libraries, read-only
b=$work/bundle
mkdir -p "$b/rootfs/bin" "$b/rootfs/etc" "$b/rootfs/proc" "$b/rootfs/dev" "$b/rootfs/sys" \
  "$b/rootfs/tmp" "$b/rootfs/usr/lib" "$b/rootfs/usr/lib64" "$b/rootfs/usr/bin"
cp "$(command -v busybox)" "$b/rootfs/bin/busybox"
for t in sh sleep cat; do ln -s busybox "$b/rootfs/bin/$t"; done
ln -s usr/lib "$b/rootfs/lib"; ln -s usr/lib64 "$b/rootfs/lib64"
# direct mode verifies against a bundle of the same size as the proxy's (the host's + the CA):
# curl parses the whole bundle at every start
cat /etc/ssl/certs/ca-certificates.crt "$work/ca.pem" >"$b/rootfs/ca.pem" 2>/dev/null ||
  cp "$work/ca.pem" "$b/rootfs/ca.pem"
echo "nameserver 192.0.2.53" >"$b/rootfs/etc/resolv.conf"
(cd "$b" && "$rt" spec >/dev/null)
binds='[]'
for d in /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/bin/curl /etc/ssl/openssl.cnf; do
  [ -e "$d" ] && binds=$(jq --arg d "$d" '. + [{"destination": $d, "type": "bind", "source": $d,
    "options": ["rbind", "ro", "nosuid", "nodev"]}]' <<<"$binds")
done
jq --argjson m "$binds" --arg ns "/run/netns/$ctr" --arg cg "/$cg/c" \
  '.process.terminal = false | .process.args = ["sleep", "1000"] | .mounts += $m |
   .linux.cgroupsPath = $cg |
   .linux.namespaces |= map(if .type == "network" then .path = $ns else . end)' \
  "$b/config.json" >"$b/c.json" && mv "$b/c.json" "$b/config.json"

ag() { nsenter --net="/run/netns/$host" "$rt" --root "$root" "$@"; }
url=https://api.bench.test
declare -A ka nc bw
mem_idle=() mem_busy=()
proxy_pss() { # monitor pid -> kB of Pss of its agentrt-proxy and their children
  local m=$1 total=0 p c
  for p in $(pgrep -P "$m" -x agentrt-proxy); do
    for c in $p $(pgrep -P "$p"); do
      total=$((total + $(awk '/^Pss:/ {print $2}' "/proc/$c/smaps_rollup" 2>/dev/null || echo 0)))
    done
  done
  echo $total
}
median() { sort -g | awk '{a[NR] = $1} END {if (NR == 0) print "nan"; else print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2)}'; }

for ((r = 1; r <= rounds; r++)); do
  for mode in direct proxy; do
    id=bs-$mode-$r
    ag --profile "$work/$mode.json" run -d --bundle "$b" "$id" </dev/null >/dev/null 2>"$work/err" ||
      { cat "$work/err" >&2; exit 1; }
    cacert=""
    [ "$mode" = direct ] && cacert="--cacert /ca.pem"
    urls=$(for ((i = 0; i < requests + 1; i++)); do printf '%s/r%d ' "$url" "$i"; done)
    # keep-alive: one curl, many URLs on one connection; the first (handshake) left out
    ag exec "$id" sh -c "curl -s $cacert -o /dev/null -w '%{time_total} %{time_starttransfer} %{time_pretransfer}\n' $(for ((i = 0; i < requests + 1; i++)); do printf -- '-o /dev/null '; done) $urls" \
      2>/dev/null | tail -n +2 | awk '{print $1}' >>"$work/ka-$mode"
    # new connections
    for ((i = 0; i < requests; i++)); do
      ag exec "$id" sh -c "curl -s $cacert -o /dev/null -w '%{time_total}\n' $url/n$i" 2>/dev/null >>"$work/nc-$mode"
    done
    if [ "$mode" = proxy ]; then
      mon=$(cut -d' ' -f1 "$root/$id/monitor.pid")
      mem_idle+=("$(proxy_pss "$mon")")
      ag exec "$id" sh -c "curl -s -o /dev/null --limit-rate 2M $url/bulk/$((4 << 20))" >/dev/null 2>&1 &
      bg=$!
      sleep 1
      mem_busy+=("$(proxy_pss "$mon")")
      wait "$bg"
    fi
    ag exec "$id" sh -c "curl -s $cacert -o /dev/null -w '%{speed_download}\n' $url/bulk/$((bulk << 20))" \
      2>/dev/null >>"$work/bw-$mode"
    ag delete --force "$id" >/dev/null 2>&1
  done
done

load=$(cut -d' ' -f1-3 /proc/loadavg)
for mode in direct proxy; do
  ka[$mode]=$(median <"$work/ka-$mode")
  nc[$mode]=$(median <"$work/nc-$mode")
  bw[$mode]=$(median <"$work/bw-$mode")
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", (b > 0 ? a / b : 0)}'; }
ms() { awk -v s="$1" 'BEGIN {printf "%.2f ms", s * 1000}'; }
mibs() { awk -v s="$1" 'BEGIN {printf "%.0f MiB/s", s / 1048576}'; }
idle=$(printf '%s\n' "${mem_idle[@]}" | median)
busy=$(printf '%s\n' "${mem_busy[@]}" | median)
rows=$(
  cat <<EOF
| HTTPS request, kept-alive connection (median of $((rounds * requests))) | $(ms "${ka[direct]}") | $(ms "${ka[proxy]}") | $(ratio "${ka[proxy]}" "${ka[direct]}") |
| HTTPS request, new connection (median of $((rounds * requests))) | $(ms "${nc[direct]}") | $(ms "${nc[proxy]}") | $(ratio "${nc[proxy]}" "${nc[direct]}") |
| download of $bulk MiB (median of $rounds) | $(mibs "${bw[direct]}") | $(mibs "${bw[proxy]}") | $(ratio "${bw[proxy]}" "${bw[direct]}") |
| proxy Pss per container, idle / one download | - | ${idle} kB / ${busy} kB | - |
EOF
)
echo "secrets proxy vs direct (load average $load while measuring)"
echo "| row | direct | proxy | proxy/direct |"
echo "|---|---|---|---|"
echo "$rows"
if [ -n "$out" ]; then
  {
    echo
    echo "### secrets proxy ($(date -u +%F), load average $load)"
    echo
    echo "| row | direct | proxy | proxy/direct |"
    echo "|---|---|---|---|"
    echo "$rows"
  } >>"$out"
fi
