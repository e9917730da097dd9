#!/usr/bin/env bash
# End-to-end: start a server with a launcher (bench/servers/README.md), point nasd-loadgen at it
# for two short steps, and check what came back: a report with the headline and table, one CSV
# row per step with replies and no errors, and a plot.
#   e2e_loadgen.sh LOADGEN LAUNCHER [LAUNCHER ARGS...]
# Exit 77 (skip) when the launcher says its server is not installed.
set -euo pipefail
loadgen=$1; shift
[[ $# -ge 1 ]] || { echo "usage: e2e_loadgen.sh LOADGEN LAUNCHER [ARGS...]" >&2; exit 2; }

work=$(mktemp -d /tmp/nasd-bench-e2e.XXXXXX)
server_pid=""
cleanup() {
  if [[ -n $server_pid ]]; then
    kill -TERM "$server_pid" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

"$@" --nfs-port 32149 --mount-port 32148 >"$work/launcher.out" 2>"$work/launcher.err" &
server_pid=$!
target=""
for _ in $(seq 300); do
  target=$(sed -n 's/^TARGET //p' "$work/launcher.out")
  [[ -n $target ]] && break
  if ! kill -0 "$server_pid" 2>/dev/null; then
    wait "$server_pid" && rc=0 || rc=$?
    server_pid=""
    cat "$work/launcher.err" >&2
    [[ $rc == 77 ]] && { echo "SKIP: server not installed" >&2; exit 77; }
    echo "FAIL: the server did not start (launcher exit $rc)" >&2
    exit 1
  fi
  sleep 0.1
done
[[ -n $target ]] || { echo "FAIL: no TARGET line from the launcher in 30 s" >&2; exit 1; }

timeout 60 "$loadgen" --target "$target" --loads 50,100 --step-seconds 2 --warmup-seconds 0.5 \
  --processes 2 --fileset-mib-per-op 0.01 --report "$work/report.txt" --csv "$work/results.csv" \
  --plot "$work/curve.png" --server-name "e2e: $*" 2>"$work/loadgen.err" || {
  echo "FAIL: nasd-loadgen exited with $?" >&2; cat "$work/loadgen.err" >&2; exit 1; }

fail() { echo "FAIL: $*" >&2; echo "--- report"; cat "$work/report.txt"; echo "--- csv"; cat "$work/results.csv"; exit 1; }
grep -q 'Ops/Sec (Overall Response Time = [0-9.]* msec)' "$work/report.txt" || fail "no headline in the report"
grep -q 'Throughput' "$work/report.txt" || fail "no performance table in the report"
[[ $(wc -l < "$work/results.csv") == 3 ]] || fail "expected a header and 2 rows in the CSV"
# Every step must have had successful replies at a sensible rate, and no errors at all.
awk -F, 'NR > 1 { if ($3 < 0.5 * $2 || $7 == 0 || $8 != 0) bad = 1 } END { exit bad }' "$work/results.csv" ||
  fail "a step had too few replies or some errors"
[[ -s $work/curve.png ]] || fail "no plot was drawn"
grep -q 'step 2/2' "$work/loadgen.err" || fail "no progress line on stderr"
cat "$work/report.txt"
echo "e2e: 1 passed, 0 failed"
