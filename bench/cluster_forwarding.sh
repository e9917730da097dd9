#!/usr/bin/env bash
# What crossing the cluster interconnect costs: the same nasd-loadgen load against a cluster of
# deploy/start-cluster.sh, twice, each time on a freshly started cluster, on a private loopback:
#   local      every node's clients reach only that node's own volume, so every request reaches
#              the volume's owner directly;
#   forwarded  every node's clients reach its own volume and the next node's, so half of the
#              requests cross the interconnect (the HNAS report's uniform-access rule).
#   bench/cluster_forwarding.sh BUILD_DIR [--nodes 2|4] [--load OPS --steps N | --loads A,B,C]
#       [--step-seconds S] [--warmup-seconds S] [--processes N] [--fileset-mib-per-op X]
#       [--mix NAME | --mix-file FILE] [--io-size BYTES] [--out DIR] [--no-failover]
#       [--probe-seconds S]
#
# --nodes 2 (default): the HA pair of deploy/start-cluster.sh (node a owns v0 on 127.0.0.1:2049,
# node b owns v1 on :2149; targets a:v0 b:v1, then a:v0 a:v1 b:v1 b:v0). --nodes 4: the ring of
# deploy/start-cluster.sh --nodes 4 --volumes-per-node 1 (node ni owns v(i-1) on 127.0.1.i;
# targets n1:v0 .. n4:v3, then n1:v0 n1:v1 n2:v1 n2:v2 n3:v2 n3:v3 n4:v3 n4:v0). Either way NVRAM
# is mirrored to the partner, with the default lease; --no-failover for static ownership.
# BUILD_DIR holds bench/nasd-loadgen, cluster/nasd and server/admin/nasd-admin. Prints the peak
# ops/s and overall response time of both runs with their forwarded/local ratios, the server CPU
# and context switches per NFS call of both, then both curves; reports, CSVs, the summary,
# forwarding.png and the nodes' logs go to --out (default: a new /tmp/nasd-forwarding.*).
# Last, the floor under the CPU ratio: bench/nasd-link-probe measures one interconnect round
# trip with no volume work (bare TCP loopback and nasd's link, 1 and 16 in flight, S seconds
# each, default 3; 0 leaves it out), and the script prints what forwarded/local would be if a
# forwarded call cost only that round trip more than a local one.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")

usage() { sed -n '8,11p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[[ $# -ge 1 && $1 != --* ]] || usage
build=$(cd "$1" && pwd); shift

# The cluster binds fixed ports (2049, 2149, ...): the private namespace keeps them to this run.
if [[ -z ${NASD_BENCH_IN_NETNS:-} ]]; then exec "$here/netns.sh" "$0" "$build" "$@"; fi

source "$here/loadgen_lib.sh"
# Two servers and the load generator share the machine: short steps and a small fileset keep a
# default run within a few minutes on 2 cores (both volumes are 4G in start-cluster.sh).
# The load generator keeps many calls in flight and, unlike a kernel client, does not retry
# NFS3ERR_JUKEBOX: the default 256 forward slots per owner (FORWARD_SLOTS) are far above what
# it keeps in flight, and a forwarded call holds no executor thread while it waits.
loads=4000,8000,12000,16000,20000
mib_per_op=0.05
out=""
nodes=2
cluster_args=()
probe_seconds=3
while [[ $# -gt 0 ]]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --nodes) nodes=$2; shift 2 ;;
    --probe-seconds) probe_seconds=$2; shift 2 ;;
    --no-failover) cluster_args=(--no-failover); shift ;;
    *) load_option "$1" "${2-}" && shift 2 || { echo "cluster_forwarding.sh: unknown argument $1" >&2; usage; } ;;
  esac
done
loadgen_args
case "$nodes" in 2|4) ;; *) echo "cluster_forwarding.sh: --nodes 2 or 4, not '$nodes'" >&2; exit 2 ;; esac
[[ $probe_seconds =~ ^[0-9]+(\.[0-9]+)?$ ]] ||
  { echo "cluster_forwarding.sh: --probe-seconds takes a number of seconds, not '$probe_seconds'" >&2; exit 2; }

loadgen=$build/bench/nasd-loadgen
[[ -x $loadgen ]] || { echo "no $loadgen: build the nasd-loadgen target first" >&2; exit 1; }
[[ -x $build/cluster/nasd ]] || { echo "no $build/cluster/nasd: build the nasd target first" >&2; exit 1; }
# start-node.sh asks an HA node through nasd-admin whether it serves its address yet.
[[ ${#cluster_args[@]} -gt 0 || -x $build/server/admin/nasd-admin ]] ||
  { echo "no $build/server/admin/nasd-admin: build the nasd-admin target first" >&2; exit 1; }
[[ -n $out ]] || out=$(mktemp -d /tmp/nasd-forwarding.XXXXXX)
mkdir -p "$out"
out=$(cd "$out" && pwd)

# start-node.sh takes the daemon from $BUILD_DIR/cluster/nasd.
export BUILD_DIR=$build
work=$(mktemp -d /tmp/nasd-forwarding-cluster.XXXXXX)
running=""  # the CLUSTER_DIR of the cluster that is up, if any
cleanup() {
  [[ -z $running ]] || CLUSTER_DIR=$running "$root/deploy/stop-cluster.sh" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# The nodes, the addresses deploy/start-cluster.sh gives them, and the two runs' targets.
if [[ $nodes == 2 ]]; then
  node_names=(a b)
  local_targets=(a:v0 b:v1)
  forwarded_targets=(a:v0 a:v1 b:v1 b:v0)
  start_args=()
  shape="two-node HA pair"
else
  node_names=(n1 n2 n3 n4)
  local_targets=(n1:v0 n2:v1 n3:v2 n4:v3)
  forwarded_targets=(n1:v0 n1:v1 n2:v1 n2:v2 n3:v2 n3:v3 n4:v3 n4:v0)
  start_args=(--nodes 4 --volumes-per-node 1)
  # Backing files are allocated in full: four of them share the machine's disk.
  export VOLUME_SIZE=${VOLUME_SIZE:-1G}
  shape="four-node ring"
fi
target() { # NODE VOLUME
  case "$1" in
    a) echo "nfs://127.0.0.1/r/$2?nfsport=2049&mountport=20048" ;;
    b) echo "nfs://127.0.0.1/r/$2?nfsport=2149&mountport=20148" ;;
    n?) echo "nfs://127.0.1.${1#n}/r/$2?nfsport=2049&mountport=20048" ;;
  esac
}

keep_logs() { # NAME CLUSTER_DIR: the nodes' logs into $out
  local n
  for n in "${node_names[@]}"; do cp "$2/$n/data/nasd.log" "$out/$1-$n-nasd.log" 2>/dev/null || true; done
}

# cpu_ticks CLUSTER_DIR: user + system CPU (clock ticks) used so far by all the nodes' daemons.
cpu_ticks() {
  local n pid t=0 c
  for n in "${node_names[@]}"; do
    pid=$(cat "$1/$n/data/nasd.pid" 2>/dev/null) || continue
    c=$(awk '{ print $14 + $15 }' "/proc/$pid/stat" 2>/dev/null) || continue
    t=$((t + c))
  done
  echo "$t"
}
# ctx_switches CLUSTER_DIR: context switches (voluntary + involuntary) so far of all the nodes'
# daemons, summed over their threads (a thread that ended is no longer counted: the daemons'
# loops, executors and link threads live as long as the run). What a forwarded call costs in
# scheduling, which the CPU time alone hides (issue 13: the forwarder's hand-offs).
ctx_switches() {
  local n pid t=0 c
  for n in "${node_names[@]}"; do
    pid=$(cat "$1/$n/data/nasd.pid" 2>/dev/null) || continue
    c=$(cat /proc/"$pid"/task/*/status 2>/dev/null |
      awk '/^(non)?voluntary_ctxt_switches:/ { s += $2 } END { print s + 0 }') || continue
    t=$((t + c))
  done
  echo "$t"
}
# nfs_calls NAME: NFSv3 calls the nodes answered during run NAME (their counters at its end).
nfs_calls() {
  cat "$out/$1"-*-stats.txt 2>/dev/null |
    awk '/^nfs \(program 100003\) version 3: [0-9]+ calls/ { n += $6 } END { print n + 0 }'
}

# run NAME NODE:VOLUME...: a fresh cluster, the load over those targets, the cluster stopped.
run() {
  local name=$1; shift
  local dir=$work/$name args=() t
  for t in "$@"; do args+=(--target "$(target "${t%%:*}" "${t#*:}")"); done
  echo "== $name: starting the cluster" >&2
  running=$dir
  CLUSTER_DIR=$dir EXPORT_OPTIONS=rw,insecure,no_root_squash "$root/deploy/start-cluster.sh" "${start_args[@]}" "${cluster_args[@]}" >"$out/$name-cluster.log" 2>&1 || {
    cat "$out/$name-cluster.log" >&2; keep_logs "$name" "$dir"
    echo "$name: start-cluster.sh failed; node logs in $out" >&2; exit 1; }
  echo "== $name: load over $*" >&2
  local rc=0 cpu_start ctx_start
  cpu_start=$(cpu_ticks "$dir")
  ctx_start=$(ctx_switches "$dir")
  "$loadgen" "${args[@]}" "${LOADGEN_ARGS[@]}" --notes "targets $*" \
    --server-name "nasd $shape, $name (bench/cluster_forwarding.sh)" \
    --report "$out/$name.txt" --csv "$out/$name.csv" || rc=$?
  echo "$(( $(cpu_ticks "$dir") - cpu_start ))" >"$out/$name-cpu-ticks"
  echo "$(( $(ctx_switches "$dir") - ctx_start ))" >"$out/$name-ctx-switches"
  local n admin=$build/server/admin/nasd-admin
  for n in "${node_names[@]}"; do  # per-procedure counters and the cluster's state
    [[ -x $admin ]] || break
    { "$admin" --socket "$dir/$n/data/nasd.sock" stats; "$admin" --socket "$dir/$n/data/nasd.sock" cluster; } \
      >"$out/$name-$n-stats.txt" 2>&1 || true
  done
  # A takeover during the run would measure failover, not forwarding.
  # (state=normal: every node serves its own volumes and no member is covering another.)
  if grep -ho 'state=[a-z-]*' "$out/$name"-*-stats.txt 2>/dev/null | grep -qv '^state=normal$' ||
     grep -hiE '^ *member .*(silent|down)' "$out/$name"-*-stats.txt 2>/dev/null | grep -q .; then
    echo "WARNING: $name: a node was not in its normal state at the end (see $out/$name-*-stats.txt): not a forwarding measurement" >&2
  fi
  CLUSTER_DIR=$dir "$root/deploy/stop-cluster.sh" >>"$out/$name-cluster.log" 2>&1 || true
  running=""
  keep_logs "$name" "$dir"
  rm -rf "$dir"  # the backing files: gigabytes the next run does not need
  [[ $rc == 0 ]] || { echo "$name: nasd-loadgen failed ($rc); node logs in $out" >&2; exit 1; }
}

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
run local "${local_targets[@]}"
run forwarded "${forwarded_targets[@]}"
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

# link_floor: the floor under the CPU ratio above. Half of the forwarded run's calls cross the
# interconnect, so even a forwarder that added nothing but one round trip of the link would
# cost local + round trip / 2 per call. Measured after both runs, with no nasd running.
link_floor() {
  local probe=$build/bench/nasd-link-probe
  awk -v s="$probe_seconds" 'BEGIN { exit !(s > 0) }' || return 0  # 0, 0.0, ...: left out
  [[ -x $probe ]] || { echo "(no $probe: the link's round trip was not measured)"; return 0; }
  "$probe" --seconds "$probe_seconds" --in-flight 1,16 >"$out/link-probe.txt" ||
    { echo "(nasd-link-probe failed: see $out/link-probe.txt)"; return 0; }
  # lu, fu: CPU per NFS call of both runs, from the summary below.
  awk -v l="$lu" -v f="$fu" '
    $1 == "tcp" || $1 == "link" { rt[$1, $2] = $4 }
    END {
      printf "one interconnect round trip with no volume work (nasd-link-probe, CPU of both ends): bare TCP %.1f us, nasd link %.1f us with 1 in flight; %.1f and %.1f us with 16\n", rt["tcp", 1], rt["link", 1], rt["tcp", 16], rt["link", 16]
      if (l > 0)
        printf "forwarded/local CPU per call if a forwarded call cost only that link round trip more: %.2f (1 in flight) to %.2f (16 in flight); measured %.2f\n", 1 + rt["link", 1] / 2 / l, 1 + rt["link", 16] / 2 / l, f / l
    }' "$out/link-probe.txt"
}

# summary: the headline of each run, and forwarded/local of both numbers.
{
  peak() { report_headline "$1" | awk '{ print $1 }'; }
  ort() { report_headline "$1" | sed 's/.*= \([0-9.]*\) msec.*/\1/'; }
  # A run whose top step was not MISSED may have had more to give: its peak is a lower bound.
  bound() { awk -F, 'END { print ($10 == 0 ? ">=" : "") }' "$1"; }
  lp=$(peak "$out/local.txt") fp=$(peak "$out/forwarded.txt")
  lr=$(ort "$out/local.txt") fr=$(ort "$out/forwarded.txt")
  printf '%-16s %-34s %12s %22s\n' run targets "peak ops/s" "overall response msec"
  printf '%-16s %-34s %12s %22s\n' local "${local_targets[*]}" "$(bound "$out/local.csv")$lp" "$lr"
  printf '%-16s %-34s %12s %22s\n' forwarded "${forwarded_targets[*]}" "$(bound "$out/forwarded.csv")$fp" "$fr"
  awk -v lp="$lp" -v fp="$fp" -v lr="$lr" -v fr="$fr" 'BEGIN {
    printf "%-16s %-34s %12s %22s\n", "forwarded/local", "", (lp > 0 ? sprintf("%.2f", fp / lp) : "-"), (lr > 0 ? sprintf("%.2f", fr / lr) : "-") }'
  echo "(>= : the top step was reached, so the peak is bounded by the load asked for; a:v1 means node a's"
  echo " port, volume v1, which node b owns)"
  echo "$shape; load average (1, 5, 15 min) before: $load_before, after: $load_after ($(nproc) cores, shared)"
  # CPU per NFS call over all nodes, the load generator's setup included (the same in both
  # runs): forwarded/local is what a forwarded call costs against a local one, for the half
  # that crosses. Less sensitive than the peaks to what else the machine runs.
  lc=$(cat "$out/local-cpu-ticks") fc=$(cat "$out/forwarded-cpu-ticks")
  ln=$(nfs_calls local) fn=$(nfs_calls forwarded)
  # Microseconds per call (0 when no call was answered), used here and by link_floor.
  us_per_call() { awk -v t="$1" -v n="$2" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.3f", (n > 0 ? t * 1e6 / hz / n : 0) }'; }
  lu=$(us_per_call "$lc" "$ln") fu=$(us_per_call "$fc" "$fn")
  awk -v l="$lu" -v f="$fu" -v ln="$ln" -v fn="$fn" 'BEGIN {
    printf "server CPU per NFS call (all nodes): local %.1f us (%d calls), forwarded %.1f us (%d calls), forwarded/local %s\n", l, ln, f, fn, (l > 0 ? sprintf("%.2f", f / l) : "-") }'
  lx=$(cat "$out/local-ctx-switches") fx=$(cat "$out/forwarded-ctx-switches")
  awk -v lx="$lx" -v fx="$fx" -v ln="$ln" -v fn="$fn" 'BEGIN {
    l = ln > 0 ? lx / ln : 0; f = fn > 0 ? fx / fn : 0
    printf "server context switches per NFS call (all nodes): local %.2f, forwarded %.2f, forwarded/local %s\n", l, f, (l > 0 ? sprintf("%.2f", f / l) : "-") }'
  link_floor
  echo
  step_table "$out/local.csv" local "$out/forwarded.csv" forwarded
} | tee "$out/summary.txt"
"$loadgen" plot "$out/local.csv" "$out/forwarded.csv" "$out/forwarding.png" || echo "(plot failed)" >&2
echo "summary, reports, CSVs, forwarding.png and node logs in $out"
