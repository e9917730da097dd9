#!/usr/bin/env bash
# End-to-end: bench/cluster_forwarding.sh with a very short load (two steps of 2 s) against the
# two-node (or four-node) cluster, checking that both runs (all-local, half forwarded) reached a
# peak above zero with no errors and that the summary table came out with its forwarded/local
# row, the load average, the server CPU per NFS call of both runs, and the link's own round trip
# (bench/nasd-link-probe) with the floor of the CPU ratio it gives.
#   e2e_cluster_forwarding.sh BUILD_DIR [NODES]   (run inside bench/netns.sh; exit 77 = skipped)
set -euo pipefail
[[ $# -eq 1 || $# -eq 2 ]] || { echo "usage: e2e_cluster_forwarding.sh BUILD_DIR [2|4]" >&2; exit 2; }
build=$1
nodes=${2:-2}
root=$(cd "$(dirname "$0")/../.." && pwd)
# The cluster binds the fixed ports of deploy/start-cluster.sh: only on a private loopback.
[[ ${NASD_BENCH_IN_NETNS:-} == 1 ]] || { echo "SKIP: no private network namespace"; exit 77; }

work=$(mktemp -d /tmp/nasd-bench-forwarding.XXXXXX)
trap 'rm -rf "$work"' EXIT
# On failure, what CI shows: the script's output (nasd-loadgen's own error text included), then
# of each node's log of each run the warnings and errors and its last lines, and the nodes'
# counters at the end of each run (the work dir, and with it --out, goes on exit).
fail() {
  echo "FAIL: $*" >&2
  echo "--- output"
  cat "$work/stdout" "$work/stderr"
  local f
  for f in "$work"/out/*-nasd.log; do
    [[ -e $f ]] || continue
    echo "--- ${f##*/}: warnings and errors (first 40)"
    grep -iE 'warn|error|fail' "$f" | head -n 40 || true
    echo "--- ${f##*/}: last 30 lines"
    tail -n 30 "$f"
  done
  for f in "$work"/out/*-stats.txt; do
    [[ -e $f ]] || continue
    # A call the reply cache took for a retransmission of one in progress gets no reply, and
    # nasd-loadgen never retransmits: then it sent two calls with one xid (bench/xid_streams.h).
    awk -v f="${f##*/}" '$1 == "drc_inprogress_drops" && $2 > 0 {
      print "NOTE: " f ": " $2 " call(s) dropped as copies of a call in progress (same address, xid, procedure and arguments)" }' "$f"
    echo "--- ${f##*/} (procedures never called left out)"
    awk '!/^  [A-Z_0-9]+ +0 +0\.0% /' "$f"
  done
  exit 1
}

VOLUME_SIZE=256M timeout $((nodes * 40)) "$root/bench/cluster_forwarding.sh" "$build" --nodes "$nodes" --loads 200,400 --step-seconds 2 \
  --warmup-seconds 0.5 --fileset-mib-per-op 0.01 --probe-seconds 0.5 --out "$work/out" >"$work/stdout" 2>"$work/stderr" ||
  fail "cluster_forwarding.sh exited with $?"

# The summary rows: "local  TARGETS  PEAK  RESPONSE"; a peak may carry ">=" (top step reached).
peak() { awk -v run="$1" '$1 == run { p = $(NF - 1); sub(/^>=/, "", p); print p }' "$work/stdout"; }
for run in local forwarded; do
  p=$(peak "$run")
  [[ $p =~ ^[0-9]+$ && $p -gt 0 ]] || fail "no peak above 0 for the $run run (got '$p')"
  awk -F, 'NR > 1 && ($8 != 0 || $7 == 0) { bad = 1 } END { exit bad || NR != 3 }' "$work/out/$run.csv" ||
    fail "the $run CSV lacks 2 steps with replies and no errors"
done
grep -qE '^forwarded/local +[0-9.]+ +[0-9.]+$' "$work/stdout" || fail "no forwarded/local ratio row"
grep -q '^peak ops/s: forwarded ' "$work/stdout" || fail "no per-step table"
grep -q 'load average (1, 5, 15 min) before: ' "$work/stdout" || fail "no load average"
grep -qE '^server CPU per NFS call \(all nodes\): local [0-9.]+ us \([0-9]+ calls\), forwarded [0-9.]+ us \([0-9]+ calls\), forwarded/local [0-9.]+$' "$work/stdout" ||
  fail "no CPU per NFS call of both runs"
# The link's round trip beside it (bench/nasd-link-probe), and the ratio it alone would give.
grep -qE '^one interconnect round trip with no volume work .*: bare TCP [0-9.]+ us, nasd link [0-9.]+ us with 1 in flight; [0-9.]+ and [0-9.]+ us with 16$' "$work/stdout" ||
  fail "no round trip of the link (nasd-link-probe)"
grep -qE '^forwarded/local CPU per call if a forwarded call cost only that link round trip more: [0-9.]+ \(1 in flight\) to [0-9.]+ \(16 in flight\); measured [0-9.]+$' "$work/stdout" ||
  fail "no floor of the CPU ratio"
# Context switches of both runs, counted (not 0: the daemons' threads were found in /proc).
grep -qE '^server context switches per NFS call \(all nodes\): local [0-9]+\.[0-9]+, forwarded [0-9]+\.[0-9]+, forwarded/local [0-9.]+$' "$work/stdout" ||
  fail "no context switches per NFS call of both runs"
grep -qE '^server context switches per NFS call .*(local|forwarded) 0\.00,' "$work/stdout" &&
  fail "no context switch counted in a run"
grep -q 'WARNING' "$work/stderr" && fail "the script warned"
[[ -s $work/out/summary.txt ]] || fail "no summary.txt"
cat "$work/stdout"
echo "e2e: 1 passed, 0 failed"
