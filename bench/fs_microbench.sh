#!/usr/bin/env bash
# The file-system and NVRAM micro-benchmarks, each nasd against nfs-ganesha in one run:
#   creates   small-file CREATE rate                              (LFS)
#   write4k   random 4 KiB FILE_SYNC WRITE rate, NVRAM journal on  (NVRAM)
#   write4k-through  the same with the journal off (write-through) (what the NVRAM buys)
# Prints the peak ops/s of each server and their ratio per workload.
#   bench/fs_microbench.sh BUILD_DIR [--loads A,B,C] [--step-seconds S] [--out DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
[[ $# -ge 1 ]] || { sed -n '2,8p' "$0" >&2; exit 2; }
build=$1; shift
loads=2000,5000,10000,20000
step_seconds=6
out=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --loads) loads=$2; shift 2 ;;
    --step-seconds) step_seconds=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "fs_microbench.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -n $out ]] || out=$(mktemp -d /tmp/nasd-microbench.XXXXXX)
mkdir -p "$out"

peak() { grep -o '= [0-9]* Ops/Sec' "$1" | head -n 1 | tr -dc '0-9'; }

run() { # NAME ARGS...: one side-by-side comparison into $out/NAME
  local name=$1; shift
  echo "== $name" >&2
  "$here/compare_with_ganesha.sh" "$build" --loads "$loads" --step-seconds "$step_seconds" \
    --warmup-seconds 1 --fileset-mib-per-op 0.01 --out "$out/$name" "$@" >"$out/$name.log" 2>&1 ||
    { echo "$name failed; see $out/$name.log" >&2; return 1; }
}

run creates --mix-file "$here/mixes/create_only.mix"
run write4k --mix-file "$here/mixes/write_only.mix" --io-size 4096
run write4k-through --mix-file "$here/mixes/write_only.mix" --io-size 4096 --nasd-nvram off

printf '\n%-16s %14s %14s %10s\n' workload "ganesha op/s" "nasd op/s" nasd/ganesha
for w in creates write4k write4k-through; do
  g=$(peak "$out/$w/ganesha.txt"); n=$(peak "$out/$w/nasd.txt")
  printf '%-16s %14s %14s %10s\n' "$w" "$g" "$n" "$(awk -v n="$n" -v g="$g" 'BEGIN { printf (g > 0 ? "%.2f" : "-"), n / g }')"
done
echo "(peaks are the highest achieved step; a workload whose top step was reached is bounded by the load asked for)"
echo "reports in $out"
