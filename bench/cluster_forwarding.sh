#!/usr/bin/env bash
# What crossing the cluster interconnect costs: the same nasd-loadgen load against the two-node
# cluster of deploy/start-cluster.sh (node a owns v0, node b owns v1), twice, each time on a
# freshly started cluster, on a private loopback:
#   local      targets a:/r/v0 and b:/r/v1, so every request reaches the volume's owner directly;
#   forwarded  targets a:/r/v0 a:/r/v1 b:/r/v0 b:/r/v1, so half of the requests are forwarded
#              (the uniform access rule of a clustered SPECsfs result).
#   bench/cluster_forwarding.sh BUILD_DIR [--load OPS --steps N | --loads A,B,C]
#       [--step-seconds S] [--warmup-seconds S] [--processes N] [--fileset-mib-per-op X]
#       [--mix NAME | --mix-file FILE] [--io-size BYTES] [--out DIR] [--no-failover]
#
# The cluster is started as deploy/start-cluster.sh starts it (an HA pair, each node mirroring
# the other's NVRAM, with its default lease); --no-failover passes it on for static
# ownership without HA.
# BUILD_DIR holds bench/nasd-loadgen, cluster/nasd and server/admin/nasd-admin. Prints the peak
# ops/s and overall response time of both runs with their forwarded/local ratios, then both
# curves; reports, CSVs, the summary, forwarding.png and the nodes' logs go to --out (default: a
# new /tmp/nasd-forwarding.*).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")

usage() { sed -n '8,10p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[[ $# -ge 1 && $1 != --* ]] || usage
build=$(cd "$1" && pwd); shift

# The cluster binds fixed ports (2049, 2149, ...): the private namespace keeps them to this run.
if [[ -z ${NASD_BENCH_IN_NETNS:-} ]]; then exec "$here/netns.sh" "$0" "$build" "$@"; fi

source "$here/loadgen_lib.sh"
# Two servers and the load generator share the machine: short steps and a small fileset keep a
# default run within a few minutes on 2 cores (both volumes are 4G in start-cluster.sh).
# The load generator keeps many calls in flight and, unlike a kernel client, does not retry
# NFS3ERR_JUKEBOX, so the nodes get 64 forward slots (FORWARD_SLOTS) instead of the default 8,
# which is sized to keep a paused partner from taking every executor thread.
loads=4000,8000,12000,16000,20000
mib_per_op=0.05
out=""
cluster_args=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --no-failover) cluster_args=(--no-failover); shift ;;
    *) load_option "$1" "${2-}" && shift 2 || { echo "cluster_forwarding.sh: unknown argument $1" >&2; usage; } ;;
  esac
done
loadgen_args

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

# The ports deploy/start-cluster.sh gives its nodes.
target() { # NODE VOLUME
  case "$1" in
    a) echo "nfs://127.0.0.1/r/$2?nfsport=2049&mountport=20048" ;;
    b) echo "nfs://127.0.0.1/r/$2?nfsport=2149&mountport=20148" ;;
  esac
}

keep_logs() { # NAME CLUSTER_DIR: the nodes' logs into $out
  local n
  for n in a b; do cp "$2/$n/data/nasd.log" "$out/$1-$n-nasd.log" 2>/dev/null || true; done
}

# run NAME NODE:VOLUME...: a fresh cluster, the load over those targets, the cluster stopped.
run() {
  local name=$1; shift
  local dir=$work/$name args=() t
  for t in "$@"; do args+=(--target "$(target "${t%%:*}" "${t#*:}")"); done
  echo "== $name: starting the cluster" >&2
  running=$dir
  CLUSTER_DIR=$dir EXPORT_OPTIONS=rw,insecure,no_root_squash FORWARD_SLOTS=${FORWARD_SLOTS:-64} "$root/deploy/start-cluster.sh" "${cluster_args[@]}" >"$out/$name-cluster.log" 2>&1 || {
    cat "$out/$name-cluster.log" >&2; keep_logs "$name" "$dir"
    echo "$name: start-cluster.sh failed; node logs in $out" >&2; exit 1; }
  echo "== $name: load over $*" >&2
  local rc=0
  "$loadgen" "${args[@]}" "${LOADGEN_ARGS[@]}" --notes "targets $*" \
    --server-name "nasd two-node cluster, $name (bench/cluster_forwarding.sh)" \
    --report "$out/$name.txt" --csv "$out/$name.csv" || rc=$?
  local n admin=$build/server/admin/nasd-admin
  for n in a b; do  # per-procedure counters and the pair's state, when nasd-admin is built
    [[ -x $admin ]] || break
    { "$admin" --socket "$dir/$n/data/nasd.sock" stats; "$admin" --socket "$dir/$n/data/nasd.sock" cluster; } \
      >"$out/$name-$n-stats.txt" 2>&1 || true
  done
  # A takeover during the run would measure failover, not forwarding.
  # (state=normal: every node serves its own volumes and no member is covering another.)
  if grep -h 'state=' "$out/$name"-?-stats.txt 2>/dev/null | grep -qv 'state=normal'; then
    echo "WARNING: $name: the pair was not in its normal state at the end (see $out/$name-*-stats.txt): not a forwarding measurement" >&2
  fi
  CLUSTER_DIR=$dir "$root/deploy/stop-cluster.sh" >>"$out/$name-cluster.log" 2>&1 || true
  running=""
  keep_logs "$name" "$dir"
  rm -rf "$dir"  # the backing files: gigabytes the next run does not need
  [[ $rc == 0 ]] || { echo "$name: nasd-loadgen failed ($rc); node logs in $out" >&2; exit 1; }
}

run local a:v0 b:v1
run forwarded a:v0 a:v1 b:v0 b:v1

# summary: the headline of each run, and forwarded/local of both numbers.
{
  peak() { report_headline "$1" | awk '{ print $1 }'; }
  ort() { report_headline "$1" | sed 's/.*= \([0-9.]*\) msec.*/\1/'; }
  # A run whose top step was not MISSED may have had more to give: its peak is a lower bound.
  bound() { awk -F, 'END { print ($10 == 0 ? ">=" : "") }' "$1"; }
  lp=$(peak "$out/local.txt") fp=$(peak "$out/forwarded.txt")
  lr=$(ort "$out/local.txt") fr=$(ort "$out/forwarded.txt")
  printf '%-16s %-34s %12s %22s\n' run targets "peak ops/s" "overall response msec"
  printf '%-16s %-34s %12s %22s\n' local "a:v0 b:v1" "$(bound "$out/local.csv")$lp" "$lr"
  printf '%-16s %-34s %12s %22s\n' forwarded "a:v0 a:v1 b:v0 b:v1" "$(bound "$out/forwarded.csv")$fp" "$fr"
  awk -v lp="$lp" -v fp="$fp" -v lr="$lr" -v fr="$fr" 'BEGIN {
    printf "%-16s %-34s %12s %22s\n", "forwarded/local", "", (lp > 0 ? sprintf("%.2f", fp / lp) : "-"), (lr > 0 ? sprintf("%.2f", fr / lr) : "-") }'
  echo "(>= : the top step was reached, so the peak is bounded by the load asked for; a:v1 means node a's"
  echo " port, volume v1, which node b owns)"
  echo
  step_table "$out/local.csv" local "$out/forwarded.csv" forwarded
} | tee "$out/summary.txt"
"$loadgen" plot "$out/local.csv" "$out/forwarded.csv" "$out/forwarding.png" || echo "(plot failed)" >&2
echo "summary, reports, CSVs, forwarding.png and node logs in $out"
