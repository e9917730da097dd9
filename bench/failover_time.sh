#!/usr/bin/env bash
# How long an HA pair takes to fail over under load, as its clients see it. Each run starts the
# pair with deploy/start-cluster.sh, puts a SPECsfs-mix load on it through node b (both
# volumes, so half of it is forwarded to node a) and four retrying, verifying clients
# (nasd-ha-load: through node a and node b into v0 and v1), kills node a with kill -9 in the
# middle, restarts it and fails back.
#   bench/failover_time.sh BUILD_DIR [--runs N] [--load OPS] [--intervals N] [--interval-seconds S]
#       [--lease-ms MS] [--out DIR]
# Per run it reports: takeover (kill -9 until node b answers on a's address), the longest
# stall each client saw (no acknowledged call for that long), failback (nasd-admin failback
# until node a serves its address again), whether every client verified, and the load's
# throughput and errors per interval; then the median and range over the runs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")

usage() { sed -n '7,8p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[[ $# -ge 1 && $1 != --* ]] || usage
build=$(cd "$1" && pwd); shift
# The cluster binds fixed ports: the private namespace keeps them to this run.
if [[ -z ${NASD_BENCH_IN_NETNS:-} ]]; then exec "$here/netns.sh" "$0" "$build" "$@"; fi

source "$here/loadgen_lib.sh"
runs=3
load=2000
intervals=8            # load steps of equal rate: the throughput curve across the drill
interval_seconds=4
lease_ms=""
mib_per_op=0.05
out=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --intervals) intervals=$2; shift 2 ;;
    --interval-seconds) interval_seconds=$2; shift 2 ;;
    --lease-ms) lease_ms=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) load_option "$1" "${2-}" && shift 2 || { echo "failover_time.sh: unknown argument $1" >&2; usage; } ;;
  esac
done
loads=$(printf "$load%.0s," $(seq "$intervals")); loads=${loads%,}
step_seconds=$interval_seconds
warmup_seconds=0
loadgen_args

loadgen=$build/bench/nasd-loadgen ha_load=$build/tests/e2e/nasd-ha-load
admin=$build/server/admin/nasd-admin
for b in "$loadgen" "$ha_load" "$admin" "$build/cluster/nasd"; do
  [[ -x $b ]] || { echo "no $b: build nasd, nasd-admin, nasd-loadgen and nasd-ha-load first" >&2; exit 1; }
done
[[ -n $out ]] || out=$(mktemp -d /tmp/nasd-failover-time.XXXXXX)
mkdir -p "$out"; out=$(cd "$out" && pwd)
export BUILD_DIR=$build
[[ -z $lease_ms ]] || export LEASE_MS=$lease_ms

work=""
cleanup() {
  [[ -z $work ]] || CLUSTER_DIR=$work "$root/deploy/stop-cluster.sh" >/dev/null 2>&1 || true
  [[ -z $work ]] || rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

now_ms() { date +%s%3N; }
serves() { "$admin" --socket "$work/$1/data/nasd.sock" cluster 2>/dev/null | grep -qE "^  evs $2 .*: served here"; }
# wait_ms LIMIT_S COMMAND...: polls every 50 ms; prints the wait in ms, or fails the run.
wait_ms() {
  local limit=$1 t0; shift; t0=$(now_ms)
  for _ in $(seq $((limit * 20))); do "$@" && { echo $(( $(now_ms) - t0 )); return 0; }; sleep 0.05; done
  return 1
}
report_value() { sed -n "s/^$2=//p" "$1" | head -n 1; }

one_run() { # RUN: prints one result row into $out/runs.txt
  local r=$1 dir="$out/run$1"
  mkdir -p "$dir"
  work=$(mktemp -d /tmp/nasd-failover-cluster.XXXXXX)
  CLUSTER_DIR=$work EXPORT_OPTIONS=rw,insecure,no_root_squash "$root/deploy/start-cluster.sh" >"$dir/start.log" 2>&1 || { cat "$dir/start.log"; return 1; }
  local duration=$(( intervals * interval_seconds ))
  "$loadgen" --target "nfs://127.0.0.1/r/v0?nfsport=2149&mountport=20148" \
             --target "nfs://127.0.0.1/r/v1?nfsport=2149&mountport=20148" "${LOADGEN_ARGS[@]}" \
             --report "$dir/load.txt" --csv "$dir/load.csv" >"$dir/loadgen.out" 2>"$dir/loadgen.err" &
  local lg=$!
  # The kill comes a third into the measured load, once the fileset is built.
  for _ in $(seq 600); do grep -q '^step ' "$dir/loadgen.err" 2>/dev/null && break; sleep 0.1; done
  local pids=() c
  for c in "a-v0 2049 20048 v0" "a-v1 2049 20048 v1" "b-v0 2149 20148 v0" "b-v1 2149 20148 v1"; do
    set -- $c
    "$ha_load" --nfs-port "$2" --mount-port "$3" --export "/r/$4" --dir "$1-run$r" \
      --seconds "$duration" --call-timeout-ms 5000 --retry-budget-s 60 \
      --report "$dir/client-$1.report" >"$dir/client-$1.out" 2>&1 &
    pids+=($!)
  done
  sleep $(( duration / 3 ))
  kill -9 "$(cat "$work/a/data/nasd.pid")"
  local takeover failback
  takeover=$(wait_ms 60 serves b a) || { echo "run $r: node b never served a's address" >&2; return 1; }
  sleep 2
  "$root/deploy/start-node.sh" "$work/a/nasd.conf" >"$dir/restart-a.log" 2>&1 || { cat "$dir/restart-a.log"; return 1; }
  "$admin" --socket "$work/a/data/nasd.sock" failback >/dev/null
  failback=$(wait_ms 60 serves a a) || { echo "run $r: node a never took its address back" >&2; return 1; }
  local verified=yes
  for p in "${pids[@]}"; do wait "$p" || verified=no; done
  wait "$lg" || true  # a load with errors (the JUKEBOX answers of the takeover) still reports
  local stalls=""
  for c in a-v0 a-v1 b-v0 b-v1; do
    local s; s=$(report_value "$dir/client-$c.report" longest_stall_ms); stalls+=" ${s:--}"
    [[ $(report_value "$dir/client-$c.report" verify) == OK ]] || verified=no
  done
  for n in a b; do cp "$work/$n/data/nasd.log" "$dir/node-$n.log"; done
  CLUSTER_DIR=$work "$root/deploy/stop-cluster.sh" >/dev/null 2>&1 || true
  rm -rf "$work"; work=""
  printf "%-4s %12s %s %12s %9s\n" "$r" "$takeover" "$(printf '%10s' $stalls)" "$failback" "$verified" >>"$out/runs.txt"
  # The load through node b, interval by interval: the dip is the takeover.
  awk -F, -v r="$r" 'FNR > 1 { printf "run %s interval %d: %8.1f ops/s  %7.3f ms  %s errors\n", r, $1, $3, $4, $8 }' \
    "$dir/load.csv" >>"$out/intervals.txt" 2>/dev/null || true
}

: >"$out/runs.txt"; : >"$out/intervals.txt"
for r in $(seq "$runs"); do one_run "$r"; done

{
  echo "failover under load, $(date -u +%Y-%m-%d), $(nproc) cores; load $load ops/s through node b over v0 and v1,"
  echo "plus 4 verifying clients; lease ${LEASE_MS:-4000} ms (start-cluster.sh default)"
  printf "%-4s %12s %10s %10s %10s %10s %12s %9s\n" run takeover_ms stall_a-v0 stall_a-v1 stall_b-v0 stall_b-v1 failback_ms verified
  cat "$out/runs.txt"
  awk '{ t[NR] = $2; s[NR] = $3; f[NR] = $7 }
       function median(a, n,   i, j, x) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { x = a[i]; a[i] = a[j]; a[j] = x }
                                         return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
       END { if (NR) printf "median: takeover %d ms, stall of a client of the dead node %d ms, failback %d ms (%d runs)\n",
                            median(t, NR), median(s, NR), median(f, NR), NR }' "$out/runs.txt"
  echo
  cat "$out/intervals.txt"
} | tee "$out/summary.txt"
grep -q ' no$' "$out/runs.txt" && { echo "a client did not verify: see $out/run*/client-*.out" >&2; exit 1; }
exit 0
