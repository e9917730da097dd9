#!/usr/bin/env bash
# End-to-end: bench/perf_vs_ganesha.sh in its short mode (1 s per point) against nfs-ganesha and
# nasd, checking that results.csv has every row with both servers' figures (ops/s and server CPU
# per operation for every procedure at 1 and 16 clients, MB/s and the fraction of loopback for
# the transfers, the sequential points at 1 and 4 clients, the SPECsfs2008-mix steps, peak and
# overall response time, and iperf3's loopback at 1, 4 and 16 streams), and that the table and
# the plots came out.
#   e2e_perf_vs_ganesha.sh BUILD_DIR     (run inside bench/netns.sh; exit 77 = skipped)
set -euo pipefail
[[ $# -eq 1 ]] || { echo "usage: e2e_perf_vs_ganesha.sh BUILD_DIR" >&2; exit 2; }
build=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
[[ ${NASD_BENCH_IN_NETNS:-} == 1 ]] || { echo "SKIP: no private network namespace"; exit 77; }
command -v ganesha.nfsd >/dev/null || { echo "SKIP: nfs-ganesha is not installed"; exit 77; }
command -v iperf3 >/dev/null || { echo "SKIP: iperf3 is not installed"; exit 77; }

work=$(mktemp -d /tmp/nasd-bench-perf.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; echo "--- output"; cat "$work/stdout" "$work/stderr" 2>/dev/null || true; exit 1; }

rc=0
timeout 840 "$root/bench/perf_vs_ganesha.sh" "$build" --out "$work/out" >"$work/stdout" 2>"$work/stderr" || rc=$?
[[ $rc == 77 ]] && { echo "SKIP: the script could not run here"; exit 77; }
[[ $rc == 0 ]] || fail "perf_vs_ganesha.sh exited with $rc"
csv=$work/out/results.csv
[[ -s $csv ]] || fail "no results.csv"

# has_row WORKLOAD CLIENTS FIGURE [loopback]: the row exists with a number for nasd and for
# ganesha, and their ratio; with "loopback", also both fractions of loopback.
has_row() {
  awk -F, -v w="$1" -v c="$2" -v f="$3" -v lb="${4-}" '
    function num(x) { return x ~ /^[0-9]+(\.[0-9]+)?$/ }
    $1 == w && $2 == c && $3 == f {
      found = 1
      if (!num($5) || !num($6) || !num($7)) bad = 1
      if (lb != "" && (!num($8) || !num($9) || !num($10))) bad = 1
    }
    END { exit !(found && !bad) }' "$csv" || fail "row $1,$2,$3 missing or incomplete: $(grep "^$1,$2,$3," "$csv" || true)"
}
for w in getattr lookup access read_4k write_4k_unstable write_4k_file_sync write_4k_commit create_remove readdirplus_1000; do
  for c in 1 16; do
    has_row "$w" "$c" ops_per_s
    has_row "$w" "$c" cpu_us_per_op
  done
done
for w in read_4k write_4k_unstable write_4k_file_sync write_4k_commit; do for c in 1 16; do has_row "$w" "$c" mb_per_s loopback; done; done
for w in seq_read_1m seq_write_1m; do
  for c in 1 4; do
    has_row "$w" "$c" ops_per_s
    has_row "$w" "$c" cpu_us_per_op
    has_row "$w" "$c" mb_per_s loopback
  done
done
for load in 400 800; do
  for f in ops_per_s response_ms cpu_us_per_op; do has_row specsfs_mix 2 "$f@$load"; done
done
has_row specsfs_mix 2 peak_ops_per_s
has_row specsfs_mix 2 overall_response_ms
for s in 1 4 16; do
  awk -F, -v s="$s" '$1 == "loopback_tcp" && $2 == s && $8 ~ /^[0-9.]+$/ && $8 > 0 { ok = 1 } END { exit !ok }' "$csv" ||
    fail "no loopback bandwidth for $s streams"
done
# The disk under /tmp, when the script found it: what it wrote during the sequential WRITEs
# (both servers' figures) next to what it can write.
disk_rows=0
if grep -q 'O_DIRECT write of .*: [0-9.]* MB/s' "$work/stderr"; then
  for c in 1 4; do
    awk -F, -v c="$c" '$1 == "seq_write_1m" && $2 == c && $3 == "disk_written_mb_per_s" &&
                       $5 ~ /^[0-9.]+$/ && $6 ~ /^[0-9.]+$/ && $8 ~ /^[0-9.]+$/ && $8 > 0 { ok = 1 }
                       END { exit !ok }' "$csv" ||
      fail "row seq_write_1m,$c,disk_written_mb_per_s missing or incomplete: $(grep "^seq_write_1m,$c,disk" "$csv" || true)"
  done
  disk_rows=2
fi
rows=$(($(wc -l <"$csv") - 1))
[[ $rows == $((67 + disk_rows)) ]] || fail "results.csv has $rows rows, expected $((67 + disk_rows))"
grep -q '^machine: .*load average' "$work/out/summary.txt" || fail "summary.txt does not state the load average"
grep -q 'nasd/gan' "$work/stdout" || fail "the table was not printed"
[[ -s $work/out/ratios.png ]] || fail "no ratios.png"
[[ -s $work/out/mix.png ]] || fail "no mix.png"
cat "$work/stdout"
echo "e2e: 1 passed, 0 failed"
