#!/bin/bash
# run.sh - benchmark agentrt, crun and runc side by side.
#
#   bench/run.sh [--rounds N] [--quick] [--out DIR] [--containers N] [--concurrency N]
#                [--strace-runs N] [--runtimes "runc crun agentrt"] [--bencher PATH] [--strict]
#                [--state-on-disk] [--dockerd]
#
# --dockerd starts a private containerd and dockerd inside the same namespace (own sockets,
# data and exec roots under the work dir, runtimes runc, crun and agentrt registered) for the
# `docker run` row, and stops them at the end; without it that row needs a running dockerd.
#
# Prepares one bundle per runtime (same busybox rootfs, config from `runc spec`),
# then runs bench/bencher inside ONE private mount namespace in which
# /sys/fs/cgroup/unified is lazily unmounted (crun refuses hybrid cgroup hosts
# otherwise); the host's mount namespace is never touched.  Results go to
# OUT/<date>-<host>.{md,svg,tsv} and OUT/latest.{md,svg}.  Missing runtimes
# are skipped with a note; ./agentrt in the repo root is picked up when built.
# Everything created (containers, state roots, cgroups, docker image) is
# removed at the end, also on failure or interrupt.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
id=$$
base=/run/agentrt-bench-$id
work=$base/work
# agentrt's data directory (workspaces, trails, filter cache) under $base, removed with it: the
# bench never writes to the host's /var/lib/agentrt.  The
# run inside the private namespace (--inside, another pid) keeps the outer run's, which the
# outer run's cleanup removes.
export BENCH_DATA_BASE=${BENCH_DATA_BASE:-$base}
export AGENTRT_DATA_DIR=$BENCH_DATA_BASE/agentrt-data AGENTRT_CONFIG=$BENCH_DATA_BASE/agentrt.conf
cgparent=/agentrt-bench-$id

rounds=30 containers=50 conc=2 straces=3 quick=0 strict=0 state_disk=0 private_dockerd=0
rounds_set=0 containers_set=0 straces_set=0
out=$here/results bencher="" want="runc crun agentrt" inside=0

usage() { sed -n '3,10p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-2}"; }
need_val() { [ $# -ge 2 ] || { echo "run.sh: $1 needs a value" >&2; usage; }; }

while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) need_val "$@"; rounds=$2; rounds_set=1; shift 2 ;;
    --containers) need_val "$@"; containers=$2; containers_set=1; shift 2 ;;
    --concurrency) need_val "$@"; conc=$2; shift 2 ;;
    --strace-runs) need_val "$@"; straces=$2; straces_set=1; shift 2 ;;
    --out) need_val "$@"; out=$2; shift 2 ;;
    --bencher) need_val "$@"; bencher=$2; shift 2 ;;
    --runtimes) need_val "$@"; want=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    --strict) strict=1; shift ;;
    --state-on-disk) state_disk=1; shift ;;
    --dockerd) private_dockerd=1; shift ;;
    --inside) inside=1; shift ;;
    -h|--help) usage 0 ;;
    *) echo "run.sh: unknown argument \`$1'" >&2; usage ;;
  esac
done
if [ "$quick" = 1 ]; then
  [ "$rounds_set" = 1 ] || rounds=3
  [ "$containers_set" = 1 ] || containers=10
  [ "$straces_set" = 1 ] || straces=1
fi

note() { echo "$*" >>"$work/notes"; echo "run.sh: note: $*" >&2; }

# Deletes every container left in each runtime's root (runs inside the namespace).
delete_leftovers() {
  local rt root bin c
  for rt in $(cat "$work/runtimes" 2>/dev/null); do
    bin=$(cat "$work/$rt/bin"); root=$(cat "$work/$rt/root")
    [ -d "$root" ] || continue
    for c in $(ls "$root" 2>/dev/null | head -200); do
      [ -d "$root/$c" ] || continue
      timeout 30 "$bin" --root "$root" delete --force "$c" >/dev/null 2>&1 || true
    done
  done
}

# Waits for a background child of ours; a trapped signal interrupts `wait`,
# so wait again (bounded) until the child is really gone.  Sets rc.
wait_for() {
  local i st
  for i in $(seq 1 100); do
    st=0
    wait "$1" || st=$?
    kill -0 "$1" 2>/dev/null || break
  done
  if [ "$rc" = 0 ]; then rc=$st; fi
}

# wait_until SECONDS CMD...: poll CMD every 0.2 s, bounded.
wait_until() {
  local n=$(($1 * 5))
  shift
  while [ "$n" -gt 0 ]; do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.2
    n=$((n - 1))
  done
  return 1
}

# stop_pid PID SECONDS: TERM, then KILL after SECONDS; only pids this script started.
stop_pid() {
  [ -n "$1" ] && kill -0 "$1" 2>/dev/null || return 0
  kill -TERM "$1" 2>/dev/null || true
  wait_until "$2" bash -c "! kill -0 $1" || kill -KILL "$1" 2>/dev/null || true
}

# A private containerd + dockerd (inside the namespace; see --dockerd).
start_dockerd() {
  local d=${work:?}/docker rt rts='{}'
  mkdir -p "$d/cli"
  printf '%s\n' 'version = 2' "root = \"$d/containerd/root\"" "state = \"$d/containerd/state\"" \
    'disabled_plugins = ["io.containerd.grpc.v1.cri"]' '[grpc]' "  address = \"$d/containerd.sock\"" \
    '[ttrpc]' "  address = \"$d/containerd.sock.ttrpc\"" >"$d/containerd.toml"
  containerd --config "$d/containerd.toml" >"$d/containerd.log" 2>&1 3>&- &
  echo $! >"$d/containerd.pid"
  wait_until 30 ctr --address "$d/containerd.sock" version || return 1
  for rt in crun agentrt; do
    [ -s "$work/$rt/bin" ] || continue
    rts=$(jq --arg n "$rt" --arg p "$(cat "$work/$rt/bin")" '.[$n] = {"path": $p}' <<<"$rts")
  done
  # agentrt as runc and crun run: docker's own config, no profile (`--profile oci`)
  rts=$(jq 'if .agentrt then .agentrt.runtimeArgs = ["--profile", "oci"] else . end' <<<"$rts")
  jq -n --argjson r "$rts" '{runtimes: $r}' >"$d/daemon.json"
  export DOCKER_HOST=unix://$d/docker.sock DOCKER_CONFIG=$d/cli
  dockerd --config-file "$d/daemon.json" --data-root "$d/data" --exec-root "$d/exec" \
    --pidfile "$d/dockerd.pid.file" -H "$DOCKER_HOST" --containerd "$d/containerd.sock" \
    --iptables=false --ip-masq=false --bridge=none \
    --default-ulimit nofile=1024:1024 --default-ulimit nproc=1024:1024 \
    --exec-opt native.cgroupdriver=cgroupfs --cgroup-parent "${cgparent_in:?}/docker" \
    >"$d/dockerd.log" 2>&1 3>&- &
  echo $! >"$d/dockerd.pid"
  wait_until 60 docker info || return 1
  tar -C "$work/rootfs" -c . | docker import - agentrt-bench-busybox:latest >/dev/null || return 1
  echo agentrt-bench-busybox:latest >"$work/docker-image"
  for rt in $(cat "$work/runtimes"); do echo "$rt" >"$work/$rt/docker-runtime"; done
  note "docker rows: a private dockerd $(dockerd --version | awk '{print $3}' | tr -d ,) in the same namespace (runc is its default runtime; agentrt registered with --profile oci)"
}

stop_dockerd() {
  local d=${work:?}/docker ids p
  ids=$(timeout 30 docker ps -aq 2>/dev/null || true)
  [ -z "$ids" ] || timeout 60 docker rm -f $ids >/dev/null 2>&1 || true
  stop_pid "$(cat "$d/dockerd.pid" 2>/dev/null)" 30
  stop_pid "$(cat "$d/containerd.pid" 2>/dev/null)" 20
  # shims our containerd started (their command line names its state dir)
  for p in $(grep -l -F -- "$d/" /proc/[0-9]*/cmdline 2>/dev/null | cut -d/ -f3 | head -50); do
    [ "$p" != $$ ] && stop_pid "$p" 5
  done
  return 0
}

# The part that runs inside the private mount namespace.
if [ "$inside" = 1 ]; then
  work=${BENCH_WORK:?}
  umount -l /sys/fs/cgroup/unified 2>/dev/null || true
  # State roots on a tmpfs, as /run is on any systemd host (this namespace
  # only; they vanish with it after delete_leftovers below).
  if [ "$state_disk" = 0 ]; then
    for rt in $(cat "$work/runtimes"); do
      mount -t tmpfs -o mode=0700,size=256m agentrt-bench "$(cat "$work/$rt/root")" || exit 1
    done
    # agentrt's data directory (workspace store, trails, filter cache) too: on this VM's
    # journal-less root ext4 every new inode scans for recently deleted ones
    # (bench/README.md, "Round two"), which measures the disk, as the state roots would
    mkdir -p "$AGENTRT_DATA_DIR"
    mount -t tmpfs -o mode=0700,size=256m agentrt-bench-data "$AGENTRT_DATA_DIR" || exit 1
  fi
  rc=0 dockerd_up=0
  if [ -f "$work/dockerd-wanted" ]; then
    # Debian's docker CLI, which matches its dockerd (another may come first on PATH)
    PATH=/usr/bin:/usr/sbin:$PATH
    if start_dockerd; then
      dockerd_up=1
    else
      note "private dockerd did not start: docker rows skipped ($(tail -n 2 "$work/docker/dockerd.log" 2>/dev/null | tr '\n' ' '))"
      rm -f "$work"/*/docker-runtime "$work/docker-image"
      stop_dockerd
    fi
  fi
  "$bencher" measure --work "$work" --out "$work/raw.tsv" --rounds "$rounds" \
    --containers "$containers" --concurrency "$conc" --strace-runs "$straces" \
    --cgroup-parent "$cgparent_in" $(cat "$work/runtimes") &
  bpid=$!
  trap 'kill -TERM "$bpid" 2>/dev/null; rc=130' INT TERM
  wait_for "$bpid"
  [ "$dockerd_up" = 0 ] || stop_dockerd
  delete_leftovers
  exit "$rc"
fi

[ "$(id -u)" = 0 ] || { echo "run.sh: must run as root" >&2; exit 1; }
for t in jq unshare busybox; do
  command -v "$t" >/dev/null || { echo "run.sh: \`$t' is required" >&2; exit 1; }
done

docker_image=""
cleanup() {
  local rc=$? d p
  trap - EXIT INT TERM
  if [ -f "$work/runtimes" ]; then # containers left by an interrupted run
    BENCH_WORK=$work unshare -m --propagation private bash -c \
      "umount -l /sys/fs/cgroup/unified 2>/dev/null; $(declare -f delete_leftovers); work=$work; delete_leftovers" || true
  fi
  for d in /sys/fs/cgroup/*/agentrt-bench-"$id"; do
    [ -d "$d" ] || continue
    # processes left in our own cgroups are containers this run started
    for p in $(find "$d" -name cgroup.procs -exec cat {} + 2>/dev/null | sort -u | head -100); do
      kill -KILL "$p" 2>/dev/null || true
    done
    sleep 0.2
    find "$d" -mindepth 1 -depth -type d -exec rmdir {} + 2>/dev/null || true
    rmdir "$d" 2>/dev/null || echo "run.sh: warning: could not remove cgroup $d" >&2
  done
  [ -n "$docker_image" ] && docker rmi -f "$docker_image" >/dev/null 2>&1 || true
  if [ -n "${BENCH_KEEP_WORK:-}" ]; then # debugging: keep bundles and the runtime log
    rm -rf "${base:?}"/{runc,crun,agentrt,agentrt-data}
    echo "run.sh: kept $work (remove it yourself)" >&2
  else
    rm -rf "$base"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p "$work" "$out"
: >"$work/notes"

# ---- runtimes --------------------------------------------------------------
agentrt_bin=${AGENTRT:-$repo/agentrt}
runtimes=""
for rt in runc crun agentrt; do
  case " $want " in *" $rt "*) ;; *) continue ;; esac
  if [ "$rt" = agentrt ]; then
    bin=$agentrt_bin; [ -x "$bin" ] || bin=""
  else
    bin=$(command -v "$rt" || true)
  fi
  if [ -z "$bin" ]; then
    note "$rt not found: skipped"
    continue
  fi
  runtimes="$runtimes $rt"
  mkdir -p "$work/$rt" "$base/$rt"
  readlink -f "$bin" >"$work/$rt/bin"
  echo "$base/$rt" >"$work/$rt/root"
  : >"$work/$rt/flags"
done
[ -n "$runtimes" ] || { echo "run.sh: no runtime found" >&2; exit 1; }
echo $runtimes >"$work/runtimes"

if [ -z "$bencher" ]; then
  make -s -C "$repo" build/bench/bencher
  bencher=$repo/build/bench/bencher
fi
bencher=$(readlink -f "$bencher")

# ---- rootfs and config templates -------------------------------------------
rootfs=$work/rootfs
mkdir -p "$rootfs"/{bin,proc,dev,sys,tmp,etc,workspace}
cp "$(readlink -f "$(command -v busybox)")" "$rootfs/bin/busybox"
for a in sh true sleep ls cat; do ln -sf busybox "$rootfs/bin/$a"; done
echo 'root:x:0:0:root:/root:/bin/sh' >"$rootfs/etc/passwd"
mkdir -p "$work/ws" # workspace bind-mounted into the agent-profile containers

spec_rt=$(for rt in runc crun agentrt; do [ -s "$work/$rt/bin" ] && echo "$rt" && break; done)
(cd "$work" && "$(cat "$work/$spec_rt/bin")" spec)
mv "$work/config.json" "$work/spec.json"

# Twenty egress entries for the agent profile (TEST-NET CIDRs and a few names), given the way an
# operator would: a profile file extending `agent` (annotations may only loosen within the
# profile's allowLoosen patterns, which do not cover these).
egress='"192.0.2.1/32", "192.0.2.2/32", "192.0.2.3/32", "192.0.2.4/32", "192.0.2.5/32",
      "198.51.100.0/28", "198.51.100.16/28", "198.51.100.32/28", "198.51.100.48/28",
      "203.0.113.1/32", "203.0.113.2/32", "203.0.113.3/32", "203.0.113.4/32",
      "203.0.113.64/26", "2001:db8::/64", "2001:db8:1::/64",
      "pypi.org", "files.pythonhosted.org", "github.com", "*.githubusercontent.com"'
cat >"$work/bench-agent.json" <<EOF
{
  "name": "bench-agent",
  "description": "the agent profile with a 20-entry egress allowlist (bench/run.sh)",
  "extends": "agent",
  "egress": {"default": "deny", "allow": [$egress]}
}
EOF

# The same twenty entries over the `oci` profile: the egress_create row (the policy's cost).
cat >"$work/egress-oci.json" <<EOF
{
  "name": "bench-egress-oci",
  "extends": "oci",
  "egress": {"default": "deny", "allow": [$egress], "dns": {"upstream": ["192.0.2.53"]}}
}
EOF

agent_profile=0
if [ -s "$work/agentrt/bin" ]; then
  if "$(cat "$work/agentrt/bin")" --help 2>&1 | grep -q -- '--profile'; then
    agent_profile=1
    printf -- '--profile\noci\n' >"$work/agentrt/flags"
    printf -- '--profile\n%s\n' "$work/bench-agent.json" >"$work/agentrt/agent-flags"
    note "agentrt's plain rows use --profile oci; the agent row uses a profile file extending agent with 20 egress entries (bench-agent.json) and a bind-mounted /workspace; runc/crun run the same config without profile or seccomp"
    printf -- '--profile\n%s\n' "$work/egress-oci.json" >"$work/agentrt/egress-flags"
    note "the egress_create row: agentrt \`create\` with a profile extending oci with only those 20 egress entries (nftables table, resolver sockets and helper in the new network namespace); minus the \`create\` row it is the policy's cost; runc/crun repeat their plain \`create\`"
  else
    note "agentrt has no --profile yet: agent-profile row skipped"
  fi
else
  note "agentrt not built: agent-profile row skipped"
fi

for rt in $runtimes; do
  mkdir -p "$work/$rt/rootfs"
  cp -a "$rootfs/." "$work/$rt/rootfs/"
  jq --arg root "$work/$rt/rootfs" '.process.terminal = false | .root.path = $root
      | .process.args = ["/bin/true"] | .linux.cgroupsPath = "@CGROUP@"' \
    "$work/spec.json" >"$work/$rt/true.json"
  jq '.process.args = ["/bin/sleep", "1000"]' "$work/$rt/true.json" >"$work/$rt/sleep.json"
  [ "$agent_profile" = 1 ] || continue
  jq --arg ws "$work/ws" '.mounts += [{"destination": "/workspace", "type": "bind",
      "source": $ws, "options": ["rbind", "rw"]}]' "$work/$rt/true.json" >"$work/$rt/agent.json"
  if [ "$rt" != agentrt ]; then
    cp "$work/$rt/flags" "$work/$rt/agent-flags"
    cp "$work/$rt/flags" "$work/$rt/egress-flags"
  fi
done

# ---- docker (end to end, through a private dockerd or a running one) -------
if [ "$private_dockerd" = 1 ]; then
  if command -v dockerd >/dev/null && command -v containerd >/dev/null && [ -x /usr/bin/docker ]; then
    : >"$work/dockerd-wanted" # started inside the namespace, after the rootfs is ready
  else
    note "--dockerd: dockerd, containerd or /usr/bin/docker missing: docker rows skipped"
  fi
elif command -v docker >/dev/null && timeout 10 docker info >/dev/null 2>&1; then
  known=$(docker info --format '{{json .Runtimes}}' | jq -r 'keys[]' 2>/dev/null || true)
  for rt in $runtimes; do
    if grep -qx "$rt" <<<"$known"; then echo "$rt" >"$work/$rt/docker-runtime"
    else note "docker has no runtime named $rt registered: its docker row is skipped"; fi
  done
  docker_image=agentrt-bench-busybox:$id
  tar -C "$rootfs" -c . | docker import - "$docker_image" >/dev/null
  echo "$docker_image" >"$work/docker-image"
  note "docker rows run outside the private namespace, through dockerd (its own runc build for \`runc\`)"
else
  note "dockerd not available: docker rows skipped"
fi

# ---- measure, inside one private mount namespace ---------------------------
if [ "$state_disk" = 0 ]; then
  note "state roots (--root of each runtime) and agentrt's data directory (workspace store, trails, filter cache) are a tmpfs each, as /run is on systemd hosts (--state-on-disk: on $(findmnt -n -o FSTYPE -T "$base"))"
else
  note "state roots on $(findmnt -n -o FSTYPE -T "$base") (--state-on-disk)"
fi
echo "run.sh: runtimes:$runtimes; $rounds rounds, $containers containers at concurrency $conc" >&2
host_unified=0
if mountpoint -q /sys/fs/cgroup/unified 2>/dev/null; then host_unified=1; fi
rc=0
BENCH_WORK=$work cgparent_in=$cgparent timeout -k 10 $((rounds * 300 + 900)) \
  unshare -m --propagation private "$0" --inside --bencher "$bencher" --rounds "$rounds" \
  $([ "$state_disk" = 1 ] && echo --state-on-disk) \
  --containers "$containers" --concurrency "$conc" --strace-runs "$straces" &
mpid=$!
trap 'kill -TERM "$mpid" 2>/dev/null; rc=130' INT TERM
wait_for "$mpid"
trap 'exit 130' INT TERM
[ "$rc" != 130 ] || exit 130
if [ "$host_unified" = 1 ] && ! mountpoint -q /sys/fs/cgroup/unified; then
  echo "run.sh: warning: /sys/fs/cgroup/unified is no longer mounted on the host" >&2
fi
if [ "$rc" != 0 ] && [ "$rc" != 2 ]; then
  echo "run.sh: bencher failed ($rc); last runtime log lines:" >&2
  tail -n 20 "$work/runtime.log" >&2 || true
  exit 1
fi
if [ "$rc" = 2 ]; then
  echo "run.sh: some runtime invocations failed (noted in the report); last log lines:" >&2
  grep -B1 -- '-> failed' "$work/runtime.log" | tail -n 20 >&2 || true
fi

# ---- report ----------------------------------------------------------------
name=$(date +%F)-$(hostname -s)
# a second run the same day keeps the first one's files (the hour and minute go in the name)
[ ! -e "$out/$name.md" ] || name=$(date +%F-%H%M)-$(hostname -s)
cp "$work/raw.tsv" "$out/$name.tsv"
"$bencher" report "$out/$name.tsv" --md "$out/$name.md" --svg "$out/$name.svg"
# The audit row: agentrt alone, its agent profile with the trail on vs off, alternated.
if [ "$agent_profile" = 1 ]; then
  {
    printf '\n## Audit trail overhead (target: on within 10%% of off)\n\n'
    printf 'bench/audit.sh: `agentrt --profile agent run` of /bin/true, trail on vs a profile '
    printf 'extending agent with `"audit": {"enabled": false}`, alternated (order flipped each round), medians and the paired ratio; state root on /run. '
    printf 'Also an exec-heavy container (1,000 short programs) and the per-call cost of an allowed and a denied system call inside (denied ones go to the monitor'"'"'s seccomp listener with the trail on).\n\n'
    printf '| row | on / off | ratio | rounds |\n|---|---|---|---|\n'
  } >>"$out/$name.md"
  # twice the rounds: one agentrt run is cheap and the two modes differ by a few percent
  "$here/audit.sh" --rounds $((rounds * 2)) $([ "$quick" = 1 ] && echo --quick) --agentrt "$(cat "$work/agentrt/bin")" --out "$out/$name.md" >&2 ||
    echo "run.sh: audit row failed" >&2
fi
# The egress row: create with a 200-entry policy against an empty one and the oci profile.
if [ "$agent_profile" = 1 ]; then
  {
    printf '\n## Egress policy cost at create\n\n'
    printf 'bench/egress.sh: `agentrt create` (own new netns) with the oci profile, the agent profile with an empty allowlist, and profiles with 20 and 200 allow entries plus 4 ingress ports, interleaved; medians.\n\n'
    printf '| row | median | p90, vs empty | rounds |\n|---|---|---|---|\n'
  } >>"$out/$name.md"
  "$here/egress.sh" --rounds "$rounds" --agentrt "$(cat "$work/agentrt/bin")" --out "$out/$name.md" >&2 ||
    echo "run.sh: egress row failed" >&2
fi
# The secrets rows: HTTPS through the secrets' TLS proxy against direct (not in --quick: a
# fake internet with an HTTPS server, about a minute).
if [ "$agent_profile" = 1 ] && [ "$quick" = 0 ] && command -v openssl >/dev/null &&
  command -v python3 >/dev/null && command -v curl >/dev/null && command -v dnsmasq >/dev/null; then
  printf '\n## The secrets proxy\n\nbench/secrets.sh: see bench/README.md, "The secrets rows".\n' >>"$out/$name.md"
  "$here/secrets.sh" --rounds $((rounds < 10 ? rounds : 10)) --agentrt "$(cat "$work/agentrt/bin")" \
    --out "$out/$name.md" >&2 || echo "run.sh: secrets rows failed" >&2
fi
# The sandbox row: `agentrt sandbox -- /bin/true` as a user against bwrap and unshare.
if [ -n "$(cat "$work/agentrt/bin" 2>/dev/null)" ]; then
  {
    printf '\n## `agentrt sandbox` against bubblewrap and unshare\n\n'
    printf 'bench/sandbox.sh: as uid 65534, `agentrt sandbox -- /bin/true` (agent profile, overlay workspace, trail) against `bwrap --ro-bind / / --dev /dev --proc /proc --unshare-all /bin/true` and `unshare -r -fmnpiu --mount-proc /bin/true`, order rotated each round, medians and paired ratios.\n\n'
    printf '| row | agentrt | bwrap | unshare |\n|---|---|---|---|\n'
  } >>"$out/$name.md"
  "$here/sandbox.sh" --rounds "$rounds" --agentrt "$(cat "$work/agentrt/bin")" --out "$out/$name.md" >&2 ||
    echo "run.sh: sandbox row failed" >&2
fi
# The density row: N idle agent containers, the PSS of each one's monitor.
if [ "$agent_profile" = 1 ]; then
  {
    printf '\n## Density: idle agent containers\n\n'
    printf 'bench/density.sh: N containers running `sleep` under the agent profile with the 20 egress entries and an overlay workspace, all created and started, then each monitor'"'"'s PSS from /proc/PID/smaps_rollup (PSS splits shared pages among their users; Pss_Anon is what one more container adds). Data directory on /run.\n\n'
    printf '| row | PSS median | notes |\n|---|---|---|\n'
  } >>"$out/$name.md"
  "$here/density.sh" --containers "$([ "$quick" = 1 ] && echo 3 || echo 20)" \
    --agentrt "$(cat "$work/agentrt/bin")" --out "$out/$name.md" >&2 || echo "run.sh: density row failed" >&2
fi
# The sub-agent row: `sub run /bin/true` from inside a parent against a host `agentrt run`.
if [ "$agent_profile" = 1 ]; then
  {
    printf '\n## Sub-agents\n\n'
    printf 'bench/subagents.sh: `sub run -- /bin/true` asked from inside a parent container (less the `agentrt exec` that carries the client in) against a host `agentrt run` of /bin/true, both under the agent profile, order alternated; medians, paired ratio; the memory of an idle child.\n\n'
    printf '| row | sub run / child | host run / monitor | ratio |\n|---|---|---|---|\n'
  } >>"$out/$name.md"
  "$here/subagents.sh" --rounds "$rounds" --agentrt "$(cat "$work/agentrt/bin")" --out "$out/$name.md" >&2 ||
    echo "run.sh: sub-agent row failed" >&2
fi
# The cri row: a pod start through containerd's CRI plugin, handler agentrt against runc
# (not in --quick: the suite's bench-smoke stays short; integration/cri.bats drives the path).
if [ "$quick" = 0 ] && [ -n "$(cat "$work/agentrt/bin" 2>/dev/null)" ] && command -v containerd >/dev/null; then
  {
    printf '\n## Kubernetes pod start through the CRI\n\n'
    printf 'bench/cri.sh: a private containerd 1.6 with its CRI plugin (in a netns of its own, CNI bridge), RunPodSandbox+CreateContainer+StartContainer of a busybox `sleep` until StartContainer returns, runtime handler agentrt (agent profile) against runc, alternated, medians and the paired ratio.\n\n'
    printf '| row | runc | agentrt | agentrt/runc (paired) |\n|---|---:|---:|---:|\n'
  } >>"$out/$name.md"
  "$here/cri.sh" --rounds "$rounds" --agentrt "$(cat "$work/agentrt/bin")" --out "$out/$name.md" >&2 ||
    echo "run.sh: cri row failed" >&2
fi
cp "$out/$name.md" "$out/latest.md"
cp "$out/$name.svg" "$out/latest.svg"
cat "$out/$name.md"
echo "run.sh: wrote $out/$name.md, $out/latest.md and $out/latest.svg" >&2
if [ "$rc" = 2 ] && [ "$strict" = 1 ]; then exit 3; fi
exit 0
