#!/usr/bin/env bash
# End-to-end: start a server with a launcher (bench/servers/README.md), point nasd-loadgen at it
# for two short steps, and check what came back: a report with the headline and table, one CSV
# row per step with replies and no errors, a plot, a progress line, and an export left empty.
#   e2e_loadgen.sh LOADGEN LAUNCHER [LAUNCHER ARGS...]
# Exit 77 (skip) when the launcher says its server is not installed.
set -euo pipefail
[[ $# -ge 2 ]] || { echo "usage: e2e_loadgen.sh LOADGEN LAUNCHER [ARGS...]" >&2; exit 2; }
loadgen=$1; shift
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../bench/servers/launcher_lib.sh"

work=$(mktemp -d /tmp/nasd-bench-e2e.XXXXXX)
trap 'launcher_stop; rm -rf "$work"' EXIT
trap 'exit 1' INT TERM

launcher_start_or_skip "$work/server" "$@" --nfs-port 32149 --mount-port 32148

timeout 60 "$loadgen" --target "$LAUNCHER_TARGET" --loads 50,100 --step-seconds 2 --warmup-seconds 0.5 \
  --processes 2 --fileset-mib-per-op 0.01 --report "$work/report.txt" --csv "$work/results.csv" \
  --plot "$work/curve.png" --server-name "e2e: $*" --cleanup 2>"$work/loadgen.err" || {
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
# --cleanup leaves the export as it found it: empty.
leftover=$(nfs-ls "$LAUNCHER_TARGET" 2>&1) || fail "cannot list the export after the run: $leftover"
[[ -z $leftover ]] || fail "--cleanup left this behind: $leftover"
cat "$work/report.txt"
echo "e2e: 1 passed, 0 failed"
