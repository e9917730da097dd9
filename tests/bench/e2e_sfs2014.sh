#!/usr/bin/env bash
# End-to-end SFS2014 business-metric run: start a server with a launcher, run the VDA workload
# for business metrics 1,2 (short steps, a fileset scaled down to files of ~0.7 MB so that the
# 512 KiB transfers are whole), and check the SFS2014-style
# report (headline in Streams, the Performance table with MB/s and met/MISSED, the product,
# tuning, storage, transport and dataflow sections), the CSV and the plot. Then ask for SPEC's
# full capacity (24 GB per stream) on the small volume: the run must refuse before creating
# anything, naming FSSTAT, rather than meet NFS3ERR_NOSPC halfway.
#   e2e_sfs2014.sh LOADGEN LAUNCHER [LAUNCHER ARGS...]      (exit 77 = server not installed)
set -euo pipefail
[[ $# -ge 2 ]] || { echo "usage: e2e_sfs2014.sh LOADGEN LAUNCHER [ARGS...]" >&2; exit 2; }
loadgen=$1; shift
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../bench/servers/launcher_lib.sh"

work=$(mktemp -d /tmp/nasd-bench-sfs2014.XXXXXX)
trap 'launcher_stop; rm -rf "$work"' EXIT
trap 'exit 1' INT TERM

launcher_start_or_skip "$work/server" "$@" --nfs-port 32169 --mount-port 32168

fail() { echo "FAIL: $*" >&2; for f in report.txt results.csv loadgen.err; do echo "--- $f"; cat "$work/$f" 2>/dev/null; done; exit 1; }

timeout 90 "$loadgen" --target "$LAUNCHER_TARGET" --workload vda --business-metric 1,2 --step-seconds 3 \
  --warmup-seconds 0.5 --processes 2 --fileset-scale 0.0003 --report "$work/report.txt" \
  --csv "$work/results.csv" --plot "$work/curve.png" --server-name "e2e sfs2014: $*" --cleanup \
  2>"$work/loadgen.err" || fail "nasd-loadgen exited with $?"

grep -Eq '^SFS2014_vda = [0-9]+ Streams \(Overall Response Time = [0-9.]+ msec\)' "$work/report.txt" ||
  fail "no SFS2014 headline"
for section in Performance "Product and Test Information" "Software Configuration and Tuning" \
               "Storage and Filesystems" "Transport Configuration" Dataflow; do
  grep -q "^$section\$" "$work/report.txt" || fail "no '$section' section"
done
# Two steps: business metric 1 and 2, each with its required rate (10 ops/s per stream) met,
# and MB/s that follows from the large transfers (well above 1 MB/s per stream).
awk '/^-+ -+/ { on = 1; next } on && NF >= 6 { print } on && NF < 6 { on = 0 }' "$work/report.txt" > "$work/table.txt"
[[ $(wc -l < "$work/table.txt") == 2 ]] || fail "expected 2 rows in the Performance table"
awk '{ if ($1 != NR || $5 != 10 * NR || $6 != "met" || $4 < 1 * NR) bad = 1 } END { exit bad }' "$work/table.txt" ||
  fail "a step did not meet its required rate, or its MB/s is implausible"
[[ $(wc -l < "$work/results.csv") == 3 ]] || fail "expected a header and 2 rows in the CSV"
head -1 "$work/results.csv" | grep -q 'business_metric,mb_per_sec,server_cpu_s,server_cpu_us_per_op,disk_written_mb_per_sec$' || fail "CSV lacks business_metric,mb_per_sec,server_cpu_s,server_cpu_us_per_op,disk_written_mb_per_sec"
awk -F, 'NR > 1 { if ($8 != 0 || $12 != NR - 1) bad = 1 } END { exit bad }' "$work/results.csv" ||
  fail "CSV rows have errors or wrong business metrics"
[[ -s $work/curve.png ]] || fail "no plot was drawn"

# SPEC's full capacity does not fit: a clear error before anything is created.
rc=0
timeout 60 "$loadgen" --target "$LAUNCHER_TARGET" --workload vda --business-metric 1,2 --step-seconds 1 \
  --quiet --report "$work/full.txt" 2>"$work/full.err" || rc=$?
[[ $rc == 1 ]] || fail "a fileset larger than the free space did not fail cleanly (status $rc)"
grep -q 'does not fit on .*FSSTAT reports' "$work/full.err" || { cat "$work/full.err"; fail "no FSSTAT error"; }
grep -q 'NOSPC' "$work/full.err" && fail "the run met NOSPC instead of refusing first"
leftover=$(nfs-ls "$LAUNCHER_TARGET" 2>&1) || fail "cannot list the export: $leftover"
[[ -z $leftover ]] || fail "something was created or left behind: $leftover"
cat "$work/report.txt"
echo "e2e sfs2014: 1 passed, 0 failed"
