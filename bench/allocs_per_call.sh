#!/usr/bin/env bash
# Heap allocations per call in nasd, per NFS procedure: issue 12 asks for none on the hot path.
# Starts nasd (bench/servers/nasd.sh, the default config) with bench/alloc_counter.c preloaded,
# drives one procedure at a time from one closed-loop client (nasd-loadgen, 4 KiB files), reads
# the server's allocation count twice during the steady part of the run and divides by the
# calls answered in between. Prints one line per procedure and writes a CSV.
#   bench/allocs_per_call.sh BUILD_DIR [--ops GETATTR,LOOKUP,...] [--seconds 5] [--out DIR]
# The count includes whatever else the server does meanwhile (its write-behind, the reply
# window's saves), which is why the window starts 4 s into each run.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
[[ $# -ge 1 && $1 != --* ]] || { sed -n '2,9p' "$0" >&2; exit 2; }
build=$1; shift
ops=GETATTR,LOOKUP,ACCESS,READ,WRITE,CREATE
seconds=5
out=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --ops) ops=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "allocs_per_call.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
loadgen=$build/bench/nasd-loadgen
[[ -x $loadgen ]] || { echo "no $loadgen: build the nasd-loadgen target first" >&2; exit 1; }
command -v cc >/dev/null || { echo "allocs_per_call.sh: needs a C compiler (cc)" >&2; exit 77; }

tmp=$(mktemp -d /tmp/nasd-allocs.XXXXXX)
out=${out:-$tmp/out}
mkdir -p "$out" "$tmp/counts"
launcher=""
cleanup() {
  [[ -z $launcher ]] || { kill "$launcher" 2>/dev/null || true; wait "$launcher" 2>/dev/null || true; }
  rm -rf "$tmp/counts" "$tmp/counter.so"
  [[ $out == "$tmp/out" ]] || rm -rf "$tmp"
}
trap cleanup EXIT
cc -O2 -shared -fPIC -o "$tmp/counter.so" "$here/alloc_counter.c" -ldl -lpthread

NASD_ALLOC_COUNT_DIR=$tmp/counts LD_PRELOAD=$tmp/counter.so \
  "$here/servers/nasd.sh" "$build" --nfs-port 33049 --mount-port 33048 >"$tmp/server.out" 2>&1 &
launcher=$!
for _ in $(seq 150); do grep -q '^TARGET' "$tmp/server.out" 2>/dev/null && break; sleep 0.2; done
pid=$(awk '/^SERVER_PID/ { print $2 }' "$tmp/server.out")
target=$(awk '/^TARGET/ { print $2 }' "$tmp/server.out")
[[ -n $pid && -n $target ]] || { echo "nasd did not start: $(tail -n 3 "$tmp/server.out")" >&2; exit 1; }

count() { cat "$tmp/counts/$pid" 2>/dev/null || echo ""; }
csv=$out/allocs_per_call.csv
echo "procedure,calls,allocations,allocations_per_call" >"$csv"
echo "nasd $(git -C "$here/.." rev-parse --short HEAD 2>/dev/null || echo '?'), one client, window of $seconds s"
IFS=',' read -r -a list <<<"$ops"
for op in "${list[@]}"; do
  echo "$op 100" >"$tmp/$op.mix"
  "$loadgen" --target "$target" --loads 1000000 --processes 1 --max-inflight 1 \
    --step-seconds $((seconds + 7)) --warmup-seconds 0 --mix-file "$tmp/$op.mix" --file-size 4096 \
    --fileset-mib-per-op 0.00001 --quiet --csv "$tmp/$op.csv" >/dev/null 2>"$tmp/$op.err" &
  lg=$!
  sleep 4
  a=$(count); t0=$(date +%s.%N)
  sleep "$seconds"
  b=$(count); t1=$(date +%s.%N)
  wait "$lg" || { echo "$op: nasd-loadgen failed: $(tail -n 2 "$tmp/$op.err")" >&2; continue; }
  rate=$(awk -F, 'NR == 2 { print $3 }' "$tmp/$op.csv")
  [[ -n $a && -n $b && -n $rate ]] || { echo "$op: no figure" >&2; continue; }
  awk -v op="$op" -v a="$a" -v b="$b" -v t0="$t0" -v t1="$t1" -v r="$rate" -v csv="$csv" 'BEGIN {
    calls = (t1 - t0) * r
    printf "%-8s %6.1f allocations per call (%d in %.1f s, %.0f calls/s)\n", op, (b - a) / calls, b - a, t1 - t0, r
    printf "%s,%.0f,%d,%.2f\n", op, calls, b - a, (b - a) / calls >> csv
  }'
done
echo "CSV: $csv"
